/**
 * Harness shared by the demo, the benchmarks and the integration tests: runs the real `synthd`
 * CLI (compiled JS) as child processes, so they exercise exactly what a user runs: the
 * uWebSockets.js server, the piscina engine, LMDB.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

/** Absolute path of the compiled CLI entry point. */
export const CLI = resolve(__dirname, "../src/cli/main.js");
/** The project's shipped demo table (UCI Adult). */
export const ADULT_CSV = resolve(__dirname, "../../data/adult.csv");
/** The shared datasets folder beside the repository. */
export const SHARED_DATASETS = resolve(__dirname, "../../../shared/datasets");

/** A running `synthd serve`. */
export interface ServerProcess {
  url: string;
  /** The sandbox key printed on first start (undefined on a restart over the same store). */
  sandboxKey?: string;
  dataDir: string;
  child: ChildProcess;
  /** Everything the process wrote to stderr so far (logs). */
  stderr(): string;
  /** Everything the process wrote to stdout so far (its start lines). */
  stdout(): string;
  /** Sends `signal` and resolves when the process has exited. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** A fresh temporary directory; removed by {@link removeDir}. */
export function tempDir(prefix = "synthd-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * Fills the file system of `dir` up to its last byte with `dir/filler` (appending to a filler
 * already there), then gives back `leaveBytes` of it. For the full-disk tests and bench.
 */
export function fillDisk(dir: string, leaveBytes = 0): void {
  const chunk = Buffer.alloc(1024 * 1024);
  const file = join(dir, "filler");
  writeFileSync(file, "", { flag: "a" });
  for (let size = chunk.length; size >= 1; size = Math.floor(size / 2)) {
    for (;;) {
      try {
        writeFileSync(file, chunk.subarray(0, size), { flag: "a" });
      } catch {
        break;
      }
    }
  }
  if (leaveBytes > 0) truncateSync(file, Math.max(0, statSync(file).size - leaveBytes));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * Default per-org rate limit of the servers started here (`SYNTHD_RATE_LIMIT`, requests per
 * minute): the benchmarks and integration tests measure other things than the 60/min default
 * (a latency benchmark sends thousands of requests a minute), so they run with a limit they never
 * reach. Pass `env: { SYNTHD_RATE_LIMIT: "60" }` (or `""` for the built-in default) to test limits.
 */
export const HARNESS_RATE_LIMIT = "1000000";

/**
 * Starts `synthd serve --port 0` on `dataDir` and resolves once it printed its listening line.
 * `env` is added to the child's environment (after {@link HARNESS_RATE_LIMIT}).
 * @throws Error when the process exits first or prints nothing within `timeoutMs`.
 */
export function startServer(
  dataDir: string,
  extraArgs: string[] = [],
  timeoutMs = 60_000,
  env: Record<string, string> = {},
): Promise<ServerProcess> {
  const child = spawn(
    process.execPath,
    [CLI, "serve", "--host", "127.0.0.1", "--port", "0", "--data-dir", dataDir, ...extraArgs],
    {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, SYNTHD_API_KEY: "", SYNTHD_URL: "", SYNTHD_RATE_LIMIT: HARNESS_RATE_LIMIT, ...env },
    },
  );
  let out = "";
  let err = "";
  child.stderr!.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<void>((res) => child.once("exit", () => res()));
  return new Promise((resolveStart, rejectStart) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      rejectStart(new Error(`server did not start in ${timeoutMs} ms; stderr:\n${err}`));
    }, timeoutMs);
    child.once("exit", (code) => {
      clearTimeout(timer);
      rejectStart(new Error(`server exited with ${code} before listening; stderr:\n${err}`));
    });
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /synthd listening on (http:\/\/\S+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      const key = /sandbox key: (svc_test_\S+)/.exec(out);
      resolveStart({
        url: m[1],
        sandboxKey: key?.[1],
        dataDir,
        child,
        stderr: () => err,
        stdout: () => out,
        kill: async (signal = "SIGTERM") => {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          await exited;
        },
      });
    });
  });
}

/**
 * `err` with what a reader needs to tell a test's failure from a server's: the server's exit code
 * or signal (or that it still runs), the cause of a failed `fetch` (undici puts ECONNREFUSED,
 * "other side closed" and the like in `cause`) and the last `tailChars` of its stderr.
 * @returns a new Error whose message holds all of it; `cause` is `err`.
 */
export function withServerState(err: unknown, server: ServerProcess | undefined, tailChars = 4000): Error {
  const e = err instanceof Error ? err : new Error(String(err));
  if (server === undefined) return e;
  const { exitCode, signalCode } = server.child;
  const state = exitCode === null && signalCode === null ? "still running" : `exited (code ${exitCode}, signal ${signalCode})`;
  const cause = (e as { cause?: unknown }).cause;
  const causeText = cause === undefined ? "" : `; cause: ${cause instanceof Error ? `${(cause as NodeJS.ErrnoException).code ?? ""} ${cause.message}` : String(cause)}`;
  return new Error(`${e.message}${causeText}\nserver: ${state}; stderr tail:\n${server.stderr().slice(-tailChars)}`, { cause: e });
}

/** Result of one CLI run. */
export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

let cliFilterDir_: string | undefined;

/**
 * The near-copy filters' directory of the CLI runs of this process (`SYNTHD_FILTER_DIR`): one
 * temporary directory, removed at exit, so `fit` and a later `sample` share it and no run writes
 * under the user's home.
 */
export function cliFilterDir(): string {
  if (cliFilterDir_ === undefined) {
    cliFilterDir_ = tempDir("synthd-filters-");
    const dir = cliFilterDir_;
    process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  }
  return cliFilterDir_;
}

/** Runs `synthd ...args` to completion with the given extra environment (`passStderr`: also
 * copy its stderr, e.g. progress bars, to ours); `SYNTHD_FILTER_DIR` is {@link cliFilterDir}
 * unless `env` names one. */
export function runCli(
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 300_000,
  opts: { passStderr?: boolean } = {},
): Promise<CliResult> {
  return new Promise((resolveRun, rejectRun) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, SYNTHD_FILTER_DIR: cliFilterDir(), ...env },
    });
    if (opts.passStderr) child.stderr.pipe(process.stderr);
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      rejectRun(new Error(`synthd ${args.join(" ")} did not finish in ${timeoutMs} ms`));
    }, timeoutMs);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolveRun({ code, stdout, stderr });
    });
  });
}

/** Seconds of CPU (user + system, all threads) a process used so far, read from `/proc/<pid>/stat`; undefined without procfs. */
export function processCpuSeconds(pid: number): number | undefined {
  try {
    // Fields after the command name (which may hold spaces, so split after its closing parenthesis):
    // state is field 3, utime 14 and stime 15, in clock ticks (USER_HZ, 100 on Linux).
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/** Polls `fn` every `intervalMs` until it returns a defined value or `timeoutMs` passes. */
export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined>,
  timeoutMs = 120_000,
  intervalMs = 200,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
