/**
 * `src/sdk/client/arrow-int32.ts` reads what apache-arrow reads: for the streams the server writes
 * (`generationToArrow`) the same fields, metadata and Int32 values as `tableFromIPC`; for any other
 * stream (other types, nulls, dictionaries, cut-short or altered bytes) either the same or
 * `undefined`, which `codesFromArrow` leaves to apache-arrow; several batches read as apache-arrow
 * concatenates them.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Dictionary, Int32, RecordBatch, Schema, Table, Utf8, makeVector, tableFromIPC, tableToIPC, vectorFromArray, type Vector } from "apache-arrow";
import { generationToArrow } from "../src/server/arrow";
import { readInt32Stream } from "../src/sdk/client/arrow-int32";
import { codesFromArrow } from "../src/sdk/client/models";

/**
 * A generation of `n` rows with columns `names`, codes a function of row and column below `k(j)`
 * (default j + 2); `narrow`: as the server writes for `codes=narrow`.
 */
function generation(n: number, names: string[], narrow = false, k: (j: number) => number = (j) => j + 2): Uint8Array {
  const columns = Object.fromEntries(names.map((f, j) => [f, Int32Array.from({ length: n }, (_, r) => (r * (j + 3) + j) % k(j))]));
  return generationToArrow({ model_id: "mdl_0123456789ab", num_rows: n, features: names, columns }, "2026-01-02T03:04:05.000Z", narrow);
}

/** What apache-arrow reads: fields, metadata, rows and Int32, Uint16 or Uint8 columns (undefined for other types). */
function viaArrow(bytes: Uint8Array): { fields: string[]; metadata: Map<string, string>; numRows: number; columns: (number[] | undefined)[] } {
  const t = tableFromIPC(bytes);
  const fields = t.schema.fields.map((f) => f.name);
  const columns = fields.map((f) => {
    const v = t.getChild(f)!.toArray() as unknown;
    return v instanceof Int32Array || v instanceof Uint16Array || v instanceof Uint8Array ? Array.from(v) : undefined;
  });
  return { fields, metadata: t.schema.metadata, numRows: t.numRows, columns };
}

/** Asserts that the reader gives apache-arrow's reading of `bytes`, or undefined (then returns false). */
function sameOrNone(bytes: Uint8Array, what: string): boolean {
  const got = readInt32Stream(bytes);
  if (got === undefined) return false;
  const want = viaArrow(bytes);
  assert.deepEqual(got.fields, want.fields, what);
  assert.deepEqual([...got.metadata], [...want.metadata], what);
  assert.equal(got.numRows, want.numRows, what);
  assert.deepEqual(got.columns.map((c) => Array.from(c)), want.columns, what);
  return true;
}

test("the server's streams: read, with apache-arrow's fields, metadata and values", () => {
  const cases: [number, string[]][] = [
    [0, ["a"]],
    [1, ["a", "b"]],
    [7, ["age", "workclass", "name with spaces", "été", "日本"]],
    [1000, Array.from({ length: 40 }, (_, j) => `f${j}`)],
    [100_000, ["x", "y", "z"]],
  ];
  for (const [n, names] of cases) assert.ok(sameOrNone(generation(n, names), `${n} rows, ${names.length} columns`), `${n} rows read`);
  // Narrow codes (Uint8 and Uint16 columns), read as Int32Array.
  const narrow = generation(20_000, ["u8", "u16", "i32"], true, (j) => [200, 60_000, 70_000][j]);
  assert.deepEqual(tableFromIPC(narrow).schema.fields.map((f) => String(f.type)), ["Uint8", "Uint16", "Int32"]);
  assert.ok(sameOrNone(narrow, "narrow codes"), "narrow codes read");
  assert.ok(readInt32Stream(narrow)!.columns.every((c) => c instanceof Int32Array));
  const one = readInt32Stream(generation(3, ["a"]))!;
  assert.equal(one.metadata.get("synthd.object"), "generation");
  assert.equal(one.metadata.get("synthd.model_id"), "mdl_0123456789ab");
});

test("every prefix and altered bytes of a stream: apache-arrow's reading or undefined", () => {
  // apache-arrow is asked only about what the reader reads: on some altered bytes it never returns.
  const bytes = generation(5, ["a", "bb"]);
  let read = 0;
  for (let k = 0; k <= bytes.length; k++) if (sameOrNone(bytes.slice(0, k), `prefix ${k}`)) read++;
  assert.equal(read, 3, "the whole stream, without its end-of-stream marker, and its schema alone (no rows)");
  for (let k = 0; k < bytes.length; k++) {
    for (const x of [0x00, 0x01, 0x07, 0x20, 0x7f, 0x80, 0xfe, 0xff]) {
      if (bytes[k] === x) continue;
      const altered = bytes.slice();
      altered[k] = x;
      sameOrNone(altered, `byte ${k} = ${x}`);
    }
  }
});

test("other streams are left to apache-arrow: other types, nulls, dictionaries, repeated names", () => {
  const ipc = (columns: Record<string, Vector>): Uint8Array => tableToIPC(new Table(columns), "stream");
  const others: [string, Uint8Array][] = [
    ["Int64", ipc({ a: makeVector(BigInt64Array.from([1n, 2n])) })],
    ["Float64", ipc({ a: makeVector(Float64Array.from([1.5, 2])) })],
    ["nulls", ipc({ a: vectorFromArray([1, null, 3], new Int32()) })],
    ["dictionary", ipc({ a: vectorFromArray(["x", "y", "x"], new Dictionary(new Utf8(), new Int32())) })],
    ["file format", tableToIPC(new Table({ a: makeVector(Int32Array.from([1, 2])) }), "file")],
    ["garbage", new Uint8Array([1, 2, 3])],
    // apache-arrow writes no name for "" and reads the field back named "null": its reading stays.
    ["an empty column name", generation(2, [""])],
  ];
  for (const [what, bytes] of others) assert.equal(readInt32Stream(bytes), undefined, what);
  // Two fields of one name (apache-arrow's getChild finds the first).
  const t = new Table({ a: makeVector(Int32Array.from([1, 2])), b: makeVector(Int32Array.from([3, 4])) });
  const schema = new Schema([t.schema.fields[0], t.schema.fields[1].clone({ name: "a" })]);
  const twice = new Table(schema, t.batches.map((batch) => new RecordBatch(schema, batch.data)));
  assert.equal(readInt32Stream(tableToIPC(twice, "stream")), undefined, "repeated name");
});

test("several record batches: the values of all of them, as apache-arrow concatenates them", () => {
  const batches = [0, 1, 2].map((k) => new Table({ a: makeVector(Int32Array.from([k, k + 10, k + 20])), b: makeVector(Int32Array.from([-k, 7, 8])) }).batches[0]);
  const table = new Table(batches);
  assert.ok(sameOrNone(tableToIPC(table, "stream"), "3 batches"), "read");
});

test("codesFromArrow: the codes apache-arrow reads, without it; other bytes still invalid_response", () => {
  const bytes = generation(50, ["a", "b", "c"]);
  const got = codesFromArrow(bytes);
  const t = tableFromIPC(bytes);
  assert.equal(got.num_rows, 50);
  assert.equal(got.model_id, "mdl_0123456789ab");
  assert.deepEqual(got.features, ["a", "b", "c"]);
  for (const f of got.features) {
    assert.ok(got.columns[f] instanceof Int32Array);
    assert.deepEqual(Array.from(got.columns[f]), Array.from(t.getChild(f)!.toArray() as Int32Array), f);
  }
  const notGeneration = tableToIPC(new Table({ a: makeVector(Int32Array.from([1])) }), "stream");
  assert.throws(() => codesFromArrow(notGeneration), /The Arrow generate response is not a generation\./);
  assert.throws(() => codesFromArrow(new Uint8Array([1, 2, 3])), (e: unknown) => (e as { code?: string }).code === "invalid_response");
});
