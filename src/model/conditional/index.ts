/**
 * Seeded (conditional) generation: rows drawn from the model's own conditional given per-row
 * conditions on some features (docs/api.md "Seeded generation (extension)"). One file per step:
 * `options.ts` (call and report), `condition.ts` (conditions, grouping), `population.ts`
 * (candidates), `evaluate.ts` (forward pass, likelihood, row), `proposal.ts` and `linalg.ts` (the
 * proposal family), `subspace.ts` and `mixture.ts` (fitting it), `weights.ts` (weights, ESS,
 * raking), `plan.ts` (next round), `resample.ts`, `sample.ts` (the driver), `seeded-input.ts` (the
 * wire's seeded forms).
 *
 * Target. The generator maps z ~ N(0, s^2 I_E) (s^2 = 1 + privacy_noise^2 with privacy on, else
 * 1) to logits; given z the features are independent, p_f(. | z) = softmax(logits_f / T). A
 * condition fixes features f to non-empty sets A_f of allowed codes, each with a weight a_k in
 * (0, 1] (the share of the code's values inside the condition, e.g. a bin half inside a range):
 *
 *   z   ~ pi(z) ∝ N(z; 0, s^2 I) * prod_{f fixed} p_f(A_f | z)
 *         with p_f(A | z) = sum_{k in A} a_k p_f(k | z)
 *   x_f ~ a_k p_f(k | z) over k in A_f, renormalised                  (f fixed)
 *   x_f ~ the sampling kernel of `sampling.ts` on logits_f(z)            (f free: T and top_p)
 *
 * Temperature applies everywhere; top_p only to free features (an allowed set is the caller's
 * choice). With top_p null the rows are exactly the plain draw conditioned on the event.
 *
 * Method: self-normalised importance sampling per condition group, adaptive multiple importance
 * sampling (AMIS; Cornuet, Marin, Mira & Robert, Scand. J. Stat. 39(4), 2012), a form of
 * population Monte Carlo (Cappé, Guillin, Marin & Robert, JCGS 13(4), 2004). Round 0 draws from
 * the prior; each later round from a proposal fitted to all weighted candidates so far; weights are
 * deterministic-mixture weights over every round (`weights.ts`).
 *
 * Randomness: one xoshiro128** stream seeded with `seed` gives one 64-bit seed per group, in the
 * order of first rows. A group's stream gives per round a 53-bit round seed, from which draws.ts
 * `drawRequest` draws the prior latents and uniforms as a plain request of that seed would; then
 * r normals per candidate and a component uniform (several components); for the fit a resample
 * start and, for E > 128, subspace start vectors; at the end the rows' resample start, the extra
 * rows' uniforms and the shuffle. The same weights, conditions, seed and options give identical
 * codes (docs/decisions.md "A seed's rows").
 */
export { type CellCondition, ConditionError, type RowCondition, type WeightedCell } from "./condition";
export {
  CALIBRATED_ESS_PER_ROW,
  DEFAULT_BUDGET_FACTOR,
  DEFAULT_MIN_ESS,
  MAX_CANDIDATE_BYTES,
  MAX_COMPONENTS,
  MAX_RANK,
  ZERO_SEARCH,
  type ConditionalOptions,
  type ConditionalResult,
  type ConditionGroupReport,
} from "./options";
export { mixtureAccumulateJs, proposalShiftJs } from "./proposal";
export { systematicCounts } from "./resample";
export { sampleConditional, sampleSeeded } from "./sample";
export { weightedGramJs } from "./subspace";
export { conditionParam, isSeeded, SeededInputError, seededSource, type SeededSource } from "./seeded-input";
// Re-exported for existing importers; it lives in xoshiro.ts (the plain draw uses it too).
export { fillNormalZiggurat } from "../sampling/xoshiro";
