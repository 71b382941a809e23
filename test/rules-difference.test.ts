/**
 * Difference ranges: two columns whose difference stays in a narrow window (a forecast year from
 * one year before its budget year to ten after; a ship date within a week of its order date) are
 * found from the rows, printed, and every decoded row keeps the window.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { analyzeTable, Decoder, describeRule, ruleId, type DifferenceRule, type Metadata, type Table } from "../src/sdk";
import { ruleShares } from "../src/sdk/rules/check";
import { RuleEnforcer } from "../src/sdk/rules/enforce";
import { rowCells } from "../src/sdk/generate/batch";
import { Rng } from "../src/sdk/generate/sfc32";
import { independentCodes } from "./rules-fixtures";

/** Budget years 1980-2010, each forecast 1 year before to 10 after, a value. */
function budgetsTable(): Table {
  const rng = new Rng(5);
  const rows: string[][] = [];
  for (let y = 1980; y <= 2010; y++) for (let f = y - 1; f <= y + 10; f += 1 + rng.int(2)) rows.push([String(y), String(f), (rng.next() - 0.5).toFixed(3)]);
  return { columns: ["budgetYear", "forecastYear", "value"], rows };
}

function differences(meta: Metadata): DifferenceRule[] {
  return (meta.rules ?? []).filter((r): r is DifferenceRule => r.type === "difference");
}

function column(t: Table, name: string): string[] {
  const at = t.columns.indexOf(name);
  return t.rows.map((r) => r[at]);
}

describe("difference ranges", () => {
  test("a forecast year within -1..10 of its budget year is found, printed, kept by the real rows and by every decoded row", async () => {
    const t = budgetsTable();
    const { metadata } = await analyzeTable(t, { rareThreshold: 3 });
    const [rule, ...more] = differences(metadata);
    assert.deepEqual(more, []);
    assert.deepEqual([ruleId(rule), rule.min, rule.max, rule.quantiles.length, rule.share], ["difference:budgetYear,forecastYear", -1, 10, 17, 1]);
    assert.equal(describeRule(rule), "difference: forecastYear - budgetYear from -1 to 10");
    assert.deepEqual(ruleShares([rule], metadata, t).map((s) => s.share), [1]);
    const synth = new Decoder(metadata).decode(independentCodes(metadata, 1000, 3), 7);
    const [b, f] = ["budgetYear", "forecastYear"].map((c) => column(synth, c).map(Number));
    const off = b.flatMap((y, r) => (f[r] - y >= -1 && f[r] - y <= 10 && Number.isInteger(f[r]) ? [] : [`${y}, ${f[r]}`]));
    assert.deepEqual(off.slice(0, 5), [], `${off.length} of ${b.length} rows out of the window`);
    assert.ok(new Set(f.map((x, r) => x - b[r])).size >= 10, "the differences still vary");
  });

  test("a ship date within a week of its order date (datetimes) keeps the week and the column's format", async () => {
    const rng = new Rng(8);
    const day = 86_400_000;
    const rows = Array.from({ length: 600 }, () => {
      const order = Date.UTC(2015, 0, 1) + rng.int(3 * 365) * day;
      const ship = order + rng.int(8) * day;
      return [new Date(order).toISOString().slice(0, 10), new Date(ship).toISOString().slice(0, 10), String(10 + rng.int(500))];
    });
    const { metadata } = await analyzeTable({ columns: ["order_date", "ship_date", "sales"], rows }, { rareThreshold: 3 });
    const rule = differences(metadata)[0];
    assert.deepEqual(rule && [ruleId(rule), rule.min, rule.max], ["difference:order_date,ship_date", 0, 7 * 86_400]);
    const synth = new Decoder(metadata).decode(independentCodes(metadata, 1000, 4), 9);
    const [o, s] = ["order_date", "ship_date"].map((c) => column(synth, c));
    const off = o.flatMap((x, r) => {
      const d = (Date.parse(s[r]) - Date.parse(x)) / day;
      return /^\d{4}-\d{2}-\d{2}$/.test(s[r]) && d >= 0 && d <= 7 ? [] : [`${x} -> ${s[r]}`];
    });
    assert.deepEqual(off.slice(0, 5), [], `${off.length} rows ship outside the week`);
  });

  test("a cell written from a drawn difference keeps the column's mixture of roundings", async () => {
    // Houses sold within 20,000 under their asking price; 60% of sale prices are round thousands.
    const rng = new Rng(11);
    const rows = Array.from({ length: 3000 }, () => {
      const ask = 100 * (1000 + rng.int(8000));
      const sold = ask - rng.int(20000);
      return [String(ask), String(rng.next() < 0.6 ? Math.round(sold / 1000) * 1000 : sold)];
    });
    const t: Table = { columns: ["ask", "sold"], rows };
    const { metadata } = await analyzeTable(t);
    const [rule] = differences(metadata);
    assert.ok(rule !== undefined, JSON.stringify(metadata.rules));
    const share = (tb: Table): number => {
      const v = column(tb, "sold").filter((x) => x !== "").map(Number);
      return v.filter((x) => x % 1000 === 0).length / v.length;
    };
    const synth = new Decoder(metadata).decode(independentCodes(metadata, 3000, 3), 7);
    assert.deepEqual(ruleShares([rule], metadata, synth).map((s) => s.share), [1]);
    assert.ok(Math.abs(share(synth) - share(t)) < 0.04, `round thousands: ${share(synth)} against ${share(t)}`);
  });

  test("independent columns have no difference range; close columns of a sum are left to the sum", async () => {
    const rng = new Rng(2);
    const rows = Array.from({ length: 500 }, () => {
      const a = 100 + rng.int(500);
      const b = a + rng.int(5);
      return [String(a), String(b), String(a + b), String(100 + rng.int(500)), String(100 + rng.int(500))];
    });
    const { metadata } = await analyzeTable({ columns: ["a", "b", "total", "x", "y"], rows }, { rareThreshold: 3 });
    assert.deepEqual(differences(metadata), []);
    assert.ok((metadata.rules ?? []).some((r) => r.type === "sum"), "the sum is found");
    const alone = await analyzeTable({ columns: ["a", "b"], rows: rows.map((r) => r.slice(0, 2)) }, { rareThreshold: 3 });
    assert.deepEqual(differences(alone.metadata).map(ruleId), ["difference:a,b"], "without the sum, a and b make one");
  });

  test("the enforcer writes the second cell from the first, the first when the second is fixed, and reports a fixed pair", () => {
    const meta: Metadata = {
      features: ["a", "b"],
      cardinalities: { a: 1, b: 1 },
      empirical_probs: { a: [1], b: [1] },
      column_stats: {
        a: { type: "numerical", count: 1, missing: 0, min: 0, max: 100, integer: true, decimals: 0 },
        b: { type: "numerical", count: 1, missing: 0, min: 0, max: 100, integer: true, decimals: 0 },
      },
      rules: [{ type: "difference", columns: ["a", "b"], min: 2, max: 4, quantiles: [2, 3, 4], share: 1 }],
    };
    const rows = [
      ["10", "13"],
      ["10", "50"],
      ["10", "50"],
      ["10", "50"],
      ["", "50"],
    ];
    const fixed = (r: number, f: number): boolean => (r === 2 && f === 1) || r === 3;
    const out = new RuleEnforcer(meta).apply(rowCells(rows), 1, () => "", fixed);
    assert.equal(rows[0].join(), "10,13");
    assert.ok(["12", "13", "14"].includes(rows[1][1]) && rows[1][0] === "10", `row 1: ${rows[1]}`);
    assert.ok(["46", "47", "48"].includes(rows[2][0]) && rows[2][1] === "50", `row 2: ${rows[2]}`);
    assert.deepEqual([rows[3].join(), rows[4].join()], ["10,50", ",50"]);
    assert.deepEqual([out.changed, out.unrepaired], [2, 1]);
  });
});
