/**
 * The CLI commands that talk to a running server through the SDK (DESIGN §1): `fit`, `sample`,
 * `models ls|get|rm`, plus `evaluate`, which works on two local CSV files.
 *
 * Data goes to stdout (a model id, CSV rows, tables, JSON); progress bars and messages go to
 * stderr, so `ID=$(synthd fit data.csv)` and `synthd sample ID -n 10 > out.csv` work.
 * `sample` and `impute` write CSV, Parquet or Arrow (`--format`, else `-o`'s extension; see
 * {@link outputFormat}).
 */
import { randomBytes } from "node:crypto";
import { accessSync, constants as fsConstants, existsSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname } from "node:path";
import type { Writable } from "node:stream";
import { Synthd } from "../sdk/client/client";
import { nodeFetch } from "../sdk/client/node-fetch";
import { InvalidRequestError } from "../sdk/errors";
import { Synthesizer } from "../sdk/generate/synthesizer";
import { SMALL_TABLE_ROWS, defaultBinCap, defaultRareThreshold } from "../sdk/generate/fit-defaults";
import type { SampleProgress } from "../sdk/generate/options";
import { formatOfPath, type OutputFormat } from "../sdk/io/format-names";
import { nearCopyVerdict } from "../sdk/privacy/near-copies";
import type { EvaluationReport } from "../sdk/evaluate";
import type { Where } from "../sdk/generate/seeded";
import type { Metadata, Model, ModelConfigInput } from "../types";
import { DEFAULTS, type ColumnOverride } from "../sdk/metadata/metadata";
import { describeColumns } from "../sdk/columns";

/** The bins per numerical column of a table of 160 rows or more. */
const DEFAULT_BIN_CAP: number = DEFAULTS.binCap;
import { describeRule } from "../sdk/rules/describe";
import type { RuleOptions } from "../sdk/rules/detect";
import { fmtLoss, progressBar } from "./progress";

/** `../sdk/evaluate` (the marginals, TSTR and privacy checks), loaded when `evaluate` runs. */
function sdkEvaluate(): typeof import("../sdk/evaluate") {
  return require("../sdk/evaluate");
}

/** `--url` and `--key` (or SYNTHD_URL / SYNTHD_API_KEY). */
export interface ClientOptions {
  url: string;
  key?: string;
}

function client(opts: ClientOptions): Synthd {
  if (!opts.key) {
    throw new Error("no API key: pass --key or set SYNTHD_API_KEY (synthd serve prints a sandbox key on first start).");
  }
  // node:http rather than Node's fetch, whose first call costs about 0.2 core-s (../sdk/node-fetch).
  return new Synthd({ apiKey: opts.key, baseUrl: opts.url, fetch: nodeFetch });
}

/** Every field of Create Model's `config` (checked complete against {@link ModelConfigInput} at compile time). */
const CONFIG_FIELDS = Object.keys({
  model_size: true,
  embedding_dim: true,
  batch_size: true,
  learning_rate: true,
  max_epochs: true,
  max_training_time: true,
  early_stop_patience: true,
  privacy_enabled: true,
  privacy_noise: true,
  device: true,
} satisfies Record<keyof ModelConfigInput, true>);

/** Levenshtein distance of two short strings (for "did you mean" hints). */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length];
}

/** ` (did you mean "x"?)` for the nearest of `known` within a third of `name`'s length (at least 2 edits), else "". */
export function didYouMean(name: string, known: readonly string[]): string {
  let best: string | undefined;
  let bestD = Math.max(2, Math.floor(name.length / 3)) + 1;
  for (const k of known) {
    const d = editDistance(name.toLowerCase(), k.toLowerCase());
    if (d < bestD) [best, bestD] = [k, d];
  }
  return best === undefined ? "" : ` (did you mean "${best}"?)`;
}

/**
 * `--config JSON`: a JSON object whose fields are Create Model's config fields.
 * @throws Error naming the flag, e.g. `--config.max_epoch is not a training setting (did you mean "max_epochs"?)`,
 *   before anything is read or sent.
 */
export function parseConfig(json: string | undefined): ModelConfigInput | undefined {
  if (json === undefined) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch (e) {
    throw new Error(`--config is not valid JSON (${(e as Error).message}).`);
  }
  if (v === null || typeof v !== "object" || Array.isArray(v)) throw new Error("--config must be a JSON object.");
  for (const k of Object.keys(v)) {
    if (!CONFIG_FIELDS.includes(k)) {
      throw new Error(`--config.${k} is not a training setting${didYouMean(k, CONFIG_FIELDS)}; the settings are ${CONFIG_FIELDS.join(", ")}.`);
    }
  }
  return v as ModelConfigInput;
}

/**
 * The value of a `JSON|FILE` option: `arg` parsed as JSON when it starts with `{` or `[`, else
 * the contents of the file it names, parsed as JSON.
 * @throws Error naming `flag` and the file: missing, unreadable, or not JSON.
 */
function readJsonArg(flag: string, arg: string): unknown {
  const inline = /^\s*[{[]/.test(arg);
  let text = arg;
  if (!inline) {
    if (!existsSync(arg)) throw new Error(`${flag}: no file named ${arg} (give a JSON file or inline JSON starting with "{").`);
    try {
      text = readFileSync(arg, "utf8");
    } catch (e) {
      throw new Error(`${flag}: cannot read ${arg} (${(e as Error).message}).`);
    }
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(inline ? `${flag} is not valid JSON (${(e as Error).message}).` : `${flag}: ${arg} is not valid JSON (${(e as Error).message}).`);
  }
}

/**
 * Checks that `-o FILE` can be written before any request: its directory exists and is writable,
 * and FILE is not a directory (the rows would be generated and charged, then lost).
 * @throws Error naming the path.
 */
export function checkOutputPath(output: string | undefined): void {
  if (output === undefined) return;
  const dir = dirname(output);
  let st;
  try {
    st = statSync(dir);
  } catch {
    throw new Error(`-o ${output}: the directory ${dir} does not exist.`);
  }
  if (!st.isDirectory()) throw new Error(`-o ${output}: ${dir} is not a directory.`);
  try {
    accessSync(dir, fsConstants.W_OK);
  } catch {
    throw new Error(`-o ${output}: the directory ${dir} is not writable.`);
  }
  if (existsSync(output) && statSync(output).isDirectory()) throw new Error(`-o ${output} is a directory; give a file name.`);
}

/**
 * `--columns JSON|FILE`: the column overrides, inline JSON or the path of a JSON file.
 * @throws Error when neither parses to an object of `{type, format?, semantic?}` objects.
 */
export function parseColumns(arg: string | undefined): Record<string, ColumnOverride> | undefined {
  if (arg === undefined) return undefined;
  const v = readJsonArg("--columns", arg);
  if (v === null || typeof v !== "object" || Array.isArray(v)) throw new Error('--columns must be a JSON object: {"column": {"type": "datetime"}}.');
  for (const [name, o] of Object.entries(v as Record<string, unknown>)) {
    const ok =
      o !== null &&
      typeof o === "object" &&
      typeof (o as ColumnOverride).type === "string" &&
      ((o as ColumnOverride).format === undefined || typeof (o as ColumnOverride).format === "string") &&
      ((o as ColumnOverride).semantic === undefined || typeof (o as ColumnOverride).semantic === "string") &&
      Object.keys(o).every((k) => k === "type" || k === "format" || k === "semantic");
    if (!ok) throw new Error(`--columns: the entry for "${name}" must be {"type": ..., "format"?: ..., "semantic"?: ...}.`);
  }
  return v as Record<string, ColumnOverride>;
}

/**
 * `--rules JSON|FILE`: the `rules` option (`{detect?, drop?, declare?}`), inline JSON or the path of
 * a JSON file. The declared rules' fields are checked by the SDK against the table.
 * @throws Error when neither parses to such an object.
 */
export function parseRules(arg: string | undefined): RuleOptions | undefined {
  if (arg === undefined) return undefined;
  const v = readJsonArg("--rules", arg) as Record<string, unknown>;
  const ok =
    v !== null &&
    typeof v === "object" &&
    !Array.isArray(v) &&
    Object.keys(v).every((k) => k === "detect" || k === "drop" || k === "declare") &&
    (v.detect === undefined || typeof v.detect === "boolean") &&
    (v.drop === undefined || (Array.isArray(v.drop) && v.drop.every((x) => typeof x === "string"))) &&
    (v.declare === undefined || (Array.isArray(v.declare) && v.declare.every((x) => x !== null && typeof x === "object")));
  if (!ok) throw new Error('--rules must be a JSON object {"detect"?: bool, "drop"?: [rule ids], "declare"?: [rules]}, e.g. {"drop": ["inequality:end,start"]}.');
  return v as RuleOptions;
}

/** Options of `synthd fit`. */
export interface FitCommandOptions extends ClientOptions {
  config?: string;
  wait: boolean;
  pairBudget?: number;
  /** `--columns JSON|FILE`: kinds instead of the inferred ones. */
  columns?: string;
  /** `--rare-threshold K`. */
  rareThreshold?: number;
  /** `--domain FILE`: the CSV holds integer codes with this domain (JSON `{column: K}`). */
  domain?: string;
  /** `--epsilon E [--delta D]`: differentially private marginals (needs `--domain`). */
  epsilon?: number;
  delta?: number;
  /** `--delimiter C`: the CSV's field delimiter (default: detected). */
  delimiter?: string;
  /** `--encoding LABEL`: the CSV's text encoding (default UTF-8). */
  encoding?: string;
  /** `--rules JSON|FILE`: row rules to drop or declare, or `{"detect": false}`. */
  rules?: string;
}

/**
 * `synthd fit FILE.csv`: extracts metadata, prints one line per column on stderr (name, kind,
 * codes, and what the kind keeps: format, range, decimals, pooled values, identifier shape), then
 * the row rules under `rules (N)`, one line each (`describeRule`),
 * creates the model and, unless `--no-wait`, shows a
 * progress bar (epoch, train_loss, val_loss) on stderr until the model is ready. The model id is
 * printed alone as stdout's last line.
 */
export async function fitCommand(file: string, opts: FitCommandOptions): Promise<void> {
  const config = parseConfig(opts.config);
  const columns = parseColumns(opts.columns);
  const rules = parseRules(opts.rules);
  if (opts.delta !== undefined && opts.epsilon === undefined) throw new Error("--delta needs --epsilon.");
  if (opts.epsilon !== undefined && opts.domain === undefined) {
    throw new Error("--epsilon needs --domain: without a public domain the code book (categories, bin edges) comes from the rows and would be sent without noise.");
  }
  if (opts.delta !== undefined && !(opts.delta > 0 && opts.delta < 1)) throw new Error("--delta must be in (0, 1).");
  const api = client(opts);
  // The key and the server first: a wrong key or URL fails at once, not after scanning the file.
  await api.models.list({ limit: 1 });
  const bar = progressBar("training |{bar}| epoch {value}/{total} | train_loss {train_loss} | val_loss {val_loss} | {status}");
  let started = false;
  const onProgress = (m: Model): void => {
    const payload = { train_loss: fmtLoss(m.train_loss), val_loss: fmtLoss(m.val_loss), status: m.status };
    if (!started) {
      process.stderr.write(`model ${m.id} created; training on ${m.config.device}\n`);
      bar.start(m.config.max_epochs, m.current_epoch, payload);
      started = true;
    } else {
      bar.update(m.current_epoch, payload);
    }
  };
  let synth: Synthesizer;
  let tableRows = 0;
  try {
    synth = await Synthesizer.fit(api, file, {
      config,
      wait: opts.wait,
      nearCopyFilter: false, // the process ends here; `synthd sample --real` builds it
      onProgress,
      ...(opts.pairBudget !== undefined ? { pairBudget: opts.pairBudget } : {}),
      ...(columns !== undefined ? { columns } : {}),
      ...(opts.rareThreshold !== undefined ? { rareThreshold: opts.rareThreshold } : {}),
      ...(opts.delimiter !== undefined ? { delimiter: opts.delimiter } : {}),
      ...(opts.encoding !== undefined ? { encoding: opts.encoding } : {}),
      ...(rules !== undefined ? { rules } : {}),
      onAnalysis: (a) => {
        process.stderr.write(describeColumns(a.codecs).join("\n") + "\n");
        const found = a.metadata.rules ?? [];
        if (found.length > 0) process.stderr.write(`rules (${found.length})\n${found.map((r) => `  ${describeRule(r, a.metadata)}`).join("\n")}\n`);
      },
      onConfig: (c, chosen, rows) => {
        tableRows = rows;
        if (opts.rareThreshold === undefined && opts.domain === undefined && defaultRareThreshold(rows) !== DEFAULTS.rareThreshold) {
          process.stderr.write(`rare threshold: ${defaultRareThreshold(rows)} (chosen for ${rows} rows; --rare-threshold sets it)\n`);
        }
        if (opts.domain === undefined && defaultBinCap(rows) < DEFAULT_BIN_CAP) {
          process.stderr.write(`bins per numerical or datetime column: at most ${defaultBinCap(rows)} (chosen for ${rows} rows)\n`);
        }
        if (chosen.length === 0) return;
        const what = chosen.map((k) => `${k} ${c[k]}`).join(", ");
        process.stderr.write(`config: ${what} (chosen for ${rows} rows; --config sets ${chosen.length > 1 ? "them" : "it"})\n`);
      },
      ...(opts.domain !== undefined ? { domain: opts.domain } : {}),
      ...(opts.epsilon !== undefined
        ? { privacy: { epsilon: opts.epsilon, ...(opts.delta !== undefined ? { delta: opts.delta } : {}) } }
        : {}),
    });
  } catch (e) {
    throw flagOfConfigParam(e);
  } finally {
    if (started) bar.stop();
  }
  const m = synth.model;
  if (opts.wait) {
    process.stderr.write(
      `model ${m.id} ${m.status} after ${m.current_epoch} epochs (train_loss ${fmtLoss(m.train_loss)}, val_loss ${fmtLoss(m.val_loss)})\n`,
    );
  }
  if (tableRows > 0 && tableRows < SMALL_TABLE_ROWS) process.stderr.write(smallTableHint(file, m.id, tableRows) + "\n");
  process.stdout.write(`${m.id}\n`);
}

/**
 * The line `synthd fit` prints last on stderr for a table of fewer than {@link SMALL_TABLE_ROWS}
 * rows: on a small table one near-copy is one real person; `sample` has the model, not the rows,
 * so it filters near-copies only when given the real table (`--real`), and `evaluate` (or
 * `report`), which reads both tables, checks for them.
 */
export function smallTableHint(file: string, id: string, rows: number): string {
  return (
    `hint: ${rows} rows is a small table: sample with --real to drop near-copies of real rows, and check the sample before sharing it ` +
    `(synthd sample ${id} -n ${rows} --real ${file} -o synthetic.csv && synthd evaluate ${file} synthetic.csv)`
  );
}

/** A server's `parameter_invalid` on `body.config.X`, reworded to name the flag `--config.X`; other errors as they are. */
function flagOfConfigParam(e: unknown): unknown {
  if (!(e instanceof InvalidRequestError) || !e.param?.startsWith("body.config.")) return e;
  const field = e.param.slice("body.config.".length);
  const flag = `--config.${field}`;
  const msg = e.message.split(e.param).join(flag);
  return Object.assign(new Error(msg.includes(flag) ? msg : `${flag}: ${msg}`), { code: e.code });
}

/** Options of `synthd sample`. */
export interface SampleCommandOptions extends ClientOptions {
  /** `-n`: rows to generate (not with `--seed-data`, which gives one row per seed row). */
  numRows?: number;
  output?: string;
  seed?: number;
  temperature?: number;
  topP?: number;
  /** `--calibrate` / `--no-calibrate`; unset: the SDK's default. */
  calibrate?: boolean;
  /** `--where JSON|FILE`: only rows satisfying this condition (`{"sex": "Female", "age": {"gte": 60}}`). */
  where?: string;
  /** `--seed-data FILE.csv`: one row per seed row, its non-blank cells kept, blanks generated. */
  seedData?: string;
  /** `--format csv|parquet|arrow`: instead of the format `-o`'s extension names (commander checks the choice). */
  format?: OutputFormat;
  /** `--real FILE.csv`: the table the model was fitted on; rows nearly copying one of its rows are dropped (`Synthesizer.useNearCopyFilter`). */
  real?: string;
}

/**
 * The format `sample` and `impute` write: `--format` when given, else the one `-o`'s extension
 * names (`.parquet`, `.pq`; `.arrow`, `.feather`, `.ipc`; `.csv`), else CSV (other extensions,
 * and stdout without `-o`).
 *
 * Decision on stdout: Parquet and Arrow may go to stdout (`--format parquet > out.parquet`, or a
 * pipe): both are written front to back without seeking. They are refused when stdout is a
 * terminal, where the bytes would only garble the screen. Unlike `-o`, a failure part-way leaves
 * whatever was already written on stdout.
 * @throws Error (before any request) for a binary format to a terminal.
 */
export function outputFormat(opts: { output?: string; format?: OutputFormat }): OutputFormat {
  const format = opts.format ?? (opts.output !== undefined ? formatOfPath(opts.output) : undefined) ?? "csv";
  if (opts.output === undefined && format !== "csv" && process.stdout.isTTY) {
    const name = format === "parquet" ? "Parquet" : "Arrow";
    throw new Error(`${name} is binary and stdout is a terminal: give -o FILE.${format} or redirect stdout to a file.`);
  }
  return format;
}

/**
 * `--where JSON|FILE`: a condition, inline JSON or the path of a JSON file.
 * @throws Error when neither parses to a JSON object.
 */
export function parseWhere(arg: string | undefined): Where | undefined {
  if (arg === undefined) return undefined;
  const v = readJsonArg("--where", arg);
  if (v === null || typeof v !== "object" || Array.isArray(v)) {
    throw new Error('--where must be a JSON object: {"sex": "Female", "age": {"gte": 60}}.');
  }
  return v as Where;
}

/**
 * `synthd sample ID -n N [--where JSON]`: generates in batches of at most 100,000 rows (all
 * satisfying the condition, if given), decodes and writes the rows with the original column
 * names, as CSV, Parquet or Arrow ({@link outputFormat}; typed columns, one row group or record
 * batch per generated batch: docs/formats.md).
 * `synthd sample ID --seed-data FILE.csv`: one row per seed row (batches of at most 2,000 seed
 * rows), the seed's non-blank cells kept byte for byte and its blanks generated. With `-o`, the
 * file is written under a temporary name and renamed when complete, so a failure never leaves a
 * half-written file; bad conditions, seed files and formats fail before any request.
 */
export async function sampleCommand(id: string, opts: SampleCommandOptions): Promise<void> {
  if (opts.seedData !== undefined) {
    if (opts.numRows !== undefined) throw new Error("-n cannot be combined with --seed-data: the output has one row per seed row.");
    if (opts.where !== undefined) throw new Error("--where cannot be combined with --seed-data: put the condition in the seed file's cells.");
    if (opts.real !== undefined) throw new Error("--real cannot be combined with --seed-data: a seeded row keeps its seed row's cells, so it is not filtered.");
    return seededCommand(id, opts.seedData, opts);
  }
  if (opts.numRows === undefined) throw new Error("give -n N (rows to generate) or --seed-data FILE.csv.");
  const where = parseWhere(opts.where);
  const format = outputFormat(opts);
  checkOutputPath(opts.output);
  const api = client(opts);
  const synth = await Synthesizer.fromModel(api, id);
  if (opts.real !== undefined) {
    const built = await synth.useNearCopyFilter(opts.real);
    process.stderr.write(
      built.filter
        ? `near-copy filter: on (rows equal to a row of ${opts.real} on all columns but one are dropped and replaced)\n`
        : `near-copy filter: off (${built.reason})\n`,
    );
  }
  const sampleOpts = {
    ...common(opts),
    ...(where !== undefined ? { where } : {}),
  };
  const numRows = opts.numRows;
  await writeOutput(opts.output, (dest, onProgress) => synth.writeFile(dest, numRows, { ...sampleOpts, format, onProgress }));
}

/** Options of `synthd impute`. */
export type ImputeCommandOptions = Omit<SampleCommandOptions, "numRows" | "where" | "seedData">;

/**
 * `synthd impute ID FILE.csv [-o OUT.csv|OUT.parquet|OUT.arrow] [--format F]`: fills the blank
 * cells of FILE.csv from the model (the same as `synthd sample ID --seed-data FILE.csv`): one
 * output row per input row, non-blank cells kept byte for byte (in Parquet and Arrow: parsed to
 * the column's type; a kept cell the type cannot hold fails before any request), columns in the
 * model's order (columns the file lacks are generated).
 */
export async function imputeCommand(id: string, file: string, opts: ImputeCommandOptions): Promise<void> {
  return seededCommand(id, file, opts);
}

async function seededCommand(id: string, file: string, opts: ImputeCommandOptions): Promise<void> {
  const format = outputFormat(opts);
  checkOutputPath(opts.output);
  const api = client(opts);
  const synth = await Synthesizer.fromModel(api, id);
  await writeOutput(opts.output, (dest, onProgress) => synth.writeFile(dest, { ...common(opts), seedFile: file, format, onProgress }));
}

/** Seed, sampling and calibration options shared by `sample` and `impute`. */
function common(opts: ImputeCommandOptions): { seed?: number; temperature?: number; topP?: number; calibrate?: boolean } {
  return {
    ...(opts.calibrate !== undefined ? { calibrate: opts.calibrate } : {}),
    ...(opts.seed !== undefined ? { seed: opts.seed } : {}),
    ...(opts.temperature !== undefined ? { temperature: opts.temperature } : {}),
    ...(opts.topP !== undefined ? { topP: opts.topP } : {}),
  };
}

/**
 * Runs `write` to stdout (no `-o`) or to `output` through a temporary file renamed when complete
 * (removed on failure), with a progress bar on stderr for files (started at the first batch,
 * when the total is known).
 */
async function writeOutput(
  output: string | undefined,
  write: (dest: string | Writable, onProgress: (p: SampleProgress) => void) => Promise<number>,
): Promise<void> {
  if (output === undefined) {
    await write(process.stdout, () => undefined);
    return;
  }
  const bar = progressBar("sampling |{bar}| {value}/{total} rows");
  let started = false;
  const onProgress = (p: SampleProgress): void => {
    if (!started) {
      bar.start(p.rowsTotal, p.rowsDone);
      started = true;
    } else bar.update(p.rowsDone);
  };
  const tmp = `${output}.${randomBytes(4).toString("hex")}.partial`;
  let rows: number;
  try {
    rows = await write(tmp, onProgress);
    renameSync(tmp, output);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  } finally {
    if (started) bar.stop();
  }
  process.stderr.write(`wrote ${rows} rows to ${output}\n`);
}

function modelRow(m: Model): string[] {
  return [m.id, m.status, String(m.current_epoch), fmtLoss(m.train_loss), fmtLoss(m.val_loss), m.created_at];
}

function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r: string[]): string => r.map((c, i) => c.padEnd(widths[i])).join("  ").trimEnd();
  process.stdout.write([line(header), ...rows.map(line)].join("\n") + "\n");
}

/** How many of the newest models `models ls` describes by their metadata (one request each). */
export const MODELS_LS_DETAILED = 20;

/**
 * `synthd models ls`: every model of the key's organization and environment, newest first. The
 * {@link MODELS_LS_DETAILED} newest also show what they were fitted on, read from the metadata the
 * SDK sent (`metadata.source`: file name and rows; the number of columns): one
 * `GET /v1/models/{id}/metadata` each, four at a time and without retries, so a long list does not
 * spend the organization's rate limit; `-` where that is unknown (an older model, metadata without a
 * source, private metadata without a row count, or a request refused).
 */
export async function modelsListCommand(opts: ClientOptions): Promise<void> {
  const api = client(opts);
  const models: Model[] = [];
  for await (const m of api.models.list({ limit: 100 })) models.push(m);
  const details: string[][] = models.map(() => ["-", "-", "-"]);
  let next = 0;
  const describe = async (): Promise<void> => {
    for (let i = next++; i < Math.min(models.length, MODELS_LS_DETAILED); i = next++) {
      try {
        const md = await api.models.metadata(models[i].id, { maxRetries: 0 });
        details[i] = [md.source?.name ?? "-", md.source?.rows === undefined ? "-" : String(md.source.rows), String(md.features.length)];
      } catch {
        // Shown as unknown: the list itself is what the command promises.
      }
    }
  };
  await Promise.all([describe(), describe(), describe(), describe()]);
  const rows = models.map((m, i) => {
    const [id, ...rest] = modelRow(m);
    return [id, details[i][0], details[i][1], details[i][2], ...rest];
  });
  printTable(["ID", "SOURCE", "ROWS", "COLUMNS", "STATUS", "EPOCH", "TRAIN_LOSS", "VAL_LOSS", "CREATED_AT"], rows);
}

/** `synthd models get ID`: the model resource as JSON. */
export async function modelsGetCommand(id: string, opts: ClientOptions): Promise<void> {
  const m = await client(opts).models.retrieve(id);
  process.stdout.write(JSON.stringify(m, null, 2) + "\n");
}

/** `synthd models rm ID`: deletes the model (training stopped, checkpoints removed). */
export async function modelsRemoveCommand(id: string, opts: ClientOptions): Promise<void> {
  await client(opts).models.delete(id);
  process.stderr.write(`deleted ${id}\n`);
}

/** Options of `synthd evaluate`. */
export interface EvaluateCommandOptions {
  json: boolean;
  /** `--domain FILE`: both tables are discretized codes. */
  domain?: string;
  /** `--target COL`: TSTR target column. */
  target?: string;
  /** `--positive VALUE`: the target's positive value. */
  positive?: string;
  /** `--multiclass`: every class of the target, one-vs-rest macro ROC AUC. */
  multiclass?: boolean;
  /** `--holdout FILE`: real rows the model never saw (TSTR test set, privacy check). */
  holdout?: string;
  /** `--metadata JSON|FILE`: the model's metadata, whose row rules are checked on both tables. */
  metadata?: string;
  seed?: number;
}

/**
 * The value of `--metadata JSON|FILE`: a model's metadata (the JSON of
 * `GET /v1/models/{id}/metadata`), read for its row rules.
 * @throws Error naming the flag: missing or unreadable file, not JSON, not an object with a
 *   `features` array of names, or `rules` that is not an array.
 */
export function readMetadataArg(arg: string, flag = "--metadata"): Metadata {
  const v = readJsonArg(flag, arg) as Partial<Metadata> | null;
  if (v === null || typeof v !== "object" || Array.isArray(v) || !Array.isArray(v.features) || !v.features.every((f) => typeof f === "string")) {
    throw new Error(`${flag} must be a model's metadata: a JSON object with a "features" array of column names.`);
  }
  if (v.rules !== undefined && !Array.isArray(v.rules)) throw new Error(`${flag}: "rules" must be an array of rules.`);
  return v as Metadata;
}

/** Formats an {@link EvaluationReport} as the human-readable tables `synthd evaluate` prints. */
export function formatReport(r: EvaluationReport): string {
  const lines = [
    ...(r.near_copies ? [nearCopyVerdict(r.near_copies)] : []),
    `rows: real ${r.rows.real}, synthetic ${r.rows.synthetic}`,
    `average total variation distance (0 = identical marginals, 1 = disjoint):`,
    `  1-way ${r.tvd["1"].toFixed(4)}  (${r.marginals["1"]} marginals)`,
    `  2-way ${r.tvd["2"].toFixed(4)}  (${r.marginals["2"]} marginals)`,
    `  3-way ${r.tvd["3"].toFixed(4)}  (${r.marginals["3"]} marginals)`,
    "",
  ];
  const w = Math.max(6, ...r.columns.map((c) => c.column.length));
  lines.push(`${"column".padEnd(w)}  1-way TVD  mean 2-way TVD`);
  for (const c of r.columns) lines.push(`${c.column.padEnd(w)}  ${c.tvd1.toFixed(4).padStart(9)}  ${c.tvd2.toFixed(4).padStart(14)}`);
  if (r.excluded.length) lines.push(`left out of TVD (identifiers, see the checks): ${r.excluded.join(", ")}`);
  if (r.checks.length) {
    const pct = (x: number | undefined): string => (x === undefined ? "-" : `${(100 * x).toFixed(1)}%`);
    const header = ["column", "kind", "format", "parse", "in format", "in range", "precision", "known", "copies", "distinct", "shape", "blank real/synth"];
    const rows = r.checks.map((c) => [
      c.column,
      c.kind,
      c.format ?? "-",
      pct(c.parse),
      pct(c.in_format),
      pct(c.in_range),
      pct(c.precision),
      c.fresh !== undefined ? `fresh ${pct(c.fresh)}` : pct(c.known),
      pct(c.copies),
      pct(c.distinct),
      pct(c.shape),
      `${pct(c.blank_real)}/${pct(c.blank_synthetic)}`,
    ]);
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
    lines.push("", "checks (shares of the synthetic non-blank values; - = does not apply):");
    for (const row of [header, ...rows]) lines.push(row.map((v, i) => v.padEnd(widths[i])).join("  ").trimEnd());
  }
  if (r.worst_pairs.length) {
    const pw = Math.max(4, ...r.worst_pairs.map((p) => `${p.columns[0]} x ${p.columns[1]}`.length));
    lines.push("", `worst column pairs (largest 2-way TVD):`, `${"pair".padEnd(pw)}  2-way TVD`);
    for (const p of r.worst_pairs) lines.push(`${`${p.columns[0]} x ${p.columns[1]}`.padEnd(pw)}  ${p.tvd.toFixed(4).padStart(9)}`);
  }
  if (r.rules.length) {
    const pct = (x: number): string => `${(100 * x).toFixed(2)}%`;
    const header = ["rule", "real", "synthetic", ""];
    const rows = r.rules.map((x) => [x.label + (x.declared ? " (declared)" : ""), pct(x.real.share), pct(x.synthetic.share), x.synthetic.share < x.real.share ? "broken more often in synthetic rows" : ""]);
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
    lines.push("", "row rules (share of the rows each rule applies to that keep it):");
    for (const row of [header, ...rows]) lines.push(row.map((v, i) => (i === 1 || i === 2 ? v.padStart(widths[i]) : v.padEnd(widths[i]))).join("  ").trimEnd());
  }
  if (r.tstr?.classes && r.tstr_auc !== undefined) {
    lines.push(
      "",
      `TSTR: logistic regressions trained on the synthetic rows predict each class of ${r.tstr.target}, one against the rest, on the ${r.tstr.test} rows (${r.tstr.test_rows})`,
      `  macro ROC AUC ${r.tstr_auc.toFixed(4)}${r.tstr_auc_train !== undefined ? `  (trained on the real rows: ${r.tstr_auc_train.toFixed(4)})` : ""}`,
      ...r.tstr.classes.map((c) => `  ${c.value}: ROC AUC ${c.auc.toFixed(4)} (${c.test_rows} rows)`),
    );
  } else if (r.tstr && r.tstr_auc !== undefined) {
    lines.push(
      "",
      `TSTR: logistic regression trained on the synthetic rows predicts ${r.tstr.target} = ${r.tstr.positive} on the ${r.tstr.test} rows (${r.tstr.test_rows}, ${r.tstr.test_positives} positive)`,
      `  ROC AUC ${r.tstr_auc.toFixed(4)}${r.tstr_auc_train !== undefined ? `  (trained on the real rows: ${r.tstr_auc_train.toFixed(4)})` : ""}`,
    );
  }
  if (r.near_copies) {
    const c = r.near_copies;
    const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;
    lines.push(
      "",
      `near-copies (no holdout needed; ${c.columns.length} columns compared, identifiers left out):`,
      `  synthetic rows equal to a real row on all columns but at most one: ${c.synthetic_near_copies} (${pct(c.synthetic_share)})`,
      `  against half of the real rows: synthetic ${pct(c.synthetic_share_at_half)}, the other half ${pct(c.split_share)} (margin ${pct(c.near_copy_margin)}; ${c.splits} splits of ${c.half_rows[0]}/${c.half_rows[1]} rows)`,
      `  DCR share (closer to the real rows than the median real row): synthetic ${c.dcr_share.toFixed(3)}, the other half ${c.dcr_split_share.toFixed(3)} (margin ${c.dcr_margin.toFixed(3)})` +
        (c.dcr_in_verdict ? "" : "; not in the verdict below 200 rows per half"),
      `  ${nearCopyVerdict(c)}`,
    );
  }
  if (r.holdout_warning) lines.push("", `warning: ${r.holdout_warning}`);
  if (r.privacy) {
    const p = r.privacy;
    lines.push(
      "",
      `privacy (distance to closest record, ${p.sampled_rows} synthetic rows vs ${p.reference_rows} train and ${p.reference_rows} holdout rows):`,
      `  closer to train than to holdout: ${p.closer_to_train_share.toFixed(4)}  (about 0.5 when nothing is memorised)`,
      `  mean distance to train ${p.mean_dcr_train.toFixed(3)}, to holdout ${p.mean_dcr_holdout.toFixed(3)} (columns that differ)`,
      `  exact copies of train rows: ${p.exact_copies_train} synthetic (${(100 * p.exact_copies_train_rate).toFixed(2)}%; ${p.exact_copies_train_at_holdout_size} in as many rows as holdout), ` +
        `${p.exact_copies_holdout_baseline} holdout (${(100 * p.exact_copies_holdout_baseline_rate).toFixed(2)}%, the baseline)`,
    );
  }
  return lines.join("\n") + "\n";
}

/** `synthd evaluate REAL.csv SYNTH.csv [--json] [--domain FILE] [--target COL [--positive V]] [--holdout FILE]`. */
export async function evaluateCommand(real: string, synthetic: string, opts: EvaluateCommandOptions): Promise<void> {
  const { evaluate } = sdkEvaluate();
  const report = await evaluate(real, synthetic, {
    ...(opts.domain !== undefined ? { domain: opts.domain } : {}),
    ...(opts.target !== undefined ? { target: opts.target } : {}),
    ...(opts.positive !== undefined ? { positive: opts.positive } : {}),
    ...(opts.multiclass ? { multiclass: true } : {}),
    ...(opts.holdout !== undefined ? { holdout: opts.holdout } : {}),
    ...(opts.metadata !== undefined ? { metadata: readMetadataArg(opts.metadata) } : {}),
    ...(opts.seed !== undefined ? { seed: opts.seed } : {}),
  });
  process.stdout.write(opts.json ? JSON.stringify(report) + "\n" : formatReport(report));
}
