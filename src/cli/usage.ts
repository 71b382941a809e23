/**
 * `synthd usage` and `synthd orgs set` (quotas and rate limits, docs/api.md): commands that read or
 * change the store directly, like `synthd keys create`, and work while the server runs (LMDB
 * allows several processes; the server reads an org's settings on every request).
 *
 * - `synthd usage --data-dir DIR [--org NAME] [--month YYYY-MM] [--json] [--ledger]`: rows charged
 *   per organization and environment in a calendar month (UTC; default the current one), with
 *   the quota, what remains, and for live keys the usage ledger summed (`--ledger` adds the
 *   entries to `--json` output).
 * - `synthd orgs set --data-dir DIR --org NAME [--rate-limit N|default] [--live-quota N|default]`:
 *   the org's requests per minute (both environments together) and its live plan in rows per
 *   month; `default` goes back to the server's default. Prints the org's settings as JSON.
 */
import { databaseOption, openAdminStore } from "./admin-store";
import { Command, InvalidArgumentError, Option } from "commander";
import { DEFAULT_LIVE_QUOTA, FREE_TIER_ROWS } from "../store/records";
import { monthOf, usageReport, type UsageLine } from "../usage/quota";

/** Options of `synthd usage` after parsing. */
export interface UsageOptions {
  dataDir: string;
  /** `--database`: the shared PostgreSQL store instead. */
  database?: string;
  org?: string;
  month?: string;
  json: boolean;
  ledger: boolean;
}

/** Options of `synthd orgs set` after parsing (`"default"`: back to the default). */
export interface OrgsSetOptions {
  dataDir: string;
  /** `--database`: the shared PostgreSQL store instead. */
  database?: string;
  org: string;
  rateLimit?: number | "default";
  liveQuota?: number | "default";
}

function parseMonth(v: string): string {
  const m = /^(\d{4})-(\d{2})$/.exec(v);
  if (m === null || Number(m[2]) < 1 || Number(m[2]) > 12) throw new InvalidArgumentError("--month must be YYYY-MM, e.g. 2026-11.");
  return v;
}

// Commander turns a parser's `null` into "", so "default" stays a string until the command runs.
function limitOrDefault(name: string, min: number): (v: string) => number | "default" {
  return (v) => {
    if (v === "default") return "default";
    if (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v)) || Number(v) < min) {
      throw new InvalidArgumentError(`${name} must be an integer >= ${min}, or "default".`);
    }
    return Number(v);
  };
}


function envName(env: UsageLine["env"]): string {
  return env === "test" ? "sandbox" : "live";
}

/** Prints the usage report of one month (a table, or JSON `{ month, usage: UsageLine[] }`). */
export async function usageCommand(opts: UsageOptions): Promise<void> {
  const store = await openAdminStore(opts, true);
  try {
    const month = opts.month ?? monthOf(Date.now());
    const lines = await usageReport(store, month, opts.org);
    if (opts.json) {
      const usage = await Promise.all(
        lines.map(async (l) =>
          opts.ledger && l.env === "live" ? { ...l, ledger: { ...l.ledger!, items: await store.ledgerEntries(l.org, month) } } : l,
        ),
      );
      process.stdout.write(`${JSON.stringify({ month, usage }, null, 2)}\n`);
      return;
    }
    const header = ["ORG", "ENV", "MONTH", "ROWS", "QUOTA", "REMAINING", "LEDGER"];
    const rows = lines.map((l) => [
      l.org,
      envName(l.env),
      l.month,
      String(l.rows),
      String(l.quota),
      String(l.remaining),
      l.ledger === undefined ? "-" : `${l.ledger.entries} entries (+${l.ledger.charged} -${l.ledger.refunded})`,
    ]);
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
    const fmt = (r: string[]): string => r.map((c, i) => c.padEnd(widths[i])).join("  ").trimEnd();
    process.stdout.write([fmt(header), ...rows.map(fmt)].join("\n") + "\n");
  } finally {
    await store.close();
  }
}

/** Sets an org's rate limit and live plan; prints its settings as JSON. */
export async function orgsSetCommand(opts: OrgsSetOptions): Promise<void> {
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(opts.org)) {
    throw new Error("--org must be 1 to 64 characters from letters, digits, '_', '.' and '-'.");
  }
  if (opts.rateLimit === undefined && opts.liveQuota === undefined) {
    throw new Error("Nothing to set: pass --rate-limit and/or --live-quota.");
  }
  const store = await openAdminStore(opts);
  try {
    const orNull = (v: number | "default" | undefined): number | null | undefined => (v === "default" ? null : v);
    const rec = await store.setOrgLimits(opts.org, { rate_limit: orNull(opts.rateLimit), live_quota: orNull(opts.liveQuota) });
    const out = {
      org: rec.name,
      rate_limit: rec.rate_limit ?? "default",
      live_quota: rec.live_quota ?? DEFAULT_LIVE_QUOTA,
      sandbox_quota: FREE_TIER_ROWS,
    };
    process.stdout.write(`${JSON.stringify(out)}\n`);
  } finally {
    await store.close();
  }
}

/** Adds `usage` and `orgs set` to the `synthd` program (one call in `main.ts`). */
export function registerUsageCommands(program: Command): void {
  const dataDir = (): Option => new Option("--data-dir <dir>", "store directory").env("SYNTHD_DATA_DIR").default("./synthd-data");
  program
    .command("usage")
    .description("rows generated per organization and environment in a month, with quotas and the live ledger (reads the store)")
    .addOption(dataDir())
    .addOption(databaseOption())
    .option("--org <name>", "only this organization")
    .option("--month <YYYY-MM>", "calendar month, UTC (default: the current one)", parseMonth)
    .option("--json", "print JSON", false)
    .option("--ledger", "with --json: include the live ledger entries", false)
    .action(usageCommand);

  const orgs = program.command("orgs").description("organization settings (works while the server runs)");
  orgs
    .command("set")
    .description("set an organization's rate limit and live plan; prints its settings as JSON")
    .addOption(dataDir())
    .addOption(databaseOption())
    .requiredOption("--org <name>", "organization (created if missing)")
    .option("--rate-limit <n>", "requests per minute, both environments together, or 'default'", limitOrDefault("--rate-limit", 1))
    .option("--live-quota <rows>", "rows per calendar month for live keys, or 'default'", limitOrDefault("--live-quota", 0))
    .action(orgsSetCommand);
}
