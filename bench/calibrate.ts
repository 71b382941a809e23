/**
 * `node dist/bench/calibrate.js [--rows N] [--steps S] [--js-runs R] [--json]`, or with `--cost
 * [--reps R] [--weights FILE]` the cost of the calibrated draw against the plain draw ({@link costBench}),
 * or with `--http [--reps R] [--epochs E]` the plain draw's server cost over HTTP against in-process
 * ({@link httpCostBench}) (after
 * `npm run build`): in-process cost of calibrated generation's raking (`src/model/sampling/calibrate.ts`)
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
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { CALIBRATION_EXACT_SWEEPS, CALIBRATION_RAKING_PARALLEL, CALIBRATION_SWEEPS, calibrationMarginals, rakingWeights, systematicSample } from "../src/model/sampling/calibrate";
import { nativeRakingSweeps } from "../src/model/compute/calibrate-native";
import { calibrationPool, rake, REPAIR_SEED_TAG, sampleCalibrated } from "../src/model/sampling/calibrated-draw";
import { drawInputs, releaseInputs } from "../src/model/sampling/inputs";
import { sampleRows } from "../src/model/sampling/sample-rows";
import { poolRules, repairPool } from "../src/model/sampling/rule-repair";
import { extractMetadata } from "../src/sdk/metadata/metadata";
import { buildTargets } from "../src/model/generator/targets";
import { checkpointWeights, type Checkpoint } from "../src/model/training/checkpoint";
import { generatorSpec } from "../src/model/generator/generator";
import { layoutOf } from "../src/model/generator/targets";
import { flattenParams, nativeCoreStatus, viewParams } from "../src/model/compute/native-core";
import { NativeGenerator } from "../src/model/compute/native-generator";
import { Synthd } from "../src/sdk";
import { LmdbStore } from "../src/store";
import { Trainer } from "../src/model/training/trainer";
import { CONFIG_DEFAULTS } from "../src/contract";
import { discreteMetadata } from "./compute";
import { ADULT_CSV, removeDir, runCli, SHARED_DATASETS, startServer, tempDir } from "./harness";

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

/** Core-seconds (user + system CPU of the whole process: every thread, native ones included) and wall seconds of `fn`. */
async function cpuTime<T>(fn: () => T | Promise<T>): Promise<{ value: T; cpu: number; wall: number }> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const value = await fn();
  const wall = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  return { value, cpu: (c.user + c.system) / 1e6, wall };
}

/**
 * `--cost`: the server's compute per row of the calibrated draw against the plain draw, in
 * core-seconds per 1,000,000 rows, measured in the same run on raw UCI Adult (issue 25).
 *
 * Method: metadata of data/adult.csv as the SDK extracts it (`analyzeTable`: 15 columns, its row
 * rules included), the medium model trained in this process for S steps (native core); then R
 * rounds of one plain draw (`drawInputs` + `sampleRows`) and one calibrated draw (`sampleCalibrated`
 * with the marginals and pool rules the engine's worker builds), N rows each (default 100,000, the
 * largest request), seeds 0..R-1. Core-seconds are `process.cpuUsage()` (getrusage of the process:
 * user + system time of every thread, the core's compute pool included), so they count the work of
 * all cores; the median of the R rounds is kept. `--weights FILE` keeps the trained weights there
 * (flat float32, written by the first run, read by later ones) so runs compare the same model. Also reported: the calibrated draw's phases, each
 * timed alone on the same model (pool, rule repair, raking, systematic sample + gather).
 */
export async function costBench(opts: { rows: number; steps: number; reps: number; json: boolean; weights?: string }): Promise<void> {
  const status = nativeCoreStatus();
  if (!status.available) throw new Error(`the native core is not available: ${status.reason}`);
  const meta = await extractMetadata(ADULT_CSV);
  const tr = await Trainer.create({
    id: "mdl_0000bench0c05",
    metadata: meta,
    config: { ...CONFIG_DEFAULTS, device: "cpu", max_epochs: 1, early_stop_patience: 0 },
    stepsPerEpoch: opts.steps,
    compute: "native",
  });
  const model = tr.generator(false);
  // --weights FILE: the trained weights are kept there (flat float32) and reused by later runs.
  if (opts.weights && existsSync(opts.weights)) {
    const buf = readFileSync(opts.weights);
    model.native!.setWeights(viewParams(model.spec, new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4)));
  } else {
    await tr.runEpoch();
    if (opts.weights) writeFileSync(opts.weights, flattenParams(model.spec, model.native!.weights()));
  }
  const n = opts.rows;
  const E = model.spec.embeddingDim;
  const F = model.layout.features.length;
  const marginals = calibrationMarginals(buildTargets(meta));
  const rules = poolRules(meta, model.layout.features);
  const plain: { cpu: number; wall: number }[] = [];
  const calibrated: { cpu: number; wall: number }[] = [];
  for (let r = 0; r < opts.reps; r++) {
    plain.push(
      await cpuTime(async () => {
        const inputs = drawInputs({ numRows: n, seed: r }, E, F, 0);
        try {
          return await sampleRows(model, inputs);
        } finally {
          releaseInputs(inputs);
        }
      }),
    );
    calibrated.push(await cpuTime(() => sampleCalibrated(model, { numRows: n, seed: r }, 0, marginals, {}, rules)));
  }
  // The phases, one at a time (seed 0).
  const pool = await cpuTime(() => calibrationPool(model, { numRows: n, seed: 0 }, 0, {}));
  const repair = await cpuTime(() => (rules.length > 0 ? repairPool(pool.value.columns, rules, (0 ^ REPAIR_SEED_TAG) >>> 0) : 0));
  const raking = await cpuTime(() => rake(model, pool.value.columns, marginals, { sweeps: CALIBRATION_SWEEPS, exactSweeps: CALIBRATION_EXACT_SWEEPS, parallel: CALIBRATION_RAKING_PARALLEL }));
  const pick = await cpuTime(() => {
    const picked = systematicSample(raking.value, n, 0.5);
    return pool.value.columns.map((c) => {
      const out = new Int32Array(n);
      for (let i = 0; i < n; i++) out[i] = c[picked[i]];
      return out;
    });
  });
  tr.dispose();
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const perM = (s: number): number => Number(((s * 1e6) / n).toFixed(2));
  const plainCpu = median(plain.map((x) => x.cpu));
  const calCpu = median(calibrated.map((x) => x.cpu));
  const result = {
    bench: "calibrate-cost",
    rows: n,
    features: F,
    width: model.layout.width,
    marginals: marginals.length,
    rules: rules.length,
    isa: status.info?.isa,
    threads: status.info?.threads,
    plain_core_s_per_1m: perM(plainCpu),
    calibrated_core_s_per_1m: perM(calCpu),
    ratio: Number((calCpu / plainCpu).toFixed(2)),
    plain_core_s: plain.map((x) => Number(x.cpu.toFixed(3))),
    calibrated_core_s: calibrated.map((x) => Number(x.cpu.toFixed(3))),
    plain_wall_s: plain.map((x) => Number(x.wall.toFixed(3))),
    calibrated_wall_s: calibrated.map((x) => Number(x.wall.toFixed(3))),
    phases_core_s_per_1m: {
      pool: perM(pool.cpu),
      repair: perM(repair.cpu),
      raking: perM(raking.cpu),
      pick: perM(pick.cpu),
    },
    repaired_rows: repair.value,
  };
  if (opts.json) {
    console.log(JSON.stringify(result));
    return;
  }
  console.log(`raw Adult, medium model (${opts.steps} steps), ${n} rows per draw, ${opts.reps} rounds, ${result.isa} on ${result.threads} threads`);
  console.log(`  plain draw:      ${result.plain_core_s_per_1m} core-s per 1M rows (${result.plain_core_s.join(", ")} core-s)`);
  console.log(`  calibrated draw: ${result.calibrated_core_s_per_1m} core-s per 1M rows (${result.calibrated_core_s.join(", ")} core-s), ${result.ratio}x`);
  console.log(`  phases (core-s per 1M rows): ${JSON.stringify(result.phases_core_s_per_1m)}, ${result.repaired_rows} rows repaired`);
}

/** User + system CPU seconds of process `pid` so far, every thread included (/proc/<pid>/stat fields 14 and 15, in clock ticks of 1/100 s). */
function processCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name (which may hold spaces), from field 3 on.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * `--http`: the plain draw over HTTP against in-process, in SERVER core-seconds per 1,000,000
 * rows, the same model in the same run (issue 25: at most 1.15x).
 *
 * Method: one `synthd serve` (bench/harness.ts, embedded topology: one process, its worker
 * threads included) on a temporary store; a live org with the quota raised; a medium model of
 * data/adult.csv's metadata as the SDK extracts it, trained over HTTP (`--epochs`, default 1).
 * In-process: that model's checkpoint read from the same LMDB store in this process (a second
 * reader; the server keeps writing), a native generator of it, and the plain draw as the worker
 * runs it (`drawInputs` + `sampleRows` + `releaseInputs`), core-seconds by `process.cpuUsage()`.
 * Over HTTP: `client.models.generateCodes(id, {embedding: {num_rows: N, seed}}, {format:
 * "arrow"})`, core-seconds of the server process from /proc/<pid>/stat (utime + stime, every
 * thread, 10 ms ticks) before and after the request: request parsing, the worker's draw, the
 * reply's transfer, the Arrow encoding and the write. One warm-up of each first (the server loads
 * the checkpoint on its first request); then R rounds (default 3) of in-process and HTTP
 * alternating, seeds 0..R-1, N rows each (default 100,000, the largest request); medians. The
 * server's idle CPU over the same wall time is measured before (3 s) and reported.
 */
export async function httpCostBench(opts: { rows: number; reps: number; epochs: number; json: boolean }): Promise<void> {
  const status = nativeCoreStatus();
  if (!status.available) throw new Error(`the native core is not available: ${status.reason}`);
  const dir = tempDir("synthd-bench-");
  const storeDir = join(dir, "store");
  const server = await startServer(storeDir, []);
  const pid = server.child.pid!;
  let reader: LmdbStore | undefined;
  let gen: NativeGenerator | undefined;
  try {
    const keyRun = await runCli(["keys", "create", "--data-dir", storeDir, "--org", "benchcost", "--env", "live"]);
    if (keyRun.code !== 0) throw new Error(`keys create failed: ${keyRun.stderr}`);
    const quota = await runCli(["orgs", "set", "--data-dir", storeDir, "--org", "benchcost", "--live-quota", String(1_000_000_000)]);
    if (quota.code !== 0) throw new Error(`orgs set failed: ${quota.stderr}`);
    const client = new Synthd({ apiKey: keyRun.stdout.trim().split("\n").pop()!, baseUrl: server.url });
    const meta = await extractMetadata(ADULT_CSV);
    const created = await client.models.create({ metadata: meta, config: { model_size: "medium", max_epochs: opts.epochs, early_stop_patience: 0 } });
    await client.models.waitUntilReady(created.id, { timeoutSeconds: 3600 });
    const id = created.id;

    reader = new LmdbStore(storeDir);
    const rec = await reader.getModel(id);
    const md = await reader.getMetadata(id);
    const ckpt = await reader.getCheckpoint<Checkpoint>(id);
    if (!rec || !md || !ckpt) throw new Error("the model's record, metadata or checkpoint is missing from the store");
    const layout = layoutOf(md);
    const spec = generatorSpec(rec.config.model_size, rec.config.embedding_dim, layout);
    gen = NativeGenerator.create(spec, layout, checkpointWeights(ckpt, spec, true));
    const model = { spec, layout, params: {}, native: gen };
    const n = opts.rows;
    const F = layout.features.length;
    const inProcess = (seed: number) =>
      cpuTime(async () => {
        const inputs = drawInputs({ numRows: n, seed }, spec.embeddingDim, F, 0);
        try {
          return await sampleRows(model, inputs);
        } finally {
          releaseInputs(inputs);
        }
      });
    const overHttp = async (seed: number): Promise<{ cpu: number; wall: number }> => {
      const c0 = processCpuSeconds(pid);
      const t0 = performance.now();
      const g = await client.models.generateCodes(id, { embedding: { num_rows: n, seed } }, { format: "arrow" });
      const wall = (performance.now() - t0) / 1000;
      const cpu = processCpuSeconds(pid) - c0;
      if (g.num_rows !== n) throw new Error(`got ${g.num_rows} rows`);
      return { cpu, wall };
    };
    const i0 = processCpuSeconds(pid);
    await new Promise((r) => setTimeout(r, 3000));
    const idlePerS = (processCpuSeconds(pid) - i0) / 3;
    await inProcess(1000);
    await overHttp(1000);
    const local: { cpu: number; wall: number }[] = [];
    const http: { cpu: number; wall: number }[] = [];
    for (let r = 0; r < opts.reps; r++) {
      local.push(await inProcess(r));
      http.push(await overHttp(r));
    }
    const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const perM = (x: number): number => Number(((x * 1e6) / n).toFixed(2));
    const localCpu = median(local.map((x) => x.cpu));
    const httpCpu = median(http.map((x) => x.cpu));
    const result = {
      bench: "calibrate-http-cost",
      rows: n,
      features: F,
      isa: status.info?.isa,
      threads: status.info?.threads,
      in_process_core_s_per_1m: perM(localCpu),
      http_server_core_s_per_1m: perM(httpCpu),
      ratio: Number((httpCpu / localCpu).toFixed(2)),
      in_process_core_s: local.map((x) => Number(x.cpu.toFixed(3))),
      http_server_core_s: http.map((x) => Number(x.cpu.toFixed(3))),
      in_process_wall_s: local.map((x) => Number(x.wall.toFixed(3))),
      http_wall_s: http.map((x) => Number(x.wall.toFixed(3))),
      server_idle_core_s_per_s: Number(idlePerS.toFixed(3)),
    };
    if (opts.json) {
      console.log(JSON.stringify(result));
      return;
    }
    console.log(`raw Adult, medium model (${opts.epochs} epoch(s) over HTTP), plain draw of ${n} rows, ${opts.reps} rounds, ${result.isa} on ${result.threads} threads`);
    console.log(`  in-process:                 ${result.in_process_core_s_per_1m} core-s per 1M rows (${result.in_process_core_s.join(", ")} core-s)`);
    console.log(`  over HTTP (Arrow), server:  ${result.http_server_core_s_per_1m} core-s per 1M rows (${result.http_server_core_s.join(", ")} core-s), ${result.ratio}x`);
    console.log(`  server idle: ${result.server_idle_core_s_per_s} core-s per s`);
  } finally {
    gen?.dispose();
    await reader?.close();
    await server.kill("SIGTERM");
    removeDir(dir);
  }
}

if (require.main === module) {
  const { values } = parseArgs({
    options: {
      rows: { type: "string", default: "100000" },
      steps: { type: "string", default: "500" },
      "js-runs": { type: "string", default: "1" },
      reps: { type: "string", default: "3" },
      cost: { type: "boolean", default: false },
      http: { type: "boolean", default: false },
      epochs: { type: "string", default: "1" },
      weights: { type: "string" },
      json: { type: "boolean", default: false },
    },
  });
  if (values.http) {
    httpCostBench({ rows: Number(values.rows), reps: Number(values.reps), epochs: Number(values.epochs), json: values.json ?? false }).catch((e: unknown) => {
      console.error(e);
      process.exit(1);
    });
  } else if (values.cost) {
    costBench({ rows: Number(values.rows), steps: Number(values.steps), reps: Number(values.reps), json: values.json ?? false, weights: values.weights }).catch((e: unknown) => {
      console.error(e);
      process.exit(1);
    });
  } else calibrateBench({ rows: Number(values.rows), steps: Number(values.steps), jsRuns: Number(values["js-runs"]), json: values.json ?? false }).catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}
