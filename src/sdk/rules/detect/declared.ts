/**
 * Declared rules (`rules.declare`): each computed from the data like a detected one, or a
 * DataError naming the row that breaks it ({@link lineOfRow}).
 */
import type { BlankTogetherRule, InequalityRule, NotEqualRule, Rule, SumRule } from "../../../contract";
import { DataError } from "../../errors";
import { fileOfDescription } from "../../io/csv";
import type { ScannedTable } from "../../metadata/encoded";
import { ruleId } from "../describe";
import { RULE_LIMITS, type DeclaredRule } from "./options";
import { combinable, type Breach, type Col } from "./view";
import { combinationsRule, determinedRule } from "./combinations";
import { sumHolds } from "./sum";
import { notEqualCounts, sameValues } from "./not-equal";
import { blankAgreement } from "./blank-together";

/**
 * The 1-based file line of row `row`: exact for a row holding the first occurrence of some value
 * (`ColumnScan.firstLines`), else that of the last such row before it plus the rows between (exact
 * unless a quoted cell spans lines or a blank line lies between them). Cost O(row · columns).
 */
export function lineOfRow(scanned: ScannedTable, row: number): number {
  let bestRow = -1;
  let bestLine = row + 2;
  for (const s of scanned.scans) {
    const seen = new Uint8Array(s.values.length);
    for (let r = 0; r <= row; r++) {
      const id = s.ids[r];
      if (seen[id]) continue;
      seen[id] = 1;
      if (r > bestRow) {
        bestRow = r;
        bestLine = s.firstLines[id];
      }
    }
  }
  return bestRow < 0 ? row + 2 : bestLine + (row - bestRow);
}

/** A declared rule's columns, checked: present, not identifiers, of the kinds the rule needs. */
function declaredColumns(cols: Col[], names: unknown, what: string, source: string, ok: (c: Col) => boolean, kinds: string): Col[] {
  if (!Array.isArray(names) || names.some((x) => typeof x !== "string")) {
    throw new DataError(`The declared rule ${what} must name its columns as strings.`);
  }
  return (names as string[]).map((name) => {
    const c = cols.find((x) => x.name === name);
    if (!c) {
      throw new DataError(`${source} has no column "${name}", which the declared rule ${what} names (columns: ${cols.map((x) => x.name).join(", ")}).`, {
        column: name,
        file: fileOfDescription(source),
      });
    }
    if (!ok(c)) {
      throw new DataError(`The declared rule ${what} needs ${kinds} columns, but column "${name}" is ${c.codec.kind}${c.codec.stats.bin_edges ? " with quantile bins" : ""}.`, {
        column: name,
        file: fileOfDescription(source),
      });
    }
    return c;
  });
}

function breachError(scanned: ScannedTable, rule: Rule, b: Breach): DataError {
  const line = lineOfRow(scanned, b.row);
  return new DataError(
    `${scanned.source}, line ${line}, column "${b.column}": the declared rule "${ruleId(rule)}" does not hold: ${b.detail}; ` +
      `fix the row or drop the rule from rules.declare.`,
    { column: b.column, line, file: fileOfDescription(scanned.source) },
  );
}

function quoted(c: Col, r: number): string {
  return `${c.name} = ${JSON.stringify(c.scan.values[c.scan.ids[r]])}`;
}

/** Computes a declared rule from the data, or throws (see {@link detectRules}). */
export function declaredRule(d: DeclaredRule, cols: Col[], scanned: ScannedTable, n: number, k: number): Rule {
  const source = scanned.source;
  const what = JSON.stringify(d);
  const notId = (c: Col): boolean => c.codec.kind !== "id";
  switch (d?.type) {
    case "fixed_combinations": {
      const cs = declaredColumns(cols, d.columns, what, source, combinable, "categorical (or numerical/datetime with one code per value)");
      if (cs.length < 2 || cs.length > RULE_LIMITS.groupColumns || new Set(cs).size !== cs.length) {
        throw new DataError(`The declared rule ${what} needs 2 to ${RULE_LIMITS.groupColumns} different columns.`);
      }
      cs.sort((a, b) => a.f - b.f);
      if (d.determinant !== undefined) {
        const det = cs.find((c) => c.name === d.determinant);
        if (!det) throw new DataError(`The declared rule ${what}: the determinant "${d.determinant}" is not one of its columns.`, { column: d.determinant });
        const out = determinedRule(cs, det, n, k);
        if (!out) throw new DataError(`The declared rule ${what} has more than ${RULE_LIMITS.maxCombinations} combinations.`);
        if (out.breach) throw breachError(scanned, out.rule, out.breach);
        return { ...out.rule, declared: true };
      }
      const rule = combinationsRule(cs, n, k);
      if (!rule) throw new DataError(`The declared rule ${what} has more than ${RULE_LIMITS.maxCombinations} combinations.`);
      return { ...rule, declared: true };
    }
    case "inequality": {
      const [high, low] = declaredColumns(cols, [d.high, d.low], what, source, (c) => c.num !== undefined && notId(c), "numerical or datetime");
      if (high.codec.kind !== low.codec.kind) throw new DataError(`The declared rule ${what} compares a ${high.codec.kind} column with a ${low.codec.kind} one.`, { column: low.name });
      if (high === low) throw new DataError(`The declared rule ${what} compares a column with itself.`, { column: high.name });
      const strict = d.strict === true;
      for (let r = 0; r < n; r++) {
        const x = high.num![high.scan.ids[r]];
        const y = low.num![low.scan.ids[r]];
        if (Number.isNaN(x) || Number.isNaN(y) || (strict ? x > y : x >= y)) continue;
        const rule: InequalityRule = { type: "inequality", high: high.name, low: low.name, strict, share: 0 };
        throw breachError(scanned, rule, { row: r, column: high.name, detail: `${quoted(high, r)} is not ${strict ? ">" : ">="} ${quoted(low, r)}` });
      }
      return { type: "inequality", high: high.name, low: low.name, strict, share: 1, declared: true };
    }
    case "sum": {
      if (!Array.isArray(d.parts) || d.parts.length !== 2) throw new DataError(`The declared rule ${what} needs two parts.`);
      const [total, a, b] = declaredColumns(cols, [d.total, ...d.parts], what, source, (c) => c.codec.kind === "numerical" && c.num !== undefined, "numerical");
      if (new Set([total, a, b]).size !== 3) throw new DataError(`The declared rule ${what} needs three different columns.`);
      const s = sumHolds(total, a, b, n, 0);
      if (s.fails > 0) {
        const rule: SumRule = { type: "sum", total: total.name, parts: [a.name, b.name], share: 0 };
        const r = s.firstFail;
        throw breachError(scanned, rule, { row: r, column: total.name, detail: `${quoted(total, r)} is not ${quoted(a, r)} + ${quoted(b, r)}` });
      }
      return { type: "sum", total: total.name, parts: [a.name, b.name], share: 1, declared: true };
    }
    case "not_equal": {
      const cs = declaredColumns(cols, d.columns, what, source, notId, "non-identifier");
      if (cs.length !== 2 || cs[0] === cs[1]) throw new DataError(`The declared rule ${what} needs two different columns.`);
      const [A, B] = cs;
      const c = notEqualCounts(A, B, n, sameValues(A, B));
      if (c.equal > 0) {
        const rule: NotEqualRule = { type: "not_equal", columns: [A.name, B.name], share: 0 };
        const r = c.firstEqual;
        throw breachError(scanned, rule, { row: r, column: B.name, detail: `${quoted(A, r)} and ${quoted(B, r)} are equal` });
      }
      return { type: "not_equal", columns: [A.name, B.name], share: 1, declared: true };
    }
    case "blank_together": {
      const cs = declaredColumns(cols, d.columns, what, source, notId, "non-identifier");
      if (cs.length < 2 || cs.length > RULE_LIMITS.blankColumns || new Set(cs).size !== cs.length) {
        throw new DataError(`The declared rule ${what} needs 2 to ${RULE_LIMITS.blankColumns} different columns.`);
      }
      const a = blankAgreement(cs, n);
      if (a.firstBreak >= 0) {
        const r = a.firstBreak;
        const blank = cs.find((c) => c.scan.ids[r] === c.blank)!;
        const full = cs.find((c) => c.scan.ids[r] !== c.blank)!;
        const rule: BlankTogetherRule = { type: "blank_together", columns: cs.map((c) => c.name), share: 0 };
        throw breachError(scanned, rule, { row: r, column: blank.name, detail: `${blank.name} is blank but ${quoted(full, r)}` });
      }
      return { type: "blank_together", columns: cs.map((c) => c.name), share: 1, declared: true };
    }
    default:
      throw new DataError(
        `The declared rule ${what} has an unknown type; use fixed_combinations, inequality, sum, not_equal or blank_together.`,
      );
  }
}
