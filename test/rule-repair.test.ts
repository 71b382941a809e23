/**
 * The calibration pool keeps the fixed-combination rules before raking (src/model/rule-repair.ts):
 * every row it judges ends on a released combination, rows holding a pooled code and the other
 * columns are left as drawn, the same pool and seed give the same repairs, and the repaired rows
 * fill the combinations in their real shares (quotas), not the frequent ones; the repair (cut into
 * small passes for V8 in issue 25) gives the repairs of its one-function reference bit for bit.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Metadata, PairMarginal } from "../src/contract";
import { poolRules, repairPool } from "../src/model/sampling/rule-repair";
import { Rng } from "../src/model/sampling/xoshiro";
import { repairPoolReference } from "./rule-repair-reference";
import { nativeExport } from "../src/model/compute/native";
import { nativeCoreStatus } from "../src/model/compute/native-core";

// city: 4 released values and the pooled code 4; state: 3 values; x: another column.
const META: Metadata = {
  features: ["city", "state", "x"],
  cardinalities: { city: 5, state: 3, x: 2 },
  empirical_probs: { city: [0.4, 0.1, 0.2, 0.2, 0.1], state: [0.5, 0.4, 0.1], x: [0.5, 0.5] },
  column_stats: {
    city: { type: "categorical", count: 100, missing: 0 },
    state: { type: "categorical", count: 100, missing: 0 },
    x: { type: "categorical", count: 100, missing: 0 },
  },
  value_mappings: { city: { A: 0, B: 1, C: 2, D: 3, __other__: 4 }, state: { S: 0, T: 1, U: 2 }, x: { p: 0, q: 1 } },
  rules: [
    {
      type: "fixed_combinations",
      columns: ["city", "state"],
      combinations: [[0, 0], [1, 0], [2, 1], [3, 2], [4, 1]],
      counts: [40, 10, 20, 20, 10],
      share: 1,
    },
  ],
};

const RELEASED = new Set(["0,0", "1,0", "2,1", "3,2", "4,1"]);

function randomPool(M: number, seed: number): Int32Array[] {
  const rng = Rng.fromSeed(seed);
  return META.features.map((f) => Int32Array.from({ length: M }, () => Math.floor(rng.uniform() * META.cardinalities[f])));
}

test("every judged row ends on a released combination; pooled rows and other columns stay as drawn", () => {
  const rules = poolRules(META, META.features);
  assert.equal(rules.length, 1);
  const pool = randomPool(4000, 1);
  const before = pool.map((c) => c.slice());
  const repaired = repairPool(pool, rules, 9);
  assert.ok(repaired > 1000, `repaired ${repaired}`);
  for (let i = 0; i < 4000; i++) {
    if (before[0][i] === 4) {
      assert.deepEqual([pool[0][i], pool[1][i]], [before[0][i], before[1][i]], "a pooled city is the SDK's to decode");
      continue;
    }
    assert.ok(RELEASED.has(`${pool[0][i]},${pool[1][i]}`), `row ${i}: ${pool[0][i]},${pool[1][i]}`);
    assert.ok(pool[0][i] === before[0][i] || pool[1][i] === before[1][i], "a repair keeps one of the row's cells");
  }
  assert.deepEqual(pool[2], before[2], "the other column is never rewritten");
});

test("same pool and seed, same repairs; another seed may differ", () => {
  const rules = poolRules(META, META.features);
  const a = randomPool(2000, 2);
  const b = randomPool(2000, 2);
  const c = randomPool(2000, 2);
  repairPool(a, rules, 5);
  repairPool(b, rules, 5);
  repairPool(c, rules, 6);
  assert.deepEqual(a, b);
  assert.notDeepEqual(a, c);
});

test("repairs fill the combinations in their real shares (quotas), not by count alone", () => {
  // 800 rows on (A, S), 200 broken rows (C, S): A and B share S; B is short of its 10% quota.
  const M = 1000;
  const pool = [Int32Array.from({ length: M }, (_, i) => (i < 800 ? 0 : 2)), new Int32Array(M), new Int32Array(M)];
  repairPool(pool, poolRules(META, META.features), 3);
  const count = (city: number, state: number) => pool[0].filter((c, i) => c === city && pool[1][i] === state).length;
  // Quotas over the 1,000 judged rows: A 400 (800 held already), B 100, C 200, D 200.
  // Candidates of (C, S): (A, S), (B, S) (keep S) and (C, T) (keep C).
  const b = count(1, 0);
  const c = count(2, 1);
  assert.equal(b + c + count(0, 0), M);
  assert.ok(b >= 60 && b <= 140, `B, S in ${b} rows (quota 100; by count alone about 200 x 10/70 = 29)`);
  assert.ok(c >= 60 && c <= 140, `C, T in ${c} rows`);
});

/** The released (a, b) combinations of {@link twoRuleMeta}: (5, 2) holds the pooled code of a, (0, 4) the blank code of b. */
const AB: number[][] = [[0, 0], [1, 0], [1, 1], [2, 2], [3, 3], [4, 1], [5, 2], [0, 4]];

/**
 * Metadata with two rules and pair marginals (so the candidates' likelihoods have factors): a
 * two-column rule over a (a pooled code 5) and b (a blank code 4), a three-column rule over c, x
 * and y; `wide` makes the three-column rule's key space pass the dense table's 2^20 keys (the
 * set-and-map path).
 */
function twoRuleMeta(wide: boolean): Metadata {
  const K: Record<string, number> = { a: 6, b: 5, c: 4, x: wide ? 300 : 3, y: wide ? 1000 : 7, z: 3 };
  const features = Object.keys(K);
  const rng = Rng.fromSeed(77);
  const probs = (n: number): number[] => {
    const p = Array.from({ length: n }, () => 0.05 + rng.uniform());
    const s = p.reduce((u, v) => u + v, 0);
    return p.map((v) => v / s);
  };
  const marginals: PairMarginal[] = [];
  for (let i = 0; i < features.length; i++) {
    for (let j = i + 1; j < features.length; j++) {
      if (K[features[i]] * K[features[j]] > 5000) continue;
      marginals.push({ features: [features[i], features[j]], probs: probs(K[features[i]] * K[features[j]]) });
    }
  }
  const cxy: number[][] = [];
  for (let t = 0; t < 12; t++) cxy.push([t % 4, (t * 7) % K.x, (t * 5) % K.y]);
  return {
    features,
    cardinalities: K,
    empirical_probs: Object.fromEntries(features.map((f) => [f, probs(K[f])])),
    value_mappings: { a: { __other__: 5 }, b: { "": 4 } },
    marginals,
    rules: [
      { type: "fixed_combinations", columns: ["a", "b"], combinations: AB, counts: AB.map((_, i) => 10 + 7 * i), share: 1 },
      { type: "fixed_combinations", columns: ["c", "x", "y"], combinations: cxy, counts: cxy.map((_, i) => 5 + 3 * i), share: 1 },
    ],
  } as Metadata;
}

test("the repair gives its reference's repairs bit for bit, scored in the native core and in TypeScript (two rules, likelihood factors, pooled and blank codes, dense and sparse keys)", () => {
  assert.ok(nativeExport("repairScores") !== undefined || !nativeCoreStatus().available, "an addon with the core has repairScores");
  for (const wide of [false, true]) {
    const meta = twoRuleMeta(wide);
    const rules = poolRules(meta, meta.features);
    assert.equal(rules.length, 2);
    assert.ok(rules.every((r) => r.conditionals.some((list) => list.length > 0)), "the candidates' scores have likelihood factors");
    for (const seed of [1, 2, 3]) {
      const rng = Rng.fromSeed(1000 + seed);
      const M = 6000;
      // Rows near the released combinations (a few codes changed) and fully random rows.
      const pool = meta.features.map((f) => Int32Array.from({ length: M }, () => Math.floor(rng.uniform() * meta.cardinalities[f])));
      for (let i = 0; i < M; i += 3) {
        const t = AB[i % AB.length];
        pool[0][i] = t[0];
        pool[1][i] = i % 6 === 0 ? (t[1] + 1) % 5 : t[1];
      }
      const b = pool.map((c) => c.slice());
      const nb = repairPoolReference(b, rules, seed);
      assert.ok(nb > 1000, `repaired ${nb}`);
      for (const native of [true, false]) {
        const a = pool.map((c) => c.slice());
        assert.equal(repairPool(a, rules, seed, { native }), nb);
        assert.deepEqual(a, b, `wide ${wide}, seed ${seed}, native ${native}`);
      }
    }
  }
});

test("a likelihood factor's code outside its code book is a RangeError on both paths; the native core checks its arguments", () => {
  const meta = twoRuleMeta(false);
  const rules = poolRules(meta, meta.features);
  const rng = Rng.fromSeed(5);
  const pool = meta.features.map((f) => Int32Array.from({ length: 500 }, () => Math.floor(rng.uniform() * meta.cardinalities[f])));
  pool[5][17] = 3; // z has 3 codes; rows break the rules, so their factors are read
  for (const native of [true, false]) {
    assert.throws(() => repairPool(pool.map((c) => c.slice()), rules, 1, { native }), { name: "RangeError", message: /holds code 3 at row 17, outside \[0, 3\)/ });
  }
  const scores = nativeExport<(...a: unknown[]) => unknown>("repairScores");
  if (!scores) return;
  const col = new Int32Array(4);
  // One rule column of 2 codes, one target (code 1); four rows of code 0, released but not a target.
  const ok: unknown[] = [[col], Int32Array.of(2), [new Uint8Array(2)], Int32Array.of(-1, 0), [Int32Array.of(0, 0, 1)], [Int32Array.of(0)], 1, [], new Int32Array(0), new Int32Array(0), new Float64Array(0), new Float64Array(1)];
  assert.equal((scores(...ok) as { judged: number; broken: Int32Array }).broken.length, 0);
  const bad = (i: number, v: unknown, err: RegExp, name = "RangeError") => {
    const args = [...ok];
    args[i] = v;
    assert.throws(() => scores(...args), { name, message: err });
  };
  bad(0, [new Float64Array(4)], /^columns\[0\] must be an Int32Array/, "TypeError");
  bad(1, Int32Array.of(0), /^radix\[0\] must be >= 1/);
  bad(2, [new Uint8Array(3)], /^open\[0\] must hold radix\[0\] flags/);
  bad(3, Int32Array.of(-2, 1), /^keyClass\[1\] must be -2, -1 or a target index/);
  bad(4, [Int32Array.of(0, 1, 0)], /^codeStart\[0\] must not decrease/);
  bad(5, [Int32Array.of(1)], /^codeList\[0\] must hold target indices/);
  bad(6, 0, /^targets must be an integer/);
  bad(11, new Float64Array(2), /^held must hold one count per target/);
});
