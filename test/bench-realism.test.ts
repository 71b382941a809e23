/**
 * The realism checks of `npm run bench -- tables` (bench/realism.ts) on small tables built here,
 * and the JSON records of the public tables as a table (bench/public-tables.ts).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Table } from "../src/sdk";
import { scanTable } from "../src/sdk/metadata/table-scan";
import {
  addPlaces,
  catalogs,
  emptyGazetteer,
  geography,
  grain,
  grainGap,
  linearIdentities,
  multipleOf,
  nameWords,
  structuralZeros,
  textRealism,
  zipPrefix,
} from "../bench/realism";
import { recordsTable } from "../bench/public-tables";

const scan = (t: Table) => scanTable(t, 1);

test("textRealism: a letter token the real column never holds is invented, a new number is not", async () => {
  const real = await scan({
    columns: ["address", "n", "when"],
    rows: [
      ["2009 W. 6th St.", "1", "2020-01-01"],
      ["Main & College streets", "2", "2020-01-02"],
      ["3100 Rosecrans Ave.", "3", "2020-01-03"],
    ],
  });
  const synth = await scan({
    columns: ["address", "n", "when"],
    rows: [
      ["4291 W. 6th St.", "9", "1999-09-09"],
      ["QithIqRxrbaajBNLYx83", "8", "1999-09-10"],
      ["Main & College streets", "7", "1999-09-11"],
      ["", "6", "1999-09-12"],
    ],
  });
  const r = textRealism(real, synth, { address: "categorical", n: "numerical", when: "datetime" });
  assert.deepEqual(
    r.map((c) => c.column),
    ["address"],
    "numbers and dates are not text",
  );
  assert.equal(r[0].real_values, 1 / 3);
  assert.equal(r[0].invented_tokens, 1 / 3);
  assert.deepEqual(r[0].examples, ["QithIqRxrbaajBNLYx83"]);
});

test("geography: (city, state), zip prefix and points are checked against the real table and the gazetteer", async () => {
  const g = emptyGazetteer(["California", "New York"], ["CA", "NY"]);
  addPlaces(g, [
    { city: "Holtsville", state: "NY", zip: "00501", lat: "40.9", lon: "-72.6" },
    { city: "Fresno", state: "CA", zip: "93650", lat: "36.8", lon: "-119.8" },
    { city: "Eureka", state: "CA", zip: "95501", lat: "40.8", lon: "-124.1" },
  ]);
  const cols = ["city", "State", "zip_code", "latitude", "longitude"];
  const real = await scan({ columns: cols, rows: [["Reno", "Nevada", "89501", "39.5", "-119.8"]] });
  const synth = await scan({
    columns: cols,
    rows: [
      ["Fresno", "California", "501", "37.0", "-120.0"],
      ["holtsville", "NY", "00599", "41.0", "-73.0"],
      ["Reno", "Nevada", "89502", "39.5", "-119.8"],
      ["Parkerboro", "CA", "93650", "40.0", "-161.0"],
    ],
  });
  const checks = Object.fromEntries(geography(real, synth, g).map((c) => [c.check, c]));
  assert.equal(checks["(city, state)"].real, 3 / 4, "state names map to codes, cities compare case-folded, the real table's places count");
  assert.deepEqual(checks["(city, state)"].examples, ["Parkerboro, CA"]);
  assert.equal(checks["(zip prefix, state)"].real, 3 / 4, "501 is 00501, whose prefix belongs to NY, not CA");
  assert.equal(checks["(latitude, longitude) in state"].rows, 4);
  assert.deepEqual(checks["(latitude, longitude) in state"].examples, ["41.0, -73.0, NY", "40.0, -161.0, CA"], "outside the state's box");
  assert.equal(zipPrefix("12345-6789"), "123");
  assert.equal(zipPrefix("N12345"), undefined);
  assert.deepEqual(nameWords("Origin State"), ["origin", "state"]);
  assert.deepEqual(nameWords("zipCode"), ["zip", "code"]);
});

test("structuralZeros: a value pair independence puts 30 rows in and the real rows hold in under 1% of them", async () => {
  const rows: string[][] = [];
  for (let i = 0; i < 200; i++) rows.push(["Male", i % 2 ? "Husband" : "Own-child"]);
  for (let i = 0; i < 200; i++) rows.push(["Female", i % 2 ? "Wife" : "Own-child"]);
  // One real Female Husband among 50 predicted is 2%: not a structural zero; none is.
  const one = await scan({ columns: ["sex", "relationship"], rows: rows.map((r, i) => (i === 399 ? ["Female", "Husband"] : r)) });
  assert.equal(structuralZeros(one, one).pairs[0].cells, 1, "(Male, Wife) alone");
  // One in 250 predicted (0.4%) is.
  const big: string[][] = [];
  for (let i = 0; i < 2000; i++) big.push([i < 1000 ? "Male" : "Female", i % 2 ? (i < 1000 ? "Husband" : "Wife") : "Own-child"]);
  big[1999] = ["Female", "Husband"];
  const b = await scan({ columns: ["sex", "relationship"], rows: big });
  assert.equal(structuralZeros(b, b).pairs[0].cells, 2);
  assert.equal(structuralZeros(b, b).pairs[0].synthetic_rows, 1, "the real table's own Female Husband is in the cell");
  const real = await scan({ columns: ["sex", "relationship"], rows });
  const synthRows = rows.map((r, i) => (i < 10 ? ["Female", "Husband"] : r));
  const z = structuralZeros(real, await scan({ columns: ["sex", "relationship"], rows: synthRows }));
  assert.equal(z.pairs.length, 1);
  assert.equal(z.pairs[0].cells, 2, "(Male, Wife) and (Female, Husband), each predicted 200 x 100 / 400 = 50 rows");
  assert.equal(z.pairs[0].predicted_rows, 100);
  assert.equal(z.pairs[0].synthetic_rows, 10);
  assert.equal(z.rows_share, 10 / 400);
  assert.deepEqual(z.pairs[0].examples, ["Female | Husband"]);
});

test("linearIdentities: a sum with a sparse part and a difference with a constant, and how many synthetic rows keep them", async () => {
  const cols = ["age", "education", "experience", "other", "repair", "total"];
  const real: string[][] = [];
  for (let i = 0; i < 40; i++) {
    const age = 20 + i;
    const edu = 8 + (i % 9);
    const repair = i % 10 === 0 ? 4000 + i : 0;
    const other = i % 3 ? 10 * i : 0;
    real.push([age, edu, age - edu - 6, other, repair, other + repair].map(String));
  }
  const synth = real.map((r, i) => (i % 4 === 0 ? [r[0], r[1], String(Number(r[2]) + 1), r[3], r[4], "0"] : r));
  const ids = linearIdentities(await scan({ columns: cols, rows: real }), await scan({ columns: cols, rows: synth }));
  const byLabel = Object.fromEntries(ids.map((x) => [x.label, x]));
  // experience = age - education - 6 reads as the column of the odd sign being the total.
  assert.deepEqual(Object.keys(byLabel).sort(), ["age = education + experience + 6", "total = other + repair"]);
  const sum = byLabel["total = other + repair"];
  assert.equal(sum.real_rows, 40);
  assert.equal(sum.real_rows_nonzero_part, 28, "rows where other or repair is not 0");
  assert.equal(sum.synthetic, 33 / 40, "a total of 0 is right where both parts are 0 (i = 12, 24, 36)");
  assert.deepEqual(sum.examples[0], "total 0, other 0, repair 4000");
  assert.equal(byLabel["age = education + experience + 6"].synthetic, 30 / 40);
});

test("linearIdentities: decimals rounded in the real table still make an identity; unrelated columns make none", async () => {
  const rows: string[][] = [];
  for (let i = 0; i < 40; i++) {
    const a = 1000 + 13.37 * i;
    const b = 55.55 * ((i * 7) % 11);
    rows.push([a.toFixed(1), b.toFixed(1), (a + b).toFixed(1), String((i * 37) % 17)]);
  }
  const t = await scan({ columns: ["a", "b", "c", "d"], rows });
  assert.deepEqual(
    linearIdentities(t, t).map((x) => [x.label, x.synthetic]),
    [["c = a + b", 1]],
  );
});

test("grain: shares of multiples of round and fractional steps (zeros left out), and the decimals written", async () => {
  const real = await scan({ columns: ["salary", "age"], rows: Array.from({ length: 20 }, (_, i) => [String(i < 10 ? 0 : 50 * i), (30 + (i + 1) / 12).toFixed(5)]) });
  const synth = await scan({ columns: ["salary", "age"], rows: Array.from({ length: 20 }, (_, i) => [String(i < 10 ? 0 : 50 * i + 3), (30 + i / 7).toFixed(7)]) });
  const g = Object.fromEntries(grain(real, synth).map((c) => [c.column, c]));
  assert.deepEqual([g.salary.step, g.salary.real, g.salary.synthetic], [50, 1, 0], "of the non-zero values");
  assert.equal(g.salary.decimals_tvd, 0);
  assert.deepEqual([g.salary.zero_real, g.salary.zero_synthetic], [0.5, 0.5]);
  assert.equal(g.salary.real_values, undefined, "11 distinct values in 20 rows: not a lattice");
  assert.deepEqual([g.age.real, g.age.synthetic > 0], [1, true], "twelfths: every real value, few synthetic ones (i/7 hits i = 0, 7, 14)");
  assert.equal(g.age.decimals_tvd, 1);
  assert.equal(multipleOf("37.66667", 1 / 12), true);
  assert.equal(multipleOf("37.6582024", 1 / 12), false);
  // Written to 0.1, a value says nothing of twelfths (within 0.05 of one, always), and 27.2 lies as
  // near 27.25 as 27.15 does; 27.5 and 27 are multiples of 0.25.
  assert.deepEqual(["27.1", "27.0833", "27.2", "27.5", "27"].map((v) => multipleOf(v, 1 / 12)), [false, true, false, true, true]);
  assert.deepEqual(["27.2", "27.3", "27.5", "27", "27.25"].map((v) => multipleOf(v, 0.25)), [false, false, true, true, true]);
});

test("grain: a column of few repeated values is a lattice, and synthetic values off it are counted", async () => {
  const fahrenheit = (f: number): string => (((f - 32) * 5) / 9).toFixed(1);
  const real = await scan({ columns: ["temp_max"], rows: Array.from({ length: 100 }, (_, i) => [fahrenheit(50 + (i % 10))]) });
  const synth = await scan({ columns: ["temp_max"], rows: Array.from({ length: 100 }, (_, i) => [i % 4 ? fahrenheit(50 + (i % 10)) : "12.3"]) });
  const [g] = grain(real, synth);
  assert.equal(g.real_values, 0.75, "10 distinct values in 100 rows; 12.3 is no whole degree Fahrenheit");
});

test("grain: zeros are a separate mass: their share is compared apart, and a column mostly 0 with distinct other values is no lattice", async () => {
  // 200 rows: real 0 in 180, twenty distinct costs, 5 of them multiples of 10; synthetic 0 in 150,
  // fifty costs of which 25 are multiples of 10.
  const real = await scan({ columns: ["cost"], rows: Array.from({ length: 200 }, (_, i) => [i < 180 ? "0" : String(i < 185 ? 10 * i : 10 * i + 3)]) });
  const synth = await scan({ columns: ["cost"], rows: Array.from({ length: 200 }, (_, i) => [i < 150 ? "0" : String(i % 2 ? 10 * i : 10 * i + 3)]) });
  const [g] = grain(real, synth);
  assert.equal(g.real_values, undefined, "20 distinct values in 20 non-zero rows: not a lattice, though 21 values in 200 rows");
  assert.deepEqual([g.zero_real, g.zero_synthetic], [0.9, 0.75]);
  assert.deepEqual([g.step, g.real, g.synthetic], [10, 0.25, 0.5], "of the non-zero values");
  assert.ok(g.noise > 0.2 && g.noise < 0.3, `noise ${g.noise}: two binomial sd of 20 against 50 values`);
  assert.ok(g.zero_noise > 0.05 && g.zero_noise < 0.07, `zero noise ${g.zero_noise}: two sd of 200 against 200 values`);
  assert.equal(grainGap(g), 0.25, "the step's gap, beyond its noise");
  assert.ok(Math.abs(grainGap({ ...g, noise: 0.3 }) - 0.15) < 1e-9, "with the step's gap within noise, the zero share's");
  assert.equal(grainGap({ ...g, noise: 0.3, zero_noise: 0.2 }), 0, "both within noise");
});

test("catalogs: a key deciding columns in every real row, and the synthetic rows whose key is real with its real attributes", async () => {
  const states: [string, string, string][] = [
    ["Alabama", "1", "4863300"],
    ["Alaska", "2", "741894"],
    ["Arizona", "4", "6931071"],
    ["Arkansas", "5", "2988248"],
    ["California", "6", "39250017"],
    ["Colorado", "8", "5540545"],
  ];
  const real = await scan({
    columns: ["name", "id", "total", "group"],
    rows: states.flatMap((s) => ["<10000", "10000 to 14999", "15000 to 24999"].map((g) => [...s, g])),
  });
  const synth = await scan({
    columns: ["name", "id", "total", "group"],
    rows: [
      ["Alabama", "1", "4863300", "<10000"],
      ["Alaska", "2.0", "741894", "<10000"], // the same number written otherwise
      ["Arizona", "5", "6931071", "<10000"], // Arkansas' id
      ["Texas", "48", "27862596", "<10000"], // no real key
      ["__other__", "3", "2988248", "<10000"], // the SDK's pooled text: no key written
    ],
  });
  const found = catalogs(real, synth);
  const byName = found.find((c) => c.key === "name");
  assert.deepEqual(byName && { attributes: byName.attributes, keys: byName.real_keys, rows: byName.synthetic_rows, share: byName.synthetic }, {
    attributes: ["id", "total"],
    keys: 6,
    rows: 4,
    share: 0.5,
  });
  assert.deepEqual(byName?.examples, ["Arizona, 5, 6931071", "Texas, 48, 27862596"]);
  assert.ok(!found.some((c) => c.key === "group"), "group decides nothing (each group in every state)");
});

test("catalogs: an attribute that is mostly zeros agreeing within each key by chance is none (the SDK's bound)", async () => {
  // 58 rows, 20 states each in 2 or 3 rows: loans 0 in 56 rows and 5000 in state S18's two, so
  // state decides loans in every row, as it would by chance with probability 0.1; the district
  // number is the state's in every row too, which chance would give with probability below 1e-40.
  const rows = Array.from({ length: 58 }, (_, i) => [`S${i % 20}`, i % 20 === 18 ? "5000" : "0", String(100 + (i % 20))]);
  const t = await scan({ columns: ["state", "loans", "district"], rows });
  const found = catalogs(t, t);
  assert.deepEqual(
    found.map((c) => [c.key, c.attributes]),
    [
      ["state", ["district"]],
      ["district", ["state"]],
    ],
  );
});

test("recordsTable: JSON records become a table of their keys in order of first appearance, null and missing keys blank", () => {
  const t = recordsTable([{ a: 1, b: null }, { b: "x", c: true }, { a: 2.5e-7 }], "t.json");
  assert.deepEqual(t, {
    columns: ["a", "b", "c"],
    rows: [
      ["1", "", ""],
      ["", "x", "true"],
      ["2.5e-7", "", ""],
    ],
  });
  assert.throws(() => recordsTable({ a: 1 }, "t.json"), /expected a JSON array/);
  assert.throws(() => recordsTable([1], "t.json"), /record 0 is not an object/);
});
