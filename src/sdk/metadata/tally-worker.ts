/** The worker thread of `./table-tally`: runs one pass of `./csv-chunks` over a byte range per message. */
import { parentPort } from "node:worker_threads";
import { Bail, BadValue, countLines, countPairsInRange, tallyRange, type ChunkJob, type PairCounts, type PairJob, type TallyJob } from "./csv-chunks";

/** A message to the worker. */
export type WorkerTask = { kind: "lines"; job: ChunkJob } | { kind: "tally"; job: TallyJob } | { kind: "pairs"; job: PairJob };

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
  port.on("message", (task: WorkerTask) => {
    try {
      if (task.kind === "lines") port.postMessage({ kind: "lines", result: countLines(task.job) } satisfies WorkerReply);
      else if (task.kind === "tally") port.postMessage({ kind: "tally", result: tallyRange(task.job, progress) } satisfies WorkerReply);
      else port.postMessage({ kind: "pairs", result: countPairsInRange(task.job, progress) } satisfies WorkerReply);
    } catch (e) {
      if (e instanceof BadValue) {
        port.postMessage({ kind: "bad", column: e.column, line: e.line, value: e.value } satisfies WorkerReply);
        return;
      }
      port.postMessage({ kind: e instanceof Bail ? "bail" : "error", message: (e as Error).message } satisfies WorkerReply);
    }
  });
}
