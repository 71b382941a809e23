/** The binary output formats of `./formats`: Arrow IPC file (`./arrow-file`) and Parquet. */
import { createWriteStream } from "node:fs";
import { open } from "node:fs/promises";
import { Readable, type Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { Metadata } from "../../contract";
import { MAX_ROWS_PER_REQUEST } from "../../contract";
import type { DecodedBatch } from "../generate/batch";
import { ArrowFileBatches, arrowFile } from "./arrow-file";
import { writeChunks } from "./file-writes";
import { BatchConverter } from "./typed";

/** `./parquet/writer`, loaded for the first Parquet file, not for Arrow. */
function parquetWriter(): typeof import("./parquet/writer") {
  return require("./parquet/writer");
}

/** Options of {@link writeColumnar} (`writeTables`' in `./formats`, binary formats only). */
export interface ColumnarOptions {
  format: "arrow" | "parquet";
  /** The model's metadata: column names and types. */
  metadata: Metadata;
  /** Parquet: rows per row group (1..1,048,576). Default 100,000. */
  rowGroupRows?: number;
}

/**
 * Writes decoded `batches` as Arrow or Parquet to a path (created or truncated when the first batch
 * is converted) or a stream (left open); `writeTables` pulls the first batch before calling this.
 * An error of the batches fails the write (the file then ends without a footer).
 * @throws RangeError for a bad `rowGroupRows` (before the file is created); DataError when a value
 *   does not fit its column's type (column and row named); the batches' and destination's errors.
 */
export async function writeColumnar(
  dest: string | Writable,
  batches: AsyncGenerator<DecodedBatch>,
  opts: ColumnarOptions,
): Promise<number> {
  const converter = new BatchConverter(opts.metadata);
  let count = 0;
  const describeFrom =
    (at: number) =>
    (r: number): string =>
      `row ${at + r + 1} of the output`;
  let bytes: Readable;
  let sink: Writable | undefined;
  if (opts.format === "arrow" && typeof dest === "string") {
    // A path: each record batch's bytes written, and the write awaited, before its memory goes
    // back to the batch's pool (`DecodedBatch.arrays`) for the next batch.
    const file = new ArrowFileBatches(converter, opts.metadata);
    const out = await open(dest, "w");
    try {
      await writeChunks(out, file.start());
      for await (const b of batches) {
        const at = count;
        count += b.length;
        const { chunks, buffers } = file.write(b, describeFrom(at));
        await writeChunks(out, chunks);
        b.arrays?.give(buffers);
        b.release();
      }
      await writeChunks(out, file.close());
    } finally {
      await out.close();
    }
    return count;
  }
  if (opts.format === "arrow") {
    const file = new ArrowFileBatches(converter, opts.metadata);
    async function* counted(): AsyncGenerator<DecodedBatch> {
      for await (const b of batches) {
        yield b;
        count += b.length;
      }
    }
    bytes = arrowFile(file, counted(), describeFrom);
  } else {
    const writer = new (parquetWriter().ParquetWriter)(converter, opts.rowGroupRows ?? MAX_ROWS_PER_REQUEST);
    // The magic goes out before any batch is converted, so a later failure leaves a Parquet file
    // cut short (magic, row groups, no footer), never an empty one.
    if (typeof dest === "string") {
      const file = await open(dest, "w");
      try {
        await file.write(writer.start());
      } catch (e) {
        await file.close();
        throw e;
      }
      sink = file.createWriteStream();
    }
    const magicInStream = sink === undefined; // a caller's stream gets the magic with the rest
    async function* parquetBytes(): AsyncGenerator<Uint8Array> {
      if (magicInStream) yield writer.start();
      for await (const b of batches) {
        const at = count;
        count += b.length;
        yield* writer.write(b, describeFrom(at));
      }
      yield* writer.end();
    }
    // One row group ahead of the destination at most.
    bytes = Readable.from(parquetBytes(), { highWaterMark: 1 });
  }
  await pipeline(bytes, sink ?? (typeof dest === "string" ? createWriteStream(dest) : dest), { end: typeof dest === "string" });
  return count;
}
