/**
 * The tfjs implementation of `fitLogistic` as it was before `src/sdk/evaluate/tstr.ts` computed the same
 * steps in plain JavaScript (kept verbatim, renamed `fitLogisticTfjs`): the reference the tests
 * compare the plain implementation against, weight for weight and bit for bit.
 *
 * One dense unit on one-hot inputs (tfjs-core 4.22, `cpu` backend), mean binary cross-entropy
 * (`tf.losses.sigmoidCrossEntropy`) + (l2/2)||w||^2, Adam (`tf.train.adam`) with the learning
 * rate decayed linearly to 0, mini-batches in a seeded order.
 */
import type * as TF from "@tensorflow/tfjs-core";
import type { CodeArray } from "../src/sdk/metadata/marginals";
import { Rng } from "../src/sdk/generate/sfc32";
import { logisticModel, logisticSetup, type LogisticModel, type LogisticOptions } from "../src/sdk/evaluate/tstr";

let tfLoaded: Promise<typeof TF> | undefined;

/** Loads tfjs-core with its gradients (registered by tfjs-layers) and the cpu backend, once. */
function loadTf(): Promise<typeof TF> {
  tfLoaded ??= (async () => {
    const tf = await import("@tensorflow/tfjs-core");
    await import("@tensorflow/tfjs-layers"); // registers the gradient functions
    await import("@tensorflow/tfjs-backend-cpu");
    tf.env().set("PROD", true); // no "install tfjs-node" banner, no debug checks
    return tf;
  })();
  return tfLoaded;
}

/**
 * Fits a logistic regression on one-hot encoded codes (method in the file header).
 * @param codes  one code array per feature, n rows each; codes of feature f in [0, cards[f]).
 * @param cards  code-space size per feature.
 * @param labels n entries, 1 = positive.
 * @throws RangeError as `logisticSetup` (empty input, mismatched lengths).
 */
export async function fitLogisticTfjs(
  codes: readonly CodeArray[],
  cards: readonly number[],
  labels: Uint8Array,
  opts: LogisticOptions = {},
): Promise<LogisticModel> {
  // Input checks, option defaults and weight layout are fitLogistic's own (not what this oracle checks).
  const { n, F, epochs, batchSize, learningRate: lr, l2, offsets, dims: d } = logisticSetup(codes, cards, labels, opts);
  const flat = new Int32Array(n * F);
  for (let f = 0; f < F; f++) {
    const c = codes[f];
    const o = offsets[f];
    for (let r = 0; r < n; r++) flat[r * F + f] = o + c[r];
  }
  let pos = 0;
  for (let r = 0; r < n; r++) pos += labels[r] ? 1 : 0;
  const rate = Math.min(Math.max(pos / n, 1e-6), 1 - 1e-6);

  const tf = await loadTf();
  const previous = tf.engine().backendName;
  await tf.setBackend("cpu");
  await tf.ready();
  const w = tf.variable(tf.zeros([d, 1]), true, undefined, "float32");
  const b = tf.variable(tf.scalar(Math.log(rate / (1 - rate))), true);
  const opt = tf.train.adam(lr);
  const rng = new Rng(opts.seed ?? 0);
  const perm = Int32Array.from({ length: n }, (_, i) => i);
  const xb = new Float32Array(batchSize * d);
  const totalSteps = epochs * Math.ceil(n / batchSize);
  let step = 0;
  const yb = new Float32Array(batchSize);
  try {
    for (let e = 0; e < epochs; e++) {
      rng.shuffle(perm);
      for (let start = 0; start < n; start += batchSize) {
        const m = Math.min(batchSize, n - start);
        // linear decay to 0 over the run, so the last steps settle at the optimum
        (opt as unknown as { learningRate: number }).learningRate = lr * (1 - step++ / totalSteps);
        xb.fill(0, 0, m * d);
        for (let k = 0; k < m; k++) {
          const r = perm[start + k];
          for (let f = 0; f < F; f++) xb[k * d + flat[r * F + f]] = 1;
          yb[k] = labels[r] ? 1 : 0;
        }
        tf.tidy(() => {
          const x = tf.tensor2d(xb.subarray(0, m * d), [m, d]);
          const y = tf.tensor2d(yb.subarray(0, m), [m, 1]);
          opt.minimize(() => {
            const logits = tf.add(tf.matMul(x, w), b);
            const bce = tf.losses.sigmoidCrossEntropy(y, logits);
            return tf.add(bce, tf.mul(0.5 * l2, tf.sum(tf.square(w)))) as TF.Scalar;
          });
        });
      }
    }
    return logisticModel(Float32Array.from(w.dataSync()), offsets, b.dataSync()[0]);
  } finally {
    w.dispose();
    b.dispose();
    opt.dispose();
    if (previous && previous !== "cpu") await tf.setBackend(previous);
  }
}
