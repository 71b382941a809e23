/**
 * Seeded pseudo-random numbers for training and generation.
 *
 * Generator: xoshiro128** 1.1 (Blackman & Vigna, "Scrambled Linear Pseudorandom Number Generators",
 * ACM TOMS 47(4), 2021; reference C code at https://prng.di.unimi.it/xoshiro128starstar.c).
 * 128 bits of state, 32-bit outputs, period 2^128 - 1. It needs only 32-bit integer arithmetic,
 * so the JavaScript here and a C++ core give bit-identical streams.
 *
 * Seeding: an integer seed is reduced mod 2^64 and expanded into the four state words with
 * SplitMix64 (Steele, Lea & Flood, "Fast Splittable Pseudorandom Number Generators", OOPSLA 2014),
 * as the xoshiro authors recommend. A string seed (e.g. a model id plus a purpose) is first hashed
 * with 64-bit FNV-1a (Fowler, Noll & Vo).
 *
 * Derived draws (the exact recipes, so that other implementations can reproduce them):
 * - uniform double in [0, 1): `a = next() >>> 5` (27 bits), `b = next() >>> 6` (26 bits),
 *   `(a * 2^26 + b) / 2^53` (the 53-bit recipe of Matsumoto & Nishimura's `genrand_res53`).
 * - standard normals: Box & Muller (1958), in pairs: `u1 = 1 - uniform()` (in (0, 1]),
 *   `u2 = uniform()`, `r = sqrt(-2 ln u1)`, `z0 = r cos(2 pi u2)`, `z1 = r sin(2 pi u2)`.
 *   A fill of an odd length discards the last `z1`: every fill of n normals consumes exactly
 *   `4 * ceil(n / 2)` 32-bit outputs, independent of earlier fills.
 */

const MASK64 = (1n << 64n) - 1n;

/** The four 32-bit words of a xoshiro128** state (unsigned). Checkpoints store this. */
export type RngState = [number, number, number, number];

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}

/** One SplitMix64 step: returns [next state, output] as unsigned 64-bit BigInts. */
function splitmix64(state: bigint): [bigint, bigint] {
  const s = (state + 0x9e3779b97f4a7c15n) & MASK64;
  let z = s;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK64;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK64;
  return [s, z ^ (z >> 31n)];
}

/**
 * 64-bit FNV-1a of the UTF-8 bytes of `s`, as an unsigned BigInt.
 * (Fowler–Noll–Vo, offset basis 0xcbf29ce484222325, prime 0x100000001b3.)
 */
export function fnv1a64(s: string): bigint {
  let h = 0xcbf29ce484222325n;
  for (const byte of Buffer.from(s, "utf8")) {
    h ^= BigInt(byte);
    h = (h * 0x100000001b3n) & MASK64;
  }
  return h;
}

/** A seeded xoshiro128** stream. Not thread-safe; cheap to create. */
export class Rng {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  private constructor(state: RngState) {
    [this.s0, this.s1, this.s2, this.s3] = state.map((w) => w >>> 0) as RngState;
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 1; // the all-zero state is a fixed point
  }

  /**
   * A stream from an integer seed (any safe integer, negative allowed, or a BigInt); the seed is
   * taken mod 2^64 and expanded with SplitMix64.
   * @throws RangeError for a non-integer number.
   */
  static fromSeed(seed: number | bigint): Rng {
    if (typeof seed === "number" && !Number.isSafeInteger(seed)) {
      throw new RangeError(`seed must be a safe integer, got ${seed}`);
    }
    let st = BigInt.asUintN(64, BigInt(seed));
    const words: number[] = [];
    for (let i = 0; i < 2; i++) {
      let out: bigint;
      [st, out] = splitmix64(st);
      words.push(Number(out & 0xffffffffn), Number(out >> 32n));
    }
    return new Rng(words as RngState);
  }

  /** A stream from a string seed: `fromSeed(fnv1a64(s))`. Used for per-model streams. */
  static fromString(s: string): Rng {
    return Rng.fromSeed(fnv1a64(s));
  }

  /** Restores a stream from {@link Rng.state}. */
  static fromState(state: RngState): Rng {
    return new Rng(state);
  }

  /** A fresh random seed in [0, 2^53) from the platform CSPRNG (for requests without a seed). */
  static randomSeed(): number {
    const w = new Uint32Array(2);
    globalThis.crypto.getRandomValues(w);
    return (w[0] & 0x1fffff) * 2 ** 32 + w[1];
  }

  /** The current state (copy), for checkpoints. */
  state(): RngState {
    return [this.s0 >>> 0, this.s1 >>> 0, this.s2 >>> 0, this.s3 >>> 0];
  }

  /** Next 32-bit output, unsigned. */
  nextUint32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5), 7), 9) >>> 0;
    const t = this.s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    return result;
  }

  /** Uniform double in [0, 1) with 53 random bits. */
  uniform(): number {
    const a = this.nextUint32() >>> 5;
    const b = this.nextUint32() >>> 6;
    return (a * 67108864 + b) / 9007199254740992;
  }

  /** Fills `out` with uniform doubles in [0, 1), in index order; returns `out`. */
  fillUniform<T extends Float64Array | Float32Array>(out: T): T {
    for (let i = 0; i < out.length; i++) out[i] = this.uniform();
    // Float32 rounding can turn values just below 1 into 1; keep the half-open interval.
    if (out instanceof Float32Array) for (let i = 0; i < out.length; i++) if (out[i] >= 1) out[i] = 0.99999994;
    return out;
  }

  /**
   * Fills `out` with standard normals (Box–Muller pairs, in index order), multiplied by `scale`;
   * returns `out`.
   */
  fillNormal<T extends Float64Array | Float32Array>(out: T, scale = 1): T {
    const n = out.length;
    for (let i = 0; i < n; i += 2) {
      const u1 = 1 - this.uniform();
      const u2 = this.uniform();
      const r = Math.sqrt(-2 * Math.log(u1)) * scale;
      const a = 2 * Math.PI * u2;
      out[i] = r * Math.cos(a);
      if (i + 1 < n) out[i + 1] = r * Math.sin(a);
    }
    return out;
  }
}
