/**
 * Extraction's passes over a table with memory that does not grow with its rows (docs/extract.md):
 * pass 1 keeps per column the distinct values with counts and first lines, and a bottom-k sample
 * of rows (`./csv-chunks` RankedSample); pass 2, only when the sample is not the whole table,
 * counts the 2-way marginals the caller asks for. A UTF-8 CSV file is split into byte ranges at
 * record boundaries, a Parquet file into runs of row groups, one per worker thread
 * (`./tally-worker`); any other source, or a file whose parts a worker cannot read, is read by
 * `../io/csv` on this thread (`./record-tally`); a joined file (`../io/record-join`) is joined by
 * the workers record by record, a joined Parquet file on this thread. A column past its distinct-value budget keeps
 * figures and the sample's values only (`./distinct-values`). The result does not depend on the
 * number of threads.
 */
import { availableParallelism } from "node:os";
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { parquetLayout } from "../io/typed-inputs";
import { checkHeader, describeSource, detectDelimiter, fileOfDescription, readTable, type TableSource } from "../io/csv";
import { ColumnTable } from "../io/column-table";
import { inputFormatOfPath, type ReadProgress, type SourceType } from "../io/inputs";
import { isNumeric, type ColumnScan } from "../columns";
import { inferNumberFormat, missingTextOf, withMissingText, withNumberFormat } from "../columns/number-format";
import { inferDatetimeFormat } from "./datetime";
import type { ScannedTable } from "./encoded";
import { DataError } from "../errors";
import { isJoined, joinedColumns, joinFields } from "../io/record-join";
import { Bail, BadValue, readRangeColumns, type ChunkJob, type ChunkJoin, type PairCounts, type PairJob, type RangeTally, type SampleRows } from "./csv-chunks";
import { DISTINCT_BUDGET, DistinctSketch, DistinctValues, hashText, mergeMoments, Overflow, type Moments, type OverflowStats, type ValueEncoder } from "./distinct-values";
import type { WorkerReply, WorkerTask } from "./tally-worker";
import { RecordPairs, RecordTally } from "./record-tally";

/** Rows of the sample rule detection and coordinate areas read: the whole table up to this. */
export const SAMPLE_ROWS = 200_000;
/** A CSV file this large or larger is read by worker threads unless `threads` says otherwise. */
export const PARALLEL_MIN_BYTES = 16 * 2 ** 20;
/** Most worker threads by default. */
const MAX_THREADS = 8;

/** Options of {@link tallyTable}. */
export interface TallyOptions {
  delimiter?: string;
  encoding?: string;
  onReadProgress?: (p: ReadProgress) => void;
  /** Worker threads for a UTF-8 CSV file; 0: none. Default: the available cores (at most 8) from {@link PARALLEL_MIN_BYTES} up. */
  threads?: number;
  /** Rows of the sample (default {@link SAMPLE_ROWS}). */
  sampleRows?: number;
  /** Distinct values a column keeps with counts (per reader) before it overflows (default `DISTINCT_BUDGET`). */
  distinctBudget?: number;
}

/** Pass 1's result, and pass 2 on demand. */
export interface TableTally {
  source: string;
  columns: string[];
  n: number;
  types?: (SourceType | undefined)[];
  /**
   * Per column the distinct values of the whole table with counts; `ids` is empty. A column that
   * overflowed its budget, in a table larger than the sample, has the sample's values and counts
   * and `estimated` (`../columns` ColumnScan).
   */
  scans: ColumnScan[];
  /** Per column, its streaming figures when it overflowed (`./distinct-values`). */
  overflow: (OverflowStats | undefined)[];
  /** The sample as a scanned table, rows in source order: the whole table when `n` <= the sample's size. */
  sample: ScannedTable;
  /** Whether `sample` is not the whole table. */
  sampled: boolean;
  /** Whether worker threads read the table. */
  threads: number;
  /**
   * Pass 2: per pair [f, g] the joint counts `joint[k][a * K_g + b]` of codes `codeOfId[f][value
   * id]`, an overflowed column's codes by `encoders[f]` (its 1-way `counts[f]` and, binned, its
   * `moments[f]` measured too).
   * @throws DataError when the source changed between the passes, or an overflowed column has a
   *   value its encoder has no code for (line and value).
   */
  countPairs(pairs: readonly [number, number][], cards: readonly number[], codeOfId: readonly Int32Array[], encoders: readonly (ValueEncoder | null)[]): Promise<PassTwo>;
  /** Ends the worker threads (idempotent). */
  close(): Promise<void>;
}

/** Pass 2's counts: per pair its joint counts; per overflowed column its 1-way counts and, binned, moments. */
export interface PassTwo {
  joint: Float64Array[];
  counts: (Float64Array | null)[];
  moments: (Moments | null)[];
}

/** Pass 1 over a table. @throws DataError for the problems of `../io/csv`'s readTable. */
export async function tallyTable(source: TableSource, opts: TallyOptions = {}): Promise<TableTally> {
  const size = opts.sampleRows ?? SAMPLE_ROWS;
  if (!(Number.isInteger(size) && size >= 1)) throw new RangeError("sampleRows must be an integer >= 1");
  const budget = opts.distinctBudget ?? DISTINCT_BUDGET;
  if (!(Number.isInteger(budget) && budget >= 1)) throw new RangeError("distinctBudget must be an integer >= 1");
  const groups = await groupPlan(source, opts);
  if (groups) {
    const pool = new Pool(groups.groups.length, opts.onReadProgress, groups.n);
    try {
      const tally = await groupTally(groups, pool, size, budget);
      if (tally) return tally;
    } catch (e) {
      await pool.close();
      throw e;
    }
    await pool.close();
  }
  const plan = parallelPlan(source, opts);
  if (plan) {
    const pool = new Pool(plan.ranges.length, opts.onReadProgress, plan.ranges.reduce((sum, [a, b]) => sum + b - a, 0));
    try {
      const tally = await parallelTally(plan, pool, size, budget);
      if (tally) return tally;
    } catch (e) {
      await pool.close();
      throw e;
    }
    await pool.close();
  }
  return sequentialTally(source, opts, size, budget);
}

/**
 * A UTF-8 CSV file read whole on this thread by `./csv-chunks`, held by column (`../io/column-table`:
 * each column's distinct values and per-row ids; the cells trimmed), the rows `../io/csv`'s
 * readTable reads; undefined when that parser leaves the file
 * to `../io/csv` (a quoted header, a byte-order mark, a ragged record, fewer than 2 columns, no
 * data row, ...), which then gives the exact result or error.
 */
export function readCsvFile(path: string): ColumnTable | undefined {
  let plan: Plan | undefined;
  try {
    plan = parallelPlan(path, { threads: 1 });
  } catch {
    return undefined;
  }
  if (plan === undefined || plan.ranges.length !== 1) return undefined;
  const [start, end] = plan.ranges[0];
  try {
    const read = readRangeColumns({ path, start, end, delimiter: plan.delimiter, columns: plan.fields, crlf: plan.crlf });
    return read.length > 0 ? new ColumnTable(plan.columns, read.values, read.ids, read.length) : undefined;
  } catch (e) {
    if (e instanceof Bail) return undefined;
    throw e;
  }
}

/** The byte ranges of a CSV file for the workers, or undefined when it is read on this thread. */
interface Plan {
  source: string;
  path: string;
  columns: string[];
  delimiter: number;
  crlf: boolean;
  headerQuotes: number;
  ranges: [number, number][];
  bytes: number;
  /** The file's fields per record (`columns` are the joined table's when `join` is set). */
  fields: number;
  join?: ChunkJoin;
}

function parallelPlan(source: TableSource, opts: TallyOptions): Plan | undefined {
  if (typeof source !== "string" && !("path" in source)) return undefined;
  const path = typeof source === "string" ? source : source.path;
  const format = typeof source === "string" ? undefined : source.format;
  if ((format ?? inputFormatOfPath(path)) !== "csv") return undefined;
  if (opts.encoding !== undefined && !/^utf-?8$/i.test(opts.encoding)) return undefined;
  if (opts.threads !== undefined && !(Number.isInteger(opts.threads) && opts.threads >= 0)) throw new RangeError("threads must be an integer >= 0");
  let bytes: number;
  try {
    const st = statSync(path);
    if (!st.isFile()) return undefined;
    bytes = st.size;
  } catch {
    return undefined; // ../io/csv says what is wrong
  }
  const threads = opts.threads ?? (bytes >= PARALLEL_MIN_BYTES ? Math.min(MAX_THREADS, availableParallelism()) : 0);
  if (threads === 0) return undefined;
  const head = readAt(path, 0, Math.min(bytes, 1 << 20));
  const lf = head.indexOf(10);
  if (lf < 0 || (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf)) return undefined;
  const crlf = lf > 0 && head[lf - 1] === 13;
  const headerText = head.toString("utf8", 0, crlf ? lf - 1 : lf);
  if (headerText.includes('"')) return undefined;
  const delimiter = opts.delimiter ?? detectDelimiter(head.toString("utf8", 0, Math.min(head.length, 64 * 1024)), head.length === bytes);
  if (delimiter.length !== 1 || delimiter.charCodeAt(0) > 127) return undefined;
  const header = checkHeader(headerText.split(delimiter).map((h) => h.trim()), path, 2, path);
  let columns = header;
  let join: ChunkJoin | undefined;
  if (isJoined(source)) {
    let fields: ReturnType<typeof joinFields>;
    try {
      fields = joinFields(header, source.join, path);
    } catch {
      return undefined; // the one-thread read says what is wrong
    }
    join = { keep: fields.keep, lookups: source.join.lookups.map((l, k) => ({ field: fields.lookups[k], keys: l.keys, cells: l.cells, width: l.names.length })) };
    columns = joinedColumns(source.join);
  }
  const start = lf + 1;
  const cuts = [start];
  for (let k = 1; k < threads; k++) {
    const target = start + Math.floor(((bytes - start) * k) / threads);
    const window = readAt(path, target, Math.min(1 << 20, bytes - target));
    const at = window.indexOf(10);
    if (at >= 0 && target + at + 1 > cuts[cuts.length - 1] && target + at + 1 < bytes) cuts.push(target + at + 1);
  }
  cuts.push(bytes);
  const ranges = cuts.slice(1).map((end, i): [number, number] => [cuts[i], end]).filter(([a, b]) => b > a);
  if (ranges.length === 0) return undefined;
  return { source: describeSource(source), path, columns, delimiter: delimiter.charCodeAt(0), crlf, headerQuotes: 0, ranges, bytes, fields: header.length, ...(join ? { join } : {}) };
}

function readAt(path: string, at: number, length: number): Buffer {
  const fd = openSync(path, "r");
  try {
    const buf = Buffer.alloc(length);
    const got = readSync(fd, buf, 0, length, at);
    return buf.subarray(0, got);
  } finally {
    closeSync(fd);
  }
}

/** Worker threads, one per range; progress summed over them. */
class Pool {
  private workers: Worker[];
  private done = 0;
  private rows = 0;
  constructor(count: number, private onProgress: ((p: ReadProgress) => void) | undefined, private bytes: number) {
    this.workers = Array.from({ length: count }, () => new Worker(join(__dirname, "tally-worker.js")));
  }

  /** Runs one task per worker; undefined when any worker bailed. @throws BadValue from pass 2. */
  async run<T>(tasks: WorkerTask[]): Promise<T[] | undefined> {
    this.done = 0;
    this.rows = 0;
    const rowsOf = tasks.map(() => 0);
    const replies = await Promise.all(
      tasks.map(
        (task, i) =>
          new Promise<WorkerReply>((resolve, reject) => {
            const w = this.workers[i];
            const onMessage = (m: WorkerReply): void => {
              if (m.kind === "progress") {
                this.done += m.bytes;
                this.rows += m.rows - rowsOf[i];
                rowsOf[i] = m.rows;
                this.onProgress?.({ rows: this.rows, fraction: Math.min(1, this.done / this.bytes) });
                return;
              }
              w.off("message", onMessage);
              w.off("error", reject);
              resolve(m);
            };
            w.on("message", onMessage);
            w.once("error", reject);
            w.postMessage(task);
          }),
      ),
    );
    const failed = replies.find((r) => r.kind === "error");
    if (failed && failed.kind === "error") throw new Error(`internal: an extraction worker failed: ${failed.message}`);
    const bad = replies.find((r) => r.kind === "bad");
    if (bad && bad.kind === "bad") throw new BadValue(bad.column, bad.line, bad.value);
    if (replies.some((r) => r.kind === "bail")) return undefined;
    return replies.map((r) => (r as unknown as { result: T }).result);
  }

  async close(): Promise<void> {
    const ws = this.workers;
    this.workers = [];
    await Promise.all(ws.map((w) => w.terminate()));
  }
}

async function parallelTally(plan: Plan, pool: Pool, size: number, budget: number): Promise<TableTally | undefined> {
  const base: ChunkJob = { path: plan.path, start: 0, end: 0, delimiter: plan.delimiter, columns: plan.fields, crlf: plan.crlf, ...(plan.join ? { join: plan.join } : {}) };
  const lineCounts = await pool.run<number>(plan.ranges.map(([start, end]) => ({ kind: "lines", job: { ...base, start, end } })));
  if (!lineCounts) return undefined;
  let firstLine = 2;
  const firstLines0 = lineCounts.map((l) => (firstLine += l) - l);
  const parts = await pool.run<RangeTally>(
    plan.ranges.map(([start, end], w) => ({ kind: "tally", job: { ...base, start, end, sampleRows: size, firstLine: firstLines0[w], distinctBudget: budget } })),
  );
  if (!parts) return undefined;
  if (parts.some((p, w) => p.lines !== lineCounts[w])) return undefined;
  // A range must begin outside quotes: an even number of quote characters before it.
  let quotes = plan.headerQuotes;
  for (const p of parts) {
    if (quotes % 2 !== 0) return undefined;
    quotes += p.quotes;
  }
  const m = mergeParts(parts, plan.columns.length, size, budget);
  if (m.n === 0) return undefined;
  const { dicts } = m;
  return finish(plan.source, plan.columns, m.n, undefined, m, plan.ranges.length, async (pairs, cards, codeOfId, encs) => {
    const layout = pairLayout(pairs, cards);
    const job = (start: number, end: number, w: number): PairJob => ({
      ...base,
      start,
      end,
      firstLine: firstLines0[w],
      values: dicts.map((d, c) => (encs[c] ? [] : d.values)),
      codeOfId: codeOfId as Int32Array[],
      ...layout,
      encoders: encs as (ValueEncoder | null)[],
      cards: Int32Array.from(cards),
    });
    return workerPairs(pool, plan.source, plan.path, plan.columns, encs, layout, pairs, plan.ranges.map(([start, end], w) => ({ kind: "pairs", job: job(start, end, w) })));
  }, () => pool.close());
}

/** Runs pass 2's tasks and adds up their counts. @throws DataError (the source changed, or a value with no code). */
async function workerPairs(
  pool: Pool,
  source: string,
  path: string,
  columns: readonly string[],
  encs: readonly (ValueEncoder | null)[],
  layout: PairLayout,
  pairs: readonly [number, number][],
  tasks: WorkerTask[],
): Promise<PassTwo> {
  let out: PairCounts[] | undefined;
  try {
    out = await pool.run<PairCounts>(tasks);
  } catch (e) {
    throw e instanceof BadValue ? badValue(source, columns, encs, e) : e;
  }
  if (!out) throw new DataError(`${source} changed while it was read (its second pass differs from the first).`, { file: path });
  return {
    joint: splitPairs(out.map((o) => o.joint), layout, pairs),
    counts: encs.map((e, c) => (e ? sumArrays(out.map((o) => o.counts[c]!)) : null)),
    moments: encs.map((_, c) => (out[0].moments[c] ? out.map((o) => o.moments[c]!).reduce(mergeMoments) : null)),
  };
}

/** The readers' pass 1 merged in source order: dictionaries, overflowed columns' figures, the sample. */
interface Merged {
  n: number;
  dicts: DistinctValues[];
  overflow: (OverflowStats | undefined)[];
  /** The sample's value ids (row-major), its rows' lines, and its rows. */
  ids: Int32Array;
  lines: Float64Array;
  rows: number;
}

/**
 * Merges the parts of readers of consecutive stretches of one source, in source order, so values
 * keep their order of first appearance; a column overflowed in any part, or whose values together
 * pass the budget, keeps figures and the merged sample's values only.
 */
function mergeParts(parts: RangeTally[], F: number, size: number, budget: number): Merged {
  const n = parts.reduce((s, p) => s + p.rows, 0);
  const dicts = Array.from({ length: F }, () => new DistinctValues());
  const overflow: (Overflow | undefined)[] = Array.from({ length: F }, () => undefined);
  const toGlobal: (Int32Array | null)[][] = parts.map(() => Array.from({ length: F }, () => null));
  for (let c = 0; c < F; c++) {
    if (!parts.some((p) => p.overflow[c] !== undefined)) {
      parts.forEach((p, w) => {
        toGlobal[w][c] = Int32Array.from(p.values[c], (v, id) => dicts[c].add(v, p.firstLines[c][id], p.counts[c][id]));
      });
      if (!dicts[c].over(budget)) continue;
    }
    const o = new Overflow();
    for (const p of parts) {
      const po = p.overflow[c];
      if (po) o.merge(po);
      else p.values[c].forEach((v, id) => o.add(v, hashText(v), p.counts[c][id]));
    }
    overflow[c] = o;
    dicts[c] = new DistinctValues();
    toGlobal.forEach((t) => (t[c] = null));
  }
  const merged = mergeSamples(parts.map((p) => p.sample), size);
  const ids = new Int32Array(merged.length * F);
  merged.forEach(([w, r], i) => {
    const local = parts[w].sample.ids;
    const line = parts[w].sample.keys[r];
    for (let c = 0; c < F; c++) {
      const map = toGlobal[w][c];
      const id = local[r * F + c];
      ids[i * F + c] = map ? map[id] : dicts[c].add(parts[w].values[c][id], line);
    }
  });
  return { n, dicts, overflow: overflow.map((o) => o?.stats()), ids, lines: Float64Array.from(merged, ([w, r]) => parts[w].sample.keys[r]), rows: merged.length };
}

/** A Parquet file's runs of consecutive row groups, one per worker, about equal rows each. */
interface GroupPlan {
  source: string;
  path: string;
  columns: string[];
  types: (SourceType | undefined)[];
  groups: [number, number][];
  n: number;
}

/** The row-group plan of a Parquet source; undefined when it is read on this thread (under 16 MiB without `threads`, one row group, an unreadable footer). */
async function groupPlan(source: TableSource, opts: TallyOptions): Promise<GroupPlan | undefined> {
  if ((typeof source !== "string" && !("path" in source)) || isJoined(source)) return undefined;
  const path = typeof source === "string" ? source : source.path;
  const format = typeof source === "string" ? undefined : source.format;
  if ((format ?? inputFormatOfPath(path)) !== "parquet") return undefined;
  if (opts.threads !== undefined && !(Number.isInteger(opts.threads) && opts.threads >= 0)) throw new RangeError("threads must be an integer >= 0");
  let layout: Awaited<ReturnType<typeof parquetLayout>>;
  let wanted: number;
  try {
    const st = statSync(path);
    wanted = opts.threads ?? (st.isFile() && st.size >= PARALLEL_MIN_BYTES ? Math.min(MAX_THREADS, availableParallelism()) : 0);
    if (wanted === 0) return undefined;
    layout = await parquetLayout(path);
  } catch {
    return undefined; // the one-thread read says what is wrong
  }
  const G = layout.groupRows.length;
  const threads = Math.min(G, wanted);
  if (threads < 2 && opts.threads === undefined) return undefined;
  if (threads === 0 || layout.header.length < 2) return undefined;
  const n = layout.groupRows.reduce((s, r) => s + r, 0);
  const groups: [number, number][] = [];
  let g = 0;
  let done = 0;
  for (let w = 0; w < threads; w++) {
    const first = g;
    const target = (n * (w + 1)) / threads;
    while (g < G && (g === first || done + layout.groupRows[g] / 2 <= target) && G - g > threads - w - 1) done += layout.groupRows[g++];
    if (w === threads - 1) while (g < G) done += layout.groupRows[g++];
    if (g > first) groups.push([first, g]);
  }
  return { source: describeSource(source), path, columns: layout.header, types: layout.types, groups, n };
}

/** Pass 1 (and 2) over a Parquet file's row groups in worker threads; undefined when a worker could not read its groups. */
async function groupTally(plan: GroupPlan, pool: Pool, size: number, budget: number): Promise<TableTally | undefined> {
  const F = plan.columns.length;
  const parts = await pool.run<RangeTally>(plan.groups.map((groups) => ({ kind: "groups", job: { path: plan.path, groups, columns: F, sampleRows: size, distinctBudget: budget } })));
  if (!parts) return undefined;
  const m = mergeParts(parts, F, size, budget);
  if (m.n === 0 || m.n !== plan.n) return undefined;
  const typed = plan.types.some((t) => t !== undefined) ? plan.types : undefined;
  const { dicts } = m;
  return finish(plan.source, plan.columns, m.n, typed, m, plan.groups.length, async (pairs, cards, codeOfId, encs) => {
    const layout = pairLayout(pairs, cards);
    const tasks = plan.groups.map((groups): WorkerTask => ({
      kind: "groupPairs",
      job: {
        path: plan.path,
        groups,
        values: dicts.map((d, c) => (encs[c] ? [] : d.values)),
        codeOfId: codeOfId as Int32Array[],
        encoders: encs as (ValueEncoder | null)[],
        cards: Int32Array.from(cards),
        ...layout,
      },
    }));
    return workerPairs(pool, plan.source, plan.path, plan.columns, encs, layout, pairs, tasks);
  }, () => pool.close());
}

function sumArrays(parts: Float64Array[]): Float64Array {
  const sum = new Float64Array(parts[0].length);
  for (const p of parts) for (let i = 0; i < sum.length; i++) sum[i] += p[i];
  return sum;
}

/** The bottom-`size` rows of the ranges' samples by (rank, key), in key order: [range, row]. */
function mergeSamples(samples: SampleRows[], size: number): [number, number][] {
  const all: [number, number][] = [];
  samples.forEach((s, w) => {
    for (let r = 0; r < s.keys.length; r++) all.push([w, r]);
  });
  const rank = ([w, r]: [number, number]): number => samples[w].ranks[r];
  const key = ([w, r]: [number, number]): number => samples[w].keys[r];
  all.sort((a, b) => rank(a) - rank(b) || key(a) - key(b));
  const kept = all.slice(0, size);
  kept.sort((a, b) => key(a) - key(b));
  return kept;
}

interface PairLayout {
  pairs: Int32Array;
  cardsOfSecond: Int32Array;
  offsets: Int32Array;
  cells: number;
}

function pairLayout(pairs: readonly [number, number][], cards: readonly number[]): PairLayout {
  const offsets = new Int32Array(pairs.length);
  let cells = 0;
  pairs.forEach(([f, g], k) => {
    offsets[k] = cells;
    cells += cards[f] * cards[g];
  });
  return { pairs: Int32Array.from(pairs.flat()), cardsOfSecond: Int32Array.from(pairs.map(([, g]) => cards[g])), offsets, cells };
}

function splitPairs(parts: Float64Array[], layout: PairLayout, pairs: readonly [number, number][]): Float64Array[] {
  const sum = new Float64Array(layout.cells);
  for (const p of parts) for (let i = 0; i < sum.length; i++) sum[i] += p[i];
  return pairs.map((_, k) => sum.slice(layout.offsets[k], k + 1 < pairs.length ? layout.offsets[k + 1] : layout.cells));
}


/** A column of the whole table (no row ids), as `./table-scan` builds it. */
function fullScan(name: string, values: string[], counts: number[], firstLines: number[], n: number, type: SourceType | undefined): ColumnScan {
  const blank = values.indexOf("");
  const missing = blank >= 0 ? counts[blank] : 0;
  let numeric = type !== "text" && type !== "dictionary";
  if (numeric) for (const v of values) if (v !== "" && !isNumeric(v)) numeric = false;
  // Whole seconds: the text without ".000" (a copy: pass 2 looks the read text up).
  if (type === "timestamp" && values.every((v) => v === "" || v.endsWith(".000"))) values = values.map((v) => (v === "" ? v : v.slice(0, -4)));
  return { name, values, counts, firstLines, ids: new Int32Array(0), missing, numeric: numeric && missing < n };
}

/**
 * The table-wide scan of an overflowed column: the sample's values and counts (a value's count in
 * the sample, not scaled: the rare threshold then holds in the table too), a blank of the sample's
 * when the table has blanks, and `estimated` (the estimated distinct values, the table's blanks).
 */
function overflowScan(sample: ColumnScan, o: OverflowStats): ColumnScan {
  const addBlank = o.blanks > 0 && sample.missing === 0;
  const values = addBlank ? [...sample.values, ""] : sample.values;
  const counts = addBlank ? [...sample.counts, 1] : sample.counts;
  const firstLines = addBlank ? [...sample.firstLines, 0] : sample.firstLines;
  const missing = addBlank ? 1 : sample.missing;
  const rows = counts.reduce((s, c) => s + c, 0);
  const distinct = new DistinctSketch(o.registers).estimate();
  return {
    name: sample.name,
    values,
    counts,
    firstLines,
    ids: new Int32Array(0),
    missing,
    numeric: sample.numeric && missing < rows,
    ...(sample.numberFormat !== undefined ? { numberFormat: sample.numberFormat } : {}),
    estimated: { distinct, integer: o.integer, rows, missing: o.blanks },
  };
}

type PairCounter = TableTally["countPairs"];


/** Builds the tally from the merged pass 1 (dictionaries, figures, the sample's value ids and lines). */
function finish(
  source: string,
  columns: string[],
  n: number,
  types: (SourceType | undefined)[] | undefined,
  merged: Omit<Merged, "n">,
  threads: number,
  countPairs: PairCounter,
  close: () => Promise<void>,
): TableTally {
  const { dicts, overflow, ids, lines, rows } = merged;
  const F = columns.length;
  const sampled = rows < n;
  const full = dicts.map((d, c) => (overflow[c] ? undefined : fullScan(columns[c], d.values, d.counts, d.firstLines, n, types?.[c])));
  const sampleScans = dicts.map((d, c): ColumnScan => {
    const rowIds = new Int32Array(rows);
    for (let r = 0; r < rows; r++) rowIds[r] = ids[r * F + c];
    const s = full[c];
    if (!sampled && s) return { ...s, ids: rowIds };
    // Only the values the sample holds, re-indexed in order of appearance, counted in it.
    const local = new Map<number, number>();
    const values: string[] = [];
    const counts: number[] = [];
    const firstLines: number[] = [];
    let missing = 0;
    for (let r = 0; r < rows; r++) {
      const g = rowIds[r];
      let id = local.get(g);
      if (id === undefined) {
        id = values.length;
        local.set(g, id);
        values.push(s ? s.values[g] : d.values[g]);
        counts.push(0);
        firstLines.push(s ? s.firstLines[g] : lines[r]);
      }
      counts[id]++;
      if (values[id] === "") missing++;
      rowIds[r] = id;
    }
    const o = overflow[c];
    const numeric = s ? s.numeric : o!.numeric && o!.rows > 0 && types?.[c] !== "text" && types?.[c] !== "dictionary";
    const whole = !s && types?.[c] === "timestamp" && o!.wholeSeconds;
    const texts = whole ? values.map((v) => (v === "" ? v : v.slice(0, -4))) : values;
    return { name: columns[c], values: texts, counts, firstLines, ids: rowIds, missing, numeric: numeric && missing < rows };
  });
  // Numbers written with a format (`./columns/number-format`): one format per column, found on
  // the table's values (an overflowed column's: the sample's), read in both scans.
  const formats = dicts.map((_, c) => {
    if (types?.[c] !== undefined) return undefined;
    const s = full[c] ?? sampleScans[c];
    return s.numeric || s.missing === s.values.length ? undefined : inferNumberFormat(s.values);
  });
  formats.forEach((format, c) => {
    if (format === undefined) return;
    sampleScans[c] = withNumberFormat(sampleScans[c], format);
    if (full[c]) full[c] = withNumberFormat(full[c]!, format);
  });
  // Datetimes with a missing text (`NA`): the text is read as a blank in both scans.
  dicts.forEach((_, c) => {
    if (types?.[c] !== undefined || formats[c] !== undefined) return;
    const s = full[c] ?? sampleScans[c];
    if (s.numeric) return;
    const text = missingTextOf(s.values, (rest) => inferDatetimeFormat(rest)?.parsed === rest.length);
    if (text === undefined) return;
    sampleScans[c] = withMissingText(sampleScans[c], text);
    if (full[c]) full[c] = withMissingText(full[c]!, text);
  });
  const scans = dicts.map((_, c): ColumnScan => {
    const o = overflow[c];
    if (!o) return full[c]!;
    return sampled ? overflowScan(sampleScans[c], o) : { ...sampleScans[c], ids: new Int32Array(0) };
  });
  return {
    source,
    columns,
    n,
    ...(types ? { types } : {}),
    scans,
    overflow: overflow.map((o) => (o instanceof Overflow ? o.stats() : o)),
    sample: { source, columns, n: rows, scans: sampleScans, ...(types ? { types } : {}) },
    sampled,
    threads,
    countPairs,
    close,
  };
}

/** Pass 1 (and 2) by `../io/csv`'s readTable on this thread. */
async function sequentialTally(source: TableSource, opts: TallyOptions, size: number, budget: number): Promise<TableTally> {
  let columns: string[] = [];
  let types: (SourceType | undefined)[] = [];
  let tally: RecordTally | undefined;
  const read = { minColumns: 2, delimiter: opts.delimiter, encoding: opts.encoding, onProgress: opts.onReadProgress };
  const n = await readTable(
    source,
    (header, declared) => {
      columns = header;
      types = declared.slice();
      tally = new RecordTally(header.length, size, budget);
    },
    (record, line) => tally!.add(record, line),
    read,
  );
  const kept = tally!.sample.rows();
  const typed = types.some((t) => t !== undefined) ? types : undefined;
  const describe = describeSource(source);
  const dicts = tally!.columns.map((p) => p.dict);
  const merged: Merged = { n, dicts, overflow: tally!.columns.map((p) => p.overflow?.stats()), ids: kept.ids, lines: kept.keys, rows: kept.keys.length };
  return finish(describe, columns, n, typed, merged, 0, async (pairs, cards, codeOfId, encoders) => {
    const layout = pairLayout(pairs, cards);
    const counter = new RecordPairs({ index: dicts.map((d, c) => (encoders[c] ? null : d.index)), codeOfId, encoders, cards, ...layout });
    await readTable(
      source,
      () => undefined,
      (record, line) => {
        let known: boolean;
        try {
          known = counter.add(record, line);
        } catch (e) {
          throw e instanceof BadValue ? badValue(describe, columns, encoders, e) : e;
        }
        if (!known) throw changed(describe);
      },
      read,
    );
    if (counter.rows !== n) throw changed(describe);
    const out = counter.result();
    return { joint: splitPairs([out.joint], layout, pairs), counts: out.counts, moments: out.moments };
  }, async () => undefined);
}

/** The DataError of a value pass 2 cannot encode in an overflowed column (its kind came from the sample). */
function badValue(source: string, columns: readonly string[], encoders: readonly (ValueEncoder | null)[], e: BadValue): DataError {
  const enc = encoders[e.column]!;
  const name = columns[e.column];
  const what =
    enc.kind === "bins"
      ? enc.format !== undefined
        ? `is not a datetime in the format ${enc.format} of the column's sampled values`
        : "is not a number, but the column's sampled values are"
      : "is a value the column's code book has no code for (no pooled code)";
  return new DataError(
    `${source}, line ${e.line}, column "${name}": ${JSON.stringify(e.value)} ${what}; fix the value or declare the column's kind ` +
      `(columns: {"${name}": {"type": "categorical"}}).`,
    { column: name, line: e.line, file: fileOfDescription(source) },
  );
}

function changed(source: string): DataError {
  return new DataError(`${source} changed while it was read (its second pass differs from the first).`, { file: fileOfDescription(source) });
}
