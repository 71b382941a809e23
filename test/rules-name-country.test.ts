/**
 * Name and country rules: a people table's names follow its country column (athletes by IOC
 * code, employees by ISO code), found from the public name lists of each country, printed, and
 * every decoded row's fresh name is one of its row's country, of its row's sex.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { analyzeTable, Decoder, describeRule, ruleId, type Metadata, type NameCountryRule, type Table } from "../src/sdk";
import { ruleShares } from "../src/sdk/rules/check";
import { nameCountryWriter } from "../src/sdk/rules/name-country";
import { countryCodeOf, foldName, namePoolsOf, plausibleFor } from "../src/sdk/semantic/countries";
import { rowCells } from "../src/sdk/generate/batch";
import { Rng } from "../src/sdk/generate/sfc32";
import { independentCodes } from "./rules-fixtures";

function nameCountry(meta: Metadata): NameCountryRule[] {
  return (meta.rules ?? []).filter((r): r is NameCountryRule => r.type === "name_country");
}

/** IOC code -> ISO alpha-2 of the athletes' countries. */
const COUNTRIES: [string, string][] = [
  ["GER", "DE"],
  ["POL", "PL"],
  ["BRA", "BR"],
  ["ITA", "IT"],
  ["RUS", "RU"],
  ["USA", "US"],
];

/** Athletes: a full name of their country's public lists and of their sex, an IOC code, a sex, a height. */
function athletes(n = 480): Table {
  const rng = new Rng(4);
  const rows = Array.from({ length: n }, () => {
    const [ioc, cc] = COUNTRIES[rng.int(COUNTRIES.length)];
    const sex = rng.next() < 0.5 ? "female" : "male";
    const pool = namePoolsOf(cc)[0];
    const first = pool.first[sex].length ? pool.first[sex] : pool.first.any;
    const last = pool.last[sex].length ? pool.last[sex] : pool.last.any;
    return [`${first[rng.int(first.length)]} ${last[rng.int(last.length)]}`, ioc, sex, String(160 + rng.int(30))];
  });
  return { columns: ["name", "nationality", "sex", "height"], rows };
}

describe("name and country rules", () => {
  test("countries are read as names, ISO codes and IOC codes; unknown cells are not", () => {
    assert.deepEqual(
      [countryCodeOf("ioc", "GER"), countryCodeOf("ioc", "rsa"), countryCodeOf("alpha3", "DEU"), countryCodeOf("alpha2", "de"), countryCodeOf("name", "Germany")],
      ["DE", "ZA", "DE", "DE", "DE"],
    );
    assert.deepEqual([countryCodeOf("ioc", "DEU"), countryCodeOf("alpha3", "GER"), countryCodeOf("name", "Atlantis"), countryCodeOf("alpha2", "")], [undefined, undefined, undefined, undefined]);
  });

  test("a country's names come from its locales, else its languages', in Latin letters", () => {
    assert.deepEqual(namePoolsOf("AR").map((p) => p.locale), ["es"]);
    assert.deepEqual(namePoolsOf("JP"), [], "kanji readings are not transliterated");
    for (const cc of ["RU", "GR", "CN", "KR"]) {
      const pool = namePoolsOf(cc)[0];
      assert.ok(pool.first.any.length > 20 && pool.last.any.length > 20, cc);
      const odd = [...pool.first.any, ...pool.last.any].filter((v) => !/^\p{Lu}[\p{Ll}']*([ -]\p{Lu}[\p{Ll}']*)*$/u.test(v) || /[^\p{Script=Latin} '-]/u.test(v));
      assert.deepEqual(odd.slice(0, 3), [], cc);
    }
    assert.ok(namePoolsOf("GR")[0].last.any.includes("Papadopoulos"));
    assert.deepEqual([plausibleFor("Anna Kowalska", "PL"), plausibleFor("Xq Zzv", "PL"), plausibleFor("Anna Kowalska", "JP")], [true, false, undefined]);
  });

  test("names that follow an IOC code column are found and printed; a shuffled column gives no rule", async () => {
    const t = athletes();
    const { metadata } = await analyzeTable(t, { rareThreshold: 3 });
    const [rule, ...more] = nameCountry(metadata);
    assert.deepEqual(more, []);
    assert.deepEqual([ruleId(rule), rule.form, rule.share], ["name_country:name,nationality", "ioc", 1]);
    assert.ok(rule.shuffled! < 0.8, `shuffled ${rule.shuffled}`);
    assert.match(describeRule(rule), /^name and country: name is a name of the country in nationality \(IOC codes\), from that country's public name lists \(a word of them in 100\.0% of rows, \d+\.\d% with another row's country\)$/);
    assert.deepEqual(ruleShares([rule], metadata, t).map((s) => s.share), [1]);
    const rng = new Rng(9);
    const shuffled = t.rows.map((r) => [r[0], COUNTRIES[rng.int(COUNTRIES.length)][0], r[2], r[3]]);
    const again = await analyzeTable({ columns: t.columns, rows: shuffled }, { rareThreshold: 3 });
    assert.deepEqual(nameCountry(again.metadata), []);
  });

  test("decoded rows write fresh names of the row's country and sex, distinct", async () => {
    const { metadata } = await analyzeTable(athletes(), { rareThreshold: 3 });
    assert.equal(nameCountry(metadata).length, 1);
    const synth = new Decoder(metadata).decode(independentCodes(metadata, 600, 3), 5);
    const off = synth.rows.filter((r) => !plausibleFor(r[0], countryCodeOf("ioc", r[1])!));
    assert.deepEqual(off.slice(0, 3), [], `${off.length} of ${synth.rows.length} rows have a name of another country`);
    const otherSex = synth.rows.filter((r) => {
      if (r[1] === "USA") return false;
      const pool = namePoolsOf(countryCodeOf("ioc", r[1])!)[0];
      const first = foldName(r[0].split(" ")[0]);
      return !pool.first[r[2] as "female" | "male"].some((v) => foldName(v) === first);
    });
    assert.deepEqual(otherSex.slice(0, 3), [], `${otherSex.length} rows have a first name not of the row's sex`);
    assert.ok(new Set(synth.rows.map((r) => r[0])).size > 590, "names stay distinct");
  });

  test("the writer leaves fixed cells, released values, unread countries and countries without lists", () => {
    const meta = {
      features: ["name", "country"],
      column_stats: { name: { type: "categorical", semantic: { kind: "full_name", locale: "en" } } },
      value_mappings: { name: { "Ada Lovelace": 0 } },
      rules: [{ type: "name_country", columns: ["name", "country"], form: "alpha2", share: 0.7, shuffled: 0.2 }],
    } as unknown as Metadata;
    const rows = [["John Smith", "PL"], ["John Smith", "PL"], ["Ada Lovelace", "PL"], ["John Smith", "JP"], ["John Smith", "XX"], ["John Smith", "GB"], ["JOHN SMITH", "RU"]];
    const changed = nameCountryWriter(meta)!.apply(rowCells(rows), 1, (r, f) => r === 1 && f === 0);
    assert.equal(changed, 2);
    assert.ok(plausibleFor(rows[0][0], "PL") && rows[0][0] !== "John Smith" && /^\S+ \S+$/.test(rows[0][0]), rows[0][0]);
    assert.deepEqual(rows.slice(1, 6).map((r) => r[0]), ["John Smith", "Ada Lovelace", "John Smith", "John Smith", "John Smith"]);
    assert.ok(plausibleFor(rows[6][0], "RU"), rows[6][0]);
  });

  test("a categorical column's fresh name keeps a released first word and draws the rest of the row's country", () => {
    const meta = {
      features: ["athlete", "country"],
      column_stats: { athlete: { type: "categorical", semantic: { kind: "full_name", locale: "es" } } },
      value_mappings: { athlete: { "Zou Kai": 0, "Anna Petrova": 1 } },
      rules: [{ type: "name_country", columns: ["athlete", "country"], form: "name", share: 0.7, shuffled: 0.2 }],
    } as unknown as Metadata;
    const rows = [["Zou Benito Matos", "China"], ["Anna Pérez", "Russia"], ["Benito Matos", "Poland"]];
    nameCountryWriter(meta)!.apply(rowCells(rows), 3);
    assert.match(rows[0][0], /^Zou \S+ \S+$/);
    assert.ok(namePoolsOf("CN")[0].last.any.includes(rows[0][0].split(" ")[2]), rows[0][0]);
    assert.match(rows[1][0], /^Anna \S+$/);
    assert.ok(namePoolsOf("RU")[0].last.female.includes(rows[1][0].split(" ")[1]), `${rows[1][0]}: a Russian surname of Anna's sex`);
    assert.ok(!rows[2][0].startsWith("Benito ") && plausibleFor(rows[2][0], "PL"), rows[2][0]);
  });
});
