/**
 * `npm run bench -- extract [--rows N] [--json]`: metadata extraction (`analyzeTable`, the whole
 * client-side step of `Synthesizer.fit` before the upload: scan, kind inference, code books,
 * encoding, pair selection, marginals) on a large table: rows per second and peak memory.
 *
 * Method:
 * 1. Writes a temporary CSV of N rows (default 1,000,000) by repeating the data rows of
 *    `../shared/datasets/real/flights-20k.csv` (5 columns: a datetime, two integers, two airport
 *    codes) under its header.
 * 2. Measures `analyzeTable(path)` with the SDK's defaults on the shared 20,000-row file itself
 *    (the baseline), then on the N-row file, each in a fresh Node process (this file run as a
 *    script), so each peak is that run's own: `process.memoryUsage().rss` sampled every 50 ms
 *    while it runs (`peak_rss_sampled`; the timer cannot fire inside synchronous stretches) and
 *    `process.resourceUsage().maxRSS` at the end (`max_rss`, the kernel's high-water mark of the
 *    whole process, Node's own ~50 MB included). Seconds are `analyzeTable` alone (modules loaded).
 * 3. Reports rows/s of both, `seconds_per_row_ratio` = (seconds per row at N) / (seconds per row
 *    at 20,000) (1 = linear; below 1 = fixed costs amortised), and the acceptance target: peak
 *    memory (the larger of the two measures) under 1 GiB for 1M rows.
 * Prints one JSON line with `--json`, else a few lines.
 */
import { spawn } from "node:child_process";
import { createReadStream, createWriteStream, statSync } from "node:fs";
import { once } from "node:events";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { analyzeTable } from "../src/sdk/metadata/metadata";
import { SHARED_DATASETS, removeDir, tempDir } from "./harness";

/** The table repeated. */
export const FLIGHTS_CSV = join(SHARED_DATASETS, "real", "flights-20k.csv");
/** Acceptance target: peak RSS of extracting 1M rows. */
export const MEMORY_TARGET_BYTES = 1024 ** 3;

/** Options of the extract benchmark (commander's parsed flags). */
export interface ExtractBenchOptions {
  rows: number;
  json: boolean;
}

/** One measured `analyzeTable` run. */
export interface ExtractRun {
  file: string;
  bytes: number;
  rows: number;
  columns: number;
  seconds: number;
  rows_per_s: number;
  /** Highest `process.memoryUsage().rss` seen by the 50 ms sampler (bytes). */
  peak_rss_sampled: number;
  /** `process.resourceUsage().maxRSS` at the end (bytes). */
  max_rss: number;
  /** RSS before the run started (bytes): Node and the loaded modules. */
  rss_before: number;
  kinds: Record<string, string>;
}

/** The JSON line the benchmark prints. */
export interface ExtractResult {
  bench: "extract";
  rows: number;
  run: ExtractRun;
  baseline: ExtractRun;
  /** (seconds per row at `rows`) / (seconds per row of the baseline). */
  seconds_per_row_ratio: number;
  /** max(peak_rss_sampled, max_rss) of the large run, bytes. */
  peak_rss: number;
  memory_target_bytes: number;
  memory_ok: boolean;
}

/**
 * Writes `rows` data rows to `dest` by cycling through the data rows of `source` (its header
 * first). Streams, with backpressure.
 */
export async function repeatCsv(source: string, dest: string, rows: number): Promise<void> {
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
  await write(`${header}\n`);
  const block = 5_000;
  for (let done = 0; done < rows; ) {
    const parts: string[] = [];
    for (let i = 0; i < block && done < rows; i++, done++) parts.push(lines[done % lines.length]);
    await write(`${parts.join("\n")}\n`);
  }
  out.end();
  await once(out, "finish");
}

/** Runs one measurement in this process (the child side). */
async function measure(file: string): Promise<ExtractRun> {
  const rssBefore = process.memoryUsage().rss;
  let peak = rssBefore;
  const timer = setInterval(() => {
    const rss = process.memoryUsage().rss;
    if (rss > peak) peak = rss;
  }, 50);
  const t0 = performance.now();
  const a = await analyzeTable(file);
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(timer);
  peak = Math.max(peak, process.memoryUsage().rss);
  return {
    file,
    bytes: statSync(file).size,
    rows: a.n,
    columns: a.columns.length,
    seconds,
    rows_per_s: a.n / seconds,
    peak_rss_sampled: peak,
    max_rss: process.resourceUsage().maxRSS * 1024,
    rss_before: rssBefore,
    kinds: Object.fromEntries(a.codecs.map((c) => [c.name, c.kind])),
  };
}

/** Runs {@link measure} on `file` in a fresh Node process and returns its result. */
function measureInChild(file: string): Promise<ExtractRun> {
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, [__filename, "--measure", file], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.once("exit", (code) => {
      if (code !== 0) rej(new Error(`extract measurement of ${file} exited with ${code}: ${err.trim()}`));
      else res(JSON.parse(out) as ExtractRun);
    });
  });
}

/** Runs the benchmark and prints its result. */
export async function extractBench(opts: ExtractBenchOptions): Promise<void> {
  if (!(Number.isInteger(opts.rows) && opts.rows >= 1)) throw new Error("--rows must be a positive integer");
  const log = (s: string): void => {
    if (!opts.json) process.stderr.write(`${s}\n`);
  };
  const dir = tempDir("synthd-extract-");
  try {
    const big = join(dir, `flights-${opts.rows}.csv`);
    log(`writing ${opts.rows} rows (flights-20k.csv repeated) to ${big}`);
    await repeatCsv(FLIGHTS_CSV, big, opts.rows);
    log(`baseline: analyzeTable on ${FLIGHTS_CSV}`);
    const baseline = await measureInChild(FLIGHTS_CSV);
    log(`analyzeTable on ${opts.rows} rows`);
    const run = await measureInChild(big);
    const peak = Math.max(run.peak_rss_sampled, run.max_rss);
    const result: ExtractResult = {
      bench: "extract",
      rows: opts.rows,
      run,
      baseline,
      seconds_per_row_ratio: run.seconds / run.rows / (baseline.seconds / baseline.rows),
      peak_rss: peak,
      memory_target_bytes: MEMORY_TARGET_BYTES,
      memory_ok: peak < MEMORY_TARGET_BYTES,
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
  const line = (name: string, x: ExtractRun): string =>
    `${name.padEnd(10)} ${String(x.rows).padStart(9)} rows ${(x.bytes / 1e6).toFixed(1).padStart(6)} MB ${x.seconds.toFixed(2).padStart(7)} s ` +
    `${Math.round(x.rows_per_s).toString().padStart(9)} rows/s  peak RSS ${mib(Math.max(x.peak_rss_sampled, x.max_rss))} ` +
    `(sampled ${mib(x.peak_rss_sampled)}, maxRSS ${mib(x.max_rss)}, before ${mib(x.rss_before)})`;
  return [
    `analyzeTable (SDK defaults) on flights-20k.csv repeated; each run in a fresh process`,
    line("baseline", r.baseline),
    line(`${r.rows}`, r.run),
    `seconds per row vs baseline: ${r.seconds_per_row_ratio.toFixed(2)}x`,
    `peak memory ${mib(r.peak_rss)} (target < ${mib(r.memory_target_bytes)}): ${r.memory_ok ? "PASS" : "FAIL"}`,
    `kinds: ${Object.entries(r.run.kinds).map(([c, k]) => `${c} ${k}`).join(", ")}`,
  ].join("\n");
}

if (require.main === module && process.argv[2] === "--measure") {
  measure(process.argv[3])
    .then((r) => console.log(JSON.stringify(r)))
    .catch((e) => {
      console.error((e as Error).message);
      process.exit(1);
    });
}
