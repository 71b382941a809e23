/** The compute half of a {@link Trainer}: tfjs (backend-tfjs.ts) or native (backend-native.ts). */
import type { ComputeKind } from "../compute/kind";
import type { GeneratorSpec, NamedArrays } from "../generator/generator";
import type { GeneratorModel } from "../generator/model";
import type { Layout, MarginalTargets } from "../generator/targets";
import type { AdamState } from "./adam";
import type { YieldFn } from "./slices";

/** The trainer's weight average: one flat vector (`paramShapes` order) and named views into it. */
export interface AveragedWeights {
  flat: Float32Array;
  named: NamedArrays;
}

/** The latest weights and Adam's state, as a checkpoint stores them. */
export interface OptimizerState {
  weights: NamedArrays;
  adam: AdamState;
}

/** What a backend starts from, on either compute path. */
export interface BackendInputs {
  /** The generator's architecture and the layout of its features' codes. */
  spec: GeneratorSpec;
  layout: Layout;
  /** The loss targets (`targets.ts` `buildTargets`). */
  targets: MarginalTargets;
  /** The weights to train from: fresh, or the checkpoint's latest (copied in). */
  weights: NamedArrays;
  /** Adam's state when resumed, else undefined (a fresh optimiser). */
  adam: AdamState | undefined;
  /** The best weights so far when resumed (copied), else null. */
  best: NamedArrays | null;
  /** The fixed validation latents: VAL_SIZE x E, row-major. */
  val: Float32Array;
}

/** One compute path of the trainer. */
export interface TrainingBackend {
  readonly kind: ComputeKind;
  /** The device it computes on: `cpu` or the GPU's name. */
  readonly device: string;
  /** How the 2-way marginals are computed (`gram` or `blocks`, see loss.ts). */
  readonly lossForm: "gram" | "blocks";
  /** One optimizer step on `z` (`batch` x E) at rate `lr`: the batch loss (NaN: no update). */
  trainStep(z: Float32Array, batch: number, lr: number): Promise<number>;
  /** The optimizer's latest weights, flat (native: a reused buffer, valid until the next copy). */
  latestFlat(): Promise<Float32Array>;
  /** The averaged weights' validation loss (`latest`: the optimizer's flat weights if at hand). */
  validationLoss(ema: AveragedWeights, latest?: Float32Array): Promise<number>;
  /** Keeps the averaged weights as the best ones. */
  keepBest(ema: AveragedWeights): void;
  /** The best weights as arrays, or null when there are none yet. */
  bestWeights(): NamedArrays | null;
  /** The latest weights and Adam's state, copied out now (no step may be in flight). */
  state(): OptimizerState;
  /** {@link state} for a thread serving other models: in pieces, with `yieldFn` between them. */
  stateInSlices(yieldFn?: YieldFn): Promise<OptimizerState>;
  /** A view of the latest or best weights for generation, owned by the backend. */
  generator(best: boolean): GeneratorModel;
  /** A generator the caller owns with a copy of the latest or best weights; null if disposed. */
  snapshot(best: boolean): Promise<GeneratorModel | null>;
  /** Ends training: the best (else latest) weights as a generator the caller owns; frees all. */
  finish(): GeneratorModel;
  /** Frees every tensor and native buffer. */
  dispose(): void;
}
