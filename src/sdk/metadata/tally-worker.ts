/**
 * The worker thread of `./table-tally`: runs one pass per message, of `./csv-chunks` over a byte
 * range of a CSV file or of `./record-tally` over row groups of a Parquet file.
 */
import { parentPort } from "node:worker_threads";
import { parquetRows } from "../io/typed-inputs";
import { DataError } from "../errors";
import { RecordPairs, RecordTally } from "./record-tally";
import type { ValueEncoder } from "./distinct-values";
import { Bail, BadValue, countLines, countPairsInRange, tallyRange, type ChunkJob, type PairCounts, type PairJob, type TallyJob } from "./csv-chunks";

/** Row groups [first, end) of a Parquet file. */
export interface GroupJob {
  path: string;
  groups: [number, number];
}

/** Pass 1 over row groups. */
export interface GroupTallyJob extends GroupJob {
  columns: number;
  sampleRows: number;
  distinctBudget: number;
}

/** Pass 2 over row groups: `./csv-chunks` PairJob's fields but the byte range. */
export interface GroupPairJob extends GroupJob {
  values: string[][];
  codeOfId: Int32Array[];
  encoders: (ValueEncoder | null)[];
  cards: Int32Array;
  pairs: Int32Array;
  cardsOfSecond: Int32Array;
  offsets: Int32Array;
  cells: number;
}

/** A message to the worker. */
export type WorkerTask =
  | { kind: "lines"; job: ChunkJob }
  | { kind: "tally"; job: TallyJob }
  | { kind: "pairs"; job: PairJob }
  | { kind: "groups"; job: GroupTallyJob }
  | { kind: "groupPairs"; job: GroupPairJob };

/** Rows between progress reports of row groups. */
const REPORT_ROWS = 1 << 16;

/**
 * Feeds `add` every data row of the job's row groups in order (the header batch skipped), with
 * progress in rows; `add` returns false to stop with {@link Bail} `why`.
 */
async function eachGroupRow(
  job: GroupJob,
  add: (row: string[], line: number) => boolean,
  rowsSoFar: () => number,
  progress: (rows: number, total: number) => void,
  why: string,
): Promise<void> {
  let reported = 0;
  const { batches } = parquetRows(job.path, undefined, job.groups);
  let header = true;
  for await (const b of batches) {
    if (header) {
      header = false;
      continue;
    }
    for (let r = 0; r < b.rows.length; r++) if (!add(b.rows[r], b.lines[r])) throw new Bail(why);
    if (rowsSoFar() - reported >= REPORT_ROWS) {
      progress(rowsSoFar() - reported, rowsSoFar());
      reported = rowsSoFar();
    }
  }
  progress(rowsSoFar() - reported, rowsSoFar());
}

/** Pass 1 over row groups; progress in rows. */
async function tallyGroups(job: GroupTallyJob, progress: (rows: number, total: number) => void): Promise<ReturnType<typeof tallyRange>> {
  const tally = new RecordTally(job.columns, job.sampleRows, job.distinctBudget);
  await eachGroupRow(job, (row, line) => (tally.add(row, line), true), () => tally.rows, progress, "");
  return tally.result();
}

/** Pass 2 over row groups. @throws Bail for a value pass 1 did not see. */
async function pairGroups(job: GroupPairJob, progress: (rows: number, total: number) => void): Promise<PairCounts> {
  const counter = new RecordPairs({ ...job, index: job.values.map((vs, c) => (job.encoders[c] ? null : new Map(vs.map((v, id) => [v, id])))) });
  await eachGroupRow(job, (row, line) => counter.add(row, line), () => counter.rows, progress, "a value the first pass did not see (the file changed)");
  return counter.result();
}

/** A message from the worker: progress, a result, why the range could not be read, or a value pass 2 cannot encode. */
export type WorkerReply =
  | { kind: "progress"; bytes: number; rows: number }
  | { kind: "tally"; result: ReturnType<typeof tallyRange> }
  | { kind: "pairs"; result: PairCounts }
  | { kind: "lines"; result: number }
  | { kind: "bail"; message: string }
  | { kind: "bad"; column: number; line: number; value: string }
  | { kind: "error"; message: string };

const port = parentPort;
if (port) {
  const progress = (bytes: number, rows: number): void => port.postMessage({ kind: "progress", bytes, rows } satisfies WorkerReply);
  port.on("message", async (task: WorkerTask) => {
    try {
      if (task.kind === "groups") port.postMessage({ kind: "tally", result: await tallyGroups(task.job, progress) } satisfies WorkerReply);
      else if (task.kind === "groupPairs") port.postMessage({ kind: "pairs", result: await pairGroups(task.job, progress) } satisfies WorkerReply);
      else if (task.kind === "lines") port.postMessage({ kind: "lines", result: countLines(task.job) } satisfies WorkerReply);
      else if (task.kind === "tally") port.postMessage({ kind: "tally", result: tallyRange(task.job, progress) } satisfies WorkerReply);
      else port.postMessage({ kind: "pairs", result: countPairsInRange(task.job, progress) } satisfies WorkerReply);
    } catch (e) {
      if (e instanceof BadValue) {
        port.postMessage({ kind: "bad", column: e.column, line: e.line, value: e.value } satisfies WorkerReply);
        return;
      }
      // A reader's DataError: the one-thread read gives it with its context.
      port.postMessage({ kind: e instanceof Bail || e instanceof DataError ? "bail" : "error", message: (e as Error).message } satisfies WorkerReply);
    }
  });
}
