/**
 * A database generated from its tables' models (docs/relational.md), parents first: a root table's
 * rows by plain generation; a child's rows per generated parent row, as many as the parent's
 * children column says, by seeded generation with the parent's context columns fixed (HMA's
 * order, Patki et al. 2016, sec. 4, with today's conditional sampler in place of its Gaussian
 * copulas). Primary keys are fresh; every foreign key is a generated parent's key, so there are no
 * orphans by construction.
 */
import { DataError } from "../errors";
import type { Table } from "../io/csv";
import { IdGenerator } from "../generate/id-generator";
import { Rng, deriveSeed } from "../generate/sfc32";
import type { Where } from "../generate/seeded-request";
import type { CrossTableOrder, DatabasePlan, ForeignKeyPlan, TablePlan } from "./plan";
import { DatetimeFormat } from "../metadata/datetime";
import { datetimeParser } from "../columns/datetime";
import { DecodedBatch, cellText, selectColumn, type DecodedColumn } from "../generate/batch";

/**
 * A {@link Table} held by column (a {@link DecodedBatch}, optionally through a row map) until a
 * caller reads `rows`: the rows are then made once as strings and the columns dropped, so `rows` is
 * the table from then on (writes into it hold). Generation matches and orders a large child by
 * mapping rows ({@link select}), copies only the columns it writes, and writes them with no string
 * per cell of a code-book or integer column (docs/relational.md "Scale").
 */
export class BatchTable implements Table {
  private held: string[][] | undefined;
  private source: DecodedBatch | undefined;
  /** Row r is the source's row `at[r]`; undefined: the source's rows in order. */
  private readonly at: Int32Array | undefined;

  /**
   * @param batch the rows, its columns named `columns`.
   * @param at row r is the batch's row `at[r]` (default: the batch's rows in order).
   */
  constructor(
    public columns: string[],
    batch: DecodedBatch,
    at?: Int32Array,
  ) {
    this.source = batch;
    this.at = at;
  }

  /** The rows as strings (made on first read; the columns are dropped then). */
  get rows(): string[][] {
    if (this.held === undefined) {
      this.held = this.batch!.toTable().rows;
      this.source = undefined;
    }
    return this.held;
  }

  set rows(rows: string[][]) {
    this.held = rows;
    this.source = undefined;
  }

  /** True while no caller has read {@link rows}: the table is its columns. */
  get byColumn(): boolean {
    return this.source !== undefined;
  }

  /** The columns as one batch in row order, while {@link byColumn}; else undefined. */
  get batch(): DecodedBatch | undefined {
    if (this.source === undefined) return undefined;
    return this.at === undefined ? this.source : this.source.select(this.at);
  }

  /** Number of rows. */
  get length(): number {
    return this.source === undefined ? this.held!.length : (this.at?.length ?? this.source.length);
  }

  /** Column j in row order (copied through the row map, if any). Needs {@link byColumn}. */
  column(j: number): DecodedColumn {
    const col = this.source!.cells[j];
    return this.at === undefined ? col : selectColumn(col, this.at);
  }

  /**
   * Column j as held, with the row map: row r is the column's row `at[r]` (r when `at` is
   * undefined); nothing copied. Needs {@link byColumn}.
   */
  sourceColumn(j: number): { col: DecodedColumn; at: Int32Array | undefined } {
    return { col: this.source!.cells[j], at: this.at };
  }

  /** Rows `rows` of this table, in that order, by column: the row maps composed, no cell copied. */
  select(rows: ArrayLike<number>): BatchTable {
    const at = new Int32Array(rows.length);
    for (let i = 0; i < at.length; i++) at[i] = this.at === undefined ? rows[i] : this.at[rows[i]];
    return new BatchTable(this.columns, this.source!, at);
  }
}

/** Rows of `t`, without making a {@link BatchTable}'s strings. */
export function rowCount(t: Table): number {
  return t instanceof BatchTable ? t.length : t.rows.length;
}

/** `t` when it is a {@link BatchTable} held by column, else undefined. */
function byColumn(t: Table): BatchTable | undefined {
  return t instanceof BatchTable && t.byColumn ? t : undefined;
}

/**
 * Context keys as numbers, the grouping {@link fillSlots} makes of `codeKeys` strings without a
 * string per row: each context column's key (`codeKeys` of its cell alone, or a drawn code's key)
 * numbered in a numbering the rows and the parents share, rows first, so ids follow the rows'
 * first appearance; a row's full key is the tuple of its columns' ids, numbered the same way.
 * `codeKeys` joins its columns' keys by NUL, so equal tuples are equal joined keys.
 */
export interface NumberedKeys {
  /** Per row, the id of its full key; per row, the id of its first context column's key. */
  rowFull: Int32Array;
  rowFirst: Int32Array;
  /** The same per parent. */
  parentFull: Int32Array;
  parentFirst: Int32Array;
  /** Number of full keys and of first-column keys (ids are below these). */
  fulls: number;
  firsts: number;
}

/** Per context column, key text -> id, in order of first use. */
class KeyNumbers {
  private readonly ids: Map<string, number>[];
  constructor(width: number) {
    this.ids = Array.from({ length: width }, () => new Map<string, number>());
  }
  id(c: number, key: string): number {
    const m = this.ids[c];
    let k = m.get(key);
    if (k === undefined) m.set(key, (k = m.size));
    return k;
  }
  /** Distinct keys of column c so far. */
  size(c: number): number {
    return this.ids[c].size;
  }
}

/** Per column of `coded`, per row its key's id: a code's key looked up once. */
function codedIds(coded: readonly CodedColumn[], m: number, numbers: KeyNumbers): Int32Array[] {
  const out = coded.map(() => new Int32Array(m));
  const byCode = coded.map((c) => new Int32Array(c.keys.length).fill(-1));
  for (let r = 0; r < m; r++) {
    for (let c = 0; c < coded.length; c++) {
      const code = coded[c].codes[r];
      let id = byCode[c][code];
      if (id < 0) byCode[c][code] = id = numbers.id(c, coded[c].keys[code]);
      out[c][r] = id;
    }
  }
  return out;
}

/**
 * Per column of `columns`, per row of `t` its key's id: `keysOf` of the cell alone ("" for a
 * column `t` lacks), called once per code-book entry of a table held by column, else once per
 * distinct cell text. Rows in order, so a column's ids follow first appearance.
 */
function tableIds(t: Table, columns: readonly string[], keysOf: (t: Table) => string[], numbers: KeyNumbers): Int32Array[] {
  const b = byColumn(t);
  const n = rowCount(t);
  return columns.map((name, c) => {
    const out = new Int32Array(n);
    const j = t.columns.indexOf(name);
    const held = b !== undefined && j >= 0 ? b.sourceColumn(j) : undefined;
    const at = held?.at;
    if (held !== undefined && held.col.kind === "dict") {
      const col = held.col;
      const entry = keysOf({ columns: [name], rows: col.dict.map((v) => [v]) });
      const ids = new Int32Array(entry.length).fill(-1);
      for (let r = 0; r < n; r++) {
        const e = col.index[at === undefined ? r : at[r]];
        if (ids[e] < 0) ids[e] = numbers.id(c, entry[e]);
        out[r] = ids[e];
      }
      return out;
    }
    const memo = new Map<string, number>();
    for (let r = 0; r < n; r++) {
      const v = j < 0 ? "" : held !== undefined ? cellText(held.col, at === undefined ? r : at[r]) : t.rows[r][j];
      let id = memo.get(v);
      if (id === undefined) memo.set(v, (id = numbers.id(c, keysOf({ columns: [name], rows: [[v]] })[0])));
      out[r] = id;
    }
    return out;
  });
}

/**
 * {@link NumberedKeys} of rows and parents given per column ids ({@link codedIds},
 * {@link tableIds}) of one {@link KeyNumbers}, the rows numbered first.
 */
function numberKeys(rowIds: readonly Int32Array[], parentIds: readonly Int32Array[], numbers: KeyNumbers): NumberedKeys {
  const width = rowIds.length;
  const sizes = rowIds.map((_, c) => numbers.size(c));
  // A tuple as one number while the ids' product stays exact, else as text.
  const exact = sizes.reduce((a, b) => a * Math.max(b, 1), 1) < 2 ** 53;
  const fullOf = new Map<number | string, number>();
  const full = (ids: readonly Int32Array[], r: number): number => {
    let key: number | string = ids[0][r];
    for (let c = 1; c < width; c++) key = exact ? (key as number) * sizes[c] + ids[c][r] : `${key},${ids[c][r]}`;
    let id = fullOf.get(key);
    if (id === undefined) fullOf.set(key, (id = fullOf.size));
    return id;
  };
  const fulls = (ids: readonly Int32Array[]): Int32Array => {
    const n = ids[0]?.length ?? 0;
    const out = new Int32Array(n);
    for (let r = 0; r < n; r++) out[r] = full(ids, r);
    return out;
  };
  const rowFull = fulls(rowIds);
  const parentFull = fulls(parentIds);
  return { rowFull, rowFirst: rowIds[0], parentFull, parentFirst: parentIds[0], fulls: fullOf.size, firsts: numbers.size(0) };
}

/** {@link NumberedKeys} of key strings (columns' keys joined by NUL, as `codeKeys` gives them). */
export function numberKeyStrings(rowKeys: readonly string[], parentKeys: readonly string[]): NumberedKeys {
  const fullOf = new Map<string, number>();
  const firstOfKey = new Map<string, number>();
  const number = (keys: readonly string[]): [Int32Array, Int32Array] => {
    const full = new Int32Array(keys.length);
    const first = new Int32Array(keys.length);
    for (let i = 0; i < keys.length; i++) {
      let id = fullOf.get(keys[i]);
      if (id === undefined) fullOf.set(keys[i], (id = fullOf.size));
      const f = firstOf(keys[i]);
      let fi = firstOfKey.get(f);
      if (fi === undefined) firstOfKey.set(f, (fi = firstOfKey.size));
      full[i] = id;
      first[i] = fi;
    }
    return [full, first];
  };
  const [rowFull, rowFirst] = number(rowKeys);
  const [parentFull, parentFirst] = number(parentKeys);
  return { rowFull, rowFirst, parentFull, parentFirst, fulls: fullOf.size, firsts: firstOfKey.size };
}

/** One table's fitted model as generation uses it (a `Synthesizer`, or a test's stand-in). */
export interface TableModel {
  /** `n` rows of the model's columns (`TablePlan.modelColumns`), optionally satisfying `where`. */
  sample(n: number, seed: number, where?: Where): Promise<Table>;
  /** One row per seed row, its non-blank cells kept and conditioned on, the blank ones drawn. */
  sampleSeeded(seed: Table, seedValue: number): Promise<Table>;
  /**
   * Each row's cells as one key of the model's codes (equal keys: the same condition). With it, a
   * child is drawn plainly and matched to its parents ({@link matchedChildRows}); without, seeded.
   */
  codeKeys?(table: Table): string[];
  /**
   * {@link sample} with each row's drawn codes of `columns`: matching then reads the codes, never
   * the decoded cells of `columns` (which the model may leave unfinished). Needs {@link codeKeys}.
   */
  sampleCoded?(n: number, seed: number, columns: readonly string[]): Promise<CodedSample>;
}

/** A plain draw with its codes of some columns ({@link TableModel.sampleCoded}). */
export interface CodedSample {
  rows: Table;
  /** Per column asked for, per row its code and per code its {@link TableModel.codeKeys} key. */
  coded: CodedColumn[];
}

/** One column's codes: `codes[r]` of row r, whose key is `keys[codes[r]]`. */
export interface CodedColumn {
  column: string;
  codes: Int32Array;
  keys: string[];
}

/** 0, 1, ..., n - 1 (a loop: a typed array's `from` with a map function is slow at a million). */
function iota(n: number): Int32Array {
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) out[i] = i;
  return out;
}

/** Options of {@link generateDatabase}. */
export interface DatabaseSampleOptions {
  /** Rows of every root table as a multiple of its real rows (default 1); children follow. */
  scale?: number;
  /**
   * Rows of a table, instead of the scaled count: a root table's rows; a child's rows in total,
   * spread over its parents in proportion to their drawn children counts (not a sequence table).
   */
  sizes?: Record<string, number>;
  /** Seeded generation of a root table (`--where`); its children follow its rows. */
  where?: Record<string, Where>;
  seed?: number;
  /**
   * How a child with context columns is drawn when its model gives code keys: `matched` (default;
   * a plain draw matched to parents, {@link matchedChildRows}) or `seeded` (one seeded row per child).
   */
  childDraw?: "matched" | "seeded";
  /** Called when a table is done, with its rows and milliseconds. */
  onTable?: (table: string, rows: number, ms: number) => void;
}

/** Each table's generated model rows and keys, for its children. */
interface Generated {
  model: Table;
  keys: string[];
}

/** The number in a children-count cell: a non-negative integer, 0 for a blank or non-number. */
function childCount(cell: string): number {
  const x = Number(cell);
  return cell.trim() === "" || !Number.isFinite(x) || x < 0 ? 0 : Math.round(x);
}

/**
 * Generates every table of `plan`, parents first (docs/relational.md "Generation"): a child's
 * counts per parent are the parents' drawn children columns scaled to the real ratio of child to
 * parent rows (kept as drawn under a `where`); a sequence table goes step by step.
 * @returns the tables, columns in the real tables' order.
 * @throws RangeError for a bad scale or size, DataError for a `where` or size naming a table that
 *   is not a root, and the errors of the models' generation.
 */
export async function generateDatabase(plan: DatabasePlan, models: Record<string, TableModel>, opts: DatabaseSampleOptions = {}): Promise<Record<string, Table>> {
  const scale = opts.scale ?? 1;
  if (!(Number.isFinite(scale) && scale > 0)) throw new RangeError("scale must be a positive number");
  for (const [what, m] of [["size", opts.sizes], ["where", opts.where]] as const) {
    for (const t of Object.keys(m ?? {})) {
      if (plan.tables[t] === undefined) throw new DataError(`${what} for table "${t}", which the database lacks (tables: ${plan.order.join(", ")}).`);
      if (what === "where" && plan.tables[t].foreignKeys.length > 0) throw new DataError(`where for table "${t}": only root tables (no foreign key) take one; a child's rows follow its parents'.`);
      if (what === "size" && plan.tables[t].sequence !== undefined) throw new DataError(`size for table "${t}": a sequence table's rows follow its entities (a step per period); size its parent instead.`);
    }
  }
  for (const [t, n] of Object.entries(opts.sizes ?? {})) if (!(Number.isInteger(n) && n >= 1)) throw new RangeError(`size of "${t}" must be a positive integer`);
  const seed = opts.seed ?? Math.floor(Math.random() * 2 ** 47);
  const done = new Map<string, Generated>();
  const conditioned = new Set(Object.keys(opts.where ?? {}));
  const out: Record<string, Table> = {};
  for (const [ti, t] of plan.order.entries()) {
    const started = Date.now();
    const p = plan.tables[t];
    const model = models[t];
    if (model === undefined) throw new DataError(`no model for table "${t}".`);
    const tableSeed = deriveSeed(seed, ti, 0);
    let rows: Table;
    let parentRow: number[] = [];
    let coded: CodedColumn[] | undefined;
    if (p.foreignKeys.length === 0) {
      const n = opts.sizes?.[t] ?? Math.max(1, Math.round(p.rows * scale));
      rows = await model.sample(n, tableSeed, opts.where?.[t]);
    } else {
      const first = p.foreignKeys[0];
      const parent = done.get(first.parent)!;
      const countCol = plan.tables[first.parent].counts.find((c) => c.child === t && c.childKey === first.childKey)!.column;
      const cj = parent.model.columns.indexOf(countCol);
      const drawn = parent.model.rows.map((r) => childCount(r[cj]));
      // Under a root's `where` the parents are not the real mix, so their counts stay as drawn.
      if (p.foreignKeys.some((f) => conditioned.has(f.parent))) conditioned.add(t);
      const want = (p.rows * parent.model.rows.length) / plan.tables[first.parent].rows;
      const size = opts.sizes?.[t];
      const counts = size !== undefined
        ? exactCounts(drawn.some((c) => c > 0) ? drawn : drawn.map(() => 1), size, new Rng(deriveSeed(seed, ti, 3)))
        : conditioned.has(t) ? drawn : scaleCounts(drawn, want, new Rng(deriveSeed(seed, ti, 3)));
      if (p.sequence !== undefined) {
        ({ rows, parentRow } = await sequenceRows(model, p, first, parent.model, counts, tableSeed));
      } else {
        if (model.codeKeys !== undefined && first.context.length > 0 && opts.childDraw !== "seeded") {
          // Only the first key's context is read as codes: a later key places every row (no
          // spare rows), so it matches on the finished cells, points inside their states.
          ({ rows, parentRow, coded } = await matchedChildRows(model, first, parent.model, counts, tableSeed, first.context.map((c) => c.column)));
        } else {
          counts.forEach((c, i) => {
            for (let k = 0; k < c; k++) parentRow.push(i);
          });
          rows = await childRows(model, p, first, parent.model, parentRow, tableSeed);
        }
      }
      if (first.orders !== undefined) keepOrders(first.orders, rows, parent.model, parentRow, new Rng(deriveSeed(seed, ti, 5)));
    }
    // Per foreign key, each row's parent row (-1: none).
    const fks = p.foreignKeys.map((f, k) => {
      if (k === 0) return Int32Array.from(parentRow);
      const countCol = plan.tables[f.parent].counts.find((c) => c.child === t && c.childKey === f.childKey)!.column;
      const codedKeys = codedOf(coded, f);
      return matchParents(f, rows, done.get(f.parent)!, countCol, deriveSeed(seed, ti, 2, k), model.codeKeys?.bind(model), f.differsFromFirst ? parentRow : undefined, codedKeys);
    });
    const parentKeys = p.foreignKeys.map((f) => done.get(f.parent)!.keys);
    // A primary key that is also a foreign key (one-to-one) keeps its parent's key.
    const sharedKey = p.foreignKeys.findIndex((f) => f.childKey === p.primaryKey);
    const keys = sharedKey >= 0 ? keysOfRows(fks[sharedKey], parentKeys[sharedKey]) : freshKeys(p, rows, deriveSeed(seed, ti, 1));
    const order = rowOrder(p, rows, keys, deriveSeed(seed, ti, 4));
    const held = byColumn(rows);
    if (held !== undefined) rows = held.select(order);
    else {
      const before = rows.rows;
      rows.rows = order.map((i) => before[i]);
    }
    const sortedKeys = keys.length > 0 ? order.map((i) => keys[i]) : keys;
    const sortedFks = fks.map((f) => {
      const o = new Int32Array(order.length);
      for (let i = 0; i < order.length; i++) o[i] = f[order[i]];
      return o;
    });
    done.set(t, { model: rows, keys: sortedKeys });
    out[t] = outputTable(p, rows, sortedKeys, sortedFks, parentKeys);
    parentRow = [];
    opts.onTable?.(t, rowCount(rows), Date.now() - started);
  }
  return out;
}

/**
 * Children counts scaled to sum to about `want` (the real children per real parent times the
 * generated parents): the largest counts, those that hold at least half the children, times
 * (want - the others' sum) / their sum, rounded up with probability the fraction (`exact`: the
 * largest fractions rounded up, so the sum is `want`); the others kept as drawn. A drawn total
 * off the real one comes from the heavy tail (a hub drawn too many or too few), and scaling every
 * count alike would round small counts to 0 (with a factor of 0.9, one parent of one child in
 * ten); when the small counts alone reach `want`, every count is scaled.
 */
function scaleCounts(counts: number[], want: number, rng: Rng, exact = false): number[] {
  const sum = counts.reduce((a, b) => a + b, 0);
  if (sum === 0) return counts;
  const byCount = Array.from(counts.keys()).sort((a, b) => counts[b] - counts[a] || a - b);
  let top = 0;
  let held = 0;
  while (top < byCount.length && held < sum / 2) held += counts[byCount[top++]];
  if (!(want - (sum - held) > 0)) [top, held] = [byCount.length, sum];
  const scaled = byCount.slice(0, top);
  const target = want - (sum - held);
  const out = [...counts];
  if (exact) {
    exactCounts(scaled.map((i) => counts[i]), Math.round(target), rng).forEach((c, k) => (out[scaled[k]] = c));
    return out;
  }
  for (const i of scaled) {
    const x = (counts[i] * target) / held;
    out[i] = Math.floor(x) + (rng.next() < x - Math.floor(x) ? 1 : 0);
  }
  return out;
}

/**
 * Children counts scaled to sum to exactly `total`: each count times total / sum, rounded down,
 * then one more for the parents of the largest fractions (ties broken at random).
 */
function exactCounts(counts: number[], total: number, rng: Rng): number[] {
  const sum = counts.reduce((a, b) => a + b, 0);
  const x = counts.map((c) => (c * total) / sum);
  const out = x.map(Math.floor);
  const left = total - out.reduce((a, b) => a + b, 0);
  const byFraction = x.map((v, i) => ({ i, f: v - Math.floor(v) + rng.next() * 1e-9 })).sort((a, b) => b.f - a.f);
  for (let k = 0; k < left; k++) out[byFraction[k].i]++;
  return out;
}

/**
 * The output order of a table's rows: by its real rows' sorted column when it has one (the
 * primary key by the fresh keys), else shuffled, so children do not come grouped by parent.
 */
function rowOrder(p: TablePlan, rows: Table, keys: string[], seed: number): number[] {
  const idx = Array.from({ length: rowCount(rows) }, (_, i) => i);
  if (p.sequence !== undefined) return idx;
  const s = p.sortedBy;
  if (s === undefined) return Array.from(new Rng(seed).shuffle(Int32Array.from(idx)));
  const j = rows.columns.indexOf(s.column);
  if (s.column !== p.primaryKey && j < 0) return idx;
  if (s.column === p.primaryKey) return stableOrder(keys, s.numeric);
  const col = byColumn(rows)?.column(j);
  // A code book is ranked once per entry; other columns by their cells' texts.
  if (col?.kind === "dict") return orderByIds(col.index, col.dict, s.numeric);
  if (col !== undefined) return stableOrder(col.kind === "text" ? col.cells : idx.map((i) => cellText(col, i)), s.numeric);
  return stableOrder(idx.map((i) => rows.rows[i][j]), s.numeric);
}

/**
 * The row indices of `values` in ascending order of their values (numerically or as text), equal
 * values in row order: the distinct values are sorted, then rows are placed by their value's rank
 * (a counting sort), so a million rows cost one pass and a sort of their distinct values.
 */
export function stableOrder(values: readonly string[], numeric: boolean): number[] {
  const digits = numeric ? undefined : digitKeys(values);
  if (digits !== undefined) return orderByNumbers(digits);
  // One lookup per row: each row's distinct-value id, then the distinct values sorted.
  const idOf = new Map<string, number>();
  const distinct: string[] = [];
  const ids = new Int32Array(values.length);
  for (let i = 0; i < values.length; i++) {
    let k = idOf.get(values[i]);
    if (k === undefined) idOf.set(values[i], (k = distinct.push(values[i]) - 1));
    ids[i] = k;
  }
  return orderByIds(ids, distinct, numeric);
}

/** Most digits a {@link digitKeys} key holds (below 2^53, so every key is exact). */
const MAX_KEY_DIGITS = 15;

/**
 * Per value, its digits read as one number, when every value has the first one's shape: the same
 * length and the same non-digit characters in the same places (dates and times written in one
 * fixed-width format, zero-padded codes), at most {@link MAX_KEY_DIGITS} digits. Two such values
 * first differ at a digit, so their text order is their keys' order, and equal keys are equal
 * texts. Else undefined.
 */
function digitKeys(values: readonly string[]): Float64Array | undefined {
  if (values.length === 0) return undefined;
  const shape = values[0];
  const len = shape.length;
  const isDigit = new Uint8Array(len);
  const code = new Uint16Array(len);
  let count = 0;
  for (let c = 0; c < len; c++) {
    code[c] = shape.charCodeAt(c);
    isDigit[c] = code[c] >= 48 && code[c] <= 57 ? 1 : 0;
    count += isDigit[c];
  }
  if (count === 0 || count > MAX_KEY_DIGITS) return undefined;
  const keys = new Float64Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v.length !== len) return undefined;
    let x = 0;
    for (let c = 0; c < len; c++) {
      const ch = v.charCodeAt(c);
      if (isDigit[c] === 1) {
        if (ch < 48 || ch > 57) return undefined;
        x = x * 10 + (ch - 48);
      } else if (ch !== code[c]) return undefined;
    }
    keys[i] = x;
  }
  return keys;
}

/**
 * The row indices of `keys` in ascending order, equal keys in row order: the keys sorted (a typed
 * sort), each row's rank found by binary search among the distinct ones, rows placed by rank.
 */
function orderByNumbers(keys: Float64Array): number[] {
  const sorted = keys.slice().sort();
  let d = 0;
  for (let k = 0; k < sorted.length; k++) if (k === 0 || sorted[k] !== sorted[d - 1]) sorted[d++] = sorted[k];
  const rank = new Int32Array(keys.length);
  const start = new Uint32Array(d + 1);
  for (let i = 0; i < keys.length; i++) {
    let [lo, hi] = [0, d - 1];
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sorted[mid] < keys[i]) lo = mid + 1;
      else hi = mid;
    }
    rank[i] = lo;
    start[lo + 1]++;
  }
  for (let k = 1; k <= d; k++) start[k] += start[k - 1];
  const out = new Array<number>(keys.length);
  for (let i = 0; i < keys.length; i++) out[start[rank[i]]++] = i;
  return out;
}

/**
 * {@link stableOrder} of rows given as ids into `distinct` (row i's value is `distinct[ids[i]]`;
 * entries may repeat): the entries sorted, rows placed by rank, equal values in row order.
 */
function orderByIds(ids: Int32Array, distinct: readonly string[], numeric: boolean): number[] {
  const cmp = (x: string, y: string): number => (numeric ? Number(x) - Number(y) : x < y ? -1 : x > y ? 1 : 0);
  const sorted = Int32Array.from(distinct.keys()).sort((a, b) => cmp(distinct[a], distinct[b]));
  const rank = new Int32Array(distinct.length);
  let r = 0;
  sorted.forEach((d, k) => {
    // Values the comparison holds equal ("1" and "1.0") share a rank, so they keep row order.
    if (k > 0 && cmp(distinct[sorted[k - 1]], distinct[d]) !== 0) r++;
    rank[d] = r;
  });
  const start = new Uint32Array(r + 2);
  for (let i = 0; i < ids.length; i++) start[rank[ids[i]] + 1]++;
  for (let k = 1; k < start.length; k++) start[k] += start[k - 1];
  const out = new Array<number>(ids.length);
  for (let i = 0; i < ids.length; i++) out[start[rank[ids[i]]]++] = i;
  return out;
}

/** A child's model rows: seeded by the parents' context values, or plain without context. */
async function childRows(model: TableModel, p: TablePlan, fk: ForeignKeyPlan, parent: Table, parentRow: number[], seed: number): Promise<Table> {
  if (parentRow.length === 0) return { columns: [...p.modelColumns], rows: [] };
  if (fk.context.length === 0) return model.sample(parentRow.length, seed);
  const pj = fk.context.map((c) => parent.columns.indexOf(c.parentColumn));
  const seedTable: Table = { columns: fk.context.map((c) => c.column), rows: parentRow.map((i) => pj.map((j) => parent.rows[i][j])) };
  return model.sampleSeeded(seedTable, seed);
}

/** A plain draw is this many times a child's rows, so most context groups have rows to spare. */
export const MATCH_POOL = 1.25;

/**
 * A child's rows by a plain draw matched to its parents: `MATCH_POOL` x the rows drawn plainly
 * (context columns drawn with the rest), each parent's `counts[i]` slots filled, in random order,
 * with drawn rows whose context codes equal the parent's (`codeKeys`: the same bins and categories
 * the model conditions on), else agreeing on the first context column, else any row left. One
 * plain draw in place of one seeded row per child: the seeded draw's cost is per row (about 10x a
 * plain row's, docs/relational.md "Cost").
 */
export async function matchedChildRows(
  model: TableModel,
  fk: ForeignKeyPlan,
  parent: Table,
  counts: number[],
  seed: number,
  codedColumns: readonly string[] = [],
): Promise<{ rows: Table; parentRow: number[]; coded?: CodedColumn[] }> {
  const n = counts.reduce((a, b) => a + b, 0);
  const size = n === 0 ? 0 : Math.max(n + 1, Math.ceil(n * MATCH_POOL));
  const withCodes = model.sampleCoded !== undefined && n > 0 && codedColumns.length > 0;
  const drawn = withCodes ? await model.sampleCoded!(size, seed, codedColumns) : { rows: await model.sample(size, seed), coded: undefined };
  const pool = drawn.rows;
  if (n === 0) return { rows: { columns: pool.columns, rows: [] }, parentRow: [] };
  const rng = new Rng(deriveSeed(seed, 1));
  const cols = fk.context.map((c) => c.column);
  const pj = fk.context.map((c) => parent.columns.indexOf(c.parentColumn));
  const poolCoded = codedOf(drawn.coded, fk);
  const keysOf = model.codeKeys!.bind(model);
  const numbers = new KeyNumbers(cols.length);
  const poolIds = poolCoded !== undefined ? codedIds(poolCoded, rowCount(pool), numbers) : tableIds(pool, cols, keysOf, numbers);
  const parentIds = tableIds({ columns: cols, rows: parent.rows.map((r) => pj.map((j) => r[j])) }, cols, keysOf, numbers);
  const keys = numberKeys(poolIds, parentIds, numbers);
  const slots: number[] = [];
  counts.forEach((c, i) => {
    for (let k = 0; k < c; k++) slots.push(i);
  });
  const chosen = fillNumberedSlots(keys, slots, rng);
  const coded = drawn.coded?.map((c) => {
    const codes = new Int32Array(chosen.length);
    for (let s = 0; s < chosen.length; s++) codes[s] = c.codes[chosen[s]];
    return { ...c, codes };
  });
  const held = byColumn(pool);
  let rows: Table;
  if (held !== undefined) rows = held.select(chosen);
  else {
    rows = { columns: pool.columns, rows: new Array<string[]>(chosen.length) };
    for (let s = 0; s < chosen.length; s++) rows.rows[s] = pool.rows[chosen[s]];
  }
  return { rows, parentRow: slots, ...(coded !== undefined ? { coded } : {}) };
}

/** `coded`'s columns of `fk`'s context, in its order; undefined when one is missing. */
function codedOf(coded: readonly CodedColumn[] | undefined, fk: ForeignKeyPlan): CodedColumn[] | undefined {
  if (coded === undefined || fk.context.length === 0) return undefined;
  const out = fk.context.map((c) => coded.find((d) => d.column === c.column));
  return out.every((c) => c !== undefined) ? (out as CodedColumn[]) : undefined;
}

/** Rows looked at past the first one a slot may not take (`avoid`) before the next fallback. */
const AVOID_SCAN = 64;

/** The first context column's code of a key ({@link fillSlots}). */
function firstOf(k: string): string {
  const end = k.indexOf("\u0000");
  return end < 0 ? k : k.slice(0, end);
}

/** Options of {@link fillSlots}. */
export interface FillOptions {
  /** A row is never taken for parent `avoid[row]` (a flight's origin as its destination). */
  avoid?: readonly number[];
}

/**
 * Rows for slots: slot s belongs to parent `slotParent[s]` and, in random order, takes an unused
 * row whose key (`rowKeys`, the model's context codes joined by NUL) equals its parent's
 * (`parentKeys`), else one agreeing on the first context column, else any unused row; never a
 * row whose `opts.avoid` entry is the slot's parent.
 * @returns per slot its row, -1 when no row is left for it.
 */
export function fillSlots(rowKeys: readonly string[], parentKeys: readonly string[], slotParent: readonly number[], rng: Rng, opts: FillOptions = {}): Int32Array {
  return fillNumberedSlots(numberKeyStrings(rowKeys, parentKeys), slotParent, rng, opts);
}

/** {@link fillSlots} on keys numbered ({@link NumberedKeys}): the same rows for the same grouping. */
export function fillNumberedSlots(keys: NumberedKeys, slotParent: readonly number[], rng: Rng, opts: FillOptions = {}): Int32Array {
  const avoid = opts.avoid;
  const { rowFull, rowFirst, parentFull, parentFirst } = keys;
  // Rows by full key and by first key, each in random order; a row is taken once.
  const order = rng.shuffle(iota(rowFull.length));
  const full = RowLists.of(rowFull, keys.fulls, order);
  const first = RowLists.of(rowFirst, keys.firsts, order);
  const all = new RowLists(order, Int32Array.of(0), Int32Array.of(order.length));
  const taken = new Uint8Array(rowFull.length);
  const take = (lists: RowLists, list: number, parent: number): number => {
    const { items, start, size } = lists;
    const base = start[list];
    for (let k = size[list] - 1, seen = 0; k >= 0 && seen <= AVOID_SCAN; k--) {
      const i = items[base + k];
      const skip = taken[i] === 0 && avoid !== undefined && avoid[i] === parent;
      if (!skip) {
        // Swap-remove: the row moved into k was looked at already.
        items[base + k] = items[base + size[list] - 1];
        size[list]--;
        if (taken[i] === 0) {
          taken[i] = 1;
          return i;
        }
      } else seen++;
    }
    return -1;
  };
  const slotOrder = rng.shuffle(iota(slotParent.length));
  const chosen = new Int32Array(slotParent.length).fill(-1);
  for (const s of slotOrder) chosen[s] = take(full, parentFull[slotParent[s]], slotParent[s]);
  for (const s of slotOrder) if (chosen[s] < 0) chosen[s] = take(first, parentFirst[slotParent[s]], slotParent[s]);
  for (const s of slotOrder) if (chosen[s] < 0) chosen[s] = take(all, 0, slotParent[s]);
  return chosen;
}

/** Lists of rows held in one array: list k is `items[start[k] .. start[k] + size[k])`. */
class RowLists {
  constructor(
    readonly items: Int32Array,
    readonly start: Int32Array,
    readonly size: Int32Array,
  ) {}

  /** Per id below `count`, the rows of that id (`ids[row]`), in the order `order` gives them. */
  static of(ids: Int32Array, count: number, order: Int32Array): RowLists {
    const size = new Int32Array(count);
    for (let i = 0; i < ids.length; i++) size[ids[i]]++;
    const start = new Int32Array(count);
    for (let k = 1; k < count; k++) start[k] = start[k - 1] + size[k - 1];
    const items = new Int32Array(ids.length);
    const fill = start.slice();
    for (let q = 0; q < order.length; q++) {
      const i = order[q];
      items[fill[ids[i]]++] = i;
    }
    return new RowLists(items, start, size);
  }
}

/**
 * A sequence table's rows, one step at a time for all entities at once: step k of an entity is
 * drawn by seeded generation given its parent's context, whether it is the first row, the panel's
 * k-th period (a complete panel: every entity gets every period once, in order) and its own row
 * k - 1 (the lag-1 columns). Rows come entity by entity, in index order.
 */
async function sequenceRows(model: TableModel, p: TablePlan, fk: ForeignKeyPlan, parent: Table, counts: number[], seed: number): Promise<{ rows: Table; parentRow: number[] }> {
  const seq = p.sequence!;
  const periods = seq.periods;
  const len = counts.map((c) => (periods !== undefined ? (c > 0 ? periods.length : 0) : c));
  const steps = len.reduce((a, b) => Math.max(a, b), 0);
  const pj = fk.context.map((c) => parent.columns.indexOf(c.parentColumn));
  const columns = [...fk.context.map((c) => c.column), seq.first, ...(periods !== undefined ? [seq.index] : []), ...seq.lag.map((l) => l.prev)];
  const lagAt = seq.lag.map((l) => p.modelColumns.indexOf(l.column));
  const byEntity: string[][][] = len.map(() => []);
  let modelColumns = [...p.modelColumns];
  const rng = new Rng(deriveSeed(seed, 0, 7));
  for (let k = 0; k < steps; k++) {
    const active: number[] = [];
    len.forEach((n, e) => n > k && active.push(e));
    const seedRows = active.map((e) => {
      const prev = byEntity[e][k - 1];
      return [
        ...pj.map((j) => parent.rows[e][j]),
        k === 0 ? "1" : "0",
        ...(periods !== undefined ? [periods[k]] : []),
        ...lagAt.map((j) => (prev === undefined ? "" : prev[j])),
      ];
    });
    const got = await model.sampleSeeded({ columns, rows: seedRows }, deriveSeed(seed, k));
    modelColumns = got.columns;
    const ij = got.columns.indexOf(seq.index);
    got.rows.forEach((r, a) => {
      const prev = byEntity[active[a]][k - 1];
      if (prev !== undefined) applySteps(seq, got.columns, prev, r);
      // An index that repeats or goes back within an entity moves forward by a real increase.
      const up = seq.increases;
      if (prev !== undefined && up !== undefined && ij >= 0 && prev[ij].trim() !== "" && Number.isFinite(Number(prev[ij])) && !(Number(r[ij]) > Number(prev[ij]))) {
        const q = rng.int(up.deciles.length - 1);
        const d = Math.max(up.deciles[q] + rng.next() * (up.deciles[q + 1] - up.deciles[q]), 10 ** -up.decimals);
        r[ij] = (Number(prev[ij]) + d).toFixed(up.decimals);
      }
      byEntity[active[a]].push(r);
    });
  }
  const rows: string[][] = [];
  const parentRow: number[] = [];
  byEntity.forEach((es, e) => {
    for (const r of es) {
      rows.push(r);
      parentRow.push(e);
    }
  });
  return { rows: { columns: modelColumns, rows }, parentRow };
}

/** A row's stepped columns as the previous row's value plus the drawn change, in the real range. */
function applySteps(seq: NonNullable<TablePlan["sequence"]>, columns: string[], prev: string[], row: string[]): void {
  for (const x of seq.steps) {
    const [j, sj] = [columns.indexOf(x.column), columns.indexOf(x.step)];
    const [a, d] = [prev[j], row[sj]];
    if (a.trim() === "" || d.trim() === "" || !Number.isFinite(Number(a) + Number(d))) continue;
    row[j] = Math.min(x.max, Math.max(x.min, Number(a) + Number(d))).toFixed(x.decimals);
  }
}

/**
 * Rewrites the child datetimes that break an order the real rows always held: `equal`, the
 * parent's value (in the child's format); `after`, a child value before its parent's (or not a
 * datetime) becomes the parent's plus a gap drawn from the real gaps' deciles (uniform between two
 * adjacent ones). Rows with a blank either side are left as drawn. In place.
 */
export function keepOrders(orders: readonly CrossTableOrder[], rows: Table, parent: Table, parentRow: readonly number[], rng: Rng): void {
  for (const o of orders) {
    const cj = rows.columns.indexOf(o.column);
    const pj = parent.columns.indexOf(o.parentColumn);
    if (cj < 0 || pj < 0) continue;
    const fmt = new DatetimeFormat(o.format);
    const parseChild = datetimeParser(fmt);
    const parseParent = datetimeParser(new DatetimeFormat(o.parentFormat));
    const sameFormat = o.format === o.parentFormat;
    rows.rows.forEach((r, i) => {
      const pv = parent.rows[parentRow[i]][pj];
      if (r[cj] === "" || pv === "") return;
      const b = parseParent(pv);
      if (b === undefined) return;
      if (o.relation === "equal") {
        r[cj] = sameFormat ? pv : fmt.write(b / 1000, 0);
        return;
      }
      const a = parseChild(r[cj]);
      if (a !== undefined && a >= b) return;
      const g = o.gaps!;
      const k = rng.int(g.length - 1);
      let text = fmt.write(b / 1000 + g[k] + rng.next() * (g[k + 1] - g[k]), 0);
      // Rounding to the format's unit may land before the parent: then the parent's value itself.
      const back = parseChild(text);
      if (back === undefined || back < b) text = sameFormat ? pv : fmt.write(Math.ceil(b / 1000), 0);
      r[cj] = text;
    });
  }
}

/**
 * Primary keys of the generated `rows`, distinct: a public-vocabulary key's real values, each
 * once, rows taken in random order and each given the unused value whose real cells agree with
 * most of its own (ties at random), so a country keeps its cluster; rows beyond the values get
 * fresh keys in the key's shape, unlike any of them. Else fresh keys in the real key's shape,
 * distinct by construction; none without a key.
 */
function freshKeys(p: TablePlan, rows: Table, key: number): string[] {
  const n = rowCount(rows);
  if (p.keyShape === undefined) return [];
  const gen = new IdGenerator(p.keyShape, key);
  if (p.publicKey === undefined) return Array.from({ length: n }, (_, i) => gen.value(i));
  const { values, columns, cells } = p.publicKey;
  const at = columns.map((c) => rows.columns.indexOf(c));
  const rng = new Rng(deriveSeed(key, 1));
  const out = new Array<string>(n);
  const free = Array.from({ length: values.length }, (_, i) => i);
  for (const r of rng.shuffle(Int32Array.from({ length: n }, (_, i) => i))) {
    if (free.length === 0) break;
    let best: number[] = [];
    let top = -1;
    for (const [slot, v] of free.entries()) {
      let agree = 0;
      for (let c = 0; c < at.length; c++) if (at[c] >= 0 && cells[v][c] !== "" && cells[v][c] === rows.rows[r][at[c]]) agree++;
      if (agree > top) [best, top] = [[slot], agree];
      else if (agree === top) best.push(slot);
    }
    const slot = best[rng.int(best.length)];
    out[r] = values[free[slot]];
    free.splice(slot, 1);
  }
  const used = new Set(out);
  for (let r = 0, i = 0; r < n; r++) {
    while (out[r] === undefined) {
      const v = gen.value(i++);
      if (!used.has(v)) out[r] = v;
    }
  }
  return out;
}

/**
 * The parent row of each row through a foreign key other than the first (-1 without parent rows), placed as the first key's
 * children are ({@link matchedChildRows}): each generated parent's drawn children count for this
 * relationship, scaled to exactly this table's rows ({@link scaleCounts}), gives it slots, filled
 * ({@link fillSlots}) with the rows whose context codes (`codeKeys`, else the raw values) equal the
 * parent's, else agree on the first context column, else any row left; never the row's first-key
 * parent (`avoid`). A row left by that rule goes to an open slot of another parent, else to a
 * parent drawn in proportion to its count.
 */
function matchParents(
  fk: ForeignKeyPlan,
  rows: Table,
  parent: Generated,
  countCol: string,
  seed: number,
  codeKeys?: (t: Table) => string[],
  avoid?: number[],
  coded?: readonly CodedColumn[],
): Int32Array {
  const rng = new Rng(seed);
  const n = rowCount(parent.model);
  const m = rowCount(rows);
  if (n === 0) return new Int32Array(m).fill(-1);
  if (m === 0) return new Int32Array(0);
  const kj = parent.model.columns.indexOf(countCol);
  const drawn = parent.model.rows.map((r) => childCount(r[kj]));
  const cols = fk.context.map((c) => c.column);
  const pj = fk.context.map((c) => parent.model.columns.indexOf(c.parentColumn));
  const keysOf = codeKeys ?? ((t: Table): string[] => t.rows.map((r) => r.join("\u0000")));
  const numbers = new KeyNumbers(cols.length);
  const rowIds = coded !== undefined && codeKeys !== undefined ? codedIds(coded, m, numbers) : tableIds(rows, cols, keysOf, numbers);
  const parentIds = tableIds({ columns: cols, rows: parent.model.rows.map((r) => pj.map((j) => (j < 0 ? "" : r[j]))) }, cols, keysOf, numbers);
  const keys = numberKeys(rowIds, parentIds, numbers);
  const capacity = contextCapacity(drawn, keys.parentFirst, keys.rowFirst, keys.firsts, rng);
  const slotParent: number[] = [];
  capacity.forEach((c, i) => {
    for (let k = 0; k < c; k++) slotParent.push(i);
  });
  const chosen = fillNumberedSlots(keys, slotParent, rng, avoid !== undefined ? { avoid } : {});
  const of = new Int32Array(m).fill(-1);
  const open: number[] = [];
  chosen.forEach((row, s) => (row >= 0 ? (of[row] = slotParent[s]) : open.push(slotParent[s])));
  rng.shuffle(open);
  const sums: number[] = [];
  capacity.forEach((c, i) => (sums[i] = (sums[i - 1] ?? 0) + c));
  const drawParent = (): number => {
    const u = rng.next() * sums[n - 1];
    let [lo, hi] = [0, n - 1];
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sums[mid] > u) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  };
  for (let r = 0; r < m; r++) {
    if (of[r] >= 0) continue;
    // An open slot from the end, past those of the row's first-key parent.
    for (let k = open.length - 1; k >= Math.max(0, open.length - AVOID_SCAN) && of[r] < 0; k--) {
      if (open[k] === avoid?.[r]) continue;
      of[r] = open[k];
      open[k] = open[open.length - 1];
      open.pop();
    }
    for (let tries = 0; of[r] < 0 && tries < 8; tries++) {
      const p = drawParent();
      if (p !== avoid?.[r]) of[r] = p;
    }
    if (of[r] < 0) of[r] = ((avoid?.[r] ?? 0) + 1) % n;
  }
  return of;
}

/**
 * Slots per parent for a second key: within each value of the first context column, the parents'
 * drawn counts scaled (at the hubs, {@link scaleCounts}) to exactly the rows drawn with that value,
 * so no row leaves its context for want of a slot (a store in the customer's region); a context
 * whose parents drew no child, and rows of a context no parent has, are spread over all parents by
 * their drawn counts. Sums to the rows.
 */
function contextCapacity(drawn: readonly number[], parentFirst: Int32Array, rowFirst: Int32Array, firsts: number, rng: Rng): number[] {
  const n = drawn.length;
  // First-column ids follow the rows' first appearance, so ascending ids are that order.
  const rowsIn = new Int32Array(firsts);
  for (let r = 0; r < rowFirst.length; r++) rowsIn[rowFirst[r]]++;
  const parentsIn: number[][] = Array.from({ length: firsts }, () => []);
  parentFirst.forEach((f, i) => parentsIn[f].push(i));
  const capacity = new Array<number>(n).fill(0);
  let spread = 0;
  for (let f = 0; f < firsts; f++) {
    const want = rowsIn[f];
    if (want === 0) continue;
    const ps = parentsIn[f];
    const counts = ps.map((i) => drawn[i]);
    if (!counts.some((c) => c > 0)) {
      spread += want;
      continue;
    }
    scaleCounts(counts, want, rng, true).forEach((c, k) => (capacity[ps[k]] = c));
  }
  if (spread > 0) {
    const base = drawn.some((c) => c > 0) ? [...drawn] : drawn.map(() => 1);
    exactCounts(base, spread, rng).forEach((c, i) => (capacity[i] += c));
  }
  return capacity;
}

/** Per row, the key of its parent row `of[r]` among `keys` ("" for -1: no parent). */
function keysOfRows(of: Int32Array, keys: readonly string[]): string[] {
  const out = new Array<string>(of.length);
  for (let r = 0; r < of.length; r++) out[r] = of[r] < 0 ? "" : keys[of[r]];
  return out;
}

/**
 * The output table: the real columns, keys from generation, the rest from the model's rows. A
 * table held by column stays so: a foreign key is a code-book column of its parent's keys indexed
 * by parent row, and of the model's columns only those written are copied (in row order).
 * @param fks per foreign key, each row's parent row (-1: none) among `parentKeys` of that key.
 */
function outputTable(p: TablePlan, rows: Table, keys: string[], fks: Int32Array[], parentKeys: readonly (readonly string[])[]): Table {
  const source = p.columns.map((c) => {
    const k = p.foreignKeys.findIndex((f) => f.childKey === c);
    if (k >= 0) return { kind: "fk" as const, j: k };
    if (c === p.primaryKey) return { kind: "pk" as const, j: 0 };
    return { kind: "model" as const, j: rows.columns.indexOf(c) };
  });
  const held = byColumn(rows);
  if (held !== undefined) {
    const n = held.length;
    const cells = source.map((s): DecodedColumn => {
      if (s.kind === "pk") return { kind: "text", cells: keys };
      if (s.kind === "model") return s.j >= 0 ? held.column(s.j) : { kind: "text", cells: new Array<string>(n).fill("") };
      const of = fks[s.j];
      const dict = [...parentKeys[s.j], ""];
      const index = new Int32Array(n);
      for (let r = 0; r < n; r++) index[r] = of[r] < 0 ? dict.length - 1 : of[r];
      return { kind: "dict", dict, index };
    });
    return new BatchTable([...p.columns], new DecodedBatch([...p.columns], cells, n));
  }
  const fkKeys = fks.map((f, k) => keysOfRows(f, parentKeys[k]));
  return {
    columns: [...p.columns],
    rows: rows.rows.map((r, i) => source.map((s) => (s.kind === "pk" ? keys[i] : s.kind === "fk" ? fkKeys[s.j][i] : r[s.j]))),
  };
}
