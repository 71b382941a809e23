/**
 * Seeded generation in the worker: runs a checked {@link SeededSource} with the model's
 * own conditional sampler (`src/model/conditional/`: adaptive multiple importance sampling over
 * latents, never rejection of whole rows) on either compute path, with the request's seed,
 * temperature, top_p and the model's privacy noise, exactly as the plain draw gets them.
 *
 * A condition the model gives (numerically) zero probability is a `ConditionError` (an
 * `InputError`) whose `param` names the condition and, when one feature is at fault, its cell
 * (`body.embedding.condition.age`, `body.embedding.seed_data.rows[3][1]`; `conditionParam` of
 * `src/model/conditional/seeded-input.ts`), so the worker's reply maps it to 400 `parameter_invalid`.
 */
import { conditionParam, sampleConditional, sampleSeeded, type ConditionalOptions, type GeneratorModel, type SamplingOptions, type SeededSource } from "../../model";

/**
 * Codes of a seeded request: one Int32Array of n codes per feature, in the model's feature order
 * (as `sampleRows`); fixed cells always hold one of their allowed codes.
 * @param model the generator (native core or tfjs).
 * @param source the checked request (`seededSource`), in the model's feature order.
 * @param opts temperature, topP, yieldFn, shouldAbort; `seed` (default: fresh); `privacyNoise`
 *   (sigma of the model's privacy noise, 0 when privacy is off); `calibration` (the factors of
 *   the model's given marginals, `calibrate.ts` `zeroCellFactors`) when `source.calibrate`.
 * @throws InputError (a `ConditionError`; message "The condition on a, b has probability 0 ..." or
 *   "The condition of seed row 3 on a ...", param as in the module comment) for a zero-probability
 *   or malformed condition; RangeError for bad sampling options; what the forward pass throws.
 */
export async function sampleSeededSource(
  model: GeneratorModel,
  source: SeededSource,
  opts: SamplingOptions & Pick<ConditionalOptions, "seed" | "privacyNoise" | "calibration">,
): Promise<Int32Array[]> {
  const base: ConditionalOptions = {
    ...opts,
    paramFor: (row, features) => conditionParam(source, model.layout.features, row, features),
    conditionLabel: (row) => (source.kind === "where" ? "The condition" : `The condition of seed row ${row}`),
  };
  const res = source.kind === "where" ? await sampleSeeded(model, source.condition, source.numRows, base) : await sampleConditional(model, source.rows, base);
  return res.columns;
}
