/**
 * The scores a repair of a fixed-combinations rule gives its candidate combinations (docs/api.md
 * "Row rules"), shared by the server's repair of the calibration pool (`model/rule-repair.ts`)
 * and the SDK's repair of decoded rows (`sdk/rules/enforce.ts`), so both choose alike.
 */
import type { Metadata } from "./contract";

/**
 * Power of the naive-Bayes likelihood in a candidate's score: at power 1 it weighs too little
 * against the quota (the choice of 4: docs/api.md "Decisions moved from code comments").
 */
export const LIKELIHOOD_POWER = 4;

/**
 * A released combination's weight as a repair target: its shortfall `quota - held` (rows), at
 * least 1% of `quota`, so a row whose only fitting combinations are full still has one.
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
 * Per rule column `ruleFeatures[j]`, the conditionals (plus {@link CONDITIONAL_FLOOR}) of every
 * other non-rule feature g, not `skip`ped, whose 2-way marginal with it is in the metadata;
 * mis-sized marginals are ignored. Indices refer to `features` (the caller's column order).
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
 * {@link combinationLikelihood}'s last step, the same expression, so callers that multiply from
 * flat tables in the same order get the same double.
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
