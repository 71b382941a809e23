/**
 * Calibrated generation (src/model/calibrate.ts): bounded raking of a pool of rows to given
 * marginals, systematic sampling by the weights, and the generation path that combines them.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  buildTargets,
  calibrationMarginals,
  conditionalTargets,
  conditionCalibration,
  rakingWeights,
  rakingSweeps,
  sampleCalibrated,
  sampleRows,
  prepareInputs,
  systematicSample,
  Trainer,
  InputError,
  type CalibrationMarginal,
} from "../src/model";
import { fastConfig, mulberry32, TINY_META as META } from "./fixtures";

/** Weighted marginal of `m` over a pool (cell probabilities). */
function weighted(columns: Int32Array[], w: ArrayLike<number>, m: CalibrationMarginal): Float64Array {
  const out = new Float64Array(m.probs.length);
  let s = 0;
  for (let r = 0; r < columns[0].length; r++) {
    const c = m.g >= 0 ? columns[m.f][r] * m.kg + columns[m.g][r] : columns[m.f][r];
    out[c] += w[r];
    s += w[r];
  }
  return out.map((v) => v / s);
}

/** Total variation distance between two probability vectors. */
const tvd = (p: ArrayLike<number>, q: ArrayLike<number>): number => {
  let s = 0;
  for (let i = 0; i < p.length; i++) s += Math.abs(p[i] - q[i]);
  return s / 2;
};

/** A pool of M rows over TINY_META's features (K 2, 3, 2), drawn independently and uniformly. */
function uniformPool(M: number, seed: number): Int32Array[] {
  const u = mulberry32(seed);
  return [2, 3, 2].map((K) => Int32Array.from({ length: M }, () => Math.floor(u() * K)));
}

test("calibration marginals carry the given pairs (transposed to feature order) and every 1-way marginal", () => {
  const ms = calibrationMarginals(buildTargets(META));
  const pairs = ms.filter((m) => m.g >= 0).map((m) => [m.f, m.g]);
  assert.deepEqual(pairs.sort(), [[0, 1], [0, 2]]);
  assert.deepEqual(ms.slice(-3).map((m) => [m.f, m.g]), [[0, -1], [1, -1], [2, -1]], "1-way marginals come last");
  const ab = ms.find((m) => m.f === 0 && m.g === 1)!;
  assert.deepEqual(Array.from(ab.probs, (v) => +v.toFixed(6)), [0.2, 0, 0.3, 0, 0.3, 0.2]);
  // [c, a] = [[0.45, 0.25], [0.05, 0.25]] given c-major; as (a, c): [[0.45, 0.05], [0.25, 0.25]].
  const ac = ms.find((m) => m.f === 0 && m.g === 2)!;
  assert.deepEqual(Array.from(ac.probs, (v) => +v.toFixed(6)), [0.45, 0.05, 0.25, 0.25]);
});

test("conditional targets: the other features' 1-way marginals given one feature's allowed codes (weighted), from the given pairs", () => {
  const ms = calibrationMarginals(buildTargets(META));
  // (a, b) = [[0.2, 0, 0.3], [0, 0.3, 0.2]], (a, c) = [[0.45, 0.05], [0.25, 0.25]].
  const round = (t: CalibrationMarginal[]) => t.map((m) => [m.f, m.g, Array.from(m.probs, (v) => +v.toFixed(6))]);
  assert.deepEqual(round(conditionalTargets(ms, 0, [0], null)), [
    [1, -1, [0.4, 0, 0.6]],
    [2, -1, [0.9, 0.1]],
  ]);
  // b in {1, 2} with weights (1, 0.5): P(a | .) ∝ (0 + 0.15, 0.3 + 0.1); c has no pair with b.
  assert.deepEqual(round(conditionalTargets(ms, 1, [1, 2], [1, 0.5])), [[0, -1, [+(0.15 / 0.55).toFixed(6), +(0.4 / 0.55).toFixed(6)]]]);
});

test("condition calibration: every marginal without a condition, conditional targets for one feature, structural zeros only when significant", () => {
  const ms = calibrationMarginals(buildTargets(META));
  assert.equal(conditionCalibration(ms, [], 1000)?.targets.length, ms.length, "no condition: the calibrated draw");
  // a = 0 never has b = 1: with 1,000 rows independence would put 0.5 * 0.3 * 1000 = 150 there.
  const one = conditionCalibration(ms, [{ f: 0, codes: [0], weights: null }], 1000)!;
  assert.deepEqual(one.targets.map((m) => m.f), [1, 2]);
  assert.deepEqual(one.exclusions.map((e) => [e.f, Array.from(e.excluded)]), [[1, [0, 1, 0]]]);
  // With 50 rows it would be 7.5 < 10: an empty cell that small is not evidence.
  assert.deepEqual(conditionCalibration(ms, [{ f: 0, codes: [0], weights: null }], 50)!.exclusions, []);
  // Two fixed features: no targets (they would need 3-way marginals), the exclusions still hold;
  // a fixed feature's own values are never excluded.
  const two = conditionCalibration(ms, [{ f: 0, codes: [0], weights: null }, { f: 1, codes: [1], weights: null }], 1000);
  assert.equal(two, null, "b is fixed, so a = 0's zero on b = 1 excludes nothing");
  const ac = conditionCalibration(ms, [{ f: 0, codes: [0], weights: null }, { f: 2, codes: [0], weights: null }], 1000)!;
  assert.deepEqual(ac.targets, []);
  assert.deepEqual(ac.exclusions.map((e) => [e.f, Array.from(e.excluded)]), [[1, [0, 1, 0]]]);
});

test("raking from initial weights reaches the targets and keeps the initial tilt where the targets are silent", () => {
  const M = 6000;
  const pool = uniformPool(M, 4);
  const u = mulberry32(8);
  const initial = Float64Array.from({ length: M }, () => 0.5 + u());
  const target: CalibrationMarginal = { f: 1, g: -1, kg: 1, probs: Float64Array.from([0.5, 0.3, 0.2]) };
  const w = rakingWeights(pool, [target], { initial, bound: 50 });
  assert.ok(tvd(weighted(pool, w, target), target.probs) < 1e-9);
  // Within one cell of b, raking scales every row alike: the initial weights' ratios survive.
  const rows = [...Array(M).keys()].filter((r) => pool[1][r] === 0).slice(0, 2);
  assert.ok(Math.abs(w[rows[0]] / w[rows[1]] - initial[rows[0]] / initial[rows[1]]) < 1e-9);
  assert.throws(() => rakingWeights(pool, [target], { initial: new Float64Array(M) }), RangeError);
  assert.throws(() => rakingWeights(pool, [target], { initial: new Float64Array(3).fill(1) }), RangeError);
});

test("raking matches every given marginal on a pool that can carry them, with weights inside the bound", () => {
  const M = 6000;
  const pool = uniformPool(M, 1);
  const ms = calibrationMarginals(buildTargets(META));
  const bound = 4;
  const w = rakingWeights(pool, ms, { sweeps: 50, bound });
  assert.ok(Math.abs(w.reduce((s, v) => s + v, 0) - 1) < 1e-9);
  assert.ok(w.every((v) => v >= 0 && v <= bound / M + 1e-12), "no weight passes bound / M");
  for (const m of ms) assert.ok(tvd(weighted(pool, w, m), m.probs) < 1e-3, `marginal (${m.f}, ${m.g})`);
  // The uniform pool itself is far from them: raking did the work.
  const ab = ms.find((m) => m.f === 0 && m.g === 1)!;
  assert.ok(tvd(weighted(pool, new Float64Array(M).fill(1), ab), ab.probs) > 0.2);
});

test("raking moves mass out of cells whose target is 0, and a tight bound still moves toward the targets", () => {
  const M = 3000;
  const pool = uniformPool(M, 2);
  const ms = calibrationMarginals(buildTargets(META));
  const ab = ms.find((m) => m.f === 0 && m.g === 1)!;
  const zeroMass = (w: ArrayLike<number>): number => {
    let s = 0;
    for (let r = 0; r < M; r++) if (ab.probs[pool[0][r] * 3 + pool[1][r]] === 0) s += w[r];
    return s;
  };
  assert.ok(zeroMass(new Float64Array(M).fill(1 / M)) > 0.3, "a third of the uniform pool sits in the two empty cells");
  assert.ok(zeroMass(rakingWeights(pool, ms, { bound: 3 })) < 1e-3);
  // Bound 2 cannot carry all the targets on this pool: the compromise leaves a little there.
  assert.ok(zeroMass(rakingWeights(pool, ms)) < 0.1);
  const before = tvd(weighted(pool, new Float64Array(M).fill(1), ab), ab.probs);
  const tight = rakingWeights(pool, ms, { bound: 1.5 });
  assert.ok(tight.every((v) => v <= 1.5 / M + 1e-12));
  assert.ok(tvd(weighted(pool, tight, ab), ab.probs) < before - 0.1, "0.34 -> 0.20 on this pool");
});

test("raking sweep by sweep yields once per sweep and ends with the same weights", () => {
  const pool = uniformPool(500, 4);
  const ms = calibrationMarginals(buildTargets(META));
  const steps = rakingSweeps(pool, ms, { sweeps: 3 });
  const seen: number[] = [];
  let r = steps.next();
  while (!r.done) {
    seen.push(r.value);
    r = steps.next();
  }
  assert.deepEqual(seen, [1, 2, 3]);
  assert.deepEqual(r.value, rakingWeights(pool, ms, { sweeps: 3 }));
});

test("raking with no sweeps is uniform, and bad arguments are refused", () => {
  const pool = uniformPool(10, 3);
  const ms = calibrationMarginals(buildTargets(META));
  assert.ok(rakingWeights(pool, ms, { sweeps: 0 }).every((v) => Math.abs(v - 0.1) < 1e-15));
  assert.throws(() => rakingWeights([new Int32Array(0)], ms), RangeError);
  assert.throws(() => rakingWeights([new Int32Array(3), new Int32Array(2)], ms), RangeError);
  assert.throws(() => rakingWeights(pool, ms, { bound: 1 }), RangeError);
  assert.throws(() => rakingWeights(pool, ms, { sweeps: 1.5 }), RangeError);
  assert.throws(() => rakingWeights(pool, ms, { minRatio: 0 }), RangeError);
});

test("systematic sampling draws n distinct rows with inclusion probability n w_i, never a row of weight 0", () => {
  const w = [0.1, 0, 0.3, 0.05, 0.15, 0.2, 0, 0.2];
  const n = 3;
  const hits = new Float64Array(w.length);
  const U = 1000;
  for (let k = 0; k < U; k++) {
    const s = systematicSample(w, n, (k + 0.5) / U);
    assert.equal(s.length, n);
    assert.equal(new Set(s).size, n, "no row twice");
    for (const i of s) hits[i]++;
  }
  // pi = 3 w = [0.3, 0, 0.9, 0.15, 0.45, 0.6, 0, 0.6]: over an even grid of starts, exact to 1/U.
  w.forEach((v, i) => assert.ok(Math.abs(hits[i] / U - n * v) <= 1 / U + 1e-9, `row ${i}: ${hits[i] / U} vs ${n * v}`));
});

test("systematic sampling caps inclusion at 1, spreading the excess, and repeats rows only when it must", () => {
  // pi = [1.8, 0.1, 0.1] -> capped [1, 0.5, 0.5]: the heavy row always, once; the others by u.
  assert.deepEqual(Array.from(systematicSample([0.9, 0.05, 0.05], 2, 0.5)), [0, 2]);
  assert.deepEqual(Array.from(systematicSample([0.9, 0.05, 0.05], 2, 0.2)), [0, 1]);
  const few = systematicSample([0, 0.5, 0.5, 0], 5, 0.2);
  assert.equal(few.length, 5);
  assert.ok(Array.from(few).every((i) => i === 1 || i === 2), "only rows with weight are drawn");
  assert.throws(() => systematicSample([0, 0], 1, 0.5), RangeError);
  assert.throws(() => systematicSample([1], 0, 0.5), RangeError);
  assert.throws(() => systematicSample([1], 1, 1), RangeError);
});

test("calibrated generation: n rows in range, reproducible by seed, closer to the marginals than the plain draw", async () => {
  const tr = await Trainer.create({ id: "mdl_00000000000c", metadata: META, config: fastConfig(10), stepsPerEpoch: 5 });
  await tr.runEpoch();
  const model = tr.generator(true);
  const ms = calibrationMarginals(buildTargets(META));
  const n = 2000;
  const a = await sampleCalibrated(model, { numRows: n, seed: 11 }, 0, ms);
  const b = await sampleCalibrated(model, { numRows: n, seed: 11 }, 0, ms);
  const c = await sampleCalibrated(model, { numRows: n, seed: 12 }, 0, ms);
  assert.equal(a.seed, 11);
  assert.deepEqual(a.columns, b.columns);
  assert.notDeepEqual(a.columns, c.columns);
  a.columns.forEach((col, f) => {
    assert.equal(col.length, n);
    assert.ok(col.every((k) => k >= 0 && k < [2, 3, 2][f]));
  });
  const plain = await sampleRows(model, prepareInputs({ num_rows: n, seed: 11 }, 8, 3, 0));
  const ones = new Float64Array(n).fill(1);
  const err = (cols: Int32Array[]): number => ms.reduce((s, m) => s + tvd(weighted(cols, ones, m), m.probs), 0);
  assert.ok(err(a.columns) < err(plain) / 2, `calibrated ${err(a.columns)} vs plain ${err(plain)}`);
  await assert.rejects(sampleCalibrated(model, { numRows: 0 }, 0, ms), (e: unknown) => e instanceof InputError && e.param === "body.embedding.num_rows");
  // The thread is given back between pool blocks and after every raking sweep; an abort stops it.
  let yields = 0;
  await sampleCalibrated(model, { numRows: 100, seed: 1 }, 0, ms, { sweeps: 4, yieldFn: async () => void yields++ });
  assert.equal(yields, 1 + 4);
  await assert.rejects(sampleCalibrated(model, { numRows: 100 }, 0, ms, { shouldAbort: () => true }), /aborted/);
  tr.dispose();
});
