/**
 * `serve` (DESIGN §1): first start on an empty data dir creates org `default` with a sandbox key
 * that works against the API; later starts create none; models left in training are resumed.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { serve } from "../src/server/serve";
import type { EngineFactoryOptions } from "../src/server/process";
import { call, FakeEngine } from "./server-helpers";

test("first successful start creates a working sandbox key, later starts do not; resumeAll runs at start", async () => {
  const root = mkdtempSync(join(tmpdir(), "synthd-serve-"));
  const dataDir = join(root, "nested", "data");
  const seen: EngineFactoryOptions[] = [];
  let resumed = 0;
  const engineFactory = async (o: EngineFactoryOptions) => {
    seen.push(o);
    const e = new FakeEngine();
    e.resumeAll = async () => (resumed++, 0);
    return e;
  };
  const base = { host: "127.0.0.1", port: 0, dataDir, workers: 2, handleSignals: false, logger: pino({ level: "silent" }), engineFactory };
  try {
    const blocker = await serve({ ...base, dataDir: join(root, "blocker") });
    try {
      await assert.rejects(serve({ ...base, port: blocker.port }), /cannot listen/);
    } finally {
      await blocker.close();
    }
    const first = await serve(base);
    try {
      assert.match(first.url, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.equal(first.url, `http://127.0.0.1:${first.port}`);
      assert.match(first.sandboxKey ?? "", /^svc_test_[A-Za-z0-9]{32}$/);
      const r = await call(first.url, "/v1/models", { key: first.sandboxKey });
      assert.equal(r.status, 200);
      assert.deepEqual(r.json.data, []);
      assert.equal(r.json.error?.doc_url, undefined);
      const bad = await call(first.url, "/v1/models", { key: "svc_test_x" });
      assert.equal(bad.json.error.doc_url, `${first.url}/docs/errors#api_key_invalid`);
    } finally {
      await first.close();
    }
    assert.equal(seen.at(-1)!.dataDir, dataDir);
    assert.equal(seen.at(-1)!.workers, 2);
    const second = await serve({ ...base, docsUrl: "https://docs.example.com" });
    try {
      assert.equal(second.sandboxKey, undefined);
      const bad = await call(second.url, "/v1/models", { key: "svc_test_x" });
      assert.equal(bad.json.error.doc_url, "https://docs.example.com/docs/errors#api_key_invalid");
    } finally {
      await second.close();
      await second.close(); // idempotent
    }
    assert.equal(resumed, 4, "once per engine started (blocker, failed start, first, second)");
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
