/**
 * Decoding by column (issue 25, `src/sdk/generate/batch.ts`) and the CSV writer of decoded batches
 * (`src/sdk/io/csv-writer.ts`): a batch holds the cells `Decoder.decode` writes, rewrites keep them
 * readable in every column form, and the CSV bytes are csv-stringify's (an independent writer) for
 * the same cells, awkward text included; memory reused batch after batch (`ArrayPool`,
 * `CsvBuffers`) holds the same cells and bytes as fresh memory.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "csv-stringify/sync";
import { Decoder, analyzeTable, type Analysis } from "../src/sdk";
import { DecodedBatch, type DecodedColumn } from "../src/sdk/generate/batch";
import { CsvBuffers, csvChunks, csvHeader, csvRecords, defaultCsvRowLoop, type CsvRowLoop } from "../src/sdk/io/csv-writer";
import { nativeExport } from "../src/model/compute/native";
import { ArrayPool } from "../src/sdk/client/array-pool";
import { mulberry32 } from "./fixtures";

const dir = mkdtempSync(join(tmpdir(), "synthd-sdk-batch-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));

/** Both row loops of the CSV writer: the native one (the default with the addon) and the JavaScript reference. */
const LOOPS: CsvRowLoop[] = ["native", "js"];

function columnsOf(a: Analysis): Record<string, ArrayLike<number>> {
  const out: Record<string, ArrayLike<number>> = {};
  a.columns.forEach((c, f) => (out[c] = a.codes[f]));
  return out;
}

/** csv-stringify's bytes for `rows` under `columns`, with writeCsv's options. */
function reference(columns: string[], rows: string[][]): Buffer {
  return Buffer.from(stringify(rows, { header: true, columns, record_delimiter: "\n" }), "utf8");
}

test("decodeBatch holds the cells decode writes: pooled draws, integer and decimal bins, blanks, identifiers", async () => {
  const lines = ["order_id,small,big,real,cat,sparse"];
  for (let i = 0; i < 600; i++) {
    const small = i % 7 === 0 ? "" : String((i * 3) % 5);
    const big = i % 13 === 0 ? "" : String(((i * 7919) % 1000) - 300);
    const real = i % 11 === 0 ? "" : ((i * 0.37) % 50).toFixed(3);
    const cat = ["a", "b, c", 'say "hi"'][(i * i) % 3];
    const sparse = i % 3 === 0 ? "" : i % 100 === 1 ? "rare" + i : "common";
    lines.push([`A${1000 + i}`, small, big, real, `"${cat.replace(/"/g, '""')}"`, sparse].join(","));
  }
  const path = join(dir, "mixed.csv");
  writeFileSync(path, lines.join("\n") + "\n");
  const a = await analyzeTable(path, { binCap: 16, categoryCap: 3 });
  const dec = new Decoder(a.metadata);
  for (const seed of [1, 7]) {
    const table = dec.decode(columnsOf(a), seed, { rowOffset: 5 });
    const batch = dec.decodeBatch(columnsOf(a), seed, { rowOffset: 5 });
    assert.deepEqual(batch.toTable(), table);
    const kinds = batch.cells.map((c) => c.kind);
    assert.equal(kinds[a.columns.indexOf("cat")], "dict");
    assert.equal(kinds[a.columns.indexOf("big")], "int");
    // The CSV of the batch is csv-stringify's of the rows (quotes, commas, blanks, negative numbers).
    for (const loop of LOOPS) {
      const csv = Buffer.concat([csvHeader(batch.columns), csvRecords(batch, undefined, loop)]);
      assert.ok(csv.equals(reference(table.columns, table.rows)), loop);
    }
  }
});

test("set rewrites a cell in every column form and the batch still reads and writes it", () => {
  const cells: DecodedColumn[] = [
    { kind: "dict", dict: ["x", "", "y"], index: Int32Array.from([0, 1, 2, 0]) },
    { kind: "int", values: Float64Array.from([1, -20, 300, 0]) },
    { kind: "int", values: Float64Array.from([5, 6, 7, 8]) },
    { kind: "text", cells: ["a", "b", "", "d"] },
  ];
  const shared = (cells[0] as { dict: string[] }).dict;
  const b = new DecodedBatch(["d", "i", "j", "t"], cells, 4);
  b.set(0, 0, "new, value"); // not in the dictionary: appended to the batch's own copy
  b.set(3, 0, "y");
  b.set(1, 1, ""); // blank integer
  b.set(2, 1, "-0"); // no integer's canonical text: the column becomes text
  b.set(0, 2, "42");
  b.set(1, 3, "line\nbreak");
  assert.deepEqual(shared, ["x", "", "y"], "the decoder's code book is not changed");
  const rows = [
    ["new, value", "1", "42", "a"],
    ["", "", "6", "line\nbreak"],
    ["y", "-0", "7", ""],
    ["y", "0", "8", "d"],
  ];
  assert.deepEqual(b.toTable().rows, rows);
  assert.equal(b.cells[1].kind, "text");
  assert.equal(b.cells[2].kind, "int");
  for (const loop of LOOPS) assert.ok(Buffer.concat([csvHeader(b.columns), csvRecords(b, undefined, loop)]).equals(reference(b.columns, rows)), loop);
});

test("the CSV writer quotes as csv-stringify: quotes, commas, newlines, a lone carriage return, non-ASCII, big integers", () => {
  const texts = ["", "plain", 'a"b', "a,b", "a\nb", "a\rb", "\r\n", '""', "é ü 日本", " lead", "trail ", "-", "0"];
  const n = texts.length;
  const cells: DecodedColumn[] = [
    { kind: "dict", dict: texts, index: Int32Array.from(texts.keys()) },
    { kind: "text", cells: texts.slice().reverse() },
    { kind: "int", values: Float64Array.from({ length: n }, (_, i) => (i % 2 ? -1 : 1) * 10 ** i), blank: Uint8Array.from({ length: n }, (_, i) => (i === 3 ? 1 : 0)) },
    { kind: "int", values: Float64Array.from({ length: n }, (_, i) => 2 ** 53 * (i + 1)) },
  ];
  const columns = ["dict, col", 'quo"te', "int", "huge"];
  const b = new DecodedBatch(columns, cells, n);
  for (const loop of LOOPS) {
    const out = Buffer.concat([csvHeader(columns), csvRecords(b, undefined, loop)]);
    assert.ok(out.equals(reference(columns, b.toTable().rows)), `${loop}: ${out.toString()}`);
  }
});

test("the CSV writer's word copies and digit tables: random fields of every length and integers around each power of ten, as csv-stringify writes them", () => {
  const u = mulberry32(12345);
  const rand = (k: number): number => Math.floor(u() * k);
  const words = ["", "a", "ab", "abc", "abcd", "abcde", "x,y", 'q"', "é", "日本語", "twelve chars", "thirteen char"];
  const ints = [0, 7, 9, 10, 99, 100, 999, 1000, 9999, 10000, 10001, 99999, 123456, 9999999, 99999999, 100000000, 2 ** 31, 2 ** 53 - 1];
  const n = 3000;
  const dict = (): DecodedColumn => ({ kind: "dict", dict: words, index: Int32Array.from({ length: n }, () => rand(words.length)) });
  const int = (): DecodedColumn => ({ kind: "int", values: Float64Array.from({ length: n }, () => (rand(2) ? -1 : 1) * ints[rand(ints.length)]) });
  // Dictionary columns first, between, and last: the last three are written byte by byte.
  const cells = [dict(), dict(), int(), dict(), int(), dict(), dict(), dict()];
  const columns = cells.map((_, j) => `c${j}`);
  const b = new DecodedBatch(columns, cells, n);
  for (const loop of LOOPS) assert.ok(Buffer.concat([csvHeader(columns), csvRecords(b, undefined, loop)]).equals(reference(columns, b.toTable().rows)), loop);
});

test("setMany gives the cells and dictionaries of set per row, in every column form", () => {
  const make = (): DecodedBatch =>
    new DecodedBatch(
      ["d", "i", "t"],
      [
        { kind: "dict", dict: ["x", "y", "x", ""], index: Int32Array.from([0, 1, 2, 3, 0, 1]) },
        { kind: "int", values: Float64Array.from([1, 2, 3, 4, 5, 6]) },
        { kind: "text", cells: ["a", "b", "c", "d", "e", "f"] },
      ],
      6,
    );
  const texts = ["x", "new", undefined, "", "7", "y"];
  const rows = Int32Array.from([5, 0, 2, 3, 1]);
  const entry = Int32Array.from([1, 0, 2, 4, 1]);
  for (let f = 0; f < 3; f++) {
    const bulk = make();
    const one = make();
    const changed = bulk.setMany(f, rows, entry, rows.length, texts);
    let expected = 0;
    rows.forEach((r, x) => {
      const text = texts[entry[x]];
      if (text === undefined || one.get(r, f) === text) return;
      one.set(r, f, text);
      expected++;
    });
    assert.equal(changed, expected, `column ${f}: cells changed`);
    assert.deepEqual(bulk.toTable().rows, one.toTable().rows, `column ${f}: cells`);
    assert.deepEqual(bulk.cells[f], one.cells[f], `column ${f}: form and dictionary`);
  }
});

test("an array pool lends memory again only after it is given back, through any view of it", () => {
  const pool = new ArrayPool();
  const a = pool.int32(1000);
  const b = pool.int32(1000);
  assert.notEqual(a.buffer, b.buffer, "two loans at once are two buffers");
  a.fill(7);
  pool.give([new Uint8Array(a.buffer, 0, 16)]); // a view of a's memory gives it back
  const c = pool.float64(400);
  assert.equal(c.buffer, a.buffer, "the smallest free buffer long enough is lent again");
  assert.equal(c.length, 400);
  pool.give([c, c, new Int32Array(10), undefined, [1, 2]]); // twice, and things it never lent
  const d = pool.int32(1000);
  assert.equal(d.buffer, a.buffer);
  assert.notEqual(pool.int32(1000).buffer, a.buffer, "a buffer given back twice is lent once");
  const z = pool.uint8(64);
  z.fill(9);
  pool.give([z]);
  assert.deepEqual([...pool.uint8(64)], new Array(64).fill(0), "uint8 comes back zeroed");
  assert.ok(pool.int32(2000).buffer !== b.buffer, "a loan longer than every free buffer is fresh");
});

test("a decoded batch released to its pool gives the next batch the same memory, and the cells are unchanged", async () => {
  const lines = ["n,cat"];
  for (let i = 0; i < 500; i++) lines.push(`${i % 9 === 0 ? "" : (i * 37) % 90},${["x", "y", "z"][i % 3]}`);
  const path = join(dir, "pool.csv");
  writeFileSync(path, lines.join("\n") + "\n");
  const a = await analyzeTable(path, { binCap: 8 });
  const dec = new Decoder(a.metadata);
  const pool = new ArrayPool();
  const first = dec.decodeBatch(columnsOf(a), 3, { arrays: pool });
  const held = first.cells.flatMap((c) => (c.kind === "dict" ? [c.index.buffer] : c.kind === "int" ? [c.values.buffer] : []));
  assert.ok(held.length >= 2, "the integer and the categorical column are typed");
  first.release();
  const second = dec.decodeBatch(columnsOf(a), 5, { arrays: pool });
  const again = second.cells.flatMap((c) => (c.kind === "dict" ? [c.index.buffer] : c.kind === "int" ? [c.values.buffer] : []));
  assert.ok(
    again.every((buf) => held.includes(buf)),
    "the second batch's columns use the first one's memory",
  );
  assert.deepEqual(second.toTable(), dec.decode(columnsOf(a), 5), "and hold the cells of a fresh decode");
});

test("CsvBuffers: the next batch's bytes are written over the last one's, and are the same bytes as fresh memory gives", async () => {
  const lines = ["a,b"];
  for (let i = 0; i < 300; i++) lines.push(`${i % 50},${["p", '"q, r"'][i % 2]}`);
  const path = join(dir, "csvbuf.csv");
  writeFileSync(path, lines.join("\n") + "\n");
  const a = await analyzeTable(path);
  const dec = new Decoder(a.metadata);
  const buffers = new CsvBuffers();
  const one = dec.decodeBatch(columnsOf(a), 1);
  const two = dec.decodeBatch(columnsOf(a), 2);
  const x = csvRecords(one, buffers);
  const fresh = Buffer.from(csvRecords(two));
  const y = csvRecords(two, buffers);
  assert.deepEqual([y.buffer === x.buffer, y.byteOffset], [true, x.byteOffset], "the same memory");
  assert.ok(y.equals(fresh));
});

test("integer columns: a small span is written from a code book of its texts, a wide one digit by digit, both as csv-stringify writes the cells", () => {
  const n = 5000;
  const rng = mulberry32(9);
  const small = new Float64Array(n);
  const wide = new Float64Array(n);
  const smallBlank = new Uint8Array(n);
  const wideBlank = new Uint8Array(n);
  for (let r = 0; r < n; r++) {
    small[r] = Math.floor(rng() * 200) - 100; // -100 .. 99: a span of 200
    wide[r] = r % 3 === 0 ? Math.floor(rng() * 2e12) - 1e12 : Math.floor(rng() * 1e5); // beyond 10^8, negatives
    if (r % 17 === 0) {
      smallBlank[r] = 1;
      small[r] = 1e300; // a blank row's value is not read
    }
    if (r % 23 === 0) {
      wideBlank[r] = 1;
      wide[r] = NaN;
    }
  }
  small[1] = -0; // written "0", as String(-0)
  const batch = new DecodedBatch(
    ["small", "wide"],
    [
      { kind: "int", values: small, blank: smallBlank },
      { kind: "int", values: wide, blank: wideBlank },
    ],
    n,
  );
  const table = batch.toTable();
  const expected = reference(table.columns, table.rows);
  for (const loop of LOOPS) {
    assert.ok(Buffer.concat([csvHeader(batch.columns), csvRecords(batch, undefined, loop)]).equals(expected), loop);
    const buffers = new CsvBuffers();
    csvRecords(batch, buffers, loop);
    assert.ok(Buffer.concat([csvHeader(batch.columns), csvRecords(batch, buffers, loop)]).equals(expected), `${loop}, with reused memory too`);
  }
});

test("csvChunks: a batch of several MiB comes in chunks of at most about 1 MiB whose bytes together are csvRecords'", () => {
  const n = 60000;
  const rng = mulberry32(4);
  const dict = ["x".repeat(150), 'with "quotes", and a comma', "€uro ünïcode", ""];
  const index = Int32Array.from({ length: n }, () => Math.floor(rng() * dict.length));
  const values = Float64Array.from({ length: n }, () => Math.floor(rng() * 1e6));
  const cells = Array.from({ length: n }, (_, r) => (r % 5 === 0 ? "" : `näme ${r} "q"`));
  const batch = new DecodedBatch(
    ["d", "v", "t"],
    [
      { kind: "dict", dict, index },
      { kind: "int", values },
      { kind: "text", cells },
    ],
    n,
  );
  const table = batch.toTable();
  const expected = reference(table.columns, table.rows);
  for (const loop of LOOPS) {
    const whole = Buffer.from(csvRecords(batch, undefined, loop));
    const buffers = new CsvBuffers();
    const chunks: Buffer[] = [];
    for (const c of csvChunks(batch, buffers, loop)) {
      assert.ok(c.length <= 1 << 20, "at most 1 MiB");
      chunks.push(Buffer.from(c)); // copied before the next is asked for: it is written over this one
    }
    assert.ok(chunks.length >= 3, `${loop}: several chunks (${chunks.length})`);
    assert.ok(Buffer.concat(chunks).equals(whole), loop);
    assert.ok(Buffer.concat([csvHeader(batch.columns), whole]).equals(expected), `${loop}: csv-stringify's bytes`);
  }
});

test("the native row loop is the default where the addon is loaded, and writes the JavaScript loop's bytes where an integer column turns into text mid-batch and a record outgrows a chunk", () => {
  assert.equal(defaultCsvRowLoop(), "native");
  const n = 3000;
  // An integer column whose row 1,500 holds 2^53 + 2 and row 2,000 NaN: both written as String
  // writes them, so the column becomes text from there; a text cell of 3 MiB (more than a chunk).
  const big = Float64Array.from({ length: n }, (_, r) => (r === 1500 ? 2 ** 53 + 2 : r === 2000 ? NaN : r * 1000 - 7));
  const other = Float64Array.from({ length: n }, (_, r) => -r);
  const cells = Array.from({ length: n }, (_, r) => (r === 2500 ? "y".repeat(3 << 20) : `t${r}, "x"`));
  const batch = new DecodedBatch(
    ["big", "other", "text"],
    [
      { kind: "int", values: big },
      { kind: "int", values: other, blank: Uint8Array.from({ length: n }, (_, r) => (r % 7 === 0 ? 1 : 0)) },
      { kind: "text", cells },
    ],
    n,
  );
  const table = batch.toTable();
  assert.equal(table.rows[1500][0], String(2 ** 53 + 2));
  assert.equal(table.rows[2000][0], "NaN");
  const expected = Buffer.concat([csvHeader(batch.columns), Buffer.from(stringify(table.rows, { record_delimiter: "\n" }), "utf8")]);
  for (const loop of LOOPS) {
    assert.ok(Buffer.concat([csvHeader(batch.columns), csvRecords(batch, undefined, loop)]).equals(expected), `${loop}: records`);
    const buffers = new CsvBuffers();
    const chunks = Array.from(csvChunks(batch, buffers, loop), (c) => Buffer.from(c));
    assert.ok(Buffer.concat([csvHeader(batch.columns), ...chunks]).equals(expected), `${loop}: chunks`);
  }
});

test("the native row loop rejects bad arguments with TypeError or RangeError, never a crash", () => {
  type Rows = (...args: unknown[]) => [number, number, number];
  const rows = nativeExport<Rows>("csvRows");
  assert.ok(rows, "the addon exports csvRows");
  const out = new Uint8Array(64);
  const dictArgs = (index: Int32Array, start: Int32Array, n: number): unknown[] => [
    Uint8Array.of(1),
    [index],
    [Buffer.from("ab")],
    [start],
    [null],
    [null],
    n,
    0,
    out,
  ];
  assert.deepEqual(rows(...dictArgs(Int32Array.of(0, 1, 0), Int32Array.of(0, 1, 2), 3)), [3, 6, -1]);
  assert.equal(Buffer.from(out.subarray(0, 6)).toString(), "a\nb\na\n");
  assert.throws(() => rows(...dictArgs(Int32Array.of(0, 2), Int32Array.of(0, 1, 2), 2)), RangeError, "an index past the entries");
  assert.throws(() => rows(...dictArgs(Int32Array.of(-1), Int32Array.of(0, 1, 2), 1)), RangeError, "a negative index");
  assert.throws(() => rows(...dictArgs(Int32Array.of(0), Int32Array.of(0, 9, 2), 1)), RangeError, "an entry past the bytes");
  assert.throws(() => rows(...dictArgs(Int32Array.of(1), Int32Array.of(0, 2, 1), 1)), RangeError, "an entry ending before it starts");
  assert.throws(() => rows(...dictArgs(Int32Array.of(0), Int32Array.of(0, 1), 2)), RangeError, "an index shorter than n");
  assert.throws(() => rows(Uint8Array.of(0), [null], [null], [null], [new Float64Array(1)], [null], 2, 0, out), RangeError, "values shorter than n");
  assert.throws(() => rows(Uint8Array.of(0), [null], [null], [null], [new Int32Array(2)], [null], 2, 0, out), TypeError, "values not a Float64Array");
  assert.throws(() => rows(Uint8Array.of(0), [null], [null], [null], [new Float64Array(2)], [null], 2, 3, out), RangeError, "from past n");
  assert.throws(() => rows(Uint8Array.of(0, 0), [null], [null], [null], [new Float64Array(2)], [null], 2, 0, out), RangeError, "lists shorter than the columns");
  assert.throws(() => rows("x"), TypeError);
  // A non-safe integer stops before its row and names its column; a record that does not fit is not written.
  assert.deepEqual(rows(Uint8Array.of(0), [null], [null], [null], [Float64Array.of(5, 1e300, 6)], [null], 3, 0, out), [1, 2, 0]);
  assert.deepEqual(rows(Uint8Array.of(0), [null], [null], [null], [Float64Array.of(-0, 12)], [null], 2, 0, new Uint8Array(19)), [1, 2, -1]);
  assert.deepEqual(rows(Uint8Array.of(0), [null], [null], [null], [Float64Array.of(-0, 12)], [null], 2, 0, new Uint8Array(20)), [2, 5, -1]);
});

test("concat joins batches in order: shared and separate code books, integers with and without blanks, text; select picks rows of any column form", () => {
  const book = ["a", "b", "c"];
  const b1 = new DecodedBatch(["d", "i", "t", "m"], [
    { kind: "dict", dict: book, index: Int32Array.from([0, 2]) },
    { kind: "int", values: Float64Array.from([1, 2]) },
    { kind: "text", cells: ["x", "y"] },
    { kind: "dict", dict: ["p", "q"], index: Int32Array.from([1, 0]) },
  ], 2);
  // Longer arrays than the rows, as a pool lends them.
  const b2 = new DecodedBatch(["d", "i", "t", "m"], [
    { kind: "dict", dict: book, index: Int32Array.from([1, 1, 9]) },
    { kind: "int", values: Float64Array.from([0, -5, 7]), blank: Uint8Array.from([1, 0, 0]) },
    { kind: "dict", dict: ["z"], index: Int32Array.from([0, 0, 0]) },
    { kind: "dict", dict: ["q", "r"], index: Int32Array.from([1, 0, 0]) },
  ], 2);
  const all = DecodedBatch.concat([b1, b2]);
  assert.equal(all.length, 4);
  assert.deepEqual(all.toTable().rows, [...b1.toTable().rows, ...b2.toTable().rows]);
  assert.deepEqual(all.cells.map((c) => c.kind), ["dict", "int", "text", "dict"]);
  assert.equal((all.cells[0] as { dict: string[] }).dict, book, "a shared code book stays shared");
  assert.deepEqual((all.cells[3] as { dict: string[] }).dict, ["p", "q", "r"], "separate code books merged, each text once");
  const picked = all.select(Int32Array.from([3, 0, 3]));
  assert.deepEqual(picked.toTable().rows, [all.toTable().rows[3], all.toTable().rows[0], all.toTable().rows[3]]);
  assert.throws(() => DecodedBatch.concat([]), RangeError);
  assert.throws(() => DecodedBatch.concat([b1, new DecodedBatch(["d"], [b1.cells[0]], 2)]), RangeError);
});
