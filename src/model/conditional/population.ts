/** A condition group and its candidates: a block per round, proposals, adaptation state. */
import type { ConditionCalibration } from "../sampling/condition-calibration";
import type { Rng } from "../sampling/xoshiro";
import type { Fixed } from "./condition";
import type { Proposal } from "./proposal";

/** A group: rows sharing one condition, and its candidate population. */
export interface Block {
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

export interface Group {
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
