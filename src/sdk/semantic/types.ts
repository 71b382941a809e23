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
  "text",
  "code",
];

/** Locales with their own faker data; `en` is the default. */
export type SemanticLocale = "en" | "de" | "fr" | "es";

/**
 * The token model of a title or text column (see `./text`): only tokens, pairs, triples and
 * lengths seen in >= k rows. Models without `trigrams` (written before the token model) hold
 * whitespace-separated words and no start or end states.
 */
export interface TextModel {
  /** The rare threshold k the model was built with: every count below is >= k or 0. */
  k: number;
  /**
   * Released tokens, case-sensitive (`The`, `St`, `.`, `6th`), each in >= k distinct rows; a
   * token listed in `shaped` is a digit shape whose `#` characters are digit slots (`19##`).
   */
  words: string[];
  /** Per token, the rows whose FIRST token it is (0 when fewer than k). */
  first: number[];
  /** Per token, the rows holding it at a later position (0 when fewer than k). */
  inner: number[];
  /**
   * Per token, the rows whose LAST token it is (0 when fewer than k); models without `trigrams`:
   * only rows of 2 or more words, and the field may be absent.
   */
  last?: number[];
  /**
   * Adjacent pairs `[a, b, rows]` (indices into `words`) seen in >= k distinct rows; a 4th element
   * 1: most of those rows write the pair without a space between (`St` `.`).
   */
  bigrams: ([number, number, number] | [number, number, number, number])[];
  /**
   * Adjacent triples `[a, b, c, rows]` seen in >= k distinct rows; index `words.length` in first
   * place is the start of a value, in last place its end (`[n, The, n, r]`: r rows are `The`
   * alone); index `words.length + 1` in first or second place stands for any number (a token of
   * digits: `[n + 1, Main, St, r]`: r rows hold a number, `Main`, `St`). Present in token models
   * only (even when empty).
   */
  trigrams?: [number, number, number, number][];
  /** Indices of the tokens of `words` that are digit shapes. */
  shaped?: number[];
  /** Rows per number of tokens (keys: counts as decimal strings), only counts held by >= k rows. */
  lengths: Record<string, number>;
}

/** One released form of a code column (see `./code`): per position a character or a class, and its rows (>= k). */
export interface CodePattern {
  /** Per position, the class syntax of `TextIdShape.positions`: `A-Z`, `a-z`, `0-9` or one literal character. */
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
  /** Code only: the released patterns. */
  codes?: CodePattern[];
  /** Title and text only: the token model. */
  text?: TextModel;
}
