/**
 * Sums total = a + b of numerical columns (criteria in `./index`, {@link detectRules}).
 */
import type { SumRule } from "../../../contract";
import { RULE_LIMITS } from "./options";
import type { Col } from "./view";

/** Half a unit of the finest decimals of the columns, plus a hair for binary floating point. */
function sumTolerance(cs: Col[]): number {
  const d = Math.max(...cs.map((c) => c.codec.stats.decimals ?? 0));
  return 0.5 * 10 ** -d * (1 + 1e-9);
}

/** Rows where total = a + b within tolerance, rows with all three present; stops once `maxFails` rows failed. */
export function sumHolds(total: Col, a: Col, b: Col, n: number, maxFails: number): { m: number; fails: number; firstFail: number } {
  const tol = sumTolerance([total, a, b]);
  const [xt, xa, xb] = [total.num!, a.num!, b.num!];
  const [it, ia, ib] = [total.scan.ids, a.scan.ids, b.scan.ids];
  let m = 0;
  let fails = 0;
  let firstFail = -1;
  for (let r = 0; r < n; r++) {
    const t = xt[it[r]];
    const x = xa[ia[r]];
    const y = xb[ib[r]];
    if (Number.isNaN(t) || Number.isNaN(x) || Number.isNaN(y)) continue;
    m++;
    if (Math.abs(t - (x + y)) > tol + 1e-12 * Math.abs(t)) {
      if (firstFail < 0) firstFail = r;
      if (++fails > maxFails) break;
    }
  }
  return { m, fails, firstFail };
}

function zeroShare(c: Col): number {
  let zero = 0;
  let present = 0;
  c.scan.counts.forEach((cnt, id) => {
    if (id === c.blank) return;
    present += cnt;
    if (c.num![id] === 0) zero += cnt;
  });
  return present > 0 ? zero / present : 1;
}

export function detectSums(cols: Col[], n: number): SumRule[] {
  const elig = cols.filter((c) => c.codec.kind === "numerical" && c.num && c.nonBlank >= 2).slice(0, RULE_LIMITS.maxSumColumns);
  const part = elig.map((c) => zeroShare(c) < RULE_LIMITS.zeroShare);
  const maxFails = Math.floor((1 - RULE_LIMITS.share) * n);
  const rules: SumRule[] = [];
  for (const total of elig) {
    for (let i = 0; i < elig.length; i++) {
      if (!part[i] || elig[i] === total) continue;
      for (let j = i + 1; j < elig.length; j++) {
        if (!part[j] || elig[j] === total) continue;
        const s = sumHolds(total, elig[i], elig[j], n, maxFails);
        if (s.fails > maxFails || s.m < RULE_LIMITS.minRows) continue;
        const share = (s.m - s.fails) / s.m;
        if (share < RULE_LIMITS.share) continue;
        rules.push({ type: "sum", total: total.name, parts: [elig[i].name, elig[j].name], share });
      }
    }
  }
  return rules;
}
