/**
 * Datetime columns: recognise a column's format, parse values into seconds since the Unix epoch,
 * and write synthetic instants back in the column's own format.
 *
 * Formats are luxon format strings (https://moment.github.io/luxon/#/formatting?id=table-of-tokens),
 * parsed with a compiled `DateTime.buildFormatParser` (luxon >= 3.4). Independent of the machine:
 * - without an offset, read and written as UTC wall-clock time (never `TZ`, luxon's default zone);
 * - with an offset token (Z, ZZ, ZZZ), the offset written is kept per value; a quoted 'Z' is UTC;
 * - names and AM/PM are English (locale "en-US");
 * - strict: a text parses only if writing the instant gives it back exactly (no `2001-1-1` for
 *   `yyyy-MM-dd`, no `2001-02-30`, no `jan`); years 0001..9999 only.
 * No inference candidate ({@link DATETIME_FORMATS}) is all digits, so an integer column (20010315)
 * is never read as dates; `yyyyMMdd` works when declared. A two-digit year (`yy`) is read in the
 * window {@link TWO_DIGIT_YEAR_FIRST}..+99 (spreadsheets' default: `7/1/62` is 1962, `3/1/04` 2004). A cheap anchored pre-filter regex and
 * direct field printers (equal to luxon's `toFormat`, tested) spare most luxon calls.
 */
import type { DateTime, DateTimeOptions, TokenParser } from "luxon";
import { UNIT_MS, type ParsedDatetime, type FixedGranularity } from "./granularity";
import { MACRO, USABLE_TOKENS, ZONE_NAME_TOKENS, checkUnitChain, splitFormat, type Piece } from "./datetime-tokens";

let luxonModule: typeof import("luxon") | undefined;

/** luxon, loaded by the first datetime format or ISO bound (tables without datetimes skip it). */
export function luxon(): typeof import("luxon") {
  return (luxonModule ??= require("luxon") as typeof import("luxon"));
}


/** ISO 8601-style date-times: `T` or space, to minutes/seconds/ms, no offset, `ZZ` or `'Z'`. */
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
 * Inference's candidates in order (ties go to the earlier): ISO 8601, year-first, US month-first
 * (before day-first: an ambiguous `01/02/2001` is January 2), dotted day-first, month names.
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
  "MM/dd/yy",
  "M/d/yy",
  "M/d/yy H:mm",
  "dd/MM/yyyy",
  "dd/MM/yyyy HH:mm",
  "dd/MM/yyyy HH:mm:ss",
  "dd/MM/yy",
  "d/M/yy",
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


/**
 * First year of the window a two-digit year (`yy`) is read in: 30..99 are 1930..1999, 00..29 are
 * 2000..2029 (Excel's and Windows' default two-digit year window, where most such files come from;
 * luxon's own cutoff, 1960..2059, would read birth years `45` as 2045).
 */
export const TWO_DIGIT_YEAR_FIRST = 1930;

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
  yy: (f) => pad(f.year % 100, 2),
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

/** Pre-filter: what `toFormat` can print per token, so a text failing it cannot round-trip. */
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
  /** The finest unit the format writes (`yyyy-MM-dd` -> day); never coarser than a day. */
  readonly finest: FixedGranularity;
  /** True when the format has an offset token (Z, ZZ, ZZZ), i.e. the offset varies per value. */
  private readonly offsetToken: boolean;
  private readonly parser: TokenParser;
  /** Anchored necessary condition for {@link parse} (cheap rejection before luxon). */
  private readonly prefilter: RegExp;
  /** With a two-digit year: the pre-filter with the year's two digits captured (indices kept). */
  private readonly shortYear?: RegExp;
  /** Direct printers, one per piece, when every token has one; else luxon's `toFormat`. */
  private readonly fast: ((f: Fields) => string)[] | undefined;

  /**
   * Compiles `format` (luxon tokens, literal letters quoted: `yyyy-MM-dd'T'HH:mm`) once.
   * @throws RangeError for no date/time or no year token (luxon would use today's), tokens luxon
   *   cannot parse back, zone names, locale macros, `h` without `a` or `a` with `H`, and a unit
   *   skipped or written twice ({@link checkUnitChain}).
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
    const isToken = (p: Piece): boolean => !p.literal && /^[A-Za-z]+$/.test(p.val);
    const twoDigit = tokens.filter((t) => t === "yy").length === 1;
    // A two-digit year is parsed as its four-digit year in the window (luxon's cutoff is global).
    const parseFormat = twoDigit ? pieces.map((p) => (isToken(p) ? p.val === "yy" ? "yyyy" : p.val : `'${p.val.replace(/'/g, "''")}'`)).join("") : format;
    this.parser = luxon().DateTime.buildFormatParser(parseFormat, { locale: LOCALE });
    const invalid = (this.parser as unknown as { invalidReason?: string | null }).invalidReason;
    if (invalid) throw new RangeError(`datetime format "${format}": luxon cannot parse it (${invalid})`);
    const pattern = (capture: boolean): string =>
      "^" +
      pieces
        .map((p) => (!isToken(p) ? escapeRegExp(p.val) : capture && p.val === "yy" ? "(\\d{2})" : `(?:${TOKEN_PATTERNS[p.val] ?? "[\\s\\S]+?"})`))
        .join("") +
      "$";
    this.prefilter = new RegExp(pattern(false));
    if (twoDigit) this.shortYear = new RegExp(pattern(true), "d");
    this.fast = pieces.every((p) => !isToken(p) || FAST_WRITERS[p.val] !== undefined)
      ? pieces.map((p) => (isToken(p) ? FAST_WRITERS[p.val] : () => p.val))
      : undefined;
  }

  /**
   * Strict parse (round trip, years 0001..9999, offsets within ±18:00; file header).
   * @returns seconds since the epoch (ms resolution) and the offset written (minutes east of UTC;
   *   0 without an offset token), or undefined. Never throws.
   */
  parse(text: string): ParsedDatetime | undefined {
    if (!this.prefilter.test(text)) return undefined;
    let full = text;
    if (this.shortYear) {
      const m = this.shortYear.exec(text) as (RegExpExecArray & { indices?: [number, number][] }) | null;
      const at = m?.indices?.[1];
      if (!m || !at) return undefined;
      const yy = Number(m[1]);
      const year = TWO_DIGIT_YEAR_FIRST + ((yy - (TWO_DIGIT_YEAR_FIRST % 100) + 100) % 100);
      full = text.slice(0, at[0]) + String(year) + text.slice(at[1]);
    }
    let dt: DateTime;
    try {
      dt = luxon().DateTime.fromFormatParser(full, this.parser, parseOptionsOf());
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
   * Writes `seconds` since the epoch, rounded to the ms and then to the {@link finest} unit in
   * wall-clock time; `offsetMinutes` (east of UTC) is used only with an offset token.
   * @throws RangeError for non-finite seconds, an offset not an integer within ±1080, or a year
   *   outside 0001..9999 (with a two-digit year, outside its window).
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
    if (text === undefined) {
      const years = this.shortYear ? `${TWO_DIGIT_YEAR_FIRST}..${TWO_DIGIT_YEAR_FIRST + 99} (a two-digit year)` : "0001..9999";
      throw new RangeError(`datetime "${this.format}": ${seconds} s is outside the years ${years}`);
    }
    return text;
  }

  /** Prints `ms` (since the epoch) at `offset` minutes; undefined when the local year is outside 1..9999. */
  private render(ms: number, offset: number): string | undefined {
    const local = new Date(ms + offset * 60000);
    const year = local.getUTCFullYear();
    if (!(year >= 1 && year <= 9999)) return undefined;
    if (this.shortYear && !(year >= TWO_DIGIT_YEAR_FIRST && year < TWO_DIGIT_YEAR_FIRST + 100)) return undefined;
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

/** Inference's sample: the first SAMPLE_HEAD values plus SAMPLE_SPREAD spread over the rest. */
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
 * Picks a column's format from its distinct values: every candidate is tried on a deterministic
 * sample; the leader and any runner-up parsing at least half as many are counted over all values,
 * the largest count winning (ties: the earlier candidate). Never throws.
 * @returns `{ format, parsed }` (`parsed` exact, >= 1), or undefined when nothing parses.
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
