/**
 * The database sample's cheap paths give what the plain ones gave (docs/relational.md "Scale, the
 * sample's excess cut"): slots filled on numbered keys (`fillNumberedSlots`, lists in one typed
 * array) take the rows the string-keyed lists took; a grain decoder's shared writer
 * (`memoWriter`, `sharedWriter`) writes the texts its writer writes.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Rng } from "../src/sdk/generate/sfc32";
import { fillNumberedSlots, fillSlots, numberKeyStrings } from "../src/sdk/relational/generate";
import { memoWriter, numberWriter, sharedWriter } from "../src/sdk/columns/numerical-grain";

/** fillSlots as it was written before the numbered keys: arrays of rows per key string. */
function reference(rowKeys: readonly string[], parentKeys: readonly string[], slotParent: readonly number[], rng: Rng, avoid?: readonly number[]): Int32Array {
  const firstOf = (k: string): string => (k.includes("\u0000") ? k.slice(0, k.indexOf("\u0000")) : k);
  const iota = (n: number): Int32Array => Int32Array.from({ length: n }, (_, i) => i);
  const order = Array.from(rng.shuffle(iota(rowKeys.length)));
  const full = new Map<string, number[]>();
  const first = new Map<string, number[]>();
  for (const i of order) {
    (full.get(rowKeys[i]) ?? full.set(rowKeys[i], []).get(rowKeys[i])!).push(i);
    const f = firstOf(rowKeys[i]);
    (first.get(f) ?? first.set(f, []).get(f)!).push(i);
  }
  const taken = new Uint8Array(rowKeys.length);
  const take = (list: number[] | undefined, parent: number): number => {
    if (list === undefined) return -1;
    for (let k = list.length - 1, seen = 0; k >= 0 && seen <= 64; k--) {
      const i = list[k];
      const skip = taken[i] === 0 && avoid !== undefined && avoid[i] === parent;
      if (!skip) {
        list[k] = list[list.length - 1];
        list.pop();
        if (taken[i] === 0) {
          taken[i] = 1;
          return i;
        }
      } else seen++;
    }
    return -1;
  };
  const slotOrder = rng.shuffle(iota(slotParent.length));
  const chosen = new Int32Array(slotParent.length).fill(-1);
  for (const s of slotOrder) chosen[s] = take(full.get(parentKeys[slotParent[s]]), slotParent[s]);
  for (const s of slotOrder) if (chosen[s] < 0) chosen[s] = take(first.get(firstOf(parentKeys[slotParent[s]])), slotParent[s]);
  for (const s of slotOrder) if (chosen[s] < 0) chosen[s] = take(order, slotParent[s]);
  return chosen;
}

test("slots filled on numbered keys take the rows the string-keyed lists took: full key, then first column, then any row, never an avoided parent", () => {
  const rng = new Rng(7);
  for (let round = 0; round < 20; round++) {
    const rows = 50 + rng.int(400);
    const parents = 5 + rng.int(40);
    // Keys of two or three columns; a parent key no row has, rows of a first code no parent has.
    const key = (): string => [`s${rng.int(6)}`, `b${rng.int(4)}`, ...(round % 2 ? [`c${rng.int(3)}`] : [])].join("\u0000");
    const rowKeys = Array.from({ length: rows }, key);
    const parentKeys = Array.from({ length: parents }, (_, p) => (p === 0 ? "none\u0000x" : key()));
    const slotParent = Array.from({ length: Math.floor(rows * (0.5 + rng.next() * 0.7)) }, () => rng.int(parents));
    const avoid = round % 3 === 0 ? Array.from({ length: rows }, () => rng.int(parents)) : undefined;
    const seed = rng.int(1 << 30);
    const want = reference(rowKeys, parentKeys, slotParent, new Rng(seed), avoid);
    assert.deepEqual(fillSlots(rowKeys, parentKeys, slotParent, new Rng(seed), avoid !== undefined ? { avoid } : {}), want, `round ${round}`);
    const numbered = numberKeyStrings(rowKeys, parentKeys);
    assert.deepEqual(fillNumberedSlots(numbered, slotParent, new Rng(seed), avoid !== undefined ? { avoid } : {}), want);
    // A first column's id is shared by every full key holding it.
    for (let r = 0; r < rows; r++) assert.equal(numbered.rowFirst[r], numbered.rowFirst[rowKeys.findIndex((k) => k.split("\u0000")[0] === rowKeys[r].split("\u0000")[0])]);
  }
});

test("a memo writer writes its writer's texts, for repeated values, -0 and past what it keeps; a shared writer is one per key", () => {
  const plain = numberWriter(8, false, 0, 10);
  const memo = memoWriter(plain);
  const rng = new Rng(3);
  const lattice = Array.from({ length: 500 }, () => 25 + rng.int(2000) * 0.00390625 + rng.int(7) * 1e-8);
  for (let i = 0; i < 20_000; i++) {
    const x = lattice[rng.int(lattice.length)];
    assert.equal(memo(x), plain(x));
  }
  assert.equal(memo(-0), plain(0));
  assert.equal(memo(0), "0");
  // Past 2^17 distinct values, new values are still written (not kept).
  for (let k = 0; k < (1 << 17) + 50; k++) assert.equal(memo(k / 8), plain(k / 8));
  assert.equal(memo(123456.125), plain(123456.125));
  let made = 0;
  const make = (): ((x: number) => string) => {
    made++;
    return (x) => `v${x}`;
  };
  const a = sharedWriter("test\u0000relational-keys", make);
  const b = sharedWriter("test\u0000relational-keys", make);
  assert.equal(a, b);
  assert.equal(made, 1);
  assert.equal(a(2), "v2");
});
