/**
 * The CLI flow of DESIGN §1, run as a user runs it (child processes), plus the bad-input rule of
 * the main-job issue: the CLI exits non-zero with one clear sentence and writes nothing half-done.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { tableFromIPC } from "apache-arrow";
import { parquetMetadata, parquetReadObjects } from "hyparquet";
import { ADULT_CSV, removeDir, runCli, startServer, tempDir, type ServerProcess } from "../../bench/harness";

let server: ServerProcess;
let dir: string;
let env: Record<string, string>;
let csv: string;
let header: string[];

before(async () => {
  dir = tempDir();
  server = await startServer(join(dir, "store"));
  env = { SYNTHD_URL: server.url, SYNTHD_API_KEY: server.sandboxKey! };
  const lines = readFileSync(ADULT_CSV, "utf8").split("\n");
  header = lines[0].split(",");
  csv = join(dir, "adult-2000.csv");
  writeFileSync(csv, lines.slice(0, 2001).join("\n") + "\n");
});

after(async () => {
  await server?.kill("SIGTERM");
  removeDir(dir);
});

test("serve prints the sandbox key on first start; keys create prints a working key alone on stdout", async () => {
  assert.match(server.sandboxKey!, /^svc_test_[A-Za-z0-9]{32}$/);
  const r = await runCli(["keys", "create", "--data-dir", join(dir, "store"), "--org", "acme", "--env", "live"]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^svc_live_[A-Za-z0-9]{32}\n$/);
  const ls = await runCli(["models", "ls"], { ...env, SYNTHD_API_KEY: r.stdout.trim() });
  assert.equal(ls.code, 0, ls.stderr);
  assert.equal(ls.stdout.trim().split("\n").length, 1, "a new org sees no models (header only)");
});

test("fit prints the model id last; sample writes N rows with the original columns, the same seed twice gives the same file", async () => {
  const fit = await runCli(["fit", csv, "--config", '{"model_size":"small","max_epochs":2}'], env);
  assert.equal(fit.code, 0, fit.stderr);
  const id = fit.stdout.trim().split("\n").pop()!;
  assert.match(id, /^mdl_[0-9a-f]{12}$/);
  assert.match(fit.stderr, /^column +kind +codes +details$/m, "fit prints the column kinds");
  assert.match(fit.stderr, /^age +numerical +\d+ +17 \.\. \d+, integers(, ranges of \d+ \([\w-]+, bin\) cells)?$/m);
  assert.match(fit.stderr, /^sex +categorical +2 +2 values with a code$/m);
  const out1 = join(dir, "out1.csv");
  const out2 = join(dir, "out2.csv");
  for (const out of [out1, out2]) {
    const s = await runCli(["sample", id, "-n", "10000", "--seed", "7", "-o", out], env);
    assert.equal(s.code, 0, s.stderr);
  }
  const text = readFileSync(out1, "utf8");
  assert.equal(text, readFileSync(out2, "utf8"), "same seed, same file");
  const lines = text.trimEnd().split("\n");
  assert.equal(lines.length, 10_001);
  assert.deepEqual(lines[0].split(","), header);
  const age = header.indexOf("age");
  for (const l of lines.slice(1, 200)) assert.match(l.split(",")[age], /^\d+$/);
  const get = await runCli(["models", "get", id], env);
  assert.equal(JSON.parse(get.stdout).status, "ready");
  // models ls tells models apart by what they were fitted on: the file's name, its rows, its columns.
  const ls = (await runCli(["models", "ls"], env)).stdout.split("\n");
  assert.match(ls[0], /^ID +SOURCE +ROWS +COLUMNS +STATUS /);
  const dataRows = readFileSync(csv, "utf8").trimEnd().split("\n").length - 1;
  const mine = ls.find((l) => l.startsWith(id));
  assert.ok(mine !== undefined, ls.join("\n"));
  assert.deepEqual(mine.split(/ +/).slice(1, 5), [basename(csv), String(dataRows), String(header.length), "ready"]);
  const other = await runCli(["sample", id, "-n", "50", "--seed", "8"], env);
  assert.equal(other.code, 0, other.stderr);
  assert.equal(other.stdout.trimEnd().split("\n").length, 51, "without -o the CSV goes to stdout");
});

const BAD_INPUTS: [string, string | Buffer][] = [
  ["an empty file", ""],
  ["a header without rows", "a,b\n"],
  ["a single column", "a\n1\n2\n"],
  ["ragged rows", "a,b\n1,2\n3\n"],
  ["a table too small to model (2 rows)", "a,b\n1,\n2,\n"],
  ["non-UTF-8 bytes", Buffer.from([0x61, 0x2c, 0x62, 0x0a, 0x31, 0x2c, 0xff, 0xfe, 0x0a])],
];

const dates = (bad: number): string =>
  "d,x\n" + Array.from({ length: 40 }, (_, i) => `${i === bad ? "03/04/2001" : `2001-01-${String(1 + (i % 28)).padStart(2, "0")}`},${i % 2}`).join("\n") + "\n";

/** Issue 10's bad input: each fails with one sentence naming what is wrong, before any model exists. */
const BAD_KINDS: [string, string, string[], RegExp][] = [
  ["mixed date formats in one column", dates(5), [], /line 7, column "d": "03\/04\/2001"/],
  ["an override naming an unknown column", dates(-1), ["--columns", '{"nope": {"type": "id"}}'], /no column "nope"/],
  ["a datetime format that does not parse the column", dates(-1), ["--columns", '{"d": {"type": "datetime", "format": "dd.MM.yyyy"}}'], /line 2, column "d"/],
  ["--columns that is not JSON", dates(-1), ["--columns", "{nope"], /--columns is not valid JSON/],
  ["--columns FILE naming an unknown column", dates(-1), ["--columns", "COLUMNS_FILE"], /no column "ghost"/],
];

for (const [what, content, args, message] of [...BAD_INPUTS.map(([w, c]): [string, string | Buffer, string[], RegExp] => [w, c, [], /./]), ...BAD_KINDS]) {
  test(`fit on ${what} exits non-zero with one sentence and creates no model`, async () => {
    const f = join(dir, "bad.csv");
    writeFileSync(f, content);
    const countModels = async (): Promise<number> => (await runCli(["models", "ls"], env)).stdout.trim().split("\n").length;
    const before = await countModels();
    const columnsFile = join(dir, "columns.json");
    writeFileSync(columnsFile, JSON.stringify({ ghost: { type: "categorical" } }));
    const r = await runCli(["fit", f, ...args.map((a) => (a === "COLUMNS_FILE" ? columnsFile : a))], env);
    assert.match(r.stderr, message);
    assert.equal(await countModels(), before, "no model was created");
    assert.equal(r.code, 1);
    assert.equal(r.stdout, "");
    const lines = r.stderr.trim().split("\n");
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0], /^synthd: \S.*\.?/);
  });
}

test("fit on a missing file, and sample of an unknown model, fail cleanly and leave no output file", async () => {
  const missing = await runCli(["fit", join(dir, "nope.csv")], env);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /^synthd: .*nope\.csv/);
  const out = join(dir, "never.csv");
  const s = await runCli(["sample", "mdl_000000000000", "-n", "10", "-o", out], env);
  assert.equal(s.code, 1);
  assert.match(s.stderr, /model_not_found/);
  assert.equal(existsSync(out), false);
  assert.deepEqual(readdirSync(dir).filter((f) => f.includes("never")), []);
});

test("sample -o x.parquet writes Parquet, --format arrow writes an Arrow IPC file, impute -o y.parquet too; typed values equal the CSV of the same seed", async () => {
  const fit = await runCli(["fit", csv, "--config", '{"model_size":"small","max_epochs":1}'], env);
  assert.equal(fit.code, 0, fit.stderr);
  const id = fit.stdout.trim().split("\n").pop()!;
  const pq = join(dir, "formats.parquet");
  const arrow = join(dir, "formats.out");
  const runs = [
    ["sample", id, "-n", "3000", "--seed", "5", "-o", pq],
    ["sample", id, "-n", "3000", "--seed", "5", "-o", arrow, "--format", "arrow"],
  ];
  for (const args of runs) {
    const r = await runCli(args, env);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /wrote 3000 rows to /);
  }
  const text = await runCli(["sample", id, "-n", "3000", "--seed", "5"], env);
  const age = header.indexOf("age");
  const ages = text.stdout.trimEnd().split("\n").slice(1).map((l) => BigInt(l.split(",")[age]));
  assert.equal(ages.length, 3000);

  const bytes = readFileSync(pq);
  assert.equal(bytes.subarray(0, 4).toString(), "PAR1");
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  assert.equal(Number(parquetMetadata(file).num_rows), 3000);
  const rows = (await parquetReadObjects({ file, columns: ["age", "sex"] })) as { age: bigint; sex: string }[];
  assert.deepEqual(rows.map((r) => r.age), ages, "Parquet ages (INT64) are the CSV's");

  const ipc = readFileSync(arrow);
  assert.equal(ipc.subarray(0, 6).toString(), "ARROW1", "--format arrow wins over the .out extension");
  const table = tableFromIPC(ipc);
  assert.equal(String(table.schema.fields[age].type), "Int64");
  assert.deepEqual([...table.getChild("age")!], ages, "Arrow ages are the CSV's");

  const seed = join(dir, "formats-seed.csv");
  writeFileSync(seed, "age,sex\n40,\n,Female\n");
  const out = join(dir, "formats-imputed.parquet");
  const i = await runCli(["impute", id, seed, "-o", out, "--seed", "2"], env);
  assert.equal(i.code, 0, i.stderr);
  const imputed = readFileSync(out);
  const imputedRows = (await parquetReadObjects({ file: imputed.buffer.slice(imputed.byteOffset, imputed.byteOffset + imputed.byteLength) as ArrayBuffer })) as Record<string, unknown>[];
  assert.deepEqual([imputedRows.length, imputedRows[0].age, imputedRows[1].sex], [2, 40n, "Female"]);
  assert.deepEqual(readdirSync(dir).filter((f) => f.endsWith(".partial")), [], "no temporary files left");
});
