/**
 * The embedded {@link Store}: one LMDB environment with named sub-databases, safe to open from the
 * HTTP thread and every engine worker at once (LMDB serialises writers across threads and
 * processes); every multi-key change is one transaction. Billing is `usage.ts`, idempotency
 * records `idempotency.ts`. Sub-databases (key -> value):
 * - `orgs` org -> {@link OrgRecord}; `keys` SHA-256 hex of an API key -> {@link KeyRecord}
 * - `models` id -> {@link ModelRecord}; `model_index` [org, env, created_ms, id] -> null
 * - `metadata` id -> {@link Metadata}; `checkpoints` id -> opaque msgpack from the engine
 * - `deleted_models` id -> {@link DeletedModel} (a List cursor for {@link TOMBSTONE_TTL_MS})
 * - `rate_counters` limiter key (`org:NAME`, `addr:ADDRESS`) -> {@link RateCounter}
 * - `usage` [org, env, `YYYY-MM` UTC] -> rows
 * - `usage_ledger` [org, month, seq] -> {@link LedgerEntry}, one org's month one range scan
 * - `idempotency` [org, env, key] -> {@link IdempotencyRecord}
 * - `pending_charges` request id -> {@link PendingCharge} (refunded if the process dies first)
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

/** lmdb-js passes `mapsAsObjects` to its msgpackr decoder (missing from its typings). */
const MAPS_AS_OBJECTS = { mapsAsObjects: true };

/** The embedded LMDB implementation of {@link Store}. */
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
  private readonly billing: LmdbUsage;
  private readonly keysInFlight: LmdbIdempotency;

  /** Data-file allocation ahead of LMDB (`space.ts`); admits every write transaction. */
  private readonly space: StoreSpace;

  /** Opens (creating if needed) the environment in directory `dir`. */
  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
    preallocateLockFile(dir);
    // A directory whatever its name: lmdb-js reads a name with a dot (`synthd.data`) as one file.
    this.root = open({ path: dir, noSubdir: false, maxDbs: 16, mapSize: MAP_SIZE });
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
   * lmdb-js keeps one read transaction per thread, renewed only on a later event turn or after
   * this thread's own writes: without this, another thread's fresh commit could be invisible.
   */
  refreshReads(): void {
    this.root.resetReadTxn();
  }

  async close(): Promise<void> {
    await this.root.close();
    this.space.close();
  }

  /**
   * Runs `fn` in one write transaction, admitted first by {@link StoreSpace.admit} for `large`:
   * the unbounded values it stores, or a function giving their bytes. Every write goes here.
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

  async isEmpty(): Promise<boolean> {
    return this.keys.getKeysCount() === 0;
  }

  async ensureOrg(org: string): Promise<void> {
    await this.write(() => {
      if (this.orgs.get(org) === undefined) {
        this.orgs.put(org, { name: org, created_at: new Date().toISOString() });
      }
    });
  }

  async getOrg(org: string): Promise<OrgRecord | undefined> {
    return this.orgs.get(org);
  }

  async listOrgs(): Promise<OrgRecord[]> {
    return [...this.orgs.getRange({})].map((e) => e.value);
  }

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

  async findKey(key: string): Promise<KeyRecord | undefined> {
    return this.keys.get(hashKey(key));
  }

  /**
   * The model, its metadata and `completion`'s recovery point commit in one transaction, so a
   * crash never leaves a model without the stored response naming it, nor the reverse. The
   * per-org cap is counted inside the same serialised write transaction.
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
      if (metadata instanceof PackedMetadata) this.metadata.put(rec.id, asBinary(metadata.bytes) as unknown as Metadata);
      else this.metadata.put(rec.id, metadata);
      if (completion !== undefined) {
        const k = [completion.scope.org, completion.scope.env, completion.scope.key];
        const cur = this.keysInFlight.db.get(k);
        // Still in flight (duplicates get 409); reconcile completes it if the process dies first.
        if (cur !== undefined && cur.state === "in_flight") this.keysInFlight.db.put(k, { ...cur, response: completion.response });
      }
      return true;
    }, [rec, metadata, completion?.response]);
    if (!stored) throw new ModelLimitError(rec.org, cap!);
  }

  private countModels(org: string): number {
    let n = 0;
    for (const env of ["test", "live"] as const) n += this.modelIndex.getCount({ start: [org, env, -1], end: [org, env, Number.MAX_SAFE_INTEGER] });
    return n;
  }

  async getModel(id: string): Promise<ModelRecord | undefined> {
    return this.models.get(id);
  }

  async getOwnedModel(id: string, org: string, env: Environment): Promise<ModelRecord | undefined> {
    const m = this.models.get(id);
    return m && m.org === org && m.env === env ? m : undefined;
  }

  async getMetadata(id: string): Promise<Metadata | undefined> {
    return this.metadata.get(id);
  }

  /** A deleted model is never brought back by a late progress write. */
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

  /** Creations are newer than any cursor and so never shift later pages. */
  async listModels(org: string, env: Environment, limit: number, startingAfter?: string): Promise<ModelPage> {
    let start: (string | number)[] = [org, env, Number.MAX_SAFE_INTEGER];
    let exclusive = false;
    if (startingAfter !== undefined) {
      // Only an id's form can name a model; anything else may not fit an LMDB key (4,093 chars).
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

  async modelsWithStatus(status: ModelRecord["status"]): Promise<ModelRecord[]> {
    const out: ModelRecord[] = [];
    for (const { value } of this.models.getRange({})) if (value.status === status) out.push(value);
    return out.sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at) || (a.id < b.id ? -1 : 1));
  }

  async rateCounterEntries(): Promise<[string, RateCounter][]> {
    return [...this.rateCounters.getRange({})].map(({ key, value }) => [key, value]);
  }

  async putRateCounter(key: string, c: RateCounter): Promise<void> {
    await this.write(() => this.rateCounters.put(key, { window: c.window, prev: c.prev, curr: c.curr }));
  }

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

  async getUsage(org: string, env: Environment, month: string): Promise<number> {
    return this.billing.usage.get([org, env, month]) ?? 0;
  }

  async chargeUsage(c: ChargeRequest, opts: { pending?: boolean } = {}): Promise<ChargeResult> {
    return this.write(() => this.billing.charge(c, opts.pending === true));
  }

  async getPendingCharge(requestId: string): Promise<PendingCharge | undefined> {
    return this.billing.pending.get(requestId);
  }

  async settleCharge(requestId: string): Promise<boolean> {
    return this.write(() => this.billing.settle(requestId));
  }

  async refundPending(requestId: string, nowMs: number): Promise<number> {
    return this.write(() => this.billing.refundPending(requestId, nowMs));
  }

  async refundUsage(c: ChargeRequest): Promise<number> {
    return this.write(() => this.billing.refund(c));
  }

  async usageOfMonth(month: string): Promise<{ org: string; env: Environment; rows: number }[]> {
    return this.billing.ofMonth(month);
  }

  async ledgerEntries(org: string, month: string): Promise<LedgerEntry[]> {
    return this.billing.ledgerOf(org, month);
  }

  async beginIdempotent(
    scope: IdempotencyScope,
    fingerprint: string,
    nowMs: number,
    ttlMs: number,
    requestId?: string,
  ): Promise<IdempotencyBegin> {
    return this.write(() => this.keysInFlight.begin(scope, fingerprint, nowMs, ttlMs, requestId));
  }

  async completeIdempotent(scope: IdempotencyScope, response: StoredResponse): Promise<StoredResponse | undefined> {
    return this.write(() => {
      this.billing.settle(response.request_id);
      return this.keysInFlight.complete(scope, response);
    }, [response]);
  }

  async abandonIdempotent(scope: IdempotencyScope, requestId?: string, nowMs = Date.now()): Promise<void> {
    await this.write(() => {
      if (requestId !== undefined) this.billing.refundPending(requestId, nowMs);
      this.keysInFlight.abandon(scope);
    });
  }

  async getIdempotency(scope: IdempotencyScope): Promise<IdempotencyRecord | undefined> {
    return this.keysInFlight.db.get([scope.org, scope.env, scope.key]);
  }

  /**
   * A released key's first execution delivered nothing (responses go out only after their charge
   * settles), so refunding it is safe; `done` records are never touched. `live` is empty at start.
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

/** LMDB's map size: the most the data file can grow to; it grows only as needed (`space.ts`). */
const MAP_SIZE = 8 * 1024 ** 3;

function indexKey(m: ModelRecord): (string | number)[] {
  return [m.org, m.env, Date.parse(m.created_at), m.id];
}

