/**
 * Semantic identifier columns (`docs/decisions.md` "Rows, not only marginals"): the hook
 * `./recognize` + `./bloom` + `./text` -> `id_shape.semantic` at extraction ({@link semanticShape}),
 * `./generate` at decoding.
 */
import { Bloom } from "./bloom";
import { LOCALE_COUNTRY, detectLocale, phoneLibrary, recognizeSemantic } from "./recognize";
import { buildTextModel } from "./text";
import { SEMANTIC_KINDS, type SemanticKind, type SemanticShape } from "./types";

export { SemanticGenerator } from "./semantic-generator";
export { recognizeSemantic, detectLocale } from "./recognize";
export { SEMANTIC_KINDS } from "./types";
export type { SemanticKind, SemanticLocale, SemanticShape, TextModel } from "./types";

/** A capital letter inside a word: after a lower-case letter or an apostrophe (`McDonald`, `O'Hara`). */
export const INNER_CAPITAL = /[\p{Ll}'’]\p{Lu}/u;
const PLAIN_KINDS: readonly SemanticKind[] = ["first_name", "last_name", "full_name", "city", "company"];

/** Words fit's table uses for each kind. */
export const SEMANTIC_LABELS: Record<SemanticKind, string> = {
  first_name: "person first names",
  last_name: "person last names",
  full_name: "person full names",
  email: "email addresses",
  phone: "phone numbers",
  street_address: "street addresses",
  city: "city names",
  postal_code: "postal codes",
  url: "URLs",
  company: "company names",
  uuid: "UUIDs",
  ip: "IP addresses",
  title: "titles / free text",
};

/**
 * The `semantic` part of a text identifier's shape: kind (recognised, or `kind` when the user
 * declared one), locale, a Bloom filter of the values and, for titles, the word model at k.
 * @param name header; @param values distinct non-blank values; @param counts rows per value.
 * @param k the rare threshold (words of titles need k rows).
 * @param kind a declared kind (`columns: {f: {type: "id", semantic}}`), used without checks.
 * @returns undefined when no kind is recognised, or a title column keeps no word at k.
 * @throws RangeError on an unknown declared kind.
 */
export function semanticShape(name: string, values: readonly string[], counts: readonly number[], k: number, kind?: SemanticKind): SemanticShape | undefined {
  if (kind !== undefined && !SEMANTIC_KINDS.includes(kind)) throw new RangeError(`unknown semantic kind ${JSON.stringify(kind)}; use one of ${SEMANTIC_KINDS.join(", ")}`);
  const found = kind !== undefined ? { kind, locale: detectLocale(values) } : recognizeSemantic(name, values, counts);
  if (!found) return undefined;
  const shape: SemanticShape = { kind: found.kind, locale: found.locale };
  if (found.kind !== "uuid") shape.bloom = Bloom.of(values).toStats();
  if (PLAIN_KINDS.includes(found.kind)) shape.plain = !values.some((v) => INNER_CAPITAL.test(v));
  if (found.kind === "title") {
    const text = buildTextModel(values, counts, k);
    if (!text) return undefined;
    shape.text = text;
  }
  if (found.kind === "phone") {
    const lib = phoneLibrary();
    const tally = new Map<string, number>();
    let plus = 0;
    for (const v of values) {
      if (v.trim().startsWith("+")) plus++;
      const c = lib.parsePhoneNumberFromString(v, LOCALE_COUNTRY[found.locale] as never)?.country;
      if (c) tally.set(c, (tally.get(c) ?? 0) + 1);
    }
    const top = [...tally].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0];
    shape.country = top ? top[0] : LOCALE_COUNTRY[found.locale];
    shape.international = plus >= values.length / 2;
  }
  return shape;
}
