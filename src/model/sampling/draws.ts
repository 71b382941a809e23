/**
 * The random draws of a generate request: latents, privacy noise and the kernel's uniforms, in
 * the order of inputs.ts's module comment. Two implementations, the same numbers bit for bit:
 * {@link drawReference} (TypeScript on xoshiro.ts; the test oracle and the path without the addon)
 * and the native core's `fillDraws` (native/src/draws.{h,cc}, V8's fdlibm `exp` / `log` ported),
 * so a seed's rows depend neither on the addon nor on SYNTHD_ISA or SYNTHD_THREADS.
 *
 * Blocks of {@link DRAW_BLOCK_ROWS} rows, block b from `seed`'s stream jumped b times, because a
 * ziggurat normal takes a variable number of outputs: with one stream a later row's position is
 * known only after every earlier normal, and the draws could not be split over threads.
 */
import { nativeExport } from "../compute/native";
import { fillNormalZiggurat, Rng } from "./xoshiro";

/** Latents and uniforms for one request (`./generate`'s module comment gives the draw order). */
export interface GenerationInputs {
  n: number;
  /** n x E, row-major. */
  latents: Float32Array;
  /** n x F, row-major, in [0, 1). */
  uniforms: Float64Array;
  seed: number;
}

/** Rows per block of the draws; part of what a seed means, like the algorithm. */
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

/** What to draw: `rows` rows of `seed`'s streams, privacy noise `sigma` (0: none). */
export interface DrawSpec {
  seed: number;
  rows: number;
  /** n x E, row-major: overwritten with normals when drawn, else given (noise added in place). */
  latents: Float32Array;
  drawLatents: boolean;
  sigma: number;
  /** n x F, row-major: overwritten with uniforms in [0, 1). */
  uniforms: Float64Array;
}

/** @throws RangeError for rows not a positive integer, arrays not a multiple of rows, bad sigma. */
function checkSpec(spec: DrawSpec): void {
  const { rows, sigma } = spec;
  if (!(Number.isSafeInteger(rows) && rows >= 1)) throw new RangeError(`rows must be a positive integer, got ${rows}`);
  if (spec.latents.length % rows !== 0) throw new RangeError(`latents has ${spec.latents.length} values, not a multiple of rows = ${rows}`);
  if (spec.uniforms.length % rows !== 0) throw new RangeError(`uniforms has ${spec.uniforms.length} values, not a multiple of rows = ${rows}`);
  if (!(Number.isFinite(sigma) && sigma >= 0)) throw new RangeError(`sigma must be finite and >= 0, got ${sigma}`);
}

/**
 * The reference, block by block: (1) m x E ziggurat normals into the block's latents when drawn;
 * (2) when sigma > 0, latents[i] = fround(latents[i] + z_i * sigma); (3) m x F uniforms.
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

/** {@link drawReference} in the native core, on the compute pool. @throws Error if absent. */
export function drawNative(spec: DrawSpec): void {
  const fill = nativeFillDraws();
  if (fill === undefined) throw new Error("the native addon has no fillDraws (not loaded, or a stale build)");
  checkSpec(spec);
  const state = Uint32Array.from(Rng.fromSeed(spec.seed).state());
  fill(state, spec.rows, spec.latents, spec.drawLatents, spec.sigma, spec.uniforms, DRAW_BLOCK_ROWS);
}

/** The draws of `spec` in the native core when the addon has them, else by the reference. */
export function drawRequest(spec: DrawSpec): void {
  if (nativeFillDraws() !== undefined) drawNative(spec);
  else drawReference(spec);
}
