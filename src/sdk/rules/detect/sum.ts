/**
 * Sums and linear identities `total = ±a ± b + k`, and sums of 3 to 12 parts, of numerical columns (criteria in `./index`,
 * {@link detectRules}; the rule shape is the contract's `SumRule`).
 */
import type { SumRule } from "../../../contract";
import { identityTolerance, sumCoefficients, sumRuleTolerance, weightDecimals } from "../sums";
import { RULE_LIMITS } from "./options";
import type { Col } from "./view";

/** A sign of a term, +1 or -1. */
export type Sign = 1 | -1;

/** Significant digits a double holds without noise, less one (the identities' arithmetic adds and rounds). */
const CLEAN_DIGITS = 14;

/**
 * A column's decimals as the identity search counts them: its written decimals, but no finer than
 * a double holds at its magnitude ({@link CLEAN_DIGITS}). A column written with a double's 17
 * digits (R's `0.52 - 0.48` is `0.040000000000000036`) would scale past 2^53 and never agree.
 */
function identityDecimals(c: Col): number {
  const d = c.codec.stats.decimals ?? 0;
  const top = Math.max(Math.abs(c.codec.stats.min ?? 0), Math.abs(c.codec.stats.max ?? 0));
  return Math.min(d, Math.max(0, CLEAN_DIGITS - Math.max(0, Math.ceil(Math.log10(top || 1)))));
}

/** Finest decimals of the columns ({@link identityDecimals}). */
function decimalsOf(cs: Col[]): number {
  return Math.max(...cs.map(identityDecimals));
}

/** The columns' {@link identityTolerance} (each column's own {@link identityDecimals}). */
function sumTolerance(cs: Col[]): number {
  return identityTolerance(cs.map(identityDecimals));
}

/** What {@link identityHolds} counted. */
export interface IdentityCount {
  /** Rows with every column present. */
  m: number;
  /** Of those, rows off the identity. */
  fails: number;
  /** First row off the identity, -1 when none (or when the scan stopped before one). */
  firstFail: number;
  /** Per column: rows off its most frequent value, and of those the rows off the identity. */
  off: number[];
  offFails: number[];
}

/**
 * Counts the rows where `sum_j signs[j] · cols[j] = constant` within the columns'
 * {@link identityTolerance}, over the rows with every column present; stops once more than
 * `maxFails` rows failed. `modes[j]`: the most frequent value of column j (NaN: none), for
 * `off`/`offFails`; `tolerance` replaces the columns' one (a weighted identity's).
 */
function identityHolds(cols: Col[], signs: readonly number[], constant: number, n: number, maxFails: number, modes?: readonly number[], tolerance?: number): IdentityCount {
  const tol = tolerance ?? sumTolerance(cols);
  const J = cols.length;
  const xs = cols.map((c) => c.num!);
  const ids = cols.map((c) => c.scan.ids);
  const mo = modes ?? cols.map(() => NaN);
  const off = cols.map(() => 0);
  const offFails = cols.map(() => 0);
  const v = new Float64Array(J);
  let m = 0;
  let fails = 0;
  let firstFail = -1;
  row: for (let r = 0; r < n; r++) {
    let s = -constant;
    let size = 0;
    for (let j = 0; j < J; j++) {
      const x = xs[j][ids[j][r]];
      if (Number.isNaN(x)) continue row;
      v[j] = x;
      s += signs[j] * x;
      size += Math.abs(x);
    }
    m++;
    const bad = Math.abs(s) > tol + 1e-12 * size;
    for (let j = 0; j < J; j++) {
      if (v[j] === mo[j]) continue;
      off[j]++;
      if (bad) offFails[j]++;
    }
    if (bad) {
      if (firstFail < 0) firstFail = r;
      if (++fails > maxFails) break;
    }
  }
  return { m, fails, firstFail, off, offFails };
}

/**
 * Rows where `total = sum_j signs[j]·parts[j] + constant` (1 to 12 parts) within the columns'
 * {@link identityTolerance}, over the rows with all of them present; stops once more than
 * `maxFails` rows failed.
 */
export function sumHolds(total: Col, parts: readonly Col[], n: number, maxFails: number, signs: readonly Sign[] = parts.map((): Sign => 1), constant = 0): IdentityCount {
  return identityHolds([total, ...parts], [1, ...signs.map((s) => -s)], constant, n, maxFails);
}

/** Rows where `total = sum_j signs[j]·parts[j] + constant` fails (all columns present). */
function failingRows(total: Col, parts: readonly Col[], n: number, signs: readonly number[], constant: number, tolerance?: number): number[] {
  const cols = [total, ...parts];
  const tol = tolerance ?? sumTolerance(cols);
  const rows: number[] = [];
  for (let r = 0; r < n; r++) {
    const xs = cols.map((c) => c.num![c.scan.ids[r]]);
    if (xs.some(Number.isNaN)) continue;
    const right = parts.reduce((acc, _, j) => acc + signs[j] * xs[j + 1], constant);
    if (Math.abs(xs[0] - right) > tol + 1e-12 * xs.reduce((acc, x) => acc + Math.abs(x), 0)) rows.push(r);
  }
  return rows;
}

/** The most frequent non-blank value of a column (NaN when it has none). */
export function modeOf(c: Col): number {
  let best = -1;
  let id = -1;
  c.scan.counts.forEach((cnt, v) => {
    if (v !== c.blank && cnt > best) [best, id] = [cnt, v];
  });
  return id < 0 ? NaN : c.num![id];
}

/** Sign patterns of x·A + y·B + z·C = k, up to the sign of the whole identity. */
const PATTERNS: readonly (readonly Sign[])[] = [
  [1, 1, -1],
  [1, -1, 1],
  [-1, 1, 1],
  [1, 1, 1],
];

/** Sign patterns of x·A + y·C = k: C = A + k, C = k - A. */
const PAIR_PATTERNS: readonly (readonly Sign[])[] = [
  [-1, 1],
  [1, 1],
];

/** Rows of the precheck sample (spread over the table). */
const SAMPLE = 64;

/**
 * Row indices of the precheck: {@link SAMPLE} rows spread evenly over the table, or, when fewer
 * than a quarter of them have all of `cols` present, the first {@link SAMPLE} rows that have.
 */
function sampleRows(cols: Col[], n: number): number[] {
  const present = (r: number) => cols.every((c) => !Number.isNaN(c.num![c.scan.ids[r]]));
  const spread: number[] = [];
  const step = Math.max(1, n / SAMPLE);
  for (let t = 0; t * step < n && spread.length < SAMPLE; t++) {
    const r = Math.floor(t * step + step / 2) % n;
    if (present(r)) spread.push(r);
  }
  if (spread.length >= Math.min(SAMPLE, n) / 4) return spread;
  const first: number[] = [];
  for (let r = 0; r < n && first.length < SAMPLE; r++) if (present(r)) first.push(r);
  return first;
}

/**
 * The constant k (in units of 10^-d, an integer) that at least half the sample's rows give for
 * `sum_j signs[j] · cols[j]`, or undefined.
 */
function sampledConstant(sample: readonly number[], cols: Col[], signs: readonly Sign[], scale: number): number | undefined {
  if (sample.length === 0) return undefined;
  const seen = new Map<number, number>();
  let best: number | undefined;
  let bestCount = 0;
  for (const r of sample) {
    let k = 0;
    for (let j = 0; j < cols.length; j++) k += signs[j] * Math.round(cols[j].num![cols[j].scan.ids[r]] * scale);
    const c = (seen.get(k) ?? 0) + 1;
    seen.set(k, c);
    if (c > bestCount) [best, bestCount] = [k, c];
  }
  return 2 * bestCount >= sample.length ? best : undefined;
}

/**
 * The identity x·A + y·B + z·C = k (columns in table order) as a {@link SumRule}: a plain sum
 * `total = a + b` when one column's sign differs from the other two and k = 0 (that column is the
 * total); otherwise the last column in table order is the total, `total = ±a ± b + constant`.
 * Of two columns x·A + y·C = k, C is the total: `C = ±A + constant`.
 */
function asRule(cols: Col[], signs: readonly Sign[], constant: number, share: number): SumRule {
  const J = cols.length;
  const lone = J === 3 ? signs.findIndex((s, j) => signs.filter((t, i) => i !== j && t !== s).length === 2) : -1;
  const t = constant === 0 && lone >= 0 ? lone : J - 1;
  const parts = cols.map((_, j) => j).filter((j) => j !== t);
  // signs[t]·T + sum_p signs[p]·P = k  =>  T = -signs[t]·(sum_p signs[p]·P - k)
  const ps = parts.map((j) => -signs[t] * signs[j]) as Sign[];
  const k = signs[t] * constant + 0;
  const rule: SumRule = { type: "sum", total: cols[t].name, parts: parts.map((j) => cols[j].name), share };
  if (ps.some((s) => s !== 1)) rule.signs = ps;
  if (k !== 0) rule.constant = k;
  return rule;
}

/** A candidate sum of the subset-sum search: `cols[total] = sum_j cols[parts[j]]` (indices of `cols`). */
interface SumCandidate {
  total: number;
  parts: number[];
}

/**
 * Rows of the subset-sum search: of {@link SAMPLE}·4 rows spread over the table, the
 * {@link RULE_LIMITS}.sumSearchRows with the most columns present and off their mode (ties: table
 * order), so a part that is mostly its mode (0) shows in the search where the table lets it.
 */
function searchRows(cols: Col[], modes: readonly number[], n: number): number[] {
  const step = Math.max(1, n / (4 * SAMPLE));
  const scored: [number, number][] = [];
  for (let t = 0; t * step < n && scored.length < 4 * SAMPLE; t++) {
    const r = Math.floor(t * step + step / 2) % n;
    let score = 0;
    cols.forEach((c, j) => {
      const x = c.num![c.scan.ids[r]];
      if (!Number.isNaN(x) && x !== modes[j]) score++;
    });
    scored.push([score, r]);
  }
  scored.sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  return scored.slice(0, RULE_LIMITS.sumSearchRows).map(([, r]) => r);
}

/**
 * Candidate sums of 3 to {@link RULE_LIMITS}.maxSumParts parts: per total, a depth-first
 * subset-sum search over the other columns on the rows of {@link searchRows} at once (a vector
 * subset sum; Horowitz & Sahni's branch and bound, J. ACM 21(2), 1974), parts taken largest first.
 * A branch stops when no choice of the columns left can bring every row's sum within the
 * tolerance of its total (bounds: each row's sums of the left columns' negative and positive
 * values), and a set that reaches every total is a candidate (not extended further). Columns blank
 * in a search row, or 0 in all of them, take no part (the sample cannot place them). At most
 * {@link RULE_LIMITS}.sumSearchNodes nodes and 64 candidates per total. Signs are +1: over
 * non-negative columns `t = a - b - c` is the sum `a = t + b + c`, found with `a` as the total.
 * Cost: O(columns · nodes · rows); memory O(columns² · rows).
 */
function manyPartCandidates(cols: Col[], modes: readonly number[], n: number): SumCandidate[] {
  const rows = searchRows(cols, modes, n);
  const R = rows.length;
  const most = RULE_LIMITS.maxSumParts;
  if (R < Math.min(RULE_LIMITS.sumSearchRows, n) || cols.length < 4) return [];
  const vals = cols.map((c) => rows.map((r) => c.num![c.scan.ids[r]]));
  const decs = cols.map(identityDecimals);
  const usable = cols.map((_, j) => j).filter((j) => vals[j].every((x) => !Number.isNaN(x)) && vals[j].some((x) => x !== 0));
  const out: SumCandidate[] = [];
  for (const t of usable) {
    const target = vals[t];
    const cand = usable.filter((j) => j !== t);
    const size = (j: number) => vals[j].reduce((acc, x) => acc + Math.abs(x), 0);
    cand.sort((a, b) => size(b) - size(a) || a - b);
    const m = cand.length;
    const xs = cand.map((j) => vals[j]);
    // lo/hi[i·R + r]: the least and greatest sum of row r over subsets of cand[i..].
    const lo = new Float64Array((m + 1) * R);
    const hi = new Float64Array((m + 1) * R);
    for (let i = m - 1; i >= 0; i--) {
      for (let r = 0; r < R; r++) {
        lo[i * R + r] = lo[(i + 1) * R + r] + Math.min(0, xs[i][r]);
        hi[i * R + r] = hi[(i + 1) * R + r] + Math.max(0, xs[i][r]);
      }
    }
    const slack = identityTolerance([decs[t], ...cand.map((j) => decs[j])]) + 1e-12 * Math.max(...target.map(Math.abs));
    // level[d]: each row's sum of the d parts chosen (one array per depth: no float drift).
    const level = Array.from({ length: most + 1 }, () => new Float64Array(R));
    const chosen: number[] = [];
    let nodes = 0;
    const found: SumCandidate[] = [];
    const reaches = (sums: Float64Array, i: number): boolean => {
      for (let r = 0; r < R; r++) {
        if (sums[r] + lo[i * R + r] > target[r] + slack || sums[r] + hi[i * R + r] < target[r] - slack) return false;
      }
      return true;
    };
    const visit = (i: number): void => {
      const [sums, next] = [level[chosen.length], level[chosen.length + 1]];
      for (let c = i; c < m && reaches(sums, c); c++) {
        if (++nodes > RULE_LIMITS.sumSearchNodes || found.length >= 64) return;
        for (let r = 0; r < R; r++) next[r] = sums[r] + xs[c][r];
        chosen.push(c);
        const near = target.every((x, r) => Math.abs(x - next[r]) <= slack);
        const tol = near ? identityTolerance([decs[t], ...chosen.map((k) => decs[cand[k]])]) : 0;
        if (near && target.every((x, r) => Math.abs(x - next[r]) <= tol + 1e-12 * Math.abs(x))) {
          if (chosen.length >= 3) found.push({ total: t, parts: chosen.map((k) => cand[k]).sort((a, b) => a - b) });
        } else if (chosen.length < most) visit(c + 1);
        chosen.pop();
      }
    };
    visit(0);
    out.push(...found);
  }
  return out;
}

/**
 * Weights a part of a weighted identity may carry: units of counting and time (dozens, weeks, days,
 * hours, minutes) and powers of ten (hundredths: `Round + Pick / 100`; thousands).
 */
const WEIGHTS: readonly number[] = [2, 7, 10, 12, 24, 60, 100, 1000, 3600, 0.5, 0.1, 0.01, 0.001];

/**
 * A weighted identity of three columns, `a ± b ± w·c = k` with w of {@link WEIGHTS}, as a
 * {@link SumRule} whose total is a or b (never the weighted column: its weight would become 1/w),
 * or undefined. Per choice of the weighted column c and sign of b: w is read off neighbouring
 * sample rows (the constant cancels in differences: w = -(Δa ± Δb) / Δc), and taken when at least
 * half of the pairs with Δc != 0 give one weight of the list; k is then the constant at least half
 * the sample rows give (exact decimal arithmetic), and the identity is judged on every row as a
 * plain one is (share >= 0.99 over all rows and over each column's rows off its mode). The total:
 * the column whose sign differs from the other two when k = 0 and it is not c, else the later of a
 * and b in table order.
 */
function weightedIdentity(cs: Col[], n: number, maxFails: number, modes: readonly number[]): SumRule | undefined {
  const sample = sampleRows(cs, n);
  if (sample.length < Math.min(RULE_LIMITS.minRows, n)) return undefined;
  const v = cs.map((c) => sample.map((r) => c.num![c.scan.ids[r]]));
  for (let c = 0; c < 3; c++) {
    const [a, b] = [0, 1, 2].filter((j) => j !== c);
    for (const sb of [1, -1]) {
      const votes = new Map<number, number>();
      let pairs = 0;
      for (let q = 1; q < sample.length; q++) {
        const dc = v[c][q] - v[c][q - 1];
        if (dc === 0) continue;
        pairs++;
        const w = -(v[a][q] - v[a][q - 1] + sb * (v[b][q] - v[b][q - 1])) / dc;
        const hit = WEIGHTS.find((x) => Math.abs(Math.abs(w) - x) <= 1e-9 * x);
        if (hit !== undefined) votes.set(Math.sign(w) * hit, (votes.get(Math.sign(w) * hit) ?? 0) + 1);
      }
      const [w, count] = [...votes].sort((x, y) => y[1] - x[1])[0] ?? [0, 0];
      if (pairs < RULE_LIMITS.minRows || 2 * count < pairs) continue;
      const coef = [0, 0, 0];
      [coef[a], coef[b], coef[c]] = [1, sb, w];
      const scale = 10 ** (decimalsOf(cs) + (weightDecimals(Math.abs(w)) ?? 6));
      const seen = new Map<number, number>();
      for (const r of sample) {
        const k = Math.round(cs.reduce((acc, col, j) => acc + coef[j] * Math.round(col.num![col.scan.ids[r]] * scale), 0));
        seen.set(k, (seen.get(k) ?? 0) + 1);
      }
      const [kk, kc] = [...seen].sort((x, y) => y[1] - x[1])[0];
      if (2 * kc < sample.length) continue;
      const constant = kk / scale;
      const tol = sumRuleTolerance([a, b, c].map((j) => identityDecimals(cs[j])), [1, Math.abs(w)]);
      const s = identityHolds(cs, coef, constant, n, maxFails, modes, tol);
      if (s.fails > maxFails || s.m < RULE_LIMITS.minRows) continue;
      const share = (s.m - s.fails) / s.m;
      if (share < RULE_LIMITS.share || !s.off.every((o, x) => o >= RULE_LIMITS.minTermRows && (o - s.offFails[x]) / o >= RULE_LIMITS.share)) continue;
      const sg = coef.map(Math.sign);
      const lone = [0, 1, 2].find((j) => sg.filter((t, i) => i !== j && t !== sg[j]).length === 2);
      const t = kk === 0 && lone !== undefined && lone !== c ? lone : Math.max(a, b);
      // coef[t]·T + sum_p coef[p]·P = k  =>  T = coef[t]·k - sum_p coef[t]·coef[p]·P (coef[t] = ±1).
      const parts = [0, 1, 2].filter((j) => j !== t);
      const rule: SumRule = { type: "sum", total: cs[t].name, parts: parts.map((j) => cs[j].name), share };
      const ps = parts.map((j) => -coef[t] * coef[j]);
      if (ps.some((x) => x < 0)) rule.signs = ps.map((x) => (x < 0 ? -1 : 1));
      rule.weights = ps.map(Math.abs);
      if (coef[t] * constant !== 0) rule.constant = coef[t] * constant;
      return rule;
    }
  }
  return undefined;
}

/** Linear independence of identities' coefficient vectors (Gaussian elimination, kept reduced). */
class IdentityBasis {
  private readonly rows: { v: Float64Array; pivot: number }[] = [];
  constructor(private readonly size: number) {}
  /** The coefficient vector of `cols[total] - sum_j signs[j]·cols[parts[j]]` (signs: any coefficients, weights included). */
  vector(total: number, parts: readonly number[], signs?: readonly number[]): Float64Array {
    const v = new Float64Array(this.size);
    v[total] = 1;
    parts.forEach((p, j) => (v[p] -= signs?.[j] ?? 1));
    return v;
  }
  /** `v` less its part in the span of the kept vectors; all ~0 when the kept identities imply it. */
  private reduce(v: Float64Array): Float64Array {
    const w = Float64Array.from(v);
    for (const { v: b, pivot } of this.rows) {
      const f = w[pivot] / b[pivot];
      if (f !== 0) for (let i = 0; i < w.length; i++) w[i] -= f * b[i];
    }
    return w;
  }
  /** Whether the kept identities imply the one of `v`. */
  implies(v: Float64Array): boolean {
    return this.reduce(v).every((x) => Math.abs(x) < 1e-9);
  }
  /** Keeps the identity of `v`; false (nothing kept) when the kept ones imply it. */
  add(v: Float64Array): boolean {
    const w = this.reduce(v);
    let pivot = 0;
    for (let i = 1; i < w.length; i++) if (Math.abs(w[i]) > Math.abs(w[pivot])) pivot = i;
    if (Math.abs(w[pivot]) < 1e-9) return false;
    this.rows.push({ v: w, pivot });
    return true;
  }
}

/**
 * Sums and linear identities (criteria in {@link detectRules}). First identities of one part,
 * C = ±A + k, per pair of numerical columns (table order): each column joins the first earlier
 * column it is such an identity of, so equal columns make one star around the first, never a
 * cycle; a pair that some rows break must hold in >= 99% of the rows where any other column is
 * off its mode (>= 5 rows), so a sparse part's rows that break C = A leave it to a triple. Then
 * identities of two parts per triple of the columns no one-part identity derives (a triple with a
 * derived column restates one without it); then, of the triples with none, weighted ones
 * ({@link weightedIdentity}: `x = Round + 0.01 · Pick`) that the identities kept do not imply. Per pair or triple and sign pattern, a precheck on a
 * sample of rows finds the constant at least half of them give (none: no identity); the full scan
 * then judges it on every row, and on the rows where each column is off its most frequent value
 * (a part that is almost always 0 is judged on the rows where it is not). Then sums of 3 to 12
 * parts ({@link manyPartCandidates}), fewest parts first, judged the same way; one that the
 * identities already kept imply (a linear combination of them: with a = b + c and b = d + e, a =
 * c + d + e) is left out, so each is the fewest-part one found. Two-part identities are all kept,
 * implied or not: each names a total, and the decoder writes totals from parts.
 */
export function detectSums(cols: Col[], n: number): SumRule[] {
  const elig = cols.filter((c) => c.codec.kind === "numerical" && c.num && c.nonBlank >= 2).slice(0, RULE_LIMITS.maxSumColumns);
  const modes = elig.map(modeOf);
  const maxFails = Math.floor((1 - RULE_LIMITS.share) * n);
  const identity = (idx: readonly number[], patterns: readonly (readonly Sign[])[]): SumRule | undefined => {
    const cs = idx.map((i) => elig[i]);
    const scale = 10 ** decimalsOf(cs);
    const sample = sampleRows(cs, n);
    if (sample.length < Math.min(RULE_LIMITS.minRows, n)) return undefined;
    for (const signs of patterns) {
      const k = sampledConstant(sample, cs, signs, scale);
      if (k === undefined) continue;
      const constant = k / scale;
      const s = identityHolds(cs, signs, constant, n, maxFails, idx.map((i) => modes[i]));
      if (s.fails > maxFails || s.m < RULE_LIMITS.minRows) continue;
      const share = (s.m - s.fails) / s.m;
      if (share < RULE_LIMITS.share) continue;
      const judged = s.off.every((o, x) => o >= RULE_LIMITS.minTermRows && (o - s.offFails[x]) / o >= RULE_LIMITS.share);
      if (judged) return asRule(cs, signs, constant, share);
    }
    return undefined;
  };
  const E = elig.length;
  // An identity that fails in a few rows is judged, like its columns, on the rows where each other
  // column is off its mode: total = other fails on every row where repair is not 0.
  const offMode = (x: number): boolean[] => {
    const c = elig[x];
    return Array.from(c.scan.ids, (id) => !Number.isNaN(c.num![id]) && c.num![id] !== modes[x]);
  };
  const offRows: (boolean[] | undefined)[] = [];
  const holdsOffModes = (idx: readonly number[], rule: SumRule): boolean => {
    const [t, ...ps] = idx;
    const tol = sumRuleTolerance([t, ...ps].map((i) => identityDecimals(elig[i])), rule.weights);
    const fails = failingRows(elig[t], ps.map((i) => elig[i]), n, sumCoefficients(rule), rule.constant ?? 0, tol);
    for (let x = 0; x < E; x++) {
      if (idx.includes(x)) continue;
      const off = (offRows[x] ??= offMode(x));
      let o = 0;
      for (const isOff of off) if (isOff) o++;
      const f = fails.filter((r) => off[r]).length;
      if (o >= RULE_LIMITS.minTermRows && (o - f) / o < RULE_LIMITS.share) return false;
    }
    return true;
  };
  const rules: SumRule[] = [];
  const derived = new Array<boolean>(E).fill(false);
  for (let l = 1; l < E; l++) {
    for (let i = 0; i < l; i++) {
      if (derived[i]) continue;
      const rule = identity([i, l], PAIR_PATTERNS);
      if (!rule || (rule.share < 1 && !holdsOffModes([l, i], rule))) continue;
      rules.push(rule);
      derived[l] = true;
      break;
    }
  }
  const free = elig.map((_, i) => i).filter((i) => !derived[i]);
  const index = new Map(elig.map((c, i) => [c.name, i]));
  const basis = new IdentityBasis(E);
  const keep = (rule: SumRule): boolean => basis.add(basis.vector(index.get(rule.total)!, rule.parts.map((p) => index.get(p)!), sumCoefficients(rule)));
  const plain: number[][] = [];
  for (let i = 0; i < free.length; i++) {
    for (let j = i + 1; j < free.length; j++) {
      for (let l = j + 1; l < free.length; l++) {
        // A two-part identity the others imply is kept all the same: it names a total the decoder
        // then writes (service = private services + government beside nonfarm = goods + service).
        const rule = identity([free[i], free[j], free[l]], PATTERNS);
        if (rule) {
          keep(rule);
          rules.push(rule);
        } else plain.push([free[i], free[j], free[l]]);
      }
    }
  }
  // Weighted identities (x = Round + 0.01 · Pick) of the triples with no plain one, unless implied.
  for (const idx of plain) {
    const rule = weightedIdentity(idx.map((i) => elig[i]), n, maxFails, idx.map((i) => modes[i]));
    if (!rule || basis.implies(basis.vector(index.get(rule.total)!, rule.parts.map((p) => index.get(p)!), sumCoefficients(rule)))) continue;
    if (rule.share < 1 && !holdsOffModes([rule.total, ...rule.parts].map((c) => index.get(c)!), rule)) continue;
    keep(rule);
    rules.push(rule);
  }
  // Sums of 3+ parts: fewest parts first, each unless the identities kept imply it.
  const cands = manyPartCandidates(free.map((i) => elig[i]), free.map((i) => modes[i]), n)
    .map((c) => ({ total: free[c.total], parts: c.parts.map((p) => free[p]) }))
    .sort((a, b) => a.parts.length - b.parts.length || a.total - b.total);
  for (const c of cands) {
    if (basis.implies(basis.vector(c.total, c.parts))) continue;
    const idx = [c.total, ...c.parts];
    const cs = idx.map((i) => elig[i]);
    const s = identityHolds(cs, [1, ...c.parts.map(() => -1)], 0, n, maxFails, idx.map((i) => modes[i]));
    if (s.fails > maxFails || s.m < RULE_LIMITS.minRows) continue;
    const share = (s.m - s.fails) / s.m;
    if (share < RULE_LIMITS.share || !s.off.every((o, x) => o >= RULE_LIMITS.minTermRows && (o - s.offFails[x]) / o >= RULE_LIMITS.share)) continue;
    const rule: SumRule = { type: "sum", total: cs[0].name, parts: cs.slice(1).map((col) => col.name), share };
    if (share < 1 && !holdsOffModes(idx, rule)) continue;
    if (keep(rule)) rules.push(rule);
  }
  return rules;
}
