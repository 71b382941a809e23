/**
 * Slots of a text column's masked tokens (`12/1#/####`) filled from the column's own released
 * tokens of that digit shape, so dates and years written are ones the column holds (issue 40).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { buildTextModel, TextWriter } from "../src/sdk/semantic/text";
import { Rng } from "../src/sdk/generate/sfc32";

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
