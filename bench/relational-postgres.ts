/**
 * Issue 41 acceptance 3 on public data: airports.csv and flights-20k.csv (../shared/datasets/real)
 * loaded into a throwaway PostgreSQL database (schema `real`, flights.origin and
 * flights.destination declared as foreign keys to airports.iata), fitted from its URL with
 * `synthd fit`, sampled with `synthd sample -o URL --schema synth`; then the constraints declared
 * in `synth` and the orphans counted by SQL. Times and the CLI's messages are printed.
 *
 *   node dist/bench/relational-postgres.js DIR [--config JSON]   (DIR: airports.csv, flights.csv)
 */
import { join } from "node:path";
import { Client } from "pg";
import { removeDir, runCli, startServer, tempDir } from "./harness";
import { freshDatabase } from "../test/pg-helpers";
import { readTableFile } from "../src/sdk/relational/database";

async function main(): Promise<void> {
  const dir = process.argv[2];
  const config = process.argv[3] === "--config" ? process.argv[4] : undefined;
  const storeDir = tempDir("synthd-relpg-");
  const server = await startServer(storeDir);
  const env = { SYNTHD_URL: server.url, SYNTHD_API_KEY: server.sandboxKey!, SYNTHD_FILTER_DIR: join(storeDir, "filters") };
  const pg = await freshDatabase();
  const c = new Client({ connectionString: pg.url });
  try {
    await c.connect();
    await c.query("CREATE SCHEMA real");
    await c.query("CREATE TABLE real.airports (iata text PRIMARY KEY, name text, city text, state text, country text, latitude double precision, longitude double precision)");
    await c.query("CREATE TABLE real.flights (date timestamp, delay integer, distance integer, origin text REFERENCES real.airports (iata), destination text REFERENCES real.airports (iata))");
    for (const t of ["airports", "flights"]) {
      const { table } = await readTableFile(join(dir, `${t}.csv`));
      const header = table.columns;
      for (let i = 0; i < table.rows.length; i += 500) {
        const rows = table.rows.slice(i, i + 500).map((r) => r.map((v) => (v === "" ? null : v)));
        const params = rows.flat();
        const values = rows.map((_, r) => `(${header.map((__, j) => `$${r * header.length + j + 1}`).join(", ")})`).join(", ");
        await c.query(`INSERT INTO real.${t} (${header.join(", ")}) VALUES ${values}`, params);
      }
    }
    let t0 = Date.now();
    const fit = await runCli(["fit", `${pg.url}?schema=real`, ...(config ? ["--config", config] : [])], env);
    console.log(`fit: exit ${fit.code}, ${((Date.now() - t0) / 1000).toFixed(1)} s\n${fit.stderr}`);
    if (fit.code !== 0) return;
    const id = fit.stdout.trim().split("\n").pop()!;
    t0 = Date.now();
    const s = await runCli(["sample", id, "-o", pg.url, "--schema", "synth", "--seed", "1"], env);
    console.log(`sample: exit ${s.code}, ${((Date.now() - t0) / 1000).toFixed(1)} s\n${s.stderr}`);
    const cons = await c.query("SELECT conrelid::regclass::text AS t, contype, pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE connamespace = 'synth'::regnamespace ORDER BY 1, 2, 3");
    for (const r of cons.rows) console.log(`constraint ${r.t} ${r.contype}: ${r.def}`);
    for (const k of ["origin", "destination"]) {
      const o = await c.query(`SELECT count(*)::int AS n FROM synth.flights f LEFT JOIN synth.airports a ON a.iata = f.${k} WHERE a.iata IS NULL`);
      console.log(`orphans flights.${k}: ${o.rows[0].n}`);
    }
    const n = await c.query("SELECT (SELECT count(*) FROM synth.airports)::int AS airports, (SELECT count(*) FROM synth.flights)::int AS flights");
    console.log(`rows: ${JSON.stringify(n.rows[0])}`);
    const head = await c.query("SELECT * FROM synth.flights ORDER BY date LIMIT 5");
    for (const r of head.rows) console.log(JSON.stringify(r));
  } finally {
    await c.end().catch(() => undefined);
    await pg.drop();
    await server.kill("SIGTERM");
    removeDir(storeDir);
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
