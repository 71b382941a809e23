/**
 * Datetime-part rules: a column writing a field of a datetime column (Walmart's `OPENDATE` with
 * `MONTH, DAY, YEAR`; an order date with its `day_of_week`; a timestamp with its `hour`) is found
 * from the rows in its own spelling, printed, and written from the datetime in every decoded row,
 * however rare the datetime; a column that is not a part is not taken.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { analyzeTable, Decoder, describeRule, ruleId, type DatetimePartRule, type Metadata, type Table } from "../src/sdk";
import { ruleShares } from "../src/sdk/rules/check";
import { RuleEnforcer } from "../src/sdk/rules/enforce";
import { rowCells } from "../src/sdk/generate/batch";
import { Rng } from "../src/sdk/generate/sfc32";
import type { RuleOptions } from "../src/sdk/rules/detect";
import { independentCodes } from "./rules-fixtures";

const LONG_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
const SHORT_MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** 1,500 rows at random minutes of 2021-2023 (nearly all distinct), each part in one spelling, and noise. */
function timestamps(): Table {
  const rng = new Rng(3);
  const rows: string[][] = [];
  for (let i = 0; i < 1500; i++) {
    const t = Date.UTC(2021, 0, 1) + rng.int(3 * 365 * 1440) * 60_000;
    const d = new Date(t);
    const iso = d.toISOString();
    const m = d.getUTCMonth();
    const w = (d.getUTCDay() + 6) % 7;
    rows.push([
      `${iso.slice(0, 10)} ${iso.slice(11, 16)}`,
      String(d.getUTCFullYear()),
      `Q${Math.floor(m / 3) + 1}`,
      SHORT_MONTHS[m].toUpperCase(),
      String(d.getUTCDate()),
      LONG_DAYS[w],
      String(d.getUTCDay()), // 0 Sunday .. 6 Saturday
      String(d.getUTCHours()).padStart(2, "0"),
      String(1 + rng.int(12)), // a number 1-12 that is no month
      `s${rng.int(4)}`,
    ]);
  }
  return { columns: ["time", "year", "quarter", "month", "day", "weekday", "dow", "hour", "noise", "store"], rows };
}

async function analyzed(t: Table, rules?: RuleOptions): Promise<Metadata> {
  const { metadata } = await analyzeTable(t, rules ? { rules } : {});
  return { ...metadata, rules: metadata.rules ?? [] };
}

function parts(meta: Metadata): DatetimePartRule[] {
  return (meta.rules ?? []).filter((r): r is DatetimePartRule => r.type === "datetime_part");
}

describe("datetime-part rules", () => {
  test("each part of a timestamp is found in its spelling; a number 1-12 that is no month is not", async () => {
    const meta = await analyzed(timestamps());
    const found = Object.fromEntries(parts(meta).map((r) => [r.columns[1], { part: r.part, names: r.names, width: r.width, share: r.share, of: r.columns[0] }]));
    assert.deepEqual(found, {
      year: { part: "year", names: undefined, width: undefined, share: 1, of: "time" },
      quarter: { part: "quarter", names: ["Q1", "Q2", "Q3", "Q4"], width: undefined, share: 1, of: "time" },
      month: { part: "month", names: SHORT_MONTHS.map((t) => t.toUpperCase()), width: undefined, share: 1, of: "time" },
      day: { part: "day", names: undefined, width: undefined, share: 1, of: "time" },
      weekday: { part: "weekday", names: LONG_DAYS, width: undefined, share: 1, of: "time" },
      dow: { part: "weekday", names: ["1", "2", "3", "4", "5", "6", "0"], width: undefined, share: 1, of: "time" },
      hour: { part: "hour", names: undefined, width: 2, share: 1, of: "time" },
    });
    assert.ok(!(meta.rules ?? []).some((r) => ruleId(r).includes("noise")), "noise is in no rule");
    const month = parts(meta).find((r) => r.columns[1] === "month")!;
    assert.equal(describeRule(month), "datetime part: month = month of time, written JAN .. DEC");
    const dow = parts(meta).find((r) => r.columns[1] === "dow")!;
    assert.equal(describeRule(dow), "datetime part: dow = weekday of time, written 1 .. 0 (Monday .. Sunday)");
  });

  test("decoded rows write every part from their own timestamp, whatever the model drew", async () => {
    const meta = await analyzed(timestamps());
    const synth = new Decoder(meta).decode(independentCodes(meta, 1000, 4), 9);
    for (const s of ruleShares(parts(meta), meta, synth)) assert.deepEqual([ruleId(s.rule), s.share, s.applicable], [ruleId(s.rule), 1, 1000]);
    const at = (c: string): number => synth.columns.indexOf(c);
    const row = synth.rows[0];
    const d = new Date(`${row[at("time")].replace(" ", "T")}:00Z`);
    assert.deepEqual([row[at("hour")], row[at("weekday")]], [String(d.getUTCHours()).padStart(2, "0"), LONG_DAYS[(d.getUTCDay() + 6) % 7]]);
  });

  test("a date's year, month and day columns are written from the date, the calendar of them dropped", async () => {
    // Walmart's store openings: OPENDATE M/d/yy beside MONTH, DAY, YEAR; most dates seen once.
    const rng = new Rng(5);
    const rows = Array.from({ length: 400 }, () => {
      const d = new Date(Date.UTC(1962, 0, 1) + rng.int(44 * 365) * 86_400_000);
      const [y, m, day] = [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate()];
      return [`${m}/${day}/${String(y).slice(2)}`, String(m), String(day), String(y), `t${rng.int(2)}`];
    });
    const meta = await analyzed({ columns: ["OPENDATE", "MONTH", "DAY", "YEAR", "type"], rows });
    assert.deepEqual(parts(meta).map(ruleId).sort(), ["datetime_part:OPENDATE,DAY", "datetime_part:OPENDATE,MONTH", "datetime_part:OPENDATE,YEAR"]);
    assert.ok(!(meta.rules ?? []).some((r) => r.type === "calendar"), "no calendar of the parts");
    const synth = new Decoder(meta).decode(independentCodes(meta, 1000, 6), 3);
    for (const s of ruleShares(parts(meta), meta, synth)) assert.equal(s.share, 1, ruleId(s.rule));
  });

  test("a catalog that writes the datetime and its parts stays, and decoded rows keep both", async () => {
    // 150 stores of 4 rows each: store -> OPENDATE, MONTH, YEAR, region.
    const rng = new Rng(12);
    const rows: string[][] = [];
    for (let s = 0; s < 150; s++) {
      const d = new Date(Date.UTC(1962, 0, 1) + rng.int(44 * 365) * 86_400_000);
      const region = `r${rng.int(5)}`;
      for (let k = 0; k < 4; k++) rows.push([`S${s}`, d.toISOString().slice(0, 10), String(d.getUTCMonth() + 1), String(d.getUTCFullYear()), region, String(rng.int(1000))]);
    }
    const meta = await analyzed({ columns: ["store", "OPENDATE", "MONTH", "YEAR", "region", "sales"], rows });
    const catalogs = (meta.rules ?? []).filter((r) => r.type === "catalog").map((r) => (r.type === "catalog" ? r.columns : []));
    assert.deepEqual(catalogs, [["store", "OPENDATE", "MONTH", "YEAR", "region"]]);
    assert.deepEqual(parts(meta).map(ruleId).sort(), ["datetime_part:OPENDATE,MONTH", "datetime_part:OPENDATE,YEAR"]);
    const synth = new Decoder(meta).decode(independentCodes(meta, 1000, 7), 2);
    for (const s of ruleShares(meta.rules!, meta, synth)) assert.equal(s.share, 1, ruleId(s.rule));
  });

  test("a rule between a part and another column stays, and decoded rows keep it around the part", async () => {
    // Bike sharing by day (UCI): dteday, season (from the solstices and equinoxes), mnth, weekday
    // 0-6 from Sunday, workingday 0 at weekends and on holidays.
    const rng = new Rng(8);
    const rows: string[][] = [];
    for (let t = Date.UTC(2011, 0, 1); t < Date.UTC(2013, 0, 1); t += 86_400_000) {
      const d = new Date(t);
      const [m, w] = [d.getUTCMonth() + 1, d.getUTCDay()];
      const season = (Math.floor(((m % 12) * 31 + d.getUTCDate() - 21 + 31) / 93) % 4) + 1;
      const working = w >= 1 && w <= 5 && rng.int(30) > 0 ? 1 : 0;
      rows.push([d.toISOString().slice(0, 10), String(season), String(m), String(w), String(working), String(2000 + rng.int(6000))]);
    }
    const meta = await analyzed({ columns: ["dteday", "season", "mnth", "weekday", "workingday", "cnt"], rows });
    assert.deepEqual(parts(meta).map(ruleId).sort(), ["datetime_part:dteday,mnth", "datetime_part:dteday,weekday"]);
    const ids = meta.rules!.map(ruleId);
    assert.ok(ids.includes("structural_zeros:weekday,workingday"), "weekends are never working days");
    assert.ok(ids.includes("fixed_combinations:season,mnth"), "a season holds three or four months");
    const synth = new Decoder(meta).decode(independentCodes(meta, 1000, 2), 4);
    // The day's key is kept by sampling, not by the decoder (1,000 rows of 731 days repeat some).
    const decoded = meta.rules!.filter((r) => r.type !== "unique");
    for (const s of ruleShares(decoded, meta, synth)) assert.equal(s.share, 1, ruleId(s.rule));
  });

  test("the calendar of year, month and day columns without a datetime is kept", async () => {
    const rows: string[][] = [];
    for (let t = Date.UTC(2019, 0, 1); t < Date.UTC(2021, 0, 1); t += 86_400_000) {
      const d = new Date(t);
      rows.push([String(d.getUTCFullYear()), String(d.getUTCMonth() + 1), String(d.getUTCDate()), String(t % 977)]);
    }
    const meta = await analyzed({ columns: ["year", "month", "day", "births"], rows });
    // One row per day: the date's columns are the key; births (t mod 977) fill 75% of 0-976, distinct, a key too.
    assert.deepEqual(meta.rules!.map(ruleId), ["calendar:year,month,day", "unique:births", "unique:year,month,day"]);
  });

  test("--rules drops a detected part and declares one, naming a row that breaks it", async () => {
    const t = timestamps();
    const dropped = await analyzed(t, { drop: ["datetime_part:time,hour"] });
    assert.ok(!parts(dropped).some((r) => r.columns[1] === "hour"));
    const declared = await analyzed(t, { detect: false, declare: [{ type: "datetime_part", columns: ["time", "weekday"] }] });
    assert.deepEqual(parts(declared).map((r) => [r.part, r.names, r.declared]), [["weekday", LONG_DAYS, true]]);
    const broken = { ...t, rows: t.rows.map((r, i) => (i === 7 ? r.map((v, j) => (j === 5 ? (v === "Monday" ? "Tuesday" : "Monday") : v)) : r)) };
    await assert.rejects(analyzed(broken, { detect: false, declare: [{ type: "datetime_part", columns: ["time", "weekday"], part: "weekday" }] }), /line 9/);
  });

  test("the enforcer moves the datetime to the part drawn, or to one the user fixed, and writes the part of a fixed datetime", () => {
    const rule: DatetimePartRule = { type: "datetime_part", columns: ["when", "month"], part: "month", names: SHORT_MONTHS, share: 1 };
    const meta = {
      features: ["when", "month"],
      column_stats: { when: { type: "datetime", format: "yyyy-MM-dd" }, month: { type: "categorical" } },
      rules: [rule],
    } as unknown as Metadata;
    const rows = [
      ["2020-03-31", "Jan"], // the date moves to the month drawn
      ["2020-03-31", "Feb"], // month fixed: the date moves to Feb 29
      ["2020-03-31", "Feb"], // both fixed: unrepaired
      ["", "Jul"], // no datetime: left as drawn
      ["2020-05-02", "Jan"], // date fixed: the month is written from it
    ];
    const fixed = (r: number, f: number): boolean => (r === 1 && f === 1) || r === 2 || (r === 4 && f === 0);
    const cells = rowCells(rows);
    const out = new RuleEnforcer(meta).apply(cells, 1, () => "", fixed);
    assert.deepEqual(rows, [
      ["2020-01-31", "Jan"],
      ["2020-02-29", "Feb"],
      ["2020-03-31", "Feb"],
      ["", "Jul"],
      ["2020-05-02", "May"],
    ]);
    assert.deepEqual(out, { changed: 3, unrepaired: 1 });
  });

  test("other rules hold the part like a fixed cell: an inequality redraws its other side instead of swapping the part away", () => {
    const meta = {
      features: ["when", "hour", "x"],
      column_stats: {
        when: { type: "datetime", format: "yyyy-MM-dd HH:mm" },
        hour: { type: "numerical", bin_edges: [0, 23], decimals: 0 },
        x: { type: "numerical", bin_edges: [0, 23], decimals: 0 },
      },
      rules: [
        { type: "datetime_part", columns: ["when", "hour"], part: "hour", share: 1 },
        { type: "inequality", high: "hour", low: "x", strict: false, share: 1 },
      ],
    } as unknown as Metadata;
    const rows = [["2020-01-01 05:00", "5", "9"]];
    const out = new RuleEnforcer(meta).apply(rowCells(rows), 1, (f) => (f === 2 ? "3" : "12"));
    assert.deepEqual(rows, [["2020-01-01 05:00", "5", "3"]]);
    assert.equal(out.unrepaired, 0);
  });
});

describe("day of year", () => {
  test("a column of the day of year of a birth date is found and written from the date in decoded rows", async () => {
    const rng = new Rng(11);
    const rows: string[][] = [];
    for (let i = 0; i < 300; i++) {
      const t = Date.UTC(1930, 0, 1) + rng.int(60 * 365) * 86_400_000;
      const d = new Date(t);
      rows.push([d.toISOString().slice(0, 10), String(Math.floor((t - Date.UTC(d.getUTCFullYear(), 0, 1)) / 86_400_000) + 1), String(rng.int(5))]);
    }
    const meta = await analyzed({ columns: ["dob", "dayOfBirth", "kids"], rows });
    assert.deepEqual(parts(meta).map((r) => [r.columns.join(","), r.part]), [["dob,dayOfBirth", "day_of_year"]]);
    assert.equal(describeRule(parts(meta)[0], meta), "datetime part: dayOfBirth = day of year of dob");
    const synth = new Decoder(meta).decode(independentCodes(meta, 1000, 3), 5);
    for (const s of ruleShares(parts(meta), meta, synth)) assert.equal(s.share, 1, ruleId(s.rule));
  });
});
