/**
 * Ratio and product identities `total = k · a^±1 · b^±1` and `total = k · a^±1` of non-negative
 * numerical columns (criteria in `./index`, {@link detectRules}; the rule shape is the contract's
 * `RatioRule`): rates, averages, densities, values of price times quantity, unit conversions.
 */
import type { RatioBins, RatioRule, Rule } from "../../../contract";
import { Rng, deriveSeed } from "../../generate/sfc32";
import { ratioBand, ratioKept, ratioTolerance, ratioValue } from "../ratio";
import { RULE_LIMITS } from "./options";
import { modeOf } from "./sum";
import { quantile, trimmedRange, type Col } from "./view";

/** Rows of the precheck sample, spread over the table. */
const SAMPLE = 64;
/** Precheck: share of the sample's positive rows within the tolerance of the median log residual. */
const PRECHECK_SHARE = 0.9;
/** Precheck: the sample's median tolerance in log space at most this (looser says nothing). */
const MAX_LOG_TOLERANCE = 0.05;
/** An identity that still holds in this share of rows once its total is shuffled holds by chance. */
const SHUFFLED_SHARE = 0.5;
/** Orientations whose sample rows reproduce the total at least this share of the best one's tie. */
const TIE_SHARE = 0.9;

/** Log-space signs of s_0·log x_0 + s_1·log x_1 (+ s_2·log x_2) = log k, up to the sign of the whole. */
const PAIR_PATTERNS: readonly (readonly number[])[] = [
  [1, -1],
  [1, 1],
];
const TRIPLE_PATTERNS: readonly (readonly number[])[] = [
  [1, 1, -1],
  [1, -1, 1],
  [-1, 1, 1],
  [1, 1, 1],
];

/**
 * The number of fewest significant digits in [lo, hi] (100 rather than 99.98, 2.54 rather than
 * 2.5400013), or the reciprocal of one at the same digits (1/60 rather than 0.0166667: a unit
 * conversion by division, seconds to minutes), the number first; `mid` when none of up to 15
 * digits is.
 */
export function simplestIn(lo: number, hi: number, mid: number): number {
  for (let p = 1; p <= 15; p++) {
    const y = Number(mid.toPrecision(p));
    if (y >= lo && y <= hi) return y;
    const r = 1 / Number((1 / mid).toPrecision(p));
    if (r >= lo && r <= hi) return r;
  }
  return mid;
}

/** Median of a non-empty array (sorted copy). */
function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1];
}

/**
 * Ratio and product identities (criteria in `./index`, {@link detectRules}). Columns: numerical, no negative
 * value; the total is no sum's total, no catalog's or fixed combinations' column (those rules
 * write it), and when it is a sum's part its parts are no sum's totals (it is written first); the
 * first {@link RULE_LIMITS}.maxRatioColumns in table order. In log space the identity is linear,
 * s·(log a, log b, log c) = log k, with a tolerance per row from the columns' decimals (each
 * column's half unit over its value): a precheck on {@link SAMPLE} spread rows with all columns
 * positive (>= 10 of them) keeps a pair or triple and sign pattern when >= 90% of them lie within
 * the tolerance of the median residual, and that tolerance is at most {@link MAX_LOG_TOLERANCE}
 * in at least half of them. The total is the column the others give back once rounded to its
 * decimals in the most sample rows (ties: the most decimals, then all powers +1, then the last in
 * table order); k is the number of fewest significant digits every sample row allows. The full
 * scan then judges it on every row with all columns present and no divided part 0 (a multiplied
 * part of 0 needs a total of 0): share >= 0.99 over >= 10 rows, and on each column's rows off its
 * most frequent value (>= 5); it is dropped when the total shuffled (seeded) still keeps it in
 * {@link SHUFFLED_SHARE} of the rows, and when some rows break it, when they are over 1% of the
 * rows where another column is off its mode (>= 5): a missing part, as for sums. A pair of
 * factor 1 is C = A, left to sums. Pairs first (`cm = 2.54 · inches`); triples only of columns
 * no pair derives, each column the total of one identity at most. Then bands of triples of the
 * columns no identity derives ({@link bandOf}), then of pairs of the columns left (the later
 * column the total), each column in one band at most.
 * Cost: the precheck over C(m, 3) triples and 4 patterns of <= 64 rows (m <= 60: ~9 M steps),
 * O(n) per candidate that passes it.
 * @param others the sums, catalogs and fixed-combinations rules already detected.
 * @param seed the shuffle's seed.
 * @returns the rules, pairs first, each with its share of the rows it applies to.
 */
export function detectRatios(cols: Col[], n: number, others: readonly Rule[], seed: number): RatioRule[] {
  const busy = new Set<string>();
  const sumColumns = new Set<string>();
  const sumSets = new Set<string>();
  const sumTotals = new Set<string>();
  for (const r of others) {
    if (r.type === "sum") {
      [r.total, ...r.parts].forEach((c) => sumColumns.add(c));
      sumSets.add([r.total, ...r.parts].sort().join("\u0000"));
      busy.add(r.total);
      sumTotals.add(r.total);
    }
    if (r.type === "catalog" || r.type === "fixed_combinations") r.columns.forEach((c) => busy.add(c));
  }
  const nonNegative = (c: Col): boolean => c.num!.every((x) => Number.isNaN(x) || x >= 0);
  const elig = cols.filter((c) => c.codec.kind === "numerical" && c.num && !c.codec.fromDomain && c.nonBlank >= 2 && nonNegative(c)).slice(0, RULE_LIMITS.maxRatioColumns);
  const E = elig.length;
  if (E < 2 || n < RULE_LIMITS.minRows) return [];
  const decs = elig.map((c) => c.codec.stats.decimals ?? 0);
  const modes = elig.map(modeOf);
  const step = Math.max(1, n / SAMPLE);
  const rows: number[] = [];
  for (let t = 0; t * step < n && rows.length < SAMPLE; t++) rows.push(Math.floor(t * step + step / 2) % n);
  const S = rows.length;
  // Per column and sample row: the value, its log (NaN unless > 0) and its rounding's log-space half-width.
  const vals = elig.map((c) => Float64Array.from(rows, (r) => c.num![c.scan.ids[r]]));
  const logs = vals.map((v) => v.map((x) => (x > 0 ? Math.log(x) : NaN)));
  const rels = vals.map((v, j) => v.map((x) => (x > 0 ? (0.5 * 10 ** -decs[j]) / x : NaN)));
  const res = new Float64Array(S);
  const sorted = new Float64Array(S);
  // Per sample row: the log-space tolerance of the columns with decimals, and each whole-number column's.
  const decTol = new Float64Array(S);
  const wholeTol = [new Float64Array(S), new Float64Array(S), new Float64Array(S)];
  /**
   * The precheck: whole-number columns are exact parts, unless one of them is the total, rounded:
   * each is tried as that (the tolerance then adds its half unit).
   */
  const precheck = (idx: readonly number[], s: readonly number[]): boolean => {
    const whole = idx.filter((i) => decs[i] === 0);
    let m = 0;
    for (let q = 0; q < S; q++) {
      let e = 0;
      let w = 0;
      for (let j = 0; j < idx.length; j++) {
        e += s[j] * logs[idx[j]][q];
        if (decs[idx[j]] > 0) w += rels[idx[j]][q];
      }
      if (Number.isNaN(e)) continue;
      res[m] = e;
      decTol[m] = w;
      for (let k = 0; k < whole.length; k++) wholeTol[k][m] = rels[whole[k]][q];
      m++;
    }
    if (m < RULE_LIMITS.minRows) return false;
    sorted.set(res.subarray(0, m));
    const c = sorted.subarray(0, m).sort()[m >> 1];
    for (let k = -1; k < whole.length; k++) {
      let [near, loose] = [0, 0];
      for (let q = 0; q < m; q++) {
        const t = (decTol[q] + (k >= 0 ? wholeTol[k][q] : 0)) * (1 + 1e-9) + 1e-12;
        if (t > MAX_LOG_TOLERANCE) loose++;
        if (Math.abs(res[q] - c) <= t) near++;
      }
      if (2 * loose < m && near >= PRECHECK_SHARE * m) return true;
    }
    return false;
  };
  const maxFails = Math.floor((1 - RULE_LIMITS.share) * n);
  /** The identity of idx with log signs s, oriented and judged on every row, or undefined. */
  const judge = (idx: readonly number[], s: readonly number[]): RatioRule | undefined => {
    type Orientation = { t: number; powers: number[]; factor: number; exact: number };
    const options: Orientation[] = [];
    for (let t = 0; t < idx.length; t++) {
      const others = idx.map((_, j) => j).filter((j) => j !== t);
      const powers = others.map((j) => -s[j] / s[t]);
      let lo = 0;
      let hi = Infinity;
      const ks: number[] = [];
      const bounds: [number, number][] = [];
      for (let q = 0; q < S; q++) {
        const x = vals[idx[t]][q];
        const ps = others.map((j) => vals[idx[j]][q]);
        if (!(x > 0) || !ps.every((p) => p > 0)) continue;
        const base = ratioValue(1, ps, powers)!;
        const w = ratioTolerance(x, decs[idx[t]], ps, others.map((j) => decs[idx[j]]));
        ks.push(x / base);
        bounds.push([(x - w) / base, (x + w) / base]);
      }
      if (ks.length < RULE_LIMITS.minRows) return undefined;
      const mid = median(ks);
      for (const [a, b] of bounds) {
        if (a > mid || b < mid) continue;
        lo = Math.max(lo, a);
        hi = Math.min(hi, b);
      }
      const factor = simplestIn(lo, hi, mid);
      let exact = 0;
      const scale = 10 ** decs[idx[t]];
      for (let q = 0; q < S; q++) {
        const x = vals[idx[t]][q];
        const v = ratioValue(factor, others.map((j) => vals[idx[j]][q]), powers);
        if (v !== undefined && !Number.isNaN(x) && Math.abs(Math.round(v * scale) - x * scale) <= 1e-6 + 1e-12 * Math.abs(x * scale)) exact++;
      }
      options.push({ t, powers, factor, exact });
    }
    const best = Math.max(...options.map((o) => o.exact));
    const pick = options
      .filter((o) => o.exact >= TIE_SHARE * best)
      .sort((a, b) => decs[idx[b.t]] - decs[idx[a.t]] || Number(b.powers.every((p) => p > 0)) - Number(a.powers.every((p) => p > 0)) || b.t - a.t)[0];
    const total = elig[idx[pick.t]];
    // Multiplied parts first (`100 * unemployed / labor force`), else table order.
    const others = idx.map((_, j) => j).filter((j) => j !== pick.t);
    const powerOf = new Map(others.map((j, k) => [j, pick.powers[k]]));
    const order = [...others].sort((a, b) => powerOf.get(b)! - powerOf.get(a)! || a - b);
    pick.powers = order.map((j) => powerOf.get(j)!);
    const partIdx = order.map((j) => idx[j]);
    const parts = partIdx.map((i) => elig[i]);
    const rule: RatioRule = { type: "ratio", total: total.name, parts: parts.map((c) => c.name), powers: pick.powers as (1 | -1)[], factor: pick.factor, share: 1 };
    const all = [idx[pick.t], ...partIdx];
    const count = (totalAt: (r: number) => number, stop = maxFails, failing?: number[]) => {
      let [m, positive, fails] = [0, 0, 0];
      const off = all.map(() => 0);
      const offFails = all.map(() => 0);
      const ps: number[] = parts.map(() => 0);
      for (let r = 0; r < n; r++) {
        const x = totalAt(r);
        for (let j = 0; j < parts.length; j++) ps[j] = parts[j].num![parts[j].scan.ids[r]];
        const kept = ratioKept(x, ps, rule, decs[idx[pick.t]], partIdx.map((i) => decs[i]));
        if (kept === undefined) continue;
        m++;
        if (x > 0 && ps.every((p) => p > 0)) positive++;
        const xs = [x, ...ps];
        for (let j = 0; j < all.length; j++) {
          if (xs[j] === modes[all[j]]) continue;
          off[j]++;
          if (!kept) offFails[j]++;
        }
        if (!kept) failing?.push(r);
        if (!kept && ++fails > stop) break;
      }
      return { m, positive, fails, off, offFails };
    };
    // A factor of 1 between two columns is C = A, a sum's identity (`./sum` judges it).
    if (idx.length === 2 && pick.factor === 1) return undefined;
    const failing: number[] = [];
    const c = count((r) => total.num![total.scan.ids[r]], maxFails, failing);
    if (c.fails > maxFails || c.positive < RULE_LIMITS.minRows || (c.m - c.fails) / c.m < RULE_LIMITS.share) return undefined;
    if (!c.off.every((o, j) => o >= RULE_LIMITS.minTermRows && (o - c.offFails[j]) / o >= RULE_LIMITS.share)) return undefined;
    // The rows that break it must not be where another column is off its mode (a missing part, as for sums).
    for (let x = 0; x < E && failing.length > 0; x++) {
      if (all.includes(x)) continue;
      const col = elig[x];
      let [o, f] = [0, 0];
      for (let r = 0; r < n; r++) {
        const v = col.num![col.scan.ids[r]];
        if (!Number.isNaN(v) && v !== modes[x]) o++;
      }
      for (const r of failing) {
        const v = col.num![col.scan.ids[r]];
        if (!Number.isNaN(v) && v !== modes[x]) f++;
      }
      if (o >= RULE_LIMITS.minTermRows && (o - f) / o < RULE_LIMITS.share) return undefined;
    }
    const shuffled = Array.from(total.scan.ids, (id) => total.num![id]);
    new Rng(deriveSeed(seed, total.f, parts[0].f)).shuffle(shuffled);
    const sh = count((r) => shuffled[r], n);
    if (sh.m > 0 && (sh.m - sh.fails) / sh.m >= SHUFFLED_SHARE) return undefined;
    rule.share = (c.m - c.fails) / c.m;
    return rule;
  };
  const rules: RatioRule[] = [];
  const totals = new Set<number>();
  const derived = new Array<boolean>(E).fill(false);
  const canTotal = (i: number): boolean => !busy.has(elig[i].name) && !totals.has(i);
  // Columns a sum already ties together (C = A is a sum and a ratio of factor 1) make no ratio.
  const inOneSum = (idx: readonly number[]): boolean => sumSets.has(idx.map((i) => elig[i].name).sort().join("\u0000"));
  const accept = (idx: readonly number[], rule: RatioRule | undefined): boolean => {
    if (!rule) return false;
    const t = idx.find((i) => elig[i].name === rule.total)!;
    // A sum's part is written before the sums, so from columns no sum writes.
    if (!canTotal(t) || (sumColumns.has(rule.total) && rule.parts.some((p) => sumTotals.has(p)))) return false;
    rules.push(rule);
    totals.add(t);
    derived[t] = true;
    return true;
  };
  for (let l = 1; l < E; l++) {
    for (let i = 0; i < l; i++) {
      if (derived[i] || derived[l] || inOneSum([i, l])) continue;
      for (const s of PAIR_PATTERNS) {
        if (precheck([i, l], s) && accept([i, l], judge([i, l], s))) break;
      }
    }
  }
  const free = elig.map((_, i) => i).filter((i) => !derived[i]);
  for (let a = 0; a < free.length; a++) {
    for (let b = a + 1; b < free.length; b++) {
      for (let c = b + 1; c < free.length; c++) {
        const idx = [free[a], free[b], free[c]];
        if (idx.some((i) => derived[i]) || inOneSum(idx)) continue;
        for (const s of TRIPLE_PATTERNS) {
          if (precheck(idx, s) && accept(idx, judge(idx, s))) break;
        }
      }
    }
  }
  // Bands: triples of the columns no identity derives, the lone-signed column the total.
  const banded = new Set<number>();
  for (let a = 0; a < free.length; a++) {
    for (let b = a + 1; b < free.length; b++) {
      for (let c = b + 1; c < free.length; c++) {
        const idx = [free[a], free[b], free[c]];
        if (idx.some((i) => derived[i] || banded.has(i)) || inOneSum(idx)) continue;
        for (const t of [0, 1, 2]) {
          if (!canTotal(idx[t]) || (sumColumns.has(elig[idx[t]].name) && idx.some((i) => i !== idx[t] && sumTotals.has(elig[i].name)))) continue;
          const parts = idx.filter((_, j) => j !== t);
          const rule = bandOf(elig[idx[t]], parts.map((i) => elig[i]), n, seed, vals[idx[t]], parts.map((i) => vals[i]));
          if (!rule) continue;
          rules.push(rule);
          totals.add(idx[t]);
          idx.forEach((i) => banded.add(i));
          break;
        }
      }
    }
  }
  // Bands of pairs of the columns left (students per teacher): the later column the total.
  for (let l = 1; l < free.length; l++) {
    for (let i = 0; i < l; i++) {
      const [a, t] = [free[i], free[l]];
      if (banded.has(a) || banded.has(t) || derived[a] || derived[t] || inOneSum([a, t]) || !canTotal(t)) continue;
      if (sumColumns.has(elig[t].name) && sumTotals.has(elig[a].name)) continue;
      const rule = bandOf(elig[t], [elig[a]], n, seed, vals[t], [vals[a]]);
      if (!rule) continue;
      rules.push(rule);
      totals.add(t);
      banded.add(a).add(t);
    }
  }
  return rules;
}

/** Of a band: the widest its log-space window may be (max / min factor <= 2). */
const MAX_BAND_LOG = Math.log(2);
/** Of a band: its window at most this share of the window once the total is shuffled. */
const BAND_NARROW = 0.25;
/** Of a band: its window at most this share of each part's pair window with the total (both parts count). */
const BAND_OVER_PAIR = 0.5;
/** Of a band: share of the rows trimmed at each end when the exact range is not narrow. */
const BAND_TRIM = 0.005;
/** Of a band: rows with all three columns positive, at least. */
const BAND_MIN_ROWS = 30;

/**
 * A ratio band `total = f · a · b`, f in [min, max] (the multiplicative analogue of `./difference`'s
 * range; TotalCharges = MonthlyCharges · tenure within a few percent), or undefined. On the rows
 * with all three columns > 0 (>= {@link BAND_MIN_ROWS}), the log factor log total - log a - log b
 * spans a window (its [min, max], else with 0.5% trimmed at each end when >= 99% of rows lie inside)
 * that is at most {@link MAX_BAND_LOG} wide, at most {@link BAND_NARROW} of the same window once the
 * total is shuffled (seeded), and at most {@link BAND_OVER_PAIR} of the windows of log total - log a
 * and log total - log b (each part narrows it: no band where one part alone is near-constant), and
 * it holds a power of ten (the factor converts units: 1 for charges over months, 100 for a
 * percent; smooth series that trend together give narrow bands off any power of ten). A
 * precheck on the 64 sample rows (`sampleTotal`, `sampleParts`) asks the same of their 5%-95%
 * window first. Then the rule, judged by `ratioKept` on every row with all three present, must
 * hold in >= 99% of them. Only products: a ratio t = a / b is the product a = t · b.
 *
 * With one part, `total = f · a` (students = [14, 25.8] · teachers, calories from fat = [8.7,
 * 9.3] · grams of fat): the window must be at most {@link BAND_NARROW} of each column's own log
 * window as well (both vary far more than their ratio: a rate, not two near-constant series), and
 * need hold no power of ten (a rate's factor is no unit's); a pair whose plain difference is as
 * narrow (at most {@link BAND_NARROW} of the total's range), or one value in half of the rows, is
 * left to difference ranges and sums.
 */
function bandOf(total: Col, parts: readonly Col[], n: number, seed: number, sampleTotal: Float64Array, sampleParts: readonly Float64Array[]): RatioRule | undefined {
  const logOf = (x: number): number => (x > 0 ? Math.log(x) : NaN);
  const window = (xs: number[], trim: number): number => {
    const v = Float64Array.from(xs.filter((x) => !Number.isNaN(x))).sort();
    if (v.length < 10) return NaN;
    const [lo, hi] = trimmedRange(v, trim);
    return hi - lo;
  };
  const P = parts.length;
  // Precheck on the sample.
  const S = sampleTotal.length;
  const sf: number[] = [];
  const sp: number[][] = [[], []];
  const sl: number[][] = [[], []];
  for (let q = 0; q < S; q++) {
    const t = logOf(sampleTotal[q]);
    const a = logOf(sampleParts[0][q]);
    const b = P === 2 ? logOf(sampleParts[1][q]) : 0;
    if (Number.isNaN(t + a + b)) continue;
    sf.push(t - a - b);
    sp[0].push(t - a);
    sp[1].push(t - b);
    sl[0].push(t);
    sl[1].push(a);
  }
  if (sf.length < 10) return undefined;
  const w0 = window(sf, 0.05);
  const precheck = P === 2 ? sp.every((p) => w0 <= BAND_OVER_PAIR * window(p, 0.05)) : sl.slice(0, 2).every((l) => w0 <= BAND_NARROW * window(l, 0.05));
  if (!(w0 <= MAX_BAND_LOG && precheck)) return undefined;
  // Every row.
  const fs: number[] = [];
  const pairs: number[][] = [[], []];
  const lt: number[] = [];
  const lp: number[][] = [[], []];
  const raw: number[][] = [[], []];
  for (let r = 0; r < n; r++) {
    const t = logOf(total.num![total.scan.ids[r]]);
    const a = logOf(parts[0].num![parts[0].scan.ids[r]]);
    const b = P === 2 ? logOf(parts[1].num![parts[1].scan.ids[r]]) : 0;
    if (Number.isNaN(t + a + b)) continue;
    fs.push(t - a - b);
    pairs[0].push(t - a);
    pairs[1].push(t - b);
    lt.push(t);
    lp[0].push(a);
    lp[1].push(b);
    for (let j = 0; j < P; j++) raw[j].push(parts[j].num![parts[j].scan.ids[r]]);
  }
  const m = fs.length;
  if (m < BAND_MIN_ROWS) return undefined;
  const f = Float64Array.from(fs).sort();
  const own = P === 1 ? [window(lt, BAND_TRIM), window(lp[0], BAND_TRIM)] : [];
  // A pair whose plain difference is as narrow next to the total's range is a difference range's
  // (`./difference`: ship date - order date, close columns), not a rate's.
  if (P === 1) {
    const plain: number[] = [];
    const tv: number[] = [];
    for (let r = 0; r < n; r++) {
      const [t, a] = [total.num![total.scan.ids[r]], parts[0].num![parts[0].scan.ids[r]]];
      if (t > 0 && a > 0) {
        plain.push(t - a);
        tv.push(t);
      }
    }
    if (window(plain, BAND_TRIM) <= BAND_NARROW * window(tv, BAND_TRIM)) return undefined;
    // Nor one whose difference is one value in most rows (a sum with a part mostly 0).
    const counts = new Map<number, number>();
    for (const d of plain) counts.set(d, (counts.get(d) ?? 0) + 1);
    if (Math.max(...counts.values()) >= 0.5 * plain.length) return undefined;
  }
  new Rng(deriveSeed(seed, total.f, ...parts.map((c) => c.f))).shuffle(lt);
  const shuffledWidth = window(lt.map((t, r) => t - lp[0][r] - lp[1][r]), BAND_TRIM);
  for (const trim of [0, BAND_TRIM]) {
    const [lo, hi] = trimmedRange(f, trim);
    const w = hi - lo;
    const narrow = P === 2 ? pairs.every((p) => w <= BAND_OVER_PAIR * window(p, trim)) : own.every((x) => w <= BAND_NARROW * x);
    if (!(w <= MAX_BAND_LOG && w <= BAND_NARROW * shuffledWidth && narrow)) continue;
    const kept = trim === 0 ? f : f.filter((x) => x >= lo && x <= hi);
    if (kept.length < RULE_LIMITS.share * m) continue;
    // Two parts: the factor is a unit's, the band holds a power of ten (co-trending series give none).
    if (P === 2 && Math.floor(hi / Math.LN10 + 1e-9) < Math.ceil(lo / Math.LN10 - 1e-9)) return undefined;
    const sig = (x: number): number => Number(x.toPrecision(8));
    const quantiles = Array.from({ length: 17 }, (_, k) => sig(Math.exp(quantile(kept, k / 16))));
    const rule: RatioRule = { type: "ratio", total: total.name, parts: parts.map((c) => c.name), powers: parts.map(() => 1), factor: quantiles[8], share: 1, min: quantiles[0], max: quantiles[16], quantiles };
    const dt = total.codec.stats.decimals ?? 0;
    const dp = parts.map((c) => c.codec.stats.decimals ?? 0);
    let [present, good] = [0, 0];
    for (let r = 0; r < n; r++) {
      const ok = ratioKept(total.num![total.scan.ids[r]], parts.map((c) => c.num![c.scan.ids[r]]), rule, dt, dp);
      if (ok === undefined) continue;
      present++;
      if (ok) good++;
    }
    if (present < BAND_MIN_ROWS || good < RULE_LIMITS.share * present) return undefined;
    rule.share = good / present;
    const bins = binsOf(rule, fs, raw, hi - lo);
    if (bins !== undefined) {
      const band = ratioBand(bins);
      let binnedGood = 0;
      for (let r = 0; r < n; r++) if (ratioKept(total.num![total.scan.ids[r]], parts.map((c) => c.num![c.scan.ids[r]]), band, dt, dp) === true) binnedGood++;
      if (binnedGood >= RULE_LIMITS.share * present) return { ...bins, share: binnedGood / present };
    }
    return rule;
  }
  return undefined;
}

/** Of a band's bins: quantile edges of the part (a value holding this share of rows is a bin of its own). */
const BINS = 8;
const POINT_BIN_SHARE = 0.05;
/** Of a band's bins: rows trimmed at each end of a bin's factors. */
const BIN_TRIM = 0.0025;
/** Bins are kept when their rows' mean window is at most this share of the band's. */
const BINS_NARROW = 0.8;

/**
 * The band `rule` with its factor by bins of one part (`RatioBins`), or undefined when no part's
 * bins narrow it: per part, edges at its {@link BINS}-quantiles, a value holding >= 5% of the rows
 * a bin of its own, bins of < {@link BAND_MIN_ROWS} rows joined to the next; per bin the 17
 * quantiles of its log factors (`fs`) with {@link BIN_TRIM} trimmed at each end. Kept for the part
 * whose bins' row-weighted window is smallest, when that is at most {@link BINS_NARROW} of the
 * band's (`window`, log space): telco's `tenure 1` rows have TotalCharges = MonthlyCharges exactly,
 * the factor's spread narrows as tenure grows.
 */
function binsOf(rule: RatioRule, fs: readonly number[], raw: readonly number[][], window: number): RatioRule | undefined {
  const m = fs.length;
  if (!(window > 0) || m < 2 * BAND_MIN_ROWS) return undefined;
  let best: { score: number; bins: RatioBins } | undefined;
  for (let j = 0; j < rule.parts.length; j++) {
    const xs = Float64Array.from(raw[j]).sort();
    const cuts = new Set<number>();
    for (let k = 1; k < BINS; k++) cuts.add(xs[Math.floor((k * (m - 1)) / BINS)]);
    for (let a = 0, b = 0; a < m; a = b) {
      while (b < m && xs[b] === xs[a]) b++;
      if (b - a < POINT_BIN_SHARE * m) continue;
      cuts.add(xs[a]);
      if (a > 0) cuts.add(xs[a - 1]);
    }
    let edges = [...cuts].filter((x) => x < xs[m - 1]).sort((a, b) => a - b);
    const binOf = (x: number): number => {
      let i = 0;
      while (i < edges.length && x > edges[i]) i++;
      return i;
    };
    // Join bins under BAND_MIN_ROWS rows to their next (the last to its previous).
    for (;;) {
      const counts = new Array<number>(edges.length + 1).fill(0);
      for (const x of raw[j]) counts[binOf(x)]++;
      const small = counts.findIndex((c) => c < BAND_MIN_ROWS);
      if (small < 0 || edges.length === 0) break;
      edges = edges.filter((_, e) => e !== Math.min(small, edges.length - 1));
    }
    if (edges.length === 0) continue;
    const byBin: number[][] = Array.from({ length: edges.length + 1 }, () => []);
    raw[j].forEach((x, r) => byBin[binOf(x)].push(fs[r]));
    let weighted = 0;
    const quantiles = byBin.map((v) => {
      const f = Float64Array.from(v).sort();
      const [lo, hi] = trimmedRange(f, BIN_TRIM);
      weighted += f.length * (hi - lo);
      const kept = f.filter((x) => x >= lo && x <= hi);
      return Array.from({ length: 17 }, (_, k) => Number(Math.exp(quantile(kept, k / 16)).toPrecision(8)));
    });
    const score = weighted / (m * window);
    if (score <= BINS_NARROW && (best === undefined || score < best.score)) best = { score, bins: { part: rule.parts[j], edges, quantiles } };
  }
  return best !== undefined ? { ...rule, bins: best.bins } : undefined;
}

/**
 * The factor k of `total = k · prod parts^powers` that every row with all columns positive
 * allows within {@link ratioTolerance}: the number of fewest significant digits in the
 * intersection of the rows' intervals; undefined when they share no k (or no row has them all).
 */
export function ratioFactor(total: Col, parts: readonly Col[], powers: readonly number[], n: number): number | undefined {
  const dt = total.codec.stats.decimals ?? 0;
  const dp = parts.map((c) => c.codec.stats.decimals ?? 0);
  let [lo, hi] = [0, Infinity];
  const ks: number[] = [];
  for (let r = 0; r < n; r++) {
    const x = total.num![total.scan.ids[r]];
    const ps = parts.map((c) => c.num![c.scan.ids[r]]);
    if (!(x > 0) || !ps.every((p) => p > 0)) continue;
    const base = ratioValue(1, ps, powers)!;
    const w = ratioTolerance(x, dt, ps, dp);
    lo = Math.max(lo, (x - w) / base);
    hi = Math.min(hi, (x + w) / base);
    if (ks.length < SAMPLE) ks.push(x / base);
  }
  if (ks.length === 0 || lo > hi) return undefined;
  return simplestIn(lo, hi, Math.min(hi, Math.max(lo, median(ks))));
}
