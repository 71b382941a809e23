/**
 * The near-copy filter's structure (`src/sdk/privacy/filter.ts`, `src/sdk/privacy/masked-keys.ts`):
 * it flags every row `evaluate` counts as a near-copy, on categorical, point-binned, quantile-binned
 * and datetime columns with blanks, and few others; stored and loaded with its key it flags the
 * same rows, without the key it loads nothing, and its bytes hold no categorical value; the Bloom
 * filter has no false negatives and about its stated false-positive rate, within a capped size;
 * where near-copies are common in a table, it keeps them up to the split's share (of near-copies of a
 * half) in every prefix; `evaluate` compares cells as the filter does, whatever binning its TVDs use.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Rng, type Table } from "../src/sdk";
import { evaluate } from "../src/sdk/evaluate";
import { DataError } from "../src/sdk/errors";
import { FILTER_MAX_SPLIT_SHARE, NearCopyFilter, type FilterTally } from "../src/sdk/privacy/filter";
import { nearCopyRead } from "../src/sdk/privacy/near-copy-read";
import { MAX_FILTER_BITS, MaskedKeySet, ROW_FALSE_POSITIVE, bloomSize, rowSums } from "../src/sdk/privacy/masked-keys";
import { mix32 } from "../src/sdk/generate/sfc32";

const KEY = new Uint8Array(32).fill(3);

/** A real table of people: categories, small integers (point bins), amounts (quantile bins), dates, with blanks. */
function people(n: number, seed: number): Table {
  const rng = new Rng(seed);
  const towns = ["North Haven", "Oak Ridge", "Zanzibar Crossing", "Elm Park", "Mill Creek", "Fox Hollow", "Bay View", "Stone Gate"];
  const jobs = ["clerk", "nurse", "driver", "teacher", "cook", "welder"];
  const rows = Array.from({ length: n }, () => {
    const z = rng.int(4);
    const day = 1 + rng.int(3000);
    const date = new Date(Date.UTC(2001, 0, day)).toISOString().slice(0, 10);
    return [
      towns[(z * 2 + rng.int(3)) % towns.length],
      rng.next() < 0.05 ? "" : jobs[(z + rng.int(2)) % jobs.length],
      String(z * 2 + rng.int(4)),
      (1000 + z * 500 + rng.next() * 4000).toFixed(2),
      date,
      (40 + rng.next() * 80).toFixed(1),
    ];
  });
  return { columns: ["town", "job", "children", "income", "since", "weight"], rows };
}

/** Synthetic-looking rows: copies with 1 or 2 cells changed (numbers moved inside or outside their bin), unseen values, fresh rows. */
function probes(real: Table, n: number, seed: number): Table {
  const rng = new Rng(seed);
  const fresh = people(n, seed + 100).rows;
  const rows = Array.from({ length: n }, (_, i) => {
    const row = [...real.rows[rng.int(real.rows.length)]];
    const kind = i % 5;
    if (kind === 4) return fresh[i];
    const changes = kind === 0 ? 0 : kind === 1 ? 1 : 2;
    for (let c = 0; c < changes; c++) {
      const f = rng.int(6);
      if (f === 0) row[0] = rng.next() < 0.3 ? "Atlantis" : fresh[i][0];
      else if (f === 3) row[3] = (Number(row[3]) * (rng.next() < 0.5 ? 1.0001 : 1.5)).toFixed(2);
      else row[f] = fresh[i][f];
    }
    return row;
  });
  return { columns: real.columns, rows };
}

test("the filter flags every row evaluate counts as a near-copy, and few others", async () => {
  const real = people(600, 1);
  const built = await NearCopyFilter.build(real, {}, KEY);
  const filter = built.filter!;
  assert.ok(filter, built.reason);
  assert.deepEqual(filter.columns, real.columns);
  const synth = probes(real, 1000, 2);
  const flags = await filter.flags(synth);
  const pick = (v: number): Table => ({ columns: synth.columns, rows: synth.rows.filter((_, r) => flags[r] === v) });
  const flagged = pick(1);
  const clear = pick(0);
  assert.ok(flagged.rows.length > 200 && clear.rows.length > 200, `${flagged.rows.length} flagged of 1000`);
  // No false negatives: evaluate finds no near-copy among the rows the filter passes.
  assert.equal((await evaluate(real, clear)).near_copies!.synthetic_near_copies, 0);
  // Among the flagged rows, evaluate counts all but the Bloom filter's false positives.
  const counted = (await evaluate(real, flagged)).near_copies!.synthetic_near_copies;
  assert.ok(flagged.rows.length - counted <= 3, `${flagged.rows.length} flagged, ${counted} near-copies by evaluate`);
});


test("evaluate judges near-copies as the filter does, whatever binning its TVDs use, and leaves out the model's identifiers", async () => {
  const real = people(600, 1);
  const synth = probes(real, 1000, 2);
  const filter = (await NearCopyFilter.build(real, {}, KEY)).filter!;
  const flagged = (await filter.flags(synth)).reduce((s, v) => s + v, 0);
  const plain = (await evaluate(real, synth)).near_copies!;
  // Coarse TVD binning (a bench's 16 bins, every value its own category) must not widen what counts.
  const coarse = await evaluate(real, synth, { binCap: 2, categoryCap: 2, rareThreshold: 1 });
  assert.ok(coarse.tvd["2"] !== (await evaluate(real, synth)).tvd["2"], "the TVDs do take the binning");
  assert.deepEqual(coarse.near_copies, plain);
  assert.ok(flagged - plain.synthetic_near_copies >= 0 && flagged - plain.synthetic_near_copies <= 3, `${flagged} flagged, ${plain.synthetic_near_copies} counted`);
  // A model whose metadata types `town` an identifier: its filter and evaluate both leave it out.
  const metadata = { column_stats: { town: { type: "id" } } } as unknown as NonNullable<Parameters<typeof evaluate>[2]>["metadata"];
  const withIds = (await evaluate(real, synth, { metadata })).near_copies!;
  assert.deepEqual(withIds.columns, real.columns.slice(1));
  const noTown = (await NearCopyFilter.build(real, nearCopyRead({}, metadata), KEY)).filter!;
  assert.deepEqual(noTown.columns, withIds.columns);
  const flaggedNoTown = (await noTown.flags(synth)).reduce((s, v) => s + v, 0);
  assert.ok(withIds.synthetic_near_copies > plain.synthetic_near_copies, "one column fewer: more rows equal on all but one");
  assert.ok(flaggedNoTown - withIds.synthetic_near_copies >= 0 && flaggedNoTown - withIds.synthetic_near_copies <= 3, `${flaggedNoTown} flagged, ${withIds.synthetic_near_copies} counted`);
});
test("stored without its key and loaded with it, the filter flags the same rows; another key or damaged bytes are refused; no value is in the clear", async () => {
  const real = people(600, 3);
  const filter = (await NearCopyFilter.build(real, {}, KEY)).filter!;
  const bytes = filter.toBuffer();
  const loaded = NearCopyFilter.fromBuffer(bytes, KEY);
  const synth = probes(real, 500, 4);
  assert.deepEqual(await loaded.flags(synth), await filter.flags(synth));
  assert.equal(loaded.targetShare, filter.targetShare);
  assert.equal(loaded.rows, 600);
  assert.throws(() => NearCopyFilter.fromBuffer(bytes, new Uint8Array(32).fill(4)), (e: unknown) => e instanceof DataError && /another key/.test(e.message));
  assert.throws(() => NearCopyFilter.fromBuffer(bytes.subarray(0, bytes.length - 4), KEY), DataError);
  assert.throws(() => NearCopyFilter.fromBuffer(Buffer.from("town,job\n"), KEY), DataError);
  const unkeyed = (await NearCopyFilter.build(real)).filter!;
  assert.throws(() => unkeyed.toBuffer(), /without a secret key/, "a filter on the public in-memory key is never stored");
  assert.deepEqual(await unkeyed.flags(synth), await (await NearCopyFilter.build(real)).filter!.flags(synth), "and is the same filter every time");
  const text = bytes.toString("latin1");
  for (const v of ["Zanzibar Crossing", "North Haven", "nurse", "welder"]) assert.ok(!text.includes(v), `"${v}" is not in the stored filter`);
  // Numerical columns keep evaluate's bin edges (as the model's metadata does): at most 33 incomes of 600.
  assert.ok(real.rows.filter((r) => text.includes(`${Number(r[3])}`)).length <= 33, "no more incomes than bin edges");
});

test("drop mode: every near-copy dropped; common near-copies: kept at most at the split's share in every prefix, the other rows all kept", async () => {
  const real = people(600, 5);
  const strict = (await NearCopyFilter.build(real, {}, KEY)).filter!;
  assert.equal(strict.targetShare, 0, `split share ${strict.splitShare}`);
  const synth = probes(real, 800, 6);
  const flags = await strict.flags(synth);
  const tally = { kept: 0, near: 0 };
  const keep = await strict.keep(synth, tally);
  assert.deepEqual(keep, [...flags.keys()].filter((r) => flags[r] === 0));
  assert.equal(tally.near, 0);
  // A batch whose every row repeated a key reaches the filter empty: nothing kept, no error.
  assert.deepEqual(await strict.keep({ columns: synth.columns, rows: [] }, tally), []);

  // Five columns of 7 values: about 40% of the real rows nearly copy another.
  const rng = new Rng(7);
  const dense: Table = { columns: ["a", "b", "c", "d", "e"], rows: Array.from({ length: 400 }, () => [0, 1, 2, 3, 4].map(() => `x${rng.int(6) + rng.int(2)}`)) };
  const loose = (await NearCopyFilter.build(dense, {}, KEY)).filter!;
  assert.ok(loose.splitShare > FILTER_MAX_SPLIT_SHARE && loose.targetShare === loose.splitShare, `${loose.splitShare}`);
  const batch: Table = { columns: dense.columns, rows: Array.from({ length: 1000 }, (_, i) => (i % 3 === 0 ? ["new", "new", ...dense.rows[i % 400].slice(2)] : dense.rows[i % 400])) };
  const near = await loose.flags(batch);
  const t: FilterTally = { kept: 0, near: 0 };
  // Two batches of one sample: the tally carries over.
  const half = (from: number, to: number): Table => ({ columns: batch.columns, rows: batch.rows.slice(from, to) });
  const first = await loose.keep(half(0, 500), t);
  const rho = t.drawnNearHalf! / t.drawnNear!;
  assert.ok(rho > 0.3 && rho < 1, `share of near-copies of a real row that nearly copy one of half the rows: ${rho}`);
  let k = 0;
  let m = 0;
  for (const r of first) {
    k++;
    m += near[r];
    assert.ok(rho * m <= loose.targetShare * k + 1e-9, `prefix of ${k} rows holds ${m} near-copies`);
  }
  assert.ok(rho * m >= loose.targetShare * k - 1, `near-copies kept up to the share: ${m} of ${k}`);
  const kept = [...first, ...(await loose.keep(half(500, 1000), t)).map((r) => r + 500)];
  const others = [...near.keys()].filter((r) => near[r] === 0);
  assert.ok(others.length > 200);
  assert.ok(others.every((r) => kept.includes(r)), "a row that copies no real row is never dropped");
  assert.equal(t.kept, kept.length);
  assert.equal(t.near, kept.filter((r) => near[r] === 1).length);
  assert.ok((t.drawnNearHalf! / t.drawnNear!) * t.near <= loose.targetShare * t.kept + 1e-9);
  // `limit` stops the batch there.
  assert.equal((await loose.keep(batch, { kept: 0, near: 0 }, 10)).length, 10);
});

test("masked-key set: no false negatives, false positives near the stated rate, size capped", () => {
  const F = 10;
  const n = 20_000;
  const lanes = (rows: number, salt: number): Uint32Array => Uint32Array.from({ length: 2 * rows * F }, (_, i) => mix32(i * 0x9e3779b1 + salt));
  const real = lanes(n, 1);
  const set = MaskedKeySet.sized(n * F, F);
  set.addRows(real, rowSums(real, n, F), n, F);
  const back = set.flagRows(real, rowSums(real, n, F), n, F);
  assert.equal(back.reduce((a, b) => a + b, 0), n, "every real row is found");
  const others = lanes(100_000, 2);
  const fp = set.flagRows(others, rowSums(others, 100_000, F), 100_000, F).reduce((a, b) => a + b, 0) / 100_000;
  assert.ok(fp <= 2 * ROW_FALSE_POSITIVE, `row false-positive rate ${fp}`);
  assert.ok(set.falsePositiveRate() * F <= 2 * ROW_FALSE_POSITIVE, `${set.falsePositiveRate()}`);
  const { bits } = bloomSize(n * F, F);
  assert.ok(bits / (n * F) > 15 && bits / (n * F) < 25, `${bits / (n * F)} bits per key`);
  assert.equal(bloomSize(1e10, 15).bits, MAX_FILTER_BITS, "a table of a billion cells gets the capped size");
});
