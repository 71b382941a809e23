/**
 * Differential privacy of the marginals (issue 5, `src/sdk/metadata/dp.ts`): the (epsilon, delta) -> rho
 * conversion, the budget split and noise scale against their formulas, the noise actually added
 * (empirical standard deviation), the exponential mechanism, and the private metadata itself.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import typia from "typia";
import { analyzeTable, cdpDelta, cdpRho, cdpRhoBound, planPrivacy, type Table } from "../src/sdk";
import { privateMetadata } from "../src/sdk/metadata/dp";
import { DEFAULT_DELTA } from "../src/sdk/metadata/dp-accounting";
import { exponentialMechanism, gaussianMechanism, uniformSource } from "../src/sdk/metadata/dp-mechanisms";
import { impliedPairs, rake } from "../src/sdk/metadata/dp-postprocess";
import { counts1 } from "../src/sdk/metadata/marginals";
import { encodeTable } from "../src/sdk/metadata/metadata";
import type { CreateModelRequest } from "../src/contract";

const validateCreate = typia.createValidateEquals<CreateModelRequest>();

function std(xs: ArrayLike<number>): { mean: number; sd: number } {
  let s = 0;
  for (let i = 0; i < xs.length; i++) s += xs[i];
  const mean = s / xs.length;
  let v = 0;
  for (let i = 0; i < xs.length; i++) v += (xs[i] - mean) ** 2;
  return { mean, sd: Math.sqrt(v / (xs.length - 1)) };
}

/** A discretized table: x in 0..3, y = x mod 2 (strongly tied to x), z in 0..4 independent. */
function table(n: number): { table: Table; domain: Record<string, number> } {
  const rows: string[][] = [];
  for (let i = 0; i < n; i++) {
    const x = i % 4;
    rows.push([String(x), String(x % 2), String((i * 7) % 5)]);
  }
  return { table: { columns: ["x", "y", "z"], rows }, domain: { x: 4, y: 2, z: 5 } };
}

test("cdpRho matches the reference conversion (Canonne-Kamath-Steinke, cdp2adp.py) and inverts cdpDelta", () => {
  // reference values computed with private-pgm's mechanisms/cdp2adp.py
  const cases: [number, number, number][] = [
    [1, 1e-9, 0.014973057673588523],
    [0.5, 1e-9, 0.003953191141217897],
    [2, 1e-9, 0.056130501796519815],
    [10, 1e-6, 1.5392787638667285],
    [1, 1e-5, 0.03055659519763956],
  ];
  for (const [eps, delta, rho] of cases) {
    const got = cdpRho(eps, delta);
    assert.ok(Math.abs(got - rho) <= 1e-12 * rho, `cdpRho(${eps}, ${delta}) = ${got}, reference ${rho}`);
    const d = cdpDelta(got, eps);
    assert.ok(d <= delta && d > delta * (1 - 1e-9), `delta at that rho is ${d}`);
  }
});

test("the classical bound eps = rho + 2 sqrt(rho ln(1/delta)) gives a smaller rho than the exact conversion", () => {
  for (const eps of [0.1, 1, 4]) {
    const b = cdpRhoBound(eps, 1e-9);
    assert.ok(Math.abs(b + 2 * Math.sqrt(b * Math.log(1e9)) - eps) < 1e-12, "the bound solves its equation");
    assert.ok(b < cdpRho(eps, 1e-9));
  }
});

test("planPrivacy: rho split 1/3 selection, 2/3 measurement; sigma = sqrt(m / (2 rho_measure)); the whole budget is spent", () => {
  const F = 14;
  const p = planPrivacy(F, 1, 1e-9);
  assert.equal(p.rho, cdpRho(1, 1e-9));
  assert.equal(p.delta, DEFAULT_DELTA);
  assert.equal(p.measurements, 2 * F - 1);
  assert.ok(Math.abs(p.rhoSelect - p.rho / 3) < 1e-15);
  assert.ok(Math.abs(p.rhoMeasure - (2 * p.rho) / 3) < 1e-15);
  assert.equal(p.sigma, Math.sqrt(p.measurements / (2 * p.rhoMeasure)));
  assert.ok(Math.abs(p.sigma - Math.sqrt(27 / ((4 * 0.014973057673588523) / 3))) < 1e-9);
  assert.equal(p.selectionRounds, F - 1);
  // spent: Gaussian m/(2 sigma^2) + exponential mechanism rounds * eps_em^2 / 8 = rho
  const spent = p.measurements / (2 * p.sigma ** 2) + (p.selectionRounds * p.epsilonSelect ** 2) / 8;
  assert.ok(Math.abs(spent - p.rho) < 1e-12 * p.rho, `spent ${spent} of ${p.rho}`);
  // two columns: no selection, the whole budget measures 3 marginals
  const two = planPrivacy(2, 1, 1e-9);
  assert.equal(two.rhoSelect, 0);
  assert.equal(two.sigma, Math.sqrt(3 / (2 * two.rho)));
});

test("sigma decreases as epsilon grows", () => {
  const sigmas = [0.1, 0.3, 1, 3, 10, 30].map((e) => planPrivacy(10, e).sigma);
  for (let i = 1; i < sigmas.length; i++) assert.ok(sigmas[i] < sigmas[i - 1], `sigma ${sigmas.join(", ")}`);
});

test("invalid epsilon or delta is a RangeError", () => {
  assert.throws(() => planPrivacy(3, 0), RangeError);
  assert.throws(() => planPrivacy(3, -1), RangeError);
  assert.throws(() => planPrivacy(3, Infinity), RangeError);
  assert.throws(() => planPrivacy(3, 1, 0), RangeError);
  assert.throws(() => planPrivacy(3, 1, 1), RangeError);
});

test("the Gaussian mechanism's noise has mean 0 and standard deviation sigma (50,000 draws)", () => {
  for (const [sigma, seed] of [[36.8, 1], [2.5, 2]] as const) {
    const zeros = new Float64Array(50_000);
    const { mean, sd } = std(gaussianMechanism(zeros, sigma, uniformSource(seed)));
    assert.ok(Math.abs(sd / sigma - 1) < 0.02, `sd ${sd} vs sigma ${sigma}`);
    assert.ok(Math.abs(mean) < (4 * sigma) / Math.sqrt(50_000), `mean ${mean}`);
  }
  // the unseeded (crypto) source too
  const { sd } = std(gaussianMechanism(new Float64Array(50_000), 10, uniformSource()));
  assert.ok(Math.abs(sd / 10 - 1) < 0.02, `crypto sd ${sd}`);
});

test("privateMetadata adds noise at the planned scale: replaying its seeded stream gives the same noisy 1-way sums", async () => {
  const { table: t, domain } = table(1000);
  const enc = await encodeTable(t, { domain });
  const seed = 99;
  const out = privateMetadata(enc, { epsilon: 1, seed });
  const plan = planPrivacy(3, 1);
  assert.equal(out.privacy.sigma, plan.sigma);
  const src = uniformSource(seed);
  let num = 0;
  let den = 0;
  enc.codes.forEach((a, f) => {
    const y = gaussianMechanism(counts1(a, enc.codecs[f].K), plan.sigma, src);
    num += y.reduce((s, v) => s + v, 0) / enc.codecs[f].K;
    den += 1 / enc.codecs[f].K;
  });
  assert.equal(out.privacy.nEstimate, num / den);
});

test("over many releases, the row-count estimate varies with the standard deviation the noise scale implies", async () => {
  const { table: t, domain } = table(1000);
  const enc = await encodeTable(t, { domain });
  const plan = planPrivacy(3, 1);
  // n_hat = sum_f (S_f / K_f) / sum_f (1 / K_f), Var(S_f) = K_f sigma^2  =>  sd = sigma / sqrt(sum 1/K_f)
  const expected = plan.sigma / Math.sqrt(1 / 4 + 1 / 2 + 1 / 5);
  const est = Array.from({ length: 400 }, (_, s) => privateMetadata(enc, { epsilon: 1, seed: 1000 + s }).privacy.nEstimate);
  const { mean, sd } = std(est);
  assert.ok(Math.abs(sd / expected - 1) < 0.15, `sd ${sd} vs ${expected}`);
  assert.ok(Math.abs(mean - 1000) < (4 * expected) / Math.sqrt(400), `mean ${mean}`);
});

test("private metadata: valid distributions, a spanning tree of pairs, the budget recorded in column_stats, accepted by the server", async () => {
  const { table: t, domain } = table(2000);
  const a = await analyzeTable(t, { domain, privacy: { epsilon: 2, delta: 1e-7, seed: 5 } });
  const m = a.metadata;
  const plan = planPrivacy(3, 2, 1e-7);
  assert.deepEqual(m.cardinalities, domain);
  assert.equal(a.selection.tree.length, 2, "F - 1 pairs measured");
  assert.equal(m.marginals!.length, 3, "the third pair is sent as the tree implies it");
  assert.equal(a.privacy!.impliedPairs, 1);
  for (const f of m.features) {
    const p = m.empirical_probs[f];
    assert.ok(p.every((v) => v >= 0));
    assert.ok(Math.abs(p.reduce((s, v) => s + v, 0) - 1) < 1e-9);
    assert.deepEqual(m.column_stats![f].privacy, { epsilon: 2, delta: 1e-7, rho: plan.rho, sigma: plan.sigma });
    assert.equal(m.column_stats![f].missing, 0);
    assert.ok(Math.abs(m.column_stats![f].count - 2000) < 6 * plan.sigma, "the count is an estimate, not n");
  }
  for (const { features: [f, g], probs } of m.marginals!) {
    assert.ok(probs.every((v) => v >= 0));
    assert.ok(Math.abs(probs.reduce((s, v) => s + v, 0) - 1) < 1e-9);
    const Kf = m.cardinalities[f];
    const Kg = m.cardinalities[g];
    // measured pairs are raked to the 1-way estimates: columns exactly (the last IPF step), rows
    // closely (structural zeros, here y = x mod 2, make the noisy margins slightly incompatible);
    // the implied pair inherits that closeness
    for (let i = 0; i < Kf; i++) {
      let row = 0;
      for (let j = 0; j < Kg; j++) row += probs[i * Kg + j];
      assert.ok(Math.abs(row - m.empirical_probs[f][i]) < 2e-3, `row ${i} of ${f},${g}: ${row} vs ${m.empirical_probs[f][i]}`);
    }
    for (let j = 0; j < Kg; j++) {
      let col = 0;
      for (let i = 0; i < Kf; i++) col += probs[i * Kg + j];
      const measured = a.selection.tree.some(([p, q]) => m.features[p] === f && m.features[q] === g);
      assert.ok(Math.abs(col - m.empirical_probs[g][j]) < (measured ? 1e-9 : 2e-3), `column ${j} of ${f},${g}`);
    }
  }
  // x and y determine each other's parity: the private marginal keeps that (noise is small at n = 2000)
  const xy = m.marginals!.find((x) => x.features[0] === "x" && x.features[1] === "y");
  assert.ok(xy, "the strong x-y pair is selected");
  const offParity = xy!.probs.filter((_, k) => Math.floor(k / 2) % 2 !== k % 2).reduce((s, v) => s + v, 0);
  assert.ok(offParity < 0.05, `mass where y != x mod 2: ${offParity}`);
  assert.ok(validateCreate({ metadata: m }).success);
  assert.ok(a.privacy && a.privacy.pairs.length === 2);
});

test("the same seed gives the same release; without a seed releases differ", async () => {
  const { table: t, domain } = table(500);
  const enc = await encodeTable(t, { domain });
  assert.deepEqual(privateMetadata(enc, { epsilon: 1, seed: 3 }).metadata, privateMetadata(enc, { epsilon: 1, seed: 3 }).metadata);
  assert.notDeepEqual(privateMetadata(enc, { epsilon: 1 }).metadata.empirical_probs, privateMetadata(enc, { epsilon: 1 }).metadata.empirical_probs);
});

test("codes whose noisy count is below 3 sigma are merged and share their group's mass evenly", async () => {
  // z has 40 codes, only 0 and 1 used; at epsilon 1 (sigma ~ 16) the 38 empty codes fall below 3 sigma
  const rows: string[][] = [];
  for (let i = 0; i < 3000; i++) rows.push([String(i % 2), String(i % 3 === 0 ? 1 : 0), String(i % 2)]);
  const a = await analyzeTable({ columns: ["x", "y", "z"], rows }, { domain: { x: 2, y: 2, z: 40 }, privacy: { epsilon: 1, seed: 11 } });
  assert.equal(a.privacy!.compressed.z, 3, "codes 0, 1 and one group");
  const pz = a.metadata.empirical_probs.z;
  const rest = pz.slice(2);
  assert.ok(rest.every((v) => Math.abs(v - rest[0]) < 1e-15), "the group's mass is spread evenly");
  assert.ok(pz[0] > 0.45 && pz[1] > 0.45);
});

test("privacy without a domain is refused: the code book would leak", async () => {
  const { table: t } = table(100);
  await assert.rejects(analyzeTable(t, { privacy: { epsilon: 1 } }), (e: unknown) => e instanceof RangeError && /needs a domain/.test(e.message));
});

test("the exponential mechanism prefers high scores in proportion to exp(eps * score / 2)", () => {
  const src = uniformSource(4);
  const counts = [0, 0, 0];
  for (let i = 0; i < 30_000; i++) counts[exponentialMechanism([0, Math.log(2) * 2, Math.log(4) * 2], 1, 1, src)]++;
  // weights 1 : 2 : 4
  assert.ok(Math.abs(counts[0] / 30_000 - 1 / 7) < 0.01, String(counts));
  assert.ok(Math.abs(counts[1] / 30_000 - 2 / 7) < 0.015, String(counts));
  assert.ok(Math.abs(counts[2] / 30_000 - 4 / 7) < 0.015, String(counts));
});

test("rake fits a table to given row and column margins", () => {
  const P = Float64Array.from([0.1, 0.2, 0.3, 0.4]);
  rake(P, 2, 2, [0.5, 0.5], [0.25, 0.75]);
  assert.ok(Math.abs(P[0] + P[1] - 0.5) < 1e-9 && Math.abs(P[2] + P[3] - 0.5) < 1e-9);
  assert.ok(Math.abs(P[0] + P[2] - 0.25) < 1e-9 && Math.abs(P[1] + P[3] - 0.75) < 1e-9);
});

test("impliedPairs: an unmeasured pair gets the tree model's joint (chain x - y - z), other trees are independent", () => {
  const half = Float64Array.from([0.5, 0.5]);
  const measured = new Map([
    ["0,1", Float64Array.from([0.4, 0.1, 0.1, 0.4])],
    ["1,2", Float64Array.from([0.4, 0.1, 0.1, 0.4])],
  ]);
  const out = impliedPairs(4, [2, 2, 2, 2], [half, half, half, Float64Array.from([0.25, 0.75])], measured);
  const xz = out.find((e) => e.i === 0 && e.j === 2)!;
  // diag(1/2) C C with C = [[.8, .2], [.2, .8]]: C^2 = [[.68, .32], [.32, .68]]
  [0.34, 0.16, 0.16, 0.34].forEach((v, k) => assert.ok(Math.abs(xz.P[k] - v) < 1e-12, `cell ${k}: ${xz.P[k]}`));
  const xw = out.find((e) => e.i === 0 && e.j === 3)!;
  assert.deepEqual(Array.from(xw.P), [0.125, 0.375, 0.125, 0.375], "w is in its own tree: independent");
  assert.ok(xz.mi > xw.mi);
  assert.equal(out.length, 6 - 2, "every unmeasured pair");
});
