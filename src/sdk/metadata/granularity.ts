/**
 * Instants and the units a datetime column's values are written at: a parsed value
 * ({@link ParsedDatetime}), the units ({@link Granularity}: year ... millisecond), their lattices
 * ({@link unitStart}, {@link unitIndex}) and the inference of a column's unit from its parsed
 * values ({@link inferGranularity}). The formats that read and write the text are `./datetime`.
 */

/** One parsed value: the instant and the UTC offset it was written with. */
export interface ParsedDatetime {
  /** Seconds since 1970-01-01T00:00:00Z (may be negative; millisecond resolution, so possibly fractional). */
  seconds: number;
  /** Minutes east of UTC as written in the text (0 when the format carries no offset). */
  offset: number;
}

/**
 * Unit a datetime column's values are written at, coarsest first when inferred: `year` (every value
 * 1 January at local midnight), `month` (the 1st of a month at local midnight), then the fixed units.
 */
export type Granularity = "year" | "month" | "day" | "hour" | "minute" | "second" | "millisecond";

/**
 * Seconds per granularity unit (day 86400, hour 3600, minute 60, second 1, millisecond 0.001).
 * Days are UTC/wall-clock days of exactly 86400 s (no leap seconds, as in POSIX time).
 * Months and years have no fixed length: their entries are the mean Gregorian month (2,629,746 s =
 * 365.2425 / 12 days) and year (31,556,952 s), for sizes and spacing only. Values on a month or year
 * lattice come from {@link unitStart} / {@link unitIndex} (calendar arithmetic), never from these.
 */
export const GRANULARITY_SECONDS: Readonly<Record<Granularity, number>> = Object.freeze({
  year: 31556952,
  month: 2629746,
  day: 86400,
  hour: 3600,
  minute: 60,
  second: 1,
  millisecond: 0.001,
});

/** The granularities of a fixed number of milliseconds (the units a format's finest token writes). */
export type FixedGranularity = Exclude<Granularity, "year" | "month">;

/** Granularities, coarsest first. */
const GRANULARITIES: readonly Granularity[] = ["year", "month", "day", "hour", "minute", "second", "millisecond"];
/** Milliseconds per fixed granularity unit (integers, for exact lattice arithmetic). */
export const UNIT_MS: Readonly<Record<FixedGranularity, number>> = {
  day: 86400000,
  hour: 3600000,
  minute: 60000,
  second: 1000,
  millisecond: 1,
};

/** Months per calendar unit. */
const CALENDAR_MONTHS = { year: 12, month: 1 } as const;

/**
 * Start of lattice point `k` of granularity `g`, in wall-clock milliseconds (milliseconds since
 * 1970-01-01T00:00 of the column's own offset, i.e. UTC ms + offset): for the fixed units k whole
 * units (k * 86,400,000 for days); for `month` the 1st of the k-th month after January 1970
 * (k = 0: 1970-01-01, k = -1: 1969-12-01); for `year` 1 January of year 1970 + k. Proleptic
 * Gregorian calendar (`Date.UTC`); exact integers for |k| within the years 0001..9999.
 * @param k an integer lattice index.
 */
export function unitStart(g: Granularity, k: number): number {
  if (g === "year" || g === "month") return Date.UTC(1970, k * CALENDAR_MONTHS[g]);
  return k * UNIT_MS[g];
}

/**
 * The position of wall-clock milliseconds `local` on the lattice of granularity `g`: a real number,
 * increasing in `local`, equal to k exactly when `local` is {@link unitStart}(g, k) and between k and
 * k + 1 strictly inside that unit (linear within it). So `Math.ceil(unitIndex(g, x))` is the first
 * lattice point at or after x. Fixed units: `local / unit ms`; months and years count calendar units
 * since 1970 plus the elapsed share of the current one.
 * @param local finite wall-clock milliseconds (see {@link unitStart}).
 */
export function unitIndex(g: Granularity, local: number): number {
  if (g !== "year" && g !== "month") return local / UNIT_MS[g];
  const d = new Date(local);
  const months = (d.getUTCFullYear() - 1970) * 12 + d.getUTCMonth();
  const per = CALENDAR_MONTHS[g];
  const k = Math.floor(months / per);
  const start = unitStart(g, k);
  return k + (local - start) / (unitStart(g, k + 1) - start);
}

/** True when wall-clock milliseconds `local` (an integer) is a lattice point of granularity `g`. */
function onLattice(g: Granularity, local: number): boolean {
  if (g !== "year" && g !== "month") return local % UNIT_MS[g] === 0;
  if (local % UNIT_MS.day !== 0) return false;
  const d = new Date(local);
  return d.getUTCDate() === 1 && (g === "month" || d.getUTCMonth() === 0);
}

/**
 * The coarsest granularity g, not finer than `finest` (i.e. g is `finest` or coarser), such that every value's
 * local wall-clock time (seconds + offset*60) is a point of g's lattice: 1 January at midnight for `year`, the
 * 1st of a month at midnight for `month`, a whole multiple of GRANULARITY_SECONDS[g] for the fixed units. E.g.
 * hourly stamps written with seconds -> "hour"; local midnights at +02:00 -> "day"; monthly prices dated on the
 * 1st (`2001-03-01`) -> "month"; yearly values on 1 January -> "year".
 *
 * Method: one pass over the values in integer milliseconds (seconds rounded to the millisecond), moving to a
 * finer unit whenever a value is off the current lattice and stopping early at `finest`.
 * @param values parsed values ({@link DatetimeFormat.parse}); consumed once.
 * @param finest the format's {@link DatetimeFormat.finest}.
 * @returns a granularity from "year" to `finest`; "day" when there are no values (`finest` when that is coarser).
 *   Never throws.
 */
export function inferGranularity(values: Iterable<ParsedDatetime>, finest: Granularity): Granularity {
  const last = GRANULARITIES.indexOf(finest);
  let g = 0;
  if (g === last) return GRANULARITIES[g];
  let seen = false;
  for (const v of values) {
    seen = true;
    const local = Math.round(v.seconds * 1000) + Math.round(v.offset * 60000);
    while (g < last && !onLattice(GRANULARITIES[g], local)) g++;
    if (g === last) break;
  }
  // No values prove no calendar grain: "day" (or `finest` when coarser).
  return seen ? GRANULARITIES[g] : GRANULARITIES[Math.min(GRANULARITIES.indexOf("day"), last)];
}
