/**
 * SDK fidelity evaluation: average TVD of 1-, 2-, 3-way marginals, the independent baseline.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DataError, writeTableCsv } from "../src/sdk";
import { evaluate, independentSample } from "../src/sdk/evaluate";
import { marginalTvds } from "../src/sdk/metadata/marginals";

const ADULT = "/work/shared/datasets/adult.csv";
const dir = mkdtempSync(join(tmpdir(), "synthd-sdk-eval-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));

test("adult.csv against itself: every TVD is exactly 0", async () => {
  const r = await evaluate(ADULT, ADULT);
  assert.deepEqual(r.tvd, { "1": 0, "2": 0, "3": 0 });
  assert.deepEqual(r.marginals, { "1": 15, "2": 105, "3": 455 });
  assert.deepEqual(r.rows, { real: 32561, synthetic: 32561 });
  assert.equal(r.columns.length, 15);
  assert.ok(r.columns.every((c) => c.tvd1 === 0 && c.tvd2 === 0));
  assert.ok(Object.values(r.unseen).every((u) => u === 0));
});

test("the independent baseline matches 1-way marginals closely but not 2- and 3-way ones", async () => {
  const ind = await independentSample(ADULT, 32561, 7);
  assert.equal(ind.rows.length, 32561);
  assert.equal(ind.columns.length, 15);
  const r = await evaluate(ADULT, ind);
  assert.ok(r.tvd["1"] > 0 && r.tvd["1"] < 0.02, `1-way ${r.tvd["1"]}`);
  assert.ok(r.tvd["2"] > r.tvd["1"], `2-way ${r.tvd["2"]}`);
  assert.ok(r.tvd["3"] > r.tvd["2"], `3-way ${r.tvd["3"]}`);
  assert.ok(r.tvd["2"] > 0.03, "relationships between columns are lost");
  const edu = r.columns.find((c) => c.column === "education")!;
  assert.ok(edu.tvd2 > edu.tvd1);
  assert.ok(Object.values(r.unseen).every((u) => u === 0), "every sampled value occurs in the real data");
});

test("independentSample is reproducible per seed, and a CSV written from it evaluates the same", async () => {
  const a = await independentSample(ADULT, 2000, 11);
  const b = await independentSample(ADULT, 2000, 11);
  const c = await independentSample(ADULT, 2000, 12);
  assert.deepEqual(a, b);
  assert.notDeepEqual(a.rows, c.rows);
  const p = join(dir, "ind.csv");
  assert.equal(await writeTableCsv(a, p), 2000);
  assert.equal(readFileSync(p, "utf8").split("\n")[0], a.columns.join(","));
  assert.deepEqual(await evaluate(ADULT, p), await evaluate(ADULT, a));
});

test("synthetic values the real data never had count as differences", async () => {
  const real = { columns: ["x", "y"], rows: [["a", "1"], ["b", "2"], ["a", "3"], ["b", "4"]] };
  const synth = { columns: ["y", "x", "extra"], rows: [["1", "a", "z"], ["2", "zzz", "z"], ["99", "a", "z"], ["", "b", "z"]] };
  const r = await evaluate(real, synth);
  assert.deepEqual(r.unseen, { x: 0.25, y: 0.5 });
  // x: real {a: .5, b: .5}, synth {a: .5, b: .25, unseen: .25} -> TVD .25
  assert.equal(r.columns[0].tvd1, 0.25);
  // y: real point bins 1..4 at .25 each; synth 1, 2 at .25 and unseen .5 -> TVD .5
  assert.equal(r.columns[1].tvd1, 0.5);
  assert.equal(r.tvd["1"], 0.375);
  assert.equal(r.tvd["3"], 0, "no triples with two columns");
});

test("with the model's metadata, a fresh value of a column written fresh counts as the real rest, and is checked as fresh, not as unknown", async () => {
  // 8 rows: a twice, b twice, four cities seen once (the rest, pooled at k = 2).
  const real = { columns: ["city", "n"], rows: ["a", "a", "b", "b", "c1", "c2", "c3", "c4"].map((c, i) => [c, String(i % 2)]) };
  const synth = { columns: ["city", "n"], rows: ["a", "a", "b", "b", "f1", "f2", "f3", "f4"].map((c, i) => [c, String(i % 2)]) };
  const opts = { rareThreshold: 2, categoryCap: 16 };
  const plain = await evaluate(real, synth, opts);
  assert.equal(plain.columns[0].tvd1, 0.5, "without metadata the fresh values are unseen");
  assert.equal(plain.checks[0].known, 0.5);
  const metadata = {
    features: ["city", "n"],
    cardinalities: { city: 3, n: 2 },
    empirical_probs: { city: [0.25, 0.25, 0.5], n: [0.5, 0.5] },
    column_stats: { city: { type: "categorical" as const, count: 8, missing: 0, semantic: { kind: "city" as const } }, n: { type: "categorical" as const, count: 8, missing: 0 } },
    value_mappings: { city: { a: 0, b: 1, __other__: 2 }, n: { "0": 0, "1": 1 } },
  };
  const fresh = await evaluate(real, synth, { ...opts, metadata });
  assert.equal(fresh.columns[0].tvd1, 0, "fresh values stand for the rare real ones");
  assert.equal(fresh.checks[0].fresh, 0.5);
  assert.equal(fresh.checks[0].known, undefined);
});

test("a synthetic file without a real column is a DataError", async () => {
  const p = join(dir, "short.csv");
  writeFileSync(p, "age,sex\n30,Male\n");
  await assert.rejects(evaluate(ADULT, p), (e: unknown) => e instanceof DataError && /lacks columns "workclass"/.test(e.message));
});

test("marginalTvds: hand-computed 2-way TVD, tables of different sizes", () => {
  const p = [Uint8Array.from([0, 0, 1, 1]), Uint8Array.from([0, 1, 0, 1])];
  const q = [Uint8Array.from([0, 1]), Uint8Array.from([0, 1])];
  // P uniform over 4 cells; Q half on (0,0), half on (1,1): TVD = 1/2 (|.25-.5|*2 + .25*2) = .5
  const t = marginalTvds(p, q, [2, 2], [[0], [1], [0, 1]]);
  assert.deepEqual(Array.from(t), [0, 0, 0.5]);
});
