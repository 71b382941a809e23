/**
 * Sums and linear identities `total = ±a ± b + k` of numerical columns (criteria in `./index`,
 * {@link detectRules}; the rule shape is the contract's `SumRule`).
 */
import type { SumRule } from "../../../contract";
import { RULE_LIMITS } from "./options";
import type { Col } from "./view";

/** A sign of a term, +1 or -1. */
export type Sign = 1 | -1;

/** Finest decimals of the columns. */
function decimalsOf(cs: Col[]): number {
  return Math.max(...cs.map((c) => c.codec.stats.decimals ?? 0));
}

/** Half a unit of the finest decimals of the columns, plus a hair for binary floating point. */
function sumTolerance(cs: Col[]): number {
  return 0.5 * 10 ** -decimalsOf(cs) * (1 + 1e-9);
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
 * Counts the rows where `sum_j signs[j] · cols[j] = constant` within half a unit of the columns'
 * finest decimals, over the rows with every column present; stops once more than `maxFails` rows
 * failed. `modes[j]`: the most frequent value of column j (NaN: none), for `off`/`offFails`.
 * Two or three columns.
 */
function identityHolds(cols: Col[], signs: readonly number[], constant: number, n: number, maxFails: number, modes?: readonly number[]): IdentityCount {
  const tol = sumTolerance(cols);
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
 * Rows where `total = sum_j signs[j]·parts[j] + constant` (one or two parts) within half a unit of
 * the finest decimals of the columns, over the rows with all of them present; stops once more than
 * `maxFails` rows failed.
 */
export function sumHolds(total: Col, parts: readonly Col[], n: number, maxFails: number, signs: readonly Sign[] = parts.map((): Sign => 1), constant = 0): IdentityCount {
  return identityHolds([total, ...parts], [1, ...signs.map((s) => -s)], constant, n, maxFails);
}

/** Rows where `total = sum_j signs[j]·parts[j] + constant` fails (all columns present). */
function failingRows(total: Col, parts: readonly Col[], n: number, signs: readonly number[], constant: number): number[] {
  const cols = [total, ...parts];
  const tol = sumTolerance(cols);
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
function modeOf(c: Col): number {
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

/**
 * Sums and linear identities (criteria in {@link detectRules}). First identities of one part,
 * C = ±A + k, per pair of numerical columns (table order): each column joins the first earlier
 * column it is such an identity of, so equal columns make one star around the first, never a
 * cycle; a pair that some rows break must hold in >= 99% of the rows where any other column is
 * off its mode (>= 5 rows), so a sparse part's rows that break C = A leave it to a triple. Then identities of two parts per triple of the columns no one-part identity derives (a
 * triple with a derived column restates one without it). Per pair or triple and sign pattern, a
 * precheck on a sample of rows finds the constant at least half of them give (none: no identity);
 * the full scan then judges it on every row, and on the rows where each column is off its most
 * frequent value (a part that is almost always 0 is judged on the rows where it is not).
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
  // A pair that fails in a few rows is judged, like the columns of an identity, on the rows where
  // each other column is off its mode: total = other fails on every row where repair is not 0.
  const offMode = (x: number): boolean[] => {
    const c = elig[x];
    return Array.from(c.scan.ids, (id) => !Number.isNaN(c.num![id]) && c.num![id] !== modes[x]);
  };
  const offRows: (boolean[] | undefined)[] = [];
  const holdsOffModes = (i: number, l: number, rule: SumRule): boolean => {
    const fails = failingRows(elig[l], [elig[i]], n, rule.signs ?? [1], rule.constant ?? 0);
    for (let x = 0; x < E; x++) {
      if (x === i || x === l) continue;
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
      if (!rule || (rule.share < 1 && !holdsOffModes(i, l, rule))) continue;
      rules.push(rule);
      derived[l] = true;
      break;
    }
  }
  const free = elig.map((_, i) => i).filter((i) => !derived[i]);
  for (let i = 0; i < free.length; i++) {
    for (let j = i + 1; j < free.length; j++) {
      for (let l = j + 1; l < free.length; l++) {
        const rule = identity([free[i], free[j], free[l]], PATTERNS);
        if (rule) rules.push(rule);
      }
    }
  }
  return rules;
}
