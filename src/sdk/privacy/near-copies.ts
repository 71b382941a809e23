/**
 * Privacy check without a holdout (docs/api.md "Near-copies without a holdout"): does the
 * synthetic table hold more near-copies of real rows than real rows are of each other? Made for
 * small tables, where a holdout is too small to be a reference or not given, and where one
 * near-copy is one real person.
 *
 * Cell keys: per compared column, one integer key per row of each table, one key space per
 * column; equal keys are equal cells, a negative key (a value the real table never has) equals
 * nothing. `evaluate` passes the trimmed text's value id for categorical columns and the REAL
 * table's code for numerical and datetime ones (identifiers left out): a generator draws numbers
 * inside a bin, so a row copying a person's bins is a near-copy even when the decimals differ.
 *
 * Definitions:
 * - Near-copy: equal to some reference row on all compared columns but at most one (Hamming
 *   distance <= 1). Exact: per column j, a hash table of the reference rows with j masked (an
 *   additive row hash, so a masked hash is one subtraction), every match confirmed key by key.
 *   O(F · (n_ref + n_query)) probes.
 * - Split reference: the real table shuffled (seeded) and cut 50/50 into A (floor(n/2) rows) and
 *   B; the reference share is the share of B rows nearly copying an A row (coincidental
 *   duplicates). The synthetic rows are checked against the same A (`synthetic_share_at_half`),
 *   so both shares have a reference of the same size. Averaged over `splits` splits, at most
 *   `sample` synthetic and B rows each. `synthetic_share` (against the whole real table) is the
 *   number a user reads; it is not compared with the split's.
 * - DCR share (after MOSTLY AI's QA report; Platzer & Reutterer, Frontiers in Big Data 4, 2021):
 *   Hamming distance to the closest row of A (at most 2,000 of them) for sampled synthetic and B
 *   rows; t = the B rows' median distance; the share of rows closer than t, ties ½. B scores about
 *   0.5 by construction (`dcr_split_share`); rows sitting closer to real rows score more.
 * - Verdict (`passed`): near-copies pass when `synthetic_share_at_half` <= `split_share` + 2
 *   binomial standard errors at the split's rate, taken as (count + 1) / (rows + 2) (Laplace's
 *   rule, so a split with no near-copy still leaves room for noise). DCR passes when `dcr_share`
 *   <= `dcr_split_share` + 2 standard errors. DCR enters the verdict only when each half has at
 *   least {@link DCR_MIN_HALF_ROWS} rows: on smaller tables nearly every row is unique and the
 *   distances tie, so the share measures typicality, not copying (docs/generality.md).
 */
import type { CodeArray } from "../metadata/marginals";
import { closestDistance } from "./dcr";
import { Rng, deriveSeed, mix32 } from "../generate/sfc32";

/** Rows each half needs before the DCR share enters the verdict (file header). */
export const DCR_MIN_HALF_ROWS = 200;

/** Options of {@link nearCopyCheck}. */
export interface NearCopyOptions {
  /** Seeds the splits and samples. Default 0. */
  seed?: number;
  /** 50/50 splits of the real table averaged. Default 5. */
  splits?: number;
  /** Synthetic and B rows checked against half A per split (all when fewer). Default 20,000. */
  sample?: number;
  /** Synthetic rows and B rows sampled per split for the DCR share. Default 1,000. */
  dcrSample?: number;
}

/** Result of {@link nearCopyCheck}: `near_copies` of the evaluation report. */
export interface NearCopyCheck {
  /** Columns compared (identifiers excluded). */
  columns: string[];
  /** Synthetic rows nearly copying some real row (file header), and their share. */
  synthetic_near_copies: number;
  synthetic_share: number;
  /** Synthetic rows near-copying a row of half A, splits averaged (compared with the split's). */
  synthetic_share_at_half: number;
  /** B rows near-copying a row of A, averaged over the splits: the reference. */
  split_share: number;
  /** The noise margin of the near-copy verdict (2 binomial standard errors; file header). */
  near_copy_margin: number;
  /** Share of sampled synthetic rows closer to A than the median B row (ties ½), split mean. */
  dcr_share: number;
  /** The same share for the sampled B rows (about 0.5): the reference. */
  dcr_split_share: number;
  dcr_margin: number;
  /** Rows of each half (A, B), splits, synthetic rows sampled per split for the DCR share. */
  half_rows: [number, number];
  splits: number;
  dcr_sampled_rows: number;
  /** Near-copies no more frequent than in the split (within the margin). */
  near_copies_passed: boolean;
  /** Synthetic rows no closer to real rows than real rows are to each other (within the margin). */
  dcr_passed: boolean;
  /** The DCR share enters the verdict: each half has at least {@link DCR_MIN_HALF_ROWS} rows. */
  dcr_in_verdict: boolean;
  /** The verdict: near-copies passed, and DCR passed where it enters the verdict. */
  passed: boolean;
}

/** Row-major packing of key arrays, rows `rows` (default all). */
export function pack(keys: readonly CodeArray[], rows?: ArrayLike<number>): Int32Array {
  const F = keys.length;
  const n = rows ? rows.length : (keys[0]?.length ?? 0);
  const out = new Int32Array(n * F);
  for (let f = 0; f < F; f++) {
    const c = keys[f];
    for (let k = 0; k < n; k++) out[k * F + f] = c[rows ? rows[k] : k];
  }
  return out;
}

/** Hash contribution of key `v` in column `f` (summed over a row's columns). */
function cellHash(v: number, f: number): number {
  return mix32(Math.imul(v + 0x632be5ab, 0x9e3779b1) ^ Math.imul(f + 1, 0x85ebca77));
}

/** Per row, the sum (mod 2^32) of its cells' hashes. */
function rowHashes(P: Int32Array, n: number, F: number): Uint32Array {
  const h = new Uint32Array(n);
  for (let r = 0, o = 0; r < n; r++, o += F) {
    let s = 0;
    for (let f = 0; f < F; f++) s = (s + cellHash(P[o + f], f)) >>> 0;
    h[r] = s;
  }
  return h;
}

/**
 * Marks the rows of `Q` (nQ rows of F keys, row-major) equal to some row of `R` on all columns
 * but at most one; a negative key equals nothing. With F <= 1 every row is marked.
 * @returns one flag per query row.
 */
export function nearCopyFlags(Q: Int32Array, nQ: number, R: Int32Array, nR: number, F: number): Uint8Array {
  const out = new Uint8Array(nQ);
  if (nR === 0) return out;
  if (F <= 1) return out.fill(1);
  const hQ = rowHashes(Q, nQ, F);
  const hR = rowHashes(R, nR, F);
  // Columns holding a negative key per query row: -1 none, -2 several, else the column.
  const neg = new Int32Array(nQ).fill(-1);
  for (let r = 0, o = 0; r < nQ; r++, o += F) {
    for (let f = 0; f < F; f++) if (Q[o + f] < 0) neg[r] = neg[r] === -1 ? f : -2;
  }
  let cap = 8;
  while (cap < 2 * nR) cap *= 2;
  const mask = cap - 1;
  const slot = new Int32Array(cap);
  const slotHash = new Uint32Array(cap);
  /** Rows `a` of X and `b` of Y agree on every column but `j` (negative keys never agree). */
  const same = (X: Int32Array, a: number, Y: Int32Array, b: number, j: number): boolean => {
    const xo = a * F;
    const yo = b * F;
    for (let f = 0; f < F; f++) {
      if (f === j) continue;
      const v = X[xo + f];
      if (v < 0 || v !== Y[yo + f]) return false;
    }
    return true;
  };
  for (let j = 0; j < F; j++) {
    slot.fill(-1);
    for (let r = 0; r < nR; r++) {
      const h = (hR[r] - cellHash(R[r * F + j], j)) >>> 0;
      for (let i = mix32(h) & mask; ; i = (i + 1) & mask) {
        const s = slot[i];
        if (s < 0) {
          slot[i] = r;
          slotHash[i] = h;
          break;
        }
        if (slotHash[i] === h && same(R, s, R, r, j)) break; // a repeat under this mask
      }
    }
    for (let q = 0; q < nQ; q++) {
      if (out[q] || neg[q] === -2 || (neg[q] >= 0 && neg[q] !== j)) continue;
      const h = (hQ[q] - cellHash(Q[q * F + j], j)) >>> 0;
      for (let i = mix32(h) & mask; ; i = (i + 1) & mask) {
        const s = slot[i];
        if (s < 0) break;
        if (slotHash[i] === h && same(Q, q, R, s, j)) {
          out[q] = 1;
          break;
        }
      }
    }
  }
  return out;
}

/**
 * Share of the rows of `query` equal to some row of `reference` on all columns but at most one
 * (key arrays per column, same key spaces; a negative key equals nothing).
 * @returns the count and the share (0 for an empty query).
 */
export function nearCopyShare(reference: readonly CodeArray[], query: readonly CodeArray[]): { count: number; share: number } {
  const F = reference.length;
  const nR = reference[0]?.length ?? 0;
  const nQ = query[0]?.length ?? 0;
  const flags = nearCopyFlags(pack(query), nQ, pack(reference), nR, F);
  let count = 0;
  for (const x of flags) count += x;
  return { count, share: nQ ? count / nQ : 0 };
}

/** A seeded permutation of [0, n) (Fisher–Yates). */
export function shuffled(n: number, seed: number): Int32Array {
  const idx = new Int32Array(n);
  for (let i = 0; i < n; i++) idx[i] = i;
  const rng = new Rng(seed);
  for (let i = n - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    const t = idx[i];
    idx[i] = idx[j];
    idx[j] = t;
  }
  return idx;
}

/**
 * The split reference of {@link nearCopyCheck} alone: its `split_share` for the same seed, splits
 * and sample. O(splits · F · n) hash probes, memory O(F · n).
 * @throws RangeError for fewer than 2 rows.
 */
export function splitNearCopyShare(real: readonly CodeArray[], opts: Pick<NearCopyOptions, "seed" | "splits" | "sample"> = {}): number {
  const n = real[0]?.length ?? 0;
  if (n < 2) throw new RangeError("the split share needs at least 2 rows");
  const seed = opts.seed ?? 0;
  const splits = Math.max(1, opts.splits ?? 5);
  const sample = Math.max(1, opts.sample ?? 20_000);
  const nA = n >> 1;
  const nB = n - nA;
  let count = 0;
  let rows = 0;
  for (let s = 0; s < splits; s++) {
    const perm = shuffled(n, deriveSeed(seed, 1, s));
    const A = pack(real, perm.subarray(0, nA));
    const qB = nB <= sample ? pack(real, perm.subarray(nA)) : pack(real, Array.from(shuffled(nB, deriveSeed(seed, 6, s)).subarray(0, sample), (k) => perm[nA + k]));
    const fB = nearCopyFlags(qB, Math.min(nB, sample), A, nA, real.length);
    for (const x of fB) count += x;
    rows += fB.length;
  }
  return count / rows;
}

/** Share of `d` below `t`, values equal to `t` counting ½. */
function belowShare(d: Int32Array, t: number): number {
  let s = 0;
  for (const x of d) s += x < t ? 1 : x === t ? 0.5 : 0;
  return d.length ? s / d.length : 0;
}

/** The median of integer distances (the lower middle value for an even count). */
function median(d: Int32Array): number {
  const s = Int32Array.from(d).sort();
  return s.length ? s[(s.length - 1) >> 1] : 0;
}

/**
 * The near-copy check without a holdout (file header).
 * @param real, synth  per compared column, one key per row (same key space per column).
 * @param columns      the compared columns' names (for the report).
 * @throws RangeError when the real table has fewer than 2 rows or the synthetic table none.
 */
export function nearCopyCheck(
  real: readonly CodeArray[],
  synth: readonly CodeArray[],
  columns: readonly string[],
  opts: NearCopyOptions = {},
): NearCopyCheck {
  const F = real.length;
  const n = real[0]?.length ?? 0;
  const nS = synth[0]?.length ?? 0;
  if (n < 2 || nS < 1) throw new RangeError("the near-copy check needs at least 2 real rows and 1 synthetic row");
  const seed = opts.seed ?? 0;
  const splits = Math.max(1, opts.splits ?? 5);
  const dcrSample = Math.max(1, opts.dcrSample ?? 1000);
  const sample = Math.max(1, opts.sample ?? 20_000);
  const S = pack(synth);
  const full = nearCopyFlags(S, nS, pack(real), n, F);
  let synthNear = 0;
  for (const x of full) synthNear += x;

  const nA = n >> 1;
  const nB = n - nA;
  let atHalf = 0;
  let refCount = 0;
  let refRows = 0;
  let dcrS = 0;
  let dcrB = 0;
  let sampled = 0;
  for (let s = 0; s < splits; s++) {
    const perm = shuffled(n, deriveSeed(seed, 1, s));
    const A = pack(real, perm.subarray(0, nA));
    const B = pack(real, perm.subarray(nA));
    // Against A: at most `sample` synthetic rows and B rows (all of them on small tables).
    const qS = nS <= sample ? S : pack(synth, shuffled(nS, deriveSeed(seed, 5, s)).subarray(0, sample));
    const qB = nB <= sample ? B : pack(real, Array.from(shuffled(nB, deriveSeed(seed, 6, s)).subarray(0, sample), (k) => perm[nA + k]));
    const fS = nearCopyFlags(qS, Math.min(nS, sample), A, nA, F);
    const fB = nearCopyFlags(qB, Math.min(nB, sample), A, nA, F);
    let c = 0;
    for (const x of fS) c += x;
    atHalf += c / fS.length;
    c = 0;
    for (const x of fB) c += x;
    refCount += c;
    refRows += fB.length;
    // DCR: at most 2,000 rows of A, at most dcrSample synthetic and B rows.
    const aRows = shuffled(nA, deriveSeed(seed, 2, s)).subarray(0, Math.min(nA, 2000));
    const Aref = pack(real, Array.from(aRows, (k) => perm[k]));
    const nAref = aRows.length;
    const sRows = shuffled(nS, deriveSeed(seed, 3, s)).subarray(0, Math.min(nS, dcrSample));
    const bRows = shuffled(nB, deriveSeed(seed, 4, s)).subarray(0, Math.min(nB, dcrSample));
    const dS = new Int32Array(sRows.length);
    const dB = new Int32Array(bRows.length);
    sRows.forEach((r, k) => (dS[k] = closestDistance(S, r * F, Aref, nAref, F)));
    bRows.forEach((r, k) => (dB[k] = closestDistance(B, r * F, Aref, nAref, F)));
    const t = median(dB);
    dcrS += belowShare(dS, t);
    dcrB += belowShare(dB, t);
    sampled = sRows.length;
  }
  const synthetic_share_at_half = atHalf / splits;
  const split_share = refCount / refRows;
  const p0 = (refCount + 1) / (refRows + 2);
  const near_copy_margin = 2 * Math.sqrt((p0 * (1 - p0)) / Math.min(nS, sample));
  const dcr_share = dcrS / splits;
  const dcr_split_share = dcrB / splits;
  const pd = Math.min(Math.max(dcr_split_share, 0.05), 0.95);
  const dcr_margin = 2 * Math.sqrt((pd * (1 - pd)) / sampled);
  const near_copies_passed = synthetic_share_at_half <= split_share + near_copy_margin;
  const dcr_passed = dcr_share <= dcr_split_share + dcr_margin;
  const dcr_in_verdict = nA >= DCR_MIN_HALF_ROWS;
  return {
    columns: [...columns],
    synthetic_near_copies: synthNear,
    synthetic_share: synthNear / nS,
    synthetic_share_at_half,
    split_share,
    near_copy_margin,
    dcr_share,
    dcr_split_share,
    dcr_margin,
    half_rows: [nA, nB],
    splits,
    dcr_sampled_rows: sampled,
    near_copies_passed,
    dcr_passed,
    dcr_in_verdict,
    passed: near_copies_passed && (dcr_passed || !dcr_in_verdict),
  };
}

/** Result of {@link holdoutNearCopyCheck}: `holdout_near_copies` of the evaluation report. */
export interface HoldoutNearCopyCheck {
  /** Share of the checked synthetic rows nearly copying a TRAIN row (the reference cut to equal size). */
  train_share: number;
  /** The same share against HOLDOUT rows, which the generator never saw: the reference. */
  holdout_share: number;
  /** 2 binomial standard errors at the holdout share, taken as (count + 1) / (rows + 2). */
  margin: number;
  /** TRAIN and HOLDOUT rows compared against (the smaller table's size), synthetic rows checked. */
  reference_rows: number;
  synthetic_rows: number;
  /** No more near-copies of TRAIN than of HOLDOUT, within the margin. */
  passed: boolean;
}

/**
 * Near-copies against a holdout: the synthetic rows of a generator fitted on TRAIN, counted as
 * near-copies (all columns but at most one equal) of TRAIN and of HOLDOUT, both cut to the smaller
 * one's size by a seeded sample. A generator that learned the distribution nearly copies unseen
 * rows as often as its training rows; one that copies people does so more often for TRAIN. The
 * near-copy form of the holdout DCR comparison (Platzer & Reutterer, Frontiers in Big Data 4,
 * 2021; SDMetrics' DCROverfittingProtection); unlike a split of the real table it holds on tables
 * whose every coherent row matches a real row on all columns but one (a complete grid of states
 * and groups with one figure per cell), where a real table's halves share no cell.
 * @param train, holdout, synth  per compared column, one key per row, one key space per column.
 * @throws RangeError when TRAIN, HOLDOUT or the synthetic table has no row.
 */
export function holdoutNearCopyCheck(
  train: readonly CodeArray[],
  holdout: readonly CodeArray[],
  synth: readonly CodeArray[],
  opts: Pick<NearCopyOptions, "seed" | "sample"> = {},
): HoldoutNearCopyCheck {
  const F = train.length;
  const nT = train[0]?.length ?? 0;
  const nH = holdout[0]?.length ?? 0;
  const nS = synth[0]?.length ?? 0;
  if (nT < 1 || nH < 1 || nS < 1) throw new RangeError("the holdout near-copy check needs TRAIN, HOLDOUT and synthetic rows");
  const seed = opts.seed ?? 0;
  const sample = Math.max(1, opts.sample ?? 20_000);
  const m = Math.min(nT, nH);
  const cut = (keys: readonly CodeArray[], n: number, stream: number): Int32Array =>
    n === m ? pack(keys) : pack(keys, shuffled(n, deriveSeed(seed, stream, 0)).subarray(0, m));
  const k = Math.min(nS, sample);
  const Q = nS <= sample ? pack(synth) : pack(synth, shuffled(nS, deriveSeed(seed, 9, 0)).subarray(0, k));
  const count = (flags: Uint8Array): number => flags.reduce((a, x) => a + x, 0);
  const cT = count(nearCopyFlags(Q, k, cut(train, nT, 7), m, F));
  const cH = count(nearCopyFlags(Q, k, cut(holdout, nH, 8), m, F));
  const p0 = (cH + 1) / (k + 2);
  const margin = 2 * Math.sqrt((p0 * (1 - p0)) / k);
  return {
    train_share: cT / k,
    holdout_share: cH / k,
    margin,
    reference_rows: m,
    synthetic_rows: k,
    passed: cT / k <= cH / k + margin,
  };
}

/** One sentence on the check for the report and CLI: both shares, or what failed and what to do. */
export function nearCopyVerdict(c: NearCopyCheck): string {
  const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;
  if (c.passed) {
    return (
      `Privacy: no more near-copies of real rows than a split of the real table ` +
      `(${pct(c.synthetic_share_at_half)} vs ${pct(c.split_share)} against half of the real rows)` +
      (c.dcr_in_verdict
        ? `, and synthetic rows are no closer to real rows than real rows are to each other.`
        : `; too few rows for the distance check to count (${c.half_rows[0]} per half).`)
    );
  }
  const what: string[] = [];
  if (!c.near_copies_passed) {
    what.push(
      `${c.synthetic_near_copies} synthetic rows (${pct(c.synthetic_share)}) equal a real row on all compared columns but at most one, ` +
        `more than a split of the real table gives (${pct(c.synthetic_share_at_half)} vs ${pct(c.split_share)} against half of the real rows)`,
    );
  }
  if (!c.dcr_passed && c.dcr_in_verdict) {
    what.push(`synthetic rows sit closer to real rows than real rows sit to each other (DCR share ${c.dcr_share.toFixed(2)} vs ${c.dcr_split_share.toFixed(2)})`);
  }
  return `Privacy warning: ${what.join("; ")}. Do not publish these rows as they are: raise the rare threshold (--rare-threshold), coarsen the columns, or drop quasi-identifying columns.`;
}
