/**
 * `synthd fit`'s input flags, up to the Create Model request: `--delimiter`, `--encoding`, the
 * 20-row minimum, the model config chosen by the table's size; and `synthd evaluate --multiclass`.
 * `fit` checks the key and the server before it reads the file, so these runs talk to a stand-in
 * server that accepts the key check (one page of List Models) and refuses every create with a 400
 * (not retried): what is asserted is what `fit` read and printed before its create.
 */
import { after, before, test } from "node:test";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { Client } from "pg";
import { freshDatabase } from "./pg-helpers";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../bench/harness";
import { fitSource } from "../src/cli/commands/fit";

const dir = mkdtempSync(join(tmpdir(), "synthd-cli-fit-input-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
/** Client flags pointing at the stand-in server (set in `before`). */
const NOWHERE: string[] = [];
/** Requests the stand-in server received, as `METHOD path`. */
const received: string[] = [];
let standIn: Server;

before(async () => {
  standIn = createServer((req, res) => {
    received.push(`${req.method} ${req.url}`);
    req.resume();
    const now = new Date().toISOString();
    res.setHeader("content-type", "application/json");
    if (req.method === "GET" && (req.url ?? "").startsWith("/v1/models")) {
      res.end(JSON.stringify({ object: "list", data: [], metadata: { timestamp: now, has_more: false } }));
      return;
    }
    res.statusCode = 400;
    res.end(JSON.stringify({ error: { type: "invalid_request_error", code: "parameter_invalid", message: "stand-in: no models are made here", request_id: "req_standin" } }));
  });
  await new Promise<void>((ok) => standIn.listen(0, "127.0.0.1", ok));
  NOWHERE.push("--key", "svc_test_x", "--url", `http://127.0.0.1:${(standIn.address() as AddressInfo).port}`);
});
after(() => standIn.close());

function rows(n: number, d: string): string {
  return ["city", "n", "kind"].join(d) + "\n" + Array.from({ length: n }, (_, i) => [["Köln", "Málaga", "Zürich"][i % 3], String(i % 7), "ab"[i % 2]].join(d)).join("\n") + "\n";
}

/** The column lines `fit` prints on stderr: name and kind of each column. */
function kinds(stderr: string): string[] {
  return stderr
    .split("\n")
    .filter((l) => /^\S+\s+(categorical|numerical|datetime|id)\s/.test(l))
    .map((l) => l.split(/\s+/).slice(0, 2).join(" "));
}

test("fit reads a tab-separated Latin-1 file as three columns with --encoding latin1 (delimiter detected or given), and prints the config it chose", async () => {
  const file = join(dir, "cities.tsv");
  writeFileSync(file, Buffer.from(rows(406, "\t"), "latin1"));
  const plain = await runCli(["fit", file, ...NOWHERE]);
  assert.equal(plain.code, 1);
  assert.match(plain.stderr, /not valid UTF-8: byte 0xf6 .* give its encoding/);
  for (const extra of [[], ["--delimiter", "tab"], ["--delimiter", "\\t"]]) {
    const r = await runCli(["fit", file, "--encoding", "latin1", ...extra, ...NOWHERE]);
    assert.deepEqual(kinds(r.stderr), ["city categorical", "n numerical", "kind categorical"], r.stderr);
    assert.match(r.stderr, /^config: model_size small, max_epochs 15 \(chosen for 406 rows; --config sets them\)$/m);
    assert.equal(r.code, 1, "then the refused create");
  }
  const given = await runCli(["fit", file, "--encoding", "latin1", "--config", '{"max_epochs": 5}', ...NOWHERE]);
  assert.match(given.stderr, /^config: model_size small \(chosen for 406 rows; --config sets it\)$/m);
  const wrong = await runCli(["fit", file, "--encoding", "latin1", "--delimiter", ";", ...NOWHERE]);
  assert.match(wrong.stderr, /has 1 column; at least 2 are needed/);
  const bad = await runCli(["fit", file, "--delimiter", ";;", ...NOWHERE]);
  assert.match(bad.stderr, /--delimiter must be one character/);
});

test("fit reads gzip CSV, JSON Lines (by extension or --format) and a PostgreSQL table or query as the same three columns", async () => {
  const text = rows(60, ",");
  const gz = join(dir, "cities.csv.gz");
  writeFileSync(gz, gzipSync(text));
  const records = text.trim().split("\n").slice(1).map((l) => l.split(","));
  const jsonl = join(dir, "cities.jsonl");
  writeFileSync(jsonl, records.map(([city, n, kind]) => JSON.stringify({ city, n: Number(n), kind })).join("\n") + "\n");
  const txt = join(dir, "cities.txt");
  writeFileSync(txt, records.map(([city, n, kind]) => JSON.stringify({ city, n: Number(n), kind })).join("\n") + "\n");
  const expected = ["city categorical", "n numerical", "kind categorical"];
  for (const args of [[gz], [jsonl], [txt, "--format", "jsonl"]]) {
    const r = await runCli(["fit", ...args, ...NOWHERE]);
    assert.deepEqual(kinds(r.stderr), expected, `${args.join(" ")}: ${r.stderr}`);
  }
  const db = await freshDatabase();
  const c = new Client({ connectionString: db.url });
  try {
    await c.connect();
    await c.query("CREATE TABLE cities (city text, n integer, kind text)");
    for (const [city, n, kind] of records) await c.query("INSERT INTO cities VALUES ($1, $2, $3)", [city, Number(n), kind]);
    for (const args of [["--table", "cities"], ["--query", "SELECT city, n, kind FROM cities"]]) {
      const r = await runCli(["fit", db.url, ...args, ...NOWHERE]);
      assert.deepEqual(kinds(r.stderr), expected, `${args.join(" ")}: ${r.stderr}`);
    }
  } finally {
    await c.end().catch(() => undefined);
    await db.drop();
  }
  // A URI alone is a whole database (a schema's tables); an empty schema says so.
  const noTable = await runCli(["fit", "postgres://postgres:pw@127.0.0.1/test?schema=synthd_no_such_schema", ...NOWHERE]);
  assert.match(noTable.stderr, /postgres:\/\/postgres:\*\*\*@127\.0\.0\.1\/test: schema synthd_no_such_schema has no tables/);
  const schemaAndTable = await runCli(["fit", "postgres://postgres@127.0.0.1/test", "--table", "t", "--schema", "s", ...NOWHERE]);
  assert.match(schemaAndTable.stderr, /--schema reads a whole PostgreSQL schema/);
  const fileTable = await runCli(["fit", gz, "--table", "cities", ...NOWHERE]);
  assert.match(fileTable.stderr, /--table and --query read a PostgreSQL database/);
  const badFormat = await runCli(["fit", gz, "--format", "xlsx", ...NOWHERE]);
  assert.match(badFormat.stderr, /--format.*xlsx.*Allowed choices are csv, csv\.gz, jsonl, json, parquet, arrow/s);
});

test("fit refuses a table of fewer than 20 rows before any request, saying why", async () => {
  const file = join(dir, "one.csv");
  writeFileSync(file, rows(1, ","));
  received.length = 0;
  const r = await runCli(["fit", file, ...NOWHERE]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /has 1 data row; at least 20 are needed to model it, because .* copies of the rows/);
  assert.ok(!received.some((q) => q.startsWith("POST")), `no model was created: ${received.join(", ")}`);
});

test("evaluate --multiclass prints the macro ROC AUC and each class's", async () => {
  const real = join(dir, "mc.csv");
  writeFileSync(real, "a,b,label\n" + Array.from({ length: 90 }, (_, i) => `${"pqr"[i % 3]},${i % 5},${["cat", "dog", "eel"][i % 3]}`).join("\n") + "\n");
  const r = await runCli(["evaluate", real, real, "--target", "label", "--multiclass"]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /predict each class of label, one against the rest, on the real rows \(90\)\n {2}macro ROC AUC 1\.0000\n {2}cat: ROC AUC 1\.0000 \(30 rows\)/);
  const both = await runCli(["evaluate", real, real, "--target", "label", "--multiclass", "--positive", "cat"]);
  assert.equal(both.code, 1);
  assert.match(both.stderr, /multiclass .* no positive value/);
});

test("fit's source: a postgres:// URI with exactly one of --table and --query, a file with --format or its extension", () => {
  assert.deepEqual(fitSource("postgres://u@h/db", { table: "s.t" }), { url: "postgres://u@h/db", table: "s.t" });
  assert.deepEqual(fitSource("postgresql://u@h/db", { query: "SELECT 1" }), { url: "postgresql://u@h/db", query: "SELECT 1" });
  assert.deepEqual(fitSource("dump.txt", { format: "jsonl" }), { path: "dump.txt", format: "jsonl" });
  assert.equal(fitSource("t.parquet", {}), "t.parquet");
  assert.throws(() => fitSource("postgres://u:pw@h/db", { table: "t", query: "SELECT 1" }), /^Error: postgres:\/\/u:\*\*\*@h\/db: give --table or --query/);
  assert.throws(() => fitSource("postgres://u@h/db", { table: "t", format: "csv" }), /--format is for files/);
  assert.throws(() => fitSource("t.csv", { query: "SELECT 1" }), /--table and --query read a PostgreSQL database/);
});
