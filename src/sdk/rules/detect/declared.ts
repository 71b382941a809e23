/**
 * Declared rules (`rules.declare`): each computed from the data like a detected one, or a
 * DataError naming the row that breaks it ({@link lineOfRow}).
 */
import type { BlankTogetherRule, InequalityRule, NotEqualRule, RatioRule, Rule, StructuralZerosRule, SumRule, TemplateRule } from "../../../contract";
import { DataError } from "../../errors";
import { fileOfDescription } from "../../io/csv";
import type { ScannedTable } from "../../metadata/encoded";
import { identityText, ruleId } from "../describe";
import { RULE_LIMITS, type DeclaredRule } from "./options";
import { combinable, type Breach, type Col } from "./view";
import { combinationsRule, determinedRule, jointCells } from "./combinations";
import { catalogRule, pairColumn } from "./catalog";
import { sumHolds, type Sign } from "./sum";
import { ratioFactor } from "./ratio";
import { ratioKept, ratioText } from "../ratio";
import { structuralZeros } from "./structural-zeros";
import { notEqualCounts, sameValues } from "./not-equal";
import { blankAgreement } from "./blank-together";
import { declaredCalendar } from "./calendar";
import { declaredDatetimePart } from "./datetime-part";
import { parseTemplate, renderTemplate, templateMatches } from "../template";

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
    case "catalog": {
      const cs = declaredColumns(cols, d.columns, what, source, notId, "non-identifier");
      if (cs.length < 2 || cs.length > RULE_LIMITS.catalogColumns || new Set(cs).size !== cs.length) {
        throw new DataError(`The declared rule ${what} needs 2 to ${RULE_LIMITS.catalogColumns} different columns, the key first.`);
      }
      const width = d.key_columns ?? 1;
      if (width !== 1 && width !== 2) throw new DataError(`The declared rule ${what}: key_columns is 1 or 2.`);
      if (cs.length <= width) throw new DataError(`The declared rule ${what} needs an attribute after its ${width} key columns.`);
      const attrs = cs.slice(width);
      const composite = width === 2 ? pairColumn(cs[0], cs[1], n) : undefined;
      const key = composite?.col ?? cs[0];
      const shown = (r: number): string => (composite ? `${quoted(cs[0], r)} and ${quoted(cs[1], r)}` : quoted(key, r));
      const first = new Map<number, number>();
      for (let r = 0; r < n; r++) {
        const a = key.scan.ids[r];
        if (a === key.blank) continue;
        const f = first.get(a);
        if (f === undefined) {
          first.set(a, r);
          continue;
        }
        const d2 = attrs.find((c) => c.scan.ids[r] !== c.scan.ids[f]);
        const stub = { type: "catalog" as const, columns: cs.map((c) => c.name), key: cs[0].name, ...(composite ? { key_columns: 2 } : {}), entries: [], counts: [], share: 0 };
        if (d2) throw breachError(scanned, stub, { row: r, column: d2.name, detail: `${shown(r)} go${composite ? "" : "es"} with ${quoted(d2, r)} here but with ${quoted(d2, f)} on an earlier row` });
      }
      const rule = catalogRule(key, attrs, n, k, composite?.pair);
      if (!rule) throw new DataError(`The declared rule ${what} releases no entry: no value of "${key.name}" is seen in ${k} rows or more (or more than ${RULE_LIMITS.maxCombinations} are).`, { column: cs[0].name });
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
      const most = RULE_LIMITS.maxSumParts;
      if (!Array.isArray(d.parts) || d.parts.length < 1 || d.parts.length > most) throw new DataError(`The declared rule ${what} needs 1 to ${most} parts.`);
      const signs = d.signs ?? d.parts.map(() => 1);
      if (!Array.isArray(signs) || signs.length !== d.parts.length || !signs.every((x) => x === 1 || x === -1)) {
        throw new DataError(`The declared rule ${what}: signs must be one sign (1 or -1) per part (${d.parts.length}).`);
      }
      const constant = d.constant ?? 0;
      if (typeof constant !== "number" || !Number.isFinite(constant)) throw new DataError(`The declared rule ${what}: constant must be a finite number.`);
      const [total, ...parts] = declaredColumns(cols, [d.total, ...d.parts], what, source, (c) => c.codec.kind === "numerical" && c.num !== undefined, "numerical");
      if (new Set([total, ...parts]).size !== parts.length + 1) throw new DataError(`The declared rule ${what} needs ${parts.length + 1} different columns.`);
      const rule: SumRule = { type: "sum", total: total.name, parts: parts.map((c) => c.name), share: 1, declared: true };
      if (signs.some((x) => x !== 1)) rule.signs = [...signs] as Sign[];
      if (constant !== 0) rule.constant = constant;
      const s = sumHolds(total, parts, n, 0, signs as Sign[], constant);
      if (s.fails > 0) {
        const r = s.firstFail;
        const right = identityText(parts.map((c) => quoted(c, r)), signs, constant);
        throw breachError(scanned, { ...rule, share: 0 }, { row: r, column: total.name, detail: `${quoted(total, r)} is not ${right}` });
      }
      return rule;
    }
    case "ratio": {
      if (!Array.isArray(d.parts) || d.parts.length < 1 || d.parts.length > 2) throw new DataError(`The declared rule ${what} needs 1 or 2 parts.`);
      if (!Array.isArray(d.powers) || d.powers.length !== d.parts.length || !d.powers.every((x) => x === 1 || x === -1)) {
        throw new DataError(`The declared rule ${what}: powers must be one power (1 or -1) per part (${d.parts.length}).`);
      }
      if (d.factor !== undefined && !(typeof d.factor === "number" && Number.isFinite(d.factor) && d.factor > 0)) throw new DataError(`The declared rule ${what}: factor must be a finite number > 0.`);
      const [total, ...parts] = declaredColumns(cols, [d.total, ...d.parts], what, source, (c) => c.codec.kind === "numerical" && c.num !== undefined, "numerical");
      if (new Set([total, ...parts]).size !== parts.length + 1) throw new DataError(`The declared rule ${what} needs ${parts.length + 1} different columns.`);
      const factor = d.factor ?? ratioFactor(total, parts, d.powers, n);
      const base = { type: "ratio" as const, total: total.name, parts: parts.map((c) => c.name), powers: [...d.powers] };
      if (factor === undefined) throw new DataError(`The declared rule ${what}: no factor k makes ${total.name} = k · ${parts.map((c) => c.name).join(" · ")}${d.powers.some((x) => x < 0) ? " (with its powers)" : ""} in every row; give factor, or check the columns.`, { column: total.name });
      const rule: RatioRule = { ...base, factor, share: 1, declared: true };
      const [dt, dp] = [total.codec.stats.decimals ?? 0, parts.map((c) => c.codec.stats.decimals ?? 0)];
      for (let r = 0; r < n; r++) {
        const kept = ratioKept(total.num![total.scan.ids[r]], parts.map((c) => c.num![c.scan.ids[r]]), rule, dt, dp);
        if (kept !== false) continue;
        throw breachError(scanned, { ...rule, share: 0 }, { row: r, column: total.name, detail: `${quoted(total, r)} is not ${ratioText({ ...rule, parts: parts.map((c) => quoted(c, r)) })}` });
      }
      return rule;
    }
    case "structural_zeros":
      return declaredZeros(d, cols, scanned, n, what);
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
    case "calendar": {
      const cs = declaredColumns(cols, d.columns, what, source, notId, "non-identifier");
      if (cs.length < 3 || cs.length > 4 || new Set(cs).size !== cs.length) {
        throw new DataError(`The declared rule ${what} needs 3 or 4 different columns: year, month, day of month, then the weekday if any.`);
      }
      const found = declaredCalendar(cs, n);
      if (typeof found === "string") throw new DataError(`The declared rule ${what} does not apply: ${found}.`);
      const r = found.firstBreak;
      if (r >= 0) {
        const detail = `${cs.map((c) => quoted(c, r)).join(", ")} is not a date${cs.length > 3 ? " on that weekday" : ""}`;
        throw breachError(scanned, { ...found.rule, share: 0 }, { row: r, column: cs[2].name, detail });
      }
      return found.rule;
    }
    case "datetime_part": {
      const cs = declaredColumns(cols, d.columns, what, source, notId, "non-identifier");
      if (cs.length !== 2 || cs[0] === cs[1]) throw new DataError(`The declared rule ${what} needs two different columns: the datetime, then the column writing its part.`);
      const found = declaredDatetimePart(cs[0], cs[1], n, d.part);
      if (typeof found === "string") throw new DataError(`The declared rule ${what} does not apply: ${found}.`);
      const r = found.firstBreak;
      if (r >= 0) {
        const detail = `${quoted(cs[1], r)} is not the ${found.rule.part} of ${quoted(cs[0], r)}`;
        throw breachError(scanned, { ...found.rule, share: 0 }, { row: r, column: cs[1].name, detail });
      }
      return found.rule;
    }
    case "template": {
      if (typeof d.column !== "string" || typeof d.template !== "string") throw new DataError(`The declared rule ${what} needs "column" and "template" as strings.`);
      let parsed: ReturnType<typeof parseTemplate>;
      try {
        parsed = parseTemplate(d.column, d.template);
      } catch (e) {
        throw new DataError(`The declared rule ${what} does not apply: ${(e as Error).message}.`);
      }
      const cs = declaredColumns(cols, parsed.columns, what, source, () => true, "any");
      // A date filter reads its source in the source column's own format.
      const parts = parsed.parts.map((p) => {
        if (typeof p === "string" || p.date === undefined) return p;
        const from = cs[p.column].codec.kind === "datetime" ? cs[p.column].codec.datetime?.format : undefined;
        if (from === undefined) throw new DataError(`The declared rule ${what} does not apply: "${cs[p.column].name}" is no datetime column, so it has no date to write.`);
        return { ...p, from };
      });
      const rule: TemplateRule = { type: "template", columns: parsed.columns, parts, share: 1, declared: true };
      for (let r = 0; r < n; r++) {
        const text = cs[0].scan.values[cs[0].scan.ids[r]];
        if (text === "") continue;
        const cellOf = (c: number): string => cs[c].scan.values[cs[c].scan.ids[r]];
        if (templateMatches(rule.parts, text, cellOf)) continue;
        const want = renderTemplate(rule.parts, cellOf);
        throw breachError(scanned, { ...rule, share: 0 }, { row: r, column: cs[0].name, detail: `${quoted(cs[0], r)}, the template writes ${JSON.stringify(want)}` });
      }
      return rule;
    }
    default:
      throw new DataError(
        `The declared rule ${what} has an unknown type; use fixed_combinations, inequality, sum, not_equal, blank_together, structural_zeros, calendar, datetime_part or template.`,
      );
  }
}

/**
 * A declared structural-zeros rule: the listed value pairs (each value one with a code of its own
 * in its column), or, without `pairs`, those detection finds for the two columns. A DataError when
 * a row holds a listed pair, a value is blank, rare (pooled) or absent, or no pair is found.
 */
function declaredZeros(d: Extract<DeclaredRule, { type: "structural_zeros" }>, cols: Col[], scanned: ScannedTable, n: number, what: string): StructuralZerosRule {
  const cs = declaredColumns(cols, d.columns, what, scanned.source, combinable, "categorical (or numerical/datetime with one code per value)");
  if (cs.length !== 2 || cs[0] === cs[1]) throw new DataError(`The declared rule ${what} needs two different columns.`);
  const [A, B] = cs;
  if (d.pairs === undefined) {
    const found = structuralZeros(A, B, jointCells(A, B, n, {}), n);
    if (!found) {
      throw new DataError(`The declared rule ${what}: the rows show no structural zero between "${A.name}" and "${B.name}"; list the value pairs in "pairs".`);
    }
    return { ...found, declared: true };
  }
  if (!Array.isArray(d.pairs) || d.pairs.length === 0 || d.pairs.length > 10_000 || !d.pairs.every((p) => Array.isArray(p) && p.length === 2 && p.every((v) => typeof v === "string"))) {
    throw new DataError(`The declared rule ${what}: pairs must be 1 to 10,000 pairs of values [value of ${A.name}, value of ${B.name}].`);
  }
  const codeOf = (c: Col, v: string): number => {
    const code = v === "" ? -1 : c.codec.encode(v);
    if (code < 0 || code === c.codec.otherCode || code === c.codec.missingCode) {
      throw new DataError(`The declared rule ${what}: ${JSON.stringify(v)} is not a value of column "${c.name}" with a code of its own (blank, rare or absent).`, {
        column: c.name,
        file: fileOfDescription(scanned.source),
      });
    }
    return code;
  };
  const pairs = [...new Map(d.pairs.map(([a, b]) => [`${codeOf(A, a)},${codeOf(B, b)}`, [codeOf(A, a), codeOf(B, b)]])).values()];
  const forbidden = new Set(pairs.map(([a, b]) => a * B.codec.K + b));
  const rule: StructuralZerosRule = { type: "structural_zeros", columns: [A.name, B.name], pairs: pairs.sort((p, q) => p[0] - q[0] || p[1] - q[1]), share: 1, declared: true };
  for (let r = 0; r < n; r++) {
    const [ca, cb] = [A.code[A.scan.ids[r]], B.code[B.scan.ids[r]]];
    if (ca < 0 || cb < 0 || !forbidden.has(ca * B.codec.K + cb)) continue;
    throw breachError(scanned, { ...rule, share: 0 }, { row: r, column: B.name, detail: `${quoted(A, r)} goes with ${quoted(B, r)}, a pair the rule forbids` });
  }
  return rule;
}
