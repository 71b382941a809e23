/**
 * `npm run bench -- compute --device gpu` (or `node dist/bench/compute-gpu.js`, which loads
 * nothing but the addon, tfjs-core and the model code: the form the GPU machine runs, see
 * docs/compute.md): the CUDA compute core on the medium Adult model, beside a PyTorch run of the
 * same model on the same GPU in the same call (bench/pytorch_compute.py), and the CPU core.
 *
 * Workload (the model of `bench compute`): z 64, hidden 512, 1 residual block, 14 features / 588
 * codes, every 1-way and all 91 2-way marginals as targets (2-way products as one 588 x 588 Gram
 * matrix: the dense mode). The PyTorch script gets the same initial weights, targets and first
 * batch (files written here), so its first loss must equal ours.
 *
 * Measured, each the same work on both sides:
 * - `train_ms_b256`, `train_ms_b8192`: one training step (latents from host memory, forward, loss,
 *   backward, Adam, the loss back on the host); the median over blocks of each block's mean, after
 *   warm-up. Latents rotate among 8 pre-drawn batches (drawing is not timed on either side).
 * - `generate_rows_per_s`: 1,000,000 rows, forward + sampling, latents (n x 64 float32) and
 *   uniforms (n x F float64) from host memory, codes back into host memory (per-feature columns,
 *   as `NativeGenerator.sampleRows` returns them); best of 3.
 * - TF32: the same steps with TF32 tensor cores for the GEMMs: speed, the loss and gradient error
 *   against the CPU's FP32, and the loss after 200 steps against FP32's.
 * Ratios are PyTorch time / ours (above 1: ours faster).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generatorSpec, initParams, type GeneratorSpec, type NamedArrays } from "../src/model/generator/generator";
import { lossTargets, type MarginalTargets, buildTargets } from "../src/model/generator/targets";
import { flattenParams, gpuStatus } from "../src/model/compute/native-core";
import { NativeGenerator } from "../src/model/compute/native-generator";
import { Rng } from "../src/model/sampling/xoshiro";
import { discreteMetadata } from "./adult";

/** Options of the GPU compute benchmark. */
export interface GpuComputeOptions {
  json: boolean;
  /** Rows of the generation run. */
  rows: number;
  /** The PyTorch baseline command (the script's path is appended), or "" to skip it. */
  pytorch: string;
  /** Datasets folder (adult-discrete.csv, adult-discrete-domain.json). */
  datasets: string;
  /** Also time TF32 and measure its effect on the loss. */
  tf32: boolean;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

function relErr(a: Float32Array, b: Float32Array): number {
  let num = 0;
  let den = 0;
  for (let i = 0; i < a.length; i++) {
    num += (a[i] - b[i]) ** 2;
    den += b[i] * b[i];
  }
  return Math.sqrt(num / den);
}

/** ms per training step at batch n: the median of `blocks` block means after `warmup` steps. */
function timeTraining(gen: NativeGenerator, spec: GeneratorSpec, n: number, warmup: number, blocks: number, perBlock: number): { ms: number; blocksMs: number[]; loss: number } {
  const pool = Array.from({ length: 8 }, (_, i) => Rng.fromString(`bench-gpu:z${n}:${i}`).fillNormal(new Float32Array(n * spec.embeddingDim)));
  let s = 0;
  let loss = NaN;
  const step = (): void => {
    loss = gen.trainStep(pool[s % pool.length], n, 1e-4);
    s++;
  };
  for (let i = 0; i < warmup; i++) step();
  const blocksMs: number[] = [];
  for (let b = 0; b < blocks; b++) {
    const t0 = performance.now();
    for (let i = 0; i < perBlock; i++) step();
    blocksMs.push((performance.now() - t0) / perBlock);
  }
  return { ms: median(blocksMs), blocksMs, loss };
}

/** Files the PyTorch script reads: the same weights, targets and first batch. */
function writeProblem(dir: string, spec: GeneratorSpec, targets: MarginalTargets, weights: NamedArrays, z0: Float32Array, rows: number): string {
  const w = lossTargets(targets);
  const blocks = w.blocks.map((b) => ({ f: b.f, c0: b.c0, c1: b.c1, size: b.target.length }));
  const qp = new Float32Array(blocks.reduce((s, b) => s + b.size, 0));
  let at = 0;
  for (const b of w.blocks) {
    qp.set(b.target, at);
    at += b.target.length;
  }
  writeFileSync(join(dir, "weights.f32"), flattenParams(spec, weights));
  writeFileSync(join(dir, "q1.f32"), w.oneWay);
  writeFileSync(join(dir, "qp.f32"), qp);
  writeFileSync(join(dir, "z0.f32"), z0);
  const problem = {
    E: spec.embeddingDim,
    H: spec.hidden,
    L: spec.blocks,
    cardinalities: [...targets.layout.cardinalities],
    count: targets.count,
    neg_entropy: targets.negEntropy,
    blocks,
    rows,
    dir,
  };
  const file = join(dir, "problem.json");
  writeFileSync(file, JSON.stringify(problem));
  return file;
}

/** Runs the benchmark; prints a table (or one JSON line) with the ratios to PyTorch. */
export async function gpuComputeBench(opts: GpuComputeOptions): Promise<void> {
  const st = gpuStatus();
  if (!st.available) throw new Error(`no usable GPU: ${st.reason}`);
  const meta = discreteMetadata(join(opts.datasets, "adult-discrete.csv"), join(opts.datasets, "adult-discrete-domain.json"));
  const targets = buildTargets(meta);
  const spec = generatorSpec("medium", 64, targets.layout);
  const E = spec.embeddingDim;
  const F = targets.layout.cardinalities.length;
  const weights = initParams(spec, Rng.fromString("bench:init"));
  const z0 = Rng.fromString("bench-gpu:z0").fillNormal(new Float32Array(256 * E));

  const make = (tf32: boolean): NativeGenerator => {
    const g = NativeGenerator.create(spec, targets.layout, weights, { device: "gpu", tf32 });
    g.setTargets(targets);
    return g;
  };

  // First loss and gradients against the CPU core (FP32 and TF32).
  const cpu = NativeGenerator.create(spec, targets.layout, weights, { device: "cpu" });
  cpu.setTargets(targets);
  const ref = cpu.lossAndGrads(z0, 256);
  const refFlat = flattenParams(spec, ref.grads);
  const parity = (g: NativeGenerator): { loss: number; loss_rel_err: number; grad_rel_err: number } => {
    const r = g.lossAndGrads(z0, 256);
    return { loss: r.loss, loss_rel_err: Math.abs(r.loss - ref.loss) / ref.loss, grad_rel_err: relErr(flattenParams(spec, r.grads), refFlat) };
  };

  const gen = make(false);
  const fp32Parity = parity(gen);
  const t256 = timeTraining(gen, spec, 256, 30, 10, 50);
  const t8192 = timeTraining(gen, spec, 8192, 10, 5, 20);
  gen.dispose();

  // Generation: 1M rows from host inputs, codes into per-feature host columns.
  const g2 = make(false);
  const n = opts.rows;
  const latents = Rng.fromString("bench-gpu:gen-z").fillUniform(new Float32Array(n * E));
  for (let i = 0; i < latents.length; i++) latents[i] = latents[i] * 4 - 2; // cheap finite latents (drawing is not timed)
  const uniforms = Rng.fromString("bench-gpu:gen-u").fillUniform(new Float64Array(n * F));
  const genRuns: number[] = [];
  await g2.sampleRows({ n: Math.min(n, 1 << 18), latents: latents.subarray(0, Math.min(n, 1 << 18) * E), uniforms, seed: 0 }); // warm-up
  for (let r = 0; r < 3; r++) {
    const t0 = performance.now();
    const cols = await g2.sampleRows({ n, latents, uniforms, seed: 0 });
    const dt = performance.now() - t0;
    if (cols.length !== F || cols[0].length !== n) throw new Error("generation returned the wrong shape");
    genRuns.push((n / dt) * 1000);
  }
  g2.dispose();

  // TF32: speed, error against the CPU's FP32, and the loss after 200 steps against FP32's.
  let tf32: Record<string, unknown> | null = null;
  if (opts.tf32) {
    const a = make(false);
    const b = make(true);
    const p = parity(b);
    const rng = Rng.fromString("bench-gpu:tf32");
    let la = NaN;
    let lb = NaN;
    for (let s = 0; s < 200; s++) {
      const z = rng.fillNormal(new Float32Array(256 * E));
      la = a.trainStep(z, 256, 1e-3);
      lb = b.trainStep(z, 256, 1e-3);
    }
    const wa = flattenParams(spec, a.weights());
    const wb = flattenParams(spec, b.weights());
    const s256 = timeTraining(b, spec, 256, 10, 5, 50);
    const s8192 = timeTraining(b, spec, 8192, 5, 5, 20);
    tf32 = {
      loss_rel_err_vs_cpu_fp32: p.loss_rel_err,
      grad_rel_err_vs_cpu_fp32: p.grad_rel_err,
      loss_after_200_steps_fp32: la,
      loss_after_200_steps_tf32: lb,
      loss_after_200_rel_diff: Math.abs(lb - la) / la,
      weights_after_200_rel_diff: relErr(wb, wa),
      train_ms_b256: s256.ms,
      train_ms_b8192: s8192.ms,
    };
    a.dispose();
    b.dispose();
  }
  cpu.dispose();

  // PyTorch on the same GPU, same weights / targets / first batch.
  let torch: Record<string, number | string> | null = null;
  let torchError: string | null = null;
  if (opts.pytorch) {
    const dir = mkdtempSync(join(tmpdir(), "synthd-bench-gpu-"));
    try {
      const problem = writeProblem(dir, spec, targets, weights, z0, n);
      const [cmd, ...args] = opts.pytorch.split(/\s+/).filter(Boolean);
      const script = join(__dirname, "..", "..", "bench", "pytorch_compute.py");
      const r = spawnSync(cmd, [...args, script, problem], { encoding: "utf8", maxBuffer: 1 << 26 });
      if (r.status !== 0) torchError = `${cmd} exited ${r.status}: ${(r.stderr || "").slice(-2000)}${r.error ? r.error.message : ""}`;
      else torch = JSON.parse(readFileSync(join(dir, "result.json"), "utf8")) as Record<string, number | string>;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  const ours = {
    device: st.device,
    train_ms_b256: t256.ms,
    train_ms_b256_blocks: t256.blocksMs,
    train_ms_b8192: t8192.ms,
    train_ms_b8192_blocks: t8192.blocksMs,
    generate_rows: n,
    generate_rows_per_s: Math.max(...genRuns),
    generate_runs_rows_per_s: genRuns,
    first_loss: fp32Parity.loss,
    fp32_vs_cpu: fp32Parity,
  };
  const ratio = (key: string, higherIsBetter: boolean): number | null => {
    const t = torch?.[key];
    const o = (ours as Record<string, unknown>)[key];
    if (typeof t !== "number" || typeof o !== "number") return null;
    return higherIsBetter ? o / t : t / o;
  };
  const result = {
    bench: "compute-gpu",
    model: { size: "medium", embedding_dim: E, hidden: spec.hidden, blocks: spec.blocks, codes: spec.outputDim, features: F, pairs: targets.pairs.length },
    ours,
    tf32,
    pytorch: torch,
    pytorch_error: torchError,
    ratio_vs_pytorch: {
      train_b256: ratio("train_ms_b256", false),
      train_b8192: ratio("train_ms_b8192", false),
      generate: ratio("generate_rows_per_s", true),
      first_loss_rel_diff: torch && typeof torch.first_loss === "number" ? Math.abs(torch.first_loss - ours.first_loss) / ours.first_loss : null,
    },
  };
  if (opts.json) {
    console.log(JSON.stringify(result));
    return;
  }
  const f = (x: number | null | undefined, d = 3): string => (typeof x === "number" ? x.toFixed(d) : "-");
  console.log(`GPU compute bench on ${st.device}: medium Adult model (${spec.outputDim} codes, ${targets.pairs.length} pairs)`);
  console.log(`  parity vs CPU (FP32): loss rel ${fp32Parity.loss_rel_err.toExponential(2)}, grad rel ${fp32Parity.grad_rel_err.toExponential(2)}`);
  console.log(`  train step b256:  ours ${f(t256.ms)} ms, PyTorch ${f(torch?.train_ms_b256 as number)} ms, ratio ${f(result.ratio_vs_pytorch.train_b256, 2)}x`);
  console.log(`  train step b8192: ours ${f(t8192.ms)} ms, PyTorch ${f(torch?.train_ms_b8192 as number)} ms, ratio ${f(result.ratio_vs_pytorch.train_b8192, 2)}x`);
  console.log(`  generate ${n} rows: ours ${Math.round(ours.generate_rows_per_s)} rows/s, PyTorch ${Math.round((torch?.generate_rows_per_s as number) ?? NaN)} rows/s, ratio ${f(result.ratio_vs_pytorch.generate, 2)}x`);
  if (torchError) console.log(`  PyTorch failed: ${torchError}`);
  if (tf32) console.log(`  TF32: ${JSON.stringify(tf32)}`);
}

if (require.main === module) {
  const argv = process.argv.slice(2);
  const arg = (name: string, dflt: string): string => {
    const i = argv.indexOf(name);
    return i >= 0 && i + 1 < argv.length ? argv[i + 1] : dflt;
  };
  gpuComputeBench({
    json: argv.includes("--json"),
    rows: Number(arg("--rows", "1000000")),
    pytorch: arg("--pytorch", "python3"),
    datasets: arg("--datasets", process.env.SYNTHD_DATASETS ?? join(__dirname, "..", "..", "..", "shared", "datasets")),
    tf32: !argv.includes("--no-tf32"),
  }).catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}
