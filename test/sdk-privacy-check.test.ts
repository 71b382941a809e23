/**
 * The privacy check (`./dcr`, `./copies`) against brute force.
 *
 * Exact copies: a synthetic (or HOLDOUT) row is a copy when it equals some TRAIN row value for
 * value (trimmed text). `evaluate` counts them from the scans by 64-bit row hashes confirmed
 * column by column; these tests pin the counts on duplicates, rows one cell apart, blank cells,
 * and values holding the characters a joined text key would use as separators (U+0000, commas,
 * quotes), against a brute-force count over JSON-encoded rows.
 *
 * DCR: the scan skips repeated reference rows and reorders columns for an earlier exit; the
 * distances must still be the brute-force nearest-neighbour distances.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { type Table } from "../src/sdk";
import { evaluate, privacyCheck } from "../src/sdk/evaluate";
import { rowKeys } from "../src/sdk/privacy/copies";
import { privacyCheckWithDistances, sampleIndices } from "../src/sdk/privacy/dcr";
import { encodeTableWithScan } from "../src/sdk/metadata/metadata";
import { scanTable } from "../src/sdk/metadata/table-scan";
import { Rng, deriveSeed } from "../src/sdk/generate/sfc32";

/** Copies of `train`'s rows among `rows`, counted on the trimmed values (no hashing). */
function bruteForceCopies(train: Table, rows: string[][]): boolean[] {
  const key = (row: string[]) => JSON.stringify(row.map((v) => v.trim()));
  const set = new Set(train.rows.map(key));
  return rows.map((row) => set.has(key(row)));
}

test("exact copies: duplicates, one cell apart, blanks, padded values and separator characters in values", async () => {
  const columns = ["a", "b", "c"];
  const train: Table = {
    columns,
    rows: [
      ["x", "1", "p"],
      ["x", "1", "p"], // a duplicate TRAIN row
      ["x", "1", "q"], // one cell from the row above
      ["", "2", ""], // blank cells
      ["a\u0000", "b", "z"], // the old key's separator inside a value
      ["s,t", '"u"', "v w"],
    ],
  };
  const holdout: Table = {
    columns,
    rows: [
      ["x", "1", "p"], // copy
      ["x", "2", "p"], // one cell off
      ["", "2", ""], // copy (blanks)
      ["a", "\u0000b", "z"], // same text as TRAIN's "a\u0000","b" once joined with U+0000, but other values
    ],
  };
  const synth: Table = {
    columns,
    rows: [
      ["x", "1", "p"], // copy
      ["x", "1", "p"], // copy (duplicates each count)
      [" x ", "1", "p "], // copy: values are trimmed
      ["x", "1", "r"], // one cell off (a value TRAIN never has)
      ["", "2", ""], // copy
      ["", "", ""], // blank everywhere: no TRAIN row
      ["a", "\u0000b", "z"], // not a copy (see HOLDOUT)
      ["a\u0000", "b", "z"], // copy
      ["s,t", '"u"', "v w"], // copy
      ["s", 't,"u"', "v w"], // not: the comma moved to another cell
      ["1", "x", "p"], // not: values in other columns
      ["x", "1", "q"], // copy
    ],
  };
  const r = await evaluate(train, synth, { holdout });
  const p = r.privacy!;
  assert.equal(p.exact_copies_train, 7);
  assert.equal(p.exact_copies_train_rate, 7 / 12);
  assert.equal(p.exact_copies_train_at_holdout_size, 3, "the first 4 synthetic rows hold 3 copies");
  assert.equal(p.exact_copies_holdout_baseline, 2);
  assert.equal(p.exact_copies_holdout_baseline_rate, 2 / 4);
  // the same by brute force
  assert.equal(bruteForceCopies(train, synth.rows).filter(Boolean).length, 7);
  assert.equal(bruteForceCopies(train, holdout.rows).filter(Boolean).length, 2);
});

/** A random table over tiny alphabets, so rows repeat and many rows are one cell apart. */
function randomTable(rng: Rng, n: number): Table {
  const alphabet = ["", "a", " a", "a ", "b", "\u0000", "a\u0000", "\u0000a", ",", "a,b", '"', "1", "01", "1.0"];
  const rows: string[][] = [];
  for (let i = 0; i < n; i++) rows.push(Array.from({ length: 4 }, (_, f) => alphabet[rng.int(f === 3 ? 3 : alphabet.length)]));
  return { columns: ["w", "x", "y", "z"], rows };
}

test("exact copies equal a brute-force count on random tables with many repeats and near-repeats", async () => {
  const rng = new Rng(20240611);
  for (let round = 0; round < 4; round++) {
    const train = randomTable(rng, 1500 + 400 * round);
    const holdout = randomTable(rng, 700);
    const synth = randomTable(rng, 2500);
    const p = (await evaluate(train, synth, { holdout })).privacy!;
    const fromSynth = bruteForceCopies(train, synth.rows);
    const expected = fromSynth.filter(Boolean).length;
    assert.ok(expected > 0 && expected < synth.rows.length, `round ${round}: a mix of copies and non-copies (${expected})`);
    assert.equal(p.exact_copies_train, expected, `round ${round}`);
    assert.equal(p.exact_copies_train_at_holdout_size, fromSynth.slice(0, holdout.rows.length).filter(Boolean).length, `round ${round}`);
    assert.equal(p.exact_copies_holdout_baseline, bruteForceCopies(train, holdout.rows).filter(Boolean).length, `round ${round}`);
  }
});

test("privacyCheck counts the same copies from the scans as from collision-free string keys", async () => {
  const rng = new Rng(7);
  const train = randomTable(rng, 900);
  const holdout = randomTable(rng, 400);
  const synth = randomTable(rng, 1200);
  const { encoded, scanned } = await encodeTableWithScan(train, {});
  const hScan = await scanTable(holdout, 1);
  const sScan = await scanTable(synth, 1);
  // the codes only feed the DCR figures; any codes of the right shape do
  const codes = (n: number) => encoded.codes.map(() => new Int32Array(n));
  const json = (t: Table) => t.rows.map((row) => JSON.stringify(row.map((v) => v.trim())));
  const fromScans = privacyCheck(encoded.codes, codes(400), codes(1200), { train: scanned, holdout: hScan, synth: sScan, columns: encoded.columns });
  const fromKeys = privacyCheck(encoded.codes, codes(400), codes(1200), { train: json(train), holdout: json(holdout), synth: json(synth) });
  assert.deepEqual(fromScans, fromKeys);
  assert.ok(fromScans.exact_copies_train > 0);
  // rowKeys joins with U+0000, so values holding it can make different rows share a key; the scans do not
  const joined = privacyCheck(encoded.codes, codes(400), codes(1200), {
    train: rowKeys(scanned, encoded.columns),
    holdout: rowKeys(hScan, encoded.columns),
    synth: rowKeys(sScan, encoded.columns),
  });
  assert.ok(joined.exact_copies_train >= fromScans.exact_copies_train);
  assert.throws(() => privacyCheck(encoded.codes, codes(400), codes(1200), { train: scanned, holdout: hScan, synth: sScan, columns: ["w", "nope"] }), /no column "nope"/);
});

test("DCR distances are the brute-force nearest-neighbour distances, with repeated reference rows and skewed columns", () => {
  const rng = new Rng(99);
  // 6 columns: two nearly constant, one uniform over 40 codes, the rest over 3; many repeated rows
  const cards = [2, 40, 3, 2, 3, 3];
  const table = (n: number) =>
    cards.map((K, f) => Int32Array.from({ length: n }, () => (f === 0 || f === 3 ? (rng.next() < 0.9 ? 0 : 1) : rng.int(K))));
  const train = table(3000);
  const holdout = table(800);
  const synth = table(1500);
  const seed = 5;
  const sample = 300;
  const { check, distances } = privacyCheckWithDistances(train, holdout, synth, { train: [], holdout: [], synth: [] }, { seed, sample });
  const m = 800;
  const tRows = sampleIndices(3000, m, deriveSeed(seed, 1));
  const hRows = sampleIndices(800, m, deriveSeed(seed, 2));
  const sRows = sampleIndices(1500, sample, deriveSeed(seed, 3));
  const closest = (ref: Int32Array[], rows: Int32Array, s: number): number => {
    let best = Infinity;
    for (const r of rows) {
      let d = 0;
      for (let f = 0; f < cards.length; f++) if (ref[f][r] !== synth[f][s]) d++;
      best = Math.min(best, d);
    }
    return best;
  };
  let sumT = 0;
  let closer = 0;
  sRows.forEach((s, k) => {
    const dT = closest(train, tRows, s);
    const dH = closest(holdout, hRows, s);
    assert.equal(distances.train[k], dT, `synthetic row ${s} to TRAIN`);
    assert.equal(distances.holdout[k], dH, `synthetic row ${s} to HOLDOUT`);
    sumT += dT;
    closer += dT < dH ? 1 : dT === dH ? 0.5 : 0;
  });
  assert.equal(check.mean_dcr_train, sumT / sample);
  assert.equal(check.closer_to_train_share, closer / sample);
  assert.ok(sumT > 0, "some synthetic rows have no exact match");
});
