/**
 * Issue 40, catalogs with a composite key: two columns that together decide a third (flights:
 * origin and destination decide distance, a route's distance is the same on every flight) are
 * found on the raw rows, printed, checked, and kept in decoded rows whose pair is a released
 * entry (one seen in >= k rows); a row whose pair is not released is left as generated, and a
 * single column that decides the attribute alone keeps a one-key rule instead. The synthetic rows
 * come from a generator that learned nothing (each column's code drawn from its 1-way marginal),
 * so the catalog holds only because the decoder keeps it.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import typia from "typia";
import { analyzeTable, Decoder, DataError, Rng, describeRule, ruleId, type CatalogRule, type CreateModelRequest, type Metadata, type Table } from "../src/sdk";
import { ruleShares } from "../src/sdk/rules/check";
import { RuleEnforcer } from "../src/sdk/rules/enforce";
import { rowCells } from "../src/sdk/generate/batch";
import { catalogs as catalogRealism } from "../bench/realism";
import { scanTable } from "../src/sdk/metadata/table-scan";
import { independentCodes, catalogOf, cells } from "./rules-fixtures";
import { validateCreateModel } from "../src/server/handlers/bodyValidators";
import { checkMetadata } from "../src/server/handlers/checkMetadata";

const K = 3;
const AIRPORTS = ["ATL", "BOS", "DEN", "DFW", "LAX", "LGA", "MIA", "ORD", "PHX", "SEA"];

/** A route's distance in miles: the same both ways, else distinct, so no one column decides another. */
function distance(a: number, b: number): number {
  const [i, j] = a < b ? [a, b] : [b, a];
  return 150 + 97 * i + 31 * j + 3 * i * j;
}

/**
 * Flights: every route between two airports flown 3 to 8 times with its distance, except five
 * routes (ATL-BOS, DEN-DFW, ...) flown once each (rarer than k: no entry); a delay column of noise.
 */
function flights(): Table {
  const rng = new Rng(11);
  const rows: string[][] = [];
  AIRPORTS.forEach((o, i) => {
    AIRPORTS.forEach((d, j) => {
      if (i === j) return;
      const times = i % 2 === 0 && j === i + 1 ? 1 : 3 + ((i + 2 * j) % 6);
      for (let t = 0; t < times; t++) rows.push([o, d, String(distance(i, j)), String(Math.floor(rng.next() * 60) - 10)]);
    });
  });
  return { columns: ["origin", "destination", "distance", "delay"], rows };
}

describe("a catalog with a composite key (origin and destination decide distance)", () => {
  test("detected with one entry per route seen in >= k rows, printed by synthd fit, valid in the contract", async () => {
    const { metadata } = await analyzeTable(flights(), { rareThreshold: K });
    const rule = catalogOf(metadata);
    assert.deepEqual(rule.columns, ["origin", "destination", "distance"]);
    assert.equal(rule.key, "origin");
    assert.equal(rule.key_columns, 2);
    assert.equal(rule.entries.length, 85, "the five routes flown once are not released");
    assert.ok(rule.entries.every((e) => e[2] === String(distance(AIRPORTS.indexOf(e[0]), AIRPORTS.indexOf(e[1])))));
    assert.equal(rule.share, 1);
    assert.equal(describeRule(rule), "catalog: (origin, destination) -> distance (85 entries)");
    assert.equal(ruleId(rule), "catalog:(origin,destination),distance");
    assert.deepEqual(ruleShares([rule], metadata, flights()).map((s) => s.share), [1], "the real rows keep it");
    const valid = typia.createValidateEquals<CreateModelRequest>()({ metadata, config: {} });
    assert.ok(valid.success, JSON.stringify(!valid.success && valid.errors.slice(0, 3)));
  });

  test("decoded rows on a released route carry its distance in 100% of them; the bench's check agrees", async () => {
    const { metadata } = await analyzeTable(flights(), { rareThreshold: K });
    const rule = catalogOf(metadata);
    const synth = new Decoder(metadata).decode(independentCodes(metadata, 3000, 1), 2);
    const released = new Map(rule.entries.map((e) => [`${e[0]},${e[1]}`, e[2]]));
    const rows = cells(synth, rule.columns);
    const onReleased = rows.filter((r) => released.has(`${r[0]},${r[1]}`));
    assert.ok(onReleased.length > 1000, `${onReleased.length} rows on a released route`);
    const off = onReleased.filter((r) => Number(r[2]) !== Number(released.get(`${r[0]},${r[1]}`)));
    assert.deepEqual(off.slice(0, 5), [], `${off.length} of ${onReleased.length} rows carry another distance`);
    assert.deepEqual(ruleShares([rule], metadata, synth).map((s) => s.share), [1]);
    const realism = catalogRealism(await scanTable(flights(), 2), await scanTable(synth, 2)).find((c) => c.key === "(origin, destination)");
    assert.deepEqual(realism?.attributes, ["distance"]);
    assert.equal(realism?.synthetic, 1);
  });

  test("the enforcer writes a released pair's attributes, leaves a pair not released, a blank key and a fixed cell alone", () => {
    const meta: Metadata = {
      features: ["origin", "destination", "distance"],
      cardinalities: { origin: 3, destination: 3, distance: 4 },
      empirical_probs: { origin: [0.4, 0.4, 0.2], destination: [0.4, 0.4, 0.2], distance: [0.25, 0.25, 0.25, 0.25] },
      column_stats: {
        origin: { type: "categorical", count: 10, missing: 0 },
        destination: { type: "categorical", count: 10, missing: 0 },
        distance: { type: "numerical", count: 10, missing: 0, min: 100, max: 2000, mean: 900, std: 500, decimals: 0 },
      },
      value_mappings: { origin: { ORD: 0, LGA: 1, __other__: 2 }, destination: { DEN: 0, MIA: 1, __other__: 2 } },
      rules: [{ type: "catalog", columns: ["origin", "destination", "distance"], key: "origin", key_columns: 2, entries: [["ORD", "DEN", "888"], ["LGA", "MIA", "1096"]], counts: [5, 4], share: 1 }],
    };
    const rows = [
      ["ORD", "DEN", "1608"], // a released route: its distance
      ["LGA", "MIA", "1096.0"], // the same value written otherwise: written as the real rows write it
      ["ORD", "MIA", "1013"], // a real pair of airports on no released route: left as generated
      ["", "DEN", "500"], // a blank key cell: left
      ["LGA", "MIA", "77"], // fixed distance that is not the route's: left, counted unrepaired
    ];
    const fixed = (r: number, f: number): boolean => r === 4 && f === 2;
    const out = new RuleEnforcer(meta).apply(rowCells(rows), 3, () => "", fixed);
    assert.deepEqual(rows, [
      ["ORD", "DEN", "888"],
      ["LGA", "MIA", "1096"],
      ["ORD", "MIA", "1013"],
      ["", "DEN", "500"],
      ["LGA", "MIA", "77"],
    ]);
    assert.equal(out.changed, 2);
    assert.equal(out.unrepaired, 1);
    const t: Table = { columns: meta.features, rows };
    assert.deepEqual(ruleShares(meta.rules!, meta, t).map((s) => [s.applicable, s.kept]), [[3, 2]], "rows on no released pair are outside the rule");
  });

  test("columns one key column decides alone stay in its one-key catalog, out of the composite one", async () => {
    // The origin's city and time zone: origin decides them, whatever the destination.
    const CITY = ["Atlanta", "Boston", "Denver", "Dallas", "Los Angeles", "New York", "Miami", "Chicago", "Phoenix", "Seattle"];
    const TZ = ["-5", "-5", "-7", "-6", "-8", "-5", "-5", "-6", "-7", "-8"];
    const t = flights();
    t.columns = [...t.columns, "origin_city", "origin_tz"];
    t.rows = t.rows.map((r) => [...r, CITY[AIRPORTS.indexOf(r[0])], TZ[AIRPORTS.indexOf(r[0])]]);
    const { metadata } = await analyzeTable(t, { rareThreshold: K });
    const catalogs = (metadata.rules ?? []).filter((r): r is CatalogRule => r.type === "catalog");
    assert.deepEqual(
      catalogs.map((r) => describeRule(r)),
      ["catalog: origin -> origin_city, origin_tz (10 entries)", "catalog: (origin, destination) -> distance (85 entries)"],
    );
  });

  test("--rules: dropped by its id, declared with key_columns 2, a declared pair the rows break is a DataError", async () => {
    const dropped = await analyzeTable(flights(), { rareThreshold: K, rules: { drop: ["catalog:(origin,destination),distance"] } });
    assert.ok(!(dropped.metadata.rules ?? []).some((r) => r.type === "catalog"));
    const declared = await analyzeTable(flights(), { rareThreshold: K, rules: { detect: false, declare: [{ type: "catalog", columns: ["origin", "destination", "distance"], key_columns: 2 }] } });
    const rule = catalogOf(declared.metadata);
    assert.equal(rule.declared, true);
    assert.equal(rule.key_columns, 2);
    assert.equal(rule.entries.length, 85);
    const broken = flights();
    broken.rows[5] = [...broken.rows[5]];
    broken.rows[5][2] = "9999";
    await assert.rejects(
      analyzeTable(broken, { rareThreshold: K, rules: { detect: false, declare: [{ type: "catalog", columns: ["origin", "destination", "distance"], key_columns: 2 }] } }),
      (e: unknown) => e instanceof DataError && /line 7, column "distance".*"catalog:\(origin,destination\),distance".*"9999"/.test(e.message),
    );
  });

  test("the server takes key_columns 1 or 2 with an attribute after the key, and refuses 3 or a key with no attribute", () => {
    const md = (columns: string[], key_columns: number): Metadata => ({
      features: ["a", "b", "c"],
      cardinalities: { a: 1, b: 1, c: 1 },
      empirical_probs: { a: [1], b: [1], c: [1] },
      rules: [{ type: "catalog", columns, key: columns[0], key_columns, entries: [columns.map(() => "x")], counts: [2], share: 1 }],
    });
    assert.equal(validateCreateModel({ metadata: md(["a", "b", "c"], 2) }).success, true);
    assert.doesNotThrow(() => checkMetadata(md(["a", "b", "c"], 2)));
    assert.equal(validateCreateModel({ metadata: md(["a", "b", "c"], 3) }).success, false);
    const param = (e: unknown) => (e as { param?: string }).param ?? "";
    assert.throws(() => checkMetadata(md(["a", "b"], 2)), (e) => param(e).endsWith("rules[0].key_columns"));
  });
});
