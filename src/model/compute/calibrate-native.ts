/**
 * Bounded raking in the native core (native/src/calibrate.{h,cc}): the weights of `calibrate.ts`
 * `rakingSweeps` bit for bit (the reference stays the fallback and test oracle). The core runs the
 * reference's float64 operations in its order (JavaScript's Math.max / Math.min rules,
 * `-ffp-contract=off`) and sums rows in the block order of {@link RAKING_BLOCK_ROWS}, block sums
 * taken on the compute pool and added in order on the calling thread, so threads and SYNTHD_ISA
 * change no bit. It runs synchronously, a slice of steps per call, the generator yielding between
 * (not on the background threads, whose lowered priority is training's); its copy of the pool is
 * freed at the generator's end or on garbage collection.
 */
import { RAKING_BLOCK_ROWS, rakingSettings, type CalibrationMarginal, type RakingOptions } from "../sampling/calibrate";
import { nativeExport } from "./native";

/** The addon's `Raking` class (native/src/calibrate_binding.cc). */
export interface NativeRakingCore {
  /** Runs up to `maxSteps` more marginal steps (one per marginal per sweep); returns steps done. */
  run(maxSteps: number): number;
  /** Sweeps x marginals. */
  stepsTotal(): number;
  /** The final weights (M, summing to 1); Error while steps are left. */
  weights(): Float64Array;
  /** Frees the core's copy of the pool now; later calls throw. Idempotent. */
  dispose(): void;
}

/** The constructor the addon exports as `Raking`. */
export type NativeRakingClass = new (
  columns: readonly Int32Array[],
  marginals: readonly CalibrationMarginal[],
  sweeps: number,
  bound: number,
  minRatio: number,
  blockRows: number,
  initial?: Float64Array | null,
  exactSweeps?: number,
  parallel?: boolean,
) => NativeRakingCore;

/**
 * Row visits (pool rows x marginal steps) per call into the core before the generator yields: a
 * few milliseconds of a worker's event loop per slice; a small pool runs a whole sweep per call.
 */
export const RAKING_SLICE_ROW_VISITS = 1 << 22;

/** The addon's `Raking`, or undefined without the addon (or with a build older than it). */
export function nativeRakingClass(): NativeRakingClass | undefined {
  return nativeExport<NativeRakingClass>("Raking");
}

/**
 * {@link rakingSweeps} in the native core: the same weights and errors (checked at the first
 * `next()`), plus a RangeError for a code outside a marginal's table. Yields after every slice and
 * at the end of every sweep (the value: sweeps done, fractional within one), returns the weights.
 * @param columns M codes per feature (copied; reusable after the first `next()`).
 * @returns undefined when the addon has no raking core (use {@link rakingSweeps}).
 */
export function nativeRakingSweeps(
  columns: readonly Int32Array[],
  marginals: readonly CalibrationMarginal[],
  opts: RakingOptions = {},
): Generator<number, Float64Array, void> | undefined {
  const Raking = nativeRakingClass();
  return Raking && run(Raking, columns, marginals, opts);
}

function* run(Raking: NativeRakingClass, columns: readonly Int32Array[], marginals: readonly CalibrationMarginal[], opts: RakingOptions): Generator<number, Float64Array, void> {
  const { M, sweeps, bound, minRatio, exactSweeps } = rakingSettings(columns, opts);
  const initial = opts.initial ? (opts.initial instanceof Float64Array ? opts.initial : Float64Array.from(opts.initial)) : null;
  const core = new Raking(columns, marginals, sweeps, bound, minRatio, RAKING_BLOCK_ROWS, initial, exactSweeps, opts.parallel ?? true);
  try {
    const nm = marginals.length;
    const slice = Math.max(1, Math.floor(RAKING_SLICE_ROW_VISITS / M));
    for (let s = 0; s < sweeps; s++) {
      if (nm === 0) {
        yield s + 1;
        continue;
      }
      for (let j = 0; j < nm; ) {
        const n = Math.min(slice, nm - j);
        core.run(n);
        j += n;
        yield s + j / nm;
      }
    }
    return core.weights();
  } finally {
    core.dispose();
  }
}
