/**
 * The native compute core (native/src/train, src/model/native-core.ts) against the tfjs reference
 * (src/model/generator.ts, loss.ts, adam.ts, schedule.ts): the same loss and gradients for the
 * same weights and latents (relative error < 1e-4), the same Adam update, the same learning-rate
 * schedule, logits that let a model trained on either path generate on the other, checkpoints
 * that either path resumes, and results that do not depend on the thread count, the kernel ISA or
 * concurrent use from several threads. Requires the addon (`node native/build.js`).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import * as tf from "@tensorflow/tfjs-core";
import { Adam } from "../src/model/training/adam";
import { initBackend } from "../src/model/compute/backend";
import { decodeCheckpoint, encodeCheckpoint } from "../src/model/training/checkpoint";
import { prepareInputs } from "../src/model/sampling/inputs";
import { sampleRows } from "../src/model/sampling/sample-rows";
import { disposeAll, featureSoftmax, forward, makeSegments, disposeSegments, type NamedArrays, type NamedTensors, paramShapes, toArrays, toTensors, trainableVariables } from "../src/model/generator/generator";
import { disposeTargetTensors, marginalLoss, targetTensors } from "../src/model/training/loss";
import { buildTargets } from "../src/model/generator/targets";
import { flattenParams, nativeCore, nativeCoreStatus, unflattenParams } from "../src/model/compute/native-core";
import { NativeGenerator } from "../src/model/compute/native-generator";
import { Rng } from "../src/model/sampling/xoshiro";
import { sampleCodesJs } from "../src/model/sampling/sampling";
import { learningRate, makeSchedule, LR_FLOOR_FRACTION } from "../src/model/training/schedule";
import {
  ADULT_CARDS,
  latents,
  relErr,
  smallCase,
  specFor,
  syntheticMetadata,
  testWeights,
  tfjsLossAndGrads,
  worstRelErr,
} from "./native-core-fixtures";

const TOL = 1e-4;
const FIXTURES = join(__dirname, "native-core-fixtures.js");

test("the addon exposes the core and reports its kernel and threads", () => {
  const status = nativeCoreStatus();
  assert.equal(status.available, true, status.reason);
  const info = status.info!;
  assert.match(info.isa, /^(avx512|avx2|generic)$/);
  assert.match(info.kernel, /^\d+x\d+$/);
  assert.ok(info.threads >= 1);
});

test("flat parameter order is paramShapes order, and flatten/unflatten round-trip", () => {
  const { spec, weights, targets } = smallCase();
  const gen = NativeGenerator.create(spec, targets.layout, weights);
  const names = gen.raw.paramNames();
  assert.deepEqual(
    names,
    paramShapes(spec).map(([n, s]) => [n, s.reduce((a, b) => a * b, 1)]),
  );
  const back = gen.weights();
  for (const [name] of paramShapes(spec)) assert.deepEqual(back[name], weights[name], name);
  assert.deepEqual(unflattenParams(spec, flattenParams(spec, weights)), weights);
  gen.dispose();
});

for (const mode of ["blocks", "dense"] as const) {
  test(`loss and every gradient match tfjs, small model with sparse pair blocks (${mode})`, async () => {
    const { spec, weights, targets } = smallCase();
    const gen = NativeGenerator.create(spec, targets.layout, weights);
    assert.equal(gen.setTargets(targets, mode), mode);
    for (const n of [64, 37]) {
      const z = latents(n, spec.embeddingDim, `small-${n}`);
      const nat = gen.lossAndGrads(z, n);
      const ref = await tfjsLossAndGrads(spec, targets, weights, z, n);
      assert.ok(Math.abs(nat.loss - ref.loss) / Math.abs(ref.loss) < TOL, `loss ${nat.loss} vs ${ref.loss}`);
      const w = worstRelErr(nat.grads, ref.grads);
      assert.ok(w.err < TOL, `gradient ${w.name}: relative error ${w.err}`);
    }
    gen.dispose();
  });
}

test("loss and every gradient match tfjs: medium model on the Adult domain, all 91 pairs, batch 256", async () => {
  const targets = buildTargets(syntheticMetadata(ADULT_CARDS, "all", 3));
  assert.equal(targets.pairs.length, 91);
  const spec = specFor(targets, 64, 512, 1);
  const weights = testWeights(spec, "medium");
  const z = latents(256, 64, "medium-z");
  const ref = await tfjsLossAndGrads(spec, targets, weights, z, 256);
  const gen = NativeGenerator.create(spec, targets.layout, weights);
  for (const mode of ["dense", "blocks"] as const) {
    gen.setTargets(targets, mode);
    const nat = gen.lossAndGrads(z, 256);
    assert.ok(Math.abs(nat.loss - ref.loss) / Math.abs(ref.loss) < TOL, `${mode}: loss ${nat.loss} vs ${ref.loss}`);
    const w = worstRelErr(nat.grads, ref.grads);
    assert.ok(w.err < TOL, `${mode}: gradient ${w.name}: relative error ${w.err}`);
  }
  gen.dispose();
});

test("with the entropy penalty the gradient matches tfjs's KL + penalty, and the loss stays the KL", async () => {
  const { spec, weights, targets } = smallCase();
  const gen = NativeGenerator.create(spec, targets.layout, weights);
  gen.setTargets(targets);
  const n = 64;
  const z = latents(n, spec.embeddingDim, "entropy-z");
  const plain = gen.lossAndGrads(z, n);
  const alpha = 0.5; // large, so the penalty is a visible part of every gradient
  gen.setEntropyPenalty(alpha);
  const nat = gen.lossAndGrads(z, n);
  const ref = await tfjsLossAndGrads(spec, targets, weights, z, n, undefined, alpha);
  assert.equal(nat.loss, plain.loss, "the reported loss is the KL alone");
  assert.ok(Math.abs(nat.loss - ref.loss) / Math.abs(ref.loss) < TOL, `loss ${nat.loss} vs ${ref.loss}`);
  const w = worstRelErr(nat.grads, ref.grads);
  assert.ok(w.err < TOL, `gradient ${w.name}: relative error ${w.err}`);
  assert.ok(worstRelErr(plain.grads, ref.grads).err > 100 * TOL, "the penalty changes the gradient");
  assert.throws(() => gen.setEntropyPenalty(-1), { name: "RangeError", message: /alpha/ });
  assert.throws(() => gen.setEntropyPenalty(NaN), { name: "RangeError", message: /alpha/ });
  gen.dispose();
});

test("evalLoss over many rows equals the tfjs loss of the whole set (chunked sums)", async () => {
  const { spec, weights, targets } = smallCase();
  const gen = NativeGenerator.create(spec, targets.layout, weights);
  gen.setTargets(targets);
  const n = 2500; // more than one evaluation chunk of 1024 rows
  const z = latents(n, spec.embeddingDim, "eval-z");
  const ref = await tfjsLossAndGrads(spec, targets, weights, z, n);
  const v = gen.evalLoss(z, n);
  assert.ok(Math.abs(v - ref.loss) / ref.loss < TOL, `${v} vs ${ref.loss}`);
  gen.dispose();
});

test("one Adam step matches adam.ts given the same gradients", async () => {
  await initBackend();
  const { spec, weights, targets } = smallCase();
  const gen = NativeGenerator.create(spec, targets.layout, weights);
  gen.setTargets(targets);
  // A non-trivial state: a few steps first, then compare one step from that state.
  for (let s = 0; s < 3; s++) gen.trainStep(latents(32, spec.embeddingDim, `adam-pre-${s}`), 32, 0.01);
  const before = gen.weights();
  const state = gen.adamState();
  const z = latents(32, spec.embeddingDim, "adam-z");
  const { grads } = gen.lossAndGrads(z, 32);
  gen.trainStep(z, 32, 0.005);
  const after = gen.weights();
  const afterState = gen.adamState();

  const vars: Record<string, tf.Variable> = {};
  for (const [name, shape] of paramShapes(spec)) vars[name] = tf.variable(tf.tensor(before[name], shape), true, `adam_${name}`);
  const adam = new Adam(vars, state);
  const g = toTensors(spec, grads);
  adam.step(vars, g as NamedTensors, 0.005);
  const tfAfter = toArrays(vars);
  const tfState = adam.state();
  assert.equal(afterState.t, tfState.t);
  for (const [name] of paramShapes(spec)) {
    // The update itself (after - before) must agree, not just the weights.
    const du = after[name].map((x, i) => x - before[name][i]);
    const dt = tfAfter[name].map((x, i) => x - before[name][i]);
    assert.ok(relErr(du, dt) < 1e-5, `update of ${name}: ${relErr(du, dt)}`);
    assert.ok(relErr(afterState.m[name], tfState.m[name]) < 1e-6, `m of ${name}`);
    assert.ok(relErr(afterState.v[name], tfState.v[name]) < 1e-6, `v of ${name}`);
  }
  adam.dispose();
  disposeAll(vars);
  disposeAll(g);
  gen.dispose();
});

test("trim frees training state but keeps weights and targets usable", () => {
  const { spec, weights, targets } = smallCase();
  const gen = NativeGenerator.create(spec, targets.layout, weights);
  gen.setTargets(targets);
  const z = latents(32, spec.embeddingDim, "trim");
  gen.trainStep(z, 32, 0.01);
  const w = gen.weights();
  const logits = gen.logits(z, 32);
  const loss = gen.evalLoss(z, 32);
  gen.trim();
  assert.deepEqual(gen.weights(), w);
  assert.deepEqual(gen.logits(z, 32), logits);
  assert.equal(gen.evalLoss(z, 32), loss);
  assert.equal(gen.adamState().t, 0);
  assert.ok(Number.isFinite(gen.trainStep(z, 32, 0.01)));
  gen.dispose();
});

test("learningRate matches schedule.ts (warm-up, cosine, floor)", () => {
  const addon = nativeCore()!;
  for (const [peak, total] of [[0.001, 5000], [0.01, 37], [0.3, 1]] as const) {
    const s = makeSchedule(peak, total);
    for (const step of [0, 1, s.warmupSteps - 1, s.warmupSteps, Math.floor(total / 2), total - 1, total, total + 10]) {
      const want = learningRate(s, step);
      const got = addon.learningRate(s.peak, s.totalSteps, s.warmupSteps, LR_FLOOR_FRACTION, step);
      assert.ok(Math.abs(got - want) <= 1e-15 + 1e-12 * Math.abs(want), `step ${step}: ${got} vs ${want}`);
    }
  }
});

test("native logits match the tfjs forward pass", async () => {
  await initBackend();
  const { spec, weights, targets } = smallCase();
  const gen = NativeGenerator.create(spec, targets.layout, weights);
  const n = 300;
  const z = latents(n, spec.embeddingDim, "logits-z");
  const nat = gen.logits(z, n);
  const params = toTensors(spec, weights);
  const ref = tf.tidy(() => forward(spec, params, tf.tensor2d(z, [n, spec.embeddingDim])).dataSync() as Float32Array);
  assert.ok(relErr(nat, ref) < 1e-5, `logits ${relErr(nat, ref)}`);
  disposeAll(params);
  gen.dispose();
});

test("native generate equals the JavaScript sampling kernel applied to the native logits, code for code", () => {
  const { spec, weights, targets } = smallCase();
  const gen = NativeGenerator.create(spec, targets.layout, weights);
  const F = targets.layout.features.length;
  for (const [n, temperature, topP] of [[1, 1, null], [77, 0.7, 0.9], [1000, 1.3, null], [4099, 1, 0.5]] as const) {
    const z = latents(n, spec.embeddingDim, `gen-${n}`);
    const u = Rng.fromString(`u-${n}`).fillUniform(new Float64Array(n * F));
    const codes = gen.raw.generate(z, n, u, temperature, topP);
    const ref = sampleCodesJs(gen.logits(z, n), n, targets.layout.cardinalities, u, { temperature, topP });
    assert.deepEqual(codes, ref, `n=${n}`);
  }
  gen.dispose();
});

test("generateWithLogits gives generate's codes and logits' logits from one pass, and refuses a logits buffer of the wrong size", () => {
  const { spec, weights, targets } = smallCase();
  const gen = NativeGenerator.create(spec, targets.layout, weights);
  const F = targets.layout.features.length;
  const D = targets.layout.width;
  for (const [n, temperature, topP] of [[1, 1, null], [513, 0.8, 0.9], [3000, 1, null]] as const) {
    const z = latents(n, spec.embeddingDim, `fused-${n}`);
    const u = Rng.fromString(`fused-u-${n}`).fillUniform(new Float64Array(n * F));
    const out = new Float32Array(n * D).fill(Number.NaN);
    const codes = gen.generateWithLogits(z, n, u, temperature, topP, out);
    assert.deepEqual(codes, gen.raw.generate(z, n, u, temperature, topP), `codes n=${n}`);
    assert.deepEqual(out, gen.logits(z, n), `logits n=${n}`);
  }
  const z = latents(4, spec.embeddingDim, "fused-bad");
  const u = new Float64Array(4 * F).fill(0.5);
  assert.throws(() => gen.generateWithLogits(z, 4, u, 1, null, new Float32Array(4 * D - 1)), /logitsOut has/);
  assert.throws(() => gen.generateWithLogits(z, 4, u, 1, null, new Float64Array(4 * D) as unknown as Float32Array), /logitsOut must be a Float32Array/);
  gen.dispose();
});

/** Trains `steps` steps with tfjs (the trainer's computation) from `weights`; returns the new weights. */
async function trainTfjs(weights: NamedArrays, steps: number): Promise<NamedArrays> {
  await initBackend();
  const { spec, targets } = smallCase();
  const { vars, gradsByName } = trainableVariables(spec, weights);
  const adam = new Adam(vars);
  const tt = targetTensors(targets);
  const seg = makeSegments(targets.layout);
  for (let s = 0; s < steps; s++) {
    const z = latents(48, spec.embeddingDim, `cross-${s}`);
    tf.tidy(() => {
      const { grads } = tf.variableGrads(
        () => marginalLoss(featureSoftmax(forward(spec, vars, tf.tensor2d(z, [48, spec.embeddingDim])), seg), tt),
        Object.values(vars),
      );
      adam.step(vars, gradsByName(grads), 0.01);
    });
  }
  const out = toArrays(vars);
  adam.dispose();
  disposeAll(vars);
  disposeTargetTensors(tt);
  disposeSegments(seg);
  return out;
}

/** Codes from both paths for the same weights and inputs; returns the fraction that differ. */
async function crossGenerate(weights: NamedArrays): Promise<number> {
  const { spec, targets } = smallCase();
  const F = targets.layout.features.length;
  const inputs = prepareInputs({ num_rows: 3000, seed: 42 }, spec.embeddingDim, F, 0);
  const gen = NativeGenerator.create(spec, targets.layout, weights);
  const nat = await gen.sampleRows(inputs, { temperature: 0.9, topP: 0.95 });
  gen.dispose();
  const params = toTensors(spec, weights);
  const ref = await sampleRows({ spec, layout: targets.layout, params }, inputs, { temperature: 0.9, topP: 0.95 });
  disposeAll(params);
  let diff = 0;
  for (let f = 0; f < F; f++) for (let r = 0; r < inputs.n; r++) if (nat[f][r] !== ref[f][r]) diff++;
  return diff / (F * inputs.n);
}

test("a model trained natively generates the same codes through tfjs, and a tfjs-trained one natively", async () => {
  const { spec, weights, targets } = smallCase();
  const gen = NativeGenerator.create(spec, targets.layout, weights);
  gen.setTargets(targets);
  for (let s = 0; s < 20; s++) gen.trainStep(latents(48, spec.embeddingDim, `cross-${s}`), 48, 0.01);
  const nativeTrained = gen.weights();
  gen.dispose();
  const tfTrained = await trainTfjs(weights, 20);
  // Both trainings start from the same weights and see the same latents: they end close.
  assert.ok(worstRelErr(nativeTrained, tfTrained).err < 1e-2, `trained weights diverged: ${JSON.stringify(worstRelErr(nativeTrained, tfTrained))}`);
  // Codes agree except where float32 rounding moves a draw across a CDF boundary (very rare).
  assert.ok((await crossGenerate(nativeTrained)) < 1e-3);
  assert.ok((await crossGenerate(tfTrained)) < 1e-3);
});

test("a checkpoint written from the native core resumes on either path with the same next step", async () => {
  const { spec, weights, targets } = smallCase();
  const gen = NativeGenerator.create(spec, targets.layout, weights);
  gen.setTargets(targets);
  for (let s = 0; s < 5; s++) gen.trainStep(latents(40, spec.embeddingDim, `ck-${s}`), 40, 0.01);
  const ck = encodeCheckpoint({
    spec,
    cardinalities: targets.layout.cardinalities,
    epoch: 1,
    step: 5,
    elapsedS: 0.1,
    trainLoss: 0.5,
    valLoss: 0.5,
    bestValLoss: 0.5,
    bestEpoch: 1,
    epochsSinceImprovement: 0,
    weights: gen.weights(),
    emaWeights: gen.weights(),
    bestWeights: null,
    adam: gen.adamState(),
    schedule: makeSchedule(0.01, 100),
    stepsPerEpoch: 5,
    rng: [1, 2, 3, 4],
  });
  // Through a structured clone, as the store's msgpack does (Buffers become Uint8Arrays).
  const state = decodeCheckpoint(structuredClone(ck), spec);

  // Native resume: the next step equals the original core's next step exactly.
  const z = latents(40, spec.embeddingDim, "ck-next");
  const resumed = NativeGenerator.create(spec, targets.layout, state.weights);
  resumed.setTargets(targets);
  resumed.setAdamState(state.adam);
  const a = gen.trainStep(z, 40, 0.01);
  const b = resumed.trainStep(z, 40, 0.01);
  assert.equal(a, b);
  assert.deepEqual(resumed.weights(), gen.weights());

  // tfjs resume: Adam restored from the same checkpoint takes (nearly) the same step.
  await initBackend();
  const vars: Record<string, tf.Variable> = {};
  const byVar = new Map<string, string>();
  for (const [name, shape] of paramShapes(spec)) {
    const v = tf.variable(tf.tensor(state.weights[name], shape), true, `ck_${name}`);
    vars[name] = v;
    byVar.set(v.name, name);
  }
  const adam = new Adam(vars, state.adam);
  const tt = targetTensors(targets);
  const seg = makeSegments(targets.layout);
  const loss = tf.tidy(() => {
    const { value, grads } = tf.variableGrads(
      () => marginalLoss(featureSoftmax(forward(spec, vars, tf.tensor2d(z, [40, spec.embeddingDim])), seg), tt),
      Object.values(vars),
    );
    const named: NamedTensors = {};
    for (const [vn, g] of Object.entries(grads)) named[byVar.get(vn)!] = g;
    adam.step(vars, named, 0.01);
    return value.dataSync()[0];
  });
  assert.ok(Math.abs(loss - a) / a < TOL, `${loss} vs ${a}`);
  assert.equal(adam.t, gen.adamState().t);
  const w = worstRelErr(toArrays(vars), gen.weights());
  assert.ok(w.err < 1e-3, `weights after the resumed step: ${w.name} ${w.err}`);
  adam.dispose();
  disposeAll(vars);
  disposeTargetTensors(tt);
  disposeSegments(seg);
  gen.dispose();
  resumed.dispose();
});

/** Runs the fixtures' child entry with `env` and parses its JSON line. */
function child(cmd: "parity" | "train", env: Record<string, string>): Record<string, unknown> {
  const r = spawnSync(process.execPath, [FIXTURES, cmd], { env: { ...process.env, ...env }, encoding: "utf8", timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout.trim().split("\n").pop()!) as Record<string, unknown>;
}

test("training is bit-identical for 1, 2 and 3 threads; every ISA path matches tfjs", () => {
  const runs = ["1", "2", "3"].map((t) => child("train", { SYNTHD_THREADS: t }));
  assert.deepEqual(runs[1], { ...runs[0], threads: 2 });
  assert.deepEqual(runs[2], { ...runs[0], threads: 3 });
  const detected = nativeCoreStatus().info!.detectedIsa;
  const isas = detected === "avx512" ? ["generic", "avx2", "avx512"] : detected === "avx2" ? ["generic", "avx2"] : ["generic"];
  for (const isa of isas) {
    const r = child("parity", { SYNTHD_ISA: isa }) as { loss: number; tfLoss: number; worst: { name: string; err: number }; isa: string };
    assert.equal(r.isa, isa);
    assert.ok(Math.abs(r.loss - r.tfLoss) / r.tfLoss < TOL, `${isa}: loss`);
    assert.ok(r.worst.err < TOL, `${isa}: gradient ${r.worst.name} ${r.worst.err}`);
  }
});

test("concurrent training from two worker threads shares the pool and gives the single-thread result", async () => {
  const solo = child("train", { SYNTHD_THREADS: "1" });
  const code = `
    const { parentPort } = require("node:worker_threads");
    const fx = require(${JSON.stringify(FIXTURES)});
    fx.trainSmall().then((r) => parentPort.postMessage(r));
  `;
  const run = (): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      const w = new Worker(code, { eval: true });
      w.once("message", resolve);
      w.once("error", reject);
    });
  const [a, b] = await Promise.all([run(), run()]);
  assert.deepEqual(a.losses, solo.losses);
  assert.equal(a.hash, solo.hash);
  assert.deepEqual(b.losses, solo.losses);
  assert.equal(b.hash, solo.hash);
});
