/**
 * A Parquet file writer of decoded batches (`../../batch`), front to back, never seeking (issue
 * 25; it replaced parquet-wasm, see docs/formats.md "Writers"). Follows apache/parquet-format
 * (`src/main/thrift/parquet.thrift`, `Encodings.md`):
 *
 * ```
 * "PAR1"
 * per row group, per column, one column chunk:
 *   [dictionary page header, dictionary page]   dictionary-encoded columns only
 *   data page header, data page                 data page v1: definition levels, then values
 * FileMetaData (Thrift compact protocol), its length (4 bytes, little endian), "PAR1"
 * ```
 *
 * - Schema: a root named `schema`, then one OPTIONAL field per column, typed as `../../typed`
 *   says (docs/formats.md "Column types"): strings BYTE_ARRAY with logical type STRING (and
 *   converted type UTF8 for older readers); Int64 INT64; Float64 DOUBLE; Date32 INT32 with DATE;
 *   timestamps INT64 with TIMESTAMP(MILLIS, isAdjustedToUTC) (converted type TIMESTAMP_MILLIS).
 *   Blank cells are nulls (definition level 0).
 * - Pages: one dictionary page (PLAIN values) and one data page per column chunk, or one data page
 *   alone. Definition levels in the RLE / bit-packing hybrid with bit width 1 (`./encodings`).
 *   Values: RLE_DICTIONARY (a byte of bit width, at least 1, then the hybrid encoding of the
 *   dictionary indices) for code-book columns (their rows are indices already), for integer
 *   columns of few distinct values (found through a table indexed by value) and for string cells
 *   that repeat; PLAIN for the others and for a column whose values are all null.
 * - Uncompressed (codec UNCOMPRESSED): docs/formats.md has the sizes and costs measured.
 * - Statistics per column chunk: null_count, and min_value / max_value of the values present in
 *   the column's type order (strings: unsigned bytewise; INT32 / INT64: signed; DOUBLE: numeric,
 *   NaN left out and counted in nan_count, a zero minimum written -0.0 and a zero maximum +0.0);
 *   FileMetaData.column_orders says TYPE_ORDER for every column, as the format requires with
 *   min_value / max_value.
 * - Key-value metadata `ARROW:schema`: the base64 of the Arrow IPC schema message of the same
 *   columns (what pyarrow writes), so Arrow readers get the Arrow types back.
 * - Row groups: a group is closed every `rowGroupRows` rows; a batch that crosses the boundary
 *   is split, small batches (seed tables) are gathered. No empty row group is written: a file of
 *   no rows has none.
 */
import { Table, tableToIPC } from "apache-arrow";
import { cellText, type DecodedBatch, type DictColumn, type IntColumn } from "../../batch";
import { DataError } from "../../errors";
import type { BatchConverter, ColumnType, TypedValue } from "../../typed";
import { ByteSink } from "./bytes";
import { bitWidth, writeDefinitionLevels, writeHybrid } from "./encodings";
import { CT, CompactWriter } from "./thrift";

/** parquet.thrift `Type`. */
const PhysicalType = { INT32: 1, INT64: 2, DOUBLE: 5, BYTE_ARRAY: 6 } as const;
/** parquet.thrift `ConvertedType`. */
const ConvertedType = { UTF8: 0, DATE: 6, TIMESTAMP_MILLIS: 9 } as const;
/** parquet.thrift `Encoding`. */
const Encoding = { PLAIN: 0, RLE: 3, RLE_DICTIONARY: 8 } as const;
/** parquet.thrift `PageType`. */
const PageType = { DATA_PAGE: 0, DICTIONARY_PAGE: 2 } as const;
/** parquet.thrift `FieldRepetitionType.OPTIONAL`. */
const OPTIONAL = 1;
/** parquet.thrift `CompressionCodec.UNCOMPRESSED`. */
const UNCOMPRESSED = 0;

const PHYSICAL: Record<ColumnType, number> = {
  string: PhysicalType.BYTE_ARRAY,
  int64: PhysicalType.INT64,
  float64: PhysicalType.DOUBLE,
  date: PhysicalType.INT32,
  timestamp: PhysicalType.INT64,
};

/** Whether typed arrays are little endian here (as Parquet's values are). */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** The file's magic, at its start and at its end. */
const MAGIC = Buffer.from("PAR1", "ascii");

/** Integer columns: a dictionary is looked for through a table indexed by value when max - min is below this. */
const DIRECT_RANGE = 1 << 20;
/** String cells are dictionary-encoded when at most half of the first this-many are distinct. */
const STRING_SAMPLE = 1024;

/** {@link ParquetWriter.dictColumn}'s index of a blank entry. */
const NULL_ID = -1;
/** {@link ParquetWriter.dictColumn}'s index of an entry its column's type cannot hold. */
const ERROR_ID = -2;

/** A typed value as a page holds it: string bytes (UTF-8), a bigint (INT64), a number (DOUBLE, INT32; INT64 when a safe integer). */
type PageValue = Uint8Array | bigint | number;

/** Rows [from, to) of a batch, in a row group. */
interface Part {
  batch: DecodedBatch;
  from: number;
  to: number;
  /** Names row r of the batch in error messages. */
  describe: (r: number) => string;
}

/** A dictionary's entries converted once for one column: value (null for a blank), dedup key, or the error converting it. */
interface PreparedDict {
  /** The dictionary's length when prepared (a longer dictionary is prepared again). */
  length: number;
  values: (PageValue | null)[];
  keys: unknown[];
  errors: unknown[] | undefined;
}

/** Statistics of a column chunk's values (PLAIN bytes, without a length for strings). */
interface Stats {
  min?: Uint8Array;
  max?: Uint8Array;
  /** DOUBLE columns: the number of NaN values. */
  nanCount?: number;
}

/** One column chunk's pages before their headers. */
interface ColumnPages {
  /** The dictionary page: its entries, PLAIN; absent for PLAIN data pages. */
  dict?: { body: Uint8Array; count: number };
  /** The data page: definition levels, then the values. */
  data: Uint8Array;
  /** The data page's value encoding. */
  encoding: number;
  rows: number;
  nulls: number;
  stats: Stats;
}

/** What the footer says of one column chunk. */
interface ChunkMeta {
  encoding: number;
  dictOffset?: number;
  dataOffset: number;
  /** Bytes of the chunk's pages, headers included. */
  size: number;
  rows: number;
  nulls: number;
  stats: Stats;
}

interface RowGroupMeta {
  offset: number;
  size: number;
  rows: number;
  chunks: ChunkMeta[];
}

/**
 * Writes a Parquet file of decoded batches, handing back its bytes piece by piece: {@link start}
 * first, then what each {@link write} returns (the row groups it completed), then {@link end}
 * (the last row group and the footer). Holds the rows of the row group being filled (the batches
 * themselves, not copies) and a few numbers per written column chunk for the footer.
 */
export class ParquetWriter {
  private readonly columns: BatchConverter["columns"];
  /** Bytes handed out so far (the offset of the next byte in the file). */
  private offset = 0;
  private readonly groups: RowGroupMeta[] = [];
  private pending: Part[] = [];
  private pendingRows = 0;
  /** Per column, its prepared dictionaries. */
  private readonly prepared: WeakMap<readonly string[], PreparedDict>[];
  /** The value -> dictionary index table of {@link intColumn}, reused. */
  private table = new Int32Array(0);

  /**
   * @param converter the model's typed columns (`../../typed`): names, types, and the text to
   *   value conversion of cells that are not indices or integers.
   * @param rowGroupRows rows per row group (1..1,048,576).
   * @throws RangeError for a bad `rowGroupRows`.
   */
  constructor(
    private readonly converter: BatchConverter,
    private readonly rowGroupRows: number,
  ) {
    if (!(Number.isInteger(rowGroupRows) && rowGroupRows >= 1 && rowGroupRows <= 1_048_576)) {
      throw new RangeError("rowGroupRows must be an integer in [1, 1048576]");
    }
    this.columns = converter.columns;
    this.prepared = this.columns.map(() => new WeakMap());
  }

  /** The file's first bytes (the magic `PAR1`). */
  start(): Buffer {
    this.offset = MAGIC.length;
    return MAGIC;
  }

  /**
   * Adds the rows of `batch` (its columns in the converter's order) and returns the row groups
   * they completed, one buffer each (none while the group being filled has room).
   * @param describe names row r of the batch in error messages (default "row r+1").
   * @throws DataError when a cell does not fit its column's type (`BatchConverter.value`'s
   *   message, prefixed with the column and `describe(r)`); raised when the row group holding it
   *   is written.
   */
  write(batch: DecodedBatch, describe: (r: number) => string = (r) => `row ${r + 1}`): Buffer[] {
    const out: Buffer[] = [];
    for (let from = 0; from < batch.length; ) {
      const to = Math.min(batch.length, from + this.rowGroupRows - this.pendingRows);
      this.pending.push({ batch, from, to, describe });
      this.pendingRows += to - from;
      from = to;
      if (this.pendingRows === this.rowGroupRows) out.push(this.flush());
    }
    return out;
  }

  /** The last row group (if rows wait) and the footer: the file's last bytes. */
  end(): Buffer[] {
    const out: Buffer[] = [];
    if (this.pendingRows > 0) out.push(this.flush());
    out.push(this.footer());
    return out;
  }

  /** Writes the waiting rows as one row group. */
  private flush(): Buffer {
    const parts = this.pending;
    const rows = this.pendingRows;
    this.pending = [];
    this.pendingRows = 0;
    const encoded = this.columns.map((_, j) => this.encodeColumn(j, parts));
    let size = 0;
    for (const e of encoded) size += (e.dict ? e.dict.body.length + 64 : 0) + e.data.length + 64;
    const out = new ByteSink(size);
    const start = this.offset;
    const chunks = encoded.map((e): ChunkMeta => {
      const chunkStart = out.pos;
      let dictOffset: number | undefined;
      if (e.dict) {
        dictOffset = this.offset + out.pos;
        pageHeader(out, PageType.DICTIONARY_PAGE, e.dict.body.length, (w) => w.structBegin(7).i32(1, e.dict!.count).i32(2, Encoding.PLAIN).structEnd());
        out.append(e.dict.body);
      }
      const dataOffset = this.offset + out.pos;
      pageHeader(out, PageType.DATA_PAGE, e.data.length, (w) => w.structBegin(5).i32(1, e.rows).i32(2, e.encoding).i32(3, Encoding.RLE).i32(4, Encoding.RLE).structEnd());
      out.append(e.data);
      return { encoding: e.encoding, dictOffset, dataOffset, size: out.pos - chunkStart, rows: e.rows, nulls: e.nulls, stats: e.stats };
    });
    this.groups.push({ offset: start, size: out.pos, rows, chunks });
    this.offset += out.pos;
    return out.bytes();
  }

  /** The column chunk of column `j` over `parts`. */
  private encodeColumn(j: number, parts: readonly Part[]): ColumnPages {
    const cols = parts.map((p) => p.batch.cells[j]);
    if (cols.every((c) => c.kind === "dict")) return this.dictColumn(j, parts);
    if (this.columns[j].type === "int64" && cols.every((c) => c.kind === "int")) {
      const pages = this.intColumn(parts.map((p) => ({ col: p.batch.cells[j] as IntColumn, from: p.from, to: p.to })));
      if (pages) return pages;
    }
    return this.cellColumn(j, parts);
  }

  /** Throws `e` as the cell error of column `j`, row `r` of `part`'s batch (a DataError gets the column and row). */
  private fail(j: number, part: Part, r: number, e: unknown): never {
    const name = this.columns[j].name;
    if (e instanceof DataError) throw new DataError(`column "${name}", ${part.describe(r)}: ${e.message}.`, { column: name, cause: e });
    throw e;
  }

  /** Column `j`'s entries of `dict` as page values, converted once per dictionary. */
  private prepare(j: number, dict: readonly string[]): PreparedDict {
    let p = this.prepared[j].get(dict);
    if (p !== undefined && p.length === dict.length) return p;
    const n = dict.length;
    const values: (PageValue | null)[] = new Array(n);
    const keys: unknown[] = new Array(n);
    let errors: unknown[] | undefined;
    const string = this.columns[j].type === "string";
    for (let e = 0; e < n; e++) {
      const text = dict[e];
      if (string) {
        values[e] = text === "" ? null : Buffer.from(text, "utf8");
        keys[e] = text;
        continue;
      }
      try {
        const v = this.converter.value(j, text) as bigint | number | null;
        values[e] = v;
        keys[e] = typeof v === "number" && Object.is(v, -0) ? "-0" : v;
      } catch (err) {
        values[e] = null;
        (errors ??= new Array(n))[e] = err;
      }
    }
    p = { length: n, values, keys, errors };
    this.prepared[j].set(dict, p);
    return p;
  }

  /**
   * A column whose rows are dictionary indices in every part: RLE_DICTIONARY over the distinct
   * values of the entries the rows use (the parts' dictionaries merged by value).
   */
  private dictColumn(j: number, parts: readonly Part[]): ColumnPages {
    const ids = new Map<unknown, number>();
    const values: PageValue[] = [];
    // Per part, entry -> dictionary index, NULL_ID for a blank, ERROR_ID for a text the type cannot hold.
    const remaps = parts.map((part) => {
      const { dict } = part.batch.cells[j] as DictColumn;
      const prep = this.prepare(j, dict);
      const remap = new Int32Array(dict.length);
      for (let e = 0; e < dict.length; e++) {
        const v = prep.values[e];
        if (prep.errors?.[e] !== undefined) remap[e] = ERROR_ID;
        else if (v === null) remap[e] = NULL_ID;
        else {
          let id = ids.get(prep.keys[e]);
          if (id === undefined) {
            id = values.push(v) - 1;
            ids.set(prep.keys[e], id);
          }
          remap[e] = id;
        }
      }
      return remap;
    });
    let rows = 0;
    for (const p of parts) rows += p.to - p.from;
    const type = this.columns[j].type;
    const seen = new Uint8Array(values.length);
    if (parts.length === 1 && isIdentity(remaps[0])) {
      // Every entry is present and distinct, so the rows' own indices are the page's indices.
      const { batch, from, to } = parts[0];
      const index = (batch.cells[j] as DictColumn).index;
      for (let r = from; r < to; r++) seen[index[r]] = 1;
      return usedDictionary(type, values, seen, index.subarray(from, to), undefined, rows);
    }
    const idx = new Int32Array(rows);
    let defs: Int32Array | undefined; // made at the first null
    let k = 0; // values present
    let q = 0; // rows
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i];
      const index = (part.batch.cells[j] as DictColumn).index;
      const remap = remaps[i];
      let r = part.from;
      if (defs === undefined) {
        for (; r < part.to; r++) {
          const id = remap[index[r]];
          if (id < 0) break;
          idx[k++] = id;
          seen[id] = 1;
        }
        q += r - part.from;
        if (r < part.to) defs = new Int32Array(rows).fill(1, 0, q);
      }
      for (; r < part.to; r++, q++) {
        const id = remap[index[r]];
        if (id >= 0) {
          idx[k++] = id;
          seen[id] = 1;
          defs![q] = 1;
        } else if (id === ERROR_ID) {
          const { dict } = part.batch.cells[j] as DictColumn;
          this.fail(j, part, r, this.prepare(j, dict).errors![index[r]]);
        }
      }
    }
    if (k === 0) return allNull(rows);
    return usedDictionary(type, values, seen, idx.subarray(0, k), defs, rows);
  }

  /**
   * An INT64 column of integers (`int` parts): RLE_DICTIONARY when max - min is below
   * {@link DIRECT_RANGE} and the distinct values are few enough that the dictionary page and the
   * indices are smaller than PLAIN; PLAIN otherwise. Undefined when a value is not a safe
   * integer (the caller converts cells then).
   */
  private intColumn(parts: readonly { col: IntColumn; from: number; to: number }[]): ColumnPages | undefined {
    let min = Infinity;
    let max = -Infinity;
    let rows = 0;
    let nulls = 0;
    for (const { col, from, to } of parts) {
      const { values, blank } = col;
      rows += to - from;
      if (blank === undefined) {
        for (let r = from; r < to; r++) {
          const x = values[r];
          if (!Number.isSafeInteger(x)) return undefined;
          if (x < min) min = x;
          if (x > max) max = x;
        }
        continue;
      }
      for (let r = from; r < to; r++) {
        if (blank[r] === 1) {
          nulls++;
          continue;
        }
        const x = values[r];
        if (!Number.isSafeInteger(x)) return undefined;
        if (x < min) min = x;
        if (x > max) max = x;
      }
    }
    const present = rows - nulls;
    if (present === 0) return allNull(rows);
    let defs: Int32Array | undefined;
    if (nulls > 0) {
      defs = new Int32Array(rows);
      let q = 0;
      for (const { col, from, to } of parts) for (let r = from; r < to; r++) defs[q++] = col.blank !== undefined && col.blank[r] === 1 ? 0 : 1;
    }
    const stats: Stats = { min: int64Bytes(min), max: int64Bytes(max) };
    if (max - min < DIRECT_RANGE) {
      const range = max - min + 1;
      if (this.table.length < range) this.table = new Int32Array(Math.max(range, 2 * this.table.length));
      const table = this.table;
      table.fill(-1, 0, range);
      const dict: number[] = [];
      const idx = new Int32Array(present);
      const limit = present / 2;
      let k = 0;
      scan: for (const { col, from, to } of parts) {
        const { values, blank } = col;
        for (let r = from; r < to; r++) {
          if (blank !== undefined && blank[r] === 1) continue;
          const t = (values[r] - min) | 0; // in [0, DIRECT_RANGE): an int32 index
          let id = table[t];
          if (id < 0) {
            id = table[t] = dict.length;
            dict.push(values[r]);
            if (dict.length > limit) break scan;
          }
          idx[k++] = id;
        }
      }
      if (k === present && 8 * dict.length + (present * bitWidth(dict.length - 1)) / 8 < 8 * present) {
        return dictionaryPages("int64", dict, idx, present, defs, rows, stats);
      }
    }
    const out = new ByteSink(8 * present + rows / 8 + 64);
    writeDefinitionLevels(out, defs, rows);
    if (LITTLE_ENDIAN) {
      // Each value's two 32-bit halves, low first, in a typed array (no call per value), then copied.
      const words = new Int32Array(2 * present);
      let w = 0;
      for (const { col, from, to } of parts) {
        const { values, blank } = col;
        for (let r = from; r < to; r++) {
          if (blank !== undefined && blank[r] === 1) continue;
          const x = values[r];
          const hi = Math.floor(x / 4294967296);
          words[w++] = x - hi * 4294967296;
          words[w++] = hi;
        }
      }
      out.append(new Uint8Array(words.buffer));
    } else {
      for (const { col, from, to } of parts) {
        const { values, blank } = col;
        for (let r = from; r < to; r++) if (blank === undefined || blank[r] === 0) out.i64(values[r]);
      }
    }
    return { data: out.bytes(), encoding: Encoding.PLAIN, rows, nulls, stats };
  }

  /**
   * A column converted cell by cell (`BatchConverter.value`): identifiers, datetime and decimal
   * cells, seed and caller tables. Strings whose first cells repeat are dictionary-encoded
   * through a Map; everything else is PLAIN.
   */
  private cellColumn(j: number, parts: readonly Part[]): ColumnPages {
    const type = this.columns[j].type;
    let rows = 0;
    for (const p of parts) rows += p.to - p.from;
    const defs = new Int32Array(rows);
    const values: (string | bigint | number)[] = [];
    let q = 0;
    for (const part of parts) {
      const col = part.batch.cells[j];
      for (let r = part.from; r < part.to; r++) {
        let v: TypedValue;
        try {
          v = this.converter.value(j, cellText(col, r));
        } catch (e) {
          this.fail(j, part, r, e);
        }
        if (v === null) q++;
        else {
          defs[q++] = 1;
          values.push(v);
        }
      }
    }
    const nulls = rows - values.length;
    if (values.length === 0) return allNull(rows);
    const levels = nulls > 0 ? defs : undefined;
    if (type === "string") {
      const pages = stringDictionary(values as string[], levels, rows);
      if (pages) return pages;
      return plainStrings(values as string[], levels, rows, nulls);
    }
    const out = new ByteSink((type === "date" ? 4 : 8) * values.length + rows / 8 + 64);
    writeDefinitionLevels(out, levels, rows);
    for (const v of values) writeValue(out, type, v);
    return { data: out.bytes(), encoding: Encoding.PLAIN, rows, nulls, stats: statsOf(type, values) };
  }

  /** FileMetaData, its length and the closing magic. */
  private footer(): Buffer {
    const w = new CompactWriter(new ByteSink(4096 + 256 * this.groups.length * this.columns.length));
    w.i32(1, 1); // version: 1, as parquet.thrift advises writers
    w.listBegin(2, CT.STRUCT, this.columns.length + 1);
    w.elemStructBegin().string(4, "schema").i32(5, this.columns.length).structEnd();
    for (const c of this.columns) {
      w.elemStructBegin().i32(1, PHYSICAL[c.type]).i32(3, OPTIONAL).string(4, c.name);
      switch (c.type) {
        case "string":
          w.i32(6, ConvertedType.UTF8).structBegin(10).emptyStruct(1).structEnd();
          break;
        case "date":
          w.i32(6, ConvertedType.DATE).structBegin(10).emptyStruct(6).structEnd();
          break;
        case "timestamp":
          // TimestampType { isAdjustedToUTC: true, unit: TimeUnit { MILLIS } }
          w.i32(6, ConvertedType.TIMESTAMP_MILLIS).structBegin(10).structBegin(8).bool(1, true).structBegin(2).emptyStruct(1).structEnd().structEnd().structEnd();
          break;
        default:
          break;
      }
      w.structEnd();
    }
    w.i64(3, this.groups.reduce((n, g) => n + g.rows, 0));
    w.listBegin(4, CT.STRUCT, this.groups.length);
    for (const g of this.groups) {
      w.elemStructBegin().listBegin(1, CT.STRUCT, g.chunks.length);
      g.chunks.forEach((c, j) => this.chunkMeta(w, j, c));
      w.i64(2, g.size).i64(3, g.rows).i64(5, g.offset).i64(6, g.size).structEnd();
    }
    w.listBegin(5, CT.STRUCT, 1).elemStructBegin().string(1, "ARROW:schema").string(2, arrowSchemaBase64(this.converter)).structEnd();
    w.string(6, "synthd");
    w.listBegin(7, CT.STRUCT, this.columns.length);
    for (let j = 0; j < this.columns.length; j++) w.elemStructBegin().emptyStruct(1).structEnd(); // TYPE_ORDER
    const out = w.end();
    const length = out.pos;
    out.u32(length);
    out.append(MAGIC);
    this.offset += out.pos;
    return out.bytes();
  }

  /** A ColumnChunk struct (list element) of column `j`. */
  private chunkMeta(w: CompactWriter, j: number, c: ChunkMeta): void {
    const { type, name } = this.columns[j];
    const dict = c.encoding === Encoding.RLE_DICTIONARY;
    w.elemStructBegin().i64(2, 0).structBegin(3);
    w.i32(1, PHYSICAL[type]);
    const encodings = dict ? [Encoding.PLAIN, Encoding.RLE, Encoding.RLE_DICTIONARY] : [Encoding.PLAIN, Encoding.RLE];
    w.listBegin(2, CT.I32, encodings.length);
    for (const e of encodings) w.elemI32(e);
    w.listBegin(3, CT.BINARY, 1).elemString(name);
    w.i32(4, UNCOMPRESSED).i64(5, c.rows).i64(6, c.size).i64(7, c.size).i64(9, c.dataOffset);
    if (c.dictOffset !== undefined) w.i64(11, c.dictOffset);
    w.structBegin(12).i64(3, c.nulls);
    if (c.stats.max) w.binary(5, c.stats.max);
    if (c.stats.min) w.binary(6, c.stats.min);
    if (c.stats.nanCount !== undefined) w.i64(9, c.stats.nanCount);
    w.structEnd();
    // encoding_stats: one page of each kind
    w.listBegin(13, CT.STRUCT, dict ? 2 : 1);
    if (dict) w.elemStructBegin().i32(1, PageType.DICTIONARY_PAGE).i32(2, Encoding.PLAIN).i32(3, 1).structEnd();
    w.elemStructBegin().i32(1, PageType.DATA_PAGE).i32(2, c.encoding).i32(3, 1).structEnd();
    w.structEnd().structEnd();
  }
}

/** A PageHeader (uncompressed: both sizes `size`) whose page-kind struct `kind` writes. */
function pageHeader(out: ByteSink, type: number, size: number, kind: (w: CompactWriter) => void): void {
  const w = new CompactWriter(out);
  w.i32(1, type).i32(2, size).i32(3, size);
  kind(w);
  w.end();
}

/** A column chunk of only nulls: a PLAIN data page of definition levels 0. */
function allNull(rows: number): ColumnPages {
  const out = new ByteSink(64);
  const at = out.pos;
  out.u32(0);
  out.varint(rows * 2);
  out.byte(0);
  out.u32At(at, out.pos - at - 4);
  return { data: out.bytes(), encoding: Encoding.PLAIN, rows, nulls: rows, stats: {} };
}

/** Whether `remap` maps every entry to itself. */
function isIdentity(remap: Int32Array): boolean {
  for (let e = 0; e < remap.length; e++) if (remap[e] !== e) return false;
  return true;
}

/**
 * {@link dictionaryPages} of the values some row holds (`seen[id]` 1): the dictionary keeps the
 * others too while they are at most half of it (the indices are then written as they are), else
 * it is cut to the values held and the indices renumbered into a new array (`idx` may be a
 * batch's own). Statistics are of the values held.
 */
function usedDictionary(type: ColumnType, values: readonly PageValue[], seen: Uint8Array, idx: Int32Array, defs: Int32Array | undefined, rows: number): ColumnPages {
  const held: PageValue[] = [];
  for (let id = 0; id < values.length; id++) if (seen[id] === 1) held.push(values[id]);
  const stats = statsOf(type, held);
  if (2 * held.length >= values.length) return dictionaryPages(type, values, idx, idx.length, defs, rows, stats);
  const renumber = new Int32Array(values.length);
  for (let id = 0, next = 0; id < values.length; id++) if (seen[id] === 1) renumber[id] = next++;
  const ids = new Int32Array(idx.length);
  for (let t = 0; t < idx.length; t++) ids[t] = renumber[idx[t]];
  return dictionaryPages(type, held, ids, ids.length, defs, rows, stats);
}

/**
 * The pages of a dictionary-encoded column chunk of `rows` rows: the dictionary page of `values`
 * (PLAIN), and a data page of the definition levels (`defs`, undefined when no row is null) and,
 * per present value, its index `idx[0 .. count)` (a byte of bit width, at least 1, then the
 * hybrid encoding). `stats`: of the values (default: all of `values`).
 */
function dictionaryPages(
  type: ColumnType,
  values: readonly PageValue[],
  idx: Int32Array,
  count: number,
  defs: Int32Array | undefined,
  rows: number,
  stats: Stats = statsOf(type, values),
): ColumnPages {
  const width = Math.max(1, bitWidth(values.length - 1));
  const out = new ByteSink(rows / 8 + (count * width) / 8 + count / 64 + 64);
  writeDefinitionLevels(out, defs, rows);
  out.byte(width);
  writeHybrid(out, idx, count, width);
  const dict = new ByteSink(16 * values.length + 64);
  for (const v of values) writeValue(dict, type, v);
  return { dict: { body: dict.bytes(), count: values.length }, data: out.bytes(), encoding: Encoding.RLE_DICTIONARY, rows, nulls: rows - count, stats };
}

/** Strings dictionary-encoded through a Map, when at most half of the first {@link STRING_SAMPLE} are distinct (else undefined). */
function stringDictionary(values: readonly string[], defs: Int32Array | undefined, rows: number): ColumnPages | undefined {
  const sample = Math.min(values.length, STRING_SAMPLE);
  if (new Set(values.slice(0, sample)).size * 2 > sample) return undefined;
  const ids = new Map<string, number>();
  const dict: Uint8Array[] = [];
  const idx = new Int32Array(values.length);
  for (let k = 0; k < values.length; k++) {
    const s = values[k];
    let id = ids.get(s);
    if (id === undefined) {
      id = dict.push(Buffer.from(s, "utf8")) - 1;
      ids.set(s, id);
    }
    idx[k] = id;
  }
  return dictionaryPages("string", dict, idx, values.length, defs, rows);
}

/** Strings PLAIN (a 4-byte length, then the UTF-8 bytes), with their bytewise min and max. */
function plainStrings(values: readonly string[], defs: Int32Array | undefined, rows: number, nulls: number): ColumnPages {
  const out = new ByteSink(rows / 8 + 8 * values.length + 64);
  writeDefinitionLevels(out, defs, rows);
  let minAt = -1;
  let minLen = 0;
  let maxAt = -1;
  let maxLen = 0;
  for (const s of values) {
    const at = out.pos;
    out.u32(0);
    out.utf8(s);
    const len = out.pos - at - 4;
    out.u32At(at, len);
    if (minAt < 0 || compareBytes(out.buf, at + 4, len, minAt, minLen) < 0) {
      minAt = at + 4;
      minLen = len;
    }
    if (maxAt < 0 || compareBytes(out.buf, at + 4, len, maxAt, maxLen) > 0) {
      maxAt = at + 4;
      maxLen = len;
    }
  }
  const data = out.bytes();
  // Copies: the footer keeps the statistics, not the page.
  const stats = { min: Uint8Array.prototype.slice.call(data, minAt, minAt + minLen), max: Uint8Array.prototype.slice.call(data, maxAt, maxAt + maxLen) };
  return { data, encoding: Encoding.PLAIN, rows, nulls, stats };
}

/** Unsigned bytewise order of `buf[a .. a + aLen)` and `buf[b .. b + bLen)`: negative, 0 or positive. */
function compareBytes(buf: Uint8Array, a: number, aLen: number, b: number, bLen: number): number {
  const n = Math.min(aLen, bLen);
  for (let i = 0; i < n; i++) {
    const d = buf[a + i] - buf[b + i];
    if (d !== 0) return d;
  }
  return aLen - bLen;
}

/** One value, PLAIN: strings (bytes or text) with a 4-byte length; INT64 8 bytes; DOUBLE 8 bytes; INT32 4 bytes; little endian. */
function writeValue(out: ByteSink, type: ColumnType, v: PageValue | string): void {
  switch (type) {
    case "string":
      if (typeof v === "string") {
        const at = out.pos;
        out.u32(0);
        out.utf8(v);
        out.u32At(at, out.pos - at - 4);
      } else {
        const b = v as Uint8Array;
        out.u32(b.length);
        out.append(b);
      }
      return;
    case "int64":
    case "timestamp":
      out.i64(v as bigint | number);
      return;
    case "float64":
      out.f64(v as number);
      return;
    case "date":
      out.i32(v as number);
      return;
  }
}

/** The 8 bytes (little endian) of a safe integer or bigint as INT64. */
function int64Bytes(v: bigint | number): Uint8Array {
  const out = new ByteSink(8);
  out.i64(v);
  return out.bytes();
}

/**
 * min_value / max_value of `values` (all present) in the type's order: bytes unsigned for strings,
 * signed for integers; DOUBLE leaves NaN out (counted in nanCount; no min or max when all are
 * NaN) and writes a zero minimum as -0.0, a zero maximum as +0.0.
 */
function statsOf(type: ColumnType, values: readonly (PageValue | string)[]): Stats {
  if (type === "string") {
    let min: Uint8Array | undefined;
    let max: Uint8Array | undefined;
    for (const v of values) {
      const b = typeof v === "string" ? Buffer.from(v, "utf8") : (v as Uint8Array);
      if (min === undefined || Buffer.compare(b, min) < 0) min = b;
      if (max === undefined || Buffer.compare(b, max) > 0) max = b;
    }
    return { min, max };
  }
  if (type === "float64") {
    let min = Infinity;
    let max = -Infinity;
    let nanCount = 0;
    for (const v of values as number[]) {
      if (Number.isNaN(v)) nanCount++;
      else {
        if (v < min) min = v;
        if (v > max) max = v;
      }
    }
    if (nanCount === values.length) return { nanCount };
    const bytes = (x: number): Uint8Array => {
      const out = new ByteSink(8);
      out.f64(x);
      return out.bytes();
    };
    return { min: bytes(min === 0 ? -0 : min), max: bytes(max === 0 ? 0 : max), nanCount };
  }
  let min = values[0] as bigint | number;
  let max = min;
  for (const v of values as (bigint | number)[]) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
  if (type === "date") {
    const lo = new ByteSink(4);
    lo.i32(min as number);
    const hi = new ByteSink(4);
    hi.i32(max as number);
    return { min: lo.bytes(), max: hi.bytes() };
  }
  return { min: int64Bytes(min), max: int64Bytes(max) };
}

/** The `ARROW:schema` value: base64 of the Arrow IPC schema message (continuation, length, flatbuffer) of the columns. */
function arrowSchemaBase64(converter: BatchConverter): string {
  const stream = tableToIPC(new Table(converter.schema), "stream");
  // The stream is the schema message, then the 8-byte end-of-stream marker.
  return Buffer.from(stream.buffer, stream.byteOffset, stream.length - 8).toString("base64");
}
