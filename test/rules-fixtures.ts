/**
 * Fixtures shared by the row-rule tests.
 */
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
