/**
 * The engine (src/engine): actors pinned to worker threads, training to `ready`/`failed` in the
 * store, resume after a restart, stop, generation while training, worker death.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { LmdbStore as Store, type ModelRecord, type Store as StoreApi } from "../src/store";
import type { Metadata, ModelConfig } from "../src/contract";
import { createEngine, EngineModelError, EngineUnavailableError, type PoolEngine } from "../src/engine";
import { ParamError as GenerateInputError } from "../src/contract/errors";
import { Trainer, type Checkpoint } from "../src/model";
import { addTrainingModel, fastConfig, TINY_META as META } from "./fixtures";

const config = (over: Partial<ModelConfig> = {}): ModelConfig => fastConfig(3, over);
const addModel = (store: Store, cfg: ModelConfig, meta: Metadata = META): Promise<string> => addTrainingModel(store, cfg, meta);

type LogLine = { msg: string; level: number; model_id?: string; epoch?: number; val_loss?: number };

interface Env {
  dir: string;
  store: Store;
  logs: LogLine[];
  start(workers?: number): Promise<PoolEngine>;
  done(): Promise<void>;
}

async function env(): Promise<Env> {
  const dir = mkdtempSync(join(tmpdir(), "synthd-engine-"));
  const store = new Store(dir);
  const logs: LogLine[] = [];
  const logger = pino({ level: "debug" }, { write: (s: string) => void logs.push(JSON.parse(s) as LogLine) });
  const engines: PoolEngine[] = [];
  return {
    dir,
    store,
    logs,
    async start(workers = 2) {
      const e = await createEngine({ store, dataDir: dir, workers, logger });
      engines.push(e);
      return e;
    },
    async done() {
      for (const e of engines) await e.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Polls until `pred` holds (fails after `ms`; a hang guard, not a timing assertion). */
async function until(pred: () => boolean | Promise<boolean>, what: string, ms = 45_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await pred())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Worker logs arrive by message, possibly after the store shows `ready`. */
const finished = (logs: LogLine[], id: string): boolean => logs.some((l) => l.msg === "training finished" && l.model_id === id);

const status = async (store: StoreApi, id: string): Promise<ModelRecord> => (await store.getModel(id)) as ModelRecord;

test("a model trains to ready, with its epoch, losses and checkpoint in the store", async () => {
  const e = await env();
  try {
    const engine = await e.start();
    assert.equal(engine.device, "cpu");
    const id = await addModel(e.store, config({ max_epochs: 4 }));
    await engine.train(id);
    await until(async () => (await status(e.store, id)).status !== "training", "ready");
    const rec = (await status(e.store, id));
    assert.equal(rec.status, "ready");
    assert.equal(rec.current_epoch, 4);
    await until(() => finished(e.logs, id), "the worker's last log lines");
    assert.equal(rec.error, null);
    assert.ok(Number.isFinite(rec.train_loss) && Number.isFinite(rec.val_loss));
    assert.equal((await e.store.getCheckpoint<Checkpoint>(id))?.epoch, 4);
    const epochs = e.logs.filter((l) => l.msg === "epoch" && l.model_id === id);
    assert.equal(epochs.length, 4);
    assert.ok((epochs[3].val_loss as number) < (epochs[0].val_loss as number), "val_loss falls");
  } finally {
    await e.done();
  }
});

test("generation: same seed gives the same codes (also after a restart), another seed other codes", async () => {
  const e = await env();
  try {
    const engine = await e.start();
    const id = await addModel(e.store, config({ max_epochs: 2 }));
    await engine.train(id);
    const during = await engine.generate(id, { embedding: { num_rows: 50, seed: 3 } }); // latest weights
    assert.equal(during.num_rows, 50);
    assert.deepEqual(during.features, ["a", "b", "c"]);
    await until(async () => (await status(e.store, id)).status === "ready", "ready");
    const a = await engine.generate(id, { embedding: { num_rows: 500, seed: 1 } });
    const b = await engine.generate(id, { embedding: { num_rows: 500, seed: 1 } });
    const c = await engine.generate(id, { embedding: { num_rows: 500, seed: 2 } });
    assert.deepEqual(a, b);
    assert.notDeepEqual(a.columns, c.columns);
    assert.ok(Array.isArray(a.columns.b) && a.columns.b.every((k) => k >= 0 && k < 3));
    const given = await engine.generate(id, { embedding: [Array(8).fill(0.1), Array(8).fill(-0.2), Array(8).fill(0)] });
    assert.equal(given.num_rows, 3);
    await engine.close();

    const again = await e.start(); // weights now come from the stored checkpoint
    assert.deepEqual(await again.generate(id, { embedding: { num_rows: 500, seed: 1 } }), a);
    const raw = await again.generateRaw(id, { embedding: { num_rows: 500, seed: 1 } });
    assert.deepEqual(Array.from(raw.columns.c), a.columns.c);
  } finally {
    await e.done();
  }
});

test("input the model cannot take and unknown models are reported with typed errors", async () => {
  const e = await env();
  try {
    const engine = await e.start(1);
    const id = await addModel(e.store, config({ max_epochs: 1 }));
    await engine.train(id);
    await assert.rejects(
      engine.generate(id, { embedding: [Array(8).fill(0), Array(5).fill(0)] }),
      (err: unknown) => err instanceof GenerateInputError && err.param === "body.embedding[1]",
    );
    await assert.rejects(engine.generate("mdl_000000000000", { embedding: { num_rows: 1 } }), EngineModelError);
    await until(async () => (await status(e.store, id)).status === "ready", "ready");
    await engine.close();
    await assert.rejects(engine.generate(id, { embedding: { num_rows: 1 } }), EngineUnavailableError);
    await assert.rejects(engine.train(id), EngineUnavailableError);
  } finally {
    await e.done();
  }
});

test("closing the engine mid-training leaves the model training; a new engine resumes it from its epoch", async () => {
  const e = await env();
  try {
    const first = await e.start();
    const id = await addModel(e.store, config({ max_epochs: 10 }));
    await first.train(id);
    await until(async () => (await status(e.store, id)).current_epoch >= 2, "two epochs");
    await first.close();
    const saved = (await status(e.store, id));
    assert.equal(saved.status, "training");
    const epochAtClose = (await e.store.getCheckpoint<Checkpoint>(id))?.epoch ?? 0;
    assert.ok(epochAtClose >= 2);

    const second = await e.start();
    assert.equal(await second.resumeAll(), 1);
    await until(async () => (await status(e.store, id)).status !== "training", "ready");
    assert.equal((await status(e.store, id)).status, "ready");
    assert.equal((await status(e.store, id)).current_epoch, 10);
    await until(() => finished(e.logs, id), "the worker's last log lines");
    const resumed = e.logs.find((l) => l.msg === "training resumed" && l.model_id === id);
    assert.ok(resumed, "resumed from a checkpoint");
    assert.equal(resumed.epoch, epochAtClose);
    const epochs = e.logs.filter((l) => l.msg === "epoch" && l.model_id === id).map((l) => l.epoch);
    assert.deepEqual(epochs, [...Array(10).keys()].map((i) => i + 1), "every epoch ran exactly once");
  } finally {
    await e.done();
  }
});

test("models spread over the workers; stop(id) during training ends the loop and frees the memory", async () => {
  const e = await env();
  try {
    const engine = await e.start(2);
    const id = await addModel(e.store, config({ max_epochs: 1000 }));
    const other = await addModel(e.store, config({ max_epochs: 1000 }));
    await engine.train(id);
    await engine.train(other);
    await until(async () => (await status(e.store, id)).current_epoch >= 1 && (await status(e.store, other)).current_epoch >= 1, "an epoch each");
    const placed = await engine.info();
    assert.deepEqual(placed.map((w) => w.actors.length), [1, 1], "one training model per worker");
    await engine.stop(id);
    await engine.stop(id); // idempotent
    assert.deepEqual(engine.trainingIds(), [other]);
    const after = (await status(e.store, id));
    await engine.stop(other);
    for (const w of await engine.info()) {
      assert.deepEqual(w.actors, []);
      assert.equal(w.numTensors, 0, "no tensors left on any worker");
    }
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await status(e.store, id)).current_epoch, after.current_epoch, "no progress after stop");
    assert.equal((await status(e.store, id)).status, "training", "stop leaves the record to its owner (delete)");
  } finally {
    await e.done();
  }
});

test("a non-finite loss or an unreadable checkpoint ends in failed with an error; the engine keeps working", async () => {
  const e = await env();
  try {
    const engine = await e.start(1);
    // A checkpoint with NaN weights (as a corrupted one would be).
    const nanId = await addModel(e.store, config());
    const tr = await Trainer.create({ id: nanId, metadata: META, config: config(), stepsPerEpoch: 1 });
    await tr.runEpoch();
    const ckpt = tr.checkpoint();
    tr.dispose();
    ckpt.weights["block0.fc.W"] = {
      shape: ckpt.weights["block0.fc.W"].shape,
      data: Buffer.from(new Float32Array(256 * 256).fill(Number.NaN).buffer),
    };
    await e.store.updateModel(nanId, { current_epoch: 1 }, ckpt);
    const junkId = await addModel(e.store, config());
    await e.store.updateModel(junkId, {}, { format: "something else" });

    await engine.train(nanId);
    await engine.train(junkId);
    await until(async () => (await status(e.store, nanId)).status !== "training" && (await status(e.store, junkId)).status !== "training", "failures");
    const nan = (await status(e.store, nanId));
    assert.equal(nan.status, "failed");
    assert.equal(nan.error?.code, "training_failed");
    assert.match(nan.error?.message ?? "", /non-finite/);
    const junk = (await status(e.store, junkId));
    assert.equal(junk.status, "failed");
    assert.equal(junk.error?.code, "training_failed");
    await assert.rejects(engine.generate(nanId, { embedding: { num_rows: 1 } }), EngineModelError);

    const ok = await addModel(e.store, config({ max_epochs: 1 }));
    await engine.train(ok);
    await until(async () => (await status(e.store, ok)).status === "ready", "a healthy model after the failures");
  } finally {
    await e.done();
  }
});

test("a model on the same worker answers generate while another model trains there", async () => {
  const e = await env();
  try {
    const engine = await e.start(1);
    const ready = await addModel(e.store, config({ max_epochs: 1 }));
    await engine.train(ready);
    await until(async () => (await status(e.store, ready)).status === "ready", "first model ready");
    const busy = await addModel(e.store, config({ max_epochs: 1000 }));
    await engine.train(busy);
    await until(async () => (await status(e.store, busy)).current_epoch >= 1, "second model training");
    const g = await engine.generate(ready, { embedding: { num_rows: 2000, seed: 9 } });
    assert.equal(g.num_rows, 2000);
    const h = await engine.generate(busy, { embedding: { num_rows: 100, seed: 9 } });
    assert.equal(h.num_rows, 100);
    assert.deepEqual(engine.trainingIds(), [busy]);
    assert.equal((await status(e.store, busy)).status, "training");
    await engine.stop(busy);
  } finally {
    await e.done();
  }
});

test("a model created while another trains on the same worker is seen there and trains", async () => {
  const e = await env();
  try {
    const engine = await e.start(1);
    const busy = await addModel(e.store, config({ max_epochs: 1000 }));
    await engine.train(busy);
    await until(async () => (await status(e.store, busy)).current_epoch >= 1, "the first model training");
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const id = await addModel(e.store, config({ max_epochs: 1 }));
      await engine.train(id);
      ids.push(id);
    }
    await until(async () => (await Promise.all(ids.map((id) => status(e.store, id)))).every((r) => r.status !== "training"), "the new models");
    assert.deepEqual((await Promise.all(ids.map((id) => status(e.store, id)))).map((r) => r.status), ["ready", "ready", "ready"]);
    await engine.stop(busy);
  } finally {
    await e.done();
  }
});

test("when a worker thread dies, its training model resumes from the last checkpoint", async () => {
  const e = await env();
  try {
    const engine = await e.start(1);
    const id = await addModel(e.store, config({ max_epochs: 5 }));
    await engine.train(id);
    await until(async () => (await status(e.store, id)).current_epoch >= 1, "an epoch");
    await engine.threads()[0].terminate();
    await until(async () => (await status(e.store, id)).status !== "training", "the resumed training to end");
    assert.equal((await status(e.store, id)).status, "ready");
    assert.equal((await status(e.store, id)).current_epoch, 5);
    assert.ok(e.logs.some((l) => l.msg === "training worker lost; resuming from the last checkpoint"));
  } finally {
    await e.done();
  }
});

test("a worker thread that dies of a store outage (full disk) does not count toward the restart limit; other deaths still do", async () => {
  const e = await env();
  try {
    const engine = await e.start(1);
    // What piscina reports when a thread ends on an error: the error as the thread threw it, a
    // plain Error once it crossed threads (here lmdb-js's commit failure on a full disk).
    const starts = (id: string): number => e.logs.filter((l) => /^training (started|resumed)$/.test(l.msg) && l.model_id === id).length;
    let seen = 0;
    const die = async (id: string, message: string): Promise<void> => {
      // Its actor runs on the (new) thread: the thread is up, and the loss is of a running training.
      await until(() => starts(id) > seen, "the training to run on its thread");
      seen = starts(id);
      engine.threads()[0].emit("error", new Error(message));
    };
    const outage = await addModel(e.store, config({ max_epochs: 6 }));
    await engine.train(outage);
    for (let i = 0; i < 4; i++) await die(outage, "Commit failed (see commitError for details)");
    assert.equal((await status(e.store, outage)).status, "training", "paused, not failed");
    await until(async () => (await status(e.store, outage)).status !== "training", "the resumed training to end");
    const ended = await status(e.store, outage);
    assert.equal(ended.status, "ready", JSON.stringify(ended.error));
    assert.equal(ended.current_epoch, 6);
    assert.equal(e.logs.filter((l) => l.msg.startsWith("training worker lost to a store outage") && l.model_id === outage).length, 4);

    // The rule itself is unchanged for other causes: the third loss fails the model.
    const crashing = await addModel(e.store, config({ max_epochs: 200 }));
    seen = 0;
    await engine.train(crashing);
    for (let i = 0; i < 3; i++) await die(crashing, "boom");
    await until(async () => (await status(e.store, crashing)).status !== "training", "the model to fail");
    const failed = await status(e.store, crashing);
    assert.equal(failed.status, "failed");
    assert.match(failed.error?.message ?? "", /exited unexpectedly 3 times \(last: boom\)/);
  } finally {
    await e.done();
  }
});
