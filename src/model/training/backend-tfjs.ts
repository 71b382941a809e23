/** The tfjs {@link TrainingBackend}: on the JavaScript thread; the trainer yields between steps. */
import * as tf from "@tensorflow/tfjs-core";
import { Adam } from "./adam";
import {
  type GeneratorSpec,
  type NamedArrays,
  type NamedTensors,
  disposeAll,
  disposeSegments,
  featureSoftmax,
  forward,
  makeSegments,
  type Segments,
  toArrays,
  toTensors,
  trainableVariables,
  type TrainableVariables,
} from "../generator/generator";
import { cloneAll, cloneTfjsGenerator, type GeneratorModel } from "../generator/model";
import {
  addSums,
  disposeTargetTensors,
  entropyPenalty,
  lossFromSums,
  type MarginalSums,
  marginalLoss,
  marginalSums,
  type TargetTensors,
  targetTensors,
} from "./loss";
import type { Layout } from "../generator/targets";
import { flattenParams } from "../compute/native-core";
import type { AveragedWeights, BackendInputs, OptimizerState, TrainingBackend } from "./backend";
import { ENTROPY_PENALTY, EVAL_CHUNK, VAL_SIZE } from "./settings";

/** The tfjs compute path: variables, Adam, target tensors, validation latents, best copy. */
export class TfjsBackend implements TrainingBackend {
  readonly kind = "tfjs" as const;
  readonly device = "cpu";
  private readonly vars: Record<string, tf.Variable>;
  private readonly gradsByName: TrainableVariables["gradsByName"];
  private readonly adam: Adam;
  private readonly targets: TargetTensors;
  private readonly segments: Segments;
  private readonly valLatents: tf.Tensor2D;
  private best: NamedTensors | null;

  /** From the optimizer's `weights`, `adam` state (resumed, else fresh), `best` and `val`. */
  private readonly spec: GeneratorSpec;
  private readonly layout: Layout;

  constructor({ spec, layout, targets, weights, adam, best, val }: BackendInputs) {
    this.spec = spec;
    this.layout = layout;
    const trainable = trainableVariables(spec, weights);
    this.vars = trainable.vars;
    this.gradsByName = trainable.gradsByName;
    this.adam = new Adam(trainable.vars, adam);
    this.targets = targetTensors(targets);
    this.segments = makeSegments(layout);
    this.valLatents = tf.tensor2d(val, [VAL_SIZE, spec.embeddingDim]);
    this.best = best === null ? null : toTensors(spec, best);
  }

  get lossForm(): "gram" | "blocks" {
    return this.targets.mode;
  }

  async trainStep(z: Float32Array, batch: number, lr: number): Promise<number> {
    return tf.tidy(() => {
      const zt = tf.tensor2d(z, [batch, this.spec.embeddingDim]);
      let kl: tf.Scalar | null = null;
      const { grads } = tf.variableGrads(() => {
        const probs = featureSoftmax(forward(this.spec, this.vars, zt), this.segments);
        kl = tf.keep(marginalLoss(probs, this.targets));
        return tf.add(kl, entropyPenalty(probs, this.targets, ENTROPY_PENALTY)) as tf.Scalar;
      }, Object.values(this.vars));
      const klTensor = kl as unknown as tf.Scalar;
      const loss = klTensor.dataSync()[0];
      klTensor.dispose();
      if (!Number.isFinite(loss)) return loss;
      this.adam.step(this.vars, this.gradsByName(grads), lr);
      return loss;
    });
  }

  async latestFlat(): Promise<Float32Array> {
    return flattenParams(this.spec, toArrays(this.vars));
  }

  async validationLoss(ema: AveragedWeights): Promise<number> {
    return tf.tidy(() => {
      const params = toTensors(this.spec, ema.named);
      let sums: MarginalSums | null = null;
      for (let r0 = 0; r0 < VAL_SIZE; r0 += EVAL_CHUNK) {
        const n = Math.min(EVAL_CHUNK, VAL_SIZE - r0);
        const z = tf.slice(this.valLatents, [r0, 0], [n, this.spec.embeddingDim]);
        const s = marginalSums(featureSoftmax(forward(this.spec, params, z), this.segments), this.targets);
        sums = sums === null ? s : addSums(sums, s);
      }
      return lossFromSums(sums as NonNullable<typeof sums>, VAL_SIZE, this.targets).dataSync()[0];
    });
  }

  keepBest(ema: AveragedWeights): void {
    disposeAll(this.best);
    this.best = toTensors(this.spec, ema.named);
  }

  bestWeights(): NamedArrays | null {
    return this.best === null ? null : toArrays(this.best);
  }

  state(): OptimizerState {
    return { weights: toArrays(this.vars), adam: this.adam.state() };
  }

  async stateInSlices(): Promise<OptimizerState> {
    return this.state();
  }

  generator(best: boolean): GeneratorModel {
    const params = best && this.best !== null ? this.best : (this.vars as NamedTensors);
    return { spec: this.spec, layout: this.layout, params };
  }

  async snapshot(best: boolean): Promise<GeneratorModel | null> {
    // tfjs computes on this thread: nothing is in flight; clones share the tensors' buffers.
    return cloneTfjsGenerator(this.generator(best));
  }

  finish(): GeneratorModel {
    const params = cloneAll(this.best ?? this.vars);
    const model = { spec: this.spec, layout: this.layout, params };
    this.dispose();
    return model;
  }

  dispose(): void {
    disposeAll(this.vars);
    disposeAll(this.best);
    this.best = null;
    this.adam.dispose();
    disposeTargetTensors(this.targets);
    disposeSegments(this.segments);
    this.valLatents.dispose();
  }
}
