/**
 * Sampling kernel (DESIGN §2, Generation): per (row, feature), logits / temperature -> softmax ->
 * nucleus truncation at `top_p` (Holtzman et al., "The Curious Case of Neural Text Degeneration",
 * ICLR 2020) -> one draw by inverse CDF with a given uniform.
 *
 * This is the JavaScript reference. The C++ addon in `native/` implements the same arithmetic in
 * the same order (float64 throughout), so both give the same codes for the same inputs.
 *
 * Exact procedure for one (row r, feature f) with K = K_f:
 *  1. z_k = logit_k / T (float64), m = max_k z_k, e_k = exp(z_k - m), s = sum_k e_k (k ascending).
 *  2. No truncation (topP null or >= 1): keep every k, total = s.
 *     Truncation: order k by e_k descending, ties by smaller k first; keep the shortest prefix whose
 *     running sum of e_k reaches topP * s (at least one code); total = that running sum.
 *  3. target = u * total; walk the kept codes in ascending k, accumulating e_k; the first k whose
 *     running sum exceeds target is drawn. If rounding leaves none, the last kept k is drawn.
 */

/** Sampling options: `temperature` > 0; `topP` in (0, 1], or null for no truncation. */
export interface SampleOptions {
  temperature: number;
  topP: number | null;
}

/**
 * Draws one code per (row, feature) in JavaScript.
 * @param logits     Float32Array, n x D row-major, D = sum of `cardinalities`; feature f owns
 *                   columns [offset_f, offset_f + K_f).
 * @param n          number of rows.
 * @param cardinalities K_f per feature, in feature order (F features).
 * @param uniforms   Float64Array, n x F row-major, each in [0, 1): the draw for (r, f).
 * @returns Int32Array of length F * n, column-major: code of (r, f) at `f * n + r`, in [0, K_f).
 * @throws RangeError when array lengths disagree with n and the cardinalities.
 */
export function sampleCodesJs(
  logits: Float32Array,
  n: number,
  cardinalities: readonly number[],
  uniforms: Float64Array,
  opts: SampleOptions,
): Int32Array {
  const F = cardinalities.length;
  let D = 0;
  let maxK = 0;
  for (const k of cardinalities) {
    D += k;
    if (k > maxK) maxK = k;
  }
  if (logits.length !== n * D) throw new RangeError(`logits has ${logits.length} values, expected n*D = ${n * D}`);
  if (uniforms.length !== n * F) throw new RangeError(`uniforms has ${uniforms.length} values, expected n*F = ${n * F}`);
  const invT = 1 / opts.temperature;
  const truncate = opts.topP !== null && opts.topP < 1;
  const topP = opts.topP ?? 1;
  const e = new Float64Array(maxK);
  const order = new Int32Array(maxK);
  const keep = new Uint8Array(maxK);
  const out = new Int32Array(F * n);
  for (let r = 0; r < n; r++) {
    let off = r * D;
    for (let f = 0; f < F; f++) {
      const K = cardinalities[f];
      let m = -Infinity;
      for (let k = 0; k < K; k++) {
        const z = logits[off + k] * invT;
        if (z > m) m = z;
      }
      let s = 0;
      for (let k = 0; k < K; k++) {
        e[k] = Math.exp(logits[off + k] * invT - m);
        s += e[k];
      }
      let total = s;
      if (truncate) {
        for (let k = 0; k < K; k++) {
          order[k] = k;
          keep[k] = 0;
        }
        const ord = order.subarray(0, K).sort((a, b) => e[b] - e[a] || a - b);
        const need = topP * s;
        total = 0;
        for (let i = 0; i < K; i++) {
          keep[ord[i]] = 1;
          total += e[ord[i]];
          if (total >= need) break;
        }
      }
      const target = uniforms[r * F + f] * total;
      let acc = 0;
      let code = -1;
      let last = 0;
      for (let k = 0; k < K; k++) {
        if (truncate && keep[k] === 0) continue;
        last = k;
        acc += e[k];
        if (acc > target) {
          code = k;
          break;
        }
      }
      out[f * n + r] = code < 0 ? last : code;
      off += K;
    }
  }
  return out;
}

/**
 * Draws one code per (row, feature): the native addon when it loaded, else {@link sampleCodesJs}.
 * Same arguments, result and errors as {@link sampleCodesJs}.
 */
export function sampleCodes(
  logits: Float32Array,
  n: number,
  cardinalities: readonly number[],
  uniforms: Float64Array,
  opts: SampleOptions,
): Int32Array {
  // The native helper wires the addon in here (src/model/native.ts) with this function as fallback.
  return sampleCodesJs(logits, n, cardinalities, uniforms, opts);
}
