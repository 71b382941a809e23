/**
 * Identifier columns (column kind `id`): a column whose non-blank values are (nearly) all distinct,
 * such as an IATA code `00M`, a hex object id `58fa3f0be4b0b7ea54524859` or an order number
 * `100234`. The SDK records only the column's SHAPE ({@link IdShape}: a plain JSON object stored in
 * `column_stats[f].id_shape`, never a value of the column) and, when decoding synthetic rows,
 * writes FRESH values of that shape ({@link IdGenerator}): distinct within a sample and (almost)
 * never equal to a real one.
 *
 * Method. Distinctness is by construction: row i of a sample gets the value
 * `render(perm(i))`, where `perm` is a keyed pseudo-random permutation of the domain of the shape
 * (format-preserving encryption: a Feistel network over the smallest bit width w covering the
 * domain, with cycle walking into the domain; J. Black & P. Rogaway, "Ciphers with Arbitrary
 * Finite Domains", CT-RSA 2002, LNCS 2271, sections 4 and 5) and `render` writes the permuted
 * index in mixed radix over the per-position character sets. A bijection maps distinct indices to
 * distinct values; a pseudo-random one makes the values look unrelated to the row order.
 *
 * Feistel details (shared by both arithmetic paths): the w-bit block is split into a high half of
 * floor(w/2) bits and a low half of ceil(w/2) bits (balanced up to one bit); 8 rounds alternate
 * `hi ^= F_r(lo)` and `lo ^= F_r(hi)` (each round is invertible, so the network is a permutation of
 * [0, 2^w) whatever F_r is); F_r is a keyed hash built from the murmur3 finaliser (`mix32`) with
 * round keys from `deriveSeed(key, ...)`. Cycle walking (re-encrypt until the result is below the
 * domain size N) turns it into a permutation of [0, N); since N > 2^(w-1), fewer than 2
 * encryptions are expected per value. Domains up to 2^52 use Number arithmetic only (halves of at
 * most 26 bits, 32-bit integer ops); larger domains (24 hex characters = 2^96) use BigInt blocks
 * with the round function still computed on 32-bit words.
 *
 * Measured speed (Node 20 on this 2-core machine, `IdGenerator.value` in a loop after a warm-up;
 * the test "speed" prints it): 3-char [0-9A-Z] shape (46,656 values, Number path) about
 * 2.5-4.2 million values/s; 24-char lowercase hex shape (2^96 values, BigInt path) about
 * 330,000-500,000 values/s (targets: 300k/s and 50k/s).
 */
import { deriveSeed } from "../generate/prng";
import type { SemanticShape } from "../semantic/types";
import { SemanticGenerator } from "../semantic/generate";
import { makePerm, permBig, SMALL_DOMAIN, TWO32, type Perm } from "../generate/permutation";

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
   * writes values of that kind (`./semantic`) instead of characters of `positions`.
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
function checkShape(shape: IdShape): void {
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

function compileText(shape: TextIdShape): CompiledText {
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

// ---------------------------------------------------------------------------------------------
// Generators.

/** One length of a text shape: its domain, permutation and mixed-radix rendering. */
interface Lane {
  len: number;
  weight: number;
  /** Domain size: the product of the alphabet sizes of positions 0..len-1. */
  size: bigint;
  /** `size` as a Number when it is a safe integer, else Infinity (every safe index is below it). */
  sizeNum: number;
  perm: Perm;
  alphabets: string[][];
  /** BigInt path: groups of positions [from, to) rendered from one Number chunk, last group first. */
  chunks: { from: number; to: number; product: bigint }[];
}

/** Key tags separating the uses of the generator key. */
const TAG_LENGTH = 0x1e9;
const TAG_PERM = 0x7a3;

/**
 * Writes fresh identifiers of a shape. `value(i)` is deterministic for (shape, key, i), and
 * distinct indices give distinct values as long as they are below {@link IdGenerator.capacity}.
 *
 * Method: a keyed pseudo-random permutation (Feistel network with cycle walking, Black & Rogaway,
 * "Ciphers with Arbitrary Finite Domains", CT-RSA 2002) maps the index to a permuted index of the
 * domain, rendered in mixed radix over the per-position alphabets (text) or added to an offset
 * (integer).
 *
 * Text shapes: row i's length L is drawn from the `lengths` distribution with the keyed hash
 * `deriveSeed(key, tag, i) / 2^32` (so the length mix follows the real one); the characters are
 * `perm_L(i)` in the domain of length L (prefix + one character per position). Values of
 * different lengths differ by length, values of the same length differ because `perm_L` is a
 * bijection. Fallback when i >= the domain size of its drawn length (a short length with few
 * possible values): the length is re-drawn, with the same hash, among the lengths whose domain
 * exceeds i (so distinctness is kept and the value does not fall into an exhausted domain, where it
 * would almost surely equal a real value; the length mix then under-represents such exhausted
 * lengths). Only when no length's domain exceeds i (i >= capacity) does it wrap: `perm_L(i mod
 * |domain_L|)`, and duplicates can then occur.
 *
 * Integer shapes, with span = max - min + 1 and density = distinct / span:
 * - density <= 0.05 (sparse): `min + perm(i)` over [min, max]; the expected share of values equal
 *   to a real one is the density. Capacity: span; beyond it, wraps (duplicates).
 * - otherwise (dense: the real values fill their range): fresh values just above it, like new rows
 *   of an auto-increment table, never equal to a real value: `max + 1 + perm(i)` over [0, span)
 *   for i < span, and block k = floor(i / span) further up for larger i
 *   (`max + 1 + k * span + perm(i mod span)`), as long as the value stays a safe integer.
 *   Capacity: the number of whole blocks that fit below `Number.MAX_SAFE_INTEGER` times span;
 *   beyond it, wraps (duplicates). When not even one block fits, the sparse rule is used instead.
 *
 * Cost: construction O(positions^2) (text) and 16 key derivations per permutation; `value` is
 * O(positions) plus 8 Feistel rounds (x < 2 cycle-walking steps expected). Speeds are measured in
 * this module's header.
 */
export class IdGenerator {
  private readonly kind: "integer" | "text";
  // Text.
  private readonly prefix: string = "";
  private readonly lanes: Lane[] = [];
  /** Cumulative normalised weights of `lanes`. */
  private readonly cum: number[] = [];
  private readonly lengthKey: number = 0;
  private readonly cap: number;
  // Integer.
  private readonly base: bigint = 0n;
  private readonly span: bigint = 1n;
  private readonly spanNum: number = 1;
  private readonly dense: boolean = false;
  private readonly intPerm: Perm | null = null;
  private readonly digits = new Int32Array(0);
  /** Issue 24 hook: set when the text shape has a semantic kind; `value` delegates to it. */
  private readonly semantic?: SemanticGenerator;

  /**
   * @param shape a shape from {@link inferIdShape} (or from `column_stats[f].id_shape`).
   * @param key any finite number (e.g. `deriveSeed(seed, f)`): the same key gives the same
   *   values; another key gives unrelated ones.
   * @throws RangeError on a malformed shape (unknown kind; min/max not safe integers or min > max;
   *   a position class allowing no character; a length key that is not an integer in
   *   [0, positions.length]; a negative or non-finite row count; no lengths) or a non-finite key.
   */
  constructor(shape: IdShape, key: number) {
    checkShape(shape);
    const base = deriveSeed(key, TAG_PERM);
    this.kind = shape.kind;
    if (shape.kind === "integer") {
      const span = BigInt(shape.max) - BigInt(shape.min) + 1n;
      this.span = span;
      this.spanNum = Number(span);
      const density = shape.distinct / this.spanNum;
      const blocks = Number((BigInt(Number.MAX_SAFE_INTEGER) - BigInt(shape.max)) / span);
      this.dense = density > 0.05 && blocks >= 1;
      this.base = this.dense ? BigInt(shape.max) + 1n : BigInt(shape.min);
      this.cap = this.dense ? blocks * this.spanNum : this.spanNum;
      this.intPerm = makePerm(span, base);
      return;
    }
    const c = compileText(shape);
    if (shape.semantic) this.semantic = new SemanticGenerator(shape.semantic, key);
    this.prefix = c.prefix;
    this.lengthKey = deriveSeed(key, TAG_LENGTH);
    let total = 0;
    for (const w of c.weights) total += w;
    let maxLen = 0;
    c.lengths.forEach((len, k) => {
      const weight = total > 0 ? c.weights[k] : 1;
      if (weight <= 0) return;
      maxLen = Math.max(maxLen, len);
      const alphabets = c.alphabets.slice(0, len);
      let size = 1n;
      for (const a of alphabets) size *= BigInt(a.length);
      const chunks: Lane["chunks"] = [];
      if (size > BigInt(SMALL_DOMAIN)) {
        let to = len;
        while (to > 0) {
          let from = to;
          let product = 1;
          while (from > 0 && product * alphabets[from - 1].length <= SMALL_DOMAIN) product *= alphabets[--from].length;
          chunks.push({ from, to, product: BigInt(product) });
          to = from;
        }
      }
      this.lanes.push({
        len,
        weight,
        size,
        sizeNum: size <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(size) : Infinity,
        perm: makePerm(size, deriveSeed(base, len)),
        alphabets,
        chunks,
      });
    });
    const sum = this.lanes.reduce((s, l) => s + l.weight, 0);
    let acc = 0;
    for (const l of this.lanes) this.cum.push((acc += l.weight) / sum);
    this.cum[this.cum.length - 1] = 1;
    this.cap = Math.max(...this.lanes.map((l) => Number(l.size)));
    this.digits = new Int32Array(maxLen);
  }

  /**
   * How many indices get distinct values: every two distinct indices below it give distinct values
   * (text: the largest domain among the lengths with rows, as a Number, rounded and possibly
   * astronomically large; integer: see the class description). Indices at or above it wrap.
   */
  capacity(): number {
    return this.cap;
  }

  /**
   * The identifier of row `i`: the i-th row of a sample across all its batches (so batches must
   * number their rows consecutively to stay distinct).
   * @param i 0 <= i, a safe integer.
   * @returns a value for which {@link matchesIdShape} is true.
   * @throws RangeError when i is not a non-negative safe integer.
   */
  value(i: number): string {
    if (!Number.isSafeInteger(i) || i < 0) throw new RangeError(`IdGenerator.value: index ${i} is not a non-negative safe integer`);
    if (this.kind === "integer") return this.integerValue(i);
    if (this.semantic) return this.semantic.value(i);
    const u = deriveSeed(this.lengthKey, i) / TWO32;
    const lanes = this.lanes;
    let lane = lanes[this.pick(u)];
    if (i >= lane.sizeNum) lane = this.fallback(u, i) ?? lane;
    const perm = lane.perm;
    const idx = i % lane.sizeNum; // i itself unless wrapping past capacity
    if (perm.small) return this.render(lane, perm.small.apply(idx));
    return this.renderBig(lane, perm.big!.apply(BigInt(idx)));
  }

  private integerValue(i: number): string {
    const perm = this.intPerm!;
    if (this.dense) {
      const j = i % this.cap;
      const block = Math.floor(j / this.spanNum);
      return String(this.base + BigInt(block) * this.span + permBig(perm, j - block * this.spanNum));
    }
    if (perm.small) return String(Number(this.base) + perm.small.apply(i % this.spanNum));
    return String(this.base + perm.big!.apply(BigInt(i) % this.span));
  }

  /** Index of the lane whose cumulative weight interval holds u (binary search). */
  private pick(u: number): number {
    const cum = this.cum;
    let lo = 0;
    let hi = cum.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (u < cum[mid]) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  /** The lane drawn with u among those whose domain exceeds i, or null when there is none. */
  private fallback(u: number, i: number): Lane | null {
    const eligible = this.lanes.filter((l) => i < l.sizeNum);
    if (eligible.length === 0) return null;
    const total = eligible.reduce((s, l) => s + l.weight, 0);
    let acc = 0;
    for (const l of eligible) if (u < (acc += l.weight) / total) return l;
    return eligible[eligible.length - 1];
  }

  private render(lane: Lane, v: number): string {
    this.fillDigits(lane.alphabets, v, 0, lane.len);
    return this.spell(lane);
  }

  private renderBig(lane: Lane, v: bigint): string {
    for (const { from, to, product } of lane.chunks) {
      this.fillDigits(lane.alphabets, Number(v % product), from, to);
      v /= product;
    }
    return this.spell(lane);
  }

  /** Mixed-radix digits of c over positions [from, to) (the last position least significant) into `digits`. */
  private fillDigits(alphabets: readonly string[][], c: number, from: number, to: number): void {
    const d = this.digits;
    for (let j = to - 1; j >= from; j--) {
      const r = alphabets[j].length;
      const q = Math.floor(c / r);
      d[j] = c - q * r;
      c = q;
    }
  }

  /** The prefix and the characters of `digits` at the lane's positions. */
  private spell(lane: Lane): string {
    let s = this.prefix;
    for (let j = 0; j < lane.len; j++) s += lane.alphabets[j][this.digits[j]];
    return s;
  }
}
