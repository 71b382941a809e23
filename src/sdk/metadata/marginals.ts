/**
 * Marginals of an encoded table (one code array per feature, `codes[f][r]` in [0, K_f)) and the
 * choice of the 2-way marginals to send (the server trains on these alone: docs/decisions.md "A
 * marginal-matching model"). Selection follows MST (McKenna, Miklau & Sheldon, J. Privacy and
 * Confidentiality 2021): the Chow–Liu tree (IEEE Trans. Inf. Theory 14(3), 1968), the maximum
 * spanning tree by pairwise mutual information, the best tree approximation in KL divergence;
 * unlike MST, the strongest other pairs follow while the cell budget allows (the generator uses
 * every marginal it is given).
 */

/** One code per row for one feature. */
export type CodeArray = Uint8Array | Uint16Array | Int32Array;

/** A pair of feature indices, i < j (table order). */
export type Pair = [number, number];

/**
 * Joint counts of two features, row-major: `out[i*Kb + j]` = #rows with a = i and b = j (reuses
 * `out`, zeroed, when given and long enough).
 */
export function jointCounts(a: CodeArray, Ka: number, b: CodeArray, Kb: number, out?: Float64Array): Float64Array {
  const cells = Ka * Kb;
  const c = out && out.length >= cells ? out.subarray(0, cells) : new Float64Array(cells);
  c.fill(0);
  const n = a.length;
  for (let r = 0; r < n; r++) c[a[r] * Kb + b[r]]++;
  return c;
}

/** 1-way counts of one feature: Float64Array of length K. */
export function counts1(a: CodeArray, K: number): Float64Array {
  const c = new Float64Array(K);
  for (let r = 0; r < a.length; r++) c[a[r]]++;
  return c;
}

/** Mutual information in nats of a row-major Ka x Kb joint count table (0 when empty). */
export function mutualInformation(counts: ArrayLike<number>, Ka: number, Kb: number): number {
  const pa = new Float64Array(Ka);
  const pb = new Float64Array(Kb);
  let n = 0;
  for (let i = 0; i < Ka; i++) {
    for (let j = 0; j < Kb; j++) {
      const v = counts[i * Kb + j];
      pa[i] += v;
      pb[j] += v;
      n += v;
    }
  }
  if (n === 0) return 0;
  let mi = 0;
  for (let i = 0; i < Ka; i++) {
    if (pa[i] === 0) continue;
    for (let j = 0; j < Kb; j++) {
      const v = counts[i * Kb + j];
      if (v > 0) mi += (v / n) * Math.log((v * n) / (pa[i] * pb[j]));
    }
  }
  return Math.max(0, mi);
}

/** Result of {@link selectPairs}. */
export interface PairSelection {
  /** Selected pairs, sorted by (i, j). */
  pairs: Pair[];
  /** The (maximum spanning) tree edges among them, in the order Kruskal took them. */
  tree: Pair[];
  /** Total cells sum K_i*K_j over the selected pairs (<= budget). */
  cells: number;
}

/**
 * Chooses the 2-way marginals to send within `budget` cells: all pairs when they fit; else
 * Kruskal by descending MI (ties: smaller i, then j), skipping pairs that overflow (a forest when
 * the tree does not fit), then the other pairs by MI while they fit. `mi(i, j)`, i < j, is called
 * only in the second case.
 */
export function selectPairs(cards: readonly number[], mi: (i: number, j: number) => number, budget: number): PairSelection {
  const F = cards.length;
  const all: Pair[] = [];
  let total = 0;
  for (let i = 0; i < F; i++) for (let j = i + 1; j < F; j++) {
    all.push([i, j]);
    total += cards[i] * cards[j];
  }
  if (total <= budget) return { pairs: all, tree: spanningTreeOf(all, F), cells: total };

  const weighted = all.map(([i, j]) => ({ i, j, w: mi(i, j), cells: cards[i] * cards[j] }));
  weighted.sort((x, y) => y.w - x.w || x.i - y.i || x.j - y.j);
  const parent = Array.from({ length: F }, (_, k) => k);
  const find = (k: number): number => {
    while (parent[k] !== k) k = parent[k] = parent[parent[k]];
    return k;
  };
  const chosen = new Set<number>();
  const tree: Pair[] = [];
  let cells = 0;
  weighted.forEach((e, idx) => {
    const ri = find(e.i);
    const rj = find(e.j);
    if (ri === rj || cells + e.cells > budget) return;
    parent[ri] = rj;
    chosen.add(idx);
    tree.push([e.i, e.j]);
    cells += e.cells;
  });
  weighted.forEach((e, idx) => {
    if (chosen.has(idx) || cells + e.cells > budget) return;
    chosen.add(idx);
    cells += e.cells;
  });
  const pairs = [...chosen].map((idx): Pair => [weighted[idx].i, weighted[idx].j]);
  pairs.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  return { pairs, tree, cells };
}

/** A spanning tree contained in `pairs` (used when all pairs are sent: any tree is contained). */
function spanningTreeOf(pairs: Pair[], F: number): Pair[] {
  const parent = Array.from({ length: F }, (_, k) => k);
  const find = (k: number): number => {
    while (parent[k] !== k) k = parent[k] = parent[parent[k]];
    return k;
  };
  const tree: Pair[] = [];
  for (const [i, j] of pairs) {
    const ri = find(i);
    const rj = find(j);
    if (ri !== rj) {
      parent[ri] = rj;
      tree.push([i, j]);
    }
  }
  return tree;
}

/**
 * Total variation distance ½ Σ_x |P(x) − Q(x)| between two encoded tables' normalised marginals,
 * per feature subset (any arity; row counts may differ; codes < cards[f]). O(|subsets| · (n_p +
 * n_q)), dense scratch (sparse over 2^24 cells); exact counts, so a table against itself gives 0.
 */
export function marginalTvds(p: CodeArray[], q: CodeArray[], cards: readonly number[], subsets: readonly number[][]): Float64Array {
  const np = p[0]?.length ?? 0;
  const nq = q[0]?.length ?? 0;
  const out = new Float64Array(subsets.length);
  let maxCells = 1;
  for (const s of subsets) maxCells = Math.max(maxCells, cellsOf(s, cards));
  const DENSE = 1 << 24;
  const accP = new Float64Array(Math.min(maxCells, DENSE));
  const accQ = new Float64Array(Math.min(maxCells, DENSE));
  const touched = new Int32Array(np + nq);
  const idxP = new Float64Array(np);
  const idxQ = new Float64Array(nq);
  const wp = np ? 1 / np : 0;
  const wq = nq ? 1 / nq : 0;
  subsets.forEach((s, k) => {
    flatIndex(p, s, cards, idxP);
    flatIndex(q, s, cards, idxQ);
    if (cellsOf(s, cards) <= DENSE) {
      // integer counts per table, |P - Q| over the cells either table touched
      let t = 0;
      for (let r = 0; r < np; r++) {
        const x = idxP[r];
        if (accP[x]++ === 0 && accQ[x] === 0) touched[t++] = x;
      }
      for (let r = 0; r < nq; r++) {
        const x = idxQ[r];
        if (accQ[x]++ === 0 && accP[x] === 0) touched[t++] = x;
      }
      let sum = 0;
      for (let m = 0; m < t; m++) {
        const x = touched[m];
        sum += Math.abs(accP[x] * wp - accQ[x] * wq);
        accP[x] = 0;
        accQ[x] = 0;
      }
      out[k] = sum / 2;
    } else {
      const m = new Map<number, [number, number]>();
      for (let r = 0; r < np; r++) {
        const e = m.get(idxP[r]);
        if (e) e[0]++;
        else m.set(idxP[r], [1, 0]);
      }
      for (let r = 0; r < nq; r++) {
        const e = m.get(idxQ[r]);
        if (e) e[1]++;
        else m.set(idxQ[r], [0, 1]);
      }
      let sum = 0;
      for (const [a, b] of m.values()) sum += Math.abs(a * wp - b * wq);
      out[k] = sum / 2;
    }
  });
  return out;
}

function cellsOf(s: readonly number[], cards: readonly number[]): number {
  let c = 1;
  for (const f of s) c *= cards[f];
  return c;
}

function flatIndex(codes: CodeArray[], s: readonly number[], cards: readonly number[], out: Float64Array): void {
  const n = out.length;
  const first = codes[s[0]];
  for (let r = 0; r < n; r++) out[r] = first[r];
  for (let k = 1; k < s.length; k++) {
    const c = codes[s[k]];
    const K = cards[s[k]];
    for (let r = 0; r < n; r++) out[r] = out[r] * K + c[r];
  }
}
