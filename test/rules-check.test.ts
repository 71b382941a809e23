/**
 * Row rules, checked (issue 23): `ruleChecker` on hand-made metadata and rows for every kind of
 * rule (keeps, breaks, does not apply), `ruleShares` over a table, and `evaluate`'s `rules`
 * section (the share of real and of synthetic rows keeping each rule of the model's metadata) and
 * `worst_pairs`, in the SDK, `synthd evaluate`'s tables and its `--metadata` option.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { DataError, extractMetadata, type Metadata, type Rule, type Table } from "../src/sdk";
import { evaluate, evaluateWithDetails } from "../src/sdk/evaluate";
import { ruleChecker, ruleLabel, ruleShares } from "../src/sdk/rules/check";
import { formatReport } from "../src/cli/commands/evaluate";
import { removeDir, runCli, tempDir } from "../bench/harness";

let dir: string;
before(() => {
  dir = tempDir("synthd-rules-check-");
});
after(() => {
  removeDir(dir);
});

const FEATURES = ["city", "state", "n", "start", "end", "from", "to", "a", "b", "total", "home", "away", "p", "q", "x", "y"];
const cat = { type: "categorical" as const, count: 10, missing: 0 };
const num = (decimals: number) => ({ type: "numerical" as const, count: 10, missing: 0, decimals });
const META: Metadata = {
  features: FEATURES,
  cardinalities: {},
  empirical_probs: {},
  column_stats: {
    city: cat,
    state: cat,
    n: num(1),
    start: num(0),
    end: num(0),
    from: { type: "datetime", count: 10, missing: 0, format: "d/M/yyyy" },
    to: { type: "datetime", count: 10, missing: 0, format: "d/M/yyyy" },
    a: num(2),
    b: num(2),
    total: num(2),
    home: cat,
    away: cat,
    p: num(1),
    q: num(0),
    x: cat,
    y: cat,
  },
  value_mappings: {
    city: { Paris: 0, Lyon: 1, Austin: 2, __other__: 3, "": 4 },
    state: { FR: 0, TX: 1, "": 2 },
    n: { "1.5": 0, "2": 1 },
  },
};

/** A row in FEATURES order from the cells given by name (every other cell blank). */
function row(cells: Record<string, string>): string[] {
  return FEATURES.map((f) => cells[f] ?? "");
}

test("fixed combinations: a released tuple of codes keeps, another tuple or a value without a code breaks, a blank cell takes the row out", () => {
  const rule: Rule = { type: "fixed_combinations", columns: ["city", "state"], determinant: "city", combinations: [[0, 0], [1, 0], [2, 1]], counts: [5, 3, 2], share: 1 };
  const check = ruleChecker(rule, META);
  assert.equal(check(row({ city: "Paris", state: "FR" })), true);
  assert.equal(check(row({ city: "Austin", state: "TX" })), true);
  assert.equal(check(row({ city: "Austin", state: "FR" })), false, "a combination never released");
  assert.equal(check(row({ city: "Berlin", state: "FR" })), undefined, "a city without its own code is the pooled code 3, and no combination holds it: the determinant rule says nothing of a rare city");
  assert.equal(ruleChecker({ ...rule, determinant: undefined }, META)(row({ city: "Berlin", state: "FR" })), false, "without a determinant, (3, FR) is simply not released");
  assert.equal(check(row({ city: "Paris", state: "CA" })), false, "a state with no code at all (no pooled code either) breaks");
  assert.equal(check(row({ city: "", state: "FR" })), undefined);
  assert.equal(check(row({ city: "Lyon", state: "" })), undefined);
  // a rare real city is pooled: with (pooled, FR) released, it keeps the rule
  const pooled = ruleChecker({ ...rule, combinations: [...rule.combinations, [3, 0]], counts: [5, 3, 2, 2] }, META);
  assert.equal(pooled(row({ city: "Berlin", state: "FR" })), true);
  assert.equal(pooled(row({ city: "Berlin", state: "TX" })), false);
  // a numerical column with point bins: the same number written otherwise finds its code
  const points: Rule = { type: "fixed_combinations", columns: ["n", "state"], combinations: [[0, 0], [1, 1]], counts: [2, 2], share: 1 };
  const c2 = ruleChecker(points, META);
  assert.equal(c2(row({ n: "1.50", state: "FR" })), true);
  assert.equal(c2(row({ n: "2", state: "FR" })), false);
  assert.equal(c2(row({ n: "3", state: "TX" })), false, "a number that is no point of the column breaks");
  assert.equal(ruleLabel(rule), "city determines state (3 combinations)");
  assert.equal(ruleLabel(points), "n, state in 2 combinations");
});

test("inequality: numbers with Number, datetimes by their instant in the column's format; strict and not; blanks and non-values do not apply", () => {
  const ge: Rule = { type: "inequality", high: "end", low: "start", strict: false, share: 1 };
  const gt: Rule = { ...ge, strict: true };
  const c = ruleChecker(ge, META);
  const s = ruleChecker(gt, META);
  assert.equal(c(row({ start: "3", end: "5" })), true);
  assert.equal(c(row({ start: "9", end: "10" })), true, "compared as numbers, not as text");
  assert.equal(c(row({ start: "5", end: "3" })), false);
  assert.equal(c(row({ start: "4", end: "4" })), true);
  assert.equal(s(row({ start: "4", end: "4" })), false, "strict: equal breaks");
  assert.equal(s(row({ start: "4", end: "4.5" })), true);
  assert.equal(c(row({ start: "", end: "4" })), undefined);
  assert.equal(c(row({ start: "3", end: "abc" })), undefined);
  const dates = ruleChecker({ type: "inequality", high: "to", low: "from", strict: true, share: 1 }, META);
  assert.equal(dates(row({ from: "9/1/2024", to: "10/1/2024" })), true, "10 January after 9 January (the texts sort the other way)");
  assert.equal(dates(row({ from: "10/1/2024", to: "9/1/2024" })), false);
  assert.equal(dates(row({ from: "1/2/2024", to: "1/2/2024" })), false);
  assert.equal(dates(row({ from: "2024-01-09", to: "10/1/2024" })), undefined, "not in the column's format");
  assert.equal(ruleLabel(ge), "end >= start");
  assert.equal(ruleLabel(gt), "end > start");
});

test("sum: within half a unit of the finest decimals (float noise ignored), integers exact, blanks and non-numbers do not apply", () => {
  const rule: Rule = { type: "sum", total: "total", parts: ["a", "b"], share: 1 };
  const c = ruleChecker(rule, META);
  assert.equal(c(row({ total: "0.3", a: "0.1", b: "0.2" })), true, "0.1 + 0.2 is 0.30000000000000004");
  assert.equal(c(row({ total: "1.004", a: "0.5", b: "0.5" })), true, "0.004 is within half a unit of 2 decimals");
  assert.equal(c(row({ total: "1.01", a: "0.5", b: "0.5" })), false);
  assert.equal(c(row({ total: "", a: "0.5", b: "0.5" })), undefined);
  assert.equal(c(row({ total: "1", a: "x", b: "0.5" })), undefined);
  const ints: Metadata = { ...META, column_stats: { ...META.column_stats, a: num(0), b: num(0), total: num(0) } };
  const ci = ruleChecker(rule, ints);
  assert.equal(ci(row({ total: "3", a: "1", b: "2" })), true);
  assert.equal(ci(row({ total: "4", a: "1", b: "2" })), false);
  // without column_stats decimals, the decimals the cells are written with
  const bare: Metadata = { features: FEATURES, cardinalities: {}, empirical_probs: {} };
  const cb = ruleChecker(rule, bare);
  assert.equal(cb(row({ total: "1.5", a: "1", b: "0.54" })), false, "2 decimals written: 0.04 is more than 0.005");
  assert.equal(cb(row({ total: "1.5", a: "1", b: "0.5" })), true);
  assert.equal(ruleLabel(rule), "total = a + b");
});

test("sum of 4 parts: a total written with fewer decimals than its parts keeps within their rounding", () => {
  const rule: Rule = { type: "sum", total: "t", parts: ["a", "b", "c", "d"], share: 1 };
  const stats = { t: num(0), a: num(1), b: num(1), c: num(1), d: num(1) };
  const meta: Metadata = { features: ["t", "a", "b", "c", "d"], cardinalities: {}, empirical_probs: {}, column_stats: stats };
  const c = ruleChecker(rule, meta);
  const r = (t: string) => [t, "5840.4", "15351.5", "4420", "549.8"];
  assert.equal(c(r("26162")), true, "26161.7 rounds to 26162");
  assert.equal(c(r("26161")), false, "0.7 is beyond 0.5 + 0.05");
  assert.equal(c(r("26163")), false);
  assert.equal(ruleLabel(rule), "t = a + b + c + d");
});

test("not equal: the same text, or the same number in two numerical columns, breaks; a blank does not apply", () => {
  const rule: Rule = { type: "not_equal", columns: ["home", "away"], share: 1 };
  const c = ruleChecker(rule, META);
  assert.equal(c(row({ home: "Lions", away: "Bears" })), true);
  assert.equal(c(row({ home: "Lions", away: "Lions" })), false);
  assert.equal(c(row({ home: "", away: "Lions" })), undefined);
  const n = ruleChecker({ type: "not_equal", columns: ["p", "q"], share: 1 }, META);
  assert.equal(n(row({ p: "1.0", q: "1" })), false, "1.0 and 1 are the same number");
  assert.equal(n(row({ p: "1.5", q: "1" })), true);
  assert.equal(ruleLabel(rule), "home != away");
});

test("blank together: all blank or none keeps, some blank breaks; it always applies", () => {
  const rule: Rule = { type: "blank_together", columns: ["x", "y"], share: 1 };
  const c = ruleChecker(rule, META);
  assert.equal(c(row({})), true);
  assert.equal(c(row({ x: "a", y: "b" })), true);
  assert.equal(c(row({ x: "a" })), false);
  assert.equal(c(row({ y: "b" })), false);
  assert.equal(ruleLabel(rule), "x, y blank together");
});

test("ruleChecker: a column metadata lacks, or a datetime column without a format, is a RangeError", () => {
  assert.throws(() => ruleChecker({ type: "not_equal", columns: ["home", "nope"], share: 1 }, META), (e: unknown) => e instanceof RangeError && /"nope"/.test(e.message));
  const noFormat: Metadata = { ...META, column_stats: { ...META.column_stats, to: { type: "datetime", count: 1, missing: 0 } } };
  assert.throws(() => ruleChecker({ type: "inequality", high: "to", low: "from", strict: false, share: 1 }, noFormat), RangeError);
});

test("ruleShares: columns matched by name, kept / applicable per rule, 1 when no row applies, DataError for a missing column", () => {
  const table: Table = {
    columns: ["end", "extra", "start", "x", "y"],
    rows: [
      ["5", "-", "3", "a", "b"],
      ["2", "-", "3", "a", ""],
      ["", "-", "3", "", ""],
      ["7", "-", "7", "", "b"],
    ],
  };
  const rules: Rule[] = [
    { type: "inequality", high: "end", low: "start", strict: true, share: 1 },
    { type: "blank_together", columns: ["x", "y"], share: 1 },
  ];
  const shares = ruleShares(rules, META, table);
  assert.deepEqual(
    shares.map(({ applicable, kept, share }) => ({ applicable, kept, share })),
    [
      { applicable: 3, kept: 1, share: 1 / 3 },
      { applicable: 4, kept: 2, share: 0.5 },
    ],
  );
  assert.equal(shares[0].rule, rules[0]);
  const none = ruleShares(rules.slice(0, 1), META, { columns: ["start", "end"], rows: [["", "1"]] });
  assert.deepEqual(none.map(({ applicable, kept, share }) => ({ applicable, kept, share })), [{ applicable: 0, kept: 0, share: 1 }]);
  assert.throws(() => ruleShares(rules, META, { columns: ["end", "start", "x"], rows: [] }), (e: unknown) => e instanceof DataError && /"y"/.test(e.message));
});

/** 20 real rows keeping "end >= start" and "city determines state". */
function realTable(): Table {
  const cities = [["Paris", "FR"], ["Lyon", "FR"], ["Austin", "TX"]];
  const rows = Array.from({ length: 20 }, (_, i) => [String(i), String(i + (i % 3)), ...cities[i % 3]]);
  return { columns: ["start", "end", "city", "state"], rows };
}

/** The real table's metadata with two rules, whose combinations use its own codes. */
async function metadataWithRules(real: Table): Promise<Metadata> {
  const metadata = await extractMetadata(real);
  const vm = metadata.value_mappings!;
  metadata.rules = [
    { type: "inequality", high: "end", low: "start", strict: false, share: 1 },
    {
      type: "fixed_combinations",
      columns: ["city", "state"],
      determinant: "city",
      combinations: [[vm.city.Paris, vm.state.FR], [vm.city.Lyon, vm.state.FR], [vm.city.Austin, vm.state.TX]],
      counts: [7, 7, 6],
      share: 1,
    },
  ];
  return metadata;
}

/** 20 synthetic rows: rows 0-4 break the inequality, row 19 has a blank end; rows 0 and 1 pair Paris with TX. */
function synthTable(real: Table): Table {
  const rows = real.rows.map((r) => [...r]);
  for (let i = 0; i < 5; i++) rows[i][1] = String(Number(rows[i][0]) - 1);
  rows[19][1] = "";
  rows[0][2] = "Paris";
  rows[0][3] = "TX";
  rows[1][2] = "Paris";
  rows[1][3] = "TX";
  return { columns: real.columns, rows };
}

test("evaluate with the model's metadata: each rule's share of real rows (100%) and of synthetic rows keeping it, exact", async () => {
  const real = realTable();
  const synth = synthTable(real);
  const metadata = await metadataWithRules(real);
  const r = await evaluate(real, synth, { metadata });
  assert.equal(r.rules.length, 2);
  assert.deepEqual(r.rules[0], {
    index: 0,
    type: "inequality",
    columns: ["end", "start"],
    label: "end >= start",
    real: { applicable: 20, kept: 20, share: 1 },
    synthetic: { applicable: 19, kept: 14, share: 14 / 19 },
  });
  assert.deepEqual(r.rules[1].real, { applicable: 20, kept: 20, share: 1 });
  assert.deepEqual(r.rules[1].synthetic, { applicable: 20, kept: 18, share: 0.9 });
  assert.equal(r.rules[1].label, "city determines state (3 combinations)");
  // without metadata, no rules are checked
  assert.deepEqual((await evaluate(real, synth)).rules, []);
  // synthd evaluate's tables: one line per rule with both shares, the broken one named
  const text = formatReport(r);
  assert.match(text, /row rules/);
  assert.match(text, /end >= start\s+100\.00%\s+73\.68%\s+broken more often in synthetic rows/);
  assert.match(text, /city determines state \(3 combinations\)\s+100\.00%\s+90\.00%/);
});

test("evaluate's worst_pairs: the largest 2-way TVDs, largest first, the values of the pair TVDs; printed by synthd evaluate", async () => {
  const real = realTable();
  const synth = synthTable(real);
  const { report, details } = await evaluateWithDetails(real, synth);
  const names = details.modelled.map((f) => details.codecs[f].name);
  const all: { columns: [string, string]; tvd: number }[] = [];
  let k = 0;
  for (let a = 0; a < names.length; a++) for (let b = a + 1; b < names.length; b++) all.push({ columns: [names[a], names[b]], tvd: details.pairTvd[k++] });
  assert.equal(all.length, 6);
  const expected = [...all].sort((p, q) => q.tvd - p.tvd).slice(0, 5);
  assert.deepEqual(report.worst_pairs, expected);
  assert.ok(report.worst_pairs[0].tvd > 0 && report.worst_pairs[0].tvd >= report.worst_pairs[4].tvd);
  assert.match(formatReport(report), new RegExp(`worst column pairs[^\\n]*\\n[^\\n]*\\n${report.worst_pairs[0].columns.join(" x ")}\\s+${report.worst_pairs[0].tvd.toFixed(4)}`));
});

test("synthd evaluate --metadata FILE: the rules in its JSON; a file that is not metadata is a one-sentence error", async () => {
  const real = realTable();
  const synth = synthTable(real);
  const csv = (t: Table): string => [t.columns, ...t.rows].map((r) => r.join(",")).join("\n") + "\n";
  const files = { real: join(dir, "real.csv"), synth: join(dir, "synth.csv"), meta: join(dir, "meta.json"), bad: join(dir, "bad.json") };
  writeFileSync(files.real, csv(real));
  writeFileSync(files.synth, csv(synth));
  writeFileSync(files.meta, JSON.stringify(await metadataWithRules(real)));
  writeFileSync(files.bad, JSON.stringify({ rules: [] }));
  const out = await runCli(["evaluate", files.real, files.synth, "--metadata", files.meta, "--json"]);
  assert.equal(out.code, 0, out.stderr);
  const json = JSON.parse(out.stdout) as { rules: { label: string; real: { share: number }; synthetic: { share: number } }[] };
  assert.deepEqual(json.rules.map((x) => [x.label, x.real.share, x.synthetic.share]), [
    ["end >= start", 1, 14 / 19],
    ["city determines state (3 combinations)", 1, 0.9],
  ]);
  const bad = await runCli(["evaluate", files.real, files.synth, "--metadata", files.bad]);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /--metadata must be a model's metadata/);
});
