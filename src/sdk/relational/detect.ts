/**
 * Keys without metadata: a column unique in its table (no blanks) whose values contain another
 * table's column's values is a primary key, the other column its foreign key (inclusion
 * dependencies, as in data profilers' foreign-key discovery); and the cardinality of each.
 */
import type { Table } from "../io/csv";
import { tableColumn, tableRowCount } from "../io/column-table";
import type { DatabaseSchema, Relationship } from "./schema";

/** A column's distinct non-blank values and whether it is a key candidate. */
interface ColumnProfile {
  values: Set<string>;
  unique: boolean;
  integers: boolean;
}

const INTEGER = /^-?\d+$/;

function profile(table: Table, j: number): ColumnProfile {
  const values = new Set(tableColumn(table, j).values);
  const blank = values.delete("");
  let integers = true;
  for (const v of values) {
    if (!INTEGER.test(v)) {
      integers = false;
      break;
    }
  }
  return { values, unique: !blank && values.size === tableRowCount(table) && values.size > 0, integers };
}

/** Lower case, no separators, a trailing plural `s` dropped: `movie_id`, `movieId` -> `movieid`. */
function norm(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]/g, "").replace(/s$/, "");
}

/** True when the child column's name points at the parent: the key's name, or the table's in it. */
function namesMatch(childCol: string, parent: string, parentKey: string): boolean {
  const c = norm(childCol);
  return c === norm(parentKey) || c.includes(norm(parent)) || c === norm(parent + parentKey);
}

/**
 * Detects primary and foreign keys. A relationship child.f -> parent.k needs: k unique without
 * blanks in parent; every non-blank value of f among k's; f with at least 2 distinct values; and,
 * when k's values are all integers (small integers are contained by chance), a name that points at
 * the parent (`namesMatch`). A child column gets the parent whose name matches, else the one with
 * the fewest keys. A table's primary key is its most referenced unique column.
 * @returns the schema (tables with no relationship keep no primary key).
 */
export function detectSchema(tables: Record<string, Table>): DatabaseSchema {
  const names = Object.keys(tables).sort();
  const profiles = new Map(names.map((t) => [t, tables[t].columns.map((_, j) => profile(tables[t], j))]));
  const relationships: Relationship[] = [];
  for (const child of names) {
    tables[child].columns.forEach((f, fj) => {
      const fp = profiles.get(child)![fj];
      if (fp.values.size < 2) return;
      let best: { rel: Relationship; named: boolean; size: number } | undefined;
      for (const parent of names) {
        if (parent === child) continue;
        tables[parent].columns.forEach((k, kj) => {
          const kp = profiles.get(parent)![kj];
          if (!kp.unique || kp.values.size < fp.values.size) return;
          const named = namesMatch(f, parent, k);
          if (kp.integers && !named) return;
          for (const v of fp.values) if (!kp.values.has(v)) return;
          const better = best === undefined || (named && !best.named) || (named === best.named && kp.values.size < best.size);
          if (better) best = { rel: { parent, parentKey: k, child, childKey: f }, named, size: kp.values.size };
        });
      }
      if (best !== undefined) relationships.push(best.rel);
    });
  }
  const schema: DatabaseSchema = { tables: Object.fromEntries(names.map((t) => [t, {}])), relationships: [] };
  for (const t of names) {
    const refs = new Map<string, number>();
    for (const r of relationships) if (r.parent === t) refs.set(r.parentKey, (refs.get(r.parentKey) ?? 0) + 1);
    const pk = [...refs].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0];
    if (pk !== undefined) schema.tables[t].primaryKey = pk;
  }
  // A table's own primary key is not also a foreign key of it; other keys of a parent are dropped.
  schema.relationships = relationships.filter((r) => schema.tables[r.parent].primaryKey === r.parentKey && schema.tables[r.child].primaryKey !== r.childKey);
  return schema;
}

/** Rows per parent of one relationship. */
export interface Cardinality {
  /** Rows of the child per parent row, in the parent's row order (0 for a parent without any). */
  counts: number[];
  min: number;
  max: number;
  median: number;
  /** Child rows whose key is blank (no parent) and whose key no parent has (orphans). */
  blank: number;
  orphans: number;
}

/** The cardinality of `rel` over the tables' rows. */
export function cardinality(rel: Relationship, tables: Record<string, Table>): Cardinality {
  const parent = tables[rel.parent];
  const child = tables[rel.child];
  const keys = tableColumn(parent, parent.columns.indexOf(rel.parentKey));
  const index = new Map<string, number>();
  for (let i = 0; i < keys.ids.length; i++) index.set(keys.values[keys.ids[i]], i);
  const counts = new Array<number>(keys.ids.length).fill(0);
  let blank = 0;
  let orphans = 0;
  // Per distinct child value: its parent row, -1 for a blank, -2 for an orphan.
  const fk = tableColumn(child, child.columns.indexOf(rel.childKey));
  const parentOf = fk.values.map((v) => (v === "" ? -1 : index.get(v) ?? -2));
  for (let r = 0; r < fk.ids.length; r++) {
    const i = parentOf[fk.ids[r]];
    if (i === -1) blank++;
    else if (i === -2) orphans++;
    else counts[i]++;
  }
  const sorted = [...counts].sort((a, b) => a - b);
  const n = sorted.length;
  const median = n === 0 ? 0 : n % 2 === 1 ? sorted[(n - 1) / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  return { counts, min: sorted[0] ?? 0, max: sorted[n - 1] ?? 0, median, blank, orphans };
}

/** One line for a relationship: `ratings.movieId -> movies.movieId: 1 to 0-329 rows, median 3`. */
export function describeRelationship(rel: Relationship, c: Cardinality): string {
  const extra = [c.blank > 0 ? `${c.blank} blank` : "", c.orphans > 0 ? `${c.orphans} orphans` : ""].filter((s) => s !== "");
  return `${rel.child}.${rel.childKey} -> ${rel.parent}.${rel.parentKey}: 1 to ${c.min}-${c.max} rows, median ${c.median}${extra.length > 0 ? ` (${extra.join(", ")})` : ""}`;
}
