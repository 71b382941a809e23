/**
 * Train on synthetic, test on real (TSTR; Esteban, Hyland & Rätsch, "Real-valued (medical) time
 * series generation with recurrent conditional GANs", 2017): a classifier trained on synthetic
 * rows predicts a binary target on real rows the generator never saw (the HOLDOUT); its ROC AUC
 * says how much of the target's relationship with the other columns the synthetic data kept.
 *
 * Classifier: L2-regularised logistic regression on one-hot codes. Loss: mean binary cross-entropy
 * + (lambda/2)||w||^2, lambda = 1/n (scikit-learn's C = 1 as a mean loss), intercept unpenalised
 * and initialised at the training base rate's log-odds; Adam (Kingma & Ba 2015; lr 0.05 decayed
 * linearly to 0), mini-batches of 512 in a seeded order, 8 epochs by default.
 *
 * Arithmetic: {@link fitLogistic} performs the float32 operations of a tfjs-core 4.22 `cpu` model
 * (one dense unit, `tf.losses.sigmoidCrossEntropy`, `tf.train.adam`) in tfjs's order, touching
 * only each row's F one-hot positions, so its weights equal that model's bit for bit
 * (test/sdk-tstr.test.ts against test/tstr-tfjs-reference.ts). Per mini-batch of m rows:
 * - logits l = x·w + b, x·w as tfjs's cpu matMul: a double sum per block of 48 positions, added
 *   into a float32 result;
 * - d loss / d l of relu(l) − l·y + log1p(exp(−|l|)) through tfjs's gradient functions (each
 *   result rounded to float32), the three paths added as (abs + mul) + relu;
 * - d/dw = xᵀ·(d/dl) per block of 48 rows (double sums added into float32), plus c·(2w) with
 *   c = float32(lambda/2); d/db the double sum of d/dl;
 * - Adam's update with tfjs's float32 constants (beta1 0.9, beta2 0.999, epsilon 1e-7) and order.
 *
 * ROC AUC by the rank-sum formula (Hanley & McNeil, Radiology 143, 1982; the Mann–Whitney U over
 * n1 n0): AUC = (R1 - n1(n1+1)/2) / (n1 n0), tied scores sharing their average rank.
 */
import type { CodeArray } from "../metadata/marginals";
import { Rng } from "../generate/sfc32";

/**
 * ROC AUC of `scores` for binary `labels` by the rank-sum formula with midranks (file header).
 * @param scores any real numbers; higher means "more likely positive".
 * @param labels 1 (or true) = positive, 0 (or false) = negative; same length as `scores`.
 * @returns AUC in [0, 1]; 0.5 for a constant score.
 * @throws RangeError when the lengths differ or either class is empty.
 */
export function rocAuc(scores: ArrayLike<number>, labels: ArrayLike<number | boolean>): number {
  const n = scores.length;
  if (labels.length !== n) throw new RangeError("scores and labels differ in length");
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => scores[a] - scores[b]);
  let n1 = 0;
  let r1 = 0;
  for (let i = 0; i < n; ) {
    let j = i;
    while (j + 1 < n && scores[order[j + 1]] === scores[order[i]]) j++;
    const midrank = (i + j) / 2 + 1; // ranks are 1-based
    for (let k = i; k <= j; k++) {
      if (labels[order[k]]) {
        n1++;
        r1 += midrank;
      }
    }
    i = j + 1;
  }
  const n0 = n - n1;
  if (n1 === 0 || n0 === 0) throw new RangeError(`ROC AUC needs both classes; got ${n1} positives and ${n0} negatives`);
  return (r1 - (n1 * (n1 + 1)) / 2) / (n1 * n0);
}

/**
 * One-vs-rest macro ROC AUC, as scikit-learn's `roc_auc_score(y_true, y_score, multi_class="ovr",
 * average="macro")` (after Provost & Domingos 2000): the unweighted mean over classes k of
 * {@link rocAuc} of `scores[k]` with class k positive. Any per-class score works.
 * @param scores one array per class k = 0..K-1, K >= 2, one score per row (higher: more likely k).
 * @param labels the true class of each row, an integer in [0, K).
 * @returns `{ auc, perClass }`: the macro average in [0, 1] and each class's AUC.
 * @throws RangeError when K < 2, lengths differ, a label is outside [0, K), or a class has no row.
 */
export function rocAucOvr(scores: readonly ArrayLike<number>[], labels: ArrayLike<number>): { auc: number; perClass: number[] } {
  const K = scores.length;
  if (K < 2) throw new RangeError("one-vs-rest ROC AUC needs at least two classes");
  const n = labels.length;
  const rows = new Array<number>(K).fill(0);
  for (let r = 0; r < n; r++) {
    const y = labels[r];
    if (!(Number.isInteger(y) && y >= 0 && y < K)) throw new RangeError(`label ${y} of row ${r} is not a class in [0, ${K})`);
    rows[y]++;
  }
  const empty = rows.findIndex((c) => c === 0);
  if (empty >= 0) throw new RangeError(`class ${empty} has no row, so its ROC AUC is undefined`);
  const perClass = scores.map((s, k) => {
    if (s.length !== n) throw new RangeError(`the scores of class ${k} differ in length from the labels`);
    return rocAuc(s, Uint8Array.from({ length: n }, (_, r) => (labels[r] === k ? 1 : 0)));
  });
  return { auc: perClass.reduce((a, b) => a + b, 0) / K, perClass };
}

/** Options of {@link fitLogistic}. */
export interface LogisticOptions {
  /** Passes over the training rows. Default 8. */
  epochs?: number;
  /** Rows per Adam step. Default 512. */
  batchSize?: number;
  /** Initial Adam learning rate, decayed linearly to 0 over the run. Default 0.05. */
  learningRate?: number;
  /** L2 penalty lambda on the weights (not the intercept). Default 1/n. */
  l2?: number;
  /** Seeds the mini-batch order. Default 0. */
  seed?: number;
}

/** A fitted logistic regression over one-hot codes. */
export interface LogisticModel {
  /** Weight of code c of feature f at `offsets[f] + c`. */
  weights: Float32Array;
  offsets: number[];
  bias: number;
  /** Logit (log-odds of the positive class) of each row of `codes` (one code array per feature). */
  logits(codes: readonly CodeArray[]): Float64Array;
}

/** What {@link fitLogistic} derives from its input and options before any step (checked). */
export interface LogisticSetup {
  n: number;
  F: number;
  epochs: number;
  batchSize: number;
  learningRate: number;
  l2: number;
  /** Start of feature f's weights: `offsets[f] = cards[0] + ... + cards[f - 1]`. */
  offsets: number[];
  dims: number;
}

/**
 * Checks a logistic regression's input and fills in {@link LogisticOptions}' defaults; shared by
 * {@link fitLogistic} and its tfjs reference (test/).
 * @throws RangeError for empty input or mismatched lengths.
 */
export function logisticSetup(codes: readonly CodeArray[], cards: readonly number[], labels: Uint8Array, opts: LogisticOptions = {}): LogisticSetup {
  const n = labels.length;
  const F = codes.length;
  if (n === 0 || F === 0) throw new RangeError("logistic regression needs at least one row and one feature");
  if (codes.some((c) => c.length !== n)) throw new RangeError("every feature needs one code per label");
  if (cards.length !== F) throw new RangeError("every feature needs a code-space size");
  const offsets: number[] = [];
  let dims = 0;
  for (const K of cards) {
    offsets.push(dims);
    dims += K;
  }
  return {
    n,
    F,
    epochs: opts.epochs ?? 8,
    batchSize: Math.min(n, opts.batchSize ?? 512),
    learningRate: opts.learningRate ?? 0.05,
    l2: opts.l2 ?? 1 / n,
    offsets,
    dims,
  };
}

/** The {@link LogisticModel} of fitted `weights` (at `offsets`) and `bias`. */
export function logisticModel(weights: Float32Array, offsets: number[], bias: number): LogisticModel {
  return {
    weights,
    offsets,
    bias,
    logits(x: readonly CodeArray[]): Float64Array {
      const rows = x[0]?.length ?? 0;
      const out = new Float64Array(rows).fill(bias);
      x.forEach((cx, f) => {
        const o = offsets[f];
        for (let r = 0; r < rows; r++) out[r] += weights[o + cx[r]];
      });
      return out;
    },
  };
}

const f32 = Math.fround;
/** tfjs-core's cpu backend multiplies matrices in blocks of this many inner-dimension entries. */
const TFJS_BLOCK = 48;
/** Adam's constants as tfjs holds them: float32 (`tf.train.adam` defaults, cpu epsilon 1e-7). */
const BETA1 = f32(0.9);
const BETA2 = f32(0.999);
const ONE_MINUS_BETA1 = f32(1 - 0.9);
const ONE_MINUS_BETA2 = f32(1 - 0.999);
const ADAM_EPSILON = f32(1e-7);

/**
 * Fits a logistic regression on one-hot encoded codes (method and arithmetic in the file header).
 * Cost O(epochs · n · F) plus O(epochs · (n / batch) · sum(cards)) for the Adam updates. Memory:
 * per row its F one-hot positions and label (16-bit, or 32-bit when sum(cards) >= 65,536), padded
 * to a multiple of 16 bytes, and an int32 of the batch order.
 * @param codes  one code array per feature, n rows each; codes of feature f in [0, cards[f]).
 * @param cards  code-space size per feature.
 * @param labels n entries, 1 = positive.
 * @throws RangeError for empty input, mismatched lengths or a code outside [0, cards[f]).
 */
export async function fitLogistic(
  codes: readonly CodeArray[],
  cards: readonly number[],
  labels: Uint8Array,
  opts: LogisticOptions = {},
): Promise<LogisticModel> {
  const { n, F, epochs, batchSize, learningRate: lr, l2, offsets, dims: d } = logisticSetup(codes, cards, labels, opts);
  // Row r at r * stride: its F one-hot positions (ascending), then its label; rows padded to 16
  // bytes so that one row is one cache-line fetch.
  const narrow = d < 0x10000;
  const stride = narrow ? Math.ceil((F + 1) / 8) * 8 : Math.ceil((F + 1) / 4) * 4;
  const flat = narrow ? new Uint16Array(n * stride) : new Int32Array(n * stride);
  for (let f = 0; f < F; f++) {
    const c = codes[f];
    const o = offsets[f];
    const K = cards[f];
    for (let r = 0; r < n; r++) {
      const v = c[r];
      if (!(v >= 0 && v < K)) throw new RangeError(`feature ${f}: code ${v} of row ${r} is outside [0, ${K})`);
      flat[r * stride + f] = o + v;
    }
  }
  let pos = 0;
  for (let r = 0; r < n; r++) {
    const y = labels[r] ? 1 : 0;
    flat[r * stride + F] = y;
    pos += y;
  }
  const rate = Math.min(Math.max(pos / n, 1e-6), 1 - 1e-6);

  // Parameters and Adam state, float32 as tfjs keeps them.
  const w = new Float32Array(d);
  let b = f32(Math.log(rate / (1 - rate)));
  const mW = new Float32Array(d);
  const vW = new Float32Array(d);
  let mB = 0;
  let vB = 0;
  let accBeta1 = BETA1;
  let accBeta2 = BETA2;
  const c = f32(0.5 * l2); // tf.mul(0.5 * l2, ...): a float32 scalar
  // Per step scratch: the gradient of each logit, the blocked sums of X^T dlogits.
  const dLogit = new Float32Array(batchSize);
  const rowsOf = narrow ? new Uint16Array(batchSize * F) : new Int32Array(batchSize * F); // the batch's rows of `flat`
  const yOf = new Uint8Array(batchSize);
  const gW = new Float32Array(d);
  const blockSum = new Float64Array(d);
  const touched = new Int32Array(d);
  const isTouched = new Uint8Array(d);
  // Blocks of x · w: position p is in block floor(p / 48); a row's ascending positions make its
  // blocks consecutive runs.
  const blockOf = new Int32Array(d);
  for (let p = 0; p < d; p++) blockOf[p] = Math.floor(p / TFJS_BLOCK);
  const rng = new Rng(opts.seed ?? 0);
  const perm = new Int32Array(n);
  for (let i = 0; i < n; i++) perm[i] = i;
  const totalSteps = epochs * Math.ceil(n / batchSize);
  let step = 0;
  for (let e = 0; e < epochs; e++) {
    rng.shuffle(perm);
    for (let start = 0; start < n; start += batchSize) {
      const m = Math.min(batchSize, n - start);
      const negLr = f32(-(lr * (1 - step++ / totalSteps)));
      const g0 = f32(1 / m); // d(mean loss) / d(loss of one row)
      // The batch's rows, gathered first (independent loads, so their cache misses overlap).
      for (let k = 0; k < m; k++) {
        const r = perm[start + k];
        const ro = r * stride;
        const ko = k * F;
        for (let f = 0; f < F; f++) rowsOf[ko + f] = flat[ro + f];
        yOf[k] = flat[ro + F];
      }
      // Forward and the gradient of each logit (sigmoidCrossEntropy's graph, backwards).
      let sumDb = 0;
      for (let k = 0; k < m; k++) {
        const ro = k * F;
        let mm = 0;
        let f = 0;
        while (f < F) {
          const block = blockOf[rowsOf[ro + f]];
          let s = 0;
          do s += w[rowsOf[ro + f++]];
          while (f < F && blockOf[rowsOf[ro + f]] === block);
          mm = f32(mm + s);
        }
        const l = f32(mm + b);
        const y = yOf[k];
        // tfjs accumulates d/dl as (abs path + mul path) + relu path
        const ex = f32(Math.exp(-Math.abs(l)));
        const dExp = f32(f32(g0 / f32(ex + 1)) * ex);
        const fromAbs = f32(-dExp * (l > 0 ? 1 : -1));
        const fromMul = f32(-g0 * y);
        const fromRelu = l > 0 ? g0 : 0;
        const g = f32(f32(fromAbs + fromMul) + fromRelu);
        dLogit[k] = g;
        sumDb += g;
      }
      const gB = f32(sumDb);
      // matMul(x, dLogit, transposeA): per block of 48 batch rows a double sum, added into float32
      gW.fill(0);
      for (let k0 = 0; k0 < m; k0 += TFJS_BLOCK) {
        let nTouched = 0;
        const k1 = Math.min(k0 + TFJS_BLOCK, m);
        for (let k = k0; k < k1; k++) {
          const ro = k * F;
          const g = dLogit[k];
          for (let f = 0; f < F; f++) {
            const p = rowsOf[ro + f];
            if (!isTouched[p]) {
              isTouched[p] = 1;
              touched[nTouched++] = p;
              blockSum[p] = 0;
            }
            blockSum[p] += g;
          }
        }
        for (let t = 0; t < nTouched; t++) {
          const p = touched[t];
          gW[p] = f32(gW[p] + blockSum[p]);
          isTouched[p] = 0;
        }
      }
      // Adam (tf.train.adam's applyGradients), weights then bias; gradient = c * 2w + data term.
      const oneMinusAcc1 = f32(1 - accBeta1);
      const oneMinusAcc2 = f32(1 - accBeta2);
      for (let p = 0; p < d; p++) {
        const g = f32(f32(c * f32(w[p] * 2)) + gW[p]);
        const m1 = f32(f32(mW[p] * BETA1) + f32(g * ONE_MINUS_BETA1));
        const v1 = f32(f32(vW[p] * BETA2) + f32(f32(g * g) * ONE_MINUS_BETA2));
        mW[p] = m1;
        vW[p] = v1;
        const mHat = f32(m1 / oneMinusAcc1);
        const vHat = f32(v1 / oneMinusAcc2);
        w[p] = f32(f32(f32(mHat / f32(f32(Math.sqrt(vHat)) + ADAM_EPSILON)) * negLr) + w[p]);
      }
      {
        const m1 = f32(f32(mB * BETA1) + f32(gB * ONE_MINUS_BETA1));
        const v1 = f32(f32(vB * BETA2) + f32(f32(gB * gB) * ONE_MINUS_BETA2));
        mB = m1;
        vB = v1;
        const mHat = f32(m1 / oneMinusAcc1);
        const vHat = f32(v1 / oneMinusAcc2);
        b = f32(f32(f32(mHat / f32(f32(Math.sqrt(vHat)) + ADAM_EPSILON)) * negLr) + b);
      }
      accBeta1 = f32(accBeta1 * BETA1);
      accBeta2 = f32(accBeta2 * BETA2);
    }
  }
  return logisticModel(w, offsets, b);
}
