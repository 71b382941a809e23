/**
 * The native compute core inside the product: `Trainer` with `compute: "native"` against
 * `compute: "tfjs"` (same losses, the same checkpoint format, resuming across paths), and the
 * engine with `--compute native|tfjs`, where a model trained on one path is served by the other
 * from its stored checkpoint. Requires the addon (`node native/build.js`).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { createEngine } from "../src/engine";
import { type Checkpoint, decodeCheckpoint, generatorSpec, prepareInputs, sampleRows, Trainer, disposeGenerator } from "../src/model";
import { initParams, type NamedArrays } from "../src/model/generator/generator";
import { buildTargets } from "../src/model/generator/targets";
import { flattenParams } from "../src/model/compute/native-core";
import { NativeGenerator } from "../src/model/compute/native-generator";
import { Rng } from "../src/model/sampling/xoshiro";
import { learningRate, makeSchedule } from "../src/model/training/schedule";
import { addSliced, emaSliced, fillNormalSliced, SLICE } from "../src/model/training/slices";
import { emaDecay, ENTROPY_PENALTY, VAL_SIZE } from "../src/model/training/settings";
import { LmdbStore as Store } from "../src/store";
import type { Metadata, ModelConfig } from "../src/contract";
import { latents, relErr, smallCase, syntheticMetadata } from "./native-core-fixtures";
import { addTrainingModel, fastConfig } from "./fixtures";

const META: Metadata = syntheticMetadata([4, 3, 6, 2], "all", 21);
const config = (over: Partial<ModelConfig> = {}): ModelConfig => fastConfig(2, over);
const addModel = (store: Store, cfg: ModelConfig): Promise<string> => addTrainingModel(store, cfg, META);

async function trainer(compute: "native" | "tfjs", checkpoint?: Checkpoint): Promise<Trainer> {
  return Trainer.create({ id: "mdl_0123456789ab", metadata: META, config: config(), stepsPerEpoch: 5, compute, checkpoint });
}

test("Trainer: the native path follows the tfjs path epoch by epoch", async () => {
  const nat = await trainer("native");
  const ref = await trainer("tfjs");
  assert.equal(nat.compute, "native");
  assert.equal(nat.computeNote, null);
  assert.equal(ref.compute, "tfjs");
  for (let e = 0; e < 2; e++) {
    const a = (await nat.runEpoch())!;
    const b = (await ref.runEpoch())!;
    assert.equal(a.epoch, b.epoch);
    assert.ok(Math.abs(a.trainLoss - b.trainLoss) / b.trainLoss < 1e-3, `train ${a.trainLoss} vs ${b.trainLoss}`);
    assert.ok(Math.abs(a.valLoss - b.valLoss) / b.valLoss < 1e-3, `val ${a.valLoss} vs ${b.valLoss}`);
    assert.equal(a.improved, b.improved);
  }
  assert.equal(nat.stopReason(), "max_epochs");
  nat.dispose();
  ref.dispose();
});

test("Trainer: checkpoints have the same form on both paths and resume on the other", async () => {
  const nat = await trainer("native");
  await nat.runEpoch();
  const ckN = nat.checkpoint();
  const ref = await trainer("tfjs");
  await ref.runEpoch();
  const ckT = ref.checkpoint();
  // Same structure: keys, tensor names and shapes, Adam step.
  assert.deepEqual(Object.keys(ckN).sort(), Object.keys(ckT).sort());
  assert.deepEqual(
    Object.entries(ckN.weights).map(([k, v]) => [k, v.shape, v.data.byteLength]),
    Object.entries(ckT.weights).map(([k, v]) => [k, v.shape, v.data.byteLength]),
  );
  assert.equal(ckN.adam.t, ckT.adam.t);
  assert.deepEqual(ckN.schedule, ckT.schedule);
  assert.deepEqual(ckN.rng, ckT.rng);
  const spec = generatorSpec("small", 8, buildTargets(META).layout);
  const wN = decodeCheckpoint(structuredClone(ckN), spec).weights;
  const wT = decodeCheckpoint(structuredClone(ckT), spec).weights;
  for (const name of Object.keys(wT)) assert.ok(relErr(wN[name], wT[name]) < 1e-3, name);

  // Cross resume: the native checkpoint continues on tfjs and the reverse, in step.
  const tfFromNative = await trainer("tfjs", structuredClone(ckN));
  const natFromTf = await trainer("native", structuredClone(ckT));
  assert.equal(tfFromNative.epoch, 1);
  assert.equal(natFromTf.epoch, 1);
  const a = (await tfFromNative.runEpoch())!;
  const b = (await natFromTf.runEpoch())!;
  const c = (await nat.runEpoch())!;
  assert.ok(Math.abs(a.valLoss - c.valLoss) / c.valLoss < 1e-3, `${a.valLoss} vs ${c.valLoss}`);
  assert.ok(Math.abs(b.valLoss - c.valLoss) / c.valLoss < 1e-3, `${b.valLoss} vs ${c.valLoss}`);
  for (const t of [nat, ref, tfFromNative, natFromTf]) t.dispose();
});

test("Trainer: native generators (latest, best, finished) sample like the tfjs ones", async () => {
  const nat = await trainer("native");
  await nat.runEpoch();
  await nat.runEpoch();
  const ck = nat.checkpoint();
  const inputs = prepareInputs({ num_rows: 500, seed: 3 }, 8, 4, 0);
  const latest = await sampleRows(nat.generator(false), inputs);
  const best = await sampleRows(nat.generator(true), inputs);
  const finished = nat.finish();
  assert.ok(finished.native !== undefined);
  const fromFinished = await sampleRows(finished, inputs);
  assert.deepEqual(fromFinished, best);
  // The same weights through tfjs (resumed from the checkpoint) give the same codes (but for
  // draws within float32 rounding of a CDF boundary).
  const ref = await trainer("tfjs", structuredClone(ck));
  const viaTf = await sampleRows(ref.generator(false), inputs);
  let diff = 0;
  for (let f = 0; f < 4; f++) for (let r = 0; r < 500; r++) diff += viaTf[f][r] !== latest[f][r] ? 1 : 0;
  assert.ok(diff <= 2, `${diff} codes differ`);
  disposeGenerator(finished);
  ref.dispose();
});

test("Trainer: compute native without the addon falls back to tfjs and says why", () => {
  const code = `
    const { Trainer } = require(${JSON.stringify(join(__dirname, "../src/model"))});
    const meta = ${JSON.stringify(META)};
    Trainer.create({ id: "mdl_0123456789ab", metadata: meta, config: ${JSON.stringify(config())}, compute: "native" })
      .then((t) => { console.log(JSON.stringify({ compute: t.compute, note: t.computeNote })); t.dispose(); });
  `;
  const r = spawnSync(process.execPath, ["-e", code], { env: { ...process.env, SYNTHD_DISABLE_NATIVE: "1" }, encoding: "utf8", timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout.trim().split("\n").pop()!) as { compute: string; note: string };
  assert.equal(out.compute, "tfjs");
  assert.match(out.note, /native compute unavailable/);
});

async function waitReady(store: Store, id: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    store.root.resetReadTxn();
    const m = (await store.getModel(id));
    if (m?.status === "ready") return;
    if (m?.status === "failed") throw new Error(`model failed: ${JSON.stringify(m.error)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("model did not become ready");
}

test("engine: --compute native and tfjs each serve the models the other trained", async () => {
  const dir = mkdtempSync(join(tmpdir(), "synthd-native-engine-"));
  const store = new Store(dir);
  const logger = pino({ level: "silent" });
  try {
    const ids: Record<string, string> = {};
    const codes: Record<string, Record<string, unknown>> = {};
    for (const compute of ["native", "tfjs"] as const) {
      const engine = await createEngine({ store, dataDir: dir, workers: 2, logger, compute });
      assert.equal(engine.compute, compute);
      const infos = await (engine as unknown as { info(): Promise<{ compute: string }[]> }).info();
      assert.ok(infos.every((i) => i.compute === compute));
      ids[compute] = await addModel(store, config({ max_epochs: 1 }));
      await engine.train(ids[compute]);
      await waitReady(store, ids[compute]);
      await engine.close();
    }
    // Every model through every path, from the stored checkpoints.
    for (const compute of ["native", "tfjs"] as const) {
      const engine = await createEngine({ store, dataDir: dir, workers: 1, logger, compute });
      for (const [trainedBy, id] of Object.entries(ids)) {
        const g = await engine.generate(id, { embedding: { num_rows: 400, seed: 11 } });
        assert.equal(g.num_rows, 400);
        codes[`${trainedBy}->${compute}`] = g.columns;
      }
      await engine.close();
    }
    for (const trainedBy of Object.keys(ids)) {
      const a = codes[`${trainedBy}->native`] as Record<string, number[]>;
      const b = codes[`${trainedBy}->tfjs`] as Record<string, number[]>;
      let diff = 0;
      for (const f of Object.keys(a)) for (let r = 0; r < 400; r++) diff += a[f][r] !== b[f][r] ? 1 : 0;
      assert.ok(diff <= 2, `trained by ${trainedBy}: ${diff} codes differ between the paths`);
    }
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

// ---- Latency isolation (issue 11): asynchronous native steps, bit-identical to the synchronous ones.

/** A fresh core of the small case (fixtures), with targets. */
function smallCore(): NativeGenerator {
  const { targets, spec, weights } = smallCase();
  const gen = NativeGenerator.create(spec, targets.layout, weights);
  gen.setTargets(targets);
  return gen;
}

const bits = (a: Float32Array): Uint8Array => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

test("trainStepAsync and evalLossAsync give bit-identical losses, weights and Adam state to the synchronous calls", async () => {
  const sync = smallCore();
  const async_ = smallCore();
  const E = sync.spec.embeddingDim;
  for (let s = 0; s < 6; s++) {
    const z = latents(48, E, `async-${s}`);
    const a = sync.trainStep(z, 48, 0.01);
    const b = await async_.trainStepAsync(z, 48, 0.01);
    assert.equal(b, a, `step ${s}`);
  }
  assert.deepEqual(bits(async_.raw.getParams()), bits(sync.raw.getParams()));
  const [sa, sb] = [sync.raw.getAdamState(), async_.raw.getAdamState()];
  assert.equal(sb.t, sa.t);
  assert.deepEqual(bits(sb.m), bits(sa.m));
  assert.deepEqual(bits(sb.v), bits(sa.v));
  const val = latents(3000, E, "async-val"); // several evaluation chunks
  assert.equal(await async_.evalLossAsync(val, 3000), sync.evalLoss(val, 3000));
  sync.dispose();
  async_.dispose();
});

test("while an asynchronous step is in flight the core refuses other calls with a clear error, and dispose is deferred", async () => {
  const gen = smallCore();
  const core = gen.raw;
  const E = gen.spec.embeddingDim;
  const z = latents(64, E, "busy");
  const P = core.paramCount();
  // Bad arguments are refused before anything is queued, as by the synchronous call.
  assert.throws(() => core.trainStepAsync(z, 64, NaN), { name: "RangeError", message: /^lr must be finite/ });
  assert.throws(() => core.evalLossAsync(z, 63), { name: "RangeError", message: /^z has/ });
  assert.equal(core.busy(), null);

  const step = core.trainStepAsync(z, 64, 0.01);
  // The step's completion can only be delivered on a later turn of the event loop: it is in flight now.
  assert.equal(core.busy(), "trainStepAsync");
  z.fill(Number.NaN); // the core copied the latents: reusing the caller's array is safe
  const busy = { name: "Error", message: /GeneratorCore is busy: trainStepAsync is in flight/ };
  assert.throws(() => core.getParams(), busy);
  assert.throws(() => gen.weights(), busy);
  assert.throws(() => core.setParams(new Float32Array(P)), busy);
  assert.throws(() => core.paramCount(), busy);
  assert.throws(() => core.evalLoss(latents(4, E, "x"), 4), busy);
  assert.throws(() => core.trainStep(latents(4, E, "x"), 4, 0.01), busy);
  assert.throws(() => core.trainStepAsync(latents(4, E, "x"), 4, 0.01), busy);
  assert.throws(() => core.getAdamState(), busy);
  assert.throws(() => core.trim(), busy);
  assert.ok(Number.isFinite(await step));
  assert.equal(core.busy(), null);
  const after = core.getParams(); // usable again

  // dispose() during a step: later calls say "disposed" at once; the memory goes when the step ends.
  const second = core.trainStepAsync(latents(64, E, "busy-2"), 64, 0.01);
  gen.dispose();
  gen.dispose(); // idempotent
  assert.throws(() => core.getParams(), { name: "Error", message: /disposed/ });
  assert.equal(core.busy(), "trainStepAsync");
  assert.ok(Number.isFinite(await second), "the step in flight still completes and settles");
  assert.equal(core.busy(), null);
  assert.throws(() => core.getParams(), { message: /disposed/ });
  assert.throws(() => core.trainStepAsync(latents(4, E, "x"), 4, 0.01), { message: /disposed/ });
  assert.equal(after.length, P);
});

test("exclusive() runs tasks on a core one after another, in order, so callers never meet the busy error", async () => {
  const gen = smallCore();
  const E = gen.spec.embeddingDim;
  const order: string[] = [];
  const steps = [0, 1, 2].map((s) =>
    gen.exclusive(async () => {
      order.push(`start ${s}`);
      const loss = await gen.trainStepAsync(latents(32, E, `ex-${s}`), 32, 0.01);
      order.push(`end ${s}`);
      return loss;
    }),
  );
  const read = gen.exclusive(() => {
    order.push("read");
    return gen.weights();
  });
  const failing = gen.exclusive(() => {
    throw new Error("task failed");
  });
  const after = gen.exclusive(() => order.push("after a failed task"));
  await Promise.all(steps);
  await read;
  await assert.rejects(failing, /task failed/);
  await after;
  assert.deepEqual(order, ["start 0", "end 0", "start 1", "end 1", "start 2", "end 2", "read", "after a failed task"]);
  gen.dispose();
});

test("slices: sliced normal draws, noise addition and weight averaging equal the one-piece loops", async () => {
  let yields = 0;
  const yieldFn = async (): Promise<void> => {
    yields += 1;
  };
  for (const n of [1, SLICE - 1, SLICE, SLICE + 1, 3 * SLICE + 7]) {
    const a = Rng.fromString("slices").fillNormal(new Float32Array(n), 0.7);
    const rng = Rng.fromString("slices");
    const b = await fillNormalSliced(rng, new Float32Array(n), 0.7, yieldFn);
    assert.deepEqual(bits(b), bits(a), `fill of ${n}`);
    // The stream continues where the one-piece fill leaves it.
    const ref = Rng.fromString("slices");
    ref.fillNormal(new Float32Array(n));
    assert.deepEqual(rng.state(), ref.state(), `stream state after ${n}`);
  }
  assert.ok(yields >= 3, "large fills yield between slices");
  const x = Rng.fromString("x").fillNormal(new Float32Array(2 * SLICE + 3));
  const y = Rng.fromString("y").fillNormal(new Float32Array(2 * SLICE + 3), 0.3);
  const sum = Float32Array.from(x);
  for (let i = 0; i < sum.length; i++) sum[i] += y[i];
  const sliced = Float32Array.from(x);
  await addSliced(sliced, y, yieldFn);
  assert.deepEqual(bits(sliced), bits(sum));
  const avg = Float32Array.from(x);
  for (let i = 0; i < avg.length; i++) avg[i] = 0.93 * avg[i] + (1 - 0.93) * y[i];
  const avgSliced = Float32Array.from(x);
  await emaSliced(avgSliced, y, 0.93, yieldFn);
  assert.deepEqual(bits(avgSliced), bits(avg));
  await assert.rejects(emaSliced(new Float32Array(3), new Float32Array(4), 0.5, undefined), RangeError);
});

/**
 * What the native trainer computes, replayed with the synchronous core calls in one piece: init
 * weights, training latents (+ privacy noise), Adam steps at the scheduled rate, the weight
 * average and its validation loss, epoch by epoch.
 */
function replay(id: string, cfg: ModelConfig, stepsPerEpoch: number, epochs: number) {
  const targets = buildTargets(META);
  const spec = generatorSpec(cfg.model_size, cfg.embedding_dim, targets.layout);
  const E = spec.embeddingDim;
  const B = cfg.batch_size;
  const noise = cfg.privacy_enabled ? cfg.privacy_noise : 0;
  const init = initParams(spec, Rng.fromString(`${id}:init`));
  const gen = NativeGenerator.create(spec, targets.layout, init);
  gen.setTargets(targets);
  gen.setEntropyPenalty(ENTROPY_PENALTY);
  const evalCore = NativeGenerator.create(spec, targets.layout, init);
  evalCore.setTargets(targets);
  const schedule = makeSchedule(cfg.learning_rate, cfg.max_epochs * stepsPerEpoch);
  const rng = Rng.fromString(`${id}:train`);
  const valRng = Rng.fromString(`${id}:val`);
  const val = valRng.fillNormal(new Float32Array(VAL_SIZE * E));
  if (noise > 0) {
    const eps = valRng.fillNormal(new Float32Array(VAL_SIZE * E), noise);
    for (let i = 0; i < val.length; i++) val[i] += eps[i];
  }
  const ema = flattenParams(spec, init);
  const out: { trainLoss: number; valLoss: number; weights: Float32Array; ema: Float32Array; boundaries: Float32Array[] }[] = [];
  let step = 0;
  for (let e = 0; e < epochs; e++) {
    let sum = 0;
    const boundaries: Float32Array[] = [];
    for (let s = 0; s < stepsPerEpoch; s++) {
      const z = rng.fillNormal(new Float32Array(B * E));
      if (noise > 0) {
        const eps = rng.fillNormal(new Float32Array(B * E), noise);
        for (let i = 0; i < z.length; i++) z[i] += eps[i];
      }
      sum += gen.trainStep(z, B, learningRate(schedule, step));
      step += 1;
      boundaries.push(gen.raw.getParams());
    }
    const beta = emaDecay(step, stepsPerEpoch);
    const latest = gen.raw.getParams();
    for (let i = 0; i < ema.length; i++) ema[i] = beta * ema[i] + (1 - beta) * latest[i];
    evalCore.raw.setParams(ema);
    out.push({ trainLoss: sum / stepsPerEpoch, valLoss: evalCore.evalLoss(val, VAL_SIZE), weights: latest, ema: Float32Array.from(ema), boundaries });
  }
  gen.dispose();
  evalCore.dispose();
  return { spec, out };
}

const flatOf = (spec: ReturnType<typeof generatorSpec>, ck: Checkpoint, which: "weights" | "ema_weights"): Float32Array => {
  const state = decodeCheckpoint(structuredClone(ck), spec);
  return flattenParams(spec, which === "weights" ? state.weights : (state.emaWeights as NamedArrays));
};

test("Trainer (native): asynchronous steps, sliced draws (large batch, privacy noise) and sliced averaging are bit-identical to the synchronous replay", async () => {
  const id = "mdl_0a5c0a5c0a5c";
  // batch x embedding_dim = 72,000 values > SLICE: the latents and the noise are drawn in slices.
  const cfg = config({ batch_size: 9000, privacy_enabled: true, privacy_noise: 0.3 });
  assert.ok(cfg.batch_size * cfg.embedding_dim > SLICE);
  const { spec, out } = replay(id, cfg, 3, 2);
  const tr = await Trainer.create({ id, metadata: META, config: cfg, stepsPerEpoch: 3, compute: "native" });
  assert.equal(tr.compute, "native");
  let yields = 0;
  const yieldFn = (): Promise<void> => new Promise((r) => setImmediate(() => r(void yields++)));
  for (let e = 0; e < 2; e++) {
    const r = (await tr.runEpoch({ yieldFn }))!;
    assert.equal(r.trainLoss, out[e].trainLoss, `train_loss, epoch ${e + 1}`);
    assert.equal(r.valLoss, out[e].valLoss, `val_loss, epoch ${e + 1}`);
    const ck = await tr.checkpointInSlices(yieldFn);
    assert.deepEqual(bits(flatOf(spec, ck, "weights")), bits(out[e].weights), `weights, epoch ${e + 1}`);
    assert.deepEqual(bits(flatOf(spec, ck, "ema_weights")), bits(out[e].ema), `weight average, epoch ${e + 1}`);
    assert.deepEqual(ck, tr.checkpoint(), "checkpointInSlices equals checkpoint");
  }
  assert.ok(yields > 6, "the trainer yielded inside steps, not only between them");
  tr.dispose();
});

test("while one model's step runs off the thread, another model generates, and the training model's snapshot waits for exactly that step", async () => {
  const id = "mdl_0b0b0b0b0b0b";
  const cfg = config({ batch_size: 2048 });
  const boundaries = replay(id, cfg, 40, 1).out[0].boundaries; // [k]: the weights after step k + 1

  const a = await trainer("native");
  await a.runEpoch();
  const modelA = a.finish();
  const inputs = prepareInputs({ num_rows: 10, seed: 5 }, 8, 4, 0);

  const b = await Trainer.create({ id, metadata: META, config: cfg, stepsPerEpoch: 40, compute: "native" });
  const bCore = b.generator(false).native!;
  const tick = (): Promise<void> => new Promise((r) => setImmediate(r));
  const epoch = b.runEpoch({ yieldFn: tick });
  /** Waits (turn by turn, no clock) until B's step is in flight on the core. */
  const untilStepInFlight = async (): Promise<void> => {
    for (let turns = 0; bCore.busy !== "trainStepAsync"; turns++) {
      if (turns > 1e6) throw new Error("never saw B's step in flight");
      await tick();
    }
  };
  await untilStepInFlight();
  const s0 = b.step;
  const snap = b.snapshot(false); // B's own weights: queued behind its step in flight
  const codes = await modelA.native!.sampleRows(inputs);
  // A generated while B's step was still in flight (its completion needs a later event-loop turn).
  assert.equal(bCore.busy, "trainStepAsync");
  assert.equal(codes.length, 4);
  assert.ok(codes.every((c) => c.length === 10));
  const copy = (await snap)!;
  assert.ok(copy.native && copy.native !== bCore);
  const w = copy.native.raw.getParams();
  assert.deepEqual(bits(w), bits(boundaries[s0]), `the snapshot holds the weights right after step ${s0 + 1}`);
  disposeGenerator(copy);

  // Stopping B mid-step: dispose is deferred natively and the epoch ends without an error.
  await untilStepInFlight();
  b.dispose();
  assert.equal(bCore.busy, "trainStepAsync");
  assert.equal(await epoch, null);
  assert.equal(await b.snapshot(false), null);
  disposeGenerator(modelA);
});
