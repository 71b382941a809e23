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
 */
function identityHolds(cols: Col[], signs: readonly number[], constant: number, n: number, maxFails: number, modes?: readonly number[]): IdentityCount {
  const tol = sumTolerance(cols);
  const [x0, x1, x2] = cols.map((c) => c.num!);
  const [i0, i1, i2] = cols.map((c) => c.scan.ids);
  const [s0, s1, s2] = signs;
  const mo = modes ?? [NaN, NaN, NaN];
  const off = [0, 0, 0];
  const offFails = [0, 0, 0];
  let m = 0;
  let fails = 0;
  let firstFail = -1;
  for (let r = 0; r < n; r++) {
    const a = x0[i0[r]];
    const b = x1[i1[r]];
    const c = x2[i2[r]];
    if (Number.isNaN(a) || Number.isNaN(b) || Number.isNaN(c)) continue;
    m++;
    const bad = Math.abs(s0 * a + s1 * b + s2 * c - constant) > tol + 1e-12 * (Math.abs(a) + Math.abs(b) + Math.abs(c));
    const fail = bad ? 1 : 0;
    if (a !== mo[0]) {
      off[0]++;
      offFails[0] += fail;
    }
    if (b !== mo[1]) {
      off[1]++;
      offFails[1] += fail;
    }
    if (c !== mo[2]) {
      off[2]++;
      offFails[2] += fail;
    }
    if (bad) {
      if (firstFail < 0) firstFail = r;
      if (++fails > maxFails) break;
    }
  }
  return { m, fails, firstFail, off, offFails };
}

/**
 * Rows where `total = signs[0]·a + signs[1]·b + constant` within half a unit of the finest decimals
 * of the three, over the rows with all three present; stops once more than `maxFails` rows failed.
 */
export function sumHolds(total: Col, a: Col, b: Col, n: number, maxFails: number, signs: readonly Sign[] = [1, 1], constant = 0): IdentityCount {
  return identityHolds([total, a, b], [1, -signs[0], -signs[1]], constant, n, maxFails);
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
    for (let j = 0; j < 3; j++) k += signs[j] * Math.round(cols[j].num![cols[j].scan.ids[r]] * scale);
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
 */
function asRule(cols: Col[], signs: readonly Sign[], constant: number, share: number): SumRule {
  const lone = signs.findIndex((s, j) => signs.filter((t, i) => i !== j && t !== s).length === 2);
  const t = constant === 0 && lone >= 0 ? lone : 2;
  const parts = [0, 1, 2].filter((j) => j !== t);
  // signs[t]·T + signs[p]·P + signs[q]·Q = k  =>  T = -signs[t]·(signs[p]·P + signs[q]·Q - k)
  const ps = parts.map((j) => -signs[t] * signs[j]) as Sign[];
  const k = signs[t] * constant + 0;
  const rule: SumRule = { type: "sum", total: cols[t].name, parts: [cols[parts[0]].name, cols[parts[1]].name], share };
  if (ps.some((s) => s !== 1)) rule.signs = ps;
  if (k !== 0) rule.constant = k;
  return rule;
}

/**
 * Sums and linear identities (criteria in {@link detectRules}). Per triple of numerical columns
 * (table order) and sign pattern, a precheck on a sample of rows finds the constant at least half
 * of them give (none: no identity); the full scan then judges it on every row, and on the rows
 * where each column is off its most frequent value (a part that is almost always 0 is judged on
 * the rows where it is not).
 */
export function detectSums(cols: Col[], n: number): SumRule[] {
  const elig = cols.filter((c) => c.codec.kind === "numerical" && c.num && c.nonBlank >= 2).slice(0, RULE_LIMITS.maxSumColumns);
  const modes = elig.map(modeOf);
  const maxFails = Math.floor((1 - RULE_LIMITS.share) * n);
  const rules: SumRule[] = [];
  const E = elig.length;
  for (let i = 0; i < E; i++) {
    for (let j = i + 1; j < E; j++) {
      for (let l = j + 1; l < E; l++) {
        const tri = [elig[i], elig[j], elig[l]];
        const scale = 10 ** decimalsOf(tri);
        const sample = sampleRows(tri, n);
        if (sample.length < Math.min(RULE_LIMITS.minRows, n)) continue;
        for (const signs of PATTERNS) {
          const k = sampledConstant(sample, tri, signs, scale);
          if (k === undefined) continue;
          const constant = k / scale;
          const s = identityHolds(tri, signs, constant, n, maxFails, [modes[i], modes[j], modes[l]]);
          if (s.fails > maxFails || s.m < RULE_LIMITS.minRows) continue;
          const share = (s.m - s.fails) / s.m;
          if (share < RULE_LIMITS.share) continue;
          const judged = s.off.every((o, x) => o >= RULE_LIMITS.minTermRows && (o - s.offFails[x]) / o >= RULE_LIMITS.share);
          if (!judged) continue;
          rules.push(asRule(tri, signs, constant, share));
          break;
        }
      }
    }
  }
  return rules;
}
