/**
 * Seeded pseudo-random numbers for the SDK's client-side draws and per-batch seeds: sfc32 (Chris
 * Doty-Humphrey's "Small Fast Chaotic" PRNG, PractRand), seeded through splitmix32-style mixing;
 * uniforms use 53 bits. Deterministic across platforms: 32-bit integer arithmetic only.
 */

/** Mixes a 32-bit value (the murmur3 / splitmix32 finaliser). */
export function mix32(x: number): number {
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

/** Splits any safe integer (or other finite number) into two 32-bit words. */
function words(v: number): [number, number] {
  if (!Number.isFinite(v)) throw new RangeError(`seed must be a finite number, got ${v}`);
  const neg = v < 0;
  const a = Math.floor(Math.abs(v));
  const lo = a % 0x100000000 >>> 0;
  const hi = Math.floor(a / 0x100000000) >>> 0;
  return [lo, (hi ^ (neg ? 0x80000000 : 0)) >>> 0];
}

/**
 * Derives a seed from a base seed and a path of indices, e.g. `deriveSeed(seed, batch, 1)`: nearby
 * inputs give unrelated outputs; an unsigned 32-bit integer (valid as a generate request's `seed`).
 */
export function deriveSeed(seed: number, ...path: number[]): number {
  const [lo, hi] = words(seed);
  let h = mix32(lo ^ 0x9e3779b9);
  h = mix32(h ^ Math.imul(hi, 0x85ebca6b) ^ 0x7f4a7c15);
  for (const p of path) {
    const [plo, phi] = words(p);
    h = mix32((h + 0x9e3779b9 + plo) ^ Math.imul(phi + 1, 0xcc9e2d51));
  }
  return h >>> 0;
}

/** A seeded random stream (sfc32). */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  /** @param seed any finite number; streams of different seeds are independent in practice. */
  constructor(seed: number) {
    const [lo, hi] = words(seed);
    this.a = mix32(lo ^ 0x243f6a88);
    this.b = mix32(hi ^ 0x85a308d3);
    this.c = mix32((lo + 0x13198a2e) ^ hi);
    this.d = 1;
    for (let i = 0; i < 12; i++) this.u32();
  }

  /** Writes the stream's four 32-bit words into `into[0..3]` (for `../native-loops`). */
  saveState(into: Int32Array): void {
    into[0] = this.a;
    into[1] = this.b;
    into[2] = this.c;
    into[3] = this.d;
  }

  /** Continues the stream from the words {@link saveState} wrote (and a native loop advanced). */
  loadState(from: Int32Array): void {
    this.a = from[0];
    this.b = from[1];
    this.c = from[2];
    this.d = from[3];
  }

  /** Next unsigned 32-bit integer. */
  u32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform double in [0, 1) with 53 random bits. */
  next(): number {
    const hi = this.u32() >>> 5; // 27 bits
    const lo = this.u32() >>> 6; // 26 bits
    return (hi * 67108864 + lo) / 9007199254740992;
  }

  /** Uniform integer in [0, n), n >= 1. */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /**
   * Inverse transform sampling, one draw: the first i with `cum[i] > u` for u = {@link next} x
   * `cum[last]`, where `cum` holds non-decreasing cumulative weights (any total). Empty: 0.
   */
  pickCumulative(cum: ArrayLike<number>): number {
    const u = this.next() * (cum.length ? cum[cum.length - 1] : 0);
    let lo = 0;
    let hi = cum.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cum[mid] > u) hi = mid;
      else lo = mid + 1;
    }
    return Math.max(lo, 0);
  }

  /** Shuffles `a` in place (Fisher–Yates, Durstenfeld's variant) and returns it. */
  shuffle<T extends { length: number; [i: number]: number }>(a: T): T {
    for (let i = a.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const t = a[i];
      a[i] = a[j];
      a[j] = t;
    }
    return a;
  }
}
