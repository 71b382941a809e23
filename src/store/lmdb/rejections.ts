/**
 * lmdb-js (3.x) leaves one unhandled promise rejection behind every write transaction that fails
 * to commit (full disk, I/O error): the promise of its internal batch-start instruction
 * (`writeBatchStart = writeInstructions(1, store)` in lmdb's write.js) is rejected with
 * `Error("Commit failed (see commitError for details)")` and nobody holds it. The failure itself
 * reaches the caller that awaited the transaction (`Store.write` turns it into a
 * `StoreWriteError`), so this extra rejection carries no information of its own.
 *
 * Node's default for an unhandled rejection ends the thread: in an engine worker that read as
 * "worker thread exited unexpectedly" on a full disk, and in the main thread it was logged as an
 * error per failed request. {@link guardLmdbRejections} recognises exactly these rejections (and
 * handles their `commitError` follow-up) and leaves every other rejection to the next handler.
 *
 * The follow-up: `commitError` is a promise lmdb-js rejects with the cause (e.g. "No space left on
 * device") in the same callback that rejects the orphan. Node (20.x) reports every rejection of
 * one tick that was unhandled when the tick ended, even one that got a handler while an earlier
 * one of the same tick was being reported; so the follow-up is reported right after its orphan
 * although the guard attached a handler to it. The guard remembers the follow-ups it handled and
 * absorbs their reports too.
 */

/** True for lmdb-js's orphaned commit rejection described above. */
export function isLmdbCommitRejection(reason: unknown): boolean {
  return reason instanceof Error && reason.message === "Commit failed (see commitError for details)" && "commitError" in reason;
}

/**
 * Installs an `unhandledRejection` listener that absorbs lmdb-js's orphaned commit rejections
 * (calling `onAbsorbed`, e.g. a debug log) and the reports of their `commitError` follow-ups
 * (silently), and passes any other rejection to `onOther`, or, when
 * `onOther` is not given, rethrows it (Node then treats it as an uncaught exception, as it would
 * without this listener). Returns a function that removes the listener.
 */
export function guardLmdbRejections(onAbsorbed: (reason: Error) => void, onOther?: (reason: unknown) => void): () => void {
  const followUps = new WeakSet<Promise<unknown>>();
  const listener = (reason: unknown, promise: Promise<unknown>): void => {
    if (isLmdbCommitRejection(reason)) {
      const follow = (reason as { commitError?: unknown }).commitError;
      if (follow instanceof Promise) {
        followUps.add(follow);
        follow.catch(() => undefined);
      }
      onAbsorbed(reason as Error);
      return;
    }
    // The follow-up of an orphan absorbed above, reported in the same tick (module comment).
    if (followUps.has(promise)) return;
    if (onOther) onOther(reason);
    else throw reason;
  };
  process.on("unhandledRejection", listener);
  return () => process.off("unhandledRejection", listener);
}
