/**
 * Where a child table's sampling time goes (issue 41 "Scale"): flights -> airports fitted as a
 * database, then the flights model drawn four ways in one run, server core-seconds from
 * /proc/<pid>/stat and client core-seconds from process.cpuUsage():
 *   plain      `sample(n)`, the flat path (calibrated, the SDK's default);
 *   seeded     one seed row per flight, its origin airport's context cells (generate.ts childRows);
 *   uncal      the same seeds with `calibrate: false`;
 *   distinct   one seed row per distinct context (the conditions the server groups by);
 *   matched    generate.ts matchedChildRows: a plain draw of 1.25x the rows matched to the real
 *              airports by context codes, each airport its real number of flights.
 *
 *   node dist/bench/relational-cost.js DIR [--config JSON]   (DIR: airports.csv, flights.csv)
 */
import { readFileSync } from "node:fs";
import { Command } from "commander";
import { Synthd } from "../src/sdk/client/client";
import { nodeFetch } from "../src/sdk/client/node-fetch";
import { Synthesizer } from "../src/sdk/generate/synthesizer";
import type { Table } from "../src/sdk/io/csv";
import { fitDatabase, readDatabaseDir, SynthesizerTableModel } from "../src/sdk/relational/database";
import { matchedChildRows } from "../src/sdk/relational/generate";
import { removeDir, startServer, tempDir } from "./harness";

/** User + system CPU seconds of process `pid`, every thread (/proc/<pid>/stat fields 14, 15). */
function processCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function clientCpu(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

async function main(): Promise<void> {
  const program = new Command("relational-cost").argument("<dir>").option("--config <json>", "training config of every table").parse();
  const opts = program.opts<{ config?: string }>();
  const storeDir = tempDir("synthd-relcost-");
  const server = await startServer(storeDir);
  const pid = server.child.pid!;
  try {
    const api = new Synthd({ apiKey: server.sandboxKey!, baseUrl: server.url, fetch: nodeFetch });
    const db = await readDatabaseDir(program.args[0]);
    const model = await fitDatabase(api, db, opts.config ? { config: JSON.parse(opts.config) } : {});
    const flights = await Synthesizer.fromModel(api, model.models.flights);
    const fk = model.plan.tables.flights.foreignKeys[0];
    const airports = db.tables[fk.parent];
    const origin = db.tables.flights.columns.indexOf(fk.childKey);
    const byKey = new Map(airports.rows.map((r) => [r[airports.columns.indexOf(fk.parentKey)], r]));
    const pj = fk.context.map((c) => airports.columns.indexOf(c.parentColumn));
    // The real flights' origins' context cells: the seed table generation would send for them.
    const seed: Table = { columns: fk.context.map((c) => c.column), rows: db.tables.flights.rows.map((r) => pj.map((j) => byKey.get(r[origin])![j])) };
    const distinct = [...new Map(seed.rows.map((r) => [JSON.stringify(r), r])).values()];
    const perAirport = new Map<string, number>();
    for (const r of db.tables.flights.rows) perAirport.set(r[origin], (perAirport.get(r[origin]) ?? 0) + 1);
    const counts = airports.rows.map((r) => perAirport.get(r[airports.columns.indexOf(fk.parentKey)]) ?? 0);
    const n = seed.rows.length;
    console.log(`flights: ${n} rows, ${fk.context.length} context columns (${fk.context.map((c) => c.parentColumn).join(", ")}), ${distinct.length} distinct contexts`);
    await flights.sample(100, { seed: 0, nearCopyFilter: false }); // the server loads the checkpoint
    const runs: [string, () => Promise<unknown>][] = [
      ["plain", () => flights.sample(n, { seed: 1, nearCopyFilter: false })],
      ["seeded", () => flights.sample({ seedData: seed, seed: 1 })],
      ["uncal", () => flights.sample({ seedData: seed, seed: 1, calibrate: false })],
      ["distinct", () => flights.sample({ seedData: { columns: seed.columns, rows: distinct }, seed: 1 })],
      ["matched", () => matchedChildRows(new SynthesizerTableModel(flights), fk, airports, counts, 1)],
    ];
    let base = 0;
    for (const [name, run] of runs) {
      const [w, s, c] = [Date.now(), processCpuSeconds(pid), clientCpu()];
      await run();
      const server = processCpuSeconds(pid) - s;
      const total = server + clientCpu() - c;
      if (name === "plain") base = total;
      console.log(`${name}: ${((Date.now() - w) / 1000).toFixed(1)} s wall, ${server.toFixed(2)} server + ${(clientCpu() - c).toFixed(2)} client core-s, ${(total / base).toFixed(2)}x plain`);
    }
  } finally {
    await server.kill("SIGTERM");
    removeDir(storeDir);
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
