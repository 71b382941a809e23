/**
 * A shared-topology deployment on this machine, for the integration test
 * (test/integration/shared-topology.test.ts) and the benchmarks' `--shared` runs
 * (`npm run bench -- latency --shared`, `-- generate --shared`): real `synthd serve --database --redis` front ends and `synthd worker` processes, started as
 * child processes of the built CLI, over one throwaway PostgreSQL database and one Redis key
 * prefix of their own. Nothing is mocked.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import Redis from "ioredis";
import { freshDatabase } from "../test/pg-helpers";

/** The built CLI (this file runs from dist/bench). */
export const CLI = resolve(__dirname, "../src/cli/main.js");

/** Redis of the tests; override with `SYNTHD_TEST_REDIS_URL`. */
export const REDIS_URL = process.env.SYNTHD_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

/**
 * Environment of every child: no inherited synthd settings, a high default rate limit (orgs under
 * test set their own), then `extra` (e.g. `SYNTHD_INTERNAL_TOKEN`).
 */
function childEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith("SYNTHD_")) delete env[k];
  env.SYNTHD_RATE_LIMIT = "1000000";
  return { ...env, ...extra };
}

/** Children still running, SIGKILLed if the test process exits without closing its topology. */
const running = new Set<ChildProcess>();
process.once("exit", () => {
  for (const c of running) c.kill("SIGKILL");
});

/** A pino JSON log line (or any JSON line) a child wrote. */
export interface LogLine {
  msg?: string;
  time?: number;
  [k: string]: unknown;
}

/** A long-running child process whose output is kept and searchable. */
export class Proc {
  readonly child: ChildProcess;
  /** Everything written to stdout / stderr so far. */
  stdout = "";
  stderr = "";
  /** Every JSON line of either stream, parsed, in arrival order. */
  readonly logs: LogLine[] = [];
  readonly exited: Promise<void>;
  private readonly watchers = new Set<() => void>();

  /** Runs `synthd ARGS` with {@link childEnv}`(env)`. */
  constructor(
    readonly name: string,
    args: string[],
    env: NodeJS.ProcessEnv = {},
  ) {
    this.child = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", "pipe", "pipe"], env: childEnv(env) });
    running.add(this.child);
    this.exited = new Promise((res) => this.child.once("exit", () => res()));
    this.child.once("exit", () => running.delete(this.child));
    this.child.once("exit", () => this.notify());
    const reader = (which: "stdout" | "stderr") => {
      let partial = "";
      return (d: Buffer): void => {
        const s = d.toString();
        this[which] += s;
        partial += s;
        const lines = partial.split("\n");
        partial = lines.pop()!;
        for (const line of lines) {
          if (!line.startsWith("{")) continue;
          try {
            this.logs.push(JSON.parse(line) as LogLine);
          } catch {
            // not a JSON line
          }
        }
        this.notify();
      };
    };
    this.child.stdout!.on("data", reader("stdout"));
    this.child.stderr!.on("data", reader("stderr"));
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  private notify(): void {
    for (const w of [...this.watchers]) w();
  }

  /**
   * Resolves to the first value `probe` returns that is not undefined, re-checked on every output
   * chunk; rejects after `timeoutMs`, or when the process exits first, with `what` and the tail of
   * its stderr.
   */
  waitFor<T>(what: string, probe: () => T | undefined, timeoutMs: number): Promise<T> {
    return new Promise((res, rej) => {
      const check = (): void => {
        let v: T | undefined;
        try {
          v = probe();
        } catch (err) {
          done();
          rej(err as Error);
          return;
        }
        if (v !== undefined) {
          done();
          res(v);
        } else if (!this.alive) {
          done();
          rej(new Error(`${this.name} exited (${this.child.exitCode ?? this.child.signalCode}) before ${what}; stderr tail:\n${this.stderr.slice(-3000)}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        rej(new Error(`${this.name}: no ${what} within ${timeoutMs} ms; stderr tail:\n${this.stderr.slice(-3000)}`));
      }, timeoutMs);
      const done = (): void => {
        clearTimeout(timer);
        this.watchers.delete(check);
      };
      this.watchers.add(check);
      check();
    });
  }

  /** The first log line matching `pred`, waiting for it up to `timeoutMs`. */
  waitLog(what: string, pred: (l: LogLine) => boolean, timeoutMs: number): Promise<LogLine> {
    return this.waitFor(what, () => this.logs.find(pred), timeoutMs);
  }

  /** Sends `signal` (if still running) and waits for the exit. */
  async kill(signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
    if (this.alive) this.child.kill(signal);
    await this.exited;
  }
}

/** A front end: `synthd serve --database --redis --prefix`. */
export interface FrontEnd extends Proc {
  url: string;
}

/** A worker: `synthd worker --workers 1`. */
export interface WorkerProc extends Proc {
  id: string;
}

/** Runs a one-shot CLI command to completion; rejects (with its stderr) unless it exits 0. */
export function cli(args: string[], timeoutMs = 30_000): Promise<string> {
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", "pipe", "pipe"], env: childEnv() });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      rej(new Error(`synthd ${args[0]} did not finish in ${timeoutMs} ms`));
    }, timeoutMs);
    child.once("exit", (code) => {
      clearTimeout(timer);
      if (code === 0) res(out);
      else rej(new Error(`synthd ${args.join(" ")} exited ${code}: ${err}`));
    });
  });
}

/** Deletes every Redis key under `${prefix}:` (SCAN + DEL) of the Redis at `redisUrl`; resolves to how many. */
export async function deleteRedisPrefix(prefix: string, redisUrl = REDIS_URL): Promise<number> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 2 });
  redis.on("error", () => undefined); // a Redis that is gone fails the commands below instead
  try {
    let cursor = "0";
    let n = 0;
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
      cursor = next;
      if (keys.length > 0) n += await redis.del(...keys);
    } while (cursor !== "0");
    return n;
  } finally {
    redis.disconnect();
  }
}

/** Options of {@link Topology.start}. */
export interface TopologyOptions {
  workers?: number;
  frontEnds?: number;
  /** `--lock-duration` of the workers (ms). */
  lockDurationMs?: number;
  /** Start-up deadline per process (ms). */
  startTimeoutMs?: number;
  /** `--workers` (engine threads) of each worker process; default 1. */
  threads?: number;
  /** More arguments of every `synthd worker` (e.g. `--memory-budget 2GiB`). */
  workerArgs?: string[];
  /** More arguments of every front end's `synthd serve`, e.g. `["--trusted-proxy", "10.0.0.0/8"]`. */
  frontEndArgs?: string[];
  /** Redis of this deployment; default {@link REDIS_URL}. */
  redisUrl?: string;
}

/** What one process of a {@link Topology} adds to its usual command line. */
export interface ProcExtras {
  /** Appended to the arguments (a later option wins over the default one, e.g. `--host`). */
  args?: string[];
  /** Added to the environment, e.g. `{ SYNTHD_INTERNAL_TOKEN: ... }`. */
  env?: NodeJS.ProcessEnv;
}

/** A running deployment: N workers and M front ends on one database and one Redis prefix. */
export class Topology {
  readonly workers: WorkerProc[] = [];
  readonly frontEnds: FrontEnd[] = [];
  /** Every process ever started here (killed by {@link close}). */
  private readonly procs: Proc[] = [];

  private constructor(
    readonly databaseUrl: string,
    readonly prefix: string,
    private readonly dropDatabase: () => Promise<void>,
    private readonly lockDurationMs: number,
    private readonly startTimeoutMs: number,
    private readonly threads: number,
    readonly redisUrl: string,
    private readonly frontEndArgs: string[] = [],
    private readonly workerArgs: string[] = [],
  ) {}

  /**
   * Creates the database, migrates it (`synthd migrate`), and starts the workers and front ends
   * in parallel, each waited for until it prints its ready line. On any failure everything
   * started is killed and removed before the error is thrown.
   */
  static async start(opts: TopologyOptions = {}): Promise<Topology> {
    const db = await freshDatabase();
    const prefix = `synthd_t_${randomBytes(6).toString("hex")}`;
    const t = new Topology(db.url, prefix, db.drop, opts.lockDurationMs ?? 3000, opts.startTimeoutMs ?? 60_000, opts.threads ?? 1, opts.redisUrl ?? REDIS_URL, opts.frontEndArgs, opts.workerArgs);
    try {
      await cli(["migrate", "--database", db.url]);
      await Promise.all([
        ...Array.from({ length: opts.workers ?? 2 }, () => t.startWorker()),
        ...Array.from({ length: opts.frontEnds ?? 2 }, () => t.startFrontEnd()),
      ]);
      return t;
    } catch (err) {
      await t.close();
      throw err;
    }
  }

  /** `--database`, `--redis` and `--prefix` of this deployment, as every process takes them. */
  private deploymentArgs(): string[] {
    return ["--database", this.databaseUrl, "--redis", this.redisUrl, "--prefix", this.prefix];
  }

  /** Starts one more worker and waits for `synthd worker wrk_... serving http://...`. */
  async startWorker(extra: ProcExtras = {}): Promise<WorkerProc> {
    const p = new Proc(
      `worker ${this.workers.length + 1}`,
      ["worker", ...this.deploymentArgs(), "--workers", String(this.threads), "--lock-duration", String(this.lockDurationMs), ...this.workerArgs, ...(extra.args ?? [])],
      extra.env,
    );
    this.procs.push(p);
    const m = await p.waitFor("ready line", () => /synthd worker (wrk_[0-9a-f]+) serving (http:\/\/\S+)/.exec(p.stdout) ?? undefined, this.startTimeoutMs);
    const w = Object.assign(p, { id: m[1] }) as WorkerProc;
    this.workers.push(w);
    return w;
  }

  /** Starts one more front end and waits for `synthd listening on http://...`. */
  async startFrontEnd(extra: ProcExtras = {}): Promise<FrontEnd> {
    const p = new Proc(
      `front end ${this.frontEnds.length + 1}`,
      ["serve", ...this.deploymentArgs(), "--host", "127.0.0.1", "--port", "0", ...this.frontEndArgs, ...(extra.args ?? [])],
      extra.env,
    );
    this.procs.push(p);
    const m = await p.waitFor("listening line", () => /synthd listening on (http:\/\/\S+)/.exec(p.stdout) ?? undefined, this.startTimeoutMs);
    const f = Object.assign(p, { url: m[1] }) as FrontEnd;
    this.frontEnds.push(f);
    return f;
  }

  /** The worker with this id. */
  worker(id: string): WorkerProc | undefined {
    return this.workers.find((w) => w.id === id);
  }

  /** Every log line of every worker matching `pred`, with the worker that wrote it. */
  workerLogs(pred: (l: LogLine) => boolean): { worker: WorkerProc; line: LogLine }[] {
    return this.workers.flatMap((w) => w.logs.filter(pred).map((line) => ({ worker: w, line })));
  }

  /** Waits until some worker wrote a log line matching `pred`. */
  waitWorkerLog(what: string, pred: (l: LogLine) => boolean, timeoutMs: number): Promise<{ worker: WorkerProc; line: LogLine }> {
    const deadline = Date.now() + timeoutMs;
    return new Promise((res, rej) => {
      const tick = (): void => {
        const hit = this.workerLogs(pred)[0];
        if (hit !== undefined) return res(hit);
        if (Date.now() > deadline) {
          const tails = this.workers.map((w) => `${w.name} (${w.id}) stderr tail:\n${w.stderr.slice(-2000)}`).join("\n");
          return rej(new Error(`no worker logged ${what} within ${timeoutMs} ms\n${tails}`));
        }
        setTimeout(tick, 25);
      };
      tick();
    });
  }

  /** `synthd keys create --database URL --org ORG --env ENV`: the key. */
  async createKey(org: string, env: "test" | "live" = "test"): Promise<string> {
    const out = await cli(["keys", "create", "--database", this.databaseUrl, "--org", org, "--env", env]);
    const key = out.trim();
    if (!/^svc_(test|live)_\S+$/.test(key)) throw new Error(`keys create printed ${JSON.stringify(out)}`);
    return key;
  }

  /** `synthd orgs set --database URL --org ORG ...`: the settings it printed. */
  async setOrg(org: string, limits: { rateLimit?: number; liveQuota?: number }): Promise<Record<string, unknown>> {
    const args = ["orgs", "set", "--database", this.databaseUrl, "--org", org];
    if (limits.rateLimit !== undefined) args.push("--rate-limit", String(limits.rateLimit));
    if (limits.liveQuota !== undefined) args.push("--live-quota", String(limits.liveQuota));
    return JSON.parse(await cli(args)) as Record<string, unknown>;
  }

  /** `synthd usage --database URL --org ORG --json`. */
  async usage(org: string): Promise<{ month: string; usage: { org: string; env: string; rows: number; quota: number; remaining: number }[] }> {
    return JSON.parse(await cli(["usage", "--database", this.databaseUrl, "--org", org, "--json"])) as never;
  }

  /** SIGKILLs every process, deletes the prefix's Redis keys, drops the database. Never throws. */
  async close(): Promise<void> {
    await Promise.all(this.procs.map((p) => p.kill("SIGKILL").catch(() => undefined)));
    await deleteRedisPrefix(this.prefix, this.redisUrl).catch(() => undefined);
    await this.dropDatabase().catch(() => undefined);
  }
}

/**
 * Polls `fn` every `intervalMs` until it returns a value other than undefined; throws with `what`
 * after `timeoutMs`. An error thrown by `fn` (a failed assertion) fails the wait at once.
 */
export async function pollUntil<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs: number, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
