/**
 * Input formats of `synthd fit` and the SDK (docs/formats.md "Input formats"): CSV (plain or gzip),
 * JSON Lines, Parquet, Arrow IPC and a PostgreSQL table or query. Every reader yields the table as
 * text records in batches ({@link RowBatch}), header record first, so extraction reads every source
 * the same way; typed sources also say each column's {@link SourceType}. The typed readers live in
 * `./typed-inputs` and `./postgres-input`, loaded by `./csv` only for their formats.
 */
import { createReadStream } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { createInterface } from "node:readline";
import { createGunzip } from "node:zlib";
import { extname } from "node:path";
import { DataError } from "../errors";

/** A file format a table is read from. */
export type InputFormat = "csv" | "csv.gz" | "jsonl" | "json" | "parquet" | "arrow";

/** Every {@link InputFormat}, for flag validation and messages. */
export const INPUT_FORMATS: readonly InputFormat[] = Object.freeze(["csv", "csv.gz", "jsonl", "json", "parquet", "arrow"]);

/** File name endings (lower case) that name an input format; longest first. */
const INPUT_ENDINGS: readonly [string, InputFormat][] = [
  [".csv.gz", "csv.gz"],
  [".tsv.gz", "csv.gz"],
  [".jsonl", "jsonl"],
  [".ndjson", "jsonl"],
  [".json", "json"],
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
 * `.ndjson`, `.json` (an array of records), `.parquet`/`.pq`, `.arrow`/`.feather`/`.ipc`; anything else is CSV (`.csv`, `.tsv`,
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

/** A JSON value read from a record's place, as an object of column values. @throws DataError */
function recordOf(v: unknown, path: string, line: number, where: string): Record<string, unknown> {
  if (v === null || typeof v !== "object" || Array.isArray(v)) {
    throw new DataError(`${path} ${where} is not a JSON object of column values.`, { file: path, line });
  }
  return v as Record<string, unknown>;
}

/** The records of a JSON Lines file with their 1-based lines; blank lines skipped. @throws DataError */
async function* jsonLineRecords(path: string, onBytes?: (read: number) => void): AsyncGenerator<[Record<string, unknown>, number]> {
  const file = createReadStream(path);
  const bytes = path.toLowerCase().endsWith(".gz") ? file.pipe(createGunzip()) : file;
  file.on("error", (e) => bytes.destroy(e));
  const lines = createInterface({ input: bytes, crlfDelay: Infinity });
  let line = 0;
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
      yield [recordOf(v, path, line, `line ${line}`), line];
      onBytes?.(file.bytesRead);
    }
  } catch (e) {
    if (e instanceof DataError) throw e;
    throw new DataError(`Cannot read ${path} as JSON Lines: ${(e as Error).message}.`, { file: path, cause: e });
  } finally {
    lines.close();
    bytes.destroy();
    file.destroy();
  }
}

/**
 * Batches of records whose header is every key any record has, in the order keys first appear
 * (a record may leave keys out: exports of APIs and vega's `countries.json` do); a left-out key
 * or null is blank. `records()` is called twice: once for the keys, once for the cells.
 */
async function* keyedBatches(
  records: () => AsyncIterable<[Record<string, unknown>, number]>,
  onProgress: ((p: ReadProgress) => void) | undefined,
  fraction: () => number,
): AsyncGenerator<RowBatch> {
  const index = new Map<string, number>();
  for await (const [record] of records()) for (const k in record) if (!index.has(k)) index.set(k, index.size);
  const header = [...index.keys()];
  yield { rows: [header], lines: [1] };
  let batch: RowBatch = { rows: [], lines: [] };
  let rows = 0;
  for await (const [record, line] of records()) {
    const row = new Array<string>(header.length).fill("");
    for (const k in record) row[index.get(k)!] = cellOf(record[k], undefined);
    batch.rows.push(row);
    batch.lines.push(line);
    if (batch.rows.length >= BATCH_ROWS) {
      rows += batch.rows.length;
      yield batch;
      batch = { rows: [], lines: [] };
      onProgress?.({ rows, fraction: fraction() });
    }
  }
  if (batch.rows.length > 0) {
    rows += batch.rows.length;
    yield batch;
  }
  onProgress?.({ rows, fraction: 1 });
}

/**
 * JSON Lines (jsonlines.org): one JSON object per line, blank lines skipped. The header is every
 * key of any object, in the order keys first appear (a first pass reads the keys); a key an object
 * leaves out is blank. Strings as they are, numbers as JavaScript writes them, booleans
 * `true`/`false`, null blank, nested values as JSON. A `.gz` name is read through gunzip.
 * @throws DataError (when iterated) naming the line that is not a JSON object.
 */
export function jsonLinesRows(path: string, onProgress?: (p: ReadProgress) => void): TableRows {
  let size = 1;
  let read = 0;
  async function* batches(): AsyncGenerator<RowBatch> {
    size = await checkFile(path);
    yield* keyedBatches(() => jsonLineRecords(path, (b) => (read = b)), onProgress, () => Math.min(1, read / size));
  }
  return { types: [], batches: batches() };
}

/** Largest JSON array file read (it is parsed whole); larger tables go in JSON Lines. */
export const MAX_JSON_BYTES = 256 * 1024 * 1024;

/**
 * A JSON file holding one array of objects (vega-datasets' and most web APIs' tables), parsed
 * whole, at most {@link MAX_JSON_BYTES}. Header and cells as {@link jsonLinesRows}; a record's
 * line is its index + 2, as for the other typed sources.
 * @throws DataError (when iterated) for a file that is not such an array, or too large.
 */
export function jsonArrayRows(path: string, onProgress?: (p: ReadProgress) => void): TableRows {
  let n = 1;
  let at = 0;
  async function* batches(): AsyncGenerator<RowBatch> {
    const size = await checkFile(path);
    if (size > MAX_JSON_BYTES) {
      throw new DataError(`${path} is ${Math.round(size / 2 ** 20)} MiB of JSON; a JSON array is read whole, up to ${MAX_JSON_BYTES / 2 ** 20} MiB: write the table as JSON Lines (one object per line) instead.`, { file: path });
    }
    const text = await readFile(path, "utf8");
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch (e) {
      throw new DataError(`${path} is not JSON (${(e as Error).message}).`, { file: path, cause: e });
    }
    if (!Array.isArray(v)) throw new DataError(`${path} is not a JSON array of records: a table is [{"column": value, ...}, ...].`, { file: path });
    const items = v as unknown[];
    n = Math.max(1, items.length);
    async function* records(): AsyncGenerator<[Record<string, unknown>, number]> {
      for (let i = 0; i < items.length; i++) {
        at = i + 1;
        yield [recordOf(items[i], path, i + 2, `record ${i + 1}`), i + 2];
      }
    }
    yield* keyedBatches(records, onProgress, () => at / n);
  }
  return { types: [], batches: batches() };
}
