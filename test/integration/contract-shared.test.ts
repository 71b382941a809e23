/**
 * Issue 14, acceptance 1: the contract's tests (`test/contract/`) pass against a front end of the
 * shared topology as they pass against the embedded server. Runs them again in a child test run
 * with `SYNTHD_CONTRACT_TOPOLOGY=shared`, where the harness (test/contract/harness.ts) serves them
 * from a front end on PostgreSQL (a fresh database), Redis rate limits (a key prefix of its own),
 * the BullMQ training queue and two workers. Left out: `restart.test.ts`, whose subject is the
 * embedded store surviving a SIGKILL of its one process (the shared topology's counterpart, a
 * front end or worker killed, is test/integration/shared-topology.test.ts). A few contract tests
 * open their own LMDB store on purpose (crash recovery of the embedded store); they run unchanged.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";

test("the contract's tests pass against a front end of the shared topology (PostgreSQL, Redis, BullMQ, two workers)", () => {
  const dir = join(__dirname, "..", "contract");
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".test.js") && f !== "restart.test.js")
    .map((f) => join(dir, f));
  assert.ok(files.length >= 8, `contract test files found: ${files.length}`);
  // NODE_TEST_CONTEXT marks a test runner's child; the nested run must be a runner of its own.
  const { NODE_TEST_CONTEXT: _child, ...env } = process.env;
  // Two files at a time, as npm test runs them against the embedded server (test/run-suite.sh):
  // each file has its own front end, database and key prefix (40 s one at a time, 29 s two).
  // --test-timeout: a contract file that hangs fails on its own (node 20 bounds each file as a
  // whole), well inside this run's own bound below.
  const run = spawnSync(process.execPath, ["--test", "--test-concurrency=2", "--test-timeout=600000", "--test-reporter=tap", ...files], {
    env: { ...env, SYNTHD_CONTRACT_TOPOLOGY: "shared" },
    encoding: "utf8",
    // Only against a hang: on 2 busy cores the run takes over 200 s (the embedded suite's time
    // plus PostgreSQL, Redis and BullMQ round trips), so 240 s failed runs that were merely slow.
    timeout: 900_000,
    maxBuffer: 64 * 2 ** 20,
  });
  const out = `${run.stdout}${run.stderr}`;
  const lines = out.split("\n");
  const failed = lines.filter((l) => /^\s*not ok /.test(l));
  const pass = Number(/^# pass (\d+)/m.exec(out)?.[1] ?? 0);
  // Each failure with its YAML block (error, expected, actual, stack), innermost first: the end of
  // the output alone shows only the outermost files' summaries.
  const details = lines
    .flatMap((l, i) => {
      if (!/^\s*not ok /.test(l)) return [];
      const end = lines.findIndex((m, j) => j > i && /^\s*\.\.\.$/.test(m));
      return [lines.slice(i, end < 0 ? i + 40 : Math.min(end, i + 40)).join("\n")];
    })
    .join("\n")
    .slice(0, 12_000);
  assert.deepEqual(failed, [], `contract tests failing against the shared topology:\n${details}\n${out.slice(-2000)}`);
  assert.equal(run.status, 0, out.slice(-4000));
  assert.ok(pass >= 150, `only ${pass} contract tests ran`);
});
