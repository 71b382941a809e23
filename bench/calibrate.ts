/**
 * `node dist/bench/calibrate.js [--rows N] [--steps S] [--js-runs R] [--json]` (after
 * `npm run build`): in-process cost of calibrated generation's raking (`src/model/calibrate.ts`)
 * on UCI Adult, the TypeScript reference against the native core (`calibrate-native.ts`), on the
 * same pool, with a check that both give the same weights bit for bit.
 *
 * Method: the medium model trained in this process for S optimizer steps (default 500; batch 256,
 * native core) on ../shared/datasets/adult-discrete.csv with every pair given (91 pairs + 14 1-way
 * marginals); a pool of 2 x N rows (default N = 100,000: the 200,000-row pool of the largest
 * calibrated request) drawn as `sampleCalibrated` draws it; then the default raking (10 sweeps,
 * bound 2) of that pool: the reference R times (default 1), the native core 3 times (best kept),
 * with the longest call into the core between two yields (how long a worker's event loop waits).
 * Also reported: the whole `sampleCalibrated` of N rows on the native path (best of 3), the plain
 * draw of N rows, and the systematic sample + shuffle + gather alone.
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { calibrationMarginals, rakingWeights, systematicSample } from "../src/model/calibrate";
import { nativeRakingSweeps } from "../src/model/calibrate-native";
import { drawInputs, sampleCalibrated, sampleRows } from "../src/model/generate";
import { buildTargets } from "../src/model/marginals";
import { nativeCoreStatus } from "../src/model/native-core";
import { Trainer } from "../src/model/trainer";
import { CONFIG_DEFAULTS } from "../src/types";
import { discreteMetadata } from "./compute";
import { SHARED_DATASETS } from "./harness";

/** Runs the benchmark and prints its result (one JSON line with --json). */
export async function calibrateBench(opts: { rows: number; steps: number; jsRuns: number; json: boolean }): Promise<void> {
  const status = nativeCoreStatus();
  if (!status.available) throw new Error(`the native core is not available: ${status.reason}`);
  const meta = discreteMetadata(join(SHARED_DATASETS, "adult-discrete.csv"), join(SHARED_DATASETS, "adult-discrete-domain.json"));
  const marginals = calibrationMarginals(buildTargets(meta));
  const tr = await Trainer.create({
    id: "mdl_0000bench0ca1",
    metadata: meta,
    config: { ...CONFIG_DEFAULTS, device: "cpu", max_epochs: 1, early_stop_patience: 0 },
    stepsPerEpoch: opts.steps,
    compute: "native",
  });
  await tr.runEpoch();
  const model = tr.generator(false);
  const n = opts.rows;
  const E = model.spec.embeddingDim;
  const F = model.layout.features.length;
  const pool = model.layout.cardinalities.map(() => new Int32Array(2 * n));
  for (let k = 0; k < 2; k++) {
    const cols = await sampleRows(model, drawInputs({ numRows: n, seed: 100 + k }, E, F, 0));
    cols.forEach((c, f) => pool[f].set(c, k * n));
  }

  const time = async <T>(fn: () => T | Promise<T>): Promise<[T, number]> => {
    const t0 = performance.now();
    const v = await fn();
    return [v, performance.now() - t0];
  };
  const jsMs: number[] = [];
  let reference: Float64Array | undefined;
  for (let r = 0; r < opts.jsRuns; r++) {
    const [w, ms] = await time(() => rakingWeights(pool, marginals));
    reference = w;
    jsMs.push(ms);
  }
  const nativeMs: number[] = [];
  let identical: boolean | null = null;
  let longestSlice = 0;
  let weights: Float64Array = new Float64Array(0);
  for (let r = 0; r < 3; r++) {
    const [w, ms] = await time(() => {
      const g = nativeRakingSweeps(pool, marginals)!;
      for (;;) {
        const t0 = performance.now();
        const s = g.next();
        longestSlice = Math.max(longestSlice, performance.now() - t0);
        if (s.done) return s.value;
      }
    });
    nativeMs.push(ms);
    weights = w;
    if (reference) identical = (identical ?? true) && w.every((v, i) => Object.is(v, reference![i]));
  }
  // As sampleCalibrated draws (its shuffle's uniforms replaced by a fixed sequence).
  const [, drawMs] = await time(() => {
    const picked = systematicSample(weights, n, 0.5);
    for (let i = n - 1; i > 0; i--) {
      const j = (i * 7919) % (i + 1);
      const t = picked[i];
      picked[i] = picked[j];
      picked[j] = t;
    }
    return pool.map((c) => {
      const out = new Int32Array(n);
      for (let i = 0; i < n; i++) out[i] = c[picked[i]];
      return out;
    });
  });
  const calibratedMs: number[] = [];
  const plainMs: number[] = [];
  for (let r = 0; r < 3; r++) {
    calibratedMs.push((await time(() => sampleCalibrated(model, { numRows: n, seed: r }, 0, marginals)))[1]);
    plainMs.push((await time(() => sampleRows(model, drawInputs({ numRows: n, seed: r }, E, F, 0))))[1]);
  }
  tr.dispose();

  const best = (xs: number[]): number => Math.min(...xs);
  const result = {
    bench: "calibrate",
    pool_rows: 2 * n,
    marginals: marginals.length,
    isa: status.info?.isa,
    threads: status.info?.threads,
    raking_js_ms: jsMs.map((x) => Math.round(x)),
    raking_native_ms: nativeMs.map((x) => Math.round(x)),
    raking_speedup: jsMs.length > 0 ? Number((best(jsMs) / best(nativeMs)).toFixed(1)) : null,
    bit_identical: identical,
    longest_slice_ms: Number(longestSlice.toFixed(1)),
    systematic_draw_ms: Math.round(drawMs),
    calibrated_rows_per_s: Math.round((n / best(calibratedMs)) * 1000),
    plain_rows_per_s: Math.round((n / best(plainMs)) * 1000),
  };
  if (opts.json) {
    console.log(JSON.stringify(result));
    return;
  }
  console.log(`raking of a ${2 * n}-row pool of Adult's medium model (${opts.steps} steps), ${marginals.length} marginals, 10 sweeps, bound 2`);
  console.log(`  TypeScript reference: ${result.raking_js_ms.join(", ")} ms`);
  console.log(`  native core (${result.isa}, ${result.threads} threads): ${result.raking_native_ms.join(", ")} ms (${result.raking_speedup}x), identical: ${identical}`);
  console.log(`  longest call into the core between two yields: ${result.longest_slice_ms} ms`);
  console.log(`  systematic sample + shuffle + gather: ${result.systematic_draw_ms} ms`);
  console.log(`  in-process sampleCalibrated: ${result.calibrated_rows_per_s} rows/s; plain draw ${result.plain_rows_per_s} rows/s`);
}

if (require.main === module) {
  const { values } = parseArgs({
    options: {
      rows: { type: "string", default: "100000" },
      steps: { type: "string", default: "500" },
      "js-runs": { type: "string", default: "1" },
      json: { type: "boolean", default: false },
    },
  });
  calibrateBench({ rows: Number(values.rows), steps: Number(values.steps), jsRuns: Number(values["js-runs"]), json: values.json ?? false }).catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}
