/**
 * Extraction's shapes (scanned and encoded tables) and defaults, apart so that `../rules/detect`
 * and `./dp` read them without importing `./metadata`, which calls them.
 */
import type { ColumnCodec, ColumnScan } from "../columns";
import type { CodeArray } from "./marginals";
import type { SourceType } from "../io/inputs";

/** Default caps, thresholds and budget (docs/api.md, "Column kinds", gives the reasons). */
export const DEFAULTS = {
  /** Codes per categorical column (with the pooled code, without the missing code). */
  categoryCap: 1000,
  /**
   * k of rare category protection: rows a categorical value needs for a code of its own; 2 is the
   * smallest at which a released value never points at a single real row.
   */
  rareThreshold: 2,
  /** A text or integer column whose distinct share of non-blank values is at least this is an `id`. */
  idDistinctShare: 0.95,
  /** ... and which has at least this many non-blank values (a tiny table proves nothing). */
  idMinRows: 20,
  /** Most distinct values of an integer column named a code (`Agency code`) read as categories. */
  codeMaxDistinct: 1000,
  /** This share of distinct values (not all) parsing as datetimes: a DataError, not categorical. */
  datetimeShare: 0.9,
  /** Codes per numerical column (excluding the missing code). */
  binCap: 32,
  /** Total cells of all 2-way marginals sent (sum of K_f * K_g over the selected pairs). */
  pairBudget: 200_000,
} as const;

/** A scanned table. */
export interface ScannedTable {
  source: string;
  columns: string[];
  n: number;
  scans: ColumnScan[];
  /** Per column, what a typed source (Parquet, Arrow, PostgreSQL) says of it (`../io/inputs`). */
  types?: (SourceType | undefined)[];
}

/** An encoded table with its code books. */
export interface EncodedTable {
  columns: string[];
  n: number;
  codecs: ColumnCodec[];
  /** `codes[f][r]` in [0, codecs[f].K). */
  codes: CodeArray[];
}
