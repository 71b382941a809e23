/**
 * Fresh values of an identifier shape (shapes, inference and matching: `../metadata/identifier`).
 * Distinct by construction: row i of a sample gets `render(perm(i))`, `perm` a keyed pseudo-random
 * permutation of the shape's domain (`./permutation`), `render` the mixed-radix spelling over the
 * per-position character sets; the values look unrelated to the row order.
 */
import { deriveSeed } from "./sfc32";
import { makePerm, permBig, SMALL_DOMAIN, TWO32, type Perm } from "./permutation";
import { checkShape, compileText, type IdShape } from "../metadata/identifier";

/** Fresh identifiers of a column by row index: an {@link IdGenerator} or a semantic generator. */
export interface IdValues {
  /** The identifier of row `i` of a sample (0 <= i, a safe integer). */
  value(i: number): string;
}

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
  /** BigInt path: groups of positions [from, to) rendered from one Number chunk, last first. */
  chunks: { from: number; to: number; product: bigint }[];
}

/** Key tags separating the uses of the generator key. */
const TAG_LENGTH = 0x1e9;
const TAG_PERM = 0x7a3;

/**
 * Writes fresh identifiers of a shape. `value(i)` is deterministic for (shape, key, i), and
 * distinct indices below {@link IdGenerator.capacity} give distinct values; above it, values wrap.
 *
 * Text shapes: row i's length L is drawn from the `lengths` distribution with the keyed hash
 * `deriveSeed(key, tag, i) / 2^32`; the characters are `perm_L(i)` in the domain of length L. When
 * i >= that domain's size, L is re-drawn with the same hash among the lengths whose domain exceeds
 * i, so the value stays distinct and does not fall into an exhausted domain, where it would almost
 * surely equal a real one (such lengths are then under-represented).
 *
 * Row counters (`counter` set): row i is written min + i, in sample order, as the real file
 * numbers its rows. Capacity: the safe integers from min.
 *
 * Integer shapes, with span = max - min + 1 and density = distinct / span:
 * - density <= 0.05 (sparse): `min + perm(i)` over [min, max]; the expected share of values equal
 *   to a real one is the density. Capacity: span.
 * - otherwise (dense): fresh values above max, like new rows of an auto-increment table, never a
 *   real value: `max + 1 + k * span + perm(i mod span)`, k = floor(i / span), while a safe integer.
 *   Capacity: the whole blocks below `Number.MAX_SAFE_INTEGER` times span (none fits: sparse rule).
 *
 * Cost: construction O(positions^2) (text) and 16 key derivations per permutation; `value` is
 * O(positions) plus 8 Feistel rounds (fewer than 2 cycle-walking steps expected).
 */
export class IdGenerator implements IdValues {
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
  /** A row counter's first number (`IntegerIdShape.counter`), else undefined. */
  private readonly counterStart: number | undefined;
  private readonly digits = new Int32Array(0);

  /**
   * @param shape a shape from {@link inferIdShape} (or `column_stats[f].id_shape`).
   * @param key any finite number (e.g. `deriveSeed(seed, f)`): the same key gives the same values.
   * @throws RangeError on a malformed shape (unknown kind; min/max not safe integers or min > max;
   *   a position class allowing no character; a length key that is not an integer in [0,
   *   positions.length]; a negative or non-finite row count; no lengths) or a non-finite key.
   */
  constructor(shape: IdShape, key: number) {
    checkShape(shape);
    const base = deriveSeed(key, TAG_PERM);
    this.kind = shape.kind;
    if (shape.kind === "integer" && shape.counter) {
      this.counterStart = shape.min;
      this.cap = Number.MAX_SAFE_INTEGER - shape.min;
      return;
    }
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
   * How many indices get distinct values (text: the largest domain among the lengths with rows, as
   * a Number, possibly astronomically large; integer: see the class comment). Above it, wraps.
   */
  capacity(): number {
    return this.cap;
  }

  /**
   * The identifier of row `i` of a sample across all its batches (batches must number their rows
   * consecutively to stay distinct); a value for which {@link matchesIdShape} is true.
   * @throws RangeError when i is not a non-negative safe integer.
   */
  value(i: number): string {
    if (!Number.isSafeInteger(i) || i < 0) throw new RangeError(`IdGenerator.value: index ${i} is not a non-negative safe integer`);
    if (this.kind === "integer") return this.integerValue(i);
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
    if (this.counterStart !== undefined) return String(this.counterStart + i);
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

  /** Mixed-radix digits of c over positions [from, to) (last least significant) into `digits`. */
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
