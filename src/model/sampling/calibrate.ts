/**
 * Calibrated generation: a pool of generated rows is weighted so that its 1-way and 2-way
 * marginals match the model's given marginals, and the rows asked for are drawn from the pool by
 * those weights (sampling importance resampling, Rubin 1987, with calibration weights instead of
 * density ratios).
 *
 * 1. Pool: M ~ {@link CALIBRATION_POOL_FACTOR} x n rows, {@link CALIBRATION_ROWS_PER_LATENT} per
 *    latent of a plain draw of M / that many rows (`calibrated-draw.ts` `calibrationPool`): one
 *    forward pass gives a latent's per-feature distributions, and each of its rows is drawn from
 *    them with its own uniforms.
 * 2. Weights: bounded raking. Raking is iterative proportional fitting of row weights (Deming &
 *    Stephan, "On a least squares adjustment of a sampled frequency table when the expected
 *    marginal totals are known", Ann. Math. Stat. 11, 1940): for each given marginal in turn,
 *    every row's weight is multiplied by target(cell) / current(cell) of the cell the row falls in;
 *    a sweep visits every marginal once (2-way first, 1-way last), {@link RakingOptions.sweeps}
 *    sweeps are run ({@link CALIBRATION_SWEEPS} for the calibrated draw). Raking converges to the weights closest to uniform in KL divergence that
 *    match the marginals (the calibration estimator of Deville & Särndal, "Calibration estimators
 *    in survey sampling", JASA 87, 1992), i.e. the generator's distribution tilted by one factor per
 *    marginal cell: the pairwise maximum-entropy correction of the generator. Weights are bounded
 *    at `bound` times the uniform weight 1/M (Deville & Särndal's bounded calibration): a row whose
 *    new weight would pass the bound is held at it, and the mass it could not take is spread over
 *    the other rows of the same cell, so each step stays exact where it can. One step never
 *    multiplies a weight by less than {@link RAKING_MIN_RATIO}, so no row is ruled out for good.
 * 3. Draw: n distinct rows by systematic sampling with inclusion probabilities proportional to
 *    the weights (Madow, "On the theory of systematic sampling, II", Ann. Math. Stat. 20, 1949),
 *    inclusion probabilities capped at 1; with bound <= the pool factor no row is drawn twice.
 *
 * Why: the generator matches the given marginals only approximately (its 2-way TVD on discretized
 * Adult is ~0.025 against a 0.017 floor for resampling the table itself), and a logistic
 * regression trained on its rows loses what the residual misses. Measured with
 * `npm run bench -- fidelity` (default config, seed 0, 39,073 rows against TRAIN, two runs; the
 * plain draw is the same model and seed): 1-way / 2-way / 3-way TVD 0.0059-0.0060 / 0.0242-0.0245
 * / 0.0648-0.0652 plain, 0.0025-0.0026 / 0.0135-0.0138 / 0.0488-0.0489 calibrated; TSTR ROC AUC
 * 0.9103-0.9108 -> 0.9167-0.9169; exact copies of TRAIN rows 2.19-2.24% (HOLDOUT itself: 2.28%).
 * Raw Adult: 2-way 0.0274 -> 0.0175, 3-way 0.0742 -> 0.0583. Unbounded raking sampled with
 * replacement does as well on TVD but repeats rows (a quarter of the sample) and takes exact
 * copies past HOLDOUT's rate.
 *
 * Cost: n forward passes (the plain draw's) and M draws of the sampling kernel, plus sweeps x
 * (2-way + 1-way marginals) raking steps (480 steps for raw Adult's 120 marginals) of one pass
 * over the pool each in the clip-only sweeps and two in the exact ones
 * ({@link CALIBRATION_EXACT_SWEEPS}); an earlier version did M forward passes and 10 exact
 * sweeps. Measured in core-seconds per 1,000,000 rows with `node dist/bench/calibrate.js --cost`
 * (docs/compute.md "The calibrated draw's cost"): 3.0x the plain draw before, 1.4x after (the
 * budget is about 1.5x: docs/decisions.md "The calibrated draw's cost"). The raking runs in the
 * native core when the model does (`calibrate-native.ts`: the same weights bit for bit, in the
 * order of {@link RAKING_BLOCK_ROWS}), else here. On the 2-core target machine at load average
 * ~1, for a 200,000-row pool of Adult's medium model (`node dist/bench/calibrate.js`): 2.2 s here,
 * 0.31-0.32 s in the core on 2 threads, 0.59 s on one. Over HTTP (`npm run bench -- generate`,
 * 100,000 rows, the same build with and without the core's raking, alternating): 83,000-86,500
 * calibrated rows/s against 29,500-29,800 with the raking here, 0.32-0.35 of the plain draw's
 * 245,000-260,000 instead of 0.11-0.12. Most of what is left is the pool's two plain draws.
 *
 * Under differential privacy the given marginals are noisy, and matching them exactly fits the
 * noise: at epsilon = 1 on Adult (in-process, one model) 3-way TVD went from 0.118 to 0.121, so
 * the SDK leaves calibration off for private metadata.
 */
import type { MarginalTargets } from "../generator/targets";

/** Pool rows per row asked for. */
export const CALIBRATION_POOL_FACTOR = 2;

/**
 * Pool rows per latent (`calibrated-draw.ts` `calibrationPool`): one forward pass gives a latent's
 * per-feature distributions, from which this many rows are drawn with uniforms of their own, so a
 * pool of {@link CALIBRATION_POOL_FACTOR} x n rows takes 2n / R forward passes. Rows of one latent
 * are independent given it and each is a draw from the model. 3 since issue 25's last round
 * (docs/compute.md "Three rows per latent": 2 before), which took the forward passes of a
 * calibrated draw below those of the plain draw of the same n rows.
 */
export const CALIBRATION_ROWS_PER_LATENT = 3;

/**
 * Raking sweeps of the calibrated draw (`calibrated-draw.ts` `sampleCalibrated`; other raking defaults to
 * 10). Measured on raw Adult's pool (medium model, 39,073 rows drawn from 78,146, seeds 0 and 1,
 * mean 2-way TVD of the drawn rows against the given marginals): 1 sweep 0.0196-0.0199, 2
 * 0.0183-0.0189, 3 0.0179-0.0181, 4 0.0176-0.0178, 6 0.0175-0.0176, 10 0.0171-0.0172 (no
 * calibration: 0.0284); the fidelity benchmark's figures are in docs/compute.md. Each sweep is
 * about a tenth of what 10 cost, so 4 sweeps cut the raking to 0.4 of it.
 *
 * Tried in issue 25's last round and kept at 4 (docs/compute.md "Three rows per latent"): 3 sweeps
 * cut the raking by a fifth (149-161 against 189-195 ms for a 200,000-row pool) but raised the
 * drawn rows' mean 2-way TVD against the given marginals (0.01532 against 0.01507) and the
 * fidelity benchmark's 2-way TVD (0.0157 against 0.0155, six runs against three); three rows per
 * latent paid for the fourth sweep instead.
 */
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
  /** Largest weight as a multiple of the uniform weight 1/M (> 1). Default {@link CALIBRATION_POOL_FACTOR}. */
  bound?: number;
  /** Smallest factor one step may apply to a weight, in (0, 1]. Default {@link RAKING_MIN_RATIO}. */
  minRatio?: number;
  /** Weights to start from (M non-negative values, not all 0; scaled to sum 1). Default uniform. */
  initial?: ArrayLike<number>;
  /**
   * The last sweeps whose steps spread the mass held back at the bound over the cell's other rows
   * (exact steps; more than `sweeps`: all of them); the sweeps before only clip (one pass over the pool per step instead
   * of two). Default: every sweep ({@link CALIBRATION_EXACT_SWEEPS} for the calibrated draw).
   */
  exactSweeps?: number;
  /**
   * Native core only (`calibrate-native.ts`): whether its passes over the pool run as tasks of the
   * process-wide compute pool (default) or on the calling thread alone; the same weights either
   * way. {@link CALIBRATION_RAKING_PARALLEL} for the calibrated draw.
   */
  parallel?: boolean;
}

/**
 * Whether the calibrated draw's raking runs on the compute pool's threads
 * ({@link RakingOptions.parallel}): no. A pass over a 200,000-row pool is 13 blocks of rows, 7
 * tasks, ~0.2 ms of work: on 2 threads one waits for the other's last task and for the folds
 * between passes, spinning, and a busy host preempts either. On raw Adult's pool (medium model,
 * 100,000 rows asked for, 4 sweeps of which 1 exact, 2-core machine at load average 7-8, median of
 * 7): 3.3-3.8 core-s per 1M rows on the calling thread against 4.3-4.4 on 2 threads, at the same
 * wall time (6-7 s per 1M rows); a server's other requests use the other cores.
 */
export const CALIBRATION_RAKING_PARALLEL = false;

/**
 * Exact sweeps of the calibrated draw ({@link RakingOptions.exactSweeps}): only the last of its
 * {@link CALIBRATION_SWEEPS} sweeps spreads clipped mass; the first three clip without spreading,
 * which leaves a cell with rows at the bound short of its target until the next visit, where its
 * other rows take the rest (the spreading pass was half of the raking's work). On raw Adult's
 * pool (medium model, 39,073 rows drawn from 78,146 after the rule repair, seeds 0, 1, 2; mean
 * 1-way / 2-way TVD of the drawn rows against the given marginals): 4 exact sweeps 0.0024 /
 * 0.0130, 1 exact sweep of 4 0.0024 / 0.0131, 3 exact sweeps (no fourth) 0.0025 / 0.0133, 4
 * sweeps of which none exact 0.0031 / 0.0131 (no calibration: 0.0065 / 0.0246). Cost: 5 passes
 * over the pool per marginal instead of 8.
 */
export const CALIBRATION_EXACT_SWEEPS = 1;

/**
 * Smallest factor one raking step applies. Without a floor, rows in a cell whose target is 0 (most
 * cells of a sparse 100 x 100 table) drop to weight 0 at the first step, and a cell of another
 * marginal whose rows all died can never be filled again: on Adult, 10 bounded sweeps left the
 * 1-way error at 0.0049 (uniform weights: 0.0050). With 0.1 such rows still fall by 10x per visit
 * (below 1e-9 of the uniform weight after ten sweeps) but keep their cells open: 1-way 0.0004,
 * 2-way 0.0108 (floors 0.01 and 1e-6: 0.0006 / 0.0112 and 0.0009 / 0.0116).
 */
export const RAKING_MIN_RATIO = 0.1;

/**
 * The marginals of a model's training targets in calibration form: every given pair (from the
 * pair blocks), then every feature's 1-way marginal.
 */
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
 * Bounded raking weights of a pool of rows (method in the module comment).
 * @param columns one code array per feature, M rows each, codes of feature f in [0, K_f).
 * @param marginals targets over those features ({@link calibrationMarginals}).
 * @returns M weights summing to 1, each at most `bound / M`.
 * @throws RangeError for an empty pool, columns of different lengths, sweeps < 0, exactSweeps < 0,
 *   bound <= 1 or minRatio outside (0, 1].
 */
export function rakingWeights(columns: readonly ArrayLike<number>[], marginals: readonly CalibrationMarginal[], opts: RakingOptions = {}): Float64Array {
  const steps = rakingSweeps(columns, marginals, opts);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/**
 * Rows per block of the raking's sums. Every sum over rows (a cell's weight, its clipped and free
 * mass, the total weight, the final normalisation's sum, the initial weights' sum) is taken per
 * block of this many consecutive rows in row order from 0, and the block sums are added in block
 * order from 0; the total of a step continues, per block, from the update pass into the pass that
 * spreads clipped mass. The native raking (`calibrate-native.ts`) sums its blocks on several
 * threads and adds them in the same order, so both give the same bits whatever the thread count.
 * A pool of at most this many rows is summed in plain row order.
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
 * {@link rakingWeights} one sweep at a time, so a caller on a shared thread can yield between
 * sweeps: yields the number of sweeps done after each, returns the weights. The reference of the
 * native raking (`calibrate-native.ts`), which gives the same bits: sums in the order of
 * {@link RAKING_BLOCK_ROWS}.
 * @throws RangeError as {@link rakingWeights}, at the first `next()`.
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
      // Target mass the pool can carry: cells no pool row falls in cannot be filled, and their
      // mass is spread over the others in proportion.
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
  // Normalise; the total may have drifted down since a weight was clipped, so clip again at
  // bound / M until no weight passes it.
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
 * (Madow 1949): pi_i = n w_i / sum(w), capped at 1 with the excess spread over the other rows
 * (repeated until none passes 1); row i is drawn once for every integer k with u + k in its slice
 * of the cumulative pi. Rows with pi = 1 are always drawn, no row twice. When fewer than n rows
 * have a positive weight, the uncapped pi are used, so heavy rows repeat.
 * @param u the random start, in [0, 1).
 * @returns n indices in increasing order.
 * @throws RangeError when n < 1, u is outside [0, 1), or no weight is positive.
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
