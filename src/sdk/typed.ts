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
 */
import { DateDay, Field, Float64, Int64, RecordBatch, Schema, Struct, TimestampMillisecond, Utf8, makeData, type Data, type DataType } from "apache-arrow";
import type { Metadata } from "../types";
import { DatetimeFormat } from "./datetime";
import { DataError } from "./errors";
import { isNumeric } from "./columns/common";
import type { EncodedSeed, SeedRows } from "./seeded";

/** The value type of one output column. */
export type ColumnType = "string" | "int64" | "float64" | "timestamp" | "date";

/** One output column: its name, value type and, for datetimes, the format its text is read in. */
export interface TypedColumn {
  name: string;
  type: ColumnType;
  /** Datetime columns: the column's format (`column_stats[f].format`). */
  datetime?: DatetimeFormat;
}

const MS_PER_DAY = 86_400_000;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
/** Distinct texts remembered per datetime column read with luxon before the memo is cleared (bounds memory). */
const DATETIME_MEMO = 100_000;

/**
 * The output columns of a model, in `metadata.features` order, typed by the rules in the module
 * comment.
 * @throws RangeError when a datetime column's `format` cannot be compiled (`new DatetimeFormat`).
 */
export function columnTypes(meta: Metadata): TypedColumn[] {
  return meta.features.map((name): TypedColumn => {
    const s = meta.column_stats?.[name];
    if (s?.type === "numerical") {
      const decimals = s.decimals ?? (s.integer ? 0 : undefined);
      return { name, type: decimals === 0 ? "int64" : "float64" };
    }
    if (s?.type === "datetime" && s.format) {
      const datetime = new DatetimeFormat(s.format);
      return { name, type: datetime.finest === "day" && !datetime.hasOffset ? "date" : "timestamp", datetime };
    }
    return { name, type: "string" };
  });
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
        return toInt64(t);
      case "float64":
        if (!isNumeric(t)) throw new DataError(`${JSON.stringify(text)} is not a number`);
        return Number(t);
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

function toInt64(t: string): bigint {
  let v: bigint;
  if (/^[+-]?\d+$/.test(t)) v = BigInt(t);
  else if (isNumeric(t) && Number.isInteger(Number(t))) v = BigInt(Number(t));
  else throw new DataError(`${JSON.stringify(t)} is not ${isNumeric(t) ? "an integer" : "a number"}, but the model's column holds integers (written as Int64)`);
  if (v < INT64_MIN || v > INT64_MAX) throw new DataError(`${t} does not fit in a 64-bit integer`);
  return v;
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

/**
 * Text -> milliseconds since the epoch in format `fmt`, or undefined when the text is not a
 * datetime in it; the same answers as `fmt.parse` (strict, round trip) at a fraction of the cost.
 *
 * `fmt.parse` (luxon) costs about 4-6 µs a value, which made timestamps the slowest part of
 * writing Arrow (about 5 of 6 s for 1M rows with one `yyyy/MM/dd HH:mm` column; 0.9 s with this reader). Formats made only of the padded
 * or unpadded numeric tokens (yyyy, MM/M, LL/L, dd/d, HH/H, mm/m, ss/s, SSS, ZZ, ZZZ) and
 * literals are read here with one regular expression and `Date.UTC`: padded tokens take exactly
 * their digits, unpadded ones no leading zero (as luxon writes them), and the fields must come
 * back unchanged from the Date (no February 30, no hour 24), which is the round trip of
 * `fmt.parse` for these tokens. Anything that does not pass (years before 0100, offset -00:00 or
 * beyond ±18:00) goes to `fmt.parse`. Other formats use `fmt.parse` with a memo of up to
 * DATETIME_MEMO texts (dates repeat).
 */
export function datetimeParser(fmt: DatetimeFormat): (text: string) => number | undefined {
  const strict = (t: string): number | undefined => {
    const p = fmt.parse(t);
    return p === undefined ? undefined : Math.round(p.seconds * 1000);
  };
  const fast = numericDatetimeParser(fmt.format);
  if (fast) return (t) => fast(t) ?? strict(t);
  const memo = new Map<string, number | undefined>();
  return (t) => {
    if (memo.has(t)) return memo.get(t);
    const ms = strict(t);
    if (memo.size >= DATETIME_MEMO) memo.clear();
    memo.set(t, ms);
    return ms;
  };
}

/** Regular expression of each numeric token, and the field it sets. */
const NUMERIC_TOKENS: Readonly<Record<string, { re: string; field: number }>> = {
  yyyy: { re: "(\\d{4})", field: 0 },
  MM: { re: "(\\d{2})", field: 1 },
  M: { re: "([1-9]\\d?)", field: 1 },
  LL: { re: "(\\d{2})", field: 1 },
  L: { re: "([1-9]\\d?)", field: 1 },
  dd: { re: "(\\d{2})", field: 2 },
  d: { re: "([1-9]\\d?)", field: 2 },
  HH: { re: "(\\d{2})", field: 3 },
  H: { re: "(0|[1-9]\\d?)", field: 3 },
  mm: { re: "(\\d{2})", field: 4 },
  m: { re: "(0|[1-9]\\d?)", field: 4 },
  ss: { re: "(\\d{2})", field: 5 },
  s: { re: "(0|[1-9]\\d?)", field: 5 },
  SSS: { re: "(\\d{3})", field: 6 },
  ZZ: { re: "([+-])(\\d{2}):(\\d{2})", field: 7 },
  ZZZ: { re: "([+-])(\\d{2})(\\d{2})", field: 7 },
};

/**
 * The fast reader of {@link datetimeParser} for a luxon format of numeric tokens and literals
 * (quoted text, punctuation, spaces), or undefined for any other format (names, 12-hour clock,
 * week dates...). Splits the format as luxon does: a run of one letter is a token, text in
 * single quotes is literal (`''` is a quote).
 */
function numericDatetimeParser(format: string): ((text: string) => number | undefined) | undefined {
  let re = "^";
  const fields: number[] = []; // per capture group: the field it sets (7 = offset: sign, hours, minutes)
  for (let i = 0; i < format.length; ) {
    const ch = format[i];
    if (ch === "'") {
      const end = format.indexOf("'", i + 1);
      if (end < 0) return undefined;
      const literal = end === i + 1 ? "'" : format.slice(i + 1, end);
      re += literal.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
      i = end + 1;
    } else if (/[A-Za-z]/.test(ch)) {
      let j = i;
      while (format[j] === ch) j++;
      const token = NUMERIC_TOKENS[format.slice(i, j)];
      if (token === undefined) return undefined;
      re += token.re;
      fields.push(...(token.field === 7 ? [7, 7, 7] : [token.field]));
      i = j;
    } else {
      re += ch.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
      i++;
    }
  }
  if (!fields.includes(0)) return undefined;
  const pattern = new RegExp(re + "$");
  return (text) => {
    const m = pattern.exec(text);
    if (m === null) return undefined;
    const f = [0, 1, 1, 0, 0, 0, 0];
    let offset = 0;
    for (let g = 0; g < fields.length; g++) {
      if (fields[g] !== 7) f[fields[g]] = Number(m[g + 1]);
      else {
        const sign = m[g + 1];
        offset = (sign === "-" ? -1 : 1) * (Number(m[g + 2]) * 60 + Number(m[g + 3]));
        if ((offset === 0 && sign === "-") || Math.abs(offset) > 18 * 60 || Number(m[g + 3]) > 59) return undefined;
        g += 2;
      }
    }
    const local = Date.UTC(f[0], f[1] - 1, f[2], f[3], f[4], f[5], f[6]);
    const d = new Date(local);
    // Also refuses years 0001..0099, which Date.UTC reads as 1900..1999 (fmt.parse then reads them).
    const same =
      d.getUTCFullYear() === f[0] &&
      d.getUTCMonth() === f[1] - 1 &&
      d.getUTCDate() === f[2] &&
      d.getUTCHours() === f[3] &&
      d.getUTCMinutes() === f[4] &&
      d.getUTCSeconds() === f[5];
    return same ? local - offset * 60_000 : undefined;
  };
}
