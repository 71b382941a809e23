/**
 * Semantic kinds of text columns (first name, email, title ...) in `id_shape.semantic`, so
 * decoding writes believable fresh values of that kind; recognised by `./recognize`.
 */

import type { SemanticShapeStats } from "../../contract";

/** The semantic kinds: the contract's `SemanticShapeStats.kind` (typia checks it). */
export type SemanticKind = SemanticShapeStats["kind"];

/** Every semantic kind, in the order recognition tries them. */
export const SEMANTIC_KINDS: readonly SemanticKind[] = [
  "email",
  "uuid",
  "ip",
  "url",
  "phone",
  "first_name",
  "last_name",
  "full_name",
  "street_address",
  "city",
  "postal_code",
  "company",
  "title",
  "text",
  "code",
];

/** Locales with their own faker data; `en` is the default. */
export type SemanticLocale = "en" | "de" | "fr" | "es";

/**
 * The token model of a title or text column (`./text`): only what >= k rows hold. Models without
 * `trigrams` (older) hold whitespace-separated words and no start or end states.
 */
export interface TextModel {
  /** The rare threshold k the model was built with: every count below is >= k or 0. */
  k: number;
  /** Released tokens, case-sensitive (`The`, `.`, `6th`); one in `shaped` has `#` digit slots. */
  words: string[];
  /** Per token, the rows whose FIRST token it is (0 when fewer than k). */
  first: number[];
  /** Per token, the rows holding it at a later position (0 when fewer than k). */
  inner: number[];
  /** Per token, the rows whose LAST token it is (older models: rows of 2+ words, or absent). */
  last?: number[];
  /** Adjacent pairs `[a, b, rows]` (indices into `words`); a 4th element 1: written unspaced. */
  bigrams: ([number, number, number] | [number, number, number, number])[];
  /**
   * Adjacent triples `[a, b, c, rows]`; index n = `words.length` first is the start, last the end;
   * n + 1 first or second is any number (`[n + 1, Main, St, r]`). Token models only (maybe empty).
   */
  trigrams?: [number, number, number, number][];
  /** Indices of the tokens of `words` that are digit shapes. */
  shaped?: number[];
  /** Rows per number of tokens (keys: counts as decimal strings), only counts held by >= k rows. */
  lengths: Record<string, number>;
}

/** One released form of a code column (`./code`) and its rows (>= k). */
export interface CodePattern {
  /** Per position, `A-Z`, `a-z`, `0-9` or one literal character. */
  positions: string[];
  rows: number;
}

/** A Bloom filter of the real values (see `./bloom`). */
export interface BloomStats {
  /** The bit array, base64 (bit j = byte j >> 3, bit j & 7). */
  bits: string;
  /** Number of hash functions. */
  hashes: number;
}

/**
 * One site of a URL column (`./url`): a scheme, host and path prefix held by >= k rows, the rows
 * written under it, and the released forms of the rest (tokens held by >= k rows kept, others
 * written as placeholders: U+E000 a capitalised word, U+E001 a lower-case one, U+E002 an upper-case
 * one, U+E003 a digit), each with its rows (>= k).
 */
export interface UrlSite {
  prefix: string;
  rows: number;
  tails: [string, number][];
}

/** `id_shape.semantic`: the kind, the locale and what the generator needs. */
export interface SemanticShape {
  kind: SemanticKind;
  /** Locale of the values (names, streets, phone country); default `en`. */
  locale?: SemanticLocale;
  /** Phone only: ISO 3166 country of most values (`US`, `DE`), and whether they carry `+cc`. */
  country?: string;
  international?: boolean;
  /** Names, cities, companies: no real value has an inner capital (`McDonald`), so none written. */
  plain?: boolean;
  /** First and full names: the people are of one sex, and fresh first names are of it. */
  sex?: "female" | "male";
  /** Word-list kinds: the real values are written in capitals or in lower case, and so are fresh ones. */
  letter_case?: "upper" | "lower";
  /** Real values (case-folded), so fresh values never equal one (up to the filter's false positives). */
  bloom?: BloomStats;
  /** Code only: the released patterns. */
  codes?: CodePattern[];
  /** URL only: the column's own sites (prefixes held by >= k rows); none: invented hosts. */
  sites?: UrlSite[];
  /** Title and text only: the token model. */
  text?: TextModel;
  /** Title and text identifiers: tokens tied to one value of a categorical column (`./word-partners`). */
  word_partner?: { column: string; words: [string, number][] };
}
