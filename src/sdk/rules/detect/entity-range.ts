/**
 * Detection of entity ranges (`EntityRangeRule`, `../entity-range`): an entity column (a country,
 * a state, a firm) whose values decide most of a number (population, road mileage, capital), as
 * panel tables measure each entity over time.
 */
import type { EntityRangeRule, Rule } from "../../../contract";
import { RULE_LIMITS } from "./options";
import type { Col } from "./view";
import { repeatedShare } from "./catalog";

/** Rows with the entity and the number both present, at least. */
const MIN_ROWS = 30;
/** Share of the number's variance between the entities (chance-corrected), at least. */
const EXPLAINED = 0.9;
/** Skewness above which a positive column is judged on its logarithm. */
const SKEWED = 1;
/** Share of the steps from one time to the next within an entity that move the number one way, at least, for an order. */
const ORDERED = 0.9;

/**
 * Whether `c` can be an entity: categorical from the rows; or a numerical column of point bins (a
 * code book: firm 1..10) that is one of the columns of a detected `unique` key of several columns
 * (a panel's (firm, year)), so a count or measure whose values repeat is not taken for one.
 */
function entityColumn(c: Col, panelKeys: ReadonlySet<string>): boolean {
  if (c.codec.fromDomain || c.nonBlank < 2) return false;
  if (c.codec.kind === "categorical") return c.codec.stats.count > 0;
  return c.codec.kind === "numerical" && c.codec.stats.bin_edges === undefined && panelKeys.has(c.name);
}

/**
 * Entity ranges of a table (criteria: {@link detectRules}). Per numerical column X (the first
 * {@link RULE_LIMITS}.maxColumns, in no rule of `others` that writes it: a catalog, fixed
 * combinations, a calendar, a difference range, the total of a sum or ratio) and entity column C
 * (categorical, or a code-book number of a panel's key, {@link entityColumn}) whose values seen in
 * >= k rows hold >= {@link RULE_LIMITS}.catalogShare of its present rows: over the >= {@link MIN_ROWS}
 * rows with both present and C's value seen in >= k of them, the share of X's variance between C's
 * groups, adjusted for the groups' count (epsilon squared: 1 - (SS_within / (N - g)) / (SS_total /
 * (N - 1)); Kelley 1935), is >= {@link EXPLAINED}, on log X when X is positive and right-skewed
 * (skewness > {@link SKEWED}). One rule per X, of the C explaining most of it (the first in table
 * order on a tie: a country before its one-to-one codes). Released: per value of C seen in >= k
 * rows with X, the [min, max] of its X (the catalog's threshold; each end is one row's value, as
 * `cell_ranges` release per (value, bin) cell and bin edges per quantile). With a time column
 * along which X moves one way within its entities ({@link withOrder}), the rule names it and the
 * order (nothing more is released).
 * Cost: O(C · X · n) for C entity columns and X numerical columns.
 */
export function detectEntityRanges(cols: readonly Col[], n: number, k: number, others: readonly Rule[]): EntityRangeRule[] {
  const busy = new Set<string>();
  const panelKeys = new Set<string>();
  const panels = others.flatMap((r) => (r.type === "unique" && r.columns.length > 1 ? [r.columns] : []));
  for (const r of others) {
    if (r.type === "sum" || r.type === "ratio") busy.add(r.total);
    if (r.type === "catalog" || r.type === "fixed_combinations" || r.type === "calendar" || r.type === "difference") r.columns.forEach((c) => busy.add(c));
    if (r.type === "unique" && r.columns.length > 1) r.columns.forEach((c) => panelKeys.add(c));
    // A number distinct in every row is the table's key (row numbers), not a measure of its entity.
    if (r.type === "unique" && r.columns.length === 1) busy.add(r.columns[0]);
  }
  const keys = cols.filter((c) => entityColumn(c, panelKeys) && repeatedShare(c, k) >= RULE_LIMITS.catalogShare);
  const numbers = cols.filter((c) => c.codec.kind === "numerical" && c.num && !c.codec.fromDomain && !busy.has(c.name)).slice(0, RULE_LIMITS.maxColumns);
  const out: EntityRangeRule[] = [];
  for (const x of numbers) {
    let best: { rule: EntityRangeRule; explained: number } | undefined;
    for (const c of keys) {
      if (c === x) continue;
      const found = entityRange(c, x, n, k);
      if (found && (!best || found.explained > best.explained)) best = found;
    }
    if (best) out.push(withOrder(best.rule, cols, n, panels));
  }
  return out;
}

/**
 * `rule` with a time column and its order when one holds: among the numerical columns that form a
 * `unique` key of `panels` with the entity (a panel's (country, year)), the one along which the
 * number moves one way in >= {@link ORDERED} of the steps from each of an entity's times to its
 * next (over the entities of the rule, steps of equal numbers left out), the most one-way first.
 */
function withOrder(rule: EntityRangeRule, cols: readonly Col[], n: number, panels: readonly (readonly string[])[]): EntityRangeRule {
  const [c, x] = rule.columns.map((name) => cols.find((col) => col.name === name)!);
  const released = new Set(rule.keys);
  const times = cols.filter((t) => t !== c && t !== x && t.codec.kind === "numerical" && t.num && panels.some((p) => p.includes(c.name) && p.includes(t.name)));
  let best: { time: string; order: 1 | -1; share: number } | undefined;
  for (const t of times) {
    const byEntity = new Map<number, number[]>();
    for (let r = 0; r < n; r++) {
      const e = c.scan.ids[r];
      if (!released.has(c.scan.values[e]) || Number.isNaN(t.num![t.scan.ids[r]]) || Number.isNaN(x.num![x.scan.ids[r]])) continue;
      const list = byEntity.get(e);
      if (list) list.push(r);
      else byEntity.set(e, [r]);
    }
    let up = 0;
    let down = 0;
    for (const rows of byEntity.values()) {
      rows.sort((a, b) => t.num![t.scan.ids[a]] - t.num![t.scan.ids[b]]);
      for (let i = 1; i < rows.length; i++) {
        const d = x.num![x.scan.ids[rows[i]]] - x.num![x.scan.ids[rows[i - 1]]];
        if (d > 0) up++;
        else if (d < 0) down++;
      }
    }
    const share = Math.max(up, down) / (up + down);
    if (up + down > 0 && share >= ORDERED && (!best || share > best.share)) best = { time: t.name, order: up >= down ? 1 : -1, share };
  }
  return best ? { ...rule, columns: [...rule.columns, best.time], order: best.order } : rule;
}

/** The rule of entity `c` over number `x` with its explained share, when it holds ({@link detectEntityRanges}). */
function entityRange(c: Col, x: Col, n: number, k: number): { rule: EntityRangeRule; explained: number } | undefined {
  // Rows per entity with x present, then the rows of the entities seen in >= k of them.
  const rowsOf = new Int32Array(c.nv);
  for (let r = 0; r < n; r++) {
    const id = c.scan.ids[r];
    if (id !== c.blank && !Number.isNaN(x.num![x.scan.ids[r]])) rowsOf[id]++;
  }
  const rows: number[] = [];
  for (let r = 0; r < n; r++) {
    const id = c.scan.ids[r];
    if (id !== c.blank && rowsOf[id] >= k && !Number.isNaN(x.num![x.scan.ids[r]])) rows.push(r);
  }
  const N = rows.length;
  if (N < MIN_ROWS) return undefined;
  const raw = Float64Array.from(rows, (r) => x.num![x.scan.ids[r]]);
  const log = raw.every((v) => v > 0) && skewness(raw) > SKEWED;
  const v = log ? raw.map(Math.log) : raw;
  const sum = new Float64Array(c.nv);
  const lo = new Float64Array(c.nv).fill(Infinity);
  const hi = new Float64Array(c.nv).fill(-Infinity);
  let mean = 0;
  rows.forEach((r, i) => {
    const id = c.scan.ids[r];
    sum[id] += v[i];
    mean += v[i];
    if (raw[i] < lo[id]) lo[id] = raw[i];
    if (raw[i] > hi[id]) hi[id] = raw[i];
  });
  mean /= N;
  let total = 0;
  let within = 0;
  rows.forEach((r, i) => {
    const id = c.scan.ids[r];
    total += (v[i] - mean) ** 2;
    within += (v[i] - sum[id] / rowsOf[id]) ** 2;
  });
  const groups: number[] = [];
  for (let id = 0; id < c.nv; id++) if (id !== c.blank && rowsOf[id] >= k) groups.push(id);
  const g = groups.length;
  if (g < 2 || g > RULE_LIMITS.maxCombinations || N <= g || !(total > 0)) return undefined;
  const explained = 1 - within / (N - g) / (total / (N - 1));
  if (!(explained >= EXPLAINED)) return undefined;
  groups.sort((a, b) => rowsOf[b] - rowsOf[a] || (c.scan.values[a] < c.scan.values[b] ? -1 : c.scan.values[a] > c.scan.values[b] ? 1 : 0));
  const rule: EntityRangeRule = {
    type: "entity_range",
    columns: [c.name, x.name],
    keys: groups.map((id) => c.scan.values[id]),
    ranges: groups.map((id) => [lo[id], hi[id]]),
    ...(log ? { log: true } : {}),
    share: 1,
  };
  return { rule, explained };
}

/** Sample skewness (the third standardized moment) of `x`; 0 for a constant column. */
function skewness(x: Float64Array): number {
  let m = 0;
  for (const v of x) m += v;
  m /= x.length;
  let m2 = 0;
  let m3 = 0;
  for (const v of x) {
    m2 += (v - m) ** 2;
    m3 += (v - m) ** 3;
  }
  m2 /= x.length;
  m3 /= x.length;
  return m2 > 0 ? m3 / m2 ** 1.5 : 0;
}
