/**
 * A reader of the one Arrow IPC stream shape a Generate response has (src/server/arrow.ts,
 * docs/api.md "Arrow responses"): non-dictionary Int32 columns (Uint8 and Uint16 for narrow codes,
 * widened here) with custom metadata, record batches without compression or nulls, little-endian,
 * then end-of-stream. It reads the messages' flatbuffers (Message.fbs, Schema.fbs) directly, so a
 * response does not load apache-arrow (about 150 modules). Any other stream gives `undefined` and
 * is left to apache-arrow's `tableFromIPC` (`./models`), so every error is apache-arrow's. Int32
 * columns are views of the response's bytes, as apache-arrow's are.
 * Format: https://arrow.apache.org/docs/format/Columnar.html#serialization-and-interprocess-communication-ipc
 */
import type { ArrayPool } from "./array-pool";
import { HEADER_RECORD_BATCH, HEADER_SCHEMA, TYPE_INT } from "../arrow-format";

/** The columns and schema metadata of an Int32 stream ({@link readInt32Stream}). */
export interface Int32Stream {
  /** The schema's custom metadata (a repeated key keeps its last value, as apache-arrow's Map). */
  metadata: Map<string, string>;
  /** Field names in schema order. */
  fields: string[];
  /** One column per field (a view of the bytes for a one-batch Int32 column, else a copy). */
  columns: Int32Array[];
  /** Rows over all batches. */
  numRows: number;
}

/**
 * One message's metadata flatbuffer, read as apache-arrow's flatbuffers library reads it, except
 * that a read outside the metadata throws RangeError (the stream is then left to apache-arrow).
 */
class Flat {
  private readonly view: DataView;
  private static readonly utf8 = new TextDecoder();

  constructor(private readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /** The root table. */
  root(): number {
    return this.i32At(0);
  }

  /** The position of field `i` of `table`, or 0 when the field is absent. */
  field(table: number, i: number): number {
    const vtable = table - this.view.getInt32(table, true);
    const at = 4 + 2 * i;
    const off = at < this.view.getInt16(vtable, true) ? this.view.getInt16(vtable + at, true) : 0;
    return off === 0 ? 0 : table + off;
  }

  /** The table, vector or string an offset field points to, or 0 when absent. */
  ref(table: number, i: number): number {
    const at = this.field(table, i);
    return at === 0 ? 0 : this.i32At(at);
  }

  u8(table: number, i: number, dflt: number): number {
    const at = this.field(table, i);
    return at === 0 ? dflt : this.view.getUint8(at);
  }

  i16(table: number, i: number, dflt: number): number {
    const at = this.field(table, i);
    return at === 0 ? dflt : this.view.getInt16(at, true);
  }

  i32(table: number, i: number, dflt: number): number {
    const at = this.field(table, i);
    return at === 0 ? dflt : this.view.getInt32(at, true);
  }

  /** The int64 at `at` when it is a safe non-negative integer, else -1. */
  i64At(at: number): number {
    const x = this.view.getBigInt64(at, true);
    return x >= 0n && x <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(x) : -1;
  }

  /** An int64 field (default 0) when it is a safe non-negative integer, else -1. */
  i64(table: number, i: number): number {
    const at = this.field(table, i);
    return at === 0 ? 0 : this.i64At(at);
  }

  /** Length of the vector at `vec` (0 for an absent one); a negative length throws. */
  length(vec: number): number {
    if (vec === 0) return 0;
    const n = this.view.getInt32(vec, true);
    if (n < 0) throw new RangeError("negative vector length");
    return n;
  }

  /** Element `k` of a vector of tables. */
  tableAt(vec: number, k: number): number {
    return this.i32At(vec + 4 + 4 * k);
  }

  /** The string at `str` (UTF-8 decoded as flatbuffers decodes it), or undefined when absent. */
  string(str: number): string | undefined {
    if (str === 0) return undefined;
    const n = this.view.getInt32(str, true);
    if (n < 0 || str + 4 + n > this.bytes.byteLength) throw new RangeError("string out of bounds");
    return Flat.utf8.decode(this.bytes.subarray(str + 4, str + 4 + n));
  }

  /** `at` plus the signed offset stored there (flatbuffers' `__indirect`). */
  private i32At(at: number): number {
    return at + this.view.getInt32(at, true);
  }
}

/**
 * The columns of a Generate-shaped Arrow stream (file header), or undefined for any other bytes;
 * narrow columns are widened into Int32Arrays of `buffers` when given.
 */
export function readInt32Stream(bytes: Uint8Array, buffers?: ArrayPool): Int32Stream | undefined {
  try {
    return read(bytes, buffers);
  } catch {
    return undefined; // a bound crossed: not this shape (apache-arrow says what it is)
  }
}

function read(bytes: Uint8Array, buffers: ArrayPool | undefined): Int32Stream | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let pos = 0;
  let schema: { metadata: Map<string, string>; fields: string[]; widths: number[] } | undefined;
  const batches: { length: number; columns: Int32Array[] }[] = [];
  for (;;) {
    if (pos === bytes.byteLength) break; // a stream may end without the end-of-stream marker
    if (pos + 8 > bytes.byteLength || view.getInt32(pos, true) !== -1) return undefined; // the continuation marker
    const size = view.getInt32(pos + 4, true);
    if (size === 0) {
      if (pos + 8 !== bytes.byteLength) return undefined;
      break;
    }
    const start = pos + 8;
    const bodyStart = start + size;
    if (size < 0 || size % 8 !== 0 || bodyStart > bytes.byteLength) return undefined;
    const fb = new Flat(bytes.subarray(start, bodyStart));
    const message = fb.root();
    const version = fb.i16(message, 0, 0);
    if (version !== 3 && version !== 4) return undefined; // MetadataVersion V4 (3) or V5 (4)
    const bodyLength = fb.i64(message, 3);
    if (bodyLength < 0 || bodyStart + bodyLength > bytes.byteLength) return undefined;
    const headerType = fb.u8(message, 1, 0);
    const header = fb.ref(message, 2);
    if (header === 0) return undefined;
    if (schema === undefined) {
      if (headerType !== HEADER_SCHEMA) return undefined;
      schema = readSchema(fb, header);
      if (schema === undefined) return undefined;
    } else {
      if (headerType !== HEADER_RECORD_BATCH) return undefined;
      const batch = readBatch(fb, header, bytes.subarray(bodyStart, bodyStart + bodyLength), schema.widths, buffers);
      if (batch === undefined) return undefined;
      batches.push(batch);
    }
    pos = bodyStart + bodyLength;
  }
  if (schema === undefined) return undefined;
  const numRows = batches.reduce((s, b) => s + b.length, 0);
  const columns = schema.fields.map((_, j) => {
    if (batches.length === 1) return batches[0].columns[j];
    const all = new Int32Array(numRows);
    let at = 0;
    for (const b of batches) {
      all.set(b.columns[j], at);
      at += b.length;
    }
    return all;
  });
  return { metadata: schema.metadata, fields: schema.fields, columns, numRows };
}

/**
 * Schema.fbs `Schema`: little-endian, every field a signed 32-, unsigned 16- or unsigned 8-bit Int
 * without dictionary or children; `widths` the fields' bit widths.
 */
function readSchema(fb: Flat, schema: number): { metadata: Map<string, string>; fields: string[]; widths: number[] } | undefined {
  if (fb.i16(schema, 0, 0) !== 0) return undefined; // Endianness.Little
  const fieldsVec = fb.ref(schema, 1);
  const fields: string[] = [];
  const widths: number[] = [];
  for (let k = 0; k < fb.length(fieldsVec); k++) {
    const field = fb.tableAt(fieldsVec, k);
    const name = fb.string(fb.ref(field, 0));
    if (name === undefined || fb.u8(field, 2, 0) !== TYPE_INT) return undefined;
    const type = fb.ref(field, 3);
    if (type === 0) return undefined;
    const width = fb.i32(type, 0, 0);
    const signed = fb.u8(type, 1, 0);
    if (!((width === 32 && signed === 1) || ((width === 16 || width === 8) && signed === 0))) return undefined;
    if (fb.field(field, 4) !== 0 || fb.length(fb.ref(field, 5)) !== 0) return undefined; // dictionary, children
    fields.push(name);
    widths.push(width);
  }
  if (new Set(fields).size !== fields.length) return undefined; // a repeated name: apache-arrow's getChild picks one
  const metaVec = fb.ref(schema, 2);
  const metadata = new Map<string, string>();
  for (let k = 0; k < fb.length(metaVec); k++) {
    const kv = fb.tableAt(metaVec, k);
    const key = fb.string(fb.ref(kv, 0));
    const value = fb.string(fb.ref(kv, 1));
    if (key === undefined || value === undefined) return undefined;
    metadata.set(key, value);
  }
  return { metadata, fields, widths };
}

/**
 * Schema.fbs / Message.fbs `RecordBatch` of integer columns of `widths`: no compression, one field
 * node without nulls and two buffers per column, inside `body`; narrow columns widened (`pool`).
 */
function readBatch(fb: Flat, batch: number, body: Uint8Array, widths: readonly number[], pool: ArrayPool | undefined): { length: number; columns: Int32Array[] } | undefined {
  const n = widths.length;
  const length = fb.i64(batch, 0);
  const nodes = fb.ref(batch, 1);
  const buffers = fb.ref(batch, 2);
  if (length < 0 || fb.field(batch, 3) !== 0) return undefined; // compression
  if (fb.length(nodes) !== n || fb.length(buffers) !== 2 * n) return undefined;
  const inBody = (buf: number): boolean => {
    const offset = fb.i64At(buf);
    const bytes = fb.i64At(buf + 8);
    return offset >= 0 && bytes >= 0 && offset + bytes <= body.byteLength;
  };
  const columns: Int32Array[] = [];
  for (let j = 0; j < n; j++) {
    const node = nodes + 4 + 16 * j;
    if (fb.i64At(node) !== length || fb.i64At(node + 8) !== 0) return undefined; // length, null_count
    const validity = buffers + 4 + 16 * (2 * j);
    const values = validity + 16;
    const size = widths[j] / 8;
    if (!inBody(validity) || !inBody(values) || fb.i64At(values + 8) < size * length) return undefined;
    const at = body.byteOffset + fb.i64At(values);
    if (at % size !== 0) return undefined; // apache-arrow's reader decides what unaligned values are
    if (size === 4) {
      columns.push(new Int32Array(body.buffer, at, length));
      continue;
    }
    const wide = pool ? pool.int32(length) : new Int32Array(length);
    wide.set(size === 2 ? new Uint16Array(body.buffer, at, length) : new Uint8Array(body.buffer, at, length));
    columns.push(wide);
  }
  return { length, columns };
}
