/** A generator on the native core (`native-core.ts`), one call at a time per core. */
import type { AdamState } from "../training/adam";
import type { GenerationInputs } from "../sampling/draws";
import { type GeneratorSpec, type NamedArrays, paramShapes } from "../generator/generator";
import { lossTargets, type Layout, type MarginalTargets } from "../generator/targets";
import { flattenParams, nativeCore, nativeCoreStatus, resolveDevice, unflattenParams, viewParams, type NativeGeneratorCore, type PairMode, type DevicePreference } from "./native-core";

/** Rows per native generation call of {@link NativeGenerator.sampleRows} (it yields between). */
export const NATIVE_GENERATE_CHUNK = 8192;
/** The same on a GPU core, large so that a call's transfers and launches are amortised. */
export const GPU_GENERATE_CHUNK = 1 << 18;

/** A generator on the native core: weights, Adam state and targets live in C++. */
export class NativeGenerator {
  /** The end of the last task queued by {@link exclusive} (settles, never rejects). */
  private tail: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly spec: GeneratorSpec,
    readonly layout: Layout,
    private readonly core: NativeGeneratorCore,
  ) {}

  /**
   * Runs `fn` after every task queued before it on this generator (FIFO), settling with its
   * result, so no task sees another's busy error or swapped weights. Do not nest on one generator.
   */
  exclusive<T>(fn: () => T | Promise<T>): Promise<T> {
    const run = this.tail.then(fn);
    this.tail = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** The asynchronous call in flight on the core, or null ({@link NativeGeneratorCore.busy}). */
  get busy(): string | null {
    return this.core.busy();
  }

  /**
   * A core for `spec` / `layout` holding `weights`; `opts.device` (default `cpu`) and `opts.tf32`.
   * @throws Error when the core is unavailable, has another parameter layout (callers fall back to
   *   tfjs) or device `gpu` cannot be used; RangeError for weights of a wrong size or non-finite.
   */
  static create(spec: GeneratorSpec, layout: Layout, weights: NamedArrays, opts: { device?: DevicePreference; tf32?: boolean } = {}): NativeGenerator {
    const addon = nativeCore();
    if (addon === undefined) throw new Error(`native compute core unavailable: ${nativeCoreStatus().reason}`);
    if (layout.width !== spec.outputDim) throw new RangeError(`layout width ${layout.width} differs from outputDim ${spec.outputDim}`);
    const shapes = paramShapes(spec);
    const device = resolveDevice(opts.device ?? "cpu");
    const core = new addon.GeneratorCore(spec.embeddingDim, spec.hidden, spec.blocks, layout.cardinalities, { device, tf32: opts.tf32 ?? false });
    try {
      // The core must implement exactly the generator of generator.ts (names, sizes, order).
      const names = core.paramNames();
      const same =
        names.length === shapes.length &&
        shapes.every(([name, shape], i) => names[i][0] === name && names[i][1] === shape.reduce((a, b) => a * b, 1));
      if (!same) throw new Error("the native core does not implement this generator's parameters (generator.ts changed?)");
      core.setParams(flattenParams(spec, weights));
    } catch (e) {
      core.dispose();
      throw e;
    }
    return new NativeGenerator(spec, layout, core);
  }

  /** `cpu`, or the GPU's name (`config.device` reports it). */
  get device(): string {
    return this.core.device();
  }

  /** The underlying addon object (tests, benchmarks). */
  get raw(): NativeGeneratorCore {
    return this.core;
  }

  setWeights(weights: NamedArrays): void {
    this.core.setParams(flattenParams(this.spec, weights));
  }

  /** A copy of the weights, by name: views into `into` (flat, overwritten) or a fresh flat copy. */
  weights(into?: Float32Array): NamedArrays {
    return viewParams(this.spec, this.core.getParams(into));
  }

  setAdamState(state: AdamState): void {
    this.core.setAdamState(state.t, flattenParams(this.spec, state.m), flattenParams(this.spec, state.v));
  }

  /** A copy of Adam's state by name (`adam.ts` form): views into `into.m` / `into.v` or fresh. */
  adamState(into?: { m: Float32Array; v: Float32Array }): AdamState {
    const s = this.core.getAdamState(into?.m, into?.v);
    return { t: s.t, m: viewParams(this.spec, s.m), v: viewParams(this.spec, s.v) };
  }

  /** Sets the loss targets (`buildTargets`); returns the 2-way mode used ({@link PairMode}). */
  setTargets(targets: MarginalTargets, mode: PairMode = "auto"): "dense" | "blocks" {
    if (targets.layout.width !== this.spec.outputDim) throw new RangeError("targets belong to another layout");
    const weighted = lossTargets(targets); // the weights folded in (targets.ts)
    return this.core.setTargets(
      weighted.oneWay,
      weighted.blocks,
      targets.count,
      targets.negEntropy,
      mode,
    );
  }

  /** The entropy penalty's weight (>= 0, else RangeError). */
  setEntropyPenalty(alpha: number): void {
    this.core.setEntropyPenalty(alpha);
  }

  /** Loss and gradients by parameter name for latents z (n x E). */
  lossAndGrads(z: Float32Array, n: number): { loss: number; grads: NamedArrays } {
    const { loss, grads } = this.core.lossAndGrads(z, n);
    return { loss, grads: unflattenParams(this.spec, grads) };
  }

  /** One Adam step at rate lr on latents z (n x E): the batch loss (NaN: no update). */
  trainStep(z: Float32Array, n: number, lr: number): number {
    return this.core.trainStep(z, n, lr);
  }

  /** {@link trainStep} on a background thread; call it inside {@link exclusive} when shared. */
  trainStepAsync(z: Float32Array, n: number, lr: number): Promise<number> {
    return this.core.trainStepAsync(z, n, lr);
  }

  /** The loss over n latents (all rows, chunked). */
  evalLoss(z: Float32Array, n: number): number {
    return this.core.evalLoss(z, n);
  }

  /** {@link evalLoss} on a background thread, with the rules of {@link trainStepAsync}. */
  evalLossAsync(z: Float32Array, n: number): Promise<number> {
    return this.core.evalLossAsync(z, n);
  }

  /** Logits (n x D) for latents z. */
  logits(z: Float32Array, n: number): Float32Array {
    return this.core.logits(z, n);
  }

  /**
   * One forward pass and the kernel for n latents: the codes (F x n, column-major, from `uniforms`
   * n x F) and, into `logitsOut` (n x D), their logits, which seeded generation needs too.
   * @throws RangeError for bad lengths or uniforms, with code LOGITS_NOT_FINITE for bad logits.
   */
  generateWithLogits(z: Float32Array, n: number, uniforms: Float64Array, temperature: number, topP: number | null, logitsOut: Float32Array): Int32Array {
    return this.core.generate(z, n, uniforms, temperature, topP, logitsOut);
  }

  /**
   * Codes for the rows of `inputs`, as `sample-rows.ts` `sampleRows`; with `extraUniforms` (k x n x
   * F, CPU only) k more rows per latent, arrays (1 + k) x n long, set j's rows at [j n, (j + 1) n).
   * Chunks of {@link NATIVE_GENERATE_CHUNK} rows, yielding and polling `shouldAbort` between. The
   * arrays view one buffer (`out` or new), feature f's at [f (1 + k) n, (f + 1) (1 + k) n).
   * @throws Error when `shouldAbort` fires; RangeError for bad options, refused logits, or
   *   `extraUniforms` / `out` of a bad length (or extra uniforms on a GPU core).
   */
  async sampleRows(
    inputs: GenerationInputs,
    opts: { temperature?: number; topP?: number | null; yieldFn?: () => Promise<void>; shouldAbort?: () => boolean } = {},
    extraUniforms?: Float64Array,
    out?: Int32Array,
  ): Promise<Int32Array[]> {
    const { n, latents, uniforms } = inputs;
    const E = this.spec.embeddingDim;
    const F = this.layout.cardinalities.length;
    const k = extraUniforms ? extraUniforms.length / (n * F) : 0;
    if (!Number.isInteger(k) || (extraUniforms && k < 1)) throw new RangeError(`extraUniforms must hold k x n x F values, k >= 1`);
    const total = (1 + k) * n;
    if (out !== undefined && out.length !== F * total) throw new RangeError(`out must hold (1 + k) x n x F = ${F * total} values, got ${out.length}`);
    const temperature = opts.temperature ?? 1;
    const topP = opts.topP ?? null;
    const all = out ?? new Int32Array(F * total);
    const columns = Array.from({ length: F }, (_, f) => all.subarray(f * total, (f + 1) * total));
    const chunk = this.core.device() === "cpu" ? NATIVE_GENERATE_CHUNK : GPU_GENERATE_CHUNK;
    // The chunks' codes, one array for all of them (the last, shorter chunk uses its beginning).
    const chunkCodes = new Int32Array((1 + k) * Math.min(chunk, n) * F);
    let extra: Float64Array | undefined;
    for (let r0 = 0; r0 < n; r0 += chunk) {
      if (r0 > 0) {
        if (opts.yieldFn) await opts.yieldFn();
        if (opts.shouldAbort?.()) throw new Error("generation aborted");
      }
      const m = Math.min(chunk, n - r0);
      if (extraUniforms) {
        // The chunk's rows of each set, one after another (a view when there is one set).
        if (k === 1) extra = extraUniforms.subarray(r0 * F, (r0 + m) * F);
        else {
          extra = new Float64Array(k * m * F);
          for (let j = 0; j < k; j++) extra.set(extraUniforms.subarray((j * n + r0) * F, (j * n + r0 + m) * F), j * m * F);
        }
      }
      const codes = this.core.generate(latents.subarray(r0 * E, (r0 + m) * E), m, uniforms.subarray(r0 * F, (r0 + m) * F), temperature, topP, undefined, extra, chunkCodes.subarray(0, (1 + k) * m * F));
      for (let j = 0; j <= k; j++) {
        for (let f = 0; f < F; f++) columns[f].set(codes.subarray((j * F + f) * m, (j * F + f + 1) * m), j * n + r0);
      }
    }
    return columns;
  }

  /** Frees training buffers and Adam's moments (see {@link NativeGeneratorCore.trim}). */
  trim(): void {
    this.core.trim();
  }

  /** Frees native memory now or when the call in flight ends; queued tasks then meet the error. */
  dispose(): void {
    this.core.dispose();
  }
}
