/**
 * The scores a repair of a fixed-combinations rule gives its candidate combinations (docs/api.md
 * "Row rules"), shared by the server's repair of the calibration pool (`model/rule-repair.ts`)
 * and the SDK's repair of decoded rows (`sdk/rules/enforce.ts`), so both choose alike.
 */
import type { Metadata } from "./contract";

/**
 * Power of the naive-Bayes likelihood in a candidate's score. Naive Bayes multiplies 2-way
 * conditionals as if the other columns were independent given the combination; against the quota
 * it then weighs too little: on flights (one model, calibrated draw, repaired after decoding) the
 * 2-way TVD was 0.0470 at power 1, 0.0464 at 2, 0.0444 at 4, 0.0453 at 8, 0.0458 at 16 (0.0423
 * with no repair); airports, cars and Adult moved within their noise.
 */
export const LIKELIHOOD_POWER = 4;

/**
 * A released combination's weight as a repair target: its shortfall against its quota (the rows
 * it should hold, its real share of the judged rows, minus the rows it holds), at least 1% of the
 * quota, so a row whose only fitting combinations are full still has one.
 * @param quota rows the combination should hold (>= 0); @param held rows it holds now.
 */
export function quotaScore(quota: number, held: number): number {
  return Math.max(quota - held, 0) + 0.01 * quota;
}

/** Added to every conditional, so an unseen pair lowers a candidate's score without zeroing it. */
export const CONDITIONAL_FLOOR = 1e-4;

/** P(g = y | rule column = x) for one other feature g: a K_rule x K_g table, row-major. */
export interface PairConditional {
  g: number;
  Kg: number;
  table: Float64Array;
}

/**
 * Per rule column (feature index `ruleFeatures[j]` of `features`), the conditionals of every other
 * feature g whose 2-way marginal with it `metadata.marginals` holds (g in no rule column, not
 * excluded by `skip`), plus {@link CONDITIONAL_FLOOR}. Marginals whose size does not match the
 * cardinalities are ignored.
 * @param features feature names in the caller's column order (indices in and out refer to it).
 */
export function pairConditionals(
  metadata: Metadata,
  features: readonly string[],
  ruleFeatures: readonly number[],
  skip: (g: number) => boolean = () => false,
): PairConditional[][] {
  const inRule = new Set(ruleFeatures);
  const out: PairConditional[][] = ruleFeatures.map(() => []);
  for (const mg of metadata.marginals ?? []) {
    const [f0, f1] = mg.features.map((f) => features.indexOf(f));
    for (const [a, b, aFirst] of [[f0, f1, true], [f1, f0, false]] as const) {
      const j = ruleFeatures.indexOf(a);
      if (j < 0 || b < 0 || inRule.has(b) || skip(b)) continue;
      const Ka = metadata.cardinalities[features[a]];
      const Kb = metadata.cardinalities[features[b]];
      if (mg.probs.length !== Ka * Kb) continue;
      const table = new Float64Array(Ka * Kb);
      for (let x = 0; x < Ka; x++) {
        let row = 0;
        for (let y = 0; y < Kb; y++) row += aFirst ? mg.probs[x * Kb + y] : mg.probs[y * Ka + x];
        for (let y = 0; y < Kb; y++) {
          const p = aFirst ? mg.probs[x * Kb + y] : mg.probs[y * Ka + x];
          table[x * Kb + y] = (row > 0 ? p / row : 0) + CONDITIONAL_FLOOR;
        }
      }
      out[j].push({ g: b, Kg: Kb, table });
    }
  }
  return out;
}

/**
 * The naive-Bayes likelihood of a row's other codes given a combination, raised to
 * {@link LIKELIHOOD_POWER}: Π_j Π_g P(g = code_g | rule column j = tuple[j]).
 * @param code the row's code of feature g.
 */
export function combinationLikelihood(conditionals: readonly PairConditional[][], tuple: ArrayLike<number>, code: (g: number) => number): number {
  let lik = 1;
  for (let j = 0; j < conditionals.length; j++) for (const { g, Kg, table } of conditionals[j]) lik *= table[tuple[j] * Kg + code(g)];
  return lik ** LIKELIHOOD_POWER;
}

/**
 * {@link combinationLikelihood}'s last step on a product of conditionals computed elsewhere (in
 * the same order: rule column j ascending, then `conditionals[j]` in order, starting from 1):
 * `lik ** LIKELIHOOD_POWER`, the same expression, so callers that multiply from flat tables get
 * the same double.
 */
export function likelihoodToPower(lik: number): number {
  return lik ** LIKELIHOOD_POWER;
}

/**
 * Per rule column j (of m), code -> indices into `tuples` of the combinations holding that code
 * at position j: a repair's candidates are the combinations sharing a code with the row.
 */
export function combinationsByCode(tuples: readonly ArrayLike<number>[], m: number): Map<number, number[]>[] {
  return Array.from({ length: m }, (_, j) => {
    const map = new Map<number, number[]>();
    tuples.forEach((t, i) => {
      const list = map.get(t[j]);
      if (list) list.push(i);
      else map.set(t[j], [i]);
    });
    return map;
  });
}
