/**
 * Row rules in evaluation: each rule of the model's metadata, the share of real and of synthetic
 * rows that keep it (`../rules/check`).
 */
import type { Metadata } from "../../contract";
import { DataError } from "../errors";
import type { ScannedTable } from "../metadata/metadata";
import { countRule, ruleColumns, ruleLabel, type RuleCount } from "../rules/check";
import type { RuleReport } from "./types";

/**
 * Each rule of `metadata.rules` counted on the real and the synthetic scan (`./rules/check`).
 * @throws DataError when the real table lacks a column a rule names; RangeError as `ruleChecker`.
 */
export function ruleReports(metadata: Metadata, real: ScannedTable, synth: ScannedTable): RuleReport[] {
  return (metadata.rules ?? []).map((rule, index): RuleReport => {
    const count = (scan: ScannedTable): RuleCount =>
      countRule(rule, metadata, scan.n, (column) => {
        const s = scan.scans[scan.columns.indexOf(column)];
        if (!s) throw new DataError(`${scan.source} lacks column "${column}" of the rule "${ruleLabel(rule)}" (metadata.rules[${index}]).`, { column });
        const { values, ids } = s;
        return (r) => values[ids[r]];
      });
    return {
      index,
      type: rule.type,
      columns: ruleColumns(rule),
      label: ruleLabel(rule),
      ...(rule.declared ? { declared: true } : {}),
      real: count(real),
      synthetic: count(synth),
    };
  });
}
