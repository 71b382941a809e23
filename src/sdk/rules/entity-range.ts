/**
 * The entity-range rule (`EntityRangeRule`, docs/api.md "Row rules"): a number inside the real
 * range of its row's entity (a country's population, a firm's capital). The enforcer; the checker
 * is `./check`'s, detection `./detect/entity-range`.
 */
import type { EntityRangeRule, Metadata } from "../../contract";
import { entityRangeCheck, entityRangeIndex } from "./check";
import { writerOf } from "./difference";
import { grainRounder } from "../columns/numerical-grain";
import { MAX_REDRAWS, noneFixed, type CompiledRule } from "./compiled-rule";



/**
 * Keeps the rule: a row whose number lies outside its entity's range gets a number drawn inside
 * it, uniform (uniform in the logarithm with `rule.log`), at the column's grain (`grainRounder`)
 * and written on its lattice (its step, decimals, listed values), up to {@link MAX_REDRAWS} draws, else the range's nearer end.
 * A row whose number is fixed (a `where` or seed cell) is counted unrepaired; the entity is never
 * changed (a catalog before this rule has made it a released one where it could).
 */
export function entityRangeRule(rule: EntityRangeRule, idx: readonly number[], meta: Metadata): CompiledRule {
  const check = entityRangeCheck(rule, idx, meta);
  const at = entityRangeIndex(rule, meta);
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
