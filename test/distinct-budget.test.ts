/**
 * Columns with a value per row (docs/extract.md "Columns with a value per row"): past the
 * distinct-value budget a column keeps streaming figures and the sample's values; a table within
 * the sample gets the metadata of an unbounded read, a larger one keeps identifiers as ids and
 * unique numbers as quantile bins with the exact range, whatever the thread count.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { analyzeTable, DataError, type Analysis } from "../src/sdk";
import { DistinctSketch, hashText, Overflow } from "../src/sdk/metadata/distinct-values";
import { ByteDict } from "../src/sdk/metadata/csv-chunks";
import { tallyTable } from "../src/sdk/metadata/table-tally";
import { removeDir, tempDir } from "../bench/harness";

let dir = "";
before(() => {
  dir = tempDir("synthd-distinct-budget-");
});
after(() => removeDir(dir));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

/** Rows with an integer key, a text key, a unique float, a timestamp to the second, a category with blanks. */
function perRowCsv(rows: number): { text: string; amounts: number[] } {
  const lines = ["order_id,ref,amount,at,color"];
  const amounts: number[] = [];
  for (let r = 0; r < rows; r++) {
    const amount = Math.round(((r * 7919) % 100003) * 1.37 + r / 1000) / 1000 + 0.0001;
    amounts.push(amount);
    const at = new Date(Date.UTC(2023, 0, 1) + r * 61_000).toISOString().slice(0, 19).replace("T", " ");
    lines.push([1000 + r, `C-${String(r * 13).padStart(7, "0")}`, amount, at, ["red", "green", "", "blue"][r % 4]].join(","));
  }
  return { text: lines.join("\n") + "\n", amounts };
}

function meta(a: Analysis): unknown {
  return JSON.parse(JSON.stringify(a.metadata));
}

test("a table within the sample: a small budget gives the unbounded metadata, for 0 to 3 threads", async () => {
  const path = file("small.csv", perRowCsv(1500).text);
  const unbounded = await analyzeTable(path, { threads: 0 });
  for (const threads of [0, 2, 3]) {
    const a = await analyzeTable(path, { threads, distinctBudget: 40 });
    assert.deepEqual(meta(a), meta(unbounded), `${threads} threads`);
    a.codes.forEach((c, f) => assert.deepEqual(Array.from(c), Array.from(unbounded.codes[f]), `codes of ${a.columns[f]}`));
  }
  const st = unbounded.metadata.column_stats!;
  assert.equal(st.order_id.type, "id");
  assert.equal(st.ref.type, "id");
  assert.equal(st.amount.type, "numerical");
  assert.equal(st.at.type, "datetime");
});

test("a larger table past the budget: ids stay ids, unique numbers get quantile bins with the exact range and moments", async () => {
  const rows = 6000;
  const { text, amounts } = perRowCsv(rows);
  const path = file("large.csv", text);
  const unbounded = await analyzeTable(path, { threads: 0, sampleRows: 1000 });
  const runs = await Promise.all([0, 2, 3].map((threads) => analyzeTable(path, { threads, sampleRows: 1000, distinctBudget: 300 })));
  for (const a of runs) assert.deepEqual(meta(a), meta(runs[0]));
  // The four per-row columns overflowed (only the sample's values kept), the category did not.
  for (const threads of [0, 2]) {
    const t = await tallyTable(path, { threads, sampleRows: 1000, distinctBudget: 300 });
    try {
      assert.deepEqual(t.overflow.map((o) => o !== undefined), [true, true, true, true, false]);
      assert.deepEqual(t.overflow.slice(0, 4).map((o) => o!.rows), [rows, rows, rows, rows]);
      for (let c = 0; c < 4; c++) assert.ok(t.scans[c].values.length <= 1000 && t.scans[c].estimated!.distinct > 0.95 * rows);
    } finally {
      await t.close();
    }
  }
  const m = runs[0].metadata;
  const st = m.column_stats!;
  assert.equal(st.order_id.type, "id");
  assert.equal(st.ref.type, "id");
  // Text ids: the shape of the sample's values (lengths weighted by its rows); integer ids: the table's range.
  const ref = st.ref.id_shape as { prefix?: string; lengths: Record<string, number> };
  const refAll = unbounded.metadata.column_stats!.ref.id_shape as typeof ref;
  assert.equal(ref.prefix, refAll.prefix);
  assert.deepEqual(Object.keys(ref.lengths), Object.keys(refAll.lengths));
  const key = st.order_id.id_shape as { min: number; max: number; distinct: number };
  assert.deepEqual([key.min, key.max], [1000, 1000 + rows - 1]);
  assert.ok(Math.abs(key.distinct / rows - 1) < 0.03, String(key.distinct));
  assert.equal(st.amount.type, "numerical");
  assert.equal(st.at.type, "datetime");
  assert.equal(st.at.format, "yyyy-MM-dd HH:mm:ss");
  // The range, count and moments are the table's, not the sample's.
  const mean = amounts.reduce((s, x) => s + x, 0) / rows;
  assert.equal(st.amount.min, Math.min(...amounts));
  assert.equal(st.amount.max, Math.max(...amounts));
  assert.equal(st.amount.count, rows);
  assert.ok(Math.abs(st.amount.mean! - mean) < 1e-9 * mean, `${st.amount.mean} vs ${mean}`);
  const edges = st.amount.bin_edges!;
  assert.equal(edges[0], st.amount.min);
  assert.equal(edges[edges.length - 1], st.amount.max);
  // 1-way marginals are the exact counts of the table's values in the sample's bins.
  const probs = m.empirical_probs.amount;
  const inBin = probs.map(() => 0);
  for (const x of amounts) {
    let b = edges.findIndex((e, i) => i > 0 && x < e);
    if (b < 0) b = edges.length - 1;
    inBin[b - 1]++;
  }
  assert.deepEqual(probs.map((p) => Math.round(p * rows)), inBin);
  // Quantile bins from a sample of 1,000 rows hold about equal shares of the table.
  for (const p of probs) assert.ok(p > 0.5 / probs.length && p < 2 / probs.length, JSON.stringify(probs));
  // The repeated column is untouched by the budget.
  assert.deepEqual(m.empirical_probs.color, unbounded.metadata.empirical_probs.color);
  assert.deepEqual(m.value_mappings!.color, unbounded.metadata.value_mappings!.color);
  // 2-way marginals of the binned column are counted over the whole table.
  const pair = m.marginals!.find((p) => p.features.includes("amount") && p.features.includes("color"));
  if (pair) assert.ok(Math.abs(pair.probs.reduce((s, p) => s + p, 0) - 1) < 1e-9);
});

test("past the budget, a datetime value that does not parse outside the sample is named at its line", async () => {
  const lines = ["at,x"];
  for (let r = 0; r < 3000; r++) lines.push(`${new Date(Date.UTC(2023, 0, 1) + r * 1000).toISOString().slice(0, 19).replace("T", " ")},${r % 3}`);
  // Every line but one: whichever lines the sample holds, one bad value is met by some pass.
  lines[2000] = "not a time,1";
  const path = file("bad-time.csv", lines.join("\n") + "\n");
  for (const threads of [0, 2]) {
    await assert.rejects(
      analyzeTable(path, { threads, sampleRows: 400, distinctBudget: 100 }),
      (e: unknown) => e instanceof DataError && /line 2001\b/.test(e.message) && /not a time/.test(e.message),
    );
  }
});

test("the distinct-count sketch estimates within 3%, merges to the whole's registers, and hashes text as the byte table does", () => {
  const whole = new DistinctSketch();
  const parts = [new DistinctSketch(), new DistinctSketch()];
  const n = 200_000;
  for (let i = 0; i < n; i++) {
    const h = hashText(`id-${i}-ü`);
    whole.addHash(h);
    parts[i % 2].addHash(h);
    whole.addHash(h);
  }
  assert.ok(Math.abs(whole.estimate() / n - 1) < 0.03, String(whole.estimate()));
  parts[0].merge(parts[1].registers);
  assert.deepEqual(parts[0].registers, whole.registers);
  const small = new DistinctSketch();
  for (let i = 0; i < 100; i++) small.addHash(hashText(String(i)));
  assert.ok(Math.abs(small.estimate() - 100) < 3, String(small.estimate()));
  for (const s of ["", "abc", "ünïcode", "😀 x", "\u0800"]) {
    const b = Buffer.from(s, "utf8");
    assert.equal(hashText(s), ByteDict.hash(b, 0, b.length), s);
  }
  const o = new Overflow();
  for (const v of ["12", "-3", "", "4"]) o.add(v, hashText(v));
  assert.deepEqual([o.rows, o.blanks, o.numeric, o.integer], [3, 1, true, true]);
  o.add("1.5", hashText("1.5"));
  assert.deepEqual([o.numeric, o.integer], [true, false]);
  o.add("x", hashText("x"));
  assert.equal(o.numeric, false);
});

test("past the budget, a value is released only when the sample holds it in k rows (a table value of one row never is)", async () => {
  const lines = ["note,x"];
  for (let r = 0; r < 6000; r++) lines.push(`${r % 10 === 0 ? `common${r % 3}` : `u${r}`},${r % 4}`);
  const path = file("rare.csv", lines.join("\n") + "\n");
  for (const threads of [0, 2]) {
    const a = await analyzeTable(path, { threads, sampleRows: 1000, distinctBudget: 300 });
    assert.equal(a.metadata.column_stats!.note.type, "categorical");
    const released = Object.keys(a.metadata.value_mappings!.note);
    assert.deepEqual(released.filter((v) => v.startsWith("u")), []);
    assert.ok(released.includes("common0") && released.includes("__other__"), JSON.stringify(released));
    assert.equal(a.metadata.column_stats!.note.count, 6000);
    // The pooled code holds the table's rows of the values not released.
    const probs = a.metadata.empirical_probs.note;
    assert.ok(Math.abs(probs[a.metadata.value_mappings!.note.__other__] - 0.9) < 1e-9, JSON.stringify(probs));
  }
});
