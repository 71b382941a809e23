/**
 * The proposal family: the prior in every direction but a few (a "likelihood-informed subspace",
 * Cui, Martin, Marzouk, Solonen & Spantini, Inverse Problems 30, 2014). In standardised
 * coordinates (u = z / s), q(u) = N(u; 0, I_E) * g(V^T u) / N_r(V^T u; 0, I_r), V (E x r)
 * orthonormal, g a mixture of at most `MAX_COMPONENTS` Gaussians on R^r (fitted in `subspace.ts`,
 * `mixture.ts`). Density ratios live in r dimensions only: the other E - r cancel exactly.
 *
 * The per-candidate arithmetic ({@link mixtureAccumulateJs}, {@link proposalShiftJs}) runs in the
 * native core when loaded (native/src/mixture_binding.cc), bit for bit as these references.
 */
import { nativeExport } from "../compute/native";
import { fillNormalZiggurat, type Rng } from "../sampling/xoshiro";
import { dot } from "./linalg";

/**
 * The deterministic-mixture update of one proposal (reference of the core's `mixtureAccumulate`):
 * for each latent u_i (row i of `x`, n x E), mix[i] += count * q(u_i) / N(u_i; 0, I_E), with the
 * subspace rows `V` (r x E), C = K.length Gaussians of means `M` (C x r), lower Cholesky factors
 * `L` (C x r x r) and log-constants `K` (log weight - log det / 2); the ratio is
 * exp(log g(y) - log N_r(y)), y = V u (Owen & Zhou 2000; Cornuet et al. 2012), in linear space.
 * @returns -1, or the first i whose ratio is not finite (mix[i..] unchanged).
 */
export function mixtureAccumulateJs(
  x: Float32Array,
  n: number,
  E: number,
  V: Float64Array,
  r: number,
  M: Float64Array,
  L: Float64Array,
  K: Float64Array,
  count: number,
  mix: Float64Array,
): number {
  const C = K.length;
  const rr = r * r;
  const u = new Float64Array(r);
  const y = new Float64Array(r);
  const t = new Float64Array(C);
  for (let i = 0; i < n; i++) {
    const off = i * E;
    let uu = 0;
    for (let a = 0; a < r; a++) {
      const s = dot(V, a * E, x, off, E);
      u[a] = s;
      uu += s * s;
    }
    let mx = -Infinity;
    for (let c = 0; c < C; c++) {
      const mo = c * r;
      const lo = c * rr;
      let yy = 0;
      for (let a = 0; a < r; a++) {
        let w = u[a] - M[mo + a];
        for (let b = 0; b < a; b++) w -= L[lo + a * r + b] * y[b];
        w /= L[lo + a * r + a];
        y[a] = w;
        yy += w * w;
      }
      const tc = K[c] - 0.5 * yy;
      t[c] = tc;
      if (tc > mx) mx = tc;
    }
    let s = 0;
    for (let c = 0; c < C; c++) s += Math.exp(t[c] - mx);
    const ratio = s * Math.exp(mx + 0.5 * uu);
    if (!Number.isFinite(ratio)) return i;
    mix[i] += count * ratio;
  }
  return -1;
}

/** One Gaussian of a proposal's subspace mixture: weight, mean m (r), lower Cholesky factor L. */
export interface Component {
  logWeight: number;
  m: Float64Array;
  L: Float64Array;
  logDet: number;
}

export function component(weight: number, m: Float64Array, L: Float64Array, r: number): Component {
  let ld = 0;
  for (let a = 0; a < r; a++) ld += 2 * Math.log(L[a * r + a]);
  return { logWeight: Math.log(weight), m, L, logDet: ld };
}

/** The proposal q of the module comment (r = 0: the prior); `V` r x E, orthonormal rows. */
export class Proposal {
  static prior(E: number): Proposal {
    return new Proposal(E, 0, new Float64Array(0), []);
  }

  /** The components' means (C x r), Cholesky factors (C x r x r), log weight - log det / 2. */
  private readonly flatM: Float64Array;
  private readonly flatL: Float64Array;
  private readonly constant: Float64Array;

  constructor(
    readonly E: number,
    readonly r: number,
    readonly V: Float64Array,
    readonly comps: readonly Component[],
  ) {
    this.flatM = new Float64Array(comps.length * r);
    this.flatL = new Float64Array(comps.length * r * r);
    this.constant = new Float64Array(comps.length);
    comps.forEach((c, i) => {
      this.flatM.set(c.m, i * r);
      this.flatL.set(c.L, i * r * r);
      this.constant[i] = c.logWeight - 0.5 * c.logDet;
    });
  }

  /**
   * mix[i] += count * q(u_i) / N(u_i; 0, I_E) for the `n` latents of `x` (n x E)
   * ({@link mixtureAccumulateJs}). Every mixture holds the prior (its pilot), so mix > 0; a ratio
   * past float64's range (|V^T u| > 37 sd) is refused rather than rounded.
   * @throws Error when a ratio is not finite (a bug, not a bad input).
   */
  accumulate(x: Float32Array, n: number, count: number, mix: Float64Array): void {
    const { r, E, V } = this;
    if (r === 0) {
      for (let i = 0; i < n; i++) mix[i] += count;
      return;
    }
    const native = nativeExport<typeof mixtureAccumulateJs>("mixtureAccumulate");
    const bad = native
      ? native(x, n, E, V, r, this.flatM, this.flatL, this.constant, count, mix)
      : mixtureAccumulateJs(x, n, E, V, r, this.flatM, this.flatL, this.constant, count, mix);
    if (bad >= 0) throw new Error(`proposal density ratio not finite at candidate ${bad}`);
  }

  /**
   * `count` standardised latents of this proposal, in `x` (returned), from `x` holding `count`
   * prior draws: kept off the subspace; inside it, from `rng`, r normals per latent, then (with
   * several components) one uniform per latent picking its component.
   */
  draw(rng: Rng, count: number, x: Float32Array): Float32Array {
    const { r, E, V, comps } = this;
    if (r === 0) return x;
    const eta = fillNormalZiggurat(rng, new Float64Array(count * r));
    const pick = comps.length > 1 ? rng.fillUniform(new Float64Array(count)) : null;
    const which = new Int32Array(count);
    if (pick) {
      for (let i = 0; i < count; i++) {
        let c = 0;
        let v = pick[i];
        while (c < comps.length - 1 && v >= Math.exp(comps[c].logWeight)) v -= Math.exp(comps[c++].logWeight);
        which[i] = c;
      }
    }
    const native = nativeExport<typeof proposalShiftJs>("proposalShift");
    (native ?? proposalShiftJs)(x, count, E, V, r, this.flatM, this.flatL, which, eta);
    return x;
  }
}

/**
 * Moves `count` prior draws (rows of `x`, float32, in place) into the subspace mixture: row i's
 * coordinates V u are replaced by m_c + L_c eta_i, c = `which[i]`, `eta` count x r normals; the
 * part off the subspace is kept. Reference of the core's `proposalShift` (bit for bit).
 */
export function proposalShiftJs(
  x: Float32Array,
  count: number,
  E: number,
  V: Float64Array,
  r: number,
  M: Float64Array,
  L: Float64Array,
  which: Int32Array,
  eta: Float64Array,
): void {
  const t = new Float64Array(r);
  const rr = r * r;
  for (let i = 0; i < count; i++) {
    const mo = which[i] * r;
    const lo = which[i] * rr;
    const o = i * E;
    for (let a = 0; a < r; a++) {
      const p = dot(V, a * E, x, o, E);
      let s = M[mo + a];
      for (let b = 0; b <= a; b++) s += L[lo + a * r + b] * eta[i * r + b];
      t[a] = s - p;
    }
    for (let j = 0; j < E; j++) {
      let s = x[o + j];
      for (let a = 0; a < r; a++) s += t[a] * V[a * E + j];
      x[o + j] = s;
    }
  }
}
