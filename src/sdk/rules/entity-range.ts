/**
 * The entity-range rule (`EntityRangeRule`, docs/api.md "Row rules"): a number inside the real
 * range of its row's entity (a country's population, a firm's capital), and with a time column on
 * its entity's line at the row's time. The enforcer; the checker is `./check`'s, detection
 * `./detect/entity-range`.
 */
import type { EntityRangeRule, Metadata } from "../../contract";
import { cellNumber, entityRangeCheck, entityRangeIndex } from "./check";
import { cellWriter, writerOf } from "./difference";
import type { Rng } from "../generate/sfc32";
import { MAX_REDRAWS, noneFixed, type CompiledRule } from "./compiled-rule";

/** A standard normal draw (Box-Muller). */
function normal(rng: Rng): number {
  return Math.sqrt(-2 * Math.log(1 - rng.next())) * Math.cos(2 * Math.PI * rng.next());
}

/**
 * Keeps the rule: a row whose number lies outside its entity's range gets a number drawn inside
 * it, uniform (uniform in the logarithm with `rule.log`), at the column's grain and on its lattice
 * (`cellWriter`), up to {@link MAX_REDRAWS} draws, else the range's nearer end.
 * With `trends` (a panel's time column), every row of a ranged entity with a time gets its number
 * from its entity's line at a time drawn uniformly within `step` of the row's, plus normal noise
 * of `spread` (in the logarithm with `log`), redrawn until inside the range, else the line's point
 * moved into the range: a number of the row's year, no nearer to the real row of that year than
 * the real rows of the years beside it are.
 * A row whose number is fixed (a `where` or seed cell) is counted unrepaired when outside; the
 * entity is never changed (a catalog before this rule has made it a released one where it could).
 */
export function entityRangeRule(rule: EntityRangeRule, idx: readonly number[], meta: Metadata): CompiledRule {
  const check = entityRangeCheck(rule, idx, meta);
  const at = entityRangeIndex(rule, meta);
  const stats = meta.column_stats?.[rule.columns[1]];
  const write = writerOf(stats);
  const writeKept = cellWriter(stats, write, check);
  const log = rule.log === true && rule.ranges.every(([lo]) => lo > 0);
  const trends = idx.length > 2 && rule.trends?.length === rule.keys.length ? rule.trends : undefined;
  const readTime = cellNumber(meta.column_stats?.[rule.columns[2]]);
  const spread = Number.isFinite(rule.spread) ? Math.max(0, rule.spread!) : 0;
  const step = Number.isFinite(rule.step) ? Math.max(0, rule.step!) : 0;
  const scale = log ? Math.exp : (z: number): number => z;
  return {
    apply(rows, rng, given, _draw, out) {
      const fixed = given ?? noneFixed;
      const cells: string[] = [];
      for (let r = 0; r < rows.length; r++) {
        cells[idx[0]] = rows.get(r, idx[0]);
        cells[idx[1]] = rows.get(r, idx[1]);
        const verdict = check(cells);
        const i = trends !== undefined && verdict !== undefined ? at(cells[idx[0]]) : undefined;
        const line = i === undefined ? undefined : trends![i];
        const time = line === undefined ? undefined : readTime(rows.get(r, idx[2]));
        const timed = time !== undefined && line!.every(Number.isFinite) && !fixed(r, idx[1]);
        if (verdict !== false && !timed) continue;
        if (fixed(r, idx[1])) {
          out.unrepaired++;
          continue;
        }
        const [lo, hi] = rule.ranges[i ?? at(cells[idx[0]])!];
        const x0 = Number(cells[idx[1]]);
        let text: string | undefined;
        for (let t = 0; t < MAX_REDRAWS && text === undefined; t++) {
          let x: number;
          if (timed) {
            x = scale(line![0] + line![1] * (time! + (2 * rng.next() - 1) * step) + spread * normal(rng));
          } else {
            const u = rng.next();
            x = log ? Math.exp(Math.log(lo) + u * (Math.log(hi) - Math.log(lo))) : lo + u * (hi - lo);
          }
          text = writeKept(x, rng, cells, idx[1], 0);
        }
        const end = timed ? Math.min(hi, Math.max(lo, scale(line![0] + line![1] * time!))) : x0 < lo ? lo : hi;
        text ??= write(end, 0);
        if (text === undefined) {
          out.unrepaired++;
          continue;
        }
        if (text === rows.get(r, idx[1])) continue;
        rows.set(r, idx[1], text);
        out.changed++;
      }
    },
  };
}
