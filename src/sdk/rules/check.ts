/**
 * Checking row rules (`metadata.rules`, src/contract/index.ts `Rule`) on decoded rows: does a row
 * keep a rule, break it, or is the rule not about that row? `evaluate` counts per rule the share
 * of real and of synthetic rows that keep it. A row is a `string[]` in `metadata.features` order,
 * cells as written (trimmed by the SDK's readers), blank `""`.
 *
 * Verdicts (true keeps, false breaks, undefined: does not apply):
 * - `fixed_combinations`: undefined when a cell is blank. Each cell's text becomes its code
 *   through `value_mappings[column]`: its own entry; else, for point bins, the entry of the same
 *   number or instant (`1.50` finds `1.5`); for interval bins (`bin_edges`) the bin of the number
 *   or instant (one past either end: the end bin); else the pooled `__other__` code (a rare or a
 *   fresh pooled value, as the encoder pools it). Keeps when the code tuple is one of `combinations`. A
 *   text with no code at all BREAKS it: a row inventing a city must not pass as keeping "city
 *   determines state". With a `determinant` whose pooled code no combination holds, a row whose
 *   determinant reads as pooled is undefined: detection releases no combination for rare values.
 * - `catalog`: undefined when the key is blank. Keeps when the key is a released entry's (same
 *   text, or for a numerical or datetime key the same value) and every attribute is that entry's
 *   (same text or value); a key of no released entry (rare, fresh, invented) breaks it. With a
 *   composite key (`key_columns` 2): undefined when a key cell is blank or the pair is no
 *   released entry's (decoding leaves those rows as generated); else as above.
 * - `inequality`: undefined when a cell is blank or does not parse (numbers with `Number`,
 *   datetimes in `column_stats[f].format`, as instants); `high > low` when `strict`, else `>=`.
 * - `sum`: undefined when a cell is blank or not a number; keeps when `|total − (sum_j
 *   signs[j]·weights[j]·parts[j] + constant)|` (1 to 12 parts) is within `identityTolerance` of the
 *   columns' decimals (`column_stats[f].decimals`, else the cell's own), plus a few ulps.
 * - `ratio`: undefined when a cell is blank or not a number, or a divided part is 0; keeps when
 *   the total is within `ratioTolerance` of `factor · prod parts^powers` (`./ratio`); of a band,
 *   when it lies between its min and max factor's values.
 * - `not_equal`: undefined when a cell is blank; breaks on the same text, or for two numerical
 *   (datetime) columns the same number (instant).
 * - `blank_together`: always applies; keeps when every one of `columns` is blank or none is.
 * - `public_attribute`: undefined when a cell is blank or the key is not in the reference data;
 *   keeps when the column holds the key's attribute (numbers by value, text case-folded).
 * - `embedded_code`: undefined when a cell is blank; keeps when the identifier holds the code at `offset`.
 * - `code_prefix`: undefined when a cell is blank or the category has no released prefix; keeps
 *   when the code starts with one of its category's prefixes.
 * - `difference`: undefined when a cell is blank or unreadable; keeps when the second minus the
 *   first is within [min, max] (half a unit of the finest decimals of slack).
 * - `name_gender`: undefined when the name is blank or its first name of no known sex, or the sex
 *   value is in neither list; keeps when the first name is of the row's sex.
 * - `name_country`: undefined when a cell is blank or the country unread or without name lists;
 *   keeps when a word of the name is in the country's lists (`./name-country`).
 * - `template`: undefined when the written cell is blank; keeps when it is the template's text.
 * - `calendar`: undefined when a date cell is blank or not a date part; breaks on a day past its
 *   month's end or a weekday other than the date's (`./calendar`).
 * - `datetime_part`: undefined when a cell is blank or the datetime unreadable; keeps when the
 *   column's cell reads as the datetime's part (names case-insensitive, numbers by value; `./datetime-part`).
 * - `elapsed`: undefined when a cell is blank or unreadable; keeps when the number is the time
 *   from the earlier datetime to the later in the rule's unit, at its decimals (`./elapsed`).
 * - `unique`: given rows in order, undefined when a key cell is blank; breaks when an earlier row
 *   held the same key (cells as text). Its checker holds one string per row it kept.
 * - `structural_zeros`: codes as for `fixed_combinations`, a blank cell as its column's blank code
 *   (undefined when the column has none); breaks when the pair of codes is one of `pairs`.
 */
import type { CodePrefixRule, ColumnStats, DifferenceRule, ElapsedRule, EntityRangeRule, Metadata, Rule } from "../../contract";
import type { Table } from "../io/csv";
import { DatetimeFormat } from "../metadata/datetime";
import { DataError } from "../errors";
import { MISSING_KEY, OTHER, decimalsOf, pointValues, seedBin } from "../columns";
import { datetimeParser } from "../columns";
import { entityRangeText, identityText } from "./describe";
import { sumCoefficients, sumRuleTolerance } from "./sums";
import { ratioBand, ratioKept, ratioText } from "./ratio";
import { calendarCheck } from "./calendar";
import { elapsedKeeps, elapsedUnitName } from "./elapsed-units";
import { datetimePartCheck } from "./datetime-part";
import { templateCheck, templateText } from "./template";
import { nameGenderCheck } from "./name-gender";
import { nameCountryCheck } from "./name-country";

/** `../semantic/attributes`, loaded by the first public-attribute rule. */
function attributes(): typeof import("../semantic/attributes") {
  return require("../semantic/attributes");
}

/** A rule's verdict on one row: true keeps, false breaks, undefined when it does not apply. */
export type RowCheck = (row: readonly string[]) => boolean | undefined;

/** How many rows a rule applies to and keeps. */
export interface RuleCount {
  /** Rows the rule applies to (its checker did not answer undefined). */
  applicable: number;
  /** Of those, rows that keep it. */
  kept: number;
  /** kept / applicable, in [0, 1]; 1 when no row applies (no row breaks it). */
  share: number;
}

/** {@link ruleShares}' result for one rule. */
export interface RuleShare extends RuleCount {
  rule: Rule;
}

/** The columns a rule names, in the rule's order (inequality: high, low; sum: total, parts). */
export function ruleColumns(rule: Rule): string[] {
  switch (rule.type) {
    case "fixed_combinations":
    case "catalog":
    case "not_equal":
    case "blank_together":
    case "structural_zeros":
    case "public_attribute":
    case "embedded_code":
    case "code_prefix":
    case "calendar":
    case "datetime_part":
    case "difference":
    case "elapsed":
    case "entity_range":
    case "template":
    case "name_gender":
    case "name_country":
    case "unique":
      return [...rule.columns];
    case "inequality":
      return [rule.high, rule.low];
    case "sum":
    case "ratio":
      return [rule.total, ...rule.parts];
  }
}

/** A short text of a rule for `evaluate` and the report: `end > start`, `total = a + b`. */
export function ruleLabel(rule: Rule): string {
  switch (rule.type) {
    case "fixed_combinations": {
      const n = `${rule.combinations.length} combination${rule.combinations.length === 1 ? "" : "s"}`;
      if (rule.determinant !== undefined) {
        const others = rule.columns.filter((c) => c !== rule.determinant);
        return `${rule.determinant} determines ${others.join(", ")} (${n})`;
      }
      return `${rule.columns.join(", ")} in ${n}`;
    }
    case "catalog": {
      const key = (rule.key_columns ?? 1) === 2 ? `(${rule.columns[0]}, ${rule.columns[1]})` : rule.key;
      return `${key} decides ${rule.columns.slice(rule.key_columns ?? 1).join(", ")} (${rule.entries.length} entr${rule.entries.length === 1 ? "y" : "ies"})`;
    }
    case "inequality":
      return `${rule.high} ${rule.strict ? ">" : ">="} ${rule.low}`;
    case "sum":
      return `${rule.total} = ${identityText(rule.parts, rule.signs, rule.constant, rule.weights)}`;
    case "ratio":
      return `${rule.total} = ${ratioText(rule)}`;
    case "not_equal":
      return `${rule.columns[0]} != ${rule.columns[1]}`;
    case "blank_together":
      return `${rule.columns.join(", ")} blank together`;
    case "structural_zeros":
      return `${rule.columns.join(", ")} never in ${rule.pairs.length} pair${rule.pairs.length === 1 ? "" : "s"}`;
    case "public_attribute":
      return `${rule.columns[rule.columns.length - 1]} is the ${rule.attribute} of ${rule.columns.slice(0, -1).join(", ")}`;
    case "embedded_code":
      return `${rule.columns[1]} holds ${rule.columns[0]} at ${rule.offset}`;
    case "code_prefix":
      return `${rule.columns[1]}'s first ${rule.length} characters name its ${rule.columns[0]}`;
    case "difference":
      return `${rule.columns[1]} - ${rule.columns[0]} in [${rule.min}, ${rule.max}]`;
    case "elapsed":
      return `${rule.columns[0]} = ${rule.columns[1]} - ${rule.columns[2]} in ${elapsedUnitName(rule.unit)}`;
    case "entity_range":
      return entityRangeText(rule);
    case "calendar":
      return `${rule.columns.slice(0, 3).join(", ")} a date${rule.columns[3] ? ` on weekday ${rule.columns[3]}` : ""}`;
    case "datetime_part":
      return `${rule.columns[1]} the ${rule.part} of ${rule.columns[0]}`;
    case "template":
      return `${rule.columns[0]} = "${templateText(rule)}"`;
    case "name_gender":
      return `${rule.columns[0]}'s first name of ${rule.columns[1]}`;
    case "name_country":
      return `${rule.columns[0]} a name of ${rule.columns[1]}`;
    case "unique":
      return `${rule.columns.join(", ")} unique`;
  }
}

/** A column's position and how its cells read as numbers (epoch milliseconds for datetimes). */
interface ColumnReader {
  index: number;
  datetime: boolean;
  /** Number of a non-blank cell, or undefined when it does not parse. */
  value: (text: string) => number | undefined;
}

function readerOf(column: string, metadata: Metadata, what: string): ColumnReader {
  const index = metadata.features.indexOf(column);
  if (index < 0) throw new RangeError(`${what} names column "${column}", which metadata.features lacks.`);
  const stats = metadata.column_stats?.[column];
  if (stats?.type === "datetime" && stats.format === undefined) throw new RangeError(`${what}: the datetime column "${column}" has no column_stats format.`);
  return { index, datetime: stats?.type === "datetime", value: cellNumber(stats) };
}

/**
 * How a column's cells compare in numeric rules, shared with the enforcer (`./enforce`): datetime
 * (with `format`) -> epoch milliseconds (`../io/typed`'s fast reader); else `Number`. Blank or
 * unparsable -> undefined. Never throws.
 */
export function cellNumber(stats: ColumnStats | undefined): (text: string) => number | undefined {
  if (stats?.type === "datetime" && stats.format !== undefined) {
    const parse = datetimeParser(new DatetimeFormat(stats.format));
    return (t) => (t === "" ? undefined : parse(t));
  }
  return (t) => {
    if (t === "") return undefined;
    const x = Number(t);
    return Number.isFinite(x) ? x : undefined;
  };
}

/**
 * Entity text -> its range's index in `rule.keys`: by text, and for a numerical entity column by
 * number too (`1.0` is the entity `1`); undefined for an entity without a released range (a key
 * without a well-formed [min, max] in `rule.ranges`, as hand-edited metadata may hold, has none).
 */
export function entityRangeIndex(rule: EntityRangeRule, meta: Metadata): (text: string) => number | undefined {
  const byText = new Map<string, number>();
  const valid = (i: number): boolean => {
    const r = rule.ranges[i];
    return r !== undefined && r.length === 2 && Number.isFinite(r[0]) && Number.isFinite(r[1]) && r[0] <= r[1];
  };
  rule.keys.forEach((k, i) => byText.has(k) || !valid(i) || byText.set(k, i));
  const st = meta.column_stats?.[rule.columns[0]];
  if (st?.type !== "numerical") return (t) => byText.get(t);
  const read = cellNumber(st);
  const byNumber = new Map<number, number>();
  rule.keys.forEach((k, i) => {
    const x = read(k);
    if (x !== undefined && !byNumber.has(x) && valid(i)) byNumber.set(x, i);
  });
  return (t) => {
    const i = byText.get(t);
    if (i !== undefined) return i;
    const x = read(t);
    return x === undefined ? undefined : byNumber.get(x);
  };
}

/**
 * The rule's verdict on a row (`idx`: the entity's and the number's positions in it): undefined
 * when either cell is blank, the entity has no released range or the number does not parse; else
 * whether the number lies in the entity's [min, max], within a hair for binary floating point.
 */
export function entityRangeCheck(rule: EntityRangeRule, idx: readonly number[], meta: Metadata): (row: readonly string[]) => boolean | undefined {
  const at = entityRangeIndex(rule, meta);
  const read = cellNumber(meta.column_stats?.[rule.columns[1]]);
  return (row) => {
    const e = row[idx[0]];
    if (e === "") return undefined;
    const i = at(e);
    const x = i === undefined ? undefined : read(row[idx[1]]);
    if (x === undefined) return undefined;
    const [lo, hi] = rule.ranges[i!];
    const slack = 1e-9 * Math.max(1, Math.abs(lo), Math.abs(hi));
    return x >= lo - slack && x <= hi + slack;
  };
}

/**
 * Text -> code of a code-book column (file header); undefined when there is none.
 * @throws RangeError as {@link ruleChecker} for a column `metadata.features` lacks.
 */
export function cellCoder(column: string, metadata: Metadata): (text: string) => number | undefined {
  return coderOf(column, readerOf(column, metadata, `column "${column}"`), metadata);
}

function coderOf(column: string, reader: ColumnReader, metadata: Metadata): (text: string) => number | undefined {
  const own = new Map<string, number>(Object.entries(metadata.value_mappings?.[column] ?? {}));
  const other = own.get(OTHER);
  const stats = metadata.column_stats?.[column];
  const kind = stats?.type;
  const edges = kind === "numerical" || kind === "datetime" ? stats?.bin_edges : undefined;
  if (edges && edges.length >= 2) {
    // Interval bins: a number's bin (datetimes: the reader's ms, the edges' seconds), one past
    // either end in the end bin, as a seed cell.
    const points = pointValues(edges);
    const scale = kind === "datetime" ? 1000 : 1;
    return (text) => {
      const c = own.get(text);
      if (c !== undefined) return c;
      const x = reader.value(text);
      return x === undefined ? undefined : seedBin(edges, points, x / scale);
    };
  }
  let byValue: Map<number, number> | undefined;
  if (kind === "numerical" || kind === "datetime") {
    byValue = new Map();
    for (const [text, code] of own) {
      if (text === "") continue;
      const x = reader.value(text);
      if (x !== undefined && !byValue.has(x)) byValue.set(x, code);
    }
  }
  return (text) => {
    const c = own.get(text);
    if (c !== undefined) return c;
    if (byValue) {
      const x = reader.value(text);
      const b = x === undefined ? undefined : byValue.get(x);
      if (b !== undefined) return b;
    }
    return other;
  };
}

/** Equality of two cells of a column: same text, or for numbers and datetimes the same value. */
function sameValue(kind: string | undefined, reader: ColumnReader): (a: string, b: string) => boolean {
  if (kind !== "numerical" && kind !== "datetime") return (a, b) => a === b;
  return (a, b) => {
    if (a === b) return true;
    const x = reader.value(a);
    return x !== undefined && x === reader.value(b);
  };
}

/**
 * The checker of one rule (verdicts in the file header); the returned function never throws.
 * @param metadata `features` give the row order; `value_mappings` the codes; `column_stats` the
 *   kinds, datetime formats and decimals.
 * @throws RangeError when the rule names a column `metadata.features` lacks, or a datetime column
 *   has no usable `format`.
 */
export function ruleChecker(rule: Rule, metadata: Metadata): RowCheck {
  const what = `rule "${ruleLabel(rule)}"`;
  const readers = ruleColumns(rule).map((c) => readerOf(c, metadata, what));
  switch (rule.type) {
    case "unique": {
      // A property of the rows together: the checker holds the keys of the rows it was given.
      const seen = new Set<string>();
      return (row) => {
        const texts = readers.map((r) => row[r.index]);
        if (texts.some((t) => t === "")) return undefined;
        const key = texts.join("\u0000");
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      };
    }
    case "fixed_combinations": {
      const coders = rule.columns.map((c, k) => coderOf(c, readers[k], metadata));
      const released = new Set(rule.combinations.map((t) => t.join(",")));
      const idx = readers.map((r) => r.index);
      const det = rule.determinant === undefined ? -1 : rule.columns.indexOf(rule.determinant);
      // A determinant's rare values (pooled) are outside the rule when no combination holds them.
      let detPooled = det < 0 ? undefined : metadata.value_mappings?.[rule.columns[det]]?.[OTHER];
      if (detPooled !== undefined && rule.combinations.some((t) => t[det] === detPooled)) detPooled = undefined;
      return (row) => {
        const codes: number[] = [];
        for (let k = 0; k < idx.length; k++) if (row[idx[k]] === "") return undefined;
        for (let k = 0; k < idx.length; k++) {
          const c = coders[k](row[idx[k]]);
          if (c === undefined) return false;
          if (k === det && c === detPooled) return undefined;
          codes.push(c);
        }
        return released.has(codes.join(","));
      };
    }
    case "catalog": {
      const same = readers.map((r, k) => sameValue(metadata.column_stats?.[rule.columns[k]]?.type, r));
      const byKey = new Map<string, readonly string[]>();
      const keyNumber = new Map<number, readonly string[]>();
      const numericKey = metadata.column_stats?.[rule.key]?.type === "numerical" || metadata.column_stats?.[rule.key]?.type === "datetime";
      for (const e of rule.entries) {
        byKey.set(e[0], e);
        const x = numericKey ? readers[0].value(e[0]) : undefined;
        if (x !== undefined && !keyNumber.has(x)) keyNumber.set(x, e);
      }
      const idx = readers.map((r) => r.index);
      if ((rule.key_columns ?? 1) === 2) {
        const keyText = [0, 1].map((j) => {
          const numeric = metadata.column_stats?.[rule.columns[j]]?.type === "numerical" || metadata.column_stats?.[rule.columns[j]]?.type === "datetime";
          return (t: string): string => {
            const x = numeric ? readers[j].value(t) : undefined;
            return x === undefined ? t : `#${x}`;
          };
        });
        const pairOf = (a: string, b: string): string => `${keyText[0](a)}\u0000${keyText[1](b)}`;
        const byPair = new Map<string, readonly string[]>();
        for (const e of rule.entries) if (!byPair.has(pairOf(e[0], e[1]))) byPair.set(pairOf(e[0], e[1]), e);
        return (row) => {
          if (row[idx[0]] === "" || row[idx[1]] === "") return undefined;
          const e = byPair.get(pairOf(row[idx[0]], row[idx[1]]));
          if (e === undefined) return undefined;
          for (let k = 2; k < idx.length; k++) if (!same[k](row[idx[k]], e[k])) return false;
          return true;
        };
      }
      return (row) => {
        const key = row[idx[0]];
        if (key === "") return undefined;
        let e = byKey.get(key);
        if (e === undefined && numericKey) {
          const x = readers[0].value(key);
          e = x === undefined ? undefined : keyNumber.get(x);
        }
        if (e === undefined) return false;
        for (let k = 1; k < idx.length; k++) if (!same[k](row[idx[k]], e[k])) return false;
        return true;
      };
    }
    case "public_attribute": {
      const at = attributes();
      const st = metadata.column_stats?.[rule.columns[rule.columns.length - 2]];
      const vocabulary = st?.type === "categorical" ? st.vocabulary : undefined;
      const idx = readers.map((r) => r.index);
      const [k, c] = [idx[idx.length - 2], idx[idx.length - 1]];
      const keyOf = (row: readonly string[]): string | undefined => (idx.length === 3 ? at.countyKeyOf(row[idx[0]], row[k]) : at.keyOf(vocabulary!, row[k]));
      return (row) => {
        const key = vocabulary === undefined || row[k] === "" || row[c] === "" ? undefined : keyOf(row);
        const want = key === undefined ? undefined : at.attributeOf(rule.attribute, key);
        return want === undefined ? undefined : at.sameAttribute(rule.attribute, row[c], want, key!);
      };
    }
    case "embedded_code": {
      const [k, c] = readers.map((r) => r.index);
      return (row) => (row[k] === "" || row[c] === "" ? undefined : row[c].startsWith(row[k], rule.offset));
    }
    case "code_prefix": {
      const [k, c] = readers.map((r) => r.index);
      const allowed = new Map([...prefixesOfCategory(rule)].map(([cat, e]) => [cat, new Set(e.prefixes)]));
      return (row) => {
        const mine = row[k] === "" || row[c] === "" ? undefined : allowed.get(row[k]);
        return mine === undefined ? undefined : mine.has(row[c].slice(0, rule.length));
      };
    }
    case "calendar":
      return calendarCheck(rule, readers.map((r) => r.index));
    case "difference":
      return differenceCheck(rule, readers.map((r) => r.index), metadata);
    case "elapsed":
      return elapsedCheck(rule, readers.map((r) => r.index), metadata);
    case "entity_range":
      return entityRangeCheck(rule, readers.map((r) => r.index), metadata);
    case "datetime_part":
      return datetimePartCheck(rule, readers.map((r) => r.index), metadata);
    case "template":
      return templateCheck(rule, readers.map((r) => r.index));
    case "name_gender":
      return nameGenderCheck(rule, readers.map((r) => r.index));
    case "name_country":
      return nameCountryCheck(rule, readers.map((r) => r.index));
    case "inequality": {
      const [hi, lo] = readers;
      return (row) => {
        const a = row[hi.index];
        const b = row[lo.index];
        if (a === "" || b === "") return undefined;
        const x = hi.value(a);
        const y = lo.value(b);
        if (x === undefined || y === undefined) return undefined;
        return rule.strict ? x > y : x >= y;
      };
    }
    case "sum": {
      const decimals = ruleColumns(rule).map((c) => metadata.column_stats?.[c]?.decimals);
      const coefficients = sumCoefficients(rule);
      const k = rule.constant ?? 0;
      return (row) => {
        const texts = readers.map((r) => row[r.index]);
        if (texts.some((t) => t === "")) return undefined;
        const xs = texts.map(Number);
        if (!xs.every(Number.isFinite)) return undefined;
        // A column without stats reads at the row's finest decimals (a cell "1" may be 1.00).
        const finest = Math.max(...texts.map((s, j) => decimals[j] ?? decimalsOf(s)));
        const tol = sumRuleTolerance(decimals.map((d) => d ?? finest), rule.weights);
        let right = k;
        let size = Math.abs(k);
        for (let j = 1; j < xs.length; j++) {
          right += coefficients[j - 1] * xs[j];
          size += Math.abs(coefficients[j - 1] * xs[j]);
        }
        const slack = 8 * Number.EPSILON * Math.max(1, Math.abs(xs[0]), size);
        return Math.abs(xs[0] - right) <= tol + slack;
      };
    }
    case "ratio": {
      const decimals = ruleColumns(rule).map((c) => metadata.column_stats?.[c]?.decimals);
      const band = ratioBand(rule);
      return (row) => {
        const texts = readers.map((r) => row[r.index]);
        if (texts.some((t) => t === "")) return undefined;
        const xs = texts.map(Number);
        if (!xs.every(Number.isFinite)) return undefined;
        const ds = texts.map((t, j) => decimals[j] ?? decimalsOf(t));
        return ratioKept(xs[0], xs.slice(1), band, ds[0], ds.slice(1));
      };
    }
    case "not_equal": {
      const [p, q] = readers;
      const kinds = ruleColumns(rule).map((c) => metadata.column_stats?.[c]?.type);
      const byValue = kinds[0] === kinds[1] && (kinds[0] === "numerical" || kinds[0] === "datetime");
      return (row) => {
        const a = row[p.index];
        const b = row[q.index];
        if (a === "" || b === "") return undefined;
        if (a === b) return false;
        if (byValue) {
          const x = p.value(a);
          if (x !== undefined && x === q.value(b)) return false;
        }
        return true;
      };
    }
    case "blank_together": {
      const idx = readers.map((r) => r.index);
      return (row) => {
        let blank = 0;
        for (const i of idx) if (row[i] === "") blank++;
        return blank === 0 || blank === idx.length;
      };
    }
    case "structural_zeros": {
      const [p, q] = readers;
      const [ca, cb] = rule.columns.map((c, k) => coderOf(c, readers[k], metadata));
      // A blank reads as the column's blank code; a column without one has no pair there.
      const [ba, bb] = rule.columns.map((c) => metadata.value_mappings?.[c]?.[MISSING_KEY]);
      const forbidden = new Set(rule.pairs.map(([a, b]) => `${a},${b}`));
      return (row) => {
        const a = row[p.index];
        const b = row[q.index];
        if ((a === "" && ba === undefined) || (b === "" && bb === undefined)) return undefined;
        const x = a === "" ? ba : ca(a);
        const y = b === "" ? bb : cb(b);
        return x === undefined || y === undefined || !forbidden.has(`${x},${y}`);
      };
    }
  }
}

/**
 * Counts one rule over `n` rows whose cells `cell(column)(r)` gives (the table's own layout).
 * @throws RangeError as {@link ruleChecker}.
 */
export function countRule(
  rule: Rule,
  metadata: Metadata,
  n: number,
  cell: (column: string) => (r: number) => string,
): RuleCount {
  const check = ruleChecker(rule, metadata);
  const columns = ruleColumns(rule);
  const idx = columns.map((c) => metadata.features.indexOf(c));
  const get = columns.map(cell);
  const row = new Array<string>(metadata.features.length).fill("");
  let applicable = 0;
  let kept = 0;
  for (let r = 0; r < n; r++) {
    for (let k = 0; k < idx.length; k++) row[idx[k]] = get[k](r);
    const v = check(row);
    if (v === undefined) continue;
    applicable++;
    if (v) kept++;
  }
  return { applicable, kept, share: applicable ? kept / applicable : 1 };
}

/**
 * Per rule, in `rules` order, how many rows of `table` it applies to and keeps (columns matched by
 * name). O(rows x the rule's columns) per rule.
 * @throws DataError when `table` lacks a column a rule names; RangeError as {@link ruleChecker}.
 */
export function ruleShares(rules: readonly Rule[], metadata: Metadata, table: Table): RuleShare[] {
  const position = new Map(table.columns.map((c, i) => [c, i]));
  return rules.map((rule) => {
    const cell = (column: string): ((r: number) => string) => {
      const i = position.get(column);
      if (i === undefined) {
        throw new DataError(`The table lacks column "${column}" of rule "${ruleLabel(rule)}".`, { column });
      }
      return (r) => table.rows[r][i] ?? "";
    };
    return { rule, ...countRule(rule, metadata, table.rows.length, cell) };
  });
}

/** {@link cellNumber} with datetimes in seconds since the epoch (the unit of `DifferenceRule`). */
export function cellSeconds(stats: ColumnStats | undefined): (text: string) => number | undefined {
  const read = cellNumber(stats);
  if (stats?.type !== "datetime") return read;
  return (t) => {
    const ms = read(t);
    return ms === undefined ? undefined : ms / 1000;
  };
}

/**
 * The verdict of a difference-range rule on a row (cells in `metadata.features` order, `idx` the
 * rule's two feature indices): undefined when a cell is blank or unreadable, else whether
 * `second - first` lies in [min, max] within half a unit of the columns' finest decimals.
 */
export function differenceCheck(rule: DifferenceRule, idx: readonly number[], meta: Metadata): (row: readonly string[]) => boolean | undefined {
  const stats = rule.columns.map((c) => meta.column_stats?.[c]);
  const [ra, rb] = stats.map(cellSeconds);
  const numeric = stats.some((s) => s?.type === "numerical");
  const d = Math.max(...stats.map((s) => (s?.type === "numerical" ? (s.decimals ?? 0) : 0)));
  const slack = (numeric ? 0.5 * Math.pow(10, -d) : 0) + 1e-9 * Math.max(1, Math.abs(rule.min), Math.abs(rule.max));
  return (row) => {
    const a = ra(row[idx[0]]);
    const b = rb(row[idx[1]]);
    if (a === undefined || b === undefined) return undefined;
    return b - a >= rule.min - slack && b - a <= rule.max + slack;
  };
}

/**
 * The rule's verdict on a row (`idx`: the number's, the later and the earlier datetime's feature
 * indices): undefined when a cell is blank or unreadable; true when the number is the elapsed
 * time at the decimals it is written with (`./elapsed-units`).
 */
export function elapsedCheck(rule: ElapsedRule, idx: readonly number[], meta: Metadata): (row: readonly string[]) => boolean | undefined {
  const [rn, ra, rb] = rule.columns.map((c) => cellSeconds(meta.column_stats?.[c]));
  return (row) => {
    const x = rn(row[idx[0]]);
    const a = ra(row[idx[1]]);
    const b = rb(row[idx[2]]);
    if (x === undefined || a === undefined || b === undefined) return undefined;
    return elapsedKeeps(rule, x, decimalsOf(row[idx[0]]), a, b);
  };
}

/** A code-prefix rule's released prefixes per category text, with their real rows (same order). */
export function prefixesOfCategory(rule: CodePrefixRule): Map<string, { prefixes: string[]; counts: number[] }> {
  const out = new Map<string, { prefixes: string[]; counts: number[] }>();
  rule.categories.forEach((c, i) => {
    let e = out.get(c);
    if (!e) out.set(c, (e = { prefixes: [], counts: [] }));
    e.prefixes.push(rule.prefixes[i]);
    e.counts.push(rule.counts[i] ?? 1);
  });
  return out;
}
