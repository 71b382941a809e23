/**
 * Seeded generation on the SDK side (docs/api.md "Seeded generation"): a `where` condition or a
 * seed table in the user's values -> the codes of the Generate request's seeded `embedding`, from
 * the model's metadata alone; bad input is a {@link DataError} naming the column (and line), raised
 * before any request.
 *
 * `where`, per column:
 * - categorical: values with a code of their own (not never-seen or pooled ones); `""`: blank.
 * - numerical / datetime: a value, a range `{gte?, gt?, lte?, lt?}` (numbers, or datetimes in the
 *   column's format or ISO 8601), or a list on point-bin columns. A bin a range covers in part is
 *   weighted by its share inside, so rows follow the model conditioned on the value, not the bin.
 * - id: refused; identifiers are written fresh and carry nothing to condition on.
 *
 * Seed tables: non-blank cells are kept byte for byte and condition their row. A cell's code:
 * - categorical: its code, else the pooled code (rare values are never sent), else a DataError.
 * - numerical / datetime: the bin of its number (outside [min, max]: the nearest end bin); on
 *   point-bin columns the equal, else the nearest value.
 * - id: "present" (code 0); the identifier itself is kept.
 */
import type { ColumnKind, ConditionCell, Metadata } from "../../contract";
import { readCsvText, readTable, type Table } from "../io/csv";
import type { Decoder } from "./decode";
import {
  datetimeBound,
  missingCodeOf,
  MISSING_KEY,
  numberBound,
  OTHER,
  pointValues,
  seedBin,
  valueReaderOf,
  type FeatureDecoder,
  type ValueRange,
} from "../columns";
import { DataError } from "../errors";

/** Bounds of a range condition: numbers, or datetimes as text (the column's format or ISO 8601). */
export interface WhereRange {
  gte?: number | string;
  gt?: number | string;
  lte?: number | string;
  lt?: number | string;
}

/** A condition on one column: a value, a list of allowed values, or a range. */
export type WhereValue = string | number | boolean | readonly (string | number | boolean)[] | WhereRange;

/** `where` of `Synthesizer.sample`: column name -> condition; every generated row satisfies all. */
export type Where = Readonly<Record<string, WhereValue>>;

/** A seed table: records (missing, null or undefined values blank), a {@link Table}, CSV text. */
export type SeedTable = string | Table | readonly Readonly<Record<string, unknown>>[];

/** A compiled `where`: the wire condition and the range-restricted decoders. */
export interface CompiledWhere {
  /** `embedding.condition`: feature -> code, allowed codes, or allowed codes with weights. */
  condition: Record<string, ConditionCell>;
  /** Per feature with a range on binned values: a decoder drawing inside the range. */
  decoders: Record<string, FeatureDecoder>;
}

/** What the SDK knows of one column from the metadata. */
interface ColumnBook {
  name: string;
  kind: ColumnKind;
  missingCode: number | undefined;
  otherCode: number | undefined;
  /** Exact text -> code (`value_mappings`, without the missing and pooled keys). */
  byText: Map<string, number>;
  /** Numerical / datetime: text -> number (datetimes: seconds since the epoch). */
  parse?: (text: string) => number | undefined;
  /** Numerical / datetime: number -> text for messages (datetimes in the column's format). */
  show: (x: number) => string;
  /** Quantile-binned columns: edges and point values. */
  edges?: readonly number[];
  points?: ReadonlySet<number>;
  /** Point-bin columns: their values and codes, ascending by value. */
  values?: { x: number; code: number }[];
}

/**
 * The code book of feature `name` from the metadata, or undefined when the model lacks it. Built
 * per named column only: a `where` or seed table usually names few of a wide table's columns.
 */
function columnBook(meta: Metadata, name: string): ColumnBook | undefined {
  if (!meta.features.includes(name)) return undefined;
  const stats = meta.column_stats?.[name];
  const mapping = meta.value_mappings?.[name] ?? {};
  const otherCode = Object.hasOwn(mapping, OTHER) ? mapping[OTHER] : undefined;
  const byText = new Map<string, number>();
  for (const [v, c] of Object.entries(mapping)) if (v !== MISSING_KEY && v !== OTHER) byText.set(v, c);
  const kind: ColumnKind = stats?.type ?? "categorical";
  const book: ColumnBook = { name, kind, missingCode: missingCodeOf(meta, name), otherCode, byText, show: String };
  const reader = valueReaderOf(stats);
  if (reader) [book.parse, book.show] = [reader.parse, reader.show];
  if ((kind === "numerical" || kind === "datetime") && book.parse) {
    if (stats?.bin_edges && stats.bin_edges.length >= 2) {
      book.edges = stats.bin_edges;
      book.points = pointValues(stats.bin_edges);
    } else {
      const values: { x: number; code: number }[] = [];
      for (const [t, c] of byText) {
        const x = book.parse(t);
        if (x !== undefined) values.push({ x, code: c });
      }
      book.values = values.sort((a, b) => a.x - b.x);
    }
  }
  return book;
}

function listValues(book: ColumnBook): string {
  const vals = [...book.byText.keys()].slice(0, 12).map((v) => JSON.stringify(v));
  return vals.join(", ") + (book.byText.size > 12 ? `, ... (${book.byText.size} in all)` : "");
}

function unknownColumn(name: string, meta: Metadata, what: string, where: { file?: string; line?: number } = {}): DataError {
  return new DataError(`${what} names column ${JSON.stringify(name)}, which the model does not have (its columns: ${meta.features.join(", ")}).`, {
    column: name,
    ...where,
  });
}

/** The code of a categorical `where` value. @throws DataError when it has no code of its own. */
function categoricalCode(book: ColumnBook, value: string): number {
  if (value === MISSING_KEY) {
    if (book.missingCode !== undefined) return book.missingCode;
    throw new DataError(`where: column "${book.name}" had no blank values, so blank cannot be asked for.`, { column: book.name });
  }
  const c = book.byText.get(value);
  if (c !== undefined) return c;
  const pooled = book.otherCode !== undefined ? ` Values seen fewer times than the column's rare-value threshold were pooled and cannot be asked for.` : "";
  throw new DataError(`where: ${JSON.stringify(value)} is not in the code book of column "${book.name}" (values: ${listValues(book)}).${pooled}`, {
    column: book.name,
  });
}

/** A range bound as a number of the column. @throws DataError when it does not parse. */
function bound(book: ColumnBook, key: string, v: unknown): number {
  if (book.kind === "datetime") {
    const x = datetimeBound(v, book.parse);
    if (x !== undefined) return x;
    throw new DataError(
      `where: the bound ${key} of column "${book.name}" must be a datetime in the column's format or ISO 8601, got ${JSON.stringify(v)}.`,
      { column: book.name },
    );
  }
  const x = numberBound(v);
  if (x === undefined) throw new DataError(`where: the bound ${key} of column "${book.name}" must be a finite number, got ${JSON.stringify(v)}.`, { column: book.name });
  return x;
}

const RANGE_KEYS = new Set(["gte", "gt", "lte", "lt"]);

function isRange(v: WhereValue): v is WhereRange {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** A range as the user wrote it: `>= 1975-01-01 and < 1979-01-01` (in the column's format). */
function describeRange(book: ColumnBook, r: ValueRange): string {
  const lo = r.lo === undefined ? "" : `${r.loOpen ? ">" : ">="} ${book.show(r.lo)}`;
  const hi = r.hi === undefined ? "" : `${r.hiOpen ? "<" : "<="} ${book.show(r.hi)}`;
  return [lo, hi].filter(Boolean).join(" and ");
}

/**
 * Turns a `where` into the wire condition and range-restricted decoders (module comment's rules).
 * @returns the condition (codes per feature) and, per ranged binned column, its decoder.
 * @throws DataError naming the column: unknown or identifier column, value not in the code book,
 *   empty list or range, a range on a categorical column, unknown range keys, `gt` with `gte` (or
 *   `lt` with `lte`), a list on a quantile-binned column, a bound that is not a number (datetime).
 */
export function compileWhere(decoder: Decoder, where: Where): CompiledWhere {
  if (where === null || typeof where !== "object" || Array.isArray(where)) {
    throw new DataError("where must be an object mapping column names to values, lists of values or ranges {gte, gt, lte, lt}.");
  }
  const meta = decoder.metadata;
  const condition: Record<string, ConditionCell> = {};
  const decoders: Record<string, FeatureDecoder> = {};
  for (const [name, v] of Object.entries(where)) {
    const book = columnBook(meta, name);
    if (book === undefined) throw unknownColumn(name, meta, "where");
    if (book.kind === "id") {
      throw new DataError(`where: column "${name}" is an identifier; its values are written fresh for every row and cannot be conditioned on.`, {
        column: name,
      });
    }
    const binned = book.edges !== undefined;
    const numeric = book.kind === "numerical" || book.kind === "datetime";
    if (isRange(v)) {
      if (!numeric || !book.parse) {
        throw new DataError(`where: column "${name}" is ${book.kind}; ranges {gte, gt, lte, lt} apply to numerical and datetime columns. Give a value or a list of values.`, {
          column: name,
        });
      }
      const keys = Object.keys(v);
      const bad = keys.find((k) => !RANGE_KEYS.has(k));
      if (bad !== undefined || keys.length === 0) {
        throw new DataError(`where: the range of column "${name}" must use gte, gt, lte and lt only${bad !== undefined ? `, got ${JSON.stringify(bad)}` : ""}.`, { column: name });
      }
      if (v.gte !== undefined && v.gt !== undefined) throw new DataError(`where: the range of column "${name}" gives both gte and gt.`, { column: name });
      if (v.lte !== undefined && v.lt !== undefined) throw new DataError(`where: the range of column "${name}" gives both lte and lt.`, { column: name });
      const range: ValueRange = {};
      if (v.gte !== undefined) range.lo = bound(book, "gte", v.gte);
      if (v.gt !== undefined) [range.lo, range.loOpen] = [bound(book, "gt", v.gt), true];
      if (v.lte !== undefined) range.hi = bound(book, "lte", v.lte);
      if (v.lt !== undefined) [range.hi, range.hiOpen] = [bound(book, "lt", v.lt), true];
      applyRange(decoder, book, range, condition, decoders);
      continue;
    }
    if (Array.isArray(v)) {
      if (v.length === 0) throw new DataError(`where: the list of values of column "${name}" is empty.`, { column: name });
      if (binned) {
        throw new DataError(
          `where: column "${name}" is binned (its values are not kept one by one); give one value or a range {gte, lte} instead of a list.`,
          { column: name },
        );
      }
      const codes = new Set<number>();
      for (const x of v as readonly (string | number | boolean)[]) codes.add(exactCode(book, x));
      condition[name] = [...codes].sort((a, b) => a - b);
      continue;
    }
    if (typeof v !== "string" && typeof v !== "number" && typeof v !== "boolean") {
      throw new DataError(`where: the condition of column "${name}" must be a value, a list of values or a range, got ${JSON.stringify(v)}.`, { column: name });
    }
    if (binned && !(typeof v === "string" && v.trim() === "")) {
      // One value of a binned column: the range [v, v], decoded as exactly that value.
      const x = bound(book, "value", typeof v === "string" ? v : Number(v));
      applyRange(decoder, book, { lo: x, hi: x }, condition, decoders);
      continue;
    }
    condition[name] = exactCode(book, v);
  }
  return { condition, decoders };
}

/** The code of one exact value (categorical or point-bin column; "" is blank). */
function exactCode(book: ColumnBook, v: string | number | boolean): number {
  const text = String(v).trim();
  if (book.kind === "categorical" || text === MISSING_KEY || !book.parse) return categoricalCode(book, text);
  const c = book.byText.get(text);
  if (c !== undefined) return c;
  const x = typeof v === "number" ? v : book.parse(text);
  const hit = x === undefined ? undefined : book.values?.find((p) => p.x === x);
  if (hit) return hit.code;
  throw new DataError(`where: ${JSON.stringify(v)} is not a value of column "${book.name}" (values: ${listValues(book)}).`, { column: book.name });
}

function applyRange(decoder: Decoder, book: ColumnBook, range: ValueRange, condition: Record<string, ConditionCell>, decoders: Record<string, FeatureDecoder>): void {
  const empty = range.lo !== undefined && range.hi !== undefined && (range.lo > range.hi || (range.lo === range.hi && (range.loOpen || range.hiOpen)));
  const r = empty ? undefined : decoder.restrict(book.name, range, book.parse!);
  if (!r || r.codes.length === 0) {
    throw new DataError(
      `where: the range ${describeRange(book, range)} of column "${book.name}" is empty: no value the column can be written with lies inside it` +
        (empty ? "." : ` (the model's values span ${describeSpan(decoder.metadata, book)}).`),
      { column: book.name },
    );
  }
      // A bin covered in part is weighted by its share inside; the decoder draws inside the range.
  condition[book.name] = r.weights.every((w) => w === 1) ? r.codes : { codes: r.codes, weights: r.weights };
  if (book.edges) decoders[book.name] = r.decoder;
}

/** The trained [min, max] of a numerical or datetime column, written as its values are. */
function describeSpan(meta: Metadata, book: ColumnBook): string {
  const st = meta.column_stats?.[book.name];
  if (!st || st.min === undefined || st.max === undefined) return "an unknown range";
  return `${book.show(st.min)} .. ${book.show(st.max)}`;
}

// ---------------------------------------------------------------------------------------------
// Seed tables

/** A seed table as read: header, raw cells (untrimmed), and each row's line. */
export interface SeedRows {
  /** How messages name it: the file path, or "the seed ..." (CSV text, records, table). */
  name: string;
  file?: string;
  columns: string[];
  /** Cells as given (CSV: untrimmed); blank = empty after trimming. */
  rows: string[][];
  /** 1-based line of each row (CSV: its line in the file; records and tables: index + 2). */
  lines: number[];
}

/**
 * Reads a seed table into memory: records, a {@link Table}, CSV text, or `{file}` (a CSV file).
 * @throws DataError for the structural problems of `readTable` (empty, header only, ragged row,
 *   malformed quoting, bad UTF-8, duplicate header names), and for records that are not objects.
 */
export async function readSeedTable(source: SeedTable | { file: string }): Promise<SeedRows> {
  const columns: string[] = [];
  const rows: string[][] = [];
  const lines: number[] = [];
  const onHeader = (h: string[]): void => void columns.push(...h);
  const onRow = (values: string[], line: number): void => {
    rows.push(values);
    lines.push(line);
  };
  if (typeof source === "string") {
    await readCsvText(source, onHeader, onRow, { trim: false, name: "the seed CSV text" });
    return { name: "the seed CSV text", columns, rows, lines };
  }
  if (Array.isArray(source)) {
    const records = source as readonly Readonly<Record<string, unknown>>[];
    const seen = new Set<string>();
    records.forEach((r, i) => {
      if (r === null || typeof r !== "object" || Array.isArray(r)) {
        throw new DataError(`the seed records: record ${i} is not an object of column values.`, { line: i + 2 });
      }
      for (const k of Object.keys(r)) seen.add(k);
    });
    const header = [...seen];
    const table: Table = {
      columns: header,
      rows: records.map((r) => header.map((k) => cellText(Object.hasOwn(r, k) ? r[k] : undefined))),
    };
    await readTable(table, onHeader, onRow, { trim: false });
    return { name: "the seed records", columns, rows, lines };
  }
  if ("file" in source && typeof (source as { file: unknown }).file === "string") {
    const file = (source as { file: string }).file;
    await readTable(file, onHeader, onRow, { trim: false });
    return { name: file, file, columns, rows, lines };
  }
  await readTable(source as Table, onHeader, onRow, { trim: false });
  return { name: "the seed table", columns, rows, lines };
}

function cellText(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (v instanceof Date) return v.toISOString();
  return String(v);
}

/** A seed table encoded for the wire, with the cells to keep. */
export interface EncodedSeed {
  /** `seed_data.features`: the seed table's columns (all of them the model's), in its order. */
  features: string[];
  /** `seed_data.rows`: per seed row, one code (or null: generated) per entry of `features`. */
  rows: (number | null)[][];
  /** Per seed row, per model column: the cell to write verbatim, or undefined (generated). */
  keep: (string | undefined)[][];
}

/**
 * Encodes a seed table with the model's code books (rules in the module comment).
 * @throws DataError naming column and line: a column the model lacks (line 1), a categorical value
 *   without a code and no pooled code, a numerical (datetime) cell that does not parse.
 */
export function encodeSeed(meta: Metadata, seed: SeedRows): EncodedSeed {
  const colBooks = seed.columns.map((c) => {
    const b = columnBook(meta, c);
    if (b === undefined) throw unknownColumn(c, meta, `${seed.name}: the header`, { file: seed.file, line: 1 });
    return b;
  });
  const modelIndex = seed.columns.map((c) => meta.features.indexOf(c));
  const F = meta.features.length;
  const rows: (number | null)[][] = new Array(seed.rows.length);
  const keep: (string | undefined)[][] = new Array(seed.rows.length);
  for (let r = 0; r < seed.rows.length; r++) {
    const raw = seed.rows[r];
    const codes: (number | null)[] = new Array(colBooks.length).fill(null);
    const kept: (string | undefined)[] = new Array(F).fill(undefined);
    for (let j = 0; j < colBooks.length; j++) {
      const text = raw[j].trim();
      if (text === "") continue;
      codes[j] = seedCode(colBooks[j], text, seed, r);
      kept[modelIndex[j]] = raw[j];
    }
    rows[r] = codes;
    keep[r] = kept;
  }
  return { features: [...seed.columns], rows, keep };
}

/** The wire code of one non-blank seed cell. @throws DataError naming column and line. */
function seedCode(book: ColumnBook, text: string, seed: SeedRows, r: number): number {
  if (book.kind === "id") return 0;
  // Built only for an error: this runs once per non-blank seed cell.
  const fail = (message: string): DataError =>
    new DataError(`${seed.name}, line ${seed.lines[r]}, column "${book.name}": ${message}`, { file: seed.file, line: seed.lines[r], column: book.name });
  const exact = book.byText.get(text);
  if (exact !== undefined) return exact;
  if (book.kind === "categorical" || !book.parse) {
    if (book.otherCode !== undefined) return book.otherCode; // a rare value the model knows only as pooled
    throw fail(`${JSON.stringify(text)} is not in the column's code book (values: ${listValues(book)}).`);
  }
  const x = book.parse(text);
  if (x === undefined) {
    throw fail(`${JSON.stringify(text)} is not ${book.kind === "datetime" ? "a datetime in the column's format" : "a number"}, but the column is ${book.kind}.`);
  }
  if (book.edges) return seedBin(book.edges, book.points!, x);
  const values = book.values ?? [];
  if (values.length === 0) throw fail(`the column has no values to match ${JSON.stringify(text)} with.`);
  let best = values[0];
  for (const p of values) if (Math.abs(p.x - x) < Math.abs(best.x - x)) best = p;
  return best.code;
}
