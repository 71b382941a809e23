/**
 * Table input and output for the SDK: a streaming CSV reader (csv-parse behind a strict UTF-8
 * check, never the file as one string), the in-memory {@link Table}, a CSV writer (csv-stringify).
 * Structural problems (missing or unreadable file, empty file, header only, empty or duplicate
 * header names, too few columns, a ragged record, malformed quoting, bytes that are not UTF-8) are
 * a {@link DataError} naming the file and line (or offset). The first record is the header;
 * names and values are trimmed; empty lines are skipped; a UTF-8 BOM is dropped.
 */
import { createReadStream, createWriteStream } from "node:fs";
import { stat } from "node:fs/promises";
import { Readable, type Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { open } from "node:fs/promises";
import { TextDecoder } from "node:util";
import { DataError } from "../errors";
import { DecodeText, Utf8Check, decoderFor } from "./text-decoding";

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

/** Where a table comes from: a CSV file path, or a {@link Table} already in memory. */
export type TableSource = string | Table;

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

/** Called once with the (trimmed, validated) header. */
export type HeaderCallback = (header: string[]) => void;
/** Called per data record with its trimmed values and its 1-based line number in the file. */
export type RowCallback = (values: string[], line: number) => void;

const IN_MEMORY = "the in-memory table";

/** Human name of a source for messages: its path, or "the in-memory table". */
export function describeSource(source: TableSource): string {
  return typeof source === "string" ? source : IN_MEMORY;
}

/** The `file` of a DataError from a {@link describeSource} name; undefined for in-memory tables. */
export function fileOfDescription(name: string): string | undefined {
  return name === IN_MEMORY ? undefined : name;
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
  return readRecords(describeSource(source), fileOf(source), onHeader, onRow, opts, async (accept) => {
    if (typeof source === "string") {
      await streamCsv(source, accept, opts);
    } else {
      accept(source.columns.slice(), 1);
      source.rows.forEach((r, i) => accept(r.map((v) => (v === null || v === undefined ? "" : String(v))), i + 2));
    }
  });
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
): Promise<number> {
  let header: string[] | undefined;
  let rows = 0;
  const trim = opts.trim !== false;
  const accept = (record: string[], line: number): void => {
    if (header === undefined) {
      header = checkHeader(record.map((v) => v.trim()), name, opts.minColumns ?? 1, file);
      onHeader(header);
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
  return typeof source === "string" ? source : undefined;
}

function checkHeader(header: string[], name: string, minColumns: number, file: string | undefined): string[] {
  const seen = new Map<string, number>();
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

async function streamCsv(path: string, accept: (record: string[], line: number) => void, opts: ReadOptions = {}): Promise<void> {
  const decoder = decoderFor(opts.encoding);
  let size: number;
  try {
    const st = await stat(path);
    if (st.isDirectory()) throw new DataError(`${path} is a directory, not a CSV file.`, { file: path });
    size = st.size;
  } catch (e) {
    if (e instanceof DataError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? "no such file" : code === "EACCES" ? "permission denied" : (e as Error).message;
    throw new DataError(`Cannot read ${path}: ${why}.`, { file: path, cause: e });
  }
  if (size === 0) throw new DataError(`${path} is empty: expected a header row and data rows.`, { file: path });

  let delimiter = opts.delimiter;
  if (delimiter === undefined) {
    const fh = await open(path, "r");
    try {
      const buf = Buffer.alloc(Math.min(size, DETECT_BYTES));
      const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
      const head = (decoder ? new TextDecoder(decoder.encoding) : new TextDecoder("utf-8")).decode(buf.subarray(0, bytesRead));
      delimiter = detectDelimiter(head, bytesRead >= size);
    } finally {
      await fh.close();
    }
  }
  const parser = csvParse().parse({ info: true, relax_column_count: true, skip_empty_lines: true, delimiter });
  const consume = (async () => {
    for await (const item of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      accept(item.record, item.info.lines);
    }
  })();
  try {
    const decode = decoder ? new DecodeText(decoder.encoding) : new Utf8Check(path);
    await Promise.all([pipeline(createReadStream(path), decode, parser), consume]);
  } catch (e) {
    parser.destroy();
    await consume.catch(() => undefined);
    throw toDataError(e, path);
  }
}

function toDataError(e: unknown, path: string, file: string | undefined = path): unknown {
  if (e instanceof DataError) return e;
  const err = e as Error & { code?: string; lines?: number };
  if (typeof err?.code === "string" && err.code.startsWith("CSV_")) {
    const line = typeof err.lines === "number" ? err.lines : Number(/line (\d+)/.exec(err.message)?.[1]) || undefined;
    const what = err.code.includes("QUOTE") ? "has malformed quoting" : `cannot be parsed as CSV (${err.message})`;
    return new DataError(`${path}${line ? ` line ${line}` : ""} ${what}.`, { file, line, cause: e });
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
