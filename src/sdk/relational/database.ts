/**
 * A database fitted and sampled through today's client: a directory of CSV or Parquet files (and
 * optionally SDV's `metadata.json`) or a PostgreSQL schema (`./postgres`) in, one model per table
 * on the server, a directory of CSV files or a PostgreSQL schema out.
 * The {@link DatabaseModel} (plan and model ids, no values) is what `synthd sample` needs.
 */
import { readdirSync, readFileSync, existsSync, statSync } from "node:fs";
import { basename, extname, join } from "node:path";
import type { Synthd } from "../client/client";
import type { ModelConfigInput, Model } from "../../contract";
import type { ColumnOverride } from "../metadata/metadata";
import { DataError } from "../errors";
import { readTable, writeTableCsv, type Table, type TableSource } from "../io/csv";
import { inputFormatOfPath, type SourceType } from "../io/inputs";
import { readCsvFile } from "../metadata/table-tally";
import { Synthesizer } from "../generate/synthesizer";
import { OTHER } from "../columns/common";
import { encodeSeed, type Where } from "../generate/seeded-request";
import { checkSchema, readSdvMetadata, type DatabaseSchema } from "./schema";
import { detectSchema } from "./detect";
import { planDatabase, trainingJoin, type DatabasePlan } from "./plan";
import { readPostgresDatabase, typedOverrides, writePostgresDatabase, type PostgresSchemaTarget } from "./postgres";
import { writeDecodedCsv } from "../io/formats";
import { cellText } from "../generate/batch";
import { BatchTable, generateDatabase, type CodedSample, type DatabaseSampleOptions, type TableModel } from "./generate";

/** A database read from a directory or a PostgreSQL schema. */
export interface DatabaseSource {
  tables: Record<string, Table>;
  schema: DatabaseSchema;
  /** Where the keys came from: detected (no `metadata.json`), `metadata.json`, or the catalog. */
  keys: "detected" | "metadata" | "catalog";
  /**
   * The file each table was read from (a directory's): a table that is no parent and no
   * sequence is fitted from it, joined with its parents record by record (`./plan` trainingJoin).
   */
  files?: Record<string, string>;
}

/** What a fitted database is: its plan and one model id per table (JSON, kept by the CLI). */
export interface DatabaseModel {
  object: "database";
  schema: DatabaseSchema;
  plan: DatabasePlan;
  models: Record<string, string>;
}

/**
 * Reads a table file into memory (the SDK's readers: a CSV's cells trimmed and its delimiter
 * detected; a Parquet file's columns typed), with the column kinds its types give
 * (`./postgres` typedOverrides: timestamps and dates as datetimes). A UTF-8 CSV file is read by
 * extraction's byte parser (`../metadata/table-tally` readCsvFile: equal values one string),
 * else, or where that parser leaves it, by `../io/csv`.
 * @throws DataError as `../io/csv`'s readTable.
 */
export async function readTableFile(path: string): Promise<{ table: Table; typed: Record<string, ColumnOverride> }> {
  if (inputFormatOfPath(path) === "csv") {
    const read = readCsvFile(path);
    if (read !== undefined) return { table: read, typed: {} };
  }
  const table: Table = { columns: [], rows: [] };
  let types: readonly (SourceType | undefined)[] = [];
  await readTable(path, (h, ty) => {
    table.columns.push(...h);
    types = ty;
  }, (r) => void table.rows.push(r));
  return { table, typed: typedOverrides(table.columns, types, table.rows) };
}

/** File endings of a database directory's tables. */
const TABLE_FILES = [".csv", ".parquet"];

/**
 * Reads a database directory: each `NAME.csv` or `NAME.parquet` is table NAME; `metadata.json`,
 * when present, is SDV multi-table metadata (`./schema`), else the keys are detected
 * (`./detect`). A Parquet file's timestamp and date columns are datetimes unless the metadata
 * says otherwise.
 * @throws DataError for a directory without table files, a table in both formats, a table the
 *   metadata names that is missing, a bad metadata file, or a primary key that repeats.
 */
export async function readDatabaseDir(dir: string): Promise<DatabaseSource> {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new DataError(`${dir} is not a directory.`);
  const files = readdirSync(dir).filter((f) => TABLE_FILES.includes(extname(f).toLowerCase())).sort();
  if (files.length === 0) throw new DataError(`${dir} holds no .csv or .parquet file: a database directory has one file per table.`, { file: dir });
  const tables: Record<string, Table> = {};
  const typed: Record<string, Record<string, ColumnOverride>> = {};
  const paths: Record<string, string> = {};
  for (const f of files) {
    const name = basename(f, extname(f));
    if (tables[name] !== undefined) throw new DataError(`${dir} holds table ${name} twice (${files.filter((g) => basename(g, extname(g)) === name).join(" and ")}): keep one file per table.`, { file: dir });
    paths[name] = join(dir, f);
    ({ table: tables[name], typed: typed[name] } = await readTableFile(paths[name]));
  }
  const metaPath = join(dir, "metadata.json");
  let schema: DatabaseSchema;
  let keys: DatabaseSource["keys"] = "metadata";
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
    keys = "detected";
  }
  for (const [t, s] of Object.entries(schema.tables)) {
    if (Object.keys(typed[t] ?? {}).length > 0) s.columns = { ...typed[t], ...s.columns };
  }
  checkSchema(schema, tables);
  return { tables, schema, keys, files: paths };
}

/**
 * Reads every table of a PostgreSQL schema, its keys from the catalog (`./postgres`).
 * @throws DataError as `readPostgresDatabase`, and for a primary key that repeats.
 */
export async function readPostgresSource(target: PostgresSchemaTarget): Promise<DatabaseSource> {
  const { tables, schema } = await readPostgresDatabase(target);
  checkSchema(schema, tables);
  return { tables, schema, keys: "catalog" };
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

  /**
   * A plain draw with each row's generated codes of `columns`, whose points are not placed (the
   * caller reads their codes); a code's key is {@link codeKeys} of the first row's decoded cell
   * holding it (a blank cell's key is blank, as there).
   */
  async sampleCoded(n: number, seed: number, columns: readonly string[]): Promise<CodedSample> {
    const { batch, codes } = await this.synth.sampleBatchWithCodes(n, columns, { seed, nearCopyFilter: false, unread: columns });
    const coded = columns.map((column, k) => {
      const cells = batch.cells[batch.columns.indexOf(column)];
      const keys: string[] = [];
      const c = codes[k];
      for (let r = 0; r < batch.length; r++) {
        if (keys[c[r]] === undefined) keys[c[r]] = this.codeKeys({ columns: [column], rows: [[cellText(cells, r)]] })[0];
      }
      return { column, codes: c, keys };
    });
    // Held by column: generation selects and writes the rows without a string per cell.
    return { rows: new BatchTable([...batch.columns], batch), coded };
  }

  /**
   * Each row's cells as the model's codes (a categorical's code, a number's or datetime's bin),
   * joined: rows with equal keys are the same condition to the model. A cell without a code is `?`.
   */
  codeKeys(table: Table): string[] {
    const meta = this.synth.metadata;
    const memo = table.columns.map(() => new Map<string, string>());
    const code = (j: number, v: string): string => {
      if (v.trim() === "") return "";
      let c = memo[j].get(v);
      if (c === undefined) {
        try {
          c = String(encodeSeed(meta, { name: "context", columns: [table.columns[j]], rows: [[v]], lines: [2] }).rows[0][0]);
        } catch {
          c = "?";
        }
        memo[j].set(v, c);
      }
      return c;
    };
    return table.rows.map((r) => r.map((v, j) => code(j, v)).join("\u0000"));
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
 * the server trains them side by side, then waited for. A table read from a file that is no
 * parent and no sequence is fitted from the file joined with its parents (`./plan` trainingJoin),
 * as a file alone is (worker threads, memory that does not grow with its rows); the others from
 * the training table in memory. Both give the same metadata but its source name.
 * @throws DataError (plan, a table under the SDK's minimum rows), the errors of Create Model and
 *   of training (TrainingFailedError, TrainingTimeoutError).
 */
export async function fitDatabase(client: Synthd, db: DatabaseSource, opts: DatabaseFitOptions = {}): Promise<DatabaseModel> {
  const { plan, training } = planDatabase(db.schema, db.tables);
  const synths: Record<string, Synthesizer> = {};
  for (const t of plan.order) {
    const overrides = plan.tables[t].overrides;
    const file = db.files?.[t];
    const join = file !== undefined ? trainingJoin(plan, t, db.tables) : undefined;
    const source: TableSource = file !== undefined && join !== undefined ? { path: file, join } : training[t];
    synths[t] = await Synthesizer.fit(client, source, {
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

/**
 * Writes a generated database into a PostgreSQL schema, parents first, with its keys declared
 * (`./postgres` writePostgresDatabase); returns the rows written per table.
 */
export function writeDatabasePostgres(target: PostgresSchemaTarget, model: DatabaseModel, tables: Record<string, Table>): Promise<Record<string, number>> {
  return writePostgresDatabase(target, model.schema, model.plan.order, tables);
}

/**
 * Writes each table as `DIR/NAME.csv` (the bytes of `writeTableCsv`); a table still held by column
 * (`./generate` BatchTable) is written from its columns, chunk by chunk (`../io/formats`
 * writeDecodedCsv). Returns the rows written per table.
 */
export async function writeDatabaseDir(dir: string, tables: Record<string, Table>): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [t, table] of Object.entries(tables)) {
    const path = join(dir, `${t}.csv`);
    const batch = table instanceof BatchTable ? table.batch : undefined;
    out[t] = batch !== undefined ? await writeDecodedCsv(path, table.columns, batch) : await writeTableCsv(table, path);
  }
  return out;
}
