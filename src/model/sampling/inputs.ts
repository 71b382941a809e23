/**
 * The inputs of a generation: a request's latents (given rows or a seeded draw), the draws that go
 * with them, and per-thread reuse of their arrays.
 *
 * Randomness (draws.ts): rows in blocks of `DRAW_BLOCK_ROWS`, block b from the seed's xoshiro128**
 * stream jumped b times; within a block of m rows, in this order:
 *  1. latents, when drawn by the server: m x E ziggurat normals (`fillNormalZiggurat`), row-major;
 *  2. privacy noise, when `privacy_enabled`: m x E ziggurat normals times `privacy_noise`, added
 *     to the latents in float64 and rounded once to float32;
 *  3. the kernel's uniforms: m x F doubles in [0, 1), row r, feature f at r * F + f.
 * Changing this order, the blocks or the normals changes every seed's rows (docs/decisions.md
 * "A seed's rows").
 */
import { FLOAT32_MAX, MAX_ROWS_PER_REQUEST, type GenerateRequest } from "../../contract";
import { drawRequest, type GenerationInputs } from "./draws";
import { Rng } from "./xoshiro";

export type { GenerationInputs } from "./draws";

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

/** @throws InputError unless n is an integer in 1..MAX_ROWS_PER_REQUEST (`...num_rows`). */
export function checkNumRows(n: unknown): asserts n is number {
  if (!Number.isInteger(n) || (n as number) < 1 || (n as number) > MAX_ROWS_PER_REQUEST) {
    throw new InputError(`num_rows must be an integer from 1 to ${MAX_ROWS_PER_REQUEST}`, "body.embedding.num_rows");
  }
}

/**
 * Given latent rows (n x E nested arrays) -> one row-major Float32Array.
 * @throws InputError for 0 or too many rows (`body.embedding`), a row of the wrong length
 *   (`body.embedding[i]`), or a value not finite in float32 (`body.embedding[i][j]`, e.g. `1e308`).
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
 * The {@link LatentSource} of a request's `embedding`. @throws InputError as
 * {@link flattenLatents}, for a bad `num_rows` or a seed that is not a safe integer.
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
 * Latents, privacy noise and uniforms of a request, in the module comment's order (draws.ts
 * `drawRequest`). Given latents receive the noise in place.
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
 * Reuse of the large arrays of {@link drawInputs} and the calibrated pool's codes: taken from the
 * arrays this thread's earlier requests gave back ({@link releaseInputs}), not fresh ones, to save
 * zeroing, page faults and full heap collections (docs/decisions.md "Little garbage and setup per
 * generate request"). Every value is overwritten, so reuse changes no row. At most
 * {@link INPUT_POOL_BYTES} per thread; one request at a time per array.
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

  /** Gives back a view this pool handed out (else ignored); kept while under the cap. */
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
/** This thread's reusable arrays: the inputs' and the calibrated draw's pool codes. */
export const inputBuffers = new InputBuffers();

/**
 * Gives the arrays of `inputs` back for this thread's next request, once the generation that read
 * them has settled; do not use `inputs` afterwards. Given latents (the client's) are left alone.
 */
export function releaseInputs(inputs: GenerationInputs): void {
  inputBuffers.give(inputs.latents);
  inputBuffers.give(inputs.uniforms);
}

/** `drawInputs(latentSource(embedding, E), E, F, noise)`. @throws InputError as that does. */
export function prepareInputs(
  embedding: GenerateRequest["embedding"],
  embeddingDim: number,
  features: number,
  privacyNoise: number,
): GenerationInputs {
  return drawInputs(latentSource(embedding, embeddingDim), embeddingDim, features, privacyNoise);
}
