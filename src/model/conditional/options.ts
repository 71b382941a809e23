/**
 * What a call of the conditional sampler is given and what it returns: {@link ConditionalOptions}
 * (the plain draw's sampling options plus the method's parameters) with their defaults and their
 * validation ({@link checkOptions}), the result and its per-group report, and {@link ConditionalCall}: the
 * options with defaults applied, the model's shape and the scratch every step of one call shares.
 *
 * Budget per group: pilot + budgetFactor * target candidates (default 8 * target), and never more
 * than `maxCandidateBytes` (default 256 MiB) of stored candidates (latents, codes, weights:
 * 4E + 4F + 16 bytes each, ~340 bytes for Adult with E = 64).
 */
import type { ConditionCalibration, FixedCell } from "../sampling/condition-calibration";
import type { SamplingOptions } from "../sampling/sample-rows";
import type { GeneratorModel } from "../generator/model";

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
   * Calibration (`calibrate: true`; `condition-calibration.ts` `conditionCalibration`): given a group's fixed
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

/** Validates the options of a call (temperature, topP, privacy noise, the method's parameters, seed). */
export function checkOptions(opts: ConditionalOptions): void {
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

/** What every group of one call shares: the model, the options (defaults applied) and scratch. */
export interface ConditionalCall {
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
