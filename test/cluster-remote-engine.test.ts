/**
 * The front end's engine of the shared topology (src/cluster/remote-engine.ts) against a real
 * worker (WorkerHost in this process, a fresh PostgreSQL database, a Redis prefix of its own):
 * a registered worker that cannot be reached (its process died before its registration lapsed)
 * is skipped and the request served by the next one in rendezvous order; with no reachable
 * worker left the request fails with EngineUnavailableError (503 with Retry-After), never hangs.
 * A model too large for a worker's budget is refused at admission.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import pino from "pino";
import Redis from "ioredis";
import { randomBytes } from "node:crypto";
import { freshDatabase } from "./pg-helpers";
import { tinyMetadata, QUICK } from "./contract/harness";
import { PgStore } from "../src/store/postgres/pgStore";
import { modelRecord } from "./store-fixtures";
import { WorkerHost } from "../src/cluster/worker-host";
import { NO_WORKER_RETRY_AFTER_S, RemoteEngine } from "../src/cluster/remote-engine";
import { rendezvousOrder, workersKey } from "../src/cluster/wire";
import { EngineUnavailableError, ModelTooLargeError } from "../src/engine/engine";
import { deleteRedisPrefix } from "../bench/topology";
import { effectiveConfig } from "../src/server/handlers/createModel";

const REDIS_URL = `redis://${process.env.SYNTHD_TEST_REDIS_HOST ?? "127.0.0.1"}:${process.env.SYNTHD_TEST_REDIS_PORT ?? 6379}`;
const prefix = `synthd_t_${randomBytes(6).toString("hex")}`;
const logger = pino({ level: "silent" });
let db: Awaited<ReturnType<typeof freshDatabase>>;
let store: PgStore;
let worker: WorkerHost;
let engine: RemoteEngine;
let redis: Redis;
let modelId: string;

before(async () => {
  db = await freshDatabase();
  store = await PgStore.open(db.url, { logger });
  worker = await WorkerHost.start({ databaseUrl: db.url, redisUrl: REDIS_URL, prefix, threads: 1, logger });
  engine = await RemoteEngine.connect({ redisUrl: REDIS_URL, prefix, workerBudgetBytes: 2 ** 30, logger });
  redis = new Redis(REDIS_URL);
  // A trained model in the shared store, trained by the worker through the queue.
  const rec = modelRecord("acme", "test", Date.now(), effectiveConfig(QUICK, "cpu"));
  modelId = rec.id;
  await store.createModel(rec, tinyMetadata());
  await engine.train(modelId);
  const deadline = Date.now() + 60_000;
  while ((await store.getModel(modelId))?.status !== "ready") {
    assert.ok(Date.now() < deadline, "the worker did not train the model");
    await new Promise((r) => setTimeout(r, 50));
  }
});

after(async () => {
  await engine?.close();
  await worker?.close();
  redis?.disconnect();
  await store?.close();
  await deleteRedisPrefix(prefix);
  await db?.drop();
});

/** Registers a worker that nobody listens for, valid for a minute. */
async function registerDead(id: string): Promise<void> {
  await redis.zadd(workersKey(prefix), Date.now() + 60_000, `${id} http://127.0.0.1:9`);
}

test("a dead worker ahead in the model's rendezvous order is skipped: the live one answers", async () => {
  // Pick a dead worker id that ranks before the live worker for this model.
  let dead = "";
  for (let i = 0; dead === ""; i++) {
    const id = `wrk_dead${i}`;
    if (rendezvousOrder(modelId, [{ id }, { id: worker.id }])[0].id === id) dead = id;
  }
  await registerDead(dead);
  try {
    const order = rendezvousOrder(modelId, await engine.workers());
    assert.equal(order[0].id, dead, "the dead worker is asked first");
    const g = await engine.generateRaw(modelId, { embedding: { num_rows: 25, seed: 3 } });
    assert.equal(g.num_rows, 25);
    assert.deepEqual(g.features, tinyMetadata().features);
  } finally {
    await redis.zrem(workersKey(prefix), `${dead} http://127.0.0.1:9`);
  }
});

test("no reachable worker: EngineUnavailableError with Retry-After, after every registered worker was tried", async () => {
  // A deployment of its own (another prefix) whose only registered workers are dead.
  const lonely = `${prefix}_dead`;
  const front = await RemoteEngine.connect({ redisUrl: REDIS_URL, prefix: lonely, workerBudgetBytes: 2 ** 30, logger });
  try {
    await redis.zadd(workersKey(lonely), Date.now() + 60_000, "wrk_deada http://127.0.0.1:9", Date.now() + 60_000, "wrk_deadb http://127.0.0.1:9");
    await assert.rejects(front.generateRaw(modelId, { embedding: { num_rows: 5 } }), (e: unknown) => {
      assert.ok(e instanceof EngineUnavailableError, String(e));
      assert.equal(e.retryAfterSeconds, NO_WORKER_RETRY_AFTER_S);
      assert.match(e.message, /no worker could generate \(worker wrk_dead[ab] unreachable/);
      return true;
    });
    await redis.del(workersKey(lonely));
    await assert.rejects(front.generateRaw(modelId, { embedding: { num_rows: 5 } }), /no worker is registered/);
  } finally {
    await front.close();
    await deleteRedisPrefix(lonely);
  }
});

test("a model too large for a worker's training budget is refused at create, naming the field to lower", () => {
  const big = effectiveConfig({ model_size: "large", batch_size: 65536, embedding_dim: 512 }, "cpu");
  assert.throws(() => engine.admissionCheck(big, tinyMetadata(), "acme"), (e: unknown) => {
    assert.ok(e instanceof ModelTooLargeError, String(e));
    assert.match(e.param, /^body\.(config|metadata)\./);
    return true;
  });
  assert.doesNotThrow(() => engine.admissionCheck(effectiveConfig(QUICK, "cpu"), tinyMetadata(), "acme"));
});
