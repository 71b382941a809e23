/**
 * Recognises the semantic kind of an identifier text column (docs/api.md "Column kinds"): the
 * header picks candidate kinds ({@link HEADER}; email, uuid, ip, url and `+` phones also from
 * values alone), tried in {@link SEMANTIC_KINDS} order; {@link MIN_SHARE} of the distinct values
 * must pass the kind's value test. For the bare header `name`, 30% of first words must be faker
 * first names (airports are not people); titles need 30% of values with 2+ words. A column whose
 * values read as people's full names by themselves is `full_name` whatever its header ({@link
 * personNames}: `athlete`, `Director`) unless an earlier kind fits. The locale
 * ({@link detectLocale}) comes from the values' letters.
 */
import { isIP } from "node:net";
import { fakerPools } from "./pools";
import type { SemanticKind, SemanticLocale } from "./types";

/** Share of the distinct values a kind's value test must pass. */
export const MIN_SHARE = 0.9;

/**
 * An email: a dot-atom local part (RFC 5322 §3.4.1 `atext`) `@` letter/digit/hyphen labels, the
 * last of 2+ letters; no quoted local parts or address literals (legal, unseen in tables).
 */
export const EMAIL_RE = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?\.)+[A-Za-z]{2,}$/;
/** A UUID (any version): 8-4-4-4-12 hex digits. */
export const UUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
/** A URL: an http(s) scheme or `www.`, a host with a dot, no spaces. */
export const URL_RE = /^(https?:\/\/|www\.)[^\s/]+\.[^\s/]+(\/\S*)?$/i;
/** A name: words that start with a capital letter, of letters, hyphens, apostrophes and dots. */
export const NAME_RE = /^\p{Lu}[\p{L}\p{M}'’.-]*( \p{Lu}[\p{L}\p{M}'’.-]*)*$/u;
/** A place name: as {@link NAME_RE}, with lower-case particles (`am`, `de`, `upon`) after the first word. */
const PLACE_RE = /^\p{Lu}[\p{L}\p{M}'’.-]*( [\p{L}\p{M}'’.()-]+)*$/u;

function share(values: readonly string[], test: (v: string) => boolean): number {
  if (values.length === 0) return 0;
  let ok = 0;
  for (const v of values) if (test(v)) ok++;
  return ok / values.length;
}

/**
 * The locale of a column's values, from letters typical of a language: ä ö ü ß -> `de`;
 * é è ê ë à â ç î ï ô û œ -> `fr`; ñ á í ó ú ¿ ¡ -> `es` (é and ü count for fr and de only). The
 * language with the most values holding one of its letters wins when at least 3 values and 2% of
 * them do; otherwise `en`.
 * @param values distinct values.
 */
export function detectLocale(values: readonly string[]): SemanticLocale {
  const sets: [SemanticLocale, RegExp][] = [
    ["de", /[äöüßÄÖÜ]/],
    ["fr", /[éèêëàâçîïôûœÉÈÊÀÂÇÎÔŒ]/],
    ["es", /[ñÑáíóúÁÍÓÚ¿¡]/],
  ];
  let best: SemanticLocale = "en";
  let bestN = 0;
  for (const [loc, re] of sets) {
    const n = values.reduce((s, v) => s + (re.test(v) ? 1 : 0), 0);
    if (n > bestN) [best, bestN] = [loc, n];
  }
  return bestN >= 3 && bestN >= 0.02 * values.length ? best : "en";
}

/** A kind recognised for a column, with its locale. */
export interface Recognized {
  kind: SemanticKind;
  locale: SemanticLocale;
}

/** Country (ISO 3166) of a locale's phone numbers. */
export const LOCALE_COUNTRY: Record<SemanticLocale, string> = { en: "US", de: "DE", fr: "FR", es: "ES" };

/** Header rules (tested on the lower-cased name with `_`, `-` and spaces kept). */
const HEADER: [SemanticKind, RegExp][] = [
  ["email", /e-?mail/],
  ["uuid", /uuid|guid/],
  ["ip", /(^|[^a-z])ip([^a-z]|$)|ip.?addr/],
  ["url", /url|website|homepage|web.?site|link/],
  ["phone", /phone|(^|[^a-z])tel([^a-z]|$)|telephone|mobile|fax/],
  ["first_name", /first.?name|given|forename|vorname|pr[ée]nom|nombre$/],
  ["last_name", /last.?name|surname|family.?name|nachname|familienname|apellido/],
  ["full_name", /^name$|full.?name|person|author|customer.?name|^contact$/],
  ["street_address", /address|adress|street|stra(ß|ss)e|anschrift|rue|calle|direcci[óo]n/],
  ["city", /city|town|municipality|stadt|^ort$|ville|ciudad/],
  ["postal_code", /zip|postal|post.?code|plz/],
  ["company", /company|employer|organi[sz]ation|business|firm|unternehmen|entreprise|empresa/],
  ["title", /title|headline|product|name|label|description|comment|text|summary/],
];

/** Kinds recognised from the values alone (the header says nothing). */
const VALUES_ONLY: readonly SemanticKind[] = ["email", "uuid", "ip", "url", "phone"];

type Tests = {
  phone: (v: string, country: string) => boolean;
  firstNames: (locale: SemanticLocale) => ReadonlySet<string>;
};

let phoneLib: typeof import("libphonenumber-js") | undefined;
/** libphonenumber-js, loaded on first use. */
export function phoneLibrary(): typeof import("libphonenumber-js") {
  return (phoneLib ??= require("libphonenumber-js") as typeof import("libphonenumber-js"));
}

function valueTest(kind: SemanticKind, locale: SemanticLocale, tests: Tests): (v: string) => boolean {
  switch (kind) {
    case "email":
      return (v) => EMAIL_RE.test(v);
    case "uuid":
      return (v) => UUID_RE.test(v);
    case "ip":
      return (v) => isIP(v) !== 0;
    case "url":
      return (v) => URL_RE.test(v);
    case "phone":
      return (v) => /\d/.test(v) && tests.phone(v, LOCALE_COUNTRY[locale]);
    case "first_name":
    case "last_name":
      return (v) => NAME_RE.test(v) && v.split(" ").length <= 2;
    case "full_name":
      return (v) => NAME_RE.test(v) && v.split(" ").length >= 2 && v.split(" ").length <= 4;
    case "street_address":
      return (v) => /\d/.test(v) && /\p{L}{2,}/u.test(v);
    case "city":
      return (v) => PLACE_RE.test(v);
    case "postal_code":
      return (v) => /^[A-Za-z0-9][A-Za-z0-9 -]{1,8}[A-Za-z0-9]$/.test(v) && /\d/.test(v);
    case "company":
      return (v) => /^[\p{L}\p{N}]/u.test(v);
    case "title":
    case "text":
      return (v) => /\p{L}/u.test(v);
    case "code":
      return (v) => !/\s/.test(v);
  }
}

/**
 * The semantic kind of an identifier text column, or undefined when none fits.
 * @param name the column's header.
 * @param values its distinct non-blank values (trimmed).
 * @param counts rows per value (same length; used for the multi-word share of titles).
 * @returns `{kind, locale}`; the header picks the candidate kinds (values-only kinds are tried
 *   for every column), the values must confirm one (rules in the module header).
 */
export function recognizeSemantic(name: string, values: readonly string[], counts: readonly number[]): Recognized | undefined {
  if (values.length === 0) return undefined;
  const locale = detectLocale(values);
  const header = name.trim().toLowerCase();
  const tests: Tests = {
    phone: (v, country) => {
      try {
        return phoneLibrary().isPossiblePhoneNumber(v, country as never);
      } catch {
        return false;
      }
    },
    firstNames: (loc) => firstNameSet(loc),
  };
  const candidates: SemanticKind[] = [];
  for (const [kind, re] of HEADER) if (re.test(header)) candidates.push(kind);
  for (const kind of VALUES_ONLY) if (!candidates.includes(kind)) candidates.push(kind);
  for (const kind of candidates) {
    const byHeader = HEADER.some(([k, re]) => k === kind && re.test(header));
    if (!byHeader && kind === "phone" && share(values, (v) => v.startsWith("+")) < MIN_SHARE) continue;
    if (share(values, valueTest(kind, locale, tests)) < MIN_SHARE) continue;
    if (kind === "full_name" && header === "name") {
      const firsts = tests.firstNames(locale);
      if (share(values, (v) => firsts.has(v.split(" ")[0])) < 0.3) continue;
    }
    if (kind === "title" && personNames(values, tests)) return { kind: "full_name", locale };
    if (kind === "title") {
      let multi = 0;
      let all = 0;
      values.forEach((v, i) => {
        all += counts[i];
        if (/\S\s+\S/.test(v)) multi += counts[i];
      });
      if (multi < 0.3 * all) continue;
    }
    return { kind, locale };
  }
  // People under a header that does not say so (`athlete`, `Director`, `winner`).
  if (personNames(values, tests)) return { kind: "full_name", locale };
  return undefined;
}

/** Share of a column's first words that must be first names for it to be people's names by its values alone. */
const PERSON_FIRST_SHARE = 0.4;

/**
 * Whether values read as people's full names by themselves: {@link MIN_SHARE} of them 2-4 capitalised
 * words, and {@link PERSON_FIRST_SHARE} starting with a first name of any supported locale (film
 * directors and athletes, not airports or police departments: shares in docs/api.md).
 */
function personNames(values: readonly string[], tests: Tests): boolean {
  if (values.length < 20) return false;
  if (share(values, (v) => NAME_RE.test(v) && v.split(" ").length >= 2 && v.split(" ").length <= 4) < MIN_SHARE) return false;
  const firsts = (["en", "de", "fr", "es"] as const).map((l) => tests.firstNames(l));
  return share(values, (v) => firsts.some((set) => set.has(v.split(" ")[0]))) >= PERSON_FIRST_SHARE;
}

const firstNameSets = new Map<SemanticLocale, Set<string>>();
/** faker's first names of a locale (all genders), for telling person names from other names. */
function firstNameSet(locale: SemanticLocale): Set<string> {
  let s = firstNameSets.get(locale);
  if (!s) {
    s = new Set(fakerPools(locale).first);
    firstNameSets.set(locale, s);
  }
  return s;
}


