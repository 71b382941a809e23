/**
 * The README's demo (`npm run demo`): the main job end to end on real data, through the CLI a user
 * runs.
 *
 * 1. `synthd serve` on a temporary store (prints the sandbox key on first start);
 * 2. `synthd fit data/adult.csv --config '{"model_size":"medium","max_epochs":20}'`;
 * 3. `synthd sample ID -n 10000 --seed 7 -o synthd-demo/adult-synthetic.csv`;
 * 4. an independent-marginals sample of the same size (each column drawn alone from its 1-way
 *    marginal: the baseline any generator must beat on 2- and 3-way marginals);
 * 5. `evaluate` of both against the real table, printed side by side.
 *
 * Output files stay in `./synthd-demo/`; the store is removed at the end.
 */
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { writeTableCsv } from "../src/sdk";
import { evaluate, independentSample, type EvaluationReport } from "../src/sdk/evaluate";
import { ADULT_CSV, removeDir, runCli, startServer, tempDir } from "./harness";

const ROWS = 10_000;
const CONFIG = { model_size: "medium", max_epochs: 20 };

function check(step: string, r: { code: number | null; stdout: string; stderr: string }): string {
  if (r.code !== 0) throw new Error(`${step} failed (exit ${r.code}): ${r.stderr.trim().split("\n").pop()}`);
  return r.stdout;
}

function table(real: EvaluationReport, base: EvaluationReport): string {
  const rows = (["1", "2", "3"] as const).map((k) => {
    const s = real.tvd[k];
    const b = base.tvd[k];
    return `  ${k}-way    ${s.toFixed(4)}      ${b.toFixed(4)}         ${(s / b).toFixed(2)}x`;
  });
  return ["  marginal synthd      independent    ratio", ...rows].join("\n");
}

function perColumn(real: EvaluationReport, base: EvaluationReport): string {
  const w = Math.max(6, ...real.columns.map((c) => c.column.length));
  const head = `  ${"column".padEnd(w)}  1-way synthd  1-way indep.  2-way synthd  2-way indep.`;
  const rows = real.columns.map((c, i) => {
    const b = base.columns[i];
    const f = (x: number): string => x.toFixed(4).padStart(12);
    return `  ${c.column.padEnd(w)}  ${f(c.tvd1)}  ${f(b.tvd1)}  ${f(c.tvd2)}  ${f(b.tvd2)}`;
  });
  return [head, ...rows].join("\n");
}

async function main(): Promise<void> {
  const t0 = Date.now();
  const outDir = resolve("synthd-demo");
  mkdirSync(outDir, { recursive: true });
  const synthCsv = resolve(outDir, "adult-synthetic.csv");
  const indepCsv = resolve(outDir, "adult-independent.csv");
  const store = tempDir("synthd-demo-store-");
  // The built-in limits (60 requests/minute per org), as a user gets them: the CLI must work within them.
  const server = await startServer(store, [], 60_000, { SYNTHD_RATE_LIMIT: "" });
  try {
    console.log(`synthd listening on ${server.url} (store ${store})`);
    const env = { SYNTHD_URL: server.url, SYNTHD_API_KEY: server.sandboxKey! };
    console.log(`fitting ${ADULT_CSV} with ${JSON.stringify(CONFIG)} ...`);
    const fit = check("fit", await runCli(["fit", ADULT_CSV, "--config", JSON.stringify(CONFIG)], env, 600_000, { passStderr: true }));
    const id = fit.trim().split("\n").pop()!;
    const tFit = (Date.now() - t0) / 1000;
    check("sample", await runCli(["sample", id, "-n", String(ROWS), "--seed", "7", "-o", synthCsv], env, 600_000, { passStderr: true }));
    await writeTableCsv(await independentSample(ADULT_CSV, ROWS, 7), indepCsv);
    const [synth, indep] = await Promise.all([evaluate(ADULT_CSV, synthCsv), evaluate(ADULT_CSV, indepCsv)]);
    console.log(`\nmodel ${id}; ${ROWS} synthetic rows in ${synthCsv}`);
    console.log(`average total variation distance against the real table (lower is better):`);
    console.log(table(synth, indep));
    console.log(`\nper column (2-way: mean over the pairs that include the column):`);
    console.log(perColumn(synth, indep));
    const ratio = synth.tvd["2"] / indep.tvd["2"];
    console.log(`\n2-way TVD ratio ${ratio.toFixed(2)} (target < 0.60): ${ratio < 0.6 ? "PASS" : "FAIL"}`);
    console.log(`fit ${tFit.toFixed(0)} s, total ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    if (ratio >= 0.6) process.exitCode = 1;
  } finally {
    await server.kill("SIGTERM");
    removeDir(store);
  }
}

main().catch((e) => {
  console.error(`demo: ${(e as Error).message}`);
  process.exit(1);
});
