/**
 * Ratio and product identities `total = factor · a^±1 · b^±1` (the contract's `RatioRule`,
 * docs/api.md "Row rules"): their arithmetic, shared by detection (`./detect/ratio`), the checker
 * (`./check`) and the enforcer, which writes the total from its parts like a sum's total
 * (`./sums`, {@link ratioSteps}).
 */
import type { ColumnStats, Metadata, RatioBins, RatioRule } from "../../contract";
import { grainRounder, numberWriter } from "../columns/numerical-grain";
import type { Rng } from "../generate/sfc32";
import { innerFirst } from "./compiled-rule";

/**
 * `factor · prod_j parts[j]^powers[j]`; undefined when a divided part is 0 (the row is outside the
 * rule). A multiplied part of 0 gives 0.
 */
export function ratioValue(factor: number, parts: readonly number[], powers: readonly number[]): number | undefined {
  let y = factor;
  for (let j = 0; j < parts.length; j++) {
    if (powers[j] < 0) {
      if (parts[j] === 0) return undefined;
      y /= parts[j];
    } else y *= parts[j];
  }
  return y;
}

/**
 * How far a total written with `totalDecimals` decimals may be from `value` = factor · prod_j
 * parts[j]^±1, in the total's units: half a unit of its decimals (it was rounded there), plus
 * |value| · sum_j 0.5·10^-d_j / |parts[j]| over the parts written with decimals (each such part's
 * own rounding, carried through the product to first order: the relative errors of a product's
 * factors add; Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., sec. 3.1), and a
 * hair for binary floating point. A part written as a whole number is taken as exact (a count:
 * 7 items, 1,352 unemployed), as is a part of 0.
 */
export function ratioTolerance(value: number, totalDecimals: number, parts: readonly number[], partDecimals: readonly number[]): number {
  let rel = 0;
  for (let j = 0; j < parts.length; j++) if (parts[j] !== 0 && partDecimals[j] > 0) rel += (0.5 * 10 ** -partDecimals[j]) / Math.abs(parts[j]);
  return (0.5 * 10 ** -totalDecimals + Math.abs(value) * rel) * (1 + 1e-9) + 1e-12 * Math.abs(value);
}

/**
 * The verdict of `total = value` on one row's numbers: undefined when a number is missing (NaN) or
 * a divided part is 0, else whether the total is within {@link ratioTolerance}; of a band, whether
 * it lies between the values of its min and max factors (of a binned band, its row's bin's), each
 * widened by its tolerance.
 */
export function ratioKept(total: number, parts: readonly number[], rule: RatioBand, totalDecimals: number, partDecimals: readonly number[]): boolean | undefined {
  if (Number.isNaN(total) || parts.some(Number.isNaN)) return undefined;
  if (rule.min !== undefined && rule.max !== undefined) {
    const q = rule.binned !== undefined ? binQuantiles(rule.binned, parts) : undefined;
    const lo = ratioValue(q !== undefined ? q[0] : rule.min, parts, rule.powers);
    const hi = ratioValue(q !== undefined ? q[q.length - 1] : rule.max, parts, rule.powers);
    if (lo === undefined || hi === undefined) return undefined;
    return total >= lo - ratioTolerance(lo, totalDecimals, parts, partDecimals) && total <= hi + ratioTolerance(hi, totalDecimals, parts, partDecimals);
  }
  const v = ratioValue(rule.factor, parts, rule.powers);
  if (v === undefined) return undefined;
  return Math.abs(total - v) <= ratioTolerance(v, totalDecimals, parts, partDecimals);
}

/** What {@link ratioKept} reads of a rule: the factor and powers, and a band's [min, max] (and bins) when it is one. */
export interface RatioBand {
  factor: number;
  powers: readonly number[];
  min?: number;
  max?: number;
  binned?: PartBins;
}

/** A band's bins ({@link RatioBins}) with the part as its index among the rule's parts. */
export interface PartBins {
  part: number;
  edges: readonly number[];
  quantiles: readonly (readonly number[])[];
}

/** The band {@link ratioKept} reads of a contract rule (its bins' part named by index). */
export function ratioBand(rule: Pick<RatioRule, "factor" | "powers" | "min" | "max" | "bins" | "parts">): RatioBand {
  const bins = rule.bins;
  return { factor: rule.factor, powers: rule.powers, min: rule.min, max: rule.max, ...(bins !== undefined ? { binned: partBins(bins, rule.parts) } : {}) };
}

function partBins(bins: RatioBins, parts: readonly string[]): PartBins {
  return { part: parts.indexOf(bins.part), edges: bins.edges, quantiles: bins.quantiles };
}

/** The factor's quantiles of the bin the row's part value falls in (bin i: values <= edges[i]). */
export function binQuantiles(bins: PartBins, parts: readonly number[]): readonly number[] {
  const x = parts[bins.part];
  let [lo, hi] = [0, bins.edges.length];
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (x <= bins.edges[mid]) hi = mid;
    else lo = mid + 1;
  }
  return bins.quantiles[lo];
}

/** The right side of a ratio rule in words: `100 * Unemployed / Labor Force`, `hits / at bats`, `price * quantity`, `1 / a`, a band's `[0.82, 1.2] * MonthlyCharges * tenure`. */
export function ratioText(rule: Pick<RatioRule, "factor" | "parts" | "powers" | "min" | "max">): string {
  const up = rule.parts.filter((_, j) => rule.powers[j] > 0);
  const down = rule.parts.filter((_, j) => rule.powers[j] < 0);
  const band = rule.min !== undefined && rule.max !== undefined;
  const k = band ? `[${Number(rule.min!.toPrecision(3))}, ${Number(rule.max!.toPrecision(3))}]` : String(rule.factor);
  const head = [...(band || rule.factor !== 1 || up.length === 0 ? [k] : []), ...up].join(" * ");
  return head + down.map((p) => ` / ${p}`).join("");
}

/** One compiled ratio: feature indices and how its total is written. */
export interface RatioStep {
  total: number;
  parts: number[];
  powers: number[];
  factor: number;
  /** A band's [min, max] of the factor and its quantiles (the factor is then drawn per row). */
  min?: number;
  max?: number;
  quantiles?: number[];
  binned?: PartBins;
  /** Per part, its decimals (for the tolerance). */
  partDecimals: number[];
  totalDecimals: number;
  /** The value written as the total's column writes numbers (rounded to its decimals). */
  write(x: number): string;
  /** Of a band: a total moved to the column's grain, the first point `accept` takes ({@link grainRounder}). */
  snap?: (x: number, rng: Rng, accept: (y: number) => boolean) => number | undefined;
  /** Whether the written value lies in the total's real [min, max]. */
  fits(x: number): boolean;
}

/**
 * The metadata's ratio rules as steps (a rule over an unknown or identifier column left out, as
 * `cols` says), in an order where a ratio whose part is another's total comes after it.
 */
export function ratioSteps(meta: Metadata, rules: readonly RatioRule[], cols: (names: readonly string[]) => number[] | undefined): RatioStep[] {
  const st = (name: string): ColumnStats | undefined => meta.column_stats?.[name];
  const steps = rules.flatMap((r): RatioStep[] => {
    const idx = cols([r.total, ...r.parts]);
    if (!idx) return [];
    const s = st(r.total);
    const d = s?.decimals ?? 0;
    const writeNumber = numberWriter(d, s?.fixed_decimals === true && d > 0, s?.min_decimals ?? 0, s?.digits);
    const scale = 10 ** d;
    return [
      {
        total: idx[0],
        parts: idx.slice(1),
        powers: [...r.powers],
        factor: r.factor,
        ...(r.min !== undefined && r.max !== undefined && r.quantiles ? { min: r.min, max: r.max, quantiles: [...r.quantiles] } : {}),
        ...(r.bins !== undefined && r.quantiles ? { binned: partBins(r.bins, r.parts) } : {}),
        partDecimals: r.parts.map((p) => st(p)?.decimals ?? 0),
        totalDecimals: d,
        write: (x) => writeNumber(Math.round(x * scale) / scale),
        ...(r.quantiles !== undefined && s !== undefined ? { snap: grainRounder(s) } : {}),
        fits: (x) => {
          const y = Math.round(x * scale) / scale;
          return !((s?.min !== undefined && y < s.min) || (s?.max !== undefined && y > s.max));
        },
      },
    ];
  });
  return innerFirst(steps);
}
