/**
 * The store seam: everything the server, the engine and the admin commands
 * keep, behind one asynchronous interface with two implementations:
 * - {@link import("./lmdb/lmdbStore").LmdbStore}: the embedded LMDB store (one machine; the default);
 * - {@link import("./postgres/pgStore").PgStore}: PostgreSQL, shared by several front ends and workers.
 *
 * Every guarantee holds across processes of either implementation: a quota charge is atomic (one
 * transaction: LMDB's serialised writer, PostgreSQL's one conditional UPDATE); an idempotency key
 * has exactly one in-flight record (one write transaction / a unique row, after Brandur Leach,
 * "Implementing Stripe-like Idempotency Keys in Postgres", 2017); lists are newest first with
 * stable cursors and tombstones; crash recovery ({@link Store.reconcile}) touches only the
 * records of requests that can no longer answer.
 *
 * Errors: a write that cannot be committed rejects with `StoreWriteError` (code
 * `STORE_WRITE_FAILED`); nothing of it was written. A read of the shared store that cannot reach
 * it rejects with `StoreUnavailableError` (code `STORE_UNAVAILABLE`). Both are answered 503.
 *
 * Bytes (a stored response's Arrow body, typed arrays inside a checkpoint) come back as `Buffer`
 * (a Uint8Array) from both implementations; compare contents, not classes.
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

/**
 * The store, as every component sees it. All methods are asynchronous; reads see every write
 * committed before they were called (from any thread or process).
 */
export interface Store {
  /** `lmdb` (embedded) or `postgres` (shared). */
  readonly kind: "lmdb" | "postgres";
  /** Releases connections and handles; further calls are invalid. */
  close(): Promise<void>;
  /**
   * Makes the next reads of this thread see every write committed so far, in any thread or
   * process (LMDB renews its per-thread read snapshot). Absent where reads are always fresh.
   */
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
   * Sets (or with `null` clears) the org's rate limit (requests per minute, >= 1) and live quota
   * (rows per month, >= 0), creating the org if missing. Resolves to the updated record.
   * @throws RangeError for a limit that is not a safe integer in range.
   */
  setOrgLimits(org: string, limits: OrgLimits): Promise<OrgRecord>;
  /** Creates a key for `org` (created if missing) and returns it; only its SHA-256 is stored. */
  createKey(org: string, env: Environment): Promise<string>;
  /** The key's record, or undefined when no stored hash matches. */
  findKey(key: string): Promise<KeyRecord | undefined>;

  // ---- models ----
  /**
   * Stores a new model and its metadata atomically; with `completion`, the same transaction stores
   * the response on the in-flight idempotency record of `completion.scope` (a recovery point).
   * An existing id is overwritten (callers draw fresh ids and check them first). `metadata` may
   * come already encoded ({@link PackedMetadata}): its bytes are then written unchanged.
   * With `limits.maxModelsPerOrg`, the same transaction counts the org's models (both environments)
   * and stores nothing when there are that many already; concurrent creates of one org are
   * serialised for it, so the cap is never passed.
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
   * Applies `patch` to a model that still exists and sets `updated_at`; optionally writes its
   * checkpoint in the same transaction. With `fence` (from {@link claimTraining}) the write
   * happens only while that claim is the model's latest and the model is still `training`: a
   * training that another worker has taken over since, or whose model was stopped and set to
   * another state meanwhile (a stop that reached no worker yet: the shared topology's stop is a
   * message), cannot overwrite newer state. Resolves to the updated record, or undefined when the
   * model is gone, the fence is stale or the model no longer trains. A model never claimed has fence 0.
   */
  updateModel(id: string, patch: ModelPatch, checkpoint?: unknown, fence?: number): Promise<ModelRecord | undefined>;
  /**
   * Claims the right to train model `id` (a fencing token, after Kleppmann, "How to do distributed
   * locking", 2016): resolves to a number greater than every earlier claim of this model, or
   * undefined when the model is gone. Writes with an older token are refused from then on.
   */
  claimTraining(id: string): Promise<number | undefined>;
  getCheckpoint<T>(id: string): Promise<T | undefined>;
  /**
   * Removes the model, its metadata and checkpoint atomically and leaves a tombstone, so its id
   * stays a valid List cursor for `TOMBSTONE_TTL_MS`. Resolves to false when it did not exist.
   * `dropIdempotency`: also removes that key's record in the same transaction.
   */
  deleteModel(id: string, nowMs?: number, dropIdempotency?: IdempotencyScope): Promise<boolean>;
  /**
   * Models of (org, env), newest first, ties by id, starting right after the model
   * `startingAfter` (a tombstoned id still marks its place).
   * @throws CursorNotFoundError when `startingAfter` names no model of (org, env), a string not of
   *   a model id's form included (`isModelId`, answered without a lookup).
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
   * Charges `c.rows` if the month's usage plus them stays within `c.quota`, atomically; live
   * charges go to the ledger in the same transaction; `pending`: also recorded as pending under
   * `c.request_id` until settled or refunded.
   */
  chargeUsage(c: ChargeRequest, opts?: { pending?: boolean }): Promise<ChargeResult>;
  getPendingCharge(requestId: string): Promise<PendingCharge | undefined>;
  /** Makes the pending charge final. Resolves to false when there was none. */
  settleCharge(requestId: string): Promise<boolean>;
  /** Refunds the pending charge of `requestId` once (usage back, ledger refund for live). Resolves to the rows refunded. */
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
  /** Stores the response and settles the request's pending charge together; a response stored earlier wins. */
  completeIdempotent(scope: IdempotencyScope, response: StoredResponse): Promise<StoredResponse | undefined>;
  /** Drops the in-flight record (and refunds the request's pending charge) together. */
  abandonIdempotent(scope: IdempotencyScope, requestId?: string, nowMs?: number): Promise<void>;
  getIdempotency(scope: IdempotencyScope): Promise<IdempotencyRecord | undefined>;

  // ---- recovery and expiry ----
  /**
   * Crash recovery of billing and idempotency: refunds the pending charges and releases the
   * in-flight keys of requests that will never answer: those of this process that are not in
   * `live`, and (shared store) those of processes that stopped renewing their lease (leases run on
   * the database's clock; every front end calls this every few seconds, src/server/app.ts). An
   * in-flight record that holds its response is completed instead.
   */
  reconcile(live: ReadonlySet<string>, nowMs: number): Promise<{ refunded_rows: number; charges: number; released: number }>;
  /** Removes idempotency records older than `ttlMs` and expired tombstones. Resolves to the number removed. */
  sweepExpired(nowMs: number, ttlMs: number): Promise<number>;
}
