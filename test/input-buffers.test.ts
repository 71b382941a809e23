/**
 * Reuse of generation input arrays (src/model/sampling/inputs.ts `drawInputs` / `releaseInputs`, issue
 * 13): a seed's draws are the same on a reused array as on a fresh one (every value is
 * overwritten, including where an earlier, longer request left other values); two requests in
 * flight never share an array; a client's own latents are never taken into the pool.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { drawInputs, releaseInputs } from "../src/model/sampling/inputs";

const E = 8;
const F = 5;

test("a reused array gives the seed's draws bit for bit, after a longer request left other values in it", () => {
  const fresh = drawInputs({ numRows: 300, seed: 42 }, E, F, 0);
  const wantLatents = Float32Array.from(fresh.latents);
  const wantUniforms = Float64Array.from(fresh.uniforms);
  const big = drawInputs({ numRows: 1000, seed: 7 }, E, F, 0.5);
  const bigLatents = big.latents;
  releaseInputs(big); // `fresh` is still in use: only the longer request's arrays are free
  const again = drawInputs({ numRows: 300, seed: 42 }, E, F, 0);
  assert.ok(again.latents.buffer === bigLatents.buffer, "the longer request's array is reused");
  assert.equal(again.latents.length, 300 * E);
  assert.equal(again.uniforms.length, 300 * F);
  assert.deepEqual(Array.from(again.latents), Array.from(wantLatents));
  assert.deepEqual(Array.from(again.uniforms), Array.from(wantUniforms));
  releaseInputs(again);
  releaseInputs(fresh);
});

test("two requests in flight get distinct arrays; a given array (the client's latents) is left alone", () => {
  const a = drawInputs({ numRows: 200, seed: 1 }, E, F, 0);
  const b = drawInputs({ numRows: 200, seed: 2 }, E, F, 0);
  assert.ok(a.latents.buffer !== b.latents.buffer && a.uniforms.buffer !== b.uniforms.buffer);
  releaseInputs(a);
  releaseInputs(b);
  const given = new Float32Array(50 * E).fill(0.25);
  const g = drawInputs({ latents: given }, E, F, 0);
  assert.equal(g.latents, given);
  releaseInputs(g);
  const next = drawInputs({ numRows: 50, seed: 3 }, E, F, 0);
  assert.ok(next.latents.buffer !== given.buffer, "the client's array was not pooled");
  assert.ok(given.every((v) => v === 0.25), "the client's latents were not overwritten");
  releaseInputs(next);
  releaseInputs(next); // a second give-back of the same inputs is ignored
  const x = drawInputs({ numRows: 50, seed: 4 }, E, F, 0);
  const y = drawInputs({ numRows: 50, seed: 5 }, E, F, 0);
  assert.ok(x.latents.buffer !== y.latents.buffer, "an array given back twice is not handed out twice");
});
