/**
 * Output formats of sampled tables (docs/formats.md): CSV (`./csv-writer`), Arrow IPC file
 * (`./arrow-file`) and Parquet (`./parquet/writer`), chosen by name or extension, written batch by
 * batch, front to back (so streams work too). Memory: one decoded batch at a time (Parquet: the row
 * group being filled) plus its bytes; typed arrays come from one pool per sample and go back once
 * written (`DecodedBatch.release`), so a long sample reuses the same memory.
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

/** `./columnar` (apache-arrow), loaded for the first Arrow or Parquet file, not for CSV. */
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
 * Writes decoded batches (each a {@link Table} with the model's columns) to a path (created or
 * truncated) or a writable stream (left open). The first batch is pulled before the file is opened,
 * so an error raised before any row exists leaves no file; a path is written in place.
 * @returns the number of data rows written.
 * @throws whatever the batches throw; DataError when a value does not fit its column's type; the
 *   destination's errors (ENOENT, ENOSPC, EPIPE).
 */
export async function writeTables(dest: string | Writable, tables: AsyncGenerator<Table>, opts: WriteTablesOptions): Promise<number> {
  async function* batches(): AsyncGenerator<DecodedBatch> {
    for await (const t of tables) yield DecodedBatch.fromTable(t);
  }
  return writeBatches(dest, batches(), opts);
}

/**
 * {@link writeTables} of decoded batches held by column (`./batch`): the same bytes for the same
 * cells, without a string per cell where a column's form has none.
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
 * One decoded batch as CSV with a header of `columns` (the bytes `./csv` writeCsv writes for its
 * cells), to a path (created or truncated) or a writable stream (left open); returns its rows.
 */
export function writeDecodedCsv(dest: string | Writable, columns: string[], batch: DecodedBatch): Promise<number> {
  async function* one(): AsyncGenerator<DecodedBatch> {
    yield batch;
  }
  return writeCsvBatches(dest, columns, one());
}

/**
 * The CSV of `batches` with a header of `columns`. A path is written through one file handle from
 * about 1 MiB of memory reused chunk after chunk (`CsvBuffers`), each write awaited before the next
 * chunk; a stream gets fresh memory per batch, since a stream may keep the chunks it is given.
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
