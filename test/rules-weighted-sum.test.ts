/**
 * Weighted linear identities (`SumRule.weights`): a draft's pick written `Round + Pick / 100`, a
 * duration in minutes = 60 · hours + minutes, found exactly on small tables built here and kept in
 * every decoded row whatever the model drew; columns that only come near such a rule give none.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { Metadata, SumRule, Table } from "../src/sdk";
import { describeRule } from "../src/sdk/rules/describe";
import { ruleShares } from "../src/sdk/rules/check";
import { analyzed, decodeIndependent, table } from "./rules-fixtures";

const sums = (meta: Metadata): SumRule[] => (meta.rules ?? []).filter((r): r is SumRule => r.type === "sum");

/** Draft picks: round 1-7, pick 1-30 within it, and `x` = round + pick / 100 with two decimals. */
const draft = (): Table =>
  table(["Round", "Pick", "x", "Height"], 210, (i, rng) => {
    const round = 1 + Math.floor(i / 30);
    const pick = 1 + (i % 30);
    return [round, pick, (round + pick / 100).toFixed(2), 68 + rng.int(10)];
  });

/** Trips: whole hours, minutes past the hour and the duration in minutes. */
const trips = (): Table =>
  table(["hours", "minutes", "duration", "mode"], 400, (_, rng) => {
    const h = rng.int(12);
    const m = rng.int(60);
    return [h, m, 60 * h + m, ["bus", "train"][rng.int(2)]];
  });

describe("weighted linear identities", () => {
  test("x = Round + 0.01 * Pick and duration = 60 * hours + minutes are found with their weights", async () => {
    const [d] = sums(await analyzed(draft()));
    assert.ok(d, "a sum on the draft");
    assert.deepEqual({ total: d.total, parts: d.parts, weights: d.weights, signs: d.signs, constant: d.constant }, { total: "x", parts: ["Round", "Pick"], weights: [1, 0.01], signs: undefined, constant: undefined });
    assert.equal(describeRule(d), "sum: x = Round + 0.01 * Pick");
    const [t] = sums(await analyzed(trips()));
    assert.ok(t, "a sum on the trips");
    assert.equal(t.total, "duration");
    assert.deepEqual(t.weights, [60, 1]);
  });

  test("decoded rows keep the weighted identity, written with the total's decimals", async () => {
    const meta = await analyzed(draft());
    const [d] = sums(meta);
    const synth = decodeIndependent(meta, 2000);
    const [s] = ruleShares([d], meta, synth);
    assert.equal(s.share, 1);
    assert.ok(s.applicable > 1900);
    const [without] = ruleShares([d], meta, decodeIndependent(meta, 2000, false));
    assert.ok(without.share < 0.2, `without the rule ${without.share}`);
    const [r, p, x] = ["Round", "Pick", "x"].map((c) => synth.columns.indexOf(c));
    for (const row of synth.rows) if (row[x] !== "" && row[r] !== "" && row[p] !== "") assert.equal(row[x], (Number(row[r]) + Number(row[p]) / 100).toFixed(2));
  });

  test("no weighted identity where one row in ten breaks it, or among independent columns", async () => {
    const noisy = table(["Round", "Pick", "x"], 400, (i, rng) => {
      const round = 1 + rng.int(7);
      const pick = 1 + rng.int(30);
      return [round, pick, (round + pick / 100 + (i % 10 === 0 ? 0.5 : 0)).toFixed(2)];
    });
    assert.deepEqual(sums(await analyzed(noisy)), []);
    const loose = table(["a", "b", "c"], 400, (_, rng) => [rng.int(100), rng.int(60), rng.int(5000)]);
    assert.deepEqual(sums(await analyzed(loose)), []);
  });

  test("the server's checks take weights > 0, one per part", async () => {
    const { validateCreateModel } = await import("../src/server/handlers/bodyValidators");
    const { checkMetadata } = await import("../src/server/handlers/checkMetadata");
    const features = ["x", "Round", "Pick"];
    const md = (rule: Record<string, unknown>): Metadata =>
      ({ features, cardinalities: Object.fromEntries(features.map((f) => [f, 1])), empirical_probs: Object.fromEntries(features.map((f) => [f, [1]])), rules: [{ type: "sum", total: "x", parts: ["Round", "Pick"], share: 1, ...rule }] }) as unknown as Metadata;
    assert.equal(validateCreateModel({ metadata: md({ weights: [1, 0.01] }) }).success, true);
    assert.doesNotThrow(() => checkMetadata(md({ weights: [1, 0.01] })));
    assert.equal(validateCreateModel({ metadata: md({ weights: [1, 0] }) }).success, false);
    const param = (e: unknown) => (e as { param?: string }).param ?? "";
    assert.throws(() => checkMetadata(md({ weights: [0.01] })), (e) => param(e).endsWith("rules[0].weights"));
  });
});
