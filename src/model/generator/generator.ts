/**
 * The generator G: latent z (E = `embedding_dim`) -> residual MLP -> one softmax per feature (the
 * generator of GEM, Liu, Vietri & Wu, "Iterative Methods for Private Synthetic Data: Unifying
 * Framework and New Methods", NeurIPS 2021).
 *
 * Hidden layers per {@link MODEL_SIZES}, every one after the first a pre-norm residual block
 * (LayerNorm, Ba, Kiros & Hinton 2016), one H x H product per hidden layer (docs/decisions.md
 * "Model sizes"). Width H, L = layers - 1 residual blocks, D = sum_f K_f:
 *
 *   h_0     = relu(z W_in + b_in)                               (B x H)
 *   h_{l+1} = h_l + relu(LN_l(h_l) W_l + b_l)                   (l = 0 .. L-1)
 *   logits  = h_L W_out + b_out                                 (B x D)
 *   p_f     = softmax(logits[:, offset_f : offset_f + K_f])     (one distribution per feature)
 *
 * LN(x) = gamma * (x - mean(x)) / sqrt(var(x) + 1e-5) + beta over the H units of a row. There is
 * no LayerNorm before the output layer: with one the generator sat on the independent-marginals
 * solution for hundreds of steps (docs/compute.md).
 *
 * Parameters are named float32 arrays, plain data a C++ core can load. A linear map is
 * `y = x W + b` with W row-major [fan_in, fan_out]. Names and shapes in order
 * ({@link paramShapes}), l = 0 .. L-1:
 *   in.W [E,H], in.b [H],
 *   block{l}.ln.gamma [H], block{l}.ln.beta [H], block{l}.fc.W [H,H], block{l}.fc.b [H],
 *   out.W [H,D], out.b [D].
 *
 * Initialisation: every W and b ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)) (PyTorch's `nn.Linear`
 * default), gamma = 1, beta = 0, from a stream seeded by the model id. The output bias is NOT set
 * to the log 1-way marginals: that start collapses onto the independent-marginals solution.
 */
import * as tf from "@tensorflow/tfjs-core";
import type { ModelSize } from "../../contract";
import type { Layout } from "./targets";
import { matMul, matMulConst } from "../compute/ops";
import type { Rng } from "../sampling/xoshiro";

/** Width and number of hidden layers per `model_size` (docs/decisions.md "Model sizes"). */
export const MODEL_SIZES: Record<ModelSize, { hidden: number; layers: number }> = {
  small: { hidden: 256, layers: 2 },
  medium: { hidden: 512, layers: 2 },
  large: { hidden: 1024, layers: 3 },
};

/** LayerNorm variance epsilon. */
export const LN_EPS = 1e-5;

/** The shape of a generator: E, H, L and D. */
export interface GeneratorSpec {
  embeddingDim: number;
  hidden: number;
  /** Residual blocks: the hidden layers after the first. */
  blocks: number;
  /** D = sum_f K_f. */
  outputDim: number;
}

/** The spec for a model size, embedding dimension and layout. */
export function generatorSpec(size: ModelSize, embeddingDim: number, layout: Layout): GeneratorSpec {
  const { hidden, layers } = MODEL_SIZES[size];
  return { embeddingDim, hidden, blocks: layers - 1, outputDim: layout.width };
}

/** Named float32 arrays (weights, Adam moments): name -> values, shaped by {@link paramShapes}. */
export type NamedArrays = Record<string, Float32Array>;

/** Named tensors with the same names. */
export type NamedTensors = Record<string, tf.Tensor>;

/** Parameter names and shapes in canonical order (see the module comment). */
export function paramShapes(spec: GeneratorSpec): [string, number[]][] {
  const { embeddingDim: E, hidden: H, blocks: L, outputDim: D } = spec;
  const out: [string, number[]][] = [
    ["in.W", [E, H]],
    ["in.b", [H]],
  ];
  for (let l = 0; l < L; l++) {
    out.push(
      [`block${l}.ln.gamma`, [H]],
      [`block${l}.ln.beta`, [H]],
      [`block${l}.fc.W`, [H, H]],
      [`block${l}.fc.b`, [H]],
    );
  }
  out.push(["out.W", [H, D]], ["out.b", [D]]);
  return out;
}

/** Number of scalar parameters. */
export function paramCount(spec: GeneratorSpec): number {
  return paramShapes(spec).reduce((s, [, shape]) => s + shape.reduce((a, b) => a * b, 1), 0);
}

/** Fresh parameters (see the module comment for the distribution), drawn in canonical order. */
export function initParams(spec: GeneratorSpec, rng: Rng): NamedArrays {
  const out: NamedArrays = {};
  const fanIn: Record<string, number> = {};
  for (const [name, shape] of paramShapes(spec)) if (name.endsWith(".W")) fanIn[name.slice(0, -2)] = shape[0];
  for (const [name, shape] of paramShapes(spec)) {
    const a = new Float32Array(shape.reduce((x, y) => x * y, 1));
    if (name.endsWith(".gamma")) a.fill(1);
    else if (name.endsWith(".beta")) a.fill(0);
    else {
      const bound = 1 / Math.sqrt(fanIn[name.slice(0, name.lastIndexOf("."))]);
      rng.fillUniform(a);
      for (let i = 0; i < a.length; i++) a[i] = (2 * a[i] - 1) * bound;
    }
    out[name] = a;
  }
  return out;
}

/** Checks that `arrays` holds exactly the parameters of `spec`, each of the right size. */
export function checkParams(spec: GeneratorSpec, arrays: NamedArrays): void {
  for (const [name, shape] of paramShapes(spec)) {
    const a = arrays[name];
    const size = shape.reduce((x, y) => x * y, 1);
    if (!(a instanceof Float32Array) || a.length !== size) {
      throw new RangeError(`parameter ${name} missing or not of size ${size}`);
    }
  }
}

function layerNorm(x: tf.Tensor2D, gamma: tf.Tensor, beta: tf.Tensor): tf.Tensor2D {
  const { mean, variance } = tf.moments(x, -1, true);
  return tf.add(tf.mul(tf.div(tf.sub(x, mean), tf.sqrt(tf.add(variance, LN_EPS))), gamma), beta) as tf.Tensor2D;
}

/** Logits of G for latents `z` [B, E] -> [B, D], differentiable in `params`. Call in `tf.tidy`. */
export function forward(spec: GeneratorSpec, params: NamedTensors, z: tf.Tensor2D): tf.Tensor2D {
  let h = tf.relu(tf.add(matMul(z, params["in.W"] as tf.Tensor2D), params["in.b"])) as tf.Tensor2D;
  for (let l = 0; l < spec.blocks; l++) {
    const p = `block${l}.`;
    const u = layerNorm(h, params[p + "ln.gamma"], params[p + "ln.beta"]);
    h = tf.add(h, tf.relu(tf.add(matMul(u, params[p + "fc.W"] as tf.Tensor2D), params[p + "fc.b"]))) as tf.Tensor2D;
  }
  return tf.add(matMul(h, params["out.W"] as tf.Tensor2D), params["out.b"]) as tf.Tensor2D;
}

/** Selectors for {@link featureSoftmax}: S [D, F] (S[k, f] = 1 if column k is f's) and S^T. */
export interface Segments {
  layout: Layout;
  select: tf.Tensor2D;
  spread: tf.Tensor2D;
}

/** Builds the {@link Segments} of a layout. */
export function makeSegments(layout: Layout): Segments {
  const D = layout.width;
  const F = layout.features.length;
  const s = new Float32Array(D * F);
  const t = new Float32Array(F * D);
  for (let f = 0; f < F; f++) {
    for (let k = layout.offsets[f]; k < layout.offsets[f + 1]; k++) {
      s[k * F + f] = 1;
      t[f * D + k] = 1;
    }
  }
  return { layout, select: tf.tensor2d(s, [D, F]), spread: tf.tensor2d(t, [F, D]) };
}

/** Frees the tensors of {@link makeSegments}. */
export function disposeSegments(s: Segments): void {
  s.select.dispose();
  s.spread.dispose();
}

/**
 * Per-feature softmax of logits [B, D] -> probabilities [B, D], differentiable:
 * p = e / ((e S) S^T), e = exp(logits - m), m each row's per-feature maximum as a constant
 * (shift-invariant, so the gradient is exact); cheaper on wasm than a softmax per feature.
 */
export function featureSoftmax(logits: tf.Tensor2D, seg: Segments): tf.Tensor2D {
  const { offsets, width: D } = seg.layout;
  const F = offsets.length - 1;
  const n = logits.shape[0];
  const x = logits.dataSync() as Float32Array;
  const m = new Float32Array(n * D);
  for (let r = 0; r < n; r++) {
    const o = r * D;
    for (let f = 0; f < F; f++) {
      let mx = -Infinity;
      for (let k = o + offsets[f]; k < o + offsets[f + 1]; k++) if (x[k] > mx) mx = x[k];
      m.fill(mx, o + offsets[f], o + offsets[f + 1]);
    }
  }
  const e = tf.exp(tf.sub(logits, tf.tensor2d(m, [n, D])));
  const z = matMulConst(matMulConst(e as tf.Tensor2D, seg.select, seg.spread), seg.spread, seg.select);
  return tf.div(e, z) as tf.Tensor2D;
}

/** Uploads named arrays as tensors with the shapes of `spec`. */
export function toTensors(spec: GeneratorSpec, arrays: NamedArrays): NamedTensors {
  const out: NamedTensors = {};
  for (const [name, shape] of paramShapes(spec)) out[name] = tf.tensor(arrays[name], shape, "float32");
  return out;
}

/** The generator's weights as trainable tfjs variables (see {@link trainableVariables}). */
export interface TrainableVariables {
  /** One variable per parameter name, shaped as `paramShapes(spec)`. */
  vars: Record<string, tf.Variable>;
  /** Re-keys a gradient map from `tf.variableGrads` by parameter name, as `Adam.step` takes it. */
  gradsByName(grads: tf.NamedTensorMap): NamedTensors;
}

/** Named arrays as trainable float32 variables shaped as `spec`. @throws Error on a bad length. */
export function trainableVariables(spec: GeneratorSpec, arrays: NamedArrays): TrainableVariables {
  const vars: Record<string, tf.Variable> = {};
  const names = new Map<string, string>();
  for (const [name, shape] of paramShapes(spec)) {
    const init = tf.tensor(arrays[name], shape, "float32");
    const v = tf.variable(init, true);
    init.dispose(); // the variable holds its own reference to the buffer
    vars[name] = v;
    names.set(v.name, name);
  }
  return {
    vars,
    gradsByName(grads) {
      const out: NamedTensors = {};
      for (const [vname, g] of Object.entries(grads)) out[names.get(vname) as string] = g;
      return out;
    },
  };
}

/** Downloads named tensors into fresh float32 arrays. */
export function toArrays(tensors: NamedTensors): NamedArrays {
  const out: NamedArrays = {};
  for (const [name, t] of Object.entries(tensors)) out[name] = Float32Array.from(t.dataSync() as Float32Array);
  return out;
}

/** Disposes every tensor of a named set. */
export function disposeAll(tensors: NamedTensors | null | undefined): void {
  if (tensors) for (const t of Object.values(tensors)) t.dispose();
}
