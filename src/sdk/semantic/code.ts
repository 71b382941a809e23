/**
 * Codes (semantic kind `code`): identifiers without spaces in several forms (`U8K`, `00M`,
 * `N12345`), kept apart (one class set per position would mix them: `I4D775`). A value's pattern
 * replaces capitals, small letters and digits by their class (`N12345` -> `A99999`); released:
 * patterns of >= k rows (at most {@link MAX_PATTERNS}), per position the one character all share
 * or the class. Used only when they hold half the rows and are of two or more forms (run lengths
 * aside). {@link CodeWriter}: row i draws a pattern by rows, then candidates i*T + t of its keyed
 * permutation, the first the Bloom filter does not flag: distinct until a pattern's space runs out.
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
 * The released patterns of a code column (file header), most rows first, or undefined when they
 * are of one form (unless `oneForm`) or hold less than half of the rows.
 */
export function buildCodePatterns(values: readonly string[], counts: readonly number[], k: number, oneForm = false): CodePattern[] | undefined {
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
  if ((forms.size < 2 && !oneForm) || kept.length === 0 || held < 0.5 * total) return undefined;
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
