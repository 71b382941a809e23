/**
 * Seeded (conditional) generation (src/model/conditional.ts).
 *
 * Exactness (issue 12, acceptance 1): the test model's first layer sees the latent z only through
 * y = P z, P a random 2 x E matrix with orthonormal rows (the other weights are random, the output
 * layer scaled up so features depend strongly on y). Since z ~ N(0, I_E) gives y ~ N(0, I_2), the
 * model's exact conditional is a 2-D integral over y, computed here by the midpoint rule on a
 * 512 x 512 grid over [-8, 8]^2 (262,144 latents). A Monte Carlo reference from 200,000 prior
 * latents would not do for the rare condition: at probability 0.3% its own effective sample is
 * ~600 latents, noisier than the 100,000 rows it is compared with. The sampler itself works in
 * all E dimensions and knows nothing of P.
 * The test draws 100,000 rows under a common and a rare condition and compares the joint
 * distribution of the free columns (and of the range-conditioned column, drawn restricted to its
 * set) with the reference by Pearson's chi-square test (cells with expected count < 5 pooled);
 * p-values from @stdlib/stats-base-dists-chisquare-cdf.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import chisquareCdf from "@stdlib/stats-base-dists-chisquare-cdf";
import { errorFunction } from "simple-statistics";
import { initBackend } from "../src/model/compute/backend";
import {
  ConditionError,
  fillNormalZiggurat,
  sampleConditional,
  sampleSeeded,
  systematicCounts,
  type RowCondition,
} from "../src/model/conditional";
import { initParams, toTensors, type GeneratorSpec, type NamedArrays } from "../src/model/generator/generator";
import { forwardLogits } from "../src/model/sampling/sample-rows";
import { InputError } from "../src/model/sampling/inputs";
import type { Layout } from "../src/model/generator/targets";
import { NativeGenerator } from "../src/model/compute/native-generator";
import { nativeCoreStatus } from "../src/model/compute/native-core";
import { Rng } from "../src/model/sampling/xoshiro";
import type { GeneratorModel } from "../src/model/generator/model";
import { mulberry32 } from "./fixtures";

const E = 6;
const NAMES = ["a", "b", "c", "d", "e"];
const CARDS = [2, 3, 4, 5, 6];
const OFFSETS = CARDS.reduce((o, k) => [...o, o[o.length - 1] + k], [0]);
const D = OFFSETS[OFFSETS.length - 1];
const LAYOUT: Layout = { features: NAMES, cardinalities: CARDS, offsets: OFFSETS, width: D };
const SPEC: GeneratorSpec = { embeddingDim: E, hidden: 24, blocks: 1, outputDim: D };
const F = CARDS.length;

/** The 2 x E projection P (orthonormal rows) and the weights of the test model (module comment). */
function testWeights(): { P: Float64Array; weights: NamedArrays } {
  const weights = initParams(SPEC, Rng.fromString("conditional-test:init"));
  const u = mulberry32(12);
  const normal = (): number => Math.sqrt(-2 * Math.log(1 - u())) * Math.cos(2 * Math.PI * u());
  const P = new Float64Array(2 * E);
  for (let a = 0; a < 2; a++) {
    for (let j = 0; j < E; j++) P[a * E + j] = normal();
    for (let b = 0; b < a; b++) {
      let d = 0;
      for (let j = 0; j < E; j++) d += P[a * E + j] * P[b * E + j];
      for (let j = 0; j < E; j++) P[a * E + j] -= d * P[b * E + j];
    }
    let s = 0;
    for (let j = 0; j < E; j++) s += P[a * E + j] ** 2;
    for (let j = 0; j < E; j++) P[a * E + j] /= Math.sqrt(s);
  }
  const H = SPEC.hidden;
  const W2 = Float64Array.from({ length: 2 * H }, () => 1.5 * normal());
  const inW = weights["in.W"]; // E x H
  for (let j = 0; j < E; j++) for (let h = 0; h < H; h++) inW[j * H + h] = P[j] * W2[h] + P[E + j] * W2[H + h];
  const outW = weights["out.W"];
  for (let i = 0; i < outW.length; i++) outW[i] *= 4;
  return { P, weights };
}

let tfReady: Promise<unknown> | undefined;

/** The test model on the native core when it loads (else tfjs), or on tfjs when asked. */
async function makeModel(weights: NamedArrays, path: "native" | "tfjs" = nativeCoreStatus().available ? "native" : "tfjs"): Promise<GeneratorModel> {
  if (path === "native") return { spec: SPEC, layout: LAYOUT, params: {}, native: NativeGenerator.create(SPEC, LAYOUT, weights) };
  tfReady ??= initBackend();
  await tfReady;
  return { spec: SPEC, layout: LAYOUT, params: toTensors(SPEC, weights) };
}

/** Per grid point y: its quadrature weight phi(y) h^2 and the kernel's probabilities (tempered, optionally truncated). */
interface Grid {
  n: number;
  w: Float64Array;
  /** n x D: p_f(k | y), temperature T, no truncation (the weights use these). */
  p: Float64Array;
  /** n x D: the kernel's draw probabilities with nucleus truncation (free features). */
  pTrunc: Float64Array;
}

const G = 512;
const HALF = 8;

function grid(model: GeneratorModel, P: Float64Array, T = 1, topP: number | null = null): Grid {
  const n = G * G;
  const h = (2 * HALF) / G;
  const z = new Float32Array(n * E);
  const w = new Float64Array(n);
  for (let i = 0; i < G; i++) {
    for (let j = 0; j < G; j++) {
      const y1 = -HALF + (i + 0.5) * h;
      const y2 = -HALF + (j + 0.5) * h;
      const r = i * G + j;
      w[r] = (Math.exp(-0.5 * (y1 * y1 + y2 * y2)) / (2 * Math.PI)) * h * h;
      for (let k = 0; k < E; k++) z[r * E + k] = y1 * P[k] + y2 * P[E + k];
    }
  }
  const p = new Float64Array(n * D);
  const pTrunc = new Float64Array(n * D);
  const e = new Float64Array(8);
  for (let r0 = 0; r0 < n; r0 += 8192) {
    const m = Math.min(8192, n - r0);
    const logits = forwardLogits(model, z.subarray(r0 * E, (r0 + m) * E), m);
    for (let r = 0; r < m; r++) {
      for (let f = 0; f < F; f++) {
        const o = r * D + OFFSETS[f];
        const K = CARDS[f];
        let mx = -Infinity;
        for (let k = 0; k < K; k++) mx = Math.max(mx, logits[o + k] / T);
        let s = 0;
        for (let k = 0; k < K; k++) s += e[k] = Math.exp(logits[o + k] / T - mx);
        const po = (r0 + r) * D + OFFSETS[f];
        for (let k = 0; k < K; k++) p[po + k] = e[k] / s;
        // The kernel's nucleus (sampling.ts): by e descending, ties to the smaller code, shortest prefix reaching topP * s.
        if (topP === null || topP >= 1) {
          for (let k = 0; k < K; k++) pTrunc[po + k] = e[k] / s;
        } else {
          const order = Array.from({ length: K }, (_, k) => k).sort((a, b) => e[b] - e[a] || a - b);
          let total = 0;
          const keep = new Uint8Array(K);
          for (const k of order) {
            keep[k] = 1;
            total += e[k];
            if (total >= topP * s) break;
          }
          for (let k = 0; k < K; k++) pTrunc[po + k] = keep[k] ? e[k] / total : 0;
        }
      }
    }
  }
  return { n, w, p, pTrunc };
}

/** A condition as a map feature -> allowed codes. */
type Cond = Map<number, number[]>;
/** Per-code weights of some of a condition's features (a weighted range cell); absent: all 1. */
type CondWeights = Map<number, number[]>;

function asRow(c: Cond, cw?: CondWeights): RowCondition {
  return CARDS.map((_, f) => {
    const codes = c.get(f);
    const weights = cw?.get(f);
    return codes && weights ? { codes, weights } : (codes ?? null);
  });
}

/** p_f(A | y_r) = sum_k a_k p_f(k | y_r): the probability of feature f's allowed set at grid point r. */
function setProb(g: Grid, r: number, f: number, codes: readonly number[], weights?: readonly number[]): number {
  let a = 0;
  codes.forEach((k, i) => (a += (weights?.[i] ?? 1) * g.p[r * D + OFFSETS[f] + k]));
  return a;
}

/** Grid point r's share of P(condition): its quadrature weight times p_f(A_f | y_r) over the fixed features. */
function condMass(g: Grid, r: number, c: Cond, cw?: CondWeights): number {
  let l = g.w[r];
  for (const [f, codes] of c) l *= setProb(g, r, f, codes, cw?.get(f));
  return l;
}

/** P(condition) under the grid. */
function condProb(g: Grid, c: Cond, cw?: CondWeights): number {
  let total = 0;
  for (let r = 0; r < g.n; r++) total += condMass(g, r, c, cw);
  return total;
}

/**
 * The exact joint distribution of the `tested` features under condition c: free features from the
 * kernel's (truncated) probabilities, range-conditioned ones restricted and renormalised.
 */
function referenceJoint(g: Grid, c: Cond, tested: number[], cw?: CondWeights): Float64Array {
  const cells = tested.reduce((s, f) => s * CARDS[f], 1);
  const out = new Float64Array(cells);
  const per = tested.map(() => new Float64Array(8));
  let total = 0;
  for (let r = 0; r < g.n; r++) {
    const l = condMass(g, r, c, cw);
    if (l === 0) continue;
    total += l;
    tested.forEach((f, t) => {
      const K = CARDS[f];
      const codes = c.get(f);
      if (codes) {
        const weights = cw?.get(f);
        const a = setProb(g, r, f, codes, weights);
        per[t].fill(0);
        codes.forEach((k, i) => (per[t][k] = ((weights?.[i] ?? 1) * g.p[r * D + OFFSETS[f] + k]) / a));
      } else {
        for (let k = 0; k < K; k++) per[t][k] = g.pTrunc[r * D + OFFSETS[f] + k];
      }
    });
    // Outer product over the tested features.
    const rec = (t: number, idx: number, prob: number): void => {
      if (t === tested.length) {
        out[idx] += l * prob;
        return;
      }
      const K = CARDS[tested[t]];
      for (let k = 0; k < K; k++) if (per[t][k] > 0) rec(t + 1, idx * K + k, prob * per[t][k]);
    };
    rec(0, 0, 1);
  }
  for (let i = 0; i < cells; i++) out[i] /= total;
  return out;
}

/** Pearson's chi-square p-value of observed counts against probabilities (cells with expected < 5 pooled). */
function chiSquareP(counts: Float64Array, probs: Float64Array): { stat: number; df: number; p: number } {
  const n = counts.reduce((s, v) => s + v, 0);
  let stat = 0;
  let cells = 0;
  let poolO = 0;
  let poolE = 0;
  for (let i = 0; i < counts.length; i++) {
    const e = n * probs[i];
    if (e < 5) {
      poolO += counts[i];
      poolE += e;
      continue;
    }
    stat += (counts[i] - e) ** 2 / e;
    cells++;
  }
  if (poolE > 0) {
    stat += (poolO - poolE) ** 2 / Math.max(poolE, 1e-12);
    cells++;
  }
  const df = cells - 1;
  return { stat, df, p: 1 - chisquareCdf(stat, df) };
}

function jointCounts(columns: Int32Array[], tested: number[]): Float64Array {
  const cells = tested.reduce((s, f) => s * CARDS[f], 1);
  const out = new Float64Array(cells);
  const n = columns[0].length;
  for (let r = 0; r < n; r++) {
    let idx = 0;
    for (const f of tested) idx = idx * CARDS[f] + columns[f][r];
    out[idx]++;
  }
  return out;
}

/** The features a row under condition c still draws: the free ones and those fixed to a range. */
function drawnFeatures(c: Cond): number[] {
  return Array.from({ length: F }, (_, f) => f).filter((f) => (c.get(f)?.length ?? 2) > 1);
}

/** The first condition (single codes of one or two features, in a fixed order) with probability in [lo, hi]. */
function findCondition(g: Grid, lo: number, hi: number, pairs: boolean): Cond {
  for (let f = 0; f < F; f++) {
    for (let k = 0; k < CARDS[f]; k++) {
      if (!pairs) {
        const c: Cond = new Map([[f, [k]]]);
        const p = condProb(g, c);
        if (p >= lo && p <= hi) return c;
        continue;
      }
      for (let f2 = f + 1; f2 < F; f2++) {
        for (let k2 = 0; k2 < CARDS[f2]; k2++) {
          const c: Cond = new Map([
            [f, [k]],
            [f2, [k2]],
          ]);
          const p = condProb(g, c);
          if (p >= lo && p <= hi) return c;
        }
      }
    }
  }
  throw new Error(`no condition with probability in [${lo}, ${hi}]`);
}

const { P, weights } = testWeights();

test("exactness: 100,000 rows under a common and a rare condition match the model's conditional (chi-square p > 0.001)", async () => {
  const model = await makeModel(weights);
  const g = grid(model, P);
  const n = 100_000;
  // Common: one single-code feature with probability in [0.2, 0.6], plus a range on another.
  const common = findCondition(g, 0.2, 0.6, false);
  const [cf] = [...common.keys()];
  const rf = (cf + 2) % F; // a range condition on another feature: codes {0, K - 1}
  common.set(rf, [0, CARDS[rf] - 1]);
  // Rare: two single codes with probability 0.1%..0.5%.
  const rare = findCondition(g, 0.001, 0.005, true);
  for (const [label, c, seed] of [
    ["common", common, 1],
    ["rare", rare, 2],
  ] as const) {
    const prob = condProb(g, c);
    const res = await sampleSeeded(model, asRow(c), n, { seed });
    const rep = res.groups[0];
    assert.equal(res.groups.length, 1);
    assert.ok(rep.targetMet && rep.ess >= n, `${label}: ESS ${rep.ess} reaches the target ${rep.essTarget}`);
    assert.ok(Math.abs(Math.exp(rep.logProb) / prob - 1) < 0.05, `${label}: estimated P(condition) ${Math.exp(rep.logProb)} vs exact ${prob}`);
    for (const [f, codes] of c) assert.ok(res.columns[f].every((k) => codes.includes(k)), `${label}: fixed cells of ${NAMES[f]} within ${codes}`);
    const tested = drawnFeatures(c);
    const { stat, df, p } = chiSquareP(jointCounts(res.columns, tested), referenceJoint(g, c, tested));
    assert.ok(p > 0.001, `${label} (P = ${prob.toFixed(5)}, features ${tested.map((f) => NAMES[f])}): chi2 ${stat.toFixed(1)} on ${df} df, p = ${p}`);
  }
  if (model.native) model.native.dispose();
});

test("exactness with temperature and nucleus truncation: weights and fixed cells tempered, free cells from the kernel", async () => {
  const model = await makeModel(weights);
  const T = 0.7;
  const topP = 0.8;
  const g = grid(model, P, T, topP);
  const c = findCondition(g, 0.2, 0.6, false);
  const [cf] = [...c.keys()];
  const rf = (cf + 1) % F;
  c.set(rf, [1, 2]);
  const res = await sampleSeeded(model, asRow(c), 50_000, { seed: 3, temperature: T, topP });
  const tested = drawnFeatures(c);
  const { stat, df, p } = chiSquareP(jointCounts(res.columns, tested), referenceJoint(g, c, tested));
  assert.ok(p > 0.001, `chi2 ${stat.toFixed(1)} on ${df} df, p = ${p}`);
  if (model.native) model.native.dispose();
});

test("exactness with weighted codes (a range covering part of some bins): codes drawn in proportion to p_f(k | z) * a_k", async () => {
  const model = await makeModel(weights);
  const g = grid(model, P);
  const c = findCondition(g, 0.2, 0.6, false);
  const [cf] = [...c.keys()];
  const rf = (cf + 1) % F;
  const codes = Array.from({ length: CARDS[rf] }, (_, k) => k).slice(0, 4);
  const cw: CondWeights = new Map([[rf, codes.map((_, i) => [0.1, 1, 0.5, 0.25][i])]]);
  c.set(rf, codes);
  const res = await sampleSeeded(model, asRow(c, cw), 100_000, { seed: 6 });
  const rep = res.groups[0];
  assert.ok(rep.targetMet);
  assert.ok(Math.abs(Math.exp(rep.logProb) / condProb(g, c, cw) - 1) < 0.05, `estimated P(condition) ${Math.exp(rep.logProb)} vs exact ${condProb(g, c, cw)}`);
  const tested = drawnFeatures(c);
  const { stat, df, p } = chiSquareP(jointCounts(res.columns, tested), referenceJoint(g, c, tested, cw));
  assert.ok(p > 0.001, `chi2 ${stat.toFixed(1)} on ${df} df, p = ${p}`);
  // The unweighted list is a different conditional: the same counts fail against it.
  const plain = chiSquareP(jointCounts(res.columns, tested), referenceJoint(g, c, tested));
  assert.ok(plain.p < 1e-6, `against the unweighted conditional: p = ${plain.p}`);
  // Weights all 1 are the plain list, row for row; every code of a feature in full is no condition.
  const ones = await sampleSeeded(model, asRow(c, new Map([[rf, codes.map(() => 1)]])), 2000, { seed: 7 });
  const list = await sampleSeeded(model, asRow(c), 2000, { seed: 7 });
  assert.deepEqual(ones.columns, list.columns);
  // Malformed weighted cells name the feature.
  const bad = (cell: { codes: number[]; weights: number[] }) => sampleSeeded(model, CARDS.map((_, f) => (f === rf ? cell : null)), 10, { seed: 1 });
  for (const cell of [
    { codes: [0, 1], weights: [1] },
    { codes: [0, 1], weights: [1, 0] },
    { codes: [0, 1], weights: [1, 1.5] },
    { codes: [0, 0], weights: [0.5, 0.5] },
  ]) {
    await assert.rejects(bad(cell), (e: unknown) => e instanceof ConditionError && e.features[0] === NAMES[rf], JSON.stringify(cell));
  }
  if (model.native) model.native.dispose();
});

test("calibration: a one-feature condition's rows are raked to the given targets; excluded values appear only when nothing else is left", async () => {
  const model = await makeModel(weights);
  const g = grid(model, P);
  const c = findCondition(g, 0.2, 0.6, false);
  const [cf] = [...c.keys()];
  const free = drawnFeatures(c);
  const n = 20_000;
  // Targets the model is far from but the bounded raking can reach: the model's own conditional
  // (by the exact grid) tilted by 0.6 on even codes and 1.4 on odd ones.
  const own1 = (f: number): Float64Array => {
    const p = new Float64Array(CARDS[f]);
    for (let r = 0; r < g.n; r++) {
      const l = condMass(g, r, c);
      for (let k = 0; k < CARDS[f]; k++) p[k] += l * g.p[r * D + OFFSETS[f] + k];
    }
    return p;
  };
  const targets = free.map((f) => {
    const p = own1(f).map((v, k) => v * (k % 2 === 0 ? 0.6 : 1.4));
    const s = p.reduce((a, b) => a + b, 0);
    return { f, g: -1, kg: 1, probs: p.map((v) => v / s) };
  });
  const seen: number[][] = [];
  const calibration = (fixed: readonly { f: number; codes: ArrayLike<number> }[]) => {
    seen.push(fixed.map((x) => x.f));
    return { targets, exclusions: [] };
  };
  const raked = await sampleSeeded(model, asRow(c), n, { seed: 11, calibration });
  const again = await sampleSeeded(model, asRow(c), n, { seed: 11, calibration });
  const own = await sampleSeeded(model, asRow(c), n, { seed: 11 });
  assert.deepEqual(seen[0], [cf], "the callback gets the group's fixed features");
  assert.deepEqual(raked.columns, again.columns, "same seed, same rows");
  assert.ok(raked.columns[cf].every((k) => c.get(cf)!.includes(k)));
  assert.equal(raked.groups[0].essTarget, 2 * n, "an ESS of two candidates per row");
  const gap = (cols: Int32Array[], f: number): number => {
    const h = jointCounts(cols, [f]);
    const t = targets.find((x) => x.f === f)!.probs;
    let d = 0;
    for (let k = 0; k < CARDS[f]; k++) d += Math.abs(h[k] / n - t[k]) / 2;
    return d;
  };
  for (const f of free) assert.ok(gap(raked.columns, f) < 0.01, `${NAMES[f]}: ${gap(raked.columns, f)} from its target`);
  assert.ok(Math.max(...free.map((f) => gap(own.columns, f))) > 0.05, "the model's own conditional is far from the targets");

  // Exclusions on a two-feature condition (no targets): the free feature's most likely code is
  // ruled out and never drawn while others can be.
  const rare = findCondition(g, 0.001, 0.005, true);
  const h = drawnFeatures(rare)[0];
  const ownRare = await sampleSeeded(model, asRow(rare), 5000, { seed: 12 });
  const counts = jointCounts(ownRare.columns, [h]);
  const top = counts.indexOf(Math.max(...counts));
  const excluded = new Uint8Array(CARDS[h]);
  excluded[top] = 1;
  const ex = await sampleSeeded(model, asRow(rare), 5000, { seed: 12, calibration: () => ({ targets: [], exclusions: [{ f: h, excluded }] }) });
  assert.ok(counts[top] > 500, `the model draws code ${top} of ${NAMES[h]} often (${counts[top]})`);
  assert.equal(jointCounts(ex.columns, [h])[top], 0, `code ${top} of ${NAMES[h]} excluded`);
  // Every code of the feature excluded: the rows still come (the exclusion is a weight of 1e-10, not 0).
  const all = await sampleSeeded(model, asRow(rare), 200, { seed: 13, calibration: () => ({ targets: [], exclusions: [{ f: h, excluded: new Uint8Array(CARDS[h]).fill(1) }] }) });
  assert.equal(all.columns[h].length, 200);
  if (model.native) model.native.dispose();
});

test("the tfjs path draws the same conditional", async () => {
  const model = await makeModel(weights, "tfjs");
  const g = grid(model, P);
  const c = findCondition(g, 0.2, 0.6, false);
  const res = await sampleSeeded(model, asRow(c), 20_000, { seed: 4 });
  const tested = Array.from({ length: F }, (_, f) => f).filter((f) => !c.has(f));
  const { stat, df, p } = chiSquareP(jointCounts(res.columns, tested), referenceJoint(g, c, tested));
  assert.ok(p > 0.001, `chi2 ${stat.toFixed(1)} on ${df} df, p = ${p}`);
  assert.ok(res.groups[0].targetMet);
  for (const t of Object.values(model.params)) t.dispose();
});

test("a condition of probability 0 throws ConditionError naming the row and the features", async () => {
  const w = testWeights().weights;
  // Code 5 of feature e: logit 10,000 below the others everywhere, so exp underflows to 0 in the kernel.
  w["out.b"][OFFSETS[4] + 5] = -1e4;
  // Code 4 of feature d: tiny (e^-40) but positive probability.
  w["out.b"][OFFSETS[3] + 4] = -40;
  const model = await makeModel(w);
  const conds: RowCondition[] = [
    [null, null, null, null, null],
    [1, null, null, null, null],
    [null, null, null, 4, null],
    [0, null, null, null, 5],
  ];
  await assert.rejects(
    sampleConditional(model, conds, { seed: 1, zeroSearch: 4096, paramFor: (r) => `body.embedding.conditions[${r}]` }),
    (e: unknown) => {
      assert.ok(e instanceof ConditionError && e instanceof InputError);
      assert.equal(e.row, 3);
      assert.deepEqual(e.features, ["e"]);
      assert.equal(e.param, "body.embedding.conditions[3]");
      assert.match(e.message, /row 3/);
      assert.match(e.message, /probability 0/);
      return true;
    },
  );
  // The same on a shared condition, with the default param; a set holding the impossible code
  // and a possible one is fine.
  await assert.rejects(sampleSeeded(model, [null, null, null, null, 5], 10, { seed: 2, zeroSearch: 4096 }), (e: unknown) => {
    assert.ok(e instanceof ConditionError);
    assert.equal(e.row, 0);
    assert.deepEqual(e.features, ["e"]);
    assert.equal(e.param, "body.embedding");
    return true;
  });
  const ok = await sampleSeeded(model, [null, null, null, 4, [0, 5]], 500, { seed: 3 });
  assert.ok(ok.columns[3].every((k) => k === 4));
  assert.ok(ok.columns[4].every((k) => k === 0), "the impossible code is never drawn");
  assert.ok(ok.groups[0].logProb < -35, `log P(condition) = ${ok.groups[0].logProb}`);
  assert.ok(ok.groups[0].ess > 0);
  // Malformed conditions.
  await assert.rejects(sampleConditional(model, [[null, null]]), (e: unknown) => e instanceof ConditionError && e.row === 0);
  await assert.rejects(sampleConditional(model, [[null, null, null, null, null], [0, 3, null, null, null]]), (e: unknown) => e instanceof ConditionError && e.row === 1 && e.features[0] === "b");
  await assert.rejects(sampleConditional(model, [[null, [], null, null, null]]), (e: unknown) => e instanceof ConditionError && e.features[0] === "b");
  await assert.rejects(sampleConditional(model, []), (e: unknown) => e instanceof ConditionError);
  await assert.rejects(sampleConditional(model, [[0, null, null, null, null]], { temperature: 0 }), RangeError);
  if (model.native) model.native.dispose();
});

test("a condition whose pilot has no positive weight but a later round has goes on adapting", async () => {
  const w = testWeights().weights;
  // At temperature 0.01 code 1 of feature b underflows except at about 1 prior latent in 10,000: with
  // seed 2 the 4,096 latents of the pilot all have weight 0 and the next round of 16,384 does not, so
  // the group's candidates restart after rounds that kept none (this once threw a TypeError).
  w["out.b"][OFFSETS[1] + 1] -= 20.8;
  const model = await makeModel(w);
  const res = await sampleSeeded(model, [null, 1, null, null, null], 10_000, { seed: 2, temperature: 0.01 });
  assert.ok(res.columns[1].every((k) => k === 1));
  assert.ok(res.groups[0].ess > 0 && res.groups[0].rounds >= 3, `ESS ${res.groups[0].ess} after ${res.groups[0].rounds} rounds`);
  if (model.native) model.native.dispose();
});

test("same seed, same rows; fixed cells always within their sets, per-row conditions grouped", async () => {
  const model = await makeModel(weights);
  const u = mulberry32(5);
  const shared: RowCondition = [1, null, [0, 3], null, null];
  const conds: RowCondition[] = [];
  for (let r = 0; r < 300; r++) {
    if (r % 3 === 0) {
      conds.push(shared); // one group of 100 rows
      continue;
    }
    // Imputation style: each row its own fixed cells (single codes or ranges), some free.
    conds.push(
      CARDS.map((K) => {
        const x = u();
        if (x < 0.4) return null;
        if (x < 0.8) return Math.floor(u() * K);
        const a = Math.floor(u() * K);
        const b = Math.floor(u() * K);
        return a === b ? [a] : [a, b];
      }),
    );
  }
  const a = await sampleConditional(model, conds, { seed: 42 });
  const b = await sampleConditional(model, conds, { seed: 42 });
  const c = await sampleConditional(model, conds, { seed: 43 });
  assert.deepEqual(a.columns, b.columns);
  assert.deepEqual(a.groups, b.groups);
  assert.notDeepEqual(a.columns, c.columns);
  for (let r = 0; r < conds.length; r++) {
    conds[r].forEach((cell, f) => {
      if (cell === null || cell === undefined) return;
      const allowed = typeof cell === "number" ? [cell] : "codes" in cell ? cell.codes : cell;
      assert.ok(allowed.includes(a.columns[f][r]), `row ${r}, ${NAMES[f]}: ${a.columns[f][r]} within ${allowed}`);
    });
  }
  const g0 = a.groups[a.groupOfRow[0]];
  assert.equal(g0.numRows, 100);
  assert.equal(g0.firstRow, 0);
  assert.deepEqual(g0.features, ["a", "c"]);
  assert.ok(g0.ess >= 100 && g0.targetMet);
  assert.equal(a.groups.reduce((s, g) => s + g.numRows, 0), 300);
  for (const g of a.groups) {
    assert.ok(g.ess > 0 && g.candidates > 0 && Number.isFinite(g.logProb) && g.logProb <= 1e-9);
    if (g.targetMet) assert.ok(g.ess >= g.essTarget);
  }
  // The seed comes back; without one a fresh seed is drawn and returned.
  assert.equal(a.seed, 42);
  const d = await sampleConditional(model, conds.slice(0, 5));
  const e = await sampleConditional(model, conds.slice(0, 5), { seed: d.seed });
  assert.deepEqual(d.columns, e.columns);
  // Free rows only: every weight is 1, the candidates are the rows.
  const free = await sampleSeeded(model, [null, null, null, null, null], 1000, { seed: 7 });
  assert.equal(free.groups[0].candidates, 1000);
  assert.equal(free.groups[0].redraws, 0);
  if (model.native) model.native.dispose();
});

test("systematic resampling: counts sum to n, each within 1 of n * w, zero weights never picked", () => {
  const u = mulberry32(9);
  const w = Float64Array.from({ length: 500 }, (_, i) => (i % 7 === 0 ? 0 : u() ** 3));
  const s = w.reduce((a, b) => a + b, 0);
  for (let i = 0; i < w.length; i++) w[i] /= s;
  for (const n of [1, 37, 500, 4000]) {
    const c = systematicCounts(w, n, u());
    assert.equal(c.reduce((a, b) => a + b, 0), n);
    for (let i = 0; i < w.length; i++) {
      if (w[i] === 0) assert.equal(c[i], 0);
      assert.ok(Math.abs(c[i] - n * w[i]) < 1 + 1e-9, `index ${i}: ${c[i]} vs ${n * w[i]}`);
    }
  }
});

test("ziggurat normals: moments and a chi-square test against the normal distribution", () => {
  const n = 1_000_000;
  const x = fillNormalZiggurat(Rng.fromSeed(11), new Float64Array(n));
  let m = 0;
  let v = 0;
  for (const t of x) m += t;
  m /= n;
  for (const t of x) v += (t - m) ** 2;
  v /= n;
  assert.ok(Math.abs(m) < 0.005 && Math.abs(v - 1) < 0.005, `mean ${m}, variance ${v}`);
  const edges = [-Infinity, ...Array.from({ length: 33 }, (_, i) => -4 + i * 0.25), Infinity];
  const Phi = (t: number): number => (t === -Infinity ? 0 : t === Infinity ? 1 : 0.5 * (1 + errorFunction(t / Math.SQRT2)));
  const counts = new Float64Array(edges.length - 1);
  for (const t of x) {
    let i = 0;
    while (t >= edges[i + 1]) i++;
    counts[i]++;
  }
  const probs = Float64Array.from(counts, (_, i) => Phi(edges[i + 1]) - Phi(edges[i]));
  const { stat, df, p } = chiSquareP(counts, probs);
  assert.ok(p > 0.001, `chi2 ${stat.toFixed(1)} on ${df} df, p = ${p}`);
  // Deterministic for a seed.
  assert.deepEqual(fillNormalZiggurat(Rng.fromSeed(11), new Float64Array(10)), x.subarray(0, 10));
});
