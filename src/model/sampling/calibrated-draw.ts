/**
 * The calibrated draw (a generate request's default): a pool of several rows per latent from one
 * forward pass each (`calibrationPool`), raked to the model's 1-way and 2-way targets (`rake`,
 * sweeps of `calibrate.ts`, native core or reference), a systematic sample of the pool, the rows
 * that break a row rule repaired (`rule-repair.ts`), and the codes packed for the reply.
 */
import { CALIBRATION_EXACT_SWEEPS, CALIBRATION_POOL_FACTOR, CALIBRATION_RAKING_PARALLEL, CALIBRATION_ROWS_PER_LATENT, CALIBRATION_SWEEPS, rakingSweeps, systematicSample, type CalibrationMarginal, type RakingOptions } from "./calibrate";
import { repairPool, type PoolRule } from "./rule-repair";
import { nativeRakingSweeps } from "../compute/calibrate-native";
import { drawRequest } from "./draws";
import { Rng } from "./xoshiro";
import { checkNumRows, drawInputs, inputBuffers, releaseInputs, type DrawnSource } from "./inputs";
import { betweenChunks, sampleRowsPerLatent, type SamplingOptions } from "./sample-rows";
import type { GeneratorModel } from "../generator/model";

/**
 * Bounded raking of `columns` (one Int32Array of M codes per feature) to `marginals`
 * (`calibrate.ts`): in the native core when the model runs there (`calibrate-native.ts`, the same
 * weights bit for bit), else the TypeScript reference; the thread is given back between sweeps
 * (native: between slices), and an abort frees the native copy at once.
 * @returns M weights summing to 1.
 * @throws RangeError as `rakingWeights`; Error when `shouldAbort` fires.
 */
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

/** The latents of the pool's extra uniform sets ({@link calibrationPool}): none (E = 0; `drawRequest` draws only uniforms). */
const NO_LATENTS = new Float32Array(0);

/**
 * The pool of {@link sampleCalibrated} before repair and raking: about
 * {@link CALIBRATION_POOL_FACTOR} x n rows, {@link CALIBRATION_ROWS_PER_LATENT} (R) per latent of
 * the plain draw of `seed` for L = ceil(CALIBRATION_POOL_FACTOR x n / R) rows
 * ({@link sampleRowsPerLatent}); the pool has M = R x L rows. Rows [0, L) are that plain draw (its
 * latents, noise and uniforms); rows [k L, (k + 1) L), k >= 1, are drawn from the same latents with
 * the uniforms of the stream seeded by the k-th value of `Rng.fromSeed(seed)` (draws.ts
 * `drawRequest` with no latents: L x F uniforms in its blocks of rows, so they do not depend on the
 * thread count or ISA). One forward pass per R rows. Each block of rows once had latents of its
 * own, then the plain draw of n rows served two rows each; fewer latents changed a seed's
 * calibrated rows each time, never its plain draw (docs/decisions.md "A seed's rows";
 * docs/compute.md "Three rows per latent").
 * @returns one Int32Array of M codes per feature (layout order), views of one array of this
 *   thread's reused buffers; that stream, advanced past the sets' seeds (the calibrated draw goes
 *   on with it); and `release`, which gives the array back for a later pool (call it once the
 *   columns are no longer read; a caller that keeps them never calls it).
 * @throws Error when `shouldAbort` fires.
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
 * The codes of the picked pool rows, in the picked order: column f of the result, row i, is
 * `pool[f][sorted[perm[i]]]`, where `sorted` ascends (the systematic sample's order) and `perm` is
 * the shuffle. Per column, the picked codes are first copied in ascending order (the column read
 * forward) and then put in the shuffled order from that copy (400 KB for 100,000 rows, which the
 * processor's cache holds): reading the pool's columns (800 KB each for a 200,000-row pool, evicted
 * by the raking) in the shuffled order missed the cache on most reads (10-14 against 5-6 ms per
 * 100,000 rows, the best of 30).
 * @returns one Int32Array of n codes per feature, views of one new F x n array (feature f's at
 *   [f n, (f + 1) n): the layout a worker's reply transfers, see {@link packedColumns}).
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

/**
 * The F x n codes of `columns` (n each, layout order) as one Int32Array, feature f's at [f n,
 * (f + 1) n), as a worker's reply carries them: the columns' own array when they are its
 * consecutive views from its start to its end (what {@link sampleRows} on the native core and
 * {@link sampleCalibrated} return), without a copy; otherwise a new array they are copied into.
 */
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

/** Tag of the seed of the pool's rule repair (`rule-repair.ts`), apart from the pool's own stream. */
export const REPAIR_SEED_TAG = 0x52554c45;

/**
 * Calibrated generation (method and measurements in `calibrate.ts`): a pool of about
 * {@link CALIBRATION_POOL_FACTOR} x n rows, {@link CALIBRATION_ROWS_PER_LATENT} per latent of a
 * plain draw of the seed ({@link calibrationPool}), weighted by bounded raking to `marginals`
 * ({@link CALIBRATION_SWEEPS} sweeps unless `opts.sweeps`, of which the last
 * {@link CALIBRATION_EXACT_SWEEPS} spread clipped mass unless `opts.exactSweeps`; in the native
 * core on the calling thread alone unless `opts.parallel`, {@link CALIBRATION_RAKING_PARALLEL}),
 * then n distinct rows drawn by systematic sampling and shuffled. With `rules` (the metadata's
 * fixed-combinations rules, `rule-repair.ts`), the pool rows that break one are repaired before
 * raking, with their own stream (seed xor {@link REPAIR_SEED_TAG}), so raking re-weights the
 * repaired rows. The raking runs in the native core when the model does (`model.native`:
 * `calibrate-native.ts`, the same weights bit for bit), else in TypeScript (`calibrate.ts`
 * `rakingSweeps`); the thread is given back between pool chunks, after the pool, and between
 * raking slices.
 *
 * Randomness: one xoshiro128** stream seeded with `seed` (given or fresh) gives, in order, the
 * seeds of the pool's uniform sets 1.. (set 0 is the plain draw of `seed` itself, of the pool's
 * latent count, latents included), the systematic sample's start, and the Fisher–Yates shuffle
 * of the drawn rows. The same model weights, seed, options and marginals give identical codes,
 * whichever path rakes, with any thread count and on every ISA path where the pool is the same
 * (test/native-calibrate.test.ts).
 * @returns one Int32Array of n codes per feature (layout order), views of one F x n array
 *   ({@link gatherRows}), and the seed used.
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
    // The shuffle's draws applied to the positions 0..n-1 (the swaps `rng.shuffle(sorted)` would
    // make): picked row i is sorted[perm[i]]. (A plain loop per column: Int32Array.from with a map
    // function took 110 ms for 14 x 100,000 codes.)
    const perm = new Int32Array(n);
    for (let i = 0; i < n; i++) perm[i] = i;
    rng.shuffle(perm);
    return { columns: gatherRows(pool, sorted, perm), seed };
  } finally {
    release();
  }
}