/**
 * Memory for typed arrays kept between the batches of one sample, so that a sample of many
 * batches touches the same memory again instead of fresh memory per batch. Fresh memory costs a
 * page fault per 4 KB on first touch (the kernel maps and zeroes the page): about 12-16 µs each
 * on the 2-core target machine, more CPU than the copy into the array (docs/formats.md, "Sixth
 * round" and "Seventh round"). One pool serves, per sample:
 * - the body of a Generate response (`./node-fetch`'s `bytes`) and its widened codes
 *   (`./arrow-int32`), given back once the batch is decoded;
 * - the decoded columns of a batch (`../generate/decode`: code-book indices, integers, blank
 *   flags) and the Arrow buffers a writer builds from them (`../io/typed`), given back once the
 *   batch's bytes are written (`DecodedBatch.release`, `../io/columnar`).
 * The pool lends whole ArrayBuffers and takes back any view of one it lent, so an array can be
 * given back through another view of its memory (an Arrow buffer of the decoded indices). A
 * buffer is lent again only after it was given back, so a caller that never gives back gets fresh
 * memory, as without a pool. Not shared between concurrent samples.
 */
export class ArrayPool {
  /** At most this many free buffers are kept. */
  static readonly KEPT = 256;
  private readonly free: ArrayBuffer[] = [];
  private readonly lent = new WeakSet<ArrayBuffer>();

  /** A buffer of at least `bytes` bytes: the smallest free one that long, else a fresh one. */
  private take(bytes: number): ArrayBuffer {
    let best = -1;
    for (let i = 0; i < this.free.length; i++) {
      const b = this.free[i].byteLength;
      if (b >= bytes && (best < 0 || b < this.free[best].byteLength)) best = i;
    }
    const buffer = best >= 0 ? this.free.splice(best, 1)[0] : new ArrayBuffer(bytes);
    this.lent.add(buffer);
    return buffer;
  }

  /** An Int32Array of `n` entries to be overwritten (its contents are unspecified). */
  int32(n: number): Int32Array<ArrayBuffer> {
    return new Int32Array(this.take(4 * n), 0, n);
  }

  /** A Float64Array of `n` entries to be overwritten (its contents are unspecified). */
  float64(n: number): Float64Array<ArrayBuffer> {
    return new Float64Array(this.take(8 * n), 0, n);
  }

  /** A BigInt64Array of `n` entries to be overwritten (its contents are unspecified). */
  bigint64(n: number): BigInt64Array<ArrayBuffer> {
    return new BigInt64Array(this.take(8 * n), 0, n);
  }

  /** A Uint8Array of `n` bytes to be overwritten (its contents are unspecified). */
  bytes(n: number): Uint8Array<ArrayBuffer> {
    return new Uint8Array(this.take(n), 0, n);
  }

  /** A Uint8Array of `n` zeros. */
  uint8(n: number): Uint8Array<ArrayBuffer> {
    return new Uint8Array(this.take(n), 0, n).fill(0);
  }

  /**
   * Gives back the memory of views this pool lent (any view of a lent buffer); other values (other
   * arrays, undefined) are ignored, and so is a buffer given back twice. The caller must not use
   * any view of that memory afterwards.
   */
  give(views: Iterable<unknown>): void {
    for (const view of views) {
      if (!ArrayBuffer.isView(view)) continue;
      const buffer = view.buffer;
      if (!(buffer instanceof ArrayBuffer) || !this.lent.has(buffer)) continue;
      this.lent.delete(buffer);
      if (this.free.length < ArrayPool.KEPT) this.free.push(buffer);
    }
  }
}
