/**
 * lmdb-js 3.x leaves an unhandled rejection behind every write transaction that fails to commit:
 * its internal batch-start promise (`writeBatchStart` in lmdb's write.js) rejects with
 * `Error("Commit failed (see commitError for details)")`. The caller already gets the failure
 * (`StoreWriteError`), but Node's default would end the thread (a worker "exited unexpectedly" on
 * a full disk). Its `commitError` follow-up, rejected in the same callback, is reported in the
 * same tick even after a handler is attached (Node 20), so the guard remembers and absorbs it too.
 */

/** True for lmdb-js's orphaned commit rejection. */
export function isLmdbCommitRejection(reason: unknown): boolean {
  return reason instanceof Error && reason.message === "Commit failed (see commitError for details)" && "commitError" in reason;
}

/**
 * Installs an `unhandledRejection` listener absorbing the orphans (calling `onAbsorbed`) and their
 * follow-ups; any other rejection goes to `onOther`, or is rethrown (as without the listener).
 * Returns a function that removes it.
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
    // The follow-up of an orphan absorbed above, reported in the same tick.
    if (followUps.has(promise)) return;
    if (onOther) onOther(reason);
    else throw reason;
  };
  process.on("unhandledRejection", listener);
  return () => process.off("unhandledRejection", listener);
}
