/**
 * A table's key (SDV's `Unique` constraint, its primary or sequence key): one column, or a pair
 * or triple of columns, whose values together are distinct in every real row (criteria in
 * `./index`, {@link detectUnique}). Sampling keeps it (`../../generate/unique-keys`).
 */
import type { UniqueRule } from "../../../contract";
import type { Col } from "./view";

/** Rows a table needs before any column is read as its key: below, distinct values prove little. */
export const KEY_MIN_ROWS = 20;

/**
 * Repeats chance would put among the rows when the values were drawn at random (a single column:
 * uniformly over its key space; several: each column from its own marginal, independently)
 * below which distinct values are no evidence of a key. All distinct when about this many
 * repeats are expected has probability about e^-7 (0.1%).
 */
export const KEY_MIN_EXPECTED_REPEATS = 7;

/**
 * Share of its grid's slots a datetime or integer key fills at least: a daily series (with its
 * weekends left out, 5 of 7), a year per row; not a count or an amount that happens to be distinct.
 */
export const KEY_MIN_DENSITY = 0.5;

/** Columns tried in pairs and triples (the first eligible ones, in table order). */
const COMBINATION_COLUMNS = 12;
const TRIPLE_COLUMNS = 8;

/** Keys kept per table: single columns first, then pairs, then triples. */
const MAX_KEYS = 3;

/**
 * The keys of a table of `n` rows: columns (not identifiers, which are written unique already,
 * nor domain columns) that are categorical, datetime or integer, blank in no row.
 * - One column: all `n` values distinct, n >= {@link KEY_MIN_ROWS}. A datetime or integer column
 *   also needs to fill its grid: over R = (max - min) / g + 1 slots, g its smallest gap between
 *   distinct values, n / R >= {@link KEY_MIN_DENSITY} and n(n-1)/2R >= {@link KEY_MIN_EXPECTED_REPEATS}
 *   (a daily series, a year per row; not a timestamp to the second, nor a population count).
 *   Text columns: all distinct suffices.
 * - A pair, else a triple (only when no pair is a key) of columns none of which is a key alone,
 *   categorical, datetime or point-binned integer (a code book, as a grid's axes are), a column
 *   one-to-one with an earlier one left out (it makes the same keys): distinct
 *   in every row, where independent columns would give C(n, 2) · prod_c q_c >= {@link KEY_MIN_EXPECTED_REPEATS}
 *   repeats (q_c: the chance two rows share column c's value).
 * At most {@link MAX_KEYS} keys. Cost: O(n) per candidate, at most C(12, 2) + C(8, 3) of them.
 */
export function detectUnique(cols: Col[], n: number): UniqueRule[] {
  if (n < KEY_MIN_ROWS) return [];
  const eligible = cols.filter((c) => c.codec.kind !== "id" && !c.codec.fromDomain && c.blank < 0 && c.scan.missing === 0 && kindFits(c));
  const keys: UniqueRule[] = [];
  const single = new Set<Col>();
  for (const c of eligible) {
    if (c.nonBlank !== n) continue;
    single.add(c);
    if (c.num !== undefined && !denseSpace(c.num, n)) continue;
    if (keys.length < MAX_KEYS) keys.push({ type: "unique", columns: [c.name], share: 1 });
  }
  const axes: Col[] = [];
  for (const c of eligible) {
    if (single.has(c) || c.nonBlank < 2 || (c.codec.kind === "numerical" && c.codec.stats.bin_edges !== undefined)) continue;
    // A column one-to-one with an earlier one (an item's id and its name) makes the same keys.
    if (!axes.some((a) => a.nonBlank === c.nonBlank && distinctCount([a, c], n) === c.nonBlank)) axes.push(c);
  }
  const q = new Map(axes.map((c) => [c, collisionChance(c, n)]));
  const pairs = axes.slice(0, COMBINATION_COLUMNS);
  const pairKeys: Col[][] = [];
  for (let i = 0; i < pairs.length; i++) {
    for (let j = i + 1; j < pairs.length; j++) {
      const set = [pairs[i], pairs[j]];
      if (pairCount(n) * q.get(set[0])! * q.get(set[1])! >= KEY_MIN_EXPECTED_REPEATS && distinctCount(set, n) === n) pairKeys.push(set);
    }
  }
  if (pairKeys.length === 0) {
    const t = axes.slice(0, TRIPLE_COLUMNS);
    for (let i = 0; i < t.length; i++) {
      for (let j = i + 1; j < t.length; j++) {
        for (let k = j + 1; k < t.length; k++) {
          const set = [t[i], t[j], t[k]];
          if (pairCount(n) * set.reduce((p, c) => p * q.get(c)!, 1) >= KEY_MIN_EXPECTED_REPEATS && distinctCount(set, n) === n) pairKeys.push(set);
        }
      }
    }
  }
  for (const set of pairKeys) if (keys.length < MAX_KEYS) keys.push({ type: "unique", columns: set.map((c) => c.name), share: 1 });
  return keys;
}

/** Categorical, datetime, or numerical with only integer values. */
function kindFits(c: Col): boolean {
  if (c.codec.kind === "categorical") return true;
  if (c.codec.kind === "datetime") return c.num !== undefined;
  if (c.codec.kind !== "numerical" || c.num === undefined) return false;
  for (const x of c.num) if (!Number.isInteger(x)) return false;
  return true;
}

function pairCount(n: number): number {
  return (n * (n - 1)) / 2;
}

/**
 * True when `n` distinct values (none NaN) fill at least {@link KEY_MIN_DENSITY} of the slots of
 * their grid (min to max by their smallest gap) and chance over those slots would repeat values.
 */
function denseSpace(values: Float64Array, n: number): boolean {
  const xs = Float64Array.from(values).sort();
  let gap = Infinity;
  for (let i = 1; i < xs.length; i++) if (xs[i] > xs[i - 1]) gap = Math.min(gap, xs[i] - xs[i - 1]);
  if (!Number.isFinite(gap)) return false;
  const slots = (xs[xs.length - 1] - xs[0]) / gap + 1;
  return n / slots >= KEY_MIN_DENSITY && pairCount(n) / slots >= KEY_MIN_EXPECTED_REPEATS;
}

/** The chance two distinct rows share the column's value: sum over values of c(c-1) / n(n-1). */
function collisionChance(c: Col, n: number): number {
  let s = 0;
  for (const k of c.scan.counts) s += k * (k - 1);
  return s / (n * (n - 1));
}

/** Distinct tuples of value ids the `n` rows hold in the columns of `set`. */
function distinctCount(set: readonly Col[], n: number): number {
  // Row -> id of its tuple so far, one column at a time (ids stay below n, so no overflow).
  let tuple = Int32Array.from(set[0].scan.ids.subarray(0, n));
  for (let j = 1; j < set.length; j++) {
    const ids = set[j].scan.ids;
    const nv = set[j].nv;
    const index = new Map<number, number>();
    const next = new Int32Array(n);
    for (let r = 0; r < n; r++) {
      const key = tuple[r] * nv + ids[r];
      let t = index.get(key);
      if (t === undefined) index.set(key, (t = index.size));
      next[r] = t;
    }
    tuple = next;
    if (j === set.length - 1) return index.size;
  }
  return set[0].nv;
}
