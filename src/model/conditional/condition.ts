/**
 * Conditions: what a row's condition is ({@link RowCondition}: per feature nothing, one code, a
 * list of codes or codes with weights) and its canonical form ({@link Fixed}: the fixed features,
 * their allowed codes ascending and their weights). A row's condition fixes some features f to a
 * non-empty set A_f of allowed codes (one code: an exact value; several: a range), the others are
 * free; an allowed code may carry a weight a_k in (0, 1] (default 1), the share of the code's
 * values that satisfy the condition. Rows whose canonical conditions are equal ({@link keyOf})
 * form one group and share one candidate population. {@link ConditionError} is what a malformed
 * condition, or one of probability 0 under the model, throws.
 */
import { InputError } from "../sampling/inputs";
import type { ConditionalCall } from "./options";

/**
 * A range cell with per-code weights: `weights[i]` in (0, 1] is the share of code `codes[i]`'s values
 * that satisfy the condition (1: all of them); codes distinct, the lists of equal, non-zero length.
 */
export interface WeightedCell {
  codes: readonly number[];
  weights: readonly number[];
}

/**
 * A fixed cell: one allowed code, a non-empty list of allowed codes (a range condition), or allowed
 * codes with weights ({@link WeightedCell}: a range covering part of some bins).
 */
export type CellCondition = number | readonly number[] | WeightedCell;

/**
 * The condition of one row: one entry per feature, in layout order; `null` / `undefined` (or a
 * list holding every code of the feature) leaves the feature free.
 */
export type RowCondition = readonly (CellCondition | null | undefined)[];

/**
 * Thrown for a condition the model gives probability 0 (every allowed code underflows at every
 * latent tried) and for malformed conditions. An {@link InputError}, so the engine maps it to
 * `parameter_invalid` with `param`.
 */
export class ConditionError extends InputError {
  constructor(
    message: string,
    param: string,
    /** The first row with this condition. */
    readonly row: number,
    /** The features at fault (the fixed features whose sets underflowed; all fixed ones when only the combination did). */
    readonly features: string[],
  ) {
    super(message, param);
    this.name = "ConditionError";
  }
}

/** A fixed feature of a condition: its allowed codes, ascending, and their weights (null: all 1). */
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
 * @throws ConditionError for a row of the wrong length, a code that is not an integer in [0, K_f),
 *   an empty set, or a weighted cell with lists of different lengths, a repeated code or a weight
 *   outside (0, 1].
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
