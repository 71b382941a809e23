/**
 * Seeded (conditional) generation (issue 12): rows drawn from the model's own conditional given
 * per-row conditions on some features.
 *
 * Model and target. The generator maps a latent z ~ N(0, s^2 I_E) (s^2 = 1 + privacy_noise^2 when
 * the model has privacy on, as the plain draw adds that noise to its latents, else s = 1) to
 * logits; given z the features are independent categoricals p_f(. | z) = softmax(logits_f / T)
 * (temperature T). A row's condition fixes some features f to a non-empty set A_f of allowed codes
 * (one code: an exact value; several: a range), the others are free. An allowed code may carry a
 * weight a_k in (0, 1] (default 1): the share of the code's values that satisfy the condition, as
 * when a numerical range covers part of a bin (a bin [55, 65) under age >= 60 is half inside, so the
 * event is "bin and a value inside the range", of probability p_f(k | z) * a_k when the decoder draws
 * uniformly inside the bin). The target for the row is the plain draw conditioned on the event
 * "every fixed feature falls in its set":
 *
 *   z   ~ pi(z) ∝ N(z; 0, s^2 I) * prod_{f fixed} p_f(A_f | z),   p_f(A | z) = sum_{k in A} a_k p_f(k | z)
 *   x_f ~ a_k p_f(k | z) over k in A_f, renormalised                  (f fixed)
 *   x_f ~ the sampling kernel of `sampling.ts` on logits_f(z)            (f free: T and top_p)
 *
 * Temperature applies everywhere (weights, restricted draws and free draws), so with T != 1 the
 * target is the tempered plain draw conditioned. Nucleus truncation (top_p) applies to the free
 * features only: it trims the tail of an unconditioned draw, while a fixed feature's allowed set is
 * the caller's choice (a rare code the nucleus would cut is still honoured). With top_p null the
 * rows are exactly the plain draw (same T) conditioned on the event.
 *
 * Numerical zero. p_f(k | z) is computed as the kernel computes it: e_k = exp(l_k / T - max_j l_j / T)
 * in float64. When every allowed code of a fixed feature has e_k = 0 (an underflow: the kernel could
 * never draw it), p_f(A_f | z) = 0 and the latent's weight is 0; everything else is kept in log
 * space (log-weights are sums of log p_f(A_f | z)), so a product of many small probabilities never
 * underflows. A condition whose weight is 0 at every latent tried ({@link ConditionalOptions.zeroSearch}
 * latents from the prior) throws {@link ConditionError}; any other condition yields rows.
 *
 * Method: self-normalised importance sampling with an adaptive proposal, run once per condition
 * group (rows with identical conditions share one candidate population):
 *  - Adaptive multiple importance sampling (AMIS; Cornuet, Marin, Mira & Robert, "Adaptive
 *    multiple importance sampling", Scand. J. Stat. 39(4), 2012), a form of population Monte Carlo
 *    (Cappé, Guillin, Marin & Robert, "Population Monte Carlo", JCGS 13(4), 2004). Round 0 draws
 *    candidates from the prior; each later round draws from a proposal fitted to all weighted
 *    candidates so far. Weights are deterministic-mixture weights (Owen & Zhou, "Safe and effective
 *    importance sampling", JASA 95, 2000; Veach & Guibas 1995): every candidate, whatever round drew
 *    it, has w = pi~(z) / sum_t (N_t / N) q_t(z), recomputed as rounds are added. The prior round
 *    stays in that mixture, a defensive component that bounds the weights.
 *  - The proposal family: the prior in every direction but a few (a "likelihood-informed subspace",
 *    Cui, Martin, Marzouk, Solonen & Spantini, "Likelihood-informed dimension reduction for nonlinear
 *    inverse problems", Inverse Problems 30, 2014). In standardised coordinates (u = z / s),
 *    q(u) = N(u; 0, I_E) * g(V^T u) / N_r(V^T u; 0, I_r), V (E x r) with orthonormal columns, g a
 *    mixture of at most {@link MAX_COMPONENTS} Gaussians on R^r. V spans (i) the direction of the
 *    weighted mean, shrunk by the positive-part James–Stein factor (James & Stein 1961) so a mean the
 *    candidates cannot resolve stays at 0, and (ii) the eigenvectors of the weighted covariance
 *    (projected off (i)) whose eigenvalues leave the Marchenko–Pastur band of a sample of the prior
 *    of the same effective size, most extreme first, r <= {@link MAX_RANK} in all. The eigenproblem is
 *    solved by Jacobi on the E x E matrix for E <= 128, else by randomised subspace iteration with a
 *    Rayleigh–Ritz step (Halko, Martinsson & Tropp, SIAM Review 53, 2011). g is fitted to the
 *    candidates' coordinates V^T u by weighted EM (Dempster, Laird & Rubin 1977; {@link fitMixture}).
 *    The fit uses at most {@link FIT_POINTS} candidates (a systematic resample by weight).
 *    Density ratios then live in r dimensions only: the other E - r directions cancel exactly.
 *    Why: on a generator trained on UCI Adult (medium, E = 64, 100 epochs) the posterior of one
 *    condition moves in 1-5 directions. The IS efficiency (ESS / N) of an adapted round for
 *    sex = Female (probability 0.33; prior 0.35): diagonal Gaussian over all 64 dimensions 0.53,
 *    full 64 x 64 Gaussian 0.30 (its estimation noise dominates), one Gaussian in the subspace 0.68,
 *    the mixture in the subspace 0.78-0.81; for a five-column condition of probability 0.4%
 *    (prior 0.03): 0.13 / 0.002 / 0.35 / 0.50.
 *  - Round sizes: a pilot of {@link pilotSize} prior candidates; while the efficiency of the latest
 *    round still grows by a factor {@link CONVERGED_RATIO} or more, the next round is sized for
 *    {@link ADAPTING_SHARE} of the missing ESS and at most {@link GROWTH} times the last; then for all
 *    of it: (target - ESS) * {@link SIZE_MARGIN} / efficiency. A group stops when its ESS reaches its
 *    target or its budget is spent (then its rows come from the population it has, and the report
 *    says the target was missed). For 100,000 rows this is typically 4096 (prior), 16384, 65536 and
 *    one final round.
 *  - ESS (Kish): (sum w)^2 / sum w^2 over the group's candidates. Target: max(minEss,
 *    ceil(essPerRow * rows)), default max(32, rows). ESS >= rows is what makes the output as good as
 *    independent draws: the rows come from the candidates themselves (below), so the error of a
 *    free column's frequency is about p(1 - p) / ESS plus a resampling term below the multinomial's.
 *    (Measured: over 20 seeds the chi-square p-values of test/conditional.test.ts's exactness checks
 *    are spread evenly over (0, 1), no overdispersion.) A condition that leaves nothing random
 *    (every feature fixed to one code) needs ESS 1; no condition at all needs no weights (the plain
 *    draw: as many candidates as rows).
 *  - Budget per group: pilot + budgetFactor * target candidates (default 8 * target), and never more
 *    than `maxCandidateBytes` (default 256 MiB) of stored candidates (latents, codes, weights:
 *    4E + 4F + 16 bytes each, ~340 bytes for Adult with E = 64).
 *  - Rows: every candidate's row is drawn when it is evaluated (fixed features restricted to A_f,
 *    free ones by the kernel), from the same forward pass that gives its weight. The group's rows are
 *    then picked by systematic resampling (Kitagawa, "Monte Carlo filter and smoother", JCGS 5(1),
 *    1996; Carpenter, Clifford & Fearnhead 1999) of the candidates by weight: a candidate picked
 *    once gives its row; picked c > 1 times, it gives its row and c - 1 fresh rows drawn from its
 *    latent (one more forward pass each), so no row is an exact copy made by resampling. The rows
 *    are shuffled (Fisher–Yates) before they go to the group's row indices.
 *  - Distinct conditions (imputation: every row its own fixed cells): each distinct condition is a
 *    group of its own, with the same scheme and a target of `minEss` (32) for a single row, so a
 *    budget of 64 + 8 * 32 = 320 candidates; the groups' candidates are evaluated together (one
 *    forward pass per chunk over all groups of a wave). With few effective candidates the mean and
 *    covariance cannot be resolved in E dimensions (the James–Stein factor is 0 below ~E / |mean|^2
 *    effective candidates, covariance directions need 2E), so such a group is in effect
 *    sampling-importance-resampling from the prior (Rubin 1987) with K adaptive to its ESS. Measured
 *    on Adult rows (E = 64, 1,000 rows, each its own condition): 3 cells fixed (median probability
 *    e^-4.7): 69% of rows reach ESS 32 within the budget, median ESS 39; 7 cells fixed (e^-10): 17%,
 *    median 12.5; 13 of 14 cells fixed (e^-17): median ESS 3.9. The report's ESS says which rows are
 *    rough. Groups are processed in waves whose budgets fit `maxCandidateBytes`.
 *  - Calibration ({@link ConditionalOptions.calibration}, the wire's `calibrate: true`, the SDK's
 *    default for non-private metadata). The model matches the given marginals only approximately,
 *    and its conditionals inherit the error: on raw UCI Adult (medium, 100 epochs) the rows with
 *    education = Prof-school have education-num 15 only 36% of the time, and `age >= 60` leaves the
 *    other columns' 1-way TVD against TRAIN's old rows at 0.046 (0.019 is the noise floor). What
 *    the given marginals say about a condition is then used: for a condition on one feature, the
 *    other features' conditional 1-way marginals (exact: sum over the allowed codes of the pairs)
 *    are targets, and the group's candidates, weighted as above, are raked to them (bounded raking,
 *    `calibrate.ts`, as the calibrated plain draw rakes its pool); for any condition, values the
 *    data never has with a fixed value although independence would put 10 or more rows there
 *    (structural zeros: Prof-school rules out every education-num but 15) weigh 1e-10 times as
 *    much, inside the importance weights (so the ESS and the proposal see them). A calibrated
 *    group's rows are drawn from its candidates without repeats by systematic sampling with
 *    inclusion probabilities (Madow 1949), from an ESS of {@link CALIBRATED_ESS_PER_ROW} per row
 *    (the calibrated draw's pool is 2 x rows for the same reason), and no fresh rows are drawn from
 *    latents (their weights would not hold the exclusions or the raking). A condition on two or
 *    more features gets the exclusions only: its exact targets would need 3-way marginals. With no
 *    fixed feature the targets are every marginal: the calibrated draw. The target is then the
 *    model's conditional corrected, no longer the model's own conditional; measured on raw Adult
 *    (`npm run bench -- seeded`): free columns' 1-way / 2-way TVD against TRAIN's rows with
 *    `age in [60, 90]` 0.046 / 0.103 own, 0.013 / 0.063 calibrated.
 *  - Cost per candidate: one forward pass, the kernel, E normals (a ziggurat, drawn as the plain
 *    draw draws its latents, draws.ts), plus exp over every code of every fixed
 *    feature (for its normaliser; ~5 us per candidate when 13 of Adult's 14 features are fixed).
 *
 * Randomness: one xoshiro128** stream (rng.ts) seeded with `seed` (given or fresh) gives, in the
 * order of each group's first row, one 64-bit seed per group. A group's own stream gives, per round:
 * a 53-bit round seed (two 32-bit outputs), from which draws.ts `drawRequest` draws the round's
 * prior latents (E ziggurat normals per candidate) and its rows' uniforms (F per candidate) in
 * blocks, as a plain generate request of that seed draws them (in the native core when loaded, the
 * same values in TypeScript otherwise); then r normals per candidate, then one uniform per candidate
 * picking its mixture component when there are several; for the fit the start of its systematic
 * resample (when there are more than FIT_POINTS candidates) and, for E > 128, the start vectors of
 * its subspace iteration; at the end the start of the systematic resampling of the rows, the
 * uniforms of the extra rows (F each) and the shuffle. The same weights, conditions, seed and
 * options give identical codes (on either compute path for identical logits). (Until issue 13's
 * draws the candidates' normals and uniforms came from the group's stream itself: a seed gives
 * other rows since then, once.)
 *
 * Forward passes and the kernel: on a native model one fused call per chunk
 * (`NativeGenerator.generateWithLogits`: codes and logits of one forward pass), else `generator.ts`
 * `forward` and `sampling.ts` `sampleCodes`; the same codes for the same logits. The proposal's
 * per-candidate arithmetic (the deterministic-mixture update {@link mixtureAccumulateJs}, the moves
 * into the subspace {@link proposalShiftJs}, the fit's weighted Gram matrix {@link weightedGramJs})
 * runs in the native core when the addon is loaded (native/src/mixture_binding.cc), bit for bit as
 * those references, so the rows of a seed do not depend on it (test/native-mixture.test.ts).
 */
import { MAX_ROWS_PER_REQUEST } from "../../types";
import { EXCLUDED_LOG_FACTOR, systematicSample, type ConditionCalibration, type FixedCell } from "../sampling/calibrate";
import { drawRequest } from "../sampling/draws";
import { betweenChunks, forwardLogits, GENERATE_CHUNK, InputError, rake, type SamplingOptions } from "../sampling/generate";
import { NATIVE_GENERATE_CHUNK } from "../compute/native-core";
import { fillNormalZiggurat, Rng } from "../sampling/rng";
import { nativeExport } from "../compute/native";
import { kernelWeights, sampleCodes } from "../sampling/sampling";
import type { GeneratorModel } from "../training/trainer";

/**
 * A range cell with per-code weights: `weights[i]` in (0, 1] is the share of code `codes[i]`'s values
 * that satisfy the condition (1: all of them); codes distinct, the lists of equal, non-zero length.
 */
export interface WeightedCell {
  codes: readonly number[];
  weights: readonly number[];
}

/**
 * A fixed cell: one allowed code, a non-empty list of allowed codes (a range condition), or allowed
 * codes with weights ({@link WeightedCell}: a range covering part of some bins).
 */
export type CellCondition = number | readonly number[] | WeightedCell;

/**
 * The condition of one row: one entry per feature, in layout order; `null` / `undefined` (or a
 * list holding every code of the feature) leaves the feature free.
 */
export type RowCondition = readonly (CellCondition | null | undefined)[];

/** Options of {@link sampleConditional}: the sampling options of the plain draw, plus the method's. */
export interface ConditionalOptions extends SamplingOptions {
  /** Seed of the stream (default: a fresh random seed, returned in the result). */
  seed?: number;
  /** sigma of the model's privacy noise (0 when privacy is off): the prior is N(0, (1 + sigma^2) I). */
  privacyNoise?: number;
  /** Smallest ESS target of a group (default {@link DEFAULT_MIN_ESS}). */
  minEss?: number;
  /**
   * ESS target per row of a group: target = max(minEss, ceil(essPerRow * rows)). Default 1, or
   * {@link CALIBRATED_ESS_PER_ROW} with `calibration`.
   */
  essPerRow?: number;
  /**
   * Calibration (`calibrate: true`; `calibrate.ts` `conditionCalibration`): given a group's fixed
   * features (ascending), what the given marginals say about its rows, or null for nothing.
   * Exclusions multiply the weight of a candidate row holding an excluded value by
   * exp(EXCLUDED_LOG_FACTOR) = 1e-10 (part of the target, so the ESS and the proposal see them);
   * targets: the candidates' final weights are raked to them (bounded raking from the importance
   * weights, the calibrated draw's method) and the rows drawn without repeats by systematic
   * sampling with inclusion probabilities (Madow 1949), with an ESS target of
   * {@link CALIBRATED_ESS_PER_ROW} per row. Default: none (the model's own conditional).
   */
  calibration?: (fixed: readonly FixedCell[]) => ConditionCalibration | null;
  /** A group may spend pilot + budgetFactor * target candidates (default {@link DEFAULT_BUDGET_FACTOR}). */
  budgetFactor?: number;
  /** Prior candidates tried before a condition with no positive weight is declared impossible (default {@link ZERO_SEARCH}). */
  zeroSearch?: number;
  /** Largest dimension r of the proposal's subspace (default {@link MAX_RANK}). */
  maxRank?: number;
  /** Largest number of Gaussians of the proposal's mixture in the subspace (default {@link MAX_COMPONENTS}). */
  maxComponents?: number;
  /** Memory bound of the candidates held at once, bytes (default {@link MAX_CANDIDATE_BYTES}). */
  maxCandidateBytes?: number;
  /**
   * The contract's parameter path of a {@link ConditionError} on row `row`, `features` the
   * features at fault (none when the row as a whole is) (default `body.embedding`).
   */
  paramFor?: (row: number, features: readonly string[]) => string;
  /**
   * How a {@link ConditionError}'s message names the condition of row `row`, which it goes on to
   * describe (default `the condition of row ${row}`).
   */
  conditionLabel?: (row: number) => string;
}

/** What one condition group did (the rows sharing one condition). */
export interface ConditionGroupReport {
  /** Index of the group's first row. */
  firstRow: number;
  /** Rows of the group. */
  numRows: number;
  /** Names of the fixed features. */
  features: string[];
  /** The ESS aimed at. */
  essTarget: number;
  /** Kish ESS of the final weighted population. */
  ess: number;
  /** Whether `ess >= essTarget` (false: the budget ran out first). */
  targetMet: boolean;
  /** Candidates evaluated (forward passes for weights). */
  candidates: number;
  /** Rounds (the pilot included). */
  rounds: number;
  /** Dimension r of the last proposal's subspace (0: the prior). */
  rank: number;
  /** Estimated log probability of the condition under the model (log of the mean IS weight). */
  logProb: number;
  /** Extra rows drawn from the latent of a candidate picked more than once (one forward pass each). */
  redraws: number;
}

/** The rows and the per-group report. */
export interface ConditionalResult {
  /** One Int32Array of n codes per feature, layout order (as `sampleRows`). */
  columns: Int32Array[];
  /** The seed of the stream (given or drawn). */
  seed: number;
  /** One report per distinct condition, in the order of first rows. */
  groups: ConditionGroupReport[];
  /** The group (index into `groups`) of every row. */
  groupOfRow: Int32Array;
}

/**
 * Thrown for a condition the model gives probability 0 (every allowed code underflows at every
 * latent tried) and for malformed conditions. An {@link InputError}, so the engine maps it to
 * `parameter_invalid` with `param`.
 */
export class ConditionError extends InputError {
  constructor(
    message: string,
    param: string,
    /** The first row with this condition. */
    readonly row: number,
    /** The features at fault (the fixed features whose sets underflowed; all fixed ones when only the combination did). */
    readonly features: string[],
  ) {
    super(message, param);
    this.name = "ConditionError";
  }
}

/** Default smallest ESS target of a group. */
export const DEFAULT_MIN_ESS = 32;
/**
 * Default ESS target per row of a calibrated draw: drawing rows without repeats by inclusion
 * probabilities needs a population whose weights rarely give one candidate more than 1/rows of
 * the mass (the calibrated plain draw's pool is 2 x rows for the same reason).
 */
export const CALIBRATED_ESS_PER_ROW = 2;
/** Default budget: pilot + this * target candidates per group. */
export const DEFAULT_BUDGET_FACTOR = 8;
/** Default prior candidates tried before a condition with no positive weight is impossible. */
export const ZERO_SEARCH = 65536;
/** Default largest subspace dimension of a proposal. */
export const MAX_RANK = 8;
/** Default largest number of mixture components of a proposal in its subspace. */
export const MAX_COMPONENTS = 4;
/** Default memory bound of the candidates held at once (256 MiB). */
export const MAX_CANDIDATE_BYTES = 256 * 1024 * 1024;
/** Largest pilot (round 0, from the prior). */
const MAX_PILOT = 4096;
/** Smallest pilot. */
const MIN_PILOT = 64;
/** While adapting, a round is at most this many times the previous one. */
const GROWTH = 4;
/** Adaptation has converged once a round's efficiency grows by less than this factor. */
const CONVERGED_RATIO = 1.1;
/** While adapting, a round is sized for at most this share of the missing ESS. */
const ADAPTING_SHARE = 0.6;
/** Rounds sized to reach the target ask for this much more ESS than missing. */
const SIZE_MARGIN = 1.05;
/** Weighted points the proposal fit uses (a systematic resample when there are more). */
const FIT_POINTS = 4096;
/** Largest E for which the fit decomposes the E x E covariance itself (else: subspace iteration). */
const EXPLICIT_MAX_E = 128;
/** Subspace iterations of the fit. */
const SUBSPACE_ITERS = 4;
/** Extra vectors of the subspace iteration beyond the rank sought. */
const OVERSAMPLE = 4;
/** Eigenvalues must leave the Marchenko–Pastur band by this factor to count. */
const BAND_SLACK = 1.1;
/** Covariance directions are sought only with an ESS of at least this times E. */
const COV_MIN_ESS_PER_DIM = 2;

/** The pilot size for an ESS target: clamp(2 * target, MIN_PILOT, MAX_PILOT). */
function pilotSize(target: number): number {
  return Math.min(MAX_PILOT, Math.max(MIN_PILOT, 2 * target));
}

// ---------------------------------------------------------------------------------------------
// Standard normals: `fillNormalZiggurat` now lives in rng.ts (the plain draw uses it too, issue 13);
// re-exported here for existing importers.

export { fillNormalZiggurat };

// ---------------------------------------------------------------------------------------------
// Proposals

/**
 * sum_j a[ao + j] * b[bo + j] for j < n, with four partial sums (the additions of one chain wait on
 * each other; four chains run 2-3x faster in V8).
 */
function dot(a: Float64Array, ao: number, b: Float32Array, bo: number, n: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let j = 0;
  for (; j + 3 < n; j += 4) {
    s0 += a[ao + j] * b[bo + j];
    s1 += a[ao + j + 1] * b[bo + j + 1];
    s2 += a[ao + j + 2] * b[bo + j + 2];
    s3 += a[ao + j + 3] * b[bo + j + 3];
  }
  for (; j < n; j++) s0 += a[ao + j] * b[bo + j];
  return s0 + s1 + (s2 + s3);
}

/**
 * The deterministic-mixture update of one proposal (`Proposal.accumulate`), the reference of the
 * native core's `mixtureAccumulate` (native/src/mixture_binding.cc, the same doubles bit for bit):
 * for each latent u_i (row i of `x`, n x E), mix[i] += count * q(u_i) / N(u_i; 0, I_E), where q is
 * the prior off the subspace spanned by the r rows of `V` (r x E, orthonormal) and inside it a
 * mixture of C = K.length Gaussians with means `M` (C x r), lower Cholesky factors `L` (C x r x r)
 * and log-constants `K` (log weight - log det / 2): the ratio is exp(log g(y) - log N_r(y)) with
 * y = V u (Owen & Zhou 2000; Cornuet et al. 2012's weights), in linear space: one exp per
 * component and one for the ratio.
 * @returns -1, or the first i whose ratio is not finite (mix[i..] unchanged).
 */
export function mixtureAccumulateJs(
  x: Float32Array,
  n: number,
  E: number,
  V: Float64Array,
  r: number,
  M: Float64Array,
  L: Float64Array,
  K: Float64Array,
  count: number,
  mix: Float64Array,
): number {
  const C = K.length;
  const rr = r * r;
  const u = new Float64Array(r);
  const y = new Float64Array(r);
  const t = new Float64Array(C);
  for (let i = 0; i < n; i++) {
    const off = i * E;
    let uu = 0;
    for (let a = 0; a < r; a++) {
      const s = dot(V, a * E, x, off, E);
      u[a] = s;
      uu += s * s;
    }
    let mx = -Infinity;
    for (let c = 0; c < C; c++) {
      const mo = c * r;
      const lo = c * rr;
      let yy = 0;
      for (let a = 0; a < r; a++) {
        let w = u[a] - M[mo + a];
        for (let b = 0; b < a; b++) w -= L[lo + a * r + b] * y[b];
        w /= L[lo + a * r + a];
        y[a] = w;
        yy += w * w;
      }
      const tc = K[c] - 0.5 * yy;
      t[c] = tc;
      if (tc > mx) mx = tc;
    }
    let s = 0;
    for (let c = 0; c < C; c++) s += Math.exp(t[c] - mx);
    const ratio = s * Math.exp(mx + 0.5 * uu);
    if (!Number.isFinite(ratio)) return i;
    mix[i] += count * ratio;
  }
  return -1;
}

/**
 * The lower triangle (k <= j) of the weighted Gram matrix: T[j E + k] += sum_i w_i Y[i, j] Y[i, k]
 * over the n rows of `Y` (n x E), rows in order, rows with w_i = 0 skipped (the proposal fit's
 * weighted covariance). The reference of the native core's `weightedGram` (mixture_binding.cc,
 * the same doubles bit for bit: per element the same additions in the same order).
 */
export function weightedGramJs(Y: Float64Array, n: number, E: number, w: Float64Array, T: Float64Array): void {
  for (let i = 0; i < n; i++) {
    const wi = w[i];
    if (wi === 0) continue;
    const o = i * E;
    for (let j = 0; j < E; j++) {
      const a = wi * Y[o + j];
      const row = j * E;
      for (let k = 0; k <= j; k++) T[row + k] += a * Y[o + k];
    }
  }
}

/** One Gaussian of a proposal's subspace mixture: weight, mean m (r), lower Cholesky factor L of C. */
interface Component {
  logWeight: number;
  m: Float64Array;
  L: Float64Array;
  logDet: number;
}

function component(weight: number, m: Float64Array, L: Float64Array, r: number): Component {
  let ld = 0;
  for (let a = 0; a < r; a++) ld += 2 * Math.log(L[a * r + a]);
  return { logWeight: Math.log(weight), m, L, logDet: ld };
}

/**
 * q(u) = N(u; 0, I_E) * g(V^T u) / N_r(V^T u; 0, I_r) in standardised coordinates, g a mixture of
 * Gaussians on R^r; r = 0 is the prior. `V` is r x E row-major (orthonormal rows).
 */
class Proposal {
  static prior(E: number): Proposal {
    return new Proposal(E, 0, new Float64Array(0), []);
  }

  /** The components' means (C x r), Cholesky factors (C x r x r) and log weight - log det / 2, flat. */
  private readonly flatM: Float64Array;
  private readonly flatL: Float64Array;
  private readonly constant: Float64Array;

  constructor(
    readonly E: number,
    readonly r: number,
    readonly V: Float64Array,
    readonly comps: readonly Component[],
  ) {
    this.flatM = new Float64Array(comps.length * r);
    this.flatL = new Float64Array(comps.length * r * r);
    this.constant = new Float64Array(comps.length);
    comps.forEach((c, i) => {
      this.flatM.set(c.m, i * r);
      this.flatL.set(c.L, i * r * r);
      this.constant[i] = c.logWeight - 0.5 * c.logDet;
    });
  }

  /**
   * For each of the `n` latents u_i of `x` (n x E): mix[i] += count * q(u_i) / N(u_i; 0, I_E), the
   * deterministic-mixture update for this proposal drawn `count` times, in linear space (one exp
   * per component, no log): the ratio is exp(log g(y) - log N_r(y)) in the subspace only. Every
   * group's mixture holds the prior (ratio 1, its pilot), so mix >= pilot > 0; a ratio past
   * float64's range would need |V^T u| > 37 standard deviations, which no latent of these
   * proposals reaches, and is refused rather than rounded.
   * @throws Error when a ratio is not finite (never seen; it would be a bug, not a bad input).
   */
  accumulate(x: Float32Array, n: number, count: number, mix: Float64Array): void {
    const { r, E, V } = this;
    if (r === 0) {
      for (let i = 0; i < n; i++) mix[i] += count;
      return;
    }
    const native = nativeExport<typeof mixtureAccumulateJs>("mixtureAccumulate");
    const bad = native
      ? native(x, n, E, V, r, this.flatM, this.flatL, this.constant, count, mix)
      : mixtureAccumulateJs(x, n, E, V, r, this.flatM, this.flatL, this.constant, count, mix);
    if (bad >= 0) throw new Error(`proposal density ratio not finite at candidate ${bad}`);
  }

  /**
   * `count` standardised latents of this proposal (count x E, in `x`, which it returns), from `x`
   * holding `count` draws of the prior N(0, I_E) (draws.ts, below): the prior's part is kept off
   * the subspace, and inside it, from `rng`, r normals per latent, then (with more than one
   * component) one uniform per latent picking its component.
   */
  draw(rng: Rng, count: number, x: Float32Array): Float32Array {
    const { r, E, V, comps } = this;
    if (r === 0) return x;
    const eta = fillNormalZiggurat(rng, new Float64Array(count * r));
    const pick = comps.length > 1 ? rng.fillUniform(new Float64Array(count)) : null;
    const which = new Int32Array(count);
    if (pick) {
      for (let i = 0; i < count; i++) {
        let c = 0;
        let v = pick[i];
        while (c < comps.length - 1 && v >= Math.exp(comps[c].logWeight)) v -= Math.exp(comps[c++].logWeight);
        which[i] = c;
      }
    }
    const native = nativeExport<typeof proposalShiftJs>("proposalShift");
    (native ?? proposalShiftJs)(x, count, E, V, r, this.flatM, this.flatL, which, eta);
    return x;
  }
}

/**
 * Moves `count` prior draws (rows of `x`, count x E, float32, in place) into a proposal's subspace
 * mixture: row i's coordinates V u (r of them, `V` r x E orthonormal rows) are replaced by
 * m_c + L_c eta_i, c = `which[i]`, means `M` (C x r), lower Cholesky factors `L` (C x r x r),
 * `eta` count x r standard normals; the part of u off the subspace is kept. The reference of the
 * native core's `proposalShift` (native/src/mixture_binding.cc, the same floats bit for bit).
 */
export function proposalShiftJs(
  x: Float32Array,
  count: number,
  E: number,
  V: Float64Array,
  r: number,
  M: Float64Array,
  L: Float64Array,
  which: Int32Array,
  eta: Float64Array,
): void {
  const t = new Float64Array(r);
  const rr = r * r;
  for (let i = 0; i < count; i++) {
    const mo = which[i] * r;
    const lo = which[i] * rr;
    const o = i * E;
    for (let a = 0; a < r; a++) {
      const p = dot(V, a * E, x, o, E);
      let s = M[mo + a];
      for (let b = 0; b <= a; b++) s += L[lo + a * r + b] * eta[i * r + b];
      t[a] = s - p;
    }
    for (let j = 0; j < E; j++) {
      let s = x[o + j];
      for (let a = 0; a < r; a++) s += t[a] * V[a * E + j];
      x[o + j] = s;
    }
  }
}

/** Eigen-decomposition of a small symmetric matrix (cyclic Jacobi): values and column eigenvectors. */
function eigSym(A: Float64Array, n: number): { values: Float64Array; vectors: Float64Array } {
  const a = Float64Array.from(A);
  const v = new Float64Array(n * n);
  for (let i = 0; i < n; i++) v[i * n + i] = 1;
  for (let sweep = 0; sweep < 100; sweep++) {
    let off = 0;
    let diag = 0;
    for (let p = 0; p < n; p++) {
      diag += a[p * n + p] * a[p * n + p];
      for (let q = p + 1; q < n; q++) off += a[p * n + q] * a[p * n + q];
    }
    if (off <= 1e-30 * Math.max(diag, 1e-300)) break;
    for (let p = 0; p < n; p++) {
      for (let q = p + 1; q < n; q++) {
        const apq = a[p * n + q];
        if (apq === 0) continue;
        const theta = (a[q * n + q] - a[p * n + p]) / (2 * apq);
        const t = (theta >= 0 ? 1 : -1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let k = 0; k < n; k++) {
          const akp = a[k * n + p];
          const akq = a[k * n + q];
          a[k * n + p] = c * akp - s * akq;
          a[k * n + q] = s * akp + c * akq;
        }
        for (let k = 0; k < n; k++) {
          const apk = a[p * n + k];
          const aqk = a[q * n + k];
          a[p * n + k] = c * apk - s * aqk;
          a[q * n + k] = s * apk + c * aqk;
        }
        for (let k = 0; k < n; k++) {
          const vkp = v[k * n + p];
          const vkq = v[k * n + q];
          v[k * n + p] = c * vkp - s * vkq;
          v[k * n + q] = s * vkp + c * vkq;
        }
      }
    }
  }
  const values = new Float64Array(n);
  for (let i = 0; i < n; i++) values[i] = a[i * n + i];
  return { values, vectors: v };
}

/** Lower Cholesky factor of an r x r SPD matrix (eigenvalues clamped to [lo, hi] first). */
function cholClamped(C: Float64Array, r: number, lo: number, hi: number): Float64Array {
  const { values, vectors } = eigSym(C, r);
  const S = new Float64Array(r * r);
  for (let i = 0; i < r; i++) {
    for (let j = 0; j < r; j++) {
      let s = 0;
      for (let k = 0; k < r; k++) s += vectors[i * r + k] * Math.min(hi, Math.max(lo, values[k])) * vectors[j * r + k];
      S[i * r + j] = s;
    }
  }
  const L = new Float64Array(r * r);
  for (let i = 0; i < r; i++) {
    for (let j = 0; j <= i; j++) {
      let s = S[i * r + j];
      for (let k = 0; k < j; k++) s -= L[i * r + k] * L[j * r + k];
      L[i * r + j] = i === j ? Math.sqrt(Math.max(s, lo)) : s / L[j * r + j];
    }
  }
  return L;
}

/**
 * Orthonormalises the k columns of `Q` (E x k, column-major: column c at c * E) in place by modified
 * Gram–Schmidt, each also made orthogonal to the unit vectors `against`; a column that vanishes is
 * replaced by zeros. Returns the number of non-zero columns (they come first).
 */
function orthonormalise(Q: Float64Array, E: number, k: number, against: readonly Float64Array[]): number {
  let kept = 0;
  for (let c = 0; c < k; c++) {
    const col = Q.subarray(c * E, (c + 1) * E);
    let before = 0;
    for (let j = 0; j < E; j++) before += col[j] * col[j];
    for (let pass = 0; pass < 2; pass++) {
      for (const a of against) {
        let d = 0;
        for (let j = 0; j < E; j++) d += a[j] * col[j];
        for (let j = 0; j < E; j++) col[j] -= d * a[j];
      }
      for (let p = 0; p < kept; p++) {
        const q = Q.subarray(p * E, (p + 1) * E);
        let d = 0;
        for (let j = 0; j < E; j++) d += q[j] * col[j];
        for (let j = 0; j < E; j++) col[j] -= d * q[j];
      }
    }
    let nrm = 0;
    for (let j = 0; j < E; j++) nrm += col[j] * col[j];
    if (!(nrm > 1e-20 * Math.max(before, 1e-300))) continue;
    const inv = 1 / Math.sqrt(nrm);
    const dst = Q.subarray(kept * E, (kept + 1) * E);
    for (let j = 0; j < E; j++) dst[j] = col[j] * inv;
    kept++;
  }
  Q.fill(0, kept * E, k * E);
  return kept;
}

/**
 * Fits a {@link Proposal} to weighted points (the method of the module comment).
 * @param X points, n x E row-major (standardised latents); @param w their weights, summing to 1;
 * @param nEff the effective number of points (Kish ESS, at most n).
 */
function fitProposal(X: Float32Array, w: Float64Array, n: number, nEff: number, E: number, maxRank: number, maxComponents: number, rng: Rng): Proposal {
  if (!(nEff > 1) || maxRank < 1) return Proposal.prior(E);
  const mu = new Float64Array(E);
  for (let i = 0; i < n; i++) {
    const a = w[i];
    if (a === 0) continue;
    const o = i * E;
    for (let j = 0; j < E; j++) mu[j] += a * X[o + j];
  }
  let mu2 = 0;
  for (let j = 0; j < E; j++) mu2 += mu[j] * mu[j];
  // Positive-part James–Stein: shrink the mean toward the prior's 0 by (E - 2) / (nEff |mu|^2).
  const js = E > 2 ? Math.max(0, 1 - (E - 2) / (nEff * mu2)) : 1;
  const dirs: Float64Array[] = [];
  if (js > 0 && mu2 > 0) {
    const inv = 1 / Math.sqrt(mu2);
    dirs.push(Float64Array.from(mu, (v) => v * inv));
  }
  const want = maxRank - dirs.length;
  if (want > 0 && nEff >= COV_MIN_ESS_PER_DIM * E && E > dirs.length) {
    // Centred points as float64 (the covariance operator's input).
    const Y = new Float64Array(n * E);
    for (let i = 0; i < n; i++) for (let j = 0; j < E; j++) Y[i * E + j] = X[i * E + j] - mu[j];
    // The eigenproblem of P (S - I) P, P the projector off the mean direction, S the weighted
    // covariance: explicitly for E <= EXPLICIT_MAX_E (Jacobi on E x E), else on the span of a
    // randomised subspace iteration (its Rayleigh–Ritz matrix T in the orthonormal basis Q).
    let Q: Float64Array;
    let kk: number;
    let T: Float64Array;
    if (E <= EXPLICIT_MAX_E) {
      kk = E;
      Q = new Float64Array(E * E);
      for (let j = 0; j < E; j++) Q[j * E + j] = 1;
      T = new Float64Array(E * E);
      (nativeExport<typeof weightedGramJs>("weightedGram") ?? weightedGramJs)(Y, n, E, w, T);
      for (let j = 0; j < E; j++) {
        T[j * E + j] -= 1;
        for (let k = 0; k < j; k++) T[k * E + j] = T[j * E + k];
      }
      for (const d of dirs) {
        const Td = new Float64Array(E);
        let dTd = 0;
        for (let j = 0; j < E; j++) {
          let s = 0;
          for (let k = 0; k < E; k++) s += T[j * E + k] * d[k];
          Td[j] = s;
          dTd += d[j] * s;
        }
        for (let j = 0; j < E; j++) for (let k = 0; k < E; k++) T[j * E + k] += -Td[j] * d[k] - d[j] * Td[k] + dTd * d[j] * d[k];
      }
    } else {
      const k = Math.min(E - dirs.length, want + OVERSAMPLE);
      Q = fillNormalZiggurat(rng, new Float64Array(k * E));
      kk = orthonormalise(Q, E, k, dirs);
      const proj = new Float64Array(n);
      const applyA = (src: Float64Array, dst: Float64Array, cols: number): void => {
        dst.fill(0, 0, cols * E);
        for (let c = 0; c < cols; c++) {
          const q = src.subarray(c * E, (c + 1) * E);
          for (let i = 0; i < n; i++) {
            const o = i * E;
            let s = 0;
            for (let j = 0; j < E; j++) s += Y[o + j] * q[j];
            proj[i] = s * w[i];
          }
          const out = dst.subarray(c * E, (c + 1) * E);
          for (let i = 0; i < n; i++) {
            const p = proj[i];
            if (p === 0) continue;
            const o = i * E;
            for (let j = 0; j < E; j++) out[j] += p * Y[o + j];
          }
          for (let j = 0; j < E; j++) out[j] -= q[j];
          for (const a of dirs) {
            let d = 0;
            for (let j = 0; j < E; j++) d += a[j] * out[j];
            for (let j = 0; j < E; j++) out[j] -= d * a[j];
          }
        }
      };
      const AQ = new Float64Array(k * E);
      for (let it = 0; it < SUBSPACE_ITERS && kk > 0; it++) {
        applyA(Q, AQ, kk);
        Q.set(AQ.subarray(0, kk * E));
        kk = orthonormalise(Q, E, kk, dirs);
      }
      T = new Float64Array(kk * kk);
      if (kk > 0) {
        applyA(Q, AQ, kk);
        for (let a = 0; a < kk; a++) {
          for (let b = 0; b < kk; b++) {
            let s = 0;
            for (let j = 0; j < E; j++) s += Q[a * E + j] * AQ[b * E + j];
            T[a * kk + b] = s;
          }
        }
        for (let a = 0; a < kk; a++) for (let b = 0; b < a; b++) T[a * kk + b] = T[b * kk + a] = 0.5 * (T[a * kk + b] + T[b * kk + a]);
      }
    }
    if (kk > 0) {
      const { values, vectors } = eigSym(T, kk);
      // Marchenko–Pastur band of the sample covariance of nEff points of N(0, I_E).
      const g = Math.sqrt(E / nEff);
      const lo = g < 1 ? (1 - g) ** 2 / BAND_SLACK : 0;
      const hi = (1 + g) ** 2 * BAND_SLACK;
      const picked = Array.from(values, (theta, i) => ({ lambda: 1 + theta, i }))
        .filter((e) => e.lambda > 0 && (e.lambda < lo || e.lambda > hi))
        .sort((p, q) => Math.abs(Math.log(q.lambda)) - Math.abs(Math.log(p.lambda)) || p.i - q.i)
        .slice(0, want);
      for (const { i } of picked) {
        const d = new Float64Array(E);
        for (let a = 0; a < kk; a++) {
          const c = vectors[a * kk + i];
          for (let j = 0; j < E; j++) d[j] += c * Q[a * E + j];
        }
        let nrm = 0;
        for (let j = 0; j < E; j++) nrm += d[j] * d[j];
        const inv = 1 / Math.sqrt(nrm);
        for (let j = 0; j < E; j++) d[j] *= inv;
        dirs.push(d);
      }
    }
  }
  const r = dirs.length;
  if (r === 0) return Proposal.prior(E);
  const V = new Float64Array(r * E);
  dirs.forEach((d, a) => V.set(d, a * E));
  // Coordinates of the points in the subspace; the mixture is fitted there.
  const P = new Float64Array(n * r);
  for (let i = 0; i < n; i++) {
    const o = i * E;
    for (let a = 0; a < r; a++) {
      let s = 0;
      for (let j = 0; j < E; j++) s += V[a * E + j] * X[o + j];
      P[i * r + a] = s;
    }
  }
  const shift = new Float64Array(r); // moves the mixture's mean by the James–Stein shrinkage
  for (let a = 0; a < r; a++) {
    let s = 0;
    for (let j = 0; j < E; j++) s += V[a * E + j] * mu[j];
    shift[a] = (js - 1) * s;
  }
  const comps = fitMixture(P, w, n, r, nEff, maxComponents).map((c) => {
    for (let a = 0; a < r; a++) c.m[a] += shift[a];
    return c;
  });
  return new Proposal(E, r, V, comps);
}

/** Effective points per free parameter a mixture component needs. */
const POINTS_PER_PARAM = 10;
/** EM iterations of the subspace mixture. */
const EM_ITERS = 12;
/** EM stops once the weighted mean log-likelihood gains less than this in an iteration. */
const EM_TOLERANCE = 1e-4;
/** Smallest weight of a mixture component. */
const MIN_COMPONENT_WEIGHT = 0.02;

/**
 * A mixture of at most `maxComponents` Gaussians on R^r fitted to weighted points by EM
 * (Dempster, Laird & Rubin 1977), started from weighted quantile slices along the first axis (the
 * mean direction); as many components as the effective points afford ({@link POINTS_PER_PARAM}
 * per parameter). Each covariance is shrunk toward I_r by r + 2 pseudo-points and its eigenvalues
 * clamped to [1e-4, 4]; component weights are at least {@link MIN_COMPONENT_WEIGHT}.
 */
function fitMixture(P: Float64Array, w: Float64Array, n: number, r: number, nEff: number, maxComponents: number): Component[] {
  const params = r + (r * (r + 1)) / 2 + 1;
  const C = Math.max(1, Math.min(maxComponents, Math.floor(nEff / (POINTS_PER_PARAM * params))));
  const kappa = r + 2;
  const resp = new Float64Array(n * C);
  // Initial responsibilities: C weighted-quantile slices of the first coordinate.
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => P[a * r] - P[b * r] || a - b);
  let acc = 0;
  for (const i of order) {
    const c = Math.min(C - 1, Math.floor((acc + w[i] / 2) * C));
    resp[i * C + c] = 1;
    acc += w[i];
  }
  let comps: Component[] = [];
  const y = new Float64Array(r);
  const lp = new Float64Array(C);
  let llPrev = -Infinity;
  let converged = false;
  for (let it = 0; it <= EM_ITERS; it++) {
    // M step.
    const next: Component[] = [];
    let wsum = 0;
    const raw: { W: number; m: Float64Array; S: Float64Array }[] = [];
    for (let c = 0; c < C; c++) {
      let W = 0;
      const m = new Float64Array(r);
      for (let i = 0; i < n; i++) {
        const q = w[i] * resp[i * C + c];
        if (q === 0) continue;
        W += q;
        for (let a = 0; a < r; a++) m[a] += q * P[i * r + a];
      }
      const S = new Float64Array(r * r);
      if (W > 0) {
        for (let a = 0; a < r; a++) m[a] /= W;
        for (let i = 0; i < n; i++) {
          const q = w[i] * resp[i * C + c];
          if (q === 0) continue;
          for (let a = 0; a < r; a++) {
            const da = P[i * r + a] - m[a];
            for (let b = 0; b <= a; b++) S[a * r + b] += q * da * (P[i * r + b] - m[b]);
          }
        }
        for (let a = 0; a < r; a++) for (let b = 0; b <= a; b++) S[a * r + b] /= W;
      }
      raw.push({ W, m, S });
      wsum += Math.max(W, MIN_COMPONENT_WEIGHT);
    }
    for (let c = 0; c < C; c++) {
      const { W, m, S } = raw[c];
      const ne = W * nEff;
      for (let a = 0; a < r; a++) {
        for (let b = 0; b <= a; b++) {
          const v = (ne * S[a * r + b] + (a === b ? kappa : 0)) / (ne + kappa);
          S[a * r + b] = v;
          S[b * r + a] = v;
        }
      }
      next.push(component(Math.max(W, MIN_COMPONENT_WEIGHT) / wsum, m, cholClamped(S, r, 1e-4, 4), r));
    }
    comps = next;
    if (C === 1 || it === EM_ITERS || converged) break;
    // E step.
    let ll = 0;
    for (let i = 0; i < n; i++) {
      let mx = -Infinity;
      for (let c = 0; c < C; c++) {
        const { m, L, logDet, logWeight } = comps[c];
        let yy = 0;
        for (let a = 0; a < r; a++) {
          let v = P[i * r + a] - m[a];
          for (let b = 0; b < a; b++) v -= L[a * r + b] * y[b];
          v /= L[a * r + a];
          y[a] = v;
          yy += v * v;
        }
        lp[c] = logWeight - 0.5 * yy - 0.5 * logDet;
        if (lp[c] > mx) mx = lp[c];
      }
      let s = 0;
      for (let c = 0; c < C; c++) s += (lp[c] = Math.exp(lp[c] - mx));
      for (let c = 0; c < C; c++) resp[i * C + c] = lp[c] / s;
      ll += w[i] * (mx + Math.log(s));
    }
    // The weighted mean log-likelihood (weights sum to 1): one more M step once it stalls.
    converged = ll - llPrev < EM_TOLERANCE;
    llPrev = ll;
  }
  return comps;
}

// ---------------------------------------------------------------------------------------------
// Conditions

/** A fixed feature of a condition: its allowed codes, ascending, and their weights (null: all 1). */
interface Fixed {
  f: number;
  codes: Int32Array;
  weights: Float64Array | null;
}

/** A group: rows sharing one condition, and its candidate population. */
interface Block {
  n: number;
  /** Standardised latents, n x E. */
  x: Float32Array;
  /** Codes of the candidates' rows, n x F row-major. */
  codes: Int32Array;
  /** log prod_f p_f(A_f | z) (-Infinity: a zero). */
  loglik: Float64Array;
  /** sum_t N_t q_t(u) / N(u; 0, I) (deterministic-mixture denominator, up to N), linear. */
  mix: Float64Array;
  /** log of `mix`, refreshed whenever `mix` changes. */
  logMix: Float64Array;
}

interface Group {
  index: number;
  fixed: Fixed[];
  rows: number[];
  rng: Rng;
  target: number;
  pilot: number;
  budget: number;
  blocks: Block[];
  proposals: Proposal[];
  sizes: number[];
  total: number;
  ess: number;
  logProb: number;
  effPrev: number;
  converged: boolean;
  /** Per fixed feature: candidates where its set underflowed. */
  zeroCounts: Int32Array;
  /** Next round: proposal and size; null when done. */
  next: { q: Proposal; n: number } | null;
  redraws: number;
  /** Calibration of the group's rows (null: none). */
  calibration: ConditionCalibration | null;
}

function keyOf(fixed: readonly Fixed[]): string {
  return fixed.map((c) => `${c.f}:${c.codes.join(",")}${c.weights ? `@${c.weights.join(",")}` : ""}`).join(";");
}

/**
 * Validates and canonicalises one row's condition.
 * @throws ConditionError for a row of the wrong length, a code that is not an integer in [0, K_f),
 *   an empty set, or a weighted cell with lists of different lengths, a repeated code or a weight
 *   outside (0, 1].
 */
function parseCondition(cond: RowCondition, row: number, ctx: Ctx): Fixed[] {
  const { F, cards, names } = ctx;
  const fail = (what: string, features: string[]): ConditionError =>
    new ConditionError(`${ctx.conditionLabel(row)} ${what}`, ctx.paramFor(row, features), row, features);
  if (!Array.isArray(cond) || cond.length !== F) throw fail(`must have one entry per feature (${F})`, []);
  const out: Fixed[] = [];
  for (let f = 0; f < F; f++) {
    const c = cond[f];
    if (c === null || c === undefined) continue;
    const weighted = typeof c === "object" && !Array.isArray(c) ? (c as WeightedCell) : undefined;
    const list = typeof c === "number" ? [c] : weighted ? weighted.codes : c;
    if (!Array.isArray(list) || list.length === 0) throw fail(`on ${names[f]} must be a code or a non-empty list of codes`, [names[f]]);
    if (weighted && !(Array.isArray(weighted.weights) && weighted.weights.length === list.length)) {
      throw fail(`on ${names[f]} must give one weight per code`, [names[f]]);
    }
    // Per code: 0 not allowed, else its weight (1 for unweighted lists; repeats merge there).
    const weightOf = new Float64Array(cards[f]);
    let count = 0;
    let all1 = true;
    for (let i = 0; i < list.length; i++) {
      const k = list[i];
      if (!(Number.isInteger(k) && k >= 0 && k < cards[f])) throw fail(`on ${names[f]} has code ${String(k)} outside [0, ${cards[f]})`, [names[f]]);
      let a = 1;
      if (weighted) {
        a = weighted.weights[i];
        if (!(typeof a === "number" && a > 0 && a <= 1)) throw fail(`on ${names[f]} has weight ${String(a)} for code ${k}, outside (0, 1]`, [names[f]]);
        if (weightOf[k] > 0) throw fail(`on ${names[f]} lists code ${k} twice`, [names[f]]);
        if (a !== 1) all1 = false;
      }
      if (!(weightOf[k] > 0)) count++;
      weightOf[k] = a;
    }
    if (count === cards[f] && all1) continue; // every code allowed in full: free
    const codes = new Int32Array(count);
    const weights = all1 ? null : new Float64Array(count);
    for (let k = 0, i = 0; k < cards[f]; k++) {
      if (!(weightOf[k] > 0)) continue;
      if (weights) weights[i] = weightOf[k];
      codes[i++] = k;
    }
    out.push({ f, codes, weights });
  }
  return out;
}

function checkOptions(opts: ConditionalOptions): void {
  const T = opts.temperature ?? 1;
  if (!(typeof T === "number" && Number.isFinite(T) && T > 0 && Number.isFinite(1 / T))) throw new RangeError(`temperature must be finite and > 0, got ${T}`);
  const topP = opts.topP ?? null;
  if (topP !== null && !(topP >= 0 && topP <= 1)) throw new RangeError(`topP must be in [0, 1] or null, got ${topP}`);
  const sigma = opts.privacyNoise ?? 0;
  if (!(sigma >= 0 && Number.isFinite(sigma))) throw new RangeError(`privacyNoise must be finite and >= 0, got ${sigma}`);
  const positive = (v: number | undefined, name: string): void => {
    if (v !== undefined && !(v > 0 && Number.isFinite(v))) throw new RangeError(`${name} must be finite and > 0, got ${v}`);
  };
  positive(opts.minEss, "minEss");
  positive(opts.essPerRow, "essPerRow");
  positive(opts.budgetFactor, "budgetFactor");
  positive(opts.zeroSearch, "zeroSearch");
  positive(opts.maxCandidateBytes, "maxCandidateBytes");
  if (opts.maxRank !== undefined && !(Number.isInteger(opts.maxRank) && opts.maxRank >= 0)) throw new RangeError(`maxRank must be an integer >= 0, got ${opts.maxRank}`);
  if (opts.maxComponents !== undefined && !(Number.isInteger(opts.maxComponents) && opts.maxComponents >= 1)) {
    throw new RangeError(`maxComponents must be an integer >= 1, got ${opts.maxComponents}`);
  }
  if (opts.seed !== undefined && !Number.isSafeInteger(opts.seed)) throw new RangeError("seed must be a safe integer");
}

// ---------------------------------------------------------------------------------------------
// Evaluation of candidates

/** The latents the model sees: standardised `x` times `ctx.scale` (into `ctx.scaled`), or `x` itself when the scale is 1. */
function scaledLatents(ctx: Ctx, x: Float32Array): Float32Array {
  if (!ctx.scaled) return x;
  const z = ctx.scaled.subarray(0, x.length);
  for (let i = 0; i < z.length; i++) z[i] = x[i] * ctx.scale;
  return z;
}

/**
 * Logits (m x D) of standardised latents `x` (m x E, m <= chunk) and the kernel's codes (F x m,
 * column-major) drawn from them with the uniforms `u` (m x F). On a native model one fused call
 * (`NativeGenerator.generateWithLogits`, the logits into `ctx.logits`, which the next call
 * overwrites); else `forwardLogits` + `sampleCodes`. The same codes either way for the same logits.
 */
function forwardAndKernel(ctx: Ctx, x: Float32Array, m: number, u: Float64Array): { logits: Float32Array; kernel: Int32Array } {
  const { T, topP } = ctx;
  const native = ctx.model.native;
  const z = scaledLatents(ctx, x);
  if (!native) {
    const logits = forwardLogits(ctx.model, z, m);
    return { logits, kernel: sampleCodes(logits, m, ctx.cards, u, { temperature: T, topP }) };
  }
  ctx.logits ??= new Float32Array(ctx.chunk * ctx.D);
  const logits = ctx.logits.subarray(0, m * ctx.D);
  return { logits, kernel: native.generateWithLogits(z, m, u, T, topP, logits) };
}

/** A batch of candidates to evaluate: which group, where its rows go. */
interface Segment {
  group: Group;
  /** First candidate of the segment in the batch. */
  start: number;
  n: number;
  /** Writes the candidate's codes (row-major, F) and log-likelihood. */
  codes: Int32Array;
  loglik: Float64Array | null;
}

/** What every group of one call shares: the model, the options (defaults applied) and scratch. */
interface Ctx {
  model: GeneratorModel;
  E: number;
  F: number;
  D: number;
  cards: readonly number[];
  offsets: readonly number[];
  names: readonly string[];
  T: number;
  topP: number | null;
  /** sqrt(1 + privacyNoise^2): latents are standardised, the model sees them times this. */
  scale: number;
  /** Candidates per forward pass. */
  chunk: number;
  opts: ConditionalOptions;
  maxRank: number;
  maxComponents: number;
  zeroSearch: number;
  paramFor: (row: number, features: readonly string[]) => string;
  conditionLabel: (row: number) => string;
  /** Scratch of the largest cardinality. */
  e: Float64Array;
  /** Scratch of chunk x D logits for the native fused call (allocated at its first use). */
  logits?: Float32Array;
  /** Scratch of chunk x E scaled latents (null when scale is 1). */
  scaled: Float32Array | null;
  /** Calibration targets per group (see {@link ConditionalOptions.calibration}), or null. */
  calibration: ConditionalOptions["calibration"] | null;
}

/**
 * Forward pass + kernel for a batch of latents (`x`, standardised, with the uniforms `u`, F per
 * candidate), chunked: fills each segment's codes (fixed features restricted to their sets) and,
 * when asked, its log-likelihoods.
 */
async function evaluate(ctx: Ctx, x: Float32Array, u: Float64Array, total: number, segments: readonly Segment[]): Promise<void> {
  const { E, F, D, cards, offsets, T, chunk, e } = ctx;
  const invT = 1 / T;
  let s = 0;
  for (let r0 = 0; r0 < total; r0 += chunk) {
    if (r0 > 0) await betweenChunks(ctx.opts);
    const m = Math.min(chunk, total - r0);
    const uc = u.subarray(r0 * F, (r0 + m) * F);
    const { logits, kernel } = forwardAndKernel(ctx, x.subarray(r0 * E, (r0 + m) * E), m, uc);
    while (s < segments.length && segments[s].start + segments[s].n <= r0) s++;
    for (let si = s; si < segments.length && segments[si].start < r0 + m; si++) {
      const seg = segments[si];
      const { fixed, zeroCounts } = seg.group;
      const a0 = Math.max(seg.start, r0);
      const a1 = Math.min(seg.start + seg.n, r0 + m);
      for (let c = a0; c < a1; c++) {
        const j = c - r0;
        const i = c - seg.start;
        const row = seg.codes;
        const ro = i * F;
        for (let f = 0; f < F; f++) row[ro + f] = kernel[f * m + j];
        let ll = 0;
        for (let q = 0; q < fixed.length; q++) {
          const { f, codes, weights } = fixed[q];
          const sum = kernelWeights(logits, j * D + offsets[f], cards[f], invT, e);
          if (weights) for (let t = 0; t < codes.length; t++) e[codes[t]] *= weights[t];
          let a = 0;
          for (let t = 0; t < codes.length; t++) a += e[codes[t]];
          if (!(a > 0)) {
            ll = -Infinity;
            zeroCounts[q]++;
            row[ro + f] = codes[0];
            continue;
          }
          if (ll !== -Infinity) ll += Math.log(a) - Math.log(sum);
          if (codes.length === 1) {
            row[ro + f] = codes[0];
          } else {
            // The kernel's inverse-CDF walk, over the allowed codes only (ascending; e weighted).
            const target = uc[j * F + f] * a;
            let acc = 0;
            let pick = -1;
            let last = codes[0];
            for (let t = 0; t < codes.length; t++) {
              const k = codes[t];
              if (e[k] === 0) continue;
              last = k;
              acc += e[k];
              if (acc > target) {
                pick = k;
                break;
              }
            }
            row[ro + f] = pick < 0 ? last : pick;
          }
        }
        const ex = seg.group.calibration?.exclusions;
        if (ex && seg.loglik && ll !== -Infinity) for (const e of ex) if (e.excluded[row[ro + e.f]]) ll += EXCLUDED_LOG_FACTOR;
        if (seg.loglik) seg.loglik[i] = ll;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Weights

/**
 * The candidates' weights relative to the largest, v = exp(loglik - logMix - mx) (block order,
 * into `w` when given), their sum s and sum of squares s2; s = 0 when every weight is 0.
 */
function weightSums(blocks: readonly Block[], w?: Float64Array): { mx: number; s: number; s2: number } {
  let mx = -Infinity;
  for (const b of blocks) for (let i = 0; i < b.n; i++) mx = Math.max(mx, b.loglik[i] - b.logMix[i]);
  let s = 0;
  let s2 = 0;
  if (mx === -Infinity) return { mx, s, s2 };
  let at = 0;
  for (const b of blocks) {
    for (let i = 0; i < b.n; i++) {
      const v = Math.exp(b.loglik[i] - b.logMix[i] - mx);
      if (w) w[at++] = v;
      s += v;
      s2 += v * v;
    }
  }
  return { mx, s, s2 };
}

/** Normalised weights of all candidates of a group (block order), their Kish ESS and log mean weight. */
function groupWeights(g: Group): { w: Float64Array; ess: number; logProb: number } {
  const w = new Float64Array(g.blocks.reduce((n, b) => n + b.n, 0));
  const { mx, s, s2 } = weightSums(g.blocks, w);
  if (!(s > 0)) return { w, ess: 0, logProb: -Infinity };
  for (let i = 0; i < w.length; i++) w[i] /= s;
  // logMix holds log(N q_mix / N(u)), so exp(loglik - logMix) averages to the condition's probability.
  return { w, ess: (s * s) / s2, logProb: mx + Math.log(s) };
}

/** Kish ESS of one block's current weights, divided by its size (the round's efficiency). */
function blockEfficiency(b: Block): number {
  const { s, s2 } = weightSums([b]);
  return s > 0 ? (s * s) / s2 / b.n : 0;
}

/** Adds the just-evaluated block (drawn from `q`) to the group's deterministic mixture. */
function addBlock(g: Group, block: Block, q: Proposal): void {
  for (const b of g.blocks) q.accumulate(b.x, b.n, block.n, b.mix);
  g.blocks.push(block);
  g.proposals.push(q);
  g.sizes.push(block.n);
  g.total += block.n;
  block.mix.fill(0);
  for (let t = 0; t < g.proposals.length; t++) g.proposals[t].accumulate(block.x, block.n, g.sizes[t], block.mix);
  for (const b of g.blocks) for (let i = 0; i < b.n; i++) b.logMix[i] = Math.log(b.mix[i]);
}

/**
 * Bounded raking of a group's candidates (their rows, from their importance weights `w`) to the
 * group's targets: the calibrated draw's raking (generate.ts `rake`: native core or reference) with the bound at
 * an inclusion probability of 1 (weight share 1 / rows), the thread given back between sweeps.
 */
async function rakeGroup(ctx: Ctx, g: Group, w: Float64Array): Promise<Float64Array> {
  const { F } = ctx;
  const M = w.length;
  const columns = ctx.cards.map(() => new Int32Array(M));
  let idx = 0;
  for (const b of g.blocks) {
    for (let i = 0; i < b.n; i++, idx++) for (let f = 0; f < F; f++) columns[f][idx] = b.codes[i * F + f];
  }
  const { yieldFn, shouldAbort } = ctx.opts;
  return rake(ctx.model, columns, g.calibration!.targets, { yieldFn, shouldAbort, initial: w, bound: Math.max(M / g.rows.length, 1 + 1e-9) });
}

/** Counts per index of a list of picked indices (`systematicSample`'s output) over `M` candidates. */
function countsOf(picked: Int32Array, M: number): Int32Array {
  const counts = new Int32Array(M);
  for (const i of picked) counts[i]++;
  return counts;
}

/**
 * Systematic resampling (Kitagawa 1996): `n` picks from normalised weights `w` (summing to 1) with
 * start `u` in [0, 1); an index is picked about n * w times (floor or ceil), one of weight 0 never.
 * Unlike `calibrate.ts` `systematicSample`, which draws distinct rows, heavy indices repeat.
 * @returns how many times each index is picked (length w.length, sum n).
 * @throws RangeError when no weight is positive.
 */
export function systematicCounts(w: ArrayLike<number>, n: number, u: number): Int32Array {
  const counts = new Int32Array(w.length);
  let acc = 0;
  let i = 0;
  let last = -1;
  for (let k = 0; k < w.length; k++) if (w[k] > 0) last = k;
  if (last < 0) throw new RangeError("systematic resampling needs a positive weight");
  for (let k = 0; k < n; k++) {
    const t = (u + k) / n;
    while (i < last && (acc + w[i] <= t || w[i] === 0)) acc += w[i++];
    counts[i]++;
  }
  return counts;
}

/** The fit's sample: all positive-weight candidates, or a systematic resample of FIT_POINTS. */
function fitSample(g: Group, w: Float64Array, ess: number, E: number): { X: Float32Array; v: Float64Array; n: number; nEff: number } {
  let positive = 0;
  for (let i = 0; i < w.length; i++) if (w[i] > 0) positive++;
  const at = (i: number): [Block, number] => {
    let b = 0;
    while (i >= g.blocks[b].n) i -= g.blocks[b++].n;
    return [g.blocks[b], i];
  };
  if (positive <= FIT_POINTS) {
    const X = new Float32Array(positive * E);
    const v = new Float64Array(positive);
    let k = 0;
    let idx = 0;
    for (const b of g.blocks) {
      for (let i = 0; i < b.n; i++, idx++) {
        if (!(w[idx] > 0)) continue;
        X.set(b.x.subarray(i * E, (i + 1) * E), k * E);
        v[k++] = w[idx];
      }
    }
    return { X, v, n: positive, nEff: ess };
  }
  const counts = systematicCounts(w, FIT_POINTS, g.rng.uniform());
  let distinct = 0;
  for (let i = 0; i < counts.length; i++) if (counts[i] > 0) distinct++;
  const X = new Float32Array(distinct * E);
  const v = new Float64Array(distinct);
  let k = 0;
  let s2 = 0;
  for (let i = 0; i < counts.length; i++) {
    if (counts[i] === 0) continue;
    const [b, j] = at(i);
    X.set(b.x.subarray(j * E, (j + 1) * E), k * E);
    v[k++] = counts[i] / FIT_POINTS;
    s2 += (counts[i] / FIT_POINTS) ** 2;
  }
  return { X, v, n: distinct, nEff: Math.min(ess, 1 / s2) };
}

/**
 * Decides a group's next round after its latest one (or marks it done).
 * @throws ConditionError when no weight is positive after `ctx.zeroSearch` candidates.
 */
function plan(g: Group, ctx: Ctx): void {
  const { w, ess, logProb } = groupWeights(g);
  g.ess = ess;
  g.logProb = logProb;
  const last = g.sizes.length - 1;
  // Once a weight is positive the group keeps its blocks, so ESS stays > 0 from then on.
  if (!(ess > 0)) {
    if (g.total >= ctx.zeroSearch) {
      const zeroAlways = g.fixed.filter((_, q) => g.zeroCounts[q] === g.total).map((c) => ctx.names[c.f]);
      const features = zeroAlways.length > 0 ? zeroAlways : g.fixed.map((c) => ctx.names[c.f]);
      const row = g.rows[0];
      throw new ConditionError(
        `${ctx.conditionLabel(row)} on ${features.join(", ")} has probability 0 under the model: ` +
          `its allowed codes underflowed at all ${g.total} latents tried`,
        ctx.paramFor(row, features),
        row,
        features,
      );
    }
    // Every weight so far is 0: nothing to keep but the counts of the (prior) rounds, which stay
    // in the mixture's denominator (so from here on `blocks` is shorter than `sizes`).
    g.blocks = [];
    g.next = { q: Proposal.prior(ctx.E), n: Math.min(GROWTH * g.sizes[last], ctx.zeroSearch - g.total) };
    return;
  }
  if (ess >= g.target || g.total >= g.budget) {
    g.next = null;
    return;
  }
  const eff = Math.max(blockEfficiency(g.blocks[g.blocks.length - 1]), 1e-4);
  if (last > 0 && eff < CONVERGED_RATIO * g.effPrev) g.converged = true;
  g.effPrev = eff;
  const { X, v, n, nEff } = fitSample(g, w, ess, ctx.E);
  const q = fitProposal(X, v, n, nEff, ctx.E, ctx.maxRank, ctx.maxComponents, g.rng);
  let size = Math.ceil(((g.target - ess) * SIZE_MARGIN) / eff);
  // Still adapting: the next proposal will likely do better than `eff`, so ask for part of the
  // missing ESS only (and at most GROWTH times the last round), and size the rest once measured.
  if (!g.converged) size = Math.min(Math.ceil(size * ADAPTING_SHARE), GROWTH * g.sizes[last]);
  size = Math.max(size, Math.min(g.pilot, 256));
  size = Math.min(size, g.budget - g.total);
  g.next = size > 0 ? { q, n: size } : null;
}

// ---------------------------------------------------------------------------------------------
// Driver

/**
 * Draws one row per condition from the model's conditional (method in the module comment).
 * @param model a generator on either compute path (`GeneratorModel`: native core or tfjs tensors).
 * @param conditions one {@link RowCondition} per output row (n rows, 1..MAX_ROWS_PER_REQUEST); rows
 *   with equal conditions share one candidate population (the same array object repeated is the
 *   fastest way to say so).
 * @param opts sampling options (temperature, topP, yieldFn, shouldAbort as `sampleRows`), seed,
 *   privacy noise, and the method's parameters (defaults in {@link ConditionalOptions}).
 * @returns one Int32Array of n codes per feature (layout order; fixed cells always within their
 *   sets), the seed, one report per condition group (ESS, candidates, ...) and the group of each row.
 * @throws ConditionError (an InputError; `param` from `paramFor`, default `body.embedding`) for a
 *   malformed condition (wrong length, a code outside [0, K_f), an empty set), for 0 or more than
 *   MAX_ROWS_PER_REQUEST rows, and for a condition of probability 0 under the model (numerical
 *   zero, see the module comment): `row` is its first row, `features` the features at fault.
 * @throws RangeError for bad options (temperature not finite and > 0, topP outside [0, 1], ...);
 *   Error when `shouldAbort` fires; what the forward pass or the kernel throws (e.g. logits that
 *   overflow).
 */
export async function sampleConditional(model: GeneratorModel, conditions: readonly RowCondition[], opts: ConditionalOptions = {}): Promise<ConditionalResult> {
  checkOptions(opts);
  const { spec, layout } = model;
  const E = spec.embeddingDim;
  const F = layout.features.length;
  const cards = Array.from(layout.cardinalities);
  const names = layout.features;
  const bytesPer = 4 * E + 4 * F + 16;
  const cap = Math.max(MIN_PILOT, Math.floor((opts.maxCandidateBytes ?? MAX_CANDIDATE_BYTES) / bytesPer));
  const scale = Math.sqrt(1 + (opts.privacyNoise ?? 0) ** 2);
  const chunk = model.native ? NATIVE_GENERATE_CHUNK : GENERATE_CHUNK;
  const ctx: Ctx = {
    model,
    E,
    F,
    D: layout.width,
    cards,
    offsets: Array.from(layout.offsets),
    names,
    T: opts.temperature ?? 1,
    topP: opts.topP ?? null,
    scale,
    chunk,
    opts,
    maxRank: Math.min(opts.maxRank ?? MAX_RANK, E),
    maxComponents: opts.maxComponents ?? MAX_COMPONENTS,
    zeroSearch: Math.min(Math.ceil(opts.zeroSearch ?? ZERO_SEARCH), cap),
    paramFor: opts.paramFor ?? (() => "body.embedding"),
    conditionLabel: opts.conditionLabel ?? ((row) => `the condition of row ${row}`),
    e: new Float64Array(Math.max(...cards)),
    scaled: scale !== 1 ? new Float32Array(chunk * E) : null,
    calibration: opts.calibration ?? null,
  };
  const n = conditions.length;
  if (!(n >= 1 && n <= MAX_ROWS_PER_REQUEST)) {
    throw new ConditionError(`between 1 and ${MAX_ROWS_PER_REQUEST} rows per request, got ${n}`, ctx.paramFor(0, []), 0, []);
  }
  const seed = opts.seed ?? Rng.randomSeed();
  const master = Rng.fromSeed(seed);
  const minEss = opts.minEss ?? DEFAULT_MIN_ESS;

  const budgetFactor = opts.budgetFactor ?? DEFAULT_BUDGET_FACTOR;

  // Groups, in the order of first rows.
  const groups: Group[] = [];
  const byKey = new Map<string, Group>();
  const groupOfRow = new Int32Array(n);
  let prevCond: RowCondition | undefined;
  let prevGroup: Group | undefined;
  for (let r = 0; r < n; r++) {
    const cond = conditions[r];
    let g: Group | undefined;
    if (prevGroup !== undefined && cond === prevCond) g = prevGroup;
    else {
      const fixed = parseCondition(cond, r, ctx);
      const key = keyOf(fixed);
      g = byKey.get(key);
      if (g === undefined) {
        g = {
          index: groups.length,
          fixed,
          rows: [],
          rng: Rng.fromSeed((BigInt(master.nextUint32()) << 32n) | BigInt(master.nextUint32())),
          target: 0,
          pilot: 0,
          budget: 0,
          blocks: [],
          proposals: [],
          sizes: [],
          total: 0,
          ess: 0,
          logProb: -Infinity,
          effPrev: 0,
          converged: false,
          zeroCounts: new Int32Array(fixed.length),
          next: null,
          redraws: 0,
          calibration: ctx.calibration?.(fixed) ?? null,
        };
        byKey.set(key, g);
        groups.push(g);
      }
    }
    g.rows.push(r);
    groupOfRow[r] = g.index;
    prevCond = cond;
    prevGroup = g;
  }
  for (const g of groups) {
    const m = g.rows.length;
    const random = g.fixed.length < F || g.fixed.some((c) => c.codes.length > 1);
    // A calibrated group's rows come from its candidates without repeats (their weights hold the
    // exclusions and the raking, which fresh rows from a latent would not).
    const raking = g.calibration !== null;
    const essPerRow = opts.essPerRow ?? (raking ? CALIBRATED_ESS_PER_ROW : 1);
    g.target = random ? Math.max(minEss, Math.ceil(essPerRow * m)) : 1;
    if (g.fixed.length === 0) {
      // Nothing to condition on: every weight is 1 and the pilot is the sample (the plain draw),
      // or, calibrated, the pool raked to every marginal (the calibrated draw's pool of 2 x rows).
      g.target = Math.min(cap, Math.ceil((raking ? essPerRow : 1) * m));
      g.pilot = g.target;
      g.budget = g.target;
    } else {
      g.pilot = Math.min(cap, pilotSize(g.target));
      g.budget = Math.min(cap, g.pilot + Math.ceil(budgetFactor * g.target));
    }
  }

  const columns = cards.map(() => new Int32Array(n));

  // Waves of groups whose worst-case candidates fit in `cap`.
  for (let g0 = 0; g0 < groups.length; ) {
    let g1 = g0;
    let reserved = 0;
    while (g1 < groups.length && (g1 === g0 || reserved + groups[g1].budget <= cap)) {
      reserved += groups[g1].budget;
      g1++;
    }
    const wave = groups.slice(g0, g1);
    for (const g of wave) g.next = { q: Proposal.prior(E), n: g.pilot };
    for (;;) {
      const active = wave.filter((g) => g.next !== null);
      if (active.length === 0) break;
      // Latents and uniforms of every active group's next round, group by group from its stream.
      let total = 0;
      for (const g of active) total += (g.next as { n: number }).n;
      const x = new Float32Array(total * E);
      const u = new Float64Array(total * F);
      const segments: Segment[] = [];
      const drawn: { g: Group; q: Proposal; block: Block }[] = [];
      let at = 0;
      for (const g of active) {
        const { q, n: m } = g.next as { q: Proposal; n: number };
        // The block's latents are a view of the batch (no copy); they live as long as the block.
        // Prior normals and the rows' uniforms from the round's own seed, in the native core when
        // loaded (draws.ts: the same values either way); then the proposal's subspace part.
        const roundSeed = (g.rng.nextUint32() >>> 11) * 2 ** 32 + g.rng.nextUint32();
        const xs = x.subarray(at * E, (at + m) * E);
        drawRequest({ seed: roundSeed, rows: m, latents: xs, drawLatents: true, sigma: 0, uniforms: u.subarray(at * F, (at + m) * F) });
        q.draw(g.rng, m, xs);
        const block: Block = { n: m, x: xs, codes: new Int32Array(m * F), loglik: new Float64Array(m), mix: new Float64Array(m), logMix: new Float64Array(m) };
        segments.push({ group: g, start: at, n: m, codes: block.codes, loglik: block.loglik });
        drawn.push({ g, q, block });
        at += m;
      }
      await evaluate(ctx, x, u, total, segments);
      for (const { g, q, block } of drawn) {
        addBlock(g, block, q);
        plan(g, ctx);
      }
    }
    // Rows: systematic resampling per group; extra copies get fresh rows from their latents.
    // Calibrated: the weights (with exclusions) are raked to the group's targets from the
    // candidates' own rows, so each candidate's weight belongs to its row and rows are drawn
    // without repeats by inclusion probabilities instead (counts 0 or 1 while enough weights are
    // positive).
    const picks: { g: Group; counts: Int32Array; w: Float64Array; raked: boolean }[] = [];
    let extra = 0;
    for (const g of wave) {
      const { w, ess, logProb } = groupWeights(g);
      g.ess = ess;
      g.logProb = logProb;
      const m = g.rows.length;
      let counts: Int32Array;
      const raked = g.calibration !== null && ess > 0;
      if (raked) {
        const wr = g.calibration!.targets.length > 0 ? await rakeGroup(ctx, g, w) : w;
        counts = countsOf(systematicSample(wr, m, g.rng.uniform()), w.length);
      } else {
        counts = systematicCounts(w, m, g.rng.uniform());
        for (let i = 0; i < counts.length; i++) if (counts[i] > 1) extra += counts[i] - 1;
      }
      picks.push({ g, counts, w, raked });
    }
    const xr = new Float32Array(extra * E);
    const ur = new Float64Array(extra * F);
    const redrawSegs: Segment[] = [];
    let at = 0;
    for (const { g, counts, raked } of picks) {
      const start = at;
      let idx = 0;
      for (const b of g.blocks) {
        for (let i = 0; i < b.n; i++, idx++) {
          if (raked) continue;
          for (let c = 1; c < counts[idx]; c++) xr.set(b.x.subarray(i * E, (i + 1) * E), (at++) * E);
        }
      }
      const m = at - start;
      g.redraws = m;
      g.rng.fillUniform(ur.subarray(start * F, at * F));
      if (m > 0) redrawSegs.push({ group: g, start, n: m, codes: new Int32Array(m * F), loglik: null });
    }
    if (extra > 0) await evaluate(ctx, xr, ur, extra, redrawSegs);
    let s = 0;
    for (const { g, counts, raked } of picks) {
      const m = g.rows.length;
      const rows = new Int32Array(m * F);
      let k = 0;
      let idx = 0;
      for (const b of g.blocks) {
        for (let i = 0; i < b.n; i++, idx++) {
          const o = i * F;
          // Calibrated: a candidate picked c times (fewer positive weights than rows) gives c copies.
          for (let c = 0; c < (raked ? counts[idx] : Math.min(counts[idx], 1)); c++) {
            const d = (k++) * F;
            for (let f = 0; f < F; f++) rows[d + f] = b.codes[o + f];
          }
        }
      }
      if (g.redraws > 0) rows.set(redrawSegs[s++].codes, k * F);
      // Fisher–Yates over the group's rows, then out to its row indices in order.
      const order = new Int32Array(m);
      for (let i = 0; i < m; i++) order[i] = i;
      g.rng.shuffle(order);
      for (let i = 0; i < m; i++) {
        const src = order[i] * F;
        const r = g.rows[i];
        for (let f = 0; f < F; f++) columns[f][r] = rows[src + f];
      }
      // Free the population.
      g.blocks = [];
    }
    g0 = g1;
  }

  const reports: ConditionGroupReport[] = groups.map((g) => ({
    firstRow: g.rows[0],
    numRows: g.rows.length,
    features: g.fixed.map((c) => names[c.f]),
    essTarget: g.target,
    ess: g.ess,
    targetMet: g.ess >= g.target,
    candidates: g.total,
    rounds: g.sizes.length,
    rank: g.proposals.length > 0 ? g.proposals[g.proposals.length - 1].r : 0,
    logProb: g.logProb,
    redraws: g.redraws,
  }));
  return { columns, seed, groups: reports, groupOfRow };
}

/**
 * `numRows` rows that all satisfy one condition (the `where` of a seeded request): one group, one
 * shared candidate population. See {@link sampleConditional}.
 * @throws ConditionError as {@link sampleConditional} (`num_rows` outside 1..MAX_ROWS_PER_REQUEST too).
 */
export function sampleSeeded(model: GeneratorModel, condition: RowCondition, numRows: number, opts: ConditionalOptions = {}): Promise<ConditionalResult> {
  if (!(Number.isInteger(numRows) && numRows >= 1 && numRows <= MAX_ROWS_PER_REQUEST)) {
    const p = opts.paramFor?.(0, []) ?? "body.embedding.num_rows";
    return Promise.reject(new ConditionError(`num_rows must be an integer from 1 to ${MAX_ROWS_PER_REQUEST}`, p, 0, []));
  }
  return sampleConditional(model, new Array<RowCondition>(numRows).fill(condition), opts);
}
