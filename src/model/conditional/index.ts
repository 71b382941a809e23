/**
 * Seeded (conditional) generation: rows drawn from the model's own conditional given per-row
 * conditions on some features (docs/api.md "Seeded generation (extension)"). The method is one
 * file per step; read in this order:
 * - `options.ts`: what a call is given and returns (options, defaults, the per-group report).
 * - `condition.ts`: a row's condition, its canonical form and the grouping of rows.
 * - `population.ts`: a group and its candidate population (blocks, one per round).
 * - `evaluate.ts`: a candidate's forward pass, its likelihood and its row.
 * - `proposal.ts`: the proposal family (prior off a subspace, a mixture in it), draws and densities;
 *   `linalg.ts`: the small linear algebra it needs.
 * - `subspace.ts`, `mixture.ts`: fitting a proposal to the weighted candidates (subspace, then EM).
 * - `weights.ts`: deterministic-mixture weights, ESS, the raking of calibrated groups.
 * - `plan.ts`: a group's next round (proposal and size) or its end.
 * - `resample.ts`: systematic resampling of weighted candidates.
 * - `sample.ts`: the driver (`sampleConditional`, `sampleSeeded`): groups, waves, rows.
 * - `seeded-input.ts`: the wire's seeded request (`embedding.seed_data` / `where`) to conditions.
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
 * Method: self-normalised importance sampling with an adaptive proposal, run once per condition
 * group (rows with identical conditions share one candidate population): adaptive multiple
 * importance sampling (AMIS; Cornuet, Marin, Mira & Robert, "Adaptive multiple importance
 * sampling", Scand. J. Stat. 39(4), 2012), a form of population Monte Carlo (Cappé, Guillin, Marin
 * & Robert, "Population Monte Carlo", JCGS 13(4), 2004). Round 0 draws candidates from the prior;
 * each later round draws from a proposal fitted to all weighted candidates so far; the weights are
 * deterministic-mixture weights over every round (`weights.ts`).
 *
 * Randomness: one xoshiro128** stream (xoshiro.ts) seeded with `seed` (given or fresh) gives, in the
 * order of each group's first row, one 64-bit seed per group. A group's own stream gives, per round:
 * a 53-bit round seed (two 32-bit outputs), from which draws.ts `drawRequest` draws the round's
 * prior latents (E ziggurat normals per candidate) and its rows' uniforms (F per candidate) in
 * blocks, as a plain generate request of that seed draws them (in the native core when loaded, the
 * same values in TypeScript otherwise); then r normals per candidate, then one uniform per candidate
 * picking its mixture component when there are several; for the fit the start of its systematic
 * resample (when there are more than FIT_POINTS candidates) and, for E > 128, the start vectors of
 * its subspace iteration; at the end the start of the systematic resampling of the rows, the
 * uniforms of the extra rows (F each) and the shuffle. The same weights, conditions, seed and
 * options give identical codes (on either compute path for identical logits). (The candidates'
 * normals and uniforms once came from the group's stream itself; drawing them as the plain draw
 * does changed a seed's rows once, docs/decisions.md "A seed's rows".)
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
// `fillNormalZiggurat` lives in xoshiro.ts (the plain draw uses it too); re-exported here for existing
// importers.
export { fillNormalZiggurat } from "../sampling/xoshiro";
