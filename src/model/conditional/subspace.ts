/**
 * Fitting a proposal ({@link fitProposal}) to the weighted candidates so far: its subspace V and,
 * in it, the mixture g (`mixture.ts`). V spans (i) the direction of the weighted mean, shrunk by
 * the positive-part James–Stein factor (James & Stein 1961) so a mean the candidates cannot
 * resolve stays at 0, and (ii) the eigenvectors of the weighted covariance (projected off (i))
 * whose eigenvalues leave the Marchenko–Pastur band of a sample of the prior of the same effective
 * size, most extreme first, r <= `MAX_RANK` in all. The eigenproblem is solved by Jacobi on the
 * E x E matrix for E <= 128, else by randomised subspace iteration with a Rayleigh–Ritz step
 * (Halko, Martinsson & Tropp, SIAM Review 53, 2011). The fit uses at most `FIT_POINTS` candidates
 * (a systematic resample by weight, `plan.ts`).
 *
 * On Adult (E = 64) the posterior of one condition moves in 1-5 directions, so a few directions
 * capture it while a full E x E Gaussian drowns in estimation noise (docs/compute.md). The fit's
 * weighted Gram matrix ({@link weightedGramJs}) runs in the native core when loaded, bit for bit.
 */
import { nativeExport } from "../compute/native";
import { fillNormalZiggurat, type Rng } from "../sampling/xoshiro";
import { eigSym, orthonormalise } from "./linalg";
import { fitMixture } from "./mixture";
import { Proposal } from "./proposal";

/** Largest E for which the fit decomposes the E x E covariance itself (else subspace iteration). */
const EXPLICIT_MAX_E = 128;
/** Subspace iterations of the fit. */
const SUBSPACE_ITERS = 4;
/** Extra vectors of the subspace iteration beyond the rank sought. */
const OVERSAMPLE = 4;
/** Eigenvalues must leave the Marchenko–Pastur band by this factor to count. */
const BAND_SLACK = 1.1;
/** Covariance directions are sought only with an ESS of at least this times E. */
const COV_MIN_ESS_PER_DIM = 2;

/**
 * The lower triangle (k <= j) of the weighted Gram matrix: T[j E + k] += sum_i w_i Y[i, j] Y[i, k]
 * over the rows of `Y` (n x E) in order, w_i = 0 skipped. Reference of the core's `weightedGram`.
 */
export function weightedGramJs(Y: Float64Array, n: number, E: number, w: Float64Array, T: Float64Array): void {
  for (let i = 0; i < n; i++) {
    const wi = w[i];
    if (wi === 0) continue;
    const o = i * E;
    for (let j = 0; j < E; j++) {
      const a = wi * Y[o + j];
      const row = j * E;
      for (let k = 0; k <= j; k++) T[row + k] += a * Y[o + k];
    }
  }
}

/**
 * Fits a {@link Proposal} to points `X` (n x E standardised latents) of weights `w` (summing to 1)
 * and Kish ESS `nEff` (the method of this file's comment).
 */
export function fitProposal(X: Float32Array, w: Float64Array, n: number, nEff: number, E: number, maxRank: number, maxComponents: number, rng: Rng): Proposal {
  if (!(nEff > 1) || maxRank < 1) return Proposal.prior(E);
  const mu = new Float64Array(E);
  for (let i = 0; i < n; i++) {
    const a = w[i];
    if (a === 0) continue;
    const o = i * E;
    for (let j = 0; j < E; j++) mu[j] += a * X[o + j];
  }
  let mu2 = 0;
  for (let j = 0; j < E; j++) mu2 += mu[j] * mu[j];
  // Positive-part James–Stein: shrink the mean toward the prior's 0 by (E - 2) / (nEff |mu|^2).
  const js = E > 2 ? Math.max(0, 1 - (E - 2) / (nEff * mu2)) : 1;
  const dirs: Float64Array[] = [];
  if (js > 0 && mu2 > 0) {
    const inv = 1 / Math.sqrt(mu2);
    dirs.push(Float64Array.from(mu, (v) => v * inv));
  }
  const want = maxRank - dirs.length;
  if (want > 0 && nEff >= COV_MIN_ESS_PER_DIM * E && E > dirs.length) {
    // Centred points as float64 (the covariance operator's input).
    const Y = new Float64Array(n * E);
    for (let i = 0; i < n; i++) for (let j = 0; j < E; j++) Y[i * E + j] = X[i * E + j] - mu[j];
    // The eigenproblem of P (S - I) P (P off the mean direction, S the weighted covariance): Jacobi
    // for E <= EXPLICIT_MAX_E, else Rayleigh–Ritz on a randomised subspace iteration's basis Q.
    let Q: Float64Array;
    let kk: number;
    let T: Float64Array;
    if (E <= EXPLICIT_MAX_E) {
      kk = E;
      Q = new Float64Array(E * E);
      for (let j = 0; j < E; j++) Q[j * E + j] = 1;
      T = new Float64Array(E * E);
      (nativeExport<typeof weightedGramJs>("weightedGram") ?? weightedGramJs)(Y, n, E, w, T);
      for (let j = 0; j < E; j++) {
        T[j * E + j] -= 1;
        for (let k = 0; k < j; k++) T[k * E + j] = T[j * E + k];
      }
      for (const d of dirs) {
        const Td = new Float64Array(E);
        let dTd = 0;
        for (let j = 0; j < E; j++) {
          let s = 0;
          for (let k = 0; k < E; k++) s += T[j * E + k] * d[k];
          Td[j] = s;
          dTd += d[j] * s;
        }
        for (let j = 0; j < E; j++) for (let k = 0; k < E; k++) T[j * E + k] += -Td[j] * d[k] - d[j] * Td[k] + dTd * d[j] * d[k];
      }
    } else {
      const k = Math.min(E - dirs.length, want + OVERSAMPLE);
      Q = fillNormalZiggurat(rng, new Float64Array(k * E));
      kk = orthonormalise(Q, E, k, dirs);
      const proj = new Float64Array(n);
      const applyA = (src: Float64Array, dst: Float64Array, cols: number): void => {
        dst.fill(0, 0, cols * E);
        for (let c = 0; c < cols; c++) {
          const q = src.subarray(c * E, (c + 1) * E);
          for (let i = 0; i < n; i++) {
            const o = i * E;
            let s = 0;
            for (let j = 0; j < E; j++) s += Y[o + j] * q[j];
            proj[i] = s * w[i];
          }
          const out = dst.subarray(c * E, (c + 1) * E);
          for (let i = 0; i < n; i++) {
            const p = proj[i];
            if (p === 0) continue;
            const o = i * E;
            for (let j = 0; j < E; j++) out[j] += p * Y[o + j];
          }
          for (let j = 0; j < E; j++) out[j] -= q[j];
          for (const a of dirs) {
            let d = 0;
            for (let j = 0; j < E; j++) d += a[j] * out[j];
            for (let j = 0; j < E; j++) out[j] -= d * a[j];
          }
        }
      };
      const AQ = new Float64Array(k * E);
      for (let it = 0; it < SUBSPACE_ITERS && kk > 0; it++) {
        applyA(Q, AQ, kk);
        Q.set(AQ.subarray(0, kk * E));
        kk = orthonormalise(Q, E, kk, dirs);
      }
      T = new Float64Array(kk * kk);
      if (kk > 0) {
        applyA(Q, AQ, kk);
        for (let a = 0; a < kk; a++) {
          for (let b = 0; b < kk; b++) {
            let s = 0;
            for (let j = 0; j < E; j++) s += Q[a * E + j] * AQ[b * E + j];
            T[a * kk + b] = s;
          }
        }
        for (let a = 0; a < kk; a++) for (let b = 0; b < a; b++) T[a * kk + b] = T[b * kk + a] = 0.5 * (T[a * kk + b] + T[b * kk + a]);
      }
    }
    if (kk > 0) {
      const { values, vectors } = eigSym(T, kk);
      // Marchenko–Pastur band of the sample covariance of nEff points of N(0, I_E).
      const g = Math.sqrt(E / nEff);
      const lo = g < 1 ? (1 - g) ** 2 / BAND_SLACK : 0;
      const hi = (1 + g) ** 2 * BAND_SLACK;
      const picked = Array.from(values, (theta, i) => ({ lambda: 1 + theta, i }))
        .filter((e) => e.lambda > 0 && (e.lambda < lo || e.lambda > hi))
        .sort((p, q) => Math.abs(Math.log(q.lambda)) - Math.abs(Math.log(p.lambda)) || p.i - q.i)
        .slice(0, want);
      for (const { i } of picked) {
        const d = new Float64Array(E);
        for (let a = 0; a < kk; a++) {
          const c = vectors[a * kk + i];
          for (let j = 0; j < E; j++) d[j] += c * Q[a * E + j];
        }
        let nrm = 0;
        for (let j = 0; j < E; j++) nrm += d[j] * d[j];
        const inv = 1 / Math.sqrt(nrm);
        for (let j = 0; j < E; j++) d[j] *= inv;
        dirs.push(d);
      }
    }
  }
  const r = dirs.length;
  if (r === 0) return Proposal.prior(E);
  const V = new Float64Array(r * E);
  dirs.forEach((d, a) => V.set(d, a * E));
  // Coordinates of the points in the subspace; the mixture is fitted there.
  const P = new Float64Array(n * r);
  for (let i = 0; i < n; i++) {
    const o = i * E;
    for (let a = 0; a < r; a++) {
      let s = 0;
      for (let j = 0; j < E; j++) s += V[a * E + j] * X[o + j];
      P[i * r + a] = s;
    }
  }
  const shift = new Float64Array(r); // moves the mixture's mean by the James–Stein shrinkage
  for (let a = 0; a < r; a++) {
    let s = 0;
    for (let j = 0; j < E; j++) s += V[a * E + j] * mu[j];
    shift[a] = (js - 1) * s;
  }
  const comps = fitMixture(P, w, n, r, nEff, maxComponents).map((c) => {
    for (let a = 0; a < r; a++) c.m[a] += shift[a];
    return c;
  });
  return new Proposal(E, r, V, comps);
}
