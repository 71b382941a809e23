/**
 * A growable byte buffer for the Parquet writer: pages, headers and footer are written front to
 * back, little endian. Not zeroed: every byte up to `pos` is written before it is read.
 */

/** Bytes written front to back into a buffer that doubles when full. */
export class ByteSink {
  /** The buffer; bytes [0, pos) are written. Replaced when it grows: read it after writing. */
  buf: Buffer;
  /** Number of bytes written. */
  pos = 0;
  private view: DataView;

  /** @param capacity the initial size in bytes (grown as needed). */
  constructor(capacity = 1024) {
    this.buf = Buffer.allocUnsafeSlow(Math.max(16, capacity));
    this.view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.length);
  }

  /** Makes room for `n` more bytes. */
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = Buffer.allocUnsafeSlow(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = new DataView(next.buffer, next.byteOffset, next.length);
  }

  /** Forgets the bytes written (the buffer is kept for the next ones). */
  reset(): void {
    this.pos = 0;
  }

  /** The bytes written so far (a view, not a copy: write nothing more while it is in use). */
  bytes(): Buffer {
    return this.buf.subarray(0, this.pos);
  }

  /** One byte (its low 8 bits). */
  byte(b: number): void {
    this.ensure(1);
    this.buf[this.pos++] = b;
  }

  /** `b`'s bytes. */
  append(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /** The UTF-8 bytes of `s`, without a length. */
  utf8(s: string): void {
    this.ensure(3 * s.length);
    this.pos += this.buf.write(s, this.pos, "utf8");
  }

  /** An unsigned 32-bit integer, little endian, at `at` (< pos): a length known after its data. */
  u32At(at: number, v: number): void {
    this.view.setUint32(at, v, true);
  }

  /** An unsigned 32-bit integer, little endian. */
  u32(v: number): void {
    this.ensure(4);
    this.view.setUint32(this.pos, v, true);
    this.pos += 4;
  }

  /** A signed 32-bit integer, little endian. */
  i32(v: number): void {
    this.ensure(4);
    this.view.setInt32(this.pos, v, true);
    this.pos += 4;
  }

  /** A signed 64-bit integer, little endian: a bigint, or a number that is a safe integer. */
  i64(v: bigint | number): void {
    this.ensure(8);
    if (typeof v === "bigint") this.view.setBigInt64(this.pos, v, true);
    else {
      const hi = Math.floor(v / 4294967296);
      this.view.setUint32(this.pos, v - hi * 4294967296, true);
      this.view.setInt32(this.pos + 4, hi, true);
    }
    this.pos += 8;
  }

  /** An IEEE 754 double, little endian. */
  f64(v: number): void {
    this.ensure(8);
    this.view.setFloat64(this.pos, v, true);
    this.pos += 8;
  }

  /**
   * An unsigned LEB128 varint (7 bits a byte, low first): a non-negative safe integer or a bigint
   * in [0, 2^64).
   * @throws RangeError for a negative value.
   */
  varint(v: number | bigint): void {
    if (typeof v === "bigint") {
      if (v < 0n) throw new RangeError(`varint of a negative value ${v}`);
      while (v >= 0x80n) {
        this.byte(Number(v & 0x7fn) | 0x80);
        v >>= 7n;
      }
      this.byte(Number(v));
      return;
    }
    if (v < 0) throw new RangeError(`varint of a negative value ${v}`);
    this.ensure(10);
    const buf = this.buf;
    let p = this.pos;
    while (v >= 0x80) {
      // Division, not bit operations: v may exceed 2^31.
      const q = Math.floor(v / 128);
      buf[p++] = (v - q * 128) | 0x80;
      v = q;
    }
    buf[p++] = v;
    this.pos = p;
  }
}

/**
 * The zigzag form of a signed integer (0, -1, 1, -2, ... -> 0, 1, 2, 3, ...), as the compact
 * protocol writes i16/i32/i64: a number for |v| < 2^52, else a bigint (v in [-2^63, 2^63)).
 */
export function zigzag(v: number | bigint): number | bigint {
  if (typeof v === "number") {
    if (Math.abs(v) < 2 ** 52) return v >= 0 ? 2 * v : -2 * v - 1;
    v = BigInt(v);
  }
  return BigInt.asUintN(64, (v << 1n) ^ (v >> 63n));
}
