/**
 * A burst of creates from one organization is queued, not refused (Create Model answers 201
 * `training`; the admission queue keeps the memory bound), on real processes of both topologies:
 *
 * - embedded: one `synthd serve` with an explicit `--memory-budget`;
 * - shared: two `synthd worker` processes (each with the same `--memory-budget`) and two front ends
 *   on PostgreSQL + Redis (bench/topology.ts), the creates spread over both front ends.
 *
 * 100 concurrent creates of a small model (max_epochs 1) from one org, with the rate limit raised
 * (the harnesses run with a limit they never reach): every one is 201 `training`, every model ends
 * `ready`, and the RSS of every process that trains (VmRSS of /proc/PID/status, sampled every
 * 25 ms from the first create to the last `ready`) stays under its memory budget. The embedded
 * server is SIGKILLed while most of the burst waits: the restart re-admits the waiting models
 * (the queue is their `training` records in the store) and they all end `ready`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { removeDir, startServer, tempDir, type ServerProcess } from "../../bench/harness";
import { procMemory, syntheticMetadata } from "../../bench/memory";
import { pollUntil, Topology } from "../../bench/topology";

const CREATES = 100;
const BUDGET = "2GiB";
const BUDGET_BYTES = 2 * 2 ** 30;
const SMALL = { model_size: "small", embedding_dim: 8, batch_size: 64, max_epochs: 1, early_stop_patience: 0 };
const METADATA = syntheticMetadata(3, 3);

/** Samples the RSS of some processes every 25 ms until stopped; keeps each one's maximum. */
class RssSampler {
  readonly max: number[];
  private readonly timer: NodeJS.Timeout;
  constructor(private readonly pids: number[]) {
    this.max = pids.map(() => 0);
    this.sample();
    this.timer = setInterval(() => this.sample(), 25);
    this.timer.unref();
  }
  private sample(): void {
    this.pids.forEach((pid, i) => {
      try {
        this.max[i] = Math.max(this.max[i], procMemory(pid).rss || 0);
      } catch {
        // gone
      }
    });
  }
  stop(): void {
    clearInterval(this.timer);
  }
}

interface Created {
  status: number;
  body: { data?: { id: string; status: string; current_epoch: number }; error?: { code: string; message: string } };
}

/** `CREATES` concurrent creates, spread over `urls` in turn. */
async function burst(urls: string[], key: string): Promise<Created[]> {
  return Promise.all(
    Array.from({ length: CREATES }, async (_, i) => {
      const r = await fetch(`${urls[i % urls.length]}/v1/models`, {
        method: "POST",
        headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
        body: JSON.stringify({ metadata: METADATA, config: SMALL }),
      });
      return { status: r.status, body: (await r.json()) as Created["body"] };
    }),
  );
}

/** Asserts every create was 201 `training` at epoch 0; returns the ids. */
function acceptedIds(created: Created[]): string[] {
  const refused = created.filter((c) => c.status !== 201);
  assert.deepEqual(
    refused.map((c) => `${c.status} ${c.body.error?.code}: ${c.body.error?.message}`),
    [],
    `${refused.length} of ${CREATES} creates were refused`,
  );
  for (const c of created) assert.deepEqual([c.body.data?.status, c.body.data?.current_epoch], ["training", 0]);
  const ids = created.map((c) => c.body.data!.id);
  assert.equal(new Set(ids).size, CREATES);
  return ids;
}

/** Polls List (pages of 100) until every model in `ids` has left `training`; returns id -> status. */
async function untilAllDone(url: string, key: string, ids: string[], timeoutMs: number): Promise<Map<string, string>> {
  return pollUntil(
    "every model of the burst to finish",
    async () => {
      const r = await fetch(`${url}/v1/models?limit=100`, { headers: { Authorization: `Bearer ${key}` } });
      const page = (await r.json()) as { data: { id: string; status: string }[] };
      const status = new Map(page.data.map((m) => [m.id, m.status]));
      return ids.every((id) => status.has(id) && status.get(id) !== "training") ? status : undefined;
    },
    timeoutMs,
    500,
  );
}

const GiB = (n: number): string => `${(n / 2 ** 30).toFixed(2)} GiB`;

/** How many of `ids` List shows `ready` right now. */
async function readyCount(url: string, key: string, ids: string[]): Promise<number> {
  const page = (await (await fetch(`${url}/v1/models?limit=100`, { headers: { Authorization: `Bearer ${key}` } })).json()) as {
    data: { id: string; status: string }[];
  };
  const ready = new Set(page.data.filter((m) => m.status === "ready").map((m) => m.id));
  return ids.filter((id) => ready.has(id)).length;
}

test("embedded: 100 creates in a burst from one org are all 201 training; the queue survives a SIGKILL; all end ready, RSS under the budget throughout", async (t) => {
  const dir = tempDir("synthd-burst-");
  const args = ["--memory-budget", BUDGET, "--workers", "2"];
  let server: ServerProcess | undefined;
  const samplers: RssSampler[] = [];
  try {
    server = await startServer(join(dir, "store"), args);
    const key = server.sandboxKey!;
    samplers.push(new RssSampler([server.child.pid!]));
    const started = performance.now();
    const ids = acceptedIds(await burst([server.url], key));
    // Kill the server while most of the burst still waits: the queue is the store's `training`
    // models, re-admitted at the next start through the same budget.
    const before = await pollUntil("a few models of the burst to be ready", async () => {
      const n = await readyCount(server!.url, key, ids);
      return n >= 5 ? n : undefined;
    }, 120_000, 50);
    await server.kill("SIGKILL");
    assert.ok(before < CREATES, "the kill came while models still waited");
    server = await startServer(join(dir, "store"), args);
    samplers.push(new RssSampler([server.child.pid!]));
    const status = await untilAllDone(server.url, key, ids, 600_000);
    for (const s of samplers) s.stop();
    assert.deepEqual(ids.filter((id) => status.get(id) !== "ready").map((id) => `${id} ${status.get(id)}`), []);
    const peak = Math.max(...samplers.map((s) => s.max[0]));
    t.diagnostic(
      `embedded: ${before} ready at the SIGKILL, all ${CREATES} ready ${((performance.now() - started) / 1000).toFixed(1)} s after the burst; ` +
        `peak RSS ${GiB(samplers[0].max[0])} before the kill, ${GiB(samplers[1].max[0])} after (budget ${BUDGET})`,
    );
    for (const s of samplers) assert.ok(s.max[0] > 0, "sampled");
    assert.ok(peak < BUDGET_BYTES, `peak RSS ${peak} vs budget ${BUDGET_BYTES}`);
  } finally {
    for (const s of samplers) s.stop();
    await server?.kill("SIGKILL");
    removeDir(dir);
  }
});

test("shared topology: 100 creates in a burst from one org over two front ends are all 201 training, all end ready, each worker's RSS under its budget", async (t) => {
  const topo = await Topology.start({ workers: 2, frontEnds: 2, workerArgs: ["--memory-budget", BUDGET] });
  let sampler: RssSampler | undefined;
  try {
    const key = await topo.createKey("org_burst");
    const pids = [...topo.workers, ...topo.frontEnds].map((p) => p.child.pid!);
    sampler = new RssSampler(pids);
    const started = performance.now();
    const ids = acceptedIds(await burst(topo.frontEnds.map((f) => f.url), key));
    const status = await untilAllDone(topo.frontEnds[0].url, key, ids, 600_000);
    sampler.stop();
    assert.deepEqual(ids.filter((id) => status.get(id) !== "ready").map((id) => `${id} ${status.get(id)}`), []);
    const workerMax = sampler.max.slice(0, topo.workers.length);
    t.diagnostic(
      `shared: ${CREATES} ready in ${((performance.now() - started) / 1000).toFixed(1)} s; peak RSS per worker ${workerMax.map(GiB).join(", ")} ` +
        `(budget ${BUDGET} each), per front end ${sampler.max.slice(topo.workers.length).map(GiB).join(", ")}`,
    );
    for (const m of workerMax) assert.ok(m > 0 && m < BUDGET_BYTES, `a worker's peak RSS ${m} vs its budget ${BUDGET_BYTES}`);
    // Both workers took part (the queue is the deployment's, not one process's).
    const trainedBy = new Set(topo.workerLogs((l) => l.msg === "training job taken").map((h) => h.worker.id));
    assert.equal(trainedBy.size, 2, "both workers trained models of the burst");
  } finally {
    sampler?.stop();
    await topo.close();
  }
});
