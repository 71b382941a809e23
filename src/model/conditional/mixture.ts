/**
 * The proposal's mixture in its subspace: g, at most `MAX_COMPONENTS` Gaussians on R^r, fitted to
 * the weighted candidates' coordinates V^T u by weighted EM (Dempster, Laird & Rubin, JRSS B 39,
 * 1977; {@link fitMixture}). A mixture captures conditions one Gaussian fits poorly
 * (docs/compute.md).
 */
import { cholClamped } from "./linalg";
import { component, type Component } from "./proposal";

/** Effective points per free parameter a mixture component needs. */
const POINTS_PER_PARAM = 10;
/** EM iterations of the subspace mixture. */
const EM_ITERS = 12;
/** EM stops once the weighted mean log-likelihood gains less than this in an iteration. */
const EM_TOLERANCE = 1e-4;
/** Smallest weight of a mixture component. */
const MIN_COMPONENT_WEIGHT = 0.02;

/**
 * Weighted EM from quantile slices along the first axis (the mean direction), with as many
 * components as the effective points afford ({@link POINTS_PER_PARAM} per parameter). Covariances
 * are shrunk toward I_r by r + 2 pseudo-points, eigenvalues clamped to [1e-4, 4]; component
 * weights are at least {@link MIN_COMPONENT_WEIGHT}.
 */
export function fitMixture(P: Float64Array, w: Float64Array, n: number, r: number, nEff: number, maxComponents: number): Component[] {
  const params = r + (r * (r + 1)) / 2 + 1;
  const C = Math.max(1, Math.min(maxComponents, Math.floor(nEff / (POINTS_PER_PARAM * params))));
  const kappa = r + 2;
  const resp = new Float64Array(n * C);
  // Initial responsibilities: C weighted-quantile slices of the first coordinate.
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => P[a * r] - P[b * r] || a - b);
  let acc = 0;
  for (const i of order) {
    const c = Math.min(C - 1, Math.floor((acc + w[i] / 2) * C));
    resp[i * C + c] = 1;
    acc += w[i];
  }
  let comps: Component[] = [];
  const y = new Float64Array(r);
  const lp = new Float64Array(C);
  let llPrev = -Infinity;
  let converged = false;
  for (let it = 0; it <= EM_ITERS; it++) {
    // M step.
    const next: Component[] = [];
    let wsum = 0;
    const raw: { W: number; m: Float64Array; S: Float64Array }[] = [];
    for (let c = 0; c < C; c++) {
      let W = 0;
      const m = new Float64Array(r);
      for (let i = 0; i < n; i++) {
        const q = w[i] * resp[i * C + c];
        if (q === 0) continue;
        W += q;
        for (let a = 0; a < r; a++) m[a] += q * P[i * r + a];
      }
      const S = new Float64Array(r * r);
      if (W > 0) {
        for (let a = 0; a < r; a++) m[a] /= W;
        for (let i = 0; i < n; i++) {
          const q = w[i] * resp[i * C + c];
          if (q === 0) continue;
          for (let a = 0; a < r; a++) {
            const da = P[i * r + a] - m[a];
            for (let b = 0; b <= a; b++) S[a * r + b] += q * da * (P[i * r + b] - m[b]);
          }
        }
        for (let a = 0; a < r; a++) for (let b = 0; b <= a; b++) S[a * r + b] /= W;
      }
      raw.push({ W, m, S });
      wsum += Math.max(W, MIN_COMPONENT_WEIGHT);
    }
    for (let c = 0; c < C; c++) {
      const { W, m, S } = raw[c];
      const ne = W * nEff;
      for (let a = 0; a < r; a++) {
        for (let b = 0; b <= a; b++) {
          const v = (ne * S[a * r + b] + (a === b ? kappa : 0)) / (ne + kappa);
          S[a * r + b] = v;
          S[b * r + a] = v;
        }
      }
      next.push(component(Math.max(W, MIN_COMPONENT_WEIGHT) / wsum, m, cholClamped(S, r, 1e-4, 4), r));
    }
    comps = next;
    if (C === 1 || it === EM_ITERS || converged) break;
    // E step.
    let ll = 0;
    for (let i = 0; i < n; i++) {
      let mx = -Infinity;
      for (let c = 0; c < C; c++) {
        const { m, L, logDet, logWeight } = comps[c];
        let yy = 0;
        for (let a = 0; a < r; a++) {
          let v = P[i * r + a] - m[a];
          for (let b = 0; b < a; b++) v -= L[a * r + b] * y[b];
          v /= L[a * r + a];
          y[a] = v;
          yy += v * v;
        }
        lp[c] = logWeight - 0.5 * yy - 0.5 * logDet;
        if (lp[c] > mx) mx = lp[c];
      }
      let s = 0;
      for (let c = 0; c < C; c++) s += (lp[c] = Math.exp(lp[c] - mx));
      for (let c = 0; c < C; c++) resp[i * C + c] = lp[c] / s;
      ll += w[i] * (mx + Math.log(s));
    }
    // The weighted mean log-likelihood (weights sum to 1): one more M step once it stalls.
    converged = ll - llPrev < EM_TOLERANCE;
    llPrev = ll;
  }
  return comps;
}
