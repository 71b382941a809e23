/**
 * The endpoints' success shapes and headers (contract: "Endpoints", "Response envelope"), scoping
 * by org and environment (Authentication rule 5) and List paging.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { newModelId, type ModelRecord } from "../src/store";
import { CONFIG_DEFAULTS } from "../src/contract";
import { assertError, call, REQUEST_ID, startHarness, validCreateBody, type Harness } from "./server-helpers";

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;
const MODEL_KEYS = ["config", "created_at", "current_epoch", "error", "id", "status", "train_loss", "updated_at", "val_loss"];

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h.stop();
});

function assertEnvelope(r: { status: number; headers: Headers; json: any }, status: number, object: string): void {
  assert.equal(r.status, status, JSON.stringify(r.json));
  assert.match(r.headers.get("x-request-id") ?? "", REQUEST_ID);
  assert.match(r.headers.get("content-type") ?? "", /^application\/json/);
  assert.equal(r.json.object, object);
  assert.match(r.json.metadata.timestamp, ISO);
}

async function createModel(key = h.keys.test, body: unknown = validCreateBody()): Promise<any> {
  const r = await call(h.url, "/v1/models", { key, body });
  assertEnvelope(r, 201, "model");
  return r.json.data;
}

describe("Create Model", () => {
  test("answers 201 with a model in training, epoch 0, null losses and error, defaults filled", async () => {
    const r = await call(h.url, "/v1/models", { key: h.keys.test, body: validCreateBody() });
    assertEnvelope(r, 201, "model");
    const m = r.json.data;
    assert.deepEqual(Object.keys(m).sort(), MODEL_KEYS, "exactly the contract's fields, no org/env");
    assert.match(m.id, /^mdl_[0-9a-f]{12}$/);
    assert.equal(m.status, "training");
    assert.equal(m.current_epoch, 0);
    assert.equal(m.train_loss, null);
    assert.equal(m.val_loss, null);
    assert.equal(m.error, null);
    assert.match(m.created_at, ISO);
    assert.equal(m.updated_at, m.created_at);
    assert.deepEqual(m.config, { ...CONFIG_DEFAULTS, device: "cpu" });
    assert.deepEqual(h.engine.calls.at(-1), { op: "train", id: m.id });
  });

  test("normalises model_size aliases and keeps given config values", async () => {
    const body = { ...validCreateBody(), config: { model_size: "L", batch_size: 64, privacy_enabled: true, device: "auto" } };
    const m = await createModel(h.keys.test, body);
    assert.equal(m.config.model_size, "large");
    assert.equal(m.config.batch_size, 64);
    assert.equal(m.config.privacy_enabled, true);
    assert.equal(m.config.privacy_noise, CONFIG_DEFAULTS.privacy_noise);
    assert.equal(m.config.device, "cpu", "device is the engine's actual device");
  });

  test("config.device: auto (the default) and gpu report the engine's GPU by name, cpu stays on the CPU; gpu without one is a 400 naming the field", async () => {
    const refused = await call(h.url, "/v1/models", { key: h.keys.test, body: { ...validCreateBody(), config: { device: "gpu" } } });
    assert.equal(refused.status, 400);
    assert.equal(refused.json.error.code, "parameter_invalid");
    assert.equal(refused.json.error.param, "body.config.device");
    assert.match(refused.json.error.message, /no usable GPU/);
    const engine = h.engine;
    engine.gpu = "NVIDIA H200";
    try {
      for (const [device, want] of [[undefined, "NVIDIA H200"], ["auto", "NVIDIA H200"], ["gpu", "NVIDIA H200"], ["cpu", "cpu"]] as const) {
        const m = await createModel(h.keys.test, { ...validCreateBody(), config: device === undefined ? {} : { device } });
        assert.equal(m.config.device, want, `device ${device}`);
      }
    } finally {
      engine.gpu = undefined;
    }
  });

  test("accepts feature names that are not identifiers", async () => {
    const body = {
      metadata: { features: ["age group", "x-y"], cardinalities: { "age group": 1, "x-y": 2 }, empirical_probs: { "age group": [1], "x-y": [0.5, 0.5] } },
    };
    await createModel(h.keys.test, body);
  });
});

describe("Get Model", () => {
  test("answers 200 with the model's current state", async () => {
    const m = await createModel();
    await h.store.updateModel(m.id, { current_epoch: 3, train_loss: 0.5, val_loss: 0.6 });
    const r = await call(h.url, `/v1/models/${m.id}`, { key: h.keys.test });
    assertEnvelope(r, 200, "model");
    assert.deepEqual(Object.keys(r.json.data).sort(), MODEL_KEYS);
    assert.equal(r.json.data.id, m.id);
    assert.equal(r.json.data.current_epoch, 3);
    assert.equal(r.json.data.train_loss, 0.5);
    assert.equal(r.json.data.val_loss, 0.6);
  });

  test("another org's, the other environment's, a missing and a malformed model are all model_not_found", async () => {
    const m = await createModel(h.keys.test);
    for (const [key, id] of [
      [h.keys.other, m.id],
      [h.keys.live, m.id],
      [h.keys.test, newModelId()],
      [h.keys.test, "mdl_XYZ"],
      [h.keys.test, "mdl_ABCDEF012345"],
      [h.keys.test, `${m.id}0`],
      [h.keys.test, "abc"],
    ]) {
      for (const path of [`/v1/models/${id}`, `/v1/models/${id}/metadata`]) {
        assertError(await call(h.url, path, { key }), "model_not_found", undefined);
      }
      assertError(await call(h.url, `/v1/models/${id}`, { key, method: "DELETE" }), "model_not_found", undefined);
      assertError(
        await call(h.url, `/v1/models/${id}/generate`, { key, body: { embedding: { num_rows: 1 } } }),
        "model_not_found",
        undefined,
      );
    }
    const still = await call(h.url, `/v1/models/${m.id}`, { key: h.keys.test });
    assert.equal(still.status, 200, "failed cross-scope deletes leave the model alone");
  });
});

describe("Get Model Metadata", () => {
  test("answers 200 with the metadata sent at creation", async () => {
    const body = validCreateBody();
    const m = await createModel(h.keys.test, body);
    const r = await call(h.url, `/v1/models/${m.id}/metadata`, { key: h.keys.test });
    assertEnvelope(r, 200, "model_metadata");
    assert.deepEqual(r.json.data, body.metadata);
  });
});

describe("Generate", () => {
  test("answers 200 with the engine's generation for {num_rows, seed}", async () => {
    const m = await createModel();
    const req = { embedding: { num_rows: 4, seed: 7 }, temperature: 0.5, top_p: 0.9 };
    const r = await call(h.url, `/v1/models/${m.id}/generate`, { key: h.keys.test, body: req });
    assertEnvelope(r, 200, "generation");
    assert.deepEqual(r.json.data, { model_id: m.id, num_rows: 4, features: ["a", "b"], columns: { a: [1, 1, 1, 1], b: [0, 0, 0, 0] } });
    assert.deepEqual(h.engine.calls.at(-1), { op: "generate", id: m.id, req });
  });

  test("accepts latent vectors of the model's embedding_dim, in training and in ready", async () => {
    const m = await createModel(h.keys.test, { ...validCreateBody(), config: { embedding_dim: 3 } });
    const embedding = [[0, 1, 2], [0.5, -1, 3]];
    const r1 = await call(h.url, `/v1/models/${m.id}/generate`, { key: h.keys.test, body: { embedding } });
    assertEnvelope(r1, 200, "generation");
    assert.equal(r1.json.data.num_rows, 2);
    await h.store.updateModel(m.id, { status: "ready" });
    const r2 = await call(h.url, `/v1/models/${m.id}/generate`, { key: h.keys.test, body: { embedding, top_p: null } });
    assertEnvelope(r2, 200, "generation");
  });
});

describe("Delete Model", () => {
  test("stops the model, answers 204 with an empty body; later lookups are model_not_found", async () => {
    const m = await createModel();
    const r = await call(h.url, `/v1/models/${m.id}`, { key: h.keys.test, method: "DELETE" });
    assert.equal(r.status, 204);
    assert.equal(r.text, "");
    assert.match(r.headers.get("x-request-id") ?? "", REQUEST_ID);
    assert.deepEqual(h.engine.calls.at(-1), { op: "stop", id: m.id });
    assert.equal((await h.store.getModel(m.id)), undefined);
    assert.equal((await h.store.getMetadata(m.id)), undefined);
    assertError(await call(h.url, `/v1/models/${m.id}`, { key: h.keys.test }), "model_not_found", undefined);
    assertError(await call(h.url, `/v1/models/${m.id}`, { key: h.keys.test, method: "DELETE" }), "model_not_found", undefined);
  });
});

describe("List Models", () => {
  const org = "lister";
  let key: string;
  let ids: string[]; // newest first

  before(async () => {
    key = await h.store.createKey(org, "test");
    const made: ModelRecord[] = [];
    for (let i = 0; i < 5; i++) {
      const t = new Date(Date.UTC(2024, 0, 1, 0, 0, i)).toISOString();
      const rec: ModelRecord = {
        id: newModelId(), org, env: "test", status: "ready", config: { ...CONFIG_DEFAULTS, device: "cpu" },
        current_epoch: 10, train_loss: 0.1, val_loss: 0.2, created_at: t, updated_at: t, error: null,
      };
      await h.store.createModel(rec, validCreateBody().metadata);
      made.push(rec);
    }
    await h.store.createModel({ ...made[0], id: newModelId(), env: "live" }, validCreateBody().metadata);
    ids = made.map((m) => m.id).reverse();
  });

  test("lists the caller's models newest first, default limit, has_more false on the last page", async () => {
    const r = await call(h.url, "/v1/models", { key });
    assertEnvelope(r, 200, "list");
    assert.deepEqual(r.json.data.map((m: any) => m.id), ids);
    assert.equal(r.json.metadata.has_more, false);
    for (const m of r.json.data) assert.deepEqual(Object.keys(m).sort(), MODEL_KEYS);
  });

  test("pages with limit and starting_after, has_more true while more remain", async () => {
    const p1 = await call(h.url, "/v1/models?limit=2", { key });
    assert.deepEqual(p1.json.data.map((m: any) => m.id), ids.slice(0, 2));
    assert.equal(p1.json.metadata.has_more, true);
    const p2 = await call(h.url, `/v1/models?limit=2&starting_after=${ids[1]}`, { key });
    assert.deepEqual(p2.json.data.map((m: any) => m.id), ids.slice(2, 4));
    assert.equal(p2.json.metadata.has_more, true);
    const p3 = await call(h.url, `/v1/models?starting_after=${ids[3]}&limit=2`, { key });
    assert.deepEqual(p3.json.data.map((m: any) => m.id), ids.slice(4));
    assert.equal(p3.json.metadata.has_more, false);
  });

  test("limit accepts 1 and 100", async () => {
    const one = await call(h.url, "/v1/models?limit=1", { key });
    assert.equal(one.json.data.length, 1);
    const hundred = await call(h.url, "/v1/models?limit=100", { key });
    assert.equal(hundred.json.data.length, 5);
  });

  test("starting_after naming no model of the caller is parameter_invalid on query.starting_after", async () => {
    const foreign = await createModel(h.keys.other);
    for (const cursor of [newModelId(), foreign.id, "garbage", ""]) {
      const r = await call(h.url, `/v1/models?starting_after=${encodeURIComponent(cursor)}`, { key });
      assertError(r, "parameter_invalid", "query.starting_after");
    }
  });

  test("each environment lists only its own models", async () => {
    const live = await h.store.createKey(org, "live");
    const r = await call(h.url, "/v1/models", { key: live });
    assert.equal(r.json.data.length, 1);
    assert.equal(ids.includes(r.json.data[0].id), false);
  });
});

describe("Error docs page", () => {
  test("doc_url resolves: GET /docs/errors lists every code as an anchor", async () => {
    const err = await call(h.url, "/v1/models", { key: "svc_test_nope" });
    assert.equal(err.json.error.doc_url, `${h.url}/docs/errors#api_key_invalid`);
    const r = await call(h.url, "/docs/errors");
    assert.equal(r.status, 200);
    assert.match(r.headers.get("content-type") ?? "", /^text\/html/);
    assert.match(r.text, /id="api_key_invalid"/);
    assert.match(r.text, /id="method_not_allowed"/);
  });
});
