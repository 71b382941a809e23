/**
 * Error behaviour a client relies on (contract: "Errors", "Authentication"; DESIGN §3):
 * authentication, validation params, routing, body limits, model state and engine failures.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { EngineUnavailableError, OrgQueueFullError } from "../src/engine/engine";
import { ParamError as GenerateInputError } from "../src/contract/errors";
import { MAX_ROWS_PER_REQUEST } from "../src/contract";
import { assertError, call, createTestModel, startHarness, validCreateBody, type Harness } from "./server-helpers";

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h.stop();
});

const newModel = (config?: Record<string, unknown>): Promise<string> => createTestModel(h, config);

describe("authentication", () => {
  test("no Authorization header is 401 api_key_missing without param, on every /v1 path", async () => {
    for (const [path, method] of [["/v1/models", "GET"], ["/v1/models", "POST"], ["/v1/models/mdl_000000000000", "DELETE"], ["/v1/nothing", "GET"]]) {
      const r = await call(h.url, path, { method, body: method === "POST" ? "{not json" : undefined });
      assertError(r, "api_key_missing", undefined);
    }
    assertError(await call(h.url, "/v1/models", { headers: { authorization: "" } }), "api_key_missing", undefined);
  });

  test("an unknown key, an unknown prefix or another scheme is 401 api_key_invalid", async () => {
    const forged = `svc_test_${"A".repeat(32)}`;
    for (const auth of [`Bearer ${forged}`, `Bearer ${h.keys.test.replace("svc_test_", "svc_prod_")}`, `Basic ${h.keys.test}`, "Bearer", `Bearer ${h.keys.test} extra`]) {
      const r = await call(h.url, "/v1/models", { headers: { authorization: auth } });
      assertError(r, "api_key_invalid", undefined);
    }
  });

  test("the key's prefix decides the environment: a live key works on live models", async () => {
    const r = await call(h.url, "/v1/models", { key: h.keys.live, body: validCreateBody() });
    assert.equal(r.status, 201);
    const g = await call(h.url, `/v1/models/${r.json.data.id}`, { key: h.keys.live });
    assert.equal(g.status, 200);
  });

  test("request log lines name method, route, status and request id, never the key", async () => {
    const r = await call(h.url, "/v1/models?limit=1", { key: h.keys.test });
    const lines = h.logs.map((l) => JSON.parse(l));
    const line = lines.find((l) => l.req_id === r.headers.get("x-request-id"));
    assert.ok(line, "one line for the request");
    assert.equal(line.method, "GET");
    assert.equal(line.route, "/v1/models");
    assert.equal(line.status, 200);
    assert.equal(typeof line.ms, "number");
    const all = h.logs.join("\n");
    for (const key of Object.values(h.keys)) assert.equal(all.includes(key), false, "keys never logged");
    assert.equal(/authorization/i.test(all), false, "Authorization header never logged");
  });
});

describe("routing", () => {
  test("an unknown route is 404 route_not_found (with a key), 401 without one", async () => {
    assertError(await call(h.url, "/v1/things", { key: h.keys.test }), "route_not_found", undefined);
    assertError(await call(h.url, "/v1/models/", { key: h.keys.test }), "route_not_found", undefined);
    assertError(await call(h.url, "/v2/models", { key: h.keys.test }), "route_not_found", undefined);
    assertError(await call(h.url, "/v1/things"), "api_key_missing", undefined);
  });

  test("a known path with another method is 405 method_not_allowed with Allow", async () => {
    const r1 = await call(h.url, "/v1/models", { key: h.keys.test, method: "PUT" });
    assertError(r1, "method_not_allowed", undefined);
    assert.equal(r1.headers.get("allow"), "POST, GET");
    const r2 = await call(h.url, "/v1/models/mdl_000000000000", { key: h.keys.test, method: "PATCH" });
    assertError(r2, "method_not_allowed", undefined);
    assert.equal(r2.headers.get("allow"), "GET, DELETE");
    const r3 = await call(h.url, "/v1/models/mdl_000000000000/generate", { key: h.keys.test });
    assertError(r3, "method_not_allowed", undefined);
    assert.equal(r3.headers.get("allow"), "POST");
  });
});

describe("request body and JSON", () => {
  test("malformed JSON is parameter_invalid on body", async () => {
    for (const body of ["{\"metadata\": ", "", "[1,]", "nul"]) {
      assertError(await call(h.url, "/v1/models", { key: h.keys.test, body }), "parameter_invalid", "body");
    }
  });

  test("POST without Content-Type application/json is parameter_invalid on headers.content-type", async () => {
    const body = JSON.stringify(validCreateBody());
    const r1 = await call(h.url, "/v1/models", { key: h.keys.test, body, headers: { "content-type": "text/plain" } });
    assertError(r1, "parameter_invalid", "headers.content-type");
    const r2 = await fetch(`${h.url}/v1/models`, { method: "POST", headers: { authorization: `Bearer ${h.keys.test}` }, body: new Uint8Array(Buffer.from(body)) });
    assertError({ status: r2.status, headers: r2.headers, text: "", json: await r2.json() }, "parameter_invalid", "headers.content-type");
    const r3 = await call(h.url, "/v1/models", { key: h.keys.test, body, headers: { "content-type": "application/json; charset=utf-8" } });
    assert.equal(r3.status, 201, "parameters of the media type are fine");
  });

  test("a body over maxBodyBytes is 413 request_too_large, and the server keeps serving", async () => {
    const small = await startHarness({ maxBodyBytes: 1024 });
    try {
      const big = { ...validCreateBody(), pad: "x".repeat(4096) };
      assertError(await call(small.url, "/v1/models", { key: small.keys.test, body: big }), "request_too_large", undefined);
      const ok = await call(small.url, "/v1/models", { key: small.keys.test, body: validCreateBody() });
      assert.equal(ok.status, 201);
    } finally {
      await small.stop();
    }
  });
});

describe("Create Model validation", () => {
  const cases: [string, (b: any) => unknown, string][] = [
    ["wrong type in config", (b) => ({ ...b, config: { batch_size: "abc" } }), "body.config.batch_size"],
    ["out of range in config", (b) => ({ ...b, config: { batch_size: 0 } }), "body.config.batch_size"],
    ["non-integer in config", (b) => ({ ...b, config: { max_epochs: 1.5 } }), "body.config.max_epochs"],
    ["unknown model_size", (b) => ({ ...b, config: { model_size: "XL" } }), "body.config.model_size"],
    ["missing metadata", () => ({ config: {} }), "body.metadata"],
    ["missing empirical_probs object", (b) => ({ metadata: { features: b.metadata.features, cardinalities: b.metadata.cardinalities } }), "body.metadata.empirical_probs"],
    ["body not an object", () => [1, 2], "body"],
    ["unknown field in body", (b) => ({ ...b, extra: 1 }), "body.extra"],
    ["unknown field in config", (b) => ({ ...b, config: { foo: 1 } }), "body.config.foo"],
    ["unknown field in metadata", (b) => ({ metadata: { ...b.metadata, rows: 3 } }), "body.metadata.rows"],
    ["empty features", (b) => ({ metadata: { ...b.metadata, features: [] } }), "body.metadata.features"],
    ["feature of wrong type", (b) => ({ metadata: { ...b.metadata, features: ["a", 2] } }), "body.metadata.features[1]"],
    ["zero cardinality", (b) => ({ metadata: { ...b.metadata, cardinalities: { a: 0, b: 3 } } }), "body.metadata.cardinalities.a"],
    ["duplicate feature", (b) => ({ metadata: { ...b.metadata, features: ["a", "b", "a"] } }), "body.metadata.features[2]"],
    ["missing cardinality", (b) => ({ metadata: { ...b.metadata, cardinalities: { a: 2 } } }), "body.metadata.cardinalities.b"],
    ["missing empirical_probs entry", (b) => ({ metadata: { ...b.metadata, empirical_probs: { a: [0.5, 0.5] } } }), "body.metadata.empirical_probs.b"],
    ["empirical_probs length mismatch", (b) => ({ metadata: { ...b.metadata, empirical_probs: { ...b.metadata.empirical_probs, a: [1] } } }), "body.metadata.empirical_probs.a"],
    ["negative probability", (b) => ({ metadata: { ...b.metadata, empirical_probs: { ...b.metadata.empirical_probs, b: [0.6, -0.1, 0.5] } } }), "body.metadata.empirical_probs.b[1]"],
    ["probabilities not summing to 1", (b) => ({ metadata: { ...b.metadata, empirical_probs: { ...b.metadata.empirical_probs, a: [0.5, 0.6] } } }), "body.metadata.empirical_probs.a"],
    ["key that is not a feature", (b) => ({ metadata: { ...b.metadata, cardinalities: { ...b.metadata.cardinalities, c: 2 } } }), "body.metadata.cardinalities.c"],
    ["non-identifier key that is not a feature", (b) => ({ metadata: { ...b.metadata, column_stats: { "age group": { type: "categorical", count: 1, missing: 0 } } } }), 'body.metadata.column_stats["age group"]'],
    ["value mapping code out of range", (b) => ({ metadata: { ...b.metadata, value_mappings: { a: { x: 0, y: 2 } } } }), "body.metadata.value_mappings.a.y"],
    ["marginal of unknown feature", (b) => ({ metadata: { ...b.metadata, marginals: [{ features: ["a", "z"], probs: [1] }] } }), "body.metadata.marginals[0].features[1]"],
    ["marginal of one feature twice", (b) => ({ metadata: { ...b.metadata, marginals: [{ features: ["a", "a"], probs: [0.25, 0.25, 0.25, 0.25] }] } }), "body.metadata.marginals[0].features[1]"],
    ["marginal probs of wrong length", (b) => ({ metadata: { ...b.metadata, marginals: [b.metadata.marginals[0], { features: ["b", "a"], probs: [0.5, 0.5] }] } }), "body.metadata.marginals[1].probs"],
    ["marginal probs not summing to 1", (b) => ({ metadata: { ...b.metadata, marginals: [{ features: ["a", "b"], probs: [0.1, 0.1, 0.1, 0.1, 0.1, 0.1] }] } }), "body.metadata.marginals[0].probs"],
  ];
  for (const [name, make, param] of cases) {
    test(`${name} is parameter_invalid on ${param}`, async () => {
      const before = h.engine.calls.length;
      const r = await call(h.url, "/v1/models", { key: h.keys.test, body: make(validCreateBody()) });
      assertError(r, "parameter_invalid", param);
      assert.equal(h.engine.calls.length, before, "nothing was queued");
    });
  }

  test("non-identifier feature names use bracket form in param", async () => {
    const body = { metadata: { features: ["age group"], cardinalities: { "age group": 2 }, empirical_probs: { "age group": [1] } } };
    const r = await call(h.url, "/v1/models", { key: h.keys.test, body });
    assertError(r, "parameter_invalid", 'body.metadata.empirical_probs["age group"]');
  });

  test("a number too large for JSON doubles (Infinity) is refused", async () => {
    const body = JSON.stringify(validCreateBody()).replace("0.25,0.75", "1e999,0.75");
    assertError(await call(h.url, "/v1/models", { key: h.keys.test, body }), "parameter_invalid", "body.metadata.empirical_probs.a[0]");
  });

  test("__proto__ as a feature name or mapped value is refused (it could not be stored faithfully)", async () => {
    const body = '{"metadata":{"features":["__proto__"],"cardinalities":{"__proto__":1},"empirical_probs":{"__proto__":[1]}}}';
    assertError(await call(h.url, "/v1/models", { key: h.keys.test, body }), "parameter_invalid", "body.metadata.features[0]");
    const mapped = JSON.stringify(validCreateBody()).replace('"x":0', '"__proto__":0');
    assertError(await call(h.url, "/v1/models", { key: h.keys.test, body: mapped }), "parameter_invalid", "body.metadata.value_mappings.a.__proto__");
  });
});

describe("List Models validation", () => {
  for (const [query, param] of [
    ["limit=abc", "query.limit"],
    ["limit=0", "query.limit"],
    ["limit=101", "query.limit"],
    ["limit=1.5", "query.limit"],
    ["limit=-1", "query.limit"],
    ["limit=%201", "query.limit"],
    ["limit=", "query.limit"],
    ["limit=2&limit=3", "query.limit"],
    ["order=asc", "query.order"],
  ] as const) {
    test(`?${query} is parameter_invalid on ${param}`, async () => {
      assertError(await call(h.url, `/v1/models?${query}`, { key: h.keys.test }), "parameter_invalid", param);
    });
  }

  test("query parameters on routes that take none are refused", async () => {
    assertError(await call(h.url, "/v1/models/mdl_000000000000?expand=1", { key: h.keys.test }), "parameter_invalid", "query.expand");
  });
});

describe("Generate validation and model state", () => {
  test("body shape errors are parameter_invalid with the field's path", async () => {
    const id = await newModel();
    const path = `/v1/models/${id}/generate`;
    for (const [body, param] of [
      [{}, "body.embedding"],
      [{ embedding: "x" }, "body.embedding"],
      [{ embedding: { num_rows: 0 } }, "body.embedding.num_rows"],
      [{ embedding: { num_rows: 5, extra: 1 } }, "body.embedding.extra"],
      [{ embedding: { num_rows: 5 }, temperature: 0 }, "body.temperature"],
      [{ embedding: { num_rows: 5 }, top_p: 1.5 }, "body.top_p"],
      [{ embedding: { num_rows: 5 }, rows: 5 }, "body.rows"],
    ] as const) {
      assertError(await call(h.url, path, { key: h.keys.test, body }), "parameter_invalid", param);
    }
  });

  test("more rows than the per-request cap is parameter_invalid on body.embedding", async () => {
    const id = await newModel();
    const r = await call(h.url, `/v1/models/${id}/generate`, { key: h.keys.test, body: { embedding: { num_rows: MAX_ROWS_PER_REQUEST + 1 } } });
    assertError(r, "parameter_invalid", "body.embedding");
    const empty = await call(h.url, `/v1/models/${id}/generate`, { key: h.keys.test, body: { embedding: [] } });
    assertError(empty, "parameter_invalid", "body.embedding");
  });

  test("a latent vector of the wrong length is parameter_invalid on body.embedding[i]", async () => {
    const id = await newModel({ embedding_dim: 2 });
    const r = await call(h.url, `/v1/models/${id}/generate`, { key: h.keys.test, body: { embedding: [[1, 2], [1, 2, 3]] } });
    assertError(r, "parameter_invalid", "body.embedding[1]");
  });

  test("a failed model is model_not_ready; the message names the id and the state", async () => {
    const id = await newModel();
    await h.store.updateModel(id, { status: "failed", error: { code: "training_failed", message: "diverged" } });
    const r = await call(h.url, `/v1/models/${id}/generate`, { key: h.keys.test, body: { embedding: { num_rows: 1 } } });
    assertError(r, "model_not_ready", undefined);
    assert.ok(r.json.error.message.includes(id), r.json.error.message);
    assert.ok(r.json.error.message.includes("failed"), r.json.error.message);
    for (const status of ["created", "building"] as const) {
      await h.store.updateModel(id, { status });
      const r2 = await call(h.url, `/v1/models/${id}/generate`, { key: h.keys.test, body: { embedding: { num_rows: 1 } } });
      assertError(r2, "model_not_ready", undefined);
      assert.ok(r2.json.error.message.includes(status));
    }
  });

  test("GenerateInputError from the engine is parameter_invalid with its param", async () => {
    const id = await newModel();
    h.engine.fail.generate = new GenerateInputError("seed out of range", "body.embedding.seed");
    const r = await call(h.url, `/v1/models/${id}/generate`, { key: h.keys.test, body: { embedding: { num_rows: 2, seed: 1 } } });
    assertError(r, "parameter_invalid", "body.embedding.seed");
    assert.equal(r.json.error.message, "seed out of range");
  });
});

describe("engine failures", () => {
  test("an unavailable engine on create is 503 with Retry-After, and no model is left behind", async () => {
    h.engine.fail.train = new EngineUnavailableError("all workers busy", 7);
    const r = await call(h.url, "/v1/models", { key: h.keys.other, body: validCreateBody() });
    assertError(r, "training_service_unavailable", undefined);
    assert.equal(r.headers.get("retry-after"), "7");
    const trained = h.engine.calls.at(-1)!;
    assert.equal(trained.op, "train");
    assert.equal((await h.store.getModel(trained.id)), undefined);
    const list = await call(h.url, "/v1/models", { key: h.keys.other });
    assert.equal(list.json.data.some((m: any) => m.id === trained.id), false);
  });

  test("an unavailable engine on generate is 503 with Retry-After; on delete the model is deleted anyway and the failed stop logged", async () => {
    const id = await newModel();
    h.engine.fail.generate = new EngineUnavailableError("restarting");
    const g = await call(h.url, `/v1/models/${id}/generate`, { key: h.keys.test, body: { embedding: { num_rows: 1 } } });
    assertError(g, "training_service_unavailable", undefined);
    assert.match(g.headers.get("retry-after") ?? "", /^[1-9]\d*$/);
    // The delete does not depend on reaching the training: its next write finds no model.
    h.engine.fail.stop = new EngineUnavailableError("restarting", 2);
    const d = await call(h.url, `/v1/models/${id}`, { key: h.keys.test, method: "DELETE" });
    assert.equal(d.status, 204);
    assert.equal((await call(h.url, `/v1/models/${id}`, { key: h.keys.test })).status, 404);
    assert.equal(await h.store.getModel(id), undefined);
    assert.ok(h.engine.calls.some((c) => c.op === "stop" && c.id === id), "the engine was asked to stop it");
    for (let i = 0; i < 100 && !h.logs.some((l) => l.includes(id) && l.includes("could not be stopped now")); i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(h.logs.some((l) => l.includes(id) && l.includes("could not be stopped now")), "the failed stop is logged");
  });

  test("an org whose training queue is full gets 429 rate_limit_exceeded with Retry-After and the X-RateLimit headers; nothing is stored", async () => {
    const before = (await call(h.url, "/v1/models?limit=100", { key: h.keys.other })).json.data.length;
    const admissionCheck = h.engine.admissionCheck;
    h.engine.admissionCheck = () => {
      throw new OrgQueueFullError("Your organization already has 1000 models waiting to train, the most this server queues per organization.", 1000, 30);
    };
    try {
      const r = await call(h.url, "/v1/models", { key: h.keys.other, body: validCreateBody() });
      assertError(r, "rate_limit_exceeded", undefined);
      assert.equal(r.headers.get("retry-after"), "30");
      assert.match(r.json.error.message, /1000 models waiting to train.*Retry after 30 seconds\.$/);
      for (const h2 of ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"]) assert.match(r.headers.get(h2) ?? "", /^\d+$/, h2);
    } finally {
      h.engine.admissionCheck = admissionCheck;
    }
    assert.equal((await call(h.url, "/v1/models?limit=100", { key: h.keys.other })).json.data.length, before);
  });

  test("an unexpected engine error is 500 internal_error with a generic message", async () => {
    const id = await newModel();
    h.engine.fail.generate = new Error("tensor shape [3,7] secret detail");
    const r = await call(h.url, `/v1/models/${id}/generate`, { key: h.keys.test, body: { embedding: { num_rows: 1 } } });
    assertError(r, "internal_error", undefined);
    assert.equal(r.json.error.message.includes("secret detail"), false);
    const logged = h.logs.map((l) => JSON.parse(l)).find((l) => l.req_id === r.json.request_id && l.err);
    assert.ok(logged, "the error is logged with the request id");
    const after = await call(h.url, `/v1/models/${id}`, { key: h.keys.test });
    assert.equal(after.status, 200, "the server keeps serving");
  });

  test("with debug the internal_error message carries the cause; docsUrl sets doc_url", async () => {
    const dbg = await startHarness({ debug: true, docsUrl: "https://docs.example.com/" });
    try {
      const c = await call(dbg.url, "/v1/models", { key: dbg.keys.test, body: validCreateBody() });
      dbg.engine.fail.generate = new Error("secret detail");
      const r = await call(dbg.url, `/v1/models/${c.json.data.id}/generate`, { key: dbg.keys.test, body: { embedding: { num_rows: 1 } } });
      assertError(r, "internal_error", undefined, "https://docs.example.com");
      assert.ok(r.json.error.message.includes("secret detail"));
    } finally {
      await dbg.stop();
    }
  });
});
