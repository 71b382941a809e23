/** The records both stores keep: orgs and keys, models, usage and its ledger, idempotency. */
import type { Model } from "../contract";

/** `test` = sandbox (`svc_test_` keys), `live` = production (`svc_live_` keys). */
export type Environment = "test" | "live";

export interface OrgRecord {
  name: string;
  created_at: string;
  /** Requests per minute for this org (both environments); unset: the server's default (60). */
  rate_limit?: number;
  /** Rows per calendar month for the org's live keys; unset: {@link DEFAULT_LIVE_QUOTA}. */
  live_quota?: number;
}

/** Org settings {@link Store.setOrgLimits} changes; `null` clears one (back to the default). */
export interface OrgLimits {
  rate_limit?: number | null;
  live_quota?: number | null;
}

/**
 * Checks an {@link OrgLimits} change before writing: `rate_limit` integer >= 1, `live_quota`
 * integer >= 0; `null` and absent pass. @throws RangeError naming the setting and value.
 */
export function checkOrgLimits(limits: OrgLimits): void {
  const check = (v: number | null | undefined, min: number, what: string): void => {
    if (v !== undefined && v !== null && !(Number.isSafeInteger(v) && v >= min)) {
      throw new RangeError(`${what} must be an integer >= ${min}; got ${v}.`);
    }
  };
  check(limits.rate_limit, 1, "rate_limit");
  check(limits.live_quota, 0, "live_quota");
}

/** Rows per calendar month of the sandbox (the free tier; contract: "Limits"). */
export const FREE_TIER_ROWS = 100_000;
/** Rows per calendar month of a live org without its own plan. */
export const DEFAULT_LIVE_QUOTA = 100_000;

/**
 * Models one org may keep, both environments (`--max-models-per-org`); beyond: 402
 * `quota_exceeded`. With metadata bounded, this bounds what one org stores.
 */
export const DEFAULT_MAX_MODELS_PER_ORG = 1000;

/**
 * A sliding-window rate counter (`src/server/limits/rateLimiter.ts`): `window` = `floor(unix_ms /
 * 60000)`, `curr` requests admitted in it, `prev` in `window - 1`.
 */
export interface RateCounter {
  window: number;
  prev: number;
  curr: number;
}

/** A live ledger entry: a charge (`rows` > 0) before a Generate, or its refund (`rows` < 0). */
export interface LedgerEntry {
  org: string;
  env: Environment;
  /** Calendar month (UTC) charged, `YYYY-MM`. */
  month: string;
  kind: "charge" | "refund";
  rows: number;
  model_id: string;
  request_id: string;
  /** ISO 8601 UTC time of the charge or refund. */
  at: string;
}

/** What a usage charge names besides its rows (kept in the live ledger). */
export interface ChargeRequest {
  org: string;
  env: Environment;
  /** `YYYY-MM` (UTC) of the charge; a refund must name the month of its charge. */
  month: string;
  rows: number;
  /** Rows allowed in `month` for (org, env); a charge that would exceed it is refused. */
  quota: number;
  model_id: string;
  request_id: string;
  /** Unix milliseconds of the charge (the ledger entry's `at`). */
  at_ms: number;
}

/**
 * A charge whose response is not settled yet (exactly-once billing; docs/operations.md "What
 * survives kill -9"): written with the charge, removed when the response is stored or sent, or on
 * refund. One left by a dead process is refunded at the next start.
 */
export interface PendingCharge {
  charge: ChargeRequest;
}

/** {@link Store.chargeUsage}'s outcome: `used` = month's usage after it (unchanged if refused). */
export type ChargeResult = { ok: true; used: number } | { ok: false; used: number };

/** Idempotency scope: a key belongs to one org and one environment. */
export interface IdempotencyScope {
  org: string;
  env: Environment;
  key: string;
}

/** A response stored for replay (only the handler's own headers; never per-request ones). */
export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  /** Text, or bytes (an Arrow Generate response; msgpack stores them as binary). */
  body?: string | Uint8Array;
  /** `request_id` of the request that produced it (the replay's X-Request-Id). */
  request_id: string;
}

/** A stored idempotency record: in flight while the first request runs, then its response. */
export interface IdempotencyRecord {
  state: "in_flight" | "done";
  /** The request holding or having produced it; absent in records older than this field. */
  request_id?: string;
  /** SHA-256 of method, path and body of the first request: other parameters are refused. */
  fingerprint: string;
  /** Unix ms of the first use; the record expires a ttl later. */
  created_ms: number;
  /** Set when `state` is `done`. */
  response?: StoredResponse;
}

/** Outcome of {@link Store.beginIdempotent}. */
export type IdempotencyBegin =
  | { kind: "started" }
  | { kind: "in_flight" }
  | { kind: "mismatch" }
  | { kind: "replay"; response: StoredResponse };

/** A deleted model's place in its (org, env) list, kept so its id still works as a List cursor. */
export interface DeletedModel {
  org: string;
  env: Environment;
  created_ms: number;
  deleted_ms: number;
}

/** How long a deleted model's id stays a valid `starting_after` cursor: 24 hours. */
export const TOMBSTONE_TTL_MS = 24 * 3600 * 1000;

export interface KeyRecord {
  org: string;
  env: Environment;
  created_at: string;
  /** First 12 characters of the key, for display; never the key itself. */
  prefix: string;
}

/** A stored model: the public resource plus its owner. */
export interface ModelRecord extends Model {
  org: string;
  env: Environment;
}

/** A page of models, newest first (contract: List Models). */
export interface ModelPage {
  items: ModelRecord[];
  has_more: boolean;
}

