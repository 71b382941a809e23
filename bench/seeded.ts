/**
 * `npm run bench -- seeded [--json] [--out FILE] [--epochs N] [--config JSON] [--seed S] [--rows N]
 * [--rare JSON] [--blank P] [--speed-rows N] [--reps N] [--parts LIST]`: seeded (conditional)
 * generation, issue 12's acceptance items 2, 3 and 4, against the real server.
 *
 * Method:
 * 1. Data and split: UCI Adult as shipped (`data/adult.csv`, 32,561 rows, 15 columns), split by
 *    `split` of `bench/fidelity.ts` (`npm run bench -- fidelity --data raw`): a seeded Fisher–Yates
 *    shuffle (`--seed`, default 0), TRAIN = the first floor(0.8 n) rows (26,048), HOLDOUT = the rest
 *    (6,513).
 * 2. Fit: one `synthd serve` child process on a fresh store (`bench/harness.ts`), one live org whose
 *    monthly quota is raised with `synthd orgs set --live-quota` (the speed part alone draws close to
 *    a million rows), `Synthesizer.fit` on TRAIN with the SDK's default extraction and the server's
 *    default config with `max_epochs = --epochs` (default 100, the server's default: about 30 s of
 *    training on 2 cores with the native core, the whole bench about 2 minutes; `--config JSON`
 *    overrides any field, e.g. `{"early_stop_patience":0}`).
 * 3. Fidelity (acceptance 2, part `fidelity`): for each condition, `synth.sample(--rows, { where, seed })`
 *    (default 10,000 rows; the SDK's default, calibrated: docs/api.md "Seeded generation"). Conditions: `sex = Female`, `age in [60, 90]`, `income = >50K`, and a
 *    rare combination (default {@link DEFAULT_RARE}, 0.1996% of TRAIN, chosen without a model by
 *    `bench/rare-combinations.ts`; `--rare JSON` for another `where`; its TRAIN frequency is printed
 *    and a warning is printed when it is not under 0.2%), plus {@link INFO_RARE} (0.13%) printed
 *    and not counted. The free columns (every column not in the condition) are
 *    compared with TRAIN's rows satisfying the condition: average 1-way and 2-way TVD by the SDK's
 *    `evaluate` (binning `TVD_OPTIONS` of `bench/tables.ts`, code books from the conditioned TRAIN
 *    rows, column kinds fixed to the model's so a small subset is binned like the whole). The
 *    baseline is an unconditional synthetic sample of the same size against the same conditioned
 *    TRAIN rows: the SDK's default sample (calibrated; the primary baseline, `ratio`) and the plain
 *    draw (`ratio_plain`). `ratio = conditional / unconditional` per arity; pass when both the
 *    1-way and 2-way ratios are <= 0.5. Also printed: HOLDOUT's rows with the condition against the
 *    same TRAIN rows (the sampling-noise floor at HOLDOUT's size); the finite-sample floor at the
 *    conditioned TRAIN rows' size (another conditioned sample, `seed + 1`, of as many rows as TRAIN
 *    has with the condition, in the place of TRAIN's rows, against the same conditioned sample: the
 *    TVD of a model equal to its own conditional; the mean of {@link FLOOR_DRAWS} such samples,
 *    seeds `seed + 1...`, when TRAIN has fewer than 1,000 rows with the condition) and `ratio_above_floor` =
 *    (conditional - floor) / (unconditional - floor), for information: against the 35-odd TRAIN rows
 *    of a rare combination most of the TVD is sampling noise; the model's own conditional by
 *    rejection (a plain draw of {@link REJECTION_POOL_ROWS} rows filtered by the condition, at most
 *    `--rows` of them, scored the same way when at least {@link MIN_REJECTION_ROWS} rows pass): the seeded draw should score
 *    as it does, so what separates both from TRAIN is the model's error, not the sampler's; rows returned, rows violating the
 *    condition (must be 0), seconds. A condition with TRAIN support that errors or returns fewer rows
 *    than asked is a failure.
 * 4. Imputation (acceptance 3, part `impute`): each HOLDOUT cell is blanked with probability
 *    `--blank` (default 0.2; stream `deriveSeed(seed, 12, 3)`), `synth.impute(table, { seed })` fills
 *    the blanks (the SDK path of `synthd impute`). Per categorical column (the model's kinds): the
 *    share of blanked cells whose imputed value equals the true one, beside two baselines from
 *    TRAIN's 1-way marginal p: a draw from the marginal (its expected accuracy, the mean of
 *    p(true value) over the blanked cells: exact, no draw noise) and the most frequent TRAIN value.
 *    Pass when imputation beats the marginal draw on every categorical column. Non-blank cells must
 *    come back unchanged (`kept_changed`, must be 0).
 * 5. Speed (acceptance 4, part `speed`): `--speed-rows` rows (default 100,000, one request) over
 *    HTTP through the SDK (decode included): the plain draw (`calibrate: false`), a one-column
 *    condition (`sex = Female`) and a five-column condition (`sex = Female, race = White,
 *    workclass = Private, age in [30, 50], income = >50K`), drawn from the model's own conditional
 *    (`calibrate: false`, like for like with the plain draw). Each of `--reps` repetitions (default
 *    2) runs, for each condition, a plain draw and right after it the seeded draw. `ratio` = best
 *    seeded rows/s over best plain rows/s; `paired_ratio_median` = median of seeded / the plain run
 *    just before it. Targets: >= 0.5 (one column), >= 0.2 (five columns). Also measured, for
 *    information, the SDK's defaults: the calibrated seeded draw against the calibrated
 *    unconditioned draw (`calibrated_ratio`, best over best) and against the plain draw.
 * `--parts fidelity,impute,speed` (default: all) chooses the parts. Prints a table, or one JSON line
 * with `--json`; `--out FILE` also writes the JSON to FILE.
 */
import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { median } from "simple-statistics";
import { Synthd, Synthesizer, writeTableCsv, Rng, deriveSeed, type ColumnKind, type Model, type ModelConfigInput, type Table, type ValueRange, type Where, type WhereRange } from "../src/sdk";
import { evaluate, type EvaluationReport } from "../src/sdk/evaluate";
import { inRange } from "../src/sdk/columns/common";
import { loadRows, logger, modelSummary, parseObject, split, waitLogged } from "./fidelity";
import { TVD_OPTIONS } from "./tables";
import { ADULT_CSV, removeDir, runCli, startServer, tempDir } from "./harness";

/** Options of the seeded benchmark (commander's parsed flags). */
export interface SeededOptions {
  json: boolean;
  /** Also write the JSON result to this file. */
  out?: string;
  /** max_epochs of the model (default 100, the server's default). */
  epochs: number;
  /** Model config as JSON, over `{max_epochs: epochs}`. */
  config?: string;
  /** Seeds the split, the samples, the blanks and the imputation. */
  seed: number;
  /** Rows per conditioned (and unconditional) sample of the fidelity part. */
  rows: number;
  /** The rare combination as a `where` JSON. */
  rare?: string;
  /** Share of HOLDOUT's cells blanked. */
  blank: number;
  /** Rows per request of the speed part. */
  speedRows: number;
  /** Repetitions of the speed part. */
  reps: number;
  /** Comma-separated parts: fidelity, impute, speed. */
  parts?: string;
}

/** Target of the fidelity ratio (conditional TVD over unconditional TVD). */
export const FIDELITY_TARGET = 0.5;
/** Speed targets: seeded rows/s over the plain draw's, by number of conditioned columns. */
export const SPEED_TARGETS = { one: 0.5, five: 0.2 } as const;
/** Draws averaged for the finite-sample floor of a condition with fewer than 1,000 TRAIN rows. */
export const FLOOR_DRAWS = 10;
/** Rows of the plain draw filtered by each condition for the rejection reference. */
export const REJECTION_POOL_ROWS = 200_000;
/** Fewest filtered rows for which the rejection reference is scored. */
export const MIN_REJECTION_ROWS = 1000;
/** Rare combinations must have a TRAIN frequency under this. */
export const RARE_MAX_FREQUENCY = 0.002;

/**
 * The default rare combination (52 TRAIN rows, 0.1996%): chosen without a model by
 * `node dist/bench/rare-combinations.js` as the combination of two or three categorical values
 * with TRAIN frequency in [0.1%, 0.2%) whose rows differ most from all TRAIN rows (largest sum
 * of the free columns' 1-way and 2-way TVD): a combination whose rows look like everyone's does
 * not test a conditional.
 */
export const DEFAULT_RARE: Where = { workclass: "Self-emp-inc", education: "Prof-school", "native-country": "United-States" };

/**
 * A second rare combination, printed for information and not counted in the pass (35 TRAIN
 * rows, 0.13%): against so few rows even a second draw of the model's own conditional scores
 * above half of the unconditional TVD (its finite-sample floor is printed).
 */
export const INFO_RARE: Where = { sex: "Female", race: "Asian-Pac-Islander", income: ">50K" };

/** The conditions of the fidelity part (the rare one is added from `--rare`). */
export const FIDELITY_CONDITIONS: { name: string; where: Where }[] = [
  { name: "sex=Female", where: { sex: "Female" } },
  { name: "age in [60, 90]", where: { age: { gte: 60, lte: 90 } } },
  { name: "income=>50K", where: { income: ">50K" } },
];

/** The conditions of the speed part. */
export const SPEED_CONDITIONS: { name: string; columns: 1 | 5; where: Where }[] = [
  { name: "sex=Female", columns: 1, where: { sex: "Female" } },
  {
    name: "sex=Female, race=White, workclass=Private, age in [30, 50], income=>50K",
    columns: 5,
    where: { sex: "Female", race: "White", workclass: "Private", age: { gte: 30, lte: 50 }, income: ">50K" },
  },
];

/** TVDs of one table against the conditioned TRAIN rows (free columns only). */
export interface Tvd12 {
  "1": number;
  "2": number;
}

/** One condition of the fidelity part. */
export interface FidelityCondition {
  name: string;
  where: Where;
  rare: boolean;
  /** False for {@link INFO_RARE}: printed, not counted in the pass. */
  counted: boolean;
  free_columns: string[];
  train_rows: number;
  train_frequency: number;
  holdout_rows: number;
  /** Rows asked for and returned; rows breaking the condition (must be 0). */
  asked: number;
  returned: number;
  violations: number;
  seconds: number;
  /** Set when the sample failed (an error, or fewer rows than asked). */
  error?: string;
  tvd: { conditional: Tvd12 | null; unconditional: Tvd12; unconditional_plain: Tvd12; holdout: Tvd12 | null; floor: Tvd12 | null; rejection: Tvd12 | null };
  /** Rows of the rejection reference (the plain draw's rows satisfying the condition; 0: too few to score). */
  rejection_rows: number;
  /** conditional / unconditional (calibrated, the SDK's default sample). */
  ratio: Tvd12 | null;
  /** conditional / unconditional plain draw. */
  ratio_plain: Tvd12 | null;
  /** (conditional - floor) / (unconditional - floor): the ratio with the finite-sample floor taken off (information only). */
  ratio_above_floor: Tvd12 | null;
  pass: boolean;
}

/** One categorical column of the imputation part. */
export interface ImputeColumn {
  column: string;
  blanked: number;
  accuracy: number;
  marginal_draw: number;
  most_frequent: number;
  most_frequent_value: string;
  pass: boolean;
}

/** One condition of the speed part. */
export interface SpeedCondition {
  name: string;
  columns: number;
  where: Where;
  train_frequency: number;
  rows_per_s: number;
  ratio: number;
  paired_ratio_median: number;
  runs: { plain_rows_per_s: number; seeded_rows_per_s: number }[];
  target: number;
  pass: boolean;
  /** The SDK's default (calibrated) seeded draw: best rows/s, and over the best calibrated unconditioned draw. */
  calibrated_rows_per_s: number;
  calibrated_ratio: number;
}

/** The JSON line the benchmark prints. */
export interface SeededResult {
  bench: "seeded";
  data: string;
  seed: number;
  rows: { train: number; holdout: number };
  model: Pick<Model, "id" | "status" | "current_epoch" | "train_loss" | "val_loss">;
  config: Model["config"];
  fit_seconds: number;
  fidelity?: {
    rows: number;
    target: number;
    tvd_options: typeof TVD_OPTIONS;
    conditions: FidelityCondition[];
    /** Conditions with TRAIN support that returned no rows or fewer than asked. */
    failures: string[];
    pass: boolean;
  };
  impute?: {
    blank: number;
    cells: number;
    blanked: number;
    seconds: number;
    rows_per_s: number;
    kept_changed: number;
    columns: ImputeColumn[];
    pass: boolean;
  };
  speed?: {
    rows: number;
    reps: number;
    plain_rows_per_s: number;
    /** Best rows/s of the SDK's default unconditioned (calibrated) draw. */
    calibrated_rows_per_s: number;
    conditions: SpeedCondition[];
    loadavg_before: number[];
    loadavg_after: number[];
    pass: boolean;
  };
  seconds: number;
}

type Part = "fidelity" | "impute" | "speed";
const PARTS: Part[] = ["fidelity", "impute", "speed"];

function parseParts(s: string | undefined): Part[] {
  if (s === undefined) return PARTS;
  const parts = s.split(",").map((x) => x.trim()) as Part[];
  for (const p of parts) if (!PARTS.includes(p)) throw new Error(`unknown part ${JSON.stringify(p)}; parts: ${PARTS.join(", ")}`);
  return parts;
}

function isRange(v: unknown): v is WhereRange {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/**
 * A row predicate for a `where` on the table's text cells: values compare as text (trimmed),
 * ranges as numbers (`inRange` of the SDK's decoder, inclusive/exclusive as written). Only numeric
 * ranges (Adult has no datetimes).
 * @throws Error when `where` names a column the table lacks.
 */
export function wherePredicate(columns: readonly string[], where: Where): (row: readonly string[]) => boolean {
  const tests = Object.entries(where).map(([col, cond]) => {
    const c = columns.indexOf(col);
    if (c < 0) throw new Error(`condition names column ${JSON.stringify(col)}, which the table lacks`);
    if (isRange(cond)) {
      const num = (x: number | string | undefined): number | undefined => (x === undefined ? undefined : Number(x));
      const range: ValueRange = {
        lo: num(cond.gte ?? cond.gt),
        loOpen: cond.gt !== undefined,
        hi: num(cond.lte ?? cond.lt),
        hiOpen: cond.lt !== undefined,
      };
      return (row: readonly string[]): boolean => {
        const t = row[c].trim();
        return t !== "" && Number.isFinite(Number(t)) && inRange(Number(t), range);
      };
    }
    const allowed = new Set((Array.isArray(cond) ? cond : [cond]).map((v) => String(v)));
    return (row: readonly string[]): boolean => allowed.has(row[c].trim());
  });
  return (row) => tests.every((t) => t(row));
}

/** The table's rows satisfying `where`, with only `keep`'s columns. */
function project(table: Table, keep: readonly string[], pred?: (row: readonly string[]) => boolean): Table {
  const idx = keep.map((c) => table.columns.indexOf(c));
  const rows: string[][] = [];
  for (const r of table.rows) if (!pred || pred(r)) rows.push(idx.map((i) => r[i]));
  return { columns: [...keep], rows };
}

function tvd12(r: EvaluationReport): Tvd12 {
  return { "1": r.tvd["1"], "2": r.tvd["2"] };
}

function ratio(a: Tvd12, b: Tvd12): Tvd12 {
  return { "1": a["1"] / b["1"], "2": a["2"] / b["2"] };
}

/** Runs the benchmark and prints its result. */
export async function seededBench(opts: SeededOptions): Promise<void> {
  const t0 = Date.now();
  const parts = parseParts(opts.parts);
  const seed = opts.seed;
  const config: ModelConfigInput = { max_epochs: opts.epochs, ...(opts.config ? (parseObject(opts.config, "--config") as ModelConfigInput) : {}) };
  const rare: Where = opts.rare ? (parseObject(opts.rare, "--rare") as Where) : DEFAULT_RARE;
  if (!(opts.blank > 0 && opts.blank < 1)) throw new Error("--blank must be in (0, 1)");
  if (!(Number.isInteger(opts.rows) && opts.rows >= 1)) throw new Error("--rows must be a positive integer");
  if (!(Number.isInteger(opts.speedRows) && opts.speedRows >= 1)) throw new Error("--speed-rows must be a positive integer");
  if (!(Number.isInteger(opts.reps) && opts.reps >= 1)) throw new Error("--reps must be a positive integer");
  const log = logger(opts.json);
  const dir = tempDir("synthd-seeded-");
  const store = join(dir, "store");
  try {
    const { train, holdout } = split(await loadRows(ADULT_CSV), seed);
    const trainPath = join(dir, "train.csv");
    await writeTableCsv(train, trainPath);
    log(`split ${ADULT_CSV}: TRAIN ${train.rows.length} rows, HOLDOUT ${holdout.rows.length} rows (seed ${seed})`);

    const server = await startServer(store);
    try {
      // One live org with a quota the run cannot reach (the sandbox has 100,000 rows a month).
      const org = "seeded-bench";
      const key = await runCli(["keys", "create", "--data-dir", store, "--org", org, "--env", "live"]);
      if (key.code !== 0) throw new Error(`keys create failed: ${key.stderr}`);
      const quota = await runCli(["orgs", "set", "--data-dir", store, "--org", org, "--live-quota", String(1_000_000_000)]);
      if (quota.code !== 0) throw new Error(`orgs set failed: ${quota.stderr}`);
      const client = new Synthd({ apiKey: key.stdout.trim().split("\n").pop()!, baseUrl: server.url });

      const synth = await Synthesizer.fit(client, trainPath, { config, wait: false });
      await waitLogged(synth, log);
      const m = synth.model;
      const { model, fitSeconds } = modelSummary(m);
      log(`ready after ${m.current_epoch} epochs, ${fitSeconds.toFixed(1)} s`);

      const result: SeededResult = {
        bench: "seeded",
        data: ADULT_CSV,
        seed,
        rows: { train: train.rows.length, holdout: holdout.rows.length },
        model,
        config: m.config,
        fit_seconds: fitSeconds,
        seconds: 0,
      };
      const run: PartContext = { synth, train, holdout, opts, log };
      if (parts.includes("fidelity")) result.fidelity = await fidelityPart(run, rare);
      if (parts.includes("impute")) result.impute = await imputePart(run);
      if (parts.includes("speed")) result.speed = await speedPart(run);
      result.seconds = (Date.now() - t0) / 1000;
      const json = JSON.stringify(result);
      if (opts.out !== undefined) writeFileSync(resolve(opts.out), `${json}\n`);
      if (opts.json) console.log(json);
      else console.log(formatSeeded(result));
    } finally {
      await server.kill("SIGTERM");
    }
  } finally {
    removeDir(dir);
  }
}

/** The model's kind of each column. */
function kindsOf(synth: Synthesizer): Record<string, ColumnKind> {
  const out: Record<string, ColumnKind> = {};
  for (const f of synth.metadata.features) out[f] = synth.metadata.column_stats?.[f]?.type ?? "categorical";
  return out;
}

/** What every part of the benchmark works on: the fitted model, the split, the flags and the log. */
interface PartContext {
  synth: Synthesizer;
  train: Table;
  holdout: Table;
  opts: SeededOptions;
  log: (s: string) => void;
}

async function fidelityPart({ synth, train, holdout, opts, log }: PartContext, rare: Where): Promise<NonNullable<SeededResult["fidelity"]>> {
  const n = opts.rows;
  const seed = opts.seed;
  const kinds = kindsOf(synth);
  log(`fidelity: unconditional samples of ${n} rows (calibrated, plain)`);
  const uncond = await synth.sample(n, { seed });
  const uncondPlain = await synth.sample(n, { seed, calibrate: false });
  // The model's own conditional by rejection: a large plain draw filtered by each condition (the
  // reference the seeded draw should match; what is left to TRAIN is the model's error, not the sampler's).
  const rejectionPool = await synth.sample(REJECTION_POOL_ROWS, { seed: seed + 100, calibrate: false });
  const conditions = [
    ...FIDELITY_CONDITIONS.map((c) => ({ ...c, rare: false, counted: true })),
    { name: `rare: ${JSON.stringify(rare)}`, where: rare, rare: true, counted: true },
    { name: `info: ${JSON.stringify(INFO_RARE)}`, where: INFO_RARE, rare: true, counted: false },
  ];
  const out: FidelityCondition[] = [];
  const failures: string[] = [];
  for (const c of conditions) {
    const pred = wherePredicate(train.columns, c.where);
    const conditioned = new Set(Object.keys(c.where));
    const free = train.columns.filter((col) => !conditioned.has(col));
    const realSub = project(train, free, pred);
    const holdSub = project(holdout, free, pred);
    const freq = realSub.rows.length / train.rows.length;
    if (c.rare && freq >= RARE_MAX_FREQUENCY) log(`  warning: the rare combination has TRAIN frequency ${(100 * freq).toFixed(3)}%, not under ${100 * RARE_MAX_FREQUENCY}%`);
    const evalOpts = { ...TVD_OPTIONS, columns: Object.fromEntries(free.map((col) => [col, { type: kinds[col] }])) };
    const ts = Date.now();
    let sample: Table | undefined;
    let error: string | undefined;
    try {
      sample = await synth.sample(n, { where: c.where, seed });
      if (sample.rows.length !== n) error = `returned ${sample.rows.length} of ${n} rows`;
    } catch (e) {
      error = `${(e as Error).name}: ${(e as Error).message}`;
    }
    const seconds = (Date.now() - ts) / 1000;
    const fc: FidelityCondition = {
      name: c.name,
      where: c.where,
      rare: c.rare,
      counted: c.counted,
      free_columns: free,
      train_rows: realSub.rows.length,
      train_frequency: freq,
      holdout_rows: holdSub.rows.length,
      asked: n,
      returned: sample?.rows.length ?? 0,
      violations: sample ? sample.rows.filter((r) => !pred(r)).length : 0,
      seconds,
      ...(error !== undefined ? { error } : {}),
      tvd: { conditional: null, unconditional: { "1": NaN, "2": NaN }, unconditional_plain: { "1": NaN, "2": NaN }, holdout: null, floor: null, rejection: null },
      rejection_rows: 0,
      ratio: null,
      ratio_plain: null,
      ratio_above_floor: null,
      pass: false,
    };
    if (error !== undefined && realSub.rows.length > 0) failures.push(`${c.name}: ${error}`);
    if (realSub.rows.length === 0) {
      log(`  ${c.name}: no TRAIN rows satisfy it; no TVD`);
      out.push(fc);
      continue;
    }
    fc.tvd.unconditional = tvd12(await evaluate(realSub, project(uncond, free), evalOpts));
    fc.tvd.unconditional_plain = tvd12(await evaluate(realSub, project(uncondPlain, free), evalOpts));
    if (holdSub.rows.length > 0) fc.tvd.holdout = tvd12(await evaluate(realSub, holdSub, evalOpts));
    const rejected = project(rejectionPool, free, pred);
    rejected.rows.length = Math.min(rejected.rows.length, n); // the seeded sample's size, so both carry the same noise
    if (rejected.rows.length >= MIN_REJECTION_ROWS) {
      fc.rejection_rows = rejected.rows.length;
      fc.tvd.rejection = tvd12(await evaluate(realSub, rejected, evalOpts));
    }
    if (sample && sample.rows.length > 0) {
      const sampleFree = project(sample, free);
      const cond = tvd12(await evaluate(realSub, sampleFree, evalOpts));
      fc.tvd.conditional = cond;
      fc.ratio = ratio(cond, fc.tvd.unconditional);
      fc.ratio_plain = ratio(cond, fc.tvd.unconditional_plain);
      // The floor: a second conditioned sample (seed + 1) of as many rows as TRAIN has with the
      // condition, in the place of TRAIN's rows, against the same conditioned sample: what a model
      // equal to its own conditional scores at that size (against a small subset, mostly noise).
      // Averaged over FLOOR_DRAWS samples when the subset is small (the floor is itself noisy there).
      const draws = realSub.rows.length < 1000 ? FLOOR_DRAWS : 1;
      const floor: Tvd12 = { "1": 0, "2": 0 };
      for (let d = 0; d < draws; d++) {
        const floorSample = await synth.sample(realSub.rows.length, { where: c.where, seed: seed + 1 + d });
        const t = tvd12(await evaluate(project(floorSample, free), sampleFree, evalOpts));
        floor["1"] += t["1"] / draws;
        floor["2"] += t["2"] / draws;
      }
      fc.tvd.floor = floor;
      fc.ratio_above_floor = ratio({ "1": cond["1"] - floor["1"], "2": cond["2"] - floor["2"] }, { "1": fc.tvd.unconditional["1"] - floor["1"], "2": fc.tvd.unconditional["2"] - floor["2"] });
      fc.pass = error === undefined && fc.violations === 0 && fc.ratio["1"] <= FIDELITY_TARGET && fc.ratio["2"] <= FIDELITY_TARGET;
    }
    log(
      `  ${c.name}: TRAIN ${fc.train_rows} rows (${(100 * freq).toFixed(3)}%), ${fc.returned} rows in ${seconds.toFixed(1)} s, ` +
        `ratio 1-way ${fc.ratio ? fc.ratio["1"].toFixed(3) : "-"}, 2-way ${fc.ratio ? fc.ratio["2"].toFixed(3) : "-"}${error ? `; ERROR ${error}` : ""}`,
    );
    out.push(fc);
  }
  return {
    rows: n,
    target: FIDELITY_TARGET,
    tvd_options: TVD_OPTIONS,
    conditions: out,
    failures,
    pass: failures.length === 0 && out.every((c) => !c.counted || c.train_rows === 0 || c.pass),
  };
}

async function imputePart({ synth, train, holdout, opts, log }: PartContext): Promise<NonNullable<SeededResult["impute"]>> {
  const rng = new Rng(deriveSeed(opts.seed, 12, 3));
  const columns = holdout.columns;
  const blanked: boolean[][] = holdout.rows.map((r) => r.map(() => rng.next() < opts.blank));
  const seedTable: Table = { columns: [...columns], rows: holdout.rows.map((r, i) => r.map((v, c) => (blanked[i][c] ? "" : v))) };
  let nBlank = 0;
  for (const b of blanked) for (const x of b) if (x) nBlank++;
  const cells = holdout.rows.length * columns.length;
  log(`impute: ${nBlank} of ${cells} HOLDOUT cells blanked (${((100 * nBlank) / cells).toFixed(1)}%); imputing ${holdout.rows.length} rows`);
  const ts = Date.now();
  const imputed = await synth.impute(seedTable, { seed: opts.seed });
  const seconds = (Date.now() - ts) / 1000;
  if (imputed.rows.length !== holdout.rows.length) throw new Error(`impute returned ${imputed.rows.length} of ${holdout.rows.length} rows`);
  const outIdx = columns.map((c) => imputed.columns.indexOf(c));
  let keptChanged = 0;
  holdout.rows.forEach((r, i) => {
    r.forEach((v, c) => {
      if (!blanked[i][c] && imputed.rows[i][outIdx[c]] !== v) keptChanged++;
    });
  });
  const kinds = kindsOf(synth);
  const res: ImputeColumn[] = [];
  columns.forEach((col, c) => {
    if (kinds[col] !== "categorical") return;
    const counts = new Map<string, number>();
    for (const r of train.rows) counts.set(r[c], (counts.get(r[c]) ?? 0) + 1);
    let mode = "";
    let modeCount = -1;
    for (const [v, k] of counts) if (k > modeCount) [mode, modeCount] = [v, k];
    let k = 0;
    let hit = 0;
    let marginal = 0;
    let modeHit = 0;
    holdout.rows.forEach((r, i) => {
      if (!blanked[i][c]) return;
      const truth = r[c];
      k++;
      if (imputed.rows[i][outIdx[c]] === truth) hit++;
      marginal += (counts.get(truth) ?? 0) / train.rows.length;
      if (truth === mode) modeHit++;
    });
    const acc = k ? hit / k : NaN;
    const md = k ? marginal / k : NaN;
    res.push({ column: col, blanked: k, accuracy: acc, marginal_draw: md, most_frequent: k ? modeHit / k : NaN, most_frequent_value: mode, pass: k > 0 && acc > md });
  });
  log(`  imputed in ${seconds.toFixed(1)} s`);
  return {
    blank: opts.blank,
    cells,
    blanked: nBlank,
    seconds,
    rows_per_s: holdout.rows.length / seconds,
    kept_changed: keptChanged,
    columns: res,
    pass: keptChanged === 0 && res.length > 0 && res.every((r) => r.pass),
  };
}

async function speedPart({ synth, train, opts, log }: PartContext): Promise<NonNullable<SeededResult["speed"]>> {
  const n = opts.speedRows;
  const loadBefore = loadavg();
  const timed = async (where: Where | undefined, seed: number, calibrate = false): Promise<number> => {
    const ts = performance.now();
    const t = await synth.sample(n, { seed, calibrate, ...(where ? { where } : {}) });
    const s = (performance.now() - ts) / 1000;
    if (t.rows.length !== n) throw new Error(`got ${t.rows.length} of ${n} rows`);
    return n / s;
  };
  log(`speed: ${n} rows per request, ${opts.reps} repetitions; warm-up`);
  await timed(undefined, opts.seed + 999);
  let plainBest = 0;
  let calibratedBest = 0;
  const calibratedSeeded = new Map<string, number>();
  const runs = new Map<string, { plain_rows_per_s: number; seeded_rows_per_s: number }[]>();
  for (let rep = 0; rep < opts.reps; rep++) {
    for (const c of SPEED_CONDITIONS) {
      // Each seeded run right after a plain run: their ratio is one paired measurement.
      const plain = await timed(undefined, opts.seed + 100 + rep);
      plainBest = Math.max(plainBest, plain);
      const seeded = await timed(c.where, opts.seed + 100 + rep);
      runs.set(c.name, [...(runs.get(c.name) ?? []), { plain_rows_per_s: Math.round(plain), seeded_rows_per_s: Math.round(seeded) }]);
      const calibrated = await timed(undefined, opts.seed + 200 + rep, true);
      calibratedBest = Math.max(calibratedBest, calibrated);
      const calibratedSeed = await timed(c.where, opts.seed + 200 + rep, true);
      calibratedSeeded.set(c.name, Math.max(calibratedSeeded.get(c.name) ?? 0, calibratedSeed));
      log(
        `  rep ${rep}: plain ${Math.round(plain)} rows/s, [${c.columns} col] ${c.name}: ${Math.round(seeded)} rows/s; ` +
          `calibrated: unconditioned ${Math.round(calibrated)}, seeded ${Math.round(calibratedSeed)} rows/s`,
      );
    }
  }
  const conditions = SPEED_CONDITIONS.map((c): SpeedCondition => {
    const r = runs.get(c.name)!;
    const best = Math.max(...r.map((x) => x.seeded_rows_per_s));
    const target = c.columns === 1 ? SPEED_TARGETS.one : SPEED_TARGETS.five;
    const pred = wherePredicate(train.columns, c.where);
    const ratioBest = best / plainBest;
    return {
      name: c.name,
      columns: c.columns,
      where: c.where,
      train_frequency: train.rows.filter(pred).length / train.rows.length,
      rows_per_s: best,
      ratio: ratioBest,
      paired_ratio_median: median(r.map((x) => x.seeded_rows_per_s / x.plain_rows_per_s)),
      runs: r,
      target,
      pass: ratioBest >= target,
      calibrated_rows_per_s: Math.round(calibratedSeeded.get(c.name)!),
      calibrated_ratio: calibratedSeeded.get(c.name)! / calibratedBest,
    };
  });
  return {
    rows: n,
    reps: opts.reps,
    plain_rows_per_s: Math.round(plainBest),
    calibrated_rows_per_s: Math.round(calibratedBest),
    conditions,
    loadavg_before: loadBefore.map((x) => Number(x.toFixed(2))),
    loadavg_after: loadavg().map((x) => Number(x.toFixed(2))),
    pass: conditions.every((c) => c.pass),
  };
}

/** The human-readable report of a {@link SeededResult}. */
export function formatSeeded(r: SeededResult): string {
  const f = (x: number | undefined | null, d = 4): string => (x === undefined || x === null || Number.isNaN(x) ? "-" : x.toFixed(d));
  const pf = (ok: boolean): string => (ok ? "PASS" : "FAIL");
  const lines = [
    `seeded generation on UCI Adult (${r.data}): TRAIN ${r.rows.train}, HOLDOUT ${r.rows.holdout}, seed ${r.seed}`,
    `model ${r.model.id}: ${r.model.status} after ${r.model.current_epoch} epochs (val_loss ${r.model.val_loss}), fit ${r.fit_seconds.toFixed(1)} s, config ${JSON.stringify(r.config)}`,
  ];
  if (r.fidelity) {
    const fd = r.fidelity;
    lines.push(
      "",
      `acceptance 2, fidelity: ${fd.rows} rows per sample; free columns' average TVD against TRAIN's rows with the condition; ratio = conditional / unconditional (calibrated), target <= ${fd.target}`,
      `${"condition".padEnd(58)} ${"TRAIN".padStart(6)} ${"freq %".padStart(7)} ${"rows".padStart(6)} ${"viol".padStart(4)}  ` +
        `${"cond 1w".padStart(7)} ${"unc 1w".padStart(7)} ${"plain".padStart(7)} ${"hold".padStart(7)} ${"ratio".padStart(6)}  ` +
        `${"cond 2w".padStart(7)} ${"unc 2w".padStart(7)} ${"plain".padStart(7)} ${"hold".padStart(7)} ${"ratio".padStart(6)}`,
    );
    for (const c of fd.conditions) {
      const t = c.tvd;
      lines.push(
        `${c.name.slice(0, 58).padEnd(58)} ${String(c.train_rows).padStart(6)} ${(100 * c.train_frequency).toFixed(3).padStart(7)} ${String(c.returned).padStart(6)} ${String(c.violations).padStart(4)}  ` +
          `${f(t.conditional?.["1"]).padStart(7)} ${f(t.unconditional["1"]).padStart(7)} ${f(t.unconditional_plain["1"]).padStart(7)} ${f(t.holdout?.["1"]).padStart(7)} ${f(c.ratio?.["1"], 3).padStart(6)}  ` +
          `${f(t.conditional?.["2"]).padStart(7)} ${f(t.unconditional["2"]).padStart(7)} ${f(t.unconditional_plain["2"]).padStart(7)} ${f(t.holdout?.["2"]).padStart(7)} ${f(c.ratio?.["2"], 3).padStart(6)}  ${c.counted ? pf(c.pass) : `(${pf(c.pass)}, not counted)`}` +
          (c.error ? `  ERROR ${c.error}` : ""),
      );
    }
    lines.push(
      `  (cond: the conditioned sample; unc: the SDK's default unconditional sample; plain: the unconditional plain draw; hold: HOLDOUT's rows with the condition, the noise floor)`,
      `  ratio against the plain draw (1-way / 2-way): ${fd.conditions.map((c) => `${c.name.slice(0, 24)} ${f(c.ratio_plain?.["1"], 3)} / ${f(c.ratio_plain?.["2"], 3)}`).join("; ")}`,
      `  finite-sample floor at TRAIN's subset size (another conditioned sample of that size in place of TRAIN's rows), 1-way / 2-way, and (cond - floor) / (unc - floor):`,
      ...fd.conditions.map((c) => `    ${c.name.slice(0, 58).padEnd(58)} floor ${f(c.tvd.floor?.["1"])} / ${f(c.tvd.floor?.["2"])}, ratio above floor ${f(c.ratio_above_floor?.["1"], 3)} / ${f(c.ratio_above_floor?.["2"], 3)}`),
      `  the model's own conditional by rejection (a plain draw of ${REJECTION_POOL_ROWS} rows filtered by the condition, its first ${fd.rows} rows; scored from ${MIN_REJECTION_ROWS} rows), 1-way / 2-way against TRAIN, beside cond:`,
      ...fd.conditions.map((c) =>
        `    ${c.name.slice(0, 58).padEnd(58)} ${c.tvd.rejection ? `rejection (${c.rejection_rows} rows) ${f(c.tvd.rejection["1"])} / ${f(c.tvd.rejection["2"])}, cond ${f(c.tvd.conditional?.["1"])} / ${f(c.tvd.conditional?.["2"])}` : "too rare for a rejection reference"}`,
      ),
      fd.failures.length ? `  conditions with TRAIN support that failed: ${fd.failures.join("; ")}` : "  every condition with TRAIN support returned its rows",
      `  fidelity: ${pf(fd.pass)}`,
    );
  }
  if (r.impute) {
    const im = r.impute;
    lines.push(
      "",
      `acceptance 3, imputation: ${im.blanked} of ${im.cells} HOLDOUT cells blanked (${f((100 * im.blanked) / im.cells, 1)}%), imputed in ${f(im.seconds, 1)} s (${Math.round(im.rows_per_s)} rows/s); kept cells changed: ${im.kept_changed}`,
      `${"column".padEnd(16)} ${"blanked".padStart(7)} ${"imputed".padStart(8)} ${"marginal".padStart(8)} ${"mode".padStart(8)}  mode value`,
    );
    for (const c of im.columns) {
      lines.push(
        `${c.column.padEnd(16)} ${String(c.blanked).padStart(7)} ${f(c.accuracy).padStart(8)} ${f(c.marginal_draw).padStart(8)} ${f(c.most_frequent).padStart(8)}  ${c.most_frequent_value.padEnd(20)} ${pf(c.pass)}`,
      );
    }
    lines.push(`  (accuracy on the blanked categorical cells; marginal: expected accuracy of a draw from TRAIN's 1-way marginal; mode: TRAIN's most frequent value)`, `  imputation: ${pf(im.pass)}`);
  }
  if (r.speed) {
    const sp = r.speed;
    lines.push("", `acceptance 4, speed over HTTP (SDK, decode included): ${sp.rows} rows per request, plain draw ${sp.plain_rows_per_s} rows/s (best of ${sp.reps * sp.conditions.length})`);
    for (const c of sp.conditions) {
      lines.push(
        `  [${c.columns} col] ${c.name} (TRAIN ${(100 * c.train_frequency).toFixed(2)}%): ${c.rows_per_s} rows/s, ratio ${f(c.ratio, 3)} (paired median ${f(c.paired_ratio_median, 3)}), target >= ${c.target}  ${pf(c.pass)}`,
      );
    }
    lines.push(`  the SDK's defaults (calibrated), for information: unconditioned ${sp.calibrated_rows_per_s} rows/s (${f(sp.calibrated_rows_per_s / sp.plain_rows_per_s, 3)} of the plain draw)`);
    for (const c of sp.conditions) {
      lines.push(
        `    [${c.columns} col] ${c.name.slice(0, 40)}: ${c.calibrated_rows_per_s} rows/s, ${f(c.calibrated_ratio, 3)} of the calibrated unconditioned draw, ${f(c.calibrated_rows_per_s / sp.plain_rows_per_s, 3)} of the plain draw`,
      );
    }
    lines.push(`  load average before ${sp.loadavg_before.join(" ")}, after ${sp.loadavg_after.join(" ")}`, `  speed: ${pf(sp.pass)}`);
  }
  lines.push("", `total ${r.seconds.toFixed(0)} s`);
  return lines.join("\n");
}
