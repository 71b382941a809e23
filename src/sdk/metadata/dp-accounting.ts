/** `./dp`'s accounting in zCDP: (epsilon, delta) <-> rho and the budget split (`./dp`'s header). */

/** Default delta: 1e-9, as in `mst.py`/`aim.py` of private-pgm; far below 1/n for any table this
 * service handles. */
export const DEFAULT_DELTA = 1e-9;


/**
 * delta such that rho-zCDP implies (eps, delta)-DP: Canonne, Kamath & Steinke 2020, Corollary 13,
 * delta = inf over alpha > 1 of exp((alpha-1)(alpha rho - eps)) / (alpha - 1) * (1 - 1/alpha)^alpha,
 * minimised by bisection on the derivative's sign over alpha in [1.01, (eps+1)/(2 rho) + 2]
 * (any alpha gives a valid bound, so an inexact search only makes delta larger).
 * @returns delta in [0, 1].
 */
export function cdpDelta(rho: number, eps: number): number {
  if (!(rho >= 0 && eps >= 0)) throw new RangeError("rho and eps must be >= 0");
  if (rho === 0) return 0;
  let amin = 1.01;
  let amax = (eps + 1) / (2 * rho) + 2;
  let alpha = amin;
  for (let i = 0; i < 1000; i++) {
    alpha = (amin + amax) / 2;
    const derivative = (2 * alpha - 1) * rho - eps + Math.log1p(-1 / alpha);
    if (derivative < 0) amin = alpha;
    else amax = alpha;
  }
  const delta = Math.exp((alpha - 1) * (alpha * rho - eps) + alpha * Math.log1p(-1 / alpha)) / (alpha - 1);
  return Math.min(delta, 1);
}

/**
 * The largest rho whose rho-zCDP implies (eps, delta)-DP under {@link cdpDelta} (bisection, the
 * side that satisfies the bound). @throws RangeError unless eps > 0 and 0 < delta < 1.
 */
export function cdpRho(eps: number, delta: number): number {
  checkEpsDelta(eps, delta);
  let lo = 0;
  let hi = eps + 1;
  for (let i = 0; i < 1000; i++) {
    const rho = (lo + hi) / 2;
    if (cdpDelta(rho, eps) <= delta) lo = rho;
    else hi = rho;
  }
  return lo;
}

/**
 * The classical conversion (Bun & Steinke 2016, Proposition 1.3): rho-zCDP implies
 * (rho + 2 sqrt(rho ln(1/delta)), delta)-DP, solved for rho: (sqrt(ln(1/delta) + eps) -
 * sqrt(ln(1/delta)))^2. Never larger than {@link cdpRho}; kept for comparison and tests.
 */
export function cdpRhoBound(eps: number, delta: number): number {
  checkEpsDelta(eps, delta);
  const L = Math.log(1 / delta);
  return (Math.sqrt(L + eps) - Math.sqrt(L)) ** 2;
}

function checkEpsDelta(eps: number, delta: number): void {
  if (!(Number.isFinite(eps) && eps > 0)) throw new RangeError(`privacy.epsilon must be a finite number > 0, got ${eps}`);
  if (!(delta > 0 && delta < 1)) throw new RangeError(`privacy.delta must be in (0, 1), got ${delta}`);
}

/** How a privacy budget is spent on a table with F columns (`./dp`'s header). */
export interface PrivacyPlan {
  epsilon: number;
  delta: number;
  /** Total zCDP budget, {@link cdpRho}(epsilon, delta). */
  rho: number;
  /** Spent on selecting pairs (rho/3 when F >= 3, else 0). */
  rhoSelect: number;
  /** Spent on measuring marginals: rho - rhoSelect. */
  rhoMeasure: number;
  /** Marginals measured: F 1-way + (F-1) 2-way. */
  measurements: number;
  /** Noise standard deviation added to every count: sqrt(measurements / (2 rhoMeasure)). */
  sigma: number;
  /** Exponential-mechanism rounds (F-1 when F >= 3, else 0). */
  selectionRounds: number;
  /** eps_em per round: sqrt(8 rhoSelect / selectionRounds), or 0. */
  epsilonSelect: number;
}

/** Splits a budget over F >= 2 columns. @throws RangeError for F < 2 or invalid epsilon/delta. */
export function planPrivacy(F: number, epsilon: number, delta: number = DEFAULT_DELTA): PrivacyPlan {
  if (!(Number.isInteger(F) && F >= 2)) throw new RangeError("privacy needs at least 2 columns");
  const rho = cdpRho(epsilon, delta);
  const selectionRounds = F >= 3 ? F - 1 : 0;
  const rhoSelect = selectionRounds > 0 ? rho / 3 : 0;
  const rhoMeasure = rho - rhoSelect;
  const measurements = 2 * F - 1;
  return {
    epsilon,
    delta,
    rho,
    rhoSelect,
    rhoMeasure,
    measurements,
    sigma: Math.sqrt(measurements / (2 * rhoMeasure)),
    selectionRounds,
    epsilonSelect: selectionRounds > 0 ? Math.sqrt((8 * rhoSelect) / selectionRounds) : 0,
  };
}
