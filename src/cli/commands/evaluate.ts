/**
 * `synthd evaluate REAL.csv SYNTH.csv`: compares two local CSV files (marginals, checks,
 * row rules, TSTR, privacy); no server involved.
 */
import { nearCopyVerdict } from "../../sdk/privacy/near-copies";
import type { EvaluationReport } from "../../sdk/evaluate";
import { readMetadataArg } from "./shared";

/** `../../sdk/evaluate` (the marginals, TSTR and privacy checks), loaded when `evaluate` runs. */
function sdkEvaluate(): typeof import("../../sdk/evaluate") {
  return require("../../sdk/evaluate");
}

/** Options of `synthd evaluate`. */
export interface EvaluateCommandOptions {
  json: boolean;
  /** `--domain FILE`: both tables are discretized codes. */
  domain?: string;
  /** `--target COL`: TSTR target column. */
  target?: string;
  /** `--positive VALUE`: the target's positive value. */
  positive?: string;
  /** `--multiclass`: every class of the target, one-vs-rest macro ROC AUC. */
  multiclass?: boolean;
  /** `--holdout FILE`: real rows the model never saw (TSTR test set, privacy check). */
  holdout?: string;
  /** `--metadata JSON|FILE`: the model's metadata, whose row rules are checked on both tables. */
  metadata?: string;
  seed?: number;
}

/** Formats an {@link EvaluationReport} as the human-readable tables `synthd evaluate` prints. */
export function formatReport(r: EvaluationReport): string {
  const lines = [
    ...(r.near_copies ? [nearCopyVerdict(r.near_copies)] : []),
    `rows: real ${r.rows.real}, synthetic ${r.rows.synthetic}`,
    `average total variation distance (0 = identical marginals, 1 = disjoint):`,
    `  1-way ${r.tvd["1"].toFixed(4)}  (${r.marginals["1"]} marginals)`,
    `  2-way ${r.tvd["2"].toFixed(4)}  (${r.marginals["2"]} marginals)`,
    `  3-way ${r.tvd["3"].toFixed(4)}  (${r.marginals["3"]} marginals)`,
    "",
  ];
  const w = Math.max(6, ...r.columns.map((c) => c.column.length));
  lines.push(`${"column".padEnd(w)}  1-way TVD  mean 2-way TVD`);
  for (const c of r.columns) lines.push(`${c.column.padEnd(w)}  ${c.tvd1.toFixed(4).padStart(9)}  ${c.tvd2.toFixed(4).padStart(14)}`);
  if (r.excluded.length) lines.push(`left out of TVD (identifiers, see the checks): ${r.excluded.join(", ")}`);
  if (r.checks.length) {
    const pct = (x: number | undefined): string => (x === undefined ? "-" : `${(100 * x).toFixed(1)}%`);
    const header = ["column", "kind", "format", "parse", "in format", "in range", "precision", "known", "copies", "distinct", "shape", "blank real/synth"];
    const rows = r.checks.map((c) => [
      c.column,
      c.kind,
      c.format ?? "-",
      pct(c.parse),
      pct(c.in_format),
      pct(c.in_range),
      pct(c.precision),
      c.fresh !== undefined ? `fresh ${pct(c.fresh)}` : pct(c.known),
      pct(c.copies),
      pct(c.distinct),
      pct(c.shape),
      `${pct(c.blank_real)}/${pct(c.blank_synthetic)}`,
    ]);
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
    lines.push("", "checks (shares of the synthetic non-blank values; - = does not apply):");
    for (const row of [header, ...rows]) lines.push(row.map((v, i) => v.padEnd(widths[i])).join("  ").trimEnd());
  }
  if (r.worst_pairs.length) {
    const pw = Math.max(4, ...r.worst_pairs.map((p) => `${p.columns[0]} x ${p.columns[1]}`.length));
    lines.push("", `worst column pairs (largest 2-way TVD):`, `${"pair".padEnd(pw)}  2-way TVD`);
    for (const p of r.worst_pairs) lines.push(`${`${p.columns[0]} x ${p.columns[1]}`.padEnd(pw)}  ${p.tvd.toFixed(4).padStart(9)}`);
  }
  if (r.rules.length) {
    const pct = (x: number): string => `${(100 * x).toFixed(2)}%`;
    const header = ["rule", "real", "synthetic", ""];
    const rows = r.rules.map((x) => [x.label + (x.declared ? " (declared)" : ""), pct(x.real.share), pct(x.synthetic.share), x.synthetic.share < x.real.share ? "broken more often in synthetic rows" : ""]);
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
    lines.push("", "row rules (share of the rows each rule applies to that keep it):");
    for (const row of [header, ...rows]) lines.push(row.map((v, i) => (i === 1 || i === 2 ? v.padStart(widths[i]) : v.padEnd(widths[i]))).join("  ").trimEnd());
  }
  if (r.tstr?.classes && r.tstr_auc !== undefined) {
    lines.push(
      "",
      `TSTR: logistic regressions trained on the synthetic rows predict each class of ${r.tstr.target}, one against the rest, on the ${r.tstr.test} rows (${r.tstr.test_rows})`,
      `  macro ROC AUC ${r.tstr_auc.toFixed(4)}${r.tstr_auc_train !== undefined ? `  (trained on the real rows: ${r.tstr_auc_train.toFixed(4)})` : ""}`,
      ...r.tstr.classes.map((c) => `  ${c.value}: ROC AUC ${c.auc.toFixed(4)} (${c.test_rows} rows)`),
    );
  } else if (r.tstr && r.tstr_auc !== undefined) {
    lines.push(
      "",
      `TSTR: logistic regression trained on the synthetic rows predicts ${r.tstr.target} = ${r.tstr.positive} on the ${r.tstr.test} rows (${r.tstr.test_rows}, ${r.tstr.test_positives} positive)`,
      `  ROC AUC ${r.tstr_auc.toFixed(4)}${r.tstr_auc_train !== undefined ? `  (trained on the real rows: ${r.tstr_auc_train.toFixed(4)})` : ""}`,
    );
  }
  if (r.near_copies) {
    const c = r.near_copies;
    const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;
    lines.push(
      "",
      `near-copies (no holdout needed; ${c.columns.length} columns compared, identifiers left out):`,
      `  synthetic rows equal to a real row on all columns but at most one: ${c.synthetic_near_copies} (${pct(c.synthetic_share)})`,
      `  against half of the real rows: synthetic ${pct(c.synthetic_share_at_half)}, the other half ${pct(c.split_share)} (margin ${pct(c.near_copy_margin)}; ${c.splits} splits of ${c.half_rows[0]}/${c.half_rows[1]} rows)`,
      `  DCR share (closer to the real rows than the median real row): synthetic ${c.dcr_share.toFixed(3)}, the other half ${c.dcr_split_share.toFixed(3)} (margin ${c.dcr_margin.toFixed(3)})` +
        (c.dcr_in_verdict ? "" : "; not in the verdict below 200 rows per half"),
      `  ${nearCopyVerdict(c)}`,
    );
  }
  if (r.holdout_warning) lines.push("", `warning: ${r.holdout_warning}`);
  if (r.privacy) {
    const p = r.privacy;
    lines.push(
      "",
      `privacy (distance to closest record, ${p.sampled_rows} synthetic rows vs ${p.reference_rows} train and ${p.reference_rows} holdout rows):`,
      `  closer to train than to holdout: ${p.closer_to_train_share.toFixed(4)}  (about 0.5 when nothing is memorised)`,
      `  mean distance to train ${p.mean_dcr_train.toFixed(3)}, to holdout ${p.mean_dcr_holdout.toFixed(3)} (columns that differ)`,
      `  exact copies of train rows: ${p.exact_copies_train} synthetic (${(100 * p.exact_copies_train_rate).toFixed(2)}%; ${p.exact_copies_train_at_holdout_size} in as many rows as holdout), ` +
        `${p.exact_copies_holdout_baseline} holdout (${(100 * p.exact_copies_holdout_baseline_rate).toFixed(2)}%, the baseline)`,
    );
  }
  return lines.join("\n") + "\n";
}

/** `synthd evaluate REAL.csv SYNTH.csv [--json] [--domain F] [--target COL] [--holdout F]`. */
export async function evaluateCommand(real: string, synthetic: string, opts: EvaluateCommandOptions): Promise<void> {
  const { evaluate } = sdkEvaluate();
  const report = await evaluate(real, synthetic, {
    ...(opts.domain !== undefined ? { domain: opts.domain } : {}),
    ...(opts.target !== undefined ? { target: opts.target } : {}),
    ...(opts.positive !== undefined ? { positive: opts.positive } : {}),
    ...(opts.multiclass ? { multiclass: true } : {}),
    ...(opts.holdout !== undefined ? { holdout: opts.holdout } : {}),
    ...(opts.metadata !== undefined ? { metadata: readMetadataArg(opts.metadata) } : {}),
    ...(opts.seed !== undefined ? { seed: opts.seed } : {}),
  });
  process.stdout.write(opts.json ? JSON.stringify(report) + "\n" : formatReport(report));
}
