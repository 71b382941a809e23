/**
 * Bodies over {@link OFF_THREAD_BODY_BYTES} are parsed and validated on the body worker thread
 * (src/server/bodyPool.ts): every answer must be exactly the one the same body gets when it is
 * parsed in place. Each case sends a small body and the same body padded with trailing
 * whitespace past the threshold (JSON ignores it, and an error's position does not move), and
 * compares status, code, param and message. A valid create stores the whole metadata (encoded
 * on the worker, `PackedMetadata`) and an Idempotency-Key sees the same fingerprint either way.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OFF_THREAD_BODY_BYTES } from "../src/server/bodyPool";
import { LmdbStore, newModelId, packMetadata, PackedMetadata, type ModelRecord } from "../src/store";
import { CONFIG_DEFAULTS } from "../src/contract";
import { call, startHarness, validCreateBody, type Harness, type Res } from "./server-helpers";

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h.stop();
});

/** `text` followed by enough spaces to be parsed off-thread. */
const padded = (text: string | Buffer): Buffer => Buffer.concat([Buffer.from(text), Buffer.alloc(OFF_THREAD_BODY_BYTES + 1, " ")]);

/** POST /v1/models with `body` sent as its bytes. */
async function post(body: string | Buffer, headers: Record<string, string> = {}): Promise<Res> {
  const r = await fetch(`${h.url}/v1/models`, {
    method: "POST",
    headers: { authorization: `Bearer ${h.keys.test}`, "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : new Uint8Array(body),
  });
  const text = await r.text();
  return { status: r.status, headers: r.headers, text, json: JSON.parse(text) };
}

/** The fields of an error answer that must not depend on where the body was parsed. */
const answer = (r: Res): unknown => ({ status: r.status, code: r.json?.error?.code, param: r.json?.error?.param, message: r.json?.error?.message });

const create = validCreateBody();
const cases: Record<string, string | Buffer> = {
  "invalid UTF-8": Buffer.concat([Buffer.from('{"metadata": "'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]),
  "nested too deep": "[".repeat(65) + "]".repeat(65),
  "invalid JSON (an extra })": JSON.stringify(create) + "}",
  "a lone surrogate": JSON.stringify({ ...create, metadata: { ...create.metadata, features: ["a", "\\ud800"] } }).replace("\\\\ud800", "\\ud800"),
  "not an object": "[1, 2]",
  "typia: a code that is a string": JSON.stringify(create).replace('"q":1', '"q":"1"'),
  "typia: an unknown field": JSON.stringify({ ...create, extra: 1 }),
  "checkMetadata: a code out of range": JSON.stringify(create).replace('"r":2', '"r":3'),
};

describe("a body parsed off-thread gets the answer it gets in place", () => {
  for (const [name, body] of Object.entries(cases)) {
    test(name, async () => {
      const small = await post(body);
      assert.equal(small.status, 400, small.text);
      const large = await post(padded(body));
      assert.deepEqual(answer(large), answer(small));
    });
  }

  test("a valid create stores the whole metadata", async () => {
    const r = await post(padded(JSON.stringify(create)));
    assert.equal(r.status, 201, r.text);
    const md = await call(h.url, `/v1/models/${r.json.data.id}/metadata`, { key: h.keys.test });
    assert.equal(md.status, 200, md.text);
    assert.deepEqual(md.json.data, create.metadata);
  });

  test("an Idempotency-Key has the same fingerprint either way", async () => {
    const key = { "Idempotency-Key": "large-body-1" };
    const first = await post(padded(JSON.stringify(create)), key);
    assert.equal(first.status, 201, first.text);
    const again = await post(JSON.stringify(create), key);
    assert.equal(again.status, 201, again.text);
    assert.equal(again.headers.get("idempotent-replayed"), "true");
    assert.equal(again.json.data.id, first.json.data.id);
    const other = await post(padded(JSON.stringify({ ...create, config: { max_epochs: 3 } })), key);
    assert.equal(other.json?.error?.param, "headers.idempotency-key", other.text);
  });

  test("a validation error found off-thread is stored for replay", async () => {
    const key = { "Idempotency-Key": "large-body-2" };
    const body = padded(cases["typia: a code that is a string"]);
    const first = await post(body, key);
    assert.equal(first.status, 400, first.text);
    const again = await post(body, key);
    assert.equal(again.headers.get("idempotent-replayed"), "true");
    assert.deepEqual(answer(again), answer(first));
  });
});

test("the store writes encoded metadata as it is and reads it back as an object", async () => {
  const dir = mkdtempSync(join(tmpdir(), "synthd-packed-"));
  const store = new LmdbStore(dir);
  try {
    // More than 65,535 entries: msgpack needs a 32-bit map size.
    const mapping: Record<string, number> = {};
    for (let i = 0; i < 70_000; i++) mapping[`v${i}`] = i % 2;
    const md = { ...create.metadata, value_mappings: { a: mapping, b: { p: 0, q: 1, r: 2 } } };
    const t = new Date().toISOString();
    const rec: ModelRecord = {
      id: newModelId(), org: "o", env: "test", status: "training", config: { ...CONFIG_DEFAULTS, device: "cpu" },
      current_epoch: 0, train_loss: null, val_loss: null, created_at: t, updated_at: t, error: null,
    };
    await store.createModel(rec, new PackedMetadata(packMetadata(md)));
    assert.deepEqual(await store.getMetadata(rec.id), md);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
