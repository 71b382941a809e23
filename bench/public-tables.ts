/**
 * Public tables the project was not tuned on, for `npm run bench -- tables` (issue 40, "Measure
 * generality"): tables of the `vega-datasets` npm package (a devDependency, pinned), chosen for the
 * classes of defect the issue lists (addresses, city/state/zip, titles, sums with sparse parts,
 * linear identities, pairs that never occur, rounded numbers). Each table's licence is the one
 * the package's `datapackage.json` gives for it.
 *
 * CSV files are read as they are; a JSON file (an array of flat records) becomes a {@link Table}:
 * its columns are the records' keys in order of first appearance, a cell is the value as
 * `String` writes it (`null` and a missing key: blank), and the table is written to CSV with the
 * SDK's `writeTableCsv` so that the benchmark fits, samples and evaluates a file as a user would.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { allLocales } from "@faker-js/faker";
import { DataError, readTable, writeTableCsv, type Table } from "../src/sdk";
import { addPlaces, emptyGazetteer, type Gazetteer } from "./realism";

/** One public table: its file in `vega-datasets/data`, its licence and the classes of the issue it shows. */
export interface PublicTable {
  file: string;
  licence: string;
  /** The classes of defect the table can show. */
  classes: string;
  /** A JSON file that is no array of flat records: the records it holds. */
  records?: (json: unknown) => unknown[];
}

/** A GeoJSON FeatureCollection's points as records: the feature's id, its properties, longitude, latitude, depth. */
function geoJsonPoints(json: unknown): unknown[] {
  const features = (json as { features?: { id?: unknown; properties?: object; geometry?: { coordinates?: unknown[] } }[] }).features;
  if (!Array.isArray(features)) throw new DataError("expected a GeoJSON FeatureCollection");
  return features.map((f) => {
    const [longitude, latitude, depth] = f.geometry?.coordinates ?? [];
    return { id: f.id, ...f.properties, longitude, latitude, depth };
  });
}

/** The public tables, by the name `--table` takes. */
export const PUBLIC_TABLES: Record<string, PublicTable> = {
  la_riots: {
    file: "la-riots.csv",
    licence: "none stated (Los Angeles Times Data Desk)",
    classes: "addresses, neighborhoods, names, coordinates; near-copies of a 63-row table",
  },
  zipcodes: { file: "zipcodes.csv", licence: "CC BY 4.0 (GeoNames)", classes: "city/state/county, zip prefix and state, coordinates" },
  movies: {
    file: "movies.json",
    licence: "none stated",
    classes: "titles, directors, a catalog (title decides year, genre), rounded budgets, grosses",
  },
  birdstrikes: {
    file: "birdstrikes.csv",
    licence: "U.S. Government work (FAA Wildlife Strike Database)",
    classes: "a sum with sparse parts (total = other + repair), airport names, state names",
  },
  us_employment: {
    file: "us-employment.csv",
    licence: "U.S. Government work (BLS)",
    classes: "linear identities among 23 series (nonfarm = private + government ...)",
  },
  penguins: {
    file: "penguins.json",
    licence: "CC0 1.0 (palmerpenguins)",
    classes: "pairs that never occur (species x island), rounded body mass",
  },
  seattle_weather: {
    file: "seattle-weather.csv",
    licence: "U.S. Government work (NOAA)",
    classes: "decimals and rounding, temp_max >= temp_min, dates",
  },
  gapminder: {
    file: "gapminder.json",
    licence: "CC BY 4.0 (Gapminder)",
    classes: "countries (public vocabulary), country decides cluster, year steps",
  },
  football: {
    file: "football.json",
    licence: "CC0 / public domain (openfootball)",
    classes: "teams belong to divisions (pairs that never occur), near-copies of fixtures",
  },
  state_capitals: {
    file: "us-state-capitals.json",
    licence: "U.S. Government work (USGS)",
    classes: "(city, state) of 50 rows, coordinates inside the state",
  },
  states_hurricanes: {
    file: "population_engineers_hurricanes.csv",
    licence: "U.S. Government work (BLS, ACS)",
    classes: "a 52-row table of US states (state names, FIPS id)",
  },
  jobs: {
    file: "jobs.json",
    licence: "IPUMS terms of use",
    classes: "job titles (public vocabulary), job x sex x year",
  },
  income: {
    file: "income.json",
    licence: "Census Bureau Terms of Use (ACS 3-year, 2013)",
    classes: "a catalog keyed by a public name (the state decides its FIPS id, region and total), 10 rows per state",
  },
  unemployment_industries: {
    file: "unemployment-across-industries.json",
    licence: "U.S. Government work (BLS, Census CPS)",
    classes: "a catalog keyed by a date (the date decides year and month), 14 series per date",
  },
  ohlc: {
    file: "ohlc.json",
    licence: "none stated (CBOE VIX index, via Yahoo Finance)",
    classes: "trading days (never a weekend), high >= open, close >= low; 44 rows",
  },
  sp500: {
    file: "sp500-2000.csv",
    licence: "none stated (S&P 500 index, via Yahoo Finance)",
    classes: "trading days 2000-2020, daily open/high/low/close orders, volumes in round figures",
  },
  political_contributions: {
    file: "political-contributions.json",
    licence: "CC0 1.0 (FEC)",
    classes: "candidate names and ids, states, sums of money with sparse parts",
  },
  budget: {
    file: "budget.json",
    licence: "U.S. Government work (OMB, receipts by source)",
    classes: "amounts written with thousands separators (196,000), codes that decide names (agency, bureau), account names",
  },
  earthquakes: {
    file: "earthquakes.json",
    licence: "U.S. Public Domain (USGS earthquake feed)",
    classes: "columns written from other cells (id = net + code, page addresses holding the id), places in words, codes, times",
    records: geoJsonPoints,
  },
};

/** The package's data folder (its `exports` name only the built module, so the folder is found beside it). */
export function vegaDataDir(): string {
  return join(dirname(require.resolve("vega-datasets")), "..", "data");
}

/**
 * An array of flat JSON records as a {@link Table} (file header).
 * @throws DataError when the text is not an array of objects.
 */
export function recordsTable(records: unknown, source: string): Table {
  if (!Array.isArray(records)) throw new DataError(`${source}: expected a JSON array of records.`);
  const columns: string[] = [];
  const index = new Map<string, number>();
  records.forEach((r, i) => {
    if (r === null || typeof r !== "object" || Array.isArray(r)) throw new DataError(`${source}: record ${i} is not an object.`);
    for (const k of Object.keys(r)) if (!index.has(k)) index.set(k, columns.push(k) - 1);
  });
  const cell = (v: unknown): string => (v === null || v === undefined ? "" : typeof v === "object" ? JSON.stringify(v) : String(v));
  const rows = (records as Record<string, unknown>[]).map((r) => columns.map((c) => cell(r[c])));
  return { columns, rows };
}

/**
 * The CSV path of public table `name`: the package's file for a CSV, else the JSON converted into
 * `dir/<name>.csv`.
 * @throws Error for an unknown name; DataError for a JSON file that is not flat records.
 */
export async function publicTableCsv(name: string, dir: string): Promise<string> {
  const t = PUBLIC_TABLES[name];
  if (!t) throw new Error(`unknown public table ${JSON.stringify(name)}`);
  const path = join(vegaDataDir(), t.file);
  if (t.file.endsWith(".csv")) return path;
  const out = join(dir, `${name}.csv`);
  const json: unknown = JSON.parse(readFileSync(path, "utf8"));
  await writeTableCsv(recordsTable(t.records ? t.records(json) : json, t.file), out);
  return out;
}

/**
 * The reference of the geography checks: every (city, state), zip prefix and state, and each
 * state's box of the GeoNames table of US zip codes (`zipcodes.csv` of `vega-datasets`, 42,049
 * rows), with US state names mapped to their codes by faker's English locale lists.
 */
export async function usGazetteer(): Promise<Gazetteer> {
  const loc = allLocales.en.location!;
  const g = emptyGazetteer(loc.state as string[], loc.state_abbr as string[]);
  let idx: Record<string, number> = {};
  const rows: { city: string; state: string; zip: string; lat: string; lon: string }[] = [];
  await readTable(
    join(vegaDataDir(), PUBLIC_TABLES.zipcodes.file),
    (h) => {
      idx = Object.fromEntries(h.map((c, i) => [c, i]));
    },
    (v) => rows.push({ city: v[idx.city], state: v[idx.state], zip: v[idx.zip_code], lat: v[idx.latitude], lon: v[idx.longitude] }),
  );
  addPlaces(g, rows);
  return g;
}
