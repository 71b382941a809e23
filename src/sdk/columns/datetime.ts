/**
 * The datetime kind: values in one format, held as seconds since the Unix epoch and released as
 * bins like numbers (`./bins`). The format engine is `../metadata/datetime`, units and granularity
 * `../metadata/granularity`; this module is the kind around them (codec, lattice, typed output,
 * seeded reading).
 */
import type { ColumnStats, NumericalGrain } from "../../contract";
import { fileOfDescription } from "../io/csv";
import { DatetimeFormat, luxon } from "../metadata/datetime";
import { inferGranularity, unitIndex, unitStart, UNIT_MS, type FixedGranularity, type ParsedDatetime } from "../metadata/granularity";
import { DataError } from "../errors";
import { binnedCodec, type Lattice } from "./bins";
import type { ColumnCodec, ColumnScan, ColumnType, FeatureDecoder, ValueRange } from "./common";
import { grainDecoder, grainOf, sharedWriter } from "./numerical-grain";

/** Distinct texts memoised per column read with luxon before the memo is cleared (memory bound). */
const DATETIME_MEMO = 100_000;

/**
 * Datetime code book: values parsed to seconds, binned as numbers; `column_stats` adds `format`,
 * `granularity`, (formats with an offset) the most frequent `offset` and, for quantile bins at
 * hour, minute or second granularity, the `grain` of the clock ({@link clockGrainOf}).
 * @throws DataError naming line and value when a value does not parse in the format.
 */
export function datetimeCodec(scan: ColumnScan, n: number, binCap: number, fmt: DatetimeFormat, source: string): ColumnCodec {
  const parsed: (ParsedDatetime | undefined)[] = scan.values.map((v) => (v === "" ? undefined : fmt.parse(v)));
  const offsets = new Map<number, number>();
  scan.values.forEach((v, id) => {
    if (v === "") return;
    const d = parsed[id];
    if (!d) {
      throw new DataError(
        `${source}, line ${scan.firstLines[id]}, column "${scan.name}": ${JSON.stringify(v)} is not a datetime in the column's ` +
          `format ${fmt.format}; fix the value, give the format (columns: {"${scan.name}": {"type": "datetime", "format": "..."}}) ` +
          `or treat the column as categorical.`,
        { column: scan.name, line: scan.firstLines[id], file: fileOfDescription(source) },
      );
    }
    offsets.set(d.offset, (offsets.get(d.offset) ?? 0) + scan.counts[id]);
  });
  const granularity = inferGranularity(
    parsed.filter((d): d is ParsedDatetime => d !== undefined),
    fmt.finest,
  );
  let offset = 0;
  let best = -1;
  for (const [o, c] of offsets) if (c > best || (c === best && o < offset)) [offset, best] = [o, c];
  const num = parsed.map((d) => (d ? d.seconds : NaN));
  const weekdays = granularity === "year" || granularity === "month" ? undefined : weekdaysOf(parsed);
  const codec = binnedCodec(scan, n, binCap, "datetime", num, (v) => fmt.parse(v)?.seconds, {
    format: fmt.format,
    granularity,
    ...(fmt.hasOffset ? { offset } : {}),
    ...(weekdays ? { weekdays } : {}),
    ...(scan.missingText !== undefined ? { missing_text: scan.missingText } : {}),
  });
  const grain = clockGrainOf(num, scan.counts, codec.stats);
  if (grain) codec.stats.grain = grain;
  return { ...codec, datetime: fmt };
}

/**
 * Grains of the clock tried for a datetime column, in seconds: 2 s to 12 h (the 5, 15 and 30
 * minutes times are rounded to, whole hours).
 */
export const CLOCK_GRAINS: readonly number[] = [2, 5, 10, 15, 20, 30, 60, 120, 300, 600, 900, 1200, 1800, 3600, 7200, 10800, 21600, 43200];

/**
 * A quantile-binned datetime column at hour, minute or second granularity as a numerical one for
 * its grain: local seconds (UTC seconds + `offset` minutes, `shift` seconds), integers on the
 * granularity's step. Undefined for other granularities and for `weekdays` (whose lattice skips days).
 */
function clockView(stats: ColumnStats): { shift: number; stats: ColumnStats } | undefined {
  const g = stats.granularity;
  if (g !== "hour" && g !== "minute" && g !== "second") return undefined;
  if (stats.weekdays || !stats.bin_edges || stats.min === undefined || stats.max === undefined) return undefined;
  const shift = (stats.offset ?? 0) * 60;
  const unit = UNIT_MS[g] / 1000;
  return {
    shift,
    stats: {
      type: "numerical",
      count: stats.count,
      missing: stats.missing,
      min: stats.min + shift,
      max: stats.max + shift,
      bin_edges: stats.bin_edges.map((x) => x + shift),
      integer: true,
      decimals: 0,
      ...(unit > 1 ? { step: unit } : {}),
      ...(stats.grain ? { grain: stats.grain } : {}),
    },
  };
}

/**
 * The grain of a datetime column's clock (`column_stats[f].grain`, steps in seconds of local
 * time): times rounded to 5, 15 or 30 minutes or to whole hours in their real shares, selected as
 * `./numerical-grain`'s `grainOf` selects a number's, among {@link CLOCK_GRAINS}.
 * @param seconds values in seconds since the epoch (NaN skipped), `counts` rows per entry.
 * @returns undefined without a clock view ({@link clockView}) or a grain beyond the granularity.
 */
export function clockGrainOf(seconds: readonly number[], counts: ArrayLike<number>, stats: ColumnStats): NumericalGrain | undefined {
  const view = clockView(stats);
  if (!view) return undefined;
  return grainOf(seconds.map((x) => x + view.shift), counts, view.stats, undefined, CLOCK_GRAINS);
}

/**
 * Decoder of a datetime column with a `grain` (`./numerical-grain`'s `grainDecoder` over local
 * seconds, written in the column's format and offset); `plain`, `range`, `codes` and `weights` as
 * there. Undefined when the grain does not fit the column (the caller then uses `plain`).
 */
export function clockGrainDecoder(
  f: string,
  K: number,
  e: readonly number[],
  missingCode: number | undefined,
  stats: ColumnStats,
  plain: FeatureDecoder & { codes: number[]; weights: number[] },
  range?: ValueRange,
): (FeatureDecoder & { codes: number[]; weights: number[] }) | undefined {
  const view = clockView(stats);
  if (!view || !stats.grain || !stats.format) return undefined;
  const { shift } = view;
  const fmt = new DatetimeFormat(stats.format);
  const offset = stats.offset ?? 0;
  const local = range && {
    ...range,
    ...(range.lo !== undefined ? { lo: range.lo + shift } : {}),
    ...(range.hi !== undefined ? { hi: range.hi + shift } : {}),
  };
  const write = sharedWriter(`datetime\u0000${stats.format}\u0000${offset}\u0000${shift}`, () => (y) => fmt.write(y - shift, offset));
  return grainDecoder(f, K, e.map((x) => x + shift), missingCode, view.stats, plain, local, write);
}

/** Distinct days a column needs before a day of the week it never falls on is kept absent. */
export const WEEKDAY_MIN_DAYS = 35;

/** Day number since 1970-01-01 of a parsed value, in its own offset. */
function localDay(d: ParsedDatetime): number {
  return Math.floor((d.seconds + d.offset * 60) / 86400);
}

/** Day of the week (0 = Sunday) of day number `day` since 1970-01-01, a Thursday. */
function weekdayOfDay(day: number): number {
  return (((day + 4) % 7) + 7) % 7;
}

/** Day of the week (0 = Sunday .. 6 = Saturday) of a parsed value, in its own offset. */
export function weekdayOf(d: ParsedDatetime): number {
  return weekdayOfDay(localDay(d));
}

/**
 * The days of the week (0 = Sunday .. 6 = Saturday, in each value's own offset) a column's values
 * fall on, when they span at least {@link WEEKDAY_MIN_DAYS} distinct days and miss some day of the
 * week (trading days, weekly readings); else undefined. With 35 days spread evenly over the week,
 * a given day is missed by chance with probability (6/7)^35 < 0.5%.
 */
export function weekdaysOf(parsed: readonly (ParsedDatetime | undefined)[]): number[] | undefined {
  const days = new Set<number>();
  for (const d of parsed) if (d) days.add(localDay(d));
  if (days.size < WEEKDAY_MIN_DAYS) return undefined;
  const seen = new Set<number>();
  for (const day of days) seen.add(weekdayOfDay(day));
  return seen.size < 7 ? [...seen].sort((a, b) => a - b) : undefined;
}

/**
 * Unit positions of a lattice on the days of the week `weekdays` only: point k is unit i of the
 * j-th such day (k = j·u + i, u units a day), counted from the week of 1970-01-04, a Sunday.
 * `units(k)` is the point's unit number on the plain lattice, `position(t)` the inverse on unit
 * number t (between the last point of one such day and the first of the next, a fraction).
 */
function weekdayUnits(g: FixedGranularity, weekdays: readonly number[]): { units(k: number): number; position(t: number): number } {
  const u = UNIT_MS.day / UNIT_MS[g];
  const m = weekdays.length;
  const rank = Array.from({ length: 8 }, (_, wd) => weekdays.filter((w) => w < wd).length);
  const allowed = Array.from({ length: 7 }, (_, wd) => weekdays.includes(wd));
  const units = (k: number): number => {
    const j = Math.floor(k / u);
    const week = Math.floor(j / m);
    return ((week * 7 + weekdays[j - week * m] - 4) * u) + (k - j * u);
  };
  return {
    units,
    position(t) {
      const day = Math.floor(t / u);
      const week = Math.floor((day + 4) / 7);
      const wd = day + 4 - week * 7;
      const j = week * m + rank[wd];
      if (allowed[wd]) return j * u + (t - day * u);
      const before = units(j * u - 1);
      return j * u - 1 + (t - before) / (units(j * u) - before);
    },
  };
}

/**
 * The lattice of a datetime column (starts of `granularity` units in its `offset`, written in its
 * `format`; with `weekdays`, on those days of the week only), or undefined without `format` and
 * `granularity`.
 */
export function datetimeLattice(stats: ColumnStats): Lattice | undefined {
  if (stats.type === "datetime" && stats.format && stats.granularity) {
    const fmt = new DatetimeFormat(stats.format);
    const g = stats.granularity;
    const offset = stats.offset ?? 0;
    const shiftMs = offset * 60000;
    const week = stats.weekdays && g !== "year" && g !== "month" ? weekdayUnits(g, stats.weekdays) : undefined;
    const value = week
      ? (k: number): number => (week.units(k) * UNIT_MS[g as FixedGranularity] - shiftMs) / 1000
      : (k: number): number => (unitStart(g, k) - shiftMs) / 1000;
    return {
      value,
      index: week ? (x) => week.position((x * 1000 + shiftMs) / UNIT_MS[g as FixedGranularity]) : (x) => unitIndex(g, x * 1000 + shiftMs),
      write: (k) => fmt.write(value(k), offset),
      writeExact: (x) => fmt.write(x, offset),
      exactUpTo: 2 ** 52 / 1000,
    };
  }
  return undefined;
}

/**
 * Output type and compiled format: Date32 for a date-only format without offset, else
 * Timestamp(ms, UTC). @throws RangeError when the format cannot be compiled.
 */
export function datetimeColumnType(format: string): { type: ColumnType; datetime: DatetimeFormat } {
  const datetime = new DatetimeFormat(format);
  return { type: datetime.finest === "day" && !datetime.hasOffset ? "date" : "timestamp", datetime };
}

/**
 * Text -> milliseconds since the epoch in `fmt`, or undefined: the same answers as `fmt.parse`
 * (luxon, slow) at a fraction of the cost. Formats of numeric tokens and literals are read with
 * one regex and `Date.UTC` (padded tokens exact digits, unpadded no leading zero, fields unchanged
 * by the Date: the round trip); what fails (years before 0100, offsets -00:00 or beyond ±18:00)
 * goes to `fmt.parse`. Other formats: `fmt.parse` with a memo of DATETIME_MEMO texts.
 */
export function datetimeParser(fmt: DatetimeFormat): (text: string) => number | undefined {
  const strict = (t: string): number | undefined => {
    const p = fmt.parse(t);
    return p === undefined ? undefined : Math.round(p.seconds * 1000);
  };
  const fast = numericDatetimeParser(fmt.format);
  if (fast) return (t) => fast(t) ?? strict(t);
  const memo = new Map<string, number | undefined>();
  return (t) => {
    if (memo.has(t)) return memo.get(t);
    const ms = strict(t);
    if (memo.size >= DATETIME_MEMO) memo.clear();
    memo.set(t, ms);
    return ms;
  };
}

/** Regular expression of each numeric token, and the field it sets. */
const NUMERIC_TOKENS: Readonly<Record<string, { re: string; field: number }>> = {
  yyyy: { re: "(\\d{4})", field: 0 },
  MM: { re: "(\\d{2})", field: 1 },
  M: { re: "([1-9]\\d?)", field: 1 },
  LL: { re: "(\\d{2})", field: 1 },
  L: { re: "([1-9]\\d?)", field: 1 },
  dd: { re: "(\\d{2})", field: 2 },
  d: { re: "([1-9]\\d?)", field: 2 },
  HH: { re: "(\\d{2})", field: 3 },
  H: { re: "(0|[1-9]\\d?)", field: 3 },
  mm: { re: "(\\d{2})", field: 4 },
  m: { re: "(0|[1-9]\\d?)", field: 4 },
  ss: { re: "(\\d{2})", field: 5 },
  s: { re: "(0|[1-9]\\d?)", field: 5 },
  SSS: { re: "(\\d{3})", field: 6 },
  ZZ: { re: "([+-])(\\d{2}):(\\d{2})", field: 7 },
  ZZZ: { re: "([+-])(\\d{2})(\\d{2})", field: 7 },
};

/**
 * The fast reader of {@link datetimeParser} for a format of numeric tokens and literals, else
 * undefined. Splits as luxon does: a run of one letter is a token, quoted text literal.
 */
function numericDatetimeParser(format: string): ((text: string) => number | undefined) | undefined {
  let re = "^";
  const fields: number[] = []; // per capture group: the field it sets (7 = offset: sign, hours, minutes)
  for (let i = 0; i < format.length; ) {
    const ch = format[i];
    if (ch === "'") {
      const end = format.indexOf("'", i + 1);
      if (end < 0) return undefined;
      const literal = end === i + 1 ? "'" : format.slice(i + 1, end);
      re += literal.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
      i = end + 1;
    } else if (/[A-Za-z]/.test(ch)) {
      let j = i;
      while (format[j] === ch) j++;
      const token = NUMERIC_TOKENS[format.slice(i, j)];
      if (token === undefined) return undefined;
      re += token.re;
      fields.push(...(token.field === 7 ? [7, 7, 7] : [token.field]));
      i = j;
    } else {
      re += ch.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
      i++;
    }
  }
  if (!fields.includes(0)) return undefined;
  const pattern = new RegExp(re + "$");
  return (text) => {
    const m = pattern.exec(text);
    if (m === null) return undefined;
    const f = [0, 1, 1, 0, 0, 0, 0];
    let offset = 0;
    for (let g = 0; g < fields.length; g++) {
      if (fields[g] !== 7) f[fields[g]] = Number(m[g + 1]);
      else {
        const sign = m[g + 1];
        offset = (sign === "-" ? -1 : 1) * (Number(m[g + 2]) * 60 + Number(m[g + 3]));
        if ((offset === 0 && sign === "-") || Math.abs(offset) > 18 * 60 || Number(m[g + 3]) > 59) return undefined;
        g += 2;
      }
    }
    const local = Date.UTC(f[0], f[1] - 1, f[2], f[3], f[4], f[5], f[6]);
    const d = new Date(local);
    // Also refuses years 0001..0099, which Date.UTC reads as 1900..1999 (fmt.parse then reads them).
    const same =
      d.getUTCFullYear() === f[0] &&
      d.getUTCMonth() === f[1] - 1 &&
      d.getUTCDate() === f[2] &&
      d.getUTCHours() === f[3] &&
      d.getUTCMinutes() === f[4] &&
      d.getUTCSeconds() === f[5];
    return same ? local - offset * 60_000 : undefined;
  };
}

/**
 * Seeded generation's reader: `parse` text -> seconds in the column's format (or undefined);
 * `show` seconds -> text at the column's `offset` (ISO 8601 for a year outside 0001..9999).
 */
export function datetimeReader(format: string, offset: number): { parse: (text: string) => number | undefined; show: (x: number) => string } {
  const fmt = new DatetimeFormat(format);
  return {
    parse: (t) => fmt.parse(t)?.seconds,
    show: (x) => {
      try {
        return fmt.write(x, offset);
      } catch {
        return Number.isFinite(x) && Math.abs(x) < 8.64e12 ? new Date(x * 1000).toISOString() : String(x);
      }
    },
  };
}

/** A `where` bound in seconds: text in the column's format, else ISO 8601 (UTC unless offset). */
export function datetimeBound(v: unknown, parse: ((text: string) => number | undefined) | undefined): number | undefined {
  if (typeof v === "string") {
    const x = parse?.(v.trim());
    if (x !== undefined) return x;
    const iso = luxon().DateTime.fromISO(v.trim(), { setZone: true, zone: "utc" });
    if (iso.isValid) return iso.toMillis() / 1000;
  }
  return undefined;
}

/** Short English names of the days of the week, Sunday first. */
const WEEKDAY_NAMES = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

/** `describeColumns`' words for a clock's grain: `grain 1 h (4%), 30 min (3%), 5 min (12%), 1 min (81%)`. */
function describeClockGrain(grain: NumericalGrain): string {
  const pct = (x: number): string => (x > 0 && x < 0.005 ? "<1%" : `${Math.round(x * 100)}%`);
  const unit = (s: number): string => (s % 3600 === 0 ? `${s / 3600} h` : s % 60 === 0 ? `${s / 60} min` : `${s} s`);
  return `grain ${grain.steps.map((g, j) => `${unit(g)} (${pct(grain.shares[j])})`).reverse().join(", ")}`;
}

/** `describeColumns`' details of a datetime column: format, granularity, days of the week and range. */
export function describeDatetime(st: ColumnStats, fmt: DatetimeFormat): string {
  const w = (x: number | undefined) => (x === undefined ? "?" : fmt.write(x, st.offset ?? 0));
  const days = st.weekdays ? `, on ${st.weekdays.map((d) => WEEKDAY_NAMES[d]).join(" ")} only` : "";
  return `format ${st.format}, granularity ${st.granularity}${days}, ${w(st.min)} .. ${w(st.max)}${st.grain ? `, ${describeClockGrain(st.grain)}` : ""}`;
}
