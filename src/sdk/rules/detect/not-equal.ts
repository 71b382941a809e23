/**
 * Not-equal pairs of categorical columns (criteria in `./index`, {@link detectRules}).
 */
import type { NotEqualRule } from "../../../contract";
import { RULE_LIMITS } from "./options";
import type { Col } from "./view";

/** For each value id of A, the id of B's equal value (same text), or -1. */
export function sameValues(A: Col, B: Col): Int32Array {
  const byText = new Map<string, number>();
  B.scan.values.forEach((v, id) => {
    if (v !== "") byText.set(v, id);
  });
  return Int32Array.from(A.scan.values, (v) => (v === "" ? -1 : (byText.get(v) ?? -1)));
}

export function notEqualCounts(A: Col, B: Col, n: number, map: Int32Array): { m: number; equal: number; firstEqual: number } {
  let m = 0;
  let equal = 0;
  let firstEqual = -1;
  for (let r = 0; r < n; r++) {
    const a = A.scan.ids[r];
    const b = B.scan.ids[r];
    if (a === A.blank || b === B.blank) continue;
    m++;
    if (map[a] === b) {
      equal++;
      if (firstEqual < 0) firstEqual = r;
    }
  }
  return { m, equal, firstEqual };
}

export function detectNotEqual(cols: Col[], n: number): NotEqualRule[] {
  const elig = cols.filter((c) => c.codec.kind === "categorical" && c.nonBlank >= 2).slice(0, RULE_LIMITS.maxColumns);
  const rules: NotEqualRule[] = [];
  for (let i = 0; i < elig.length; i++) {
    for (let j = i + 1; j < elig.length; j++) {
      const [A, B] = [elig[i], elig[j]];
      const map = sameValues(A, B);
      let shared = 0;
      let pp = 0;
      const presentA = n - A.scan.missing;
      const presentB = n - B.scan.missing;
      map.forEach((b, a) => {
        if (b < 0) return;
        shared++;
        pp += (A.scan.counts[a] / presentA) * (B.scan.counts[b] / presentB);
      });
      if (shared < 0.5 * Math.min(A.nonBlank, B.nonBlank)) continue;
      const c = notEqualCounts(A, B, n, map);
      if (c.m === 0 || c.m * pp < RULE_LIMITS.minExpectedEqual) continue;
      const share = (c.m - c.equal) / c.m;
      if (share >= RULE_LIMITS.strictShare) rules.push({ type: "not_equal", columns: [A.name, B.name], share });
    }
  }
  return rules;
}
