/**
 * Identifier columns (column kind `id`): a column whose non-blank values are (nearly) all distinct,
 * such as an IATA code `00M`, a hex object id `58fa3f0be4b0b7ea54524859` or an order number
 * `100234`. The SDK records only the column's SHAPE ({@link IdShape}: a plain JSON object stored in
 * `column_stats[f].id_shape`, never a value of the column) and, when decoding synthetic rows,
 * writes FRESH values of that shape ({@link IdGenerator}): distinct within a sample and (almost)
 * never equal to a real one.
 *
 * This module: the shapes, their inference ({@link inferIdShape}) and matching
 * ({@link matchesIdShape}); the generator of fresh values: `../generate/id-generator`.
 */
import type { SemanticShape } from "../semantic/types";
import { makePerm, permBig, type Perm } from "../generate/permutation";

export { makePerm, permBig, type Perm };

/**
 * The shape of an identifier column (JSON; stored in `column_stats[f].id_shape`). Never holds a
 * value of the column. Built by {@link inferIdShape}; read by {@link matchesIdShape} and
 * {@link IdGenerator}.
 */
export type IdShape = IntegerIdShape | TextIdShape;

/** An integer identifier column (every value an integer string without leading zeros). */
export interface IntegerIdShape {
  kind: "integer";
  /** Smallest and largest value (safe integers). */
  min: number;
  max: number;
  /** Number of distinct non-blank values. */
  distinct: number;
}

/** A text identifier column: a constant prefix, then characters drawn from per-position classes. */
export interface TextIdShape {
  kind: "text";
  /**
   * Longest prefix shared by every value (e.g. "ORD-"); may be "". It is a constant of the column,
   * not a value: it is capped so that every value keeps at least one character after it.
   */
  prefix: string;
  /**
   * Rows per length of the part after the prefix: {"21": 3000, "22": 10} (keys are lengths as
   * strings, in Unicode code points).
   */
  lengths: Record<string, number>;
  /**
   * Per position after the prefix (index 0 = first char after the prefix), the characters allowed
   * there, as a compact class string: "0-9", "a-z", "A-Z", "a-f" / "A-F" (hex letters, when every
   * letter after the prefix in the whole column is a-f/A-F), plus any other characters seen at
   * that position listed literally (e.g. "-", " ", "_", "."); a class or literal held by fewer
   * than {@link MIN_CLASS_SHARE} of the rows reaching the position is left out (so a real value
   * need not match its own shape, but fresh ones read like the common ones), ranges first (in the order 0-9,
   * A-Z, a-z) then literals (by code point), e.g. "0-9A-Z" or "a-z -". Length = the longest
   * value's length minus the prefix.
   */
  positions: string[];
  /**
   * Issue 24: what the values are (names, emails, titles ...); when present, {@link IdGenerator}
   * writes values of that kind (`../semantic`) instead of characters of `positions`.
   */
  semantic?: SemanticShape;
}

/** The integer rule of {@link inferIdShape}: an integer string without leading zeros. */
const INTEGER_RE = /^-?(0|[1-9]\d*)$/;

/** The range tokens of a position class and the characters they stand for. */
const RANGES: ReadonlyMap<string, string> = new Map([
  ["0-9", "0123456789"],
  ["A-Z", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"],
  ["a-z", "abcdefghijklmnopqrstuvwxyz"],
  ["A-F", "ABCDEF"],
  ["a-f", "abcdef"],
]);

/**
 * Infers the shape of an identifier column from its distinct non-blank values and their counts.
 *
 * - Integer shape ({@link IntegerIdShape}) when every value matches `/^-?(0|[1-9]\d*)$/` and is a
 *   safe integer (so "00501" is text): min, max and the number of distinct values.
 * - Otherwise text ({@link TextIdShape}): the longest common prefix (in code points, capped at the
 *   shortest value's length minus 1), rows per length after the prefix (summing `counts`), and per
 *   position the class of characters seen there: an ASCII digit widens to "0-9", an ASCII letter
 *   to "A-Z"/"a-z" (or "A-F"/"a-f" when every ASCII letter after the prefix in the column is a hex
 *   letter, i.e. the column looks hexadecimal), anything else is listed literally.
 *
 * Source of the method: character-class profiling of identifier formats, as in data profilers'
 * pattern inference; the classes are per position so that generated values keep fixed separators
 * (e.g. the dashes of a UUID) in place.
 *
 * @param values distinct non-blank values (already trimmed); a repeated value is counted once for
 *   `distinct` and its counts are added for `lengths`.
 * @param counts rows per value (same length as `values`; finite numbers >= 0).
 * @throws RangeError on an empty list, on lists of different lengths, on a blank ("") value or on
 *   a count that is not a finite number >= 0.
 */
export function inferIdShape(values: readonly string[], counts: readonly number[]): IdShape {
  if (values.length === 0) throw new RangeError("inferIdShape: no values (an id column needs at least one non-blank value)");
  if (counts.length !== values.length) {
    throw new RangeError(`inferIdShape: ${values.length} values but ${counts.length} counts`);
  }
  for (let v = 0; v < values.length; v++) {
    if (values[v] === "") throw new RangeError(`inferIdShape: value ${v} is blank; pass non-blank values only`);
    const c = counts[v];
    if (!Number.isFinite(c) || c < 0) throw new RangeError(`inferIdShape: count ${v} is ${c}, not a finite number >= 0`);
  }
  const integer = integerShape(values);
  return integer ?? textShape(values, counts);
}

/** The integer shape, or null when some value is not a safe integer written without leading zeros. */
function integerShape(values: readonly string[]): IntegerIdShape | null {
  let min = Infinity;
  let max = -Infinity;
  const seen = new Set<number>();
  for (const s of values) {
    if (!INTEGER_RE.test(s)) return null;
    const n = Number(s);
    if (!Number.isSafeInteger(n)) return null;
    const z = n === 0 ? 0 : n; // "-0" counts as 0
    if (z < min) min = z;
    if (z > max) max = z;
    seen.add(z);
  }
  return { kind: "integer", min, max, distinct: seen.size };
}

function isDigit(c: string): boolean {
  return c.length === 1 && c >= "0" && c <= "9";
}
function isUpper(c: string): boolean {
  return c.length === 1 && c >= "A" && c <= "Z";
}
function isLower(c: string): boolean {
  return c.length === 1 && c >= "a" && c <= "z";
}

/** Per-position character statistics of {@link textShape}: rows per class and per literal. */
interface PositionSeen {
  digit: number;
  upper: number;
  lower: number;
  literals: Map<string, number>;
  rows: number;
}

/**
 * A class or literal character is kept at a position only when at least this share of the rows
 * reaching that position have it (the most common one is always kept): a free-text column such as
 * airport names would otherwise allow `/`, `(` and digits everywhere and write line noise.
 */
export const MIN_CLASS_SHARE = 0.05;

function textShape(values: readonly string[], counts: readonly number[]): TextIdShape {
  const cps = values.map((s) => Array.from(s));
  // Longest common prefix (code points), capped so that every value keeps a variable part.
  let minLen = Infinity;
  for (const a of cps) minLen = Math.min(minLen, a.length);
  let p = 0;
  const first = cps[0];
  outer: while (p < minLen - 1) {
    const c = first[p];
    for (const a of cps) if (a[p] !== c) break outer;
    p++;
  }
  const prefix = first.slice(0, p).join("");

  const byLength = new Map<number, number>();
  const seen: PositionSeen[] = [];
  let hex = true;
  cps.forEach((a, v) => {
    const len = a.length - p;
    byLength.set(len, (byLength.get(len) ?? 0) + counts[v]);
    const w = counts[v];
    for (let j = 0; j < len; j++) {
      const c = a[p + j];
      const s = (seen[j] ??= { digit: 0, upper: 0, lower: 0, literals: new Map(), rows: 0 });
      s.rows += w;
      if (isDigit(c)) s.digit += w;
      else if (isUpper(c)) {
        s.upper += w;
        if (c > "F") hex = false;
      } else if (isLower(c)) {
        s.lower += w;
        if (c > "f") hex = false;
      } else s.literals.set(c, (s.literals.get(c) ?? 0) + w);
    }
  });

  const lengths: Record<string, number> = {};
  for (const len of [...byLength.keys()].sort((x, y) => x - y)) lengths[String(len)] = byLength.get(len)!;
  const positions = seen.map((s) => {
    const top = Math.max(s.digit, s.upper, s.lower, ...s.literals.values());
    const keep = (rows: number): boolean => rows > 0 && (rows === top || rows >= MIN_CLASS_SHARE * s.rows);
    let cls = "";
    if (keep(s.digit)) cls += "0-9";
    if (keep(s.upper)) cls += hex ? "A-F" : "A-Z";
    if (keep(s.lower)) cls += hex ? "a-f" : "a-z";
    const lits = [...s.literals].filter(([, rows]) => keep(rows)).map(([c]) => c).sort((x, y) => x.codePointAt(0)! - y.codePointAt(0)!);
    return cls + lits.join("");
  });
  return { kind: "text", prefix, lengths, positions };
}

/**
 * The characters of a position class string (see {@link TextIdShape.positions}): leading range
 * tokens ("0-9", "A-Z", "a-z", "A-F", "a-f") expanded, then every remaining code point literally;
 * duplicates dropped, first occurrence kept.
 */
function parseClass(cls: string): string[] {
  let i = 0;
  let chars = "";
  while (i + 3 <= cls.length && RANGES.has(cls.slice(i, i + 3))) {
    chars += RANGES.get(cls.slice(i, i + 3))!;
    i += 3;
  }
  return [...new Set([...Array.from(chars), ...Array.from(cls.slice(i))])];
}

/** A text shape checked and parsed: per position its alphabet, per length its weight. */
interface CompiledText {
  prefix: string;
  alphabets: string[][];
  /** Lengths (ascending) and their rows. */
  lengths: number[];
  weights: number[];
}

/**
 * Checks a shape from untrusted JSON.
 * @throws RangeError naming the first problem.
 */
export function checkShape(shape: IdShape): void {
  if (shape === null || typeof shape !== "object") throw new RangeError("id shape: not an object");
  if (shape.kind === "integer") {
    const { min, max, distinct } = shape;
    if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max) || min > max) {
      throw new RangeError(`id shape: min ${min} and max ${max} must be safe integers with min <= max`);
    }
    if (typeof distinct !== "number" || !Number.isFinite(distinct) || distinct < 0) {
      throw new RangeError(`id shape: distinct ${distinct} must be a finite number >= 0`);
    }
    return;
  }
  if (shape.kind !== "text") throw new RangeError(`id shape: unknown kind ${JSON.stringify((shape as { kind?: unknown }).kind)}`);
  compileText(shape);
}

export function compileText(shape: TextIdShape): CompiledText {
  if (typeof shape.prefix !== "string") throw new RangeError("id shape: prefix must be a string");
  if (!Array.isArray(shape.positions)) throw new RangeError("id shape: positions must be an array of strings");
  const alphabets = shape.positions.map((cls, j) => {
    if (typeof cls !== "string") throw new RangeError(`id shape: position ${j} is not a string`);
    const a = parseClass(cls);
    if (a.length === 0) throw new RangeError(`id shape: position ${j} allows no character`);
    return a;
  });
  if (shape.lengths === null || typeof shape.lengths !== "object") throw new RangeError("id shape: lengths must be an object");
  const entries = Object.entries(shape.lengths);
  if (entries.length === 0) throw new RangeError("id shape: lengths is empty");
  const lengths: number[] = [];
  const weights: number[] = [];
  for (const [k, w] of entries.sort((x, y) => Number(x[0]) - Number(y[0]))) {
    const len = Number(k);
    if (!/^(0|[1-9]\d*)$/.test(k) || len > alphabets.length) {
      throw new RangeError(`id shape: length "${k}" is not an integer in [0, ${alphabets.length}] (the number of positions)`);
    }
    if (typeof w !== "number" || !Number.isFinite(w) || w < 0) throw new RangeError(`id shape: rows of length ${k} must be a finite number >= 0`);
    lengths.push(len);
    weights.push(w);
  }
  return { prefix: shape.prefix, alphabets, lengths, weights };
}

/**
 * True when `value` could have been written by a generator of this shape.
 * - integer: an integer string without leading zeros (`/^-?(0|[1-9]\d*)$/`) that is a safe
 *   integer (any value, not only those in [min, max]: generated values may lie above max);
 * - text: starts with the prefix, the rest has a length listed in `lengths` (code points), and
 *   every character is allowed at its position; with a `semantic` kind, any non-blank value.
 * @throws RangeError when the shape is malformed (see {@link IdGenerator}'s constructor).
 */
export function matchesIdShape(shape: IdShape, value: string): boolean {
  checkShape(shape);
  if (shape.kind === "integer") return INTEGER_RE.test(value) && Number.isSafeInteger(Number(value));
  if (shape.semantic) return value.trim() !== ""; // semantic values (names, emails ...) need not match `positions`
  const c = compileText(shape);
  if (!value.startsWith(c.prefix)) return false;
  const rest = Array.from(value.slice(c.prefix.length));
  if (!c.lengths.includes(rest.length)) return false;
  return rest.every((ch, j) => c.alphabets[j].includes(ch));
}
