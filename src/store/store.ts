/**
 * The store seam: everything the server, engine and admin commands keep, behind one async
 * interface with two implementations, `LmdbStore` (embedded, the default) and `PgStore`
 * (PostgreSQL, shared by several front ends and workers). Every guarantee holds across processes
 * of either: atomic quota charges; exactly one in-flight record per idempotency key (Brandur
 * Leach, "Implementing Stripe-like Idempotency Keys in Postgres", 2017); lists newest first with
 * stable cursors; crash recovery touching only requests that can no longer answer.
 * Errors (both 503): a write not committed rejects with `StoreWriteError` (nothing written); an
 * unreachable shared store's read with `StoreUnavailableError`. Bytes come back as `Buffer`.
 */
import type { Metadata } from "../contract";
import type {
  ChargeRequest,
  ChargeResult,
  Environment,
  IdempotencyBegin,
  IdempotencyRecord,
  IdempotencyScope,
  KeyRecord,
  LedgerEntry,
  ModelPage,
  ModelRecord,
  OrgLimits,
  OrgRecord,
  PendingCharge,
  RateCounter,
  StoredResponse,
} from "./records";
import type { PackedMetadata } from "./packedMetadata";

/** Fields of a model that {@link Store.updateModel} may change. */
export type ModelPatch = Partial<Omit<ModelRecord, "id" | "org" | "env" | "created_at">>;

/** The store as every component sees it; reads see every write committed before the call. */
export interface Store {
  /** `lmdb` (embedded) or `postgres` (shared). */
  readonly kind: "lmdb" | "postgres";
  /** Releases connections and handles; further calls are invalid. */
  close(): Promise<void>;
  /** Makes this thread's next reads see every commit so far (LMDB's per-thread snapshot). */
  refreshReads?(): void;

  // ---- orgs and keys ----
  /** True when the store holds no API key at all (first start). */
  isEmpty(): Promise<boolean>;
  /** Creates `org` if missing. */
  ensureOrg(org: string): Promise<void>;
  /** The org's record, or undefined when no such org exists. */
  getOrg(org: string): Promise<OrgRecord | undefined>;
  /** Every org, by name. */
  listOrgs(): Promise<OrgRecord[]>;
  /**
   * Sets (or with `null` clears) the org's rate limit (requests/minute, >= 1) and live quota
   * (rows/month, >= 0), creating the org. @throws RangeError for a value out of range.
   */
  setOrgLimits(org: string, limits: OrgLimits): Promise<OrgRecord>;
  /** Creates a key for `org` (created if missing) and returns it; only its SHA-256 is stored. */
  createKey(org: string, env: Environment): Promise<string>;
  /** The key's record, or undefined when no stored hash matches. */
  findKey(key: string): Promise<KeyRecord | undefined>;

  // ---- models ----
  /**
   * Stores a new model and its metadata atomically (an existing id is overwritten; `PackedMetadata`
   * bytes are written as they are); `completion` stores the response on the in-flight idempotency
   * record in the same transaction (a recovery point). `limits.maxModelsPerOrg` is counted in the
   * same transaction, serialised per org, so the cap is never passed.
   * @throws ModelLimitError when the cap is reached (nothing written).
   */
  createModel(
    rec: ModelRecord,
    metadata: Metadata | PackedMetadata,
    completion?: { scope: IdempotencyScope; response: StoredResponse },
    limits?: { maxModelsPerOrg?: number },
  ): Promise<void>;
  getModel(id: string): Promise<ModelRecord | undefined>;
  /** The model if it exists and belongs to (org, env); otherwise undefined (contract rule 5). */
  getOwnedModel(id: string, org: string, env: Environment): Promise<ModelRecord | undefined>;
  getMetadata(id: string): Promise<Metadata | undefined>;
  /**
   * Applies `patch` to a model that still exists, sets `updated_at`, optionally writes its
   * checkpoint in the same transaction. With `fence` (from {@link claimTraining}; never claimed: 0)
   * it writes only while that claim is the latest and the model still `training`, so a taken-over
   * or stopped training cannot overwrite newer state. Undefined when gone, stale or not training.
   */
  updateModel(id: string, patch: ModelPatch, checkpoint?: unknown, fence?: number): Promise<ModelRecord | undefined>;
  /**
   * Claims the right to train `id`: a fencing token greater than every earlier claim (Kleppmann,
   * "How to do distributed locking", 2016), or undefined when gone; older tokens are refused.
   */
  claimTraining(id: string): Promise<number | undefined>;
  getCheckpoint<T>(id: string): Promise<T | undefined>;
  /**
   * Removes the model, metadata and checkpoint atomically, leaving a tombstone (a valid List cursor
   * for `TOMBSTONE_TTL_MS`); false when it did not exist. `dropIdempotency`: that key's record too.
   */
  deleteModel(id: string, nowMs?: number, dropIdempotency?: IdempotencyScope): Promise<boolean>;
  /**
   * Models of (org, env), newest first, ties by id, right after `startingAfter` (tombstones count).
   * @throws CursorNotFoundError when it names no model of (org, env), or is not of an id's form.
   */
  listModels(org: string, env: Environment, limit: number, startingAfter?: string): Promise<ModelPage>;
  /** Every model currently in `status`, oldest first. */
  modelsWithStatus(status: ModelRecord["status"]): Promise<ModelRecord[]>;

  // ---- rate counters (the embedded limiter's persistence) ----
  rateCounterEntries(): Promise<[string, RateCounter][]>;
  putRateCounter(key: string, c: RateCounter): Promise<void>;
  sweepRateCounters(minWindow: number): Promise<number>;

  // ---- usage and quota ----
  /** Rows charged to (org, env) in `month` (`YYYY-MM`, UTC); 0 when nothing was charged. */
  getUsage(org: string, env: Environment, month: string): Promise<number>;
  /**
   * Charges `c.rows` if the month's usage stays within `c.quota`, atomically, with the live ledger
   * entry; `pending`: recorded as pending under `c.request_id` until settled or refunded.
   */
  chargeUsage(c: ChargeRequest, opts?: { pending?: boolean }): Promise<ChargeResult>;
  getPendingCharge(requestId: string): Promise<PendingCharge | undefined>;
  /** Makes the pending charge final. Resolves to false when there was none. */
  settleCharge(requestId: string): Promise<boolean>;
  /** Refunds `requestId`'s pending charge once (usage, live ledger); resolves to rows refunded. */
  refundPending(requestId: string, nowMs: number): Promise<number>;
  /** Gives back a final charge (same fields). Resolves to the month's usage after it. */
  refundUsage(c: ChargeRequest): Promise<number>;
  /** Usage rows of `month`: one per (org, env) that was charged, by org then env. */
  usageOfMonth(month: string): Promise<{ org: string; env: Environment; rows: number }[]>;
  /** Ledger entries of `org` in `month`, oldest first. */
  ledgerEntries(org: string, month: string): Promise<LedgerEntry[]>;

  // ---- idempotency ----
  /** Starts a request under an idempotency key, atomically (see `IdempotencyBegin`). */
  beginIdempotent(scope: IdempotencyScope, fingerprint: string, nowMs: number, ttlMs: number, requestId?: string): Promise<IdempotencyBegin>;
  /** Stores the response and settles the pending charge together; an earlier stored one wins. */
  completeIdempotent(scope: IdempotencyScope, response: StoredResponse): Promise<StoredResponse | undefined>;
  /** Drops the in-flight record (and refunds the request's pending charge) together. */
  abandonIdempotent(scope: IdempotencyScope, requestId?: string, nowMs?: number): Promise<void>;
  getIdempotency(scope: IdempotencyScope): Promise<IdempotencyRecord | undefined>;

  // ---- recovery and expiry ----
  /**
   * Crash recovery: refunds pending charges and releases in-flight keys of requests that will
   * never answer (this process's not in `live`; shared store: those of expired leases, on the
   * database's clock). An in-flight record holding its response is completed instead.
   */
  reconcile(live: ReadonlySet<string>, nowMs: number): Promise<{ refunded_rows: number; charges: number; released: number }>;
  /** Removes idempotency records older than `ttlMs` and expired tombstones; resolves to count. */
  sweepExpired(nowMs: number, ttlMs: number): Promise<number>;
}
