/**
 * Resampling of weighted candidates: systematic resampling (Kitagawa, JCGS 5(1), 1996; Carpenter,
 * Clifford & Fearnhead 1999) picks a group's rows and the fit's points by weight.
 */

/** Counts per index over `M` candidates of a list of picked indices (`systematicSample`'s). */
export function countsOf(picked: Int32Array, M: number): Int32Array {
  const counts = new Int32Array(M);
  for (const i of picked) counts[i]++;
  return counts;
}

/**
 * Systematic resampling: `n` picks from weights `w` (summing to 1) with start `u` in [0, 1); an
 * index is picked floor or ceil of n * w times, so heavy indices repeat (unlike `calibrate.ts`
 * `systematicSample`). @returns counts per index (sum n). @throws RangeError if no weight > 0.
 */
export function systematicCounts(w: ArrayLike<number>, n: number, u: number): Int32Array {
  const counts = new Int32Array(w.length);
  let acc = 0;
  let i = 0;
  let last = -1;
  for (let k = 0; k < w.length; k++) if (w[k] > 0) last = k;
  if (last < 0) throw new RangeError("systematic resampling needs a positive weight");
  for (let k = 0; k < n; k++) {
    const t = (u + k) / n;
    while (i < last && (acc + w[i] <= t || w[i] === 0)) acc += w[i++];
    counts[i]++;
  }
  return counts;
}
