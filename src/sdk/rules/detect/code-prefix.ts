/**
 * Code prefixes (issue 40): a code column whose first characters name the row's category (a
 * college major's code `2419` starts with `24`, the engineering majors'; NAICS, SIC, ICD and
 * county FIPS codes are built the same way). The rule releases the (prefix, category) pairs of
 * the real rows seen in >= k rows; a synthetic row's code starts with a prefix its category holds.
 */
import type { CodePrefixRule, Rule } from "../../../contract";
import { Rng } from "../../generate/sfc32";
import type { Col } from "./view";

/** Longest prefix tried, in characters. */
const MAX_PREFIX = 4;
/** Rows on repeated prefixes whose category is their prefix's commonest, at least. */
const PREFIX_SHARE = 0.9;
/** The same share with the category shuffled (seeded), at most: a near-constant category proves nothing. */
const SHUFFLED_SHARE = 0.6;
/** Rows with both cells, at least. */
const MIN_ROWS = 20;
/** Distinct codes, at least. */
const MIN_CODES = 10;
/** Most values of a category column. */
const MAX_CATEGORIES = 200;

/**
 * The code-prefix rules of a table: per code column (an identifier or categorical column whose
 * non-blank values have no spaces and are longer than the prefix, none written by another rule
 * of `rules`: public attributes, embedded codes, templates) and category column (categorical, 2-{@link MAX_CATEGORIES} values), the shortest
 * prefix length L <= {@link MAX_PREFIX} such that, over the rows with both cells, the code
 * decides the category (its commonest category in >= {@link PREFIX_SHARE} of the rows), and over
 * its >= 10 distinct codes (each with its commonest category) prefixes shared by >= 2 codes hold
 * >= 50% of them, there are more codes than prefixes, and on shared prefixes the prefix's
 * commonest category holds >= {@link PREFIX_SHARE} of the codes but <= {@link SHUFFLED_SHARE}
 * with the categories shuffled (seeded). One rule per code column (the category
 * with the highest share). Released: (prefix, category) pairs of >= k rows.
 * Cost: O(n · L) per (code, category) pair of the first 60 columns.
 */
export function detectCodePrefixes(cols: readonly Col[], n: number, k: number, rules: readonly Rule[]): CodePrefixRule[] {
  const written = new Set(rules.flatMap((r) => (r.type === "template" ? [r.columns[0]] : r.type === "public_attribute" || r.type === "embedded_code" ? [r.columns[r.columns.length - 1]] : [])));
  const first = cols.slice(0, 60);
  const categories = first.filter((c) => c.codec.kind === "categorical" && !c.codec.fromDomain && c.nonBlank >= 2 && c.nonBlank <= MAX_CATEGORIES);
  const out: CodePrefixRule[] = [];
  for (const code of first) {
    if ((code.codec.kind !== "id" && code.codec.kind !== "categorical") || code.codec.fromDomain || written.has(code.name)) continue;
    const values = code.scan.values;
    let shortest = Infinity;
    let spaced = false;
    for (const v of values) if (v !== "") (shortest = Math.min(shortest, v.length), (spaced ||= /\s/.test(v)));
    if (spaced || !Number.isFinite(shortest) || shortest < 2) continue;
    let best: { rule: CodePrefixRule; share: number } | undefined;
    for (const cat of categories) {
      if (cat === code) continue;
      for (let L = 1; L <= MAX_PREFIX && L < shortest; L++) {
        const got = prefixRule(code, cat, L, n, k);
        if (got === undefined) continue;
        if (!best || got.share > best.share) best = got;
        break;
      }
    }
    if (best) out.push(best.rule);
  }
  return out;
}

/**
 * The rule of `code`'s L-character prefix and `cat`, with its share; undefined when it fails the
 * criteria. Shares are over distinct codes (each with its commonest category), so a code repeated
 * over many rows (a country per year) proves nothing about its prefix.
 */
function prefixRule(code: Col, cat: Col, L: number, n: number, k: number): { rule: CodePrefixRule; share: number } | undefined {
  // Per code value id: its prefix id and its rows per category.
  const prefixOfValue = new Int32Array(code.nv).fill(-1);
  const prefixes: string[] = [];
  const at = new Map<string, number>();
  code.scan.values.forEach((v, id) => {
    if (v === "") return;
    const p = v.slice(0, L);
    let i = at.get(p);
    if (i === undefined) (at.set(p, (i = prefixes.length)), prefixes.push(p));
    prefixOfValue[id] = i;
  });
  if (prefixes.length < 2) return undefined;
  const byCode = new Map<number, number>();
  const pairs = new Map<number, number>();
  let m = 0;
  for (let r = 0; r < n; r++) {
    const v = code.scan.ids[r];
    const c = cat.scan.ids[r];
    if (prefixOfValue[v] < 0 || c === cat.blank) continue;
    m++;
    byCode.set(v * cat.nv + c, (byCode.get(v * cat.nv + c) ?? 0) + 1);
    const pair = prefixOfValue[v] * cat.nv + c;
    pairs.set(pair, (pairs.get(pair) ?? 0) + 1);
  }
  if (m < MIN_ROWS) return undefined;
  // Each code's commonest category; the code itself decides its category in most rows.
  const top = new Map<number, [number, number]>();
  for (const [key, rows] of byCode) {
    const v = Math.floor(key / cat.nv);
    const t = top.get(v);
    if (!t || rows > t[1]) top.set(v, [key % cat.nv, rows]);
  }
  let onTop = 0;
  for (const [, rows] of top.values()) onTop += rows;
  if (top.size < MIN_CODES || onTop < PREFIX_SHARE * m) return undefined;
  const codeP: number[] = [];
  const codeC: number[] = [];
  for (const [v, [c]] of top) (codeP.push(prefixOfValue[v]), codeC.push(c));
  const codesOfPrefix: number[] = new Array(prefixes.length).fill(0);
  for (const p of codeP) codesOfPrefix[p]++;
  const shared = codeP.filter((p) => codesOfPrefix[p] >= 2).length;
  const usedPrefixes = codesOfPrefix.filter((c) => c > 0).length;
  if (shared < 0.5 * codeP.length || codeP.length <= usedPrefixes) return undefined;
  const share = majorityShare(codeP, codeC, codesOfPrefix, cat.nv);
  if (share < PREFIX_SHARE) return undefined;
  const shuffled = codeC.slice();
  const rng = new Rng(23);
  for (let i = shuffled.length - 1; i > 0; i--) {
    const j = Math.floor(rng.next() * (i + 1));
    [shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]];
  }
  if (majorityShare(codeP, shuffled, codesOfPrefix, cat.nv) > SHUFFLED_SHARE) return undefined;
  // Released pairs: (prefix, category) of >= k rows; the rule applies to the rows of their categories.
  const released = [...pairs].filter(([, c]) => c >= k).sort((a, b) => a[0] - b[0]);
  const categories = new Set(released.map(([key]) => key % cat.nv));
  if (categories.size < 2) return undefined;
  let applicable = 0;
  for (const [key, c] of pairs) if (categories.has(key % cat.nv)) applicable += c;
  const kept = released.reduce((a, [, c]) => a + c, 0);
  return {
    rule: {
      type: "code_prefix",
      columns: [cat.name, code.name],
      length: L,
      prefixes: released.map(([key]) => prefixes[Math.floor(key / cat.nv)]),
      categories: released.map(([key]) => cat.scan.values[key % cat.nv]),
      counts: released.map(([, c]) => c),
      share: kept / applicable,
    },
    share,
  };
}

/** Share of the codes on shared prefixes (`codesOfPrefix` >= 2) whose category is their prefix's commonest. */
function majorityShare(codeP: readonly number[], codeC: readonly number[], codesOfPrefix: readonly number[], nv: number): number {
  const counts = new Map<number, number>();
  let codes = 0;
  for (let i = 0; i < codeP.length; i++) {
    if (codesOfPrefix[codeP[i]] < 2) continue;
    codes++;
    const key = codeP[i] * nv + codeC[i];
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const top = new Map<number, number>();
  for (const [key, c] of counts) {
    const p = Math.floor(key / nv);
    top.set(p, Math.max(top.get(p) ?? 0, c));
  }
  let kept = 0;
  for (const c of top.values()) kept += c;
  return codes === 0 ? 0 : kept / codes;
}
