/**
 * Calibration of seeded generation (`calibrate: true` with a condition): the targets one
 * condition's rows are raked to ({@link conditionalTargets}) and the values a condition rules out
 * ({@link conditionCalibration}). The raking itself is the calibrated draw's (`calibrate.ts`).
 */
import { RAKING_MIN_RATIO, type CalibrationMarginal } from "./calibrate";

/**
 * The other features' 1-way marginals given feature A in S (weights a_k, 1 when absent), from
 * each given pair (A, X): P(X = x | A in S) = sum_{k in S} a_k P(A = k, X = x) / sum_{k in S}
 * a_k P(A = k). @returns 1-way marginals (g = -1); [] when the condition has probability 0.
 */
export function conditionalTargets(marginals: readonly CalibrationMarginal[], f: number, codes: ArrayLike<number>, weights: ArrayLike<number> | null): CalibrationMarginal[] {
  const out: CalibrationMarginal[] = [];
  for (const m of marginals) {
    if (m.g < 0 || (m.f !== f && m.g !== f)) continue;
    const other = m.f === f ? m.g : m.f;
    const kf = m.probs.length / m.kg;
    const K = m.f === f ? m.kg : kf;
    const probs = new Float64Array(K);
    let s = 0;
    for (let t = 0; t < codes.length; t++) {
      const k = codes[t];
      const a = weights ? weights[t] : 1;
      for (let x = 0; x < K; x++) {
        const p = a * (m.f === f ? m.probs[k * m.kg + x] : m.probs[x * m.kg + k]);
        probs[x] += p;
        s += p;
      }
    }
    if (!(s > 0)) continue;
    for (let x = 0; x < K; x++) probs[x] /= s;
    out.push({ f: other, g: -1, kg: 1, probs });
  }
  return out;
}

/** A fixed feature of a condition: allowed codes (ascending) and their weights (null: all 1). */
export interface FixedCell {
  f: number;
  codes: ArrayLike<number>;
  weights: ArrayLike<number> | null;
}

/** Values of a free feature a condition rules out: `excluded[x] = 1` for value x of feature f. */
export interface Exclusion {
  f: number;
  excluded: Uint8Array;
}

/** What calibrating one condition uses ({@link conditionCalibration}). */
export interface ConditionCalibration {
  /** Targets to rake the conditioned rows to (empty: no raking). */
  targets: CalibrationMarginal[];
  /** Structural zeros: values of free features the data never has with a fixed feature's values. */
  exclusions: Exclusion[];
}

/**
 * Log weight factor of a row with an excluded value: ten raking steps' floor (1e-10), not 0, so
 * such rows are used only when nothing else is left and a condition the model allows yields rows.
 */
export const EXCLUDED_LOG_FACTOR = 10 * Math.log(RAKING_MIN_RATIO);

/** Expected count under independence from which an empty cell is a structural zero (P(0) 5e-5). */
export const STRUCTURAL_ZERO_MIN_EXPECTED = 10;

/**
 * What the given marginals say about the rows under a condition with fixed features `fixed`
 * (ascending), measured on a table of `rows` (N) rows:
 * - targets: with no fixed feature every marginal (the calibrated draw); with one the other
 *   features' conditional 1-way marginals ({@link conditionalTargets}); with more none.
 * - exclusions (structural zeros): for each fixed feature A (set S, weights a_k) and given pair
 *   (A, X) with X free, the values x with sum_{k in S} a_k P(A = k, X = x) = 0 although
 *   independence would put N P(A in S) P(X = x) >= {@link STRUCTURAL_ZERO_MIN_EXPECTED} rows
 *   there (Bishop, Fienberg & Holland, "Discrete Multivariate Analysis", 1975, ch. 5): e.g.
 *   sex = Female rules out relationship = Husband. Rarer empty cells are unseen values, not
 *   zeros (docs/compute.md).
 * @returns null when there is nothing to apply.
 */
export function conditionCalibration(marginals: readonly CalibrationMarginal[], fixed: readonly FixedCell[], rows: number): ConditionCalibration | null {
  const targets = fixed.length === 0 ? [...marginals] : fixed.length === 1 ? conditionalTargets(marginals, fixed[0].f, fixed[0].codes, fixed[0].weights) : [];
  const oneWay = new Map<number, Float64Array>();
  for (const m of marginals) if (m.g < 0) oneWay.set(m.f, m.probs);
  const isFixed = new Set(fixed.map((c) => c.f));
  const byFeature = new Map<number, Uint8Array>();
  for (const c of fixed) {
    const pa = oneWay.get(c.f);
    if (!pa) continue;
    let pA = 0;
    for (let t = 0; t < c.codes.length; t++) pA += (c.weights ? c.weights[t] : 1) * pa[c.codes[t]];
    for (const t of conditionalTargets(marginals, c.f, c.codes, c.weights)) {
      const px = oneWay.get(t.f);
      if (isFixed.has(t.f) || !px) continue;
      for (let x = 0; x < t.probs.length; x++) {
        if (t.probs[x] === 0 && rows * pA * px[x] >= STRUCTURAL_ZERO_MIN_EXPECTED) {
          let ex = byFeature.get(t.f);
          if (!ex) byFeature.set(t.f, (ex = new Uint8Array(t.probs.length)));
          ex[x] = 1;
        }
      }
    }
  }
  const exclusions = [...byFeature].map(([f, excluded]) => ({ f, excluded }));
  return targets.length > 0 || exclusions.length > 0 ? { targets, exclusions } : null;
}
