/**
 * The compute core's twins of the SDK's per-row loops (`src/sdk/native-loops.ts`): the lattice
 * decode of integer columns and the Int64 halves of the Arrow writer give, on random inputs, the
 * values of their TypeScript references bit for bit, continue the same random stream, and reject
 * bad arguments with TypeError or RangeError. (The CSV row loop's twin: test/sdk-batch.test.ts.)
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { nativeLoops } from "../src/sdk/native-loops";
import { latticeValues } from "../src/sdk/columns/bins";
import { int64Halves } from "../src/sdk/io/typed";
import { Rng } from "../src/sdk/generate/sfc32";
import { mulberry32 } from "./fixtures";

test("latticeValues: the native loop draws the reference's values, blanks and statuses from the same stream, and leaves the stream where the reference does", () => {
  const native = nativeLoops().latticeValues;
  assert.ok(native, "the addon exports latticeValues");
  const u = mulberry32(31);
  for (const [nb, unit, span] of [
    [12, 1, 40],
    [30, 5, 3],
    [7, 1000, 2 ** 40], // lattice indices far beyond 2^32
    [1, 1, 1],
  ] as const) {
    // Bins: some points (lo === hi), some with one lattice point (last NaN), the rest with a range.
    const edges = new Float64Array(nb + 1);
    for (let c = 1; c <= nb; c++) edges[c] = edges[c - 1] + (c % 4 === 0 ? 0 : 1 + Math.floor(u() * 10));
    const first = new Float64Array(nb);
    const last = new Float64Array(nb);
    for (let c = 0; c < nb; c++) {
      first[c] = Math.floor(u() * span);
      last[c] = c % 5 === 1 ? NaN : first[c] + Math.floor(u() * span);
    }
    const n = 5000;
    const missing = nb; // the code after the bins
    const codes = Int32Array.from({ length: n }, () => Math.floor(u() * (nb + 1)));
    for (const seed of [1, 99]) {
      const a = new Rng(seed);
      const b = new Rng(seed);
      const va = new Float64Array(n);
      const ba = new Uint8Array(n);
      const vb = new Float64Array(n);
      const bb = new Uint8Array(n);
      const expected = latticeValues(codes, missing, nb, edges, first, last, unit, a, va, ba);
      const state = new Int32Array(4);
      b.saveState(state);
      const got = native(codes, missing, nb, edges, first, last, unit, state, vb, bb);
      b.loadState(state);
      assert.equal(got, expected);
      assert.ok(expected > 0, "some rows are blank");
      assert.deepEqual(bb, ba);
      for (let r = 0; r < n; r++) if (ba[r] === 0) assert.ok(Object.is(vb[r], va[r]), `row ${r}: ${vb[r]} vs ${va[r]}`);
      assert.equal(b.next(), a.next(), "the stream goes on from the same place");
    }
    // Without a missing code, and with a code out of range at row 17.
    const bad = codes.map((c) => (c === missing ? 0 : c));
    bad[17] = nb + 3;
    const s = new Int32Array(4);
    new Rng(5).saveState(s);
    assert.equal(native(bad, undefined, nb, edges, first, last, unit, s, new Float64Array(n), new Uint8Array(n)), -18);
    assert.equal(latticeValues(bad, undefined, nb, edges, first, last, unit, new Rng(5), new Float64Array(n), new Uint8Array(n)), -18);
  }
});

test("int64Halves: the native loop writes the reference's halves, stops where it stops, and rejects bad arguments", () => {
  const native = nativeLoops().int64Halves;
  assert.ok(native, "the addon exports int64Halves");
  const u = mulberry32(8);
  const n = 4000;
  const specials = [0, -0, 1, -1, 2 ** 31, -(2 ** 31), 2 ** 32, -(2 ** 32) - 1, 2 ** 53 - 1, -(2 ** 53 - 1)];
  const values = Float64Array.from({ length: n }, (_, r) => (r < specials.length ? specials[r] : Math.floor((u() - 0.5) * 2 ** (1 + Math.floor(u() * 53)))));
  const blank = Uint8Array.from({ length: n }, (_, r) => (r % 9 === 4 ? 1 : 0));
  for (let r = 0; r < n; r++) if (blank[r] === 1) values[r] = NaN; // a blank row's value is not read
  for (const b of [blank, undefined]) {
    const v = b === undefined ? values.map((x) => (Number.isNaN(x) ? 3 : x)) : values;
    const ha = new Int32Array(2 * n);
    const hb = new Int32Array(2 * n).fill(7);
    assert.equal(int64Halves(v, b, ha), true);
    assert.equal(native(v, b, hb), true);
    assert.deepEqual(hb, ha);
    // As BigInt64: the numbers themselves.
    const big = new BigInt64Array(ha.buffer);
    for (let r = 0; r < n; r++) assert.equal(big[r], b?.[r] === 1 ? 0n : BigInt(v[r]), `row ${r}`);
  }
  const notSafe = Float64Array.of(5, -6, 2 ** 53, 7);
  const ha = new Int32Array(8);
  const hb = new Int32Array(8);
  assert.equal(int64Halves(notSafe, undefined, ha), false);
  assert.equal(native(notSafe, null, hb), false);
  assert.deepEqual(hb.subarray(0, 4), ha.subarray(0, 4), "the rows before it are written");
  assert.equal(native(Float64Array.of(0.5), undefined, new Int32Array(2)), false);
  assert.throws(() => native(Float64Array.of(1, 2), undefined, new Int32Array(3)), RangeError);
  assert.throws(() => native(Float64Array.of(1, 2), new Uint8Array(1), new Int32Array(4)), RangeError);
  assert.throws(() => native([1, 2] as unknown as Float64Array, undefined, new Int32Array(4)), TypeError);
  const lattice = nativeLoops().latticeValues!;
  const ok: Parameters<typeof lattice> = [Int32Array.of(0), undefined, 1, Float64Array.of(0, 1), Float64Array.of(0), Float64Array.of(1), 1, new Int32Array(4), new Float64Array(1), new Uint8Array(1)];
  assert.equal(lattice(...ok), 0);
  const bad = (i: number, v: unknown): unknown[] => ok.map((x, j) => (j === i ? v : x));
  const call = lattice as unknown as (...a: unknown[]) => number;
  assert.throws(() => call(...bad(3, Float64Array.of(0))), RangeError, "edges shorter than nb + 1");
  assert.throws(() => call(...bad(7, new Int32Array(3))), RangeError, "state of 3 words");
  assert.throws(() => call(...bad(8, new Float64Array(0))), RangeError, "values shorter than codes");
  assert.throws(() => call(...bad(0, [0])), TypeError, "codes not an Int32Array");
  assert.throws(() => call(...bad(2, -1)), RangeError, "a negative nb");
  assert.throws(() => call(...bad(1, 0.5)), RangeError, "a fractional missing code");
});
