/**
 * PostgreSQL for tests: each test file makes its own throwaway database on the machine's server
 * and drops it afterwards, so files can run in parallel and leave nothing behind. Nothing here
 * connects at import time.
 */
import { randomBytes } from "node:crypto";
import { Client } from "pg";

/**
 * The server's maintenance database used to create and drop test databases (trust auth on
 * 127.0.0.1:5432 by default); override with `SYNTHD_TEST_PG_URL`.
 */
export const PG_URL = process.env.SYNTHD_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** Runs `sql` on a short-lived connection to {@link PG_URL}. */
async function admin(sql: string): Promise<void> {
  const c = new Client({ connectionString: PG_URL });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

/**
 * Creates an empty database `synthd_t_<16 hex>` on the server of {@link PG_URL}. Resolves to its
 * connection string and `drop()`, which removes it even while connections are still open
 * (`WITH (FORCE)`, PostgreSQL 13+). Rejects when the server cannot be reached.
 */
export async function freshDatabase(): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const name = `synthd_t_${randomBytes(8).toString("hex")}`;
  await admin(`CREATE DATABASE ${name}`);
  const u = new URL(PG_URL);
  u.pathname = `/${name}`;
  return { url: u.toString(), name, drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}
