/**
 * Countries as tables write them (English names, ISO 3166 alpha-2 and alpha-3 codes, IOC codes)
 * and the public person names of each country, so a fresh name can be one of its row's country
 * (`../rules/name-country`).
 *
 * Sources (npm data packages, no lists of our own): i18n-iso-countries (names with their aliases,
 * ISO codes); world-countries (mledoze/countries, ODbL: IOC codes and each country's languages as
 * ISO 639-3 codes); faker's locales (@faker-js/faker: person names, and per locale its country,
 * language and script in `metadata`); transliteration (Latin spellings of names in Cyrillic,
 * Greek, Armenian, Georgian, Hangul and Chinese: `Абрамова` -> `Abramova`, `一诺` -> `Yinuo`).
 */
import type { CountryForm } from "../../contract";

export type { CountryForm };

/** Every way of writing a country, in the order detection tries them. */
export const COUNTRY_FORMS: readonly CountryForm[] = ["name", "alpha2", "alpha3", "ioc"];

let iso: typeof import("i18n-iso-countries") | undefined;
/** i18n-iso-countries with its English names registered, loaded on first use. */
export function isoCountries(): typeof import("i18n-iso-countries") {
  if (iso) return iso;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const lib = require("i18n-iso-countries") as typeof import("i18n-iso-countries");
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  lib.registerLocale(require("i18n-iso-countries/langs/en.json"));
  return (iso = lib);
}

/** A country of world-countries (mledoze/countries): the fields read here. */
export interface WorldCountry {
  cca2: string;
  name?: { common?: string; official?: string };
  /** Other names and codes: `Viet Nam`, `Korea, Democratic People's Republic of`, `KP`. */
  altSpellings?: string[];
  cioc?: string;
  languages?: Record<string, string>;
  capital?: string[];
  /** UN geoscheme region (`Asia`, `Americas`) and subregion (`Southern Asia`). */
  region?: string;
  subregion?: string;
  /** International calling code: `root` `+9` and `suffixes` `["3"]`; many suffixes (`+1`: `201` ...) share the root. */
  idd?: { root?: string; suffixes?: string[] };
  /** ISO 4217 codes of its currencies, the main one first. */
  currencies?: Record<string, unknown>;
  tld?: string[];
}
let world: { byIoc: Map<string, string>; languages: Map<string, string[]>; byCode: Map<string, WorldCountry>; byName: Map<string, string> } | undefined;
/**
 * world-countries: IOC code -> alpha-2, alpha-2 -> ISO 639-3 language codes, alpha-2 -> country,
 * and folded common, official and other names (not codes: 4 letters or more) -> alpha-2.
 */
function worldCountries(): NonNullable<typeof world> {
  if (world) return world;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const list = require("world-countries") as WorldCountry[];
  const byIoc = new Map<string, string>();
  const languages = new Map<string, string[]>();
  const byCode = new Map<string, WorldCountry>();
  const byName = new Map<string, string>();
  for (const c of list) {
    if (c.cioc) byIoc.set(c.cioc.toUpperCase(), c.cca2);
    languages.set(c.cca2, Object.keys(c.languages ?? {}));
    byCode.set(c.cca2, c);
    for (const n of [c.name?.common, c.name?.official, ...(c.altSpellings ?? [])]) {
      const key = n === undefined || n.length < 4 ? undefined : foldName(n.trim());
      if (key !== undefined && !byName.has(key)) byName.set(key, c.cca2);
    }
  }
  return (world = { byIoc, languages, byCode, byName });
}

/** A country's world-countries record by ISO 3166 alpha-2 code; undefined when it lists none. */
export function worldCountry(alpha2: string): WorldCountry | undefined {
  return worldCountries().byCode.get(alpha2);
}

/**
 * The alpha-2 code of a country's English name: i18n-iso-countries' names and aliases
 * (`Germany`, `United States of America`), else world-countries' common and official names and
 * other spellings (ISO's `Iran, Islamic Republic of`, `Viet Nam`), case and accents folded.
 */
export function countryOfName(name: string): string | undefined {
  const v = name.trim();
  if (v === "") return undefined;
  return isoCountries().getAlpha2Code(v, "en") ?? worldCountries().byName.get(foldName(v));
}

/**
 * A country cell's ISO 3166 alpha-2 code, read in `form`; undefined for a blank cell or one the
 * form does not know. Names are read by {@link countryOfName}.
 */
export function countryCodeOf(form: CountryForm, value: string): string | undefined {
  const key = `${form}\t${value}`;
  if (read.has(key)) return read.get(key);
  const cc = readCountry(form, value.trim());
  // A country column holds few distinct cells: remembered, up to a bound.
  if (read.size < MAX_READ) read.set(key, cc);
  return cc;
}

const MAX_READ = 20_000;
const read = new Map<string, string | undefined>();

function readCountry(form: CountryForm, v: string): string | undefined {
  if (v === "") return undefined;
  const lib = isoCountries();
  switch (form) {
    case "name":
      return countryOfName(v);
    case "alpha2":
      return /^[A-Za-z]{2}$/.test(v) && lib.isValid(v.toUpperCase()) ? v.toUpperCase() : undefined;
    case "alpha3":
      return /^[A-Za-z]{3}$/.test(v) ? (lib.alpha3ToAlpha2(v.toUpperCase()) ?? undefined) : undefined;
    case "ioc":
      return /^[A-Za-z]{3}$/.test(v) ? worldCountries().byIoc.get(v.toUpperCase()) : undefined;
  }
}

/** A locale's person names in Latin letters; `female`/`male` empty where the locale lists no sexes. */
export interface NamePool {
  /** The faker locale the names come from (`de_AT`, `ru`). */
  locale: string;
  /** The locale whose first names these are (`en` for `en_US`, which lists none of its own). */
  source: string;
  first: { female: string[]; male: string[]; any: string[] };
  last: { female: string[]; male: string[]; any: string[] };
  /** Case-folded, accent-free first names on one of the sex lists only, and that sex. */
  sexOf: ReadonlyMap<string, "female" | "male">;
  /** Case-folded, accent-free first and last names, for {@link plausibleFor}. */
  words: ReadonlySet<string>;
}

/** Scripts whose names are written in Latin letters by transliteration; others (abjads, kanji) are left out. */
const TRANSLITERATED = new Set(["Cyrl", "Grek", "Armn", "Geor", "Hans", "Hant", "Kore"]);
/** Scripts written syllable by syllable (Chinese, Hangul): a name's syllables are written as one word. */
const SYLLABIC = new Set(["Hans", "Hant", "Kore"]);

type Defs = Record<string, Record<string, unknown> | undefined>;
interface Locale {
  metadata?: { country?: string; language?: string; script?: string };
  person?: { first_name?: unknown; last_name?: unknown };
}
let locales: Record<string, Locale & Defs> | undefined;
function fakerLocales(): Record<string, Locale & Defs> {
  if (locales) return locales;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (locales = (require("@faker-js/faker") as { allLocales: Record<string, Locale & Defs> }).allLocales);
}

/** Folds a name for comparison: lower case, accents dropped. */
export function foldName(v: string): string {
  return v.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase();
}

let translit: ((s: string) => string) | undefined;
/** A name written in Latin letters; "" when transliteration leaves anything else. */
function latin(v: string, script: string): string {
  if (script === "Latn") return v;
  if (!translit) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const lib = require("transliteration") as typeof import("transliteration");
    // ELOT 743's digraphs for Greek (`ου` -> `ou`, `γγ` -> `ng`), which the library writes letter by letter.
    const replace: [string, string][] = [["ου", "ou"], ["Ου", "Ou"], ["ού", "ou"], ["γγ", "ng"]];
    translit = (s) => lib.transliterate(s, { unknown: "?", replace });
  }
  // Greek accents and diaereses are marks on the letter (`Νικολαΐδης` -> `Nikolaidis`, not `NikolaIdis`).
  let out = translit(script === "Grek" ? v.normalize("NFD").replace(/\p{M}/gu, "") : v).trim();
  if (SYLLABIC.has(script)) out = out.replace(/\s+/g, "").toLowerCase();
  out = out.replace(/(^|[\s-])(\p{Ll})/gu, (_, a: string, b: string) => a + b.toUpperCase());
  return /^\p{Lu}[\p{L}'-]*( \p{Lu}[\p{L}'-]*)*$/u.test(out) ? out : "";
}

/** The strings of a faker list: an array, or the named sub-lists of an object. */
function listOf(x: unknown, key?: string): string[] {
  if (Array.isArray(x)) return key === undefined || key === "generic" ? x.filter((v): v is string => typeof v === "string") : [];
  if (x && typeof x === "object" && key !== undefined) return listOf((x as Record<string, unknown>)[key]);
  return [];
}

const pools = new Map<string, NamePool | undefined>();
/**
 * A faker locale's person names in Latin letters, with its language locale's where it lists none
 * (`en_CA` -> `en`); undefined when neither lists both first and last names, or its script is
 * not Latin nor transliterated.
 */
function namePool(locale: string): NamePool | undefined {
  if (pools.has(locale)) return pools.get(locale);
  const all = fakerLocales();
  const own = all[locale];
  const lang = own?.metadata?.language;
  const sources = [own, lang && lang !== locale ? all[lang] : undefined].filter((l): l is Locale & Defs => l !== undefined);
  let pool: NamePool | undefined;
  const at = sources.findIndex((l) => l.person?.first_name !== undefined);
  const from = at >= 0 ? sources[at] : undefined;
  const fromLast = sources.find((l) => l.person?.last_name !== undefined);
  const script = own?.metadata?.script ?? "";
  if (from && fromLast && (script === "Latn" || TRANSLITERATED.has(script))) {
    const part = (x: unknown): NamePool["first"] => {
      const write = (list: string[]): string[] => [...new Set(list.map((v) => latin(v.trim(), script)).filter((v) => v !== ""))].sort();
      const female = write(listOf(x, "female"));
      const male = write(listOf(x, "male"));
      const generic = write(listOf(x, "generic"));
      return { female, male, any: [...new Set([...generic, ...female, ...male])].sort() };
    };
    const first = part(from.person!.first_name);
    const last = part(fromLast.person!.last_name);
    if (first.any.length > 0 && last.any.length > 0) {
      const words = new Set<string>();
      for (const v of [...first.any, ...last.any]) for (const w of v.split(/[\s-]+/)) words.add(foldName(w));
      const sexOf = new Map<string, "female" | "male">();
      const male = new Set(first.male.map(foldName));
      const female = new Set(first.female.map(foldName));
      for (const v of female) if (!male.has(v)) sexOf.set(v, "female");
      for (const v of male) if (!female.has(v)) sexOf.set(v, "male");
      pool = { locale, source: at > 0 ? lang! : locale, first, last, sexOf, words };
    }
  }
  pools.set(locale, pool);
  return pool;
}

/** A faker locale key of a language and a country, with a script suffix at most (`sr_RS_latin`; not `en_AU_ocker`). */
const COUNTRY_LOCALE = /^[a-z]{2,3}_[A-Z]{2}(_(latin|cyrl))?$/;

const byCountry = new Map<string, NamePool[]>();
/**
 * The name pools of a country (alpha-2): faker's locales of that country (`de_AT`; `af_ZA`,
 * `en_ZA` and `zu_ZA` for South Africa); where there are none, the locales of the country's
 * languages (world-countries: Argentina -> `es`, Angola -> `pt_BR`, `pt_PT`); empty when none has
 * names in Latin letters (Japan, Egypt).
 */
export function namePoolsOf(country: string): NamePool[] {
  const hit = byCountry.get(country);
  if (hit) return hit;
  const all = fakerLocales();
  const keys = Object.keys(all).filter((k) => COUNTRY_LOCALE.test(k) && all[k].metadata?.country === country);
  const out = keys.map(namePool).filter((p): p is NamePool => p !== undefined);
  if (out.length === 0) {
    const alpha2 = languageCodes();
    const langs = (worldCountries().languages.get(country) ?? []).map((l) => alpha2.get(l)).filter((l): l is string => l !== undefined);
    for (const lang of langs) {
      const of = all[lang] ? [lang] : Object.keys(all).filter((k) => COUNTRY_LOCALE.test(k) && all[k].metadata?.language === lang);
      for (const k of of) {
        const p = namePool(k);
        if (p && !out.includes(p)) out.push(p);
      }
    }
  }
  byCountry.set(country, out);
  return out;
}

let languages: Map<string, string> | undefined;
/** ISO 639-3 (and 639-2) language code -> ISO 639-1, from faker's `en` language list. */
function languageCodes(): Map<string, string> {
  if (languages) return languages;
  const list = (fakerLocales().en.location?.language ?? []) as { alpha2?: string; alpha3?: string }[];
  languages = new Map(list.filter((l) => l.alpha2 && l.alpha3).map((l) => [l.alpha3!, l.alpha2!]));
  return languages;
}

/**
 * Whether a person name reads as one of a country's: one of its words (split at spaces and
 * hyphens, case and accents folded) is a first or last name of one of the country's pools.
 * Undefined when the country has no pool.
 */
export function plausibleFor(name: string, country: string): boolean | undefined {
  const ps = namePoolsOf(country);
  if (ps.length === 0) return undefined;
  const words = name.split(/[\s-]+/).filter((w) => w !== "").map(foldName);
  return words.some((w) => ps.some((p) => p.words.has(w)));
}
