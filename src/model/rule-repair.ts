/**
 * Fixed-combination rules kept in the calibration pool, before raking (docs/api.md "Row rules"):
 * a pool row whose tuple of codes over a rule's columns is not one of the rule's released
 * combinations takes one that is, and raking then re-weights the repaired pool to the given 1-way
 * and 2-way marginals. The SDK keeps every rule on the decoded rows too
 * (`sdk/rules/enforce.ts`); it repairs with the same scores, but after the draw, where nothing
 * can correct what a repair moves away from the marginals. Repairing before raking lets raking
 * put the rows' other columns back in line with the repaired ones (a route's distance): on
 * flights (one model, seed 0, 20,000 rows) the 2-way TVD of the calibrated draw with its rules
 * kept went from 0.0457 (repaired after the draw only) to 0.0315 (0.0419 with the rules broken in
 * 12.5% of the rows; 0.0378 for a resample of the real table).
 *
 * Method, per rule (`metadata.rules` of type `fixed_combinations`):
 * - A row is judged when none of its rule cells holds the pooled `__other__` or the blank code
 *   (a pooled cell stands for a rare value, decoded by the SDK); it breaks the rule when its tuple
 *   is not a released combination.
 * - Quotas: a released combination (no pooled code) has quota count / total count times the rows
 *   that end on a released combination (judged rows: those kept plus those repaired).
 * - Broken rows, in a random order (the pool's own seed), take a combination among those sharing
 *   at least one of the row's codes (all of them when none does, as the SDK), with probability proportional to the combination's shortfall
 *   against its quota (at least 1% of the quota) times the naive-Bayes likelihood of the row's
 *   other codes given it (2-way marginals of the metadata between a rule column and another
 *   column), raised to `LIKELIHOOD_POWER` (`../rule-scores`, shared with the SDK).
 */
import { combinationsByCode, LIKELIHOOD_POWER, pairConditionals, quotaScore, type PairConditional } from "../rule-scores";
import type { Metadata } from "../types";
import { Rng } from "./rng";


/** One fixed-combinations rule in the pool's feature order, ready to repair rows. */
export interface PoolRule {
  /** Pool feature index of each rule column. */
  features: number[];
  /** Released combinations with no pooled code: the repair targets. */
  targets: Int32Array[];
  /** Count of each target in the real table. */
  counts: Float64Array;
  /** Keys of every released combination (pooled ones included). */
  allowed: Set<number>;
  /** Per rule column: codes that leave a row unjudged (pooled, blank). */
  open: Set<number>[];
  /** Per rule column: code -> targets holding it. */
  byCode: Map<number, number[]>[];
  /** Per rule column: conditionals P(g | rule column) of other features g, K_rule x K_g row-major. */
  conditionals: PairConditional[][];
  /** Mixed-radix key of a tuple. */
  radix: number[];
}

/**
 * The metadata's fixed-combinations rules over the pool's features (`features`: names in the
 * pool's column order); rules over a feature the pool lacks, or whose tuples cannot be keyed
 * exactly (code books whose product passes 2^53), are left out.
 */
export function poolRules(metadata: Metadata, features: readonly string[]): PoolRule[] {
  const out: PoolRule[] = [];
  for (const rule of metadata.rules ?? []) {
    if (rule.type !== "fixed_combinations") continue;
    const idx = rule.columns.map((c) => features.indexOf(c));
    if (idx.some((i) => i < 0)) continue;
    const radix = rule.columns.map((c) => metadata.cardinalities[c] ?? 1);
    if (radix.reduce((a, k) => a * k, 1) >= Number.MAX_SAFE_INTEGER) continue;
    const m = idx.length;
    const key = (t: ArrayLike<number>): number => {
      let k = 0;
      for (let j = 0; j < m; j++) k = k * radix[j] + t[j];
      return k;
    };
    const pooled = rule.columns.map((c) => metadata.value_mappings?.[c]?.["__other__"]);
    const open = rule.columns.map((c, j) => new Set([pooled[j], metadata.value_mappings?.[c]?.[""]].filter((x): x is number => x !== undefined)));
    const targets: Int32Array[] = [];
    const counts: number[] = [];
    rule.combinations.forEach((t, i) => {
      if (t.length !== m || t.some((c, j) => c === pooled[j])) return;
      targets.push(Int32Array.from(t));
      counts.push(rule.counts[i] ?? 1);
    });
    if (targets.length === 0) continue;
    const byCode = combinationsByCode(targets, m);
    const conditionals = pairConditionals(metadata, features, idx);
    out.push({ features: idx, targets, counts: Float64Array.from(counts), allowed: new Set(rule.combinations.filter((t) => t.length === m).map(key)), open, byCode, conditionals, radix });
  }
  return out;
}

/** Rules whose tuples have at most this many keys are classified through a dense table (4 MiB). */
const DENSE_KEYS = 1 << 20;

/**
 * Repairs, in place, the pool rows that break `rules` (method in the file header).
 * @param pool one Int32Array of M codes per feature (the pool's feature order of {@link poolRules}).
 * @param seed seeds the repair order and draws (the same pool and seed give the same repairs).
 * @returns the rows repaired.
 */
export function repairPool(pool: Int32Array[], rules: readonly PoolRule[], seed: number): number {
  const rng = Rng.fromSeed(seed);
  const M = pool[0]?.length ?? 0;
  let repaired = 0;
  for (const r of rules) {
    const m = r.features.length;
    const cols = r.features.map((f) => pool[f]);
    const key = (row: number): number => {
      let k = 0;
      for (let j = 0; j < m; j++) k = k * r.radix[j] + cols[j][row];
      return k;
    };
    const targetIndex = new Map<number, number>();
    r.targets.forEach((t, i) => {
      let k = 0;
      for (let j = 0; j < m; j++) k = k * r.radix[j] + t[j];
      targetIndex.set(k, i);
    });
    // Lookups by code and by key in typed arrays where the codes allow (the sets and maps give
    // the same answers; they cost most of the pass over the pool).
    const openCode = r.open.map((set, j) => {
      const flags = new Uint8Array(r.radix[j]);
      for (const c of set) if (c >= 0 && c < flags.length) flags[c] = 1;
      return flags;
    });
    let keys = 1;
    for (const x of r.radix) keys *= x;
    // Per key: -2 not allowed, -1 allowed but not a target, else the target's index.
    let keyClass: Int32Array | undefined;
    if (keys <= DENSE_KEYS) {
      keyClass = new Int32Array(keys).fill(-2);
      for (const k of r.allowed) if (k >= 0 && k < keys) keyClass[k] = -1;
      for (const [k, t] of targetIndex) keyClass[k] = t;
    }
    const held = new Float64Array(r.targets.length);
    const broken: number[] = [];
    let judged = 0;
    for (let i = 0; i < M; i++) {
      let open = false;
      for (let j = 0; j < m; j++) {
        const c = cols[j][i];
        if (c >= 0 && c < openCode[j].length ? openCode[j][c] === 1 : r.open[j].has(c)) open = true;
      }
      if (open) continue;
      const k = key(i);
      const cls = keyClass ? keyClass[k] : !r.allowed.has(k) ? -2 : (targetIndex.get(k) ?? -1);
      if (cls === -2) {
        broken.push(i);
        judged++;
        continue;
      }
      if (cls >= 0) {
        held[cls]++;
        judged++;
      }
    }
    if (broken.length === 0) continue;
    let total = 0;
    for (const c of r.counts) total += c;
    const scale = judged / total;
    // The likelihood's factors flattened (rule column j, feature g, its table), in the order of
    // `combinationLikelihood`, so the products are the same bits.
    const facJ: number[] = [];
    const facG: number[] = [];
    const facK: number[] = [];
    const facTable: Float64Array[] = [];
    r.conditionals.forEach((list, j) => {
      for (const { g, Kg, table } of list) {
        facJ.push(j);
        facG.push(g);
        facK.push(Kg);
        facTable.push(table);
      }
    });
    const nf = facJ.length;
    // The broken rows' codes (rule columns, then the factors' features), gathered in row order:
    // read in the shuffled order below, one row's 28 codes from 15 columns of 800 KB each missed
    // the cache on every read (~200 ms of the repair of raw Adult's 200,000-row pool, 49,000
    // rows broken). The repairs are written back in row order at the end; a row is visited once,
    // so nothing read here changes before it is used.
    const B = broken.length;
    const ruleCode = new Int32Array(B * m);
    for (let j = 0; j < m; j++) for (let x = 0; x < B; x++) ruleCode[x * m + j] = cols[j][broken[x]];
    const facCode = new Int32Array(B * nf);
    for (let e = 0; e < nf; e++) {
      const col = pool[facG[e]];
      for (let x = 0; x < B; x++) facCode[x * nf + e] = col[broken[x]];
    }
    // The same draws as shuffling `broken` itself: order[x] is the index into `broken` of the x-th row repaired.
    const order = new Int32Array(B);
    for (let x = 0; x < B; x++) order[x] = x;
    rng.shuffle(order);
    const pickOf = new Int32Array(B);
    const seen = new Int32Array(r.targets.length).fill(-1);
    const cand: number[] = [];
    const scores: number[] = [];
    for (let x = 0; x < B; x++) {
      const bi = order[x];
      cand.length = 0;
      for (let j = 0; j < m; j++) {
        for (const t of r.byCode[j].get(ruleCode[bi * m + j]) ?? []) {
          if (seen[t] !== bi) {
            seen[t] = bi;
            cand.push(t);
          }
        }
      }
      if (cand.length === 0) for (let t = 0; t < r.targets.length; t++) cand.push(t);
      const f0 = bi * nf;
      scores.length = 0;
      let sum = 0;
      for (const t of cand) {
        const quota = scale * r.counts[t];
        let sc = quotaScore(quota, held[t]);
        const tuple = r.targets[t];
        let lik = 1;
        for (let e = 0; e < nf; e++) lik *= facTable[e][tuple[facJ[e]] * facK[e] + facCode[f0 + e]];
        sc *= lik ** LIKELIHOOD_POWER; // = combinationLikelihood(r.conditionals, tuple, (g) => pool[g][row])
        scores.push(sc);
        sum += sc;
      }
      let u = rng.uniform() * sum;
      let pick = cand[cand.length - 1];
      for (let y = 0; y < cand.length; y++) if ((u -= scores[y]) < 0) { pick = cand[y]; break; }
      held[pick]++;
      pickOf[bi] = pick;
      repaired++;
    }
    for (let j = 0; j < m; j++) {
      const col = cols[j];
      for (let x = 0; x < B; x++) col[broken[x]] = r.targets[pickOf[x]][j];
    }
  }
  return repaired;
}
