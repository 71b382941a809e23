/**
 * The baseline generator: independent columns, each drawn from the real 1-way marginal.
 */
import type { Table, TableSource } from "../io/csv";
import { buildMetadata, encodeTable } from "../metadata/metadata";
import { Decoder } from "../generate/decode";
import { Rng, deriveSeed } from "../generate/sfc32";
import type { EvaluateOptions } from "./types";

/**
 * The independent-marginals baseline: `n` rows whose columns are drawn independently, each from
 * the real column's 1-way marginal (its `empirical_probs`), decoded like generated data (point
 * bins exact, values drawn inside quantile bins, blanks for the missing code). It matches the
 * 1-way marginals up to sampling noise and binning, and ignores every relationship between
 * columns, so its 2- and 3-way TVD is what a generator must beat.
 * @param seed  makes the result reproducible (code draws use `deriveSeed(seed, f, 1)`, decoding
 *              `deriveSeed(seed, 2)`).
 * @returns a {@link Table} with the real column names; pass it to {@link evaluate} or write it
 *          with `writeTableCsv`.
 */
export async function independentSample(real: TableSource, n: number, seed = 0, opts: EvaluateOptions = {}): Promise<Table> {
  if (!(Number.isInteger(n) && n >= 1)) throw new RangeError("n must be a positive integer");
  const enc = await encodeTable(real, opts);
  const { metadata } = buildMetadata(enc, 0);
  const columns: Record<string, Int32Array> = {};
  metadata.features.forEach((f, fi) => {
    const p = metadata.empirical_probs[f];
    const cdf = new Float64Array(p.length);
    let s = 0;
    p.forEach((v, k) => (cdf[k] = s += v));
    const rng = new Rng(deriveSeed(seed, fi, 1));
    const out = new Int32Array(n);
    for (let r = 0; r < n; r++) out[r] = rng.pickCumulative(cdf);
    columns[f] = out;
  });
  return new Decoder(metadata).decode(columns, deriveSeed(seed, 2));
}
