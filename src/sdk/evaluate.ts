/**
 * Fidelity evaluation (DESIGN §1 `synthd evaluate`): average total variation distance between the
 * k-way marginals (k = 1, 2, 3) of a real and a synthetic table, the workload measure of the
 * NIST/MST/AIM literature (e.g. McKenna et al., "AIM: An Adaptive and Iterative Mechanism for
 * Differentially Private Synthetic Data", PVLDB 2022, which reports average 3-way TVD-style errors).
 *
 * Binning: the code books are built from the REAL table only (rules of `./metadata`) and applied
 * to both tables; a synthetic value the real column never had (an unseen category, a blank where
 * the real column had none, a non-number or out-of-range number in a numerical column) gets one
 * extra code K_f per feature, so it counts as a difference. Columns are matched by name; the
 * synthetic table may order them differently and may have extra columns (ignored).
 *
 * TVD(P, Q) = ½ Σ_x |P(x) − Q(x)| over the cells of a marginal, in [0, 1].
 */
import type { Table, TableSource } from "./csv";
import { Decoder } from "./decode";
import { DataError } from "./errors";
import { marginalTvds, type CodeArray } from "./marginals";
import { buildMetadata, encodeScanned, encodeTable, scanTable, type ExtractOptions } from "./metadata";
import { Rng, deriveSeed } from "./prng";

/** Per-column part of an {@link EvaluationReport}. */
export interface ColumnReport {
  column: string;
  /** 1-way TVD of this column. */
  tvd1: number;
  /** Mean 2-way TVD over the pairs that include this column. */
  tvd2: number;
}

/** Result of {@link evaluate}. All distances are in [0, 1]; 0 means identical marginals. */
export interface EvaluationReport {
  /** Average TVD over all 1-way, all 2-way and all 3-way marginals (an arity with no marginals,
   * e.g. 3-way with two columns, reports 0). */
  tvd: { "1": number; "2": number; "3": number };
  /** Number of marginals averaged per arity. */
  marginals: { "1": number; "2": number; "3": number };
  /** Row counts. */
  rows: { real: number; synthetic: number };
  /** One entry per real column, in the real table's order. */
  columns: ColumnReport[];
  /** Share of synthetic cells whose value the real column never had, per column name. */
  unseen: Record<string, number>;
}

/** Options of {@link evaluate}: the binning caps (defaults as in metadata extraction). */
export type EvaluateOptions = Pick<ExtractOptions, "categoryCap" | "binCap">;

function average(xs: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < xs.length; i++) s += xs[i];
  return xs.length ? s / xs.length : 0;
}

/**
 * Compares a synthetic table with the real one.
 * @param real, synthetic  CSV paths (streamed) or in-memory tables.
 * @returns average 1-, 2-, 3-way TVD, per-column table, unseen-value rates.
 * @throws DataError for a bad real file (as metadata extraction), a bad synthetic file
 *         (structure, UTF-8) or a synthetic file lacking a real column.
 * Cost: O(C(F,3) · (n_real + n_synth)); about a second for adult (15 columns, 455 triples).
 */
export async function evaluate(real: TableSource, synthetic: TableSource, opts: EvaluateOptions = {}): Promise<EvaluationReport> {
  const enc = await encodeTable(real, opts);
  const synth = await scanTable(synthetic, 1);
  const missing = enc.columns.filter((c) => !synth.columns.includes(c));
  if (missing.length) {
    throw new DataError(`${synth.source} lacks column${missing.length > 1 ? "s" : ""} ${missing.map((c) => `"${c}"`).join(", ")} of the real table.`, {
      column: missing[0],
    });
  }
  const cards = enc.codecs.map((c) => c.K + 1); // + the "unseen" code
  const realCodes = enc.codes;
  const synthCodes: CodeArray[] = encodeScanned(synth, enc.codecs, enc.codecs.map((c) => c.K));
  return compareCodes(enc.columns, cards, realCodes, synthCodes, enc.codecs.map((c) => c.K));
}

/**
 * TVD report of two encoded tables over the same code spaces.
 * @param cards      code-space size per feature.
 * @param unseenCode per feature, the code that marks "value unseen in the real table".
 */
export function compareCodes(
  columns: string[],
  cards: number[],
  real: CodeArray[],
  synth: CodeArray[],
  unseenCode: number[],
): EvaluationReport {
  const F = columns.length;
  const ones: number[][] = [];
  const twos: number[][] = [];
  const threes: number[][] = [];
  for (let i = 0; i < F; i++) {
    ones.push([i]);
    for (let j = i + 1; j < F; j++) {
      twos.push([i, j]);
      for (let k = j + 1; k < F; k++) threes.push([i, j, k]);
    }
  }
  const t1 = marginalTvds(real, synth, cards, ones);
  const t2 = marginalTvds(real, synth, cards, twos);
  const t3 = marginalTvds(real, synth, cards, threes);
  const per = columns.map((column, f): ColumnReport => {
    const mine: number[] = [];
    twos.forEach(([i, j], k) => {
      if (i === f || j === f) mine.push(t2[k]);
    });
    return { column, tvd1: t1[f], tvd2: average(mine) };
  });
  const nS = synth[0]?.length ?? 0;
  const unseen: Record<string, number> = {};
  columns.forEach((c, f) => {
    let u = 0;
    const a = synth[f];
    for (let r = 0; r < a.length; r++) if (a[r] === unseenCode[f]) u++;
    unseen[c] = nS ? u / nS : 0;
  });
  return {
    tvd: { "1": average(t1), "2": average(t2), "3": average(t3) },
    marginals: { "1": ones.length, "2": twos.length, "3": threes.length },
    rows: { real: real[0]?.length ?? 0, synthetic: nS },
    columns: per,
    unseen,
  };
}

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
    for (let r = 0; r < n; r++) {
      const u = rng.next() * s;
      let lo = 0;
      let hi = cdf.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (cdf[mid] > u) hi = mid;
        else lo = mid + 1;
      }
      out[r] = lo;
    }
    columns[f] = out;
  });
  return new Decoder(metadata).decode(columns, deriveSeed(seed, 2));
}
