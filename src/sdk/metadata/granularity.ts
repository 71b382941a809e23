/** The units a datetime column is written at, their lattices and inference. */

/** One parsed value: the instant and the UTC offset it was written with. */
export interface ParsedDatetime {
  /** Seconds since 1970-01-01T00:00:00Z (ms resolution, so possibly fractional). */
  seconds: number;
  /** Minutes east of UTC as written in the text (0 when the format carries no offset). */
  offset: number;
}

/** A column's unit: `year` (1 January, local midnight), `month` (the 1st), then the fixed units. */
export type Granularity = "year" | "month" | "day" | "hour" | "minute" | "second" | "millisecond";

/**
 * Seconds per unit; days of exactly 86400 s (POSIX). Month and year are the mean Gregorian ones,
 * for sizes only: their lattices use calendar arithmetic ({@link unitStart}), never these.
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

/** The granularities of a fixed number of milliseconds. */
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
 * Start of lattice point `k` of `g` in wall-clock ms (UTC ms + offset): k whole fixed units, the
 * 1st of the k-th month after January 1970, or 1 January of 1970 + k (proleptic Gregorian).
 */
export function unitStart(g: Granularity, k: number): number {
  if (g === "year" || g === "month") return Date.UTC(1970, k * CALENDAR_MONTHS[g]);
  return k * UNIT_MS[g];
}

/**
 * Position of wall-clock ms `local` on `g`'s lattice: k exactly at {@link unitStart}(g, k), linear
 * within a unit, so `Math.ceil(unitIndex(g, x))` is the first lattice point at or after x.
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
 * The coarsest granularity, not finer than the format's `finest`, on whose lattice every value's
 * local wall-clock time lies (hourly stamps with seconds -> "hour"), in one pass over integer ms.
 * @returns "day" (or a coarser `finest`) when there are no values. Never throws.
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
