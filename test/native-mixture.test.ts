/**
 * Seeded generation's deterministic-mixture update and proposal draw in the native core
 * (`mixtureAccumulate`, `proposalShift`, native/src/mixture_binding.cc) against their TypeScript
 * references (`mixtureAccumulateJs`, `proposalShiftJs`, src/model/conditional.ts): the same bits, so seeded rows do not depend on whether
 * the addon is loaded; a ratio out of float64's range is reported, not written; bad arguments are
 * refused without writing.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mixtureAccumulateJs, proposalShiftJs, weightedGramJs } from "../src/model/conditional";
import { nativeAddon } from "../src/model/compute/native";
import { fillNormalZiggurat, Rng } from "../src/model/sampling/xoshiro";

type Accumulate = typeof mixtureAccumulateJs;

function nativeAccumulate(): Accumulate {
  const mod = nativeAddon() as unknown as { mixtureAccumulate?: Accumulate } | undefined;
  assert.ok(typeof mod?.mixtureAccumulate === "function", "the addon must export mixtureAccumulate (SYNTHD_REQUIRE_NATIVE in CI)");
  return mod!.mixtureAccumulate!;
}

/** A random proposal: r orthonormal-ish rows of E (Gram–Schmidt), C components with lower-triangular L of positive diagonal. */
function proposal(rng: Rng, E: number, r: number, C: number): { V: Float64Array; M: Float64Array; L: Float64Array; K: Float64Array } {
  const V = fillNormalZiggurat(rng, new Float64Array(r * E));
  for (let a = 0; a < r; a++) {
    for (let b = 0; b < a; b++) {
      let d = 0;
      for (let j = 0; j < E; j++) d += V[a * E + j] * V[b * E + j];
      for (let j = 0; j < E; j++) V[a * E + j] -= d * V[b * E + j];
    }
    let nrm = 0;
    for (let j = 0; j < E; j++) nrm += V[a * E + j] ** 2;
    for (let j = 0; j < E; j++) V[a * E + j] /= Math.sqrt(nrm);
  }
  const M = fillNormalZiggurat(rng, new Float64Array(C * r));
  const L = new Float64Array(C * r * r);
  for (let c = 0; c < C; c++) {
    for (let a = 0; a < r; a++) {
      for (let b = 0; b < a; b++) L[c * r * r + a * r + b] = 0.3 * (rng.uniform() - 0.5);
      L[c * r * r + a * r + a] = 0.3 + rng.uniform();
    }
  }
  const K = Float64Array.from({ length: C }, () => Math.log(1 / C) + rng.uniform());
  return { V, M, L, K };
}

test("mixtureAccumulate equals the TypeScript reference bit for bit (E 5..64, r 1..8, C 1..4, counts and starting sums)", () => {
  const native = nativeAccumulate();
  const rng = Rng.fromString("mixture-bits");
  for (const [E, r, C, n] of [[64, 1, 1, 500], [64, 3, 4, 777], [64, 8, 4, 300], [5, 2, 2, 64], [7, 7, 3, 33], [130, 4, 2, 100]] as const) {
    const x = fillNormalZiggurat(rng, new Float32Array(n * E));
    for (let i = 0; i < x.length; i += 97) x[i] *= 4; // some latents far out
    const { V, M, L, K } = proposal(rng, E, r, C);
    const start = Float64Array.from({ length: n }, () => rng.uniform() * 1000);
    const a = start.slice();
    const b = start.slice();
    const count = 1 + Math.floor(rng.uniform() * 65536);
    assert.equal(mixtureAccumulateJs(x, n, E, V, r, M, L, K, count, a), -1);
    assert.equal(native(x, n, E, V, r, M, L, K, count, b), -1);
    assert.deepEqual(b, a, `E=${E} r=${r} C=${C}`);
    assert.ok(a.every((v, i) => v >= start[i]) && a.some((v, i) => v > start[i]), "ratios are >= 0 and some add visibly");
  }
});

test("a ratio past float64's range is reported at its index, by both, and nothing from it on is written", () => {
  const native = nativeAccumulate();
  const E = 8;
  const n = 4;
  const x = new Float32Array(n * E);
  x[2 * E] = 1e20; // row 2 projects far out: with a component wider than the prior (L = 2), exp(0.5 |V^T u|^2 - 0.5 |y|^2) overflows
  const V = new Float64Array(E);
  V[0] = 1;
  const args = [new Float64Array(1), new Float64Array(1).fill(2), new Float64Array(1)] as const;
  const a = new Float64Array(n);
  const b = new Float64Array(n);
  assert.equal(mixtureAccumulateJs(x, n, E, V, 1, ...args, 1, a), 2);
  assert.equal(native(x, n, E, V, 1, ...args, 1, b), 2);
  assert.deepEqual(b, a);
  assert.equal(a[2], 0);
  assert.equal(a[3], 0);
  assert.ok(a[0] > 0 && a[1] > 0);
});

test("mixtureAccumulate refuses wrong types and lengths without writing", () => {
  const native = nativeAccumulate();
  const E = 4;
  const n = 3;
  const x = new Float32Array(n * E);
  const V = new Float64Array(E);
  V[0] = 1;
  const M = new Float64Array(1);
  const L = new Float64Array(1).fill(1);
  const K = new Float64Array(1);
  const mix = new Float64Array(n);
  assert.throws(() => native(x, n, E, V, 1, M, L, K, 1, new Float64Array(n - 1)), /mix has 2 values, expected 3/);
  assert.throws(() => native(new Float32Array(n * E - 1), n, E, V, 1, M, L, K, 1, mix), /x has/);
  assert.throws(() => native(x, n, E, V, 2, M, L, K, 1, mix), /V has/);
  assert.throws(() => native(x, n, E, V, 1, M, L, new Float64Array(0), 1, mix), /at least one component/);
  assert.throws(() => native(x, n, E, V, 1, M, L, K as unknown as Float64Array, 1, new Float32Array(n) as unknown as Float64Array), /mix has the wrong typed array type/);
  assert.throws(() => native(x, n, E, V, E + 1, M, L, K, 1, mix), /r must be <= E/);
  assert.deepEqual(mix, new Float64Array(n));
});

test("proposalShift equals the TypeScript reference bit for bit, and moves the subspace coordinates to m_c + L_c eta", () => {
  const mod = nativeAddon() as unknown as { proposalShift?: typeof proposalShiftJs } | undefined;
  assert.ok(typeof mod?.proposalShift === "function", "the addon must export proposalShift");
  const native = mod!.proposalShift!;
  const rng = Rng.fromString("shift-bits");
  for (const [E, r, C, n] of [[64, 1, 1, 400], [64, 4, 3, 555], [64, 8, 4, 200], [6, 6, 2, 50], [130, 3, 4, 77]] as const) {
    const x0 = fillNormalZiggurat(rng, new Float32Array(n * E));
    const { V, M, L } = proposal(rng, E, r, C);
    const which = Int32Array.from({ length: n }, () => Math.floor(rng.uniform() * C));
    const eta = fillNormalZiggurat(rng, new Float64Array(n * r));
    const a = x0.slice();
    const b = x0.slice();
    proposalShiftJs(a, n, E, V, r, M, L, which, eta);
    native(b, n, E, V, r, M, L, which, eta);
    assert.deepEqual(b, a, `E=${E} r=${r} C=${C}`);
    // V u of a moved row is m_c + L_c eta_i (to float32 rounding), the rest of u is kept.
    const i = n - 1;
    const c = which[i];
    for (let k = 0; k < r; k++) {
      let vu = 0;
      for (let j = 0; j < E; j++) vu += V[k * E + j] * a[i * E + j];
      let want = M[c * r + k];
      for (let q = 0; q <= k; q++) want += L[c * r * r + k * r + q] * eta[i * r + q];
      assert.ok(Math.abs(vu - want) < 1e-4 * (1 + Math.abs(want)), `coordinate ${k}: ${vu} vs ${want}`);
    }
  }
  const x = new Float32Array(8);
  const V = new Float64Array(4).fill(0.5);
  assert.throws(() => native(x, 2, 4, V, 1, new Float64Array(1), new Float64Array(1), Int32Array.from([0, 1]), new Float64Array(2)), /which\[1\] is not a component index/);
  assert.throws(() => native(x, 2, 4, V, 1, new Float64Array(1), new Float64Array(1), new Int32Array(2), new Float64Array(1)), /eta has 1 values, expected 2/);
  assert.deepEqual(x, new Float32Array(8));
});

test("weightedGram equals the TypeScript reference bit for bit (zero weights skipped, the lower triangle only)", () => {
  const mod = nativeAddon() as unknown as { weightedGram?: typeof weightedGramJs } | undefined;
  assert.ok(typeof mod?.weightedGram === "function", "the addon must export weightedGram");
  const rng = Rng.fromString("gram-bits");
  for (const [n, E] of [[4096, 64], [100, 7], [1, 1], [333, 130]] as const) {
    const Y = fillNormalZiggurat(rng, new Float64Array(n * E));
    const w = Float64Array.from({ length: n }, (_, i) => (i % 5 === 0 ? 0 : rng.uniform() / n));
    const a = new Float64Array(E * E);
    const b = new Float64Array(E * E);
    weightedGramJs(Y, n, E, w, a);
    mod!.weightedGram!(Y, n, E, w, b);
    assert.deepEqual(b, a, `n=${n} E=${E}`);
    if (E > 1) assert.equal(a[1], 0, "upper triangle untouched");
  }
  assert.throws(() => mod!.weightedGram!(new Float64Array(6), 2, 3, new Float64Array(2), new Float64Array(8)), /T has 8 values, expected 9/);
});
