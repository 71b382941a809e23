/**
 * The store's limit-related records (src/store): org settings, usage charges and the ledger,
 * idempotency records, tombstones of deleted models as List cursors, rate counters.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LmdbStore as Store, newModelId, TOMBSTONE_TTL_MS, type ChargeRequest, type ModelRecord } from "../src/store";
import { CONFIG_DEFAULTS } from "../src/contract";

async function withStore(fn: (s: Store, dir: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "synthd-store-limits-"));
  const s = new Store(dir);
  try {
    await fn(s, dir);
  } finally {
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const charge = (o: Partial<ChargeRequest>): ChargeRequest => ({
  org: "o", env: "live", month: "2030-01", rows: 10, quota: 100, model_id: "mdl_000000000000", request_id: "req_x", at_ms: 0, ...o,
});

test("setOrgLimits sets, clears and validates an org's rate limit and live quota", async () => {
  await withStore(async (s) => {
    const r = await s.setOrgLimits("acme", { rate_limit: 5, live_quota: 0 });
    assert.equal(r.rate_limit, 5);
    assert.equal(r.live_quota, 0);
    const cleared = await s.setOrgLimits("acme", { rate_limit: null });
    assert.equal(cleared.rate_limit, undefined);
    assert.equal(cleared.live_quota, 0, "untouched");
    await assert.rejects(s.setOrgLimits("acme", { rate_limit: 0 }), RangeError);
    await assert.rejects(s.setOrgLimits("acme", { live_quota: 1.5 }), RangeError);
    const key = await s.createKey("acme", "test");
    assert.equal((await s.findKey(key))?.org, "acme", "keys of an org made by setOrgLimits work");
  });
});

test("chargeUsage refuses a charge that would cross the quota and charges nothing; refunds give back", async () => {
  await withStore(async (s) => {
    assert.deepEqual(await s.chargeUsage(charge({ rows: 60 })), { ok: true, used: 60 });
    assert.deepEqual(await s.chargeUsage(charge({ rows: 41 })), { ok: false, used: 60 });
    assert.deepEqual(await s.chargeUsage(charge({ rows: 40 })), { ok: true, used: 100 });
    assert.equal(await s.refundUsage(charge({ rows: 40 })), 60);
    assert.equal((await s.getUsage("o", "live", "2030-01")), 60);
    assert.equal((await s.getUsage("o", "test", "2030-01")), 0, "environments are separate");
    assert.equal((await s.getUsage("o", "live", "2030-02")), 0, "months are separate");
  });
});

test("concurrent charges never exceed the quota", async () => {
  await withStore(async (s) => {
    const rs = await Promise.all(Array.from({ length: 50 }, () => s.chargeUsage(charge({ rows: 7, quota: 100, env: "test" }))));
    assert.equal(rs.filter((r) => r.ok).length, 14);
    assert.equal((await s.getUsage("o", "test", "2030-01")), 98);
  });
});

test("the ledger holds live charges and refunds in order, per org and month; sandbox is not billed", async () => {
  await withStore(async (s) => {
    await s.chargeUsage(charge({ rows: 5, request_id: "req_b" }));
    await s.refundUsage(charge({ rows: 5, request_id: "req_b" }));
    await s.chargeUsage(charge({ rows: 3, request_id: "req_a" }));
    await s.chargeUsage(charge({ rows: 3, env: "test" }));
    await s.chargeUsage(charge({ rows: 2, month: "2030-02" }));
    await s.chargeUsage(charge({ rows: 1, org: "p" }));
    const e = (await s.ledgerEntries("o", "2030-01"));
    assert.deepEqual(e.map((x) => [x.kind, x.rows, x.request_id]), [["charge", 5, "req_b"], ["refund", -5, "req_b"], ["charge", 3, "req_a"]]);
    assert.equal(e[0].at, new Date(0).toISOString());
    assert.equal((await s.ledgerEntries("o", "2030-02")).length, 1);
    assert.deepEqual((await s.usageOfMonth("2030-01")).sort((a, b) => (a.org + a.env).localeCompare(b.org + b.env)), [
      { org: "o", env: "live", rows: 3 },
      { org: "o", env: "test", rows: 3 },
      { org: "p", env: "live", rows: 1 },
    ]);
  });
});

test("idempotency records: started, in flight, mismatch, replay, expiry, release and sweep", async () => {
  await withStore(async (s) => {
    const scope = { org: "o", env: "test" as const, key: "k" };
    const ttl = 1000;
    assert.deepEqual(await s.beginIdempotent(scope, "fp", 0, ttl), { kind: "started" });
    assert.deepEqual(await s.beginIdempotent(scope, "fp", 1, ttl), { kind: "in_flight" });
    assert.deepEqual(await s.beginIdempotent(scope, "other", 1, ttl), { kind: "mismatch" });
    const response = { status: 201, headers: { "Content-Type": "application/json" }, body: "{}", request_id: "req_1" };
    await s.completeIdempotent(scope, response);
    assert.deepEqual(await s.beginIdempotent(scope, "fp", 999, ttl), { kind: "replay", response });
    assert.deepEqual(await s.beginIdempotent(scope, "other", 1000, ttl), { kind: "started" }, "expired: a new request");
    assert.equal((await s.reconcile(new Set(), 1000)).released, 1);
    assert.equal((await s.getIdempotency(scope)), undefined);
    await s.beginIdempotent(scope, "fp", 0, ttl);
    await s.abandonIdempotent(scope);
    assert.equal((await s.getIdempotency(scope)), undefined);
    await s.beginIdempotent(scope, "fp", 0, ttl);
    await s.completeIdempotent(scope, response);
    assert.equal(await s.sweepExpired(999, ttl), 0);
    assert.equal(await s.sweepExpired(1000, ttl), 1);
  });
});

test("a deleted model's id stays a List cursor until its tombstone expires", async () => {
  await withStore(async (s) => {
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const t = new Date(Date.UTC(2030, 0, 1, 0, 0, i)).toISOString();
      const rec: ModelRecord = {
        id: newModelId(), org: "o", env: "test", status: "ready", config: { ...CONFIG_DEFAULTS, device: "cpu" },
        current_epoch: 1, train_loss: 1, val_loss: 1, created_at: t, updated_at: t, error: null,
      };
      await s.createModel(rec, { features: ["a"], cardinalities: { a: 1 }, empirical_probs: { a: [1] } });
      ids.unshift(rec.id);
    }
    assert.equal(await s.deleteModel(ids[1], 5000), true);
    assert.deepEqual((await s.listModels("o", "test", 10, ids[1])).items.map((m) => m.id), ids.slice(2));
    await assert.rejects(s.listModels("o", "live", 10, ids[1]), /mdl_/, "only in its own scope");
    await s.sweepExpired(5000 + TOMBSTONE_TTL_MS, 1);
    await assert.rejects(s.listModels("o", "test", 10, ids[1]));
  });
});

test("rate counters round-trip and old ones are swept", async () => {
  await withStore(async (s) => {
    await s.putRateCounter("org:a", { window: 10, prev: 1, curr: 2 });
    await s.putRateCounter("addr:1.2.3.4", { window: 5, prev: 0, curr: 9 });
    assert.deepEqual(new Map((await s.rateCounterEntries())).get("org:a"), { window: 10, prev: 1, curr: 2 });
    assert.equal(await s.sweepRateCounters(9), 1);
    assert.deepEqual((await s.rateCounterEntries()).map(([k]) => k), ["org:a"]);
  });
});
