/**
 * What the numerical and datetime kinds share: numbers (datetimes: seconds since the Unix epoch)
 * released as bins. {@link binnedCodec}: one point bin per distinct value (keyed by its text, no
 * `bin_edges`) up to `binCap` of them, else at most B = `binCap` bins ({@link quantileEdges}).
 * `bin_edges` e is non-decreasing, each value at most twice, with K_numeric + 1 entries:
 *     bin i = {e_i}                when e_i = e_{i+1} (point bin),
 *     bin i = [e_i, e_{i+1})        otherwise, without e_i when e_i is a point bin, and with
 *                                   e_{i+1} when i is the last bin.
 * {@link binDecoder}: a point bin writes its value, an interval bin draws among the column's
 * {@link Lattice} points inside it and [min, max] (and a seeded range).
 */
import type { ColumnStats } from "../../contract";
import type { Rng } from "../generate/sfc32";
import { nativeLoops } from "../native-loops";
import { badCode, inRange, MISSING_KEY, type ColumnCodec, type ColumnScan, type FeatureDecoder, type ValueRange } from "./common";

let simpleStatistics: typeof import("simple-statistics") | undefined;

/** simple-statistics, loaded when a column is binned (metadata extraction), not when rows are decoded. */
function simpleStats(): typeof import("simple-statistics") {
  return (simpleStatistics ??= require("simple-statistics") as typeof import("simple-statistics"));
}

/** Ascending distinct values `v` with their row counts `c` (a sorted column without its repeats). */
interface Runs {
  v: number[];
  c: number[];
}

/** simple-statistics' `quantileSorted` of the sorted column the runs stand for, without expanding it. */
function quantileOfRuns(runs: Runs, cum: readonly number[], p: number): number {
  const len = cum[cum.length - 1];
  // The value at index i of the expanded column: the first run whose cumulative count exceeds i.
  const at = (i: number): number => {
    let lo = 0;
    let hi = cum.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cum[mid] > i) hi = mid;
      else lo = mid + 1;
    }
    return runs.v[lo];
  };
  const idx = len * p;
  if (p === 1) return at(len - 1);
  if (p === 0) return at(0);
  if (idx % 1 !== 0) return at(Math.ceil(idx) - 1);
  if (len % 2 === 0) return (at(idx - 1) + at(idx)) / 2;
  return at(idx);
}

/**
 * q_j = quantile(x, j/m), j = 0..m (simple-statistics `quantileSorted`); a value spanning two or
 * more consecutive q_j becomes a point bin [v, v], other repeats are dropped.
 */
function repeatedQuantileEdges(runs: Runs, m: number): number[] {
  const cum: number[] = [];
  let total = 0;
  for (const c of runs.c) cum.push((total += c));
  const q: number[] = [];
  for (let j = 0; j <= m; j++) q.push(quantileOfRuns(runs, cum, j / m));
  const edges: number[] = [];
  for (let j = 0; j < q.length; ) {
    let k = j;
    while (k + 1 < q.length && q[k + 1] === q[j]) k++;
    edges.push(q[j]);
    if (k > j) edges.push(q[j]);
    j = k + 1;
  }
  if (edges.length === 1) edges.push(edges[0]);
  return edges;
}

/**
 * Bin edges of a column with many distinct values: a value holding >= 1/B of the rows gets a point
 * bin, the rest m = B - points quantile bins; while the bins exceed B (points between quantile
 * edges), m and then the heavy points are lowered.
 * @param sorted ascending values (length >= 1); @param B max bins (>= 1).
 * @returns edges as in the file header, >= 2 entries.
 */
export function quantileEdges(sorted: ArrayLike<number>, B: number): number[] {
  const runs: Runs = { v: [], c: [] };
  for (let i = 0; i < sorted.length; ) {
    let k = i;
    while (k + 1 < sorted.length && sorted[k + 1] === sorted[i]) k++;
    runs.v.push(sorted[i]);
    runs.c.push(k - i + 1);
    i = k + 1;
  }
  return quantileEdgesOfRuns(runs, B);
}

/** {@link quantileEdges} of the sorted column that `runs` stand for (the same edges, memory O(runs)). */
function quantileEdgesOfRuns(runs: Runs, B: number): number[] {
  const n = runs.c.reduce((s, c) => s + c, 0);
  const all = runs.v.map((v, i) => ({ v, c: runs.c[i] }));
  const heavy = all
    .filter((r) => r.c * B >= n)
    .sort((a, b) => b.c - a.c || a.v - b.v)
    .slice(0, B - 1);
  for (let p = heavy.length; p >= 0; p--) {
    const points = new Set(heavy.slice(0, p).map((r) => r.v));
    const rest: Runs = { v: [], c: [] };
    for (const r of all) {
      if (points.has(r.v)) continue;
      rest.v.push(r.v);
      rest.c.push(r.c);
    }
    if (rest.v.length === 0) continue;
    for (let m = B - p; m >= 1; m--) {
      const merged = [...repeatedQuantileEdges(rest, m), ...[...points].flatMap((v) => [v, v])].sort((a, b) => a - b);
      const edges = merged.filter((v, i) => i < 2 || !(merged[i - 1] === v && merged[i - 2] === v));
      if (edges.length - 1 <= B) return edges;
    }
  }
  return repeatedQuantileEdges(runs, 1);
}

/** Rows up to which a column's mean and deviation come from its values one by one (as before); above, from its distinct values' counts. */
const EXPANDED_ROWS = 1 << 22;

/** Bin of a value under {@link quantileEdges}' convention; -1 outside [e_0, e_last]. */
export function binOf(edges: readonly number[], points: ReadonlySet<number>, v: number): number {
  const last = edges.length - 1;
  if (!(v >= edges[0] && v <= edges[last])) return -1;
  if (points.has(v)) {
    // the point bin of v: the i with e_i = e_{i+1} = v
    let lo = 0;
    let hi = last;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (edges[mid] < v) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
  // number of edges <= v, minus one
  let lo = 0;
  let hi = edges.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (edges[mid] <= v) lo = mid + 1;
    else hi = mid;
  }
  return Math.min(lo - 1, last - 1);
}

/** The values that are point bins under the repeated-edge convention. */
export function pointValues(edges: readonly number[]): Set<number> {
  const s = new Set<number>();
  for (let i = 0; i + 1 < edges.length; i++) if (edges[i] === edges[i + 1]) s.add(edges[i]);
  return s;
}

/**
 * The numerical and datetime code book (file header). `num`: the number of each distinct value id
 * (NaN for blank); `parse`: text -> number for values the real column never had (evaluation).
 */
export function binnedCodec(
  scan: ColumnScan,
  n: number,
  binCap: number,
  kind: "numerical" | "datetime",
  num: number[],
  parse: (v: string) => number | undefined,
  extra: Partial<ColumnStats>,
): ColumnCodec {
  const ids: number[] = [];
  scan.values.forEach((v, id) => {
    if (v !== "") ids.push(id);
  });
  ids.sort((a, b) => num[a] - num[b] || (scan.values[a] < scan.values[b] ? -1 : scan.values[a] > scan.values[b] ? 1 : 0));
  const count = n - scan.missing;
  const runs: Runs = { v: [], c: [] };
  for (const id of ids) {
    const last = runs.v.length - 1;
    if (last >= 0 && runs.v[last] === num[id]) runs.c[last] += scan.counts[id];
    else {
      runs.v.push(num[id]);
      runs.c.push(scan.counts[id]);
    }
  }
  let mean: number;
  let std: number;
  if (count <= EXPANDED_ROWS) {
    const sorted = new Float64Array(count);
    let p = 0;
    runs.v.forEach((v, i) => sorted.fill(v, p, (p += runs.c[i])));
    const arr = sorted as unknown as number[];
    mean = simpleStats().mean(arr);
    std = simpleStats().standardDeviation(arr);
  } else {
    // A table's worth of rows is not expanded: the same moments from the counts (last bits may differ).
    let sum = 0;
    runs.v.forEach((v, i) => (sum += v * runs.c[i]));
    mean = sum / count;
    let squares = 0;
    runs.v.forEach((v, i) => (squares += runs.c[i] * (v - mean) ** 2));
    std = Math.sqrt(squares / count);
  }
  const stats: ColumnStats = {
    type: kind,
    count,
    missing: scan.missing,
    min: runs.v[0],
    max: runs.v[runs.v.length - 1],
    mean,
    std,
    ...extra,
  };
  const mapping: Record<string, number> = {};
  let Knm: number;
  let encodeValue: (v: string) => number;
  if (ids.length <= binCap) {
    const byText = new Map<string, number>();
    const byNumber = new Map<number, number>();
    ids.forEach((id, code) => {
      mapping[scan.values[id]] = code;
      byText.set(scan.values[id], code);
      if (!byNumber.has(num[id])) byNumber.set(num[id], code);
    });
    Knm = ids.length;
    encodeValue = (v) => {
      const c = byText.get(v);
      if (c !== undefined) return c;
      const x = parse(v);
      return x === undefined ? -1 : (byNumber.get(x) ?? -1);
    };
  } else {
    const edges = quantileEdgesOfRuns(runs, binCap);
    const points = pointValues(edges);
    stats.bin_edges = edges;
    Knm = edges.length - 1;
    encodeValue = (v) => {
      const x = parse(v);
      return x === undefined ? -1 : binOf(edges, points, x);
    };
  }
  const missingCode = scan.missing > 0 ? Knm : -1;
  if (missingCode >= 0) mapping[MISSING_KEY] = missingCode;
  return {
    name: scan.name,
    kind,
    K: Knm + (missingCode >= 0 ? 1 : 0),
    missingCode,
    otherCode: -1,
    stats,
    mapping,
    encode: (v) => (v === MISSING_KEY ? missingCode : encodeValue(v)),
  };
}

/** A seed cell's bin ({@link binOf}); a number outside [min, max] goes to the nearest end bin. */
export function seedBin(edges: readonly number[], points: ReadonlySet<number>, x: number): number {
  if (x < edges[0]) return 0;
  if (x > edges[edges.length - 1]) return edges.length - 2;
  return binOf(edges, points, x);
}

/**
 * The values a binned column can be written with: point k (an integer) is `value(k)` (numbers:
 * k * step or k * 10^-decimals; datetimes: the start of the k-th `granularity` unit in `offset`).
 */
export interface Lattice {
  /** The column number of lattice point k (exact: the double nearest the point's true value). */
  value(k: number): number;
  /** Position of x: increasing, k at `value(k)` up to rounding ({@link firstAbove} corrects). */
  index(x: number): number;
  /** Writes lattice point k (numbers: trailing zeros dropped unless `fixed_decimals`). */
  write(k: number): string;
  /** Writes an exact number (a point bin's value). */
  writeExact(x: number): string;
  /**
   * Writes a drawn value with the significant digits the real column writes (`digit_shares`),
   * which may move it off its point: the decoder keeps the text only inside the drawn bin.
   */
  writeDrawn?(x: number): string;
  /** Largest |x| for which `value` and the integer k stay exact (doubles' 2^52 on the finest unit). */
  exactUpTo: number;
  /** Every point an integer written as `String(value(k))`: the decoder may hand over numbers. */
  integer?: boolean;
  /** With `integer`: `value(k)` is exactly `k * unit` (the decoder multiplies, no call). */
  unit?: number;
}

/** Smallest integer k with lattice.value(k) >= x (> x when `open`). */
export function firstAbove(x: number, lattice: Lattice, open: boolean): number {
  let k = Math.ceil(lattice.index(x));
  const ok = (j: number): boolean => (open ? lattice.value(j) > x : lattice.value(j) >= x);
  while (!ok(k)) k++;
  while (ok(k - 1)) k--;
  return k;
}

/** Largest integer k with lattice.value(k) <= x (< x when `open`). */
export function lastBelow(x: number, lattice: Lattice, open: boolean): number {
  let k = Math.floor(lattice.index(x));
  const ok = (j: number): boolean => (open ? lattice.value(j) < x : lattice.value(j) <= x);
  while (!ok(k)) k--;
  while (ok(k + 1)) k++;
  return k;
}

/**
 * Decoder of a binned column over `lattice` (`./index`'s `latticeOf`; undefined: uniform draws).
 * With `range`, interval bins draw only inside it, `codes` lists the bins holding a writable value
 * inside it, and `weights[i]` is the share of bin `codes[i]`'s draws that fall inside.
 */
export function binDecoder(
  f: string,
  K: number,
  e: readonly number[],
  missingCode: number | undefined,
  stats: ColumnStats,
  lattice: Lattice | undefined,
  range?: ValueRange,
): FeatureDecoder & { codes: number[]; weights: number[]; drawNumber?: (c: number, rng: Rng) => number } {
  const nb = e.length - 1;
  const min = stats.min ?? e[0];
  const max = stats.max ?? e[nb];
  const exact = lattice && Math.max(Math.abs(min), Math.abs(max)) < lattice.exactUpTo ? lattice : undefined;
  const codes: number[] = [];
  const weights: number[] = [];
  const keep = (c: number, w: number): void => {
    codes.push(c);
    weights.push(w);
  };
  // Per interval bin, once: its lattice points [first, last] inside [min, max] and the range, so a
  // row costs one draw; holding none, the point nearest its middle (last NaN).
  let points: { first: Float64Array; last: Float64Array } | undefined;
  let kMin = 0;
  let kMax = 0;
  // The lattice span of [min, max] without the range (for the weights).
  let kMin0 = 0;
  let kMax0 = 0;
  if (exact) {
    kMin = kMin0 = firstAbove(min, exact, false);
    kMax = kMax0 = lastBelow(max, exact, false);
    if (range?.lo !== undefined && Number.isFinite(range.lo)) kMin = Math.max(kMin, firstAbove(range.lo, exact, range.loOpen === true));
    if (range?.hi !== undefined && Number.isFinite(range.hi)) kMax = Math.min(kMax, lastBelow(range.hi, exact, range.hiOpen === true));
    points = { first: new Float64Array(nb), last: new Float64Array(nb) };
  }
  for (let c = 0; c < nb; c++) {
    const lo = e[c];
    const hi = e[c + 1];
    if (lo === hi) {
      if (range && inRange(lo, range)) keep(c, 1);
    } else if (exact && points) {
      const first = firstAbove(lo, exact, c > 0 && e[c - 1] === lo);
      const lastK = lastBelow(hi, exact, c !== nb - 1);
      const a = Math.max(first, kMin);
      const b = Math.min(lastK, kMax);
      if (a <= b) {
        [points.first[c], points.last[c]] = [a, b];
        if (range) {
          // Without the range the bin draws over [max(first, kMin0), min(last, kMax0)] (at least its points inside the range).
          const all = Math.max(Math.min(lastK, kMax0) - Math.max(first, kMin0) + 1, b - a + 1);
          keep(c, (b - a + 1) / all);
        }
      } else [points.first[c], points.last[c]] = [Math.min(Math.max(Math.round(exact.index((lo + hi) / 2)), kMin), kMax), NaN];
    } else if (range) {
      const a = Math.max(lo, range.lo ?? -Infinity, min);
      const b = Math.min(hi, range.hi ?? Infinity, max);
      if (a < b || (a === b && inRange(a, range))) {
        const width = Math.min(hi, max) - Math.max(lo, min);
        keep(c, width > 0 ? Math.min(1, Math.max((b - a) / width, Number.MIN_VALUE)) : 1);
      }
    }
  }
  // Column form of an integer lattice; edges in a Float64Array: one element kind for every loop.
  const edges = Float64Array.from(e);
  const decodeColumn: FeatureDecoder["decodeColumn"] = (col, rng, _rowOffset, _ids, _partner, _fresh, arrays) => {
    const n = col.length;
    const values = arrays !== undefined ? arrays.float64(n) : new Float64Array(n);
    const blank = arrays !== undefined ? arrays.uint8(n) : new Uint8Array(n);
    const native = nativeLoops().latticeValues;
    let status: number;
    if (native !== undefined && col instanceof Int32Array) {
      const state = new Int32Array(4);
      rng.saveState(state);
      status = native(col, missingCode, nb, edges, points!.first, points!.last, exact!.unit!, state, values, blank);
      rng.loadState(state);
    } else status = latticeValues(col, missingCode, nb, edges, points!.first, points!.last, exact!.unit!, rng, values, blank);
    if (status < 0) return badCode(f, Number(col[-status - 1]), K);
    if (status > 0) return { kind: "int", values, blank };
    arrays?.give([blank]);
    return { kind: "int", values };
  };
  // An integer lattice's value of code c as a number: `decode`'s text, with the same draws.
  const drawNumber = (c: number, rng: Rng): number => {
    if (!(c >= 0 && c < nb)) return badCode(f, c, K);
    if (e[c] === e[c + 1]) return e[c];
    const a = points!.first[c];
    const b = points!.last[c];
    return (Number.isNaN(b) ? a : a + rng.int(b - a + 1)) * exact!.unit!;
  };
  return {
    name: f,
    K,
    codes,
    weights,
    ...(exact?.integer && exact.unit !== undefined && lattice === exact ? { decodeColumn, drawNumber } : {}),
    decode(c, rng) {
      if (c === missingCode) return "";
      if (!(c >= 0 && c < nb)) return badCode(f, c, K);
      const lo = e[c];
      const hi = e[c + 1];
      if (lo === hi) return lattice ? lattice.writeExact(lo) : String(lo);
      const loPoint = c > 0 && e[c - 1] === lo;
      const last = c === nb - 1;
      const inside = (y: number) => (loPoint ? y > lo : y >= lo) && (last ? y <= hi : y < hi) && (!range || inRange(y, range));
      // Point k with the column's digits where that stays in the bin, else as it is.
      const writePoint = (l: Lattice, k: number): string => {
        const s = l.writeDrawn?.(l.value(k));
        return s !== undefined && inside(Number(s)) ? s : l.write(k);
      };
      if (exact && points) {
        const a = points.first[c];
        const b = points.last[c];
        return writePoint(exact, Number.isNaN(b) ? a : a + rng.int(b - a + 1));
      }
      // No exact lattice: a uniform draw, written rounded to the lattice or with the fewest digits.
      const from = range ? Math.max(lo, range.lo ?? -Infinity) : lo;
      const to = range ? Math.min(hi, range.hi ?? Infinity) : hi;
      let x = from + rng.next() * (to - from);
      if (loPoint && x === lo) x = (from + to) / 2;
      if (lattice) {
        // Too many lattice points for exact integer arithmetic: round the draw to the lattice.
        const s = writePoint(lattice, Math.round(lattice.index(x)));
        if (inside(Number(s))) return s;
      }
      for (let p = 6; p <= 17; p++) {
        const s = x.toPrecision(p);
        const y = Number(s);
        if (inside(y)) return String(y);
      }
      return String(inside(x) ? x : (from + to) / 2);
    },
  };
}

/**
 * The loop of a quantile-binned integer column's `decodeColumn`: per row a point bin's value, a
 * lattice point (value k * unit) drawn among `first[c]` .. `last[c]` (`last` NaN: `first`), or
 * blank. Typed arrays and numbers only, no per-row closure call, so its optimized code survives
 * across columns. Twin of the native `latticeValues` (`../native-loops`; a test holds them equal).
 * @returns the number of blank rows, or -(r + 1) for the first row r whose code is out of range.
 */
export function latticeValues(
  col: ArrayLike<number>,
  missingCode: number | undefined,
  nb: number,
  e: Float64Array,
  first: Float64Array,
  last: Float64Array,
  unit: number,
  rng: Rng,
  values: Float64Array,
  blank: Uint8Array,
): number {
  let blanks = 0;
  for (let r = 0; r < col.length; r++) {
    const c = col[r];
    if (c === missingCode) {
      blank[r] = 1;
      blanks++;
      continue;
    }
    if (!(c >= 0 && c < nb)) return -(r + 1);
    const lo = e[c];
    if (lo === e[c + 1]) values[r] = lo;
    else {
      const a = first[c];
      const b = last[c];
      values[r] = (Number.isNaN(b) ? a : a + rng.int(b - a + 1)) * unit;
    }
  }
  return blanks;
}
