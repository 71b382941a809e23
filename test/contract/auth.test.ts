/**
 * Contract: "Authentication" rules 1-6 and the key prefix table; DESIGN §3: sandbox and live keys
 * of one organization see disjoint sets of models.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { assertEnvelope, assertError, call, createModel, QUICK, startContract, tinyMetadata, type Contract } from "./harness";
import type { Model } from "../../src/contract";

let c: Contract;
before(async () => {
  c = await startContract();
});
after(async () => {
  await c.stop();
});

const ENDPOINTS: [string, string][] = [
  ["POST", "/v1/models"],
  ["GET", "/v1/models"],
  ["GET", "/v1/models/mdl_0123456789ab"],
  ["DELETE", "/v1/models/mdl_0123456789ab"],
  ["POST", "/v1/models/mdl_0123456789ab/generate"],
  ["GET", "/v1/models/mdl_0123456789ab/metadata"],
  ["GET", "/v1/openapi.json"],
  ["GET", "/v1/anything-else"],
];

describe("Authentication", () => {
  test("Authentication rule 1: every /v1/* endpoint requires Authorization: Bearer <API_KEY>", async () => {
    for (const [method, path] of ENDPOINTS) {
      const body = method === "POST" ? { metadata: tinyMetadata() } : undefined;
      const r = await call(c.url, path, { method, body });
      assertError(r, "api_key_missing", undefined);
    }
  });

  test("Authentication rule 2 / Key prefix svc_test_: Sandbox (free, no billing)", async () => {
    assert.match(c.keys.test, /^svc_test_/);
    const m = await createModel(c, c.keys.test);
    assert.equal((await c.store.getModel(m.id))?.env, "test");
    // Sandbox usage is never billed: no ledger entries.
    await waitReady(m.id, c.keys.test);
    const g = await call(c.url, `/v1/models/${m.id}/generate`, { key: c.keys.test, body: { embedding: { num_rows: 3 } } });
    assertEnvelope(g, 200, "generation");
    const { monthOf } = await import("../../src/usage/quota");
    assert.deepEqual((await c.store.ledgerEntries("acme", monthOf(c.clock.now()))).filter((e) => e.env === "test"), []);
  });

  test("Authentication rule 2 / Key prefix svc_live_: Production (metered)", async () => {
    assert.match(c.keys.live, /^svc_live_/);
    const m = await createModel(c, c.keys.live);
    assert.equal((await c.store.getModel(m.id))?.env, "live");
    await waitReady(m.id, c.keys.live);
    const g = await call(c.url, `/v1/models/${m.id}/generate`, { key: c.keys.live, body: { embedding: { num_rows: 3 } } });
    assertEnvelope(g, 200, "generation");
    const { monthOf } = await import("../../src/usage/quota");
    const ledger = (await c.store.ledgerEntries("acme", monthOf(c.clock.now())));
    assert.ok(ledger.some((e) => e.env === "live" && e.kind === "charge" && e.rows === 3 && e.model_id === m.id), "metered in the ledger");
  });

  test("Authentication rule 3: no Authorization header gives 401 api_key_missing", async () => {
    assertError(await call(c.url, "/v1/models"), "api_key_missing", undefined);
    assertError(await call(c.url, "/v1/models", { headers: { authorization: "" } }), "api_key_missing", undefined);
  });

  test("Authentication rule 4: a key that matches no known key gives 401 api_key_invalid", async () => {
    for (const auth of [`Bearer svc_test_${"A".repeat(32)}`, `Bearer svc_live_${"B".repeat(32)}`, `Bearer sk_${"C".repeat(32)}`, `Basic ${c.keys.test}`, "Bearer"]) {
      assertError(await call(c.url, "/v1/models", { headers: { authorization: auth } }), "api_key_invalid", undefined);
    }
    const bad = await call(c.url, "/v1/models", { headers: { authorization: `Bearer svc_test_${"A".repeat(32)}` } });
    assert.equal(bad.json.error.message.includes("A".repeat(32)), false, "the key is masked in the message");
  });

  test("Authentication rule 5: resources of another organization are never disclosed: 404, not 403", async () => {
    const m = await createModel(c, c.keys.test);
    for (const [method, path] of [
      ["GET", `/v1/models/${m.id}`],
      ["GET", `/v1/models/${m.id}/metadata`],
      ["DELETE", `/v1/models/${m.id}`],
      ["POST", `/v1/models/${m.id}/generate`],
    ]) {
      const r = await call(c.url, path, { key: c.keys.other, method, body: method === "POST" ? { embedding: { num_rows: 1 } } : undefined });
      assertError(r, "model_not_found", undefined);
      const missing = await call(c.url, path.replace(m.id, "mdl_ffffffffffff"), { key: c.keys.other, method, body: method === "POST" ? { embedding: { num_rows: 1 } } : undefined });
      assert.equal(r.json.error.message.replace(m.id, "X"), missing.json.error.message.replace("mdl_ffffffffffff", "X"), "indistinguishable from a missing model");
    }
    const list = await call(c.url, "/v1/models?limit=100", { key: c.keys.other });
    assert.equal(list.json.data.some((x: Model) => x.id === m.id), false);
    assert.equal((await call(c.url, `/v1/models/${m.id}`, { key: c.keys.test })).status, 200);
  });

  test("Authentication rule 6: rate limits apply per organization, not per key", async () => {
    const a = await c.newKey("per-org", "test", 4);
    const b = await c.newKey("per-org", "test");
    const live = await c.newKey("per-org", "live");
    const t0 = Date.UTC(2031, 0, 1, 0, 0, 10);
    c.clock.freeze(t0);
    try {
      const statuses: number[] = [];
      for (const key of [a, b, live, a, b]) statuses.push((await call(c.url, "/v1/models", { key })).status);
      assert.deepEqual(statuses, [200, 200, 200, 200, 429], "three keys, one budget of 4");
    } finally {
      c.clock.reset();
    }
  });

  test("Authentication rule 6: quotas apply per organization, not per key", async () => {
    const k1 = await c.newKey("quota-org", "live");
    const k2 = await c.newKey("quota-org", "live");
    await c.store.setOrgLimits("quota-org", { live_quota: 10 });
    const m = await createModel(c, k1);
    await waitReady(m.id, k1);
    assertEnvelope(await call(c.url, `/v1/models/${m.id}/generate`, { key: k1, body: { embedding: { num_rows: 6 } } }), 200, "generation");
    assertError(await call(c.url, `/v1/models/${m.id}/generate`, { key: k2, body: { embedding: { num_rows: 6 } } }), "quota_exceeded", undefined);
    assertEnvelope(await call(c.url, `/v1/models/${m.id}/generate`, { key: k2, body: { embedding: { num_rows: 4 } } }), 200, "generation");
  });
});

describe("Environments (DESIGN §3)", () => {
  test("Environments: sandbox and live keys of one organization see disjoint sets of models", async () => {
    const sandbox = await c.newKey("envs", "test");
    const live = await c.newKey("envs", "live");
    const s = assertEnvelope(await call(c.url, "/v1/models", { key: sandbox, body: { metadata: tinyMetadata(), config: QUICK } }), 201, "model");
    const l = assertEnvelope(await call(c.url, "/v1/models", { key: live, body: { metadata: tinyMetadata(), config: QUICK } }), 201, "model");
    const ls = (await call(c.url, "/v1/models", { key: sandbox })).json.data.map((m: Model) => m.id);
    const ll = (await call(c.url, "/v1/models", { key: live })).json.data.map((m: Model) => m.id);
    assert.deepEqual(ls, [s.id]);
    assert.deepEqual(ll, [l.id]);
    assertError(await call(c.url, `/v1/models/${s.id}`, { key: live }), "model_not_found", undefined);
    assertError(await call(c.url, `/v1/models/${l.id}`, { key: sandbox }), "model_not_found", undefined);
    assertError(await call(c.url, `/v1/models/${s.id}`, { key: live, method: "DELETE" }), "model_not_found", undefined);
    assert.equal((await call(c.url, `/v1/models/${s.id}`, { key: sandbox })).status, 200);
  });

  test("Environments: quotas are counted per organization and environment", async () => {
    const sandbox = await c.newKey("env-quota", "test");
    const live = await c.newKey("env-quota", "live");
    const { monthOf } = await import("../../src/usage/quota");
    await c.store.chargeUsage({ org: "env-quota", env: "test", month: monthOf(c.clock.now()), rows: 100_000, quota: 100_000, model_id: "-", request_id: "-", at_ms: c.clock.now() });
    assertError(await call(c.url, "/v1/models", { key: sandbox, body: { metadata: tinyMetadata(), config: QUICK } }), "quota_exceeded", undefined);
    assertEnvelope(await call(c.url, "/v1/models", { key: live, body: { metadata: tinyMetadata(), config: QUICK } }), 201, "model");
  });
});

async function waitReady(id: string, key: string): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    const r = await call(c.url, `/v1/models/${id}`, { key });
    if (r.json.data.status !== "training") {
      assert.equal(r.json.data.status, "ready");
      return;
    }
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error(`model ${id} did not finish training`);
}
