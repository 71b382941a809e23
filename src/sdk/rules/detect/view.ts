/**
 * One column as rule detection sees it ({@link Col}: value ids, codes, parsed numbers), and the
 * helpers every kind of rule shares.
 */
import type { EncodedTable, ScannedTable } from "../../metadata/encoded";
import type { ColumnCodec, ColumnScan } from "../../columns";

/** One column as detection sees it. */
export interface Col {
  /** Index in the encoded table. */
  f: number;
  name: string;
  codec: ColumnCodec;
  scan: ColumnScan;
  /** Value id -> code. */
  code: Int32Array;
  /** Value id of the blank value, or -1. */
  blank: number;
  /** Distinct values, the blank one included. */
  nv: number;
  /** Distinct non-blank values. */
  nonBlank: number;
  /** Numerical and datetime: value id -> number (datetime: epoch seconds), NaN for blank. */
  num?: Float64Array;
}

export function columnsOf(scanned: ScannedTable, enc: EncodedTable): Col[] {
  return enc.codecs.map((codec, f) => {
    const c = scanned.columns.indexOf(codec.name);
    if (c < 0) throw new Error(`internal: the scan has no column "${codec.name}"`);
    const scan = scanned.scans[c];
    const nv = scan.values.length;
    const code = new Int32Array(nv);
    let blank = -1;
    for (let id = 0; id < nv; id++) {
      const v = scan.values[id];
      if (v === "") blank = id;
      code[id] = codec.encode(v);
    }
    let num: Float64Array | undefined;
    if (codec.kind === "numerical" || (codec.kind === "datetime" && codec.datetime)) {
      num = new Float64Array(nv);
      for (let id = 0; id < nv; id++) {
        const v = scan.values[id];
        num[id] = v === "" ? NaN : codec.kind === "numerical" ? Number(v) : (codec.datetime!.parse(v)?.seconds ?? NaN);
      }
    }
    return { f, name: codec.name, codec, scan, code, blank, nv, nonBlank: nv - (blank >= 0 ? 1 : 0), num };
  });
}

/** Fixed-combinations columns have a code book of values: categorical, or point-binned. */
export function combinable(c: Col): boolean {
  if (c.codec.kind === "id" || c.codec.fromDomain) return false;
  if (c.codec.kind === "categorical") return c.codec.stats.count > 0;
  return c.codec.stats.bin_edges === undefined;
}

/** The first row (by index) that breaks a declared rule, with what to say about it. */
export interface Breach {
  row: number;
  column: string;
  detail: string;
}

/** Union-find over indices. */
export function unionFind(size: number): { find: (i: number) => number; union: (i: number, j: number) => void } {
  const parent = Array.from({ length: size }, (_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]];
    return i;
  };
  return { find, union: (i, j) => void (parent[find(j)] = find(i)) };
}

/** Value of sorted `x` at quantile p (linear between order statistics). */
export function quantile(x: Float64Array, p: number): number {
  const h = (x.length - 1) * p;
  const i = Math.floor(h);
  return i + 1 < x.length ? x[i] + (h - i) * (x[i + 1] - x[i]) : x[i];
}

/** [lo, hi] of sorted `x` with `trim` of the values left out at each end. */
export function trimmedRange(x: Float64Array, trim: number): [number, number] {
  const k = Math.floor(trim * x.length);
  return [x[k], x[x.length - 1 - k]];
}
