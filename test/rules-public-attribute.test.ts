/**
 * Issue 40, public attributes of public keys: a column that holds a public reference attribute of
 * a US state or a country column (postal code, FIPS number, capital; ISO 3166 codes) is found at
 * fit even with one row per key (where a catalog needs repeated keys), printed by `synthd fit`,
 * dropped by `rules.drop`, and written from the key in every decoded row; an identifier holding a
 * public code (an FEC candidate id and its state) keeps it. The decoded rows come
 * from a generator that learned nothing (each column drawn from its 1-way marginal), so the
 * attributes hold only because the decoder writes them.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { analyzeTable, Decoder, describeRule, ruleId, type Metadata, type PublicAttributeRule, type Table } from "../src/sdk";
import { ruleShares } from "../src/sdk/rules/check";
import { RuleEnforcer, attributeOrder } from "../src/sdk/rules/enforce";
import { rowCells } from "../src/sdk/generate/batch";
import { independentCodes } from "./rules-fixtures";

/** State, capital, FIPS number (FIPS PUB 5-2), written by hand for the test. */
const STATES: [string, string, number][] = [
  ["Alabama", "Montgomery", 1],
  ["Alaska", "Juneau", 2],
  ["Arizona", "Phoenix", 4],
  ["Arkansas", "Little Rock", 5],
  ["California", "Sacramento", 6],
  ["Colorado", "Denver", 8],
  ["Connecticut", "Hartford", 9],
  ["Delaware", "Dover", 10],
  ["Florida", "Tallahassee", 12],
  ["Georgia", "Atlanta", 13],
  ["New Jersey", "Trenton", 34],
  ["Utah", "Salt Lake City", 49],
];
const CAPITAL = new Map(STATES.map(([s, c]) => [s, c]));
const FIPS = new Map(STATES.map(([s, , f]) => [s, f]));

/** One row per state: state, capital, id (its FIPS number, unpadded), a private figure. */
function statesTable(): Table {
  return { columns: ["state", "capital", "id", "population"], rows: STATES.map(([s, c, f], i) => [s, c, String(f), String(1000 + 37 * i)]) };
}

function attributeRules(meta: Metadata): PublicAttributeRule[] {
  return (meta.rules ?? []).filter((r): r is PublicAttributeRule => r.type === "public_attribute");
}

function column(t: Table, name: string): string[] {
  const at = t.columns.indexOf(name);
  return t.rows.map((r) => r[at]);
}

describe("public attributes of public keys", () => {
  test("a table of one row per state: its capital and FIPS id are found as attributes of the state, and printed", async () => {
    const { metadata } = await analyzeTable(statesTable(), { rareThreshold: 3 });
    const rules = attributeRules(metadata);
    assert.deepEqual(
      rules.map((r) => [ruleId(r), r.attribute, r.share, r.width]),
      [
        ["public_attribute:state,capital", "us_state_capital", 1, undefined],
        ["public_attribute:state,id", "us_state_fips", 1, undefined],
      ],
    );
    assert.equal(describeRule(rules[1]), "public attribute: state -> id (US state FIPS code)");
    assert.ok(!rules.some((r) => r.columns.includes("population")), "a private figure is no attribute");
    assert.deepEqual(ruleShares(rules, metadata, statesTable()).map((s) => s.share), [1, 1], "the real rows keep them");
  });

  test("decoded rows write each state's capital and FIPS id, never another state's (Utah, Trenton) or a fresh number", async () => {
    const { metadata } = await analyzeTable(statesTable(), { rareThreshold: 3 });
    const synth = new Decoder(metadata).decode(independentCodes(metadata, 400, 5), 9);
    const [states, capitals, ids] = ["state", "capital", "id"].map((c) => column(synth, c));
    const off = states.flatMap((s, r) => (CAPITAL.get(s) === capitals[r] && String(FIPS.get(s)) === ids[r] ? [] : [`${s}, ${capitals[r]}, ${ids[r]}`]));
    assert.deepEqual(off.slice(0, 5), [], `${off.length} of ${states.length} rows hold another state's attribute`);
    assert.ok(new Set(states).size >= 10, "the states still vary");
  });

  test("zero-padded codes keep their padding; countries get their ISO 3166 alpha-3 and numeric codes", async () => {
    const countries: [string, string, string][] = [
      ["Germany", "DEU", "276"],
      ["France", "FRA", "250"],
      ["Afghanistan", "AFG", "004"],
      ["Brazil", "BRA", "076"],
      ["Japan", "JPN", "392"],
      ["Kenya", "KEN", "404"],
    ];
    const t: Table = { columns: ["country", "iso3", "numeric", "value"], rows: countries.map(([c, a, n], i) => [c, a, n, String(i * 3.5)]) };
    const { metadata } = await analyzeTable(t, { rareThreshold: 3 });
    const rules = attributeRules(metadata);
    assert.deepEqual(
      rules.map((r) => [r.columns.join(","), r.attribute, r.width]),
      [
        ["country,iso3", "country_alpha3", undefined],
        ["country,numeric", "country_numeric", 3],
      ],
    );
    const synth = new Decoder(metadata).decode(independentCodes(metadata, 200, 2), 4);
    const want = new Map(countries.map(([c, a, n]) => [c, `${a},${n}`]));
    const [names, iso3, numeric] = ["country", "iso3", "numeric"].map((c) => column(synth, c));
    const off = names.filter((c, r) => want.get(c) !== `${iso3[r]},${numeric[r]}`);
    assert.deepEqual(off.slice(0, 5), [], "every row's codes are its country's, numeric ones written with three digits");
  });

  test("a column agreeing with a key's attribute in under 95% of rows is no attribute; rules.drop removes one", async () => {
    const t = statesTable();
    // Three states of twelve with another state's capital: 75%.
    for (const r of [0, 4, 8]) t.rows[r][1] = "Trenton";
    const { metadata } = await analyzeTable(t, { rareThreshold: 3 });
    assert.deepEqual(attributeRules(metadata).map((r) => ruleId(r)), ["public_attribute:state,id"]);
    const dropped = await analyzeTable(statesTable(), { rareThreshold: 3, rules: { drop: ["public_attribute:state,id"] } });
    assert.deepEqual(attributeRules(dropped.metadata).map((r) => ruleId(r)), ["public_attribute:state,capital"]);
  });

  test("an identifier holding the row's state code (FEC candidate ids) keeps it at its offset in every decoded row", async () => {
    const codes = ["AL", "CA", "TX", "NY", "OH", "WA"];
    const rows = Array.from({ length: 60 }, (_, i) => {
      const st = codes[i % codes.length];
      return [`${i % 2 ? "H" : "S"}${i % 10}${st}${String(10000 + i * 37).slice(1)}`, st, String(100 + ((i * 53) % 900))];
    });
    const t: Table = { columns: ["candidate_id", "state", "receipts"], rows };
    const { metadata } = await analyzeTable(t, { rareThreshold: 3 });
    const rule = (metadata.rules ?? []).find((r) => r.type === "embedded_code");
    assert.deepEqual(rule && [ruleId(rule), rule.offset, rule.share], ["embedded_code:state,candidate_id", 2, 1]);
    assert.equal(describeRule(rule!), "embedded code: candidate_id holds state at character 3");
    const synth = new Decoder(metadata).decode(independentCodes(metadata, 300, 3), 8);
    const [ids, states] = ["candidate_id", "state"].map((c) => column(synth, c));
    const off = ids.filter((id, r) => id.slice(2, 4) !== states[r]);
    assert.deepEqual(off.slice(0, 5), [], "every id holds its row's state");
    assert.ok(new Set(ids).size > 250, "the ids stay fresh and distinct");
  });

  test("the enforcer writes the attribute from the key, leaves unknown keys and keeps a fixed cell (reported)", () => {
    const meta: Metadata = {
      features: ["code", "fips"],
      cardinalities: { code: 3, fips: 1 },
      empirical_probs: { code: [0.4, 0.4, 0.2], fips: [1] },
      column_stats: { code: { type: "categorical", count: 10, missing: 0, vocabulary: "us_state_code" }, fips: { type: "categorical", count: 10, missing: 0 } },
      value_mappings: { code: { CA: 0, TX: 1, __other__: 2 }, fips: { __other__: 0 } },
      rules: [{ type: "public_attribute", columns: ["code", "fips"], attribute: "us_state_fips", width: 2, share: 1 }],
    };
    const rows = [
      ["CA", "99"],
      ["TX", "48"],
      ["ZZ", "07"],
      ["PR", "01"],
      ["CA", "12"],
    ];
    const out = new RuleEnforcer(meta).apply(rowCells(rows), 1, () => "", (r, f) => r === 4 && f === 1);
    assert.deepEqual(rows, [
      ["CA", "06"],
      ["TX", "48"],
      ["ZZ", "07"],
      ["PR", "72"],
      ["CA", "12"],
    ]);
    assert.deepEqual([out.changed, out.unrepaired], [2, 1]);
  });
  test("attributes of attributes: a country's name writes its alpha-3 code before the alpha-3 code writes its alpha-2 (country-codes wrote Vanuatu, VUT, ZW)", () => {
    const meta: Metadata = {
      features: ["name", "alpha3", "alpha2"],
      cardinalities: { name: 3, alpha3: 3, alpha2: 3 },
      empirical_probs: { name: [0.4, 0.4, 0.2], alpha3: [0.4, 0.4, 0.2], alpha2: [0.4, 0.4, 0.2] },
      column_stats: {
        name: { type: "categorical", count: 10, missing: 0, vocabulary: "country" },
        alpha3: { type: "categorical", count: 10, missing: 0, vocabulary: "country_code" },
        alpha2: { type: "categorical", count: 10, missing: 0, vocabulary: "country_code" },
      },
      value_mappings: { name: { Vanuatu: 0, Germany: 1, __other__: 2 }, alpha3: { VUT: 0, DEU: 1, __other__: 2 }, alpha2: { VU: 0, DE: 1, __other__: 2 } },
      // As fit lists them: the alpha-3 code's attributes first, then the name's.
      rules: [
        { type: "public_attribute", columns: ["alpha3", "alpha2"], attribute: "country_alpha2", share: 1 },
        { type: "public_attribute", columns: ["name", "alpha3"], attribute: "country_alpha3", share: 1 },
      ],
    };
    const rows = [
      ["Vanuatu", "ZWE", "ZW"],
      ["Germany", "FRA", "FR"],
      ["Germany", "DEU", "DE"],
    ];
    new RuleEnforcer(meta).apply(rowCells(rows), 1, () => "");
    assert.deepEqual(rows, [
      ["Vanuatu", "VUT", "VU"],
      ["Germany", "DEU", "DE"],
      ["Germany", "DEU", "DE"],
    ]);
    assert.deepEqual(
      attributeOrder(meta.rules as PublicAttributeRule[]).map((r) => r.columns.join(",")),
      ["name,alpha3", "alpha3,alpha2"],
    );
  });
  test("one row per country: capital, region, calling code, currency, internet code and IOC code are the country's (country-codes wrote Vanuatu beside Atlanta, Saint Lucia beside AF)", async () => {
    // world-countries' values as public tables write them (country-codes, the CIA factbook).
    const countries: string[][] = [
      ["Afghanistan", "Kabul", "Asia", "Southern Asia", "93", "AFN", ".af", "AFG"],
      ["Germany", "Berlin", "Europe", "Western Europe", "49", "EUR", ".de", "GER"],
      ["Japan", "Tokyo", "Asia", "Eastern Asia", "81", "JPY", ".jp", "JPN"],
      ["Brazil", "Brasilia", "Americas", "South America", "55", "BRL", ".br", "BRA"],
      ["Kenya", "Nairobi", "Africa", "Eastern Africa", "254", "KES", ".ke", "KEN"],
      ["Australia", "Canberra", "Oceania", "Australia and New Zealand", "61", "AUD", ".au", "AUS"],
      ["Peru", "Lima", "Americas", "South America", "51", "PEN", ".pe", "PER"],
      ["Norway", "Oslo", "Europe", "Northern Europe", "47", "NOK", ".no", "NOR"],
      // A capital's former name (9 of 10 rows agree) and a list of currencies.
      ["Kazakhstan", "Nur-Sultan", "Asia", "Central Asia", "7", "KZT", ".kz", "KAZ"],
      ["Bhutan", "Thimphu", "Asia", "Southern Asia", "975", "INR,BTN", ".bt", "BHU"],
    ];
    const columns = ["country", "capital", "region", "subregion", "dial", "currency", "tld", "ioc"];
    const t: Table = { columns: [...columns, "gdp"], rows: countries.map((r, i) => [...r, String(100 + 17 * i)]) };
    const { metadata } = await analyzeTable(t, { rareThreshold: 3 });
    assert.deepEqual(
      attributeRules(metadata).map((r) => [r.columns.join(","), r.attribute]),
      [
        ["country,capital", "country_capital"],
        ["country,region", "country_region"],
        ["country,subregion", "country_subregion"],
        ["country,dial", "country_calling_code"],
        ["country,currency", "country_currency_code"],
        ["country,tld", "country_tld"],
        ["country,ioc", "country_ioc"],
      ],
    );
    const synth = new Decoder(metadata).decode(independentCodes(metadata, 300, 3), 6);
    const want = new Map(countries.map((r) => [r[0], r.slice(1).join("|").replace("Brasilia", "Brasília").replace("Nur-Sultan", "Astana").replace("INR,BTN", "BTN")]));
    const cols = columns.map((c) => column(synth, c));
    const off = cols[0].flatMap((c, r) => {
      // A kept list of currencies holds the country's (`INR,BTN` for Bhutan).
      const got = cols.slice(1).map((col) => col[r]).join("|").replace("INR,BTN", "BTN");
      return want.get(c) === got ? [] : [`${c}: ${got}`];
    });
    assert.deepEqual(off.slice(0, 5), [], `${off.length} of 300 rows hold another country's attribute`);
  });
});
