/**
 * SDK metadata extraction (DESIGN §2): type inference, code books, 1-way and 2-way marginals,
 * pair selection, and the DataError raised for each kind of bad input.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DataError, SynthdError, analyzeTable, extractMetadata, selectPairs, mutualInformation, type Metadata } from "../src/sdk";
import { quantileEdges, binOf, pointValues } from "../src/sdk/columns/bins";
import { describeColumns } from "../src/sdk/columns";
import { Decoder } from "../src/sdk/generate/decode";
import typia from "typia";
import { Readable, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { CSV_WRITE_ROWS, detectDelimiter, readCsvText, writeCsv, writeCsvBatches } from "../src/sdk/io/csv";
import { Utf8Check, firstInvalidUtf8 } from "../src/sdk/io/text-decoding";
import { stringify } from "csv-stringify";
import type { CreateModelRequest } from "../src/contract";

/** The validator the server generates for Create Model (DESIGN §3: unknown fields rejected). */
const validateCreate = typia.createValidateEquals<CreateModelRequest>();

const ADULT = "/work/shared/datasets/adult.csv";
const dir = mkdtempSync(join(tmpdir(), "synthd-sdk-meta-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
let fileNo = 0;
function csv(content: string | Buffer): string {
  const p = join(dir, `f${fileNo++}.csv`);
  writeFileSync(p, content);
  return p;
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/** Checks probs sum to 1 and each 2-way marginal's row and column sums equal the 1-way marginals. */
function assertConsistent(m: Metadata): void {
  for (const f of m.features) {
    assert.equal(m.empirical_probs[f].length, m.cardinalities[f], f);
    assert.ok(Math.abs(sum(m.empirical_probs[f]) - 1) < 1e-9, `${f} sums to 1`);
  }
  for (const { features: [f, g], probs } of m.marginals ?? []) {
    const Kf = m.cardinalities[f];
    const Kg = m.cardinalities[g];
    assert.equal(probs.length, Kf * Kg);
    assert.ok(Math.abs(sum(probs) - 1) < 1e-9);
    for (let i = 0; i < Kf; i++) {
      let row = 0;
      for (let j = 0; j < Kg; j++) row += probs[i * Kg + j];
      assert.ok(Math.abs(row - m.empirical_probs[f][i]) < 1e-9, `row ${i} of [${f},${g}] equals P(${f}=${i})`);
    }
    for (let j = 0; j < Kg; j++) {
      let col = 0;
      for (let i = 0; i < Kf; i++) col += probs[i * Kg + j];
      assert.ok(Math.abs(col - m.empirical_probs[g][j]) < 1e-9, `column ${j} of [${f},${g}] equals P(${g}=${j})`);
    }
  }
}

const SMALL = [
  "color,size,weight,note",
  "red,1,10.5,x",
  "blue,2,11.25,",
  "red,3,12,y",
  "?,1,13.75,x",
  "red,2,14,",
  "green,1,15.5,x",
  "blue,,16,y",
  " red ,3,17.25,x",
].join("\n");

test("small CSV: types, most-frequent-first codes, `?` as a category, blanks as the last code", async () => {
  const m = await extractMetadata(csv(SMALL + "\n"), { rareThreshold: 1 });
  assert.deepEqual(m.features, ["color", "size", "weight", "note"]);
  // color: red x4 (the padded one is trimmed), blue x2, then ? and green (1 each, by value)
  assert.deepEqual(m.value_mappings!.color, { red: 0, blue: 1, "?": 2, green: 3 });
  assert.equal(m.column_stats!.color.type, "categorical");
  assert.deepEqual(m.empirical_probs.color, [4 / 8, 2 / 8, 1 / 8, 1 / 8]);
  // size: 3 distinct numbers -> point bins ascending; one blank -> missing code 3 keyed ""
  assert.equal(m.column_stats!.size.type, "numerical");
  assert.deepEqual(m.value_mappings!.size, { "1": 0, "2": 1, "3": 2, "": 3 });
  assert.equal(m.cardinalities.size, 4);
  assert.equal(m.column_stats!.size.missing, 1);
  assert.equal(m.column_stats!.size.count, 7);
  assert.equal(m.column_stats!.size.integer, true);
  assert.equal(m.column_stats!.size.bin_edges, undefined);
  assert.equal(m.column_stats!.weight.integer, false);
  assert.equal(m.column_stats!.weight.min, 10.5);
  assert.equal(m.column_stats!.weight.max, 17.25);
  // note: categorical with blanks
  assert.deepEqual(m.value_mappings!.note, { x: 0, y: 1, "": 2 });
  assert.deepEqual(m.empirical_probs.note, [4 / 8, 2 / 8, 2 / 8]);
  // 4 columns, all 6 pairs fit the default budget
  assert.equal(m.marginals!.length, 6);
  assert.deepEqual(m.marginals![0].features, ["color", "size"]);
  assertConsistent(m);
});

test("quantile bins when distinct values exceed the bin cap; edges in column_stats", async () => {
  const { metadata: m, codecs } = await analyzeTable(csv(SMALL), { binCap: 4 });
  const st = m.column_stats!.weight;
  assert.equal(st.type, "numerical");
  assert.ok(st.bin_edges && st.bin_edges.length >= 2);
  assert.equal(st.bin_edges![0], 10.5);
  assert.equal(st.bin_edges!.at(-1), 17.25);
  assert.ok(m.cardinalities.weight <= 4);
  assert.equal(m.cardinalities.weight, st.bin_edges!.length - 1);
  assert.deepEqual(m.value_mappings!.weight, {}, "raw values of binned columns are not sent");
  assert.ok(Math.abs(st.mean! - 13.78125) < 1e-12);
  const weight = codecs.find((c) => c.name === "weight")!;
  assert.equal(weight.encode("10.5"), 0);
  assert.equal(weight.encode("17.25"), m.cardinalities.weight - 1);
  assert.equal(weight.encode("99"), -1, "outside [min, max] is unseen");
  assertConsistent(m);
});

test("heavy values become point bins (repeated edge) and the bin count stays within the cap", () => {
  const xs: number[] = [];
  for (let i = 0; i < 900; i++) xs.push(0);
  for (let i = 1; i <= 100; i++) xs.push(i * 10);
  for (let i = 0; i < 300; i++) xs.push(40);
  xs.sort((a, b) => a - b);
  for (const B of [1, 2, 3, 8, 32]) {
    const e = quantileEdges(xs, B);
    assert.ok(e.length - 1 <= B, `B=${B}: ${e.length - 1} bins`);
    for (let i = 1; i < e.length; i++) assert.ok(e[i] >= e[i - 1], "non-decreasing");
    const pts = pointValues(e);
    for (const x of xs) {
      const b = binOf(e, pts, x);
      assert.ok(b >= 0 && b < e.length - 1, `value ${x} has a bin`);
    }
    if (B >= 8) {
      assert.ok(pts.has(0) && pts.has(40), `B=${B}: 0 and 40 are point bins`);
      assert.equal(binOf(e, pts, 0), e.indexOf(0));
      assert.equal(binOf(e, pts, 40), e.indexOf(40));
    }
  }
});

test("categorical values beyond the cap share the __other__ code", async () => {
  const lines = ["k,v"];
  const counts: Record<string, number> = { a: 5, b: 4, c: 3, d: 2, e: 1, __other__: 1 };
  let i = 0;
  for (const [k, c] of Object.entries(counts)) for (let j = 0; j < c; j++) lines.push(`${k},${i++ % 2}`);
  const { metadata: m, codecs } = await analyzeTable(csv(lines.join("\n")), { categoryCap: 3 });
  assert.deepEqual(m.value_mappings!.k, { a: 0, b: 1, __other__: 2 });
  assert.equal(m.cardinalities.k, 3);
  assert.deepEqual(m.empirical_probs.k, [5 / 16, 4 / 16, 7 / 16]);
  const k = codecs[0];
  assert.equal(k.encode("d"), 2);
  assert.equal(k.encode("__other__"), 2);
  assert.equal(k.encode("never-seen"), -1);
  assertConsistent(m);
});

test("adult.csv: 15 features, 6 numerical, `?` is a category, marginals consistent", async () => {
  const { metadata: m, selection } = await analyzeTable(ADULT);
  assert.equal(m.features.length, 15);
  const numerical = m.features.filter((f) => m.column_stats![f].type === "numerical");
  assert.deepEqual(numerical, ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"]);
  for (const f of numerical) {
    assert.equal(m.column_stats![f].integer, true, `${f} is an integer column`);
    assert.ok(m.cardinalities[f] <= 32);
    assert.equal(m.column_stats![f].count, 32561);
  }
  assert.ok(m.column_stats!.age.bin_edges, "age has more than 32 distinct values: quantile bins");
  assert.equal(m.column_stats!["education-num"].bin_edges, undefined, "16 distinct: point bins");
  assert.equal(m.cardinalities["education-num"], 16);
  assert.equal(m.column_stats!.age.min, 17);
  assert.equal(m.column_stats!.age.max, 90);
  for (const f of ["workclass", "occupation", "native-country"]) {
    assert.ok("?" in m.value_mappings![f], `${f} has ? as a value`);
    assert.equal(m.column_stats![f].missing, 0);
  }
  assert.equal(m.value_mappings!.workclass.Private, 0);
  assert.equal(m.cardinalities.sex, 2);
  assert.equal(m.cardinalities["native-country"], 42);
  assert.ok(m.column_stats!["capital-gain"].bin_edges!.slice(0, 2).every((v) => v === 0), "0 of capital-gain is a point bin");
  assert.equal(m.marginals!.length, 105, "all pairs fit the default budget");
  const v = validateCreate({ metadata: m, config: { max_epochs: 5 } });
  assert.ok(v.success, `the Create Model validator accepts the metadata: ${JSON.stringify(v.success ? [] : v.errors.slice(0, 3))}`);
  assert.ok(JSON.stringify(m).length < 16 * 1024 * 1024, "fits the request body limit");
  assert.equal(selection.tree.length, 14);
  assertConsistent(m);
});

test("pair selection respects the budget and contains a maximum spanning tree (Chow-Liu)", () => {
  const cards = [4, 5, 3, 6, 2, 7];
  const F = cards.length;
  const w = (i: number, j: number) => ((i * 7 + j * 13) % 11) + (i === 0 ? 20 : 0);
  let all = 0;
  for (let i = 0; i < F; i++) for (let j = i + 1; j < F; j++) all += cards[i] * cards[j];
  assert.equal(selectPairs(cards, w, all).pairs.length, 15, "everything fits: all pairs");
  // brute-force maximum spanning tree weight by Prim
  const inTree = [0];
  let best = 0;
  while (inTree.length < F) {
    let cand: [number, number, number] = [-1, -1, -Infinity];
    for (const a of inTree) for (let b = 0; b < F; b++) {
      if (inTree.includes(b)) continue;
      const x = w(Math.min(a, b), Math.max(a, b));
      if (x > cand[2]) cand = [a, b, x];
    }
    inTree.push(cand[1]);
    best += cand[2];
  }
  for (const budget of [120, 200, 300]) {
    const sel = selectPairs(cards, w, budget);
    assert.ok(sel.cells <= budget);
    assert.equal(sel.cells, sum(sel.pairs.map(([i, j]) => cards[i] * cards[j])));
    assert.equal(sel.tree.length, F - 1, `budget ${budget}: the tree fits`);
    assert.equal(sum(sel.tree.map(([i, j]) => w(i, j))), best, "the tree is a maximum spanning tree");
    const key = (p: number[]) => p.join(",");
    for (const t of sel.tree) assert.ok(sel.pairs.some((p) => key(p) === key(t)));
    // no left-out pair would still fit
    for (let i = 0; i < F; i++) for (let j = i + 1; j < F; j++) {
      if (!sel.pairs.some((p) => p[0] === i && p[1] === j)) assert.ok(sel.cells + cards[i] * cards[j] > budget);
    }
  }
  const tiny = selectPairs(cards, w, 30);
  assert.ok(tiny.cells <= 30, "a budget below the tree gives a forest within the budget");
  assert.ok(tiny.tree.length < F - 1);
  assert.deepEqual(selectPairs(cards, w, 0).pairs, []);
});

test("adult.csv under a small pair budget: spanning tree over mutual information, budget respected", async () => {
  const budget = 3000;
  const { metadata: m, selection } = await analyzeTable(ADULT, { pairBudget: budget });
  assert.ok(selection.cells <= budget);
  const cells = sum(m.marginals!.map(({ features: [f, g] }) => m.cardinalities[f] * m.cardinalities[g]));
  assert.equal(cells, selection.cells);
  assert.ok(m.marginals!.length < 105);
  assert.equal(selection.tree.length, 14, "the tree fits in 3000 cells and spans all 15 columns");
  const parent = m.features.map((_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i])));
  for (const [i, j] of selection.tree) parent[find(i)] = find(j);
  assert.equal(new Set(m.features.map((_, i) => find(i))).size, 1, "connected");
  assert.ok(
    m.marginals!.some(({ features }) => features.includes("education") && features.includes("education-num")),
    "the strongest dependency (education ~ education-num) is sent",
  );
  assertConsistent(m);
});

test("mutual information: 0 for independent, log K for a copy", () => {
  assert.ok(Math.abs(mutualInformation([1, 1, 1, 1], 2, 2)) < 1e-12);
  assert.ok(Math.abs(mutualInformation([5, 0, 0, 0, 5, 0, 0, 0, 5], 3, 3) - Math.log(3)) < 1e-12);
});

async function rejectsData(p: string, re: RegExp): Promise<void> {
  await assert.rejects(extractMetadata(p), (e: unknown) => {
    assert.ok(e instanceof DataError, `expected DataError, got ${String(e)}`);
    assert.ok(e instanceof SynthdError);
    assert.equal(e.code, "data_invalid");
    assert.match(e.message, re);
    assert.equal(e.message.split(/\.\s+[A-Z]/).length, 1, `one sentence: ${e.message}`);
    return true;
  });
}

test("bad input: missing file, directory, empty file, header only", async () => {
  await rejectsData(join(dir, "nope.csv"), /Cannot read .*nope\.csv: no such file\.$/);
  const sub = join(dir, "adir");
  mkdirSync(sub);
  await rejectsData(sub, /is a directory/);
  await rejectsData(csv(""), /is empty/);
  await rejectsData(csv("\n\n"), /is empty/);
  await rejectsData(csv("a,b,c\n"), /has a header but no data rows/);
});

test("bad input: one column, duplicate or empty header names", async () => {
  await rejectsData(csv("only\n1\n2\n"), /has 1 column; at least 2 are needed/);
  await rejectsData(csv("a,b,a\n1,2,3\n"), /names column "a" twice \(columns 1 and 3\)/);
  await rejectsData(csv("a,,c\n1,2,3\n"), /header column 2 has an empty name/);
});

test("an empty first header name (row names of R's write.csv, pandas' to_csv) reads as pandas names it", async () => {
  const rows = Array.from({ length: 30 }, (_, i) => `"${i + 1}",${i % 3},x${i % 2}`).join("\n");
  const a = await analyzeTable(csv(`"",a,b\n${rows}\n`));
  assert.deepEqual(a.metadata.features, ["Unnamed: 0", "a", "b"]);
});

test("bad input: a ragged row names its line", async () => {
  await rejectsData(csv("a,b,c\n1,2,3\n4,5\n6,7,8\n"), /line 3 has 2 fields but the header has 3/);
  await rejectsData(csv("a,b\n1,2\n3,4,5\n"), /line 3 has 3 fields but the header has 2/);
});

test("a column blank in every row is kept: one code, and every decoded row has it blank", async () => {
  const rows = Array.from({ length: 30 }, (_, i) => `${i % 4},${i % 3 ? "" : " "},${"xy"[i % 2]}`);
  const a = await analyzeTable(csv("a,b,c\n" + rows.join("\n") + "\n"));
  assert.deepEqual(a.metadata.features, ["a", "b", "c"]);
  assert.equal(a.metadata.cardinalities.b, 1);
  assert.deepEqual(a.metadata.value_mappings!.b, { "": 0 });
  assert.deepEqual(a.metadata.empirical_probs.b, [1]);
  assert.deepEqual(validateCreate({ metadata: a.metadata }).success, true, "a valid Create Model body");
  const codes = Object.fromEntries(a.columns.map((c, f) => [c, a.codes[f]]));
  const out = new Decoder(a.metadata).decode(codes, 3);
  assert.deepEqual(out.columns, ["a", "b", "c"]);
  assert.ok(out.rows.every((r) => r[1] === ""), "blank in every row");
  assert.match(describeColumns(a.codecs)[2], /^b\s+categorical\s+1\s+blank in every row: written blank$/);
  await assert.rejects(analyzeTable(csv("a,b\n1,\n2,\n"), { columns: { b: { type: "numerical" } } }), /blank in every row, so it cannot be declared numerical/);
});

test("bad input: non-UTF-8 bytes name the byte offset and line", async () => {
  const bytes = Buffer.concat([Buffer.from("a,b\n1,ok\n2,caf"), Buffer.from([0xe9]), Buffer.from("\n")]);
  await rejectsData(csv(bytes), /not valid UTF-8: byte 0xe9 at byte offset 14 \(line 3\)/);
  // a truncated multi-byte sequence at the end of the file
  await rejectsData(csv(Buffer.concat([Buffer.from("a,b\n1,x\n2,"), Buffer.from([0xe2, 0x82])])), /not valid UTF-8.*byte offset 10 \(line 3\)/);
});

test("bad input: malformed quoting names the line", async () => {
  await rejectsData(csv('a,b\n1,"x"y\n'), /line 2 has malformed quoting/);
});

test("valid UTF-8 split across read chunks, a BOM, CRLF and quoted fields are read correctly", async () => {
  const rows = ["name,city"];
  for (let i = 0; i < 30000; i++) rows.push(`é${i % 3},"Zürich, €"`);
  const p = csv(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(rows.join("\r\n") + "\r\n")]));
  const m = await extractMetadata(p);
  assert.deepEqual(m.features, ["name", "city"], "BOM dropped from the first header name");
  assert.deepEqual(m.value_mappings!.city, { "Zürich, €": 0 });
  assert.deepEqual(Object.keys(m.value_mappings!.name).sort(), ["é0", "é1", "é2"]);
});

test("in-memory tables are accepted and give the same metadata as the CSV", async () => {
  const lines = SMALL.split("\n").map((l) => l.split(","));
  const fromTable = await extractMetadata({ columns: lines[0], rows: lines.slice(1) });
  const fromFile = await extractMetadata(csv(SMALL));
  assert.deepEqual(fromTable, fromFile);
});

test("UTF-8 check: multi-byte sequences and the BOM split at every byte boundary pass through intact", async () => {
  const text = "a,b\né,€\n𝄞,x\n";
  const bytes = Buffer.from("\ufeff" + text);
  const out: string[] = [];
  const sink = new Writable({
    write(c: Buffer, _e, cb) {
      out.push(c.toString());
      cb();
    },
  });
  await pipeline(Readable.from([...bytes].map((b) => Buffer.from([b]))), new Utf8Check("t"), sink);
  assert.equal(out.join(""), text);
  assert.equal(firstInvalidUtf8(Buffer.from(text)), -1);
  assert.equal(firstInvalidUtf8(Buffer.from([0x61, 0xc0, 0x80])), 1, "overlong");
  assert.equal(firstInvalidUtf8(Buffer.from([0xed, 0xa0, 0x80])), 0, "surrogate");
});

test("writeCsv: the bytes of csv-stringify's streaming API record by record (quotes, commas, newlines, blanks), across slices of CSV_WRITE_ROWS, and a header for no rows", async () => {
  const dir = mkdtempSync(join(tmpdir(), "synthd-csvw-"));
  try {
    const columns = ["a", "b,c", 'q"'];
    const cells = ["", "x", "1,5", 'say "hi"', "two\nlines", " pad ", "é€"];
    const n = 2 * CSV_WRITE_ROWS + 37;
    const rows = Array.from({ length: n }, (_, i) => [cells[i % 7], cells[(i * 3) % 7], String(i)]);
    const reference = async (rs: string[][]): Promise<string> => {
      const s = stringify({ header: true, columns, record_delimiter: "\n" });
      let out = "";
      s.on("data", (d: Buffer) => (out += d.toString()));
      const done = new Promise((res) => s.on("end", res));
      for (const r of rs) s.write(r);
      s.end();
      await done;
      return out;
    };
    const p1 = join(dir, "rows.csv");
    assert.equal(await writeCsv(p1, columns, rows), n);
    const expected = await reference(rows);
    assert.equal(readFileSync(p1, "utf8"), expected);
    // Uneven batches (one larger than a slice) give the same file.
    const p2 = join(dir, "batches.csv");
    const batches = [rows.slice(0, 5), rows.slice(5, 5 + CSV_WRITE_ROWS + 3), [], rows.slice(5 + CSV_WRITE_ROWS + 3)];
    assert.equal(await writeCsvBatches(p2, columns, batches), n);
    assert.equal(readFileSync(p2, "utf8"), expected);
    const p3 = join(dir, "empty.csv");
    assert.equal(await writeCsv(p3, columns, []), 0);
    assert.equal(readFileSync(p3, "utf8"), await reference([]));
    assert.equal(readFileSync(p3, "utf8"), 'a,"b,c","q"""\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("delimiters: tab, semicolon and pipe files are detected from their first lines (outside quotes) or given", async () => {
  const rows = Array.from({ length: 30 }, (_, i) => [`c${i % 3}`, String(i % 5), i % 2 ? "x, y" : "z"]);
  const asText = (d: string): string =>
    ["kind", "n", "note"].join(d) + "\n" + rows.map((r) => r.map((v) => (v.includes(",") || v.includes(d) ? `"${v}"` : v)).join(d)).join("\n") + "\n";
  const comma = await analyzeTable(csv(asText(",")));
  for (const d of ["\t", ";", "|"]) {
    const a = await analyzeTable(csv(asText(d)));
    assert.deepEqual(a.columns, ["kind", "n", "note"], `delimiter ${JSON.stringify(d)}: three columns, not one`);
    assert.deepEqual(a.metadata, comma.metadata, `delimiter ${JSON.stringify(d)}: the same metadata as the comma file`);
  }
  // Commas inside quoted semicolon-separated fields do not count; a comma on every line outside quotes would.
  assert.equal(detectDelimiter('a;b\n"1,5";"x,y"\n"2,5";z\n', true), ";");
  assert.equal(detectDelimiter("a,b;c\n1,2;3\n4,5;6\n", true), ",", "a tie goes to the comma");
  assert.equal(detectDelimiter("only\n1\n", true), ",", "one column: comma");
  // Given explicitly: a semicolon file read with --delimiter ';' even when its head looks comma-separated.
  const forced = await analyzeTable(csv("a;b\n1,5;x\n1,5;y\n2,5;x\n2,5;y\n"), { delimiter: ";" });
  assert.deepEqual(forced.columns, ["a", "b"]);
  assert.deepEqual(Object.keys(forced.metadata.value_mappings!.a).sort(), ["1,5", "2,5"], "1,5 is one field, not two");
  let header: string[] = [];
  await readCsvText("p|q\n1|2\n", (h) => (header = h), () => undefined);
  assert.deepEqual(header, ["p", "q"], "CSV text in memory is detected too");
});

test("encodings: a Latin-1 file reads with encoding latin1; without it the UTF-8 error names the byte and suggests the encoding", async () => {
  const text = "name,city\n" + Array.from({ length: 20 }, (_, i) => `${["José", "Zoë"][i % 2]},${["Köln", "Málaga"][i % 2]}`).join("\n") + "\n";
  const file = csv(Buffer.from(text, "latin1"));
  await rejectsData(file, /not valid UTF-8: byte 0xe9 at byte offset 13 \(line 2\).*re-save the file as UTF-8, or give its encoding/);
  const m = await extractMetadata(file, { encoding: "latin1" });
  assert.deepEqual(Object.keys(m.value_mappings!.name).sort(), ["José", "Zoë"]);
  assert.deepEqual(Object.keys(m.value_mappings!.city).sort(), ["Köln", "Málaga"]);
  const utf8 = await extractMetadata(csv(text));
  assert.deepEqual(m, utf8, "the same metadata as the UTF-8 file");
  await assert.rejects(extractMetadata(file, { encoding: "klingon" }), RangeError);
});

test("evaluate reads REAL and HOLDOUT with the given encoding and each file's own delimiter", async () => {
  const { evaluate } = await import("../src/sdk/evaluate");
  const body = (d: string) => ["city", "n"].join(d) + "\n" + Array.from({ length: 40 }, (_, i) => `${["Köln", "Málaga"][i % 2]}${d}${i % 3}`).join("\n") + "\n";
  const real = csv(Buffer.from(body(";"), "latin1"));
  const synth = csv(body(","));
  const r = await evaluate(real, synth, { encoding: "latin1", holdout: csv(Buffer.from(body("\t"), "latin1")) });
  assert.equal(r.tvd["2"], 0, "the same table: Köln read as Köln in both files");
  assert.deepEqual(r.unseen, { city: 0, n: 0 });
  assert.equal(r.privacy?.reference_rows, 40);
});
