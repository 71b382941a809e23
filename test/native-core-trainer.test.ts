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
import { buildTargets } from "../src/model/marginals";
import { Store } from "../src/store";
import type { Metadata, ModelConfig } from "../src/types";
import { relErr, syntheticMetadata } from "./native-core-fixtures";
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
    const m = store.getModel(id);
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
