/**
 * Shared by the native-core tests: synthetic metadata with consistent 1-way and 2-way marginals,
 * the tfjs reference loss/gradients, and comparison helpers. Also runnable in a child process
 * (`node native-core-fixtures.js parity`) so that tests can check other thread counts and ISAs,
 * which the addon fixes at load time from the environment.
 */
import * as tf from "@tensorflow/tfjs-core";
import { initBackend } from "../src/model/compute/backend";
import { featureSoftmax, forward, type GeneratorSpec, initParams, makeSegments, disposeSegments, type NamedArrays, paramShapes } from "../src/model/generator/generator";
import { disposeTargetTensors, entropyPenalty, marginalLoss, targetTensors } from "../src/model/training/loss";
import { buildTargets, type MarginalTargets } from "../src/model/generator/targets";
import { NativeGenerator } from "../src/model/compute/native-generator";
import { Rng } from "../src/model/sampling/xoshiro";
import type { Metadata } from "../src/contract";

/** Codes per column of the Adult data (../shared/datasets/adult-discrete-domain.json), 588 in all. */
export const ADULT_CARDS = [85, 9, 100, 16, 7, 15, 6, 5, 2, 100, 100, 99, 42, 2];

/**
 * Metadata whose marginals come from `rows` rows of a random latent-class table (so 2-way tables
 * are consistent with the 1-way ones and have structure and zeros). `pairs`: the 2-way marginals
 * to include ("all" or explicit [f, g] index pairs).
 */
export function syntheticMetadata(cards: number[], pairs: [number, number][] | "all", seed: number, rows = 3000): Metadata {
  const rng = Rng.fromSeed(seed);
  const F = cards.length;
  const classes = 4;
  // Per class and feature: a peaked distribution (power of uniforms).
  const dists = Array.from({ length: classes }, () =>
    cards.map((k) => {
      const w = Array.from({ length: k }, () => rng.uniform() ** 4);
      const s = w.reduce((a, b) => a + b, 0);
      return w.map((x) => x / s);
    }),
  );
  const codes: number[][] = [];
  for (let r = 0; r < rows; r++) {
    const c = Math.floor(rng.uniform() * classes);
    codes.push(
      cards.map((k, f) => {
        let u = rng.uniform();
        for (let i = 0; i < k; i++) {
          u -= dists[c][f][i];
          if (u < 0) return i;
        }
        return k - 1;
      }),
    );
  }
  const features = cards.map((_, f) => `f${f}`);
  const cardinalities: Record<string, number> = {};
  const empirical: Record<string, number[]> = {};
  features.forEach((name, f) => {
    cardinalities[name] = cards[f];
    const p = new Array(cards[f]).fill(0);
    for (const row of codes) p[row[f]] += 1 / rows;
    empirical[name] = p;
  });
  const list: [number, number][] = [];
  if (pairs === "all") {
    for (let f = 0; f < F; f++) for (let g = f + 1; g < F; g++) list.push([f, g]);
  } else list.push(...pairs);
  const marginals = list.map(([f, g]) => {
    const probs = new Array(cards[f] * cards[g]).fill(0);
    for (const row of codes) probs[row[f] * cards[g] + row[g]] += 1 / rows;
    return { features: [features[f], features[g]] as [string, string], probs };
  });
  return { features, cardinalities, empirical_probs: empirical, marginals };
}

/** A spec for the targets' layout. */
export function specFor(targets: MarginalTargets, embeddingDim: number, hidden: number, blocks: number): GeneratorSpec {
  return { embeddingDim, hidden, blocks, outputDim: targets.layout.width };
}

/** Weights from the model init of generator.ts, perturbed so LayerNorm gains/biases are not trivial. */
export function testWeights(spec: GeneratorSpec, seed: string): NamedArrays {
  const w = initParams(spec, Rng.fromString(seed));
  const r = Rng.fromString(`${seed}:ln`);
  for (const [name] of paramShapes(spec)) {
    if (name.endsWith(".gamma")) for (let i = 0; i < w[name].length; i++) w[name][i] = 0.8 + 0.4 * r.uniform();
    if (name.endsWith(".beta")) for (let i = 0; i < w[name].length; i++) w[name][i] = 0.1 * (r.uniform() - 0.5);
  }
  return w;
}

/** n x E standard normal latents from a seed. */
export function latents(n: number, E: number, seed: string): Float32Array {
  return Rng.fromString(seed).fillNormal(new Float32Array(n * E));
}

let varCounter = 0;

/** The tfjs reference (the trainer's exact computation): loss and gradients by parameter name. */
export async function tfjsLossAndGrads(
  spec: GeneratorSpec,
  targets: MarginalTargets,
  weights: NamedArrays,
  z: Float32Array,
  n: number,
  mode?: "gram" | "blocks",
  entropyAlpha = 0,
): Promise<{ loss: number; grads: NamedArrays }> {
  await initBackend();
  const tag = `nc${varCounter++}_`;
  const vars: Record<string, tf.Variable> = {};
  const byVar = new Map<string, string>();
  for (const [name, shape] of paramShapes(spec)) {
    const v = tf.variable(tf.tensor(weights[name], shape, "float32"), true, tag + name);
    vars[name] = v;
    byVar.set(v.name, name);
  }
  const tt = targetTensors(targets, mode);
  const seg = makeSegments(targets.layout);
  try {
    const out = tf.tidy(() => {
      const zt = tf.tensor2d(z, [n, spec.embeddingDim]);
      // The gradient of KL + entropy penalty; the loss reported is the KL alone (as the core's).
      let kl = 0;
      const { grads } = tf.variableGrads(() => {
        const probs = featureSoftmax(forward(spec, vars, zt), seg);
        const loss = marginalLoss(probs, tt);
        kl = loss.dataSync()[0];
        return entropyAlpha > 0 ? (tf.add(loss, entropyPenalty(probs, tt, entropyAlpha)) as tf.Scalar) : loss;
      }, Object.values(vars));
      const named: NamedArrays = {};
      for (const [vn, g] of Object.entries(grads)) named[byVar.get(vn) as string] = Float32Array.from(g.dataSync() as Float32Array);
      return { loss: kl, grads: named };
    });
    return out;
  } finally {
    disposeTargetTensors(tt);
    disposeSegments(seg);
    for (const v of Object.values(vars)) v.dispose();
  }
}

/** ||a - b|| / ||b|| (0 when both are zero). */
export function relErr(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let d = 0;
  let s = 0;
  for (let i = 0; i < b.length; i++) {
    d += (a[i] - b[i]) ** 2;
    s += b[i] ** 2;
  }
  return s === 0 ? Math.sqrt(d) : Math.sqrt(d / s);
}

/** The worst per-tensor relative error of `a` against `b`, and which tensor. */
export function worstRelErr(a: NamedArrays, b: NamedArrays): { name: string; err: number } {
  let worst = { name: "", err: 0 };
  for (const name of Object.keys(b)) {
    if (!(name in a)) return { name, err: Infinity };
    const e = relErr(a[name], b[name]);
    if (!(e <= worst.err)) worst = { name, err: e };
  }
  return worst;
}

/** The small model used by several tests: 6 features, sparse pair blocks with gaps. */
export function smallCase(): { targets: MarginalTargets; spec: GeneratorSpec; weights: NamedArrays } {
  const meta = syntheticMetadata([5, 3, 7, 2, 4, 6], [[0, 1], [0, 3], [0, 5], [1, 2], [2, 4], [3, 5], [4, 5]], 11);
  const targets = buildTargets(meta);
  const spec = specFor(targets, 8, 32, 2);
  return { targets, spec, weights: testWeights(spec, "small") };
}

/** 5 native training steps of the small case: the losses and a SHA-256 of the final weights. */
export async function trainSmall(): Promise<{ losses: number[]; hash: string }> {
  const { targets, spec, weights } = smallCase();
  const gen = NativeGenerator.create(spec, targets.layout, weights);
  gen.setTargets(targets);
  const losses: number[] = [];
  for (let s = 0; s < 5; s++) losses.push(gen.trainStep(latents(48, spec.embeddingDim, `train-${s}`), 48, 0.01));
  const p = gen.raw.getParams();
  gen.dispose();
  const { createHash } = await import("node:crypto");
  return { losses, hash: createHash("sha256").update(Buffer.from(p.buffer, p.byteOffset, p.byteLength)).digest("hex") };
}

/**
 * Child-process entry: `parity` prints JSON {loss, tfLoss, worst, isa, threads} for the small
 * case; `train` prints {losses, hash, isa, threads} of {@link trainSmall}.
 */
async function main(): Promise<void> {
  const cmd = process.argv[2];
  const { nativeCoreStatus } = await import("../src/model/compute/native-core");
  const info = nativeCoreStatus().info;
  if (cmd === "parity") {
    const { targets, spec, weights } = smallCase();
    const gen = NativeGenerator.create(spec, targets.layout, weights);
    gen.setTargets(targets);
    const z = latents(64, spec.embeddingDim, "parity-z");
    const nat = gen.lossAndGrads(z, 64);
    gen.dispose();
    const ref = await tfjsLossAndGrads(spec, targets, weights, z, 64);
    console.log(JSON.stringify({ loss: nat.loss, tfLoss: ref.loss, worst: worstRelErr(nat.grads, ref.grads), isa: info?.isa, threads: info?.threads }));
  } else if (cmd === "train") {
    console.log(JSON.stringify({ ...(await trainSmall()), isa: info?.isa, threads: info?.threads }));
  } else {
    throw new Error(`unknown command ${cmd}`);
  }
}

if (require.main === module) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
