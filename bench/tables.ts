/**
 * `npm run bench -- tables [--json] [--table NAMES] [--config JSON] [--epochs E] [--seed S[,S...]] [--out DIR]`:
 * fidelity, column checks and realism on real tables as people have them (dates, identifiers,
 * decimals, blanks): the five tables of `../shared/datasets/real` and UCI Adult (`data/adult.csv`),
 * which the project was tuned on (`--table tuned`), and public tables it was not tuned on, from
 * the `vega-datasets` package (`--table public`, `./public-tables`; issue 40).
 *
 * Method, per seed and table:
 * 1. One `synthd serve` on a temporary store (`bench/harness.ts`) for the whole run; each table
 *    and seed gets its own org (a fresh sandbox key from `synthd keys create`: the sandbox quota is
 *    100,000 rows a month).
 * 2. Fit with the SDK's defaults (`Synthesizer.fit`: inferred column kinds, rare threshold 2) and
 *    the model size and epochs the SDK chooses by the table's rows (`fitConfig`; docs/api.md
 *    "Default model configuration") unless `--config`; `--epochs E` caps `max_epochs` at E for quick
 *    runs. `fit_seconds` is the server's own time
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
 * 6. Realism (`./realism`, what a user sees reading the rows, whatever the SDK detected): per text
 *    column the share of real values and of values with an invented token (letter soup); real
 *    (city, state) and (zip prefix, state) pairs and points inside their state (against the real
 *    table and a gazetteer of US zip codes); the share of synthetic rows in structural zeros; each
 *    linear identity of the real numeric columns (sums with sparse parts among them) and its share
 *    of synthetic rows; grain (multiples of round steps, decimals written); each catalog of the
 *    real table (a key deciding other columns) and the share of synthetic rows keeping it; each
 *    datetime column on some days of the week only and the synthetic share on the others.
 * 7. Rules kept: each row rule of the model's metadata, real and synthetic share that keep it.
 * 8. Near-copies (`evaluate`'s `near_copies` with the model's metadata): synthetic rows nearly
 *    copying a real row, against a 50/50 split of the real table, cells compared as the model's
 *    near-copy filter compares them (`src/sdk/privacy/near-copy-read.ts`), not at `TVD_OPTIONS`.
 * 9. With `--holdout`, near-copies against a holdout ({@link holdoutNearCopies}): a second
 *    model fitted on a seeded half of the real rows; its sample's near-copies of that half against
 *    those of the other half (`evaluate`'s `holdout_near_copies`; docs/generality.md).
 * `--seed 0,1,2` repeats everything (fit included: the model's weights are seeded by its id) for
 * each seed and adds the mean and minimum gap closed per table. `--out DIR` keeps the synthetic
 * CSVs (`DIR/<table>-seed<S>.csv`) and the public JSON tables as CSV (`DIR/<table>.csv`). Prints one JSON line with `--json`, else a table.
 */
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { MIN_ROWS, Synthd, Synthesizer, Rng, deriveSeed, fitConfig, type Model, type ModelConfigInput, type Table } from "../src/sdk";
import { evaluate, type EvaluateOptions, type HoldoutNearCopyCheck } from "../src/sdk/evaluate";
import { shuffled } from "../src/sdk/privacy/near-copies";
import type { ColumnCheck } from "../src/sdk/evaluate/types";
import type { ScannedTable } from "../src/sdk/metadata/metadata";
import { scanTable } from "../src/sdk/metadata/table-scan";
import { logger, modelSummary, parseConfig } from "./fidelity";
import { ADULT_CSV, SHARED_DATASETS, removeDir, runCli, startServer, tempDir } from "./harness";
import { PUBLIC_TABLES, publicTableCsv, usGazetteer } from "./public-tables";
import { geography, grain, grainGap, linearIdentities, ratioIdentities, structuralZeros, textRealism, type Gazetteer, type GeoCheck, type GrainCheck, type LinearIdentity, type RatioIdentity, type StructuralZeros, type TextRealism } from "./realism";
import { catalogs, weekdays, type CatalogCheck, type WeekdayCheck } from "./realism";

/** The tables the project was tuned on, by the name `--table` takes. */
export const TABLES: Record<string, string> = {
  airports: join(SHARED_DATASETS, "real", "airports.csv"),
  cars: join(SHARED_DATASETS, "real", "cars.csv"),
  flights: join(SHARED_DATASETS, "real", "flights-20k.csv"),
  github: join(SHARED_DATASETS, "real", "github.csv"),
  species: join(SHARED_DATASETS, "real", "species.csv"),
  adult: ADULT_CSV,
};

/** Table groups `--table` takes besides the names. */
export const TABLE_GROUPS: Record<string, string[]> = { tuned: Object.keys(TABLES), public: Object.keys(PUBLIC_TABLES) };

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

/** The SDK's config for `rows` rows (or `config`) with `max_epochs` capped at `epochs`. */
function cappedConfig(rows: number, config: ModelConfigInput | undefined, epochs: number): ModelConfigInput {
  const chosen = fitConfig(rows, config).config;
  return { ...chosen, max_epochs: Math.min(chosen.max_epochs!, epochs) };
}

/**
 * Step 9 (file header): the real rows cut 50/50 (seeded) into TRAIN and HOLDOUT; a model fitted
 * on TRAIN as a user fits a table (the SDK's defaults, its near-copy filter); |TRAIN| rows (at most
 * 20,000) sampled with `seed`; `evaluate`'s `holdout_near_copies`. Undefined under 2 × MIN_ROWS rows.
 */
export async function holdoutNearCopies(client: Synthd, scanned: ScannedTable, config: ModelConfigInput | undefined, seed: number): Promise<HoldoutNearCopyCheck | undefined> {
  if (scanned.n < 2 * MIN_ROWS) return undefined;
  const order = shuffled(scanned.n, deriveSeed(seed, 11));
  const half = Math.ceil(scanned.n / 2);
  const rows = (idx: ArrayLike<number>): string[][] => Array.from(idx, (i) => scanned.scans.map((s) => s.values[s.ids[i]]));
  const train: Table = { columns: [...scanned.columns], rows: rows(order.subarray(0, half)) };
  const holdout: Table = { columns: [...scanned.columns], rows: rows(order.subarray(half)) };
  const fitted = await Synthesizer.fit(client, train, { ...(config ? { config } : {}), waitOptions: { pollIntervalMs: 250 } });
  const synth = await fitted.sample(Math.min(half, MAX_ROWS), { seed });
  return (await evaluate(train, synth, { metadata: fitted.metadata, holdout })).holdout_near_copies;
}

/** (independent - synthetic) / (independent - resample): 0 = no better than independent columns, 1 = as close as real rows. */
export function gapClosed(synthetic: number, independent: number, resample: number): number {
  return (independent - synthetic) / (independent - resample);
}

/** Options of the tables benchmark (commander's parsed flags). */
export interface TablesOptions {
  json: boolean;
  /** Comma-separated table names or groups (`TABLE_GROUPS`; default: all). */
  table?: string;
  /** Model config as JSON (default: the SDK's choice by the table's rows, `fitConfig`). */
  config?: string;
  /** Cap on `max_epochs` (after the SDK's choice or `config`), for quick runs. */
  epochs?: string;
  /** Comma-separated seeds (default "0"). */
  seed: string;
  /** Keep the synthetic CSVs in this folder. */
  out?: string;
  /** Step 9: also fit each table's half and compare its near-copies of both halves. */
  holdout?: boolean;
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
  /** Realism checks (`./realism`). */
  realism: Realism;
  /** `evaluate`'s near-copy check, in short. */
  near_copies?: { share: number; share_at_half: number; split_share: number; margin: number; passed: boolean };
  /** Step 9 (`--holdout`): near-copies of the training half against the holdout half. */
  holdout_near_copies?: HoldoutNearCopyCheck;
  extract_seconds: number;
  fit_seconds: number;
  fit_wall_seconds: number;
  sample_seconds: number;
  model: Pick<Model, "id" | "status" | "current_epoch" | "train_loss" | "val_loss">;
  config: Model["config"];
}

/** The realism checks of one synthetic table (`./realism`). */
export interface Realism {
  text: TextRealism[];
  geography: GeoCheck[];
  structural_zeros: StructuralZeros;
  /** Linear identities, then ratio and product identities. */
  identities: (LinearIdentity | RatioIdentity)[];
  grain: GrainCheck[];
  catalogs: CatalogCheck[];
  weekdays?: WeekdayCheck[];
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
  const all = [...Object.keys(TABLES), ...Object.keys(PUBLIC_TABLES)];
  if (s === undefined) return all;
  const names = s.split(",").flatMap((x) => TABLE_GROUPS[x.trim()] ?? [x.trim()]);
  for (const n of names) if (!all.includes(n)) throw new Error(`unknown table ${JSON.stringify(n)}; tables: ${all.join(", ")}, or a group: ${Object.keys(TABLE_GROUPS).join(", ")}`);
  return [...new Set(names)];
}

function parseEpochs(s: string | undefined): number | undefined {
  if (s === undefined) return undefined;
  const e = Number(s);
  if (!Number.isSafeInteger(e) || e < 1) throw new Error(`--epochs must be a positive integer, got ${JSON.stringify(s)}`);
  return e;
}

/** Runs the benchmark and prints its result. */
export async function tablesBench(opts: TablesOptions): Promise<void> {
  const t0 = Date.now();
  const seeds = parseSeeds(opts.seed);
  const names = parseTables(opts.table);
  const config = parseConfig(opts.config);
  const epochs = parseEpochs(opts.epochs);
  const log = logger(opts.json);
  const dir = tempDir("synthd-tables-");
  const outDir = opts.out !== undefined ? resolve(opts.out) : join(dir, "out");
  mkdirSync(outDir, { recursive: true });
  const store = join(dir, "store");
  const results: TableResult[] = [];
  try {
    const gazetteer = await usGazetteer();
    const server = await startServer(store);
    try {
      for (const seed of seeds) {
        for (const name of names) {
          const file = TABLES[name] ?? (await publicTableCsv(name, outDir));
          const org = `tables-${name}-${seed}`.replace(/[^A-Za-z0-9_-]/g, "_");
          const key = await runCli(["keys", "create", "--data-dir", store, "--org", org]);
          if (key.code !== 0) throw new Error(`keys create failed: ${key.stderr}`);
          const client = new Synthd({ apiKey: key.stdout.trim(), baseUrl: server.url });
          let holdoutClient: Synthd | undefined;
          if (opts.holdout) {
            // The holdout fit gets an org of its own: one org's sandbox quota holds one table's samples.
            const hKey = await runCli(["keys", "create", "--data-dir", store, "--org", `${org}-holdout`]);
            if (hKey.code !== 0) throw new Error(`keys create failed: ${hKey.stderr}`);
            holdoutClient = new Synthd({ apiKey: hKey.stdout.trim(), baseUrl: server.url });
          }
          results.push(await runTable({ client, holdoutClient }, name, file, seed, config, epochs, gazetteer, outDir, log));
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
    config: epochs !== undefined ? { ...config, max_epochs: epochs } : (config ?? null),
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
  clients: { client: Synthd; holdoutClient?: Synthd },
  name: string,
  file: string,
  seed: number,
  config: ModelConfigInput | undefined,
  epochs: number | undefined,
  gazetteer: Gazetteer,
  outDir: string,
  log: (s: string) => void,
): Promise<TableResult> {
  const { client, holdoutClient } = clients;
  const scanned = await scanTable(file, 2);
  const holdoutConfig = epochs !== undefined ? cappedConfig(Math.ceil(scanned.n / 2), config, epochs) : config;
  if (epochs !== undefined) {
    const chosen = fitConfig(scanned.n, config).config;
    config = { ...chosen, max_epochs: Math.min(chosen.max_epochs!, epochs) };
  }
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
  const synthScan = await scanTable(synthPath, 2);
  const realism: Realism = {
    text: textRealism(scanned, synthScan, kinds),
    geography: geography(scanned, synthScan, gazetteer),
    structural_zeros: structuralZeros(scanned, synthScan),
    identities: [...linearIdentities(scanned, synthScan), ...ratioIdentities(scanned, synthScan)],
    grain: grain(scanned, synthScan),
    catalogs: catalogs(scanned, synthScan),
    weekdays: weekdays(scanned, synthScan),
  };
  const nc = synth.near_copies;
  if (holdoutClient) log(`  holdout: fitting on half of the rows`);
  const holdout = holdoutClient ? await holdoutNearCopies(holdoutClient, scanned, holdoutConfig, seed) : undefined;
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
    realism,
    ...(nc
      ? { near_copies: { share: nc.synthetic_share, share_at_half: nc.synthetic_share_at_half, split_share: nc.split_share, margin: nc.near_copy_margin, passed: nc.near_copies_passed } }
      : {}),
    ...(holdout ? { holdout_near_copies: holdout } : {}),
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
    `${"table".padEnd(23)} ${"seed".padStart(4)} ${"rows".padStart(6)} ${"synthetic".padStart(9)} ${"indep.".padStart(9)} ${"resample".padStart(9)} ${"gap".padStart(6)}      ${"fit s".padStart(6)}  checks (worst over the columns)`,
  ];
  for (const t of r.results) {
    const worst = (Object.keys(CHECK_TARGETS) as CheckName[])
      .filter((k) => t.worst[k])
      .map((k) => `${SHORT[k]} ${f(t.worst[k]!.value, 3)}`)
      .join(", ");
    lines.push(
      `${t.table.padEnd(23)} ${String(t.seed).padStart(4)} ${String(t.rows).padStart(6)} ${f(t.tvd2.synthetic).padStart(9)} ${f(t.tvd2.independent).padStart(9)} ` +
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
  lines.push(...formatRealism(r));
  if (r.seeds.length > 1) {
    lines.push("gap closed over the seeds:");
    for (const [name, s] of Object.entries(r.summary)) lines.push(`  ${name.padEnd(23)} mean ${f(s.gap_closed_mean, 2)}, min ${f(s.gap_closed_min, 2)}`);
  }
  lines.push(`total ${r.seconds.toFixed(0)} s`);
  return lines.join("\n");
}

/** Worst of a list, or undefined when empty. */
function worstOf<T>(xs: readonly T[], key: (x: T) => number, lower: boolean): T | undefined {
  let best: T | undefined;
  for (const x of xs) if (best === undefined || (lower ? key(x) < key(best) : key(x) > key(best))) best = x;
  return best;
}

/** The realism lines of a {@link TablesResult}: one summary line per table and seed, then each table's findings. */
export function formatRealism(r: TablesResult): string[] {
  const p = (x: number | undefined): string => (x === undefined ? "-" : `${(100 * x).toFixed(1)}%`);
  const q = (s: string): string => JSON.stringify(s.length > 60 ? `${s.slice(0, 57)}...` : s);
  const lines = [
    "realism (./realism): soup = most invented-token share of a text column; real = least real-value share of a text column; geo = least real share of a place check;",
    "  zeros = synthetic rows in a structural zero; ident = least share of synthetic rows keeping a linear, ratio or product identity of the real table; grain = largest gap beyond two binomial sd in the zero share or a multiple-of-step share of the non-zero values;",
    "  lattice = least share of synthetic values that are real values, over the numeric columns of repeated values;",
    "  catalog = least share of synthetic rows whose key is a real key with that key's real attributes (a composite key: of the rows on a repeated real pair);",
    "  near-copies = synthetic at half vs a 50/50 split of the real table;",
    "  holdout = a model fitted on half of the rows: its near-copies of that half vs of the other half",
    `${"table".padEnd(28)} ${"soup".padStart(6)} ${"real".padStart(6)} ${"geo".padStart(6)} ${"zeros".padStart(6)} ${"ident".padStart(6)} ${"grain".padStart(6)} ${"lattice".padStart(7)} ${"rules".padStart(6)} ${"catalog".padStart(7)}  ${"near-copies".padEnd(22)}  holdout`,
  ];
  for (const t of r.results) {
    const x = t.realism;
    const soup = worstOf(x.text, (c) => c.invented_tokens, false);
    const real = worstOf(x.text, (c) => c.real_values, true);
    const geo = worstOf(x.geography, (c) => c.real, true);
    const ident = worstOf(x.identities, (c) => c.synthetic, true);
    const gr = worstOf(x.grain, grainGap, false);
    const lattice = worstOf(
      x.grain.filter((c) => c.real_values !== undefined),
      (c) => c.real_values!,
      true,
    );
    const rule = worstOf(t.rules, (c) => c.synthetic, true);
    const cat = worstOf(x.catalogs ?? [], (c) => c.synthetic, true);
    const nc = t.near_copies;
    const h = t.holdout_near_copies;
    lines.push(
      `${`${t.table} (${t.seed})`.padEnd(28)} ${p(soup?.invented_tokens).padStart(6)} ${p(real?.real_values).padStart(6)} ${p(geo?.real).padStart(6)} ` +
        `${p(x.structural_zeros.rows_share).padStart(6)} ${p(ident?.synthetic).padStart(6)} ${p(gr && grainGap(gr)).padStart(6)} ${p(lattice?.real_values).padStart(7)} ${p(rule?.synthetic).padStart(6)} ${p(cat?.synthetic).padStart(7)}  ` +
        (nc ? `${p(nc.share_at_half)} vs ${p(nc.split_share)} ${nc.passed ? "PASS" : "FAIL"}` : "-").padEnd(22) +
        "  " +
        (h ? `${p(h.train_share)} vs ${p(h.holdout_share)} ${h.passed ? "PASS" : "FAIL"}` : "-"),
    );
  }
  for (const t of r.results) {
    const x = t.realism;
    lines.push(`${t.table} (seed ${t.seed}):`);
    for (const c of x.text)
      lines.push(`  text ${c.column}: real values ${p(c.real_values)}, invented tokens ${p(c.invented_tokens)}${c.examples.length ? ` (${c.examples.map(q).join(", ")})` : ""}`);
    for (const g of x.geography) lines.push(`  ${g.check} ${g.columns.join(", ")}: real ${p(g.real)} of ${g.rows} rows${g.examples.length ? ` (${g.examples.map(q).join("; ")})` : ""}`);
    const z = x.structural_zeros;
    lines.push(`  structural zeros: ${z.pairs.length} pairs, ${p(z.rows_share)} of synthetic rows in one`);
    for (const s of z.pairs.slice(0, 5))
      lines.push(`    ${s.columns.join(" x ")}: ${s.cells} empty cells (independence: ${s.predicted_rows} rows), synthetic ${p(s.synthetic_share)}${s.examples.length ? ` (${s.examples.map(q).join(", ")})` : ""}`);
    const ids = [...x.identities].sort((a, b) => a.synthetic - b.synthetic);
    if (ids.length) lines.push(`  linear, ratio and product identities: ${ids.length}${ids.length > 10 ? " (the 10 least kept)" : ""}`);
    for (const i of ids.slice(0, 10))
      lines.push(
        `    ${i.label}: real rows ${i.real_rows} (${i.real_rows_nonzero_part} with a part not 0), synthetic ${p(i.synthetic)} of ${i.synthetic_rows}${i.examples.length ? ` (${i.examples.map(q).join("; ")})` : ""}`,
      );
    const dayNames = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    for (const w of x.weekdays ?? [])
      lines.push(`  weekdays ${w.column}: real on ${w.days.map((d) => dayNames[d]).join(" ")} only, synthetic on another day ${p(w.synthetic_off)} of ${w.rows}`);
    for (const c of x.catalogs ?? [])
      lines.push(`  catalog ${c.key} -> ${c.attributes.join(", ")}: ${c.real_keys} repeated real keys, synthetic ${p(c.synthetic)} of ${c.synthetic_rows}${c.examples.length ? ` (${c.examples.map(q).join("; ")})` : ""}`);
    for (const g of x.grain) {
      const gap = Math.abs(g.real - g.synthetic);
      const noise = gap > g.noise ? "" : `, within noise ${p(g.noise)}`;
      const steps = gap > 0.02 ? `multiples of ${+g.step.toFixed(4)} among non-zero values real ${p(g.real)}, synthetic ${p(g.synthetic)}${noise}` : "";
      const zgap = Math.abs(g.zero_real - g.zero_synthetic);
      const zeros = zgap > 0.02 ? `zeros real ${p(g.zero_real)}, synthetic ${p(g.zero_synthetic)}${zgap > g.zero_noise ? "" : `, within noise ${p(g.zero_noise)}`}` : "";
      const decimals = g.decimals_tvd > 0.02 ? `decimals written TVD ${g.decimals_tvd.toFixed(3)}` : "";
      const lattice = g.real_values !== undefined && g.real_values < 0.98 ? `real values ${p(g.real_values)} (a lattice)` : "";
      if (steps || zeros || decimals || lattice) lines.push(`  grain ${g.column}: ${[steps, zeros, decimals, lattice].filter((x) => x).join("; ")}`);
    }
  }
  return lines;
}
