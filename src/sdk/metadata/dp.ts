/**
 * Differential privacy for the marginals the SDK sends (DESIGN §2, issue 5): `privacy: {epsilon,
 * delta}` measures every marginal with Gaussian noise on the client, so the server never sees
 * exact counts. The method is the measurement and selection half of MST (McKenna, Miklau &
 * Sheldon, "Winning the NIST Contest: A scalable and general approach to differentially private
 * synthetic data", J. Privacy and Confidentiality 11(3), 2021; reference code
 * github.com/ryan112358/private-pgm `mechanisms/mst.py`); its estimation step (Private-PGM) is
 * replaced by the server's generator, which fits the noisy marginals.
 *
 * Privacy model. Neighbouring tables differ by adding or removing one row. The domain (column
 * names and K per column) is public: privacy is only offered in domain mode (`./domain`), because
 * a raw table's code book (its categories, quantile bin edges, min/max) is computed from the rows.
 * The row count n is NOT released: `column_stats[f].count` is an estimate from the noisy 1-way
 * marginals (post-processing).
 *
 * Accounting in zero-concentrated DP (Bun & Steinke, "Concentrated Differential Privacy:
 * Simplifications, Extensions, and Lower Bounds", TCC 2016):
 * - (epsilon, delta) -> rho: the smallest rho whose rho-zCDP implies (epsilon, delta)-DP under
 *   the conversion of Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential Privacy",
 *   NeurIPS 2020, Proposition 12 / Corollary 13 (bisection over rho, inner bisection over the
 *   Rényi order alpha; the same computation as `cdp2adp.py` used by MST and AIM). It is tighter
 *   than the classical bound epsilon = rho + 2 sqrt(rho ln(1/delta)) (Bun & Steinke 2016,
 *   Proposition 1.3), kept here as {@link cdpRhoBound} for comparison.
 * - Gaussian mechanism: a count vector has L2 sensitivity 1 under add/remove (one row changes one
 *   cell by 1), and adding N(0, sigma^2) to each cell is 1/(2 sigma^2)-zCDP (Bun & Steinke 2016,
 *   Proposition 1.6). zCDP composes by addition (Lemma 2.3), adaptively.
 * - Exponential mechanism with parameter eps_em and score sensitivity 1 is eps_em^2/8-zCDP
 *   (bounded range: Cesar & Rogers, "Bounding, Concentrating, and Truncating: Unifying Privacy
 *   Loss Composition for Data Analytics", ALT 2021), as MST uses it.
 *
 * Budget split ({@link planPrivacy}), F columns, F >= 3: rho/3 for selecting F-1 pairs (one
 * exponential mechanism per Kruskal round, eps_em = sqrt(8 (rho/3) / (F-1)), as in MST's
 * `select`), 2rho/3 for measuring m = F 1-way + (F-1) 2-way marginals with one common noise
 * scale sigma = sqrt(m / (2 * 2rho/3)), so m/(2 sigma^2) = 2rho/3 (MST gives each of its two
 * measurement rounds rho/3, which is the same up to F vs F-1). With F = 2 the only pair needs no
 * selection and all of rho goes to the m = 3 measurements.
 *
 * Steps ({@link privateMetadata}), as in MST:
 * 1. measure every 1-way count vector with N(0, sigma^2) noise;
 * 2. compress each domain: codes whose noisy count is below 3 sigma are merged into one group
 *    (MST `compress_domain`); the 1-way estimate is the clamped (>= 0) noisy counts over the
 *    compressed domain, normalised;
 * 3. select a spanning tree with the exponential mechanism in Kruskal order: score of a pair =
 *    || x_ij - n_hat p_i (x) p_j ||_1, x_ij its true compressed joint counts and p_i, p_j the noisy
 *    1-way estimates (MST scores against Private-PGM's estimate from the 1-way measurements,
 *    which is that independent product); a pair whose full K_i*K_j cells would overflow the pair
 *    budget is not a candidate (then a forest; sigma was set for F-1 pairs, so fewer measured
 *    pairs only spend less);
 * 4. measure each selected pair's compressed joint counts with N(0, sigma^2) noise.
 * Post-processing (free under DP): clamp at 0 and normalise; rake each pair (iterative
 * proportional fitting, 50 rounds, after mixing in 1e-9 of the independent product so no row or
 * column is empty) to the 1-way estimates, so the marginals sent agree with each other (columns
 * exactly, rows to ~1e-3 where structural zeros make the noisy margins incompatible); then every
 * unmeasured pair is sent too, as the tree model of the measured ones implies it
 * ({@link impliedPairs}: the maximum-entropy distribution with the measured marginals, which is
 * what MST's Private-PGM step estimates), strongest first while the cell budget allows, so the
 * generator is not left free to invent relationships for pairs it was told nothing about;
 * finally compressed codes are expanded back to the full domain, a group's mass spread evenly
 * over its codes (MST's `reverse_data` draws them uniformly).
 *
 * Randomness: noise and selections draw from `crypto.randomFillSync` unless `seed` is given (a
 * seeded stream is for tests and benchmarks only: whoever knows the seed can remove the noise).
 * Normal deviates come from the Box–Muller transform in double precision; like MST's numpy
 * sampler, it does not defend against floating-point attacks on the Gaussian mechanism (Mironov,
 * "On significance of the least significant bits for differential privacy", CCS 2012).
 */
import { randomFillSync } from "node:crypto";
import type { Metadata, PairMarginal } from "../../types";
import { counts1, jointCounts, mutualInformation, type CodeArray, type Pair, type PairSelection } from "./marginals";
import type { EncodedTable } from "./encoded";
import { Rng } from "../generate/prng";

/** `privacy` option of metadata extraction and `Synthesizer.fit`. */
export interface PrivacyOptions {
  /** Privacy-loss parameter epsilon, > 0. */
  epsilon: number;
  /** delta in (0, 1). Default {@link DEFAULT_DELTA} (1e-9, the default of MST's and AIM's scripts). */
  delta?: number;
  /** Seeds the noise for reproducible runs (tests, benchmarks); never for a real release. */
  seed?: number;
}

/** Default delta: 1e-9, as in `mst.py`/`aim.py` of private-pgm; far below 1/n for any table this
 * service handles. */
export const DEFAULT_DELTA = 1e-9;

/** Codes with a noisy 1-way count below this many sigma are merged (MST `compress_domain`). */
export const COMPRESS_SIGMAS = 3;

/**
 * delta such that rho-zCDP implies (eps, delta)-DP: Canonne, Kamath & Steinke 2020, Corollary 13,
 * delta = inf over alpha > 1 of exp((alpha-1)(alpha rho - eps)) / (alpha - 1) * (1 - 1/alpha)^alpha,
 * minimised by bisection on the derivative's sign over alpha in [1.01, (eps+1)/(2 rho) + 2]
 * (any alpha gives a valid bound, so an inexact search only makes delta larger).
 * @returns delta in [0, 1].
 */
export function cdpDelta(rho: number, eps: number): number {
  if (!(rho >= 0 && eps >= 0)) throw new RangeError("rho and eps must be >= 0");
  if (rho === 0) return 0;
  let amin = 1.01;
  let amax = (eps + 1) / (2 * rho) + 2;
  let alpha = amin;
  for (let i = 0; i < 1000; i++) {
    alpha = (amin + amax) / 2;
    const derivative = (2 * alpha - 1) * rho - eps + Math.log1p(-1 / alpha);
    if (derivative < 0) amin = alpha;
    else amax = alpha;
  }
  const delta = Math.exp((alpha - 1) * (alpha * rho - eps) + alpha * Math.log1p(-1 / alpha)) / (alpha - 1);
  return Math.min(delta, 1);
}

/**
 * The largest rho such that rho-zCDP implies (eps, delta)-DP under {@link cdpDelta} (bisection on
 * rho in [0, eps + 1], 1000 steps; returns the side that satisfies the bound).
 * @throws RangeError unless eps > 0 and 0 < delta < 1.
 */
export function cdpRho(eps: number, delta: number): number {
  checkEpsDelta(eps, delta);
  let lo = 0;
  let hi = eps + 1;
  for (let i = 0; i < 1000; i++) {
    const rho = (lo + hi) / 2;
    if (cdpDelta(rho, eps) <= delta) lo = rho;
    else hi = rho;
  }
  return lo;
}

/**
 * The classical conversion (Bun & Steinke 2016, Proposition 1.3): rho-zCDP implies
 * (rho + 2 sqrt(rho ln(1/delta)), delta)-DP, solved for rho: (sqrt(ln(1/delta) + eps) -
 * sqrt(ln(1/delta)))^2. Never larger than {@link cdpRho}; kept for comparison and tests.
 */
export function cdpRhoBound(eps: number, delta: number): number {
  checkEpsDelta(eps, delta);
  const L = Math.log(1 / delta);
  return (Math.sqrt(L + eps) - Math.sqrt(L)) ** 2;
}

function checkEpsDelta(eps: number, delta: number): void {
  if (!(Number.isFinite(eps) && eps > 0)) throw new RangeError(`privacy.epsilon must be a finite number > 0, got ${eps}`);
  if (!(delta > 0 && delta < 1)) throw new RangeError(`privacy.delta must be in (0, 1), got ${delta}`);
}

/** How a privacy budget is spent on a table with F columns (rules in the file header). */
export interface PrivacyPlan {
  epsilon: number;
  delta: number;
  /** Total zCDP budget, {@link cdpRho}(epsilon, delta). */
  rho: number;
  /** Spent on selecting pairs (rho/3 when F >= 3, else 0). */
  rhoSelect: number;
  /** Spent on measuring marginals: rho - rhoSelect. */
  rhoMeasure: number;
  /** Marginals measured: F 1-way + (F-1) 2-way. */
  measurements: number;
  /** Noise standard deviation added to every count: sqrt(measurements / (2 rhoMeasure)). */
  sigma: number;
  /** Exponential-mechanism rounds (F-1 when F >= 3, else 0). */
  selectionRounds: number;
  /** eps_em per round: sqrt(8 rhoSelect / selectionRounds), or 0. */
  epsilonSelect: number;
}

/**
 * Splits a budget (see the file header).
 * @param F number of columns, >= 2.
 * @throws RangeError for F < 2 or invalid epsilon/delta.
 */
export function planPrivacy(F: number, epsilon: number, delta: number = DEFAULT_DELTA): PrivacyPlan {
  if (!(Number.isInteger(F) && F >= 2)) throw new RangeError("privacy needs at least 2 columns");
  const rho = cdpRho(epsilon, delta);
  const selectionRounds = F >= 3 ? F - 1 : 0;
  const rhoSelect = selectionRounds > 0 ? rho / 3 : 0;
  const rhoMeasure = rho - rhoSelect;
  const measurements = 2 * F - 1;
  return {
    epsilon,
    delta,
    rho,
    rhoSelect,
    rhoMeasure,
    measurements,
    sigma: Math.sqrt(measurements / (2 * rhoMeasure)),
    selectionRounds,
    epsilonSelect: selectionRounds > 0 ? Math.sqrt((8 * rhoSelect) / selectionRounds) : 0,
  };
}

/** A source of uniform doubles in [0, 1). */
export interface UniformSource {
  uniform(): number;
}

/**
 * Uniforms for noise: `crypto.randomFillSync` (53 bits per draw) without a seed, else the SDK's
 * seeded sfc32 stream ({@link Rng}; tests and benchmarks only).
 */
export function uniformSource(seed?: number): UniformSource {
  if (seed !== undefined) {
    const rng = new Rng(seed);
    return { uniform: () => rng.next() };
  }
  const buf = new Uint32Array(2048);
  let i = buf.length;
  return {
    uniform() {
      if (i + 2 > buf.length) {
        randomFillSync(buf);
        i = 0;
      }
      const hi = buf[i++] >>> 5;
      const lo = buf[i++] >>> 6;
      return (hi * 67108864 + lo) / 9007199254740992;
    },
  };
}

/** One standard normal deviate (Box–Muller, cosine branch). */
export function standardNormal(src: UniformSource): number {
  const u1 = 1 - src.uniform(); // (0, 1]
  const u2 = src.uniform();
  return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
}

/**
 * The Gaussian mechanism on a count vector: `counts[k] + N(0, sigma^2)` per cell.
 * @returns a new Float64Array of the same length.
 */
export function gaussianMechanism(counts: ArrayLike<number>, sigma: number, src: UniformSource): Float64Array {
  if (!(sigma >= 0)) throw new RangeError("sigma must be >= 0");
  const out = new Float64Array(counts.length);
  for (let k = 0; k < counts.length; k++) out[k] = counts[k] + sigma * standardNormal(src);
  return out;
}

/**
 * The exponential mechanism (McSherry & Talwar 2007) as MST uses it: index k with probability
 * proportional to exp(eps / (2 sensitivity) * scores[k]) (computed stably by subtracting the
 * maximum), by inverse CDF.
 */
export function exponentialMechanism(scores: readonly number[], eps: number, sensitivity: number, src: UniformSource): number {
  if (scores.length === 0) throw new RangeError("no candidates");
  const a = (0.5 * eps) / sensitivity;
  let max = -Infinity;
  for (const s of scores) max = Math.max(max, a * s);
  const w = scores.map((s) => Math.exp(a * s - max));
  const total = w.reduce((x, y) => x + y, 0);
  let u = src.uniform() * total;
  for (let k = 0; k < w.length; k++) {
    u -= w[k];
    if (u < 0) return k;
  }
  return w.length - 1;
}

/** What {@link privateMetadata} did: the plan plus the data-dependent (noisy) choices. */
export interface PrivacyReport extends PrivacyPlan {
  /** Row count estimated from the noisy 1-way marginals (n itself is not released). */
  nEstimate: number;
  /** Codes per column after compression (codes below 3 sigma merged), by column name. */
  compressed: Record<string, number>;
  /** Pairs measured (feature indices, Kruskal order). */
  pairs: Pair[];
  /** Cells K_i*K_j of the measured pairs. */
  measuredCells: number;
  /** Pairs sent as the tree model implies them (not measured, no budget spent). */
  impliedPairs: number;
}

/** A pair's joint distribution implied by the measured tree (compressed domains, row-major). */
export interface ImpliedPair {
  i: number;
  j: number;
  P: Float64Array;
  /** Its mutual information (nats), to rank implied pairs. */
  mi: number;
}

/**
 * Joint distributions of the unmeasured pairs under the tree-structured model of the measured
 * ones (the maximum-entropy distribution with those marginals, which MST's Private-PGM estimate
 * is): along the tree path i = v0 - v1 - ... - vk = j, P(v0, vk) = diag(p_v0) C(v0->v1) ...
 * C(vk-1->vk), C(a->b)[x, y] = P(b = y | a = x) from the measured pair (the 1-way estimate of b
 * where a = x has no mass). Pairs in different trees of a forest are independent: p_i (x) p_j.
 * Pure post-processing of the noisy measurements.
 * @param K compressed cardinalities; `p1` compressed 1-way estimates; `measured` keyed "i,j", i < j.
 */
export function impliedPairs(F: number, K: readonly number[], p1: readonly Float64Array[], measured: ReadonlyMap<string, Float64Array>): ImpliedPair[] {
  const adj: number[][] = Array.from({ length: F }, () => []);
  for (const key of measured.keys()) {
    const [i, j] = key.split(",").map(Number);
    adj[i].push(j);
    adj[j].push(i);
  }
  /** C(a->b) as a Ka x Kb row-major matrix. */
  const conditional = (a: number, b: number): Float64Array => {
    const lo = Math.min(a, b);
    const hi = Math.max(a, b);
    const P = measured.get(`${lo},${hi}`)!;
    const C = new Float64Array(K[a] * K[b]);
    for (let x = 0; x < K[a]; x++) {
      let s = 0;
      for (let y = 0; y < K[b]; y++) s += a === lo ? P[x * K[b] + y] : P[y * K[a] + x];
      for (let y = 0; y < K[b]; y++) {
        const v = a === lo ? P[x * K[b] + y] : P[y * K[a] + x];
        C[x * K[b] + y] = s > 0 ? v / s : p1[b][y];
      }
    }
    return C;
  };
  const out: ImpliedPair[] = [];
  for (let i = 0; i < F; i++) {
    // BFS from i: parent pointers give the tree path to every j in i's tree
    const parent = new Int32Array(F).fill(-1);
    parent[i] = i;
    const queue = [i];
    while (queue.length) {
      const u = queue.shift()!;
      for (const v of adj[u]) if (parent[v] < 0) {
        parent[v] = u;
        queue.push(v);
      }
    }
    for (let j = i + 1; j < F; j++) {
      if (measured.has(`${i},${j}`)) continue;
      let P: Float64Array;
      if (parent[j] < 0) {
        P = new Float64Array(K[i] * K[j]);
        for (let x = 0; x < K[i]; x++) for (let y = 0; y < K[j]; y++) P[x * K[j] + y] = p1[i][x] * p1[j][y];
      } else {
        const path = [j];
        while (path[path.length - 1] !== i) path.push(parent[path[path.length - 1]]);
        path.reverse(); // i ... j
        let J = new Float64Array(K[i] * K[i]);
        for (let x = 0; x < K[i]; x++) J[x * K[i] + x] = p1[i][x];
        for (let s = 0; s + 1 < path.length; s++) {
          const a = path[s];
          const b = path[s + 1];
          const C = conditional(a, b);
          const next = new Float64Array(K[i] * K[b]);
          for (let x = 0; x < K[i]; x++) {
            for (let z = 0; z < K[a]; z++) {
              const w = J[x * K[a] + z];
              if (w === 0) continue;
              for (let y = 0; y < K[b]; y++) next[x * K[b] + y] += w * C[z * K[b] + y];
            }
          }
          J = next;
        }
        P = normalise(J);
      }
      out.push({ i, j, P, mi: mutualInformation(P, K[i], K[j]) });
    }
  }
  return out;
}

function normalise(v: Float64Array): Float64Array {
  let s = 0;
  for (let k = 0; k < v.length; k++) {
    if (!(v[k] > 0)) v[k] = 0;
    s += v[k];
  }
  if (s > 0) for (let k = 0; k < v.length; k++) v[k] /= s;
  else v.fill(1 / v.length);
  return v;
}

/**
 * Iterative proportional fitting of a non-negative Ka x Kb table (row-major, sums to 1) to row
 * margin `r` and column margin `c` (each summing to 1), in place.
 */
export function rake(P: Float64Array, Ka: number, Kb: number, r: ArrayLike<number>, c: ArrayLike<number>, rounds = 50): void {
  const col = new Float64Array(Kb);
  for (let t = 0; t < rounds; t++) {
    for (let i = 0; i < Ka; i++) {
      let s = 0;
      for (let j = 0; j < Kb; j++) s += P[i * Kb + j];
      const f = s > 0 ? r[i] / s : 0;
      for (let j = 0; j < Kb; j++) P[i * Kb + j] *= f;
    }
    col.fill(0);
    for (let i = 0; i < Ka; i++) for (let j = 0; j < Kb; j++) col[j] += P[i * Kb + j];
    for (let j = 0; j < Kb; j++) {
      const f = col[j] > 0 ? c[j] / col[j] : 0;
      for (let i = 0; i < Ka; i++) P[i * Kb + j] *= f;
    }
  }
}

/** One column's compressed domain: full code -> compressed code, and the size of each group. */
interface Compression {
  map: Int32Array;
  groupSize: number[];
  K: number;
}

function compress(noisy: Float64Array, threshold: number): Compression {
  const map = new Int32Array(noisy.length);
  const groupSize: number[] = [];
  let unsupported = 0;
  for (let v = 0; v < noisy.length; v++) {
    if (noisy[v] >= threshold) {
      map[v] = groupSize.length;
      groupSize.push(1);
    } else unsupported++;
  }
  if (unsupported > 0) {
    const g = groupSize.length;
    for (let v = 0; v < noisy.length; v++) if (!(noisy[v] >= threshold)) map[v] = g;
    groupSize.push(unsupported);
  }
  return { map, groupSize, K: groupSize.length };
}

/**
 * Private counterpart of `buildMetadata` (steps and accounting in the file header).
 * @param enc        a table encoded in domain mode (every codec `fromDomain`).
 * @param privacy    epsilon, delta (default 1e-9), optional seed.
 * @param pairBudget max total cells K_i*K_j of the pairs sent (default 200,000).
 * @returns the Create Model `metadata` (1-way + F-1 measured tree pairs + the implied other pairs
 *          within the budget; `column_stats[f].privacy = {epsilon, delta, rho, sigma}`), the
 *          selection (`tree` = the measured pairs), and a {@link PrivacyReport}.
 * @throws RangeError for a table not in domain mode or invalid epsilon/delta.
 */
export function privateMetadata(
  enc: EncodedTable,
  privacy: PrivacyOptions,
  pairBudget = 200_000,
): { metadata: Metadata; selection: PairSelection; privacy: PrivacyReport } {
  if (!enc.codecs.every((c) => c.fromDomain)) {
    throw new RangeError("privacy needs a domain: the code book of a raw table is computed from the rows.");
  }
  if (!(pairBudget >= 0)) throw new RangeError("pairBudget must be >= 0");
  const { codecs, codes, columns } = enc;
  const F = codecs.length;
  const cards = codecs.map((c) => c.K);
  const plan = planPrivacy(F, privacy.epsilon, privacy.delta ?? DEFAULT_DELTA);
  const { sigma } = plan;
  const src = uniformSource(privacy.seed);

  // 1. noisy 1-way counts; n estimated by inverse-variance weighting of their sums (Var = K sigma^2)
  const noisy1 = codes.map((a, f) => gaussianMechanism(counts1(a, cards[f]), sigma, src));
  let num = 0;
  let den = 0;
  noisy1.forEach((y, f) => {
    num += y.reduce((s, v) => s + v, 0) / cards[f];
    den += 1 / cards[f];
  });
  const nEstimate = Math.max(1, num / den);

  // 2. compression and the 1-way estimates over compressed domains
  const comp = noisy1.map((y) => compress(y, COMPRESS_SIGMAS * sigma));
  const p1c = noisy1.map((y, f) => {
    const v = new Float64Array(comp[f].K);
    for (let k = 0; k < y.length; k++) v[comp[f].map[k]] += y[k];
    return normalise(v);
  });
  const cc: CodeArray[] = codes.map((a, f) => {
    const out = new Int32Array(a.length);
    const m = comp[f].map;
    for (let r = 0; r < a.length; r++) out[r] = m[a[r]];
    return out;
  });

  // 3. spanning tree by the exponential mechanism in Kruskal order
  const pairs: Pair[] = [];
  const parent = Array.from({ length: F }, (_, k) => k);
  const find = (k: number): number => {
    while (parent[k] !== k) k = parent[k] = parent[parent[k]];
    return k;
  };
  let cells = 0;
  const fits = ([i, j]: Pair): boolean => cells + cards[i] * cards[j] <= pairBudget;
  if (plan.selectionRounds === 0) {
    if (fits([0, 1])) pairs.push([0, 1]);
  } else {
    const score = new Map<string, number>();
    for (let i = 0; i < F; i++) {
      for (let j = i + 1; j < F; j++) {
        const x = jointCounts(cc[i], comp[i].K, cc[j], comp[j].K);
        const Kb = comp[j].K;
        let l1 = 0;
        for (let a = 0; a < comp[i].K; a++) for (let b = 0; b < Kb; b++) l1 += Math.abs(x[a * Kb + b] - nEstimate * p1c[i][a] * p1c[j][b]);
        score.set(`${i},${j}`, l1);
      }
    }
    for (let round = 0; round < plan.selectionRounds; round++) {
      const cand: Pair[] = [];
      for (let i = 0; i < F; i++) for (let j = i + 1; j < F; j++) if (find(i) !== find(j) && fits([i, j])) cand.push([i, j]);
      if (cand.length === 0) break;
      const k = exponentialMechanism(
        cand.map(([i, j]) => score.get(`${i},${j}`)!),
        plan.epsilonSelect,
        1,
        src,
      );
      const [i, j] = cand[k];
      parent[find(i)] = find(j);
      pairs.push([i, j]);
      cells += cards[i] * cards[j];
    }
  }
  cells = pairs.reduce((s, [i, j]) => s + cards[i] * cards[j], 0);
  const measuredCells = cells;

  // 4. noisy pair counts; post-processing: clamp, normalise, rake to the 1-way estimates
  const measured = new Map<string, Float64Array>();
  for (const [i, j] of pairs) {
    const Ka = comp[i].K;
    const Kb = comp[j].K;
    const P = normalise(gaussianMechanism(jointCounts(cc[i], Ka, cc[j], Kb), sigma, src));
    for (let a = 0; a < Ka; a++) for (let b = 0; b < Kb; b++) P[a * Kb + b] = (1 - 1e-9) * P[a * Kb + b] + 1e-9 * p1c[i][a] * p1c[j][b];
    rake(P, Ka, Kb, p1c[i], p1c[j]);
    measured.set(`${i},${j}`, normalise(P));
  }

  // 5. the other pairs as the tree model implies them (post-processing, no budget), strongest
  //    first while the cell budget allows
  const implied = impliedPairs(F, comp.map((c) => c.K), p1c, measured);
  implied.sort((x, y) => y.mi - x.mi || x.i - y.i || x.j - y.j);
  const sent = new Map(measured);
  for (const e of implied) {
    const c = cards[e.i] * cards[e.j];
    if (cells + c > pairBudget) continue;
    cells += c;
    sent.set(`${e.i},${e.j}`, e.P);
  }

  // expand compressed codes to the full domain, a group's mass spread evenly
  const sorted = [...sent.keys()].map((k): Pair => k.split(",").map(Number) as Pair).sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  const marginals = sorted.map(([i, j]): PairMarginal => {
    const Kb = comp[j].K;
    const P = sent.get(`${i},${j}`)!;
    const Kf = cards[i];
    const Kg = cards[j];
    const mi = comp[i].map;
    const mj = comp[j].map;
    const probs = new Array<number>(Kf * Kg);
    for (let a = 0; a < Kf; a++) {
      const ca = mi[a];
      const ga = comp[i].groupSize[ca];
      for (let b = 0; b < Kg; b++) {
        const cb = mj[b];
        probs[a * Kg + b] = P[ca * Kb + cb] / (ga * comp[j].groupSize[cb]);
      }
    }
    return { features: [columns[i], columns[j]], probs };
  });

  const stats = { epsilon: plan.epsilon, delta: plan.delta, rho: plan.rho, sigma };
  const metadata: Metadata = {
    features: [...columns],
    cardinalities: {},
    empirical_probs: {},
    column_stats: {},
    value_mappings: {},
    marginals,
  };
  const compressed: Record<string, number> = {};
  codecs.forEach((codec, f) => {
    const p = new Array<number>(codec.K);
    for (let v = 0; v < codec.K; v++) {
      const c = comp[f].map[v];
      p[v] = p1c[f][c] / comp[f].groupSize[c];
    }
    metadata.cardinalities[codec.name] = codec.K;
    metadata.empirical_probs[codec.name] = p;
    metadata.column_stats![codec.name] = { type: "categorical", count: Math.round(nEstimate), missing: 0, privacy: { ...stats } };
    metadata.value_mappings![codec.name] = codec.mapping;
    compressed[codec.name] = comp[f].K;
  });
  return {
    metadata,
    selection: { pairs: sorted, tree: pairs.map((p): Pair => [p[0], p[1]]), cells },
    privacy: { ...plan, nEstimate, compressed, pairs, impliedPairs: sorted.length - pairs.length, measuredCells },
  };
}
