/** `synthd fit FILE.csv`: metadata via the SDK, a model created and trained; its JSON options. */
import { existsSync, statSync } from "node:fs";
import { InvalidRequestError } from "../../sdk/errors";
import { Synthesizer } from "../../sdk/generate/synthesizer";
import { SMALL_TABLE_ROWS, defaultBinCap, defaultRareThreshold } from "../../sdk/generate/fit-defaults";
import type { Model, ModelConfigInput } from "../../contract";
import { DEFAULTS, type ColumnOverride } from "../../sdk/metadata/metadata";
import { describeColumns } from "../../sdk/columns";
import { describeRule } from "../../sdk/rules/describe";
import type { RuleOptions } from "../../sdk/rules/detect";
import { fmtLoss, progressBar, readingBar } from "../progress";
import { describeSource, type TableSource } from "../../sdk/io/csv";
import { checkInputFormat, isPostgresUrl, redactUrl } from "../../sdk/io/inputs";
import { client, readJsonArg, type ClientOptions } from "./shared";
import { filterDir, machineKey, saveFilter } from "./near-copy-store";

/** The bins per numerical column of a table of 160 rows or more. */
const DEFAULT_BIN_CAP: number = DEFAULTS.binCap;

/** Every field of Create Model's `config` (checked against {@link ModelConfigInput} statically). */
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

/** ` (did you mean "x"?)` for the nearest of `known` within a third of `name`'s length, else "". */
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
 * `--config JSON`: a JSON object of Create Model's config fields.
 * @throws Error naming the flag (`--config.max_epoch is not a training setting (did you mean
 *   "max_epochs"?)`), before anything is read or sent.
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

/** `--columns JSON|FILE`: overrides, inline or a file. @throws Error for no `{type}` objects. */
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
 * `--rules JSON|FILE`: the `rules` option (`{detect?, drop?, declare?}`), inline or a file; the SDK
 * checks declared rules against the table. @throws Error when neither parses to such an object.
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
  /** `--format NAME`: the file's input format instead of its extension's. */
  format?: string;
  /** `--table NAME`: a PostgreSQL source's table. */
  table?: string;
  /** `--query SQL`: a PostgreSQL source's SELECT. */
  query?: string;
  /** `--schema S`: a PostgreSQL database's schema (the database form, without --table/--query). */
  schema?: string;
}

/**
 * The table `synthd fit` reads: a PostgreSQL URI with `--table` or `--query`, a file in `--format`,
 * or a path (its format from its extension, `../../sdk/io/inputs`).
 * @throws Error naming the flags: a URI without either or with both, `--table`/`--query` with a
 *   file, `--format` with a URI.
 */
export function fitSource(file: string, opts: Pick<FitCommandOptions, "format" | "table" | "query">): TableSource {
  if (isPostgresUrl(file)) {
    if (opts.format !== undefined) throw new Error("--format is for files; a PostgreSQL source is read by its columns' types.");
    if ((opts.table === undefined) === (opts.query === undefined)) throw new Error(`${redactUrl(file)}: give --table or --query (one of them).`);
    return { url: file, ...(opts.table !== undefined ? { table: opts.table } : { query: opts.query }) };
  }
  if (opts.table !== undefined || opts.query !== undefined) throw new Error("--table and --query read a PostgreSQL database: give a postgres:// URI, not a file.");
  return opts.format !== undefined ? { path: file, format: checkInputFormat(opts.format) } : file;
}

/** True for an existing directory (`synthd fit DIR`: a database, `./database`). */
function isDirectory(path: string): boolean {
  return existsSync(path) && statSync(path).isDirectory();
}

/**
 * `synthd fit FILE.csv`: extracts metadata, prints one line per column and per row rule on stderr,
 * creates the model, stores the near-copy filter for `synthd sample` (`./near-copy-store`; not with
 * `--epsilon`) and, unless `--no-wait`, shows training progress until ready. The model id is
 * stdout's last line.
 */
export async function fitCommand(file: string, opts: FitCommandOptions): Promise<void> {
  const config = parseConfig(opts.config);
  // A directory, or a PostgreSQL URI without --table/--query: a whole database.
  if (isDirectory(file) || (isPostgresUrl(file) && opts.table === undefined && opts.query === undefined)) {
    return (require("./database") as typeof import("./database")).databaseFitCommand(file, opts, config);
  }
  if (opts.schema !== undefined) throw new Error("--schema reads a whole PostgreSQL schema: give a postgres:// URI without --table or --query (or --table SCHEMA.TABLE).");
  const columns = parseColumns(opts.columns);
  const rules = parseRules(opts.rules);
  if (opts.delta !== undefined && opts.epsilon === undefined) throw new Error("--delta needs --epsilon.");
  if (opts.epsilon !== undefined && opts.domain === undefined) {
    throw new Error("--epsilon needs --domain: without a public domain the code book (categories, bin edges) comes from the rows and would be sent without noise.");
  }
  if (opts.delta !== undefined && !(opts.delta > 0 && opts.delta < 1)) throw new Error("--delta must be in (0, 1).");
  const source = fitSource(file, opts);
  // Messages name a PostgreSQL URI without its password.
  const shown = isPostgresUrl(file) ? redactUrl(file) : file;
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
  const reading = process.stderr.isTTY ? readingBar(describeSource(source)) : undefined;
  let synth: Synthesizer;
  let tableRows = 0;
  // The near-copy filter stays here for `synthd sample` (./near-copy-store); not with DP.
  const filters = filterDir();
  const nearCopyKey = opts.epsilon === undefined ? machineKey(filters, true) : undefined;
  try {
    synth = await Synthesizer.fit(api, source, {
      config,
      wait: opts.wait,
      nearCopyFilter: nearCopyKey !== undefined,
      ...(nearCopyKey !== undefined ? { nearCopyKey } : {}),
      onNearCopyFilter: (built, model) => {
        let path: string | undefined;
        try {
          path = saveFilter(filters, model.id, built.filter, built.reason);
        } catch (e) {
          // The model exists and trains: say what failed rather than fail the fit.
          process.stderr.write(`near-copy filter: not kept (${(e as Error).message}); sample with --real ${shown} to filter\n`);
          return;
        }
        const f = built.filter;
        process.stderr.write(
          f && path
            ? `near-copy filter: kept on this machine for synthd sample (${path}, ${(f.bytes / 2 ** 20).toFixed(1)} MiB of keyed hashes, never sent): ${f.describe()}\n`
            : `near-copy filter: none (${built.reason})\n`,
        );
        const note = f?.sampleNote();
        if (note && path) process.stderr.write(`near-copy filter: ${note}\n`);
      },
      onProgress,
      ...(reading ? { onReadProgress: reading.update } : {}),
      ...(opts.pairBudget !== undefined ? { pairBudget: opts.pairBudget } : {}),
      ...(columns !== undefined ? { columns } : {}),
      ...(opts.rareThreshold !== undefined ? { rareThreshold: opts.rareThreshold } : {}),
      ...(opts.delimiter !== undefined ? { delimiter: opts.delimiter } : {}),
      ...(opts.encoding !== undefined ? { encoding: opts.encoding } : {}),
      ...(rules !== undefined ? { rules } : {}),
      onAnalysis: (a) => {
        reading?.stop();
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
    reading?.stop();
    if (started) bar.stop();
  }
  const m = synth.model;
  if (opts.wait) {
    process.stderr.write(
      `model ${m.id} ${m.status} after ${m.current_epoch} epochs (train_loss ${fmtLoss(m.train_loss)}, val_loss ${fmtLoss(m.val_loss)})\n`,
    );
  }
  if (tableRows > 0 && tableRows < SMALL_TABLE_ROWS) process.stderr.write(smallTableHint(shown, m.id, tableRows) + "\n");
  process.stdout.write(`${m.id}\n`);
}

/**
 * `synthd fit`'s last stderr line for a table under {@link SMALL_TABLE_ROWS} rows, where one
 * near-copy is one real person: `sample` here drops them, and `evaluate` checks the sample.
 */
export function smallTableHint(file: string, id: string, rows: number): string {
  return (
    `hint: ${rows} rows is a small table: check the sample before sharing it ` +
    `(synthd sample ${id} -n ${rows} -o synthetic.csv && synthd evaluate ${file} synthetic.csv)`
  );
}

/** A server's `parameter_invalid` on `body.config.X`, reworded to name `--config.X`. */
function flagOfConfigParam(e: unknown): unknown {
  if (!(e instanceof InvalidRequestError) || !e.param?.startsWith("body.config.")) return e;
  const field = e.param.slice("body.config.".length);
  const flag = `--config.${field}`;
  const msg = e.message.split(e.param).join(flag);
  return Object.assign(new Error(msg.includes(flag) ? msg : `${flag}: ${msg}`), { code: e.code });
}
