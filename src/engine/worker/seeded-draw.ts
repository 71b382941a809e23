/**
 * Seeded generation in the worker: a checked {@link SeededSource} through the model's conditional
 * sampler (`src/model/conditional/`: adaptive multiple importance sampling over latents, never
 * whole-row rejection), with the plain draw's seed, temperature, top_p and privacy noise.
 */
import { conditionParam, sampleConditional, sampleSeeded, type ConditionalOptions, type GeneratorModel, type SamplingOptions, type SeededSource } from "../../model";

/**
 * Codes of a seeded request: one Int32Array of n codes per feature, model order; fixed cells
 * always hold an allowed code. `opts.privacyNoise`: sigma (0 when off); `opts.calibration`: the
 * marginals' factors (`zeroCellFactors`) when `source.calibrate`.
 * @throws InputError (`ConditionError`, `param` naming the condition and cell, e.g.
 *   `body.embedding.seed_data.rows[3][1]`; 400) for a zero-probability or malformed condition;
 *   RangeError for bad sampling options; what the forward pass throws.
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
