/**
 * Template rules: a column that is the row's other cells written into one fixed text (a map
 * tile's key `x-y`, an event's page address holding its id, a title holding a magnitude with
 * one decimal) is found from the rows, printed, declarable, and every decoded row holds it.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { analyzeTable, Decoder, describeRule, ruleId, type Metadata, type Table, type TemplateRule } from "../src/sdk";
import { ruleShares } from "../src/sdk/rules/check";
import { parseTemplate, renderTemplate, templateText, templateWriter } from "../src/sdk/rules/template";
import { rowCells } from "../src/sdk/generate/batch";
import { Rng } from "../src/sdk/generate/sfc32";
import { independentCodes } from "./rules-fixtures";

function templates(meta: Metadata): TemplateRule[] {
  return (meta.rules ?? []).filter((r): r is TemplateRule => r.type === "template");
}

/** Tiles of a map: x, y, a terrain, and key `v10/x-y`; `flag` is 10 but in 2 rows. */
function tiles(n = 600): Table {
  const rng = new Rng(5);
  const rows = Array.from({ length: n }, (_, i) => {
    const x = String(rng.int(300));
    const y = String(20 + rng.int(100));
    return [x, y, ["dirt", "grass", "snow"][i % 3], i % 300 === 7 ? "11" : "10", `v10/${x}-${y}`];
  });
  return { columns: ["x", "y", "terrain", "flag", "key"], rows };
}

/** Events: a network code, an id `<net><code>`, its page, a magnitude (0-2 decimals) and a title. */
function events(n = 400): Table {
  const rng = new Rng(9);
  const places = ["4km W of Castaic, CA", "12km NNE of Pahala, Hawaii", "88km SE of Kodiak, Alaska", "3km S of Cobb, CA", "20km E of Rifle, Colorado"];
  const rows = Array.from({ length: n }, () => {
    const net = ["ci", "ak", "hv", "nc"][rng.int(4)];
    const code = String(10_000_000 + rng.int(80_000_000));
    const mag = String(rng.int(60) / 10 + (rng.next() < 0.3 ? 0.05 : 0));
    const place = places[rng.int(places.length)];
    const id = `${net}${code}`;
    return [id, net, code, mag, place, `https://earthquake.usgs.gov/earthquakes/eventpage/${id}`, `M ${Number(mag).toFixed(1)} - ${place}`];
  });
  return { columns: ["id", "net", "code", "mag", "place", "url", "title"], rows };
}

describe("template rules", () => {
  test("a key written as v10/x-y is found and printed; the near-constant flag's 10 is never read as a cell", async () => {
    const t = tiles();
    const { metadata } = await analyzeTable(t, { rareThreshold: 3 });
    const [rule, ...more] = templates(metadata);
    assert.deepEqual(more, []);
    assert.deepEqual([ruleId(rule), rule.parts, rule.share], ["template:key,x,y", ["v10/", { column: 1 }, "-", { column: 2 }], 1]);
    assert.equal(describeRule(rule), 'template: key = "v10/{x}-{y}"');
    assert.deepEqual(ruleShares([rule], metadata, t).map((s) => s.share), [1]);
  });

  test("an id of two cells, a page address holding it and a title holding a magnitude with one decimal are found", async () => {
    const { metadata } = await analyzeTable(events(), { rareThreshold: 3 });
    assert.deepEqual(
      templates(metadata).map((r) => describeRule(r)).sort(),
      [
        'template: id = "{net}{code}"',
        'template: title = "M {mag:.1f} - {place}"',
        'template: url = "https://earthquake.usgs.gov/earthquakes/eventpage/{id}"',
      ],
    );
  });

  test("decoded rows hold every template, the page address following the id written before it", async () => {
    const { metadata } = await analyzeTable(events(), { rareThreshold: 3 });
    const synth = new Decoder(metadata).decode(independentCodes(metadata, 500, 4), 7);
    const at = (c: string): number => synth.columns.indexOf(c);
    const off = synth.rows.filter(
      (r) =>
        r[at("id")] !== r[at("net")] + r[at("code")] ||
        r[at("url")] !== `https://earthquake.usgs.gov/earthquakes/eventpage/${r[at("id")]}` ||
        r[at("title")] !== `M ${Number(r[at("mag")]).toFixed(1)} - ${r[at("place")]}`,
    );
    assert.deepEqual(off.slice(0, 3), [], `${off.length} of ${synth.rows.length} rows break a template`);
    assert.ok(new Set(synth.rows.map((r) => r[at("id")])).size > 400, "the ids are still fresh and distinct");
  });

  test("cells that only sometimes sit in a text are no template, and rules.drop removes a found one", async () => {
    const rng = new Rng(2);
    const rows = Array.from({ length: 500 }, () => {
      const a = String(rng.int(90) + 10);
      const b = String(rng.int(90) + 10);
      return [a, b, rng.next() < 0.8 ? `${a}-${b}` : `${b}-${a}`];
    });
    const { metadata } = await analyzeTable({ columns: ["a", "b", "pair"], rows }, { rareThreshold: 3 });
    assert.deepEqual(templates(metadata), []);
    const dropped = await analyzeTable(tiles(), { rareThreshold: 3, rules: { drop: ["template:key,x,y"] } });
    assert.deepEqual(templates(dropped.metadata), []);
  });

  test("a declared template is computed from the rows, and a row off it is a DataError naming its line", async () => {
    const t = tiles();
    const declare = [{ type: "template" as const, column: "key", template: "v10/{x}-{y}" }];
    const { metadata } = await analyzeTable(t, { rareThreshold: 3, rules: { detect: false, declare } });
    assert.deepEqual(templates(metadata).map((r) => [ruleId(r), r.declared]), [["template:key,x,y", true]]);
    const bad = { columns: t.columns, rows: t.rows.map((r) => [...r]) };
    bad.rows[10][4] = "1-2";
    await assert.rejects(analyzeTable(bad, { rareThreshold: 3, rules: { detect: false, declare } }), /line 12, column "key": the declared rule "template:key,x,y" does not hold: key = "1-2", the template writes/);
    await assert.rejects(analyzeTable(t, { rareThreshold: 3, rules: { detect: false, declare: [{ type: "template", column: "key", template: "{x" }] } }), /is not closed/);
  });

  test("templates parse with decimals and braces, render blanks and non-numbers as written, and leave fixed cells", () => {
    const p = parseTemplate("t", "{{{a:.2f}}} {b}/{a}");
    assert.deepEqual(p, { columns: ["t", "a", "b"], parts: ["{", { column: 1, decimals: 2 }, "} ", { column: 2 }, "/", { column: 1 }] });
    assert.equal(renderTemplate(p.parts, (c) => ["", "1.5", "x"][c]), "{1.50} x/1.5");
    assert.equal(templateText(p), "{{{a:.2f}}} {b}/{a}", "printed as declared, braces doubled");
    assert.equal(renderTemplate(p.parts, (c) => ["", "n/a", ""][c]), "{n/a} /n/a");
    assert.throws(() => parseTemplate("t", "plain"), /no \{column\} cell/);
    const meta = { features: ["k", "x", "y"], rules: [{ type: "template", columns: ["k", "x", "y"], parts: [{ column: 1 }, "-", { column: 2 }], share: 1 }] } as unknown as Metadata;
    const rows = [["", "1", "2"], ["9-9", "3", "4"]];
    const changed = templateWriter(meta)!.apply(rowCells(rows), (r, f) => r === 1 && f === 0);
    assert.deepEqual([rows, changed], [[["1-2", "1", "2"], ["9-9", "3", "4"]], 1]);
  });
});
