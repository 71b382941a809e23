/**
 * Training of the generator on a statistical description: its marginals, never rows
 * (`docs/decisions.md` "A marginal-matching model").
 *
 * - An epoch is {@link stepsPerEpochFor}(max_epochs) optimizer steps. Each step draws `batch_size`
 *   latents z ~ N(0, I_E) from the training stream (plus N(0, privacy_noise^2) with privacy),
 *   computes the marginal-matching loss (`loss.ts`) and takes one Adam step (`adam.ts`) at the
 *   scheduled rate (`schedule.ts`).
 * - After every epoch an exponential moving average of the weights is updated (Polyak & Juditsky,
 *   SIAM J. Control Optim. 30(4), 1992; {@link emaDecay}); the average is validated, kept as best
 *   and served once `ready`, the optimizer's weights while `training`.
 * - `train_loss`: the epoch's mean batch loss; `val_loss`: the average's loss on {@link VAL_SIZE}
 *   fixed latents of their own stream.
 * - Stops: `early_stop_patience` epochs in a row without `val < best - MIN_REL_IMPROVEMENT *
 *   |best|` (0 disables it; acted on only late in the cosine decay), `max_epochs`, or
 *   `max_training_time` seconds summed across restarts; all end `ready` with the best weights.
 * - Streams (xoshiro.ts): `"<id>:init"`, `"<id>:train"` (checkpointed), `"<id>:val"`.
 * - Compute: a {@link TrainingBackend} (tfjs or native); the rest is this file's, so checkpoints
 *   cross paths.
 * - Latency isolation (`docs/decisions.md` "Training one model never stalls requests for
 *   another"): native steps and validation run on the addon's background thread, every use of
 *   the core goes through `NativeGenerator.exclusive`, and long loops run in slices with
 *   `yieldFn` between them, bit-identical to one go.
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

  /** Where the weights, Adam's state and the targets live. */
  private readonly backend: TrainingBackend;
  /** The weights' moving average (in JavaScript on both paths), flat in `paramShapes` order. */
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

  /** Native when asked for and possible, else tfjs with a note; an unusable GPU is an error. */
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
   * A trainer for model `opts.id`, fresh or resumed from `opts.checkpoint`.
   * @throws MetadataError (bad metadata), CheckpointError (unreadable checkpoint).
   */
  static async create(opts: TrainerOptions): Promise<Trainer> {
    await initBackend();
    const targets = buildTargets(opts.metadata);
    const spec = generatorSpec(opts.config.model_size, opts.config.embedding_dim, targets.layout);
    const state = opts.checkpoint ? decodeCheckpoint(opts.checkpoint, spec) : null;
    return new Trainer(opts, state);
  }

  /** How the 2-way marginals are computed (`gram` or `blocks`, loss.ts; native dense = gram). */
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

  /** Early stopping acts only late in the cosine decay: earlier, a plateau is only noise. */
  private earlyStopArmed(): boolean {
    const s = this.schedule;
    return this.step >= s.warmupSteps + EARLY_STOP_ARMED_FRACTION * (s.totalSteps - s.warmupSteps);
  }

  /** `n` latents (n x E) from the training stream plus privacy noise, drawn in slices. */
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

  /** One optimizer step: the batch loss. @throws TrainingError on a non-finite loss. */
  private async trainStep(yieldFn: YieldFn): Promise<number> {
    const B = this.config.batch_size;
    const z = await this.drawLatents(B, yieldFn);
    const lr = learningRate(this.schedule, this.step);
    const value = await this.backend.trainStep(z, B, lr);
    if (!Number.isFinite(value)) throw new TrainingError(`non-finite training loss (${value}) at step ${this.step + 1}`);
    this.step += 1;
    return value;
  }

  /** Moves the weight average towards the latest weights; resolves with those (flat, reused). */
  private async updateEma(steps: number, yieldFn: YieldFn): Promise<Float32Array> {
    const beta = emaDecay(this.step, steps);
    const latest = await this.backend.latestFlat();
    await emaSliced(this.ema.flat, latest, beta, yieldFn);
    return latest;
  }

  /** The averaged weights' validation loss (`latest`: the optimizer's flat weights, if at hand). */
  async validationLoss(latest?: Float32Array): Promise<number> {
    return this.backend.validationLoss(this.ema, latest);
  }

  /**
   * Runs one epoch (or its remainder up to the time limit), evaluates, updates early stopping and
   * keeps the best weights. Resolves with null when `shouldAbort` fired or the trainer was
   * disposed meanwhile (discard the trainer then).
   * @throws TrainingError on a non-finite loss; Error when already disposed.
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
   * The checkpoint of the current state; call it between epochs (native: "busy" otherwise). Its
   * arrays view the trainer's, which the next {@link runEpoch} updates: store or copy it first.
   */
  checkpoint(): Checkpoint {
    const { weights, adam } = this.backend.state();
    return this.encode(weights, adam);
  }

  /** {@link checkpoint} in pieces queued on the core, with `yieldFn` between them (same caveat). */
  async checkpointInSlices(yieldFn?: YieldFn): Promise<Checkpoint> {
    const { weights, adam } = await this.backend.stateInSlices(yieldFn);
    return this.encode(weights, adam);
  }

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

  /** A view of the latest or best weights, owned by the trainer, valid until the next step. */
  generator(best: boolean): GeneratorModel {
    return this.backend.generator(best);
  }

  /**
   * A generator the caller owns ({@link disposeGenerator}) with a copy of the latest or best
   * weights, queued behind the step in flight; null when the trainer was disposed or finished.
   */
  async snapshot(best: boolean): Promise<GeneratorModel | null> {
    if (this.disposed) return null;
    return this.backend.snapshot(best);
  }

  /** Ends training: frees everything, returns the best weights as a generator the caller owns. */
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
