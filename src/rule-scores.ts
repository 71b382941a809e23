/**
 * The scores a fixed-combinations rule's repair gives its candidates (docs/api.md "Row rules"),
 * shared by `model/rule-repair.ts` and `sdk/rules/enforce.ts` so both choose alike.
 */
import type { Metadata } from "./contract";

/**
 * Power of the naive-Bayes likelihood in a candidate's score (why 4: docs/api.md "Decisions moved
 * from code comments: row-rule repair scores").
 */
export const LIKELIHOOD_POWER = 4;

/** A combination's weight as a target: shortfall `quota - held` (rows), at least 1% of `quota`. */
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
 * Per rule column `ruleFeatures[j]`, the conditionals (+ {@link CONDITIONAL_FLOOR}) of each other
 * non-rule, un-`skip`ped feature with a 2-way marginal; indices into `features`.
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

/** (Π_j Π_g P(g = code(g) | rule column j = tuple[j])) ** {@link LIKELIHOOD_POWER}. */
export function combinationLikelihood(conditionals: readonly PairConditional[][], tuple: ArrayLike<number>, code: (g: number) => number): number {
  let lik = 1;
  for (let j = 0; j < conditionals.length; j++) for (const { g, Kg, table } of conditionals[j]) lik *= table[tuple[j] * Kg + code(g)];
  return lik ** LIKELIHOOD_POWER;
}

/** {@link combinationLikelihood}'s last step, so flat-table callers get the same double. */
export function likelihoodToPower(lik: number): number {
  return lik ** LIKELIHOOD_POWER;
}

/** Per rule column j (of m): code -> indices of the `tuples` holding that code at j. */
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
