/**
 * Errors of the store, the same from both implementations, and {@link isStoreOutage}: the test
 * that tells "the store cannot be written or reached for now" from a fault of the request.
 */

/**
 * A write to the store that could not be committed: the disk is full, the file system failed, or
 * LMDB's map is full. Nothing of the transaction was written. `code` is `STORE_WRITE_FAILED`;
 * `cause` is the underlying error (lmdb-js reports a full disk as an I/O error, errno 5).
 */
export class StoreWriteError extends Error {
  readonly code = "STORE_WRITE_FAILED";
  constructor(readonly cause: unknown) {
    super(`the store could not be written (${cause instanceof Error ? cause.message : String(cause)})`);
    this.name = "StoreWriteError";
  }
}

/**
 * A read of the shared store that could not reach it (connection refused or lost, the server
 * shutting down): code `STORE_UNAVAILABLE`, answered 503 with Retry-After. `cause` is the driver's
 * error. (The embedded store's reads do not fail this way.)
 */
export class StoreUnavailableError extends Error {
  readonly code = "STORE_UNAVAILABLE";
  constructor(readonly cause: unknown) {
    super(`the store cannot be reached (${cause instanceof Error ? cause.message : String(cause)})`);
    this.name = "StoreUnavailableError";
  }
}

/**
 * True for an error that says the store cannot be written or reached for now, as opposed to a
 * fault of the request or the model: a {@link StoreWriteError} (full disk, I/O error, LMDB's map
 * full, a PostgreSQL write refused, e.g. SQLSTATE 53100 "could not extend file"), a
 * {@link StoreUnavailableError}, a raw `ENOSPC`/`EDQUOT`, and the same failures as they arrive
 * from a worker thread that died of them (its error is a plain `Error` then: recognised by its
 * `code` or by lmdb-js's and the operating system's messages). What waits for such a store
 * retries later; it never fails a model for it.
 */
export function isStoreOutage(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as Error & { code?: unknown }).code;
  if (code === "STORE_WRITE_FAILED" || code === "STORE_UNAVAILABLE" || code === "ENOSPC" || code === "EDQUOT") return true;
  return /^Commit failed \(see commitError for details\)$|No space left on device|MDB_MAP_FULL|could not extend file|disk quota exceeded/i.test(err.message);
}

/** Thrown by {@link Store.listModels} when `starting_after` names no model of the caller. */
export class CursorNotFoundError extends Error {}


/**
 * Thrown by {@link Store.createModel} when the org already has `limit` models (both environments
 * together) and a cap was given: nothing was written.
 */
export class ModelLimitError extends Error {
  constructor(
    readonly org: string,
    readonly limit: number,
  ) {
    super(`organization ${org} already has ${limit} models, the most it may keep`);
    this.name = "ModelLimitError";
  }
}
