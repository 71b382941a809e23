/**
 * Values as Parquet pages and statistics hold them (apache/parquet-format `Encodings.md`, PLAIN;
 * parquet.thrift `Statistics` and `ColumnOrder`), for `./columns`.
 */
import type { ColumnType } from "../typed";
import { ByteSink } from "./bytes";

/** A value as a page holds it: UTF-8 bytes, a bigint (INT64), a number (DOUBLE, INT32, INT64). */
export type PageValue = Uint8Array | bigint | number;

/** Statistics of a column chunk's values: min and max as PLAIN bytes (strings without a length). */
export interface Stats {
  min?: Uint8Array;
  max?: Uint8Array;
  /** DOUBLE columns: the number of NaN values. */
  nanCount?: number;
}

/** Unsigned bytewise order of `buf[a .. a + aLen)` and `buf[b .. b + bLen)` (its sign). */
export function compareBytes(buf: Uint8Array, a: number, aLen: number, b: number, bLen: number): number {
  const n = Math.min(aLen, bLen);
  for (let i = 0; i < n; i++) {
    const d = buf[a + i] - buf[b + i];
    if (d !== 0) return d;
  }
  return aLen - bLen;
}

/** One value, PLAIN, little endian: strings with a 4-byte length; INT64, DOUBLE 8; INT32 4. */
export function writeValue(out: ByteSink, type: ColumnType, v: PageValue | string): void {
  switch (type) {
    case "string":
      if (typeof v === "string") {
        const at = out.pos;
        out.u32(0);
        out.utf8(v);
        out.u32At(at, out.pos - at - 4);
      } else {
        const b = v as Uint8Array;
        out.u32(b.length);
        out.append(b);
      }
      return;
    case "int64":
    case "timestamp":
      out.i64(v as bigint | number);
      return;
    case "float64":
      out.f64(v as number);
      return;
    case "date":
      out.i32(v as number);
      return;
  }
}

/** The 8 bytes (little endian) of a safe integer or bigint as INT64. */
export function int64Bytes(v: bigint | number): Uint8Array {
  const out = new ByteSink(8);
  out.i64(v);
  return out.bytes();
}

/**
 * min_value / max_value of `values` (all present) in the type's order (`ColumnOrder` TYPE_ORDER):
 * strings unsigned bytewise; INT32 and INT64 signed; DOUBLE numeric without NaN (counted in
 * `nanCount`; all NaN: no min or max), a zero minimum written -0.0 and a zero maximum +0.0.
 */
export function statsOf(type: ColumnType, values: readonly (PageValue | string)[]): Stats {
  if (values.length === 0) return {};
  if (type === "string") {
    let min: Uint8Array | undefined;
    let max: Uint8Array | undefined;
    for (const v of values) {
      const b = typeof v === "string" ? Buffer.from(v, "utf8") : (v as Uint8Array);
      if (min === undefined || Buffer.compare(b, min) < 0) min = b;
      if (max === undefined || Buffer.compare(b, max) > 0) max = b;
    }
    return { min, max };
  }
  if (type === "float64") {
    let min = Infinity;
    let max = -Infinity;
    let nanCount = 0;
    for (const v of values as number[]) {
      if (Number.isNaN(v)) nanCount++;
      else {
        if (v < min) min = v;
        if (v > max) max = v;
      }
    }
    if (nanCount === values.length) return { nanCount };
    const bytes = (x: number): Uint8Array => {
      const out = new ByteSink(8);
      out.f64(x);
      return out.bytes();
    };
    return { min: bytes(min === 0 ? -0 : min), max: bytes(max === 0 ? 0 : max), nanCount };
  }
  let min = values[0] as bigint | number;
  let max = min;
  for (const v of values as (bigint | number)[]) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
  if (type === "date") {
    const lo = new ByteSink(4);
    lo.i32(min as number);
    const hi = new ByteSink(4);
    hi.i32(max as number);
    return { min: lo.bytes(), max: hi.bytes() };
  }
  return { min: int64Bytes(min), max: int64Bytes(max) };
}
