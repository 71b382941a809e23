/**
 * Generation: latents -> generator forward pass -> per-feature logits -> sampling kernel
 * (`sampling.ts`: temperature, nucleus truncation, inverse-CDF draw).
 *
 * Randomness, in this fixed order from xoshiro128** streams (rng.ts; drawn by draws.ts, in the
 * native core when the addon is loaded, bit for bit as the TypeScript reference). The rows are
 * cut into blocks of draws.ts `DRAW_BLOCK_ROWS`, each with its own stream (the seed's, jumped b
 * times for block b), and the order below holds within each block:
 *  1. latents, when drawn by the server (`{num_rows, seed}`): n x E standard normals (ziggurat,
 *     rng.ts `fillNormalZiggurat`), row-major;
 *  2. privacy noise, when the model has `privacy_enabled`: n x E ziggurat normals times
 *     `privacy_noise`, added to the latents (drawn or given) in float64, rounded once to float32;
 *  3. uniforms for the sampling kernel: n x F doubles in [0, 1), row-major (row r, feature f at
 *     r * F + f).
 * (Counts per block: m x E, m x E, m x F for a block of m rows.)
 * The stream is seeded with `seed` when given, else with a fresh random seed. So the same model
 * weights, seed and options give identical codes; changing this order, the blocks or the normals
 * changes every seed's rows (docs/decisions.md "A seed's rows").
 */
import * as tf from "@tensorflow/tfjs-core";
import { FLOAT32_MAX, MAX_ROWS_PER_REQUEST, type GenerateRequest } from "../../types";
import { CALIBRATION_EXACT_SWEEPS, CALIBRATION_POOL_FACTOR, CALIBRATION_RAKING_PARALLEL, CALIBRATION_SWEEPS, rakingSweeps, systematicSample, type CalibrationMarginal, type RakingOptions } from "./calibrate";
import { repairPool, type PoolRule } from "./rule-repair";
import { nativeRakingSweeps } from "../compute/calibrate-native";
import { drawRequest, type GenerationInputs } from "./draws";

export type { GenerationInputs } from "./draws";
import { forward } from "../generator/generator";
import { Rng } from "./rng";
import { sampleCodes } from "./sampling";
import type { GeneratorModel } from "../generator/model";

/** Rows per forward pass. */
export const GENERATE_CHUNK = 2048;

/** Thrown for a request the model cannot take; `param` is the contract's parameter path. */
export class InputError extends Error {
  constructor(
    message: string,
    readonly param: string,
  ) {
    super(message);
    this.name = "InputError";
  }
}

/** Where the latents of a request come from: given rows (flattened) or a seeded draw. */
export type LatentSource = { latents: Float32Array } | { numRows: number; seed?: number; calibrate?: boolean };

/** A request for server-drawn rows (`embedding: {num_rows, seed?, calibrate?}`). */
export type DrawnSource = Extract<LatentSource, { numRows: number }>;

/** @throws InputError unless n is an integer in 1..MAX_ROWS_PER_REQUEST (`body.embedding.num_rows`). */
function checkNumRows(n: unknown): asserts n is number {
  if (!Number.isInteger(n) || (n as number) < 1 || (n as number) > MAX_ROWS_PER_REQUEST) {
    throw new InputError(`num_rows must be an integer from 1 to ${MAX_ROWS_PER_REQUEST}`, "body.embedding.num_rows");
  }
}

/**
 * Given latent rows (n x E as nested arrays) -> one Float32Array, row-major.
 * @throws InputError for 0 or more than MAX_ROWS_PER_REQUEST rows (`body.embedding`), a row of
 *   the wrong length (`body.embedding[i]`), or a value that is not a number finite in float32
 *   (`body.embedding[i][j]`, e.g. `1e308`, which float64 holds but float32 rounds to Infinity).
 */
export function flattenLatents(rows: readonly unknown[], embeddingDim: number): Float32Array {
  const E = embeddingDim;
  const n = rows.length;
  if (n < 1) throw new InputError("embedding must hold at least one latent row", "body.embedding");
  if (n > MAX_ROWS_PER_REQUEST) throw new InputError(`at most ${MAX_ROWS_PER_REQUEST} rows per request, got ${n}`, "body.embedding");
  const out = new Float32Array(n * E);
  for (let i = 0; i < n; i++) {
    const row = rows[i];
    if (!Array.isArray(row) || row.length !== E) {
      throw new InputError(`latent row ${i} must have embedding_dim = ${E} numbers`, `body.embedding[${i}]`);
    }
    for (let j = 0; j < E; j++) {
      const v: unknown = row[j];
      const x = typeof v === "number" ? Math.fround(v) : NaN;
      if (!Number.isFinite(x)) {
        throw new InputError(
          `latent value [${i}][${j}] must be a number within the float32 range [-${FLOAT32_MAX}, ${FLOAT32_MAX}]`,
          `body.embedding[${i}][${j}]`,
        );
      }
      out[i * E + j] = x;
    }
  }
  return out;
}

/**
 * The {@link LatentSource} of a request's `embedding` (given rows are flattened and checked).
 * @throws InputError as {@link flattenLatents}; for `num_rows` outside 1..MAX_ROWS_PER_REQUEST
 *   (`body.embedding.num_rows`) or a seed that is not a safe integer (`body.embedding.seed`).
 */
export function latentSource(embedding: GenerateRequest["embedding"], embeddingDim: number): LatentSource {
  if (Array.isArray(embedding)) return { latents: flattenLatents(embedding, embeddingDim) };
  // Seeded forms (`seed_data`, `condition`) go through `./seeded-input` instead.
  if (embedding !== null && typeof embedding === "object" && "seed_data" in embedding) {
    throw new InputError("seed_data is seeded generation, not a latent source", "body.embedding.seed_data");
  }
  const n = embedding?.num_rows;
  checkNumRows(n);
  if (embedding.seed !== undefined && !Number.isSafeInteger(embedding.seed)) {
    throw new InputError("seed must be a safe integer", "body.embedding.seed");
  }
  if (embedding.calibrate !== undefined && typeof embedding.calibrate !== "boolean") {
    throw new InputError("calibrate must be true or false", "body.embedding.calibrate");
  }
  return {
    numRows: n,
    ...(embedding.seed !== undefined ? { seed: embedding.seed } : {}),
    ...(embedding.calibrate ? { calibrate: true } : {}),
  };
}

/**
 * Latents, privacy noise and uniforms of a request, in the order of the module comment, drawn by
 * draws.ts `drawRequest` (the native core when the addon is loaded, else the TypeScript reference:
 * the same values). Given latents receive the noise in place.
 * @param embeddingDim E; @param features F; @param privacyNoise sigma (0 when privacy is off).
 * @throws RangeError when given latents are not a multiple of E long.
 */
export function drawInputs(source: LatentSource, embeddingDim: number, features: number, privacyNoise: number): GenerationInputs {
  const E = embeddingDim;
  const given = "latents" in source;
  if (given && (source.latents.length === 0 || source.latents.length % E !== 0)) throw new RangeError(`latents must be n x ${E} values`);
  const seed = (given ? undefined : source.seed) ?? Rng.randomSeed();
  const latents = given ? source.latents : inputBuffers.float32(source.numRows * E);
  const n = latents.length / E;
  const uniforms = inputBuffers.float64(n * features);
  drawRequest({ seed, rows: n, latents, drawLatents: !given, sigma: privacyNoise, uniforms });
  return { n, latents, uniforms, seed };
}

/**
 * Reuse of the large arrays of {@link drawInputs}: a request's latents and uniforms
 * (100,000 rows of a medium model: 25.6 MB and 12 MB) are taken from the arrays earlier requests
 * of this thread gave back with {@link releaseInputs}, instead of fresh ones whose zeroing and
 * first-touch page faults cost about 5% of the plain draw. Every value of a taken array is
 * overwritten by the draws, so reuse changes no row. Per thread (module state), at most
 * {@link INPUT_POOL_BYTES} kept; an array is handed to one request at a time. The calibrated draw
 * takes its pool's codes from here too (fresh arrays of that size, 12 MB per request, with the
 * rest of its garbage, made V8 collect the worker's whole heap about once per request;
 * docs/decisions.md "Little garbage and setup per generate request").
 */
class InputBuffers {
  private readonly f32: Float32Array[] = [];
  private readonly f64: Float64Array[] = [];
  private readonly i32: Int32Array[] = [];
  /** The views handed out, and the whole arrays they came from. */
  private readonly owned = new WeakMap<ArrayBufferView, Float32Array | Float64Array | Int32Array>();
  private keptBytes = 0;

  float32(n: number): Float32Array {
    return this.take(this.f32, n, (m) => new Float32Array(m));
  }

  float64(n: number): Float64Array {
    return this.take(this.f64, n, (m) => new Float64Array(m));
  }

  int32(n: number): Int32Array {
    return this.take(this.i32, n, (m) => new Int32Array(m));
  }

  private take<T extends Float32Array | Float64Array | Int32Array>(free: T[], n: number, make: (m: number) => T): T {
    let best = -1;
    for (let i = 0; i < free.length; i++) if (free[i].length >= n && (best < 0 || free[i].length < free[best].length)) best = i;
    const whole = best >= 0 ? free.splice(best, 1)[0] : make(n);
    if (best >= 0) this.keptBytes -= whole.byteLength;
    const view = whole.subarray(0, n) as T;
    this.owned.set(view, whole);
    return view;
  }

  /** Gives back a view handed out by this pool (anything else is ignored); kept while under the cap. */
  give(view: ArrayBufferView): void {
    const whole = this.owned.get(view);
    if (whole === undefined) return;
    this.owned.delete(view);
    if (this.keptBytes + whole.byteLength > INPUT_POOL_BYTES) return;
    this.keptBytes += whole.byteLength;
    if (whole instanceof Float32Array) this.f32.push(whole);
    else if (whole instanceof Float64Array) this.f64.push(whole);
    else this.i32.push(whole);
  }
}

/** Bytes of generation input arrays one thread keeps for reuse: 128 MiB. */
export const INPUT_POOL_BYTES = 128 * 2 ** 20;
const inputBuffers = new InputBuffers();

/**
 * Gives the arrays of `inputs` (from {@link drawInputs}) back for the next request of this thread.
 * Call it once the generation that read them has finished (resolved or thrown); `inputs` must not
 * be used afterwards. Given latents (the client's) are left alone.
 */
export function releaseInputs(inputs: GenerationInputs): void {
  inputBuffers.give(inputs.latents);
  inputBuffers.give(inputs.uniforms);
}

/** `drawInputs(latentSource(embedding, E), E, F, noise)`. @throws InputError as {@link latentSource}. */
export function prepareInputs(
  embedding: GenerateRequest["embedding"],
  embeddingDim: number,
  features: number,
  privacyNoise: number,
): GenerationInputs {
  return drawInputs(latentSource(embedding, embeddingDim), embeddingDim, features, privacyNoise);
}

/** Sampling options (defaults: temperature 1, no truncation). */
export interface SamplingOptions {
  temperature?: number;
  topP?: number | null;
  /** Awaited between chunks so other work on the thread can run. */
  yieldFn?: () => Promise<void>;
  /** Called between chunks; when it returns true generation stops with an Error. */
  shouldAbort?: () => boolean;
}

/**
 * The pause between two chunks of a generation: awaits `opts.yieldFn` (when given) so other work on
 * the thread can run, then polls `opts.shouldAbort`.
 * @throws Error "generation aborted" when `shouldAbort` returns true.
 */
export async function betweenChunks(opts: SamplingOptions): Promise<void> {
  if (opts.yieldFn) await opts.yieldFn();
  if (opts.shouldAbort?.()) throw new Error("generation aborted");
}

/**
 * Codes for the rows of `inputs` from `model`: one Int32Array of length n per feature (in the
 * layout's feature order), `0 <= code < K_f`, views of one F x n array (feature f's at [f n,
 * (f + 1) n): {@link packedColumns} takes it as it is).
 * @throws Error when `shouldAbort` fires; RangeError from the sampling kernel on bad sizes.
 */
export async function sampleRows(model: GeneratorModel, inputs: GenerationInputs, opts: SamplingOptions = {}): Promise<Int32Array[]> {
  if (model.native) return model.native.sampleRows(inputs, opts); // the C++ core: forward + sampling
  const { spec, layout } = model;
  const { n, latents, uniforms } = inputs;
  const E = spec.embeddingDim;
  const F = layout.features.length;
  const sampleOpts = { temperature: opts.temperature ?? 1, topP: opts.topP ?? null };
  const all = new Int32Array(F * n);
  const columns = layout.cardinalities.map((_, f) => all.subarray(f * n, (f + 1) * n));
  for (let r0 = 0; r0 < n; r0 += GENERATE_CHUNK) {
    if (r0 > 0) await betweenChunks(opts);
    const m = Math.min(GENERATE_CHUNK, n - r0);
    const logits = forwardLogits(model, latents.subarray(r0 * E, (r0 + m) * E), m);
    const codes = sampleCodes(logits, m, layout.cardinalities, uniforms.subarray(r0 * F, (r0 + m) * F), sampleOpts);
    for (let f = 0; f < F; f++) columns[f].set(codes.subarray(f * m, (f + 1) * m), r0);
  }
  return columns;
}

/**
 * Several rows per latent: the rows of `inputs` (exactly as {@link sampleRows} draws them), then
 * k more rows from the same latents, row i of set j drawn from latent i's per-feature
 * distributions (the same logits, temperature and nucleus) with the uniforms of set j. One forward
 * pass serves 1 + k rows, so the rows of one latent are independent given the latent (the
 * generator's features are drawn independently given z) and share its z: each row alone is a draw
 * from the model, as a plain row is. The codes of a set are those {@link sampleRows} would give
 * for the same latents and that set's uniforms, on every compute path (the native core computes
 * softmax and nucleus once per row for all the sets).
 * @param extraUniforms k x n x F values in [0, 1), set j (0-based) at [j n F, (j + 1) n F), each
 *   n x F row-major like `inputs.uniforms`; k >= 1.
 * @param out where the codes go, (1 + k) x n x F values (feature f's at [f (1 + k) n, (f + 1)
 *   (1 + k) n)); a new array when not given.
 * @returns one Int32Array of (1 + k) x n codes per feature (layout order), views of `out`: the
 *   rows of `inputs` at [0, n), set j's at [(j + 1) n, (j + 2) n).
 * @throws RangeError when `extraUniforms` is not a positive multiple of n x F long or `out` has
 *   another length; otherwise as {@link sampleRows}.
 */
export async function sampleRowsPerLatent(
  model: GeneratorModel,
  inputs: GenerationInputs,
  extraUniforms: Float64Array,
  opts: SamplingOptions = {},
  out?: Int32Array,
): Promise<Int32Array[]> {
  const { n, latents, uniforms } = inputs;
  const F = model.layout.features.length;
  const k = extraUniforms.length / (n * F);
  if (!(Number.isInteger(k) && k >= 1)) throw new RangeError(`extraUniforms must hold k x n x F values (n = ${n}, F = ${F}), k >= 1`);
  const total = (1 + k) * n;
  if (out !== undefined && out.length !== F * total) throw new RangeError(`out must hold (1 + k) x n x F = ${F * total} values, got ${out.length}`);
  if (model.native && model.native.device === "cpu") return model.native.sampleRows(inputs, opts, extraUniforms, out);
  // Elsewhere (tfjs, a GPU core): one forward pass per chunk, the sampling kernel once per set.
  const { spec, layout } = model;
  const E = spec.embeddingDim;
  const sampleOpts = { temperature: opts.temperature ?? 1, topP: opts.topP ?? null };
  const all = out ?? new Int32Array(F * total);
  const columns = layout.cardinalities.map((_, f) => all.subarray(f * total, (f + 1) * total));
  for (let r0 = 0; r0 < n; r0 += GENERATE_CHUNK) {
    if (r0 > 0) await betweenChunks(opts);
    const m = Math.min(GENERATE_CHUNK, n - r0);
    const logits = forwardLogits(model, latents.subarray(r0 * E, (r0 + m) * E), m);
    for (let j = 0; j <= k; j++) {
      const u = j === 0 ? uniforms.subarray(r0 * F, (r0 + m) * F) : extraUniforms.subarray(((j - 1) * n + r0) * F, ((j - 1) * n + r0 + m) * F);
      const codes = sampleCodes(logits, m, layout.cardinalities, u, sampleOpts);
      for (let f = 0; f < F; f++) columns[f].set(codes.subarray(f * m, (f + 1) * m), j * n + r0);
    }
  }
  return columns;
}

/**
 * The generator's forward pass on the model's compute path: `NativeGenerator.logits` (native core)
 * or generator.ts `forward` (tfjs), synchronously, with no sampling.
 * @param latents m x E row-major (E = `model.spec.embeddingDim`); read, not modified or kept.
 * @param m rows.
 * @returns logits, m x D row-major (D = `model.layout.width`; feature f at columns
 *   [offset_f, offset_f + K_f)).
 * @throws what the forward pass throws (the native core refuses a length other than m x E).
 */
export function forwardLogits(model: GeneratorModel, latents: Float32Array, m: number): Float32Array {
  if (model.native) return model.native.logits(latents, m);
  // (tidy must not return the typed array: it would walk it element by element)
  const out = tf.tidy(() => forward(model.spec, model.params, tf.tensor2d(latents, [m, model.spec.embeddingDim])));
  const logits = out.dataSync() as Float32Array;
  out.dispose();
  return logits;
}

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
 * The pool of {@link sampleCalibrated} before repair and raking: P = {@link CALIBRATION_POOL_FACTOR}
 * rows per latent of the plain draw of `seed` ({@link sampleRowsPerLatent}). Rows [0, n) are the
 * plain draw of `seed` itself (its latents, noise and uniforms); rows [k n, (k + 1) n), k >= 1,
 * are drawn from the same latents with the uniforms of the stream seeded by the k-th value of
 * `Rng.fromSeed(seed)` (draws.ts `drawRequest` with no latents: n x F uniforms in its blocks of
 * rows, so they do not depend on the thread count or ISA). One forward pass per latent instead of
 * P. Each block of n rows once had latents of its own (the k-th value seeded the whole block);
 * sharing the plain draw's latents changed a seed's calibrated rows once, not its plain draw
 * (docs/decisions.md "A seed's rows").
 * @returns one Int32Array of P x n codes per feature (layout order), views of one array of this
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
  const P = CALIBRATION_POOL_FACTOR;
  const inputs = drawInputs({ numRows: n, seed }, E, F, privacyNoise);
  const extra = inputBuffers.float64((P - 1) * n * F);
  const codes = inputBuffers.int32(P * n * F);
  try {
    for (let k = 1; k < P; k++) {
      const uniforms = extra.subarray((k - 1) * n * F, k * n * F);
      drawRequest({ seed: rng.nextUint32(), rows: n, latents: NO_LATENTS, drawLatents: false, sigma: 0, uniforms });
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
 * Calibrated generation (method and measurements in `calibrate.ts`): a pool of
 * {@link CALIBRATION_POOL_FACTOR} x n rows, that many per latent of the plain draw of the seed
 * ({@link calibrationPool}), weighted by bounded raking to `marginals` ({@link CALIBRATION_SWEEPS}
 * sweeps unless `opts.sweeps`, of which the last {@link CALIBRATION_EXACT_SWEEPS} spread clipped
 * mass unless `opts.exactSweeps`; in the native core on the calling thread alone unless
 * `opts.parallel`, {@link CALIBRATION_RAKING_PARALLEL}), then n distinct rows drawn by
 * systematic sampling and shuffled. With `rules` (the metadata's fixed-combinations rules,
 * `rule-repair.ts`), the pool rows that break one are repaired before raking, with their own
 * stream (seed xor {@link REPAIR_SEED_TAG}), so raking re-weights the repaired rows. The raking
 * runs in the native core when the model does
 * (`model.native`: `calibrate-native.ts`, the same weights bit for bit), else in TypeScript
 * (`calibrate.ts` `rakingSweeps`); the thread is given back between pool chunks, after the pool,
 * and between raking slices.
 *
 * Randomness: one xoshiro128** stream seeded with `seed` (given or fresh) gives, in order, the
 * seeds of the pool's uniform sets 1.. (set 0 is the plain draw of `seed` itself, latents
 * included), the systematic sample's start, and the Fisher–Yates shuffle of the drawn rows. The same model
 * weights, seed, options and marginals give identical codes, whichever path rakes, with any thread
 * count and on every ISA path where the pool is the same (test/native-calibrate.test.ts).
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
