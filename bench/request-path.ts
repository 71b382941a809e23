/**
 * `npm run bench -- request-path [--json]`: which files of `src` one plain Generate request runs
 * on the server's main thread, and their lines: the HTTP adapter, the pipeline's steps, the
 * handler, quota, the engine up to the worker task, the store (issue 26 counts these as what a
 * reader follows). The worker thread's side (dispatch, the model) is not in it.
 *
 * Method: `serve()` (embedded topology, one worker) in this process on a temporary store; fit UCI
 * Adult (discretized, 1 epoch) through the SDK; one warm-up request; then V8's precise coverage
 * (`Profiler.startPreciseCoverage`, call counts) around one more plain JSON Generate of 1,000
 * rows. A file counts when any of its functions ran in that window; the SDK's own files (the
 * client side, in the same process) are left out. Lines are those of the `.ts` source. An index
 * file that only re-exports counts as well: its compiled getters run when the names are read.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { Session } from "node:inspector";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import pino from "pino";
import { serve } from "../src/server/serve";
import { Synthd, Synthesizer } from "../src/sdk";
import { SHARED_DATASETS } from "./harness";

/** Options of {@link requestPathBench}. */
export interface RequestPathOptions {
  json?: boolean;
}

interface ScriptCoverage {
  url: string;
  functions: { ranges: { count: number }[] }[];
}

/** Runs the measurement and prints the file count, line count and the files with their lines. */
export async function requestPathBench(opts: RequestPathOptions): Promise<void> {
  const root = resolve(__dirname, "..", "..");
  const dataDir = mkdtempSync(join(tmpdir(), "synthd-bench-request-path-"));
  const server = await serve({ host: "127.0.0.1", port: 0, dataDir, workers: 1, logger: pino({ level: "silent" }) });
  const session = new Session();
  try {
    const client = new Synthd({ apiKey: server.sandboxKey!, baseUrl: server.url });
    const synth = await Synthesizer.fit(client, join(SHARED_DATASETS, "adult-discrete.csv"), { config: { max_epochs: 1, early_stop_patience: 0 } });
    await client.models.generate(synth.id, { embedding: { num_rows: 1000, seed: 1 } });
    session.connect();
    const post = <T>(method: string, params?: object): Promise<T> =>
      new Promise((res, rej) => session.post(method, params ?? {}, (e, r) => (e ? rej(e) : res(r as T))));
    await post("Profiler.enable");
    await post("Profiler.startPreciseCoverage", { callCount: true, detailed: false });
    await client.models.generate(synth.id, { embedding: { num_rows: 1000, seed: 2 } });
    const { result } = await post<{ result: ScriptCoverage[] }>("Profiler.takePreciseCoverage");
    await post("Profiler.stopPreciseCoverage");
    const files = result
      .filter((s) => s.url.includes("/dist/src/") && !s.url.includes("/dist/src/sdk/") && s.functions.some((f) => f.ranges[0].count > 0))
      .map((s) => relative(root, s.url.replace(/^file:\/\//, "").replace("/dist/src/", "/src/").replace(/\.js$/, ".ts")))
      .sort();
    const lines = files.map((f) => readFileSync(join(root, f), "utf8").split("\n").length - 1);
    const total = lines.reduce((a, b) => a + b, 0);
    if (opts.json) console.log(JSON.stringify({ bench: "request-path", files: files.length, lines: total, list: files.map((f, i) => [f, lines[i]]) }));
    else {
      console.log(`one plain Generate request, server main thread: ${files.length} files, ${total} lines`);
      files.forEach((f, i) => console.log(`  ${f} ${lines[i]}`));
    }
  } finally {
    session.disconnect();
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
