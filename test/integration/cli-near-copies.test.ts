/**
 * Near-copy protection by default in the CLI, run as a user runs it: `synthd fit` keeps the
 * near-copy filter on the machine (an owner-only file holding no real value in the clear), plain
 * `synthd sample ID` drops near-copies with it and says so, `--no-filter` keeps them, `--real FILE`
 * still builds one, a machine without the filter samples unfiltered and says why, and contradicting
 * flags are refused.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { evaluate } from "../../src/sdk/evaluate";
import { SHARED_DATASETS, removeDir, runCli, startServer, tempDir, type ServerProcess } from "../../bench/harness";

const CARS = join(SHARED_DATASETS, "real", "cars.csv");
let server: ServerProcess;
let dir: string;
let env: Record<string, string>;

before(async () => {
  dir = tempDir();
  server = await startServer(join(dir, "store"));
  env = { SYNTHD_URL: server.url, SYNTHD_API_KEY: server.sandboxKey!, SYNTHD_FILTER_DIR: join(dir, "filters") };
});

after(async () => {
  await server?.kill("SIGTERM");
  removeDir(dir);
});

test("fit keeps the filter; plain sample drops near-copies, --no-filter keeps them, --real still works; another machine samples unfiltered", async () => {
  const fit = await runCli(["fit", CARS], env);
  assert.equal(fit.code, 0, fit.stderr);
  const id = fit.stdout.trim().split("\n").pop()!;
  assert.match(fit.stderr, /^near-copy filter: kept on this machine for synthd sample \(.*\.ncf, [\d.]+ MiB of keyed hashes, never sent\): rows equal to a real row on all columns but one are dropped/m);
  const file = join(dir, "filters", `${id}.ncf`);
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.equal(statSync(join(dir, "filters", "key")).mode & 0o777, 0o600);
  const stored = readFileSync(file).toString("latin1");
  for (const name of ["chevrolet chevelle malibu", "buick skylark 320", "Europe"]) assert.ok(!stored.includes(name), `"${name}" is not in the filter file`);

  const plain = join(dir, "cars-plain.csv");
  const unfiltered = join(dir, "cars-unfiltered.csv");
  const p = await runCli(["sample", id, "-n", "2000", "--seed", "3", "-o", plain], env);
  assert.equal(p.code, 0, p.stderr);
  assert.match(p.stderr, /^near-copy filter: on \(.*\.ncf\)/m);
  const u = await runCli(["sample", id, "-n", "2000", "--seed", "3", "--no-filter", "-o", unfiltered], env);
  assert.equal(u.code, 0, u.stderr);
  assert.match(u.stderr, /^near-copy filter: off \(--no-filter\)/m);
  const before = (await evaluate(CARS, unfiltered)).near_copies!;
  const after = (await evaluate(CARS, plain)).near_copies!;
  assert.ok(before.synthetic_near_copies > 0, "2,000 rows of cars hold near-copies without the filter");
  assert.equal(after.synthetic_near_copies, 0, `${before.synthetic_near_copies} near-copies without the filter`);
  assert.equal(readFileSync(plain, "utf8").trimEnd().split("\n").length - 1, 2000, "dropped rows are replaced");
  const again = await runCli(["sample", id, "-n", "2000", "--seed", "3"], env);
  assert.equal(again.stdout, readFileSync(plain, "utf8"), "the same seed gives the same rows with the stored filter");

  const real = await runCli(["sample", id, "-n", "500", "--seed", "4", "--real", CARS], { ...env, SYNTHD_FILTER_DIR: join(dir, "elsewhere") });
  assert.equal(real.code, 0, real.stderr);
  assert.match(real.stderr, /^near-copy filter: on, from .*cars\.csv: /m);
  const elsewhere = await runCli(["sample", id, "-n", "10", "--seed", "4"], { ...env, SYNTHD_FILTER_DIR: join(dir, "elsewhere") });
  assert.equal(elsewhere.code, 0, elsewhere.stderr);
  assert.match(elsewhere.stderr, /^near-copy filter: off \(no filter for mdl_\w+ in .*elsewhere: synthd fit keeps it on the machine that fitted; give --real FILE/m);
  assert.deepEqual(readdirSync(join(dir, "filters")).sort(), ["key", `${id}.ncf`], "sample writes nothing there");

  const both = await runCli(["sample", id, "-n", "10", "--real", CARS, "--no-filter"], env);
  assert.equal(both.code, 1);
  assert.match(both.stderr, /--real and --no-filter contradict each other/);
  const seeded = await runCli(["sample", id, "--seed-data", CARS, "--real", CARS], env);
  assert.equal(seeded.code, 1);
  assert.match(seeded.stderr, /--real cannot be combined with --seed-data/);
});
