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

/**
 * A value drawn from quantiles `q` (ascending, >= 2): one of the intervals between neighbours,
 * chosen uniformly, then uniform inside it (a difference's or a ratio band's factor).
 */
export function drawFromQuantiles(q: readonly number[], rng: Rng): number {
  const i = Math.min(q.length - 2, Math.floor(rng.next() * (q.length - 1)));
  return q[i] + rng.next() * (q[i + 1] - q[i]);
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
  /** Optional: forgets what the rule kept of earlier batches (a new sample starts). */
  newSample?(): void;
  /**
   * Optional: the rows of the last batch `apply` saw that the sample writes (`rows.get(r, f)` in
   * `metadata.features` order, after every writer), for a rule that keeps cells distinct across a
   * sample's batches: only these count against later batches, and a cell that repeats one written
   * before is drawn again (with `rng`; `fixed` cells are kept). Without the call, every row of the
   * batch counts (a caller that writes each row it decodes).
   */
  written?(rows: Cells, rng: Rng, fixed: Fixed | undefined): void;
}

/**
 * Identities in an order where one whose total is a part of another comes first (`private = goods
 * + private services` before `nonfarm = private + government`; a rate whose total is a sum's part
 * before that sum), so a system sharing columns is written inner to outer and each holds. A cycle
 * keeps the given order. `total` and `parts` may be column names or feature indices. O(m^3) for m
 * identities (a dozen at most).
 */
export function innerFirst<K, T extends { total: K; parts: readonly K[] }>(identities: readonly T[]): T[] {
  const ordered: T[] = [];
  const left = new Set(identities);
  while (left.size > 0) {
    // The first one none of whose parts is the total of one still left (none: a cycle, the first).
    const next = [...left].find((r) => ![...left].some((o) => o !== r && r.parts.includes(o.total))) ?? [...left][0];
    ordered.push(next);
    left.delete(next);
  }
  return ordered;
}
