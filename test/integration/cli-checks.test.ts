/**
 * What the CLI checks before it spends the user's time or quota, and what it says: a missing
 * `--columns` file, a `--config` typo or bad value named as the flag, a wrong key found before the
 * CSV is scanned, an `-o` that cannot be written found before any request; and a progress bar on a
 * non-terminal that prints each state once.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ADULT_CSV, removeDir, runCli, startServer, tempDir, type ServerProcess } from "../../bench/harness";

let server: ServerProcess;
let dir: string;
let env: Record<string, string>;
let csv: string;

/** The table of column kinds `fit` prints once it has scanned the CSV. */
const COLUMN_TABLE = /^column +kind +codes +details$/m;

before(async () => {
  dir = tempDir();
  server = await startServer(join(dir, "store"));
  env = { SYNTHD_URL: server.url, SYNTHD_API_KEY: server.sandboxKey! };
  csv = join(dir, "adult-1500.csv");
  writeFileSync(csv, readFileSync(ADULT_CSV, "utf8").split("\n").slice(0, 1501).join("\n") + "\n");
});

after(async () => {
  await server?.kill("SIGTERM");
  removeDir(dir);
});

const modelCount = async (): Promise<number> => (await runCli(["models", "ls"], env)).stdout.trim().split("\n").length - 1;

test("fit --columns FILE that does not exist says the file is missing, before the CSV is read", async () => {
  const missing = join(dir, "cols.json");
  const r = await runCli(["fit", csv, "--columns", missing], env);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^synthd: --columns: no file named \S*cols\.json \(give a JSON file or inline JSON/m);
  assert.doesNotMatch(r.stderr, /Unexpected token|not valid JSON/);
  assert.doesNotMatch(r.stderr, COLUMN_TABLE);
  // a file that exists but is not JSON is named as such
  const bad = join(dir, "bad-cols.json");
  writeFileSync(bad, "age: numerical\n");
  const r2 = await runCli(["fit", csv, "--columns", bad], env);
  assert.equal(r2.code, 1);
  assert.match(r2.stderr, /--columns: \S*bad-cols\.json is not valid JSON/);
});

test("a --config typo names the flag and the setting meant, before the CSV is read; a bad value names the flag, not the request body", async () => {
  const before = await modelCount();
  const typo = await runCli(["fit", csv, "--config", '{"max_epoch": 2}'], env);
  assert.equal(typo.code, 1);
  assert.match(typo.stderr, /^synthd: --config\.max_epoch is not a training setting \(did you mean "max_epochs"\?\); the settings are .*max_epochs/m);
  assert.doesNotMatch(typo.stderr, COLUMN_TABLE);
  const value = await runCli(["fit", csv, "--config", '{"model_size": "small", "max_epochs": 0}'], env);
  assert.equal(value.code, 1);
  assert.match(value.stderr, /--config\.max_epochs/);
  assert.doesNotMatch(value.stderr, /body\.config/);
  assert.match(value.stderr, /\(parameter_invalid\)$/m);
  assert.equal(await modelCount(), before, "no model was created");
});

test("fit with a wrong key fails on the key before it scans the CSV", async () => {
  const r = await runCli(["fit", csv, "--key", `svc_test_${"Z".repeat(32)}`], env);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /\(api_key_invalid\)$/m);
  assert.doesNotMatch(r.stderr, COLUMN_TABLE, "the column table is printed only after the key was accepted");
});

test("sample -o into a directory that does not exist, or onto a directory, fails before any request and writes nothing", async () => {
  // An unknown model: had a request been made, the answer would be model_not_found.
  const nowhere = join(dir, "no", "such", "x.csv");
  const r = await runCli(["sample", "mdl_000000000000", "-n", "20000", "-o", nowhere], env);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^synthd: -o \S*x\.csv: the directory \S*such does not exist\.$/m);
  assert.doesNotMatch(r.stderr, /model_not_found/);
  assert.equal(existsSync(join(dir, "no")), false);
  const onDir = await runCli(["sample", "mdl_000000000000", "-n", "5", "-o", dir], env);
  assert.equal(onDir.code, 1);
  assert.match(onDir.stderr, /is a directory; give a file name/);
  const impute = await runCli(["impute", "mdl_000000000000", csv, "-o", nowhere], env);
  assert.equal(impute.code, 1);
  assert.match(impute.stderr, /does not exist/);
  assert.doesNotMatch(impute.stderr, /model_not_found/);
});

test("on a non-terminal, sample's progress bar prints each state once (one line for a one-batch sample)", async () => {
  const fit = await runCli(["fit", csv, "--config", '{"model_size":"small","max_epochs":1}'], env);
  assert.equal(fit.code, 0, fit.stderr);
  const id = fit.stdout.trim().split("\n").pop()!;
  const training = fit.stderr.split("\n").filter((l) => l.startsWith("training |"));
  assert.ok(training.length >= 1, fit.stderr);
  assert.ok(training.every((l, i) => i === 0 || l !== training[i - 1]), `no line repeats the one before it:\n${training.join("\n")}`);
  const out = join(dir, "one-batch.csv");
  // Without the near-copy filter, whose dropped rows would be topped up by a second batch.
  const s = await runCli(["sample", id, "-n", "20000", "-o", out, "--no-filter"], env);
  assert.equal(s.code, 0, s.stderr);
  const bars = s.stderr.split("\n").filter((l) => l.startsWith("sampling |"));
  assert.deepEqual(bars.length, 1, s.stderr);
  assert.match(bars[0], /\| 20000\/20000 rows$/);
  assert.match(s.stderr, /^wrote 20000 rows to /m);
  assert.deepEqual(readdirSync(dir).filter((f) => f.endsWith(".partial")), []);
});
