/**
 * `synthd fit DIR|postgres://...` and `synthd sample db_... -o DIR|postgres://...`: a whole
 * database (docs/relational.md). The
 * fitted database (its plan and one model id per table, no values) is kept on this machine as
 * `db_<12 hex>.json` in {@link databaseDir}, as `synthd fit` keeps near-copy filters.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { Model, ModelConfigInput } from "../../contract";
import { cardinality, describeRelationship } from "../../sdk/relational/detect";
import {
  fitDatabase,
  readDatabaseDir,
  readPostgresSource,
  sampleDatabase,
  writeDatabaseDir,
  writeDatabasePostgres,
  type DatabaseModel,
} from "../../sdk/relational/database";
import { postgresSchemaTarget } from "../../sdk/relational/postgres";
import { tableRowCount } from "../../sdk/io/column-table";
import { isPostgresUrl, redactUrl } from "../../sdk/io/inputs";
import type { Where } from "../../sdk/generate/seeded-request";
import { fmtLoss } from "../progress";
import { client, readJsonArg, type ClientOptions } from "./shared";

/** Database ids: `db_` and 12 hex digits. */
const DATABASE_ID = /^db_[0-9a-f]{12}$/;

/**
 * Where fitted databases are kept: `$SYNTHD_FILTER_DIR/databases` when that is set, else
 * `$XDG_DATA_HOME/synthd/databases`, else `~/.local/share/synthd/databases`.
 */
export function databaseDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SYNTHD_FILTER_DIR) return join(env.SYNTHD_FILTER_DIR, "databases");
  return join(env.XDG_DATA_HOME || join(homedir(), ".local", "share"), "synthd", "databases");
}

/** Keeps a fitted database and returns its id (the file written whole, through a rename). */
function saveDatabase(model: DatabaseModel): string {
  const dir = databaseDir();
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const id = `db_${randomBytes(6).toString("hex")}`;
  const path = join(dir, `${id}.json`);
  const tmp = `${path}.partial`;
  writeFileSync(tmp, JSON.stringify(model), { mode: 0o600 });
  renameSync(tmp, path);
  return id;
}

/** A kept database. @throws Error for a malformed id or one this machine does not have. */
export function loadDatabase(id: string): DatabaseModel {
  if (!DATABASE_ID.test(id)) throw new Error(`"${id}" is not a database id (db_ and 12 hex digits).`);
  const path = join(databaseDir(), `${id}.json`);
  if (!existsSync(path)) throw new Error(`no database ${id} in ${databaseDir()}: synthd fit DIR keeps it on the machine that fitted.`);
  const m = JSON.parse(readFileSync(path, "utf8")) as DatabaseModel;
  if (m.object !== "database") throw new Error(`${path} is not a fitted database.`);
  return m;
}

/** The flat-table options `synthd fit DIR` does not take (each table is fitted with the defaults). */
const FLAT_ONLY = ["columns", "rareThreshold", "domain", "epsilon", "delta", "delimiter", "encoding", "rules", "pairBudget"] as const;

/**
 * `synthd fit DIR`: reads one CSV or Parquet file per table (and `metadata.json`, SDV's
 * multi-table metadata, if present), or `synthd fit postgres://.../db [--schema S]`: every table
 * of the schema (`?schema=S`, default public) with its keys from the catalog; prints one line per
 * relationship with its cardinality, fits one model per table and prints the database id as
 * stdout's last line.
 * @param config `--config`, parsed.
 * @throws Error for a flat-table option, a bad directory, metadata or schema (DataError), and the
 *   errors of fitting.
 */
export async function databaseFitCommand(dir: string, opts: ClientOptions & { wait: boolean; schema?: string }, config: ModelConfigInput | undefined): Promise<void> {
  for (const k of FLAT_ONLY) {
    if ((opts as unknown as Record<string, unknown>)[k] !== undefined) throw new Error(`--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} is a flat-table option; synthd fit DIR fits each table with its defaults (column kinds: metadata.json's sdtypes).`);
  }
  if (!opts.wait) throw new Error("--no-wait is a flat-table option: synthd fit DIR waits for every table's model.");
  const api = client(opts);
  await api.models.list({ limit: 1 });
  const started = Date.now();
  const pg = isPostgresUrl(dir) ? postgresSchemaTarget(dir, opts.schema) : undefined;
  if (pg === undefined && opts.schema !== undefined) throw new Error("--schema names a PostgreSQL schema: give a postgres:// URI.");
  const db = pg !== undefined ? await readPostgresSource(pg) : await readDatabaseDir(dir);
  const say = (line: string): boolean => process.stderr.write(`${line}\n`);
  say(`tables: ${Object.entries(db.tables).map(([t, x]) => `${t} (${tableRowCount(x)} rows)`).join(", ")}`);
  say(
    db.keys === "detected"
      ? "relationships (detected; write metadata.json in SDV's format to confirm or change them):"
      : db.keys === "catalog"
        ? `relationships (foreign keys of schema ${pg!.schema}):`
        : "relationships (metadata.json):",
  );
  if (db.schema.relationships.length === 0) say("  none: each table is fitted alone");
  for (const r of db.schema.relationships) say(`  ${describeRelationship(r, cardinality(r, db.tables))}`);
  const fitted = await fitDatabase(api, db, {
    ...(config !== undefined ? { config } : {}),
    onModel: (t, m) => say(`table ${t}: model ${m.id} created; training on ${m.config.device}`),
    onProgress: (t, m: Model) => {
      if (m.status === "ready" || m.status === "failed") say(`table ${t}: model ${m.id} ${m.status} after ${m.current_epoch} epochs (val_loss ${fmtLoss(m.val_loss)})`);
    },
  });
  const id = saveDatabase(fitted);
  say(`database ${id}: ${fitted.plan.order.length} tables fitted in ${((Date.now() - started) / 1000).toFixed(1)} s (kept in ${databaseDir()})`);
  process.stdout.write(`${id}\n`);
}

/** Options of `synthd sample db_... -o DIR`. */
export interface DatabaseSampleCommandOptions extends ClientOptions {
  output?: string;
  scale?: number;
  seed?: number;
  where?: string;
  numRows?: number;
  seedData?: string;
  format?: string;
  /** `--schema S`: the PostgreSQL schema `-o postgres://...` writes into. */
  schema?: string;
  /** `--rows TABLE=N`, repeated: a table's rows instead of the scaled count. */
  rows?: string[];
}

/**
 * `--rows TABLE=N` arguments as sizes. @throws Error for a malformed one or a table named twice.
 */
export function parseRowSizes(args: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const a of args) {
    const m = /^([^=]+)=(\d+)$/.exec(a.trim());
    if (m === null || Number(m[2]) < 1) throw new Error(`--rows ${a}: give TABLE=N with N a positive integer, e.g. --rows orders=5000.`);
    if (Object.hasOwn(out, m[1])) throw new Error(`--rows names table ${m[1]} twice.`);
    out[m[1]] = Number(m[2]);
  }
  return out;
}

/**
 * `synthd sample db_... -o DIR [--scale X] [--rows TABLE=N ...] [--seed S] [--where '{"TABLE": {...}}']`:
 * writes every table as `DIR/NAME.csv`, parents first; `--where` conditions root tables, their
 * children follow; `--rows` sets a table's rows (a child's spread over its parents' counts).
 * `-o postgres://.../db [--schema S]` (or `?schema=S`) creates the tables in schema S with their
 * keys and foreign key constraints and loads them with COPY, in one transaction.
 * @throws Error for `-n`, `--seed-data` or `--format`, a missing `-o`, an `-o` that is a file, a
 *   schema that already has one of the tables, and the errors of generation.
 */
export async function databaseSampleCommand(id: string, opts: DatabaseSampleCommandOptions): Promise<void> {
  if (opts.numRows !== undefined) throw new Error("-n does not apply to a database: give --scale X (root tables' rows as a multiple of the real ones; children follow).");
  if (opts.seedData !== undefined || opts.format !== undefined) throw new Error("--seed-data and --format do not apply to a database: it is written as one CSV per table.");
  if (opts.output === undefined) throw new Error("give -o DIR: a database is written as one CSV file per table.");
  const sizes = opts.rows !== undefined ? parseRowSizes(opts.rows) : undefined;
  const out = opts.output;
  const pg = isPostgresUrl(out) ? postgresSchemaTarget(out, opts.schema) : undefined;
  if (pg === undefined && opts.schema !== undefined) throw new Error("--schema names a PostgreSQL schema: give -o postgres://...");
  if (pg === undefined && existsSync(out) && !statSync(out).isDirectory()) throw new Error(`-o ${out} is a file; a database needs a directory.`);
  let where: Record<string, Where> | undefined;
  if (opts.where !== undefined) {
    const v = readJsonArg("--where", opts.where);
    if (v === null || typeof v !== "object" || Array.isArray(v) || !Object.values(v).every((w) => w !== null && typeof w === "object" && !Array.isArray(w))) {
      throw new Error('--where for a database names a root table: {"customers": {"segment": "B"}}.');
    }
    where = v as Record<string, Where>;
  }
  const model = loadDatabase(id);
  const api = client(opts);
  const started = Date.now();
  const tables = await sampleDatabase(api, model, {
    ...(opts.scale !== undefined ? { scale: opts.scale } : {}),
    ...(opts.seed !== undefined ? { seed: opts.seed } : {}),
    ...(where !== undefined ? { where } : {}),
    ...(sizes !== undefined ? { sizes } : {}),
    onTable: (t, rows, ms) => process.stderr.write(`table ${t}: ${rows} rows in ${(ms / 1000).toFixed(1)} s\n`),
  });
  if (pg !== undefined) {
    const written = await writeDatabasePostgres(pg, model, tables);
    const list = Object.entries(written).map(([t, n]) => `${t} (${n} rows)`).join(", ");
    process.stderr.write(`wrote ${list} to ${redactUrl(pg.url)} schema ${pg.schema} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
    return;
  }
  // Written to a sibling directory first, so a failure leaves no half-written database.
  const tmp = `${out.replace(/\/+$/, "")}.${randomBytes(4).toString("hex")}.partial`;
  mkdirSync(tmp, { recursive: true });
  try {
    const written = await writeDatabaseDir(tmp, tables);
    mkdirSync(out, { recursive: true });
    for (const t of Object.keys(written)) renameSync(join(tmp, `${t}.csv`), join(out, `${t}.csv`));
    process.stderr.write(`wrote ${Object.entries(written).map(([t, n]) => `${t}.csv (${n} rows)`).join(", ")} to ${out} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
