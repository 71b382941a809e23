/** `metadata` of Create Model: the statistical description the SDK builds from a table. */
import type { tags } from "typia";
import type { Finite } from "./numbers";

/**
 * A column's kind (docs/api.md, "Column kinds"): `categorical` (one code per value seen at least
 * `rare_threshold` times, rarer values pooled), `numerical` (point or quantile bins of numbers),
 * `datetime` (point or quantile bins over time, in seconds since the Unix epoch), `id` (an
 * identifier: one code for "present", its shape recorded instead of its values).
 */
export type ColumnKind = "categorical" | "numerical" | "datetime" | "id";

/**
 * Unit a datetime column's values are written at (docs/api.md, "Column kinds"): `year` (every value
 * 1 January at midnight), `month` (the 1st of a month at midnight), or a fixed unit.
 */
export type DatetimeGranularity = "year" | "month" | "day" | "hour" | "minute" | "second" | "millisecond";

/**
 * A public vocabulary a categorical column's values come from (`column_stats[f].vocabulary`):
 * names and codes of public reference lists, never secrets (docs/api.md "Column kinds").
 */
export type PublicVocabulary =
  | "us_state"
  | "us_state_code"
  | "country"
  | "country_code"
  | "currency"
  | "currency_code"
  | "language"
  | "language_code"
  | "airline"
  | "airline_code"
  | "continent"
  | "time_zone"
  | "us_city"
  | "us_county"
  | "us_zip"
  | "us_city_state"
  | "us_county_state";

/**
 * `column_stats[f].cell_ranges`: per (value of `column`, interval bin of f) cell held by at least the
 * rare threshold's real rows, those rows' [min, max] of f (in f's numbers: datetimes in seconds
 * since the Unix epoch). `column` is a categorical column (or one with point bins) paired with f in
 * `marginals`; cells under the threshold release nothing.
 */
export interface CellRanges {
  /** The partner column, whose code in a row picks the cell. */
  column: string & tags.MinLength<1> & tags.MaxLength<1024>;
  /** [code of `column`, bin of f, min, max], ordered by code then bin; min <= max inside the bin. */
  cells: [number & tags.Type<"uint32">, number & tags.Type<"uint32">, number & Finite, number & Finite][] & tags.MaxItems<1024>;
}

/** `column_stats[f].id_shape` of an integer identifier: its range, never its values. */
export interface IntegerIdShapeStats {
  kind: "integer";
  min: number & tags.Type<"int64">;
  max: number & tags.Type<"int64">;
  /** Number of distinct non-blank values. */
  distinct: number & tags.Type<"uint32">;
  /**
   * Set when the column numbers the file's rows from `min` (0 or 1: R's row names, a pandas
   * index); a sample's row i is then written `min + i`.
   */
  counter?: true;
}

/** `column_stats[f].id_shape` of a text identifier: prefix, lengths and characters per position. */
export interface TextIdShapeStats {
  kind: "text";
  /** Longest prefix every value shares (a constant of the column, e.g. `ORD-`). */
  prefix: string & tags.MaxLength<256>;
  /** Rows per length of the part after the prefix; keys are lengths written as decimal strings. */
  lengths: Record<string, number & tags.Type<"uint32">>;
  /** Characters allowed at each position after the prefix: ranges (`0-9`, `a-z`, `A-F`) then literals. */
  positions: (string & tags.MaxLength<512>)[] & tags.MaxItems<1024>;
  /**
   * What the values are (docs/api.md "Column kinds"): decoding writes fresh values of
   * this kind (names, emails, titles ...) instead of characters of `positions`.
   */
  semantic?: SemanticShapeStats;
}

/** `id_shape.semantic`: a semantic kind, its locale, a Bloom filter of the real values, a title's words. */
export interface SemanticShapeStats {
  kind:
    | "first_name"
    | "last_name"
    | "full_name"
    | "email"
    | "phone"
    | "street_address"
    | "city"
    | "postal_code"
    | "url"
    | "company"
    | "uuid"
    | "ip"
    | "title"
    | "text"
    | "code";
  locale?: "en" | "de" | "fr" | "es";
  /** Phone only: ISO 3166 country of most values, and whether they are written with `+cc`. */
  country?: string & tags.Pattern<"^[A-Z]{2}$">;
  international?: boolean;
  /** Names, cities, companies: no real value has a capital inside a word (`McDonald`), nor will a fresh one. */
  plain?: boolean;
  /**
   * First and full names: the people are of one sex (>= 95% of the rows whose first name faker's
   * female and male lists know, over >= 30 such rows; `src/sdk/rules/name-gender.ts` `oneSexOf`),
   * so fresh first names are drawn from that sex's list.
   */
  sex?: "female" | "male";
  /**
   * Kinds drawn from word lists (names, addresses, cities, companies, emails): the real values are
   * written in capitals (`2110 WEST WALNUT`) or in lower case, and so are fresh ones.
   */
  letter_case?: "upper" | "lower";
  /**
   * A determinant's pooled cells are written as a released value beside the row's partner value
   * where one goes with it, fresh only where none does (instead of the pooled text `__other__`).
   */
  stand_ins_first?: boolean;
  /**
   * Title and text identifiers: words (runs of letters inside `text.words`' tokens) each held by
   * >= k real rows, all beside one released value (`code`) of the categorical column `column`; a
   * fresh value holds a tied word only beside its value (`src/sdk/semantic/word-partners.ts`).
   */
  word_partner?: {
    column: string & tags.MinLength<1> & tags.MaxLength<1024>;
    words: [string & tags.MinLength<2> & tags.MaxLength<256>, number & tags.Type<"uint32">][] & tags.MaxItems<5000>;
  };
  /** Bloom filter of the case-folded real values (1% false positives): at most 64 KiB, base64. */
  bloom?: {
    bits: string & tags.MinLength<4> & tags.MaxLength<87384>;
    hashes: number & tags.Type<"uint32"> & tags.Minimum<1> & tags.Maximum<32>;
  };
  /**
   * Code only (`src/sdk/semantic/code.ts`): the value patterns held by >= k rows, each with its rows
   * and per position one character or a class (`A-Z`, `a-z`, `0-9`), as `TextIdShapeStats.positions`.
   */
  codes?: {
    positions: (string & tags.MinLength<1> & tags.MaxLength<512>)[] & tags.MinItems<1> & tags.MaxItems<1024>;
    rows: number & tags.Type<"uint32">;
  }[] &
    tags.MaxItems<256>;
  /**
   * URL only (`src/sdk/semantic/url.ts`): the column's sites, a scheme, host and path prefix held
   * by >= k rows, with the rows written under it and the forms of their tails held by >= k rows
   * (kept tokens as they are; U+E000-U+E003 a capitalised, lower-case, upper-case word, a digit).
   * Absent: fresh URLs get invented hosts.
   */
  sites?: {
    prefix: string & tags.MinLength<1> & tags.MaxLength<2048>;
    rows: number & tags.Type<"uint32"> & tags.Minimum<1>;
    tails: [string & tags.MaxLength<2048>, number & tags.Type<"uint32">][] & tags.MaxItems<256>;
  }[] &
    tags.MaxItems<256>;
  /**
   * Title and text: the column's own tokens, pairs, triples and token counts, each seen in >= k
   * rows (counts below k are 0 or absent); `src/sdk/semantic/text.ts`. A pair's optional 4th
   * element 1: written without a space. `trigrams` (token models): index `words.length` is the
   * start (first place) or end (last place) of a value, `words.length + 1` (first or second place) any number.
   * `shaped`: tokens whose `#` are digit slots, or word classes (`A`, `a`, `AA`, `Aa`: a capital,
   * a lower-case word, an upper-case word, a capitalised word) written as public words; `Aa` and
   * `AA` may carry a kind, `Aa:female`, `Aa:male`, `Aa:place`, `Aa:noun` (a woman's or a man's given
   * name, a US place, a noun).
   */
  text?: {
    k: number & tags.Type<"uint32"> & tags.Minimum<1>;
    words: (string & tags.MinLength<1> & tags.MaxLength<256>)[] & tags.MinItems<1> & tags.MaxItems<5000>;
    first: (number & tags.Type<"uint32">)[] & tags.MaxItems<5000>;
    inner: (number & tags.Type<"uint32">)[] & tags.MaxItems<5000>;
    last?: (number & tags.Type<"uint32">)[] & tags.MaxItems<5000>;
    bigrams: (
      | [number & tags.Type<"uint32">, number & tags.Type<"uint32">, number & tags.Type<"uint32">]
      | [number & tags.Type<"uint32">, number & tags.Type<"uint32">, number & tags.Type<"uint32">, number & tags.Type<"uint32"> & tags.Maximum<1>]
    )[] &
      tags.MaxItems<10000>;
    trigrams?: [number & tags.Type<"uint32">, number & tags.Type<"uint32">, number & tags.Type<"uint32">, number & tags.Type<"uint32">][] & tags.MaxItems<10000>;
    shaped?: (number & tags.Type<"uint32">)[] & tags.MaxItems<5000>;
    lengths: Record<string, number & tags.Type<"uint32">>;
  };
}

/**
 * The grains of a quantile-binned numerical column, a model of coarse data (Heitjan & Rubin,
 * "Inference from coarse data via multiple imputation with application to age heaping", JASA
 * 85(410), 1990): each value is written at one of a chain of grains, and the share of values whose
 * coarsest grain is each one is kept per bin (salaries: 38% multiples of 100, 9% of 50 but not 100,
 * 53% of 1; ages in twelfths of a year, written rounded to `decimals`; coordinates written with 7 or
 * 8 decimals). Decoding draws a bin's grain by its shares, then a value uniformly among the bin's
 * points of that grain that are on no coarser one (docs/api.md, "The grain of a column").
 */
export interface NumericalGrain {
  /**
   * The grains, ascending; every point of a grain is a point of the one before (multiples of 100
   * are multiples of 50; 1/4 of 1/12; any grain's points, rounded to `decimals`, of 10^-decimals).
   * A grain that is no whole multiple of 10^-decimals (1/12) stands for its multiples rounded to
   * `decimals` decimals.
   */
  steps: (number & tags.ExclusiveMinimum<0> & Finite)[] & tags.MinItems<1> & tags.MaxItems<8>;
  /** Per grain j, the share of the interval bins' values whose coarsest grain is `steps[j]` (sums to 1). */
  shares: (number & tags.Minimum<0> & tags.Maximum<1>)[] & tags.MinItems<1> & tags.MaxItems<8>;
  /**
   * The same per bin: `bin_shares[b * steps.length + j]` for bin b of `bin_edges` (0 for a point
   * bin). A decoder ignores a grain whose lengths disagree with `steps` and `bin_edges`.
   */
  bin_shares: (number & tags.Minimum<0> & tags.Maximum<1>)[] & tags.MaxItems<65536>;
}

/**
 * `column_stats[f].number_format`: how a numerical column writes its numbers (patterns as Unicode
 * TR35 "Number Patterns" `¤#,##0.00`, `#,##0%`): a prefix (a currency sign, `$`, `US$`), a suffix
 * (`%`, `‰`, ` €`), `,` between every three integer digits of values >= 1000, and negatives as
 * `-$5` (default), `$-5` or `($5)`, and a missing value's text (`NA`). The number is the value as
 * written (`12.5%` is 12.5). With `clock`, a duration written as clock text, the number is its
 * seconds.
 */
export interface NumberFormatStats {
  prefix?: string & tags.MinLength<1> & tags.MaxLength<8>;
  suffix?: string & tags.MinLength<1> & tags.MaxLength<8>;
  grouping?: ",";
  negative?: "parentheses" | "minus_after_prefix";
  /** The text the column writes for a missing value instead of a blank (R's `NA`, `N/A`, `null`). */
  missing?: string & tags.MinLength<1> & tags.MaxLength<8>;
  /**
   * A duration written as clock text (`2:05:37`, `02:55:10`, `45:12`, `1:02.345`): hours (unbounded),
   * minutes and seconds (`h:mm:ss`), or minutes (unbounded) and seconds (`m:ss`); `hh`/`mm` pad the
   * first field to two digits; seconds carry the column's decimals. Never with the other fields
   * but `missing`.
   */
  clock?: "h:mm:ss" | "hh:mm:ss" | "m:ss" | "mm:ss";
}

/** `column_stats[f]`: what the SDK measured of column f (its kinds: docs/api.md "Column kinds"). */
export interface ColumnStats {
  type: ColumnKind;
  /** Rows with a non-missing value. */
  count: number & tags.Type<"uint32">;
  /** Rows with a missing (blank) value. */
  missing: number & tags.Type<"uint32">;
  min?: number & Finite;
  max?: number & Finite;
  mean?: number & Finite;
  std?: number & Finite;
  /**
   * Numerical only: non-decreasing bin edges, K_numeric + 1 of them; bin i is [edges[i], edges[i+1])
   * (the last bin closed). K_numeric is the feature's cardinality K, or K - 1 when the last code is
   * the missing value's, so there are K or K + 1 edges (checked, with their order, at create). A repeated edge `edges[i] == edges[i+1]` is a point bin holding exactly
   * that value (the SDK gives a value covering at least 1/binCap of the rows its own bin).
   */
  bin_edges?: (number & Finite)[];
  /** Numerical only: every observed value was an integer (decode keeps integers). */
  integer?: boolean;
  /** Numerical only: the most decimals any value is written with; decoded values are rounded to it. */
  decimals?: number & tags.Type<"uint32"> & tags.Maximum<20>;
  /**
   * Numerical only: every value is written with exactly `decimals` decimals (`0.0`, `1.5`), so
   * decoded values keep trailing zeros (`0.0` stays `0.0`). Absent: trailing zeros are dropped.
   */
  fixed_decimals?: boolean;
  /**
   * Numerical only: every value is a whole multiple of this step (25 for body masses in 25 g,
   * 100000 for budgets in round hundred-thousands); decoded values stay on it. Absent: the step is
   * 10^-decimals.
   */
  step?: number & tags.ExclusiveMinimum<0> & Finite;
  /**
   * Numerical only: the fewest decimals any value is written with, when every value is written in
   * plain notation with at least this many (> 0) and some with more (`3.0` beside `3.25`): decoded
   * values drop trailing zeros down to it. Absent: trailing zeros are dropped (or kept, with
   * `fixed_decimals`).
   */
  min_decimals?: number & tags.Type<"uint32"> & tags.Minimum<1> & tags.Maximum<20>;
  /**
   * Numerical only: every value is written with at most this many significant digits, and some
   * long ones with fewer decimals than `decimals` for it (10 digits: `31.95376472` beside
   * `-104.5698933`); decoded values are rounded to it too. Absent: `decimals` alone decides.
   */
  digits?: number & tags.Type<"uint32"> & tags.Minimum<1> & tags.Maximum<21>;
  /**
   * Numerical, with `digits`: `digit_shares[i]` is the share of the non-zero values written with
   * i + 1 significant digits (a double's 16th and 17th digits of noise not counted: `14.201000213599999`
   * is 12 digits), `digits` entries summing to 1. Decoded values drawn inside a bin are rounded to a
   * number of significant digits drawn from it. Absent: every drawn value is rounded to `digits`.
   */
  digit_shares?: (number & tags.Minimum<0> & tags.Maximum<1>)[] & tags.MinItems<1> & tags.MaxItems<21>;
  /**
   * With `bin_edges`, numerical: the column's mixture of grains (rounding, fractions, decimal
   * counts); datetime at hour, minute or second granularity without `weekdays`: the clock's, with
   * `steps` in seconds of local time (in `offset`): times rounded to 5, 15 or 30 minutes, whole hours.
   */
  grain?: NumericalGrain;
  /**
   * Numerical only, with `bin_edges`: the values the column is written with, when few and sparse on
   * its step (whole degrees Fahrenheit written in Celsius), each held by >= the rare threshold's
   * rows; decoded values are drawn among them inside their bin (with `grain`: a grain by its share,
   * then one of the listed values on it and on no coarser grain).
   */
  lattice?: (number & Finite)[] & tags.MaxItems<4096>;
  /**
   * Numerical or datetime, with `bin_edges`, raw tables only (never with privacy or a domain): the
   * real rows' range inside each bin per value of a partner column; a decoded value is drawn
   * inside its bin and its row's cell range (docs/api.md "Column kinds").
   */
  cell_ranges?: CellRanges;
  /**
   * Numerical only: the values are written with a number format (`$1,234.50`, `12.5%`, `196,000`);
   * the SDK reads them as plain numbers and writes decoded values back in it. Absent: plain decimals.
   */
  number_format?: NumberFormatStats;
  /** Datetime only: the column's format in luxon tokens, e.g. `yyyy/MM/dd HH:mm`. */
  format?: string & tags.MinLength<1> & tags.MaxLength<256>;
  /** Datetime only: the text the column writes for a missing value instead of a blank (R's `NA`). */
  missing_text?: string & tags.MinLength<1> & tags.MaxLength<8>;
  /** Datetime only: the unit every value is a whole multiple of (in its own UTC offset). */
  granularity?: DatetimeGranularity;
  /**
   * Datetime only, granularity day or finer: the days of the week (0 = Sunday .. 6 = Saturday, in
   * the column's offset) every value falls on, when some day never occurs (trading days, weekly
   * readings); decoded values fall on them too. Absent: every day of the week.
   */
  weekdays?: (number & tags.Type<"uint32"> & tags.Maximum<6>)[] & tags.MinItems<1> & tags.MaxItems<6>;
  /** Datetime only, for formats that write a UTC offset: the most frequent offset, minutes east of UTC. */
  offset?: number & tags.Type<"int32"> & tags.Minimum<-1440> & tags.Maximum<1440>;
  /** Id only: the shape fresh identifiers are written in. */
  id_shape?: IntegerIdShapeStats | TextIdShapeStats;
  /** Categorical only: rows a value needs for a code of its own; rarer values share the pooled code. */
  rare_threshold?: number & tags.Type<"uint32">;
  /**
   * Categorical only, with a pooled code: the column holds values of a semantic kind (city, person
   * name ...) and many of its rows hold rare values, so a pooled cell is written as a fresh value
   * of that kind (never a real value, up to the Bloom filter) instead of a stand-in among the
   * released values. Same shape as an identifier's `id_shape.semantic`.
   */
  semantic?: SemanticShapeStats;
  /**
   * Categorical only: the column's values come from a public vocabulary (US states, countries,
   * ISO codes, US places ...), so its values are released even below `rare_threshold`; for the US
   * places of the postal gazetteer (`us_city`, `us_county`, `us_zip`) a pooled cell is written as
   * a real place of the row's state.
   */
  vocabulary?: PublicVocabulary;
  /**
   * Categorical only, a vocabulary of US places (`us_city`, `us_county`, `us_zip`,
   * `us_city_state`, `us_county_state`): how the column writes a place, so that a pooled cell drawn from the
   * gazetteer reads like the column's own values (`SEATTLE, WA`, `seattle, wa`, `Seattle, Washington`).
   */
  place_form?: PlaceForm;
  /**
   * Categorical only, vocabulary `us_zip` beside a US state column: the 3-digit ZIP prefixes seen
   * with each state value in at least the rare threshold's rows (raw tables only), from which a
   * row of a state the postal gazetteer lacks (Puerto Rico) writes its ZIP code.
   */
  zip_prefixes?: ZipPrefix[] & tags.MaxItems<1000>;
  /**
   * Categorical only, vocabulary `us_city` or `us_county` beside a US state column: the (place,
   * state) pairs of states the postal gazetteer lacks (Puerto Rico, the Virgin Islands) seen in at
   * least the rare threshold's rows (raw tables only), written for those states' rows.
   */
  state_places?: StatePlace[] & tags.MaxItems<1000>;
  /**
   * Categorical or text identifier, raw tables only: the column holds cities of the row's country
   * in the categorical column `country` (vocabulary `country` or `country_code`): in >= 60% of the
   * real rows whose country is read, a GeoNames city of >= 1,000 people of that country. A city
   * written fresh or of another country is written as a real city of the row's country.
   */
  world_city?: { country: string & tags.MinLength<1> & tags.MaxLength<1024> };
  /**
 * Set when the SDK noised the marginals before sending them (`privacy: {epsilon, delta}`, Gaussian
 * noise with zCDP accounting), so the server never sees the exact counts.
 */
  privacy?: { epsilon: number & Finite; delta: number & Finite; rho: number & Finite; sigma: number & Finite };
}

/**
 * A 2-way marginal (extension `metadata.marginals`, pairs chosen by the SDK):
 * `probs[i * K_g + j] = P(f = i, g = j)`, row-major over the pair `[f, g]`, length `K_f * K_g`, summing to 1.
 */
export interface PairMarginal {
  features: [string, string];
  probs: (number & Finite)[];
}

/** `metadata` of Create Model: the statistical description the SDK builds from a table. */
export interface Metadata {
  /** Column names, in table order; at least one, each at most {@link MAX_FEATURE_NAME_LENGTH} (1,024) characters. */
  features: (string & tags.MinLength<1> & tags.MaxLength<1024>)[] & tags.MinItems<1>;
  /** K per feature: the number of codes (contract: "Vocabulary size per feature"). */
  cardinalities: Record<string, number & tags.Type<"uint32"> & tags.Minimum<1>>;
  /** The 1-way marginal per feature: length K, non-negative, sums to 1. */
  empirical_probs: Record<string, (number & Finite)[]>;
  column_stats?: Record<string, ColumnStats>;
  /**
   * Value -> code per feature (the blank value maps to the missing code): at most K_f entries, each
   * value at most {@link MAX_VALUE_LENGTH} (4,096) characters.
   */
  value_mappings?: Record<string, Record<string, number & tags.Type<"uint32">>>;
  /** Selected 2-way marginals. */
  marginals?: PairMarginal[];
  /** Where the table came from, for people telling models apart (`synthd models ls`); not used in training. */
  source?: MetadataSource;
  /**
   * Row rules the real rows keep (found by the SDK, or declared by the user); the SDK's decoder
   * makes every synthetic row keep them. Not used in training (docs/api.md, "Row rules").
   */
  rules?: Rule[] & tags.MaxItems<1000>;
  /**
   * Latitude/longitude column pairs and the places their points lie in; the SDK's decoder writes
   * each synthetic point inside its row's place. Not used in training (docs/api.md, "Coordinates").
   */
  coordinates?: CoordinatePair[] & tags.MaxItems<16>;
}

/** A 3-digit ZIP prefix of `column_stats[f].zip_prefixes` with its state and rows. */
export interface ZipPrefix {
  prefix: string & tags.Pattern<"^[0-9]{3}$">;
  /** The state column's value, as the table writes it. */
  state: string & tags.MinLength<1> & tags.MaxLength<4096>;
  rows: number & tags.Type<"uint32">;
}

/** The form of a place column's values (`column_stats[f].place_form`). */
export interface PlaceForm {
  /** `upper` or `lower` case (>= 90% of the rows with letters), else the gazetteer's spelling. */
  letter_case: "upper" | "lower" | "as_listed";
  /** `us_city_state`, `us_county_state`: the text between the place and the state (`, ` in `Seattle, WA`). */
  separator?: string & tags.MinLength<1> & tags.MaxLength<8>;
  /** `us_city_state`, `us_county_state`: the state as its two-letter postal `code` or its `name`. */
  state?: "code" | "name";
  /**
   * `us_county_state`, `us_county`: counties are written with their kind word, as the Census Bureau
   * names them (`Autauga County`, `Caddo Parish`, `Roanoke city`).
   */
  county_suffix?: boolean;
}

/** A place of `column_stats[f].state_places` with its state and rows. */
export interface StatePlace {
  place: string & tags.MinLength<1> & tags.MaxLength<4096>;
  /** The state column's value, as the table writes it. */
  state: string & tags.MinLength<1> & tags.MaxLength<4096>;
  rows: number & tags.Type<"uint32">;
}

/** A place column of a {@link CoordinatePair}: a US ZIP code, city or county, or any other named place. */
export interface CoordinatePlace {
  column: string & tags.MinLength<1>;
  kind: "zip" | "city" | "county" | "place";
}

/** The real rows' points of one released place value: their box, [south, north, west, east] in degrees. */
export interface PlaceArea {
  /** The place column (one of the pair's `places`). */
  column: string & tags.MinLength<1>;
  /** The place value, as released in `value_mappings`. */
  place: string;
  /** The row's state value, when the pair has a `state` column. */
  state?: string;
  box: [number & Finite, number & Finite, number & Finite, number & Finite];
}

/**
 * One latitude/longitude pair of `metadata.coordinates` (docs/api.md, "Coordinates"): numerical
 * columns whose headers name latitude and longitude and whose values lie in [-90, 90] and
 * [-180, 180] degrees, with the columns that name each row's place.
 */
export interface CoordinatePair {
  latitude: string & tags.MinLength<1>;
  longitude: string & tags.MinLength<1>;
  /** The US state column (vocabulary `us_state` or `us_state_code`), if any. */
  state?: string & tags.MinLength<1>;
  /**
   * Place columns, most specific first (ZIP, city, county, other places by header), then any
   * categorical column whose values each hold a small part of the points (docs/api.md, "Coordinates").
   */
  places?: CoordinatePlace[] & tags.MaxItems<8>;
  /**
   * The real rows' area of each place value (with its state) held by at least the rare
   * threshold's rows; raw tables only (never with privacy or a domain).
   */
  areas?: PlaceArea[] & tags.MaxItems<100000>;
}

/**
 * One row rule of `metadata.rules` (docs/api.md, "Row rules"). Every kind carries `share`: the
 * share of the real table's rows that keep the rule (1 when every row does; detection tolerates
 * a little dirty data, `share` then says how much), and `declared` when the user gave the rule.
 */
export type Rule =
  | FixedCombinationsRule
  | CatalogRule
  | InequalityRule
  | SumRule
  | RatioRule
  | NotEqualRule
  | BlankTogetherRule
  | StructuralZerosRule
  | PublicAttributeRule
  | EmbeddedCodeRule
  | CodePrefixRule
  | CalendarRule
  | DatetimePartRule
  | TemplateRule
  | NameGenderRule
  | NameCountryRule
  | DifferenceRule
  | ElapsedRule
  | EntityRangeRule
  | UniqueRule;

/** Fields every {@link Rule} has. */
export interface RuleBase {
  /** Share of the real rows the rule applies to that keep it, in [0, 1]. */
  share: number & tags.Minimum<0> & tags.Maximum<1>;
  /** The user declared the rule (the SDK's `rules` option) rather than the SDK finding it. */
  declared?: boolean;
}

/**
 * Fixed combinations (SDV's `FixedCombinations`): the values of `columns` appear together only in
 * the listed combinations (city, state); with `determinant`, that column decides the others (a
 * functional dependency: education -> education-num). Columns are categorical, or numerical or
 * datetime with point bins (values in `value_mappings`).
 */
export interface FixedCombinationsRule extends RuleBase {
  type: "fixed_combinations";
  columns: (string & tags.MinLength<1>)[] & tags.MinItems<2> & tags.MaxItems<4>;
  /** One of `columns`: the column whose value decides the others'. */
  determinant?: string & tags.MinLength<1>;
  /**
   * The combinations released: code tuples in `columns` order, each seen in at least k real rows
   * (k = the rare threshold), so no rare combination is ever released. With `determinant`, one
   * tuple per determinant value with a code of its own (never `__other__` or blank); without,
   * tuples holding the pooled or blank code are released like any other.
   */
  combinations: ((number & tags.Type<"uint32">)[])[] & tags.MaxItems<100000>;
  /** Real rows per combination, same order (each >= k). */
  counts: (number & tags.Type<"uint32">)[] & tags.MaxItems<100000>;
}

/**
 * Catalog: a key column decides every other of `columns` (a functional dependency key -> attributes
 * over raw values, any column kind but `id`: movieId -> title, year, genres; state -> FIPS id,
 * total). Each released entry is the key's value and its attributes' values as the real table
 * writes them, for a key value seen in at least k real rows (k = the rare threshold) with those
 * attributes; a synthetic row's key names a released entry and its attributes are that entry's.
 * With `key_columns` 2 the key is a pair of columns (a composite key: origin and destination
 * decide distance) and a synthetic row whose pair is no released entry's is left as generated.
 */
export interface CatalogRule extends RuleBase {
  type: "catalog";
  /** The key first (its `key_columns` columns), then the attributes it decides. */
  columns: (string & tags.MinLength<1>)[] & tags.MinItems<2> & tags.MaxItems<64>;
  /** `columns[0]`. */
  key: string & tags.MinLength<1>;
  /**
   * How many of `columns`, from the first, make the key: 1 (absent: a key column) or 2 (a
   * composite key, `columns[0]` and `columns[1]`, neither of which decides the attributes alone).
   */
  key_columns?: number & tags.Type<"uint32"> & tags.Minimum<1> & tags.Maximum<2>;
  /** Released entries: one text per column, `columns` order (blank `""`); distinct keys (pairs with `key_columns` 2). */
  entries: ((string & tags.MaxLength<4096>)[] & tags.MaxItems<64>)[] & tags.MinItems<1> & tags.MaxItems<100000>;
  /** Real rows per entry, same order (each >= k). */
  counts: (number & tags.Type<"uint32">)[] & tags.MaxItems<100000>;
}

/** Inequality (SDV's `Inequality`): `high >= low` (`high > low` when `strict`), numbers or datetimes. */
export interface InequalityRule extends RuleBase {
  type: "inequality";
  high: string & tags.MinLength<1>;
  low: string & tags.MinLength<1>;
  strict: boolean;
}

/**
 * Sum, or a linear identity with unit coefficients of 1 to 12 parts: `total = signs[0]·parts[0]
 * + ... + signs[m-1]·parts[m-1] + constant` within the columns' decimals (numerical columns; half a
 * unit of the finest, plus half a unit of its own for each column written with fewer): `total = a
 * + b`, `goods = mining + construction + manufacturing`, `experience = age - education - 6`, `c =
 * 100 - a - b`, `adjclose = close`, `floor = level - 1`. Without `signs` every part's is +1;
 * without `constant` it is 0. Twelve parts bound the SDK's search and cover published breakdowns
 * (a total of a dozen categories, BLS's seven private service supersectors).
 */
export interface SumRule extends RuleBase {
  type: "sum";
  total: string & tags.MinLength<1>;
  parts: (string & tags.MinLength<1>)[] & tags.MinItems<1> & tags.MaxItems<12>;
  /** The sign of each part, +1 or -1, one per part (default all +1). */
  signs?: (1 | -1)[] & tags.MinItems<1> & tags.MaxItems<12>;
  /** The constant term, in the columns' units (default 0). */
  constant?: number & Finite;
  /**
   * The magnitude each part is multiplied by, one per part (default all 1): a small integer or a
   * power of ten (`x = Round + 0.01 · Pick`, `total minutes = 60 · hours + minutes`).
   */
  weights?: (number & tags.ExclusiveMinimum<0> & Finite)[] & tags.MinItems<1> & tags.MaxItems<12>;
}

/**
 * Ratio or product identity: `total = factor · parts[0]^powers[0] · parts[1]^powers[1]` (one or two
 * parts, powers +1 or -1) within the columns' decimals (numerical columns, values >= 0): a rate
 * `Unemployment Rate (%) = 100 · Unemployed / Labor Force`, an average `avg = hits / at bats`, a
 * value `value = price · quantity`, a density, a unit conversion `cm = 2.54 · inches`. A row whose
 * numerator is 0 has a total of 0; a row whose denominator is 0 is outside the rule. The tolerance
 * is half a unit of the total's decimals plus the total's relative share of each part's rounding
 * (half a unit of its decimals over its value).
 */
export interface RatioRule extends RuleBase {
  type: "ratio";
  total: string & tags.MinLength<1>;
  parts: (string & tags.MinLength<1>)[] & tags.MinItems<1> & tags.MaxItems<2>;
  /** The power of each part, +1 (multiplies) or -1 (divides), one per part. */
  powers: (1 | -1)[] & tags.MinItems<1> & tags.MaxItems<2>;
  /** The constant factor k (100 for a percentage, 1 for a plain ratio, 2.54 for inches to centimetres); of a band, its median. */
  factor: number & tags.ExclusiveMinimum<0> & Finite;
  /**
   * A band rather than an identity (all three of `min`, `max`, `quantiles`, or none): the factor
   * `total / prod parts^powers` of each row lies in [min, max] (`TotalCharges = [0.82, 1.2] ·
   * MonthlyCharges · tenure`), within the total's decimals; `quantiles` are 17 quantiles of the
   * real rows' factors inside it, from which the decoder draws a row's factor.
   */
  min?: number & tags.ExclusiveMinimum<0> & Finite;
  max?: number & tags.ExclusiveMinimum<0> & Finite;
  quantiles?: (number & tags.ExclusiveMinimum<0> & Finite)[] & tags.MinItems<2> & tags.MaxItems<17>;
  /** Of a band: its factor by bins of one part, where the part's value narrows it (`tenure 1`: exactly 1). */
  bins?: RatioBins;
}

/**
 * A ratio band's factor per bin of one part's value: bin i holds the values <= `edges[i]` not in an
 * earlier bin, the last bin the rest; `quantiles[i]` are bin i's 17 quantiles of the factor (its
 * [min, max] the first and last), checked and drawn in place of the band's.
 */
export interface RatioBins {
  /** One of the rule's parts. */
  part: string & tags.MinLength<1>;
  edges: (number & Finite)[] & tags.MinItems<1> & tags.MaxItems<31>;
  /** One list per bin (`edges.length + 1`), each ascending. */
  quantiles: ((number & tags.ExclusiveMinimum<0> & Finite)[] & tags.MinItems<2> & tags.MaxItems<17>)[] & tags.MinItems<2> & tags.MaxItems<32>;
}

/**
 * Unique (SDV's `Unique` constraint, a table's key): the values of `columns` together are distinct
 * in every real row (one row per date, per county, per (country, indicator, year)). Kept at
 * sampling time, not per row: the SDK drops a sampled row whose key an earlier row of the same
 * sample holds and draws another (docs/api.md, "Row rules"). Columns are categorical, datetime or
 * integer, none blank in any real row.
 */
export interface UniqueRule extends RuleBase {
  type: "unique";
  columns: (string & tags.MinLength<1>)[] & tags.MinItems<1> & tags.MaxItems<3>;
}

/** Not equal: two columns over the same values never hold the same value in a row (home team, away team). */
export interface NotEqualRule extends RuleBase {
  type: "not_equal";
  columns: (string & tags.MinLength<1>)[] & tags.MinItems<2> & tags.MaxItems<2>;
}

/** Blank together: in every row, the columns are all blank or none is. */
export interface BlankTogetherRule extends RuleBase {
  type: "blank_together";
  columns: (string & tags.MinLength<1>)[] & tags.MinItems<2> & tags.MaxItems<16>;
}

/**
 * Structural zeros (Private-PGM's): value pairs of two columns that no synthetic row holds, because
 * the real rows never hold them, or hold them in under 1% of the rows independence predicts
 * (relationship `Husband` with sex `Female`). Columns are categorical, or numerical or datetime
 * with point bins (values in `value_mappings`) or interval bins (`bin_edges`: a cell's code is its
 * number's bin, the blank its own code; detection forbids the blank, or every bin, beside a value).
 */
export interface StructuralZerosRule extends RuleBase {
  type: "structural_zeros";
  columns: (string & tags.MinLength<1>)[] & tags.MinItems<2> & tags.MaxItems<2>;
  /** The forbidden pairs: (code of `columns[0]`, code of `columns[1]`), codes of `value_mappings`. */
  pairs: ((number & tags.Type<"uint32">)[] & tags.MinItems<2> & tags.MaxItems<2>)[] & tags.MinItems<1> & tags.MaxItems<10000>;
}

/** A public reference attribute of a public key: a US state's or a country's name and codes. */
export type PublicAttribute =
  | "us_state"
  | "us_state_code"
  | "us_state_fips"
  | "us_state_capital"
  | "country"
  | "country_alpha2"
  | "country_alpha3"
  | "country_numeric"
  | "country_capital"
  | "country_region"
  | "country_subregion"
  | "country_calling_code"
  | "country_currency_code"
  | "country_tld"
  | "country_ioc"
  | "us_county_fips"
  | "us_county_fips5";

/**
 * Public attribute: the last column holds a public reference attribute of the key, the value of
 * `columns[0]` (a column of public vocabulary `us_state`, `us_state_code`, `country`, `country_code`
 * `us_county_state` or `us_zip`), or of the pair (`columns[0]`, `columns[1]`) of a US state column and a
 * `us_county` column: a US state's name, postal code, FIPS number (FIPS PUB 5-2) or capital; a
 * country's name or ISO 3166-1 alpha-2, alpha-3 or numeric code, capital, region and subregion (UN
 * geoscheme: `Asia`, `Southern Asia`), international calling code (`93`), ISO 4217 currency code,
 * internet country code (`.af`) or IOC code (world-countries); a county's state (name, code,
 * FIPS number), 3-digit county FIPS code or 5-digit state and county FIPS code (the Census Bureau's
 * `01001` for Autauga County, AL; a ZIP code's county is GeoNames'). A synthetic row's attribute column is its key's attribute, taken
 * from public reference data, so the column needs no rows of its own.
 */
export interface PublicAttributeRule extends RuleBase {
  type: "public_attribute";
  /** The key (one column, or a state column and a county column), then the column holding its attribute. */
  columns: (string & tags.MinLength<1>)[] & tags.MinItems<2> & tags.MaxItems<3>;
  attribute: PublicAttribute;
  /** Numeric attributes: the digits the column writes them with, zero-padded (`01`); absent: unpadded. */
  width?: number & tags.Type<"uint32"> & tags.Maximum<8>;
}

/**
 * Embedded code: the identifier `columns[1]` holds the row's public code `columns[0]` (a US state's
 * postal code, an ISO 3166 country code) at character `offset` (FEC candidate ids: `H8CA05035`
 * holds its candidate's state `CA` at offset 2). A synthetic row's identifier holds its code there.
 */
export interface EmbeddedCodeRule extends RuleBase {
  type: "embedded_code";
  /** The code column, then the identifier column. */
  columns: (string & tags.MinLength<1>)[] & tags.MinItems<2> & tags.MaxItems<2>;
  /** 0-based position of the code in the identifier, in UTF-16 code units. */
  offset: number & tags.Type<"uint32"> & tags.Maximum<256>;
}

/**
 * Code prefix: the first `length` characters of the code `columns[1]` (an identifier or categorical
 * column) name the row's category `columns[0]` (a college major's code `2419` starts with `24`,
 * the engineering majors'; NAICS, SIC, ICD and county FIPS codes are built alike). Released: the
 * (prefix, category) pairs of the real rows seen in at least k rows (k = the rare threshold). A
 * synthetic row whose category has released prefixes writes its code with one of them; a row of
 * another category is left as generated.
 */
export interface CodePrefixRule extends RuleBase {
  type: "code_prefix";
  /** The category column, then the code column. */
  columns: (string & tags.MinLength<1>)[] & tags.MinItems<2> & tags.MaxItems<2>;
  /** Characters of the prefix, in UTF-16 code units. */
  length: number & tags.Type<"uint32"> & tags.Minimum<1> & tags.Maximum<16>;
  /** The released prefixes, each `length` characters; with `categories` and `counts`, one pair per index. */
  prefixes: (string & tags.MinLength<1> & tags.MaxLength<16>)[] & tags.MinItems<1> & tags.MaxItems<100000>;
  /** Per pair, the category's text as the real table writes it. */
  categories: (string & tags.MinLength<1> & tags.MaxLength<4096>)[] & tags.MinItems<1> & tags.MaxItems<100000>;
  /** Per pair, its real rows (each >= k). */
  counts: (number & tags.Type<"uint32">)[] & tags.MinItems<1> & tags.MaxItems<100000>;
}

/**
 * Calendar: the year, month and day-of-month columns form a valid Gregorian date in every row (no
 * February 30), and the weekday column, when the rule has one, is that date's day of the week
 * (births by date: `2000, 1, 1, 6`). Year and day columns are numerical; a month column writes
 * numbers 1-12 or the texts of `months`; a weekday column the texts of `weekdays`.
 */
export interface CalendarRule extends RuleBase {
  type: "calendar";
  /** Year, month, day of month, then the weekday column when there is one. */
  columns: (string & tags.MinLength<1>)[] & tags.MinItems<3> & tags.MaxItems<4>;
  /** January..December as the month column writes them; absent: the numbers 1-12. */
  months?: (string & tags.MinLength<1> & tags.MaxLength<64>)[] & tags.MinItems<12> & tags.MaxItems<12>;
  /**
   * Monday..Sunday as the weekday column writes them (`""` for a weekday no real row holds:
   * business days only); with a fourth column only.
   */
  weekdays?: (string & tags.MaxLength<64>)[] & tags.MinItems<7> & tags.MaxItems<7>;
}

/** A calendar or clock field of a datetime that another column can write (ISO 8601 fields, Gregorian calendar). */
export type DatetimePart = "year" | "quarter" | "month" | "day" | "day_of_year" | "weekday" | "hour";

/**
 * Datetime part: `columns[1]` writes one field of the datetime `columns[0]`, read in the
 * datetime's own wall-clock time (its written offset, else UTC): year, quarter (1-4), month
 * (1-12), day of month (1-31), day of year (1-366), weekday, hour (0-23) (Walmart's `OPENDATE 7/1/62` with `MONTH 7,
 * DAY 1, YEAR 1962`; an order date with its `day_of_week`). A synthetic row's `columns[1]` is
 * written from its datetime.
 */
export interface DatetimePartRule extends RuleBase {
  type: "datetime_part";
  /** The datetime column, then the column that writes its part. */
  columns: (string & tags.MinLength<1>)[] & tags.MinItems<2> & tags.MaxItems<2>;
  part: DatetimePart;
  /**
   * The texts the column writes per value of the part, in order: quarters 1-4, months
   * January..December, weekdays Monday..Sunday (`Mon`, `7` for Sunday, `0` for Sunday: any
   * numbering is a list of texts). Absent: the part's number (a weekday always has texts).
   */
  names?: (string & tags.MinLength<1> & tags.MaxLength<64>)[] & tags.MinItems<4> & tags.MaxItems<12>;
  /** Numbers without `names`: the digits the column writes them with, zero-padded (`07`); absent: unpadded. */
  width?: number & tags.Type<"uint32"> & tags.Minimum<2> & tags.Maximum<4>;
}

/**
 * One piece of a {@link TemplateRule}: a literal text, or the cell of `columns[column]` (1-based
 * among the rule's sources; 0 is the written column), a number written with `decimals` decimals
 * (`toFixed`) when given, else the cell as it is, transformed by the optional fields in this
 * order: `before` (its text before the first `before`), `date` (the date read with `from` and
 * written with `date`, both luxon formats: `1984-07-13` as `Friday, July 13, 1984`), `letter_case`.
 */
export type TemplatePart = string | TemplateCell;

/** A cell part of a {@link TemplatePart}; every field but `column` is optional. */
export interface TemplateCell {
  column: number & tags.Type<"uint32"> & tags.Minimum<1> & tags.Maximum<16>;
  decimals?: number & tags.Type<"uint32"> & tags.Maximum<12>;
  /** The cell's text before the first occurrence of this separator (the whole cell without one). */
  before?: string & tags.MinLength<1> & tags.MaxLength<8>;
  /** The luxon format the date is written in (English names, UTC wall clock); needs `from`. */
  date?: string & tags.MinLength<1> & tags.MaxLength<64>;
  /** The luxon format the source cell is read with (the source column's own datetime format). */
  from?: string & tags.MinLength<1> & tags.MaxLength<64>;
  /** Letter case written: `title` (each word's first letter upper, the rest lower), `upper`, `lower`. */
  letter_case?: "title" | "upper" | "lower";
}

/**
 * Template: `columns[0]` is the other columns' cells written into a fixed text (a map tile's key
 * `0-105` = x `-` y; an event's `https://.../eventpage/ci37868143` = the page's address and its
 * id; a title `M 2.0 - 4km W of Castaic, CA` = `M `, the magnitude with one decimal, ` - `, the
 * place). A synthetic row's `columns[0]` is its other cells written into `parts`.
 */
export interface TemplateRule extends RuleBase {
  type: "template";
  /** The written column, then the columns the template reads, each once. */
  columns: (string & tags.MinLength<1>)[] & tags.MinItems<2> & tags.MaxItems<17>;
  /** Literals and cells, in order (at least one cell). */
  parts: (TemplatePart)[] & tags.MinItems<1> & tags.MaxItems<64>;
}

/**
 * Name and sex: the first name of `columns[0]` (a first or full name) is a woman's where the
 * row's `columns[1]` is one of `female` and a man's where it is one of `male`, as the public name
 * lists say (faker's female and male first names; a name on both or neither says nothing).
 */
export interface NameGenderRule extends RuleBase {
  type: "name_gender";
  /** The name column, then the sex column. */
  columns: (string & tags.MinLength<1>)[] & tags.MinItems<2> & tags.MaxItems<2>;
  female: (string & tags.MinLength<1> & tags.MaxLength<64>)[] & tags.MinItems<1> & tags.MaxItems<4>;
  male: (string & tags.MinLength<1> & tags.MaxLength<64>)[] & tags.MinItems<1> & tags.MaxItems<4>;
}

/** How a column writes countries: English names (with aliases), ISO 3166 alpha-2 or alpha-3 codes, IOC codes. */
export type CountryForm = "name" | "alpha2" | "alpha3" | "ioc";

/**
 * Name and country: a person name in `columns[0]` (a first, last or full name) is one of the
 * row's country in `columns[1]`, as the public name lists of that country say (faker's locales of
 * the country, else of its languages). `share` is the share of real rows with such a country
 * whose name has a word of its lists; `shuffled` the same with each row's country taken from
 * another row (the lists' overlap: the names follow the country by `share - shuffled`).
 */
export interface NameCountryRule extends RuleBase {
  type: "name_country";
  /** The name column, then the country column. */
  columns: (string & tags.MinLength<1>)[] & tags.MinItems<2> & tags.MaxItems<2>;
  /** How the country column writes countries. */
  form: CountryForm;
  shuffled?: number & tags.Minimum<0> & tags.Maximum<1>;
}

/**
 * Difference range: `columns[1] - columns[0]` lies in [`min`, `max`] (a forecast year from one
 * year before its budget year to ten after; a ship date 0 to 7 days after its order date): two
 * numerical columns, or two datetime columns (seconds). `quantiles` are the real differences'
 * quantiles at 0, 1/16, ..., 1 (so `min` and `max` first and last), released as bin edges are; a
 * repaired row's difference is drawn from them.
 */
export interface DifferenceRule extends RuleBase {
  type: "difference";
  columns: (string & tags.MinLength<1>)[] & tags.MinItems<2> & tags.MaxItems<2>;
  min: number & Finite;
  max: number & Finite;
  quantiles: (number & Finite)[] & tags.MinItems<2> & tags.MaxItems<17>;
}

/**
 * Elapsed time: the number `columns[0]` is the time from the datetime `columns[2]` to the datetime
 * `columns[1]` counted in units of `unit` seconds, written with `decimals` decimals (`rounding`:
 * to the nearest, or down as whole years of age are counted): a tenure's `length` in days from
 * `start` to `end` (unit 86,400), an age in years of 365.25 days from `birthday` to `termstart`
 * with one decimal (unit 31,557,600). A synthetic row's `columns[0]` is written from its two
 * datetimes.
 */
export interface ElapsedRule extends RuleBase {
  type: "elapsed";
  /** The number, then the later datetime, then the earlier one. */
  columns: (string & tags.MinLength<1>)[] & tags.MinItems<3> & tags.MaxItems<3>;
  /** Seconds in one unit of the number (1, 60, 3,600, 86,400, 604,800; years of 365, 365.25 or 365.2425 days). */
  unit: number & tags.ExclusiveMinimum<0> & Finite;
  /** Decimals the number is counted to (written without trailing zeros unless the column keeps them). */
  decimals: number & tags.Type<"uint32"> & tags.Maximum<20>;
  /** `nearest` (half away from zero; the default) or `floor` (toward minus infinity). */
  rounding?: "nearest" | "floor";
}

/**
 * Entity range: the number `columns[1]` lies in the range its entity `columns[0]` has in the real
 * rows (a panel's country and its population, a firm and its capital, a state and its road
 * mileage): the entity's value decides most of the number, so a synthetic row of Belgium gets a
 * population Belgium has had, not China's. Released per entity value seen in at least k real rows
 * (k = the rare threshold, as catalog entries are): the [min, max] of its rows' numbers. A row of
 * an entity no range is released for (rare, blank) is left as generated. In a panel whose number
 * follows time within each entity (a population over the years), the rule also names the time
 * column and holds each entity's least-squares line, so a row's number is one of its year.
 */
export interface EntityRangeRule extends RuleBase {
  type: "entity_range";
  /**
   * The entity column (categorical, or a code-book number), then the number column, then, with
   * `trends`, the panel's time column (numerical: a year).
   */
  columns: (string & tags.MinLength<1>)[] & tags.MinItems<2> & tags.MaxItems<3>;
  /** The entities released: their texts as the real table writes them, distinct. */
  keys: (string & tags.MinLength<1> & tags.MaxLength<4096>)[] & tags.MinItems<1> & tags.MaxItems<100000>;
  /** Per key, same order: the [min, max] of its real rows' numbers (min <= max). */
  ranges: ((number & Finite)[] & tags.MinItems<2> & tags.MaxItems<2>)[] & tags.MinItems<1> & tags.MaxItems<100000>;
  /** A number drawn into a range is drawn uniform in its logarithm (a positive, right-skewed column: populations, amounts); absent: uniform. */
  log?: boolean;
  /**
   * With a time column: per key, same order, the least-squares line of the entity's real numbers
   * (their logarithms with `log`) on the time, [intercept, slope] (the number at time t is
   * intercept + slope * t). A synthetic row's number is drawn on its entity's line at a time
   * within `step` of its own, with `spread` of noise, inside the entity's range.
   */
  trends?: ((number & Finite)[] & tags.MinItems<2> & tags.MaxItems<2>)[] & tags.MaxItems<100000>;
  /** With `trends`: the real rows' standard deviation about their entity's line (in the logarithm with `log`), pooled over the entities. */
  spread?: number & Finite & tags.Minimum<0>;
  /** With `trends`: the panel's time step, the median gap between an entity's consecutive times (5 for a table of every fifth year). */
  step?: number & Finite & tags.Minimum<0>;
}

/**
 * `metadata.source`: what the SDK says of the table it described. Both fields are optional: an
 * in-memory table has no file name, and private metadata (differentially private marginals) sends
 * no exact row count.
 */
export interface MetadataSource {
  /** The file's name without its directory, e.g. `adult.csv`. */
  name?: string & tags.MinLength<1> & tags.MaxLength<255>;
  /** Data rows read (header excluded). */
  rows?: number & tags.Type<"uint32">;
}
