/**
 * Input formats (issue 42, `src/sdk/io/inputs.ts`, `typed-inputs.ts`, `postgres-input.ts`): the
 * same rows as CSV, gzip CSV, JSON Lines, a PostgreSQL table and a Parquet file give the same
 * metadata; Arrow and Parquet types say more where the text alone cannot (a dictionary of
 * numeric-looking codes is categorical, a string column of digits is not a number); a bad file is
 * a DataError, never a crash.
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { Client } from "pg";
import * as arrow from "apache-arrow";
import { DataError, extractMetadata } from "../src/sdk";
import { analyzeTable } from "../src/sdk/metadata/metadata";
import { readTable, tableRows } from "../src/sdk/io/csv";
import { inputFormatOfPath, type ReadProgress } from "../src/sdk/io/inputs";
import { timestampText } from "../src/sdk/io/postgres-input";
import { scaledText } from "../src/sdk/io/typed-inputs";
import { writeTables } from "../src/sdk/io/formats";
import { freshDatabase } from "./pg-helpers";

const dir = mkdtempSync(join(tmpdir(), "synthd-inputs-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const CITIES = ["Lyon", "Porto", "Oslo", "Graz"];
/** 120 rows: text with blanks, integers with blanks, 1-decimal floats, timestamps, dates, booleans. */
const ROWS = Array.from({ length: 120 }, (_, i) => ({
  city: i % 11 === 0 ? null : CITIES[(i * 7) % 4],
  age: i % 13 === 0 ? null : 18 + ((i * 37) % 60),
  score: Math.round(((i * 53) % 997) / 3) / 10,
  joined: `20${10 + (i % 12)}-0${1 + (i % 9)}-1${i % 10} 0${i % 10}:${10 + (i % 50)}:${10 + ((i * 7) % 50)}`,
  day: `2023-0${1 + (i % 9)}-2${i % 8}`,
  member: i % 3 === 0,
}));
const COLUMNS = Object.keys(ROWS[0]) as (keyof (typeof ROWS)[0])[];

function csvText(): string {
  return [COLUMNS.join(","), ...ROWS.map((r) => COLUMNS.map((c) => (r[c] === null ? "" : String(r[c]))).join(","))].join("\n") + "\n";
}

test("the same rows as CSV, gzip CSV, JSON Lines, a PostgreSQL table and a Parquet file give the same metadata", async () => {
  const csv = join(dir, "t.csv");
  writeFileSync(csv, csvText());
  const gz = join(dir, "t.csv.gz");
  writeFileSync(gz, gzipSync(csvText()));
  const jsonl = join(dir, "t.jsonl");
  writeFileSync(jsonl, ROWS.map((r) => JSON.stringify(r)).join("\n") + "\n");
  const expected = await extractMetadata(csv);
  assert.deepEqual(
    COLUMNS.map((c) => expected.column_stats![c].type),
    ["categorical", "numerical", "numerical", "datetime", "datetime", "categorical"],
    "the table has every kind",
  );
  assert.deepEqual(await extractMetadata(gz), expected, "gzip CSV");
  assert.deepEqual(await extractMetadata(jsonl), expected, "JSON Lines");
  assert.deepEqual(await extractMetadata({ path: jsonl, format: "jsonl" }), expected, "JSON Lines by --format");
  const json = join(dir, "t.json");
  writeFileSync(json, JSON.stringify(ROWS, null, 2));
  assert.deepEqual(await extractMetadata(json), expected, "a JSON array of records");

  // Parquet, typed from the CSV's metadata by the SDK's writer: int64, double, timestamp, date, strings.
  const parquet = join(dir, "t.parquet");
  const table = { columns: [...COLUMNS], rows: ROWS.map((r) => COLUMNS.map((c) => (r[c] === null ? "" : String(r[c])))) };
  await writeTables(parquet, (async function* () { yield table; })(), { format: "parquet", metadata: expected });
  const fromParquet = await analyzeTable(parquet);
  assert.deepEqual(fromParquet.metadata, expected, "Parquet");

  const db = await freshDatabase();
  const c = new Client({ connectionString: db.url });
  try {
    await c.connect();
    await c.query("CREATE TABLE people (city text, age integer, score double precision, joined timestamp, day date, member boolean)");
    for (const r of ROWS) await c.query("INSERT INTO people VALUES ($1, $2, $3, $4, $5, $6)", COLUMNS.map((k) => r[k]));
    await c.end();
    const progress: ReadProgress[] = [];
    const fromTable = await extractMetadata({ url: db.url, table: "people" }, { onReadProgress: (p) => progress.push(p) });
    assert.deepEqual(fromTable, expected, "PostgreSQL table");
    assert.equal(progress.at(-1)?.rows, ROWS.length, "progress counts the rows read");
    const fromQuery = await extractMetadata({ url: db.url, query: "SELECT * FROM people WHERE age IS NOT NULL OR age IS NULL" });
    assert.deepEqual(fromQuery, expected, "PostgreSQL query");
    await assert.rejects(extractMetadata({ url: db.url, table: "nobody" }), (e: unknown) => e instanceof DataError && /table nobody: relation "nobody" does not exist/.test(e.message));
    await assert.rejects(extractMetadata({ url: db.url }), (e: unknown) => e instanceof DataError && /give a table or a query/.test(e.message));
  } finally {
    await c.end().catch(() => undefined);
    await db.drop();
  }
});

test("a PostgreSQL result of many cursor batches is read whole, an enum column is categorical and timestamps are datetimes", { timeout: 120_000 }, async () => {
  const db = await freshDatabase();
  const c = new Client({ connectionString: db.url });
  try {
    await c.connect();
    await c.query("CREATE TYPE tier AS ENUM ('1', '2', '3')");
    await c.query(
      "CREATE TABLE big AS SELECT i, (1 + i % 3)::text::tier AS tier, timestamptz '2024-01-01 00:00:00+00' + i * interval '90 seconds' AS at FROM generate_series(1, 10000) AS i",
    );
    const progress: ReadProgress[] = [];
    const a = await analyzeTable({ url: db.url, table: "big" }, { onReadProgress: (p) => progress.push(p) });
    assert.equal(a.n, 10000);
    assert.deepEqual(progress.map((p) => p.rows), [4096, 8192, 10000]);
    const kinds = Object.fromEntries(Object.entries(a.metadata.column_stats!).map(([k, s]) => [k, s.type]));
    assert.deepEqual(kinds, { i: "numerical", tier: "categorical", at: "datetime" });
    assert.equal((a.metadata.column_stats!.at as { format?: string }).format, "yyyy-MM-dd HH:mm:ss");
    assert.equal((a.metadata.column_stats!.at as { min?: number }).min, Date.UTC(2024, 0, 1, 0, 1, 30) / 1000, "read in UTC");
  } finally {
    await c.end().catch(() => undefined);
    await db.drop();
  }
});

test("Arrow and Parquet types say more than text: timestamps and dates are datetimes, a dictionary is categorical, a string of digits is not a number", async () => {
  const n = 60;
  const codes = Array.from({ length: n }, (_, i) => String(10 + (i % 5)));
  const file = join(dir, "typed.arrow");
  const t = new arrow.Table({
    grade: arrow.vectorFromArray(codes, new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32())),
    plan: arrow.vectorFromArray(Array.from({ length: n }, (_, i) => `${1000 + (i % 4)}`), new arrow.Utf8()),
    count: arrow.vectorFromArray(Array.from({ length: n }, (_, i) => BigInt(i % 9)), new arrow.Int64()),
    at: arrow.vectorFromArray(Array.from({ length: n }, (_, i) => new Date(Date.UTC(2024, 0, 1 + (i % 28), i % 24, 30, 0, i % 2 ? 250 : 0))), new arrow.TimestampMillisecond("UTC")),
    on: arrow.vectorFromArray(Array.from({ length: n }, (_, i) => (i % 10 === 0 ? null : new Date(Date.UTC(2024, 1, 1 + (i % 20))))), new arrow.DateDay()),
  });
  writeFileSync(file, arrow.tableToIPC(t, "file"));
  const m = await extractMetadata(file);
  const kinds = Object.fromEntries(Object.entries(m.column_stats!).map(([k, s]) => [k, s.type]));
  assert.deepEqual(kinds, { grade: "categorical", plan: "categorical", count: "numerical", at: "datetime", on: "datetime" });
  assert.equal((m.column_stats!.at as { format?: string }).format, "yyyy-MM-dd HH:mm:ss.SSS");
  assert.equal((m.column_stats!.on as { format?: string }).format, "yyyy-MM-dd");
  assert.equal(m.value_mappings!.on[""], m.cardinalities.on - 1, "null dates are the missing code");
  // The same cells as CSV text: the grades are numbers there, and the plans too (a header naming
  // a code would make them categories: `sdk-kinds`).
  const csv = join(dir, "typed.csv");
  const rows: string[][] = [];
  await readTable(file, () => undefined, (v) => void rows.push(v));
  writeFileSync(csv, "grade,plan,count,at,on\n" + rows.map((r) => r.join(",")).join("\n") + "\n");
  const text = await extractMetadata(csv);
  assert.equal(text.column_stats!.grade.type, "numerical");
  assert.equal(text.column_stats!.plan.type, "numerical");
  assert.deepEqual(text.column_stats!.at, m.column_stats!.at, "the timestamp text reads back the same");
  assert.deepEqual(rows[0], ["10", "1000", "0", "2024-01-01 00:30:00.000", ""]);
});

test("a Parquet file's timestamps without fractions read as whole seconds, its integers keep their grain", async () => {
  const file = join(dir, "whole.parquet");
  const metadata = await extractMetadata({
    columns: ["at", "n"],
    rows: Array.from({ length: 40 }, (_, i) => [`2024-03-0${1 + (i % 9)} 1${i % 10}:00:0${i % 10}`, String(i * 1000)]),
  });
  const rows = Array.from({ length: 40 }, (_, i) => [`2024-03-0${1 + (i % 9)} 1${i % 10}:00:0${i % 10}`, String(i * 1000)]);
  await writeTables(file, (async function* () { yield { columns: ["at", "n"], rows }; })(), { format: "parquet", metadata });
  const read = await analyzeTable(file);
  assert.deepEqual(read.metadata, metadata);
  assert.equal((read.metadata.column_stats!.at as { format?: string }).format, "yyyy-MM-dd HH:mm:ss");
});

test("Parquet pages in ZSTD, LZ4_RAW and Snappy (DuckDB's and Polars' defaults) read as the uncompressed file", async () => {
  const at = (codec: string): string => join(__dirname, "..", "..", "test", "data", "parquet", `${codec}.parquet`);
  const read = async (path: string): Promise<string[][]> => {
    const rows: string[][] = [];
    await readTable(path, (h) => void rows.push(h), (v) => void rows.push(v));
    return rows;
  };
  const plain = await read(at("uncompressed"));
  assert.equal(plain.length, 41, "a header and 40 rows");
  assert.deepEqual(plain[4], ["3", "city 3", "3.75", "2024-01-04"]);
  const expected = await extractMetadata(at("uncompressed"));
  for (const codec of ["zstd", "lz4_raw", "snappy"]) {
    assert.deepEqual(await read(at(codec)), plain, codec);
    assert.deepEqual(await extractMetadata(at(codec)), expected, codec);
  }
});

test("bad files are DataErrors naming the file: not Parquet, not Arrow, not gzip, not JSON, not an array of records", async () => {
  const cases: [string, string | Buffer, RegExp][] = [
    ["bad.parquet", "a,b\n1,2\n", /Cannot read .*bad\.parquet as Parquet: parquet file invalid/],
    ["bad.arrow", "a,b\n1,2\n", /Cannot read .*bad\.arrow as Arrow IPC/],
    ["bad.csv.gz", "a,b\n1,2\n", /bad\.csv\.gz is not valid gzip data/],
    ["bad.jsonl", '{"a": 1, "b": 2}\n{"a": \n', /bad\.jsonl line 2 is not JSON/],
    ["array.jsonl", "[1, 2]\n", /array\.jsonl line 1 is not a JSON object/],
    ["object.json", '{"a": [1, 2]}', /object\.json is not a JSON array of records/],
    ["cut.json", '[{"a": 1}, {"a": ', /cut\.json is not JSON/],
    ["numbers.json", "[1, 2]", /numbers\.json record 1 is not a JSON object/],
    ["empty.parquet", "", /empty\.parquet is empty/],
  ];
  for (const [name, body, message] of cases) {
    const file = join(dir, name);
    writeFileSync(file, body);
    await assert.rejects(extractMetadata(file), (e: unknown) => e instanceof DataError && message.test(e.message) && e.file === file, name);
  }
  await assert.rejects(extractMetadata(join(dir, "missing.parquet")), (e: unknown) => e instanceof DataError && /no such file/.test(e.message));
  await assert.rejects(extractMetadata({ url: "postgres://postgres@127.0.0.1:1/none", table: "t" }), (e: unknown) => e instanceof DataError && /Cannot connect to PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:1\/none/.test(e.message));
});

test("records that leave keys out: the header is every key in first-seen order, a left-out key blank, in JSON Lines and JSON arrays", async () => {
  const records = [{ country: "A", year: 1955, fertility: 7.4 }, { year: 1960, fertility: 7.3, p_fertility: 7.4, country: "A" }, { country: "B", year: 1955 }];
  const jsonl = join(dir, "keys.jsonl");
  writeFileSync(jsonl, records.map((r) => JSON.stringify(r)).join("\n") + "\n");
  const json = join(dir, "keys.json");
  writeFileSync(json, JSON.stringify(records));
  for (const file of [jsonl, json]) {
    const batches: string[][] = [];
    for await (const b of tableRows(file).batches) batches.push(...b.rows);
    assert.deepEqual(batches, [["country", "year", "fertility", "p_fertility"], ["A", "1955", "7.4", ""], ["A", "1960", "7.3", "7.4"], ["B", "1955", "", ""]], file);
  }
});

test("formats by name, PostgreSQL timestamps to the readers' text, and a PostgreSQL URI as a path asks for its table", () => {
  assert.deepEqual(
    ["a.csv", "a.TSV", "a.csv.gz", "a.tsv.gz", "a.jsonl", "a.ndjson", "a.json", "a.parquet", "a.feather", "a.arrow"].map(inputFormatOfPath),
    ["csv", "csv", "csv.gz", "csv.gz", "jsonl", "jsonl", "json", "parquet", "arrow", "arrow"],
  );
  assert.deepEqual([scaledText("1250", 2), scaledText("-5", 2), scaledText("7", 1)], ["12.50", "-0.05", "0.7"]);
  assert.equal(timestampText("2024-01-02 03:04:05"), "2024-01-02 03:04:05.000");
  assert.equal(timestampText("2024-01-02 03:04:05.5+00"), "2024-01-02 03:04:05.500");
  assert.equal(timestampText("2024-01-02 03:04:05.123456"), "2024-01-02 03:04:05.123");
  assert.throws(() => tableRows("postgres://u:secret@h/db"), (e: unknown) => e instanceof RangeError && /postgres:\/\/u:\*\*\*@h\/db: a PostgreSQL source needs its table or query/.test((e as Error).message));
});
