/**
 * Issue 41's figures for one database directory (one CSV per table, optional SDV metadata.json):
 * fit and sample times, orphans, duplicate keys, children-per-parent TVD and parent x child pair
 * TVD over each join, each against the mean of three resamples (a bootstrap of the hierarchy,
 * src/sdk/relational/evaluate.ts), and the first rows of every table, real beside synthetic.
 *
 *   node dist/bench/relational.js DIR [--config JSON] [--rows 20] [--seed 1]
 *
 * Uses SYNTHD_URL and SYNTHD_API_KEY when set, else starts a server of its own (bench/harness.ts).
 */
import { Command } from "commander";
import { Synthd } from "../src/sdk/client/client";
import { nodeFetch } from "../src/sdk/client/node-fetch";
import { fitDatabase, readDatabaseDir, sampleDatabase } from "../src/sdk/relational/database";
import { planDatabase } from "../src/sdk/relational/plan";
import { generateDatabase } from "../src/sdk/relational/generate";
import { evaluateDatabase, resampleModels, type DatabaseReport } from "../src/sdk/relational/evaluate";
import { cardinality, describeRelationship } from "../src/sdk/relational/detect";
import { removeDir, startServer, tempDir, type ServerProcess } from "./harness";

function cpu(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

async function main(): Promise<void> {
  const program = new Command("relational")
    .argument("<dir>")
    .option("--config <json>", "training config of every table")
    .option("--rows <n>", "rows of each table shown", (v) => Number(v), 20)
    .option("--seed <s>", "sampling seed", (v) => Number(v), 1)
    .parse();
  const dir = program.args[0];
  const opts = program.opts<{ config?: string; rows: number; seed: number }>();
  let server: ServerProcess | undefined;
  let storeDir: string | undefined;
  let url = process.env.SYNTHD_URL;
  let key = process.env.SYNTHD_API_KEY;
  if (!url || !key) {
    storeDir = tempDir("synthd-relational-");
    server = await startServer(storeDir);
    [url, key] = [server.url, server.sandboxKey!];
  }
  try {
    const api = new Synthd({ apiKey: key, baseUrl: url, fetch: nodeFetch });
    const db = await readDatabaseDir(dir);
    for (const r of db.schema.relationships) console.log(describeRelationship(r, cardinality(r, db.tables)));
    let t0 = Date.now();
    let c0 = cpu();
    const model = await fitDatabase(api, db, opts.config ? { config: JSON.parse(opts.config) } : {});
    console.log(`fit: ${((Date.now() - t0) / 1000).toFixed(1)} s wall, ${(cpu() - c0).toFixed(1)} client core-s; models ${JSON.stringify(model.models)}`);
    t0 = Date.now();
    c0 = cpu();
    const synth = await sampleDatabase(api, model, {
      seed: opts.seed,
      onTable: (t, n, ms) => console.log(`  sample ${t}: ${n} rows in ${(ms / 1000).toFixed(1)} s`),
    });
    console.log(`sample: ${((Date.now() - t0) / 1000).toFixed(1)} s wall, ${(cpu() - c0).toFixed(1)} client core-s`);
    const report = evaluateDatabase(db.schema, db.tables, synth);
    const { plan, training } = planDatabase(db.schema, db.tables);
    const baselines: DatabaseReport[] = [];
    for (const s of [11, 12, 13]) baselines.push(evaluateDatabase(db.schema, db.tables, await generateDatabase(plan, resampleModels(plan, training), { seed: s })));
    for (const [t, x] of Object.entries(report.tables)) {
      console.log(`table ${t}: real ${x.realRows} rows, synthetic ${x.syntheticRows}; key ${x.primaryKey ?? "none"}: ${x.duplicateKeys} duplicates, ${x.blankKeys} blank`);
    }
    console.log("relationship | orphans | cardinality TVD (resample, ratio) | pair TVD (resample, ratio) | children real min/median/max, synthetic");
    report.relationships.forEach((r, i) => {
      const card = baselines.reduce((s, b) => s + b.relationships[i].cardinalityTvd, 0) / baselines.length;
      const pair = baselines.reduce((s, b) => s + b.relationships[i].pairTvd, 0) / baselines.length;
      console.log(
        `${r.relationship} | ${r.orphans} | ${r.cardinalityTvd.toFixed(3)} (${card.toFixed(3)}, ${(r.cardinalityTvd / card).toFixed(2)}x) | ` +
          `${r.pairTvd.toFixed(3)} over ${r.pairs} pairs (${pair.toFixed(3)}, ${(r.pairTvd / pair).toFixed(2)}x) | ` +
          `${r.real.min}/${r.real.median}/${r.real.max}, ${r.synthetic.min}/${r.synthetic.median}/${r.synthetic.max}`,
      );
    });
    for (const t of plan.order) {
      console.log(`\n== ${t}: real (first ${opts.rows}) ==\n${db.tables[t].columns.join(",")}`);
      for (const r of db.tables[t].rows.slice(0, opts.rows)) console.log(r.join(","));
      console.log(`== ${t}: synthetic (first ${opts.rows}) ==\n${synth[t].columns.join(",")}`);
      for (const r of synth[t].rows.slice(0, opts.rows)) console.log(r.join(","));
    }
  } finally {
    await server?.kill("SIGTERM");
    if (storeDir) removeDir(storeDir);
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
