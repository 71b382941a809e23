/**
 * The compute core's twins of the SDK's hottest per-row loops (native/src/csv_rows.cc,
 * native/src/decode_loops.cc): the same bytes and values as the TypeScript loops, which stay the
 * reference and fallback (docs/decisions.md "A native core with a TypeScript reference"). Each is
 * undefined without the addon (`SYNTHD_DISABLE_NATIVE=1` turns it off) or in a build lacking it.
 */
import { nativeExport } from "../model/compute/native";

/**
 * `csvRows(entries, index, bytes, start, values, blank, n, from, out)`: CSV records of a batch's
 * columns from row `from` into `out` while whole records fit; returns `[nextRow, bytesWritten,
 * badColumn]` (`./io/csv-writer`; shapes and errors in native/src/csv_rows_binding.cc).
 */
export type CsvRowsFn = (
  entries: Uint8Array,
  index: (Int32Array | null)[],
  bytes: (Uint8Array | null)[],
  start: (Int32Array | null)[],
  values: (Float64Array | null)[],
  blank: (Uint8Array | null)[],
  n: number,
  from: number,
  out: Uint8Array,
) => [number, number, number];

/**
 * `latticeValues(codes, missingCode, nb, edges, first, last, unit, state, values, blank)`: the
 * lattice decode of an integer column (`./columns/bins`), drawing from the sfc32 stream whose
 * words `state` holds (`Rng.saveState`) and leaving the stream's words after the draws there.
 * @returns the blank rows, or -(r + 1) for the first row r whose code is out of range.
 * @throws TypeError / RangeError for wrong types or lengths (native/src/decode_loops_binding.cc).
 */
export type LatticeValuesFn = (
  codes: Int32Array,
  missingCode: number | undefined,
  nb: number,
  edges: Float64Array,
  first: Float64Array,
  last: Float64Array,
  unit: number,
  state: Int32Array,
  values: Float64Array,
  blank: Uint8Array,
) => number;

/**
 * `int64Halves(values, blank, halves)`: each safe integer as two 32-bit halves, low first, 0 for a
 * blank (`./io/typed`); false at the first value that is not a safe integer.
 */
export type Int64HalvesFn = (values: Float64Array, blank: Uint8Array | null | undefined, halves: Int32Array) => boolean;

/** The native loops the SDK uses, each undefined where the addon is missing. */
export interface NativeLoops {
  csvRows?: CsvRowsFn;
  latticeValues?: LatticeValuesFn;
  int64Halves?: Int64HalvesFn;
}

let loops: NativeLoops | undefined;

/** The native loops, loading the addon on first use. */
export function nativeLoops(): NativeLoops {
  loops ??= {
    csvRows: nativeExport<CsvRowsFn>("csvRows"),
    latticeValues: nativeExport<LatticeValuesFn>("latticeValues"),
    int64Halves: nativeExport<Int64HalvesFn>("int64Halves"),
  };
  return loops;
}
