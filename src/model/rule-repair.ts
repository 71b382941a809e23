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
  let repaired = 0;
  for (const r of rules) repaired += repairRule(pool, r, rng);
  return repaired;
}

/*
 * How the repair is cut up (issue 25, the server's CPU end to end): one function per pass over
 * typed arrays, each small and monomorphic, so V8 optimises each one on its own, keeps it
 * optimised from one request to the next and never boxes a double in its loops. The repair was one
 * function with every pass inline: on-stack replacement compiled it for its first loop and threw
 * the code away at each later loop that had not run yet ("insufficient type feedback"), six to
 * eight times per request, and between recompilations the interpreter boxed every double of the
 * likelihood products (~1 KB of garbage per broken row: 150 MB per 100,000-row calibrated draw of a
 * 5-epoch raw Adult model, whose 200,000-row pool has ~147,000 rows breaking education <->
 * education-num). The likelihoods do not depend on the order rows are repaired in (only the quota
 * scores do), so they are computed first, in row order, and the shuffled pass only weighs them;
 * each is the same product in the same order as before, so the repairs are the same bit for bit.
 */

/** Per rule column: 1 for the codes that leave a row unjudged (pooled, blank), in a table of the column's codes. */
function openFlags(r: PoolRule): Uint8Array[] {
  return r.open.map((set, j) => {
    const flags = new Uint8Array(r.radix[j]);
    for (const c of set) if (c >= 0 && c < flags.length) flags[c] = 1;
    return flags;
  });
}

/** The key of target tuple t, as the rows' keys are formed. */
function tupleKey(r: PoolRule, t: ArrayLike<number>): number {
  let k = 0;
  for (let j = 0; j < r.radix.length; j++) k = k * r.radix[j] + t[j];
  return k;
}

/**
 * Per pool row: -3 unjudged (a pooled or blank code in a rule column), -2 broken (not a released
 * combination), -1 released but not a target, else the target's index. Through a dense table of
 * the keys when there are at most {@link DENSE_KEYS} (a row with a code outside its column's
 * code book, which the sampler never draws, is then left alone: -3), else the rule's set and a map.
 */
function classifyRows(r: PoolRule, cols: Int32Array[], M: number): Int32Array {
  const m = cols.length;
  const open = openFlags(r);
  const targetIndex = new Map<number, number>();
  r.targets.forEach((t, i) => targetIndex.set(tupleKey(r, t), i));
  let keys = 1;
  for (const x of r.radix) keys *= x;
  const cls = new Int32Array(M);
  if (keys <= DENSE_KEYS) {
    const keyClass = new Int32Array(keys).fill(-2);
    for (const k of r.allowed) if (k >= 0 && k < keys) keyClass[k] = -1;
    for (const [k, t] of targetIndex) keyClass[k] = t;
    if (m === 2) classifyPairs(cols[0], cols[1], open[0], open[1], r.radix[1], keyClass, cls, M);
    else classifyDense(cols, open, r.radix, keyClass, cls, M);
    return cls;
  }
  for (let i = 0; i < M; i++) {
    let k = 0;
    let unjudged = false;
    for (let j = 0; j < m; j++) {
      const c = cols[j][i];
      if (c >= 0 && c < open[j].length ? open[j][c] === 1 : r.open[j].has(c)) unjudged = true;
      k = k * r.radix[j] + c;
    }
    cls[i] = unjudged ? -3 : !r.allowed.has(k) ? -2 : (targetIndex.get(k) ?? -1);
  }
  return cls;
}

/** {@link classifyRows} of a two-column rule through its dense key table. */
function classifyPairs(a: Int32Array, b: Int32Array, openA: Uint8Array, openB: Uint8Array, kb: number, keyClass: Int32Array, cls: Int32Array, M: number): void {
  const ka = openA.length;
  for (let i = 0; i < M; i++) {
    const x = a[i];
    const y = b[i];
    if (x < 0 || x >= ka || y < 0 || y >= kb) cls[i] = -3;
    else cls[i] = openA[x] === 1 || openB[y] === 1 ? -3 : keyClass[x * kb + y];
  }
}

/** {@link classifyRows} of a rule of any width through its dense key table. */
function classifyDense(cols: Int32Array[], open: Uint8Array[], radix: readonly number[], keyClass: Int32Array, cls: Int32Array, M: number): void {
  const m = cols.length;
  for (let i = 0; i < M; i++) {
    let k = 0;
    let unjudged = false;
    for (let j = 0; j < m; j++) {
      const c = cols[j][i];
      if (!(c >= 0 && c < radix[j]) || open[j][c] === 1) unjudged = true;
      k = k * radix[j] + c;
    }
    cls[i] = unjudged ? -3 : keyClass[k];
  }
}

/** Rows of class -2 (broken), in row order; `held[t]`: rows on target t; returns them and the judged count. */
function brokenRows(cls: Int32Array, held: Float64Array): { broken: Int32Array; judged: number } {
  let nb = 0;
  let judged = 0;
  for (let i = 0; i < cls.length; i++) {
    const c = cls[i];
    if (c === -2) nb++;
    else if (c >= 0) {
      held[c]++;
      judged++;
    }
  }
  const broken = new Int32Array(nb);
  let x = 0;
  for (let i = 0; i < cls.length; i++) if (cls[i] === -2) broken[x++] = i;
  return { broken, judged: judged + nb };
}

/** Per rule column j, code -> its targets, as offsets (`start`, K_j + 1) into a list (`list`). */
function codeIndex(r: PoolRule): { start: Int32Array; list: Int32Array }[] {
  return r.byCode.map((map, j) => {
    const K = r.radix[j];
    const start = new Int32Array(K + 1);
    for (let c = 0; c < K; c++) start[c + 1] = start[c] + (map.get(c)?.length ?? 0);
    const list = new Int32Array(start[K]);
    for (let c = 0; c < K; c++) list.set(map.get(c) ?? [], start[c]);
    return { start, list };
  });
}

/**
 * The candidates of every broken row (`broken`, rows of `cols`: the targets sharing a code with
 * it, in rule-column order and, within a column, in the index's order, each once; all targets when
 * none does), as offsets `start` (B + 1) into `cand`.
 */
function candidates(r: PoolRule, cols: Int32Array[], broken: Int32Array): { start: Int32Array; cand: Int32Array } {
  const m = cols.length;
  const B = broken.length;
  const T = r.targets.length;
  const index = codeIndex(r);
  const seen = new Int32Array(T).fill(-1);
  const start = new Int32Array(B + 1);
  let cand = new Int32Array(Math.max(16, 2 * B));
  let n = 0;
  for (let x = 0; x < B; x++) {
    if (cand.length - n < T) {
      const grown = new Int32Array(Math.max(2 * cand.length, n + T));
      grown.set(cand.subarray(0, n));
      cand = grown;
    }
    const first = n;
    for (let j = 0; j < m; j++) {
      const c = cols[j][broken[x]];
      const { start: s, list } = index[j];
      if (c < 0 || c >= s.length - 1) continue;
      for (let y = s[c]; y < s[c + 1]; y++) {
        const t = list[y];
        if (seen[t] !== x) {
          seen[t] = x;
          cand[n++] = t;
        }
      }
    }
    if (n === first) for (let t = 0; t < T; t++) cand[n++] = t;
    start[x + 1] = n;
  }
  return { start, cand: cand.subarray(0, n) };
}

/**
 * The naive-Bayes likelihood of each candidate (`cand`, broken row x's at [start[x], start[x +
 * 1])) given the row's other codes (factor e reads column `facCols[e]`), before the power: the
 * product from 1 of `table[tOff[t * nf + e] + code_e]` for e in order, the factors in
 * `combinationLikelihood`'s order (rule column j, then its conditionals), so the same double. The
 * rows are visited in row order, so the columns are read forward (in the shuffled order of the
 * picks, each of a row's reads missed the cache).
 */
function likelihoods(broken: Int32Array, start: Int32Array, cand: Int32Array, facCols: Int32Array[], tOff: Int32Array, table: Float64Array): Float64Array {
  const out = new Float64Array(cand.length);
  const nf = facCols.length;
  const code = new Int32Array(nf);
  for (let x = 0; x < broken.length; x++) {
    const row = broken[x];
    for (let e = 0; e < nf; e++) code[e] = facCols[e][row];
    let y = start[x];
    const end = start[x + 1];
    // Two candidates at a time: two independent chains of products (each in its own order), so
    // the processor overlaps their multiplications.
    for (; y + 1 < end; y += 2) {
      const t0 = cand[y] * nf;
      const t1 = cand[y + 1] * nf;
      let a = 1;
      let b = 1;
      for (let e = 0; e < nf; e++) {
        a *= table[tOff[t0 + e] + code[e]];
        b *= table[tOff[t1 + e] + code[e]];
      }
      out[y] = a;
      out[y + 1] = b;
    }
    if (y < end) {
      const t0 = cand[y] * nf;
      let lik = 1;
      for (let e = 0; e < nf; e++) lik *= table[tOff[t0 + e] + code[e]];
      out[y] = lik;
    }
  }
  return out;
}

/** `lik[i] = likelihoodToPower(lik[i])` (`lik ** LIKELIHOOD_POWER`), in place. */
function toPower(lik: Float64Array): void {
  for (let i = 0; i < lik.length; i++) lik[i] = lik[i] ** LIKELIHOOD_POWER;
}

/**
 * The picks, broken rows in the order `order` (indices into the broken rows): each candidate's
 * score is its quota score (against `held`, updated as rows are repaired) times its likelihood to
 * the power; one uniform per row picks in proportion. pickOf[x]: the target of broken row x.
 */
function pickTargets(order: Int32Array, start: Int32Array, cand: Int32Array, likPow: Float64Array, counts: Float64Array, scale: number, held: Float64Array, rng: Rng, pickOf: Int32Array): void {
  const scores = new Float64Array(counts.length);
  for (let x = 0; x < order.length; x++) {
    const bi = order[x];
    const s0 = start[bi];
    const s1 = start[bi + 1];
    let sum = 0;
    for (let y = s0; y < s1; y++) {
      const t = cand[y];
      const sc = quotaScore(scale * counts[t], held[t]) * likPow[y];
      scores[y - s0] = sc;
      sum += sc;
    }
    let u = rng.uniform() * sum;
    let pick = cand[s1 - 1];
    for (let y = s0; y < s1; y++) {
      if ((u -= scores[y - s0]) < 0) {
        pick = cand[y];
        break;
      }
    }
    held[pick]++;
    pickOf[bi] = pick;
  }
}

/** Repairs the rows of `pool` that break rule `r`, drawing from `rng`; returns how many. */
function repairRule(pool: Int32Array[], r: PoolRule, rng: Rng): number {
  const M = pool[0]?.length ?? 0;
  const m = r.features.length;
  const cols = r.features.map((f) => pool[f]);
  const T = r.targets.length;
  const held = new Float64Array(T);
  const { broken, judged } = brokenRows(classifyRows(r, cols, M), held);
  const B = broken.length;
  if (B === 0) return 0;
  let total = 0;
  for (const c of r.counts) total += c;
  const scale = judged / total;
  // The likelihood's factors flattened (rule column j, feature g, its table), in the order of
  // `combinationLikelihood`, so the products are the same bits; one table for all of them, and
  // per target and factor the offset of the target's row in the factor's table.
  const facG: number[] = [];
  const facOff: number[] = [];
  const facK: number[] = [];
  const facJ: number[] = [];
  let size = 0;
  r.conditionals.forEach((list, j) => {
    for (const { g, Kg, table } of list) {
      facJ.push(j);
      facG.push(g);
      facK.push(Kg);
      facOff.push(size);
      size += table.length;
    }
  });
  const nf = facG.length;
  const table = new Float64Array(size);
  let e0 = 0;
  for (const list of r.conditionals) for (const { table: t } of list) table.set(t, facOff[e0++]);
  const tOff = new Int32Array(T * nf);
  for (let t = 0; t < T; t++) for (let e = 0; e < nf; e++) tOff[t * nf + e] = facOff[e] + r.targets[t][facJ[e]] * facK[e];
  const { start, cand } = candidates(r, cols, broken);
  const likPow = likelihoods(broken, start, cand, facG.map((g) => pool[g]), tOff, table);
  toPower(likPow);
  // The same draws as shuffling `broken` itself: order[x] is the index into `broken` of the x-th row repaired.
  const order = new Int32Array(B);
  for (let x = 0; x < B; x++) order[x] = x;
  rng.shuffle(order);
  const pickOf = new Int32Array(B);
  pickTargets(order, start, cand, likPow, r.counts, scale, held, rng, pickOf);
  // The repairs, written back in row order (a row is visited once, so nothing read above changed).
  for (let j = 0; j < m; j++) {
    const col = cols[j];
    for (let x = 0; x < B; x++) col[broken[x]] = r.targets[pickOf[x]][j];
  }
  return B;
}
