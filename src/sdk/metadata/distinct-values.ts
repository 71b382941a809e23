/**
 * Pass 1's per-column state (docs/extract.md "Columns with a value per row"): {@link DistinctValues},
 * a column's dictionary (value -> id, count, first line) kept up to a budget; past it the column
 * {@link Overflow}s: only streaming figures are kept (non-blank rows, blanks, whether every value
 * is a number or an integer, a {@link DistinctSketch} of its distinct values) and the values of
 * the bottom-k sample's rows. Pass 2 then encodes such a column row by row with a
 * {@link ValueEncoder} (serialisable, for worker threads) and measures its exact range and moments.
 */
import { binOf, pointValues } from "../columns/bins";
import { isNumeric } from "../columns/common";
import { NumberFormat } from "../columns/number-format";
import type { NumberFormatStats } from "../../contract";
import { DatetimeFormat } from "./datetime";

/** Distinct values a column keeps with their counts before it overflows (per reader). */
export const DISTINCT_BUDGET = 250_000;
/** Bytes (UTF-8) of distinct values a column keeps before it overflows (per reader). */
export const DISTINCT_BYTES = 16 * 2 ** 20;

/** A column's dictionary: values in order of first appearance (id = index), rows and first line of each. */
export class DistinctValues {
  readonly index = new Map<string, number>();
  readonly values: string[] = [];
  readonly counts: number[] = [];
  readonly firstLines: number[] = [];
  /** UTF-8 bytes of the values (an upper bound: 3 per UTF-16 unit above 0x7f). */
  bytes = 0;

  /** The id of `v`, adding it (first seen at `line`) if new, and adds `count` rows to it. */
  add(v: string, line: number, count = 1): number {
    let id = this.index.get(v);
    if (id === undefined) {
      id = this.values.length;
      this.index.set(v, id);
      this.values.push(v);
      this.counts.push(0);
      this.firstLines.push(line);
      this.bytes += v.length * 3;
    }
    this.counts[id] += count;
    return id;
  }

  /** Whether the dictionary has passed `budget` values or {@link DISTINCT_BYTES}. */
  over(budget: number): boolean {
    return this.values.length > budget || this.bytes > DISTINCT_BYTES;
  }
}

/** Registers of {@link DistinctSketch}: 2^14 (standard error 1.04 / 128 = 0.8%). */
const P = 14;
const M = 1 << P;

/**
 * HyperLogLog (Flajolet, Fusy, Gandouet & Meunier, "HyperLogLog: the analysis of a near-optimal
 * cardinality estimation algorithm", 2007) over the 32-bit FNV-1a hash of a value's UTF-8 bytes
 * (the hash the worker threads already compute per cell), mixed by murmur3's finaliser; linear
 * counting below 2.5 m, the 32-bit large-range correction above 2^32 / 30. Registers merge by
 * maximum, so the estimate does not depend on how the rows were split.
 */
export class DistinctSketch {
  constructor(readonly registers: Uint8Array = new Uint8Array(M)) {}

  /** Adds a value by its FNV-1a hash ({@link hashText}, or the byte hash of `./csv-chunks`). */
  addHash(h: number): void {
    const x = mix(h);
    const j = x >>> (32 - P);
    const rank = Math.min(Math.clz32((x << P) | 0) + 1, 32 - P + 1);
    if (rank > this.registers[j]) this.registers[j] = rank;
  }

  merge(other: Uint8Array): void {
    for (let j = 0; j < M; j++) if (other[j] > this.registers[j]) this.registers[j] = other[j];
  }

  /** The estimated number of distinct values added. */
  estimate(): number {
    let sum = 0;
    let zeros = 0;
    for (let j = 0; j < M; j++) {
      sum += 2 ** -this.registers[j];
      if (this.registers[j] === 0) zeros++;
    }
    const alpha = 0.7213 / (1 + 1.079 / M);
    const e = (alpha * M * M) / sum;
    if (e <= 2.5 * M && zeros > 0) return M * Math.log(M / zeros);
    const two32 = 2 ** 32;
    return e > two32 / 30 ? -two32 * Math.log(1 - Math.min(e / two32, 1 - 1e-9)) : e;
  }
}

function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** FNV-1a (32-bit) of the UTF-8 bytes of `s`: the worker threads' byte hash of the same value. */
export function hashText(s: string): number {
  let h = 0x811c9dc5 | 0;
  const byte = (b: number): void => {
    h = Math.imul(h ^ b, 16777619);
  };
  for (let i = 0; i < s.length; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) byte(c);
    else if (c < 0x800) {
      byte(0xc0 | (c >> 6));
      byte(0x80 | (c & 63));
    } else {
      if (c >= 0xd800 && c < 0xdc00 && i + 1 < s.length) {
        const d = s.charCodeAt(i + 1);
        if (d >= 0xdc00 && d < 0xe000) {
          c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
          i++;
          byte(0xf0 | (c >> 18));
          byte(0x80 | ((c >> 12) & 63));
          byte(0x80 | ((c >> 6) & 63));
          byte(0x80 | (c & 63));
          continue;
        }
      }
      byte(0xe0 | (c >> 12));
      byte(0x80 | ((c >> 6) & 63));
      byte(0x80 | (c & 63));
    }
  }
  return h;
}

/** What pass 1 keeps of a column past its budget (structured-clone safe). */
export interface OverflowStats {
  /** Non-blank rows. */
  rows: number;
  blanks: number;
  /** Every non-blank value is a number (`../columns` isNumeric). */
  numeric: boolean;
  /** Every non-blank value is a safe integer written as digits (`^[+-]?\d+$`). */
  integer: boolean;
  /** Every non-blank value ends with ".000" (a typed timestamp in whole seconds, `./table-tally`). */
  wholeSeconds: boolean;
  /** {@link DistinctSketch} registers of the non-blank values. */
  registers: Uint8Array;
}

/** The streaming figures of a column, fed value by value. */
export class Overflow implements OverflowStats {
  rows = 0;
  blanks = 0;
  numeric = true;
  integer = true;
  wholeSeconds = true;
  readonly sketch = new DistinctSketch();
  get registers(): Uint8Array {
    return this.sketch.registers;
  }

  /** Adds `count` rows of value `v` whose FNV-1a hash is `h`. */
  add(v: string, h: number, count = 1): void {
    if (v === "") {
      this.blanks += count;
      return;
    }
    this.rows += count;
    this.sketch.addHash(h);
    if (this.wholeSeconds && !v.endsWith(".000")) this.wholeSeconds = false;
    if (this.numeric && !isNumeric(v)) this.numeric = false;
    if (this.integer && !(this.numeric && isIntegerText(v))) this.integer = false;
  }

  /** Adds another reader's figures. */
  merge(o: OverflowStats): void {
    this.rows += o.rows;
    this.blanks += o.blanks;
    this.numeric &&= o.numeric;
    this.integer &&= o.integer;
    this.wholeSeconds &&= o.wholeSeconds;
    this.sketch.merge(o.registers);
  }

  /** The figures as plain data. */
  stats(): OverflowStats {
    return { rows: this.rows, blanks: this.blanks, numeric: this.numeric, integer: this.integer, wholeSeconds: this.wholeSeconds, registers: this.registers };
  }
}

/** Whether trimmed `v` is a safe integer written as digits. */
export function isIntegerText(v: string): boolean {
  return /^[+-]?\d+$/.test(v) && Number.isSafeInteger(Number(v));
}

/**
 * How pass 2 encodes an overflowed column's value (the code book of `../columns`, as data): an
 * id's one code (and its number when `integer`, for its range); quantile bins over numbers or datetimes in `format` (`dropSuffix` cut first; a
 * value outside the edges, which the sample did not hold, goes to the nearest end bin); or a
 * mapping with its pooled code.
 */
export type ValueEncoder =
  | { kind: "id"; missingCode: number; integer?: boolean }
  | { kind: "bins"; edges: number[]; format?: string; missingCode: number; shift: number; dropSuffix?: string; number?: NumberFormatStats }
  | { kind: "mapping"; mapping: Record<string, number>; otherCode: number; missingCode: number; number?: NumberFormatStats };

/** A value's code under an encoder and its number (NaN when not binned); code -1: it has none. */
export function encoderOf(e: ValueEncoder): (v: string) => { code: number; x: number } {
  if (e.kind === "id") return (v) => ({ code: v === "" ? e.missingCode : 0, x: e.integer && v !== "" ? Number(v) : NaN });
  // A number format's values are looked up as the plain numbers they read as.
  const nf = e.number !== undefined ? new NumberFormat(e.number) : undefined;
  if (e.kind === "mapping") {
    const map = new Map(Object.entries(e.mapping));
    return (v) => ({ code: v === "" ? e.missingCode : (map.get(nf ? (nf.plain(v) ?? v) : v) ?? e.otherCode), x: NaN });
  }
  const fmt = e.format === undefined ? undefined : new DatetimeFormat(e.format);
  const points = pointValues(e.edges);
  const last = e.edges.length - 1;
  const drop = e.dropSuffix;
  return (v) => {
    if (v === "") return { code: e.missingCode, x: NaN };
    if (drop !== undefined && v.endsWith(drop)) v = v.slice(0, -drop.length);
    const x = fmt ? (fmt.parse(v)?.seconds ?? NaN) : nf ? (nf.parse(v) ?? NaN) : isNumeric(v) ? Number(v) : NaN;
    if (Number.isNaN(x)) return { code: -1, x };
    const code = x < e.edges[0] ? 0 : x > e.edges[last] ? last - 1 : binOf(e.edges, points, x);
    return { code, x };
  };
}

/**
 * Range and moments of an overflowed binned column's numbers (pass 2): sums of x - shift and of
 * its squares kept exactly as Shewchuk's non-overlapping partials ("Adaptive precision
 * floating-point arithmetic", 1997; Python's math.fsum), so that the result does not depend on
 * how the rows were split or in which order the parts are merged.
 */
export interface Moments {
  count: number;
  min: number;
  max: number;
  /** Subtracted from each number before it is summed (the sample's mean: no cancellation). */
  shift: number;
  s1: number[];
  s2: number[];
}

/** Empty {@link Moments} around `shift`. */
export function emptyMoments(shift = 0): Moments {
  return { count: 0, min: Infinity, max: -Infinity, shift, s1: [], s2: [] };
}

/** Adds `x` exactly to the partials `p` (Shewchuk's grow-expansion, as math.fsum's loop). */
function addExact(p: number[], x: number): void {
  let i = 0;
  for (let j = 0; j < p.length; j++) {
    let y = p[j];
    if (Math.abs(x) < Math.abs(y)) [x, y] = [y, x];
    const hi = x + y;
    const lo = y - (hi - x);
    if (lo !== 0) p[i++] = lo;
    x = hi;
  }
  p.length = i;
  p.push(x);
}

/** The correctly rounded sum of partials (math.fsum's last step). */
export function sumExact(p: readonly number[]): number {
  let n = p.length;
  if (n === 0) return 0;
  let hi = p[--n];
  let lo = 0;
  while (n > 0) {
    const x = hi;
    const y = p[--n];
    hi = x + y;
    lo = y - (hi - x);
    if (lo !== 0) break;
  }
  if (n > 0 && ((lo < 0 && p[n - 1] < 0) || (lo > 0 && p[n - 1] > 0))) {
    const y = lo * 2;
    const x = hi + y;
    if (y === x - hi) hi = x;
  }
  return hi;
}

/** Adds a number to `m`. */
export function addMoment(m: Moments, x: number): void {
  m.count++;
  if (x < m.min) m.min = x;
  if (x > m.max) m.max = x;
  const d = x - m.shift;
  addExact(m.s1, d);
  addExact(m.s2, d * d);
}

/** `a` and `b` (the same shift) together. */
export function mergeMoments(a: Moments, b: Moments): Moments {
  const s1 = [...a.s1];
  const s2 = [...a.s2];
  for (const x of b.s1) addExact(s1, x);
  for (const x of b.s2) addExact(s2, x);
  return { count: a.count + b.count, min: Math.min(a.min, b.min), max: Math.max(a.max, b.max), shift: a.shift, s1, s2 };
}

/** Mean and population standard deviation of the numbers added. */
export function meanAndStd(m: Moments): { mean: number; std: number } {
  const d = sumExact(m.s1) / m.count;
  return { mean: m.shift + d, std: Math.sqrt(Math.max(0, sumExact(m.s2) / m.count - d * d)) };
}
