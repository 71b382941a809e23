/**
 * Contract: "States and transitions" — one test per row of the transition table, plus the rule
 * under it (generation only in training or ready; model_not_ready otherwise).
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { assertEnvelope, assertError, call, createModel, readyModel, startContract, waitTrained, type Contract } from "./harness";

let c: Contract;
before(async () => {
  c = await startContract();
});
after(async () => {
  await c.stop();
});

test("States: (none) --POST /v1/models, valid request--> training; status training, current_epoch 0, train_loss null, val_loss null, error null", async () => {
  const m = await createModel(c);
  assert.equal(m.status, "training");
  assert.equal(m.current_epoch, 0);
  assert.equal(m.train_loss, null);
  assert.equal(m.val_loss, null);
  assert.equal(m.error, null);
});

test("States: training --training completes--> ready; the model can generate", async () => {
  const m = await createModel(c);
  const done = await waitTrained(c, m.id);
  assert.equal(done.status, "ready");
  assert.equal(done.error, null);
  assert.ok(done.current_epoch >= 1);
  const g = await call(c.url, `/v1/models/${m.id}/generate`, { key: c.keys.test, body: { embedding: { num_rows: 10, seed: 1 } } });
  const data = assertEnvelope(g, 200, "generation");
  assert.equal(data.num_rows, 10);
});

test("States: training --training fails--> failed; the error field holds the reason", async () => {
  const m = await createModel(c);
  // A failure on the server is recorded by the engine as one store write; the API must show it.
  await c.engine.stop(m.id);
  await c.store.updateModel(m.id, { status: "failed", error: { code: "training_failed", message: "non-finite loss at epoch 1" } });
  const r = await call(c.url, `/v1/models/${m.id}`, { key: c.keys.test });
  const got = assertEnvelope(r, 200, "model");
  assert.equal(got.status, "failed");
  assert.equal(got.error.code, "training_failed");
  assert.equal(got.error.message, "non-finite loss at epoch 1");
});

test("States: any --DELETE /v1/models/{model_id}, model in the caller's organization--> removed; later lookups give model_not_found", async () => {
  const training = await createModel(c);
  const ready = await readyModel(c);
  for (const m of [training, ready]) {
    const d = await call(c.url, `/v1/models/${m.id}`, { key: c.keys.test, method: "DELETE" });
    assert.equal(d.status, 204);
    assertError(await call(c.url, `/v1/models/${m.id}`, { key: c.keys.test }), "model_not_found", undefined);
    assert.equal((await c.store.getModel(m.id)), undefined, "server resources freed");
  }
});

test("States: generation is permitted in training and ready", async () => {
  const m = await createModel(c, c.keys.test, { model_size: "small", max_epochs: 1000, embedding_dim: 8, batch_size: 64 });
  // Wait for the first checkpointed epoch: the latest weights exist from then on.
  for (let i = 0; i < 600; i++) {
    const r = await call(c.url, `/v1/models/${m.id}`, { key: c.keys.test });
    if (r.json.data.current_epoch >= 1) break;
    await new Promise((res) => setTimeout(res, 50));
  }
  const inTraining = await call(c.url, `/v1/models/${m.id}/generate`, { key: c.keys.test, body: { embedding: { num_rows: 5 } } });
  assertEnvelope(inTraining, 200, "generation");
  assert.equal((await call(c.url, `/v1/models/${m.id}`, { key: c.keys.test })).json.data.status, "training");
  await call(c.url, `/v1/models/${m.id}`, { key: c.keys.test, method: "DELETE" });
  const ready = await readyModel(c);
  assertEnvelope(await call(c.url, `/v1/models/${ready.id}/generate`, { key: c.keys.test, body: { embedding: { num_rows: 5 } } }), 200, "generation");
});

for (const state of ["created", "building", "failed"] as const) {
  test(`States: generation in ${state} yields model_not_ready naming the id and the state`, async () => {
    const m = await createModel(c);
    await c.engine.stop(m.id);
    await c.store.updateModel(m.id, { status: state, error: state === "failed" ? { code: "training_failed", message: "x" } : null });
    const r = await call(c.url, `/v1/models/${m.id}/generate`, { key: c.keys.test, body: { embedding: { num_rows: 1 } } });
    assertError(r, "model_not_ready", undefined);
    assert.ok(r.json.error.message.includes(m.id), r.json.error.message);
    assert.ok(r.json.error.message.includes(state), r.json.error.message);
  });
}

test("Events: none; clients learn training progress by polling Get Model (epoch and losses advance)", async () => {
  const m = await createModel(c, c.keys.test, { model_size: "small", max_epochs: 3, early_stop_patience: 0, embedding_dim: 8, batch_size: 64 });
  const epochs: number[] = [];
  let last = m;
  for (let i = 0; i < 2400 && last.status === "training"; i++) {
    const r = await call(c.url, `/v1/models/${m.id}`, { key: c.keys.test });
    last = assertEnvelope(r, 200, "model");
    epochs.push(last.current_epoch);
    await new Promise((res) => setTimeout(res, 25));
  }
  assert.equal(last.status, "ready");
  assert.equal(last.current_epoch, 3);
  for (let i = 1; i < epochs.length; i++) assert.ok(epochs[i] >= epochs[i - 1], "current_epoch never goes back");
  assert.equal(typeof last.train_loss, "number");
  assert.equal(typeof last.val_loss, "number");
});
