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
 * combinations, a calendar, a difference range, the total of a sum or ratio; and no `unique` key of
 * its own, a row number) and entity column C
 * (categorical, or a code-book number of a panel's key, {@link entityColumn}) whose values seen in
 * >= k rows hold >= {@link RULE_LIMITS}.catalogShare of its present rows: over the >= {@link MIN_ROWS}
 * rows with both present and C's value seen in >= k of them, the share of X's variance between C's
 * groups, adjusted for the groups' count (epsilon squared: 1 - (SS_within / (N - g)) / (SS_total /
 * (N - 1)); Kelley 1935), is >= {@link EXPLAINED}, on log X when X is positive and right-skewed
 * (skewness > {@link SKEWED}). One rule per X, of the C explaining most of it (the first in table
 * order on a tie: a country before its one-to-one codes). Released: per value of C seen in >= k
 * rows with X, the [min, max] of its X (the catalog's threshold; each end is one row's value, as
 * `cell_ranges` release per (value, bin) cell and bin edges per quantile).
 * Cost: O(C · X · n) for C entity columns and X numerical columns.
 */
export function detectEntityRanges(cols: readonly Col[], n: number, k: number, others: readonly Rule[]): EntityRangeRule[] {
  const busy = new Set<string>();
  const panelKeys = new Set<string>();
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
    if (best) out.push(best.rule);
  }
  return out;
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
