/**
 * Contract: "Resources and their fields" — the Model table, the Model config table (as returned)
 * and the Response envelope table, one test per row.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  assertEnvelope,
  call,
  createModel,
  ISO_UTC,
  MODEL_FIELDS,
  readyModel,
  startContract,
  tinyMetadata,
  type Contract,
} from "./harness";
import type { Model } from "../../src/contract";

let c: Contract;
let fresh: Model; // as returned by Create Model with no config
let trained: Model; // trained to ready

before(async () => {
  c = await startContract();
  const r = await call(c.url, "/v1/models", { key: c.keys.test, body: { metadata: tinyMetadata() } });
  fresh = assertEnvelope(r, 201, "model");
  // A model with the default config would train for a long time: stop it, it is only looked at.
  const del = await call(c.url, `/v1/models/${fresh.id}`, { key: c.keys.test, method: "DELETE" });
  assert.equal(del.status, 204);
  trained = await readyModel(c);
});

after(async () => {
  await c.stop();
});

describe("Model", () => {
  test("Model: exactly the contract's fields", () => {
    assert.deepEqual(Object.keys(fresh).sort(), MODEL_FIELDS);
    assert.deepEqual(Object.keys(trained).sort(), MODEL_FIELDS);
  });

  test("Model.id: string, format mdl_<12 hex chars>", () => {
    assert.match(fresh.id, /^mdl_[0-9a-f]{12}$/);
    assert.match(trained.id, /^mdl_[0-9a-f]{12}$/);
    assert.notEqual(fresh.id, trained.id);
  });

  test("Model.status: one of created, building, training, ready, failed", () => {
    for (const m of [fresh, trained]) assert.ok(["created", "building", "training", "ready", "failed"].includes(m.status));
    assert.equal(fresh.status, "training");
    assert.equal(trained.status, "ready");
  });

  test("Model.config: object, the effective training configuration", () => {
    assert.equal(typeof fresh.config, "object");
    assert.equal(trained.config.model_size, "small");
    assert.equal(trained.config.max_epochs, 1);
  });

  test("Model.current_epoch: integer, 0 at creation", async () => {
    assert.equal(fresh.current_epoch, 0);
    assert.ok(Number.isInteger(trained.current_epoch) && trained.current_epoch >= 1);
  });

  test("Model.train_loss: float or null, null at creation", () => {
    assert.equal(fresh.train_loss, null);
    assert.equal(typeof trained.train_loss, "number");
    assert.ok(Number.isFinite(trained.train_loss));
  });

  test("Model.val_loss: float or null, null at creation", () => {
    assert.equal(fresh.val_loss, null);
    assert.equal(typeof trained.val_loss, "number");
    assert.ok(Number.isFinite(trained.val_loss));
  });

  test("Model.created_at: ISO 8601 UTC timestamp", () => {
    assert.match(fresh.created_at, ISO_UTC);
    assert.ok(Math.abs(Date.parse(fresh.created_at) - Date.now()) < 120_000);
  });

  test("Model.updated_at: ISO 8601 UTC timestamp", () => {
    assert.match(fresh.updated_at, ISO_UTC);
    assert.equal(fresh.updated_at, fresh.created_at);
    assert.match(trained.updated_at, ISO_UTC);
    assert.ok(Date.parse(trained.updated_at) > Date.parse(trained.created_at), "training moved updated_at");
  });

  test("Model.error: null when there is no failure; the reason when status is failed", async () => {
    assert.equal(fresh.error, null);
    assert.equal(trained.error, null);
    const m = await createModel(c);
    // How the engine records a failure: status failed and error {code, message} in one write.
    await c.engine.stop(m.id);
    await c.store.updateModel(m.id, { status: "failed", error: { code: "training_failed", message: "loss diverged" } });
    const r = await call(c.url, `/v1/models/${m.id}`, { key: c.keys.test });
    const got = assertEnvelope(r, 200, "model");
    assert.equal(got.status, "failed");
    assert.deepEqual(got.error, { code: "training_failed", message: "loss diverged" });
  });
});

describe("Model config (as returned)", () => {
  test("Model config.embedding_dim: integer, default 64", () => {
    assert.equal(fresh.config.embedding_dim, 64);
  });
  test("Model config.model_size: string, default medium", () => {
    assert.equal(fresh.config.model_size, "medium");
  });
  test("Model config.batch_size: integer, default 256", () => {
    assert.equal(fresh.config.batch_size, 256);
  });
  test("Model config.learning_rate: float, default 0.001", () => {
    assert.equal(fresh.config.learning_rate, 0.001);
  });
  test("Model config.max_epochs: integer, default 100", () => {
    assert.equal(fresh.config.max_epochs, 100);
  });
  test("Model config.max_training_time: float (seconds), default 14400", () => {
    assert.equal(fresh.config.max_training_time, 14400);
  });
  test("Model config.early_stop_patience: integer, default 4", () => {
    assert.equal(fresh.config.early_stop_patience, 4);
  });
  test("Model config.device: the compute-device name returned at creation", () => {
    assert.equal(typeof fresh.config.device, "string");
    assert.ok(fresh.config.device.length > 0);
    assert.equal(fresh.config.device, c.engine.device);
  });
  test("Model config: privacy_enabled and privacy_noise appear in the returned config (defaults false, 0.1)", () => {
    assert.equal(fresh.config.privacy_enabled, false);
    assert.equal(fresh.config.privacy_noise, 0.1);
  });
  test("Model config: integers are integers and floats are numbers", () => {
    for (const k of ["embedding_dim", "batch_size", "max_epochs", "early_stop_patience"] as const) {
      assert.ok(Number.isInteger(fresh.config[k]), k);
    }
    for (const k of ["learning_rate", "max_training_time"] as const) assert.equal(typeof fresh.config[k], "number", k);
  });
});

describe("Response envelope", () => {
  test("Response envelope.object: model for a single model, list for a list", async () => {
    const one = await call(c.url, `/v1/models/${trained.id}`, { key: c.keys.test });
    assert.equal(one.json.object, "model");
    const list = await call(c.url, "/v1/models", { key: c.keys.test });
    assert.equal(list.json.object, "list");
  });

  test("Response envelope.data: the resource, or the array of resources", async () => {
    const one = await call(c.url, `/v1/models/${trained.id}`, { key: c.keys.test });
    assert.equal(one.json.data.id, trained.id);
    const list = await call(c.url, "/v1/models", { key: c.keys.test });
    assert.ok(Array.isArray(list.json.data));
    assert.ok(list.json.data.some((m: Model) => m.id === trained.id));
  });

  test("Response envelope.metadata: always timestamp (ISO 8601 UTC); lists add has_more", async () => {
    const one = await call(c.url, `/v1/models/${trained.id}`, { key: c.keys.test });
    assert.deepEqual(Object.keys(one.json.metadata), ["timestamp"]);
    assert.match(one.json.metadata.timestamp, ISO_UTC);
    const list = await call(c.url, "/v1/models", { key: c.keys.test });
    assert.deepEqual(Object.keys(list.json.metadata).sort(), ["has_more", "timestamp"]);
    assert.equal(typeof list.json.metadata.has_more, "boolean");
    const gen = await call(c.url, `/v1/models/${trained.id}/generate`, { key: c.keys.test, body: { embedding: { num_rows: 3 } } });
    assert.deepEqual(Object.keys(gen.json).sort(), ["data", "metadata", "object"]);
    assert.match(gen.json.metadata.timestamp, ISO_UTC);
  });

  test("Response envelope: every successful response except 204 is {object, data, metadata}", async () => {
    const created = await call(c.url, "/v1/models", { key: c.keys.test, body: { metadata: tinyMetadata(), config: { max_epochs: 1, model_size: "S" } } });
    assert.deepEqual(Object.keys(created.json).sort(), ["data", "metadata", "object"]);
    const del = await call(c.url, `/v1/models/${created.json.data.id}`, { key: c.keys.test, method: "DELETE" });
    assert.equal(del.status, 204);
    assert.equal(del.text, "");
  });
});
