/**
 * Contract: "Endpoints" — common request and response headers, and every table of Create Model,
 * Get Model, List Models, Generate Synthetic Data and Delete Model, one test per row.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { newModelId } from "../../src/store";
import {
  assertEnvelope,
  assertError,
  call,
  createModel,
  QUICK,
  readyModel,
  REQUEST_ID,
  startContract,
  tinyMetadata,
  type Contract,
} from "./harness";
import type { Model } from "../../src/contract";

let c: Contract;
let ready: Model;

before(async () => {
  c = await startContract();
  ready = await readyModel(c);
});
after(async () => {
  await c.stop();
});

const post = (path: string, body: unknown, key = c.keys.test, headers: Record<string, string> = {}) =>
  call(c.url, path, { key, body, headers });

describe("Common request headers", () => {
  test("Header Authorization: required, Bearer <API_KEY>", async () => {
    assertError(await call(c.url, "/v1/models"), "api_key_missing", undefined);
    assert.equal((await call(c.url, "/v1/models", { headers: { authorization: `Bearer ${c.keys.test}` } })).status, 200);
  });

  test("Header Content-Type: required on POST, application/json", async () => {
    const body = JSON.stringify({ metadata: tinyMetadata(), config: QUICK });
    const r = await call(c.url, "/v1/models", { key: c.keys.test, body, headers: { "content-type": "text/plain" } });
    assertError(r, "parameter_invalid", "headers.content-type");
    const ok = await call(c.url, "/v1/models", { key: c.keys.test, body });
    assertEnvelope(ok, 201, "model");
  });

  test("Header Idempotency-Key: recommended on POST, a unique key for safe retries", async () => {
    const body = { metadata: tinyMetadata(), config: QUICK };
    const key = `ik-${Date.now()}-${Math.random()}`;
    const a = await post("/v1/models", body, c.keys.test, { "idempotency-key": key });
    const b = await post("/v1/models", body, c.keys.test, { "idempotency-key": key });
    assert.equal(a.status, 201);
    assert.equal(b.status, 201);
    assert.equal(b.json.data.id, a.json.data.id, "the retry is the same model");
    const none = await post("/v1/models", body);
    assert.equal(none.status, 201, "optional: a POST without the header works");
  });
});

describe("Common response headers", () => {
  test("Response header X-Request-Id: unique request identifier", async () => {
    const a = await call(c.url, "/v1/models", { key: c.keys.test });
    const b = await call(c.url, "/v1/models", { key: c.keys.test });
    assert.match(a.headers.get("x-request-id") ?? "", REQUEST_ID);
    assert.notEqual(a.headers.get("x-request-id"), b.headers.get("x-request-id"));
  });

  test("Response header X-RateLimit-Limit: on authenticated responses", async () => {
    for (const r of [await call(c.url, "/v1/models", { key: c.keys.test }), await call(c.url, "/v1/models/mdl_000000000000", { key: c.keys.test })]) {
      assert.match(r.headers.get("x-ratelimit-limit") ?? "", /^[1-9]\d*$/);
    }
  });

  test("Response header X-RateLimit-Remaining: on authenticated responses", async () => {
    const r = await call(c.url, "/v1/models", { key: c.keys.test });
    assert.match(r.headers.get("x-ratelimit-remaining") ?? "", /^\d+$/);
    assert.ok(Number(r.headers.get("x-ratelimit-remaining")) < Number(r.headers.get("x-ratelimit-limit")));
  });

  test("Response header X-RateLimit-Reset: Unix epoch seconds", async () => {
    const r = await call(c.url, "/v1/models", { key: c.keys.test });
    const reset = Number(r.headers.get("x-ratelimit-reset"));
    assert.ok(Number.isInteger(reset));
    const now = c.clock.now() / 1000;
    assert.ok(reset >= now && reset <= now + 120, `reset ${reset} vs now ${now}`);
  });

  test("Response header Retry-After: seconds, only on 429", async () => {
    const ok = await call(c.url, "/v1/models", { key: c.keys.test });
    assert.equal(ok.headers.get("retry-after"), null);
    const key = await c.newKey("retry-after-org", "test", 1);
    await call(c.url, "/v1/models", { key });
    const limited = await call(c.url, "/v1/models", { key });
    assertError(limited, "rate_limit_exceeded", undefined);
    assert.match(limited.headers.get("retry-after") ?? "", /^[1-9]\d*$/);
  });
});

describe("Create Model", () => {
  before(() => {
    c.engine.skipTraining = true; // only the answers matter here
  });
  after(() => {
    c.engine.skipTraining = false;
  });
  const md = tinyMetadata;
  const create = (body: unknown) => post("/v1/models", body);

  test("Create Model: POST /v1/models answers 201 Created, envelope model, data a Model in status training", async () => {
    const data = assertEnvelope(await create({ metadata: md(), config: QUICK }), 201, "model");
    assert.equal(data.status, "training");
  });

  test("Create Model body.metadata: object, required", async () => {
    assertError(await create({ config: QUICK }), "parameter_invalid", "body.metadata");
    assertError(await create({ metadata: "x" }), "parameter_invalid", "body.metadata");
  });

  test("Create Model body.metadata.cardinalities: object, required (vocabulary size per feature)", async () => {
    const { cardinalities: _, ...rest } = md();
    assertError(await create({ metadata: rest }), "parameter_invalid", "body.metadata.cardinalities");
    assertError(await create({ metadata: { ...md(), cardinalities: { a: 2, b: "3" } } }), "parameter_invalid", "body.metadata.cardinalities.b");
  });

  test("Create Model body.metadata.features: string[], required, minimum 1 item", async () => {
    const { features: _, ...rest } = md();
    assertError(await create({ metadata: rest }), "parameter_invalid", "body.metadata.features");
    assertError(await create({ metadata: { ...md(), features: [] } }), "parameter_invalid", "body.metadata.features");
    assertError(await create({ metadata: { ...md(), features: ["a", 7] } }), "parameter_invalid", "body.metadata.features[1]");
  });

  test("Create Model body.metadata.column_stats: object, optional (column statistics per feature)", async () => {
    const stats = { a: { type: "categorical", count: 10, missing: 0 }, b: { type: "numerical", count: 9, missing: 1, min: 0, max: 2, bin_edges: [0, 1, 2, 3] } };
    assertEnvelope(await create({ metadata: { ...md(), column_stats: stats }, config: QUICK }), 201, "model");
    assertError(await create({ metadata: { ...md(), column_stats: [] } }), "parameter_invalid", "body.metadata.column_stats");
  });

  test("Create Model body.metadata.value_mappings: object, optional (value-to-code mappings per feature)", async () => {
    const { value_mappings: _, ...rest } = md();
    assertEnvelope(await create({ metadata: rest, config: QUICK }), 201, "model");
    assertError(await create({ metadata: { ...md(), value_mappings: { a: { x: "0" } } } }), "parameter_invalid", "body.metadata.value_mappings.a.x");
  });

  test("Create Model body.metadata.empirical_probs: object, required (probability distribution per feature)", async () => {
    const { empirical_probs: _, ...rest } = md();
    assertError(await create({ metadata: rest }), "parameter_invalid", "body.metadata.empirical_probs");
    assertError(await create({ metadata: { ...md(), empirical_probs: { a: [0.5, 0.5], b: [1, 1, 1] } } }), "parameter_invalid", "body.metadata.empirical_probs.b");
  });

  test("Create Model body.config: object, optional (training configuration)", async () => {
    assertEnvelope(await create({ metadata: md(), config: QUICK }), 201, "model");
    assertError(await create({ metadata: md(), config: 5 }), "parameter_invalid", "body.config");
    assertError(await create({ metadata: md(), config: { ...QUICK, unknown_knob: 1 } }), "parameter_invalid", "body.config.unknown_knob");
  });

  test("Create Model body.config.model_size: small, medium, large; also S, M, L; default medium", async () => {
    for (const [given, want] of [["small", "small"], ["S", "small"], ["M", "medium"], ["medium", "medium"], ["L", "large"], ["large", "large"]]) {
      const m = assertEnvelope(await create({ metadata: md(), config: { ...QUICK, model_size: given } }), 201, "model");
      assert.equal(m.config.model_size, want, given);
      await call(c.url, `/v1/models/${m.id}`, { key: c.keys.test, method: "DELETE" });
    }
    assertError(await create({ metadata: md(), config: { model_size: "XL" } }), "parameter_invalid", "body.config.model_size");
  });

  test("Create Model body.config.embedding_dim: integer, default 64", async () => {
    const m = assertEnvelope(await create({ metadata: md(), config: { ...QUICK, embedding_dim: 16 } }), 201, "model");
    assert.equal(m.config.embedding_dim, 16);
    assertError(await create({ metadata: md(), config: { embedding_dim: 1.5 } }), "parameter_invalid", "body.config.embedding_dim");
  });

  test("Create Model body.config.batch_size: integer, default 256, must be greater than 0", async () => {
    const m = assertEnvelope(await create({ metadata: md(), config: { ...QUICK, batch_size: 32 } }), 201, "model");
    assert.equal(m.config.batch_size, 32);
    assertError(await create({ metadata: md(), config: { batch_size: 0 } }), "parameter_invalid", "body.config.batch_size");
    assertError(await create({ metadata: md(), config: { batch_size: -1 } }), "parameter_invalid", "body.config.batch_size");
  });

  test("Create Model body.config.learning_rate: float, default 0.001", async () => {
    const m = assertEnvelope(await create({ metadata: md(), config: { ...QUICK, learning_rate: 0.01 } }), 201, "model");
    assert.equal(m.config.learning_rate, 0.01);
    assertError(await create({ metadata: md(), config: { learning_rate: "fast" } }), "parameter_invalid", "body.config.learning_rate");
  });

  test("Create Model body.config.max_epochs: integer, default 100", async () => {
    const m = assertEnvelope(await create({ metadata: md(), config: { ...QUICK, max_epochs: 2 } }), 201, "model");
    assert.equal(m.config.max_epochs, 2);
    assertError(await create({ metadata: md(), config: { max_epochs: 2.5 } }), "parameter_invalid", "body.config.max_epochs");
  });

  test("Create Model body.config.max_training_time: float seconds, default 14400", async () => {
    const m = assertEnvelope(await create({ metadata: md(), config: { ...QUICK, max_training_time: 30.5 } }), 201, "model");
    assert.equal(m.config.max_training_time, 30.5);
    assertError(await create({ metadata: md(), config: { max_training_time: 0 } }), "parameter_invalid", "body.config.max_training_time");
  });

  test("Create Model body.config.early_stop_patience: integer epochs without improvement, default 4", async () => {
    const m = assertEnvelope(await create({ metadata: md(), config: { ...QUICK, early_stop_patience: 2 } }), 201, "model");
    assert.equal(m.config.early_stop_patience, 2);
    assertError(await create({ metadata: md(), config: { early_stop_patience: -1 } }), "parameter_invalid", "body.config.early_stop_patience");
  });

  test("Create Model body.config.privacy_enabled: boolean, default false", async () => {
    const m = assertEnvelope(await create({ metadata: md(), config: { ...QUICK, privacy_enabled: true } }), 201, "model");
    assert.equal(m.config.privacy_enabled, true);
    assertError(await create({ metadata: md(), config: { privacy_enabled: "yes" } }), "parameter_invalid", "body.config.privacy_enabled");
  });

  test("Create Model body.config.privacy_noise: float Gaussian standard deviation, default 0.1", async () => {
    const m = assertEnvelope(await create({ metadata: md(), config: { ...QUICK, privacy_enabled: true, privacy_noise: 0.5 } }), 201, "model");
    assert.equal(m.config.privacy_noise, 0.5);
    assertError(await create({ metadata: md(), config: { privacy_noise: -0.5 } }), "parameter_invalid", "body.config.privacy_noise");
  });

  test("Create Model errors: parameter_invalid 400, api_key_missing 401, api_key_invalid 401, quota_exceeded 402, rate_limit_exceeded 429", async () => {
    assertError(await create({}), "parameter_invalid", "body.metadata");
    assertError(await call(c.url, "/v1/models", { body: { metadata: md() } }), "api_key_missing", undefined);
    assertError(await call(c.url, "/v1/models", { key: `svc_test_${"x".repeat(32)}`, body: { metadata: md() } }), "api_key_invalid", undefined);
    const spent = await c.newKey("create-spent", "test");
    const { monthOf } = await import("../../src/usage/quota");
    await c.store.chargeUsage({ org: "create-spent", env: "test", month: monthOf(c.clock.now()), rows: 100_000, quota: 100_000, model_id: "-", request_id: "-", at_ms: c.clock.now() });
    assertError(await call(c.url, "/v1/models", { key: spent, body: { metadata: md() } }), "quota_exceeded", undefined);
    const slow = await c.newKey("create-slow", "test", 1);
    await call(c.url, "/v1/models", { key: slow });
    assertError(await call(c.url, "/v1/models", { key: slow, body: { metadata: md() } }), "rate_limit_exceeded", undefined);
  });
});

describe("Get Model", () => {
  test("Get Model path model_id: string, the model identifier", async () => {
    const r = await call(c.url, `/v1/models/${ready.id}`, { key: c.keys.test });
    assert.equal(assertEnvelope(r, 200, "model").id, ready.id);
  });

  test("Get Model: 200 OK, envelope model, data with current status, current_epoch, train_loss, val_loss and updated_at", async () => {
    const m = await createModel(c);
    await c.engine.stop(m.id);
    await c.store.updateModel(m.id, { current_epoch: 7, train_loss: 0.25, val_loss: 0.5 });
    const got = assertEnvelope(await call(c.url, `/v1/models/${m.id}`, { key: c.keys.test }), 200, "model");
    assert.equal(got.status, "training");
    assert.equal(got.current_epoch, 7);
    assert.equal(got.train_loss, 0.25);
    assert.equal(got.val_loss, 0.5);
    assert.ok(Date.parse(got.updated_at) >= Date.parse(m.updated_at));
  });

  test("Get Model errors: model_not_found 404 when the model does not exist or belongs to another organization", async () => {
    assertError(await call(c.url, `/v1/models/${newModelId()}`, { key: c.keys.test }), "model_not_found", undefined);
    assertError(await call(c.url, `/v1/models/${ready.id}`, { key: c.keys.other }), "model_not_found", undefined);
  });
});

describe("List Models", () => {
  let key: string;
  let ids: string[]; // newest first
  after(() => {
    c.engine.skipTraining = false;
  });
  before(async () => {
    c.engine.skipTraining = true; // only the listing matters here
    key = await c.newKey("lister", "test");
    ids = [];
    for (let i = 0; i < 25; i++) {
      const m = assertEnvelope(await call(c.url, "/v1/models", { key, body: { metadata: tinyMetadata(), config: QUICK } }), 201, "model");
      await c.engine.stop(m.id);
      ids.unshift(m.id);
    }
  });

  test("List Models query limit: integer, default 20, 1 to 100", async () => {
    assert.equal((await call(c.url, "/v1/models", { key })).json.data.length, 20);
    assert.equal((await call(c.url, "/v1/models?limit=1", { key })).json.data.length, 1);
    assert.equal((await call(c.url, "/v1/models?limit=100", { key })).json.data.length, 25);
    assertError(await call(c.url, "/v1/models?limit=0", { key }), "parameter_invalid", "query.limit");
    assertError(await call(c.url, "/v1/models?limit=101", { key }), "parameter_invalid", "query.limit");
  });

  test("List Models query starting_after: string cursor, default none; the page starts after that model id", async () => {
    const first = await call(c.url, "/v1/models?limit=10", { key });
    assert.deepEqual(first.json.data.map((m: Model) => m.id), ids.slice(0, 10));
    const next = await call(c.url, `/v1/models?limit=10&starting_after=${ids[9]}`, { key });
    assert.deepEqual(next.json.data.map((m: Model) => m.id), ids.slice(10, 20));
  });

  test("List Models: 200 OK, envelope list, data an array of Models, metadata.has_more indicates a further page", async () => {
    const p1 = await call(c.url, "/v1/models?limit=20", { key });
    assertEnvelope(p1, 200, "list");
    assert.equal(p1.json.metadata.has_more, true);
    const p2 = await call(c.url, `/v1/models?limit=20&starting_after=${ids[19]}`, { key });
    assert.equal(p2.json.data.length, 5);
    assert.equal(p2.json.metadata.has_more, false);
    const exact = await call(c.url, `/v1/models?limit=5&starting_after=${ids[19]}`, { key });
    assert.equal(exact.json.metadata.has_more, false, "a page ending exactly at the last model has no more");
  });

  test("List Models: ordered by creation time, newest first; the next page via the last item's id", async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const r = await call(c.url, `/v1/models?limit=7${cursor ? `&starting_after=${cursor}` : ""}`, { key });
      seen.push(...r.json.data.map((m: Model) => m.id));
      const times = r.json.data.map((m: Model) => Date.parse(m.created_at));
      for (let i = 1; i < times.length; i++) assert.ok(times[i - 1] >= times[i]);
      if (!r.json.metadata.has_more) break;
      cursor = r.json.data.at(-1).id;
    }
    assert.deepEqual(seen, ids);
  });

  test("List Models: only models of the caller's organization are listed", async () => {
    const other = await call(c.url, "/v1/models?limit=100", { key: c.keys.other });
    assert.equal(other.json.data.some((m: Model) => ids.includes(m.id)), false);
    const acme = await call(c.url, "/v1/models?limit=100", { key: c.keys.test });
    assert.equal(acme.json.data.some((m: Model) => ids.includes(m.id)), false);
  });

  test("List Models: paging is stable under concurrent creates and deletes", async () => {
    const org = "pager";
    const k = await c.newKey(org, "test");
    const made: string[] = [];
    for (let i = 0; i < 12; i++) {
      const m = assertEnvelope(await call(c.url, "/v1/models", { key: k, body: { metadata: tinyMetadata(), config: QUICK } }), 201, "model");
      await c.engine.stop(m.id);
      made.unshift(m.id);
    }
    const p1 = await call(c.url, "/v1/models?limit=4", { key: k });
    assert.deepEqual(p1.json.data.map((m: Model) => m.id), made.slice(0, 4));
    // Meanwhile: new models are created and the cursor model itself is deleted.
    const creates = Array.from({ length: 3 }, () => call(c.url, "/v1/models", { key: k, body: { metadata: tinyMetadata(), config: QUICK } }));
    const del = call(c.url, `/v1/models/${made[3]}`, { key: k, method: "DELETE" });
    const done = await Promise.all([...creates, del]);
    assert.equal(done[3].status, 204);
    for (const r of done.slice(0, 3)) await c.engine.stop(r.json.data.id);
    const p2 = await call(c.url, `/v1/models?limit=4&starting_after=${made[3]}`, { key: k });
    assert.equal(p2.status, 200, p2.text);
    assert.deepEqual(p2.json.data.map((m: Model) => m.id), made.slice(4, 8), "no model skipped or repeated");
    const p3 = await call(c.url, `/v1/models?limit=4&starting_after=${made[7]}`, { key: k });
    assert.deepEqual(p3.json.data.map((m: Model) => m.id), made.slice(8, 12));
    assert.equal(p3.json.metadata.has_more, false);
  });
});

describe("Generate Synthetic Data", () => {
  const gen = (id: string, body: unknown, key = c.keys.test) => post(`/v1/models/${id}/generate`, body, key);

  test("Generate path model_id: string; the model must be in training or ready status", async () => {
    assertEnvelope(await gen(ready.id, { embedding: { num_rows: 2 } }), 200, "generation");
    const m = await createModel(c);
    await c.engine.stop(m.id);
    await c.store.updateModel(m.id, { status: "building" });
    assertError(await gen(m.id, { embedding: { num_rows: 2 } }), "model_not_ready", undefined);
  });

  test("Generate body.embedding: array or object, required, produced by the SDK", async () => {
    const obj = assertEnvelope(await gen(ready.id, { embedding: { num_rows: 4, seed: 3 } }), 200, "generation");
    assert.equal(obj.num_rows, 4);
    const dim = ready.config.embedding_dim;
    const arr = assertEnvelope(await gen(ready.id, { embedding: [new Array(dim).fill(0), new Array(dim).fill(0.5)] }), 200, "generation");
    assert.equal(arr.num_rows, 2);
    assertError(await gen(ready.id, {}), "parameter_invalid", "body.embedding");
    assertError(await gen(ready.id, { embedding: "seed data" }), "parameter_invalid", "body.embedding");
  });

  test("Generate body.embedding.calibrate (extension, docs/api.md): num_rows rows raked to the model's marginals, reproducible by seed", async () => {
    const body = { embedding: { num_rows: 300, seed: 4, calibrate: true } };
    const a = assertEnvelope(await gen(ready.id, body), 200, "generation");
    assert.equal(a.num_rows, 300);
    const K: Record<string, number> = { a: 2, b: 3 };
    for (const f of a.features) {
      assert.equal(a.columns[f].length, 300);
      for (const code of a.columns[f]) assert.ok(Number.isInteger(code) && code >= 0 && code < K[f]);
    }
    assert.deepEqual(assertEnvelope(await gen(ready.id, body), 200, "generation").columns, a.columns, "same seed, same rows");
    const plain = assertEnvelope(await gen(ready.id, { embedding: { num_rows: 300, seed: 4, calibrate: false } }), 200, "generation");
    const omitted = assertEnvelope(await gen(ready.id, { embedding: { num_rows: 300, seed: 4 } }), 200, "generation");
    assert.deepEqual(plain.columns, omitted.columns, "false is the default: the plain draw");
    assert.notDeepEqual(a.columns, plain.columns);
    assertError(await gen(ready.id, { embedding: { num_rows: 3, calibrate: "yes" } }), "parameter_invalid", "body.embedding.calibrate");
  });

  test("Generate body.temperature: float, optional, default 1.0", async () => {
    const a = await gen(ready.id, { embedding: { num_rows: 50, seed: 9 } });
    const b = await gen(ready.id, { embedding: { num_rows: 50, seed: 9 }, temperature: 1.0 });
    assert.deepEqual(b.json.data.columns, a.json.data.columns, "omitted temperature behaves as 1.0");
    assertEnvelope(await gen(ready.id, { embedding: { num_rows: 5 }, temperature: 0.5 }), 200, "generation");
    assertError(await gen(ready.id, { embedding: { num_rows: 5 }, temperature: "hot" }), "parameter_invalid", "body.temperature");
  });

  test("Generate body.top_p: float 0 to 1, optional, default null", async () => {
    const a = await gen(ready.id, { embedding: { num_rows: 50, seed: 9 } });
    const b = await gen(ready.id, { embedding: { num_rows: 50, seed: 9 }, top_p: null });
    assert.deepEqual(b.json.data.columns, a.json.data.columns, "omitted top_p behaves as null");
    assertEnvelope(await gen(ready.id, { embedding: { num_rows: 5 }, top_p: 0.9 }), 200, "generation");
    assertError(await gen(ready.id, { embedding: { num_rows: 5 }, top_p: 1.5 }), "parameter_invalid", "body.top_p");
  });

  test("Generate: 200 OK, envelope generation, data {model_id, num_rows, features, columns} (decision where the contract is silent)", async () => {
    const d = assertEnvelope(await gen(ready.id, { embedding: { num_rows: 6, seed: 1 } }), 200, "generation");
    assert.deepEqual(Object.keys(d).sort(), ["columns", "features", "model_id", "num_rows"]);
    assert.equal(d.model_id, ready.id);
    assert.deepEqual(d.features, ["a", "b"]);
    const K: Record<string, number> = { a: 2, b: 3 };
    for (const f of d.features) {
      assert.equal(d.columns[f].length, 6);
      for (const code of d.columns[f]) assert.ok(Number.isInteger(code) && code >= 0 && code < K[f]);
    }
  });

  test("Generate errors: model_not_found 404, model_not_ready 400, parameter_invalid 400, quota_exceeded 402, training_service_unavailable 503", async () => {
    assertError(await gen(newModelId(), { embedding: { num_rows: 1 } }), "model_not_found", undefined);
    const m = await createModel(c);
    await c.engine.stop(m.id);
    await c.store.updateModel(m.id, { status: "created" });
    assertError(await gen(m.id, { embedding: { num_rows: 1 } }), "model_not_ready", undefined);
    assertError(await gen(ready.id, { embedding: { num_rows: 0 } }), "parameter_invalid", "body.embedding.num_rows");
    const live = await readyModel(c, c.keys.live);
    const { monthOf } = await import("../../src/usage/quota");
    await c.store.chargeUsage({ org: "acme", env: "live", month: monthOf(c.clock.now()), rows: 100_000, quota: 100_000, model_id: "-", request_id: "-", at_ms: c.clock.now() });
    assertError(await gen(live.id, { embedding: { num_rows: 1 } }, c.keys.live), "quota_exceeded", undefined);
    const { EngineUnavailableError } = await import("../../src/engine/engine");
    c.engine.fail.generate = new EngineUnavailableError("queue full", 3);
    const r = await gen(ready.id, { embedding: { num_rows: 1 } });
    assertError(r, "training_service_unavailable", undefined);
    assert.equal(r.headers.get("retry-after"), "3");
  });
});

describe("Delete Model", () => {
  test("Delete Model path model_id: string; 204 No Content with an empty body", async () => {
    const m = await createModel(c);
    const r = await call(c.url, `/v1/models/${m.id}`, { key: c.keys.test, method: "DELETE" });
    assert.equal(r.status, 204);
    assert.equal(r.text, "");
    assert.equal(r.headers.get("content-length"), null, "no Content-Length on 204 (RFC 9110 §8.6)");
  });

  test("Delete Model: training stopped, weights freed, checkpoints and metadata removed; later lookups 404", async () => {
    const m = await readyModel(c);
    assert.notEqual((await c.store.getMetadata(m.id)), undefined);
    const r = await call(c.url, `/v1/models/${m.id}`, { key: c.keys.test, method: "DELETE" });
    assert.equal(r.status, 204);
    assert.equal((await c.store.getModel(m.id)), undefined);
    assert.equal((await c.store.getMetadata(m.id)), undefined);
    assert.equal((await c.store.getCheckpoint(m.id)), undefined);
    assertError(await call(c.url, `/v1/models/${m.id}`, { key: c.keys.test }), "model_not_found", undefined);
    assertError(await call(c.url, `/v1/models/${m.id}/metadata`, { key: c.keys.test }), "model_not_found", undefined);
    assertError(await post(`/v1/models/${m.id}/generate`, { embedding: { num_rows: 1 } }), "model_not_found", undefined);
    const list = await call(c.url, "/v1/models?limit=100", { key: c.keys.test });
    assert.equal(list.json.data.some((x: Model) => x.id === m.id), false);
  });

  test("Delete Model errors: model_not_found 404 when the model does not exist or belongs to another organization", async () => {
    assertError(await call(c.url, `/v1/models/${newModelId()}`, { key: c.keys.test, method: "DELETE" }), "model_not_found", undefined);
    assertError(await call(c.url, `/v1/models/${ready.id}`, { key: c.keys.other, method: "DELETE" }), "model_not_found", undefined);
    assert.equal((await call(c.url, `/v1/models/${ready.id}`, { key: c.keys.test })).status, 200);
  });
});

describe("Versioning", () => {
  test("Versioning: the version is the path prefix /v1; other prefixes are no endpoint", async () => {
    assert.equal((await call(c.url, "/v1/models", { key: c.keys.test })).status, 200);
    for (const path of ["/v2/models", "/models", "/v1.1/models"]) {
      assertError(await call(c.url, path, { key: c.keys.test }), "route_not_found", undefined);
    }
  });
});
