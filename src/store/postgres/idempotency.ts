/**
 * The statements behind `PgStore`'s idempotency methods and `reconcile`; each runs in the
 * caller's transaction. In-flight keys, like pending charges, carry their `owner` instance.
 */
import type { PoolClient } from "pg";
import type { IdempotencyBegin, IdempotencyRecord, IdempotencyScope, StoredResponse } from "../records";
import { refundPendingIn } from "./usage";

/** The database's clock, ms: leases are compared on it, never on an instance's clock. */
export const DB_NOW_MS = "(extract(epoch from clock_timestamp()) * 1000)::bigint";

export interface IdempotencyRow {
  state: IdempotencyRecord["state"];
  request_id: string | null;
  fingerprint: string;
  created_ms: number;
  response: Omit<StoredResponse, "body"> | null;
  body_kind: "text" | "bytes" | null;
  body: Buffer | null;
}

export const IDEMPOTENCY_COLUMNS = "state, request_id, fingerprint, created_ms, response, body_kind, body";

/**
 * Begins a request under `scope`: one upsert inserts or takes over an expired record; a row
 * returned means `started`; otherwise it locked the conflicting row, so the follow-up read in the
 * same transaction sees the winner. `owner`: this instance.
 */
export async function beginIn(
  c: PoolClient,
  scope: IdempotencyScope,
  fingerprint: string,
  nowMs: number,
  ttlMs: number,
  requestId: string | undefined,
  owner: string,
): Promise<IdempotencyBegin> {
  const key = [scope.org, scope.env, scope.key];
  const won = await c.query(
    `INSERT INTO idempotency (org, env, key, state, request_id, fingerprint, created_ms, owner) VALUES ($1, $2, $3, 'in_flight', $4, $5, $6, $7)
     ON CONFLICT (org, env, key) DO UPDATE SET state = 'in_flight', request_id = EXCLUDED.request_id, fingerprint = EXCLUDED.fingerprint,
       created_ms = EXCLUDED.created_ms, owner = EXCLUDED.owner, response = NULL, body_kind = NULL, body = NULL
     WHERE idempotency.created_ms + $8::bigint <= EXCLUDED.created_ms
     RETURNING 1`,
    [...key, requestId ?? null, fingerprint, nowMs, owner, ttlMs],
  );
  if ((won.rowCount ?? 0) > 0) return { kind: "started" };
  const [cur] = (await c.query<IdempotencyRow>(`SELECT ${IDEMPOTENCY_COLUMNS} FROM idempotency WHERE org = $1 AND env = $2 AND key = $3`, key)).rows;
  const rec = idempotencyRecord(cur);
  if (rec.fingerprint !== fingerprint) return { kind: "mismatch" };
  if (rec.state === "in_flight" || rec.response === undefined) return { kind: "in_flight" };
  return { kind: "replay", response: rec.response };
}

/** Completes the request under `scope` with `response` (its pending charge is settled). */
export async function completeIn(c: PoolClient, scope: IdempotencyScope, response: StoredResponse): Promise<StoredResponse | undefined> {
  await c.query("DELETE FROM pending_charges WHERE request_id = $1", [response.request_id]);
  const key = [scope.org, scope.env, scope.key];
  const [cur] = (await c.query<IdempotencyRow>(`SELECT ${IDEMPOTENCY_COLUMNS} FROM idempotency WHERE org = $1 AND env = $2 AND key = $3 FOR UPDATE`, key)).rows;
  if (cur === undefined) return undefined;
  // A response stored earlier in the request (a recovery point, see createModel) wins.
  const final = idempotencyRecord(cur).response ?? response;
  await c.query(`UPDATE idempotency SET state = 'done', ${responseSet(4)} WHERE org = $1 AND env = $2 AND key = $3`, [...key, ...responseParams(final)]);
  return final;
}

/** Releases the in-flight key `scope`, refunding the pending charge of `requestId` first. */
export async function abandonIn(c: PoolClient, scope: IdempotencyScope, requestId: string | undefined, nowMs: number): Promise<void> {
  if (requestId !== undefined) await refundPendingIn(c, requestId, nowMs);
  await c.query("DELETE FROM idempotency WHERE org = $1 AND env = $2 AND key = $3 AND state = 'in_flight'", [scope.org, scope.env, scope.key]);
}

/**
 * Takes `self`'s pending charges and in-flight keys whose request is not in `liveIds`, and those of
 * instances without a current lease (database clock), `FOR UPDATE SKIP LOCKED` (a record another
 * reconcile or a settling request holds is left to it). Charges are refunded in (org, env, month)
 * order so two reconciles never wait on each other's usage rows in opposite orders.
 */
export async function reconcileIn(
  c: PoolClient,
  self: string,
  liveIds: string[],
  nowMs: number,
): Promise<{ refunded_rows: number; charges: number; released: number }> {
  const dead = `((owner = $1 AND (request_id IS NULL OR request_id <> ALL($2::text[])))
    OR (owner <> $1 AND NOT EXISTS (SELECT 1 FROM instances i WHERE i.id = owner AND i.lease_until_ms > ${DB_NOW_MS})))`;
  let rows = 0;
  const pending = await c.query<{ request_id: string }>(
    `SELECT request_id FROM pending_charges WHERE ${dead} ORDER BY org, env, month, request_id FOR UPDATE SKIP LOCKED`,
    [self, liveIds],
  );
  for (const p of pending.rows) rows += await refundPendingIn(c, p.request_id, nowMs);
  const keys = await c.query<{ org: string; env: string; key: string }>(
    `SELECT org, env, key FROM idempotency WHERE state = 'in_flight' AND ${dead}
     ORDER BY org, env, key FOR UPDATE SKIP LOCKED`,
    [self, liveIds],
  );
  for (const k of keys.rows) {
    // Holding its response (a recovery point): completed, so a retry replays; else released.
    const done = await c.query("UPDATE idempotency SET state = 'done' WHERE org = $1 AND env = $2 AND key = $3 AND response IS NOT NULL", [k.org, k.env, k.key]);
    if ((done.rowCount ?? 0) === 0) await c.query("DELETE FROM idempotency WHERE org = $1 AND env = $2 AND key = $3", [k.org, k.env, k.key]);
  }
  return { refunded_rows: rows, charges: pending.rows.length, released: keys.rows.length };
}

export function idempotencyRecord(r: IdempotencyRow): IdempotencyRecord {
  const out: IdempotencyRecord = { state: r.state, fingerprint: r.fingerprint, created_ms: r.created_ms };
  if (r.request_id !== null) out.request_id = r.request_id;
  if (r.response !== null) {
    const response: StoredResponse = { ...r.response };
    if (r.body !== null) response.body = r.body_kind === "text" ? r.body.toString("utf8") : r.body;
    out.response = response;
  }
  return out;
}

/** `SET` list of a stored response, parameters `$first ... $first+2` ({@link responseParams}). */
export function responseSet(first: number): string {
  return `response = $${first}, body_kind = $${first + 1}, body = $${first + 2}`;
}

/** A response as (json without body, body kind, body bytes): text as UTF-8, bytes as they are. */
export function responseParams(r: StoredResponse): [string, "text" | "bytes" | null, Buffer | null] {
  const { body, ...head } = r;
  if (body === undefined) return [JSON.stringify(head), null, null];
  if (typeof body === "string") return [JSON.stringify(head), "text", Buffer.from(body, "utf8")];
  return [JSON.stringify(head), "bytes", Buffer.from(body.buffer, body.byteOffset, body.byteLength)];
}
