/**
 * The near-copy filter built streaming and within a row budget (`src/sdk/privacy/filter.ts`,
 * docs/extract.md "The near-copy filter within the bound"): a table read in chunks from memory or
 * from a CSV file by worker threads gives the same filter, every row of a table longer than a
 * chunk protected; with a budget below the table's rows, the filter protects exactly the bottom-k
 * sample of rows by (sampleRank(line), line) and says so, and a table larger than the tally's
 * sample gets the split share of its protected rows, measured against the half H; the stored file keeps the table's rows,
 * and a file written before that field still loads, protecting all its rows.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Rng, type Table } from "../src/sdk";
import { DataError } from "../src/sdk/errors";
import { NearCopyFilter } from "../src/sdk/privacy/filter";
import { nearCopyFlags, pack, splitNearCopyShare } from "../src/sdk/privacy/near-copies";
import { encodeTable } from "../src/sdk/metadata/metadata";
import { sampleRank } from "../src/sdk/metadata/csv-chunks";

const KEY = new Uint8Array(32).fill(5);

/** `n` rows of six loosely related columns: few real rows nearly copy another. */
function people(n: number, seed: number): Table {
  const rng = new Rng(seed);
  const rows = Array.from({ length: n }, () => {
    const z = rng.int(5);
    return [`town${z * 3 + rng.int(4)}`, `job${rng.int(12)}`, String(z + rng.int(6)), (800 + z * 300 + rng.next() * 3000).toFixed(2), `team${rng.int(20)}`, String(18 + rng.int(60))];
  });
  return { columns: ["town", "job", "children", "income", "team", "age"], rows };
}

const ones = (flags: Uint8Array): number => flags.reduce((s, v) => s + v, 0);

test("streamed: a table from memory and its CSV file read by worker threads give the same filter; rows past a chunk are protected", async () => {
  const real = people(70_000, 1);
  const dir = mkdtempSync(join(tmpdir(), "synthd-filter-stream-"));
  try {
    const file = join(dir, "people.csv");
    writeFileSync(file, [real.columns.join(","), ...real.rows.map((r) => r.join(","))].join("\n") + "\n");
    const fromTable = (await NearCopyFilter.build(real, {}, KEY)).filter!;
    const fromFile = (await NearCopyFilter.build(file, {}, KEY, { threads: 2 })).filter!;
    assert.ok(fromTable && fromFile);
    assert.equal(fromTable.rows, 70_000);
    assert.equal(fromTable.tableRows, 70_000);
    assert.equal(fromTable.sampleNote(), undefined, "a table within the budget is protected whole, and nothing is said");
    assert.ok(fromFile.toBuffer().equals(fromTable.toBuffer()), "the same header and Bloom filters");
    // Rows about the first chunk's end (65,536 rows) and the last ones are all in the filter.
    const probe: Table = { columns: real.columns, rows: [...real.rows.slice(65_530, 65_545), ...real.rows.slice(-10)] };
    assert.equal(ones(await fromTable.flags(probe)), probe.rows.length);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a budget below the table's rows: the filter protects exactly the bottom-k sample of rows by line, and says so", async () => {
  const real = people(600, 2);
  const k = 50;
  const built = await NearCopyFilter.build(real, {}, KEY, { maxRows: k });
  const filter = built.filter!;
  assert.ok(filter, built.reason);
  assert.equal(filter.rows, k);
  assert.equal(filter.tableRows, 600);
  assert.match(filter.sampleNote()!, /protects a sample of 50 of the table's 600 real rows/);
  // The sample, independently: the k smallest (rank, line); an in-memory table's row r is line r + 2.
  const inSample = new Uint8Array(real.rows.length);
  for (const r of bottomK(real.rows.length, k)) inSample[r] = 1;
  const flags = await filter.flags(real);
  assert.ok(real.rows.every((_, r) => inSample[r] === 0 || flags[r] === 1), "every sampled row is protected");
  // Any other real row is flagged exactly when it nearly copies a sampled row (codes of the whole table, as the filter's).
  const { codes } = await encodeTable(real);
  const others = real.rows.map((_, r) => r).filter((r) => inSample[r] === 0);
  const sampled = real.rows.map((_, r) => r).filter((r) => inSample[r] === 1);
  const near = nearCopyFlags(pack(codes, others), others.length, pack(codes, sampled), sampled.length, codes.length);
  const flaggedOthers = others.filter((r) => flags[r] === 1).length;
  assert.ok(others.every((r, i) => near[i] === 0 || flags[r] === 1), "no false negative");
  assert.ok(flaggedOthers - ones(near) <= 2, `${flaggedOthers} other rows flagged, ${ones(near)} near-copies of the sample`);
  assert.ok(flaggedOthers < 100, `the rows outside the sample are not protected: ${flaggedOthers} of 550 flagged`);
  await assert.rejects(NearCopyFilter.build(real, {}, KEY, { maxRows: 1 }), RangeError);
});

/** The in-memory table's rows (line r + 2) in the bottom-`k` sample by (sampleRank(line), line). */
function bottomK(n: number, k: number): number[] {
  const order = Array.from({ length: n }, (_, r) => r).sort((a, b) => sampleRank(a + 2) - sampleRank(b + 2) || a - b);
  return order.slice(0, k).sort((a, b) => a - b);
}

test("a table larger than the tally's sample: the split share of its protected rows, measured against H, is evaluate's within noise", async () => {
  // Six columns of 8 values: about a quarter of the rows nearly copy one of half the others.
  const rng = new Rng(7);
  const dense: Table = { columns: ["a", "b", "c", "d", "e", "f"], rows: Array.from({ length: 4000 }, () => [0, 1, 2, 3, 4, 5].map(() => `x${rng.int(7) + rng.int(2)}`)) };
  const filter = (await NearCopyFilter.build(dense, {}, KEY, { maxRows: 3000 })).filter!;
  assert.ok(filter);
  assert.equal(filter.rows, 3000);
  const { codes } = await encodeTable(dense);
  const rows = bottomK(4000, 3000);
  const exact = splitNearCopyShare(codes.map((c) => Int32Array.from(rows, (r) => c[r])), { splits: 3 });
  assert.ok(exact > 0.15, `${exact}`);
  assert.ok(Math.abs(filter.splitShare - exact) < 0.05, `measured ${filter.splitShare}, evaluate's ${exact}`);
  assert.equal(filter.targetShare, filter.splitShare, "common near-copies: thinned to the split's share");
});

/** `buf` with its header JSON replaced by `edit(header)` (padding and Bloom words kept). */
function withHeader(buf: Buffer, edit: (h: Record<string, unknown>) => Record<string, unknown>): Buffer {
  const len = buf.readUInt32LE(8);
  const at = 12 + len;
  const words = buf.subarray(at + ((4 - (at % 4)) % 4));
  const json = Buffer.from(JSON.stringify(edit(JSON.parse(buf.subarray(12, at).toString("utf8")))), "utf8");
  const head = Buffer.alloc(12);
  buf.copy(head, 0, 0, 8);
  head.writeUInt32LE(json.length, 8);
  const pad = Buffer.alloc((4 - ((12 + json.length) % 4)) % 4);
  return Buffer.concat([head, json, pad, words]);
}

test("stored: the table's rows round-trip; a file written before the field loads as protecting all its rows; an inconsistent one is refused", async () => {
  const real = people(600, 3);
  const filter = (await NearCopyFilter.build(real, {}, KEY, { maxRows: 80 })).filter!;
  const bytes = filter.toBuffer();
  const loaded = NearCopyFilter.fromBuffer(bytes, KEY);
  assert.equal(loaded.rows, 80);
  assert.equal(loaded.tableRows, 600);
  assert.equal(loaded.sampleNote(), filter.sampleNote());
  assert.deepEqual(await loaded.flags(real), await filter.flags(real));

  const whole = (await NearCopyFilter.build(real, {}, KEY)).filter!;
  const old = NearCopyFilter.fromBuffer(withHeader(whole.toBuffer(), ({ table_rows: _, ...h }) => h), KEY);
  assert.equal(old.rows, 600);
  assert.equal(old.tableRows, 600);
  assert.equal(old.sampleNote(), undefined);
  assert.deepEqual(await old.flags(real), await whole.flags(real));
  assert.throws(() => NearCopyFilter.fromBuffer(withHeader(bytes, (h) => ({ ...h, table_rows: 10 })), KEY), DataError);
});
