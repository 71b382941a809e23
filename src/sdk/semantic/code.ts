/**
 * Codes (semantic kind `code`): identifiers without spaces in several forms (`U8K`, `00M`,
 * `N12345`), kept apart (one class set per position would mix them: `I4D775`). A value's pattern
 * replaces capitals, small letters and digits by their class (`N12345` -> `A99999`); released:
 * patterns of >= k rows (at most {@link MAX_PATTERNS}), per position the one character all share,
 * else the characters of its class the pattern, else every pattern of its length, else the column
 * writes there ({@link positionCharacters}: a hex colour's `a-f`, a shift's `A` or `P`, a day's
 * `0`-`2`), else the class. Used only when they hold half the
 * rows and are of two or more forms; forms that differ only in how long a run is count as one
 * when every shorter one is the start of the longest (`id-7`, `id-12`), which the plain
 * per-position shape writes aligned (`7G-PM-1018-05` beside `37F-PM-1014-03` is not: one run
 * longer at the start moves every later position). {@link CodeWriter}: each block of rows takes
 * the patterns in their real rows' proportions, each pattern's rows dense indices into its own
 * space, codes the Bloom filter flags skipped: distinct and not real until the spaces run out.
 */
import { IdGenerator } from "../generate/id-generator";
import { makePerm, type Perm } from "../generate/permutation";
import { deriveSeed } from "../generate/sfc32";
import { compileText, type TextIdShape } from "../metadata/identifier";
import type { Bloom } from "./bloom";
import type { CodePattern } from "./types";

/** Most patterns released (by rows). */
export const MAX_PATTERNS = 256;
/** Longest code written in patterns (the contract's bound on positions). */
const MAX_CODE_LENGTH = 1024;
/** Candidates per row. */
const TRIES = 4;

function classOf(c: string): string {
  if (c >= "A" && c <= "Z") return "A";
  if (c >= "a" && c <= "z") return "a";
  if (c >= "0" && c <= "9") return "9";
  return c;
}
const RANGE: Record<string, string> = { A: "A-Z", a: "a-z", "9": "0-9" };
/** The characters of each class, in code-point order. */
const CLASS_CHARS: Record<string, string> = { A: "ABCDEFGHIJKLMNOPQRSTUVWXYZ", a: "abcdefghijklmnopqrstuvwxyz", "9": "0123456789" };
/** Range tokens a character set is written as when it is exactly one (`0-9`, `a-f`). */
const SET_RANGES: Record<string, string> = { ABCDEF: "A-F", abcdef: "a-f", ...Object.fromEntries(Object.entries(CLASS_CHARS).map(([c, chars]) => [chars, RANGE[c]])) };

/**
 * Rows per distinct character a set of characters needs to count as the characters a position
 * writes rather than those it happened to hold: a character the column writes as often as the
 * others is then missing by chance with a probability of about e^-10.
 */
export const MIN_SET_ROWS = 10;

/**
 * The characters a position of class `cls` writes, as a position string ({@link CodePattern}):
 * from the first of `levels` (rows per character: the pattern's position, the same position of
 * every pattern of its length, the whole column) whose characters of that class held by >= k
 * rows number at most a tenth of those rows ({@link MIN_SET_ROWS}), those characters; else the
 * whole class (`A-Z`, `a-z`, `0-9`). A set equal to a range is written as the range (`a-f`), any
 * other as its characters in code-point order (`AP`, `012`).
 */
export function positionCharacters(cls: string, levels: readonly ReadonlyMap<string, number>[], k: number): string {
  const setOf = (seen: ReadonlyMap<string, number>): string | undefined => {
    let rows = 0;
    let size = 0;
    let set = "";
    for (const c of CLASS_CHARS[cls]) {
      const r = seen.get(c) ?? 0;
      if (r < Math.max(1, k)) continue;
      rows += r;
      size++;
      set += c;
    }
    return size > 0 && rows >= MIN_SET_ROWS * size ? set : undefined;
  };
  let set: string | undefined;
  for (const seen of levels) if ((set = setOf(seen)) !== undefined) break;
  return set === undefined ? RANGE[cls] : (SET_RANGES[set] ?? set);
}

/**
 * The released patterns of a code column (file header), most rows first, or undefined when they
 * are of one form (unless `oneForm`) or hold less than half of the rows.
 */
export function buildCodePatterns(values: readonly string[], counts: readonly number[], k: number, oneForm = false): CodePattern[] | undefined {
  const groups = new Map<string, { rows: number; members: number[] }>();
  // Rows per character over the whole column, and at each position of each length (`len:j`).
  const column = new Map<string, number>();
  const aligned = new Map<string, Map<string, number>>();
  let total = 0;
  values.forEach((v, i) => {
    total += counts[i];
    const chars = Array.from(v);
    if (chars.length === 0 || chars.length > MAX_CODE_LENGTH) return;
    const classes = chars.map(classOf);
    chars.forEach((c, j) => {
      column.set(c, (column.get(c) ?? 0) + counts[i]);
      const place = `${chars.length}:${j}`;
      const at = aligned.get(place) ?? new Map<string, number>();
      at.set(c, (at.get(c) ?? 0) + counts[i]);
      aligned.set(place, at);
    });
    const key = classes.join("\u0000");
    const g = groups.get(key) ?? { rows: 0, members: [] };
    g.rows += counts[i];
    g.members.push(i);
    groups.set(key, g);
  });
  const kept = [...groups].filter(([, g]) => g.rows >= k).sort((a, b) => b[1].rows - a[1].rows || (a[0] < b[0] ? -1 : 1)).slice(0, MAX_PATTERNS);
  const held = kept.reduce((s, [, g]) => s + g.rows, 0);
  // Forms that differ only in how many characters a run of one class has are one form when the
  // plain per-position shape keeps them aligned: each shorter one the start of the longest.
  const forms = new Set(kept.map(([key]) => key.split("\u0000").filter((c, j, a) => j === 0 || c !== a[j - 1] || !(c in RANGE)).join("\u0000")));
  const longest = kept.reduce((a, [key]) => (key.length > a.length ? key : a), "");
  const prefixes = kept.every(([key]) => (longest + "\u0000").startsWith(key + "\u0000"));
  if ((forms.size < 2 && prefixes && !oneForm) || kept.length === 0 || held < 0.5 * total) return undefined;
  return kept.map(([key, g]) => {
    const classes = key.split("\u0000");
    const members = g.members.map((i) => Array.from(values[i]));
    const positions = classes.map((cls, j) => {
      const at = new Map<string, number>();
      members.forEach((chars, m) => at.set(chars[j], (at.get(chars[j]) ?? 0) + counts[g.members[m]]));
      if (at.size === 1) return [...at.keys()][0];
      return cls in RANGE ? positionCharacters(cls, [at, aligned.get(`${classes.length}:${j}`)!, column], k) : cls;
    });
    return { positions, rows: g.rows };
  });
}

/**
 * Pattern spaces up to this many codes, together, are listed once per {@link CodeSpace} (the codes
 * the Bloom filter does not flag), so a short code's fresh values are drawn without replacement
 * among all the values that are not real ones; larger spaces read candidates.
 */
const LISTED_CODES = 1 << 16;

/** One released pattern as a {@link CodeWriter} draws it (no key: shared by every writer of a space). */
export interface CodeForm {
  /** Per position, its characters. */
  alphabets: string[][];
  /** Real rows: the form's slots in each block of rows. */
  quota: number;
  /** Codes of the space (a Number when it is a safe integer, else Infinity). */
  size: number;
  /** Listed spaces: the space indices of the codes the filter does not flag, ascending. */
  free?: Uint32Array;
  /** Other spaces: the shape of its generator (index -> code). */
  shape?: TextIdShape;
  /** Rows it can write distinct and, up to the filter, not real. */
  capacity: number;
}

/**
 * What a {@link CodeWriter} draws from that depends on no key: the released patterns' alphabets,
 * quotas and capacities, and the listed spaces' free codes (up to {@link LISTED_CODES} codes read
 * against the filter). Built once per pattern list and filter (a semantic shape's, once per
 * model: `./semantic-generator`) and read by the writers of every sample and batch.
 */
export class CodeSpace {
  /** The patterns, in release order. */
  readonly forms: readonly CodeForm[];
  /** Cumulative quotas: pattern p holds slots [cum[p - 1], cum[p]) of a block. */
  readonly cum: readonly number[];
  /** Slots of a block: the patterns' quotas summed. */
  readonly block: number;
  /** The pattern that takes the rows others cannot write. */
  readonly spill: number;

  /** `bloom`: the real values, never written while others are left. @throws RangeError on bad patterns. */
  constructor(
    patterns: readonly CodePattern[],
    readonly bloom?: Bloom,
  ) {
    if (!Array.isArray(patterns) || patterns.length === 0) throw new RangeError("code shape: no patterns");
    const forms = patterns.map((p, j): CodeForm => {
      if (!Array.isArray(p?.positions) || p.positions.length === 0) throw new RangeError(`code shape: pattern ${j} has no positions`);
      const { alphabets } = compileText({ kind: "text", prefix: "", lengths: { [String(p.positions.length)]: 1 }, positions: p.positions });
      let size = 1;
      for (const a of alphabets) size *= a.length;
      const rows = Number(p.rows);
      return { alphabets, quota: Number.isFinite(rows) && rows > 0 ? Math.min(Math.round(rows), 2 ** 32) : 0, size: Number.isSafeInteger(size) ? size : Infinity, capacity: 0 };
    });
    if (forms.every((f) => f.quota === 0)) forms.forEach((f) => (f.quota = 1));
    // The smallest spaces are listed while they fit the budget.
    let listed = 0;
    const bySize = forms.map((f, j) => j).sort((a, b) => forms[a].size - forms[b].size || a - b);
    for (const j of bySize) {
      const f = forms[j];
      if (listed + f.size <= LISTED_CODES) {
        listed += f.size;
        f.free = this.freeCodes(f);
        f.capacity = f.free.length;
      } else {
        f.shape = { kind: "text", prefix: "", lengths: { [String(f.alphabets.length)]: 1 }, positions: patterns[j].positions };
        f.capacity = Math.floor(Math.min(f.size, Number.MAX_SAFE_INTEGER) / TRIES);
      }
    }
    this.forms = forms;
    let acc = 0;
    this.cum = forms.map((f) => (acc += f.quota));
    this.block = acc;
    this.spill = forms.reduce((best, f, j) => (f.capacity > forms[best].capacity ? j : best), 0);
  }

  /** The space indices of a listed pattern's codes the filter does not flag, ascending. */
  private freeCodes(f: CodeForm): Uint32Array {
    const out = new Uint32Array(f.size);
    let n = 0;
    for (let v = 0; v < f.size; v++) if (!this.bloom?.has(spell(f, v))) out[n++] = v;
    return out.slice(0, n);
  }
}

/** The code at index v of a pattern's space (mixed radix, last position least significant). */
function spell(f: CodeForm, v: number): string {
  const chars = new Array<string>(f.alphabets.length);
  for (let j = f.alphabets.length - 1; j >= 0; j--) {
    const a = f.alphabets[j];
    const q = Math.floor(v / a.length);
    chars[j] = a[v - q * a.length];
    v = q;
  }
  return chars.join("");
}

/**
 * Writes fresh codes from released patterns ({@link CodeSpace}). Rows fall in blocks of B = the
 * patterns' rows; a keyed permutation of each block gives every pattern as many of the block's
 * rows as it has real rows, so pattern p's row in block b at rank r takes index b * rows_p + r of
 * its own space: indices are dense and distinct within a sample, whichever batch or order the rows
 * are written in. Index x of a listed space (spaces of at most {@link LISTED_CODES} codes in all)
 * is the x-th code the Bloom filter does not flag in a keyed order; of a larger space, the first
 * of candidates x*T + t ({@link TRIES}) the filter does not flag. A pattern's rows past what it
 * can write (its free codes, or size / T) go to the pattern that can write the most, after its
 * own rows; its space wrapping is the only way a code repeats.
 */
export class CodeWriter {
  private readonly forms: readonly CodeForm[];
  /** Per pattern: listed spaces, a keyed permutation of [0, free.length). */
  private readonly freePerms: (Perm | undefined)[];
  /** Per pattern: other spaces, the space's generator (index -> code, a keyed permutation). */
  private readonly gens: (IdGenerator | undefined)[];
  private blockPerm?: { b: number; perm: Perm };

  /** Same space and key, same values. */
  constructor(
    private readonly space: CodeSpace,
    private readonly key: number,
  ) {
    this.forms = space.forms;
    this.freePerms = this.forms.map((f, j) => (f.free && f.capacity > 0 ? makePerm(BigInt(f.capacity), deriveSeed(key, 0xf4ee, j)) : undefined));
    this.gens = this.forms.map((f, j) => (f.shape ? new IdGenerator(f.shape, deriveSeed(key, 0xc0de, j)) : undefined));
  }

  /** The code of row i (0 <= i, a safe integer). */
  value(i: number): string {
    const { block, cum, spill } = this.space;
    const b = Math.floor(i / block);
    const slot = this.permOfBlock(b).apply(i - b * block);
    let p = 0;
    let lo = 0;
    let hi = cum.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (slot < cum[mid]) hi = mid;
      else lo = mid + 1;
    }
    p = lo;
    const rank = slot - (p === 0 ? 0 : cum[p - 1]);
    const x = b * this.forms[p].quota + rank;
    if (x < this.forms[p].capacity || p === spill) return this.code(p, p === spill ? this.spillIndex(b, rank, -1) : x);
    return this.code(spill, this.spillIndex(b, rank, p));
  }

  /**
   * Index in the spill pattern s of a row of block b: its own row of rank r (`from` -1) or the
   * row of rank r of pattern `from` past that pattern's capacity. Block b's rows of s are its own
   * quota, then each pattern's overflow in pattern order.
   */
  private spillIndex(b: number, r: number, from: number): number {
    const spill = this.space.spill;
    const s = this.forms[spill];
    // Rows of s in blocks before b: its quotas and the overflow of the others.
    let at = b * s.quota;
    let within = s.quota;
    this.forms.forEach((f, j) => {
      if (j === spill) return;
      at += Math.max(0, b * f.quota - f.capacity);
      const over = Math.min(f.quota, Math.max(0, (b + 1) * f.quota - Math.max(f.capacity, b * f.quota)));
      if (j < from) within += over;
    });
    if (from < 0) return at + r;
    const f = this.forms[from];
    return at + within + (b * f.quota + r - Math.max(f.capacity, b * f.quota));
  }

  /** Index x of pattern p's fresh codes (wrapping past its capacity). */
  private code(p: number, x: number): string {
    const f = this.forms[p];
    if (f.free) {
      if (f.capacity === 0) return spell(f, x % f.size);
      return spell(f, f.free[this.freePerms[p]!.small!.apply(x % f.capacity)]);
    }
    const g = this.gens[p]!;
    const base = (x % Math.max(1, f.capacity)) * TRIES;
    let first = "";
    for (let t = 0; t < TRIES; t++) {
      const v = g.value(base + t);
      if (t === 0) first = v;
      if (!this.space.bloom?.has(v)) return v;
    }
    return first;
  }

  /** The keyed permutation of block b's slots (the last block's is kept: rows come in order). */
  private permOfBlock(b: number): NonNullable<Perm["small"]> {
    if (this.blockPerm?.b !== b) this.blockPerm = { b, perm: makePerm(BigInt(this.space.block), deriveSeed(this.key, 0xb10c, b)) };
    return this.blockPerm.perm.small!;
  }
}
