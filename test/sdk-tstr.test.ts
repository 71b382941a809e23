/**
 * TSTR's logistic regression (`./tstr`) computes, in plain JavaScript, the float32 steps of the
 * tfjs model it replaced; these tests hold it to that model (`./tstr-tfjs-reference`, the old
 * implementation verbatim) bit for bit, on problems that cross tfjs's 48-entry matMul blocks in
 * both directions, end on a partial batch, and use non-default options.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { fitLogistic, rocAuc } from "../src/sdk/evaluate";
import { Rng } from "../src/sdk/generate/sfc32";
import type { LogisticOptions } from "../src/sdk/evaluate/tstr";
import { fitLogisticTfjs } from "./tstr-tfjs-reference";

/** A random problem: F features of the given cardinalities, labels from a random logistic model. */
function problem(seed: number, n: number, cards: number[]): { codes: Int32Array[]; labels: Uint8Array } {
  const rng = new Rng(seed);
  const codes = cards.map((K) => Int32Array.from({ length: n }, () => rng.int(K)));
  const weights = cards.map((K) => Array.from({ length: K }, () => rng.next() * 4 - 2));
  const labels = Uint8Array.from({ length: n }, (_, r) => {
    let s = -0.5;
    codes.forEach((c, f) => (s += weights[f][c[r]]));
    return rng.next() < 1 / (1 + Math.exp(-s)) ? 1 : 0;
  });
  return { codes, labels };
}

const cases: { name: string; seed: number; n: number; cards: number[]; opts: LogisticOptions }[] = [
  { name: "defaults, one partial batch", seed: 1, n: 300, cards: [3, 5, 2], opts: {} },
  { name: "many 48-wide blocks of weights, batches of 100 rows", seed: 2, n: 1234, cards: [70, 9, 33, 1, 60], opts: { epochs: 3, batchSize: 100 } },
  { name: "batches longer than 48 rows and a short last one", seed: 3, n: 2049, cards: [12, 4, 7, 7], opts: { batchSize: 512, seed: 9 } },
  { name: "large steps and no penalty", seed: 4, n: 500, cards: [6, 6], opts: { learningRate: 20, l2: 0, epochs: 4, batchSize: 64 } },
  { name: "strong penalty, tiny batches", seed: 5, n: 120, cards: [2, 3, 50], opts: { l2: 0.3, learningRate: 0.2, batchSize: 7 } },
];

for (const c of cases) {
  test(`fitLogistic equals the tfjs model bit for bit: ${c.name}`, async () => {
    const { codes, labels } = problem(c.seed, c.n, c.cards);
    const fast = await fitLogistic(codes, c.cards, labels, c.opts);
    const ref = await fitLogisticTfjs(codes, c.cards, labels, c.opts);
    assert.ok(Object.is(fast.bias, ref.bias), `bias ${fast.bias} vs ${ref.bias}`);
    assert.deepEqual(fast.offsets, ref.offsets);
    assert.equal(fast.weights.length, ref.weights.length);
    for (let i = 0; i < ref.weights.length; i++) assert.ok(Object.is(fast.weights[i], ref.weights[i]), `weight ${i}: ${fast.weights[i]} vs ${ref.weights[i]}`);
    assert.deepEqual(fast.logits(codes), ref.logits(codes));
    assert.equal(rocAuc(fast.logits(codes), labels), rocAuc(ref.logits(codes), labels));
  });
}

test("fitLogistic refuses a code outside its feature's code space", async () => {
  const labels = Uint8Array.from([0, 1, 0]);
  await assert.rejects(fitLogistic([Int32Array.from([0, 1, 3])], [3], labels), RangeError);
  await assert.rejects(fitLogistic([Int32Array.from([0, -1, 2])], [3], labels), RangeError);
  await assert.rejects(fitLogistic([Int32Array.from([0, 1, 2])], [3, 2], labels), RangeError);
});
