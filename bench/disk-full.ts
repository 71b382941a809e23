/**
 * `npm run bench -- disk-full`: issue 39's full-disk scenario, repeated. Needs root (it mounts a
 * tmpfs per run). Each run: a store on a `--mib` tmpfs, `serve --workers 1
 * --max-training-per-org 4`, one ready small model, then a medium 80-epoch, a small 150-epoch and a
 * small 100-epoch batch-1024 training; 4 s later the tmpfs is filled to its last byte; then 30
 * keyed requests, one every 300 ms (every fifth a create of a small 3-epoch model, the others
 * generates of 1,000 + 777 i rows). Then the filler is removed, refused keys are retried until
 * they execute, every model must end `ready`, and the stored usage must equal the rows delivered.
 *
 * Per run it prints whether the server survived (exit code or signal, heap-corruption lines in
 * its log), the answers while full (status counts: only 200, 201 and 503 are allowed), whether
 * training paused and resumed, and usage against delivered rows.
 */
import { execFileSync, type ChildProcess } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { LmdbStore } from "../src/store";
import { monthOf } from "../src/usage/quota";
import { fillDisk, removeDir, startServer, tempDir, waitFor, type ServerProcess } from "./harness";

/** Options of {@link diskFullBench}. */
export interface DiskFullOptions {
  runs: number;
  mib: number;
  json: boolean;
  /** The shared topology on a PostgreSQL cluster whose data directory is the tmpfs. */
  postgres: boolean;
}

/** One run's outcome. */
interface RunResult {
  crashed: string | null;
  statuses: Record<string, number>;
  unexpected: string[];
  paused: boolean;
  allReady: boolean;
  usage: number;
  delivered: number;
}

const CREATE_METADATA = {
  features: ["a", "b"],
  cardinalities: { a: 2, b: 3 },
  empirical_probs: { a: [0.25, 0.75], b: [0.2, 0.3, 0.5] },
  value_mappings: { a: { x: 0, y: 1 }, b: { p: 0, q: 1, r: 2 } },
  marginals: [{ features: ["a", "b"], probs: [0.05, 0.1, 0.1, 0.15, 0.2, 0.4] }],
};

/** Why `child` died or corrupted its heap (its log shows it), or null. */
function crashOf(child: ChildProcess, stderr: string): string | null {
  const { exitCode, signalCode } = child;
  const corrupted = /malloc\(\)|corrupted|double free|Aborted|mdb_page_spill/.exec(stderr);
  if (exitCode !== null || signalCode !== null) return `exited (code ${exitCode}, signal ${signalCode})${corrupted ? `: ${corrupted[0]}` : ""}`;
  return corrupted ? `log: ${corrupted[0]}` : null;
}

/** A deployment under test: where to send requests and how to read its state. */
interface Deployment {
  url: string;
  apiKey: string;
  /** The file system to fill. */
  mount: string;
  /** Why a process of synthd is dead or corrupted, or null. */
  crashed(): string | null;
  /** True once a training logged that it paused. */
  paused(): boolean;
  /** Called after the filler is removed (PostgreSQL: restarted if it stopped, as its supervisor would). */
  recovered(): Promise<void>;
  /** Rows charged to the org this month. */
  usage(): Promise<number>;
  close(): Promise<void>;
}

/** The embedded server (`serve --workers 1 --max-training-per-org 4`) with its store on `mount`. */
async function embedded(mount: string): Promise<Deployment> {
  const storeDir = join(mount, "store");
  const setup = new LmdbStore(storeDir);
  const apiKey = await setup.createKey("disk", "live");
  await setup.setOrgLimits("disk", { live_quota: 1_000_000_000 });
  await setup.close();
  let server: ServerProcess | undefined = await startServer(storeDir, ["--workers", "1", "--max-training-per-org", "4"]);
  return {
    url: server.url,
    apiKey,
    mount,
    crashed: () => (server === undefined ? null : crashOf(server.child, server.stderr())),
    paused: () => server !== undefined && /training paused until it can/.test(server.stderr()),
    recovered: async () => undefined,
    usage: async () => {
      await server?.kill("SIGTERM");
      server = undefined;
      const store = new LmdbStore(storeDir);
      try {
        return await store.getUsage("disk", "live", monthOf(Date.now()));
      } finally {
        await store.close();
      }
    },
    close: async () => {
      await server?.kill("SIGKILL");
    },
  };
}

const PG_BIN = "/usr/lib/postgresql/15/bin";
const PG_PORT = 55432;

/** Runs a PostgreSQL command as the `postgres` user. */
function asPostgres(cmd: string, args: string[]): string {
  return execFileSync("runuser", ["-u", "postgres", "--", join(PG_BIN, cmd), ...args], { encoding: "utf8" });
}

/**
 * The shared topology (one front end with `--max-training-per-org 4`, one worker with one engine
 * thread, Redis) on a PostgreSQL cluster of its own whose data directory is `mount`.
 */
async function shared(mount: string, logDir: string): Promise<Deployment> {
  const data = join(mount, "pg");
  const log = join(logDir, "postgres.log");
  execFileSync("chown", ["postgres:postgres", mount, logDir]);
  asPostgres("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync"]);
  const start = (): void => {
    // WAL recycled within the disk's size (the default max_wal_size, 1 GB, alone fills it), and
    // dead checkpoint versions vacuumed often: each epoch rewrites a checkpoint of megabytes.
    const opts =
      `-p ${PG_PORT} -k /tmp -c listen_addresses=127.0.0.1 -c max_wal_size=64MB -c min_wal_size=32MB ` +
      "-c checkpoint_timeout=30s -c autovacuum_naptime=5s";
    asPostgres("pg_ctl", ["-D", data, "-l", log, "-w", "-o", opts, "start"]);
  };
  start();
  asPostgres("psql", ["-h", "127.0.0.1", "-p", String(PG_PORT), "-U", "postgres", "-c", "CREATE DATABASE test"]);
  process.env.SYNTHD_TEST_PG_URL = `postgres://postgres@127.0.0.1:${PG_PORT}/test`;
  const { Topology } = await import("./topology");
  const t = await Topology.start({ workers: 1, frontEnds: 1, threads: 1, frontEndArgs: ["--max-training-per-org", "4"] });
  const apiKey = await t.createKey("disk", "live");
  await t.setOrg("disk", { liveQuota: 1_000_000_000 });
  const procs = () => [...t.frontEnds, ...t.workers];
  let restarts = 0;
  return {
    url: t.frontEnds[0].url,
    apiKey,
    mount,
    crashed: () => {
      for (const p of procs()) {
        const why = crashOf(p.child, p.stderr);
        if (why !== null) return `${p.name}: ${why}`;
      }
      return null;
    },
    paused: () => t.workers.some((w) => /training paused until it can/.test(w.stderr + w.stdout)),
    recovered: async () => {
      try {
        asPostgres("pg_ctl", ["-D", data, "status"]);
      } catch {
        restarts++;
        console.log(`  PostgreSQL had stopped on the full disk; restarted (${restarts})`);
        start();
      }
    },
    usage: async () => {
      const u = await t.usage("disk");
      return u.usage.filter((r) => r.env === "live").reduce((n, r) => n + r.rows, 0);
    },
    close: async () => {
      await t.close();
      try {
        asPostgres("pg_ctl", ["-D", data, "-m", "immediate", "stop"]);
      } catch {
        // already stopped
      }
      delete process.env.SYNTHD_TEST_PG_URL;
    },
  };
}

async function oneRun(mib: number, postgres: boolean): Promise<RunResult> {
  const dir = tempDir("synthd-disk-full-");
  const mount = join(dir, "disk");
  mkdirSync(mount);
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${mib}m`, "tmpfs", mount]);
  let d: Deployment | undefined;
  // Interrupted (Ctrl-C, kill): the deployment is stopped, so the run fails at once and its
  // `finally` removes the mount and the directory; then the signal ends the process.
  let interrupted: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    interrupted = signal;
    void d?.close().catch(() => undefined);
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    d = postgres ? await shared(mount, dir) : await embedded(mount);
    try {
      return await scenario(d);
    } catch (err) {
      throw new Error(`${(err as Error).message}; synthd: ${d.crashed() ?? "alive"}`, { cause: err });
    }
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await d?.close();
    execFileSync("umount", ["-l", mount]);
    removeDir(dir);
    if (interrupted !== undefined) process.kill(process.pid, interrupted);
  }
}

/** Issue 39's scenario (module comment) on `d`. */
async function scenario(d: Deployment): Promise<RunResult> {
  const { url, mount } = d;
  const auth = { authorization: `Bearer ${d.apiKey}` };
  const post = async (path: string, body: unknown, key?: string): Promise<{ status: number; json: any }> => {
    try {
      const res = await fetch(url + path, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json", ...(key ? { "idempotency-key": key } : {}) },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(60_000),
      });
      return { status: res.status, json: await res.json() };
    } catch (err) {
      return { status: 0, json: { error: String(err) } };
    }
  };
  const model = async (id: string): Promise<{ status: string }> => {
    const r = await fetch(`${url}/v1/models/${id}`, { headers: auth });
    if (r.status !== 200) return { status: `http ${r.status}` };
    return ((await r.json()) as { data: { status: string } }).data;
  };
  const create = (config: Record<string, unknown>, key?: string) => post("/v1/models", { metadata: CREATE_METADATA, config }, key);

  const ready = await create({ model_size: "small", max_epochs: 3 });
  if (ready.status !== 201) throw new Error(`create: ${ready.status} ${JSON.stringify(ready.json)}`);
  const readyId: string = ready.json.data.id;
  await waitFor("the first model", async () => ((await model(readyId)).status === "ready" ? true : undefined), 120_000, 100);
  const ids: string[] = [];
  for (const config of [
    { model_size: "medium", max_epochs: 80, early_stop_patience: 0 },
    { model_size: "small", max_epochs: 150, early_stop_patience: 0 },
    { model_size: "small", max_epochs: 100, early_stop_patience: 0, batch_size: 1024 },
  ]) {
    const r = await create(config);
    if (r.status !== 201) throw new Error(`create: ${r.status} ${JSON.stringify(r.json)}`);
    ids.push(r.json.data.id);
  }
  await new Promise((r) => setTimeout(r, 4_000));
  fillDisk(mount);

  const statuses: Record<string, number> = {};
  const unexpected: string[] = [];
  const refused: { key: string; path: string; body: unknown }[] = [];
  let delivered = 0;
  for (let i = 0; i < 30; i++) {
    const key = `full-${i}`;
    const isCreate = i % 5 === 4;
    const path = isCreate ? "/v1/models" : `/v1/models/${readyId}/generate`;
    const body = isCreate ? { metadata: CREATE_METADATA, config: { model_size: "small", max_epochs: 3 } } : { embedding: { num_rows: 1_000 + 777 * i, seed: i } };
    const r = await post(path, body, key);
    statuses[r.status] = (statuses[r.status] ?? 0) + 1;
    if (r.status === 200) delivered += r.json.data.num_rows;
    else if (r.status === 201) ids.push(r.json.data.id);
    else if (r.status === 503) refused.push({ key, path, body });
    else unexpected.push(`${r.status} ${JSON.stringify(r.json).slice(0, 200)}`);
    await new Promise((res) => setTimeout(res, 300));
  }
  const paused = d.paused();
  const crashedWhileFull = d.crashed();
  console.log(`  while full: answers ${JSON.stringify(statuses)}, paused ${paused}, synthd ${crashedWhileFull ?? "alive"}`);
  rmSync(join(mount, "filler"));
  if (crashedWhileFull !== null) {
    return { crashed: crashedWhileFull, statuses, unexpected, paused, allReady: false, usage: -1, delivered };
  }
  await d.recovered();
  for (const { key, path, body } of refused) {
    const r = await waitFor(`key ${key}`, async () => {
      const a = await post(path, body, key);
      return a.status === 200 || a.status === 201 ? a : undefined;
    }, 180_000, 500);
    if (r.status === 200) delivered += r.json.data.num_rows;
    else ids.push(r.json.data.id);
  }
  let allReady = true;
  for (const id of ids) {
    const m = await waitFor(`model ${id}`, async () => {
      const s = await model(id);
      return s.status === "training" || s.status === "queued" || s.status.startsWith("http 5") ? undefined : s;
    }, 600_000, 500);
    if (m.status !== "ready") allReady = false;
  }
  const crashed = d.crashed();
  return { crashed, statuses, unexpected, paused, allReady, usage: await d.usage(), delivered };
}

/** Runs the scenario `opts.runs` times and prints one line per run and a summary. */
export async function diskFullBench(opts: DiskFullOptions): Promise<void> {
  const results: RunResult[] = [];
  for (let i = 0; i < opts.runs; i++) {
    const r = await oneRun(opts.mib, opts.postgres);
    results.push(r);
    if (opts.json) continue;
    console.log(
      `run ${i + 1}: ${r.crashed ?? "no crash"}; answers ${JSON.stringify(r.statuses)}${r.unexpected.length ? ` unexpected ${r.unexpected.join(" | ")}` : ""}; ` +
        `paused ${r.paused}; all ready ${r.allReady}; usage ${r.usage} / delivered ${r.delivered}`,
    );
  }
  const summary = {
    runs: results.length,
    crashes: results.filter((r) => r.crashed !== null).length,
    unexpected_answers: results.reduce((n, r) => n + r.unexpected.length, 0),
    paused: results.filter((r) => r.paused).length,
    all_ready: results.filter((r) => r.allReady).length,
    usage_equals_delivered: results.filter((r) => r.usage === r.delivered).length,
  };
  console.log(opts.json ? JSON.stringify(summary) : `summary: ${JSON.stringify(summary)}`);
}
