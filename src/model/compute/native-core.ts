/**
 * The native compute core (native/src/train/): the generator of `generator.ts`, the KL marginal
 * loss of `loss.ts`, Adam of `adam.ts` and the schedule of `schedule.ts`, in C++ with AVX-512 /
 * AVX2+FMA / portable micro-kernels and one process-wide thread pool. tfjs (`generator.ts` & co.)
 * stays the reference and the fallback (docs/decisions.md "A native core with a TypeScript
 * reference").
 *
 * Equivalence with the tfjs path (checked by test/native-core.test.ts):
 * - same architecture, parameter names, shapes and order (`paramShapes`); the core holds the
 *   parameters as one flat float32 vector in that order ({@link flattenParams});
 * - same loss and gradients for the same weights and latents (float32; relative error < 1e-4);
 * - same Adam update (tfjs operation order, float32) and the same Adam state (t, m, v by name);
 * - same logits, so a model trained on either path generates on the other.
 * So a checkpoint (`checkpoint.ts`) does not record which path wrote it: weights, Adam moments
 * and schedule are stored by parameter name in both cases, and either path resumes it.
 *
 * Loading: the core lives in the same addon as the sampling kernel (`native.ts` loads it once per
 * JavaScript realm; SYNTHD_DISABLE_NATIVE=1 disables both), and so does the raking of calibrated
 * generation (class `Raking`, typed and wrapped in `calibrate-native.ts`). A stale addon without the core
 * (built before it existed) leaves {@link nativeCore} undefined, with the reason in
 * {@link nativeCoreStatus}.
 *
 * Threads: the addon's pool is shared by every thread of the process; one training model uses
 * every core, several concurrent ones share them (see native/src/train/thread_pool.h).
 * SYNTHD_THREADS=N caps it; SYNTHD_ISA=generic|avx2|avx512 lowers the kernel choice (tests).
 *
 * Asynchronous calls: `trainStepAsync` and `evalLossAsync` run on a background thread of the addon
 * (native/src/train/background.h, not libuv's pool), so the calling JavaScript thread (an engine
 * worker) stays free for other models' requests while one model trains (docs/decisions.md
 * "Training one model never stalls requests for another"). While one is in flight, every other
 * method of the same core throws ("GeneratorCore is busy"), never races; `dispose` is deferred to
 * the end of the call.
 * `NativeGenerator.exclusive` (`native-generator.ts`) queues work on one core in order, so callers that share a core
 * (the trainer and a generate snapshotting the training model's weights) wait for each other
 * instead of meeting that error.
 */
import { type GeneratorSpec, type NamedArrays, paramShapes } from "../generator/generator";
import { nativeAddon } from "./native";

/** What the addon reports about the core: the kernel in use, the CPU's best, the pool size. */
export interface ComputeInfo {
  /** The kernels in use: `avx512`, `avx2` or `generic`. */
  isa: string;
  /** The best this CPU supports. */
  detectedIsa: string;
  /** Micro-kernel tile, rows x columns (e.g. `8x32`). */
  kernel: string;
  /** Threads one job uses (pool size, the caller included). */
  threads: number;
}

/**
 * The addon's `GeneratorCore` class (native/src/train/core_binding.cc). Every method validates its
 * arguments: TypeError for wrong types; RangeError for wrong lengths, non-finite values, zero rows,
 * bad block spans; Error for missing targets, a disposed core, a core busy with an asynchronous
 * call ({@link NativeGeneratorCore.trainStepAsync}), or exhausted memory.
 */
export interface NativeGeneratorCore {
  /** Scalar parameters (length of every flat array). */
  paramCount(): number;
  /** [name, size] per parameter, in flat order (that of `paramShapes`). */
  paramNames(): [string, number][];
  /** Copies in all parameters (finite float32, flat order). */
  setParams(flat: Float32Array): void;
  /**
   * A copy of the parameters, into `out` (returned; paramCount() values) or a fresh array. Reusing
   * `out` saves an allocation of the whole vector (and its page faults).
   */
  getParams(out?: Float32Array): Float32Array;
  /** Copies in Adam's state: step count t and moments (v >= 0). */
  setAdamState(t: number, m: Float32Array, v: Float32Array): void;
  /** Adam's step count and a copy of its moments, into `m` and `v` when given (paramCount() values each, not overlapping). */
  getAdamState(m?: Float32Array, v?: Float32Array): { t: number; m: Float32Array; v: Float32Array };
  /**
   * The loss targets, as `targets.ts` builds them. `mode` picks how the 2-way backward pass is
   * computed (same result): `blocks` (per pair block, memory proportional to the given pairs),
   * `dense` (one product with a D x D symmetric matrix holding the blocks), `auto` (default: dense
   * when D <= 4096 and the pairs cover at least 25% of the table, the rule of loss.ts). Returns
   * the mode used.
   */
  setTargets(
    oneWay: Float32Array,
    blocks: { f: number; c0: number; c1: number; target: Float32Array }[],
    count: number,
    negEntropy: number,
    mode?: PairMode,
  ): "dense" | "blocks";
  /**
   * Weight alpha >= 0 of the entropy penalty in the gradient (loss.ts `entropyPenalty`); the
   * losses returned stay the KL alone. Default 0.
   */
  setEntropyPenalty(alpha: number): void;
  /** Loss and flat gradient for latents z (n x E, row-major). */
  lossAndGrads(z: Float32Array, n: number): { loss: number; grads: Float32Array };
  /** One Adam step at rate lr; returns the batch loss, NaN (and no update) when not finite. */
  trainStep(z: Float32Array, n: number, lr: number): number;
  /**
   * {@link trainStep} on a background thread: the arguments are checked (and z copied) now, throwing
   * as `trainStep` does; the promise resolves with the loss (NaN, no update, when not finite) and
   * rejects only when the computation fails (out of memory). Until it settles, every other method
   * of this core throws Error "GeneratorCore is busy: trainStepAsync is in flight ...", and
   * `dispose` frees the memory only once the step has ended.
   */
  trainStepAsync(z: Float32Array, n: number, lr: number): Promise<number>;
  /** Loss over n latents (chunked), e.g. the validation set. */
  evalLoss(z: Float32Array, n: number): number;
  /** {@link evalLoss} on a background thread, with the rules of {@link trainStepAsync}. */
  evalLossAsync(z: Float32Array, n: number): Promise<number>;
  /** The asynchronous method in flight (`trainStepAsync` / `evalLossAsync`), or null. */
  busy(): string | null;
  /** Logits, n x D row-major. */
  logits(z: Float32Array, n: number): Float32Array;
  /**
   * Codes (F x n, column-major) from logits of z and the sampling kernel (`sampling.ts` rules);
   * `logitsOut` (n x D), when given, also receives the logits of the same forward pass.
   * `extraUniforms` (k x n x F, CPU cores only): k more rows per latent from the same per-feature
   * distributions, set j's codes after set j - 1's ((1 + k) x F x n codes in all); softmax and
   * nucleus are computed once for all the sets. `codesOut` ((1 + k) x F x n), when given, receives
   * the codes and is returned instead of a new array (an addon built before it ignores it and
   * returns a new one: use the returned array).
   */
  generate(
    z: Float32Array,
    n: number,
    uniforms: Float64Array,
    temperature: number,
    topP: number | null,
    logitsOut?: Float32Array,
    extraUniforms?: Float64Array,
    codesOut?: Int32Array,
  ): Int32Array;
  /**
   * Frees the training and generation buffers and Adam's moments (t back to 0), keeping weights
   * and targets: for a finished model kept for generation. Later calls reallocate what they need.
   */
  trim(): void;
  /** Frees the memory now (at the end of an asynchronous call in flight); later calls throw. Idempotent. */
  dispose(): void;
  /** `cpu`, or the GPU's name (e.g. `NVIDIA H200`) when the core was created with device `gpu`. */
  device(): string;
}

/** Where a core computes: `cpu`, `gpu` (an error when none can be used) or `auto` (a GPU when one answers). */
export type DevicePreference = "auto" | "cpu" | "gpu";

/** Options of a core: the device, and TF32 tensor cores for the GPU's GEMMs (default off: FP32). */
export interface CoreOptions {
  device?: "cpu" | "gpu";
  tf32?: boolean;
}

/** What the addon found about the CUDA core (native/src/gpu/gpu_loader.h). */
export interface GpuInfo {
  /** The CUDA core loaded and a GPU answered. */
  available: boolean;
  /** Device 0's name, when available. */
  device?: string;
  /** CUDA devices seen. */
  devices: number;
  /** Why not available: the library missing (not built), no driver, no device. */
  reason?: string;
  /** The library path tried. */
  library: string;
}

/** How the core computes the 2-way part of the backward pass (see {@link NativeGeneratorCore.setTargets}). */
export type PairMode = "auto" | "dense" | "blocks";

/** The core's exports. */
export interface NativeCoreAddon {
  /** The generator of generator.ts with `blocks` residual blocks. */
  GeneratorCore: new (
    embeddingDim: number,
    hidden: number,
    blocks: number,
    cardinalities: readonly number[] | Int32Array,
    options?: CoreOptions,
  ) => NativeGeneratorCore;
  /** Whether the CUDA core can be used (absent from addons built before it). */
  gpuInfo?(): GpuInfo;
  /** `learningRate` of schedule.ts with explicit constants. */
  learningRate(peak: number, totalSteps: number, warmupSteps: number, floorFraction: number, step: number): number;
  computeInfo(): ComputeInfo;
}

/** Whether the core is usable here, and why not. */
export interface NativeCoreStatus {
  available: boolean;
  reason?: string;
  info?: ComputeInfo;
}

let cached: { addon?: NativeCoreAddon; status: NativeCoreStatus } | undefined;

function loadCore(): { addon?: NativeCoreAddon; status: NativeCoreStatus } {
  const mod = nativeAddon() as unknown as Partial<NativeCoreAddon> | undefined;
  if (mod === undefined) return { status: { available: false, reason: "the native addon is not loaded (see computeStatus())" } };
  if (typeof mod.GeneratorCore !== "function" || typeof mod.computeInfo !== "function" || typeof mod.learningRate !== "function") {
    return { status: { available: false, reason: "the addon has no training core (stale build? rerun `node native/build.js`)" } };
  }
  const addon = mod as NativeCoreAddon;
  return { addon, status: { available: true, info: addon.computeInfo() } };
}

/** The core's exports, or undefined when the addon (or its core) is not available. */
export function nativeCore(): NativeCoreAddon | undefined {
  cached ??= loadCore();
  return cached.addon;
}

/** {@link nativeCore} with the reason when unavailable and the kernel/thread info when available. */
export function nativeCoreStatus(): NativeCoreStatus {
  cached ??= loadCore();
  return { ...cached.status };
}

/**
 * Whether this process can compute on a GPU: the CUDA core built (`native/build.js` builds it where
 * nvcc and cuBLAS are found), loaded, and a CUDA device answered. Never throws.
 */
export function gpuStatus(): GpuInfo {
  const addon = nativeCore();
  if (addon === undefined) return { available: false, devices: 0, reason: `native compute core unavailable: ${nativeCoreStatus().reason}`, library: "" };
  if (typeof addon.gpuInfo !== "function") return { available: false, devices: 0, reason: "the addon predates the CUDA core (rerun `node native/build.js`)", library: "" };
  return addon.gpuInfo();
}

/**
 * The device a core uses for a `config.device` preference: `cpu` -> `cpu`; `gpu` -> `gpu`, or an
 * Error naming why no GPU can be used; `auto` -> `gpu` when {@link gpuStatus} finds one, else `cpu`.
 */
export function resolveDevice(preference: DevicePreference = "auto"): "cpu" | "gpu" {
  if (preference === "cpu") return "cpu";
  const st = gpuStatus();
  if (st.available) return "gpu";
  if (preference === "gpu") throw new Error(`device "gpu" is unavailable: ${st.reason}`);
  return "cpu";
}

/** Parameters as one flat float32 vector in `paramShapes` order (the core's layout). */
export function flattenParams(spec: GeneratorSpec, arrays: NamedArrays): Float32Array {
  const shapes = paramShapes(spec);
  const total = shapes.reduce((s, [, sh]) => s + sh.reduce((a, b) => a * b, 1), 0);
  const out = new Float32Array(total);
  let at = 0;
  for (const [name, shape] of shapes) {
    const size = shape.reduce((a, b) => a * b, 1);
    const a = arrays[name];
    if (!(a instanceof Float32Array) || a.length !== size) throw new RangeError(`parameter ${name} missing or not of size ${size}`);
    out.set(a, at);
    at += size;
  }
  return out;
}

/**
 * Named views into one flat vector in `paramShapes` order (no copy: writes through either side
 * show in the other). @throws RangeError when `flat` is not of the generator's size.
 */
export function viewParams(spec: GeneratorSpec, flat: Float32Array): NamedArrays {
  const out: NamedArrays = {};
  let at = 0;
  for (const [name, shape] of paramShapes(spec)) {
    const size = shape.reduce((a, b) => a * b, 1);
    out[name] = flat.subarray(at, at + size);
    at += size;
  }
  if (at !== flat.length) throw new RangeError(`flat parameters have ${flat.length} values, expected ${at}`);
  return out;
}

/**
 * The inverse of {@link flattenParams}: fresh named arrays, each its own copy ({@link viewParams}
 * sliced). @throws RangeError when `flat` is not of the generator's size.
 */
export function unflattenParams(spec: GeneratorSpec, flat: Float32Array): NamedArrays {
  const out: NamedArrays = {};
  for (const [name, view] of Object.entries(viewParams(spec, flat))) out[name] = view.slice();
  return out;
}
