/**
 * The raking of calibrated generation in the native core (native/src/calibrate.{h,cc},
 * src/model/calibrate-native.ts) against its TypeScript reference (`calibrate.ts` `rakingSweeps`):
 * the same weights bit for bit on pools with zero-target cells, tight bounds, initial weights,
 * several blocks of rows and wide codes; the same errors; the same weights for any thread count and
 * ISA; and calibrated generation that dispatches to it, with the same rows for a seed on every ISA
 * path; the draws' columns as views of one array (`packedColumns`) and the gather of the picked
 * rows (`gatherRows`). Requires the addon (`node native/build.js`).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { calibrationMarginals, CALIBRATION_EXACT_SWEEPS, CALIBRATION_POOL_FACTOR, CALIBRATION_ROWS_PER_LATENT, CALIBRATION_SWEEPS, RAKING_BLOCK_ROWS, rakingSweeps, rakingWeights, systematicSample, type CalibrationMarginal, type RakingOptions } from "../src/model/sampling/calibrate";
import { drawRequest } from "../src/model/sampling/draws";
import { drawInputs, releaseInputs } from "../src/model/sampling/inputs";
import { forwardLogits, sampleRows, sampleRowsPerLatent } from "../src/model/sampling/sample-rows";
import { gatherRows, packedColumns, sampleCalibrated } from "../src/model/sampling/calibrated-draw";
import { sampleCodes } from "../src/model/sampling/sampling";
import { buildTargets } from "../src/model/generator/targets";
import { Rng } from "../src/model/sampling/xoshiro";
import type { GeneratorModel } from "../src/model/generator/model";
import { nativeRakingClass, nativeRakingSweeps, RAKING_SLICE_ROW_VISITS } from "../src/model/compute/calibrate-native";
import { NATIVE_GENERATE_CHUNK } from "../src/model/compute/native-generator";
import { nativeCoreStatus } from "../src/model/compute/native-core";
import { mulberry32, TINY_META } from "./fixtures";
import { calibratedCase, drain, hashOf, poolHash, rakingCase, skewedPool } from "./native-calibrate-fixtures";

const FIXTURES = join(__dirname, "native-calibrate-fixtures.js");

/** Native weights for the problem; fails the test when the addon has no raking core. */
function native(pool: Int32Array[], ms: readonly CalibrationMarginal[], opts: RakingOptions = {}): Float64Array {
  const g = nativeRakingSweeps(pool, ms, opts);
  assert.ok(g, "the addon has a raking core (rebuild with `node native/build.js`)");
  return drain(g);
}

/** The first index where a and b differ bit for bit ("" when none does). */
function firstDifference(a: Float64Array, b: Float64Array): string {
  if (a.length !== b.length) return `lengths ${a.length} and ${b.length}`;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return `weight ${i}: native ${a[i]}, reference ${b[i]}`;
  return "";
}

/** Asserts native === reference bit for bit, and returns the weights. */
function same(pool: Int32Array[], ms: readonly CalibrationMarginal[], opts: RakingOptions = {}, what = ""): Float64Array {
  const ref = rakingWeights(pool, ms, opts);
  assert.equal(firstDifference(native(pool, ms, opts), ref), "", what);
  return ref;
}

/** A pool of M rows over TINY_META's features (K 2, 3, 2), drawn independently and uniformly (calibrate.test.ts). */
function uniformPool(M: number, seed: number): Int32Array[] {
  const u = mulberry32(seed);
  return [2, 3, 2].map((K) => Int32Array.from({ length: M }, () => Math.floor(u() * K)));
}

test("native raking gives the reference's weights bit for bit on calibrate.test.ts's pools: zero-target cells, tight bounds", () => {
  const ms = calibrationMarginals(buildTargets(TINY_META));
  const zeroCell = ms.find((m) => m.f === 0 && m.g === 1)!;
  assert.ok(zeroCell.probs.some((p) => p === 0), "the (a, b) pair has cells with target 0");
  for (const [M, seed] of [[3000, 2], [6000, 1], [500, 4], [10, 3]]) {
    const pool = uniformPool(M, seed);
    for (const bound of [1.5, 2, 3, 4, 50]) same(pool, ms, { bound }, `M ${M}, bound ${bound}`);
    same(pool, ms, { sweeps: 50, bound: 4 }, `M ${M}, 50 sweeps`);
    same(pool, ms, { sweeps: 0 }, `M ${M}, no sweeps`);
    for (const exactSweeps of [0, 1, 3, 20]) same(pool, ms, { sweeps: 4, exactSweeps, bound: 1.5 }, `M ${M}, ${exactSweeps} exact sweeps`);
    for (const minRatio of [1, 0.5, 0.01, 1e-6]) same(pool, ms, { minRatio, bound: 1.2 }, `M ${M}, minRatio ${minRatio}`);
  }
});

test("native raking gives the reference's weights bit for bit over several blocks of rows, with large sparse tables", () => {
  const { pool, marginals } = rakingCase();
  assert.ok(pool[0].length > 2 * RAKING_BLOCK_ROWS && pool[0].length % RAKING_BLOCK_ROWS !== 0, "three blocks, the last partial");
  assert.ok(marginals.some((m) => m.probs.length >= 8500) && marginals.some((m) => m.probs.filter((p) => p === 0).length > 1000));
  for (const bound of [1.05, 1.5, 2]) same(pool, marginals, { bound }, `bound ${bound}`);
  // Sweeps that clip without spreading (the calibrated draw's first three of four), and none exact.
  for (const exactSweeps of [0, 1]) same(pool, marginals, { sweeps: 3, exactSweeps }, `${exactSweeps} of 3 sweeps exact`);
  // On the calling thread alone (the calibrated draw's raking).
  same(pool, marginals, { sweeps: 3, exactSweeps: 1, parallel: false }, "not parallel");
  // A bound no weight reaches: no step clips, so every step takes its own cell sums.
  same(pool, marginals, { bound: 1e9, sweeps: 3 }, "no clipping");
  // One row more than a block, and exactly one block.
  for (const M of [RAKING_BLOCK_ROWS + 1, RAKING_BLOCK_ROWS]) same(rakingCase(M).pool, marginals, { sweeps: 2 }, `M ${M}`);
});

test("native raking from initial weights matches the reference, with and without a block boundary", () => {
  for (const M of [6000, 40_000]) {
    const { pool, marginals } = rakingCase(M);
    const u = mulberry32(M);
    const initial = Float64Array.from({ length: M }, () => 0.5 + u());
    same(pool, marginals, { initial, bound: 3 }, `M ${M}, Float64Array`);
    same(pool, marginals, { initial: Array.from(initial), sweeps: 2, bound: 50 }, `M ${M}, number[]`);
    // Zeros and a weight far above the rest: the conditional draw's importance weights look so.
    initial.fill(0, 0, 100);
    initial[M - 1] = 1e6;
    same(pool, marginals, { initial, bound: Math.max(M / 1000, 1 + 1e-9) }, `M ${M}, skewed initial`);
  }
});

test("native raking matches the reference when no pool row reaches a marginal, and with codes wider than a byte", () => {
  const M = 3000;
  const pool = skewedPool(M, [4, 3], 9);
  pool[0].fill(0);
  // Every target on codes the pool never has: nothing reachable, the step is skipped.
  const unreachable: CalibrationMarginal = { f: 0, g: -1, kg: 1, probs: Float64Array.from([0, 0.5, 0.5, 0]) };
  const other: CalibrationMarginal = { f: 1, g: -1, kg: 1, probs: Float64Array.from([0.2, 0.3, 0.5]) };
  same(pool, [unreachable, other, unreachable], { bound: 1.5 }, "unreachable");
  same(pool, [unreachable], {}, "only unreachable");
  same(pool, [], { sweeps: 3 }, "no marginals");
  // 300 and 70,000 codes: the core stores codes in 2 and 4 bytes.
  for (const K of [300, 70_000]) {
    const wide = skewedPool(M, [K, 3], K);
    const u = mulberry32(K + 1);
    const probs = Float64Array.from({ length: K * 3 }, () => (u() < 0.3 ? 0 : u()));
    const s = probs.reduce((a, b) => a + b, 0);
    const m: CalibrationMarginal = { f: 0, g: 1, kg: 3, probs: probs.map((p) => p / s) };
    same(wide, [m, other], { bound: 1.5 }, `K ${K}`);
  }
  // A table of 2^21 cells over three blocks of rows: more partial sums than the core holds at once
  // (kMaxWaveDoubles, calibrate.h), so it sums the blocks in waves, in the same order.
  const big = skewedPool(2 * RAKING_BLOCK_ROWS + 500, [2048, 1024, 3], 21);
  const u = mulberry32(22);
  const probs = Float64Array.from({ length: 2048 * 1024 }, () => (u() < 0.5 ? 0 : u()));
  const s = probs.reduce((a, b) => a + b, 0);
  const table: CalibrationMarginal = { f: 0, g: 1, kg: 1024, probs: probs.map((p) => p / s) };
  const third: CalibrationMarginal = { f: 2, g: -1, kg: 1, probs: Float64Array.from([0.2, 0.3, 0.5]) };
  same(big, [table, third], { sweeps: 2, bound: 1.5 }, "waves");
});

test("native raking refuses what the reference refuses, and codes outside a marginal's table", () => {
  const ms = calibrationMarginals(buildTargets(TINY_META));
  const pool = uniformPool(10, 3);
  const cases: [Int32Array[], RakingOptions][] = [
    [[new Int32Array(0)], {}],
    [[new Int32Array(3), new Int32Array(2)], {}],
    [pool, { bound: 1 }],
    [pool, { sweeps: 1.5 }],
    [pool, { minRatio: 0 }],
    [pool, { exactSweeps: -1 }],
    [pool, { initial: new Float64Array(10) }],
    [pool, { initial: new Float64Array(3).fill(1) }],
  ];
  for (const [p, opts] of cases) {
    let message = "";
    assert.throws(() => rakingWeights(p, ms, opts), (e: unknown) => e instanceof RangeError && (message = e.message) !== "");
    assert.throws(() => native(p, ms, opts), (e: unknown) => e instanceof RangeError && e.message === message, message);
  }
  const bad = uniformPool(10, 3);
  bad[1][7] = 3; // b has 3 codes
  assert.throws(() => native(bad, ms), /columns\[1\] holds code 3, outside the table's \[0, 3\)/);
  bad[1][7] = -1;
  assert.throws(() => native(bad, ms), /holds code -1/);
  // The addon's class itself: weights only once every step ran; nothing after dispose.
  const Raking = nativeRakingClass()!;
  const core = new Raking(pool, ms, 2, 2, 0.1, RAKING_BLOCK_ROWS, null);
  assert.equal(core.stepsTotal(), 2 * ms.length);
  assert.throws(() => core.weights(), /steps are left/);
  assert.equal(core.run(1), 1);
  assert.equal(core.run(100), 2 * ms.length);
  assert.equal(firstDifference(core.weights(), rakingWeights(pool, ms, { sweeps: 2 })), "");
  core.dispose();
  assert.throws(() => core.run(1), /disposed/);
  assert.throws(() => new Raking(pool, [{ ...ms[0], kg: 0 }], 1, 2, 0.1, 4096, null), RangeError);
  assert.throws(() => new Raking(pool, ms, 1, 2, 0.1, 0, null), RangeError);
  assert.throws(() => new Raking([Float64Array.from([1]) as unknown as Int32Array], ms, 1, 2, 0.1, 4096, null), TypeError);
});

test("native raking yields at least once per sweep and in slices of a large pool's sweep, ending with the same weights", () => {
  const ms = calibrationMarginals(buildTargets(TINY_META));
  const small = uniformPool(500, 4);
  const seen: number[] = [];
  const g = nativeRakingSweeps(small, ms, { sweeps: 3 })!;
  let r = g.next();
  while (!r.done) {
    seen.push(r.value);
    r = g.next();
  }
  assert.deepEqual(seen, [1, 2, 3], "a small pool: one slice per sweep, as the reference");
  assert.equal(firstDifference(r.value, drain(rakingSweeps(small, ms, { sweeps: 3 }))), "");
  // A pool whose sweep is more than one slice: several yields per sweep, the last one whole.
  const M = RAKING_SLICE_ROW_VISITS / 8; // a slice of 8 steps, 21 marginals: 3 slices per sweep
  const { pool, marginals } = rakingCase(M);
  const values: number[] = [];
  const big = nativeRakingSweeps(pool, marginals, { sweeps: 2 })!;
  let s = big.next();
  while (!s.done) {
    values.push(s.value);
    s = big.next();
  }
  const perSweep = Math.ceil(marginals.length / Math.floor(RAKING_SLICE_ROW_VISITS / M));
  assert.equal(values.length, 2 * perSweep);
  assert.equal(values[perSweep - 1], 1);
  assert.equal(values.at(-1), 2);
  assert.ok(values.every((v, i) => i === 0 || v > values[i - 1]));
  // Abandoned early: return() frees the core's copy, and the generator is done.
  const early = nativeRakingSweeps(pool, marginals)!;
  early.next();
  assert.deepEqual(early.return(new Float64Array(0)).done, true);
});

/** Runs the fixtures' child entry with `env` and parses its JSON line. */
function child(cmd: "raking" | "calibrated", env: Record<string, string>): Record<string, string | number> {
  const r = spawnSync(process.execPath, [FIXTURES, cmd], { env: { ...process.env, ...env }, encoding: "utf8", timeout: 120_000 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout.trim().split("\n").pop()!) as Record<string, string | number>;
}

/** The ISA paths this CPU has (SYNTHD_ISA values a child can run). */
function isaPaths(): string[] {
  const detected = nativeCoreStatus().info!.detectedIsa;
  return detected === "avx512" ? ["generic", "avx2", "avx512"] : detected === "avx2" ? ["generic", "avx2"] : ["generic"];
}

test("native raking gives the same bits for 1, 2 and 3 threads and on every ISA path (the reference's)", () => {
  const { pool, marginals } = rakingCase();
  const want = hashOf([rakingWeights(pool, marginals, { bound: 1.5 })]);
  for (const t of ["1", "2", "3"]) {
    const r = child("raking", { SYNTHD_THREADS: t });
    assert.equal(r.threads, Number(t));
    assert.equal(r.hash, want, `${t} threads`);
  }
  for (const isa of isaPaths()) {
    const r = child("raking", { SYNTHD_ISA: isa });
    assert.equal(r.isa, isa);
    assert.equal(r.hash, want, `SYNTHD_ISA=${isa}`);
  }
});

/**
 * What `sampleCalibrated` documents, with the TypeScript raking: pool blocks from `seed` and the
 * stream's next uint32s, `rakingWeights`, the systematic sample's start, then the Fisher–Yates
 * shuffle, all from one stream seeded with `seed`.
 */
async function referenceCalibrated(model: GeneratorModel, n: number, seed: number, marginals: CalibrationMarginal[]): Promise<Int32Array[]> {
  // The pool without the core's several-draws kernel: the plain draw's logits (forwardLogits),
  // sampled once with its uniforms and once per further set (sampleCodes).
  const rng = Rng.fromSeed(seed);
  const E = model.spec.embeddingDim;
  const F = model.layout.features.length;
  const K = model.layout.cardinalities;
  // L latents (the plain draw of L rows), CALIBRATION_ROWS_PER_LATENT rows each.
  const R = CALIBRATION_ROWS_PER_LATENT;
  const L = Math.ceil((CALIBRATION_POOL_FACTOR * n) / R);
  const inputs = drawInputs({ numRows: L, seed }, E, F, 0);
  const logits = forwardLogits(model, inputs.latents, L);
  const sets = [inputs.uniforms];
  for (let k = 1; k < R; k++) {
    const u = new Float64Array(L * F);
    drawRequest({ seed: rng.nextUint32(), rows: L, latents: new Float32Array(0), drawLatents: false, sigma: 0, uniforms: u });
    sets.push(u);
  }
  const pool = K.map(() => new Int32Array(R * L));
  sets.forEach((u, k) => {
    const codes = sampleCodes(logits, L, K, u, { temperature: 1, topP: null });
    for (let f = 0; f < F; f++) pool[f].set(codes.subarray(f * L, (f + 1) * L), k * L);
  });
  const picked = systematicSample(rakingWeights(pool, marginals, { sweeps: CALIBRATION_SWEEPS, exactSweeps: CALIBRATION_EXACT_SWEEPS }), n, rng.uniform());
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rng.uniform() * (i + 1));
    [picked[i], picked[j]] = [picked[j], picked[i]];
  }
  return pool.map((c) => Int32Array.from(picked, (r) => c[r]));
}

test("calibrated generation on a native model rakes in the core: the rows of the reference raking, yielding per sweep, same rows for a seed on every ISA path", async () => {
  const { model, marginals, n } = calibratedCase();
  try {
    const a = await sampleCalibrated(model, { numRows: n, seed: 5 }, 0, marginals);
    assert.deepEqual(a.columns, await referenceCalibrated(model, n, 5, marginals), "the rows of the TypeScript raking");
    let yields = 0;
    const sliced = await sampleCalibrated(model, { numRows: n, seed: 5 }, 0, marginals, { yieldFn: async () => void yields++ });
    assert.deepEqual(sliced.columns, a.columns, "yielding changes nothing");
    // Between the generator's chunks of the pool (one forward pass for all its rows), after the
    // pool, then once per sweep (this pool's sweep is one slice).
    const latents = Math.ceil((CALIBRATION_POOL_FACTOR * n) / CALIBRATION_ROWS_PER_LATENT);
    const chunkYields = Math.ceil(latents / NATIVE_GENERATE_CHUNK) - 1;
    assert.equal(yields, chunkYields + 1 + CALIBRATION_SWEEPS);
    let polls = 0;
    await assert.rejects(sampleCalibrated(model, { numRows: n, seed: 5 }, 0, marginals, { shouldAbort: () => ++polls > Math.ceil(latents / NATIVE_GENERATE_CHUNK) + 1 }), /aborted/);
    assert.ok(polls > chunkYields + 1, "stopped during the raking");

    const want = { pool: await poolHash(model, n, 5), hash: hashOf(a.columns) };
    for (const isa of isaPaths()) {
      const r = child("calibrated", { SYNTHD_ISA: isa });
      assert.equal(r.isa, isa);
      assert.equal(r.pool, want.pool, `SYNTHD_ISA=${isa}: the generator's pool (plain draws) differs; see docs/compute.md on ISA paths`);
      assert.equal(r.hash, want.hash, `SYNTHD_ISA=${isa}: calibrated rows`);
    }
  } finally {
    model.native!.dispose();
  }
});

test("several rows per latent: set 0 is the plain draw, and set j the rows sampleRows draws from the same latents with set j's uniforms", async () => {
  const { model, n } = calibratedCase();
  try {
    const E = model.spec.embeddingDim;
    const F = model.layout.features.length;
    const inputs = drawInputs({ numRows: n, seed: 9 }, E, F, 0);
    const extra = new Float64Array(2 * n * F);
    drawRequest({ seed: 10, rows: 2 * n, latents: new Float32Array(0), drawLatents: false, sigma: 0, uniforms: extra });
    const cols = await sampleRowsPerLatent(model, inputs, extra);
    for (let j = 0; j < 3; j++) {
      const uniforms = j === 0 ? inputs.uniforms : extra.subarray((j - 1) * n * F, j * n * F);
      const want = await sampleRows(model, { n, latents: inputs.latents, uniforms, seed: 0 });
      assert.deepEqual(cols.map((c) => c.slice(j * n, (j + 1) * n)), want, `set ${j}`);
    }
    await assert.rejects(sampleRowsPerLatent(model, inputs, new Float64Array(n * F + 1)), RangeError);
    // Into a given array: the same codes, the columns its consecutive views.
    const out = new Int32Array(3 * n * F).fill(-1);
    const into = await sampleRowsPerLatent(model, inputs, extra, {}, out);
    assert.deepEqual(into, cols);
    into.forEach((c, f) => assert.ok(c.buffer === out.buffer && c.byteOffset === f * 3 * n * 4 && c.length === 3 * n));
    await assert.rejects(sampleRowsPerLatent(model, inputs, extra, {}, new Int32Array(3 * n * F - 1)), RangeError);
  } finally {
    model.native!.dispose();
  }
});

test("the draws' columns are views of one F x n array, which packedColumns passes on without a copy; gatherRows takes the shuffled picks' rows into one array", async () => {
  const { model, n } = calibratedCase();
  try {
    const E = model.spec.embeddingDim;
    const F = model.layout.features.length;
    const inputs = drawInputs({ numRows: n, seed: 4 }, E, F, 0);
    const cols = await sampleRows(model, inputs);
    const packed = packedColumns(cols);
    assert.ok(packed.buffer === cols[0].buffer && packed.length === F * n, "no copy");
    cols.forEach((c, f) => assert.deepEqual(packed.subarray(f * n, (f + 1) * n), c));
    const separate = cols.map((c) => c.slice());
    const copied = packedColumns(separate);
    assert.ok(copied.buffer !== separate[0].buffer);
    assert.deepEqual(copied, packed);
    // Views that do not cover their whole buffer are copied too.
    const bigger = new Int32Array(F * n + 3);
    const offset = cols.map((c, f) => bigger.subarray(3 + f * n, 3 + (f + 1) * n));
    assert.ok(packedColumns(offset).buffer !== bigger.buffer);
    // gatherRows: row i is pool row sorted[perm[i]], the row the same shuffle of the sorted picks puts at i.
    const sorted = Int32Array.from({ length: 40 }, (_, i) => Math.floor((i * n) / 40));
    const shuffled = Rng.fromSeed(3).shuffle(sorted.slice());
    const perm = Rng.fromSeed(3).shuffle(Int32Array.from({ length: 40 }, (_, i) => i));
    const got = gatherRows(cols, sorted, perm);
    got.forEach((c, f) => assert.deepEqual(Array.from(c), Array.from(shuffled, (p) => cols[f][p])));
    assert.ok(got.every((c, f) => c.buffer === got[0].buffer && c.byteOffset === f * 40 * 4));
    releaseInputs(inputs);
  } finally {
    model.native!.dispose();
  }
});
