/**
 * The request draws in the native core (native/src/draws.{h,cc}, src/model/sampling/draws.ts) against the
 * TypeScript reference (xoshiro.ts `fillNormalZiggurat` / `uniform`, draws.ts `drawReference`): bit for
 * bit, for several seeds and sizes (1, odd, block edges, large), with and without privacy noise,
 * given or drawn latents; the same on every ISA path (children with SYNTHD_ISA lowered), for any
 * pool size (SYNTHD_THREADS) and without the addon (SYNTHD_DISABLE_NATIVE=1). Requires the addon to be built (`node native/build.js`).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { resolve } from "node:path";
import { DRAW_BLOCK_ROWS, drawNative, drawReference, nativeFillDraws, type DrawSpec } from "../src/model/sampling/draws";
import { drawInputs } from "../src/model/sampling/inputs";
import { computeStatus, nativeAddon } from "../src/model/compute/native";
import { fillNormalZiggurat, Rng, zigguratTables } from "../src/model/sampling/xoshiro";

interface DrawExports {
  zigguratTables(): { kn: Float64Array; wn: Float64Array; fn: Float64Array; r: number };
  log(x: Float64Array): Float64Array;
}

function addon(): DrawExports {
  const mod = nativeAddon() as unknown as Partial<DrawExports> | undefined;
  assert.ok(mod, `native core did not load: ${computeStatus().reason}`);
  assert.equal(typeof mod.log, "function", "stale addon: rerun `node native/build.js`");
  assert.ok(nativeFillDraws(), "stale addon: no fillDraws");
  return mod as DrawExports;
}

/** The bytes of a typed array (a view's own range). */
function bytes(a: Float32Array | Float64Array | Uint32Array): Buffer {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength);
}

/** The first index where a and b differ bit for bit, or -1. */
function firstDifference(a: Float32Array | Float64Array, b: Float32Array | Float64Array): number {
  const x = bytes(a);
  const y = bytes(b);
  if (x.equals(y)) return -1;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return i;
  return a.length;
}

function spec(seed: number, n: number, E: number, F: number, sigma: number, drawLatents = true): DrawSpec {
  const latents = new Float32Array(n * E);
  if (!drawLatents) for (let i = 0; i < latents.length; i++) latents[i] = Math.fround(Math.sin(i) * 2);
  return { seed, rows: n, latents, drawLatents, sigma, uniforms: new Float64Array(n * F) };
}

test("native log is bit-identical to Math.log (random bit patterns, (0, 1], subnormals, specials)", () => {
  const { log } = addon();
  const n = 400_000;
  const x = new Float64Array(n + 16);
  const words = new Uint32Array(x.buffer);
  const rng = Rng.fromSeed(99);
  for (let i = 0; i < n; i++) {
    if (i % 4 === 0) {
      words[2 * i] = rng.nextUint32();
      words[2 * i + 1] = rng.nextUint32(); // any bit pattern: negatives, NaN, Inf, subnormals
    } else if (i % 4 === 1) {
      x[i] = 1 - rng.uniform(); // the ziggurat's tail arguments
    } else if (i % 4 === 2) {
      x[i] = rng.uniform() * 2 ** -1030; // subnormal
    } else {
      x[i] = 1 + (rng.uniform() - 0.5) * 2 ** -18; // near 1: fdlibm's |f| < 2^-20 branch and its edges
    }
  }
  [0, -0, 1, -1, Infinity, -Infinity, NaN, Number.MIN_VALUE, Number.MAX_VALUE, 2, 0.5, Math.E, 1 + 2 ** -52, 1 - 2 ** -53, 1e-300, 1e300].forEach(
    (v, k) => (x[n + k] = v),
  );
  const y = log(x);
  let diffs = 0;
  let first = "";
  for (let i = 0; i < x.length; i++) {
    const ref = Math.log(x[i]);
    const same = Object.is(ref, y[i]) || (Number.isNaN(ref) && Number.isNaN(y[i]));
    if (!same && diffs++ === 0) first = `log(${x[i]}): native ${y[i]}, Math.log ${ref}`;
  }
  assert.equal(diffs, 0, first);
});

test("the native ziggurat tables equal xoshiro.ts's bit for bit", () => {
  const native = addon().zigguratTables();
  const ref = zigguratTables();
  assert.equal(firstDifference(native.kn, ref.kn), -1, "kn");
  assert.equal(firstDifference(native.wn, ref.wn), -1, "wn");
  assert.equal(firstDifference(native.fn, ref.fn), -1, "fn");
  assert.ok(Object.is(native.r, ref.r));
});

test("native draws equal the reference bit for bit: seeds, sizes (1, odd, large), noise, given latents", () => {
  addon();
  const cases: [seed: number, n: number, E: number, F: number, sigma: number, drawLatents: boolean][] = [
    [0, 1, 1, 1, 0, true],
    [1, 1, 64, 15, 0, true],
    [7, 3, 5, 3, 0, true],
    [-12345, 333, 7, 4, 0.8, true],
    [2 ** 53 - 1, 1001, 64, 14, 1.3, true],
    [42, 517, 16, 9, 0.25, false], // given latents: noise only
    [43, 1, 64, 14, 0, false], // given latents, no noise: uniforms only
    [2024, 100_001, 64, 14, 0, true], // large: 6.4M normals in 49 blocks, tail and wedge steps included
    [2025, 20_001, 64, 14, 0.5, true],
    [9, DRAW_BLOCK_ROWS, 3, 2, 0.1, true], // exactly one block
    [10, DRAW_BLOCK_ROWS + 1, 3, 2, 0, true], // a second block of one row
    [11, 3 * DRAW_BLOCK_ROWS, 2, 0, 0, true], // no uniforms (F = 0)
    [12, 4099, 0, 5, 0.3, true], // no latents (E = 0): uniforms only
  ];
  for (const [seed, n, E, F, sigma, drawLatents] of cases) {
    const a = spec(seed, n, E, F, sigma, drawLatents);
    const b = spec(seed, n, E, F, sigma, drawLatents);
    drawReference(a);
    drawNative(b);
    const what = `seed ${seed}, n ${n}, E ${E}, F ${F}, sigma ${sigma}, drawLatents ${drawLatents}`;
    assert.equal(firstDifference(a.latents, b.latents), -1, `latents differ: ${what}`);
    assert.equal(firstDifference(a.uniforms, b.uniforms), -1, `uniforms differ: ${what}`);
  }
});

test("a large draw exercises the ziggurat's tail and wedge (so the bit-identity above covers them)", () => {
  const a = spec(2024, 100_001, 64, 0, 0);
  drawReference(a);
  // The tail: values beyond r (about 6e-4 of them).
  const { r } = zigguratTables();
  let tail = 0;
  for (const v of a.latents) if (Math.abs(v) > r) tail++;
  assert.ok(tail > 100, `only ${tail} tail values`);
  // The wedge and retries consume extra outputs: more than one 32-bit output per normal.
  const rng = Rng.fromSeed(2024);
  fillNormalZiggurat(rng, new Float32Array(DRAW_BLOCK_ROWS * 64));
  const ones = Rng.fromSeed(2024);
  for (let i = 0; i < DRAW_BLOCK_ROWS * 64; i++) ones.nextUint32();
  assert.notDeepEqual(rng.state(), ones.state(), "every normal took exactly one output: no wedge or tail step ran");
});

test("blocks: block b is the seed's stream jumped b times (xoshiro.ts jump, the xoshiro128** reference's)", () => {
  // jump() moves the state (the constants are checked against the authors' C code by reading, not by a known answer).
  const rng = Rng.fromState([1, 2, 3, 4]);
  const before = Rng.fromState([1, 2, 3, 4]);
  rng.jump();
  assert.notDeepEqual(rng.state(), before.state());
  // The second block's first latent is the jumped stream's first ziggurat normal.
  const s = spec(77, DRAW_BLOCK_ROWS + 1, 4, 1, 0);
  drawReference(s);
  const second = Rng.fromSeed(77);
  second.jump();
  const first = fillNormalZiggurat(second, new Float32Array(4));
  assert.deepEqual([...s.latents.subarray(DRAW_BLOCK_ROWS * 4)], [...first]);
  assert.ok(Object.is(s.uniforms[DRAW_BLOCK_ROWS], second.uniform()));
});

test("drawInputs (native when loaded) gives the reference's draws; moments of the latents are standard normal", () => {
  addon();
  const E = 64;
  const F = 14;
  const got = drawInputs({ numRows: 5000, seed: 17 }, E, F, 0.6);
  const ref = spec(17, 5000, E, F, 0.6);
  drawReference(ref);
  assert.equal(got.seed, 17);
  assert.equal(got.n, 5000);
  assert.equal(firstDifference(got.latents, ref.latents), -1);
  assert.equal(firstDifference(got.uniforms, ref.uniforms), -1);
  // Without noise: mean ~0, variance ~1 (320,000 values: standard errors 0.0018 and 0.0025).
  const plain = drawInputs({ numRows: 5000, seed: 18 }, E, F, 0).latents;
  let s = 0;
  let s2 = 0;
  for (const v of plain) {
    s += v;
    s2 += v * v;
  }
  const mean = s / plain.length;
  assert.ok(Math.abs(mean) < 0.01, `mean ${mean}`);
  assert.ok(Math.abs(s2 / plain.length - mean * mean - 1) < 0.015, `variance ${s2 / plain.length}`);
  for (const u of got.uniforms) assert.ok(u >= 0 && u < 1);
});

test("native draws refuse bad arguments without writing", () => {
  const fill = nativeFillDraws();
  assert.ok(fill);
  const lat = new Float32Array(4);
  const uni = new Float64Array(2);
  const st = () => new Uint32Array([1, 2, 3, 4]);
  assert.throws(() => fill(new Uint32Array(3), 2, lat, true, 0, uni, 8), RangeError);
  assert.throws(() => fill(new Uint32Array(4), 2, lat, true, 0, uni, 8), /all zero/);
  assert.throws(() => fill(st(), 2, lat, true, -1, uni, 8), RangeError);
  assert.throws(() => fill(st(), 2, lat, true, NaN, uni, 8), RangeError);
  assert.throws(() => fill(st(), 0, lat, true, 0, uni, 8), /rows must be a positive integer/);
  assert.throws(() => fill(st(), 3, lat, true, 0, uni, 8), /not a multiple of rows/);
  assert.throws(() => fill(st(), 2, lat, true, 0, uni, 0), /blockRows/);
  assert.throws(() => fill(st(), 2, new Float64Array(4) as unknown as Float32Array, true, 0, uni, 8), TypeError);
  assert.throws(() => fill(st(), 2, lat, 1 as unknown as boolean, 0, uni, 8), TypeError);
  assert.deepEqual([...lat, ...uni], [0, 0, 0, 0, 0, 0]);
  assert.throws(() => drawNative(spec(1, 1, 2, 1, Infinity)), RangeError);
  assert.throws(() => drawReference(spec(1, 1, 2, 1, -0.5)), RangeError);
  assert.throws(() => drawReference({ ...spec(1, 2, 2, 1, 0), rows: 3 }), RangeError);
});

/** sha256 of drawInputs' latents and uniforms for a few requests, in a child with `env`. */
function childDigest(env: Record<string, string>): { digest: string; native: boolean } {
  const code = `
    const { createHash } = require("node:crypto");
    const { drawInputs } = require(${JSON.stringify(resolve(__dirname, "../src/model/sampling/inputs"))});
    const { nativeFillDraws } = require(${JSON.stringify(resolve(__dirname, "../src/model/sampling/draws"))});
    const h = createHash("sha256");
    for (const [n, seed, sigma] of [[1, 3, 0], [10001, 5, 0], [999, 6, 1.1]]) {
      const d = drawInputs({ numRows: n, seed }, 64, 14, sigma);
      h.update(Buffer.from(d.latents.buffer)); h.update(Buffer.from(d.uniforms.buffer));
    }
    process.stdout.write(JSON.stringify({ digest: h.digest("hex"), native: nativeFillDraws() !== undefined }));
  `;
  const r = spawnSync(process.execPath, ["-e", code], { env: { ...process.env, ...env }, encoding: "utf8", timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as { digest: string; native: boolean };
}

test("the same draws on every ISA path, thread count and without the addon (children with SYNTHD_ISA / SYNTHD_THREADS / SYNTHD_DISABLE_NATIVE)", () => {
  addon();
  const h = createHash("sha256");
  for (const [n, seed, sigma] of [
    [1, 3, 0],
    [10001, 5, 0],
    [999, 6, 1.1],
  ]) {
    const s = spec(seed, n, 64, 14, sigma);
    drawReference(s);
    h.update(bytes(s.latents));
    h.update(bytes(s.uniforms));
  }
  const reference = h.digest("hex");
  const envs: Record<string, string>[] = [{ SYNTHD_ISA: "avx512" }, { SYNTHD_ISA: "avx2" }, { SYNTHD_ISA: "generic" }, { SYNTHD_THREADS: "1" }, { SYNTHD_THREADS: "3" }];
  for (const env of envs) {
    const got = childDigest(env);
    assert.ok(got.native, `${JSON.stringify(env)}: the child did not load the addon`);
    assert.equal(got.digest, reference, JSON.stringify(env));
  }
  const js = childDigest({ SYNTHD_DISABLE_NATIVE: "1" });
  assert.equal(js.native, false);
  assert.equal(js.digest, reference, "SYNTHD_DISABLE_NATIVE=1");
});
