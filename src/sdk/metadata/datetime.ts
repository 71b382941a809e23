/**
 * Datetime columns (SDK side): recognise a CSV column's datetime format, parse its values into
 * seconds since the Unix epoch, infer the granularity they are written at, and write synthetic
 * instants back in the column's own format.
 *
 * Formats are luxon format strings (https://moment.github.io/luxon/#/formatting?id=table-of-tokens),
 * parsed with a compiled `DateTime.buildFormatParser` / `DateTime.fromFormatParser` (luxon >= 3.4).
 * Everything is deterministic and independent of the machine's settings:
 * - a format without an offset is read and written as UTC wall-clock time (never the process's
 *   time zone `TZ` nor luxon's `Settings.defaultZone`);
 * - a format with an offset token (Z, ZZ, ZZZ) keeps the instant and reports the offset written
 *   (luxon's `setZone: true`), and writes in a given fixed offset (`FixedOffsetZone.instance`);
 *   a quoted literal 'Z' means UTC;
 * - month names, weekday names and AM/PM are English (locale "en-US"), whatever the default locale;
 * - parsing is strict: a text parses only if writing the parsed instant gives back exactly the same
 *   text (the "round trip" rule: no unpadded `2001-1-1` for `yyyy-MM-dd`, no `2001-02-30`, no
 *   lower-case `jan`), and only years 0001..9999 are accepted and written.
 *
 * Inference ({@link inferDatetimeFormat}) tries the candidates of {@link DATETIME_FORMATS}. None is
 * all digits, so an integer column (`20010315`, `12`, `00501`) is never taken for dates (the SDV
 * bug where 20010315 integers were decoded as 1970 dates); all-digit formats such as `yyyyMMdd`
 * work when passed explicitly to `new DatetimeFormat(...)`.
 *
 * Speed: each format also compiles a cheap anchored regular expression (a necessary condition for
 * the round trip) that rejects most texts before luxon is called, and values whose format uses only
 * the common tokens are re-written for the round-trip check by a direct field printer (checked
 * against luxon's `toFormat` in the tests) instead of `DateTime#toFormat`. Measured on the
 * development machine (2 cores, Node 20.20, 1,000,000 values, 3 runs): `new DatetimeFormat("yyyy/MM/dd HH:mm").parse`
 * runs at 140,000-180,000 values/s when the machine is otherwise idle (about 90,000 under load); luxon's
 * `fromFormatParser` itself is most of the cost, and `fromFormatParser` + `toFormat` manages about 115,000. Inferring
 * the format of a 1,000,000-value column of that format takes about 6 s; an integer column is rejected by the
 * pre-filters in about 10 ms per 1,000,000 values.
 */
import type { DateTime, DateTimeOptions, TokenParser } from "luxon";
import { UNIT_MS, type ParsedDatetime, type FixedGranularity } from "./granularity";
import { MACRO, USABLE_TOKENS, ZONE_NAME_TOKENS, checkUnitChain, splitFormat, type Piece } from "./datetime-tokens";

let luxonModule: typeof import("luxon") | undefined;

/**
 * luxon, loaded by the first datetime format or ISO bound: a table or model without datetime
 * columns (and `synthd sample` of one) does not load it.
 */
export function luxon(): typeof import("luxon") {
  return (luxonModule ??= require("luxon") as typeof import("luxon"));
}


/** ISO 8601-style date-times: `T` or space, minutes / seconds / milliseconds, no offset / `ZZ` / literal `'Z'`. */
function isoLike(date: string): string[] {
  const out: string[] = [];
  for (const sep of ["'T'", " "]) {
    for (const zone of ["", "ZZ", "'Z'"]) {
      for (const time of ["HH:mm", "HH:mm:ss", "HH:mm:ss.SSS"]) out.push(`${date}${sep}${time}${zone}`);
    }
  }
  return out;
}

/**
 * The candidate formats tried by inference, in order (ties go to the earlier one): ISO 8601 dates and
 * date-times first, then slashed year-first, US month-first (before the day-first ones, so an ambiguous
 * `01/02/2001` column is read as January 2), day-first with dots, and English month names.
 * No candidate is all digits (see the module comment).
 */
export const DATETIME_FORMATS: readonly string[] = Object.freeze([
  "yyyy-MM-dd",
  ...isoLike("yyyy-MM-dd"),
  "yyyy/MM/dd",
  "yyyy/MM/dd HH:mm",
  "yyyy/MM/dd HH:mm:ss",
  "MM/dd/yyyy",
  "MM/dd/yyyy HH:mm",
  "MM/dd/yyyy HH:mm:ss",
  "M/d/yyyy",
  "M/d/yyyy H:mm",
  "M/d/yyyy H:mm:ss",
  "dd/MM/yyyy",
  "dd/MM/yyyy HH:mm",
  "dd/MM/yyyy HH:mm:ss",
  "dd.MM.yyyy",
  "dd.MM.yyyy HH:mm",
  "dd.MM.yyyy HH:mm:ss",
  "d.M.yyyy",
  "LLL dd yyyy",
  "LLL d yyyy",
  "LLL d, yyyy",
  "LLLL d, yyyy",
  "dd LLL yyyy",
  "d LLL yyyy",
  "dd-LLL-yyyy",
]);


/** English month names (luxon's `English.monthsShort` / `monthsLong`). */
const MONTHS_SHORT = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const MONTHS_LONG = [
  "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December",
];

/** Wall-clock fields of an instant in a fixed offset. */
interface Fields {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
  /** Minutes east of UTC. */
  offset: number;
}

const pad = (n: number, width: number): string => String(n).padStart(width, "0");

/** luxon's `formatOffset` (narrow "+5:30", short "+05:30", techie "+0530"). */
function formatOffset(offset: number, style: "narrow" | "short" | "techie"): string {
  const hours = Math.trunc(Math.abs(offset / 60));
  const minutes = Math.trunc(Math.abs(offset % 60));
  const sign = offset >= 0 ? "+" : "-";
  if (style === "short") return `${sign}${pad(hours, 2)}:${pad(minutes, 2)}`;
  if (style === "techie") return `${sign}${pad(hours, 2)}${pad(minutes, 2)}`;
  return `${sign}${hours}${minutes > 0 ? `:${minutes}` : ""}`;
}

/** Field printers for the common tokens, identical to luxon 3.7's `toFormat` in locale en-US. */
const FAST_WRITERS: Readonly<Record<string, (f: Fields) => string>> = {
  y: (f) => String(f.year),
  yyyy: (f) => pad(f.year, 4),
  M: (f) => String(f.month),
  L: (f) => String(f.month),
  MM: (f) => pad(f.month, 2),
  LL: (f) => pad(f.month, 2),
  MMM: (f) => MONTHS_SHORT[f.month - 1],
  LLL: (f) => MONTHS_SHORT[f.month - 1],
  MMMM: (f) => MONTHS_LONG[f.month - 1],
  LLLL: (f) => MONTHS_LONG[f.month - 1],
  d: (f) => String(f.day),
  dd: (f) => pad(f.day, 2),
  H: (f) => String(f.hour),
  HH: (f) => pad(f.hour, 2),
  h: (f) => String(f.hour % 12 === 0 ? 12 : f.hour % 12),
  hh: (f) => pad(f.hour % 12 === 0 ? 12 : f.hour % 12, 2),
  a: (f) => (f.hour < 12 ? "AM" : "PM"),
  m: (f) => String(f.minute),
  mm: (f) => pad(f.minute, 2),
  s: (f) => String(f.second),
  ss: (f) => pad(f.second, 2),
  S: (f) => String(f.millisecond),
  SSS: (f) => pad(f.millisecond, 3),
  Z: (f) => formatOffset(f.offset, "narrow"),
  ZZ: (f) => formatOffset(f.offset, "short"),
  ZZZ: (f) => formatOffset(f.offset, "techie"),
};

/**
 * Pre-filter patterns: what luxon's `toFormat` can print for each token (years 0001..9999, English
 * names), so a text failing the anchored pattern cannot pass the round trip. Other tokens match anything.
 */
const TOKEN_PATTERNS: Readonly<Record<string, string>> = {
  y: "\\d{1,4}",
  yyyy: "\\d{4}",
  yyyyyy: "\\d{6}",
  yy: "\\d{2}",
  M: "\\d{1,2}",
  L: "\\d{1,2}",
  MM: "\\d{2}",
  LL: "\\d{2}",
  MMM: "[A-Z][a-z]{2}",
  LLL: "[A-Z][a-z]{2}",
  MMMM: "[A-Z][a-z]+",
  LLLL: "[A-Z][a-z]+",
  d: "\\d{1,2}",
  dd: "\\d{2}",
  H: "\\d{1,2}",
  HH: "\\d{2}",
  h: "\\d{1,2}",
  hh: "\\d{2}",
  a: "[AP]M",
  m: "\\d{1,2}",
  mm: "\\d{2}",
  s: "\\d{1,2}",
  ss: "\\d{2}",
  S: "\\d{1,3}",
  SSS: "\\d{3}",
  Z: "[+-]\\d{1,2}(?::\\d{1,2})?",
  ZZ: "[+-]\\d{2}:\\d{2}",
  ZZZ: "[+-]\\d{4}",
};

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");

/** The largest offset accepted or written, in minutes (±18:00, the ISO 8601 / java.time range). */
const MAX_OFFSET = 18 * 60;
/** Locale for names; the parser and every parse call must use the same one (luxon checks it). */
const LOCALE = "en-US";
let parseOptions: DateTimeOptions | undefined;

/** The options of every parse: UTC unless the text writes an offset (then kept), names in {@link LOCALE}. */
function parseOptionsOf(): DateTimeOptions {
  return (parseOptions ??= { zone: luxon().FixedOffsetZone.utcInstance, setZone: true, locale: LOCALE });
}

/** A datetime format (luxon tokens) with strict parsing and formatting. */
export class DatetimeFormat {
  /** The luxon format string, as given. */
  readonly format: string;
  /** True when the format writes a UTC offset (tokens Z, ZZ, ZZZ) or a literal 'Z'. */
  readonly hasOffset: boolean;
  /**
   * The finest unit the format can write (e.g. `yyyy-MM-dd` -> day, `... HH:mm` -> minute); never coarser
   * than a day (a format without a day token, `yyyy-MM`, counts as day: it writes the day's month).
   */
  readonly finest: FixedGranularity;
  /** True when the format has an offset token (Z, ZZ, ZZZ), i.e. the offset varies per value. */
  private readonly offsetToken: boolean;
  private readonly parser: TokenParser;
  /** Anchored necessary condition for {@link parse} (cheap rejection before luxon). */
  private readonly prefilter: RegExp;
  /** Direct printers, one per piece, when every token has one; otherwise luxon's `toFormat` is used. */
  private readonly fast: ((f: Fields) => string)[] | undefined;

  /**
   * Compiles `format` once (luxon `DateTime.buildFormatParser`, locale en-US).
   * @param format luxon tokens; literal letters must be quoted (`yyyy-MM-dd'T'HH:mm`).
   * @throws RangeError when `format` has no date or time token, or luxon cannot use it: no year token
   *   (luxon would take the missing year from today's date), unquoted letters that are not a token,
   *   tokens luxon cannot parse back (`X`, `x`, `yyyyy`, narrow names), zone names (`z`, `ZZZZ`, `ZZZZZ`),
   *   locale-dependent macros (`D`, `t`, `T`, `f`, `F`...), `h`/`hh` without `a`, or `a` with `H`/`HH`;
   *   and a format that skips a unit between its coarsest and finest or writes one twice
   *   (`yyyy-mm-dd`: minutes but no month nor hour; see {@link checkUnitChain}).
   */
  constructor(format: string) {
    this.format = format;
    const pieces = splitFormat(format);
    const tokens = pieces.filter((p) => !p.literal && /^[A-Za-z]+$/.test(p.val)).map((p) => p.val);
    for (const t of tokens) {
      if (ZONE_NAME_TOKENS.has(t)) throw new RangeError(`datetime format "${format}": zone names (${t}) are not supported`);
      if (MACRO.test(t)) {
        throw new RangeError(`datetime format "${format}": macro token ${t} is locale-dependent; spell the format out`);
      }
      if (!USABLE_TOKENS.has(t)) {
        throw new RangeError(`datetime format "${format}": "${t}" is not a luxon token that can be parsed (quote literal text)`);
      }
    }
    const first = new Set(tokens.map((t) => t[0]));
    if (![..."yMLdoHhmsSukWq"].some((c) => first.has(c))) {
      throw new RangeError(`datetime format "${format}" has no date or time token`);
    }
    if (!first.has("y") && !first.has("k")) {
      throw new RangeError(`datetime format "${format}" has no year token (luxon would fill it in from today's date)`);
    }
    checkUnitChain(format, tokens);
    if (first.has("h") && !first.has("a")) throw new RangeError(`datetime format "${format}": 12-hour h/hh needs the meridiem a`);
    if (first.has("a") && first.has("H")) throw new RangeError(`datetime format "${format}": meridiem a with 24-hour H/HH`);
    this.offsetToken = first.has("Z");
    this.hasOffset = this.offsetToken || pieces.some((p) => p.literal && p.val === "Z");
    this.finest =
      first.has("S") || first.has("u") ? "millisecond"
      : first.has("s") ? "second"
      : first.has("m") ? "minute"
      : first.has("H") || first.has("h") ? "hour"
      : "day";
    this.parser = luxon().DateTime.buildFormatParser(format, { locale: LOCALE });
    const invalid = (this.parser as unknown as { invalidReason?: string | null }).invalidReason;
    if (invalid) throw new RangeError(`datetime format "${format}": luxon cannot parse it (${invalid})`);
    const isToken = (p: Piece): boolean => !p.literal && /^[A-Za-z]+$/.test(p.val);
    this.prefilter = new RegExp(
      "^" + pieces.map((p) => (isToken(p) ? `(?:${TOKEN_PATTERNS[p.val] ?? "[\\s\\S]+?"})` : escapeRegExp(p.val))).join("") + "$",
    );
    this.fast = pieces.every((p) => !isToken(p) || FAST_WRITERS[p.val] !== undefined)
      ? pieces.map((p) => (isToken(p) ? FAST_WRITERS[p.val] : () => p.val))
      : undefined;
  }

  /**
   * Strict parse: undefined unless the text parses AND formatting the result gives back exactly the same text
   * (so `2001-1-1` does not parse as `yyyy-MM-dd`, `2001-02-30` never parses). Years 0001..9999 are accepted
   * (in the written offset), offsets within ±18:00. A format without offset reads UTC wall-clock time.
   * @returns the instant (seconds since the epoch, millisecond resolution) and the offset written (minutes
   *   east of UTC; 0 without an offset token), or undefined. Never throws.
   */
  parse(text: string): ParsedDatetime | undefined {
    if (!this.prefilter.test(text)) return undefined;
    let dt: DateTime;
    try {
      dt = luxon().DateTime.fromFormatParser(text, this.parser, parseOptionsOf());
    } catch {
      return undefined;
    }
    if (!dt.isValid) return undefined;
    const offset = this.offsetToken ? dt.offset : 0;
    if (Math.abs(offset) > MAX_OFFSET) return undefined;
    const ms = dt.toMillis();
    return this.render(ms, offset) === text ? { seconds: ms / 1000, offset } : undefined;
  }

  /**
   * Writes an instant in this format. The offset (minutes east of UTC) is used only when the format has an
   * offset token (Z, ZZ, ZZZ); formats without one, and literal 'Z' formats, write UTC wall-clock time.
   * The instant is first rounded to the millisecond, then to the nearest multiple of the format's
   * {@link finest} unit in the written wall-clock time (so 59.9999 s is written as the next minute's :00).
   * @param seconds seconds since 1970-01-01T00:00:00Z (may be negative or fractional).
   * @param offsetMinutes minutes east of UTC, an integer within ±1080 (checked only when it is used).
   * @throws RangeError when `seconds` is not finite, the offset is not an integer within ±18:00, or the
   *   written year is outside 0001..9999.
   */
  write(seconds: number, offsetMinutes: number): string {
    if (!Number.isFinite(seconds)) throw new RangeError(`datetime "${this.format}": cannot write ${seconds} seconds`);
    const offset = this.offsetToken ? offsetMinutes : 0;
    if (!Number.isInteger(offset) || Math.abs(offset) > MAX_OFFSET) {
      throw new RangeError(`datetime "${this.format}": offset must be an integer number of minutes within ±1080, got ${offset}`);
    }
    const unit = UNIT_MS[this.finest];
    const local = Math.round(seconds * 1000) + offset * 60000;
    const ms = Math.round(local / unit) * unit - offset * 60000;
    const text = this.render(ms, offset);
    if (text === undefined) throw new RangeError(`datetime "${this.format}": ${seconds} s is outside the years 0001..9999`);
    return text;
  }

  /** Prints `ms` (since the epoch) at `offset` minutes; undefined when the local year is outside 1..9999. */
  private render(ms: number, offset: number): string | undefined {
    const local = new Date(ms + offset * 60000);
    const year = local.getUTCFullYear();
    if (!(year >= 1 && year <= 9999)) return undefined;
    if (this.fast === undefined) {
      const { DateTime, FixedOffsetZone } = luxon();
      const zone = this.offsetToken ? FixedOffsetZone.instance(offset) : FixedOffsetZone.utcInstance;
      return DateTime.fromMillis(ms, { zone, locale: LOCALE }).toFormat(this.format);
    }
    const f: Fields = {
      year,
      month: local.getUTCMonth() + 1,
      day: local.getUTCDate(),
      hour: local.getUTCHours(),
      minute: local.getUTCMinutes(),
      second: local.getUTCSeconds(),
      millisecond: local.getUTCMilliseconds(),
      offset,
    };
    let out = "";
    for (const w of this.fast) out += w(f);
    return out;
  }
}

/** Values examined first by inference: the first SAMPLE_HEAD plus SAMPLE_SPREAD evenly spread over the rest. */
const SAMPLE_HEAD = 2000;
const SAMPLE_SPREAD = 2000;
let compiledCandidates: DatetimeFormat[] | undefined;

/** Number of `values` that `fmt` parses. */
function countParsed(fmt: DatetimeFormat, values: readonly string[]): number {
  let n = 0;
  for (const v of values) if (fmt.parse(v) !== undefined) n++;
  return n;
}

/**
 * Picks the format of a column from its distinct non-blank values.
 * Returns the candidate of DATETIME_FORMATS that parses the most values (at least one), with that count, or undefined.
 *
 * Method: every candidate is tried (pre-filter regex, then strict {@link DatetimeFormat.parse}) on a sample: all
 * values when there are at most 4,000, else the first 2,000 plus 2,000 evenly spaced over the rest
 * (deterministic). The best candidate on the sample (ties: the earlier one) and every runner-up parsing at least
 * half as many sample values are then counted over all values, and the largest full count wins (ties: the
 * earlier candidate). So `parsed` is exact for the returned format; a candidate that parses under half as many
 * sample values as the leader is assumed not to win. Cost: ~45 cheap regex tests per sampled value plus one
 * strict parse per value for each counted candidate (see the module comment for throughput).
 * @param values the column's distinct values (blanks and duplicates only cost time).
 * @returns `{ format, parsed }` with `format` one of {@link DATETIME_FORMATS} and 1 <= parsed <= values.length,
 *   or undefined when no candidate parses any value (e.g. an integer column). Never throws.
 */
export function inferDatetimeFormat(values: readonly string[]): { format: string; parsed: number } | undefined {
  const candidates = (compiledCandidates ??= DATETIME_FORMATS.map((f) => new DatetimeFormat(f)));
  const n = values.length;
  let sample: readonly string[] = values;
  if (n > SAMPLE_HEAD + SAMPLE_SPREAD) {
    const s = values.slice(0, SAMPLE_HEAD);
    for (let i = 0; i < SAMPLE_SPREAD; i++) s.push(values[SAMPLE_HEAD + Math.floor((i * (n - SAMPLE_HEAD)) / SAMPLE_SPREAD)]);
    sample = s;
  }
  const counts = candidates.map((c) => countParsed(c, sample));
  let best = 0;
  for (let i = 1; i < counts.length; i++) if (counts[i] > counts[best]) best = i;
  if (counts[best] === 0) return undefined;
  if (sample === values) return { format: candidates[best].format, parsed: counts[best] };
  let winner: { format: string; parsed: number } | undefined;
  for (let i = 0; i < candidates.length; i++) {
    if (i !== best && counts[i] * 2 < counts[best]) continue;
    const parsed = countParsed(candidates[i], values);
    if (winner === undefined || parsed > winner.parsed) winner = { format: candidates[i].format, parsed };
  }
  return winner !== undefined && winner.parsed > 0 ? winner : undefined;
}
