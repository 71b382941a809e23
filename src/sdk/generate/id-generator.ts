/**
 * Fresh values of an identifier shape ({@link IdGenerator}), written when decoding synthetic rows;
 * the shapes themselves, their inference and matching: `../metadata/identifier`.
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
import { deriveSeed } from "./sfc32";
import { makePerm, permBig, SMALL_DOMAIN, TWO32, type Perm } from "./permutation";
import { checkShape, compileText, type IdShape } from "../metadata/identifier";

/**
 * Fresh identifiers of a column by row index: an {@link IdGenerator}, or for a text shape with a
 * semantic kind the semantic kind's generator (`../semantic`, chosen by the decoder).
 */
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
  private readonly digits = new Int32Array(0);

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
