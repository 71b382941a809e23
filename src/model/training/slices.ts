/**
 * Long element-wise loops of training cut into slices, awaiting `yieldFn` (the worker's
 * `setImmediate`) between them, so that a worker thread serving many models never stalls another
 * model's requests for a loop's whole length (docs/decisions.md "Training one model never stalls
 * requests for another"). Results are bit-identical to the loop in one piece.
 */
import type { Rng } from "../sampling/xoshiro";

/** Values per slice: a few milliseconds of work at most. Even, so normal fills keep whole pairs. */
export const SLICE = 1 << 16;

/** Awaited between slices; `undefined` runs everything at once. */
export type YieldFn = (() => Promise<void>) | undefined;

/** Calls `body(i0, i1)` for consecutive slices of [0, length), awaiting `yieldFn` between them. */
async function forSlices(length: number, slice: number, yieldFn: YieldFn, body: (i0: number, i1: number) => void): Promise<void> {
  for (let i0 = 0; i0 < length; i0 += slice) {
    if (i0 > 0 && yieldFn) await yieldFn();
    body(i0, Math.min(length, i0 + slice));
  }
}

/**
 * `rng.fillNormal(out, scale)` in slices of {@link SLICE}; the same draws as one fill, since no
 * slice but the last splits a Box-Muller pair. Returns `out`.
 */
export async function fillNormalSliced(rng: Rng, out: Float32Array, scale: number, yieldFn: YieldFn): Promise<Float32Array> {
  if (out.length <= SLICE || yieldFn === undefined) return rng.fillNormal(out, scale);
  await forSlices(out.length, SLICE, yieldFn, (i0, i1) => rng.fillNormal(out.subarray(i0, i1), scale));
  return out;
}

/** `a[i] += b[i]` for every i (equal lengths), in slices with `yieldFn` between them. */
export async function addSliced(a: Float32Array, b: Float32Array, yieldFn: YieldFn): Promise<void> {
  await forSlices(a.length, SLICE, yieldFn, (i0, i1) => {
    for (let i = i0; i < i1; i++) a[i] += b[i];
  });
}

/**
 * `avg[i] = beta * avg[i] + (1 - beta) * latest[i]` (float32 storage, double arithmetic) in slices
 * of 4x {@link SLICE} (the update is cheap per element).
 */
export async function emaSliced(avg: Float32Array, latest: Float32Array, beta: number, yieldFn: YieldFn): Promise<void> {
  if (avg.length !== latest.length) throw new RangeError(`weight average has ${avg.length} values, latest weights ${latest.length}`);
  await forSlices(avg.length, 4 * SLICE, yieldFn, (i0, i1) => {
    for (let i = i0; i < i1; i++) avg[i] = beta * avg[i] + (1 - beta) * latest[i];
  });
}
