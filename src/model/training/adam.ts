/**
 * Adam (Kingma & Ba, "Adam: A Method for Stochastic Optimization", ICLR 2015), written out so that
 * its state (t, m, v) is plain named float32 data in checkpoints.
 *
 * For every parameter w with gradient g, at step t = 1, 2, ...:
 *   m <- beta1 m + (1 - beta1) g
 *   v <- beta2 v + (1 - beta2) g^2
 *   w <- w - lr * (m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + eps)
 * with beta1 = 0.9, beta2 = 0.999, eps = 1e-8 (Algorithm 1 of the paper; no weight decay).
 * `lr` is given per step (the schedule of `schedule.ts`).
 */
import * as tf from "@tensorflow/tfjs-core";
import type { NamedArrays, NamedTensors } from "../generator/generator";

/** Adam's hyper-parameters (the paper's defaults). */
export const ADAM = { beta1: 0.9, beta2: 0.999, epsilon: 1e-8 } as const;

/** Checkpointable Adam state: step count and first/second moments per parameter name. */
export interface AdamState {
  t: number;
  m: NamedArrays;
  v: NamedArrays;
}

/** Adam over a fixed set of named `tf.Variable`s. */
export class Adam {
  /** Steps taken so far. */
  t: number;
  private readonly m: Record<string, tf.Variable>;
  private readonly v: Record<string, tf.Variable>;

  /** `params`: the variables to update, by parameter name; `state`: restored, else zero (t = 0). */
  constructor(params: Record<string, tf.Variable>, state?: AdamState) {
    this.t = state?.t ?? 0;
    this.m = {};
    this.v = {};
    for (const [name, p] of Object.entries(params)) {
      const m0 = state?.m[name];
      const v0 = state?.v[name];
      const mi = m0 ? tf.tensor(m0, p.shape) : tf.zerosLike(p);
      const vi = v0 ? tf.tensor(v0, p.shape) : tf.zerosLike(p);
      this.m[name] = tf.variable(mi, false);
      this.v[name] = tf.variable(vi, false);
      mi.dispose();
      vi.dispose();
    }
  }

  /** One update of every variable in `params` that has a gradient in `grads`, at rate `lr`. */
  step(params: Record<string, tf.Variable>, grads: NamedTensors, lr: number): void {
    this.t += 1;
    const { beta1, beta2, epsilon } = ADAM;
    const c1 = 1 - beta1 ** this.t;
    const c2 = 1 - beta2 ** this.t;
    tf.tidy(() => {
      for (const [name, w] of Object.entries(params)) {
        const g = grads[name];
        if (g === undefined) continue;
        const m = tf.add(tf.mul(this.m[name], beta1), tf.mul(g, 1 - beta1));
        const v = tf.add(tf.mul(this.v[name], beta2), tf.mul(tf.square(g), 1 - beta2));
        this.m[name].assign(m);
        this.v[name].assign(v);
        const update = tf.div(tf.mul(m, lr / c1), tf.add(tf.sqrt(tf.div(v, c2)), epsilon));
        w.assign(tf.sub(w, update));
      }
    });
  }

  /** A copy of the state as plain arrays. */
  state(): AdamState {
    const m: NamedArrays = {};
    const v: NamedArrays = {};
    for (const name of Object.keys(this.m)) {
      m[name] = Float32Array.from(this.m[name].dataSync() as Float32Array);
      v[name] = Float32Array.from(this.v[name].dataSync() as Float32Array);
    }
    return { t: this.t, m, v };
  }

  /** Frees the moment tensors. */
  dispose(): void {
    for (const x of Object.values(this.m)) x.dispose();
    for (const x of Object.values(this.v)) x.dispose();
  }
}
