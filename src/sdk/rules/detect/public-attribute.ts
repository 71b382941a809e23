/**
 * Public attributes (issue 40): a column that holds a public reference attribute of a public key
 * (`../../semantic/attributes`: a state's postal code, FIPS number or capital; a country's ISO
 * 3166 codes) in >= 95% of the rows where both are present. Unlike a catalog it needs no repeated
 * keys: a table of one row per state (state, capital) has one, since the attribute's values come
 * from public reference data, not from the rows.
 */
import type { CatalogRule, PublicAttribute, PublicAttributeRule, PublicVocabulary } from "../../../contract";
import { ATTRIBUTES_OF, attributeOf, isNumericAttribute, keyOf, sameAttribute } from "../../semantic/attributes";
import type { Col } from "./view";

/** Share of the rows with both cells that must hold the key's attribute. */
export const ATTRIBUTE_SHARE = 0.95;
/** Distinct keys whose attribute the column holds, at least (two could be chance). */
export const ATTRIBUTE_MIN_KEYS = 3;

/** A key column's vocabulary when public attributes are known for it. */
export function keyVocabulary(c: Col): PublicVocabulary | undefined {
  const v = c.codec.kind === "categorical" && c.codec.stats.type === "categorical" ? c.codec.stats.vocabulary : undefined;
  return v !== undefined && ATTRIBUTES_OF[v] !== undefined ? v : undefined;
}

/** Per value id of a key column, its canonical key ({@link keyOf}) or undefined. */
export function keysOf(c: Col, vocabulary: PublicVocabulary): (string | undefined)[] {
  return c.scan.values.map((v) => keyOf(vocabulary, v));
}

/** How well `column` holds attribute `a` of `keys`: rows with both cells, rows agreeing, keys agreeing, widest zero-padded text. */
export function attributeAgreement(
  key: Col,
  keys: readonly (string | undefined)[],
  column: Col,
  a: PublicAttribute,
  n: number,
): { rows: number; kept: number; keys: number; width?: number; firstBreak?: number } {
  const want = keys.map((k) => (k === undefined ? undefined : attributeOf(a, k)));
  // Each (key value, cell value) pair is judged once.
  const verdict = new Map<number, boolean>();
  const seenKeys = new Set<string>();
  let [rows, kept] = [0, 0];
  let width: number | undefined;
  let firstBreak: number | undefined;
  for (let r = 0; r < n; r++) {
    const kid = key.scan.ids[r];
    const cid = column.scan.ids[r];
    const w = want[kid];
    if (w === undefined || cid === column.blank) continue;
    rows++;
    const pair = kid * column.nv + cid;
    let ok = verdict.get(pair);
    if (ok === undefined) {
      ok = sameAttribute(a, column.scan.values[cid], w, keys[kid]!);
      verdict.set(pair, ok);
      const text = column.scan.values[cid].trim();
      if (ok && isNumericAttribute(a) && text.length > 1 && text.startsWith("0")) width = Math.max(width ?? 0, text.length);
    }
    if (ok) {
      kept++;
      seenKeys.add(keys[kid]!);
    } else if (firstBreak === undefined) firstBreak = r;
  }
  return { rows, kept, keys: seenKeys.size, ...(width !== undefined ? { width } : {}), ...(firstBreak !== undefined ? { firstBreak } : {}) };
}

/**
 * The public-attribute rules of a table: per key column (table order) and other column (any kind,
 * identifiers included: a FIPS id column), the attribute the column holds best, when that holds in
 * >= {@link ATTRIBUTE_SHARE} of the rows with both cells and for >= {@link ATTRIBUTE_MIN_KEYS}
 * keys. A column is the attribute of one key at most, and an attribute is no key of its own (state
 * -> code, not also code -> state); a pair a catalog already holds is left to it.
 * Cost: O(n) per (key, column, attribute), keys and attributes judged once per distinct pair.
 */
export function detectPublicAttributes(cols: readonly Col[], n: number, catalogs: readonly CatalogRule[]): PublicAttributeRule[] {
  const out: PublicAttributeRule[] = [];
  const keyCols = cols.map((c) => ({ c, vocabulary: keyVocabulary(c) })).filter((x): x is { c: Col; vocabulary: PublicVocabulary } => x.vocabulary !== undefined);
  if (keyCols.length === 0) return out;
  // Keys in table order; a column that is already an earlier key's attribute is no key itself.
  const attributes = new Set<Col>();
  for (const { c: key, vocabulary } of keyCols) {
    if (attributes.has(key)) continue;
    const keys = keysOf(key, vocabulary);
    for (const column of cols) {
      if (column === key || column.codec.fromDomain || attributes.has(column)) continue;
      if (catalogs.some((r) => r.key === key.name && r.columns.includes(column.name))) continue;
      let best: { a: PublicAttribute; share: number; width?: number } | undefined;
      for (const a of ATTRIBUTES_OF[vocabulary]!) {
        const got = attributeAgreement(key, keys, column, a, n);
        if (got.rows === 0 || got.keys < ATTRIBUTE_MIN_KEYS) continue;
        const share = got.kept / got.rows;
        if (share >= ATTRIBUTE_SHARE && (!best || share > best.share)) best = { a, share, ...(got.width !== undefined ? { width: got.width } : {}) };
      }
      if (!best) continue;
      out.push({ type: "public_attribute", columns: [key.name, column.name], attribute: best.a, share: best.share, ...(best.width !== undefined ? { width: best.width } : {}) });
      attributes.add(column);
    }
  }
  return out;
}
