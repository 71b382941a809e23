/**
 * Row rules kept exactly by the decoder (issue 23; src/sdk/rules/enforce.ts): codes drawn at random
 * (so a model that learned nothing) decode to rows that keep every rule of `metadata.rules`, only
 * the cells a rule needs are rewritten, a `where` or seed cell is never rewritten, and the same seed
 * gives the same rows. The server accepts rules that fit the metadata and refuses, in the contract's
 * envelope, rules that do not; GET metadata gives them back.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { Decoder } from "../src/sdk/generate/decode";
import type { ColumnStats, Metadata, Rule } from "../src/contract";
import { Rng } from "../src/sdk/generate/sfc32";
import { assertError, call, startHarness, validCreateBody, type Harness } from "./server-helpers";

/** Uniform probabilities of length k. */
const flat = (k: number): number[] => new Array<number>(k).fill(1 / k);

/**
 * A table of eight columns: state (3 values), city (4 values; each in one state, "Springfield" in
 * two), origin/destination over the same 3 airports, a >= b numbers (quantile bins), c = a + b,
 * and x, y blank together.
 */
function meta(rules: Rule[]): Metadata {
  const edges = [0, 10, 20, 30, 40];
  const num = (decimals: number) => ({ type: "numerical" as const, count: 100, missing: 0, min: 0, max: 40, bin_edges: edges, decimals });
  return {
    features: ["city", "state", "origin", "destination", "a", "b", "c", "x", "y"],
    cardinalities: { city: 4, state: 3, origin: 3, destination: 3, a: 4, b: 4, c: 4, x: 3, y: 3 },
    empirical_probs: { city: flat(4), state: flat(3), origin: flat(3), destination: flat(3), a: flat(4), b: flat(4), c: flat(4), x: flat(3), y: flat(3) },
    column_stats: {
      city: { type: "categorical", count: 100, missing: 0 },
      state: { type: "categorical", count: 100, missing: 0 },
      origin: { type: "categorical", count: 100, missing: 0 },
      destination: { type: "categorical", count: 100, missing: 0 },
      a: num(1),
      b: num(1),
      c: { ...num(1), min: 0, max: 80, bin_edges: [0, 20, 40, 60, 80] },
      x: { type: "categorical", count: 80, missing: 20 },
      y: { type: "categorical", count: 80, missing: 20 },
    },
    value_mappings: {
      city: { Austin: 0, Dallas: 1, Springfield: 2, Salem: 3 },
      state: { TX: 0, IL: 1, OR: 2 },
      origin: { LAX: 0, SFO: 1, JFK: 2 },
      destination: { LAX: 0, SFO: 1, JFK: 2 },
      a: {},
      b: {},
      c: {},
      x: { p: 0, q: 1, "": 2 },
      y: { u: 0, v: 1, "": 2 },
    },
    rules,
  };
}

const RULES: Rule[] = [
  {
    type: "fixed_combinations",
    columns: ["city", "state"],
    combinations: [[0, 0], [1, 0], [2, 1], [2, 2], [3, 2]],
    counts: [10, 10, 5, 5, 10],
    share: 1,
  },
  { type: "not_equal", columns: ["origin", "destination"], share: 1 },
  { type: "inequality", high: "a", low: "b", strict: false, share: 1 },
  { type: "sum", total: "c", parts: ["a", "b"], share: 1 },
  { type: "blank_together", columns: ["x", "y"], share: 1 },
];

const PAIRS = new Set(["Austin|TX", "Dallas|TX", "Springfield|IL", "Springfield|OR", "Salem|OR"]);

/** Random codes for every feature (n rows). */
function randomCodes(m: Metadata, n: number, seed: number): Record<string, Uint8Array> {
  const rng = new Rng(seed);
  const out: Record<string, Uint8Array> = {};
  for (const f of m.features) out[f] = Uint8Array.from({ length: n }, () => rng.int(m.cardinalities[f]));
  return out;
}

/** Index of each column name. */
const col = (m: Metadata) => Object.fromEntries(m.features.map((f, i) => [f, i]));

function assertKept(m: Metadata, rows: string[][]): void {
  const c = col(m);
  rows.forEach((r, i) => {
    assert.ok(PAIRS.has(`${r[c.city]}|${r[c.state]}`), `row ${i}: (${r[c.city]}, ${r[c.state]}) is not a real pair`);
    assert.notEqual(r[c.origin], r[c.destination], `row ${i}: origin = destination`);
    assert.ok(Number(r[c.a]) >= Number(r[c.b]), `row ${i}: a ${r[c.a]} < b ${r[c.b]}`);
    assert.equal(Math.round(Number(r[c.c]) * 10), Math.round(Number(r[c.a]) * 10) + Math.round(Number(r[c.b]) * 10), `row ${i}: c != a + b`);
    assert.equal(r[c.x] === "", r[c.y] === "", `row ${i}: x and y not blank together`);
  });
}

describe("the decoder keeps metadata.rules in every row", () => {
  test("random codes: without rules each rule breaks in many rows; with them none does", () => {
    const n = 5000;
    const codes = randomCodes(meta(RULES), n, 1);
    const loose = new Decoder(meta([])).decode(codes, 7).rows;
    const c = col(meta([]));
    const broken = loose.filter((r) => !PAIRS.has(`${r[c.city]}|${r[c.state]}`) || r[c.origin] === r[c.destination] || Number(r[c.a]) < Number(r[c.b])).length;
    assert.ok(broken > n / 2, `the codes alone should break the rules often (${broken} of ${n})`);
    const kept = new Decoder(meta(RULES)).decode(codes, 7).rows;
    assertKept(meta(RULES), kept);
  });

  test("only the cells a rule needs change: a row that keeps every rule decodes as without rules", () => {
    // Every rule but the sum (random codes almost never sum).
    const rules = RULES.filter((r) => r.type !== "sum");
    const n = 3000;
    const codes = randomCodes(meta(rules), n, 2);
    const loose = new Decoder(meta([])).decode(codes, 9).rows;
    const kept = new Decoder(meta(rules)).decode(codes, 9).rows;
    const c = col(meta([]));
    let same = 0;
    loose.forEach((r, i) => {
      const ok =
        PAIRS.has(`${r[c.city]}|${r[c.state]}`) && r[c.origin] !== r[c.destination] && Number(r[c.a]) >= Number(r[c.b]) &&
        (r[c.x] === "") === (r[c.y] === "");
      if (ok) {
        assert.deepEqual(kept[i], r);
        same++;
      }
    });
    // A broken pair keeps one of its two cells: the repair moves the other.
    loose.forEach((r, i) => {
      if (!PAIRS.has(`${r[c.city]}|${r[c.state]}`)) assert.ok(kept[i][c.city] === r[c.city] || kept[i][c.state] === r[c.state], `${r} -> ${kept[i]}`);
    });
    assert.ok(same > 100, `rows that kept every rule as drawn: ${same}`);
  });

  test("the same codes and seed give the same rows; another seed may differ", () => {
    const codes = randomCodes(meta(RULES), 2000, 3);
    const d = new Decoder(meta(RULES));
    assert.deepEqual(d.decode(codes, 11).rows, d.decode(codes, 11).rows);
  });

  test("a broken combination is replaced by the one the row's other columns point to (the 2-way marginals)", () => {
    // origin follows state exactly in the 2-way marginal: TX-LAX, IL-SFO, OR-JFK.
    const m = meta([RULES[0]]);
    const probs = new Array<number>(9).fill(0);
    for (let s = 0; s < 3; s++) probs[s * 3 + s] = 1 / 3;
    m.marginals = [{ features: ["state", "origin"], probs }];
    const codes = randomCodes(m, 4000, 12);
    const loose = new Decoder(meta([])).decode(codes, 21).rows;
    const rows = new Decoder(m).decode(codes, 21).rows;
    const c = col(m);
    const stateOf: Record<string, string> = { LAX: "TX", SFO: "IL", JFK: "OR" };
    let repaired = 0;
    let agree = 0;
    rows.forEach((r, i) => {
      const was = loose[i];
      if (PAIRS.has(`${was[c.city]}|${was[c.state]}`)) return;
      repaired++;
      // Only a combination that keeps the city or the state can fit: count those where one did and the state fits the origin.
      if (r[c.state] === stateOf[r[c.origin]]) agree++;
    });
    assert.ok(repaired > 1000, `repaired ${repaired}`);
    // A combination fitting the origin exists for a row when its city's state or its own state
    // matches the origin's: about 2 in 3 rows here; by count alone, about 1 in 3 would fit.
    assert.ok(agree / repaired > 0.55, `repaired rows whose state fits their origin: ${agree} of ${repaired}`);
  });

  test("a determinant decides the other columns (a functional dependency)", () => {
    const m = meta([{ type: "fixed_combinations", columns: ["state", "city"], determinant: "state", combinations: [[0, 0], [1, 2], [2, 3]], counts: [3, 3, 3], share: 1 }]);
    const rows = new Decoder(m).decode(randomCodes(m, 2000, 4), 5).rows;
    const c = col(m);
    const city: Record<string, string> = { TX: "Austin", IL: "Springfield", OR: "Salem" };
    for (const r of rows) assert.equal(r[c.city], city[r[c.state]]);
  });

  test("a pooled determinant beside a partner value no released value goes with takes a released entry with its partner value, never __other__ or a released value beside another's partner", () => {
    // Party decides its code; the parties of code 3 are each rarer than k, so all pooled.
    const m: Metadata = {
      features: ["party", "code"],
      cardinalities: { party: 3, code: 3 },
      empirical_probs: { party: flat(3), code: flat(3) },
      column_stats: { party: { type: "categorical", count: 60, missing: 0 }, code: { type: "categorical", count: 60, missing: 0 } },
      value_mappings: { party: { DEM: 0, REP: 1, __other__: 2 }, code: { "1": 0, "2": 1, "3": 2 } },
      rules: [{ type: "fixed_combinations", columns: ["code", "party"], determinant: "party", combinations: [[0, 0], [1, 1]], counts: [25, 28], share: 1 }],
    };
    const n = 600;
    const codes = { party: new Int32Array(n).fill(2), code: Int32Array.from({ length: n }, (_, r) => r % 3) };
    const rows = new Decoder(m).decode(codes, 3).rows;
    const party: Record<string, string> = { "1": "DEM", "2": "REP" };
    for (const r of rows) assert.equal(r[0], party[r[1]], r.join(","));
    // Rows beside code 1 or 2 keep it (a stand-in of that code); those beside 3 move to a released entry.
    assert.equal(rows.filter((r) => r[1] === "1").length >= n / 3, true);
  });

  test("fixed cells (a where condition's column, a seed cell) are never rewritten; the others move around them", () => {
    const m = meta(RULES);
    const c = col(m);
    const codes = randomCodes(m, 3000, 5);
    // A where condition on state = OR (code 2) in every row, and on destination = JFK.
    codes.state.fill(2);
    codes.destination.fill(2);
    const fixed = (_r: number, f: number) => f === c.state || f === c.destination;
    const rows = new Decoder(m).decode(codes, 13, { fixed }).rows;
    for (const r of rows) {
      assert.equal(r[c.state], "OR");
      assert.equal(r[c.destination], "JFK");
      assert.ok(r[c.city] === "Springfield" || r[c.city] === "Salem", r[c.city]);
      assert.notEqual(r[c.origin], "JFK");
    }
    // A seed row that itself breaks a rule is left as the user gave it.
    const d = new Decoder(m);
    const table = d.decode(randomCodes(m, 1, 6), 1, { rules: false });
    table.rows[0][c.city] = "Austin";
    table.rows[0][c.state] = "OR";
    const res = d.enforce(table, 1, (_r, f) => f === c.city || f === c.state);
    assert.equal(table.rows[0][c.city], "Austin");
    assert.equal(table.rows[0][c.state], "OR");
    assert.ok(res.unrepaired >= 1);
  });

  test("a strict inequality and numbers written with fixed decimals", () => {
    const m = meta([{ type: "inequality", high: "a", low: "b", strict: true, share: 1 }]);
    const rows = new Decoder(m).decode(randomCodes(m, 3000, 8), 3).rows;
    const c = col(m);
    for (const r of rows) assert.ok(Number(r[c.a]) > Number(r[c.b]), `${r[c.a]} <= ${r[c.b]}`);
    const sumMeta = meta([{ type: "sum", total: "c", parts: ["a", "b"], share: 1 }]);
    sumMeta.column_stats!.c = { ...sumMeta.column_stats!.c, fixed_decimals: true };
    const sums = new Decoder(sumMeta).decode(randomCodes(sumMeta, 500, 9), 3).rows;
    for (const r of sums) assert.match(r[c.c], /^\d+\.\d$/);
  });
});

/** Metadata of numerical columns `names`, each with stats `num` and 4 equally likely codes. */
function numericMeta(names: string[], num: ColumnStats, rules: Rule[]): Metadata {
  return {
    features: names,
    cardinalities: Object.fromEntries(names.map((f) => [f, 4])),
    empirical_probs: Object.fromEntries(names.map((f) => [f, flat(4)])),
    column_stats: Object.fromEntries(names.map((f) => [f, { ...num }])),
    value_mappings: Object.fromEntries(names.map((f) => [f, {}])),
    rules,
  };
}

test("identities sharing columns (employment series: nonfarm = private + government = goods + services), given in any order, all hold", () => {
  // private = goods + private_services and services = private_services + government make the
  // two totals of nonfarm agree; written inner first, every identity holds in every row.
  const names = ["nonfarm", "private", "government", "goods", "services", "private_services"];
  const num = { type: "numerical" as const, count: 120, missing: 0, min: 0, max: 400000, bin_edges: [0, 100000, 200000, 300000, 400000], decimals: 0 };
  const sums: Rule[] = [
    { type: "sum", total: "nonfarm", parts: ["private", "government"], share: 1 },
    { type: "sum", total: "nonfarm", parts: ["goods", "services"], share: 1 },
    { type: "sum", total: "private", parts: ["goods", "private_services"], share: 1 },
    { type: "sum", total: "services", parts: ["private_services", "government"], share: 1 },
  ];
  for (const rules of [sums, [...sums].reverse(), [sums[1], sums[3], sums[0], sums[2]]]) {
    const m = numericMeta(names, num, rules);
    const rows = new Decoder(m).decode(randomCodes(m, 500, 11), 5).rows;
    const v = (r: string[], f: string) => Number(r[names.indexOf(f)]);
    for (const r of rows) {
      assert.equal(v(r, "nonfarm"), v(r, "private") + v(r, "government"), r.join(","));
      assert.equal(v(r, "nonfarm"), v(r, "goods") + v(r, "services"), r.join(","));
      assert.equal(v(r, "private"), v(r, "goods") + v(r, "private_services"), r.join(","));
      assert.equal(v(r, "services"), v(r, "private_services") + v(r, "government"), r.join(","));
    }
  }
});

test("several inequalities over prices (high >= open, close >= low) all hold in every row, each row keeping its own values", () => {
  // Rules in the order the SDK detects them: one pass of swaps breaks an earlier rule (a later
  // swap lowers high below open).
  const names = ["open", "high", "low", "close"];
  const num = { type: "numerical" as const, count: 500, missing: 0, min: 0, max: 40, bin_edges: [0, 10, 20, 30, 40], decimals: 2 };
  const rules: Rule[] = [
    { type: "inequality", high: "high", low: "open", strict: false, share: 1 },
    { type: "inequality", high: "open", low: "low", strict: false, share: 1 },
    { type: "inequality", high: "high", low: "low", strict: true, share: 1 },
    { type: "inequality", high: "high", low: "close", strict: false, share: 1 },
    { type: "inequality", high: "close", low: "low", strict: true, share: 1 },
  ];
  const m = numericMeta(names, num, rules);
  const codes = randomCodes(m, 2000, 13);
  const plain = new Decoder({ ...m, rules: [] }).decode(codes, 5).rows;
  const rows = new Decoder(m).decode(codes, 5).rows;
  const v = (r: string[], f: string) => Number(r[names.indexOf(f)]);
  const broken = rows.filter((r) => !(v(r, "high") >= v(r, "open") && v(r, "open") >= v(r, "low") && v(r, "high") >= v(r, "close") && v(r, "close") > v(r, "low")));
  assert.deepEqual(broken.slice(0, 3), [], `${broken.length} rows break a rule`);
  const sorted = (r: string[]) => r.map(Number).sort((a, b) => a - b).join(",");
  const same = rows.filter((r, i) => sorted(r) === sorted(plain[i])).length;
  assert.ok(same > 0.97 * rows.length, `${same} of ${rows.length} rows keep their own four values (swaps, not redraws)`);
});

describe("a sum keeps every value inside its real column's range", () => {
  // c = a + b with a, b in [0, 40] and c in [0, 50]: in a row such as a 30, b 30, c 10 neither the
  // total (60) nor a derived part (-20) fits; the row's parts are redrawn until one does.
  const ranged = (): Metadata => {
    const m = meta([{ type: "sum", total: "c", parts: ["a", "b"], share: 1 }]);
    m.column_stats!.c = { ...m.column_stats!.c, max: 50, bin_edges: [0, 10, 25, 40, 50] };
    return m;
  };
  const inRange = (m: Metadata, r: string[], f: string): boolean => {
    const s = m.column_stats![f];
    const x = Number(r[m.features.indexOf(f)]);
    return x >= s.min! && x <= s.max!;
  };

  test("random codes: c = a + b in every row, and a, b, c all within their real [min, max]", () => {
    const m = ranged();
    const codes = randomCodes(m, 3000, 12);
    const c = col(m);
    // The codes alone give rows where no single cell can be written in range.
    const loose = new Decoder(m).decode(codes, 4, { rules: false }).rows;
    const stuck = loose.filter((r) => {
      const [a, b, t] = [Number(r[c.a]), Number(r[c.b]), Number(r[c.c])];
      return a + b > 50 && t - a < 0 && t - b < 0;
    }).length;
    assert.ok(stuck > 50, `rows where no cell fits: ${stuck}`);
    const rows = new Decoder(m).decode(codes, 4).rows;
    for (const r of rows) {
      assert.equal(Math.round(Number(r[c.c]) * 10), Math.round(Number(r[c.a]) * 10) + Math.round(Number(r[c.b]) * 10), r.join(","));
      for (const f of ["a", "b", "c"]) assert.ok(inRange(m, r, f), `${f} out of range: ${r.join(",")}`);
    }
  });

  test("a fixed total: the parts are redrawn so the derived one fits, and the total is never rewritten", () => {
    const m = ranged();
    const n = 500;
    const codes = randomCodes(m, n, 13);
    const c = col(m);
    // Totals in [25, 40] (bin 2), fixed: a part drawn above the total would derive the other below 0.
    const total = new Uint8Array(n).fill(2);
    const rows = new Decoder(m).decode({ ...codes, c: total }, 5, { fixed: (_r, f) => f === c.c }).rows;
    const plain = new Decoder(m).decode({ ...codes, c: total }, 5, { rules: false }).rows;
    assert.ok(plain.filter((r) => Number(r[c.a]) > Number(r[c.c]) && Number(r[c.b]) > Number(r[c.c])).length > 20);
    rows.forEach((r, i) => {
      assert.equal(r[c.c], plain[i][c.c], "the fixed total is kept");
      assert.equal(Math.round(Number(r[c.c]) * 10), Math.round(Number(r[c.a]) * 10) + Math.round(Number(r[c.b]) * 10), r.join(","));
      for (const f of ["a", "b"]) assert.ok(inRange(m, r, f), `${f} out of range: ${r.join(",")}`);
    });
  });

  test("an inequality beside a sum (durable_goods > construction, manufacturing = durable_goods + nondurable_goods) keeps both", () => {
    // a, b, d write numbers alike, so a broken a >= d would swap a and d, breaking c = a + b.
    const names = ["a", "b", "c", "d"];
    const num = (max: number) => ({ type: "numerical" as const, count: 100, missing: 0, min: 0, max, bin_edges: [0, max / 4, max / 2, (3 * max) / 4, max], decimals: 0 });
    const m: Metadata = {
      features: names,
      cardinalities: Object.fromEntries(names.map((f) => [f, 4])),
      empirical_probs: Object.fromEntries(names.map((f) => [f, flat(4)])),
      column_stats: { a: num(40), b: num(40), c: num(80), d: num(40) },
      value_mappings: Object.fromEntries(names.map((f) => [f, {}])),
      rules: [
        { type: "sum", total: "c", parts: ["a", "b"], share: 1 },
        { type: "inequality", high: "a", low: "d", strict: false, share: 1 },
      ],
    };
    const rows = new Decoder(m).decode(randomCodes(m, 2000, 15), 7).rows;
    for (const r of rows) {
      const [a, b, c, d] = r.map(Number);
      assert.equal(c, a + b, r.join(","));
      assert.ok(a >= d, r.join(","));
    }
  });

  test("an inequality beside an identity of one part (high >= close, adjclose = close): the row's values swapped, adjclose following close", () => {
    const names = ["high", "close", "adjclose"];
    const num = { type: "numerical" as const, count: 100, missing: 0, min: 0, max: 40, bin_edges: [0, 10, 20, 30, 40], decimals: 0 };
    const m: Metadata = {
      features: names,
      cardinalities: Object.fromEntries(names.map((f) => [f, 4])),
      empirical_probs: Object.fromEntries(names.map((f) => [f, flat(4)])),
      column_stats: { high: num, close: num, adjclose: num },
      value_mappings: Object.fromEntries(names.map((f) => [f, {}])),
      rules: [
        { type: "sum", total: "adjclose", parts: ["close"], share: 1 },
        { type: "inequality", high: "high", low: "close", strict: false, share: 1 },
      ],
    };
    const codes = randomCodes(m, 2000, 17);
    const rows = new Decoder(m).decode(codes, 7).rows;
    const plain = new Decoder(m).decode(codes, 7, { rules: false }).rows;
    let swapped = 0;
    rows.forEach((r, i) => {
      const [high, close, adjclose] = r.map(Number);
      assert.equal(adjclose, close, r.join(","));
      assert.ok(high >= close, r.join(","));
      // high and close are the two values the model drew in this row, in order: none redrawn.
      assert.deepEqual([r[0], r[1]].sort(), [plain[i][0], plain[i][1]].sort(), `${r.join(",")} from ${plain[i].join(",")}`);
      if (r[0] !== plain[i][0]) swapped++;
    });
    assert.ok(swapped > 300, `${swapped} rows swapped`);
  });

  test("a system of identities whose outer total has a narrow range keeps every identity and every range", () => {
    const names = ["nonfarm", "private", "government", "goods", "services", "private_services"];
    const num = (max: number) => ({ type: "numerical" as const, count: 120, missing: 0, min: 0, max, bin_edges: [0, max / 4, max / 2, (3 * max) / 4, max], decimals: 0 });
    const m: Metadata = {
      features: names,
      cardinalities: Object.fromEntries(names.map((f) => [f, 4])),
      empirical_probs: Object.fromEntries(names.map((f) => [f, flat(4)])),
      column_stats: { nonfarm: num(200000), private: num(150000), government: num(100000), goods: num(100000), services: num(150000), private_services: num(100000) },
      value_mappings: Object.fromEntries(names.map((f) => [f, {}])),
      rules: [
        { type: "sum", total: "nonfarm", parts: ["private", "government"], share: 1 },
        { type: "sum", total: "nonfarm", parts: ["goods", "services"], share: 1 },
        { type: "sum", total: "private", parts: ["goods", "private_services"], share: 1 },
        { type: "sum", total: "services", parts: ["private_services", "government"], share: 1 },
      ],
    };
    const rows = new Decoder(m).decode(randomCodes(m, 1000, 14), 6).rows;
    const v = (r: string[], f: string) => Number(r[names.indexOf(f)]);
    for (const r of rows) {
      assert.equal(v(r, "nonfarm"), v(r, "private") + v(r, "government"), r.join(","));
      assert.equal(v(r, "nonfarm"), v(r, "goods") + v(r, "services"), r.join(","));
      assert.equal(v(r, "private"), v(r, "goods") + v(r, "private_services"), r.join(","));
      assert.equal(v(r, "services"), v(r, "private_services") + v(r, "government"), r.join(","));
      for (const f of names) assert.ok(inRange(m, r, f), `${f} out of range: ${r.join(",")}`);
    }
  });
});

describe("repairs keep the combinations' real shares", () => {
  test("broken rows fill the combinations the model under-drew, not the frequent ones (quota)", () => {
    // Austin: 90% of the real rows, Dallas 10%. The model drew 800 rows of Austin and 200 of a
    // city the rule does not allow in Texas: repairing them by count would give Dallas ~2% of the
    // rows; by quota it gets its real 10%.
    const m: Metadata = {
      features: ["city", "state"],
      cardinalities: { city: 3, state: 1 },
      empirical_probs: { city: [0.9, 0.1, 0], state: [1] },
      column_stats: { city: { type: "categorical", count: 1000, missing: 0 }, state: { type: "categorical", count: 1000, missing: 0 } },
      value_mappings: { city: { Austin: 0, Dallas: 1, Springfield: 2 }, state: { TX: 0 } },
      rules: [{ type: "fixed_combinations", columns: ["city", "state"], combinations: [[0, 0], [1, 0]], counts: [900, 100], share: 1 }],
    };
    const n = 1000;
    const city = Uint8Array.from({ length: n }, (_, r) => (r < 800 ? 0 : 2));
    const rows = new Decoder(m).decode({ city, state: new Uint8Array(n) }, 7).rows;
    const dallas = rows.filter((row) => row[0] === "Dallas").length;
    assert.equal(rows.filter((row) => row[0] === "Springfield").length, 0);
    assert.ok(dallas >= 80 && dallas <= 120, `Dallas in ${dallas} rows of ${n}; real share 10%`);
  });
});

describe("the server checks metadata.rules", () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h.stop();
  });

  test("rules that fit the metadata are stored and given back by GET metadata", async () => {
    const body = validCreateBody();
    const rules: Rule[] = [
      { type: "fixed_combinations", columns: ["a", "b"], determinant: "a", combinations: [[0, 1], [1, 2]], counts: [5, 7], share: 0.99 },
      { type: "structural_zeros", columns: ["a", "b"], pairs: [[0, 2], [1, 0]], share: 1 },
      { type: "catalog", columns: ["a", "b"], key: "a", entries: [["x", "2.5"], ["y", ""]], counts: [4, 3], share: 0.9 },
      { type: "sum", total: "b", parts: ["a"], signs: [-1], constant: 3, share: 1 },
    ];
    const r = await call(h.url, "/v1/models", { key: h.keys.test, body: { ...body, metadata: { ...body.metadata, rules } } });
    assert.equal(r.status, 201, r.text);
    const md = await call(h.url, `/v1/models/${r.json.data.id}/metadata`, { key: h.keys.test });
    assert.equal(md.status, 200, md.text);
    assert.deepEqual(md.json.data.rules, rules);
  });

  const bad: [string, unknown, string][] = [
    ["unknown column", { type: "not_equal", columns: ["a", "zz"], share: 1 }, "body.metadata.rules[0].columns[1]"],
    ["repeated column", { type: "inequality", high: "a", low: "a", strict: false, share: 1 }, "body.metadata.rules[0].low"],
    ["code out of range", { type: "fixed_combinations", columns: ["a", "b"], combinations: [[0, 3]], counts: [2], share: 1 }, "body.metadata.rules[0].combinations[0][1]"],
    ["counts not matching", { type: "fixed_combinations", columns: ["a", "b"], combinations: [[0, 1]], counts: [2, 3], share: 1 }, "body.metadata.rules[0].counts"],
    ["determinant outside the columns", { type: "fixed_combinations", columns: ["a", "b"], determinant: "c", combinations: [[0, 1]], counts: [2], share: 1 }, "body.metadata.rules[0].determinant"],
    ["share above 1", { type: "blank_together", columns: ["a", "b"], share: 2 }, "body.metadata.rules[0].share"],
    ["structural-zero code out of range", { type: "structural_zeros", columns: ["a", "b"], pairs: [[0, 1], [1, 3]], share: 1 }, "body.metadata.rules[0].pairs[1][1]"],
    ["structural zeros without pairs", { type: "structural_zeros", columns: ["a", "b"], pairs: [], share: 1 }, "body.metadata.rules[0].pairs"],
    ["a catalog key that is not its first column", { type: "catalog", columns: ["a", "b"], key: "b", entries: [["x", "y"]], counts: [2], share: 1 }, "body.metadata.rules[0].key"],
    ["a catalog entry without a value per column", { type: "catalog", columns: ["a", "b"], key: "a", entries: [["x", "y"], ["z"]], counts: [2, 2], share: 1 }, "body.metadata.rules[0].entries[1]"],
    ["catalog counts not matching", { type: "catalog", columns: ["a", "b"], key: "a", entries: [["x", "y"]], counts: [2, 2], share: 1 }, "body.metadata.rules[0].counts"],
    ["a sign that is not +1 or -1", { type: "sum", total: "a", parts: ["b", "c"], signs: [1, 2], share: 1 }, "body.metadata.rules[0].signs[1]"],
    ["signs not one per part", { type: "sum", total: "a", parts: ["b"], signs: [1, -1], share: 1 }, "body.metadata.rules[0].signs"],
    ["a sum without parts", { type: "sum", total: "a", parts: [], share: 1 }, "body.metadata.rules[0].parts"],
  ];
  for (const [name, rule, param] of bad) {
    test(`a rule with ${name} is 400 parameter_invalid naming ${param}`, async () => {
      const body = validCreateBody();
      const r = await call(h.url, "/v1/models", { key: h.keys.test, body: { ...body, metadata: { ...body.metadata, rules: [rule] } } });
      assertError(r, "parameter_invalid", param);
    });
  }
});
