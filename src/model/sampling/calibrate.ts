/**
 * Calibrated generation: a pool of generated rows is weighted so that its 1-way and 2-way
 * marginals match the model's given marginals, and the rows asked for are drawn from the pool by
 * those weights (sampling importance resampling, Rubin 1987, with calibration weights instead of
 * density ratios).
 *
 * 1. Pool: M ~ {@link CALIBRATION_POOL_FACTOR} x n rows, {@link CALIBRATION_ROWS_PER_LATENT} per
 *    latent (`calibrated-draw.ts` `calibrationPool`).
 * 2. Weights: bounded raking, i.e. iterative proportional fitting of row weights (Deming &
 *    Stephan, Ann. Math. Stat. 11, 1940): for each given marginal in turn, every row's weight is
 *    multiplied by target(cell) / current(cell) of its cell; a sweep visits every marginal once
 *    (2-way first, 1-way last). Raking converges to the weights closest to uniform in KL divergence
 *    that match the marginals (Deville & Särndal, JASA 87, 1992): the pairwise maximum-entropy
 *    correction of the generator. Weights are bounded at `bound` / M (bounded calibration): a row
 *    past the bound is held at it and the mass it could not take is spread over the other rows of
 *    its cell. One step never multiplies a weight by less than {@link RAKING_MIN_RATIO}.
 * 3. Draw: n distinct rows by systematic sampling with inclusion probabilities proportional to
 *    the weights (Madow, Ann. Math. Stat. 20, 1949), capped at 1: with bound <= the pool factor
 *    no row is drawn twice.
 * The SDK leaves calibration off for private metadata: it would fit the marginals' noise.
 */
import type { MarginalTargets } from "../generator/targets";

/** Pool rows per row asked for. */
export const CALIBRATION_POOL_FACTOR = 2;

/** Pool rows per latent: rows of one latent are independent given it, each drawn from the model. */
export const CALIBRATION_ROWS_PER_LATENT = 3;

/** Raking sweeps of the calibrated draw (`calibrated-draw.ts`; other raking defaults to 10). */
export const CALIBRATION_SWEEPS = 4;

/** One marginal to calibrate to. */
export interface CalibrationMarginal {
  /** Feature index of the table's rows. */
  f: number;
  /** Feature index of the table's columns, or -1 for a 1-way marginal. */
  g: number;
  /** K_g (1 for a 1-way marginal): a row's cell is `code_f * kg + code_g`. */
  kg: number;
  /** Target probabilities per cell, K_f x kg row-major, summing to 1. */
  probs: Float64Array;
}

/** Options of {@link rakingWeights}. */
export interface RakingOptions {
  /** Passes over all marginals. Default 10. */
  sweeps?: number;
  /** Largest weight as a multiple of 1/M (> 1). Default {@link CALIBRATION_POOL_FACTOR}. */
  bound?: number;
  /** Smallest factor one step may apply, in (0, 1]. Default {@link RAKING_MIN_RATIO}. */
  minRatio?: number;
  /** Weights to start from (M non-negative values, not all 0; scaled to sum 1). Default uniform. */
  initial?: ArrayLike<number>;
  /** The last sweeps (exact) spread mass held back at the bound over the cell's other rows. */
  exactSweeps?: number;
  /** Native core only: run on the process-wide compute pool (default) or the calling thread. */
  parallel?: boolean;
}

/** Raking of the calibrated draw on the calling thread alone: a pass is too short to share. */
export const CALIBRATION_RAKING_PARALLEL = false;

/**
 * Exact sweeps of the calibrated draw: only the last spreads clipped mass; a cell left short by
 * clipping gets the rest at its next visit.
 */
export const CALIBRATION_EXACT_SWEEPS = 1;

/**
 * Smallest factor one raking step applies: without it, rows in a cell of target 0 drop to 0 at
 * once, and a cell of another marginal whose rows all died could never be filled again.
 */
export const RAKING_MIN_RATIO = 0.1;

/** A model's training targets as marginals: every given pair (from the pair blocks), then 1-way. */
export function calibrationMarginals(t: MarginalTargets): CalibrationMarginal[] {
  const { cardinalities: K, offsets } = t.layout;
  const out: CalibrationMarginal[] = [];
  for (const b of t.blocks) {
    const w = b.c1 - b.c0;
    for (const [f, g] of b.pairs) {
      const kg = K[g];
      const col0 = offsets[g] - b.c0;
      const probs = new Float64Array(K[f] * kg);
      let s = 0;
      for (let i = 0; i < K[f]; i++) {
        for (let j = 0; j < kg; j++) {
          const v = b.target[i * w + col0 + j];
          probs[i * kg + j] = v;
          s += v;
        }
      }
      if (s > 0) for (let c = 0; c < probs.length; c++) probs[c] /= s;
      out.push({ f, g, kg, probs });
    }
  }
  for (let f = 0; f < K.length; f++) {
    out.push({ f, g: -1, kg: 1, probs: Float64Array.from(t.oneWay.subarray(offsets[f], offsets[f + 1])) });
  }
  return out;
}

/**
 * Bounded raking weights of a pool (module comment); `columns`: M codes per feature.
 * @returns M weights summing to 1, each at most `bound / M`.
 * @throws RangeError for an empty pool, ragged columns, sweeps or exactSweeps < 0, bound <= 1 or
 *   minRatio outside (0, 1].
 */
export function rakingWeights(columns: readonly ArrayLike<number>[], marginals: readonly CalibrationMarginal[], opts: RakingOptions = {}): Float64Array {
  const steps = rakingSweeps(columns, marginals, opts);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/**
 * Rows per block of the raking's sums: sums are taken per block and added in block order, so the
 * native raking, summing blocks on several threads, gives the same bits.
 */
export const RAKING_BLOCK_ROWS = 16384;

/** Raking's settings with their defaults, checked. @throws RangeError as {@link rakingWeights}. */
export function rakingSettings(columns: readonly ArrayLike<number>[], opts: RakingOptions): { M: number; sweeps: number; bound: number; minRatio: number; exactSweeps: number } {
  const M = columns[0]?.length ?? 0;
  if (M === 0) throw new RangeError("raking needs at least one row");
  if (columns.some((c) => c.length !== M)) throw new RangeError("every feature needs one code per row");
  const sweeps = opts.sweeps ?? 10;
  const bound = opts.bound ?? CALIBRATION_POOL_FACTOR;
  if (!(Number.isInteger(sweeps) && sweeps >= 0)) throw new RangeError("sweeps must be an integer >= 0");
  if (!(bound > 1)) throw new RangeError("bound must be > 1");
  const minRatio = opts.minRatio ?? RAKING_MIN_RATIO;
  if (!(minRatio > 0 && minRatio <= 1)) throw new RangeError("minRatio must be in (0, 1]");
  const exact = opts.exactSweeps ?? sweeps;
  if (!(Number.isInteger(exact) && exact >= 0)) throw new RangeError("exactSweeps must be an integer >= 0");
  const exactSweeps = Math.min(exact, sweeps);
  if (opts.initial) {
    if (opts.initial.length !== M) throw new RangeError("initial must hold one weight per row");
    if (!(blockSum(opts.initial, M) > 0)) throw new RangeError("initial weights must have a positive sum");
  }
  return { M, sweeps, bound, minRatio, exactSweeps };
}

/** x[0] + ... + x[M-1] in the block order of {@link RAKING_BLOCK_ROWS}. */
function blockSum(x: ArrayLike<number>, M: number): number {
  let s = 0;
  for (let b0 = 0; b0 < M; b0 += RAKING_BLOCK_ROWS) {
    const b1 = Math.min(M, b0 + RAKING_BLOCK_ROWS);
    let part = 0;
    for (let r = b0; r < b1; r++) part += x[r];
    s += part;
  }
  return s;
}

/**
 * {@link rakingWeights} one sweep at a time (yields the sweeps done, returns the weights), so a
 * shared thread can yield; the native raking's bit-exact reference. @throws RangeError at `next()`.
 */
export function* rakingSweeps(
  columns: readonly ArrayLike<number>[],
  marginals: readonly CalibrationMarginal[],
  opts: RakingOptions = {},
): Generator<number, Float64Array, void> {
  const { M, sweeps, bound, minRatio, exactSweeps } = rakingSettings(columns, opts);
  const B = RAKING_BLOCK_ROWS;
  const w = new Float64Array(M).fill(1 / M);
  if (opts.initial) {
    const s = blockSum(opts.initial, M);
    for (let r = 0; r < M; r++) w[r] = opts.initial[r] / s;
  }
  const blocks = Math.ceil(M / B);
  const blockTotal = new Float64Array(blocks);
  const cell = new Int32Array(M);
  let total = 1;
  for (let s = 0; s < sweeps; s++) {
    const exact = s >= sweeps - exactSweeps;
    for (const m of marginals) {
      const a = columns[m.f];
      const b = m.g >= 0 ? columns[m.g] : undefined;
      const C = m.probs.length;
      const cur = new Float64Array(C);
      const part = new Float64Array(C);
      for (let k = 0; k < blocks; k++) {
        const r1 = Math.min(M, (k + 1) * B);
        part.fill(0);
        if (b) {
          const kg = m.kg;
          for (let r = k * B; r < r1; r++) {
            const c = a[r] * kg + b[r];
            cell[r] = c;
            part[c] += w[r];
          }
        } else {
          for (let r = k * B; r < r1; r++) {
            const c = a[r];
            cell[r] = c;
            part[c] += w[r];
          }
        }
        for (let c = 0; c < C; c++) cur[c] += part[c];
      }
      // Cells no pool row falls in cannot be filled: their mass goes to the others in proportion.
      let reachable = 0;
      for (let c = 0; c < C; c++) if (cur[c] > 0) reachable += m.probs[c];
      if (!(reachable > 0)) continue;
      const ratio = new Float64Array(C);
      for (let c = 0; c < C; c++) ratio[c] = cur[c] > 0 ? Math.max(minRatio, (m.probs[c] * total) / (reachable * cur[c])) : 0;
      const cap = (bound * total) / M;
      const deficit = new Float64Array(C);
      const free = new Float64Array(C);
      const partDeficit = new Float64Array(C);
      const partFree = new Float64Array(C);
      let clipped = false;
      for (let k = 0; k < blocks; k++) {
        const r1 = Math.min(M, (k + 1) * B);
        partDeficit.fill(0);
        partFree.fill(0);
        let t = 0;
        for (let r = k * B; r < r1; r++) {
          const c = cell[r];
          let x = w[r] * ratio[c];
          if (x > cap) {
            partDeficit[c] += x - cap;
            x = cap;
            clipped = true;
          } else {
            partFree[c] += x;
          }
          w[r] = x;
          t += x;
        }
        blockTotal[k] = t;
        for (let c = 0; c < C; c++) {
          deficit[c] += partDeficit[c];
          free[c] += partFree[c];
        }
      }
      if (clipped && exact) {
        // The mass clipped in a cell goes to the cell's rows below the bound, in proportion.
        const boost = new Float64Array(C);
        for (let c = 0; c < C; c++) boost[c] = deficit[c] > 0 && free[c] > 0 ? 1 + deficit[c] / free[c] : 1;
        for (let k = 0; k < blocks; k++) {
          const r1 = Math.min(M, (k + 1) * B);
          let t = blockTotal[k];
          for (let r = k * B; r < r1; r++) {
            const f = boost[cell[r]];
            const x = w[r];
            if (f !== 1 && x < cap) {
              const y = Math.min(cap, x * f);
              w[r] = y;
              t += y - x;
            }
          }
          blockTotal[k] = t;
        }
      }
      total = 0;
      for (let k = 0; k < blocks; k++) total += blockTotal[k];
    }
    yield s + 1;
  }
  if (!(total > 0)) return new Float64Array(M).fill(1 / M);
  // Normalise; clipping may have lowered the total, so clip at bound / M until none passes.
  const cap = bound / M;
  for (let pass = 0; pass < 50; pass++) {
    const s = blockSum(w, M);
    let over = false;
    for (let r = 0; r < M; r++) {
      w[r] /= s;
      if (w[r] > cap) over = true;
    }
    if (!over) break;
    for (let r = 0; r < M; r++) if (w[r] > cap) w[r] = cap;
  }
  return w;
}

/**
 * Systematic sampling of n row indices with inclusion probabilities proportional to `weights`
 * (Madow 1949): pi_i = n w_i / sum(w), capped at 1 with the excess spread over the other rows;
 * row i is drawn once per integer k with u + k (u in [0, 1)) in its slice of the cumulative pi.
 * With fewer than n positive weights the uncapped pi are used, so heavy rows repeat.
 * @returns n indices, increasing. @throws RangeError for n < 1, u outside [0, 1), no weight > 0.
 */
export function systematicSample(weights: ArrayLike<number>, n: number, u: number): Int32Array {
  const M = weights.length;
  if (!(Number.isInteger(n) && n >= 1)) throw new RangeError("n must be a positive integer");
  if (!(u >= 0 && u < 1)) throw new RangeError("u must be in [0, 1)");
  let sum = 0;
  let positive = 0;
  let last = 0;
  for (let i = 0; i < M; i++) {
    const v = weights[i];
    if (v > 0) {
      sum += v;
      positive++;
      last = i;
    }
  }
  if (!(sum > 0)) throw new RangeError("systematic sampling needs a positive weight");
  const pi = new Float64Array(M);
  for (let i = 0; i < M; i++) pi[i] = weights[i] > 0 ? (n * weights[i]) / sum : 0;
  if (positive >= n) {
    for (let pass = 0; pass < 100; pass++) {
      let excess = 0;
      let rest = 0;
      for (let i = 0; i < M; i++) {
        if (pi[i] > 1) {
          excess += pi[i] - 1;
          pi[i] = 1;
        } else if (pi[i] < 1) rest += pi[i];
      }
      if (excess <= 1e-9 * n || !(rest > 0)) break;
      const scale = 1 + excess / rest;
      for (let i = 0; i < M; i++) if (pi[i] < 1) pi[i] *= scale;
    }
  }
  const out = new Int32Array(n);
  let acc = 0;
  let i = 0;
  for (let k = 0; k < n; k++) {
    const t = u + k;
    while (i < last && acc + pi[i] <= t) acc += pi[i++];
    out[k] = i;
  }
  return out;
}
