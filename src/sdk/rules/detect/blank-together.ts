/**
 * Columns blank together: all blank or none, in (nearly) every row (criteria in `./index`,
 * {@link detectRules}).
 */
import type { BlankTogetherRule } from "../../../contract";
import { RULE_LIMITS } from "./options";
import { unionFind, type Col } from "./view";

/** Rows where the columns are all blank or none is, and the first row where not. */
export function blankAgreement(cs: Col[], n: number): { keep: number; firstBreak: number } {
  let keep = 0;
  let firstBreak = -1;
  for (let r = 0; r < n; r++) {
    let blanks = 0;
    for (const c of cs) if (c.scan.ids[r] === c.blank) blanks++;
    if (blanks === 0 || blanks === cs.length) keep++;
    else if (firstBreak < 0) firstBreak = r;
  }
  return { keep, firstBreak };
}

export function detectBlankTogether(cols: Col[], n: number): BlankTogetherRule[] {
  const elig = cols
    .filter((c) => c.codec.kind !== "id" && c.scan.missing >= RULE_LIMITS.minBlank && c.scan.missing < n)
    .slice(0, RULE_LIMITS.maxColumns);
  const slack = (1 - RULE_LIMITS.strictShare) * n;
  const uf = unionFind(elig.length);
  const pairs: [number, number, number][] = [];
  for (let i = 0; i < elig.length; i++) {
    for (let j = i + 1; j < elig.length; j++) {
      if (Math.abs(elig[i].scan.missing - elig[j].scan.missing) > slack) continue;
      const { keep } = blankAgreement([elig[i], elig[j]], n);
      if (keep / n >= RULE_LIMITS.strictShare) {
        uf.union(i, j);
        pairs.push([i, j, keep / n]);
      }
    }
  }
  const rules: BlankTogetherRule[] = [];
  const groups = new Map<number, number[]>();
  for (const [i, j] of pairs) for (const x of [i, j]) {
    const g = groups.get(uf.find(x)) ?? [];
    if (!g.includes(x)) g.push(x);
    groups.set(uf.find(x), g);
  }
  for (const g of groups.values()) {
    g.sort((a, b) => a - b);
    const cs = g.map((x) => elig[x]);
    const { keep } = blankAgreement(cs, n);
    if (g.length <= RULE_LIMITS.blankColumns && keep / n >= RULE_LIMITS.strictShare) {
      rules.push({ type: "blank_together", columns: cs.map((c) => c.name), share: keep / n });
    } else {
      for (const [i, j, share] of pairs) if (g.includes(i)) rules.push({ type: "blank_together", columns: [elig[i].name, elig[j].name], share });
    }
  }
  return rules;
}
