/**
 * Keyed permutations of [0, N) (Feistel network with cycle walking, J. Black & P. Rogaway, "Ciphers
 * with Arbitrary Finite Domains", CT-RSA 2002, LNCS 2271, sections 4 and 5), for the identifier and
 * semantic generators; the same key gives the same permutation, another key an unrelated one.
 * The w-bit block (w covering N) splits into halves of floor(w/2) and ceil(w/2) bits; 8 rounds
 * alternate `hi ^= F_r(lo)` and `lo ^= F_r(hi)`, each invertible whatever F_r is (a keyed
 * murmur3-finaliser hash). Cycle walking (re-encrypt until below N) restricts it to [0, N); as
 * N > 2^(w-1), fewer than 2 encryptions are expected per value.
 */
import { deriveSeed, mix32 } from "./sfc32";

const ROUNDS = 8;
export const TWO32 = 4294967296;
/** Domains up to this size use {@link SmallPerm} (Number arithmetic). */
export const SMALL_DOMAIN = 2 ** 52;
const MASK32 = 0xffffffffn;

/** Smallest w >= 0 with 2^w >= n (n >= 1), i.e. the bit width of n - 1. */
function bitWidth(n: bigint): number {
  return n <= 1n ? 0 : (n - 1n).toString(2).length;
}

/** Round keys: two 32-bit words per round, from `deriveSeed(key, r, 0|1)`. */
function roundKeys(key: number): [Uint32Array, Uint32Array] {
  const k1 = new Uint32Array(ROUNDS);
  const k2 = new Uint32Array(ROUNDS);
  for (let r = 0; r < ROUNDS; r++) {
    k1[r] = deriveSeed(key, r, 0);
    k2[r] = deriveSeed(key, r, 1);
  }
  return [k1, k2];
}

/** A keyed permutation of [0, n), n <= 2^52, in Number arithmetic (halves of <= 26 bits). */
class SmallPerm {
  private readonly loBits: number;
  private readonly loSize: number;
  private readonly hiMask: number;
  private readonly loMask: number;
  private readonly k1: Uint32Array;
  private readonly k2: Uint32Array;

  constructor(
    private readonly n: number,
    key: number,
  ) {
    const w = bitWidth(BigInt(n));
    const hiBits = Math.floor(w / 2);
    this.loBits = w - hiBits;
    this.loSize = 2 ** this.loBits;
    this.hiMask = 2 ** hiBits - 1;
    this.loMask = this.loSize - 1;
    [this.k1, this.k2] = roundKeys(key);
  }

  /** The image of x, 0 <= x < n. */
  apply(x: number): number {
    const { loSize, hiMask, loMask, k1, k2, n } = this;
    do {
      let lo = x % loSize;
      let hi = (x - lo) / loSize;
      for (let r = 0; r < ROUNDS; r += 2) {
        hi = (hi ^ mix32((mix32(lo ^ k1[r]) + k2[r]) | 0)) & hiMask;
        lo = (lo ^ mix32((mix32(hi ^ k1[r + 1]) + k2[r + 1]) | 0)) & loMask;
      }
      x = hi * loSize + lo;
    } while (x >= n);
    return x;
  }
}

/** A keyed permutation of [0, n), any n >= 1, on BigInt blocks; round function on 32-bit words. */
class BigPerm {
  private readonly loBits: bigint;
  private readonly hiMask: bigint;
  private readonly loMask: bigint;
  private readonly hiWords: number;
  private readonly loWords: number;
  private readonly k1: Uint32Array;
  private readonly k2: Uint32Array;

  constructor(
    private readonly n: bigint,
    key: number,
  ) {
    const w = bitWidth(n);
    const hiBits = Math.floor(w / 2);
    const loBits = w - hiBits;
    this.loBits = BigInt(loBits);
    this.hiMask = (1n << BigInt(hiBits)) - 1n;
    this.loMask = (1n << this.loBits) - 1n;
    this.hiWords = Math.ceil(hiBits / 32);
    this.loWords = Math.ceil(loBits / 32);
    [this.k1, this.k2] = roundKeys(key);
  }

  /**
   * Round function: absorbs `inWords` 32-bit words of `v` into two 32-bit lanes, squeezes
   * `outWords` words and masks them to the target half.
   */
  private f(r: number, v: bigint, inWords: number, outWords: number, mask: bigint): bigint {
    let a = this.k1[r];
    let b = this.k2[r];
    for (let j = 0; j < inWords; j++) {
      const word = Number(v & MASK32);
      v >>= 32n;
      a = mix32(a ^ word);
      b = mix32((b + word + a) | 0);
    }
    let out = 0n;
    for (let j = 0; j < outWords; j++) {
      const o = (mix32((a + Math.imul(j + 1, 0x9e3779b9)) | 0) ^ mix32(b ^ Math.imul(j + 1, 0x85ebca6b))) >>> 0;
      out = j === 0 ? BigInt(o) : (out << 32n) | BigInt(o);
    }
    return out & mask;
  }

  /** The image of x, 0 <= x < n. */
  apply(x: bigint): bigint {
    const { loBits, hiMask, loMask, hiWords, loWords, n } = this;
    do {
      let lo = x & loMask;
      let hi = x >> loBits;
      for (let r = 0; r < ROUNDS; r += 2) {
        hi ^= this.f(r, lo, loWords, hiWords, hiMask);
        lo ^= this.f(r + 1, hi, hiWords, loWords, loMask);
      }
      x = (hi << loBits) | lo;
    } while (x >= n);
    return x;
  }
}

/** A permutation of [0, n) on whichever path fits n. */
export type Perm = { small: SmallPerm; big?: undefined } | { small?: undefined; big: BigPerm };

/** The permutation of [0, n) for `key`, on the Number path when n <= {@link SMALL_DOMAIN}. */
export function makePerm(n: bigint, key: number): Perm {
  return n <= BigInt(SMALL_DOMAIN) ? { small: new SmallPerm(Number(n), key) } : { big: new BigPerm(n, key) };
}

/** Index i (a safe integer, already reduced below n) through the permutation, as a BigInt. */
export function permBig(p: Perm, i: number): bigint {
  return p.small ? BigInt(p.small.apply(i)) : p.big!.apply(BigInt(i));
}

