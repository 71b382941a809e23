/**
 * The model (src/model): seeded randomness, targets, the KL marginal loss, training, checkpoints
 * and generation, without the engine.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import * as tf from "@tensorflow/tfjs-core";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LmdbStore as Store } from "../src/store";
import type { Metadata, ModelConfig } from "../src/contract";
import {
  Rng,
  buildTargets,
  initBackend,
  klLoss,
  learningRate,
  makeSchedule,
  marginalLoss,
  targetTensors,
  disposeTargetTensors,
  Trainer,
  TrainingError,
  prepareInputs,
  sampleRows,
  InputError,
  CheckpointError,
  CHECKPOINT_VERSION,
  paramShapes,
  MetadataError,
  stepsPerEpochFor,
  EMA_DECAY,
  emaDecay,
  checkpointWeights,
  decodeCheckpoint,
  disposeGenerator,
  generatorSpec,
  type Checkpoint,
} from "../src/model";
import { fastConfig, TINY_META as META } from "./fixtures";

const config = (over: Partial<ModelConfig> = {}): ModelConfig => fastConfig(10, over);

test("xoshiro128** matches the reference C implementation, seeded by SplitMix64", () => {
  const r = Rng.fromState([1, 2, 3, 4]);
  assert.deepEqual(
    Array.from({ length: 6 }, () => r.nextUint32()),
    [11520, 0, 5927040, 70819200, 2031721883, 1637235492],
  );
  const s = Rng.fromSeed(42);
  assert.deepEqual(
    Array.from({ length: 4 }, () => s.nextUint32()),
    [1776835114, 4165204688, 17111135, 2317295270],
  );
});

test("the same seed gives the same uniforms and normals; another seed does not", () => {
  const a = Rng.fromSeed(7).fillNormal(new Float32Array(1001));
  const b = Rng.fromSeed(7).fillNormal(new Float32Array(1001));
  const c = Rng.fromSeed(8).fillNormal(new Float32Array(1001));
  assert.deepEqual(a, b);
  assert.notDeepEqual(a, c);
  assert.deepEqual(Rng.fromString("mdl_x:val").fillUniform(new Float64Array(5)), Rng.fromString("mdl_x:val").fillUniform(new Float64Array(5)));
  const st = Rng.fromSeed(-3);
  st.uniform();
  const saved = st.state();
  assert.equal(Rng.fromState(saved).uniform(), st.uniform());

  const u = Rng.fromSeed(1).fillUniform(new Float64Array(20000));
  assert.ok(u.every((x) => x >= 0 && x < 1));
  const z = Rng.fromSeed(2).fillNormal(new Float64Array(20000));
  const mean = z.reduce((s, x) => s + x, 0) / z.length;
  const variance = z.reduce((s, x) => s + (x - mean) ** 2, 0) / z.length;
  assert.ok(Math.abs(mean) < 0.05, `mean ${mean}`);
  assert.ok(Math.abs(variance - 1) < 0.05, `variance ${variance}`);
  assert.throws(() => Rng.fromSeed(0.5), RangeError);
});

test("shuffle: a permutation, the same for the same seed, every position equally likely (Fisher–Yates)", () => {
  const a = Rng.fromSeed(11).shuffle(Int32Array.from({ length: 50 }, (_, i) => i));
  assert.deepEqual(Array.from(a).sort((x, y) => x - y), Array.from({ length: 50 }, (_, i) => i));
  assert.deepEqual(Rng.fromSeed(11).shuffle(Int32Array.from({ length: 50 }, (_, i) => i)), a);
  assert.notDeepEqual(Rng.fromSeed(12).shuffle(Int32Array.from({ length: 50 }, (_, i) => i)), a);
  // The draw order of the loop it replaced (one uniform per position from the end): rows of a seed depend on it.
  const r = Rng.fromSeed(5);
  const ref = [0, 1, 2, 3, 4];
  for (let i = 4; i > 0; i--) {
    const j = Math.floor(r.uniform() * (i + 1));
    [ref[i], ref[j]] = [ref[j], ref[i]];
  }
  assert.deepEqual(Array.from(Rng.fromSeed(5).shuffle(Int32Array.of(0, 1, 2, 3, 4))), ref);
  // Where element 0 lands over 30,000 shuffles of 3: each place about a third.
  const rng = Rng.fromSeed(3);
  const at = [0, 0, 0];
  for (let k = 0; k < 30_000; k++) at[Array.from(rng.shuffle(Int32Array.of(0, 1, 2))).indexOf(0)]++;
  for (const c of at) assert.ok(Math.abs(c / 30_000 - 1 / 3) < 0.015, `placements ${at}`);
});

test("targets: pairs are oriented by feature order, transposed and checked", () => {
  const t = buildTargets(META);
  assert.deepEqual(t.layout.offsets, [0, 2, 5, 7]);
  assert.deepEqual(t.pairs, [
    [0, 1],
    [0, 2],
  ]);
  // Weighted mean over 3 one-way and 2 two-way marginals: 1/ln(K^2) and 1/ln(K_f K_g).
  const lw = (cells: number): number => 1 / Math.log(cells);
  assert.ok(Math.abs(t.count - (lw(4) + lw(9) + lw(4) + lw(6) + lw(4))) < 1e-12);
  assert.deepEqual(Array.from(t.oneWayWeight), [lw(4), lw(4), lw(9), lw(9), lw(9), lw(4), lw(4)].map(Math.fround));
  // (c, a) was given as c-major; stored as a-major: P(a=0, c=1) = P(c=1, a=0) = 0.05.
  const block = t.blocks.find((b) => b.pairs.some(([, g]) => g === 2));
  assert.ok(block);
  const w = block.c1 - block.c0;
  const col = t.layout.offsets[2] - block.c0;
  assert.ok(Math.abs(block.target[0 * w + col + 1] - 0.05) < 1e-7);
  // One block holds a's partners b (2 x 3 cells) and c (2 x 2): each pair's weight on its columns.
  assert.deepEqual(Array.from(block.weight), [lw(6), lw(6), lw(6), lw(4), lw(4)].map(Math.fround));
  assert.throws(() => buildTargets({ ...META, empirical_probs: { ...META.empirical_probs, b: [1] } }), MetadataError);
  assert.throws(() => buildTargets({ ...META, marginals: [{ features: ["a", "zz"], probs: [1] }] }), MetadataError);
});

/** P (n x D) as one-hot rows of a small table: its batch marginals are the table's marginals. */
function oneHotTable(rows: number[][], cards: number[]): Float32Array {
  const D = cards.reduce((a, b) => a + b, 0);
  const out = new Float32Array(rows.length * D);
  rows.forEach((r, i) => {
    let off = 0;
    r.forEach((code, f) => {
      out[i * D + off + code] = 1;
      off += cards[f];
    });
  });
  return out;
}

/** 1-way and all 2-way marginals of a table, as metadata. */
function tableMetadata(rows: number[][], cards: number[]): Metadata {
  const names = cards.map((_, i) => `f${i}`);
  const oneWay = (f: number): number[] => {
    const c = new Array(cards[f]).fill(0);
    for (const r of rows) c[r[f]] += 1 / rows.length;
    return c;
  };
  const marginals = [];
  for (let f = 0; f < cards.length; f++) {
    for (let g = f + 1; g < cards.length; g++) {
      const c = new Array(cards[f] * cards[g]).fill(0);
      for (const r of rows) c[r[f] * cards[g] + r[g]] += 1 / rows.length;
      marginals.push({ features: [names[f], names[g]] as [string, string], probs: c });
    }
  }
  return {
    features: names,
    cardinalities: Object.fromEntries(names.map((n, i) => [n, cards[i]])),
    empirical_probs: Object.fromEntries(names.map((n, i) => [n, oneWay(i)])),
    marginals,
  };
}

test("the loss is ~0 when the model's marginals equal the given ones (both 2-way forms)", async () => {
  await initBackend();
  const cards = [2, 3, 2];
  const rows = [
    [0, 0, 0],
    [0, 1, 1],
    [1, 2, 0],
    [1, 2, 1],
    [0, 0, 0],
    [1, 1, 0],
  ];
  const targets = buildTargets(tableMetadata(rows, cards));
  for (const mode of ["gram", "blocks"] as const) {
    const tt = targetTensors(targets, mode);
    const loss = tf.tidy(() => marginalLoss(tf.tensor2d(oneHotTable(rows, cards), [rows.length, 7]), tt).dataSync()[0]);
    disposeTargetTensors(tt);
    assert.ok(Math.abs(loss) < 1e-6, `${mode}: loss ${loss}`);
  }
});

test("the loss is the mean KL(given || model) over all given marginals, computed by hand", async () => {
  await initBackend();
  // Two features, K = 2 each, one pair. Two latent rows with these per-feature distributions:
  const p = [
    [0.9, 0.1, 0.2, 0.8],
    [0.3, 0.7, 0.6, 0.4],
  ];
  const meta: Metadata = {
    features: ["x", "y"],
    cardinalities: { x: 2, y: 2 },
    empirical_probs: { x: [0.5, 0.5], y: [0.25, 0.75] },
    marginals: [{ features: ["x", "y"], probs: [0.1, 0.4, 0.15, 0.35] }],
  };
  // Model 1-way: mean over rows. Model 2-way: mean over rows of p_x (outer) p_y.
  const mx = [(0.9 + 0.3) / 2, (0.1 + 0.7) / 2];
  const my = [(0.2 + 0.6) / 2, (0.8 + 0.4) / 2];
  const mxy = [
    (0.9 * 0.2 + 0.3 * 0.6) / 2,
    (0.9 * 0.8 + 0.3 * 0.4) / 2,
    (0.1 * 0.2 + 0.7 * 0.6) / 2,
    (0.1 * 0.8 + 0.7 * 0.4) / 2,
  ];
  const kl = (q: number[], m: number[]): number => q.reduce((s, qi, i) => s + (qi > 0 ? qi * Math.log(qi / m[i]) : 0), 0);
  const expected = (kl([0.5, 0.5], mx) + kl([0.25, 0.75], my) + kl([0.1, 0.4, 0.15, 0.35], mxy)) / 3;

  const targets = buildTargets(meta);
  for (const mode of ["gram", "blocks"] as const) {
    const tt = targetTensors(targets, mode);
    const loss = tf.tidy(() => marginalLoss(tf.tensor2d(p.flat(), [2, 4]), tt).dataSync()[0]);
    disposeTargetTensors(tt);
    assert.ok(Math.abs(loss - expected) < 1e-5, `${mode}: ${loss} vs ${expected}`);
  }
  const js = klLoss(targets, [mx, my], new Map([["0,1", mxy]]));
  assert.ok(Math.abs(js - expected) < 1e-7);
});

test("the schedule warms up linearly, then decays along a cosine to its floor", () => {
  const s = makeSchedule(0.001, 1000);
  assert.equal(s.warmupSteps, 50);
  assert.ok(Math.abs(learningRate(s, 0) - 0.001 / 50) < 1e-12);
  assert.ok(Math.abs(learningRate(s, 49) - 0.001) < 1e-12);
  const mid = learningRate(s, 50 + 475);
  assert.ok(mid < 0.001 && mid > 0.0004);
  assert.ok(learningRate(s, 999) < learningRate(s, 600));
  assert.ok(Math.abs(learningRate(s, 5000) - 0.001 * 0.02) < 1e-12);
});

test("training a tiny 3-feature problem lowers the validation loss", async () => {
  const tr = await Trainer.create({ id: "mdl_000000000001", metadata: META, config: config(), stepsPerEpoch: 25 });
  try {
    const first = await tr.runEpoch();
    let last = first;
    for (let i = 0; i < 3; i++) last = await tr.runEpoch();
    assert.ok(first && last);
    assert.ok(last.valLoss < first.valLoss, `val ${first.valLoss} -> ${last.valLoss}`);
    assert.equal(last.epoch, 4);
    assert.equal(last.step, 100);
    assert.ok(Number.isFinite(last.trainLoss));
  } finally {
    tr.dispose();
  }
});

test("a checkpoint stored in LMDB resumes exactly where the uninterrupted run would be", async () => {
  const opts = { id: "mdl_00000000000c", metadata: META, config: config({ early_stop_patience: 3 }), stepsPerEpoch: 10 };
  const straight = await Trainer.create(opts);
  const reports = [];
  for (let i = 0; i < 3; i++) reports.push(await straight.runEpoch());
  const expected = straight.checkpoint();
  straight.dispose();

  const first = await Trainer.create(opts);
  await first.runEpoch();
  await first.runEpoch();
  // Through the store (msgpack in LMDB), as the engine keeps it.
  const dir = mkdtempSync(join(tmpdir(), "synthd-ckpt-"));
  const store = new Store(dir);
  const t = new Date().toISOString();
  const rec = { id: opts.id, org: "o", env: "test" as const, status: "training" as const, config: opts.config, current_epoch: 0, train_loss: null, val_loss: null, created_at: t, updated_at: t, error: null };
  await store.createModel(rec, META);
  await store.updateModel(opts.id, { current_epoch: 2 }, first.checkpoint());
  first.dispose();
  const stored = (await store.getCheckpoint<Checkpoint>(opts.id)) as Checkpoint;
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  assert.equal(stored.epoch, 2);
  assert.equal(stored.version, CHECKPOINT_VERSION);
  assert.deepEqual(
    Object.keys(stored.weights),
    paramShapes({ embeddingDim: 8, hidden: 256, blocks: 1, outputDim: 7 }).map(([n]) => n),
  );

  const resumed = await Trainer.create({ ...opts, checkpoint: stored });
  assert.equal(resumed.epoch, 2);
  const third = await resumed.runEpoch();
  const got = resumed.checkpoint();
  resumed.dispose();
  assert.equal(third?.trainLoss, reports[2]?.trainLoss);
  assert.equal(third?.valLoss, reports[2]?.valLoss);
  assert.equal(got.step, expected.step);
  assert.deepEqual(got.rng, expected.rng);
  assert.equal(Buffer.compare(Buffer.from(got.weights["out.W"].data), Buffer.from(expected.weights["out.W"].data)), 0);
  assert.equal(Buffer.compare(Buffer.from(got.adam.v["in.W"].data), Buffer.from(expected.adam.v["in.W"].data)), 0);

  await assert.rejects(Trainer.create({ ...opts, checkpoint: { ...stored, version: 99 } }), CheckpointError);
  // Version 1 held the two-product residual blocks of the first recipe: refused, not misread.
  await assert.rejects(Trainer.create({ ...opts, checkpoint: { ...stored, version: 1 } }), CheckpointError);
  await assert.rejects(Trainer.create({ ...opts, config: config({ embedding_dim: 9 }), checkpoint: stored }), CheckpointError);
});

test("early stopping ends after `early_stop_patience` epochs without improvement, in the last tenth of the decay; 0 disables it", async () => {
  // A learning rate this small cannot improve val_loss by the required relative 1e-4.
  // 12 epochs x 2 steps: warm-up 1 step, so 90% of the decay has passed at step 1 + 0.9 * 23 =
  // 21.7, i.e. during epoch 11. Epochs 2 to 10 do not improve, but stopping waits for that point.
  const stuck = config({ learning_rate: 1e-12, early_stop_patience: 2, max_epochs: 12 });
  const tr = await Trainer.create({ id: "mdl_00000000000e", metadata: META, config: stuck, stepsPerEpoch: 2 });
  const reports = [];
  for (;;) {
    const r = await tr.runEpoch();
    assert.ok(r);
    reports.push(r);
    if (r.done) break;
  }
  tr.dispose();
  assert.equal(reports.length, 11);
  assert.equal(reports[9].done, null, "not yet: the last tenth of the decay has not begun");
  assert.equal(reports[10].done, "early_stop");
  assert.equal(reports[0].improved, true);

  const off = await Trainer.create({ id: "mdl_00000000000e", metadata: META, config: { ...stuck, early_stop_patience: 0, max_epochs: 4 }, stepsPerEpoch: 2 });
  let r;
  do r = await off.runEpoch();
  while (r && !r.done);
  off.dispose();
  assert.equal(r?.done, "max_epochs");
  assert.equal(r?.epoch, 4);
});

test("training stops (ready, not failed) when max_training_time is spent", async () => {
  const tr = await Trainer.create({ id: "mdl_00000000000f", metadata: META, config: config({ max_training_time: 0.001 }), stepsPerEpoch: 50 });
  const r = await tr.runEpoch();
  tr.dispose();
  assert.equal(r?.done, "time_limit");
  assert.equal(r?.epoch, 1);
  assert.ok((r?.step ?? 0) < 50);
});

test("a non-finite loss raises TrainingError", async () => {
  const tr = await Trainer.create({ id: "mdl_00000000000a", metadata: META, config: config(), stepsPerEpoch: 2 });
  await tr.runEpoch();
  const ckpt = tr.checkpoint();
  tr.dispose();
  const nan = new Float32Array(ckpt.weights["out.b"].data.byteLength / 4).fill(Number.NaN);
  ckpt.weights["out.b"] = { shape: ckpt.weights["out.b"].shape, data: Buffer.from(nan.buffer) };
  const bad = await Trainer.create({ id: "mdl_00000000000a", metadata: META, config: config(), checkpoint: ckpt });
  await assert.rejects(bad.runEpoch(), TrainingError);
  bad.dispose();
});

test("generation: same seed, same codes; another seed, other codes; codes in range", async () => {
  const tr = await Trainer.create({ id: "mdl_00000000000b", metadata: META, config: config(), stepsPerEpoch: 10 });
  await tr.runEpoch();
  const model = tr.generator(true);
  const draw = (seed: number, noise = 0): Promise<Int32Array[]> => sampleRows(model, prepareInputs({ num_rows: 3000, seed }, 8, 3, noise));
  const a = await draw(5);
  const b = await draw(5);
  const c = await draw(6);
  assert.deepEqual(a, b);
  assert.notDeepEqual(a, c);
  assert.notDeepEqual(await draw(5, 0.5), a, "privacy noise changes the latents");
  const cards = [2, 3, 2];
  a.forEach((col, f) => assert.ok(col.every((k) => k >= 0 && k < cards[f])));
  // Latents given explicitly: one row per latent vector.
  const given = await sampleRows(model, prepareInputs([Array(8).fill(0), Array(8).fill(1)], 8, 3, 0));
  assert.equal(given[0].length, 2);
  assert.throws(
    () => prepareInputs([Array(8).fill(0), Array(7).fill(0)], 8, 3, 0),
    (e: unknown) => e instanceof InputError && e.param === "body.embedding[1]",
  );
  tr.dispose();
});

test("the weight average follows the latest weights early, then decays at EMA_DECAY per step", () => {
  assert.ok(emaDecay(10, 10) < 0.01, "the first epochs keep almost nothing of the average");
  assert.equal(emaDecay(100_000, 1), EMA_DECAY);
  assert.ok(Math.abs(emaDecay(100_000, 50) - EMA_DECAY ** 50) < 1e-15);
  assert.ok(emaDecay(500, 50) < emaDecay(2000, 50));
});

test("a ready model serves the averaged weights; training continues from the optimizer's own", async () => {
  const opts = { id: "mdl_0000000000ea", metadata: META, config: config({ max_epochs: 4, early_stop_patience: 0 }), stepsPerEpoch: 10 };
  const tr = await Trainer.create(opts);
  let r;
  do r = await tr.runEpoch();
  while (r && !r.done);
  const ckpt = tr.checkpoint();
  const spec = generatorSpec(opts.config.model_size, opts.config.embedding_dim, buildTargets(META).layout);
  const state = decodeCheckpoint(ckpt, spec);
  const served = checkpointWeights(ckpt, spec, true);
  const best = state.bestWeights ?? state.emaWeights;
  assert.deepEqual(served["out.W"], best["out.W"]);
  assert.notDeepEqual(state.emaWeights["out.W"], state.weights["out.W"], "the average is not the latest weights");
  assert.deepEqual(checkpointWeights(ckpt, spec, false)["out.W"], state.weights["out.W"]);
  // The generator a finished trainer hands over holds the best averaged weights.
  const model = tr.finish();
  assert.ok(model.native || Object.keys(model.params).length > 0);
  const finished = model.native ? model.native.weights() : Object.fromEntries(Object.entries(model.params).map(([k, t]) => [k, Float32Array.from(t.dataSync() as Float32Array)]));
  assert.deepEqual(finished["out.W"], best["out.W"]);
  disposeGenerator(model);
});

test("an epoch is 50 steps up to max_epochs 90; longer runs plan about 4,500 steps, at least 10 per epoch", () => {
  assert.equal(stepsPerEpochFor(1), 50);
  assert.equal(stepsPerEpochFor(90), 50);
  assert.equal(stepsPerEpochFor(100), 45);
  assert.equal(stepsPerEpochFor(200), 23);
  assert.equal(stepsPerEpochFor(300), 15);
  assert.equal(stepsPerEpochFor(1000), 10);
});
