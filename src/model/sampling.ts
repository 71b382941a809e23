/**
 * Sampling kernel interface (DESIGN §2, Generation): per feature, logits / temperature ->
 * softmax -> nucleus (top_p) truncation -> one draw with a given uniform.
 *
 * STUB: the native helper implements this file (JS reference) and `native.ts` (addon loader).
 */

/** Sampling options: `temperature` > 0; `topP` in (0, 1], or null for no truncation. */
export interface SampleOptions {
  temperature: number;
  topP: number | null;
}

/**
 * Draws one code per (row, feature).
 * @param logits     Float32Array, n x D row-major, D = sum of `cardinalities`; feature f owns
 *                   columns [offset_f, offset_f + K_f).
 * @param n          number of rows.
 * @param cardinalities K_f per feature, in feature order (F features).
 * @param uniforms   Float64Array, n x F row-major, each in [0, 1): the draw for (r, f).
 * @returns Int32Array of length F * n, column-major: code of (r, f) at `f * n + r`, in [0, K_f).
 */
export function sampleCodes(
  logits: Float32Array,
  n: number,
  cardinalities: readonly number[],
  uniforms: Float64Array,
  opts: SampleOptions,
): Int32Array {
  void logits; void n; void cardinalities; void uniforms; void opts;
  throw new Error("not implemented");
}
