/**
 * `npm run bench -- tables [--json] [--table NAMES] [--config JSON] [--seed S[,S...]] [--out DIR]`:
 * fidelity and column checks on real tables as people have them (dates, identifiers, decimals,
 * blanks): the five tables of `../shared/datasets/real` and UCI Adult (`data/adult.csv`).
 *
 * Method, per seed and table:
 * 1. One `synthd serve` on a temporary store (`bench/harness.ts`) for the whole run; each table
 *    and seed gets its own org (a fresh sandbox key from `synthd keys create`: the sandbox quota is
 *    100,000 rows a month).
 * 2. Fit with the SDK's defaults (`Synthesizer.fit`: inferred column kinds, rare threshold 2) and
 *    the model size and epochs the SDK chooses by the table's rows (`fitConfig`; docs/api.md
 *    "Default model configuration") unless `--config`. `fit_seconds` is the server's own time
 *    from creation to ready (`updated_at - created_at`); `fit_wall_seconds` the client's, from the
 *    create request to seeing `ready` (250 ms polls), metadata extraction excluded (`extract_seconds`).
 * 3. Sample n = min(rows, 20,000) rows with the seed (`synth.writeCsv`, the SDK's default
 *    calibrated generation).
 * 4. Average 2-way TVD against the real table, all with `evaluate(real, X, TVD_OPTIONS)`
 *    (numerical and datetime columns cut at 16 quantile bins of the real column, categorical
 *    columns at their 15 most frequent real values plus one cell for the rest, identifiers left
 *    out), for three X of n rows:
 *    - `synthetic`: the sample of step 3;
 *    - `independent`: each column's values drawn independently, with replacement, from the real
 *      column's own values (blanks included): exact 1-way marginals up to noise, no relationship
 *      between columns, so the 2-way TVD a generator must beat ({@link independentValues});
 *    - `resample`: n real rows drawn with replacement: the sampling-noise floor at n rows
 *      ({@link resampleRows}).
 *    `gap_closed = (independent - synthetic) / (independent - resample)`, target >= 0.5.
 * 5. The per-column checks of the synthetic sample (`evaluate`'s `checks`) against
 *    {@link CHECK_TARGETS}; the worst value of each check over the table's columns is printed with
 *    its column, and every check that misses its target is listed.
 * `--seed 0,1,2` repeats everything (fit included: the model's weights are seeded by its id) for
 * each seed and adds the mean and minimum gap closed per table. `--out DIR` keeps the synthetic
 * CSVs (`DIR/<table>-seed<S>.csv`). Prints one JSON line with `--json`, else a table.
 */
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { Synthd, Synthesizer, Rng, deriveSeed, type Model, type ModelConfigInput, type Table } from "../src/sdk";
import { evaluate, type EvaluateOptions } from "../src/sdk/evaluate";
import type { ColumnCheck } from "../src/sdk/evaluate/types";
import type { ScannedTable } from "../src/sdk/metadata/metadata";
import { scanTable } from "../src/sdk/metadata/table-scan";
import { logger, modelSummary, parseConfig } from "./fidelity";
import { ADULT_CSV, SHARED_DATASETS, removeDir, runCli, startServer, tempDir } from "./harness";

/** The tables, by the name `--table` takes. */
export const TABLES: Record<string, string> = {
  airports: join(SHARED_DATASETS, "real", "airports.csv"),
  cars: join(SHARED_DATASETS, "real", "cars.csv"),
  flights: join(SHARED_DATASETS, "real", "flights-20k.csv"),
  github: join(SHARED_DATASETS, "real", "github.csv"),
  species: join(SHARED_DATASETS, "real", "species.csv"),
  adult: ADULT_CSV,
};

/** Most rows sampled per table. */
export const MAX_ROWS = 20_000;

/** `evaluate` options of the TVD comparison: 16 bins / 15 values + the rest, every real value known. */
export const TVD_OPTIONS: EvaluateOptions = { binCap: 16, categoryCap: 16, rareThreshold: 1 };

/** Target of `gap_closed`. */
export const GAP_TARGET = 0.5;

/**
 * Acceptance targets of the per-column checks (shares of the synthetic non-blank values, see
 * `ColumnCheck`): `min` checks must be at least, `max` checks at most the value, for the kinds
 * listed. `blank_diff` is |blank_synthetic - blank_real|, for every column.
 */
export const CHECK_TARGETS: Record<CheckName, { kinds: ColumnCheck["kind"][] | "all"; min?: number; max?: number }> = {
  parse: { kinds: ["datetime"], min: 0.98 },
  in_format: { kinds: ["datetime"], min: 0.98 },
  in_range: { kinds: ["datetime", "numerical"], min: 0.99 },
  precision: { kinds: ["numerical"], min: 0.98 },
  known: { kinds: ["categorical"], min: 0.99 },
  copies: { kinds: ["id"], max: 0.1 },
  distinct: { kinds: ["id"], min: 0.9 },
  shape: { kinds: ["id"], min: 0.9 },
  blank_diff: { kinds: "all", max: 0.05 },
};

/** The checks with a target. */
export type CheckName = "parse" | "in_format" | "in_range" | "precision" | "known" | "copies" | "distinct" | "shape" | "blank_diff";

/** True when check `name` has a target for the column's kind. */
function applies(c: ColumnCheck, name: CheckName): boolean {
  // A column whose rare values are written fresh reports `fresh` instead of `known`: by design
  // its fresh values are not real ones.
  if (name === "known" && c.fresh !== undefined) return false;
  const kinds = CHECK_TARGETS[name].kinds;
  return kinds === "all" || kinds.includes(c.kind);
}

/** The value of one check for one column, or undefined when it does not apply to the column (or was not reported). */
export function checkValue(c: ColumnCheck, name: CheckName): number | undefined {
  if (!applies(c, name)) return undefined;
  if (name === "blank_diff") return Math.abs(c.blank_synthetic - c.blank_real);
  return c[name];
}

/** A check that missed its target. */
export interface CheckFailure {
  column: string;
  kind: ColumnCheck["kind"];
  check: CheckName;
  /** The value; undefined when the check should apply but `evaluate` did not report it. */
  value: number | undefined;
  target: string;
}

/** Every check of `checks` that misses its target in {@link CHECK_TARGETS}. */
export function checkFailures(checks: readonly ColumnCheck[]): CheckFailure[] {
  const out: CheckFailure[] = [];
  for (const c of checks) {
    for (const name of Object.keys(CHECK_TARGETS) as CheckName[]) {
      if (!applies(c, name)) continue;
      const t = CHECK_TARGETS[name];
      const v = checkValue(c, name);
      const ok = v !== undefined && (t.min === undefined || v >= t.min) && (t.max === undefined || v <= t.max);
      if (!ok) out.push({ column: c.column, kind: c.kind, check: name, value: v, target: t.min !== undefined ? `>= ${t.min}` : `<= ${t.max}` });
    }
  }
  return out;
}

/** The worst value of each check over a table's columns (min for `min` targets, max for `max`), with its column. */
export function worstChecks(checks: readonly ColumnCheck[]): Partial<Record<CheckName, { value: number; column: string }>> {
  const out: Partial<Record<CheckName, { value: number; column: string }>> = {};
  for (const name of Object.keys(CHECK_TARGETS) as CheckName[]) {
    const lower = CHECK_TARGETS[name].min !== undefined;
    for (const c of checks) {
      const v = checkValue(c, name);
      if (v === undefined) continue;
      const cur = out[name];
      if (!cur || (lower ? v < cur.value : v > cur.value)) out[name] = { value: v, column: c.column };
    }
  }
  return out;
}

/**
 * The independent-values baseline: `n` rows whose column c holds values drawn with replacement
 * from the real column c (blanks included), each column from its own stream `deriveSeed(seed, c, 1)`.
 */
export function independentValues(scanned: ScannedTable, n: number, seed: number): Table {
  const rows: string[][] = Array.from({ length: n }, () => new Array<string>(scanned.columns.length));
  scanned.scans.forEach((s, c) => {
    const rng = new Rng(deriveSeed(seed, c, 1));
    for (let r = 0; r < n; r++) rows[r][c] = s.values[s.ids[rng.int(scanned.n)]];
  });
  return { columns: [...scanned.columns], rows };
}

/** `n` rows of the real table drawn with replacement (stream `deriveSeed(seed, 3)`). */
export function resampleRows(scanned: ScannedTable, n: number, seed: number): Table {
  const rng = new Rng(deriveSeed(seed, 3));
  const rows: string[][] = [];
  for (let r = 0; r < n; r++) {
    const i = rng.int(scanned.n);
    rows.push(scanned.scans.map((s) => s.values[s.ids[i]]));
  }
  return { columns: [...scanned.columns], rows };
}

/** (independent - synthetic) / (independent - resample): 0 = no better than independent columns, 1 = as close as real rows. */
export function gapClosed(synthetic: number, independent: number, resample: number): number {
  return (independent - synthetic) / (independent - resample);
}

/** Options of the tables benchmark (commander's parsed flags). */
export interface TablesOptions {
  json: boolean;
  /** Comma-separated table names (default: all). */
  table?: string;
  /** Model config as JSON (default: the SDK's choice by the table's rows, `fitConfig`). */
  config?: string;
  /** Comma-separated seeds (default "0"). */
  seed: string;
  /** Keep the synthetic CSVs in this folder. */
  out?: string;
}

/** One table and seed. */
export interface TableResult {
  table: string;
  file: string;
  seed: number;
  rows: number;
  /** Rows sampled (and drawn for each baseline). */
  n: number;
  kinds: Record<string, string>;
  /** Columns left out of the TVD (identifiers). */
  excluded: string[];
  tvd2: { synthetic: number; independent: number; resample: number };
  gap_closed: number;
  worst: ReturnType<typeof worstChecks>;
  failures: CheckFailure[];
  checks: ColumnCheck[];
  /** Each row rule of the model's metadata: share of real and of synthetic rows that keep it (issue 23). */
  rules: { label: string; real: number; synthetic: number }[];
  extract_seconds: number;
  fit_seconds: number;
  fit_wall_seconds: number;
  sample_seconds: number;
  model: Pick<Model, "id" | "status" | "current_epoch" | "train_loss" | "val_loss">;
  config: Model["config"];
}

/** The JSON line the benchmark prints. */
export interface TablesResult {
  bench: "tables";
  seeds: number[];
  config: ModelConfigInput | null;
  tvd_options: EvaluateOptions;
  gap_target: number;
  results: TableResult[];
  /** Per table over the seeds. */
  summary: Record<string, { gap_closed_mean: number; gap_closed_min: number; failures: number }>;
  seconds: number;
}

function parseSeeds(s: string): number[] {
  const seeds = s.split(",").map((x) => Number(x.trim()));
  if (!seeds.length || seeds.some((x) => !Number.isSafeInteger(x))) throw new Error(`--seed must be integers separated by commas, got ${JSON.stringify(s)}`);
  return seeds;
}

function parseTables(s: string | undefined): string[] {
  if (s === undefined) return Object.keys(TABLES);
  const names = s.split(",").map((x) => x.trim());
  for (const n of names) if (!(n in TABLES)) throw new Error(`unknown table ${JSON.stringify(n)}; tables: ${Object.keys(TABLES).join(", ")}`);
  return names;
}

/** Runs the benchmark and prints its result. */
export async function tablesBench(opts: TablesOptions): Promise<void> {
  const t0 = Date.now();
  const seeds = parseSeeds(opts.seed);
  const names = parseTables(opts.table);
  const config = parseConfig(opts.config);
  const log = logger(opts.json);
  const dir = tempDir("synthd-tables-");
  const outDir = opts.out !== undefined ? resolve(opts.out) : join(dir, "out");
  mkdirSync(outDir, { recursive: true });
  const store = join(dir, "store");
  const results: TableResult[] = [];
  try {
    const server = await startServer(store);
    try {
      for (const seed of seeds) {
        for (const name of names) {
          const file = TABLES[name];
          const org = `tables-${name}-${seed}`.replace(/[^A-Za-z0-9_-]/g, "_");
          const key = await runCli(["keys", "create", "--data-dir", store, "--org", org]);
          if (key.code !== 0) throw new Error(`keys create failed: ${key.stderr}`);
          const client = new Synthd({ apiKey: key.stdout.trim(), baseUrl: server.url });
          results.push(await runTable(client, name, file, seed, config, outDir, log));
        }
      }
    } finally {
      await server.kill("SIGTERM");
    }
  } finally {
    removeDir(dir);
  }
  const summary: TablesResult["summary"] = {};
  for (const name of names) {
    const mine = results.filter((r) => r.table === name);
    const gaps = mine.map((r) => r.gap_closed);
    summary[name] = {
      gap_closed_mean: gaps.reduce((a, b) => a + b, 0) / gaps.length,
      gap_closed_min: Math.min(...gaps),
      failures: mine.reduce((s, r) => s + r.failures.length, 0),
    };
  }
  const result: TablesResult = {
    bench: "tables",
    seeds,
    config: config ?? null,
    tvd_options: TVD_OPTIONS,
    gap_target: GAP_TARGET,
    results,
    summary,
    seconds: (Date.now() - t0) / 1000,
  };
  if (opts.json) console.log(JSON.stringify(result));
  else console.log(formatTables(result));
}

async function runTable(
  client: Synthd,
  name: string,
  file: string,
  seed: number,
  config: ModelConfigInput | undefined,
  outDir: string,
  log: (s: string) => void,
): Promise<TableResult> {
  const scanned = await scanTable(file, 2);
  const n = Math.min(scanned.n, MAX_ROWS);
  log(`${name} (seed ${seed}): ${scanned.n} rows; fitting`);
  const tExtract = Date.now();
  let tCreate = 0;
  let kinds: Record<string, string> = {};
  const fitted = await Synthesizer.fit(client, file, {
    ...(config ? { config } : {}),
    onAnalysis: (a) => {
      kinds = Object.fromEntries(a.codecs.map((c) => [c.name, c.kind]));
      tCreate = Date.now();
    },
    waitOptions: { pollIntervalMs: 250 },
  });
  const tReady = Date.now();
  const m = fitted.model;
  const { model, fitSeconds } = modelSummary(m);
  log(`  ready after ${m.current_epoch} epochs, ${fitSeconds.toFixed(1)} s (val_loss ${m.val_loss}); sampling ${n} rows`);
  const synthPath = join(outDir, `${name}-seed${seed}.csv`);
  const tSample = Date.now();
  await fitted.writeCsv(synthPath, n, { seed });
  const sampleSeconds = (Date.now() - tSample) / 1000;
  // With the model's metadata, evaluate also counts each row rule on the real and the synthetic rows.
  const synth = await evaluate(file, synthPath, { ...TVD_OPTIONS, metadata: fitted.metadata });
  const ind = await evaluate(file, independentValues(scanned, n, seed), TVD_OPTIONS);
  const res = await evaluate(file, resampleRows(scanned, n, seed), TVD_OPTIONS);
  const tvd2 = { synthetic: synth.tvd["2"], independent: ind.tvd["2"], resample: res.tvd["2"] };
  const r: TableResult = {
    table: name,
    file,
    seed,
    rows: scanned.n,
    n,
    kinds,
    excluded: synth.excluded,
    tvd2,
    gap_closed: gapClosed(tvd2.synthetic, tvd2.independent, tvd2.resample),
    worst: worstChecks(synth.checks),
    failures: checkFailures(synth.checks),
    checks: synth.checks,
    rules: synth.rules.map((x) => ({ label: x.label, real: x.real.share, synthetic: x.synthetic.share })),
    extract_seconds: (tCreate - tExtract) / 1000,
    fit_seconds: fitSeconds,
    fit_wall_seconds: (tReady - tCreate) / 1000,
    sample_seconds: sampleSeconds,
    model,
    config: m.config,
  };
  for (const x of r.rules) log(`  rule ${x.label}: real ${x.real.toFixed(4)}, synthetic ${x.synthetic.toFixed(4)}`);
  log(`  2-way TVD synthetic ${tvd2.synthetic.toFixed(4)}, independent ${tvd2.independent.toFixed(4)}, resample ${tvd2.resample.toFixed(4)}; gap closed ${r.gap_closed.toFixed(2)}; ${r.failures.length} failing checks`);
  return r;
}

const SHORT: Record<CheckName, string> = {
  parse: "parse",
  in_format: "format",
  in_range: "range",
  precision: "prec",
  known: "known",
  copies: "copies",
  distinct: "distinct",
  shape: "shape",
  blank_diff: "blank+-",
};

/** The human-readable table of a {@link TablesResult}. */
export function formatTables(r: TablesResult): string {
  const f = (x: number, d = 4): string => x.toFixed(d);
  const lines = [
    `2-way TVD against the real table (evaluate ${JSON.stringify(r.tvd_options)}), n = min(rows, ${MAX_ROWS}); gap closed = (independent - synthetic) / (independent - resample), target >= ${r.gap_target}`,
    `model config: ${r.config ? JSON.stringify(r.config) : "chosen by the SDK per table (see each model's config)"}`,
    `${"table".padEnd(9)} ${"seed".padStart(4)} ${"rows".padStart(6)} ${"synthetic".padStart(9)} ${"indep.".padStart(9)} ${"resample".padStart(9)} ${"gap".padStart(6)}      ${"fit s".padStart(6)}  checks (worst over the columns)`,
  ];
  for (const t of r.results) {
    const worst = (Object.keys(CHECK_TARGETS) as CheckName[])
      .filter((k) => t.worst[k])
      .map((k) => `${SHORT[k]} ${f(t.worst[k]!.value, 3)}`)
      .join(", ");
    lines.push(
      `${t.table.padEnd(9)} ${String(t.seed).padStart(4)} ${String(t.rows).padStart(6)} ${f(t.tvd2.synthetic).padStart(9)} ${f(t.tvd2.independent).padStart(9)} ` +
        `${f(t.tvd2.resample).padStart(9)} ${f(t.gap_closed, 2).padStart(6)} ${t.gap_closed >= r.gap_target ? "PASS" : "FAIL"} ${f(t.fit_seconds, 1).padStart(6)}  ${worst}`,
    );
  }
  const failing = r.results.flatMap((t) =>
    t.failures.map((x) => `  ${t.table} (seed ${t.seed}) ${x.column} [${x.kind}]: ${x.check} ${x.value === undefined ? "not reported" : f(x.value)} (target ${x.target})`),
  );
  lines.push(failing.length ? `failing checks:\n${failing.join("\n")}` : "every column check meets its target");
  const rules = r.results.flatMap((t) =>
    t.rules.map((x) => `  ${t.table} (seed ${t.seed}) ${x.label}: real ${f(x.real)}, synthetic ${f(x.synthetic)}${x.synthetic < (x.real === 1 ? 1 : x.real - 0.01) ? "  BROKEN" : ""}`),
  );
  lines.push(rules.length ? `row rules (share of rows that keep each):\n${rules.join("\n")}` : "no row rules");
  if (r.seeds.length > 1) {
    lines.push("gap closed over the seeds:");
    for (const [name, s] of Object.entries(r.summary)) lines.push(`  ${name.padEnd(9)} mean ${f(s.gap_closed_mean, 2)}, min ${f(s.gap_closed_min, 2)}`);
  }
  lines.push(`total ${r.seconds.toFixed(0)} s`);
  return lines.join("\n");
}
