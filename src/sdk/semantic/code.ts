/**
 * Codes (semantic kind `code`): identifiers without spaces in several forms (`U8K`, `00M`,
 * `N12345`), kept apart (one class set per position would mix them: `I4D775`). A value's pattern
 * replaces capitals, small letters and digits by their class (`N12345` -> `A99999`); released:
 * patterns of >= k rows (at most {@link MAX_PATTERNS}), per position the one character all share,
 * else the characters of its class the column writes ({@link positionCharacters}: a hex colour's
 * `a-f`, a shift's `A` or `P`, a day's `0`-`2`), else the class. Used only when they hold half the
 * rows and are of two or more forms; forms that differ only in how long a run is count as one
 * when every shorter one is the start of the longest (`id-7`, `id-12`), which the plain
 * per-position shape writes aligned (`7G-PM-1018-05` beside `37F-PM-1014-03` is not: one run
 * longer at the start moves every later position). {@link CodeWriter}: row i draws a pattern by
 * rows, then candidates i*T + t of its keyed permutation, the first the Bloom filter does not
 * flag: distinct until a pattern's space runs out.
 */
import { IdGenerator } from "../generate/id-generator";
import { deriveSeed } from "../generate/sfc32";
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
 * the position's own characters held by >= k rows (`position`: rows per character) when they
 * number at most a tenth of those rows ({@link MIN_SET_ROWS}), else the column's characters of
 * that class (`column`) under the same test, else the whole class (`A-Z`, `a-z`, `0-9`). A set
 * equal to a range is written as the range (`a-f`), any other as its characters in code-point
 * order (`AP`, `012`).
 */
export function positionCharacters(cls: string, position: ReadonlyMap<string, number>, column: ReadonlyMap<string, number>, k: number): string {
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
  const set = setOf(position) ?? setOf(column);
  return set === undefined ? RANGE[cls] : (SET_RANGES[set] ?? set);
}

/**
 * The released patterns of a code column (file header), most rows first, or undefined when they
 * are of one form (unless `oneForm`) or hold less than half of the rows.
 */
export function buildCodePatterns(values: readonly string[], counts: readonly number[], k: number, oneForm = false): CodePattern[] | undefined {
  const groups = new Map<string, { rows: number; members: number[] }>();
  // Rows per character of each class over the whole column.
  const column = new Map<string, Map<string, number>>(Object.keys(RANGE).map((c) => [c, new Map()]));
  let total = 0;
  values.forEach((v, i) => {
    total += counts[i];
    const chars = Array.from(v);
    if (chars.length === 0 || chars.length > MAX_CODE_LENGTH) return;
    const classes = chars.map(classOf);
    chars.forEach((c, j) => {
      const at = column.get(classes[j]);
      if (at) at.set(c, (at.get(c) ?? 0) + counts[i]);
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
  const aligned = kept.every(([key]) => (longest + "\u0000").startsWith(key + "\u0000"));
  if ((forms.size < 2 && aligned && !oneForm) || kept.length === 0 || held < 0.5 * total) return undefined;
  return kept.map(([key, g]) => {
    const classes = key.split("\u0000");
    const members = g.members.map((i) => Array.from(values[i]));
    const positions = classes.map((cls, j) => {
      const at = new Map<string, number>();
      members.forEach((chars, m) => at.set(chars[j], (at.get(chars[j]) ?? 0) + counts[g.members[m]]));
      if (at.size === 1) return [...at.keys()][0];
      return cls in RANGE ? positionCharacters(cls, at, column.get(cls)!, k) : cls;
    });
    return { positions, rows: g.rows };
  });
}

/** Writes fresh codes from released patterns (method in the file header). */
export class CodeWriter {
  private readonly gens: IdGenerator[];
  private readonly cum: number[] = [];

  /** Same key, same values; `bloom`: the real values. @throws RangeError on bad patterns. */
  constructor(
    patterns: readonly CodePattern[],
    private readonly key: number,
    private readonly bloom?: Bloom,
  ) {
    if (!Array.isArray(patterns) || patterns.length === 0) throw new RangeError("code shape: no patterns");
    let acc = 0;
    this.gens = patterns.map((p, j) => {
      if (!Array.isArray(p?.positions) || p.positions.length === 0) throw new RangeError(`code shape: pattern ${j} has no positions`);
      this.cum.push((acc += Math.max(0, p.rows) || 0));
      return new IdGenerator({ kind: "text", prefix: "", lengths: { [String(p.positions.length)]: 1 }, positions: p.positions }, deriveSeed(key, 0xc0de, j));
    });
    if (acc <= 0) this.cum.forEach((_, j) => (this.cum[j] = j + 1));
  }

  /** The code of row i (0 <= i, a safe integer). */
  value(i: number): string {
    const u = (deriveSeed(this.key, 0x9a77, i) / 4294967296) * this.cum[this.cum.length - 1];
    let p = 0;
    while (p < this.cum.length - 1 && this.cum[p] <= u) p++;
    const g = this.gens[p];
    let first = "";
    for (let t = 0; t < TRIES; t++) {
      const v = g.value(i * TRIES + t);
      if (t === 0) first = v;
      if (!this.bloom?.has(v)) return v;
    }
    return first;
  }
}
