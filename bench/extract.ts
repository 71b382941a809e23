/**
 * `npm run bench -- extract [--rows N] [--threads T] [--no-duckdb] [--filter] [--id-columns] [--distinct-budget B] [--json]`: metadata extraction
 * (`analyzeTable`, the whole client side of `synthd fit` before the upload: scan, kind inference,
 * code books, pair selection, 1-way and 2-way marginals, rule detection) against DuckDB on the same
 * file in the same run (issue 42, docs/extract.md).
 *
 * Method:
 * 1. Writes a temporary CSV of N rows (default 1,000,000) by repeating the data rows of UCI Adult
 *    (`../shared/datasets/adult.csv`, 15 columns) under its header, streamed; it is deleted after
 *    the run (100M rows are about 11 GB). With `--id-columns`, each row begins with `row_id` (its
 *    number) and `score` (a float unique to the row): columns with a value per row, which pass 1
 *    keeps only up to its distinct-value budget (`--distinct-budget`, docs/extract.md).
 * 2. Measures, each in a fresh Node process (this file run as a script) so each peak is its own:
 *    synthd's `analyzeTable(file)` with the SDK's defaults (worker threads: the available cores,
 *    or `--threads`), and DuckDB (`@duckdb/node-api`, 2 threads): the CSV read into a table, then
 *    every 1-way and every 2-way count (`GROUP BY` per column and per pair, results read).
 *    Per run: wall seconds (modules loaded), core-seconds (`process.cpuUsage()` of the whole
 *    process, its threads included), peak RSS (the larger of `process.resourceUsage().maxRSS` and
 *    an RSS sampled every 50 ms).
 * 3. Acceptance (issue 42): synthd's wall <= DuckDB's, core-s <= 1.2x DuckDB's, peak RSS < 1 GiB.
 *    The machine's load average is printed before and after: other work on it slows both alike,
 *    which is why only ratios within one run are compared.
 * 4. `--filter`: instead, the near-copy filter `synthd fit` builds (`NearCopyFilter.build`, its
 *    defaults) on N rows whose every cell comes from an independent random Adult row (seeded), so
 *    that, as in a table of people, few rows nearly copy another and the filter is built (Adult
 *    repeated is all near-copies: no filter). Same measures; no DuckDB run.
 * Prints one JSON line with `--json`, else a few lines.
 */
import { spawn } from "node:child_process";
import { createReadStream, createWriteStream, statSync } from "node:fs";
import { once } from "node:events";
import { loadavg } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { analyzeTable } from "../src/sdk/metadata/metadata";
import { NearCopyFilter } from "../src/sdk/privacy/filter";
import { Rng } from "../src/sdk/generate/sfc32";
import { SHARED_DATASETS, removeDir, tempDir } from "./harness";

/** The table repeated. */
export const ADULT_SHARED_CSV = join(SHARED_DATASETS, "adult.csv");
/** Acceptance: peak RSS of an extraction. */
export const MEMORY_TARGET_BYTES = 1024 ** 3;
/** Acceptance: synthd's core-seconds over DuckDB's. */
export const CORE_RATIO_TARGET = 1.2;

/** Options of the extract benchmark (commander's parsed flags). */
export interface ExtractBenchOptions {
  rows: number;
  threads?: number;
  duckdb: boolean;
  /** Measure the near-copy filter's build (item 4 of the file header) instead of extraction. */
  filter?: boolean;
  json: boolean;
  idColumns?: boolean;
  distinctBudget?: number;
}

/** One measured run. */
export interface ExtractRun {
  tool: "synthd" | "duckdb" | "filter";
  rows: number;
  seconds: number;
  core_seconds: number;
  /** max(maxRSS, sampled RSS), bytes. */
  peak_rss: number;
  rows_per_s: number;
  /** synthd: the column kinds and counts of what was found. */
  detail?: Record<string, unknown>;
}

/** The JSON line the benchmark prints. */
export interface ExtractResult {
  bench: "extract";
  rows: number;
  bytes: number;
  id_columns: boolean;
  load_before: number[];
  load_after: number[];
  synthd: ExtractRun;
  duckdb?: ExtractRun;
  wall_ratio?: number;
  core_ratio?: number;
  memory_ok: boolean;
  wall_ok?: boolean;
  core_ok?: boolean;
}

/**
 * Writes `rows` data rows to `dest` by cycling through the data rows of `source` (its header
 * first); with `perRow`, each row prefixed by its number (`row_id`) and a float unique to it
 * (`score`, 0 <= score < 1000). Streams, with backpressure.
 */
export async function repeatCsv(source: string, dest: string, rows: number, perRow = false): Promise<void> {
  const lines: string[] = [];
  let header: string | undefined;
  const rl = createInterface({ input: createReadStream(source, "utf8"), crlfDelay: Infinity });
  for await (const line of rl) {
    if (header === undefined) header = line;
    else if (line !== "") lines.push(line);
  }
  if (header === undefined || lines.length === 0) throw new Error(`${source} has no data rows`);
  const out = createWriteStream(dest);
  const write = async (s: string): Promise<void> => {
    if (!out.write(s)) await once(out, "drain");
  };
  await write(`${perRow ? "row_id,score," : ""}${header}\n`);
  const block = 5_000;
  for (let done = 0; done < rows; ) {
    const parts: string[] = [];
    for (let i = 0; i < block && done < rows; i++, done++) {
      const line = lines[done % lines.length];
      // done * phi mod 1000: distinct for distinct rows at 7 decimals up to 10^10 rows.
      parts.push(perRow ? `${done + 1},${((done * 0.6180339887) % 1000).toFixed(7)},${line}` : line);
    }
    await write(`${parts.join("\n")}\n`);
  }
  out.end();
  await once(out, "finish");
}

/**
 * Writes `rows` data rows to `dest`, each cell from an independent random data row of `source`
 * (seeded; its header first). Fields are split at commas: a source with quotes is refused.
 */
export async function independentColumnsCsv(source: string, dest: string, rows: number, seed = 42): Promise<void> {
  const cells: string[][] = [];
  let header: string | undefined;
  const rl = createInterface({ input: createReadStream(source, "utf8"), crlfDelay: Infinity });
  for await (const line of rl) {
    if (line.includes('"')) throw new Error(`${source} has quoted fields; the bench splits at commas`);
    if (header === undefined) header = line;
    else if (line !== "") cells.push(line.split(","));
  }
  if (header === undefined || cells.length === 0) throw new Error(`${source} has no data rows`);
  const F = header.split(",").length;
  const rng = new Rng(seed);
  const out = createWriteStream(dest);
  out.write(`${header}\n`);
  for (let done = 0; done < rows; ) {
    const parts: string[] = [];
    for (let i = 0; i < 5_000 && done < rows; i++, done++) parts.push(Array.from({ length: F }, (_, c) => cells[rng.int(cells.length)][c]).join(","));
    if (!out.write(`${parts.join("\n")}\n`)) await once(out, "drain");
  }
  out.end();
  await once(out, "finish");
}

/** Runs `work` in this process with the measures of the module comment. */
async function measured(tool: ExtractRun["tool"], work: () => Promise<{ rows: number; detail?: Record<string, unknown> }>): Promise<ExtractRun> {
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 50);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const { rows, detail } = await work();
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  clearInterval(timer);
  peak = Math.max(peak, process.memoryUsage().rss, process.resourceUsage().maxRSS * 1024);
  return { tool, rows, seconds, core_seconds: (cpu.user + cpu.system) / 1e6, peak_rss: peak, rows_per_s: rows / seconds, ...(detail ? { detail } : {}) };
}

/** synthd's extraction of `file` (the child side). */
function measureSynthd(file: string, threads: number | undefined, distinctBudget: number | undefined): Promise<ExtractRun> {
  return measured("synthd", async () => {
    const a = await analyzeTable(file, { ...(threads === undefined ? {} : { threads }), ...(distinctBudget === undefined ? {} : { distinctBudget }) });
    return {
      rows: a.n,
      detail: {
        kinds: Object.fromEntries(a.codecs.map((c) => [c.name, c.kind])),
        pairs: a.metadata.marginals?.length ?? 0,
        rules: a.metadata.rules?.length ?? 0,
        sampled_rows: a.sampledRows ?? a.n,
      },
    };
  });
}

/** The near-copy filter's build on `file` (the child side), with a fixed key. */
function measureFilter(file: string, threads: number | undefined): Promise<ExtractRun> {
  return measured("filter", async () => {
    const built = await NearCopyFilter.build(file, {}, new Uint8Array(32).fill(1), threads === undefined ? {} : { threads });
    const f = built.filter;
    return {
      rows: f?.tableRows ?? 0,
      detail: {
        split_share: built.splitShare,
        ...(f ? { protected_rows: f.rows, target_share: f.targetShare, filter_mib: f.bytes / 2 ** 20, false_positive_per_key: f.falsePositiveRate() } : { reason: built.reason }),
      },
    };
  });
}

/** DuckDB's read and counts of `file` (the child side), 2 threads. */
function measureDuckdb(file: string): Promise<ExtractRun> {
  return measured("duckdb", async () => {
    const { DuckDBInstance } = require("@duckdb/node-api") as typeof import("@duckdb/node-api");
    const db = await DuckDBInstance.create(":memory:", { threads: "2" });
    const con = await db.connect();
    await con.run(`CREATE TABLE t AS SELECT * FROM read_csv('${file.replace(/'/g, "''")}')`);
    const cols = (await con.runAndReadAll("SELECT column_name FROM information_schema.columns WHERE table_name = 't' ORDER BY ordinal_position"))
      .getRows()
      .map((r) => String(r[0]));
    const q = (c: string): string => `"${c.replace(/"/g, '""')}"`;
    let cells = 0;
    for (const c of cols) cells += (await con.runAndReadAll(`SELECT ${q(c)}, count(*) FROM t GROUP BY 1`)).getRows().length;
    for (let i = 0; i < cols.length; i++) {
      for (let j = i + 1; j < cols.length; j++) {
        cells += (await con.runAndReadAll(`SELECT ${q(cols[i])}, ${q(cols[j])}, count(*) FROM t GROUP BY 1, 2`)).getRows().length;
      }
    }
    const rows = Number((await con.runAndReadAll("SELECT count(*) FROM t")).getRows()[0][0]);
    con.closeSync();
    return { rows, detail: { count_rows: cells } };
  });
}

/** Runs one measurement in a fresh Node process and returns its result. */
function inChild(args: string[]): Promise<ExtractRun> {
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, [__filename, "--measure", ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.once("exit", (code) => {
      if (code !== 0) rej(new Error(`extract measurement ${args.join(" ")} exited with ${code}: ${err.trim()}`));
      else res(JSON.parse(out) as ExtractRun);
    });
  });
}

/** Runs the benchmark and prints its result. */
export async function extractBench(opts: ExtractBenchOptions): Promise<void> {
  if (!(Number.isInteger(opts.rows) && opts.rows >= 1)) throw new Error("--rows must be a positive integer");
  if (opts.threads !== undefined && !(Number.isInteger(opts.threads) && opts.threads >= 0)) throw new Error("--threads must be an integer >= 0");
  const log = (s: string): void => {
    if (!opts.json) process.stderr.write(`${s}\n`);
  };
  const dir = tempDir("synthd-extract-");
  try {
    const big = join(dir, `adult-${opts.rows}.csv`);
    const what = opts.filter ? "cells of independent random adult.csv rows" : `adult.csv repeated${opts.idColumns ? ", with row_id and score" : ""}`;
    log(`writing ${opts.rows} rows (${what}) to ${big}`);
    if (opts.filter) await independentColumnsCsv(ADULT_SHARED_CSV, big, opts.rows);
    else await repeatCsv(ADULT_SHARED_CSV, big, opts.rows, opts.idColumns === true);
    const bytes = statSync(big).size;
    const loadBefore = loadavg();
    log(`synthd: ${opts.filter ? "NearCopyFilter.build" : "analyzeTable"} (load average ${loadBefore.map((x) => x.toFixed(1)).join(" ")})`);
    const synthd = await inChild([opts.filter ? "filter" : "synthd", big, String(opts.threads ?? ""), String(opts.distinctBudget ?? "")]);
    let duckdb: ExtractRun | undefined;
    if (opts.duckdb && !opts.filter) {
      log("duckdb: read_csv, then every 1-way and 2-way count (2 threads)");
      duckdb = await inChild(["duckdb", big]);
    }
    const result: ExtractResult = {
      bench: "extract",
      rows: opts.rows,
      bytes,
      id_columns: opts.idColumns === true,
      load_before: loadBefore,
      load_after: loadavg(),
      synthd,
      memory_ok: synthd.peak_rss < MEMORY_TARGET_BYTES,
      ...(duckdb
        ? {
            duckdb,
            wall_ratio: synthd.seconds / duckdb.seconds,
            core_ratio: synthd.core_seconds / duckdb.core_seconds,
            wall_ok: synthd.seconds <= duckdb.seconds,
            core_ok: synthd.core_seconds <= CORE_RATIO_TARGET * duckdb.core_seconds,
          }
        : {}),
    };
    if (opts.json) console.log(JSON.stringify(result));
    else console.log(formatExtract(result));
  } finally {
    removeDir(dir);
  }
}

/** The human-readable lines of an {@link ExtractResult}. */
export function formatExtract(r: ExtractResult): string {
  const mib = (b: number): string => `${(b / 1024 ** 2).toFixed(0)} MiB`;
  const line = (x: ExtractRun): string =>
    `${x.tool.padEnd(7)} ${x.seconds.toFixed(1).padStart(7)} s ${x.core_seconds.toFixed(1).padStart(7)} core-s  peak RSS ${mib(x.peak_rss).padStart(9)}  ` +
    `${Math.round(x.rows_per_s).toLocaleString("en-US")} rows/s`;
  const ok = (b: boolean | undefined): string => (b ? "PASS" : "FAIL");
  return [
    `${r.synthd.tool === "filter" ? "near-copy filter build on adult.csv's cells drawn independently," : `extraction of adult.csv${r.id_columns ? " with row_id and score" : ""} repeated to`} ${r.rows.toLocaleString("en-US")} rows (${(r.bytes / 1e9).toFixed(2)} GB); each run in a fresh process; ` +
      `load average ${r.load_before[0].toFixed(1)} before, ${r.load_after[0].toFixed(1)} after`,
    line(r.synthd),
    ...(r.duckdb ? [line(r.duckdb)] : []),
    ...(r.duckdb ? [`wall ${r.wall_ratio!.toFixed(2)}x DuckDB's (target <= 1): ${ok(r.wall_ok)}; core-s ${r.core_ratio!.toFixed(2)}x (target <= ${CORE_RATIO_TARGET}): ${ok(r.core_ok)}`] : []),
    `peak RSS ${mib(r.synthd.peak_rss)} (target < ${mib(MEMORY_TARGET_BYTES)}): ${ok(r.memory_ok)}`,
    `synthd: ${JSON.stringify(r.synthd.detail)}`,
  ].join("\n");
}

if (require.main === module && process.argv[2] === "--measure") {
  const [tool, file, threads, budget] = process.argv.slice(3);
  const t = threads ? Number(threads) : undefined;
  (tool === "duckdb" ? measureDuckdb(file) : tool === "filter" ? measureFilter(file, t) : measureSynthd(file, t, budget ? Number(budget) : undefined))
    .then((r) => console.log(JSON.stringify(r)))
    .catch((e) => {
      console.error((e as Error).message);
      process.exit(1);
    });
}
