/**
 * The privacy check without a holdout (issue 24, `src/sdk/privacy/near-copies.ts`): near-copy
 * share counted exactly, the split reference reproducible, a copying generator failing and an
 * independent-columns generator passing the verdict, `evaluate`'s `near_copies` present without a
 * holdout (and the HOLDOUT warning with a small one), the report's verdict line above the row
 * rules; and, end to end with a real server and the SDK's defaults, the acceptance: on a 45-row
 * public table of 12 columns (test/data/us-presidents.csv) and on cars, no more synthetic
 * near-copies than a 50/50 split of the real table gives.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { Rng, Synthd, Synthesizer, type Metadata, type Table } from "../src/sdk";
import { evaluate } from "../src/sdk/evaluate";
import { buildReport } from "../src/sdk/report";
import { holdoutNearCopyCheck, nearCopyCheck, nearCopyShare, nearCopyVerdict, shuffled } from "../src/sdk/privacy/near-copies";
import { FILTER_MAX_SPLIT_SHARE, FILTER_NONE_SPLIT_SHARE, NearCopyFilter } from "../src/sdk/privacy/filter";
import { formatReport } from "../src/cli/commands/evaluate";
import { removeDir, SHARED_DATASETS, startServer, tempDir, type ServerProcess } from "../bench/harness";

const PRESIDENTS = join(__dirname, "..", "..", "test", "data", "us-presidents.csv");

/** Column arrays from rows of keys. */
function columns(rows: number[][]): Int32Array[] {
  return rows[0].map((_, f) => Int32Array.from(rows, (r) => r[f]));
}

test("near-copy share: exactly the 3 synthetic rows of 10 that equal a real row on all columns but at most one", () => {
  const real = [
    [0, 0, 0, 0],
    [1, 1, 1, 1],
    [2, 2, 2, 2],
    [3, 3, 3, 3],
    [4, 4, 4, 4],
  ];
  const synth = [
    [1, 1, 1, 1], // an exact copy
    [2, 2, 9, 2], // one column differs
    [9, 3, 3, 3], // one column differs
    [4, 4, 9, 9], // two differ
    [0, 1, 2, 3], // three differ
    [5, 5, 5, 5],
    [0, 0, 1, 1], // two differ
    [-1, -1, 4, 4], // unseen values equal nothing: two differ
    [3, 3, 4, 4], // two differ
    [2, 3, 2, 3], // two differ
  ];
  assert.deepEqual(nearCopyShare(columns(real), columns(synth)), { count: 3, share: 0.3 });
  // a negative key differs even from another negative key: [-1, 2, 2, 2] is a near-copy of row 2 (one column differs), [-1, -1, 2, 2] is not
  assert.equal(nearCopyShare(columns([[-1, 2, 2, 2]]), columns([[-1, 2, 2, 2], [-1, -1, 2, 2]])).count, 1, "-1 against -1 is a difference: one column differs, then two");
  assert.deepEqual(nearCopyShare(columns(real), columns([[-1, 2, 2, 2], [-1, -1, 2, 2]])), { count: 1, share: 0.5 });
  // repeated reference rows count once and change nothing
  assert.deepEqual(nearCopyShare(columns([...real, ...real, ...real]), columns(synth)), { count: 3, share: 0.3 });
});

/** A real table with related columns: a latent class per row drives each column, with noise. */
function relatedTable(n: number, F: number, seed: number): number[][] {
  const rng = new Rng(seed);
  return Array.from({ length: n }, () => {
    const z = rng.int(6);
    return Array.from({ length: F }, (_, f) => (rng.next() < 0.6 ? (z + f) % 6 : rng.int(6)));
  });
}

/** Rows whose columns are drawn independently from the real columns' 1-way marginals. */
function independentRows(real: number[][], n: number, seed: number): number[][] {
  const rng = new Rng(seed);
  return Array.from({ length: n }, () => real[0].map((_, f) => real[rng.int(real.length)][f]));
}

test("the split reference is the same for the same seed; copies fail the verdict, independent columns pass", () => {
  const real = relatedTable(600, 8, 1);
  const names = real[0].map((_, f) => `c${f}`);
  const indep = columns(independentRows(real, 600, 2));
  const a = nearCopyCheck(columns(real), indep, names, { seed: 3 });
  const b = nearCopyCheck(columns(real), indep, names, { seed: 3 });
  assert.deepEqual(a, b, "same seed, same splits, same figures");
  assert.equal(a.half_rows[0] + a.half_rows[1], 600);
  assert.ok(a.split_share > 0, `related columns give near-copies between real halves by coincidence (${a.split_share})`);
  assert.ok(a.passed && a.near_copies_passed && a.dcr_passed && a.dcr_in_verdict, JSON.stringify(a));
  assert.match(nearCopyVerdict(a), /^Privacy: no more near-copies of real rows than a split of the real table/);

  // a generator that writes real rows back (with one cell changed in half of them)
  const rng = new Rng(4);
  const copies = Array.from({ length: 600 }, () => {
    const row = [...real[rng.int(600)]];
    if (rng.next() < 0.5) row[rng.int(8)] = rng.int(6);
    return row;
  });
  const c = nearCopyCheck(columns(real), columns(copies), names, { seed: 3 });
  assert.ok(c.synthetic_share > 0.99, `every copy is a near-copy (${c.synthetic_share})`);
  assert.ok(!c.passed && !c.near_copies_passed && !c.dcr_passed, JSON.stringify(c));
  assert.match(nearCopyVerdict(c), /^Privacy warning: 600 synthetic rows \(100\.0%\) equal a real row/);
});

test("holdout near-copies: a generator copying its training rows fails, one drawing from the same population passes, also on a complete grid where every coherent row is a near-copy", async () => {
  const population = relatedTable(1200, 6, 11);
  const train = population.slice(0, 400);
  const holdout = population.slice(400, 800);
  const fresh = population.slice(800);
  const rng = new Rng(12);
  const copies = Array.from({ length: 400 }, () => {
    const row = [...train[rng.int(400)]];
    row[rng.int(6)] = rng.int(6);
    return row;
  });
  const copied = holdoutNearCopyCheck(columns(train), columns(holdout), columns(copies));
  assert.ok(copied.train_share === 1 && copied.holdout_share < 0.7 && !copied.passed, JSON.stringify(copied));
  const learned = holdoutNearCopyCheck(columns(train), columns(holdout), columns(fresh));
  assert.ok(learned.passed && learned.train_share > 0, JSON.stringify(learned));
  assert.equal(learned.reference_rows, 400);

  // 40 states x 10 groups, one figure per cell: TRAIN and HOLDOUT hold disjoint cells, and a
  // generator that learned the grid writes every cell with a fresh figure.
  const cells = Array.from({ length: 400 }, (_, i) => [i % 40, Math.floor(i / 40)]);
  const figure = (r: Rng): number => r.int(8);
  const order = Array.from(shuffled(400, 13));
  const grid = (rows: number[], r: Rng): number[][] => rows.map((i) => [...cells[i], figure(r)]);
  const gRng = new Rng(14);
  const gTrain = grid(order.slice(0, 200), gRng);
  const gHoldout = grid(order.slice(200), gRng);
  const gSynth = grid(Array.from({ length: 200 }, () => gRng.int(400)), gRng);
  const split = nearCopyCheck(columns([...gTrain, ...gHoldout]), columns(gSynth), ["state", "group", "figure"]);
  assert.equal(split.synthetic_share, 1, "every coherent row equals its cell on all columns but the figure");
  const grided = holdoutNearCopyCheck(columns(gTrain), columns(gHoldout), columns(gSynth));
  assert.ok(grided.passed, JSON.stringify(grided));

  // evaluate with a holdout reports the same check, values only the holdout holds included
  const r = await evaluate(table(train), table(fresh), { holdout: table(holdout) });
  assert.ok(r.holdout_near_copies?.passed, JSON.stringify(r.holdout_near_copies));
  const c = await evaluate(table(train), table(copies), { holdout: table(holdout) });
  assert.equal(c.holdout_near_copies?.passed, false);
  const onlyHoldout = { columns: ["a", "b"], rows: [["x", "1"], ["y", "2"]] };
  const h = await evaluate(onlyHoldout, { columns: ["a", "b"], rows: [["z", "3"]] }, { holdout: { columns: ["a", "b"], rows: [["z", "3"], ["w", "4"]] } });
  assert.equal(h.holdout_near_copies?.holdout_share, 1, "a value the training rows lack still matches the holdout's");
});

/** A table of `rows` as CSV cells with a header. */
function table(rows: number[][]): Table {
  return { columns: rows[0].map((_, f) => `c${f}`), rows: rows.map((r) => r.map((v) => `v${v}`)) };
}

test("evaluate: near_copies without a holdout, printed first by synthd evaluate; a HOLDOUT under 200 rows gets a warning", async () => {
  const real = relatedTable(400, 6, 5);
  const r = await evaluate(table(real), table(independentRows(real, 400, 6)));
  assert.equal(r.privacy, undefined, "the holdout check needs a holdout");
  assert.ok(r.near_copies, "the near-copy check needs none");
  assert.deepEqual(r.near_copies.columns, ["c0", "c1", "c2", "c3", "c4", "c5"]);
  assert.equal(r.near_copies.passed, true);
  assert.equal(r.holdout_warning, undefined);
  const text = formatReport(r);
  assert.ok(text.startsWith("Privacy: no more near-copies"), text.slice(0, 200));
  assert.match(text, /synthetic rows equal to a real row on all columns but at most one: \d+/);

  const withHoldout = await evaluate(table(real.slice(0, 331)), table(independentRows(real, 400, 6)), { holdout: table(real.slice(331)) });
  assert.ok(withHoldout.privacy && withHoldout.near_copies);
  assert.match(withHoldout.holdout_warning ?? "", /^HOLDOUT has 69 rows, fewer than 200: too small for its reference to mean anything/);
  assert.match(formatReport(withHoldout), /warning: HOLDOUT has 69 rows/);
});

test("report: the verdict line sits at the top of the summary, above the row rules and the worst pairs", async () => {
  const real = relatedTable(300, 5, 7);
  const metadata = { features: ["c0", "c1", "c2", "c3", "c4"], rules: [] } as unknown as Metadata;
  const { html } = await buildReport(table(real), table(real), { metadata });
  const verdict = html.indexOf('id="verdict"');
  assert.ok(verdict > html.indexOf('<section id="summary">'), "inside the summary");
  assert.ok(verdict < html.indexOf('id="rules"') && verdict < html.indexOf('id="worst-pairs"'), "above the rules and the worst pairs");
  assert.match(html, /class="verdict fail"[^>]*>Privacy warning: 300 synthetic rows/, "a copy of the real table fails");
  assert.ok(html.indexOf('id="near-copies"') > html.indexOf('<section id="privacy">'), "the check in the privacy section, without a HOLDOUT");
});

let server: ServerProcess;
let dir: string;
let client: Synthd;

before(async () => {
  dir = tempDir();
  server = await startServer(join(dir, "store"));
  client = new Synthd({ apiKey: server.sandboxKey!, baseUrl: server.url });
});

after(async () => {
  await server?.kill("SIGTERM");
  removeDir(dir);
});

// The presidents' names are left out of the comparison, as the issue compares "the columns besides
// the name" (at k = 5 the model writes fresh names, which alone would keep every row from being a near-copy).
const CASES: [string, string, string[]][] = [
  ["us-presidents (45 rows, 12 columns)", PRESIDENTS, ["first_name", "last_name"]],
  // cars' names are compared: rare ones are written fresh (a make of the row's origin + fresh words).
  ["cars (406 rows, 9 columns)", join(SHARED_DATASETS, "real", "cars.csv"), []],
];
for (const [name, file, names] of CASES) {
  test(`acceptance, ${name}: with the defaults, no more near-copies than a 50/50 split of the real table`, async () => {
    const synth = await Synthesizer.fit(client, file, { waitOptions: { pollIntervalMs: 100 } });
    const n = synth.metadata.source?.rows ?? 0;
    assert.ok(n > 0);
    const out = join(dir, `${name.split(" ")[0]}.csv`);
    await synth.writeCsv(out, n, { seed: 7 });
    const r = await evaluate(file, out, { columns: Object.fromEntries(names.map((c) => [c, { type: "id" as const }])) });
    const c = r.near_copies!;
    assert.equal(r.privacy, undefined, "no HOLDOUT given");
    assert.ok(c.columns.length >= 9 && names.every((n) => !c.columns.includes(n)), `${c.columns.length} columns compared`);
    // "No higher than a split gives": the near-copy filter the fit built drops every near-copy.
    assert.ok(synth.nearCopyFilter, "fit builds the near-copy filter for a small table");
    assert.equal(c.synthetic_near_copies, 0, nearCopyVerdict(c));
    assert.ok(c.synthetic_share_at_half <= c.split_share, `near-copies against half of the real rows: synthetic ${c.synthetic_share_at_half}, split ${c.split_share}`);
    assert.ok(c.near_copies_passed, nearCopyVerdict(c));
    // The DCR share is not asserted: on cars it sits at the edge of its margin with these defaults
    // (0.53-0.57 against the split's 0.51 + 0.05; docs/api.md), so the verdict may warn on a sample.
    assert.ok(c.dcr_share >= 0 && c.dcr_share <= 1);

    // The filter only drops rows: the same seed without it gives the same rows, near-copies among them.
    const all = await synth.sample(n, { seed: 7, nearCopyFilter: false });
    const near = await synth.nearCopyFilter!.flags(all);
    const kept = all.rows.filter((_, r) => near[r] === 0);
    const filtered = await synth.sample(n, { seed: 7 });
    assert.equal(filtered.rows.length, n, "dropped rows are replaced");
    assert.deepEqual(filtered.rows.slice(0, kept.length), kept, "the unfiltered rows, near-copies left out, then new rows");
    const again = await evaluate(file, { columns: all.columns, rows: all.rows }, { columns: Object.fromEntries(names.map((c) => [c, { type: "id" as const }])) });
    // The filter flags what evaluate counts, and a Bloom filter's false positives (about 0.1% of the other rows) besides.
    const flagged = near.reduce((a, b) => a + b, 0);
    const counted = again.near_copies!.synthetic_near_copies;
    assert.ok(flagged >= counted && flagged - counted <= 3, `flagged ${flagged}, evaluate counts ${counted}`);
  });
}

test("near-copy filter: flags rows equal to a real row on all columns but one; where real rows nearly copy each other it keeps the split's share", async () => {
  const real = relatedTable(300, 12, 11);
  const built = await NearCopyFilter.build(table(real), {}, new Uint8Array(32).fill(7)); // a fixed key: the same false positives every run
  assert.ok(built.filter, `12 related columns over 6 values: few real near-copies (split share ${built.splitShare})`);
  assert.ok(built.splitShare <= FILTER_MAX_SPLIT_SHARE, `${built.splitShare}`);
  const probe = [
    [...real[0]], // a copy
    [...real[1].slice(0, 11), (real[1][11] + 1) % 6], // one column differs
    [(real[2][0] + 1) % 6, (real[2][1] + 1) % 6, ...real[2].slice(2)], // two differ: flagged only if another real row is that close
  ];
  const flags = await built.filter.flags(table(probe));
  assert.equal(flags[0], 1);
  assert.equal(flags[1], 1);
  assert.equal(flags[2], nearCopyShare(columns(real), columns([probe[2]])).count, "as the near-copy check counts it");
  // A value the real column never has differs from every real value.
  const copy = table([real[3]]).rows[0];
  const unseen = await built.filter.flags({ columns: table(real).columns, rows: [[...copy.slice(0, 11), "new"], [...copy.slice(0, 10), "new", "v9"]] });
  assert.deepEqual([...unseen], [1, 0], "one unseen value is one differing column; two are two");

  assert.equal(built.filter.targetShare, 0, "a split with few near-copies: every near-copy is dropped");

  const eight = relatedTable(300, 8, 12); // eight columns of 6 values: a quarter of the rows nearly copy another
  const common = await NearCopyFilter.build(table(eight));
  assert.ok(common.splitShare > FILTER_MAX_SPLIT_SHARE && common.splitShare < FILTER_NONE_SPLIT_SHARE, `${common.splitShare}`);
  assert.equal(common.filter?.targetShare, common.splitShare, "near-copies common in the data: kept up to the split's share");
  const six = relatedTable(300, 6, 12); // six columns: more than half the rows nearly copy another
  const none = await NearCopyFilter.build(table(six));
  assert.equal(none.filter, undefined);
  assert.match(none.reason ?? "", /near-copies are what this table is/);
  const one = await NearCopyFilter.build(table(relatedTable(300, 2, 12)), { columns: { c0: { type: "id" } } }); // one compared column
  assert.equal(one.filter, undefined);
  assert.match(one.reason ?? "", /fewer than 2 compared columns/);
});
