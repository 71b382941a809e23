/**
 * Monthly usage quotas (contract: "Limits"): generated rows per UTC month per (org, env); the
 * sandbox has {@link FREE_TIER_ROWS}, live the org's plan. Generate charges before the engine runs
 * (402, nothing charged, if over); the charge stays pending until the response is stored or sent
 * (`steps/settle.ts`) and is refunded if the work fails or the process dies, so usage counts only
 * rows delivered. Create Model charges nothing. Live entries also go to the usage ledger.
 */
import type { ChargeRequest, Environment, Store } from "../store";
import { DEFAULT_LIVE_QUOTA, FREE_TIER_ROWS } from "../store/records";
import type { Auth } from "./auth";
import { ApiError } from "../contract/errors";

/** The calendar month (UTC) of `ms` as `YYYY-MM`. */
export function monthOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 7);
}

/** The first instant of the month after `month` (`YYYY-MM`), as an ISO 8601 UTC string. */
export function nextMonthStart(month: string): string {
  const [y, m] = month.split("-").map(Number);
  return new Date(Date.UTC(y, m, 1)).toISOString();
}

/** Rows per month allowed to (org, env): the free tier for the sandbox, the org's plan for live. */
export async function quotaOf(store: Store, org: string, env: Environment): Promise<number> {
  if (env === "test") return FREE_TIER_ROWS;
  return (await store.getOrg(org))?.live_quota ?? DEFAULT_LIVE_QUOTA;
}

function envName(env: Environment): string {
  return env === "test" ? "sandbox" : "live";
}

/** How to get more rows: the sandbox's tier is fixed, so a live key; live: `synthd orgs set`. */
export function quotaHint(auth: Auth): string {
  const set = `synthd orgs set --org ${auth.org} --live-quota N`;
  return auth.env === "test"
    ? `The sandbox's free tier is fixed; for more, use a live key (on a self-hosted server: synthd keys create --org ${auth.org} --env live), ` +
        `whose monthly rows are the organization's plan (${set}).`
    : `On a self-hosted server the operator raises the organization's plan with: ${set}.`;
}

/** The 402 error for (caller, month): what was used, when it resets, and how to raise it ({@link quotaHint}). */
function quotaExceeded(auth: Auth, month: string, used: number, quota: number, asked?: number): ApiError {
  const ask = asked === undefined ? "" : ` This request asks for ${asked} rows.`;
  return new ApiError(
    "quota_exceeded",
    `Your organization has used ${used} of its ${quota} ${envName(auth.env)} rows for ${month}.${ask} ` +
      `The quota resets at ${nextMonthStart(month)}. ${quotaHint(auth)}`,
  );
}

/** Create Model's check. @throws ApiError `quota_exceeded` when this month's quota is used up. */
export async function assertQuotaLeft(store: Store, auth: Auth, nowMs: number): Promise<void> {
  const month = monthOf(nowMs);
  const quota = await quotaOf(store, auth.org, auth.env);
  const used = await store.getUsage(auth.org, auth.env, month);
  if (used >= quota) throw quotaExceeded(auth, month, used, quota);
}

/** A charge taken by {@link charge}; pass it to {@link refund} if the work fails. */
export type Charge = ChargeRequest;

/** Charges `rows` to this month, atomically. @throws ApiError 402 (nothing charged) if over. */
export async function charge(
  store: Store,
  auth: Auth,
  rows: number,
  modelId: string,
  requestId: string,
  nowMs: number,
): Promise<Charge> {
  const month = monthOf(nowMs);
  const quota = await quotaOf(store, auth.org, auth.env);
  const c: Charge = { org: auth.org, env: auth.env, month, rows, quota, model_id: modelId, request_id: requestId, at_ms: nowMs };
  const r = await store.chargeUsage(c, { pending: true });
  if (!r.ok) throw quotaExceeded(auth, month, r.used, quota, rows);
  return c;
}

/** Gives back a charge taken by {@link charge} at `nowMs`, unless it was settled or refunded already. */
export async function refund(store: Store, c: Charge, nowMs: number): Promise<void> {
  await store.refundPending(c.request_id, nowMs);
}

/** One line of the usage report: (org, env) in one month. */
export interface UsageLine {
  org: string;
  env: Environment;
  /** `YYYY-MM` (UTC). */
  month: string;
  /** Rows charged (net of refunds). */
  rows: number;
  quota: number;
  remaining: number;
  /** Live only: the month's ledger, summed (`charged - refunded` equals `rows`). */
  ledger?: { entries: number; charged: number; refunded: number };
}

/** Usage of `month` for every org (or `org`), both environments. @throws Error for no such org. */
export async function usageReport(store: Store, month: string, org?: string): Promise<UsageLine[]> {
  let orgs = (await store.listOrgs()).map((o) => o.name);
  if (org !== undefined) {
    if ((await store.getOrg(org)) === undefined) throw new Error(`No organization named ${JSON.stringify(org)} in this store.`);
    orgs = [org];
  }
  const out: UsageLine[] = [];
  for (const name of orgs) {
    for (const env of ["test", "live"] as const) {
      const rows = await store.getUsage(name, env, month);
      const quota = await quotaOf(store, name, env);
      const line: UsageLine = { org: name, env, month, rows, quota, remaining: Math.max(0, quota - rows) };
      if (env === "live") {
        const entries = await store.ledgerEntries(name, month);
        line.ledger = {
          entries: entries.length,
          charged: entries.filter((e) => e.rows > 0).reduce((s, e) => s + e.rows, 0),
          refunded: -entries.filter((e) => e.rows < 0).reduce((s, e) => s + e.rows, 0),
        };
      }
      out.push(line);
    }
  }
  return out;
}
