/**
 * The shared {@link Store} on PostgreSQL, for several front ends and workers on several machines:
 * the LMDB store's semantics, with one conditional statement or one row-locked transaction where
 * LMDB relies on its single serialised writer:
 * - quota: one `INSERT ... ON CONFLICT DO UPDATE ... WHERE rows + n <= quota` per charge;
 * - idempotency: a primary key per (org, env, key); a begin is one upsert that only takes over an
 *   expired record (Brandur Leach, "Implementing Stripe-like Idempotency Keys in Postgres", 2017);
 * - training: a fencing token per model (`train_fence`; Kleppmann, "How to do distributed
 *   locking", 2016);
 * - crash recovery: pending charges and in-flight keys carry their `owner`; each instance renews a
 *   lease in `instances` (database clock); {@link PgStore.reconcile} takes its own finished
 *   requests' records and those of expired leases under `FOR UPDATE SKIP LOCKED`, so concurrent
 *   reconcilers refund each charge once.
 * Statements: usage `usage.ts`, idempotency and recovery `idempotency.ts`, row mapping `rows.ts`;
 * schema `migrations.ts`. A write that fails rejects with {@link StoreWriteError} (rolled back;
 * outcome unknown if the connection broke during COMMIT); an unreachable read with
 * {@link StoreUnavailableError}.
 */
import { randomBytes } from "node:crypto";
import { Pool, type PoolClient, type QueryResultRow } from "pg";
import type { Logger } from "pino";
import type { Metadata } from "../../contract";
import { CursorNotFoundError, ModelLimitError, StoreUnavailableError, StoreWriteError } from "../errors";
import { hashKey, isModelId, newApiKey } from "../ids";
import {
  checkOrgLimits,
  TOMBSTONE_TTL_MS,
  type ChargeRequest,
  type ChargeResult,
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
import { migrate } from "./migrations";
import { abandonIn, beginIn, completeIn, DB_NOW_MS, IDEMPOTENCY_COLUMNS, idempotencyRecord, reconcileIn, responseParams, responseSet, type IdempotencyRow } from "./idempotency";
import { chargeIn, chargeOf, PENDING_COLUMNS, refundIn, refundPendingIn, type PendingRow } from "./usage";
import { orgRecord, pack, PG_TYPES, unpack, type ModelRow, type OrgRow } from "./rows";

/**
 * First key of `pg_advisory_xact_lock(int4, int4)` (second: `hashtext(org)`) serialising one org's
 * capped creates: "mdls" in ASCII; apart from the migration lock's one-key space.
 */
const MODELS_OF_ORG_LOCK = 0x6d646c73;

/** Options of {@link PgStore.open}. */
export interface PgStoreOptions {
  /** Name in `instances` and `owner` of its records; default `inst_` + 16 random hex. */
  instanceId?: string;
  /** Lease, ms (default 10 000; renewed every third): how long a crashed owner's records wait. */
  leaseMs?: number;
  /**
   * Default true: hold a renewed lease. false (workers, admin commands, which take no pending
   * charges or keys): no lease, no timer; any such record they write counts as abandoned.
   */
  heartbeat?: boolean;
  /** Where failed lease renewals and dropped idle connections are reported. */
  logger?: Pick<Logger, "warn">;
}

/** {@link Store} on PostgreSQL: each method is one statement or transaction on a pooled client. */
export class PgStore implements Store {
  readonly kind = "postgres" as const;
  private heartbeat: NodeJS.Timeout | undefined;
  private renewing: Promise<void> = Promise.resolve();

  private constructor(
    private readonly pool: Pool,
    /** The `owner` of this instance's pending charges and in-flight keys. */
    readonly instanceId: string,
    readonly leaseMs: number,
    private readonly logger?: Pick<Logger, "warn">,
  ) {}

  /**
   * Connects to `url` (`postgres://user@host:port/db`), applies missing migrations and takes the
   * lease (renewed on an unref'd timer). Rejects with the driver's error; nothing is left open.
   */
  static async open(url: string, opts: PgStoreOptions = {}): Promise<PgStore> {
    const leaseMs = opts.leaseMs ?? 10_000;
    if (!(Number.isSafeInteger(leaseMs) && leaseMs >= 3)) throw new RangeError(`leaseMs must be an integer >= 3; got ${leaseMs}.`);
    const pool = new Pool({ connectionString: url, types: PG_TYPES });
    // An idle connection the server drops emits here; the pool discards it and opens another.
    pool.on("error", (err) => opts.logger?.warn({ err }, "PostgreSQL store: idle connection lost"));
    const store = new PgStore(pool, opts.instanceId ?? `inst_${randomBytes(8).toString("hex")}`, leaseMs, opts.logger);
    try {
      await migrate(pool);
      if (opts.heartbeat !== false) await store.renewLease();
    } catch (err) {
      await pool.end().catch(() => undefined);
      throw err;
    }
    if (opts.heartbeat === false) return store;
    store.heartbeat = setInterval(() => {
      store.renewing = store.renewLease().catch((err: unknown) => store.logger?.warn({ err, instance: store.instanceId }, "PostgreSQL store: lease renewal failed"));
    }, Math.floor(leaseMs / 3));
    store.heartbeat.unref();
    return store;
  }

  private async renewLease(): Promise<void> {
    await this.pool.query(
      `INSERT INTO instances (id, lease_until_ms) VALUES ($1, ${DB_NOW_MS} + $2)
       ON CONFLICT (id) DO UPDATE SET lease_until_ms = EXCLUDED.lease_until_ms`,
      [this.instanceId, this.leaseMs],
    );
  }

  /** Stops the heartbeat, drops this lease (records reclaimable at once) and closes the pool. */
  async close(): Promise<void> {
    if (this.heartbeat !== undefined) {
      clearInterval(this.heartbeat);
      this.heartbeat = undefined;
      await this.renewing;
      await this.pool.query("DELETE FROM instances WHERE id = $1", [this.instanceId]).catch(() => undefined);
    }
    await this.pool.end();
  }

  /**
   * One read. Not reaching the database (FATAL/PANIC, SQLSTATE classes 08, 53, 57, or no severity)
   * becomes {@link StoreUnavailableError}; statement errors stay as they are.
   */
  private async rows<R extends QueryResultRow>(sql: string, params: unknown[] = []): Promise<R[]> {
    try {
      return (await this.pool.query<R>(sql, params)).rows;
    } catch (err) {
      const e = err as { severity?: unknown; code?: unknown };
      const sqlstate = typeof e.code === "string" ? e.code : "";
      const fatal = e.severity === "FATAL" || e.severity === "PANIC"; // the session ended (refused, terminated)
      if (e.severity === undefined || fatal || /^(08|53|57)/.test(sqlstate)) throw new StoreUnavailableError(err);
      throw err;
    }
  }

  /** One write statement outside a transaction; errors become {@link StoreWriteError}. */
  private async exec<R extends QueryResultRow>(sql: string, params: unknown[] = []): Promise<{ rows: R[]; rowCount: number }> {
    try {
      const r = await this.pool.query<R>(sql, params);
      return { rows: r.rows, rowCount: r.rowCount ?? 0 };
    } catch (err) {
      throw new StoreWriteError(err);
    }
  }

  /**
   * Runs `fn` in one READ COMMITTED transaction; any failure rolls back and rejects with
   * {@link StoreWriteError}; a failed connection is discarded, not returned to the pool.
   */
  private async write<T>(fn: (c: PoolClient) => Promise<T>): Promise<T> {
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw new StoreWriteError(err);
    }
    // A checked-out client also emits a dropped connection as 'error'; unheard, it is uncaught.
    let broken = false;
    const onError = (): void => {
      broken = true;
    };
    client.on("error", onError);
    try {
      await client.query("BEGIN");
      const out = await fn(client);
      await client.query("COMMIT");
      return out;
    } catch (err) {
      await client.query("ROLLBACK").catch(() => {
        broken = true;
      });
      throw new StoreWriteError(err);
    } finally {
      client.removeListener("error", onError);
      client.release(broken);
    }
  }

  async isEmpty(): Promise<boolean> {
    return (await this.rows<{ empty: boolean }>("SELECT NOT EXISTS (SELECT 1 FROM api_keys) AS empty"))[0].empty;
  }

  async ensureOrg(org: string): Promise<void> {
    await this.exec("INSERT INTO orgs (name, created_at) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING", [org, new Date().toISOString()]);
  }

  async getOrg(org: string): Promise<OrgRecord | undefined> {
    const [r] = await this.rows<OrgRow>("SELECT name, created_at, rate_limit, live_quota FROM orgs WHERE name = $1", [org]);
    return r === undefined ? undefined : orgRecord(r);
  }

  async listOrgs(): Promise<OrgRecord[]> {
    return (await this.rows<OrgRow>("SELECT name, created_at, rate_limit, live_quota FROM orgs ORDER BY name")).map(orgRecord);
  }

  async setOrgLimits(org: string, limits: OrgLimits): Promise<OrgRecord> {
    checkOrgLimits(limits);
    const { rows } = await this.exec<OrgRow>(
      `INSERT INTO orgs (name, created_at, rate_limit, live_quota) VALUES ($1, $2, $3, $4)
       ON CONFLICT (name) DO UPDATE SET
         rate_limit = CASE WHEN $5 THEN EXCLUDED.rate_limit ELSE orgs.rate_limit END,
         live_quota = CASE WHEN $6 THEN EXCLUDED.live_quota ELSE orgs.live_quota END
       RETURNING name, created_at, rate_limit, live_quota`,
      [org, new Date().toISOString(), limits.rate_limit ?? null, limits.live_quota ?? null, limits.rate_limit !== undefined, limits.live_quota !== undefined],
    );
    return orgRecord(rows[0]);
  }

  async createKey(org: string, env: Environment): Promise<string> {
    const key = newApiKey(env);
    const now = new Date().toISOString();
    await this.exec(
      `WITH o AS (INSERT INTO orgs (name, created_at) VALUES ($2, $4) ON CONFLICT (name) DO NOTHING)
       INSERT INTO api_keys (hash, org, env, created_at, prefix) VALUES ($1, $2, $3, $4, $5)`,
      [hashKey(key), org, env, now, key.slice(0, 12)],
    );
    return key;
  }

  async findKey(key: string): Promise<KeyRecord | undefined> {
    const [r] = await this.rows<KeyRecord>("SELECT org, env, created_at, prefix FROM api_keys WHERE hash = $1", [hashKey(key)]);
    return r;
  }

  /**
   * A second create with the same id replaces the record (its fence is kept). The cap is counted
   * under the org's advisory lock ({@link MODELS_OF_ORG_LOCK}): serialised on every front end.
   */
  async createModel(
    rec: ModelRecord,
    metadata: Metadata | PackedMetadata,
    completion?: { scope: IdempotencyScope; response: StoredResponse },
    limits: { maxModelsPerOrg?: number } = {},
  ): Promise<void> {
    const meta = metadata instanceof PackedMetadata ? Buffer.from(metadata.bytes.buffer, metadata.bytes.byteOffset, metadata.bytes.byteLength) : pack(metadata);
    const cap = limits.maxModelsPerOrg;
    const stored = await this.write(async (c) => {
      if (cap !== undefined) {
        await c.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [MODELS_OF_ORG_LOCK, rec.org]);
        const { rows } = await c.query<{ n: number }>("SELECT count(*)::int AS n FROM models WHERE org = $1", [rec.org]);
        if (rows[0].n >= cap) return false;
      }
      await c.query(
        `INSERT INTO models (id, org, env, created_ms, status, record, metadata) VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (id) DO UPDATE SET org = EXCLUDED.org, env = EXCLUDED.env, created_ms = EXCLUDED.created_ms,
           status = EXCLUDED.status, record = EXCLUDED.record, metadata = EXCLUDED.metadata`,
        [rec.id, rec.org, rec.env, Date.parse(rec.created_at), rec.status, JSON.stringify(rec), meta],
      );
      if (completion !== undefined) {
        // The recovery point: still in flight (duplicates get 409), now holding its response.
        const s = completion.scope;
        await c.query(`UPDATE idempotency SET ${responseSet(4)} WHERE org = $1 AND env = $2 AND key = $3 AND state = 'in_flight'`, [
          s.org, s.env, s.key, ...responseParams(completion.response),
        ]);
      }
      return true;
    });
    if (!stored) throw new ModelLimitError(rec.org, cap!);
  }

  async getModel(id: string): Promise<ModelRecord | undefined> {
    return (await this.rows<ModelRow>("SELECT record FROM models WHERE id = $1", [id]))[0]?.record;
  }

  async getOwnedModel(id: string, org: string, env: Environment): Promise<ModelRecord | undefined> {
    return (await this.rows<ModelRow>("SELECT record FROM models WHERE id = $1 AND org = $2 AND env = $3", [id, org, env]))[0]?.record;
  }

  async getMetadata(id: string): Promise<Metadata | undefined> {
    const [r] = await this.rows<{ metadata: Buffer }>("SELECT metadata FROM models WHERE id = $1", [id]);
    return r === undefined ? undefined : unpack<Metadata>(r.metadata);
  }

  async updateModel(id: string, patch: ModelPatch, checkpoint?: unknown, fence?: number): Promise<ModelRecord | undefined> {
    const ckpt = checkpoint === undefined ? undefined : pack(checkpoint);
    return this.write(async (c) => {
      const [cur] = (
        fence === undefined
          ? await c.query<ModelRow>("SELECT record FROM models WHERE id = $1 FOR UPDATE", [id])
          : await c.query<ModelRow>("SELECT record FROM models WHERE id = $1 AND train_fence = $2 AND status = 'training' FOR UPDATE", [id, fence])
      ).rows;
      if (cur === undefined) return undefined;
      const next: ModelRecord = { ...cur.record, ...patch, updated_at: new Date().toISOString() };
      if (ckpt === undefined) {
        await c.query("UPDATE models SET record = $2, status = $3 WHERE id = $1", [id, JSON.stringify(next), next.status]);
      } else {
        await c.query("UPDATE models SET record = $2, status = $3, checkpoint = $4 WHERE id = $1", [id, JSON.stringify(next), next.status, ckpt]);
      }
      return next;
    });
  }

  async claimTraining(id: string): Promise<number | undefined> {
    const { rows } = await this.exec<{ train_fence: number }>("UPDATE models SET train_fence = train_fence + 1 WHERE id = $1 RETURNING train_fence", [id]);
    return rows[0]?.train_fence;
  }

  async getCheckpoint<T>(id: string): Promise<T | undefined> {
    const [r] = await this.rows<{ checkpoint: Buffer | null }>("SELECT checkpoint FROM models WHERE id = $1", [id]);
    return r?.checkpoint == null ? undefined : unpack<T>(r.checkpoint);
  }

  async deleteModel(id: string, nowMs = Date.now(), dropIdempotency?: IdempotencyScope): Promise<boolean> {
    return this.write(async (c) => {
      if (dropIdempotency !== undefined) {
        await c.query("DELETE FROM idempotency WHERE org = $1 AND env = $2 AND key = $3", [dropIdempotency.org, dropIdempotency.env, dropIdempotency.key]);
      }
      const { rowCount } = await c.query(
        `WITH gone AS (DELETE FROM models WHERE id = $1 RETURNING id, org, env, created_ms)
         INSERT INTO deleted_models (id, org, env, created_ms, deleted_ms) SELECT id, org, env, created_ms, $2 FROM gone
         ON CONFLICT (id) DO UPDATE SET org = EXCLUDED.org, env = EXCLUDED.env, created_ms = EXCLUDED.created_ms, deleted_ms = EXCLUDED.deleted_ms`,
        [id, nowMs],
      );
      return (rowCount ?? 0) > 0;
    });
  }

  async listModels(org: string, env: Environment, limit: number, startingAfter?: string): Promise<ModelPage> {
    let rows: ModelRow[];
    if (startingAfter === undefined) {
      rows = await this.rows<ModelRow>(
        "SELECT record FROM models WHERE org = $1 AND env = $2 ORDER BY created_ms DESC, id DESC LIMIT $3",
        [org, env, limit + 1],
      );
    } else {
      // Only an id's form can name a model: no query for anything else.
      if (!isModelId(startingAfter)) throw new CursorNotFoundError(startingAfter);
      // The cursor's place: a model of (org, env), or the tombstone of one.
      const [place] = await this.rows<{ created_ms: number }>(
        `SELECT created_ms FROM models WHERE id = $1 AND org = $2 AND env = $3
         UNION ALL SELECT created_ms FROM deleted_models WHERE id = $1 AND org = $2 AND env = $3 LIMIT 1`,
        [startingAfter, org, env],
      );
      if (place === undefined) throw new CursorNotFoundError(startingAfter);
      rows = await this.rows<ModelRow>(
        `SELECT record FROM models WHERE org = $1 AND env = $2 AND (created_ms, id) < ($3, $4)
         ORDER BY created_ms DESC, id DESC LIMIT $5`,
        [org, env, place.created_ms, startingAfter, limit + 1],
      );
    }
    return { items: rows.slice(0, limit).map((r) => r.record), has_more: rows.length > limit };
  }

  async modelsWithStatus(status: ModelRecord["status"]): Promise<ModelRecord[]> {
    return (await this.rows<ModelRow>("SELECT record FROM models WHERE status = $1 ORDER BY created_ms, id", [status])).map((r) => r.record);
  }

  async rateCounterEntries(): Promise<[string, RateCounter][]> {
    const rows = await this.rows<{ key: string; win: number; prev: number; curr: number }>("SELECT key, win, prev, curr FROM rate_counters ORDER BY key");
    return rows.map((r) => [r.key, { window: r.win, prev: r.prev, curr: r.curr }]);
  }

  async putRateCounter(key: string, c: RateCounter): Promise<void> {
    await this.exec(
      `INSERT INTO rate_counters (key, win, prev, curr) VALUES ($1, $2, $3, $4)
       ON CONFLICT (key) DO UPDATE SET win = EXCLUDED.win, prev = EXCLUDED.prev, curr = EXCLUDED.curr`,
      [key, c.window, c.prev, c.curr],
    );
  }

  async sweepRateCounters(minWindow: number): Promise<number> {
    return (await this.exec("DELETE FROM rate_counters WHERE win < $1", [minWindow])).rowCount;
  }

  async getUsage(org: string, env: Environment, month: string): Promise<number> {
    return (await this.rows<{ rows: number }>("SELECT rows FROM usage WHERE org = $1 AND env = $2 AND month = $3", [org, env, month]))[0]?.rows ?? 0;
  }

  async chargeUsage(c: ChargeRequest, opts: { pending?: boolean } = {}): Promise<ChargeResult> {
    return this.write((client) => chargeIn(client, c, opts.pending ? this.instanceId : undefined));
  }

  async getPendingCharge(requestId: string): Promise<PendingCharge | undefined> {
    const [r] = await this.rows<PendingRow>(`SELECT ${PENDING_COLUMNS} FROM pending_charges WHERE request_id = $1`, [requestId]);
    return r === undefined ? undefined : { charge: chargeOf(r) };
  }

  async settleCharge(requestId: string): Promise<boolean> {
    return (await this.exec("DELETE FROM pending_charges WHERE request_id = $1", [requestId])).rowCount > 0;
  }

  /** The DELETE ... RETURNING takes the pending row once: a concurrent refund finds nothing. */
  async refundPending(requestId: string, nowMs: number): Promise<number> {
    return this.write((c) => refundPendingIn(c, requestId, nowMs));
  }

  async refundUsage(c: ChargeRequest): Promise<number> {
    return this.write((client) => refundIn(client, c));
  }

  async usageOfMonth(month: string): Promise<{ org: string; env: Environment; rows: number }[]> {
    return this.rows("SELECT org, env, rows FROM usage WHERE month = $1 ORDER BY org, env", [month]);
  }

  async ledgerEntries(org: string, month: string): Promise<LedgerEntry[]> {
    const rows = await this.rows<Omit<LedgerEntry, "at"> & { at_ms: number }>(
      "SELECT org, env, month, kind, rows, model_id, request_id, at_ms FROM usage_ledger WHERE org = $1 AND month = $2 ORDER BY seq",
      [org, month],
    );
    return rows.map(({ at_ms, ...e }) => ({ ...e, at: new Date(at_ms).toISOString() }));
  }

  /**
   * One upsert inserts or takes over an expired record; a row returned means `started`; otherwise
   * it locked the conflicting row, so the follow-up read in this transaction sees the winner.
   */
  async beginIdempotent(scope: IdempotencyScope, fingerprint: string, nowMs: number, ttlMs: number, requestId?: string): Promise<IdempotencyBegin> {
    return this.write((c) => beginIn(c, scope, fingerprint, nowMs, ttlMs, requestId, this.instanceId));
  }

  async completeIdempotent(scope: IdempotencyScope, response: StoredResponse): Promise<StoredResponse | undefined> {
    return this.write((c) => completeIn(c, scope, response));
  }

  async abandonIdempotent(scope: IdempotencyScope, requestId?: string, nowMs = Date.now()): Promise<void> {
    await this.write((c) => abandonIn(c, scope, requestId, nowMs));
  }

  async getIdempotency(scope: IdempotencyScope): Promise<IdempotencyRecord | undefined> {
    const [r] = await this.rows<IdempotencyRow>(`SELECT ${IDEMPOTENCY_COLUMNS} FROM idempotency WHERE org = $1 AND env = $2 AND key = $3`, [scope.org, scope.env, scope.key]);
    return r === undefined ? undefined : idempotencyRecord(r);
  }

  async reconcile(live: ReadonlySet<string>, nowMs: number): Promise<{ refunded_rows: number; charges: number; released: number }> {
    return this.write((c) => reconcileIn(c, this.instanceId, [...live], nowMs));
  }

  /** Also forgets leases gone over an hour (no outcome changes: a missing lease counts as gone). */
  async sweepExpired(nowMs: number, ttlMs: number): Promise<number> {
    return this.write(async (c) => {
      const a = await c.query("DELETE FROM idempotency WHERE created_ms + $2::bigint <= $1::bigint", [nowMs, ttlMs]);
      const b = await c.query("DELETE FROM deleted_models WHERE deleted_ms + $2::bigint <= $1::bigint", [nowMs, TOMBSTONE_TTL_MS]);
      await c.query(`DELETE FROM instances WHERE lease_until_ms + 3600000 < ${DB_NOW_MS}`);
      return (a.rowCount ?? 0) + (b.rowCount ?? 0);
    });
  }
}
