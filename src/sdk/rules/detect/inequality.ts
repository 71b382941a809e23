/**
 * Inequalities high >= low (or >) between two numerical or two datetime columns (criteria in
 * `./index`, {@link detectRules}).
 */
import type { InequalityRule } from "../../../contract";
import { Rng, deriveSeed } from "../../generate/sfc32";
import { RULE_LIMITS } from "./options";
import type { Col } from "./view";

/** Inequality verdict of the rows where both values are present. */
interface PairOrder {
  m: number;
  gt: number;
  lt: number;
  eq: number;
}

function pairOrder(A: Col, B: Col, n: number): PairOrder {
  const xa = A.num!;
  const xb = B.num!;
  const ia = A.scan.ids;
  const ib = B.scan.ids;
  let gt = 0;
  let lt = 0;
  let eq = 0;
  for (let r = 0; r < n; r++) {
    const x = xa[ia[r]];
    const y = xb[ib[r]];
    if (x > y) gt++;
    else if (x < y) lt++;
    else if (x === y) eq++;
  }
  return { m: gt + lt + eq, gt, lt, eq };
}

/** Share of rows keeping high >= low (or >) once low's values are shuffled among those rows. */
function shuffledShare(high: Col, low: Col, n: number, strict: boolean, seed: number): number {
  const rows: number[] = [];
  for (let r = 0; r < n; r++) if (!Number.isNaN(high.num![high.scan.ids[r]]) && !Number.isNaN(low.num![low.scan.ids[r]])) rows.push(r);
  const lows = Float64Array.from(rows, (r) => low.num![low.scan.ids[r]]);
  new Rng(seed).shuffle(lows);
  let keep = 0;
  rows.forEach((r, i) => {
    const x = high.num![high.scan.ids[r]];
    if (strict ? x > lows[i] : x >= lows[i]) keep++;
  });
  return rows.length > 0 ? keep / rows.length : 0;
}

function range(c: Col): [number, number] {
  let lo = Infinity;
  let hi = -Infinity;
  for (const x of c.num!) {
    if (x < lo) lo = x;
    if (x > hi) hi = x;
  }
  return [lo, hi];
}

export function detectInequalities(cols: Col[], n: number, seed: number): InequalityRule[] {
  const elig = cols.filter((c) => c.num && c.codec.kind !== "id" && c.nonBlank >= 2).slice(0, RULE_LIMITS.maxColumns);
  const rules: InequalityRule[] = [];
  for (let i = 0; i < elig.length; i++) {
    for (let j = i + 1; j < elig.length; j++) {
      const [A, B] = [elig[i], elig[j]];
      if (A.codec.kind !== B.codec.kind) continue;
      const o = pairOrder(A, B, n);
      if (o.m < RULE_LIMITS.minRows) continue;
      const geA = (o.gt + o.eq) / o.m;
      const geB = (o.lt + o.eq) / o.m;
      if (geA >= RULE_LIMITS.share && geB >= RULE_LIMITS.share) continue; // (nearly) equal columns: no order
      const dir: [Col, Col, number] | undefined = geA >= RULE_LIMITS.share ? [A, B, o.gt] : geB >= RULE_LIMITS.share ? [B, A, o.lt] : undefined;
      if (!dir) continue;
      const [high, low, above] = dir;
      const strict = o.eq === 0;
      const [hlo] = range(high);
      const [, lhi] = range(low);
      if (strict ? hlo > lhi : hlo >= lhi) continue; // follows from the ranges
      if (shuffledShare(high, low, n, strict, deriveSeed(seed, high.f, low.f)) >= RULE_LIMITS.shuffledShare) continue;
      rules.push({ type: "inequality", high: high.name, low: low.name, strict, share: (strict ? above : above + o.eq) / o.m });
    }
  }
  return rules;
}
