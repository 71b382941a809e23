/**
 * The elapsed-time rule (`ElapsedRule`, docs/api.md "Row rules"): a number that is the time
 * between two datetime columns of its row in some unit (a tenure's days from `start` to `end`, an
 * age in years from `birthday` to `termstart`). The enforcer (`./enforce`, last of all); the
 * checker is `./check`'s, detection `./detect/elapsed`, units and rounding `./elapsed-units`.
 */
import type { ElapsedRule, Metadata } from "../../contract";
import { numberWriter } from "../columns/numerical-grain";
import { DatetimeFormat } from "../metadata/datetime";
import { cellSeconds, elapsedCheck } from "./check";
import { writerOf } from "./difference";
import { elapsedValue } from "./elapsed-units";
import { noneFixed, type CompiledRule } from "./compiled-rule";

/**
 * Keeps the elapsed-time rules of `rules` in decoded rows, after every other rule (which may move
 * the datetimes): the number is written from its row's two datetimes, with the rule's decimals
 * in the column's number format. A blank number stays blank (the model's blanks are the real
 * table's), and a row with a blank or unreadable datetime is left as drawn. A number the user
 * fixed moves an unfixed later datetime to `earlier + number · unit` (in its format and
 * granularity); a row whose cells are all fixed and disagree is counted unrepaired.
 * @returns undefined when no rule names known columns.
 */
export function elapsedRules(rules: readonly ElapsedRule[], meta: Metadata): CompiledRule | undefined {
  const compiled = rules.flatMap((rule) => {
    const idx = rule.columns.map((c) => (meta.features as readonly string[]).indexOf(c));
    const stats = rule.columns.map((c) => meta.column_stats?.[c]);
    if (idx.some((i) => i < 0) || stats[0]?.type !== "numerical" || stats[1]?.type !== "datetime" || stats[2]?.type !== "datetime") return [];
    const s = stats[0];
    const write = numberWriter(rule.decimals, s.fixed_decimals === true && rule.decimals > 0, Math.min(s.min_decimals ?? 0, rule.decimals), s.digits);
    const [, ra, rb] = stats.map(cellSeconds);
    const laterFormat = stats[1].format !== undefined ? new DatetimeFormat(stats[1].format) : undefined;
    return [{ rule, idx, write, ra, rb, check: elapsedCheck(rule, idx, meta), writeLater: writerOf(stats[1]), laterFormat }];
  });
  if (compiled.length === 0) return undefined;
  return {
    apply(rows, _rng, given, _draw, out) {
      const fixed = given ?? noneFixed;
      const cells: string[] = [];
      for (const c of compiled) {
        const [fn, fa, fb] = c.idx;
        for (let r = 0; r < rows.length; r++) {
          cells[fn] = rows.get(r, fn);
          if (cells[fn] === "") continue;
          cells[fa] = rows.get(r, fa);
          cells[fb] = rows.get(r, fb);
          if (c.check(cells) !== false) continue;
          if (!fixed(r, fn)) {
            const text = c.write(elapsedValue(c.rule, c.rule.decimals, c.ra(cells[fa])!, c.rb(cells[fb])!));
            rows.set(r, fn, text);
            out.changed++;
            continue;
          }
          const text = fixed(r, fa) ? undefined : c.writeLater(c.rb(cells[fb])! + Number(cells[fn]) * c.rule.unit, c.laterFormat?.parse(cells[fa])?.offset ?? 0);
          if (text !== undefined) {
            cells[fa] = text;
            if (c.check(cells) === true) {
              rows.set(r, fa, text);
              out.changed++;
              continue;
            }
          }
          out.unrepaired++;
        }
      }
    },
  };
}
