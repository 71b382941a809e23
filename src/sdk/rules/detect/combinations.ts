/**
 * Fixed combinations (criteria in `./index`, {@link detectRules}): functional dependencies A -> B,
 * then sparse combinations merged into groups; a declared rule's combinations. The same pass over
 * column pairs finds the structural zeros (`./structural-zeros`).
 */
import type { FixedCombinationsRule, StructuralZerosRule } from "../../../contract";
import type { EncodedTable } from "../../metadata/encoded";
import type { ColumnScan } from "../../columns";
import { RULE_LIMITS } from "./options";
import { combinable, unionFind, type Breach, type Col } from "./view";
import { structuralZeros, type JointCells as Cells } from "./structural-zeros";

/** Joint counts of value ids: dense when small next to n, else a Map of `a * nB + b`. */
export function jointCells(A: Col, B: Col, n: number, scratch: { buf?: Int32Array }): Cells {
  const ia = A.scan.ids;
  const ib = B.scan.ids;
  const nb = B.nv;
  const size = A.nv * nb;
  const out: { a: number[]; b: number[]; c: number[] } = { a: [], b: [], c: [] };
  if (size <= Math.max(1 << 16, 4 * n)) {
    if (!scratch.buf || scratch.buf.length < size) scratch.buf = new Int32Array(Math.max(size, 1 << 16));
    const t = scratch.buf;
    t.fill(0, 0, size);
    for (let r = 0; r < n; r++) t[ia[r] * nb + ib[r]]++;
    for (let i = 0; i < size; i++) {
      if (t[i] === 0) continue;
      out.a.push(Math.floor(i / nb));
      out.b.push(i % nb);
      out.c.push(t[i]);
    }
  } else {
    const m = new Map<number, number>();
    for (let r = 0; r < n; r++) {
      const key = ia[r] * nb + ib[r];
      m.set(key, (m.get(key) ?? 0) + 1);
    }
    for (const [key, c] of m) {
      out.a.push(Math.floor(key / nb));
      out.b.push(key % nb);
      out.c.push(c);
    }
  }
  return { a: Int32Array.from(out.a), b: Int32Array.from(out.b), count: Int32Array.from(out.c) };
}

/** log(sum_b p_b^m) by log-sum-exp, p_b = counts_b / n. */
function logSumPow(counts: readonly number[], n: number, m: number): number {
  let mx = -Infinity;
  const logs = counts.map((c) => (c > 0 ? m * Math.log(c / n) : -Infinity));
  for (const l of logs) if (l > mx) mx = l;
  let s = 0;
  for (const l of logs) s += Math.exp(l - mx);
  return mx + Math.log(s);
}

/** The verdict on A -> B from the pair's joint counts. */
export interface Dependency {
  holds: boolean;
  /** Rows with A present that keep B = f(A), over the rows with A present. */
  share: number;
}

/**
 * Whether A determines B (criteria in {@link detectRules}), from joint cells where `x` is A's
 * side and `y` B's. Cost O(cells + distinct group sizes · values of B).
 */
export function dependency(A: Col, B: Col, x: Int32Array, y: Int32Array, cnt: Int32Array, n: number): Dependency {
  const best = new Int32Array(A.nv);
  for (let i = 0; i < cnt.length; i++) if (cnt[i] > best[x[i]]) best[x[i]] = cnt[i];
  const repB = new Float64Array(B.nv);
  for (let i = 0; i < cnt.length; i++) {
    const a = x[i];
    if (a !== A.blank && A.scan.counts[a] >= 2) repB[y[i]] += cnt[i];
  }
  let present = 0;
  let repeated = 0;
  let hits = 0;
  let logP = 0;
  const cache = new Map<number, number>();
  for (let a = 0; a < A.nv; a++) {
    if (a === A.blank) continue;
    const m = A.scan.counts[a];
    present += m;
    if (m < 2) continue;
    repeated += m;
    hits += best[a];
    if (best[a] === m) {
      let l = cache.get(m);
      if (l === undefined) cache.set(m, (l = logSumPow(B.scan.counts, n, m)));
      logP += l;
    }
  }
  let mode = 0;
  for (const c of repB) if (c > mode) mode = c;
  const off = repeated - hits;
  const holds =
    repeated > 0 &&
    repeated - mode > 0 &&
    off <= (1 - RULE_LIMITS.fdShare) * repeated &&
    off <= RULE_LIMITS.fdExplained * (repeated - mode) &&
    logP < Math.log(RULE_LIMITS.fdChance);
  return { holds, share: present > 0 ? (present - off) / present : 1 };
}

/** Mixed-radix key of a tuple of small non-negative integers. */
function radixKey(parts: ArrayLike<number>, radices: readonly number[]): number {
  let k = 0;
  for (let i = 0; i < radices.length; i++) k = k * radices[i] + parts[i];
  return k;
}

/**
 * A fixed-combinations rule with a determinant: per determinant value, the majority tuple of the
 * other columns. Released: (code of a, codes of f(a)) for each a whose code is its own (not the
 * pooled `__other__`, not blank), seen in >= k rows with its majority tuple, whose tuple's codes
 * are not pooled. share = rows with the determinant present that keep f, over those rows.
 * Cost O(n · columns) with one Map of (value id, tuple) keys: at most n entries.
 */
export function determinedRule(cols: Col[], det: Col, n: number, k: number): { rule: FixedCombinationsRule; breach?: Breach } | undefined {
  const deps = cols.filter((c) => c !== det);
  const radices = deps.map((c) => c.nv);
  const tuples = new Map<number, Map<number, number>>();
  const first = new Map<number, { key: number; row: number }>();
  const tup = new Int32Array(deps.length);
  let breach: Breach | undefined;
  let present = 0;
  for (let r = 0; r < n; r++) {
    const a = det.scan.ids[r];
    if (a === det.blank) continue;
    present++;
    for (let j = 0; j < deps.length; j++) tup[j] = deps[j].scan.ids[r];
    const key = radixKey(tup, radices);
    let m = tuples.get(a);
    if (!m) tuples.set(a, (m = new Map()));
    m.set(key, (m.get(key) ?? 0) + 1);
    const f = first.get(a);
    if (!f) first.set(a, { key, row: r });
    else if (breach === undefined && f.key !== key) {
      const differs = deps.findIndex((c) => c.scan.ids[r] !== c.scan.ids[f.row]);
      const d = deps[differs];
      breach = {
        row: r,
        column: d.name,
        detail:
          `${det.name} = ${JSON.stringify(det.scan.values[a])} goes with ${d.name} = ${JSON.stringify(d.scan.values[d.scan.ids[r]])} ` +
          `here but with ${d.name} = ${JSON.stringify(d.scan.values[d.scan.ids[f.row]])} on an earlier row`,
      };
    }
  }
  const combos: { t: number[]; c: number }[] = [];
  let kept = 0;
  for (const [a, m] of tuples) {
    let bestKey = -1;
    let best = 0;
    for (const [key, c] of m) if (c > best || (c === best && key < bestKey)) [bestKey, best] = [key, c];
    kept += best;
    const ca = det.code[a];
    if (ca === det.codec.otherCode || ca === det.codec.missingCode || ca < 0 || det.scan.counts[a] < k || best < k) continue;
    const ids: number[] = [];
    let rest = bestKey;
    for (let j = deps.length - 1; j >= 0; j--) {
      ids[j] = rest % radices[j];
      rest = Math.floor(rest / radices[j]);
    }
    const codes = deps.map((c, j) => c.code[ids[j]]);
    if (codes.some((x, j) => x < 0 || x === deps[j].codec.otherCode)) continue;
    const t = cols.map((c) => (c === det ? ca : codes[deps.indexOf(c)]));
    combos.push({ t, c: best });
  }
  if (combos.length > RULE_LIMITS.maxCombinations) return undefined;
  combos.sort((p, q) => {
    for (let i = 0; i < p.t.length; i++) if (p.t[i] !== q.t[i]) return p.t[i] - q.t[i];
    return 0;
  });
  return {
    rule: {
      type: "fixed_combinations",
      columns: cols.map((c) => c.name),
      determinant: det.name,
      combinations: combos.map((x) => x.t),
      counts: combos.map((x) => x.c),
      share: present > 0 ? kept / present : 1,
    },
    breach,
  };
}

/**
 * A fixed-combinations rule without a determinant: the code tuples of `cols` seen in >= k rows
 * (pooled and blank codes included: (`__other__`, CA) says that some rare city lies in CA), with
 * their counts. share = rows whose tuple is released, over all rows.
 * @returns undefined when there are more than {@link RULE_LIMITS}.maxCombinations released tuples.
 */
export function combinationsRule(cols: Col[], n: number, k: number): FixedCombinationsRule | undefined {
  const radices = cols.map((c) => c.codec.K);
  const counts = new Map<number, number>();
  const t = new Int32Array(cols.length);
  for (let r = 0; r < n; r++) {
    for (let j = 0; j < cols.length; j++) t[j] = cols[j].code[cols[j].scan.ids[r]];
    const key = radixKey(t, radices);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const combos: { key: number; c: number }[] = [];
  let kept = 0;
  for (const [key, c] of counts) {
    if (c < k) continue;
    combos.push({ key, c });
    kept += c;
  }
  if (combos.length > RULE_LIMITS.maxCombinations) return undefined;
  combos.sort((p, q) => p.key - q.key);
  return {
    type: "fixed_combinations",
    columns: cols.map((c) => c.name),
    combinations: combos.map(({ key }) => {
      const out: number[] = [];
      let rest = key;
      for (let j = cols.length - 1; j >= 0; j--) {
        out[j] = rest % radices[j];
        rest = Math.floor(rest / radices[j]);
      }
      return out;
    }),
    counts: combos.map((x) => x.c),
    share: kept / n,
  };
}

/** Counts per distinct count value: Map count -> how many values have it. */
function countClasses(scan: ColumnScan): Map<number, number> {
  const m = new Map<number, number>();
  for (const c of scan.counts) m.set(c, (m.get(c) ?? 0) + 1);
  return m;
}

/**
 * Distinct tuples independence predicts: E = sum over value tuples of 1 - (1 - prod p)^n, summed
 * by classes of equal counts. Undefined when the classes' product passes `cap` terms.
 */
function expectedDistinct(cols: Col[], n: number, cap = 4_000_000): number | undefined {
  const classes = cols.map((c) => [...countClasses(c.scan)]);
  const terms = classes.reduce((s, c) => s * c.length, 1);
  if (terms > cap) return undefined;
  let e = 0;
  const walk = (j: number, p: number, mult: number): void => {
    if (j === classes.length) {
      e += mult * -Math.expm1(n * Math.log1p(-Math.min(p, 1 - 1e-16)));
      return;
    }
    for (const [c, m] of classes[j]) walk(j + 1, (p * c) / n, mult * m);
  };
  walk(0, 1, 1);
  return e;
}

/** Distinct value-id tuples of `cols` in the rows. Cost O(n · columns), a Map of at most n keys. */
function observedDistinct(cols: Col[], n: number): number {
  const radices = cols.map((c) => c.nv);
  if (radices.reduce((s, r) => s * r, 1) > Number.MAX_SAFE_INTEGER) return n;
  const seen = new Set<number>();
  const t = new Int32Array(cols.length);
  for (let r = 0; r < n; r++) {
    for (let j = 0; j < cols.length; j++) t[j] = cols[j].scan.ids[r];
    seen.add(radixKey(t, radices));
  }
  return seen.size;
}

/**
 * Sparse by concentration, for pairs whose many rare values hide the structure from the count of
 * distinct pairs (city names: most occur once): among the rows where both values have a code of
 * their own (not pooled, not blank), the rows on combinations seen in >= k rows (share s) are at
 * least {@link RULE_LIMITS}.sparseLift times what independence puts there (q = sum over those
 * combinations of p_a p_b, marginals of the same rows), s >= sparseMinShare, and at least
 * sparseMinRows such rows. Cost O(n) plus a Map of at most n code pairs.
 */
function concentrated(A: Col, B: Col, enc: EncodedTable, n: number, k: number): boolean {
  const a = enc.codes[A.f];
  const b = enc.codes[B.f];
  const KB = B.codec.K;
  const own = (c: Col, v: number): boolean => v !== c.codec.otherCode && v !== c.codec.missingCode;
  const cells = new Map<number, number>();
  const ca = new Float64Array(A.codec.K);
  const cb = new Float64Array(KB);
  let m = 0;
  for (let r = 0; r < n; r++) {
    if (!own(A, a[r]) || !own(B, b[r])) continue;
    m++;
    ca[a[r]]++;
    cb[b[r]]++;
    const key = a[r] * KB + b[r];
    cells.set(key, (cells.get(key) ?? 0) + 1);
  }
  let kept = 0;
  let q = 0;
  for (const [key, c] of cells) {
    if (c < k) continue;
    kept += c;
    q += ca[Math.floor(key / KB)] * cb[key % KB];
  }
  if (m === 0 || kept < RULE_LIMITS.sparseMinRows) return false;
  const s = kept / m;
  return s >= RULE_LIMITS.sparseMinShare && s >= RULE_LIMITS.sparseLift * (q / m / m);
}

/**
 * Fixed combinations: functional dependencies, then sparse groups (criteria: {@link detectRules}).
 * @param zeros when given, receives the structural zeros of every pair where neither column
 *   determines the other (`./structural-zeros`), from the same joint counts.
 */
export function detectCombinations(cols: Col[], enc: EncodedTable, n: number, k: number, zeros?: StructuralZerosRule[]): FixedCombinationsRule[] {
  const elig = cols.filter(combinable).slice(0, RULE_LIMITS.maxColumns);
  const E = elig.length;
  const fd = new Set<string>(); // "i>j": elig[i] determines elig[j]
  const sparse: { i: number; j: number; ratio: number }[] = [];
  const scratch: { buf?: Int32Array } = {};
  for (let i = 0; i < E; i++) {
    for (let j = i + 1; j < E; j++) {
      const A = elig[i];
      const B = elig[j];
      if (A.nonBlank < 2 || B.nonBlank < 2) continue;
      const cells = jointCells(A, B, n, scratch);
      const ab = dependency(A, B, cells.a, cells.b, cells.count, n);
      const ba = dependency(B, A, cells.b, cells.a, cells.count, n);
      if (ab.holds) fd.add(`${i}>${j}`);
      if (ba.holds) fd.add(`${j}>${i}`);
      if (ab.holds || ba.holds) continue;
      if (zeros) {
        const z = structuralZeros(A, B, cells, n);
        if (z) zeros.push(z);
      }
      if (A.nonBlank < RULE_LIMITS.sparseMinValues || B.nonBlank < RULE_LIMITS.sparseMinValues) continue;
      const e = expectedDistinct([A, B], n);
      if (e !== undefined && cells.count.length <= RULE_LIMITS.sparseRatio * e) sparse.push({ i, j, ratio: cells.count.length / e });
      else if (concentrated(A, B, enc, n, k)) sparse.push({ i, j, ratio: 1 });
    }
  }
  const rules: FixedCombinationsRule[] = [];
  // One-to-one columns form a class, represented by its first column.
  const uf = unionFind(E);
  for (const key of fd) {
    const [i, j] = key.split(">").map(Number);
    if (fd.has(`${j}>${i}`)) uf.union(Math.min(i, j), Math.max(i, j));
  }
  const rep = (i: number): number => {
    const root = uf.find(i);
    let r = i;
    for (let x = 0; x < E; x++) if (uf.find(x) === root) { r = x; break; }
    return r;
  };
  const classes = new Map<number, number[]>();
  for (let i = 0; i < E; i++) classes.set(rep(i), [...(classes.get(rep(i)) ?? []), i]);
  for (const [r, members] of classes) {
    if (members.length < 2) continue;
    const chunks = members.length <= RULE_LIMITS.groupColumns ? [members] : members.slice(1).map((x) => [r, x]);
    for (const c of chunks) {
      const out = determinedRule(c.map((x) => elig[x]), elig[r], n, k);
      if (out) rules.push(out.rule);
    }
  }
  // Between classes: one edge per pair of classes, then the transitive reduction.
  const edges = new Map<string, [number, number]>();
  for (const key of fd) {
    const [i, j] = key.split(">").map(Number);
    const [ri, rj] = [rep(i), rep(j)];
    if (ri === rj) continue;
    const ck = `${ri}>${rj}`;
    const prefer = ri === i && rj === j;
    if (!edges.has(ck) || prefer) edges.set(ck, [i, j]);
  }
  for (const [ck, [i, j]] of [...edges].sort((p, q) => p[1][0] - q[1][0] || p[1][1] - q[1][1])) {
    const [ri, rj] = ck.split(">").map(Number);
    let implied = false;
    for (const other of edges.keys()) {
      const [x, y] = other.split(">").map(Number);
      if (x === ri && y !== rj && edges.has(`${y}>${rj}`)) implied = true;
    }
    if (implied) continue;
    const cols2 = i < j ? [elig[i], elig[j]] : [elig[j], elig[i]];
    const out = determinedRule(cols2, elig[i], n, k);
    if (out) rules.push(out.rule);
  }
  // Sparse pairs, merged into groups of at most 4 columns while the group stays sparse.
  sparse.sort((p, q) => p.ratio - q.ratio || p.i - q.i || p.j - q.j);
  let groups: number[][] = sparse.map((p) => [p.i, p.j]);
  for (let merged = true; merged; ) {
    merged = false;
    outer: for (let a = 0; a < groups.length; a++) {
      for (let b = a + 1; b < groups.length; b++) {
        if (!groups[a].some((x) => groups[b].includes(x))) continue;
        const union = [...new Set([...groups[a], ...groups[b]])].sort((x, y) => x - y);
        if (union.length > RULE_LIMITS.groupColumns) continue;
        // the group must pass the distinct-tuple test (sparse by concentration alone stays a pair)
        const gc = union.map((x) => elig[x]);
        const e = expectedDistinct(gc, n);
        if (e === undefined || observedDistinct(gc, n) > RULE_LIMITS.sparseRatio * e) continue;
        groups[a] = union;
        groups.splice(b, 1);
        merged = true;
        break outer;
      }
    }
  }
  groups = groups.filter((g, a) => !groups.some((h, b) => b !== a && h.length > g.length && g.every((x) => h.includes(x))));
  for (const g of groups) {
    const rule = combinationsRule(g.map((x) => elig[x]), n, k);
    if (rule && rule.combinations.length > 0) rules.push(rule);
  }
  return rules;
}

/** A numerical or datetime column of interval bins (`bin_edges`), not a code book. */
function binned(c: Col): boolean {
  return (c.codec.kind === "numerical" || c.codec.kind === "datetime") && c.codec.stats.bin_edges !== undefined && !c.codec.fromDomain;
}

/**
 * Structural zeros between the blank of a column of interval bins ({@link binned}: a count left
 * blank where another network measures) and the values of a code-book column: the binned column
 * read as two values, blank and filled (`./structural-zeros`' criteria, both ways), a forbidden
 * filled value written as every one of its bins (so the rule's codes stay the column's codes).
 * Neighbouring bins are not values of their own, so no single bin is a value here. Columns in
 * table order; pairs of the blank first, then per partner value all bins while at most
 * {@link RULE_LIMITS}.maxZeroPairs. Cost O(binned · code-book columns · n).
 */
export function blankZeros(cols: Col[], n: number): StructuralZerosRule[] {
  const book = cols.filter((c) => combinable(c) && c.nonBlank >= 2).slice(0, RULE_LIMITS.maxColumns);
  const measured = cols.filter((c) => binned(c) && c.blank >= 0 && c.nonBlank > 0).slice(0, RULE_LIMITS.maxColumns);
  const out: StructuralZerosRule[] = [];
  const scratch: { buf?: Int32Array } = {};
  for (const X of measured) {
    const bins = X.codec.missingCode;
    // Two values: filled (id and code 0) and blank (1), so the joint counts stay 2 x values of B.
    const ids = Int32Array.from(X.scan.ids, (id) => (id === X.blank ? 1 : 0));
    const scan = { ...X.scan, values: ["", ""], counts: [n - X.scan.counts[X.blank], X.scan.counts[X.blank]], ids };
    const two: Col = { ...X, scan, code: Int32Array.from([0, 1]), blank: 1, nv: 2, nonBlank: 1, num: undefined, codec: { ...X.codec, K: 2, missingCode: 1, otherCode: -1 } };
    for (const B of book) {
      const first = X.f < B.f;
      const z = first ? structuralZeros(two, B, jointCells(two, B, n, scratch), n) : structuralZeros(B, two, jointCells(B, two, n, scratch), n);
      if (!z) continue;
      const side = first ? 0 : 1;
      const blank = z.pairs.filter((p) => p[side] === 1);
      const filled = z.pairs.filter((p) => p[side] === 0);
      const pairs: [number, number][] = blank.map((p) => (first ? [bins, p[1]] : [p[0], bins]));
      for (const p of filled) {
        if (pairs.length + bins > RULE_LIMITS.maxZeroPairs) break;
        for (let k = 0; k < bins; k++) pairs.push(first ? [k, p[1]] : [p[0], k]);
      }
      if (pairs.length === 0) continue;
      pairs.sort((p, q) => p[0] - q[0] || p[1] - q[1]);
      out.push({ ...z, pairs });
    }
  }
  return out;
}
