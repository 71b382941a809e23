/**
 * The native {@link TrainingBackend}: the same model, loss and Adam in the C++ core, steps and
 * validation on the addon's background thread, every use of the core through
 * `NativeGenerator.exclusive` (trainer.ts, "Latency isolation").
 */
import { type GeneratorSpec, type NamedArrays, paramCount } from "../generator/generator";
import type { GeneratorModel } from "../generator/model";
import type { Layout } from "../generator/targets";
import { type DevicePreference, flattenParams, viewParams } from "../compute/native-core";
import { NativeGenerator } from "../compute/native-generator";
import type { AveragedWeights, BackendInputs, OptimizerState, TrainingBackend } from "./backend";
import type { YieldFn } from "./slices";
import { ENTROPY_PENALTY, VAL_SIZE } from "./settings";

/** The native core's device options (also those of the generation copies of the weights). */
export interface CoreOptions {
  device: DevicePreference;
  tf32: boolean;
}

/** The native compute path: the core (weights, Adam, targets), validation latents, best weights. */
export class NativeBackend implements TrainingBackend {
  readonly kind = "native" as const;
  readonly device: string;
  private readonly mode: "dense" | "blocks";
  /** The best weights: views into `bestFlat`, which keepBest overwrites in place. */
  private best: NamedArrays | null;
  private bestFlat: Float32Array | null;
  /** Flat buffers reused every epoch for the copies out of the core, made on first use. */
  private buffers: { weights: Float32Array; m: Float32Array; v: Float32Array } | null = null;
  /** A core holding `best`, made on demand for generation while training. */
  private bestCore: NativeGenerator | null = null;
  private disposed = false;

  private constructor(
    private readonly spec: GeneratorSpec,
    private readonly layout: Layout,
    private readonly coreOpts: CoreOptions,
    private readonly core: NativeGenerator,
    mode: "dense" | "blocks",
    bestFlat: Float32Array | null,
    private readonly valLatents: Float32Array,
  ) {
    this.device = core.device;
    this.mode = mode;
    this.bestFlat = bestFlat;
    this.best = bestFlat && viewParams(spec, bestFlat);
  }

  /**
   * A core holding `weights` (and Adam's state `adam` when resumed) with the targets set; `best`:
   * the best weights so far, else null; `val`: the validation latents.
   * @throws Error when the core cannot be made (no addon, no GPU); nothing is left allocated.
   */
  static create({ spec, layout, targets, weights, adam, best, val }: BackendInputs, coreOpts: CoreOptions): NativeBackend {
    const core = NativeGenerator.create(spec, layout, weights, coreOpts);
    try {
      const mode = core.setTargets(targets);
      core.setEntropyPenalty(ENTROPY_PENALTY);
      if (adam) core.setAdamState(adam);
      return new NativeBackend(spec, layout, coreOpts, core, mode, best && flattenParams(spec, best), val);
    } catch (e) {
      core.dispose();
      throw e;
    }
  }

  get lossForm(): "gram" | "blocks" {
    return this.mode === "dense" ? "gram" : "blocks";
  }

  trainStep(z: Float32Array, batch: number, lr: number): Promise<number> {
    // NaN (and no update) when the loss or a gradient is not finite.
    const core = this.core;
    return core.exclusive(() => core.trainStepAsync(z, batch, lr));
  }

  /** The reused copy buffers (see {@link buffers}). */
  private reusedBuffers(): NonNullable<NativeBackend["buffers"]> {
    const P = paramCount(this.spec);
    this.buffers ??= { weights: new Float32Array(P), m: new Float32Array(P), v: new Float32Array(P) };
    return this.buffers;
  }

  latestFlat(): Promise<Float32Array> {
    return this.core.exclusive(() => this.core.raw.getParams(this.reusedBuffers().weights));
  }

  /** In the training core, held (`exclusive`) from the swap to the average until the swap back. */
  validationLoss(ema: AveragedWeights, latest?: Float32Array): Promise<number> {
    const core = this.core;
    return core.exclusive(async () => {
      const back = latest ?? core.raw.getParams();
      core.raw.setParams(ema.flat);
      try {
        return await core.evalLossAsync(this.valLatents, VAL_SIZE);
      } finally {
        if (!this.disposed) core.raw.setParams(back);
      }
    });
  }

  keepBest(ema: AveragedWeights): void {
    if (this.bestFlat === null) this.bestFlat = ema.flat.slice();
    else this.bestFlat.set(ema.flat);
    this.best ??= viewParams(this.spec, this.bestFlat);
    this.bestCore?.dispose();
    this.bestCore = null;
  }

  bestWeights(): NamedArrays | null {
    return this.best;
  }

  state(): OptimizerState {
    return { weights: this.core.weights(), adam: this.core.adamState() };
  }

  /** Weights and Adam's state copied out in two pieces, each queued on the core. */
  async stateInSlices(yieldFn?: YieldFn): Promise<OptimizerState> {
    const buf = this.reusedBuffers();
    const weights = await this.core.exclusive(() => this.core.weights(buf.weights));
    if (yieldFn) await yieldFn();
    const adam = await this.core.exclusive(() => this.core.adamState(buf));
    return { weights, adam };
  }

  generator(best: boolean): GeneratorModel {
    if (best && this.best !== null) {
      this.bestCore ??= NativeGenerator.create(this.spec, this.layout, this.best, this.coreOpts);
      return { spec: this.spec, layout: this.layout, params: {}, native: this.bestCore };
    }
    return { spec: this.spec, layout: this.layout, params: {}, native: this.core };
  }

  /** The copy is queued on the core (`exclusive`) behind the step or validation pass in flight. */
  async snapshot(best: boolean): Promise<GeneratorModel | null> {
    const { spec, layout } = this;
    let weights: NamedArrays;
    if (best && this.best !== null) weights = this.best;
    else {
      try {
        weights = await this.core.exclusive(() => this.core.weights());
      } catch (e) {
        if (this.disposed) return null;
        throw e;
      }
      if (this.disposed) return null;
    }
    return { spec, layout, params: {}, native: NativeGenerator.create(spec, layout, weights, this.coreOpts) };
  }

  /** Hands the core over with the best weights, without its training buffers. */
  finish(): GeneratorModel {
    if (this.best !== null) this.core.setWeights(this.best);
    this.core.trim();
    const model: GeneratorModel = { spec: this.spec, layout: this.layout, params: {}, native: this.core };
    this.bestCore?.dispose();
    this.bestCore = null;
    this.disposed = true;
    return model;
  }

  dispose(): void {
    this.disposed = true;
    this.core.dispose();
    this.bestCore?.dispose();
    this.bestCore = null;
  }
}
