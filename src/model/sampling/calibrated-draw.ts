/**
 * The calibrated draw (a generate request's default): a pool of several rows per latent
 * (`calibrationPool`), raked to the model's 1-way and 2-way targets (`calibrate.ts`), a systematic
 * sample of the pool, rule repair (`rule-repair.ts`), and the codes packed for the reply.
 */
import { CALIBRATION_EXACT_SWEEPS, CALIBRATION_POOL_FACTOR, CALIBRATION_RAKING_PARALLEL, CALIBRATION_ROWS_PER_LATENT, CALIBRATION_SWEEPS, rakingSweeps, systematicSample, type CalibrationMarginal, type RakingOptions } from "./calibrate";
import { repairPool, type PoolRule } from "./rule-repair";
import { nativeRakingSweeps } from "../compute/calibrate-native";
import { drawRequest } from "./draws";
import { Rng } from "./xoshiro";
import { checkNumRows, drawInputs, inputBuffers, releaseInputs, type DrawnSource } from "./inputs";
import { betweenChunks, sampleRowsPerLatent, type SamplingOptions } from "./sample-rows";
import type { GeneratorModel } from "../generator/model";

/** Bounded raking of the pool (native core or reference, bit-identical), yielding in between. */
export async function rake(
  model: GeneratorModel,
  columns: Int32Array[],
  marginals: readonly CalibrationMarginal[],
  opts: SamplingOptions & RakingOptions,
): Promise<Float64Array> {
  const sweeps = (model.native && nativeRakingSweeps(columns, marginals, opts)) || rakingSweeps(columns, marginals, opts);
  let step = sweeps.next();
  try {
    while (!step.done) {
      await betweenChunks(opts);
      step = sweeps.next();
    }
  } finally {
    if (!step.done) sweeps.return(new Float64Array(0)); // aborted: free the native copy now
  }
  return step.value;
}

/** The latents of the pool's extra uniform sets: none (E = 0; `drawRequest` draws uniforms). */
const NO_LATENTS = new Float32Array(0);

/**
 * The pool of {@link sampleCalibrated}: R = {@link CALIBRATION_ROWS_PER_LATENT} rows per latent of
 * the plain draw of `seed` for L = ceil(CALIBRATION_POOL_FACTOR x n / R) rows, M = R x L. Rows
 * [0, L) are that plain draw; set k >= 1 reuses its latents with the uniforms of the stream seeded
 * by the k-th value of `Rng.fromSeed(seed)`, so a seed's plain draw never depends on R.
 * @returns M codes per feature (views of a reused buffer), the stream past the sets' seeds, and
 *   `release`, which returns the buffer once the columns are no longer read.
 */
export async function calibrationPool(
  model: GeneratorModel,
  source: { numRows: number; seed: number },
  privacyNoise: number,
  opts: SamplingOptions = {},
): Promise<{ columns: Int32Array[]; rng: Rng; release: () => void }> {
  const { numRows: n, seed } = source;
  const rng = Rng.fromSeed(seed);
  const E = model.spec.embeddingDim;
  const F = model.layout.features.length;
  const R = CALIBRATION_ROWS_PER_LATENT;
  const L = Math.ceil((CALIBRATION_POOL_FACTOR * n) / R);
  const inputs = drawInputs({ numRows: L, seed }, E, F, privacyNoise);
  const extra = inputBuffers.float64((R - 1) * L * F);
  const codes = inputBuffers.int32(R * L * F);
  try {
    for (let k = 1; k < R; k++) {
      const uniforms = extra.subarray((k - 1) * L * F, k * L * F);
      drawRequest({ seed: rng.nextUint32(), rows: L, latents: NO_LATENTS, drawLatents: false, sigma: 0, uniforms });
    }
    const columns = await sampleRowsPerLatent(model, inputs, extra, opts, codes);
    return { columns, rng, release: () => inputBuffers.give(codes) };
  } catch (err) {
    inputBuffers.give(codes);
    throw err;
  } finally {
    releaseInputs(inputs);
    inputBuffers.give(extra);
  }
}

/**
 * The picked pool rows in the picked order (column f, row i: `pool[f][sorted[perm[i]]]`), each
 * column first copied in ascending order so the shuffle reads a small, cached copy.
 */
export function gatherRows(pool: readonly Int32Array[], sorted: Int32Array, perm: Int32Array): Int32Array[] {
  const F = pool.length;
  const n = sorted.length;
  const out = new Int32Array(F * n);
  const ascending = inputBuffers.int32(n);
  try {
    for (let f = 0; f < F; f++) {
      gatherAscending(pool[f], sorted, ascending);
      permuteInto(ascending, perm, out, f * n);
    }
  } finally {
    inputBuffers.give(ascending);
  }
  return Array.from({ length: F }, (_, f) => out.subarray(f * n, (f + 1) * n));
}

/** to[j] = column[sorted[j]]. */
function gatherAscending(column: Int32Array, sorted: Int32Array, to: Int32Array): void {
  for (let j = 0; j < sorted.length; j++) to[j] = column[sorted[j]];
}

/** out[at + i] = from[perm[i]]. */
function permuteInto(from: Int32Array, perm: Int32Array, out: Int32Array, at: number): void {
  for (let i = 0; i < perm.length; i++) out[at + i] = from[perm[i]];
}

/** The F x n codes of `columns` as one Int32Array: their buffer if they tile it, else a copy. */
export function packedColumns(columns: readonly Int32Array[]): Int32Array {
  const F = columns.length;
  const n = F > 0 ? columns[0].length : 0;
  const buffer = F > 0 ? columns[0].buffer : undefined;
  let views = buffer !== undefined && columns[0].byteOffset === 0 && buffer.byteLength === F * n * 4;
  for (let f = 0; views && f < F; f++) views = columns[f].buffer === buffer && columns[f].length === n && columns[f].byteOffset === f * n * 4;
  if (views) return new Int32Array(buffer!, 0, F * n);
  const codes = new Int32Array(F * n);
  columns.forEach((c, f) => codes.set(c, f * n));
  return codes;
}

/** Tag of the seed of the pool's rule repair, apart from the pool's own stream. */
export const REPAIR_SEED_TAG = 0x52554c45;

/**
 * Calibrated generation (method in `calibrate.ts`): the pool of {@link calibrationPool}, rule
 * repair with its own stream (seed xor {@link REPAIR_SEED_TAG}), raking to `marginals`, then n
 * distinct rows by systematic sampling, shuffled. One stream seeded with `seed` gives, in order,
 * the pool's set seeds, the sample's start and the shuffle; identical codes whichever path rakes.
 * @returns n codes per feature (views of one F x n array) and the seed used.
 * @throws InputError for num_rows outside 1..MAX_ROWS_PER_REQUEST; Error when `shouldAbort` fires.
 */
export async function sampleCalibrated(
  model: GeneratorModel,
  source: DrawnSource,
  privacyNoise: number,
  marginals: readonly CalibrationMarginal[],
  opts: SamplingOptions & RakingOptions = {},
  rules?: readonly PoolRule[],
): Promise<{ columns: Int32Array[]; seed: number }> {
  const n = source.numRows;
  checkNumRows(n);
  const seed = source.seed ?? Rng.randomSeed();
  const { columns: pool, rng, release } = await calibrationPool(model, { numRows: n, seed }, privacyNoise, opts);
  try {
    await betweenChunks(opts); // the thread is given back between the pool and its repair and raking
    if (rules && rules.length > 0) repairPool(pool, rules, (seed ^ REPAIR_SEED_TAG) >>> 0);
    const weights = await rake(model, pool, marginals, {
      ...opts,
      sweeps: opts.sweeps ?? CALIBRATION_SWEEPS,
      exactSweeps: opts.exactSweeps ?? CALIBRATION_EXACT_SWEEPS,
      parallel: opts.parallel ?? CALIBRATION_RAKING_PARALLEL,
    });
    const sorted = systematicSample(weights, n, rng.uniform());
    // The shuffle's draws applied to the positions 0..n-1: picked row i is sorted[perm[i]].
    const perm = new Int32Array(n);
    for (let i = 0; i < n; i++) perm[i] = i;
    rng.shuffle(perm);
    return { columns: gatherRows(pool, sorted, perm), seed };
  } finally {
    release();
  }
}