/**
 * The near-copy filter's set: the real rows' leave-one-column-out keys as keyed hashes in a Bloom
 * filter (Bloom, CACM 13(7), 1970), so it holds no real value in the clear.
 *
 * Keys: each cell's token (`./filter`) is hashed with HMAC-SHA-256 under a secret key (RFC 2104)
 * to 64 bits, two 32-bit lanes. A row's masked key for column j is the lane-wise sum (mod 2^32) of
 * its cells' hashes but j's (one subtraction each). A row nearly copies a real row exactly when one
 * of its masked keys is a real row's for the same j, up to 64-bit collisions (about n F / 2^64).
 *
 * The set: a blocked Bloom filter (Putze, Sanders and Singler, WEA 2007): each key sets k bits in
 * one 512-bit block (a cache line) chosen from the low lane and j, positions from the high lane:
 * one cache miss per key. No false negatives; a false positive drops a good row, never keeps a
 * near-copy. Sizing: b = -ln(p / 6) / ln(2)^2 bits per entry for p = {@link ROW_FALSE_POSITIVE} /
 * F per probe (the sixth allows for uneven blocks), k = round(b ln 2), capped at
 * {@link MAX_FILTER_BITS} (past it the rate rises; {@link MaskedKeySet.falsePositiveRate}).
 */
import { createHmac } from "node:crypto";
import { mix32 } from "../generate/sfc32";

/** Target share of rows that nearly copy no real row and are still flagged (before the cap). */
export const ROW_FALSE_POSITIVE = 0.001;

/** Largest Bloom filter, in bits (2^30: 128 MiB). */
export const MAX_FILTER_BITS = 2 ** 30;

/** Hashes the cell tokens of F columns: a 64-bit HMAC-SHA-256 per column and token, cached. */
export class CellHasher {
  private readonly caches: Map<string, readonly [number, number]>[];

  /** @param key the secret (at least 16 bytes). @throws RangeError for a shorter key. */
  constructor(
    private readonly key: Uint8Array,
    columns: number,
  ) {
    if (key.length < 16) throw new RangeError(`the near-copy filter's key has ${key.length} bytes; at least 16 are needed`);
    this.caches = Array.from({ length: columns }, () => new Map());
  }

  /** Column `f`'s token's two lanes to `out[at]`, `out[at + 1]` (the column is hashed in). */
  hash(f: number, token: string, out: Uint32Array, at: number): void {
    const cache = this.caches[f];
    let h = cache.get(token);
    if (h === undefined) {
      const d = createHmac("sha256", this.key).update(`${f}\u0000${token}`).digest();
      h = [d.readUInt32LE(0), d.readUInt32LE(4)];
      if (cache.size >= 1 << 20) cache.clear(); // fresh synthetic texts: keep the cache bounded
      cache.set(token, h);
    }
    out[at] = h[0];
    out[at + 1] = h[1];
  }
}

/** Per row, the lane sums of its cells' hashes (`cells`: n rows of F cells, 2 lanes each). */
export function rowSums(cells: Uint32Array, n: number, F: number): Uint32Array {
  const out = new Uint32Array(2 * n);
  for (let r = 0, o = 0; r < n; r++) {
    let lo = 0;
    let hi = 0;
    for (let f = 0; f < F; f++, o += 2) {
      lo = (lo + cells[o]) >>> 0;
      hi = (hi + cells[o + 1]) >>> 0;
    }
    out[2 * r] = lo;
    out[2 * r + 1] = hi;
  }
  return out;
}

/** Bloom parameters of {@link MaskedKeySet}: bits m (whole blocks) and hashes k. */
export interface BloomSize {
  bits: number;
  hashes: number;
}

/** Bits per block: one 64-byte cache line, so one key costs one cache miss. */
const BLOCK_BITS = 512;
const BLOCK_WORDS = BLOCK_BITS / 32;

/** The size for `entries` masked keys of rows probing `columns` keys each (file header). */
export function bloomSize(entries: number, columns: number): BloomSize {
  const p = ROW_FALSE_POSITIVE / Math.max(1, columns);
  // A blocked filter's keys fall unevenly on its blocks: sized for a sixth of the rate.
  const perEntry = -Math.log(p / 6) / (Math.LN2 * Math.LN2);
  const blocks = Math.max(1, Math.ceil((Math.max(1, entries) * perEntry) / BLOCK_BITS));
  const bits = Math.min(MAX_FILTER_BITS, blocks * BLOCK_BITS);
  const hashes = Math.max(1, Math.min(30, Math.round((bits / Math.max(1, entries)) * Math.LN2)));
  return { bits, hashes };
}

/** The set of the real rows' masked keys: a blocked Bloom filter (file header). */
export class MaskedKeySet {
  private readonly blocks: number;

  /**
   * @param words the bit array, whole blocks of 16 words. @param hashes k, 1..30.
   * @throws RangeError for an empty array, a partial block or k out of range.
   */
  constructor(
    readonly words: Uint32Array,
    readonly hashes: number,
  ) {
    if (words.length < BLOCK_WORDS || words.length % BLOCK_WORDS !== 0 || !(Number.isInteger(hashes) && hashes >= 1 && hashes <= 30)) {
      throw new RangeError(`masked-key set: ${words.length} words and ${hashes} hashes (need whole blocks of ${BLOCK_WORDS} words and 1..30 hashes)`);
    }
    this.blocks = words.length / BLOCK_WORDS;
  }

  /** An empty set sized by {@link bloomSize}. */
  static sized(entries: number, columns: number): MaskedKeySet {
    const { bits, hashes } = bloomSize(entries, columns);
    return new MaskedKeySet(new Uint32Array(bits / 32), hashes);
  }

  get bits(): number {
    return this.words.length * 32;
  }

  /** Adds the masked keys of `n` rows (`sums`, `cells`); with `only`, of rows where it is 1. */
  addRows(cells: Uint32Array, sums: Uint32Array, n: number, F: number, only?: Uint8Array): void {
    const w = this.words;
    for (let r = 0; r < n; r++) {
      if (only !== undefined && only[r] === 0) continue;
      for (let j = 0; j < F; j++) {
        const base = this.keyOf(cells, sums, r, j, F);
        for (let i = 0, x = this.keyHi; i < this.hashes; i++) {
          x = next(x);
          w[base + (x >>> 28)] |= 1 << ((x >>> 23) & 31);
        }
      }
    }
  }

  /** Per row, 1 when one of its F masked keys may be in the set (always when it is). */
  flagRows(cells: Uint32Array, sums: Uint32Array, n: number, F: number): Uint8Array {
    const out = new Uint8Array(n);
    for (let r = 0; r < n; r++) for (let j = 0; j < F && out[r] === 0; j++) if (this.holds(cells, sums, r, j, F)) out[r] = 1;
    return out;
  }

  /**
   * Per row, how many of its F masked keys may be in the set (always those that are): 0 for a row
   * nearly copying no row of the set; F for one equal to a row of it (or one column away from
   * rows of it in every column).
   */
  countRows(cells: Uint32Array, sums: Uint32Array, n: number, F: number): Uint16Array {
    const out = new Uint16Array(n);
    for (let r = 0; r < n; r++) for (let j = 0; j < F; j++) if (this.holds(cells, sums, r, j, F)) out[r]++;
    return out;
  }

  /** Whether row r's masked key for column j may be in the set. */
  private holds(cells: Uint32Array, sums: Uint32Array, r: number, j: number, F: number): boolean {
    const w = this.words;
    const base = this.keyOf(cells, sums, r, j, F);
    for (let i = 0, x = this.keyHi; i < this.hashes; i++) {
      x = next(x);
      if ((w[base + (x >>> 28)] & (1 << ((x >>> 23) & 31))) === 0) return false;
    }
    return true;
  }

  /** The second hash of the key {@link keyOf} read last. */
  private keyHi = 0;

  /**
   * Row r's masked key for column j (its cells' sums less column j's cell, salted by j): the
   * offset of its block, its second hash left in {@link keyHi}.
   */
  private keyOf(cells: Uint32Array, sums: Uint32Array, r: number, j: number, F: number): number {
    const o = 2 * (r * F + j);
    const lo = mix32((((sums[2 * r] - cells[o]) >>> 0) ^ Math.imul(j + 1, 0x9e3779b1)) >>> 0);
    this.keyHi = mix32((sums[2 * r + 1] - cells[o + 1] + Math.imul(j + 1, 0x85ebca77)) >>> 0);
    return ((lo >>> 1) % this.blocks) * BLOCK_WORDS;
  }

  /** Share of set bits. */
  fill(): number {
    let ones = 0;
    for (const x of this.words) {
      let v = x - ((x >>> 1) & 0x55555555);
      v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
      ones += Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
    }
    return ones / this.bits;
  }

  /** Chance that one absent key tests present: mean over blocks of fill^k (a row: F times). */
  falsePositiveRate(): number {
    let sum = 0;
    const w = this.words;
    for (let b = 0; b < this.blocks; b++) {
      let ones = 0;
      for (let i = b * BLOCK_WORDS; i < (b + 1) * BLOCK_WORDS; i++) {
        let v = w[i] - ((w[i] >>> 1) & 0x55555555);
        v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
        ones += Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
      }
      sum += (ones / BLOCK_BITS) ** this.hashes;
    }
    return sum / this.blocks;
  }
}

/**
 * The next bit position inside a block: a 32-bit LCG step whose top 9 bits are the position (plain
 * double hashing's progressions of two keys share most bits in a 512-bit block).
 */
function next(x: number): number {
  return (Math.imul(x, 0x2c1b3c6d) + 0x297a2d39) >>> 0;
}
