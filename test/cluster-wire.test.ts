/**
 * The shared topology's internal wire (src/cluster/wire.ts): a worker's generate answer decodes to
 * exactly the codes it encoded, whatever the header length (alignment) and the buffer's offset;
 * truncated answers are refused; rendezvous order is the same on every front end, moves a model
 * only when its worker leaves, and spreads models over workers.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { decodeGeneration, encodeGeneration, rendezvousOrder } from "../src/cluster/wire";
import type { RawGeneration } from "../src/engine/engine";

function generation(features: string[], n: number): RawGeneration {
  const columns: Record<string, Int32Array> = {};
  features.forEach((f, i) => (columns[f] = Int32Array.from({ length: n }, (_, r) => (r * 7 + i * 13) % 97 - 3)));
  return { model_id: "mdl_0123456789ab", num_rows: n, features, columns };
}

describe("generate answer encoding", () => {
  test("round trip: every code of every column, for header lengths of every residue mod 4", () => {
    for (const extra of ["", "x", "xy", "xyz"]) {
      const g = generation([`age${extra}`, "sex", "income"], 1001);
      const bytes = encodeGeneration(g);
      const back = decodeGeneration(bytes);
      assert.equal(back.model_id, g.model_id);
      assert.equal(back.num_rows, 1001);
      assert.deepEqual(back.features, g.features);
      for (const f of g.features) assert.deepEqual(Array.from(back.columns[f]), Array.from(g.columns[f]), f);
    }
  });

  test("decodes from a buffer at an odd offset (as a network read may hand it)", () => {
    const bytes = encodeGeneration(generation(["a", "b"], 17));
    const shifted = new Uint8Array(bytes.length + 3);
    shifted.set(bytes, 3);
    const back = decodeGeneration(shifted.subarray(3));
    assert.deepEqual(Array.from(back.columns.b), Array.from(generation(["a", "b"], 17).columns.b));
  });

  test("zero rows round-trip; a truncated answer is refused, never read past its end", () => {
    assert.equal(decodeGeneration(encodeGeneration(generation(["a"], 0))).num_rows, 0);
    const bytes = encodeGeneration(generation(["a", "b"], 50));
    assert.throws(() => decodeGeneration(bytes.subarray(0, bytes.length - 4)), /truncated/);
    assert.throws(() => decodeGeneration(bytes.subarray(0, 10)), /truncated/);
    assert.throws(() => decodeGeneration(bytes.subarray(0, 2)), /too short/);
  });
});

describe("rendezvous order of workers", () => {
  const workers = ["wrk_a1", "wrk_b2", "wrk_c3", "wrk_d4"].map((id) => ({ id, url: `http://${id}` }));

  test("the same order whatever order the registry lists the workers in", () => {
    const ref = rendezvousOrder("mdl_000000000001", workers).map((w) => w.id);
    assert.deepEqual(rendezvousOrder("mdl_000000000001", [...workers].reverse()).map((w) => w.id), ref);
    assert.equal(new Set(ref).size, workers.length, "every worker once: the retry order");
  });

  test("a model moves only when its first worker leaves; the others keep theirs", () => {
    const ids = Array.from({ length: 400 }, (_, i) => `mdl_${i.toString(16).padStart(12, "0")}`);
    const gone = workers[1].id;
    const rest = workers.filter((w) => w.id !== gone);
    for (const id of ids) {
      const before = rendezvousOrder(id, workers)[0].id;
      const after = rendezvousOrder(id, rest)[0].id;
      if (before !== gone) assert.equal(after, before, `${id} moved although ${before} stayed`);
    }
  });

  test("models spread over the workers (each gets 15% to 35% of 4,000)", () => {
    const count = new Map<string, number>();
    for (let i = 0; i < 4000; i++) {
      const first = rendezvousOrder(`mdl_${i.toString(16).padStart(12, "0")}`, workers)[0].id;
      count.set(first, (count.get(first) ?? 0) + 1);
    }
    for (const w of workers) {
      const share = (count.get(w.id) ?? 0) / 4000;
      assert.ok(share > 0.15 && share < 0.35, `${w.id}: ${share}`);
    }
  });
});
