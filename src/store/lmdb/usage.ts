/**
 * The embedded store's `usage`, `pending_charges` and `usage_ledger` sub-databases. Every method
 * runs in a write transaction the store opened, so quota check, increment, ledger entry and
 * pending record are one atomic change.
 */
import type { Database, RootDatabase } from "lmdb";
import type { ChargeRequest, ChargeResult, Environment, LedgerEntry, PendingCharge } from "../records";

/** The usage sub-databases of one LMDB environment. */
export class LmdbUsage {
  /** [org, env, month] -> rows charged in that calendar month (UTC, `YYYY-MM`). */
  readonly usage: Database<number, (string | number)[]>;
  /** [org, month, seq] -> live charges and refunds, seq = 0, 1, ... in the order written. */
  readonly ledger: Database<LedgerEntry, (string | number)[]>;
  /** request id -> charges whose response has not been settled. */
  readonly pending: Database<PendingCharge, string>;

  constructor(root: RootDatabase) {
    this.usage = root.openDB({ name: "usage" });
    this.ledger = root.openDB({ name: "usage_ledger" });
    this.pending = root.openDB({ name: "pending_charges" });
  }

  /** `Store.chargeUsage`: quota check, increment, ledger and pending record. */
  charge(c: ChargeRequest, pending: boolean): ChargeResult {
    const used = this.usage.get([c.org, c.env, c.month]) ?? 0;
    if (used + c.rows > c.quota) return { ok: false, used };
    this.usage.put([c.org, c.env, c.month], used + c.rows);
    if (c.env === "live") this.putLedger(c, "charge", c.rows);
    if (pending) this.pending.put(c.request_id, { charge: c });
    return { ok: true, used: used + c.rows };
  }

  /** Forgets `requestId`'s pending charge (its rows stay charged); false when none. */
  settle(requestId: string): boolean {
    if (this.pending.get(requestId) === undefined) return false;
    this.pending.remove(requestId);
    return true;
  }

  /** Refunds and forgets `requestId`'s pending charge; resolves to the rows refunded. */
  refundPending(requestId: string, nowMs: number): number {
    const p = this.pending.get(requestId);
    if (p === undefined) return 0;
    const c = p.charge;
    const used = this.usage.get([c.org, c.env, c.month]) ?? 0;
    this.usage.put([c.org, c.env, c.month], Math.max(0, used - c.rows));
    if (c.env === "live") this.putLedger({ ...c, at_ms: nowMs }, "refund", -c.rows);
    this.pending.remove(requestId);
    return c.rows;
  }

  /** Gives back charge `c` (a ledger entry for live); the month's usage after it. */
  refund(c: ChargeRequest): number {
    const used = this.usage.get([c.org, c.env, c.month]) ?? 0;
    const next = Math.max(0, used - c.rows);
    this.usage.put([c.org, c.env, c.month], next);
    if (c.env === "live") this.putLedger(c, "refund", -c.rows);
    return next;
  }

  private putLedger(c: ChargeRequest, kind: LedgerEntry["kind"], rows: number): void {
    const entry: LedgerEntry = {
      org: c.org,
      env: c.env,
      month: c.month,
      kind,
      rows,
      model_id: c.model_id,
      request_id: c.request_id,
      at: new Date(c.at_ms).toISOString(),
    };
    let seq = 0;
    for (const { key } of this.ledger.getRange({ start: [c.org, c.month, Number.MAX_SAFE_INTEGER], end: [c.org, c.month], reverse: true, limit: 1 })) {
      seq = (key[2] as number) + 1;
    }
    this.ledger.put([c.org, c.month, seq], entry);
  }

  ofMonth(month: string): { org: string; env: Environment; rows: number }[] {
    const out: { org: string; env: Environment; rows: number }[] = [];
    for (const { key, value } of this.usage.getRange({})) {
      if (key[2] === month) out.push({ org: key[0] as string, env: key[1] as Environment, rows: value });
    }
    return out;
  }

  ledgerOf(org: string, month: string): LedgerEntry[] {
    const out: LedgerEntry[] = [];
    for (const { value } of this.ledger.getRange({ start: [org, month], end: [org, month, Number.MAX_SAFE_INTEGER] })) out.push(value);
    return out;
  }
}
