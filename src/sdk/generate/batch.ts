/**
 * A decoded batch held by column, no string per cell until a writer needs one (`docs/decisions.md`
 * "Decoded batches by column"). Per feature one {@link DecodedColumn}: `dict`, row r is
 * `dict[index[r]]` (code books; a fresh value is appended to the batch's own copy); `int`,
 * `String(values[r])` or "" where `blank[r]` is 1; `text`, one string per cell. A cell's text is in
 * every form the row decoder's string, so {@link DecodedBatch.toTable} equals `Decoder.decode`.
 * {@link DecodedBatch.set} appends a text a `dict` column lacks to its dictionary; an `int` column
 * keeps a canonical integer text (`String(Number(t)) === t`) or "", else it turns into `text`.
 */
import type { ArrayPool } from "../client/array-pool";
import type { Table } from "../io/csv";

/** Cells of one column: an index into a dictionary. */
export interface DictColumn {
  kind: "dict";
  /** Texts; entries may repeat. The batch owns it once {@link DecodedBatch.set} appends to it. */
  dict: string[];
  /** Per row, the index of its text in `dict`. */
  index: Int32Array;
}

/** Cells of one column: integers held as doubles (exact below 2^53) with a blank flag. */
export interface IntColumn {
  kind: "int";
  /** Per row, the integer (any value where `blank[r]` is 1). */
  values: Float64Array;
  /** Per row, 1 for a blank cell; undefined when no row is blank. */
  blank?: Uint8Array;
}

/** Cells of one column: one string each. */
export interface TextColumn {
  kind: "text";
  cells: string[];
}

/** One column of a {@link DecodedBatch}. */
export type DecodedColumn = DictColumn | IntColumn | TextColumn;

/** The text of row `r` of `col` (the string the row decoder writes). */
export function cellText(col: DecodedColumn, r: number): string {
  switch (col.kind) {
    case "dict":
      return col.dict[col.index[r]];
    case "int":
      return col.blank !== undefined && col.blank[r] === 1 ? "" : String(col.values[r]);
    case "text":
      return col.cells[r];
  }
}

/**
 * Rows `rows` of `col`, in that order (a row may repeat), in its form; a code book is shared.
 * Loops, not a typed array's `from` with a map function (slow at a million rows).
 */
export function selectColumn(col: DecodedColumn, rows: ArrayLike<number>): DecodedColumn {
  const n = rows.length;
  switch (col.kind) {
    case "dict": {
      const index = new Int32Array(n);
      for (let i = 0; i < n; i++) index[i] = col.index[rows[i]];
      return { kind: "dict", dict: col.dict, index };
    }
    case "int": {
      const values = new Float64Array(n);
      for (let i = 0; i < n; i++) values[i] = col.values[rows[i]];
      if (col.blank === undefined) return { kind: "int", values };
      const blank = new Uint8Array(n);
      for (let i = 0; i < n; i++) blank[i] = col.blank[rows[i]];
      return { kind: "int", values, blank };
    }
    case "text": {
      const cells = new Array<string>(n);
      for (let i = 0; i < n; i++) cells[i] = col.cells[rows[i]];
      return { kind: "text", cells };
    }
  }
}

/** Reads and rewrites cells by row and feature index (what the rules need of a batch). */
export interface Cells {
  /** Number of rows. */
  readonly length: number;
  /** Text of the cell in row r, feature f. */
  get(r: number, f: number): string;
  /** Rewrites the cell in row r, feature f. */
  set(r: number, f: number, text: string): void;
  /** Optional: per row, the `toCode` code of column f's cell (-1: none); read while repairing. */
  codesOf?(f: number, toCode: ReadonlyMap<string, number>): Int32Array;
  /**
   * Optional fast path of {@link set}: for x < `count`, in order, row `rows[x]` (each once) gets
   * `texts[entry[x]]` where that is a string other than its text. Returns the cells changed.
   */
  setMany?(f: number, rows: Int32Array, entry: Int32Array, count: number, texts: readonly (string | undefined)[]): number;
}

/** Rows of strings (`rows[r][f]`) as {@link Cells}. */
export function rowCells(rows: string[][]): Cells {
  return {
    length: rows.length,
    get: (r, f) => rows[r][f],
    set: (r, f, text) => {
      rows[r][f] = text;
    },
  };
}

/** A decoded batch by column, one {@link DecodedColumn} per feature in `columns` order. */
export class DecodedBatch implements Cells {
  /** Per column, text -> first index in its dictionary (built on the first {@link set}). */
  private readonly lookup: (Map<string, number> | undefined)[] = [];
  /** Per dict column, true once its dictionary is the batch's own copy. */
  private readonly ownDict: boolean[] = [];
  /** Arrays {@link codesOf} took from the pool, given back by {@link release}. */
  private readonly lentCodes: Int32Array[] = [];

  /**
   * @param columns column names (the CSV header), one per entry of `cells`, each `length` rows.
   * @param arrays the pool the columns' typed arrays came from, if any; writers use it too.
   */
  constructor(
    readonly columns: string[],
    readonly cells: DecodedColumn[],
    readonly length: number,
    readonly arrays?: ArrayPool,
  ) {}

  /**
   * Gives the columns' typed arrays (and {@link codesOf}'s) back to their pool for the next batch.
   * A writer calls it once nothing reads the batch (its bytes written out, not merely queued).
   */
  release(): void {
    if (this.arrays === undefined) return;
    this.arrays.give(this.cells.flatMap((c): (ArrayLike<number> | undefined)[] => (c.kind === "dict" ? [c.index] : c.kind === "int" ? [c.values, c.blank] : [])));
    this.arrays.give(this.lentCodes.splice(0));
  }

  /** A batch of text columns holding the rows of `table` (a caller's table, seed rows). */
  static fromTable(table: Table): DecodedBatch {
    const n = table.rows.length;
    const cells: DecodedColumn[] = table.columns.map((_, f) => {
      const out: string[] = new Array(n);
      for (let r = 0; r < n; r++) out[r] = table.rows[r][f];
      return { kind: "text", cells: out };
    });
    return new DecodedBatch(table.columns, cells, n);
  }

  /**
   * Rewrites every cell of column f as `write(text)` (a number format, `../columns/number-format`):
   * a code book's entries once each; an `int` column becomes `text`.
   */
  rewriteColumn(f: number, write: (text: string) => string): void {
    const col = this.cells[f];
    this.lookup[f] = undefined;
    if (col.kind === "dict") {
      this.cells[f] = { kind: "dict", dict: col.dict.map(write), index: col.index };
      this.ownDict[f] = true;
      return;
    }
    const out = new Array<string>(this.length);
    for (let r = 0; r < this.length; r++) out[r] = write(cellText(col, r));
    if (col.kind === "int" && this.arrays !== undefined) this.arrays.give([col.values, col.blank]);
    this.cells[f] = { kind: "text", cells: out };
  }

  /**
   * Rewrites column f as the row numbers `first`, `first + 1`, ... (an `int` column): a row
   * counter written after the checks that drop rows, so the numbers have no gaps.
   * @throws RangeError when `first` is not a safe integer.
   */
  numberRows(f: number, first: number): void {
    if (!Number.isSafeInteger(first)) throw new RangeError(`numberRows: first ${first} is not a safe integer`);
    const col = this.cells[f];
    this.lookup[f] = undefined;
    if (col.kind === "int" && this.arrays !== undefined) this.arrays.give([col.values, col.blank]);
    const values = this.arrays !== undefined ? this.arrays.float64(this.length) : new Float64Array(this.length);
    for (let r = 0; r < this.length; r++) values[r] = first + r;
    this.cells[f] = { kind: "int", values };
  }

  /** Text of the cell in row r, column f. */
  get(r: number, f: number): string {
    return cellText(this.cells[f], r);
  }

  /** {@link Cells.codesOf}: a code-book column looks each dictionary entry up once. */
  codesOf(f: number, toCode: ReadonlyMap<string, number>): Int32Array {
    const col = this.cells[f];
    // From the batch's pool, given back with its columns (the rules read it while repairing).
    const out = this.arrays !== undefined ? this.arrays.int32(this.length) : new Int32Array(this.length);
    if (this.arrays !== undefined) this.lentCodes.push(out);
    if (col.kind === "dict") {
      const entry = Int32Array.from(col.dict, (t) => toCode.get(t) ?? -1);
      for (let r = 0; r < this.length; r++) out[r] = entry[col.index[r]];
    } else for (let r = 0; r < this.length; r++) out[r] = toCode.get(cellText(col, r)) ?? -1;
    return out;
  }

  /** Rewrites the cell in row r, column f with `text` (see the module comment). */
  set(r: number, f: number, text: string): void {
    const col = this.cells[f];
    switch (col.kind) {
      case "text":
        col.cells[r] = text;
        return;
      case "dict":
        col.index[r] = this.dictIndex(f, col, text, true)!;
        return;
      case "int": {
        if (text === "") {
          col.blank ??= new Uint8Array(this.length);
          col.blank[r] = 1;
          return;
        }
        const x = Number(text);
        if (String(x) === text) {
          col.values[r] = x;
          if (col.blank !== undefined) col.blank[r] = 0;
          return;
        }
        const cells: string[] = new Array(this.length);
        for (let q = 0; q < this.length; q++) cells[q] = cellText(col, q);
        cells[r] = text;
        this.cells[f] = { kind: "text", cells };
        return;
      }
    }
  }

  /** {@link Cells.setMany}, the same as {@link set} per x; a code book looks each text up once. */
  setMany(f: number, rows: Int32Array, entry: Int32Array, count: number, texts: readonly (string | undefined)[]): number {
    const col = this.cells[f];
    if (col.kind !== "dict") {
      let changed = 0;
      for (let x = 0; x < count; x++) {
        const text = texts[entry[x]];
        if (text === undefined || this.get(rows[x], f) === text) continue;
        this.set(rows[x], f, text);
        changed++;
      }
      return changed;
    }
    // Per entry of `texts`, its dictionary index (-1: not yet in the dictionary, -2: no text), and
    // per dictionary index, whether its text is that entry's: a row changes where it is not.
    const at = new Int32Array(texts.length).fill(-1);
    for (let e = 0; e < texts.length; e++) {
      const text = texts[e];
      if (text === undefined) at[e] = -2;
      else {
        const i = this.dictIndex(f, col, text, false);
        if (i !== undefined) at[e] = i;
      }
    }
    let changed = 0;
    for (let x = 0; x < count; x++) {
      const e = entry[x];
      let i = at[e];
      if (i === -2) continue;
      const r = rows[x];
      const text = texts[e]!;
      if (col.dict[col.index[r]] === text) continue;
      if (i === -1) i = at[e] = this.dictIndex(f, col, text, true)!;
      col.index[r] = i;
      changed++;
    }
    return changed;
  }

  /** {@link set}'s index of `text` in dict column f: the first holding it, else added if `add`. */
  private dictIndex(f: number, col: DictColumn, text: string, add: boolean): number | undefined {
    let map = this.lookup[f];
    if (map === undefined) {
      map = new Map();
      for (let i = col.dict.length - 1; i >= 0; i--) map.set(col.dict[i], i);
      this.lookup[f] = map;
    }
    let i = map.get(text);
    if (i === undefined && add) {
      if (!this.ownDict[f]) {
        col.dict = col.dict.slice();
        this.ownDict[f] = true;
      }
      i = col.dict.push(text) - 1;
      map.set(text, i);
    }
    return i;
  }

  /**
   * A batch of rows `rows` of this one, in that order (a row may repeat); dictionaries are shared
   * (copied before the first {@link set} appends).
   */
  select(rows: ArrayLike<number>): DecodedBatch {
    return new DecodedBatch(
      this.columns,
      this.cells.map((col) => selectColumn(col, rows)),
      rows.length,
    );
  }

  /**
   * One batch of `batches`' rows in order (same columns). A column keeps its form where every
   * batch has it in that form (code books merged, each distinct text once), else it is text.
   * The batches' arrays are copied; they are not given back to their pool.
   * @throws RangeError for no batches or batches of different columns.
   */
  static concat(batches: readonly DecodedBatch[]): DecodedBatch {
    if (batches.length === 0) throw new RangeError("concat needs at least one batch");
    const columns = batches[0].columns;
    for (const b of batches) if (b.columns.length !== columns.length || b.columns.some((c, f) => c !== columns[f])) throw new RangeError("concat needs batches of the same columns");
    const n = batches.reduce((a, b) => a + b.length, 0);
    const cells = columns.map((_, f): DecodedColumn => {
      const kind = batches[0].cells[f].kind;
      if (batches.every((b) => b.cells[f].kind === "dict") && kind === "dict") {
        // Batches sharing one code book share it here; otherwise texts are merged into a new one.
        const first = (batches[0].cells[f] as DictColumn).dict;
        const shared = batches.every((b) => (b.cells[f] as DictColumn).dict === first);
        const dict: string[] = shared ? first : [];
        const at = new Map<string, number>();
        const index = new Int32Array(n);
        let o = 0;
        for (const b of batches) {
          const col = b.cells[f] as DictColumn;
          let remap: Int32Array | undefined;
          if (!shared) {
            remap = new Int32Array(col.dict.length);
            for (let i = 0; i < col.dict.length; i++) {
              let k = at.get(col.dict[i]);
              if (k === undefined) at.set(col.dict[i], (k = dict.push(col.dict[i]) - 1));
              remap[i] = k;
            }
          }
          for (let r = 0; r < b.length; r++) index[o + r] = remap === undefined ? col.index[r] : remap[col.index[r]];
          o += b.length;
        }
        return { kind: "dict", dict, index };
      }
      if (batches.every((b) => b.cells[f].kind === "int")) {
        const values = new Float64Array(n);
        const anyBlank = batches.some((b) => (b.cells[f] as IntColumn).blank !== undefined);
        const blank = anyBlank ? new Uint8Array(n) : undefined;
        let o = 0;
        for (const b of batches) {
          const col = b.cells[f] as IntColumn;
          values.set(col.values.subarray(0, b.length), o);
          if (blank !== undefined && col.blank !== undefined) blank.set(col.blank.subarray(0, b.length), o);
          o += b.length;
        }
        return blank !== undefined ? { kind: "int", values, blank } : { kind: "int", values };
      }
      const out = new Array<string>(n);
      let o = 0;
      for (const b of batches) {
        const col = b.cells[f];
        for (let r = 0; r < b.length; r++) out[o + r] = cellText(col, r);
        o += b.length;
      }
      return { kind: "text", cells: out };
    });
    return new DecodedBatch(columns, cells, n);
  }

  /** The rows as strings (`rows[r][f]`), as `Decoder.decode` returns them. */
  toTable(): Table {
    const n = this.length;
    const m = this.cells.length;
    const rows: string[][] = new Array(n);
    for (let r = 0; r < n; r++) rows[r] = new Array(m);
    this.cells.forEach((col, f) => {
      for (let r = 0; r < n; r++) rows[r][f] = cellText(col, r);
    });
    return { columns: this.columns, rows };
  }
}
