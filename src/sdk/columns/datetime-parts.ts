/**
 * Cyclic parts of a datetime column as model features of their own (docs/generality.md "Cycles
 * of the clock"): a quantile bin of a datetime spans days to months, so inside a bin the hour of
 * the day, the day of the week and the month of the year are lost to the model. Where the bins are
 * wider than the cycle, the SDK adds the part as a categorical feature (code = hour 0..23, day
 * 0 = Sunday .. 6, month 0 = January .. 11, in the column's `offset`; blank last), counted from
 * the column's cell per record like any feature; the datetime decoder then draws its value inside
 * its bin at the drawn parts. The parts are never written to a table.
 */
import type { ColumnStats, DatetimeCycle, Metadata } from "../../contract";
import { datetimeParser } from "./datetime";
import type { DatetimeFormat } from "../metadata/datetime";
import { UNIT_MS, type FixedGranularity } from "../metadata/granularity";
import type { Rng } from "../generate/sfc32";
import { inRange, MISSING_KEY, type ColumnCodec, type FeatureDecoder, type ValueRange } from "./common";

/** Per cycle: its number of codes, the span a bin must exceed (seconds), the suffix of its name, its labels. */
export const CYCLES: Readonly<Record<DatetimeCycle, { length: number; span: number; suffix: string; labels: readonly string[] }>> = {
  hour_of_day: { length: 24, span: 86400, suffix: "hour", labels: Array.from({ length: 24 }, (_, h) => String(h).padStart(2, "0")) },
  day_of_week: { length: 7, span: 7 * 86400, suffix: "weekday", labels: ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"] },
  month_of_year: {
    length: 12,
    span: 31 * 86400,
    suffix: "month",
    labels: ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"],
  },
};

/** Span of data (seconds, 2 years of 365 days) before the month of the year is a part. */
const MONTH_MIN_SPAN = 2 * 365 * 86400;
/** Longest feature name the contract takes (`Metadata.features`). */
const MAX_NAME = 1024;

/** Day of the week (0 = Sunday) of day number `day` since 1970-01-01, a Thursday. */
function weekdayOfDay(day: number): number {
  return (((day + 4) % 7) + 7) % 7;
}

/** Month of the year (0 = January) of day number `day` since 1970-01-01. */
function monthOfDay(day: number): number {
  return new Date(day * 86400000).getUTCMonth();
}

/** The code of `cycle` at `local` seconds (UTC seconds plus the column's offset). */
export function cycleCode(cycle: DatetimeCycle, local: number): number {
  if (cycle === "hour_of_day") return Math.floor((((local % 86400) + 86400) % 86400) / 3600);
  const day = Math.floor(local / 86400);
  return cycle === "day_of_week" ? weekdayOfDay(day) : monthOfDay(day);
}

/**
 * The cycles a datetime column's quantile bins hide: the hour of the day when some interval bin is
 * wider than a day at hour, minute or second granularity; the day of the week when one is wider
 * than a week at day granularity or finer; the month of the year when the values span 2 years or
 * more and a bin is wider than 31 days (day or finer). None for point bins or other kinds.
 */
export function hiddenCycles(stats: ColumnStats): DatetimeCycle[] {
  const e = stats.bin_edges;
  const g = stats.granularity;
  if (stats.type !== "datetime" || !e || e.length < 2 || !stats.format || g === undefined || g === "year" || g === "month") return [];
  let widest = 0;
  for (let i = 0; i + 1 < e.length; i++) widest = Math.max(widest, e[i + 1] - e[i]);
  const span = (stats.max ?? e[e.length - 1]) - (stats.min ?? e[0]);
  const out: DatetimeCycle[] = [];
  if ((g === "hour" || g === "minute" || g === "second") && widest > CYCLES.hour_of_day.span) out.push("hour_of_day");
  if (widest > CYCLES.day_of_week.span) out.push("day_of_week");
  if (span >= MONTH_MIN_SPAN && widest > CYCLES.month_of_year.span) out.push("month_of_year");
  return out;
}

/**
 * The code book of `cycle` of datetime column `source` (a categorical feature named `name`): codes
 * 0 .. length-1 as {@link cycleCode}, the blank code last when the column has blanks. `encode`
 * reads the source column's text (`ColumnCodec.column`).
 */
export function partCodec(source: ColumnCodec, cycle: DatetimeCycle, name: string): ColumnCodec {
  const st = source.stats;
  const { length, labels } = CYCLES[cycle];
  const blank = st.missing > 0;
  const shift = (st.offset ?? 0) * 60;
  const parse = datetimeParser(source.datetime!);
  const mapping: Record<string, number> = {};
  labels.forEach((l, c) => (mapping[l] = c));
  if (blank) mapping[MISSING_KEY] = length;
  return {
    name,
    column: source.name,
    kind: "categorical",
    K: length + (blank ? 1 : 0),
    missingCode: blank ? length : -1,
    otherCode: -1,
    stats: { type: "categorical", count: st.count, missing: st.missing, part_of: { column: source.name, cycle } },
    mapping,
    encode(v) {
      if (v === "") return blank ? length : -1;
      const ms = parse(v);
      return ms === undefined ? -1 : cycleCode(cycle, ms / 1000 + shift);
    },
  };
}

/**
 * The part codecs of a table's datetime columns ({@link hiddenCycles}), named `column#hour`,
 * `column#weekday`, `column#month` (`#` added until no table column or other part has the name).
 */
export function cyclicParts(codecs: readonly ColumnCodec[]): ColumnCodec[] {
  const taken = new Set(codecs.map((c) => c.name));
  const parts: ColumnCodec[] = [];
  for (const codec of codecs) {
    if (codec.kind !== "datetime" || !codec.datetime) continue;
    for (const cycle of hiddenCycles(codec.stats)) {
      let name = `${codec.name}#${CYCLES[cycle].suffix}`;
      while (taken.has(name)) name += "#";
      if (name.length > MAX_NAME) continue;
      taken.add(name);
      parts.push(partCodec(codec, cycle, name));
    }
  }
  return parts;
}

/** True when feature stats mark a part of a datetime column (never a table column). */
export function isPart(stats: ColumnStats | undefined): boolean {
  return stats?.part_of !== undefined;
}

/** The features of `meta` that are table columns (not {@link isPart}), in order. */
export function tableFeatures(meta: Metadata): string[] {
  return meta.features.filter((f) => !isPart(meta.column_stats?.[f]));
}

/** A metadata without its parts: what every reader of the table's columns sees. */
export function withoutParts(meta: Metadata): Metadata {
  const parts = meta.features.filter((f) => isPart(meta.column_stats?.[f]));
  if (parts.length === 0) return meta;
  const drop = new Set(parts);
  const keep = <T>(r: Record<string, T> | undefined): Record<string, T> | undefined =>
    r && Object.fromEntries(Object.entries(r).filter(([k]) => !drop.has(k)));
  return {
    ...meta,
    features: meta.features.filter((f) => !drop.has(f)),
    cardinalities: keep(meta.cardinalities)!,
    empirical_probs: keep(meta.empirical_probs)!,
    ...(meta.column_stats ? { column_stats: keep(meta.column_stats) } : {}),
    ...(meta.value_mappings ? { value_mappings: keep(meta.value_mappings) } : {}),
    ...(meta.marginals ? { marginals: meta.marginals.filter((m) => !drop.has(m.features[0]) && !drop.has(m.features[1])) } : {}),
  };
}

/** The parts of datetime feature `f` in `meta`: feature name and cycle, in feature order. */
export function partsOf(meta: Metadata, f: string): { name: string; cycle: DatetimeCycle }[] {
  const out: { name: string; cycle: DatetimeCycle }[] = [];
  for (const g of meta.features) {
    const p = meta.column_stats?.[g]?.part_of;
    if (p && p.column === f) out.push({ name: g, cycle: p.cycle });
  }
  return out;
}

/** Days tried at random before the days of a bin are listed. */
const DAY_TRIES = 48;
/** Most days of a bin listed when the random tries find none. */
const DAY_LIST = 4000;

/**
 * The decoder of a quantile-binned datetime with parts: a row's value lies inside its bin (and
 * `range`) at the row's drawn parts (local time, `offset`), on the column's granularity and, with a
 * `grain`, on a grain drawn by the bin's shares; `base` (the plain or grain decoder) decodes a point
 * bin, a blank, a row without part codes and a bin that holds no instant at its parts.
 * A day of the bin is drawn at random (then, if none fits, among the bin's days listed), then the
 * value inside that day's window (its hour, or the whole day).
 */
export function cyclicDecoder<D extends FeatureDecoder>(
  base: D,
  edges: readonly number[],
  missingCode: number | undefined,
  stats: ColumnStats,
  fmt: DatetimeFormat,
  parts: readonly { name: string; cycle: DatetimeCycle }[],
  range?: ValueRange,
): D {
  const g = stats.granularity as FixedGranularity;
  const unitMs = UNIT_MS[g];
  const shiftMs = (stats.offset ?? 0) * 60000;
  const nb = edges.length - 1;
  const min = stats.min ?? edges[0];
  const max = stats.max ?? edges[nb];
  const grain = stats.grain;
  const grainOk = grain !== undefined && grain.shares.length === grain.steps.length && grain.bin_shares.length === nb * grain.steps.length;
  const stepsMs = grainOk ? grain.steps.map((s) => Math.round(s * 1000)) : [];
  const allowed = stats.weekdays ? new Set(stats.weekdays) : undefined;
  const cycles = parts.map((p) => p.cycle);
  const hourAt = cycles.indexOf("hour_of_day");
  const weekAt = cycles.indexOf("day_of_week");
  const monthAt = cycles.indexOf("month_of_year");
  const want = (codes: ArrayLike<number>, at: number, len: number): number => {
    if (at < 0) return -1;
    const c = codes[at];
    return c >= 0 && c < len ? c : -1;
  };
  /** A point in local ms [wa, wb) on a grain drawn by bin c's shares (coarser grains' points avoided), or NaN. */
  const pointIn = (wa: number, wb: number, c: number, rng: Rng): number => {
    let j = -1;
    if (grainOk) {
      const S = stepsMs.length;
      let u = rng.next();
      let total = 0;
      for (let k = 0; k < S; k++) total += grain!.bin_shares[c * S + k];
      const share = (k: number): number => (total > 0 ? grain!.bin_shares[c * S + k] / total : grain!.shares[k]);
      j = S - 1;
      for (let k = 0; k < S; k++) {
        u -= share(k);
        if (u < 0) {
          j = k;
          break;
        }
      }
    }
    for (let k = j; k >= -1; k--) {
      const step = k >= 0 ? stepsMs[k] : unitMs;
      const first = Math.ceil(wa / step) * step;
      const last = Math.ceil(wb / step) * step - step;
      if (first > last) continue;
      const count = Math.round((last - first) / step) + 1;
      for (let t = 0; t < 8; t++) {
        const x = first + step * rng.int(count);
        if (k < 0 || t === 7 || !stepsMs.slice(k + 1).some((s) => x % s === 0)) return x;
      }
    }
    return NaN;
  };
  const decode: FeatureDecoder["decode"] = (c, rng, row, ids, partnerCode, fresh, partCodes) => {
    if (!partCodes || c === missingCode || !(c >= 0 && c < nb) || edges[c] === edges[c + 1]) return base.decode(c, rng, row, ids, partnerCode, fresh);
    const hour = want(partCodes, hourAt, 24);
    const week = want(partCodes, weekAt, 7);
    const month = want(partCodes, monthAt, 12);
    if (hour < 0 && week < 0 && month < 0) return base.decode(c, rng, row, ids, partnerCode, fresh);
    const lo = edges[c];
    const hi = edges[c + 1];
    const loOpen = c > 0 && edges[c - 1] === lo;
    const hiOpen = c !== nb - 1;
    const inside = (x: number): boolean =>
      (loOpen ? x > lo : x >= lo) && (hiOpen ? x < hi : x <= hi) && x >= min && x <= max && (!range || inRange(x, range));
    // The bin's bounds in local ms (the range's too), then its days.
    const a = (Math.max(lo, min, range?.lo ?? -Infinity) * 1000) + shiftMs;
    const b = (Math.min(hi, max, range?.hi ?? Infinity) * 1000) + shiftMs;
    if (!(a <= b)) return base.decode(c, rng, row, ids, partnerCode, fresh);
    const dA = Math.floor(a / 86400000);
    const dB = Math.floor(b / 86400000);
    const dayFits = (d: number): boolean =>
      (week < 0 || weekdayOfDay(d) === week) && (month < 0 || monthOfDay(d) === month) && (!allowed || allowed.has(weekdayOfDay(d)));
    const tryDay = (d: number): string | undefined => {
      const wa = Math.max(a, d * 86400000 + (hour >= 0 ? hour * 3600000 : 0));
      const wb = Math.min(b + 1, d * 86400000 + (hour >= 0 ? (hour + 1) * 3600000 : 86400000));
      if (!(wa < wb)) return undefined;
      for (let t = 0; t < 4; t++) {
        const x = pointIn(wa, wb, c, rng);
        if (Number.isNaN(x)) return undefined;
        const s = (x - shiftMs) / 1000;
        if (inside(s)) return fmt.write(s, stats.offset ?? 0);
      }
      return undefined;
    };
    for (let t = 0; t < DAY_TRIES; t++) {
      const d = dA + rng.int(dB - dA + 1);
      if (!dayFits(d)) continue;
      const v = tryDay(d);
      if (v !== undefined) return v;
    }
    if (dB - dA < DAY_LIST) {
      const days: number[] = [];
      for (let d = dA; d <= dB; d++) if (dayFits(d)) days.push(d);
      for (let t = 0; t < 4 && days.length > 0; t++) {
        const v = tryDay(days[rng.int(days.length)]);
        if (v !== undefined) return v;
      }
    }
    return base.decode(c, rng, row, ids, partnerCode, fresh);
  };
  const { decodeColumn: _column, ...rest } = base;
  return { ...rest, parts: parts.map((p) => p.name), decode } as D;
}

/**
 * `synthd fit`'s line for the parts a metadata adds, per datetime column (`parts as model features:
 * date (hour of day, day of week)`), or undefined without parts.
 */
export function describeParts(meta: Metadata): string | undefined {
  const by = new Map<string, string[]>();
  for (const f of meta.features) {
    const p = meta.column_stats?.[f]?.part_of;
    if (p) (by.get(p.column) ?? by.set(p.column, []).get(p.column)!).push(p.cycle.replace(/_/g, " "));
  }
  if (by.size === 0) return undefined;
  return `parts as model features: ${[...by].map(([c, cycles]) => `${c} (${cycles.join(", ")})`).join(", ")}`;
}
