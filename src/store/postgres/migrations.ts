/**
 * Schema migrations of the PostgreSQL store. {@link MIGRATIONS} is append-only (a released entry
 * is never edited). Tables are unqualified (the `search_path`'s first schema). Numbers are
 * `bigint` (safe integers); ids and ordering keys `text COLLATE "C"` (byte order, as LMDB's keys,
 * locale-independent); models `json` (key order kept, unlike `jsonb`); opaque engine values
 * msgpack `bytea`.
 */
import { Client, Pool, type ClientBase, type PoolClient } from "pg";

/** One schema change: `id` orders them (1, 2, ...); `sql` runs inside the migration transaction. */
export interface Migration {
  id: number;
  /** What it changes, for `schema_migrations` readers and logs. */
  name: string;
  sql: string;
}

/** Advisory lock key serialising migrations (`pg_advisory_xact_lock`): "synthd" in ASCII. */
export const MIGRATION_LOCK_KEY = 0x73796e746864;

/** The store's schema, oldest first. Append only. */
export const MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    name: "store tables (orgs, keys, models, usage, ledger, idempotency, pending charges, leases)",
    sql: `
CREATE TABLE orgs (
  name        text COLLATE "C" PRIMARY KEY,
  created_at  text NOT NULL,
  rate_limit  bigint,
  live_quota  bigint
);
-- API keys by the SHA-256 hex of the key (the key itself is never stored).
CREATE TABLE api_keys (
  hash        text COLLATE "C" PRIMARY KEY,
  org         text COLLATE "C" NOT NULL,
  env         text NOT NULL CHECK (env IN ('test', 'live')),
  created_at  text NOT NULL,
  prefix      text NOT NULL
);
-- record: the ModelRecord as written (json keeps its key order); created_ms = Date.parse(created_at).
-- train_fence: the latest claimTraining token (fencing; 0 = never claimed).
CREATE TABLE models (
  id           text COLLATE "C" PRIMARY KEY,
  org          text COLLATE "C" NOT NULL,
  env          text NOT NULL,
  created_ms   bigint NOT NULL,
  status       text NOT NULL,
  record       json NOT NULL,
  metadata     bytea NOT NULL,
  checkpoint   bytea,
  train_fence  bigint NOT NULL DEFAULT 0
);
CREATE INDEX models_list ON models (org, env, created_ms DESC, id DESC);
CREATE INDEX models_by_status ON models (status, created_ms, id);
-- A deleted model's place in its list, so its id stays a List cursor for TOMBSTONE_TTL_MS.
CREATE TABLE deleted_models (
  id          text COLLATE "C" PRIMARY KEY,
  org         text COLLATE "C" NOT NULL,
  env         text NOT NULL,
  created_ms  bigint NOT NULL,
  deleted_ms  bigint NOT NULL
);
CREATE TABLE rate_counters (
  key     text COLLATE "C" PRIMARY KEY,
  win     bigint NOT NULL,
  prev    bigint NOT NULL,
  curr    bigint NOT NULL
);
-- Rows charged per (org, env, calendar month UTC 'YYYY-MM').
CREATE TABLE usage (
  org     text COLLATE "C" NOT NULL,
  env     text COLLATE "C" NOT NULL,
  month   text COLLATE "C" NOT NULL,
  rows    bigint NOT NULL,
  PRIMARY KEY (org, env, month)
);
-- Live charges (rows > 0) and refunds (rows < 0); seq gives the order written.
CREATE TABLE usage_ledger (
  seq         bigserial PRIMARY KEY,
  org         text COLLATE "C" NOT NULL,
  env         text NOT NULL,
  month       text COLLATE "C" NOT NULL,
  kind        text NOT NULL CHECK (kind IN ('charge', 'refund')),
  rows        bigint NOT NULL,
  model_id    text NOT NULL,
  request_id  text NOT NULL,
  at_ms       bigint NOT NULL
);
CREATE INDEX usage_ledger_by_org_month ON usage_ledger (org, month, seq);
-- Charges whose response is not settled yet; owner: the instance that took them (reconcile).
CREATE TABLE pending_charges (
  request_id  text COLLATE "C" PRIMARY KEY,
  org         text COLLATE "C" NOT NULL,
  env         text COLLATE "C" NOT NULL,
  month       text COLLATE "C" NOT NULL,
  rows        bigint NOT NULL,
  quota       bigint NOT NULL,
  model_id    text NOT NULL,
  at_ms       bigint NOT NULL,
  owner       text COLLATE "C" NOT NULL
);
CREATE INDEX pending_charges_by_owner ON pending_charges (owner);
-- One record per key. response: {status, headers, request_id} of a stored response; its body is
-- body (bytes) with body_kind 'text' (UTF-8 of a string) or 'bytes'; all null while none is stored.
CREATE TABLE idempotency (
  org          text COLLATE "C" NOT NULL,
  env          text COLLATE "C" NOT NULL,
  key          text COLLATE "C" NOT NULL,
  state        text NOT NULL CHECK (state IN ('in_flight', 'done')),
  request_id   text,
  fingerprint  text NOT NULL,
  created_ms   bigint NOT NULL,
  owner        text COLLATE "C" NOT NULL,
  response     json,
  body_kind    text CHECK (body_kind IN ('text', 'bytes')),
  body         bytea,
  PRIMARY KEY (org, env, key)
);
CREATE INDEX idempotency_in_flight ON idempotency (owner) WHERE state = 'in_flight';
CREATE INDEX idempotency_by_created ON idempotency (created_ms);
-- Front ends sharing the store: each renews its lease (database clock, Unix ms) while it runs.
CREATE TABLE instances (
  id              text COLLATE "C" PRIMARY KEY,
  lease_until_ms  bigint NOT NULL
);
`,
  },
];

/**
 * Applies the migrations `schema_migrations` lacks, in order, in one transaction under
 * `pg_advisory_xact_lock(MIGRATION_LOCK_KEY)`, so processes starting at once apply each exactly
 * once. `db`: a pool or a connected client outside a transaction. Resolves to the ids applied;
 * rejects with the database's error, nothing applied.
 */
export async function migrate(db: Pool | ClientBase): Promise<number[]> {
  const pooled = db instanceof Pool;
  const client: ClientBase = pooled ? await db.connect() : db;
  let failed: unknown;
  const onError = (err: unknown): void => {
    failed = err; // reported to the running query as well; the listener keeps it from being uncaught
  };
  if (pooled) client.on("error", onError);
  try {
    await client.query("BEGIN");
    try {
      await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK_KEY]);
      await client.query("CREATE TABLE IF NOT EXISTS schema_migrations (id integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())");
      const done = new Set((await client.query<{ id: number }>("SELECT id FROM schema_migrations")).rows.map((r) => r.id));
      const applied: number[] = [];
      for (const m of MIGRATIONS) {
        if (done.has(m.id)) continue;
        await client.query(m.sql);
        await client.query("INSERT INTO schema_migrations (id, name) VALUES ($1, $2)", [m.id, m.name]);
        applied.push(m.id);
      }
      await client.query("COMMIT");
      return applied;
    } catch (err) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw err;
    }
  } catch (err) {
    failed = err;
    throw err;
  } finally {
    // A connection that failed mid-migration is discarded, not returned to the pool.
    if (pooled) {
      client.removeListener("error", onError);
      (client as PoolClient).release(failed !== undefined);
    }
  }
}

/** `synthd migrate --database URL`: connect, {@link migrate}, disconnect; resolves to the ids. */
export async function migrateDatabase(url: string): Promise<number[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await migrate(client);
  } finally {
    await client.end();
  }
}
