/**
 * Idempotency records in the embedded store: the sub-database `idempotency` of `lmdbStore.ts`
 * ([org, env, key] -> {@link IdempotencyRecord}) and the changes to it. Every method runs inside a
 * write transaction the store opened, so concurrent requests, even from other threads or
 * processes, see each other's records; the store pairs them with the pending charges
 * (`usage.ts`) in the same transaction.
 */
import type { Database, RootDatabase } from "lmdb";
import type { IdempotencyBegin, IdempotencyRecord, IdempotencyScope, StoredResponse } from "../records";

/** The idempotency sub-database of one LMDB environment. */
export class LmdbIdempotency {
  readonly db: Database<IdempotencyRecord, string[]>;

  constructor(root: RootDatabase) {
    this.db = root.openDB({ name: "idempotency" });
  }

  /**
   * Starts a request under `scope`: no record, or one older than `ttlMs`: an in-flight record ->
   * `started`; a record whose fingerprint differs -> `mismatch`; an in-flight record ->
   * `in_flight`; a completed one -> `replay` with its response.
   */
  begin(scope: IdempotencyScope, fingerprint: string, nowMs: number, ttlMs: number, requestId: string | undefined): IdempotencyBegin {
    const k = [scope.org, scope.env, scope.key];
    const cur = this.db.get(k);
    if (cur === undefined || cur.created_ms + ttlMs <= nowMs) {
      this.db.put(k, { state: "in_flight", fingerprint, created_ms: nowMs, ...(requestId === undefined ? {} : { request_id: requestId }) });
      return { kind: "started" };
    }
    if (cur.fingerprint !== fingerprint) return { kind: "mismatch" };
    if (cur.state === "in_flight" || cur.response === undefined) return { kind: "in_flight" };
    return { kind: "replay", response: cur.response };
  }

  /** Completes `scope` with `response`, unless the record already holds one (a recovery point), which wins. */
  complete(scope: IdempotencyScope, response: StoredResponse): StoredResponse | undefined {
    const k = [scope.org, scope.env, scope.key];
    const cur = this.db.get(k);
    if (cur === undefined) return undefined;
    // A response stored earlier in the request (a recovery point, see createModel) wins.
    const final = cur.response ?? response;
    this.db.put(k, { ...cur, state: "done", response: final });
    return final;
  }

  /** Drops the record of `scope` if it is in flight. */
  abandon(scope: IdempotencyScope): void {
    const k = [scope.org, scope.env, scope.key];
    if (this.db.get(k)?.state === "in_flight") this.db.remove(k);
  }

  /**
   * Crash recovery: every in-flight record whose request is not in `live` is completed when it
   * holds its response (a recovery point: a retry replays), else released. Returns how many.
   */
  release(live: ReadonlySet<string>): number {
    let released = 0;
    for (const { key, value } of [...this.db.getRange({})]) {
      if (value.state !== "in_flight" || (value.request_id !== undefined && live.has(value.request_id))) continue;
      if (value.response !== undefined) this.db.put(key, { ...value, state: "done" });
      else this.db.remove(key);
      released++;
    }
    return released;
  }

  /** Removes records older than `ttlMs` at `nowMs`; returns how many. */
  sweep(nowMs: number, ttlMs: number): number {
    let n = 0;
    for (const { key, value } of this.db.getRange({})) {
      if (value.created_ms + ttlMs <= nowMs) {
        this.db.remove(key);
        n++;
      }
    }
    return n;
  }
}
