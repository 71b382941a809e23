/**
 * Parquet's RLE / bit-packing hybrid encoding (apache/parquet-format `Encodings.md`, "Run Length
 * Encoding / Bit-Packing Hybrid (RLE = 3)"), for definition levels and dictionary indices: a
 * bit-packed run is varint(groups << 1 | 1), then groups * 8 values of `width` bits packed from
 * each byte's least significant bit up; an RLE run is varint(count << 1), then the value in
 * ceil(width / 8) bytes, little endian. Only the last run of a stream may hold fewer real values,
 * zero-padded. Bit-packed runs hold at most {@link MAX_GROUPS} groups, so their headers are one
 * byte (as parquet-mr and Arrow write them).
 */
import type { ByteSink } from "./bytes";

/** The widest values {@link writeHybrid} packs (a 32-bit accumulator: a value and 7 bits). */
export const MAX_WIDTH = 24;
/** Groups of 8 values per bit-packed run at most (63: the run header then fits one byte). */
export const MAX_GROUPS = 63;

/** Bits to write every integer in [0, max]: 0 for max <= 0, else floor(log2(max)) + 1. */
export function bitWidth(max: number): number {
  return max <= 0 ? 0 : 32 - Math.clz32(max);
}

/**
 * Writes `values[0 .. count)` (each in [0, 2^width)) in the hybrid encoding, no length prefix.
 * Repeats are looked for in whole groups of 8 aligned to the start (one comparison for most
 * groups): a row of single-value groups becomes an RLE run when shorter ({@link rleGroups}),
 * everything else is bit-packed.
 * @param width bits per value, 0..24 (dictionary indices of up to 2^24 entries).
 * @throws RangeError for a width above 24.
 */
export function writeHybrid(out: ByteSink, values: Int32Array, count: number, width: number): void {
  if (!(width >= 0 && width <= MAX_WIDTH)) throw new RangeError(`bit width ${width} is not in [0, ${MAX_WIDTH}]`);
  const full = count - (count & 7); // values in whole groups
  const minGroups = rleGroups(width);
  let literals = 0; // values [literals, g) wait to be bit-packed
  let g = 0;
  while (g < full) {
    const x = values[g];
    if (!sameGroup(values, g, x)) {
      g += 8;
      continue;
    }
    let h = g + 8;
    while (h < full && values[h] === x && sameGroup(values, h, x)) h += 8;
    if (h - g >= 8 * minGroups) {
      if (g > literals) writeBitPacked(out, values, literals, g, width);
      writeRle(out, x, h - g, width);
      literals = h;
    }
    g = h;
  }
  if (literals < count) writeBitPacked(out, values, literals, count, width);
}

/** Whether values[g + 1 .. g + 8) all equal `x` (= values[g]). */
function sameGroup(values: Int32Array, g: number, x: number): boolean {
  return values[g + 1] === x && values[g + 2] === x && values[g + 3] === x && values[g + 4] === x && values[g + 5] === x && values[g + 6] === x && values[g + 7] === x;
}

/** The fewest groups of 8 equal values worth an RLE run (its header, value, one more header). */
export function rleGroups(width: number): number {
  return Math.floor((2 + ((width + 7) >> 3)) / Math.max(1, width)) + 1;
}

/** One RLE run: `count` times `value`. */
function writeRle(out: ByteSink, value: number, count: number, width: number): void {
  out.varint(count * 2);
  for (let b = 0; b < width; b += 8) out.byte(value >>> b);
}

/** Bit-packed runs of `values[from .. to)` (a multiple of 8 unless `to` ends the stream). */
function writeBitPacked(out: ByteSink, values: Int32Array, from: number, to: number, width: number): void {
  for (let s = from; s < to; ) {
    const e = Math.min(to, s + MAX_GROUPS * 8);
    const groups = (e - s + 7) >> 3;
    out.varint(groups * 2 + 1);
    out.ensure(groups * width);
    const buf = out.buf;
    let p = out.pos;
    const end = s + groups * 8;
    let acc = 0;
    let bits = 0;
    // acc holds fewer than 8 bits before a value is added: at most 31 bits after (width <= 24).
    for (let k = s; k < e; k++) {
      acc |= values[k] << bits;
      bits += width;
      while (bits >= 8) {
        buf[p++] = acc;
        acc >>>= 8;
        bits -= 8;
      }
    }
    // The last group's padding: zeros.
    for (bits += width * (end - e); bits > 0; bits -= 8) {
      buf[p++] = acc;
      acc >>>= 8;
    }
    out.pos = p;
    s = e;
  }
}

/**
 * Definition levels of a flat OPTIONAL column as data page v1 holds them: their byte length (4
 * bytes, LE), then the hybrid encoding, width 1. `defs` undefined: all `count` values present.
 */
export function writeDefinitionLevels(out: ByteSink, defs: Int32Array | undefined, count: number): void {
  const at = out.pos;
  out.u32(0);
  if (defs === undefined) {
    if (count > 0) writeRle(out, 1, count, 1);
  } else writeHybrid(out, defs, count, 1);
  out.u32At(at, out.pos - at - 4);
}
