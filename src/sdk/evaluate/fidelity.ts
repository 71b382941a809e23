/**
 * Fidelity: the 1/2/3-way average TVD of two encoded tables over the same code spaces, and the
 * per-column and per-pair figures behind it (`./evaluate` says how the codes are made).
 */
import { marginalTvds, type CodeArray } from "../metadata/marginals";
import { WORST_PAIRS, type ColumnReport, type EvaluationReport, type PairTvd } from "./types";

function average(xs: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < xs.length; i++) s += xs[i];
  return xs.length ? s / xs.length : 0;
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
  return compareCodesWithPairs(columns, cards, real, synth, unseenCode).report;
}

/**
 * {@link compareCodes}, plus the 2-way TVD of every pair (i, j), i < j, in the order (0,1), (0,2),
 * ..., (1,2), ... (the values `tvd["2"]` averages).
 */
export function compareCodesWithPairs(
  columns: string[],
  cards: number[],
  real: CodeArray[],
  synth: CodeArray[],
  unseenCode: number[],
): { report: EvaluationReport; pairTvd: Float64Array } {
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
  const order = Array.from(twos.keys()).sort((a, b) => t2[b] - t2[a] || a - b);
  const worst = order.slice(0, WORST_PAIRS).map((k): PairTvd => ({ columns: [columns[twos[k][0]], columns[twos[k][1]]], tvd: t2[k] }));
  const report: EvaluationReport = {
    excluded: [],
    checks: [],
    rules: [],
    worst_pairs: worst,
    tvd: { "1": average(t1), "2": average(t2), "3": average(t3) },
    marginals: { "1": ones.length, "2": twos.length, "3": threes.length },
    rows: { real: real[0]?.length ?? 0, synthetic: nS },
    columns: per,
    unseen,
  };
  return { report, pairTvd: t2 };
}
