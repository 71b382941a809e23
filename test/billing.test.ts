/**
 * Exactly-once billing, in-process (docs/operations.md "What survives kill -9", "A full disk"):
 * the store's pending charges and reconciliation, and the server's answers when the response or
 * the charge settlement cannot be written. The real-process kill test is
 * test/integration/exactly-once.test.ts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LmdbStore as Store, StoreWriteError, type ChargeRequest, type IdempotencyScope } from "../src/store";
import { monthOf } from "../src/usage/quota";
import pino from "pino";
import { startServer } from "../src/server/app";
import { assertError, call, createTestModel, startHarness, validCreateBody } from "./server-helpers";

function tempStore(): { store: Store; done: () => Promise<void> } {
  const dir = mkdtempSync(join(tmpdir(), "synthd-billing-"));
  const store = new Store(dir);
  return { store, done: async () => (await store.close(), rmSync(dir, { recursive: true, force: true })) };
}

const MONTH = "2030-01";
function charge(o: Partial<ChargeRequest> = {}): ChargeRequest {
  return { org: "o", env: "live", month: MONTH, rows: 10, quota: 1_000, model_id: "mdl_x", request_id: "req_a", at_ms: Date.UTC(2030, 0, 2), ...o };
}


/**
 * Makes `store[method]` fail as on a full disk (a StoreWriteError), for its next `times` calls or
 * until the returned function restores it.
 */
function diskFull(store: Store, method: "completeIdempotent" | "settleCharge" | "refundPending", times = Infinity): () => void {
  const orig = store[method];
  let left = times;
  store[method] = (async (...args: unknown[]) => {
    if (left-- > 0) throw new StoreWriteError(new Error("No space left on device"));
    return (orig as (...a: unknown[]) => Promise<unknown>).apply(store, args);
  }) as never;
  return () => {
    store[method] = orig as never;
  };
}

test("a pending charge is refunded by reconcile unless its request is live; settled charges stay", async () => {
  const { store, done } = tempStore();
  try {
    await store.chargeUsage(charge({ request_id: "req_dead", rows: 7 }), { pending: true });
    await store.chargeUsage(charge({ request_id: "req_live", rows: 5 }), { pending: true });
    await store.chargeUsage(charge({ request_id: "req_settled", rows: 3 }), { pending: true });
    assert.equal(await store.settleCharge("req_settled"), true);
    assert.equal((await store.getUsage("o", "live", MONTH)), 15);
    const r = await store.reconcile(new Set(["req_live"]), Date.UTC(2030, 0, 3));
    assert.deepEqual(r, { refunded_rows: 7, charges: 1, released: 0 });
    assert.equal((await store.getUsage("o", "live", MONTH)), 8);
    // The ledger nets the dead request to zero and keeps the others.
    const net = new Map<string, number>();
    for (const e of (await store.ledgerEntries("o", MONTH))) net.set(e.request_id, (net.get(e.request_id) ?? 0) + e.rows);
    assert.deepEqual(Object.fromEntries(net), { req_dead: 0, req_live: 5, req_settled: 3 });
    // A refund is applied once: a second refund or reconcile finds nothing.
    assert.equal(await store.refundPending("req_dead", Date.now()), 0);
    assert.equal((await store.reconcile(new Set(["req_live"]), Date.now())).refunded_rows, 0);
    assert.equal((await store.getUsage("o", "live", MONTH)), 8);
  } finally {
    await done();
  }
});

test("reconcile releases an in-flight key without a response and completes one that holds its response", async () => {
  const { store, done } = tempStore();
  try {
    const a: IdempotencyScope = { org: "o", env: "test", key: "a" };
    const b: IdempotencyScope = { org: "o", env: "test", key: "b" };
    const c: IdempotencyScope = { org: "o", env: "test", key: "c" };
    const now = Date.now();
    await store.beginIdempotent(a, "fa", now, 60_000, "req_a");
    await store.beginIdempotent(b, "fb", now, 60_000, "req_b");
    await store.beginIdempotent(c, "fc", now, 60_000, "req_c");
    const response = { status: 201, headers: { "Content-Type": "application/json" }, body: "{}", request_id: "req_b" };
    await store.createModel(
      { id: "mdl_000000000001", org: "o", env: "test", status: "training", config: {} as never, current_epoch: 0, train_loss: null, val_loss: null, created_at: new Date(now).toISOString(), updated_at: new Date(now).toISOString(), error: null },
      { features: ["a"], cardinalities: { a: 2 }, empirical_probs: { a: [0.5, 0.5] } },
      { scope: b, response },
    );
    // While the request lives, its duplicate waits (409), even though the response is stored.
    assert.equal((await store.beginIdempotent(b, "fb", now, 60_000)).kind, "in_flight");
    const r = await store.reconcile(new Set(["req_c"]), now);
    assert.equal(r.released, 2);
    assert.equal((await store.getIdempotency(a)), undefined, "no response: released, a retry executes");
    assert.deepEqual(await store.beginIdempotent(b, "fb", now, 60_000), { kind: "replay", response }, "the stored create replays");
    assert.equal((await store.getIdempotency(c))?.state, "in_flight", "a live request keeps its key");
  } finally {
    await done();
  }
});

test("completeIdempotent stores the response and settles the charge in one transaction", async () => {
  const { store, done } = tempStore();
  try {
    const s: IdempotencyScope = { org: "o", env: "live", key: "k" };
    await store.beginIdempotent(s, "f", Date.now(), 60_000, "req_a");
    await store.chargeUsage(charge(), { pending: true });
    await store.completeIdempotent(s, { status: 200, headers: {}, body: "{}", request_id: "req_a" });
    assert.equal((await store.getPendingCharge("req_a")), undefined);
    assert.equal((await store.reconcile(new Set(), Date.now())).refunded_rows, 0);
    assert.equal((await store.getUsage("o", "live", MONTH)), 10);
  } finally {
    await done();
  }
});

test("a generate whose response cannot be stored is not sent: 503 with Retry-After, charge refunded, the retry executes once", async () => {
  const h = await startHarness();
  try {
    const id = await createTestModel(h);
    const month = monthOf(Date.now());
    diskFull(h.store, "completeIdempotent", 1);
    const body = { embedding: { num_rows: 25, seed: 1 } };
    const headers = { "idempotency-key": "disk-1" };
    const r = await call(h.url, `/v1/models/${id}/generate`, { key: h.keys.test, body, headers });
    assertError(r, "training_service_unavailable", undefined);
    assert.match(r.headers.get("retry-after") ?? "", /^[1-9]\d*$/);
    assert.match(r.json.error.message, /storage is full/);
    assert.equal((await h.store.getUsage("acme", "test", month)), 0, "nothing charged for an answer not sent");
    const again = await call(h.url, `/v1/models/${id}/generate`, { key: h.keys.test, body, headers });
    assert.equal(again.status, 200);
    assert.equal(again.headers.get("idempotent-replayed"), null, "executed, not replayed");
    assert.equal((await h.store.getUsage("acme", "test", month)), 25);
    const replay = await call(h.url, `/v1/models/${id}/generate`, { key: h.keys.test, body, headers });
    assert.equal(replay.headers.get("idempotent-replayed"), "true");
    assert.equal((await h.store.getUsage("acme", "test", month)), 25, "a replay charges nothing");
  } finally {
    await h.stop();
  }
});

test("without a key, a generate whose charge cannot be settled is not sent: 503, charge refunded", async () => {
  const h = await startHarness();
  try {
    const id = await createTestModel(h);
    const month = monthOf(Date.now());
    const restore = diskFull(h.store, "settleCharge");
    const r = await call(h.url, `/v1/models/${id}/generate`, { key: h.keys.test, body: { embedding: { num_rows: 25 } } });
    assertError(r, "training_service_unavailable", undefined);
    assert.equal((await h.store.getUsage("acme", "test", month)), 0);
    restore();
    const ok = await call(h.url, `/v1/models/${id}/generate`, { key: h.keys.test, body: { embedding: { num_rows: 25 } } });
    assert.equal(ok.status, 200);
    assert.equal((await h.store.getUsage("acme", "test", month)), 25);
    assert.equal((await h.store.getPendingCharge(ok.headers.get("x-request-id")!)), undefined, "settled before it was sent");
  } finally {
    await h.stop();
  }
});

test("a refund that cannot be written is retried until the store takes it", async () => {
  const h = await startHarness();
  try {
    const id = await createTestModel(h);
    const month = monthOf(Date.now());
    const restoreSettle = diskFull(h.store, "settleCharge");
    const restoreRefund = diskFull(h.store, "refundPending");
    const r = await call(h.url, `/v1/models/${id}/generate`, { key: h.keys.test, body: { embedding: { num_rows: 30 } } });
    assertError(r, "training_service_unavailable", undefined);
    assert.equal((await h.store.getUsage("acme", "test", month)), 30, "the refund could not be written yet");
    restoreSettle();
    restoreRefund();
    // The reconciliation retries every 5 s.
    const deadline = Date.now() + 20_000;
    while ((await h.store.getUsage("acme", "test", month)) !== 0 && Date.now() < deadline) await new Promise((res) => setTimeout(res, 200));
    assert.equal((await h.store.getUsage("acme", "test", month)), 0);
  } finally {
    await h.stop();
  }
});

test("a second server on the same store refunds none of the first one's requests in flight: their charges stay and are settled", async () => {
  const h = await startHarness();
  let second: Awaited<ReturnType<typeof startServer>> | undefined;
  try {
    const r0 = await call(h.url, "/v1/models", { key: h.keys.live, body: validCreateBody() });
    assert.equal(r0.status, 201, r0.text);
    const id = r0.json.data.id as string;
    const month = monthOf(Date.now());
    // Hold the first server's generate inside the engine, its charge pending.
    let entered!: () => void;
    const inEngine = new Promise<void>((res) => (entered = res));
    let release!: () => void;
    const gate = new Promise<void>((res) => (release = res));
    const generate = h.engine.generate.bind(h.engine);
    h.engine.generate = async (...args) => {
      entered();
      await gate;
      return generate(...args);
    };
    const pending = call(h.url, `/v1/models/${id}/generate`, { key: h.keys.live, body: { embedding: { num_rows: 25 } } });
    await inEngine;
    // A server started beside it (or again after a restart) reconciles at start: the first one's
    // request is in flight in this process, not left by a dead one.
    second = await startServer({ host: "127.0.0.1", port: 0, store: h.store, engine: h.engine, logger: pino({ level: "silent" }) });
    assert.equal((await h.store.getUsage("acme", "live", month)), 25, "the charge is still taken");
    release();
    const r = await pending;
    assert.equal(r.status, 200, r.text);
    assert.equal((await h.store.getUsage("acme", "live", month)), 25, "the delivered rows are billed");
    assert.deepEqual((await h.store.ledgerEntries("acme", month)).map((e) => [e.kind, e.rows]), [["charge", 25]], "no refund in the ledger");
    assert.equal((await h.store.getPendingCharge(r.headers.get("x-request-id")!)), undefined, "settled");
  } finally {
    await second?.close();
    await h.stop();
  }
});

test("the 402 says how to raise the quota on a self-hosted server: a live key for the sandbox, synthd orgs set for a live plan", async () => {
  const h = await startHarness();
  try {
    const id = await createTestModel(h);
    const now = Date.now();
    for (const env of ["test", "live"] as const) {
      await h.store.chargeUsage(charge({ org: "acme", env, month: monthOf(now), rows: 100_000, quota: 100_000, request_id: `seed_${env}`, at_ms: now }));
    }
    const sandbox = await call(h.url, `/v1/models/${id}/generate`, { key: h.keys.test, body: { embedding: { num_rows: 1 } } });
    assertError(sandbox, "quota_exceeded", undefined);
    assert.match(sandbox.json.error.message, /used 100000 of its 100000 sandbox rows/);
    assert.match(sandbox.json.error.message, /use a live key .*synthd keys create --org acme --env live/);
    assert.match(sandbox.json.error.message, /synthd orgs set --org acme --live-quota N/);
    const created = await call(h.url, "/v1/models", { key: h.keys.live, body: validCreateBody() });
    assertError(created, "quota_exceeded", undefined);
    assert.match(created.json.error.message, /raises the organization's plan with: synthd orgs set --org acme --live-quota N\.$/);
    const docs = await fetch(sandbox.json.error.doc_url);
    assert.match(await docs.text(), /synthd orgs set --org ORG --live-quota N/, "the error's doc_url says it too");
  } finally {
    await h.stop();
  }
});
