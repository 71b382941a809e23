/**
 * `evaluate`'s utility and privacy checks (issue 5): ROC AUC by the rank-sum formula, TSTR with
 * logistic regression (tfjs), the distance-to-closest-record share and exact-copy counts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { DataError, type Table } from "../src/sdk";
import { evaluate, fitLogistic, privacyCheck, rocAuc, rocAucOvr } from "../src/sdk/evaluate";
import { closestDistance, sampleIndices } from "../src/sdk/privacy/dcr";

test("ROC AUC, hand-computed with ties: 4.5 of 6 positive-negative pairs ordered (a tie counts 1/2)", () => {
  // positives 0.35, 0.8, 0.4; negatives 0.1, 0.4
  // pairs: 0.35>0.1 (1), 0.35<0.4 (0), 0.8 (2), 0.4>0.1 (1), 0.4=0.4 (1/2)  => 4.5 / 6
  assert.equal(rocAuc([0.1, 0.4, 0.35, 0.8, 0.4], [0, 0, 1, 1, 1]), 0.75);
  assert.equal(rocAuc([1, 2, 3, 4], [0, 0, 1, 1]), 1);
  assert.equal(rocAuc([1, 2, 3, 4], [1, 1, 0, 0]), 0);
  assert.equal(rocAuc([5, 5, 5, 5], [true, false, true, false]), 0.5, "a constant score is 1/2");
  assert.throws(() => rocAuc([1, 2], [1, 1]), RangeError);
  assert.throws(() => rocAuc([1, 2], [1]), RangeError);
});

test("logistic regression on a separable table ranks every positive above every negative", async () => {
  // label = (a == 2); b is noise
  const n = 600;
  const a = Uint8Array.from({ length: n }, (_, i) => i % 3);
  const b = Uint8Array.from({ length: n }, (_, i) => (i * 7) % 5);
  const y = Uint8Array.from(a, (v) => (v === 2 ? 1 : 0));
  const model = await fitLogistic([a, b], [3, 5], y, { epochs: 20, batchSize: 64 });
  const auc = rocAuc(model.logits([a, b]), y);
  assert.equal(auc, 1);
  assert.ok(model.weights[2] > model.weights[0] && model.weights[2] > model.weights[1]);
  const again = await fitLogistic([a, b], [3, 5], y, { epochs: 20, batchSize: 64 });
  assert.deepEqual(again.weights, model.weights, "deterministic for a seed");
});

/** Rows (a, b, c, label): label = 1 exactly when a = "hi"; the rest are fillers. */
function labelled(n: number, offset: number): Table {
  const rows: string[][] = [];
  for (let i = 0; i < n; i++) {
    const k = i + offset;
    const hi = k % 4 === 0;
    rows.push([hi ? "hi" : k % 2 ? "lo" : "mid", String(k % 5), String((k * 3) % 7), hi ? "yes" : "no"]);
  }
  return { columns: ["a", "b", "c", "label"], rows };
}

test("TSTR: trained on faithful synthetic rows the classifier scores AUC 1 on the holdout; the reference is reported", async () => {
  const real = labelled(400, 0);
  const holdout = labelled(200, 1000);
  const synth = labelled(400, 5000);
  const r = await evaluate(real, synth, { target: "label", holdout });
  assert.equal(r.tstr?.positive, "yes", "the rarer value is the positive class");
  assert.equal(r.tstr?.test, "holdout");
  assert.equal(r.tstr?.test_rows, 200);
  assert.equal(r.tstr?.test_positives, 50);
  assert.ok(r.tstr_auc! > 0.99, `tstr_auc ${r.tstr_auc}`);
  assert.ok(r.tstr_auc_train! > 0.99);
  // synthetic rows whose label ignores a: no signal
  const shuffled: Table = { columns: synth.columns, rows: synth.rows.map((row, i) => [row[0], row[1], row[2], i % 4 === 1 ? "yes" : "no"]) };
  const bad = await evaluate(real, shuffled, { target: "label", holdout });
  assert.ok(bad.tstr_auc! < 0.8, `without signal ${bad.tstr_auc}`);
});

test("TSTR without a holdout tests on the real table; an explicit positive value is honoured", async () => {
  const real = labelled(200, 0);
  const r = await evaluate(real, labelled(200, 7), { target: "label", positive: "no" });
  assert.equal(r.tstr?.test, "real");
  assert.equal(r.tstr?.positive, "no");
  assert.ok(r.tstr_auc! > 0.99);
  assert.equal(r.tstr_auc_train, undefined);
  assert.equal(r.privacy, undefined, "the privacy check needs a holdout");
});

test("TSTR input errors: unknown target, unknown positive value, one-class target", async () => {
  const real = labelled(40, 0);
  await assert.rejects(evaluate(real, real, { target: "nope" }), (e: unknown) => e instanceof DataError && /no column "nope"/.test(e.message));
  await assert.rejects(evaluate(real, real, { target: "label", positive: "maybe" }), DataError);
  const one: Table = { columns: real.columns, rows: real.rows.map((r) => [r[0], r[1], r[2], "no"]) };
  await assert.rejects(evaluate(one, one, { target: "label" }), (e: unknown) => e instanceof DataError && /single value/.test(e.message));
});

test("closestDistance: exact Hamming nearest neighbour", () => {
  const R = Int32Array.from([0, 0, 0, 1, 1, 1, 1, 2, 1]);
  assert.equal(closestDistance(Int32Array.from([1, 2, 0]), 0, R, 3, 3), 1);
  assert.equal(closestDistance(Int32Array.from([1, 1, 1]), 0, R, 3, 3), 0);
  assert.equal(closestDistance(Int32Array.from([9, 9, 9]), 0, R, 3, 3), 3);
  const s = sampleIndices(100, 10, 1);
  assert.equal(new Set(s).size, 10);
  assert.deepEqual(Array.from(sampleIndices(5, 10, 1)), [0, 1, 2, 3, 4]);
});

test("DCR: copies of TRAIN are all closer to TRAIN (share 1) and counted as exact copies; copies of HOLDOUT give 0", () => {
  // 4 columns; TRAIN rows (i, i, i, i), HOLDOUT rows (i, i, i, i+50): disjoint, one column apart
  const n = 50;
  const col = (f: (i: number) => number) => Int32Array.from({ length: n }, (_, i) => f(i));
  const train = [col((i) => i), col((i) => i), col((i) => i), col((i) => i)];
  const holdout = [col((i) => i), col((i) => i), col((i) => i), col((i) => i + 50)];
  const key = (cols: Int32Array[]) => Array.from({ length: n }, (_, r) => cols.map((c) => c[r]).join(","));
  const copies = privacyCheck(train, holdout, train, { train: key(train), holdout: key(holdout), synth: key(train) });
  assert.equal(copies.closer_to_train_share, 1);
  assert.equal(copies.exact_copies_train, 50);
  assert.equal(copies.exact_copies_train_rate, 1);
  assert.equal(copies.exact_copies_train_at_holdout_size, 50);
  assert.equal(copies.exact_copies_holdout_baseline, 0);
  assert.equal(copies.mean_dcr_train, 0);
  assert.equal(copies.mean_dcr_holdout, 1);
  // Twice as many synthetic rows as HOLDOUT: the rows after the first 50 are not counted at HOLDOUT's size.
  const twice = [0, 1, 2, 3].map((f) => Int32Array.from([...train[f], ...holdout[f]]));
  const keys2 = [...key(train), ...key(holdout)];
  const doubled = privacyCheck(train, holdout, twice, { train: key(train), holdout: key(holdout), synth: keys2 });
  assert.equal(doubled.exact_copies_train, 50);
  assert.equal(doubled.exact_copies_train_rate, 0.5);
  assert.equal(doubled.exact_copies_train_at_holdout_size, 50);
  const reversed = privacyCheck(train, holdout, twice.map((c) => c.slice().reverse()), { train: key(train), holdout: key(holdout), synth: keys2.slice().reverse() });
  assert.equal(reversed.exact_copies_train, 50);
  assert.equal(reversed.exact_copies_train_at_holdout_size, 0, "the first 50 synthetic rows are HOLDOUT's");
  const fromHoldout = privacyCheck(train, holdout, holdout, { train: key(train), holdout: key(holdout), synth: key(holdout) });
  assert.equal(fromHoldout.closer_to_train_share, 0);
  assert.equal(fromHoldout.exact_copies_train, 0);
  // equidistant synthetic rows (i, i, i, 99): one column from both -> ties count 1/2
  const mid = [col((i) => i), col((i) => i), col((i) => i), col(() => 999)];
  const tie = privacyCheck(train, holdout, mid, { train: key(train), holdout: key(holdout), synth: key(mid) });
  assert.equal(tie.closer_to_train_share, 0.5);
});

test("DCR compares equally sized sets: the larger TRAIN is sampled down to HOLDOUT's size", () => {
  const mk = (n: number, base: number) => [Int32Array.from({ length: n }, (_, i) => base + i), Int32Array.from({ length: n }, () => 0)];
  const train = mk(200, 0);
  const holdout = mk(50, 1000);
  const synth = mk(30, 5000); // far from both: every row ties at distance 1
  const r = privacyCheck(train, holdout, synth, {
    train: Array.from(train[0], String),
    holdout: Array.from(holdout[0], String),
    synth: Array.from(synth[0], String),
  });
  assert.equal(r.reference_rows, 50);
  assert.equal(r.sampled_rows, 30);
  assert.equal(r.closer_to_train_share, 0.5);
});

test("evaluate with a holdout reports the privacy check; exact copies are matched on values", async () => {
  const real = labelled(100, 0);
  const holdout = labelled(100, 0); // the same rows: every holdout row is a copy of a TRAIN row
  const r = await evaluate(real, real, { holdout });
  assert.equal(r.privacy?.exact_copies_train, 100);
  assert.equal(r.privacy?.exact_copies_holdout_baseline, 100);
  assert.equal(r.privacy?.closer_to_train_share, 0.5, "identical TRAIN and HOLDOUT: every row ties");
});

test("CLI: evaluate --target --holdout --json adds tstr_auc and privacy; fit --epsilon without --domain is refused", async () => {
  const { mkdtempSync, rmSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const { writeTableCsv } = await import("../src/sdk");
  const { runCli } = await import("../bench/harness");
  const dir = mkdtempSync(join(tmpdir(), "synthd-cli-eval-"));
  try {
    const real = join(dir, "real.csv");
    const holdout = join(dir, "holdout.csv");
    const synth = join(dir, "synth.csv");
    await writeTableCsv(labelled(200, 0), real);
    await writeTableCsv(labelled(100, 1000), holdout);
    await writeTableCsv(labelled(200, 5000), synth);
    const r = await runCli(["evaluate", real, synth, "--target", "label", "--holdout", holdout, "--json"]);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as Record<string, unknown> & { privacy: Record<string, number> };
    assert.ok((out.tstr_auc as number) > 0.99);
    assert.equal(typeof out.tstr_auc_train, "number");
    for (const k of ["closer_to_train_share", "exact_copies_train", "exact_copies_holdout_baseline"]) assert.equal(typeof out.privacy[k], "number", k);
    const text = await runCli(["evaluate", real, synth, "--target", "label", "--holdout", holdout]);
    assert.match(text.stdout, /TSTR: .* predicts label = yes on the holdout rows/);
    assert.match(text.stdout, /closer to train than to holdout: /);
    const fit = await runCli(["fit", real, "--epsilon", "1", "--key", "svc_test_x", "--url", "http://127.0.0.1:9"]);
    assert.equal(fit.code, 1);
    assert.match(fit.stderr, /--epsilon needs --domain/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("one-vs-rest macro ROC AUC, hand-computed as scikit-learn's roc_auc_score(multi_class='ovr', average='macro')", () => {
  // Labels 0, 1, 2, 0, 1, 2 with per-class scores:
  // class 0: positives rows 0, 3 (0.9, 0.4); negatives 0.1, 0.2, 0.5, 0.3 -> pairs won 4 + 3 = 7 of 8 -> 0.875
  // class 1: positives rows 1, 4 (0.6, 0.2); negatives 0.1, 0.2, 0.5, 0.3 -> 4 + (1 + 0.5 + 0 + 0) = 5.5 of 8 -> 0.6875
  // class 2: positives rows 2, 5 (0.3, 0.7); negatives 0.2, 0.1, 0.3, 0.4 -> (1 + 1 + 0.5 + 0) + 4 = 6.5 of 8 -> 0.8125
  // macro = (0.875 + 0.6875 + 0.8125) / 3 = 2.375 / 3
  const labels = [0, 1, 2, 0, 1, 2];
  const scores = [
    [0.9, 0.1, 0.2, 0.4, 0.5, 0.3],
    [0.1, 0.6, 0.2, 0.5, 0.2, 0.3],
    [0.2, 0.1, 0.3, 0.3, 0.4, 0.7],
  ];
  const r = rocAucOvr(scores, labels);
  assert.deepEqual(r.perClass, [0.875, 0.6875, 0.8125]);
  assert.ok(Math.abs(r.auc - 2.375 / 3) < 1e-12, `macro ${r.auc}`);
  assert.throws(() => rocAucOvr(scores, [0, 1, 0, 0, 1, 1]), /class 2 has no row/);
  assert.throws(() => rocAucOvr([scores[0]], labels), RangeError);
});

test("TSTR's default positive is the less frequent of the two most frequent classes, not a stray value seen once", async () => {
  // The Sex column of a real export: 37 FEMALE, 31 MALE and one "." in TRAIN; the holdout has no ".".
  const sexRows = (female: number, male: number, stray: number, offset: number): string[][] => {
    const out: string[][] = [];
    const push = (sex: string, i: number) => out.push([sex === "MALE" ? "tall" : i % 5 ? "short" : "tall", String((i + offset) % 4), sex]);
    for (let i = 0; i < female; i++) push("FEMALE", i);
    for (let i = 0; i < male; i++) push("MALE", i);
    for (let i = 0; i < stray; i++) push(".", i);
    return out;
  };
  const columns = ["height", "x", "Sex"];
  const real = { columns, rows: sexRows(37, 31, 1, 0) };
  const holdout = { columns, rows: sexRows(37, 31, 0, 1) };
  const r = await evaluate(real, real, { target: "Sex", holdout, rareThreshold: 1 });
  assert.equal(r.tstr?.positive, "MALE");
  assert.equal(r.tstr?.test_positives, 31);
  assert.ok(r.tstr_auc! > 0.85, `tstr_auc ${r.tstr_auc}`);
});

test("TSTR multiclass: one-vs-rest macro ROC AUC over the classes in the test rows, with each class's AUC", async () => {
  // label is a function of a (three classes); b is noise
  const rows = (n: number, offset: number): string[][] =>
    Array.from({ length: n }, (_, i) => {
      const k = i + offset;
      const a = ["p", "q", "r"][k % 3];
      return [a, String(k % 5), { p: "cat", q: "dog", r: "eel" }[a]!];
    });
  const columns = ["a", "b", "label"];
  const r = await evaluate({ columns, rows: rows(300, 0) }, { columns, rows: rows(300, 7) }, { target: "label", multiclass: true, holdout: { columns, rows: rows(90, 1) } });
  assert.deepEqual(r.tstr?.classes?.map((c) => [c.value, c.test_rows]), [["cat", 30], ["dog", 30], ["eel", 30]]);
  assert.equal(r.tstr_auc, 1);
  assert.deepEqual(r.tstr?.classes?.map((c) => c.auc), [1, 1, 1]);
  assert.equal(r.tstr_auc_train, 1);
  // Synthetic rows whose label ignores a: no signal, about 1/2 per class
  const noise = rows(300, 7).map((row, i) => [row[0], row[1], ["cat", "dog", "eel"][(i * 7) % 3 === 0 ? (i + 1) % 3 : i % 3]]);
  const bad = await evaluate({ columns, rows: rows(300, 0) }, { columns, rows: noise }, { target: "label", multiclass: true });
  assert.ok(bad.tstr_auc! < 0.8, `without signal ${bad.tstr_auc}`);
  await assert.rejects(evaluate({ columns, rows: rows(30, 0) }, { columns, rows: rows(30, 0) }, { target: "label", multiclass: true, positive: "cat" }), RangeError);
});
