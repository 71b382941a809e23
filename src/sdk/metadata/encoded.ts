/**
 * The shapes extraction works on and its defaults: a scanned table (distinct values and per-row
 * value ids per column), an encoded table (code books and codes), and the default caps and
 * thresholds. A module of their own so that what extraction calls (`../rules/detect`, `./dp`)
 * reads them without importing `./metadata`, which calls it.
 */
import type { ColumnCodec, ColumnScan } from "../columns";
import type { CodeArray } from "./marginals";

/** Default caps, thresholds and budget (docs/api.md, "Column kinds", gives the reasons). */
export const DEFAULTS = {
  /**
   * Codes per categorical column (including the pooled code, excluding the missing code): the
   * per-column cell budget. Values seen at least `rareThreshold` times keep a code of their own,
   * the most frequent first, until the budget is spent.
   */
  categoryCap: 1000,
  /**
   * k of rare category protection: a categorical value needs at least k rows for a code of its own
   * (so it can appear in synthetic data); rarer values are pooled. k = 2 is the smallest threshold
   * at which a released value never points at a single real row; raise it for stronger protection.
   */
  rareThreshold: 2,
  /** A text or integer column whose distinct share of non-blank values is at least this is an `id`. */
  idDistinctShare: 0.95,
  /** ... and which has at least this many non-blank values (a tiny table proves nothing). */
  idMinRows: 20,
  /**
   * A text column where at least this share of the distinct values (but not all) parse in one
   * datetime format is a datetime column with bad values: a DataError, not a silent categorical.
   */
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
}

/** An encoded table with its code books. */
export interface EncodedTable {
  columns: string[];
  n: number;
  codecs: ColumnCodec[];
  /** `codes[f][r]` in [0, codecs[f].K). */
  codes: CodeArray[];
}
