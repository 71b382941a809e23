/**
 * Sampling kernel, the last step of generation: per (row, feature), logits / temperature ->
 * softmax -> nucleus truncation at `top_p` (Holtzman et al., "The Curious Case of Neural Text
 * Degeneration", ICLR 2020) -> one draw by inverse CDF with a given uniform.
 *
 * This is the JavaScript reference. The C++ addon (native/src/sampling.cc) does the same float64
 * arithmetic in the same order (exp as V8's Math.exp), so both give the same codes
 * (test/native.test.ts); {@link sampleCodes} dispatches to the addon when it loaded.
 *
 * Exact procedure for one (row r, feature f) with K = K_f:
 *  1. z_k = logit_k * (1 / T) (float64), m = max_k z_k, e_k = exp(z_k - m), s = sum_k e_k
 *     (k ascending).
 *  2. No truncation (topP null or >= 1): keep every k, total = s.
 *     Truncation: order k by e_k descending, ties by smaller k first; keep the shortest prefix
 *     whose running sum of e_k reaches topP * s (at least one code); total = that sum. With
 *     topP = 0 that is the first code of the order alone: the most probable, ties by smaller k.
 *  3. target = u * total; walk the kept codes in ascending k, accumulating e_k; the first k whose
 *     running sum exceeds target is drawn. If rounding leaves none, the last kept k is drawn.
 */
import { types } from "node:util";
import { nativeAddon } from "../compute/native";

/** Sampling options: `temperature` > 0; `topP` in [0, 1] (0: the most probable code) or null. */
export interface SampleOptions {
  temperature: number;
  topP: number | null;
}

/**
 * Step 1 of the kernel for one feature of one row (logits from `off`, e_k into `e`); returns
 * s = sum_k e_k, >= 1 for finite logits. The conditional sampler weighs latents by these same
 * values, so a code it allows is one this kernel could draw.
 */
export function kernelWeights(logits: Float32Array, off: number, K: number, invT: number, e: Float64Array): number {
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
  return s;
}

/**
 * Draws one code per (row, feature) in JavaScript; arguments and result as {@link sampleCodes}.
 * @throws RangeError when array lengths disagree with n and the cardinalities.
 */
export function sampleCodesJs(
  logits: Float32Array,
  n: number,
  cardinalities: readonly number[] | Int32Array,
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
      const s = kernelWeights(logits, off, K, invT, e);
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

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const MAX_CARDINALITY = 2147483647;

function isIntegerIn(v: number, lo: number, hi: number): boolean {
  return Number.isFinite(v) && Math.floor(v) === v && v >= lo && v <= hi;
}

/**
 * Checks {@link sampleCodes}' arguments with the native core's rules, messages and order
 * (native/src/addon.cc). @throws TypeError for a wrong type; RangeError for a bad n, cardinality,
 * temperature, topP, length or uniform, or a non-finite logit (or logit / temperature).
 */
export function checkSampleArgs(
  logits: Float32Array,
  n: number,
  cardinalities: readonly number[] | Int32Array,
  uniforms: Float64Array,
  opts: SampleOptions,
): void {
  if (!types.isFloat32Array(logits)) throw new TypeError("logits must be a Float32Array");
  if (typeof n !== "number") throw new TypeError("n must be a number");
  if (!isIntegerIn(n, 0, MAX_SAFE)) throw new RangeError(`n must be a non-negative integer, got ${n}`);
  if (!types.isInt32Array(cardinalities) && !Array.isArray(cardinalities)) {
    throw new TypeError("cardinalities must be an Int32Array or an array of integers");
  }
  let D = 0;
  for (let f = 0; f < cardinalities.length; f++) {
    const k: unknown = cardinalities[f];
    if (typeof k !== "number") throw new TypeError(`cardinalities[${f}] must be a number`);
    if (!isIntegerIn(k, 1, MAX_CARDINALITY)) {
      throw new RangeError(`cardinalities[${f}] must be an integer in [1, 2147483647], got ${k}`);
    }
    D += k;
  }
  const F = cardinalities.length;
  if (!types.isFloat64Array(uniforms)) throw new TypeError("uniforms must be a Float64Array");
  const T: unknown = opts.temperature;
  if (typeof T !== "number") throw new TypeError("temperature must be a number");
  if (!(Number.isFinite(T) && T > 0)) throw new RangeError(`temperature must be finite and > 0, got ${T}`);
  const invT = 1 / T;
  if (!Number.isFinite(invT)) throw new RangeError(`temperature ${T} is too small (1 / temperature is not finite)`);
  const topP: unknown = opts.topP;
  if (topP !== null && topP !== undefined) {
    if (typeof topP !== "number") throw new TypeError("topP must be a number or null");
    if (!(topP >= 0 && topP <= 1)) throw new RangeError(`topP must be in [0, 1] or null, got ${topP}`);
  }
  if (logits.length !== n * D) throw new RangeError(`logits has ${logits.length} values, expected n*D = ${n * D}`);
  if (uniforms.length !== n * F) throw new RangeError(`uniforms has ${uniforms.length} values, expected n*F = ${n * F}`);
  if (n * F === 0) return;
  for (let i = 0; i < uniforms.length; i++) {
    const u = uniforms[i];
    if (!(u >= 0 && u < 1)) throw new RangeError(`uniforms[${i}] = ${u} is outside [0, 1)`);
  }
  for (let i = 0; i < logits.length; i++) {
    const x = logits[i];
    if (Number.isFinite(x * invT)) continue;
    if (!Number.isFinite(x)) {
      const row = Math.floor(i / D);
      let col = i - row * D;
      let f = 0;
      while (col >= cardinalities[f]) col -= cardinalities[f++];
      throw logitsError(`logits[${i}] = ${x} is not finite (row ${row}, feature ${f})`);
    }
    throw logitsError(`logits[${i}] / temperature overflows (logit ${x}, temperature ${T})`);
  }
}

/** `code` of the RangeError both sampling paths throw for a non-finite logit (or / temperature). */
export const LOGITS_NOT_FINITE = "LOGITS_NOT_FINITE";

function logitsError(message: string): RangeError {
  return Object.assign(new RangeError(message), { code: LOGITS_NOT_FINITE });
}

/**
 * Draws one code per (row, feature), the generation hot path: the C++ core when it loaded, else
 * {@link checkSampleArgs} then {@link sampleCodesJs}; identical codes and errors either way.
 * @param logits n x D row-major; feature f owns columns [offset_f, offset_f + K_f).
 * @param uniforms n x F row-major, each in [0, 1): the draw for (r, f).
 * @returns F * n codes, column-major: (r, f) at `f * n + r`. @throws as {@link checkSampleArgs}.
 */
export function sampleCodes(
  logits: Float32Array,
  n: number,
  cardinalities: readonly number[] | Int32Array,
  uniforms: Float64Array,
  opts: SampleOptions,
): Int32Array {
  const native = nativeAddon();
  if (native !== undefined) {
    return native.sampleCodes(logits, n, cardinalities, uniforms, opts.temperature, opts.topP);
  }
  checkSampleArgs(logits, n, cardinalities, uniforms, opts);
  return sampleCodesJs(logits, n, cardinalities, uniforms, opts);
}
