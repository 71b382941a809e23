/** A conditional sampler call's options, result and report, and the state one call shares. */
import type { ConditionCalibration, FixedCell } from "../sampling/condition-calibration";
import type { SamplingOptions } from "../sampling/sample-rows";
import type { GeneratorModel } from "../generator/model";

/** Options of {@link sampleConditional}: the plain draw's sampling options plus the method's. */
export interface ConditionalOptions extends SamplingOptions {
  /** Seed of the stream (default: a fresh random seed, returned in the result). */
  seed?: number;
  /** sigma of the model's privacy noise (0: privacy off): the prior is N(0, (1 + sigma^2) I). */
  privacyNoise?: number;
  /** Smallest ESS target of a group (default {@link DEFAULT_MIN_ESS}). */
  minEss?: number;
  /** ESS target per row: max(minEss, ceil(essPerRow * rows)). Default 1, calibrated 2. */
  essPerRow?: number;
  /**
   * Calibration (`condition-calibration.ts`): given a group's fixed features (ascending), what the
   * given marginals say about its rows, or null. Default: none (the model's own conditional).
   */
  calibration?: (fixed: readonly FixedCell[]) => ConditionCalibration | null;
  /** A group may spend pilot + budgetFactor * target candidates (default 8). */
  budgetFactor?: number;
  /** Prior candidates tried before a condition is declared impossible ({@link ZERO_SEARCH}). */
  zeroSearch?: number;
  /** Largest dimension r of the proposal's subspace (default {@link MAX_RANK}). */
  maxRank?: number;
  /** Largest number of Gaussians of the proposal's mixture ({@link MAX_COMPONENTS}). */
  maxComponents?: number;
  /** Bytes of candidates held at once, 4E + 4F + 16 each (default {@link MAX_CANDIDATE_BYTES}). */
  maxCandidateBytes?: number;
  /** The parameter path of a {@link ConditionError} on row `row` (default `body.embedding`). */
  paramFor?: (row: number, features: readonly string[]) => string;
  /** How a {@link ConditionError}'s message names row `row`'s condition. */
  conditionLabel?: (row: number) => string;
}

/** What one condition group did (the rows sharing one condition). */
export interface ConditionGroupReport {
  firstRow: number;
  numRows: number;
  /** Names of the fixed features. */
  features: string[];
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
  /** Extra rows drawn from the latent of a candidate picked more than once. */
  redraws: number;
}

/** The rows and the per-group report. */
export interface ConditionalResult {
  /** n codes per feature, layout order (as `sampleRows`). */
  columns: Int32Array[];
  seed: number;
  /** One report per distinct condition, in the order of first rows. */
  groups: ConditionGroupReport[];
  /** The group (index into `groups`) of every row. */
  groupOfRow: Int32Array;
}

// Defaults of the ConditionalOptions fields of the same meaning.
export const DEFAULT_MIN_ESS = 32;
/**
 * Default ESS target per row of a calibrated draw: drawing rows without repeats needs weights that
 * rarely give one candidate more than 1/rows of the mass.
 */
export const CALIBRATED_ESS_PER_ROW = 2;
export const DEFAULT_BUDGET_FACTOR = 8;
export const ZERO_SEARCH = 65536;
export const MAX_RANK = 8;
export const MAX_COMPONENTS = 4;
export const MAX_CANDIDATE_BYTES = 256 * 1024 * 1024;

/** Validates a call's options. @throws RangeError naming the first bad one. */
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

/** What every group of one call shares: the model, the options with defaults, and scratch. */
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
  e: Float64Array;
  /** Scratch of chunk x D logits for the native fused call (made at first use). */
  logits?: Float32Array;
  /** Scratch of chunk x E scaled latents (null when scale is 1). */
  scaled: Float32Array | null;
  calibration: ConditionalOptions["calibration"] | null;
}
