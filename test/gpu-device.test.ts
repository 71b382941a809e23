/**
 * The device choice of the compute core (`config.device`: `cpu`, `gpu`, `auto`) as a user of any
 * machine sees it. On a machine without a usable GPU (CI, developers): `auto` trains and generates
 * on the CPU, `gpu` fails at once with the reason, and the addon still loads and trains. On a
 * machine with one, the same calls pick it and report its name. The GPU's numerics are checked by
 * `npm run test:gpu` (test-gpu/gpu.test.ts), which needs a GPU.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { generatorSpec, initParams } from "../src/model/generator/generator";
import { buildTargets } from "../src/model/generator/targets";
import { gpuStatus, nativeCore, nativeCoreStatus, resolveDevice } from "../src/model/compute/native-core";
import { NativeGenerator } from "../src/model/compute/native-generator";
import { Rng } from "../src/model/sampling/xoshiro";
import { Trainer } from "../src/model/training/trainer";
import { fastConfig, TINY_META } from "./fixtures";

const targets = buildTargets(TINY_META);
const spec = generatorSpec("small", 8, targets.layout);
const weights = initParams(spec, Rng.fromString("gpu-device"));

test("gpuStatus says whether a GPU can be used, and why not", () => {
  assert.ok(nativeCoreStatus().available, "the native core must load (CI builds it)");
  const st = gpuStatus();
  if (st.available) {
    assert.ok(typeof st.device === "string" && st.device.length > 0);
    assert.ok(st.devices >= 1);
  } else {
    // Not built (no nvcc / cuBLAS at install), no driver, or no device: said in words.
    assert.ok(typeof st.reason === "string" && st.reason.length > 10, `reason: ${st.reason}`);
    assert.equal(st.devices, 0);
  }
});

test("device auto computes on the GPU when present, else on the CPU; cpu always on the CPU", () => {
  const st = gpuStatus();
  const auto = NativeGenerator.create(spec, targets.layout, weights, { device: "auto" });
  assert.equal(auto.device, st.available ? st.device : "cpu");
  assert.equal(resolveDevice("auto"), st.available ? "gpu" : "cpu");
  const cpu = NativeGenerator.create(spec, targets.layout, weights, { device: "cpu" });
  assert.equal(cpu.device, "cpu");
  assert.equal(resolveDevice("cpu"), "cpu");
  // Both train: the loss is finite.
  for (const g of [auto, cpu]) {
    g.setTargets(targets);
    const loss = g.trainStep(Rng.fromString("z").fillNormal(new Float32Array(64 * spec.embeddingDim)), 64, 1e-3);
    assert.ok(Number.isFinite(loss));
    g.dispose();
  }
});

test('device "gpu" without a usable GPU fails at once with the reason', async () => {
  const st = gpuStatus();
  if (st.available) {
    const g = NativeGenerator.create(spec, targets.layout, weights, { device: "gpu" });
    assert.equal(g.device, st.device);
    g.dispose();
    const tr = await Trainer.create({ id: "mdl_0000000000g1", metadata: TINY_META, config: fastConfig(1), compute: "native", device: "gpu" });
    assert.equal(tr.device, st.device);
    tr.dispose();
    return;
  }
  const why = new RegExp(`device "gpu" is unavailable: .*${st.reason!.slice(0, 20).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`);
  assert.throws(() => NativeGenerator.create(spec, targets.layout, weights, { device: "gpu" }), why);
  assert.throws(() => resolveDevice("gpu"), why);
  await assert.rejects(
    Trainer.create({ id: "mdl_0000000000g1", metadata: TINY_META, config: fastConfig(1), compute: "native", device: "gpu" }),
    why,
  );
  // The raw addon says the same (a caller bypassing resolveDevice).
  const { GeneratorCore } = nativeCore()!;
  assert.throws(() => new GeneratorCore(8, 256, 1, [2, 3, 2], { device: "gpu" }), /device "gpu" is unavailable/);
  assert.throws(() => new GeneratorCore(8, 256, 1, [2, 3, 2], { device: "tpu" as "gpu" }), RangeError);
});

test("a trainer on device auto reports where it trains", async () => {
  const tr = await Trainer.create({ id: "mdl_0000000000g2", metadata: TINY_META, config: fastConfig(1), compute: "native", device: "auto" });
  const st = gpuStatus();
  assert.equal(tr.device, st.available ? st.device : "cpu");
  await tr.runEpoch();
  tr.dispose();
});
