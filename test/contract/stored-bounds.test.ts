/**
 * Bounds of what Create Model stores and of List Models' cursor (issue 39, defects 4 and 7;
 * docs/api.md "Create Model", "List Models", "Limits"): a cursor is a model id or a 400, never a
 * 500 from the store; metadata is consistent (`bin_edges` against the cardinality, mappings no
 * larger than it), its names are of sane length, and its size is bounded; an organization keeps
 * at most `--max-models-per-org` models; `max_training_time` is at most 7 days. Runs against both
 * topologies (test/integration/contract-shared.test.ts runs it on PostgreSQL).
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { assertEnvelope, assertError, call, QUICK, startContract, tinyMetadata, type Contract } from "./harness";
import { checkMetadata } from "../../src/server/handlers/checkMetadata";
import { MAX_FEATURE_NAME_LENGTH, MAX_METADATA_BYTES, MAX_TRAINING_TIME_S, MAX_VALUE_LENGTH, type Metadata } from "../../src/contract";

/** The cap of this file's server: small, so that reaching it takes few creates. */
const CAP = 3;

let c: Contract;
before(async () => {
  c = await startContract({ maxModelsPerOrg: CAP });
  c.engine.skipTraining = true; // only the answers matter here
});
after(async () => {
  await c.stop();
});

let orgs = 0;
/** A sandbox key of a new org, so that no test meets the cap through another's models. */
const freshKey = (): Promise<string> => c.newKey(`bounds-${orgs++}`, "test");

const create = async (metadata: unknown, config: Record<string, unknown> = QUICK, key?: string) =>
  call(c.url, "/v1/models", { key: key ?? (await freshKey()), body: { metadata, config } });

/** Tiny metadata whose feature `b` (K = 3) is numerical with `edges` as its bin edges. */
function withEdges(edges: number[], k = 3): Metadata {
  const md = tinyMetadata();
  md.cardinalities.b = k;
  md.empirical_probs.b = Array.from({ length: k }, () => 1 / k);
  md.value_mappings = { a: md.value_mappings!.a };
  md.marginals = [];
  md.column_stats = { b: { type: "numerical", count: 10, missing: 0, bin_edges: edges } };
  return md;
}

describe("List Models: starting_after", () => {
  test("a cursor of 4,092, 4,093 or 5,000 characters is 400 parameter_invalid on query.starting_after, never 500", async () => {
    for (const cursor of ["m".repeat(4092), "m".repeat(4093), `mdl_${"a".repeat(4996)}`]) {
      const r = await call(c.url, `/v1/models?starting_after=${cursor}`, { key: c.keys.test });
      assertError(r, "parameter_invalid", "query.starting_after");
    }
  });
});

describe("Create Model: metadata consistency and size", () => {
  test("bin_edges needs K + 1 edges, or K when the last code is the missing value's", async () => {
    assertEnvelope(await create(withEdges([0, 1, 2, 3])), 201, "model");
    assertEnvelope(await create(withEdges([0, 1, 2])), 201, "model");
    for (const edges of [[0, 1], [0, 1, 2, 3, 4], Array.from({ length: 1_000_000 }, (_, i) => i)]) {
      const r = await create(withEdges(edges));
      assertError(r, "parameter_invalid", "body.metadata.column_stats.b.bin_edges");
      assert.match(r.json.error.message, new RegExp(`has ${edges.length} entries; its cardinality 3 needs 4`));
    }
  });

  test("bin_edges must be non-decreasing; the param names the first edge out of order", async () => {
    assertEnvelope(await create(withEdges([0, 1, 1, 2])), 201, "model"); // a repeated edge: a point bin
    assertError(await create(withEdges([0, 2, 1, 3])), "parameter_invalid", "body.metadata.column_stats.b.bin_edges[2]");
  });

  test(`feature names are at most ${MAX_FEATURE_NAME_LENGTH} characters; a 1 MB name is refused on its index`, async () => {
    const named = (name: string): Metadata => ({ features: [name], cardinalities: { [name]: 2 }, empirical_probs: { [name]: [0.5, 0.5] } });
    assertEnvelope(await create(named("n".repeat(MAX_FEATURE_NAME_LENGTH))), 201, "model");
    for (const name of ["n".repeat(MAX_FEATURE_NAME_LENGTH + 1), "n".repeat(1_000_000)]) {
      const r = await create(named(name));
      assertError(r, "parameter_invalid", "body.metadata.features[0]");
      assert.ok(r.text.length < 2000, "the name is not echoed in full");
    }
  });

  test("a key of cardinalities far longer than any feature name is refused without repeating it in the param", async () => {
    const md = tinyMetadata();
    (md.cardinalities as Record<string, number>)["k".repeat(100_000)] = 2;
    const r = await create(md);
    assertError(r, "parameter_invalid", "body.metadata.cardinalities");
    assert.ok(r.text.length < 2000);
  });

  test(`value_mappings: at most K entries per feature, each value at most ${MAX_VALUE_LENGTH} characters`, async () => {
    const long = tinyMetadata();
    long.value_mappings!.a = { ["v".repeat(MAX_VALUE_LENGTH)]: 0, y: 1 };
    assertEnvelope(await create(long), 201, "model");
    long.value_mappings!.a = { ["v".repeat(MAX_VALUE_LENGTH + 1)]: 0, y: 1 };
    const r = await create(long);
    assertError(r, "parameter_invalid", "body.metadata.value_mappings.a");
    assert.ok(r.text.length < 2000);
    const many = tinyMetadata();
    many.value_mappings!.a = { x: 0, y: 1, z: 1 };
    assertError(await create(many), "parameter_invalid", "body.metadata.value_mappings.a");
  });

  test(`metadata over ${MAX_METADATA_BYTES} bytes of JSON is 400 parameter_invalid on body.metadata`, async () => {
    // Valid in every other respect: an identifier column whose length histogram is 9 MB.
    const lengths: Record<string, number> = {};
    for (let i = 0; i < 85_000; i++) lengths[String(i).padStart(100, "9")] = 1;
    const md: Metadata = {
      features: ["id"],
      cardinalities: { id: 1 },
      empirical_probs: { id: [1] },
      column_stats: { id: { type: "id", count: 1, missing: 0, id_shape: { kind: "text", prefix: "", lengths, positions: [] } } },
    };
    assert.ok(Buffer.byteLength(JSON.stringify(md)) > MAX_METADATA_BYTES);
    const r = await create(md);
    assertError(r, "parameter_invalid", "body.metadata");
    assert.match(r.json.error.message, /bytes as compact JSON/);
  });
});

test(`the metadata bound is exact: ${MAX_METADATA_BYTES} bytes of compact JSON pass the semantic checks, one more does not`, () => {
  const md = (prefix: string): Metadata => ({
    features: ["id"],
    cardinalities: { id: 1 },
    empirical_probs: { id: [1] },
    column_stats: { id: { type: "id", count: 1, missing: 0, id_shape: { kind: "text", prefix, lengths: {}, positions: [] } } },
  });
  const fill = MAX_METADATA_BYTES - Buffer.byteLength(JSON.stringify(md("")));
  assert.doesNotThrow(() => checkMetadata(md("p".repeat(fill))));
  assert.throws(() => checkMetadata(md("p".repeat(fill + 1))), (err: { param?: string }) => err.param === "body.metadata");
});

describe("Create Model: config bounds", () => {
  test(`max_training_time is at most ${MAX_TRAINING_TIME_S} seconds (7 days); 1e308 is refused on its field`, async () => {
    const ok = assertEnvelope(await create(tinyMetadata(), { ...QUICK, max_training_time: MAX_TRAINING_TIME_S }), 201, "model");
    assert.equal(ok.config.max_training_time, MAX_TRAINING_TIME_S);
    for (const t of [MAX_TRAINING_TIME_S + 1, 1e308]) {
      assertError(await create(tinyMetadata(), { ...QUICK, max_training_time: t, max_epochs: 1_000_000 }), "parameter_invalid", "body.config.max_training_time");
    }
  });
});

describe("Limits: models per organization", () => {
  test(`an org keeps at most --max-models-per-org models, sandbox and live together: beyond, 402 quota_exceeded`, async () => {
    const test = await c.newKey("capped", "test");
    const live = await c.newKey("capped", "live");
    const made = [];
    for (const key of [test, live, test]) made.push(assertEnvelope(await create(tinyMetadata(), QUICK, key), 201, "model"));
    const refused = await create(tinyMetadata(), QUICK, test);
    assertError(refused, "quota_exceeded", undefined);
    assert.match(refused.json.error.message, new RegExp(`already keeps ${CAP} models`));
    assertError(await create(tinyMetadata(), QUICK, live), "quota_exceeded", undefined);
    assert.equal(assertEnvelope(await call(c.url, "/v1/models", { key: test }), 200, "list").length, 2, "nothing of the refused creates was stored");
    assert.equal((await call(c.url, `/v1/models/${made[0].id}`, { key: test, method: "DELETE" })).status, 204);
    assertEnvelope(await create(tinyMetadata(), QUICK, live), 201, "model");
    assertError(await create(tinyMetadata(), QUICK, live), "quota_exceeded", undefined);
    const other = await freshKey();
    assertEnvelope(await create(tinyMetadata(), QUICK, other), 201, "model"); // another org is not held back
  });

  test("concurrent creates of one org never pass the cap", async () => {
    const key = await freshKey();
    const rs = await Promise.all(Array.from({ length: 12 }, () => create(tinyMetadata(), QUICK, key)));
    assert.equal(rs.filter((r) => r.status === 201).length, CAP);
    for (const r of rs.filter((x) => x.status !== 201)) assertError(r, "quota_exceeded", undefined);
    assert.equal(assertEnvelope(await call(c.url, "/v1/models?limit=100", { key }), 200, "list").length, CAP);
  });
});
