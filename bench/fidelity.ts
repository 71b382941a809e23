/**
 * `npm run bench -- fidelity [--json] [--epsilon E [--delta D]] [--config JSON] [--data discrete|raw]
 * [--seed S] [--calibrate | --no-calibrate]`:
 * the protocol of issue 5 ("Fidelity ahead of the peers") against the real server.
 *
 * Method:
 * 1. Data: `--data discrete` (default) is the shared discretized Adult (`adult-discrete.csv`,
 *    48,842 rows, 14 columns, with `adult-discrete-domain.json`), target `income>50K`;
 *    `--data raw` is UCI Adult as shipped (`data/adult.csv`, 32,561 rows, 15 columns, no
 *    domain), target `income` (acceptance 4).
 * 2. Split: a seeded Fisher–Yates shuffle (SDK `Rng`, `--seed`, default 0), TRAIN = the first
 *    floor(0.8 n) rows (39,073 for discretized Adult), HOLDOUT = the rest (9,769); both written as
 *    CSV to a temporary directory.
 * 3. Fit: one `synthd serve` child process on a fresh store (`bench/harness.ts`), the SDK's
 *    `Synthesizer.fit` on TRAIN (with the domain; with `privacy` under `--epsilon`, its noise seeded
 *    by `--seed` so runs repeat) and the default config unless `--config`. `fit_seconds` is the
 *    server's own time from creation to ready (`updated_at - created_at` of the ready model);
 *    `fit_wall_seconds` the client's, from the create request to seeing `ready` (250 ms polls),
 *    metadata extraction excluded.
 * 4. Sample as many rows as TRAIN has (`--seed`; calibrated generation unless `--no-calibrate` or
 *    `--epsilon`, as the SDK defaults), decode, evaluate against TRAIN with the domain: average 1/2/3-way TVD over all marginals (364 triples for discretized Adult), TSTR
 *    ROC AUC on HOLDOUT (and the same classifier trained on TRAIN), the DCR privacy check.
 * 5. Baselines in the same run: independent marginals (`independentSample` of TRAIN, same row
 *    count, full evaluation) and HOLDOUT itself against TRAIN (TVD: the sampling-noise floor at
 *    HOLDOUT's size); when calibrated, the plain draw of the same model and seed (full evaluation).
 * Prints one JSON line with `--json`, else a table.
 */
import { join } from "node:path";
import { Synthd, Synthesizer, readTable, writeTableCsv, Rng, type Model, type ModelConfigInput, type Table } from "../src/sdk";
import { evaluate, independentSample, type EvaluationReport } from "../src/sdk/evaluate";
import { ADULT_CSV, SHARED_DATASETS, removeDir, startServer, tempDir } from "./harness";

/** Options of the fidelity benchmark (commander's parsed flags). */
export interface FidelityOptions {
  json: boolean;
  /** Differential privacy: epsilon (> 0). */
  epsilon?: number;
  /** delta for `--epsilon` (default: the SDK's 1e-9). */
  delta?: number;
  /** Model config as JSON (default: the server's defaults). */
  config?: string;
  /** `discrete` (shared discretized Adult) or `raw` (data/adult.csv). */
  data: string;
  /** Seeds the split, the sampling, the evaluation and the privacy noise. */
  seed: number;
  /** `--calibrate` / `--no-calibrate`: calibrated generation; unset: the SDK's default. */
  calibrate?: boolean;
}

/** The JSON line the benchmark prints. */
export interface FidelityResult {
  bench: "fidelity";
  data: "discrete" | "raw";
  rows: { train: number; holdout: number; synthetic: number };
  tvd: EvaluationReport["tvd"];
  tstr_auc?: number;
  tstr_auc_train?: number;
  privacy?: EvaluationReport["privacy"];
  fit_seconds: number;
  fit_wall_seconds: number;
  model: Pick<Model, "id" | "status" | "current_epoch" | "train_loss" | "val_loss">;
  config: Model["config"];
  /** Whether the synthetic rows were drawn with calibration (`src/model/sampling/calibrate.ts`). */
  calibrate: boolean;
  epsilon: number | null;
  delta: number | null;
  /** With `--epsilon`: zCDP budget and noise scale as recorded in `column_stats`. */
  dp: { rho: number; sigma: number } | null;
  baseline: {
    independent: Pick<EvaluationReport, "tvd" | "tstr_auc" | "privacy">;
    holdout: Pick<EvaluationReport, "tvd">;
    /** When calibrated: the plain draw of the same model and seed, for comparison. */
    plain_draw?: Pick<EvaluationReport, "tvd" | "tstr_auc" | "privacy">;
  };
  seed: number;
}

interface Dataset {
  csv: string;
  domain?: string;
  target: string;
}

function dataset(which: string): Dataset {
  if (which === "discrete") {
    return {
      csv: join(SHARED_DATASETS, "adult-discrete.csv"),
      domain: join(SHARED_DATASETS, "adult-discrete-domain.json"),
      target: "income>50K",
    };
  }
  if (which === "raw") return { csv: ADULT_CSV, target: "income" };
  throw new Error(`--data must be "discrete" or "raw", got ${JSON.stringify(which)}`);
}

/** The whole CSV at `path` as a header and string rows. */
export async function loadRows(path: string): Promise<Table> {
  let columns: string[] = [];
  const rows: string[][] = [];
  await readTable(
    path,
    (h) => (columns = h),
    (r) => rows.push(r.slice()),
  );
  return { columns, rows };
}

/** TRAIN = first floor(0.8 n) rows of a seeded shuffle, HOLDOUT = the rest. */
export function split(table: Table, seed: number): { train: Table; holdout: Table } {
  const rows = table.rows.slice();
  const rng = new Rng(seed);
  for (let i = rows.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    const t = rows[i];
    rows[i] = rows[j];
    rows[j] = t;
  }
  const nTrain = Math.floor(0.8 * rows.length);
  return {
    train: { columns: table.columns, rows: rows.slice(0, nTrain) },
    holdout: { columns: table.columns, rows: rows.slice(nTrain) },
  };
}

/**
 * A flag's JSON object (`--config`, `--rare`, ...).
 * @throws SyntaxError for bad JSON; Error naming `flag` when it is not an object.
 */
export function parseObject(json: string, flag: string): Record<string, unknown> {
  const v = JSON.parse(json) as unknown;
  if (v === null || typeof v !== "object" || Array.isArray(v)) throw new Error(`${flag} must be a JSON object`);
  return v as Record<string, unknown>;
}

/** `--config JSON` of the benchmarks: a model config, or undefined (the server's defaults). @throws as {@link parseObject}. */
export function parseConfig(json: string | undefined): ModelConfigInput | undefined {
  return json === undefined ? undefined : (parseObject(json, "--config") as ModelConfigInput);
}

/** The benchmarks' progress log: lines on stderr, silent under `--json`. */
export function logger(json: boolean): (s: string) => void {
  return (s) => {
    if (!json) process.stderr.write(`${s}\n`);
  };
}

/**
 * Waits for a model created with `wait: false` (250 ms polls), logging each new epoch's losses and
 * the seconds since the call.
 * @returns the client's wall seconds from the call to seeing `ready`.
 * @throws the errors of `Synthesizer.waitUntilReady` (a failed model, a timeout).
 */
export async function waitLogged(synth: Synthesizer, log: (s: string) => void): Promise<number> {
  const t0 = Date.now();
  log(`model ${synth.id} created; training with ${JSON.stringify(synth.model.config)}`);
  let lastEpoch = -1;
  await synth.waitUntilReady({
    pollIntervalMs: 250,
    onProgress: (m) => {
      if (m.current_epoch !== lastEpoch) {
        lastEpoch = m.current_epoch;
        log(`  epoch ${m.current_epoch} train_loss ${m.train_loss} val_loss ${m.val_loss} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
      }
    },
  });
  return (Date.now() - t0) / 1000;
}

/** What the benchmarks report of a ready model: its training summary and the server's fit seconds (`updated_at - created_at`). */
export function modelSummary(m: Model): { model: Pick<Model, "id" | "status" | "current_epoch" | "train_loss" | "val_loss">; fitSeconds: number } {
  return {
    model: { id: m.id, status: m.status, current_epoch: m.current_epoch, train_loss: m.train_loss, val_loss: m.val_loss },
    fitSeconds: (Date.parse(m.updated_at) - Date.parse(m.created_at)) / 1000,
  };
}

/** Runs the benchmark and prints its result. */
export async function fidelityBench(opts: FidelityOptions): Promise<void> {
  const ds = dataset(opts.data);
  const config = parseConfig(opts.config);
  if (opts.epsilon !== undefined && !ds.domain) throw new Error("--epsilon needs a domain: use --data discrete");
  const seed = opts.seed;
  const dir = tempDir("synthd-fidelity-");
  const log = logger(opts.json);
  try {
    const { train, holdout } = split(await loadRows(ds.csv), seed);
    const trainPath = join(dir, "train.csv");
    const holdoutPath = join(dir, "holdout.csv");
    await writeTableCsv(train, trainPath);
    await writeTableCsv(holdout, holdoutPath);
    const n = train.rows.length;
    log(`split ${ds.csv}: TRAIN ${n} rows, HOLDOUT ${holdout.rows.length} rows (seed ${seed})`);

    const server = await startServer(join(dir, "store"));
    let fitted: Synthesizer;
    let fitWall: number;
    let synthetic: Table;
    let plainDraw: Table | undefined;
    let calibrate = false;
    try {
      const client = new Synthd({ apiKey: server.sandboxKey!, baseUrl: server.url });
      const privacy = opts.epsilon !== undefined ? { epsilon: opts.epsilon, ...(opts.delta !== undefined ? { delta: opts.delta } : {}), seed } : undefined;
      fitted = await Synthesizer.fit(client, trainPath, {
        ...(ds.domain ? { domain: ds.domain } : {}),
        ...(privacy ? { privacy } : {}),
        ...(config ? { config } : {}),
        wait: false,
      });
      fitWall = await waitLogged(fitted, log);
      calibrate = opts.calibrate ?? !fitted.isPrivate();
      synthetic = await fitted.sample(n, { seed, calibrate });
      // Two draws of 39,073 rows fit in the sandbox's 100,000 rows a month.
      if (calibrate) plainDraw = await fitted.sample(n, { seed, calibrate: false });
    } finally {
      await server.kill("SIGTERM");
    }
    const m = fitted.model;
    const { model, fitSeconds } = modelSummary(m);
    log(`ready after ${m.current_epoch} epochs, ${fitSeconds.toFixed(1)} s; evaluating`);

    const evalOpts = { ...(ds.domain ? { domain: ds.domain } : {}), target: ds.target, holdout: holdoutPath, seed };
    const report = await evaluate(trainPath, synthetic, evalOpts);
    const ind = await evaluate(trainPath, await independentSample(trainPath, n, seed, ds.domain ? { domain: ds.domain } : {}), evalOpts);
    const hold = await evaluate(trainPath, holdoutPath, ds.domain ? { domain: ds.domain } : {});
    const plain = plainDraw ? await evaluate(trainPath, plainDraw, evalOpts) : undefined;
    const rec = Object.values(fitted.metadata.column_stats ?? {})[0]?.privacy;

    const result: FidelityResult = {
      bench: "fidelity",
      data: opts.data as "discrete" | "raw",
      rows: { train: n, holdout: holdout.rows.length, synthetic: synthetic.rows.length },
      tvd: report.tvd,
      tstr_auc: report.tstr_auc,
      tstr_auc_train: report.tstr_auc_train,
      privacy: report.privacy,
      fit_seconds: fitSeconds,
      fit_wall_seconds: fitWall,
      model,
      config: m.config,
      calibrate,
      epsilon: opts.epsilon ?? null,
      delta: rec ? rec.delta : null,
      dp: rec ? { rho: rec.rho, sigma: rec.sigma } : null,
      baseline: {
        independent: { tvd: ind.tvd, tstr_auc: ind.tstr_auc, privacy: ind.privacy },
        holdout: { tvd: hold.tvd },
        ...(plain ? { plain_draw: { tvd: plain.tvd, tstr_auc: plain.tstr_auc, privacy: plain.privacy } } : {}),
      },
      seed,
    };
    if (opts.json) console.log(JSON.stringify(result));
    else console.log(formatFidelity(result));
  } finally {
    removeDir(dir);
  }
}

/** The human-readable table of a {@link FidelityResult}. */
export function formatFidelity(r: FidelityResult): string {
  const f = (x: number | undefined, d = 4): string => (x === undefined ? "-" : x.toFixed(d));
  const row = (name: string, t: EvaluationReport["tvd"], auc?: number, fit?: string): string =>
    `${name.padEnd(28)} ${f(t["1"]).padStart(9)} ${f(t["2"]).padStart(9)} ${f(t["3"]).padStart(9)} ${(fit ?? "-").padStart(9)} ${f(auc).padStart(9)}`;
  const title = `${r.epsilon === null ? "synthd (default config)" : `synthd, epsilon ${r.epsilon}`}${r.calibrate ? ", calibrated" : ""}`;
  const lines = [
    `fidelity on ${r.data === "discrete" ? "discretized" : "raw"} Adult: TRAIN ${r.rows.train}, HOLDOUT ${r.rows.holdout}, ${r.rows.synthetic} synthetic rows, seed ${r.seed}`,
    `${"model".padEnd(28)} ${"1-way".padStart(9)} ${"2-way".padStart(9)} ${"3-way".padStart(9)} ${"fit s".padStart(9)} ${"TSTR AUC".padStart(9)}`,
    row(title, r.tvd, r.tstr_auc, r.fit_seconds.toFixed(1)),
    ...(r.baseline.plain_draw ? [row("same model, plain draw", r.baseline.plain_draw.tvd, r.baseline.plain_draw.tstr_auc)] : []),
    row("independent marginals", r.baseline.independent.tvd, r.baseline.independent.tstr_auc),
    row("HOLDOUT rows (noise floor)", r.baseline.holdout.tvd),
    `TSTR AUC of the same classifier trained on TRAIN: ${f(r.tstr_auc_train)}`,
    `model ${r.model.id}: ${r.model.status} after ${r.model.current_epoch} epochs (val_loss ${r.model.val_loss}), config ${JSON.stringify(r.config)}`,
  ];
  if (r.dp) lines.push(`differential privacy: epsilon ${r.epsilon}, delta ${r.delta}, rho ${r.dp.rho.toPrecision(4)}, sigma ${r.dp.sigma.toFixed(2)}`);
  if (r.privacy) {
    const p = r.privacy;
    lines.push(
      `privacy: closer to TRAIN than HOLDOUT ${f(p.closer_to_train_share)} (target 0.45-0.55); exact copies of TRAIN rows: ` +
        `synthetic ${p.exact_copies_train} (${(100 * p.exact_copies_train_rate).toFixed(2)}%; ${p.exact_copies_train_at_holdout_size} in HOLDOUT's size), HOLDOUT ${p.exact_copies_holdout_baseline} (${(100 * p.exact_copies_holdout_baseline_rate).toFixed(2)}%)`,
    );
  }
  return lines.join("\n");
}
