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
import { Rng } from "../generate/sfc32";
import { inRange, MISSING_KEY, type ColumnCodec, type ColumnScan, type FeatureDecoder, type ValueRange } from "./common";

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

/** Share of rows the two most frequent times of day must hold for the time of day to count as constant. */
export const CONSTANT_CYCLE_SHARE = 0.99;

/**
 * The granularity a datetime column's values really have, where it is coarser than the lattice
 * `stats.granularity` names: values written at one or two times of day (monthly dates at 07:00 or
 * 08:00 UTC, local midnight across a daylight-saving shift) hold the time of day constant, so
 * "day", and "month" when every value's nearest midnight is the 1st of a month. A time of day is
 * constant when its two most frequent values hold {@link CONSTANT_CYCLE_SHARE} of the rows.
 * `values` and `counts` are the column's distinct texts and rows per text (`ColumnScan`).
 * Returns `stats.granularity` otherwise (undefined for a column that is not a datetime with a format).
 */
export function calendarGranularity(
  stats: ColumnStats,
  parse: (text: string) => number | undefined,
  values: readonly string[],
  counts: readonly number[],
): ColumnStats["granularity"] {
  const g = stats.granularity;
  if (stats.type !== "datetime" || (g !== "hour" && g !== "minute" && g !== "second" && g !== "millisecond")) return g;
  const shift = (stats.offset ?? 0) * 60000;
  const times = new Map<number, number>();
  const locals: { ms: number; n: number }[] = [];
  let rows = 0;
  values.forEach((v, id) => {
    const ms = v === "" ? undefined : parse(v);
    if (ms === undefined) return;
    const local = ms + shift;
    const tod = ((local % 86400000) + 86400000) % 86400000;
    times.set(tod, (times.get(tod) ?? 0) + counts[id]);
    locals.push({ ms: local, n: counts[id] });
    rows += counts[id];
  });
  if (rows === 0) return g;
  const top = [...times.values()].sort((a, b) => b - a);
  if ((top[0] ?? 0) + (top[1] ?? 0) < CONSTANT_CYCLE_SHARE * rows) return g;
  // The time of day is a constant offset: each value's date is its nearest midnight.
  let firsts = 0;
  for (const { ms, n } of locals) if (new Date(Math.round(ms / 86400000) * 86400000).getUTCDate() === 1) firsts += n;
  return firsts === rows ? "month" : "day";
}

/**
 * The cycles a datetime column's quantile bins hide: the hour of the day when some interval bin is
 * wider than a day at hour, minute or second granularity; the day of the week when one is wider
 * than a week at day granularity or finer; the month of the year when the values span 2 years or
 * more and a bin is wider than 31 days (month granularity or finer). None for point bins or other kinds.
 * `granularity` is the values' own ({@link calendarGranularity}, default `stats.granularity`): a
 * constant time of day gives no hour part, month starts no hour and no weekday part; month starts
 * written at a time of day get no part at all (the decoder draws month starts at local midnight only,
 * while such a column's bins and catalogs already keep its month starts).
 */
export function hiddenCycles(stats: ColumnStats, granularity: ColumnStats["granularity"] = stats.granularity): DatetimeCycle[] {
  const e = stats.bin_edges;
  const g = stats.granularity;
  if (stats.type !== "datetime" || !e || e.length < 2 || !stats.format || g === undefined || g === "year") return [];
  let widest = 0;
  for (let i = 0; i + 1 < e.length; i++) widest = Math.max(widest, e[i + 1] - e[i]);
  const span = (stats.max ?? e[e.length - 1]) - (stats.min ?? e[0]);
  if (granularity === "month" && g !== "month") return [];
  if (g === "month") return span >= MONTH_MIN_SPAN && widest > CYCLES.month_of_year.span ? ["month_of_year"] : [];
  const out: DatetimeCycle[] = [];
  const timed = granularity === "hour" || granularity === "minute" || granularity === "second";
  if ((g === "hour" || g === "minute" || g === "second") && timed && widest > CYCLES.hour_of_day.span) out.push("hour_of_day");
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
 * `scans[f]`, when given, holds column f's distinct values and counts, read for the values' own
 * granularity ({@link calendarGranularity}); a column without one uses its stats' granularity.
 */
export function cyclicParts(codecs: readonly ColumnCodec[], scans?: readonly (Pick<ColumnScan, "values" | "counts"> | undefined)[]): ColumnCodec[] {
  const taken = new Set(codecs.map((c) => c.name));
  const parts: ColumnCodec[] = [];
  codecs.forEach((codec, f) => {
    if (codec.kind !== "datetime" || !codec.datetime) return;
    const scan = scans?.[f];
    const granularity = scan ? calendarGranularity(codec.stats, datetimeParser(codec.datetime), scan.values, scan.counts) : codec.stats.granularity;
    for (const cycle of hiddenCycles(codec.stats, granularity)) {
      let name = `${codec.name}#${CYCLES[cycle].suffix}`;
      while (taken.has(name)) name += "#";
      if (name.length > MAX_NAME) continue;
      taken.add(name);
      parts.push(partCodec(codec, cycle, name));
    }
  });
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
  // By column_stats, not features: callers may pass a partial metadata (evaluation's options).
  const parts = Object.entries(meta.column_stats ?? {}).filter(([, st]) => isPart(st));
  if (parts.length === 0) return meta;
  const drop = new Set(parts.map(([f]) => f));
  const keep = <T>(r: Record<string, T> | undefined): Record<string, T> | undefined =>
    r && Object.fromEntries(Object.entries(r).filter(([k]) => !drop.has(k)));
  return {
    ...meta,
    ...(meta.features ? { features: meta.features.filter((f) => !drop.has(f)) } : {}),
    ...(meta.cardinalities ? { cardinalities: keep(meta.cardinalities)! } : {}),
    ...(meta.empirical_probs ? { empirical_probs: keep(meta.empirical_probs)! } : {}),
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
  const monthly = stats.granularity === "month";
  const g = (monthly ? "day" : stats.granularity) as FixedGranularity;
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
  /** Month granularity: a month start in local [a, b] of month `m` (0 = January), drawn uniformly, inside the bin. */
  const monthStart = (m: number, a: number, b: number, rng: Rng, inside: (s: number) => boolean): string | undefined => {
    if (m < 0) return undefined;
    const from = new Date(a);
    const found: number[] = [];
    for (let k = 0, t = Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), 1); t <= b; k++, t = Date.UTC(from.getUTCFullYear(), from.getUTCMonth() + k, 1)) {
      const s = (t - shiftMs) / 1000;
      if (t >= a && new Date(t).getUTCMonth() === m && inside(s)) found.push(s);
    }
    return found.length > 0 ? fmt.write(found[rng.int(found.length)], stats.offset ?? 0) : undefined;
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
    if (monthly) return monthStart(month, a, b, rng, inside) ?? base.decode(c, rng, row, ids, partnerCode, fresh);
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

/**
 * What a part says beyond its column's bin, in nats: `oneWay`, the information of the part's
 * distribution against a uniform draw inside each row's bin (`reference`, {@link binCycleShares}:
 * hours never flown), with `oneWayBias`, the plug-in estimator's bias under no difference (Miller,
 * "Note on the bias of information estimates", 1955: (codes - 1) / 2n); `binPair`, the mutual
 * information of the part with its bin, with `binPairNull`, the same with the part's codes shuffled
 * over all rows (the hours of flights barely change from bin to bin); `pairs[g]`, the
 * conditional mutual information I(part; column g | bin), with `pairNull[g]`, the same with the
 * part's codes shuffled among the rows of each bin (a permutation null, exact for sparse tables,
 * where Miller's bias overstates); `pairMarginal[g]`, what the 2-way marginal (part, g) says beyond
 * the bin, KL(P(part, g) || sum_b P(b) P(part | b) P(g | b)), and `pairMarginalNull[g]` the same
 * with the shuffled codes: the conditional mutual information of many rows over sparse bins is
 * mostly its estimator's bias (flights' hour and delay: 0.49 nats, 0.47 shuffled), while the model
 * sees the pair only through its marginal. `codes` are the rows' codes (blank part codes skipped).
 */
export function partInformation(
  part: { codes: ArrayLike<number>; K: number },
  bin: { codes: ArrayLike<number>; K: number },
  reference: Float64Array,
  others: readonly { codes: ArrayLike<number>; K: number }[],
  seed = 1,
): {
  oneWay: number;
  oneWayBias: number;
  binPair: number;
  binPairNull: number;
  pairs: number[];
  pairNull: number[];
  pairMarginal: number[];
  pairMarginalNull: number[];
} {
  const L = part.K;
  const n = part.codes.length;
  const rows: number[] = [];
  for (let r = 0; r < n; r++) if (part.codes[r] < L) rows.push(r);
  const m = rows.length;
  const nb = new Float64Array(bin.K);
  const np = new Float64Array(L);
  const expected = new Float64Array(L);
  for (const r of rows) {
    nb[bin.codes[r]]++;
    np[part.codes[r]]++;
  }
  for (let b = 0; b * L < reference.length; b++) for (let p = 0; p < L; p++) expected[p] += (nb[b] / m) * reference[b * L + p];
  let oneWay = 0;
  for (let p = 0; p < L; p++) if (np[p] > 0) oneWay += (np[p] / m) * Math.log(np[p] / m / Math.max(expected[p], 1e-12));
  // The permuted codes: each bin's part codes shuffled among its rows.
  const rng = new Rng(seed);
  const byBin = new Map<number, number[]>();
  for (const r of rows) (byBin.get(bin.codes[r]) ?? byBin.set(bin.codes[r], []).get(bin.codes[r])!).push(r);
  const shuffled = new Int32Array(n);
  for (const group of byBin.values()) {
    const codes = group.map((r) => part.codes[r]);
    for (let i = codes.length - 1; i > 0; i--) {
      const j = rng.int(i + 1);
      [codes[i], codes[j]] = [codes[j], codes[i]];
    }
    group.forEach((r, i) => (shuffled[r] = codes[i]));
  }
  const conditional = (codes: ArrayLike<number>, g: { codes: ArrayLike<number>; K: number }): number => {
    const Kg = g.K;
    const nbp = new Float64Array(bin.K * L);
    const nbg = new Float64Array(bin.K * Kg);
    const nbpg = new Map<number, number>();
    for (const r of rows) {
      const b = bin.codes[r];
      const key = (b * L + codes[r]) * Kg + g.codes[r];
      nbp[b * L + codes[r]]++;
      nbg[b * Kg + g.codes[r]]++;
      nbpg.set(key, (nbpg.get(key) ?? 0) + 1);
    }
    let info = 0;
    for (const [key, c] of nbpg) {
      const j = key % Kg;
      const bp = (key - j) / Kg;
      const b = Math.floor(bp / L);
      info += (c / m) * Math.log((c * nb[b]) / (nbp[bp] * nbg[b * Kg + j]));
    }
    return info;
  };
  // Information of the pair (part, g) beyond the bin: KL of its joint against the joint the bin
  // implies when part and g are independent given it, Q(p, g) = sum_b n_bp n_bg / (n_b m); the
  // model fits the pair's marginal, so this is what the marginal tells it that the bin's do not.
  const beyondBin = (codes: ArrayLike<number>, g: { codes: ArrayLike<number>; K: number }): number => {
    const Kg = g.K;
    const nbp = new Float64Array(bin.K * L);
    const npg = new Float64Array(L * Kg);
    const nbg = new Map<number, Map<number, number>>();
    for (const r of rows) {
      const b = bin.codes[r];
      const p = codes[r];
      const j = g.codes[r];
      nbp[b * L + p]++;
      npg[p * Kg + j]++;
      const row = nbg.get(b) ?? nbg.set(b, new Map()).get(b)!;
      row.set(j, (row.get(j) ?? 0) + 1);
    }
    const q = new Float64Array(L * Kg);
    for (const [b, row] of nbg) {
      for (let p = 0; p < L; p++) {
        const c = nbp[b * L + p];
        if (c === 0) continue;
        for (const [j, d] of row) q[p * Kg + j] += (c * d) / nb[b];
      }
    }
    let info = 0;
    for (let k = 0; k < npg.length; k++) if (npg[k] > 0) info += (npg[k] / m) * Math.log(npg[k] / q[k]);
    return Math.max(0, info);
  };
  // The part against its own bins: mutual information, and the same with the codes shuffled over all rows.
  const binInfo = (codes: ArrayLike<number>): number => {
    const joint = new Float64Array(bin.K * L);
    for (const r of rows) joint[bin.codes[r] * L + codes[r]]++;
    let info = 0;
    for (let b = 0; b < bin.K; b++) for (let p = 0; p < L; p++) {
      const c = joint[b * L + p];
      if (c > 0) info += (c / m) * Math.log((c * m) / (nb[b] * np[p]));
    }
    return info;
  };
  const pooled = rows.map((r) => part.codes[r]);
  for (let i = pooled.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [pooled[i], pooled[j]] = [pooled[j], pooled[i]];
  }
  const anyRow = new Int32Array(n);
  rows.forEach((r, i) => (anyRow[r] = pooled[i]));
  return {
    oneWay,
    binPair: binInfo(part.codes),
    binPairNull: binInfo(anyRow),
    oneWayBias: (L - 1) / (2 * Math.max(m, 1)),
    pairs: others.map((g) => conditional(part.codes, g)),
    pairNull: others.map((g) => conditional(shuffled, g)),
    pairMarginal: others.map((g) => beyondBin(part.codes, g)),
    pairMarginalNull: others.map((g) => beyondBin(shuffled, g)),
  };
}

/**
 * Per bin of `edges` (seconds since the epoch) and code of `cycle`, the share of the bin's time
 * (local: plus `shift` seconds) at that code, `out[b * length + code]`: what a uniform draw inside
 * the bin gives. A point bin: its instant's code; a bin of more than {@link DAY_LIST} days: uniform.
 */
export function binCycleShares(cycle: DatetimeCycle, edges: readonly number[], shift: number): Float64Array {
  const L = CYCLES[cycle].length;
  const nb = edges.length - 1;
  const out = new Float64Array(nb * L);
  for (let b = 0; b < nb; b++) {
    const lo = edges[b] + shift;
    const hi = edges[b + 1] + shift;
    if (!(hi > lo)) {
      out[b * L + cycleCode(cycle, lo)] = 1;
      continue;
    }
    if ((hi - lo) / 86400 > DAY_LIST) {
      out.fill(1 / L, b * L, (b + 1) * L);
      continue;
    }
    for (let d = Math.floor(lo / 86400); d * 86400 < hi; d++) {
      const a = Math.max(lo, d * 86400);
      const z = Math.min(hi, (d + 1) * 86400);
      if (cycle !== "hour_of_day") out[b * L + cycleCode(cycle, d * 86400)] += (z - a) / (hi - lo);
      else for (let h = 0; h < 24; h++) {
        const w = Math.min(z, d * 86400 + (h + 1) * 3600) - Math.max(a, d * 86400 + h * 3600);
        if (w > 0) out[b * L + h] += w / (hi - lo);
      }
    }
  }
  return out;
}

/** How many times its null (bias, permutation) a part's information must exceed to be kept ({@link informativeParts}). */
export const PART_MIN_RATIO = 2;

/**
 * Nats an information must exceed its null by, besides the ratio, for a part to be kept or a pair
 * sent ({@link informativeParts}): a part and its pairs take a share of the model's fit from the
 * table's own marginals, so a real but small effect does not pay for them (docs/generality.md).
 */
export const PART_MIN_GAIN = 0.05;

/** True when information `x` (nats) exceeds {@link PART_MIN_RATIO} times its `null` and the null by {@link PART_MIN_GAIN}. */
function above(x: number, nullValue: number): boolean {
  return x > PART_MIN_RATIO * nullValue && x - nullValue > PART_MIN_GAIN;
}

/** A part kept by {@link informativeParts} and the table columns it informs given its datetime's bin. */
export interface KeptPart {
  part: ColumnCodec;
  /** Whether the part's distribution changes from bin to bin: then it gets the pair with its datetime. */
  withDatetime: boolean;
  /** Indices into the table's codecs of the columns the part informs given the bin: its 2-way marginals besides its datetime's. */
  informs: number[];
}

/**
 * The parts among `parts` that say something the bins do not ({@link partInformation} over the
 * rows' codes): a distribution unlike a uniform draw inside the bins, or a relation, given the
 * bin, with some other modelled column (conditional mutual information), more than
 * {@link PART_MIN_RATIO} times its null and {@link PART_MIN_GAIN} over it. Each kept part comes
 * with the columns it informs given the bin, column by column, by that test or by what the pair's
 * 2-way marginal says beyond the bin (`pairMarginal`, against its null the same way): the only
 * columns besides its datetime it gets pairs with, since a dependence the bin explains (a trend
 * across the table) adds nothing to the model.
 * `codecs` and `codes` are the table's columns, `partCodes` the parts' codes of the same rows.
 */
export function informativeParts(
  codecs: readonly ColumnCodec[],
  codes: readonly ArrayLike<number>[],
  parts: readonly ColumnCodec[],
  partCodes: readonly ArrayLike<number>[],
): KeptPart[] {
  const kept: KeptPart[] = [];
  parts.forEach((part, k) => {
    const cycle = part.stats.part_of!.cycle;
    const src = codecs.findIndex((c) => c.name === part.column);
    const edges = codecs[src].stats.bin_edges!;
    const reference = binCycleShares(cycle, edges, (codecs[src].stats.offset ?? 0) * 60);
    const others = codecs.flatMap((c, g) => (g !== src && c.kind !== "id" ? [g] : []));
    const info = partInformation(
      { codes: partCodes[k], K: CYCLES[cycle].length },
      { codes: codes[src], K: codecs[src].K },
      reference,
      others.map((g) => ({ codes: codes[g], K: codecs[g].K })),
    );
    const related = (i: number): boolean => above(info.pairs[i], Math.max(info.pairNull[i], info.oneWayBias));
    const marginal = (i: number): boolean => above(info.pairMarginal[i], info.pairMarginalNull[i]);
    if (!(above(info.oneWay, info.oneWayBias) || others.some((_, i) => related(i)))) return;
    kept.push({ part, withDatetime: above(info.binPair, info.binPairNull), informs: others.filter((_, i) => related(i) || marginal(i)) });
  });
  return kept;
}

/**
 * Which pairs of a table's features with `kept` parts appended (features 0 .. F-1 the table's
 * columns, F + k part k) may be 2-way marginals: any two table columns; a part with its datetime
 * when its distribution changes from bin to bin ({@link KeptPart.withDatetime}: a month of bins
 * narrower than a year, not the hour of flights) and with the columns it informs given the bin
 * ({@link KeptPart.informs}); never two parts. A part without a pair is fitted by its 1-way marginal.
 */
export function partPairs(codecs: readonly ColumnCodec[], kept: readonly KeptPart[]): (i: number, j: number) => boolean {
  const F = codecs.length;
  const with_ = kept.map(({ part, withDatetime, informs }) =>
    new Set(withDatetime ? [codecs.findIndex((c) => c.name === part.column), ...informs] : informs));
  return (i, j) => {
    const [a, b] = i < j ? [i, j] : [j, i];
    if (b < F) return true;
    return a < F && with_[b - F].has(a);
  };
}
