/**
 * A database's structure: tables, primary keys, relationships, sequences; read from SDV's
 * multi-table metadata JSON (SDV docs, "Metadata Spec": `METADATA_SPEC_VERSION`, `tables`,
 * `relationships`) or detected (`./detect`). docs/relational.md lists the fields read.
 */
import { DataError } from "../errors";
import type { ColumnOverride } from "../metadata/metadata";
import type { Table } from "../io/csv";
import { tableColumn, tableRowCount } from "../io/column-table";

/** One foreign key: `child.childForeignKey` holds values of `parent.parentPrimaryKey`. */
export interface Relationship {
  parent: string;
  parentKey: string;
  child: string;
  childKey: string;
}

/** One table's keys and column kinds. */
export interface TableSchema {
  /** The primary key column (unique, no blanks), if any. */
  primaryKey?: string;
  /** Column kinds from SDV sdtypes (`./schema` {@link sdtypeOverride}); absent: inferred. */
  columns?: Record<string, ColumnOverride>;
  /** A sequence table: the entity column and the order column (SDV `sequence_key`/`sequence_index`). */
  sequenceKey?: string;
  sequenceIndex?: string;
  /** Column -> SQL type, when read from PostgreSQL's catalog (`./postgres`): the type written back. */
  sqlTypes?: Record<string, string>;
}

/** The structure of a database: tables by name and the relationships between them. */
export interface DatabaseSchema {
  tables: Record<string, TableSchema>;
  relationships: Relationship[];
}

/** SDV's spec versions of multi-table metadata (`MULTI_TABLE_V1` before SDV 1.6, `V1` after). */
const SPEC_VERSIONS = ["MULTI_TABLE_V1", "V1"];

/** strftime directives SDV's `datetime_format` uses, as luxon tokens. */
const STRFTIME: Record<string, string> = {
  Y: "yyyy", y: "yy", m: "MM", d: "dd", H: "HH", I: "hh", M: "mm", S: "ss", p: "a", b: "MMM", B: "MMMM", f: "SSSSSS", "%": "%",
};

/** A strftime format as luxon tokens, or undefined when it has a directive without one. */
export function strftimeToLuxon(format: string): string | undefined {
  let out = "";
  for (let i = 0; i < format.length; i++) {
    const c = format[i];
    if (c === "%") {
      const t = STRFTIME[format[++i]];
      if (t === undefined) return undefined;
      out += t;
    } else out += /[A-Za-z]/.test(c) ? `'${c}'` : c;
  }
  return out;
}

/**
 * The column kind of an SDV sdtype: `numerical`, `datetime` (its `datetime_format` converted when
 * it can be), `categorical` and `boolean` as categorical; `id` and the PII sdtypes (`email`,
 * `phone_number` ...) as identifiers written fresh, unless `pii: false` (then categorical).
 */
export function sdtypeOverride(spec: { sdtype: string; datetime_format?: string; pii?: boolean }): ColumnOverride {
  switch (spec.sdtype) {
    case "numerical":
      return { type: "numerical" };
    case "datetime": {
      const format = spec.datetime_format !== undefined ? strftimeToLuxon(spec.datetime_format) : undefined;
      return format !== undefined ? { type: "datetime", format } : { type: "datetime" };
    }
    case "categorical":
    case "boolean":
      return { type: "categorical" };
    default:
      return spec.pii === false ? { type: "categorical" } : { type: "id" };
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/**
 * Reads SDV multi-table metadata (the JSON of `Metadata.save_to_json` / `MultiTableMetadata`).
 * Read: `METADATA_SPEC_VERSION`, per table `primary_key`, `columns` (`sdtype`, `datetime_format`,
 * `pii`), `sequence_key`, `sequence_index`; `relationships` (`parent_table_name`,
 * `parent_primary_key`, `child_table_name`, `child_foreign_key`). Other fields are ignored.
 * @param name how messages name the file.
 * @throws DataError naming the field at fault: a missing or unknown spec version, single-table
 *   metadata, a key that is not a string (composite keys are refused), a relationship naming a
 *   table or column the metadata lacks, or a parent key that is not its table's primary key.
 */
export function readSdvMetadata(json: unknown, name = "metadata.json"): DatabaseSchema {
  const fail = (msg: string): DataError => new DataError(`${name}: ${msg}`, { file: name });
  if (!isObject(json)) throw fail("must be a JSON object with \"tables\" and \"relationships\" (SDV's multi-table metadata).");
  const version = json.METADATA_SPEC_VERSION;
  if (version === "SINGLE_TABLE_V1") throw fail("METADATA_SPEC_VERSION is SINGLE_TABLE_V1: this is one table's metadata; a database needs SDV's multi-table metadata (MULTI_TABLE_V1 or V1).");
  if (typeof version !== "string" || !SPEC_VERSIONS.includes(version)) {
    throw fail(`METADATA_SPEC_VERSION must be one of ${SPEC_VERSIONS.join(", ")} (got ${JSON.stringify(version)}).`);
  }
  if (!isObject(json.tables) || Object.keys(json.tables).length === 0) throw fail('"tables" must be an object with one entry per table.');
  const tables: Record<string, TableSchema> = {};
  for (const [t, spec] of Object.entries(json.tables)) {
    if (!isObject(spec)) throw fail(`tables.${t} must be an object.`);
    const schema: TableSchema = {};
    const columns = spec.columns;
    if (columns !== undefined) {
      if (!isObject(columns)) throw fail(`tables.${t}.columns must be an object of {"sdtype": ...} per column.`);
      schema.columns = {};
      for (const [c, cs] of Object.entries(columns)) {
        if (!isObject(cs) || typeof cs.sdtype !== "string") throw fail(`tables.${t}.columns.${c} must be an object with a string "sdtype".`);
        if (cs.datetime_format !== undefined && typeof cs.datetime_format !== "string") throw fail(`tables.${t}.columns.${c}.datetime_format must be a string.`);
        schema.columns[c] = sdtypeOverride(cs as { sdtype: string; datetime_format?: string; pii?: boolean });
      }
    }
    for (const [field, key] of [["primary_key", "primaryKey"], ["sequence_key", "sequenceKey"], ["sequence_index", "sequenceIndex"]] as const) {
      const v = spec[field];
      if (v === undefined || v === null) continue;
      if (Array.isArray(v)) throw fail(`tables.${t}.${field} is a composite key (${JSON.stringify(v)}); only single-column keys are supported.`);
      if (typeof v !== "string") throw fail(`tables.${t}.${field} must be a column name.`);
      if (schema.columns !== undefined && !Object.hasOwn(schema.columns, v)) throw fail(`tables.${t}.${field} "${v}" is not among the table's columns.`);
      schema[key] = v;
    }
    tables[t] = schema;
  }
  const rels = json.relationships ?? [];
  if (!Array.isArray(rels)) throw fail('"relationships" must be an array.');
  const relationships = rels.map((r: unknown, i: number): Relationship => {
    const at = `relationships[${i}]`;
    if (!isObject(r)) throw fail(`${at} must be an object.`);
    for (const f of ["parent_table_name", "parent_primary_key", "child_table_name", "child_foreign_key"]) {
      if (Array.isArray(r[f])) throw fail(`${at}.${f} is a composite key; only single-column keys are supported.`);
      if (typeof r[f] !== "string") throw fail(`${at}.${f} must be a string.`);
    }
    const rel = { parent: r.parent_table_name as string, parentKey: r.parent_primary_key as string, child: r.child_table_name as string, childKey: r.child_foreign_key as string };
    for (const t of [rel.parent, rel.child]) if (!Object.hasOwn(tables, t)) throw fail(`${at} names table "${t}", which "tables" lacks.`);
    if (tables[rel.parent].primaryKey !== rel.parentKey) {
      throw fail(`${at}.parent_primary_key "${rel.parentKey}" is not the primary key of "${rel.parent}" (${tables[rel.parent].primaryKey ?? "none declared"}).`);
    }
    const childCols = tables[rel.child].columns;
    if (childCols !== undefined && !Object.hasOwn(childCols, rel.childKey)) throw fail(`${at}.child_foreign_key "${rel.childKey}" is not a column of "${rel.child}".`);
    return rel;
  });
  return { tables, relationships };
}

/**
 * Checks a schema against the tables read: every table present, every key a column, primary keys
 * unique without blanks. @throws DataError naming table and column.
 */
export function checkSchema(schema: DatabaseSchema, tables: Record<string, Table>): void {
  for (const [t, s] of Object.entries(schema.tables)) {
    const table = tables[t];
    if (table === undefined) throw new DataError(`the metadata names table "${t}", but there is no ${t}.csv or ${t}.parquet (tables read: ${Object.keys(tables).join(", ")}).`);
    const has = (c: string, what: string): void => {
      if (!table.columns.includes(c)) throw new DataError(`table "${t}" has no column "${c}" (its ${what}).`, { column: c });
    };
    if (s.primaryKey !== undefined) {
      has(s.primaryKey, "primary key");
      const j = table.columns.indexOf(s.primaryKey);
      const { values } = tableColumn(table, j);
      // As many distinct values as rows and none blank: unique; else the first row at fault is named.
      if (values.length !== tableRowCount(table) || values.includes("")) {
        const seen = new Set<string>();
        table.rows.forEach((r, i) => {
          if (r[j] === "") throw new DataError(`table "${t}", row ${i + 1}: the primary key "${s.primaryKey}" is blank.`, { column: s.primaryKey, line: i + 2 });
          if (seen.has(r[j])) throw new DataError(`table "${t}": the primary key "${s.primaryKey}" repeats ${JSON.stringify(r[j])} (row ${i + 1}).`, { column: s.primaryKey, line: i + 2 });
          seen.add(r[j]);
        });
      }
    }
    if (s.sequenceKey !== undefined) has(s.sequenceKey, "sequence key");
    if (s.sequenceIndex !== undefined) has(s.sequenceIndex, "sequence index");
  }
  for (const r of schema.relationships) {
    if (!tables[r.child].columns.includes(r.childKey)) {
      throw new DataError(`table "${r.child}" has no column "${r.childKey}" (its foreign key to ${r.parent}).`, { column: r.childKey });
    }
  }
  tableOrder(schema);
}

/**
 * The tables with every parent before its children (Kahn's algorithm; ties in name order).
 * @throws DataError for a cycle of relationships (a self-reference included).
 */
export function tableOrder(schema: DatabaseSchema): string[] {
  const names = Object.keys(schema.tables).sort();
  const parents = new Map(names.map((n) => [n, new Set<string>()]));
  for (const r of schema.relationships) parents.get(r.child)!.add(r.parent);
  const order: string[] = [];
  const done = new Set<string>();
  while (order.length < names.length) {
    const next = names.find((n) => !done.has(n) && [...parents.get(n)!].every((p) => done.has(p)));
    if (next === undefined) {
      const stuck = names.filter((n) => !done.has(n));
      throw new DataError(`the relationships form a cycle among ${stuck.join(", ")}: a table that references itself (or a loop of tables) is not supported.`);
    }
    order.push(next);
    done.add(next);
  }
  return order;
}
