/**
 * Entity ranges: where an entity (a firm, a country) decides most of a number (its capital, its
 * population), each synthetic row's number lies in the range its entity has in the real rows.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { analyzeTable, describeRule, ruleId, type EntityRangeRule, type Metadata, type Table } from "../src/sdk";
import { ruleShares } from "../src/sdk/rules/check";
import { cells, decodeIndependent, table } from "./rules-fixtures";

/** The table's metadata with the rare threshold k = 5. */
async function analyzed(t: Table): Promise<Metadata> {
  return (await analyzeTable(t, { rareThreshold: 5 })).metadata;
}

/**
 * 40 firms over 10 years, each firm's capital around its own scale (10^(2 + decades * u)),
 * growing by `growth` a year (a factor); a rate independent of the firm; one firm of 2 rows.
 */
function firms(growth = 1.08, decades = 3) {
  const scale = Array.from({ length: 40 }, (_, f) => 10 ** (2 + (decades * ((f * 17) % 40)) / 40));
  const t = table(["firm", "year", "capital", "rate", "score"], 400, (i, rng) => {
    const f = Math.floor(i / 10);
    const y = i % 10;
    return [`F${String(f).padStart(2, "0")}`, 1990 + y, Math.round(scale[f] * growth ** y * (0.95 + 0.1 * rng.next())), rng.next().toFixed(3), rng.int(50)];
  });
  t.rows.push(["Z99", "1990", "5000000", "0.5", "7"], ["Z99", "1991", "5100000", "0.4", "9"]);
  return t;
}

function entityRanges(meta: Metadata): EntityRangeRule[] {
  return (meta.rules ?? []).filter((r): r is EntityRangeRule => r.type === "entity_range");
}

describe("entity ranges", () => {
  test("a firm's capital is found, released per firm of >= k rows, and kept inside the firm's range by every decoded row", async () => {
    const t = firms();
    const meta = await analyzed(t);
    const [rule, ...more] = entityRanges(meta);
    assert.deepEqual(more, []);
    assert.deepEqual([ruleId(rule), rule.keys.length, rule.log, rule.keys.includes("Z99")], ["entity_range:firm,capital,year", 40, true, false]);
    const real = new Map<string, number[]>();
    for (const [f, c] of cells(t, ["firm", "capital"])) real.set(f, [...(real.get(f) ?? []), Number(c)]);
    rule.keys.forEach((k, i) => assert.deepEqual(rule.ranges[i], [Math.min(...real.get(k)!), Math.max(...real.get(k)!)]));
    assert.equal(describeRule(rule), "entity range: capital within its firm's real range, on its firm's line along year (40 values of firm)");
    assert.deepEqual(ruleShares([rule], meta, t).map((s) => s.share), [1]);
    const synth = decodeIndependent(meta, 1000);
    const range = new Map(rule.keys.map((k, i) => [k, rule.ranges[i]]));
    const off = cells(synth, ["firm", "capital"]).flatMap(([f, c]) => {
      const r = range.get(f);
      const x = Number(c);
      return r === undefined || (Number.isInteger(x) && x >= r[0] && x <= r[1]) ? [] : [`${f}, ${c}`];
    });
    assert.deepEqual(off.slice(0, 5), [], `${off.length} of 1000 rows outside their firm's range`);
    assert.ok(new Set(cells(synth, ["capital"]).map(([c]) => c)).size >= 300, "the numbers still vary");
  });

  test("a number the entity does not decide, and an entity of one row per value, have no range, nor a row number", async () => {
    const meta = await analyzed(firms());
    assert.deepEqual(entityRanges(meta).map((r) => r.columns[1]), ["capital"], "not the rate");
    const numbered = firms();
    numbered.columns.unshift("row");
    numbered.rows.forEach((r, i) => r.unshift(String(i + 1)));
    assert.deepEqual(entityRanges(await analyzed(numbered)).map(ruleId), ["entity_range:firm,capital,year"], "row numbers sorted by firm are no measure of it");
    const broken = { ...meta, rules: (meta.rules ?? []).map((r) => (r.type === "entity_range" ? { ...r, ranges: [[5, 1], ...r.ranges.slice(2)] } : r)) };
    assert.equal(decodeIndependent(broken, 200).rows.length, 200, "ranges that do not match their keys are skipped, not a crash");
    const once = table(["country", "pop"], 200, (i, rng) => [`C${i}`, Math.round(1000 * 10 ** (3 * rng.next()))]);
    assert.deepEqual(entityRanges(await analyzed(once)), []);
    const flat = entityRanges(await analyzed(firms(1)));
    assert.deepEqual(flat.map((r) => [ruleId(r), r.trends]), [["entity_range:firm,capital", undefined]], "no line where capital does not move with the year");
    // Without score, a line would leave one column (rate) to tell a row from its real (firm, year): no line.
    const narrow = firms();
    narrow.columns.pop();
    narrow.rows.forEach((r) => r.pop());
    assert.deepEqual(entityRanges(await analyzed(narrow)).map((r) => [ruleId(r), r.trends]), [["entity_range:firm,capital", undefined]], "a line needs two free columns beside it");
  });

  test("a number that follows the year within its entity is written at its row's year: found even where the entity alone explains too little", async () => {
    // Firms' scales within one decade and a growth of 40% a year: the firm alone explains about half of log capital (a World Bank gdp by country over 60 years).
    const t = firms(1.4, 1);
    const meta = await analyzed(t);
    const [rule, ...more] = entityRanges(meta);
    assert.deepEqual(more, []);
    assert.equal(ruleId(rule), "entity_range:firm,capital,year");
    assert.equal(rule.trends?.length, rule.keys.length);
    assert.equal(rule.step, 1);
    assert.ok(rule.spread! > 0 && rule.spread! < 0.1, `spread ${rule.spread}`);
    // Each firm's line: the slope is the log growth, ln 1.4 (noise of +-5% a row).
    rule.trends!.forEach(([, slope]) => assert.ok(Math.abs(slope - Math.log(1.4)) < 0.03, `slope ${slope}`));
    const synth = decodeIndependent(meta, 2000);
    const range = new Map(rule.keys.map((k, i) => [k, rule.ranges[i]]));
    const rows = cells(synth, ["firm", "year", "capital"]).filter(([f]) => range.has(f));
    assert.ok(rows.every(([f, , c]) => Number(c) >= range.get(f)![0] && Number(c) <= range.get(f)![1]), "inside the firm's range");
    // Within a firm, a later year has the larger capital, as in the real rows.
    const byFirm = new Map<string, [number, number][]>();
    for (const [f, y, c] of rows) byFirm.set(f, [...(byFirm.get(f) ?? []), [Number(y), Number(c)]]);
    let up = 0;
    let pairs = 0;
    for (const list of byFirm.values()) for (const [y, c] of list) for (const [z, d] of list) if (y + 1 < z) (pairs++, c < d && up++);
    assert.ok(pairs > 1000 && up / pairs >= 0.95, `${up} of ${pairs} pairs two or more years apart grow`);
    // No row copies its firm's real number at its year: the line is drawn at a time within a step of the row's.
    const real = new Map(cells(t, ["firm", "year", "capital"]).map(([f, y, c]) => [`${f},${y}`, Number(c)]));
    const near = rows.filter(([f, y, c]) => Math.abs(Number(c) / real.get(`${f},${y}`)! - 1) < 0.02).length;
    assert.ok(near / rows.length < 0.25, `${near} of ${rows.length} rows within 2% of their real (firm, year)`);
  });
});
