/**
 * Cell ranges (issue 40, docs/generality.md "Cell ranges"): a number drawn inside its quantile bin
 * stays inside the real range its row's category has in that bin. The table is made here: a
 * category `low` with values 10..69 and `high` with 1000..1059, three bins, so the middle bin
 * spans the top of `low` and the bottom of `high`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import typia from "typia";
import { Decoder, analyzeTable, type Table } from "../src/sdk";
import { writeTables } from "../src/sdk/io/formats";
import type { ColumnStats, CreateModelRequest, Metadata } from "../src/contract";

const validateCreate = typia.createValidateEquals<CreateModelRequest>();

/** Real range per category. */
const RANGES: Record<string, [number, number]> = { low: [10, 69], high: [1000, 1059] };

/** 60 rows of `low`, 60 of `high` (interleaved), then `extra` rows. */
function table(extra: [string, number][] = []): Table {
  const rows: string[][] = [];
  for (let i = 0; i < 60; i++) rows.push(["low", String(10 + i)], ["high", String(1000 + i)]);
  for (const [kind, x] of extra) rows.push([kind, String(x)]);
  return { columns: ["kind", "x"], rows };
}

/** The codes of the real rows decoded under `seed`: [kind, x] rows. */
function decodeReal(metadata: Metadata, codes: ArrayLike<number>[], seed: number): string[][] {
  return new Decoder(metadata).decode({ kind: codes[0], x: codes[1] }, seed).rows;
}

test("a number drawn in a bin spanning two categories stays inside its category's real range", async () => {
  const a = await analyzeTable(table(), { binCap: 3, rareThreshold: 2 });
  const st = a.metadata.column_stats!.x;
  const edges = st.bin_edges!;
  assert.ok(edges.some((e, i) => i + 1 < edges.length && e <= 69 && edges[i + 1] >= 1000), `a bin spans both ranges: ${edges}`);
  assert.equal(st.cell_ranges?.column, "kind");
  assert.equal(validateCreate({ metadata: a.metadata }).success, true, "the contract accepts cell_ranges");
  let outside = 0;
  let rows = 0;
  for (const seed of [0, 1, 2, 3]) {
    for (const [kind, v] of decodeReal(a.metadata, a.codes, seed)) {
      const [lo, hi] = RANGES[kind];
      const x = Number(v);
      assert.ok(Number.isInteger(x), `${v} is written on the column's lattice`);
      if (x < lo || x > hi) outside++;
      rows++;
    }
  }
  assert.equal(outside, 0, `${outside} of ${rows} synthetic values lie outside their category's real range`);

  // The column form writes what row-by-row decoding writes, with the same draws.
  const d = new Decoder(a.metadata);
  const { Rng, deriveSeed } = await import("../src/sdk/generate/sfc32");
  const column = d.decode({ kind: a.codes[0], x: a.codes[1] }, 5).rows.map((r) => r[1]);
  const rowRng = new Rng(deriveSeed(5, 1));
  const byRow = Array.from(a.codes[1], (c, r) => d.features[1].decode(c, rowRng, r, undefined, a.codes[0][r]));
  assert.ok(d.features[1].decodeColumn, "x has a column form");
  assert.deepEqual(column, byRow);

  // Row by row under a seeded range: inside the cell and the range.
  const lowCode = a.metadata.value_mappings!.kind.low;
  const mid = edges.findIndex((e, i) => e <= 69 && edges[i + 1] >= 1000);
  const restricted = d.restrict("x", { lo: 40 }, Number)!;
  const rng = new Rng(7);
  for (let i = 0; i < 200; i++) {
    const x = Number(d.features[1].decode(mid, rng, i, undefined, lowCode));
    assert.ok(x >= edges[mid] && x <= 69, `row decode: ${x}`);
    const y = Number(restricted.decoder.decode(mid, rng, i, undefined, lowCode));
    assert.ok(y >= Math.max(40, edges[mid]) && y <= 69, `seeded x >= 40: ${y}`);
  }
});

test("a cell under the rare threshold releases nothing, and its rows draw over the bin as before", async () => {
  // `mixed`: 8 rows in the top bin, 2 (600, 601) in the middle bin; k = 3.
  const extra: [string, number][] = [["mixed", 600], ["mixed", 601]];
  for (let i = 0; i < 8; i++) extra.push(["mixed", 1100 + i]);
  const a = await analyzeTable(table(extra), { binCap: 3, rareThreshold: 3 });
  const st: ColumnStats = a.metadata.column_stats!.x;
  const edges = st.bin_edges!;
  const mixed = a.metadata.value_mappings!.kind.mixed;
  const bin600 = edges.findIndex((e, i) => e <= 600 && 600 < edges[i + 1]);
  assert.ok(bin600 >= 0 && edges[bin600] < edges[bin600 + 1]);
  const cells = st.cell_ranges?.cells ?? [];
  assert.ok(cells.some(([c]) => c === mixed), "mixed's cell of 8 rows is released");
  assert.ok(!cells.some(([c, b]) => c === mixed && b === bin600), "mixed's cell of 2 rows is not");
  assert.ok(!cells.some(([, , lo, hi]) => [600, 601].includes(lo) || [600, 601].includes(hi)), "no value of the 2-row cell is released");
  for (const [kind, v] of decodeReal(a.metadata, a.codes, 0)) {
    if (kind in RANGES) assert.ok(Number(v) >= RANGES[kind][0] && Number(v) <= RANGES[kind][1], `${kind} ${v}`);
  }
});

test("a category independent of the number releases no cell ranges", async () => {
  // A shuffled category: any narrowing its cells gave would be chance, pulling draws toward real values.
  const rows: string[][] = [];
  for (let i = 0; i < 400; i++) rows.push([["red", "green", "blue"][(i * 7919) % 3], String((i * 104729) % 1000)]);
  const a = await analyzeTable({ columns: ["color", "x"], rows }, { rareThreshold: 2 });
  assert.ok(a.metadata.column_stats!.x.bin_edges, "x has quantile bins");
  assert.equal(a.metadata.column_stats!.x.cell_ranges, undefined);
});

test("in-memory, streamed CSV (worker threads, sampled) and Parquet extraction give equal cell ranges", async () => {
  const dir = mkdtempSync(join(tmpdir(), "cell-ranges-"));
  try {
    const t = table();
    // Shuffled rows so the sample holds both categories in every bin.
    t.rows.sort((p, q) => ((Number(p[1]) * 7919) % 113) - ((Number(q[1]) * 7919) % 113) || Number(p[1]) - Number(q[1]));
    const csv = join(dir, "t.csv");
    writeFileSync(csv, [t.columns.join(","), ...t.rows.map((r) => r.join(","))].join("\n") + "\n");
    const opts = { binCap: 3, rareThreshold: 2, sampleRows: 80 };
    const memory = await analyzeTable(t, opts);
    assert.ok(memory.sampledRows === 80, "the table is larger than the sample");
    assert.ok((memory.metadata.column_stats!.x.cell_ranges?.cells.length ?? 0) > 0, "cells are released");
    const threaded = await analyzeTable(csv, { ...opts, threads: 2 });
    assert.deepEqual(threaded.metadata.column_stats, memory.metadata.column_stats, "CSV on 2 worker threads");
    const parquet = join(dir, "t.parquet");
    await writeTables(parquet, (async function* () { yield t; })(), { format: "parquet", metadata: memory.metadata, rowGroupRows: 40 });
    const groups = await analyzeTable(parquet, { ...opts, threads: 2 });
    assert.deepEqual(groups.metadata.column_stats, memory.metadata.column_stats, "Parquet row groups on 2 worker threads");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a bin its row's category never holds is not drawn: the value moves to a bin the category holds", async () => {
  // Congresses and their dates: each of 8 terms holds 30 rows inside its own two years, so most
  // bins of the date belong to one term; a model that pairs a term with another term's bin (here:
  // codes drawn independently) would write a date outside the term.
  const rows: string[][] = [];
  for (let i = 0; i < 240; i++) {
    const term = i % 8;
    rows.push([`${101 + term}th`, String(1989 + 2 * term + ((i * 7) % 23) / 12)]);
  }
  const a = await analyzeTable({ columns: ["congress", "year"], rows }, { binCap: 24, rareThreshold: 2 });
  assert.equal(a.metadata.column_stats!.year.cell_ranges?.column, "congress");
  const { independentCodes } = await import("./rules-fixtures");
  const codes = independentCodes(a.metadata, 2000, 11);
  let outside = 0;
  for (const [congress, v] of new Decoder(a.metadata).decode(codes, 3).rows) {
    if (congress === "") continue;
    const lo = 1989 + 2 * (Number.parseInt(congress, 10) - 101);
    if (!(Number(v) >= lo && Number(v) < lo + 2)) outside++;
  }
  assert.equal(outside, 0, `${outside} of 2000 rows hold a year outside their congress's two years`);

  // A category of about two rows per held bin holds its bins by chance: its values are left as drawn.
  const { cellPartnerBins } = await import("../src/sdk/columns");
  const thin: string[][] = [];
  for (let i = 0; i < 240; i++) thin.push([`c${i % 60}`, String((i * 7919) % 1000)]);
  const t = await analyzeTable({ columns: ["c", "x"], rows: thin }, { binCap: 24, rareThreshold: 2 });
  const held = t.metadata.column_stats!.x.cell_ranges ? cellPartnerBins(t.metadata, "x") : undefined;
  assert.ok(!held || held.every((h) => h.bins.length === 0), "no code of 4 rows over 4 bins moves values");
});
