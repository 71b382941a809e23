/**
 * Contract: "Limits" (one test per row), with DESIGN §3's rate-limit and quota decisions: the
 * sliding window counter per organization (concurrent admission exact, previous window weighted
 * by overlap, counts kept across restarts, per-org limits), failed authentications limited per
 * client address, and monthly row quotas charged atomically before generating, refunded on
 * failure, never exceeded under concurrency, with a live ledger that `synthd usage` reports.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { startServer } from "../../src/server/app";
import { monthOf } from "../../src/usage/quota";
import { EngineUnavailableError } from "../../src/engine/engine";
import { FREE_TIER_ROWS } from "../../src/store";
import { runCli } from "../../bench/harness";
import pino from "pino";
import {
  assertEnvelope,
  assertError,
  call,
  createModel,
  QUICK,
  readyModel,
  startContract,
  tinyMetadata,
  waitTrained,
  type Contract,
  type Res,
} from "./harness";
import type { Model } from "../../src/contract";

const MIN = 60_000;
/** 30 s into a Unix minute: a window start far from any boundary the tests cross by accident. */
const T0 = Date.UTC(2033, 2, 10, 8, 0, 0) + 30_000;

let c: Contract; // server default rate limit (60/min), the real default
before(async () => {
  c = await startContract({ rateLimit: undefined }); // undefined: the server's own default applies
});
after(async () => {
  await c.stop();
});

const fire = (n: number, key: string, path = "/v1/models"): Promise<Res[]> =>
  Promise.all(Array.from({ length: n }, () => call(c.url, path, { key })));
const count = (rs: Res[], status: number): number => rs.filter((r) => r.status === status).length;

describe("Limits: request rate", () => {
  test("Limits: Request rate 60 requests per minute default, per organization; 200 requests at once admit exactly 60", async () => {
    const key = await c.newKey("rate-default", "test");
    c.clock.freeze(T0);
    try {
      const rs = await fire(200, key);
      assert.equal(count(rs, 200), 60, "exactly the limit admitted");
      assert.equal(count(rs, 429), 140);
      for (const r of rs) assert.equal(r.headers.get("x-ratelimit-limit"), "60");
      for (const r of rs.filter((x) => x.status === 429)) {
        assertError(r, "rate_limit_exceeded", undefined);
        assert.equal(r.headers.get("x-ratelimit-remaining"), "0");
        // A fresh counter full in its first window: the next admission is when the next window
        // has overlapped 1/60 of this one away, i.e. 1 s after it starts (30 s + 1 s from now).
        assert.equal(r.headers.get("retry-after"), "31");
        assert.ok(r.json.error.message.includes("31 seconds"), r.json.error.message);
        assert.equal(r.headers.get("x-ratelimit-reset"), String((T0 + 31_000) / 1000));
      }
      const remaining = rs.filter((r) => r.status === 200).map((r) => Number(r.headers.get("x-ratelimit-remaining"))).sort((a, b) => b - a);
      assert.deepEqual(remaining, Array.from({ length: 60 }, (_, i) => 59 - i), "Remaining counts down 59..0");
    } finally {
      c.clock.reset();
    }
  });

  test("Limits: Request rate is a sliding window counter (previous window weighted by overlap)", async () => {
    const key = await c.newKey("rate-sliding", "test");
    try {
      c.clock.freeze(T0);
      assert.equal(count(await fire(70, key), 200), 60);
      // 15 s into the next window: estimate = 60 * (1 - 15/60) = 45, so 15 more fit.
      c.clock.freeze(T0 + 30_000 + 15_000);
      const rs = await fire(40, key);
      assert.equal(count(rs, 200), 15);
      // Now prev 60, curr 15 at 15 s: 60 * (1 - f) + 15 + 1 <= 60 from f = 16/60, i.e. in 1 s.
      for (const r of rs.filter((x) => x.status === 429)) assert.equal(r.headers.get("retry-after"), "1");
      c.clock.freeze(T0 + 30_000 + 16_000);
      assert.equal(count(await fire(5, key), 200), 1, "exactly one more after the second passed");
      // Two windows on, only the previous window's 16 weigh: at its start all 16 count.
      c.clock.freeze(T0 + 30_000 + MIN);
      assert.equal(count(await fire(60, key), 200), 44);
      // Windows with no traffic at all: the full budget is back.
      c.clock.freeze(T0 + 30_000 + 3 * MIN);
      assert.equal(count(await fire(61, key), 200), 60);
    } finally {
      c.clock.reset();
    }
  });

  test("Limits: Request rate applies to all /v1 endpoints, errors included", async () => {
    const key = await c.newKey("rate-all", "test", 6);
    c.clock.freeze(T0);
    try {
      const paths: [string, string, unknown][] = [
        ["GET", "/v1/models", undefined],
        ["GET", "/v1/models/mdl_000000000000", undefined],
        ["DELETE", "/v1/models/mdl_000000000000", undefined],
        ["POST", "/v1/models/mdl_000000000000/generate", { embedding: { num_rows: 1 } }],
        ["POST", "/v1/models", { metadata: "bad" }],
        ["GET", "/v1/openapi.json", undefined],
      ];
      const got: number[] = [];
      for (const [method, path, body] of paths) {
        const r = await call(c.url, path, { key, method, body });
        got.push(Number(r.headers.get("x-ratelimit-remaining")));
      }
      assert.deepEqual(got, [5, 4, 3, 2, 1, 0], "every request counted, whatever its outcome");
      assertError(await call(c.url, "/v1/nope", { key }), "rate_limit_exceeded", undefined);
    } finally {
      c.clock.reset();
    }
  });

  test("Limits: Request rate is configurable per organization", async () => {
    const five = await c.newKey("rate-five", "test", 5);
    const big = await c.newKey("rate-big", "test", 500);
    c.clock.freeze(T0);
    try {
      const a = await fire(20, five);
      assert.equal(count(a, 200), 5);
      assert.equal(a[0].headers.get("x-ratelimit-limit"), "5");
      const b = await fire(120, big);
      assert.equal(count(b, 200), 120);
      await c.store.setOrgLimits("rate-five", { rate_limit: 8 });
      assert.equal(count(await fire(10, five), 200), 3, "a changed limit applies to the next request");
    } finally {
      c.clock.reset();
    }
  });

  test("Limits: Request rate counters survive a server restart", async () => {
    const key = await c.newKey("rate-restart", "test", 10);
    c.clock.freeze(T0);
    try {
      assert.equal(count(await fire(7, key), 200), 7);
      // A second server over the same store (the first one stopped): same counts.
      await c.server.close();
      const again = await startServer({ host: "127.0.0.1", port: 0, store: c.store, engine: c.engine, logger: pino({ level: "silent" }), clock: c.clock.now, ...c.shared?.serverOptions });
      c.server = again;
      c.url = again.url;
      const r = await call(c.url, "/v1/models", { key });
      assert.equal(r.headers.get("x-ratelimit-remaining"), "2");
      assert.equal(count(await fire(5, key), 200), 2);
    } finally {
      c.clock.reset();
    }
  });

  test("Limits: requests that fail authentication are limited per client address", async () => {
    const s = await startContract({ authFailureLimit: 5 });
    try {
      s.clock.freeze(T0);
      const bad = `svc_test_${"Q".repeat(32)}`;
      const rs = await Promise.all(Array.from({ length: 12 }, (_, i) => call(s.url, "/v1/models", i % 2 ? { key: bad } : {})));
      assert.equal(rs.filter((r) => r.status === 401).length, 5);
      const limited = rs.filter((r) => r.status === 429);
      assert.equal(limited.length, 7);
      for (const r of limited) {
        assertError(r, "rate_limit_exceeded", undefined);
        assert.match(r.headers.get("retry-after") ?? "", /^[1-9]\d*$/);
      }
      for (const r of rs.filter((x) => x.status === 401)) assert.equal(r.headers.get("x-ratelimit-limit"), "5");
      // While the address is over its budget a valid key is still served (failed logins from a
      // shared address must not lock its tenants out), and more bad keys are still refused.
      const valid = await call(s.url, "/v1/models", { key: s.keys.test });
      assert.equal(valid.status, 200, valid.text);
      assertError(await call(s.url, "/v1/models", { key: bad }), "rate_limit_exceeded", undefined);
      assertError(await call(s.url, "/v1/models"), "rate_limit_exceeded", undefined);
      // Valid keys never count against the address.
      s.clock.freeze(T0 + 3 * MIN);
      for (let i = 0; i < 10; i++) assert.equal((await call(s.url, "/v1/models", { key: s.keys.test })).status, 200);
      assert.equal((await call(s.url, "/v1/models", { key: bad })).status, 401);
    } finally {
      await s.stop();
    }
  });
});

describe("Limits: monthly usage quota", () => {
  let sandbox: string;
  let live: string;
  let mSandbox: Model;
  let mLive: Model;
  before(async () => {
    sandbox = await c.newKey("quota", "test", 1_000_000);
    live = await c.newKey("quota", "live");
    mSandbox = await readyModel(c, sandbox);
    mLive = await readyModel(c, live);
  });
  const gen = (m: Model, key: string, rows: number): Promise<Res> =>
    call(c.url, `/v1/models/${m.id}/generate`, { key, body: { embedding: { num_rows: rows } } });
  const seed = (env: "test" | "live", rows: number, at: number) =>
    c.store.chargeUsage({ org: "quota", env, month: monthOf(at), rows, quota: Number.MAX_SAFE_INTEGER, model_id: "seed", request_id: "seed", at_ms: at });

  test("Limits: Monthly usage quota, free tier 100K rows per month; exceeding gives 402 quota_exceeded on Generate", async () => {
    const at = Date.UTC(2034, 0, 15);
    c.clock.freeze(at);
    try {
      assert.equal(FREE_TIER_ROWS, 100_000);
      await seed("test", 99_990, at);
      assertEnvelope(await gen(mSandbox, sandbox, 10), 200, "generation");
      assert.equal((await c.store.getUsage("quota", "test", "2034-01")), 100_000, "exactly the free tier used");
      const r = await gen(mSandbox, sandbox, 1);
      assertError(r, "quota_exceeded", undefined);
      assert.ok(r.json.error.message.includes("100000"), r.json.error.message);
    } finally {
      c.clock.reset();
    }
  });

  test("Limits: Monthly usage quota applies to Create Model: refused with 402 when the quota is used up", async () => {
    const at = Date.UTC(2034, 1, 15);
    c.clock.freeze(at);
    try {
      await seed("test", 99_999, at);
      assertEnvelope(await call(c.url, "/v1/models", { key: sandbox, body: { metadata: tinyMetadata(), config: QUICK } }), 201, "model");
      await seed("test", 1, at);
      const r = await call(c.url, "/v1/models", { key: sandbox, body: { metadata: tinyMetadata(), config: QUICK } });
      assertError(r, "quota_exceeded", undefined);
      assert.equal((await c.store.getUsage("quota", "test", "2034-02")), 100_000, "creating charges nothing");
    } finally {
      c.clock.reset();
    }
  });

  test("Limits: Monthly usage quota resets at the start of each billing period (calendar month, UTC)", async () => {
    const end = Date.UTC(2034, 3, 1) - 1; // 2034-03-31T23:59:59.999Z
    c.clock.freeze(end);
    try {
      await seed("test", 100_000, end);
      assertError(await gen(mSandbox, sandbox, 1), "quota_exceeded", undefined);
      c.clock.freeze(end + 1); // 2034-04-01T00:00:00.000Z
      assertEnvelope(await gen(mSandbox, sandbox, 1), 200, "generation");
      assert.equal((await c.store.getUsage("quota", "test", "2034-04")), 1);
    } finally {
      c.clock.reset();
    }
  });

  test("Quota: a request that would cross the quota is refused with 402 and charges nothing", async () => {
    const at = Date.UTC(2034, 4, 15);
    c.clock.freeze(at);
    try {
      await seed("test", 99_990, at);
      assertError(await gen(mSandbox, sandbox, 11), "quota_exceeded", undefined);
      assert.equal((await c.store.getUsage("quota", "test", "2034-05")), 99_990);
      assertEnvelope(await gen(mSandbox, sandbox, 10), 200, "generation");
    } finally {
      c.clock.reset();
    }
  });

  test("Quota: 20 concurrent generates against a nearly spent quota never push usage over it", async () => {
    const at = Date.UTC(2034, 5, 15);
    c.clock.freeze(at);
    try {
      await seed("test", 100_000 - 1_000, at);
      const rs = await Promise.all(Array.from({ length: 20 }, () => gen(mSandbox, sandbox, 100)));
      assert.equal(count(rs, 200), 10, rs.map((r) => r.status).join(","));
      assert.equal(count(rs, 402), 10);
      assert.equal((await c.store.getUsage("quota", "test", "2034-06")), 100_000);
    } finally {
      c.clock.reset();
    }
  });

  test("Quota: the charge is refunded when generation fails", async () => {
    const at = Date.UTC(2034, 6, 15);
    c.clock.freeze(at);
    try {
      c.engine.fail.generate = new EngineUnavailableError("workers down", 2);
      assertError(await gen(mLive, live, 25), "training_service_unavailable", undefined);
      c.engine.fail.generate = new Error("boom");
      assertError(await gen(mLive, live, 5), "internal_error", undefined);
      assert.equal((await c.store.getUsage("quota", "live", "2034-07")), 0);
      const ledger = (await c.store.ledgerEntries("quota", "2034-07"));
      assert.deepEqual(ledger.map((e) => [e.kind, e.rows]), [["charge", 25], ["refund", -25], ["charge", 5], ["refund", -5]]);
    } finally {
      c.clock.reset();
    }
  });

  test("Quota: live keys use the organization's plan (default 100,000), configurable per organization", async () => {
    const at = Date.UTC(2034, 7, 15);
    c.clock.freeze(at);
    try {
      await c.store.setOrgLimits("quota", { live_quota: 50 });
      assertEnvelope(await gen(mLive, live, 50), 200, "generation");
      assertError(await gen(mLive, live, 1), "quota_exceeded", undefined);
      assertEnvelope(await gen(mSandbox, sandbox, 1000), 200, "generation");
      const set = await runCli(["orgs", "set", ...c.storeArgs, "--org", "quota", "--live-quota", "default"]);
      assert.equal(set.code, 0, set.stderr);
      assert.equal(JSON.parse(set.stdout).live_quota, 100_000);
      assertEnvelope(await gen(mLive, live, 1000), 200, "generation");
    } finally {
      c.clock.reset();
    }
  });

  test("Quota: live usage is written to a ledger (org, env, month, rows, model id, request id, time) and `synthd usage` reports it", async () => {
    const at = Date.UTC(2034, 8, 15, 12);
    c.clock.freeze(at);
    try {
      const r = await gen(mLive, live, 30);
      assertEnvelope(r, 200, "generation");
      const ledger = (await c.store.ledgerEntries("quota", "2034-09"));
      assert.equal(ledger.length, 1);
      const e = ledger[0];
      assert.deepEqual(
        { org: e.org, env: e.env, month: e.month, kind: e.kind, rows: e.rows, model_id: e.model_id, at: e.at },
        { org: "quota", env: "live", month: "2034-09", kind: "charge", rows: 30, model_id: mLive.id, at: new Date(at).toISOString() },
      );
      assert.match(e.request_id, /^req_[A-Za-z0-9]{24}$/);
      await gen(mSandbox, sandbox, 12);
      assert.equal((await c.store.ledgerEntries("quota", "2034-09")).length, 1, "sandbox usage is not billed");

      await c.flushed();
      const out = await runCli(["usage", ...c.storeArgs, "--org", "quota", "--month", "2034-09", "--json", "--ledger"]);
      assert.equal(out.code, 0, out.stderr);
      const rep = JSON.parse(out.stdout);
      assert.equal(rep.month, "2034-09");
      const byEnv = Object.fromEntries(rep.usage.map((l: any) => [l.env, l]));
      assert.equal(byEnv.test.rows, 12);
      assert.equal(byEnv.test.quota, 100_000);
      assert.equal(byEnv.live.rows, 30);
      assert.deepEqual({ ...byEnv.live.ledger, items: byEnv.live.ledger.items.length }, { entries: 1, charged: 30, refunded: 0, items: 1 });
      const text = await runCli(["usage", ...c.storeArgs, "--month", "2034-09"]);
      assert.equal(text.code, 0, text.stderr);
      assert.match(text.stdout, /^ORG\s+ENV\s+MONTH\s+ROWS\s+QUOTA\s+REMAINING\s+LEDGER/);
      assert.match(text.stdout, /quota\s+live\s+2034-09\s+30\s+100000\s+99970\s+1 entries/);
    } finally {
      c.clock.reset();
    }
  });
});

describe("Limits: other rows", () => {
  test("Limits: List page size 1 to 100, default 20", async () => {
    const key = await c.newKey("pages", "test", 1_000_000);
    for (let i = 0; i < 21; i++) {
      const m = assertEnvelope(await call(c.url, "/v1/models", { key, body: { metadata: tinyMetadata(), config: QUICK } }), 201, "model");
      await c.engine.stop(m.id);
    }
    assert.equal((await call(c.url, "/v1/models", { key })).json.data.length, 20);
    assert.equal((await call(c.url, "/v1/models?limit=1", { key })).json.data.length, 1);
    assert.equal((await call(c.url, "/v1/models?limit=100", { key })).json.data.length, 21);
    assertError(await call(c.url, "/v1/models?limit=0", { key }), "parameter_invalid", "query.limit");
    assertError(await call(c.url, "/v1/models?limit=101", { key }), "parameter_invalid", "query.limit");
  });

  test("Limits: Idempotency key lifetime 24 hours on POST endpoints", async () => {
    const key = await c.newKey("lifetime", "test", 1_000_000);
    const t0 = Date.UTC(2035, 0, 1);
    c.clock.freeze(t0);
    try {
      const h = { "idempotency-key": "lifetime-key" };
      const body = { metadata: tinyMetadata(), config: QUICK };
      const a = await call(c.url, "/v1/models", { key, body, headers: h });
      c.clock.freeze(t0 + 24 * 3600_000 - 1);
      assert.equal((await call(c.url, "/v1/models", { key, body, headers: h })).json.data.id, a.json.data.id);
      c.clock.freeze(t0 + 24 * 3600_000);
      assert.notEqual((await call(c.url, "/v1/models", { key, body, headers: h })).json.data.id, a.json.data.id);
    } finally {
      c.clock.reset();
    }
  });

  test("Limits: Training time max_training_time default 14400 seconds; reaching it ends training in ready", async () => {
    const key = await c.newKey("trainingtime", "test", 1_000_000);
    const def = await call(c.url, "/v1/models", { key, body: { metadata: tinyMetadata(), config: { ...QUICK, max_epochs: 1 } } });
    assert.equal(def.json.data.config.max_training_time, 14400);
    const m = await createModel(c, key, { ...QUICK, max_epochs: 1_000_000, early_stop_patience: 0, max_training_time: 1 });
    const done = await waitTrained(c, m.id, key, 60_000);
    assert.equal(done.status, "ready", JSON.stringify(done.error));
    assert.ok(done.current_epoch < 1_000_000);
  });

  test("Limits: metadata.features minimum 1 item on Create Model", async () => {
    const key = await c.newKey("features", "test", 1_000_000);
    const r = await call(c.url, "/v1/models", { key, body: { metadata: { ...tinyMetadata(), features: [] } } });
    assertError(r, "parameter_invalid", "body.metadata.features");
    const one = { features: ["a"], cardinalities: { a: 2 }, empirical_probs: { a: [0.5, 0.5] } };
    assertEnvelope(await call(c.url, "/v1/models", { key, body: { metadata: one, config: QUICK } }), 201, "model");
  });
});
