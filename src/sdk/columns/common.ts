/**
 * What every column kind shares: the reserved `value_mappings` keys, a column's scan, its code
 * book ({@link ColumnCodec}), a feature's decoder ({@link FeatureDecoder}), the number test and
 * value ranges. Imports nothing of the SDK but `../errors` (and types), so all can import it
 * without a cycle.
 */
import type { ColumnKind, ColumnStats, Metadata, NumberFormatStats, SemanticShapeStats } from "../../contract";
import type { DatetimeFormat } from "../metadata/datetime";
import { APIError } from "../errors";
import type { IdShape } from "../metadata/identifier";
import type { IdValues } from "../generate/id-generator";
import type { Rng } from "../generate/sfc32";
import type { DecodedColumn } from "../generate/batch";
import type { ArrayPool } from "../client/array-pool";

/** `value_mappings` key of the missing (blank) value. */
export const MISSING_KEY = "";
/** `value_mappings` key, and decoded value, of the code that pools rare categorical values. */
export const OTHER = "__other__";

const NUMBER_RE = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
const LEADING_ZERO_RE = /^[+-]?0\d/;
const DECIMALS_RE = /^[+-]?\d*(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

/**
 * True when trimmed `s` is a finite decimal number (`-1.5`, `3e4`, `.5`): not `0x10`, `Infinity`,
 * `1,234`, nor `00501` (a leading zero marks a code such as a ZIP code).
 */
export function isNumeric(s: string): boolean {
  return NUMBER_RE.test(s) && !LEADING_ZERO_RE.test(s) && Number.isFinite(Number(s));
}

/** Decimals a numeric text is written with: `12.80` -> 2, `3` -> 0, `1.5e-3` -> 4, `2e3` -> 0. */
export function decimalsOf(s: string): number {
  const m = DECIMALS_RE.exec(s);
  if (!m) return 0;
  return Math.max(0, (m[1]?.length ?? 0) - (m[2] ? Number(m[2]) : 0));
}

/** What a scan needs of a column's number format (`./number-format`'s `NumberFormat`). */
export interface ScanNumberFormat {
  /** Text in the format -> plain decimal text; undefined when it is no number in the format. */
  plain(text: string): string | undefined;
  /** The contract's form (`column_stats[f].number_format`). */
  stats(): NumberFormatStats;
}

/** One column after the scan: its distinct values, their counts and each row's value id. */
export interface ColumnScan {
  name: string;
  /** Distinct values (trimmed) in order of first appearance; id = index. */
  values: string[];
  /** Rows per distinct value id. */
  counts: number[];
  /** 1-based file line (in-memory tables: row index + 2) where each distinct value first occurs. */
  firstLines: number[];
  /** Value id of each row (length n). */
  ids: Int32Array;
  /** Rows whose value is blank. */
  missing: number;
  /** Every non-blank value is numeric (and there is at least one). */
  numeric: boolean;
  /**
   * Set when the values were written with a number format (`./number-format`): `values` are then
   * the plain decimals they read as (`$1,234.50` -> `1234.50`).
   */
  numberFormat?: ScanNumberFormat;
  /** With `numberFormat`: per value id as read (before formatted values merged), its id in `values`. */
  readIds?: Int32Array;
  /** With `numberFormat`: per value id, the text it was first written as (`$1,234.50`). */
  written?: string[];
  /** The text the column wrote for a missing value (`NA`), read as a blank (`withMissingText`). */
  missingText?: string;
  /**
   * Set when the column had more distinct values than extraction keeps (docs/extract.md):
   * `values`, `counts` and `missing` are then a sample's of `rows` rows; `distinct` estimates the
   * table's distinct non-blank values, `integer` says whether every value is a safe integer in
   * digits, `missing` is the table's blanks.
   */
  estimated?: { distinct: number; integer: boolean; rows: number; missing: number };
}

/** The code book of one column, built from the real table. */
export interface ColumnCodec {
  name: string;
  kind: ColumnKind;
  /** Datetime only: the column's format. */
  datetime?: DatetimeFormat;
  /** Number of codes, including the missing code. */
  K: number;
  /** The missing code (K - 1), or -1 when the column had no missing values. */
  missingCode: number;
  /** The `__other__` code, or -1. */
  otherCode: number;
  /** `column_stats[f]`. */
  stats: ColumnStats;
  /** `value_mappings[f]`. */
  mapping: Record<string, number>;
  /** True when K and the codes come from a public domain (`../metadata/domain`), not from the rows. */
  fromDomain?: boolean;
  /**
   * Code of a trimmed value, or -1 for one the real column could not have had (an unseen category
   * without `__other__`, a blank where none was, a number outside the bins or point values).
   */
  encode(value: string): number;
}

/** Writes the fresh value of row i of a sample (`../semantic`'s `SemanticGenerator`). */
export interface FreshWriter {
  /** `issue` false: a candidate read without marking it written (titles stay distinct by what is kept). */
  value(i: number, issue?: boolean): string;
  /** As `value`, but undefined where the writer has nothing new nor already written left. */
  freshValue?(i: number, issue?: boolean): string | undefined;
}

/**
 * The {@link FreshWriter} index of row `row`'s candidate `t`: the row's own value for t = 0, else
 * an index past any sample's rows (2^40 apart), so no other row writes it. Candidates are read
 * with `issue` false; the one kept is read again with `issue` true, which marks it written.
 */
export function candidateIndex(row: number, t: number): number {
  return t === 0 ? row : row + (t + 4) * 2 ** 40;
}

/** Decodes one feature's codes. */
export interface FeatureDecoder {
  name: string;
  /** Number of codes. */
  K: number;
  /**
   * The value of code `c` in row `row`; `rng` draws for interval bins and the pooled code, `ids`
   * writes identifiers, `partnerCode` is the row's code of {@link FeatureDecoder.partner}, `fresh`
   * writes pooled cells of a {@link FeatureDecoder.semantic} feature, `decided` holds the row's
   * codes of {@link FeatureDecoder.alsoDecides}.
   * @throws APIError (`invalid_response`) for a code without a value.
   */
  decode(c: number, rng: Rng, row: number, ids?: IdValues, partnerCode?: number, fresh?: FreshWriter, decided?: readonly number[]): string;
  /**
   * The whole column at once, with no string per cell where it can (`../generate/batch`):
   * cell r is what `decode(codes[r], rng, rowOffset + r, ...)` gives, with the same draws in the
   * same order. Absent: the caller decodes cell by cell. Typed arrays come from `arrays` if given.
   * @throws APIError (`invalid_response`) for a code without a value.
   */
  decodeColumn?(
    codes: ArrayLike<number>,
    rng: Rng,
    rowOffset: number,
    ids?: IdValues,
    partner?: ArrayLike<number>,
    fresh?: FreshWriter,
    arrays?: ArrayPool,
    decided?: readonly ArrayLike<number>[],
  ): DecodedColumn;
  /** Categorical features whose pooled cells are written fresh: the kind (`column_stats[f].semantic`). */
  semantic?: SemanticShapeStats;
  /** Id features: the shape their generator writes. */
  idShape?: IdShape;
  /** Categorical features with a pooled code: the feature whose code in the row `decode` reads. */
  partner?: string;
  /** A determinant written fresh: the other features it decides, whose codes `decode` reads too. */
  alsoDecides?: string[];
}

/** The blank code of `f`: `value_mappings[f][""]`, else K-1 when it had blanks, else undefined. */
export function missingCodeOf(meta: Metadata, f: string): number | undefined {
  const mapping = meta.value_mappings?.[f];
  if (mapping !== undefined && Object.hasOwn(mapping, MISSING_KEY)) return mapping[MISSING_KEY];
  return (meta.column_stats?.[f]?.missing ?? 0) > 0 ? meta.cardinalities[f] - 1 : undefined;
}

/** The decoders' error for a generated code that has no value. */
export function badCode(f: string, c: number, K: number): never {
  throw new APIError({
    code: "invalid_response",
    message: `The server returned code ${c} for feature "${f}", which has no value (K = ${K}).`,
  });
}

/**
 * A range of a numerical or datetime column's numbers (datetimes: seconds since the epoch) for
 * seeded generation; an absent bound is unbounded, an open one excludes its value.
 */
export interface ValueRange {
  lo?: number;
  loOpen?: boolean;
  hi?: number;
  hiOpen?: boolean;
}

/** True when `x` lies in `range`. */
export function inRange(x: number, range: ValueRange): boolean {
  if (range.lo !== undefined && (range.loOpen ? !(x > range.lo) : !(x >= range.lo))) return false;
  if (range.hi !== undefined && (range.hiOpen ? !(x < range.hi) : !(x <= range.hi))) return false;
  return true;
}

/** The value type of one output column (Arrow / Parquet, `../io/typed`). */
export type ColumnType = "string" | "int64" | "float64" | "timestamp" | "date";
