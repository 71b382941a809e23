/**
 * The store an admin command works on (`keys create`, `orgs set`, `usage`): the embedded LMDB
 * store in `--data-dir`, or with `--database URL` the shared topology's PostgreSQL store, opened
 * without a lease (an admin command holds no requests) and migrated if needed. Both stores load
 * when a command opens one, so that defining the options (`main.ts`) loads neither.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { Option } from "commander";
import type { Store } from "../store";

/** What an admin command's store options parse to. */
export interface AdminStoreOptions {
  dataDir: string;
  /** `--database` / `SYNTHD_DATABASE_URL`: the shared store's PostgreSQL URL (over dataDir). */
  database?: string;
}

/** `--database <url>` (env `SYNTHD_DATABASE_URL`). */
export function databaseOption(): Option {
  return new Option("--database <url>", "PostgreSQL URL of the shared store (instead of --data-dir)").env("SYNTHD_DATABASE_URL");
}

/**
 * Opens the command's store. `mustExist`: an LMDB directory without a store is an error (a
 * command that only reads must not create one).
 * @throws Error for a missing LMDB store (with `mustExist`) or an unreachable database.
 */
export async function openAdminStore(opts: AdminStoreOptions, mustExist = false): Promise<Store> {
  if (opts.database !== undefined) {
    const { PgStore } = await import("../store/postgres/pgStore");
    return PgStore.open(opts.database, { heartbeat: false });
  }
  if (mustExist && !existsSync(join(opts.dataDir, "data.mdb"))) {
    throw new Error(`No synthd store in ${opts.dataDir} (pass --data-dir or --database, or set SYNTHD_DATA_DIR).`);
  }
  mkdirSync(opts.dataDir, { recursive: true });
  const { LmdbStore } = await import("../store");
  return new LmdbStore(opts.dataDir);
}
