/**
 * `npm run bench -- near-copies`: the near-copy check on tables fitted with the defaults through a
 * real server: per table, `evaluate`'s `near_copies` with the model's metadata, so cells are
 * compared as the model's near-copy filter compares them (synthetic rows nearly copying a real row,
 * against a 50/50 split of the real table; DCR share against the split's) and the 2-way TVD, for
 * n = min(rows, 20,000) synthetic rows, over several sample seeds. Two paths:
 * - `sdk`: `Synthesizer.fit`, each seed sampled with the near-copy filter it builds
 *   (`src/sdk/privacy/filter.ts`) and without it (`nearCopyFilter: false`), from the same model.
 * - `cli`: the plain command line as a user runs it, `synthd fit FILE` then `synthd sample ID -n N`
 *   (the filter `fit` kept on this machine) and `synthd sample ID -n N --no-filter`.
 * Tables: the small tables below and every table of `bench tables` (`--tables` picks some).
 * `--rare-threshold K`, `--bin-cap B` and `--epochs E` override the defaults to compare settings
 * (SDK path only).
 */
import { basename, join } from "node:path";
import { Synthd, Synthesizer, type ModelConfigInput } from "../src/sdk";
import type { Metadata } from "../src/contract";
import { evaluate, type EvaluationReport } from "../src/sdk/evaluate";
import { analyzeTable } from "../src/sdk/metadata/metadata";
import { SHARED_DATASETS, removeDir, runCli, startServer, tempDir } from "./harness";
import { MAX_ROWS, TABLES } from "./tables";

/**
 * Columns `evaluate` treats as identifiers (left out of the check) per table: the presidents' names,
 * as the issue compares "the columns besides the name" (at k = 2 they would be categorical, and at
 * the small-table default k = 5 the model writes fresh names, which would make every row differ in
 * two columns and so never be a near-copy).
 */
export const NEAR_COPY_IDS: Record<string, string[]> = { presidents: ["first_name", "last_name"] };

/** The small tables of the check: a 45-row public table and cars (406 rows). */
export const NEAR_COPY_TABLES: Record<string, string> = {
  presidents: join(__dirname, "..", "..", "test", "data", "us-presidents.csv"),
  cars: join(SHARED_DATASETS, "real", "cars.csv"),
};

/** Options of {@link nearCopiesBench}. */
export interface NearCopiesBenchOptions {
  rareThreshold?: number;
  binCap?: number;
  epochs?: number;
  seeds: number;
  tables?: string;
  /** `sdk`, `cli` or `both` (default). */
  path?: string;
  json: boolean;
}

/** One line of the bench. */
interface Line {
  table: string;
  path: "sdk" | "cli";
  rows: number;
  sampled: number;
  seed: number;
  filter: boolean;
  near_copies: number;
  share: number;
  share_at_half: number;
  split_share: number;
  margin: number;
  no_more_than_split: boolean;
  dcr_share: number;
  dcr_split_share: number;
  passed: boolean;
  tvd2: number;
  fit_s: number;
  sample_s: number;
}

/** Runs the check on each table (defaults unless overridden) and prints one line per table, path, seed and filter setting. */
export async function nearCopiesBench(opts: NearCopiesBenchOptions): Promise<void> {
  const dir = tempDir();
  const store = join(dir, "store");
  const server = await startServer(store);
  const all: Record<string, string> = { ...NEAR_COPY_TABLES, ...TABLES };
  const paths = opts.path === "sdk" || opts.path === "cli" ? [opts.path] : ["sdk", "cli"];
  try {
    const names = opts.tables ? opts.tables.split(",") : Object.keys(all);
    for (const name of names) {
      const file = all[name] ?? name;
      const n = (await analyzeTable(file)).n;
      const sampled = Math.min(n, MAX_ROWS);
      const ids = NEAR_COPY_IDS[name] ?? [];
      // With the model's metadata, evaluate compares cells as the model's filter does (its identifiers left out).
      const check = async (out: string, seed: number, metadata: Metadata): Promise<EvaluationReport> =>
        evaluate(file, out, { seed, metadata, columns: Object.fromEntries(ids.map((c) => [c, { type: "id" as const }])) });
      // Each table and path gets its own org: the sandbox quota is 100,000 rows a month.
      const keyFor = async (p: string): Promise<string> => {
        const k = await runCli(["keys", "create", "--data-dir", store, "--org", `nc-${p}-${basename(name, ".csv")}`.replace(/[^A-Za-z0-9_-]/g, "_")]);
        if (k.code !== 0) throw new Error(k.stderr);
        return k.stdout.trim();
      };
      if (paths.includes("sdk")) {
        const client = new Synthd({ apiKey: await keyFor("sdk"), baseUrl: server.url });
        const config: ModelConfigInput = opts.epochs !== undefined ? { max_epochs: opts.epochs } : {};
        const t0 = Date.now();
        const synth = await Synthesizer.fit(client, file, {
          config,
          waitOptions: { pollIntervalMs: 100 },
          ...(opts.rareThreshold !== undefined ? { rareThreshold: opts.rareThreshold } : {}),
          ...(opts.binCap !== undefined ? { binCap: opts.binCap } : {}),
        });
        const fitS = (Date.now() - t0) / 1000;
        for (let s = 0; s < opts.seeds; s++) {
          // The same seed with the near-copy filter (the default) and without it.
          for (const filter of synth.nearCopyFilter ? [true, false] : [false]) {
            const out = join(dir, `${basename(name, ".csv")}-sdk-${s}-${filter}.csv`);
            const t1 = Date.now();
            await synth.writeCsv(out, sampled, { seed: 100 + s, nearCopyFilter: filter });
            print(opts.json, line(name, "sdk", n, sampled, s, filter, await check(out, s, synth.metadata), fitS, (Date.now() - t1) / 1000));
          }
        }
      }
      if (paths.includes("cli")) {
        const env = { SYNTHD_URL: server.url, SYNTHD_API_KEY: await keyFor("cli") };
        const t0 = Date.now();
        const fit = await runCli(["fit", file], env, 1_800_000);
        if (fit.code !== 0) throw new Error(`synthd fit ${file}: ${fit.stderr}`);
        const fitS = (Date.now() - t0) / 1000;
        const id = fit.stdout.trim().split("\n").pop()!;
        const metadata = await new Synthd({ apiKey: env.SYNTHD_API_KEY, baseUrl: server.url }).models.metadata(id);
        for (let s = 0; s < opts.seeds; s++) {
          for (const filter of [true, false]) {
            const out = join(dir, `${basename(name, ".csv")}-cli-${s}-${filter}.csv`);
            const t1 = Date.now();
            const r = await runCli(["sample", id, "-n", String(sampled), "--seed", String(100 + s), "-o", out, ...(filter ? [] : ["--no-filter"])], env, 1_800_000);
            if (r.code !== 0) throw new Error(`synthd sample: ${r.stderr}`);
            print(opts.json, line(name, "cli", n, sampled, s, filter, await check(out, s, metadata), fitS, (Date.now() - t1) / 1000));
          }
        }
      }
    }
  } finally {
    await server.kill("SIGTERM");
    removeDir(dir);
  }
}

function line(table: string, path: "sdk" | "cli", rows: number, sampled: number, seed: number, filter: boolean, r: EvaluationReport, fitS: number, sampleS: number): Line {
  const c = r.near_copies!;
  return {
    table,
    path,
    rows,
    sampled,
    seed,
    filter,
    near_copies: c.synthetic_near_copies,
    share: c.synthetic_share,
    share_at_half: c.synthetic_share_at_half,
    split_share: c.split_share,
    margin: c.near_copy_margin,
    no_more_than_split: c.synthetic_share_at_half <= c.split_share,
    dcr_share: c.dcr_share,
    dcr_split_share: c.dcr_split_share,
    passed: c.passed,
    tvd2: r.tvd["2"],
    fit_s: fitS,
    sample_s: sampleS,
  };
}

function print(json: boolean, l: Line): void {
  if (json) {
    console.log(JSON.stringify(l));
    return;
  }
  const p = (x: number): string => `${(100 * x).toFixed(1)}%`;
  console.log(
    `${l.table} (${l.rows} rows, ${l.sampled} sampled) ${l.path} seed ${l.seed}, filter ${l.filter ? "on " : "off"}: near-copies ${l.near_copies} (${p(l.share)}), ` +
      `at half ${p(l.share_at_half)} vs split ${p(l.split_share)} (+${p(l.margin)})${l.no_more_than_split ? "" : " MORE"}; ` +
      `DCR share ${l.dcr_share.toFixed(3)} vs ${l.dcr_split_share.toFixed(3)}; ${l.passed ? "PASS" : "FAIL"}; 2-way TVD ${l.tvd2.toFixed(4)}; fit ${l.fit_s.toFixed(1)} s, sample ${l.sample_s.toFixed(1)} s`,
  );
}
