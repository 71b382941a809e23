/** Semantic identifier columns (docs/decisions.md "Rows, not only marginals"): the hook. */
import { Bloom } from "./bloom";
import { INNER_CAPITAL, letterCaseOf } from "./letter-case";
import { LOCALE_COUNTRY, detectLocale, phoneLibrary, recognizeSemantic } from "./recognize";
import { buildCodePatterns } from "./code";
import { buildUrlSites } from "./url";
import { buildTextModel, TextWriter } from "./text";
import { deriveSeed, Rng } from "../generate/sfc32";
import { oneSexOf } from "../rules/name-gender";
import { SEMANTIC_KINDS, type SemanticKind, type SemanticShape, type TextModel } from "./types";

export { SemanticGenerator } from "./semantic-generator";
export { recognizeSemantic, detectLocale } from "./recognize";
export { INNER_CAPITAL, letterCaseOf } from "./letter-case";
export { buildTextModel, tokenize } from "./text";
export { SEMANTIC_KINDS } from "./types";
export type { SemanticKind, SemanticLocale, SemanticShape, TextModel } from "./types";

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
  text: "text in the column's own words",
  code: "codes of the column's forms",
};

/**
 * The `semantic` part of a text identifier's shape: kind (recognised, or a declared `kind`, used
 * unchecked), locale, a Bloom filter of the values, the one sex of a name column's people (if so)
 * and, for titles, the word model at k.
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
  if (found.kind === "first_name" || found.kind === "full_name") {
    const sex = oneSexOf(values, counts);
    if (sex) shape.sex = sex;
  }
  const letterCase = letterCaseOf(values);
  if (letterCase) shape.letter_case = letterCase;
  if (found.kind === "title" || found.kind === "text") {
    const text = textModelOf(values, counts, k);
    if (!text) return undefined;
    shape.text = text.model;
  }
  if (found.kind === "code") {
    const codes = buildCodePatterns(values, counts, k);
    if (!codes) return undefined;
    shape.codes = codes;
  }
  if (found.kind === "url") {
    const sites = buildUrlSites(values, counts, k);
    if (sites.length) shape.sites = sites;
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

/** Longest run of letters read as a code on its own ({@link isCodeLike}). */
const SHORT_CODE = 3;
const SHORT_CODE_RE = new RegExp(`^\\p{L}{1,${SHORT_CODE}}$`, "u");

/**
 * A value that reads as a code rather than words: no whitespace, and a digit or no lower-case
 * letter (`U8K`, `N12345`, `58fa3f0b`, `ORD-0001`, `AL`), or at most {@link SHORT_CODE} letters
 * in any case (ISO 639 `aar`, `en`, MARC `af`): a column of such values is a code list, whose
 * rare words a text model would write as English nouns (`tribe` for a language code).
 */
export function isCodeLike(v: string): boolean {
  return !/\s/.test(v) && (/[0-9]/.test(v) || !/\p{Ll}/u.test(v) || SHORT_CODE_RE.test(v));
}


/**
 * The `semantic` part when {@link semanticShape} recognises nothing (call it first): kind `text`
 * from the column's own vocabulary (`./text`), or `code` for code-like columns (90% of values
 * {@link isCodeLike}) of several forms (or of one, with `oneForm`); undefined for other codes and models
 * that write no word.
 */
export function vocabularyShape(values: readonly string[], counts: readonly number[], k: number, oneForm = false): SemanticShape | undefined {
  if (values.length === 0) return undefined;
  let codeLike = 0;
  for (const v of values) if (isCodeLike(v)) codeLike++;
  if (codeLike >= 0.9 * values.length) {
    const codes = buildCodePatterns(values, counts, k, oneForm);
    return codes && { kind: "code", bloom: Bloom.of(values).toStats(), codes };
  }
  const text = textModelOf(values, counts, k);
  if (!text?.writes) return undefined;
  return { kind: "text", locale: detectLocale(values), bloom: Bloom.of(values).toStats(), text: text.model };
}

/** Walks drawn to judge whether a text writer writes values the column does not hold. */
const NEW_VALUE_DRAWS = 32;

/**
 * The `semantic` part of a determinant's pooled cells (`../metadata`): the column's own words
 * ({@link vocabularyShape}) when their model writes values the column does not hold in at least a
 * quarter of {@link NEW_VALUE_DRAWS} walks, else the pooled values' own (`Green Party`, each once,
 * as `Kemmer Party`, where the whole column's words would only write `Democratic Party` back),
 * else the first of the two that exists.
 */
export function pooledShape(values: readonly string[], counts: readonly number[], pooled: (v: string) => boolean, k: number): SemanticShape | undefined {
  const all = vocabularyShape(values, counts, k);
  if (all?.kind === "text" && writesNew(all.text!, new Set(values))) return all;
  const at = values.map((v, i) => i).filter((i) => pooled(values[i]));
  const own = vocabularyShape(at.map((i) => values[i]), at.map((i) => counts[i]), k);
  // Codes of one form (party codes `DFL`, `LIB`): that form, as an id column's shape writes it.
  return own ?? all ?? vocabularyShape(values, counts, k, true);
}

/** Whether at least a quarter of {@link NEW_VALUE_DRAWS} walks (fixed seeds) write values not in `known`. */
function writesNew(model: TextModel, known: ReadonlySet<string>): boolean {
  const writer = new TextWriter(model);
  let fresh = 0;
  for (let i = 0; i < NEW_VALUE_DRAWS; i++) if (!known.has(writer.write(new Rng(deriveSeed(0x6e657773, i)), i >= NEW_VALUE_DRAWS / 2))) fresh++;
  return fresh >= NEW_VALUE_DRAWS / 4;
}

/**
 * The column's token model (`./text`) when it has a released path from start to end, else the
 * same with rare words generalised to their word class (written as public words) when that has
 * one; else the first of the two that writes at all (words by counts), else the plain model that
 * writes nothing (`writes` false); undefined when no model can be built.
 */
function textModelOf(values: readonly string[], counts: readonly number[], k: number): { model: TextModel; writes: boolean } | undefined {
  const plain = buildTextModel(values, counts, k);
  const plainWriter = plain && new TextWriter(plain);
  if (plainWriter?.walks()) return { model: plain!, writes: true };
  const shaped = buildTextModel(values, counts, k, true);
  const shapedWriter = shaped && new TextWriter(shaped);
  if (shapedWriter?.walks()) return { model: shaped!, writes: true };
  if (plainWriter?.writes()) return { model: plain!, writes: true };
  if (shapedWriter?.writes()) return { model: shaped!, writes: true };
  return plain ? { model: plain, writes: false } : undefined;
}
