/**
 * The C++ compute core (native/) against the JavaScript reference (src/model/sampling.ts):
 * bit-identical exp, identical codes over many shapes / temperatures / top_p values / thread
 * counts, identical rejection of bad inputs, and the loader's fallbacks (SYNTHD_DISABLE_NATIVE,
 * SYNTHD_NATIVE_PATH) in child processes. Requires the addon to be built (`node native/build.js`).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Worker } from "node:worker_threads";
import { computePath, computeStatus, findPackageRoot, nativeAddon, type NativeAddon } from "../src/model/compute/native";
import { checkSampleArgs, sampleCodes, sampleCodesJs } from "../src/model/sampling/sampling";
import { mulberry32 as rng } from "./fixtures";

function normal(r: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
}

type LogitKind = "normal" | "ties" | "peaked" | "huge" | "equal" | "flat" | "underflow";
const KINDS: LogitKind[] = ["normal", "ties", "peaked", "huge", "equal", "flat", "underflow"];

function makeLogits(r: () => number, n: number, cards: readonly number[], kind: LogitKind): Float32Array {
  const D = cards.reduce((a, b) => a + b, 0);
  const out = new Float32Array(n * D);
  for (let row = 0; row < n; row++) {
    let off = row * D;
    for (const K of cards) {
      const peak = Math.floor(r() * K);
      for (let k = 0; k < K; k++) {
        let v: number;
        switch (kind) {
          case "normal": v = 2 * normal(r); break;
          case "ties": v = Math.floor(r() * 3); break; // many exactly equal logits
          case "peaked": v = k === peak ? 40 + normal(r) : normal(r); break;
          case "huge": v = 1e4 * normal(r); break; // most e_k underflow to 0
          case "equal": v = -3.5; break;
          case "flat": v = 1e-6 * normal(r); break;
          case "underflow": v = k === peak ? 0 : -700 - 50 * r(); break; // e_k subnormal or 0
        }
        out[off + k] = v;
      }
      off += K;
    }
  }
  return out;
}

function makeUniforms(r: () => number, count: number): Float64Array {
  const u = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    const pick = r();
    u[i] = pick < 0.03 ? 0 : pick < 0.06 ? 1 - 2 ** -53 : r();
  }
  return u;
}

function randomCards(r: () => number, F: number, D: number): number[] {
  // F cardinalities >= 1 summing to D.
  const cards = new Array<number>(F).fill(1);
  for (let i = F; i < D; i++) cards[Math.floor(r() * F)]++;
  return cards;
}

function loaded(): NativeAddon {
  const native = nativeAddon();
  assert.ok(native, `native core did not load: ${computeStatus().reason}`);
  return native;
}

test("the native compute core loads from the compiled location", () => {
  const status = computeStatus();
  assert.equal(computePath(), "native", `fell back: ${status.reason}`);
  assert.equal(status.path, "native");
  assert.equal(status.reason, undefined);
  assert.equal(status.version, "0.1.0");
  assert.ok(Number.isInteger(status.threads) && status.threads! >= 1 && status.threads! <= 8);
  const root = findPackageRoot(__dirname);
  assert.ok(root !== undefined);
  assert.equal(status.addonPath, join(root, "native", "build", "Release", "synthd_native.node"));
  assert.equal(findPackageRoot("/"), undefined);
});

/** Arguments for the exp checks: random bit patterns, the logit range, tiny magnitudes, specials. */
function expArguments(): Float64Array {
  const r = rng(7);
  const x = new Float64Array(400_003); // not a multiple of the vector width: the tail is covered
  const bits = new Uint32Array(x.buffer, 0, 2 * 100_000);
  for (let i = 0; i < bits.length; i++) bits[i] = Math.floor(r() * 2 ** 32); // random bit patterns
  for (let i = 100_000; i < 200_000; i++) x[i] = -760 * r();
  for (let i = 200_000; i < 300_000; i++) x[i] = (r() - 0.5) * 2 ** -Math.floor(r() * 60);
  for (let i = 300_000; i < x.length; i++) x[i] = Math.fround(4 * normal(r)) * (1 / 0.7) - Math.fround(9 * r());
  x.set([0, -0, 1, -1, Infinity, -Infinity, NaN, 709.78, 709.79, -745.13, -745.14, -708.4, 2 ** -28, -(2 ** -29)], 0);
  x.set([-700, 700, -700.0000001, 1, -1e-300], x.length - 5); // specials in the tail too
  return x;
}

/** The first argument where `y` differs from Math.exp (bit for bit), or "" when none does. */
function firstExpDifference(x: Float64Array, y: Float64Array): string {
  let diffs = 0;
  let first = "";
  for (let i = 0; i < x.length; i++) {
    if (!Object.is(y[i], Math.exp(x[i]))) {
      if (diffs++ === 0) first = `exp(${x[i]}): native ${y[i]}, Math.exp ${Math.exp(x[i])}`;
    }
  }
  return diffs === 0 ? "" : `${diffs} differences, first ${first}`;
}

test("native exp is bit-identical to Math.exp on every ISA path (AVX-512 eight lanes, SSE2 two lanes)", () => {
  const x = expArguments();
  assert.equal(firstExpDifference(x, loaded().exp(x)), "");
  // The other paths, in children with SYNTHD_ISA lowered (the choice is fixed per process).
  const dir = mkdtempSync(join(tmpdir(), "synthd-exp-"));
  try {
    writeFileSync(join(dir, "x.bin"), Buffer.from(x.buffer));
    const code = `
      const fs = require("node:fs");
      const b = fs.readFileSync(${JSON.stringify(join(dir, "x.bin"))});
      const x = new Float64Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
      const y = require(${JSON.stringify(resolve(__dirname, "../src/model/compute/native"))}).nativeAddon().exp(x);
      fs.writeFileSync(${JSON.stringify(join(dir, "y.bin"))}, Buffer.from(y.buffer));
    `;
    for (const isa of ["avx2", "generic"]) {
      const run = spawnSync(process.execPath, ["-e", code], { env: { ...process.env, SYNTHD_ISA: isa }, encoding: "utf8" });
      assert.equal(run.status, 0, run.stderr);
      const b = readFileSync(join(dir, "y.bin"));
      const y = new Float64Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
      assert.equal(firstExpDifference(x, y), "", `SYNTHD_ISA=${isa}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("native and JavaScript give identical codes across shapes, temperatures and top_p", () => {
  const native = loaded();
  const r = rng(2024);
  const cardSets: number[][] = [
    [1], [2], [1, 1, 1], [3, 5, 8], [32, 17, 2, 1, 9], [100], [300, 4], randomCards(r, 15, 250),
  ];
  const temps = [1, 0.5, 2, 0.05, 7.3];
  const topPs: (number | null)[] = [null, 1, 0.999, 0.9, 0.5, 0.3, 1e-9, 0];
  let combos = 0;
  let draws = 0;
  for (const cards of cardSets) {
    for (const kind of KINDS) {
      for (const temperature of temps) {
        for (const topP of topPs) {
          const n = 1 + Math.floor(r() * 40);
          const logits = makeLogits(r, n, cards, kind);
          const uniforms = makeUniforms(r, n * cards.length);
          const want = sampleCodesJs(logits, n, cards, uniforms, { temperature, topP });
          const got = native.sampleCodes(logits, n, cards, uniforms, temperature, topP);
          assert.deepEqual(got, want, `cards=${cards} kind=${kind} T=${temperature} topP=${topP} n=${n}`);
          combos++;
          draws += want.length;
        }
      }
    }
  }
  assert.equal(combos, 8 * KINDS.length * temps.length * topPs.length);
  assert.ok(draws > 10_000);
});

test("native codes do not depend on the thread count and match JavaScript at scale", () => {
  const native = loaded();
  const r = rng(99);
  const cards = randomCards(r, 15, 250);
  const n = 20_003; // not a multiple of any thread count
  for (const [kind, topP] of [["normal", null], ["normal", 0.9], ["ties", 0.5], ["peaked", 0.3]] as const) {
    const logits = makeLogits(r, n, cards, kind);
    const uniforms = makeUniforms(r, n * cards.length);
    const want = sampleCodesJs(logits, n, cards, uniforms, { temperature: 0.8, topP });
    for (const threads of [undefined, 0, 1, 2, 3, 8, 64, 1000]) {
      const got = native.sampleCodes(logits, n, Int32Array.from(cards), uniforms, 0.8, topP, threads);
      assert.deepEqual(got, want, `kind=${kind} topP=${topP} threads=${threads}`);
    }
  }
  // More threads than rows.
  const logits = makeLogits(r, 3, [4, 2], "normal");
  const uniforms = makeUniforms(r, 6);
  assert.deepEqual(
    native.sampleCodes(logits, 3, [4, 2], uniforms, 1, 0.7, 16),
    sampleCodesJs(logits, 3, [4, 2], uniforms, { temperature: 1, topP: 0.7 }),
  );
});

test("sampleCodes dispatches to the native core", () => {
  const native = loaded();
  const r = rng(5);
  const cards = [3, 7, 1, 12];
  const logits = makeLogits(r, 500, cards, "normal");
  const uniforms = makeUniforms(r, 500 * cards.length);
  const opts = { temperature: 0.9, topP: 0.8 };
  assert.deepEqual(
    sampleCodes(logits, 500, cards, uniforms, opts),
    native.sampleCodes(logits, 500, cards, uniforms, opts.temperature, opts.topP),
  );
  assert.deepEqual(sampleCodes(logits, 500, cards, uniforms, opts), sampleCodesJs(logits, 500, cards, uniforms, opts));
});

test("empty inputs give empty results", () => {
  const native = loaded();
  for (const cards of [[3, 2], [], new Int32Array(0)]) {
    const out = native.sampleCodes(new Float32Array(0), 0, cards, new Float64Array(0), 1, null);
    assert.ok(out instanceof Int32Array);
    assert.equal(out.length, 0);
  }
  const noFeatures = native.sampleCodes(new Float32Array(0), 5, [], new Float64Array(0), 1, 0.5);
  assert.equal(noFeatures.length, 0);
});

type Args = [unknown, unknown, unknown, unknown, unknown, unknown, unknown?];

// [description, native arguments, expected error name, expected message]
const f32 = (...v: number[]): Float32Array => Float32Array.from(v);
const f64 = (...v: number[]): Float64Array => Float64Array.from(v);
const OK: Args = [f32(0, 1, 2, 3, 4, 5), 2, [2, 1], f64(0.1, 0.2, 0.3, 0.4), 1, null];
const BAD: [string, Args, string, string][] = [
  ["logits as a plain array", [[0, 1, 2, 3, 4, 5], 2, [2, 1], OK[3], 1, null], "TypeError", "logits must be a Float32Array"],
  ["logits as a Float64Array", [f64(0, 1, 2, 3, 4, 5), 2, [2, 1], OK[3], 1, null], "TypeError", "logits must be a Float32Array"],
  ["logits missing", [undefined, 2, [2, 1], OK[3], 1, null], "TypeError", "logits must be a Float32Array"],
  ["n as a string", [OK[0], "2", [2, 1], OK[3], 1, null], "TypeError", "n must be a number"],
  ["n negative", [OK[0], -1, [2, 1], OK[3], 1, null], "RangeError", "n must be a non-negative integer, got -1"],
  ["n fractional", [OK[0], 1.5, [2, 1], OK[3], 1, null], "RangeError", "n must be a non-negative integer, got 1.5"],
  ["n NaN", [OK[0], NaN, [2, 1], OK[3], 1, null], "RangeError", "n must be a non-negative integer, got NaN"],
  ["n Infinity", [OK[0], Infinity, [2, 1], OK[3], 1, null], "RangeError", "n must be a non-negative integer, got Infinity"],
  ["cardinalities as a string", [OK[0], 2, "21", OK[3], 1, null], "TypeError", "cardinalities must be an Int32Array or an array of integers"],
  ["cardinalities as a Float64Array", [OK[0], 2, f64(2, 1), OK[3], 1, null], "TypeError", "cardinalities must be an Int32Array or an array of integers"],
  ["a cardinality as a string", [OK[0], 2, [2, "1"], OK[3], 1, null], "TypeError", "cardinalities[1] must be a number"],
  ["a cardinality of 0", [OK[0], 2, [2, 0], OK[3], 1, null], "RangeError", "cardinalities[1] must be an integer in [1, 2147483647], got 0"],
  ["a negative cardinality", [OK[0], 2, [-2, 1], OK[3], 1, null], "RangeError", "cardinalities[0] must be an integer in [1, 2147483647], got -2"],
  ["a fractional cardinality", [OK[0], 2, [2.5, 1], OK[3], 1, null], "RangeError", "cardinalities[0] must be an integer in [1, 2147483647], got 2.5"],
  ["a cardinality of 0 in an Int32Array", [OK[0], 2, Int32Array.from([2, 0]), OK[3], 1, null], "RangeError", "cardinalities[1] must be an integer in [1, 2147483647], got 0"],
  ["a cardinality of 2^31", [OK[0], 2, [2 ** 31], OK[3], 1, null], "RangeError", "cardinalities[0] must be an integer in [1, 2147483647], got 2147483648"],
  ["uniforms as a Float32Array", [OK[0], 2, [2, 1], Float32Array.from([0.1, 0.2, 0.3, 0.4]), 1, null], "TypeError", "uniforms must be a Float64Array"],
  ["temperature as a string", [OK[0], 2, [2, 1], OK[3], "1", null], "TypeError", "temperature must be a number"],
  ["temperature 0", [...OK.slice(0, 4), 0, null] as unknown as Args, "RangeError", "temperature must be finite and > 0, got 0"],
  ["temperature negative", [...OK.slice(0, 4), -1, null] as unknown as Args, "RangeError", "temperature must be finite and > 0, got -1"],
  ["temperature NaN", [...OK.slice(0, 4), NaN, null] as unknown as Args, "RangeError", "temperature must be finite and > 0, got NaN"],
  ["temperature Infinity", [...OK.slice(0, 4), Infinity, null] as unknown as Args, "RangeError", "temperature must be finite and > 0, got Infinity"],
  ["temperature subnormal", [...OK.slice(0, 4), 1e-320, null] as unknown as Args, "RangeError", "temperature 1e-320 is too small (1 / temperature is not finite)"],
  ["topP above 1", [...OK.slice(0, 5), 1.5] as unknown as Args, "RangeError", "topP must be in [0, 1] or null, got 1.5"],
  ["topP negative", [...OK.slice(0, 5), -0.1] as unknown as Args, "RangeError", "topP must be in [0, 1] or null, got -0.1"],
  ["topP NaN", [...OK.slice(0, 5), NaN] as unknown as Args, "RangeError", "topP must be in [0, 1] or null, got NaN"],
  ["topP as a string", [...OK.slice(0, 5), "0.9"] as unknown as Args, "TypeError", "topP must be a number or null"],
  ["logits too short", [f32(0, 1, 2, 3, 4), 2, [2, 1], OK[3], 1, null], "RangeError", "logits has 5 values, expected n*D = 6"],
  ["logits for another n", [OK[0], 3, [2, 1], OK[3], 1, null], "RangeError", "logits has 6 values, expected n*D = 9"],
  ["uniforms too long", [OK[0], 2, [2, 1], f64(0.1, 0.2, 0.3, 0.4, 0.5), 1, null], "RangeError", "uniforms has 5 values, expected n*F = 4"],
  ["n = 0 with values", [OK[0], 0, [2, 1], OK[3], 1, null], "RangeError", "logits has 6 values, expected n*D = 0"],
  ["a uniform of 1", [OK[0], 2, [2, 1], f64(0.1, 0.2, 1, 0.4), 1, null], "RangeError", "uniforms[2] = 1 is outside [0, 1)"],
  ["a negative uniform", [OK[0], 2, [2, 1], f64(-0.1, 0.2, 0.3, 0.4), 1, null], "RangeError", "uniforms[0] = -0.1 is outside [0, 1)"],
  ["a NaN uniform", [OK[0], 2, [2, 1], f64(0.1, 0.2, 0.3, NaN), 1, null], "RangeError", "uniforms[3] = NaN is outside [0, 1)"],
  ["a NaN logit", [f32(0, 1, 2, 3, NaN, 5), 2, [2, 1], OK[3], 1, null], "RangeError", "logits[4] = NaN is not finite (row 1, feature 0)"],
  ["an Infinity logit", [f32(0, 1, Infinity, 3, 4, 5), 2, [2, 1], OK[3], 1, 0.5], "RangeError", "logits[2] = Infinity is not finite (row 0, feature 1)"],
  ["a -Infinity logit", [f32(0, 1, 2, 3, 4, -Infinity), 2, [2, 1], OK[3], 1, null], "RangeError", "logits[5] = -Infinity is not finite (row 1, feature 1)"],
  ["logit / temperature overflow", [f32(0, 1, 2, 3, 3e38, NaN), 2, [2, 1], OK[3], 1e-300, null], "RangeError", `logits[4] / temperature overflows (logit ${Math.fround(3e38)}, temperature 1e-300)`],
];

test("bad inputs throw the same JS errors natively and in JavaScript, and the process survives", () => {
  const native = loaded();
  assert.deepEqual(native.sampleCodes(...(OK as Parameters<NativeAddon["sampleCodes"]>)), Int32Array.from([0, 1, 0, 0]));
  for (const [what, args, name, message] of BAD) {
    const call = args as Parameters<NativeAddon["sampleCodes"]>;
    assert.throws(() => native.sampleCodes(...call), { name, message }, `native: ${what}`);
    const [logits, n, cards, uniforms, temperature, topP] = call;
    assert.throws(
      () => checkSampleArgs(logits, n, cards, uniforms, { temperature, topP: topP as number | null }),
      { name, message },
      `checkSampleArgs: ${what}`,
    );
    assert.throws(() => sampleCodes(logits, n, cards, uniforms, { temperature, topP: topP as number | null }), { name, message });
  }
  // Native-only argument.
  const base = OK.slice(0, 6) as unknown[];
  const callWith = (threads: unknown): Int32Array =>
    (native.sampleCodes as (...a: unknown[]) => Int32Array)(...base, threads);
  assert.throws(() => callWith(-1), { name: "RangeError", message: "threads must be a non-negative integer, got -1" });
  assert.throws(() => callWith(1.5), { name: "RangeError", message: "threads must be a non-negative integer, got 1.5" });
  assert.throws(() => callWith("2"), { name: "TypeError", message: "threads must be a number" });
  assert.throws(() => (native.sampleCodes as () => unknown)(), { name: "TypeError", message: "logits must be a Float32Array" });
  assert.throws(() => (native.exp as (x: unknown) => unknown)([1]), { name: "TypeError", message: "x must be a Float64Array" });
  // Still alive and still correct.
  assert.deepEqual(native.sampleCodes(...(OK as Parameters<NativeAddon["sampleCodes"]>)), Int32Array.from([0, 1, 0, 0]));
});

const COMPILED_NATIVE = join(__dirname, "..", "src", "model", "compute", "native.js");
const COMPILED_SAMPLING = join(__dirname, "..", "src", "model", "sampling", "sampling.js");

/** Runs `script` in `node -e` with extra environment; returns stdout's JSON and stderr. */
function child(script: string, env: Record<string, string | undefined>): { out: any; stderr: string } {
  const merged: NodeJS.ProcessEnv = { ...process.env };
  delete merged.SYNTHD_DISABLE_NATIVE;
  delete merged.SYNTHD_NATIVE_PATH;
  delete merged.NODE_TEST_CONTEXT; // the child is a plain script, not a test file
  for (const [k, v] of Object.entries(env)) if (v !== undefined) merged[k] = v;
  const res = spawnSync(process.execPath, ["-e", script], { env: merged, encoding: "utf8", timeout: 60_000 });
  assert.equal(res.status, 0, `child failed: ${res.stderr}`);
  return { out: JSON.parse(res.stdout), stderr: res.stderr };
}

const CHILD_SCRIPT = `
const native = require(${JSON.stringify(COMPILED_NATIVE)});
const sampling = require(${JSON.stringify(COMPILED_SAMPLING)});
const logits = new Float32Array(80).map((_, i) => Math.sin(i * 1.7) * 3);
const uniforms = new Float64Array(30).map((_, i) => (i * 0.377) % 1);
const codes = sampling.sampleCodes(logits, 10, [2, 5, 1], uniforms, { temperature: 0.7, topP: 0.9 });
let error = null;
try { sampling.sampleCodes(logits, 10, [2, 5, 1], uniforms, { temperature: 0, topP: null }); }
catch (e) { error = e.name + ": " + e.message; }
native.computePath(); native.nativeAddon();
process.stdout.write(JSON.stringify({ path: native.computePath(), status: native.computeStatus(),
  codes: Array.from(codes), error }));
`;

function expectedChildCodes(): number[] {
  const logits = new Float32Array(80).map((_, i) => Math.sin(i * 1.7) * 3);
  const uniforms = new Float64Array(30).map((_, i) => (i * 0.377) % 1);
  return Array.from(loaded().sampleCodes(logits, 10, [2, 5, 1], uniforms, 0.7, 0.9));
}

const WARNING = /^synthd: native compute core unavailable \((.*)\); using the JavaScript fallback$/;

test("SYNTHD_DISABLE_NATIVE=1 gives the JavaScript path, same codes, one warning", () => {
  const { out, stderr } = child(CHILD_SCRIPT, { SYNTHD_DISABLE_NATIVE: "1" });
  assert.equal(out.path, "js");
  assert.equal(out.status.reason, "disabled by SYNTHD_DISABLE_NATIVE=1");
  assert.deepEqual(out.codes, expectedChildCodes());
  assert.equal(out.error, "RangeError: temperature must be finite and > 0, got 0");
  const lines = stderr.split("\n").filter((l) => l.length > 0);
  assert.equal(lines.length, 1, stderr);
  assert.match(lines[0], WARNING);
  assert.equal(WARNING.exec(lines[0])![1], "disabled by SYNTHD_DISABLE_NATIVE=1");
});

test("the child process loads the native path by default and via SYNTHD_NATIVE_PATH", () => {
  const plain = child(CHILD_SCRIPT, {});
  assert.equal(plain.out.path, "native", plain.out.status.reason);
  assert.equal(plain.stderr, "");
  assert.deepEqual(plain.out.codes, expectedChildCodes());
  const file = computeStatus().addonPath!;
  const viaEnv = child(CHILD_SCRIPT, { SYNTHD_NATIVE_PATH: file });
  assert.equal(viaEnv.out.path, "native");
  assert.equal(viaEnv.out.status.addonPath, resolve(file));
  assert.deepEqual(viaEnv.out.codes, expectedChildCodes());
});

test("a missing or unloadable addon falls back to JavaScript with the reason", () => {
  const missing = join(__dirname, "no-such-dir", "synthd_native.node");
  const a = child(CHILD_SCRIPT, { SYNTHD_NATIVE_PATH: missing });
  assert.equal(a.out.path, "js");
  assert.match(a.out.status.reason, /does not exist; build it with `node native\/build.js`/);
  assert.deepEqual(a.out.codes, expectedChildCodes());
  assert.match(a.stderr.trim(), WARNING);

  // A file that exists but is not a shared object.
  const dir = mkdtempSync(join(tmpdir(), "synthd-native-"));
  try {
    const notAddon = join(dir, "synthd_native.node");
    writeFileSync(notAddon, "not an ELF file\n");
    const b = child(CHILD_SCRIPT, { SYNTHD_NATIVE_PATH: notAddon });
    assert.equal(b.out.path, "js");
    assert.ok(b.out.status.reason.startsWith(`loading ${notAddon} failed: `), b.out.status.reason);
    assert.deepEqual(b.out.codes, expectedChildCodes());
    assert.match(b.stderr.trim(), WARNING);

    // A loadable file that is not synthd's addon: a JavaScript module without the exports.
    const foreign = join(dir, "foreign.js");
    writeFileSync(foreign, "module.exports = { version: () => '9' };\n");
    const c = child(CHILD_SCRIPT, { SYNTHD_NATIVE_PATH: foreign });
    assert.equal(c.out.path, "js");
    assert.match(c.out.status.reason, /lacks sampleCodes, exp, defaultThreads \(stale build\?/);
    assert.match(c.stderr.trim(), WARNING);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the addon loads and samples inside a worker thread", async () => {
  const code = `
    const { parentPort } = require("node:worker_threads");
    const native = require(${JSON.stringify(COMPILED_NATIVE)});
    const logits = new Float32Array(80).map((_, i) => Math.sin(i * 1.7) * 3);
    const uniforms = new Float64Array(30).map((_, i) => (i * 0.377) % 1);
    parentPort.postMessage({ path: native.computePath(),
      codes: Array.from(native.nativeAddon().sampleCodes(logits, 10, [2, 5, 1], uniforms, 0.7, 0.9)) });`;
  const worker = new Worker(code, { eval: true });
  const msg = await new Promise<{ path: string; codes: number[] }>((res, rej) => {
    worker.once("message", res);
    worker.once("error", rej);
  });
  await worker.terminate();
  assert.equal(msg.path, "native");
  assert.deepEqual(msg.codes, expectedChildCodes());
});

test("terminating a worker while the addon throws leaves the process alive (engine shutdown terminates workers)", () => {
  // Without NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS (native/binding.gyp) node-addon-api cannot throw
  // into a terminating environment and aborts the whole process ("terminate called after throwing
  // an instance of 'Napi::Error'"); 40 terminations aborted it in 5 runs out of 5.
  const file = computeStatus().addonPath!;
  const script = `
    const { Worker } = require("node:worker_threads");
    const code = 'const a = require(' + JSON.stringify(${JSON.stringify(file)}) + ');' +
      'require("node:worker_threads").parentPort.postMessage("go");' +
      'for (;;) { try { a.sampleCodes(); } catch {} }';
    (async () => {
      for (let i = 0; i < 40; i++) {
        const w = new Worker(code, { eval: true });
        await new Promise((r) => w.once("message", r));
        await new Promise((r) => setTimeout(r, (i % 5) + 1));
        await w.terminate();
      }
      process.stdout.write("survived");
    })();`;
  const res = spawnSync(process.execPath, ["-e", script], { encoding: "utf8", timeout: 120_000 });
  assert.equal(res.signal, null, res.stderr);
  assert.equal(res.status, 0, res.stderr);
  assert.equal(res.stdout, "survived");
});
