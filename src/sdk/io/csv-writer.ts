/**
 * The CSV writer of decoded batches (`./batch`): the bytes csv-stringify writes with the options of
 * `./csv`'s `writeCsv` (header line, `,` between fields, `\n` after every record, RFC 4180
 * quoting), built straight into one buffer per batch, with no string per cell
 * of a code-book or integer column (`docs/decisions.md` "Decoded batches by column").
 *
 * Quoting, as csv-stringify 6.6 does with those options (`stringify` in its `index.cjs`): a field
 * is written in double quotes, its quotes doubled, when it holds a `"`, a `,` or a `\n`; any other
 * field (a lone `\r` included) is written as is; an empty field is empty.
 *
 * Why not csv-stringify: it costs about 1.5-2.5 core-seconds per 1M rows of Adult, one string
 * concatenation and one regular-expression test per cell (docs/formats.md, "Writers"). Here a
 * code-book column's entries are quoted and encoded to UTF-8 once per dictionary, an integer
 * column's digits are written from the number, and the rows are laid out column by column: one
 * pass adds up each row's length, then, a block of rows at a time, each column's bytes are copied
 * to their place in every row of the block (one tight loop per column, no call per cell).
 * `test/csv-writer.test.ts` checks the bytes against csv-stringify's on awkward text.
 */
import type { DecodedBatch, DecodedColumn } from "../generate/batch";

const QUOTE_NEEDED = /[",\n]/;
const QUOTES = /"/g;
const COMMA = 0x2c;
const NEWLINE = 0x0a;
const MINUS = 0x2d;

/** The field csv-stringify writes for text `v` (see the module comment). */
export function csvField(v: string): string {
  return QUOTE_NEEDED.test(v) ? `"${v.replace(QUOTES, '""')}"` : v;
}

/** The header line (with its `\n`) of `columns`. */
export function csvHeader(columns: readonly string[]): Buffer {
  return Buffer.from(`${columns.map(csvField).join(",")}\n`, "utf8");
}

/**
 * A dictionary's entries as CSV fields in UTF-8: entry i is `bytes[start[i] .. start[i + 1])`;
 * the same bytes as little-endian 32-bit words, entry i from word `wordStart[i]`, its last word
 * padded with zeros.
 */
interface FieldBytes {
  bytes: Uint8Array;
  start: Int32Array;
  words: Int32Array;
  wordStart: Int32Array;
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
    p = { bytes, start, words, wordStart };
    prepared.set(dict, p);
  }
  return p;
}

/** Number of characters of the decimal integer `x` (a safe integer; sign included). */
function digitCount(x: number): number {
  if (x < 0) return 1 + digitCount(-x);
  if (x < 10000) return x < 10 ? 1 : x < 100 ? 2 : x < 1000 ? 3 : 4;
  if (x < 100000000) return x < 100000 ? 5 : x < 1000000 ? 6 : x < 10000000 ? 7 : 8;
  let n = 9;
  x = Math.floor(x / 100000000);
  while (x >= 10) {
    x = Math.floor(x / 10);
    n++;
  }
  return n;
}

/** The digits of 0..9999, four bytes each, zero-padded on the left ("0007"). */
const DIGITS4 = (() => {
  const t = new Uint8Array(40000);
  for (let x = 0; x < 10000; x++) for (let k = 3, y = x; k >= 0; k--, y = Math.floor(y / 10)) t[4 * x + k] = 0x30 + (y % 10);
  return t;
})();

/** How one column is written: its cells' lengths, and its cells' bytes. */
interface ColumnPlan {
  /** Adds the byte length of each row's field to `lens`. */
  measure(lens: Int32Array): void;
  /**
   * Writes the field of every row r in [r0, r1) at `pos[r]`, then the byte `sep` after it, and
   * moves `pos[r]` past both. With `view` (a DataView of `buf`), it may also write up to 3 bytes
   * after the separator: the caller gives it only where the row's later fields and separators
   * (written after this column) cover at least those bytes.
   */
  write(buf: Buffer, pos: Int32Array, r0: number, r1: number, sep: number, view: DataView | undefined): void;
}

/** Writes the decimal digits of safe integer `x` at `p`; returns the position after them. */
function writeInteger(buf: Buffer, p: number, x: number): number {
  if (x < 0) {
    buf[p++] = MINUS;
    x = -x;
  }
  if (x < 10000) return writeSmall(buf, p, x);
  if (x < 100000000) {
    // Below 10^8: the high part's digits, then the low four, zero-padded (from DIGITS4).
    const hi = Math.floor(x / 10000);
    const lo = 4 * (x - hi * 10000);
    p = writeSmall(buf, p, hi);
    buf[p] = DIGITS4[lo];
    buf[p + 1] = DIGITS4[lo + 1];
    buf[p + 2] = DIGITS4[lo + 2];
    buf[p + 3] = DIGITS4[lo + 3];
    return p + 4;
  }
  const end = p + digitCount(x);
  let w = end;
  do {
    const q = Math.floor(x / 10);
    buf[--w] = 0x30 + (x - q * 10);
    x = q;
  } while (x > 0);
  return end;
}

/** Writes the digits of `x` in [0, 10000) at `p` (DIGITS4 without its leading zeros); returns the position after them. */
function writeSmall(buf: Buffer, p: number, x: number): number {
  const n = x < 10 ? 1 : x < 100 ? 2 : x < 1000 ? 3 : 4;
  for (let k = 4 * x + 4 - n, e = 4 * x + 4; k < e; k++) buf[p++] = DIGITS4[k];
  return p;
}

/** A code-book column's fields of rows [r0, r1), byte by byte (see `ColumnPlan.write`). */
function writeBytes(buf: Buffer, pos: Int32Array, r0: number, r1: number, sep: number, index: Int32Array, start: Int32Array, bytes: Uint8Array): void {
  for (let r = r0; r < r1; r++) {
    const i = index[r];
    let p = pos[r];
    for (let b = start[i], e = start[i + 1]; b < e; b++) buf[p++] = bytes[b];
    buf[p++] = sep;
    pos[r] = p;
  }
}

/**
 * {@link writeBytes} four bytes at a time: each field's padded words (`FieldBytes.words`), then the
 * separator over the first padding byte; the other padding bytes land on what the caller writes
 * after (see `ColumnPlan.write`).
 */
function writeWords(
  view: DataView,
  buf: Buffer,
  pos: Int32Array,
  r0: number,
  r1: number,
  sep: number,
  index: Int32Array,
  start: Int32Array,
  words: Int32Array,
  wordStart: Int32Array,
): void {
  for (let r = r0; r < r1; r++) {
    const i = index[r];
    const p = pos[r];
    for (let w = wordStart[i], e = wordStart[i + 1], q = p; w < e; w++, q += 4) view.setInt32(q, words[w], true);
    const end = p + start[i + 1] - start[i];
    buf[end] = sep;
    pos[r] = end + 1;
  }
}

/**
 * Integer columns whose values span at most this many integers are written as a code book of
 * their texts (`dictPlan`): four bytes at a time from prepared words instead of digit by digit.
 * Adult's age, hours per week and capital loss qualify (74, 99 and 4,357 values); fnlwgt and
 * capital gain do not.
 */
const SMALL_INT_SPAN = 4096;

/** The texts of the integers lo..hi, then "" (a blank), per span (the same array each time, so `fieldBytes` keeps its bytes). */
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

/** The least and greatest of the non-blank safe integers of `values`, or undefined when one is not a safe integer (a loop, not `every`'s call per value). */
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

/** Per row, the entry of `textsOfSpan(lo, hi)` its cell is: `values[r] - lo`, or the last entry for a blank. */
function spanIndex(values: Float64Array, blank: Uint8Array | undefined, lo: number, blankEntry: number, index: Int32Array): void {
  for (let r = 0; r < values.length; r++) index[r] = blank !== undefined && blank[r] === 1 ? blankEntry : values[r] - lo;
}

function planOf(col: DecodedColumn, n: number, into: CsvBuffers | undefined, f: number): ColumnPlan {
  if (col.kind === "dict") return dictPlan(col.dict, col.index, n);
  const span = col.kind === "int" ? integerSpan(col.values, col.blank) : undefined;
  if (col.kind === "int" && span !== undefined && span[1] - span[0] < SMALL_INT_SPAN) {
    const [lo, hi] = span;
    const index = into !== undefined ? into.takeIndex(f, n) : new Int32Array(n);
    spanIndex(col.values, col.blank, lo, hi - lo + 1, index);
    return dictPlan(textsOfSpan(lo, hi), index, n);
  }
  if (col.kind === "int" && span !== undefined) {
    const { values, blank } = col;
    return {
      measure(lens) {
        for (let r = 0; r < n; r++) if (blank === undefined || blank[r] === 0) lens[r] += digitCount(values[r]);
      },
      write(buf, pos, r0, r1, sep) {
        for (let r = r0; r < r1; r++) {
          let p = pos[r];
          if (blank === undefined || blank[r] === 0) p = writeInteger(buf, p, values[r]);
          buf[p++] = sep;
          pos[r] = p;
        }
      },
    };
  }
  // One string per cell: text columns, and integers beyond 2^53 (written as String writes them).
  const fields: string[] = new Array(n);
  for (let r = 0; r < n; r++) {
    const text = col.kind === "text" ? col.cells[r] : col.blank !== undefined && col.blank[r] === 1 ? "" : String(col.values[r]);
    fields[r] = csvField(text);
  }
  return {
    measure(lens) {
      for (let r = 0; r < n; r++) lens[r] += Buffer.byteLength(fields[r], "utf8");
    },
    write(buf, pos, r0, r1, sep) {
      for (let r = r0; r < r1; r++) {
        let p = pos[r];
        p += buf.write(fields[r], p, "utf8");
        buf[p++] = sep;
        pos[r] = p;
      }
    },
  };
}

/** A code-book column: row r's field is entry `index[r]` of `dict`, its bytes prepared once per dictionary. */
function dictPlan(dict: readonly string[], index: Int32Array, n: number): ColumnPlan {
  {
    const { bytes, start, words, wordStart } = fieldBytes(dict);
    return {
      measure(lens) {
        for (let r = 0; r < n; r++) {
          const i = index[r];
          lens[r] += start[i + 1] - start[i];
        }
      },
      write(buf, pos, r0, r1, sep, view) {
        if (view !== undefined) writeWords(view, buf, pos, r0, r1, sep, index, start, words, wordStart);
        else writeBytes(buf, pos, r0, r1, sep, index, start, bytes);
      },
    };
  }
}

/** Rows written column by column at a time: a block's bytes (about 100 KB for Adult) stay in cache between columns. */
const BLOCK_ROWS = 1024;

/**
 * Memory that {@link csvRecords} writes batch after batch, kept between batches: a batch's bytes
 * (about 9 MB per 100,000 Adult rows) and its row offsets. Fresh memory costs a page fault per
 * 4 KB on its first touch (about 0.25 core-s per 1M Adult rows on our machines, docs/formats.md
 * "Seventh round"); reused memory costs none. The bytes a call returns are valid until the next
 * call with the same buffers, so only a caller that is done with them (written to a file and the
 * write awaited) may pass the buffers again.
 */
export class CsvBuffers {
  private bytes = Buffer.alloc(0);
  private offsets = new Int32Array(0);

  /** A buffer of at least `size` bytes (grown by a quarter beyond it, so a slightly larger batch does not reallocate). */
  take(size: number): Buffer {
    if (this.bytes.length < size) this.bytes = Buffer.allocUnsafe(size + (size >> 2));
    return this.bytes;
  }

  /** Per column, code-book indices of a small-span integer column (`SMALL_INT_SPAN`). */
  private readonly indices: Int32Array[] = [];

  /** Column f's index array: `n` entries to be overwritten. */
  takeIndex(f: number, n: number): Int32Array {
    if ((this.indices[f]?.length ?? 0) < n) this.indices[f] = new Int32Array(n + (n >> 2));
    return this.indices[f].subarray(0, n);
  }

  /** An Int32Array of at least `n` entries, first `n` set to `fill`. */
  takeOffsets(n: number, fill: number): Int32Array {
    if (this.offsets.length < n) this.offsets = new Int32Array(n + (n >> 2));
    return this.offsets.fill(fill, 0, n);
  }
}

/**
 * The CSV records of `batch` (no header), each ending in `\n`, as one buffer: the lengths added
 * up column by column, then the rows written front to back.
 * @param into memory to write in (see {@link CsvBuffers}); without it, fresh memory the caller owns.
 * @returns the bytes; empty for a batch of no rows. With `into`, a view of its memory, valid until
 *   the next call with it.
 */
export function csvRecords(batch: DecodedBatch, into?: CsvBuffers): Buffer {
  const n = batch.length;
  const m = batch.cells.length;
  if (n === 0) return Buffer.alloc(0);
  if (m === 0) return Buffer.alloc(n, NEWLINE);
  const plans = batch.cells.map((c, f) => planOf(c, n, into, f));
  // Each row: its fields, m - 1 commas and a newline.
  const lens = into !== undefined ? into.takeOffsets(n, m) : new Int32Array(n).fill(m);
  for (const p of plans) p.measure(lens);
  // Where each row starts (then: where its next field goes).
  const pos = lens;
  let total = 0;
  for (let r = 0; r < n; r++) {
    const len = lens[r];
    pos[r] = total;
    total += len;
  }
  const buf = into !== undefined ? into.take(total).subarray(0, total) : Buffer.allocUnsafe(total);
  // Columns with at least 3 more separators after them in every row (their own comma, the later
  // ones and the newline) may write 3 bytes past their field: the later columns of the row,
  // written after them, cover those bytes.
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  for (let r0 = 0; r0 < n; r0 += BLOCK_ROWS) {
    const r1 = Math.min(n, r0 + BLOCK_ROWS);
    for (let f = 0; f < m; f++) plans[f].write(buf, pos, r0, r1, f === m - 1 ? NEWLINE : COMMA, f <= m - 3 ? view : undefined);
  }
  return buf;
}
