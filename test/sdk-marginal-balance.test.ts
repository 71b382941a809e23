/**
 * Which rows a filtered sample keeps (`src/sdk/privacy/marginal-balance.ts`): rows chosen by the
 * shortfall of their cells bring a skewed pool's categorical and binned-number marginals back to
 * the metadata's; through the near-copy filter, near-copies are still kept only up to the split's
 * share (read with the kept near-copies' own rho), every non-copy is kept, and the kept rows sit
 * nearer the model's marginals than rows kept in stream order.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Rng, type Table } from "../src/sdk";
import { MarginalBalance } from "../src/sdk/privacy/marginal-balance";
import { NearCopyFilter, type FilterTally } from "../src/sdk/privacy/filter";
import { analyzed } from "./rules-fixtures";

/** 1-way TVD of column `c` of `rows` against the same column of `real`. */
function tvd1(real: Table, rows: readonly string[][], c: number): number {
  const count = (rs: readonly string[][]): Map<string, number> => {
    const m = new Map<string, number>();
    for (const r of rs) m.set(r[c], (m.get(r[c]) ?? 0) + 1 / rs.length);
    return m;
  };
  const a = count(real.rows);
  const b = count(rows);
  let s = 0;
  for (const k of new Set([...a.keys(), ...b.keys()])) s += Math.abs((a.get(k) ?? 0) - (b.get(k) ?? 0));
  return s / 2;
}

test("rows chosen by the shortfall of their cells restore a skewed pool's marginals: categories and number bins", async () => {
  const rng = new Rng(1);
  const real: Table = {
    columns: ["kind", "amount"],
    rows: Array.from({ length: 2000 }, () => [rng.next() < 0.5 ? "x" : "y", (rng.next() * 1000).toFixed(2)]),
  };
  const meta = await analyzed(real);
  assert.ok(meta.column_stats?.amount.type === "numerical" && (meta.column_stats.amount.bin_edges?.length ?? 0) > 2, "amount is quantile-binned");
  const balance = MarginalBalance.of(meta)!;
  // A pool of 70% `x` and 70% amounts under 500.
  const pool: Table = {
    columns: ["kind", "amount"],
    rows: Array.from({ length: 3000 }, () => [rng.next() < 0.7 ? "x" : "y", (rng.next() < 0.7 ? rng.next() * 500 : 500 + rng.next() * 500).toFixed(2)]),
  };
  const cells = balance.cells(pool);
  const chosen = balance.choose(cells, [...pool.rows.keys()], 1000, 1000);
  assert.equal(chosen.length, 1000);
  assert.equal(new Set(chosen).size, 1000, "no row twice");
  const rows = chosen.map((r) => pool.rows[r]);
  const x = rows.filter((r) => r[0] === "x").length / rows.length;
  assert.ok(Math.abs(x - 0.5) < 0.02, `share of x ${x}`);
  const low = rows.filter((r) => Number(r[1]) < 500).length / rows.length;
  assert.ok(Math.abs(low - 0.5) < 0.05, `share of amounts under 500: ${low}`);
  const first = pool.rows.slice(0, 1000);
  assert.ok(first.filter((r) => r[0] === "x").length / 1000 > 0.65, "the first rows of the pool keep its skew");
  // A refused row is passed over; "stop" ends the choice.
  const again = MarginalBalance.of(meta)!;
  const some = again.choose(again.cells(pool), [...pool.rows.keys()], 100, 100, (r) => (r % 2 === 0 ? false : r > 2900 ? "stop" : true));
  assert.ok(some.length > 0 && some.every((r) => r % 2 === 1 && r <= 2900), `${some.length} rows`);
});

test("through the near-copy filter: near-copies kept up to the split's share, every non-copy kept, marginals nearer the model's than in stream order", async () => {
  // Five columns of 7 values: about 40% of the real rows nearly copy another (as the filter's own test).
  const rng = new Rng(7);
  const dense: Table = { columns: ["a", "b", "c", "d", "e"], rows: Array.from({ length: 400 }, () => [0, 1, 2, 3, 4].map(() => `x${rng.int(6) + rng.int(2)}`)) };
  const meta = await analyzed(dense);
  const filter = (await NearCopyFilter.build(dense, {}, new Uint8Array(32).fill(3))).filter!;
  assert.ok(filter.targetShare > 0, `split share ${filter.splitShare}: near-copies are thinned`);
  // A batch of rows new in two cells, then copies of real rows in the order of column a's value: stream
  // order keeps the first values' near-copies and drops the last ones'.
  const copies = [...dense.rows].sort((p, q) => (p[0] < q[0] ? -1 : p[0] > q[0] ? 1 : 0));
  const batch: Table = {
    columns: dense.columns,
    rows: Array.from({ length: 1200 }, (_, i) => (i < 400 ? ["new", "new", ...dense.rows[i].slice(2)] : copies[(i - 400) >> 1])),
  };
  const near = await filter.flags(batch);
  const balanced: FilterTally = { kept: 0, near: 0 };
  const kept = await filter.keep(batch, balanced, Infinity, MarginalBalance.of(meta));
  assert.deepEqual(kept, [...kept].sort((p, q) => p - q), "rows in stream order");
  for (const r of near.keys()) if (near[r] === 0) assert.ok(kept.includes(r), `non-copy ${r} kept`);
  assert.equal(balanced.near, kept.filter((r) => near[r] === 1).length);
  const rhoKept = (balanced.nearHalf ?? 0) / balanced.near;
  assert.ok(balanced.near > 100 && balanced.near < near.reduce((s, v) => s + v, 0), `${balanced.near} near-copies kept: some dropped`);
  assert.ok(rhoKept * balanced.near <= filter.targetShare * balanced.kept + 1e-9, `rho ${rhoKept} x ${balanced.near} near-copies of ${balanced.kept} rows`);
  const plain = await filter.keep(batch, { kept: 0, near: 0 });
  const keptCopies = (rows: number[]): string[][] => rows.filter((r) => near[r] === 1).map((r) => batch.rows[r]);
  const before = tvd1(dense, keptCopies(plain), 0);
  const after = tvd1(dense, keptCopies(kept), 0);
  assert.ok(after < before / 2, `column a of the near-copies kept: TVD ${after} chosen, ${before} in stream order`);
});

test("a number past either end of a binned column's range is read in the end bin, as the rule checks read it", async () => {
  const rng = new Rng(3);
  const real: Table = { columns: ["kind", "amount"], rows: Array.from({ length: 400 }, () => [rng.next() < 0.5 ? "x" : "y", (rng.next() * 1000).toFixed(2)]) };
  const meta = await analyzed(real);
  const edges = meta.column_stats?.amount.bin_edges ?? [];
  assert.ok(edges.length > 2, "amount is quantile-binned");
  const balance = MarginalBalance.of(meta)!;
  const batch: Table = { columns: ["kind", "amount"], rows: [["x", String(edges[0] - 1)], ["y", String(edges[edges.length - 1] + 1)], ["x", "not a number"]] };
  const cells = balance.cells(batch);
  // Targets: kind's 1-way, amount's 1-way, then the 2-way marginals.
  const T = cells.length / batch.rows.length;
  assert.equal(cells[0 * T + 1], 0, "below the range: the first bin");
  assert.equal(cells[1 * T + 1], edges.length - 2, "above the range: the last bin");
  assert.equal(cells[2 * T + 1], -1, "a cell that reads as no number has no cell");
});
