/**
 * What keeps an engine worker thread alive when the store cannot commit (a full disk;
 * docs/operations.md "A full disk"): lmdb-js's orphaned rejections are absorbed, including the
 * `commitError` follow-up that Node reports in the same tick, and no tfjs backend leaves process
 * listeners behind that rethrow them. Each case runs in its own worker thread, whose `process`
 * events are its own (the test runner's listeners are not involved).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Worker } from "node:worker_threads";

/** Runs `body` (CommonJS, with `paths` in scope) in a fresh worker thread; resolves to what it posts. */
function inThread<T>(body: string): Promise<T> {
  const paths = {
    guard: require.resolve("../src/store/lmdb/rejections"),
    backend: require.resolve("../src/model/compute/backend"),
  };
  const code = `const { parentPort } = require("node:worker_threads"); const paths = ${JSON.stringify(paths)};\n(async () => {\n${body}\n})().catch((e) => parentPort.postMessage({ failed: String(e && e.stack) }));`;
  return new Promise((resolve, reject) => {
    const w = new Worker(code, { eval: true });
    w.once("message", (m: T & { failed?: string }) => {
      void w.terminate();
      if (m.failed) reject(new Error(m.failed));
      else resolve(m);
    });
    w.once("error", reject);
  });
}

test("the guard absorbs lmdb-js's orphaned commit rejection and its commitError follow-up of the same tick, and passes on any other", async () => {
  const out = await inThread<{ absorbed: string[]; other: string[] }>(`
    const { guardLmdbRejections } = require(paths.guard);
    const absorbed = [];
    const other = [];
    guardLmdbRejections((r) => absorbed.push(r.message), (r) => other.push(r.message));
    // As lmdb-js does after a failed commit: in one callback, the orphan is rejected, then the
    // follow-up it names; neither has a handler when the tick ends.
    let rejectFollow;
    const follow = new Promise((_, rej) => (rejectFollow = rej));
    const orphan = Object.assign(new Error("Commit failed (see commitError for details)"), { commitError: follow });
    Promise.reject(orphan);
    rejectFollow(new Error("No space left on device"));
    Promise.reject(new Error("something else"));
    // A follow-up-looking error on a promise the guard never saw is not absorbed.
    Promise.reject(new Error("No space left on device (unrelated)"));
    await new Promise((r) => setTimeout(r, 50));
    parentPort.postMessage({ absorbed, other });
  `);
  assert.deepEqual(out.absorbed, ["Commit failed (see commitError for details)"]);
  assert.deepEqual(out.other, ["something else", "No space left on device (unrelated)"]);
});

test("starting the tfjs backend leaves no unhandledRejection / uncaughtException listener behind", async () => {
  const out = await inThread<{ before: number[]; after: number[]; backend: string }>(`
    const count = () => [process.listenerCount("unhandledRejection"), process.listenerCount("uncaughtException")];
    process.on("unhandledRejection", () => undefined); // one of ours, which must stay
    const before = count();
    const { initBackend } = require(paths.backend);
    const backend = await initBackend();
    parentPort.postMessage({ before, after: count(), backend });
  `);
  // The wasm backend's Emscripten runtime adds one listener of each kind that rethrows.
  assert.equal(out.backend, "wasm", "the default backend of this machine (the case that added listeners)");
  assert.deepEqual(out.after, out.before);
});

test("withoutAddedProcessListeners removes only what its start added, also when the start fails", async () => {
  const out = await inThread<{ kept: boolean; rejected: string; counts: number[] }>(`
    const { withoutAddedProcessListeners } = require(paths.backend);
    const ours = () => undefined;
    process.on("uncaughtException", ours);
    let rejected = "";
    try {
      await withoutAddedProcessListeners(async () => {
        process.on("uncaughtException", (e) => { throw e; });
        process.on("unhandledRejection", (r) => { throw r; });
        throw new Error("backend failed");
      });
    } catch (e) {
      rejected = e.message;
    }
    parentPort.postMessage({
      kept: process.listeners("uncaughtException").includes(ours),
      rejected,
      counts: [process.listenerCount("uncaughtException"), process.listenerCount("unhandledRejection")],
    });
  `);
  assert.equal(out.rejected, "backend failed");
  assert.equal(out.kept, true);
  assert.deepEqual(out.counts, [1, 0]);
});
