/**
 * Input formats of `synthd fit` and the SDK (docs/formats.md "Input formats"): CSV (plain or gzip),
 * JSON Lines, Parquet, Arrow IPC and a PostgreSQL table or query. Every reader yields the table as
 * text records in batches ({@link RowBatch}), header record first, so extraction reads every source
 * the same way; typed sources also say each column's {@link SourceType}. The typed readers live in
 * `./typed-inputs` and `./postgres-input`, loaded by `./csv` only for their formats.
 */
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { createInterface } from "node:readline";
import { createGunzip } from "node:zlib";
import { extname } from "node:path";
import { DataError } from "../errors";

/** A file format a table is read from. */
export type InputFormat = "csv" | "csv.gz" | "jsonl" | "parquet" | "arrow";

/** Every {@link InputFormat}, for flag validation and messages. */
export const INPUT_FORMATS: readonly InputFormat[] = Object.freeze(["csv", "csv.gz", "jsonl", "parquet", "arrow"]);

/** File name endings (lower case) that name an input format; longest first. */
const INPUT_ENDINGS: readonly [string, InputFormat][] = [
  [".csv.gz", "csv.gz"],
  [".tsv.gz", "csv.gz"],
  [".jsonl", "jsonl"],
  [".ndjson", "jsonl"],
  [".parquet", "parquet"],
  [".pq", "parquet"],
  [".arrow", "arrow"],
  [".feather", "arrow"],
  [".ipc", "arrow"],
];

/** A file read in a format other than its name says (`synthd fit --format`). */
export interface FileInput {
  path: string;
  /** Default: from the name ({@link inputFormatOfPath}). */
  format?: InputFormat;
}

/**
 * A file's records joined with rows held in memory (a database child's training table read from
 * its file, `../relational/plan`): each record becomes its `keep` cells, then per lookup the
 * `cells` of the in-memory row whose key (`keys`) equals the record's cell of `column`, blanks
 * when none does. The joined table's columns are `keep`, then each lookup's `names`; it carries
 * no source types (`./record-join`).
 */
export interface RecordJoin {
  keep: string[];
  lookups: { column: string; keys: string[]; names: string[]; cells: string[][] }[];
}

/** A file read as the join of its records with in-memory rows ({@link RecordJoin}). */
export interface JoinedFileInput extends FileInput {
  join: RecordJoin;
}

/**
 * A PostgreSQL table or query, read through a cursor (`./postgres-input`). Exactly one of `table`
 * (optionally `schema.table`) and `query` (one SELECT).
 */
export interface PostgresInput {
  /** A libpq connection URI: `postgres://user@host:5432/db`. */
  url: string;
  table?: string;
  query?: string;
}

/**
 * What a typed source says of a column beyond its text: `timestamp` and `date` are datetimes
 * (text `yyyy-MM-dd HH:mm:ss[.SSS]` in UTC, `yyyy-MM-dd`); `dictionary` a categorical (Arrow
 * Dictionary, Parquet ENUM); `text` never a number; the numeric and boolean types add nothing.
 */
export type SourceType = "timestamp" | "date" | "integer" | "float" | "decimal" | "boolean" | "text" | "dictionary";

/** Records of a table: `rows[i]`, the i-th record's cells as text, came from line `lines[i]`. */
export interface RowBatch {
  rows: string[][];
  /** 1-based line of each record (CSV: its line in the file; other sources: data row index + 2). */
  lines: number[];
}

/** Progress of a read: records so far and, when the source's size is known, the share read. */
export interface ReadProgress {
  rows: number;
  /** In [0, 1]: bytes read over the file's size, or rows over the file's rows; absent: unknown. */
  fraction?: number;
}

/** A table as batches: the header record first; typed sources fill `types` once it is out. */
export interface TableRows {
  batches: AsyncIterable<RowBatch>;
  /** Per column (once the header batch is out), what a typed source says of it; else empty. */
  types: (SourceType | undefined)[];
}

/**
 * Records per batch the file readers yield: few, so that records die young (a CSV read in batches
 * of 4,096 spent a third more core time, mostly in the garbage collector; docs/formats.md).
 */
export const BATCH_ROWS = 256;

/**
 * The input format of a file name's ending (case-insensitive): `.csv.gz`/`.tsv.gz`, `.jsonl`/
 * `.ndjson`, `.parquet`/`.pq`, `.arrow`/`.feather`/`.ipc`; anything else is CSV (`.csv`, `.tsv`,
 * `.txt` ...).
 */
export function inputFormatOfPath(path: string): InputFormat {
  const lower = path.toLowerCase();
  for (const [ending, format] of INPUT_ENDINGS) if (lower.endsWith(ending)) return format;
  return extname(lower) === ".gz" ? "csv.gz" : "csv";
}

/**
 * Checks a `--format` / `FileInput.format` name. @throws RangeError naming the formats.
 */
export function checkInputFormat(format: string): InputFormat {
  if (!(INPUT_FORMATS as readonly string[]).includes(format)) {
    throw new RangeError(`input format must be one of ${INPUT_FORMATS.join(", ")}, got ${JSON.stringify(format)}`);
  }
  return format as InputFormat;
}

/** Whether `s` is a PostgreSQL connection URI (`postgres://` or `postgresql://`). */
export function isPostgresUrl(s: string): boolean {
  return /^postgres(ql)?:\/\//i.test(s);
}

/** A connection URI without its password, for messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== "") u.password = "***";
    return u.toString();
  } catch {
    return url.replace(/:[^:@/]*@/, ":***@");
  }
}

/** How messages name a PostgreSQL source: its URI without password, and the table or "query". */
export function describePostgres(source: PostgresInput): string {
  return `${redactUrl(source.url)} ${source.table !== undefined ? `table ${source.table}` : "query"}`;
}

/**
 * Checks a file before a reader opens it. @throws DataError: missing, unreadable, a directory,
 * or empty.
 */
export async function checkFile(path: string): Promise<number> {
  let size: number;
  try {
    const st = await stat(path);
    if (st.isDirectory()) throw new DataError(`${path} is a directory, not a table file.`, { file: path });
    size = st.size;
  } catch (e) {
    if (e instanceof DataError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? "no such file" : code === "EACCES" ? "permission denied" : (e as Error).message;
    throw new DataError(`Cannot read ${path}: ${why}.`, { file: path, cause: e });
  }
  if (size === 0) throw new DataError(`${path} is empty: expected a header row and data rows.`, { file: path });
  return size;
}

/** A typed cell as text: blank for null/NaN, integers exact, dates in UTC (see {@link SourceType}). */
export function cellOf(v: unknown, type: SourceType | undefined): string {
  if (v === null || v === undefined) return "";
  switch (typeof v) {
    case "string":
      return v;
    case "bigint":
      return v.toString();
    case "number":
      if (!Number.isFinite(v)) return "";
      if (type === "timestamp" || type === "date") return datetimeText(v, type);
      return Object.is(v, -0) ? "0" : String(v);
    case "boolean":
      return v ? "true" : "false";
  }
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("utf8");
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? "" : datetimeText(v.getTime(), type === "date" ? "date" : "timestamp");
  return JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? x.toString() : x));
}

/** Milliseconds since the epoch as `yyyy-MM-dd` (dates) or `yyyy-MM-dd HH:mm:ss.SSS`, in UTC. */
export function datetimeText(ms: number, type: "timestamp" | "date"): string {
  const iso = new Date(ms).toISOString();
  return type === "date" ? iso.slice(0, 10) : `${iso.slice(0, 10)} ${iso.slice(11, 23)}`;
}

/**
 * JSON Lines (jsonlines.org): one JSON object per line, blank lines skipped. The header is the
 * first object's keys; a later object's key not among them is a DataError, a key left out is blank.
 * Strings as they are, numbers as JavaScript writes them, booleans `true`/`false`, null blank,
 * nested values as JSON. A `.gz` name is read through gunzip.
 */
export function jsonLinesRows(path: string, onProgress?: (p: ReadProgress) => void): TableRows {
  const out: TableRows = { types: [], batches: jsonLines() };
  async function* jsonLines(): AsyncGenerator<RowBatch> {
    const size = await checkFile(path);
    const file = createReadStream(path);
    const bytes = path.toLowerCase().endsWith(".gz") ? file.pipe(createGunzip()) : file;
    file.on("error", (e) => bytes.destroy(e));
    const lines = createInterface({ input: bytes, crlfDelay: Infinity });
    let header: string[] | undefined;
    let index = new Map<string, number>();
    let batch: RowBatch = { rows: [], lines: [] };
    let line = 0;
    let rows = 0;
    try {
      for await (const text of lines) {
        line++;
        if (text.trim() === "") continue;
        let v: unknown;
        try {
          v = JSON.parse(text);
        } catch (e) {
          throw new DataError(`${path} line ${line} is not JSON (${(e as Error).message}).`, { file: path, line, cause: e });
        }
        if (v === null || typeof v !== "object" || Array.isArray(v)) {
          throw new DataError(`${path} line ${line} is not a JSON object of column values.`, { file: path, line });
        }
        const record = v as Record<string, unknown>;
        if (header === undefined) {
          header = Object.keys(record);
          index = new Map(header.map((h, i) => [h, i]));
          yield { rows: [header.slice()], lines: [1] };
        }
        const row = new Array<string>(header.length).fill("");
        for (const k in record) {
          const c = index.get(k);
          if (c === undefined) {
            throw new DataError(`${path} line ${line} has the key "${k}", which the first record (the header) lacks.`, { file: path, line, column: k });
          }
          row[c] = cellOf(record[k], undefined);
        }
        batch.rows.push(row);
        batch.lines.push(line);
        if (batch.rows.length >= BATCH_ROWS) {
          rows += batch.rows.length;
          yield batch;
          batch = { rows: [], lines: [] };
          onProgress?.({ rows, fraction: Math.min(1, file.bytesRead / size) });
        }
      }
    } catch (e) {
      if (e instanceof DataError) throw e;
      throw new DataError(`Cannot read ${path} as JSON Lines: ${(e as Error).message}.`, { file: path, cause: e });
    } finally {
      lines.close();
      bytes.destroy();
      file.destroy();
    }
    if (batch.rows.length > 0) {
      rows += batch.rows.length;
      yield batch;
    }
    onProgress?.({ rows, fraction: 1 });
  }
  return out;
}
