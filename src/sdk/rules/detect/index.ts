/**
 * Row rules (`docs/decisions.md` "Rows, not only marginals"): the rules every real row keeps (or
 * nearly every row; `share` says how many), found from the scan of the raw table, plus the rules
 * the user declares, checked against every row. Shapes: src/contract/index.ts (`Rule`); the user's
 * view: docs/api.md "Row rules".
 *
 * Work is on the scan's per-row value ids and distinct values, never a string per cell.
 * Identifier columns take part in no rule. Nothing is detected with a domain or differential
 * privacy: rules read from raw rows are not private (`analyzeTable` skips it). Detection never
 * drops a row; only a fixed-combinations rule's released combinations leave out rare ones.
 */
import type { DatetimePartRule, Rule, StructuralZerosRule } from "../../../contract";
import { DEFAULTS, type EncodedTable, type ScannedTable } from "../../metadata/encoded";
import { describeRule, ruleId } from "../describe";
import type { DetectOptions } from "./options";
import { columnsOf } from "./view";
import { blankZeros, detectCombinations } from "./combinations";
import { detectCatalogs, heldByCatalog } from "./catalog";
import { detectInequalities } from "./inequality";
import { detectSums } from "./sum";
import { detectRatios } from "./ratio";
import { detectNotEqual } from "./not-equal";
import { detectBlankTogether } from "./blank-together";
import { detectEmbeddedCodes, detectPublicAttributes } from "./public-attribute";
import { detectCodePrefixes } from "./code-prefix";
import { declaredRule } from "./declared";
import { detectCalendars } from "./calendar";
import { detectDatetimeParts } from "./datetime-part";
import { detectElapsed } from "./elapsed";
import { detectTemplates } from "./template";
import { detectNameGender } from "./name-gender";
import { detectNameCountry } from "./name-country";
import { ruleColumns } from "../check";
import { detectDifferences } from "./difference";
import { detectEntityRanges } from "./entity-range";
import { RULE_LIMITS } from "./options";
import { detectUnique } from "./unique";

export { RULE_LIMITS, type DeclaredRule, type DetectOptions, type RuleOptions } from "./options";
export { lineOfRow } from "./declared";

/**
 * The row rules of a raw table: the detected ones (unless `opts.detect` is false) less those
 * `opts.drop` names, plus the declared ones (`opts.declare`), which replace a detected rule of the
 * same id ({@link ruleId}). Order: catalogs, fixed combinations, public attributes, code prefixes, inequalities,
 * sums, ratios, difference ranges, entity ranges, not-equal, blank together, structural zeros, then the declared rules (at most 1,000 in all, declared kept first).
 *
 * Criteria (thresholds in {@link RULE_LIMITS}, tuned on the tests' real tables):
 * - **Fixed combinations, A -> B**: code-book columns (categorical, or point-binned), the first
 *   60. Among rows where A's value repeats, the majority B per A value covers >= 99% of them; the
 *   rows off it are at most 10% of the repeated rows off B's mode (B near-constant proves
 *   nothing); and every repeated group being consistent under independence, prod_g sum_b
 *   p_b^{m_g}, has chance below 1e-6 (a near-unique A determines everything by chance).
 *   One-to-one columns form a class (one rule from its first column to each other member);
 *   between classes A -> C is dropped when A -> B -> C. Released: see `./combinations`.
 * - **Catalog**, key -> attributes (`./catalog`): any columns but identifiers, the first 60, on raw
 *   values (a quantile-binned total can be an attribute). A key is a column whose rows on values
 *   seen in >= k rows are >= 50% of its present rows; it decides B by the A -> B criteria above.
 *   A catalog is kept when its key decides two columns or more, or one of its columns has no code
 *   book (one code-book attribute stays a fixed-combinations rule), and its released entries (key
 *   values seen in >= k rows with their majority attributes, seen in >= k rows) hold >= 50% of the
 *   key's present rows: a key of mostly single rows (each country once) has no catalog, since an
 *   entry of one row is that row. One-to-one keys make one catalog (the first column is its key);
 *   a catalog inside another is dropped; a fixed-combinations rule inside a catalog is dropped.
 *   A composite key (`key_columns` 2): a pair of key columns with one code per value (the first
 *   12, categorical first), neither deciding the other, that decides columns neither decides
 *   alone (origin, destination -> distance), by the same criteria on the pair read as one column;
 *   it holds no other rule (its rows on unreleased pairs are left as generated).
 * - **Sparse combinations** (no dependency), both columns with >= 3 values: distinct pairs <= 0.5
 *   E, E = sum_{a,b} 1 - (1 - p_a p_b)^n; or sparse by concentration where rare values hide that
 *   (`./combinations`). Pairs sharing a column merge into groups of at most 4 columns while the
 *   group stays sparse. Released: the code tuples seen in >= k rows; at most 100,000 per rule.
 * - **Public attribute** (`./public-attribute`): a column holding a public reference attribute of a
 *   key column of public vocabulary (US state, country: postal code, FIPS number, capital, ISO 3166
 *   codes) in >= 95% of the rows with both, for >= 3 keys; identifiers included, no repeats needed.
 *   Embedded codes: an identifier holding a public-code column's value at one character offset
 *   in >= 95% of rows (FEC candidate ids and their state).
 * - **Code prefix** (`./code-prefix`): a code column (identifier or categorical, no spaces) whose
 *   shortest prefix of 1-4 characters shared by other codes names the code's category: over
 *   distinct codes, >= 50% share a prefix, and of those the prefix's commonest category holds
 *   >= 90% (<= 60% with the category shuffled); no column another rule writes.
 * - **Calendar** (`./calendar`): year, month and day columns that form valid dates in >= 99% of
 *   the rows where independence would put rows past a month's end, or whose dates' weekdays a
 *   fourth column writes in >= 99% of its rows.
 * - **Datetime part** (`./datetime-part`): a numerical or categorical column of 2-400 values
 *   that writes the year, quarter, month, day, weekday or hour (hours only of a format writing
 *   them) of a datetime column in >= 99% of its >= 10 rows with both and of its >= 5 rows off
 *   its mode, in a spelling of {@link detectDatetimeParts}. A calendar naming a part is dropped
 *   (`withoutShadows`); other rules on the part stay (the enforcer holds the part for them).
 * - **Elapsed time** (`./elapsed`): a numerical column equal to the time between two datetime
 *   columns counted in days, weeks, years (365.25, 365 or 365.2425 days), hours, minutes or
 *   seconds at its decimals (rounded to the nearest or down) in >= 95% of its >= 30 rows with all
 *   three and of its >= 10 such rows off its mode. Rules naming the number but blanks, keys and
 *   code books are dropped (the number is written from its datetimes).
 * - **Inequality** high >= low (> when no row has them equal): two numerical or two datetime
 *   columns, >= 10 rows with both, share >= 0.99; skipped when it follows from the ranges, when
 *   the columns are equal in >= 99% of rows, or when low shuffled once (seeded) keeps it in >= 95%.
 * - **Sum and linear identity** x·A + y·B + z·C = k, and of one part x·A + y·C = k (x, y, z =
 *   ±1): the first 60 numerical columns, within `identityTolerance` of the decimals; k from a
 *   precheck on 64 spread rows, then share >= 0.99 over all rows and on each column's rows off
 *   its mode (>= 5), so a near-constant column never joins an identity that holds without it
 *   (`./sum`). A pair or triple stops once it fails in over 1% of rows. Pairs first (adjclose =
 *   close, floor = level - 1); triples only of columns no pair derives. A one-part identity
 *   whose columns a catalog or fixed-combinations rule holds is dropped (that rule keeps it); an
 *   inequality between the two columns of C = A + k is dropped (the identity implies it). Then
 *   weighted ones, A ± B ± w·C = k with w a small unit (2, 7, 10, 12, 24, 60, 100, 1000, 3600,
 *   0.5, 0.1, 0.01, 0.001), of triples with no plain identity, judged the same way.
 * - **Ratio and product identity** C = k·A^±1·B^±1, C = k·A^±1 (`./ratio`): non-negative
 *   numerical columns (the first 60), the linear search in log space (tolerance from the
 *   columns' decimals), share >= 0.99 over >= 10 rows with all > 0 and on each column's rows off
 *   its mode; the total is no sum's total and in no catalog or fixed-combinations rule; a pair of
 *   factor 1 is left to sums; dropped when its total shuffled keeps it in >= 50% of rows. A band
 *   C = f·A·B, f in [min, max] (max/min <= 2), of three columns no identity derives, when its
 *   log window is <= 1/4 of the shuffled total's and <= 1/2 of each pair's, holds a power of
 *   ten, over >= 99% of rows.
 * - **Difference range** (`./difference`): two numerical (the first 40) or two datetime columns
 *   in no sum and no inequality with a third column, >= 30 rows with both, whose difference's
 *   [min, max] (else its range less 0.5% at each end, holding >= 99% of rows) is at most 1/4 of
 *   that window once the first column is shuffled.
 * - **Entity range** (`./entity-range`): a numerical column (the first 60) in no catalog, fixed
 *   combinations, calendar or difference range, no sum's or ratio's total, not a one-column
 *   `unique` key (row numbers); an entity column (categorical, or a code-book number of a detected
 *   multi-column `unique` key) whose values seen in >= k rows hold >= 50% of its present rows,
 *   with >= 30 rows on such values:
 *   the entities explain >= 90% of the number's variance (epsilon squared; on its log when
 *   positive and skewed). One rule per number; each entity of >= k rows releases its [min, max].
 * - **Name and sex** (`./name-gender`): a text column whose first names the public lists know in
 *   >= 25% of rows, beside a categorical column of 2-3 values, one written with >= 90% women's
 *   first names and one with >= 90% men's (>= 5 rows each).
 * - **Template** (`./template`): a text column (categorical or identifier) in no declared rule
 *   whose cells are the row's other cells written into one fixed text (`{x}-{y}`, `M {mag:.1f} -
 *   {place}`) in >= 95% of its >= 30 non-blank rows; detected rules naming that column are
 *   dropped (a title that decides its place is the place written into it).
 * - **Not equal**: two categorical columns whose value sets overlap in >= 50% of the smaller,
 *   different in >= 99.9% of rows with both, where independence predicts >= 5 equal rows.
 * - **Blank together**: columns each blank in >= 5 rows and not in all, agreeing in >= 99.9% of
 *   rows; pairs join into groups of up to 16 columns while the group still agrees. A template's
 *   written column is left out (the template writes it blank where its source cells all are).
 * - **Unique** (SDV's `Unique`, a table's key, `./unique`): a categorical, datetime or integer
 *   column distinct in all of >= 20 rows, none blank (a datetime or integer one only where it
 *   fills half its grid); a pair (else a triple) of code-book columns, none a key alone, distinct
 *   together where independence predicts >= 7 repeats. Kept by sampling, not by the decoder.
 * - **Structural zeros** (Private-PGM's, `./structural-zeros`): per pair of code-book columns
 *   where neither determines the other and no fixed-combinations rule holds both. The values are
 *   frequent or decide their partner, so a pair releases no rare row. Then per pair of a column of
 *   interval bins with blanks and a code-book column, the binned column read as blank or filled
 *   (`./combinations` `blankZeros`: a station count left blank beside one network's magnitude type).
 *
 * Declared rules take the same kinds of columns and are computed like detected ones, with `share`
 * 1: a row that breaks one is a DataError naming the column, the 1-based line ({@link lineOfRow})
 * and the values. A fixed-combinations rule without a determinant cannot be broken.
 *
 * Cost: O(P · n) for P <= C(60, 2) column pairs, plus the sum's precheck over C(60, 3) triples
 * and its subset-sum search (<= 200,000 nodes per total, 8 rows), the ratio precheck over C(60, 3)
 * triples on 64 rows;
 * memory O(distinct values + n) transient per pair.
 * @param scanned the scan `enc` was encoded from (value ids per row, distinct values).
 * @param enc the encoded table: kinds and code books (combinations are released as codes).
 * @throws DataError for a declared rule the data breaks or that names a missing column or one of
 *   the wrong kind; RangeError for a bad rareThreshold.
 */
export function detectRules(scanned: ScannedTable, enc: EncodedTable, opts: DetectOptions = {}): Rule[] {
  const k = opts.rareThreshold ?? DEFAULTS.rareThreshold;
  if (!(Number.isInteger(k) && k >= 1)) throw new RangeError("rareThreshold must be an integer >= 1");
  const n = scanned.n;
  const cols = columnsOf(scanned, enc);
  const declared = (opts.declare ?? []).map((d) => declaredRule(d, cols, scanned, n, k));
  const ids = new Set(declared.map(ruleId));
  let detected: Rule[] = [];
  if (opts.detect !== false && n > 0) {
    const zeros: StructuralZerosRule[] = [];
    const all = detectCatalogs(cols, n, k);
    // A composite key leaves its rows on unreleased pairs as generated: it holds no other rule.
    const catalogs = all.filter((r) => (r.key_columns ?? 1) === 1);
    const combinations = detectCombinations(cols, enc, n, k, zeros).filter((r) => !heldByCatalog(r, catalogs));
    const sums = detectSums(cols, n).filter((r) => r.parts.length > 1 || !heldByCodeBook([r.total, ...r.parts], [...catalogs, ...combinations]));
    const ratios = detectRatios(cols, n, [...sums, ...catalogs, ...combinations], opts.seed ?? 23);
    const calendars = detectCalendars(cols, n);
    // A template's column is the other cells written out: rules on it are its sources' shadows,
    // but a catalog it keys decides its sources together (dept -> dept_name, state), so it stays;
    // columns blank together are found without it (coordinates blank together with their point).
    const templates = detectTemplates(cols, n, new Set(declared.flatMap(ruleColumns)));
    const written = new Set(templates.map((t) => t.columns[0]));
    const inequalities = detectInequalities(cols, n, opts.seed ?? 23).filter((r) => !sums.some((s) => s.parts.length === 1 && (s.signs?.[0] ?? 1) === 1 && [s.total, s.parts[0]].every((c) => c === r.high || c === r.low)));
    const differences = detectDifferences(cols, n, [...sums, ...ratios, ...inequalities, ...catalogs, ...combinations, ...calendars], opts.seed ?? 23);
    const uniques = detectUnique(cols, n);
    const attributes = [...detectPublicAttributes(cols, n, catalogs), ...detectEmbeddedCodes(cols, n)];
    detected = [
      ...all,
      ...combinations,
      ...attributes,
      ...detectCodePrefixes(cols, n, k, [...attributes, ...templates]),
      ...detectNameGender(cols, n),
      ...detectNameCountry(cols, n),
      ...calendars,
      ...inequalities,
      ...sums,
      ...ratios,
      ...differences,
      ...detectEntityRanges(cols, n, k, [...all, ...combinations, ...calendars, ...sums, ...ratios, ...differences, ...uniques]),
      ...detectNotEqual(cols, n),
      ...detectBlankTogether(cols.filter((c) => !written.has(c.name)), n),
      ...[...uncovered(zeros, [...catalogs, ...combinations]), ...blankZeros(cols, n)].slice(0, RULE_LIMITS.maxZeroRules),
      ...uniques,
    ];
    // A datetime part's column is written from its datetime: rules of the datetime deciding it are shadows.
    const parts = detectDatetimeParts(cols, n, new Set(declared.flatMap(ruleColumns)));
    const allParts = [...parts, ...declared.filter((r): r is DatetimePartRule => r.type === "datetime_part")];
    detected = [...withoutShadows(detected, allParts), ...parts];
    // An elapsed time is written from its two datetimes: ranges, orders and identities of the number are its shadows.
    const elapsed = detectElapsed(cols, n).filter((r) => !declared.some((d) => ruleColumns(d).includes(r.columns[0])));
    const counted = new Set(elapsed.map((r) => r.columns[0]));
    detected = [...detected.filter((r) => BESIDE_ELAPSED.has(r.type) || !ruleColumns(r).some((c) => counted.has(c))), ...elapsed];
    const keyed = (r: Rule): boolean => r.type === "catalog" && (r.key_columns ?? 1) === 1 && written.has(r.key) && !r.columns.slice(1).some((c) => written.has(c));
    detected = [...detected.filter((r) => keyed(r) || !ruleColumns(r).some((c) => written.has(c))), ...templates];
  }
  const drop = new Set(opts.drop ?? []);
  const names = { value_mappings: Object.fromEntries(enc.codecs.map((c) => [c.name, c.mapping])), column_stats: Object.fromEntries(enc.codecs.map((c) => [c.name, c.stats])) };
  detected = detected.filter((r) => !ids.has(ruleId(r)) && !drop.has(ruleId(r)) && !drop.has(describeRule(r, names)));
  return [...detected.slice(0, Math.max(0, MAX_RULES - declared.length)), ...declared];
}

/**
 * Rules kept beside an elapsed time's number: blanks and keys (the number is written only where
 * drawn filled) and code books (a catalog keyed by the number writes its dates with it, so both
 * agree).
 */
const BESIDE_ELAPSED: ReadonlySet<Rule["type"]> = new Set(["blank_together", "structural_zeros", "unique", "catalog", "fixed_combinations"]);

/** Rules of one table (the contract's `metadata.rules` MaxItems). */
const MAX_RULES = 1000;

/** True when a catalog or fixed-combinations rule of `rules` holds every one of `columns`. */
function heldByCodeBook(columns: readonly string[], rules: readonly Rule[]): boolean {
  return rules.some((r) => (r.type === "fixed_combinations" || r.type === "catalog") && columns.every((c) => r.columns.includes(c)));
}

/**
 * `rules` less the calendars naming a column of a datetime-part rule of `parts` (its date is
 * the datetime's, valid by construction). Every other rule stays: a catalog or fixed
 * combinations of the datetime and its parts keep the server's draws consistent before raking,
 * and rules between a part and other columns (weekday and workingday) are kept by the enforcer
 * around the part, which it holds like a fixed cell.
 */
function withoutShadows(rules: readonly Rule[], parts: readonly DatetimePartRule[]): Rule[] {
  const written = new Set(parts.map((p) => p.columns[1]));
  return rules.filter((r) => r.type !== "calendar" || !r.columns.some((c) => written.has(c)));
}

/** Structural zeros whose columns no fixed-combinations or catalog rule holds (that forbids them already). */
function uncovered(zeros: StructuralZerosRule[], combinations: Rule[]): StructuralZerosRule[] {
  return zeros.filter((z) => !heldByCodeBook(z.columns, combinations));
}
