/**
 * The CSV writer of decoded batches (`./batch`): the bytes csv-stringify writes with the options of
 * `./csv`'s `writeCsv` (header line, `,` between fields, `\n` after every record, RFC 4180
 * quoting), built straight into one buffer per batch (issue 25).
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

/** A dictionary's entries as CSV fields in UTF-8: entry i is `bytes[start[i] .. start[i + 1])`. */
interface FieldBytes {
  bytes: Uint8Array;
  start: Int32Array;
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
    p = { bytes, start };
    prepared.set(dict, p);
  }
  return p;
}

/** Number of characters of the decimal integer `x` (a safe integer; sign included). */
function digitCount(x: number): number {
  let n = 1;
  if (x < 0) {
    n = 2;
    x = -x;
  }
  while (x >= 10) {
    x = Math.floor(x / 10);
    n++;
  }
  return n;
}

/** How one column is written: its cells' lengths, and its cells' bytes. */
interface ColumnPlan {
  /** Adds the byte length of each row's field to `lens`. */
  measure(lens: Int32Array): void;
  /**
   * Writes the field of every row r in [r0, r1) at `pos[r]`, then the byte `sep` after it, and
   * moves `pos[r]` past both.
   */
  write(buf: Buffer, pos: Int32Array, r0: number, r1: number, sep: number): void;
}

/** Writes the decimal digits of safe integer `x` at `p`; returns the position after them. */
function writeInteger(buf: Buffer, p: number, x: number): number {
  if (x < 0) {
    buf[p++] = MINUS;
    x = -x;
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

function planOf(col: DecodedColumn, n: number): ColumnPlan {
  if (col.kind === "dict") {
    const { bytes, start } = fieldBytes(col.dict);
    const index = col.index;
    return {
      measure(lens) {
        for (let r = 0; r < n; r++) {
          const i = index[r];
          lens[r] += start[i + 1] - start[i];
        }
      },
      write(buf, pos, r0, r1, sep) {
        for (let r = r0; r < r1; r++) {
          const i = index[r];
          let p = pos[r];
          for (let b = start[i], e = start[i + 1]; b < e; b++) buf[p++] = bytes[b];
          buf[p++] = sep;
          pos[r] = p;
        }
      },
    };
  }
  if (col.kind === "int" && col.values.every((x) => Number.isSafeInteger(x))) {
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

/** Rows written column by column at a time: a block's bytes (about 100 KB for Adult) stay in cache between columns. */
const BLOCK_ROWS = 1024;

/**
 * The CSV records of `batch` (no header), each ending in `\n`, as one buffer: the lengths added
 * up column by column, then the rows written front to back.
 * @returns the bytes; empty for a batch of no rows.
 */
export function csvRecords(batch: DecodedBatch): Buffer {
  const n = batch.length;
  const m = batch.cells.length;
  if (n === 0) return Buffer.alloc(0);
  if (m === 0) return Buffer.alloc(n, NEWLINE);
  const plans = batch.cells.map((c) => planOf(c, n));
  // Each row: its fields, m - 1 commas and a newline.
  const lens = new Int32Array(n).fill(m);
  for (const p of plans) p.measure(lens);
  // Where each row starts (then: where its next field goes).
  const pos = lens;
  let total = 0;
  for (let r = 0; r < n; r++) {
    const len = lens[r];
    pos[r] = total;
    total += len;
  }
  const buf = Buffer.allocUnsafe(total);
  for (let r0 = 0; r0 < n; r0 += BLOCK_ROWS) {
    const r1 = Math.min(n, r0 + BLOCK_ROWS);
    for (let f = 0; f < m; f++) plans[f].write(buf, pos, r0, r1, f === m - 1 ? NEWLINE : COMMA);
  }
  return buf;
}
