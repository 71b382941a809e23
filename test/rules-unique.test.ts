/**
 * A table's key (`unique` rules): found where the rows are one per date, per cell of a grid, and
 * not where distinct values are chance; kept in a sample by dropping rows that repeat a key.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { rowCells } from "../src/sdk/generate/batch";
import { SampleKeys } from "../src/sdk/generate/unique-keys";
import { describeRule } from "../src/sdk/rules/describe";
import { ruleShares } from "../src/sdk/rules/check";
import { analyzed, decodeIndependent, independentCodes, table } from "./rules-fixtures";
import { Decoder } from "../src/sdk";
import type { Metadata, UniqueRule } from "../src/contract";

function keysOf(meta: Metadata): string[][] {
  return (meta.rules ?? []).filter((r): r is UniqueRule => r.type === "unique").map((r) => r.columns);
}

function day(i: number): string {
  return new Date(Date.UTC(2020, 0, 1) + i * 86_400_000).toISOString().slice(0, 10);
}

const daily = table(["date", "riders", "share"], 400, (i, rng) => [day(i), Math.round(50_000 + 20_000 * rng.next()), (0.2 + 0.6 * rng.next()).toFixed(3)]);

const regions = ["North", "South", "East", "West", "Central", "Coast"];
const grid = table(["region", "year", "population"], regions.length * 30, (i, rng) => [regions[i % regions.length], 1990 + Math.floor(i / regions.length), Math.round(1e6 * rng.next())]);

test("a daily series: its date column is its key, printed as a rule; riders and shares are not keys", async () => {
  const meta = await analyzed(daily);
  assert.deepEqual(keysOf(meta), [["date"]]);
  const rule = meta.rules!.find((r) => r.type === "unique")!;
  assert.equal(describeRule(rule), "unique: date is the table's key, each value once");
});

test("a (region, year) grid: the pair is the key, neither column alone", async () => {
  const meta = await analyzed(grid);
  assert.deepEqual(keysOf(meta), [["region", "year"]]);
});

test("no key in a table under 20 rows, in a float measurement, or in timestamps to the second", async () => {
  assert.deepEqual(keysOf(await analyzed(table(["city", "n"], 15, (i) => [`City ${i}`, i % 3]))), []);
  const floats = table(["temperature", "site"], 300, (i, rng) => [(10 + 20 * rng.next()).toFixed(4), i % 4]);
  assert.deepEqual(keysOf(await analyzed(floats)), []);
  const events = table(["at", "kind"], 300, (i, rng) => [new Date(Date.UTC(2020, 0, 1) + Math.floor(rng.next() * 3e9) * 1000).toISOString().slice(0, 19), i % 4]);
  assert.deepEqual(keysOf(await analyzed(events)), []);
});

test("the rule can be dropped with rules.drop, by id", async () => {
  assert.deepEqual(keysOf(await analyzed(daily, { drop: ["unique:date"] })), []);
});

/** Rows of a decoded table kept as a sample keeps them: batch by batch, fresh keys only, up to n. */
function sampleRows(meta: Metadata, n: number): string[][] {
  const keys = SampleKeys.of(meta)!;
  const out: string[][] = [];
  for (let b = 0; out.length < n && b < 40; b++) {
    const rows = new Decoder(meta).decode(independentCodes(meta, n, 11 + b), 13 + b).rows;
    const cells = rowCells(rows);
    const keep = keys.fresh(cells).slice(0, n - out.length);
    keys.add(cells, keep);
    for (const r of keep) out.push(rows[r]);
  }
  return out;
}

test("a daily series sampled at its real length repeats no date", async () => {
  const meta = await analyzed(daily);
  const rows = sampleRows(meta, daily.rows.length);
  assert.equal(rows.length, daily.rows.length);
  assert.equal(new Set(rows.map((r) => r[0])).size, rows.length);
  // Without the key's check, independent draws repeat dates.
  const raw = decodeIndependent(meta, daily.rows.length).rows;
  assert.ok(new Set(raw.map((r) => r[0])).size < raw.length);
});

test("a (region, year) grid sampled at its real length repeats no cell", async () => {
  const meta = await analyzed(grid);
  const rows = sampleRows(meta, grid.rows.length);
  assert.equal(rows.length, grid.rows.length);
  assert.equal(new Set(rows.map((r) => `${r[0]}|${r[1]}`)).size, rows.length);
});

test("fresh: a key repeated inside one batch keeps its first row; add records only the rows given", () => {
  const meta = { features: ["k", "x"], column_stats: {}, rules: [{ type: "unique", columns: ["k"], share: 1 }] } as unknown as Metadata;
  const keys = SampleKeys.of(meta)!;
  const cells = rowCells([["a", "1"], ["b", "2"], ["a", "3"], ["c", "4"]]);
  assert.deepEqual(keys.fresh(cells), [0, 1, 3]);
  keys.add(cells, [1]);
  assert.deepEqual(keys.fresh(cells), [0, 3]);
  assert.equal(SampleKeys.of({ ...meta, rules: [] }), undefined);
});

test("evaluate's rule share of a key: the share of rows whose key no earlier row holds", async () => {
  const meta = await analyzed(daily);
  const rule = meta.rules!.find((r) => r.type === "unique")!;
  const rows = [...daily.rows.slice(0, 8), daily.rows[0], daily.rows[1]];
  const [share] = ruleShares([rule], meta, { columns: daily.columns, rows });
  assert.deepEqual([share.applicable, share.kept], [10, 8]);
});
