/**
 * A Bloom filter of a column's real values (B. H. Bloom, CACM 13(7), 1970) in
 * `id_shape.semantic.bloom`, so the decoder refuses real values without the metadata holding any.
 * m = ceil(-n ln p / (ln 2)^2) bits, h = round((m / n) ln 2) hashes for p = 1%, capped at
 * {@link MAX_BLOOM_BYTES} (larger columns get a higher rate); double hashing h1 + j * h2 mod m
 * (Kirsch and Mitzenmacher, ESA 2006) of the trimmed, lower-cased value. It reveals no value, only
 * answers a guess ("maybe" for 1% of absent values): the price of never copying a real value.
 */

/** Largest filter sent, in bytes (64 KiB; its base64 is at most 87,384 characters). */
export const MAX_BLOOM_BYTES = 65536;

/** Target false-positive rate. */
export const BLOOM_FPR = 0.01;

function hash(s: string, seed: number): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** The normal form values are hashed in: trimmed, lower case. */
export function bloomKey(v: string): string {
  return v.trim().toLowerCase();
}

/** A Bloom filter over strings. */
export class Bloom {
  private readonly m: number;
  /** `bytes`: the bit array (length >= 1); `hashes`: number of hash functions (>= 1). */
  constructor(
    private readonly bytes: Uint8Array,
    private readonly hashes: number,
  ) {
    if (bytes.length < 1 || !(Number.isInteger(hashes) && hashes >= 1 && hashes <= 32)) {
      throw new RangeError(`Bloom: ${bytes.length} bytes and ${hashes} hashes (need >= 1 byte and 1..32 hashes)`);
    }
    this.m = bytes.length * 8;
  }

  /** A filter holding `values`, sized at {@link BLOOM_FPR} (capped at {@link MAX_BLOOM_BYTES}). */
  static of(values: Iterable<string>): Bloom {
    const keys = new Set<string>();
    for (const v of values) keys.add(bloomKey(v));
    const n = Math.max(1, keys.size);
    const bits = Math.ceil((-n * Math.log(BLOOM_FPR)) / (Math.LN2 * Math.LN2));
    const bytes = Math.min(MAX_BLOOM_BYTES, Math.max(8, Math.ceil(bits / 8)));
    const hashes = Math.max(1, Math.min(16, Math.round(((bytes * 8) / n) * Math.LN2)));
    const b = new Bloom(new Uint8Array(bytes), hashes);
    for (const k of keys) b.addKey(k);
    return b;
  }

  /** Parses `{bits, hashes}` from the metadata. @throws RangeError on a malformed filter. */
  static fromStats(s: { bits: string; hashes: number }): Bloom {
    if (typeof s?.bits !== "string") throw new RangeError("Bloom: bits must be a base64 string");
    const bytes = Buffer.from(s.bits, "base64");
    if (bytes.length > MAX_BLOOM_BYTES) throw new RangeError(`Bloom: ${bytes.length} bytes exceed ${MAX_BLOOM_BYTES}`);
    return new Bloom(new Uint8Array(bytes), s.hashes);
  }

  /** `{bits: base64, hashes}` for the metadata. */
  toStats(): { bits: string; hashes: number } {
    return { bits: Buffer.from(this.bytes).toString("base64"), hashes: this.hashes };
  }

  private addKey(k: string): void {
    const h1 = hash(k, 0);
    const h2 = hash(k, 0x5bd1e995) | 1;
    for (let j = 0; j < this.hashes; j++) {
      const bit = (h1 + Math.imul(j, h2)) >>> 0;
      const at = bit % this.m;
      this.bytes[at >> 3] |= 1 << (at & 7);
    }
  }

  /** True when `v` may be one of the values (always for a member; for 1% of others). */
  has(v: string): boolean {
    const k = bloomKey(v);
    const h1 = hash(k, 0);
    const h2 = hash(k, 0x5bd1e995) | 1;
    for (let j = 0; j < this.hashes; j++) {
      const at = ((h1 + Math.imul(j, h2)) >>> 0) % this.m;
      if ((this.bytes[at >> 3] & (1 << (at & 7))) === 0) return false;
    }
    return true;
  }
}
