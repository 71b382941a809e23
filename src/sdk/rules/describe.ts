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
  | { type: "blank_together"; columns: readonly string[] };

/**
 * A rule's stable id: `type:` then its columns joined by commas, in the rule's order:
 * `fixed_combinations:education,education-num` (determinant first, then the other columns in table
 * order), `inequality:high,low`, `sum:total,a,b`, `not_equal:a,b`, `blank_together:a,b,c`. Shares,
 * counts and combinations are not part of it, so the id of a rule stays the same when the data
 * changes a little.
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
  }
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
 * `not equal: origin != destination`, `blank together: a, b`. The share of rows that keep the
 * rule is added when it is below 1 (`share`, floored to 0.1%); a declared rule ends with
 * `(declared)`.
 * @param metadata the table's metadata (unused today: the rule names its columns; kept so that a
 *   description can grow units or value names without changing callers).
 */
export function describeRule(rule: Rule, metadata?: Metadata): string {
  void metadata;
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
      return `sum: ${rule.total} = ${rule.parts.join(" + ")}${share ? ` (${share} of rows)` : ""}${tail}`;
    case "not_equal":
      return `not equal: ${rule.columns.join(" != ")}${share ? ` (${share} of rows)` : ""}${tail}`;
    case "blank_together":
      return `blank together: ${rule.columns.join(", ")}${share ? ` (${share} of rows)` : ""}${tail}`;
  }
}
