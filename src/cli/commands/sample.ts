/** `synthd sample` and `synthd impute`: a model's rows as CSV, Parquet or Arrow,. */
import { randomBytes } from "node:crypto";
import { renameSync, rmSync } from "node:fs";
import type { Writable } from "node:stream";
import { FILTER_MAX_DRAWN, FILTER_MIN_DRAWN_ROWS, KEY_MAX_DRAWN, KEY_TOP_UP_ROUNDS, Synthesizer } from "../../sdk/generate/synthesizer";
import type { SampleProgress } from "../../sdk/generate/options";
import { formatOfPath, type OutputFormat } from "../../sdk/io/format-names";
import { isPostgresUrl } from "../../sdk/io/inputs";
import type { Where } from "../../sdk/generate/seeded-request";
import { progressBar } from "../progress";
import { checkOutputPath, client, readJsonArg, type ClientOptions } from "./shared";
import { filterDir, loadFilter } from "./near-copy-store";

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
  /** `--where JSON|FILE`: only rows satisfying this condition (`{"sex": "Female"}`). */
  where?: string;
  /** `--seed-data FILE.csv`: one row per seed row, its non-blank cells kept, blanks generated. */
  seedData?: string;
  /** `--format csv|parquet|arrow`: instead of the format `-o`'s extension names. */
  format?: OutputFormat;
  /** `--real FILE.csv`: the fitted table; rows nearly copying one of its rows are dropped. */
  real?: string;
  /** `--no-filter` sets false: keep near-copies (no stored filter, no `--real`). Default true. */
  filter?: boolean;
}

/**
 * The format `sample` and `impute` write: `--format`, else the one `-o`'s extension names
 * (`.parquet`, `.pq`; `.arrow`, `.feather`, `.ipc`; `.csv`), else CSV. Parquet and Arrow may go to
 * stdout (written front to back, no seeking) but not to a terminal, where they would garble it.
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

/** `--where JSON|FILE`: inline JSON or a JSON file's path. @throws Error for no JSON object. */
export function parseWhere(arg: string | undefined): Where | undefined {
  if (arg === undefined) return undefined;
  const v = readJsonArg("--where", arg);
  if (v === null || typeof v !== "object" || Array.isArray(v)) {
    throw new Error('--where must be a JSON object: {"sex": "Female", "age": {"gte": 60}}.');
  }
  return v as Where;
}

/**
 * `synthd sample ID -n N [--where JSON]`: generates in batches of at most 100,000 rows, decodes and
 * writes them with the original column names ({@link outputFormat}; one row group or record batch
 * per generated batch: docs/formats.md). `--seed-data FILE.csv`: one row per seed row (batches of
 * at most 2,000), non-blank cells kept byte for byte, blanks generated. With `-o` the file is
 * written whole or not at all; bad conditions, seed files and formats fail before any request.
 * Near-copies are filtered by default (stored filter or `--real FILE`); `--no-filter` keeps them.
 */
export async function sampleCommand(id: string, opts: SampleCommandOptions & { scale?: number; schema?: string; rows?: string[] }): Promise<void> {
  // A database (`synthd fit DIR`); its module is loaded only then.
  if (id.startsWith("db_")) return (require("./database") as typeof import("./database")).databaseSampleCommand(id, opts);
  if (opts.scale !== undefined || opts.rows !== undefined) throw new Error("--scale and --rows apply to a database (synthd sample db_... -o DIR); give -n N for a model's rows.");
  if (opts.schema !== undefined || (opts.output !== undefined && isPostgresUrl(opts.output))) {
    throw new Error("-o postgres://... and --schema write a database (db_... from synthd fit DIR or a postgres:// URI); a model's rows go to a file.");
  }
  if (opts.seedData !== undefined) {
    if (opts.numRows !== undefined) throw new Error("-n cannot be combined with --seed-data: the output has one row per seed row.");
    if (opts.where !== undefined) throw new Error("--where cannot be combined with --seed-data: put the condition in the seed file's cells.");
    if (opts.real !== undefined) throw new Error("--real cannot be combined with --seed-data: a seeded row keeps its seed row's cells, so it is not filtered.");
    if (opts.filter === false) throw new Error("--no-filter cannot be combined with --seed-data: seeded rows are never filtered.");
    return seededCommand(id, opts.seedData, opts);
  }
  if (opts.numRows === undefined) throw new Error("give -n N (rows to generate) or --seed-data FILE.csv.");
  if (opts.real !== undefined && opts.filter === false) throw new Error("--real and --no-filter contradict each other: --real builds the near-copy filter, --no-filter turns it off.");
  const where = parseWhere(opts.where);
  const format = outputFormat(opts);
  checkOutputPath(opts.output);
  const api = client(opts);
  const synth = await Synthesizer.fromModel(api, id);
  await useFilter(synth, id, opts);
  const sampleOpts = {
    ...common(opts),
    ...(where !== undefined ? { where } : {}),
  };
  const numRows = opts.numRows;
  await writeOutput(opts.output, (dest, onProgress) => synth.writeFile(dest, numRows, { ...sampleOpts, format, onProgress }));
}

/**
 * Sets `synth`'s near-copy filter and says which on stderr: from `--real`, else the one
 * `synthd fit` stored here (`./near-copy-store`), else none; `--no-filter`: none.
 * @throws Error for a stored filter that cannot be read or whose columns the model lacks.
 */
async function useFilter(synth: Synthesizer, id: string, opts: SampleCommandOptions): Promise<void> {
  const say = (line: string): boolean => process.stderr.write(`near-copy filter: ${line}\n`);
  if (opts.filter === false) {
    say("off (--no-filter)");
    return;
  }
  if (opts.real !== undefined) {
    const built = await synth.useNearCopyFilter(opts.real);
    say(built.filter ? `on, from ${opts.real}: ${built.filter.describe()}` : `off (${built.reason})`);
    const note = built.filter?.sampleNote();
    if (note) say(note);
    return;
  }
  if (synth.isPrivate()) {
    say("off (differentially private model: its rows depend on the real ones only through the noisy marginals)");
    return;
  }
  const dir = filterDir();
  const stored = loadFilter(dir, id);
  if (stored === undefined) {
    say(`off (no filter for ${id} in ${dir}: synthd fit keeps it on the machine that fitted; give --real FILE to build one here)`);
  } else if ("none" in stored) {
    say(`off (${stored.none})`);
  } else {
    const missing = stored.filter.columns.filter((c) => !synth.columns.includes(c));
    if (missing.length > 0) throw new Error(`${stored.path} does not belong to model ${id}: it compares column "${missing[0]}", which the model lacks; remove it, or sample with --real FILE.`);
    synth.nearCopyFilter = stored.filter;
    say(`on (${stored.path}): ${stored.filter.describe()}`);
    const note = stored.filter.sampleNote();
    if (note) say(note);
  }
}

/** Options of `synthd impute`. */
export type ImputeCommandOptions = Omit<SampleCommandOptions, "numRows" | "where" | "seedData">;

/**
 * `synthd impute ID FILE.csv [-o OUT] [--format F]`: fills FILE.csv's blank cells from the model
 * (as `sample --seed-data`): one row per input row, non-blank cells kept (Parquet and Arrow: parsed
 * to the column's type, failing before any request), columns in the model's order.
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
 * (removed on failure), with a progress bar on stderr for files from the first batch.
 */
async function writeOutput(
  output: string | undefined,
  write: (dest: string | Writable, onProgress: (p: SampleProgress) => void) => Promise<number>,
): Promise<void> {
  let unfiltered = 0;
  let unkeyed = 0;
  if (output === undefined) {
    await write(process.stdout, (p) => void ((unfiltered = p.unfiltered ?? 0), (unkeyed = p.unkeyed ?? 0)));
    sayUnfiltered(unfiltered, unkeyed);
    return;
  }
  const bar = progressBar("sampling |{bar}| {value}/{total} rows");
  let started = false;
  const onProgress = (p: SampleProgress): void => {
    unfiltered = p.unfiltered ?? 0;
    unkeyed = p.unkeyed ?? 0;
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
  sayUnfiltered(unfiltered, unkeyed);
}

/**
 * Warns on stderr when the near-copy filter or the table's keys stopped being checked before the
 * last row (`SampleProgress.unfiltered`, `unkeyed`).
 */
function sayUnfiltered(unfiltered: number, unkeyed: number): void {
  if (unkeyed > 0) {
    process.stderr.write(
      `unique keys: ${unkeyed} rows were written unchecked and may repeat a key: checking stops after drawing ${KEY_MAX_DRAWN} times the rows asked for or ${KEY_TOP_UP_ROUNDS} extra batches; a sample cannot hold more rows than the table's key has values\n`,
    );
  }
  if (unfiltered === 0) return;
  process.stderr.write(
    `near-copy filter: ${unfiltered} rows were written unchecked: it stops after drawing ${FILTER_MAX_DRAWN} times the rows asked for (at least ${FILTER_MIN_DRAWN_ROWS} rows), and this table's rows are too alike to keep near-copies at the stated share\n`,
  );
}
