/**
 * `GET /v1/openapi.json` (issue acceptance 4): the served OpenAPI 3.1 document is generated from
 * the TypeScript types typia validates with, every `$ref` resolves, its paths match the route
 * table both ways, and a sample of real responses (successes and errors of every endpoint)
 * validates against the schema the document gives for that path, method and status.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import typia from "typia";
import { EngineUnavailableError } from "../../src/engine/engine";
import { SCHEMAS } from "../../src/server/openapi";
import { ROUTES } from "../../src/server/handlers/routes";
import type { ErrorBody, GenerationResponse, ModelListResponse, ModelMetadataResponse, ModelResponse } from "../../src/contract";
import { assertError, call, createModel, deferred, QUICK, readyModel, startContract, tinyMetadata, type Contract, type Res } from "./harness";
import { allRefs, resolvePointer, validate } from "./json-schema";

let c: Contract;
let doc: any;

before(async () => {
  c = await startContract({ maxBodyBytes: 32 * 1024 });
  const r = await call(c.url, "/v1/openapi.json", { key: c.keys.test });
  assert.equal(r.status, 200, r.text);
  assert.match(r.headers.get("content-type") ?? "", /^application\/json/);
  doc = r.json;
});
after(async () => {
  await c.stop();
});

/** The OpenAPI path of a route pattern: `/v1/models/:model_id` -> `/v1/models/{model_id}`. */
const oaPath = (pattern: string): string => pattern.replace(/:([a-z_]+)/g, "{$1}");

/** Validates response `r` of `method path` against the document; returns the errors. */
function check(r: Res, method: string, path: string): string[] {
  const op = doc.paths[path]?.[method.toLowerCase()];
  assert.ok(op, `${method} ${path} is documented`);
  const resp = op.responses[String(r.status)];
  assert.ok(resp, `${method} ${path} documents status ${r.status}`);
  const schema = resp.content?.["application/json"]?.schema;
  if (schema === undefined) {
    assert.equal(r.text, "", `${r.status} has no documented body`);
    return [];
  }
  for (const name of Object.keys(resp.headers ?? {})) {
    const h = resolveMaybe(resp.headers[name]);
    if (name === "Retry-After" || name === "Allow" || name === "Idempotent-Replayed") continue; // conditional headers
    const v = r.headers.get(name);
    assert.notEqual(v, null, `${method} ${path} ${r.status}: header ${name}`);
    const parsed = h.schema?.type === "integer" ? Number(v) : v;
    assert.deepEqual(validate(h.schema, parsed, doc), [], `header ${name}=${v}`);
  }
  return validate(schema, r.json, doc);
}

function resolveMaybe(x: any): any {
  return x && typeof x.$ref === "string" ? resolvePointer(doc, x.$ref) : x;
}

function assertValid(r: Res, method: string, path: string): void {
  assert.deepEqual(check(r, method, path), [], `${method} ${path} ${r.status}: ${r.text.slice(0, 300)}`);
}

describe("OpenAPI document", () => {
  test("OpenAPI: GET /v1/openapi.json requires authentication like every /v1 endpoint (contract rule 1)", async () => {
    assertError(await call(c.url, "/v1/openapi.json"), "api_key_missing", undefined);
  });

  test("OpenAPI: version 3.1, bearer security, component schemas exactly typia's from the validated types", () => {
    assert.equal(doc.openapi, "3.1.0");
    assert.deepEqual(doc.security, [{ bearer: [] }]);
    assert.equal(doc.components.securitySchemes.bearer.scheme, "bearer");
    assert.deepEqual(doc.components.schemas, JSON.parse(JSON.stringify(SCHEMAS.components.schemas)));
    for (const name of ["CreateModelRequest", "GenerateRequest", "ListModelsQuery", "Model", "ModelConfig", "ErrorBody", "ModelResponse", "ModelListResponse", "GenerationResponse"]) {
      assert.ok(doc.components.schemas[name], name);
    }
  });

  test("OpenAPI: every $ref resolves", () => {
    const refs = allRefs(doc);
    assert.ok(refs.length > 20);
    for (const ref of new Set(refs)) assert.doesNotThrow(() => resolvePointer(doc, ref), ref);
  });

  test("OpenAPI: documented paths and methods are exactly the server's routes", () => {
    const routes = new Set(ROUTES.map((r) => `${r.method} ${oaPath(r.pattern)}`));
    const documented = new Set<string>();
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const m of ["get", "post", "delete", "put", "patch"]) if (item[m]) documented.add(`${m.toUpperCase()} ${path}`);
    }
    assert.deepEqual([...documented].sort(), [...routes].sort());
  });

  test("OpenAPI: the validator is strict (an extra field, a wrong type or a bad id fail)", () => {
    const s = doc.components.schemas.ModelResponse;
    const good = {
      object: "model",
      data: {
        id: "mdl_0123456789ab", status: "ready", current_epoch: 1, train_loss: 0.5, val_loss: null, error: null,
        created_at: "2026-01-01T00:00:00.000Z", updated_at: "2026-01-01T00:00:00.000Z",
        config: { embedding_dim: 8, model_size: "small", batch_size: 64, learning_rate: 0.001, max_epochs: 1, max_training_time: 10, early_stop_patience: 4, privacy_enabled: false, privacy_noise: 0.1, device: "cpu" },
      },
      metadata: { timestamp: "2026-01-01T00:00:00.000Z" },
    };
    assert.deepEqual(validate(s, good, doc), []);
    assert.notDeepEqual(validate(s, { ...good, extra: 1 }, doc), []);
    assert.notDeepEqual(validate(s, { ...good, data: { ...good.data, current_epoch: "1" } }, doc), []);
    assert.notDeepEqual(validate(s, { ...good, data: { ...good.data, id: "mdl_XYZ" } }, doc), []);
    assert.notDeepEqual(validate(s, { ...good, data: { ...good.data, status: "done" } }, doc), []);
  });
});

describe("OpenAPI: real responses validate against the served schema", () => {
  test("OpenAPI: Create Model 201, Get Model 200, List Models 200, Get Model Metadata 200, Delete 204", async () => {
    const created = await call(c.url, "/v1/models", { key: c.keys.test, body: { metadata: tinyMetadata(), config: QUICK } });
    assertValid(created, "POST", "/v1/models");
    assert.ok(typia.validateEquals<ModelResponse>(created.json).success, "typia agrees");
    const id = created.json.data.id;
    const got = await call(c.url, `/v1/models/${id}`, { key: c.keys.test });
    assertValid(got, "GET", "/v1/models/{model_id}");
    assert.ok(typia.validateEquals<ModelResponse>(got.json).success);
    const list = await call(c.url, "/v1/models?limit=2", { key: c.keys.test });
    assertValid(list, "GET", "/v1/models");
    assert.ok(typia.validateEquals<ModelListResponse>(list.json).success);
    const md = await call(c.url, `/v1/models/${id}/metadata`, { key: c.keys.test });
    assertValid(md, "GET", "/v1/models/{model_id}/metadata");
    assert.ok(typia.validateEquals<ModelMetadataResponse>(md.json).success);
    const del = await call(c.url, `/v1/models/${id}`, { key: c.keys.test, method: "DELETE" });
    assert.equal(del.status, 204);
    assertValid(del, "DELETE", "/v1/models/{model_id}");
  });

  test("OpenAPI: Generate 200 (both embedding forms), a replay, and a trained model's Get", async () => {
    const m = await readyModel(c);
    assertValid(await call(c.url, `/v1/models/${m.id}`, { key: c.keys.test }), "GET", "/v1/models/{model_id}");
    const a = await call(c.url, `/v1/models/${m.id}/generate`, { key: c.keys.test, body: { embedding: { num_rows: 5, seed: 2 }, temperature: 0.8, top_p: 0.9 } });
    assertValid(a, "POST", "/v1/models/{model_id}/generate");
    assert.ok(typia.validateEquals<GenerationResponse>(a.json).success);
    const dim = m.config.embedding_dim;
    const h = { "idempotency-key": "openapi-replay" };
    const b = await call(c.url, `/v1/models/${m.id}/generate`, { key: c.keys.test, body: { embedding: [new Array(dim).fill(0.1)] }, headers: h });
    assertValid(b, "POST", "/v1/models/{model_id}/generate");
    const replay = await call(c.url, `/v1/models/${m.id}/generate`, { key: c.keys.test, body: { embedding: [new Array(dim).fill(0.1)] }, headers: h });
    assert.equal(replay.headers.get("idempotent-replayed"), "true");
    assertValid(replay, "POST", "/v1/models/{model_id}/generate");
  });

  test("OpenAPI: error responses of every status validate as ErrorBody under their documented status", async () => {
    const m = await readyModel(c);
    const gen = `/v1/models/${m.id}/generate`;
    const samples: [Res, string, string][] = [];
    samples.push([await call(c.url, "/v1/models"), "GET", "/v1/models"]); // 401 missing
    samples.push([await call(c.url, "/v1/models", { key: `svc_live_${"x".repeat(32)}`, body: { metadata: tinyMetadata() } }), "POST", "/v1/models"]); // 401 invalid
    samples.push([await call(c.url, "/v1/models", { key: c.keys.test, body: { metadata: tinyMetadata(), extra: 1 } }), "POST", "/v1/models"]); // 400
    samples.push([await call(c.url, "/v1/models?limit=500", { key: c.keys.test }), "GET", "/v1/models"]); // 400 query
    samples.push([await call(c.url, "/v1/models/mdl_ffffffffffff", { key: c.keys.test }), "GET", "/v1/models/{model_id}"]); // 404
    samples.push([await call(c.url, "/v1/models/mdl_ffffffffffff", { key: c.keys.test, method: "DELETE" }), "DELETE", "/v1/models/{model_id}"]);
    samples.push([await call(c.url, "/v1/models/mdl_ffffffffffff/metadata", { key: c.keys.test }), "GET", "/v1/models/{model_id}/metadata"]);
    samples.push([await call(c.url, gen, { key: c.keys.test, body: { embedding: { num_rows: 0 } } }), "POST", "/v1/models/{model_id}/generate"]);
    const failed = await createModel(c);
    await c.engine.stop(failed.id);
    await c.store.updateModel(failed.id, { status: "failed", error: { code: "training_failed", message: "x" } });
    samples.push([await call(c.url, `/v1/models/${failed.id}/generate`, { key: c.keys.test, body: { embedding: { num_rows: 1 } } }), "POST", "/v1/models/{model_id}/generate"]); // 400 not ready
    samples.push([await call(c.url, `/v1/models/${failed.id}`, { key: c.keys.test }), "GET", "/v1/models/{model_id}"]); // failed model, error object
    c.engine.fail.generate = new EngineUnavailableError("down", 2);
    samples.push([await call(c.url, gen, { key: c.keys.test, body: { embedding: { num_rows: 1 } } }), "POST", "/v1/models/{model_id}/generate"]); // 503
    c.engine.fail.generate = new Error("boom");
    samples.push([await call(c.url, gen, { key: c.keys.test, body: { embedding: { num_rows: 1 } } }), "POST", "/v1/models/{model_id}/generate"]); // 500
    samples.push([await call(c.url, "/v1/models", { key: c.keys.test, body: { metadata: tinyMetadata(), pad: "x".repeat(40_000) } }), "POST", "/v1/models"]); // 413
    const gate = deferred();
    c.engine.gate.generate = gate.promise;
    const first = call(c.url, gen, { key: c.keys.test, body: { embedding: { num_rows: 1 } }, headers: { "idempotency-key": "oa-409" } });
    for (let i = 0; i < 400 && (await c.store.getIdempotency({ org: "acme", env: "test", key: "oa-409" }))?.state !== "in_flight"; i++) await new Promise((r) => setTimeout(r, 5));
    samples.push([await call(c.url, gen, { key: c.keys.test, body: { embedding: { num_rows: 1 } }, headers: { "idempotency-key": "oa-409" } }), "POST", "/v1/models/{model_id}/generate"]); // 409
    delete c.engine.gate.generate;
    gate.resolve();
    await first;
    const spent = await c.newKey("oa-spent", "live");
    await c.store.setOrgLimits("oa-spent", { live_quota: 0 });
    samples.push([await call(c.url, "/v1/models", { key: spent, body: { metadata: tinyMetadata(), config: QUICK } }), "POST", "/v1/models"]); // 402
    const slow = await c.newKey("oa-slow", "test", 1);
    c.clock.freeze(Date.UTC(2036, 0, 1, 0, 0, 5));
    await call(c.url, "/v1/models", { key: slow });
    samples.push([await call(c.url, "/v1/models", { key: slow }), "GET", "/v1/models"]); // 429
    c.clock.reset();

    const statuses = new Set<number>();
    for (const [r, method, path] of samples) {
      statuses.add(r.status);
      assertValid(r, method, path);
      if (r.status >= 400) assert.ok(typia.validateEquals<ErrorBody>(r.json).success, r.text);
    }
    assert.deepEqual([...statuses].sort(), [200, 400, 401, 402, 404, 409, 413, 429, 500, 503]);
  });
});
