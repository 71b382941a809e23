/**
 * Output formats of sampled tables (docs/formats.md): CSV, Apache Parquet and the Arrow IPC file format,
 * chosen by name or by the file's extension, written batch by batch as the SDK generates them.
 *
 * - CSV: `./csv-writer` (the bytes csv-stringify writes in `./csv`'s `writeCsv`, built per batch
 *   without a string per cell of a code-book or integer column), every value the decoded text.
 * - Arrow (`.arrow`, `.feather`, `.ipc`): the Arrow IPC *file* format (magic `ARROW1`, a footer
 *   indexing the batches; Feather v2 is the same format), written by our own IPC writer
 *   (`./io/arrow-ipc`) from the columns' buffers, one record batch per generated batch,
 *   uncompressed, categorical columns as `Dictionary<Int32, Utf8>` (`./io/arrow-file`). Readers:
 *   `tableFromIPC` (apache-arrow), `pyarrow.ipc.open_file`, `pandas.read_feather`, DuckDB, Polars.
 * - Parquet (`.parquet`, `.pq`): our own writer (`./io/parquet/writer`), uncompressed,
 *   dictionary pages with RLE / bit-packed indices for code-book columns and integers of few
 *   values, PLAIN otherwise, statistics, and the Arrow schema embedded (so Arrow readers get the
 *   same types back). A row group is closed every `rowGroupRows` rows (default 100,000 = the
 *   largest generate batch, so with the SDK's default batch size one row group per generated
 *   batch).
 * Columns are typed from the model's metadata (`./typed`: strings, Int64, Float64, Timestamp(ms,
 * UTC) or Date32, blanks as null). The Arrow and Parquet writers are called from `./columnar`.
 *
 * Memory: CSV holds one decoded batch and, to a path, a chunk of about 1 MiB reused for the whole
 * file (a stream gets each batch's bytes in fresh memory). Arrow holds one decoded batch and its
 * Arrow copy (about 16 MB for 100,000 rows of the 15 Adult columns) and waits for the destination
 * before asking for the next batch. Parquet holds the decoded batches of the row group being
 * filled, that row group's bytes (1.5 MB for 100,000 rows of Adult) and buffers of one column
 * chunk reused from column to column. Batches from `Synthesizer` (the CLI's) take their typed
 * arrays from one pool per sample (`../client/array-pool`) and give them back once written
 * (`DecodedBatch.release`), so a long sample touches the same memory batch after batch. Measured
 * numbers: docs/formats.md.
 *
 * Binary formats go to streams (stdout) as well as files: both writers write front to back and
 * never seek.
 */
import type { Metadata } from "../../contract";
import { open } from "node:fs/promises";
import { Readable, type Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { DecodedBatch } from "../generate/batch";
import type { Table } from "./csv";
import { CsvBuffers, csvChunks, csvHeader, csvRecords } from "./csv-writer";
import { writeAll } from "./file-writes";
import type { OutputFormat } from "./format-names";

export { OUTPUT_FORMATS, OUTPUT_EXTENSIONS, chooseFormat, formatOfPath, type OutputFormat } from "./format-names";

/** `./columnar`, the Arrow and Parquet writers (apache-arrow), loaded for the first Arrow or Parquet file, not for CSV. */
function columnar(): typeof import("./columnar") {
  return require("./columnar");
}

/** Options of {@link writeTables}. */
export interface WriteTablesOptions {
  format: OutputFormat;
  /** The model's metadata: column names (CSV header) and, for Arrow and Parquet, column types. */
  metadata: Metadata;
  /** Parquet: rows per row group (1..1,048,576). Default 100,000. */
  rowGroupRows?: number;
}

/**
 * Writes decoded batches (each a {@link Table} with the model's columns) to a file path (created
 * or truncated) or a writable stream (left open). The first batch is pulled before the file is
 * opened, so an error raised before any row exists (a bad condition or seed table) leaves no file.
 * A path is written in place: callers that need all-or-nothing files write to a temporary name
 * and rename (as the CLI does).
 * @returns the number of data rows written.
 * @throws whatever the batches throw; DataError when a value does not fit its column's type
 *   (`./typed`; column and row in the message); the destination's errors (ENOENT, ENOSPC, EPIPE).
 */
export async function writeTables(dest: string | Writable, tables: AsyncGenerator<Table>, opts: WriteTablesOptions): Promise<number> {
  async function* batches(): AsyncGenerator<DecodedBatch> {
    for await (const t of tables) yield DecodedBatch.fromTable(t);
  }
  return writeBatches(dest, batches(), opts);
}

/**
 * {@link writeTables} of decoded batches held by column (`./batch`, `Decoder.decodeBatch`): the
 * same bytes for the same cells, without a string per cell where a column's form has none (CSV:
 * `./csv-writer`; Arrow and Parquet: `./columnar`).
 * @returns the number of data rows written.
 * @throws as {@link writeTables}.
 */
export async function writeBatches(dest: string | Writable, batches: AsyncGenerator<DecodedBatch>, opts: WriteTablesOptions): Promise<number> {
  const first = await batches.next();
  async function* all(): AsyncGenerator<DecodedBatch> {
    if (first.done) return;
    yield first.value;
    yield* batches;
  }
  if (opts.format === "csv") return writeCsvBatches(dest, opts.metadata.features, all());
  return columnar().writeColumnar(dest, all(), { ...opts, format: opts.format });
}

/**
 * The CSV of `batches` with a header of `columns` (`./csv-writer`; the bytes of `./csv`'s `writeCsv`).
 * A path is written through one file handle, about 1 MiB at a time, from memory reused chunk
 * after chunk (`CsvBuffers`), each write awaited before the next chunk is written into the same
 * memory; a stream gets fresh memory per batch, since a stream may keep the chunks it is given.
 */
async function writeCsvBatches(dest: string | Writable, columns: string[], batches: AsyncGenerator<DecodedBatch>): Promise<number> {
  let count = 0;
  if (typeof dest === "string") {
    const file = await open(dest, "w");
    try {
      await writeAll(file, csvHeader(columns));
      const buffers = new CsvBuffers();
      for await (const b of batches) {
        count += b.length;
        for (const chunk of csvChunks(b, buffers)) await writeAll(file, chunk);
        b.release();
      }
    } finally {
      await file.close();
    }
    return count;
  }
  async function* bytes(): AsyncGenerator<Buffer> {
    yield csvHeader(columns);
    for await (const b of batches) {
      count += b.length;
      if (b.length > 0) {
        const bytes = csvRecords(b);
        b.release(); // the bytes are a copy
        yield bytes;
      }
    }
  }
  await pipeline(Readable.from(bytes()), dest, { end: false });
  return count;
}
