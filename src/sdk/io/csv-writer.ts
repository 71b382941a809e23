/**
 * The CSV writer of decoded batches: the bytes csv-stringify writes with `./csv`'s `writeCsv`
 * options (header, `,`, `\n` after every record; a field holding `"`, `,` or `\n` is quoted, its
 * quotes doubled; anything else, a lone `\r` included, as is), built straight into one buffer per
 * batch with no string per cell of a code-book or integer column (docs/formats.md "Writers").
 * Code-book entries are encoded once per dictionary as little-endian words and copied four bytes at
 * a time; other integers are written digit by digit. {@link writeRows} is the reference and
 * fallback of the addon's `csvRows` (native/src/csv_rows.cc); `test/sdk-batch.test.ts` checks both
 * against csv-stringify.
 */
import type { DecodedBatch, DecodedColumn } from "../generate/batch";
import { nativeLoops, type CsvRowsFn } from "../native-loops";

const QUOTE_NEEDED = /[",\n]/;
const QUOTES = /"/g;
const COMMA = 0x2c;
const NEWLINE = 0x0a;
const MINUS = 0x2d;

/** The field csv-stringify writes for text `v` (quoting as in the module comment). */
export function csvField(v: string): string {
  return QUOTE_NEEDED.test(v) ? `"${v.replace(QUOTES, '""')}"` : v;
}

/** The header line (with its `\n`) of `columns`. */
export function csvHeader(columns: readonly string[]): Buffer {
  return Buffer.from(`${columns.map(csvField).join(",")}\n`, "utf8");
}

/** A dictionary's UTF-8 CSV fields (entry i at `start[i]`), also as zero-padded LE 32-bit words. */
interface FieldBytes {
  bytes: Uint8Array;
  start: Int32Array;
  words: Int32Array;
  wordStart: Int32Array;
  longest: number;
}

/** Prepared field bytes per dictionary array (a decoder's code book serves every batch). */
const prepared = new WeakMap<readonly string[], FieldBytes>();

function fieldBytes(dict: readonly string[]): FieldBytes {
  let p = prepared.get(dict);
  if (p === undefined) {
    const fields = dict.map(csvField);
    const start = new Int32Array(fields.length + 1);
    for (let i = 0; i < fields.length; i++) start[i + 1] = start[i] + Buffer.byteLength(fields[i], "utf8");
    const bytes = Buffer.allocUnsafe(start[fields.length]);
    for (let i = 0; i < fields.length; i++) bytes.write(fields[i], start[i], "utf8");
    const wordStart = new Int32Array(fields.length + 1);
    for (let i = 0; i < fields.length; i++) wordStart[i + 1] = wordStart[i] + ((start[i + 1] - start[i] + 3) >> 2);
    const padded = new Uint8Array(4 * wordStart[fields.length]);
    for (let i = 0; i < fields.length; i++) padded.set(bytes.subarray(start[i], start[i + 1]), 4 * wordStart[i]);
    const words = new Int32Array(padded.length >> 2);
    const view = new DataView(padded.buffer);
    for (let w = 0; w < words.length; w++) words[w] = view.getInt32(4 * w, true);
    let longest = 0;
    for (let i = 0; i < fields.length; i++) longest = Math.max(longest, start[i + 1] - start[i]);
    p = { bytes, start, words, wordStart, longest };
    prepared.set(dict, p);
  }
  return p;
}

/** The digits of 0..9999, four bytes each, zero-padded on the left ("0007"). */
const DIGITS4 = (() => {
  const t = new Uint8Array(40000);
  for (let x = 0; x < 10000; x++) for (let k = 3, y = x; k >= 0; k--, y = Math.floor(y / 10)) t[4 * x + k] = 0x30 + (y % 10);
  return t;
})();

/** Writes the decimal digits of safe integer `x` at `p`; returns the position after them. */
function writeInteger(buf: Uint8Array, p: number, x: number): number {
  if (x < 0) {
    buf[p++] = MINUS;
    x = -x;
  }
  if (x < 10000) return writeSmall(buf, p, x);
  if (x < 100000000) {
      // Below 10^8: the high part's digits, then the low four, zero-padded.
    const hi = Math.floor(x / 10000);
    const lo = 4 * (x - hi * 10000);
    p = writeSmall(buf, p, hi);
    buf[p] = DIGITS4[lo];
    buf[p + 1] = DIGITS4[lo + 1];
    buf[p + 2] = DIGITS4[lo + 2];
    buf[p + 3] = DIGITS4[lo + 3];
    return p + 4;
  }
  // 10^8 and beyond: the digits from the right, then moved to `p`.
  let end = p + 16;
  let w = end;
  do {
    const q = Math.floor(x / 10);
    buf[--w] = 0x30 + (x - q * 10);
    x = q;
  } while (x > 0);
  buf.copyWithin(p, w, end);
  return p + end - w;
}

/** Writes the digits of `x` in [0, 10000) at `p`; returns the position after them. */
function writeSmall(buf: Uint8Array, p: number, x: number): number {
  const n = x < 10 ? 1 : x < 100 ? 2 : x < 1000 ? 3 : 4;
  for (let k = 4 * x + 4 - n, e = 4 * x + 4; k < e; k++) buf[p++] = DIGITS4[k];
  return p;
}

/** Integer columns spanning at most this many values (per batch) are written as a code book. */
const SMALL_INT_SPAN = 4096;

/** The texts of lo..hi, then "" (a blank), per span: the same array, so `fieldBytes` caches it. */
const spanTexts = new Map<string, string[]>();

function textsOfSpan(lo: number, hi: number): string[] {
  const key = `${lo},${hi}`;
  let texts = spanTexts.get(key);
  if (texts === undefined) {
    texts = Array.from({ length: hi - lo + 2 }, (_, i) => (i <= hi - lo ? String(lo + i) : ""));
    if (spanTexts.size >= 64) spanTexts.clear();
    spanTexts.set(key, texts);
  }
  return texts;
}

/** Least and greatest non-blank value; undefined if one is not a safe integer (blanks unread). */
function integerSpan(values: Float64Array, blank: Uint8Array | undefined): [number, number] | undefined {
  let lo = Infinity;
  let hi = -Infinity;
  for (let r = 0; r < values.length; r++) {
    if (blank !== undefined && blank[r] === 1) continue;
    const x = values[r];
    if (!Number.isSafeInteger(x)) return undefined;
    if (x < lo) lo = x;
    if (x > hi) hi = x;
  }
  return lo <= hi ? [lo, hi] : [0, 0];
}

/** Per row, its entry of `textsOfSpan(lo, hi)`: `values[r] - lo`, or the last for a blank. */
function spanIndex(values: Float64Array, blank: Uint8Array | undefined, lo: number, blankEntry: number, index: Int32Array): void {
  for (let r = 0; r < values.length; r++) index[r] = blank !== undefined && blank[r] === 1 ? blankEntry : values[r] - lo;
}

/** How each column is written: a code book's words, an integer's digits, or a string per cell. */
const WORDS = 0;
const DIGITS = 1;
const TEXT = 2;

/** A batch's columns as the row loop reads them: per column its kind and that kind's arrays. */
interface RowLayout {
  n: number;
  kind: Int32Array;
  index: (Int32Array | null)[];
  start: (Int32Array | null)[];
  words: (Int32Array | null)[];
  wordStart: (Int32Array | null)[];
  values: (Float64Array | null)[];
  blank: (Uint8Array | null)[];
  fields: (string[] | null)[];
  /** Most bytes of one row: each column's longest field and separator, plus 3 for padded words. */
  rowBound: number;
  /** Most bytes of all rows, plus {@link rowBound} (room `writeRows` asks past the last row). */
  totalBound: number;
}

/** Most bytes of a safe integer's digits with its sign. */
const INTEGER_BYTES = 17;

function layoutOf(batch: DecodedBatch, into: CsvBuffers | undefined): RowLayout {
  const n = batch.length;
  const m = batch.cells.length;
  const out: RowLayout = {
    n,
    kind: new Int32Array(m),
    index: new Array(m).fill(null),
    start: new Array(m).fill(null),
    words: new Array(m).fill(null),
    wordStart: new Array(m).fill(null),
    values: new Array(m).fill(null),
    blank: new Array(m).fill(null),
    fields: new Array(m).fill(null),
    rowBound: m + 3,
    totalBound: 0,
  };
  const asWords = (f: number, dict: readonly string[], index: Int32Array): void => {
    const fb = fieldBytes(dict);
    out.kind[f] = WORDS;
    out.index[f] = index;
    out.start[f] = fb.start;
    out.words[f] = fb.words;
    out.wordStart[f] = fb.wordStart;
    out.rowBound += fb.longest;
  };
  batch.cells.forEach((col: DecodedColumn, f) => {
    if (col.kind === "dict") return asWords(f, col.dict, col.index);
    const span = col.kind === "int" ? integerSpan(col.values, col.blank) : undefined;
    if (col.kind === "int" && span !== undefined && span[1] - span[0] < SMALL_INT_SPAN) {
      const [lo, hi] = span;
      const index = into !== undefined ? into.takeIndex(f, n) : new Int32Array(n);
      spanIndex(col.values, col.blank, lo, hi - lo + 1, index);
      return asWords(f, textsOfSpan(lo, hi), index);
    }
    if (col.kind === "int" && span !== undefined) {
      out.kind[f] = DIGITS;
      out.values[f] = col.values;
      out.blank[f] = col.blank ?? null;
      out.rowBound += INTEGER_BYTES;
      return;
    }
    // One string per cell: text columns, and integers beyond 2^53.
    const fields: string[] = new Array(n);
    let longest = 0;
    for (let r = 0; r < n; r++) {
      const text = col.kind === "text" ? col.cells[r] : col.blank !== undefined && col.blank[r] === 1 ? "" : String(col.values[r]);
      fields[r] = csvField(text);
      longest = Math.max(longest, fields[r].length);
    }
    out.kind[f] = TEXT;
    out.fields[f] = fields;
    out.rowBound += 3 * longest; // UTF-8: at most 3 bytes per UTF-16 code unit
    let total = 0;
    for (const field of fields) total += 3 * field.length;
    out.totalBound += total - 3 * longest * n; // the text's own bytes, not n times its longest (added below)
  });
  out.totalBound += n * out.rowBound + out.rowBound;
  return out;
}

/** Writes rows from r at `buf[0..]` while a widest row fits; returns the next row and the bytes. */
function writeRows(layout: RowLayout, buf: Buffer, view: DataView, r: number): [number, number] {
  const { n, kind, index, start, words, wordStart, values, blank, fields, rowBound } = layout;
  const m = kind.length;
  const limit = buf.length - rowBound;
  let p = 0;
  for (; r < n && p <= limit; r++) {
    for (let f = 0; f < m; f++) {
      const k = kind[f];
      if (k === WORDS) {
        const i = index[f]![r];
        const st = start[f]!;
        const ws = wordStart[f]!;
        const wd = words[f]!;
        // The entry's padded words: up to 3 bytes past its end, which the separator and the
        // bytes after it overwrite (the bound leaves 3 bytes after the last row).
        for (let w = ws[i], e = ws[i + 1], q = p; w < e; w++, q += 4) view.setInt32(q, wd[w], true);
        p += st[i + 1] - st[i];
      } else if (k === DIGITS) {
        const b = blank[f];
        if (b === null || b[r] === 0) p = writeInteger(buf, p, values[f]![r]);
      } else p += buf.write(fields[f]![r], p, "utf8");
      buf[p++] = f === m - 1 ? NEWLINE : COMMA;
    }
  }
  return [r, p];
}

/** The most bytes {@link csvChunks} puts in one chunk (small enough to stay in the CPU's cache). */
const CHUNK_BYTES = 1 << 20;

/**
 * Memory that {@link csvRecords} and {@link csvChunks} reuse batch after batch (fresh memory costs
 * a page fault per 4 KB on first touch): the output bytes and small-span integer indices. Bytes
 * returned with it are valid until the next call with the same buffers, so only a caller done with
 * them (written to a file and the write awaited) may pass the buffers again.
 */
export class CsvBuffers {
  private bytes = Buffer.alloc(0);
  /** Per column, code-book indices of a small-span integer column. */
  private readonly indices: Int32Array[] = [];

  /** At least `size` bytes (a quarter more, so a slightly larger batch does not reallocate). */
  take(size: number): Buffer {
    if (this.bytes.length < size) this.bytes = Buffer.allocUnsafe(size + (size >> 2));
    return this.bytes;
  }

  /** Per column, a text column's UTF-8 fields and their offsets (the native writer's entries). */
  private readonly texts: Buffer[] = [];
  private readonly starts: Int32Array[] = [];

  takeIndex(f: number, n: number): Int32Array {
    if ((this.indices[f]?.length ?? 0) < n) this.indices[f] = new Int32Array(n + (n >> 2));
    return this.indices[f].subarray(0, n);
  }

  takeText(f: number, size: number): Buffer {
    if ((this.texts[f]?.length ?? 0) < size) this.texts[f] = Buffer.allocUnsafe(size + (size >> 2));
    return this.texts[f];
  }

  takeStart(f: number, n: number): Int32Array {
    if ((this.starts[f]?.length ?? 0) < n) this.starts[f] = new Int32Array(n + (n >> 2));
    return this.starts[f].subarray(0, n);
  }
}

/** The row loop: `native` (the addon's `csvRows`) or `js` ({@link writeRows}); same bytes. */
export type CsvRowLoop = "native" | "js";

/** The default row loop: `native` where the addon is loaded. */
export function defaultCsvRowLoop(): CsvRowLoop {
  return nativeLoops().csvRows !== undefined ? "native" : "js";
}

/** A batch's columns as the native row loop reads them: ready-made fields or integers. */
interface EntryLayout {
  entries: Uint8Array;
  index: (Int32Array | null)[];
  bytes: (Uint8Array | null)[];
  start: (Int32Array | null)[];
  values: (Float64Array | null)[];
  blank: (Uint8Array | null)[];
  /** Per column, its longest field in bytes (integers: {@link INTEGER_BYTES}). */
  longest: Int32Array;
}

/** The CSV fields of `text(r)`, r < n, in UTF-8: field r is `bytes[start[r] .. start[r + 1])`. */
function encodeFields(n: number, text: (r: number) => string, into: CsvBuffers | undefined, f: number): { bytes: Buffer; start: Int32Array; longest: number } {
  const start = into !== undefined ? into.takeStart(f, n + 1) : new Int32Array(n + 1);
  let bytes = into !== undefined ? into.takeText(f, 16 * n) : Buffer.allocUnsafe(16 * n);
  let p = 0;
  let longest = 0;
  start[0] = 0;
  for (let r = 0; r < n; r++) {
    const field = csvField(text(r));
    const most = 3 * field.length; // UTF-8: at most 3 bytes per UTF-16 code unit
    if (p + most > bytes.length) {
      const grown = into !== undefined ? into.takeText(f, 2 * (p + most)) : Buffer.allocUnsafe(2 * (p + most));
      if (grown !== bytes) bytes.copy(grown, 0, 0, p);
      bytes = grown;
    }
    const w = bytes.write(field, p, "utf8");
    p += w;
    start[r + 1] = p;
    if (w > longest) longest = w;
  }
  return { bytes, start, longest };
}

function entryLayoutOf(batch: DecodedBatch, into: CsvBuffers | undefined): EntryLayout {
  const m = batch.cells.length;
  const out: EntryLayout = {
    entries: new Uint8Array(m),
    index: new Array(m).fill(null),
    bytes: new Array(m).fill(null),
    start: new Array(m).fill(null),
    values: new Array(m).fill(null),
    blank: new Array(m).fill(null),
    longest: new Int32Array(m),
  };
  batch.cells.forEach((col: DecodedColumn, f) => {
    if (col.kind === "dict") {
      const fb = fieldBytes(col.dict);
      out.entries[f] = 1;
      out.index[f] = col.index;
      out.bytes[f] = fb.bytes;
      out.start[f] = fb.start;
      out.longest[f] = fb.longest;
    } else if (col.kind === "int") {
      out.values[f] = col.values;
      out.blank[f] = col.blank ?? null;
      out.longest[f] = INTEGER_BYTES;
    } else asText(out, batch, f, into);
  });
  return out;
}

/** Makes column f of `layout` encoded text fields (text columns, integers beyond 2^53). */
function asText(layout: EntryLayout, batch: DecodedBatch, f: number, into: CsvBuffers | undefined): void {
  const col = batch.cells[f];
  const text =
    col.kind === "text"
      ? (r: number) => col.cells[r]
      : col.kind === "int"
        ? (r: number) => (col.blank !== undefined && col.blank[r] === 1 ? "" : String(col.values[r]))
        : (r: number) => col.dict[col.index[r]];
  const { bytes, start, longest } = encodeFields(batch.length, text, into, f);
  layout.entries[f] = 1;
  layout.index[f] = null;
  layout.bytes[f] = bytes;
  layout.start[f] = start;
  layout.values[f] = null;
  layout.blank[f] = null;
  layout.longest[f] = longest;
}

/** The most bytes all `n` records of `layout` take, separators included. */
function totalBound(layout: EntryLayout, n: number): number {
  let b = n * layout.longest.length;
  layout.longest.forEach((longest, f) => {
    const start = layout.start[f];
    b += layout.entries[f] === 1 && layout.index[f] === null && start !== null ? start[n] : n * longest;
  });
  return b;
}

/** The most bytes one record of `layout` takes: its fields and separators. */
function recordBound(layout: EntryLayout): number {
  let b = layout.longest.length;
  for (const x of layout.longest) b += x;
  return b;
}

/**
 * Writes records from row `from` with the native loop while a whole record fits, turning an integer
 * column beyond 2^53 into text on the way; returns the next row and the bytes written.
 */
function nativeRowsInto(rows: CsvRowsFn, layout: EntryLayout, batch: DecodedBatch, into: CsvBuffers | undefined, buf: Buffer, from: number): [number, number] {
  for (;;) {
    const [next, bytes, bad] = rows(layout.entries, layout.index, layout.bytes, layout.start, layout.values, layout.blank, batch.length, from, buf);
    if (bad >= 0 && next === from) asText(layout, batch, bad, into);
    else return [next, bytes];
  }
}

/** A batch's records as either loop writes them. */
interface RowWriter {
  /** The most bytes one record takes (and the room the loop asks for). */
  record(): number;
  /** The most bytes all records take, with the room the loop asks for past the last one. */
  total(): number;
  /** Writes records from row `from` while they fit; returns the next row and the bytes written. */
  write(buf: Buffer, from: number): [number, number];
}

function rowWriter(batch: DecodedBatch, into: CsvBuffers | undefined, loop: CsvRowLoop): RowWriter {
  const rows = loop === "native" ? nativeLoops().csvRows : undefined;
  if (rows !== undefined) {
    const layout = entryLayoutOf(batch, into);
    return {
      record: () => recordBound(layout),
      total: () => totalBound(layout, batch.length),
      write: (buf, from) => nativeRowsInto(rows, layout, batch, into, buf, from),
    };
  }
  const layout = layoutOf(batch, into);
  return {
    record: () => layout.rowBound,
    total: () => layout.totalBound,
    write: (buf, from) => writeRows(layout, buf, new DataView(buf.buffer, buf.byteOffset, buf.byteLength), from),
  };
}

/**
 * The CSV records of `batch` (no header), each ending in `\n`, as one buffer (empty for no rows).
 * @param into memory to write in ({@link CsvBuffers}); the result is then a view of it, valid until
 *   the next call with it. Without it, fresh memory the caller owns.
 * @param loop the row loop ({@link CsvRowLoop}).
 */
export function csvRecords(batch: DecodedBatch, into?: CsvBuffers, loop: CsvRowLoop = defaultCsvRowLoop()): Buffer {
  const n = batch.length;
  if (n === 0) return Buffer.alloc(0);
  if (batch.cells.length === 0) return Buffer.alloc(n, NEWLINE);
  const w = rowWriter(batch, into, loop);
  let buf: Buffer = Buffer.alloc(0);
  let end = 0;
  for (let r = 0; r < n; ) {
    // Room for every record: one call writes them all, unless an integer column turns into text on
    // the way (its bound grows); the next call writes the rest.
    if (buf.length < w.total()) {
      const grown = into !== undefined ? into.take(w.total()) : Buffer.allocUnsafe(w.total());
      if (grown !== buf) buf.copy(grown, 0, 0, end);
      buf = grown;
    }
    const [next, bytes] = w.write(buf.subarray(end), r);
    r = next;
    end += bytes;
  }
  return buf.subarray(0, end);
}

/**
 * {@link csvRecords} in chunks of about 1 MiB (or two records, where longer) in the same memory of
 * `into`: each chunk must be read (written out, the write awaited) before the next is asked for.
 * @returns the chunks in order; together `csvRecords(batch)`'s bytes.
 */
export function* csvChunks(batch: DecodedBatch, into: CsvBuffers, loop: CsvRowLoop = defaultCsvRowLoop()): Generator<Buffer> {
  const n = batch.length;
  if (n === 0) return;
  if (batch.cells.length === 0) {
    yield Buffer.alloc(n, NEWLINE);
    return;
  }
  const w = rowWriter(batch, into, loop);
  for (let r = 0; r < n; ) {
    const size = Math.max(CHUNK_BYTES, 2 * w.record());
    const buf = into.take(size).subarray(0, size);
    const [next, end] = w.write(buf, r);
    if (end > 0) yield buf.subarray(0, end);
    r = next; // no rows only where a column turned into text and its record did not fit: the next size fits it
  }
}
