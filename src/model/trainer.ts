/**
 * Training of the generator on a statistical description (DESIGN §2, "Server side").
 *
 * - An epoch is {@link STEPS_PER_EPOCH} optimizer steps (there are no rows to pass over). Each
 *   step draws `batch_size` fresh latents z ~ N(0, I_E) from the model's training stream (plus
 *   N(0, privacy_noise^2) noise when `privacy_enabled`), computes the marginal-matching loss
 *   (`loss.ts`) and takes one Adam step (`adam.ts`) at the scheduled rate (`schedule.ts`).
 * - `train_loss` = mean batch loss over the epoch; `val_loss` = the same loss on a fixed set of
 *   {@link VAL_SIZE} latents (its own seeded stream, never used for training).
 * - Early stopping on `val_loss`: an epoch improves when `val < best - MIN_REL_IMPROVEMENT * |best|`;
 *   training stops after `early_stop_patience` epochs in a row without improvement.
 *   `early_stop_patience = 0` disables early stopping.
 * - Training also stops at `max_epochs`, or when the training time (summed across restarts; the
 *   time since the last checkpoint of a crashed run is lost) reaches `max_training_time` seconds;
 *   the running epoch then ends early. All three end in `ready`, with the best-val weights.
 * - Seeded streams (rng.ts), all derived from the model id: `"<id>:init"` (initial weights),
 *   `"<id>:train"` (training latents; its state is checkpointed), `"<id>:val"` (validation set).
 */
import * as tf from "@tensorflow/tfjs-core";
import type { Metadata, ModelConfig } from "../types";
import { Adam } from "./adam";
import { initBackend } from "./backend";
import { type Checkpoint, decodeCheckpoint, encodeCheckpoint, type TrainingState } from "./checkpoint";
import {
  type GeneratorSpec,
  type NamedArrays,
  type NamedTensors,
  disposeAll,
  disposeSegments,
  featureSoftmax,
  forward,
  generatorSpec,
  initParams,
  makeSegments,
  paramShapes,
  type Segments,
  toArrays,
  toTensors,
} from "./generator";
import {
  addSums,
  disposeTargetTensors,
  lossFromSums,
  type MarginalSums,
  marginalLoss,
  marginalSums,
  type TargetTensors,
  targetTensors,
} from "./loss";
import { buildTargets, type Layout } from "./marginals";
import { Rng } from "./rng";
import { learningRate, makeSchedule, type Schedule } from "./schedule";

/** Optimizer steps per epoch. */
export const STEPS_PER_EPOCH = 50;
/** Latents in the fixed validation set. */
export const VAL_SIZE = 4096;
/** Rows per forward pass when evaluating the validation set. */
export const EVAL_CHUNK = 1024;
/** Relative decrease of `val_loss` that counts as an improvement for early stopping. */
export const MIN_REL_IMPROVEMENT = 1e-4;

/** Why training ended. */
export type StopReason = "max_epochs" | "early_stop" | "time_limit";

/** Thrown when training cannot continue (non-finite loss). */
export class TrainingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TrainingError";
  }
}

/** What one epoch produced. */
export interface EpochReport {
  /** Completed epochs (1 after the first). */
  epoch: number;
  /** Optimizer steps so far. */
  step: number;
  trainLoss: number;
  valLoss: number;
  improved: boolean;
  /** Training seconds so far (summed over restarts). */
  elapsedS: number;
  /** Milliseconds per optimizer step in this epoch (excluding validation). */
  msPerStep: number;
  /** Set when this was the last epoch. */
  done: StopReason | null;
}

/** A generator ready to run forward: shape, code layout and weights (owned by whoever made it). */
export interface GeneratorModel {
  spec: GeneratorSpec;
  layout: Layout;
  params: NamedTensors;
}

/** Options of {@link Trainer.create}. */
export interface TrainerOptions {
  /** Model id: seeds every stream. */
  id: string;
  metadata: Metadata;
  config: ModelConfig;
  /** Resume from this checkpoint (else start fresh). */
  checkpoint?: Checkpoint;
  /** Override of {@link STEPS_PER_EPOCH} for a fresh run (tests, benchmarks). */
  stepsPerEpoch?: number;
}

/** Options of {@link Trainer.runEpoch}. */
export interface EpochOptions {
  /** Awaited between steps so other work on the thread can run (e.g. `setImmediate`). */
  yieldFn?: () => Promise<void>;
  /** Polled between steps; when true the epoch is abandoned and `runEpoch` returns null. */
  shouldAbort?: () => boolean;
}

function cloneAll(src: NamedTensors): NamedTensors {
  const out: NamedTensors = {};
  for (const [name, t] of Object.entries(src)) out[name] = tf.clone(t);
  return out;
}

/** Owns a generator's variables, its Adam state, targets and the early-stopping bookkeeping. */
export class Trainer {
  readonly spec: GeneratorSpec;
  readonly layout: Layout;
  readonly config: ModelConfig;
  readonly schedule: Schedule;
  readonly stepsPerEpoch: number;
  epoch = 0;
  step = 0;
  elapsedS = 0;
  trainLoss: number | null = null;
  valLoss: number | null = null;
  bestValLoss: number | null = null;
  bestEpoch = 0;
  epochsSinceImprovement = 0;

  private readonly vars: Record<string, tf.Variable>;
  private readonly varNames: Map<string, string>;
  private readonly adam: Adam;
  private readonly targets: TargetTensors;
  private readonly segments: Segments;
  private readonly valLatents: tf.Tensor2D;
  private rng: Rng;
  private best: NamedTensors | null = null;
  private disposed = false;

  private constructor(opts: TrainerOptions, state: TrainingState | null) {
    const targets = buildTargets(opts.metadata);
    this.layout = targets.layout;
    this.config = opts.config;
    this.spec = generatorSpec(opts.config.model_size, opts.config.embedding_dim, this.layout);
    const noise = opts.config.privacy_enabled ? opts.config.privacy_noise : 0;
    const E = this.spec.embeddingDim;

    let weights: NamedArrays;
    if (state) {
      this.schedule = state.schedule;
      this.stepsPerEpoch = state.stepsPerEpoch;
      this.epoch = state.epoch;
      this.step = state.step;
      this.elapsedS = state.elapsedS;
      this.trainLoss = state.trainLoss;
      this.valLoss = state.valLoss;
      this.bestValLoss = state.bestValLoss;
      this.bestEpoch = state.bestEpoch;
      this.epochsSinceImprovement = state.epochsSinceImprovement;
      this.rng = Rng.fromState(state.rng);
      weights = state.weights;
    } else {
      this.stepsPerEpoch = opts.stepsPerEpoch ?? STEPS_PER_EPOCH;
      this.schedule = makeSchedule(opts.config.learning_rate, opts.config.max_epochs * this.stepsPerEpoch);
      this.rng = Rng.fromString(`${opts.id}:train`);
      weights = initParams(this.spec, Rng.fromString(`${opts.id}:init`));
    }

    this.targets = targetTensors(targets);
    this.segments = makeSegments(this.layout);
    this.vars = {};
    this.varNames = new Map();
    for (const [name, shape] of paramShapes(this.spec)) {
      const init = tf.tensor(weights[name], shape, "float32");
      const v = tf.variable(init, true);
      init.dispose(); // the variable holds its own reference to the buffer
      this.vars[name] = v;
      this.varNames.set(v.name, name);
    }
    this.adam = new Adam(this.vars, state?.adam);
    if (state?.bestWeights) this.best = toTensors(this.spec, state.bestWeights);
    else if (state && state.epoch > 0) this.best = cloneAll(this.vars);

    const valRng = Rng.fromString(`${opts.id}:val`);
    const val = valRng.fillNormal(new Float32Array(VAL_SIZE * E));
    if (noise > 0) {
      const eps = valRng.fillNormal(new Float32Array(VAL_SIZE * E), noise);
      for (let i = 0; i < val.length; i++) val[i] += eps[i];
    }
    this.valLatents = tf.tensor2d(val, [VAL_SIZE, E]);
  }

  /**
   * A trainer for model `opts.id`: fresh (weights from the model id's init stream) or resumed from
   * `opts.checkpoint`.
   * @throws MetadataError (bad metadata), CheckpointError (unreadable checkpoint).
   */
  static async create(opts: TrainerOptions): Promise<Trainer> {
    await initBackend();
    const targets = buildTargets(opts.metadata);
    const spec = generatorSpec(opts.config.model_size, opts.config.embedding_dim, targets.layout);
    const state = opts.checkpoint ? decodeCheckpoint(opts.checkpoint, spec) : null;
    return new Trainer(opts, state);
  }

  /** How the 2-way marginals are computed (`gram` or `blocks`, see loss.ts). */
  get lossForm(): "gram" | "blocks" {
    return this.targets.mode;
  }

  /** Why training is already over (a checkpoint written after the last epoch), else null. */
  stopReason(): StopReason | null {
    const patience = this.config.early_stop_patience;
    if (patience > 0 && this.epoch > 0 && this.epochsSinceImprovement >= patience) return "early_stop";
    if (this.epoch >= this.config.max_epochs) return "max_epochs";
    if (this.elapsedS >= this.config.max_training_time) return "time_limit";
    return null;
  }

  private drawLatents(n: number): Float32Array {
    const E = this.spec.embeddingDim;
    const z = this.rng.fillNormal(new Float32Array(n * E));
    const noise = this.config.privacy_enabled ? this.config.privacy_noise : 0;
    if (noise > 0) {
      const eps = this.rng.fillNormal(new Float32Array(n * E), noise);
      for (let i = 0; i < z.length; i++) z[i] += eps[i];
    }
    return z;
  }

  /** One optimizer step; returns the batch loss. @throws TrainingError on a non-finite loss. */
  private trainStep(): number {
    const B = this.config.batch_size;
    const z = this.drawLatents(B);
    const lr = learningRate(this.schedule, this.step);
    const value = tf.tidy(() => {
      const zt = tf.tensor2d(z, [B, this.spec.embeddingDim]);
      const { value, grads } = tf.variableGrads(
        () => marginalLoss(featureSoftmax(forward(this.spec, this.vars, zt), this.segments), this.targets),
        Object.values(this.vars),
      );
      const loss = value.dataSync()[0];
      if (!Number.isFinite(loss)) return loss;
      const named: NamedTensors = {};
      for (const [vname, g] of Object.entries(grads)) named[this.varNames.get(vname) as string] = g;
      this.adam.step(this.vars, named, lr);
      return loss;
    });
    if (!Number.isFinite(value)) throw new TrainingError(`non-finite training loss (${value}) at step ${this.step + 1}`);
    this.step += 1;
    return value;
  }

  /** The loss on the fixed validation latents with the latest weights. */
  validationLoss(): number {
    const v = tf.tidy(() => {
      let sums: MarginalSums | null = null;
      for (let r0 = 0; r0 < VAL_SIZE; r0 += EVAL_CHUNK) {
        const n = Math.min(EVAL_CHUNK, VAL_SIZE - r0);
        const z = tf.slice(this.valLatents, [r0, 0], [n, this.spec.embeddingDim]);
        const s = marginalSums(featureSoftmax(forward(this.spec, this.vars, z), this.segments), this.targets);
        sums = sums === null ? s : addSums(sums, s);
      }
      return lossFromSums(sums as NonNullable<typeof sums>, VAL_SIZE, this.targets).dataSync()[0];
    });
    return v;
  }

  /**
   * Runs one epoch (or its remainder up to the time limit), evaluates, updates the early-stopping
   * state and keeps the best weights. Returns null when `shouldAbort` fired.
   * @throws TrainingError on a non-finite loss; Error when the trainer was disposed.
   */
  async runEpoch(opts: EpochOptions = {}): Promise<EpochReport | null> {
    if (this.disposed) throw new Error("trainer is disposed");
    const started = performance.now();
    const budgetMs = (this.config.max_training_time - this.elapsedS) * 1000;
    let sum = 0;
    let steps = 0;
    let timeUp = false;
    while (steps < this.stepsPerEpoch) {
      if (opts.shouldAbort?.()) return null;
      sum += this.trainStep();
      steps += 1;
      if (performance.now() - started >= budgetMs) {
        timeUp = true;
        break;
      }
      if (opts.yieldFn) await opts.yieldFn();
      if (this.disposed) return null;
    }
    const stepMs = (performance.now() - started) / steps;
    if (opts.shouldAbort?.()) return null;
    const val = this.validationLoss();
    if (!Number.isFinite(val)) throw new TrainingError(`non-finite validation loss (${val}) after epoch ${this.epoch + 1}`);
    this.epoch += 1;
    this.trainLoss = sum / steps;
    this.valLoss = val;
    const improved = this.bestValLoss === null || val < this.bestValLoss - MIN_REL_IMPROVEMENT * Math.abs(this.bestValLoss);
    if (improved) {
      this.bestValLoss = val;
      this.bestEpoch = this.epoch;
      this.epochsSinceImprovement = 0;
      // tf.clone shares the buffers; the copy diverges when the variables are next assigned.
      disposeAll(this.best);
      this.best = cloneAll(this.vars);
    } else {
      this.epochsSinceImprovement += 1;
    }
    this.elapsedS += (performance.now() - started) / 1000;
    const done = timeUp ? "time_limit" : this.stopReason();
    return {
      epoch: this.epoch,
      step: this.step,
      trainLoss: this.trainLoss,
      valLoss: val,
      improved,
      elapsedS: this.elapsedS,
      msPerStep: stepMs,
      done,
    };
  }

  /** The checkpoint of the current state (weights copied out of the tensors). */
  checkpoint(): Checkpoint {
    const weights = toArrays(this.vars);
    const bestWeights = this.best === null || this.bestEpoch === this.epoch ? null : toArrays(this.best);
    return encodeCheckpoint({
      spec: this.spec,
      cardinalities: this.layout.cardinalities,
      epoch: this.epoch,
      step: this.step,
      elapsedS: this.elapsedS,
      trainLoss: this.trainLoss,
      valLoss: this.valLoss,
      bestValLoss: this.bestValLoss,
      bestEpoch: this.bestEpoch,
      epochsSinceImprovement: this.epochsSinceImprovement,
      weights,
      bestWeights,
      adam: this.adam.state(),
      schedule: this.schedule,
      stepsPerEpoch: this.stepsPerEpoch,
      rng: this.rng.state(),
    });
  }

  /**
   * A view of the latest (`best = false`) or best weights for generation. The tensors stay owned by
   * the trainer: do not dispose them, and do not use the view after the next training step.
   */
  generator(best: boolean): GeneratorModel {
    const params = best && this.best !== null ? this.best : (this.vars as NamedTensors);
    return { spec: this.spec, layout: this.layout, params };
  }

  /**
   * Ends training: frees the variables, Adam state and targets, and returns the best weights as
   * a generator the caller owns.
   */
  finish(): GeneratorModel {
    const params = cloneAll(this.best ?? this.vars);
    const model = { spec: this.spec, layout: this.layout, params };
    this.dispose();
    return model;
  }

  /** Frees every tensor. Idempotent. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    disposeAll(this.vars);
    disposeAll(this.best);
    this.best = null;
    this.adam.dispose();
    disposeTargetTensors(this.targets);
    disposeSegments(this.segments);
    this.valLatents.dispose();
  }
}
