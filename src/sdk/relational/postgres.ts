/**
 * A PostgreSQL schema as a database (docs/relational.md "PostgreSQL"): tables, primary and
 * foreign keys read from the catalog (pg_catalog: `pg_class`, `pg_attribute`, `pg_constraint`),
 * rows through the SDK's cursor reader (`../io/postgres-input`); and a generated database written
 * into a schema in one transaction: tables created parents first with their primary keys and
 * declared foreign key constraints, rows loaded with COPY (pg-copy-streams).
 */
import type { Client } from "pg";
import { DataError } from "../errors";
import { readTable, writeTableCsv, type Table } from "../io/csv";
import { redactUrl, type SourceType } from "../io/inputs";
import type { ColumnOverride } from "../metadata/metadata";
import type { DatabaseSchema, Relationship, TableSchema } from "./schema";

/** A schema of a PostgreSQL database: the connection URI (no `schema` parameter) and the schema. */
export interface PostgresSchemaTarget {
  url: string;
  schema: string;
}

/**
 * Splits `postgres://...?schema=NAME` into the URI to connect with and the schema; `flag`
 * (`--schema`) wins over the parameter; default `public`.
 * @throws DataError when both name a schema and they differ.
 */
export function postgresSchemaTarget(uri: string, flag?: string): PostgresSchemaTarget {
  let url = uri;
  let param: string | undefined;
  try {
    const u = new URL(uri);
    param = u.searchParams.get("schema") ?? undefined;
    if (param !== undefined) {
      u.searchParams.delete("schema");
      url = u.toString();
    }
  } catch {
    throw new DataError(`${redactUrl(uri)} is not a valid PostgreSQL URI (postgres://user@host:5432/db).`);
  }
  if (flag !== undefined && param !== undefined && flag !== param) {
    throw new DataError(`--schema ${flag} and the URI's schema=${param} differ: give one.`);
  }
  return { url, schema: flag ?? param ?? "public" };
}

/** Opens a connection. @throws DataError naming the URI without its password. */
async function connect(url: string): Promise<Client> {
  const { Client: PgClient } = require("pg") as typeof import("pg");
  const client = new PgClient({ connectionString: url });
  client.on("error", () => undefined); // a dropped connection fails the pending query instead
  try {
    await client.connect();
  } catch (e) {
    throw new DataError(`Cannot connect to PostgreSQL at ${redactUrl(url)}: ${(e as Error).message}.`, { cause: e });
  }
  return client;
}

/** A schema's tables, keys and column types as the catalog has them. */
interface Catalog {
  columns: Map<string, { name: string; type: string }[]>;
  constraints: { kind: "p" | "f"; table: string; columns: string[]; parent: string | null; parentSchema: string | null; parentColumns: string[] | null }[];
}

async function readCatalog(client: Client, schema: string): Promise<Catalog> {
  const cols = await client.query<{ tbl: string; col: string; type: string }>(
    `SELECT c.relname AS tbl, a.attname AS col, format_type(a.atttypid, a.atttypmod) AS type
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition
      ORDER BY c.relname, a.attnum`,
    [schema],
  );
  const columns = new Map<string, { name: string; type: string }[]>();
  for (const r of cols.rows) (columns.get(r.tbl) ?? columns.set(r.tbl, []).get(r.tbl)!).push({ name: r.col, type: r.type });
  const names = (key: string, rel: string): string =>
    `ARRAY(SELECT a.attname::text FROM unnest(con.${key}) WITH ORDINALITY k(n, o) JOIN pg_attribute a ON a.attrelid = con.${rel} AND a.attnum = k.n ORDER BY k.o)`;
  const cons = await client.query<Catalog["constraints"][number] & { kind: string }>(
    `SELECT con.contype AS kind, cl.relname AS "table", ${names("conkey", "conrelid")} AS columns,
            fcl.relname AS parent, fn.nspname AS "parentSchema",
            CASE WHEN con.contype = 'f' THEN ${names("confkey", "confrelid")} END AS "parentColumns"
       FROM pg_constraint con JOIN pg_class cl ON cl.oid = con.conrelid JOIN pg_namespace n ON n.oid = cl.relnamespace
       LEFT JOIN pg_class fcl ON fcl.oid = con.confrelid LEFT JOIN pg_namespace fn ON fn.oid = fcl.relnamespace
      WHERE n.nspname = $1 AND con.contype IN ('p', 'f')
      ORDER BY con.contype DESC, cl.relname, con.conname`,
    [schema],
  );
  return { columns, constraints: cons.rows as Catalog["constraints"] };
}

/**
 * The structure of a catalog: one table per base table, its single-column primary key, one
 * relationship per single-column foreign key to the same schema's primary key; column types kept
 * for writing (`TableSchema.sqlTypes`).
 * @throws DataError for a composite key, a foreign key to another schema or to a column that is
 *   not its table's primary key.
 */
function schemaOfCatalog(cat: Catalog, schema: string): DatabaseSchema {
  const tables: Record<string, TableSchema> = {};
  for (const [t, cols] of cat.columns) tables[t] = { sqlTypes: Object.fromEntries(cols.map((c) => [c.name, c.type])) };
  const relationships: Relationship[] = [];
  for (const c of cat.constraints) {
    if (tables[c.table] === undefined) continue;
    const what = c.kind === "p" ? "primary key" : "foreign key";
    if (c.columns.length !== 1) throw new DataError(`table ${schema}.${c.table}: its ${what} (${c.columns.join(", ")}) is composite; only single-column keys are supported.`);
    if (c.kind === "p") {
      tables[c.table].primaryKey = c.columns[0];
      continue;
    }
    if (c.parentSchema !== schema) throw new DataError(`table ${schema}.${c.table}: its foreign key ${c.columns[0]} references ${c.parentSchema}.${c.parent}, outside schema ${schema}.`);
    const parentKey = c.parentColumns?.[0];
    if (tables[c.parent!]?.primaryKey !== parentKey) {
      throw new DataError(`table ${schema}.${c.table}: its foreign key ${c.columns[0]} references ${c.parent}.${parentKey}, which is not ${c.parent}'s primary key.`);
    }
    relationships.push({ parent: c.parent!, parentKey: parentKey!, child: c.table, childKey: c.columns[0] });
  }
  return { tables, relationships };
}

/**
 * Column kinds a typed source gives (`../io/inputs` SourceType): timestamps and dates are
 * datetimes in the text the readers write, dictionaries (enums) categorical; the rest inferred.
 */
export function typedOverrides(columns: readonly string[], types: readonly (SourceType | undefined)[], rows: readonly string[][]): Record<string, ColumnOverride> {
  const out: Record<string, ColumnOverride> = {};
  columns.forEach((c, j) => {
    const t = types[j];
    if (t === "date") out[c] = { type: "datetime", format: "yyyy-MM-dd" };
    else if (t === "timestamp") {
      const whole = rows.every((r) => r[j] === "" || r[j].length === 19);
      out[c] = { type: "datetime", format: whole ? "yyyy-MM-dd HH:mm:ss" : "yyyy-MM-dd HH:mm:ss.SSS" };
    } else if (t === "dictionary") out[c] = { type: "categorical" };
  });
  return out;
}

/**
 * Reads every table of a PostgreSQL schema: the structure from the catalog, the rows through a
 * cursor per table (`../io/postgres-input`), timestamps and dates as datetimes.
 * @throws DataError: no connection, a schema without tables, a composite or cross-schema key.
 */
export async function readPostgresDatabase(target: PostgresSchemaTarget): Promise<{ tables: Record<string, Table>; schema: DatabaseSchema }> {
  const client = await connect(target.url);
  let schema: DatabaseSchema;
  try {
    schema = schemaOfCatalog(await readCatalog(client, target.schema), target.schema);
  } catch (e) {
    if (e instanceof DataError) throw e;
    throw new DataError(`${redactUrl(target.url)}: reading the catalog of schema ${target.schema} failed: ${(e as Error).message}.`, { cause: e });
  } finally {
    await client.end().catch(() => undefined);
  }
  const names = Object.keys(schema.tables).sort();
  if (names.length === 0) throw new DataError(`${redactUrl(target.url)}: schema ${target.schema} has no tables (give another with --schema or ?schema=).`);
  const tables: Record<string, Table> = {};
  for (const t of names) {
    const table: Table = { columns: [], rows: [] };
    let types: readonly (SourceType | undefined)[] = [];
    await readTable({ url: target.url, table: `${target.schema}.${t}` }, (h, ty) => {
      table.columns.push(...h);
      types = ty;
    }, (r) => void table.rows.push(r));
    tables[t] = table;
    const typed = typedOverrides(table.columns, types, table.rows);
    if (Object.keys(typed).length > 0) schema.tables[t].columns = typed;
  }
  return { tables, schema };
}

const INTEGER = /^-?\d{1,18}$/;
const NUMBER = /^-?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i;
const DATE = /^\d{4}-\d\d-\d\d$/;
const TIMESTAMP = /^\d{4}-\d\d-\d\d[ T]\d\d:\d\d(:\d\d(\.\d+)?)?$/;

/**
 * The SQL type a generated column is written as: the catalog's type when the database was read
 * from PostgreSQL (`character varying(n)` and `character(n)` as `text`: generated text may be
 * longer than the real), else from the values: `bigint`, `double precision`, `date`, `timestamp`
 * or `text`.
 */
export function sqlTypeOf(values: readonly string[], catalogType?: string): string {
  if (catalogType !== undefined) return /^(character varying|character|varchar|char)\(\d+\)$/.test(catalogType) ? "text" : catalogType;
  const v = values.filter((x) => x !== "");
  if (v.length === 0) return "text";
  for (const [re, type] of [[INTEGER, "bigint"], [NUMBER, "double precision"], [DATE, "date"], [TIMESTAMP, "timestamp"]] as const) {
    if (v.every((x) => re.test(x))) return type;
  }
  return "text";
}

/**
 * Writes a generated database into `target.schema` (created when missing) in one transaction:
 * each table (in `order`, parents first) created with its columns' types ({@link sqlTypeOf}; a
 * foreign key takes its parent key's type), its primary key and its foreign key constraints, then
 * loaded with `COPY ... FROM STDIN (FORMAT csv)`, a blank cell as NULL. Nothing is left on failure.
 * @returns rows written per table.
 * @throws DataError: no connection, a table of that name already in the schema, or PostgreSQL
 *   refusing a table or its rows (the URI named without its password).
 */
export async function writePostgresDatabase(
  target: PostgresSchemaTarget,
  schema: DatabaseSchema,
  order: readonly string[],
  tables: Record<string, Table>,
): Promise<Record<string, number>> {
  const { from } = require("pg-copy-streams") as typeof import("pg-copy-streams");
  const client = await connect(target.url);
  const q = (s: string): string => client.escapeIdentifier(s);
  const where = `${redactUrl(target.url)} schema ${target.schema}`;
  const written: Record<string, number> = {};
  try {
    await client.query("BEGIN");
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${q(target.schema)}`);
    const existing = await client.query<{ relname: string }>(
      "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = ANY($2::text[])",
      [target.schema, [...order]],
    );
    if (existing.rows.length > 0) {
      throw new DataError(`${where} already has ${existing.rows.map((r) => r.relname).sort().join(", ")}: write into a schema without these tables (nothing was written).`);
    }
    const types: Record<string, Record<string, string>> = {};
    for (const t of order) {
      const table = tables[t];
      const s = schema.tables[t] ?? {};
      const fks = schema.relationships.filter((r) => r.child === t);
      types[t] = {};
      const defs = table.columns.map((c, j) => {
        const fk = fks.find((r) => r.childKey === c);
        types[t][c] = fk !== undefined ? types[fk.parent][fk.parentKey] : sqlTypeOf(table.rows.map((r) => r[j]), s.sqlTypes?.[c]);
        return `${q(c)} ${types[t][c]}`;
      });
      if (s.primaryKey !== undefined) defs.push(`PRIMARY KEY (${q(s.primaryKey)})`);
      for (const r of fks) defs.push(`FOREIGN KEY (${q(r.childKey)}) REFERENCES ${q(target.schema)}.${q(r.parent)} (${q(r.parentKey)})`);
      const name = `${q(target.schema)}.${q(t)}`;
      try {
        await client.query(`CREATE TABLE ${name} (${defs.join(", ")})`);
        const copy = client.query(from(`COPY ${name} (${table.columns.map(q).join(", ")}) FROM STDIN WITH (FORMAT csv, HEADER true)`));
        const done = new Promise<void>((resolve, reject) => {
          copy.on("finish", resolve);
          copy.on("error", reject);
        });
        written[t] = await writeTableCsv(table, copy);
        copy.end();
        await done;
      } catch (e) {
        throw new DataError(`${where}: writing table ${t} failed: ${(e as Error).message}.`, { cause: e });
      }
    }
    await client.query("COMMIT");
    return written;
  } catch (e) {
    await client.query("ROLLBACK").catch(() => undefined);
    if (e instanceof DataError) throw e;
    throw new DataError(`${where}: ${(e as Error).message}.`, { cause: e });
  } finally {
    await client.end().catch(() => undefined);
  }
}
