/**
 * Row rules in words (`synthd fit` prints one line per rule) and their stable ids (the SDK's
 * `rules.drop` option matches them). Shapes of the rules: src/contract/index.ts (`Rule`), docs/api.md
 * "Row rules".
 */
import type { Metadata, Rule } from "../../contract";

/** The fields a rule's id is made of: its type and columns (a declared rule has the same id as the detected one). */
export type RuleKey =
  | { type: "fixed_combinations"; columns: readonly string[]; determinant?: string }
  | { type: "inequality"; high: string; low: string }
  | { type: "sum"; total: string; parts: readonly string[] }
  | { type: "not_equal"; columns: readonly string[] }
  | { type: "blank_together"; columns: readonly string[] }
  | { type: "structural_zeros"; columns: readonly string[] };

/**
 * A rule's stable id: `type:` then its columns joined by commas, in the rule's order:
 * `fixed_combinations:education,education-num` (determinant first, then the other columns in table
 * order), `inequality:high,low`, `sum:total,a,b` (a linear identity too: its signs and constant
 * are not part of it), `not_equal:a,b`, `blank_together:a,b,c`, `structural_zeros:a,b`. Shares,
 * counts, combinations and pairs are not part of it, so the id of a rule stays the same when the
 * data changes a little.
 */
export function ruleId(rule: RuleKey): string {
  switch (rule.type) {
    case "fixed_combinations": {
      const d = rule.determinant;
      const cols = d === undefined ? rule.columns : [d, ...rule.columns.filter((c) => c !== d)];
      return `fixed_combinations:${cols.join(",")}`;
    }
    case "inequality":
      return `inequality:${rule.high},${rule.low}`;
    case "sum":
      return `sum:${rule.total},${rule.parts.join(",")}`;
    case "not_equal":
      return `not_equal:${rule.columns.join(",")}`;
    case "blank_together":
      return `blank_together:${rule.columns.join(",")}`;
    case "structural_zeros":
      return `structural_zeros:${rule.columns.join(",")}`;
  }
}

/** The value pairs a structural-zeros line lists; the rest are counted. */
const LISTED_PAIRS = 4;

/**
 * The right side of a sum or linear identity: `a + b`, `age - education - 6`, `100 - a - b`
 * (the constant first when both parts are subtracted).
 */
export function identityText(parts: readonly string[], signs: readonly number[] | undefined, constant: number | undefined): string {
  const s = signs ?? [1, 1];
  const k = constant ?? 0;
  const terms = parts.map((p, j) => ({ p, neg: s[j] < 0 }));
  let text: string;
  if (terms.every((t) => t.neg)) text = `${k}${terms.map((t) => ` - ${t.p}`).join("")}`;
  else {
    const first = terms.findIndex((t) => !t.neg);
    const order = [terms[first], ...terms.filter((_, j) => j !== first)];
    text = order.map((t, j) => (j === 0 ? t.p : `${t.neg ? "-" : "+"} ${t.p}`)).join(" ");
    if (k !== 0) text += ` ${k < 0 ? "-" : "+"} ${Math.abs(k)}`;
  }
  return text;
}

/** Code -> value text of a column's `value_mappings` (the first text of each code), or the code itself. */
function valueNamer(metadata: Pick<Metadata, "value_mappings"> | undefined, column: string): (code: number) => string {
  const names: string[] = [];
  for (const [text, code] of Object.entries(metadata?.value_mappings?.[column] ?? {})) if (names[code] === undefined) names[code] = text;
  return (code) => names[code] ?? `code ${code}`;
}

/** 1204 -> "1,204". */
function thousands(x: number): string {
  return String(x).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** A share as a percentage with one decimal, rounded down so that 0.9996 reads 99.9%, not 100.0%. */
export function percent(share: number): string {
  return `${(Math.floor(share * 1000 + 1e-9) / 10).toFixed(1)}%`;
}

/**
 * One line describing a rule, for `synthd fit`, using the columns' names:
 * `fixed combinations: education -> education-num (16 combinations)`,
 * `fixed combinations: (city, state), 1,204 combinations, 97.1% of rows`,
 * `inequality: max_temp >= min_temp (99.2% of rows)`, `sum: total = a + b`,
 * `sum: experience = age - education - 6`, `not equal: origin != destination`,
 * `blank together: a, b`, `structural zeros: (relationship, sex) never (Husband, Female), (Wife,
 * Male)` (at most 4 pairs listed, then `and N more`). The share of rows that keep the rule is
 * added when it is below 1 (`share`, floored to 0.1%); a declared rule ends with `(declared)`.
 * @param metadata the table's `value_mappings` name the values of structural zeros (without them,
 *   their codes: `code 3`).
 */
export function describeRule(rule: Rule, metadata?: Pick<Metadata, "value_mappings">): string {
  const share = rule.share < 1 ? percent(rule.share) : undefined;
  const tail = rule.declared ? " (declared)" : "";
  switch (rule.type) {
    case "fixed_combinations": {
      const n = `${thousands(rule.combinations.length)} combination${rule.combinations.length === 1 ? "" : "s"}`;
      if (rule.determinant !== undefined) {
        const others = rule.columns.filter((c) => c !== rule.determinant);
        return `fixed combinations: ${rule.determinant} -> ${others.join(", ")} (${n}${share ? `, ${share} of rows` : ""})${tail}`;
      }
      return `fixed combinations: (${rule.columns.join(", ")}), ${n}${share ? `, ${share} of rows` : ""}${tail}`;
    }
    case "inequality":
      return `inequality: ${rule.high} ${rule.strict ? ">" : ">="} ${rule.low}${share ? ` (${share} of rows)` : ""}${tail}`;
    case "sum":
      return `sum: ${rule.total} = ${identityText(rule.parts, rule.signs, rule.constant)}${share ? ` (${share} of rows)` : ""}${tail}`;
    case "not_equal":
      return `not equal: ${rule.columns.join(" != ")}${share ? ` (${share} of rows)` : ""}${tail}`;
    case "blank_together":
      return `blank together: ${rule.columns.join(", ")}${share ? ` (${share} of rows)` : ""}${tail}`;
    case "structural_zeros": {
      const [na, nb] = rule.columns.map((c) => valueNamer(metadata, c));
      const listed = rule.pairs.slice(0, LISTED_PAIRS).map(([a, b]) => `(${na(a)}, ${nb(b)})`);
      const more = rule.pairs.length > LISTED_PAIRS ? ` and ${thousands(rule.pairs.length - LISTED_PAIRS)} more` : "";
      return `structural zeros: (${rule.columns.join(", ")}) never ${listed.join(", ")}${more}${share ? ` (${share} of rows)` : ""}${tail}`;
    }
  }
}
