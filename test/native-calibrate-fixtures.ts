/**
 * Shared by test/native-calibrate.test.ts: deterministic pools and a native model for the raking
 * of calibrated generation, and a child-process entry (`node native-calibrate-fixtures.js raking`
 * or `calibrated`) that prints one JSON line, so the tests can compare runs under other
 * SYNTHD_THREADS and SYNTHD_ISA values, which the addon fixes when it loads.
 */
import { createHash } from "node:crypto";
import { calibrationMarginals, type CalibrationMarginal } from "../src/model/sampling/calibrate";
import { nativeRakingSweeps } from "../src/model/compute/calibrate-native";
import { calibrationPool, sampleCalibrated } from "../src/model/sampling/calibrated-draw";
import { buildTargets } from "../src/model/generator/targets";
import { NativeGenerator } from "../src/model/compute/native-generator";
import { nativeCoreStatus } from "../src/model/compute/native-core";
import type { GeneratorModel } from "../src/model/generator/model";
import { mulberry32 } from "./fixtures";
import { specFor, syntheticMetadata, testWeights } from "./native-core-fixtures";

/**
 * A pool of M rows over features with cardinalities `cards`, skewed toward low codes (u^2), as a
 * generator's pool is toward frequent values: long runs of one cell, rows past the bound.
 */
export function skewedPool(M: number, cards: readonly number[], seed: number): Int32Array[] {
  const u = mulberry32(seed);
  return cards.map((K) => Int32Array.from({ length: M }, () => Math.floor(u() ** 2 * K)));
}

/** Cardinalities of {@link rakingCase}: large tables (85 x 100) beside binary ones, as Adult has. */
export const RAKING_CARDS = [85, 9, 100, 2, 42, 2];

/**
 * A raking problem larger than one block of rows (`RAKING_BLOCK_ROWS`): 40,000 rows (three
 * blocks, the last one partial) against every pair and 1-way marginal of a latent-class table over
 * {@link RAKING_CARDS}, whose sparse pairs leave many zero-target cells.
 */
export function rakingCase(M = 40_000): { pool: Int32Array[]; marginals: CalibrationMarginal[] } {
  const marginals = calibrationMarginals(buildTargets(syntheticMetadata(RAKING_CARDS, "all", 31, 5000)));
  return { pool: skewedPool(M, RAKING_CARDS, 77), marginals };
}

/** Runs a raking generator to its end. */
export function drain<T>(g: Generator<unknown, T, void>): T {
  for (;;) {
    const r = g.next();
    if (r.done) return r.value;
  }
}

/** SHA-256 (hex) of typed arrays' bytes, in order. */
export function hashOf(arrays: readonly ArrayBufferView[]): string {
  const h = createHash("sha256");
  for (const a of arrays) h.update(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
  return h.digest("hex");
}

/** Cardinalities of {@link calibratedCase}'s model. */
export const CALIBRATED_CARDS = [6, 4, 9, 2, 5];

/**
 * A native model with fixed weights (no training, which would differ across ISAs by float
 * rounding) over {@link CALIBRATED_CARDS}, its calibration marginals, and a request size whose
 * pool spans several raking blocks. Dispose `model.native` after use.
 */
export function calibratedCase(): { model: GeneratorModel; marginals: CalibrationMarginal[]; n: number } {
  const targets = buildTargets(syntheticMetadata(CALIBRATED_CARDS, "all", 12));
  const spec = specFor(targets, 8, 32, 1);
  const native = NativeGenerator.create(spec, targets.layout, testWeights(spec, "calibrate"));
  return { model: { spec, layout: targets.layout, params: {}, native }, marginals: calibrationMarginals(targets), n: 20_000 };
}

/**
 * The pool `sampleCalibrated` draws for `seed` (`calibrationPool`: the plain draw of `seed` and
 * more rows from its latents with uniforms seeded from its stream), hashed: equal pools are what
 * the calibrated draw's ISA independence rests on.
 */
export async function poolHash(model: GeneratorModel, n: number, seed: number): Promise<string> {
  return hashOf((await calibrationPool(model, { numRows: n, seed }, 0)).columns);
}

/** Child entry: one JSON line with the ISA and thread count in use and the hashes asked for. */
async function main(cmd: string | undefined): Promise<void> {
  const info = nativeCoreStatus().info!;
  if (cmd === "raking") {
    const { pool, marginals } = rakingCase();
    const w = drain(nativeRakingSweeps(pool, marginals, { bound: 1.5 })!);
    console.log(JSON.stringify({ isa: info.isa, threads: info.threads, hash: hashOf([w]) }));
  } else if (cmd === "calibrated") {
    const { model, marginals, n } = calibratedCase();
    const { columns } = await sampleCalibrated(model, { numRows: n, seed: 5 }, 0, marginals);
    console.log(JSON.stringify({ isa: info.isa, pool: await poolHash(model, n, 5), hash: hashOf(columns) }));
    model.native!.dispose();
  } else {
    throw new Error(`unknown command ${cmd}`);
  }
}

if (require.main === module) {
  main(process.argv[2]).catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}
