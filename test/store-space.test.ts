/**
 * The embedded store never lets LMDB meet a full disk (src/store/lmdb/space.ts, issue 39): its
 * data file is allocated ahead of use, a write that does not fit is refused with a
 * StoreWriteError before LMDB writes anything, and the store works again once space returns.
 * The second test mounts a tmpfs (root, as CI runs; `disk-full.test.ts` does the same).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pack } from "msgpackr";
import { CONFIG_DEFAULTS } from "../src/contract";
import { LmdbStore as Store, newModelId, StoreWriteError, type ModelRecord } from "../src/store";
import { encodedSizeBound } from "../src/store/lmdb/space";
import { fillDisk } from "../bench/harness";

function checkpointLike(floats: number): Record<string, unknown> {
  const data = Buffer.alloc(floats * 4, 7);
  return {
    format: "synthd-generator",
    version: 2,
    spec: { embedding_dim: 64, hidden: 128, blocks: 2, output_dim: 5 },
    cardinalities: [2, 3],
    weights: { w0: { shape: [floats], data }, b0: { shape: [3], data: Buffer.alloc(12) } },
    adam: { t: 10, beta1: 0.9, m: { w0: { shape: [floats], data } } },
    rng: [1, 2, 3, 4294967295],
    val_loss: null,
  };
}

test("encodedSizeBound is at least msgpack's size of what the store writes", () => {
  const values: unknown[] = [
    checkpointLike(1000),
    { features: ["age", "naïve ✓"], cardinalities: { age: 3 }, empirical_probs: { age: [0.1, 0.2, 0.7] }, value_mappings: { age: { "1.5": 0, "😀": 1 } } },
    { status: 200, body: JSON.stringify({ data: { rows: [[1, 2], [3, 4]] } }), created_ms: Date.now() },
    [0.1, 1e300, -3, 2 ** 40, "", "x".repeat(70_000)],
    { nested: { deeper: [{ a: true, b: null, c: undefined }] } },
  ];
  for (const v of values) {
    assert.ok(encodedSizeBound(v) >= pack(v).length, `${encodedSizeBound(v)} < ${pack(v).length} for ${JSON.stringify(v).slice(0, 60)}`);
  }
});

function modelRecord(): ModelRecord {
  const t = new Date().toISOString();
  return {
    id: newModelId(), org: "o", env: "test", status: "training", config: { ...CONFIG_DEFAULTS, device: "cpu" },
    current_epoch: 0, train_loss: null, val_loss: null, created_at: t, updated_at: t, error: null,
  };
}

test("on a full disk a write that does not fit is refused before LMDB writes (ENOSPC from the store's own allocation), and works once space returns", async () => {
  const dir = mkdtempSync(join(tmpdir(), "synthd-store-space-"));
  const mount = join(dir, "disk");
  mkdirSync(mount);
  execFileSync("mount", ["-t", "tmpfs", "-o", "size=32m", "tmpfs", mount]);
  let store: Store | undefined;
  try {
    const storeDir = join(mount, "store");
    store = new Store(storeDir);
    const rec = modelRecord();
    await store.createModel(rec, { features: ["a"], cardinalities: { a: 1 }, empirical_probs: { a: [1] } });
    await store.updateModel(rec.id, { current_epoch: 1 }, checkpointLike(256 * 1024));
    const data = join(storeDir, "data.mdb");
    const lockBytes = statSync(join(storeDir, "lock.mdb")).blocks * 512;
    assert.ok(lockBytes >= 8192, `the lock file is allocated (${lockBytes} bytes)`);

    fillDisk(mount);
    const owned = statSync(data).size;
    // Checkpoints of 1 MiB then 4 MiB until one is refused: those admitted fit in the allocated file.
    let refused: unknown;
    for (let i = 0; i < 40 && refused === undefined; i++) {
      try {
        await store.updateModel(rec.id, { current_epoch: 2 + i }, checkpointLike(i < 4 ? 256 * 1024 : 1024 * 1024));
      } catch (err) {
        refused = err;
      }
    }
    assert.ok(refused instanceof StoreWriteError, `a write was refused with a StoreWriteError: ${String(refused)}`);
    assert.equal((refused.cause as NodeJS.ErrnoException).code, "ENOSPC", `refused by the store's own allocation, not by LMDB: ${String(refused.cause)}`);
    assert.ok(statSync(data).size >= owned, "the data file never shrinks");
    const before = await store.getModel(rec.id);
    assert.equal(before?.status, "training", "reads work on the full disk");
    await store.ensureOrg("small-write-still-fits");

    rmSync(join(mount, "filler"));
    const after = await store.updateModel(rec.id, { current_epoch: 99 }, checkpointLike(1024 * 1024));
    assert.equal(after?.current_epoch, 99, "the refused write succeeds once space returns");
    assert.equal((await store.getCheckpoint<{ weights: { w0: { data: Uint8Array } } }>(rec.id))?.weights.w0.data.length, 4 * 1024 * 1024);
  } finally {
    await store?.close();
    execFileSync("umount", ["-l", mount]);
    rmSync(dir, { recursive: true, force: true });
  }
});
