/**
 * The oracle of the pool repair's restructuring (issue 25): `repairPoolReference` is
 * src/model/rule-repair.ts `repairPool` as it was before (commit 82c4ea5), unchanged but for its
 * name, so tests can check that the restructured repair gives the same repairs bit for bit.
 */
import { LIKELIHOOD_POWER, quotaScore } from "../src/rule-scores";
import type { PoolRule } from "../src/model/sampling/rule-repair";
import { Rng } from "../src/model/sampling/xoshiro";

/** Rules whose tuples have at most this many keys are classified through a dense table (4 MiB). */
const DENSE_KEYS = 1 << 20;

/**
 * The pool repair as it was written before issue 25's server pass (one function, every pass
 * inline), kept as the oracle of test/rule-repair.test.ts: src/model/rule-repair.ts `repairPool`
 * must give the same repairs bit for bit. Repairs, in place, the pool rows that break `rules`.
 * @param pool one Int32Array of M codes per feature (the pool's feature order of {@link poolRules}).
 * @param seed seeds the repair order and draws (the same pool and seed give the same repairs).
 * @returns the rows repaired.
 */
export function repairPoolReference(pool: Int32Array[], rules: readonly PoolRule[], seed: number): number {
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
