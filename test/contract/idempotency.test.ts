/**
 * Contract: "Idempotency (all POST endpoints)" rules 1-3, and DESIGN §3's decisions: scope
 * (org, environment, key), 255-character keys, what is stored (2xx, 4xx) and what is not (401,
 * 409, 429, 5xx), reuse with other parameters, release of in-flight records left by a crash, and
 * atomicity across concurrent clients and threads.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { createEngine } from "../../src/engine";
import { EngineUnavailableError } from "../../src/engine/engine";
import { startServer } from "../../src/server/app";
import { monthOf } from "../../src/usage/quota";
import { LmdbStore as Store } from "../../src/store";
import {
  assertEnvelope,
  assertError,
  call,
  deferred,
  QUICK,
  readyModel,
  REQUEST_ID,
  startContract,
  tinyMetadata,
  type Contract,
} from "./harness";
import type { Model } from "../../src/contract";
import pino from "pino";

let c: Contract;
let ready: Model;
let n = 0;
const fresh = (): string => `key-${process.pid}-${Date.now()}-${n++}`;
const createBody = () => ({ metadata: tinyMetadata(), config: QUICK });
const countModels = async (key: string): Promise<number> => (await call(c.url, "/v1/models?limit=100", { key })).json.data.length;

before(async () => {
  c = await startContract();
  ready = await readyModel(c);
  c.engine.skipTraining = true; // the models created below are only counted, never trained
});
after(async () => {
  await c.stop();
});

describe("Idempotency rules", () => {
  test("Idempotency rule 1: a POST whose Idempotency-Key was already used gets the cached response and is not executed again", async () => {
    const key = await c.newKey("idem-1", "test");
    const ik = fresh();
    const first = await call(c.url, "/v1/models", { key, body: createBody(), headers: { "idempotency-key": ik } });
    assertEnvelope(first, 201, "model");
    assert.equal(first.headers.get("idempotent-replayed"), null);
    const again = await call(c.url, "/v1/models", { key, body: createBody(), headers: { "idempotency-key": ik } });
    assert.equal(again.status, 201);
    assert.equal(again.text, first.text, "the stored body, unchanged");
    assert.equal(again.headers.get("idempotent-replayed"), "true");
    assert.equal(again.headers.get("x-request-id"), first.headers.get("x-request-id"), "the original request id");
    assert.equal(await countModels(key), 1, "not executed again");
  });

  test("Idempotency rule 1 (Generate): a replayed generation returns the same rows and charges the quota once", async () => {
    const month = monthOf(c.clock.now());
    const before = (await c.store.getUsage("acme", "test", month));
    const ik = fresh();
    const body = { embedding: { num_rows: 40 } };
    const a = await call(c.url, `/v1/models/${ready.id}/generate`, { key: c.keys.test, body, headers: { "idempotency-key": ik } });
    const b = await call(c.url, `/v1/models/${ready.id}/generate`, { key: c.keys.test, body, headers: { "idempotency-key": ik } });
    assertEnvelope(a, 200, "generation");
    assert.equal(b.text, a.text);
    assert.equal(b.headers.get("idempotent-replayed"), "true");
    assert.equal((await c.store.getUsage("acme", "test", month)), before + 40);
  });

  test("Idempotency rule 2: while a request with the same key is still processed, 409 idempotency_key_in_use", async () => {
    const key = await c.newKey("idem-2", "test");
    const ik = fresh();
    const gate = deferred();
    c.engine.gate.train = gate.promise;
    const first = call(c.url, "/v1/models", { key, body: createBody(), headers: { "idempotency-key": ik } });
    await waitUntil(async () => (await c.store.getIdempotency({ org: "idem-2", env: "test", key: ik }))?.state === "in_flight");
    const dup = await call(c.url, "/v1/models", { key, body: createBody(), headers: { "idempotency-key": ik } });
    assertError(dup, "idempotency_key_in_use", undefined);
    delete c.engine.gate.train;
    gate.resolve();
    const r = await first;
    assertEnvelope(r, 201, "model");
    const after = await call(c.url, "/v1/models", { key, body: createBody(), headers: { "idempotency-key": ik } });
    assert.equal(after.headers.get("idempotent-replayed"), "true");
    assert.equal(after.json.data.id, r.json.data.id);
    assert.equal(await countModels(key), 1);
  });

  test("Idempotency rule 3: keys expire after 24 hours", async () => {
    const key = await c.newKey("idem-3", "test");
    const ik = fresh();
    const t0 = Date.now();
    c.clock.freeze(t0);
    try {
      const first = await call(c.url, "/v1/models", { key, body: createBody(), headers: { "idempotency-key": ik } });
      c.clock.freeze(t0 + 24 * 3600_000 - 1000);
      const still = await call(c.url, "/v1/models", { key, body: createBody(), headers: { "idempotency-key": ik } });
      assert.equal(still.headers.get("idempotent-replayed"), "true", "23:59:59 later: replayed");
      assert.equal(still.json.data.id, first.json.data.id);
      c.clock.freeze(t0 + 24 * 3600_000);
      const expired = await call(c.url, "/v1/models", { key, body: createBody(), headers: { "idempotency-key": ik } });
      assertEnvelope(expired, 201, "model");
      assert.equal(expired.headers.get("idempotent-replayed"), null, "24 h later: executed anew");
      assert.notEqual(expired.json.data.id, first.json.data.id);
    } finally {
      c.clock.reset();
    }
  });
});

describe("Idempotency decisions (DESIGN §3)", () => {
  test("Idempotency scope: (organization, environment, key); the same key elsewhere is another key", async () => {
    const ik = fresh();
    const results: Res[] = [];
    for (const key of [c.keys.test, c.keys.live, c.keys.other]) {
      results.push(await call(c.url, "/v1/models", { key, body: createBody(), headers: { "idempotency-key": ik } }));
    }
    for (const r of results) {
      assertEnvelope(r, 201, "model");
      assert.equal(r.headers.get("idempotent-replayed"), null);
    }
    assert.equal(new Set(results.map((r) => r.json.data.id)).size, 3);
  });

  test("Idempotency-Key: 1 to 255 characters; longer is parameter_invalid on headers.idempotency-key", async () => {
    const ok = await call(c.url, "/v1/models", { key: c.keys.test, body: createBody(), headers: { "idempotency-key": "k".repeat(255) } });
    assertEnvelope(ok, 201, "model");
    const long = await call(c.url, "/v1/models", { key: c.keys.test, body: createBody(), headers: { "idempotency-key": "k".repeat(256) } });
    assertError(long, "parameter_invalid", "headers.idempotency-key");
  });

  test("Idempotency-Key reused with a different request is parameter_invalid on headers.idempotency-key", async () => {
    const ik = fresh();
    assertEnvelope(await call(c.url, "/v1/models", { key: c.keys.test, body: createBody(), headers: { "idempotency-key": ik } }), 201, "model");
    const other = { ...createBody(), config: { ...QUICK, max_epochs: 2 } };
    assertError(await call(c.url, "/v1/models", { key: c.keys.test, body: other, headers: { "idempotency-key": ik } }), "parameter_invalid", "headers.idempotency-key");
    const path = await call(c.url, `/v1/models/${ready.id}/generate`, { key: c.keys.test, body: createBody(), headers: { "idempotency-key": ik } });
    assertError(path, "parameter_invalid", "headers.idempotency-key");
  });

  test("Idempotency: 4xx responses of the request are stored and replayed", async () => {
    const ik = fresh();
    const gone = "mdl_000000000000";
    const a = await call(c.url, `/v1/models/${gone}/generate`, { key: c.keys.test, body: { embedding: { num_rows: 1 } }, headers: { "idempotency-key": ik } });
    assertError(a, "model_not_found", undefined);
    const b = await call(c.url, `/v1/models/${gone}/generate`, { key: c.keys.test, body: { embedding: { num_rows: 1 } }, headers: { "idempotency-key": ik } });
    assert.equal(b.status, 404);
    assert.equal(b.text, a.text, "same body, original request_id inside");
    assert.equal(b.headers.get("idempotent-replayed"), "true");
    assert.equal(b.headers.get("x-request-id"), a.json.request_id);
  });

  test("Idempotency: 5xx responses are not stored; a retry with the key executes again", async () => {
    const ik = fresh();
    const month = monthOf(c.clock.now());
    const before = (await c.store.getUsage("acme", "test", month));
    c.engine.fail.generate = new EngineUnavailableError("queue full", 1);
    const body = { embedding: { num_rows: 7 } };
    const a = await call(c.url, `/v1/models/${ready.id}/generate`, { key: c.keys.test, body, headers: { "idempotency-key": ik } });
    assertError(a, "training_service_unavailable", undefined);
    assert.equal((await c.store.getIdempotency({ org: "acme", env: "test", key: ik })), undefined, "record dropped");
    const b = await call(c.url, `/v1/models/${ready.id}/generate`, { key: c.keys.test, body, headers: { "idempotency-key": ik } });
    assertEnvelope(b, 200, "generation");
    assert.equal(b.headers.get("idempotent-replayed"), null);
    assert.equal((await c.store.getUsage("acme", "test", month)), before + 7, "the failed attempt was refunded");
  });

  test("Idempotency: 401 and 429 are not stored (they come before the key is looked at)", async () => {
    const key = await c.newKey("idem-429", "test", 1);
    const ik = fresh();
    const t0 = Date.now();
    c.clock.freeze(t0);
    try {
      assertError(await call(c.url, "/v1/models", { body: createBody(), headers: { "idempotency-key": ik } }), "api_key_missing", undefined);
      assertEnvelope(await call(c.url, "/v1/models", { key }), 200, "list");
      assertError(await call(c.url, "/v1/models", { key, body: createBody(), headers: { "idempotency-key": ik } }), "rate_limit_exceeded", undefined);
      assert.equal((await c.store.getIdempotency({ org: "idem-429", env: "test", key: ik })), undefined);
      c.clock.freeze(t0 + 120_000);
      const r = await call(c.url, "/v1/models", { key, body: createBody(), headers: { "idempotency-key": ik } });
      assertEnvelope(r, 201, "model");
      assert.equal(r.headers.get("idempotent-replayed"), null);
    } finally {
      c.clock.reset();
    }
  });

  test("Idempotency: 10 concurrent POSTs with one key create exactly one model", async () => {
    const key = await c.newKey("idem-10", "test");
    const ik = fresh();
    const rs = await Promise.all(
      Array.from({ length: 10 }, () => call(c.url, "/v1/models", { key, body: createBody(), headers: { "idempotency-key": ik } })),
    );
    const ok = rs.filter((r) => r.status === 201);
    const busy = rs.filter((r) => r.status === 409);
    assert.equal(ok.length + busy.length, 10, rs.map((r) => r.status).join(","));
    assert.ok(ok.length >= 1);
    for (const r of busy) assertError(r, "idempotency_key_in_use", undefined);
    assert.equal(new Set(ok.map((r) => r.json.data.id)).size, 1, "every 201 is the same model");
    assert.equal(ok.filter((r) => r.headers.get("idempotent-replayed") === null).length, 1, "executed once");
    assert.equal(await countModels(key), 1);
  });

  test("Idempotency: an in-flight record left by a crash is released at start-up", async () => {
    const dir = join(c.dir, "crashed");
    const store = new Store(dir);
    const key = await store.createKey("crash", "test");
    const ik = "left-in-flight";
    // What a process killed mid-request leaves behind: the record, still in flight.
    await store.beginIdempotent({ org: "crash", env: "test", key: ik }, "fingerprint-of-the-lost-request", Date.now(), 86_400_000);
    const engine = await createEngine({ store, dataDir: dir, workers: 1, logger: pino({ level: "silent" }) });
    const server = await startServer({ host: "127.0.0.1", port: 0, store, engine, logger: pino({ level: "silent" }) });
    try {
      const r = await call(server.url, "/v1/models", { key, body: createBody(), headers: { "idempotency-key": ik } });
      assertEnvelope(r, 201, "model");
      assert.match(r.headers.get("x-request-id") ?? "", REQUEST_ID);
    } finally {
      await server.close();
      await engine.close();
      await store.close();
    }
  });

  test("Idempotency: insert-if-absent is atomic across worker threads (one of 8 concurrent starts wins)", async () => {
    const dir = join(c.dir, "threads");
    await new Store(dir).close();
    const storeModule = require.resolve("../../src/store");
    const code = `
      const { parentPort, workerData } = require("node:worker_threads");
      const { LmdbStore: Store } = require(workerData.storeModule);
      const store = new Store(workerData.dir);
      const go = new Int32Array(workerData.go);
      Atomics.wait(go, 0, 0);
      store.beginIdempotent({ org: "t", env: "test", key: "k" }, "fp", Date.now(), 86400000)
        .then(async (r) => { await store.close(); parentPort.postMessage(r.kind); });
    `;
    const go = new SharedArrayBuffer(4);
    const workers = Array.from({ length: 8 }, () => new Worker(code, { eval: true, workerData: { storeModule, dir, go } }));
    const kinds = workers.map((w) => new Promise<string>((res, rej) => (w.once("message", res), w.once("error", rej))));
    await new Promise((r) => setTimeout(r, 200)); // let every worker reach Atomics.wait
    Atomics.store(new Int32Array(go), 0, 1);
    Atomics.notify(new Int32Array(go), 0);
    const got = await Promise.all(kinds);
    assert.deepEqual(got.sort(), ["in_flight", "in_flight", "in_flight", "in_flight", "in_flight", "in_flight", "in_flight", "started"]);
  });
});

type Res = Awaited<ReturnType<typeof call>>;

async function waitUntil(cond: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error("condition not reached");
    await new Promise((r) => setTimeout(r, 5));
  }
}
