/**
 * Fidelity evaluation (`synthd evaluate`): average total variation distance between the k-way
 * marginals (k = 1, 2, 3) of a real and a synthetic table, the workload measure of the
 * NIST/MST/AIM literature (e.g. McKenna et al., "AIM", PVLDB 2022).
 * TVD(P, Q) = ½ Σ_x |P(x) − Q(x)| over the cells of a marginal, in [0, 1].
 *
 * Binning: code books from the REAL table only (`../metadata/metadata`; with `domain`, the
 * domain's codes), applied to both tables; a synthetic value the real column never had gets one
 * extra code K_f, so it counts as a difference. Except: in a categorical column whose model writes
 * rare values fresh (`column_stats.semantic` of `metadata`), such a value counts as the real
 * code book's pooled rest, which is what it stands for. Columns are matched by name (extra
 * synthetic columns ignored). Identifier columns are left out of the TVDs (`excluded`) and
 * checked in {@link columnChecks} (`checks`).
 *
 * Utility and privacy against a HOLDOUT the generator never saw (encoded with the real code books):
 * - `target`: TSTR (`./tstr`): logistic regression trained on the synthetic rows predicts
 *   `target == positive` on HOLDOUT (or the real table); ROC AUC. `positive` defaults to the less
 *   frequent of the target's two most frequent real codes (not the rarest: a stray value may be
 *   absent from the holdout). With a holdout, the classifier trained on the real rows gives
 *   `tstr_auc_train`. Features: every other column, one-hot plus the unseen code. With
 *   `multiclass`: one classifier per class present in the test rows and the one-vs-rest macro
 *   AUC (`rocAucOvr`).
 * - `holdout`: the DCR privacy check and exact-copy counts (`../privacy/dcr`), and near-copies
 *   of TRAIN against near-copies of HOLDOUT (`holdout_near_copies`); a HOLDOUT under
 *   {@link MIN_HOLDOUT_ROWS} rows gets `holdout_warning`.
 * Near-copies, always (`near_copies`, `../privacy/near-copies`): against a 50/50 split of the real
 * table, with a verdict; cells compared as the near-copy filter compares them
 * (`../privacy/near-copy-read`: default binning, the `metadata`'s identifiers left out), not at
 * the TVDs' `binCap`, `categoryCap` and `rareThreshold`. Row rules: with `metadata`, each rule's
 * share of real and synthetic rows keeping it (`rules`, `../rules/check`). `worst_pairs`: the
 * {@link WORST_PAIRS} pairs of largest 2-way TVD.
 *
 * {@link evaluateWithDetails} also hands back the intermediate results, so the HTML report
 * (`../report/report`) plots the very numbers `evaluate` averages.
 */
import type { TableSource } from "../io/csv";
import { DataError } from "../errors";
import { buildCodec, checkOverrides, encodeScanned, encodeTableWithScan, keepDeclaredText, type ColumnCodec, type ScannedTable } from "../metadata/metadata";
import { scanTable } from "../metadata/table-scan";
import { counts1, type CodeArray } from "../metadata/marginals";
import { privacyCheckWithDistances } from "../privacy/dcr";
import { holdoutNearCopyCheck, nearCopyCheck } from "../privacy/near-copies";
import { nearCopyRead } from "../privacy/near-copy-read";
import { fitLogistic, rocAuc, rocAucOvr } from "./tstr";
import { MIN_HOLDOUT_ROWS, type EvaluateOptions, type EvaluationDetails, type EvaluationReport } from "./types";
import { compareCodesWithPairs } from "./fidelity";
import { nearCopyKeys, tableKeys } from "./near-copy-keys";
import { ruleReports } from "./rules";
import { columnChecks } from "./column-checks";
import { pooledWritesFresh } from "../columns";

/**
 * Compares a synthetic table with the real one (file header).
 * @param real, synthetic  CSV paths (streamed) or in-memory tables.
 * @param opts binning (`categoryCap`, `binCap`, `domain`), TSTR (`target`, `positive`), `holdout`.
 * @throws DataError for a bad real file (as metadata extraction), a bad synthetic or holdout file
 *         (structure, UTF-8), a synthetic or holdout file lacking a real column, a `target` the
 *         real table lacks or that has one class (in the real table or the test rows), a
 *         `positive` value the target never has, or a rule or identifier column of `metadata`
 *         naming a column the real table lacks; RangeError for a rule naming a column `metadata.features` lacks or a
 *         datetime column without a usable format (`../rules/check`).
 * Cost: O(C(F,3) · (n_real + n_synth)) for TVD; TSTR O(epochs · n · F) per classifier (`./tstr`).
 */
export async function evaluate(real: TableSource, synthetic: TableSource, opts: EvaluateOptions = {}): Promise<EvaluationReport> {
  return (await evaluateWithDetails(real, synthetic, opts)).report;
}

/** {@link evaluate} plus its intermediate results (the same report, number for number). */
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
  keepDeclaredText(opts, synth);
  const unseenCodes = enc.codecs.map((c) => c.K);
  const synthCodes: CodeArray[] = encodeWithRealCodes(synth, enc.codecs, enc.columns);
  enc.codecs.forEach((c, f) => {
    // Fresh values by design (a model whose rare values are written fresh): "some other value".
    const st = opts.metadata?.column_stats?.[c.name];
    if (c.kind !== "categorical" || c.otherCode < 0 || !pooledWritesFresh(st)) return;
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
    keepDeclaredText(opts, scan);
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
    // Cells compared as the near-copy filter compares them, whatever binning the TVDs use.
    const read = nearCopyRead(opts, opts.metadata);
    let nc = { codecs: enc.codecs, real: enc.codes, synth: synthCodes };
    const rebinned = opts.binCap !== undefined || opts.categoryCap !== undefined || opts.rareThreshold !== undefined;
    if (read.domain === undefined && (rebinned || read.columns !== opts.columns)) {
      checkOverrides(realScan.columns, read, realScan.source);
      const codecs = realScan.scans.map((sc) => buildCodec(sc, realScan.n, read, realScan.source));
      nc = { codecs, real: encodeScanned(realScan, codecs), synth: encodeWithRealCodes(synth, codecs, enc.columns) };
    }
    const compared = nc.codecs.map((c, f) => (c.kind === "id" ? -1 : f)).filter((f) => f >= 0);
    const keys = nearCopyKeys(nc.codecs, compared, realScan, synth, nc.real, nc.synth);
    report.near_copies = nearCopyCheck(keys.real, keys.synth, compared.map((f) => enc.columns[f]), {
      seed,
      ...(opts.nearCopySplits !== undefined ? { splits: opts.nearCopySplits } : {}),
    });
    if (holdout && holdout.scan.n >= 1) {
      const hCodes = nc.codecs === enc.codecs ? holdout.codes : encodeWithRealCodes(holdout.scan, nc.codecs, enc.columns);
      const h = tableKeys(nc.codecs, compared, { scan: realScan, codes: nc.real }, [
        { scan: holdout.scan, codes: hCodes, ownValues: true },
        { scan: synth, codes: nc.synth },
      ]);
      report.holdout_near_copies = holdoutNearCopyCheck(h.real, h.others[0], h.others[1], { seed });
    }
  }
  return { report, details };
}

/** Encodes a second table with the real code books; values they do not know get code K_f. */
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
 * The positive code of a TSTR target: `positive` encoded, else the less frequent of the real
 * column's two most frequent codes (ties by the smaller code first).
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
