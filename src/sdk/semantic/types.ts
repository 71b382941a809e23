/**
 * Semantic kinds of identifier text columns: what a unique text column holds (a person's
 * first name, an email, a film title ...), recorded in `column_stats[f].id_shape.semantic` so that
 * decoding writes believable fresh values of that kind instead of random letters of the column's
 * character shape. Recognised by `./recognize`, written by `./generate` (faker and
 * libphonenumber-js) and `./text` (titles and free text from words seen in at least k rows).
 */

import type { SemanticShapeStats } from "../../contract";

/** The semantic kinds: the contract's list (`SemanticShapeStats.kind` in src/contract/index.ts, which typia checks). */
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
];

/** Locales with their own faker data; `en` is the default. */
export type SemanticLocale = "en" | "de" | "fr" | "es";

/** Words of a title / free-text column (see `./text`): only words and pairs seen in >= k rows. */
export interface TextModel {
  /** The rare threshold k the model was built with: every count below is >= k or 0. */
  k: number;
  /** Kept words, case-sensitive surface forms (`The`, `of`, `(1995)`), each in >= k distinct rows. */
  words: string[];
  /** Per word, the rows whose FIRST word it is (0 when fewer than k). */
  first: number[];
  /** Per word, the rows holding it at a later position (0 when fewer than k). */
  inner: number[];
  /** Per word, the rows of 2 or more words whose LAST word it is (0 when fewer than k); may be absent. */
  last?: number[];
  /** Adjacent pairs `[a, b, rows]` (indices into `words`) seen in >= k distinct rows. */
  bigrams: [number, number, number][];
  /** Rows per number of words (keys: counts as decimal strings), only counts held by >= k rows. */
  lengths: Record<string, number>;
}

/** A Bloom filter of the real values (see `./bloom`). */
export interface BloomStats {
  /** The bit array, base64 (bit j = byte j >> 3, bit j & 7). */
  bits: string;
  /** Number of hash functions. */
  hashes: number;
}

/** `id_shape.semantic`: the kind, the locale and what the generator needs. */
export interface SemanticShape {
  kind: SemanticKind;
  /** Locale of the values (names, streets, phone country); default `en`. */
  locale?: SemanticLocale;
  /** Phone only: ISO 3166 country of most values (`US`, `DE`), and whether they carry `+cc`. */
  country?: string;
  international?: boolean;
  /**
   * Names, cities, companies: true when no real value has a capital letter inside a word
   * (`McDonald`, `O'Hara`), so generated ones have none either.
   */
  plain?: boolean;
  /** Real values (case-folded), so fresh values never equal one (up to the filter's false positives). */
  bloom?: BloomStats;
  /** Title only: the word model. */
  text?: TextModel;
}
