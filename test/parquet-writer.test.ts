/**
 * The Parquet writer's pieces that can go wrong (`src/sdk/io/parquet`, issue 25), each read back
 * with hyparquet, a reader that shares nothing with the writer: the RLE / bit-packing hybrid
 * (hyparquet's `readRleBitPackedHybrid`) for bit widths 1..24 across run boundaries;
 * the Thrift compact protocol (hyparquet's `deserializeTCompactProtocol`) with negative and
 * > 2^31 i64s; and whole files (`parquetMetadata`, `parquetReadObjects`) of decoded batches built
 * by hand: every form of column (`dict`, `int`, `text`), a column of nulls only, non-ASCII
 * strings and their bytewise min / max, a dictionary of one entry, integers beyond 2^31 and 2^53,
 * row groups split and gathered across batches, dictionaries merged across batches, a file of
 * no rows, a bad cell, and the ARROW:schema.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { parquetMetadata, parquetReadObjects } from "hyparquet";
import { tableFromIPC } from "apache-arrow";
import { DataError } from "../src/sdk";
import { DecodedBatch, type DecodedColumn } from "../src/sdk/generate/batch";
import { writeBatches } from "../src/sdk/io/formats";
import { ByteSink, zigzag } from "../src/sdk/io/parquet/bytes";
import { bitWidth, rleGroups, writeDefinitionLevels, writeHybrid } from "../src/sdk/io/parquet/encodings";
import { statsOf } from "../src/sdk/io/parquet/values";
import { CT, CompactWriter } from "../src/sdk/io/parquet/thrift";
import type { ColumnStats, Metadata } from "../src/contract";
import { mulberry32 } from "./fixtures";

interface DataReader {
  view: DataView;
  offset: number;
}
// hyparquet's own decoders (its package exports `./src/*.js`); ESM, loaded with require as the other tests do.
const { readRleBitPackedHybrid } = require("hyparquet/src/encoding.js") as {
  readRleBitPackedHybrid: (reader: DataReader, width: number, output: number[], length?: number) => void;
};
const { deserializeTCompactProtocol } = require("hyparquet/src/thrift.js") as {
  deserializeTCompactProtocol: (reader: DataReader) => Record<string, unknown>;
};

function readerOf(bytes: Uint8Array): DataReader {
  return { view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), offset: 0 };
}

/** `values` through writeHybrid and back through hyparquet; also checks that every byte was read. */
function roundTrip(values: number[], width: number): Uint8Array {
  const out = new ByteSink(8);
  writeHybrid(out, Int32Array.from(values), values.length, width);
  const bytes = out.bytes();
  const reader = readerOf(bytes);
  const back: number[] = new Array(values.length).fill(-1);
  readRleBitPackedHybrid(reader, width, back, bytes.length);
  assert.deepEqual(back, values, `width ${width}, ${values.length} values`);
  return bytes;
}

test("RLE / bit-packing hybrid: widths 1..24, runs across group and run boundaries, read back by hyparquet", () => {
  const u = mulberry32(25);
  const widths = Array.from({ length: 24 }, (_, i) => i + 1);
  const lengths = [0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 503, 504, 505, 1000, 1009];
  for (const width of widths) {
    const top = 2 ** width - 1;
    const rand = (): number => Math.floor(u() * (top + 1));
    for (const n of [0, 1, 5, 8, 13, 504, 505, 1200]) roundTrip(Array.from({ length: n }, rand), width);
    // Runs of every awkward length, after literals of every awkward length, the maximum value included.
    const values: number[] = [];
    for (const run of lengths) {
      for (let i = 0; i < (run % 11) + 1; i++) values.push(rand());
      const x = run % 3 === 0 ? top : rand();
      for (let i = 0; i < run; i++) values.push(x);
    }
    roundTrip(values, width);
    // Aligned repeats: long ones become RLE runs (much smaller than bit-packing).
    const repeats = [...Array<number>(8000).fill(top), ...Array<number>(8000).fill(0), 1 % (top + 1)];
    const bytes = roundTrip(repeats, width);
    assert.ok(bytes.length <= 2 * (3 + 3) + 1 + width, `width ${width}: 16,001 values in ${bytes.length} bytes (two RLE runs and a last group)`);
  }
  assert.deepEqual([1, 2, 3, 4, 8, 12].map(rleGroups), [4, 2, 2, 1, 1, 1], "RLE only where shorter than bit-packing");
  assert.deepEqual([0, 1, 2, 3, 255, 256, 2 ** 20 - 1, 2 ** 31].map(bitWidth), [0, 1, 2, 2, 8, 9, 20, 32]);
  assert.throws(() => writeHybrid(new ByteSink(), new Int32Array(1), 1, 25), RangeError, "wider than any dictionary of a row group");
});

test("definition levels: their 4-byte length, then the hybrid at bit width 1 (all present: one RLE run)", () => {
  for (const defs of [undefined, Int32Array.from({ length: 1000 }, (_, i) => (i % 37 === 0 || (i > 300 && i < 700) ? 0 : 1))]) {
    const out = new ByteSink(4);
    writeDefinitionLevels(out, defs, 1000);
    const bytes = out.bytes();
    const reader = readerOf(bytes);
    const back: number[] = new Array(1000).fill(-1);
    readRleBitPackedHybrid(reader, 1, back); // no length: hyparquet reads the 4-byte prefix
    assert.deepEqual(back, Array.from(defs ?? new Int32Array(1000).fill(1)));
    assert.equal(reader.offset, bytes.length);
    if (defs === undefined) assert.equal(bytes.length, 4 + 2 + 1, "prefix, varint(2000), value 1");
  }
});

test("Thrift compact protocol: zigzag varints of negative and > 2^31 values, bools, binary, lists, nested structs, long field deltas", () => {
  assert.deepEqual([0, -1, 1, -2, 2, 2 ** 31, -(2 ** 31)].map((v) => zigzag(v)), [0, 1, 2, 3, 4, 2 ** 32, 2 ** 32 - 1]);
  assert.equal(zigzag(-(2 ** 53) + 1), 2n ** 54n - 3n, "beyond 2^52 the form is a bigint, exact");
  assert.equal(zigzag(-(2n ** 63n)), 2n ** 64n - 1n);
  assert.throws(() => new ByteSink().varint(-1), RangeError);

  const i64s = [0, -1, 1, 2 ** 31, 2 ** 31 + 5, -(2 ** 31) - 7, 2 ** 53 - 1, -(2 ** 53) + 1, 2n ** 62n, -(2n ** 63n), 2n ** 63n - 1n];
  const strings = Array.from({ length: 20 }, (_, i) => `s${i}-é`); // 20 > 14: the long list header
  const w = new CompactWriter();
  w.i32(1, -5).i32(2, 2 ** 31 - 1).i32(3, -(2 ** 31));
  w.listBegin(4, CT.I64, i64s.length);
  for (const v of i64s) w.elemI64(v);
  w.bool(5, true).bool(6, false);
  w.binary(7, Uint8Array.from([0, 255, 7]));
  w.string(30, "far field: long form"); // delta 23 > 15
  w.structBegin(31).i64(1, -(2 ** 40)).emptyStruct(2).structBegin(20).string(1, "deep").structEnd().structEnd();
  w.listBegin(32, CT.BINARY, strings.length);
  for (const s of strings) w.elemString(s);
  w.listBegin(33, CT.STRUCT, 2);
  w.elemStructBegin().i32(1, 7).structEnd();
  w.elemStructBegin().structEnd();
  w.listBegin(34, CT.I32, 0);
  w.i32(1000, 42); // far above the last field id, then below it: both in the long form
  w.i32(40, 9);
  const bytes = w.end().bytes();
  const reader = readerOf(bytes);
  const t = deserializeTCompactProtocol(reader);
  assert.equal(reader.offset, bytes.length, "every byte read, stop byte included");
  const text = (b: unknown): string => Buffer.from(b as Uint8Array).toString("utf8");
  assert.equal(t.field_1, -5);
  assert.equal(t.field_2, 2 ** 31 - 1);
  assert.deepEqual(
    t.field_4,
    i64s.map((v) => BigInt(v)),
  );
  assert.equal(t.field_5, true);
  assert.equal(t.field_6, false);
  assert.deepEqual(Array.from(t.field_7 as Uint8Array), [0, 255, 7]);
  assert.equal(text(t.field_30), "far field: long form");
  const nested = t.field_31 as Record<string, unknown>;
  assert.equal(nested.field_1, -(2n ** 40n));
  assert.deepEqual(nested.field_2, {});
  assert.equal(text((nested.field_20 as Record<string, unknown>).field_1), "deep");
  assert.deepEqual((t.field_32 as Uint8Array[]).map(text), strings);
  assert.deepEqual(t.field_33, [{ field_1: 7 }, {}]);
  assert.deepEqual(t.field_34, []);
  assert.equal(t.field_3, -(2 ** 31));
  assert.equal(t.field_1000, 42);
  assert.equal(t.field_40, 9);
});

test("statistics of DOUBLE leave NaN out (counted), write a zero minimum as -0.0 and a zero maximum as +0.0", () => {
  const f64 = (b: Uint8Array | undefined): number => new DataView(b!.buffer, b!.byteOffset, 8).getFloat64(0, true);
  let s = statsOf("float64", [NaN, 0, 2.5, -0, NaN]);
  assert.ok(Object.is(f64(s.min), -0) && f64(s.max) === 2.5 && s.nanCount === 2);
  s = statsOf("float64", [-1, -0]);
  assert.ok(f64(s.min) === -1 && Object.is(f64(s.max), 0));
  assert.deepEqual(statsOf("float64", [NaN]), { nanCount: 1 });
});

/** Metadata of `kinds` (name -> column_stats entry), enough for the writers. */
function metadataOf(kinds: Record<string, Partial<ColumnStats>>): Metadata {
  return { features: Object.keys(kinds), column_stats: kinds } as unknown as Metadata;
}

/** The Parquet bytes `writeBatches` makes of `batches`. */
async function parquetOf(metadata: Metadata, batches: DecodedBatch[], rowGroupRows = 100_000): Promise<ArrayBuffer> {
  const chunks: Buffer[] = [];
  const sink = new PassThrough();
  sink.on("data", (c: Buffer) => chunks.push(c));
  async function* each(): AsyncGenerator<DecodedBatch> {
    yield* batches;
  }
  await writeBatches(sink, each(), { format: "parquet", metadata, rowGroupRows });
  await new Promise((r) => setImmediate(r));
  const b = Buffer.concat(chunks);
  return b.buffer.slice(b.byteOffset, b.byteOffset + b.length) as ArrayBuffer;
}

function batchOf(columns: string[], cells: DecodedColumn[]): DecodedBatch {
  const n = cells[0].kind === "dict" ? cells[0].index.length : cells[0].kind === "int" ? cells[0].values.length : cells[0].cells.length;
  return new DecodedBatch(columns, cells, n);
}

const dict = (entries: string[], index: number[]): DecodedColumn => ({ kind: "dict", dict: entries, index: Int32Array.from(index) });
const ints = (values: number[], blank?: number[]): DecodedColumn => ({ kind: "int", values: Float64Array.from(values), ...(blank ? { blank: Uint8Array.from(blank) } : {}) });
const texts = (cells: string[]): DecodedColumn => ({ kind: "text", cells });

type Chunk = ReturnType<typeof parquetMetadata>["row_groups"][number]["columns"][number];

/** Per column name, the column chunks of every row group. */
function chunksOf(file: ArrayBuffer): Map<string, Chunk[]> {
  const md = parquetMetadata(file);
  const out = new Map<string, Chunk[]>();
  for (const g of md.row_groups) for (const c of g.columns) out.set(c.meta_data!.path_in_schema[0], [...(out.get(c.meta_data!.path_in_schema[0]) ?? []), c]);
  return out;
}

test("every column form, nulls, non-ASCII strings with bytewise min / max, one-entry dictionaries, all-null columns, big integers", async () => {
  const meta = metadataOf({
    cat: { type: "categorical" },
    one: { type: "categorical" },
    none: { type: "categorical" },
    small: { type: "numerical", decimals: 0 },
    wide: { type: "numerical", decimals: 0 },
    big: { type: "numerical", decimals: 0 },
    nulls: { type: "numerical", decimals: 0 },
    num: { type: "numerical", decimals: 0 },
    id: { type: "id" },
    word: { type: "categorical" },
    price: { type: "numerical", decimals: 2 },
    day: { type: "datetime", format: "yyyy-MM-dd" },
  });
  // UTF-16 order would put "\uFFFD" above the emoji (its first unit is a surrogate, 0xD83D); UTF-8 bytes put the emoji (F0 ..) above it (EF ..).
  const cat = ["é", "日本", "\u{1F600}", "\uFFFD", "", "a"];
  const rows = 40;
  const r = Array.from({ length: rows }, (_, i) => i);
  const batch = batchOf(meta.features, [
    dict(cat, r.map((i) => i % cat.length)),
    dict(["only"], r.map(() => 0)),
    dict(["", "x"], r.map(() => 0)), // "x" never used: every row null
    ints(r.map((i) => (i % 5) - 2), r.map((i) => (i % 9 === 0 ? 1 : 0))), // few values: a dictionary
    ints(r.map((i) => i * 2 ** 31 - 2 ** 40)), // beyond 2^31 and negative, distinct: PLAIN
    ints(r.map((i) => (i === 3 ? 2 ** 60 : i))), // 2^60 is no safe integer: converted from its text
    ints(r.map(() => 0), r.map(() => 1)), // all blank
    dict(["39", "40", "", "-7"], r.map((i) => i % 4)), // integer point bins as text entries
    texts(r.map((i) => (i % 7 === 0 ? "" : `id-${1000 - i}`))),
    texts(r.map((i) => ["ß", "straße", "", "z"][i % 4])), // repeats: a dictionary through a Map
    texts(r.map((i) => (i % 6 === 0 ? "" : (i / 4 - 3).toFixed(2)))),
    dict(["2001-03-15", "", "1969-12-31"], r.map((i) => i % 3)),
  ]);
  const file = await parquetOf(meta, [batch]);
  const md = parquetMetadata(file);
  assert.equal(Number(md.num_rows), rows);
  const schema = new Map(md.schema.slice(1).map((e) => [e.name, e]));
  assert.deepEqual(
    meta.features.map((f) => [schema.get(f)!.type, schema.get(f)!.repetition_type, schema.get(f)!.converted_type ?? null]),
    [
      ["BYTE_ARRAY", "OPTIONAL", "UTF8"],
      ["BYTE_ARRAY", "OPTIONAL", "UTF8"],
      ["BYTE_ARRAY", "OPTIONAL", "UTF8"],
      ["INT64", "OPTIONAL", null],
      ["INT64", "OPTIONAL", null],
      ["INT64", "OPTIONAL", null],
      ["INT64", "OPTIONAL", null],
      ["INT64", "OPTIONAL", null],
      ["BYTE_ARRAY", "OPTIONAL", "UTF8"],
      ["BYTE_ARRAY", "OPTIONAL", "UTF8"],
      ["DOUBLE", "OPTIONAL", null],
      ["INT32", "OPTIONAL", "DATE"],
    ],
  );
  const objects = (await parquetReadObjects({ file })) as Record<string, unknown>[];
  const cell = (f: number, i: number): string => batch.get(i, f);
  const expect = (f: number, i: number): unknown => {
    const t = cell(f, i);
    if (t === "") return null;
    switch (schema.get(meta.features[f])!.type) {
      case "INT64":
        return BigInt(t);
      case "DOUBLE":
        return Number(t);
      case "INT32":
        return new Date(`${t}T00:00:00Z`).getTime();
      default:
        return t;
    }
  };
  for (let i = 0; i < rows; i++) {
    meta.features.forEach((f, j) => {
      let v = objects[i][f];
      if (v instanceof Date) v = v.getTime();
      assert.deepEqual(v, expect(j, i), `row ${i}, ${f}`);
    });
  }
  const chunks = chunksOf(file);
  const chunk = (f: string): NonNullable<Chunk["meta_data"]> => chunks.get(f)![0].meta_data!;
  const stats = (f: string) => chunk(f).statistics!;
  // Null counts of every column, and min / max of the values present.
  meta.features.forEach((f, j) => {
    const present = r.map((i) => expect(j, i)).filter((v) => v !== null);
    assert.equal(Number(stats(f).null_count), rows - present.length, `${f}: null_count`);
    assert.equal(Number(chunk(f).num_values), rows, `${f}: num_values counts the nulls`);
  });
  assert.deepEqual([stats("cat").min_value, stats("cat").max_value], ["a", "\u{1F600}"], "strings: unsigned bytewise");
  assert.deepEqual([stats("one").min_value, stats("one").max_value], ["only", "only"]);
  assert.deepEqual([stats("none").min_value, stats("none").max_value], [undefined, undefined], "no values: no min or max");
  assert.deepEqual([stats("small").min_value, stats("small").max_value], [-2n, 2n], "INT64: signed");
  assert.deepEqual([stats("wide").min_value, stats("wide").max_value], [-(2n ** 40n), 39n * 2n ** 31n - 2n ** 40n]);
  // 2^60 is written as the CSV writes it, String(2 ** 60) = "1152921504606847000", and read from that text.
  assert.deepEqual([stats("big").min_value, stats("big").max_value], [0n, BigInt(String(2 ** 60))]);
  assert.deepEqual([stats("num").min_value, stats("num").max_value], [-7n, 40n]);
  assert.deepEqual([stats("id").min_value, stats("id").max_value], ["id-961", "id-999"]);
  assert.deepEqual([stats("word").min_value, stats("word").max_value], ["straße", "ß"]);
  assert.deepEqual([stats("price").min_value, stats("price").max_value], [-2.75, 6.75]);
  assert.deepEqual([(stats("day").min_value as Date).toISOString(), (stats("day").max_value as Date).toISOString()], ["1969-12-31T00:00:00.000Z", "2001-03-15T00:00:00.000Z"]);
  // Encodings: dictionaries where the rows are indices or values repeat, PLAIN otherwise.
  const dictionary = (f: string): boolean => chunk(f).encodings.includes("RLE_DICTIONARY");
  assert.deepEqual(
    meta.features.filter(dictionary),
    ["cat", "one", "small", "num", "word", "day"],
  );
  assert.ok(chunk("one").dictionary_page_offset !== undefined);
  assert.deepEqual(
    meta.features.map((f) => chunk(f).codec),
    meta.features.map(() => "UNCOMPRESSED"),
  );
  // ARROW:schema: the Arrow IPC schema message of the same columns.
  const kv = md.key_value_metadata!.find((e) => e.key === "ARROW:schema")!;
  const message = Buffer.from(kv.value!, "base64");
  const eos = Buffer.from([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
  assert.deepEqual(
    tableFromIPC(Buffer.concat([message, eos])).schema.fields.map((f) => `${f.name}:${f.type}`),
    meta.features.map((f, j) => `${f}:${["Utf8", "Utf8", "Utf8", "Int64", "Int64", "Int64", "Int64", "Int64", "Utf8", "Utf8", "Float64", "Date32<DAY>"][j]}`),
  );
});

test("row groups: split at rowGroupRows, small batches gathered, dictionaries merged across batches, unused entries left out", async () => {
  const meta = metadataOf({ c: { type: "categorical" }, n: { type: "numerical", decimals: 0 } });
  const big = Array.from({ length: 50 }, (_, i) => `v${i}`);
  const batches = [
    batchOf(["c", "n"], [dict(["a", "b", ""], [0, 1, 2]), ints([1, 2, 3])]),
    batchOf(["c", "n"], [dict(["b", "c"], [1, 1, 0, 0, 1]), texts(["4", "", "6", "7", "8"])]), // n as text: the cell path
    batchOf(["c", "n"], [dict(big, [49, 0, 49, 49]), ints([9, 10, 2 ** 53 - 1, -(2 ** 53) + 1])]),
  ];
  const file = await parquetOf(meta, batches, 4);
  const md = parquetMetadata(file);
  assert.deepEqual(
    md.row_groups.map((g) => Number(g.num_rows)),
    [4, 4, 4],
  );
  const objects = (await parquetReadObjects({ file })) as Record<string, unknown>[];
  assert.deepEqual(
    objects.map((o) => o.c),
    ["a", "b", null, "c", "c", "b", "b", "c", "v49", "v0", "v49", "v49"],
  );
  assert.deepEqual(
    objects.map((o) => o.n),
    [1n, 2n, 3n, 4n, null, 6n, 7n, 8n, 9n, 10n, 2n ** 53n - 1n, -(2n ** 53n) + 1n],
  );
  const chunks = chunksOf(file).get("c")!;
  assert.deepEqual(
    chunks.map((c) => [c.meta_data!.statistics!.min_value, c.meta_data!.statistics!.max_value, Number(c.meta_data!.statistics!.null_count)]),
    [
      ["a", "c", 1],
      ["b", "c", 0],
      ["v0", "v49", 0],
    ],
  );
  // The last group's dictionary holds the 2 values used, not the 50 entries: its page is small.
  const dictPage = Number(chunks[2].meta_data!.data_page_offset) - Number(chunks[2].meta_data!.dictionary_page_offset);
  assert.ok(dictPage < 40, `dictionary page and header: ${dictPage} bytes`);
});

test("a file of no rows has no row group; a cell its type cannot hold fails with column and row, an unused one does not", async () => {
  const meta = metadataOf({ c: { type: "categorical" }, n: { type: "numerical", decimals: 0 } });
  const empty = await parquetOf(meta, []);
  const md = parquetMetadata(empty);
  assert.equal(Number(md.num_rows), 0);
  assert.deepEqual(md.row_groups, []);
  assert.deepEqual(await parquetReadObjects({ file: empty }), []);
  assert.equal(Buffer.from(empty).subarray(0, 4).toString(), "PAR1");

  const good = batchOf(["c", "n"], [dict(["x"], [0, 0]), dict(["1", "2.5"], [0, 0])]);
  assert.deepEqual(
    ((await parquetReadObjects({ file: await parquetOf(meta, [good]) })) as Record<string, unknown>[]).map((o) => o.n),
    [1n, 1n],
    "the entry 2.5 is held by no row",
  );
  const bad = batchOf(["c", "n"], [dict(["x"], [0, 0, 0]), dict(["1", "2.5"], [0, 0, 1])]);
  await assert.rejects(parquetOf(meta, [good, bad]), (e: unknown) => {
    assert.ok(e instanceof DataError);
    assert.match(e.message, /^column "n", row 5 of the output: "2\.5" is not an integer/);
    return true;
  });
  const badText = batchOf(["c", "n"], [dict(["x"], [0, 0]), texts(["3", "x"])]);
  await assert.rejects(parquetOf(meta, [badText]), /column "n", row 2 of the output: "x" is not a number/);
});
