/**
 * Slots of a text column's masked tokens (`12/1#/####`) filled from the column's own released
 * tokens of that digit shape, so dates and years written are ones the column holds (issue 40).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { buildTextModel, TextWriter } from "../src/sdk/semantic/text";
import { Rng } from "../src/sdk/generate/sfc32";
import { publicWords } from "../src/sdk/semantic/pools";

test("a masked date is filled from released dates of its shape: every year written is one of the column's", () => {
  // 300 rows of m/d/yyyy, years 2009-2012; a few dates repeated often enough to be released.
  const values: string[] = [];
  const counts: number[] = [];
  const seen = new Set<string>();
  const rng0 = new Rng(9);
  while (values.length < 300) {
    const d = `${1 + rng0.int(12)}/${1 + rng0.int(28)}/${2009 + rng0.int(4)}`;
    if (seen.has(d)) continue;
    seen.add(d);
    values.push(d);
    counts.push(1);
  }
  for (const d of ["1/11/2012", "6/24/2011", "3/10/2010", "9/27/2009", "10/16/2009", "12/1/2011"].filter((x) => !seen.has(x))) {
    values.push(d);
    counts.push(5);
  }
  const model = buildTextModel(values, counts, 5)!;
  assert.ok(model.shaped && model.shaped.length > 0, "rare dates are masked");
  const w = new TextWriter(model);
  const rng = new Rng(3);
  const out = Array.from({ length: 500 }, () => w.write(rng));
  const bad = out.filter((v) => {
    const m = /^(\d+)\/(\d+)\/(\d{4})$/.exec(v);
    return !m || Number(m[3]) < 2009 || Number(m[3]) > 2012 || Number(m[2]) > 31;
  });
  assert.ok(bad.length === 0, `${bad.length} of 500 dates outside the column's years or not a date (${bad.slice(0, 5)})`);
});

test("a masked number with no released token of its shape is still written with digits", () => {
  const values = Array.from({ length: 40 }, (_, i) => `(${600 + i}-${100 + 3 * i}-${1000 + 7 * i})`);
  const model = buildTextModel(values, values.map(() => 1), 5)!;
  const w = new TextWriter(model);
  const rng = new Rng(1);
  for (let i = 0; i < 50; i++) assert.match(w.write(rng), /^\(\d{3}-\d{3}-\d{4}\)$/);
});

test("a rare capitalised word of a column that names no person is written as one of the column's own released words, not a surname", () => {
  // Places: a released head word, then a rare name of no public list (or one released name).
  const rng0 = new Rng(4);
  const syl = ["bar", "dun", "kel", "mor", "vask", "tir", "quon", "zel", "plin", "grav"];
  const values: string[] = [];
  const counts: number[] = [];
  const seen = new Set<string>();
  while (values.length < 200) {
    const name = syl[rng0.int(10)] + syl[rng0.int(10)] + syl[rng0.int(10)];
    const v = `${["Lake", "Mount", "Port", "Fort"][rng0.int(4)]} ${name[0].toUpperCase()}${name.slice(1)}`;
    if (seen.has(v)) continue;
    seen.add(v);
    values.push(v);
    counts.push(1);
  }
  for (const v of ["Lake Alder", "Mount Alder", "Port Hollow", "Fort Hollow", "Lake Hollow"]) {
    values.push(v);
    counts.push(4);
  }
  const model = buildTextModel(values, counts, 4, true)!;
  assert.ok(model.words.includes("Aa"), "rare names are the class Aa");
  const w = new TextWriter(model);
  const rng = new Rng(2);
  const own = new Set(values.flatMap((v) => v.split(" ")));
  const surnames = new Set(publicWords().capitalized);
  const out = Array.from({ length: 300 }, () => w.write(rng));
  const foreign = out.filter((v) => v.split(" ").some((x) => surnames.has(x) && !own.has(x)));
  assert.equal(foreign.length, 0, `${foreign.length} of 300 values hold a surname the column never holds (${foreign.slice(0, 5)})`);
});
