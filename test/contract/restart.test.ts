/**
 * Issue acceptance 3, with real processes (`synthd serve` via bench/harness.ts): SIGKILL the
 * server, start it again on the same data dir, and rate counters, usage (and its ledger),
 * idempotency records, keys and models are all still there. The server runs with the real 60/min
 * default (`SYNTHD_RATE_LIMIT` unset) and `SYNTHD_DOCS_URL` from the environment.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { removeDir, runCli, startServer, tempDir, waitFor, type ServerProcess } from "../../bench/harness";
import { assertEnvelope, assertError, call, QUICK, tinyMetadata } from "./harness";

const DOCS = "https://docs.restart.example";

test("Restart: after SIGKILL a new server keeps rate counters, usage, idempotency records, keys and models", async () => {
  const dir = tempDir("synthd-restart-");
  const data = join(dir, "store");
  const env = { SYNTHD_RATE_LIMIT: "", SYNTHD_DOCS_URL: DOCS };
  let server: ServerProcess = await startServer(data, ["--workers", "1"], 60_000, env);
  try {
    const sandbox = server.sandboxKey!;
    assert.match(sandbox, /^svc_test_/);
    const made = await runCli(["keys", "create", "--data-dir", data, "--org", "acme", "--env", "live"]);
    assert.equal(made.code, 0, made.stderr);
    const live = made.stdout.trim();
    const set = await runCli(["orgs", "set", "--data-dir", data, "--org", "acme", "--rate-limit", "1000", "--live-quota", "150"]);
    assert.equal(set.code, 0, set.stderr);
    assert.deepEqual(JSON.parse(set.stdout), { org: "acme", rate_limit: 1000, live_quota: 150, sandbox_quota: 100_000 });

    // A model created with an Idempotency-Key, trained to ready, 100 live rows generated.
    const body = { metadata: tinyMetadata(), config: QUICK };
    const ik = { "idempotency-key": "restart-create-1" };
    const created = await call(server.url, "/v1/models", { key: live, body, headers: ik });
    const model = assertEnvelope(created, 201, "model");
    await waitFor("the model to train", async () => {
      const r = await call(server.url, `/v1/models/${model.id}`, { key: live });
      return r.json.data.status === "training" ? undefined : r.json.data;
    }, 120_000, 100);
    assertEnvelope(await call(server.url, `/v1/models/${model.id}/generate`, { key: live, body: { embedding: { num_rows: 100 } } }), 200, "generation");

    // The default org spends its whole 60/min budget (sandbox key, the server's default limit).
    const burstStart = Date.now();
    const burst = await Promise.all(Array.from({ length: 80 }, () => call(server.url, "/v1/models", { key: sandbox })));
    const burstEnd = Date.now();
    assert.equal(burst.filter((r) => r.status === 200).length, 60);
    // The limiter writes each admitted count through without the request waiting for the commit
    // (docs/architecture.md, "Rate limiter"); the store commits writes in order, so a response
    // that waited for a later write (a model created) means the burst's counts are on disk. Without
    // this the SIGKILL could land before the last commit of the burst.
    const barrier = await call(server.url, "/v1/models", { key: live, body: { metadata: tinyMetadata(), config: QUICK } });
    assertEnvelope(barrier, 201, "model");

    await server.kill("SIGKILL");
    server = await startServer(data, ["--workers", "1"], 60_000, env);
    assert.equal(server.sandboxKey, undefined, "keys kept: no new sandbox key");

    // Rate counters: still spent. In the same minute a request is refused outright; a minute
    // boundary in between only lets the previous window's 60 decay by their overlap.
    const after = await call(server.url, "/v1/models", { key: sandbox });
    const sameWindow = Math.floor(burstStart / 60_000) === Math.floor(Date.now() / 60_000) && Math.floor(burstEnd / 60_000) === Math.floor(burstStart / 60_000);
    if (sameWindow) assertError(after, "rate_limit_exceeded", undefined, DOCS);
    else assert.ok(after.status === 429 || Number(after.headers.get("x-ratelimit-remaining")) < 59, "counts were not reset");

    // Keys and models.
    const got = await call(server.url, `/v1/models/${model.id}`, { key: live });
    assert.equal(assertEnvelope(got, 200, "model").status, "ready");
    // Idempotency records: the same POST replays the stored response.
    const replay = await call(server.url, "/v1/models", { key: live, body, headers: ik });
    assert.equal(replay.status, 201);
    assert.equal(replay.headers.get("idempotent-replayed"), "true");
    assert.equal(replay.text, created.text);
    // Usage: 100 of the 150-row plan are spent, so 60 more would cross it.
    assertError(await call(server.url, `/v1/models/${model.id}/generate`, { key: live, body: { embedding: { num_rows: 60 } } }), "quota_exceeded", undefined, DOCS);
    assertEnvelope(await call(server.url, `/v1/models/${model.id}/generate`, { key: live, body: { embedding: { num_rows: 50 } } }), 200, "generation");
    const usage = await runCli(["usage", "--data-dir", data, "--org", "acme", "--json"]);
    assert.equal(usage.code, 0, usage.stderr);
    const liveLine = JSON.parse(usage.stdout).usage.find((l: { env: string }) => l.env === "live");
    assert.equal(liveLine.rows, 150);
    assert.equal(liveLine.remaining, 0);
    assert.deepEqual(liveLine.ledger, { entries: 2, charged: 150, refunded: 0 });
  } finally {
    await server.kill("SIGKILL");
    removeDir(dir);
  }
});
