/**
 * The numerical kind: every non-blank value a finite decimal number (`./common`'s `isNumeric`),
 * released as bins (`./bins`) with the column's grain in `column_stats` ({@link numericalCodec});
 * decoded over {@link numberLattice} or, with a `grain`, by `./numerical-grain`.
 */
import type { ColumnStats } from "../../contract";
import { DataError } from "../errors";
import { binnedCodec, type Lattice } from "./bins";
import { describeGrain, digitsWriter, grainOf, numberWriter } from "./numerical-grain";
import { decimalsOf, isNumeric, type ColumnCodec, type ColumnScan, type ColumnType } from "./common";
import { NumberFormat } from "./number-format";

/** Greatest common divisor of two non-negative safe integers (Euclid; exact on doubles below 2^53). */
function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

/**
 * The largest number every value is a whole multiple of, when coarser than 10^-decimals (masses
 * in 25 g -> 25, half points -> 0.5): gcd of the values scaled by 10^decimals. Exact: one value off
 * the grain means no step (guessing "noise" would invent a grain). Needs >= 3 distinct values
 * (two share their difference's divisors) and scaled values within ±2^53.
 * @returns the step (> 10^-decimals), or undefined. Never throws.
 */
export function stepOf(values: Iterable<number>, decimals: number): number | undefined {
  const scale = 10 ** decimals;
  const seen = new Set<number>();
  let g = 0;
  for (const x of values) {
    const k = Math.round(x * scale);
    if (!Number.isSafeInteger(k)) return undefined;
    seen.add(k);
    g = gcd(Math.abs(k), g);
    if (g === 1) return undefined;
  }
  return seen.size >= 3 && g > 1 ? g / scale : undefined;
}

const PLAIN_DECIMALS_RE = /^[+-]?\d*\.(\d+)$/;
const PLAIN_INTEGER_RE = /^[+-]?\d+$/;

/** A decimal number in exponent notation (`9.152328872317398e-7`, `1E5`). */
const EXPONENT_RE = /^[+-]?(\d+\.?\d*|\.\d+)[eE][+-]?\d+$/;

/**
 * Significant digits of a value in plain or exponent notation (`0.0481` 3, `104.5698933` 10,
 * `1200` 4, `9.15e-7` 3; `0` 1): its mantissa's digits, leading zeros left out.
 */
function significantDigits(v: string): number {
  const digits = v.replace(/[eE].*$/, "").replace(/[^0-9]/g, "").replace(/^0+/, "");
  return Math.max(1, digits.length);
}

/** Relative distance within which a double's 16th and 17th digits are noise of a shorter number (2 ulps). */
const NOISE_ULPS = 2 * Number.EPSILON;

/**
 * The significant digits of a value written with 16 or more (`14.201000213599999`,
 * `0.30000000000000004`) when it is within 2 ulps of its rounding to 14 or fewer: the sum or
 * quotient of shorter numbers printed in full (12, 1). Undefined otherwise (a quotient of two
 * integers is so by chance in about 3% of values, hence {@link numericalCodec}'s column-level test).
 */
export function noiseFreeDigits(v: string): number | undefined {
  if (significantDigits(v) < 16) return undefined;
  const x = Number(v);
  if (!Number.isFinite(x) || x === 0) return undefined;
  for (let q = 1; q <= 14; q++) {
    if (Math.abs(x - Number(x.toPrecision(q))) <= NOISE_ULPS * Math.abs(x)) return q;
  }
  return undefined;
}

/** Decimals of a value written in plain notation (`3` 0, `3.10` 2), or undefined for another notation (`3e4`). */
function plainDecimals(v: string): number | undefined {
  if (PLAIN_INTEGER_RE.test(v)) return 0;
  const m = PLAIN_DECIMALS_RE.exec(v);
  return m === null ? undefined : m[1].length;
}

/**
 * `digit_shares` from rows per significant digits written: shares of the values rounded to 1 ..
 * `digits` digits before their trailing zeros were dropped (16 and more digits: all at `digits`,
 * the double as printed), or undefined when all are at `digits` (the cap alone writes them).
 */
function digitSharesOf(written: ReadonlyMap<number, number>, digits: number): number[] | undefined {
  let total = 0;
  for (const [p, c] of written) if (p <= digits) total += c;
  if (total === 0) return undefined;
  // A value rounded to p digits is written with p - j when its last j digits are zeros (chance
  // 0.9 * 10^-j; all p - 1 after the first: 10^-(p-1)): the rounding's shares are found from the
  // longest down, each taking back the shorter writings it makes.
  // Writings of 16 or 17 digits are a double as printed (its shortest form, not rounded): they
  // are one class, written as the column's `digits` write them.
  const rest = Array.from({ length: digits }, (_, i) => (written.get(i + 1) ?? 0) / total);
  const shares = new Array<number>(digits).fill(0);
  let top = digits;
  if (digits >= 16) {
    for (let p = 16; p <= digits; p++) shares[digits - 1] += rest[p - 1];
    top = 15;
  }
  for (let p = top; p >= 1; p--) {
    const t = Math.max(0, rest[p - 1]) / (p > 1 ? 0.9 : 1);
    shares[p - 1] = t;
    for (let q = p - 1; q >= 1; q--) rest[q - 1] -= t * (q > 1 ? 0.9 : 1) * 10 ** -(p - q);
  }
  const sum = shares.reduce((a, b) => a + b, 0);
  return shares[digits - 1] >= sum * (1 - 1e-9) ? undefined : shares.map((x) => x / sum);
}

/**
 * Numerical code book ({@link binnedCodec}, population `mean`/`std`); `column_stats` adds
 * `integer`, `decimals` (the most written, <= 20), `fixed_decimals` (all plain with exactly
 * `decimals` > 0: trailing zeros kept), `min_decimals` (all plain with at least that many > 0, some
 * more), `digits` (all in plain or exponent notation within that many significant digits, a long
 * integer part or a small exponent cutting some value's decimals; a double's noise not counted when most
 * long writings are noise, {@link noiseFreeDigits}), `digit_shares` (with `digits`, the shares of values written with each
 * number of significant digits, when not all with `digits`) and, for quantile bins, `step`
 * ({@link stepOf}) and `grain` ({@link grainOf}).
 */
export function numericalCodec(scan: ColumnScan, n: number, binCap: number, k = 1): ColumnCodec {
  const num: number[] = scan.values.map((v) => (v === "" ? NaN : Number(v)));
  let decimals = 0;
  let integer = true;
  let distinct = 0;
  // The fewest and most decimals of the plain writings; NaN once a value is in another notation.
  let fewest = Infinity;
  let most = 0;
  // The most significant digits of a plain or exponent writing, and whether it cuts some value's
  // decimals; `other`: some value in neither notation.
  let digits = 0;
  let capped = false;
  let other = false;
  // Per value, its significant digits as written and as measured (a double's noise and a whole
  // number's trailing zeros left out); how many values
  // are written with 16 or more, and how many of those are noise of 14 or fewer.
  const sig = new Int32Array(scan.values.length);
  const shorter = new Int32Array(scan.values.length);
  let long = 0;
  let noisy = 0;
  scan.values.forEach((v, id) => {
    if (v === "") return;
    distinct++;
    decimals = Math.max(decimals, decimalsOf(v));
    if (!Number.isInteger(num[id])) integer = false;
    const p = plainDecimals(v);
    fewest = p === undefined ? NaN : Math.min(fewest, p);
    most = p === undefined ? NaN : Math.max(most, p);
    if (p !== undefined || EXPONENT_RE.test(v)) {
      const w = significantDigits(v);
      const q = w >= 16 ? noiseFreeDigits(v) : undefined;
      if (w >= 16) {
        long++;
        if (q !== undefined) noisy++;
      }
      sig[id] = w;
      // A whole number's trailing zeros are no measured digits (`123000` rounded to 3).
      shorter[id] = q ?? (p === 0 ? significantDigits(v.replace(/0+$/, "")) : w);
    } else other = true;
  });
  decimals = Math.min(decimals, 20);
  // The long writings are a double's noise when most of them are (not by chance, as quotients).
  const denoise = long > 0 && noisy >= 0.5 * long;
  // Rows per significant digits written (non-zero values).
  const written = new Map<number, number>();
  scan.values.forEach((v, id) => {
    if (sig[id] === 0) return;
    const w = denoise || sig[id] < 16 ? shorter[id] : sig[id];
    digits = Math.max(digits, denoise ? shorter[id] : sig[id]);
    if (num[id] !== 0) written.set(w, (written.get(w) ?? 0) + scan.counts[id]);
  });
  scan.values.forEach((v, id) => {
    const x = Math.abs(num[id]);
    if (v !== "" && x > 0 && Math.floor(Math.log10(x)) + 1 + decimals > digits) capped = true;
  });
  // A double printed in full (16-17 digits) by a minority of the rows caps nothing, yet writing
  // every value with its decimals would print each as one: the digits go by the rows' shares.
  let full = 0;
  let nonZero = 0;
  scan.values.forEach((v, id) => {
    if (sig[id] === 0 || num[id] === 0) return;
    nonZero += scan.counts[id];
    if ((denoise ? shorter[id] : sig[id]) >= 16) full += scan.counts[id];
  });
  const fewFull = digits >= 16 && full < 0.5 * nonZero;
  const sigDigits = (capped || fewFull) && decimals > 0 && !other && digits <= 21 ? digits : undefined;
  const digitShares = sigDigits !== undefined ? digitSharesOf(written, sigDigits) : undefined;
  const fixed = decimals > 0 && fewest === decimals && most === decimals;
  const minDecimals = fewest > 0 && fewest < decimals && most === decimals ? fewest : undefined;
  const step = distinct > binCap ? stepOf(num.filter((x) => !Number.isNaN(x)), decimals) : undefined;
  const codec = binnedCodec(scan, n, binCap, "numerical", num, (v) => (isNumeric(v) ? Number(v) : undefined), {
    integer,
    decimals,
    ...(fixed ? { fixed_decimals: true } : {}),
    ...(minDecimals !== undefined ? { min_decimals: minDecimals } : {}),
    ...(sigDigits !== undefined ? { digits: sigDigits } : {}),
    ...(digitShares !== undefined ? { digit_shares: digitShares } : {}),
    ...(step !== undefined ? { step } : {}),
  });
  if (codec.stats.bin_edges) {
    const lattice = valueLattice(num, scan.counts, codec.stats, k);
    if (lattice) codec.stats.lattice = lattice;
    // Digit shares are the column's grain where values are measured to a count of digits (the
    // decimal grains only echo them, and rounding a grain's point again would coarsen it twice).
    const grain = codec.stats.digit_shares ? undefined : grainOf(num, scan.counts, codec.stats, lattice);
    if (grain) codec.stats.grain = grain;
  }
  const format = scan.numberFormat;
  if (format) {
    // Values arrive plain (the scan's) or as written (a synthetic table's, pass 2's).
    codec.stats.number_format = format.stats();
    const encodePlain = codec.encode.bind(codec);
    codec.encode = (v) => encodePlain(v === "" ? v : (format.plain(v) ?? v));
  }
  return codec;
}

/** Most values a column's `lattice` holds (the contract's bound). */
export const MAX_LATTICE_VALUES = 4096;
/** Share of the non-blank rows the released values must hold. */
export const LATTICE_ROW_SHARE = 0.95;
/** Most distinct values per non-blank row for a column of repeated values. */
export const LATTICE_DISTINCT_SHARE = 0.2;

/**
 * The values a quantile-binned column is written with when they are few and sparse on its step:
 * distinct values at most {@link LATTICE_DISTINCT_SHARE} of the non-blank rows, the values of >= k
 * rows (released, as categories are) holding {@link LATTICE_ROW_SHARE} of them, and fewer than
 * half the points of the step lattice over [min, max] (whole degrees Fahrenheit written in
 * Celsius: 12.8, 13.3, 13.9; not ages 17 to 90). Zeros are a separate mass: the distinct share
 * is judged on the non-zero rows (costs that are 0 in 99% of rows and distinct otherwise are no
 * lattice), the held share on all rows (a released zero is a written value like any other).
 * Sorted ascending; undefined otherwise.
 */
function valueLattice(num: readonly number[], counts: readonly number[], stats: ColumnStats, k: number): number[] | undefined {
  let rows = 0;
  let nonzeroRows = 0;
  let distinct = 0;
  let held = 0;
  const kept: number[] = [];
  num.forEach((x, id) => {
    if (Number.isNaN(x)) return;
    rows += counts[id];
    if (counts[id] >= k) {
      held += counts[id];
      kept.push(x);
    }
    if (x === 0) return;
    nonzeroRows += counts[id];
    distinct++;
  });
  if (kept.length < 2 || kept.length > MAX_LATTICE_VALUES) return undefined;
  if (distinct > LATTICE_DISTINCT_SHARE * nonzeroRows || held < LATTICE_ROW_SHARE * rows) return undefined;
  const unit = stats.step ?? 10 ** -(stats.decimals ?? 0);
  const span = ((stats.max ?? 0) - (stats.min ?? 0)) / unit + 1;
  if (!(kept.length < 0.5 * span)) return undefined;
  return kept.sort((a, b) => a - b);
}

/**
 * The lattice of a number column (undefined without `decimals` or `integer`): unit `step` when a
 * whole multiple of 10^-decimals, else 10^-decimals; written as {@link numberWriter} does.
 */
export function numberLattice(stats: ColumnStats): Lattice | undefined {
  const d = stats.decimals ?? (stats.integer ? 0 : undefined);
  if (d === undefined) return undefined;
  if (stats.lattice && stats.lattice.length >= 2) return listLattice(stats, d);
  const scale = 10 ** d;
  // The step in units of 10^-decimals, when it is a whole number of them (> 1).
  const scaledStep = stats.step !== undefined ? Math.round(stats.step * scale) : 1;
  const unit = scaledStep > 1 && Math.abs(stats.step! * scale - scaledStep) < 1e-9 * scaledStep ? scaledStep : 1;
  const fixed = stats.fixed_decimals === true && d > 0;
  const writeNumber = numberWriter(d, fixed, stats.min_decimals ?? 0, stats.digits);
  const value = (k: number): number => (k * unit) / scale;
  return {
    value,
    index: (x) => (x * scale) / unit,
    write: (k) => writeNumber(value(k)),
    ...(stats.digit_shares && stats.digits ? { writeDrawn: digitsWriter(d, fixed, stats.min_decimals ?? 0, stats.digit_shares) } : {}),
    writeExact: (x) => (fixed || stats.min_decimals || stats.digits ? writeNumber(x) : String(x)),
    exactUpTo: 2 ** 52 / scale,
    // value(k) = k * unit, an integer; write and writeExact are then String (`-0` -> "0").
    integer: d === 0,
    ...(d === 0 ? { unit } : {}),
  };
}

/**
 * The lattice of a column's listed values (`lattice`): point k is the k-th value; points beyond
 * either end lie further out than [min, max] (the lattice is infinite, as the decoder's search
 * needs, but only listed values fall inside the column's range).
 */
function listLattice(stats: ColumnStats, d: number): Lattice {
  const v = [...new Set(stats.lattice!.filter(Number.isFinite))].sort((a, b) => a - b);
  const n = v.length;
  const gapLo = Math.max(stats.max ?? v[n - 1], v[n - 1]) - Math.min(stats.min ?? v[0], v[0]) + 1;
  const gapHi = gapLo;
  const fixed = stats.fixed_decimals === true && d > 0;
  const writeNumber = numberWriter(d, fixed, stats.min_decimals ?? 0, stats.digits);
  const value = (k: number): number => (k < 0 ? v[0] + k * gapLo : k >= n ? v[n - 1] + (k - n + 1) * gapHi : v[k]);
  const index = (x: number): number => {
    if (x <= v[0]) return (x - v[0]) / gapLo;
    if (x >= v[n - 1]) return n - 1 + (x - v[n - 1]) / gapHi;
    let lo = 0;
    let hi = n - 1;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (v[mid] <= x) lo = mid;
      else hi = mid;
    }
    return lo + (x - v[lo]) / (v[hi] - v[lo]);
  };
  return {
    value,
    index,
    write: (k) => writeNumber(value(k)),
    writeExact: (x) => (fixed || stats.min_decimals || stats.digits ? writeNumber(x) : String(x)),
    exactUpTo: 2 ** 52 / 10 ** d,
  };
}

/** Output type: Int64 for `decimals` 0 (older metadata: `integer`), else Float64. */
export function numericalColumnType(stats: ColumnStats): ColumnType {
  const decimals = stats.decimals ?? (stats.integer ? 0 : undefined);
  return decimals === 0 ? "int64" : "float64";
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * The Int64 value of trimmed text `t`: an integer literal exactly, another number when whole.
 * @throws DataError when it is not a number, not an integer, or outside ±2^63.
 */
export function int64Of(t: string): bigint {
  let v: bigint;
  if (/^[+-]?\d+$/.test(t)) v = BigInt(t);
  else if (isNumeric(t) && Number.isInteger(Number(t))) v = BigInt(Number(t));
  else throw new DataError(`${JSON.stringify(t)} is not ${isNumeric(t) ? "an integer" : "a number"}, but the model's column holds integers (written as Int64)`);
  if (v < INT64_MIN || v > INT64_MAX) throw new DataError(`${t} does not fit in a 64-bit integer`);
  return v;
}

/** The Float64 value of trimmed text `t` (`text` as given, for the message). @throws DataError when it is not a number. */
export function float64Of(t: string, text: string): number {
  if (!isNumeric(t)) throw new DataError(`${JSON.stringify(text)} is not a number`);
  return Number(t);
}

/** Text -> number (seed cells, `where` values, point values), or undefined. */
export function parseNumber(t: string): number | undefined {
  return isNumeric(t) ? Number(t) : undefined;
}

/** A `where` bound: a number, or text that is one (trimmed); else undefined. */
export function numberBound(v: unknown): number | undefined {
  const x = typeof v === "number" ? v : typeof v === "string" && isNumeric(v.trim()) ? Number(v.trim()) : NaN;
  return Number.isFinite(x) ? x : undefined;
}

/** A number for people: integers as written, others in 6 significant digits; `?` for undefined. */
export function shortNumber(x: number | undefined): string {
  if (x === undefined) return "?";
  return Number.isInteger(x) ? String(x) : String(Number(x.toPrecision(6)));
}

/** `describeColumns`' details: range, decimals and, where set, step, grain and fixed decimals. */
export function describeNumerical(st: ColumnStats): string {
  let detail = `${shortNumber(st.min)} .. ${shortNumber(st.max)}, ${st.decimals ? `${st.decimals} decimals` : "integers"}`;
  if (st.step !== undefined) detail += `, step ${shortNumber(st.step)}`;
  if (st.digits !== undefined) detail += `, ${st.digits} significant digits`;
  if (st.grain) detail += `, ${describeGrain(st.grain, st.decimals ?? 0)}`;
  if (st.lattice) detail += `, ${st.lattice.length} values written (those of >= k rows)`;
  if (st.number_format) detail += `, written as ${new NumberFormat(st.number_format).example(st.decimals ?? 0)}`;
  if (st.fixed_decimals && st.decimals) {
    const d = st.decimals;
    detail += `, written with ${d} decimal${d === 1 ? "" : "s"} (${(0).toFixed(d)})`;
  } else if (st.min_decimals) {
    const d = st.min_decimals;
    detail += `, written with at least ${d} decimal${d === 1 ? "" : "s"} (${(0).toFixed(d)})`;
  }
  return detail;
}
