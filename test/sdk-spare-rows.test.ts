/**
 * What fills a sample's free keys once the near-copy filter stops (`src/sdk/generate/spare-rows.ts`)
 * and what the filter tells about the rows it drops (`src/sdk/privacy/filter.ts` `keep`'s options):
 * each row's distance to the real rows, and one row kept per key, a non-copy over a near-copy.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Metadata, Table } from "../src/sdk";
import { DecodedBatch } from "../src/sdk/generate/batch";
import { SpareRows } from "../src/sdk/generate/spare-rows";
import { SampleKeys } from "../src/sdk/generate/unique-keys";
import { NearCopyFilter, type FilterTally } from "../src/sdk/privacy/filter";
import { MarginalBalance } from "../src/sdk/privacy/marginal-balance";
import { analyzed } from "./rules-fixtures";

const KEY = new Uint8Array(32).fill(5);

test("keep: each row's distance to the real rows (0 a copy, 1 a near-copy, 2 neither), and of rows that share a key the non-copy is kept though a near-copy came first", async () => {
  // No two real rows are one column apart: the split has no near-copies, so every near-copy is dropped.
  const real: Table = {
    columns: ["a", "b", "c", "d"],
    rows: Array.from({ length: 40 }, (_, i) => [`a${i % 11}`, `b${i % 7}`, `c${i % 5}`, `d${i % 4}`]),
  };
  const filter = (await NearCopyFilter.build(real, {}, KEY)).filter!;
  assert.equal(filter.targetShare, 0);
  const batch: Table = {
    columns: real.columns,
    rows: [
      ["a0", "b0", "c0", "d0"], // real row 0
      ["a0", "b0", "c0", "d9"], // real row 0 but d
      ["a0", "b0", "c8", "d9"], // two columns from real row 0, farther from the others
      ["a1", "b1", "c9", "d9"],
      ["a2", "b2", "c9", "d9"],
    ],
  };
  // Rows 0 and 2 hold one key, rows 1, 3 and 4 another.
  const group = [0, 1, 0, 1, 1];
  const claimed = new Set<number>();
  const claim = (r: number): boolean => !claimed.has(group[r]) && (claimed.add(group[r]), true);
  let distance: number[] = [];
  const tally: FilterTally = { kept: 0, near: 0 };
  const kept = await filter.keep(batch, tally, Infinity, MarginalBalance.of(await analyzed(real)), { claim, onDistance: (d) => void (distance = [...d]) });
  assert.deepEqual(distance, [0, 1, 2, 2, 2]);
  assert.equal(kept.length, 2, `one row per key: ${kept}`);
  assert.ok(kept.includes(2), "the key's non-copy, not its copy drawn first");
  assert.ok(kept.includes(3) !== kept.includes(4), "one of the other key's two non-copies");
  assert.deepEqual(tally, { kept: 2, near: 0 });
});

/** A batch of (k, v) rows. */
function batchOf(rows: string[][]): DecodedBatch {
  return DecodedBatch.fromTable({ columns: ["k", "v"], rows });
}

test("spare rows: the farthest from the real rows written first, one per key the sample does not hold, in the order drawn", () => {
  const meta = { features: ["k", "v"], rules: [{ type: "unique", columns: ["k"] }], column_stats: {} } as unknown as Metadata;
  const pool = (): { spares: SpareRows; sample: SampleKeys } => {
    const sample = SampleKeys.of(meta)!;
    sample.add(batchOf([["k0", "written"]]));
    const spares = SpareRows.of(meta, 100)!;
    spares.offer(batchOf([["k1", "copy"], ["k2", "near"], ["k0", "far"], ["k3", "copy"]]), [0, 1, 2, 3], Uint8Array.of(0, 1, 2, 0), sample);
    // A later, farther row of k1 is kept beside its copy; a nearer one of k2 is not.
    spares.offer(batchOf([["k1", "far"], ["k2", "copy"], ["k4", "near"]]), [0, 1, 2], Uint8Array.of(2, 0, 1), sample);
    return { spares, sample };
  };
  const a = pool();
  assert.equal(a.spares.rows, 5, "k0 is the sample's; k2's copy comes after its near-copy");
  assert.deepEqual(a.spares.take(a.sample, 3, undefined, 4)!.toTable().rows, [["k2", "near"], ["k1", "far"], ["k4", "near"]]);
  assert.equal(a.spares.rows, 0, "taking empties the pool");
  const b = pool();
  assert.deepEqual(b.spares.take(b.sample, 10, undefined, 6)!.toTable().rows, [["k2", "near"], ["k3", "copy"], ["k1", "far"], ["k4", "near"]]);
  // Without distances (a filter that gives none) every row counts as a near-copy: the first of a key stays.
  const sample = SampleKeys.of(meta)!;
  const plain = SpareRows.of(meta, 100)!;
  plain.offer(batchOf([["k1", "x"], ["k1", "y"], ["k2", "z"]]), [0, 1, 2], undefined, sample);
  assert.deepEqual(plain.take(sample, 10, undefined, 2)!.toTable().rows, [["k1", "x"], ["k2", "z"]]);
  assert.equal(SpareRows.of({ ...meta, rules: [] }, 100), undefined, "no key, no spare rows");
});
