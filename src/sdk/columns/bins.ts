/**
 * What the numerical and datetime kinds share (`./numerical`, `./datetime`): both are numbers
 * (datetimes: seconds since the Unix epoch) released as bins.
 *
 * - codec: {@link binnedCodec}: one point bin per distinct value (keyed by its text) when there are
 *   at most `binCap` of them, else at most B = `binCap` bins from {@link quantileEdges}: heavy
 *   values as point bins (a repeated edge [v, v]), quantile bins for the rest. The convention:
 *     bin i = {e_i}                when e_i = e_{i+1} (point bin),
 *     bin i = [e_i, e_{i+1})        otherwise, without e_i when e_i is a point bin, and with
 *                                   e_{i+1} when i is the last bin
 *   ({@link binOf}, {@link pointValues}).
 * - decode: {@link binDecoder} for quantile-binned columns: a point bin writes its value, an
 *   interval bin draws among the points of the column's {@link Lattice} (the values it can be
 *   written with: `./numerical`'s numbers, `./datetime`'s unit starts) inside the bin, [min, max]
 *   and, for seeded generation, a value range. Point-bin columns decode through their code book
 *   (`./categorical`'s `mappingDecoder`).
 * - seeded: {@link seedBin} gives a seed cell's bin (`../seeded`).
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

/**
 * Quantile edges with repeated-edge point bins: q_j = quantile(x, j/m), j = 0..m
 * (simple-statistics `quantileSorted`); a value that occupies two or more consecutive q_j
 * becomes a point bin [v, v]; other repeats are dropped.
 */
function repeatedQuantileEdges(sorted: ArrayLike<number>, m: number): number[] {
  const x = sorted as unknown as number[];
  const { quantileSorted } = simpleStats();
  const q: number[] = [];
  for (let j = 0; j <= m; j++) q.push(quantileSorted(x, j / m));
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
 * Bin edges of a numerical column with many distinct values (rule in `../metadata`'s module
 * comment): heavy values (mass >= 1/B) become point bins, the rest of the values get quantile
 * bins, and the largest combination with at most B bins is kept (fewer heavy points, then fewer
 * quantile bins, are tried until the bins fit).
 * @param sorted ascending values (length >= 1).
 * @param B      maximum number of bins (>= 1).
 * @returns non-decreasing edges, each value at most twice (twice = point bin), >= 2 entries.
 */
export function quantileEdges(sorted: ArrayLike<number>, B: number): number[] {
  const n = sorted.length;
  const runs: { v: number; c: number }[] = [];
  for (let i = 0; i < n; ) {
    let k = i;
    while (k + 1 < n && sorted[k + 1] === sorted[i]) k++;
    runs.push({ v: sorted[i], c: k - i + 1 });
    i = k + 1;
  }
  const heavy = runs
    .filter((r) => r.c * B >= n)
    .sort((a, b) => b.c - a.c || a.v - b.v)
    .slice(0, B - 1);
  for (let p = heavy.length; p >= 0; p--) {
    const points = new Set(heavy.slice(0, p).map((r) => r.v));
    const restLen = runs.reduce((s, r) => s + (points.has(r.v) ? 0 : r.c), 0);
    if (restLen === 0) continue;
    const rest = new Float64Array(restLen);
    let o = 0;
    for (const r of runs) if (!points.has(r.v)) rest.fill(r.v, o, (o += r.c));
    for (let m = B - p; m >= 1; m--) {
      const merged = [...repeatedQuantileEdges(rest, m), ...[...points].flatMap((v) => [v, v])].sort((a, b) => a - b);
      const edges = merged.filter((v, i) => i < 2 || !(merged[i - 1] === v && merged[i - 2] === v));
      if (edges.length - 1 <= B) return edges;
    }
  }
  return repeatedQuantileEdges(sorted, 1);
}

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
 * Shared body of the numerical and datetime code books: point bins (one per distinct value, keyed
 * by its text) when there are at most `binCap` distinct values, else {@link quantileEdges} bins.
 * @param num   the number of each distinct value id (NaN for the blank value).
 * @param parse text -> number for values the real column never had (evaluation), or undefined.
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
  const sorted = new Float64Array(count);
  let p = 0;
  for (const id of ids) sorted.fill(num[id], p, (p += scan.counts[id]));
  const arr = sorted as unknown as number[];
  const stats: ColumnStats = {
    type: kind,
    count,
    missing: scan.missing,
    min: sorted[0],
    max: sorted[count - 1],
    mean: simpleStats().mean(arr),
    std: simpleStats().standardDeviation(arr),
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
    const edges = quantileEdges(sorted, binCap);
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

/**
 * The bin of a seed cell's number `x` under quantile edges: {@link binOf}, with a number outside
 * the trained [min, max] taken into the nearest end bin.
 */
export function seedBin(edges: readonly number[], points: ReadonlySet<number>, x: number): number {
  if (x < edges[0]) return 0;
  if (x > edges[edges.length - 1]) return edges.length - 2;
  return binOf(edges, points, x);
}

/**
 * The values a binned column can be written with, its lattice: point k (an integer) is the number
 * `value(k)` (numbers: k * step, step = `step` or 10^-decimals; datetimes, in seconds since the
 * epoch: the start of the k-th unit of the column's `granularity` in its own UTC `offset`, a month
 * start or year start for `month` / `year`).
 */
export interface Lattice {
  /** The column number of lattice point k (exact: the double nearest the point's true value). */
  value(k: number): number;
  /**
   * Position of number x on the lattice: increasing, equal to k at `value(k)` (up to rounding,
   * which {@link firstAbove} / {@link lastBelow} correct), between k and k + 1 strictly between.
   */
  index(x: number): number;
  /** Writes lattice point k (numbers: `decimals` decimals, trailing zeros dropped unless `fixed_decimals`). */
  write(k: number): string;
  /** Writes an exact number (a point bin's value). */
  writeExact(x: number): string;
  /** Largest |x| for which `value` and the integer k stay exact (doubles' 2^52 on the finest unit). */
  exactUpTo: number;
  /**
   * True when every point is an integer written as `String(value(k))` and `writeExact(x)` is
   * `String(x)` (numbers with `decimals` 0): the decoder may then hand over numbers, not text.
   */
  integer?: boolean;
  /** With `integer`: `value(k)` is exactly `k * unit` (the column's decoder then multiplies instead of calling `value`). */
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
 * Decoder of a binned column; with `range`, every interval bin draws only among its values inside
 * the range too, `codes` lists the bins holding at least one value the decoder can write inside
 * the range (a point bin: its value is inside; an interval bin: a lattice point inside bin, [min,
 * max] and range, or, without an exact lattice, a non-empty overlap), and `weights[i]` is the share
 * of bin `codes[i]`'s values (as the unrestricted decoder draws them: uniform over its lattice
 * points, or over the bin clipped to [min, max]) that lie inside the range.
 * @param lattice the values the column can be written with (`./index`'s `latticeOf`), or undefined.
 */
export function binDecoder(
  f: string,
  K: number,
  e: readonly number[],
  missingCode: number | undefined,
  stats: ColumnStats,
  lattice: Lattice | undefined,
  range?: ValueRange,
): FeatureDecoder & { codes: number[]; weights: number[] } {
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
  // Per interval bin, once: the lattice points [first, last] it holds inside [min, max] (and the
  // range), so the per-row work is one draw; or, when it holds none, the one nearest its middle
  // (last NaN). With a range, `codes` collects the bins in ascending order on the way.
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
  // Column form (`../batch`) of an integer lattice: the numbers the texts of `decode` spell.
  // The edges as doubles in a typed array: one element kind for every column's loop.
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
  return {
    name: f,
    K,
    codes,
    weights,
    ...(exact?.integer && exact.unit !== undefined && lattice === exact ? { decodeColumn } : {}),
    decode(c, rng) {
      if (c === missingCode) return "";
      if (!(c >= 0 && c < nb)) return badCode(f, c, K);
      const lo = e[c];
      const hi = e[c + 1];
      if (lo === hi) return lattice ? lattice.writeExact(lo) : String(lo);
      const loPoint = c > 0 && e[c - 1] === lo;
      const last = c === nb - 1;
      if (exact && points) {
        const a = points.first[c];
        const b = points.last[c];
        return exact.write(Number.isNaN(b) ? a : a + rng.int(b - a + 1));
      }
      // Without an exact lattice: a uniform draw over the bin (clipped to the range), written with
      // the lattice's rounding or the fewest digits that keep it inside.
      const from = range ? Math.max(lo, range.lo ?? -Infinity) : lo;
      const to = range ? Math.min(hi, range.hi ?? Infinity) : hi;
      let x = from + rng.next() * (to - from);
      if (loPoint && x === lo) x = (from + to) / 2;
      const inside = (y: number) => (loPoint ? y > lo : y >= lo) && (last ? y <= hi : y < hi) && (!range || inRange(y, range));
      if (lattice) {
        // Too many lattice points for exact integer arithmetic: round the draw to the lattice.
        const s = lattice.write(Math.round(lattice.index(x)));
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
 * The column loop of a quantile-binned integer column's `decodeColumn`: per row, a point bin's
 * value, a lattice point drawn uniformly among the bin's (`first[c]` .. `last[c]`, `last` NaN: the
 * one point `first`; point k's value is `k * unit`, `Lattice.unit`), or blank (`blank[r]` = 1) for
 * the missing code. A separate function of typed arrays and numbers, no call per row (a lattice's
 * `value` is another closure per column, which made this loop's call site polymorphic and its
 * optimized code thrown away at each new column), so its optimized code is kept between columns and
 * batches. The compute core's `latticeValues` (`../native-loops`) is its twin, used for Int32Array
 * codes where the addon is loaded; exported for the test that holds the two equal.
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
