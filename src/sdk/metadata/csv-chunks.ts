/**
 * One byte range of a UTF-8 CSV file, read by a worker thread of extraction (`./table-tally`):
 * records parsed from bytes (RFC 4180 quoting), fields trimmed and counted in a byte-keyed hash
 * table, never a string per cell. It follows `../io/csv`'s rules (csv-parse, then trim) on the
 * records it accepts and {@link Bail}s on anything else (a ragged record, a quote inside an
 * unquoted field, a stray CR, bytes that are not UTF-8): the caller then reads the file with
 * `../io/csv`, which gives the exact result or error.
 */
import { closeSync, openSync, readSync } from "node:fs";
import { isUtf8 } from "node:buffer";
import { addMoment, emptyMoments, encoderOf, Overflow, type Moments, type OverflowStats, type ValueEncoder } from "./distinct-values";
import { DISTINCT_BYTES } from "./distinct-values";

/** The range cannot be read here; `message` says why (the caller falls back to one reader). */
export class Bail extends Error {}

/** What every pass over a range is given. */
export interface ChunkJob {
  path: string;
  /** Byte offsets [start, end): start is a record's first byte. */
  start: number;
  end: number;
  /** The delimiter's byte. */
  delimiter: number;
  /** Fields per record (the header's). */
  columns: number;
  /** Records end with CR LF (as the header does); else with LF. */
  crlf: boolean;
  /** Each record joined with in-memory rows before it is counted (`../io/record-join`). */
  join?: ChunkJoin;
}

/**
 * `../io/record-join`'s join by field positions: a record becomes its `keep` fields, then per
 * lookup the cells of the row whose key equals its `field`'s (trimmed) bytes, blanks when none.
 */
export interface ChunkJoin {
  keep: number[];
  /** Per lookup: the key field, the keys, and per key its `width` cells. */
  lookups: { field: number; keys: string[]; cells: string[][]; width: number }[];
}

/** Fields per record a pass counts: the joined record's, else the file's. */
export function recordWidth(job: ChunkJob): number {
  return job.join === undefined ? job.columns : job.join.keep.length + job.join.lookups.reduce((s, l) => s + l.width, 0);
}

/** Pass 1 of a range: distinct values with counts, and the rows of the ranked sample. */
export interface TallyJob extends ChunkJob {
  /** Rows the sample keeps (bottom-k by {@link sampleRank} of each record's line). */
  sampleRows: number;
  /** The file's line number of the range's first line ({@link countLines} of the ranges before). */
  firstLine: number;
  /** Distinct values a column keeps before it overflows (`./distinct-values`). */
  distinctBudget: number;
}

/** Result of {@link tallyRange}. */
export interface RangeTally {
  rows: number;
  /** Quote characters in the range (all structural: their parity says whether it began inside a quoted field). */
  quotes: number;
  /** Line feeds in the range (its lines). */
  lines: number;
  /**
   * Per column: distinct values, rows per value, the file line of each's first row; for a column
   * that overflowed, only the values the sample's rows hold (counts and first lines empty).
   */
  values: string[][];
  counts: Float64Array[];
  firstLines: Int32Array[];
  /** Per column, its streaming figures when it passed the budget. */
  overflow: (OverflowStats | undefined)[];
  /** The sample's rows: keys (byte offsets), ranks, 1-based lines in the range, value ids (row-major). */
  sample: SampleRows;
}

/** Rows kept by a {@link RankedSample}, in key order. */
export interface SampleRows {
  /** Keys: file lines (`../io/csv`'s line of a record). */
  keys: Float64Array;
  ranks: Float64Array;
  lines: Int32Array;
  /** `ids[r * columns + c]`: value id of column c in sample row r. */
  ids: Int32Array;
}

/** Pass 2 of a range: joint counts of the given pairs of codes. */
export interface PairJob extends ChunkJob {
  /** The file's line number of the range's first line. */
  firstLine: number;
  /** Per column, the distinct values (id = index) and the code of each id (-1: not counted). */
  values: string[][];
  codeOfId: Int32Array[];
  /** Pairs [f, g] flattened, and per pair K_g and the offset of its cells in the result. */
  pairs: Int32Array;
  cardsOfSecond: Int32Array;
  offsets: Int32Array;
  cells: number;
  /** Per column: how an overflowed column is encoded row by row (null: by `codeOfId`), and its codes. */
  encoders: (ValueEncoder | null)[];
  cards: Int32Array;
}

/** Pass 2's result: joint counts of the pairs, and per overflowed column its 1-way counts and moments. */
export interface PairCounts {
  joint: Float64Array;
  counts: (Float64Array | null)[];
  moments: (Moments | null)[];
}

/** A value pass 2 cannot encode (`column` index, file `line`): a DataError for the caller. */
export class BadValue extends Error {
  constructor(readonly column: number, readonly line: number, readonly value: string) {
    super(`line ${line}: ${JSON.stringify(value)}`);
  }
}

const QUOTE = 34;
const LF = 10;
const CR = 13;
const BLOCK = 1 << 22;
/** Bytes between progress reports. */
const REPORT_BYTES = 1 << 25;

/** A 32-bit rank of a row's key (an integer < 2^53): murmur3's finaliser over both halves. */
export function sampleRank(key: number): number {
  const lo = key >>> 0;
  const hi = Math.floor(key / 4294967296) >>> 0;
  return fmix(lo ^ fmix(hi + 0x9e3779b9)) >>> 0;
}

function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/**
 * Bottom-k sampling (Cohen & Kaplan, PODC 2007): keeps the `size` rows of smallest (rank, key),
 * so the kept set does not depend on how the rows were split or in which order they came.
 * Memory: at most 2 · size rows.
 */
export class RankedSample {
  private keys: Float64Array;
  private ranks: Float64Array;
  private lines: Int32Array;
  private ids: Int32Array;
  private count = 0;
  private limitRank = Infinity;
  private limitKey = Infinity;
  constructor(readonly size: number, readonly columns: number) {
    const cap = 2 * size;
    this.keys = new Float64Array(cap);
    this.ranks = new Float64Array(cap);
    this.lines = new Int32Array(cap);
    this.ids = new Int32Array(cap * columns);
  }

  /** Whether a row of this rank and key may be kept (then call {@link add}). */
  wants(rank: number, key: number): boolean {
    return rank < this.limitRank || (rank === this.limitRank && key < this.limitKey);
  }

  add(rank: number, key: number, line: number, ids: ArrayLike<number>): void {
    const i = this.count++;
    this.keys[i] = key;
    this.ranks[i] = rank;
    this.lines[i] = line;
    const F = this.columns;
    for (let c = 0; c < F; c++) this.ids[i * F + c] = ids[c];
    if (this.count === this.keys.length) this.cut();
  }

  /** Drops the rows beyond the `size` kept (then {@link remap} sees only those). */
  trim(): void {
    if (this.count > this.size) this.cut();
  }

  /** Replaces column `c`'s value id of every kept row by `to(id)`. */
  remap(c: number, to: (id: number) => number): void {
    const F = this.columns;
    for (let i = 0; i < this.count; i++) this.ids[i * F + c] = to(this.ids[i * F + c]);
  }

  /** Keeps the `size` smallest (rank, key), in arrival order (keys ascend within one reader). */
  private cut(): void {
    const m = this.count;
    const sorted = this.ranks.slice(0, m).sort();
    const t = sorted[this.size - 1];
    let below = 0;
    while (below < this.size && sorted[below] < t) below++;
    const tied: number[] = [];
    for (let i = 0; i < m; i++) if (this.ranks[i] === t) tied.push(i);
    tied.sort((a, b) => this.keys[a] - this.keys[b]);
    const keepTied = new Set(tied.slice(0, this.size - below));
    this.limitRank = t;
    this.limitKey = this.keys[tied[this.size - below - 1]];
    const F = this.columns;
    let w = 0;
    for (let i = 0; i < m; i++) {
      if (!(this.ranks[i] < t || keepTied.has(i))) continue;
      this.keys[w] = this.keys[i];
      this.ranks[w] = this.ranks[i];
      this.lines[w] = this.lines[i];
      this.ids.copyWithin(w * F, i * F, (i + 1) * F);
      w++;
    }
    this.count = w;
  }

  /** The kept rows (at most `size`), in key order. */
  rows(): SampleRows {
    if (this.count > this.size) this.cut();
    const order = Array.from({ length: this.count }, (_, i) => i).sort((a, b) => this.keys[a] - this.keys[b]);
    const F = this.columns;
    const ids = new Int32Array(order.length * F);
    order.forEach((i, r) => ids.set(this.ids.subarray(i * F, (i + 1) * F), r * F));
    return {
      keys: Float64Array.from(order, (i) => this.keys[i]),
      ranks: Float64Array.from(order, (i) => this.ranks[i]),
      lines: Int32Array.from(order, (i) => this.lines[i]),
      ids,
    };
  }
}

/** Open-addressing hash table of byte strings (FNV-1a) -> entry index, the bytes in one arena. */
export class ByteDict {
  private slots = new Int32Array(1024);
  private hashes = new Int32Array(256);
  private starts = new Int32Array(256);
  private lengths = new Int32Array(256);
  private arena = Buffer.allocUnsafe(1 << 16);
  private used = 0;
  size = 0;

  static hash(buf: Uint8Array, s: number, e: number): number {
    let h = 0x811c9dc5 | 0;
    for (let i = s; i < e; i++) h = Math.imul(h ^ buf[i], 16777619);
    return h;
  }

  /** The entry of bytes [s, e) of `buf` with hash `h`, or -1. */
  find(buf: Uint8Array, s: number, e: number, h: number): number {
    const mask = this.slots.length - 1;
    const len = e - s;
    for (let slot = h & mask; ; slot = (slot + 1) & mask) {
      const v = this.slots[slot];
      if (v === 0) return -1;
      const id = v - 1;
      if (this.hashes[id] !== h || this.lengths[id] !== len) continue;
      const a = this.starts[id];
      let same = true;
      for (let i = 0; i < len; i++) {
        if (this.arena[a + i] !== buf[s + i]) {
          same = false;
          break;
        }
      }
      if (same) return id;
    }
  }

  /** Adds bytes [s, e) (absent) with hash `h`; returns the new entry's index. */
  add(buf: Uint8Array, s: number, e: number, h: number): number {
    const id = this.size++;
    if (id === this.hashes.length) {
      this.hashes = grown(this.hashes);
      this.starts = grown(this.starts);
      this.lengths = grown(this.lengths);
    }
    const len = e - s;
    if (this.used + len > this.arena.length) {
      const next = Buffer.allocUnsafe(Math.max(this.arena.length * 2, this.used + len));
      this.arena.copy(next, 0, 0, this.used);
      this.arena = next;
    }
    this.arena.set(buf.subarray(s, e), this.used);
    this.hashes[id] = h;
    this.starts[id] = this.used;
    this.lengths[id] = len;
    this.used += len;
    if (this.size * 2 > this.slots.length) this.rehash();
    else this.place(id);
    return id;
  }

  /** Bytes of all entries. */
  get bytes(): number {
    return this.used;
  }

  /** The hash of an entry. */
  hashOf(id: number): number {
    return this.hashes[id];
  }

  /** The text of an entry. */
  text(id: number): string {
    return this.arena.toString("utf8", this.starts[id], this.starts[id] + this.lengths[id]);
  }

  private place(id: number): void {
    const mask = this.slots.length - 1;
    let slot = this.hashes[id] & mask;
    while (this.slots[slot] !== 0) slot = (slot + 1) & mask;
    this.slots[slot] = id + 1;
  }

  private rehash(): void {
    this.slots = new Int32Array(this.slots.length * 2);
    for (let id = 0; id < this.size; id++) this.place(id);
  }
}

function grown(a: Int32Array): Int32Array<ArrayBuffer> {
  const next = new Int32Array(a.length * 2);
  next.set(a);
  return next;
}

/** ASCII whitespace that String.prototype.trim removes. */
function isSpace(b: number): boolean {
  return b === 32 || (b >= 9 && b <= 13);
}

/**
 * The trimmed bytes of each field of a record: unescaped ("" -> ") into a scratch buffer when
 * quoted with escapes, non-ASCII edge whitespace trimmed as String.prototype.trim does.
 */
class FieldView {
  scratch = Buffer.allocUnsafe(1024);
  buf: Uint8Array = this.scratch;
  s = 0;
  e = 0;

  set(src: Buffer, s: number, e: number, escaped: boolean): void {
    if (escaped) {
      if (this.scratch.length < e - s) this.scratch = Buffer.allocUnsafe(2 * (e - s));
      let w = 0;
      for (let i = s; i < e; i++) {
        this.scratch[w++] = src[i];
        if (src[i] === QUOTE) i++;
      }
      src = this.scratch;
      s = 0;
      e = w;
    }
    while (s < e && isSpace(src[s])) s++;
    while (e > s && isSpace(src[e - 1])) e--;
    if (s < e && (src[s] >= 0x80 || src[e - 1] >= 0x80)) {
      const text = src.toString("utf8", s, e);
      const trimmed = text.trim();
      if (trimmed.length !== text.length) {
        const bytes = Buffer.from(trimmed, "utf8");
        if (this.scratch.length < bytes.length) this.scratch = Buffer.allocUnsafe(2 * bytes.length);
        bytes.copy(this.scratch);
        src = this.scratch;
        s = 0;
        e = bytes.length;
      }
    }
    this.buf = src;
    this.s = s;
    this.e = e;
  }

  text(): string {
    return Buffer.prototype.toString.call(this.buf, "utf8", this.s, this.e);
  }
}

/**
 * Called per record: fields [starts[c], ends[c]) of `buf` (escaped: quoted with ""), its byte
 * offset and 1-based line in the range; for a joined record, `parent[c]` is the parent row + 1
 * whose cell field c is (0: no parent, blank), -1 for a field of the file ({@link RecordJoiner}).
 */
type RecordFn = (buf: Buffer, starts: Int32Array, ends: Int32Array, escaped: Uint8Array, offset: number, line: number, parent?: Int32Array) => void;

/**
 * Per field of a joined record, a table indexed by `parent[c]` ({@link RecordFn}) for a field
 * joined from a parent (its cell is a function of the parent row, so its id or code is found
 * once per parent), else undefined. Entries start at -1 (not yet found).
 */
function parentMemo(job: ChunkJob): (Int32Array | undefined)[] {
  const out: (Int32Array | undefined)[] = new Array(recordWidth(job)).fill(undefined);
  if (job.join === undefined) return out;
  let c = job.join.keep.length;
  for (const l of job.join.lookups) for (let k = 0; k < l.width; k++) out[c++] = new Int32Array(l.keys.length + 1).fill(-1);
  return out;
}

/**
 * Writes each record's joined fields ({@link ChunkJoin}) into one buffer: the lookups' cells sit
 * in its head once (the parents' arenas), so a joined cell is only its offsets there; the kept
 * fields' bytes (still escaped) are copied after them, record by record. The lookup's cells are
 * found by the key field's bytes.
 */
class RecordJoiner {
  private out: Buffer;
  /** Where the kept fields start in `out`: after the arenas. */
  private head: number;
  private starts: Int32Array;
  private ends: Int32Array;
  private escaped: Uint8Array;
  /** Per joined field, the parent row + 1 its cell comes from (0: none), -1 for a kept field. */
  private parent: Int32Array;
  private view = new FieldView();
  private lookups: { field: number; keys: ByteDict; rowOf: Int32Array; at: Int32Array; width: number }[];

  constructor(private join: ChunkJoin) {
    const width = recordWidth({ join } as ChunkJob);
    this.starts = new Int32Array(width);
    this.ends = new Int32Array(width);
    this.escaped = new Uint8Array(width);
    this.parent = new Int32Array(width).fill(-1);
    const arenas: Buffer[] = [];
    let pos = 0;
    this.lookups = join.lookups.map((l) => {
      const keys = new ByteDict();
      const rowOf = new Int32Array(l.keys.length);
      l.keys.forEach((k, i) => {
        const b = Buffer.from(k, "utf8");
        const h = ByteDict.hash(b, 0, b.length);
        const id = keys.find(b, 0, b.length, h);
        if (id >= 0) rowOf[id] = i;
        else rowOf[keys.add(b, 0, b.length, h)] = i;
      });
      const w = l.width;
      const texts = l.cells.map((r) => r.map((v) => Buffer.from(v, "utf8")));
      arenas.push(...texts.flat());
      // at[i * (w + 1) + k]: where row i's cell k starts in `out` (its end: the next start).
      const at = new Int32Array(l.cells.length * (w + 1));
      texts.forEach((r, i) => {
        for (let k = 0; k < w; k++) {
          at[i * (w + 1) + k] = pos;
          pos += r[k].length;
        }
        at[i * (w + 1) + w] = pos;
      });
      return { field: l.field, keys, rowOf, at, width: w };
    });
    this.head = pos;
    this.out = Buffer.allocUnsafe(pos + 4096);
    Buffer.concat(arenas).copy(this.out, 0);
  }

  /** The record's joined fields passed to `onRecord`. */
  wrap(onRecord: RecordFn): RecordFn {
    return (buf, starts, ends, escaped, offset, line) => {
      let w = this.head;
      let c = 0;
      for (const j of this.join.keep) {
        const [s, e] = [starts[j], ends[j]];
        this.reserve(w + e - s);
        const out = this.out;
        this.starts[c] = w;
        // A byte loop: Buffer.copy's call costs more than a short field's bytes.
        if (e - s <= 64) for (let x = s; x < e; x++) out[w++] = buf[x];
        else w += buf.copy(out, w, s, e);
        this.ends[c] = w;
        this.escaped[c] = escaped[j];
        c++;
      }
      for (const l of this.lookups) {
        const f = l.field;
        this.view.set(buf, starts[f], ends[f], escaped[f] === 1);
        const id = l.keys.find(this.view.buf, this.view.s, this.view.e, ByteDict.hash(this.view.buf, this.view.s, this.view.e));
        const base = id < 0 ? -1 : l.rowOf[id] * (l.width + 1);
        const parent = id < 0 ? 0 : l.rowOf[id] + 1;
        for (let k = 0; k < l.width; k++) {
          // A key no parent has: blank cells (an empty range).
          this.starts[c] = base < 0 ? 0 : l.at[base + k];
          this.ends[c] = base < 0 ? 0 : l.at[base + k + 1];
          this.escaped[c] = 0;
          this.parent[c] = parent;
          c++;
        }
      }
      onRecord(this.out, this.starts, this.ends, this.escaped, offset, line, this.parent);
    };
  }

  private reserve(bytes: number): void {
    if (bytes <= this.out.length) return;
    const next = Buffer.allocUnsafe(2 * bytes);
    this.out.copy(next);
    this.out = next;
  }
}

/**
 * Parses the records of a range (joined when the job has a join). @returns rows and line feeds.
 * @throws Bail for what `../io/csv` should decide (see the module comment).
 */
export function forEachRecord(job: ChunkJob, onRecord: RecordFn, onBytes?: (bytes: number, rows: number) => void): { rows: number; lines: number; quotes: number } {
  if (job.join !== undefined) onRecord = new RecordJoiner(job.join).wrap(onRecord);
  const F = job.columns;
  const D = job.delimiter;
  const starts = new Int32Array(F);
  const ends = new Int32Array(F);
  const escaped = new Uint8Array(F);
  let buf = Buffer.allocUnsafe(Math.min(BLOCK, Math.max(1024, job.end - job.start)));
  let len = 0;
  let base = job.start;
  let readPos = job.start;
  let lines = 0;
  let rows = 0;
  let quotes = 0;
  let reported = 0;
  const fd = openSync(job.path, "r");
  try {
    for (;;) {
      if (len === buf.length) {
        const next = Buffer.allocUnsafe(buf.length * 2);
        buf.copy(next, 0, 0, len);
        buf = next;
      }
      const want = Math.min(buf.length - len, job.end - readPos);
      if (want > 0) {
        const got = readSync(fd, buf, len, want, readPos);
        if (got === 0) throw new Bail("the file ended before the range did");
        readPos += got;
        len += got;
      }
      const eof = readPos >= job.end;
      let p = 0;
      for (;;) {
        if (p >= len) break;
        // One record from p: fields, then its end (or -1: more bytes needed).
        let q = p;
        let f = 0;
        let nl = 0;
        let rq = 0;
        let next = -1;
        for (;;) {
          if (f >= F) throw new Bail(`a record at byte ${base + p} has more fields than the header`);
          escaped[f] = 0;
          let fieldEnd: number;
          let after: number;
          if (q < len && buf[q] === QUOTE) {
            let r = q + 1;
            for (;;) {
              while (r < len && buf[r] !== QUOTE) {
                if (buf[r] === LF) nl++;
                r++;
              }
              if (r >= len || (r + 1 >= len && !eof)) break;
              if (r + 1 < len && buf[r + 1] === QUOTE) {
                escaped[f] = 1;
                rq += 2;
                r += 2;
                continue;
              }
              break;
            }
            if (r >= len || (r + 1 >= len && !eof)) {
              if (eof && r >= len) throw new Bail("a quoted field is not closed");
              break;
            }
            rq += 2;
            starts[f] = q + 1;
            fieldEnd = r;
            after = r + 1;
          } else {
            let r = q;
            while (r < len) {
              const b = buf[r];
              if (b === D || b === LF || b === CR) break;
              if (b === QUOTE) throw new Bail(`a quote inside an unquoted field at byte ${base + r}`);
              r++;
            }
            if (r >= len && !eof) break;
            starts[f] = q;
            fieldEnd = r;
            after = r;
          }
          ends[f] = fieldEnd;
          f++;
          if (after >= len) {
            if (!eof) break;
            next = len;
            break;
          }
          const b = buf[after];
          if (b === D) {
            q = after + 1;
            continue;
          }
          if (b === LF && !job.crlf) {
            next = after + 1;
            break;
          }
          if (b === CR && job.crlf) {
            if (after + 1 >= len && !eof) break;
            if (buf[after + 1] !== LF) throw new Bail(`a CR without LF at byte ${base + after}`);
            next = after + 2;
            break;
          }
          throw new Bail(`an unexpected ${b === LF ? "LF" : b === CR ? "CR" : "byte after a closing quote"} at byte ${base + after}`);
        }
        if (next < 0) break;
        const ended = next <= len && buf[next - 1] === LF;
        const line = lines + nl + 1;
        const empty = f === 1 && ends[0] === p && buf[p] !== QUOTE;
        if (!empty) {
          if (f !== F) throw new Bail(`line ${line} of the range has ${f} fields, the header ${F}`);
          onRecord(buf, starts, ends, escaped, base + p, line);
          rows++;
        }
        lines += nl + (ended ? 1 : 0);
        quotes += rq;
        p = next;
      }
      if (p > 0 && !isUtf8(buf.subarray(0, p))) throw new Bail("bytes that are not UTF-8");
      if (eof && p < len) throw new Bail("an incomplete record at the end of the range");
      buf.copy(buf, 0, p, len);
      len -= p;
      base += p;
      if (onBytes && base - job.start - reported >= REPORT_BYTES) {
        onBytes(base - job.start - reported, rows);
        reported = base - job.start;
      }
      if (eof && len === 0) break;
    }
  } finally {
    closeSync(fd);
  }
  onBytes?.(job.end - job.start - reported, rows);
  return { rows, lines, quotes };
}

/**
 * The records of a range by column: per field its distinct texts (first seen first) and each
 * record's id among them; `length` records. No array per record: a million rows are a few typed
 * arrays (`../io/column-table`).
 * @throws Bail (module comment).
 */
export function readRangeColumns(job: ChunkJob): { values: string[][]; ids: Int32Array[]; length: number } {
  const F = recordWidth(job);
  const dicts = Array.from({ length: F }, () => new ByteDict());
  const values: string[][] = Array.from({ length: F }, () => []);
  let ids = Array.from({ length: F }, () => new Int32Array(1024));
  let length = 0;
  const view = new FieldView();
  forEachRecord(job, (buf, starts, ends, escaped) => {
    if (length === ids[0].length) {
      ids = ids.map((a) => {
        const b = new Int32Array(2 * a.length);
        b.set(a);
        return b;
      });
    }
    for (let c = 0; c < F; c++) {
      view.set(buf, starts[c], ends[c], escaped[c] === 1);
      const h = ByteDict.hash(view.buf, view.s, view.e);
      let id = dicts[c].find(view.buf, view.s, view.e, h);
      if (id < 0) {
        id = dicts[c].add(view.buf, view.s, view.e, h);
        values[c].push(view.text());
      }
      ids[c][length] = id;
    }
    length++;
  });
  return { values, ids: ids.map((a) => a.subarray(0, length)), length };
}

/** Line feeds in a range (its lines, so that each range learns the file line it starts at). */
export function countLines(job: ChunkJob): number {
  const buf = Buffer.allocUnsafe(BLOCK);
  let lines = 0;
  const fd = openSync(job.path, "r");
  try {
    for (let at = job.start; at < job.end; ) {
      const got = readSync(fd, buf, 0, Math.min(BLOCK, job.end - at), at);
      if (got === 0) throw new Bail("the file ended before the range did");
      for (let i = buf.indexOf(LF); i >= 0 && i < got; i = buf.indexOf(LF, i + 1)) lines++;
      at += got;
    }
  } finally {
    closeSync(fd);
  }
  return lines;
}

/** Entries of an overflowed column's sample dictionary beyond which it is rebuilt from the kept rows. */
const SAMPLE_DICT_SLACK = 3;

/** Pass 1 over a range. @throws Bail (module comment). */
export function tallyRange(job: TallyJob, onBytes?: (bytes: number, rows: number) => void): RangeTally {
  const F = recordWidth(job);
  const dicts = Array.from({ length: F }, () => new ByteDict());
  const counts = Array.from({ length: F }, () => new Float64Array(256));
  const firstLines = Array.from({ length: F }, () => new Int32Array(256));
  const over: (Overflow | undefined)[] = Array.from({ length: F }, () => undefined);
  const sample = new RankedSample(job.sampleRows, F);
  const ids = new Int32Array(F);
  const view = new FieldView();
  const lineBase = job.firstLine - 1;
  // A joined field's id per parent row (reset when its dictionary is rebuilt).
  const memo = parentMemo(job);
  // A column past its budget: its figures from its dictionary, which then holds the sample's values only.
  const overflow = (c: number): void => {
    const d = dicts[c];
    const o = new Overflow();
    for (let id = 0; id < d.size; id++) o.add(d.text(id), d.hashOf(id), counts[c][id]);
    over[c] = o;
    counts[c] = new Float64Array(0);
    firstLines[c] = new Int32Array(0);
    compact(c);
  };
  const compact = (c: number): void => {
    memo[c]?.fill(-1);
    const d = dicts[c];
    const kept = new ByteDict();
    const to = new Map<number, number>();
    sample.remap(c, (id) => {
      let k = to.get(id);
      if (k === undefined) {
        const b = Buffer.from(d.text(id), "utf8");
        k = kept.add(b, 0, b.length, d.hashOf(id));
        to.set(id, k);
      }
      return k;
    });
    dicts[c] = kept;
  };
  const { rows, lines, quotes } = forEachRecord(
    job,
    (buf, starts, ends, escaped, _offset, local, parent) => {
      const line = lineBase + local;
      const rank = sampleRank(line);
      const wanted = sample.wants(rank, line);
      for (let c = 0; c < F; c++) {
        const m = memo[c];
        const p = parent === undefined ? -1 : parent[c];
        if (m !== undefined && p >= 0 && over[c] === undefined && m[p] >= 0) {
          counts[c][m[p]]++;
          ids[c] = m[p];
          continue;
        }
        view.set(buf, starts[c], ends[c], escaped[c] === 1);
        const h = ByteDict.hash(view.buf, view.s, view.e);
        const d = dicts[c];
        const o = over[c];
        if (o !== undefined) {
          if (view.e === view.s) o.blanks++;
          else if (o.numeric || o.wholeSeconds) o.add(view.text(), h);
          else {
            o.rows++;
            o.sketch.addHash(h);
          }
          if (!wanted) continue;
        }
        let id = d.find(view.buf, view.s, view.e, h);
        if (id < 0) {
          id = d.add(view.buf, view.s, view.e, h);
          if (o === undefined) {
            if (id === counts[c].length) {
              const nc = new Float64Array(id * 2);
              nc.set(counts[c]);
              counts[c] = nc;
              firstLines[c] = grown(firstLines[c]);
            }
            firstLines[c][id] = line;
          }
        }
        if (o === undefined) {
          counts[c][id]++;
          if (m !== undefined && p >= 0) m[p] = id;
        }
        ids[c] = id;
      }
      if (wanted) sample.add(rank, line, line, ids);
      for (let c = 0; c < F; c++) {
        const d = dicts[c];
        if (over[c] === undefined) {
          if (d.size > job.distinctBudget || d.bytes > DISTINCT_BYTES) overflow(c);
        } else if (d.size > SAMPLE_DICT_SLACK * job.sampleRows + 1024) compact(c);
      }
    },
    onBytes,
  );
  // An overflowed column sends only the values of the rows the sample keeps.
  sample.trim();
  for (let c = 0; c < F; c++) if (over[c]) compact(c);
  return {
    rows,
    quotes,
    lines,
    values: dicts.map((d) => Array.from({ length: d.size }, (_, id) => d.text(id))),
    counts: dicts.map((d, c) => counts[c].slice(0, over[c] ? 0 : d.size)),
    firstLines: dicts.map((d, c) => firstLines[c].slice(0, over[c] ? 0 : d.size)),
    overflow: over.map((o) => o?.stats()),
    sample: sample.rows(),
  };
}

/**
 * Pass 2 over a range: joint counts of `job.pairs`, and the codes and moments of the overflowed
 * columns. @throws Bail (module comment), or for a value pass 1 did not see; BadValue for a value
 * of an overflowed column its encoder has no code for.
 */
export function countPairsInRange(job: PairJob, onBytes?: (bytes: number, rows: number) => void): PairCounts {
  const F = recordWidth(job);
  const dicts = job.values.map((values, c) => {
    const d = new ByteDict();
    if (job.encoders[c]) return d;
    for (const v of values) {
      const b = Buffer.from(v, "utf8");
      d.add(b, 0, b.length, ByteDict.hash(b, 0, b.length));
    }
    return d;
  });
  const encode = job.encoders.map((e) => (e ? encoderOf(e) : null));
  const binned = job.encoders.map((e) => e?.kind === "bins" || (e?.kind === "id" && e.integer === true));
  const counts = job.encoders.map((e, c) => (e ? new Float64Array(job.cards[c]) : null));
  const moments = job.encoders.map((e) => (e?.kind === "bins" ? emptyMoments(e.shift) : e?.kind === "id" && e.integer ? emptyMoments() : null));
  const out = new Float64Array(job.cells);
  const codes = new Int32Array(F);
  const view = new FieldView();
  const { pairs, cardsOfSecond, offsets } = job;
  const P = offsets.length;
  const used = new Uint8Array(F);
  for (let k = 0; k < pairs.length; k++) used[pairs[k]] = 1;
  const lineBase = job.firstLine - 1;
  // A joined field's value id per parent row (fields without an encoder).
  const memo = parentMemo(job);
  forEachRecord(
    job,
    (buf, starts, ends, escaped, _offset, local, parent) => {
      for (let c = 0; c < F; c++) {
        const enc = encode[c];
        if (used[c] === 0 && enc === null) continue;
        const m = enc === null ? memo[c] : undefined;
        const p = parent === undefined ? -1 : parent[c];
        if (m !== undefined && p >= 0 && m[p] >= 0) {
          codes[c] = job.codeOfId[c][m[p]];
          continue;
        }
        view.set(buf, starts[c], ends[c], escaped[c] === 1);
        if (enc !== null) {
          const text = view.text();
          const { code, x } = enc(text);
          if (code < 0) throw new BadValue(c, lineBase + local, text);
          if (binned[c] && text !== "") addMoment(moments[c]!, x);
          counts[c]![code]++;
          codes[c] = code;
          continue;
        }
        const id = dicts[c].find(view.buf, view.s, view.e, ByteDict.hash(view.buf, view.s, view.e));
        if (id < 0) throw new Bail("a value the first pass did not see (the file changed)");
        codes[c] = job.codeOfId[c][id];
        if (m !== undefined && p >= 0) m[p] = id;
      }
      for (let k = 0; k < P; k++) out[offsets[k] + codes[pairs[2 * k]] * cardsOfSecond[k] + codes[pairs[2 * k + 1]]]++;
    },
    onBytes,
  );
  return { joint: out, counts, moments };
}
