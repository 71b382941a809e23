/**
 * Name and sex rules: a people table's first names follow its sex column (olympians, the victims
 * of a riot), found from the public name lists, printed, and every decoded row's fresh name is of
 * its row's sex.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { analyzeTable, Decoder, describeRule, ruleId, type Metadata, type NameGenderRule, type Table } from "../src/sdk";
import { ruleShares } from "../src/sdk/rules/check";
import { nameGenderWriter, sexOfName } from "../src/sdk/rules/name-gender";
import { rowCells } from "../src/sdk/generate/batch";
import { Rng } from "../src/sdk/generate/sfc32";
import { independentCodes } from "./rules-fixtures";

const WOMEN = ["Mary", "Patricia", "Jennifer", "Linda", "Elizabeth", "Barbara", "Susan", "Jessica", "Sarah", "Karen"];
const MEN = ["James", "Robert", "John", "Michael", "David", "William", "Richard", "Joseph", "Thomas", "Charles"];
const LAST = ["Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller", "Davis", "Rodriguez", "Martinez", "Wilson", "Anderson"];

function nameGender(meta: Metadata): NameGenderRule[] {
  return (meta.rules ?? []).filter((r): r is NameGenderRule => r.type === "name_gender");
}

/** Athletes: a unique full name, its sex written F or M, and a height (a little taller for men). */
function athletes(n = 400): Table {
  const rng = new Rng(4);
  const rows = Array.from({ length: n }, (_, i) => {
    const woman = rng.next() < 0.5;
    const first = (woman ? WOMEN : MEN)[rng.int(10)];
    return [`${first} ${LAST[rng.int(LAST.length)]}-${i}`, woman ? "F" : "M", String(160 + rng.int(20) + (woman ? 0 : 10))];
  });
  return { columns: ["name", "sex", "height"], rows };
}

describe("name and sex rules", () => {
  test("first names that follow a sex column are found from the public lists and printed", async () => {
    const t = athletes();
    const { metadata } = await analyzeTable(t, { rareThreshold: 3 });
    const [rule, ...more] = nameGender(metadata);
    assert.deepEqual(more, []);
    assert.deepEqual([ruleId(rule), rule.female, rule.male, rule.share], ["name_gender:name,sex", ["F"], ["M"], 1]);
    assert.equal(describeRule(rule), "name and sex: name's first name is a woman's where sex is F, a man's where M");
    assert.deepEqual(ruleShares([rule], metadata, t).map((s) => s.share), [1]);
  });

  test("decoded rows write fresh names whose first name is of the row's sex", async () => {
    const { metadata } = await analyzeTable(athletes(), { rareThreshold: 3 });
    const synth = new Decoder(metadata).decode(independentCodes(metadata, 600, 3), 5);
    const want = new Map([["F", "female"], ["M", "male"]]);
    const off = synth.rows.filter((r) => sexOfName(r[0]) !== want.get(r[1]));
    assert.deepEqual(off.slice(0, 3), [], `${off.length} of ${synth.rows.length} rows have a first name of the other sex or of none`);
    assert.ok(new Set(synth.rows.map((r) => r[0])).size > 590, "names stay distinct");
  });

  test("names beside a column that does not follow them, and words that are no names, give no rule", async () => {
    const rng = new Rng(8);
    const shuffled = athletes().rows.map((r) => [r[0], rng.next() < 0.5 ? "F" : "M", r[2]]);
    const words = athletes().rows.map((r) => [`${["blue", "green", "red"][rng.int(3)]} ${rng.int(1000)}`, r[1], r[2]]);
    for (const rows of [shuffled, words]) {
      const { metadata } = await analyzeTable({ columns: ["name", "sex", "height"], rows }, { rareThreshold: 3 });
      assert.deepEqual(nameGender(metadata), []);
    }
  });

  test("the writer keeps the surname and the case, leaves fixed cells and rows of another sex value", () => {
    const meta = { features: ["name", "sex"], rules: [{ type: "name_gender", columns: ["name", "sex"], female: ["F"], male: ["M"], share: 1 }] } as unknown as Metadata;
    const rows = [["James Brown", "F"], ["MARY SMITH", "M"], ["Mary Jones", "F"], ["Robert Stone", "F"], ["Linda Hill", "X"]];
    const changed = nameGenderWriter(meta)!.apply(rowCells(rows), 1, (r, f) => r === 3 && f === 0);
    assert.equal(changed, 2);
    assert.deepEqual([sexOfName(rows[0][0]), rows[0][0].endsWith(" Brown")], ["female", true]);
    assert.match(rows[1][0], /^[A-Z]+ SMITH$/);
    assert.equal(sexOfName(rows[1][0]), "male");
    assert.deepEqual(rows.slice(2), [["Mary Jones", "F"], ["Robert Stone", "F"], ["Linda Hill", "X"]]);
  });
});
