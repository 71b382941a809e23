/**
 * SDK HTTP client: retry policy, idempotency keys, typed error mapping, pagination, polling.
 * Runs against a tiny local node:http server; no synthd server needed.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  APIConnectionError,
  APITimeoutError,
  APIError,
  AuthenticationError,
  ConflictError,
  InvalidRequestError,
  ModelNotReadyError,
  NotFoundError,
  QuotaExceededError,
  RateLimitError,
  Synthd,
  SynthdError,
  TrainingFailedError,
  TrainingTimeoutError,
  errorFromResponse,
  type Model,
  type RetryInfo,
} from "../src/sdk";
import { ERROR_CODES, CONFIG_DEFAULTS, type ErrorCode } from "../src/contract";

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

type Handler = (req: Seen, res: ServerResponse) => void;

/** Starts a server answering with `handlers` in turn (the last one repeats). */
async function serve(handlers: Handler[]): Promise<{ url: string; seen: Seen[]; close: () => Promise<void> }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const s = { method: req.method!, url: req.url!, headers: req.headers, body };
      seen.push(s);
      handlers[Math.min(seen.length - 1, handlers.length - 1)](s, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    // Drops open connections first: a request left in flight by a failed test cannot hold it open.
    close: () => new Promise<void>((r) => (server.close(() => r()), server.closeAllConnections())),
  };
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Handler {
  return (_req, res) => {
    res.writeHead(status, { "Content-Type": "application/json", "X-Request-Id": "req_hdr", ...headers });
    res.end(JSON.stringify(body));
  };
}

function errorBody(code: ErrorCode, extra: Record<string, unknown> = {}) {
  return {
    error: { type: ERROR_CODES[code].type, code, message: `msg ${code}`, doc_url: `http://docs/docs/errors#${code}`, ...extra },
    request_id: "req_body123",
  };
}

function model(id: string, status: Model["status"], extra: Partial<Model> = {}): Model {
  const t = new Date(0).toISOString();
  return {
    id,
    status,
    config: { ...CONFIG_DEFAULTS, device: "cpu" },
    current_epoch: 0,
    train_loss: null,
    val_loss: null,
    created_at: t,
    updated_at: t,
    error: null,
    ...extra,
  };
}

const ok = (data: unknown, more: Record<string, unknown> = {}) => json(200, { object: "model", data, metadata: { timestamp: "t", ...more } });

test("a POST retried after 503 reuses the same Idempotency-Key and sends Bearer auth and JSON", async () => {
  const srv = await serve([json(503, errorBody("training_service_unavailable")), json(201, { object: "model", data: model("mdl_000000000001", "training"), metadata: { timestamp: "t" } })]);
  try {
    const retries: RetryInfo[] = [];
    const client = new Synthd({ apiKey: "svc_test_abc", baseUrl: srv.url, backoffBaseMs: 5, onRetry: (i) => retries.push(i) });
    const m = await client.models.create({ metadata: { features: ["a"], cardinalities: { a: 2 }, empirical_probs: { a: [0.5, 0.5] } } });
    assert.equal(m.id, "mdl_000000000001");
    assert.equal(srv.seen.length, 2);
    const [a, b] = srv.seen;
    assert.equal(a.headers["authorization"], "Bearer svc_test_abc");
    assert.equal(a.headers["content-type"], "application/json");
    assert.ok(a.headers["idempotency-key"], "a POST carries an Idempotency-Key");
    assert.equal(a.headers["idempotency-key"], b.headers["idempotency-key"]);
    assert.deepEqual(JSON.parse(a.body), JSON.parse(b.body));
    assert.equal(retries.length, 1);
    assert.equal(retries[0].error.code, "training_service_unavailable");
    assert.ok(retries[0].delayMs >= 0 && retries[0].delayMs <= 5, "full jitter within the first cap");
  } finally {
    await srv.close();
  }
});

test("separate POST calls get different Idempotency-Keys; a caller's key is sent as given", async () => {
  const srv = await serve([json(201, { object: "model", data: model("mdl_000000000001", "training"), metadata: { timestamp: "t" } })]);
  try {
    const client = new Synthd({ apiKey: "k", baseUrl: srv.url });
    const meta = { features: ["a"], cardinalities: { a: 1 }, empirical_probs: { a: [1] } };
    await client.models.create({ metadata: meta });
    await client.models.create({ metadata: meta });
    await client.models.create({ metadata: meta }, { idempotencyKey: "my-key-1" });
    const keys = srv.seen.map((s) => s.headers["idempotency-key"]);
    assert.notEqual(keys[0], keys[1]);
    assert.equal(keys[2], "my-key-1");
  } finally {
    await srv.close();
  }
});

test("429 with Retry-After: 1 waits the given second, then succeeds", async () => {
  const srv = await serve([json(429, errorBody("rate_limit_exceeded"), { "Retry-After": "1" }), ok(model("mdl_000000000002", "ready"))]);
  try {
    const retries: RetryInfo[] = [];
    const client = new Synthd({ apiKey: "k", baseUrl: srv.url, onRetry: (i) => retries.push(i) });
    const m = await client.models.retrieve("mdl_000000000002");
    assert.equal(m.status, "ready");
    assert.equal(srv.seen.length, 2);
    assert.equal(retries.length, 1);
    assert.equal(retries[0].delayMs, 1000);
    assert.ok(retries[0].error instanceof RateLimitError);
    assert.equal((retries[0].error as RateLimitError).retryAfter, 1);
  } finally {
    await srv.close();
  }
});

test("400 is not retried and surfaces as InvalidRequestError with param and request id", async () => {
  const srv = await serve([json(400, errorBody("parameter_invalid", { param: "body.config.batch_size" })), ok({})]);
  try {
    const client = new Synthd({ apiKey: "k", baseUrl: srv.url, backoffBaseMs: 1 });
    await assert.rejects(
      client.models.create({ metadata: { features: ["a"], cardinalities: { a: 1 }, empirical_probs: { a: [1] } } }),
      (e: unknown) => {
        assert.ok(e instanceof InvalidRequestError);
        assert.equal(e.code, "parameter_invalid");
        assert.equal(e.status, 400);
        assert.equal(e.param, "body.config.batch_size");
        assert.equal(e.requestId, "req_body123");
        assert.equal(e.docUrl, "http://docs/docs/errors#parameter_invalid");
        return true;
      },
    );
    assert.equal(srv.seen.length, 1);
  } finally {
    await srv.close();
  }
});

test("404, 401 and 402 are never retried", async () => {
  for (const code of ["model_not_found", "api_key_invalid", "quota_exceeded", "model_not_ready"] as const) {
    const srv = await serve([json(ERROR_CODES[code].status, errorBody(code)), ok(model("mdl_000000000003", "ready"))]);
    try {
      const client = new Synthd({ apiKey: "k", baseUrl: srv.url, backoffBaseMs: 1 });
      await assert.rejects(client.models.retrieve("mdl_000000000003"), (e: unknown) => e instanceof SynthdError && e.code === code);
      assert.equal(srv.seen.length, 1, code);
    } finally {
      await srv.close();
    }
  }
});

test("5xx is retried maxRetries times, then thrown as APIError", async () => {
  const srv = await serve([json(500, errorBody("internal_error"))]);
  try {
    const client = new Synthd({ apiKey: "k", baseUrl: srv.url, maxRetries: 2, backoffBaseMs: 1 });
    await assert.rejects(client.models.retrieve("mdl_000000000004"), (e: unknown) => e instanceof APIError && e.code === "internal_error");
    assert.equal(srv.seen.length, 3);
  } finally {
    await srv.close();
  }
});

test("a non-JSON 502 is an APIError (invalid_response) and is retried", async () => {
  const html: Handler = (_q, res) => {
    res.writeHead(502, { "Content-Type": "text/html" });
    res.end("<html>Bad Gateway</html>");
  };
  const srv = await serve([html, ok(model("mdl_000000000005", "ready"))]);
  try {
    const client = new Synthd({ apiKey: "k", baseUrl: srv.url, backoffBaseMs: 1 });
    assert.equal((await client.models.retrieve("mdl_000000000005")).status, "ready");
    assert.equal(srv.seen.length, 2);
    const srv2 = await serve([html]);
    try {
      await assert.rejects(new Synthd({ apiKey: "k", baseUrl: srv2.url, maxRetries: 0 }).models.retrieve("x"), (e: unknown) => {
        assert.ok(e instanceof APIError);
        assert.equal(e.code, "invalid_response");
        assert.equal(e.status, 502);
        assert.match(e.message, /Bad Gateway/);
        return true;
      });
    } finally {
      await srv2.close();
    }
  } finally {
    await srv.close();
  }
});

test("409 idempotency_key_in_use is retried with the same key (the first attempt is still running)", async () => {
  const srv = await serve([json(409, errorBody("idempotency_key_in_use")), json(200, { object: "generation", data: { model_id: "m", num_rows: 1, features: ["a"], columns: { a: [0] } }, metadata: { timestamp: "t" } })]);
  try {
    const client = new Synthd({ apiKey: "k", baseUrl: srv.url, backoffBaseMs: 1 });
    const g = await client.models.generate("mdl_000000000006", { embedding: { num_rows: 1, seed: 1 } });
    assert.deepEqual(g.columns, { a: [0] });
    assert.equal(srv.seen.length, 2);
    assert.equal(srv.seen[0].headers["idempotency-key"], srv.seen[1].headers["idempotency-key"]);
  } finally {
    await srv.close();
  }
});

test("network failures are retried and end as APIConnectionError", async () => {
  const srv = await serve([json(200, {})]);
  const url = srv.url;
  await srv.close(); // nothing listens there now
  const retries: RetryInfo[] = [];
  const client = new Synthd({ apiKey: "k", baseUrl: url, maxRetries: 2, backoffBaseMs: 1, onRetry: (i) => retries.push(i) });
  await assert.rejects(client.models.retrieve("mdl_000000000007"), (e: unknown) => {
    assert.ok(e instanceof APIConnectionError);
    assert.ok(e instanceof APIError);
    assert.equal(e.code, "connection_error");
    return true;
  });
  assert.equal(retries.length, 2);
});

test("a connection dropped once is retried transparently", async () => {
  const drop: Handler = (_q, res) => res.socket?.destroy();
  const srv = await serve([drop, ok(model("mdl_000000000008", "ready"))]);
  try {
    const client = new Synthd({ apiKey: "k", baseUrl: srv.url, backoffBaseMs: 1 });
    assert.equal((await client.models.retrieve("mdl_000000000008")).id, "mdl_000000000008");
    assert.equal(srv.seen.length, 2);
  } finally {
    await srv.close();
  }
});

test("every contract error code maps to its typed error, type and status", () => {
  const expected: Record<ErrorCode, new (...a: never[]) => SynthdError> = {
    api_key_missing: AuthenticationError,
    api_key_invalid: AuthenticationError,
    parameter_invalid: InvalidRequestError,
    model_not_found: NotFoundError,
    model_not_ready: ModelNotReadyError,
    training_service_unavailable: APIError,
    idempotency_key_in_use: ConflictError,
    quota_exceeded: QuotaExceededError,
    rate_limit_exceeded: RateLimitError,
    internal_error: APIError,
    request_too_large: InvalidRequestError,
    route_not_found: InvalidRequestError,
    method_not_allowed: InvalidRequestError,
  };
  for (const code of Object.keys(ERROR_CODES) as ErrorCode[]) {
    const { status, type } = ERROR_CODES[code];
    const e = errorFromResponse(status, errorBody(code), { "X-Request-Id": "req_hdr", "Retry-After": "7" });
    assert.ok(e instanceof expected[code], `${code} -> ${expected[code].name}, got ${e.constructor.name}`);
    assert.ok(e instanceof SynthdError);
    assert.equal(e.code, code);
    assert.equal(e.status, status);
    assert.equal(e.type, type);
    assert.equal(e.message, `msg ${code}`);
    assert.equal(e.requestId, "req_body123");
    if (code === "rate_limit_exceeded") assert.equal((e as RateLimitError).retryAfter, 7);
  }
});

test("unknown codes, bodies without an envelope and bare statuses still map sensibly", () => {
  const unknown = errorFromResponse(500, { error: { type: "api_error", code: "brand_new", message: "m" }, request_id: "r" });
  assert.ok(unknown instanceof APIError);
  assert.equal(unknown.code, "brand_new");
  const byType = errorFromResponse(400, { error: { type: "not_found_error", code: "whatever", message: "m" } });
  assert.ok(byType instanceof NotFoundError);
  const bare404 = errorFromResponse(404, "Not Found", { "x-request-id": "req_x" });
  assert.ok(bare404 instanceof NotFoundError);
  assert.equal(bare404.code, "invalid_response");
  assert.equal(bare404.requestId, "req_x");
  assert.ok(errorFromResponse(401, undefined) instanceof AuthenticationError);
  assert.ok(errorFromResponse(429, undefined, { "retry-after": "3" }) instanceof RateLimitError);
  assert.ok(errorFromResponse(503, "<html/>") instanceof APIError);
  assert.ok(errorFromResponse(418, {}) instanceof APIError);
});

test("client-side errors derive from the base: TrainingFailedError carries the model's error", () => {
  const failed = model("mdl_00000000000a", "failed", { error: { code: "nan_loss", message: "loss became NaN" } });
  const e = new TrainingFailedError(failed);
  assert.ok(e instanceof SynthdError);
  assert.equal(e.code, "training_failed");
  assert.deepEqual(e.modelError, { code: "nan_loss", message: "loss became NaN" });
  assert.match(e.message, /mdl_00000000000a.*nan_loss/);
  const t = new TrainingTimeoutError(model("mdl_00000000000b", "training"), 5);
  assert.ok(t instanceof SynthdError);
  assert.equal(t.code, "training_timeout");
  assert.equal(t.timeoutSeconds, 5);
});

test("reads SYNTHD_API_KEY and SYNTHD_URL; without a key no Authorization header is sent", async () => {
  const srv = await serve([json(401, errorBody("api_key_missing"))]);
  const saved = { key: process.env.SYNTHD_API_KEY, url: process.env.SYNTHD_URL };
  try {
    process.env.SYNTHD_API_KEY = "svc_test_env";
    process.env.SYNTHD_URL = srv.url + "/";
    const fromEnv = new Synthd();
    assert.equal(fromEnv.apiKey, "svc_test_env");
    assert.equal(fromEnv.baseUrl, srv.url);
    delete process.env.SYNTHD_API_KEY;
    delete process.env.SYNTHD_URL;
    assert.equal(new Synthd().baseUrl, "http://127.0.0.1:8080");
    const anon = new Synthd({ baseUrl: srv.url });
    await assert.rejects(anon.models.retrieve("mdl_000000000009"), AuthenticationError);
    assert.equal(srv.seen[0].headers["authorization"], undefined);
  } finally {
    if (saved.key === undefined) delete process.env.SYNTHD_API_KEY;
    else process.env.SYNTHD_API_KEY = saved.key;
    if (saved.url === undefined) delete process.env.SYNTHD_URL;
    else process.env.SYNTHD_URL = saved.url;
    await srv.close();
  }
});

test("list returns one page; iterating walks every page with starting_after", async () => {
  const all = Array.from({ length: 5 }, (_, i) => model(`mdl_00000000000${i}`, "ready"));
  const srv = await serve([
    (req, res) => {
      const u = new URL(req.url, "http://x");
      const limit = Number(u.searchParams.get("limit") ?? 20);
      const after = u.searchParams.get("starting_after");
      const start = after ? all.findIndex((m) => m.id === after) + 1 : 0;
      const data = all.slice(start, start + limit);
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ object: "list", data, metadata: { timestamp: "t", has_more: start + limit < all.length } }));
    },
  ]);
  try {
    const client = new Synthd({ apiKey: "k", baseUrl: srv.url });
    const page = await client.models.list({ limit: 2 });
    assert.deepEqual(page.data.map((m) => m.id), [all[0].id, all[1].id]);
    assert.equal(page.has_more, true);
    const ids: string[] = [];
    for await (const m of client.models.list({ limit: 2 })) ids.push(m.id);
    assert.deepEqual(ids, all.map((m) => m.id));
    const ids2: string[] = [];
    for await (const m of client.models.listAutoPaging({ limit: 3 })) ids2.push(m.id);
    assert.deepEqual(ids2, ids);
    assert.ok(srv.seen.some((s) => s.url.includes(`starting_after=${all[1].id}`)));
  } finally {
    await srv.close();
  }
});

test("delete sends DELETE and resolves on 204; metadata reads the model_metadata envelope", async () => {
  const meta = { features: ["a"], cardinalities: { a: 1 }, empirical_probs: { a: [1] } };
  const srv = await serve([
    (req, res) => {
      if (req.method === "DELETE") {
        res.writeHead(204);
        res.end();
      } else {
        res.writeHead(200, { "Content-Type": "application/json" });
        res.end(JSON.stringify({ object: "model_metadata", data: meta, metadata: { timestamp: "t" } }));
      }
    },
  ]);
  try {
    const client = new Synthd({ apiKey: "k", baseUrl: srv.url });
    assert.equal(await client.models.delete("mdl_00000000000c"), undefined);
    assert.deepEqual(await client.models.metadata("mdl_00000000000c"), meta);
    assert.deepEqual(srv.seen.map((s) => `${s.method} ${s.url}`), ["DELETE /v1/models/mdl_00000000000c", "GET /v1/models/mdl_00000000000c/metadata"]);
  } finally {
    await srv.close();
  }
});

test("waitUntilReady polls until ready, reporting progress", async () => {
  const srv = await serve([
    ok(model("mdl_00000000000d", "training", { current_epoch: 1, train_loss: 2 })),
    ok(model("mdl_00000000000d", "training", { current_epoch: 2, train_loss: 1 })),
    ok(model("mdl_00000000000d", "ready", { current_epoch: 3, train_loss: 0.5 })),
  ]);
  try {
    const client = new Synthd({ apiKey: "k", baseUrl: srv.url });
    const epochs: number[] = [];
    const m = await client.models.waitUntilReady("mdl_00000000000d", { pollIntervalMs: 5, onProgress: (x) => epochs.push(x.current_epoch) });
    assert.equal(m.status, "ready");
    assert.deepEqual(epochs, [1, 2, 3]);
  } finally {
    await srv.close();
  }
});

test("waitUntilReady throws TrainingFailedError on failed and TrainingTimeoutError on timeout", async () => {
  const srv = await serve([ok(model("mdl_00000000000e", "failed", { error: { code: "diverged", message: "loss is NaN" } }))]);
  try {
    const client = new Synthd({ apiKey: "k", baseUrl: srv.url });
    await assert.rejects(client.models.waitUntilReady("mdl_00000000000e"), (e: unknown) => {
      assert.ok(e instanceof TrainingFailedError);
      assert.equal(e.modelError?.code, "diverged");
      return true;
    });
  } finally {
    await srv.close();
  }
  const srv2 = await serve([ok(model("mdl_00000000000f", "training"))]);
  try {
    const client = new Synthd({ apiKey: "k", baseUrl: srv2.url });
    await assert.rejects(client.models.waitUntilReady("mdl_00000000000f", { timeoutSeconds: 0.05, pollIntervalMs: 10 }), (e: unknown) => {
      assert.ok(e instanceof TrainingTimeoutError);
      assert.equal(e.code, "training_timeout");
      assert.equal(e.model.id, "mdl_00000000000f");
      return true;
    });
  } finally {
    await srv2.close();
  }
});

test("no answer within timeoutMs is an APITimeoutError, retried like a network failure", async () => {
  const hang: Handler = () => undefined; // never answers
  const srv = await serve([hang]);
  try {
    // Attempts counted where they are made: under load the client may give up on one before the
    // server has read it, so the server's count would race the machine's speed.
    let attempts = 0;
    const counted: typeof fetch = (input, init) => (attempts++, fetch(input, init));
    const client = new Synthd({ apiKey: "k", baseUrl: srv.url, timeoutMs: 50, maxRetries: 1, backoffBaseMs: 1, fetch: counted });
    await assert.rejects(client.models.retrieve("mdl_000000000010"), (e: unknown) => {
      assert.ok(e instanceof APITimeoutError);
      assert.ok(e instanceof APIConnectionError);
      assert.equal(e.code, "request_timeout");
      return true;
    });
    assert.equal(attempts, 2);
  } finally {
    srv.close();
  }
});

test("a 200 whose body is not JSON is an APIError (invalid_response), not retried", async () => {
  const srv = await serve([
    (_q, res) => {
      res.writeHead(200, { "Content-Type": "text/plain" });
      res.end("hello");
    },
  ]);
  try {
    const client = new Synthd({ apiKey: "k", baseUrl: srv.url });
    await assert.rejects(client.models.retrieve("mdl_000000000011"), (e: unknown) => e instanceof APIError && e.code === "invalid_response" && e.status === 200);
    assert.equal(srv.seen.length, 1);
  } finally {
    await srv.close();
  }
});
