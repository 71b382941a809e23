/** Letter case of text cells: found in a column's values, and written back in it. */

/** A capital letter inside a word: after a lower-case letter or an apostrophe (`McDonald`, `O'Hara`). */
export const INNER_CAPITAL = /[\p{Ll}'’]\p{Lu}/u;

/**
 * `text` in title case: lower case but the first letter of each word (a letter after a letter or
 * an apostrophe continues its word: `o'fallon` is `O'fallon`, `st. paul` is `St. Paul`).
 */
export function titleCase(text: string): string {
  return text.toLowerCase().replace(/(^|[^\p{L}'’])(\p{L})/gu, (_, a: string, b: string) => a + b.toUpperCase());
}

/** Share of the rows holding letters that must be in one case for fresh values to follow it. */
const ONE_CASE_SHARE = 0.95;

/**
 * `upper` when `share` of the values holding two letters or more (weighted by `counts`, else one
 * each) have no lower-case letter (`2110 WEST WALNUT`; `A1` is a code), `lower` when as many have
 * no upper-case one (`seattle, wa`); else undefined.
 */
export function letterCaseOf(values: readonly string[], counts?: readonly number[], share = ONE_CASE_SHARE): "upper" | "lower" | undefined {
  let lettered = 0;
  let upper = 0;
  let lower = 0;
  values.forEach((v, i) => {
    if (!/\p{L}.*\p{L}/u.test(v)) return;
    const n = counts?.[i] ?? 1;
    lettered += n;
    if (!/\p{Ll}/u.test(v)) upper += n;
    if (!/\p{Lu}/u.test(v)) lower += n;
  });
  if (lettered === 0) return undefined;
  return upper >= share * lettered ? "upper" : lower >= share * lettered ? "lower" : undefined;
}

/** `v` in a column's letter case (unchanged for `as_listed` or none). */
export function inLetterCase(v: string, letterCase: "title" | "upper" | "lower" | "as_listed" | undefined): string {
  return letterCase === "title" ? titleCase(v) : letterCase === "upper" ? v.toUpperCase() : letterCase === "lower" ? v.toLowerCase() : v;
}
