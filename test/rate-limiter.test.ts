/**
 * The sliding window counter's arithmetic (src/server/limits/rateLimiter.ts), on a fake clock: exact
 * admission counts, the weighting of the previous window, and that the advertised next admission
 * time (Retry-After, X-RateLimit-Reset) is exact: admitted at it, refused a millisecond before.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { estimate, MemoryRateLimiter as RateLimiter, nextAdmissionMs, roll, WINDOW_MS } from "../src/server/limits/rateLimiter";

const W = 1_000_000; // a window index
const start = W * WINDOW_MS;

test("a fresh counter admits exactly `limit` requests in its window, then refuses", () => {
  for (const limit of [1, 2, 60, 1000]) {
    const l = new RateLimiter();
    let admitted = 0;
    for (let i = 0; i < limit * 3; i++) if (l.admit("k", limit, start + 30_000).admitted) admitted++;
    assert.equal(admitted, limit);
  }
});

test("roll: same window unchanged, next window shifts curr to prev, later windows are empty", () => {
  const c = { window: W, prev: 3, curr: 7 };
  assert.deepEqual(roll(c, W), c);
  assert.deepEqual(roll(c, W + 1), { window: W + 1, prev: 7, curr: 0 });
  assert.deepEqual(roll(c, W + 2), { window: W + 2, prev: 0, curr: 0 });
  assert.deepEqual(roll(undefined, W), { window: W, prev: 0, curr: 0 });
});

test("estimate weights the previous window by its overlap with the last 60 s", () => {
  const c = { window: W, prev: 40, curr: 5 };
  assert.equal(estimate(c, start), 45);
  assert.equal(estimate(c, start + 15_000), 35);
  assert.equal(estimate(c, start + 45_000), 15);
});

test("the next admission time is exact: refused 1 ms before it, admitted at it (random states)", () => {
  let seed = 42;
  const rand = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  for (let i = 0; i < 2000; i++) {
    const limit = 1 + rand(100);
    const c = { window: W, prev: rand(limit + 1), curr: rand(limit + 1) };
    const now = start + rand(WINDOW_MS);
    const t = nextAdmissionMs(c, limit, now);
    const at = (ms: number): boolean => estimate(roll(c, Math.floor(ms / WINDOW_MS)), ms) + 1 <= limit + 1e-9;
    assert.ok(t >= now);
    assert.ok(at(t), `admitted at t: ${JSON.stringify({ c, limit, now, t })}`);
    if (t > now) assert.ok(!at(t - 1), `refused just before t: ${JSON.stringify({ c, limit, now, t })}`);
  }
});

test("Retry-After and Reset: whole seconds, Retry-After >= 1, a client waiting Retry-After is admitted", () => {
  const l = new RateLimiter();
  const now = start + 30_000;
  for (let i = 0; i < 60; i++) l.admit("k", 60, now);
  const d = l.admit("k", 60, now);
  assert.equal(d.admitted, false);
  assert.equal(d.remaining, 0);
  assert.equal(d.retryAfter, 31);
  assert.equal(d.reset, (now + 31_000) / 1000);
  assert.equal(l.admit("k", 60, now + 31_000).admitted, true);
  const ok = new RateLimiter().admit("j", 60, now + 123);
  assert.equal(ok.remaining, 59);
  assert.equal(ok.reset, (start + WINDOW_MS) / 1000, "with budget left, Reset is the end of the window");
});

test("refund takes back a count in the same window only; sweep forgets idle counters", () => {
  const l = new RateLimiter();
  const d = l.admit("a", 5, start);
  l.refund("a", d.counter.window);
  assert.equal(l.get("a")!.curr, 0);
  l.admit("a", 5, start);
  l.refund("a", W - 1);
  assert.equal(l.get("a")!.curr, 1);
  l.sweep(start + 2 * WINDOW_MS);
  assert.equal(l.get("a"), undefined);
});

test("counters given to the constructor (loaded from the store) carry on", () => {
  const l = new RateLimiter([["org:x", { window: W, prev: 0, curr: 58 }]]);
  assert.equal(l.admit("org:x", 60, start + 1).admitted, true);
  assert.equal(l.admit("org:x", 60, start + 2).admitted, true);
  assert.equal(l.admit("org:x", 60, start + 3).admitted, false);
});
