/**
 * Benchmarks: `npm run bench -- <name> [options]`. Each prints ratios against a baseline measured
 * in the same run; `--json` prints one JSON line for scripts.
 *
 * - `latency`: GET /v1/models/{id} p50/p99 while two models train vs an idle server.
 * - `fidelity`: issue 5's protocol on discretized Adult (TVD, TSTR, privacy check, fit seconds)
 *   against independent marginals and HOLDOUT in the same run; `--epsilon` for the private variant.
 */
import { Command } from "commander";
import { latencyBench } from "./latency";
import { fidelityBench } from "./fidelity";

const program = new Command("bench").description("synthd benchmarks");

program
  .command("latency")
  .description("GET latency while two models train, vs idle")
  .option("--requests <n>", "requests per phase", (v) => Number(v), 2000)
  .option("--concurrency <n>", "parallel keep-alive connections", (v) => Number(v), 4)
  .option("--json", "one JSON line", false)
  .action(latencyBench);

program
  .command("fidelity")
  .description("1/2/3-way TVD, TSTR AUC, privacy check and fit time on discretized Adult (issue 5)")
  .option("--json", "one JSON line", false)
  .option("--epsilon <e>", "differential privacy: epsilon of the marginals", (v) => Number(v))
  .option("--delta <d>", "delta for --epsilon (default 1e-9)", (v) => Number(v))
  .option("--config <json>", "model config as JSON (default: the server's defaults)")
  .option("--data <which>", "discrete (shared discretized Adult) or raw (data/adult.csv)", "discrete")
  .option("--seed <s>", "seed of the split, sampling, evaluation and privacy noise", (v) => Number(v), 0)
  .action(fidelityBench);

program.parseAsync(process.argv).catch((e) => {
  console.error(`bench: ${(e as Error).message}`);
  process.exit(1);
});
