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
/** Share of the within-entity variance the entities' time lines explain, at least, for `trends`. */
const TREND_EXPLAINED = 0.5;
/** A time column's distinct values, at most this share of its rows (the panel's times repeat across entities). */
const TIME_DISTINCT = 0.2;
/** Rows whose (entity, time) is the only one of its pair, at least this share, for a time column. */
const TIME_ONCE = 0.95;

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
 * Lines ({@link timeLines}): where a panel's time column (a numerical column of at most
 * {@link TIME_DISTINCT} of its rows distinct values) gives per-entity least-squares lines of X that
 * explain it, the rule also holds them (then the entity alone need not explain X: gdp over 60
 * years), each an aggregate of >= k rows as a mean is; kept while two compared columns stay free
 * (the body's comment).
 * Cost: O(C · (X + T) · n) for C entity columns, X numerical columns and T <= 4 time columns.
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
  // Times: numerical columns whose values repeat across the rows (a panel's years), at most a few.
  const times = cols.filter((t) => t.codec.kind === "numerical" && t.num && !t.codec.fromDomain && t.nonBlank >= 3 && t.nonBlank <= TIME_DISTINCT * n).slice(0, 4);
  const found: Found[] = [];
  for (const x of numbers) {
    let best: Found | undefined;
    for (const c of keys) {
      if (c === x) continue;
      const f = entityRange(c, x, n, k, times.filter((t) => t !== c && t !== x));
      if (f && (!best || f.explained > best.explained)) best = f;
    }
    if (best) found.push(best);
  }
  // Lines pin a number to its entity and time; they are kept, best explained first, while a row
  // keeps two compared columns that neither its entity, its time, the entity's catalog nor a line
  // decides, so lines alone never make a row equal to a real row on all columns but one (a
  // near-copy); a table whose rows have at most one such column has that already.
  const pinned = new Set<string>();
  const compared = cols.filter((c) => c.codec.kind !== "id").length;
  const decidedBy = (entity: string): string[] => others.flatMap((r) => ((r.type === "catalog" || r.type === "fixed_combinations") && r.columns.includes(entity) ? r.columns : []));
  for (const f of [...found].sort((a, b) => b.explained - a.explained)) {
    if (f.rule.trends === undefined) continue;
    const [entity, x, time] = f.rule.columns;
    const before = new Set([...pinned, entity, time, ...decidedBy(entity)]);
    const free = compared - before.size;
    if (free !== 2) {
      pinned.add(x);
      continue;
    }
    const { trends: _t, spread: _s, step: _p, ...plain } = f.rule;
    f.rule = { ...plain, columns: [entity, x] };
    f.keep = f.alone >= EXPLAINED;
  }
  return found.filter((f) => f.keep).map((f) => f.rule);
}

/** A rule found for one number: its explained share, the entity's alone, and whether it is kept. */
interface Found {
  rule: EntityRangeRule;
  explained: number;
  alone: number;
  keep: boolean;
}

/**
 * The rule of entity `c` over number `x` with its explained share, when it holds
 * ({@link detectEntityRanges}), with the time lines of the column of `times` that explains most
 * ({@link timeLines}) when they hold.
 */
function entityRange(c: Col, x: Col, n: number, k: number, times: readonly Col[]): Found | undefined {
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
  const means = Float64Array.from(sum, (s, id) => (rowsOf[id] > 0 ? s / rowsOf[id] : 0));
  let lines: TimeLines | undefined;
  for (const t of times) {
    const found = timeLines(c, t, rows, v, means, within, total, g);
    if (found && (!lines || found.explained > lines.explained)) lines = found;
  }
  if (!(explained >= EXPLAINED) && lines === undefined) return undefined;
  groups.sort((a, b) => rowsOf[b] - rowsOf[a] || (c.scan.values[a] < c.scan.values[b] ? -1 : c.scan.values[a] > c.scan.values[b] ? 1 : 0));
  const rule: EntityRangeRule = {
    type: "entity_range",
    columns: lines ? [c.name, x.name, lines.time] : [c.name, x.name],
    keys: groups.map((id) => c.scan.values[id]),
    ranges: groups.map((id) => [lo[id], hi[id]]),
    ...(log ? { log: true } : {}),
    ...(lines ? { trends: groups.map((id) => lines!.lines[id]), spread: lines.spread, step: lines.step } : {}),
    share: 1,
  };
  return { rule, explained: Math.max(explained, lines?.explained ?? -Infinity), alone: explained, keep: true };
}

/** An entity's time lines ({@link timeLines}): per entity value id, [intercept, slope]. */
interface TimeLines {
  time: string;
  lines: [number, number][];
  spread: number;
  step: number;
  /** Epsilon squared of the entities' lines: 1 - (SS_lines / (N - 2g)) / (SS_total / (N - 1)). */
  explained: number;
}

/**
 * Per entity, the least-squares line of `v` (the number, or its logarithm; one value per row of
 * `rows`) on time column `t`, when `t` is a panel's time and the lines explain the number: each
 * (entity, time) pair is one row's in >= {@link TIME_ONCE} of the rows, the lines explain >=
 * {@link TREND_EXPLAINED} of the variance within the entities (`within`: about the entities'
 * means `mean`) and, chance-corrected for their 2g parameters, >= {@link EXPLAINED} of the whole
 * (`total`). Also the residuals' pooled standard deviation (`spread`) and the median gap between
 * an entity's consecutive times (`step`). A row without a time counts at its entity's mean.
 */
function timeLines(c: Col, t: Col, rows: readonly number[], v: Float64Array, mean: Float64Array, within: number, total: number, g: number): TimeLines | undefined {
  const N = rows.length;
  if (N <= 2 * g || !(within > 0)) return undefined;
  const time = (i: number): number => t.num![t.scan.ids[rows[i]]];
  const byEntity = new Map<number, number[]>();
  let residual = 0;
  rows.forEach((r, i) => {
    const id = c.scan.ids[r];
    if (Number.isNaN(time(i))) {
      residual += (v[i] - mean[id]) ** 2;
      return;
    }
    const list = byEntity.get(id);
    if (list) list.push(i);
    else byEntity.set(id, [i]);
  });
  const lines: [number, number][] = [];
  const gaps: number[] = [];
  let timed = 0;
  let repeated = 0;
  for (const [id, at] of byEntity) {
    at.sort((a, b) => time(a) - time(b));
    timed += at.length;
    let mt = 0;
    let mv = 0;
    for (const i of at) (mt += time(i), mv += v[i]);
    mt /= at.length;
    mv /= at.length;
    let stt = 0;
    let stv = 0;
    for (const i of at) (stt += (time(i) - mt) ** 2, stv += (time(i) - mt) * (v[i] - mv));
    const slope = stt > 0 ? stv / stt : 0;
    lines[id] = [mv - slope * mt, slope];
    for (const i of at) residual += (v[i] - mv - slope * (time(i) - mt)) ** 2;
    for (let j = 1; j < at.length; j++) {
      const gap = time(at[j]) - time(at[j - 1]);
      if (gap > 0) gaps.push(gap);
      else repeated++;
    }
  }
  if (timed < TIME_ONCE * N || repeated > (1 - TIME_ONCE) * N || gaps.length === 0) return undefined;
  if (1 - residual / within < TREND_EXPLAINED) return undefined;
  const explained = 1 - residual / (N - 2 * g) / (total / (N - 1));
  if (!(explained >= EXPLAINED)) return undefined;
  // An entity whose rows have no time keeps its mean, flat.
  for (const r of rows) lines[c.scan.ids[r]] ??= [mean[c.scan.ids[r]], 0];
  gaps.sort((a, b) => a - b);
  return { time: t.name, lines, spread: Math.sqrt(residual / (N - 2 * g)), step: gaps[gaps.length >> 1], explained };
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
