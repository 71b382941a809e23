/**
 * Fixed-combinations rules that share columns (src/sdk/rules/enforce.ts, `determinantOrder`): a
 * product decides its category and its buyer, the state decides the buyer too. Codes drawn
 * independently (a model that learned nothing) decode to rows that keep every link, with products
 * rarer than k written as released ones, never as the pooled text.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { FixedCombinationsRule } from "../src/contract";
import { determinantOrder } from "../src/sdk/rules/enforce";
import { analyzed, cells, decodeIndependent, table } from "./rules-fixtures";

const CATEGORIES = ["TOWEL", "PET_FOOD", "TIMER", "SHOES", "BOOK", "SOCKS", "COAT", "SNACK"];
const STATES = ["PA", "NJ", "OH", "TX", "CA"];

/** A made-up product name of two words, distinct per product. */
function productName(p: number): string {
  const [c, v] = ["bcdfghklmnprstvz", "aeiou"];
  let s = "";
  let x = p * 7919 + 13;
  for (let i = 0; i < 3; i++) {
    s += c[x % 16] + v[(x >> 4) % 5];
    x = Math.floor(x / 80) + p * 31;
  }
  return `${s[0].toUpperCase()}${s.slice(1)} ${p % 97}`;
}

/**
 * 1,200 purchases: 1,000 products bought once, 60 of them again (so most product names are rarer
 * than k and pooled); a product decides its category and its buyer, the state decides the buyer
 * (buyer 2 ships to three states).
 */
const purchases = () =>
  table(["product", "category", "state", "buyer"], 1200, (i, rng) => {
    const p = i < 1000 ? i : rng.int(60);
    const buyer = p % 3;
    return [productName(p), CATEGORIES[p % 8], STATES[buyer === 2 ? 2 + rng.int(3) : buyer], `R_${buyer}`];
  });

test("chained determinants (product -> category, product -> buyer, state -> buyer) hold in 100% of decoded rows, pooled products written as released ones, never __other__", async () => {
  const t = purchases();
  const meta = await analyzed(t);
  const fds = (meta.rules ?? []).filter((r): r is FixedCombinationsRule => r.type === "fixed_combinations").map((r) => `${r.determinant}->${r.columns.find((c) => c !== r.determinant)}`);
  for (const want of ["product->category", "product->buyer", "state->buyer"]) assert.ok(fds.includes(want), `${want} among ${fds.join(", ")}`);
  // A column no semantic kind fits (long product titles): its pooled cells are stand-ins.
  const stats = meta.column_stats!.product;
  assert.equal(stats.type, "categorical");
  delete stats.semantic;
  const real = new Map(cells(t, ["product", "category", "buyer"]).map(([p, ...rest]) => [p, rest.join("|")]));
  const buyerOf = new Map(cells(t, ["state", "buyer"]).map(([s, b]) => [s, b]));
  const out = decodeIndependent(meta, 3000);
  for (const [product, category, buyer, state] of cells(out, ["product", "category", "buyer", "state"])) {
    assert.ok(real.has(product), product);
    assert.equal(`${category}|${buyer}`, real.get(product), product);
    assert.equal(buyerOf.get(state), buyer, `${state} beside ${buyer}`);
  }
});

test("home -> division, away -> division and home != away all hold: the away team is redrawn within the division", async () => {
  // Divisions of three teams: a team redrawn within its division often meets itself.
  const teams = Array.from({ length: 12 }, (_, i) => `Team ${String.fromCharCode(65 + i)}`);
  const t = table(["home", "away", "division"], 3000, (_, rng) => {
    const d = rng.int(4);
    const h = d * 3 + rng.int(3);
    const a = d * 3 + ((h % 3) + 1 + rng.int(2)) % 3;
    return [teams[h], teams[a], `D${d + 1}`];
  });
  const meta = await analyzed(t);
  const ids = meta.rules!.map((r) => `${r.type}:${"columns" in r ? r.columns.join(",") : ""}`);
  for (const want of ["fixed_combinations:home,division", "fixed_combinations:away,division", "not_equal:home,away"]) assert.ok(ids.includes(want), `${want} among ${ids.join(", ")}`);
  // As on football's 116 teams: no (home, away) marginal for a repair's likelihood to see that a
  // team never plays itself, nor combinations of the pair (12 teams here release them).
  const rules = meta.rules!.filter((r) => !(r.type === "fixed_combinations" && r.determinant === undefined));
  const out = decodeIndependent({ ...meta, marginals: [], rules }, 3000);
  for (const [home, away, division] of cells(out, ["home", "away", "division"])) {
    assert.notEqual(home, away);
    assert.equal(`D${Math.floor(teams.indexOf(home) / 3) + 1}|D${Math.floor(teams.indexOf(away) / 3) + 1}`, `${division}|${division}`);
  }
});

test("origin != destination holds where each airport is a catalog with its coordinates: the destination is redrawn as a whole entry", async () => {
  const airports = ["DFW", "ORD", "MIA", "JFK", "LAX", "SJU"];
  const cities = ["Dallas", "Chicago", "Miami", "New York", "Los Angeles", "San Juan"];
  const lat = (a: number): string => (25 + a * 3.25).toFixed(4);
  // Most flights leave from the two hubs, so independent draws often pair a hub with itself.
  const t = table(["origin", "origin_lat", "destination", "destination_lat", "destination_city", "flights"], 1200, (_, rng) => {
    const o = rng.next() < 0.8 ? rng.int(2) : rng.int(6);
    const d = (o + 1 + rng.int(5)) % 6;
    return [airports[o], lat(o), airports[d], lat(d), cities[d], 40 + rng.int(500)];
  });
  const meta = await analyzed(t);
  const kinds = meta.rules!.map((r) => `${r.type}:${"columns" in r ? [...r.columns].sort().join(",") : ""}`);
  for (const want of ["catalog:destination,destination_city,destination_lat", "not_equal:destination,origin"]) assert.ok(kinds.includes(want), `${want} among ${kinds.join("; ")}`);
  const out = decodeIndependent(meta, 3000);
  const same = cells(out, ["origin", "destination"]).filter(([o, d]) => o === d);
  assert.deepEqual(same.slice(0, 3), [], `${same.length} of 3000 rows fly from an airport to itself`);
  for (const [d, dl] of cells(out, ["destination", "destination_lat"])) assert.equal(dl, lat(airports.indexOf(d)), `${d} at ${dl}`);
});

test("determinantOrder: a rule after those that decide its determinant; a shared decided column written first by the rule whose determinant is kept; sparse combinations last", () => {
  const fc = (det: string, other: string): FixedCombinationsRule => ({ type: "fixed_combinations", columns: [det, other], determinant: det, combinations: [], counts: [], share: 1 });
  const order = determinantOrder([fc("state", "buyer"), fc("title", "category"), fc("title", "buyer"), fc("code", "title")]).map((r) => r.columns.join(">"));
  assert.deepEqual(order, ["code>title", "title>category", "title>buyer", "state>buyer"]);
  // Sparse combinations (no determinant) after every rule with one: place -> tz, place -> net first.
  const sparse: FixedCombinationsRule = { type: "fixed_combinations", columns: ["tz", "net", "types"], combinations: [], counts: [], share: 1 };
  assert.deepEqual(determinantOrder([fc("place", "tz"), sparse, fc("place", "net")]).map((r) => r.columns.join(">")), ["place>tz", "place>net", "tz>net>types"]);
  // A cycle (one-to-one columns) keeps the given order.
  assert.deepEqual(determinantOrder([fc("a", "b"), fc("b", "a")]).map((r) => r.determinant), ["a", "b"]);
});
