/**
 * Identifier columns (`src/sdk/metadata/identifier.ts`): shape inference (per-position classes, prefix,
 * integer vs text), shape matching, and fresh values (distinct, matching the shape, length mix,
 * deterministic per key, away from real values).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { inferIdShape, matchesIdShape, type IdShape, type TextIdShape } from "../src/sdk/metadata/identifier";
import { IdGenerator } from "../src/sdk/generate/id-generator";
import { Rng } from "../src/sdk/generate/sfc32";

const ALNUM_UPPER = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const HEX = "0123456789abcdef";

/** `n` distinct random strings of `len` characters from `alphabet` (seeded), plus `extra` first. */
function randomCodes(n: number, len: number, alphabet: string, seed: number, extra: string[] = []): string[] {
  const rng = new Rng(seed);
  const out = new Set<string>(extra);
  while (out.size < n) {
    let s = "";
    for (let j = 0; j < len; j++) s += alphabet[rng.int(alphabet.length)];
    out.add(s);
  }
  return [...out];
}

const ones = (n: number): number[] => new Array<number>(n).fill(1);

/** 3,376 IATA/FAA-like codes (the size of the real list in the bug report). */
const IATA = randomCodes(3376, 3, ALNUM_UPPER, 1, ["00M", "00R", "ABQ", "JFK", "LAX", "0A9", "9Z0"]);

function textShape(s: IdShape): TextIdShape {
  assert.equal(s.kind, "text");
  return s as TextIdShape;
}

test("inference: IATA-like codes give text with '0-9A-Z' at every position", () => {
  const s = textShape(inferIdShape(IATA, ones(IATA.length)));
  assert.equal(s.prefix, "");
  assert.deepEqual(s.positions, ["0-9A-Z", "0-9A-Z", "0-9A-Z"]);
  assert.deepEqual(s.lengths, { "3": 3376 });
  const json = JSON.stringify(s);
  for (const v of ["00M", "ABQ", "JFK"]) assert.ok(!json.includes(v), `the shape holds no value (${v})`);
});

test("inference: 24-char lowercase hex ids give '0-9a-f' at every position", () => {
  const ids = randomCodes(2000, 24, HEX, 2, ["58fa3f0be4b0b7ea54524859"]);
  const s = textShape(inferIdShape(ids, ones(ids.length)));
  assert.equal(s.prefix, "");
  assert.deepEqual(s.positions, new Array(24).fill("0-9a-f"));
  assert.deepEqual(s.lengths, { "24": 2000 });
  // One letter past f anywhere makes the whole column alphanumeric, not hex.
  const s2 = textShape(inferIdShape([...ids, "58fa3f0be4b0b7ea5452485g"], ones(ids.length + 1)));
  assert.equal(s2.positions[0], "0-9a-z");
});

test("inference: constant prefix 'ORD-' detected, lengths counted in rows", () => {
  const rng = new Rng(3);
  const values = new Set<string>();
  while (values.size < 500) values.add("ORD-" + String(1 + rng.int(9)) + String(rng.int(10 ** (3 + rng.int(3)))).padStart(4, "0"));
  const vs = [...values];
  const counts = vs.map((_, k) => 1 + (k % 2));
  const s = textShape(inferIdShape(vs, counts));
  assert.equal(s.prefix, "ORD-");
  assert.ok(s.positions.every((p) => p === "0-9"), JSON.stringify(s.positions));
  const rows = Object.values(s.lengths).reduce((a, b) => a + b, 0);
  assert.equal(rows, counts.reduce((a, b) => a + b, 0));
  for (const k of Object.keys(s.lengths)) assert.ok(["5", "6", "7"].includes(k), k);
});

test("inference: the prefix never swallows a whole value", () => {
  const s = textShape(inferIdShape(["AX", "AXY", "AXZ"], [1, 1, 1]));
  assert.equal(s.prefix, "A");
  assert.deepEqual(s.lengths, { "1": 1, "2": 2 });
  assert.deepEqual(s.positions, ["A-Z", "A-Z"]);
  const one = textShape(inferIdShape(["XYZ"], [4]));
  assert.equal(one.prefix, "XY");
});

test("inference: '00501'-style values are text with '0-9'", () => {
  const zips = ["00501", "10001", "90210", "02134", "60614", "33101", "07030"];
  const s = textShape(inferIdShape(zips, ones(zips.length)));
  assert.equal(s.prefix, "");
  assert.deepEqual(s.positions, ["0-9", "0-9", "0-9", "0-9", "0-9"]);
});

test("inference: integers give the integer shape", () => {
  assert.deepEqual(inferIdShape(["100234", "7", "-12", "0", "100234"], [1, 2, 1, 1, 1]), {
    kind: "integer",
    min: -12,
    max: 100234,
    distinct: 4,
  });
  assert.equal(inferIdShape(["1", "2", "3.5"], [1, 1, 1]).kind, "text");
  assert.equal(inferIdShape(["1", "9007199254740993"], [1, 1]).kind, "text", "unsafe integers are text");
});

test("inference: literals are listed after the ranges; errors", () => {
  const s = textShape(inferIdShape(["a b", "c-d", "e_f", "G.h"], [1, 1, 1, 1]));
  assert.deepEqual(s.positions, ["A-Za-z", " -._", "a-z"]);
  assert.throws(() => inferIdShape([], []), RangeError);
  assert.throws(() => inferIdShape(["a"], [1, 2]), RangeError);
  assert.throws(() => inferIdShape(["a", ""], [1, 1]), RangeError);
  assert.throws(() => inferIdShape(["a"], [-1]), RangeError);
});

test("matchesIdShape accepts the column's own values and rejects others", () => {
  const ord: IdShape = { kind: "text", prefix: "ORD-", lengths: { "4": 10, "5": 2 }, positions: ["0-9", "0-9A-Z", "0-9", "0-9", "a-z -"] };
  assert.ok(matchesIdShape(ord, "ORD-1234"));
  assert.ok(matchesIdShape(ord, "ORD-1Z34 "));
  assert.ok(matchesIdShape(ord, "ORD-1Z34-"));
  assert.ok(!matchesIdShape(ord, "ORD-123"), "wrong length");
  assert.ok(!matchesIdShape(ord, "ORD-123456"), "wrong length");
  assert.ok(!matchesIdShape(ord, "ORD-A234"), "wrong character");
  assert.ok(!matchesIdShape(ord, "ORD-1z34"), "wrong case");
  assert.ok(!matchesIdShape(ord, "ORD-1234_"), "character not listed");
  assert.ok(!matchesIdShape(ord, "1234"), "missing prefix");
  assert.ok(!matchesIdShape(ord, "ORX-1234"), "missing prefix");
  const int: IdShape = { kind: "integer", min: 1, max: 3376, distinct: 3376 };
  assert.ok(matchesIdShape(int, "5000"));
  assert.ok(matchesIdShape(int, "-3"));
  assert.ok(!matchesIdShape(int, "007"), "leading zero");
  assert.ok(!matchesIdShape(int, "1.5"));
  assert.ok(!matchesIdShape(int, ""));
  assert.ok(!matchesIdShape(int, "9007199254740993"), "not a safe integer");
  const iata = inferIdShape(IATA, ones(IATA.length));
  assert.ok(IATA.every((v) => matchesIdShape(iata, v)));
});

test("inference: a position of a few letters keeps them (FEC candidate ids: office H or S), not any capital; many letters stay a range", () => {
  // As political_contributions: office letter, cycle digit, state code, district, sequence.
  const rng = new Rng(4);
  const states = ["AL", "AZ", "CA", "CO", "FL", "GA", "NC", "NE", "NY", "PA", "TN", "TX", "VA", "WA"];
  const values = new Set<string>(["P20003711"]);
  while (values.size < 58) {
    const office = rng.next() < 0.78 ? "H" : "S";
    values.add(`${office}${rng.int(10)}${states[rng.int(states.length)]}${String(rng.int(100000)).padStart(5, "0")}`);
  }
  const vs = [...values];
  const s = textShape(inferIdShape(vs, ones(vs.length)));
  assert.equal(s.positions[0], "HS", "P, in 1 row of 58, is under the 5% a letter needs");
  assert.equal(s.positions[1], "0-9");
  assert.equal(s.positions[2], "A-Z", "14 states: more letters than a set");
  const g = new IdGenerator(s, 7);
  const out = generate(g, 500);
  assert.deepEqual(out.filter((v) => !/^[HS]\d[A-Z]{2}\d{5}$/.test(v)).slice(0, 5), []);
  // Too few rows per letter to tell a set from chance: the range.
  assert.equal(textShape(inferIdShape(vs.slice(0, 12), ones(12))).positions[0], "A-Z");
});

/** Values 0..n-1 of a generator. */
function generate(g: IdGenerator, n: number, from = 0): string[] {
  const out: string[] = [];
  for (let i = from; i < from + n; i++) out.push(g.value(i));
  return out;
}

test("generator: 3-char [0-9A-Z] codes are distinct for 20,000 rows and match the shape", () => {
  const shape = inferIdShape(IATA, ones(IATA.length));
  const g = new IdGenerator(shape, 42);
  assert.equal(g.capacity(), 46656);
  const vs = generate(g, 20000);
  assert.equal(new Set(vs).size, vs.length, "distinct");
  for (const v of vs) assert.ok(matchesIdShape(shape, v), v);
  // The whole domain is a permutation: every code exactly once.
  const all = new Set(generate(g, 46656));
  assert.equal(all.size, 46656);
});

test("generator: share of IATA-like codes equal to a real one is about |real| / 46,656", () => {
  const real = new Set(IATA);
  const g = new IdGenerator(inferIdShape(IATA, ones(IATA.length)), 9);
  const vs = generate(g, 20000);
  const share = vs.filter((v) => real.has(v)).length / vs.length;
  const expected = real.size / 46656; // 0.0724
  assert.ok(share < 0.1, `share ${share}`);
  assert.ok(Math.abs(share - expected) < 0.01, `share ${share}, expected ${expected}`);
});

test("generator: 24-char hex ids are distinct, match the shape and are fresh", () => {
  const ids = randomCodes(3000, 24, HEX, 5);
  const shape = inferIdShape(ids, ones(ids.length));
  const g = new IdGenerator(shape, 1234);
  assert.ok(g.capacity() >= 2 ** 95);
  const vs = generate(g, 20000);
  assert.equal(new Set(vs).size, vs.length, "distinct");
  for (const v of vs) assert.match(v, /^[0-9a-f]{24}$/);
  for (const v of vs) assert.ok(matchesIdShape(shape, v));
  const real = new Set(ids);
  assert.ok(!vs.some((v) => real.has(v)), "no real id");
  // Large indices (a sample's later batches) work too, and stay distinct.
  const late = generate(g, 1000, 2 ** 50);
  assert.equal(new Set([...vs, ...late]).size, 21000);
});

test("generator: UUID-like shape (domain above 2^104, fixed dashes) is distinct and matches", () => {
  const rng = new Rng(8);
  const uuids: string[] = [];
  for (let k = 0; k < 500; k++) {
    let h = "";
    for (let j = 0; j < 32; j++) h += HEX[rng.int(16)];
    uuids.push(`${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`);
  }
  const shape = textShape(inferIdShape(uuids, ones(uuids.length)));
  assert.equal(shape.positions[8], "-");
  const g = new IdGenerator(shape, 3);
  const vs = generate(g, 5000);
  assert.equal(new Set(vs).size, vs.length);
  for (const v of vs) assert.match(v, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
});

test("generator: the length mix follows `lengths`", () => {
  const shape: IdShape = {
    kind: "text",
    prefix: "X",
    lengths: { "8": 500, "21": 3000, "22": 1000 },
    positions: new Array(22).fill("0-9A-Z"),
  };
  const g = new IdGenerator(shape, 77);
  const n = 20000;
  const seen = new Map<number, number>();
  const vs = generate(g, n);
  for (const v of vs) seen.set(v.length - 1, (seen.get(v.length - 1) ?? 0) + 1);
  const total = 4500;
  for (const [len, rows] of [[8, 500], [21, 3000], [22, 1000]]) {
    const got = (seen.get(len) ?? 0) / n;
    assert.ok(Math.abs(got - rows / total) < 0.02, `length ${len}: ${got} vs ${rows / total}`);
  }
  assert.equal(seen.size, 3);
  assert.equal(new Set(vs).size, n);
  for (const v of vs) assert.ok(matchesIdShape(shape, v));
});

test("generator: a length whose domain is exhausted falls back to another length, staying distinct", () => {
  const shape: IdShape = { kind: "text", prefix: "", lengths: { "1": 50, "4": 50 }, positions: ["0-9", "0-9", "0-9", "0-9"] };
  const g = new IdGenerator(shape, 5);
  assert.equal(g.capacity(), 10000);
  const vs = generate(g, 10000);
  assert.equal(new Set(vs).size, 10000, "distinct up to capacity");
  // Only rows 0..9 can be 1-char (its domain holds 10 values); the other half of the rows that
  // drew length 1 fall back to length 4 instead of repeating or hitting a real 1-char value.
  const short = vs.map((v, i) => [v, i] as const).filter(([v]) => v.length === 1);
  assert.ok(short.length >= 1 && short.every(([, i]) => i < 10), JSON.stringify(short));
  assert.ok(vs.filter((v) => v.length === 4).length >= 9990);
  for (const v of vs) assert.ok(matchesIdShape(shape, v));
  // Past capacity it wraps: still valid, no longer distinct.
  const more = generate(g, 100, 10000);
  for (const v of more) assert.ok(matchesIdShape(shape, v));
  assert.ok(new Set([...vs, ...more]).size < 10100);
});

test("generator: deterministic for the same key, different for another key", () => {
  const shape = inferIdShape(IATA, ones(IATA.length));
  const a = generate(new IdGenerator(shape, 1), 2000);
  const b = generate(new IdGenerator(shape, 1), 2000);
  const c = generate(new IdGenerator(shape, 2), 2000);
  assert.deepEqual(a, b);
  const same = a.filter((v, i) => v === c[i]).length;
  assert.ok(same < 20, `${same} equal values under another key`);
  const hexShape: IdShape = { kind: "text", prefix: "", lengths: { "24": 1 }, positions: new Array(24).fill("0-9a-f") };
  assert.deepEqual(generate(new IdGenerator(hexShape, 3), 100), generate(new IdGenerator(hexShape, 3), 100));
  assert.notDeepEqual(generate(new IdGenerator(hexShape, 3), 100), generate(new IdGenerator(hexShape, 4), 100));
  // The shape survives JSON (it travels in the model's metadata) with the same values.
  const parsed = JSON.parse(JSON.stringify(shape)) as IdShape;
  assert.deepEqual(parsed, shape);
  assert.deepEqual(generate(new IdGenerator(parsed, 1), 2000), a);
});

test("generator: dense integer ids 1..3376 get fresh values above the range", () => {
  const real = Array.from({ length: 3376 }, (_, k) => String(k + 1));
  const shape = inferIdShape(real, ones(real.length));
  assert.deepEqual(shape, { kind: "integer", min: 1, max: 3376, distinct: 3376 });
  const g = new IdGenerator(shape, 11);
  const vs = generate(g, 20000);
  assert.equal(new Set(vs).size, vs.length, "distinct, also past one span");
  for (const v of vs) {
    assert.ok(matchesIdShape(shape, v), v);
    assert.ok(Number(v) > 3376, `${v} is not in [1, 3376]`);
  }
  // The first span's worth fills [3377, 6752] exactly, in shuffled order.
  const first = vs.slice(0, 3376).map(Number);
  assert.equal(Math.min(...first), 3377);
  assert.equal(Math.max(...first), 6752);
  assert.notDeepEqual(first.slice(0, 10), [3377, 3378, 3379, 3380, 3381, 3382, 3383, 3384, 3385, 3386]);
});

test("generator: sparse integer ids stay within [min, max]", () => {
  const rng = new Rng(12);
  const set = new Set<number>();
  while (set.size < 1000) set.add(1_000_000 + rng.int(999_000_000));
  const real = [...set].map(String);
  const shape = inferIdShape(real, ones(real.length));
  assert.equal(shape.kind, "integer");
  if (shape.kind !== "integer") return;
  const g = new IdGenerator(shape, 13);
  const vs = generate(g, 20000);
  assert.equal(new Set(vs).size, vs.length);
  for (const v of vs) {
    const x = Number(v);
    assert.ok(x >= shape.min && x <= shape.max, v);
    assert.ok(matchesIdShape(shape, v));
  }
  const hits = vs.filter((v) => set.has(Number(v))).length;
  assert.ok(hits < 5, `${hits} real values`);
});

test("generator: dense ids at the safe-integer limit are permuted within [min, max]", () => {
  const max = Number.MAX_SAFE_INTEGER;
  const shape: IdShape = { kind: "integer", min: max - 99, max, distinct: 100 };
  const g = new IdGenerator(shape, 1);
  const vs = generate(g, 100).map(BigInt);
  assert.equal(new Set(vs).size, 100);
  for (const v of vs) assert.ok(v >= BigInt(max - 99) && v <= BigInt(max));
  // A huge sparse span (above 2^53) uses the BigInt path.
  const wide: IdShape = { kind: "integer", min: -max, max, distinct: 10 };
  const w = generate(new IdGenerator(wide, 2), 1000);
  assert.equal(new Set(w).size, 1000);
  for (const v of w) assert.ok(matchesIdShape(wide, v) && Math.abs(Number(v)) <= max, v);
});

test("generator: malformed shapes and bad indices throw RangeError", () => {
  const bad: unknown[] = [
    { kind: "uuid" },
    { kind: "integer", min: 5, max: 1, distinct: 1 },
    { kind: "integer", min: 0.5, max: 1, distinct: 1 },
    { kind: "text", prefix: "", lengths: {}, positions: ["0-9"] },
    { kind: "text", prefix: "", lengths: { "2": 1 }, positions: ["0-9"] },
    { kind: "text", prefix: "", lengths: { "1": -1 }, positions: ["0-9"] },
    { kind: "text", prefix: "", lengths: { "1": 1 }, positions: [""] },
  ];
  for (const s of bad) assert.throws(() => new IdGenerator(s as IdShape, 1), RangeError, JSON.stringify(s));
  const g = new IdGenerator({ kind: "integer", min: 1, max: 10, distinct: 10 }, 1);
  assert.throws(() => g.value(-1), RangeError);
  assert.throws(() => g.value(1.5), RangeError);
  assert.throws(() => new IdGenerator({ kind: "integer", min: 1, max: 10, distinct: 10 }, NaN), RangeError);
});

test("a class or character held by fewer than 5% of the rows at a position is left out of the shape", () => {
  const values = Array.from({ length: 100 }, (_, i) => (i === 3 ? "ab/cd" : i < 10 ? `ab${i}cd` : `ab${String.fromCharCode(97 + (i % 26))}cd`));
  const shape = inferIdShape(values, values.map(() => 1)) as TextIdShape;
  assert.equal(shape.prefix, "ab");
  assert.equal(shape.positions[0], "0-9a-z", "digits: 9% of the rows, kept; '/': 1%, left out");
  const g = new IdGenerator(shape, 3);
  for (let i = 0; i < 200; i++) assert.ok(!g.value(i).includes("/"));
});
