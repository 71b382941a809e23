/**
 * A PostgreSQL table or query as records (`./inputs`): one connection (pg), the result read through
 * a cursor (pg-cursor: a portal fetched {@link FETCH_ROWS} rows at a time), never whole. Cells
 * come as PostgreSQL's own text (no pg type parsers), in a session in UTC; types map as Parquet's
 * (docs/formats.md "Input formats"): timestamp and timestamptz -> `timestamp`, date -> `date`,
 * integers -> `integer`, numeric -> `decimal`, real/double -> `float`, enums -> `dictionary`, text
 * types -> `text`; booleans are written `true`/`false`.
 */
import type { Client } from "pg";
import type Cursor from "pg-cursor";
import { DataError } from "../errors";
import { describePostgres, redactUrl, type PostgresInput, type ReadProgress, type RowBatch, type SourceType, type TableRows } from "./inputs";

/** Rows per cursor fetch (one round trip each). */
export const FETCH_ROWS = 4096;

/** pg_type OIDs of the built-in types mapped (src/include/catalog/pg_type.dat). */
const BY_OID: Readonly<Record<number, SourceType>> = {
  16: "boolean",
  20: "integer",
  21: "integer",
  23: "integer",
  26: "integer",
  700: "float",
  701: "float",
  1700: "decimal",
  18: "text",
  19: "text",
  25: "text",
  1042: "text",
  1043: "text",
  1082: "date",
  1114: "timestamp",
  1184: "timestamp",
};

/**
 * The SELECT a source reads. @throws DataError unless exactly one of `table` and `query` is given.
 */
export function selectOf(source: PostgresInput, quote: (ident: string) => string): string {
  if ((source.table === undefined) === (source.query === undefined)) {
    throw new DataError(`${redactUrl(source.url)}: give a table or a query (exactly one) to read.`);
  }
  if (source.query !== undefined) return source.query;
  return `SELECT * FROM ${source.table!.split(".").map(quote).join(".")}`;
}

/** PostgreSQL's timestamp text (`2024-01-02 03:04:05.5+00`) as `yyyy-MM-dd HH:mm:ss.SSS`. */
export function timestampText(text: string): string {
  const m = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(?:\.(\d+))?(?:[+-]\d\d(?::?\d\d){0,2})?$/.exec(text);
  return m ? `${m[1]} ${m[2]}.${((m[3] ?? "") + "000").slice(0, 3)}` : text;
}

/**
 * The records of a PostgreSQL table or query.
 * @throws DataError (when iterated): no connection, a query PostgreSQL refuses, neither or both of
 *   table and query.
 */
export function postgresRows(source: PostgresInput, onProgress?: (p: ReadProgress) => void): TableRows {
  const out: TableRows = { types: [], batches: read() };
  const name = describePostgres(source);
  async function* read(): AsyncGenerator<RowBatch> {
    const { Client } = require("pg") as typeof import("pg");
    const CursorClass = require("pg-cursor") as typeof Cursor;
    const client: Client = new Client({ connectionString: source.url });
    client.on("error", () => undefined); // a dropped connection fails the pending read instead
    try {
      await client.connect();
    } catch (e) {
      throw new DataError(`Cannot connect to PostgreSQL at ${redactUrl(source.url)}: ${(e as Error).message}.`, { cause: e });
    }
    let cursor: Cursor | undefined;
    try {
      const sql = selectOf(source, (s) => client.escapeIdentifier(s));
      await client.query("SET TIME ZONE 'UTC'");
      // Enum types first: while the cursor is open, the connection takes no other query.
      const enumRows = await client.query<{ oid: number }>("SELECT oid::int AS oid FROM pg_type WHERE typtype = 'e'");
      const enums = new Set(enumRows.rows.map((r) => Number(r.oid)));
      cursor = client.query(new CursorClass(sql, [], { rowMode: "array", types: { getTypeParser: () => (v: string) => v } }));
      const next = (): Promise<{ rows: (string | null)[][]; fields: { name: string; dataTypeID: number }[] }> =>
        new Promise((resolve, reject) => cursor!.read(FETCH_ROWS, (err, rows, result) => (err ? reject(err) : resolve({ rows, fields: result?.fields ?? [] }))));
      let types: (SourceType | undefined)[] | undefined;
      let rows = 0;
      for (;;) {
        let got;
        try {
          got = await next();
        } catch (e) {
          throw new DataError(`${name}: ${(e as Error).message}.`, { cause: e });
        }
        if (types === undefined) {
          if (got.fields.length === 0) throw new DataError(`${name} returns no columns.`);
          types = got.fields.map((f) => (enums.has(f.dataTypeID) ? "dictionary" : BY_OID[f.dataTypeID]));
          out.types.push(...types);
          yield { rows: [got.fields.map((f) => f.name)], lines: [1] };
        }
        if (got.rows.length === 0) break;
        const batch: RowBatch = { rows: new Array(got.rows.length), lines: new Array(got.rows.length) };
        for (let r = 0; r < got.rows.length; r++) {
          const src = got.rows[r];
          const row = new Array<string>(src.length);
          for (let c = 0; c < src.length; c++) row[c] = cellText(src[c], types[c]);
          batch.rows[r] = row;
          batch.lines[r] = rows + r + 2;
        }
        rows += got.rows.length;
        yield batch;
        onProgress?.({ rows });
      }
    } finally {
      await cursor?.close().catch(() => undefined);
      await client.end().catch(() => undefined);
    }
  }
  return out;
}

/** One cell of PostgreSQL's text output as the readers' text. */
function cellText(v: string | null, type: SourceType | undefined): string {
  if (v === null) return "";
  if (type === "timestamp") return timestampText(v);
  if (type === "boolean") return v === "t" ? "true" : v === "f" ? "false" : v;
  return v;
}
