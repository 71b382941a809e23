/**
 * Tensor helpers shared by the generator and the loss. {@link matMul}'s gradient uses explicit
 * transposes: tfjs's own uses `transposeA`/`transposeB` flags, which the wasm backend serves
 * 10–40x slower than a plain product; transposing first is exact and fast everywhere.
 */
import * as tf from "@tensorflow/tfjs-core";

const fastMatMul = tf.customGrad(((a: tf.Tensor2D, b: tf.Tensor2D, save: tf.GradSaveFunc) => {
  save([a, b]);
  return {
    value: tf.matMul(a, b),
    gradFunc: (dy: tf.Tensor2D, saved: tf.Tensor[]) => {
      const [sa, sb] = saved as tf.Tensor2D[];
      return [tf.matMul(dy, tf.transpose(sb)), tf.matMul(tf.transpose(sa), dy)];
    },
  };
}) as unknown as Parameters<typeof tf.customGrad>[0]);

/** A [m, k] x B [k, n] -> [m, n], differentiable in both (see the module comment). */
export function matMul(a: tf.Tensor2D, b: tf.Tensor2D): tf.Tensor2D {
  return fastMatMul(a, b) as tf.Tensor2D;
}

/** A^T B for A [k, m], B [k, n] -> [m, n], via an explicit transpose. */
export function matMulTransA(a: tf.Tensor2D, b: tf.Tensor2D): tf.Tensor2D {
  return matMul(tf.transpose(a), b);
}

/** x [m, k] times a constant c [k, n], given also c^T [n, k]: the gradient dx = dy c^T is plain. */
export function matMulConst(x: tf.Tensor2D, c: tf.Tensor2D, cT: tf.Tensor2D): tf.Tensor2D {
  const f = tf.customGrad(((a: tf.Tensor2D, save: tf.GradSaveFunc) => {
    save([]);
    return { value: tf.matMul(a, c), gradFunc: (dy: tf.Tensor2D) => [tf.matMul(dy, cT)] };
  }) as unknown as Parameters<typeof tf.customGrad>[0]);
  return f(x) as tf.Tensor2D;
}

/** The Gram matrix P^T P [D, D] of P [n, D]; gradient dP = P (dG + dG^T) as plain products. */
export const gram = tf.customGrad(((p: tf.Tensor2D, save: tf.GradSaveFunc) => {
  save([p]);
  return {
    value: tf.matMul(tf.transpose(p), p),
    gradFunc: (dy: tf.Tensor2D, saved: tf.Tensor[]) => [tf.matMul(saved[0] as tf.Tensor2D, tf.add(dy, tf.transpose(dy)))],
  };
}) as unknown as Parameters<typeof tf.customGrad>[0]) as (p: tf.Tensor2D) => tf.Tensor2D;
