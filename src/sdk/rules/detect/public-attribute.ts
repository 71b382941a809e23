/**
 * Public attributes (issue 40): a column that holds a public reference attribute of a public key
 * (`../../semantic/attributes`: a state's postal code, FIPS number or capital; a country's ISO
 * 3166 codes; a county's state and FIPS codes) in >= 95% of the rows where both are present. Unlike a catalog it needs no repeated
 * keys: a table of one row per state (state, capital) has one, since the attribute's values come
 * from public reference data, not from the rows.
 */
import type { CatalogRule, EmbeddedCodeRule, PublicAttribute, PublicAttributeRule, PublicVocabulary } from "../../../contract";
import { ATTRIBUTES_OF, attributeOf, countyKeyOf, isNumericAttribute, keyOf, sameAttribute } from "../../semantic/attributes";
import type { Col } from "./view";

/** Share of the rows with both cells that must hold the key's attribute. */
export const ATTRIBUTE_SHARE = 0.95;
/**
 * Share for a country's capital: capitals are renamed and spelled many ways (`Nur-Sultan` and
 * `Astana`, `Ulaanbaatar` and `Ulan Bator`), and a column of names agrees with them by chance in
 * almost no row.
 */
export const CAPITAL_SHARE = 0.9;
/** Distinct keys whose attribute the column holds, at least (two could be chance). */
export const ATTRIBUTE_MIN_KEYS = 3;

/** A key column's vocabulary when public attributes are known for it. */
export function keyVocabulary(c: Col): PublicVocabulary | undefined {
  const v = c.codec.kind === "categorical" && c.codec.stats.type === "categorical" ? c.codec.stats.vocabulary : undefined;
  return v !== undefined && ATTRIBUTES_OF[v] !== undefined ? v : undefined;
}

/**
 * A key of public attributes: one column, or a US state column and a `us_county` column; per row
 * the id of its key cells (`ids`), per id its canonical key ({@link keyOf}, {@link countyKeyOf}).
 */
export interface AttributeKey {
  columns: Col[];
  vocabulary: PublicVocabulary;
  ids: ArrayLike<number>;
  keys: (string | undefined)[];
}

/** The key of one column: its value ids and their canonical keys. */
function columnKey(c: Col, vocabulary: PublicVocabulary): AttributeKey {
  return { columns: [c], vocabulary, ids: c.scan.ids, keys: c.scan.values.map((v) => keyOf(vocabulary, v)) };
}

/** The key of a (state, county) pair of columns: ids of the distinct pairs in the rows. */
function stateCountyKey(state: Col, county: Col, n: number): AttributeKey {
  const ids = new Int32Array(n);
  const idOf = new Map<number, number>();
  const keys: (string | undefined)[] = [];
  for (let r = 0; r < n; r++) {
    const [s, c] = [state.scan.ids[r], county.scan.ids[r]];
    const pair = s * county.nv + c;
    let id = idOf.get(pair);
    if (id === undefined) {
      idOf.set(pair, (id = keys.length));
      keys.push(countyKeyOf(state.scan.values[s], county.scan.values[c]));
    }
    ids[r] = id;
  }
  return { columns: [state, county], vocabulary: "us_county", ids, keys };
}

/** How well `column` holds attribute `a` of `key`: rows with both cells, rows agreeing, keys agreeing, widest zero-padded text. */
export function attributeAgreement(
  key: AttributeKey,
  column: Col,
  a: PublicAttribute,
  n: number,
): { rows: number; kept: number; keys: number; width?: number; firstBreak?: number } {
  const keys = key.keys;
  const want = keys.map((k) => (k === undefined ? undefined : attributeOf(a, k)));
  // Each (key value, cell value) pair is judged once.
  const verdict = new Map<number, boolean>();
  const seenKeys = new Set<string>();
  let [rows, kept] = [0, 0];
  let width: number | undefined;
  let firstBreak: number | undefined;
  for (let r = 0; r < n; r++) {
    const kid = key.ids[r];
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

/** Whether a column holds US states (names or postal codes). */
function isStateColumn(c: Col): boolean {
  const v = keyVocabulary(c);
  return v === "us_state" || v === "us_state_code";
}

/**
 * The public-attribute rules of a table: per key (columns in table order, then each `us_county`
 * column with the first state column) and other column (any kind, identifiers included: a FIPS id
 * column), the attribute the column holds best, when that holds in >= {@link ATTRIBUTE_SHARE} ({@link CAPITAL_SHARE} for a capital) of
 * the rows with both cells and for >= {@link ATTRIBUTE_MIN_KEYS} keys. A column is the attribute of
 * one key at most, and an attribute is no key of its own (state -> code, not also code -> state);
 * a pair a catalog already holds is left to it.
 * Cost: O(n) per (key, column, attribute), keys and attributes judged once per distinct pair.
 */
export function detectPublicAttributes(cols: readonly Col[], n: number, catalogs: readonly CatalogRule[]): PublicAttributeRule[] {
  const out: PublicAttributeRule[] = [];
  const state = cols.find(isStateColumn);
  const keyCols = cols.filter((c) => keyVocabulary(c) !== undefined && keyVocabulary(c) !== "us_county");
  const countyCols = state ? cols.filter((c) => keyVocabulary(c) === "us_county") : [];
  if (keyCols.length + countyCols.length === 0) return out;
  // Keys in table order; a column that is already an earlier key's attribute is no key itself.
  const attributes = new Set<Col>();
  const keys = [...keyCols.map((c) => () => columnKey(c, keyVocabulary(c)!)), ...countyCols.map((c) => () => stateCountyKey(state!, c, n))];
  for (const keyOfCols of keys) {
    const key = keyOfCols();
    if (key.columns.some((c) => attributes.has(c))) continue;
    const names = key.columns.map((c) => c.name);
    for (const column of cols) {
      if (key.columns.includes(column) || column.codec.fromDomain || attributes.has(column)) continue;
      if (catalogs.some((r) => r.key === names[names.length - 1] && r.columns.includes(column.name))) continue;
      let best: { a: PublicAttribute; share: number; width?: number } | undefined;
      for (const a of ATTRIBUTES_OF[key.vocabulary]!) {
        const got = attributeAgreement(key, column, a, n);
        if (got.rows === 0 || got.keys < ATTRIBUTE_MIN_KEYS) continue;
        const share = got.kept / got.rows;
        if (share >= (a === "country_capital" ? CAPITAL_SHARE : ATTRIBUTE_SHARE) && (!best || share > best.share)) best = { a, share, ...(got.width !== undefined ? { width: got.width } : {}) };
      }
      if (!best) continue;
      out.push({ type: "public_attribute", columns: [...names, column.name], attribute: best.a, share: best.share, ...(best.width !== undefined ? { width: best.width } : {}) });
      attributes.add(column);
    }
  }
  return out;
}

/** Vocabularies of public codes an identifier may hold. */
const CODE_VOCABULARIES: readonly PublicVocabulary[] = ["us_state_code", "country_code"];
/** Most offsets tried in an identifier. */
const MAX_OFFSET = 16;

/**
 * Embedded codes: an identifier or text column (no spaces) holding, at one fixed character offset,
 * the row's value of a public-code column (vocabulary `us_state_code` or `country_code`: FEC
 * candidate ids `H8CA05035` hold the candidate's state at offset 2) in >= {@link ATTRIBUTE_SHARE}
 * of the rows with both cells, for >= {@link ATTRIBUTE_MIN_KEYS} codes; the first such offset.
 * Cost: O(n · offsets) per (code, identifier) pair.
 */
export function detectEmbeddedCodes(cols: readonly Col[], n: number): EmbeddedCodeRule[] {
  const out: EmbeddedCodeRule[] = [];
  const codes = cols.filter((c) => c.codec.stats.type === "categorical" && CODE_VOCABULARIES.includes(c.codec.stats.vocabulary!));
  for (const code of codes) {
    for (const id of cols) {
      if (id === code || (id.codec.kind !== "id" && id.codec.kind !== "categorical") || id.codec.fromDomain) continue;
      if (out.some((r) => r.columns[1] === id.name)) continue;
      const rows: number[] = new Array(MAX_OFFSET).fill(0);
      const kept: number[] = new Array(MAX_OFFSET).fill(0);
      const seen = Array.from({ length: MAX_OFFSET }, () => new Set<number>());
      for (let r = 0; r < n; r++) {
        const [k, v] = [code.scan.values[code.scan.ids[r]], id.scan.values[id.scan.ids[r]]];
        if (k === "" || v === "" || /\s/.test(v)) continue;
        for (let off = 0; off < MAX_OFFSET && off + k.length <= v.length; off++) {
          rows[off]++;
          if (v.startsWith(k, off)) {
            kept[off]++;
            seen[off].add(code.scan.ids[r]);
          }
        }
      }
      const off = rows.findIndex((m, o) => m > 0 && kept[o] >= ATTRIBUTE_SHARE * m && kept[o] >= ATTRIBUTE_SHARE * (n - code.scan.missing) && seen[o].size >= ATTRIBUTE_MIN_KEYS);
      if (off >= 0) out.push({ type: "embedded_code", columns: [code.name, id.name], offset: off, share: kept[off] / rows[off] });
    }
  }
  return out;
}
