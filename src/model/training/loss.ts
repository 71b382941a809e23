/**
 * The marginal-matching loss. The generator-over-marginals approach is GEM's (Liu, Vietri & Wu,
 * "Iterative Methods for Private Synthetic Data: Unifying Framework and New Methods", NeurIPS 2021;
 * see also Liu et al., ICML 2023, and RAP, Aydore et al., ICML 2021): fit a generator's expected
 * marginals to the measured ones, here with the divergence KL(given || model).
 *
 * For a batch of B latents the generator gives P (B x D): row b holds one probability vector per
 * feature. The model's marginals are expectations over the batch:
 *   1-way  m_f  = (1/B) sum_b P[b, f-slice]                         (K_f)
 *   2-way  m_fg = (1/B) P[:, f-slice]^T P[:, g-slice]               (K_f x K_g)
 * (features are conditionally independent given z).
 *
 * Loss = (1/W) sum over given marginals q of w_q KL(q || m), KL = sum_i q_i ln(q_i / (m_i + eps)),
 * eps = {@link LOSS_EPS} (keeps ln finite and the gradient alive where the model puts ~0 mass),
 * w_q = 1 / ln(cells of q), W = their sum (targets.ts `marginalWeight`). The entropy part is a
 * constant (`MarginalTargets.negEntropy`), so the loss is `(negEntropy - sum w q ln(m + eps)) / W`.
 * Units: nats per (weighted) marginal.
 *
 * Training adds {@link entropyPenalty} to what it differentiates (not to the losses it reports).
 */
import * as tf from "@tensorflow/tfjs-core";
import { lossTargets, type MarginalTargets } from "../generator/targets";
import { gram, matMulTransA } from "../compute/ops";

/** Smoothing added to the model's marginals inside the logarithm. */
export const LOSS_EPS = 1e-10;

/** 2-way form costs in "D x D entries": Gram ~D^2; blocks this per block, the next per entry. */
export const GRAM_BLOCK_OVERHEAD = 20_000;
export const GRAM_BLOCK_ENTRY_COST = 6;
/** The Gram form is never used above this D (its matrix is D x D floats). */
export const GRAM_MAX_WIDTH = 4096;

/** The cheaper 2-way form for these targets (see {@link GRAM_BLOCK_OVERHEAD}). */
export function preferredForm(targets: MarginalTargets): "gram" | "blocks" {
  const { layout } = targets;
  const D = layout.width;
  const entries = targets.blocks.reduce((s, b) => s + layout.cardinalities[b.f] * (b.c1 - b.c0), 0);
  const blockCost = GRAM_BLOCK_OVERHEAD * targets.blocks.length + GRAM_BLOCK_ENTRY_COST * entries;
  return D <= GRAM_MAX_WIDTH && D * D <= blockCost ? "gram" : "blocks";
}

/**
 * The targets as tensors (once per model; free with {@link disposeTargetTensors}), in one of two
 * equivalent 2-way forms ({@link preferredForm}): `gram`, G = P^T P against one D x D target zero
 * outside the given pairs (fastest when most pairs are given), or `blocks`, one
 * `P_f^T P[:, c0:c1]` per pair block (work proportional to the given pairs).
 */
export interface TargetTensors {
  targets: MarginalTargets;
  mode: "gram" | "blocks";
  /** 1-way targets, [D]. */
  oneWay: tf.Tensor1D;
  /** `blocks`: one [K_f, c1 - c0] target per pair block; `gram`: one [D, D] target. */
  twoWay: tf.Tensor2D[];
  /** [D]: 1 / (F ln(max(K_f, 2))) on feature f's columns, {@link entropyPenalty}'s scale. */
  entropyScale: tf.Tensor1D;
}

/** Marginal sums over n rows (divide by n for the marginals). */
export interface MarginalSums {
  /** [D]: sum_b P[b]. */
  oneWay: tf.Tensor1D;
  /** Per {@link TargetTensors.twoWay} entry: the matching sums of products. */
  twoWay: tf.Tensor2D[];
}

/** Uploads the targets as tensors (outside any `tf.tidy`) in 2-way form `mode`. */
export function targetTensors(targets: MarginalTargets, mode?: "gram" | "blocks"): TargetTensors {
  const { layout } = targets;
  const D = layout.width;
  const chosen = mode ?? preferredForm(targets);
  const weighted = lossTargets(targets);
  let twoWay: tf.Tensor2D[];
  if (targets.blocks.length === 0) twoWay = [];
  else if (chosen === "gram") {
    const q = new Float32Array(D * D);
    for (const b of weighted.blocks) {
      const w = b.c1 - b.c0;
      for (let r = 0; r < layout.cardinalities[b.f]; r++) {
        q.set(b.target.subarray(r * w, (r + 1) * w), (layout.offsets[b.f] + r) * D + b.c0);
      }
    }
    twoWay = [tf.tensor2d(q, [D, D])];
  } else {
    twoWay = weighted.blocks.map((b) => tf.tensor2d(b.target, [layout.cardinalities[b.f], b.c1 - b.c0]));
  }
  const F = layout.features.length;
  const scale = new Float32Array(D);
  for (let f = 0; f < F; f++) scale.fill(1 / (F * Math.log(Math.max(2, layout.cardinalities[f]))), layout.offsets[f], layout.offsets[f + 1]);
  return { targets, mode: chosen, oneWay: tf.tensor1d(weighted.oneWay), twoWay, entropyScale: tf.tensor1d(scale) };
}

/** Frees the tensors of {@link targetTensors}. */
export function disposeTargetTensors(t: TargetTensors): void {
  t.oneWay.dispose();
  t.entropyScale.dispose();
  for (const b of t.twoWay) b.dispose();
}

/** Unnormalised sums of the model's marginals over the rows of `probs` [n, D]. */
export function marginalSums(probs: tf.Tensor2D, t: TargetTensors): MarginalSums {
  const { layout, blocks } = t.targets;
  const n = probs.shape[0];
  const oneWay = tf.sum(probs, 0) as tf.Tensor1D;
  if (t.twoWay.length === 0) return { oneWay, twoWay: [] };
  if (t.mode === "gram") return { oneWay, twoWay: [gram(probs)] };
  const twoWay = blocks.map((b) => {
    const pf = tf.slice(probs, [0, layout.offsets[b.f]], [n, layout.cardinalities[b.f]]);
    const pg = tf.slice(probs, [0, b.c0], [n, b.c1 - b.c0]);
    return matMulTransA(pf, pg);
  });
  return { oneWay, twoWay };
}

/** Adds two {@link MarginalSums} (chunked evaluation). */
export function addSums(a: MarginalSums, b: MarginalSums): MarginalSums {
  return { oneWay: tf.add(a.oneWay, b.oneWay), twoWay: a.twoWay.map((x, k) => tf.add(x, b.twoWay[k])) };
}

/** The loss from marginal sums over `n` rows (module comment). Scalar, nats per marginal. */
export function lossFromSums(sums: MarginalSums, n: number, t: TargetTensors): tf.Scalar {
  const inv = 1 / n;
  const logM = (s: tf.Tensor): tf.Tensor => tf.log(tf.add(tf.mul(s, inv), LOSS_EPS));
  let cross = tf.sum(tf.mul(t.oneWay, logM(sums.oneWay)));
  sums.twoWay.forEach((s, k) => {
    cross = tf.add(cross, tf.sum(tf.mul(t.twoWay[k], logM(s))));
  });
  return tf.div(tf.sub(t.targets.negEntropy, cross), t.targets.count) as tf.Scalar;
}

/** Added to p inside the entropy penalty's logarithm (p can underflow to exactly 0). */
export const ENTROPY_EPS = 1e-30;

/**
 * Entropy penalty: alpha * (1/n) sum_b (1/F) sum_f H(p_f[b]) / ln(max(K_f, 2)), the mean
 * normalised entropy of each row's per-feature distributions, H(p) = -sum_k p_k ln(p_k + eps),
 * eps = {@link ENTROPY_EPS}. Minimising it (Grandvalet & Bengio, "Semi-supervised learning by
 * entropy minimization", NIPS 2004) sharpens each latent's distributions while the KL keeps the
 * marginals, so components carry more higher-order structure. The native core adds the same
 * gradient (generator_core.h). Scalar. @param probs [n, D] per-feature probabilities.
 */
export function entropyPenalty(probs: tf.Tensor2D, t: TargetTensors, alpha: number): tf.Scalar {
  const n = probs.shape[0];
  // -alpha/n sum_{b,k} scale_k p_bk ln(p_bk + eps) = alpha/(nF) sum_b sum_f H_f(b) / ln K_f
  const plogp = tf.sum(tf.mul(tf.mul(probs, tf.log(tf.add(probs, ENTROPY_EPS))), t.entropyScale));
  return tf.mul(plogp, -alpha / n) as tf.Scalar;
}

/** `lossFromSums(marginalSums(probs), B)`: the training loss of one batch. */
export function marginalLoss(probs: tf.Tensor2D, t: TargetTensors): tf.Scalar {
  return lossFromSums(marginalSums(probs, t), probs.shape[0], t);
}

/**
 * The same loss in float64 JavaScript from model marginals as arrays (tests): `oneWay[f]` of K_f,
 * `twoWay` keyed `"f,g"` (f < g), row-major K_f x K_g.
 */
export function klLoss(targets: MarginalTargets, oneWay: ArrayLike<number>[], twoWay: Map<string, ArrayLike<number>>): number {
  const { layout } = targets;
  let total = 0;
  for (let f = 0; f < layout.features.length; f++) {
    const q = targets.oneWay.subarray(layout.offsets[f], layout.offsets[f + 1]);
    const w = targets.oneWayWeight[layout.offsets[f]];
    for (let i = 0; i < q.length; i++) if (q[i] > 0) total += w * q[i] * Math.log(q[i] / (oneWay[f][i] + LOSS_EPS));
  }
  for (const b of targets.blocks) {
    const w = b.c1 - b.c0;
    for (const [f, g] of b.pairs) {
      const m = twoWay.get(`${f},${g}`);
      if (m === undefined) throw new RangeError(`model 2-way marginal ${f},${g} missing`);
      const kg = layout.cardinalities[g];
      const col = layout.offsets[g] - b.c0;
      for (let r = 0; r < layout.cardinalities[f]; r++) {
        for (let c = 0; c < kg; c++) {
          const q = b.target[r * w + col + c];
          if (q > 0) total += b.weight[col + c] * q * Math.log(q / (m[r * kg + c] + LOSS_EPS));
        }
      }
    }
  }
  return total / targets.count;
}
