/**
 * The entity-range rule (`EntityRangeRule`, docs/api.md "Row rules"): a number inside the real
 * range of its row's entity (a country's population, a firm's capital). The checker and the
 * enforcer; detection is `./detect/entity-range`.
 */
import type { EntityRangeRule, Metadata } from "../../contract";
import { cellNumber } from "./check";
import { writerOf } from "./difference";
import { grainRounder } from "../columns/numerical-grain";
import { MAX_REDRAWS, noneFixed, type CompiledRule } from "./compiled-rule";

/**
 * Entity text -> its range's index in `rule.keys`: by text, and for a numerical entity column by
 * number too (`1.0` is the entity `1`); undefined for an entity without a released range (a key
 * without a well-formed [min, max] in `rule.ranges`, as hand-edited metadata may hold, has none).
 */
function rangeIndex(rule: EntityRangeRule, meta: Metadata): (text: string) => number | undefined {
  const byText = new Map<string, number>();
  const valid = (i: number): boolean => {
    const r = rule.ranges[i];
    return r !== undefined && r.length === 2 && Number.isFinite(r[0]) && Number.isFinite(r[1]) && r[0] <= r[1];
  };
  rule.keys.forEach((k, i) => byText.has(k) || !valid(i) || byText.set(k, i));
  const st = meta.column_stats?.[rule.columns[0]];
  if (st?.type !== "numerical") return (t) => byText.get(t);
  const read = cellNumber(st);
  const byNumber = new Map<number, number>();
  rule.keys.forEach((k, i) => {
    const x = read(k);
    if (x !== undefined && !byNumber.has(x) && valid(i)) byNumber.set(x, i);
  });
  return (t) => {
    const i = byText.get(t);
    if (i !== undefined) return i;
    const x = read(t);
    return x === undefined ? undefined : byNumber.get(x);
  };
}

/**
 * The rule's verdict on a row (`idx`: the entity's and the number's positions in it): undefined
 * when either cell is blank, the entity has no released range or the number does not parse; else
 * whether the number lies in the entity's [min, max], within a hair for binary floating point.
 */
export function entityRangeCheck(rule: EntityRangeRule, idx: readonly number[], meta: Metadata): (row: readonly string[]) => boolean | undefined {
  const at = rangeIndex(rule, meta);
  const read = cellNumber(meta.column_stats?.[rule.columns[1]]);
  return (row) => {
    const e = row[idx[0]];
    if (e === "") return undefined;
    const i = at(e);
    const x = i === undefined ? undefined : read(row[idx[1]]);
    if (x === undefined) return undefined;
    const [lo, hi] = rule.ranges[i!];
    const slack = 1e-9 * Math.max(1, Math.abs(lo), Math.abs(hi));
    return x >= lo - slack && x <= hi + slack;
  };
}

/**
 * Keeps the rule: a row whose number lies outside its entity's range gets a number drawn inside
 * it, uniform (uniform in the logarithm with `rule.log`), at the column's grain (`grainRounder`)
 * and written on its lattice (its step, decimals, listed values), up to {@link MAX_REDRAWS} draws, else the range's nearer end.
 * A row whose number is fixed (a `where` or seed cell) is counted unrepaired; the entity is never
 * changed (a catalog before this rule has made it a released one where it could).
 */
export function entityRangeRule(rule: EntityRangeRule, idx: readonly number[], meta: Metadata): CompiledRule {
  const check = entityRangeCheck(rule, idx, meta);
  const at = rangeIndex(rule, meta);
  const stats = meta.column_stats?.[rule.columns[1]];
  const write = writerOf(stats);
  const snap = stats?.type === "numerical" ? grainRounder(stats) : undefined;
  const log = rule.log === true && rule.ranges.every(([lo]) => lo > 0);
  return {
    apply(rows, rng, given, _draw, out) {
      const fixed = given ?? noneFixed;
      const cells: string[] = [];
      for (let r = 0; r < rows.length; r++) {
        cells[idx[0]] = rows.get(r, idx[0]);
        cells[idx[1]] = rows.get(r, idx[1]);
        if (check(cells) !== false) continue;
        if (fixed(r, idx[1])) {
          out.unrepaired++;
          continue;
        }
        const [lo, hi] = rule.ranges[at(cells[idx[0]])!];
        const x0 = Number(cells[idx[1]]);
        let text: string | undefined;
        for (let t = 0; t < MAX_REDRAWS && text === undefined; t++) {
          const u = rng.next();
          const drawn = log ? Math.exp(Math.log(lo) + u * (Math.log(hi) - Math.log(lo))) : lo + u * (hi - lo);
          const x = snap?.(drawn, rng, (v) => {
            const cand = write(v, 0);
            cells[idx[1]] = cand ?? "";
            return cand !== undefined && check(cells) === true;
          }) ?? drawn;
          const w = write(x, 0);
          if (w === undefined) continue;
          cells[idx[1]] = w;
          if (check(cells) === true) text = w;
        }
        text ??= write(x0 < lo ? lo : hi, 0);
        if (text === undefined) {
          out.unrepaired++;
          continue;
        }
        rows.set(r, idx[1], text);
        out.changed++;
      }
    },
  };
}

/** The rule in words: `pop within its country's range (142 countries)`. */
export function entityRangeText(rule: Pick<EntityRangeRule, "columns" | "keys">): string {
  const n = rule.keys.length;
  return `${rule.columns[1]} within its ${rule.columns[0]}'s real range (${n} value${n === 1 ? "" : "s"} of ${rule.columns[0]})`;
}
