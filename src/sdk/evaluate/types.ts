/** The shapes of evaluation: report, options and intermediate results. Meanings: `./evaluate`. */
import type { ColumnKind, Metadata, Rule } from "../../contract";
import type { TableSource } from "../io/csv";
import type { ColumnCodec, ExtractOptions, ScannedTable } from "../metadata/metadata";
import type { CodeArray } from "../metadata/marginals";
import type { RuleCount } from "../rules/check";
import type { PrivacyCheck } from "../privacy/dcr";
import type { HoldoutNearCopyCheck, NearCopyCheck } from "../privacy/near-copies";

/** Per-column part of an {@link EvaluationReport}. */
export interface ColumnReport {
  column: string;
  /** 1-way TVD of this column. */
  tvd1: number;
  /** Mean 2-way TVD over the pairs that include this column. */
  tvd2: number;
}

/**
 * Per-column checks of the synthetic values against the real column. Shares are of the synthetic
 * column's non-blank values unless said otherwise; a check that does not apply is absent.
 */
export interface ColumnCheck {
  column: string;
  kind: ColumnKind;
  /** Datetime: the column's format; numerical: `N decimals`; id: `integer` or `text`. */
  format?: string;
  /** Blank share of the real and of the synthetic column (of all rows). */
  blank_real: number;
  blank_synthetic: number;
  /** Numerical: parse as a number; datetime: parse in some known datetime format. */
  parse?: number;
  /** Datetime: written in the column's own format. */
  in_format?: number;
  /** Numerical and datetime: inside the real column's [min, max] (of the values that parse). */
  in_range?: number;
  /** Numerical: written with no more decimals than the real column. */
  precision?: number;
  /** Categorical: a value the real column has (absent when `fresh` is given). */
  known?: number;
  /** Categorical with `column_stats.semantic`: a value written fresh by design (rare values). */
  fresh?: number;
  /** Id: equal to a value of the real column (should be about 0). */
  copies?: number;
  /** Id: distinct values / values. */
  distinct?: number;
  /** Id: of the real column's identifier shape. */
  shape?: number;
}

/** One rule of `metadata.rules`: share of real and synthetic rows keeping it (`../rules/check`). */
export interface RuleReport {
  /** Position in `metadata.rules`. */
  index: number;
  type: Rule["type"];
  /** The columns it names (inequality: high, low; sum: total, parts). */
  columns: string[];
  /** Short text: `end > start`, `total = a + b`, `education determines education-num (16 ...)`. */
  label: string;
  /** The user declared it (rather than the SDK finding it). */
  declared?: boolean;
  /** Real rows the rule applies to, those that keep it, and their share (1 when none applies). */
  real: RuleCount;
  /** The same over the synthetic rows. */
  synthetic: RuleCount;
}

/** A column pair and its 2-way TVD, real against synthetic (`worst_pairs`). */
export interface PairTvd {
  columns: [string, string];
  tvd: number;
}

/** Pairs `worst_pairs` lists at most. */
export const WORST_PAIRS = 5;

/** Result of {@link evaluate}. All distances are in [0, 1]; 0 means identical marginals. */
export interface EvaluationReport {
  /** Mean TVD over all 1-, 2- and 3-way marginals (0 for an arity with no marginals). */
  tvd: { "1": number; "2": number; "3": number };
  /** Number of marginals averaged per arity. */
  marginals: { "1": number; "2": number; "3": number };
  rows: { real: number; synthetic: number };
  /** One entry per real column, in the real table's order. */
  columns: ColumnReport[];
  /** Share of synthetic cells whose value the real column never had, per column name. */
  unseen: Record<string, number>;
  /** Columns left out of the TVD averages: identifiers (checked in `checks` instead). */
  excluded: string[];
  /** The per-column check table, in the real table's order. */
  checks: ColumnCheck[];
  /** With `metadata`: one entry per rule of `metadata.rules`, in its order; else empty. */
  rules: RuleReport[];
  /** The {@link WORST_PAIRS} pairs of largest 2-way TVD, largest first (ties in pair order). */
  worst_pairs: PairTvd[];
  /** With `target`: ROC AUC on HOLDOUT (or the real table) of the synthetic-trained classifier. */
  tstr_auc?: number;
  /** With `target` and `holdout`: the same classifier trained on the real rows (the reference). */
  tstr_auc_train?: number;
  /**
   * With `target`: what was predicted and on which rows. With `multiclass`, `positive` reads "each
   * class, one-vs-rest", and `classes` gives each class's value, test rows and AUC.
   */
  tstr?: {
    target: string;
    positive: string;
    test: "holdout" | "real";
    test_rows: number;
    test_positives: number;
    classes?: { value: string; test_rows: number; auc: number }[];
  };
  /** With `holdout`: the DCR share and exact-copy counts (`./dcr`). */
  privacy?: PrivacyCheck;
  /** With a `holdout` under {@link MIN_HOLDOUT_ROWS} rows: why its privacy figures mean little. */
  holdout_warning?: string;
  /** The holdout-free privacy check (`../privacy/near-copies`); absent on degenerate tables. */
  near_copies?: NearCopyCheck;
  /** With `holdout`: near-copies of the real (TRAIN) rows against those of HOLDOUT rows (`../privacy/near-copies`). */
  holdout_near_copies?: HoldoutNearCopyCheck;
}

/**
 * Fewest HOLDOUT rows whose privacy figures are a reference (else `holdout_warning`): at 200 rows
 * the DCR share's standard error is about 0.035 (0.5/sqrt(200)), so a memorising generator (0.6
 * and up) stands out from noise.
 */
export const MIN_HOLDOUT_ROWS = 200;

/** Options of {@link evaluate}: binning (as in metadata extraction), TSTR and the privacy check. */
export interface EvaluateOptions
  extends Pick<ExtractOptions, "categoryCap" | "binCap" | "domain" | "columns" | "rareThreshold" | "delimiter" | "encoding"> {
  /** Column to predict for TSTR (binary: `positive` against the rest). */
  target?: string;
  /** Value of `target` counted as positive. Default: the rarer of its two most frequent codes. */
  positive?: string;
  /**
   * Predict every class of `target` one-vs-rest and report the macro average ROC AUC
   * (scikit-learn's `multi_class="ovr", average="macro"`). Not with `positive`. Default false.
   */
  multiclass?: boolean;
  /** Real rows the generator never saw: the TSTR test set and the privacy check's reference. */
  holdout?: TableSource;
  /** Seeds the classifier's batch order and the privacy check's samples. Default 0. */
  seed?: number;
  /** Synthetic rows sampled for the DCR share. Default 2,000. */
  dcrSample?: number;
  /** Epochs of the TSTR classifier. Default 8. */
  tstrEpochs?: number;
  /** 50/50 splits of the real table the near-copy check averages (`near_copies`). Default 5. */
  nearCopySplits?: number;
  /**
   * The model's metadata (`GET /v1/models/{id}/metadata`): its `rules` are checked on both tables
   * (`rules` of the report). Not used for the TVDs, which bin with the real table's own code books.
   */
  metadata?: Metadata;
}

/** What {@link evaluateWithDetails} computed besides the report, for plots; f indexes `codecs`. */
export interface EvaluationDetails {
  /** Code books of the real table, one per real column. */
  codecs: ColumnCodec[];
  /** Code-space size per column: K_f + 1 (code K_f: a value the real column never had). */
  cards: number[];
  /** The columns in the TVD averages (all but identifiers), ascending. */
  modelled: number[];
  scans: { real: ScannedTable; synthetic: ScannedTable; holdout?: ScannedTable };
  /** Scans of each table, and codes per column under the real code books (`codes.x[f][r]`). */
  codes: { real: CodeArray[]; synthetic: CodeArray[]; holdout?: CodeArray[] };
  /** 2-way TVD of every pair of `modelled` columns, pairs (0,1), (0,2), ..., (1,2), .... */
  pairTvd: Float64Array;
  /** With `holdout`: per DCR-sampled synthetic row, distance to the nearest TRAIN, HOLDOUT row. */
  dcr?: { train: Int32Array; holdout: Int32Array };
}
