/**
 * A Parquet file writer of decoded batches, front to back, never seeking (docs/formats.md
 * "Batching"). Follows apache/parquet-format (`parquet.thrift`, `Encodings.md`): "PAR1", per row
 * group and column a column chunk (`./columns`), FileMetaData (Thrift compact protocol), its
 * length, "PAR1". One OPTIONAL field per column typed as `../typed` says, blanks null;
 * uncompressed; `column_orders` TYPE_ORDER (required with min / max); FileMetaData version 1 (as
 * parquet.thrift advises); `ARROW:schema` (as pyarrow writes) so Arrow readers get the types back.
 */
import { arrow } from "../arrow-runtime";
import type { DecodedBatch } from "../../generate/batch";
import type { BatchConverter, ColumnType } from "../typed";
import { ByteSink } from "./bytes";
import { ColumnEncoder, Encoding, type Part, type Stats } from "./columns";
import { CT, CompactWriter } from "./thrift";

/** parquet.thrift `Type`. */
const PhysicalType = { INT32: 1, INT64: 2, DOUBLE: 5, BYTE_ARRAY: 6 } as const;
/** parquet.thrift `ConvertedType`. */
const ConvertedType = { UTF8: 0, DATE: 6, TIMESTAMP_MILLIS: 9 } as const;
/** parquet.thrift `PageType`. */
const PageType = { DATA_PAGE: 0, DICTIONARY_PAGE: 2 } as const;
/** parquet.thrift `FieldRepetitionType.OPTIONAL`. */
const OPTIONAL = 1;
/** parquet.thrift `CompressionCodec.UNCOMPRESSED`. */
const UNCOMPRESSED = 0;

const PHYSICAL: Record<ColumnType, number> = {
  string: PhysicalType.BYTE_ARRAY,
  int64: PhysicalType.INT64,
  float64: PhysicalType.DOUBLE,
  date: PhysicalType.INT32,
  timestamp: PhysicalType.INT64,
};

/** The file's magic, at its start and at its end. */
const MAGIC = Buffer.from("PAR1", "ascii");

/** What the footer says of one column chunk. */
interface ChunkMeta {
  encoding: number;
  dictOffset?: number;
  dataOffset: number;
  /** Bytes of the chunk's pages, headers included. */
  size: number;
  rows: number;
  nulls: number;
  stats: Stats;
}

interface RowGroupMeta {
  offset: number;
  size: number;
  rows: number;
  chunks: ChunkMeta[];
}

/**
 * Writes a Parquet file of decoded batches, handing back its bytes piece by piece: {@link start},
 * what each {@link write} returns (the row groups it completed), then {@link end}. Holds the
 * batches of the row group being filled (not copies) and a few numbers per column chunk written.
 */
export class ParquetWriter {
  private readonly columns: BatchConverter["columns"];
  /** Bytes handed out so far (the offset of the next byte in the file). */
  private offset = 0;
  private readonly groups: RowGroupMeta[] = [];
  private pending: Part[] = [];
  private pendingRows = 0;
  private readonly encoder: ColumnEncoder;
  /** The size of the last row group (the next one's first guess). */
  private lastSize = 1 << 16;

  /**
   * @param converter the model's typed columns (`../typed`).
   * @param rowGroupRows rows per row group (1..1,048,576).
   * @throws RangeError for a bad `rowGroupRows`.
   */
  constructor(
    private readonly converter: BatchConverter,
    private readonly rowGroupRows: number,
  ) {
    if (!(Number.isInteger(rowGroupRows) && rowGroupRows >= 1 && rowGroupRows <= 1_048_576)) {
      throw new RangeError("rowGroupRows must be an integer in [1, 1048576]");
    }
    this.columns = converter.columns;
    this.encoder = new ColumnEncoder(converter);
  }

  /** The file's first bytes (the magic `PAR1`). */
  start(): Buffer {
    this.offset = MAGIC.length;
    return MAGIC;
  }

  /**
   * Adds the rows of `batch` and returns the row groups they completed, one buffer each. Once a row
   * group holds the batch's last row the batch is released: the caller must not read it after.
   * @throws DataError when a cell does not fit its column's type (column and row named), raised
   *   when the row group holding it is written.
   */
  write(batch: DecodedBatch, describe: (r: number) => string = (r) => `row ${r + 1}`): Buffer[] {
    const out: Buffer[] = [];
    for (let from = 0; from < batch.length; ) {
      const to = Math.min(batch.length, from + this.rowGroupRows - this.pendingRows);
      this.pending.push({ batch, from, to, describe });
      this.pendingRows += to - from;
      from = to;
      if (this.pendingRows === this.rowGroupRows) out.push(this.flush());
    }
    return out;
  }

  /** The last row group (if rows wait) and the footer: the file's last bytes. */
  end(): Buffer[] {
    const out: Buffer[] = [];
    if (this.pendingRows > 0) out.push(this.flush());
    out.push(this.footer());
    return out;
  }

  /** Writes the waiting rows as one row group: each column's pages and headers in one buffer. */
  private flush(): Buffer {
    const parts = this.pending;
    const rows = this.pendingRows;
    this.pending = [];
    this.pendingRows = 0;
    const out = new ByteSink(this.lastSize + 4096);
    const start = this.offset;
    const chunks = this.columns.map((_, j): ChunkMeta => {
      const e = this.encoder.encode(j, parts);
      const chunkStart = out.pos;
      let dictOffset: number | undefined;
      if (e.dict) {
        const { body, count } = e.dict;
        dictOffset = start + out.pos;
        pageHeader(out, PageType.DICTIONARY_PAGE, body.length, (w) => w.structBegin(7).i32(1, count).i32(2, Encoding.PLAIN).structEnd());
        out.append(body);
      }
      const dataOffset = start + out.pos;
      pageHeader(out, PageType.DATA_PAGE, e.data.length, (w) => w.structBegin(5).i32(1, e.rows).i32(2, e.encoding).i32(3, Encoding.RLE).i32(4, Encoding.RLE).structEnd());
      out.append(e.data);
      return { encoding: e.encoding, dictOffset, dataOffset, size: out.pos - chunkStart, rows: e.rows, nulls: e.nulls, stats: e.stats };
    });
    // The group's bytes are a copy: a batch whose last rows they hold is read no more.
    for (const p of parts) if (p.to === p.batch.length) p.batch.release();
    this.groups.push({ offset: start, size: out.pos, rows, chunks });
    this.offset += out.pos;
    this.lastSize = out.pos;
    return out.bytes();
  }

  /** FileMetaData, its length and the closing magic. */
  private footer(): Buffer {
    const w = new CompactWriter(new ByteSink(4096 + 256 * this.groups.length * this.columns.length));
    w.i32(1, 1); // version: 1, as parquet.thrift advises writers
    w.listBegin(2, CT.STRUCT, this.columns.length + 1);
    w.elemStructBegin().string(4, "schema").i32(5, this.columns.length).structEnd();
    for (const c of this.columns) {
      w.elemStructBegin().i32(1, PHYSICAL[c.type]).i32(3, OPTIONAL).string(4, c.name);
      switch (c.type) {
        case "string":
          w.i32(6, ConvertedType.UTF8).structBegin(10).emptyStruct(1).structEnd();
          break;
        case "date":
          w.i32(6, ConvertedType.DATE).structBegin(10).emptyStruct(6).structEnd();
          break;
        case "timestamp":
          // TimestampType { isAdjustedToUTC: true, unit: TimeUnit { MILLIS } }
          w.i32(6, ConvertedType.TIMESTAMP_MILLIS).structBegin(10).structBegin(8).bool(1, true).structBegin(2).emptyStruct(1).structEnd().structEnd().structEnd();
          break;
        default:
          break;
      }
      w.structEnd();
    }
    w.i64(3, this.groups.reduce((n, g) => n + g.rows, 0));
    w.listBegin(4, CT.STRUCT, this.groups.length);
    for (const g of this.groups) {
      w.elemStructBegin().listBegin(1, CT.STRUCT, g.chunks.length);
      g.chunks.forEach((c, j) => this.chunkMeta(w, j, c));
      w.i64(2, g.size).i64(3, g.rows).i64(5, g.offset).i64(6, g.size).structEnd();
    }
    w.listBegin(5, CT.STRUCT, 1).elemStructBegin().string(1, "ARROW:schema").string(2, arrowSchemaBase64(this.converter)).structEnd();
    w.string(6, "synthd");
    w.listBegin(7, CT.STRUCT, this.columns.length);
    for (let j = 0; j < this.columns.length; j++) w.elemStructBegin().emptyStruct(1).structEnd(); // TYPE_ORDER
    const out = w.end();
    const length = out.pos;
    out.u32(length);
    out.append(MAGIC);
    this.offset += out.pos;
    return out.bytes();
  }

  /** A ColumnChunk struct (list element) of column `j`. */
  private chunkMeta(w: CompactWriter, j: number, c: ChunkMeta): void {
    const { type, name } = this.columns[j];
    const dict = c.encoding === Encoding.RLE_DICTIONARY;
    w.elemStructBegin().i64(2, 0).structBegin(3);
    w.i32(1, PHYSICAL[type]);
    const encodings = dict ? [Encoding.PLAIN, Encoding.RLE, Encoding.RLE_DICTIONARY] : [Encoding.PLAIN, Encoding.RLE];
    w.listBegin(2, CT.I32, encodings.length);
    for (const e of encodings) w.elemI32(e);
    w.listBegin(3, CT.BINARY, 1).elemString(name);
    w.i32(4, UNCOMPRESSED).i64(5, c.rows).i64(6, c.size).i64(7, c.size).i64(9, c.dataOffset);
    if (c.dictOffset !== undefined) w.i64(11, c.dictOffset);
    w.structBegin(12).i64(3, c.nulls);
    if (c.stats.max) w.binary(5, c.stats.max);
    if (c.stats.min) w.binary(6, c.stats.min);
    if (c.stats.nanCount !== undefined) w.i64(9, c.stats.nanCount);
    w.structEnd();
    // encoding_stats: one page of each kind
    w.listBegin(13, CT.STRUCT, dict ? 2 : 1);
    if (dict) w.elemStructBegin().i32(1, PageType.DICTIONARY_PAGE).i32(2, Encoding.PLAIN).i32(3, 1).structEnd();
    w.elemStructBegin().i32(1, PageType.DATA_PAGE).i32(2, c.encoding).i32(3, 1).structEnd();
    w.structEnd().structEnd();
  }
}

/** A PageHeader (uncompressed: both sizes `size`) whose page-kind struct `kind` writes. */
function pageHeader(out: ByteSink, type: number, size: number, kind: (w: CompactWriter) => void): void {
  const w = new CompactWriter(out);
  w.i32(1, type).i32(2, size).i32(3, size);
  kind(w);
  w.end();
}

/** The `ARROW:schema` value: base64 of the Arrow IPC schema message of the columns. */
function arrowSchemaBase64(converter: BatchConverter): string {
  const stream = arrow.tableToIPC(new arrow.Table(converter.schema), "stream");
  // The stream is the schema message, then the 8-byte end-of-stream marker.
  return Buffer.from(stream.buffer, stream.byteOffset, stream.length - 8).toString("base64");
}
