/**
 * Row rules (issue 23): the rules every real row keeps (or nearly every row: detection tolerates a
 * little dirty data and says how much in `share`), found from the scan of the raw table, plus the
 * rules the user declares (`rules.declare`), checked against every row. Shapes: src/types.ts
 * (`Rule`); the user's view: docs/api.md "Row rules".
 *
 * Work is done on the scan's per-row value ids (`ColumnScan.ids`) and distinct values, never a
 * string per cell: pair statistics are joint counts of value ids, numbers are parsed once per
 * distinct value. Identifier columns (`kind: "id"`) take part in no rule. Detection runs on raw
 * tables only: with a domain (already-discretized codes) or differential privacy nothing is
 * detected, because rules read from raw rows are not private (`analyzeTable` skips it).
 *
 * Detection never drops a row: rows that break a tolerant rule stay in the marginals; only the
 * combinations released by a fixed-combinations rule leave out the rare ones.
 */
import type { BlankTogetherRule, FixedCombinationsRule, InequalityRule, NotEqualRule, Rule, SumRule } from "../../types";
import { DataError } from "../errors";
import { fileOfDescription } from "../io/csv";
import { Rng, deriveSeed } from "../generate/prng";
import { DEFAULTS, type EncodedTable, type ScannedTable } from "../metadata/encoded";
import type { ColumnCodec, ColumnScan } from "../columns";
import { describeRule, ruleId } from "./describe";

/** A rule the user states (the SDK's `rules.declare`); the SDK computes the rest from the data. */
export type DeclaredRule =
  | { type: "fixed_combinations"; columns: string[]; determinant?: string }
  | { type: "inequality"; high: string; low: string; strict?: boolean }
  | { type: "sum"; total: string; parts: string[] }
  | { type: "not_equal"; columns: string[] }
  | { type: "blank_together"; columns: string[] };

/** The SDK's `rules` option (`ExtractOptions.rules`, `synthd fit --rules`). */
export interface RuleOptions {
  /** Detect the rules the rows keep (default true). False: only the declared rules. */
  detect?: boolean;
  /**
   * Detected rules to leave out, by id ({@link ruleId}: `fixed_combinations:education,education-num`,
   * `inequality:high,low`) or by the line `synthd fit` prints for them. An entry that matches no
   * detected rule is ignored (detection depends on the data).
   */
  drop?: string[];
  /**
   * Rules the user states: each is computed from the data like a detected one (combinations,
   * counts, share) and marked `declared: true`; one the data breaks in any row is a DataError.
   */
  declare?: DeclaredRule[];
}

/** Options of {@link detectRules}. */
export interface DetectOptions extends RuleOptions {
  /** k: rows a combination needs to be released (default {@link DEFAULTS}.rareThreshold). */
  rareThreshold?: number;
  /** Seed of the shuffle of the inequality check (default 23). */
  seed?: number;
}

/** Thresholds and caps of detection (the docstring of {@link detectRules} says what each does). */
export const RULE_LIMITS = {
  /** A functional dependency A -> B holds when the majority B per A value covers this share of the rows where A repeats. */
  fdShare: 0.99,
  /** ... and the rows off the majority are at most this share of the repeated rows off B's most frequent value. */
  fdExplained: 0.1,
  /** ... and every repeated A group is consistent by chance under independence with probability below this. */
  fdChance: 1e-6,
  /** Sparse combinations: observed distinct pairs at most this share of the pairs independence predicts. */
  sparseRatio: 0.5,
  /** Sparse by concentration: rows on released combinations, at least this many times what independence puts there. */
  sparseLift: 10,
  /** ... and at least this share of the rows whose values both have a code of their own. */
  sparseMinShare: 0.2,
  /** ... and at least this many such rows. */
  sparseMinRows: 30,
  /** Sparse combinations: values each column needs (blank excluded). */
  sparseMinValues: 3,
  /** Columns in a fixed-combinations group. */
  groupColumns: 4,
  /** Columns of fixed combinations, inequality and not-equal considered (the first ones in table order). */
  maxColumns: 60,
  /** Numerical columns of the sum check (the first ones in table order). */
  maxSumColumns: 40,
  /** Combinations of one rule; a rule with more is skipped. */
  maxCombinations: 100_000,
  /** Inequality and sum: share of rows that keep the rule. */
  share: 0.99,
  /** Inequality: a pair whose shuffled share reaches this holds by chance. */
  shuffledShare: 0.95,
  /** Inequality: rows with both values, at least. */
  minRows: 10,
  /** Sum: a part that is 0 in this share of its rows makes the rule trivial (C = B). */
  zeroShare: 0.99,
  /** Not equal and blank together: share of rows that keep the rule. */
  strictShare: 0.999,
  /** Not equal: equal rows independence predicts, at least. */
  minExpectedEqual: 5,
  /** Blank together: blank rows each column needs. */
  minBlank: 5,
  /** Blank together: columns in one rule. */
  blankColumns: 16,
} as const;

/** One column as detection sees it. */
interface Col {
  /** Index in the encoded table. */
  f: number;
  name: string;
  codec: ColumnCodec;
  scan: ColumnScan;
  /** Value id -> code. */
  code: Int32Array;
  /** Value id of the blank value, or -1. */
  blank: number;
  /** Distinct values, the blank one included. */
  nv: number;
  /** Distinct non-blank values. */
  nonBlank: number;
  /** Numerical and datetime: value id -> number (datetime: seconds since the epoch), NaN for blank. */
  num?: Float64Array;
}

function columnsOf(scanned: ScannedTable, enc: EncodedTable): Col[] {
  return enc.codecs.map((codec, f) => {
    const c = scanned.columns.indexOf(codec.name);
    if (c < 0) throw new Error(`internal: the scan has no column "${codec.name}"`);
    const scan = scanned.scans[c];
    const nv = scan.values.length;
    const code = new Int32Array(nv);
    let blank = -1;
    for (let id = 0; id < nv; id++) {
      const v = scan.values[id];
      if (v === "") blank = id;
      code[id] = codec.encode(v);
    }
    let num: Float64Array | undefined;
    if (codec.kind === "numerical" || (codec.kind === "datetime" && codec.datetime)) {
      num = new Float64Array(nv);
      for (let id = 0; id < nv; id++) {
        const v = scan.values[id];
        num[id] = v === "" ? NaN : codec.kind === "numerical" ? Number(v) : (codec.datetime!.parse(v)?.seconds ?? NaN);
      }
    }
    return { f, name: codec.name, codec, scan, code, blank, nv, nonBlank: nv - (blank >= 0 ? 1 : 0), num };
  });
}

/** Fixed combinations take columns with a code book of values: categorical, or point-binned numbers and datetimes. */
function combinable(c: Col): boolean {
  if (c.codec.kind === "id" || c.codec.fromDomain) return false;
  if (c.codec.kind === "categorical") return c.codec.stats.count > 0;
  return c.codec.stats.bin_edges === undefined;
}

/** Joint counts of two columns' value ids, as parallel arrays of non-zero cells. */
interface Cells {
  a: Int32Array;
  b: Int32Array;
  count: Int32Array;
}

/** Joint counts of value ids: dense when the table is small next to n, else a Map of `a * nB + b`. Cost O(n + cells). */
function jointCells(A: Col, B: Col, n: number, scratch: { buf?: Int32Array }): Cells {
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
interface Dependency {
  holds: boolean;
  /** Rows with A present that keep B = f(A), over the rows with A present. */
  share: number;
}

/**
 * Whether A determines B (criteria in {@link detectRules}), from joint cells where `x` is A's
 * side and `y` B's. Cost O(cells + distinct group sizes · values of B).
 */
function dependency(A: Col, B: Col, x: Int32Array, y: Int32Array, cnt: Int32Array, n: number): Dependency {
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

/** The first row (by index) that breaks a declared rule, with what to say about it. */
interface Breach {
  row: number;
  column: string;
  detail: string;
}

/**
 * A fixed-combinations rule with a determinant: per determinant value, the majority tuple of the
 * other columns. Released: (code of a, codes of f(a)) for each a whose code is its own (not the
 * pooled `__other__`, not blank), seen in >= k rows with its majority tuple, whose tuple's codes
 * are not pooled. share = rows with the determinant present that keep f, over those rows.
 * Cost O(n · columns) with one Map of (value id, tuple) keys: at most n entries.
 */
function determinedRule(cols: Col[], det: Col, n: number, k: number): { rule: FixedCombinationsRule; breach?: Breach } | undefined {
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
function combinationsRule(cols: Col[], n: number, k: number): FixedCombinationsRule | undefined {
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

/** Union-find over indices. */
function unionFind(size: number): { find: (i: number) => number; union: (i: number, j: number) => void } {
  const parent = Array.from({ length: size }, (_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]];
    return i;
  };
  return { find, union: (i, j) => void (parent[find(j)] = find(i)) };
}

/** Fixed combinations: functional dependencies, then sparse groups (criteria in {@link detectRules}). */
function detectCombinations(cols: Col[], enc: EncodedTable, n: number, k: number): FixedCombinationsRule[] {
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
        // the group must pass the distinct-tuple test (a pair sparse by concentration alone stays a pair)
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

/** Inequality verdict of the rows where both values are present. */
interface PairOrder {
  m: number;
  gt: number;
  lt: number;
  eq: number;
}

function pairOrder(A: Col, B: Col, n: number): PairOrder {
  const xa = A.num!;
  const xb = B.num!;
  const ia = A.scan.ids;
  const ib = B.scan.ids;
  let gt = 0;
  let lt = 0;
  let eq = 0;
  for (let r = 0; r < n; r++) {
    const x = xa[ia[r]];
    const y = xb[ib[r]];
    if (x > y) gt++;
    else if (x < y) lt++;
    else if (x === y) eq++;
  }
  return { m: gt + lt + eq, gt, lt, eq };
}

/** Share of rows keeping high >= low (or >) once low's values are shuffled among the rows where both are present. */
function shuffledShare(high: Col, low: Col, n: number, strict: boolean, seed: number): number {
  const rows: number[] = [];
  for (let r = 0; r < n; r++) if (!Number.isNaN(high.num![high.scan.ids[r]]) && !Number.isNaN(low.num![low.scan.ids[r]])) rows.push(r);
  const lows = Float64Array.from(rows, (r) => low.num![low.scan.ids[r]]);
  new Rng(seed).shuffle(lows);
  let keep = 0;
  rows.forEach((r, i) => {
    const x = high.num![high.scan.ids[r]];
    if (strict ? x > lows[i] : x >= lows[i]) keep++;
  });
  return rows.length > 0 ? keep / rows.length : 0;
}

function range(c: Col): [number, number] {
  let lo = Infinity;
  let hi = -Infinity;
  for (const x of c.num!) {
    if (x < lo) lo = x;
    if (x > hi) hi = x;
  }
  return [lo, hi];
}

function detectInequalities(cols: Col[], n: number, seed: number): InequalityRule[] {
  const elig = cols.filter((c) => c.num && c.codec.kind !== "id" && c.nonBlank >= 2).slice(0, RULE_LIMITS.maxColumns);
  const rules: InequalityRule[] = [];
  for (let i = 0; i < elig.length; i++) {
    for (let j = i + 1; j < elig.length; j++) {
      const [A, B] = [elig[i], elig[j]];
      if (A.codec.kind !== B.codec.kind) continue;
      const o = pairOrder(A, B, n);
      if (o.m < RULE_LIMITS.minRows) continue;
      const geA = (o.gt + o.eq) / o.m;
      const geB = (o.lt + o.eq) / o.m;
      if (geA >= RULE_LIMITS.share && geB >= RULE_LIMITS.share) continue; // (nearly) equal columns: no order
      const dir: [Col, Col, number] | undefined = geA >= RULE_LIMITS.share ? [A, B, o.gt] : geB >= RULE_LIMITS.share ? [B, A, o.lt] : undefined;
      if (!dir) continue;
      const [high, low, above] = dir;
      const strict = o.eq === 0;
      const [hlo] = range(high);
      const [, lhi] = range(low);
      if (strict ? hlo > lhi : hlo >= lhi) continue; // follows from the ranges
      if (shuffledShare(high, low, n, strict, deriveSeed(seed, high.f, low.f)) >= RULE_LIMITS.shuffledShare) continue;
      rules.push({ type: "inequality", high: high.name, low: low.name, strict, share: (strict ? above : above + o.eq) / o.m });
    }
  }
  return rules;
}

/** Half a unit of the finest decimals of the columns, plus a hair for binary floating point. */
function sumTolerance(cs: Col[]): number {
  const d = Math.max(...cs.map((c) => c.codec.stats.decimals ?? 0));
  return 0.5 * 10 ** -d * (1 + 1e-9);
}

/** Rows where total = a + b within tolerance, rows with all three present; stops once `maxFails` rows failed. */
function sumHolds(total: Col, a: Col, b: Col, n: number, maxFails: number): { m: number; fails: number; firstFail: number } {
  const tol = sumTolerance([total, a, b]);
  const [xt, xa, xb] = [total.num!, a.num!, b.num!];
  const [it, ia, ib] = [total.scan.ids, a.scan.ids, b.scan.ids];
  let m = 0;
  let fails = 0;
  let firstFail = -1;
  for (let r = 0; r < n; r++) {
    const t = xt[it[r]];
    const x = xa[ia[r]];
    const y = xb[ib[r]];
    if (Number.isNaN(t) || Number.isNaN(x) || Number.isNaN(y)) continue;
    m++;
    if (Math.abs(t - (x + y)) > tol + 1e-12 * Math.abs(t)) {
      if (firstFail < 0) firstFail = r;
      if (++fails > maxFails) break;
    }
  }
  return { m, fails, firstFail };
}

function zeroShare(c: Col): number {
  let zero = 0;
  let present = 0;
  c.scan.counts.forEach((cnt, id) => {
    if (id === c.blank) return;
    present += cnt;
    if (c.num![id] === 0) zero += cnt;
  });
  return present > 0 ? zero / present : 1;
}

function detectSums(cols: Col[], n: number): SumRule[] {
  const elig = cols.filter((c) => c.codec.kind === "numerical" && c.num && c.nonBlank >= 2).slice(0, RULE_LIMITS.maxSumColumns);
  const part = elig.map((c) => zeroShare(c) < RULE_LIMITS.zeroShare);
  const maxFails = Math.floor((1 - RULE_LIMITS.share) * n);
  const rules: SumRule[] = [];
  for (const total of elig) {
    for (let i = 0; i < elig.length; i++) {
      if (!part[i] || elig[i] === total) continue;
      for (let j = i + 1; j < elig.length; j++) {
        if (!part[j] || elig[j] === total) continue;
        const s = sumHolds(total, elig[i], elig[j], n, maxFails);
        if (s.fails > maxFails || s.m < RULE_LIMITS.minRows) continue;
        const share = (s.m - s.fails) / s.m;
        if (share < RULE_LIMITS.share) continue;
        rules.push({ type: "sum", total: total.name, parts: [elig[i].name, elig[j].name], share });
      }
    }
  }
  return rules;
}

/** For each value id of A, the id of B's equal value (same text), or -1. */
function sameValues(A: Col, B: Col): Int32Array {
  const byText = new Map<string, number>();
  B.scan.values.forEach((v, id) => {
    if (v !== "") byText.set(v, id);
  });
  return Int32Array.from(A.scan.values, (v) => (v === "" ? -1 : (byText.get(v) ?? -1)));
}

function notEqualCounts(A: Col, B: Col, n: number, map: Int32Array): { m: number; equal: number; firstEqual: number } {
  let m = 0;
  let equal = 0;
  let firstEqual = -1;
  for (let r = 0; r < n; r++) {
    const a = A.scan.ids[r];
    const b = B.scan.ids[r];
    if (a === A.blank || b === B.blank) continue;
    m++;
    if (map[a] === b) {
      equal++;
      if (firstEqual < 0) firstEqual = r;
    }
  }
  return { m, equal, firstEqual };
}

function detectNotEqual(cols: Col[], n: number): NotEqualRule[] {
  const elig = cols.filter((c) => c.codec.kind === "categorical" && c.nonBlank >= 2).slice(0, RULE_LIMITS.maxColumns);
  const rules: NotEqualRule[] = [];
  for (let i = 0; i < elig.length; i++) {
    for (let j = i + 1; j < elig.length; j++) {
      const [A, B] = [elig[i], elig[j]];
      const map = sameValues(A, B);
      let shared = 0;
      let pp = 0;
      const presentA = n - A.scan.missing;
      const presentB = n - B.scan.missing;
      map.forEach((b, a) => {
        if (b < 0) return;
        shared++;
        pp += (A.scan.counts[a] / presentA) * (B.scan.counts[b] / presentB);
      });
      if (shared < 0.5 * Math.min(A.nonBlank, B.nonBlank)) continue;
      const c = notEqualCounts(A, B, n, map);
      if (c.m === 0 || c.m * pp < RULE_LIMITS.minExpectedEqual) continue;
      const share = (c.m - c.equal) / c.m;
      if (share >= RULE_LIMITS.strictShare) rules.push({ type: "not_equal", columns: [A.name, B.name], share });
    }
  }
  return rules;
}

/** Rows where the columns are all blank or none is, and the first row where not. */
function blankAgreement(cs: Col[], n: number): { keep: number; firstBreak: number } {
  let keep = 0;
  let firstBreak = -1;
  for (let r = 0; r < n; r++) {
    let blanks = 0;
    for (const c of cs) if (c.scan.ids[r] === c.blank) blanks++;
    if (blanks === 0 || blanks === cs.length) keep++;
    else if (firstBreak < 0) firstBreak = r;
  }
  return { keep, firstBreak };
}

function detectBlankTogether(cols: Col[], n: number): BlankTogetherRule[] {
  const elig = cols
    .filter((c) => c.codec.kind !== "id" && c.scan.missing >= RULE_LIMITS.minBlank && c.scan.missing < n)
    .slice(0, RULE_LIMITS.maxColumns);
  const slack = (1 - RULE_LIMITS.strictShare) * n;
  const uf = unionFind(elig.length);
  const pairs: [number, number, number][] = [];
  for (let i = 0; i < elig.length; i++) {
    for (let j = i + 1; j < elig.length; j++) {
      if (Math.abs(elig[i].scan.missing - elig[j].scan.missing) > slack) continue;
      const { keep } = blankAgreement([elig[i], elig[j]], n);
      if (keep / n >= RULE_LIMITS.strictShare) {
        uf.union(i, j);
        pairs.push([i, j, keep / n]);
      }
    }
  }
  const rules: BlankTogetherRule[] = [];
  const groups = new Map<number, number[]>();
  for (const [i, j] of pairs) for (const x of [i, j]) {
    const g = groups.get(uf.find(x)) ?? [];
    if (!g.includes(x)) g.push(x);
    groups.set(uf.find(x), g);
  }
  for (const g of groups.values()) {
    g.sort((a, b) => a - b);
    const cs = g.map((x) => elig[x]);
    const { keep } = blankAgreement(cs, n);
    if (g.length <= RULE_LIMITS.blankColumns && keep / n >= RULE_LIMITS.strictShare) {
      rules.push({ type: "blank_together", columns: cs.map((c) => c.name), share: keep / n });
    } else {
      for (const [i, j, share] of pairs) if (g.includes(i)) rules.push({ type: "blank_together", columns: [elig[i].name, elig[j].name], share });
    }
  }
  return rules;
}

/**
 * The 1-based file line of row `row`: exact for a row holding the first occurrence of some value
 * (`ColumnScan.firstLines`), else that of the last such row before it plus the rows between (exact
 * unless a quoted cell spans lines or a blank line lies between them). Cost O(row · columns).
 */
export function lineOfRow(scanned: ScannedTable, row: number): number {
  let bestRow = -1;
  let bestLine = row + 2;
  for (const s of scanned.scans) {
    const seen = new Uint8Array(s.values.length);
    for (let r = 0; r <= row; r++) {
      const id = s.ids[r];
      if (seen[id]) continue;
      seen[id] = 1;
      if (r > bestRow) {
        bestRow = r;
        bestLine = s.firstLines[id];
      }
    }
  }
  return bestRow < 0 ? row + 2 : bestLine + (row - bestRow);
}

/** A declared rule's columns, checked: present, not identifiers, of the kinds the rule needs. */
function declaredColumns(cols: Col[], names: unknown, what: string, source: string, ok: (c: Col) => boolean, kinds: string): Col[] {
  if (!Array.isArray(names) || names.some((x) => typeof x !== "string")) {
    throw new DataError(`The declared rule ${what} must name its columns as strings.`);
  }
  return (names as string[]).map((name) => {
    const c = cols.find((x) => x.name === name);
    if (!c) {
      throw new DataError(`${source} has no column "${name}", which the declared rule ${what} names (columns: ${cols.map((x) => x.name).join(", ")}).`, {
        column: name,
        file: fileOfDescription(source),
      });
    }
    if (!ok(c)) {
      throw new DataError(`The declared rule ${what} needs ${kinds} columns, but column "${name}" is ${c.codec.kind}${c.codec.stats.bin_edges ? " with quantile bins" : ""}.`, {
        column: name,
        file: fileOfDescription(source),
      });
    }
    return c;
  });
}

function breachError(scanned: ScannedTable, rule: Rule, b: Breach): DataError {
  const line = lineOfRow(scanned, b.row);
  return new DataError(
    `${scanned.source}, line ${line}, column "${b.column}": the declared rule "${ruleId(rule)}" does not hold: ${b.detail}; ` +
      `fix the row or drop the rule from rules.declare.`,
    { column: b.column, line, file: fileOfDescription(scanned.source) },
  );
}

function quoted(c: Col, r: number): string {
  return `${c.name} = ${JSON.stringify(c.scan.values[c.scan.ids[r]])}`;
}

/** Computes a declared rule from the data, or throws (see {@link detectRules}). */
function declaredRule(d: DeclaredRule, cols: Col[], scanned: ScannedTable, n: number, k: number): Rule {
  const source = scanned.source;
  const what = JSON.stringify(d);
  const notId = (c: Col): boolean => c.codec.kind !== "id";
  switch (d?.type) {
    case "fixed_combinations": {
      const cs = declaredColumns(cols, d.columns, what, source, combinable, "categorical (or numerical/datetime with one code per value)");
      if (cs.length < 2 || cs.length > RULE_LIMITS.groupColumns || new Set(cs).size !== cs.length) {
        throw new DataError(`The declared rule ${what} needs 2 to ${RULE_LIMITS.groupColumns} different columns.`);
      }
      cs.sort((a, b) => a.f - b.f);
      if (d.determinant !== undefined) {
        const det = cs.find((c) => c.name === d.determinant);
        if (!det) throw new DataError(`The declared rule ${what}: the determinant "${d.determinant}" is not one of its columns.`, { column: d.determinant });
        const out = determinedRule(cs, det, n, k);
        if (!out) throw new DataError(`The declared rule ${what} has more than ${RULE_LIMITS.maxCombinations} combinations.`);
        if (out.breach) throw breachError(scanned, out.rule, out.breach);
        return { ...out.rule, declared: true };
      }
      const rule = combinationsRule(cs, n, k);
      if (!rule) throw new DataError(`The declared rule ${what} has more than ${RULE_LIMITS.maxCombinations} combinations.`);
      return { ...rule, declared: true };
    }
    case "inequality": {
      const [high, low] = declaredColumns(cols, [d.high, d.low], what, source, (c) => c.num !== undefined && notId(c), "numerical or datetime");
      if (high.codec.kind !== low.codec.kind) throw new DataError(`The declared rule ${what} compares a ${high.codec.kind} column with a ${low.codec.kind} one.`, { column: low.name });
      if (high === low) throw new DataError(`The declared rule ${what} compares a column with itself.`, { column: high.name });
      const strict = d.strict === true;
      for (let r = 0; r < n; r++) {
        const x = high.num![high.scan.ids[r]];
        const y = low.num![low.scan.ids[r]];
        if (Number.isNaN(x) || Number.isNaN(y) || (strict ? x > y : x >= y)) continue;
        const rule: InequalityRule = { type: "inequality", high: high.name, low: low.name, strict, share: 0 };
        throw breachError(scanned, rule, { row: r, column: high.name, detail: `${quoted(high, r)} is not ${strict ? ">" : ">="} ${quoted(low, r)}` });
      }
      return { type: "inequality", high: high.name, low: low.name, strict, share: 1, declared: true };
    }
    case "sum": {
      if (!Array.isArray(d.parts) || d.parts.length !== 2) throw new DataError(`The declared rule ${what} needs two parts.`);
      const [total, a, b] = declaredColumns(cols, [d.total, ...d.parts], what, source, (c) => c.codec.kind === "numerical" && c.num !== undefined, "numerical");
      if (new Set([total, a, b]).size !== 3) throw new DataError(`The declared rule ${what} needs three different columns.`);
      const s = sumHolds(total, a, b, n, 0);
      if (s.fails > 0) {
        const rule: SumRule = { type: "sum", total: total.name, parts: [a.name, b.name], share: 0 };
        const r = s.firstFail;
        throw breachError(scanned, rule, { row: r, column: total.name, detail: `${quoted(total, r)} is not ${quoted(a, r)} + ${quoted(b, r)}` });
      }
      return { type: "sum", total: total.name, parts: [a.name, b.name], share: 1, declared: true };
    }
    case "not_equal": {
      const cs = declaredColumns(cols, d.columns, what, source, notId, "non-identifier");
      if (cs.length !== 2 || cs[0] === cs[1]) throw new DataError(`The declared rule ${what} needs two different columns.`);
      const [A, B] = cs;
      const c = notEqualCounts(A, B, n, sameValues(A, B));
      if (c.equal > 0) {
        const rule: NotEqualRule = { type: "not_equal", columns: [A.name, B.name], share: 0 };
        const r = c.firstEqual;
        throw breachError(scanned, rule, { row: r, column: B.name, detail: `${quoted(A, r)} and ${quoted(B, r)} are equal` });
      }
      return { type: "not_equal", columns: [A.name, B.name], share: 1, declared: true };
    }
    case "blank_together": {
      const cs = declaredColumns(cols, d.columns, what, source, notId, "non-identifier");
      if (cs.length < 2 || cs.length > RULE_LIMITS.blankColumns || new Set(cs).size !== cs.length) {
        throw new DataError(`The declared rule ${what} needs 2 to ${RULE_LIMITS.blankColumns} different columns.`);
      }
      const a = blankAgreement(cs, n);
      if (a.firstBreak >= 0) {
        const r = a.firstBreak;
        const blank = cs.find((c) => c.scan.ids[r] === c.blank)!;
        const full = cs.find((c) => c.scan.ids[r] !== c.blank)!;
        const rule: BlankTogetherRule = { type: "blank_together", columns: cs.map((c) => c.name), share: 0 };
        throw breachError(scanned, rule, { row: r, column: blank.name, detail: `${blank.name} is blank but ${quoted(full, r)}` });
      }
      return { type: "blank_together", columns: cs.map((c) => c.name), share: 1, declared: true };
    }
    default:
      throw new DataError(
        `The declared rule ${what} has an unknown type; use fixed_combinations, inequality, sum, not_equal or blank_together.`,
      );
  }
}

/**
 * The row rules of a raw table: the detected ones (unless `opts.detect` is false) less those
 * `opts.drop` names, plus the declared ones (`opts.declare`), which replace a detected rule of the
 * same id ({@link ruleId}). Order: fixed combinations, inequalities, sums, not-equal, blank
 * together, then the declared rules.
 *
 * Criteria (thresholds in {@link RULE_LIMITS}; tuned on the real tables of the tests: UCI Adult,
 * cars, airports, flights, species, github):
 * - **Fixed combinations, functional dependency A -> B**: A and B have a code book of values
 *   (categorical, or numerical/datetime with point bins: no `bin_edges`), at most the first 60
 *   such columns. Among the rows where A is present and its value repeats (singletons carry no
 *   evidence), the majority B per A value covers >= 99% of the rows; the rows off it are at most
 *   10% of the repeated rows off B's most frequent value (B near-constant proves nothing); B is
 *   not constant there; and the chance that every consistent repeated group is consistent under
 *   independence, prod_g sum_b p_b^{m_g} (p_b: B's share of all rows, m_g: the group's rows),
 *   is below 1e-6 (a near-unique A "determines" everything by chance). One-to-one columns
 *   (education <-> education-num) form a class: one rule from its first column to each other
 *   member; between classes, A -> C is dropped when A -> B and B -> C hold (transitivity).
 *   Released: (code of a, code of f(a)) for each a with a code of its own (not `__other__`, not
 *   blank) seen in >= k rows with f(a); `share` = rows with A present whose B is f(A).
 * - **Sparse combinations** (no dependency either way), both columns with >= 3 non-blank values:
 *   observed distinct value pairs <= 0.5 E, E = sum_{a,b} 1 - (1 - p_a p_b)^n the distinct pairs
 *   independence predicts; or, where rare values hide that (airports: most city names occur once,
 *   and a count-2 value can never have fewer than half its expected distinct partners), sparse by
 *   concentration: among the rows whose values both have a code of their own, the rows on
 *   combinations seen >= k times are >= 10 times the share independence puts there, >= 20% of
 *   those rows and >= 30 rows (`concentrated`). Sparse pairs that share a column merge into groups of at most 4
 *   columns while the group's distinct tuples stay <= 0.5 of its E. Released: the code tuples seen
 *   in >= k rows (pooled and blank codes included), with counts; `share` = rows whose tuple is
 *   released. A rule with more than 100,000 combinations is skipped.
 * - **Inequality** high >= low (> when no row has them equal): two numerical or two datetime
 *   columns (datetimes compared in parsed seconds), rows where both are present (>= 10 of them),
 *   share >= 0.99; skipped when it follows from the ranges (min high >= max low), when the
 *   columns are equal in >= 99% of rows, or when it holds nearly as often by chance: low shuffled
 *   once (seeded, `../prng`) keeps it in >= 95% of rows.
 * - **Sum** total = a + b: numerical columns (the first 40), rows with all three present,
 *   |total - (a + b)| <= half a unit of the finest decimals of the three, share >= 0.99; a part
 *   that is 0 in >= 99% of its rows is no part (total = b). A triple stops once it failed in more
 *   than 1% of all rows.
 * - **Not equal**: two categorical columns whose non-blank value sets overlap in >= 50% of the
 *   smaller set, different in >= 99.9% of the rows where both are present, where independence
 *   predicts at least 5 equal rows.
 * - **Blank together**: non-identifier columns each blank in >= 5 rows and not in every row,
 *   agreeing (all blank or none) in >= 99.9% of rows; pairs join into groups of up to 16 columns
 *   when the group still agrees in >= 99.9% of rows.
 *
 * Declared rules take the same kinds of columns (a column the table lacks, an identifier or a
 * column of the wrong kind is a DataError) and are computed like detected ones, with `share` 1:
 * a row that breaks one (A -> B: a value of A with two tuples of B; inequality, sum, not equal,
 * blank together: any row) is a DataError naming the column, the 1-based line ({@link lineOfRow})
 * and the values. A fixed-combinations rule without a determinant cannot be broken.
 *
 * Cost: time O(P · n) for P <= C(60, 2) column pairs (each pair's joint counts of value ids,
 * dense or a Map of at most n keys), plus O(T · n/100) for the sum's T <= 40 · C(39, 2) triples
 * (early exit; O(n) per triple that holds); memory O(distinct values + n) transient per pair
 * (the inequality's shuffle holds 12 bytes a row), never a string per cell.
 * @param scanned the scan `enc` was encoded from (value ids per row, distinct values).
 * @param enc the encoded table: kinds and code books (combinations are released as codes).
 * @throws DataError for a declared rule the data breaks or that names a missing column or one of
 *   the wrong kind; RangeError for a bad rareThreshold.
 */
export function detectRules(scanned: ScannedTable, enc: EncodedTable, opts: DetectOptions = {}): Rule[] {
  const k = opts.rareThreshold ?? DEFAULTS.rareThreshold;
  if (!(Number.isInteger(k) && k >= 1)) throw new RangeError("rareThreshold must be an integer >= 1");
  const n = scanned.n;
  const cols = columnsOf(scanned, enc);
  const declared = (opts.declare ?? []).map((d) => declaredRule(d, cols, scanned, n, k));
  const ids = new Set(declared.map(ruleId));
  let detected: Rule[] = [];
  if (opts.detect !== false && n > 0) {
    detected = [
      ...detectCombinations(cols, enc, n, k),
      ...detectInequalities(cols, n, opts.seed ?? 23),
      ...detectSums(cols, n),
      ...detectNotEqual(cols, n),
      ...detectBlankTogether(cols, n),
    ];
  }
  const drop = new Set(opts.drop ?? []);
  detected = detected.filter((r) => !ids.has(ruleId(r)) && !drop.has(ruleId(r)) && !drop.has(describeRule(r)));
  return [...detected, ...declared].slice(0, 1000);
}
