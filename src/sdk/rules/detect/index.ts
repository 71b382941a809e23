/**
 * Row rules (`docs/decisions.md` "Rows, not only marginals"): the rules every real row keeps (or
 * nearly every row: detection tolerates a little dirty data and says how much in `share`), found from
 * the scan of the raw table, plus the rules the user declares (`rules.declare`), checked against
 * every row. Shapes: src/contract/index.ts (`Rule`); the user's view: docs/api.md "Row rules".
 *
 * Work is done on the scan's per-row value ids (`ColumnScan.ids`) and distinct values, never a
 * string per cell: pair statistics are joint counts of value ids, numbers are parsed once per
 * distinct value. Identifier columns (`kind: "id"`) take part in no rule. Detection runs on raw
 * tables only: with a domain (already-discretized codes) or differential privacy nothing is
 * detected, because rules read from raw rows are not private (`analyzeTable` skips it).
 *
 * Detection never drops a row: rows that break a tolerant rule stay in the marginals; only the
 * combinations released by a fixed-combinations rule leave out the rare ones.
 */
import type { Rule, StructuralZerosRule } from "../../../contract";
import { DEFAULTS, type EncodedTable, type ScannedTable } from "../../metadata/encoded";
import { describeRule, ruleId } from "../describe";
import type { DetectOptions } from "./options";
import { columnsOf } from "./view";
import { detectCombinations } from "./combinations";
import { detectInequalities } from "./inequality";
import { detectSums } from "./sum";
import { detectNotEqual } from "./not-equal";
import { detectBlankTogether } from "./blank-together";
import { declaredRule } from "./declared";
import { RULE_LIMITS } from "./options";

export { RULE_LIMITS, type DeclaredRule, type DetectOptions, type RuleOptions } from "./options";
export { lineOfRow } from "./declared";

/**
 * The row rules of a raw table: the detected ones (unless `opts.detect` is false) less those
 * `opts.drop` names, plus the declared ones (`opts.declare`), which replace a detected rule of the
 * same id ({@link ruleId}). Order: fixed combinations, inequalities, sums, not-equal, blank
 * together, structural zeros, then the declared rules (at most 1,000 rules in all; declared ones
 * are kept first).
 *
 * Criteria (thresholds in {@link RULE_LIMITS}; tuned on the real tables of the tests: UCI Adult,
 * cars, airports, flights, species, github):
 * - **Fixed combinations, functional dependency A -> B**: A and B have a code book of values
 *   (categorical, or numerical/datetime with point bins: no `bin_edges`), at most the first 60
 *   such columns. Among the rows where A is present and its value repeats (singletons carry no
 *   evidence), the majority B per A value covers >= 99% of the rows; the rows off it are at most
 *   10% of the repeated rows off B's most frequent value (B near-constant proves nothing); B is
 *   not constant there; and the chance that every consistent repeated group is consistent under
 *   independence, prod_g sum_b p_b^{m_g} (p_b: B's share of all rows, m_g: the group's rows),
 *   is below 1e-6 (a near-unique A "determines" everything by chance). One-to-one columns
 *   (education <-> education-num) form a class: one rule from its first column to each other
 *   member; between classes, A -> C is dropped when A -> B and B -> C hold (transitivity).
 *   Released: (code of a, code of f(a)) for each a with a code of its own (not `__other__`, not
 *   blank) seen in >= k rows with f(a); `share` = rows with A present whose B is f(A).
 * - **Sparse combinations** (no dependency either way), both columns with >= 3 non-blank values:
 *   observed distinct value pairs <= 0.5 E, E = sum_{a,b} 1 - (1 - p_a p_b)^n the distinct pairs
 *   independence predicts; or, where rare values hide that (airports: most city names occur once,
 *   and a count-2 value can never have fewer than half its expected distinct partners), sparse by
 *   concentration: among the rows whose values both have a code of their own, the rows on
 *   combinations seen >= k times are >= 10 times the share independence puts there, >= 20% of
 *   those rows and >= 30 rows (`concentrated`). Sparse pairs that share a column merge into groups of at most 4
 *   columns while the group's distinct tuples stay <= 0.5 of its E. Released: the code tuples seen
 *   in >= k rows (pooled and blank codes included), with counts; `share` = rows whose tuple is
 *   released. A rule with more than 100,000 combinations is skipped.
 * - **Inequality** high >= low (> when no row has them equal): two numerical or two datetime
 *   columns (datetimes compared in parsed seconds), rows where both are present (>= 10 of them),
 *   share >= 0.99; skipped when it follows from the ranges (min high >= max low), when the
 *   columns are equal in >= 99% of rows, or when it holds nearly as often by chance: low shuffled
 *   once (seeded, `../prng`) keeps it in >= 95% of rows.
 * - **Sum and linear identity** x·A + y·B + z·C = k (x, y, z = ±1, k a constant): numerical columns
 *   (the first 40), rows with all three present, |x·a + y·b + z·c - k| <= half a unit of the finest
 *   decimals of the three. k is the value at least half of 64 rows spread over the table give (a
 *   precheck: no such value, no identity); then the share over all rows >= 0.99 (>= 10 rows), and,
 *   per column, on the rows where it is off its most frequent value (a part that is 0 in 99% of
 *   rows is judged where it is not 0): >= 5 such rows, share >= 0.99 there, so a near-constant
 *   column never joins an identity that holds without it. One identity per triple. Written as a
 *   plain sum `total = a + b` when one column's sign differs from the others' and k = 0 (that
 *   column is the total), else with the last of the three columns as `total`, `signs` and
 *   `constant` (experience = age - education - 6). A triple stops once it failed in more than 1%
 *   of all rows.
 * - **Not equal**: two categorical columns whose non-blank value sets overlap in >= 50% of the
 *   smaller set, different in >= 99.9% of the rows where both are present, where independence
 *   predicts at least 5 equal rows.
 * - **Blank together**: non-identifier columns each blank in >= 5 rows and not in every row,
 *   agreeing (all blank or none) in >= 99.9% of rows; pairs join into groups of up to 16 columns
 *   when the group still agrees in >= 99.9% of rows.
 * - **Structural zeros** (Private-PGM's): per pair of fixed-combination columns where neither
 *   determines the other and no fixed-combinations rule holds both, the pairs of non-blank values
 *   with a code of their own (not pooled) that the real rows hold in fewer than 1% of the rows
 *   independence predicts (E = n_a n_b / n), where E >= 30 (relationship Husband with sex Female in
 *   UCI Adult; empty by chance with probability about e^-E), or where the value a holds one value
 *   b* of the other column in >= 99% of its rows and would by chance with probability
 *   p_b*^n_a < 1e-6 (a conditional functional dependency: workclass `?` -> occupation `?` forbids
 *   `?` with every occupation it never holds, however rare), both directions. The values are
 *   frequent or decide their partner, so a pair releases no rare row. At most 1,000 pairs a rule
 *   (the largest E), 200 rules. `share` = rows outside the pairs.
 *
 * Declared rules take the same kinds of columns (a column the table lacks, an identifier or a
 * column of the wrong kind is a DataError) and are computed like detected ones, with `share` 1:
 * a row that breaks one (A -> B: a value of A with two tuples of B; inequality, sum, not equal,
 * blank together: any row) is a DataError naming the column, the 1-based line ({@link lineOfRow})
 * and the values. A fixed-combinations rule without a determinant cannot be broken.
 *
 * Cost: time O(P · n) for P <= C(60, 2) column pairs (each pair's joint counts of value ids,
 * dense or a Map of at most n keys; the structural zeros reuse them), plus O(T · 4 · 64) for the
 * sum's precheck of T <= C(40, 3) triples and O(n/100) to O(n) for each triple that passes it
 * (early exit); memory O(distinct values + n) transient per pair (the inequality's shuffle holds
 * 12 bytes a row), never a string per cell.
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
    const combinations = detectCombinations(cols, enc, n, k, zeros);
    detected = [
      ...combinations,
      ...detectInequalities(cols, n, opts.seed ?? 23),
      ...detectSums(cols, n),
      ...detectNotEqual(cols, n),
      ...detectBlankTogether(cols, n),
      ...uncovered(zeros, combinations).slice(0, RULE_LIMITS.maxZeroRules),
    ];
  }
  const drop = new Set(opts.drop ?? []);
  const names = { value_mappings: Object.fromEntries(enc.codecs.map((c) => [c.name, c.mapping])) };
  detected = detected.filter((r) => !ids.has(ruleId(r)) && !drop.has(ruleId(r)) && !drop.has(describeRule(r, names)));
  return [...detected.slice(0, Math.max(0, MAX_RULES - declared.length)), ...declared];
}

/** Rules of one table (the contract's `metadata.rules` MaxItems). */
const MAX_RULES = 1000;

/** The structural zeros whose two columns no fixed-combinations rule holds together (that rule already forbids every pair it does not release). */
function uncovered(zeros: StructuralZerosRule[], combinations: Rule[]): StructuralZerosRule[] {
  const covered = (z: StructuralZerosRule) => combinations.some((r) => r.type === "fixed_combinations" && z.columns.every((c) => r.columns.includes(c)));
  return zeros.filter((z) => !covered(z));
}
