/**
 * Seeded generation on the wire (issue 12; docs/api.md "Seeded generation"): the Generate
 * handler's checks of `embedding.condition` and `embedding.seed_data` against the model's metadata,
 * with the in-process harness (test/server-helpers.ts, FakeEngine). Every bad input is 400
 * `parameter_invalid` with the exact `param`, and charges nothing; good requests reach the engine
 * as sent and are charged the rows returned. Also: the worker-side mapping of a condition the model
 * gives probability 0 to the param of its row and cell (`src/engine/worker/seeded-draw.ts`, on a crafted model),
 * and the OpenAPI document describing both forms.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { sampleSeededSource } from "../src/engine/worker/seeded-draw";
import { initBackend } from "../src/model/compute/backend";
import { InputError } from "../src/model/sampling/inputs";
import { generatorSpec, initParams, toTensors } from "../src/model/generator/generator";
import { layoutOf } from "../src/model/generator/targets";
import { NativeGenerator } from "../src/model/compute/native-generator";
import { nativeCoreStatus } from "../src/model/compute/native-core";
import { Rng } from "../src/model/sampling/xoshiro";
import { seededSource, SeededInputError } from "../src/model/conditional/seeded-input";
import type { GeneratorModel } from "../src/model/generator/model";
import { monthOf } from "../src/usage/quota";
import { openApiDocument } from "../src/server/openapi";
import { MAX_SEED_ROWS_PER_REQUEST, type Metadata } from "../src/contract";
import { assertError, call, startHarness, type Harness } from "./server-helpers";

/** Features `a` (K=2), `b` (K=3) and `age group` (K=4, a name that needs bracket form). */
function metadata(): Metadata {
  return {
    features: ["a", "b", "age group"],
    cardinalities: { a: 2, b: 3, "age group": 4 },
    empirical_probs: { a: [0.5, 0.5], b: [0.2, 0.3, 0.5], "age group": [0.25, 0.25, 0.25, 0.25] },
  };
}

let h: Harness;
let id: string;
before(async () => {
  h = await startHarness();
  const r = await call(h.url, "/v1/models", { key: h.keys.test, body: { metadata: metadata() } });
  assert.equal(r.status, 201, r.text);
  id = r.json.data.id;
});
after(async () => {
  await h.stop();
});

const usage = (): Promise<number> => h.store.getUsage("acme", "test", monthOf(Date.now()));
const gen = (embedding: unknown) => call(h.url, `/v1/models/${id}/generate`, { key: h.keys.test, body: { embedding } });
const seedData = (features: unknown[], rows: unknown[]) => ({ seed_data: { features, rows } });


/** Sends each embedding: 400 `parameter_invalid` with its param, nothing charged, the engine never called. */
async function assertRefused(cases: [unknown, string][]): Promise<void> {
  const before = await usage();
  const calls = h.engine.calls.length;
  for (const [embedding, param] of cases) {
    const r = await gen(embedding);
    assertError(r, "parameter_invalid", param);
  }
  assert.equal(await usage(), before, "nothing charged");
  assert.equal(h.engine.calls.length, calls, "the engine never ran");
}

test("bad conditions: 400 parameter_invalid with the exact param, nothing charged, the engine never called", async () => {
  const cases: [unknown, string][] = [
    [{ num_rows: 5, condition: { zz: 0 } }, "body.embedding.condition.zz"],
    [{ num_rows: 5, condition: { "no such": 0 } }, 'body.embedding.condition["no such"]'],
    [{ num_rows: 5, condition: { a: 2 } }, "body.embedding.condition.a"],
    [{ num_rows: 5, condition: { "age group": 4 } }, 'body.embedding.condition["age group"]'],
    [{ num_rows: 5, condition: { b: [0, 3] } }, "body.embedding.condition.b[1]"],
    [{ num_rows: 5, condition: { b: [] } }, "body.embedding.condition.b"],
    [{ num_rows: 5, condition: { a: -1 } }, "body.embedding.condition.a"],
    [{ num_rows: 5, condition: { a: 0.5 } }, "body.embedding.condition.a"],
    [{ num_rows: 5, condition: { a: "x" } }, "body.embedding.condition.a"],
    [{ num_rows: 5, condition: { a: null } }, "body.embedding.condition.a"],
    [{ num_rows: 5, condition: { a: 1e400 } }, "body.embedding.condition.a"],
    [{ num_rows: 5, condition: [0, 1] }, "body.embedding.condition"],
    [{ num_rows: 0, condition: { a: 0 } }, "body.embedding.num_rows"],
    [{ num_rows: 100_001, condition: { a: 0 } }, "body.embedding"],
    [{ num_rows: 5, condition: { a: 0 }, seed: 1.5 }, "body.embedding.seed"],
    [{ num_rows: 5, condition: { a: 0 }, extra: 1 }, "body.embedding.extra"],
    // The weighted form {codes, weights}.
    [{ num_rows: 5, condition: { b: { codes: [0, 1], weights: [1] } } }, "body.embedding.condition.b.weights"],
    [{ num_rows: 5, condition: { b: { codes: [0, 1], weights: [0.5, 0] } } }, "body.embedding.condition.b.weights[1]"],
    [{ num_rows: 5, condition: { b: { codes: [0, 1], weights: [1.01, 1] } } }, "body.embedding.condition.b.weights[0]"],
    [{ num_rows: 5, condition: { b: { codes: [0, 0], weights: [0.5, 0.5] } } }, "body.embedding.condition.b.codes[1]"],
    [{ num_rows: 5, condition: { b: { codes: [0, 3], weights: [0.5, 0.5] } } }, "body.embedding.condition.b.codes[1]"],
    [{ num_rows: 5, condition: { b: { codes: [], weights: [] } } }, "body.embedding.condition.b.codes"],
    [{ num_rows: 5, condition: { b: { codes: [0] } } }, "body.embedding.condition.b.weights"],
    [{ num_rows: 5, condition: { b: { codes: [0], weights: [1], extra: 1 } } }, "body.embedding.condition.b.extra"],
  ];
  await assertRefused(cases);
});

test("bad seed data: 400 parameter_invalid naming the row and cell, nothing charged", async () => {
  const cases: [unknown, string][] = [
    [seedData(["a", "zz"], [[0, 1]]), "body.embedding.seed_data.features[1]"],
    [seedData(["a", "a"], [[0, 1]]), "body.embedding.seed_data.features[1]"],
    [seedData([3], [[0]]), "body.embedding.seed_data.features[0]"],
    [seedData(["a", "b"], [[0, 1], [1, 3]]), "body.embedding.seed_data.rows[1][1]"],
    [seedData(["a", "b"], [[0, 1], [1, 2], [null, [0, 5]]]), "body.embedding.seed_data.rows[2][1][1]"],
    [seedData(["a", "b"], [[0, 1], [], [1, 2]]), "body.embedding.seed_data.rows[1]"],
    [seedData(["a", "b"], [[0, 1], [1, 2], [0, 1, 2], [1, 2]]), "body.embedding.seed_data.rows[2]"],
    [seedData(["a", "b"], [[0, 1], [1, []]]), "body.embedding.seed_data.rows[1][1]"],
    [seedData(["a", "b"], [[0, 1], [1, -2]]), "body.embedding.seed_data.rows[1][1]"],
    [seedData(["a", "b"], [[0, 1], [1, "x"]]), "body.embedding.seed_data.rows[1][1]"],
    [seedData(["a", "age group"], [[null, 4]]), "body.embedding.seed_data.rows[0][1]"],
    [seedData(["a"], []), "body.embedding.seed_data.rows"],
    [seedData(["a"], Array.from({ length: MAX_SEED_ROWS_PER_REQUEST + 1 }, () => [0])), "body.embedding.seed_data.rows"],
    [{ ...seedData(["a"], [[0]]), seed: "7" }, "body.embedding.seed"],
    [{ seed_data: { features: ["a"], rows: [[0]], extra: 1 } }, "body.embedding.seed_data.extra"],
    [{ seed_data: { features: ["a"] } }, "body.embedding.seed_data.rows"],
    [seedData(["a", "b"], [[0, 1], [1, { codes: [0, 2], weights: [0.5, -1] }]]), "body.embedding.seed_data.rows[1][1].weights[1]"],
  ];
  await assertRefused(cases);
});

test("good seeded requests reach the engine as sent and are charged the rows returned", async () => {
  const before = await usage();
  const where = { num_rows: 7, seed: 3, condition: { a: 1, b: [0, 2], "age group": { codes: [0, 1, 2, 3], weights: [0.25, 1, 1, 0.5] } } };
  const r1 = await gen(where);
  assert.equal(r1.status, 200, r1.text);
  assert.equal(r1.json.data.num_rows, 7);
  assert.deepEqual(h.engine.calls.at(-1)?.req?.embedding, where);
  const rows = [[0, null], [null, [1, 2]], [null, null], [1, 0]];
  const r2 = await gen({ seed: -4, ...seedData(["a", "b"], rows) });
  assert.equal(r2.status, 200, r2.text);
  assert.equal(r2.json.data.num_rows, 4);
  const cap = await gen(seedData(["b"], Array.from({ length: MAX_SEED_ROWS_PER_REQUEST }, (_, i) => [i % 3])));
  assert.equal(cap.status, 200, "exactly the cap is accepted");
  assert.equal(await usage(), before + 7 + 4 + MAX_SEED_ROWS_PER_REQUEST);
  // An empty condition is the plain draw through the same path.
  assert.equal((await gen({ num_rows: 2, condition: {} })).status, 200);
});

test("seededSource puts conditions in the model's feature order", () => {
  const src = seededSource({ num_rows: 3, condition: { b: 2, a: [1] } }, metadata());
  assert.deepEqual(src, { kind: "where", numRows: 3, calibrate: false, condition: [[1], 2, null] });
  const rows = seededSource({ seed: 5, seed_data: { features: ["age group", "a"], rows: [[3, null], [[0, 1], 1]] } }, metadata());
  assert.deepEqual(rows, { kind: "rows", numRows: 2, seed: 5, calibrate: false, rows: [[null, null, 3], [1, null, [0, 1]]], columns: [2, 0] });
  assert.equal(seededSource({ num_rows: 3, calibrate: true, condition: { a: 1 } }, metadata())?.calibrate, true);
  assert.equal(seededSource({ calibrate: true, seed_data: { features: ["a"], rows: [[1]] } }, metadata())?.calibrate, true);
  assert.equal(seededSource({ num_rows: 3 }, metadata()), undefined, "the plain form is not seeded");
  assert.equal(seededSource([[0, 1]], metadata()), undefined);
  assert.throws(() => seededSource({ num_rows: 3, condition: { c: 0 } }, metadata()), (e: unknown) => e instanceof SeededInputError && e.param === "body.embedding.condition.c");
});

/** A generator over `metadata()` whose code 1 of `a` has logit -1e6 below the others: probability 0. */
async function zeroModel(): Promise<GeneratorModel> {
  const layout = layoutOf(metadata());
  const spec = generatorSpec("small", 8, layout);
  const w = initParams(spec, Rng.fromString("seeded-zero"));
  w["out.b"][layout.offsets[0] + 1] = -1e6;
  if (nativeCoreStatus().available) return { spec, layout, params: {}, native: NativeGenerator.create(spec, layout, w) };
  await initBackend();
  return { spec, layout, params: toTensors(spec, w) };
}

test("a condition the model gives probability 0 is an InputError naming the condition's cell or row", async () => {
  const model = await zeroModel();
  const opts = { seed: 1, zeroSearch: 256 } as never;
  const where = seededSource({ num_rows: 10, condition: { a: 1, b: 0 } }, metadata())!;
  await assert.rejects(sampleSeededSource(model, where, opts), (e: unknown) => e instanceof InputError && e.param === "body.embedding.condition.a" && /probability 0/.test(e.message));
  const rows = seededSource({ seed_data: { features: ["b", "a"], rows: [[0, 0], [1, null], [2, 1]] } }, metadata())!;
  await assert.rejects(sampleSeededSource(model, rows, opts), (e: unknown) => e instanceof InputError && e.param === "body.embedding.seed_data.rows[2][1]");
  // The same model draws conditions it gives positive probability; fixed cells hold their codes.
  const ok = seededSource({ seed_data: { features: ["b", "a"], rows: [[0, 0], [1, null], [[1, 2], 0]] } }, metadata())!;
  const cols = await sampleSeededSource(model, ok, { seed: 2 });
  assert.deepEqual([cols[1][0], cols[1][1], cols[0][0], cols[0][1], cols[0][2]], [0, 1, 0, 0, 0]);
  assert.ok([1, 2].includes(cols[1][2]));
  assert.deepEqual(await sampleSeededSource(model, ok, { seed: 2 }), cols, "same seed, same codes");
});

test("the OpenAPI document describes both seeded forms of embedding", () => {
  const doc = openApiDocument() as { components: { schemas: Record<string, { properties?: Record<string, unknown> }> } };
  const schemas = doc.components.schemas;
  assert.ok(schemas.SeedDataSpec?.properties?.seed_data, "SeedDataSpec.seed_data");
  assert.ok(schemas.SeedData?.properties?.rows, "SeedData.rows");
  assert.ok(schemas.LatentSpec?.properties?.condition, "LatentSpec.condition");
});
