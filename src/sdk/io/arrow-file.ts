/**
 * The Arrow IPC file format (magic `ARROW1`, a footer indexing the batches; Feather v2 is the same
 * format) of decoded batches (`../batch`), one record batch per batch, written with apache-arrow's
 * `RecordBatchFileWriter`, uncompressed.
 *
 * Column types are `../typed`'s, with one difference: a categorical column (metadata kind
 * `categorical`, without `semantic`: its values come from its code book, seed tables and rules)
 * is `Dictionary<Int32, Utf8>`, as Parquet's dictionary pages hold it, instead of `Utf8`. The
 * values are the same strings (readers that decode dictionaries, as `tableFromIPC`, pyarrow,
 * DuckDB and Polars do, read the same values; pandas gets a `category` column); the file holds
 * each distinct text once instead of once per row (for 1,000,000 rows of Adult, 85 MB instead of
 * 163 MB), and the batch's codes are its indices, so no per-row bytes are copied (docs/formats.md,
 * "Fifth round"). Identifiers and semantic categorical columns (person names, cities: mostly
 * fresh values, a dictionary as large as the column) stay `Utf8`.
 *
 * A dictionary holds each non-empty text once, in the order first written; a blank cell is null.
 * A text a later batch brings (a seed cell, a rule's repair to a value the batch's code book
 * lacks) is added by a delta dictionary batch before the record batch that uses it: the IPC file
 * format allows deltas (not replacements) and pyarrow, DuckDB (through pyarrow) and apache-arrow
 * read them. Dictionary ids are the column's index, so the same batches give the same bytes.
 */
import { Readable } from "node:stream";
import type { AsyncByteQueue, Data, Dictionary, Int32, RecordBatch, Schema, Utf8, Vector } from "apache-arrow";
import { arrow } from "./arrow-runtime";
import type { Metadata } from "../../contract";
import { cellText, type DecodedBatch, type DecodedColumn } from "../generate/batch";
import type { ArrayPool } from "../client/array-pool";
import type { BatchConverter } from "./typed";

/**
 * Whether feature `f` is written dictionary-encoded: categorical, without a semantic kind (see
 * the module comment).
 */
export function isDictionaryColumn(meta: Metadata, f: string): boolean {
  const stats = meta.column_stats?.[f];
  return stats?.type === "categorical" && stats.semantic === undefined;
}

/**
 * The dictionary of one column across the file: its texts, their indices, and the chunks written
 * so far (the first one in the first batch, then one delta per batch that brings new texts).
 */
class ColumnDictionary {
  readonly type: Dictionary<Utf8, Int32>;
  private readonly indexOf = new Map<string, number>();
  private readonly chunks: Data<Utf8>[] = [];
  private vector: Vector<Utf8> | undefined;
  private size = 0;
  private added: string[] = [];
  /** The last code book read (`DictColumn.dict`), its length then, and its entries' indices (-1: blank). */
  private lastDict: readonly string[] | undefined;
  private lastLength = 0;
  private remap = new Int32Array(0);
  private remapNulls = false;
  private remapIdentity = false;

  constructor(id: number) {
    this.type = new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32(), id, false);
  }

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

  /** Reads a code book's entries into `remap` (kept while the same array of the same length comes back). */
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

  /**
   * The column's `n` cells as dictionary data (indices, nulls, the dictionary so far); remapped
   * indices and the validity bitmap of a code-book column come from `pool` when given.
   */
  encode(col: DecodedColumn, n: number, pool?: ArrayPool): Data<Dictionary<Utf8, Int32>> {
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
    // The first batch writes the dictionary (empty if every cell is blank), later ones a delta.
    if (this.added.length > 0 || this.vector === undefined) {
      this.chunks.push(arrow.vectorFromArray(this.added, new arrow.Utf8()).data[0]);
      this.size += this.added.length;
      this.added = [];
      this.vector = new arrow.Vector(this.chunks);
    }
    return arrow.makeData({ type: this.type, length: n, nullCount, ...(nullCount > 0 ? { nullBitmap: bitmap } : {}), data: indices, dictionary: this.vector });
  }
}

/** `out[r] = remap[index[r]]`, 0 for a blank entry's -1 (the row is null; its slot holds a valid index all the same). */
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

/**
 * Converts decoded batches to the record batches of one Arrow IPC file: `converter`'s columns,
 * categorical ones dictionary-encoded (module comment).
 */
export class ArrowFileBatches {
  /** The file's schema: `converter.schema` with the dictionary columns' type replaced. */
  readonly schema: Schema;
  private readonly dictionaries: (ColumnDictionary | undefined)[];

  constructor(
    private readonly converter: BatchConverter,
    meta: Metadata,
  ) {
    this.dictionaries = converter.columns.map((c, j) => (c.type === "string" && isDictionaryColumn(meta, c.name) ? new ColumnDictionary(j) : undefined));
    this.schema = new arrow.Schema(converter.schema.fields.map((f, j) => (this.dictionaries[j] ? new arrow.Field(f.name, this.dictionaries[j]!.type, true) : f)));
  }

  /**
   * The record batch of `batch`.
   * @param describe names row r of the batch in error messages.
   * @throws DataError as `BatchConverter.fromBatch`.
   */
  recordBatch(batch: DecodedBatch, describe: (r: number) => string): RecordBatch {
    const n = batch.length;
    const children = batch.cells.map((col, j) => this.dictionaries[j]?.encode(col, n, batch.arrays) ?? this.converter.columnFromBatch(j, col, n, describe, batch.arrays));
    return new arrow.RecordBatch(this.schema, arrow.makeData({ type: new arrow.Struct(this.schema.fields), length: n, nullCount: 0, children }));
  }
}

/**
 * Receives the bytes a RecordBatchFileWriter writes, synchronously, so that they can be handed to
 * the destination batch by batch with its backpressure (the writer's own Node stream accepts
 * batches without waiting for the destination). Passed to `writer.reset(sink)`, which uses an
 * AsyncByteQueue sink as is.
 */
class Collected extends arrow.AsyncByteQueue {
  private chunks: Uint8Array[] = [];
  override write(value: Parameters<AsyncByteQueue["write"]>[0]): void {
    if (value instanceof Uint8Array && value.byteLength > 0) this.chunks.push(value);
  }
  /** The bytes written since the last call. */
  take(): Uint8Array[] {
    const out = this.chunks;
    this.chunks = [];
    return out;
  }
}

/**
 * apache-arrow's RecordBatchFileWriter, its bytes handed out record batch by record batch: the
 * chunks are the writer's own (headers, padding) and views of the record batch's buffers, so they
 * are read before those buffers are reused.
 */
export class ArrowFileWriter {
  private readonly sink = new Collected();
  private readonly writer = new arrow.RecordBatchFileWriter();
  constructor(schema: Schema) {
    this.writer.reset(this.sink, schema);
  }

  /** The bytes of `batch` (with the file's start before the first, and any dictionary batch before it). */
  write(batch: RecordBatch): Uint8Array[] {
    this.writer.write(batch);
    return this.sink.take();
  }

  /** The file's last bytes (the footer; the start too when no batch was written). */
  close(): Uint8Array[] {
    this.writer.close();
    return this.sink.take();
  }
}

/**
 * The memory of a record batch's column buffers (values, validity, offsets), for
 * `ArrayPool.give` once the batch's bytes are written.
 */
export function bufferViews(batch: RecordBatch): ArrayBufferView[] {
  const out: ArrayBufferView[] = [];
  for (const d of batch.data.children) for (const v of [d.values, d.nullBitmap, d.valueOffsets]) if (ArrayBuffer.isView(v)) out.push(v);
  return out;
}

/**
 * The bytes of the Arrow IPC file of `batches` with `schema`, one record batch per batch; each
 * batch's bytes (with any dictionary batch before it) are handed on before the next is pulled.
 */
export function arrowFile(schema: Schema, batches: AsyncGenerator<RecordBatch>): Readable {
  async function* bytes(): AsyncGenerator<Uint8Array> {
    const writer = new ArrowFileWriter(schema);
    for await (const b of batches) yield* writer.write(b);
    yield* writer.close();
  }
  return Readable.from(bytes());
}
