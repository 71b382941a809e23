/**
 * Codes (semantic kind `code`): identifiers without spaces whose values come in several forms,
 * such as FAA location codes beside aircraft registrations (`U8K`, `00M`, `N12345`). One set of
 * character classes per position for the whole column would mix the forms (`I4D775`); here each
 * form is kept apart.
 *
 * A value's pattern is its characters with ASCII capitals, small letters and digits replaced by
 * their class (`U8K` -> `A9A`, `N12345` -> `A99999`, `ORD-12` -> `AAA-99`). Released: the patterns
 * held by >= k rows (k = the rare threshold; at most {@link MAX_PATTERNS}), each with its rows and
 * per position either the one character all its rows have there (`N`, `-`) or the class (`A-Z`,
 * `a-z`, `0-9`), in the class syntax of `TextIdShape.positions` (`../metadata/identifier`). A
 * column is written this way only when the released patterns hold at least half of the rows and
 * are of at least two forms (patterns apart from the lengths of their runs of one class: `A9A`
 * and `A9` differ, `aa-9` and `aa-99` do not); otherwise the plain per-position shape serves as well.
 *
 * Writing ({@link CodeWriter}): row i draws a pattern by its rows (a hash of the key and i), then
 * takes candidates i*T + t (t < T = 4) of that pattern's keyed permutation (the identifier
 * generator of `../generate/id-generator`), the first the Bloom filter of real values does not
 * flag; distinct rows use distinct candidates, so values are distinct within a sample until a
 * pattern's space is used up.
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

/**
 * The released patterns of a code column (method in the file header).
 * @param values distinct non-blank values; @param counts rows per value; @param k the rare threshold.
 * @returns the patterns (most rows first), or undefined when they are of one form or hold less
 *   than half of the rows.
 */
export function buildCodePatterns(values: readonly string[], counts: readonly number[], k: number): CodePattern[] | undefined {
  const groups = new Map<string, { rows: number; members: number[] }>();
  let total = 0;
  values.forEach((v, i) => {
    total += counts[i];
    const chars = Array.from(v);
    if (chars.length === 0 || chars.length > MAX_CODE_LENGTH) return;
    const key = chars.map(classOf).join("\u0000");
    const g = groups.get(key) ?? { rows: 0, members: [] };
    g.rows += counts[i];
    g.members.push(i);
    groups.set(key, g);
  });
  const kept = [...groups].filter(([, g]) => g.rows >= k).sort((a, b) => b[1].rows - a[1].rows || (a[0] < b[0] ? -1 : 1)).slice(0, MAX_PATTERNS);
  const held = kept.reduce((s, [, g]) => s + g.rows, 0);
  // Forms that differ only in how many characters a run of one class has (`id-7`, `id-12`) are
  // one form, which the plain per-position shape writes as well.
  const forms = new Set(kept.map(([key]) => key.split("\u0000").filter((c, j, a) => j === 0 || c !== a[j - 1] || !(c in RANGE)).join("\u0000")));
  if (forms.size < 2 || held < 0.5 * total) return undefined;
  return kept.map(([key, g]) => {
    const classes = key.split("\u0000");
    const positions = classes.map((cls, j) => {
      const at = new Set(g.members.map((i) => Array.from(values[i])[j]));
      return at.size === 1 ? [...at][0] : (RANGE[cls] ?? cls);
    });
    return { positions, rows: g.rows };
  });
}

/** Writes fresh codes from released patterns (method in the file header). */
export class CodeWriter {
  private readonly gens: IdGenerator[];
  private readonly cum: number[] = [];

  /**
   * @param patterns released patterns (non-empty; positions in the class syntax of `TextIdShape`).
   * @param key the generator's key: the same key, the same values.
   * @param bloom the real values' filter, when the shape has one.
   * @throws RangeError on no patterns or a malformed one.
   */
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
