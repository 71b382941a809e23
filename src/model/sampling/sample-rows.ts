/** Plain generation: latents -> forward pass -> sampling kernel (`sampling.ts`), in chunks. */
import * as tf from "@tensorflow/tfjs-core";
import type { GenerationInputs } from "./draws";
import { forward } from "../generator/generator";
import { sampleCodes } from "./sampling";
import type { GeneratorModel } from "../generator/model";

/** Rows per forward pass. */
export const GENERATE_CHUNK = 2048;

/** Sampling options (defaults: temperature 1, no truncation). */
export interface SamplingOptions {
  temperature?: number;
  topP?: number | null;
  /** Awaited between chunks so other work on the thread can run. */
  yieldFn?: () => Promise<void>;
  /** Called between chunks; when it returns true generation stops with an Error. */
  shouldAbort?: () => boolean;
}

/** Yields to `opts.yieldFn`, then polls `opts.shouldAbort`. @throws Error "generation aborted". */
export async function betweenChunks(opts: SamplingOptions): Promise<void> {
  if (opts.yieldFn) await opts.yieldFn();
  if (opts.shouldAbort?.()) throw new Error("generation aborted");
}

/**
 * Codes for the rows of `inputs` from `model`: one Int32Array of n per feature (layout order),
 * `0 <= code < K_f`, views of one F x n array ({@link packedColumns} takes it as it is).
 * @throws Error when `shouldAbort` fires; RangeError from the sampling kernel on bad sizes.
 */
export async function sampleRows(model: GeneratorModel, inputs: GenerationInputs, opts: SamplingOptions = {}): Promise<Int32Array[]> {
  if (model.native) return model.native.sampleRows(inputs, opts); // the C++ core: forward + sampling
  const { spec, layout } = model;
  const { n, latents, uniforms } = inputs;
  const E = spec.embeddingDim;
  const F = layout.features.length;
  const sampleOpts = { temperature: opts.temperature ?? 1, topP: opts.topP ?? null };
  const all = new Int32Array(F * n);
  const columns = layout.cardinalities.map((_, f) => all.subarray(f * n, (f + 1) * n));
  for (let r0 = 0; r0 < n; r0 += GENERATE_CHUNK) {
    if (r0 > 0) await betweenChunks(opts);
    const m = Math.min(GENERATE_CHUNK, n - r0);
    const logits = forwardLogits(model, latents.subarray(r0 * E, (r0 + m) * E), m);
    const codes = sampleCodes(logits, m, layout.cardinalities, uniforms.subarray(r0 * F, (r0 + m) * F), sampleOpts);
    for (let f = 0; f < F; f++) columns[f].set(codes.subarray(f * m, (f + 1) * m), r0);
  }
  return columns;
}

/**
 * Several rows per latent: the rows of `inputs`, then k more from the same latents with the k
 * sets of `extraUniforms` (k x n x F), each row alone a draw from the model (features are
 * independent given z); a set's codes are those {@link sampleRows} gives with its uniforms.
 * @param out (1 + k) x n x F values for the codes, else new.
 * @returns (1 + k) x n codes per feature, views of `out`: set j's rows at [j n, (j + 1) n).
 * @throws RangeError for `extraUniforms` or `out` of a bad length; otherwise as {@link sampleRows}.
 */
export async function sampleRowsPerLatent(
  model: GeneratorModel,
  inputs: GenerationInputs,
  extraUniforms: Float64Array,
  opts: SamplingOptions = {},
  out?: Int32Array,
): Promise<Int32Array[]> {
  const { n, latents, uniforms } = inputs;
  const F = model.layout.features.length;
  const k = extraUniforms.length / (n * F);
  if (!(Number.isInteger(k) && k >= 1)) throw new RangeError(`extraUniforms must hold k x n x F values (n = ${n}, F = ${F}), k >= 1`);
  const total = (1 + k) * n;
  if (out !== undefined && out.length !== F * total) throw new RangeError(`out must hold (1 + k) x n x F = ${F * total} values, got ${out.length}`);
  if (model.native && model.native.device === "cpu") return model.native.sampleRows(inputs, opts, extraUniforms, out);
  // Elsewhere (tfjs, a GPU core): one forward pass per chunk, the sampling kernel once per set.
  const { spec, layout } = model;
  const E = spec.embeddingDim;
  const sampleOpts = { temperature: opts.temperature ?? 1, topP: opts.topP ?? null };
  const all = out ?? new Int32Array(F * total);
  const columns = layout.cardinalities.map((_, f) => all.subarray(f * total, (f + 1) * total));
  for (let r0 = 0; r0 < n; r0 += GENERATE_CHUNK) {
    if (r0 > 0) await betweenChunks(opts);
    const m = Math.min(GENERATE_CHUNK, n - r0);
    const logits = forwardLogits(model, latents.subarray(r0 * E, (r0 + m) * E), m);
    for (let j = 0; j <= k; j++) {
      const u = j === 0 ? uniforms.subarray(r0 * F, (r0 + m) * F) : extraUniforms.subarray(((j - 1) * n + r0) * F, ((j - 1) * n + r0 + m) * F);
      const codes = sampleCodes(logits, m, layout.cardinalities, u, sampleOpts);
      for (let f = 0; f < F; f++) columns[f].set(codes.subarray(f * m, (f + 1) * m), j * n + r0);
    }
  }
  return columns;
}

/** The forward pass on the model's compute path: logits m x D of latents m x E (read, not kept). */
export function forwardLogits(model: GeneratorModel, latents: Float32Array, m: number): Float32Array {
  if (model.native) return model.native.logits(latents, m);
  // (tidy must not return the typed array: it would walk it element by element)
  const out = tf.tidy(() => forward(model.spec, model.params, tf.tensor2d(latents, [m, model.spec.embeddingDim])));
  const logits = out.dataSync() as Float32Array;
  out.dispose();
  return logits;
}
