/**
 * The native compute core (native/src/train/): `generator.ts`, `loss.ts`, `adam.ts` and
 * `schedule.ts` in C++ with SIMD micro-kernels and one process-wide thread pool; tfjs stays the
 * reference and the fallback (docs/decisions.md "A native core with a TypeScript reference").
 * Both paths share parameters (flat in `paramShapes` order), loss, gradients (float32, relative
 * error < 1e-4), Adam state and logits, so either resumes the other's checkpoint. `*Async`
 * methods run on the addon's background thread so a worker's JavaScript thread stays free;
 * meanwhile the core's other methods throw "busy" (`NativeGenerator.exclusive` queues callers).
 */
import { type GeneratorSpec, type NamedArrays, paramShapes } from "../generator/generator";
import { nativeAddon } from "./native";

/** What the addon reports about the core: the kernels in use, the CPU's best, tile and threads. */
export interface ComputeInfo {
  /** The kernels in use: `avx512`, `avx2` or `generic`. */
  isa: string;
  detectedIsa: string;
  kernel: string;
  threads: number;
}

/**
 * The addon's `GeneratorCore` class (native/src/train/core_binding.cc). Every method validates
 * its arguments: TypeError for wrong types, RangeError for bad lengths or values, Error for
 * missing targets, a disposed or busy core, or exhausted memory.
 */
export interface NativeGeneratorCore {
  paramCount(): number;
  /** [name, size] per parameter, in flat order (that of `paramShapes`). */
  paramNames(): [string, number][];
  setParams(flat: Float32Array): void;
  /** A copy of the parameters, into `out` (returned; paramCount() values) or a fresh array. */
  getParams(out?: Float32Array): Float32Array;
  setAdamState(t: number, m: Float32Array, v: Float32Array): void;
  /** Adam's step count and a copy of its moments, into `m` and `v` when given (not overlapping). */
  getAdamState(m?: Float32Array, v?: Float32Array): { t: number; m: Float32Array; v: Float32Array };
  /** The loss targets (`targets.ts`); `mode`: the 2-way backward form ; returns it. */
  setTargets(
    oneWay: Float32Array,
    blocks: { f: number; c0: number; c1: number; target: Float32Array }[],
    count: number,
    negEntropy: number,
    mode?: PairMode,
  ): "dense" | "blocks";
  /** Weight alpha >= 0 of the entropy penalty in the gradient; returned losses are the KL alone. */
  setEntropyPenalty(alpha: number): void;
  /** Loss and flat gradient for latents z (n x E, row-major). */
  lossAndGrads(z: Float32Array, n: number): { loss: number; grads: Float32Array };
  /** One Adam step at rate lr; returns the batch loss, NaN (and no update) when not finite. */
  trainStep(z: Float32Array, n: number, lr: number): number;
  /** {@link trainStep} on a background thread: checked and z copied now; busy until done. */
  trainStepAsync(z: Float32Array, n: number, lr: number): Promise<number>;
  evalLoss(z: Float32Array, n: number): number;
  evalLossAsync(z: Float32Array, n: number): Promise<number>;
  busy(): string | null;
  /** Logits, n x D row-major. */
  logits(z: Float32Array, n: number): Float32Array;
  /**
   * Codes (F x n, column-major) of z by the sampling kernel; `logitsOut` (n x D) gets the logits.
   * `extraUniforms` (k x n x F, CPU only): k more rows per latent, (1 + k) x F x n codes in all,
   * into `codesOut` when given (older addons ignore it: use the result).
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
  /** Frees training buffers and Adam's moments (t = 0), keeping weights and targets. */
  trim(): void;
  /** Frees the memory now (after a call in flight); later calls throw. Idempotent. */
  dispose(): void;
  /** `cpu`, or the GPU's name (e.g. `NVIDIA H200`) when the core was created with device `gpu`. */
  device(): string;
}

/** Where a core computes: `cpu`, `gpu` (an error when none can be used) or `auto`. */
export type DevicePreference = "auto" | "cpu" | "gpu";

/** Options of a core: the device, and TF32 tensor cores for the GPU's GEMMs (default off: FP32). */
export interface CoreOptions {
  device?: "cpu" | "gpu";
  tf32?: boolean;
}

/** What the addon found about the CUDA core (native/src/gpu/gpu_loader.h). */
export interface GpuInfo {
  available: boolean;
  device?: string;
  devices: number;
  /** Why not available: the library missing (not built), no driver, no device. */
  reason?: string;
  library: string;
}

/** The core's form of the backward pass's 2-way part ({@link NativeGeneratorCore.setTargets}). */
export type PairMode = "auto" | "dense" | "blocks";

/** The core's exports. */
export interface NativeCoreAddon {
  GeneratorCore: new (
    embeddingDim: number,
    hidden: number,
    blocks: number,
    cardinalities: readonly number[] | Int32Array,
    options?: CoreOptions,
  ) => NativeGeneratorCore;
  /** Whether the CUDA core can be used (absent from addons built before it). */
  gpuInfo?(): GpuInfo;
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

/** {@link nativeCore}'s availability: the reason when not, the kernel and thread info when so. */
export function nativeCoreStatus(): NativeCoreStatus {
  cached ??= loadCore();
  return { ...cached.status };
}

/** Whether this process can compute on a GPU (CUDA core built, loaded, a device answered). */
export function gpuStatus(): GpuInfo {
  const addon = nativeCore();
  if (addon === undefined) return { available: false, devices: 0, reason: `native compute core unavailable: ${nativeCoreStatus().reason}`, library: "" };
  if (typeof addon.gpuInfo !== "function") return { available: false, devices: 0, reason: "the addon predates the CUDA core (rerun `node native/build.js`)", library: "" };
  return addon.gpuInfo();
}

/** The device for a preference: `cpu`; `gpu` or an Error saying why not; `auto`: a GPU if found. */
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

/** Named views into one flat vector (no copy). @throws RangeError when `flat`'s size is wrong. */
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

/** Fresh named copies of a flat vector (inverse of {@link flattenParams}). @throws RangeError. */
export function unflattenParams(spec: GeneratorSpec, flat: Float32Array): NamedArrays {
  const out: NamedArrays = {};
  for (const [name, view] of Object.entries(viewParams(spec, flat))) out[name] = view.slice();
  return out;
}
