/**
 * `npm run test:gpu`: the CUDA compute core against the CPU core, on a machine with an NVIDIA GPU
 * (it fails, naming the reason, where no GPU can be used: run it where one is). Not part of
 * `npm test` (test/**), which runs on machines without a GPU and checks the no-GPU behaviour
 * (test/gpu-device.test.ts).
 *
 * Workload: the medium generator (z 64, hidden 512, 1 residual block) on the Adult table's 14
 * discretised features (588 codes) with every 1-way and all 91 2-way marginals as targets: the
 * model of `bench compute`. Checks:
 * - loss and gradients equal to the CPU core's within 1e-4 relative error (FP32), in the dense and
 *   the per-block 2-way modes, with the entropy penalty, and the validation loss;
 * - codes identical to the CPU sampling kernel's for the same logits and uniforms (plain,
 *   temperature + top-p);
 * - a model trained on the GPU, written to a checkpoint, resumes and generates on the CPU (logits
 *   within 1e-5, the next step's loss within 1e-4), and the reverse;
 * - bad inputs (non-finite latents, uniforms outside [0, 1)) give the CPU path's errors.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { checkpointWeights, decodeCheckpoint, encodeCheckpoint, type TrainingState } from "../src/model/training/checkpoint";
import { generatorSpec, initParams, type NamedArrays } from "../src/model/generator/generator";
import { buildTargets, type MarginalTargets } from "../src/model/generator/targets";
import { flattenParams, gpuStatus } from "../src/model/compute/native-core";
import { NativeGenerator } from "../src/model/compute/native-generator";
import { Rng } from "../src/model/sampling/xoshiro";
import { makeSchedule } from "../src/model/training/schedule";
import { sampleCodes } from "../src/model/sampling/sampling";
import { discreteMetadata } from "../bench/adult";

/** The datasets folder: $SYNTHD_DATASETS, else ../shared/datasets beside the repository. */
const DATASETS = process.env.SYNTHD_DATASETS ?? join(__dirname, "..", "..", "..", "shared", "datasets");

/** ‖a − b‖ / ‖b‖ in float64. */
function relErr(a: Float32Array, b: Float32Array): number {
  assert.equal(a.length, b.length);
  let num = 0;
  let den = 0;
  for (let i = 0; i < a.length; i++) {
    const d = a[i] - b[i];
    num += d * d;
    den += b[i] * b[i];
  }
  return Math.sqrt(num / den);
}

function flat(g: NamedArrays, names: string[]): Float32Array {
  const total = names.reduce((s, n) => s + g[n].length, 0);
  const out = new Float32Array(total);
  let at = 0;
  for (const n of names) {
    out.set(g[n], at);
    at += g[n].length;
  }
  return out;
}

const status = gpuStatus();
const targets: MarginalTargets = buildTargets(discreteMetadata(join(DATASETS, "adult-discrete.csv"), join(DATASETS, "adult-discrete-domain.json")));
const spec = generatorSpec("medium", 64, targets.layout);
const E = spec.embeddingDim;
const F = targets.layout.cardinalities.length;
const D = spec.outputDim;
const weights0 = initParams(spec, Rng.fromString("gpu-test:init"));

function pair(mode: "dense" | "blocks" = "dense", weights: NamedArrays = weights0): { cpu: NativeGenerator; gpu: NativeGenerator } {
  const cpu = NativeGenerator.create(spec, targets.layout, weights, { device: "cpu" });
  const gpu = NativeGenerator.create(spec, targets.layout, weights, { device: "gpu" });
  assert.equal(cpu.setTargets(targets, mode), mode);
  assert.equal(gpu.setTargets(targets, mode), mode);
  return { cpu, gpu };
}

test("a CUDA GPU is present and the CUDA core loads", () => {
  assert.ok(status.available, `no usable GPU: ${status.reason} (library ${status.library})`);
  console.log(`# GPU: ${status.device} (${status.devices} device(s)), ${status.library}`);
  const g = NativeGenerator.create(spec, targets.layout, weights0, { device: "gpu" });
  assert.equal(g.device, status.device);
  const a = NativeGenerator.create(spec, targets.layout, weights0, { device: "auto" });
  assert.equal(a.device, status.device, "auto picks the GPU when one is present");
  g.dispose();
  a.dispose();
});

for (const mode of ["dense", "blocks"] as const) {
  test(`loss and gradients match the CPU core within 1e-4 (2-way mode ${mode}, batch 256 and 2048)`, () => {
    const { cpu, gpu } = pair(mode);
    const names = Object.keys(weights0);
    for (const n of [256, 2048]) {
      const z = Rng.fromString(`gpu-test:z${n}`).fillNormal(new Float32Array(n * E));
      const a = cpu.lossAndGrads(z, n);
      const b = gpu.lossAndGrads(z, n);
      const lossErr = Math.abs(b.loss - a.loss) / Math.abs(a.loss);
      const gradErr = relErr(flat(b.grads, names), flat(a.grads, names));
      console.log(`# ${mode} n=${n}: loss cpu ${a.loss} gpu ${b.loss} rel ${lossErr.toExponential(2)}; grad rel ${gradErr.toExponential(2)}`);
      assert.ok(lossErr < 1e-4, `loss relative error ${lossErr}`);
      assert.ok(gradErr < 1e-4, `gradient relative error ${gradErr}`);
      for (const name of names) {
        const e = relErr(b.grads[name], a.grads[name]);
        assert.ok(e < 1e-4, `${name}: gradient relative error ${e}`);
      }
    }
    cpu.dispose();
    gpu.dispose();
  });
}

test("the entropy penalty's gradient and the validation loss match the CPU core", () => {
  const { cpu, gpu } = pair();
  cpu.setEntropyPenalty(0.05);
  gpu.setEntropyPenalty(0.05);
  const n = 512;
  const z = Rng.fromString("gpu-test:ent").fillNormal(new Float32Array(n * E));
  const names = Object.keys(weights0);
  const a = cpu.lossAndGrads(z, n);
  const b = gpu.lossAndGrads(z, n);
  assert.ok(relErr(flat(b.grads, names), flat(a.grads, names)) < 1e-4);
  const nv = 40000; // several evaluation chunks on the GPU
  const zv = Rng.fromString("gpu-test:val").fillNormal(new Float32Array(nv * E));
  const la = cpu.evalLoss(zv, nv);
  const lb = gpu.evalLoss(zv, nv);
  assert.ok(Math.abs(lb - la) / la < 1e-4, `validation loss ${lb} vs ${la}`);
  cpu.dispose();
  gpu.dispose();
});

test("training steps follow the CPU core's losses", () => {
  const { cpu, gpu } = pair();
  const rng = Rng.fromString("gpu-test:steps");
  for (let s = 0; s < 10; s++) {
    const z = rng.fillNormal(new Float32Array(256 * E));
    const la = cpu.trainStep(z, 256, 1e-3);
    const lb = gpu.trainStep(z, 256, 1e-3);
    assert.ok(Math.abs(lb - la) / la < 1e-3, `step ${s}: loss ${lb} vs ${la}`);
  }
  assert.equal(gpu.adamState().t, 10);
  cpu.dispose();
  gpu.dispose();
});

test("codes are identical to the CPU sampling kernel's for the same logits and uniforms", () => {
  const g = NativeGenerator.create(spec, targets.layout, weights0, { device: "gpu" });
  const n = 50000;
  const z = Rng.fromString("gpu-test:gen").fillNormal(new Float32Array(n * E));
  const u = Rng.fromString("gpu-test:u").fillUniform(new Float64Array(n * F));
  for (const [temperature, topP] of [
    [1, null],
    [0.7, 0.9],
    [1.3, 0.5],
    [1, 0],
  ] as [number, number | null][]) {
    const logits = new Float32Array(n * D);
    const codes = g.generateWithLogits(z, n, u, temperature, topP, logits);
    const ref = sampleCodes(logits, n, targets.layout.cardinalities, u, { temperature, topP });
    let diff = 0;
    for (let i = 0; i < ref.length; i++) if (codes[i] !== ref[i]) diff++;
    assert.equal(diff, 0, `temperature ${temperature}, top_p ${topP}: ${diff} codes differ`);
  }
  g.dispose();
});

function checkpointOf(g: NativeGenerator, step: number): TrainingState {
  const w = g.weights();
  return {
    spec,
    cardinalities: [...targets.layout.cardinalities],
    epoch: 1,
    step,
    elapsedS: 1,
    trainLoss: null,
    valLoss: null,
    bestValLoss: null,
    bestEpoch: 0,
    epochsSinceImprovement: 0,
    weights: w,
    emaWeights: w,
    bestWeights: null,
    adam: g.adamState(),
    schedule: makeSchedule(1e-3, 1000),
    stepsPerEpoch: 20,
    rng: [1, 2, 3, 4],
  };
}

for (const [from, to] of [
  ["gpu", "cpu"],
  ["cpu", "gpu"],
] as const) {
  test(`a model trained on the ${from} resumes and generates on the ${to} from its checkpoint`, () => {
    const a = NativeGenerator.create(spec, targets.layout, weights0, { device: from });
    a.setTargets(targets);
    const rng = Rng.fromString(`gpu-test:train-${from}`);
    for (let s = 0; s < 20; s++) a.trainStep(rng.fillNormal(new Float32Array(256 * E)), 256, 1e-3);
    const stored = encodeCheckpoint(checkpointOf(a, 20));
    const state = decodeCheckpoint(stored, spec);
    const b = NativeGenerator.create(spec, targets.layout, checkpointWeights(stored, spec, false), { device: to });
    b.setTargets(targets);
    b.setAdamState(state.adam);
    assert.equal(b.device === "cpu", to === "cpu");
    // Same weights on both: logits agree to float32 rounding.
    const n = 4096;
    const z = Rng.fromString("gpu-test:resume-z").fillNormal(new Float32Array(n * E));
    const la = a.logits(z, n);
    const lb = b.logits(z, n);
    assert.ok(relErr(lb, la) < 1e-5, `logits relative error ${relErr(lb, la)}`);
    // Generation on the other device: codes differ only where a uniform is within rounding of a boundary.
    const u = Rng.fromString("gpu-test:resume-u").fillUniform(new Float64Array(n * F));
    const ca = a.generateWithLogits(z, n, u, 1, null, new Float32Array(n * D));
    const cb = b.generateWithLogits(z, n, u, 1, null, new Float32Array(n * D));
    let diff = 0;
    for (let i = 0; i < ca.length; i++) if (ca[i] !== cb[i]) diff++;
    assert.ok(diff <= ca.length * 1e-3, `${diff} of ${ca.length} codes differ`);
    // The resumed model takes the same next step (Adam's state came along).
    const zs = rng.fillNormal(new Float32Array(256 * E));
    const sa = a.trainStep(zs, 256, 1e-3);
    const sb = b.trainStep(zs, 256, 1e-3);
    assert.ok(Math.abs(sb - sa) / sa < 1e-4, `next step's loss ${sb} vs ${sa}`);
    const pa = flattenParams(spec, a.weights());
    const pb = flattenParams(spec, b.weights());
    assert.ok(relErr(pb, pa) < 1e-4, `weights after the step: relative error ${relErr(pb, pa)}`);
    a.dispose();
    b.dispose();
  });
}

test("bad inputs give the CPU path's errors on the GPU", () => {
  const { cpu, gpu } = pair();
  const n = 1000;
  const z = Rng.fromString("gpu-test:bad").fillNormal(new Float32Array(n * E));
  const u = Rng.fromString("gpu-test:bad-u").fillUniform(new Float64Array(n * F));
  z[777 * E + 3] = NaN;
  for (const g of [cpu, gpu]) {
    assert.throws(() => g.raw.generate(z, n, u, 1, null), { name: "RangeError", message: `z[${777 * E + 3}] = NaN is not finite (row 777)` });
    assert.throws(() => g.logits(z, n), { name: "RangeError", message: /is not finite \(row 777\)/ });
  }
  z[777 * E + 3] = 0;
  u[5 * F + 2] = 1;
  for (const g of [cpu, gpu]) {
    assert.throws(() => g.raw.generate(z, n, u, 1, null), { name: "RangeError", message: `uniforms[${5 * F + 2}] = 1 is outside [0, 1)` });
  }
  cpu.dispose();
  gpu.dispose();
});
