/**
 * The Arrow IPC file format (`ARROW1`; Feather v2 is the same) of decoded batches, one record batch
 * per batch, written by `./arrow-ipc`. Column types are `../typed`'s, except that a categorical
 * column without `semantic` is `Dictionary<Int32, Utf8>` (docs/formats.md "Column types"): each
 * non-empty text once, in first-written order, blanks null; a text a later batch brings comes in a
 * delta dictionary batch before the record batch using it (the file format allows deltas, not
 * replacements). Dictionary ids are the column's index, so the same batches give the same bytes.
 */
import { Readable } from "node:stream";
import type { Metadata } from "../../contract";
import { cellText, type DecodedBatch, type DecodedColumn } from "../generate/batch";
import type { ArrayPool } from "../client/array-pool";
import { utf8Encode, type BatchConverter } from "./typed";
import { ArrowIpcFileWriter, type ColumnBuffers, type IpcField } from "./arrow-ipc";

/** Whether feature `f` is written dictionary-encoded: categorical without a semantic kind. */
export function isDictionaryColumn(meta: Metadata, f: string): boolean {
  const stats = meta.column_stats?.[f];
  return stats?.type === "categorical" && stats.semantic === undefined;
}

/** Utf8 buffers of `texts` (none empty, none null). */
function utf8Buffers(texts: readonly string[]): ColumnBuffers {
  const { offsets, bytes } = utf8Encode(texts);
  return { length: texts.length, nullCount: 0, offsets, values: bytes };
}

/**
 * The dictionary of one column across the file; {@link ColumnDictionary.takeAdded} takes what a
 * batch adds (the first dictionary, then one delta per batch that brings new texts).
 */
class ColumnDictionary {
  private readonly indexOf = new Map<string, number>();
  private size = 0;
  private written = false;
  private added: string[] = [];
  /** The last code book read, its length then, and its entries' indices (-1: blank). */
  private lastDict: readonly string[] | undefined;
  private lastLength = 0;
  private remap = new Int32Array(0);
  private remapNulls = false;
  private remapIdentity = false;

  /** The index of `text` (non-empty), adding it to this batch's new texts when it is new. */
  private indexOfText(text: string): number {
    let i = this.indexOf.get(text);
    if (i === undefined) {
      i = this.size + this.added.length;
      this.indexOf.set(text, i);
      this.added.push(text);
    }
    return i;
  }

  /** Reads a code book's entries into `remap` (kept while the same array and length come back). */
  private readCodeBook(dict: readonly string[]): void {
    if (dict === this.lastDict && dict.length === this.lastLength) return;
    if (this.remap.length < dict.length) this.remap = new Int32Array(dict.length);
    this.remapNulls = false;
    this.remapIdentity = true;
    for (let e = 0; e < dict.length; e++) {
      const text = dict[e];
      const i = text === "" ? -1 : this.indexOfText(text);
      this.remap[e] = i;
      if (i < 0) this.remapNulls = true;
      if (i !== e) this.remapIdentity = false;
    }
    this.lastDict = dict;
    this.lastLength = dict.length;
  }

  /** The column's cells as Int32 dictionary indices (blanks null), buffers from `pool` if given. */
  encode(col: DecodedColumn, n: number, pool?: ArrayPool): ColumnBuffers {
    let indices: Int32Array;
    let nullCount = 0;
    let bitmap: Uint8Array | undefined;
    if (col.kind === "dict") {
      this.readCodeBook(col.dict);
      if (this.remapIdentity && col.index.length === n) indices = col.index;
      else {
        indices = pool?.int32(n) ?? new Int32Array(n);
        remapIndices(col.index, this.remap, indices);
      }
      if (this.remapNulls) {
        bitmap = pool?.uint8(Math.ceil(n / 8)) ?? new Uint8Array(Math.ceil(n / 8));
        nullCount = remapValidity(col.index, this.remap, bitmap);
      }
    } else {
      indices = new Int32Array(n);
      bitmap = new Uint8Array(Math.ceil(n / 8));
      for (let r = 0; r < n; r++) {
        const text = cellText(col, r);
        if (text === "") nullCount++;
        else {
          indices[r] = this.indexOfText(text);
          bitmap[r >> 3] |= 1 << (r & 7);
        }
      }
    }
    return { length: n, nullCount, ...(nullCount > 0 ? { validity: bitmap } : {}), values: indices };
  }

  /**
   * The texts added since the last call as Utf8 buffers, and whether they are a delta; undefined
   * when there is nothing to write (the first call always writes, even an empty dictionary).
   */
  takeAdded(): { values: ColumnBuffers; isDelta: boolean } | undefined {
    if (this.added.length === 0 && this.written) return undefined;
    const out = { values: utf8Buffers(this.added), isDelta: this.written };
    this.size += this.added.length;
    this.added = [];
    this.written = true;
    return out;
  }
}

/** `out[r] = remap[index[r]]`, 0 for a blank's -1 (the row is null; its slot a valid index). */
function remapIndices(index: Int32Array, remap: Int32Array, out: Int32Array): void {
  for (let r = 0; r < index.length; r++) {
    const i = remap[index[r]];
    out[r] = i < 0 ? 0 : i;
  }
}

/** Sets bit r of `bitmap` where `remap[index[r]]` >= 0; returns the other rows (nulls). */
function remapValidity(index: Int32Array, remap: Int32Array, bitmap: Uint8Array): number {
  let nulls = 0;
  for (let r = 0; r < index.length; r++) {
    if (remap[index[r]] >= 0) bitmap[r >> 3] |= 1 << (r & 7);
    else nulls++;
  }
  return nulls;
}

/** Writes decoded batches as one Arrow IPC file, categorical columns dictionary-encoded. */
export class ArrowFileBatches {
  /** The file's columns: `converter.columns`, the dictionary ones marked. */
  readonly fields: readonly IpcField[];
  private readonly dictionaries: (ColumnDictionary | undefined)[];
  private readonly writer: ArrowIpcFileWriter;

  constructor(
    private readonly converter: BatchConverter,
    meta: Metadata,
  ) {
    this.dictionaries = converter.columns.map((c) => (c.type === "string" && isDictionaryColumn(meta, c.name) ? new ColumnDictionary() : undefined));
    this.fields = converter.columns.map((c, j) => ({ name: c.name, type: c.type, ...(this.dictionaries[j] ? { dictionary: true } : {}) }));
    this.writer = new ArrowIpcFileWriter(this.fields);
  }

  /** The file's first bytes (magic and schema). */
  start(): Uint8Array[] {
    return this.writer.start();
  }

  /**
   * The bytes of `batch` (any dictionary batch, then its record batch: views of column buffers to
   * write before reuse) and the buffers to give back to its pool. @throws as `fromBatch`.
   */
  write(batch: DecodedBatch, describe: (r: number) => string): { chunks: Uint8Array[]; buffers: ArrayBufferView[] } {
    const n = batch.length;
    const columns = batch.cells.map((col, j) => this.dictionaries[j]?.encode(col, n, batch.arrays) ?? this.converter.buffersFromBatch(j, col, n, describe, batch.arrays));
    const chunks: Uint8Array[] = [];
    this.dictionaries.forEach((d, j) => {
      const added = d?.takeAdded();
      if (added) chunks.push(...this.writer.dictionary(j, added.values, added.isDelta));
    });
    chunks.push(...this.writer.recordBatch(n, columns));
    const buffers: ArrayBufferView[] = [];
    for (const c of columns) for (const v of [c.validity, c.offsets, c.values]) if (v !== undefined) buffers.push(v);
    return { chunks, buffers };
  }

  /** The file's last bytes (the footer). */
  close(): Uint8Array[] {
    return this.writer.close();
  }
}

/**
 * The bytes of the Arrow IPC file of decoded `batches`, each batch's handed on before the next is
 * pulled. Batch memory is not given back to pools (the stream's reader holds the views).
 * @param describeFrom names row r of a batch whose first row is output row `at`.
 */
export function arrowFile(file: ArrowFileBatches, batches: AsyncGenerator<DecodedBatch>, describeFrom: (at: number) => (r: number) => string): Readable {
  async function* bytes(): AsyncGenerator<Uint8Array> {
    yield* file.start();
    let at = 0;
    for await (const b of batches) {
      yield* file.write(b, describeFrom(at)).chunks;
      at += b.length;
    }
    yield* file.close();
  }
  return Readable.from(bytes());
}
