/**
 * The Arrow form of a Generate response (issue 13; src/server/arrow.ts, docs/api.md "Arrow
 * responses"): chosen by Accept, the same codes as the JSON form, errors still JSON, replays
 * byte for byte under an Idempotency-Key, and read by the SDK's `generateCodes` (with a fallback
 * to JSON for a server that answers JSON).
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { tableFromIPC } from "apache-arrow";
import { ARROW_STREAM, narrowCodes, prefersArrow, wantsNarrowCodes } from "../src/server/arrow";
import { monthOf } from "../src/usage/quota";
import { Synthd } from "../src/sdk";
import { codesFromArrow } from "../src/sdk/client/models";
import type { GenerateRequest, Generation, Metadata } from "../src/contract";
import { call, startHarness, type Harness } from "./server-helpers";

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
  // Codes that differ per feature and row, a function of the request's seed.
  h.engine.generate = async (mid: string, req: GenerateRequest): Promise<Generation> => {
    const e = req.embedding as { num_rows: number; seed?: number };
    const n = e.num_rows;
    const s = e.seed ?? 0;
    const features = ["a", "b", "age group"];
    const K = [2, 3, 4];
    const columns = Object.fromEntries(features.map((f, j) => [f, Array.from({ length: n }, (_, r) => (r * (j + 2) + s) % K[j])]));
    return { model_id: mid, num_rows: n, features, columns };
  };
  const r = await call(h.url, "/v1/models", { key: h.keys.test, body: { metadata: metadata() } });
  assert.equal(r.status, 201, r.text);
  id = r.json.data.id;
});
after(async () => {
  await h.stop();
});

const usage = (): Promise<number> => h.store.getUsage("acme", "test", monthOf(Date.now()));

/** POSTs a generate with `accept`; returns status, headers and the raw body. */
async function post(body: unknown, accept?: string, extra: Record<string, string> = {}, model = id): Promise<{ status: number; headers: Headers; bytes: Uint8Array }> {
  const res = await fetch(`${h.url}/v1/models/${model}/generate`, {
    method: "POST",
    headers: { Authorization: `Bearer ${h.keys.test}`, "Content-Type": "application/json", ...(accept !== undefined ? { Accept: accept } : {}), ...extra },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, bytes: new Uint8Array(await res.arrayBuffer()) };
}

test("Accept negotiation: Arrow only when named with a quality at least JSON's", () => {
  const cases: [string | undefined, boolean][] = [
    [undefined, false],
    ["", false],
    ["application/json", false],
    ["*/*", false],
    ["application/*", false],
    [ARROW_STREAM, true],
    [`${ARROW_STREAM}, application/json;q=0.5`, true],
    [`application/json;q=0.5, ${ARROW_STREAM}`, true],
    [`${ARROW_STREAM};q=0.4, application/json`, false],
    [`${ARROW_STREAM};q=0, */*`, false],
    [`${ARROW_STREAM};q=0.5, */*;q=0.5`, true],
    [`APPLICATION/VND.APACHE.ARROW.STREAM`, true],
  ];
  for (const [accept, arrow] of cases) assert.equal(prefersArrow(accept), arrow, String(accept));
});

test("Arrow: the same codes as the JSON form, one Int32 column per feature, the envelope's fields as schema metadata, charged the same", async () => {
  const body = { embedding: { num_rows: 1000, seed: 3 } };
  const before = await usage();
  const json = await post(body, "application/json");
  const arrow = await post(body, ARROW_STREAM);
  assert.equal(json.status, 200);
  assert.equal(arrow.status, 200);
  assert.equal(json.headers.get("content-type"), "application/json");
  assert.equal(arrow.headers.get("content-type"), ARROW_STREAM);
  assert.equal(arrow.headers.get("vary"), "Accept");
  assert.equal(await usage(), before + 2000, "both charged their rows");
  const data = JSON.parse(new TextDecoder().decode(json.bytes)).data as Generation;
  const table = tableFromIPC(arrow.bytes);
  assert.deepEqual(table.schema.fields.map((f) => f.name), data.features);
  assert.ok(table.schema.fields.every((f) => String(f.type) === "Int32"));
  assert.equal(table.numRows, 1000);
  for (const f of data.features) assert.deepEqual(Array.from(table.getChild(f)!.toArray() as Int32Array), data.columns[f], f);
  const meta = table.schema.metadata;
  assert.equal(meta.get("synthd.object"), "generation");
  assert.equal(meta.get("synthd.model_id"), id);
  assert.equal(meta.get("synthd.num_rows"), "1000");
  assert.ok(!Number.isNaN(Date.parse(meta.get("synthd.timestamp")!)));
  assert.ok(arrow.headers.get("x-request-id")?.startsWith("req_"));
});

test("narrow codes: asked for with codes=narrow, each column the narrowest unsigned type, the same codes; Int32 otherwise", async () => {
  assert.equal(wantsNarrowCodes(`${ARROW_STREAM};codes=narrow, application/json;q=0.5`), true);
  assert.equal(wantsNarrowCodes(`${ARROW_STREAM}; q=0.9; codes="narrow"`), true);
  assert.equal(wantsNarrowCodes(ARROW_STREAM), false);
  assert.equal(wantsNarrowCodes(`application/json;codes=narrow, ${ARROW_STREAM}`), false);
  assert.equal(wantsNarrowCodes(undefined), false);
  assert.ok(narrowCodes(Int32Array.from([0, 255])) instanceof Uint8Array);
  assert.ok(narrowCodes(Int32Array.from([0, 256])) instanceof Uint16Array);
  assert.deepEqual(Array.from(narrowCodes(Int32Array.from([3, 65535]))), [3, 65535]);
  assert.ok(narrowCodes(Int32Array.from([0, 65536])) instanceof Int32Array);
  assert.ok(narrowCodes(Int32Array.from([-1, 2])) instanceof Int32Array);
  const body = { embedding: { num_rows: 700, seed: 5 } };
  const wide = tableFromIPC((await post(body, ARROW_STREAM)).bytes);
  const narrow = await post(body, `${ARROW_STREAM};codes=narrow`);
  assert.equal(narrow.status, 200);
  assert.equal(narrow.headers.get("content-type"), ARROW_STREAM);
  const table = tableFromIPC(narrow.bytes);
  assert.ok(table.schema.fields.every((f) => String(f.type) === "Uint8"), String(table.schema.fields.map((f) => f.type)));
  assert.ok(wide.schema.fields.every((f) => String(f.type) === "Int32"));
  for (const f of ["a", "b", "age group"]) assert.deepEqual(Array.from(table.getChild(f)!.toArray() as Uint8Array), Array.from(wide.getChild(f)!.toArray() as Int32Array), f);
  assert.deepEqual(codesFromArrow(narrow.bytes).columns, codesFromArrow((await post(body, ARROW_STREAM)).bytes).columns);
  assert.ok(codesFromArrow(narrow.bytes).columns.a instanceof Int32Array, "the SDK widens narrow columns to Int32Array");
});

test("errors stay the JSON envelope when Arrow is asked for", async () => {
  const missing = await post({ embedding: { num_rows: 5 } }, ARROW_STREAM, {}, "mdl_000000000000");
  assert.equal(missing.status, 404);
  assert.equal(missing.headers.get("content-type"), "application/json");
  assert.equal(JSON.parse(new TextDecoder().decode(missing.bytes)).error.code, "model_not_found");
  const bad = await post({ embedding: { num_rows: 0 } }, ARROW_STREAM);
  assert.equal(bad.status, 400);
  assert.equal(JSON.parse(new TextDecoder().decode(bad.bytes)).error.param, "body.embedding.num_rows");
});

test("an Idempotency-Key replays the Arrow response byte for byte and charges once", async () => {
  const body = { embedding: { num_rows: 300, seed: 9 } };
  const before = await usage();
  const first = await post(body, ARROW_STREAM, { "Idempotency-Key": "arrow-replay-1" });
  const second = await post(body, ARROW_STREAM, { "Idempotency-Key": "arrow-replay-1" });
  assert.equal(first.status, 200);
  assert.equal(second.status, 200);
  assert.equal(second.headers.get("idempotent-replayed"), "true");
  assert.equal(second.headers.get("content-type"), ARROW_STREAM);
  assert.deepEqual(Buffer.from(second.bytes), Buffer.from(first.bytes));
  assert.equal(await usage(), before + 300);
});

test("SDK generateCodes: Int32Array columns from Arrow, the JSON form on request or from a server that answers JSON", async () => {
  const client = new Synthd({ apiKey: h.keys.test, baseUrl: h.url });
  const body = { embedding: { num_rows: 500, seed: 4 } };
  const viaArrow = await client.models.generateCodes(id, body);
  const viaJson = await client.models.generateCodes(id, body, { format: "json" });
  assert.ok(viaArrow.columns.a instanceof Int32Array);
  assert.ok(Array.isArray(viaJson.columns.a));
  assert.deepEqual(viaArrow.features, viaJson.features);
  assert.equal(viaArrow.num_rows, 500);
  assert.equal(viaArrow.model_id, id);
  for (const f of viaJson.features) assert.deepEqual(Array.from(viaArrow.columns[f]), viaJson.columns[f]);
  // A server without the extension ignores Accept and answers JSON: read as JSON.
  const jsonOnly = new Synthd({
    apiKey: h.keys.test,
    baseUrl: h.url,
    fetch: (url, init) => fetch(url, { ...init, headers: { ...(init?.headers as Record<string, string>), Accept: "application/json" } }),
  });
  const fallback = await jsonOnly.models.generateCodes(id, body);
  assert.deepEqual(fallback.columns, viaJson.columns);
  // A body that is not an Arrow generation is an invalid_response.
  assert.throws(() => codesFromArrow(new Uint8Array([1, 2, 3])), (e: unknown) => (e as { code?: string }).code === "invalid_response");
});
