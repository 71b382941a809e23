/**
 * Issue 41's figures for one database directory (one CSV per table, optional SDV metadata.json):
 * fit and sample times, orphans, duplicate keys, children-per-parent TVD and parent x child pair
 * TVD over each join, each against the mean of three resamples (a bootstrap of the hierarchy,
 * src/sdk/relational/evaluate.ts), and the first rows of every table, real beside synthetic.
 *
 *   node dist/bench/relational.js DIR [--config JSON] [--rows 20] [--seed 1] [--child-draw matched|seeded|both]
 *
 * Uses SYNTHD_URL and SYNTHD_API_KEY when set, else starts a server of its own (bench/harness.ts).
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Command } from "commander";
import { Synthd } from "../src/sdk/client/client";
import { nodeFetch } from "../src/sdk/client/node-fetch";
import { fitDatabase, readDatabaseDir, sampleDatabase } from "../src/sdk/relational/database";
import { planDatabase } from "../src/sdk/relational/plan";
import { generateDatabase } from "../src/sdk/relational/generate";
import { evaluateDatabase, resampleModels, type DatabaseReport } from "../src/sdk/relational/evaluate";
import { cardinality, describeRelationship } from "../src/sdk/relational/detect";
import { removeDir, startServer, tempDir, type ServerProcess } from "./harness";

/**
 * vega-datasets' gapminder.json (62 countries x 11 years) as two tables: countries (country,
 * cluster) and observations (country, year, pop, life_expect, fertility), a complete panel.
 */
function makeGapminder(dir: string): void {
  const rows = JSON.parse(readFileSync(join(__dirname, "../../node_modules/vega-datasets/data/gapminder.json"), "utf8")) as Record<string, string | number>[];
  mkdirSync(dir, { recursive: true });
  const quote = (v: string | number): string => (/[",\n]/.test(String(v)) ? `"${String(v).replace(/"/g, '""')}"` : String(v));
  const countries = new Map<string, string | number>();
  for (const r of rows) countries.set(String(r.country), r.cluster);
  writeFileSync(join(dir, "countries.csv"), ["country,cluster", ...[...countries].map(([c, k]) => `${quote(c)},${k}`)].join("\n") + "\n");
  const cols = ["country", "year", "pop", "life_expect", "fertility"];
  writeFileSync(join(dir, "observations.csv"), [cols.join(","), ...rows.map((r) => cols.map((c) => quote(r[c] ?? "")).join(","))].join("\n") + "\n");
  const metadata = {
    METADATA_SPEC_VERSION: "V1",
    tables: {
      countries: { primary_key: "country", columns: { country: { sdtype: "id" }, cluster: { sdtype: "categorical" } } },
      observations: {
        sequence_key: "country",
        sequence_index: "year",
        columns: { country: { sdtype: "id" }, year: { sdtype: "numerical" }, pop: { sdtype: "numerical" }, life_expect: { sdtype: "numerical" }, fertility: { sdtype: "numerical" } },
      },
    },
    relationships: [{ parent_table_name: "countries", parent_primary_key: "country", child_table_name: "observations", child_foreign_key: "country" }],
  };
  writeFileSync(join(dir, "metadata.json"), JSON.stringify(metadata, null, 2) + "\n");
}

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
    .option("--child-draw <how>", "children with context: matched (a plain draw matched to parents), seeded, or both (the same models)", "matched")
    .option("--make <name>", "first write DIR from public tables: gapminder (countries -> a country x year panel, SDV metadata with sequence_key/index)")
    .parse();
  const dir = program.args[0];
  const opts = program.opts<{ config?: string; rows: number; seed: number; make?: string; childDraw: string }>();
  if (opts.make === "gapminder") makeGapminder(dir);
  else if (opts.make !== undefined) throw new Error(`--make: unknown database ${opts.make}`);
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
    const { plan, training } = planDatabase(db.schema, db.tables);
    const baselines: DatabaseReport[] = [];
    for (const s of [11, 12, 13]) baselines.push(evaluateDatabase(db.schema, db.tables, await generateDatabase(plan, resampleModels(plan, training), { seed: s })));
    for (const childDraw of opts.childDraw === "both" ? (["seeded", "matched"] as const) : [opts.childDraw as "seeded" | "matched"]) {
    console.log(`\n### children drawn: ${childDraw}`);
    t0 = Date.now();
    c0 = cpu();
    const synth = await sampleDatabase(api, model, {
      seed: opts.seed,
      childDraw,
      onTable: (t, n, ms) => console.log(`  sample ${t}: ${n} rows in ${(ms / 1000).toFixed(1)} s`),
    });
    console.log(`sample: ${((Date.now() - t0) / 1000).toFixed(1)} s wall, ${(cpu() - c0).toFixed(1)} client core-s`);
    const report = evaluateDatabase(db.schema, db.tables, synth);
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
    report.sequences.forEach((q, i) => {
      const lag = baselines.reduce((s, b) => s + b.sequences[i].lagTvd, 0) / baselines.length;
      const panel = q.panelComplete !== undefined ? `; complete panel: ${(100 * q.panelComplete).toFixed(1)}% of entities (resample ${(100 * baselines[0].sequences[i].panelComplete!).toFixed(1)}%)` : "";
      console.log(`sequence ${q.table}: lag-1 TVD ${q.lagTvd.toFixed(3)} over ${q.lagColumns} columns (resample ${lag.toFixed(3)}, ${(q.lagTvd / lag).toFixed(2)}x)${panel}`);
      for (const m of q.meanStep) console.log(`  mean |step| of ${m.column}: real ${m.real.toPrecision(4)}, synthetic ${m.synthetic.toPrecision(4)}, resample ${baselines[0].sequences[i].meanStep.find((x) => x.column === m.column)!.synthetic.toPrecision(4)}`);
    });
    for (const t of plan.order) {
      console.log(`\n== ${t}: real (first ${opts.rows}) ==\n${db.tables[t].columns.join(",")}`);
      for (const r of db.tables[t].rows.slice(0, opts.rows)) console.log(r.join(","));
      console.log(`== ${t}: synthetic (first ${opts.rows}) ==\n${synth[t].columns.join(",")}`);
      for (const r of synth[t].rows.slice(0, opts.rows)) console.log(r.join(","));
    }
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
