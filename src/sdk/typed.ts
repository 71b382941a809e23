/**
 * Typed columns for the binary output formats (issue 13, `./formats`): the Arrow type of each
 * column, read from the model's metadata alone, and the conversion of decoded text rows (what
 * {@link Decoder} and the CSV writer produce) into Arrow record batches.
 *
 * Type per column, from `metadata.column_stats[f]` (docs/formats.md has the same table):
 * | kind                                   | Arrow type                   | Parquet (physical / logical)  |
 * |----------------------------------------|------------------------------|-------------------------------|
 * | categorical, id                        | Utf8                         | BYTE_ARRAY / STRING           |
 * | numerical, `decimals` 0 (integers)     | Int64                        | INT64                         |
 * | numerical, other                       | Float64                      | DOUBLE                        |
 * | datetime, date-only format, no offset  | Date32 (days since epoch)    | INT32 / DATE                  |
 * | datetime, other                        | Timestamp(ms, "UTC")         | INT64 / TIMESTAMP(MILLIS, UTC)|
 * | no `column_stats` entry                | Utf8                         | BYTE_ARRAY / STRING           |
 * - Integers are Int64, not Int32: the metadata gives `min`/`max` only for the training rows, and a
 *   seed table may keep larger values; Int64 holds every integer the CSV can hold up to ±2^63.
 *   "Integers" follows the decoder's rule: `decimals` 0, or (older metadata without `decimals`)
 *   `integer: true`.
 * - Datetimes hold the instant the CSV text denotes: the text is read in the column's own format
 *   with the answers of `./datetime`'s strict parser, the one extraction uses ({@link
 *   datetimeParser} reads the numeric formats faster), so a written UTC offset is applied, and a
 *   format without an offset is UTC wall-clock time. The offset itself is not kept
 *   (Arrow and Parquet timestamps are instants; the time zone is "UTC"). A format that writes only
 *   a date (finest unit a day, e.g. `yyyy-MM-dd`, `dd.MM.yyyy`) and no offset gives Date32: the
 *   day the text names, which is the same instant, UTC midnight.
 * - Blank cells (the missing code decodes to "") are null in every column; every field is
 *   nullable. Non-blank text keeps its bytes in string columns (seed cells as read, untrimmed);
 *   in typed columns it is trimmed, then parsed.
 * - Strings are plain Utf8, not dictionary-encoded: a seed table may keep values that are not in
 *   the code book, and the Arrow IPC file format cannot replace a dictionary between batches.
 *   Parquet writers dictionary-encode the pages anyway.
 * Each kind's type and text reader live with the kind (`./columns`: `arrowTypeOf`, the numerical
 * `int64Of` / `float64Of`, the datetime `datetimeParser`); this module builds schemas and batches.
 */
import { DateDay, Field, Float64, Int64, RecordBatch, Schema, Struct, TimestampMillisecond, Utf8, makeData, type Data, type DataType } from "apache-arrow";
import type { Metadata } from "../types";
import type { DatetimeFormat } from "./datetime";
import { DataError } from "./errors";
import { arrowTypeOf, datetimeParser, float64Of, int64Of, type ColumnType } from "./columns";
import type { EncodedSeed, SeedRows } from "./seeded";

export type { ColumnType };
// The rules (`./rules/check`, `./rules/enforce`) read datetime text with the typed reader from here.
export { datetimeParser };

/** One output column: its name, value type and, for datetimes, the format its text is read in. */
export interface TypedColumn {
  name: string;
  type: ColumnType;
  /** Datetime columns: the column's format (`column_stats[f].format`). */
  datetime?: DatetimeFormat;
}

const MS_PER_DAY = 86_400_000;

/**
 * The output columns of a model, in `metadata.features` order, typed by the rules in the module
 * comment.
 * @throws RangeError when a datetime column's `format` cannot be compiled (`new DatetimeFormat`).
 */
export function columnTypes(meta: Metadata): TypedColumn[] {
  return meta.features.map((name): TypedColumn => ({ name, ...arrowTypeOf(meta.column_stats?.[name]) }));
}

function arrowType(t: ColumnType): DataType {
  switch (t) {
    case "string":
      return new Utf8();
    case "int64":
      return new Int64();
    case "float64":
      return new Float64();
    case "timestamp":
      return new TimestampMillisecond("UTC");
    case "date":
      return new DateDay();
  }
}

/** The Arrow schema of `columns`: one nullable field per column, in order. */
export function arrowSchema(columns: readonly TypedColumn[]): Schema {
  return new Schema(columns.map((c) => new Field(c.name, arrowType(c.type), true)));
}

/** A typed value: string, bigint (int64; timestamps in ms), number (float64; dates in days), or null for a blank. */
export type TypedValue = string | bigint | number | null;

/**
 * Converts text cells to typed values and text rows to Arrow record batches for one model's
 * columns (rules in the module comment).
 */
export class BatchConverter {
  readonly columns: readonly TypedColumn[];
  readonly schema: Schema;
  /** Per datetime column: text -> milliseconds since the epoch, undefined when not in the format. */
  private readonly parsers: (((text: string) => number | undefined) | undefined)[];

  constructor(meta: Metadata) {
    this.columns = columnTypes(meta);
    this.schema = arrowSchema(this.columns);
    this.parsers = this.columns.map((c) => c.datetime && datetimeParser(c.datetime));
  }

  /**
   * The typed value of one cell of column `col` (index in `columns`): null for "" (string
   * columns) or text that is blank after trimming (typed columns); a string column's text as is;
   * int64: a bigint (an integer literal exactly, other numbers when whole); float64: a number;
   * timestamp: a bigint of milliseconds since 1970-01-01T00:00:00Z; date: the number of days
   * since 1970-01-01.
   * @throws DataError (its message names neither column nor row: callers add them) when the text is not a
   *   number (numerical), not an integer or outside ±2^63 (int64), not a datetime in the
   *   column's format (datetime).
   */
  value(col: number, text: string): TypedValue {
    const c = this.columns[col];
    if (c.type === "string") return text === "" ? null : text;
    const t = text.trim();
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

  /** Milliseconds since the epoch of datetime text `t` (trimmed `text`). */
  private millis(col: number, t: string, text: string): number {
    const ms = this.parsers[col]!(t);
    if (ms === undefined) throw new DataError(`${JSON.stringify(text)} is not a datetime in the column's format ${this.columns[col].datetime!.format}`);
    return ms;
  }

  /**
   * Checks the cells a seed table keeps (`encodeSeed`'s `keep`, model column order) against the
   * column types, so that a seed value a typed column cannot hold (39.5 in an integer column, an
   * integer beyond ±2^63) fails before any request rather than in the middle of a file.
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
   * One Arrow record batch of `rows` (each `columns.length` decoded strings, in column order).
   * @param describe names row r of `rows` in error messages (default "row r+1").
   * @throws DataError from {@link value}, its message prefixed with the column and `describe(r)`.
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
      return columnData(c.type, values);
    });
    const data = makeData({ type: new Struct(this.schema.fields), length: n, nullCount: 0, children });
    return new RecordBatch(this.schema, data);
  }
}

/**
 * The Arrow data of one column of typed values (all of `type`'s kind or null). Nulls go to the
 * validity bitmap (bit set = valid), their slots hold 0 / an empty string.
 */
function columnData(type: ColumnType, values: readonly TypedValue[]): Data {
  const n = values.length;
  const valid = new Uint8Array(Math.ceil(n / 8));
  let nullCount = 0;
  for (let r = 0; r < n; r++) {
    if (values[r] === null) nullCount++;
    else valid[r >> 3] |= 1 << (r & 7);
  }
  const common = { length: n, nullCount, nullBitmap: nullCount > 0 ? valid : undefined };
  switch (type) {
    case "string": {
      const offsets = new Int32Array(n + 1);
      let bytes = 0;
      for (let r = 0; r < n; r++) {
        const v = values[r];
        if (v !== null) bytes += Buffer.byteLength(v as string, "utf8");
        offsets[r + 1] = bytes;
      }
      const data = Buffer.allocUnsafe(bytes);
      for (let r = 0; r < n; r++) if (values[r] !== null) data.write(values[r] as string, offsets[r], "utf8");
      return makeData({ type: new Utf8(), ...common, valueOffsets: offsets, data: new Uint8Array(data.buffer, data.byteOffset, bytes) });
    }
    case "int64":
    case "timestamp": {
      const data = new BigInt64Array(n);
      for (let r = 0; r < n; r++) if (values[r] !== null) data[r] = values[r] as bigint;
      return type === "int64" ? makeData({ type: new Int64(), ...common, data }) : makeData({ type: new TimestampMillisecond("UTC"), ...common, data });
    }
    case "float64": {
      const data = new Float64Array(n);
      for (let r = 0; r < n; r++) if (values[r] !== null) data[r] = values[r] as number;
      return makeData({ type: new Float64(), ...common, data });
    }
    case "date": {
      const data = new Int32Array(n);
      for (let r = 0; r < n; r++) if (values[r] !== null) data[r] = values[r] as number;
      return makeData({ type: new DateDay(), ...common, data });
    }
  }
}
