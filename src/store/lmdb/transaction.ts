/** The embedded store's write transactions: every write of `lmdbStore.ts` goes through here. */
import type { RootDatabase } from "lmdb";
import { StoreWriteError } from "../errors";

/**
 * Runs `fn` in one LMDB write transaction and resolves with its result once committed. A failed
 * commit rejects with {@link StoreWriteError}; lmdb-js's `commitError` follow-up is handled here
 * (unhandled, it would end a worker thread). Other errors of `fn` reject as is, nothing written.
 */
export async function writeTransaction<T>(root: RootDatabase, fn: () => T): Promise<T> {
  try {
    return await root.transaction(fn);
  } catch (err) {
    if (err instanceof StoreWriteError) throw err;
    const commitError = (err as { commitError?: unknown }).commitError;
    let cause: unknown = err;
    if (commitError instanceof Promise) {
      // Settles on the same turn as the rejection above: wait for it briefly to name the cause.
      cause = await Promise.race([commitError.then(() => err, (e: unknown) => e), new Promise((r) => setTimeout(() => r(err), 50))]);
    }
    if (err instanceof Error && commitError === undefined && !/Commit failed|ENOSPC|EIO|No space|MDB_/i.test(err.message)) throw err;
    throw new StoreWriteError(cause);
  }
}
