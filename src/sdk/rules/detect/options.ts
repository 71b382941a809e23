/**
 * The options of rule detection (`rules` of extraction) and its thresholds, {@link RULE_LIMITS}.
 */
import type { DatetimePart } from "../../../contract";

/** A rule the user states (the SDK's `rules.declare`); the SDK computes the rest from the data. */
export type DeclaredRule =
  | { type: "fixed_combinations"; columns: string[]; determinant?: string }
  | { type: "catalog"; columns: string[]; key_columns?: 1 | 2 }
  | { type: "inequality"; high: string; low: string; strict?: boolean }
  | { type: "sum"; total: string; parts: string[]; signs?: (1 | -1)[]; constant?: number }
  | { type: "ratio"; total: string; parts: string[]; powers: (1 | -1)[]; factor?: number }
  | { type: "not_equal"; columns: string[] }
  | { type: "blank_together"; columns: string[] }
  | { type: "structural_zeros"; columns: string[]; pairs?: [string, string][] }
  | { type: "calendar"; columns: string[] }
  | { type: "datetime_part"; columns: string[]; part?: DatetimePart }
  | { type: "template"; column: string; template: string };

/** The SDK's `rules` option (`ExtractOptions.rules`, `synthd fit --rules`). */
export interface RuleOptions {
  /** Detect the rules the rows keep (default true). False: only the declared rules. */
  detect?: boolean;
  /**
   * Detected rules to leave out, by id ({@link ruleId}: `inequality:high,low`) or by the line
   * `synthd fit` prints for them. An entry that matches no detected rule is ignored (detection
   * depends on the data).
   */
  drop?: string[];
  /**
   * Rules the user states: each is computed from the data like a detected one (combinations,
   * counts, share) and marked `declared: true`; one the data breaks in any row is a DataError.
   */
  declare?: DeclaredRule[];
}

/** Options of {@link detectRules}. */
export interface DetectOptions extends RuleOptions {
  /** k: rows a combination needs to be released (default {@link DEFAULTS}.rareThreshold). */
  rareThreshold?: number;
  /** Seed of the shuffle of the inequality check (default 23). */
  seed?: number;
}

/** Thresholds and caps of detection (the docstring of {@link detectRules} says what each does). */
export const RULE_LIMITS = {
  /** A -> B holds when the majority B per A value covers this share of the rows where A repeats, */
  fdShare: 0.99,
  /** ... the rows off the majority are at most this share of the repeated rows off B's mode, */
  fdExplained: 0.1,
  /** ... and every repeated A group being consistent by chance has probability below this. */
  fdChance: 1e-6,
  /** Sparse combinations: distinct pairs at most this share of those independence predicts. */
  sparseRatio: 0.5,
  /** Sparse by concentration: rows on released combinations, at least this times independence's. */
  sparseLift: 10,
  /** ... and at least this share of the rows whose values both have a code of their own. */
  sparseMinShare: 0.2,
  /** ... and at least this many such rows. */
  sparseMinRows: 30,
  /** Sparse combinations: values each column needs (blank excluded). */
  sparseMinValues: 3,
  /**
   * Catalog: a key's rows on values seen in >= k rows, and the rows on released entries, at least
   * this share of the rows with the key present (below it the key is mostly single rows).
   */
  catalogShare: 0.5,
  /** Catalog: columns of one catalog, the key included. */
  catalogColumns: 64,
  /** Composite-key catalog: key columns paired (the first ones, categorical first): at most 66 pairs. */
  catalogPairColumns: 12,
  /** Columns in a fixed-combinations group. */
  groupColumns: 4,
  /** Columns of fixed combinations, inequality and not-equal considered (the first ones). */
  maxColumns: 60,
  /** Numerical columns of the sum and linear identity check (the first ones in table order). */
  maxSumColumns: 60,
  /** Numerical columns of the ratio and product identity check (the first non-negative ones in table order). */
  maxRatioColumns: 60,
  /** Numerical columns of the difference-range check (the first ones in table order). */
  maxDifferenceColumns: 40,
  /** Combinations of one rule; a rule with more is skipped. */
  maxCombinations: 100_000,
  /** Inequality and sum: share of rows that keep the rule. */
  share: 0.99,
  /** Inequality: a pair whose shuffled share reaches this holds by chance. */
  shuffledShare: 0.95,
  /** Inequality: rows with both values, at least. */
  minRows: 10,
  /** Sum: rows off each column's most frequent value, at least (the share applies there too). */
  minTermRows: 5,
  /** Sum: parts of one identity, at most (the contract's `SumRule` bound). */
  maxSumParts: 12,
  /** Sum of 3+ parts: rows of the subset-sum search (those with the most columns off their mode). */
  sumSearchRows: 8,
  /** Sum of 3+ parts: search nodes per total, at most (the search stops there; cost bound). */
  sumSearchNodes: 200_000,
  /** Structural zeros: rows independence predicts in a pair of values, at least. */
  zeroMinExpected: 30,
  /** Structural zeros: a pair holds fewer than this share of the rows independence predicts. */
  zeroObservedShare: 0.01,
  /** Structural zeros: pairs of one rule (those independence predicts most rows for are kept). */
  maxZeroPairs: 1000,
  /** Structural zeros: rules (the first column pairs in table order). */
  maxZeroRules: 200,
  /** Not equal and blank together: share of rows that keep the rule. */
  strictShare: 0.999,
  /** Not equal: equal rows independence predicts, at least. */
  minExpectedEqual: 5,
  /** Blank together: blank rows each column needs. */
  minBlank: 5,
  /** Blank together: columns in one rule. */
  blankColumns: 16,
} as const;
