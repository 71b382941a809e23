/** A generator ready to run forward ({@link GeneratorModel}) on either path; free and copy. */
import * as tf from "@tensorflow/tfjs-core";
import type { NativeGenerator } from "../compute/native-generator";
import { disposeAll, type GeneratorSpec, type NamedTensors } from "./generator";
import type { Layout } from "./targets";

/**
 * A generator ready to run forward: shape, code layout and weights (owned by whoever made it):
 * `params` on the tfjs path, `native` on the native path. Free it with {@link disposeGenerator}.
 */
export interface GeneratorModel {
  spec: GeneratorSpec;
  layout: Layout;
  params: NamedTensors;
  /** The native core holding the weights (compute `native`), else undefined. */
  native?: NativeGenerator;
}

/** Frees a generator's weights on whichever path holds them. */
export function disposeGenerator(model: GeneratorModel): void {
  disposeAll(model.params);
  model.native?.dispose();
}

/**
 * A tfjs generator's own copy (cloned tensors, sharing buffers until written), which outlives the
 * original. Free it with {@link disposeGenerator}. A native core is not copied: the copy has none.
 */
export function cloneTfjsGenerator(model: GeneratorModel): GeneratorModel {
  return { spec: model.spec, layout: model.layout, params: cloneAll(model.params) };
}

/** Every tensor of `src` cloned (the clones share the buffers until either side is written). */
export function cloneAll(src: NamedTensors): NamedTensors {
  const out: NamedTensors = {};
  for (const [name, t] of Object.entries(src)) out[name] = tf.clone(t);
  return out;
}
