/**
 * Seeded generation on the SDK side (src/sdk/generate/seeded-request.ts, `Decoder.restrict`), without a server:
 * `where` conditions -> wire codes and range-restricted decoders, seed tables -> wire codes and
 * the cells kept, and the DataErrors of bad input (column, line).
 *
 * The table: `color` categorical with rare values pooled, `small` numerical with point bins,
 * `amount` numerical with quantile bins (2 decimals), `when` datetime with bins, `order_id` an
 * identifier.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { DataError, Decoder, extractMetadata, type Metadata, type Table } from "../src/sdk";
import { compileWhere, encodeSeed, readSeedTable } from "../src/sdk/generate/seeded-request";
import { DatetimeFormat } from "../src/sdk/metadata/datetime";
import { mulberry32 } from "./fixtures";
import type { ConditionCell } from "../src/contract";

async function fixture(): Promise<{ table: Table; meta: Metadata; dec: Decoder }> {
  const u = mulberry32(3);
  const columns = ["color", "small", "amount", "when", "order_id"];
  const rows: string[][] = [];
  for (let i = 0; i < 400; i++) {
    const color = i < 10 ? `rare${i}` : ["red", "blue", "green"][Math.floor(u() * 3)];
    const day = new Date(Date.UTC(2020, 0, 1) + Math.floor(u() * 365) * 86400000).toISOString().slice(0, 10);
    rows.push([color, String(1 + Math.floor(u() * 5)), (u() * 1000).toFixed(2), day, String(100000 + i)]);
  }
  rows[20][1] = ""; // a blank in `small`
  const table = { columns, rows };
  const meta = await extractMetadata(table);
  return { table, meta, dec: new Decoder(meta) };
}

/** The allowed codes of a wire condition cell. */
function cellCodes(cell: ConditionCell): number[] {
  return typeof cell === "number" ? [cell] : Array.isArray(cell) ? cell : cell.codes;
}

/** Decodes each allowed code many times with the (restricted) decoder of `feature`. */
function decodeAll(dec: Decoder, meta: Metadata, feature: string, cell: ConditionCell, decoders: Record<string, unknown>, times = 50): string[] {
  const list = cellCodes(cell);
  const columns: Record<string, number[]> = {};
  const n = list.length * times;
  for (const f of meta.features) columns[f] = new Array(n).fill(0);
  columns[feature] = Array.from({ length: n }, (_, i) => list[i % list.length]);
  const t = dec.decode(columns, 11, { decoders: decoders as never });
  const j = meta.features.indexOf(feature);
  return t.rows.map((r) => r[j]);
}

test("kinds of the fixture", async () => {
  const { meta } = await fixture();
  const kinds = meta.features.map((f) => meta.column_stats![f].type);
  assert.deepEqual(kinds, ["categorical", "numerical", "numerical", "datetime", "id"]);
  assert.equal(meta.column_stats!.small.bin_edges, undefined, "small: point bins");
  assert.ok(meta.column_stats!.amount.bin_edges, "amount: quantile bins");
  assert.ok(meta.column_stats!.when.bin_edges, "when: binned");
});

test("where: categorical values and lists map through the code book", async () => {
  const { meta, dec } = await fixture();
  const vm = meta.value_mappings!;
  const c = compileWhere(dec, { color: "blue", small: ["2", 4] });
  assert.deepEqual(c.condition, { color: vm.color.blue, small: [vm.small["2"], vm.small["4"]].sort((a, b) => a - b) });
  assert.deepEqual(compileWhere(dec, { color: ["green", "red", "green"] }).condition.color, [vm.color.green, vm.color.red].sort((a, b) => a - b));
  assert.deepEqual(compileWhere(dec, { small: "" }).condition.small, vm.small[""], "blank is the missing code");
  assert.deepEqual(compileWhere(dec, { small: { gte: 2, lt: 4 } }).condition.small, [vm.small["2"], vm.small["3"]].sort((a, b) => a - b));
});

test("where: a numeric range maps to the bins it touches and decodes inside the range", async () => {
  const { meta, dec } = await fixture();
  const edges = meta.column_stats!.amount.bin_edges!;
  const cases = [
    { gte: 250, lte: 260.5 },
    { gt: 100, lt: 101 },
    { gte: 990 },
    { lte: 3.333 },
    { gte: "500", lt: "700" },
  ];
  for (const r of cases) {
    const c = compileWhere(dec, { amount: r });
    const cell = c.condition.amount;
    const codes = cellCodes(cell);
    const lo = Number(r.gte ?? r.gt ?? -Infinity);
    const hi = Number(r.lte ?? r.lt ?? Infinity);
    // Exactly the bins overlapping [lo, hi].
    const expect = [];
    for (let b = 0; b + 1 < edges.length; b++) if (edges[b + 1] >= lo && edges[b] <= hi) expect.push(b);
    assert.deepEqual(codes, expect, JSON.stringify(r));
    // A bin the range covers in part carries its share of the values the plain decoder writes.
    const weights = typeof cell === "object" && !Array.isArray(cell) ? cell.weights : codes.map(() => 1);
    codes.forEach((code, i) => {
      const all = decodeAll(dec, meta, "amount", code, {}, 4000);
      const share = all.filter((v) => (r.gt !== undefined ? Number(v) > lo : Number(v) >= lo) && (r.lt !== undefined ? Number(v) < hi : Number(v) <= hi)).length / all.length;
      assert.ok(weights[i] > 0 && weights[i] <= 1 && Math.abs(weights[i] - share) < 0.03, `${JSON.stringify(r)} bin ${code}: weight ${weights[i]}, share drawn inside ${share}`);
    });
    if (codes.length > 1) assert.ok(Array.isArray(cell) || weights.some((w) => w < 1), "weights only when some bin is covered in part");
    for (const v of decodeAll(dec, meta, "amount", cell, c.decoders)) {
      const x = Number(v);
      assert.match(v, /^\d+(\.\d{1,2})?$/, "written with at most the column's decimals");
      assert.ok(r.gt !== undefined ? x > lo : x >= lo, `${v} above ${JSON.stringify(r)}`);
      assert.ok(r.lt !== undefined ? x < hi : x <= hi, `${v} below ${JSON.stringify(r)}`);
    }
  }
  // An exact value of a binned column decodes to exactly that value.
  const one = compileWhere(dec, { amount: 123.45 });
  assert.equal(cellCodes(one.condition.amount).length, 1);
  assert.deepEqual(new Set(decodeAll(dec, meta, "amount", one.condition.amount, one.decoders)), new Set(["123.45"]));
});

test("where: a datetime range (column format or ISO 8601) decodes inside the range", async () => {
  const { meta, dec } = await fixture();
  const fmt = new DatetimeFormat(meta.column_stats!.when.format!);
  for (const r of [{ gte: "2020-03-01", lt: "2020-03-15" }, { gte: "2020-06-01T00:00:00Z", lte: "2020-06-02T00:00:00Z" }]) {
    const c = compileWhere(dec, { when: r });
    const lo = Date.parse(r.gte) / 1000;
    const hi = Date.parse(("lt" in r ? r.lt : r.lte) as string) / 1000;
    const seen = new Set<string>();
    for (const v of decodeAll(dec, meta, "when", c.condition.when, c.decoders)) {
      const s = fmt.parse(v)!.seconds;
      assert.ok(s >= lo && ("lt" in r ? s < hi : s <= hi), `${v} in ${JSON.stringify(r)}`);
      seen.add(v);
    }
    assert.ok(seen.size > 1, "draws spread over the range");
  }
});

test("where: bad conditions are DataErrors naming the column", async () => {
  const { dec } = await fixture();
  const bad: [Record<string, unknown>, string, RegExp][] = [
    [{ colour: "red" }, "colour", /does not have/],
    [{ color: "purple" }, "color", /not in the code book/],
    [{ color: "rare3" }, "color", /pooled/],
    [{ color: "__other__" }, "color", /not in the code book/],
    [{ color: [] }, "color", /empty/],
    [{ color: { gte: 1 } }, "color", /categorical/],
    [{ small: 9 }, "small", /not a value/],
    [{ amount: { gte: 2000 } }, "amount", /empty/],
    [{ amount: { gte: 5, lt: 5 } }, "amount", /empty/],
    [{ amount: { gte: 5, gt: 4 } }, "amount", /both gte and gt/],
    [{ amount: { from: 5 } }, "amount", /gte, gt, lte and lt/],
    [{ amount: [1, 2] }, "amount", /binned/],
    [{ amount: { gte: "lots" } }, "amount", /finite number/],
    [{ when: { gte: "March" } }, "when", /datetime/],
    [{ order_id: "100003" }, "order_id", /identifier/],
  ];
  for (const [where, column, message] of bad) {
    assert.throws(
      () => compileWhere(dec, where as never),
      (e: unknown) => e instanceof DataError && e.column === column && message.test(e.message),
      JSON.stringify(where),
    );
  }
});

test("seed tables: non-blank cells kept byte for byte, codes from the code book, blanks free", async () => {
  const { meta } = await fixture();
  const vm = meta.value_mappings!;
  const csv = 'amount,color,order_id,small,when\n 12.5,"red",X-1,3,\n2000,rare7,, 4 ,2020-02-02\n,,,,\n-5,blue,,2.4,2019-01-01\n';
  const seed = await readSeedTable(csv);
  assert.deepEqual(seed.columns, ["amount", "color", "order_id", "small", "when"]);
  assert.deepEqual(seed.rows[0], [" 12.5", "red", "X-1", "3", ""], "cells untrimmed, quotes removed");
  assert.deepEqual(seed.lines, [2, 3, 4, 5]);
  const enc = encodeSeed(meta, seed);
  assert.deepEqual(enc.features, seed.columns);
  const edges = meta.column_stats!.amount.bin_edges!;
  const last = edges.length - 2;
  assert.equal(enc.rows[0][0], edges.findIndex((e, i) => i < last + 1 && 12.5 >= e && 12.5 < edges[i + 1]), "bin of 12.5");
  assert.deepEqual(enc.rows[0].slice(1), [vm.color.red, 0, vm.small["3"], null]);
  assert.equal(enc.rows[1][0], last, "above the trained max: the last bin");
  assert.equal(enc.rows[1][1], vm.color.__other__, "a rare value: the pooled code");
  assert.equal(enc.rows[1][3], vm.small["4"], "trimmed for the code");
  assert.deepEqual(enc.rows[2], [null, null, null, null, null], "a blank row is free");
  assert.equal(enc.rows[3][0], 0, "below the trained min: the first bin");
  assert.equal(enc.rows[3][3], vm.small["2"], "point bins: the nearest value");
  // Kept cells, in the model's column order.
  const at = (f: string) => meta.features.indexOf(f);
  assert.equal(enc.keep[0][at("amount")], " 12.5");
  assert.equal(enc.keep[0][at("order_id")], "X-1");
  assert.equal(enc.keep[0][at("when")], undefined);
  assert.equal(enc.keep[1][at("small")], " 4 ");
  // Records and tables read the same way.
  const recs = await readSeedTable([{ color: "red", small: 3 }, { small: null, amount: 1.5 }]);
  assert.deepEqual(recs.columns, ["color", "small", "amount"]);
  assert.deepEqual(recs.rows, [["red", "3", ""], ["", "", "1.5"]]);
});

test("seed tables: bad columns and cells are DataErrors naming column and line", async () => {
  const { meta } = await fixture();
  const cases: [string, string | undefined, number][] = [
    ["color,shade\nred,dark\n", "shade", 1],
    ["color,amount\nred,1\nblue,many\n", "amount", 3],
    ["color,when\nred,2020-01-01\nred,01/02/2020\n", "when", 3],
    ["color,small\nred,1\nred,x\n", "small", 3],
    ["color,small\nred,1\nred\n", undefined, 3],
  ];
  for (const [csv, column, line] of cases) {
    await assert.rejects(
      (async () => encodeSeed(meta, await readSeedTable(csv)))(),
      (e: unknown) => e instanceof DataError && e.column === column && e.line === line,
      csv,
    );
  }
  // A categorical column without a pooled code refuses an unknown value.
  const t = await extractMetadata({ columns: ["a", "b"], rows: Array.from({ length: 40 }, (_, i) => [i % 2 ? "x" : "y", String(i % 3)]) });
  await assert.rejects(
    (async () => encodeSeed(t, await readSeedTable("a,b\nx,1\nz,2\n")))(),
    (e: unknown) => e instanceof DataError && e.column === "a" && e.line === 3 && /code book/.test(e.message),
  );
});

test("Decoder.restrict leaves unrestricted decoding unchanged", async () => {
  const { meta, dec } = await fixture();
  const columns: Record<string, number[]> = {};
  for (const f of meta.features) columns[f] = Array.from({ length: 100 }, (_, i) => i % (meta.cardinalities[f] - (f === "small" ? 1 : 0)));
  const plain = dec.decode(columns, 5);
  const again = new Decoder(meta).decode(columns, 5, { decoders: {} });
  assert.deepEqual(again, plain);
  assert.equal(dec.restrict("color", { lo: 0 }, Number), undefined, "categorical columns have no ranges");
  // A range covering everything keeps every non-missing bin.
  const all = dec.restrict("amount", {}, Number)!;
  assert.equal(all.codes.length, meta.column_stats!.amount.bin_edges!.length - 1);
});
