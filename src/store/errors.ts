/** Errors of the store, the same from both implementations, and {@link isStoreOutage}. */

/**
 * A write not committed (full disk, file system failure, LMDB map full); nothing was written.
 * `code` `STORE_WRITE_FAILED`; `cause` the underlying error (lmdb-js: a full disk is errno 5).
 */
export class StoreWriteError extends Error {
  readonly code = "STORE_WRITE_FAILED";
  constructor(readonly cause: unknown) {
    super(`the store could not be written (${cause instanceof Error ? cause.message : String(cause)})`);
    this.name = "StoreWriteError";
  }
}

/**
 * A shared-store read that could not reach it: code `STORE_UNAVAILABLE`, 503 with Retry-After;
 * `cause` the driver's error. (Embedded reads do not fail this way.)
 */
export class StoreUnavailableError extends Error {
  readonly code = "STORE_UNAVAILABLE";
  constructor(readonly cause: unknown) {
    super(`the store cannot be reached (${cause instanceof Error ? cause.message : String(cause)})`);
    this.name = "StoreUnavailableError";
  }
}

/**
 * True when the store cannot be written or reached for now, not a fault of request or model:
 * {@link StoreWriteError} (e.g. SQLSTATE 53100), {@link StoreUnavailableError}, raw
 * `ENOSPC`/`EDQUOT`, and the same as a plain `Error` from a worker thread that died of them (by
 * `code` or message). Whoever waits on such a store retries; it never fails a model for it.
 */
export function isStoreOutage(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as Error & { code?: unknown }).code;
  if (code === "STORE_WRITE_FAILED" || code === "STORE_UNAVAILABLE" || code === "ENOSPC" || code === "EDQUOT") return true;
  return /^Commit failed \(see commitError for details\)$|No space left on device|MDB_MAP_FULL|could not extend file|disk quota exceeded/i.test(err.message);
}

/** Thrown by {@link Store.listModels} when `starting_after` names no model of the caller. */
export class CursorNotFoundError extends Error {}


/** {@link Store.createModel}: the org already has `limit` models (both envs); nothing written. */
export class ModelLimitError extends Error {
  constructor(
    readonly org: string,
    readonly limit: number,
  ) {
    super(`organization ${org} already has ${limit} models, the most it may keep`);
    this.name = "ModelLimitError";
  }
}
