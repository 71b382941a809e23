/**
 * `npm run bench -- generate [--json]`: generation end to end over HTTP through the SDK, decode
 * included, against the in-process rate of the same model shape measured in the same run (the
 * baseline; issue 4 acceptance 2 asks for at least 50%).
 *
 * Method: one `synthd serve` on a temporary store (`--compute` passed through when given).
 * Each of `--runs` runs uses its own org (a fresh sandbox key from `synthd keys create`, since the
 * sandbox quota is 100,000 rows a month): `Synthesizer.fit` of the medium model on
 * ../shared/datasets/adult-discrete.csv (domain mode, all 91 pairs, 1 epoch), then one timed
 * `synth.sample(rows, { calibrate: false })`: one generate request of `rows` rows (the plain draw),
 * JSON over HTTP, decoded to strings by the SDK. The in-process baseline: the native core's
 * forward + sampling of the same number of rows for the same model shape (best of 3), in this
 * process, before the server starts. Each run then repeats fit and sample with calibration (the
 * SDK's default, `src/model/sampling/calibrate.ts`) under another org, so its cost is on record:
 * `http_calibrated_rows_per_s` and its ratio to the plain draw.
 *
 * Codes over HTTP (issue 13, acceptance 3): under one more org (live key, quota raised with
 * `synthd orgs set`), one fitted model, `client.models.generateCodes` of `rows` rows, plain draw,
 * no decoding: the JSON body and the Arrow body (`Accept: application/vnd.apache.arrow.stream`),
 * 3 requests each, alternating; best rows/s of each and its ratio to the in-process rate.
 */
import { availableParallelism, loadavg } from "node:os";
import { join } from "node:path";
import { prepareInputs, releaseInputs } from "../src/model/sampling/inputs";
import { generatorSpec, initParams } from "../src/model/generator/generator";
import { buildTargets } from "../src/model/generator/targets";
import { NativeGenerator } from "../src/model/compute/native-generator";
import { nativeCoreStatus } from "../src/model/compute/native-core";
import { Rng } from "../src/model/sampling/xoshiro";
import { Synthd, Synthesizer } from "../src/sdk";
import { discreteMetadata } from "./compute";
import { removeDir, runCli, SHARED_DATASETS, startServer, tempDir } from "./harness";

/** Options of the generate benchmark. */
export interface GenerateOptions {
  json: boolean;
  rows: number;
  runs: number;
  compute?: string;
  /**
   * `--shared`: also run the plain draw (SDK, decode included) and the Arrow codes through a front
   * end of the shared topology (issue 14: one front end and one worker on PostgreSQL and Redis,
   * bench/topology.ts) and print the ratios to the embedded server's figures of the same run.
   */
  shared?: boolean;
}

/** The shared topology's figures of {@link GenerateOptions.shared}. */
interface SharedGenerate {
  http_rows_per_s: number;
  runs: number[];
  codes_arrow_rows_per_s: number;
}

async function sharedGenerate(opts: GenerateOptions): Promise<SharedGenerate> {
  const { Topology } = await import("./topology");
  const t = await Topology.start({ workers: 1, frontEnds: 1, threads: availableParallelism() });
  try {
    const key = await t.createKey("benchshared", "live");
    await t.setOrg("benchshared", { liveQuota: 1_000_000_000 });
    const client = new Synthd({ apiKey: key, baseUrl: t.frontEnds[0].url });
    const synth = await Synthesizer.fit(client, join(SHARED_DATASETS, "adult-discrete.csv"), {
      domain: join(SHARED_DATASETS, "adult-discrete-domain.json"),
      config: { model_size: "medium", max_epochs: 1, early_stop_patience: 0 },
    });
    const runs: number[] = [];
    for (let r = 0; r < opts.runs; r++) {
      const t0 = performance.now();
      const table = await synth.sample(opts.rows, { seed: r, calibrate: false });
      if (table.rows.length !== opts.rows) throw new Error(`got ${table.rows.length} rows`);
      runs.push(Math.round((opts.rows / (performance.now() - t0)) * 1000));
    }
    let arrow = 0;
    for (let rep = 0; rep < 3; rep++) {
      const t0 = performance.now();
      const g = await client.models.generateCodes(synth.id, { embedding: { num_rows: opts.rows, seed: rep } }, { format: "arrow" });
      if (g.num_rows !== opts.rows) throw new Error(`got ${g.num_rows} rows`);
      arrow = Math.max(arrow, Math.round((opts.rows / (performance.now() - t0)) * 1000));
    }
    return { http_rows_per_s: Math.max(...runs), runs, codes_arrow_rows_per_s: arrow };
  } finally {
    await t.close();
  }
}

async function inProcessRowsPerS(rows: number): Promise<number> {
  const meta = discreteMetadata(join(SHARED_DATASETS, "adult-discrete.csv"), join(SHARED_DATASETS, "adult-discrete-domain.json"));
  const targets = buildTargets(meta);
  const spec = generatorSpec("medium", 64, targets.layout);
  const gen = NativeGenerator.create(spec, targets.layout, initParams(spec, Rng.fromString("bench:init")));
  let best = 0;
  for (let r = 0; r < 3; r++) {
    const inputs = prepareInputs({ num_rows: rows, seed: 7 + r }, spec.embeddingDim, targets.layout.features.length, 0);
    const t0 = performance.now();
    await gen.sampleRows(inputs);
    best = Math.max(best, (rows / (performance.now() - t0)) * 1000);
  }
  gen.dispose();
  return best;
}

/**
 * In-process generation with and without the server's draws (issue 13, acceptance 4): the medium
 * model on the native core, `rows` rows per call, `reps` alternating pairs; "without" times
 * `sampleRows` on inputs drawn beforehand, "with" times `prepareInputs` (latents and uniforms,
 * native draws when the addon is loaded) plus `sampleRows`, each giving its arrays back after
 * (`releaseInputs`, as the server does, so both run on reused arrays). Best of `reps` each, rows/s.
 */
export async function inProcessDrawRates(rows: number, reps = 5): Promise<{ without: number; with: number; ratio: number }> {
  const meta = discreteMetadata(join(SHARED_DATASETS, "adult-discrete.csv"), join(SHARED_DATASETS, "adult-discrete-domain.json"));
  const targets = buildTargets(meta);
  const spec = generatorSpec("medium", 64, targets.layout);
  const gen = NativeGenerator.create(spec, targets.layout, initParams(spec, Rng.fromString("bench:init")));
  const F = targets.layout.features.length;
  let without = 0;
  let withDraws = 0;
  try {
    for (let r = 0; r < reps; r++) {
      const pre = prepareInputs({ num_rows: rows, seed: 7 + r }, spec.embeddingDim, F, 0);
      let t0 = performance.now();
      await gen.sampleRows(pre);
      without = Math.max(without, (rows / (performance.now() - t0)) * 1000);
      releaseInputs(pre);
      t0 = performance.now();
      const drawn = prepareInputs({ num_rows: rows, seed: 7 + r }, spec.embeddingDim, F, 0);
      await gen.sampleRows(drawn);
      releaseInputs(drawn); // as the server does: the next request reuses the arrays
      withDraws = Math.max(withDraws, (rows / (performance.now() - t0)) * 1000);
    }
  } finally {
    gen.dispose();
  }
  return { without: Math.round(without), with: Math.round(withDraws), ratio: Number((withDraws / without).toFixed(3)) };
}

/** Runs the benchmark and prints its result (a JSON line with `--json`). */
export async function generateBench(opts: GenerateOptions): Promise<void> {
  const status = nativeCoreStatus();
  const loadBefore = loadavg();
  const inProcess = status.available ? await inProcessRowsPerS(opts.rows) : null;
  const draws = status.available ? await inProcessDrawRates(opts.rows) : null;

  const dir = tempDir("synthd-bench-");
  const store = join(dir, "store");
  const server = await startServer(store, opts.compute ? ["--compute", opts.compute] : []);
  const runs: { calibrate: boolean; rows_per_s: number; fit_s: number }[] = [];
  const codes = { json: 0, arrow: 0 };
  try {
    for (let r = 0; r < opts.runs; r++) {
      for (const calibrate of [false, true]) {
        const org = `bench${r}${calibrate ? "c" : ""}`;
        const keyRun = await runCli(["keys", "create", "--data-dir", store, "--org", org]);
        if (keyRun.code !== 0) throw new Error(`keys create failed: ${keyRun.stderr}`);
        const client = new Synthd({ apiKey: keyRun.stdout.trim().split("\n").pop()!, baseUrl: server.url });
        const f0 = performance.now();
        const synth = await Synthesizer.fit(client, join(SHARED_DATASETS, "adult-discrete.csv"), {
          domain: join(SHARED_DATASETS, "adult-discrete-domain.json"),
          config: { model_size: "medium", max_epochs: 1, early_stop_patience: 0 },
        });
        const fitS = (performance.now() - f0) / 1000;
        const t0 = performance.now();
        const table = await synth.sample(opts.rows, { seed: r, calibrate });
        const s = (performance.now() - t0) / 1000;
        if (table.rows.length !== opts.rows) throw new Error(`got ${table.rows.length} rows`);
        runs.push({ calibrate, rows_per_s: Math.round(opts.rows / s), fit_s: Number(fitS.toFixed(2)) });
      }
    }
    const keyRun = await runCli(["keys", "create", "--data-dir", store, "--org", "benchcodes", "--env", "live"]);
    if (keyRun.code !== 0) throw new Error(`keys create failed: ${keyRun.stderr}`);
    const quota = await runCli(["orgs", "set", "--data-dir", store, "--org", "benchcodes", "--live-quota", String(1_000_000_000)]);
    if (quota.code !== 0) throw new Error(`orgs set failed: ${quota.stderr}`);
    const client = new Synthd({ apiKey: keyRun.stdout.trim().split("\n").pop()!, baseUrl: server.url });
    const synth = await Synthesizer.fit(client, join(SHARED_DATASETS, "adult-discrete.csv"), {
      domain: join(SHARED_DATASETS, "adult-discrete-domain.json"),
      config: { model_size: "medium", max_epochs: 1, early_stop_patience: 0 },
    });
    for (let rep = 0; rep < 3; rep++) {
      for (const format of ["json", "arrow"] as const) {
        const t0 = performance.now();
        const g = await client.models.generateCodes(synth.id, { embedding: { num_rows: opts.rows, seed: rep } }, { format });
        const rate = (opts.rows / (performance.now() - t0)) * 1000;
        if (g.num_rows !== opts.rows) throw new Error(`got ${g.num_rows} rows`);
        codes[format] = Math.max(codes[format], Math.round(rate));
      }
    }
  } finally {
    await server.kill("SIGTERM");
    removeDir(dir);
  }
  const shared = opts.shared ? await sharedGenerate(opts) : undefined;
  const plain = runs.filter((x) => !x.calibrate);
  const calibrated = runs.filter((x) => x.calibrate);
  const best = Math.max(...plain.map((x) => x.rows_per_s));
  const bestCalibrated = Math.max(...calibrated.map((x) => x.rows_per_s));
  const result = {
    bench: "generate",
    rows_per_request: opts.rows,
    compute: opts.compute ?? "server default",
    http_rows_per_s: best,
    runs,
    in_process_rows_per_s: inProcess === null ? null : Math.round(inProcess),
    http_over_in_process: inProcess === null ? null : Number((best / inProcess).toFixed(2)),
    in_process_with_draws_rows_per_s: draws?.with ?? null,
    in_process_draws_ratio: draws?.ratio ?? null,
    http_calibrated_rows_per_s: bestCalibrated,
    codes_json_rows_per_s: codes.json,
    codes_arrow_rows_per_s: codes.arrow,
    codes_json_over_in_process: inProcess === null ? null : Number((codes.json / inProcess).toFixed(2)),
    codes_arrow_over_in_process: inProcess === null ? null : Number((codes.arrow / inProcess).toFixed(2)),
    calibrated_over_plain: Number((bestCalibrated / best).toFixed(2)),
    loadavg_before: loadBefore.map((x) => Number(x.toFixed(2))),
    loadavg_after: loadavg().map((x) => Number(x.toFixed(2))),
    ...(shared && {
      shared_topology: {
        setup: "1 front end + 1 worker, PostgreSQL + Redis, same machine",
        ...shared,
        http_over_embedded: Number((shared.http_rows_per_s / best).toFixed(2)),
        codes_arrow_over_embedded: Number((shared.codes_arrow_rows_per_s / codes.arrow).toFixed(2)),
      },
    }),
  };
  if (opts.json) {
    console.log(JSON.stringify(result));
    return;
  }
  console.log(`generate over HTTP (SDK, decode included), ${opts.rows} rows per request, compute ${result.compute}`);
  console.log(`  HTTP:        ${best} rows/s (plain draw, best of ${plain.length}: ${plain.map((x) => x.rows_per_s).join(", ")})`);
  console.log(`  in-process:  ${result.in_process_rows_per_s ?? "n/a (no native core)"} rows/s (native forward + sampling)`);
  if (result.http_over_in_process !== null) console.log(`  HTTP / in-process: ${result.http_over_in_process}`);
  if (draws) console.log(`  in-process with the server's draws: ${draws.with} rows/s against ${draws.without} without (ratio ${draws.ratio}, alternating, best of 5)`);
  console.log(`  HTTP calibrated: ${bestCalibrated} rows/s (best of ${calibrated.length}), ${result.calibrated_over_plain} of the plain draw`);
  console.log(
    `  codes over HTTP, no decoding (best of 3): JSON ${codes.json} rows/s (${result.codes_json_over_in_process ?? "-"} of in-process), ` +
      `Arrow ${codes.arrow} rows/s (${result.codes_arrow_over_in_process ?? "-"} of in-process)`,
  );
  const sh = result.shared_topology;
  if (sh) {
    console.log(`  shared topology (${sh.setup}):`);
    console.log(`    HTTP plain draw ${sh.http_rows_per_s} rows/s (best of ${sh.runs.length}: ${sh.runs.join(", ")}), ${sh.http_over_embedded} of the embedded server's`);
    console.log(`    Arrow codes ${sh.codes_arrow_rows_per_s} rows/s, ${sh.codes_arrow_over_embedded} of the embedded server's`);
  }
  console.log(`  load average before ${result.loadavg_before.join(" ")}, after ${result.loadavg_after.join(" ")}`);
}
