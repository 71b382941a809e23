/**
 * The quality report (`synthd report`): one self-contained HTML file showing whether a synthetic
 * table can stand in for the real one, in the pictures of SDV's quality report and MOSTLY AI's QA
 * report. Sections, top to bottom (docs/report.md): 1. summary (privacy verdict, row rules, worst
 * pairs, accuracy, TSTR, DCR), 2. per column, 3. pairs, 4. privacy.
 *
 * Invariants:
 * - The figures are `evaluate`'s ({@link evaluateWithDetails} with the same options), so every
 *   number equals `synthd evaluate --json`'s. Each carries `data-json` (a JSON Pointer into that
 *   JSON, e.g. `/tvd/2`) and `data-value` (the exact value), or `data-json-holdout` for the
 *   HOLDOUT-against-REAL reference (= `evaluate(REAL, HOLDOUT)`).
 * - Self-contained and inert: inline SVG charts (`./report-charts`) and styles, no script element,
 *   and a Content-Security-Policy (`default-src 'none'`) so a browser loads nothing, even from a
 *   value that escaped. Every text from the data is HTML-escaped.
 */
import { randomBytes } from "node:crypto";
import { renameSync, rmSync, writeFileSync } from "node:fs";
import { SDK_VERSION } from "../client/client";
import { describeSource, type TableSource } from "../io/csv";
import { evaluateWithDetails } from "../evaluate/evaluate";
import type { ColumnCheck, EvaluateOptions, EvaluationReport } from "../evaluate/types";
import { nearCopyVerdict } from "../privacy/near-copies";
import type { ColumnCodec } from "../metadata/metadata";
import { COLORS, associationSpec, dcrSpec, distributionSpec, renderSvg, tvdHeatmapSpec } from "./report-charts";
import { PLOT_SAMPLE_NOTE, dcrHistogram, distributionOf, holdoutReference, pairMatrix, type Distribution } from "./report-data";
import { escapeHtml, formatMetric, metric, metricAt } from "./report-format";

/** Options of {@link buildReport}: `evaluate`'s and a title. */
export interface ReportOptions extends EvaluateOptions {
  /** Heading of the report. Default "Synthetic data quality report". */
  title?: string;
}

/** Result of {@link buildReport}. */
export interface QualityReport {
  /** The complete HTML document (UTF-8 text). */
  html: string;
  /** `evaluate`'s report for the same arguments: what `synthd evaluate --json` prints. */
  evaluation: EvaluationReport;
  /** With `holdout`: HOLDOUT against REAL, equal to `evaluate(REAL, HOLDOUT)`'s TVD figures. */
  holdoutReference?: EvaluationReport;
  /** Charts drawn: one per non-identifier column, two for pairs, one DCR chart (with `holdout`). */
  charts: number;
  /** Vega-Lite's warnings while compiling the charts; empty when every chart came out right. */
  warnings: string[];
}

const esc = escapeHtml;

/**
 * Evaluates a synthetic table against the real one and lays the result out as one HTML document
 * (file header; docs/report.md).
 * @param real, synthetic  CSV paths (streamed) or in-memory tables, as for `evaluate`.
 * @param opts `evaluate`'s options (`holdout`, `target`, `positive`, `seed`, ...) and `title`.
 * @throws DataError as `evaluate` (bad files, missing columns, bad target); Error when a chart
 *         fails to render.
 */
export async function buildReport(real: TableSource, synthetic: TableSource, opts: ReportOptions = {}): Promise<QualityReport> {
  const { report, details } = await evaluateWithDetails(real, synthetic, opts);
  const reference = holdoutReference(details);
  const warnings: string[] = [];
  let charts = 0;
  const figure = async (spec: Record<string, unknown>, kind: string, caption: string): Promise<string> => {
    const svg = await renderSvg(spec, `c${charts++}`, warnings);
    return `<figure class="chart" data-chart="${kind}">${svg}${caption ? `<figcaption>${caption}</figcaption>` : ""}</figure>`;
  };

  // 2. per column
  const modelledIndex = new Map(details.modelled.map((f, k) => [f, k]));
  const columnSections: string[] = [];
  for (let f = 0; f < details.codecs.length; f++) {
    const codec = details.codecs[f];
    const d = distributionOf(codec, details);
    const chart =
      d.type === "none"
        ? `<p class="note">Identifier column: synthetic identifiers are fresh values by design, so there is no distribution to compare; see the checks (copies of real values, distinct share, shape).</p>`
        : await figure(distributionSpec(codec.name, d), "distribution", distributionCaption(d));
    columnSections.push(columnSection(f, codec, chart, report, reference, modelledIndex.get(f)));
  }

  // 3. pairs
  let pairs: string;
  if (details.modelled.length >= 2) {
    const m = pairMatrix(details);
    pairs =
      (await figure(tvdHeatmapSpec(m), "pair-tvd", `Each cell: the TVD between the real and the synthetic joint distribution of the two columns (binned). Average over the ${m.pairs.length} pairs: ${metric(report.tvd["2"], "fixed", "tvd.2")}.`)) +
      (await figure(associationSpec(m), "pair-association", "Cramér's V (Cramér 1946) of each pair on the binned columns: how strongly the two columns go together, in the real and in the synthetic table. Similar pictures mean the relationships were kept."));
  } else {
    pairs = `<p class="note">Fewer than two compared columns: no pairs.</p>`;
  }

  // 4. privacy
  let privacy: string;
  const dcr = dcrHistogram(details);
  if (report.privacy && dcr) {
    const p = report.privacy;
    privacy =
      (await figure(
        dcrSpec(dcr, details.codecs.length),
        "dcr",
        `For each of ${metric(p.sampled_rows, "count", "privacy.sampled_rows")} sampled synthetic rows, the distance to its closest row among ${metric(p.reference_rows, "count", "privacy.reference_rows")} TRAIN rows and among as many HOLDOUT rows. A generator that learned the distribution and not the rows is as close to HOLDOUT as to TRAIN: the two histograms coincide.`,
      )) +
      `<table class="kv"><tbody>
<tr><th>share of synthetic rows closer to TRAIN than to HOLDOUT (ties ½)</th><td>${metric(p.closer_to_train_share, "fixed", "privacy.closer_to_train_share")} <span class="hint">about 0.5 when nothing is memorised</span></td></tr>
<tr><th>mean distance to TRAIN / to HOLDOUT</th><td>${metric(p.mean_dcr_train, "fixed", "privacy.mean_dcr_train")} / ${metric(p.mean_dcr_holdout, "fixed", "privacy.mean_dcr_holdout")}</td></tr>
<tr><th>synthetic rows equal to a TRAIN row</th><td>${metric(p.exact_copies_train, "count", "privacy.exact_copies_train")} (${metric(p.exact_copies_train_rate, "percent", "privacy.exact_copies_train_rate")}); ${metric(p.exact_copies_train_at_holdout_size, "count", "privacy.exact_copies_train_at_holdout_size")} among as many rows as HOLDOUT has</td></tr>
<tr><th>HOLDOUT rows equal to a TRAIN row (the baseline)</th><td>${metric(p.exact_copies_holdout_baseline, "count", "privacy.exact_copies_holdout_baseline")} (${metric(p.exact_copies_holdout_baseline_rate, "percent", "privacy.exact_copies_holdout_baseline_rate")})</td></tr>
</tbody></table>`;
  } else {
    privacy = `<p class="note">DCR against a HOLDOUT not run: it compares the synthetic rows with rows the generator never saw. Give a HOLDOUT file (<code>--holdout HOLDOUT.csv</code>) of at least 200 rows; the near-copy check above needs none.</p>`;
  }
  privacy = nearCopySection(report) + (report.holdout_warning ? `<p class="warn">${esc(report.holdout_warning)}</p>` : "") + privacy;

  const files = {
    real: { name: describeSource(real), rows: details.scans.real.n, columns: details.scans.real.columns.length },
    synthetic: { name: describeSource(synthetic), rows: details.scans.synthetic.n, columns: details.scans.synthetic.columns.length },
    holdout: details.scans.holdout && opts.holdout !== undefined
      ? { name: describeSource(opts.holdout), rows: details.scans.holdout.n, columns: details.scans.holdout.columns.length }
      : undefined,
  };
  const sampleNote = PLOT_SAMPLE_NOTE.replace("{sample}", (opts.dcrSample ?? 2000).toLocaleString("en-US"));
  const html = page({
    title: opts.title ?? "Synthetic data quality report",
    summary: summarySection(report, reference, files, details.codecs),
    columns: columnSections,
    codecs: details.codecs,
    pairs,
    privacy,
    sampleNote,
  });
  return { html, evaluation: report, ...(reference ? { holdoutReference: reference } : {}), charts, warnings };
}

/**
 * {@link buildReport}, written to `output` through a temporary file renamed when complete.
 * @throws as {@link buildReport}; an fs error when `output` cannot be written.
 */
export async function writeReport(real: TableSource, synthetic: TableSource, output: string, opts: ReportOptions = {}): Promise<QualityReport> {
  const result = await buildReport(real, synthetic, opts);
  const tmp = `${output}.${randomBytes(4).toString("hex")}.partial`;
  try {
    writeFileSync(tmp, result.html);
    renameSync(tmp, output);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
  return result;
}

function distributionCaption(d: Distribution): string {
  const parts: string[] = [];
  if (d.type === "histogram") {
    parts.push("Share of each file's rows per bin; the bins span the real column's range.");
    if (d.extra.below || d.extra.above) parts.push("Synthetic values outside that range have a bar of their own at the end.");
    if (d.omitted.real > 0 || d.omitted.synthetic > 0) {
      parts.push(`Not drawn: ${formatMetric(d.omitted.real, "count")} real and ${formatMetric(d.omitted.synthetic, "count")} synthetic rows (blank, or not parsing).`);
    }
  } else {
    parts.push("Share of each file's rows per value, the real column's most frequent values first.");
    if (d.extra.pooled) parts.push("Every other value of either file is pooled in one bar.");
    if (d.extra.blank) parts.push("Blanks last.");
  }
  return esc(parts.join(" "));
}

interface FileInfo {
  name: string;
  rows: number;
  columns: number;
}

/**
 * The summary's row-rules table: per rule its text and the shares of real and synthetic rows
 * keeping it; a rule the synthetic rows break more often is flagged (`class="flag"`, `data-flag`).
 */
function rulesTable(r: EvaluationReport): string {
  if (!r.rules.length) {
    return `<div id="rules"><h3>Row rules</h3><p class="note">No row rules checked: give the model's metadata (<code>--metadata FILE</code>, the JSON of <code>GET /v1/models/{id}/metadata</code>) to check the rules its rows keep.</p></div>`;
  }
  const rows = r.rules.map((x, i) => {
    const flagged = x.synthetic.share < x.real.share;
    const counts = (c: { kept: number; applicable: number }): string => `<span class="hint">${formatMetric(c.kept, "count")} of ${formatMetric(c.applicable, "count")}</span>`;
    return `<tr${flagged ? ` class="flag" data-flag="broken-more"` : ""}><td>${esc(x.label)}${x.declared ? ` <span class="hint">declared</span>` : ""}</td>` +
      `<td class="num">${metric(x.real.share, "percent", `rules.${i}.real.share`)} ${counts(x.real)}</td>` +
      `<td class="num">${metric(x.synthetic.share, "percent", `rules.${i}.synthetic.share`)} ${counts(x.synthetic)}</td>` +
      `<td>${flagged ? "⚠ broken more often in synthetic rows" : ""}</td></tr>`;
  });
  const flagged = r.rules.filter((x) => x.synthetic.share < x.real.share).length;
  return `<div id="rules"><h3>Row rules</h3>
<p class="note">Rules of the model's metadata: the share of rows that keep each rule, of the rows it applies to (a blank cell usually takes a row out). ${
    flagged ? `${flagged} of ${r.rules.length} broken more often in the synthetic rows than in the real rows.` : "No rule is broken more often in the synthetic rows than in the real rows."
  }</p>
<table class="rules"><thead><tr><th>rule</th><th class="num">real rows keeping it</th><th class="num">synthetic rows keeping it</th><th></th></tr></thead><tbody>${rows.join("\n")}</tbody></table></div>`;
}

/** The summary's worst column pairs (`worst_pairs`), each column linked to its section. */
function worstPairsTable(r: EvaluationReport, codecs: readonly ColumnCodec[]): string {
  if (!r.worst_pairs.length) return "";
  const link = (name: string): string => {
    const f = codecs.findIndex((c) => c.name === name);
    return f >= 0 ? `<a href="#col-${f}">${esc(name)}</a>` : esc(name);
  };
  const rows = r.worst_pairs.map(
    (p, k) => `<tr><td>${link(p.columns[0])} × ${link(p.columns[1])}</td><td class="num">${metric(p.tvd, "fixed", `worst_pairs.${k}.tvd`)}</td></tr>`,
  );
  return `<div id="worst-pairs"><h3>Worst column pairs</h3>
<p class="note">The ${r.worst_pairs.length} pair${r.worst_pairs.length === 1 ? "" : "s"} whose joint distribution the synthetic table reproduces least: the largest 2-way TVDs (average over all ${formatMetric(r.marginals["2"], "count")} pairs: ${metric(r.tvd["2"], "fixed", "tvd.2")}).</p>
<table class="pairs"><thead><tr><th>pair</th><th class="num">2-way TVD</th></tr></thead><tbody>${rows.join("")}</tbody></table></div>`;
}

function summarySection(
  r: EvaluationReport,
  ref: EvaluationReport | undefined,
  files: { real: FileInfo; synthetic: FileInfo; holdout?: FileInfo },
  codecs: readonly ColumnCodec[],
): string {
  const names = { "1": "Univariate", "2": "Bivariate", "3": "Trivariate" } as const;
  const cards = (["1", "2", "3"] as const).map((k) => {
    const holdout = ref
      ? `<div class="ref">reference, HOLDOUT against REAL: ${metric(ref.tvd[k], "accuracy", `tvd.${k}`, "data-json-holdout")}</div>`
      : `<div class="ref">no HOLDOUT given: no reference</div>`;
    return `<div class="card"><div class="label">${names[k]} accuracy</div><div class="big">${metric(r.tvd[k], "accuracy", `tvd.${k}`)}</div>
<div class="sub">1 − average ${k}-way TVD over ${metric(r.marginals[k], "count", `marginals.${k}`)} marginals</div>${holdout}</div>`;
  });
  if (r.tstr && r.tstr_auc !== undefined) {
    const t = r.tstr;
    cards.push(`<div class="card"><div class="label">TSTR ROC AUC</div><div class="big">${metric(r.tstr_auc, "fixed", "tstr_auc")}</div>
<div class="sub">logistic regression trained on the synthetic rows predicts <b>${esc(t.target)}</b> = <b>${esc(t.positive)}</b> on ${metric(t.test_rows, "count", "tstr.test_rows")} ${t.test === "holdout" ? "HOLDOUT" : "REAL"} rows</div>
${r.tstr_auc_train !== undefined ? `<div class="ref">trained on TRAIN: ${metric(r.tstr_auc_train, "fixed", "tstr_auc_train")}</div>` : `<div class="ref">no HOLDOUT given: no TRAIN baseline</div>`}</div>`);
  } else {
    cards.push(`<div class="card off"><div class="label">TSTR ROC AUC</div><div class="big">–</div><div class="sub">not run: give a target column (<code>--target COL</code>)</div></div>`);
  }
  if (r.privacy) {
    const p = r.privacy;
    cards.push(`<div class="card"><div class="label">DCR share closer to TRAIN</div><div class="big">${metric(p.closer_to_train_share, "fixed", "privacy.closer_to_train_share")}</div>
<div class="sub">about 0.5 when nothing is memorised; 1 when every synthetic row copies TRAIN</div></div>`);
    cards.push(`<div class="card"><div class="label">Exact copies of TRAIN rows</div><div class="big">${metric(p.exact_copies_train_rate, "percent", "privacy.exact_copies_train_rate")}</div>
<div class="sub">${metric(p.exact_copies_train, "count", "privacy.exact_copies_train")} synthetic rows</div>
<div class="ref">HOLDOUT's own: ${metric(p.exact_copies_holdout_baseline_rate, "percent", "privacy.exact_copies_holdout_baseline_rate")} (${metric(p.exact_copies_holdout_baseline, "count", "privacy.exact_copies_holdout_baseline")} rows)</div></div>`);
  } else {
    cards.push(`<div class="card off"><div class="label">Privacy (DCR, exact copies)</div><div class="big">–</div><div class="sub">not run: give a HOLDOUT file (<code>--holdout HOLDOUT.csv</code>)</div></div>`);
  }
  const row = (role: string, f: FileInfo, rowsMetric: string): string =>
    `<tr><th>${role}</th><td class="file">${esc(f.name)}</td><td class="num">${rowsMetric}</td><td class="num">${formatMetric(f.columns, "count")}</td></tr>`;
  const fileRows = [
    row("REAL (TRAIN)", files.real, metric(r.rows.real, "count", "rows.real")),
    row("SYNTHETIC", files.synthetic, metric(r.rows.synthetic, "count", "rows.synthetic")),
  ];
  if (files.holdout && ref) fileRows.push(row("HOLDOUT", files.holdout, metric(ref.rows.synthetic, "count", "rows.synthetic", "data-json-holdout")));
  return `<section id="summary"><h2>Summary</h2>
${verdictLine(r)}
<div class="top">${rulesTable(r)}
${worstPairsTable(r, codecs)}</div>
<div class="cards">${cards.join("\n")}</div>
<table class="files"><thead><tr><th></th><th>file</th><th class="num">rows</th><th class="num">columns</th></tr></thead><tbody>${fileRows.join("")}</tbody></table>
${r.excluded.length ? `<p class="note">Identifier columns, left out of the accuracy figures and checked per column instead: ${r.excluded.map((c) => `<b>${esc(c)}</b>`).join(", ")}.</p>` : ""}
</section>`;
}

/** The summary's verdict line (`nearCopyVerdict`, `pass` or `fail`) and the holdout warning. */
function verdictLine(r: EvaluationReport): string {
  const c = r.near_copies;
  const line = c
    ? `<p id="verdict" class="verdict ${c.passed ? "pass" : "fail"}" data-passed="${c.passed}">${esc(nearCopyVerdict(c))} <a href="#near-copies">Details</a>.</p>`
    : `<p id="verdict" class="verdict">Privacy: not checked (the real table needs 2 rows and the synthetic table 1).</p>`;
  return line + (r.holdout_warning ? `\n<p class="warn">${esc(r.holdout_warning)}</p>` : "");
}

/** The privacy section's near-copy check (`near_copies`), which needs no holdout. */
function nearCopySection(r: EvaluationReport): string {
  const c = r.near_copies;
  if (!c) return "";
  const at = (k: string): string => `near_copies.${k}`;
  return `<div id="near-copies"><h3>Near-copies of real rows (no HOLDOUT needed)</h3>
<p class="note">A near-copy is a synthetic row equal to some real row on all ${c.columns.length} compared columns but at most one (identifiers left out; categorical cells by their text, numbers and datetimes by their bin of the real code book). The reference: the real table cut 50/50 at random, ${c.splits} times; the share of one half's rows that nearly copy a row of the other half is what coincidence gives. The synthetic rows are checked against the same half, so both shares are against as many real rows.</p>
<table class="kv"><tbody>
<tr><th>synthetic rows equal to a real row on all columns but at most one</th><td>${metric(c.synthetic_near_copies, "count", at("synthetic_near_copies"))} (${metric(c.synthetic_share, "percent", at("synthetic_share"))})</td></tr>
<tr><th>against half of the real rows: synthetic / the other half</th><td>${metric(c.synthetic_share_at_half, "percent", at("synthetic_share_at_half"))} / ${metric(c.split_share, "percent", at("split_share"))} <span class="hint">passes up to the half's share + ${metric(c.near_copy_margin, "percent", at("near_copy_margin"))} (2 standard errors)</span></td></tr>
<tr><th>DCR share: rows closer to a real half than its other half's median row (ties ½), synthetic / the other half</th><td>${metric(c.dcr_share, "fixed", at("dcr_share"))} / ${metric(c.dcr_split_share, "fixed", at("dcr_split_share"))} <span class="hint">${c.dcr_in_verdict ? `passes up to + ${metric(c.dcr_margin, "fixed", at("dcr_margin"))}` : `not in the verdict: fewer than 200 rows per half, where the share measures how typical rows are rather than copying`}</span></td></tr>
<tr><th>verdict</th><td>${c.passed ? "pass" : "fail"}</td></tr>
</tbody></table></div>`;
}

/** The checks of one column as table rows (label, value), only those that apply to its kind. */
function checkRows(c: ColumnCheck, i: number): string[] {
  const rows: string[] = [];
  const pct = (key: keyof ColumnCheck, label: string): void => {
    const v = c[key];
    if (typeof v === "number") rows.push(`<tr><th>${label}</th><td>${metric(v, "percent", `checks.${i}.${key}`)}</td></tr>`);
  };
  if (c.format !== undefined) rows.push(`<tr><th>format</th><td>${esc(c.format)}</td></tr>`);
  pct("parse", c.kind === "datetime" ? "parse as a datetime" : "parse as a number");
  pct("in_format", "in the column's format");
  pct("in_range", "inside the real range");
  pct("precision", "no more decimals than real");
  pct("known", "a value the real column has");
  pct("copies", "equal to a real value");
  pct("distinct", "distinct");
  pct("shape", "of the real identifiers' shape");
  rows.push(
    `<tr><th>blank, real / synthetic</th><td>${metric(c.blank_real, "percent", `checks.${i}.blank_real`)} / ${metric(c.blank_synthetic, "percent", `checks.${i}.blank_synthetic`)}</td></tr>`,
  );
  return rows;
}

function columnSection(
  f: number,
  codec: ColumnCodec,
  chart: string,
  r: EvaluationReport,
  ref: EvaluationReport | undefined,
  k: number | undefined,
): string {
  const rows: string[] = [`<tr><th>kind</th><td>${esc(codec.kind)}</td></tr>`];
  if (k !== undefined) {
    const c = r.columns[k];
    rows.push(`<tr><th>1-way TVD (accuracy)</th><td>${metric(c.tvd1, "fixed", `columns.${k}.tvd1`)} (${metric(c.tvd1, "accuracy", `columns.${k}.tvd1`)})</td></tr>`);
    if (ref) rows.push(`<tr><th>1-way TVD, HOLDOUT against REAL</th><td>${metric(ref.columns[k].tvd1, "fixed", `columns.${k}.tvd1`, "data-json-holdout")}</td></tr>`);
    rows.push(`<tr><th>mean 2-way TVD of its pairs</th><td>${metric(c.tvd2, "fixed", `columns.${k}.tvd2`)}</td></tr>`);
    const unseen = r.unseen[codec.name];
    if (unseen !== undefined) rows.push(`<tr><th>synthetic values the real column never had</th><td>${metricAt(unseen, "percent", ["unseen", codec.name])}</td></tr>`);
  } else {
    rows.push(`<tr><th>TVD</th><td>left out (identifier)</td></tr>`);
  }
  const i = r.checks.findIndex((c) => c.column === codec.name);
  if (i >= 0) rows.push(...checkRows(r.checks[i], i));
  return `<section class="column" id="col-${f}"><h3>${esc(codec.name)} <span class="kind">${esc(codec.kind)}</span></h3>
<div class="column-body">${chart}<table class="kv checks"><tbody>${rows.join("\n")}</tbody></table></div></section>`;
}

const STYLE = `
:root { --real: ${COLORS.real}; --synth: ${COLORS.synthetic}; --ink: #1d1d1f; --muted: #5a5a60; --line: #e3e3e8; }
* { box-sizing: border-box; }
html { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--ink); margin: 0 auto; max-width: 1180px; padding: 24px 28px 48px; line-height: 1.4; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 20px; margin: 36px 0 12px; border-bottom: 2px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 16px; margin: 0 0 8px; overflow-wrap: anywhere; }
.lead { color: var(--muted); margin: 0 0 8px; }
.legend-key { display: inline-block; width: 11px; height: 11px; border-radius: 2px; vertical-align: -1px; margin: 0 4px 0 10px; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(168px, 1fr)); gap: 12px; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; background: #fafafc; break-inside: avoid; }
.card.off { background: #fff; color: var(--muted); }
.card .label { font-size: 13px; font-weight: 600; color: var(--muted); text-transform: uppercase; letter-spacing: .03em; }
.card .big { font-size: 30px; font-weight: 700; margin: 2px 0; font-variant-numeric: tabular-nums; }
.card .sub, .card .ref { font-size: 12.5px; color: var(--muted); }
.card .ref { margin-top: 4px; color: var(--ink); }
table { border-collapse: collapse; font-size: 13px; }
table.files { margin-top: 16px; }
.top { display: flex; flex-wrap: wrap; gap: 8px 40px; align-items: flex-start; margin-bottom: 16px; }
.top h3 { margin: 0 0 4px; }
.top .note { margin: 0 0 6px; max-width: 560px; }
table.rules th, table.rules td, table.pairs th, table.pairs td { padding: 3px 10px; border-bottom: 1px solid var(--line); text-align: left; }
table.rules td .hint { display: block; }
tr.flag td { background: #fff1e6; }
tr.flag td:last-child { color: #a04000; font-weight: 600; }
table.files th, table.files td { padding: 4px 10px; border-bottom: 1px solid var(--line); text-align: left; }
td.file { overflow-wrap: anywhere; max-width: 560px; }
.num { text-align: right !important; font-variant-numeric: tabular-nums; }
table.kv th { text-align: left; font-weight: normal; color: var(--muted); padding: 3px 12px 3px 0; vertical-align: top; }
table.kv td { padding: 3px 0; font-variant-numeric: tabular-nums; }
nav ol { columns: 4 180px; font-size: 13px; padding-left: 20px; margin: 0; }
nav a { color: var(--ink); }
.column { border-top: 1px solid var(--line); padding: 16px 0; break-inside: avoid; }
.column-body { display: flex; flex-wrap: wrap; gap: 16px 32px; align-items: flex-start; }
.column-body table { min-width: 280px; }
.kind { font-size: 12px; font-weight: 600; color: #fff; background: #6b6b75; border-radius: 4px; padding: 1px 6px; vertical-align: 2px; }
figure.chart { margin: 0 0 12px; max-width: 100%; break-inside: avoid; }
figure.chart svg { max-width: 100%; height: auto; }
figcaption { font-size: 12.5px; color: var(--muted); max-width: 600px; }
.note { color: var(--muted); font-size: 13.5px; }
.verdict { font-size: 15px; font-weight: 600; padding: 6px 10px; border-left: 4px solid var(--muted); }
.verdict.pass { border-color: #2e7d32; }
.verdict.fail, .warn { border-color: #c62828; color: #c62828; }
.warn { border-left: 4px solid; padding: 4px 10px; }
.hint { color: var(--muted); font-size: 12px; }
code { font-size: 12.5px; background: #f2f2f5; padding: 0 3px; border-radius: 3px; }
footer { margin-top: 40px; font-size: 12.5px; color: var(--muted); border-top: 1px solid var(--line); padding-top: 10px; }
footer p { margin: 4px 0; }
@media print {
  body { max-width: none; padding: 0; }
  nav { display: none; }
  h2 { break-after: avoid; }
  .card { background: #fff; }
  @page { margin: 14mm; }
}
`;

function page(p: {
  title: string;
  summary: string;
  columns: string[];
  codecs: ColumnCodec[];
  pairs: string;
  privacy: string;
  sampleNote: string;
}): string {
  const toc = p.codecs.map((c, f) => `<li><a href="#col-${f}">${esc(c.name)}</a></li>`).join("");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>${esc(p.title)}</title>
<style>${STYLE}</style>
</head>
<body>
<header>
<h1>${esc(p.title)}</h1>
<p class="lead">How closely the synthetic table reproduces the real one, column by column and pair by pair, and whether it copies real rows.
Colours: <span class="legend-key" style="background: var(--real)"></span>real <span class="legend-key" style="background: var(--synth)"></span>synthetic.</p>
</header>
${p.summary}
<nav><h2>Contents</h2><p class="note"><a href="#summary">Summary</a> · <a href="#columns">Columns</a> · <a href="#pairs">Column pairs</a> · <a href="#privacy">Privacy</a></p><ol>${toc}</ol></nav>
<section id="columns"><h2>Columns</h2>
<p class="lead">Each column's distribution in both files over the same bars, its TVD and the checks of <code>synthd evaluate</code> (shares of the synthetic non-blank values unless said otherwise).</p>
${p.columns.join("\n")}
</section>
<section id="pairs"><h2>Column pairs</h2>
${p.pairs}
</section>
<section id="privacy"><h2>Privacy</h2>
${p.privacy}
</section>
<footer>
<p>TVD (total variation distance) of a marginal: ½ Σ |P(x) − Q(x)| over its cells, P and Q the real and synthetic shares, numerical and datetime columns binned by the real table's code book (at most 32 bins); accuracy = 1 − the average TVD over every 1-, 2- or 3-way marginal of the compared columns. TSTR: train on synthetic, test on real. DCR: distance to closest record (Platzer &amp; Reutterer, Frontiers in Big Data 2021), Hamming distance over the binned columns.</p>
<p>${esc(p.sampleNote)}</p>
<p>Written by synthd ${esc(SDK_VERSION)} (<code>synthd report</code>); the figures are those of <code>synthd evaluate --json</code> for the same files and options.</p>
</footer>
</body>
</html>
`;
}
