/**
 * Fidelity evaluation (DESIGN §1 `synthd evaluate`): average total variation distance between the
 * k-way marginals (k = 1, 2, 3) of a real and a synthetic table, the workload measure of the
 * NIST/MST/AIM literature (e.g. McKenna et al., "AIM: An Adaptive and Iterative Mechanism for
 * Differentially Private Synthetic Data", PVLDB 2022, which reports average 3-way TVD-style errors).
 *
 * Binning: the code books are built from the REAL table only (rules of `./metadata`) and applied
 * to both tables; a synthetic value the real column never had (an unseen category, a blank where
 * the real column had none, a non-number or out-of-range number in a numerical column) gets one
 * extra code K_f per feature, so it counts as a difference; except that in a categorical column
 * whose model writes rare values as fresh values of a semantic kind (`column_stats.semantic` of
 * the `metadata` option: cities, names), a value the real column never had counts as the real
 * code book's pooled "rest" when it has one (the fresh value stands for a rare real value, which
 * the real table's rest holds). Columns are matched by name; the
 * synthetic table may order them differently and may have extra columns (ignored). The code
 * books follow the column kinds, so datetime columns are cut by time; identifier columns are
 * left out of every TVD average (`excluded`) and checked instead in {@link columnChecks}, the
 * per-column check table every report carries (`checks`).
 *
 * TVD(P, Q) = ½ Σ_x |P(x) − Q(x)| over the cells of a marginal, in [0, 1].
 *
 * With `domain` the tables are discretized codes (`./domain`): the code books come from the
 * domain, so TVD is measured on the codes themselves (no re-binning).
 *
 * Utility and privacy (issue 5), both against a HOLDOUT table the generator never saw (same
 * columns as the real table, encoded with the real table's code books):
 * - `target`: TSTR (`./tstr`): logistic regression trained on the synthetic rows predicts
 *   `target == positive` on HOLDOUT (on the real table itself when no holdout is given); ROC AUC.
 *   `positive` defaults to the less frequent of the target's two most frequent codes in the real
 *   table (codes ranked by count, ties by code), e.g. `>50K` of Adult's income, and `MALE` of a Sex column of
 *   37 FEMALE, 31 MALE and one stray `.` (the rarest code, the old default, was the `.`, absent
 *   from the holdout). With a holdout, the same classifier trained on the real rows gives the
 *   reference `tstr_auc_train`. Features: every other column, one-hot over its codes plus the
 *   unseen code. Rows whose target is another value are negatives.
 *   With `multiclass`: one logistic regression per class of the target present in the test rows
 *   (that class against the rest, trained on the synthetic rows), and the one-vs-rest macro ROC
 *   AUC of their logits (`rocAucOvr`, scikit-learn's `roc_auc_score(multi_class="ovr",
 *   average="macro")`, which also takes the classes from the test labels).
 * - `holdout`: the DCR privacy check and exact-copy counts (`./dcr`). A HOLDOUT of fewer than
 *   {@link MIN_HOLDOUT_ROWS} rows gets `holdout_warning`: the DCR share of so few rows moves by
 *   more than 0.1 between draws, too much for its reference to mean anything.
 *
 * Near-copies (issue 24), always computed, holdout or not (`near_copies`, `./privacy/near-copies`):
 * the share of synthetic rows equal to a real row on all non-identifier columns but at most one
 * (categorical cells by their trimmed text, numerical and datetime cells by their code in the
 * real table's code book), against the share a 50/50 split of the real table gives, and the DCR
 * share of the synthetic rows against the split's; a verdict.
 *
 * Row rules (issue 23): with `metadata` (the model's, whose `rules` the decoder enforces), each
 * rule's share of real rows and of synthetic rows that keep it (`rules`; `./rules/check` says when
 * a row keeps, breaks or is not concerned by each kind of rule). Without `metadata`, or when it
 * has no `rules`, `rules` is empty. `worst_pairs`: the {@link WORST_PAIRS} column pairs with the
 * largest 2-way TVD, largest first, the pairs a user looks at first.
 *
 * {@link evaluateWithDetails} is `evaluate` that also hands back what it computed on the way (the
 * scans, the codes, the 2-way TVD of every pair, the DCR distances), so the HTML quality report
 * (`./report`) draws its plots from the very numbers `evaluate` averages.
 */
import type { Table, TableSource } from "../io/csv";
import { privacyCheckWithDistances, type PrivacyCheck } from "../privacy/dcr";
import { nearCopyCheck, type NearCopyCheck } from "../privacy/near-copies";
import { Decoder } from "../generate/decode";
import { DataError } from "../errors";
import { counts1, marginalTvds, type CodeArray } from "../metadata/marginals";
import type { ColumnKind, Metadata, Rule } from "../../types";
import { countRule, ruleColumns, ruleLabel, type RuleCount } from "../rules/check";
import { DATETIME_FORMATS, DatetimeFormat } from "../metadata/datetime";
import { matchesIdShape, type IdShape } from "../metadata/identifier";
import {
  buildMetadata,
  decimalsOf,
  encodeScanned,
  isNumeric,
  encodeTable,
  encodeTableWithScan,
  scanTable,
  type ColumnCodec,
  type ExtractOptions,
  type ScannedTable,
} from "../metadata/metadata";
import { Rng, deriveSeed } from "../generate/prng";
import { fitLogistic, rocAuc, rocAucOvr } from "./tstr";

/** Per-column part of an {@link EvaluationReport}. */
export interface ColumnReport {
  column: string;
  /** 1-way TVD of this column. */
  tvd1: number;
  /** Mean 2-way TVD over the pairs that include this column. */
  tvd2: number;
}

/**
 * Per-column checks of the synthetic values against the real column (`evaluate`'s check table):
 * what a user looks at before any score. Shares are of the synthetic column's non-blank values
 * unless said otherwise; a check that does not apply to the kind is absent.
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
  /**
   * Categorical whose model writes rare values fresh (`column_stats.semantic` in `evaluate`'s
   * `metadata`): a value the real column never had, by design (about the real share of rows
   * holding a rare value).
   */
  fresh?: number;
  /** Id: equal to a value of the real column (should be about 0). */
  copies?: number;
  /** Id: distinct values / values. */
  distinct?: number;
  /** Id: of the real column's identifier shape. */
  shape?: number;
}

/**
 * One rule of `metadata.rules` in an {@link EvaluationReport}: what it says and the share of real
 * and of synthetic rows that keep it (of the rows it applies to; `./rules/check`).
 */
export interface RuleReport {
  /** Position in `metadata.rules`. */
  index: number;
  type: Rule["type"];
  /** The columns it names (inequality: high, low; sum: total, parts). */
  columns: string[];
  /** Short text: `end > start`, `total = a + b`, `education determines education-num (16 combinations)`. */
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
  /** Average TVD over all 1-way, all 2-way and all 3-way marginals (an arity with no marginals,
   * e.g. 3-way with two columns, reports 0). */
  tvd: { "1": number; "2": number; "3": number };
  /** Number of marginals averaged per arity. */
  marginals: { "1": number; "2": number; "3": number };
  /** Row counts. */
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
  /**
   * The {@link WORST_PAIRS} pairs of compared columns with the largest 2-way TVD, largest first
   * (ties in the pairs' order: (0,1), (0,2), ..., (1,2), ...); fewer with fewer pairs.
   */
  worst_pairs: PairTvd[];
  /** With `target`: ROC AUC on HOLDOUT (or the real table) of the classifier trained on the
   * synthetic rows. */
  tstr_auc?: number;
  /** With `target` and `holdout`: the same classifier trained on the real rows (the reference). */
  tstr_auc_train?: number;
  /**
   * With `target`: what was predicted and on which rows. With `multiclass`, `positive` reads
   * "each class, one-vs-rest", `test_positives` counts the test rows of every class (all of them),
   * and `classes` gives each class's value, test rows and AUC (synthetic-trained).
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
  /** With a `holdout` of fewer than {@link MIN_HOLDOUT_ROWS} rows: why its privacy figures mean little. */
  holdout_warning?: string;
  /**
   * The privacy check that needs no holdout (`./privacy/near-copies`): near-copies of real rows
   * and DCR share against a 50/50 split of the real table, with a verdict. Absent only when the
   * real table has fewer than 2 rows or the synthetic table none.
   */
  near_copies?: NearCopyCheck;
}

/**
 * Fewest HOLDOUT rows whose privacy figures are a reference: below it `evaluate` adds
 * `holdout_warning`. At 200 rows the DCR share's standard error is about 0.035 (0.5/sqrt(200)),
 * so a memorising generator (share 0.6 and up) stands out from noise; at the issue's 69 rows it is
 * 0.06 and two standard errors cover 0.38 to 0.62.
 */
export const MIN_HOLDOUT_ROWS = 200;

/** Options of {@link evaluate}: binning (as in metadata extraction), TSTR and the privacy check. */
export interface EvaluateOptions
  extends Pick<ExtractOptions, "categoryCap" | "binCap" | "domain" | "columns" | "rareThreshold" | "delimiter" | "encoding"> {
  /** Column to predict for TSTR (binary: `positive` against the rest). */
  target?: string;
  /**
   * Value of `target` counted as positive. Default: the less frequent of its two most frequent
   * codes in the real table (a stray value seen once is never the default).
   */
  positive?: string;
  /**
   * Predict every class of `target` (those in the test rows), one-vs-rest, and report the macro
   * average ROC AUC (scikit-learn's `multi_class="ovr", average="macro"`). Not with `positive`.
   * Default false (binary: `positive` against the rest).
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
   * The model's metadata (e.g. `GET /v1/models/{id}/metadata`): each of its `rules` is checked on
   * the real and on the synthetic rows (`rules` of the report), with its `value_mappings` and
   * `column_stats`. Not used for the TVDs, which bin with the real table's own code books.
   */
  metadata?: Metadata;
}

function average(xs: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < xs.length; i++) s += xs[i];
  return xs.length ? s / xs.length : 0;
}

/**
 * Compares a synthetic table with the real one.
 * @param real, synthetic  CSV paths (streamed) or in-memory tables.
 * @returns average 1-, 2-, 3-way TVD, per-column table, unseen-value rates.
 * @param opts binning (`categoryCap`, `binCap`, or `domain` for discretized tables), and the
 *             optional TSTR (`target`, `positive`) and privacy check (`holdout`) described in
 *             the file header.
 * @throws DataError for a bad real file (as metadata extraction), a bad synthetic or holdout file
 *         (structure, UTF-8), a synthetic or holdout file lacking a real column, a `target` the
 *         real table lacks or that has one class (in the real table or the test rows), a
 *         `positive` value the target never has, or a rule of `metadata` naming a column the
 *         real table lacks; RangeError for a rule naming a column `metadata.features` lacks or a
 *         datetime column without a usable format (`./rules/check`).
 * Cost: O(C(F,3) · (n_real + n_synth)) for TVD, about a second for adult (15 columns, 455
 * triples); TSTR well under a second per classifier for adult, a few seconds at 1M rows
 * (`./tstr`); the privacy check about a second (`./dcr`: its DCR scan grows with the smaller of
 * TRAIN and HOLDOUT, its exact-copy count is linear in the rows and builds no string per row).
 */
export async function evaluate(real: TableSource, synthetic: TableSource, opts: EvaluateOptions = {}): Promise<EvaluationReport> {
  return (await evaluateWithDetails(real, synthetic, opts)).report;
}

/**
 * What {@link evaluateWithDetails} computed besides the report, for plots (`./report`). Column
 * indices f are into `codecs` (the real table's columns, in its order).
 */
export interface EvaluationDetails {
  /** Code books of the real table, one per real column. */
  codecs: ColumnCodec[];
  /** Code-space size per column: K_f + 1 (the last code, K_f, marks a value the real column never had). */
  cards: number[];
  /** The columns in the TVD averages (all but identifiers), ascending. */
  modelled: number[];
  /** Scans (distinct values, their counts, each row's value id) of each table. */
  scans: { real: ScannedTable; synthetic: ScannedTable; holdout?: ScannedTable };
  /** Codes per column under the real code books, `codes.x[f][r]` in [0, cards[f]). */
  codes: { real: CodeArray[]; synthetic: CodeArray[]; holdout?: CodeArray[] };
  /**
   * 2-way TVD of every pair of modelled columns, real against synthetic: pair (a, b), a < b
   * indices into `modelled`, in the order (0,1), (0,2), ..., (1,2), ... (what `tvd["2"]` averages).
   */
  pairTvd: Float64Array;
  /** With `holdout`: the Hamming distance of each DCR-sampled synthetic row to its closest TRAIN and HOLDOUT row (`./dcr`). */
  dcr?: { train: Int32Array; holdout: Int32Array };
}

/**
 * {@link evaluate}, plus the intermediate results (scans, codes, per-pair TVD, DCR distances).
 * The report is the one `evaluate` returns for the same arguments, number for number.
 * @throws as {@link evaluate}.
 */
export async function evaluateWithDetails(
  real: TableSource,
  synthetic: TableSource,
  opts: EvaluateOptions = {},
): Promise<{ report: EvaluationReport; details: EvaluationDetails }> {
  const { encoded: enc, scanned: realScan } = await encodeTableWithScan(real, opts);
  const target = opts.target;
  if (target !== undefined && !enc.columns.includes(target)) {
    throw new DataError(`The real table has no column "${target}" (the TSTR target).`, { column: target });
  }
  const synth = await scanTable(synthetic, 1);
  const unseenCodes = enc.codecs.map((c) => c.K);
  const synthCodes: CodeArray[] = encodeWithRealCodes(synth, enc.codecs, enc.columns);
  enc.codecs.forEach((c, f) => {
    // Fresh values by design (a model whose rare values are written fresh): "some other value".
    const st = opts.metadata?.column_stats?.[c.name];
    if (c.kind !== "categorical" || c.otherCode < 0 || st?.type !== "categorical" || !st.semantic) return;
    const codes = synthCodes[f];
    for (let r = 0; r < codes.length; r++) if (codes[r] === c.K) codes[r] = c.otherCode;
  });
  const cards = enc.codecs.map((c) => c.K + 1); // + the "unseen" code
  const modelled = enc.codecs.map((c, f) => (c.kind === "id" ? -1 : f)).filter((f) => f >= 0);
  const { report, pairTvd } = compareCodesWithPairs(
    modelled.map((f) => enc.columns[f]),
    modelled.map((f) => cards[f]),
    modelled.map((f) => enc.codes[f]),
    modelled.map((f) => synthCodes[f]),
    modelled.map((f) => unseenCodes[f]),
  );
  report.excluded = enc.codecs.filter((c) => c.kind === "id").map((c) => c.name);
  report.checks = columnChecks(enc.codecs, realScan, synth, opts.metadata);
  if (opts.metadata?.rules?.length) report.rules = ruleReports(opts.metadata, realScan, synth);
  const seed = opts.seed ?? 0;

  let holdout: { scan: ScannedTable; codes: CodeArray[] } | undefined;
  if (opts.holdout !== undefined) {
    const scan = await scanTable(opts.holdout, 1, opts);
    holdout = { scan, codes: encodeWithRealCodes(scan, enc.codecs, enc.columns) };
  }
  if (target !== undefined && opts.multiclass) {
    if (opts.positive !== undefined) throw new RangeError("multiclass predicts every class: it takes no positive value");
    const t = enc.columns.indexOf(target);
    const codec = enc.codecs[t];
    const feats = enc.columns.map((_, f) => f).filter((f) => f !== t);
    const featCards = feats.map((f) => cards[f]);
    const test = holdout ? holdout.codes : enc.codes;
    const testX = feats.map((f) => test[f]);
    const testCounts = counts1(test[t], cards[t]);
    const classes: number[] = [];
    testCounts.forEach((c, code) => {
      if (c > 0) classes.push(code);
    });
    if (classes.length < 2) {
      throw new DataError(
        `${holdout ? holdout.scan.source : realScan.source}: every row of "${target}" is in one class, so ROC AUC is undefined.`,
        { column: target },
      );
    }
    const index = new Map(classes.map((c, k) => [c, k]));
    const testY = Uint8Array.from(test[t], (c) => index.get(c)!);
    const lrOpts = { seed, epochs: opts.tstrEpochs };
    const ovr = async (train: CodeArray[]) => {
      const scores: Float64Array[] = [];
      for (const c of classes) {
        const m = await fitLogistic(feats.map((f) => train[f]), featCards, Uint8Array.from(train[t], (v) => (v === c ? 1 : 0)), lrOpts);
        scores.push(m.logits(testX));
      }
      return rocAucOvr(scores, testY);
    };
    const onSynth = await ovr(synthCodes);
    report.tstr_auc = onSynth.auc;
    if (holdout) report.tstr_auc_train = (await ovr(enc.codes)).auc;
    report.tstr = {
      target,
      positive: "each class, one-vs-rest",
      test: holdout ? "holdout" : "real",
      test_rows: testY.length,
      test_positives: testY.length,
      classes: classes.map((c, k) => ({
        value: c === codec.K ? "(a value the real column never has)" : valueOf(codec, c),
        test_rows: testCounts[c],
        auc: onSynth.perClass[k],
      })),
    };
  } else if (target !== undefined) {
    const t = enc.columns.indexOf(target);
    const codec = enc.codecs[t];
    const positiveCode = positiveCodeOf(codec, enc.codes[t], opts.positive);
    const feats = enc.columns.map((_, f) => f).filter((f) => f !== t);
    const featCards = feats.map((f) => cards[f]);
    const labelsOf = (codes: CodeArray[]): Uint8Array => Uint8Array.from(codes[t], (c) => (c === positiveCode ? 1 : 0));
    const test = holdout ? holdout.codes : enc.codes;
    const testX = feats.map((f) => test[f]);
    const testY = labelsOf(test);
    const testPositives = testY.reduce((s, v) => s + v, 0);
    if (testPositives === 0 || testPositives === testY.length) {
      throw new DataError(
        `${holdout ? holdout.scan.source : realScan.source}: every row of "${target}" is in one class, so ROC AUC is undefined.`,
        { column: target },
      );
    }
    const lrOpts = { seed, epochs: opts.tstrEpochs };
    const onSynth = await fitLogistic(feats.map((f) => synthCodes[f]), featCards, labelsOf(synthCodes), lrOpts);
    report.tstr_auc = rocAuc(onSynth.logits(testX), testY);
    if (holdout) {
      const onReal = await fitLogistic(feats.map((f) => enc.codes[f]), featCards, labelsOf(enc.codes), lrOpts);
      report.tstr_auc_train = rocAuc(onReal.logits(testX), testY);
    }
    report.tstr = {
      target,
      positive: valueOf(codec, positiveCode),
      test: holdout ? "holdout" : "real",
      test_rows: testY.length,
      test_positives: testPositives,
    };
  }
  const details: EvaluationDetails = {
    codecs: enc.codecs,
    cards,
    modelled,
    scans: { real: realScan, synthetic: synth, ...(holdout ? { holdout: holdout.scan } : {}) },
    codes: { real: enc.codes, synthetic: synthCodes, ...(holdout ? { holdout: holdout.codes } : {}) },
    pairTvd,
  };
  if (holdout) {
    const { check, distances } = privacyCheckWithDistances(
      enc.codes,
      holdout.codes,
      synthCodes,
      { train: realScan, holdout: holdout.scan, synth, columns: enc.columns },
      { seed, sample: opts.dcrSample },
    );
    report.privacy = check;
    details.dcr = distances;
    if (holdout.scan.n < MIN_HOLDOUT_ROWS) {
      report.holdout_warning =
        `HOLDOUT has ${holdout.scan.n} rows, fewer than ${MIN_HOLDOUT_ROWS}: too small for its reference to mean anything ` +
        `(the DCR share moves by ±${(1 / Math.sqrt(holdout.scan.n)).toFixed(2)} between draws); read the near-copy check instead.`;
    }
  }
  if (realScan.n >= 2 && synth.n >= 1) {
    const compared = modelled;
    const keys = nearCopyKeys(enc.codecs, compared, realScan, synth, enc.codes, synthCodes);
    report.near_copies = nearCopyCheck(keys.real, keys.synth, compared.map((f) => enc.columns[f]), {
      seed,
      ...(opts.nearCopySplits !== undefined ? { splits: opts.nearCopySplits } : {}),
    });
  }
  return { report, details };
}

/**
 * The cell keys of the near-copy check (`./privacy/near-copies`) for columns `compared`: a
 * categorical column (not from a domain) by its trimmed text, the real scan's value id (a
 * synthetic value the real column never has: -1, equal to nothing); other columns by their code
 * in the real code book (the unseen code K: -1).
 */
export function nearCopyKeys(
  codecs: readonly ColumnCodec[],
  compared: readonly number[],
  real: ScannedTable,
  synth: ScannedTable,
  realCodes: readonly CodeArray[],
  synthCodes: readonly CodeArray[],
): { real: CodeArray[]; synth: CodeArray[] } {
  const r: CodeArray[] = [];
  const s: CodeArray[] = [];
  for (const f of compared) {
    const codec = codecs[f];
    if (codec.kind === "categorical" && !codec.fromDomain) {
      const rs = real.scans[real.columns.indexOf(codec.name)];
      const ss = synth.scans[synth.columns.indexOf(codec.name)];
      const dict = new Map(rs.values.map((v, id) => [v, id])); // distinct values: one id each
      const map = Int32Array.from(ss.values, (v) => dict.get(v) ?? -1);
      r.push(rs.ids);
      s.push(Int32Array.from(ss.ids, (id) => map[id]));
    } else {
      r.push(realCodes[f]);
      s.push(Int32Array.from(synthCodes[f], (c) => (c === codec.K ? -1 : c)));
    }
  }
  return { real: r, synth: s };
}

/**
 * Each rule of `metadata.rules` counted on the real and the synthetic scan (`./rules/check`).
 * @throws DataError when the real table lacks a column a rule names; RangeError as `ruleChecker`.
 */
export function ruleReports(metadata: Metadata, real: ScannedTable, synth: ScannedTable): RuleReport[] {
  return (metadata.rules ?? []).map((rule, index): RuleReport => {
    const count = (scan: ScannedTable): RuleCount =>
      countRule(rule, metadata, scan.n, (column) => {
        const s = scan.scans[scan.columns.indexOf(column)];
        if (!s) throw new DataError(`${scan.source} lacks column "${column}" of the rule "${ruleLabel(rule)}" (metadata.rules[${index}]).`, { column });
        const { values, ids } = s;
        return (r) => values[ids[r]];
      });
    return {
      index,
      type: rule.type,
      columns: ruleColumns(rule),
      label: ruleLabel(rule),
      ...(rule.declared ? { declared: true } : {}),
      real: count(real),
      synthetic: count(synth),
    };
  });
}

let knownFormats: DatetimeFormat[] | undefined;

/** True when `v` parses in the column's format or in any format datetime inference knows. */
function parsesAsDatetime(v: string, own: DatetimeFormat): boolean {
  if (own.parse(v)) return true;
  knownFormats ??= DATETIME_FORMATS.map((f) => new DatetimeFormat(f));
  return knownFormats.some((f) => f.parse(v) !== undefined);
}

/**
 * The check table: per real column, the synthetic column's blank share and, by kind, parse rate,
 * format, range, precision, known values (categorical), copies, distinctness and shape (id).
 * Work is per distinct synthetic value (the scan's dictionary), so it is linear in the rows.
 */
export function columnChecks(codecs: readonly ColumnCodec[], real: ScannedTable, synth: ScannedTable, metadata?: Metadata): ColumnCheck[] {
  return codecs.map((codec): ColumnCheck => {
    const rs = real.scans[real.columns.indexOf(codec.name)];
    const ss = synth.scans[synth.columns.indexOf(codec.name)];
    const st = codec.stats;
    const nonBlank = synth.n - ss.missing;
    const share = (pred: (v: string) => boolean): number => {
      let k = 0;
      ss.values.forEach((v, id) => {
        if (v !== "" && pred(v)) k += ss.counts[id];
      });
      return nonBlank ? k / nonBlank : 1;
    };
    const check: ColumnCheck = {
      column: codec.name,
      kind: codec.kind,
      blank_real: real.n ? rs.missing / real.n : 0,
      blank_synthetic: synth.n ? ss.missing / synth.n : 0,
    };
    const inRange = (x: number | undefined): boolean => x !== undefined && x >= (st.min ?? -Infinity) && x <= (st.max ?? Infinity);
    if (codec.kind === "numerical") {
      const d = st.decimals ?? 0;
      check.format = `${d} decimals`;
      check.parse = share(isNumeric);
      let parsed = 0;
      let inside = 0;
      ss.values.forEach((v, id) => {
        if (v === "" || !isNumeric(v)) return;
        parsed += ss.counts[id];
        if (inRange(Number(v))) inside += ss.counts[id];
      });
      check.in_range = parsed ? inside / parsed : 1;
      check.precision = share((v) => isNumeric(v) && decimalsOf(v) <= d);
    } else if (codec.kind === "datetime" && codec.datetime) {
      const fmt = codec.datetime;
      check.format = fmt.format;
      check.parse = share((v) => parsesAsDatetime(v, fmt));
      check.in_format = share((v) => fmt.parse(v) !== undefined);
      let parsed = 0;
      let inside = 0;
      ss.values.forEach((v, id) => {
        const x = v === "" ? undefined : fmt.parse(v)?.seconds;
        if (x === undefined) return;
        parsed += ss.counts[id];
        if (inRange(x)) inside += ss.counts[id];
      });
      check.in_range = parsed ? inside / parsed : 1;
    } else if (codec.kind === "categorical") {
      const known = new Set(rs.values);
      const mst = metadata?.column_stats?.[codec.name];
      if (mst?.type === "categorical" && mst.semantic) check.fresh = share((v) => !known.has(v));
      else check.known = share((v) => known.has(v));
    } else if (codec.kind === "id" && st.id_shape) {
      const known = new Set(rs.values);
      const shape = st.id_shape as IdShape;
      check.format = shape.kind;
      check.copies = share((v) => known.has(v));
      check.shape = share((v) => matchesIdShape(shape, v));
      check.distinct = nonBlank ? (ss.values.length - (ss.missing > 0 ? 1 : 0)) / nonBlank : 1;
    }
    return check;
  });
}

/** Encodes a second table with the real table's code books; values they do not know get code K_f. */
function encodeWithRealCodes(scan: ScannedTable, codecs: ColumnCodec[], columns: string[]): CodeArray[] {
  const missing = columns.filter((c) => !scan.columns.includes(c));
  if (missing.length) {
    throw new DataError(`${scan.source} lacks column${missing.length > 1 ? "s" : ""} ${missing.map((c) => `"${c}"`).join(", ")} of the real table.`, {
      column: missing[0],
    });
  }
  return encodeScanned(scan, codecs, codecs.map((c) => c.K));
}

/**
 * The positive code of a TSTR target: `positive` encoded, else the less frequent of the two most
 * frequent codes of the real column (codes ranked by count, ties by the smaller code first; so of
 * two equally frequent classes, the later code).
 */
function positiveCodeOf(codec: ColumnCodec, codes: CodeArray, positive: string | undefined): number {
  if (positive !== undefined) {
    const c = codec.encode(positive.trim());
    if (c < 0) throw new DataError(`The real column "${codec.name}" never has the value ${JSON.stringify(positive)}.`, { column: codec.name });
    return c;
  }
  const counts = counts1(codes, codec.K);
  const ranked = Array.from({ length: codec.K }, (_, c) => c)
    .filter((c) => counts[c] > 0)
    .sort((a, b) => counts[b] - counts[a] || a - b);
  if (ranked.length < 2) {
    throw new DataError(`The real column "${codec.name}" has a single value, so there is nothing to predict.`, { column: codec.name });
  }
  return ranked[1];
}

/** The value text of a code (the first mapping entry), or `code <c>` for binned codes. */
function valueOf(codec: ColumnCodec, code: number): string {
  for (const [v, c] of Object.entries(codec.mapping)) if (c === code) return v;
  return `code ${code}`;
}

/**
 * TVD report of two encoded tables over the same code spaces.
 * @param cards      code-space size per feature.
 * @param unseenCode per feature, the code that marks "value unseen in the real table".
 */
export function compareCodes(
  columns: string[],
  cards: number[],
  real: CodeArray[],
  synth: CodeArray[],
  unseenCode: number[],
): EvaluationReport {
  return compareCodesWithPairs(columns, cards, real, synth, unseenCode).report;
}

/**
 * {@link compareCodes}, plus the 2-way TVD of every pair (i, j), i < j, in the order (0,1), (0,2),
 * ..., (1,2), ... (the values `tvd["2"]` averages).
 */
export function compareCodesWithPairs(
  columns: string[],
  cards: number[],
  real: CodeArray[],
  synth: CodeArray[],
  unseenCode: number[],
): { report: EvaluationReport; pairTvd: Float64Array } {
  const F = columns.length;
  const ones: number[][] = [];
  const twos: number[][] = [];
  const threes: number[][] = [];
  for (let i = 0; i < F; i++) {
    ones.push([i]);
    for (let j = i + 1; j < F; j++) {
      twos.push([i, j]);
      for (let k = j + 1; k < F; k++) threes.push([i, j, k]);
    }
  }
  const t1 = marginalTvds(real, synth, cards, ones);
  const t2 = marginalTvds(real, synth, cards, twos);
  const t3 = marginalTvds(real, synth, cards, threes);
  const per = columns.map((column, f): ColumnReport => {
    const mine: number[] = [];
    twos.forEach(([i, j], k) => {
      if (i === f || j === f) mine.push(t2[k]);
    });
    return { column, tvd1: t1[f], tvd2: average(mine) };
  });
  const nS = synth[0]?.length ?? 0;
  const unseen: Record<string, number> = {};
  columns.forEach((c, f) => {
    let u = 0;
    const a = synth[f];
    for (let r = 0; r < a.length; r++) if (a[r] === unseenCode[f]) u++;
    unseen[c] = nS ? u / nS : 0;
  });
  const order = Array.from(twos.keys()).sort((a, b) => t2[b] - t2[a] || a - b);
  const worst = order.slice(0, WORST_PAIRS).map((k): PairTvd => ({ columns: [columns[twos[k][0]], columns[twos[k][1]]], tvd: t2[k] }));
  const report: EvaluationReport = {
    excluded: [],
    checks: [],
    rules: [],
    worst_pairs: worst,
    tvd: { "1": average(t1), "2": average(t2), "3": average(t3) },
    marginals: { "1": ones.length, "2": twos.length, "3": threes.length },
    rows: { real: real[0]?.length ?? 0, synthetic: nS },
    columns: per,
    unseen,
  };
  return { report, pairTvd: t2 };
}

/**
 * The independent-marginals baseline: `n` rows whose columns are drawn independently, each from
 * the real column's 1-way marginal (its `empirical_probs`), decoded like generated data (point
 * bins exact, values drawn inside quantile bins, blanks for the missing code). It matches the
 * 1-way marginals up to sampling noise and binning, and ignores every relationship between
 * columns, so its 2- and 3-way TVD is what a generator must beat.
 * @param seed  makes the result reproducible (code draws use `deriveSeed(seed, f, 1)`, decoding
 *              `deriveSeed(seed, 2)`).
 * @returns a {@link Table} with the real column names; pass it to {@link evaluate} or write it
 *          with `writeTableCsv`.
 */
export async function independentSample(real: TableSource, n: number, seed = 0, opts: EvaluateOptions = {}): Promise<Table> {
  if (!(Number.isInteger(n) && n >= 1)) throw new RangeError("n must be a positive integer");
  const enc = await encodeTable(real, opts);
  const { metadata } = buildMetadata(enc, 0);
  const columns: Record<string, Int32Array> = {};
  metadata.features.forEach((f, fi) => {
    const p = metadata.empirical_probs[f];
    const cdf = new Float64Array(p.length);
    let s = 0;
    p.forEach((v, k) => (cdf[k] = s += v));
    const rng = new Rng(deriveSeed(seed, fi, 1));
    const out = new Int32Array(n);
    for (let r = 0; r < n; r++) out[r] = rng.pickCumulative(cdf);
    columns[f] = out;
  });
  return new Decoder(metadata).decode(columns, deriveSeed(seed, 2));
}
