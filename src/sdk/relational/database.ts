/**
 * A database fitted and sampled through today's client: a directory of CSV files (and optionally
 * SDV's `metadata.json`) in, one model per table on the server, a directory of CSV files out.
 * The {@link DatabaseModel} (plan and model ids, no values) is what `synthd sample` needs.
 */
import { readdirSync, readFileSync, existsSync, statSync } from "node:fs";
import { basename, extname, join } from "node:path";
import type { Synthd } from "../client/client";
import type { ModelConfigInput, Model } from "../../contract";
import { DataError } from "../errors";
import { readTable, writeTableCsv, type Table } from "../io/csv";
import { Synthesizer } from "../generate/synthesizer";
import { OTHER } from "../columns/common";
import type { Where } from "../generate/seeded-request";
import { checkSchema, readSdvMetadata, type DatabaseSchema } from "./schema";
import { detectSchema } from "./detect";
import { planDatabase, type DatabasePlan } from "./plan";
import { generateDatabase, type DatabaseSampleOptions, type TableModel } from "./generate";

/** A database read from a directory. */
export interface DatabaseSource {
  tables: Record<string, Table>;
  schema: DatabaseSchema;
  /** True when the keys were detected (no `metadata.json`). */
  detected: boolean;
}

/** What a fitted database is: its plan and one model id per table (JSON, kept by the CLI). */
export interface DatabaseModel {
  object: "database";
  schema: DatabaseSchema;
  plan: DatabasePlan;
  models: Record<string, string>;
}

/** Reads a CSV file into memory (the SDK's reader: trimmed cells, delimiter detected). */
export async function readCsvTable(path: string): Promise<Table> {
  const table: Table = { columns: [], rows: [] };
  await readTable(path, (h) => void table.columns.push(...h), (r) => void table.rows.push(r));
  return table;
}

/**
 * Reads a database directory: each `NAME.csv` is table NAME; `metadata.json`, when present, is
 * SDV multi-table metadata (`./schema`), else the keys are detected (`./detect`).
 * @throws DataError for a directory without CSV files, a table the metadata names that is missing,
 *   a bad metadata file, or a primary key that repeats.
 */
export async function readDatabaseDir(dir: string): Promise<DatabaseSource> {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new DataError(`${dir} is not a directory.`);
  const files = readdirSync(dir).filter((f) => extname(f).toLowerCase() === ".csv").sort();
  if (files.length === 0) throw new DataError(`${dir} holds no .csv file: a database directory has one CSV file per table.`, { file: dir });
  const tables: Record<string, Table> = {};
  for (const f of files) tables[basename(f, extname(f))] = await readCsvTable(join(dir, f));
  const metaPath = join(dir, "metadata.json");
  let schema: DatabaseSchema;
  let detected = false;
  if (existsSync(metaPath)) {
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(metaPath, "utf8"));
    } catch (e) {
      throw new DataError(`${metaPath} is not valid JSON (${(e as Error).message}).`, { file: metaPath });
    }
    schema = readSdvMetadata(json, metaPath);
    // Tables the metadata leaves out are fitted alone.
    for (const t of Object.keys(tables)) if (schema.tables[t] === undefined) schema.tables[t] = {};
  } else {
    schema = detectSchema(tables);
    detected = true;
  }
  checkSchema(schema, tables);
  return { tables, schema, detected };
}

/** A table's {@link Synthesizer} as generation's {@link TableModel}. */
export class SynthesizerTableModel implements TableModel {
  constructor(readonly synth: Synthesizer) {}

  sample(n: number, seed: number, where?: Where): Promise<Table> {
    return this.synth.sample(n, { seed, nearCopyFilter: false, ...(where !== undefined ? { where } : {}) });
  }

  /**
   * Seeded rows; a categorical seed cell the child's code book lacks (a parent value no real
   * parent with children had, and no pooled code) is left blank, so it is drawn, not refused.
   */
  sampleSeeded(seed: Table, seedValue: number): Promise<Table> {
    const meta = this.synth.metadata;
    const known = seed.columns.map((c) => {
      const kind = meta.column_stats?.[c]?.type ?? "categorical";
      const mapping = meta.value_mappings?.[c] ?? {};
      return kind === "categorical" && !Object.hasOwn(mapping, OTHER) ? new Set(Object.keys(mapping)) : undefined;
    });
    const rows = seed.rows.map((r) => r.map((v, j) => (known[j] === undefined || v === "" || known[j]!.has(v) ? v : "")));
    return this.synth.sample({ seedData: { columns: seed.columns, rows }, seed: seedValue });
  }
}

/** Options of {@link fitDatabase}. */
export interface DatabaseFitOptions {
  config?: ModelConfigInput;
  /** Called once per table when its model is created (before training ends). */
  onModel?: (table: string, model: Model) => void;
  /** Called with every polled state of every table's model. */
  onProgress?: (table: string, model: Model) => void;
}

/**
 * Fits one model per table of `db` on its flat training table (`./plan`): all created first, so
 * the server trains them side by side, then waited for.
 * @throws DataError (plan, a table under the SDK's minimum rows), the errors of Create Model and
 *   of training (TrainingFailedError, TrainingTimeoutError).
 */
export async function fitDatabase(client: Synthd, db: DatabaseSource, opts: DatabaseFitOptions = {}): Promise<DatabaseModel> {
  const { plan, training } = planDatabase(db.schema, db.tables);
  const synths: Record<string, Synthesizer> = {};
  for (const t of plan.order) {
    const overrides = plan.tables[t].overrides;
    synths[t] = await Synthesizer.fit(client, training[t], {
      wait: false,
      nearCopyFilter: false,
      ...(opts.config !== undefined ? { config: opts.config } : {}),
      ...(overrides !== undefined ? { columns: overrides } : {}),
    }).catch((e: unknown) => {
      if (e instanceof DataError) throw new DataError(`table "${t}": ${e.message}`, { column: e.column });
      throw e;
    });
    opts.onModel?.(t, synths[t].model);
  }
  await Promise.all(plan.order.map((t) => synths[t].waitUntilReady({ onProgress: (m) => opts.onProgress?.(t, m) })));
  return { object: "database", schema: db.schema, plan, models: Object.fromEntries(plan.order.map((t) => [t, synths[t].id])) };
}

/**
 * Generates every table of a fitted database (`./generate`).
 * @throws NotFoundError for a table's model this key lacks, and as `generateDatabase`.
 */
export async function sampleDatabase(client: Synthd, model: DatabaseModel, opts: DatabaseSampleOptions = {}): Promise<Record<string, Table>> {
  const models: Record<string, TableModel> = {};
  for (const t of model.plan.order) models[t] = new SynthesizerTableModel(await Synthesizer.fromModel(client, model.models[t]));
  return generateDatabase(model.plan, models, opts);
}

/** Writes each table as `DIR/NAME.csv`; returns the rows written per table. */
export async function writeDatabaseDir(dir: string, tables: Record<string, Table>): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [t, table] of Object.entries(tables)) out[t] = await writeTableCsv(table, join(dir, `${t}.csv`));
  return out;
}
