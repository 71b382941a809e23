/**
 * The grain of a quantile-binned numerical column beyond one step (`column_stats[f].grain`,
 * contract `NumericalGrain`): a chain of grains g_0 < g_1 < ... (g_{j+1}'s points are points of
 * g_j) and, per bin, the share of values whose coarsest grain is g_j: rounding mixtures (38% of
 * salaries multiples of 100), fractional grains (ages in twelfths: 37.66667), decimal counts
 * (coordinates with 7 or 8 decimals). The model is coarse data (Heitjan & Rubin, "Inference from
 * coarse data via multiple imputation with application to age heaping", JASA 85(410), 1990).
 * {@link grainOf} selects grains forward; {@link grainDecoder} draws a bin's grain by its shares,
 * then a point of it on no coarser grain, so every grain's share comes back (a column's `lattice`
 * of values too: then its points are the listed values on it).
 */
import type { ColumnStats, NumericalGrain } from "../../contract";
import { mix32, type Rng } from "../generate/sfc32";
import { binOf, firstAbove, lastBelow, pointValues, type Lattice } from "./bins";
import { badCode, inRange, type FeatureDecoder, type ValueRange } from "./common";

/** At most this many grains per column (the contract's `MaxItems`). */
export const MAX_GRAINS = 8;

/** Denominators q of the grains 1/q tried: 2 .. 32, 60 * 10^j, 3600 * 10^j (minutes, seconds). */
function fractions(scale: number): number[] {
  const qs = [2, 3, 4, 6, 8, 12, 16, 24, 32];
  for (let t = 1; 60 * t <= scale / 2; t *= 10) qs.push(60 * t, 3600 * t);
  return qs;
}

/** The largest divisor of q of the form 2^a 5^b (the part of 1/q with a finite decimal expansion). */
function decimalPart(q: number): number {
  let r = q;
  while (r % 2 === 0) r /= 2;
  while (r % 5 === 0) r /= 5;
  return q / r;
}

/** A grain: the number `g`; `m` = g * 10^decimals when that is a whole number (a decimal grain). */
interface Grain {
  g: number;
  m?: number;
}

/** Most values a {@link memoWriter} keeps: past it, a new value is written and not kept. */
const WRITER_MEMO = 1 << 17;

/**
 * `write` (a pure function of its value) with its texts kept per value: a grain's drawn values
 * are points of a lattice and repeat, so a repeated value reuses one string instead of
 * formatting a new one (docs/relational.md "Scale, the sample's excess cut").
 */
export function memoWriter(write: (x: number) => string): (x: number) => string {
  const memo = new Map<number, string>();
  return (x) => {
    let s = memo.get(x);
    if (s === undefined) {
      s = write(x);
      if (memo.size < WRITER_MEMO) memo.set(x, s);
    }
    return s;
  };
}

/** {@link memoWriter}s shared by every decoder of the process, by what they write. */
const sharedWriters = new Map<string, (x: number) => string>();

/**
 * The process's {@link memoWriter} of `key`, made by `make` on first use: the grain decoders of
 * one column's cell ranges (one per bin and partner code) share its texts.
 */
export function sharedWriter(key: string, make: () => (x: number) => string): (x: number) => string {
  let w = sharedWriters.get(key);
  if (w === undefined) sharedWriters.set(key, (w = memoWriter(make())));
  return w;
}

/**
 * Writes a number with `d` decimals, trailing zeros dropped down to `minDecimals` unless `fixed`,
 * never `-0`; with `digits`, rounded to that many significant digits first and written in its
 * shortest form (ECMA-262 Number::toString) where that is plain.
 */
export function numberWriter(d: number, fixed: boolean, minDecimals: number, digits?: number): (x: number) => string {
  if (d === 0) return (x) => String(Math.round(x) + 0);
  const keep = fixed ? d : Math.min(minDecimals, d);
  return (x) => {
    let y = x + 0;
    // With `digits`, no more decimals than those digits need (toFixed would print binary noise).
    let dd = d;
    if (digits !== undefined && x !== 0) {
      y = Number(x.toPrecision(digits));
      if (y !== 0) dd = Math.min(d, Math.max(0, digits - 1 - Math.floor(Math.log10(Math.abs(y)))));
    }
    let s = y.toFixed(dd);
    if (digits !== undefined) {
      // The shortest writing of y (as JavaScript prints the doubles of a real column), when plain
      // and within dd decimals: toFixed prints a double's 16th and 17th digits as they fall.
      const short = String(y);
      const dot = short.indexOf(".");
      const sd = dot < 0 ? 0 : short.length - dot - 1;
      if (!/e/i.test(short) && sd <= dd) s = short + (sd === dd ? "" : (dot < 0 ? "." : "") + "0".repeat(dd - sd));
    }
    if (dd < keep) s += (dd === 0 ? "." : "") + "0".repeat(keep - dd);
    else if (keep < dd) {
      const dot = s.length - dd - 1;
      let end = s.length;
      while (end > dot + 1 + keep && s.charCodeAt(end - 1) === 48) end--;
      if (end === dot + 1) end = dot;
      s = s.slice(0, end);
    }
    if (s.charCodeAt(0) === 45 && /^-0(\.0*)?$/.test(s)) s = s.slice(1);
    return s;
  };
}

/** One double's bits, reused by {@link unitHash} (no allocation per cell). */
const HASH_BITS = new Float64Array(1);
const HASH_WORDS = new Uint32Array(HASH_BITS.buffer);

/** A uniform number in [0, 1) that is a fixed function of x's bits (its two words folded, then {@link mix32}). */
function unitHash(x: number): number {
  HASH_BITS[0] = x;
  return mix32((HASH_WORDS[0] ^ Math.imul(HASH_WORDS[1], 0x9e3779b1)) >>> 0) / 2 ** 32;
}

/**
 * A writer of drawn values with `shares[i]` of them rounded to i + 1 significant digits
 * (`digit_shares`), each as {@link numberWriter} writes that many. The digits are a fixed
 * function of the value (a hash of its bits, uniform over values drawn inside a bin), so the
 * writer stays a pure function, as the decoders' shared texts need.
 */
export function digitsWriter(d: number, fixed: boolean, minDecimals: number, shares: readonly number[]): (x: number) => string {
  const cum: number[] = [];
  const writers: ((x: number) => string)[] = [];
  let total = 0;
  shares.forEach((s, i) => {
    if (!(s > 0)) return;
    total += s;
    cum.push(total);
    writers.push(numberWriter(d, fixed, minDecimals, i + 1));
  });
  if (writers.length === 0) return numberWriter(d, fixed, minDecimals);
  return (x) => {
    const u = unitHash(x) * total;
    let j = 0;
    while (j < cum.length - 1 && u >= cum[j]) j++;
    return writers[j](x);
  };
}

/** Half the unit x is written to: 0.5 * 10^-d, or half the last significant digit's if coarser. */
export function halfUnit(x: number, d: number, digits?: number): number {
  const fine = 0.5 * 10 ** -d;
  if (digits === undefined || x === 0) return fine;
  return Math.max(fine, 0.5 * 10 ** (Math.floor(Math.log10(Math.abs(x))) + 1 - digits));
}

/** Whether x is within `half` (half a unit of its writing, {@link halfUnit}) of a multiple of g. */
function onGrain(x: number, g: number, half: number): boolean {
  const y = x / g;
  return Math.abs(y - Math.round(y)) * g <= half * (1 + 1e-6);
}

/** Every point of grain `coarse` is one of grain `fine` (m = 1, or a whole divisor of coarse). */
function includes(fine: Grain, coarse: Grain): boolean {
  if (coarse.g <= fine.g) return false;
  if (fine.m === 1) return true;
  if (fine.m !== undefined && coarse.m !== undefined) return coarse.m % fine.m === 0;
  const r = coarse.g / fine.g;
  return Math.abs(r - Math.round(r)) <= 1e-9 * r;
}

/** The lattice of a grain's points at `d` decimals (fractions' multiples rounded). */
function grainLattice(gr: Grain, d: number, write: (x: number) => string): Lattice {
  const scale = 10 ** d;
  const value =
    gr.m !== undefined
      ? (k: number) => (k * gr.m!) / scale
      : (k: number) => Number((k * gr.g).toFixed(d));
  return {
    value,
    index: gr.m !== undefined ? (x) => (x * scale) / gr.m! : (x) => x / gr.g,
    write: (k) => write(value(k)),
    writeExact: (x) => write(x),
    exactUpTo: 2 ** 52 / scale,
  };
}

/** An interval bin's value range clipped to [min, max], with its open ends (`./bins`' convention). */
interface BinSpan {
  lo: number;
  hi: number;
  loOpen: boolean;
  hiOpen: boolean;
}

/** Spans of the interval bins of `e` inside [min, max]; undefined for point bins. */
function binSpans(e: readonly number[], min: number, max: number): (BinSpan | undefined)[] {
  const nb = e.length - 1;
  return Array.from({ length: nb }, (_, c) => {
    if (e[c] === e[c + 1]) return undefined;
    let [lo, hi, loOpen, hiOpen] = [e[c], e[c + 1], c > 0 && e[c - 1] === e[c], c !== nb - 1];
    if (min > lo) [lo, loOpen] = [min, false];
    if (max < hi) [hi, hiOpen] = [max, false];
    return { lo, hi, loOpen, hiOpen };
  });
}

/** Lattice points of `L` in a span (and a range), first and last index; last < first when none. */
function pointsIn(L: Lattice, s: BinSpan, range?: ValueRange): [number, number] {
  let a = firstAbove(s.lo, L, s.loOpen);
  let b = lastBelow(s.hi, L, s.hiOpen);
  if (range?.lo !== undefined && Number.isFinite(range.lo)) a = Math.max(a, firstAbove(range.lo, L, range.loOpen === true));
  if (range?.hi !== undefined && Number.isFinite(range.hi)) b = Math.min(b, lastBelow(range.hi, L, range.hiOpen === true));
  return [a, b];
}

/** Whether x lies in a span (its open ends left out). */
function inSpan(x: number, s: BinSpan): boolean {
  return (s.loOpen ? x > s.lo : x >= s.lo) && (s.hiOpen ? x < s.hi : x <= s.hi);
}

/** Whether x, written at `d` decimals (`digits` significant ones), is a point of grain `gr`. */
function isOn(gr: Grain, x: number, d: number, digits: number | undefined): boolean {
  if (gr.m !== undefined) {
    const k = Math.round(x * 10 ** d);
    return Number.isSafeInteger(k) && k % gr.m === 0;
  }
  return onGrain(x, gr.g, digits === undefined ? 0.5 * 10 ** -d : halfUnit(x, d, digits));
}

/** Number of points from the pair of {@link pointsIn}. */
const countOf = ([a, b]: [number, number]): number => Math.max(0, b - a + 1);

/** Rounds a share for the metadata (6 decimals). */
const roundShare = (x: number): number => Math.round(x * 1e6) / 1e6;

/**
 * The grains of a quantile-binned numerical column. Candidates coarser than the finest grain g_0
 * (`step`, else 10^-decimals) and holding only its points: r * 10^e (r in 1, 2, 2.5, 5) up to
 * max(|min|, |max|), and 1/q ({@link fractions}) at least 2 writing units wide, with no multiple
 * on a rounding tie at `decimals`. A value is on a grain within {@link halfUnit} of a multiple.
 * Forward selection over interval-bin values: the candidate whose real count most exceeds what
 * the decoder would write with the chain so far joins, if comparable with every grain in it and
 * the excess is >= 3 values, 0.5% and 4 binomial sd. At most {@link MAX_GRAINS}.
 * With `listed` (the column's `lattice` of values), the decoder draws among those values only,
 * so a grain's points in a bin are the listed values on it: a grain joins when the real values
 * are on it more often than a uniform draw of the listed values would be (speeds listed on the
 * integers that bunch on multiples of 5).
 * @param xs distinct numbers (NaN skipped), `counts` rows per entry, `stats` the column's stats;
 *   `candidates`, when given, the grains tried instead of round numbers and fractions (a clock's
 *   5, 15 and 30 minutes in seconds).
 * @returns undefined when one grain says all, no interval bin, or values too large. Never throws.
 */
export function grainOf(
  xs: ArrayLike<number>,
  counts: ArrayLike<number>,
  stats: ColumnStats,
  listed?: readonly number[],
  candidates?: readonly number[],
): NumericalGrain | undefined {
  const e = stats.bin_edges;
  const d = stats.decimals;
  if (!e || e.length < 2 || d === undefined || stats.min === undefined || stats.max === undefined) return undefined;
  const scale = 10 ** d;
  const half = 0.5 / scale;
  const nb = e.length - 1;
  const points = pointValues(e);
  const spans = binSpans(e, stats.min, stats.max);
  const baseM = stats.step !== undefined ? Math.round(stats.step * scale) : 1;
  if (!(baseM >= 1)) return undefined;
  const base: Grain = { g: baseM / scale, m: baseM };
  const maxAbs = Math.max(Math.abs(stats.min), Math.abs(stats.max));

  // Candidate grains.
  const cands: Grain[] = [];
  const seen = new Set<number>();
  const addDecimal = (m: number): void => {
    if (!Number.isSafeInteger(m) || m <= baseM || m % baseM !== 0 || m / scale > maxAbs || seen.has(m)) return;
    seen.add(m);
    cands.push({ g: m / scale, m });
  };
  if (candidates) for (const g of candidates) addDecimal(Math.round(g * scale));
  else {
    for (let p = 0; 10 ** p / scale <= maxAbs && p < 30; p++) {
      const t = 10 ** p;
      addDecimal(t);
      addDecimal(2 * t);
      if (p > 0) addDecimal(25 * 10 ** (p - 1));
      addDecimal(5 * t);
    }
    for (const q of fractions(scale)) {
      if (1 / q < 2 / scale) continue;
      if (Number.isSafeInteger(scale) && scale % q === 0) addDecimal(scale / q);
      // Only when no multiple falls on a rounding tie (0.125 at 2 decimals: 0.12 or 0.13).
      else if (baseM === 1 && scale % decimalPart(q) === 0) cands.push({ g: 1 / q });
    }
  }

  // The values in interval bins: per candidate and bin, how many are on it.
  const total = new Float64Array(nb);
  const on = cands.map(() => new Float64Array(nb));
  const decimal = cands.flatMap((gr, i) => (gr.m !== undefined ? [i] : []));
  const decM = decimal.map((i) => cands[i].m!);
  const fraction = cands.flatMap((gr, i) => (gr.m === undefined ? [i] : []));
  let n = 0;
  for (let v = 0; v < xs.length; v++) {
    const x = xs[v];
    const count = counts[v];
    if (Number.isNaN(x) || !(count > 0)) continue;
    const c = binOf(e, points, x);
    if (c < 0 || !spans[c]) continue;
    const k = Math.round(x * scale);
    if (!Number.isSafeInteger(k)) return undefined;
    total[c] += count;
    n += count;
    for (let t = 0; t < decM.length; t++) if (k % decM[t] === 0) on[decimal[t]][c] += count;
    const h = stats.digits === undefined ? half : halfUnit(x, d, stats.digits);
    for (const i of fraction) if (onGrain(x, cands[i].g, h)) on[i][c] += count;
  }
  if (n === 0) return undefined;

  // Lattice points per grain and bin (what the decoder draws among).
  const write = numberWriter(d, false, 0);
  // The interval bin of each listed value inside [min, max] (-1: none).
  const listedBin = (listed ?? []).map((x) => {
    const c = binOf(e, points, x);
    return c >= 0 && spans[c] && inSpan(x, spans[c]!) ? c : -1;
  });
  const latticeCount = (gr: Grain): Float64Array => {
    if (listed) {
      const out = new Float64Array(nb);
      listed.forEach((x, i) => {
        if (listedBin[i] >= 0 && isOn(gr, x, d, stats.digits)) out[listedBin[i]]++;
      });
      return out;
    }
    const L = grainLattice(gr, d, write);
    return Float64Array.from(spans, (s) => (s ? countOf(pointsIn(L, s)) : 0));
  };
  const baseCount = latticeCount(base);
  const pointCounts: (Float64Array | undefined)[] = cands.map(() => undefined);
  const countsOf = (i: number): Float64Array => (i < 0 ? baseCount : (pointCounts[i] ??= latticeCount(cands[i])));
  const grainOfIdx = (i: number): Grain => (i < 0 ? base : cands[i]);
  const onOf = (i: number): Float64Array => (i < 0 ? total : on[i]);

  // Forward selection; the chain holds candidate indices (-1: the finest grain), ascending.
  const chain: number[] = [-1];
  const realOn = on.map((a) => a.reduce((s, v) => s + v, 0));
  while (chain.length < MAX_GRAINS) {
    let best = -1;
    let bestExcess = 0;
    let bestNeed = 0;
    cands.forEach((gr, i) => {
      if (chain.includes(i)) return;
      if (!chain.every((j) => includes(grainOfIdx(j), gr) || includes(gr, grainOfIdx(j)))) return;
      let expected = 0;
      const N = countsOf(i);
      for (let j = 0; j < chain.length; j++) {
        const cur = chain[j];
        const next = j + 1 < chain.length ? chain[j + 1] : undefined;
        const cls = onOf(cur);
        const above = next === undefined ? undefined : onOf(next);
        if (includes(gr, grainOfIdx(cur))) {
          for (let c = 0; c < nb; c++) expected += cls[c] - (above ? above[c] : 0);
          continue;
        }
        if (next !== undefined && includes(grainOfIdx(next), gr)) continue;
        const Nc = countsOf(cur);
        const Nn = next === undefined ? undefined : countsOf(next);
        for (let c = 0; c < nb; c++) {
          const C = cls[c] - (above ? above[c] : 0);
          const denom = Nc[c] - (Nn ? Nn[c] : 0);
          if (C > 0 && denom > 0) expected += (C * Math.max(0, N[c] - (Nn ? Nn[c] : 0))) / denom;
        }
      }
      const excess = realOn[i] - expected;
      const p = Math.min(1, Math.max(0, expected / n));
      const need = Math.max(3, 0.005 * n, 4 * Math.sqrt(n * p * (1 - p)));
      if (excess >= need && excess - need > bestExcess - bestNeed) [best, bestExcess, bestNeed] = [i, excess, need];
    });
    if (best < 0) break;
    chain.push(best);
    chain.sort((a, b) => grainOfIdx(a).g - grainOfIdx(b).g);
  }

  // Class counts per bin: on grain j and on no coarser one of the chain.
  const classes = chain.map((cur, j) => {
    const cls = onOf(cur);
    const above = j + 1 < chain.length ? onOf(chain[j + 1]) : undefined;
    return Float64Array.from(cls, (v, c) => v - (above ? above[c] : 0));
  });
  const sum = (a: Float64Array): number => a.reduce((s, v) => s + v, 0);
  if (classes.length > 1 && sum(classes[0]) === 0) {
    chain.shift();
    classes.shift();
  }
  if (chain.length === 1 && chain[0] === -1) return undefined;
  const m = chain.length;
  const binShares = new Array<number>(nb * m).fill(0);
  for (let c = 0; c < nb; c++) {
    if (total[c] > 0) for (let j = 0; j < m; j++) binShares[c * m + j] = roundShare(classes[j][c] / total[c]);
  }
  return {
    steps: chain.map((i) => grainOfIdx(i).g),
    shares: classes.map((a) => roundShare(sum(a) / n)),
    bin_shares: binShares,
  };
}

/** `1/12` for a fractional grain, else the number (`describeColumns`). */
function grainText(g: number, d: number): string {
  const m = g * 10 ** d;
  if (Math.abs(m - Math.round(m)) <= 1e-9 * m) return String(Number(g.toPrecision(12)));
  const q = Math.round(1 / g);
  return Math.abs(1 / g - q) <= 1e-9 * q ? `1/${q}` : String(Number(g.toPrecision(6)));
}

/** `describeColumns`' words for a grain: `grain 100 (38%), 50 (9%), 1 (53%)`, coarsest first. */
export function describeGrain(grain: NumericalGrain, decimals: number): string {
  const pct = (x: number): string => (x > 0 && x < 0.005 ? "<1%" : `${Math.round(x * 100)}%`);
  const parts = grain.steps.map((g, j) => `${grainText(g, decimals)} (${pct(grain.shares[j])})`).reverse();
  return `grain ${parts.join(", ")}`;
}

/**
 * Rounds a number a rule computed (a ratio band's total, a drawn difference) to the column's
 * grain (`stats.grain`): a grain drawn by the shares of the bin the number falls in (the column's
 * shares outside every bin), the number moved to that grain's nearest point, else its other
 * neighbour, else the next finer grain's, the first that `accept` takes. So a total derived from
 * its parts is written at the real column's mixture of roundings (36% of volumes multiples of
 * 5,000), as the decoder writes a drawn value ({@link grainDecoder}).
 * @returns a rounder giving the value (undefined when no point is accepted), or undefined when the
 *   column keeps no grain.
 */
export function grainRounder(stats: ColumnStats): ((x: number, rng: Rng, accept: (y: number) => boolean) => number | undefined) | undefined {
  const grain = stats.grain;
  const d = stats.decimals;
  const m = grain?.steps.length ?? 0;
  if (!grain || d === undefined || m < 2 || grain.shares.length !== m) return undefined;
  const e = stats.bin_edges;
  const perBin = e !== undefined && e.length >= 2 && grain.bin_shares.length === (e.length - 1) * m;
  const points = perBin ? pointValues(e!) : undefined;
  const scale = 10 ** d;
  return (x, rng, accept) => {
    let [shares, off] = [grain.shares as readonly number[], 0];
    const c = perBin ? binOf(e!, points!, x) : -1;
    if (c >= 0 && grain.bin_shares.slice(c * m, c * m + m).some((v) => v > 0)) [shares, off] = [grain.bin_shares, c * m];
    let total = 0;
    for (let t = 0; t < m; t++) total += shares[off + t];
    let u = rng.next() * total;
    let j = 0;
    while (j < m - 1 && u >= shares[off + j]) u -= shares[off + j++];
    for (; j >= 0; j--) {
      const k = x / grain.steps[j];
      const near = Math.round(k);
      for (const kk of [near, near > k ? near - 1 : near + 1]) {
        const y = Math.round(kk * grain.steps[j] * scale) / scale;
        if (accept(y)) return y;
      }
    }
    return undefined;
  };
}

/**
 * Decoder of a numerical column with a `grain`: an interval bin draws grain j with probability
 * proportional to `bin_shares[b, j] * (its points in the range) / (its points in the bin)`, then
 * one of those points uniformly; other codes and bins no grain serves go to `plain` (`./bins`'
 * `binDecoder`, same `range`). With a `lattice` of values, a grain's points are the listed values
 * on it and on no coarser grain. `codes` / `weights` as `binDecoder`'s; `writeValue`, when given,
 * writes a drawn number instead of the column's number writer (a datetime's local seconds as text;
 * then no column form).
 * @returns undefined when the grain does not fit the column (the caller then uses `plain`).
 */
export function grainDecoder(
  f: string,
  K: number,
  e: readonly number[],
  missingCode: number | undefined,
  stats: ColumnStats,
  plain: FeatureDecoder & { codes: number[]; weights: number[] },
  range?: ValueRange,
  writeValue?: (x: number) => string,
): (FeatureDecoder & { codes: number[]; weights: number[] }) | undefined {
  const grain = stats.grain;
  const d = stats.decimals;
  const nb = e.length - 1;
  if (!grain || d === undefined || nb < 1) return undefined;
  const m = grain.steps.length;
  if (m < 1 || grain.shares.length !== m || grain.bin_shares.length !== nb * m) return undefined;
  const min = stats.min ?? e[0];
  const max = stats.max ?? e[nb];
  const scale = 10 ** d;
  if (!(Math.max(Math.abs(min), Math.abs(max)) < 2 ** 52 / scale)) return undefined;
  const grains: Grain[] = grain.steps.map((g) => {
    const mm = Math.round(g * scale);
    return mm >= 1 && Math.abs(g * scale - mm) <= 1e-9 * mm ? { g, m: mm } : { g };
  });
  for (let j = 0; j + 1 < m; j++) if (!includes(grains[j], grains[j + 1])) return undefined;
  const fixed = stats.fixed_decimals === true && d > 0;
  const minDecimals = stats.min_decimals ?? 0;
  const write = writeValue ?? sharedWriter(`number\u0000${d}\u0000${fixed}\u0000${minDecimals}\u0000${stats.digits}`, () => numberWriter(d, fixed, minDecimals, stats.digits));
  const lattices = grains.map((gr) => grainLattice(gr, d, write));
  const half = 0.5 / scale;
  // Whether point k of grain j is a point of grain j + 1 (then it belongs to that grain's share).
  const coarser = grains.map((gr, j): ((k: number) => boolean) | undefined => {
    const next = grains[j + 1];
    if (!next) return undefined;
    if (gr.m !== undefined && next.m !== undefined) {
      const r = next.m / gr.m;
      return (k) => k % r === 0;
    }
    if (gr.m === undefined) {
      const r = Math.round(next.g / gr.g);
      return (k) => k % r === 0;
    }
    const L = lattices[j];
    return (k) => onGrain(L.value(k), next.g, half);
  });

  const spans = binSpans(e, min, max);
  const first = new Float64Array(nb * m);
  const last = new Float64Array(nb * m);
  const cums: (Float64Array | undefined)[] = new Array(nb);
  // Per bin and grain, the points to draw among when few (indices k), or the listed values.
  const small: (Float64Array | undefined)[] = new Array(nb * m);
  const values: (Float64Array | undefined)[] = new Array(nb * m);
  const binWeight = new Float64Array(nb);
  const listed = stats.lattice && stats.lattice.length >= 2 ? [...new Set(stats.lattice.filter(Number.isFinite))].sort((a, b) => a - b) : undefined;
  const points = pointValues(e);
  // Per listed value, its bin and the coarsest grain it is on (-1: on none, never drawn).
  const listedBin = (listed ?? []).map((x) => {
    const c = binOf(e, points, x);
    return c >= 0 && spans[c] && inSpan(x, spans[c]!) ? c : -1;
  });
  const listedClass = (listed ?? []).map((x) => {
    let j = -1;
    while (j + 1 < m && isOn(grains[j + 1], x, d, stats.digits)) j++;
    return j;
  });
  for (let c = 0; c < nb; c++) {
    const s = spans[c];
    if (!s) continue;
    // Points of class j (on grain j, on no coarser one) in the bin, and inside the range.
    const cF = new Float64Array(m);
    const cR = new Float64Array(m);
    if (listed) {
      const inside: number[][] = grains.map(() => []);
      listed.forEach((x, i) => {
        const j = listedClass[i];
        if (listedBin[i] !== c || j < 0) return;
        cF[j]++;
        if (!range || inRange(x, range)) inside[j].push(x);
      });
      inside.forEach((xs, j) => {
        cR[j] = xs.length;
        if (xs.length > 0) values[c * m + j] = Float64Array.from(xs);
      });
    } else {
      const full = lattices.map((L) => pointsIn(L, s));
      const inside = range ? lattices.map((L) => pointsIn(L, s, range)) : full;
      for (let j = 0; j < m; j++) {
        cF[j] = countOf(full[j]) - (j + 1 < m ? countOf(full[j + 1]) : 0);
        cR[j] = countOf(inside[j]) - (j + 1 < m ? countOf(inside[j + 1]) : 0);
        [first[c * m + j], last[c * m + j]] = inside[j];
        const [a, b] = inside[j];
        if (cR[j] > 0 && b - a < 64) {
          const ks: number[] = [];
          for (let k = a; k <= b; k++) if (!coarser[j]?.(k)) ks.push(k);
          small[c * m + j] = Float64Array.from(ks);
        }
      }
    }
    const cum = new Float64Array(m);
    let acc = 0;
    let shareSum = 0;
    for (let j = 0; j < m; j++) {
      const p = cF[j] > 0 ? grain.bin_shares[c * m + j] : 0;
      shareSum += p;
      if (p > 0 && cR[j] > 0) acc += (p * cR[j]) / cF[j];
      cum[j] = acc;
    }
    if (acc > 0 && shareSum > 0) {
      cums[c] = cum;
      binWeight[c] = acc / shareSum;
    }
  }
  const codes: number[] = [];
  const weights: number[] = [];
  if (range) {
    const plainWeight = new Map(plain.codes.map((c, i) => [c, plain.weights[i]]));
    for (let c = 0; c < nb; c++) {
      const w = cums[c] ? binWeight[c] : plainWeight.get(c);
      if (w !== undefined && w > 0) {
        codes.push(c);
        weights.push(Math.min(1, w));
      }
    }
  }

  /** The value drawn for interval bin c (served by the grain): grain j by its share, then a point of it. */
  const draw = (c: number, cum: Float64Array, rng: Rng): number => {
    const j = rng.pickCumulative(cum);
    const xs = values[c * m + j];
    if (xs) return xs[rng.int(xs.length)];
    const list = small[c * m + j];
    if (list) return lattices[j].value(list[rng.int(list.length)]);
    const a = first[c * m + j];
    const span = last[c * m + j] - a + 1;
    const skip = coarser[j];
    let k = a + rng.int(span);
    while (skip?.(k)) k = a + rng.int(span);
    return lattices[j].value(k);
  };
  const decode = (c: number, rng: Rng, row: number): string => {
    const cum = c >= 0 && c < nb ? cums[c] : undefined;
    if (!cum) return plain.decode(c, rng, row);
    return write(draw(c, cum, rng));
  };
  // Integers (decimals 0): the column form the text spells, as `./bins`' integer lattices give it.
  const decodeColumn: FeatureDecoder["decodeColumn"] = (col, rng, rowOffset, _ids, _partner, _fresh, arrays) => {
    const n = col.length;
    const out = arrays !== undefined ? arrays.float64(n) : new Float64Array(n);
    const blank = arrays !== undefined ? arrays.uint8(n) : new Uint8Array(n);
    let blanks = 0;
    for (let r = 0; r < n; r++) {
      const c = col[r];
      if (c === missingCode) {
        blank[r] = 1;
        blanks++;
        continue;
      }
      if (!(c >= 0 && c < nb)) return badCode(f, c, K);
      const cum = cums[c];
      if (cum) out[r] = draw(c, cum, rng) + 0;
      else out[r] = Number(plain.decode(c, rng, rowOffset + r));
    }
    if (blanks > 0) return { kind: "int", values: out, blank };
    arrays?.give([blank]);
    return { kind: "int", values: out };
  };
  return { name: f, K, codes, weights, decode, ...(d === 0 && !writeValue ? { decodeColumn } : {}) };
}
