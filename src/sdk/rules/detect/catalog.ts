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
function repeatedShare(c: Col, k: number): number {
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
 * Cost O(n · columns) with one Map of (value id, tuple) keys.
 * @returns undefined when more than {@link RULE_LIMITS}.maxCombinations entries would be released.
 */
export function catalogRule(key: Col, attrs: Col[], n: number, k: number): CatalogRule | undefined {
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
  for (const [a, m] of groups) {
    let bestT = "";
    let best = 0;
    for (const [t, c] of m) if (c > best) [bestT, best] = [t, c];
    if (best < k) continue;
    const ids = bestT.split(",").slice(0, attrs.length).map(Number);
    out.push({ e: [key.scan.values[a], ...attrs.map((c, j) => c.scan.values[ids[j]])], c: best });
    kept += best;
  }
  if (out.length === 0 || out.length > RULE_LIMITS.maxCombinations) return undefined;
  out.sort((p, q) => q.c - p.c || (p.e[0] < q.e[0] ? -1 : p.e[0] > q.e[0] ? 1 : 0));
  return {
    type: "catalog",
    columns: [key.name, ...attrs.map((c) => c.name)],
    key: key.name,
    entries: out.map((x) => x.e),
    counts: out.map((x) => x.c),
    share: present > 0 ? kept / present : 1,
  };
}

/**
 * Catalogs of a table (criteria: {@link detectRules}): per key column, the columns it decides on
 * raw values; one-to-one keys are one catalog (the first column in table order is its key), a
 * catalog whose columns another catalog holds is dropped. Cost: O(K · C · n) for K candidate keys
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
  return found.filter((r) => !found.some((o) => o !== r && o.columns.length > r.columns.length && r.columns.every((c) => o.columns.includes(c))));
}

/** Fixed-combinations rules a catalog holds (all their columns are the catalog's): the catalog keeps them. */
export function heldByCatalog(rule: FixedCombinationsRule, catalogs: readonly CatalogRule[]): boolean {
  return catalogs.some((c) => rule.columns.every((x) => c.columns.includes(x)));
}
