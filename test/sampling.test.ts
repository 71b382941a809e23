/**
 * Statistical behaviour of the sampling kernel (DESIGN §2, Generation), checked on both compute
 * paths: `sampleCodes` (the native core when built) and `sampleCodesJs` (the JavaScript reference).
 * Uniforms come from a seeded generator, so every run draws the same codes (no flaky tolerances).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { checkSampleArgs, sampleCodes, sampleCodesJs, type SampleOptions } from "../src/model/sampling/sampling";
import { mulberry32 as rng } from "./fixtures";

type Sampler = (l: Float32Array, n: number, c: readonly number[], u: Float64Array, o: SampleOptions) => Int32Array;
const PATHS: [string, Sampler][] = [
  ["sampleCodes", sampleCodes],
  ["sampleCodesJs", sampleCodesJs],
];

/** n copies of one feature's logits, row-major. */
function repeatRow(row: readonly number[], n: number): Float32Array {
  const out = new Float32Array(n * row.length);
  for (let r = 0; r < n; r++) out.set(row, r * row.length);
  return out;
}

function uniforms(seed: number, count: number): Float64Array {
  const r = rng(seed);
  return Float64Array.from({ length: count }, () => r());
}

/** softmax(logits / T) in float64, from the float32-rounded logits the kernel sees. */
function softmax(logits: readonly number[], T: number): number[] {
  const z = logits.map((x) => Math.fround(x) / T);
  const m = Math.max(...z);
  const e = z.map((v) => Math.exp(v - m));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / s);
}

/** The nucleus (Holtzman et al. 2020): smallest most-probable set with mass >= topP. */
function nucleus(p: readonly number[], topP: number): Set<number> {
  const order = p.map((_, k) => k).sort((a, b) => p[b] - p[a] || a - b);
  const keep = new Set<number>();
  let mass = 0;
  for (const k of order) {
    keep.add(k);
    mass += p[k];
    if (mass >= topP) break;
  }
  return keep;
}

function frequencies(codes: Int32Array, K: number): number[] {
  const counts = new Array<number>(K).fill(0);
  for (const c of codes) counts[c]++;
  return counts.map((c) => c / codes.length);
}

/** Every |freq - p| within 5 binomial standard deviations (plus float slack). */
function assertMatches(freq: number[], p: number[], n: number, label: string): void {
  for (let k = 0; k < p.length; k++) {
    const tol = 5 * Math.sqrt((p[k] * (1 - p[k])) / n) + 1e-9;
    assert.ok(Math.abs(freq[k] - p[k]) <= tol, `${label}: code ${k} frequency ${freq[k]} vs p ${p[k]} (tol ${tol})`);
  }
}

const ROW = [1.2, -0.4, 0.3, 2.1, -1.5, 0.9];

for (const [name, sample] of PATHS) {
  test(`${name}: empirical frequencies match softmax(logits / T)`, () => {
    const n = 200_000;
    for (const T of [1, 0.6, 2.5]) {
      const codes = sample(repeatRow(ROW, n), n, [ROW.length], uniforms(11, n), { temperature: T, topP: null });
      assertMatches(frequencies(codes, ROW.length), softmax(ROW, T), n, `T=${T}`);
    }
  });

  test(`${name}: with top_p, frequencies match the renormalised nucleus`, () => {
    const n = 200_000;
    for (const topP of [0.9, 0.6, 0.35]) {
      const p = softmax(ROW, 1);
      const keep = nucleus(p, topP);
      const mass = [...keep].reduce((a, k) => a + p[k], 0);
      const want = p.map((v, k) => (keep.has(k) ? v / mass : 0));
      const codes = sample(repeatRow(ROW, n), n, [ROW.length], uniforms(12, n), { temperature: 1, topP });
      assertMatches(frequencies(codes, ROW.length), want, n, `topP=${topP}`);
    }
  });

  test(`${name}: top_p never draws a code outside the nucleus`, () => {
    const r = rng(13);
    for (let trial = 0; trial < 40; trial++) {
      const K = 2 + Math.floor(r() * 30);
      const row = Array.from({ length: K }, () => Math.fround(4 * (r() - 0.5)));
      const T = [0.5, 1, 1.7][trial % 3];
      const topP = [0.95, 0.8, 0.5, 0.2, 1e-6][trial % 5];
      const keep = nucleus(softmax(row, T), topP);
      const n = 2_000;
      const u = uniforms(100 + trial, n);
      u[0] = 0;
      u[1] = 1 - 2 ** -53; // extremes of the inverse CDF
      const codes = sample(repeatRow(row, n), n, [K], u, { temperature: T, topP });
      for (const c of codes) assert.ok(keep.has(c), `code ${c} outside nucleus ${[...keep]} (K=${K}, topP=${topP})`);
      if (topP === 1e-6) assert.equal(keep.size, 1); // tiny top_p keeps only the argmax
    }
  });

  test(`${name}: temperature 0.05 concentrates on the argmax`, () => {
    const n = 20_000;
    const row = [0.1, 1.3, 0.8, -2, 1.0];
    const codes = sample(repeatRow(row, n), n, [row.length], uniforms(14, n), { temperature: 0.05, topP: null });
    const freq = frequencies(codes, row.length);
    assert.ok(freq[1] >= 0.99, `argmax frequency ${freq[1]}`);
    // At T = 1 the same logits are far from concentrated.
    const warm = frequencies(sample(repeatRow(row, n), n, [row.length], uniforms(14, n), { temperature: 1, topP: null }), 5);
    assert.ok(warm[1] < 0.5);
  });

  test(`${name}: K = 1 always draws 0; top_p = 1 equals no truncation; column-major layout`, () => {
    const n = 1_000;
    const cards = [1, 4, 1, 3];
    const r = rng(15);
    const logits = Float32Array.from({ length: n * 9 }, () => 3 * (r() - 0.5));
    const u = uniforms(16, n * cards.length);
    const a = sample(logits, n, cards, u, { temperature: 0.9, topP: null });
    const b = sample(logits, n, cards, u, { temperature: 0.9, topP: 1 });
    assert.deepEqual(a, b);
    assert.equal(a.length, cards.length * n);
    for (let f = 0; f < cards.length; f++) {
      for (let row = 0; row < n; row++) {
        const c = a[f * n + row];
        assert.ok(c >= 0 && c < cards[f], `code ${c} for feature ${f}`);
        if (cards[f] === 1) assert.equal(c, 0);
      }
    }
    // Feature 1 of row 0: recompute the inverse-CDF draw by hand from the row's logits.
    const p = softmax(Array.from(logits.subarray(1, 5)), 0.9);
    let acc = 0;
    let want = 3;
    for (let k = 0; k < 4; k++) {
      acc += p[k];
      if (acc > u[1]) {
        want = k;
        break;
      }
    }
    assert.equal(a[1 * n + 0], want);
  });

  test(`${name}: ties in the nucleus keep the smaller index first`, () => {
    // Four equal logits: topP 0.5 keeps exactly codes {0, 1}; 0.25 keeps only {0}.
    const n = 4_000;
    const row = [2, 2, 2, 2];
    const half = frequencies(sample(repeatRow(row, n), n, [4], uniforms(17, n), { temperature: 1, topP: 0.5 }), 4);
    assert.equal(half[2] + half[3], 0);
    assert.ok(half[0] > 0.4 && half[1] > 0.4);
    const quarter = frequencies(sample(repeatRow(row, n), n, [4], uniforms(18, n), { temperature: 1, topP: 0.25 }), 4);
    assert.deepEqual(quarter, [1, 0, 0, 0]);
  });
}

test("checkSampleArgs accepts valid input, including n = 0 and Int32Array cardinalities", () => {
  const opts = { temperature: 1, topP: 0.9 };
  checkSampleArgs(new Float32Array(6), 2, [2, 1], new Float64Array(4), opts);
  checkSampleArgs(new Float32Array(6), 2, Int32Array.from([2, 1]), new Float64Array(4), { temperature: 3, topP: null });
  checkSampleArgs(new Float32Array(0), 0, [5], new Float64Array(0), opts);
  assert.equal(sampleCodes(new Float32Array(0), 0, [5], new Float64Array(0), opts).length, 0);
  assert.equal(sampleCodesJs(new Float32Array(0), 0, [5], new Float64Array(0), opts).length, 0);
});
