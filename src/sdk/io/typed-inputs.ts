/**
 * The typed file readers of `./inputs`: Parquet (hyparquet, one row group at a time; pages in
 * every codec of parquet-format through hyparquet-compressors, its author's companion package:
 * Snappy, GZIP, Brotli, ZSTD, LZ4 and LZ4_RAW) and Arrow IPC files
 * (apache-arrow's RecordBatchReader, one record batch at a time). Each column's type becomes a
 * {@link SourceType} (docs/formats.md "Input formats") and each cell text by `cellOf`.
 */
import { open } from "node:fs/promises";
import type { AsyncBuffer, FileMetaData, SchemaElement } from "hyparquet";
import { DataError } from "../errors";
import { BATCH_ROWS, cellOf, checkFile, type ReadProgress, type RowBatch, type SourceType, type TableRows } from "./inputs";
import { arrow } from "./arrow-runtime";

/** hyparquet (ESM, required as Node 20.19+ allows), loaded by the first Parquet read. */
function hyparquet(): typeof import("hyparquet") & { asyncBufferFromFile(path: string): Promise<AsyncBuffer> } {
  return require("hyparquet");
}

/** The {@link SourceType} of a Parquet leaf column (parquet-format LogicalTypes.md). */
export function parquetSourceType(el: SchemaElement): SourceType | undefined {
  const logical = el.logical_type?.type;
  const converted = el.converted_type;
  if (logical === "TIMESTAMP" || converted === "TIMESTAMP_MILLIS" || converted === "TIMESTAMP_MICROS" || el.type === "INT96") return "timestamp";
  if (logical === "DATE" || converted === "DATE") return "date";
  if (logical === "ENUM" || converted === "ENUM") return "dictionary";
  if (logical === "DECIMAL" || converted === "DECIMAL") return "decimal";
  if (logical === "STRING" || converted === "UTF8" || el.type === "BYTE_ARRAY" || el.type === "FIXED_LEN_BYTE_ARRAY") return "text";
  if (el.type === "INT32" || el.type === "INT64") return "integer";
  if (el.type === "FLOAT" || el.type === "DOUBLE") return "float";
  if (el.type === "BOOLEAN") return "boolean";
  return undefined;
}

/**
 * The columns a pandas DataFrame held as `category` (pandas' `to_parquet` writes its schema as JSON
 * under the key `pandas`: `columns[i].pandas_type` "categorical", named by `field_name`); empty
 * when the file has no such metadata or it does not parse.
 */
export function pandasCategories(meta: Pick<FileMetaData, "key_value_metadata">): Set<string> {
  const text = meta.key_value_metadata?.find((kv) => kv.key === "pandas")?.value;
  const out = new Set<string>();
  if (typeof text !== "string") return out;
  try {
    const schema = JSON.parse(text) as { columns?: { name?: unknown; field_name?: unknown; pandas_type?: unknown }[] };
    for (const c of Array.isArray(schema.columns) ? schema.columns : []) {
      const name = typeof c?.field_name === "string" ? c.field_name : c?.name;
      if (c?.pandas_type === "categorical" && typeof name === "string") out.add(name);
    }
  } catch {
    // Not pandas' JSON: the column types alone decide.
  }
  return out;
}

/** Page decompressors (file header), loaded by the first Parquet read. */
function compressors(): import("hyparquet").Compressors {
  return (require("hyparquet-compressors") as typeof import("hyparquet-compressors")).compressors;
}

/** A reader's error as a DataError naming the file. */
function fileError(e: unknown, path: string, format: string): DataError {
  if (e instanceof DataError) return e;
  return new DataError(`Cannot read ${path} as ${format}: ${(e as Error).message}.`, { file: path, cause: e });
}

/** {@link parquetRows}' records; `groupRows` (rows per row group) is set with `types`. */
export interface ParquetRows extends TableRows {
  batches: AsyncGenerator<RowBatch>;
  groupRows?: number[];
}

/** A Parquet file's header, column types and rows per row group (its footer only). @throws DataError as {@link parquetRows}. */
export async function parquetLayout(path: string): Promise<{ header: string[]; types: (SourceType | undefined)[]; groupRows: number[] }> {
  const out = parquetRows(path, undefined, [0, 0]);
  const first = await out.batches.next();
  await out.batches.return(undefined);
  const header = first.done ? [] : first.value.rows[0];
  return { header, types: out.types, groupRows: out.groupRows ?? [] };
}

/**
 * A Parquet file's records, row group by row group (one group's rows in memory at a time); with
 * `groups` [first, end), those row groups only (lines stay the file's: row index + 2).
 * @throws DataError (when iterated): not Parquet, a nested column, an unsupported codec.
 */
export function parquetRows(path: string, onProgress?: (p: ReadProgress) => void, groups?: [number, number]): ParquetRows {
  const out: ParquetRows = { types: [], batches: read() };
  async function* read(): AsyncGenerator<RowBatch> {
    await checkFile(path);
    const hp = hyparquet();
    const codecs = compressors();
    let file: AsyncBuffer;
    let meta: FileMetaData;
    try {
      file = await hp.asyncBufferFromFile(path);
      meta = await hp.parquetMetadataAsync(file);
    } catch (e) {
      throw fileError(e, path, "Parquet");
    }
    const root = meta.schema[0];
    const leaves = meta.schema.slice(1);
    if (leaves.some((el) => (el.num_children ?? 0) > 0) || leaves.length !== (root.num_children ?? 0)) {
      const nested = leaves.find((el) => (el.num_children ?? 0) > 0)?.name ?? "?";
      throw new DataError(`${path}: column "${nested}" is nested (a struct, list or map); only flat tables can be read.`, { file: path, column: nested });
    }
    const header = leaves.map((el) => el.name);
    const categories = pandasCategories(meta);
    const types = leaves.map((el) => (categories.has(el.name) && el.type === "BYTE_ARRAY" ? "dictionary" : parquetSourceType(el)));
    out.types.push(...types);
    out.groupRows = meta.row_groups.map((g) => Number(g.num_rows));
    yield { rows: [header], lines: [1] };
    const total = Number(meta.num_rows);
    let start = 0;
    for (const [g, group] of meta.row_groups.entries()) {
      const end = start + Number(group.num_rows);
      if (groups && (g < groups[0] || g >= groups[1])) {
        start = end;
        continue;
      }
      let cells: unknown[][] = [];
      try {
        await hp.parquetRead({ file, metadata: meta, rowStart: start, rowEnd: end, compressors: codecs, onComplete: (rows: unknown[][]) => void (cells = rows) });
      } catch (e) {
        throw fileError(e, path, "Parquet");
      }
      for (let r0 = 0; r0 < cells.length; r0 += BATCH_ROWS) {
        const r1 = Math.min(cells.length, r0 + BATCH_ROWS);
        const batch: RowBatch = { rows: new Array(r1 - r0), lines: new Array(r1 - r0) };
        for (let r = r0; r < r1; r++) {
          const src = cells[r];
          const row = new Array<string>(header.length);
          for (let c = 0; c < header.length; c++) row[c] = cellOf(src[c], types[c]);
          batch.rows[r - r0] = row;
          batch.lines[r - r0] = start + r + 2;
        }
        yield batch;
      }
      start = end;
      onProgress?.({ rows: start, fraction: total > 0 ? start / total : 1 });
    }
  }
  return out;
}

/** The {@link SourceType} of an Arrow field's type. */
export function arrowSourceType(type: { typeId: number }): SourceType | undefined {
  const T = arrow.Type;
  switch (type.typeId) {
    case T.Timestamp:
      return "timestamp";
    case T.Date:
      return "date";
    case T.Dictionary:
      return "dictionary";
    case T.Int:
      return "integer";
    case T.Float:
      return "float";
    case T.Decimal:
      return "decimal";
    case T.Bool:
      return "boolean";
    case T.Utf8:
    case T.LargeUtf8:
      return "text";
  }
  return undefined;
}

/** An Arrow Decimal's unscaled digits (`-1250`) with its scale (2) as text (`-12.50`). */
export function scaledText(digits: string, scale: number): string {
  const negative = digits.startsWith("-");
  const abs = (negative ? digits.slice(1) : digits).padStart(scale + 1, "0");
  return `${negative ? "-" : ""}${abs.slice(0, -scale)}.${abs.slice(-scale)}`;
}

/**
 * An Arrow IPC file's (or stream's) records, record batch by record batch.
 * @throws DataError (when iterated): not Arrow IPC, a nested column.
 */
export function arrowRows(path: string, onProgress?: (p: ReadProgress) => void): TableRows {
  const out: TableRows = { types: [], batches: read() };
  async function* read(): AsyncGenerator<RowBatch> {
    await checkFile(path);
    const fh = await open(path, "r");
    try {
      let reader;
      try {
        reader = await arrow.RecordBatchReader.from(fh);
        await reader.open();
      } catch (e) {
        throw fileError(e, path, "Arrow IPC");
      }
      const fields = reader.schema.fields;
      const T = arrow.Type;
      const nested = fields.find((f) => f.type.typeId === T.Struct || f.type.typeId === T.List || f.type.typeId === T.Map);
      if (nested) throw new DataError(`${path}: column "${nested.name}" is nested (a struct, list or map); only flat tables can be read.`, { file: path, column: nested.name });
      const header = fields.map((f) => f.name);
      const types = fields.map((f) => arrowSourceType(f.type));
      const scales = fields.map((f) => (f.type.typeId === T.Decimal ? (f.type as { scale: number }).scale : 0));
      out.types.push(...types);
      yield { rows: [header], lines: [1] };
      const batches = reader.isFile() ? reader.numRecordBatches : 0;
      let rows = 0;
      let done = 0;
      const it = reader[Symbol.asyncIterator]();
      for (;;) {
        let next;
        try {
          next = await it.next();
        } catch (e) {
          throw fileError(e, path, "Arrow IPC");
        }
        if (next.done) break;
        const b = next.value;
        const columns = header.map((_, c) => b.getChildAt(c)!);
        for (let r0 = 0; r0 < b.numRows; r0 += BATCH_ROWS) {
          const r1 = Math.min(b.numRows, r0 + BATCH_ROWS);
          const batch: RowBatch = { rows: new Array(r1 - r0), lines: new Array(r1 - r0) };
          for (let r = r0; r < r1; r++) {
            const row = new Array<string>(header.length);
            for (let c = 0; c < header.length; c++) {
              const v = columns[c].get(r);
              row[c] = scales[c] > 0 && v !== null ? scaledText(String(v), scales[c]) : cellOf(v, types[c]);
            }
            batch.rows[r - r0] = row;
            batch.lines[r - r0] = rows + r + 2;
          }
          yield batch;
        }
        rows += b.numRows;
        done++;
        onProgress?.({ rows, ...(batches > 0 ? { fraction: Math.min(1, done / batches) } : {}) });
      }
    } finally {
      await fh.close();
    }
  }
  return out;
}
