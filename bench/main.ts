/**
 * Benchmarks: `npm run bench -- <name> [options]`. Each prints ratios against a baseline measured
 * in the same run; `--json` prints one JSON line for scripts.
 *
 * - `latency`: GET /v1/models/{id} p50/p99 while two models train vs an idle server.
 */
import { Command } from "commander";
import { latencyBench } from "./latency";

const program = new Command("bench").description("synthd benchmarks");

program
  .command("latency")
  .description("GET latency while two models train, vs idle")
  .option("--requests <n>", "requests per phase", (v) => Number(v), 2000)
  .option("--concurrency <n>", "parallel keep-alive connections", (v) => Number(v), 4)
  .option("--json", "one JSON line", false)
  .action(latencyBench);

program.parseAsync(process.argv).catch((e) => {
  console.error(`bench: ${(e as Error).message}`);
  process.exit(1);
});
