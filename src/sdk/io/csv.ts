/**
 * Table input and output for the SDK: a streaming CSV reader (csv-parse behind a strict UTF-8
 * check, never the file as one string), the in-memory {@link Table}, a CSV writer (csv-stringify).
 * Structural problems (missing or unreadable file, empty file, header only, empty or duplicate
 * header names, too few columns, a ragged record, malformed quoting, bytes that are not UTF-8) are
 * a {@link DataError} naming the file and line (or offset). The first record is the header;
 * names and values are trimmed; empty lines are skipped; a UTF-8 BOM is dropped.
 */
import { createReadStream, createWriteStream } from "node:fs";
import { basename } from "node:path";
import { Readable, type Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { TextDecoder } from "node:util";
import { createGunzip } from "node:zlib";
import { DataError } from "../errors";
import { DecodeText, Utf8Check, decoderFor } from "./text-decoding";
import { isJoined, joinRows } from "./record-join";
import {
  BATCH_ROWS,
  checkFile,
  describePostgres,
  inputFormatOfPath,
  isPostgresUrl,
  redactUrl,
  jsonArrayRows,
  jsonLinesRows,
  type FileInput,
  type JoinedFileInput,
  type PostgresInput,
  type ReadProgress,
  type RowBatch,
  type SourceType,
  type TableRows,
} from "./inputs";

/** csv-parse, loaded by the first read (`synthd sample` reads no CSV). */
function csvParse(): typeof import("csv-parse") {
  return require("csv-parse");
}

/** csv-stringify, loaded by the first {@link writeCsv} (the CLI writes with `./csv-writer`). */
function csvStringify(): typeof import("csv-stringify") {
  return require("csv-stringify");
}

/** A table in memory: `columns` are the header names, `rows[r][c]` the value of column c, row r. */
export interface Table {
  columns: string[];
  rows: string[][];
}

/**
 * Where a table comes from: a file path (its format from its name: `./inputs`), a file in a given
 * format, a file joined with rows in memory (`./record-join`), a PostgreSQL table or query, or a
 * {@link Table} already in memory.
 */
export type TableSource = string | Table | FileInput | JoinedFileInput | PostgresInput;

/** Options of {@link readTable}. */
export interface ReadOptions {
  /** Fewer header columns than this is a DataError. Default 1. */
  minColumns?: number;
  /** Trim values (default true; header names always). Seed tables keep their cells with `false`. */
  trim?: boolean;
  /** One-character field delimiter. Default: {@link detectDelimiter} (files only). */
  delimiter?: string;
  /**
   * A WHATWG encoding label of Node's TextDecoder: `utf-8` (default, strict: a non-UTF-8 byte is a
   * DataError naming its offset), `latin1` / `iso-8859-1` (read as windows-1252, as the Encoding
   * Standard says), `windows-1252`, `iso-8859-15`, `utf-16le`.
   * @throws RangeError (from {@link readTable}) for a label TextDecoder does not know.
   */
  encoding?: string;
  /** Called after each batch of records read (not for in-memory tables). */
  onProgress?: (p: ReadProgress) => void;
}

/** The delimiters {@link detectDelimiter} chooses among, in order of preference on a tie. */
export const DELIMITERS = [",", "\t", ";", "|"] as const;

/** Lines of the file's head {@link detectDelimiter} looks at. */
const DETECT_LINES = 50;
/** Bytes of a file read for delimiter detection. */
const DETECT_BYTES = 64 * 1024;

/**
 * Detects a CSV text's field delimiter among {@link DELIMITERS} from its first lines, counting each
 * candidate outside double quotes per line: the one found the same number of times (at least once)
 * on the most lines wins, then the one found more often on the header, then the earlier; none
 * found: a comma. A consistency test like Python's `csv.Sniffer`, kept to four candidates.
 * @param complete true when `head` is the whole text (its last line is complete).
 */
export function detectDelimiter(head: string, complete = false): string {
  const counts: number[][] = [];
  let row = DELIMITERS.map(() => 0);
  let quoted = false;
  let lineHasText = false;
  for (let i = 0; i < head.length && counts.length < DETECT_LINES; i++) {
    const ch = head[i];
    if (ch === '"') quoted = !quoted;
    else if (!quoted && (ch === "\n" || ch === "\r")) {
      if (lineHasText) counts.push(row);
      row = DELIMITERS.map(() => 0);
      lineHasText = false;
      continue;
    } else if (!quoted) {
      const d = DELIMITERS.indexOf(ch as (typeof DELIMITERS)[number]);
      if (d >= 0) row[d]++;
    }
    lineHasText = true;
  }
  if (complete && lineHasText && !quoted && counts.length < DETECT_LINES) counts.push(row);
  if (counts.length === 0) return ",";
  let best = -1;
  let bestScore = [0, 0];
  DELIMITERS.forEach((_, d) => {
    const header = counts[0][d];
    if (header === 0) return;
    const same = counts.filter((c) => c[d] === header).length;
    if (same > bestScore[0] || (same === bestScore[0] && header > bestScore[1])) {
      best = d;
      bestScore = [same, header];
    }
  });
  return best < 0 ? "," : DELIMITERS[best];
}

/**
 * Called once with the (trimmed, validated) header and, from a typed source (Parquet, Arrow,
 * PostgreSQL), what each column's type says (`./inputs` SourceType; else all undefined).
 */
export type HeaderCallback = (header: string[], types: readonly (SourceType | undefined)[]) => void;
/** Called per data record with its trimmed values and its 1-based line number in the file. */
export type RowCallback = (values: string[], line: number) => void;

const IN_MEMORY = "the in-memory table";

/** Human name of a source for messages: its path, its PostgreSQL URI (no password) and table, or "the in-memory table". */
export function describeSource(source: TableSource): string {
  if (typeof source === "string") return source;
  if ("path" in source) return source.path;
  if ("url" in source) return describePostgres(source);
  return IN_MEMORY;
}

/** `metadata.source.name` of a source: a file's base name, a PostgreSQL table's name, else "". */
export function sourceName(source: TableSource): string {
  if (typeof source === "string") return isPostgresUrl(source) ? "" : basename(source);
  if ("path" in source) return basename(source.path);
  if ("url" in source) return source.table ?? "";
  return "";
}

/** The `file` of a DataError from a {@link describeSource} name; undefined for in-memory tables. */
export function fileOfDescription(name: string): string | undefined {
  return name === IN_MEMORY || isPostgresUrl(name) ? undefined : name;
}

/**
 * Streams a table record by record; returns the number of data rows (header excluded).
 * @throws DataError for every structural problem listed in the module comment.
 */
export async function readTable(
  source: TableSource,
  onHeader: HeaderCallback,
  onRow: RowCallback,
  opts: ReadOptions = {},
): Promise<number> {
  const rows = tableRows(source, opts);
  return readRecords(describeSource(source), fileOf(source), onHeader, onRow, opts, async (accept) => {
    for await (const b of rows.batches) for (let i = 0; i < b.rows.length; i++) accept(b.rows[i], b.lines[i]);
  }, rows.types);
}

/**
 * The records of any {@link TableSource} in batches, header record first (`./inputs`): CSV and
 * gzip CSV by csv-parse, the other formats by their readers, an in-memory table as it is, a
 * joined file's records joined (`./record-join`).
 * @throws DataError (when iterated) for a source that cannot be read; RangeError for a PostgreSQL
 *   URI given as a path (use a PostgresInput with its table or query).
 */
export function tableRows(source: TableSource, opts: ReadOptions = {}): TableRows {
  if (typeof source === "string") {
    if (isPostgresUrl(source)) throw new RangeError(`${redactUrl(source)}: a PostgreSQL source needs its table or query: {url, table} or {url, query}.`);
    source = { path: source };
  }
  if ("rows" in source && "columns" in source) {
    const table = source;
    async function* memory(): AsyncGenerator<RowBatch> {
      yield { rows: [table.columns.slice()], lines: [1] };
      for (let r0 = 0; r0 < table.rows.length; r0 += BATCH_ROWS) {
        const part = table.rows.slice(r0, r0 + BATCH_ROWS);
        yield { rows: part.map((r) => r.map((v) => (v === null || v === undefined ? "" : String(v)))), lines: part.map((_, i) => r0 + i + 2) };
      }
    }
    return { batches: memory(), types: [] };
  }
  if (isJoined(source)) {
    const { join, ...file } = source;
    return joinRows(tableRows(file, opts), join, source.path);
  }
  if ("path" in source) {
    const format = source.format ?? inputFormatOfPath(source.path);
    if (format === "csv" || format === "csv.gz") return { batches: csvBatches(source.path, { ...opts, gzip: format === "csv.gz" }), types: [] };
  }
  return typedRows(source as FileInput | PostgresInput, opts.onProgress);
}

/**
 * {@link readTable} over CSV text in memory (same rules and errors; no UTF-8 check; a BOM dropped).
 * @param name how messages name the text (default "the CSV text").
 */
export async function readCsvText(
  text: string,
  onHeader: HeaderCallback,
  onRow: RowCallback,
  opts: ReadOptions & { name?: string } = {},
): Promise<number> {
  const name = opts.name ?? "the CSV text";
  return readRecords(name, undefined, onHeader, onRow, opts, async (accept) => {
    const delimiter = opts.delimiter ?? detectDelimiter(text.slice(0, DETECT_BYTES), text.length <= DETECT_BYTES);
    const parser = csvParse().parse({ info: true, relax_column_count: true, skip_empty_lines: true, bom: true, delimiter });
    parser.end(text);
    try {
      for await (const item of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) accept(item.record, item.info.lines);
    } catch (e) {
      parser.destroy();
      throw toDataError(e, name, undefined);
    }
  });
}

/** The record rules shared by the readers: header checks, ragged rows, trimming, counts. */
async function readRecords(
  name: string,
  file: string | undefined,
  onHeader: HeaderCallback,
  onRow: RowCallback,
  opts: ReadOptions,
  feed: (accept: (record: string[], line: number) => void) => Promise<void>,
  types: readonly (SourceType | undefined)[] = [],
): Promise<number> {
  let header: string[] | undefined;
  let rows = 0;
  const trim = opts.trim !== false;
  const accept = (record: string[], line: number): void => {
    if (header === undefined) {
      header = checkHeader(record.map((v) => v.trim()), name, opts.minColumns ?? 1, file);
      onHeader(header, header.map((_, c) => types[c]));
      return;
    }
    if (record.length !== header.length) {
      throw new DataError(
        `${name}: line ${line} has ${record.length} field${record.length === 1 ? "" : "s"} but the header has ${header.length}.`,
        { file, line },
      );
    }
    if (trim) for (let i = 0; i < record.length; i++) record[i] = record[i].trim();
    rows++;
    onRow(record, line);
  };
  await feed(accept);
  if (header === undefined) throw new DataError(`${name} is empty: expected a header row and data rows.`, { file });
  if (rows === 0) throw new DataError(`${name} has a header but no data rows.`, { file, line: 2 });
  return rows;
}

function fileOf(source: TableSource): string | undefined {
  if (typeof source === "string") return isPostgresUrl(source) ? undefined : source;
  return "path" in source ? source.path : undefined;
}

/**
 * Name of a first column whose header is empty: the row names R's `write.csv` and pandas' `to_csv`
 * write (pandas reads such a column back under this name).
 */
export const UNNAMED_FIRST_COLUMN = "Unnamed: 0";

/**
 * Checks a trimmed header: names non-empty and distinct, at least `minColumns`; an empty first
 * name (row names) becomes {@link UNNAMED_FIRST_COLUMN}. @throws DataError naming line 1.
 */
export function checkHeader(header: string[], name: string, minColumns: number, file: string | undefined): string[] {
  const seen = new Map<string, number>();
  if (header.length > 1 && header[0] === "") header[0] = UNNAMED_FIRST_COLUMN;
  header.forEach((h, i) => {
    if (h === "") throw new DataError(`${name}: header column ${i + 1} has an empty name.`, { file, line: 1 });
    const prev = seen.get(h);
    if (prev !== undefined) {
      throw new DataError(`${name}: the header names column "${h}" twice (columns ${prev + 1} and ${i + 1}).`, {
        file,
        line: 1,
        column: h,
      });
    }
    seen.set(h, i);
  });
  if (header.length < minColumns) {
    throw new DataError(
      `${name} has ${header.length} column${header.length === 1 ? "" : "s"}; at least ${minColumns} are needed to model relationships between columns.`,
      { file, line: 1 },
    );
  }
  return header;
}

/** The first `bytes` of a file's text (through gunzip when `gzip`). */
async function headOf(path: string, bytes: number, gzip: boolean): Promise<{ head: Buffer; complete: boolean }> {
  const chunks: Buffer[] = [];
  let length = 0;
  const file = createReadStream(path);
  const input = gzip ? file.pipe(createGunzip()) : file;
  file.on("error", (e) => input.destroy(e));
  let complete = true;
  try {
    for await (const chunk of input as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      length += chunk.length;
      if (length >= bytes) {
        complete = false;
        break;
      }
    }
  } finally {
    input.destroy();
    file.destroy();
  }
  return { head: Buffer.concat(chunks).subarray(0, bytes), complete };
}

/**
 * A CSV file's records in batches, header record first (csv-parse behind the text check; a
 * `.gz` file through node:zlib's gunzip, streamed).
 * @throws DataError (when iterated) for the problems of the module comment and bad gzip data.
 */
export async function* csvBatches(path: string, opts: ReadOptions & { gzip?: boolean } = {}): AsyncGenerator<RowBatch> {
  const decoder = decoderFor(opts.encoding);
  const size = await checkFile(path);
  const gzip = opts.gzip === true;
  let delimiter = opts.delimiter;
  if (delimiter === undefined) {
    let head: { head: Buffer; complete: boolean };
    try {
      head = await headOf(path, DETECT_BYTES, gzip);
    } catch (e) {
      throw toDataError(e, path);
    }
    const text = (decoder ? new TextDecoder(decoder.encoding) : new TextDecoder("utf-8")).decode(head.head);
    delimiter = detectDelimiter(text, head.complete);
  }
  const parser = csvParse().parse({ info: true, relax_column_count: true, skip_empty_lines: true, delimiter });
  const file = createReadStream(path);
  const decode = decoder ? new DecodeText(decoder.encoding) : new Utf8Check(path);
  const piped = gzip ? pipeline(file, createGunzip(), decode, parser) : pipeline(file, decode, parser);
  piped.catch(() => undefined); // the parser's iterator throws the same error
  let batch: RowBatch = { rows: [], lines: [] };
  let records = 0;
  try {
    for await (const item of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      batch.rows.push(item.record);
      batch.lines.push(item.info.lines);
      if (batch.rows.length >= BATCH_ROWS) {
        records += batch.rows.length;
        yield batch;
        batch = { rows: [], lines: [] };
        opts.onProgress?.({ rows: records - 1, fraction: Math.min(1, file.bytesRead / size) });
      }
    }
    await piped;
  } catch (e) {
    throw toDataError(e, path);
  } finally {
    parser.destroy();
    file.destroy();
  }
  records += batch.rows.length;
  if (batch.rows.length > 0) yield batch;
  opts.onProgress?.({ rows: Math.max(0, records - 1), fraction: 1 });
}

function toDataError(e: unknown, path: string, file: string | undefined = path): unknown {
  if (e instanceof DataError) return e;
  const err = e as Error & { code?: string; lines?: number };
  // csv-parse's CsvError: most codes start with CSV_, INVALID_OPENING_QUOTE does not.
  if (typeof err?.code === "string" && (err.code.startsWith("CSV_") || e instanceof csvParse().CsvError)) {
    const line = typeof err.lines === "number" ? err.lines : Number(/line (\d+)/.exec(err.message)?.[1]) || undefined;
    const what = err.code.includes("QUOTE") ? "has malformed quoting" : `cannot be parsed as CSV (${err.message})`;
    return new DataError(`${path}${line ? ` line ${line}` : ""} ${what}.`, { file, line, cause: e });
  }
  if (typeof err?.code === "string" && err.code.startsWith("Z_")) {
    return new DataError(`${path} is not valid gzip data (${err.message}).`, { file: path, cause: e });
  }
  if (typeof err?.code === "string" && err.code.startsWith("E")) {
    return new DataError(`Cannot read ${path}: ${err.message}.`, { file: path, cause: e });
  }
  return e;
}

/**
 * Writes rows as CSV with a header line, via csv-stringify (RFC 4180 quoting; `\n` line ends), to a
 * file path (created or truncated) or a writable stream (left open); returns the rows written.
 */
export async function writeCsv(
  dest: string | Writable,
  columns: string[],
  rows: Iterable<string[]> | AsyncIterable<string[]>,
): Promise<number> {
  async function* batches(): AsyncGenerator<string[][]> {
    let batch: string[][] = [];
    for await (const r of rows as AsyncIterable<string[]>) {
      batch.push(r);
      if (batch.length >= CSV_WRITE_ROWS) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length > 0) yield batch;
  }
  return writeCsvBatches(dest, columns, batches());
}

/** Most rows whose CSV goes to the destination as one buffer. */
export const CSV_WRITE_ROWS = 8192;

/**
 * {@link writeCsv} for rows in batches: each slice of at most {@link CSV_WRITE_ROWS} rows goes out
 * as one buffer (the bytes of piping rows one by one, without a write per row). No batches: the
 * header alone. Returns the rows written.
 */
export async function writeCsvBatches(
  dest: string | Writable,
  columns: string[],
  batches: Iterable<readonly string[][]> | AsyncIterable<readonly string[][]>,
): Promise<number> {
  let count = 0;
  const stringifier = csvStringify().stringify({ header: true, columns, record_delimiter: "\n" });
  const parts: Buffer[] = [];
  stringifier.on("data", (d: Buffer) => parts.push(d));
  const ended = new Promise<void>((resolve, reject) => {
    stringifier.once("end", resolve);
    stringifier.once("error", reject);
  });
  ended.catch(() => undefined); // awaited at the end; an earlier error is thrown by drained()
  // Everything written so far, once the stringifier has passed it on (synchronously, in practice).
  const drained = async (): Promise<Buffer> => {
    while (stringifier.writableLength > 0 || stringifier.readableLength > 0) {
      if (stringifier.errored) throw stringifier.errored;
      await new Promise((r) => setImmediate(r));
    }
    if (stringifier.errored) throw stringifier.errored;
    const out = Buffer.concat(parts);
    parts.length = 0;
    return out;
  };
  async function* text(): AsyncGenerator<Buffer> {
    for await (const batch of batches as AsyncIterable<readonly string[][]>) {
      for (let r0 = 0; r0 < batch.length; r0 += CSV_WRITE_ROWS) {
        const r1 = Math.min(batch.length, r0 + CSV_WRITE_ROWS);
        for (let r = r0; r < r1; r++) stringifier.write(batch[r]);
        count += r1 - r0;
        yield await drained();
      }
    }
    stringifier.end();
    await ended;
    const rest = Buffer.concat(parts);
    if (rest.length > 0) yield rest;
  }
  if (typeof dest === "string") {
    await pipeline(Readable.from(text()), createWriteStream(dest));
  } else {
    await pipeline(Readable.from(text()), dest, { end: false });
  }
  return count;
}

/** Writes a {@link Table} as CSV (see {@link writeCsv}). */
export function writeTableCsv(table: Table, dest: string | Writable): Promise<number> {
  return writeCsv(dest, table.columns, table.rows);
}

/**
 * The records of a non-CSV source (CSV goes through `./csv`'s csv-parse stream).
 * @throws DataError (when iterated) for a file that cannot be read as its format.
 */
function typedRows(source: FileInput | PostgresInput, onProgress?: (p: ReadProgress) => void): TableRows {
  if ("url" in source) return (require("./postgres-input") as typeof import("./postgres-input")).postgresRows(source, onProgress);
  const format = source.format ?? inputFormatOfPath(source.path);
  switch (format) {
    case "jsonl":
      return jsonLinesRows(source.path, onProgress);
    case "json":
      return jsonArrayRows(source.path, onProgress);
    case "parquet":
      return (require("./typed-inputs") as typeof import("./typed-inputs")).parquetRows(source.path, onProgress);
    case "arrow":
      return (require("./typed-inputs") as typeof import("./typed-inputs")).arrowRows(source.path, onProgress);
    default:
      throw new RangeError(`internal: ${format} is read by the CSV reader`);
  }
}
