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
 * in the column's number format. Where that count falls outside the number's real [min, max]
 * (a birthday drawn 9 years before a term) and the drawn number is inside it, the earlier
 * datetime moves to `later - number · unit` first (else the later to `earlier + number · unit`,
 * in its format, granularity and range; a datetime another elapsed rule counts from stays), so
 * the row reads as a real one would. A blank number
 * stays blank (the model's blanks are the real table's), a number the model wrote with fewer
 * decimals than the rule counts is written in full, and a row with a blank or unreadable
 * datetime is left as drawn. A number the user fixed moves an unfixed later (else earlier)
 * datetime to it; a row whose cells are all fixed and disagree is counted unrepaired.
 * @returns undefined when no rule names known columns.
 */
export function elapsedRules(rules: readonly ElapsedRule[], meta: Metadata): CompiledRule | undefined {
  const compiled = rules.flatMap((rule) => {
    const idx = rule.columns.map((c) => (meta.features as readonly string[]).indexOf(c));
    const stats = rule.columns.map((c) => meta.column_stats?.[c]);
    if (idx.some((i) => i < 0) || stats[0]?.type !== "numerical" || stats[1]?.type !== "datetime" || stats[2]?.type !== "datetime") return [];
    const s = stats[0];
    const write = numberWriter(rule.decimals, s.fixed_decimals === true && rule.decimals > 0, Math.min(s.min_decimals ?? 0, rule.decimals), s.digits);
    const [rn, ra, rb] = stats.map(cellSeconds);
    const formats = stats.map((st) => (st?.type === "datetime" && st.format !== undefined ? new DatetimeFormat(st.format) : undefined));
    const slack = 0.5 * 10 ** -rule.decimals;
    const inRange = (x: number): boolean => (s.min === undefined || x >= s.min - slack) && (s.max === undefined || x <= s.max + slack);
    return [{ rule, idx, write, rn, ra, rb, inRange, formats, writers: stats.map((st) => writerOf(st)), check: elapsedCheck(rule, idx, meta) }];
  });
  if (compiled.length === 0) return undefined;
  // A datetime two rules count from (an investigation's start for its length and for each plea) never moves: moving it for one would break the other.
  const uses = new Map<number, number>();
  for (const c of compiled) for (const f of c.idx.slice(1)) uses.set(f, (uses.get(f) ?? 0) + 1);
  return {
    apply(rows, _rng, given, _draw, out) {
      const fixed = given ?? noneFixed;
      const cells: string[] = [];
      for (const c of compiled) {
        const [fn, fa, fb] = c.idx;
        /** Moves the first unfixed datetime of `sides` (1 later, 2 earlier) so the row counts `x`; false when none can. */
        const moveTo = (r: number, x: number, sides: readonly (1 | 2)[]): boolean => {
          for (const side of sides) {
            const f = c.idx[side];
            if (fixed(r, f) || uses.get(f)! > 1) continue;
            const other = side === 1 ? c.rb(cells[fb])! + x * c.rule.unit : c.ra(cells[fa])! - x * c.rule.unit;
            const text = c.writers[side](other, c.formats[side]?.parse(cells[f])?.offset ?? 0);
            if (text === undefined) continue;
            cells[f] = text;
            rows.set(r, f, text);
            out.changed++;
            return true;
          }
          return false;
        };
        for (let r = 0; r < rows.length; r++) {
          cells[fn] = rows.get(r, fn);
          if (cells[fn] === "") continue;
          cells[fa] = rows.get(r, fa);
          cells[fb] = rows.get(r, fb);
          const verdict = c.check(cells);
          if (verdict === undefined) continue;
          const drawn = c.rn(cells[fn]);
          if (fixed(r, fn)) {
            if (!verdict && (drawn === undefined || !moveTo(r, drawn, [1, 2]) || c.check(cells) !== true)) out.unrepaired++;
            continue;
          }
          const count = (): number => elapsedValue(c.rule, c.rule.decimals, c.ra(cells[fa])!, c.rb(cells[fb])!);
          // A kept number written with fewer decimals than the rule's (`50` for 50.2) is written in full too.
          if (verdict && c.write(count()) === cells[fn]) continue;
          if (!c.inRange(count()) && drawn !== undefined && c.inRange(drawn)) moveTo(r, drawn, [2, 1]);
          const text = c.write(count());
          if (text === cells[fn]) continue;
          rows.set(r, fn, text);
          out.changed++;
        }
      }
    },
  };
}
