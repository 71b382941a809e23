/**
 * The randomness and mechanisms of `./dp`: uniform sources (crypto or seeded), Gaussian noise on
 * counts, the exponential mechanism.
 */
import { randomFillSync } from "node:crypto";
import { Rng } from "../generate/sfc32";

/** A source of uniform doubles in [0, 1). */
export interface UniformSource {
  uniform(): number;
}

/**
 * Uniforms for noise: `crypto.randomFillSync` (53 bits per draw) without a seed, else the SDK's
 * seeded sfc32 stream ({@link Rng}; tests and benchmarks only).
 */
export function uniformSource(seed?: number): UniformSource {
  if (seed !== undefined) {
    const rng = new Rng(seed);
    return { uniform: () => rng.next() };
  }
  const buf = new Uint32Array(2048);
  let i = buf.length;
  return {
    uniform() {
      if (i + 2 > buf.length) {
        randomFillSync(buf);
        i = 0;
      }
      const hi = buf[i++] >>> 5;
      const lo = buf[i++] >>> 6;
      return (hi * 67108864 + lo) / 9007199254740992;
    },
  };
}

/** One standard normal deviate (Box–Muller, cosine branch). */
export function standardNormal(src: UniformSource): number {
  const u1 = 1 - src.uniform(); // (0, 1]
  const u2 = src.uniform();
  return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
}

/**
 * The Gaussian mechanism on a count vector: `counts[k] + N(0, sigma^2)` per cell.
 * @returns a new Float64Array of the same length.
 */
export function gaussianMechanism(counts: ArrayLike<number>, sigma: number, src: UniformSource): Float64Array {
  if (!(sigma >= 0)) throw new RangeError("sigma must be >= 0");
  const out = new Float64Array(counts.length);
  for (let k = 0; k < counts.length; k++) out[k] = counts[k] + sigma * standardNormal(src);
  return out;
}

/**
 * The exponential mechanism (McSherry & Talwar 2007) as MST uses it: index k with probability
 * proportional to exp(eps / (2 sensitivity) * scores[k]) (computed stably by subtracting the
 * maximum), by inverse CDF.
 */
export function exponentialMechanism(scores: readonly number[], eps: number, sensitivity: number, src: UniformSource): number {
  if (scores.length === 0) throw new RangeError("no candidates");
  const a = (0.5 * eps) / sensitivity;
  let max = -Infinity;
  for (const s of scores) max = Math.max(max, a * s);
  const w = scores.map((s) => Math.exp(a * s - max));
  const total = w.reduce((x, y) => x + y, 0);
  let u = src.uniform() * total;
  for (let k = 0; k < w.length; k++) {
    u -= w[k];
    if (u < 0) return k;
  }
  return w.length - 1;
}
