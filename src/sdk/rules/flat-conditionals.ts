/**
 * The likelihood tables of the fixed-combinations repair (`./fixed-combinations`): the pair
 * conditionals of `../../rule-scores` (`pairConditionals`) flattened into typed arrays, in the
 * order `combinationLikelihood` multiplies them, and the loop that multiplies each candidate's
 * likelihood by one of them.
 */
import type { PairConditional } from "../../rule-scores";

/** {@link pairConditionals}' tables in one array, in `combinationLikelihood`'s order. */
export interface FlatConditionals {
  /** Per conditional k: its rule column position j, other feature g and g's cardinality. */
  j: Int32Array;
  g: Int32Array;
  Kg: Int32Array;
  /** Per conditional k, where its table starts in `tables`. */
  offset: Int32Array;
  /** Every table (K_rule x K_g, row-major), back to back; the same doubles. */
  tables: Float64Array;
}

/**
 * Flattens `conditionals` (per rule column j, its list) in the order `combinationLikelihood`
 * multiplies them: j ascending, then each list in order.
 */
export function flatConditionals(conditionals: readonly PairConditional[][]): FlatConditionals {
  const list = conditionals.flatMap((cs, j) => cs.map((c) => ({ j, ...c })));
  const offset = new Int32Array(list.length);
  let size = 0;
  list.forEach((c, k) => {
    offset[k] = size;
    size += c.table.length;
  });
  const tables = new Float64Array(size);
  list.forEach((c, k) => tables.set(c.table, offset[k]));
  return {
    j: Int32Array.from(list, (c) => c.j),
    g: Int32Array.from(list, (c) => c.g),
    Kg: Int32Array.from(list, (c) => c.Kg),
    offset,
    tables,
  };
}

/**
 * Multiplies `lik[x]` (x < count) by conditional k's entry for candidate x: table row of the
 * candidate's combination (`tupleBase[candFlat[x] * nc + k]`), column the code `cg` gives the
 * candidate's row (`candRow[x]`); `tables` from `offset`.
 */
export function multiplyConditional(
  lik: Float64Array,
  count: number,
  candRow: Int32Array,
  candFlat: Int32Array,
  cg: ArrayLike<number>,
  tables: Float64Array,
  offset: number,
  tupleBase: Int32Array,
  nc: number,
  k: number,
): void {
  for (let x = 0; x < count; x++) lik[x] *= tables[offset + cg[candRow[x]] + tupleBase[candFlat[x] * nc + k]];
}
