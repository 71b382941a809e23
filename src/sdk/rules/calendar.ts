/**
 * The calendar rule (`CalendarRule`, docs/api.md "Row rules"): dates held as year, month and day
 * columns, and the weekday of that date. Shared by the checker (`./check`), the enforcer
 * (`./enforce`) and detection (`./detect/calendar`). Gregorian calendar, proleptic, as
 * JavaScript's `Date` counts it; month names from luxon's English `Info`.
 */
import { Info } from "luxon";
import type { CalendarRule } from "../../contract";
import type { CompiledRule } from "./compiled-rule";
import { noneFixed } from "./compiled-rule";

/** Days in month `m` (1-12) of year `y`. */
export function daysInMonth(y: number, m: number): number {
  return utcDate(y, m + 1, 0).getUTCDate();
}

/** The UTC midnight of year y, month m (1-based), day d; years 0-99 as written (not 1900 + y). */
function utcDate(y: number, m: number, d: number): Date {
  const dt = new Date(0);
  dt.setUTCFullYear(y, m - 1, d);
  return dt;
}

/** ISO weekday of a valid date: 1 Monday .. 7 Sunday. */
export function isoWeekday(y: number, m: number, d: number): number {
  return ((utcDate(y, m, d).getUTCDay() + 6) % 7) + 1;
}

/** English month names (January..December) in long and short forms, for month columns that write names. */
export function monthNames(style: "long" | "short"): string[] {
  return Info.months(style, { locale: "en-US" });
}

/** An integer cell: its number, or undefined for a blank or anything else (`2.5`, `x`). */
function integerOf(text: string): number | undefined {
  if (text === "") return undefined;
  const x = Number(text);
  return Number.isInteger(x) ? x : undefined;
}

/** One row's date as the rule reads it, or undefined when a cell is blank or not a date part. */
export interface RuleDate {
  y: number;
  m: number;
  d: number;
}

/** Reads a rule's year, month and day cells (month by `months` when given, case-insensitive). */
export function dateReader(rule: Pick<CalendarRule, "months">): (y: string, m: string, d: string) => RuleDate | undefined {
  const byName = rule.months ? new Map(rule.months.map((t, i) => [t.toLowerCase(), i + 1])) : undefined;
  return (ys, ms, ds) => {
    const y = integerOf(ys);
    const d = integerOf(ds);
    const m = byName ? byName.get(ms.toLowerCase()) : integerOf(ms);
    if (y === undefined || m === undefined || d === undefined || m < 1 || m > 12) return undefined;
    return { y, m, d };
  };
}

/** ISO weekday (1-7) per weekday text of the rule, `""` (unseen) left out. */
function weekdayOfText(weekdays: readonly string[] | undefined): Map<string, number> {
  const out = new Map<string, number>();
  weekdays?.forEach((t, i) => t !== "" && out.set(t, i + 1));
  return out;
}

/**
 * The rule's verdict on one row (cells in `idx` order: year, month, day, weekday): undefined when
 * a date cell is blank or not a date part (or the weekday blank, for that half); false for a day
 * past its month's end, or a weekday other than the date's (a text not in `weekdays` included).
 */
export function calendarCheck(rule: CalendarRule, idx: readonly number[]): (row: readonly string[]) => boolean | undefined {
  const read = dateReader(rule);
  const wd = weekdayOfText(rule.weekdays);
  return (row) => {
    const date = read(row[idx[0]], row[idx[1]], row[idx[2]]);
    if (!date) return undefined;
    if (date.d < 1 || date.d > daysInMonth(date.y, date.m)) return false;
    if (idx.length < 4 || row[idx[3]] === "") return true;
    return wd.get(row[idx[3]]) === isoWeekday(date.y, date.m, date.d);
  };
}

/**
 * Keeps the rule in decoded rows: the day moves to the nearest day of its month on the row's
 * weekday, so the weekday's relation to other columns (fewer births on
 * Sundays) and the month stay as drawn; without a weekday a day past the month's end becomes its
 * last day. When the day is fixed, the weekday is written from the date instead; when both are
 * fixed, or the day was fixed past its month's end, the row is counted unrepaired. Writes days
 * as integers.
 */
export function calendarRule(rule: CalendarRule, idx: readonly number[]): CompiledRule {
  const read = dateReader(rule);
  const wd = weekdayOfText(rule.weekdays);
  const [, , dc, wc] = idx;
  return {
    apply(rows, _rng, given, _draw, out) {
      const fixed = given ?? noneFixed;
      for (let r = 0; r < rows.length; r++) {
        const date = read(rows.get(r, idx[0]), rows.get(r, idx[1]), rows.get(r, dc));
        if (!date) continue;
        const last = daysInMonth(date.y, date.m);
        let d = Math.min(Math.max(date.d, 1), last);
        const want = wc === undefined ? undefined : wd.get(rows.get(r, wc));
        if (want !== undefined && isoWeekday(date.y, date.m, d) !== want) {
          if (fixed(r, dc)) {
            if (date.d !== d || fixed(r, wc!)) {
              out.unrepaired++;
              continue;
            }
            const text = rule.weekdays![isoWeekday(date.y, date.m, d) - 1];
            if (text === "") {
              out.unrepaired++;
              continue;
            }
            rows.set(r, wc!, text);
            out.changed++;
            continue;
          }
          d = nearestOnWeekday(date.y, date.m, d, last, want);
        }
        if (d === date.d) continue;
        if (fixed(r, dc)) {
          out.unrepaired++;
          continue;
        }
        rows.set(r, dc, String(d));
        out.changed++;
      }
    },
  };
}

/** The day of month nearest `d` (1..`last`) falling on ISO weekday `w` (never a tie: 3 days back is 4 ahead). */
export function nearestOnWeekday(y: number, m: number, d: number, last: number, w: number): number {
  const ahead = (w - isoWeekday(y, m, d) + 7) % 7;
  const back = ahead === 0 ? 0 : 7 - ahead;
  const down = d - back;
  const up = d + ahead;
  return down >= 1 && (back <= ahead || up > last) ? down : up;
}
