/**
 * Fixed-combination rules kept in the server's draws (docs/api.md "Row rules"), in the
 * calibration pool before raking and in the plain draw: a row whose tuple over a rule's columns is
 * not a released combination takes one that is, and raking then re-weights the repaired rows. The
 * SDK keeps the rules on decoded rows too (`sdk/rules/enforce.ts`), with the same scores.
 *
 * Method, per rule (`metadata.rules` of type `fixed_combinations`, and a catalog's code-book
 * columns, {@link catalogCombinations}):
 * - A row is judged when none of its rule cells holds the pooled `__other__` or the blank code;
 *   it breaks the rule when its tuple is not a released combination.
 * - Quotas: a released combination (no pooled code) has quota count / total count times the
 *   judged rows.
 * - Broken rows, in a random order (the pool's seed), take a combination among those sharing at
 *   least one of the row's codes (all when none does), with probability proportional to its
 *   shortfall against its quota (at least 1% of it) times the naive-Bayes likelihood of the row's
 *   other codes given it (2-way marginals of the metadata), raised to `LIKELIHOOD_POWER`
 *   (`../rule-scores`, shared with the SDK).
 */
import { combinationsByCode, LIKELIHOOD_POWER, pairConditionals, quotaScore, type PairConditional } from "../../rule-scores";
import type { CatalogRule, FixedCombinationsRule, Metadata } from "../../contract";
import { nativeExport } from "../compute/native";
import { Rng } from "./xoshiro";


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
  /** Per rule column: conditionals P(g | rule column) of other features g, K_rule x K_g. */
  conditionals: PairConditional[][];
  /** Mixed-radix key of a tuple: the code count of each rule column. */
  radix: number[];
}

/**
 * The metadata's fixed-combinations rules over the pool's features (names in column order); rules
 * over a missing feature, or with more than 2^53 tuples, are left out.
 */
export function poolRules(metadata: Metadata, features: readonly string[]): PoolRule[] {
  const out: PoolRule[] = [];
  for (const given of metadata.rules ?? []) {
    const rule = given.type === "catalog" ? catalogCombinations(metadata, given) : given;
    if (rule?.type !== "fixed_combinations") continue;
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

/**
 * A catalog rule's entries as fixed combinations over its code-book columns (those whose
 * `value_mappings` hold every entry's value: categorical, point bins), so the pool keeps the part
 * of a catalog its codes can say; undefined with fewer than two such columns.
 */
export function catalogCombinations(metadata: Metadata, rule: CatalogRule): FixedCombinationsRule | undefined {
  const at = rule.columns.map((_, j) => j).filter((j) => {
    const map = metadata.value_mappings?.[rule.columns[j]];
    return map !== undefined && rule.entries.every((e) => Object.hasOwn(map, e[j]));
  });
  if (at.length < 2) return undefined;
  const maps = at.map((j) => metadata.value_mappings![rule.columns[j]]);
  const counts = new Map<string, { t: number[]; c: number }>();
  rule.entries.forEach((e, i) => {
    const t = at.map((j, x) => maps[x][e[j]]);
    const k = t.join(",");
    const seen = counts.get(k);
    if (seen) seen.c += rule.counts[i] ?? 1;
    else counts.set(k, { t, c: rule.counts[i] ?? 1 });
  });
  const list = [...counts.values()];
  return { type: "fixed_combinations", columns: at.map((j) => rule.columns[j]), combinations: list.map((x) => x.t), counts: list.map((x) => x.c), share: rule.share };
}

/** Rules whose tuples have at most this many keys are classified through a dense table (4 MiB). */
const DENSE_KEYS = 1 << 20;

/** Options of {@link repairPool}. */
export interface RepairOptions {
  /**
   * Score rows in the native core (`repairScores`, native/src/repair.cc) when the addon has it
   * and the keys fit the dense table; default true. The same repairs bit for bit either way.
   */
  native?: boolean;
}

/**
 * Repairs, in place, the pool rows (M codes per feature) that break `rules` (module comment),
 * seeded by `seed`; returns the rows repaired.
 * @throws RangeError when a column a likelihood reads holds a code outside its code book.
 */
export function repairPool(pool: Int32Array[], rules: readonly PoolRule[], seed: number, opts: RepairOptions = {}): number {
  const rng = Rng.fromSeed(seed);
  let repaired = 0;
  for (const r of rules) repaired += repairRule(pool, r, rng, opts.native ?? true);
  return repaired;
}

/*
 * Scoring (broken rows, candidates, likelihoods) does not depend on the repair order and runs
 * first, in the native core when it can; then the likelihoods' power (V8's `**`), the shuffle and
 * the picks. The passes are small monomorphic functions so that V8 optimises each once.
 */

/** A rule's lookup tables, built once per {@link PoolRule} (the worker keeps a model's rules). */
interface RuleTables {
  /** Per rule column: 1 for the codes that leave a row unjudged (pooled, blank), K_j flags. */
  open: Uint8Array[];
  radix: Int32Array;
  /** Per key: -2 not released, -1 released but not a target, else the target (dense keys only). */
  keyClass: Int32Array | undefined;
  /** Key -> target, for rules whose keys do not fit the dense table. */
  targetIndex: Map<number, number>;
  /** Per rule column j, code -> its targets: list[start[c] .. start[c + 1]). */
  index: { start: Int32Array; list: Int32Array }[];
  /** Feature read by each likelihood factor (rule column j, then its conditionals). */
  facG: Int32Array;
  facK: Int32Array;
  /** All factor tables, one after another; tOff[t nf + e]: target t's row of factor e's table. */
  table: Float64Array;
  tOff: Int32Array;
}

const tablesOf = new WeakMap<PoolRule, RuleTables>();

/** The lookup tables of rule `r` (cached). */
function ruleTables(r: PoolRule): RuleTables {
  const cached = tablesOf.get(r);
  if (cached) return cached;
  const open = r.open.map((set, j) => {
    const flags = new Uint8Array(r.radix[j]);
    for (const c of set) if (c >= 0 && c < flags.length) flags[c] = 1;
    return flags;
  });
  const targetIndex = new Map<number, number>();
  r.targets.forEach((t, i) => targetIndex.set(tupleKey(r, t), i));
  let keys = 1;
  for (const x of r.radix) keys *= x;
  let keyClass: Int32Array | undefined;
  if (keys <= DENSE_KEYS) {
    keyClass = new Int32Array(keys).fill(-2);
    for (const k of r.allowed) if (k >= 0 && k < keys) keyClass[k] = -1;
    for (const [k, t] of targetIndex) keyClass[k] = t;
  }
  const index = r.byCode.map((map, j) => {
    const K = r.radix[j];
    const start = new Int32Array(K + 1);
    for (let c = 0; c < K; c++) start[c + 1] = start[c] + (map.get(c)?.length ?? 0);
    const list = new Int32Array(start[K]);
    for (let c = 0; c < K; c++) list.set(map.get(c) ?? [], start[c]);
    return { start, list };
  });
  const facG: number[] = [];
  const facK: number[] = [];
  const facJ: number[] = [];
  const facOff: number[] = [];
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
  const T = r.targets.length;
  const tOff = new Int32Array(T * nf);
  for (let t = 0; t < T; t++) for (let e = 0; e < nf; e++) tOff[t * nf + e] = facOff[e] + r.targets[t][facJ[e]] * facK[e];
  const tables: RuleTables = { open, radix: Int32Array.from(r.radix), keyClass, targetIndex, index, facG: Int32Array.from(facG), facK: Int32Array.from(facK), table, tOff };
  tablesOf.set(r, tables);
  return tables;
}

function tupleKey(r: PoolRule, t: ArrayLike<number>): number {
  let k = 0;
  for (let j = 0; j < r.radix.length; j++) k = k * r.radix[j] + t[j];
  return k;
}

/**
 * Per pool row: -3 unjudged (a pooled or blank code, or through the dense table a code outside
 * its code book), -2 broken, -1 released but not a target, else the target's index.
 */
function classifyRows(r: PoolRule, tb: RuleTables, cols: Int32Array[], M: number): Int32Array {
  const m = cols.length;
  const cls = new Int32Array(M);
  if (tb.keyClass) {
    if (m === 2) classifyPairs(cols[0], cols[1], tb.open[0], tb.open[1], tb.keyClass, cls, M);
    else classifyDense(cols, tb.open, tb.radix, tb.keyClass, cls, M);
    return cls;
  }
  for (let i = 0; i < M; i++) {
    let k = 0;
    let unjudged = false;
    for (let j = 0; j < m; j++) {
      const c = cols[j][i];
      if (c >= 0 && c < tb.open[j].length ? tb.open[j][c] === 1 : r.open[j].has(c)) unjudged = true;
      k = k * r.radix[j] + c;
    }
    cls[i] = unjudged ? -3 : !r.allowed.has(k) ? -2 : (tb.targetIndex.get(k) ?? -1);
  }
  return cls;
}

/** {@link classifyRows} of a two-column rule through its dense key table (the common case). */
function classifyPairs(a: Int32Array, b: Int32Array, openA: Uint8Array, openB: Uint8Array, keyClass: Int32Array, cls: Int32Array, M: number): void {
  const ka = openA.length;
  const kb = openB.length;
  for (let i = 0; i < M; i++) {
    const x = a[i];
    const y = b[i];
    if (x < 0 || x >= ka || y < 0 || y >= kb) cls[i] = -3;
    else cls[i] = openA[x] === 1 || openB[y] === 1 ? -3 : keyClass[x * kb + y];
  }
}

function classifyDense(cols: Int32Array[], open: Uint8Array[], radix: Int32Array, keyClass: Int32Array, cls: Int32Array, M: number): void {
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

/** Broken rows in row order, and the judged count; `held[t]` receives the rows on target t. */
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

/**
 * Each broken row's candidates: targets sharing a code with it (in rule-column order, each once;
 * all targets when none does), as offsets `start` (B + 1) into `cand`.
 */
function candidates(tb: RuleTables, T: number, cols: Int32Array[], broken: Int32Array): { start: Int32Array; cand: Int32Array } {
  const m = cols.length;
  const B = broken.length;
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
      const { start: s, list } = tb.index[j];
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
 * The naive-Bayes likelihood of each candidate given the row's other codes, before the power: the
 * product of `table[tOff[t * nf + e] + code_e]` over factors e in `combinationLikelihood`'s order,
 * so the same double. Rows are visited in row order so the columns are read forward.
 * @throws RangeError for a factor code outside [0, facK[e]).
 */
function likelihoods(broken: Int32Array, start: Int32Array, cand: Int32Array, facCols: Int32Array[], facK: Int32Array, tOff: Int32Array, table: Float64Array): Float64Array {
  const out = new Float64Array(cand.length);
  const nf = facCols.length;
  const code = new Int32Array(nf);
  for (let x = 0; x < broken.length; x++) {
    const row = broken[x];
    for (let e = 0; e < nf; e++) {
      const c = facCols[e][row];
      if (!(c >= 0 && c < facK[e])) throw new RangeError(`factorColumns[${e}] holds code ${c} at row ${row}, outside [0, ${facK[e]})`);
      code[e] = c;
    }
    let y = start[x];
    const end = start[x + 1];
    // Two independent product chains, so the processor overlaps their multiplications.
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

function toPower(lik: Float64Array): void {
  for (let i = 0; i < lik.length; i++) lik[i] = lik[i] ** LIKELIHOOD_POWER;
}

/**
 * The picks, broken rows in the order `order`: each candidate's score is its quota score (against
 * `held`, updated as rows are repaired) times its likelihood; one uniform per row picks.
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

/** The native core's `repairScores` (native/src/repair_binding.cc), or undefined without it. */
type NativeRepairScores = (
  columns: Int32Array[],
  radix: Int32Array,
  open: Uint8Array[],
  keyClass: Int32Array,
  codeStart: Int32Array[],
  codeList: Int32Array[],
  targets: number,
  factorColumns: Int32Array[],
  factorCards: Int32Array,
  tOff: Int32Array,
  table: Float64Array,
  held: Float64Array,
) => { broken: Int32Array; judged: number; start: Int32Array; cand: Int32Array; lik: Float64Array };

/** Whether the addon has been asked for `repairScores`, and its answer. */
let nativeScores: NativeRepairScores | undefined | null = null;

/** Repairs the rows of `pool` that break rule `r`, drawing from `rng`; returns how many. */
function repairRule(pool: Int32Array[], r: PoolRule, rng: Rng, useNative: boolean): number {
  const M = pool[0]?.length ?? 0;
  const m = r.features.length;
  const cols = r.features.map((f) => pool[f]);
  const T = r.targets.length;
  const tb = ruleTables(r);
  const facCols = Array.from(tb.facG, (g) => pool[g]);
  const held = new Float64Array(T);
  if (nativeScores === null) nativeScores = nativeExport<NativeRepairScores>("repairScores");
  let scored: { broken: Int32Array; judged: number; start: Int32Array; cand: Int32Array; lik: Float64Array };
  if (useNative && nativeScores && tb.keyClass && M > 0) {
    scored = nativeScores(cols, tb.radix, tb.open, tb.keyClass, tb.index.map((x) => x.start), tb.index.map((x) => x.list), T, facCols, tb.facK, tb.tOff, tb.table, held);
  } else {
    const { broken, judged } = brokenRows(classifyRows(r, tb, cols, M), held);
    if (broken.length === 0) return 0;
    const { start, cand } = candidates(tb, T, cols, broken);
    scored = { broken, judged, start, cand, lik: likelihoods(broken, start, cand, facCols, tb.facK, tb.tOff, tb.table) };
  }
  const { broken, judged, start, cand, lik } = scored;
  const B = broken.length;
  if (B === 0) return 0;
  let total = 0;
  for (const c of r.counts) total += c;
  const scale = judged / total;
  toPower(lik);
  // The same draws as shuffling `broken`: order[x] is the index in `broken` of the x-th repair.
  const order = new Int32Array(B);
  for (let x = 0; x < B; x++) order[x] = x;
  rng.shuffle(order);
  const pickOf = new Int32Array(B);
  pickTargets(order, start, cand, lik, r.counts, scale, held, rng, pickOf);
  // The repairs, written back in row order (a row is visited once, so nothing read above changed).
  for (let j = 0; j < m; j++) {
    const col = cols[j];
    for (let x = 0; x < B; x++) col[broken[x]] = r.targets[pickOf[x]][j];
  }
  return B;
}
