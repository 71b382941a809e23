/**
 * A database in PostgreSQL (src/sdk/relational/postgres.ts): tables and keys read from the
 * catalog, rows typed; and a database written into a schema with its keys and foreign key
 * constraints declared, loaded with COPY, parents first, in one transaction; bad cases refused
 * with nothing left behind and no password in the message. One throwaway database per run.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { Client } from "pg";
import { DataError, type Table } from "../src/sdk";
import { readPostgresSource } from "../src/sdk/relational/database";
import { postgresSchemaTarget, sqlTypeOf, writePostgresDatabase } from "../src/sdk/relational/postgres";
import { freshDatabase } from "./pg-helpers";

let db: Awaited<ReturnType<typeof freshDatabase>>;
let c: Client;

before(async () => {
  db = await freshDatabase();
  c = new Client({ connectionString: db.url });
  await c.connect();
  await c.query("CREATE SCHEMA shop");
  await c.query("CREATE TABLE shop.customers (id integer PRIMARY KEY, segment varchar(8), joined date)");
  await c.query("CREATE TABLE shop.orders (order_id text PRIMARY KEY, customer_id integer REFERENCES shop.customers (id), amount numeric(8,2), placed timestamp)");
  for (let i = 1; i <= 30; i++) {
    await c.query("INSERT INTO shop.customers VALUES ($1, $2, $3)", [100 + i, ["A", "B", "C"][i % 3], `2020-0${1 + (i % 9)}-1${i % 10}`]);
    for (let k = 0; k < i % 4; k++) await c.query("INSERT INTO shop.orders VALUES ($1, $2, $3, $4)", [`O-${i}-${k}`, 100 + i, (i * 7 + k) % 90 + 0.5, `2021-0${1 + (k % 9)}-0${1 + (i % 9)} 10:0${k}:00`]);
  }
  await c.query("CREATE SCHEMA links");
  await c.query("CREATE TABLE links.pairs (a integer, b integer, PRIMARY KEY (a, b))");
});

after(async () => {
  await c?.end().catch(() => undefined);
  await db?.drop();
});

test("a schema is read with its tables, primary and foreign keys from the catalog, dates and timestamps as datetimes", async () => {
  const src = await readPostgresSource(postgresSchemaTarget(`${db.url}?schema=shop`));
  assert.equal(src.keys, "catalog");
  assert.deepEqual(Object.keys(src.tables).sort(), ["customers", "orders"]);
  assert.equal(src.tables.customers.rows.length, 30);
  assert.equal(src.tables.orders.rows.length, 45);
  assert.equal(src.schema.tables.customers.primaryKey, "id");
  assert.equal(src.schema.tables.orders.primaryKey, "order_id");
  assert.deepEqual(src.schema.relationships, [{ parent: "customers", parentKey: "id", child: "orders", childKey: "customer_id" }]);
  assert.deepEqual(src.schema.tables.customers.columns, { joined: { type: "datetime", format: "yyyy-MM-dd" } });
  assert.deepEqual(src.schema.tables.orders.columns, { placed: { type: "datetime", format: "yyyy-MM-dd HH:mm:ss.SSS" } });
  assert.equal(src.schema.tables.orders.sqlTypes!.amount, "numeric(8,2)");
  await assert.rejects(readPostgresSource(postgresSchemaTarget(db.url, "links")), (e: unknown) => e instanceof DataError && /links\.pairs: its primary key \(a, b\) is composite/.test(e.message));
  await assert.rejects(readPostgresSource(postgresSchemaTarget(db.url, "nothing")), (e: unknown) => e instanceof DataError && /schema nothing has no tables/.test(e.message));
});

test("the schema comes from --schema or ?schema=, default public; two different ones are refused", () => {
  assert.deepEqual(postgresSchemaTarget("postgres://u:pw@h/db?schema=s&sslmode=disable"), { url: "postgres://u:pw@h/db?sslmode=disable", schema: "s" });
  assert.deepEqual(postgresSchemaTarget("postgres://h/db", "t"), { url: "postgres://h/db", schema: "t" });
  assert.equal(postgresSchemaTarget("postgres://h/db").schema, "public");
  assert.throws(() => postgresSchemaTarget("postgres://h/db?schema=a", "b"), /--schema b and the URI's schema=a differ/);
});

test("a generated database is written parents first with its keys and foreign key constraints declared", async () => {
  const src = await readPostgresSource(postgresSchemaTarget(db.url, "shop"));
  const written = await writePostgresDatabase({ url: db.url, schema: "synth" }, src.schema, ["customers", "orders"], src.tables);
  assert.deepEqual(written, { customers: 30, orders: 45 });
  const cons = await c.query("SELECT conrelid::regclass::text AS t, contype FROM pg_constraint WHERE connamespace = 'synth'::regnamespace ORDER BY 1, 2");
  assert.deepEqual(cons.rows, [{ t: "synth.customers", contype: "p" }, { t: "synth.orders", contype: "f" }, { t: "synth.orders", contype: "p" }]);
  const types = await c.query("SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = 'synth' AND column_name IN ('segment', 'amount', 'placed', 'customer_id') ORDER BY 1, 2");
  assert.deepEqual(types.rows.map((r) => `${r.table_name}.${r.column_name} ${r.data_type}`), [
    "customers.segment text",
    "orders.amount numeric",
    "orders.customer_id integer",
    "orders.placed timestamp without time zone",
  ]);
  const same = await c.query("SELECT count(*)::int AS n FROM synth.orders o JOIN shop.orders r USING (order_id) WHERE o.placed = r.placed AND o.amount = r.amount");
  assert.equal(same.rows[0].n, 45, "values survive the round trip");
  await assert.rejects(
    writePostgresDatabase({ url: db.url, schema: "synth" }, src.schema, ["customers", "orders"], src.tables),
    (e: unknown) => e instanceof DataError && /schema synth already has customers, orders: write into a schema without these tables/.test(e.message),
  );
  assert.equal((await c.query("SELECT count(*)::int AS n FROM synth.customers")).rows[0].n, 30, "the existing tables are untouched");
});

test("an orphan foreign key fails the whole write: nothing is left, and the message names the URI without its password", async () => {
  const src = await readPostgresSource(postgresSchemaTarget(db.url, "shop"));
  const orders: Table = { columns: src.tables.orders.columns, rows: src.tables.orders.rows.map((r, i) => (i === 7 ? [r[0], "999", ...r.slice(2)] : r)) };
  const withPassword = new URL(db.url);
  withPassword.password = "s3cret-pw";
  await assert.rejects(
    writePostgresDatabase({ url: withPassword.toString(), schema: "bad" }, src.schema, ["customers", "orders"], { customers: src.tables.customers, orders }),
    (e: unknown) => e instanceof DataError && /writing table orders failed: .*foreign key/.test(e.message) && !e.message.includes("s3cret-pw") && e.message.includes("***"),
  );
  const left = await c.query("SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = 'bad'");
  assert.equal(left.rows[0].n, 0, "the transaction was rolled back, schema included");
});

test("columns of a database read from files get SQL types from their values", () => {
  assert.equal(sqlTypeOf(["1", "-20", ""]), "bigint");
  assert.equal(sqlTypeOf(["1.5", "2"]), "double precision");
  assert.equal(sqlTypeOf(["2020-01-02"]), "date");
  assert.equal(sqlTypeOf(["2020-01-02 10:11:12.500", "2020-01-02 10:11"]), "timestamp");
  assert.equal(sqlTypeOf(["A", "1"]), "text");
  assert.equal(sqlTypeOf(["", ""]), "text");
  assert.equal(sqlTypeOf(["x"], "character varying(8)"), "text", "generated text may be longer than the real");
  assert.equal(sqlTypeOf(["1"], "numeric(8,2)"), "numeric(8,2)");
});
