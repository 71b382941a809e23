/**
 * An Arrow IPC file writer over plain column buffers (`./arrow-file`): messages built with
 * `flatbuffers` from Schema.fbs, Message.fbs and File.fbs, column buffers handed on as they are.
 * The file (https://arrow.apache.org/docs/format/Columnar.html#ipc-file-format): `ARROW1`, two
 * padding bytes, the streaming format (encapsulated messages: 0xFFFFFFFF, metadata length,
 * `Message` padded to 8, body), the end-of-stream marker, the `Footer`, its length, `ARROW1`.
 * Metadata V5, little-endian, uncompressed, 8-byte aligned, validity only for columns with nulls;
 * flat columns only.
 */
import { Builder } from "flatbuffers";
import type { ColumnType } from "../columns";
import {
  DATE_UNIT_DAY,
  DATE_UNIT_DEFAULT,
  HEADER_DICTIONARY_BATCH,
  HEADER_RECORD_BATCH,
  HEADER_SCHEMA,
  METADATA_V5,
  PRECISION_DOUBLE,
  TIME_UNIT_MILLISECOND,
  TYPE_DATE,
  TYPE_FLOATING_POINT,
  TYPE_INT,
  TYPE_TIMESTAMP,
  TYPE_UTF8,
} from "../arrow-format";

/** One column of the file: name, type, and `dictionary` for `Dictionary<Int32, Utf8>`. */
export interface IpcField {
  name: string;
  /** The value type; a dictionary column's values are "string". */
  type: ColumnType;
  /** Dictionary-encoded: Int32 indices into Utf8 values carried by dictionary batches. */
  dictionary?: boolean;
}

/**
 * One column's buffers for one batch, in the Arrow columnar layout: `validity` (bit r set, LSB
 * first, when row r holds a value; undefined when `nullCount` is 0); `offsets` (Utf8: `length + 1`
 * byte offsets, the first 0); `values` (Utf8 bytes; Int64 / Timestamp 8 bytes per row; Float64;
 * Date32 and dictionary indices Int32).
 */
export interface ColumnBuffers {
  length: number;
  nullCount: number;
  validity?: Uint8Array;
  offsets?: Int32Array;
  values: ArrayBufferView;
}

const MAGIC = Uint8Array.from([0x41, 0x52, 0x52, 0x4f, 0x57, 0x31]); // "ARROW1"
const ZEROS = new Uint8Array(8);

/** A File.fbs `Block`: message start, metadata length (with prefix and padding), body length. */
interface Block {
  offset: number;
  metaDataLength: number;
  bodyLength: number;
}

/** The bytes of `v` (a view of the same memory). */
function bytesOf(v: ArrayBufferView): Uint8Array {
  return v instanceof Uint8Array ? v : new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
}

/** Adds a Field's type (slots 2, 3: union member and table) for `type`; returns the member. */
function typeTable(b: Builder, type: ColumnType): [number, number] {
  switch (type) {
    case "string":
      b.startObject(0);
      return [TYPE_UTF8, b.endObject()];
    case "int64":
      return [TYPE_INT, intType(b, 64)];
    case "float64":
      b.startObject(1);
      b.addFieldInt16(0, PRECISION_DOUBLE, 0);
      return [TYPE_FLOATING_POINT, b.endObject()];
    case "date":
      b.startObject(1);
      b.addFieldInt16(0, DATE_UNIT_DAY, DATE_UNIT_DEFAULT);
      return [TYPE_DATE, b.endObject()];
    case "timestamp": {
      const tz = b.createString("UTC");
      b.startObject(2);
      b.addFieldInt16(0, TIME_UNIT_MILLISECOND, 0);
      b.addFieldOffset(1, tz, 0);
      return [TYPE_TIMESTAMP, b.endObject()];
    }
  }
}

/** An `Int` type table: signed, `bitWidth` bits. */
function intType(b: Builder, bitWidth: number): number {
  b.startObject(2);
  b.addFieldInt32(0, bitWidth, 0);
  b.addFieldInt8(1, 1, 0);
  return b.endObject();
}

/** A `Schema` table of `fields` (all nullable; dictionary ids = field index). */
function schemaTable(b: Builder, fields: readonly IpcField[]): number {
  const offsets = fields.map((f, id) => {
    const name = b.createString(f.name);
    const [typeType, type] = typeTable(b, f.type);
    let dictionary = 0;
    if (f.dictionary) {
      const indexType = intType(b, 32);
      b.startObject(4);
      b.addFieldInt64(0, BigInt(id), 0n);
      b.addFieldOffset(1, indexType, 0);
      dictionary = b.endObject();
    }
    b.startVector(4, 0, 4);
    const children = b.endVector();
    b.startObject(7);
    b.addFieldOffset(0, name, 0);
    b.addFieldInt8(1, 1, 0);
    b.addFieldInt8(2, typeType, 0);
    b.addFieldOffset(3, type, 0);
    if (dictionary !== 0) b.addFieldOffset(4, dictionary, 0);
    b.addFieldOffset(5, children, 0);
    return b.endObject();
  });
  b.startVector(4, offsets.length, 4);
  for (let i = offsets.length - 1; i >= 0; i--) b.addOffset(offsets[i]);
  const vector = b.endVector();
  b.startObject(4);
  b.addFieldOffset(1, vector, 0);
  return b.endObject();
}

/** A vector of 16-byte structs of two longs (`FieldNode`, `Buffer`) from `[a0, b0, a1, ...]`. */
function longPairs(b: Builder, pairs: readonly number[]): number {
  b.startVector(16, pairs.length / 2, 8);
  for (let i = pairs.length - 2; i >= 0; i -= 2) {
    b.prep(8, 16);
    b.writeInt64(BigInt(pairs[i + 1]));
    b.writeInt64(BigInt(pairs[i]));
  }
  return b.endVector();
}

/** A `RecordBatch` table: `length` rows, its field nodes and buffer regions. */
function recordBatchTable(b: Builder, length: number, nodes: readonly number[], buffers: readonly number[]): number {
  const nodesAt = longPairs(b, nodes);
  const buffersAt = longPairs(b, buffers);
  b.startObject(5);
  b.addFieldInt64(0, BigInt(length), 0n);
  b.addFieldOffset(1, nodesAt, 0);
  b.addFieldOffset(2, buffersAt, 0);
  return b.endObject();
}

/**
 * Writes the Arrow IPC file of a fixed list of columns, batch by batch. Each method returns the
 * bytes to append, in order, including views of the given column buffers: write them out before
 * that memory is reused.
 */
export class ArrowIpcFileWriter {
  private position = 0;
  private readonly dictionaryBlocks: Block[] = [];
  private readonly recordBatchBlocks: Block[] = [];
  private readonly builder = new Builder(1024);

  /** @throws RangeError for a dictionary column whose type is not "string". */
  constructor(private readonly fields: readonly IpcField[]) {
    for (const f of fields) if (f.dictionary && f.type !== "string") throw new RangeError(`column "${f.name}": only Utf8 dictionaries are written`);
  }

  /** The file's first bytes: the magic, its padding and the schema message. */
  start(): Uint8Array[] {
    const b = this.builder;
    b.clear();
    const schema = schemaTable(b, this.fields);
    const out: Uint8Array[] = [];
    this.push(out, Uint8Array.of(...MAGIC, 0, 0));
    this.message(out, HEADER_SCHEMA, schema, 0);
    return out;
  }

  /** A dictionary batch of column `id`'s Utf8 values (`isDelta`: appended to those written). */
  dictionary(id: number, values: ColumnBuffers, isDelta: boolean): Uint8Array[] {
    const b = this.builder;
    b.clear();
    const body = this.body([values], [true]);
    const data = recordBatchTable(b, values.length, body.nodes, body.regions);
    b.startObject(3);
    b.addFieldInt64(0, BigInt(id), 0n);
    b.addFieldOffset(1, data, 0);
    b.addFieldInt8(2, isDelta ? 1 : 0, 0);
    const header = b.endObject();
    const out: Uint8Array[] = [];
    this.dictionaryBlocks.push(this.message(out, HEADER_DICTIONARY_BATCH, header, body.length));
    for (const c of body.chunks) this.push(out, c);
    return out;
  }

  /**
   * A record batch of `length` rows: `columns[j]` holds field j's buffers (a dictionary column's
   * Int32 indices into the values its dictionary batches carried).
   * @throws RangeError when the columns do not match the fields or `length`.
   */
  recordBatch(length: number, columns: readonly ColumnBuffers[]): Uint8Array[] {
    if (columns.length !== this.fields.length) throw new RangeError(`${columns.length} columns for ${this.fields.length} fields`);
    for (const c of columns) if (c.length !== length) throw new RangeError(`a column of ${c.length} rows in a batch of ${length}`);
    const b = this.builder;
    b.clear();
    const body = this.body(
      columns,
      this.fields.map((f) => f.type === "string" && !f.dictionary),
    );
    const header = recordBatchTable(b, length, body.nodes, body.regions);
    const out: Uint8Array[] = [];
    this.recordBatchBlocks.push(this.message(out, HEADER_RECORD_BATCH, header, body.length));
    for (const c of body.chunks) this.push(out, c);
    return out;
  }

  /** The file's last bytes: the end-of-stream marker, the footer, its length and the magic. */
  close(): Uint8Array[] {
    const b = this.builder;
    b.clear();
    const schema = schemaTable(b, this.fields);
    const blocks = (list: readonly Block[]): number => {
      b.startVector(24, list.length, 8);
      for (let i = list.length - 1; i >= 0; i--) {
        b.prep(8, 24);
        b.writeInt64(BigInt(list[i].bodyLength));
        b.pad(4);
        b.writeInt32(list[i].metaDataLength);
        b.writeInt64(BigInt(list[i].offset));
      }
      return b.endVector();
    };
    const dictionaries = blocks(this.dictionaryBlocks);
    const recordBatches = blocks(this.recordBatchBlocks);
    b.startObject(5);
    b.addFieldInt16(0, METADATA_V5, 0);
    b.addFieldOffset(1, schema, 0);
    b.addFieldOffset(2, dictionaries, 0);
    b.addFieldOffset(3, recordBatches, 0);
    b.finish(b.endObject());
    const footer = b.asUint8Array().slice();
    const out: Uint8Array[] = [];
    this.push(out, new Uint8Array(Int32Array.of(-1, 0).buffer));
    this.push(out, footer);
    this.push(out, new Uint8Array(Int32Array.of(footer.length).buffer));
    this.push(out, MAGIC);
    return out;
  }

  /**
   * The body of a batch: per column its node (length, null count) and buffers (validity, then
   * offsets for Utf8, then values), each at a multiple of 8 bytes; `utf8[j]`: column j has offsets.
   */
  private body(columns: readonly ColumnBuffers[], utf8: readonly boolean[]): { nodes: number[]; regions: number[]; chunks: Uint8Array[]; length: number } {
    const nodes: number[] = [];
    const regions: number[] = [];
    const chunks: Uint8Array[] = [];
    let at = 0;
    const add = (v: ArrayBufferView | undefined): void => {
      const bytes = v === undefined ? undefined : bytesOf(v);
      const size = bytes?.byteLength ?? 0;
      regions.push(at, size);
      if (size === 0) return;
      chunks.push(bytes!);
      const pad = (8 - (size % 8)) % 8;
      if (pad > 0) chunks.push(ZEROS.subarray(0, pad));
      at += size + pad;
    };
    columns.forEach((c, j) => {
      nodes.push(c.length, c.nullCount);
      add(c.nullCount > 0 ? c.validity : undefined);
      if (utf8[j]) add(c.offsets);
      add(c.values);
    });
    return { nodes, regions, chunks, length: at };
  }

  /** Finishes `header` as a `Message`, appends it encapsulated to `out`; returns its block. */
  private message(out: Uint8Array[], headerType: number, header: number, bodyLength: number): Block {
    const b = this.builder;
    b.startObject(5);
    b.addFieldInt16(0, METADATA_V5, 0);
    b.addFieldInt8(1, headerType, 0);
    b.addFieldOffset(2, header, 0);
    b.addFieldInt64(3, BigInt(bodyLength), 0n);
    b.finish(b.endObject());
    const flat = b.asUint8Array();
    const metaDataLength = (8 + flat.length + 7) & ~7;
    const bytes = new Uint8Array(metaDataLength);
    const view = new DataView(bytes.buffer);
    view.setInt32(0, -1, true);
    view.setInt32(4, metaDataLength - 8, true);
    bytes.set(flat, 8);
    const block = { offset: this.position, metaDataLength, bodyLength };
    this.push(out, bytes);
    return block;
  }

  /** Appends `chunk` to `out` and counts its bytes. */
  private push(out: Uint8Array[], chunk: Uint8Array): void {
    out.push(chunk);
    this.position += chunk.byteLength;
  }
}
