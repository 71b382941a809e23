/**
 * Training of the generator on a statistical description: its marginals, never rows
 * (`docs/decisions.md` "A marginal-matching model").
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
 * - Seeded streams (xoshiro.ts), all derived from the model id: `"<id>:init"` (initial weights),
 *   `"<id>:train"` (training latents; its state is checkpointed), `"<id>:val"` (validation set).
 * - Compute (`TrainerOptions.compute`): a {@link TrainingBackend} (backend.ts), `tfjs`
 *   (backend-tfjs.ts: generator.ts, loss.ts, adam.ts on tfjs) or `native` (backend-native.ts: the
 *   same model, loss and Adam in the C++ core, native-core.ts). Everything above (streams,
 *   schedule, weight average, validation, early stopping, checkpoints) is this file's and shared:
 *   a checkpoint written on one path resumes on the other.
 * - Latency isolation (`docs/decisions.md` "Training one model never stalls requests for
 *   another"; docs/operations.md "Latency isolation on a worker"): an engine worker's JavaScript
 *   thread serves every model pinned to it, so the trainer never holds it for long. On the native
 *   path (the default) the optimizer step and the validation pass run on a background thread of
 *   the addon (`trainStepAsync`, `evalLossAsync`) and are awaited; every use of the core goes
 *   through `NativeGenerator.exclusive`, so a generate snapshotting this model's weights waits for
 *   the step in flight instead of racing it; the long JavaScript loops (latents of a large batch,
 *   the weight average) run in slices with `yieldFn` between them (slices.ts), and the checkpoint's
 *   copies out of the core are taken in pieces into reused buffers. The results are bit-identical
 *   to running each piece in one go (same draws, same order). The tfjs path computes on the
 *   JavaScript thread and yields between steps only.
 */

import type { ModelConfig } from "../../contract";
import type { AdamState } from "./adam";
import { initBackend } from "../compute/backend";
import type { ComputeKind } from "../compute/kind";
import { type Checkpoint, decodeCheckpoint, encodeCheckpoint, type TrainingState } from "./checkpoint";
import { type GeneratorSpec, type NamedArrays, generatorSpec, initParams } from "../generator/generator";
import type { GeneratorModel } from "../generator/model";
import { buildTargets, type Layout } from "../generator/targets";
import { flattenParams, resolveDevice, viewParams } from "../compute/native-core";
import { Rng } from "../sampling/xoshiro";
import { learningRate, makeSchedule, type Schedule } from "./schedule";
import { addSliced, emaSliced, fillNormalSliced, type YieldFn } from "./slices";
import { type EpochOptions, type EpochReport, type StopReason, type TrainerOptions, TrainingError } from "./options";
import { EARLY_STOP_ARMED_FRACTION, emaDecay, MIN_REL_IMPROVEMENT, stepsPerEpochFor, VAL_SIZE } from "./settings";
import type { AveragedWeights, BackendInputs, TrainingBackend } from "./backend";
import { type CoreOptions, NativeBackend } from "./backend-native";
import { TfjsBackend } from "./backend-tfjs";

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
  /** The device training runs on: `cpu` or the GPU's name (see {@link TrainerOptions.device}). */
  readonly device: string;
  epoch = 0;
  step = 0;
  elapsedS = 0;
  trainLoss: number | null = null;
  valLoss: number | null = null;
  bestValLoss: number | null = null;
  bestEpoch = 0;
  epochsSinceImprovement = 0;

  /** Where the weights, Adam's state and the targets live and are computed on. */
  private readonly backend: TrainingBackend;
  /**
   * The exponential moving average of the weights (both paths keep it in JavaScript): one flat
   * vector in `paramShapes` order (the native core's layout) and views into it by name.
   */
  private readonly ema: AveragedWeights;
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
    let emaFlat: Float32Array;
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
      emaFlat = flattenParams(this.spec, state.emaWeights);
    } else {
      this.stepsPerEpoch = opts.stepsPerEpoch ?? stepsPerEpochFor(opts.config.max_epochs);
      this.schedule = makeSchedule(opts.config.learning_rate, opts.config.max_epochs * this.stepsPerEpoch);
      this.rng = Rng.fromString(`${opts.id}:train`);
      weights = initParams(this.spec, Rng.fromString(`${opts.id}:init`));
      emaFlat = flattenParams(this.spec, weights);
    }
    this.ema = { flat: emaFlat, named: viewParams(this.spec, emaFlat) };

    const valRng = Rng.fromString(`${opts.id}:val`);
    const val = valRng.fillNormal(new Float32Array(VAL_SIZE * E));
    if (noise > 0) {
      const eps = valRng.fillNormal(new Float32Array(VAL_SIZE * E), noise);
      for (let i = 0; i < val.length; i++) val[i] += eps[i];
    }

    // A resumed run's best weights: stored apart, or the average when it was the best (epoch > 0).
    const best = state?.bestWeights ? state.bestWeights : state && state.epoch > 0 ? this.ema.named : null;
    const coreOpts: CoreOptions = { device: opts.device ?? "cpu", tf32: opts.tf32 ?? false };
    const inputs: BackendInputs = { spec: this.spec, layout: this.layout, targets, weights, adam: state?.adam, best, val };
    const chosen = Trainer.chooseBackend(opts.compute ?? "tfjs", coreOpts, inputs);
    this.backend = chosen.backend;
    this.computeNote = chosen.note;
    this.compute = this.backend.kind;
    this.device = this.backend.device;
  }

  /**
   * The backend of `compute`: native when asked for and the core can be made, else tfjs with a
   * note saying why. A GPU that was asked for and cannot be used is an error, not a silent fallback.
   */
  private static chooseBackend(compute: ComputeKind, coreOpts: CoreOptions, inputs: BackendInputs): { backend: TrainingBackend; note: string | null } {
    if (coreOpts.device === "gpu") {
      if (compute !== "native") throw new Error('device "gpu" needs the native compute core (compute "native")');
      coreOpts.device = resolveDevice("gpu");
    }
    let note: string | null = null;
    if (compute === "native") {
      try {
        return { backend: NativeBackend.create(inputs, coreOpts), note };
      } catch (e) {
        if (coreOpts.device === "gpu") throw e;
        note = `native compute unavailable (${(e as Error).message}); using tfjs`;
      }
    }
    return { backend: new TfjsBackend(inputs), note };
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
    return this.backend.lossForm;
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

  /**
   * `n` latents (n x E) from the training stream, plus privacy noise when enabled. Large batches
   * are drawn in slices with `yieldFn` between them (slices.ts; the same draws).
   */
  private async drawLatents(n: number, yieldFn: YieldFn): Promise<Float32Array> {
    const E = this.spec.embeddingDim;
    const z = await fillNormalSliced(this.rng, new Float32Array(n * E), 1, yieldFn);
    const noise = this.config.privacy_enabled ? this.config.privacy_noise : 0;
    if (noise > 0) {
      const eps = await fillNormalSliced(this.rng, new Float32Array(n * E), noise, yieldFn);
      await addSliced(z, eps, yieldFn);
    }
    return z;
  }

  /**
   * One optimizer step; resolves with the batch loss. On the native path the step runs on a
   * background thread (the JavaScript thread is free meanwhile), queued on the core behind any
   * snapshot of its weights. @throws TrainingError on a non-finite loss; Error when the core was disposed.
   */
  private async trainStep(yieldFn: YieldFn): Promise<number> {
    const B = this.config.batch_size;
    const z = await this.drawLatents(B, yieldFn);
    const lr = learningRate(this.schedule, this.step);
    const value = await this.backend.trainStep(z, B, lr);
    if (!Number.isFinite(value)) throw new TrainingError(`non-finite training loss (${value}) at step ${this.step + 1}`);
    this.step += 1;
    return value;
  }

  /**
   * Moves the weight average towards the latest weights after `steps` steps (see {@link emaDecay}),
   * in slices with `yieldFn` between them. Resolves with the latest weights it read (flat; native:
   * a buffer reused by the next copy).
   */
  private async updateEma(steps: number, yieldFn: YieldFn): Promise<Float32Array> {
    const beta = emaDecay(this.step, steps);
    const latest = await this.backend.latestFlat();
    await emaSliced(this.ema.flat, latest, beta, yieldFn);
    return latest;
  }

  /**
   * The loss on the fixed validation latents with the averaged weights. `latest`: the optimizer's
   * current weights (flat) when the caller already has a copy (saves reading them again). On the
   * native path the average is evaluated in the training core on a background thread, holding the core
   * (`exclusive`) from the swap to the average until the optimizer's weights are back.
   */
  async validationLoss(latest?: Float32Array): Promise<number> {
    return this.backend.validationLoss(this.ema, latest);
  }

  /**
   * Runs one epoch (or its remainder up to the time limit), evaluates, updates the early-stopping
   * state and keeps the best weights. Resolves with null when `shouldAbort` fired (polled before
   * every step and once more after the validation pass, which may take a while) or the trainer
   * was disposed meanwhile; the trainer's state is then unspecified (discard it). Awaits
   * `opts.yieldFn` between steps and between the slices of long loops (see the module comment).
   * @throws TrainingError on a non-finite loss; Error when the trainer was disposed before the call.
   */
  async runEpoch(opts: EpochOptions = {}): Promise<EpochReport | null> {
    if (this.disposed) throw new Error("trainer is disposed");
    const started = performance.now();
    const budgetMs = (this.config.max_training_time - this.elapsedS) * 1000;
    const gone = (): boolean => this.disposed || (opts.shouldAbort?.() ?? false);
    let sum = 0;
    let steps = 0;
    let timeUp = false;
    while (steps < this.stepsPerEpoch) {
      if (opts.shouldAbort?.()) return null;
      try {
        sum += await this.trainStep(opts.yieldFn);
      } catch (e) {
        if (this.disposed) return null; // the core went away under a queued step
        throw e;
      }
      steps += 1;
      if (performance.now() - started >= budgetMs) {
        timeUp = true;
        break;
      }
      if (opts.yieldFn) await opts.yieldFn();
      if (this.disposed) return null;
    }
    const stepMs = (performance.now() - started) / steps;
    if (gone()) return null;
    let val: number;
    try {
      val = await this.validationLoss(await this.updateEma(steps, opts.yieldFn));
    } catch (e) {
      if (this.disposed) return null;
      throw e;
    }
    if (gone()) return null;
    if (!Number.isFinite(val)) throw new TrainingError(`non-finite validation loss (${val}) after epoch ${this.epoch + 1}`);
    this.epoch += 1;
    this.trainLoss = sum / steps;
    this.valLoss = val;
    const improved = this.bestValLoss === null || val < this.bestValLoss - MIN_REL_IMPROVEMENT * Math.abs(this.bestValLoss);
    if (improved) {
      this.bestValLoss = val;
      this.bestEpoch = this.epoch;
      this.epochsSinceImprovement = 0;
      this.backend.keepBest(this.ema);
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

  /**
   * The checkpoint of the current state (weights copied out); the same format on both paths.
   * Synchronous: call it between epochs, with no step in flight (native: the core throws "busy"
   * otherwise). The engine uses {@link checkpointInSlices}. Its weight average (and, native, best
   * weights) view the trainer's own arrays, which the next {@link runEpoch} updates in place:
   * store or copy the checkpoint before that.
   */
  checkpoint(): Checkpoint {
    const { weights, adam } = this.backend.state();
    return this.encode(weights, adam);
  }

  /**
   * {@link checkpoint} for a thread that serves other models: on the native path the weights and
   * Adam's state are copied out of the core in two pieces, each queued on the core (`exclusive`),
   * with `yieldFn` between them, into buffers the trainer reuses every epoch. The same checkpoint,
   * but all its tensors view the trainer's arrays: store or copy it before the next
   * `checkpointInSlices` or {@link runEpoch}. Call it between epochs.
   */
  async checkpointInSlices(yieldFn?: YieldFn): Promise<Checkpoint> {
    const { weights, adam } = await this.backend.stateInSlices(yieldFn);
    return this.encode(weights, adam);
  }

  /** The stored form of the current state with these latest weights and Adam state. */
  private encode(weights: NamedArrays, adam: AdamState): Checkpoint {
    const bestIsLatest = this.bestEpoch === this.epoch;
    const bestWeights = bestIsLatest ? null : this.backend.bestWeights();
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
      emaWeights: this.ema.named,
      bestWeights,
      adam,
      schedule: this.schedule,
      stepsPerEpoch: this.stepsPerEpoch,
      rng: this.rng.state(),
    });
  }

  /**
   * A view of the latest (`best = false`) or best weights for generation. The weights stay owned
   * by the trainer: do not dispose them, and do not use the view after the next training step
   * (native: while a step is in flight the latest core throws "busy"; see {@link snapshot}).
   */
  generator(best: boolean): GeneratorModel {
    return this.backend.generator(best);
  }

  /**
   * A generator the caller owns (free it with {@link disposeGenerator}) holding a copy of the
   * latest (`best = false`) or best weights (the latest while there is no best yet). On the native
   * path the copy of the latest weights is queued on the core (`exclusive`): it waits for the
   * step or validation pass in flight (at most one) and never races it. Resolves with null when
   * the trainer was disposed or finished meanwhile.
   * @throws Error when the copy cannot be made (out of memory).
   */
  async snapshot(best: boolean): Promise<GeneratorModel | null> {
    if (this.disposed) return null;
    return this.backend.snapshot(best);
  }

  /**
   * Ends training: frees the variables, Adam state and targets, and returns the best weights as
   * a generator the caller owns. Call it once the last epoch has ended.
   */
  finish(): GeneratorModel {
    const model = this.backend.finish();
    this.disposed = true;
    return model;
  }

  /** Frees every tensor and native buffer. Idempotent. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.backend.dispose();
  }
}
