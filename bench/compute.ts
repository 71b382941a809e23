/**
 * `npm run bench -- compute [--json]`: the compute core in-process, against tfjs on the same
 * machine in the same run (the baseline), and against the PyTorch figures of issue 4.
 *
 * Workload (issue 4): the medium generator (z 64, 2 residual blocks of width 512) on
 * ../shared/datasets/adult-discrete.csv with adult-discrete-domain.json: 14 features, 588 codes,
 * every 1-way and all 91 2-way marginals of the table as targets, batch 256.
 *
 * - `train_step_ms`: the trainer's step (draw 256 latents with the training stream, scheduled
 *   learning rate, forward + KL loss + backward + Adam) on the native core; the median over
 *   `--blocks` blocks of 20 steps, each block's mean, after `--warmup` steps.
 * - `generate_rows_per_s`: forward + sampling of 100,000 rows (latents and uniforms drawn
 *   beforehand, as `prepareInputs` does), best of 3 runs. `generate_with_draws_rows_per_s` adds
 *   the JavaScript draws of latents and uniforms (what a request pays).
 * - Baselines: the same measurements through tfjs (`--baseline-steps` steps per block, 3 blocks;
 *   `--baseline-rows` rows) on the backend `initBackend` picks (wasm here).
 * - `gflop_per_step` / `train_gflops`: the step's nominal multiply-add work (forward, both
 *   backward products, the 2-way products over the given pairs) and the rate it ran at.
 * Load averages before and after are printed: timings are only comparable on an idle machine.
 */
import { loadavg } from "node:os";
import { join } from "node:path";
import * as tf from "@tensorflow/tfjs-core";
import { Adam } from "../src/model/training/adam";
import { initBackend } from "../src/model/compute/backend";
import { prepareInputs } from "../src/model/sampling/inputs";
import { sampleRows } from "../src/model/sampling/sample-rows";
import {
  disposeAll,
  disposeSegments,
  featureSoftmax,
  forward,
  type GeneratorSpec,
  generatorSpec,
  initParams,
  makeSegments,
  toTensors,
  trainableVariables,
} from "../src/model/generator/generator";
import { disposeTargetTensors, marginalLoss, targetTensors } from "../src/model/training/loss";
import { buildTargets, type MarginalTargets } from "../src/model/generator/targets";
import { NativeGenerator } from "../src/model/compute/native-generator";
import { nativeCoreStatus } from "../src/model/compute/native-core";
import { Rng } from "../src/model/sampling/xoshiro";
import { learningRate, makeSchedule } from "../src/model/training/schedule";
import { discreteMetadata } from "./adult";
import { SHARED_DATASETS } from "./harness";

export { discreteMetadata };

/** Options of the compute benchmark. */
export interface ComputeOptions {
  json: boolean;
  blocks: number;
  warmup: number;
  rows: number;
  baseline: boolean;
  baselineSteps: number;
  baselineRows: number;
}

/** The PyTorch 1.13 figures of issue 4 (same 2-core machine). */
export const PYTORCH_REFERENCE = { train_step_ms: 40.7, generate_rows_per_s: 81_600 };

const BATCH = 256;
const STEPS_PER_BLOCK = 20;

/** Nominal floating-point operations of one training step (multiply-add = 2). */
export function stepFlops(spec: GeneratorSpec, targets: MarginalTargets, n: number): number {
  const { embeddingDim: E, hidden: H, blocks: L, outputDim: D } = spec;
  const fwd = 2 * n * (E * H + L * H * H + H * D);
  const bwd = 2 * n * (E * H + 2 * L * H * H + 2 * H * D); // dW everywhere, dX except the input layer
  const pairEntries = targets.blocks.reduce((s, b) => s + targets.layout.cardinalities[b.f] * (b.c1 - b.c0), 0);
  const pairs = 3 * 2 * n * pairEntries; // forward product + two backward products
  return fwd + bwd + pairs;
}

/** Floating-point operations of the forward pass per generated row. */
export function rowFlops(spec: GeneratorSpec): number {
  const { embeddingDim: E, hidden: H, blocks: L, outputDim: D } = spec;
  return 2 * (E * H + L * H * H + H * D);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** Mean ms per step of `steps` calls of `step`. */
async function timeBlock(steps: number, step: () => void | Promise<void>): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < steps; i++) await step();
  return (performance.now() - t0) / steps;
}

interface TrainResult {
  stepMs: number;
  blocksMs: number[];
  firstLoss: number;
  lastLoss: number;
}

async function nativeTrain(spec: GeneratorSpec, targets: MarginalTargets, opts: ComputeOptions): Promise<TrainResult> {
  const gen = NativeGenerator.create(spec, targets.layout, initParams(spec, Rng.fromString("bench:init")));
  gen.setTargets(targets);
  const rng = Rng.fromString("bench:train");
  const schedule = makeSchedule(1e-3, (opts.warmup + opts.blocks * STEPS_PER_BLOCK) * 2);
  let s = 0;
  let loss = NaN;
  const step = (): void => {
    const z = rng.fillNormal(new Float32Array(BATCH * spec.embeddingDim));
    loss = gen.trainStep(z, BATCH, learningRate(schedule, s++));
  };
  for (let i = 0; i < opts.warmup; i++) step();
  const firstLoss = loss;
  const blocksMs: number[] = [];
  for (let b = 0; b < opts.blocks; b++) blocksMs.push(await timeBlock(STEPS_PER_BLOCK, step));
  gen.dispose();
  return { stepMs: median(blocksMs), blocksMs, firstLoss, lastLoss: loss };
}

async function nativeGenerate(spec: GeneratorSpec, targets: MarginalTargets, rows: number): Promise<{ best: number; runs: number[]; withDraws: number }> {
  const gen = NativeGenerator.create(spec, targets.layout, initParams(spec, Rng.fromString("bench:init")));
  const F = targets.layout.features.length;
  const runs: number[] = [];
  let withDraws = 0;
  for (let r = 0; r < 3; r++) {
    const t0 = performance.now();
    const inputs = prepareInputs({ num_rows: rows, seed: 1000 + r }, spec.embeddingDim, F, 0);
    const t1 = performance.now();
    await gen.sampleRows(inputs);
    const t2 = performance.now();
    runs.push((rows / (t2 - t1)) * 1000);
    withDraws = Math.max(withDraws, (rows / (t2 - t0)) * 1000);
  }
  gen.dispose();
  return { best: Math.max(...runs), runs, withDraws };
}

async function tfjsTrain(spec: GeneratorSpec, targets: MarginalTargets, opts: ComputeOptions): Promise<TrainResult> {
  const { vars, gradsByName } = trainableVariables(spec, initParams(spec, Rng.fromString("bench:init")));
  const adam = new Adam(vars);
  const tt = targetTensors(targets);
  const seg = makeSegments(targets.layout);
  const rng = Rng.fromString("bench:train");
  const schedule = makeSchedule(1e-3, 1000);
  let s = 0;
  let loss = NaN;
  const step = (): void => {
    const z = rng.fillNormal(new Float32Array(BATCH * spec.embeddingDim));
    const lr = learningRate(schedule, s++);
    loss = tf.tidy(() => {
      const { value, grads } = tf.variableGrads(
        () => marginalLoss(featureSoftmax(forward(spec, vars, tf.tensor2d(z, [BATCH, spec.embeddingDim])), seg), tt),
        Object.values(vars),
      );
      adam.step(vars, gradsByName(grads), lr);
      return value.dataSync()[0];
    });
  };
  for (let i = 0; i < 2; i++) step();
  const firstLoss = loss;
  const blocksMs: number[] = [];
  for (let b = 0; b < 3; b++) blocksMs.push(await timeBlock(opts.baselineSteps, step));
  adam.dispose();
  disposeAll(vars);
  disposeTargetTensors(tt);
  disposeSegments(seg);
  return { stepMs: median(blocksMs), blocksMs, firstLoss, lastLoss: loss };
}

async function tfjsGenerate(spec: GeneratorSpec, targets: MarginalTargets, rows: number): Promise<number> {
  const params = toTensors(spec, initParams(spec, Rng.fromString("bench:init")));
  const F = targets.layout.features.length;
  let best = 0;
  for (let r = 0; r < 2; r++) {
    const inputs = prepareInputs({ num_rows: rows, seed: 2000 + r }, spec.embeddingDim, F, 0);
    const t0 = performance.now();
    await sampleRows({ spec, layout: targets.layout, params }, inputs);
    best = Math.max(best, (rows / (performance.now() - t0)) * 1000);
  }
  disposeAll(params);
  return best;
}

const round = (x: number, d = 2): number => Number(x.toFixed(d));

/** Runs the benchmark and prints its result (a JSON line with `--json`). */
export async function computeBench(opts: ComputeOptions): Promise<void> {
  const status = nativeCoreStatus();
  if (!status.available) throw new Error(`native compute core unavailable: ${status.reason}`);
  const loadBefore = loadavg();
  const meta = discreteMetadata(join(SHARED_DATASETS, "adult-discrete.csv"), join(SHARED_DATASETS, "adult-discrete-domain.json"));
  const targets = buildTargets(meta);
  const spec = generatorSpec("medium", 64, targets.layout);
  const flops = stepFlops(spec, targets, BATCH);

  const train = await nativeTrain(spec, targets, opts);
  const gen = await nativeGenerate(spec, targets, opts.rows);

  let baseline: { backend: string; train: TrainResult; generateRowsPerS: number } | null = null;
  if (opts.baseline) {
    const backend = await initBackend();
    baseline = {
      backend,
      train: await tfjsTrain(spec, targets, opts),
      generateRowsPerS: await tfjsGenerate(spec, targets, opts.baselineRows),
    };
  }
  const loadAfter = loadavg();

  const result = {
    bench: "compute",
    model: { size: "medium", embedding_dim: 64, hidden: spec.hidden, blocks: spec.blocks, codes: spec.outputDim, features: targets.layout.features.length, pairs: targets.pairs.length, batch: BATCH },
    core: status.info,
    train_step_ms: round(train.stepMs, 3),
    train_step_ms_blocks: train.blocksMs.map((x) => round(x, 3)),
    train_loss_first_last: [round(train.firstLoss, 5), round(train.lastLoss, 5)],
    generate_rows_per_s: Math.round(gen.best),
    generate_runs_rows_per_s: gen.runs.map(Math.round),
    generate_with_draws_rows_per_s: Math.round(gen.withDraws),
    gflop_per_step: round(flops / 1e9, 3),
    train_gflops: round(flops / 1e9 / (train.stepMs / 1000), 1),
    gflop_per_row: round(rowFlops(spec) / 1e9, 6),
    generate_gflops: round((rowFlops(spec) * gen.best) / 1e9, 1),
    baseline: baseline && {
      backend: `tfjs-${baseline.backend}`,
      train_step_ms: round(baseline.train.stepMs, 1),
      train_step_ms_blocks: baseline.train.blocksMs.map((x) => round(x, 1)),
      generate_rows_per_s: Math.round(baseline.generateRowsPerS),
    },
    train_speedup_vs_baseline: baseline && round(baseline.train.stepMs / train.stepMs, 1),
    generate_speedup_vs_baseline: baseline && round(gen.best / baseline.generateRowsPerS, 1),
    pytorch_reference: PYTORCH_REFERENCE,
    train_speedup_vs_pytorch: round(PYTORCH_REFERENCE.train_step_ms / train.stepMs, 2),
    generate_ratio_vs_pytorch: round(gen.best / PYTORCH_REFERENCE.generate_rows_per_s, 2),
    loadavg_before: loadBefore.map((x) => round(x)),
    loadavg_after: loadAfter.map((x) => round(x)),
  };
  if (opts.json) {
    console.log(JSON.stringify(result));
    return;
  }
  const c = status.info!;
  console.log(`compute core: ${c.isa} ${c.kernel} kernels, ${c.threads} threads; load average ${loadBefore.map((x) => x.toFixed(2)).join(" ")}`);
  console.log(`medium model, ${spec.outputDim} codes, ${targets.pairs.length} pairs, batch ${BATCH}: ${result.gflop_per_step} GFLOP per step`);
  console.log(`  train step:  ${result.train_step_ms} ms (median of ${opts.blocks} blocks of ${STEPS_PER_BLOCK}), ${result.train_gflops} GFLOP/s`);
  console.log(`  generation:  ${result.generate_rows_per_s} rows/s forward + sampling (${result.generate_gflops} GFLOP/s); ${result.generate_with_draws_rows_per_s} rows/s with the latent draws`);
  if (result.baseline) {
    console.log(`  ${result.baseline.backend}: train step ${result.baseline.train_step_ms} ms (${result.train_speedup_vs_baseline}x slower), generation ${result.baseline.generate_rows_per_s} rows/s (${result.generate_speedup_vs_baseline}x slower)`);
  }
  console.log(`  vs PyTorch (issue 4): train ${result.train_speedup_vs_pytorch}x faster than ${PYTORCH_REFERENCE.train_step_ms} ms; generation ${result.generate_ratio_vs_pytorch}x of ${PYTORCH_REFERENCE.generate_rows_per_s} rows/s`);
  console.log(`  load average after: ${loadAfter.map((x) => x.toFixed(2)).join(" ")}`);
}
