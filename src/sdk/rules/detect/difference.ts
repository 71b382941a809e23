/**
 * Detection of difference ranges (`DifferenceRule`, `../difference`): two numerical or two
 * datetime columns whose difference stays in a window far narrower than independence gives
 * (forecast year - budget year in [-1, 10]; ship date - order date in [0, 7] days).
 */
import type { DifferenceRule, Rule } from "../../../contract";
import { Rng, deriveSeed } from "../../generate/sfc32";
import { RULE_LIMITS } from "./options";
import { quantile, trimmedRange as window, type Col } from "./view";

/** Rows with both values, at least. */
const MIN_ROWS = 30;
/** The window's width, at most this share of the width the differences span with one column shuffled. */
const NARROW = 0.25;
/** Share of the rows trimmed at each end when the exact range is not narrow (dirty data). */
const TRIM = 0.005;
/** Quantile intervals released. */
const INTERVALS = 16;


/**
 * Difference ranges (file header): per pair of numerical columns (the first
 * {@link RULE_LIMITS}.maxDifferenceColumns, table order) or of datetime columns, with >= {@link MIN_ROWS}
 * rows holding both and neither constant there, the differences' [min, max] (else their range
 * with 0.5% trimmed at each end, when >= 99% of rows lie inside) is at most {@link NARROW} of
 * the same window of the differences once the first column is shuffled (seeded). Pairs whose
 * columns take part in another rule of `others` that writes them (a sum, an inequality with a
 * third column, a catalog, fixed combinations, a calendar) are left to those rules; an
 * inequality between the two is kept beside it.
 * Cost: O(P · n log n) for P column pairs.
 */
export function detectDifferences(cols: readonly Col[], n: number, others: readonly Rule[], seed: number): DifferenceRule[] {
  const busy = new Set<string>();
  for (const r of others) {
    if (r.type === "sum" || r.type === "ratio") [r.total, ...r.parts].forEach((c) => busy.add(c));
    if (r.type === "catalog" || r.type === "fixed_combinations" || r.type === "calendar") r.columns.forEach((c) => busy.add(c));
  }
  const pairsOf = new Map<string, Set<string>>();
  for (const r of others) {
    if (r.type !== "inequality") continue;
    for (const [a, b] of [[r.high, r.low], [r.low, r.high]]) {
      if (!pairsOf.has(a)) pairsOf.set(a, new Set());
      pairsOf.get(a)!.add(b);
    }
  }
  const free = (a: Col, b: Col): boolean =>
    !busy.has(a.name) && !busy.has(b.name) && [a, b].every((c) => [...(pairsOf.get(c.name) ?? [])].every((o) => o === a.name || o === b.name));
  const numeric = cols.filter((c) => c.codec.kind === "numerical" && c.num && !c.codec.fromDomain).slice(0, RULE_LIMITS.maxDifferenceColumns);
  const dates = cols.filter((c) => c.codec.kind === "datetime" && c.num);
  const out: DifferenceRule[] = [];
  for (const group of [numeric, dates]) {
    for (let i = 0; i < group.length; i++) {
      for (let j = i + 1; j < group.length; j++) {
        const [A, B] = [group[i], group[j]];
        if (!free(A, B)) continue;
        const rule = differenceOf(A, B, n, deriveSeed(seed, A.f, B.f));
        if (rule) out.push(rule);
      }
    }
  }
  return out;
}

function constant(x: readonly number[]): boolean {
  for (const v of x) if (v !== x[0]) return false;
  return true;
}

function differenceOf(A: Col, B: Col, n: number, seed: number): DifferenceRule | undefined {
  const as: number[] = [];
  const bs: number[] = [];
  for (let r = 0; r < n; r++) {
    const a = A.num![A.scan.ids[r]];
    const b = B.num![B.scan.ids[r]];
    if (Number.isNaN(a) || Number.isNaN(b)) continue;
    as.push(a);
    bs.push(b);
  }
  const m = as.length;
  if (m < MIN_ROWS || constant(as) || constant(bs)) return undefined;
  const d = Float64Array.from(bs, (b, r) => b - as[r]).sort();
  const shuffled = Float64Array.from(as);
  new Rng(seed).shuffle(shuffled);
  const ds = Float64Array.from(bs, (b, r) => b - shuffled[r]).sort();
  for (const trim of [0, TRIM]) {
    const [lo, hi] = window(d, trim);
    const [slo, shi] = window(ds, Math.max(trim, TRIM));
    if (!(hi - lo <= NARROW * (shi - slo))) continue;
    let inside = 0;
    for (const x of d) if (x >= lo && x <= hi) inside++;
    if (inside < RULE_LIMITS.share * m) continue;
    const kept = trim === 0 ? d : d.filter((x) => x >= lo && x <= hi);
    // Differences of values on a grid of 10^-decimals, written on it (no float noise).
    const decimals = Math.max(A.codec.stats.decimals ?? 0, B.codec.stats.decimals ?? 0);
    const round = (x: number): number => Number(x.toFixed(decimals));
    const quantiles = Array.from({ length: INTERVALS + 1 }, (_, k) => round(quantile(kept, k / INTERVALS)));
    return { type: "difference", columns: [A.name, B.name], min: round(lo), max: round(hi), quantiles, share: inside / m };
  }
  return undefined;
}
