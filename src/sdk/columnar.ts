/**
 * The binary output formats of `./formats`: the Arrow IPC file format (apache-arrow) and Parquet
 * (parquet-wasm), written batch by batch from decoded batches (`./batch`) typed by `./typed`. parquet-wasm is
 * loaded on the first Parquet file only, so the SDK and the CLI start without WebAssembly.
 */
import { createWriteStream } from "node:fs";
import { Readable, type Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { AsyncByteQueue, RecordBatchFileWriter, RecordBatchStreamWriter, type RecordBatch } from "apache-arrow";
import type * as ParquetWasm from "parquet-wasm/node/parquet_wasm";
import type { Metadata } from "../types";
import { MAX_ROWS_PER_REQUEST } from "../types";
import type { DecodedBatch } from "./batch";
import { BatchConverter } from "./typed";

/** Options of {@link writeColumnar} (those of `writeTables` in `./formats`, binary formats only). */
export interface ColumnarOptions {
  format: "arrow" | "parquet";
  /** The model's metadata: column names and types. */
  metadata: Metadata;
  /** Parquet: rows per row group (1..1,048,576). Default 100,000. */
  rowGroupRows?: number;
}

/**
 * Writes decoded `batches` (`./batch`) as Arrow or Parquet to a path (created or truncated when the first batch is
 * converted) or a stream (left open). See `writeTables` in `./formats`, which pulls the first
 * batch before calling this.
 * @returns the number of data rows written.
 * @throws RangeError for a bad `rowGroupRows`; DataError when a value does not fit its column's
 *   type (column and row of the output named); the batches' and the destination's errors.
 */
export async function writeColumnar(
  dest: string | Writable,
  batches: AsyncGenerator<DecodedBatch>,
  opts: ColumnarOptions,
): Promise<number> {
  const converter = new BatchConverter(opts.metadata);
  let count = 0;
  async function* recordBatches(): AsyncGenerator<RecordBatch> {
    for await (const b of batches) {
      const at = count;
      yield converter.fromBatch(b, (r) => `row ${at + r + 1} of the output`);
      count += b.length;
    }
  }
  const bytes = opts.format === "arrow" ? arrowFile(converter, recordBatches()) : await parquetFile(recordBatches(), opts.rowGroupRows ?? MAX_ROWS_PER_REQUEST);
  await pipeline(bytes, typeof dest === "string" ? createWriteStream(dest) : dest, { end: typeof dest === "string" });
  bytes.rethrow?.();
  return count;
}

/** A byte stream that may hold an error its pipeline could not see (checked after it ends). */
type Bytes = Readable & { rethrow?: () => void };

/**
 * Receives the bytes a RecordBatchFileWriter writes, synchronously, so that they can be handed to
 * the destination batch by batch with its backpressure (the writer's own Node stream accepts
 * batches without waiting for the destination). Passed to `writer.reset(sink)`, which uses an
 * AsyncByteQueue sink as is.
 */
class Collected extends AsyncByteQueue {
  private chunks: Uint8Array[] = [];
  override write(value: Parameters<AsyncByteQueue["write"]>[0]): void {
    if (value instanceof Uint8Array && value.byteLength > 0) this.chunks.push(value);
  }
  /** The bytes written since the last call. */
  take(): Uint8Array[] {
    const out = this.chunks;
    this.chunks = [];
    return out;
  }
}

/** The Arrow IPC file of `batches` (schema `converter.schema`), one record batch per batch. */
function arrowFile(converter: BatchConverter, batches: AsyncGenerator<RecordBatch>): Bytes {
  async function* bytes(): AsyncGenerator<Uint8Array> {
    const sink = new Collected();
    const writer = new RecordBatchFileWriter();
    writer.reset(sink, converter.schema);
    for await (const b of batches) {
      writer.write(b);
      yield* sink.take();
    }
    writer.close();
    yield* sink.take();
  }
  return Readable.from(bytes());
}

let parquetWasm: typeof ParquetWasm | undefined;

/** parquet-wasm's Node build, loaded (and its WebAssembly compiled) on first use. */
function loadParquetWasm(): typeof ParquetWasm {
  // The package's "exports" map names the Node build "parquet-wasm/node"; TypeScript's CommonJS
  // resolution reads the types from the file itself.
  return (parquetWasm ??= require("parquet-wasm/node") as typeof ParquetWasm);
}

/**
 * The Parquet file of `batches`: each Arrow batch is handed to WebAssembly as an IPC stream, and
 * parquet-wasm's async writer closes a row group every `rowGroupRows` rows.
 *
 * parquet-wasm's output stream ends normally, with a valid footer, when its input stream fails
 * (checked with parquet-wasm 0.8.0: a failed 5th batch gave a readable file of 4 row groups). So
 * an error of the batches is kept here and rethrown by `rethrow()` after the pipeline, never lost.
 */
async function parquetFile(batches: AsyncGenerator<RecordBatch>, rowGroupRows: number): Promise<Bytes> {
  if (!(Number.isInteger(rowGroupRows) && rowGroupRows >= 1 && rowGroupRows <= 1_048_576)) {
    throw new RangeError("rowGroupRows must be an integer in [1, 1048576]");
  }
  const pq = loadParquetWasm();
  let error: { e: unknown } | undefined;
  const input = new ReadableStream(
    {
      async pull(controller) {
        try {
          const r = await batches.next();
          if (r.done) return controller.close();
          const table = pq.Table.fromIPCStream(RecordBatchStreamWriter.writeAll([r.value]).toUint8Array(true));
          const batch = table.recordBatch(0);
          table.free();
          controller.enqueue(batch);
        } catch (e) {
          error = { e };
          controller.error(e);
        }
      },
      async cancel() {
        await batches.return(undefined);
      },
    },
    { highWaterMark: 0 },
  );
  const props = new pq.WriterPropertiesBuilder().setCompression(pq.Compression.SNAPPY).setMaxRowGroupSize(rowGroupRows).build();
  const output = (await pq.transformParquetStream(input, props)) as ReadableStream<Uint8Array>;
  const bytes: Bytes = Readable.from(output);
  bytes.rethrow = () => {
    if (error) throw error.e;
  };
  return bytes;
}
