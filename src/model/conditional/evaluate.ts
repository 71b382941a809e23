/**
 * Evaluation of candidates ({@link evaluate}): one forward pass and the sampling kernel per
 * candidate give its weight's likelihood part, log prod_{f fixed} p_f(A_f | z), and its row:
 * fixed features restricted to A_f (x_f ~ a_k p_f(k | z) over k in A_f, renormalised), free ones
 * by the kernel of `sampling.ts`.
 *
 * Numerical zero: p_f(k | z) is computed as the kernel computes it, e_k = exp(l_k / T - max_j
 * l_j / T) in float64. When every allowed code of a fixed feature has e_k = 0 (the kernel could
 * never draw it), the latent's weight is 0; everything else stays in log space, so products of
 * many small probabilities never underflow. A condition with weight 0 at every one of `zeroSearch`
 * prior latents throws `ConditionError` (`plan.ts`); any other yields rows.
 */
import { EXCLUDED_LOG_FACTOR } from "../sampling/condition-calibration";
import { betweenChunks, forwardLogits } from "../sampling/sample-rows";
import { kernelWeights, sampleCodes } from "../sampling/sampling";
import type { ConditionalCall } from "./options";
import type { Group } from "./population";

/** The latents the model sees: standardised `x` times `ctx.scale` (into `ctx.scaled`), or `x`. */
function scaledLatents(ctx: ConditionalCall, x: Float32Array): Float32Array {
  if (!ctx.scaled) return x;
  const z = ctx.scaled.subarray(0, x.length);
  for (let i = 0; i < z.length; i++) z[i] = x[i] * ctx.scale;
  return z;
}

/**
 * Logits (m x D) of standardised latents `x` and the kernel's codes (F x m) from uniforms `u`: on
 * a native model one fused call (logits into `ctx.logits`), else `forwardLogits` + `sampleCodes`.
 */
function forwardAndKernel(ctx: ConditionalCall, x: Float32Array, m: number, u: Float64Array): { logits: Float32Array; kernel: Int32Array } {
  const { T, topP } = ctx;
  const native = ctx.model.native;
  const z = scaledLatents(ctx, x);
  if (!native) {
    const logits = forwardLogits(ctx.model, z, m);
    return { logits, kernel: sampleCodes(logits, m, ctx.cards, u, { temperature: T, topP }) };
  }
  ctx.logits ??= new Float32Array(ctx.chunk * ctx.D);
  const logits = ctx.logits.subarray(0, m * ctx.D);
  return { logits, kernel: native.generateWithLogits(z, m, u, T, topP, logits) };
}

/** A batch of candidates to evaluate: which group, where its rows go. */
export interface Segment {
  group: Group;
  /** First candidate of the segment in the batch. */
  start: number;
  n: number;
  /** Writes the candidate's codes (row-major, F) and log-likelihood. */
  codes: Int32Array;
  loglik: Float64Array | null;
}

/**
 * Forward pass + kernel for a batch of standardised latents `x` with uniforms `u`, chunked: fills
 * each segment's codes (fixed features within their sets) and, when asked, its log-likelihoods.
 */
export async function evaluate(ctx: ConditionalCall, x: Float32Array, u: Float64Array, total: number, segments: readonly Segment[]): Promise<void> {
  const { E, F, D, cards, offsets, T, chunk, e } = ctx;
  const invT = 1 / T;
  let s = 0;
  for (let r0 = 0; r0 < total; r0 += chunk) {
    if (r0 > 0) await betweenChunks(ctx.opts);
    const m = Math.min(chunk, total - r0);
    const uc = u.subarray(r0 * F, (r0 + m) * F);
    const { logits, kernel } = forwardAndKernel(ctx, x.subarray(r0 * E, (r0 + m) * E), m, uc);
    while (s < segments.length && segments[s].start + segments[s].n <= r0) s++;
    for (let si = s; si < segments.length && segments[si].start < r0 + m; si++) {
      const seg = segments[si];
      const { fixed, zeroCounts } = seg.group;
      const a0 = Math.max(seg.start, r0);
      const a1 = Math.min(seg.start + seg.n, r0 + m);
      for (let c = a0; c < a1; c++) {
        const j = c - r0;
        const i = c - seg.start;
        const row = seg.codes;
        const ro = i * F;
        for (let f = 0; f < F; f++) row[ro + f] = kernel[f * m + j];
        let ll = 0;
        for (let q = 0; q < fixed.length; q++) {
          const { f, codes, weights } = fixed[q];
          const sum = kernelWeights(logits, j * D + offsets[f], cards[f], invT, e);
          if (weights) for (let t = 0; t < codes.length; t++) e[codes[t]] *= weights[t];
          let a = 0;
          for (let t = 0; t < codes.length; t++) a += e[codes[t]];
          if (!(a > 0)) {
            ll = -Infinity;
            zeroCounts[q]++;
            row[ro + f] = codes[0];
            continue;
          }
          if (ll !== -Infinity) ll += Math.log(a) - Math.log(sum);
          if (codes.length === 1) {
            row[ro + f] = codes[0];
          } else {
            // The kernel's inverse-CDF walk, over the allowed codes only (ascending; e weighted).
            const target = uc[j * F + f] * a;
            let acc = 0;
            let pick = -1;
            let last = codes[0];
            for (let t = 0; t < codes.length; t++) {
              const k = codes[t];
              if (e[k] === 0) continue;
              last = k;
              acc += e[k];
              if (acc > target) {
                pick = k;
                break;
              }
            }
            row[ro + f] = pick < 0 ? last : pick;
          }
        }
        const ex = seg.group.calibration?.exclusions;
        if (ex && seg.loglik && ll !== -Infinity) for (const e of ex) if (e.excluded[row[ro + e.f]]) ll += EXCLUDED_LOG_FACTOR;
        if (seg.loglik) seg.loglik[i] = ll;
      }
    }
  }
}
