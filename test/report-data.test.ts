/**
 * `synthd report`'s computations and command line, without a browser: the figures behind the
 * charts (Cramér's V, histogram and category bins, code-order bars of a discretized table), the
 * pair TVDs and DCR distances of `evaluateWithDetails`, HTML escaping, JSON Pointers, number
 * formats, and the command's usage errors. The report opened in Chromium is test/report.test.ts.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { extractMetadata, type Table } from "../src/sdk";
import { evaluate, evaluateWithDetails, independentSample } from "../src/sdk/evaluate";
import { buildReport } from "../src/sdk/report";
import { escapeHtml, formatMetric, jsonPointer } from "../src/sdk/report/report-format";
import { categories, cramersV, distributionOf, histogram, niceStep } from "../src/sdk/report/report-data";
import type { ColumnScan } from "../src/sdk/metadata/metadata";
import { removeDir, runCli, tempDir } from "../bench/harness";

const ADULT = "/work/shared/datasets/adult.csv";

let dir: string;
before(() => {
  dir = tempDir("synthd-report-data-");
});
after(() => {
  removeDir(dir);
});
test("evaluateWithDetails: the report of evaluate, and the pair TVDs and DCR distances its averages come from", async () => {
  const real = await independentSample(ADULT, 3000, 1);
  const holdout = await independentSample(ADULT, 1500, 2);
  const synth = await independentSample(ADULT, 2000, 3);
  const { report, details } = await evaluateWithDetails(real, synth, { holdout, dcrSample: 500 });
  assert.deepEqual(report, await evaluate(real, synth, { holdout, dcrSample: 500 }));
  assert.equal(details.pairTvd.length, report.marginals["2"]);
  const mean = (xs: ArrayLike<number>): number => Array.from(xs).reduce((s, x) => s + x, 0) / xs.length;
  assert.ok(Math.abs(mean(details.pairTvd) - report.tvd["2"]) < 1e-12);
  assert.equal(details.dcr!.train.length, 500);
  assert.ok(Math.abs(mean(details.dcr!.train) - report.privacy!.mean_dcr_train) < 1e-12);
  assert.ok(Math.abs(mean(details.dcr!.holdout) - report.privacy!.mean_dcr_holdout) < 1e-12);
  // the HOLDOUT reference of the report is evaluate(REAL, HOLDOUT)
  const r = await buildReport(real, synth, { holdout, dcrSample: 500 });
  // (the TVD figures: evaluate's near-copy check of HOLDOUT is not part of the reference)
  const { near_copies: _nearCopies, ...direct } = await evaluate(real, holdout);
  assert.deepEqual(r.holdoutReference, { ...direct, checks: [], excluded: [] });
  assert.equal(r.charts, 15 + 2 + 1);
});

test("the summary starts with the row rules (a rule the synthetic rows break more flagged) and the worst column pairs, before the first column section", async () => {
  // 30 real rows keep "end >= start"; in the synthetic rows 6 of 30 break it (share 0.8)
  const rows = Array.from({ length: 30 }, (_, i) => [String(i % 10), String((i % 10) + (i % 4)), i % 2 ? "yes" : "no", i % 3 ? "x" : "y"]);
  const real: Table = { columns: ["start", "end", "flag", "group"], rows };
  const synth: Table = { columns: real.columns, rows: rows.map((r, i) => (i < 6 ? [r[0], String(Number(r[0]) - 1), r[2], r[3]] : r)) };
  const metadata = await extractMetadata(real);
  metadata.rules = [
    { type: "inequality", high: "end", low: "start", strict: false, share: 1 },
    { type: "blank_together", columns: ["flag", "group"], share: 1 },
  ];
  const r = await buildReport(real, synth, { metadata });
  const html = r.html;
  assert.deepEqual(r.evaluation.rules.map((x) => [x.label, x.real.share, x.synthetic.share]), [
    ["end >= start", 1, 0.8],
    ["flag, group blank together", 1, 1],
  ]);
  const at = {
    summary: html.indexOf('<section id="summary">'),
    rules: html.indexOf('<div id="rules"><h3>Row rules</h3>'),
    worst: html.indexOf('<div id="worst-pairs"><h3>Worst column pairs</h3>'),
    cards: html.indexOf('<div class="cards">'),
    column: html.indexOf('<section class="column"'),
  };
  assert.ok(at.summary >= 0 && at.summary < at.rules && at.rules < at.worst && at.worst < at.cards && at.cards < at.column, JSON.stringify(at));
  const rulesHtml = html.slice(at.rules, at.worst);
  const ruleRows = rulesHtml.split("<tr").slice(2); // after the table's head
  assert.equal(ruleRows.length, 2);
  assert.match(ruleRows[0], /data-flag="broken-more"/);
  assert.match(ruleRows[0], /end &gt;= start/);
  assert.match(ruleRows[0], /data-json="\/rules\/0\/real\/share" data-value="1" data-format="percent">100\.00%/);
  assert.match(ruleRows[0], /data-json="\/rules\/0\/synthetic\/share" data-value="0\.8" data-format="percent">80\.00%/);
  assert.doesNotMatch(ruleRows[1], /data-flag/, "a rule kept as often as in the real rows is not flagged");
  // the worst pairs: evaluate's worst_pairs, largest first, each number tagged with its pointer
  const worstHtml = html.slice(at.worst, at.cards);
  assert.equal(r.evaluation.worst_pairs.length, 5);
  r.evaluation.worst_pairs.forEach((p, k) => {
    assert.ok(worstHtml.includes(`data-json="/worst_pairs/${k}/tvd" data-value="${p.tvd}"`), `pair ${k}`);
    assert.ok(worstHtml.includes(`<a href="#col-${real.columns.indexOf(p.columns[0])}">${p.columns[0]}</a> × <a href="#col-${real.columns.indexOf(p.columns[1])}">${p.columns[1]}</a>`));
  });
  assert.deepEqual(r.evaluation.worst_pairs.map((p) => p.columns), [["start", "end"], ["end", "flag"], ["end", "group"], ["start", "flag"], ["start", "group"]]);
  // every tagged number of the page is the one at its pointer in evaluate's JSON
  const json = JSON.parse(JSON.stringify(r.evaluation)) as unknown;
  const tagged = [...html.matchAll(/data-json="([^"]+)" data-value="([^"]+)"/g)];
  assert.ok(tagged.length > 10);
  for (const [, pointer, value] of tagged) {
    const want = pointer.split("/").slice(1).reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], json);
    assert.equal(Number(value), want, pointer);
  }
  // synthd report --metadata FILE: the same rules table
  const csv = (t: Table): string => [t.columns, ...t.rows].map((x) => x.join(",")).join("\n") + "\n";
  const files = { real: join(dir, "rules-real.csv"), synth: join(dir, "rules-synth.csv"), meta: join(dir, "rules-meta.json"), out: join(dir, "rules.html") };
  writeFileSync(files.real, csv(real));
  writeFileSync(files.synth, csv(synth));
  writeFileSync(files.meta, JSON.stringify(metadata));
  const written = await runCli(["report", files.real, files.synth, "--metadata", files.meta, "-o", files.out]);
  assert.equal(written.code, 0, written.stderr);
  assert.match(readFileSync(files.out, "utf8"), /data-json="\/rules\/0\/synthetic\/share" data-value="0\.8"/);
  // without metadata the summary says how to get the rules checked, still above the columns
  const plain = (await buildReport(real, synth)).html;
  const note = plain.indexOf("No row rules checked");
  assert.ok(note > 0 && note < plain.indexOf('<section class="column"'));
});

test("Cramér's V: 1 for a column that determines the other, 0 for independent counts, the textbook value of a 2x2 table", () => {
  assert.ok(Math.abs(cramersV([5, 0, 0, 0, 7, 0, 0, 0, 3], 3, 3) - 1) < 1e-12);
  assert.equal(cramersV([10, 20, 30, 60], 2, 2), 0);
  // [[10, 20], [30, 40]]: chi2 = 100 * (10*40 - 20*30)^2 / (30 * 70 * 40 * 60) = 0.79365..., V = sqrt(chi2 / 100)
  assert.ok(Math.abs(cramersV([10, 20, 30, 40], 2, 2) - Math.sqrt(0.7936507936507936 / 100)) < 1e-12);
  // empty rows and columns do not count: the same table inside a larger code space
  assert.equal(cramersV([10, 0, 20, 0, 0, 0, 30, 0, 40], 3, 3), cramersV([10, 20, 30, 40], 2, 2));
  assert.equal(cramersV([4, 6, 0, 0], 2, 2), 0, "one non-empty row");
  assert.equal(cramersV([0, 0, 0, 0], 2, 2), 0, "no rows");
});

/** A column scan from values (for the binning helpers). */
function scan(values: string[]): ColumnScan {
  const ids = new Map<string, number>();
  const s: ColumnScan = { name: "x", values: [], counts: [], firstLines: [], ids: new Int32Array(values.length), missing: 0, numeric: true };
  values.forEach((v, r) => {
    let id = ids.get(v);
    if (id === undefined) {
      ids.set(v, (id = s.values.length));
      s.values.push(v);
      s.counts.push(0);
      s.firstLines.push(r + 2);
    }
    s.counts[id]++;
    s.ids[r] = id;
    if (v === "") s.missing++;
  });
  return s;
}

test("histograms: the same bins for both tables over the real range, synthetic values outside it in end bars, blanks and non-numbers left out", () => {
  const real = scan(["0", "10", "20", "35", "50", "50", ""]);
  const synth = scan(["-5", "10", "49.5", "80", "abc", "", ""]);
  const num = (v: string): number | undefined => (Number.isFinite(Number(v)) ? Number(v) : undefined);
  const h = histogram(real, synth, { real: 7, synthetic: 7 }, num, { integer: false, datetime: false });
  assert.equal(niceStep(50 / 20), 2.5);
  assert.equal(h.labels[0], "< 0");
  assert.equal(h.labels[h.labels.length - 1], "> 50");
  assert.equal(h.labels[1], "0–2.5");
  assert.equal(h.real.reduce((s, x) => s + x, 0), 6, "every non-blank real value in a bin");
  assert.equal(h.synthetic.reduce((s, x) => s + x, 0), 4);
  assert.deepEqual(h.omitted, { real: 1, synthetic: 3 });
  assert.equal(h.real[h.labels.length - 2], 2, "the real maximum falls in the last (closed) bin");
  assert.equal(h.synthetic[h.labels.indexOf("47.5–50")], 1);
  // small integer ranges: one bar per integer
  const ints = histogram(scan(["1", "2", "2", "5"]), scan(["2", "3"]), { real: 4, synthetic: 2 }, num, { integer: true, datetime: false });
  assert.deepEqual(ints.labels, ["1", "2", "3", "4", "5"]);
  assert.deepEqual(ints.real, [1, 2, 0, 0, 1]);
  assert.deepEqual(ints.synthetic, [0, 1, 1, 0, 0]);
});

test("category bars: the real column's most frequent values, the rest pooled, blanks last; a value that looks like a made-up label stays apart", () => {
  const values = ["a", "a", "a", "b", "b", "(blank)", ...Array.from({ length: 25 }, (_, i) => `v${i}`), ""];
  const d = categories(scan(values), scan(["a", "zzz", "", ""]), { real: values.length, synthetic: 4 }, 3);
  // other values: v0..v24 of the real column and the synthetic "zzz"
  assert.deepEqual(d.labels, ["a", "b", "(blank)", "(26 other values)", "(blank) ·"]);
  assert.deepEqual(d.real, [3, 2, 1, 25, 1]);
  assert.deepEqual(d.synthetic, [1, 0, 0, 1, 2]);
});

test("a discretized table (--domain): each column's codes drawn in code order, one bar per code", async () => {
  const rows = Array.from({ length: 300 }, (_, i) => [String(i % 7), String((i * 3) % 4)]);
  const table: Table = { columns: ["a", "b"], rows };
  const { details } = await evaluateWithDetails(table, table, { domain: { a: 9, b: 4 } });
  const d = distributionOf(details.codecs[0], details);
  assert.equal(d.type, "histogram");
  assert.deepEqual(d.labels, ["0", "1", "2", "3", "4", "5", "6"]);
  assert.deepEqual(d.real, [43, 43, 43, 43, 43, 43, 42]);
  assert.deepEqual(d.synthetic, d.real);
});

test("report helpers: HTML escaping, JSON Pointers, number formats", () => {
  assert.equal(escapeHtml(`<a href="x">'&'</a>`), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  assert.equal(jsonPointer(["unseen", "a/b~c", 3]), "/unseen/a~1b~0c/3");
  assert.equal(formatMetric(0.0123, "accuracy"), "98.8%");
  assert.equal(formatMetric(0.0012, "percent"), "0.12%");
  assert.equal(formatMetric(12345, "count"), "12,345");
});

test("synthd report without -o is a usage error (exit 2), a missing file a one-sentence failure (exit 1)", async () => {
  const usage = await runCli(["report", ADULT, ADULT]);
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /required option '-o, --output <file>'/);
  const missing = await runCli(["report", ADULT, join(dir, "nope.csv"), "-o", join(dir, "x.html")]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /nope\.csv/);
});
