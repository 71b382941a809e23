/**
 * Typed columns for the binary output formats: each column's Arrow type, from the model's metadata
 * alone (docs/formats.md "Column types"; each kind's reader lives in `../columns`), and the
 * conversion of decoded text into Arrow data. Strings are Utf8 here (the schema Parquet embeds);
 * the Arrow file writes categorical columns as `Dictionary<Int32, Utf8>`.
 */
import type { Data, DataType, RecordBatch, Schema } from "apache-arrow";
import type { ColumnBuffers } from "./arrow-ipc";
import type { Metadata } from "../../contract";
import type { DatetimeFormat } from "../metadata/datetime";
import { DataError } from "../errors";
import { arrowTypeOf, datetimeParser, float64Of, int64Of, type ColumnType, type NumberFormat } from "../columns";
import type { EncodedSeed, SeedRows } from "../generate/seeded-request";
import { cellText, type DecodedBatch, type DecodedColumn } from "../generate/batch";
import type { ArrayPool } from "../client/array-pool";
import { nativeLoops } from "../native-loops";

export type { ColumnType, ColumnBuffers };
// The rules (`./rules/check`, `./rules/enforce`) read datetime text with this typed reader.
export { datetimeParser };

/** One output column: its name, value type and, for datetimes, the format its text is read in. */
export interface TypedColumn {
  name: string;
  type: ColumnType;
  /** Datetime columns: the column's format (`column_stats[f].format`). */
  datetime?: DatetimeFormat;
  /** Numerical columns with a number format (`column_stats[f].number_format`): its text is read in it. */
  number?: NumberFormat;
  /** Datetime columns: the text of a missing value (`column_stats[f].missing_text`), stored as null. */
  missingText?: string;
}

const MS_PER_DAY = 86_400_000;

/** A model's output columns in `features` order. @throws RangeError for a bad datetime format. */
export function columnTypes(meta: Metadata): TypedColumn[] {
  return meta.features.map((name): TypedColumn => ({ name, ...arrowTypeOf(meta.column_stats?.[name]) }));
}

/** apache-arrow's runtime, loaded on first use by the public Arrow API, not by the file writer. */
function arrowRuntime(): typeof import("./arrow-runtime").arrow {
  return (require("./arrow-runtime") as typeof import("./arrow-runtime")).arrow;
}

function arrowType(t: ColumnType): DataType {
  const arrow = arrowRuntime();
  switch (t) {
    case "string":
      return new arrow.Utf8();
    case "int64":
      return new arrow.Int64();
    case "float64":
      return new arrow.Float64();
    case "timestamp":
      return new arrow.TimestampMillisecond("UTC");
    case "date":
      return new arrow.DateDay();
  }
}

/** The Arrow schema of `columns`: one nullable field per column, in order. */
export function arrowSchema(columns: readonly TypedColumn[]): Schema {
  const arrow = arrowRuntime();
  return new arrow.Schema(columns.map((c) => new arrow.Field(c.name, arrowType(c.type), true)));
}

/** A typed value: string, bigint (int64; timestamp ms), number (float64; date days), null. */
export type TypedValue = string | bigint | number | null;

/** Converts text cells to typed values and text rows to Arrow record batches for one model. */
export class BatchConverter {
  readonly columns: readonly TypedColumn[];
  private arrowSchema: Schema | undefined;
  /** Per datetime column: text -> ms since the epoch, undefined when not in the format. */
  private readonly parsers: (((text: string) => number | undefined) | undefined)[];

  constructor(meta: Metadata) {
    this.columns = columnTypes(meta);
    this.parsers = this.columns.map((c) => c.datetime && datetimeParser(c.datetime));
  }

  /** The Arrow schema of {@link columns} ({@link arrowSchema}), made on first use. */
  get schema(): Schema {
    return (this.arrowSchema ??= arrowSchema(this.columns));
  }

  /**
   * The typed value of one cell of column `col` (index in `columns`): null for "" (string columns)
   * or blank-after-trim text (typed columns); string: the text as is; int64: a bigint; float64: a
   * number; timestamp: a bigint of ms since the Unix epoch; date: days since 1970-01-01.
   * @throws DataError (naming neither column nor row: callers add them) when the text is not a
   *   number, not an integer or outside ±2^63 (int64), not a datetime in the column's format.
   */
  value(col: number, text: string): TypedValue {
    const c = this.columns[col];
    if (c.type === "string") return text === "" ? null : text;
    let t = text.trim();
    if (t === "" || t === c.missingText) return null;
    // Numbers written in the column's format (`$1,234.50`) are stored as the numbers they are.
    if (c.number !== undefined) t = c.number.plain(t) ?? t;
    if (t === "") return null;
    switch (c.type) {
      case "int64":
        return int64Of(t);
      case "float64":
        return float64Of(t, text);
      case "timestamp":
        return BigInt(this.millis(col, t, text));
      case "date":
        return Math.floor(this.millis(col, t, text) / MS_PER_DAY);
    }
  }

  private millis(col: number, t: string, text: string): number {
    const ms = this.parsers[col]!(t);
    if (ms === undefined) throw new DataError(`${JSON.stringify(text)} is not a datetime in the column's format ${this.columns[col].datetime!.format}`);
    return ms;
  }

  /**
   * Checks the cells a seed table keeps (`encodeSeed`'s `keep`) against the column types, so a
   * value a typed column cannot hold (39.5 for an integer) fails before any request, not mid-file.
   * @throws DataError naming the seed table, line, column and value.
   */
  checkSeed(seed: SeedRows, keep: EncodedSeed["keep"]): void {
    keep.forEach((kept, r) => {
      kept.forEach((text, col) => {
        if (text === undefined) return;
        try {
          this.value(col, text);
        } catch (e) {
          if (!(e instanceof DataError)) throw e;
          const column = this.columns[col].name;
          throw new DataError(`${seed.name}, line ${seed.lines[r]}, column "${column}": ${e.message}; change the value or write CSV.`, {
            file: seed.file,
            line: seed.lines[r],
            column,
            cause: e,
          });
        }
      });
    });
  }

  /**
   * One Arrow record batch of `rows` (decoded strings in column order).
   * @throws DataError from {@link value}, prefixed with the column and `describe(r)`.
   */
  toRecordBatch(rows: readonly (readonly string[])[], describe: (r: number) => string = (r) => `row ${r + 1}`): RecordBatch {
    const n = rows.length;
    const children = this.columns.map((c, j) => {
      const values: TypedValue[] = new Array(n);
      for (let r = 0; r < n; r++) {
        try {
          values[r] = this.value(j, rows[r][j]);
        } catch (e) {
          if (e instanceof DataError) throw new DataError(`column "${c.name}", ${describe(r)}: ${e.message}.`, { column: c.name, cause: e });
          throw e;
        }
      }
      return toData(c.type, columnData(c.type, values));
    });
    const arrow = arrowRuntime();
    const data = arrow.makeData({ type: new arrow.Struct(this.schema.fields), length: n, nullCount: 0, children });
    return new arrow.RecordBatch(this.schema, data);
  }

  /**
   * {@link toRecordBatch} of a decoded batch by column: the same record batch, without a string per
   * cell where the column's form allows (code-book entries converted once, integers copied).
   * @throws DataError from {@link value}, prefixed with the column and the first failing row.
   */
  fromBatch(batch: DecodedBatch, describe: (r: number) => string = (r) => `row ${r + 1}`): RecordBatch {
    const n = batch.length;
    const children = this.columns.map((_, j) => this.columnFromBatch(j, batch.cells[j], n, describe, batch.arrays));
    const arrow = arrowRuntime();
    const data = arrow.makeData({ type: new arrow.Struct(this.schema.fields), length: n, nullCount: 0, children });
    return new arrow.RecordBatch(this.schema, data);
  }

  /** Column `j` of {@link fromBatch} (buffers from `pool` when given); throws as `fromBatch`. */
  columnFromBatch(j: number, col: DecodedColumn, n: number, describe: (r: number) => string = (r) => `row ${r + 1}`, pool?: ArrayPool): Data {
    return toData(this.columns[j].type, this.buffersFromBatch(j, col, n, describe, pool));
  }

  /**
   * {@link columnFromBatch} as plain buffers (`./arrow-ipc`), without apache-arrow: what the SDK's
   * Arrow file writer takes.
   * @throws DataError as {@link fromBatch}.
   */
  buffersFromBatch(j: number, col: DecodedColumn, n: number, describe: (r: number) => string = (r) => `row ${r + 1}`, pool?: ArrayPool): ColumnBuffers {
    const c = this.columns[j];
    const fail = (r: number, e: unknown): never => {
      if (e instanceof DataError) throw new DataError(`column "${c.name}", ${describe(r)}: ${e.message}.`, { column: c.name, cause: e });
      throw e;
    };
    if (col.kind === "dict" && c.type === "string") return utf8FromDict(col.dict, col.index, pool);
    if (col.kind === "int" && c.type === "int64") {
      const data = int64FromNumbers(col.values, col.blank, pool);
      if (data) return data;
    }
    if (col.kind === "dict") {
      // Each entry converted once; an entry that fails fails at the first row that holds it.
      const entries: (TypedValue | { error: unknown })[] = col.dict.map((text) => {
        try {
          return this.value(j, text);
        } catch (e) {
          return { error: e };
        }
      });
      if (entries.some((v) => v !== null && typeof v === "object")) {
        for (let r = 0; r < n; r++) {
          const v = entries[col.index[r]];
          if (v !== null && typeof v === "object") fail(r, v.error);
        }
      }
      return typedFromDict(c.type as Exclude<ColumnType, "string">, entries as TypedValue[], col.index, pool);
    }
    const values: TypedValue[] = new Array(n);
    {
      for (let r = 0; r < n; r++) {
        try {
          values[r] = this.value(j, cellText(col, r));
        } catch (e) {
          fail(r, e);
        }
      }
    }
    return columnData(c.type, values);
  }
}

/** A dictionary's Utf8 bytes: entry i is `bytes[start[i] .. start[i + 1])`; `valid[i]` 0 for "". */
interface Utf8Entries {
  bytes: Uint8Array;
  start: Int32Array;
  valid: Uint8Array;
}

/** Utf8 bytes per dictionary array (a decoder's code book serves every batch). */
const utf8Entries = new WeakMap<readonly string[], Utf8Entries>();

/** The UTF-8 bytes of `texts` back to back with Arrow Utf8 offsets (`texts.length + 1`, from 0). */
export function utf8Encode(texts: readonly string[]): { offsets: Int32Array; bytes: Uint8Array } {
  const offsets = new Int32Array(texts.length + 1);
  for (let i = 0; i < texts.length; i++) offsets[i + 1] = offsets[i] + Buffer.byteLength(texts[i], "utf8");
  const bytes = Buffer.allocUnsafe(offsets[texts.length]);
  for (let i = 0; i < texts.length; i++) bytes.write(texts[i], offsets[i], "utf8");
  return { offsets, bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) };
}

function utf8Of(dict: readonly string[]): Utf8Entries {
  let e = utf8Entries.get(dict);
  if (e === undefined) {
    const { offsets, bytes } = utf8Encode(dict);
    e = { bytes, start: offsets, valid: Uint8Array.from(dict, (v) => (v === "" ? 0 : 1)) };
    utf8Entries.set(dict, e);
  }
  return e;
}

// The per-row loops below are small functions of typed arrays only, so V8 optimizes each once for
// every column and batch; inline, they were recompiled and discarded per builder call.

/** Sets bit r of `bitmap` where `valid[index[r]]` is 1; returns the rows where it is 0. */
function dictValidity(index: Int32Array, valid: Uint8Array, bitmap: Uint8Array): number {
  let nulls = 0;
  for (let r = 0; r < index.length; r++) {
    if (valid[index[r]] === 1) bitmap[r >> 3] |= 1 << (r & 7);
    else nulls++;
  }
  return nulls;
}

/** Sets bit r of `bitmap` where `blank[r]` is 0 (all when `blank` is undefined); returns blanks. */
function blankValidity(n: number, blank: Uint8Array | undefined, bitmap: Uint8Array): number {
  if (blank === undefined) {
    bitmap.fill(0xff);
    return 0;
  }
  let nulls = 0;
  for (let r = 0; r < n; r++) {
    if (blank[r] === 0) bitmap[r >> 3] |= 1 << (r & 7);
    else nulls++;
  }
  return nulls;
}

/** Fills `offsets` (n + 1) with running byte lengths of entries `index[r]`; returns the total. */
function utf8Offsets(index: Int32Array, start: Int32Array, offsets: Int32Array): number {
  let total = 0;
  offsets[0] = 0;
  for (let r = 0; r < index.length; r++) {
    const i = index[r];
    total += start[i + 1] - start[i];
    offsets[r + 1] = total;
  }
  return total;
}

/** Copies the bytes of entry `index[r]` for every row r, back to back, into `data`. */
function utf8Gather(index: Int32Array, start: Int32Array, bytes: Uint8Array, data: Uint8Array): void {
  for (let r = 0, p = 0; r < index.length; r++) {
    const i = index[r];
    for (let b = start[i], e = start[i + 1]; b < e; b++) data[p++] = bytes[b];
  }
}

/**
 * Writes each value's two 32-bit halves into `halves` (little-endian 64-bit slots), 0 for a blank;
 * false at the first value that is not a safe integer. Twin of the addon's `int64Halves`
 * (`../native-loops`); exported for the test that holds them equal.
 */
export function int64Halves(values: Float64Array, blank: Uint8Array | undefined, halves: Int32Array): boolean {
  for (let r = 0; r < values.length; r++) {
    if (blank !== undefined && blank[r] === 1) {
      halves[2 * r] = 0;
      halves[2 * r + 1] = 0;
      continue;
    }
    const x = values[r];
    if (!Number.isSafeInteger(x)) return false;
    const hi = Math.floor(x / 4294967296);
    halves[2 * r] = x - hi * 4294967296;
    halves[2 * r + 1] = hi;
  }
  return true;
}

function zeros(n: number, pool: ArrayPool | undefined): Uint8Array {
  return pool?.uint8(n) ?? new Uint8Array(n);
}

/** `nulls` > 0: the bitmap and the count; else no bitmap (it goes back to `pool`). */
function nullsOf(nulls: number, bitmap: Uint8Array, pool: ArrayPool | undefined): { nullCount: number; validity?: Uint8Array } {
  if (nulls > 0) return { nullCount: nulls, validity: bitmap };
  pool?.give([bitmap]);
  return { nullCount: 0 };
}

/** A code-book column as Arrow Utf8: entry bytes copied per row, "" as null; no string per row. */
function utf8FromDict(dict: readonly string[], index: Int32Array, pool: ArrayPool | undefined): ColumnBuffers {
  const n = index.length;
  const { bytes, start, valid } = utf8Of(dict);
  const offsets = pool?.int32(n + 1) ?? new Int32Array(n + 1);
  const size = utf8Offsets(index, start, offsets);
  const data = pool?.uint8(size) ?? new Uint8Array(size);
  utf8Gather(index, start, bytes, data);
  const bitmap = zeros(Math.ceil(n / 8), pool);
  return { length: n, ...nullsOf(dictValidity(index, valid, bitmap), bitmap, pool), offsets, values: data };
}

/** Per row r, the 2 words of `slot` get the 2 words of entry `index[r]` in `words`. */
function gatherWords(index: Int32Array, words: Int32Array, slot: Int32Array): void {
  for (let r = 0; r < index.length; r++) {
    const e = index[r];
    slot[2 * r] = words[2 * e];
    slot[2 * r + 1] = words[2 * e + 1];
  }
}

function gatherValues(index: Int32Array, values: Float64Array | Int32Array, out: Float64Array | Int32Array): void {
  for (let r = 0; r < index.length; r++) out[r] = values[index[r]];
}

/** A typed code-book column from its entries' values (failed entries' rows already refused). */
function typedFromDict(type: Exclude<ColumnType, "string">, entries: readonly TypedValue[], index: Int32Array, pool: ArrayPool | undefined): ColumnBuffers {
  const n = index.length;
  const valid = Uint8Array.from(entries, (v) => (v === null || typeof v === "object" ? 0 : 1));
  const bitmap = zeros(Math.ceil(n / 8), pool);
  const nulls = nullsOf(dictValidity(index, valid, bitmap), bitmap, pool);
  switch (type) {
    case "int64":
    case "timestamp": {
      const words = new Int32Array(2 * entries.length);
      entries.forEach((v, e) => {
        if (typeof v !== "bigint") return;
        words[2 * e] = Number(BigInt.asIntN(32, v));
        words[2 * e + 1] = Number(BigInt.asIntN(32, v >> 32n));
      });
      const data = pool?.bigint64(n) ?? new BigInt64Array(n);
      gatherWords(index, words, new Int32Array(data.buffer, data.byteOffset, 2 * n));
      return { length: n, ...nulls, values: data };
    }
    case "float64": {
      const data = pool?.float64(n) ?? new Float64Array(n);
      gatherValues(index, Float64Array.from(entries, (v) => (typeof v === "number" ? v : 0)), data);
      return { length: n, ...nulls, values: data };
    }
    case "date": {
      const data = pool?.int32(n) ?? new Int32Array(n);
      gatherValues(index, Int32Array.from(entries, (v) => (typeof v === "number" ? v : 0)), data);
      return { length: n, ...nulls, values: data };
    }
  }
}

/** An integer column as Arrow Int64 via 32-bit halves; undefined if one is not a safe integer. */
function int64FromNumbers(values: Float64Array, blank: Uint8Array | undefined, pool: ArrayPool | undefined): ColumnBuffers | undefined {
  const n = values.length;
  const data = pool?.bigint64(n) ?? new BigInt64Array(n);
  const halves = new Int32Array(data.buffer, data.byteOffset, 2 * n);
  if (!(nativeLoops().int64Halves ?? int64Halves)(values, blank, halves)) {
    pool?.give([data]);
    return undefined;
  }
  const bitmap = zeros(Math.ceil(n / 8), pool);
  return { length: n, ...nullsOf(blankValidity(n, blank, bitmap), bitmap, pool), values: data };
}

/** One column's buffers from typed values; nulls are validity bits (set = valid), slots 0 / "". */
function columnData(type: ColumnType, values: readonly TypedValue[]): ColumnBuffers {
  const n = values.length;
  const valid = new Uint8Array(Math.ceil(n / 8));
  let nullCount = 0;
  for (let r = 0; r < n; r++) {
    if (values[r] === null) nullCount++;
    else valid[r >> 3] |= 1 << (r & 7);
  }
  const common = { length: n, nullCount, validity: nullCount > 0 ? valid : undefined };
  switch (type) {
    case "string": {
      const { offsets, bytes } = utf8Encode(values.map((v) => (v === null ? "" : (v as string))));
      return { ...common, offsets, values: bytes };
    }
    case "int64":
    case "timestamp": {
      const data = new BigInt64Array(n);
      for (let r = 0; r < n; r++) if (values[r] !== null) data[r] = values[r] as bigint;
      return { ...common, values: data };
    }
    case "float64": {
      const data = new Float64Array(n);
      for (let r = 0; r < n; r++) if (values[r] !== null) data[r] = values[r] as number;
      return { ...common, values: data };
    }
    case "date": {
      const data = new Int32Array(n);
      for (let r = 0; r < n; r++) if (values[r] !== null) data[r] = values[r] as number;
      return { ...common, values: data };
    }
  }
}

/** apache-arrow `Data` of `type` over a column's buffers (the same memory). */
function toData(type: ColumnType, c: ColumnBuffers): Data {
  const arrow = arrowRuntime();
  const common = { length: c.length, nullCount: c.nullCount, ...(c.nullCount > 0 ? { nullBitmap: c.validity } : {}) };
  switch (type) {
    case "string":
      return arrow.makeData({ type: new arrow.Utf8(), ...common, valueOffsets: c.offsets!, data: c.values as Uint8Array });
    case "int64":
      return arrow.makeData({ type: new arrow.Int64(), ...common, data: c.values as BigInt64Array });
    case "timestamp":
      return arrow.makeData({ type: new arrow.TimestampMillisecond("UTC"), ...common, data: c.values as BigInt64Array });
    case "float64":
      return arrow.makeData({ type: new arrow.Float64(), ...common, data: c.values as Float64Array });
    case "date":
      return arrow.makeData({ type: new arrow.DateDay(), ...common, data: c.values as Int32Array });
  }
}
