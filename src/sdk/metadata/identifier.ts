/**
 * Identifier columns (kind `id`: values (nearly) all distinct, e.g. `00M`, a hex object id, an
 * order number). Only the column's SHAPE is recorded ({@link IdShape}, `column_stats[f].id_shape`,
 * never a value); decoding writes FRESH values of that shape (`../generate/id-generator`).
 */
import type { SemanticShape } from "../semantic/types";
import { makePerm, permBig, type Perm } from "../generate/permutation";

export { makePerm, permBig, type Perm };

/** The shape of an identifier column (JSON, never a value of the column; {@link inferIdShape}). */
export type IdShape = IntegerIdShape | TextIdShape;

/** An integer identifier column (every value an integer string without leading zeros). */
export interface IntegerIdShape {
  kind: "integer";
  /** Smallest and largest value (safe integers). */
  min: number;
  max: number;
  /** Number of distinct non-blank values. */
  distinct: number;
  /**
   * Set when the column numbers the rows (R's row names, a pandas index: row i of the file holds
   * min + i, min 0 or 1; {@link rowCounterStart}): row i of a sample is then written min + i.
   */
  counter?: true;
}

/** A text identifier column: a constant prefix, then characters drawn from per-position classes. */
export interface TextIdShape {
  kind: "text";
  /** Longest prefix of every value (`ORD-`, may be ""), capped so each value keeps a character. */
  prefix: string;
  /** Rows per length (in code points) of the part after the prefix: {"21": 3000, "22": 10}. */
  lengths: Record<string, number>;
  /**
   * Per position after the prefix, the characters allowed, as a class string: ranges "0-9", "A-Z",
   * "a-z" ("A-F"/"a-f" when every letter in the column is hex) then literals by code point
   * ("0-9A-Z", "a-z -"); a position of at most {@link MAX_LETTER_SET} letters, each of
   * {@link MIN_LETTER_SET_ROWS} rows on average, keeps them as literals ("HS", "0-9X"). A class or
   * letter held by under {@link MIN_CLASS_SHARE} of the rows reaching the position is left out, so
   * a real value need not match its own shape.
   */
  positions: string[];
  /** What the values are (names, emails ...): the generator writes that kind (`../semantic`). */
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
 * Infers an identifier column's shape from its distinct non-blank values and rows per value:
 * integer (safe integers without leading zeros, so "00501" is text) or text (prefix, lengths and
 * per-position classes, as data profilers' pattern inference; per position so fixed separators,
 * e.g. a UUID's dashes, stay in place).
 * @throws RangeError on no values, mismatched lengths, a blank value or a count not finite >= 0.
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

/**
 * The first row's number when a column numbers its rows: `values` (distinct values in order of
 * first appearance, blanks excluded) are exactly "0", "1", ... or "1", "2", ... and `rows` of
 * them, one per row, no blank (R's `write.csv` row names, a pandas index written with the frame);
 * else undefined. Such a column says only where a row sits in its file.
 */
export function rowCounterStart(values: readonly string[], rows: number): 0 | 1 | undefined {
  if (values.length !== rows || rows === 0) return undefined;
  const start = values[0] === "0" ? 0 : values[0] === "1" ? 1 : undefined;
  if (start === undefined) return undefined;
  for (let i = 1; i < rows; i++) if (values[i] !== String(start + i)) return undefined;
  return start;
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
  /** Rows per letter (capital or small). */
  letters: Map<string, number>;
  rows: number;
}

/**
 * Most distinct letters a position may hold to keep them as literals rather than `A-Z`: an office
 * letter (FEC candidate ids: H, S or P) is not any capital.
 */
export const MAX_LETTER_SET = 3;
/**
 * Most positions (and longest length) a text shape records, the contract's bound on
 * `id_shape.positions`: a longer value (a paragraph of free text) counts as this long, so a
 * column of long texts still fits the model (its words are written by its semantic kind).
 */
export const MAX_POSITIONS = 1024;
/** Longest prefix a text shape records (the contract's bound on `id_shape.prefix`). */
export const MAX_PREFIX = 256;
/** Rows per distinct letter a position needs before its letters count as a set, not chance. */
export const MIN_LETTER_SET_ROWS = 10;

/**
 * Share of the rows reaching a position that a class or literal needs to be kept (the commonest
 * always is): else free text would allow `/`, `(` and digits everywhere and write line noise.
 */
export const MIN_CLASS_SHARE = 0.05;

function textShape(values: readonly string[], counts: readonly number[]): TextIdShape {
  const cps = values.map((s) => Array.from(s));
  // Longest common prefix (code points), capped so that every value keeps a variable part.
  let minLen = Infinity;
  for (const a of cps) minLen = Math.min(minLen, a.length);
  let p = 0;
  const first = cps[0];
  outer: while (p < minLen - 1 && p < MAX_PREFIX) {
    const c = first[p];
    for (const a of cps) if (a[p] !== c) break outer;
    p++;
  }
  const prefix = first.slice(0, p).join("");

  const byLength = new Map<number, number>();
  const seen: PositionSeen[] = [];
  let hex = true;
  cps.forEach((a, v) => {
    const len = Math.min(a.length - p, MAX_POSITIONS);
    byLength.set(len, (byLength.get(len) ?? 0) + counts[v]);
    const w = counts[v];
    for (let j = 0; j < len; j++) {
      const c = a[p + j];
      const s = (seen[j] ??= { digit: 0, upper: 0, lower: 0, literals: new Map(), letters: new Map(), rows: 0 });
      s.rows += w;
      if (isDigit(c)) s.digit += w;
      else if (isUpper(c)) {
        s.upper += w;
        s.letters.set(c, (s.letters.get(c) ?? 0) + w);
        if (c > "F") hex = false;
      } else if (isLower(c)) {
        s.lower += w;
        s.letters.set(c, (s.letters.get(c) ?? 0) + w);
        if (c > "f") hex = false;
      } else s.literals.set(c, (s.literals.get(c) ?? 0) + w);
    }
  });

  const lengths: Record<string, number> = {};
  for (const len of [...byLength.keys()].sort((x, y) => x - y)) lengths[String(len)] = byLength.get(len)!;
  const positions = seen.map((s) => {
    const top = Math.max(s.digit, s.upper, s.lower, ...s.literals.values());
    const keep = (rows: number): boolean => rows > 0 && (rows === top || rows >= MIN_CLASS_SHARE * s.rows);
    // A small set of letters, each seen often enough, is kept as literals (ranges come first).
    const letterSet = s.letters.size > 0 && s.letters.size <= MAX_LETTER_SET && s.upper + s.lower >= MIN_LETTER_SET_ROWS * s.letters.size;
    let cls = "";
    if (keep(s.digit)) cls += "0-9";
    if (!letterSet && keep(s.upper)) cls += hex ? "A-F" : "A-Z";
    if (!letterSet && keep(s.lower)) cls += hex ? "a-f" : "a-z";
    const literals = letterSet ? [...s.literals, ...s.letters] : [...s.literals];
    const lits = literals.filter(([, rows]) => keep(rows)).map(([c]) => c).sort((x, y) => x.codePointAt(0)! - y.codePointAt(0)!);
    return cls + lits.join("");
  });
  return { kind: "text", prefix, lengths, positions };
}

/** The characters of a class string ({@link TextIdShape.positions}), ranges expanded. */
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

/** Checks a shape from untrusted JSON. @throws RangeError naming the first problem. */
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
    if (shape.counter !== undefined && (shape.counter !== true || (min !== 0 && min !== 1))) {
      throw new RangeError(`id shape: counter ${JSON.stringify(shape.counter)} must be true, on a column whose min is 0 or 1 (min ${min})`);
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
 * True when `value` could have been written by a generator of this shape (integers: any safe
 * integer, since generated values may exceed max; semantic: any non-blank value).
 * @throws RangeError when the shape is malformed.
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
