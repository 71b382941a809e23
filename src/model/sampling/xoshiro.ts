/**
 * Seeded pseudo-random numbers for training and generation: xoshiro128** 1.1 (Blackman & Vigna,
 * "Scrambled Linear Pseudorandom Number Generators", ACM TOMS 47(4), 2021; reference C code at
 * https://prng.di.unimi.it/xoshiro128starstar.c). 128 bits of state, 32-bit outputs, period
 * 2^128 - 1; only 32-bit integer arithmetic, so JavaScript and C++ give bit-identical streams.
 *
 * Seeding: an integer seed mod 2^64 is expanded into the four state words with SplitMix64
 * (Steele, Lea & Flood, OOPSLA 2014), as the xoshiro authors recommend; a string seed is first
 * hashed with 64-bit FNV-1a (Fowler, Noll & Vo).
 *
 * Derived draws (the exact recipes, so that other implementations can reproduce them):
 * - uniform double in [0, 1): `a = next() >>> 5` (27 bits), `b = next() >>> 6` (26 bits),
 *   `(a * 2^26 + b) / 2^53` (the 53-bit recipe of Matsumoto & Nishimura's `genrand_res53`).
 * - standard normals: Box & Muller (1958), in pairs: `u1 = 1 - uniform()` (in (0, 1]),
 *   `u2 = uniform()`, `r = sqrt(-2 ln u1)`, `z0 = r cos(2 pi u2)`, `z1 = r sin(2 pi u2)`.
 *   A fill of an odd length discards the last `z1`, so a fill of n normals consumes exactly
 *   `4 * ceil(n / 2)` outputs. (Training's latents.)
 * - standard normals by the ziggurat, {@link fillNormalZiggurat}: Marsaglia & Tsang's 128-layer
 *   tables, Doornik's split of one output into layer (low 7 bits) and value (the other 25, signed);
 *   the rare wedge and tail steps use `uniform()`, `Math.exp` and `Math.log`, so a fill's length
 *   in outputs depends on the values. (Generation's latents and privacy noise, seeded generation.)
 * - `jump()`: the xoshiro128** authors' jump, 2^64 outputs ahead.
 *
 * The native core reproduces the uniform, jump and ziggurat recipes bit for bit
 * (native/src/draws.h, with V8's fdlibm `exp` and `log` ported); this file is the reference.
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

/** 64-bit FNV-1a of `s`'s UTF-8 bytes, unsigned (basis 0xcbf29ce484222325, prime 0x100000001b3). */
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

  /** A stream from an integer seed or BigInt, mod 2^64, by SplitMix64. @throws RangeError. */
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

  /** Advances 2^64 outputs (the reference `jump`): non-overlapping blocks for parallel draws. */
  jump(): void {
    const JUMP = [0x8764000b, 0xf542d2d3, 0x6fa035c3, 0x77f2db5b];
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let s3 = 0;
    for (const word of JUMP) {
      for (let b = 0; b < 32; b++) {
        if ((word >>> b) & 1) {
          s0 ^= this.s0;
          s1 ^= this.s1;
          s2 ^= this.s2;
          s3 ^= this.s3;
        }
        this.nextUint32();
      }
    }
    this.s0 = s0 >>> 0;
    this.s1 = s1 >>> 0;
    this.s2 = s2 >>> 0;
    this.s3 = s3 >>> 0;
  }

  /** Uniform double in [0, 1) with 53 random bits. */
  uniform(): number {
    const a = this.nextUint32() >>> 5;
    const b = this.nextUint32() >>> 6;
    return (a * 67108864 + b) / 9007199254740992;
  }

  /** Shuffles `a` in place (Fisher–Yates, TAOCP 3.4.2P), one uniform per position from the end. */
  shuffle<T extends { length: number; [i: number]: number }>(a: T): T {
    for (let i = a.length - 1; i > 0; i--) {
      const j = Math.floor(this.uniform() * (i + 1));
      const t = a[i];
      a[i] = a[j];
      a[j] = t;
    }
    return a;
  }

  /** Fills `out` with uniform doubles in [0, 1), in index order; returns `out`. */
  fillUniform<T extends Float64Array | Float32Array>(out: T): T {
    for (let i = 0; i < out.length; i++) out[i] = this.uniform();
    // Float32 rounding can turn values just below 1 into 1; keep the half-open interval.
    if (out instanceof Float32Array) for (let i = 0; i < out.length; i++) if (out[i] >= 1) out[i] = 0.99999994;
    return out;
  }

  /** Fills `out` with standard normals (Box–Muller pairs, index order) x `scale`; returns out. */
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


/** Ziggurat tables (Marsaglia & Tsang 2000), 128 layers, with Doornik's (2005) layer split. */
const ZIG = (() => {
  const m = 2 ** 24;
  const kn = new Float64Array(128);
  const wn = new Float64Array(128);
  const fn = new Float64Array(128);
  let dn = 3.442619855899;
  let tn = dn;
  const vn = 9.91256303526217e-3;
  const q = vn / Math.exp(-0.5 * dn * dn);
  kn[0] = (dn / q) * m;
  kn[1] = 0;
  wn[0] = q / m;
  wn[127] = dn / m;
  fn[0] = 1;
  fn[127] = Math.exp(-0.5 * dn * dn);
  for (let i = 126; i >= 1; i--) {
    dn = Math.sqrt(-2 * Math.log(vn / dn + Math.exp(-0.5 * dn * dn)));
    kn[i + 1] = (dn / tn) * m;
    tn = dn;
    fn[i] = Math.exp(-0.5 * dn * dn);
    wn[i] = dn / m;
  }
  return { kn, wn, fn, r: 3.442619855899 };
})();

/** Copies of the ziggurat tables (tests compare them with the native core's, bit for bit). */
export function zigguratTables(): { kn: Float64Array; wn: Float64Array; fn: Float64Array; r: number } {
  return { kn: ZIG.kn.slice(), wn: ZIG.wn.slice(), fn: ZIG.fn.slice(), r: ZIG.r };
}

/**
 * Fills `out` with standard normals from `rng` by the ziggurat; filling in pieces gives the values
 * of one fill, a Float32Array gets each double rounded to nearest. native/src/draws.cc
 * `ZigguratNormal` is the C++ port (same operations in the same order; keep the two in step).
 */
export function fillNormalZiggurat<T extends Float32Array | Float64Array>(rng: Rng, out: T): T {
  const { kn, wn, fn, r } = ZIG;
  for (let i = 0; i < out.length; i++) {
    let u = rng.nextUint32();
    let iz = u & 127;
    let j = (u | 0) >> 7;
    if (Math.abs(j) < kn[iz]) {
      out[i] = j * wn[iz];
      continue;
    }
    for (;;) {
      const x = j * wn[iz];
      if (iz === 0) {
        let t: number;
        let y: number;
        do {
          t = -Math.log(1 - rng.uniform()) / r;
          y = -Math.log(1 - rng.uniform());
        } while (y + y < t * t);
        out[i] = j > 0 ? r + t : -r - t;
        break;
      }
      if (fn[iz] + rng.uniform() * (fn[iz - 1] - fn[iz]) < Math.exp(-0.5 * x * x)) {
        out[i] = x;
        break;
      }
      u = rng.nextUint32();
      iz = u & 127;
      j = (u | 0) >> 7;
      if (Math.abs(j) < kn[iz]) {
        out[i] = j * wn[iz];
        break;
      }
    }
  }
  return out;
}
