/**
 * The embedded store's `idempotency` sub-database ([org, env, key] -> {@link IdempotencyRecord}).
 * Every method runs inside a write transaction the store opened, paired there with pending charges.
 */
import type { Database, RootDatabase } from "lmdb";
import type { IdempotencyBegin, IdempotencyRecord, IdempotencyScope, StoredResponse } from "../records";

/** The idempotency sub-database of one LMDB environment. */
export class LmdbIdempotency {
  readonly db: Database<IdempotencyRecord, string[]>;

  constructor(root: RootDatabase) {
    this.db = root.openDB({ name: "idempotency" });
  }

  /** Starts a request under `scope` (`IdempotencyBegin`; a record older than `ttlMs` is new). */
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

  /** Completes `scope` with `response`, unless it holds one already (a recovery point wins). */
  complete(scope: IdempotencyScope, response: StoredResponse): StoredResponse | undefined {
    const k = [scope.org, scope.env, scope.key];
    const cur = this.db.get(k);
    if (cur === undefined) return undefined;
    const final = cur.response ?? response;
    this.db.put(k, { ...cur, state: "done", response: final });
    return final;
  }

  /** Drops the record of `scope` if it is in flight. */
  abandon(scope: IdempotencyScope): void {
    const k = [scope.org, scope.env, scope.key];
    if (this.db.get(k)?.state === "in_flight") this.db.remove(k);
  }

  /** Recovery: in-flight records not in `live` complete if they hold a response, else release. */
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
