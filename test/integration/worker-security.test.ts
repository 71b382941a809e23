/**
 * A worker of the shared topology (docs/deploy.md, docs/operations.md "The workers' internal
 * port" and "A worker's shutdown is bounded"), on real `synthd worker` / `synthd serve` child
 * processes over a throwaway PostgreSQL database. Nothing is mocked.
 *
 * What a user relies on:
 * 1. a worker whose internal port other machines can reach (`--host 0.0.0.0`, or a non-loopback
 *    `--advertise-url`) refuses to start without `SYNTHD_INTERNAL_TOKEN`, and with a token too
 *    short to be a secret; the message says why and the exit status is 1;
 * 2. with a token, the internal port answers 401 and generates nothing for a request without the
 *    token or with a wrong one; front ends holding the token work end to end (create, train,
 *    generate, billed); a front end without it gets 503 for the client, nothing billed; the token
 *    is in no process's output;
 * 3. a worker sent SIGTERM while its Redis is gone (killed) exits within `--shutdown-timeout`
 *    (plus a margin), with status 1 and a log of what it abandoned; the training it held is not
 *    lost: Redis comes back empty, a new worker re-queues it and trains it from its checkpoint to
 *    `ready`;
 * 4. the same while its Redis hangs (SIGSTOP): bounded exit; when Redis resumes with the job,
 *    BullMQ gives it to a new worker (the stalled-job check once its lock lapsed, or the retry of
 *    the failed attempt if the dead worker's last command still reached Redis), which trains it to
 *    `ready`.
 * (With Redis up the deadline changes nothing: SIGTERM mid-training hands the job back and exits 0,
 * and another worker continues it: test/integration/shared-topology.test.ts, test 7.)
 * Tests 3 and 4 use a `redis-server` of their own (no persistence) that they kill, stop and start;
 * each brings it back up (resumed or restarted) in `finally`, so a failed assertion cannot leave it
 * frozen, which would hang the clean-up's Redis commands and with them the test runner.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { assertError, call, tinyMetadata } from "../contract/harness";
import { pollUntil, Proc, Topology, type FrontEnd, type WorkerProc } from "../../bench/topology";

/** `--shutdown-timeout` of the workers under test (ms) and the margin allowed on top for the exit itself. */
const SHUTDOWN_MS = 3000;
const EXIT_MARGIN_MS = 7000;
/**
 * A model that ends by its training-time limit alone (`max_training_time`, summed across workers;
 * `max_epochs` out of reach): it cannot be `ready` before it trained TRAIN_S seconds of wall-clock
 * time, however fast the machine (or its GPU). The worker under test is created, breaks and exits
 * well inside that (checked, as the test's precondition), so its training must end `halted`; the
 * worker that recovers it trains the rest, about TRAIN_S less the time up to its last checkpoint.
 * Batches of 2048 make an epoch (10 steps at this max_epochs) long next to the checkpoint written
 * after it, which the limit does not count (with the default 256 the rest took over a minute),
 * and short enough that epoch 2 comes a few seconds after the create.
 */
const TRAIN_S = 15;
const TRAIN = { model_size: "small", max_epochs: 1_000_000, max_training_time: TRAIN_S, batch_size: 2048, early_stop_patience: 0 };

/** A free TCP port on 127.0.0.1 (the OS's choice, released again at once). */
function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once("error", rej);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => res(port));
    });
  });
}

/** A `redis-server` of this test alone (no RDB, no AOF): killed, frozen and restarted at will. */
class OwnRedis {
  private proc: ChildProcess | undefined;
  private constructor(readonly port: number) {
    // SIGKILL works on a stopped process too: nothing of this test outlives its process.
    process.once("exit", () => this.proc?.kill("SIGKILL"));
  }

  /** Starts one on a free port and waits until it accepts connections. */
  static async start(): Promise<OwnRedis> {
    const r = new OwnRedis(await freePort());
    await r.restart();
    return r;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Whether the server process is alive (running or stopped). */
  get alive(): boolean {
    const p = this.proc;
    return p !== undefined && p.exitCode === null && p.signalCode === null;
  }

  /** (Re)starts the server on the same port, empty; resolves once it is ready. */
  async restart(): Promise<void> {
    const p = spawn("redis-server", ["--port", String(this.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.proc = p;
    await new Promise<void>((res, rej) => {
      let out = "";
      const timer = setTimeout(() => rej(new Error(`redis-server on ${this.port} not ready in 10 s: ${out}`)), 10_000);
      p.stdout!.on("data", (d: Buffer) => {
        out += d.toString();
        if (out.includes("Ready to accept connections")) {
          clearTimeout(timer);
          res();
        }
      });
      p.once("exit", (code) => {
        clearTimeout(timer);
        rej(new Error(`redis-server on ${this.port} exited ${code}: ${out}`));
      });
    });
  }

  /** Sends `signal` to the server; for SIGKILL, waits until it is gone. */
  async signal(signal: NodeJS.Signals): Promise<void> {
    const p = this.proc;
    if (p === undefined || p.exitCode !== null || p.signalCode !== null) return;
    const gone = new Promise<void>((res) => p.once("exit", () => res()));
    p.kill(signal);
    if (signal === "SIGKILL") await gone;
  }

  /** Kills the server (resuming it first if it was stopped). */
  async close(): Promise<void> {
    await this.signal("SIGCONT");
    await this.signal("SIGKILL");
  }
}

/** Runs `synthd worker ARGS` with `env` and resolves once it exits: its status and output. */
async function runWorkerToExit(topo: Topology, args: string[], env: NodeJS.ProcessEnv, timeoutMs = 30_000): Promise<Proc> {
  const p = new Proc("worker (expected to refuse)", ["worker", "--database", topo.databaseUrl, "--redis", topo.redisUrl, "--prefix", topo.prefix, ...args], env);
  const timer = setTimeout(() => p.child.kill("SIGKILL"), timeoutMs);
  await p.exited;
  clearTimeout(timer);
  return p;
}

/** The port of a worker's ready line (`... serving http://HOST:PORT`). */
function workerPort(w: WorkerProc): number {
  const m = /serving http:\/\/\S+:(\d+)/.exec(w.stdout);
  assert.ok(m, `no ready line: ${w.stdout}`);
  return Number(m[1]);
}

describe("worker internal port: the deployment's token", () => {
  const token = randomBytes(32).toString("hex");
  let topo: Topology;
  let worker: WorkerProc;
  let feWith: FrontEnd;
  let feWithout: FrontEnd;
  let key = "";
  let modelId = "";

  before(async () => {
    topo = await Topology.start({ workers: 0, frontEnds: 0 });
    [worker, feWith, feWithout] = await Promise.all([
      topo.startWorker({ args: ["--host", "0.0.0.0"], env: { SYNTHD_INTERNAL_TOKEN: token } }),
      topo.startFrontEnd({ env: { SYNTHD_INTERNAL_TOKEN: token } }),
      topo.startFrontEnd(),
    ]);
    key = await topo.createKey("acme", "live");
    await topo.setOrg("acme", { liveQuota: 1_000_000 });
  });

  after(async () => {
    await topo?.close();
  });

  test("1. a worker on 0.0.0.0 or advertised off this machine without SYNTHD_INTERNAL_TOKEN, or with a short one, refuses to start: exit 1 and a message saying why", async () => {
    const [open, advertised, short] = await Promise.all([
      runWorkerToExit(topo, ["--host", "0.0.0.0"], {}),
      runWorkerToExit(topo, ["--host", "127.0.0.1", "--advertise-url", "http://10.1.2.3:7070"], {}),
      runWorkerToExit(topo, ["--host", "0.0.0.0"], { SYNTHD_INTERNAL_TOKEN: "hunter2-hunter2" }),
    ]);
    for (const [p, what] of [[open, "binds 0.0.0.0"], [advertised, "is advertised as http://10.1.2.3:7070"]] as const) {
      assert.equal(p.child.exitCode, 1, `${what}: exit ${p.child.exitCode ?? p.child.signalCode}; stderr ${p.stderr}`);
      assert.match(p.stderr, /^synthd: refusing to start: the worker's internal port /m);
      assert.ok(p.stderr.includes(what), p.stderr);
      assert.match(p.stderr, /SYNTHD_INTERNAL_TOKEN is not set/);
      assert.doesNotMatch(p.stdout, /serving/, "it never served");
    }
    assert.equal(short.child.exitCode, 1, short.stderr);
    assert.match(short.stderr, /^synthd: SYNTHD_INTERNAL_TOKEN is 15 characters long; it must have at least 32/m);
    assert.ok(!short.stderr.includes("hunter2") && !short.stdout.includes("hunter2"), "the token is not printed");
  });

  test("2. with the token: requests without it or with a wrong one get 401 and no rows; the front end with it generates (billed); one without it gets 503 (not billed); the token is in no output", async () => {
    const created = await call(feWith.url, "/v1/models", { key, body: { metadata: tinyMetadata(), config: { model_size: "small", max_epochs: 2, early_stop_patience: 0 } } });
    assert.equal(created.status, 201, created.text);
    modelId = created.json.data.id as string;
    await pollUntil(`model ${modelId} ready`, async () => {
      const r = await call(feWith.url, `/v1/models/${modelId}`, { key });
      assert.equal(r.status, 200, r.text);
      assert.notEqual(r.json.data.status, "failed", r.text);
      return r.json.data.status === "ready" ? true : undefined;
    }, 60_000);

    // Straight to the worker's port, as an attacker on the network would.
    const direct = `http://127.0.0.1:${workerPort(worker)}`;
    const body = JSON.stringify({ embedding: { num_rows: 1000 } });
    const attempts: [string, Record<string, string>][] = [
      ["no token", {}],
      ["a wrong token of the same length", { "x-synthd-internal-token": randomBytes(32).toString("hex") }],
      ["a wrong short token", { "x-synthd-internal-token": "x" }],
      ["the token with a byte more", { "x-synthd-internal-token": `${token}0` }],
    ];
    for (const [what, headers] of attempts) {
      const r = await fetch(`${direct}/internal/generate/${modelId}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
      const text = await r.text();
      assert.equal(r.status, 401, `${what}: ${r.status} ${text.slice(0, 200)}`);
      assert.match(r.headers.get("content-type") ?? "", /application\/json/);
      const e = JSON.parse(text) as { error: { kind: string; message: string } };
      assert.equal(e.error.kind, "unauthorized", what);
      assert.ok(!text.includes(token), "the answer does not echo the token");
    }
    const health = await fetch(`${direct}/internal/health`);
    assert.equal(health.status, 401, "health needs the token too");
    await health.arrayBuffer();
    // The same request with the token is answered (the token, nothing else, made the difference).
    const withToken = await fetch(`${direct}/internal/generate/${modelId}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-synthd-internal-token": token },
      body,
    });
    assert.equal(withToken.status, 200);
    assert.equal(withToken.headers.get("content-type"), "application/octet-stream");
    await withToken.arrayBuffer();

    // End to end through the front end that holds the token: rows, and billed.
    const g = await call(feWith.url, `/v1/models/${modelId}/generate`, { key, body: { embedding: { num_rows: 100 } } });
    assert.equal(g.status, 200, g.text);
    assert.equal(g.json.data.num_rows, 100);
    for (const f of g.json.data.features) assert.equal(g.json.data.columns[f].length, 100);
    const usage1 = (await topo.usage("acme")).usage.find((l) => l.env === "live");
    assert.equal(usage1?.rows, 100, JSON.stringify(usage1));

    // A front end without the token: the client gets 503 and is not billed; its operator a log line.
    const refused = await call(feWithout.url, `/v1/models/${modelId}/generate`, { key, body: { embedding: { num_rows: 100 } } });
    assertError(refused, "training_service_unavailable", undefined);
    const usage2 = (await topo.usage("acme")).usage.find((l) => l.env === "live");
    assert.equal(usage2?.rows, 100, `the refused generate was billed: ${JSON.stringify(usage2)}`);
    await feWithout.waitLog("the token mismatch logged", (l) => typeof l.msg === "string" && l.msg.includes("refused this front end's internal token"), 5_000);

    for (const p of [worker, feWith, feWithout]) {
      assert.ok(!p.stdout.includes(token) && !p.stderr.includes(token), `${p.name} printed the token`);
    }
  });
});

describe("worker shutdown is bounded whatever Redis does", () => {
  let redis: OwnRedis;
  let topo: Topology;
  let fe: FrontEnd;
  let key = "";

  before(async () => {
    redis = await OwnRedis.start();
    topo = await Topology.start({ workers: 0, frontEnds: 1, lockDurationMs: 3000, redisUrl: redis.url });
    [fe] = topo.frontEnds;
    key = await topo.createKey("acme");
  });

  after(async () => {
    // Resumed (or up again) before the topology's clean-up, whose Redis commands would wait forever
    // on a frozen server.
    await redis?.signal("SIGCONT");
    if (redis !== undefined && !redis.alive) await redis.restart().catch(() => undefined);
    await topo?.close();
    await redis?.close();
  });

  /** GET of the model; undefined while the front end answers 503 (its Redis is coming back). */
  const getModel = async (id: string): Promise<any> => {
    const r = await call(fe.url, `/v1/models/${id}`, { key });
    if (r.status === 503) return undefined;
    assert.equal(r.status, 200, r.text);
    return r.json.data;
  };

  /**
   * Starts a worker (`--shutdown-timeout` {@link SHUTDOWN_MS}) and a model it trains, waits until
   * the model checkpointed epoch 2, does `breakRedis`, sends SIGTERM and checks the bounded exit.
   * Resolves to the model id, its epoch before the break, and the worker's fence.
   */
  const trainBreakAndTerm = async (breakRedis: () => Promise<void>): Promise<{ id: string; epoch: number; fence: number; ranMs: number }> => {
    const w = await topo.startWorker({ args: ["--shutdown-timeout", String(SHUTDOWN_MS)] });
    const createdAt = Date.now();
    const created = await call(fe.url, "/v1/models", { key, body: { metadata: tinyMetadata(), config: TRAIN } });
    assert.equal(created.status, 201, created.text);
    const id = created.json.data.id as string;
    const taken = await w.waitLog(`training job taken for ${id}`, (l) => l.msg === "training job taken" && l.model_id === id, 30_000);
    const at = await pollUntil(`model ${id} at epoch 2`, async () => {
      const m = await getModel(id);
      return m !== undefined && m.current_epoch >= 2 ? m : undefined;
    }, 60_000, 30);
    assert.equal(at.status, "training", `the model finished before Redis broke: ${JSON.stringify(at)}`);
    await breakRedis();
    const termAt = Date.now();
    w.child.kill("SIGTERM");
    const bound = SHUTDOWN_MS + EXIT_MARGIN_MS;
    let timer: NodeJS.Timeout | undefined;
    const exitedInTime = await Promise.race([w.exited.then(() => true), new Promise<false>((r) => (timer = setTimeout(() => r(false), bound)))]);
    clearTimeout(timer);
    const tookMs = Date.now() - termAt;
    const ranMs = Date.now() - createdAt;
    assert.ok(exitedInTime, `the worker was still running ${bound} ms after SIGTERM (--shutdown-timeout ${SHUTDOWN_MS}); stderr tail:\n${w.stderr.slice(-3000)}`);
    // Precondition of what follows: the model trained at most as long as this worker ran after the
    // create, less than its time limit, so it cannot have ended `ready`.
    assert.ok(ranMs < TRAIN_S * 1000, `precondition: the worker ran ${ranMs} ms after the create, not less than the model's ${TRAIN_S} s of training`);
    assert.equal(w.child.exitCode, 1, `exit ${w.child.exitCode ?? w.child.signalCode} after ${tookMs} ms`);
    const gaveUp = w.logs.find((l) => l.msg?.startsWith("shutdown deadline passed"));
    assert.ok(gaveUp, `no log of what was abandoned; stderr tail:\n${w.stderr.slice(-3000)}`);
    assert.ok(Array.isArray(gaveUp.abandoned) && gaveUp.abandoned.length > 0, JSON.stringify(gaveUp));
    assert.deepEqual(gaveUp.training_jobs_not_handed_back, [id], JSON.stringify(gaveUp));
    // The training itself was halted at a step boundary (the precondition above ruled `ready` out).
    assert.equal(w.logs.find((l) => l.msg === "training job ended" && l.model_id === id)?.outcome, "halted");
    return { id, epoch: at.current_epoch as number, fence: Number(taken.fence), ranMs };
  };

  /**
   * Starts a new worker and checks it takes model `id` over (newer fence) and trains it to ready
   * (its time limit) without going back. Resolves to the BullMQ attempt number it logged.
   */
  const recoveredToReady = async (id: string, epochBefore: number, fenceBefore: number): Promise<number> => {
    const w = await topo.startWorker({ args: ["--shutdown-timeout", String(SHUTDOWN_MS)] });
    const taken = await w.waitLog(`training job taken for ${id}`, (l) => l.msg === "training job taken" && l.model_id === id, 60_000);
    assert.ok(Number(taken.fence) > fenceBefore, `fence ${taken.fence} after ${fenceBefore}`);
    const epochs: number[] = [];
    const done = await pollUntil(`model ${id} to finish`, async () => {
      const m = await getModel(id);
      if (m === undefined) return undefined;
      epochs.push(m.current_epoch);
      return m.status === "training" ? undefined : m;
    }, 90_000, 100);
    assert.equal(done.status, "ready", JSON.stringify(done));
    assert.ok(Math.min(...epochs, done.current_epoch) >= epochBefore, `the epoch went back below ${epochBefore}: ${epochs.join(",")},${done.current_epoch}`);
    const ended = await w.waitLog(`training job ended for ${id}`, (l) => l.msg === "training job ended" && l.model_id === id, 10_000);
    assert.equal(ended.outcome, "ready", JSON.stringify(ended));
    await w.kill("SIGTERM");
    assert.equal(w.child.exitCode, 0, "with Redis up, the shutdown finishes and exits 0");
    return Number(taken.attempt);
  };

  test("3. Redis killed, then SIGTERM: the worker exits 1 within the bound, logging the training it could not hand back; Redis back empty, a new worker re-queues it and trains it from its checkpoint to ready", async (t) => {
    let broken: { id: string; epoch: number; fence: number; ranMs: number };
    try {
      broken = await trainBreakAndTerm(() => redis.signal("SIGKILL"));
    } finally {
      if (!redis.alive) await redis.restart();
    }
    const { id, epoch, fence, ranMs } = broken;
    const attempt = await recoveredToReady(id, epoch, fence);
    t.diagnostic(`model ${id}: broken at epoch ${epoch}, worker gone ${ranMs} ms after the create; re-queued by the orphan sweep (attempt ${attempt})`);
  });

  test("4. Redis frozen (SIGSTOP), then SIGTERM: the worker exits 1 within the bound; Redis resumed with the job, BullMQ gives it to a new worker, which trains it to ready", async (t) => {
    let broken: { id: string; epoch: number; fence: number; ranMs: number };
    try {
      broken = await trainBreakAndTerm(() => redis.signal("SIGSTOP"));
    } finally {
      await redis.signal("SIGCONT");
    }
    const { id, epoch, fence, ranMs } = broken;
    const attempt = await recoveredToReady(id, epoch, fence);
    t.diagnostic(`model ${id}: frozen at epoch ${epoch}, worker gone ${ranMs} ms after the create; recovered from the job Redis kept (attempt ${attempt}: 0 = stalled-job check, 1 = retry)`);
  });
});
