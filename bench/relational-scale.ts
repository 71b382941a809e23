/**
 * Issue 41 "Scale": a child table of 1M rows fitted and sampled as a database against the flat path
 * (the same table fitted and sampled alone, same config, same rows), back to back on one server.
 * The database is flights -> airports: `../shared/datasets/real/airports.csv` and flights-20k.csv
 * resampled with replacement to `--rows` rows (seeded, in the real date order, origin and
 * destination kept), written to a temporary directory, never committed.
 *
 *   flat      fit: the SDK's `Synthesizer.fit` on flights.csv (streamed; no near-copy filter, as a
 *             database table has none), sample: `synthd sample ID -n ROWS --no-filter -o FILE`;
 *   database  `synthd fit DIR`, `synthd sample db_... -o DIR` (airports and flights).
 *
 * Each step runs as a child process under /usr/bin/time (client wall, user + system core-s, peak
 * RSS); the server's core-s over the step come from /proc/<pid>/stat.
 *
 *   node dist/bench/relational-scale.js [--rows 1000000] [--config JSON] [--repeat 1] [--show 5]
 *
 * Sample only, on models fitted once: `--keep DIR` keeps the store, the database and the model ids
 * (DIR/ids.json) after a full run; `--keep DIR --sample-only` then runs only the two samples on
 * them, `--cli FILE` with another build's `synthd` (`/work/main/dist/src/cli/main.js`) for the
 * samples, so two builds are measured on the same models.
 *
 * Fit: `--fit-only` skips both samples; `--base-cli PATH` also runs `synthd fit DIR` (and `synthd
 * sample` of what it fitted) with another build's CLI after this one's, on the same server and
 * database, for a before/after in one session; `--cpu-prof DIR` writes a V8 CPU profile of this
 * build's database fit.
 */
import { spawn } from "node:child_process";
import { copyFileSync, createWriteStream, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Command } from "commander";
import { Rng } from "../src/sdk/generate/sfc32";
import { CLI, SHARED_DATASETS, processCpuSeconds, removeDir, runCli, startServer, tempDir } from "./harness";

/** One step's costs. */
interface Cost {
  wall: number;
  client: number;
  server: number;
  /** Client peak RSS, MiB. */
  rss: number;
  stdout: string;
}

/**
 * Writes DIR/airports.csv and DIR/flights.csv: `rows` flights drawn with replacement from the
 * 20,000 real ones, kept in the real (date) order.
 */
async function makeDatabase(dir: string, rows: number, seed: number): Promise<void> {
  const real = join(SHARED_DATASETS, "real");
  copyFileSync(join(real, "airports.csv"), join(dir, "airports.csv"));
  const lines = readFileSync(join(real, "flights-20k.csv"), "utf8").split("\n").filter((l) => l !== "");
  const [header, body] = [lines[0], lines.slice(1)];
  const rng = new Rng(seed);
  const per = new Uint32Array(body.length);
  for (let i = 0; i < rows; i++) per[rng.int(body.length)]++;
  const out = createWriteStream(join(dir, "flights.csv"));
  out.write(`${header}\n`);
  for (let i = 0; i < body.length; i++) {
    const chunk = `${body[i]}\n`.repeat(per[i]);
    if (!out.write(chunk)) await new Promise<void>((r) => out.once("drain", () => r()));
  }
  await new Promise<void>((res, rej) => out.end((e?: Error | null) => (e ? rej(e) : res())));
}

/** Runs `node args` under /usr/bin/time with `env`; the server `pid`'s core-s over the run. */
function measured(args: string[], env: Record<string, string>, pid: number, timeFile: string): Promise<Cost> {
  return new Promise((resolveRun, rejectRun) => {
    const s0 = processCpuSeconds(pid)!;
    const t0 = Date.now();
    const child = spawn("/usr/bin/time", ["-f", "%U %S %M", "-o", timeFile, process.execPath, ...args], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.once("exit", (code) => {
      const wall = (Date.now() - t0) / 1000;
      const server = processCpuSeconds(pid)! - s0;
      if (code !== 0) return rejectRun(new Error(`node ${args.join(" ")} exited ${code}:\n${stderr.slice(-3000)}`));
      const [user, sys, kb] = readFileSync(timeFile, "utf8").trim().split("\n").pop()!.split(" ").map(Number);
      resolveRun({ wall, client: user + sys, server, rss: kb / 1024, stdout });
    });
  });
}

const fmt = (c: Cost): string => `${c.server.toFixed(1)} server + ${c.client.toFixed(1)} client core-s, ${c.wall.toFixed(1)} s wall, client peak ${c.rss.toFixed(0)} MiB`;

/** The child role: fits FILE alone through the SDK (no near-copy filter) and prints the model id. */
async function flatFit(file: string, config: string | undefined): Promise<void> {
  const { Synthd } = await import("../src/sdk/client/client");
  const { nodeFetch } = await import("../src/sdk/client/node-fetch");
  const { Synthesizer } = await import("../src/sdk/generate/synthesizer");
  const api = new Synthd({ apiKey: process.env.SYNTHD_API_KEY!, baseUrl: process.env.SYNTHD_URL!, fetch: nodeFetch });
  const s = await Synthesizer.fit(api, file, { nearCopyFilter: false, ...(config !== undefined ? { config: JSON.parse(config) } : {}) });
  process.stdout.write(`${s.id}\n`);
}

async function main(): Promise<void> {
  const program = new Command("relational-scale")
    .option("--rows <n>", "flights rows", (v) => Number(v), 1_000_000)
    .option("--config <json>", "training config of every model", '{"model_size":"small","max_epochs":5}')
    .option("--repeat <n>", "runs of both sides", (v) => Number(v), 1)
    .option("--show <n>", "first rows of each output shown", (v) => Number(v), 5)
    .option("--flat-fit <file>", "(child role) fit FILE alone and print the model id")
    .option("--keep <dir>", "work in DIR and keep it (store, database, DIR/ids.json)")
    .option("--sample-only", "with --keep: sample the models DIR/ids.json names, no fit")
    .option("--cli <file>", "the synthd CLI the samples run (default this build's)", CLI)
    .option("--fit-only", "fit both sides, sample neither")
    .option("--base-cli <path>", "also fit the database with this CLI (another build's dist/src/cli/main.js)")
    .option("--cpu-prof <dir>", "write a V8 CPU profile of the database fit into DIR")
    .parse();
  const opts = program.opts<{
    rows: number;
    config: string;
    repeat: number;
    show: number;
    flatFit?: string;
    keep?: string;
    sampleOnly?: boolean;
    cli: string;
    fitOnly?: boolean;
    baseCli?: string;
    cpuProf?: string;
  }>();
  if (opts.flatFit !== undefined) return flatFit(opts.flatFit, opts.config);
  if (opts.sampleOnly && opts.keep === undefined) throw new Error("--sample-only needs --keep DIR");
  const work = opts.keep ?? tempDir("synthd-relscale-");
  mkdirSync(work, { recursive: true });
  const idsFile = join(work, "ids.json");
  const reuse = opts.sampleOnly === true ? (JSON.parse(readFileSync(idsFile, "utf8")) as { flatId: string; dbId: string; key: string }) : undefined;
  const store = join(work, "store");
  const server = await startServer(store);
  const pid = server.child.pid!;
  try {
    let apiKey = reuse?.key;
    if (apiKey === undefined) {
      // A live key with a large quota: the sandbox's 100,000 rows a month are less than one run.
      const key = await runCli(["keys", "create", "--data-dir", store, "--org", "benchscale", "--env", "live"]);
      if (key.code !== 0) throw new Error(`keys create failed: ${key.stderr}`);
      const quota = await runCli(["orgs", "set", "--data-dir", store, "--org", "benchscale", "--live-quota", String(1_000_000_000)]);
      if (quota.code !== 0) throw new Error(`orgs set failed: ${quota.stderr}`);
      apiKey = key.stdout.trim().split("\n").pop()!;
    }
    const env = { SYNTHD_URL: server.url, SYNTHD_API_KEY: apiKey, SYNTHD_FILTER_DIR: join(work, "filters") };
    const dir = join(work, "db");
    if (reuse === undefined) {
      if (!existsSync(dir)) mkdirSync(dir);
      await makeDatabase(dir, opts.rows, 41);
    }
    console.log(`database: airports.csv + flights.csv (${opts.rows} rows resampled from flights-20k.csv); config ${opts.config}${reuse !== undefined ? `; models of ${idsFile}, samples by ${opts.cli}` : ""}`);
    const time = join(work, "time.txt");
    for (let r = 0; r < opts.repeat; r++) {
      const flatOut = join(work, `flat-${r}.csv`);
      const dbOut = join(work, `db-${r}`);
      const fFit = reuse === undefined ? await measured([__filename, "--flat-fit", join(dir, "flights.csv"), "--config", opts.config], env, pid, time) : undefined;
      const flatId = reuse?.flatId ?? fFit!.stdout.trim().split("\n").pop()!;
      const prof = opts.cpuProf !== undefined ? ["--cpu-prof", "--cpu-prof-dir", opts.cpuProf] : [];
      const dFit = reuse === undefined ? await measured([...prof, CLI, "fit", dir, "--config", opts.config], env, pid, time) : undefined;
      const bFit = reuse === undefined && opts.baseCli !== undefined ? await measured([opts.baseCli, "fit", dir, "--config", opts.config], env, pid, time) : undefined;
      const dbId = reuse?.dbId ?? dFit!.stdout.trim().split("\n").pop()!;
      if (opts.keep !== undefined && reuse === undefined) writeFileSync(idsFile, JSON.stringify({ flatId, dbId, key: apiKey }));
      const total = (c: Cost): number => c.server + c.client;
      console.log(`\nrun ${r + 1}`);
      if (fFit !== undefined && dFit !== undefined) {
        console.log(`flat fit:        ${fmt(fFit)}`);
        console.log(`database fit:    ${fmt(dFit)}  -> ${(total(dFit) / total(fFit)).toFixed(2)}x core-s`);
        if (bFit !== undefined) console.log(`base db fit:     ${fmt(bFit)}  -> ${(total(bFit) / total(fFit)).toFixed(2)}x core-s`);
      }
      if (opts.fitOnly) continue;
      const fSample = await measured([opts.cli, "sample", flatId, "-n", String(opts.rows), "--seed", "1", "--no-filter", "-o", flatOut], env, pid, time);
      removeDir(dbOut);
      const dSample = await measured([opts.cli, "sample", dbId, "--seed", "1", "-o", dbOut], env, pid, time);
      const bSample = bFit !== undefined ? await measured([opts.baseCli!, "sample", bFit.stdout.trim().split("\n").pop()!, "--seed", "1", "-o", `${dbOut}-base`], env, pid, time) : undefined;
      if (bSample !== undefined) removeDir(`${dbOut}-base`);
      console.log(`flat sample:     ${fmt(fSample)}`);
      console.log(`database sample: ${fmt(dSample)}  -> ${(total(dSample) / total(fSample)).toFixed(2)}x core-s`);
      if (bSample !== undefined) console.log(`base db sample:  ${fmt(bSample)}  -> ${(total(bSample) / total(fSample)).toFixed(2)}x core-s`);
      if (fFit !== undefined && bFit !== undefined && bSample !== undefined) {
        console.log(`base fit + sample: ${((total(bFit) + total(bSample)) / (total(fFit) + total(fSample))).toFixed(2)}x core-s`);
      }
      if (fFit !== undefined && dFit !== undefined) {
        console.log(`fit + sample:    ${((total(dFit) + total(dSample)) / (total(fFit) + total(fSample))).toFixed(2)}x core-s, ${((dFit.wall + dSample.wall) / (fFit.wall + fSample.wall)).toFixed(2)}x wall`);
      }
      if (r === 0) {
        const head = (f: string): string => readFileSync(f, "utf8").split("\n").slice(0, opts.show + 1).join("\n");
        console.log(`\nreal flights\n${head(join(dir, "flights.csv"))}\nflat synthetic\n${head(flatOut)}\ndatabase synthetic\n${head(join(dbOut, "flights.csv"))}`);
      }
      // Kept with --keep (until the next run): the output, to compare two builds' bytes.
      if (opts.keep === undefined) removeDir(dbOut);
      writeFileSync(flatOut, "");
    }
  } finally {
    await server.kill("SIGTERM");
    if (opts.keep === undefined) removeDir(work);
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
