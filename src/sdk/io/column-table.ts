/**
 * A table held by column: per column its distinct values and each row's id among them, as a
 * database's file is read for key detection and the plan (`../relational`). A million rows are a
 * few typed arrays, not a million row arrays for the garbage collector to trace; the readers of a
 * column ({@link tableColumn}) take it as it is held, and `rows` is built only when something
 * asks for the rows.
 */
import type { Table } from "./csv";

/** A {@link Table} held by column; `rows` is built on first read and kept. */
export class ColumnTable implements Table {
  private built: string[][] | undefined;

  /**
   * @param columns the header.
   * @param values per column, its distinct values (first seen first).
   * @param ids per column, each row's index into its `values` (`length` rows).
   */
  constructor(
    readonly columns: string[],
    readonly values: readonly string[][],
    readonly ids: readonly Int32Array[],
    readonly length: number,
  ) {}

  get rows(): string[][] {
    if (this.built === undefined) {
      const rows = new Array<string[]>(this.length);
      for (let r = 0; r < this.length; r++) rows[r] = this.ids.map((ids, j) => this.values[j][ids[r]]);
      this.built = rows;
    }
    return this.built;
  }
}

/** A table's column `j` as distinct values (first seen first) and each row's index among them. */
export interface TableColumn {
  values: readonly string[];
  ids: ArrayLike<number>;
}

/** Column `j` of `table` ({@link TableColumn}): as held for a {@link ColumnTable}, else built from the rows. */
export function tableColumn(table: Table, j: number): TableColumn {
  if (table instanceof ColumnTable) return { values: table.values[j], ids: table.ids[j] };
  const index = new Map<string, number>();
  const values: string[] = [];
  const ids = new Int32Array(table.rows.length);
  table.rows.forEach((r, i) => {
    let id = index.get(r[j]);
    if (id === undefined) {
      id = values.length;
      index.set(r[j], id);
      values.push(r[j]);
    }
    ids[i] = id;
  });
  return { values, ids };
}

/** Rows of `table`, without building a {@link ColumnTable}'s rows. */
export function tableRowCount(table: Table): number {
  return table instanceof ColumnTable ? table.length : table.rows.length;
}

/** Column `j`'s cells, row by row. */
export function tableCells(table: Table, j: number): string[] {
  if (!(table instanceof ColumnTable)) return table.rows.map((r) => r[j]);
  const { values, ids } = tableColumn(table, j);
  return Array.from(ids, (id) => values[id]);
}
