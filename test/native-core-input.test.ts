/**
 * Bad input to the native compute core (native/src/train/core_binding.cc) raises a JavaScript
 * error, never a crash: wrong types (TypeError), wrong array lengths, NaN / Infinity weights,
 * latents and targets, zero rows, bad cardinalities and block spans (RangeError), missing targets
 * and use after dispose (Error). After every rejected call the same core still works.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { nativeCore, type NativeGeneratorCore } from "../src/model/compute/native-core";
import { latents, smallCase } from "./native-core-fixtures";

const addon = nativeCore()!;
const { spec, weights, targets } = smallCase();
const E = spec.embeddingDim;
const F = targets.layout.cardinalities.length;
const cards = targets.layout.cardinalities;

function fresh(): { core: NativeGeneratorCore; params: Float32Array } {
  const core = new addon.GeneratorCore(E, spec.hidden, spec.blocks, cards);
  const params = new Float32Array(core.paramCount());
  let at = 0;
  for (const [, size] of core.paramNames()) at += size;
  assert.equal(at, params.length);
  // Same weights as the other tests, flattened in order.
  at = 0;
  for (const [name] of core.paramNames()) {
    params.set(weights[name], at);
    at += weights[name].length;
  }
  core.setParams(params);
  core.setTargets(targets.oneWay, targets.blocks.map((b) => ({ f: b.f, c0: b.c0, c1: b.c1, target: b.target })), targets.count, targets.negEntropy);
  return { core, params };
}

/** The core still computes after a rejected call. */
function stillWorks(core: NativeGeneratorCore): void {
  const { loss } = core.lossAndGrads(latents(4, E, "ok"), 4);
  assert.ok(Number.isFinite(loss));
}

test("constructor: bad dimensions and cardinalities", () => {
  const C = addon.GeneratorCore as unknown as new (...a: unknown[]) => NativeGeneratorCore;
  assert.throws(() => new C(0, 8, 1, [2, 3]), { name: "RangeError", message: /embeddingDim/ });
  assert.throws(() => new C(1.5, 8, 1, [2, 3]), { name: "RangeError", message: /embeddingDim/ });
  assert.throws(() => new C(NaN, 8, 1, [2, 3]), { name: "RangeError", message: /embeddingDim/ });
  assert.throws(() => new C("8", 8, 1, [2, 3]), { name: "TypeError", message: /embeddingDim/ });
  assert.throws(() => new C(4, 0, 1, [2, 3]), { name: "RangeError", message: /hidden/ });
  assert.throws(() => new C(4, 8, -1, [2, 3]), { name: "RangeError", message: /blocks/ });
  assert.throws(() => new C(4, 8, 1, []), { name: "RangeError", message: /at least one feature/ });
  assert.throws(() => new C(4, 8, 1, [2, 0]), { name: "RangeError", message: /cardinalities\[1\]/ });
  assert.throws(() => new C(4, 8, 1, [2, -3]), { name: "RangeError", message: /cardinalities\[1\]/ });
  assert.throws(() => new C(4, 8, 1, [2, 2.5]), { name: "RangeError", message: /cardinalities\[1\]/ });
  assert.throws(() => new C(4, 8, 1, [2, "3"]), { name: "TypeError", message: /cardinalities\[1\]/ });
  assert.throws(() => new C(4, 8, 1, "23"), { name: "TypeError", message: /cardinalities/ });
  assert.throws(() => new C(65536, 65536, 256, [2]), { name: "RangeError", message: /2\^30 parameters/ });
  assert.throws(() => new C(), { name: "TypeError" });
});

test("setParams: wrong type, wrong length, NaN and Infinity weights", () => {
  const { core, params } = fresh();
  assert.throws(() => core.setParams(new Float64Array(params.length) as unknown as Float32Array), { name: "TypeError", message: /Float32Array/ });
  assert.throws(() => core.setParams(Array.from(params) as unknown as Float32Array), { name: "TypeError" });
  assert.throws(() => core.setParams(params.subarray(1)), { name: "RangeError", message: /params has \d+ values, expected paramCount\(\)/ });
  assert.throws(() => core.setParams(new Float32Array(params.length + 1)), { name: "RangeError" });
  assert.throws(() => core.setParams(new Float32Array(0)), { name: "RangeError" });
  const bad = params.slice();
  bad[40] = NaN; // in.W has E*H = 256 values: index 40 is in.W[40]
  assert.throws(() => core.setParams(bad), { name: "RangeError", message: /params\[40\] = NaN is not finite \(in\.W\[40\]\)/ });
  bad[40] = 0;
  bad[params.length - 1] = Infinity;
  assert.throws(() => core.setParams(bad), { name: "RangeError", message: /Infinity is not finite \(out\.b\[/ });
  // Nothing was written by the rejected calls.
  assert.deepEqual(core.getParams(), params);
  stillWorks(core);
  core.dispose();
});

test("setAdamState: bad t, lengths, non-finite or negative moments", () => {
  const { core, params } = fresh();
  const P = params.length;
  const z = new Float32Array(P);
  assert.throws(() => core.setAdamState(-1, z, z), { name: "RangeError", message: /^t must be an integer/ });
  assert.throws(() => core.setAdamState(1.5, z, z), { name: "RangeError", message: /^t must/ });
  assert.throws(() => core.setAdamState(1, z.subarray(2), z), { name: "RangeError", message: /^m has/ });
  assert.throws(() => core.setAdamState(1, z, new Float32Array(P + 3)), { name: "RangeError", message: /^v has/ });
  const v = new Float32Array(P);
  v[7] = -0.5;
  assert.throws(() => core.setAdamState(1, z, v), { name: "RangeError", message: /^v\[7\] = -0.5 must be finite and >= 0 \(in\.W\[7\]\)/ });
  const m = new Float32Array(P);
  m[3] = NaN;
  assert.throws(() => core.setAdamState(1, m, z), { name: "RangeError", message: /^m\[3\] = NaN/ });
  stillWorks(core);
  core.dispose();
});

test("setTargets: bad one-way targets, blocks, spans, counts and modes", () => {
  const { core } = fresh();
  const D = targets.layout.width;
  const ok = targets.blocks.map((b) => ({ f: b.f, c0: b.c0, c1: b.c1, target: b.target }));
  const b0 = ok[0];
  const set = (one: unknown, blocks: unknown, count: unknown = targets.count, ent: unknown = targets.negEntropy, mode?: unknown): void =>
    (core.setTargets as (...a: unknown[]) => void)(one, blocks, count, ent, mode);
  assert.throws(() => set(new Float32Array(D - 1), ok), { name: "RangeError", message: /^oneWay has/ });
  assert.throws(() => set(new Float64Array(D), ok), { name: "TypeError", message: /^oneWay must be a Float32Array/ });
  const neg = targets.oneWay.slice();
  neg[2] = -0.5;
  assert.throws(() => set(neg, ok), { name: "RangeError", message: /^oneWay\[2\] = -0.5/ });
  const nan = targets.oneWay.slice();
  nan[0] = NaN;
  assert.throws(() => set(nan, ok), { name: "RangeError", message: /^oneWay\[0\] = NaN/ });
  assert.throws(() => set(targets.oneWay, "blocks"), { name: "TypeError", message: /^blocks must be an array/ });
  assert.throws(() => set(targets.oneWay, [42]), { name: "TypeError", message: /^blocks\[0\] must be an object/ });
  assert.throws(() => set(targets.oneWay, [{ ...b0, f: F }]), { name: "RangeError", message: /^blocks\[0\]\.f/ });
  assert.throws(() => set(targets.oneWay, [{ ...b0, f: -1 }]), { name: "RangeError", message: /^blocks\[0\]\.f/ });
  assert.throws(() => set(targets.oneWay, [{ ...b0, c0: b0.c0 + 1 }]), { name: "RangeError", message: /must span whole features/ });
  assert.throws(() => set(targets.oneWay, [{ ...b0, c1: b0.c0 }]), { name: "RangeError", message: /must span whole features/ });
  assert.throws(() => set(targets.oneWay, [{ ...b0, c0: 0, c1: cards[0] }]), { name: "RangeError", message: /after feature f/ }); // f with itself
  assert.throws(() => set(targets.oneWay, [{ ...b0, c1: D + 5 }]), { name: "RangeError", message: /^blocks\[0\]\.c1/ });
  assert.throws(() => set(targets.oneWay, [{ ...b0, target: b0.target.subarray(1) }]), { name: "RangeError", message: /^blocks\[0\]\.target has/ });
  const t = b0.target.slice();
  t[1] = Infinity;
  assert.throws(() => set(targets.oneWay, [{ ...b0, target: t }]), { name: "RangeError", message: /^blocks\[0\]\.target\[1\] = Infinity/ });
  assert.throws(() => set(targets.oneWay, [{ f: 0 }]), { name: "TypeError", message: /^blocks\[0\]\.c0 must be a number/ });
  assert.throws(() => set(targets.oneWay, ok, 0), { name: "RangeError", message: /^count/ });
  assert.throws(() => set(targets.oneWay, ok, NaN), { name: "RangeError", message: /^count/ });
  assert.throws(() => set(targets.oneWay, ok, targets.count, NaN), { name: "RangeError", message: /^negEntropy/ });
  assert.throws(() => set(targets.oneWay, ok, targets.count, targets.negEntropy, "sparse"), { name: "RangeError", message: /^mode/ });
  assert.throws(() => set(targets.oneWay, ok, targets.count, targets.negEntropy, 1), { name: "TypeError", message: /^mode/ });
  stillWorks(core); // the earlier targets are still in place
  core.dispose();
});

test("loss, training and evaluation: zero rows, wrong lengths, NaN latents, bad lr, no targets", () => {
  const { core } = fresh();
  const z = latents(10, E, "bad");
  for (const call of [
    (zz: Float32Array, n: unknown) => core.lossAndGrads(zz, n as number),
    (zz: Float32Array, n: unknown) => core.trainStep(zz, n as number, 0.01),
    (zz: Float32Array, n: unknown) => core.evalLoss(zz, n as number),
    (zz: Float32Array, n: unknown) => core.logits(zz, n as number),
  ]) {
    assert.throws(() => call(new Float32Array(0), 0), { name: "RangeError", message: /^n must be a positive integer/ });
    assert.throws(() => call(z, -1), { name: "RangeError", message: /^n must be a positive integer/ });
    assert.throws(() => call(z, 2.5), { name: "RangeError", message: /^n must be a positive integer/ });
    assert.throws(() => call(z, "10"), { name: "TypeError", message: /^n must be a number/ });
    assert.throws(() => call(z, 11), { name: "RangeError", message: /^z has 80 values, expected n \* embeddingDim = 88/ });
    assert.throws(() => call(z, 9), { name: "RangeError", message: /^z has 80 values/ });
    assert.throws(() => call(new Float64Array(80) as unknown as Float32Array, 10), { name: "TypeError", message: /^z must be a Float32Array/ });
    const zn = z.slice();
    zn[17] = NaN;
    assert.throws(() => call(zn, 10), { name: "RangeError", message: /^z\[17\] = NaN is not finite \(row 2\)/ });
  }
  assert.throws(() => core.trainStep(z, 10, NaN), { name: "RangeError", message: /^lr must be finite/ });
  assert.throws(() => core.trainStep(z, 10, -1), { name: "RangeError", message: /^lr must be finite and >= 0/ });
  assert.throws(() => (core.trainStep as (...a: unknown[]) => number)(z, 10), { name: "TypeError", message: /^lr must be a number/ });
  const noTargets = new addon.GeneratorCore(E, spec.hidden, spec.blocks, cards);
  assert.throws(() => noTargets.lossAndGrads(z, 10), { name: "Error", message: /targets are not set/ });
  assert.throws(() => noTargets.trainStep(z, 10, 0.1), { name: "Error", message: /targets are not set/ });
  assert.throws(() => noTargets.evalLoss(z, 10), { name: "Error", message: /targets are not set/ });
  noTargets.dispose();
  stillWorks(core);
  core.dispose();
});

test("generate: bad uniforms, temperature, top_p, zero rows", () => {
  const { core } = fresh();
  const n = 6;
  const z = latents(n, E, "gen");
  const u = new Float64Array(n * F).fill(0.5);
  assert.deepEqual(core.generate(z, n, u, 1, null).length, n * F);
  assert.throws(() => core.generate(new Float32Array(0), 0, new Float64Array(0), 1, null), { name: "RangeError", message: /^n must be a positive integer/ });
  assert.throws(() => core.generate(z, n, new Float32Array(n * F) as unknown as Float64Array, 1, null), { name: "TypeError", message: /^uniforms must be a Float64Array/ });
  assert.throws(() => core.generate(z, n, u.subarray(1), 1, null), { name: "RangeError", message: /^uniforms has 35 values, expected n\*F = 36/ });
  const ub = u.slice();
  ub[5] = 1;
  assert.throws(() => core.generate(z, n, ub, 1, null), { name: "RangeError", message: /^uniforms\[5\] = 1 is outside \[0, 1\)/ });
  ub[5] = NaN;
  assert.throws(() => core.generate(z, n, ub, 1, null), { name: "RangeError", message: /^uniforms\[5\] = NaN/ });
  assert.throws(() => core.generate(z, n, u, 0, null), { name: "RangeError", message: /^temperature must be finite and > 0/ });
  assert.throws(() => core.generate(z, n, u, NaN, null), { name: "RangeError", message: /^temperature/ });
  assert.throws(() => core.generate(z, n, u, 1e-320, null), { name: "RangeError", message: /too small/ });
  assert.equal(core.generate(z, n, u, 1, 0).length, n * F, "top_p 0 is accepted: the most probable code alone");
  assert.throws(() => core.generate(z, n, u, 1, -0.5), { name: "RangeError", message: /^topP must be in \[0, 1\]/ });
  assert.throws(() => core.generate(z, n, u, 1, 1.5), { name: "RangeError", message: /^topP/ });
  assert.throws(() => core.generate(z, n, u, 1, "0.9" as unknown as number), { name: "TypeError", message: /^topP must be a number or null/ });
  stillWorks(core);
  core.dispose();
});

test("generate: codesOut receives the codes and is returned; a wrong type or length is refused", () => {
  const { core } = fresh();
  const n = 6;
  const z = latents(n, E, "gen-out");
  const u = Float64Array.from({ length: n * F }, (_, i) => (i * 0.37) % 1);
  const want = core.generate(z, n, u, 1, null);
  const out = new Int32Array(n * F).fill(-7);
  assert.equal(core.generate(z, n, u, 1, null, undefined, undefined, out), out);
  assert.deepEqual(out, want);
  // With a second set of uniforms: (1 + 1) x F x n codes, into a view of a larger array.
  const extra = Float64Array.from({ length: n * F }, (_, i) => (i * 0.61) % 1);
  const big = new Int32Array(2 * n * F + 5).fill(-7);
  const view = big.subarray(5);
  assert.equal(core.generate(z, n, u, 1, null, undefined, extra, view), view);
  assert.deepEqual(view, core.generate(z, n, u, 1, null, undefined, extra));
  assert.deepEqual(Array.from(big.subarray(0, 5)), [-7, -7, -7, -7, -7], "nothing written outside codesOut");
  assert.throws(() => core.generate(z, n, u, 1, null, undefined, undefined, new Float32Array(n * F) as unknown as Int32Array), { name: "TypeError", message: /^codesOut must be an Int32Array/ });
  assert.throws(() => core.generate(z, n, u, 1, null, undefined, undefined, new Int32Array(n * F - 1)), { name: "RangeError", message: /^codesOut has 35 values, expected \(1 \+ k\)\*n\*F = 36/ });
  assert.throws(() => core.generate(z, n, u, 1, null, undefined, extra, new Int32Array(n * F)), { name: "RangeError", message: /^codesOut has 36 values, expected \(1 \+ k\)\*n\*F = 72/ });
  stillWorks(core);
  core.dispose();
});

test("finite but huge weights: training reports NaN without updating, generation raises RangeError", () => {
  const { core, params } = fresh();
  const huge = params.map((x) => x * 1e37);
  core.setParams(huge);
  const z = latents(8, E, "huge");
  assert.ok(Number.isNaN(core.trainStep(z, 8, 0.01)));
  assert.deepEqual(core.getParams(), huge); // not updated
  assert.equal(core.getAdamState().t, 0);
  assert.throws(() => core.generate(z, 8, new Float64Array(8 * F).fill(0.25), 1, null), { name: "RangeError", message: /^generate: logits\[\d+\] \(row \d+\)/ });
  core.setParams(params);
  stillWorks(core);
  core.dispose();
});

test("a disposed core raises an Error on every method", () => {
  const { core } = fresh();
  core.dispose();
  core.dispose(); // idempotent
  const z = latents(2, E, "d");
  assert.throws(() => core.paramCount(), { name: "Error", message: /disposed/ });
  assert.throws(() => core.getParams(), { message: /disposed/ });
  assert.throws(() => core.setParams(new Float32Array(3)), { message: /disposed/ });
  assert.throws(() => core.lossAndGrads(z, 2), { message: /disposed/ });
  assert.throws(() => core.trainStep(z, 2, 0.1), { message: /disposed/ });
  assert.throws(() => core.generate(z, 2, new Float64Array(2 * F), 1, null), { message: /disposed/ });
});

test("learningRate: non-finite or non-numeric arguments", () => {
  assert.throws(() => addon.learningRate(NaN, 10, 1, 0.02, 0), { name: "RangeError", message: /^peak/ });
  assert.throws(() => addon.learningRate(0.1, 10, 0, 0.02, 0), { name: "RangeError", message: /^warmupSteps/ });
  assert.throws(() => (addon.learningRate as (...a: unknown[]) => number)(0.1, "10", 1, 0.02, 0), { name: "TypeError", message: /^totalSteps/ });
});
