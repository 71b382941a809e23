/**
 * A training model's actor on a store that is out for a while (docs/operations.md "A full disk"):
 * the shared topology's PostgreSQL refusing writes with "could not extend file" (disk full,
 * SQLSTATE 53100; PgStore reports it as StoreWriteError) and its reads as StoreUnavailableError.
 * The training pauses (status stays `training`, the last written checkpoint stays), retries with
 * backoff and ends `ready`; it is never marked failed for it. The store here is the embedded one
 * behind a wrapper that refuses as PgStore would.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LmdbStore as Store, StoreUnavailableError, StoreWriteError, type ModelPatch, type Store as StoreApi } from "../src/store";
import { ModelActor, storeRetryDelay, STORE_RETRY_FIRST_MS, STORE_RETRY_MAX_MS } from "../src/engine/worker/actor";
import { addTrainingModel, fastConfig, TINY_META } from "./fixtures";

/** Polls until `pred` holds (fails after `ms`; a hang guard, not a timing assertion). */
async function until(pred: () => boolean, what: string, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** PostgreSQL's error for a full disk, as the pg driver reports it. */
function pgDiskFull(): Error {
  return Object.assign(new Error('could not extend file "base/16384/16397": No space left on device'), { code: "53100", severity: "ERROR" });
}

test("storeRetryDelay: 0.5 s, doubling, at most 10 s", () => {
  assert.deepEqual([1, 2, 3, 4, 5, 6, 7, 100].map(storeRetryDelay), [500, 1000, 2000, 4000, 8000, 10_000, 10_000, 10_000]);
  assert.equal(STORE_RETRY_FIRST_MS, 500);
  assert.equal(STORE_RETRY_MAX_MS, 10_000);
});

test("an actor whose store is out (disk full, unreachable) pauses with the last checkpoint kept, stays training, and ends ready", async () => {
  const dir = mkdtempSync(join(tmpdir(), "synthd-actor-outage-"));
  const store = new Store(dir);
  try {
    const id = await addTrainingModel(store, fastConfig(4), TINY_META);
    let outage = false;
    let refusedWrites = 0;
    let refusedReads = 0;
    const written: ModelPatch[] = [];
    const epochsSeenWhileOut: number[] = [];
    const flaky: StoreApi = new Proxy(store, {
      get(target, prop, receiver) {
        const real = Reflect.get(target, prop, receiver) as unknown;
        if (typeof real !== "function") return real;
        if (prop === "updateModel") {
          return async (...args: Parameters<Store["updateModel"]>) => {
            if (outage) {
              refusedWrites += 1;
              epochsSeenWhileOut.push((await store.getModel(id))!.current_epoch);
              throw new StoreWriteError(pgDiskFull());
            }
            written.push(args[1]);
            return store.updateModel(...args);
          };
        }
        if (prop === "getModel" || prop === "getMetadata" || prop === "getCheckpoint") {
          return async (...args: unknown[]) => {
            if (outage) {
              refusedReads += 1;
              throw new StoreUnavailableError(pgDiskFull());
            }
            return (real as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          };
        }
        return (real as (...a: unknown[]) => unknown).bind(target);
      },
    }) as StoreApi;
    const logs: string[] = [];
    // The store is out from the start (the reads that begin the training) ...
    outage = true;
    const actor = new ModelActor(id, { store: flaky, yieldFn: () => new Promise((r) => setImmediate(r)), log: (_l, msg) => logs.push(msg) });
    const done = actor.start();
    await until(() => refusedReads >= 2, "the reads to be refused twice");
    outage = false;
    // ... and again once an epoch was written: the second epoch's write is refused a few times.
    await until(() => written.length >= 1 || actor.state !== "starting" && actor.state !== "training", "an epoch to be written");
    assert.equal(written.length, 1, `the training went on after the outage of its reads (state ${actor.state})`);
    outage = true;
    await until(() => refusedWrites >= 3, "the writes to be refused three times");
    const paused = (await store.getModel(id))!;
    assert.equal(paused.status, "training", "a store outage pauses the training; it does not fail the model");
    assert.ok(epochsSeenWhileOut.every((e) => e === 1), `the last written checkpoint stays: ${epochsSeenWhileOut.join(",")}`);
    assert.equal((await store.getCheckpoint<{ epoch: number }>(id))?.epoch, 1, "the checkpoint of the last written epoch is kept");
    outage = false;
    const reply = await done;
    assert.equal(reply.outcome, "ready");
    const rec = (await store.getModel(id))!;
    assert.equal(rec.status, "ready");
    assert.equal(rec.current_epoch, 4);
    assert.equal(rec.error, null);
    assert.ok(!written.some((p) => p.status === "failed"), "never marked failed");
    assert.ok(logs.includes("cannot use the store (full or failing); training paused until it can"));
    assert.ok(logs.includes("the store works again; training continues"));
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
