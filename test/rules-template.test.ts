/**
 * Template rules: a column that is the row's other cells written into one fixed text (a map
 * tile's key `x-y`, an event's page address holding its id, a title holding a magnitude with
 * one decimal) is found from the rows, printed, declarable, and every decoded row holds it.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { analyzeTable, Decoder, describeRule, ruleId, type Metadata, type Table, type TemplateRule } from "../src/sdk";
import { ruleShares } from "../src/sdk/rules/check";
import { parseTemplate, renderTemplate, templateMatches, templateText, templateWriter } from "../src/sdk/rules/template";
import { datetimeIn } from "../src/sdk/rules/detect/template";
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

/** Deaths on duty: a date (`yyyy-MM-dd`), the same date written out (`EOW: Friday, July 13, 1984`) and a cause. */
function deaths(n = 400, share = 1): Table {
  const { DateTime } = require("luxon") as typeof import("luxon");
  const rng = new Rng(11);
  const rows = Array.from({ length: n }, () => {
    const day = DateTime.fromMillis(Date.UTC(1970, 0, 1) + rng.int(18_000) * 86_400_000, { zone: "utc", locale: "en-US" });
    const other = DateTime.fromMillis(Date.UTC(1970, 0, 1) + rng.int(18_000) * 86_400_000, { zone: "utc", locale: "en-US" });
    const eow = `EOW: ${(rng.next() < share ? day : other).toFormat("EEEE, MMMM d, yyyy")}`;
    return [day.toFormat("yyyy-MM-dd"), eow, ["Gunfire", "Vehicle pursuit", "Heart attack"][rng.int(3)]];
  });
  return { columns: ["date", "eow", "cause"], rows };
}

const METROS = [
  "baton rouge, la", "cleveland-elyria, oh", "st. louis, mo-il", "winston-salem, nc", "salt lake city, ut", "fort wayne, in",
  "san jose-sunnyvale-santa clara, ca", "des moines-west des moines, ia", "el paso, tx", "new haven-milford, ct",
  "grand rapids-wyoming, mi", "little rock-north little rock-conway, ar",
];

/** Metro areas as a statistics office keys them (`baton rouge, la`) and the name a newsroom shows (`Baton Rouge`), `share` of rows in that form. */
function metros(n = 360, share = 0.95): Table {
  const rng = new Rng(13);
  const rows = Array.from({ length: n }, (_, i) => {
    const metro = METROS[i % METROS.length];
    const city = metro.split(", ")[0].replace(/(^|[ -])(\p{L})/gu, (_, a: string, b: string) => a + b.toUpperCase());
    const display = rng.next() < share ? city : ["Springfield", "Columbia", "Jackson, Miss."][rng.int(3)];
    return [metro, String(100 + rng.int(900)), display];
  });
  return { columns: ["metro", "population", "display"], rows };
}

describe("template cells written in another form", () => {
  test("a date written out with a weekday and month name is its row's date in a luxon format, printed and kept in every decoded row", async () => {
    const { metadata } = await analyzeTable(deaths(), { rareThreshold: 3 });
    const [rule, ...more] = templates(metadata);
    assert.deepEqual(more, []);
    assert.deepEqual(rule.parts, ["EOW: ", { column: 1, date: "EEEE, MMMM d, yyyy", from: "yyyy-MM-dd" }]);
    assert.equal(describeRule(rule), 'template: eow = "EOW: {date|date:EEEE, MMMM d, yyyy}"');
    const synth = new Decoder(metadata).decode(independentCodes(metadata, 500, 4), 7);
    const { DateTime } = require("luxon") as typeof import("luxon");
    const at = (c: string): number => synth.columns.indexOf(c);
    const want = (date: string): string => `EOW: ${DateTime.fromISO(date, { zone: "utc", locale: "en-US" }).toFormat("EEEE, MMMM d, yyyy")}`;
    const off = synth.rows.filter((r) => r[at("eow")] !== want(r[at("date")]));
    assert.deepEqual(off.slice(0, 3), [], `${off.length} of ${synth.rows.length} rows write another day`);
  });

  test("a display name that is the key's part before \", \" in title case is kept in every decoded row; 5% of real rows off the form are allowed", async () => {
    const { metadata } = await analyzeTable(metros(), { rareThreshold: 3 });
    const [rule, ...more] = templates(metadata);
    assert.deepEqual(more, []);
    assert.equal(describeRule(rule).replace(/ \(.*/, ""), 'template: display = "{metro|before:, |title}"');
    const synth = new Decoder(metadata).decode(independentCodes(metadata, 500, 4), 7);
    const at = (c: string): number => synth.columns.indexOf(c);
    const byMetro = new Map(METROS.map((m) => [m, m.split(", ")[0].replace(/(^|[ -])(\p{L})/gu, (_, a: string, b: string) => a + b.toUpperCase())]));
    const off = synth.rows.filter((r) => r[at("display")] !== byMetro.get(r[at("metro")]));
    assert.deepEqual(off.slice(0, 3), [], `${off.length} of ${synth.rows.length} rows show another city`);
    assert.ok(synth.rows.some((r) => r[at("display")] === "St. Louis") && synth.rows.some((r) => r[at("display")] === "Winston-Salem"));
  });

  test("columns that only look like a re-formatted date or a re-cased key (30% of rows) get no rule", async () => {
    assert.deepEqual(templates((await analyzeTable(deaths(400, 0.3), { rareThreshold: 3 })).metadata), []);
    assert.deepEqual(templates((await analyzeTable(metros(360, 0.3), { rareThreshold: 3 })).metadata), []);
  });

  test("a date is found in a text by its fields: names, numbers padded or not, a two-digit year, a month and year alone", () => {
    const at = Date.UTC(1984, 6, 13, 9, 5) / 1000;
    assert.deepEqual(datetimeIn("EOW: Friday, July 13, 1984", at), { at: 5, len: 21, format: "EEEE, MMMM d, yyyy" });
    assert.deepEqual(datetimeIn("13/07/84 09:05", at), { at: 0, len: 14, format: "d/MM/yy HH:mm" });
    assert.deepEqual(datetimeIn("issue of Jul-84", at), { at: 9, len: 6, format: "MMM-yy" });
    assert.deepEqual(datetimeIn("the 13th of July 1984", at), { at: 4, len: 17, format: "d'th of 'MMMM yyyy" });
    assert.equal(datetimeIn("July 13", at), undefined, "no year");
    assert.equal(datetimeIn("1984", at), undefined, "no month");
  });

  test("filters parse, print and render: part before a separator, letter case, a date read in the source's format", () => {
    const p = parseTemplate("t", "{a|before:, |upper} on {d|date:EEE d MMM yyyy} ({a|title})");
    assert.deepEqual(p.parts, [{ column: 1, before: ", ", letter_case: "upper" }, " on ", { column: 2, date: "EEE d MMM yyyy" }, " (", { column: 1, letter_case: "title" }, ")"]);
    assert.equal(templateText(p), "{a|before:, |upper} on {d|date:EEE d MMM yyyy} ({a|title})");
    const parts = p.parts.map((x) => (typeof x !== "string" && x.date ? { ...x, from: "yyyy-MM-dd" } : x));
    assert.equal(renderTemplate(parts, (c) => ["", "o'fallon-st. charles, mo", "2024-03-01"][c]), "O'FALLON-ST. CHARLES on Fri 1 Mar 2024 (O'fallon-St. Charles, Mo)");
    assert.equal(renderTemplate(parts, (c) => ["", "", "not a date"][c]), " on not a date ()", "blanks and unreadable dates as written");
    assert.deepEqual(parseTemplate("t", "{a|b}").parts, [{ column: 1 }], "a column named with a bar is still a column");
    assert.throws(() => parseTemplate("t", "{d|date:EEEE}"), /not one luxon can write/);
  });

  test("a declared date template reads its source in the column's own format; one on a text column is a DataError", async () => {
    const t = deaths(100);
    const declare = [{ type: "template" as const, column: "eow", template: "EOW: {date|date:EEEE, MMMM d, yyyy}" }];
    const { metadata } = await analyzeTable(t, { rareThreshold: 3, rules: { detect: false, declare } });
    assert.deepEqual(templates(metadata)[0].parts[1], { column: 1, date: "EEEE, MMMM d, yyyy", from: "yyyy-MM-dd" });
    const onText = [{ type: "template" as const, column: "eow", template: "EOW: {cause|date:EEEE, MMMM d, yyyy}" }];
    await assert.rejects(analyzeTable(t, { rareThreshold: 3, rules: { detect: false, declare: onText } }), /"cause" is no datetime column/);
  });

  test("the server takes a template part with a date, a separator and a letter case, and an old part without them; a date without its source format is refused", async () => {
    const { validateCreateModel } = await import("../src/server/handlers/bodyValidators");
    const { checkMetadata } = await import("../src/server/handlers/checkMetadata");
    const features = ["eow", "date"];
    const md = (parts: unknown[]): Metadata =>
      ({ features, cardinalities: { eow: 1, date: 1 }, empirical_probs: { eow: [1], date: [1] }, rules: [{ type: "template", columns: features, parts, share: 1 }] }) as unknown as Metadata;
    const good = md(["EOW: ", { column: 1, date: "EEEE, MMMM d, yyyy", from: "yyyy-MM-dd", before: " ", letter_case: "upper" }]);
    assert.equal(validateCreateModel({ metadata: good }).success, true);
    assert.doesNotThrow(() => checkMetadata(good));
    assert.equal(validateCreateModel({ metadata: md([{ column: 1, decimals: 2 }]) }).success, true, "a model of an older build");
    assert.equal(validateCreateModel({ metadata: md([{ column: 1, letter_case: "camel" }]) }).success, false);
    const param = (e: unknown) => (e as { param?: string }).param ?? "";
    assert.throws(() => checkMetadata(md([{ column: 1, date: "EEEE, MMMM d, yyyy" }])), (e) => param(e).endsWith("rules[0].parts[0].from"));
  });

  test("a written column that keys a catalog keeps its sources together: a department's name with its own state", async () => {
    const rng = new Rng(17);
    const states = ["AL", "KY", "MO", "OR", "TX", "CO", "NY", "WA", "OH", "GA", "ME", "NV"];
    // 150 departments of 100 names, half of the names in two states.
    const towns = ["Adams", "Clark", "Grant", "Hill", "Lake", "Marion", "Polk", "Union", "Wayne", "Wood"];
    const name = (i: number): string => `${["North", "South", "East", "West", "Central"][i % 5]} ${towns[Math.floor(i / 5) % 10]} ${["County Sheriff's Office", "Police Department"][Math.floor(i / 50) % 2]}`;
    const depts = Array.from({ length: 150 }, (_, i) => [name(i), states[i % states.length]]);
    const rows = Array.from({ length: 1500 }, () => {
      const [dept, state] = depts[rng.int(depts.length)];
      return [`${dept}, ${state}`, dept, state, String(rng.int(50))];
    });
    const { metadata } = await analyzeTable({ columns: ["dept", "dept_name", "state", "age"], rows }, { rareThreshold: 3 });
    assert.deepEqual(templates(metadata).map((r) => describeRule(r)), ['template: dept = "{dept_name}, {state}"']);
    const synth = new Decoder(metadata).decode(independentCodes(metadata, 500, 4), 7);
    const real = new Set(depts.map(([n, s]) => `${n}|${s}`));
    const off = synth.rows.filter((r) => !real.has(`${r[1]}|${r[2]}`) || r[0] !== `${r[1]}, ${r[2]}`);
    assert.deepEqual(off.slice(0, 3), [], `${off.length} of ${synth.rows.length} rows pair a department with another state`);
  });
});

describe("template cells written from the row's coordinates", () => {
  /**
   * Sightings: coordinates rounded to 6 decimals, a WKT point of the unrounded ones (as a table
   * that rounds its columns but not its point writes it), a `(lat, lon)` pair with 5 decimals,
   * written from the rounded ones, and `near`, a point of another row's coordinates.
   */
  function sightings(n = 600): Table {
    const rng = new Rng(31);
    const at = Array.from({ length: n }, () => [-73.98 + rng.next() * 0.03, 40.76 + rng.next() * 0.04]);
    const rows = at.map(([x, y], i) => {
      const [ox, oy] = at[(i * 7 + 13) % n];
      const [lon, lat] = [x.toFixed(6), y.toFixed(6)];
      return [lon, lat, ["AM", "PM"][rng.int(2)], `POINT (${x} ${y})`, `(${Number(lat).toFixed(5)}, ${Number(lon).toFixed(5)})`, `POINT (${ox} ${oy})`];
    });
    return { columns: ["lon", "lat", "shift", "point", "pair", "near"], rows };
  }

  test("a WKT point and a (lat, lon) pair are written from the row's numbers; a point of other numbers is no template", async () => {
    const t = sightings();
    const { metadata } = await analyzeTable(t, { rareThreshold: 3 });
    assert.deepEqual(templates(metadata).map((r) => describeRule(r)).sort(), ['template: pair = "({lat:.5f}, {lon:.5f})"', 'template: point = "POINT ({lon} {lat})"']);
    assert.deepEqual(templates(metadata).map((r) => r.share), [1, 1], "the real point's longer numbers round to the row's cells");
    const synth = new Decoder(metadata).decode(independentCodes(metadata, 500, 4), 7);
    const off = synth.rows.filter(([lon, lat, , point, pair]) => point !== `POINT (${lon} ${lat})` || pair !== `(${Number(lat).toFixed(5)}, ${Number(lon).toFixed(5)})`);
    assert.deepEqual(off.slice(0, 3), [], `${off.length} of ${synth.rows.length} rows write another point`);
  });

  test("coordinates blank together with their point stay blank together, and a row without them writes no point", async () => {
    const t = sightings();
    for (let r = 0; r < t.rows.length; r += 20) t.rows[r] = ["", "", t.rows[r][2], "", "", t.rows[r][5]];
    const { metadata } = await analyzeTable(t, { rareThreshold: 3 });
    const together = (metadata.rules ?? []).filter((r) => r.type === "blank_together").map((r) => describeRule(r));
    assert.ok(together.some((d) => /lon/.test(d) && /lat/.test(d) && !/point|pair/.test(d)), `the coordinates' blanks are a rule: ${together.join("; ")}`);
    const synth = new Decoder(metadata).decode(independentCodes(metadata, 2000, 4), 7);
    const blank = synth.rows.filter(([lon, lat]) => lon === "" && lat === "");
    const off = synth.rows.filter(([lon, lat, , point]) => (lon === "" || lat === "" ? point !== "" : point !== `POINT (${lon} ${lat})`));
    assert.ok(blank.length > 20, `${blank.length} rows without coordinates`);
    assert.deepEqual(off.slice(0, 3), [], `${off.length} of ${synth.rows.length} rows write a point off their coordinates`);
  });

  test("a number matches its cell written with more decimals that round to it, never fewer or another", () => {
    const parts = ["POINT (", { column: 1 }, " ", { column: 2 }, ")"];
    const cell = (c: number): string => ["", "-73.88182509", "40.65651334"][c];
    assert.equal(templateMatches(parts, "POINT (-73.88182509318824 40.65651333701598)", cell), true);
    assert.equal(templateMatches(parts, "POINT (-73.88182509 40.65651334)", cell), true);
    assert.equal(templateMatches(parts, "POINT (-73.8818251 40.65651334)", cell), false, "fewer decimals");
    assert.equal(templateMatches(parts, "POINT (-73.88182519318824 40.65651334)", cell), false, "another number");
    assert.equal(templateMatches(parts, "POINT (73.88182509318824 40.65651334)", cell), false, "another sign");
    assert.equal(templateMatches([{ column: 1, decimals: 2 }], "-73.88182509318824", cell), false, "a number part with decimals is written exactly");
    assert.equal(templateMatches([{ column: 1 }, "5"], "1.55", (c) => ["", "1.5"][c]), true, "the text the template writes, though a longer number would eat the literal");
  });
});
