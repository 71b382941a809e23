/**
 * The embedded store's write transactions: every write of `lmdbStore.ts` (and of `usage.ts` and
 * `idempotency.ts`, which run inside them) goes through {@link writeTransaction}.
 */
import type { RootDatabase } from "lmdb";
import { StoreWriteError } from "../errors";

/**
 * Runs `fn` in one LMDB write transaction of `root` and resolves with its result once committed.
 * A transaction that cannot be committed (full disk, I/O error) rejects with a
 * {@link StoreWriteError}; lmdb-js's own follow-up rejection (`commitError`) is handled here so
 * that it never surfaces as an unhandled rejection (which would end a worker thread). Other errors
 * `fn` throws reject as they are (nothing written).
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
