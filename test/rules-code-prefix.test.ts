/**
 * Issue 40, a code whose first characters name the row's category (a college major's code `2419`
 * starts with `24`, the engineering majors'; NAICS, SIC, ICD and county FIPS codes are built
 * alike): detected on the raw rows, printed by `synthd fit`, dropped with `rules.drop`, and kept
 * by every decoded row, the codes of an identifier distinct. The synthetic rows come from a
 * generator that learned nothing (each column's code drawn from its 1-way marginal), so the
 * prefixes agree only because the decoder keeps the rule.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { describeRule, ruleId, type CodePrefixRule, type Metadata, type Table } from "../src/sdk";
import { ruleShares } from "../src/sdk/rules/check";
import { MAJOR_FIELDS as FIELDS, analyzed, cells, decodeIndependent, majors, table } from "./rules-fixtures";

function prefixRule(meta: Metadata): CodePrefixRule | undefined {
  return meta.rules?.find((r): r is CodePrefixRule => r.type === "code_prefix");
}

/** Share of rows whose code starts with a prefix its field has in the real rows. */
function agreeing(t: Table, real: Table): number {
  const allowed = new Map<string, Set<string>>();
  for (const [code, field] of cells(real, ["major_code", "field"])) allowed.set(field, (allowed.get(field) ?? new Set()).add(code.slice(0, 2)));
  const rows = cells(t, ["major_code", "field"]);
  return rows.filter(([code, field]) => allowed.get(field)?.has(code.slice(0, 2))).length / rows.length;
}

describe("a code's prefix names its category", () => {
  test("the two-digit prefix of a major's code decides its field: one rule, printed by synthd fit", async () => {
    const meta = await analyzed(majors());
    const rule = prefixRule(meta);
    assert.ok(rule, JSON.stringify(meta.rules?.map((r) => ruleId(r))));
    assert.deepEqual([rule.columns, rule.length, rule.share], [["field", "major_code"], 2, 1]);
    assert.deepEqual(new Set(rule.prefixes), new Set(FIELDS.flatMap(([, p]) => p)));
    assert.equal(ruleId(rule), "code_prefix:field,major_code");
    assert.equal(describeRule(rule, meta), "code prefix: major_code's first 2 characters -> field (10 prefixes of 6 categories)");
  });

  test("decoded codes start with a prefix of their row's field in every row and stay distinct", async () => {
    const real = majors();
    const meta = await analyzed(real);
    // 500 rows: each field's codes fit its prefixes (100 codes per two-digit prefix).
    const without = decodeIndependent(meta, 500, false);
    const out = decodeIndependent(meta, 500);
    // Without the rule a code's prefix agrees with its field by chance only.
    assert.ok(agreeing(without, real) < 0.5, `without the rule ${agreeing(without, real)}`);
    assert.equal(agreeing(out, real), 1);
    const codes = cells(out, ["major_code"]).map(([c]) => c);
    assert.equal(new Set(codes).size, codes.length);
    assert.ok(codes.every((c) => /^\d{4}$/.test(c)), codes.slice(0, 5).join());
    const shares = ruleShares(meta.rules ?? [], meta, out);
    assert.equal(shares.find((s) => s.rule.type === "code_prefix")?.share, 1);
  });

  test("rules.drop removes it", async () => {
    const meta = await analyzed(majors(), { drop: ["code_prefix:field,major_code"] });
    assert.equal(prefixRule(meta), undefined);
  });

  test("no rule where the prefix does not name the category, or a repeated word's letters do (a country per year)", async () => {
    const shuffled = table(["code", "field"], 240, (i, rng) => [String(1000 + i * 37), FIELDS[rng.int(FIELDS.length)][0]]);
    assert.equal(prefixRule(await analyzed(shuffled)), undefined);
    const COUNTRIES: [string, string][] = [
      ["Chile", "Americas"], ["China", "Asia"], ["Chad", "Africa"], ["Canada", "Americas"], ["Cameroon", "Africa"], ["Cambodia", "Asia"],
      ["Brazil", "Americas"], ["Burundi", "Africa"], ["Bhutan", "Asia"], ["Mexico", "Americas"], ["Mali", "Africa"], ["Malaysia", "Asia"],
    ];
    const panel = table(["country", "continent", "year"], 240, (i) => [...COUNTRIES[i % COUNTRIES.length], String(1950 + Math.floor(i / COUNTRIES.length))]);
    assert.equal(prefixRule(await analyzed(panel)), undefined);
  });
});
