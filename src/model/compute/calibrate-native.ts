/**
 * Bounded raking in the native core (native/src/calibrate.{h,cc}): the same weights as
 * `calibrate.ts` `rakingSweeps`, bit for bit, at core speed. The reference stays in
 * TypeScript (the JavaScript fallback, and the oracle of test/native-calibrate.test.ts).
 *
 * Why the same bits: the core runs the reference's float64 operations in its order (Math.max /
 * Math.min with JavaScript's NaN and signed-zero rules; no fused multiply-add, `-ffp-contract=off`),
 * and every sum over rows in the block order of {@link RAKING_BLOCK_ROWS}, which the reference
 * follows too. Where the core chooses without a branch (which rows take clipped mass), a row that
 * does not change adds +0 to its block's total, which changes no bit of a sum of non-negative
 * weights. The core sums pairs of blocks on the threads of the process-wide compute pool and adds
 * the block sums in block order on the calling thread, so thread count and scheduling do not
 * change a bit; it has no ISA-specific code, so SYNTHD_ISA does not either
 * (test/native-calibrate.test.ts checks all three against the reference).
 *
 * Memory: the core copies the pool's codes into one byte per code (two or four when a feature has
 * more than 256 or 65,536 codes) and keeps M weights plus partial sums per block of rows (three
 * arrays of the largest table's cells per block: 3 x 13 x 10,000 doubles, 3.1 MB, for a
 * 200,000-row pool against Adult's largest pair). Freed at the generator's end (`return()`
 * included), else when the object is garbage-collected.
 *
 * Yielding: the core runs synchronously on the calling thread (plus the pool's), a slice of
 * marginal steps per call; the generator yields after each slice, so a worker's event loop waits
 * at most one slice (see {@link RAKING_SLICE_ROW_VISITS}). Not on the addon's background threads:
 * those run at a lowered priority meant for training (native/src/train/background.h), and
 * generation's own chunks already run this way (`NativeGenerator.sampleRows`).
 */
import { RAKING_BLOCK_ROWS, rakingSettings, type CalibrationMarginal, type RakingOptions } from "../sampling/calibrate";
import { nativeExport } from "./native";

/** The addon's `Raking` class (native/src/calibrate_binding.cc). */
export interface NativeRakingCore {
  /** Runs up to `maxSteps` more marginal steps (a sweep is one per marginal); returns the steps done in all. */
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
 * 200,000-row pool against Adult's 105 marginals runs 20 steps per call: 6 ms on average on the
 * 2-core target machine (20 of 1,050 steps in 320 ms), at most 12.5 ms idle and 17-18 ms with the
 * host busy (`node dist/bench/calibrate.js`, `longest_slice_ms`, the first call included, which
 * copies the pool); a small pool runs a whole sweep per call.
 */
export const RAKING_SLICE_ROW_VISITS = 1 << 22;

/** The addon's `Raking`, or undefined without the addon (or with a build older than it). */
export function nativeRakingClass(): NativeRakingClass | undefined {
  return nativeExport<NativeRakingClass>("Raking");
}

/**
 * {@link rakingSweeps} in the native core: the same weights bit for bit, the same errors (checked
 * here, at the first `next()`), plus a RangeError for a code outside a marginal's table (which the
 * reference would read past). Yields after every slice of {@link RAKING_SLICE_ROW_VISITS} row
 * visits and at the end of every sweep (at least once per sweep; the value is the sweeps done,
 * a fraction within a sweep), returns the weights.
 * @param columns one Int32Array of M codes per feature (copied; the caller may reuse them after
 *   the first `next()`).
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
