/**
 * Column chunks of the Parquet writer: the pages of one column over the rows of one row group,
 * written into buffers reused from column to column ({@link ColumnEncoder.encode} returns views),
 * which the writer copies before it asks for the next column. Encodings and statistics per column
 * form: docs/formats.md "Batching".
 */
import { cellText, type DecodedBatch, type DictColumn, type IntColumn } from "../../generate/batch";
import { DataError } from "../../errors";
import type { BatchConverter, ColumnType, TypedValue } from "../typed";
import { ByteSink } from "./bytes";
import { bitWidth, writeDefinitionLevels, writeHybrid } from "./encodings";
import { ERROR_ID, NULL_ID, blankLevels, int64Words, intRange, markSeen, remapRows, remapRowsWithNulls, tableIds } from "./rows";
import { compareBytes, int64Bytes, statsOf, writeValue, type PageValue, type Stats } from "./values";

export type { Stats };

/** parquet.thrift `Encoding`. */
export const Encoding = { PLAIN: 0, RLE: 3, RLE_DICTIONARY: 8 } as const;

/** Integer columns: a dictionary is looked for (a table indexed by value) when max - min < this. */
export const DIRECT_RANGE = 1 << 20;
/** String cells are dictionary-encoded when at most half of the first this-many are distinct. */
export const STRING_SAMPLE = 1024;

/** Whether typed arrays are little endian here (as Parquet's values are). */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Rows [from, to) of a batch, in a row group. */
export interface Part {
  batch: DecodedBatch;
  from: number;
  to: number;
  /** Names row r of the batch in error messages. */
  describe: (r: number) => string;
}

/** One column chunk's pages before their headers; `dict.body` and `data` view reused buffers. */
export interface ColumnPages {
  /** The dictionary page: its entries, PLAIN; absent for PLAIN data pages. */
  dict?: { body: Uint8Array; count: number };
  /** The data page (v1): definition levels (with their length), then the values. */
  data: Uint8Array;
  /** The data page's value encoding ({@link Encoding}). */
  encoding: number;
  rows: number;
  nulls: number;
  stats: Stats;
}

/** A dictionary's entries converted once per column: value (null: blank), merge key, or error. */
interface PreparedDict {
  /** The dictionary's length when prepared (a longer dictionary is prepared again). */
  length: number;
  values: (PageValue | null)[];
  keys: unknown[];
  errors: unknown[] | undefined;
}

/** Buffers reused from column chunk to column chunk (contents undefined when handed out). */
class Scratch {
  readonly data = new ByteSink(1 << 16);
  readonly dict = new ByteSink(1 << 12);
  private idxBuf = new Int32Array(0);
  private defsBuf = new Int32Array(0);
  private wordsBuf = new Int32Array(0);
  private tableBuf = new Int32Array(0);

  /** Room for `n` dictionary indices. */
  idx(n: number): Int32Array {
    if (this.idxBuf.length < n) this.idxBuf = new Int32Array(n);
    return this.idxBuf;
  }

  /** Room for `n` definition levels. */
  defs(n: number): Int32Array {
    if (this.defsBuf.length < n) this.defsBuf = new Int32Array(n);
    return this.defsBuf;
  }

  /** Room for `n` 32-bit words. */
  words(n: number): Int32Array {
    if (this.wordsBuf.length < n) this.wordsBuf = new Int32Array(n);
    return this.wordsBuf;
  }

  /** A value -> index table of `n` entries, all -1. */
  table(n: number): Int32Array {
    if (this.tableBuf.length < n) this.tableBuf = new Int32Array(Math.max(n, 2 * this.tableBuf.length));
    this.tableBuf.fill(-1, 0, n);
    return this.tableBuf;
  }
}

/** Encodes the column chunks of one model's columns (see the module comment). */
export class ColumnEncoder {
  private readonly columns: BatchConverter["columns"];
  /** Per column, its prepared dictionaries. */
  private readonly prepared: WeakMap<readonly string[], PreparedDict>[];
  private readonly s = new Scratch();

  /** @param converter the model's typed columns and the text -> value conversion of cells. */
  constructor(private readonly converter: BatchConverter) {
    this.columns = converter.columns;
    this.prepared = this.columns.map(() => new WeakMap());
  }

  /**
   * The pages of column `j` over the rows of `parts`, as views of buffers that the next call
   * reuses: copy them first.
   * @throws DataError for the first cell that does not fit the column's type.
   */
  encode(j: number, parts: readonly Part[]): ColumnPages {
    if (parts.every((p) => p.batch.cells[j].kind === "dict")) return this.dictColumn(j, parts);
    if (this.columns[j].type === "int64" && parts.every((p) => p.batch.cells[j].kind === "int")) {
      const pages = this.intColumn(parts.map((p) => ({ col: p.batch.cells[j] as IntColumn, from: p.from, to: p.to })));
      if (pages) return pages;
    }
    return this.cellColumn(j, parts);
  }

  /** Throws `e` as the cell error of column `j`, row `r` of `part`'s batch. */
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
        keys[e] = typeof v === "number" && Object.is(v, -0) ? "-0" : v; // -0 and 0 are two values
      } catch (err) {
        values[e] = null;
        (errors ??= new Array(n))[e] = err;
      }
    }
    p = { length: n, values, keys, errors };
    this.prepared[j].set(dict, p);
    return p;
  }

  /** A column whose rows are dictionary indices in every part (docs/formats.md "Batching"). */
  private dictColumn(j: number, parts: readonly Part[]): ColumnPages {
    const ids = new Map<unknown, number>();
    const values: PageValue[] = [];
    // Per part, entry -> dictionary index, NULL_ID for a blank, ERROR_ID for a text that fails.
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
      markSeen(index, from, to, seen);
      return this.usedDictionary(type, values, seen, index.subarray(from, to), undefined, rows);
    }
    const idx = this.s.idx(rows);
    let defs: Int32Array | undefined; // set at the first null
    let k = 0; // values present
    let q = 0; // rows
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i];
      const index = (part.batch.cells[j] as DictColumn).index;
      const remap = remaps[i];
      let r = part.from;
      if (defs === undefined) {
        r = remapRows(index, r, part.to, remap, idx, k, seen);
        k += r - part.from;
        q += r - part.from;
        if (r < part.to) defs = this.s.defs(rows).fill(1, 0, q);
      }
      if (r < part.to) {
        const next = remapRowsWithNulls(index, r, part.to, remap, idx, k, seen, defs!, q);
        if (next < 0) {
          const { dict } = part.batch.cells[j] as DictColumn;
          this.fail(j, part, ~next, this.prepare(j, dict).errors![index[~next]]);
        }
        k = next;
        q += part.to - r;
      }
    }
    if (k === 0) return this.allNull(rows);
    return this.usedDictionary(type, values, seen, idx.subarray(0, k), defs, rows);
  }

  /**
   * {@link dictionaryPages} of the values some row holds (`seen[id]` 1): unheld values stay while
   * at most half the dictionary (indices written as they are), else the dictionary is cut and the
   * indices renumbered into a new array (`idx` may be a batch's own). Statistics of held values.
   */
  private usedDictionary(type: ColumnType, values: readonly PageValue[], seen: Uint8Array, idx: Int32Array, defs: Int32Array | undefined, rows: number): ColumnPages {
    const held: PageValue[] = [];
    for (let id = 0; id < values.length; id++) if (seen[id] === 1) held.push(values[id]);
    const stats = statsOf(type, held);
    if (2 * held.length >= values.length) return this.dictionaryPages(type, values, idx, defs, rows, stats);
    const renumber = new Int32Array(values.length);
    for (let id = 0, next = 0; id < values.length; id++) if (seen[id] === 1) renumber[id] = next++;
    const ids = new Int32Array(idx.length);
    for (let t = 0; t < idx.length; t++) ids[t] = renumber[idx[t]];
    return this.dictionaryPages(type, held, ids, defs, rows, stats);
  }

  /**
   * A dictionary-encoded chunk of `rows` rows: the dictionary page of `values` (PLAIN) and a data
   * page of definition levels (`defs`, undefined when no row is null) and hybrid-encoded indices.
   * `stats`: of the values held (default: all of `values`).
   */
  private dictionaryPages(type: ColumnType, values: readonly PageValue[], idx: Int32Array, defs: Int32Array | undefined, rows: number, stats = statsOf(type, values)): ColumnPages {
    const width = Math.max(1, bitWidth(values.length - 1));
    const out = this.s.data;
    out.reset();
    writeDefinitionLevels(out, defs, rows);
    out.byte(width);
    writeHybrid(out, idx, idx.length, width);
    const dict = this.s.dict;
    dict.reset();
    for (const v of values) writeValue(dict, type, v);
    return { dict: { body: dict.bytes(), count: values.length }, data: out.bytes(), encoding: Encoding.RLE_DICTIONARY, rows, nulls: rows - idx.length, stats };
  }

  /** A column chunk of only nulls: a PLAIN data page of definition levels 0. */
  private allNull(rows: number): ColumnPages {
    const out = this.s.data;
    out.reset();
    out.u32(0);
    out.varint(rows * 2);
    out.byte(0);
    out.u32At(0, out.pos - 4);
    return { data: out.bytes(), encoding: Encoding.PLAIN, rows, nulls: rows, stats: {} };
  }

  /** An INT64 column of `int` parts; undefined when a value is not a safe integer. */
  private intColumn(parts: readonly { col: IntColumn; from: number; to: number }[]): ColumnPages | undefined {
    const range = new Float64Array([Infinity, -Infinity, 0]); // min, max, nulls
    let rows = 0;
    for (const { col, from, to } of parts) {
      rows += to - from;
      if (!intRange(col.values, col.blank, from, to, range)) return undefined;
    }
    const [min, max, nulls] = range;
    const present = rows - nulls;
    if (present === 0) return this.allNull(rows);
    let defs: Int32Array | undefined;
    if (nulls > 0) {
      defs = this.s.defs(rows);
      let q = 0;
      for (const { col, from, to } of parts) {
        blankLevels(col.blank, from, to, defs, q);
        q += to - from;
      }
    }
    const stats: Stats = { min: int64Bytes(min), max: int64Bytes(max) };
    if (max - min < DIRECT_RANGE) {
      const table = this.s.table(max - min + 1);
      const dict: number[] = [];
      const idx = this.s.idx(present);
      let k = 0;
      for (const { col, from, to } of parts) {
        k = tableIds(col.values, col.blank, from, to, min, table, dict, idx, k, present / 2);
        if (k < 0) break;
      }
      if (k === present && 8 * dict.length + (present * bitWidth(dict.length - 1)) / 8 < 8 * present) {
        return this.dictionaryPages("int64", dict, idx.subarray(0, present), defs, rows, stats);
      }
    }
    const out = this.s.data;
    out.reset();
    writeDefinitionLevels(out, defs, rows);
    if (LITTLE_ENDIAN) {
      const words = this.s.words(2 * present);
      let w = 0;
      for (const { col, from, to } of parts) w = int64Words(col.values, col.blank, from, to, words, w);
      out.append(new Uint8Array(words.buffer, 0, 8 * present));
    } else {
      for (const { col, from, to } of parts) {
        const { values, blank } = col;
        for (let r = from; r < to; r++) if (blank === undefined || blank[r] === 0) out.i64(values[r]);
      }
    }
    return { data: out.bytes(), encoding: Encoding.PLAIN, rows, nulls, stats };
  }

  /** A column converted cell by cell (docs/formats.md "Batching"). */
  private cellColumn(j: number, parts: readonly Part[]): ColumnPages {
    const type = this.columns[j].type;
    let rows = 0;
    for (const p of parts) rows += p.to - p.from;
    const defs = this.s.defs(rows);
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
        if (v === null) defs[q++] = 0;
        else {
          defs[q++] = 1;
          values.push(v);
        }
      }
    }
    const nulls = rows - values.length;
    if (values.length === 0) return this.allNull(rows);
    const levels = nulls > 0 ? defs : undefined;
    if (type === "string") return this.stringDictionary(values as string[], levels, rows) ?? this.plainStrings(values as string[], levels, rows);
    const out = this.s.data;
    out.reset();
    writeDefinitionLevels(out, levels, rows);
    for (const v of values) writeValue(out, type, v);
    return { data: out.bytes(), encoding: Encoding.PLAIN, rows, nulls, stats: statsOf(type, values) };
  }

  /** Strings through a Map into a dictionary when at most half of the first few are distinct. */
  private stringDictionary(values: readonly string[], defs: Int32Array | undefined, rows: number): ColumnPages | undefined {
    const sample = Math.min(values.length, STRING_SAMPLE);
    if (new Set(values.slice(0, sample)).size * 2 > sample) return undefined;
    const ids = new Map<string, number>();
    const dict: Uint8Array[] = [];
    const idx = this.s.idx(values.length);
    for (let k = 0; k < values.length; k++) {
      const s = values[k];
      let id = ids.get(s);
      if (id === undefined) {
        id = dict.push(Buffer.from(s, "utf8")) - 1;
        ids.set(s, id);
      }
      idx[k] = id;
    }
    return this.dictionaryPages("string", dict, idx.subarray(0, values.length), defs, rows);
  }

  /** Strings PLAIN (a 4-byte length, then the UTF-8 bytes), with their bytewise min and max. */
  private plainStrings(values: readonly string[], defs: Int32Array | undefined, rows: number): ColumnPages {
    const out = this.s.data;
    out.reset();
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
    // Copies: the footer keeps the statistics, the buffer is reused.
    const stats = { min: Uint8Array.prototype.slice.call(data, minAt, minAt + minLen), max: Uint8Array.prototype.slice.call(data, maxAt, maxAt + maxLen) };
    return { data, encoding: Encoding.PLAIN, rows, nulls: rows - values.length, stats };
  }
}

/** Whether `remap` maps every entry to itself. */
function isIdentity(remap: Int32Array): boolean {
  for (let e = 0; e < remap.length; e++) if (remap[e] !== e) return false;
  return true;
}
