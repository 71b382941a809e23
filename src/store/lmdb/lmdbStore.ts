/**
 * The embedded store: one LMDB environment with named sub-databases.
 *
 * Safe to open from the HTTP thread and from every engine worker at once (LMDB serialises
 * writers across threads and processes). Every change that touches more than one key runs in one
 * transaction. It implements {@link Store} (`../store.ts`); the shared implementation is
 * PostgreSQL (`../postgres/pgStore.ts`). Usage, pending charges and the ledger are `usage.ts`,
 * idempotency records `idempotency.ts`.
 *
 * Sub-databases (key -> value):
 * - `orgs`:        org name -> {@link OrgRecord}
 * - `keys`:        SHA-256 hex of an API key -> {@link KeyRecord}
 * - `models`:      model id -> {@link ModelRecord}
 * - `model_index`: [org, env, created_ms, id] -> null   (range scans, newest first)
 * - `metadata`:    model id -> {@link Metadata}
 * - `checkpoints`: model id -> opaque msgpack value written by the engine
 * - `deleted_models`: model id -> {@link DeletedModel} (tombstones: a deleted id stays a valid
 *   List cursor for {@link TOMBSTONE_TTL_MS})
 * - `rate_counters`: limiter key (`org:NAME`, `addr:ADDRESS`) -> {@link RateCounter}
 * - `usage`:       [org, env, month] -> rows charged in that calendar month (UTC, `YYYY-MM`)
 * - `usage_ledger`: [org, month, seq] -> {@link LedgerEntry} (live charges and refunds, seq = 0, 1,
 *   ... in the order written; keyed so one org's month is one range scan)
 * - `idempotency`: [org, env, key] -> {@link IdempotencyRecord}
 * - `pending_charges`: request id -> {@link PendingCharge} (charges whose response has not been
 *   settled: refunded by {@link Store.reconcile} if the process dies first)
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { asBinary, open, type Database, type RootDatabase } from "lmdb";
import type { Metadata } from "../../contract";
import { CursorNotFoundError, ModelLimitError } from "../errors";
import { hashKey, isModelId, newApiKey } from "../ids";
import {
  checkOrgLimits,
  TOMBSTONE_TTL_MS,
  type ChargeRequest,
  type ChargeResult,
  type DeletedModel,
  type Environment,
  type IdempotencyBegin,
  type IdempotencyRecord,
  type IdempotencyScope,
  type KeyRecord,
  type LedgerEntry,
  type ModelPage,
  type ModelRecord,
  type OrgLimits,
  type OrgRecord,
  type PendingCharge,
  type RateCounter,
  type StoredResponse,
} from "../records";
import { PackedMetadata } from "../packedMetadata";
import type { ModelPatch, Store } from "../store";
import { LmdbIdempotency } from "./idempotency";
import { encodedSizeBound, preallocateLockFile, RECORD_BYTES, StoreSpace, treeBytes } from "./space";
import { writeTransaction } from "./transaction";
import { LmdbUsage } from "./usage";

/** lmdb-js hands `mapsAsObjects` to its msgpackr decoder (the option is missing from its typings). */
const MAPS_AS_OBJECTS = { mapsAsObjects: true };

/** The embedded LMDB implementation of {@link Store} (see the module comment). */
export class LmdbStore implements Store {
  readonly kind = "lmdb" as const;
  readonly root: RootDatabase;
  private readonly fences: Database<number, string>;
  private readonly orgs: Database<OrgRecord, string>;
  private readonly keys: Database<KeyRecord, string>;
  private readonly models: Database<ModelRecord, string>;
  private readonly modelIndex: Database<null, (string | number)[]>;
  private readonly metadata: Database<Metadata, string>;
  private readonly checkpoints: Database<unknown, string>;
  private readonly deleted: Database<DeletedModel, string>;
  private readonly rateCounters: Database<RateCounter, string>;
  /** `usage`, `usage_ledger` and `pending_charges` (`usage.ts`). */
  private readonly billing: LmdbUsage;
  /** `idempotency` (`idempotency.ts`). */
  private readonly keysInFlight: LmdbIdempotency;

  /** The data file's allocation ahead of LMDB (`space.ts`): every write transaction is admitted by it. */
  private readonly space: StoreSpace;

  /** Opens (creating if needed) the environment in directory `dir`. */
  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
    preallocateLockFile(dir);
    this.root = open({ path: dir, maxDbs: 16, mapSize: MAP_SIZE });
    this.space = new StoreSpace(this.root, join(dir, "data.mdb"), MAP_SIZE);
    this.orgs = this.root.openDB({ name: "orgs" });
    this.keys = this.root.openDB({ name: "keys" });
    this.models = this.root.openDB({ name: "models" });
    this.modelIndex = this.root.openDB({ name: "model_index" });
    // Plain msgpack maps (`PackedMetadata`) decode as objects, as the records this store writes do.
    this.metadata = this.root.openDB({ name: "metadata", ...MAPS_AS_OBJECTS });
    this.checkpoints = this.root.openDB({ name: "checkpoints" });
    this.deleted = this.root.openDB({ name: "deleted_models" });
    this.rateCounters = this.root.openDB({ name: "rate_counters" });
    this.billing = new LmdbUsage(this.root);
    this.keysInFlight = new LmdbIdempotency(this.root);
    this.fences = this.root.openDB({ name: "train_fences" });
  }

  /**
   * Renews this thread's read snapshot: lmdb-js keeps a read transaction per thread and renews it
   * only on a later event turn or after this thread's own writes, so a record another thread
   * committed just before could otherwise be invisible to the next read.
   */
  refreshReads(): void {
    this.root.resetReadTxn();
  }

  async close(): Promise<void> {
    await this.root.close();
    this.space.close();
  }

  /**
   * Runs `fn` in one write transaction (every write of this class goes through here):
   * {@link writeTransaction}, admitted first by {@link StoreSpace.admit} with room for `large`:
   * the values of unbounded size the transaction stores (everything else it writes is small), or
   * a function run inside the transaction that gives the bytes (for loops over stored records).
   * @throws StoreWriteError when the disk has no room for it (nothing written).
   */
  private async write<T>(fn: () => T, large: readonly unknown[] | (() => number) = []): Promise<T> {
    let release: (() => void) | undefined;
    try {
      return await writeTransaction(this.root, () => {
        let bytes = 0;
        if (typeof large === "function") bytes = large();
        else for (const v of large) bytes += encodedSizeBound(v);
        release = this.space.admit(bytes);
        return fn();
      });
    } finally {
      release?.();
    }
  }

  // ---- orgs and keys -------------------------------------------------------------------------

  /** True when the store holds no API key at all (first start). */
  async isEmpty(): Promise<boolean> {
    return this.keys.getKeysCount() === 0;
  }

  /** Creates `org` if missing. */
  async ensureOrg(org: string): Promise<void> {
    await this.write(() => {
      if (this.orgs.get(org) === undefined) {
        this.orgs.put(org, { name: org, created_at: new Date().toISOString() });
      }
    });
  }

  /** The org's record, or undefined when no such org exists. */
  async getOrg(org: string): Promise<OrgRecord | undefined> {
    return this.orgs.get(org);
  }

  /** Every org, by name. */
  async listOrgs(): Promise<OrgRecord[]> {
    return [...this.orgs.getRange({})].map((e) => e.value);
  }

  /**
   * Sets (or with `null` clears) the org's request rate limit (requests per minute, >= 1) and live
   * quota (rows per month, >= 0), creating the org if missing. Takes effect on the next request,
   * also in a running server. Resolves to the updated record.
   * @throws RangeError for a limit that is not a safe integer in range.
   */
  async setOrgLimits(org: string, limits: OrgLimits): Promise<OrgRecord> {
    checkOrgLimits(limits);
    return this.write(() => {
      const cur: OrgRecord = this.orgs.get(org) ?? { name: org, created_at: new Date().toISOString() };
      const next: OrgRecord = { ...cur };
      for (const k of ["rate_limit", "live_quota"] as const) {
        const v = limits[k];
        if (v === null) delete next[k];
        else if (v !== undefined) next[k] = v;
      }
      this.orgs.put(org, next);
      return next;
    });
  }

  /** Creates a key for `org` (created if missing) and returns it; only its SHA-256 is stored. */
  async createKey(org: string, env: Environment): Promise<string> {
    const key = newApiKey(env);
    await this.write(() => {
      if (this.orgs.get(org) === undefined) {
        this.orgs.put(org, { name: org, created_at: new Date().toISOString() });
      }
      this.keys.put(hashKey(key), {
        org,
        env,
        created_at: new Date().toISOString(),
        prefix: key.slice(0, 12),
      });
    });
    return key;
  }

  /** The key's record, or undefined when no stored hash matches. */
  async findKey(key: string): Promise<KeyRecord | undefined> {
    return this.keys.get(hashKey(key));
  }

  // ---- models --------------------------------------------------------------------------------

  /**
   * Stores a new model and its metadata in one transaction. With `completion`, the same
   * transaction stores the request's response on its in-flight idempotency record (a recovery
   * point), so a crash can never leave a model without the stored response that names it, nor the
   * reverse: a retry of the key either replays this response or (nothing committed) creates the
   * model once. With `limits.maxModelsPerOrg`, the org's models are counted in the same
   * (serialised) write transaction first: at the cap nothing is written ({@link ModelLimitError}).
   */
  async createModel(
    rec: ModelRecord,
    metadata: Metadata | PackedMetadata,
    completion?: { scope: IdempotencyScope; response: StoredResponse },
    limits: { maxModelsPerOrg?: number } = {},
  ): Promise<void> {
    const cap = limits.maxModelsPerOrg;
    const stored = await this.write(() => {
      if (cap !== undefined && this.countModels(rec.org) >= cap) return false;
      this.models.put(rec.id, rec);
      this.modelIndex.put(indexKey(rec), null);
      // Already msgpack: written as it is (the database's decoder reads plain msgpack).
      if (metadata instanceof PackedMetadata) this.metadata.put(rec.id, asBinary(metadata.bytes) as unknown as Metadata);
      else this.metadata.put(rec.id, metadata);
      if (completion !== undefined) {
        const k = [completion.scope.org, completion.scope.env, completion.scope.key];
        const cur = this.keysInFlight.db.get(k);
        // Still in flight (duplicates get 409 until the request answers), with its response as
        // the recovery point: {@link reconcile} completes it if the process dies first.
        if (cur !== undefined && cur.state === "in_flight") this.keysInFlight.db.put(k, { ...cur, response: completion.response });
      }
      return true;
    }, [rec, metadata, completion?.response]);
    if (!stored) throw new ModelLimitError(rec.org, cap!);
  }

  /** The org's models, both environments: entries of `model_index` (a count over its key range). */
  private countModels(org: string): number {
    let n = 0;
    for (const env of ["test", "live"] as const) n += this.modelIndex.getCount({ start: [org, env, -1], end: [org, env, Number.MAX_SAFE_INTEGER] });
    return n;
  }

  async getModel(id: string): Promise<ModelRecord | undefined> {
    return this.models.get(id);
  }

  /** The model if it exists and belongs to (org, env); otherwise undefined (contract rule 5). */
  async getOwnedModel(id: string, org: string, env: Environment): Promise<ModelRecord | undefined> {
    const m = this.models.get(id);
    return m && m.org === org && m.env === env ? m : undefined;
  }

  async getMetadata(id: string): Promise<Metadata | undefined> {
    return this.metadata.get(id);
  }

  /**
   * Applies `patch` to a model that still exists (a deleted model is never brought back by a late
   * progress write) and sets `updated_at`. Optionally writes a checkpoint in the same
   * transaction. Resolves to the updated record, or undefined when the model is gone.
   */
  async updateModel(id: string, patch: ModelPatch, checkpoint?: unknown, fence?: number): Promise<ModelRecord | undefined> {
    return this.write(() => {
      const cur = this.models.get(id);
      if (cur === undefined) return undefined;
      if (fence !== undefined && ((this.fences.get(id) ?? 0) !== fence || cur.status !== "training")) return undefined;
      const next: ModelRecord = { ...cur, ...patch, updated_at: new Date().toISOString() };
      this.models.put(id, next);
      if (checkpoint !== undefined) this.checkpoints.put(id, checkpoint);
      return next;
    }, [checkpoint]);
  }

  /** See {@link Store.claimTraining}: the model's fence, incremented in one write transaction. */
  async claimTraining(id: string): Promise<number | undefined> {
    return this.write(() => {
      if (this.models.get(id) === undefined) return undefined;
      const next = (this.fences.get(id) ?? 0) + 1;
      this.fences.put(id, next);
      return next;
    });
  }

  async getCheckpoint<T>(id: string): Promise<T | undefined> {
    return this.checkpoints.get(id) as T | undefined;
  }

  /**
   * Removes the model, its index entry, metadata and checkpoint in one transaction, and leaves a
   * tombstone (its place in the list) so that its id stays a valid List cursor for
   * {@link TOMBSTONE_TTL_MS}. Resolves to false when the model did not exist. `dropIdempotency`:
   * also removes that key's record in the same transaction (a create refused after its model and
   * response were stored).
   */
  async deleteModel(id: string, nowMs = Date.now(), dropIdempotency?: IdempotencyScope): Promise<boolean> {
    return this.write(() => {
      if (dropIdempotency !== undefined) this.keysInFlight.db.remove([dropIdempotency.org, dropIdempotency.env, dropIdempotency.key]);
      const cur = this.models.get(id);
      if (cur === undefined) return false;
      this.models.remove(id);
      this.modelIndex.remove(indexKey(cur));
      this.metadata.remove(id);
      this.checkpoints.remove(id);
      this.fences.remove(id);
      this.deleted.put(id, { org: cur.org, env: cur.env, created_ms: Date.parse(cur.created_at), deleted_ms: nowMs });
      return true;
    });
  }

  /**
   * Models of (org, env), newest first, ties by id. `startingAfter` is a model id of
   * the caller; the page starts right after it. A cursor deleted since (within
   * {@link TOMBSTONE_TTL_MS}) still marks its place, so paging is stable under concurrent deletes;
   * models created meanwhile are newer and so never shift later pages.
   * @throws CursorNotFoundError when `startingAfter` names no model of (org, env).
   */
  async listModels(org: string, env: Environment, limit: number, startingAfter?: string): Promise<ModelPage> {
    let start: (string | number)[] = [org, env, Number.MAX_SAFE_INTEGER];
    let exclusive = false;
    if (startingAfter !== undefined) {
      // Only an id's form can name a model; anything else is no LMDB key (4,093 characters or more
      // do not fit one) and must not reach the lookups.
      if (!isModelId(startingAfter)) throw new CursorNotFoundError(startingAfter);
      const found = this.models.get(startingAfter);
      const cursor = found && found.org === org && found.env === env ? found : undefined;
      if (cursor !== undefined) {
        start = indexKey(cursor);
      } else {
        const gone = this.deleted.get(startingAfter);
        if (gone === undefined || gone.org !== org || gone.env !== env) throw new CursorNotFoundError(startingAfter);
        start = [org, env, gone.created_ms, startingAfter];
      }
      exclusive = true;
    }
    const items: ModelRecord[] = [];
    let has_more = false;
    for (const { key } of this.modelIndex.getRange({ start, end: [org, env, -1], reverse: true })) {
      if (exclusive && key[3] === start[3] && key[2] === start[2]) continue;
      const m = this.models.get(key[3] as string);
      if (m === undefined) continue;
      if (items.length === limit) {
        has_more = true;
        break;
      }
      items.push(m);
    }
    return { items, has_more };
  }

  /** Every model currently in `status` (used at start-up to resume training). */
  async modelsWithStatus(status: ModelRecord["status"]): Promise<ModelRecord[]> {
    const out: ModelRecord[] = [];
    for (const { value } of this.models.getRange({})) if (value.status === status) out.push(value);
    return out.sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at) || (a.id < b.id ? -1 : 1));
  }

  // ---- rate counters -------------------------------------------------------------------------

  /** Every stored rate counter, by limiter key (loaded once when a server starts). */
  async rateCounterEntries(): Promise<[string, RateCounter][]> {
    return [...this.rateCounters.getRange({})].map(({ key, value }) => [key, value]);
  }

  /** Writes one rate counter; resolves once committed (so it survives a crash of this process). */
  async putRateCounter(key: string, c: RateCounter): Promise<void> {
    await this.write(() => this.rateCounters.put(key, { window: c.window, prev: c.prev, curr: c.curr }));
  }

  /** Removes counters whose `window` is before `minWindow` (they no longer affect any estimate). */
  async sweepRateCounters(minWindow: number): Promise<number> {
    return this.write(() => {
      let n = 0;
      for (const { key, value } of this.rateCounters.getRange({})) {
        if (value.window < minWindow) {
          this.rateCounters.remove(key);
          n++;
        }
      }
      return n;
    });
  }

  // ---- usage and quota -----------------------------------------------------------------------

  /** Rows charged to (org, env) in `month` (`YYYY-MM`, UTC); 0 when nothing was charged. */
  async getUsage(org: string, env: Environment, month: string): Promise<number> {
    return this.billing.usage.get([org, env, month]) ?? 0;
  }

  /**
   * Charges `rows` to (org, env, month) in one transaction if the month's usage plus `rows` stays
   * within `quota`; otherwise charges nothing. Live charges are also written to the ledger in the
   * same transaction. Atomic across threads and processes (LMDB serialises write transactions).
   *
   * `opts.pending`: the charge is also recorded as pending under `c.request_id`, in the same
   * transaction, until {@link settleCharge} (the rows were delivered or stored for replay) or
   * {@link refundPending}; {@link reconcile} refunds pending charges left by a dead process.
   * Without it the charge is final at once (seeding usage, tools).
   */
  async chargeUsage(c: ChargeRequest, opts: { pending?: boolean } = {}): Promise<ChargeResult> {
    return this.write(() => this.billing.charge(c, opts.pending === true));
  }

  /** The pending charge of `requestId`, if any (see {@link PendingCharge}). */
  async getPendingCharge(requestId: string): Promise<PendingCharge | undefined> {
    return this.billing.pending.get(requestId);
  }

  /** Makes the pending charge of `requestId` final (its rows count). Resolves to false when there was none. */
  async settleCharge(requestId: string): Promise<boolean> {
    return this.write(() => this.billing.settle(requestId));
  }

  /**
   * Refunds the pending charge of `requestId` (usage back, a ledger refund for live) and forgets
   * it, in one transaction; a second call finds nothing and changes nothing. Resolves to the rows
   * refunded (0 when no charge was pending).
   */
  async refundPending(requestId: string, nowMs: number): Promise<number> {
    return this.write(() => this.billing.refundPending(requestId, nowMs));
  }

  /** Gives back a charge made by {@link chargeUsage} (same fields), with a ledger entry for live. Resolves to the month's usage after it. */
  async refundUsage(c: ChargeRequest): Promise<number> {
    return this.write(() => this.billing.refund(c));
  }

  /** Usage rows of `month`: one per (org, env) that was charged, by org then env. */
  async usageOfMonth(month: string): Promise<{ org: string; env: Environment; rows: number }[]> {
    return this.billing.ofMonth(month);
  }

  /** Ledger entries of `org` in `month`, oldest first (one range scan). */
  async ledgerEntries(org: string, month: string): Promise<LedgerEntry[]> {
    return this.billing.ledgerOf(org, month);
  }

  // ---- idempotency ---------------------------------------------------------------------------

  /**
   * Starts a request under an idempotency key, atomically (one write transaction, so concurrent
   * requests, even from other threads or processes, see each other's records):
   * - no record, or one older than `ttlMs`: writes an in-flight record -> `started`;
   * - a record whose fingerprint differs -> `mismatch`;
   * - an in-flight record -> `in_flight`; a completed one -> `replay` with its response.
   */
  async beginIdempotent(
    scope: IdempotencyScope,
    fingerprint: string,
    nowMs: number,
    ttlMs: number,
    requestId?: string,
  ): Promise<IdempotencyBegin> {
    return this.write(() => this.keysInFlight.begin(scope, fingerprint, nowMs, ttlMs, requestId));
  }

  /**
   * Stores the response of the request that started `scope` and settles that request's pending
   * charge (`response.request_id`), in one transaction: the stored response and the charge exist
   * together or not at all. A response already on the record (stored by the request's own
   * transaction as a recovery point, see {@link createModel}) is kept: that one is completed and
   * sent. Resolves to the response now stored
   * (the one to send), or undefined when the record is gone.
   */
  async completeIdempotent(scope: IdempotencyScope, response: StoredResponse): Promise<StoredResponse | undefined> {
    return this.write(() => {
      this.billing.settle(response.request_id);
      return this.keysInFlight.complete(scope, response);
    }, [response]);
  }

  /**
   * Drops the in-flight record of `scope` (its response is not stored, so a retry executes again)
   * and, when `requestId` is given, refunds that request's pending charge, in one transaction.
   */
  async abandonIdempotent(scope: IdempotencyScope, requestId?: string, nowMs = Date.now()): Promise<void> {
    await this.write(() => {
      if (requestId !== undefined) this.billing.refundPending(requestId, nowMs);
      this.keysInFlight.abandon(scope);
    });
  }

  /** The record of `scope`, if any (expired or not). */
  async getIdempotency(scope: IdempotencyScope): Promise<IdempotencyRecord | undefined> {
    return this.keysInFlight.db.get([scope.org, scope.env, scope.key]);
  }

  /**
   * Crash recovery of billing and idempotency, in one transaction: every pending charge and every
   * in-flight idempotency record whose request is not in `live` (the requests this process is
   * still working on) belongs to a request that will never answer, so its charge is refunded and
   * its key released (a retry executes again; the first execution delivered nothing, since a
   * response is only sent after its charge is settled). An in-flight record that already holds its
   * response (a recovery point: Create Model stores it with the model) is completed instead, so its
   * retry replays. At start-up `live` is empty. Records of completed requests (`done`) are never
   * touched: their retries replay.
   * Resolves to the rows refunded, the pending charges refunded and the keys released.
   */
  async reconcile(live: ReadonlySet<string>, nowMs: number): Promise<{ refunded_rows: number; charges: number; released: number }> {
    return this.write(() => {
      let rows = 0;
      let charges = 0;
      for (const { key } of [...this.billing.pending.getRange({})]) {
        if (live.has(key)) continue;
        rows += this.billing.refundPending(key, nowMs);
        charges++;
      }
      return { refunded_rows: rows, charges, released: this.keysInFlight.release(live) };
    }, () => treeBytes([this.billing.pending, this.billing.ledger, this.billing.usage, this.keysInFlight.db]) + RECORD_BYTES * this.billing.pending.getCount());
  }

  /**
   * Removes idempotency records older than `ttlMs` and tombstones older than
   * {@link TOMBSTONE_TTL_MS} at `nowMs`. Resolves to the number removed.
   */
  async sweepExpired(nowMs: number, ttlMs: number): Promise<number> {
    return this.write(() => {
      let n = this.keysInFlight.sweep(nowMs, ttlMs);
      for (const { key, value } of this.deleted.getRange({})) {
        if (value.deleted_ms + TOMBSTONE_TTL_MS <= nowMs) {
          this.deleted.remove(key);
          n++;
        }
      }
      return n;
    }, () => treeBytes([this.keysInFlight.db, this.deleted]));
  }
}

/**
 * LMDB's map size: the most the data file can grow to. The file itself grows only as the store
 * needs (`space.ts`).
 */
const MAP_SIZE = 8 * 1024 ** 3;

function indexKey(m: ModelRecord): (string | number)[] {
  return [m.org, m.env, Date.parse(m.created_at), m.id];
}

