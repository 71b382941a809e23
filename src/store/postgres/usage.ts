/**
 * The statements behind `PgStore`'s charges and refunds, each in the caller's transaction. A
 * pending charge names the instance that took it, for crash recovery (`reconcileIn`).
 */
import type { PoolClient } from "pg";
import type { ChargeRequest, ChargeResult, Environment, LedgerEntry } from "../records";

export interface PendingRow {
  request_id: string;
  org: string;
  env: Environment;
  month: string;
  rows: number;
  quota: number;
  model_id: string;
  at_ms: number;
}

export const PENDING_COLUMNS = "request_id, org, env, month, rows, quota, model_id, at_ms";

export function chargeOf(r: PendingRow): ChargeRequest {
  return { org: r.org, env: r.env, month: r.month, rows: r.rows, quota: r.quota, model_id: r.model_id, request_id: r.request_id, at_ms: r.at_ms };
}

/**
 * Charges `c.rows` within `c.quota`: the upsert adds only where the sum stays within it (a
 * concurrent charge waits for the row lock and re-checks the committed sum); a refused charge
 * reads the locked usage. Live charges go to the ledger; `pendingOwner` keeps it pending.
 */
export async function chargeIn(client: PoolClient, c: ChargeRequest, pendingOwner: string | undefined): Promise<ChargeResult> {
  const { rows } = await client.query<{ rows: number }>(
    `INSERT INTO usage (org, env, month, rows) SELECT $1, $2, $3, $4::bigint WHERE $4::bigint <= $5::bigint
     ON CONFLICT (org, env, month) DO UPDATE SET rows = usage.rows + EXCLUDED.rows WHERE usage.rows + EXCLUDED.rows <= $5::bigint
     RETURNING rows`,
    [c.org, c.env, c.month, c.rows, c.quota],
  );
  if (rows.length === 0) {
    const cur = await client.query<{ rows: number }>("SELECT rows FROM usage WHERE org = $1 AND env = $2 AND month = $3", [c.org, c.env, c.month]);
    return { ok: false, used: cur.rows[0]?.rows ?? 0 };
  }
  if (c.env === "live") await insertLedger(client, c, "charge", c.rows, c.at_ms);
  if (pendingOwner !== undefined) {
    await client.query(
      `INSERT INTO pending_charges (request_id, org, env, month, rows, quota, model_id, at_ms, owner) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT (request_id) DO UPDATE SET org = EXCLUDED.org, env = EXCLUDED.env, month = EXCLUDED.month, rows = EXCLUDED.rows,
         quota = EXCLUDED.quota, model_id = EXCLUDED.model_id, at_ms = EXCLUDED.at_ms, owner = EXCLUDED.owner`,
      [c.request_id, c.org, c.env, c.month, c.rows, c.quota, c.model_id, c.at_ms, pendingOwner],
    );
  }
  return { ok: true, used: rows[0].rows };
}

/** Gives `c.rows` back (a ledger refund for live). Resolves to the new usage. */
export async function refundIn(client: PoolClient, c: ChargeRequest): Promise<number> {
  const next = await subtractUsage(client, c, c.rows);
  if (c.env === "live") await insertLedger(client, c, "refund", -c.rows, c.at_ms);
  return next;
}

async function insertLedger(c: PoolClient, ch: ChargeRequest, kind: LedgerEntry["kind"], rows: number, atMs: number): Promise<void> {
  await c.query(
    "INSERT INTO usage_ledger (org, env, month, kind, rows, model_id, request_id, at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    [ch.org, ch.env, ch.month, kind, rows, ch.model_id, ch.request_id, atMs],
  );
}

/** Usage minus `rows`, floored at 0 (a missing row becomes 0, as in LMDB); the new usage. */
async function subtractUsage(c: PoolClient, ch: ChargeRequest, rows: number): Promise<number> {
  const r = await c.query<{ rows: number }>(
    `INSERT INTO usage (org, env, month, rows) VALUES ($1, $2, $3, 0)
     ON CONFLICT (org, env, month) DO UPDATE SET rows = GREATEST(0, usage.rows - $4::bigint) RETURNING rows`,
    [ch.org, ch.env, ch.month, rows],
  );
  return r.rows[0].rows;
}

/** Takes `requestId`'s pending charge, if any, and refunds it; resolves to the rows refunded. */
export async function refundPendingIn(c: PoolClient, requestId: string, nowMs: number): Promise<number> {
  const [p] = (await c.query<PendingRow>(`DELETE FROM pending_charges WHERE request_id = $1 RETURNING ${PENDING_COLUMNS}`, [requestId])).rows;
  if (p === undefined) return 0;
  const ch = chargeOf(p);
  await subtractUsage(c, ch, ch.rows);
  if (ch.env === "live") await insertLedger(c, ch, "refund", -ch.rows, nowMs);
  return ch.rows;
}
