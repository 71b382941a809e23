/**
 * Calendar rules: a date kept as year, month and day columns (births by day, flights by
 * year/month/day_of_month/day_of_week) is found from the rows, printed, and every decoded row
 * holds a real date on its weekday.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { analyzeTable, Decoder, describeRule, ruleId, type CalendarRule, type Metadata, type Table } from "../src/sdk";
import { ruleShares } from "../src/sdk/rules/check";
import { RuleEnforcer } from "../src/sdk/rules/enforce";
import { daysInMonth, isoWeekday, nearestOnWeekday } from "../src/sdk/rules/calendar";
import { rowCells } from "../src/sdk/generate/batch";
import { Rng } from "../src/sdk/generate/sfc32";
import { independentCodes } from "./rules-fixtures";

const SHORT = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];

/** One row per day of 2019-2020: year, month, day, weekday as `weekday(w)`, births (fewer at weekends). */
function daysTable(weekday?: (w: number) => string, months?: string[]): Table {
  const rows: string[][] = [];
  for (let t = Date.UTC(2019, 0, 1); t < Date.UTC(2021, 0, 1); t += 86_400_000) {
    const d = new Date(t);
    const w = ((d.getUTCDay() + 6) % 7) + 1;
    const births = (w >= 6 ? 8000 : 12000) + ((t / 86_400_000) % 97) * 10;
    const m = d.getUTCMonth() + 1;
    const row = [String(d.getUTCFullYear()), months ? months[m - 1] : String(m), String(d.getUTCDate())];
    if (weekday) row.push(weekday(w));
    row.push(String(births));
    rows.push(row);
  }
  return { columns: ["year", "month", "day", ...(weekday ? ["weekday"] : []), "births"], rows };
}

function calendars(meta: Metadata): CalendarRule[] {
  return (meta.rules ?? []).filter((r): r is CalendarRule => r.type === "calendar");
}

/** Rows of `t` whose (year, month, day) is no date, or whose weekday column is not the date's. */
function offCalendar(t: Table, weekdayText?: (w: number) => string, monthOf: (s: string) => number = Number): string[] {
  const at = (c: string): number => t.columns.indexOf(c);
  return t.rows.flatMap((r) => {
    const [y, m, d] = [Number(r[at("year")]), monthOf(r[at("month")]), Number(r[at("day")])];
    if (!(d >= 1 && d <= daysInMonth(y, m))) return [r.join(",")];
    if (weekdayText && r[at("weekday")] !== weekdayText(isoWeekday(y, m, d))) return [r.join(",")];
    return [];
  });
}

describe("calendar rules", () => {
  test("year, month, day and a weekday written 1-7 are found as one rule, printed, and the real rows keep it", async () => {
    const t = daysTable(String);
    const { metadata } = await analyzeTable(t, { rareThreshold: 3 });
    const [rule, ...more] = calendars(metadata);
    assert.deepEqual(more, []);
    assert.deepEqual([ruleId(rule), rule.weekdays, rule.months, rule.share], ["calendar:year,month,day,weekday", ["1", "2", "3", "4", "5", "6", "7"], undefined, 1]);
    assert.equal(describeRule(rule), "calendar: (year, month, day) a date, weekday its weekday");
    assert.deepEqual(ruleShares([rule], metadata, t).map((s) => s.share), [1]);
  });

  test("decoded rows hold real dates on their weekday, and weekends keep their fewer births", async () => {
    const t = daysTable((w) => SHORT[w - 1]);
    const { metadata } = await analyzeTable(t, { rareThreshold: 3 });
    assert.deepEqual(calendars(metadata)[0]?.weekdays, SHORT);
    const synth = new Decoder(metadata).decode(independentCodes(metadata, 2000, 4), 11);
    const off = offCalendar(synth, (w) => SHORT[w - 1]);
    assert.deepEqual(off.slice(0, 5), [], `${off.length} of ${synth.rows.length} rows are no date on their weekday`);
    assert.ok(new Set(synth.rows.map((r) => r.slice(0, 3).join("-"))).size > 400, "the dates still vary");
  });

  test("the year is the column that reads as years, not an earlier integer column (a store number)", async () => {
    // No leap day and no weekday: any integer column would pass as the year.
    const t = daysTable();
    const rows = t.rows.filter((r) => !(r[1] === "2" && r[2] === "29")).map((r, i) => [String(1 + ((i * 37) % 5000)), ...r]);
    const { metadata } = await analyzeTable({ columns: ["store", ...t.columns], rows }, { rareThreshold: 3 });
    assert.deepEqual(calendars(metadata).map(ruleId), ["calendar:year,month,day"]);
  });

  test("month names and a date without weekday: no February 30, no April 31", async () => {
    const names = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
    const t = daysTable(undefined, names);
    const { metadata } = await analyzeTable(t, { rareThreshold: 3 });
    const [rule] = calendars(metadata);
    assert.deepEqual([ruleId(rule), rule.months, rule.weekdays], ["calendar:year,month,day", names, undefined]);
    const synth = new Decoder(metadata).decode(independentCodes(metadata, 2000, 5), 12);
    const off = offCalendar(synth, undefined, (s) => names.indexOf(s) + 1);
    assert.deepEqual(off.slice(0, 5), [], `${off.length} rows past their month's end`);
  });

  test("numbers 1-12 and 1-31 drawn independently are no date; rules.drop removes a found one", async () => {
    const rng = new Rng(3);
    const rows = Array.from({ length: 2000 }, () => [String(2000 + rng.int(10)), String(1 + rng.int(12)), String(1 + rng.int(31)), String(rng.int(100))]);
    const { metadata } = await analyzeTable({ columns: ["year", "rating", "score", "x"], rows }, { rareThreshold: 3 });
    assert.deepEqual(calendars(metadata), []);
    const dropped = await analyzeTable(daysTable(String), { rareThreshold: 3, rules: { drop: ["calendar:year,month,day,weekday"] } });
    assert.deepEqual(calendars(dropped.metadata), []);
  });

  test("a declared calendar is computed from the rows, and a row off the calendar is a DataError naming its line", async () => {
    const t = daysTable(String);
    const { metadata } = await analyzeTable(t, { rareThreshold: 3, rules: { detect: false, declare: [{ type: "calendar", columns: ["year", "month", "day", "weekday"] }] } });
    assert.deepEqual(calendars(metadata).map((r) => [ruleId(r), r.declared, r.weekdays?.[6]]), [["calendar:year,month,day,weekday", true, "7"]]);
    const bad = { columns: t.columns, rows: t.rows.map((r) => [...r]) };
    bad.rows[40][2] = "31";
    await assert.rejects(
      analyzeTable(bad, { rareThreshold: 3, rules: { detect: false, declare: [{ type: "calendar", columns: ["year", "month", "day", "weekday"] }] } }),
      /line 42, column "day": the declared rule "calendar:year,month,day,weekday" does not hold: year = "2019", month = "2", day = "31"/,
    );
  });

  test("the enforcer moves the day to its weekday within the month, writes the weekday of a fixed day, reports a fixed pair", () => {
    const meta: Metadata = {
      features: ["y", "m", "d", "w"],
      cardinalities: { y: 1, m: 1, d: 1, w: 1 },
      empirical_probs: { y: [1], m: [1], d: [1], w: [1] },
      column_stats: {
        y: { type: "numerical", count: 1, missing: 0 },
        m: { type: "numerical", count: 1, missing: 0 },
        d: { type: "numerical", count: 1, missing: 0 },
        w: { type: "categorical", count: 1, missing: 0 },
      },
      rules: [{ type: "calendar", columns: ["y", "m", "d", "w"], weekdays: SHORT, share: 1 }],
    };
    const rows = [
      ["2000", "1", "1", "Sat"], // kept
      ["2000", "1", "1", "Mon"], // Monday nearest Jan 1 2000 in January: the 3rd
      ["2001", "2", "30", "Wed"], // past the end: Feb 28 2001 is a Wednesday
      ["2000", "1", "31", "Tue"], // the 31st is a Monday: the next Tuesday is in February, so the 25th
      ["2000", "1", "5", "Sun"], // day fixed: the weekday follows it
      ["2000", "1", "6", "Sun"], // both fixed: unrepaired
      ["", "1", "6", "Sun"], // no year: not a date, left
    ];
    const fixed = (r: number, f: number): boolean => (r === 4 && f === 2) || (r === 5 && (f === 2 || f === 3));
    const out = new RuleEnforcer(meta).apply(rowCells(rows), 1, () => "", fixed);
    assert.deepEqual(rows.map((r) => r.join(",")), ["2000,1,1,Sat", "2000,1,3,Mon", "2001,2,28,Wed", "2000,1,25,Tue", "2000,1,5,Wed", "2000,1,6,Sun", ",1,6,Sun"]);
    assert.deepEqual([out.changed, out.unrepaired], [4, 1]);
    assert.equal(nearestOnWeekday(2000, 1, 4, 31, 6), 1, "Saturday the 1st is nearer Tuesday the 4th than Saturday the 8th");
  });
});
