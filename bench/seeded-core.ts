/**
 * `node dist/bench/seeded-core.js [--epochs N] [--rows N] [--reps N] [--json] [--weights FILE] [--save FILE]`:
 * in-process speed of seeded generation (`src/model/conditional/`) against the plain draw
 * (issue 12: 100,000 rows with a one-column condition at >= 50% of the plain draw's rows/s,
 * five columns at >= 20%).
 *
 * Method: the medium generator (E = 64) trained in-process on discretised UCI Adult
 * (../shared/datasets/adult-discrete.csv with its domain, all 91 pairs, default config, native
 * compute, `--epochs` epochs, default 100 = the default run's plan), or the flat weights of
 * `--weights FILE` (written by an earlier run with `--save FILE`). Plain draw: `drawInputs` +
 * `sampleRows` of `--rows` rows (the path of a generate request, latents drawn by the server).
 * Seeded: `sampleSeeded` of the same number of rows for each condition below. Every repetition
 * runs, for each condition, a plain draw and right after it the seeded draw, so load from other
 * processes hits both; `ratio` is the best seeded rate over the best plain rate of `--reps`
 * (default 3) repetitions, `paired_ratio_median` the median over repetitions of seeded / the plain
 * run just before it (the steadier figure on a shared machine). Also reported per condition:
 * candidates evaluated, extra rows (forward passes beyond the candidates), rounds, subspace rank,
 * ESS and the estimated probability of the condition.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { median } from "simple-statistics";
import { sampleSeeded, type ConditionalResult, type RowCondition } from "../src/model/conditional";
import { drawInputs } from "../src/model/sampling/inputs";
import { sampleRows } from "../src/model/sampling/sample-rows";
import { generatorSpec } from "../src/model/generator/generator";
import { layoutOf } from "../src/model/generator/targets";
import { flattenParams, nativeCoreStatus, unflattenParams } from "../src/model/compute/native-core";
import { NativeGenerator } from "../src/model/compute/native-generator";
import type { GeneratorModel } from "../src/model/generator/model";
import { Trainer } from "../src/model/training/trainer";
import { CONFIG_DEFAULTS, type Metadata } from "../src/contract";
import { discreteMetadata } from "./compute";
import { SHARED_DATASETS } from "./harness";

interface Args {
  epochs: number;
  rows: number;
  reps: number;
  json: boolean;
  weights?: string;
  save?: string;
}

function parseArgs(argv: string[]): Args {
  const out: Args = { epochs: 100, rows: 100_000, reps: 3, json: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--json") out.json = true;
    else if (a === "--epochs") out.epochs = Number(argv[++i]);
    else if (a === "--rows") out.rows = Number(argv[++i]);
    else if (a === "--reps") out.reps = Number(argv[++i]);
    else if (a === "--weights") out.weights = argv[++i];
    else if (a === "--save") out.save = argv[++i];
    else throw new Error(`unknown argument ${a}`);
  }
  return out;
}

async function adultModel(meta: Metadata, args: Args, log: (s: string) => void): Promise<GeneratorModel> {
  const layout = layoutOf(meta);
  const spec = generatorSpec("medium", 64, layout);
  if (args.weights) {
    const buf = readFileSync(args.weights);
    const flat = new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
    return { spec, layout, params: {}, native: NativeGenerator.create(spec, layout, unflattenParams(spec, flat)) };
  }
  const config = { ...CONFIG_DEFAULTS, max_epochs: args.epochs, early_stop_patience: 0, device: "cpu" as const };
  const tr = await Trainer.create({ id: "mdl_seededbench01", metadata: meta, config, compute: "native" });
  const t0 = performance.now();
  for (let e = 0; e < args.epochs; e++) await tr.runEpoch();
  log(`trained ${args.epochs} epochs in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const g = tr.generator(true);
  const weights = g.native ? g.native.weights() : undefined;
  if (!weights) throw new Error("native compute unavailable");
  if (args.save) {
    const flat = flattenParams(spec, weights);
    writeFileSync(args.save, Buffer.from(flat.buffer, flat.byteOffset, flat.byteLength));
  }
  return { spec, layout, params: {}, native: NativeGenerator.create(spec, layout, weights) };
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const log = (s: string): void => {
    if (!args.json) process.stderr.write(`${s}\n`);
  };
  if (!nativeCoreStatus().available) throw new Error(`the native core is unavailable: ${nativeCoreStatus().reason}`);
  const meta = discreteMetadata(join(SHARED_DATASETS, "adult-discrete.csv"), join(SHARED_DATASETS, "adult-discrete-domain.json"));
  const model = await adultModel(meta, args, log);
  const { layout, spec } = model;
  const F = layout.features.length;
  const fi = (name: string): number => {
    const f = layout.features.indexOf(name);
    if (f < 0) throw new Error(`no feature ${name}`);
    return f;
  };
  const mode = (name: string): number => {
    const p = meta.empirical_probs[name];
    return p.indexOf(Math.max(...p));
  };
  const cond = (cells: [string, number | number[]][]): RowCondition => {
    const c: (number | number[] | null)[] = new Array(F).fill(null);
    for (const [name, v] of cells) c[fi(name)] = v;
    return c;
  };
  const range = (a: number, b: number): number[] => Array.from({ length: b - a + 1 }, (_, i) => a + i);
  const conditions: { name: string; columns: number; condition: RowCondition }[] = [
    { name: "sex=0", columns: 1, condition: cond([["sex", 0]]) },
    { name: "income>50K=1", columns: 1, condition: cond([["income>50K", 1]]) },
    { name: "age in codes 3..12", columns: 1, condition: cond([["age", range(3, 12)]]) },
    { name: "relationship=0", columns: 1, condition: cond([["relationship", 0]]) },
    { name: "race=3", columns: 1, condition: cond([["race", 3]]) },
    {
      name: "sex=1, race=mode, workclass=mode, education-num=mode, income>50K=1",
      columns: 5,
      condition: cond([["sex", 1], ["race", mode("race")], ["workclass", mode("workclass")], ["education-num", mode("education-num")], ["income>50K", 1]]),
    },
    {
      name: "age in codes 10..19, race=mode, hours-per-week=mode, sex=0, income>50K=1",
      columns: 5,
      condition: cond([["age", range(10, 19)], ["race", mode("race")], ["hours-per-week", mode("hours-per-week")], ["sex", 0], ["income>50K", 1]]),
    },
  ];
  const n = args.rows;
  const plainRun = async (seed: number): Promise<number> => {
    const t0 = performance.now();
    const inputs = drawInputs({ numRows: n, seed }, spec.embeddingDim, F, 0);
    await sampleRows(model, inputs);
    return (n / (performance.now() - t0)) * 1000;
  };
  let plainBest = 0;
  const best = new Map<string, { rowsPerS: number; res: ConditionalResult }>();
  const paired = new Map<string, number[]>();
  for (let rep = 0; rep < args.reps; rep++) {
    for (const c of conditions) {
      // Each seeded run right after a plain run: their ratio is one paired measurement.
      const plain = await plainRun(100 + rep);
      plainBest = Math.max(plainBest, plain);
      const t1 = performance.now();
      const res = await sampleSeeded(model, c.condition, n, { seed: 100 + rep });
      const rate = (n / (performance.now() - t1)) * 1000;
      const prev = best.get(c.name);
      if (!prev || rate > prev.rowsPerS) best.set(c.name, { rowsPerS: rate, res });
      paired.set(c.name, [...(paired.get(c.name) ?? []), rate / plain]);
      log(`rep ${rep}: plain ${Math.round(plain)} rows/s, ${c.name}: ${Math.round(rate)} rows/s`);
    }
  }
  const results = conditions.map((c) => {
    const { rowsPerS, res } = best.get(c.name) as { rowsPerS: number; res: ConditionalResult };
    const g = res.groups[0];
    return {
      condition: c.name,
      columns: c.columns,
      rows_per_s: Math.round(rowsPerS),
      ratio: Number((rowsPerS / plainBest).toFixed(3)),
      paired_ratio_median: Number(median(paired.get(c.name) as number[]).toFixed(3)),
      candidates: g.candidates,
      redraws: g.redraws,
      forward_per_row: Number(((g.candidates + g.redraws) / n).toFixed(3)),
      rounds: g.rounds,
      rank: g.rank,
      ess: Math.round(g.ess),
      ess_target: g.essTarget,
      probability: Number(Math.exp(g.logProb).toPrecision(4)),
    };
  });
  const out = { bench: "seeded-core", rows: n, reps: args.reps, compute: nativeCoreStatus().info, plain_rows_per_s: Math.round(plainBest), results };
  if (args.json) {
    process.stdout.write(`${JSON.stringify(out)}\n`);
    return;
  }
  process.stdout.write(`plain draw: ${out.plain_rows_per_s} rows/s (${n} rows, best of ${args.reps})\n`);
  for (const r of results) {
    process.stdout.write(
      `${r.ratio.toFixed(3)} (paired median ${r.paired_ratio_median.toFixed(3)})  ${String(r.rows_per_s).padStart(7)} rows/s  fwd/row ${r.forward_per_row}  ESS ${r.ess}/${r.ess_target}  rounds ${r.rounds}  rank ${r.rank}  P ${r.probability}  [${r.columns} col] ${r.condition}\n`,
    );
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
