/**
 * Resampling of weighted candidates. Systematic resampling (Kitagawa, "Monte Carlo filter and
 * smoother", JCGS 5(1), 1996; Carpenter, Clifford & Fearnhead 1999; {@link systematicCounts})
 * picks a group's rows from its candidates by weight, and the fit's points when there are more
 * than it uses; a calibrated group's rows are drawn without repeats (`calibrate.ts`
 * `systematicSample`, {@link countsOf} turns its picks into counts).
 */

/** Counts per index of a list of picked indices (`systematicSample`'s output) over `M` candidates. */
export function countsOf(picked: Int32Array, M: number): Int32Array {
  const counts = new Int32Array(M);
  for (const i of picked) counts[i]++;
  return counts;
}

/**
 * Systematic resampling (Kitagawa 1996): `n` picks from normalised weights `w` (summing to 1) with
 * start `u` in [0, 1); an index is picked about n * w times (floor or ceil), one of weight 0 never.
 * Unlike `calibrate.ts` `systematicSample`, which draws distinct rows, heavy indices repeat.
 * @returns how many times each index is picked (length w.length, sum n).
 * @throws RangeError when no weight is positive.
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
