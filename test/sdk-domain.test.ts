/**
 * Domain mode (issue 5): already-discretized tables with a Private-PGM domain file. Codes are
 * taken as they are, K comes from the domain, decoding gives the codes back, and every mismatch
 * between table and domain is a DataError that names where.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import typia from "typia";
import { DataError, Decoder, analyzeTable, loadDomain } from "../src/sdk";
import { evaluate, independentSample } from "../src/sdk/evaluate";
import type { CreateModelRequest } from "../src/contract";

const validateCreate = typia.createValidateEquals<CreateModelRequest>();
const SHARED = "/work/shared/datasets";
const dir = mkdtempSync(join(tmpdir(), "synthd-sdk-domain-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
let fileNo = 0;
function file(content: string, ext = "csv"): string {
  const p = join(dir, `f${fileNo++}.${ext}`);
  writeFileSync(p, content);
  return p;
}

const DOMAIN = { a: 3, b: 2, c: 5 };
// c holds "03" (leading zero, read as code 3) and never codes 1 and 2
const GOOD = ["a,b,c", "0,1,4", "2,0,0", "0,1,4", "1,1,03", "0,0,4"].join("\n") + "\n";

function rejectsWith(p: Promise<unknown>, re: RegExp, where: { line?: number; column?: string } = {}): Promise<void> {
  return assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof DataError, `a DataError, got ${String(e)}`);
    assert.match(e.message, re);
    if (where.line !== undefined) assert.equal(e.line, where.line);
    if (where.column !== undefined) assert.equal(e.column, where.column);
    return true;
  });
}

test("codes are taken as they are: K from the domain, value_mappings 0..K-1, categorical stats", async () => {
  const a = await analyzeTable(file(GOOD), { domain: DOMAIN });
  const m = a.metadata;
  assert.deepEqual(m.features, ["a", "b", "c"]);
  assert.deepEqual(m.cardinalities, { a: 3, b: 2, c: 5 });
  assert.deepEqual(m.value_mappings!.c, { "0": 0, "1": 1, "2": 2, "3": 3, "4": 4 });
  assert.deepEqual(Array.from(a.codes[2]), [4, 0, 4, 3, 4]);
  assert.deepEqual(m.empirical_probs.a, [3 / 5, 1 / 5, 1 / 5]);
  assert.deepEqual(m.empirical_probs.b, [2 / 5, 3 / 5]);
  assert.deepEqual(m.empirical_probs.c, [1 / 5, 0, 0, 1 / 5, 3 / 5], "codes that never occur keep probability 0");
  for (const f of m.features) assert.deepEqual(m.column_stats![f], { type: "categorical", count: 5, missing: 0 });
  assert.equal(m.marginals!.length, 3, "all pairs fit the budget");
  const ab = m.marginals!.find((x) => x.features[0] === "a" && x.features[1] === "b")!;
  // rows (a, b): (0,1) (2,0) (0,1) (1,1) (0,0)
  assert.deepEqual(ab.probs, [1 / 5, 2 / 5, 0, 1 / 5, 1 / 5, 0]);
  assert.ok(validateCreate({ metadata: m }).success, "the server accepts the metadata");
});

test("decoding gives the integer codes back", async () => {
  const a = await analyzeTable(file(GOOD), { domain: DOMAIN });
  const cols: Record<string, number[]> = { a: [2, 0], b: [1, 0], c: [1, 4] };
  const t = new Decoder(a.metadata).decode(cols, 1);
  assert.deepEqual(t, { columns: ["a", "b", "c"], rows: [["2", "1", "1"], ["0", "0", "4"]] });
  const own: Record<string, ArrayLike<number>> = {};
  a.columns.forEach((c, f) => (own[c] = a.codes[f]));
  assert.deepEqual(new Decoder(a.metadata).decode(own, 2).rows, [["0", "1", "4"], ["2", "0", "0"], ["0", "1", "4"], ["1", "1", "3"], ["0", "0", "4"]]);
});

test("the domain may be a JSON file path; its key order does not matter (the CSV's order is kept)", async () => {
  const p = file(JSON.stringify({ c: 5, a: 3, b: 2 }), "json");
  const m = (await analyzeTable(file(GOOD), { domain: p })).metadata;
  assert.deepEqual(m.features, ["a", "b", "c"]);
  assert.deepEqual(m.cardinalities, DOMAIN);
});

test("shared discretized Adult: K per column from its domain, all 91 pairs within the budget", async () => {
  const domain = await loadDomain(join(SHARED, "adult-discrete-domain.json"));
  const a = await analyzeTable(join(SHARED, "adult-discrete.csv"), { domain: join(SHARED, "adult-discrete-domain.json") });
  assert.equal(a.n, 48842);
  assert.deepEqual(a.metadata.cardinalities, domain);
  assert.equal(a.metadata.marginals!.length, 91);
  assert.equal(a.selection.cells, 148137);
  assert.equal(a.selection.tree.length, 13);
  assert.ok(validateCreate({ metadata: a.metadata }).success);
});

test("with a small pair budget, domain mode selects the MI spanning tree plus strong pairs like raw mode", async () => {
  const rows = ["x,y,z,w"];
  for (let i = 0; i < 300; i++) {
    const x = i % 4;
    rows.push([x, x % 2, (i * 7) % 5, (x + (i % 3 === 0 ? 1 : 0)) % 4].join(","));
  }
  const a = await analyzeTable(file(rows.join("\n")), { domain: { x: 4, y: 2, z: 5, w: 4 }, pairBudget: 40 });
  assert.ok(a.selection.cells <= 40);
  assert.equal(a.selection.tree.length, 3, "a spanning tree fits: x-y (8) + x-w (16) + one edge to z");
  assert.ok(a.selection.pairs.some(([i, j]) => i === 0 && j === 1), "x-y (identical information) is selected");
  assert.ok(a.selection.pairs.some(([i, j]) => i === 0 && j === 3), "x-w is selected");
});

test("a domain column missing from the CSV, or a CSV column missing from the domain, is a DataError", async () => {
  await rejectsWith(analyzeTable(file(GOOD), { domain: { a: 3, b: 2, c: 5, d: 4 } }), /has no column "d", which the domain names/, { column: "d", line: 1 });
  await rejectsWith(analyzeTable(file(GOOD), { domain: { a: 3, b: 2 } }), /column "c" is not in the domain/, { column: "c", line: 1 });
});

test("a code outside [0, K) names its line and column", async () => {
  const p = file(["a,b,c", "0,1,4", "2,0,0", "0,2,4"].join("\n") + "\n");
  await rejectsWith(analyzeTable(p, { domain: DOMAIN }), /line 4, column "b": code 2 is outside the domain \[0, 2\)/, { line: 4, column: "b" });
});

test("negative, fractional and non-numeric values are not codes", async () => {
  for (const bad of ["-1", "1.5", "x", "1e2", "+1"]) {
    const p = file(["a,b,c", "0,1,4", `${bad},0,0`].join("\n") + "\n");
    await rejectsWith(analyzeTable(p, { domain: DOMAIN }), /line 3, column "a": .* is not an integer code in \[0, 3\)/, { line: 3, column: "a" });
  }
});

test("a blank value is rejected: a discretized table has no missing values", async () => {
  const p = file(["a,b,c", "0,1,4", "1,,0"].join("\n") + "\n");
  await rejectsWith(analyzeTable(p, { domain: DOMAIN }), /line 3, column "b": the value is blank/, { line: 3, column: "b" });
});

test("bad domains: missing file, invalid JSON, not an object, K not a positive integer, no columns", async () => {
  await rejectsWith(analyzeTable(file(GOOD), { domain: join(dir, "nope.json") }), /Cannot read the domain file .*nope\.json \(ENOENT\)/);
  await rejectsWith(analyzeTable(file(GOOD), { domain: file("{a: 3", "json") }), /is not valid JSON/);
  await rejectsWith(analyzeTable(file(GOOD), { domain: file("[3, 2, 5]", "json") }), /must be a JSON object mapping each column/);
  await rejectsWith(analyzeTable(file(GOOD), { domain: { a: 3, b: 0, c: 5 } }), /column "b" has 0 codes; expected a positive integer/, { column: "b" });
  await rejectsWith(analyzeTable(file(GOOD), { domain: { a: 3, b: 2.5, c: 5 } }), /column "b" has 2.5 codes/);
  await rejectsWith(analyzeTable(file(GOOD), { domain: {} }), /names no columns/);
});

test("evaluate and the independent baseline work on codes with a domain (no re-binning)", async () => {
  const real = file(GOOD);
  const self = await evaluate(real, real, { domain: DOMAIN });
  assert.deepEqual(self.tvd, { "1": 0, "2": 0, "3": 0 });
  // one row's c changed from 4 to 2: 1-way TVD of c = 1/5, others 0
  const other = file(["a,b,c", "0,1,4", "2,0,0", "0,1,4", "1,1,3", "0,0,2"].join("\n") + "\n");
  const r = await evaluate(real, other, { domain: DOMAIN });
  assert.deepEqual(r.columns.map((c) => Math.round(c.tvd1 * 1e12) / 1e12), [0, 0, 0.2]);
  // a synthetic code outside the domain counts as unseen
  const out = await evaluate(real, { columns: ["a", "b", "c"], rows: [["0", "1", "9"]] }, { domain: DOMAIN });
  assert.equal(out.unseen.c, 1);
  const ind = await independentSample(real, 50, 3, { domain: DOMAIN });
  assert.ok(ind.rows.every((row) => row.every((v) => /^\d$/.test(v))), "independent rows are codes");
  assert.ok(ind.rows.every((row) => row[2] !== "1" && row[2] !== "2"), "codes with probability 0 are never drawn");
});
