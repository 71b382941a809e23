/**
 * The random draws of a generate request: latents, privacy noise and the sampling kernel's
 * uniforms, from xoshiro128** streams (one per block of rows, below), in the order of inputs.ts's
 * module comment.
 *
 * Two implementations, the same numbers bit for bit:
 * - {@link drawReference}: TypeScript on xoshiro.ts (`fillNormalZiggurat`, `uniform`). The oracle of
 *   test/native-draws.test.ts and the path without the addon.
 * - the native core's `fillDraws` (native/src/draws.{h,cc}): the same integer and float64
 *   operations in the same order, with V8's fdlibm `exp` / `log` ported, so the rows of a seed do
 *   not depend on whether the addon is loaded, nor on SYNTHD_ISA or SYNTHD_THREADS.
 * {@link drawRequest} takes the native one when the addon has it (whatever path the model's
 * forward pass takes: the draws are the same either way).
 *
 * Streams: the rows are cut into blocks of {@link DRAW_BLOCK_ROWS}; block b draws from the
 * xoshiro128** stream of `seed` advanced by b jumps of 2^64 outputs (xoshiro.ts `Rng.jump`: block 0
 * uses the seed's stream itself; the blocks' subsequences never overlap). Within a block of m rows,
 * in this order: m x E latents (when drawn), m x E privacy noise normals (when sigma > 0), m x F
 * uniforms, all row-major. Why blocks: a ziggurat normal takes a variable number of 32-bit
 * outputs, so with one stream for the whole request the uniforms' (and a later row's) position is
 * only known once every earlier normal is drawn, and the draws could not run on more than one
 * thread; with blocks the core draws them on the compute pool (thread_pool.h), and the values do
 * not depend on the thread count.
 *
 * Normals: the ziggurat (xoshiro.ts), not Box–Muller. The plain draw once used `Rng.fillNormal`
 * (Box–Muller with Math.log / cos / sin, 20-40 ns per normal even in C++); the switch gave every
 * seed other rows, once (docs/compute.md "Request draws"; docs/decisions.md "A seed's rows"). Privacy noise is one ziggurat normal per latent value, times sigma, added in float64
 * and rounded once to float32.
 *
 * Cost (2-core machine, medium model, E = 64, F = 14, 100,000 rows): 13.5 ms on one thread, 6.9 ms
 * on two, against ~310 ms of forward pass and sampling (docs/compute.md "Request draws").
 */
import { nativeExport } from "../compute/native";
import { fillNormalZiggurat, Rng } from "./xoshiro";

/** Latents and uniforms for one request (`./generate`'s module comment gives the draw order). */
export interface GenerationInputs {
  /** Rows. */
  n: number;
  /** n x E, row-major. */
  latents: Float32Array;
  /** n x F, row-major, in [0, 1). */
  uniforms: Float64Array;
  /** The seed of the stream (given or drawn). */
  seed: number;
}

/** Rows per block of the draws (see the module comment); part of what a seed means, like the algorithm. */
export const DRAW_BLOCK_ROWS = 2048;

/** Values of privacy noise drawn per piece by the reference (a 32 KiB scratch array, not m x E). */
const NOISE_PIECE = 4096;

/** The addon's `fillDraws` (native/src/draws_binding.cc; see that file for the argument rules). */
export type NativeFillDraws = (
  state: Uint32Array,
  rows: number,
  latents: Float32Array,
  drawLatents: boolean,
  sigma: number,
  uniforms: Float64Array,
  blockRows: number,
) => void;

/** The addon's `fillDraws`, or undefined without the addon (or with a build older than it). */
export function nativeFillDraws(): NativeFillDraws | undefined {
  return nativeExport<NativeFillDraws>("fillDraws");
}

/** What to draw: n rows from the streams of `seed`, into `latents` (drawn when `drawLatents`, else given). */
export interface DrawSpec {
  /** Seed of the xoshiro128** stream (`Rng.fromSeed`). */
  seed: number;
  /** Rows n (>= 1). */
  rows: number;
  /** n x E, row-major: overwritten with normals when `drawLatents`, else given (noise is added in place). */
  latents: Float32Array;
  /** Whether the latents are drawn (true) or given (false). */
  drawLatents: boolean;
  /** Privacy noise sigma (0: none). */
  sigma: number;
  /** n x F, row-major: overwritten with uniforms in [0, 1). */
  uniforms: Float64Array;
}

/** @throws RangeError for rows not a positive integer, arrays not a multiple of rows long, a bad sigma. */
function checkSpec(spec: DrawSpec): void {
  const { rows, sigma } = spec;
  if (!(Number.isSafeInteger(rows) && rows >= 1)) throw new RangeError(`rows must be a positive integer, got ${rows}`);
  if (spec.latents.length % rows !== 0) throw new RangeError(`latents has ${spec.latents.length} values, not a multiple of rows = ${rows}`);
  if (spec.uniforms.length % rows !== 0) throw new RangeError(`uniforms has ${spec.uniforms.length} values, not a multiple of rows = ${rows}`);
  if (!(Number.isFinite(sigma) && sigma >= 0)) throw new RangeError(`sigma must be finite and >= 0, got ${sigma}`);
}

/**
 * The reference, block by block (module comment): from block b's stream, (1) m x E ziggurat
 * normals into the block's latents when `drawLatents`; (2) when sigma > 0, latents[i] =
 * fround(latents[i] + z_i * sigma) with z_i the next ziggurat normal; (3) m x F uniforms.
 * @throws RangeError as checkSpec (rows, lengths, sigma).
 */
export function drawReference(spec: DrawSpec): void {
  checkSpec(spec);
  const { rows, latents, uniforms, sigma } = spec;
  const E = latents.length / rows;
  const F = uniforms.length / rows;
  const base = Rng.fromSeed(spec.seed);
  const eps = new Float64Array(Math.min(NOISE_PIECE, Math.max(1, DRAW_BLOCK_ROWS * E)));
  for (let r0 = 0; r0 < rows; r0 += DRAW_BLOCK_ROWS) {
    if (r0 > 0) base.jump();
    const rng = Rng.fromState(base.state());
    const m = Math.min(DRAW_BLOCK_ROWS, rows - r0);
    const lat = latents.subarray(r0 * E, (r0 + m) * E);
    if (spec.drawLatents) fillNormalZiggurat(rng, lat);
    if (sigma > 0) {
      // In pieces: one fill's values, without an m x E float64 scratch array.
      for (let i0 = 0; i0 < lat.length; i0 += eps.length) {
        const k1 = Math.min(eps.length, lat.length - i0);
        fillNormalZiggurat(rng, eps.subarray(0, k1));
        for (let k = 0; k < k1; k++) lat[i0 + k] += eps[k] * sigma;
      }
    }
    for (let i = r0 * F; i < (r0 + m) * F; i++) uniforms[i] = rng.uniform();
  }
}

/**
 * {@link drawReference}'s draws in the native core, blocks on the compute pool (bit for bit the same).
 * @throws Error without the addon's `fillDraws`; RangeError as {@link drawReference}.
 */
export function drawNative(spec: DrawSpec): void {
  const fill = nativeFillDraws();
  if (fill === undefined) throw new Error("the native addon has no fillDraws (not loaded, or a stale build)");
  checkSpec(spec);
  const state = Uint32Array.from(Rng.fromSeed(spec.seed).state());
  fill(state, spec.rows, spec.latents, spec.drawLatents, spec.sigma, spec.uniforms, DRAW_BLOCK_ROWS);
}

/** The draws of `spec` in the native core when the addon has them, else by the reference (same values). */
export function drawRequest(spec: DrawSpec): void {
  if (nativeFillDraws() !== undefined) drawNative(spec);
  else drawReference(spec);
}
