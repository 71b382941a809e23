/**
 * Privacy check of a synthetic table: does the generator copy its training rows?
 *
 * Distance to closest record (DCR) with a holdout (Platzer & Reutterer, "Holdout-Based Empirical
 * Assessment of Mixed-Type Synthetic Data", Frontiers in Big Data 4, 2021): per synthetic row, the
 * distance to its closest TRAIN and closest HOLDOUT row. A generator that learned the distribution,
 * not the rows, is as close to either, so the share closer to TRAIN is near 1/2; memorisation
 * pushes it towards 1.
 * - Distance: Hamming over the real table's binned codes; a value the real column never had never
 *   matches.
 * - Equal sizes: the larger set would be nearer more often, so both are cut to the smaller one's
 *   size by a seeded sample. Ties count 1/2 each way, so a generator independent of which rows
 *   were TRAIN scores exactly 1/2 in expectation.
 * - Exact nearest neighbour by a linear scan with early exit, on a seeded sample of synthetic rows
 *   (default 2,000). Scanning each set's distinct rows and comparing the rarest-agreeing columns
 *   first speed it up without changing any distance.
 * - Exact copies: ALL synthetic rows are checked for a row equal (trimmed text) to a TRAIN row
 *   (`./copies`: 64-bit hashes of value ids, each match confirmed). The same count over HOLDOUT
 *   rows is the coincidence baseline; `exact_copies_train_at_holdout_size` counts copies among the
 *   first |HOLDOUT| synthetic rows (independent draws, so a fair sample) for equal sizes.
 */
import type { CodeArray } from "../metadata/marginals";
import { exactCopyCounts, type CopyKeys } from "./copies";
import { Rng, deriveSeed, mix32 } from "../generate/sfc32";

export { rowKeys, type CopyKeys, type ScannedRows } from "./copies";

/** Options of {@link privacyCheck}. */
export interface PrivacyCheckOptions {
  /** Synthetic rows sampled for the DCR share. Default 2,000 (all rows when fewer). */
  sample?: number;
  /** Seeds the samples. Default 0. */
  seed?: number;
}

/** Result of {@link privacyCheck}; `privacy` in the evaluation report. */
export interface PrivacyCheck {
  /** Share of sampled synthetic rows closer to TRAIN than to HOLDOUT (ties 1/2); ~0.5 is good. */
  closer_to_train_share: number;
  /** Mean Hamming distance of the sampled synthetic rows to their closest TRAIN / HOLDOUT row. */
  mean_dcr_train: number;
  mean_dcr_holdout: number;
  /** Synthetic rows sampled, and rows per reference set after equalising sizes. */
  sampled_rows: number;
  reference_rows: number;
  /** Synthetic rows (all of them) equal to some TRAIN row, and their share. */
  exact_copies_train: number;
  exact_copies_train_rate: number;
  /** Copies of TRAIN rows among the first min(synthetic, HOLDOUT) synthetic rows. */
  exact_copies_train_at_holdout_size: number;
  /** HOLDOUT rows equal to some TRAIN row, and their share: the baseline. */
  exact_copies_holdout_baseline: number;
  exact_copies_holdout_baseline_rate: number;
}

/** Row-major copy of code arrays, `out[r * F + f]`, of `rows` (default all). */
function pack(codes: readonly CodeArray[], rows?: ArrayLike<number>): Int32Array {
  const F = codes.length;
  const n = rows ? rows.length : (codes[0]?.length ?? 0);
  const out = new Int32Array(n * F);
  for (let f = 0; f < F; f++) {
    const c = codes[f];
    for (let k = 0; k < n; k++) out[k * F + f] = c[rows ? rows[k] : k];
  }
  return out;
}

/** Column indices, least often agreeing first (sum of squared code shares), ties by index. */
function byAgreement(codes: readonly CodeArray[], rows: Int32Array): number[] {
  const agree = codes.map((c) => {
    const counts = new Map<number, number>();
    for (let k = 0; k < rows.length; k++) {
      const v = c[rows[k]];
      counts.set(v, (counts.get(v) ?? 0) + 1);
    }
    let s = 0;
    for (const x of counts.values()) s += x * x;
    return s;
  });
  return agree.map((_, f) => f).sort((a, b) => agree[a] - agree[b] || a - b);
}

/** The distinct rows of a packed table (`n` rows of `F` codes), first occurrences in order. */
function distinctRows(R: Int32Array, n: number, F: number): { rows: Int32Array; n: number } {
  let cap = 8;
  while (cap < 2 * n) cap *= 2;
  const mask = cap - 1;
  const slot = new Int32Array(cap).fill(-1);
  const keep = new Int32Array(n);
  let kept = 0;
  for (let r = 0, ro = 0; r < n; r++, ro += F) {
    let h = 0x9747b28c;
    for (let f = 0; f < F; f++) {
      h = Math.imul(h ^ R[ro + f], 0xcc9e2d51);
      h = Math.imul((h << 13) | (h >>> 19), 5) + 0xe6546b64;
    }
    for (let i = mix32(h) & mask; ; i = (i + 1) & mask) {
      const s = slot[i];
      if (s < 0) {
        slot[i] = r;
        keep[kept++] = r;
        break;
      }
      let f = 0;
      const so = s * F;
      while (f < F && R[so + f] === R[ro + f]) f++;
      if (f === F) break; // a repeat
    }
  }
  if (kept === n) return { rows: R, n };
  const out = new Int32Array(kept * F);
  for (let k = 0; k < kept; k++) out.set(R.subarray(keep[k] * F, keep[k] * F + F), k * F);
  return { rows: out, n: kept };
}

/** `k` distinct indices of [0, n) (all when k >= n), by a seeded partial Fisher–Yates shuffle. */
export function sampleIndices(n: number, k: number, seed: number): Int32Array {
  const idx = new Int32Array(n);
  for (let i = 0; i < n; i++) idx[i] = i;
  if (k >= n) return idx;
  const rng = new Rng(seed);
  for (let i = 0; i < k; i++) {
    const j = i + rng.int(n - i);
    const t = idx[i];
    idx[i] = idx[j];
    idx[j] = t;
  }
  return idx.slice(0, k).sort();
}

/** Exact Hamming distance (early exit) from row `q` (at `qo` in `Q`) to its closest row of `R`. */
export function closestDistance(Q: Int32Array, qo: number, R: Int32Array, nR: number, F: number): number {
  let best = F + 1;
  for (let r = 0, ro = 0; r < nR; r++, ro += F) {
    let d = 0;
    for (let f = 0; f < F; f++) {
      if (Q[qo + f] !== R[ro + f] && ++d >= best) break;
    }
    if (d < best) {
      best = d;
      if (best === 0) break;
    }
  }
  return best;
}

/**
 * The privacy check (file header).
 * @param train, holdout, synth  code arrays per feature (same features, same code spaces).
 * @param keys  for the exact-copy counts: one string key per row ({@link rowKeys}), or the three
 *              scanned tables and compared columns ({@link ScannedRows}; what `evaluate` passes).
 * @throws RangeError when a table is empty.
 */
export function privacyCheck(
  train: readonly CodeArray[],
  holdout: readonly CodeArray[],
  synth: readonly CodeArray[],
  keys: CopyKeys,
  opts: PrivacyCheckOptions = {},
): PrivacyCheck {
  return privacyCheckWithDistances(train, holdout, synth, keys, opts).check;
}

/**
 * {@link privacyCheck}, plus per sampled synthetic row (in row order) its distance to the closest
 * TRAIN and HOLDOUT row of the equal-size samples, for the report's DCR histograms.
 * @throws RangeError when a table is empty.
 */
export function privacyCheckWithDistances(
  train: readonly CodeArray[],
  holdout: readonly CodeArray[],
  synth: readonly CodeArray[],
  keys: CopyKeys,
  opts: PrivacyCheckOptions = {},
): { check: PrivacyCheck; distances: { train: Int32Array; holdout: Int32Array } } {
  const F = train.length;
  const nT = train[0]?.length ?? 0;
  const nH = holdout[0]?.length ?? 0;
  const nS = synth[0]?.length ?? 0;
  if (!(nT && nH && nS)) throw new RangeError("the privacy check needs non-empty train, holdout and synthetic tables");
  const seed = opts.seed ?? 0;
  const m = Math.min(nT, nH);
  const tRows = sampleIndices(nT, m, deriveSeed(seed, 1));
  // Speed only (same distances): rarest-agreeing columns first; reference sets without repeats.
  const order = byAgreement(train, tRows);
  const T = distinctRows(pack(order.map((f) => train[f]), tRows), m, F);
  const H = distinctRows(pack(order.map((f) => holdout[f]), sampleIndices(nH, m, deriveSeed(seed, 2))), m, F);
  const sRows = sampleIndices(nS, Math.max(1, opts.sample ?? 2000), deriveSeed(seed, 3));
  const S = pack(order.map((f) => synth[f]), sRows);
  let closer = 0;
  let sumT = 0;
  let sumH = 0;
  const toTrain = new Int32Array(sRows.length);
  const toHoldout = new Int32Array(sRows.length);
  for (let k = 0; k < sRows.length; k++) {
    const dT = (toTrain[k] = closestDistance(S, k * F, T.rows, T.n, F));
    const dH = (toHoldout[k] = closestDistance(S, k * F, H.rows, H.n, F));
    closer += dT < dH ? 1 : dT === dH ? 0.5 : 0;
    sumT += dT;
    sumH += dH;
  }
  const { copies, copiesAtHoldoutSize, baseline } = exactCopyCounts(keys, nH);
  const check: PrivacyCheck = {
    closer_to_train_share: closer / sRows.length,
    mean_dcr_train: sumT / sRows.length,
    mean_dcr_holdout: sumH / sRows.length,
    sampled_rows: sRows.length,
    reference_rows: m,
    exact_copies_train: copies,
    exact_copies_train_rate: copies / nS,
    exact_copies_train_at_holdout_size: copiesAtHoldoutSize,
    exact_copies_holdout_baseline: baseline,
    exact_copies_holdout_baseline_rate: baseline / nH,
  };
  return { check, distances: { train: toTrain, holdout: toHoldout } };
}
