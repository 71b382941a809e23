/**
 * Contract: "Errors" — the error envelope table, the error types table, the error codes table
 * (every code reached over HTTP with its status and type), the rules under it, the DESIGN §3
 * extensions (413, 404 route_not_found, 405), internal_error in and out of debug mode, doc_url
 * from SYNTHD_DOCS_URL, and the client-side errors table (through the SDK).
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import pino from "pino";
import { EngineUnavailableError } from "../../src/engine/engine";
import { serve } from "../../src/server/serve";
import { Synthd, TrainingFailedError, TrainingTimeoutError, SynthdError } from "../../src/sdk";
import { ERROR_CODES, type ErrorCode } from "../../src/contract";
import {
  assertEnvelope,
  assertError,
  call,
  createModel,
  QUICK,
  readyModel,
  REQUEST_ID,
  startContract,
  tinyMetadata,
  type Contract,
  type Res,
} from "./harness";
import type { Model } from "../../src/contract";

const DOCS = "https://docs.synthd.example";
let c: Contract;
let ready: Model;
/** One response per error code, reached over HTTP in `before`. */
const seen = new Map<ErrorCode, Res>();

before(async () => {
  c = await startContract({ docsUrl: DOCS, maxBodyBytes: 64 * 1024 });
  ready = await readyModel(c);
  const gen = (id: string, body: unknown, key = c.keys.test) => call(c.url, `/v1/models/${id}/generate`, { key, body });

  seen.set("api_key_missing", await call(c.url, "/v1/models"));
  seen.set("api_key_invalid", await call(c.url, "/v1/models", { key: `svc_test_${"Z".repeat(32)}` }));
  seen.set("parameter_invalid", await call(c.url, "/v1/models", { key: c.keys.test, body: { metadata: tinyMetadata(), config: { batch_size: 0 } } }));
  seen.set("model_not_found", await call(c.url, "/v1/models/mdl_abcdefabcdef", { key: c.keys.test }));
  const failed = await createModel(c);
  await c.engine.stop(failed.id);
  await c.store.updateModel(failed.id, { status: "failed", error: { code: "training_failed", message: "diverged" } });
  seen.set("model_not_ready", await gen(failed.id, { embedding: { num_rows: 1 } }));
  c.engine.fail.generate = new EngineUnavailableError("all workers down", 4);
  seen.set("training_service_unavailable", await gen(ready.id, { embedding: { num_rows: 1 } }));
  const { deferred } = await import("./harness");
  const gate = deferred();
  c.engine.gate.generate = gate.promise;
  const held = gen(ready.id, { embedding: { num_rows: 1 } }, c.keys.test);
  const heldKeyed = call(c.url, `/v1/models/${ready.id}/generate`, { key: c.keys.test, body: { embedding: { num_rows: 2 } }, headers: { "idempotency-key": "errors-409" } });
  for (let i = 0; i < 400 && (await c.store.getIdempotency({ org: "acme", env: "test", key: "errors-409" }))?.state !== "in_flight"; i++) {
    await new Promise((r) => setTimeout(r, 5));
  }
  seen.set("idempotency_key_in_use", await call(c.url, `/v1/models/${ready.id}/generate`, { key: c.keys.test, body: { embedding: { num_rows: 2 } }, headers: { "idempotency-key": "errors-409" } }));
  delete c.engine.gate.generate;
  gate.resolve();
  await held;
  await heldKeyed;
  const spent = await c.newKey("spent", "live");
  await c.store.setOrgLimits("spent", { live_quota: 0 });
  seen.set("quota_exceeded", await call(c.url, "/v1/models", { key: spent, body: { metadata: tinyMetadata(), config: QUICK } }));
  const slow = await c.newKey("slow", "test", 1);
  c.clock.freeze(Date.UTC(2032, 5, 1, 12, 0, 30));
  await call(c.url, "/v1/models", { key: slow });
  seen.set("rate_limit_exceeded", await call(c.url, "/v1/models", { key: slow }));
  c.clock.reset();
  c.engine.fail.generate = new Error("tensor of shape [3, 7] exploded: secret detail");
  seen.set("internal_error", await gen(ready.id, { embedding: { num_rows: 1 } }));
  seen.set("request_too_large", await call(c.url, "/v1/models", { key: c.keys.test, body: { metadata: tinyMetadata(), pad: "x".repeat(70_000) } }));
  seen.set("route_not_found", await call(c.url, "/v1/modelz", { key: c.keys.test }));
  seen.set("method_not_allowed", await call(c.url, "/v1/models", { key: c.keys.test, method: "PUT" }));
});

after(async () => {
  await c.stop();
});

describe("Error envelope", () => {
  test("Error envelope error.type: string, the category", () => {
    for (const [code, r] of seen) assert.equal(r.json.error.type, ERROR_CODES[code].type, code);
  });
  test("Error envelope error.code: string, machine-readable, stable, unique", () => {
    for (const [code, r] of seen) assert.equal(r.json.error.code, code);
    assert.equal(new Set(Object.keys(ERROR_CODES)).size, Object.keys(ERROR_CODES).length);
  });
  test("Error envelope error.message: string, human-readable description", () => {
    for (const [code, r] of seen) {
      assert.equal(typeof r.json.error.message, "string", code);
      assert.ok(r.json.error.message.length > 10, code);
    }
  });
  test("Error envelope error.doc_url: {docs_url}/docs/errors#<code>", () => {
    for (const [code, r] of seen) assert.equal(r.json.error.doc_url, `${DOCS}/docs/errors#${code}`);
  });
  test("Error envelope error.param: offending parameter path, present when applicable", () => {
    assert.equal(seen.get("parameter_invalid")!.json.error.param, "body.config.batch_size");
    for (const [code, r] of seen) if (code !== "parameter_invalid") assert.equal("param" in r.json.error, false, code);
  });
  test("Error envelope request_id: top-level sibling of error, format req_<id>", () => {
    for (const [code, r] of seen) {
      assert.deepEqual(Object.keys(r.json).sort(), ["error", "request_id"], code);
      assert.match(r.json.request_id, REQUEST_ID);
      assert.equal(r.headers.get("x-request-id"), r.json.request_id);
    }
  });
});

describe("Error types", () => {
  const byType = (t: string): ErrorCode[] => [...seen.keys()].filter((k) => seen.get(k)!.json.error.type === t);
  test("Error type authentication_error: API key missing or invalid", () => {
    assert.deepEqual(byType("authentication_error").sort(), ["api_key_invalid", "api_key_missing"]);
  });
  test("Error type invalid_request_error: bad parameters, wrong model state, or idempotency conflict", () => {
    for (const code of ["parameter_invalid", "model_not_ready", "idempotency_key_in_use"] as const) assert.ok(byType("invalid_request_error").includes(code));
  });
  test("Error type not_found_error: resource does not exist or belongs to another organization", () => {
    assert.deepEqual(byType("not_found_error"), ["model_not_found"]);
  });
  test("Error type rate_limit_error: too many requests", () => {
    assert.deepEqual(byType("rate_limit_error"), ["rate_limit_exceeded"]);
  });
  test("Error type quota_exceeded_error: monthly usage quota exceeded", () => {
    assert.deepEqual(byType("quota_exceeded_error"), ["quota_exceeded"]);
  });
  test("Error type api_error: server-side error", () => {
    assert.deepEqual(byType("api_error").sort(), ["internal_error", "training_service_unavailable"]);
  });
});

describe("Error codes", () => {
  const CONTRACT_CODES: [ErrorCode, number, string][] = [
    ["api_key_missing", 401, "authentication_error"],
    ["api_key_invalid", 401, "authentication_error"],
    ["parameter_invalid", 400, "invalid_request_error"],
    ["model_not_found", 404, "not_found_error"],
    ["model_not_ready", 400, "invalid_request_error"],
    ["training_service_unavailable", 503, "api_error"],
    ["idempotency_key_in_use", 409, "invalid_request_error"],
    ["quota_exceeded", 402, "quota_exceeded_error"],
    ["rate_limit_exceeded", 429, "rate_limit_error"],
    ["internal_error", 500, "api_error"],
  ];
  for (const [code, status, type] of CONTRACT_CODES) {
    test(`Error codes: ${code} ${status} ${type}`, () => {
      const r = seen.get(code)!;
      assert.ok(r, `${code} was reached`);
      assert.equal(r.status, status);
      assert.equal(r.json.error.type, type);
      assertError(r, code, code === "parameter_invalid" ? "body.config.batch_size" : undefined, DOCS);
    });
  }

  test("Error codes: training_service_unavailable carries Retry-After (retry after a few seconds)", () => {
    assert.equal(seen.get("training_service_unavailable")!.headers.get("retry-after"), "4");
  });

  test("Error codes: internal_error message is generic outside debug mode", () => {
    const r = seen.get("internal_error")!;
    assert.equal(r.json.error.message.includes("secret detail"), false);
    assert.equal(r.json.error.message, "An unexpected error occurred on the server.");
  });

  test("Error codes: internal_error message carries the cause in debug mode (--debug)", async () => {
    const dbg = await startContract({ debug: true });
    try {
      const m = await readyModelOn(dbg);
      dbg.engine.fail.generate = new Error("secret detail");
      const r = await call(dbg.url, `/v1/models/${m.id}/generate`, { key: dbg.keys.test, body: { embedding: { num_rows: 1 } } });
      assertError(r, "internal_error", undefined);
      assert.ok(r.json.error.message.includes("secret detail"));
    } finally {
      await dbg.stop();
    }
  });
});

describe("Error rules", () => {
  test("Error rule 1: a 429 carries X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset and Retry-After; the message states the seconds", () => {
    const r = seen.get("rate_limit_exceeded")!;
    assert.equal(r.headers.get("x-ratelimit-limit"), "1");
    assert.equal(r.headers.get("x-ratelimit-remaining"), "0");
    assert.match(r.headers.get("x-ratelimit-reset") ?? "", /^\d+$/);
    const secs = r.headers.get("retry-after")!;
    assert.match(secs, /^[1-9]\d*$/);
    assert.ok(r.json.error.message.includes(`${secs} second`), r.json.error.message);
  });

  test("Error rule 2: the model_not_ready message names the model id and its current state", () => {
    const m = seen.get("model_not_ready")!.json.error.message;
    assert.match(m, /mdl_[0-9a-f]{12}/);
    assert.ok(m.includes("failed"), m);
  });

  test("Error rule 3: api_key_missing and rate_limit_exceeded responses carry no param", () => {
    assert.equal("param" in seen.get("api_key_missing")!.json.error, false);
    assert.equal("param" in seen.get("rate_limit_exceeded")!.json.error, false);
  });
});

describe("Error extensions (DESIGN §3)", () => {
  test("Error extension: body over the limit is 413 request_too_large", () => {
    assertError(seen.get("request_too_large")!, "request_too_large", undefined, DOCS);
  });
  test("Error extension: unknown route is 404 route_not_found", () => {
    assertError(seen.get("route_not_found")!, "route_not_found", undefined, DOCS);
  });
  test("Error extension: wrong method is 405 method_not_allowed with Allow", () => {
    const r = seen.get("method_not_allowed")!;
    assertError(r, "method_not_allowed", undefined, DOCS);
    assert.equal(r.headers.get("allow"), "POST, GET");
  });
  test("Error docs: doc_url comes from SYNTHD_DOCS_URL, and /docs/errors has an anchor per code", async () => {
    const saved = process.env.SYNTHD_DOCS_URL;
    process.env.SYNTHD_DOCS_URL = "https://errors.example.org/";
    try {
      const s = await serve({
        host: "127.0.0.1",
        port: 0,
        dataDir: join(c.dir, "serve-docs"),
        handleSignals: false,
        logger: pino({ level: "silent" }),
        workers: 1,
      });
      try {
        const r = await call(s.url, "/v1/models");
        assertError(r, "api_key_missing", undefined, "https://errors.example.org");
        const page = await call(s.url, "/docs/errors");
        assert.equal(page.status, 200);
        for (const code of Object.keys(ERROR_CODES)) assert.ok(page.text.includes(`id="${code}"`), code);
      } finally {
        await s.close();
      }
    } finally {
      if (saved === undefined) delete process.env.SYNTHD_DOCS_URL;
      else process.env.SYNTHD_DOCS_URL = saved;
    }
  });
});

describe("Client-side errors (SDK)", () => {
  test("Client-side error training_timeout: training exceeds the configured timeout", async () => {
    const m = await createModel(c, c.keys.test, { ...QUICK, max_epochs: 100_000 });
    const client = new Synthd({ apiKey: c.keys.test, baseUrl: c.url });
    const err = await client.models.waitUntilReady(m.id, { timeoutSeconds: 0.3, pollIntervalMs: 50 }).catch((e: unknown) => e);
    assert.ok(err instanceof TrainingTimeoutError, String(err));
    assert.ok(err instanceof SynthdError);
    assert.equal(err.code, "training_timeout");
    await call(c.url, `/v1/models/${m.id}`, { key: c.keys.test, method: "DELETE" });
  });

  test("Client-side error training_failed: model status is failed", async () => {
    const client = new Synthd({ apiKey: c.keys.test, baseUrl: c.url });
    const m = await createModel(c);
    await c.engine.stop(m.id);
    await c.store.updateModel(m.id, { status: "failed", error: { code: "training_failed", message: "diverged" } });
    const err = await client.models.waitUntilReady(m.id, { pollIntervalMs: 50 }).catch((e: unknown) => e);
    assert.ok(err instanceof TrainingFailedError, String(err));
    assert.equal(err.code, "training_failed");
  });

  test("Client-side errors: every HTTP error code maps to a typed exception deriving from one base", async () => {
    const client = new Synthd({ apiKey: c.keys.test, baseUrl: c.url, maxRetries: 0 });
    const err = await client.models.retrieve("mdl_abcdefabcdef").catch((e: unknown) => e);
    assert.ok(err instanceof SynthdError);
    assert.equal((err as SynthdError).code, "model_not_found");
  });
});

async function readyModelOn(x: Contract): Promise<Model> {
  const r = await call(x.url, "/v1/models", { key: x.keys.test, body: { metadata: tinyMetadata(), config: QUICK } });
  const m = assertEnvelope(r, 201, "model");
  for (let i = 0; i < 1200; i++) {
    const g = await call(x.url, `/v1/models/${m.id}`, { key: x.keys.test });
    if (g.json.data.status === "ready") return g.json.data;
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error("not ready");
}
