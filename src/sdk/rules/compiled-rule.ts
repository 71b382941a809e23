/**
 * What every compiled row rule of `./enforce` has in common: how it is called on a batch, what it
 * reports, and the cells it must not rewrite.
 */
import type { Rng } from "../generate/sfc32";
import type { Cells } from "../generate/batch";

/** Draws a non-blank value of feature `f` (`metadata.features` index) from its 1-way marginal. */
export type DrawValue = (f: number, rng: Rng) => string;

/** What `RuleEnforcer.apply` did. */
export interface EnforceResult {
  /** Cells rewritten. */
  changed: number;
  /** Rows left breaking a rule (fixed cells that break it, or no value within the redraws). */
  unrepaired: number;
}

/** True for the cell of row r, feature f that the user fixed (a `where` column, a seed cell). */
export type Fixed = (r: number, f: number) => boolean;

/** Most redraws of one cell (or of a sum system's leaf parts) before a rule is left broken or out of range in that row. */
export const MAX_REDRAWS = 64;

/** No cell fixed. */
export const noneFixed: Fixed = () => false;

/** The generated codes of the rows, per feature (`codes[f][r]`), when the caller has them. */
export type Codes = readonly ArrayLike<number>[] | undefined;

/** One rule of `metadata.rules`, compiled for the model's columns. */
export interface CompiledRule {
  /** Makes the rule hold in every row of `rows` it can (`fixed` undefined: no cell is fixed). */
  apply(rows: Cells, rng: Rng, fixed: Fixed | undefined, draw: DrawValue, out: EnforceResult, codes: Codes): void;
}
