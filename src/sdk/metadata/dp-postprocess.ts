/**
 * Post-processing of `./dp`'s noisy marginals (free under DP): the pairs the measured tree implies
 * ({@link impliedPairs}) and raking a pair to its 1-way estimates ({@link rake}).
 */
import { mutualInformation } from "./marginals";

/** A pair's joint distribution implied by the measured tree (compressed domains, row-major). */
export interface ImpliedPair {
  i: number;
  j: number;
  P: Float64Array;
  /** Its mutual information (nats), to rank implied pairs. */
  mi: number;
}

/**
 * Joint distributions of the unmeasured pairs under the tree-structured model of the measured
 * ones (the maximum-entropy distribution with those marginals, which MST's Private-PGM estimate
 * is): along the tree path i = v0 - v1 - ... - vk = j, P(v0, vk) = diag(p_v0) C(v0->v1) ...
 * C(vk-1->vk), C(a->b)[x, y] = P(b = y | a = x) from the measured pair (the 1-way estimate of b
 * where a = x has no mass). Pairs in different trees of a forest are independent: p_i (x) p_j.
 * @param K compressed cardinalities; `p1` compressed 1-way estimates; `measured` keyed "i,j", i < j.
 */
export function impliedPairs(F: number, K: readonly number[], p1: readonly Float64Array[], measured: ReadonlyMap<string, Float64Array>): ImpliedPair[] {
  const adj: number[][] = Array.from({ length: F }, () => []);
  for (const key of measured.keys()) {
    const [i, j] = key.split(",").map(Number);
    adj[i].push(j);
    adj[j].push(i);
  }
  /** C(a->b) as a Ka x Kb row-major matrix. */
  const conditional = (a: number, b: number): Float64Array => {
    const lo = Math.min(a, b);
    const hi = Math.max(a, b);
    const P = measured.get(`${lo},${hi}`)!;
    const C = new Float64Array(K[a] * K[b]);
    for (let x = 0; x < K[a]; x++) {
      let s = 0;
      for (let y = 0; y < K[b]; y++) s += a === lo ? P[x * K[b] + y] : P[y * K[a] + x];
      for (let y = 0; y < K[b]; y++) {
        const v = a === lo ? P[x * K[b] + y] : P[y * K[a] + x];
        C[x * K[b] + y] = s > 0 ? v / s : p1[b][y];
      }
    }
    return C;
  };
  const out: ImpliedPair[] = [];
  for (let i = 0; i < F; i++) {
    // BFS from i: parent pointers give the tree path to every j in i's tree
    const parent = new Int32Array(F).fill(-1);
    parent[i] = i;
    const queue = [i];
    while (queue.length) {
      const u = queue.shift()!;
      for (const v of adj[u]) if (parent[v] < 0) {
        parent[v] = u;
        queue.push(v);
      }
    }
    for (let j = i + 1; j < F; j++) {
      if (measured.has(`${i},${j}`)) continue;
      let P: Float64Array;
      if (parent[j] < 0) {
        P = new Float64Array(K[i] * K[j]);
        for (let x = 0; x < K[i]; x++) for (let y = 0; y < K[j]; y++) P[x * K[j] + y] = p1[i][x] * p1[j][y];
      } else {
        const path = [j];
        while (path[path.length - 1] !== i) path.push(parent[path[path.length - 1]]);
        path.reverse(); // i ... j
        let J = new Float64Array(K[i] * K[i]);
        for (let x = 0; x < K[i]; x++) J[x * K[i] + x] = p1[i][x];
        for (let s = 0; s + 1 < path.length; s++) {
          const a = path[s];
          const b = path[s + 1];
          const C = conditional(a, b);
          const next = new Float64Array(K[i] * K[b]);
          for (let x = 0; x < K[i]; x++) {
            for (let z = 0; z < K[a]; z++) {
              const w = J[x * K[a] + z];
              if (w === 0) continue;
              for (let y = 0; y < K[b]; y++) next[x * K[b] + y] += w * C[z * K[b] + y];
            }
          }
          J = next;
        }
        P = normalise(J);
      }
      out.push({ i, j, P, mi: mutualInformation(P, K[i], K[j]) });
    }
  }
  return out;
}

export function normalise(v: Float64Array): Float64Array {
  let s = 0;
  for (let k = 0; k < v.length; k++) {
    if (!(v[k] > 0)) v[k] = 0;
    s += v[k];
  }
  if (s > 0) for (let k = 0; k < v.length; k++) v[k] /= s;
  else v.fill(1 / v.length);
  return v;
}

/**
 * Iterative proportional fitting of a non-negative Ka x Kb table (row-major, sums to 1) to row
 * margin `r` and column margin `c` (each summing to 1), in place.
 */
export function rake(P: Float64Array, Ka: number, Kb: number, r: ArrayLike<number>, c: ArrayLike<number>, rounds = 50): void {
  const col = new Float64Array(Kb);
  for (let t = 0; t < rounds; t++) {
    for (let i = 0; i < Ka; i++) {
      let s = 0;
      for (let j = 0; j < Kb; j++) s += P[i * Kb + j];
      const f = s > 0 ? r[i] / s : 0;
      for (let j = 0; j < Kb; j++) P[i * Kb + j] *= f;
    }
    col.fill(0);
    for (let i = 0; i < Ka; i++) for (let j = 0; j < Kb; j++) col[j] += P[i * Kb + j];
    for (let j = 0; j < Kb; j++) {
      const f = col[j] > 0 ? c[j] / col[j] : 0;
      for (let i = 0; i < Ka; i++) P[i * Kb + j] *= f;
    }
  }
}
