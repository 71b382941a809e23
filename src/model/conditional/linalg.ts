/** The small dense linear algebra of the proposal and its fit, on row-major float64 arrays. */

/** sum_j a[ao + j] * b[bo + j] for j < n, in four independent chains (faster in V8). */
export function dot(a: Float64Array, ao: number, b: Float32Array, bo: number, n: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let j = 0;
  for (; j + 3 < n; j += 4) {
    s0 += a[ao + j] * b[bo + j];
    s1 += a[ao + j + 1] * b[bo + j + 1];
    s2 += a[ao + j + 2] * b[bo + j + 2];
    s3 += a[ao + j + 3] * b[bo + j + 3];
  }
  for (; j < n; j++) s0 += a[ao + j] * b[bo + j];
  return s0 + s1 + (s2 + s3);
}

/** Eigen-decomposition of a small symmetric matrix (cyclic Jacobi): values, column eigenvectors. */
export function eigSym(A: Float64Array, n: number): { values: Float64Array; vectors: Float64Array } {
  const a = Float64Array.from(A);
  const v = new Float64Array(n * n);
  for (let i = 0; i < n; i++) v[i * n + i] = 1;
  for (let sweep = 0; sweep < 100; sweep++) {
    let off = 0;
    let diag = 0;
    for (let p = 0; p < n; p++) {
      diag += a[p * n + p] * a[p * n + p];
      for (let q = p + 1; q < n; q++) off += a[p * n + q] * a[p * n + q];
    }
    if (off <= 1e-30 * Math.max(diag, 1e-300)) break;
    for (let p = 0; p < n; p++) {
      for (let q = p + 1; q < n; q++) {
        const apq = a[p * n + q];
        if (apq === 0) continue;
        const theta = (a[q * n + q] - a[p * n + p]) / (2 * apq);
        const t = (theta >= 0 ? 1 : -1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let k = 0; k < n; k++) {
          const akp = a[k * n + p];
          const akq = a[k * n + q];
          a[k * n + p] = c * akp - s * akq;
          a[k * n + q] = s * akp + c * akq;
        }
        for (let k = 0; k < n; k++) {
          const apk = a[p * n + k];
          const aqk = a[q * n + k];
          a[p * n + k] = c * apk - s * aqk;
          a[q * n + k] = s * apk + c * aqk;
        }
        for (let k = 0; k < n; k++) {
          const vkp = v[k * n + p];
          const vkq = v[k * n + q];
          v[k * n + p] = c * vkp - s * vkq;
          v[k * n + q] = s * vkp + c * vkq;
        }
      }
    }
  }
  const values = new Float64Array(n);
  for (let i = 0; i < n; i++) values[i] = a[i * n + i];
  return { values, vectors: v };
}

/** Lower Cholesky factor of an r x r SPD matrix (eigenvalues clamped to [lo, hi] first). */
export function cholClamped(C: Float64Array, r: number, lo: number, hi: number): Float64Array {
  const { values, vectors } = eigSym(C, r);
  const S = new Float64Array(r * r);
  for (let i = 0; i < r; i++) {
    for (let j = 0; j < r; j++) {
      let s = 0;
      for (let k = 0; k < r; k++) s += vectors[i * r + k] * Math.min(hi, Math.max(lo, values[k])) * vectors[j * r + k];
      S[i * r + j] = s;
    }
  }
  const L = new Float64Array(r * r);
  for (let i = 0; i < r; i++) {
    for (let j = 0; j <= i; j++) {
      let s = S[i * r + j];
      for (let k = 0; k < j; k++) s -= L[i * r + k] * L[j * r + k];
      L[i * r + j] = i === j ? Math.sqrt(Math.max(s, lo)) : s / L[j * r + j];
    }
  }
  return L;
}

/**
 * Orthonormalises the k columns of `Q` (E x k, column c at c * E) in place by modified
 * Gram–Schmidt, also against the unit vectors `against`; vanishing columns become zeros. Returns
 * the number of non-zero columns (they come first).
 */
export function orthonormalise(Q: Float64Array, E: number, k: number, against: readonly Float64Array[]): number {
  let kept = 0;
  for (let c = 0; c < k; c++) {
    const col = Q.subarray(c * E, (c + 1) * E);
    let before = 0;
    for (let j = 0; j < E; j++) before += col[j] * col[j];
    for (let pass = 0; pass < 2; pass++) {
      for (const a of against) {
        let d = 0;
        for (let j = 0; j < E; j++) d += a[j] * col[j];
        for (let j = 0; j < E; j++) col[j] -= d * a[j];
      }
      for (let p = 0; p < kept; p++) {
        const q = Q.subarray(p * E, (p + 1) * E);
        let d = 0;
        for (let j = 0; j < E; j++) d += q[j] * col[j];
        for (let j = 0; j < E; j++) col[j] -= d * q[j];
      }
    }
    let nrm = 0;
    for (let j = 0; j < E; j++) nrm += col[j] * col[j];
    if (!(nrm > 1e-20 * Math.max(before, 1e-300))) continue;
    const inv = 1 / Math.sqrt(nrm);
    const dst = Q.subarray(kept * E, (kept + 1) * E);
    for (let j = 0; j < E; j++) dst[j] = col[j] * inv;
    kept++;
  }
  Q.fill(0, kept * E, k * E);
  return kept;
}
