/**
 * Training of the generator on a statistical description (DESIGN §2, "Server side").
 *
 * - An epoch is a fixed number of optimizer steps, {@link stepsPerEpochFor}(max_epochs): 50 when
 *   max_epochs <= 90, fewer (at least 10) for longer runs, so a default run (100 epochs) plans
 *   {@link PLANNED_STEPS} steps. There are no rows to pass over. Each
 *   step draws `batch_size` fresh latents z ~ N(0, I_E) from the model's training stream (plus
 *   N(0, privacy_noise^2) noise when `privacy_enabled`), computes the marginal-matching loss
 *   (`loss.ts`) and takes one Adam step (`adam.ts`) at the scheduled rate (`schedule.ts`).
 * - Weight averaging: after every epoch the trainer updates an exponential moving average (EMA) of
 *   the optimizer's weights (Polyak & Juditsky, "Acceleration of stochastic approximation by
 *   averaging", SIAM J. Control Optim. 30(4), 1992; the decay warm-up of TensorFlow's
 *   `ExponentialMovingAverage(num_updates)`): see {@link emaDecay}. The averaged weights are the
 *   ones validated, kept as best and served once the model is `ready`; the optimizer's own
 *   weights keep training (and serve generation while the model is `training`). Measured on
 *   discretized Adult (medium, 4,000 steps): 2-way TVD 0.0273 -> 0.0265, 3-way 0.0704 -> 0.0697,
 *   and `val_loss` no longer jumps by +-5% between epochs, so early stopping reacts to plateaus
 *   instead of to optimizer noise.
 * - `train_loss` = mean batch loss over the epoch; `val_loss` = the same loss, for the averaged
 *   weights, on a fixed set of {@link VAL_SIZE} latents (its own seeded stream, never used for
 *   training).
 * - Early stopping on `val_loss`: an epoch improves when `val < best - MIN_REL_IMPROVEMENT * |best|`;
 *   training stops after `early_stop_patience` epochs in a row without improvement, counted from
 *   the start but acted on only in the last tenth of the cosine decay (`earlyStopArmed`).
 *   `early_stop_patience = 0` disables early stopping.
 * - Training also stops at `max_epochs`, or when the training time (summed across restarts; the
 *   time since the last checkpoint of a crashed run is lost) reaches `max_training_time` seconds;
 *   the running epoch then ends early. All three end in `ready`, with the best-val weights.
 * - Seeded streams (rng.ts), all derived from the model id: `"<id>:init"` (initial weights),
 *   `"<id>:train"` (training latents; its state is checkpointed), `"<id>:val"` (validation set).
 * - Compute (`TrainerOptions.compute`): `tfjs` (generator.ts, loss.ts, adam.ts on tfjs) or
 *   `native` (the same model, loss and Adam in the C++ core, native-core.ts). Everything above
 *   (streams, schedule, validation, early stopping, checkpoints) is shared: a checkpoint written on
 *   one path resumes on the other.
 */
import * as tf from "@tensorflow/tfjs-core";
import type { Metadata, ModelConfig } from "../types";
import { Adam, type AdamState } from "./adam";
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
  type Segments,
  toArrays,
  toTensors,
  trainableVariables,
  type TrainableVariables,
} from "./generator";
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
import { buildTargets, type Layout } from "./marginals";
import { NativeGenerator, nativeCoreStatus } from "./native-core";
import { Rng } from "./rng";
import { learningRate, makeSchedule, type Schedule } from "./schedule";

/** Most optimizer steps per epoch (a run with max_epochs <= 50 uses this many). */
export const STEPS_PER_EPOCH = 50;
/**
 * Early stopping acts once this fraction of the cosine decay has passed (see `earlyStopArmed`).
 * At 0.75, runs on discretized Adult stopped at 82-89% of the decay on epoch-to-epoch noise of
 * `val_loss` (+-0.3% even for the averaged weights) and lost the last part of the schedule
 * (4,000 steps: 2-way 0.0309 / 3-way 0.0736 stopped, 0.0279 / 0.0712 completed).
 */
export const EARLY_STOP_ARMED_FRACTION = 0.9;
/** Fewest optimizer steps per epoch. */
export const MIN_STEPS_PER_EPOCH = 10;
/**
 * Steps a run plans for when max_epochs allows: the learning-rate cycle of a default run
 * (max_epochs 100) spans this many steps. Measured on discretized Adult with the medium model
 * (`npm run bench -- fidelity`, 2-way / 3-way TVD, fit seconds on 2 cores; before the entropy
 * penalty): 2,500 steps 0.0282 / 0.0724 (26 s), 4,000 steps 0.0279 / 0.0712 (40 s), 5,000 steps
 * 0.0270 / 0.0694 (49 s, weight averaging on), 8,000 steps 0.0261 / 0.0677 (114 s). With the
 * penalty, 5,000 steps gave 0.0254 / 0.0662 in 52.9 s and 4,500 gave 0.0253 / 0.0661 in 48.2 s
 * at load average 1.8 (other work on the host): 4,500 keeps the one-minute budget of issue 5
 * with room for a busy machine.
 */
export const PLANNED_STEPS = 4500;

/**
 * Optimizer steps per epoch for a fresh run: ceil(PLANNED_STEPS / max_epochs), clamped to
 * [MIN_STEPS_PER_EPOCH, STEPS_PER_EPOCH]. Fixed for the model's life (kept in checkpoints).
 */
export function stepsPerEpochFor(maxEpochs: number): number {
  return Math.min(STEPS_PER_EPOCH, Math.max(MIN_STEPS_PER_EPOCH, Math.ceil(PLANNED_STEPS / maxEpochs)));
}
/**
 * Weight of the entropy penalty (loss.ts `entropyPenalty`) in what training differentiates; the
 * reported `train_loss` and `val_loss` are the KL alone. Measured on discretized Adult (default
 * config, 5,000 steps, in-process fit, before the marginal weights of marginals.ts; 2-way / 3-way
 * TVD, TSTR AUC): none 0.0270 / 0.0694 / 0.902;
 * 0.02 0.0252 / 0.0667 / 0.908; 0.05 0.0251 / 0.0652 / 0.907 (over HTTP: 0.0259 / 0.0664 / 0.906,
 * privacy share 0.49, exact copies 1.96% vs HOLDOUT's 2.28%). Unnormalised by ln K_f, 0.1 was
 * already too sharp (0.0331 / 0.0765), and the opposite sign (maximising entropy) hurt.
 */
export const ENTROPY_PENALTY = 0.05;

/** Per-step decay of the weight average once warmed up (half-life ~140 steps). */
export const EMA_DECAY = 0.995;

/**
 * Decay applied to the weight average at the end of an epoch of `steps` optimizer steps that ends
 * at step `step`: min(EMA_DECAY, (1 + step) / (10 + step)) ^ steps. The warm-up term keeps the
 * average close to the latest weights early on, when they move fast.
 */
export function emaDecay(step: number, steps: number): number {
  return Math.min(EMA_DECAY, (1 + step) / (10 + step)) ** steps;
}

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

/**
 * A generator ready to run forward: shape, code layout and weights (owned by whoever made it).
 * On the tfjs path the weights are `params`; on the native path they live in `native` and
 * `params` is empty. Free either with {@link disposeGenerator}.
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

/** The compute path of training and generation (`synthd serve --compute`). */
export type ComputeKind = "tfjs" | "native";

/** `native` when the compute core loaded in this thread, else `tfjs`. */
export function defaultCompute(): ComputeKind {
  return nativeCoreStatus().available ? "native" : "tfjs";
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
  /**
   * Compute path (default `tfjs`). `native` runs forward, loss, backward and Adam in the C++ core
   * (src/model/native-core.ts); when the core is unavailable the trainer uses tfjs and says why in
   * {@link Trainer.computeNote}. Checkpoints are the same on both paths.
   */
  compute?: ComputeKind;
}

/** Options of {@link Trainer.runEpoch}. */
export interface EpochOptions {
  /** Awaited between steps so other work on the thread can run (e.g. `setImmediate`). */
  yieldFn?: () => Promise<void>;
  /** Polled between steps; when true the epoch is abandoned and `runEpoch` returns null. */
  shouldAbort?: () => boolean;
}

function copyArrays(src: NamedArrays): NamedArrays {
  const out: NamedArrays = {};
  for (const [name, a] of Object.entries(src)) out[name] = Float32Array.from(a);
  return out;
}

function cloneAll(src: NamedTensors): NamedTensors {
  const out: NamedTensors = {};
  for (const [name, t] of Object.entries(src)) out[name] = tf.clone(t);
  return out;
}

/** The tfjs half of a trainer: variables, Adam, target tensors, validation latents, best copy. */
interface TfjsParts {
  vars: Record<string, tf.Variable>;
  gradsByName: TrainableVariables["gradsByName"];
  adam: Adam;
  targets: TargetTensors;
  segments: Segments;
  valLatents: tf.Tensor2D;
  best: NamedTensors | null;
}

/** The native half: the core (weights, Adam, targets), validation latents, best weights. */
interface NativeParts {
  core: NativeGenerator;
  valLatents: Float32Array;
  best: NamedArrays | null;
  /** A core holding `best`, made on demand for generation while training. */
  bestCore: NativeGenerator | null;
  mode: "dense" | "blocks";
}

/** Owns a generator's weights, its Adam state, targets and the early-stopping bookkeeping. */
export class Trainer {
  readonly spec: GeneratorSpec;
  readonly layout: Layout;
  readonly config: ModelConfig;
  readonly schedule: Schedule;
  readonly stepsPerEpoch: number;
  /** The compute path in use. */
  readonly compute: ComputeKind;
  /** Why `compute` differs from the one asked for (null when it does not). */
  readonly computeNote: string | null = null;
  epoch = 0;
  step = 0;
  elapsedS = 0;
  trainLoss: number | null = null;
  valLoss: number | null = null;
  bestValLoss: number | null = null;
  bestEpoch = 0;
  epochsSinceImprovement = 0;

  private readonly tfjs: TfjsParts | null = null;
  private readonly native: NativeParts | null = null;
  /** The exponential moving average of the weights (both paths keep it in JavaScript). */
  private ema: NamedArrays;
  private rng: Rng;
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
      this.ema = state.emaWeights;
    } else {
      this.stepsPerEpoch = opts.stepsPerEpoch ?? stepsPerEpochFor(opts.config.max_epochs);
      this.schedule = makeSchedule(opts.config.learning_rate, opts.config.max_epochs * this.stepsPerEpoch);
      this.rng = Rng.fromString(`${opts.id}:train`);
      weights = initParams(this.spec, Rng.fromString(`${opts.id}:init`));
      this.ema = copyArrays(weights);
    }

    const valRng = Rng.fromString(`${opts.id}:val`);
    const val = valRng.fillNormal(new Float32Array(VAL_SIZE * E));
    if (noise > 0) {
      const eps = valRng.fillNormal(new Float32Array(VAL_SIZE * E), noise);
      for (let i = 0; i < val.length; i++) val[i] += eps[i];
    }

    let compute = opts.compute ?? "tfjs";
    if (compute === "native") {
      try {
        const core = NativeGenerator.create(this.spec, this.layout, weights);
        try {
          const mode = core.setTargets(targets);
          core.setEntropyPenalty(ENTROPY_PENALTY);
          if (state) core.setAdamState(state.adam);
          const best = state?.bestWeights ?? (state && state.epoch > 0 ? copyArrays(this.ema) : null);
          this.native = { core, valLatents: val, best, bestCore: null, mode };
        } catch (e) {
          core.dispose();
          throw e;
        }
      } catch (e) {
        compute = "tfjs";
        this.computeNote = `native compute unavailable (${(e as Error).message}); using tfjs`;
      }
    }
    this.compute = compute;
    if (this.native === null) {
      const trainable = trainableVariables(this.spec, weights);
      let best: NamedTensors | null = null;
      if (state?.bestWeights) best = toTensors(this.spec, state.bestWeights);
      else if (state && state.epoch > 0) best = toTensors(this.spec, this.ema);
      this.tfjs = {
        vars: trainable.vars,
        gradsByName: trainable.gradsByName,
        adam: new Adam(trainable.vars, state?.adam),
        targets: targetTensors(targets),
        segments: makeSegments(this.layout),
        valLatents: tf.tensor2d(val, [VAL_SIZE, E]),
        best,
      };
    }
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

  /** How the 2-way marginals are computed (`gram` or `blocks`, see loss.ts; native: dense = gram). */
  get lossForm(): "gram" | "blocks" {
    if (this.native) return this.native.mode === "dense" ? "gram" : "blocks";
    return (this.tfjs as TfjsParts).targets.mode;
  }

  /** Why training is already over (a checkpoint written after the last epoch), else null. */
  stopReason(): StopReason | null {
    const patience = this.config.early_stop_patience;
    if (patience > 0 && this.epoch > 0 && this.epochsSinceImprovement >= patience && this.earlyStopArmed()) return "early_stop";
    if (this.epoch >= this.config.max_epochs) return "max_epochs";
    if (this.elapsedS >= this.config.max_training_time) return "time_limit";
    return null;
  }

  /**
   * Early stopping acts only in the last quarter of the cosine decay (the rate below ~15% of the
   * way from floor to peak; {@link EARLY_STOP_ARMED_FRACTION}). Before that the loss still falls steeply and noisily, and a plateau
   * of a few epochs at a high rate is not convergence: stopping there left fidelity far from what
   * the completed schedule reaches (see {@link PLANNED_STEPS}).
   */
  private earlyStopArmed(): boolean {
    const s = this.schedule;
    return this.step >= s.warmupSteps + EARLY_STOP_ARMED_FRACTION * (s.totalSteps - s.warmupSteps);
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
    let value: number;
    if (this.native) {
      // NaN (and no update) when the loss or a gradient is not finite.
      value = this.native.core.trainStep(z, B, lr);
    } else {
      const t = this.tfjs as TfjsParts;
      value = tf.tidy(() => {
        const zt = tf.tensor2d(z, [B, this.spec.embeddingDim]);
        let kl: tf.Scalar | null = null;
        const { grads } = tf.variableGrads(() => {
          const probs = featureSoftmax(forward(this.spec, t.vars, zt), t.segments);
          kl = tf.keep(marginalLoss(probs, t.targets));
          return tf.add(kl, entropyPenalty(probs, t.targets, ENTROPY_PENALTY)) as tf.Scalar;
        }, Object.values(t.vars));
        const klTensor = kl as unknown as tf.Scalar;
        const loss = klTensor.dataSync()[0];
        klTensor.dispose();
        if (!Number.isFinite(loss)) return loss;
        t.adam.step(t.vars, t.gradsByName(grads), lr);
        return loss;
      });
    }
    if (!Number.isFinite(value)) throw new TrainingError(`non-finite training loss (${value}) at step ${this.step + 1}`);
    this.step += 1;
    return value;
  }

  /** The optimizer's latest weights, copied out. */
  private latestWeights(): NamedArrays {
    return this.native ? this.native.core.weights() : toArrays((this.tfjs as TfjsParts).vars);
  }

  /**
   * Moves the weight average towards the latest weights after `steps` steps (see {@link emaDecay}).
   * Returns the latest weights it read.
   */
  private updateEma(steps: number): NamedArrays {
    const beta = emaDecay(this.step, steps);
    const latest = this.latestWeights();
    for (const [name, avg] of Object.entries(this.ema)) {
      const w = latest[name];
      for (let i = 0; i < avg.length; i++) avg[i] = beta * avg[i] + (1 - beta) * w[i];
    }
    return latest;
  }

  /**
   * The loss on the fixed validation latents with the averaged weights. `latest`: the optimizer's
   * current weights when the caller already has a copy (saves reading them again).
   */
  validationLoss(latest?: NamedArrays): number {
    if (this.native) {
      // Evaluate the average in the training core, then put the optimizer's weights back.
      const core = this.native.core;
      latest ??= core.weights();
      core.setWeights(this.ema);
      try {
        return core.evalLoss(this.native.valLatents, VAL_SIZE);
      } finally {
        core.setWeights(latest);
      }
    }
    const t = this.tfjs as TfjsParts;
    const v = tf.tidy(() => {
      const params = toTensors(this.spec, this.ema);
      let sums: MarginalSums | null = null;
      for (let r0 = 0; r0 < VAL_SIZE; r0 += EVAL_CHUNK) {
        const n = Math.min(EVAL_CHUNK, VAL_SIZE - r0);
        const z = tf.slice(t.valLatents, [r0, 0], [n, this.spec.embeddingDim]);
        const s = marginalSums(featureSoftmax(forward(this.spec, params, z), t.segments), t.targets);
        sums = sums === null ? s : addSums(sums, s);
      }
      return lossFromSums(sums as NonNullable<typeof sums>, VAL_SIZE, t.targets).dataSync()[0];
    });
    return v;
  }

  /** Keeps the averaged weights as the best ones. */
  private keepBest(): void {
    if (this.native) {
      this.native.best = copyArrays(this.ema);
      this.native.bestCore?.dispose();
      this.native.bestCore = null;
      return;
    }
    const t = this.tfjs as TfjsParts;
    disposeAll(t.best);
    t.best = toTensors(this.spec, this.ema);
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
    const val = this.validationLoss(this.updateEma(steps));
    if (!Number.isFinite(val)) throw new TrainingError(`non-finite validation loss (${val}) after epoch ${this.epoch + 1}`);
    this.epoch += 1;
    this.trainLoss = sum / steps;
    this.valLoss = val;
    const improved = this.bestValLoss === null || val < this.bestValLoss - MIN_REL_IMPROVEMENT * Math.abs(this.bestValLoss);
    if (improved) {
      this.bestValLoss = val;
      this.bestEpoch = this.epoch;
      this.epochsSinceImprovement = 0;
      this.keepBest();
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

  /** The checkpoint of the current state (weights copied out); the same format on both paths. */
  checkpoint(): Checkpoint {
    const bestIsLatest = this.bestEpoch === this.epoch;
    let weights: NamedArrays;
    let bestWeights: NamedArrays | null;
    let adam: AdamState;
    if (this.native) {
      weights = this.native.core.weights();
      bestWeights = this.native.best === null || bestIsLatest ? null : this.native.best;
      adam = this.native.core.adamState();
    } else {
      const t = this.tfjs as TfjsParts;
      weights = toArrays(t.vars);
      bestWeights = t.best === null || bestIsLatest ? null : toArrays(t.best);
      adam = t.adam.state();
    }
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
      emaWeights: this.ema,
      bestWeights,
      adam,
      schedule: this.schedule,
      stepsPerEpoch: this.stepsPerEpoch,
      rng: this.rng.state(),
    });
  }

  /**
   * A view of the latest (`best = false`) or best weights for generation. The weights stay owned
   * by the trainer: do not dispose them, and do not use the view after the next training step.
   */
  generator(best: boolean): GeneratorModel {
    if (this.native) {
      const n = this.native;
      if (best && n.best !== null) {
        n.bestCore ??= NativeGenerator.create(this.spec, this.layout, n.best);
        return { spec: this.spec, layout: this.layout, params: {}, native: n.bestCore };
      }
      return { spec: this.spec, layout: this.layout, params: {}, native: n.core };
    }
    const t = this.tfjs as TfjsParts;
    const params = best && t.best !== null ? t.best : (t.vars as NamedTensors);
    return { spec: this.spec, layout: this.layout, params };
  }

  /**
   * Ends training: frees the variables, Adam state and targets, and returns the best weights as
   * a generator the caller owns.
   */
  finish(): GeneratorModel {
    if (this.native) {
      // Hand the core over with the best weights, without its training buffers.
      const n = this.native;
      if (n.best !== null) n.core.setWeights(n.best);
      n.core.trim();
      const model: GeneratorModel = { spec: this.spec, layout: this.layout, params: {}, native: n.core };
      n.bestCore?.dispose();
      n.bestCore = null;
      this.disposed = true;
      return model;
    }
    const t = this.tfjs as TfjsParts;
    const params = cloneAll(t.best ?? t.vars);
    const model = { spec: this.spec, layout: this.layout, params };
    this.dispose();
    return model;
  }

  /** Frees every tensor and native buffer. Idempotent. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    if (this.native) {
      this.native.core.dispose();
      this.native.bestCore?.dispose();
      this.native.bestCore = null;
      return;
    }
    const t = this.tfjs as TfjsParts;
    disposeAll(t.vars);
    disposeAll(t.best);
    t.best = null;
    t.adam.dispose();
    disposeTargetTensors(t.targets);
    disposeSegments(t.segments);
    t.valLatents.dispose();
  }
}
