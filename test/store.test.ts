import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LmdbStore as Store, hashKey, CursorNotFoundError } from "../src/store";
import { META, modelRecord } from "./store-fixtures";

function tmpStore(): { store: Store; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), "synthd-store-"));
  return { store: new Store(dir), dir };
}

const rec = modelRecord;

test("API keys are stored only as their SHA-256 and found by the key", async () => {
  const { store, dir } = tmpStore();
  try {
    assert.equal((await store.isEmpty()), true);
    const key = await store.createKey("acme", "live");
    assert.match(key, /^svc_live_[A-Za-z0-9]{32}$/);
    assert.deepEqual((await store.findKey(key))?.org, "acme");
    assert.equal((await store.findKey(key + "x")), undefined);
    await store.root.flushed;
    const raw = readFileSync(join(dir, "data.mdb"));
    assert.equal(raw.includes(Buffer.from(key)), false, "plaintext key must not be stored");
    assert.equal(raw.includes(Buffer.from(hashKey(key))), true, "its hash is stored");
    assert.equal(hashKey(key).length, 64);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a data directory whose name holds a dot opens as a directory, and its keys are there after a restart", async () => {
  const parent = mkdtempSync(join(tmpdir(), "synthd-store-"));
  const dir = join(parent, "synthd.data");
  try {
    let store = new Store(dir);
    const key = await store.createKey("acme", "live");
    await store.close();
    assert.deepEqual(readdirSync(dir).filter((f) => f.endsWith(".mdb")).sort(), ["data.mdb", "lock.mdb"]);
    store = new Store(dir);
    assert.equal((await store.findKey(key))?.org, "acme");
    await store.close();
  } finally {
    rmSync(parent, { recursive: true, force: true });
  }
});

test("list pages newest first per org and environment, cursor continues after the given id", async () => {
  const { store, dir } = tmpStore();
  try {
    const mine = [1000, 2000, 3000, 4000, 5000].map((ms) => rec("o", "test", ms));
    for (const m of mine) await store.createModel(m, META);
    await store.createModel(rec("o", "live", 6000), META);
    await store.createModel(rec("other", "test", 7000), META);
    const p1 = (await store.listModels("o", "test", 2));
    assert.deepEqual(p1.items.map((m) => m.id), [mine[4].id, mine[3].id]);
    assert.equal(p1.has_more, true);
    const p2 = (await store.listModels("o", "test", 2, p1.items[1].id));
    assert.deepEqual(p2.items.map((m) => m.id), [mine[2].id, mine[1].id]);
    const p3 = (await store.listModels("o", "test", 2, p2.items[1].id));
    assert.deepEqual(p3.items.map((m) => m.id), [mine[0].id]);
    assert.equal(p3.has_more, false);
    await assert.rejects(store.listModels("o", "live", 2, mine[0].id), CursorNotFoundError);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("delete removes model, metadata and checkpoint; a late update does not resurrect it", async () => {
  const { store, dir } = tmpStore();
  try {
    const m = rec("o", "test", 1000);
    await store.createModel(m, META);
    await store.updateModel(m.id, { current_epoch: 1 }, { epoch: 1 });
    assert.deepEqual((await store.getCheckpoint(m.id)), { epoch: 1 });
    assert.equal(await store.deleteModel(m.id), true);
    assert.equal(await store.updateModel(m.id, { current_epoch: 2 }, { epoch: 2 }), undefined);
    assert.equal((await store.getModel(m.id)), undefined);
    assert.equal((await store.getMetadata(m.id)), undefined);
    assert.equal((await store.getCheckpoint(m.id)), undefined);
    assert.equal((await store.listModels("o", "test", 10)).items.length, 0);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
