/**
 * The codes files `bench/enforce-profile.ts prepare` writes (DIR/codes-SEED-B.bin: per feature in
 * `metadata.features` order, the batch's Int32 codes, little endian), read back for the benches
 * that decode them (`./enforce-profile`, `./parquet-write`).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Batch `b` of seed `seed` in `dir`, as columns by feature name (views of the file's bytes).
 * @throws the file system's error when the file is missing.
 */
export function readSavedCodes(dir: string, seed: number, b: number, features: readonly string[]): Record<string, Int32Array> {
  const buf = readFileSync(join(dir, `codes-${seed}-${b}.bin`));
  const n = buf.length / 4 / features.length;
  const all = new Int32Array(buf.buffer, buf.byteOffset, buf.length / 4);
  const columns: Record<string, Int32Array> = {};
  features.forEach((f, i) => (columns[f] = all.subarray(i * n, (i + 1) * n)));
  return columns;
}
