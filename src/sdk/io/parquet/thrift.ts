/**
 * The writing half of Thrift's compact protocol, as much as Parquet's metadata needs (page headers
 * and FileMetaData), from the compact protocol specification (apache/thrift
 * `doc/specs/thrift-compact-protocol.md`):
 * - A struct is its fields, then a stop byte 0. A field header is one byte `delta << 4 | type` when
 *   its id is 1..15 above the previous field's (fields here go in increasing id order), else the
 *   byte `type` and the id as a zigzag varint.
 * - i16, i32, i64: zigzag varints; binary and string: a varint length and the bytes; bool fields:
 *   the type nibble, 1 true, 2 false; double: 8 bytes little endian.
 * - A list: `size << 4 | element type` for sizes below 15, else `0xF0 | element type` and a varint
 *   size; then the elements without field headers.
 * - A union is a struct with exactly one field set; an empty struct is just the stop byte.
 */
import { ByteSink, zigzag } from "./bytes";

/** Compact protocol type ids (of field headers and list headers). */
export const CT = {
  TRUE: 1,
  FALSE: 2,
  BYTE: 3,
  I16: 4,
  I32: 5,
  I64: 6,
  DOUBLE: 7,
  BINARY: 8,
  LIST: 9,
  SET: 10,
  MAP: 11,
  STRUCT: 12,
} as const;

/** Writes one compact-protocol struct (and what it nests) into a {@link ByteSink}. */
export class CompactWriter {
  /** The id of the last field written in the struct being written. */
  private lastId = 0;
  /** The `lastId`s of the enclosing structs. */
  private readonly stack: number[] = [];

  /** @param out where the bytes go (appended at its end). */
  constructor(readonly out: ByteSink = new ByteSink(256)) {}

  private field(id: number, type: number): void {
    const delta = id - this.lastId;
    if (delta > 0 && delta <= 15) this.out.byte((delta << 4) | type);
    else {
      this.out.byte(type);
      this.out.varint(zigzag(id));
    }
    this.lastId = id;
  }

  /** An i32 (or enum) field. */
  i32(id: number, v: number): this {
    this.field(id, CT.I32);
    this.out.varint(zigzag(v));
    return this;
  }

  /** An i64 field: a safe integer or a bigint. */
  i64(id: number, v: number | bigint): this {
    this.field(id, CT.I64);
    this.out.varint(zigzag(v));
    return this;
  }

  /** A bool field (its value in the header). */
  bool(id: number, v: boolean): this {
    this.field(id, v ? CT.TRUE : CT.FALSE);
    return this;
  }

  /** A binary field: the length as a varint, then the bytes. */
  binary(id: number, v: Uint8Array): this {
    this.field(id, CT.BINARY);
    this.out.varint(v.length);
    this.out.append(v);
    return this;
  }

  /** A string field (a binary of its UTF-8 bytes). */
  string(id: number, v: string): this {
    return this.binary(id, Buffer.from(v, "utf8"));
  }

  /** Starts a struct field: write its fields, then {@link structEnd}. */
  structBegin(id: number): this {
    this.field(id, CT.STRUCT);
    this.stack.push(this.lastId);
    this.lastId = 0;
    return this;
  }

  /** Ends the struct begun last (a struct field or a list element): the stop byte. */
  structEnd(): this {
    this.out.byte(0);
    this.lastId = this.stack.pop() ?? 0;
    return this;
  }

  /** An empty struct field (`StringType {}` and the like). */
  emptyStruct(id: number): this {
    return this.structBegin(id).structEnd();
  }

  /** Starts a list field of `size` elements of compact type `elemType`; write the elements next. */
  listBegin(id: number, elemType: number, size: number): this {
    this.field(id, CT.LIST);
    if (size < 15) this.out.byte((size << 4) | elemType);
    else {
      this.out.byte(0xf0 | elemType);
      this.out.varint(size);
    }
    return this;
  }

  /** An i32 (or enum) list element. */
  elemI32(v: number): this {
    this.out.varint(zigzag(v));
    return this;
  }

  /** An i64 list element. */
  elemI64(v: number | bigint): this {
    this.out.varint(zigzag(v));
    return this;
  }

  /** A string list element. */
  elemString(v: string): this {
    const b = Buffer.from(v, "utf8");
    this.out.varint(b.length);
    this.out.append(b);
    return this;
  }

  /** Starts a struct list element: write its fields, then {@link structEnd}. */
  elemStructBegin(): this {
    this.stack.push(this.lastId);
    this.lastId = 0;
    return this;
  }

  /** Ends the outermost struct (its stop byte) and returns the sink. */
  end(): ByteSink {
    this.out.byte(0);
    return this.out;
  }
}
