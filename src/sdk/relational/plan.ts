/**
 * The flat tables a database is fitted as, one per table, on today's contract (docs/relational.md):
 * a parent gains one column per child relationship, its number of children (HMA's cardinality
 * column, Patki et al. 2016, "The Synthetic Data Vault", sec. 4); a child gains some of its
 * parents' columns joined on its foreign key (context columns), so the 2-way marginals between
 * child and parent columns are among the ones sent. Keys are left out: generation writes them.
 */
import type { PublicVocabulary } from "../../contract";
import { DataError } from "../errors";
import type { Table } from "../io/csv";
import { tableCells, tableColumn, tableRowCount } from "../io/column-table";
import type { RecordJoin } from "../io/inputs";
import type { ColumnOverride } from "../metadata/metadata";
import { inferIdShape, type IdShape } from "../metadata/identifier";
import { DatetimeFormat, inferDatetimeFormat } from "../metadata/datetime";
import { datetimeParser } from "../columns/datetime";
import { publicVocabularyOf, vocabularyKey, vocabularySet } from "../semantic/vocabulary";
import { tableOrder, type DatabaseSchema } from "./schema";

/** {@link TablePlan.publicKey} of column `j` of `table`, whose values are of `vocabulary`. */
function publicKeyOf(table: Table, j: number, vocabulary: PublicVocabulary): NonNullable<TablePlan["publicKey"]> {
  const listed = vocabularySet(vocabulary);
  const rows = table.rows.filter((r) => listed.has(vocabularyKey(r[j]))).sort((a, b) => (a[j] < b[j] ? -1 : a[j] > b[j] ? 1 : 0));
  const others = table.columns.map((_, c) => c).filter((c) => c !== j);
  const shared = others.map((c) => {
    const n = new Map<string, number>();
    for (const r of table.rows) n.set(r[c], (n.get(r[c]) ?? 0) + 1);
    return n;
  });
  return {
    vocabulary,
    values: rows.map((r) => r[j]),
    columns: others.map((c) => table.columns[c]),
    cells: rows.map((r) => others.map((c, k) => ((shared[k].get(r[c]) ?? 0) >= 2 ? r[c] : ""))),
  };
}

/** One foreign key of a table and the parent columns its model holds as context. */
export interface ForeignKeyPlan {
  parent: string;
  parentKey: string;
  childKey: string;
  /** `column` of the child's model holds the parent's `parentColumn` over the join. */
  context: { parentColumn: string; column: string }[];
  /** A second key to the first key's table that no real row sets equal to the first (a flight's two airports). */
  differsFromFirst?: boolean;
  /** The first key only: datetime orders every real row of the join holds ({@link crossTableOrders}). */
  orders?: CrossTableOrder[];
}

/**
 * A datetime order between a child's column and its parent's that every real row of the join
 * holds: `equal` (an order line's date is its order's) or `after` (at or after: a visit after the
 * patient's birth). Generation repairs the rows that break it.
 */
export interface CrossTableOrder {
  column: string;
  parentColumn: string;
  relation: "equal" | "after";
  /** The columns' datetime formats (luxon tokens). */
  format: string;
  parentFormat: string;
  /** `after`: the deciles (0, 10, ..., 100%) of child - parent over the real join, in seconds. */
  gaps?: number[];
}

/** How one table is fitted and written. */
export interface TablePlan {
  /** The real table's columns, in its order (the output's). */
  columns: string[];
  /** The real table's rows. */
  rows: number;
  primaryKey?: string;
  /** The primary key's shape: fresh keys are written in it (`../generate/id-generator`). */
  keyShape?: IdShape;
  /**
   * A primary key whose values are a public vocabulary (countries, states: `../semantic/vocabulary`):
   * its real values that the vocabulary lists, written as keys instead of fresh ones in the shape.
   */
  publicKey?: {
    vocabulary: string;
    values: string[];
    /**
     * Per value, its real row's cells in `columns` (the table's other columns), blank where the
     * cell's value is held by fewer than 2 real rows (never a row's own figure): a generated row
     * is given the unused name whose cells agree most with its own.
     */
    columns: string[];
    cells: string[][];
  };
  /** Its foreign keys; the first is the one generation goes through (children per parent). */
  foreignKeys: ForeignKeyPlan[];
  /** Per child relationship, the model column holding the number of children of each row. */
  counts: { child: string; childKey: string; column: string }[];
  /** The columns of the flat table the model is fitted on. */
  modelColumns: string[];
  /** Column kinds for the flat table (SDV sdtypes of the table's own columns). */
  overrides?: Record<string, ColumnOverride>;
  /** A column (no foreign key) the real rows are sorted by: the output is sorted by it too. */
  sortedBy?: { column: string; numeric: boolean };
  /** A sequence table (its first foreign key is the sequence key, the entity). */
  sequence?: SequencePlan;
}

/** How a sequence table is fitted: each row beside its entity's previous row (lag 1). */
export interface SequencePlan {
  /** The order column (SDV `sequence_index`), numeric or text order. */
  index: string;
  numeric: boolean;
  /** Own columns and the model columns holding the previous row's value of each. */
  lag: { column: string; prev: string }[];
  /** The model column that is "1" on an entity's first row, else "0". */
  first: string;
  /** A complete panel: every entity has one row for each of these index values, in order. */
  periods?: string[];
  /**
   * Numerical lagged columns (not the index) fitted as their change from the previous row too
   * (`step`, blank on a first row): generation writes previous + drawn change, within the real
   * range, with the column's decimals, so a value moves as real ones do between two rows.
   */
  steps: { column: string; step: string; decimals: number; min: number; max: number }[];
  /**
   * A numeric index that never repeats within a real entity (not a complete panel): the deciles
   * of its real increases and its decimals. Generation writes a drawn index that does not
   * increase as the previous one plus an increase drawn from them, so (entity, index) stays unique.
   */
  increases?: { deciles: number[]; decimals: number };
}

/** A database's fitting and generation plan: the tables, parents first. */
export interface DatabasePlan {
  order: string[];
  tables: Record<string, TablePlan>;
}

/** At most this many columns of a parent are context columns of each of its children. */
export const MAX_CONTEXT_COLUMNS = 6;

/** A text parent column with more distinct values than this share of its rows is not context. */
const CONTEXT_DISTINCT_SHARE = 0.5;

const NUMBER = /^\s*-?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?\s*$/i;

/**
 * The parent columns a child gets as context: the parent's columns that are no key and no
 * identifier, numerical ones always (they are binned), text ones with at most half as many
 * distinct values as rows (names and other near-unique text would only be pooled), first
 * `max` ({@link MAX_CONTEXT_COLUMNS}) in the table's order.
 */
export function contextColumns(parent: Table, keys: ReadonlySet<string>, overrides: Record<string, ColumnOverride> = {}, max = MAX_CONTEXT_COLUMNS): string[] {
  const out: string[] = [];
  parent.columns.forEach((c, j) => {
    if (out.length >= max || keys.has(c) || overrides[c]?.type === "id") return;
    const values = new Set<string>();
    let numeric = true;
    for (const r of parent.rows) {
      if (r[j] === "") continue;
      values.add(r[j]);
      if (numeric && !NUMBER.test(r[j])) numeric = false;
    }
    if (values.size < 2) return;
    if (numeric || values.size <= Math.max(20, CONTEXT_DISTINCT_SHARE * parent.rows.length)) out.push(c);
  });
  return out;
}

/**
 * The first column (the primary key, then the others; no foreign key) whose values never decrease
 * down the rows, numerically when all are numbers, else as text; undefined when none does.
 */
export function sortedColumn(table: Table, skip: ReadonlySet<string>, first?: string): { column: string; numeric: boolean } | undefined {
  const cols = [...(first !== undefined ? [first] : []), ...table.columns.filter((c) => c !== first && !skip.has(c))];
  for (const c of cols) {
    // Read by distinct value: each row's value is its id's.
    const { values, ids } = tableColumn(table, table.columns.indexOf(c));
    if (ids.length < 2 || values.includes("") || values.length < 2) continue;
    const numeric = values.every((x) => NUMBER.test(x));
    const nums = numeric ? values.map(Number) : [];
    let sorted = true;
    for (let i = 1; i < ids.length && sorted; i++) {
      const [a, b] = [ids[i - 1], ids[i]];
      sorted = a === b || (numeric ? nums[a] <= nums[b] : values[a] <= values[b]);
    }
    if (sorted) return { column: c, numeric };
  }
  return undefined;
}

/** Joined rows with both datetimes needed before an order between them is believed. */
export const MIN_ORDER_ROWS = 10;

/** Distinct values a datetime format is inferred from. */
const FORMAT_SAMPLE = 200;

/**
 * A column's datetime format: its override's (none when declared another kind), else the SDK's
 * inference over its first distinct values (`../metadata/datetime`) when every one parses; numbers
 * are never datetimes here.
 */
export function datetimeFormatOf(table: Table, column: string, override?: ColumnOverride): string | undefined {
  if (override !== undefined && override.type !== "datetime") return undefined;
  // The column's distinct values come first seen first, as the rows hold them.
  const values = tableColumn(table, table.columns.indexOf(column)).values.filter((v) => v !== "").slice(0, FORMAT_SAMPLE);
  if (values.length === 0 || values.every((v) => NUMBER.test(v))) return undefined;
  if (override?.format !== undefined) return override.format;
  const inferred = inferDatetimeFormat(values);
  return inferred !== undefined && inferred.parsed === values.length ? inferred.format : undefined;
}

/**
 * The datetime orders between a child's own columns and its parent's that every joined real row
 * holds (at least {@link MIN_ORDER_ROWS} rows with both values; a value that does not parse, none):
 * equal on every row, else at or after on every row (with the deciles of the gap).
 */
export function crossTableOrders(
  child: Table,
  parent: Table,
  fk: { childKey: string; parentKey: string },
  columns: readonly string[],
  parentColumns: readonly string[],
  overrides: Record<string, ColumnOverride> = {},
  parentOverrides: Record<string, ColumnOverride> = {},
): CrossTableOrder[] {
  const formatsOf = (t: Table, cols: readonly string[], o: Record<string, ColumnOverride>): { column: string; format: string }[] =>
    cols.flatMap((c) => {
      const format = datetimeFormatOf(t, c, o[c]);
      return format !== undefined ? [{ column: c, format }] : [];
    });
  const mine = formatsOf(child, columns, overrides);
  const theirs = formatsOf(parent, parentColumns, parentOverrides);
  if (mine.length === 0 || theirs.length === 0) return [];
  const pk = parent.columns.indexOf(fk.parentKey);
  const byKey = new Map<string, string[]>();
  for (const r of parent.rows) byKey.set(r[pk], r);
  // The child's columns by distinct value: each key's parent row, each datetime parsed once.
  const fkCol = tableColumn(child, child.columns.indexOf(fk.childKey));
  const parentRow = fkCol.values.map((v) => byKey.get(v));
  const out: CrossTableOrder[] = [];
  for (const m of mine) {
    const mc = tableColumn(child, child.columns.indexOf(m.column));
    const parseChild = datetimeParser(new DatetimeFormat(m.format));
    const childTimes = mc.values.map((v) => (v === "" ? null : parseChild(v)));
    for (const t of theirs) {
      const pj = parent.columns.indexOf(t.column);
      const parseParent = datetimeParser(new DatetimeFormat(t.format));
      const parentTimes = parentRow.map((pr) => (pr === undefined || pr[pj] === "" ? null : parseParent(pr[pj])));
      const gaps: number[] = [];
      let ok = true;
      for (let r = 0; r < fkCol.ids.length; r++) {
        // null: no parent or a blank cell (the row is skipped); undefined: a value that does not parse.
        const [a, b] = [childTimes[mc.ids[r]], parentTimes[fkCol.ids[r]]];
        if (a === null || b === null) continue;
        if (a === undefined || b === undefined || a < b) {
          ok = false;
          break;
        }
        gaps.push((a - b) / 1000);
      }
      if (!ok || gaps.length < MIN_ORDER_ROWS) continue;
      gaps.sort((x, y) => x - y);
      const equal = gaps[gaps.length - 1] === 0;
      out.push({
        column: m.column,
        parentColumn: t.column,
        relation: equal ? "equal" : "after",
        format: m.format,
        parentFormat: t.format,
        ...(equal ? {} : { gaps: Array.from({ length: 11 }, (_, k) => gaps[Math.round((k / 10) * (gaps.length - 1))]) }),
      });
      if (equal) break;
    }
  }
  return out;
}

/** Most own columns of a sequence table whose previous-row value is a column of its model. */
export const MAX_LAG_COLUMNS = 6;

/** A sequence's rows: per entity, its row indices in index order. */
export function sequences(table: Table, key: string, index: string, numeric: boolean): Map<string, number[]> {
  const kj = table.columns.indexOf(key);
  const ij = table.columns.indexOf(index);
  const by = new Map<string, number[]>();
  table.rows.forEach((r, i) => void (by.get(r[kj]) ?? by.set(r[kj], []).get(r[kj])!).push(i));
  const cmp = (a: string, b: string): number => (numeric ? Number(a) - Number(b) : a < b ? -1 : a > b ? 1 : 0);
  for (const rows of by.values()) rows.sort((a, b) => cmp(table.rows[a][ij], table.rows[b][ij]) || a - b);
  return by;
}

/** The sequence plan of a table (lag-1 columns, panel periods). @throws DataError without an index. */
function sequencePlan(table: Table, key: string, index: string | undefined, own: string[], taken: Set<string>): SequencePlan {
  if (index === undefined) throw new DataError(`the sequence table with sequence_key "${key}" needs a sequence_index (the column that orders an entity's rows).`, { column: key });
  const ij = table.columns.indexOf(index);
  const numeric = table.rows.every((r) => NUMBER.test(r[ij]));
  const lagged = [index, ...own.filter((c) => c !== index)].slice(0, MAX_LAG_COLUMNS);
  const plan: SequencePlan = {
    index,
    numeric,
    lag: lagged.map((c) => ({ column: c, prev: freeName(`prev.${c}`, taken) })),
    first: freeName(`${key}.first`, taken),
    steps: [],
  };
  for (const c of lagged) {
    const j = table.columns.indexOf(c);
    const values = table.rows.map((r) => r[j]).filter((v) => v.trim() !== "");
    if (c === index || values.length === 0 || !values.every((v) => NUMBER.test(v))) continue;
    const xs = values.map(Number);
    const decimals = values.reduce((d, v) => Math.max(d, v.includes(".") ? v.trim().length - v.indexOf(".") - 1 : 0), 0);
    plan.steps.push({ column: c, step: freeName(`${c}.step`, taken), decimals, min: Math.min(...xs), max: Math.max(...xs) });
  }
  const by = sequences(table, key, index, numeric);
  const periodsOf = (rows: number[]): string[] => rows.map((i) => table.rows[i][ij]);
  const first = periodsOf([...by.values()][0] ?? []);
  const complete = by.size > 1 && [...by.values()].every((rows) => {
    const p = periodsOf(rows);
    return p.length === first.length && p.every((v, k) => v === first[k]) && new Set(p).size === p.length;
  });
  if (complete) plan.periods = first;
  else if (numeric) {
    const ups: number[] = [];
    let unique = true;
    for (const rows of by.values()) {
      for (let k = 1; k < rows.length && unique; k++) {
        const d = Number(table.rows[rows[k]][ij]) - Number(table.rows[rows[k - 1]][ij]);
        if (d <= 0) unique = false;
        else ups.push(d);
      }
    }
    if (unique && ups.length > 0) {
      ups.sort((a, b) => a - b);
      const decimals = table.rows.reduce((d, r) => Math.max(d, r[ij].includes(".") ? r[ij].trim().length - r[ij].indexOf(".") - 1 : 0), 0);
      plan.increases = { deciles: Array.from({ length: 11 }, (_, k) => ups[Math.round((k / 10) * (ups.length - 1))]), decimals };
    }
  }
  return plan;
}

/** A column name not in `taken`: `name`, else `name_2`, `name_3` ... */
function freeName(name: string, taken: Set<string>): string {
  let n = name;
  for (let k = 2; taken.has(n); k++) n = `${name}_${k}`;
  taken.add(n);
  return n;
}

/**
 * Builds the plan and the flat training table of every table (each built when first read).
 * @throws DataError (from `tableOrder`) for cyclic relationships.
 */
export function planDatabase(schema: DatabaseSchema, tables: Record<string, Table>): { plan: DatabasePlan; training: Record<string, Table> } {
  const order = tableOrder(schema);
  const keysOf = (t: string): Set<string> => {
    const k = new Set<string>();
    if (schema.tables[t].primaryKey !== undefined) k.add(schema.tables[t].primaryKey!);
    for (const r of schema.relationships) if (r.child === t) k.add(r.childKey);
    return k;
  };
  const plan: DatabasePlan = { order, tables: {} };
  for (const t of order) {
    const table = tables[t];
    const keys = keysOf(t);
    const own = table.columns.filter((c) => !keys.has(c));
    const taken = new Set(own);
    const seqKey = schema.tables[t].sequenceKey;
    const rels = schema.relationships.filter((r) => r.child === t);
    if (seqKey !== undefined && !rels.some((r) => r.childKey === seqKey)) {
      throw new DataError(`table "${t}": its sequence_key "${seqKey}" must be a foreign key to a table of its entities (one row per entity); add that table and the relationship.`, { column: seqKey });
    }
    // The sequence key's relationship goes first: generation goes through it.
    rels.sort((a, b) => Number(b.childKey === seqKey) - Number(a.childKey === seqKey));
    const foreignKeys = rels
      .map((r): ForeignKeyPlan => ({
        parent: r.parent,
        parentKey: r.parentKey,
        childKey: r.childKey,
        context: contextColumns(tables[r.parent], keysOf(r.parent), schema.tables[r.parent].columns).map((pc) => ({
          parentColumn: pc,
          column: freeName(`${r.childKey}.${pc}`, taken),
        })),
      }));
    const first = foreignKeys.length > 0 ? tableColumn(table, table.columns.indexOf(foreignKeys[0].childKey)) : undefined;
    if (foreignKeys.length > 0) {
      const f = foreignKeys[0];
      const orders = crossTableOrders(table, tables[f.parent], f, own, tables[f.parent].columns.filter((c) => !keysOf(f.parent).has(c)), schema.tables[t].columns, schema.tables[f.parent].columns);
      if (orders.length > 0) f.orders = orders;
    }
    for (const f of foreignKeys.slice(1)) {
      if (f.parent !== foreignKeys[0].parent || first === undefined) continue;
      const second = tableColumn(table, table.columns.indexOf(f.childKey));
      let differs = true;
      for (let r = 0; r < second.ids.length && differs; r++) {
        const v = second.values[second.ids[r]];
        differs = v === "" || v !== first.values[first.ids[r]];
      }
      if (differs) f.differsFromFirst = true;
    }
    const counts = schema.relationships
      .filter((r) => r.parent === t)
      .map((r) => ({ child: r.child, childKey: r.childKey, column: freeName(`${r.child}.${r.childKey}.rows`, taken) }));
    const pk = schema.tables[t].primaryKey;
    let keyShape: IdShape | undefined;
    let publicKey: TablePlan["publicKey"];
    if (pk !== undefined) {
      const j = table.columns.indexOf(pk);
      if (tableRowCount(table) === 0) throw new DataError(`table "${t}" has no rows.`);
      const values = tableCells(table, j);
      keyShape = inferIdShape(values, values.map(() => 1));
      const vocabulary = publicVocabularyOf(pk, values, values.map(() => 1));
      if (vocabulary !== undefined) publicKey = publicKeyOf(table, j, vocabulary);
    }
    const overrides: Record<string, ColumnOverride> = Object.fromEntries(Object.entries(schema.tables[t].columns ?? {}).filter(([c]) => !keys.has(c)));
    for (const f of foreignKeys) {
      for (const c of f.context) {
        const o = schema.tables[f.parent].columns?.[c.parentColumn];
        if (o !== undefined) overrides[c.column] = o;
      }
    }
    for (const c of counts) overrides[c.column] = { type: "numerical" };
    const sortedBy = sortedColumn(table, new Set(foreignKeys.map((f) => f.childKey)), pk);
    const sequence = seqKey !== undefined ? sequencePlan(table, seqKey, schema.tables[t].sequenceIndex, own, taken) : undefined;
    if (sequence !== undefined) {
      overrides[sequence.first] = { type: "categorical" };
      for (const x of sequence.steps) overrides[x.step] = { type: "numerical" };
      for (const l of sequence.lag) if (overrides[l.column] !== undefined) overrides[l.prev] = overrides[l.column];
    }
    plan.tables[t] = {
      columns: [...table.columns],
      rows: tableRowCount(table),
      ...(pk !== undefined ? { primaryKey: pk, keyShape } : {}),
      ...(publicKey !== undefined ? { publicKey } : {}),
      foreignKeys,
      counts,
      modelColumns: [
        ...own,
        ...foreignKeys.flatMap((f) => f.context.map((c) => c.column)),
        ...counts.map((c) => c.column),
        ...(sequence !== undefined ? [sequence.first, ...sequence.lag.map((l) => l.prev), ...sequence.steps.map((x) => x.step)] : []),
      ],
      ...(Object.keys(overrides).length > 0 ? { overrides } : {}),
      ...(sortedBy !== undefined && sequence === undefined ? { sortedBy } : {}),
      ...(sequence !== undefined ? { sequence } : {}),
    };
  }
  // Each training table is built when first read: a table fitted from its file never is.
  const training: Record<string, Table> = {};
  for (const t of order) {
    let built: Table | undefined;
    Object.defineProperty(training, t, { enumerable: true, get: () => (built ??= trainingTable(plan, t, tables)) });
  }
  return { plan, training };
}

/**
 * The training table of `t` as a join of its file's records with its parents' rows
 * (`../io/record-join`): its own model columns, then each foreign key's context columns, the
 * parents' rows keyed by their primary key. Undefined for a table whose training table needs all
 * its rows at once: a parent (its children counts) or a sequence table (each row's previous row).
 */
export function trainingJoin(plan: DatabasePlan, t: string, tables: Record<string, Table>): RecordJoin | undefined {
  const p = plan.tables[t];
  if (p.counts.length > 0 || p.sequence !== undefined) return undefined;
  return {
    keep: p.columns.filter((c) => p.modelColumns.includes(c)),
    lookups: p.foreignKeys.map((f) => {
      const parent = tables[f.parent];
      const kj = parent.columns.indexOf(f.parentKey);
      const cols = f.context.map((c) => parent.columns.indexOf(c.parentColumn));
      return { column: f.childKey, keys: parent.rows.map((r) => r[kj]), names: f.context.map((c) => c.column), cells: parent.rows.map((r) => cols.map((j) => r[j])) };
    }),
  };
}

/** The flat table of `t`: own non-key columns, context columns over each join, children counts. */
function trainingTable(plan: DatabasePlan, t: string, tables: Record<string, Table>): Table {
  const p = plan.tables[t];
  const table = tables[t];
  const ownIdx = p.columns.filter((c) => p.modelColumns.includes(c)).map((c) => table.columns.indexOf(c));
  const joins = p.foreignKeys.map((f) => {
    const parent = tables[f.parent];
    const kj = parent.columns.indexOf(f.parentKey);
    const index = new Map<string, string[]>();
    for (const r of parent.rows) index.set(r[kj], r);
    return { fj: table.columns.indexOf(f.childKey), index, cols: f.context.map((c) => parent.columns.indexOf(c.parentColumn)) };
  });
  const countCols = p.counts.map((c) => {
    const child = tables[c.child];
    const { values, ids } = tableColumn(child, child.columns.indexOf(c.childKey));
    const rows = new Float64Array(values.length);
    for (let r = 0; r < ids.length; r++) rows[ids[r]]++;
    const n = new Map<string, number>();
    values.forEach((v, id) => v !== "" && n.set(v, rows[id]));
    return n;
  });
  const pkj = p.primaryKey !== undefined ? table.columns.indexOf(p.primaryKey) : -1;
  const seq = p.sequence;
  const prevRow = new Map<number, number>();
  if (seq !== undefined) {
    for (const rows of sequences(table, p.foreignKeys[0].childKey, seq.index, seq.numeric).values()) rows.forEach((i, k) => k > 0 && prevRow.set(i, rows[k - 1]));
  }
  const lagIdx = seq?.lag.map((l) => table.columns.indexOf(l.column)) ?? [];
  const stepIdx = seq?.steps.map((x) => table.columns.indexOf(x.column)) ?? [];
  const rows = table.rows.map((r, i) => {
    const out = ownIdx.map((j) => r[j]);
    for (const jn of joins) {
      const pr = jn.index.get(r[jn.fj]);
      for (const cj of jn.cols) out.push(pr === undefined ? "" : pr[cj]);
    }
    for (const n of countCols) out.push(String(pkj >= 0 ? n.get(r[pkj]) ?? 0 : 0));
    if (seq !== undefined) {
      const prev = prevRow.get(i);
      out.push(prev === undefined ? "1" : "0");
      for (const j of lagIdx) out.push(prev === undefined ? "" : table.rows[prev][j]);
      seq.steps.forEach((x, k) => {
        const [a, b] = [table.rows[prev ?? i][stepIdx[k]], r[stepIdx[k]]];
        out.push(prev === undefined || a.trim() === "" || b.trim() === "" ? "" : (Number(b) - Number(a)).toFixed(x.decimals));
      });
    }
    return out;
  });
  return { columns: [...p.modelColumns], rows };
}
