/**
 * Long element-wise loops of the training loop, cut into slices with a yield between them, so that
 * training one model never stalls requests for another (docs/decisions.md): an engine worker's
 * JavaScript thread serves every model pinned to it, so a loop over millions of values (the
 * latents of a large batch, the weight average of the large model) would hold up a generate or a
 * delete of another model for its whole length. Between slices, `yieldFn` (the worker's
 * `setImmediate`) lets the thread's other tasks run.
 *
 * Results are bit-identical to the loop in one piece: the same operations on the same elements in
 * the same order, only interrupted.
 */
import type { Rng } from "../sampling/xoshiro";

/**
 * Values per slice: 65,536 floats, about 2.5 ms of normal draws or 0.2 ms of the weight-average
 * update on the reference machine (2 cores). Even, so that slices of a normal fill take whole
 * Box-Muller pairs.
 */
export const SLICE = 1 << 16;

/** Awaited between slices; `undefined` runs everything at once. */
export type YieldFn = (() => Promise<void>) | undefined;

/** Calls `body(i0, i1)` for consecutive slices [i0, i1) of [0, length), `slice` long, awaiting `yieldFn` between them. */
async function forSlices(length: number, slice: number, yieldFn: YieldFn, body: (i0: number, i1: number) => void): Promise<void> {
  for (let i0 = 0; i0 < length; i0 += slice) {
    if (i0 > 0 && yieldFn) await yieldFn();
    body(i0, Math.min(length, i0 + slice));
  }
}

/**
 * `rng.fillNormal(out, scale)` in slices of {@link SLICE} values with `yieldFn` between them. The
 * same draws as one fill: every slice but the last has an even length, so no Box-Muller pair is
 * split (xoshiro.ts: a fill of n normals consumes exactly ceil(n / 2) pairs). Returns `out`.
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
 * The weight-average update `avg[i] = beta * avg[i] + (1 - beta) * latest[i]` (float32 storage,
 * double arithmetic, as the one-piece loop) over flat arrays of equal length, in slices with
 * `yieldFn` between them. Slices here are 4x {@link SLICE}: the update is cheap per element.
 */
export async function emaSliced(avg: Float32Array, latest: Float32Array, beta: number, yieldFn: YieldFn): Promise<void> {
  if (avg.length !== latest.length) throw new RangeError(`weight average has ${avg.length} values, latest weights ${latest.length}`);
  await forSlices(avg.length, 4 * SLICE, yieldFn, (i0, i1) => {
    for (let i = i0; i < i1; i++) avg[i] = beta * avg[i] + (1 - beta) * latest[i];
  });
}
