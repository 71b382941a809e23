/**
 * Catalogs (criteria in `./index`, {@link detectRules}): a key column that decides several columns,
 * numerical ones included (a ratings table joined with its movies: movieId -> title, year,
 * genres; a table of states: name -> FIPS id, total). Functional dependencies are tested on raw
 * values, not codes, so a quantile-binned column (a total, a population) can be an attribute.
 */
import type { CatalogRule, FixedCombinationsRule } from "../../../contract";
import { RULE_LIMITS } from "./options";
import { combinable, unionFind, type Col } from "./view";
import { dependency, jointCells } from "./combinations";

/** Rows on key values seen in >= k rows, over the rows with the key present. */
export function repeatedShare(c: Col, k: number): number {
  let present = 0;
  let repeated = 0;
  for (let id = 0; id < c.nv; id++) {
    if (id === c.blank) continue;
    present += c.scan.counts[id];
    if (c.scan.counts[id] >= k) repeated += c.scan.counts[id];
  }
  return present > 0 ? repeated / present : 0;
}

/** Whether a column can be a catalog's key or attribute: any kind but an identifier, from the rows. */
function catalogable(c: Col): boolean {
  return c.codec.kind !== "id" && !c.codec.fromDomain && c.nonBlank >= 2;
}

/**
 * The catalog of key `key` over attributes `attrs`: per key value seen in >= k rows, its majority
 * tuple of attribute values when that tuple is seen in >= k rows. share = rows on a released entry
 * with its tuple, over the rows with the key present (what `../check` counts on the real rows).
 * A composite key is a {@link pairColumn} with its two columns as `pair`: entries then start with
 * the two columns' values, and share counts the rows on released pairs only (`../check` leaves
 * the other rows out: their pairs are left as generated).
 * Cost O(n · columns) with one Map of (value id, tuple) keys.
 * @returns undefined when more than {@link RULE_LIMITS}.maxCombinations entries would be released.
 */
export function catalogRule(key: Col, attrs: Col[], n: number, k: number, pair?: PairColumn): CatalogRule | undefined {
  const groups = new Map<number, Map<string, number>>();
  let present = 0;
  for (let r = 0; r < n; r++) {
    const a = key.scan.ids[r];
    if (a === key.blank || key.scan.counts[a] < k) {
      if (a !== key.blank) present++;
      continue;
    }
    present++;
    let t = "";
    for (const c of attrs) t += `${c.scan.ids[r]},`;
    let m = groups.get(a);
    if (!m) groups.set(a, (m = new Map()));
    m.set(t, (m.get(t) ?? 0) + 1);
  }
  const out: { e: string[]; c: number }[] = [];
  let kept = 0;
  let onReleased = 0;
  for (const [a, m] of groups) {
    let bestT = "";
    let best = 0;
    for (const [t, c] of m) if (c > best) [bestT, best] = [t, c];
    if (best < k) continue;
    const ids = bestT.split(",").slice(0, attrs.length).map(Number);
    const keyTexts = pair ? [pair.of[0].scan.values[pair.ids[0][a]], pair.of[1].scan.values[pair.ids[1][a]]] : [key.scan.values[a]];
    out.push({ e: [...keyTexts, ...attrs.map((c, j) => c.scan.values[ids[j]])], c: best });
    kept += best;
    onReleased += key.scan.counts[a];
  }
  if (out.length === 0 || out.length > RULE_LIMITS.maxCombinations) return undefined;
  const text = (e: string[]): string => (pair ? `${e[0]}\u0000${e[1]}` : e[0]);
  out.sort((p, q) => q.c - p.c || (text(p.e) < text(q.e) ? -1 : text(p.e) > text(q.e) ? 1 : 0));
  const keys = pair ? pair.of : [key];
  return {
    type: "catalog",
    columns: [...keys.map((c) => c.name), ...attrs.map((c) => c.name)],
    key: keys[0].name,
    ...(pair ? { key_columns: 2 } : {}),
    entries: out.map((x) => x.e),
    counts: out.map((x) => x.c),
    share: pair ? (onReleased > 0 ? kept / onReleased : 1) : present > 0 ? kept / present : 1,
  };
}

/** A {@link pairColumn}: the two columns and, per pair id, each column's value id. */
export interface PairColumn {
  of: [Col, Col];
  ids: [Int32Array, Int32Array];
}

/**
 * Two columns read as one (a composite key): a value id per distinct pair of present values in
 * order of first row, the blank id for rows with either cell blank. Cost O(n), one Map of pairs.
 */
export function pairColumn(a: Col, b: Col, n: number): { col: Col; pair: PairColumn } {
  const ids = new Int32Array(n);
  const index = new Map<number, number>();
  const ofA: number[] = [];
  const ofB: number[] = [];
  const counts: number[] = [];
  let blankRows = 0;
  for (let r = 0; r < n; r++) {
    const x = a.scan.ids[r];
    const y = b.scan.ids[r];
    if (x === a.blank || y === b.blank) {
      ids[r] = -1;
      blankRows++;
      continue;
    }
    const key = x * b.nv + y;
    let id = index.get(key);
    if (id === undefined) {
      index.set(key, (id = ofA.length));
      ofA.push(x);
      ofB.push(y);
      counts.push(0);
    }
    counts[id]++;
    ids[r] = id;
  }
  const blank = blankRows > 0 ? ofA.length : -1;
  if (blank >= 0) {
    counts.push(blankRows);
    for (let r = 0; r < n; r++) if (ids[r] < 0) ids[r] = blank;
  }
  const nv = counts.length;
  const values = Array.from({ length: nv }, (_, id) => (id === blank ? "" : `${a.scan.values[ofA[id]]}, ${b.scan.values[ofB[id]]}`));
  const scan = { ...a.scan, ids, counts, values } as Col["scan"];
  const col: Col = { f: -1, name: `(${a.name}, ${b.name})`, codec: a.codec, scan, code: new Int32Array(nv), blank, nv, nonBlank: nv - (blank >= 0 ? 1 : 0) };
  return { col, pair: { of: [a, b], ids: [Int32Array.from(ofA), Int32Array.from(ofB)] } };
}

/**
 * Catalogs of a table (criteria: {@link detectRules}): per key column, the columns it decides on
 * raw values; one-to-one keys are one catalog (the first column in table order is its key), a
 * catalog whose columns another catalog holds is dropped; then those with a composite key
 * ({@link compositeCatalogs}). Cost: O(K · C · n) for K candidate keys
 * among C columns (a candidate's values repeat: {@link RULE_LIMITS}.catalogShare).
 */
export function detectCatalogs(cols: Col[], n: number, k: number): CatalogRule[] {
  const elig = cols.filter(catalogable).slice(0, RULE_LIMITS.maxColumns);
  const E = elig.length;
  const keyish = elig.map((c) => repeatedShare(c, k) >= RULE_LIMITS.catalogShare);
  const decides: Set<number>[] = elig.map(() => new Set());
  const scratch: { buf?: Int32Array } = {};
  for (let i = 0; i < E; i++) {
    if (!keyish[i]) continue;
    for (let j = 0; j < E; j++) {
      if (j === i) continue;
      const cells = jointCells(elig[i], elig[j], n, scratch);
      if (dependency(elig[i], elig[j], cells.a, cells.b, cells.count, n).holds) decides[i].add(j);
    }
  }
  // One-to-one keys (each decides the other) form one catalog, keyed by the first.
  const uf = unionFind(E);
  for (let i = 0; i < E; i++) for (const j of decides[i]) if (decides[j].has(i)) uf.union(Math.min(i, j), Math.max(i, j));
  const found: CatalogRule[] = [];
  for (let i = 0; i < E; i++) {
    if (!keyish[i] || decides[i].size === 0) continue;
    let first = i;
    for (let x = 0; x < i; x++) if (uf.find(x) === uf.find(i)) { first = x; break; }
    if (first !== i) continue;
    const attrs = [...decides[i]].sort((a, b) => a - b).slice(0, RULE_LIMITS.catalogColumns - 1);
    // Fixed combinations keep a key of one code-book attribute (education -> education-num).
    const members = [i, ...attrs].map((x) => elig[x]);
    if (attrs.length < 2 && members.every(combinable)) continue;
    const rule = catalogRule(elig[i], attrs.map((x) => elig[x]), n, k);
    if (rule && rule.share >= RULE_LIMITS.catalogShare) found.push(rule);
  }
  const single = found.filter((r) => !found.some((o) => o !== r && o.columns.length > r.columns.length && r.columns.every((c) => o.columns.includes(c))));
  // A key column one-to-one with an earlier column makes the same pairs: only the first pairs.
  const firstOfClass = elig.map((_, i) => {
    for (let x = 0; x < i; x++) if (uf.find(x) === uf.find(i)) return false;
    return true;
  });
  return [...single, ...compositeCatalogs(elig, keyish.map((y, i) => y && firstOfClass[i]), decides, single, n, k)];
}

/** Rows of the quick test of a composite key's dependency (evenly spaced over the table). */
const PAIR_SAMPLE = 2048;

/**
 * Whether pair column `p` plausibly decides `c`: on up to {@link PAIR_SAMPLE} evenly spaced rows
 * whose pair repeats, at most a fifth differ from the first value seen with their pair (a cheap
 * necessary test before {@link dependency}, which needs the whole table).
 */
function plausiblyDecides(p: Col, c: Col, n: number, first: Int32Array): boolean {
  first.fill(-1, 0, p.nv);
  const s = Math.min(n, PAIR_SAMPLE);
  let seen = 0;
  let off = 0;
  for (let i = 0; i < s; i++) {
    const r = Math.floor((i * n) / s);
    const a = p.scan.ids[r];
    if (a === p.blank || p.scan.counts[a] < 2) continue;
    const v = c.scan.ids[r];
    if (first[a] < 0) first[a] = v;
    else (seen++, first[a] !== v && off++);
  }
  return seen > 0 && off <= 0.2 * seen;
}

/**
 * Catalogs with a composite key (origin and destination decide distance): a pair of key columns
 * decides a column neither decides alone ({@link dependency} on the pair read as one column,
 * {@link pairColumn}), judged as a one-key catalog (entries for pairs seen in >= k rows, the same
 * {@link RULE_LIMITS}.catalogShare of the pairs' rows). Key columns (`keyish`: repeated values,
 * the first of columns one-to-one with each other): one code per value (categorical or point
 * bins), not decided by the other; categorical ones are paired first,
 * so a pair of names is the key before a pair with a number. Skipped: a pair with one code-book
 * attribute (fixed combinations keep it), a catalog whose columns another holds.
 * Cost: at most {@link RULE_LIMITS}.catalogPairColumns key columns, so C(12, 2) = 66 pairs, each
 * O(n) to read plus O(min(n, 2048)) per other column and O(n) per column that passes that test.
 */
function compositeCatalogs(elig: Col[], keyish: boolean[], decides: Set<number>[], single: CatalogRule[], n: number, k: number): CatalogRule[] {
  const cand = elig
    .map((c, i) => i)
    .filter((i) => keyish[i] && elig[i].nonBlank >= 2 && elig[i].codec.stats.bin_edges === undefined)
    .sort((x, y) => Number(elig[y].codec.kind === "categorical") - Number(elig[x].codec.kind === "categorical") || x - y)
    .slice(0, RULE_LIMITS.catalogPairColumns);
  const found: CatalogRule[] = [];
  const holds = (rules: CatalogRule[], cols: string[]): boolean => rules.some((r) => cols.every((c) => r.columns.includes(c)));
  const scratch: { buf?: Int32Array } = {};
  let first = new Int32Array(0);
  for (let x = 0; x < cand.length; x++) {
    for (let y = x + 1; y < cand.length; y++) {
      const [i, j] = [cand[x], cand[y]];
      if (decides[i].has(j) || decides[j].has(i)) continue;
      const { col: p, pair } = pairColumn(elig[i], elig[j], n);
      if (repeatedShare(p, k) < RULE_LIMITS.catalogShare) continue;
      if (first.length < p.nv) first = new Int32Array(p.nv);
      const attrs: number[] = [];
      for (let c = 0; c < elig.length && attrs.length < RULE_LIMITS.catalogColumns - 2; c++) {
        if (c === i || c === j || decides[i].has(c) || decides[j].has(c) || elig[c].nonBlank < 2) continue;
        if (!plausiblyDecides(p, elig[c], n, first)) continue;
        const cells = jointCells(p, elig[c], n, scratch);
        if (dependency(p, elig[c], cells.a, cells.b, cells.count, n).holds) attrs.push(c);
      }
      if (attrs.length === 0) continue;
      const members = [i, j, ...attrs].map((z) => elig[z]);
      if (attrs.length < 2 && members.every(combinable)) continue;
      const names = members.map((c) => c.name);
      if (holds(single, names) || holds(found, names)) continue;
      const rule = catalogRule(p, attrs.map((z) => elig[z]), n, k, pair);
      const present = n - (p.blank >= 0 ? p.scan.counts[p.blank] : 0);
      const covered = rule ? rule.counts.reduce((a, b) => a + b, 0) / Math.max(1, present) : 0;
      if (rule && covered >= RULE_LIMITS.catalogShare) found.push(rule);
    }
  }
  return found.filter((r) => !found.some((o) => o !== r && o.columns.length > r.columns.length && r.columns.every((c) => o.columns.includes(c))));
}

/** Fixed-combinations rules a catalog holds (all their columns are the catalog's): the catalog keeps them. */
export function heldByCatalog(rule: FixedCombinationsRule, catalogs: readonly CatalogRule[]): boolean {
  return catalogs.some((c) => rule.columns.every((x) => c.columns.includes(x)));
}
