/**
 * The PostgreSQL store (src/store/postgres/pgStore.ts) against a real server: the LMDB store's semantics
 * method by method (test/store.test.ts, test/store-limits.test.ts), and what only a shared store
 * must guarantee: quota and idempotency across instances, concurrent migrations, reconcile that
 * respects other instances' leases, fencing of training writes, write failures as StoreWriteError.
 * Each test uses its own orgs, so they share one throwaway database.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "pg";
import { PgStore } from "../src/store/postgres/pgStore";
import { MIGRATIONS, migrateDatabase } from "../src/store/postgres/migrations";
import { CursorNotFoundError, StoreUnavailableError, StoreWriteError, TOMBSTONE_TTL_MS, hashKey, type ChargeRequest, type StoredResponse } from "../src/store";
import { PG_URL, freshDatabase } from "./pg-helpers";
import { META, modelRecord } from "./store-fixtures";

let db: Awaited<ReturnType<typeof freshDatabase>>;
let s: PgStore;

before(async () => {
  db = await freshDatabase();
  s = await PgStore.open(db.url, { instanceId: "main" });
});

after(async () => {
  await s?.close();
  await db?.drop();
});

/** Runs `sql` directly on the test database (inspecting or forcing what the store wrote). */
async function sql<R = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<R[]> {
  const c = new Client({ connectionString: db.url });
  await c.connect();
  try {
    return (await c.query(text, params)).rows as R[];
  } finally {
    await c.end();
  }
}

const rec = modelRecord;

const charge = (o: Partial<ChargeRequest>): ChargeRequest => ({
  org: "o", env: "live", month: "2030-01", rows: 10, quota: 100, model_id: "mdl_000000000000", request_id: "req_x", at_ms: 0, ...o,
});

test("migrations run concurrently from three instances are applied once, and a later migrate finds nothing to do", async () => {
  const own = await freshDatabase();
  try {
    const stores = await Promise.all([1, 2, 3].map((i) => PgStore.open(own.url, { instanceId: `m${i}` })));
    await Promise.all(stores.map((x) => x.close()));
    const c = new Client({ connectionString: own.url });
    await c.connect();
    try {
      const ids = (await c.query<{ id: number }>("SELECT id FROM schema_migrations ORDER BY id")).rows.map((r) => r.id);
      assert.deepEqual(ids, MIGRATIONS.map((m) => m.id));
    } finally {
      await c.end();
    }
    assert.deepEqual(await migrateDatabase(own.url), []);
  } finally {
    await own.drop();
  }
});

test("API keys are stored only as their SHA-256 and found by the key; creating one creates its org", async () => {
  assert.equal(await s.isEmpty(), true);
  const key = await s.createKey("acme", "live");
  assert.match(key, /^svc_live_[A-Za-z0-9]{32}$/);
  assert.equal(await s.isEmpty(), false);
  const found = await s.findKey(key);
  assert.equal(found?.org, "acme");
  assert.equal(found?.env, "live");
  assert.equal(found?.prefix, key.slice(0, 12));
  assert.equal(await s.findKey(key + "x"), undefined);
  const rows = await sql<{ t: string }>("SELECT k::text AS t FROM api_keys k");
  assert.equal(rows.some((r) => r.t.includes(key)), false, "plaintext key must not be stored");
  assert.equal(rows.some((r) => r.t.includes(hashKey(key))), true, "its hash is stored");
  assert.equal((await s.getOrg("acme"))?.name, "acme");
});

test("orgs: ensureOrg keeps an existing org; setOrgLimits sets, clears and validates; listOrgs by name", async () => {
  await s.ensureOrg("lim-b");
  const created = (await s.getOrg("lim-b"))?.created_at;
  const r = await s.setOrgLimits("lim-b", { rate_limit: 5, live_quota: 0 });
  assert.deepEqual(r, { name: "lim-b", created_at: created, rate_limit: 5, live_quota: 0 });
  await s.ensureOrg("lim-b");
  assert.deepEqual(await s.getOrg("lim-b"), r, "ensureOrg changes nothing of an existing org");
  const cleared = await s.setOrgLimits("lim-b", { rate_limit: null });
  assert.equal(cleared.rate_limit, undefined);
  assert.equal(cleared.live_quota, 0, "untouched");
  await assert.rejects(s.setOrgLimits("lim-b", { rate_limit: 0 }), RangeError);
  await assert.rejects(s.setOrgLimits("lim-b", { live_quota: 1.5 }), RangeError);
  assert.equal((await s.getOrg("lim-b"))?.live_quota, 0, "a refused change writes nothing");
  const made = await s.setOrgLimits("lim-a", { live_quota: 7 });
  assert.equal(made.live_quota, 7, "setOrgLimits creates a missing org");
  const key = await s.createKey("lim-a", "test");
  assert.equal((await s.findKey(key))?.org, "lim-a");
  const names = (await s.listOrgs()).map((o) => o.name).filter((n) => n.startsWith("lim-"));
  assert.deepEqual(names, ["lim-a", "lim-b"]);
  assert.equal(await s.getOrg("nobody"), undefined);
});

test("chargeUsage refuses a charge that would cross the quota and charges nothing; refunds give back", async () => {
  const c = (o: Partial<ChargeRequest>) => charge({ org: "q1", ...o });
  assert.deepEqual(await s.chargeUsage(c({ rows: 60 })), { ok: true, used: 60 });
  assert.deepEqual(await s.chargeUsage(c({ rows: 41 })), { ok: false, used: 60 });
  assert.deepEqual(await s.chargeUsage(c({ rows: 40 })), { ok: true, used: 100 });
  assert.deepEqual(await s.chargeUsage(c({ rows: 101, month: "2030-03" })), { ok: false, used: 0 }, "refused on an empty month");
  assert.equal(await s.refundUsage(c({ rows: 40 })), 60);
  assert.equal(await s.getUsage("q1", "live", "2030-01"), 60);
  assert.equal(await s.getUsage("q1", "test", "2030-01"), 0, "environments are separate");
  assert.equal(await s.getUsage("q1", "live", "2030-02"), 0, "months are separate");
  assert.equal(await s.refundUsage(c({ rows: 500 })), 0, "usage never goes below zero");
});

test("concurrent charges from two instances (two pools) against a nearly spent quota never exceed it", async () => {
  const b = await PgStore.open(db.url, { instanceId: "other-pool" });
  try {
    const c = (o: Partial<ChargeRequest>) => charge({ org: "q2", quota: 100, ...o });
    await s.chargeUsage(c({ rows: 90 }));
    const rs = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? s : b).chargeUsage(c({ rows: 3, request_id: `req_c${i}` }))));
    const ok = rs.filter((r) => r.ok);
    assert.equal(ok.length, 3);
    assert.ok(rs.every((r) => r.used <= 100));
    assert.equal(await s.getUsage("q2", "live", "2030-01"), 90 + 3 * ok.length);
    assert.equal((await b.ledgerEntries("q2", "2030-01")).length, 1 + ok.length, "one ledger entry per successful charge");
    const many = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? s : b).chargeUsage(c({ env: "test", rows: 7 }))));
    assert.equal(many.filter((r) => r.ok).length, 14);
    assert.equal(await s.getUsage("q2", "test", "2030-01"), 98);
  } finally {
    await b.close();
  }
});

test("the ledger holds live charges and refunds in order, per org and month; sandbox is not billed", async () => {
  const c = (o: Partial<ChargeRequest>) => charge({ org: "l1", ...o });
  await s.chargeUsage(c({ rows: 5, request_id: "req_b" }));
  await s.refundUsage(c({ rows: 5, request_id: "req_b" }));
  await s.chargeUsage(c({ rows: 3, request_id: "req_a" }));
  await s.chargeUsage(c({ rows: 3, env: "test" }));
  await s.chargeUsage(c({ rows: 2, month: "2030-02" }));
  await s.chargeUsage(c({ rows: 1, org: "l2" }));
  const e = await s.ledgerEntries("l1", "2030-01");
  assert.deepEqual(e.map((x) => [x.kind, x.rows, x.request_id]), [["charge", 5, "req_b"], ["refund", -5, "req_b"], ["charge", 3, "req_a"]]);
  assert.deepEqual(e[0], { org: "l1", env: "live", month: "2030-01", kind: "charge", rows: 5, model_id: "mdl_000000000000", request_id: "req_b", at: new Date(0).toISOString() });
  assert.equal((await s.ledgerEntries("l1", "2030-02")).length, 1);
  const month = (await s.usageOfMonth("2030-01")).filter((u) => u.org === "l1" || u.org === "l2");
  assert.deepEqual(month, [
    { org: "l1", env: "live", rows: 3 },
    { org: "l1", env: "test", rows: 3 },
    { org: "l2", env: "live", rows: 1 },
  ]);
});

test("pending charges: recorded with the charge, settled once, refunded once with a ledger refund", async () => {
  const c = charge({ org: "p1", rows: 8, request_id: "req_p1", at_ms: 1000 });
  await s.chargeUsage(c, { pending: true });
  assert.deepEqual(await s.getPendingCharge("req_p1"), { charge: c });
  assert.equal(await s.settleCharge("req_p1"), true);
  assert.equal(await s.settleCharge("req_p1"), false);
  assert.equal(await s.getPendingCharge("req_p1"), undefined);
  assert.equal(await s.refundPending("req_p1", 5000), 0, "a settled charge is not refunded");
  const d = charge({ org: "p1", rows: 4, request_id: "req_p2" });
  await s.chargeUsage(d, { pending: true });
  assert.equal(await s.getUsage("p1", "live", "2030-01"), 12);
  const twice = await Promise.all([s.refundPending("req_p2", 5000), s.refundPending("req_p2", 5000)]);
  assert.deepEqual(twice.sort(), [0, 4], "refunded exactly once");
  assert.equal(await s.getUsage("p1", "live", "2030-01"), 8);
  const last = (await s.ledgerEntries("p1", "2030-01")).at(-1);
  assert.deepEqual([last?.kind, last?.rows, last?.at], ["refund", -4, new Date(5000).toISOString()]);
  const t = charge({ org: "p1", env: "test", rows: 2, request_id: "req_p3" });
  await s.chargeUsage(t);
  assert.equal(await s.getPendingCharge("req_p3"), undefined, "without `pending` the charge is final");
});

test("idempotency records: started, in flight, mismatch, replay, expiry, release and sweep", async () => {
  const scope = { org: "i1", env: "test" as const, key: "k" };
  const ttl = 1000;
  assert.deepEqual(await s.beginIdempotent(scope, "fp", 0, ttl), { kind: "started" });
  assert.deepEqual(await s.beginIdempotent(scope, "fp", 1, ttl), { kind: "in_flight" });
  assert.deepEqual(await s.beginIdempotent(scope, "other", 1, ttl), { kind: "mismatch" });
  const response = { status: 201, headers: { "Content-Type": "application/json", "X-B": "1" }, body: "{\"é\":\"\\u0000\"}", request_id: "req_1" };
  assert.deepEqual(await s.completeIdempotent(scope, response), response);
  assert.deepEqual(await s.beginIdempotent(scope, "fp", 999, ttl), { kind: "replay", response });
  assert.deepEqual(await s.beginIdempotent(scope, "other", 1000, ttl), { kind: "started" }, "expired: a new request");
  assert.deepEqual(await s.getIdempotency(scope), { state: "in_flight", fingerprint: "other", created_ms: 1000 });
  assert.equal((await s.reconcile(new Set(), 1000)).released, 1);
  assert.equal(await s.getIdempotency(scope), undefined);
  await s.beginIdempotent(scope, "fp", 0, ttl);
  await s.abandonIdempotent(scope);
  assert.equal(await s.getIdempotency(scope), undefined);
  await s.beginIdempotent(scope, "fp", 0, ttl, "req_2");
  await s.completeIdempotent(scope, response);
  await s.abandonIdempotent(scope);
  assert.equal((await s.getIdempotency(scope))?.state, "done", "abandon leaves a completed record alone");
  assert.equal(await s.completeIdempotent({ ...scope, key: "none" }, response), undefined);
  assert.equal(await s.sweepExpired(999, ttl), 0);
  assert.equal(await s.sweepExpired(1000, ttl), 1);
});

test("stored response bodies round-trip exactly: bytes as bytes, text as text, none as none", async () => {
  const bytes = new Uint8Array([0, 255, 1, 128, 0x41, 0]);
  const cases: StoredResponse[] = [
    { status: 200, headers: { "Content-Type": "application/vnd.apache.arrow.stream" }, body: bytes.subarray(1, 5), request_id: "req_u8" },
    { status: 200, headers: {}, body: "", request_id: "req_empty" },
    { status: 204, headers: { A: "b" }, request_id: "req_none" },
  ];
  for (const [i, r] of cases.entries()) {
    const scope = { org: "body", env: "live" as const, key: `k${i}` };
    await s.beginIdempotent(scope, "fp", 0, 1000);
    await s.completeIdempotent(scope, r);
    const back = await s.beginIdempotent(scope, "fp", 1, 1000);
    assert.equal(back.kind, "replay");
    const got = back.kind === "replay" ? back.response : undefined;
    if (r.body instanceof Uint8Array) {
      assert.ok(got?.body instanceof Uint8Array && typeof got.body !== "string");
      assert.deepEqual([...(got.body as Uint8Array)], [255, 1, 128, 0x41]);
      assert.deepEqual({ ...got, body: undefined }, { ...r, body: undefined });
    } else {
      assert.deepEqual(got, r);
    }
  }
});

test("10 concurrent begins with one key across two instances: exactly one is started", async () => {
  const b = await PgStore.open(db.url, { instanceId: "other-idem" });
  try {
    const scope = { org: "i2", env: "live" as const, key: "same" };
    const rs = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? s : b).beginIdempotent(scope, "fp", 100, 60_000, `req_${i}`)));
    assert.equal(rs.filter((r) => r.kind === "started").length, 1);
    assert.equal(rs.filter((r) => r.kind === "in_flight").length, 9);
    // The same race over an expired record: one takes it over.
    const rs2 = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? s : b).beginIdempotent(scope, "fp2", 100 + 60_000, 60_000)));
    assert.equal(rs2.filter((r) => r.kind === "started").length, 1);
    assert.equal(rs2.filter((r) => r.kind === "in_flight").length, 9);
  } finally {
    await b.close();
  }
});

test("completeIdempotent settles the pending charge; abandonIdempotent refunds it; createModel stores a recovery point", async () => {
  const scope = { org: "c1", env: "live" as const, key: "k1" };
  await s.beginIdempotent(scope, "fp", 0, 60_000, "req_c1");
  await s.chargeUsage(charge({ org: "c1", rows: 5, request_id: "req_c1" }), { pending: true });
  const resp = { status: 200, headers: {}, body: "ok", request_id: "req_c1" };
  await s.completeIdempotent(scope, resp);
  assert.equal(await s.getPendingCharge("req_c1"), undefined, "settled with the stored response");
  assert.equal(await s.getUsage("c1", "live", "2030-01"), 5);

  const scope2 = { ...scope, key: "k2" };
  await s.beginIdempotent(scope2, "fp", 0, 60_000, "req_c2");
  await s.chargeUsage(charge({ org: "c1", rows: 7, request_id: "req_c2" }), { pending: true });
  await s.abandonIdempotent(scope2, "req_c2", 9000);
  assert.equal(await s.getIdempotency(scope2), undefined);
  assert.equal(await s.getUsage("c1", "live", "2030-01"), 5, "refunded");
  assert.deepEqual((await s.ledgerEntries("c1", "2030-01")).map((e) => e.rows), [5, 7, -7]);

  const scope3 = { ...scope, key: "k3" };
  await s.beginIdempotent(scope3, "fp", 0, 60_000, "req_c3");
  const m = rec("c1", "live", 1000);
  const created = { status: 201, headers: { "Content-Type": "application/json" }, body: JSON.stringify({ id: m.id }), request_id: "req_c3" };
  await s.createModel(m, META, { scope: scope3, response: created });
  assert.equal((await s.getIdempotency(scope3))?.state, "in_flight", "still in flight until the request answers");
  assert.deepEqual(await s.beginIdempotent(scope3, "fp", 1, 60_000), { kind: "in_flight" });
  const final = await s.completeIdempotent(scope3, { ...created, body: "later" });
  assert.deepEqual(final, created, "the response stored with the model wins");
  assert.equal(await s.deleteModel(m.id, 2000, scope3), true);
  assert.equal(await s.getIdempotency(scope3), undefined, "dropIdempotency removes the key with the model");
});

/** Refunds and releases what earlier tests' closed instances left behind, so counts below are this test's own. */
async function reconcileLeftovers(): Promise<void> {
  await s.reconcile(new Set(), 0);
}

test("reconcile spares a live instance's charges and keys and takes them once its lease has run out", async () => {
  await reconcileLeftovers();
  const a = await PgStore.open(db.url, { instanceId: "front-a", leaseMs: 60_000 });
  const b = await PgStore.open(db.url, { instanceId: "front-b", leaseMs: 60_000 });
  try {
    const scopeA = { org: "r1", env: "live" as const, key: "ka" };
    await a.beginIdempotent(scopeA, "fp", 0, 60_000, "req_ra");
    await a.chargeUsage(charge({ org: "r1", rows: 6, request_id: "req_ra" }), { pending: true });
    const scopeA2 = { ...scopeA, key: "ka2" };
    await a.beginIdempotent(scopeA2, "fp", 0, 60_000, "req_ra2");
    const m = rec("r1", "live", 1000);
    const created = { status: 201, headers: {}, body: m.id, request_id: "req_ra2" };
    await a.createModel(m, META, { scope: scopeA2, response: created });
    await b.chargeUsage(charge({ org: "r1", rows: 1, request_id: "req_rb" }), { pending: true });
    await b.chargeUsage(charge({ org: "r1", rows: 2, request_id: "req_rb_live" }), { pending: true });

    // B: its own finished request is refunded, its live one kept; A's records are A's.
    assert.deepEqual(await b.reconcile(new Set(["req_rb_live"]), 10), { refunded_rows: 1, charges: 1, released: 0 });
    assert.notEqual(await a.getPendingCharge("req_ra"), undefined);
    assert.equal((await a.getIdempotency(scopeA))?.state, "in_flight");
    // A with its request still running keeps it too.
    assert.equal((await a.reconcile(new Set(["req_ra", "req_ra2"]), 10)).charges, 0);
    assert.equal(await a.getUsage("r1", "live", "2030-01"), 8);

    // A stops renewing (its lease in the past; its timer renews only every 20 s).
    await sql("UPDATE instances SET lease_until_ms = 0 WHERE id = 'front-a'");
    assert.deepEqual(await b.reconcile(new Set(["req_rb_live"]), 20), { refunded_rows: 6, charges: 1, released: 2 });
    assert.equal(await b.getPendingCharge("req_ra"), undefined);
    assert.equal(await b.getIdempotency(scopeA), undefined, "released: a retry executes again");
    assert.deepEqual((await b.getIdempotency(scopeA2))?.response, created, "completed from its recovery point");
    assert.equal((await b.getIdempotency(scopeA2))?.state, "done");
    assert.equal(await b.getUsage("r1", "live", "2030-01"), 2);
    assert.equal((await b.reconcile(new Set(["req_rb_live"]), 30)).charges, 0, "nothing is refunded twice");
    assert.equal(await b.settleCharge("req_rb_live"), true, "its live request is still pending");
  } finally {
    await a.close();
    await b.close();
  }
});

test("two instances reconciling at once refund each abandoned charge exactly once", async () => {
  await reconcileLeftovers();
  const dead = await PgStore.open(db.url, { instanceId: "front-dead", leaseMs: 60_000 });
  for (let i = 0; i < 30; i++) {
    await dead.chargeUsage(charge({ org: "r2", month: `2030-0${1 + (i % 3)}`, rows: 1, quota: 1000, request_id: `req_d${i}` }), { pending: true });
  }
  await dead.close(); // its lease row is gone: its records are abandoned
  const a = await PgStore.open(db.url, { instanceId: "rec-a" });
  const b = await PgStore.open(db.url, { instanceId: "rec-b" });
  try {
    const [ra, rb] = await Promise.all([a.reconcile(new Set(), 1), b.reconcile(new Set(), 1)]);
    assert.equal(ra.charges + rb.charges, 30);
    assert.equal(ra.refunded_rows + rb.refunded_rows, 30);
    for (const month of ["2030-01", "2030-02", "2030-03"]) {
      assert.equal(await a.getUsage("r2", "live", month), 0);
      assert.equal((await a.ledgerEntries("r2", month)).filter((e) => e.kind === "refund").length, 10);
    }
  } finally {
    await a.close();
    await b.close();
  }
});

test("list pages newest first per org and environment, cursor continues after the given id", async () => {
  const mine = [1000, 2000, 3000, 4000, 5000].map((ms) => rec("list1", "test", ms));
  for (const m of mine) await s.createModel(m, META);
  await s.createModel(rec("list1", "live", 6000), META);
  await s.createModel(rec("list-other", "test", 7000), META);
  const p1 = await s.listModels("list1", "test", 2);
  assert.deepEqual(p1.items.map((m) => m.id), [mine[4].id, mine[3].id]);
  assert.equal(p1.has_more, true);
  assert.deepEqual(p1.items[0], mine[4], "the record as written");
  assert.deepEqual(Object.keys(p1.items[0]), Object.keys(mine[4]), "field order kept");
  const p2 = await s.listModels("list1", "test", 2, p1.items[1].id);
  assert.deepEqual(p2.items.map((m) => m.id), [mine[2].id, mine[1].id]);
  const p3 = await s.listModels("list1", "test", 2, p2.items[1].id);
  assert.deepEqual(p3.items.map((m) => m.id), [mine[0].id]);
  assert.equal(p3.has_more, false);
  await assert.rejects(s.listModels("list1", "live", 2, mine[0].id), CursorNotFoundError);
  await assert.rejects(s.listModels("list1", "test", 2, "mdl_ffffffffffff"), CursorNotFoundError);
  // Ties on created_at are ordered by id, descending.
  const tied = [rec("list2", "test", 1000), rec("list2", "test", 1000), rec("list2", "test", 1000)];
  for (const m of tied) await s.createModel(m, META);
  const byId = tied.map((m) => m.id).sort().reverse();
  assert.deepEqual((await s.listModels("list2", "test", 10)).items.map((m) => m.id), byId);
  assert.deepEqual((await s.listModels("list2", "test", 10, byId[0])).items.map((m) => m.id), byId.slice(1));
});

test("a deleted model's id stays a List cursor until its tombstone expires", async () => {
  const ids: string[] = [];
  for (let i = 0; i < 4; i++) {
    const m = rec("tomb", "test", Date.UTC(2030, 0, 1, 0, 0, i));
    await s.createModel(m, META);
    ids.unshift(m.id);
  }
  assert.equal(await s.deleteModel(ids[1], 5000), true);
  assert.equal(await s.deleteModel(ids[1], 5000), false, "already gone");
  assert.deepEqual((await s.listModels("tomb", "test", 10, ids[1])).items.map((m) => m.id), ids.slice(2));
  await assert.rejects(s.listModels("tomb", "live", 10, ids[1]), /mdl_/, "only in its own scope");
  await s.sweepExpired(5000 + TOMBSTONE_TTL_MS - 1, 1);
  assert.equal((await s.listModels("tomb", "test", 10, ids[1])).items.length, 2, "not yet expired");
  await s.sweepExpired(5000 + TOMBSTONE_TTL_MS, 1);
  await assert.rejects(s.listModels("tomb", "test", 10, ids[1]), CursorNotFoundError);
});

test("delete removes model, metadata and checkpoint; a late update does not resurrect it", async () => {
  const m = rec("del", "test", 1000);
  await s.createModel(m, META);
  assert.deepEqual(await s.getOwnedModel(m.id, "del", "test"), m);
  assert.equal(await s.getOwnedModel(m.id, "del", "live"), undefined);
  assert.equal(await s.getOwnedModel(m.id, "someone", "test"), undefined);
  const up = await s.updateModel(m.id, { current_epoch: 1, status: "ready" }, { epoch: 1 });
  assert.equal(up?.current_epoch, 1);
  assert.deepEqual(await s.getCheckpoint(m.id), { epoch: 1 });
  assert.ok((await s.modelsWithStatus("ready")).some((x) => x.id === m.id));
  assert.equal(await s.deleteModel(m.id), true);
  assert.equal(await s.updateModel(m.id, { current_epoch: 2 }, { epoch: 2 }), undefined);
  assert.equal(await s.getModel(m.id), undefined);
  assert.equal(await s.getMetadata(m.id), undefined);
  assert.equal(await s.getCheckpoint(m.id), undefined);
  assert.equal(await s.claimTraining(m.id), undefined);
  assert.equal((await s.listModels("del", "test", 10)).items.length, 0);
});

test("fencing: a write with an older claim's token is refused, the latest claim's is applied", async () => {
  const m = rec("fence", "test", 1000);
  await s.createModel(m, META);
  const t1 = await s.claimTraining(m.id);
  const t2 = await s.claimTraining(m.id);
  assert.ok(t1 !== undefined && t2 !== undefined && t2 > t1);
  assert.equal(await s.updateModel(m.id, { current_epoch: 5 }, { by: "old" }, t1), undefined);
  assert.equal((await s.getModel(m.id))?.current_epoch, 0, "the stale write changed nothing");
  assert.equal(await s.getCheckpoint(m.id), undefined);
  assert.equal((await s.updateModel(m.id, { current_epoch: 3 }, { by: "new" }, t2))?.current_epoch, 3);
  assert.deepEqual(await s.getCheckpoint(m.id), { by: "new" });
  assert.equal((await s.updateModel(m.id, { status: "failed" }))?.status, "failed", "without a fence: unconditional");
  assert.deepEqual((await s.modelsWithStatus("failed")).map((x) => x.id), [m.id]);
  // A training whose stop has not reached it yet: its model was set to another state meanwhile.
  assert.equal(await s.updateModel(m.id, { status: "ready", current_epoch: 4 }, { by: "late" }, t2), undefined);
  assert.equal((await s.getModel(m.id))?.status, "failed", "the latest claim does not bring back a model that left training");
  assert.deepEqual(await s.getCheckpoint(m.id), { by: "new" });
});

test("checkpoints and metadata round-trip: typed arrays, Buffers, nesting and key order", async () => {
  const m = rec("ckpt", "test", 1000);
  const meta = { features: ["z", "a"], cardinalities: { z: 3, a: 2 }, empirical_probs: { z: [0.25, 0.25, 0.5], a: [0.1, 0.9] }, value_mappings: { z: { "\u0000x": 0, b: 1 } } };
  await s.createModel(m, meta);
  const got = await s.getMetadata(m.id);
  assert.deepEqual(got, meta);
  assert.deepEqual(Object.keys(got!.cardinalities), ["z", "a"]);
  const ckpt = {
    format: "synthd-generator",
    weights: { w: { shape: [2, 2], data: Buffer.from(new Float32Array([1, 2, 3, 4]).buffer) } },
    ema: new Float32Array([0.1, -2.5, NaN, Infinity]),
    adam: { m: new Float64Array([1e-300]), counts: new Int32Array([-1, 7]), raw: new Uint8Array([9, 8]) },
    rng: [1, 2, 3, 4294967295],
    best: null,
  };
  await s.updateModel(m.id, { current_epoch: 1 }, ckpt);
  const back = await s.getCheckpoint<typeof ckpt>(m.id);
  assert.ok(back?.ema instanceof Float32Array);
  assert.deepEqual([...back.ema], [...ckpt.ema]);
  assert.ok(back.adam.m instanceof Float64Array && back.adam.m[0] === 1e-300);
  assert.ok(back.adam.counts instanceof Int32Array);
  assert.deepEqual([...back.adam.counts], [-1, 7]);
  assert.ok(back.adam.raw instanceof Uint8Array);
  assert.deepEqual([...back.adam.raw], [9, 8]);
  assert.ok(back.weights.w.data instanceof Uint8Array);
  const w = back.weights.w.data;
  assert.deepEqual([...new Float32Array(new Uint8Array(w).buffer)], [1, 2, 3, 4]);
  assert.deepEqual(back.rng, ckpt.rng);
  assert.equal(back.best, null);
  // A later write without a checkpoint keeps the stored one.
  await s.updateModel(m.id, { current_epoch: 2 });
  assert.deepEqual([...(await s.getCheckpoint<typeof ckpt>(m.id))!.ema], [...ckpt.ema]);
});

test("rate counters round-trip and old ones are swept", async () => {
  await s.putRateCounter("org:a", { window: 10, prev: 1, curr: 2 });
  await s.putRateCounter("addr:1.2.3.4", { window: 5, prev: 0, curr: 9 });
  await s.putRateCounter("org:a", { window: 11, prev: 2, curr: 3 });
  assert.deepEqual(new Map(await s.rateCounterEntries()).get("org:a"), { window: 11, prev: 2, curr: 3 });
  assert.equal(await s.sweepRateCounters(9), 1);
  assert.deepEqual((await s.rateCounterEntries()).map(([k]) => k), ["org:a"]);
});

test("a write the database cannot take rejects with StoreWriteError and writes nothing; a read, StoreUnavailableError", async () => {
  const own = await freshDatabase();
  const admin = new Client({ connectionString: PG_URL });
  await admin.connect();
  const x = await PgStore.open(own.url, { instanceId: "cut-off" });
  try {
    await x.chargeUsage(charge({ org: "w", rows: 1 }));
    // A charge in the middle of its transaction (waiting for a row lock held elsewhere) ...
    const locker = new Client({ connectionString: own.url });
    locker.on("error", () => undefined);
    await locker.connect();
    await locker.query("BEGIN");
    await locker.query("SELECT rows FROM usage WHERE org = 'w' FOR UPDATE");
    const cut = x.chargeUsage(charge({ org: "w", rows: 1 })).then(() => "written", (e: unknown) => e);
    const waiting = async (): Promise<boolean> =>
      (await admin.query("SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'", [own.name])).rows.length > 0;
    while (!(await waiting())) await new Promise((r) => setTimeout(r, 5));
    // ... when the database goes away under the open pool: connections cut, new ones refused.
    await admin.query(`ALTER DATABASE ${own.name} ALLOW_CONNECTIONS false`);
    await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", [own.name]);
    assert.ok((await cut) instanceof StoreWriteError, "the charge cut off mid-transaction");
    await locker.end().catch(() => undefined);
    await assert.rejects(x.chargeUsage(charge({ org: "w", rows: 1 })), StoreWriteError);
    await assert.rejects(x.settleCharge("req_x"), (e: unknown) => e instanceof StoreWriteError && e.code === "STORE_WRITE_FAILED");
    await assert.rejects(x.createModel(rec("w", "test", 1), META), StoreWriteError);
    // Reads that cannot reach the database: StoreUnavailableError (the server answers 503), not a raw driver error (500).
    await assert.rejects(x.getUsage("w", "live", "2030-01"), (e: unknown) => e instanceof StoreUnavailableError && e.code === "STORE_UNAVAILABLE");
    await assert.rejects(x.findKey("svc_test_x"), StoreUnavailableError);
    await admin.query(`ALTER DATABASE ${own.name} ALLOW_CONNECTIONS true`);
    assert.equal(await x.getUsage("w", "live", "2030-01"), 1, "the refused charge wrote nothing; the store works again");
    assert.deepEqual(await x.chargeUsage(charge({ org: "w", rows: 1 })), { ok: true, used: 2 });
  } finally {
    await admin.query(`ALTER DATABASE ${own.name} ALLOW_CONNECTIONS true`).catch(() => undefined);
    await admin.end();
    await x.close();
    await own.drop();
  }
});
