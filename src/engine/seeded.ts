/**
 * Seeded generation in the worker (issue 12): runs a checked {@link SeededSource} with the model's
 * own conditional sampler (`src/model/conditional.ts`: adaptive multiple importance sampling over
 * latents, never rejection of whole rows) on either compute path, with the request's seed,
 * temperature, top_p and the model's privacy noise, exactly as the plain draw gets them.
 *
 * A condition the model gives (numerically) zero probability is a `ConditionError`; it is
 * rethrown as an `InputError` whose `param` names the condition's first row and, when one feature
 * is at fault, its cell (`body.embedding.condition.age`, `body.embedding.seed_data.rows[3][1]`),
 * so the worker's reply maps it to 400 `parameter_invalid`.
 */
import { ConditionError, sampleConditional, sampleSeeded, type ConditionalOptions, type RowCondition } from "../model/conditional";
import { InputError, type SamplingOptions } from "../model/generate";
import { conditionParam, type SeededSource } from "../model/seeded-input";
import type { GeneratorModel } from "../model/trainer";

/**
 * Codes of a seeded request: one Int32Array of n codes per feature, in the model's feature order
 * (as `sampleRows`); fixed cells always hold one of their allowed codes.
 * @param model the generator (native core or tfjs).
 * @param source the checked request (`seededSource`), in the model's feature order.
 * @param opts temperature, topP, yieldFn, shouldAbort; `seed` (default: fresh); `privacyNoise`
 *   (sigma of the model's privacy noise, 0 when privacy is off).
 * @throws InputError (param as in the module comment) for a zero-probability or malformed
 *   condition; RangeError for bad sampling options; what the forward pass throws.
 */
export async function sampleSeededSource(
  model: GeneratorModel,
  source: SeededSource,
  opts: SamplingOptions & Pick<ConditionalOptions, "seed" | "privacyNoise">,
): Promise<Int32Array[]> {
  const base: ConditionalOptions = {
    ...opts,
    paramFor: (row) => (source.kind === "where" ? "body.embedding.condition" : `body.embedding.seed_data.rows[${row}]`),
  };
  try {
    if (source.kind === "where") {
      return (await sampleSeeded(model, source.condition as RowCondition, source.numRows, base)).columns;
    }
    return (await sampleConditional(model, source.rows as RowCondition[], base)).columns;
  } catch (err) {
    if (err instanceof ConditionError && err.features.length > 0) {
      const what =
        source.kind === "where" ? err.message.replace(/^the condition of row 0 on/, "the condition on") : err.message.replace(/^the condition of row/, "the condition of seed row");
      throw new InputError(capitalise(what), conditionParam(source, model.layout.features, err.row, err.features));
    }
    throw err;
  }
}

function capitalise(s: string): string {
  return s.length > 0 ? s[0].toUpperCase() + s.slice(1) : s;
}
