/**
 * `src/sdk/io/arrow-ipc.ts`, the SDK's own Arrow IPC file writer, read back by apache-arrow (an
 * independent reader): every type it writes (Utf8, Int64, Float64, Timestamp(ms, UTC), Date32,
 * Dictionary<Int32, Utf8> with a delta), nulls, buffers whose lengths are not multiples of 8,
 * several record batches; the file is also a valid stream after its 8-byte magic (the schema
 * message first, as the format's file layout asks); mismatched columns are refused.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { RecordBatchStreamReader, tableFromIPC, type Table } from "apache-arrow";
import { ArrowIpcFileWriter, type ColumnBuffers, type IpcField } from "../src/sdk/io/arrow-ipc";

/** Concatenation of chunks. */
function concat(chunks: Uint8Array[]): Uint8Array {
  return Buffer.concat(chunks.map((c) => Buffer.from(c.buffer, c.byteOffset, c.byteLength)));
}

/** Validity bitmap of `values` (null: unset) and the null count. */
function validity<T>(values: readonly (T | null)[]): { nullCount: number; validity?: Uint8Array } {
  const bits = new Uint8Array(Math.ceil(values.length / 8));
  let nulls = 0;
  values.forEach((v, r) => {
    if (v === null) nulls++;
    else bits[r >> 3] |= 1 << (r & 7);
  });
  return nulls > 0 ? { nullCount: nulls, validity: bits } : { nullCount: 0 };
}

/** Utf8 buffers of `texts` (null: a null row). */
function utf8(texts: readonly (string | null)[]): ColumnBuffers {
  const parts = texts.map((t) => Buffer.from(t ?? "", "utf8"));
  const offsets = new Int32Array(texts.length + 1);
  parts.forEach((p, i) => (offsets[i + 1] = offsets[i] + p.length));
  return { length: texts.length, ...validity(texts), offsets, values: new Uint8Array(Buffer.concat(parts)) };
}

const FIELDS: IpcField[] = [
  { name: "name", type: "string" },
  { name: "count", type: "int64" },
  { name: "weight", type: "float64" },
  { name: "seen", type: "timestamp" },
  { name: "day", type: "date" },
  { name: "colour", type: "string", dictionary: true },
];

/** One batch's columns: rows of [name, count, weight, seen (ms), day, colour index]. */
function batch(rows: (string | bigint | number | null)[][]): ColumnBuffers[] {
  const col = <T>(j: number) => rows.map((r) => r[j] as T | null);
  const n = rows.length;
  return [
    utf8(col<string>(0)),
    { length: n, ...validity(col(1)), values: BigInt64Array.from(col<bigint>(1), (v) => v ?? 0n) },
    { length: n, ...validity(col(2)), values: Float64Array.from(col<number>(2), (v) => v ?? 0) },
    { length: n, ...validity(col(3)), values: BigInt64Array.from(col<bigint>(3), (v) => v ?? 0n) },
    { length: n, ...validity(col(4)), values: Int32Array.from(col<number>(4), (v) => v ?? 0) },
    { length: n, ...validity(col(5)), values: Int32Array.from(col<number>(5), (v) => v ?? 0) },
  ];
}

const ROWS_1 = [
  ["Åsa Öberg", 9007199254740993n, 1.5, 1_700_000_000_123n, 19_000, 0],
  [null, -5n, null, null, -1, null],
  ["", 0n, -0.25, 0n, 0, 1],
];
const ROWS_2 = [
  ["x", null, 2, -86_400_000n, null, 2],
  ["日本語", 2n ** 62n, Number.MAX_VALUE, 1n, 1, 0],
];

function writeFile(): Uint8Array {
  const w = new ArrowIpcFileWriter(FIELDS);
  const chunks = [...w.start()];
  chunks.push(...w.dictionary(5, utf8(["red", "green"]), false));
  chunks.push(...w.recordBatch(3, batch(ROWS_1)));
  chunks.push(...w.dictionary(5, utf8(["blue"]), true));
  chunks.push(...w.recordBatch(2, batch(ROWS_2)));
  chunks.push(...w.close());
  return concat(chunks);
}

/** The rows apache-arrow reads, each cell as the test writes it (dates as days, timestamps as ms). */
function readRows(t: Table): unknown[][] {
  const out: unknown[][] = [];
  for (let r = 0; r < t.numRows; r++) {
    out.push(
      t.schema.fields.map((f) => {
        const v = t.getChild(f.name)!.get(r);
        if (v === null) return null;
        if (f.name === "seen") return BigInt(v as number);
        if (f.name === "day") return Math.round((v as number) / 86_400_000);
        return v;
      }),
    );
  }
  return out;
}

test("apache-arrow reads the writer's file: types, values, nulls, a dictionary delta, two record batches", () => {
  const bytes = writeFile();
  assert.equal(Buffer.from(bytes.subarray(0, 6)).toString(), "ARROW1");
  assert.equal(Buffer.from(bytes.subarray(bytes.length - 6)).toString(), "ARROW1");
  const t = tableFromIPC(bytes);
  assert.deepEqual(
    t.schema.fields.map((f) => `${f.name}:${f.type}:${f.nullable}`),
    ["name:Utf8:true", "count:Int64:true", "weight:Float64:true", "seen:Timestamp<MILLISECOND, UTC>:true", "day:Date32<DAY>:true", "colour:Dictionary<Int32, Utf8>:true"],
  );
  assert.equal(t.batches.length, 2);
  const colours = ["red", "green", "blue"];
  const want = [...ROWS_1, ...ROWS_2].map((r) => r.map((v, j) => (j === 5 && v !== null ? colours[v as number] : v)));
  assert.deepEqual(readRows(t), want);
});

test("after its magic the file reads as an Arrow stream: the schema message comes first", () => {
  const bytes = writeFile();
  const reader = RecordBatchStreamReader.from(bytes.subarray(8));
  const batches = [...reader];
  assert.equal(batches.length, 2);
  assert.deepEqual(
    batches[0].schema.fields.map((f) => f.name),
    FIELDS.map((f) => f.name),
  );
  assert.equal(batches[1].getChild("colour")!.get(0), "blue");
});

test("an empty file (no batch) reads as zero rows of the schema; mismatched columns are refused", () => {
  const w = new ArrowIpcFileWriter(FIELDS);
  const t = tableFromIPC(concat([...w.start(), ...w.close()]));
  assert.equal(t.numRows, 0);
  assert.equal(t.schema.fields.length, FIELDS.length);
  const w2 = new ArrowIpcFileWriter(FIELDS);
  w2.start();
  assert.throws(() => w2.recordBatch(3, batch(ROWS_1).slice(1)), RangeError);
  assert.throws(() => w2.recordBatch(4, batch(ROWS_1)), RangeError);
  assert.throws(() => new ArrowIpcFileWriter([{ name: "n", type: "int64", dictionary: true }]), RangeError);
});
