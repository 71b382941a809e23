/**
 * Benchmarks: `npm run bench -- <name> [options]`. Each prints ratios against a baseline measured
 * in the same run; `--json` prints one JSON line for scripts.
 *
 * - `latency`: GET /v1/models/{id} p50/p99 while two models train vs an idle server, and a 10-row
 *   generate of model A while two large models train on the same (only) worker vs idle; with
 *   `--shared`, the same GETs and 10-row generates through a front end of the shared topology
 *   (PostgreSQL, Redis, one worker; bench/topology.ts) over the embedded server's.
 * - `compute`: the native compute core (train step, generation) vs tfjs and the PyTorch figures.
 * - `generate`: rows/s over HTTP through the SDK (decode included) vs in-process generation; with
 *   `--shared`, the plain draw and Arrow codes through the shared topology over the embedded server's.
 * - `fidelity`: issue 5's protocol on discretized Adult (TVD, TSTR, privacy check, fit seconds)
 *   against independent marginals and HOLDOUT in the same run; `--epsilon` for the private variant.
 * - `tables`: the real tables (shared `real/*.csv` and Adult, and public tables of vega-datasets the
 *   project was not tuned on) fitted with the SDK's defaults: 2-way TVD vs independent columns and a
 *   resample of the real rows (gap closed), the column checks, realism (letter soup, real places,
 *   structural zeros, linear identities, grain), rules kept and near-copies.
 * - `extract`: metadata extraction (`analyzeTable`) of N rows (Adult repeated) against DuckDB's read
 *   and every 1-way and 2-way count on the same file in the same run: wall, core-s, peak RSS.
 * - `memory`: the training-memory estimate of admission control (src/engine/admission/estimate.ts) vs the
 *   server's measured peak RSS growth per config (small to the heavy and wide configs of issue 11).
 * - `seeded`: issue 12's seeded generation on raw Adult: conditioned samples' TVD against TRAIN's
 *   conditioned rows vs an unconditional sample, imputation accuracy of blanked HOLDOUT cells vs the
 *   marginal and most-frequent baselines, and seeded rows/s over HTTP vs the plain draw.
 * - `near-copies`: the near-copy check (bench/near-copies.ts) on a 45-row public table, cars and
 *   the tables of `tables`, fitted with the defaults through the SDK and through the plain CLI:
 *   synthetic near-copies of real rows vs a 50/50 split, with and without the filter, 2-way TVD.
 * - `request-path`: the files and lines of src one plain Generate request runs on the server's
 *   main thread (bench/request-path.ts).
 * - `disk-full`: issue 39's full-disk scenario on a tmpfs (root), repeated: crashes, answers while
 *   full, training paused and resumed, usage against rows delivered.
 * - `edge-flood`: issue 39's idle and slowloris connections on both ports of one server (main and
 *   `--http10-port`): how long the server keeps them, and whether both ports keep answering.
 * - `large-bodies`: issue 39's large Create Model bodies (bench/large-bodies.ts): another org's GET
 *   p50/p99 while one tenant sends a 13.8 MiB body once a second (valid, invalid JSON, invalid
 *   schema, failing the metadata checks), vs idle; `--shared` through a shared topology's front end.
 * - `decode`: client-side decoding rows/s of a table's codes in batches as a sample decodes them
 *   (bench/decode.ts), per batch size; `--against DIR` compares another build on the same codes.
 * - `sample`: issue 13's end-to-end table (bench/sample.ts): the CLI to CSV, Parquet and Arrow, codes
 *   over HTTP as JSON and Arrow, in-process with server-drawn latents, each over the in-process rate.
 */
import { Command } from "commander";
import { computeBench, type ComputeOptions } from "./compute";
import { SHARED_DATASETS } from "./harness";
import { generateBench } from "./generate";
import { latencyBench } from "./latency";
import { fidelityBench } from "./fidelity";
import { tablesBench } from "./tables";
import { extractBench } from "./extract";
import { memoryBench } from "./memory";
import { seededBench } from "./seeded";
import { sampleBench } from "./sample";
import { nearCopiesBench } from "./near-copies";
import { requestPathBench } from "./request-path";
import { diskFullBench } from "./disk-full";
import { edgeFloodBench } from "./edge-flood";
import { largeBodiesBench } from "./large-bodies";
import { decodeBench } from "./decode";

const program = new Command("bench").description("synthd benchmarks");
/** Option parser of the numeric options. */
const num = (v: string): number => Number(v);

program
  .command("latency")
  .description("GET latency while two models train, vs idle")
  .option("--requests <n>", "requests per phase", num, 2000)
  .option("--concurrency <n>", "parallel keep-alive connections", num, 4)
  .option("--generate-requests <n>", "sequential 10-row generates per phase of the one-worker case", num, 40)
  .option("--shared", "also measure a front end of the shared topology (PostgreSQL + Redis), ratios to the embedded server", false)
  .option("--json", "one JSON line", false)
  .action(latencyBench);

program
  .command("compute")
  .description("native core: medium-model train step and generation rows/s, vs tfjs in the same run")
  .option("--blocks <n>", "timed blocks of 20 training steps", num, 10)
  .option("--warmup <n>", "training steps before timing", num, 20)
  .option("--rows <n>", "rows per generation run", num, 100_000)
  .option("--no-baseline", "skip the tfjs baseline")
  .option("--baseline-steps <n>", "tfjs steps per timed block (3 blocks)", num, 3)
  .option("--baseline-rows <n>", "rows per tfjs generation run", num, 10_000)
  .option("--json", "one JSON line", false)
  .option("--device <device>", "cpu (default), or gpu: the CUDA core beside PyTorch on the same GPU (bench/compute-gpu.ts)", "cpu")
  .option("--pytorch <cmd>", "with --device gpu: the Python that runs bench/pytorch_compute.py (\"\" skips it)", "python3")
  .option("--datasets <dir>", "with --device gpu: the folder of adult-discrete.csv", SHARED_DATASETS)
  .action(async (opts: ComputeOptions & { device: string; pytorch: string; datasets: string }) => {
    if (opts.device === "gpu") {
      // Loaded only here: it needs nothing of the other benchmarks.
      const { gpuComputeBench } = await import("./compute-gpu");
      await gpuComputeBench({ json: opts.json, rows: opts.rows === 100_000 ? 1_000_000 : opts.rows, pytorch: opts.pytorch, datasets: opts.datasets, tf32: true });
      return;
    }
    if (opts.device !== "cpu") throw new Error(`--device must be cpu or gpu, got ${opts.device}`);
    await computeBench(opts);
  });

program
  .command("generate")
  .description("rows/s end to end over HTTP through the SDK, decode included, vs in-process")
  .option("--rows <n>", "rows per generate request (at most 100,000)", num, 100_000)
  .option("--runs <n>", "timed runs, each in its own org (sandbox quota)", num, 3)
  .option("--compute <kind>", "passed to synthd serve --compute (tfjs | native)")
  .option("--shared", "also through a front end of the shared topology (PostgreSQL + Redis), ratios to the embedded server", false)
  .option("--json", "one JSON line", false)
  .action(generateBench);

program
  .command("fidelity")
  .description("1/2/3-way TVD, TSTR AUC, privacy check and fit time on discretized Adult (issue 5)")
  .option("--json", "one JSON line", false)
  .option("--epsilon <e>", "differential privacy: epsilon of the marginals", num)
  .option("--delta <d>", "delta for --epsilon (default 1e-9)", num)
  .option("--config <json>", "model config as JSON (default: the server's defaults)")
  .option("--data <which>", "discrete (shared discretized Adult) or raw (data/adult.csv)", "discrete")
  .option("--seed <s>", "seed of the split, sampling, evaluation and privacy noise", num, 0)
  .option("--calibrate", "calibrated generation (default unless --epsilon); also reports the plain draw")
  .option("--no-calibrate", "the plain draw only")
  .action(fidelityBench);

program
  .command("large-bodies")
  .description("another org's GET p50/p99 while one tenant sends 13.8 MiB Create Model bodies once a second")
  .option("--entries <n>", "value_mappings entries of the body", num, 860_000)
  .option("--seconds <n>", "seconds of load per kind", num, 60)
  .option("--kinds <list>", "body kinds: valid, json, schema, semantic", "valid,json,schema")
  .option("--get-every-ms <n>", "milliseconds between the other org's GETs", num, 50)
  .option("--shared", "through a front end of the shared topology (PostgreSQL + Redis)", false)
  .option("--json", "one JSON line", false)
  .action(largeBodiesBench);

program
  .command("request-path")
  .description("files and lines of src one plain Generate request runs on the server's main thread")
  .option("--json", "one JSON line", false)
  .action(requestPathBench);

program
  .command("tables")
  .description("real tables with the SDK's defaults: 2-way TVD vs independent columns and a resample (gap closed), column checks, realism, rules kept, near-copies")
  .option("--json", "one JSON line", false)
  .option("--table <names>", "comma-separated table names or groups: tuned (airports, cars, flights, github, species, adult), public (vega-datasets tables, bench/public-tables.ts) (default: all)")
  .option("--config <json>", "model config as JSON (default: the SDK's choice by the table's rows)")
  .option("--epochs <n>", "cap max_epochs at n (quick runs)")
  .option("--seed <seeds>", "comma-separated seeds; each repeats fit, sample and baselines", "0")
  .option("--out <dir>", "keep the synthetic CSVs in this folder")
  .option("--holdout", "also fit each table's half and count its near-copies of that half against the other half", false)
  .action(tablesBench);

program
  .command("extract")
  .description("analyzeTable on N rows (Adult repeated) vs DuckDB's read and 1-way and 2-way counts: wall, core-s, peak RSS")
  .option("--rows <n>", "rows of the generated table", num, 1_000_000)
  .option("--threads <n>", "synthd's worker threads (default: the available cores)", num)
  .option("--no-duckdb", "synthd alone (the 100M-row memory check)")
  .option("--filter", "measure the near-copy filter's build instead, on Adult's cells drawn independently per row", false)
  .option("--id-columns", "prepend a row id and a unique float per row (columns with a value per row)", false)
  .option("--distinct-budget <n>", "synthd's distinct values per column before it overflows (default: the SDK's)", num)
  .option("--json", "one JSON line", false)
  .action(extractBench);

program
  .command("memory")
  .description("training memory: the admission estimate vs the server's measured peak RSS growth, per config")
  .option("--cases <names>", "comma-separated cases (default: all)")
  .option("--workers <n>", "engine workers of the server", num, 2)
  .option("--compute <kind>", "native or tfjs (default: the server's)")
  .option("--memory-budget <size>", "the servers' --memory-budget", "90%")
  .option("--json", "one JSON line per case", false)
  .action(memoryBench);

program
  .command("seeded")
  .description("seeded generation (issue 12): conditioned TVD vs unconditional, imputation accuracy, rows/s vs the plain draw")
  .option("--json", "one JSON line", false)
  .option("--out <file>", "also write the JSON result to this file")
  .option("--epochs <n>", "max_epochs of the model (the server's default)", num, 100)
  .option("--config <json>", "model config as JSON, over {max_epochs: --epochs}")
  .option("--seed <s>", "seed of the split, samples, blanks and imputation", num, 0)
  .option("--rows <n>", "rows per sample of the fidelity part", num, 10_000)
  .option("--rare <json>", "the rare combination as a where JSON (default: Self-emp-inc, Prof-school, United-States)")
  .option("--blank <p>", "share of HOLDOUT's cells blanked for imputation", num, 0.2)
  .option("--speed-rows <n>", "rows per request of the speed part", num, 100_000)
  .option("--reps <n>", "repetitions of the speed part", num, 2)
  .option("--parts <list>", "comma-separated: fidelity, impute, speed (default: all)")
  .action(seededBench);

program
  .command("sample")
  .description("issue 13's table: the CLI to CSV, Parquet and Arrow, codes over HTTP (JSON, Arrow), in-process with draws, each over the in-process rate")
  .option("--rows <n>", "rows per path", num, 1_000_000)
  .option("--json", "one JSON line", false)
  .action(sampleBench);

program
  .command("near-copies")
  .description("near-copies of real rows vs a 50/50 split, SDK and CLI paths, filter on and off; defaults unless overridden")
  .option("--rare-threshold <k>", "rare threshold k instead of the default", num)
  .option("--bin-cap <b>", "bins per numerical column instead of the default", num)
  .option("--epochs <e>", "max_epochs instead of the default", num)
  .option("--seeds <n>", "samples per table", num, 3)
  .option("--tables <list>", "comma-separated: presidents, cars, a table of bench tables, or CSV paths (default: all of them)")
  .option("--path <path>", "sdk (Synthesizer.fit), cli (synthd fit, then synthd sample with and without --no-filter) or both", "both")
  .option("--json", "one JSON line per table and seed", false)
  .action(nearCopiesBench);

program
  .command("disk-full")
  .description("issue 39's full-disk scenario on a tmpfs, repeated (root): crashes, answers while full, pause and resume, usage")
  .option("--runs <n>", "repetitions", num, 20)
  .option("--mib <n>", "size of the tmpfs in MiB", num, 128)
  .option("--postgres", "the shared topology, with a PostgreSQL cluster of its own on the tmpfs", false)
  .option("--json", "one JSON line", false)
  .action(diskFullBench);

program
  .command("edge-flood")
  .description("idle and slowloris connections on the main and HTTP/1.0 ports (issue 39): connection lifetimes, probe answers")
  .option("--idle <n>", "idle connections per port", num, 20_000)
  .option("--slow <n>", "slowloris connections per port (a header byte every 5 s)", num, 500)
  .option("--hold <s>", "seconds to go on after the last connection opened", num, 30)
  .option("--parallel <n>", "connects in flight at once", num, 1000)
  .option("--json", "one JSON line", false)
  .action(edgeFloodBench);

program
  .command("decode")
  .description("decoding rows/s per batch size of tables' codes, as a sample decodes them; --against another build")
  .requiredOption("--table <list>", "comma-separated CSV or JSON files")
  .option("--rows <n>", "rows decoded per sample", num, 200_000)
  .option("--batches <list>", "comma-separated batch sizes", "1000,10000,100000")
  .option("--repeats <n>", "samples per build and batch size (median)", num, 3)
  .option("--seed <n>", "seed of the codes and the decode", num, 0)
  .option("--against <dir>", "another build's output root (a copy of dist) decoding the same codes")
  .option("--json", "one JSON line per table and batch size", false)
  .action(decodeBench);

program.parseAsync(process.argv).catch((e) => {
  console.error(`bench: ${(e as Error).message}`);
  process.exit(1);
});
