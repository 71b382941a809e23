/**
 * Conditions: a row's condition ({@link RowCondition}) and its canonical form ({@link Fixed}: the
 * fixed features, allowed codes ascending, weights a_k in (0, 1], the share of a code's values
 * that satisfy the condition). Rows with equal canonical conditions ({@link keyOf}) form one group.
 */
import { InputError } from "../sampling/inputs";
import type { ConditionalCall } from "./options";

/**
 * A range cell with per-code weights: `weights[i]` in (0, 1] is the share of `codes[i]`'s values
 * inside the condition; codes distinct, lists of equal non-zero length.
 */
export interface WeightedCell {
  codes: readonly number[];
  weights: readonly number[];
}

/** A fixed cell: one allowed code, a list of allowed codes (a range), or a {@link WeightedCell}. */
export type CellCondition = number | readonly number[] | WeightedCell;

/** A row's condition, one entry per feature (layout order); null, undefined or every code: free. */
export type RowCondition = readonly (CellCondition | null | undefined)[];

/**
 * Thrown for a malformed condition or one the model gives probability 0 (every allowed code
 * underflows at every latent tried); an {@link InputError} (`parameter_invalid` with `param`).
 */
export class ConditionError extends InputError {
  constructor(
    message: string,
    param: string,
    /** The first row with this condition. */
    readonly row: number,
    /** The features at fault (underflowed sets; all fixed ones when only the combination did). */
    readonly features: string[],
  ) {
    super(message, param);
    this.name = "ConditionError";
  }
}

/** A fixed feature of a condition: allowed codes, ascending, and their weights (null: all 1). */
export interface Fixed {
  f: number;
  codes: Int32Array;
  weights: Float64Array | null;
}

/** The key of a canonical condition: equal keys, equal conditions (one group). */
export function keyOf(fixed: readonly Fixed[]): string {
  return fixed.map((c) => `${c.f}:${c.codes.join(",")}${c.weights ? `@${c.weights.join(",")}` : ""}`).join(";");
}

/**
 * Validates and canonicalises one row's condition.
 * @throws ConditionError for a wrong length, a code outside [0, K_f), an empty set, or a weighted
 *   cell with unequal lists, a repeated code or a weight outside (0, 1].
 */
export function parseCondition(cond: RowCondition, row: number, ctx: ConditionalCall): Fixed[] {
  const { F, cards, names } = ctx;
  const fail = (what: string, features: string[]): ConditionError =>
    new ConditionError(`${ctx.conditionLabel(row)} ${what}`, ctx.paramFor(row, features), row, features);
  if (!Array.isArray(cond) || cond.length !== F) throw fail(`must have one entry per feature (${F})`, []);
  const out: Fixed[] = [];
  for (let f = 0; f < F; f++) {
    const c = cond[f];
    if (c === null || c === undefined) continue;
    const weighted = typeof c === "object" && !Array.isArray(c) ? (c as WeightedCell) : undefined;
    const list = typeof c === "number" ? [c] : weighted ? weighted.codes : c;
    if (!Array.isArray(list) || list.length === 0) throw fail(`on ${names[f]} must be a code or a non-empty list of codes`, [names[f]]);
    if (weighted && !(Array.isArray(weighted.weights) && weighted.weights.length === list.length)) {
      throw fail(`on ${names[f]} must give one weight per code`, [names[f]]);
    }
    // Per code: 0 not allowed, else its weight (1 for unweighted lists; repeats merge there).
    const weightOf = new Float64Array(cards[f]);
    let count = 0;
    let all1 = true;
    for (let i = 0; i < list.length; i++) {
      const k = list[i];
      if (!(Number.isInteger(k) && k >= 0 && k < cards[f])) throw fail(`on ${names[f]} has code ${String(k)} outside [0, ${cards[f]})`, [names[f]]);
      let a = 1;
      if (weighted) {
        a = weighted.weights[i];
        if (!(typeof a === "number" && a > 0 && a <= 1)) throw fail(`on ${names[f]} has weight ${String(a)} for code ${k}, outside (0, 1]`, [names[f]]);
        if (weightOf[k] > 0) throw fail(`on ${names[f]} lists code ${k} twice`, [names[f]]);
        if (a !== 1) all1 = false;
      }
      if (!(weightOf[k] > 0)) count++;
      weightOf[k] = a;
    }
    if (count === cards[f] && all1) continue; // every code allowed in full: free
    const codes = new Int32Array(count);
    const weights = all1 ? null : new Float64Array(count);
    for (let k = 0, i = 0; k < cards[f]; k++) {
      if (!(weightOf[k] > 0)) continue;
      if (weights) weights[i] = weightOf[k];
      codes[i++] = k;
    }
    out.push({ f, codes, weights });
  }
  return out;
}
