/**
 * `synthd fit DIR` and `synthd sample db_... -o DIR` as a user runs them (child processes, a real
 * server): relationships printed, one model per table, every table written, no orphans, keys
 * unique, `--scale` on the root table; and the database forms' bad input refused in one sentence.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "pg";
import { removeDir, runCli, startServer, tempDir, type ServerProcess } from "../../bench/harness";
import { freshDatabase } from "../pg-helpers";

let server: ServerProcess;
let dir: string;
let env: Record<string, string>;
let db: string;

const SMALL = '{"model_size":"small","max_epochs":2}';

/** customers (id, segment, region) and orders (order_id, customer_id, amount, channel); no metadata. */
function writeShop(to: string): void {
  mkdirSync(to, { recursive: true });
  const customers = ["id,segment,region"];
  const orders = ["order_id,customer_id,amount,channel"];
  let seed = 7;
  const u = (): number => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  for (let c = 1; c <= 200; c++) {
    const segment = ["A", "B", "C"][Math.floor(u() * 3)];
    const region = ["north", "south"][Math.floor(u() * 2)];
    customers.push(`${1000 + c},${segment},${region}`);
    const n = segment === "B" ? 3 + Math.floor(u() * 5) : segment === "A" ? Math.floor(u() * 3) : 0;
    for (let k = 0; k < n; k++) orders.push(`ORD-${String(orders.length).padStart(5, "0")},${1000 + c},${segment === "B" ? 100 + Math.floor(u() * 900) : 5 + Math.floor(u() * 50)},${region === "north" ? "web" : "shop"}`);
  }
  writeFileSync(join(to, "customers.csv"), customers.join("\n") + "\n");
  writeFileSync(join(to, "orders.csv"), orders.join("\n") + "\n");
}

function readCsv(path: string): string[][] {
  return readFileSync(path, "utf8").trimEnd().split("\n").map((l) => l.split(","));
}

before(async () => {
  dir = tempDir();
  server = await startServer(join(dir, "store"));
  env = { SYNTHD_URL: server.url, SYNTHD_API_KEY: server.sandboxKey! };
  db = join(dir, "shop");
  writeShop(db);
});

after(async () => {
  await server?.kill("SIGTERM");
  removeDir(dir);
});

test("fit DIR prints the detected relationship and a database id; sample writes every table with no orphans", async () => {
  const fit = await runCli(["fit", db, "--config", SMALL], env);
  assert.equal(fit.code, 0, fit.stderr);
  assert.match(fit.stderr, /^relationships \(detected; write metadata\.json/m);
  assert.match(fit.stderr, /^ {2}orders\.customer_id -> customers\.id: 1 to 0-7 rows, median \d+$/m);
  assert.match(fit.stderr, /^table orders: model mdl_[0-9a-f]{12} ready after/m);
  const id = fit.stdout.trim().split("\n").pop()!;
  assert.match(id, /^db_[0-9a-f]{12}$/);
  const out = join(dir, "synthetic");
  const s = await runCli(["sample", id, "-o", out, "--seed", "3", "--scale", "0.5"], env);
  assert.equal(s.code, 0, s.stderr);
  const customers = readCsv(join(out, "customers.csv"));
  const orders = readCsv(join(out, "orders.csv"));
  assert.deepEqual(customers[0], ["id", "segment", "region"]);
  assert.deepEqual(orders[0], ["order_id", "customer_id", "amount", "channel"]);
  assert.equal(customers.length - 1, 100, "--scale 0.5 of 200 customers");
  const ids = new Set(customers.slice(1).map((r) => r[0]));
  assert.equal(ids.size, 100, "customer keys unique");
  assert.equal(new Set(orders.slice(1).map((r) => r[0])).size, orders.length - 1, "order keys unique");
  assert.ok(orders.length > 1);
  for (const o of orders.slice(1)) assert.ok(ids.has(o[1]), `order ${o[0]} points at customer ${o[1]}, which is not generated`);
  const sized = join(dir, "sized");
  const z = await runCli(["sample", id, "-o", sized, "--seed", "3", "--rows", "customers=40", "--rows", "orders=90"], env);
  assert.equal(z.code, 0, z.stderr);
  assert.match(z.stderr, /wrote customers\.csv \(40 rows\), orders\.csv \(90 rows\)/);
  const bad = await runCli(["sample", id, "-o", sized, "--rows", "orders"], env);
  assert.match(bad.stderr, /--rows orders: give TABLE=N/);
  const again = join(dir, "synthetic-2");
  assert.equal((await runCli(["sample", id, "-o", again, "--seed", "3", "--scale", "0.5"], env)).code, 0);
  assert.equal(readFileSync(join(again, "orders.csv"), "utf8"), readFileSync(join(out, "orders.csv"), "utf8"), "same seed, same database");
});

test("fit postgres://... reads a schema's tables and keys from the catalog; sample -o postgres://... writes them with their constraints", async () => {
  const pg = await freshDatabase();
  const c = new Client({ connectionString: pg.url });
  try {
    await c.connect();
    await c.query("CREATE SCHEMA shop");
    await c.query("CREATE TABLE shop.customers (id integer PRIMARY KEY, segment text, region text)");
    await c.query("CREATE TABLE shop.orders (order_id text PRIMARY KEY, customer_id integer NOT NULL REFERENCES shop.customers (id), amount integer, channel text)");
    for (const t of ["customers", "orders"]) {
      const [header, ...rows] = readCsv(join(db, `${t}.csv`));
      for (const r of rows) await c.query(`INSERT INTO shop.${t} (${header.join(", ")}) VALUES (${r.map((_, i) => `$${i + 1}`).join(", ")})`, r);
    }
    const withPassword = new URL(pg.url);
    withPassword.password = "pw-not-shown";
    const fit = await runCli(["fit", `${withPassword}?schema=shop`, "--config", SMALL], env);
    assert.equal(fit.code, 0, fit.stderr);
    assert.match(fit.stderr, /^relationships \(foreign keys of schema shop\):\n {2}orders\.customer_id -> customers\.id: 1 to 0-7 rows/m);
    const id = fit.stdout.trim().split("\n").pop()!;
    const s = await runCli(["sample", id, "-o", withPassword.toString(), "--schema", "synth", "--seed", "2"], env);
    assert.equal(s.code, 0, s.stderr);
    assert.match(s.stderr, /wrote customers \(200 rows\), orders \(\d+ rows\) to postgres:\/\/postgres:\*\*\*@.* schema synth/);
    for (const out of [fit, s]) assert.ok(!(out.stderr + out.stdout).includes("pw-not-shown"), "no password in any message");
    const fks = await c.query("SELECT count(*)::int AS n FROM pg_constraint WHERE connamespace = 'synth'::regnamespace AND contype = 'f'");
    assert.equal(fks.rows[0].n, 1, "the foreign key constraint is declared");
    const orphans = await c.query("SELECT count(*)::int AS n FROM synth.orders o LEFT JOIN synth.customers k ON k.id = o.customer_id WHERE k.id IS NULL");
    assert.equal(orphans.rows[0].n, 0);
    const n = await c.query("SELECT count(*)::int AS n FROM synth.orders");
    assert.ok(n.rows[0].n > 0);
    const again = await runCli(["sample", id, "-o", `${pg.url}?schema=synth`], env);
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /schema synth already has customers, orders/);
  } finally {
    await c.end().catch(() => undefined);
    await pg.drop();
  }
});

test("the database forms refuse flat-table options and a missing directory in one sentence, writing nothing", async () => {
  const eps = await runCli(["fit", db, "--epsilon", "1"], env);
  assert.notEqual(eps.code, 0);
  assert.match(eps.stderr, /--epsilon is a flat-table option/);
  const n = await runCli(["sample", "db_0123456789ab", "-n", "5", "-o", join(dir, "x")], env);
  assert.match(n.stderr, /-n does not apply to a database: give --scale/);
  const none = await runCli(["sample", "db_0123456789ab", "-o", join(dir, "x")], env);
  assert.match(none.stderr, /no database db_0123456789ab in .*synthd fit DIR keeps it/);
  assert.equal(existsSync(join(dir, "x")), false);
  const scale = await runCli(["sample", "mdl_0123456789ab", "-n", "5", "--scale", "2"], env);
  assert.match(scale.stderr, /--scale and --rows apply to a database/);
  const empty = join(dir, "empty");
  mkdirSync(empty);
  const e = await runCli(["fit", empty], env);
  assert.match(e.stderr, /holds no \.csv or \.parquet file/);
});
