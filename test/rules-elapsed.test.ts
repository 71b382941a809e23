/**
 * Elapsed-time rules: a number that counts the time between two datetime columns of its row (a
 * tenure's `length` in days from `start` to `end`; an age in years of 365.25 days from `birthday`
 * to `start`, with one decimal or in whole years rounded down) is found from the rows, printed,
 * and written from the row's datetimes in every decoded row; a number that is no such count is
 * not taken.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { describeRule, ruleId, type ElapsedRule, type Metadata } from "../src/sdk";
import { ruleShares } from "../src/sdk/rules/check";
import { RuleEnforcer } from "../src/sdk/rules/enforce";
import { rowCells } from "../src/sdk/generate/batch";
import { analyzed, decodeIndependent, table } from "./rules-fixtures";

const DAY = 86_400_000;
const iso = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/**
 * 400 terms: a start in 2000-2019, an end 30-3,000 days later (blank in 5% of rows, with the
 * length), the length in days, the holder's age at the start (birthday in 1930-1979) with one
 * decimal and in whole years, and a count of staff that is no elapsed time.
 */
function terms() {
  return table(["start", "end", "length", "birthday", "age", "age_years", "staff"], 400, (_i, rng) => {
    const start = Date.UTC(2000, 0, 1) + rng.int(20 * 365) * DAY;
    const days = 30 + rng.int(2971);
    const birthday = Date.UTC(1930, 0, 1) + rng.int(50 * 365) * DAY;
    const years = (start - birthday) / (365.25 * DAY);
    const ended = rng.next() >= 0.05;
    return [iso(start), ended ? iso(start + days * DAY) : "", ended ? days : "", iso(birthday), (Math.round(years * 10) / 10).toFixed(1), Math.floor(years), 1 + rng.int(3000)];
  });
}

function elapsed(meta: Metadata): ElapsedRule[] {
  return (meta.rules ?? []).filter((r): r is ElapsedRule => r.type === "elapsed");
}

describe("elapsed-time rules", () => {
  test("days between two dates and ages in years (one decimal; whole years rounded down) are found; a count that is none is not", async () => {
    const meta = await analyzed(terms());
    const found = Object.fromEntries(elapsed(meta).map((r) => [r.columns[0], [r.columns[1], r.columns[2], r.unit, r.decimals, r.rounding ?? "nearest", r.share]]));
    assert.deepEqual(found, {
      length: ["end", "start", 86_400, 0, "nearest", 1],
      age: ["start", "birthday", 31_557_600, 1, "nearest", 1],
      age_years: ["start", "birthday", 31_557_600, 0, "floor", 1],
    });
    const length = elapsed(meta).find((r) => r.columns[0] === "length")!;
    assert.equal(describeRule(length, meta), "elapsed: length = end - start in whole days");
    // Ranges and orders of the number are its shadows; blanks together stay.
    const others = (meta.rules ?? []).filter((r) => !["elapsed", "blank_together", "structural_zeros", "catalog", "fixed_combinations"].includes(r.type));
    for (const r of others) assert.ok(!ruleId(r).includes("length") && !ruleId(r).includes("age"), ruleId(r));
  });

  test("decoded rows of independent codes keep every elapsed time; without the rules they do not", async () => {
    const meta = await analyzed(terms());
    const rules = elapsed(meta);
    assert.equal(rules.length, 3);
    const synth = decodeIndependent(meta, 1000);
    for (const s of ruleShares(rules, meta, synth)) {
      assert.equal(s.share, 1, ruleId(s.rule));
      assert.ok(s.applicable > 900, `${ruleId(s.rule)}: ${s.applicable} rows`);
    }
    const loose = decodeIndependent(meta, 1000, false);
    for (const s of ruleShares(rules, meta, loose)) assert.ok(s.share < 0.2, `${ruleId(s.rule)}: ${s.share}`);
    // A blank end keeps its length blank (blank together), never a count of a blank.
    const [e, l] = ["end", "length"].map((c) => synth.columns.indexOf(c));
    for (const row of synth.rows) assert.equal(row[e] === "", row[l] === "");
  });

  test("a birth date moved to its drawn age keeps its day of year (a datetime part)", async () => {
    const t = table(["dob", "wedding", "age", "dayOfBirth"], 400, (_i, rng) => {
      const dob = Date.UTC(1930, 0, 1) + rng.int(50 * 365) * DAY;
      const wedding = dob + (20 * 365 + rng.int(20 * 365)) * DAY;
      const doy = Math.floor((dob - Date.UTC(new Date(dob).getUTCFullYear(), 0, 1)) / DAY) + 1;
      return [iso(dob), iso(wedding), ((wedding - dob) / (365 * DAY)).toFixed(2), doy];
    });
    const meta = await analyzed(t);
    assert.deepEqual((meta.rules ?? []).filter((r) => r.type === "elapsed" || r.type === "datetime_part").map(ruleId).sort(), ["datetime_part:dob,dayOfBirth", "elapsed:age,wedding,dob"]);
    const synth = decodeIndependent(meta, 1000);
    for (const s of ruleShares(meta.rules ?? [], meta, synth)) if (s.rule.type === "elapsed" || s.rule.type === "datetime_part") assert.equal(s.share, 1, ruleId(s.rule));
    const [age, dob, wedding] = ["age", "dob", "wedding"].map((c) => synth.columns.indexOf(c));
    for (const row of synth.rows) {
      assert.ok(Number(row[age]) >= 19.99 && Number(row[age]) <= 40.01, row.join(","));
      // Every age in full at two decimals, none at fewer (`30.1` for 30.14) though that reads as kept at its own.
      const want = Math.round(((Date.parse(row[wedding]) - Date.parse(row[dob])) / (365 * DAY)) * 100) / 100;
      assert.equal(Number(row[age]), want, row.join(","));
    }
  });

  test("a date two elapsed times count from stays where it is", () => {
    const rules: ElapsedRule[] = [
      { type: "elapsed", columns: ["days", "end", "start"], unit: 86_400, decimals: 0, share: 1 },
      { type: "elapsed", columns: ["plea_days", "plea", "start"], unit: 86_400, decimals: 0, share: 1 },
    ];
    const day = { type: "datetime", format: "yyyy-MM-dd", granularity: "day" };
    const meta = {
      features: ["start", "end", "days", "plea", "plea_days"],
      column_stats: { start: day, end: day, plea: day, days: { type: "numerical", decimals: 0, min: 100, max: 2000 }, plea_days: { type: "numerical", decimals: 0, min: 0, max: 2000 } },
      rules,
    } as unknown as Metadata;
    // Both counts are out of range; moving the start for one would break the other: each later date moves instead.
    const rows = [["2000-01-01", "2010-01-01", "500", "2009-01-01", "30"]];
    new RuleEnforcer(meta).apply(rowCells(rows), 1, () => "");
    assert.deepEqual(rows, [["2000-01-01", "2001-05-15", "500", "2000-01-31", "30"]]);
  });

  test("the enforcer writes the number from the dates, moves the earlier date where that count is out of range, or the later one to a number the user fixed", () => {
    const rule: ElapsedRule = { type: "elapsed", columns: ["length", "end", "start"], unit: 86_400, decimals: 0, share: 1 };
    const meta = {
      features: ["start", "end", "length"],
      column_stats: {
        start: { type: "datetime", format: "yyyy-MM-dd", granularity: "day" },
        end: { type: "datetime", format: "yyyy-MM-dd", granularity: "day" },
        length: { type: "numerical", decimals: 0, integer: true, min: 1, max: 5000 },
      },
      rules: [rule],
    } as unknown as Metadata;
    const rows = [
      ["2020-01-01", "2020-03-01", "7"], // written from the dates: 60 days (2020 is a leap year)
      ["2020-01-01", "2020-03-01", "10"], // number fixed: the end moves to 2020-01-11
      ["2020-01-01", "2020-03-01", "10"], // all fixed: unrepaired
      ["2020-01-01", "", "12"], // no end: left as drawn
      ["2020-01-01", "2020-01-31", ""], // blank number: stays blank
      ["2020-01-01", "2020-01-31", "30"], // kept
      ["2020-01-01", "2040-01-01", "30"], // 7,305 days is past the number's real range: the start moves to 30 days before the end
    ];
    const fixed = (r: number, f: number): boolean => (r === 1 && f === 2) || r === 2;
    const out = new RuleEnforcer(meta).apply(rowCells(rows), 1, () => "", fixed);
    assert.deepEqual(rows, [
      ["2020-01-01", "2020-03-01", "60"],
      ["2020-01-01", "2020-01-11", "10"],
      ["2020-01-01", "2020-03-01", "10"],
      ["2020-01-01", "", "12"],
      ["2020-01-01", "2020-01-31", ""],
      ["2020-01-01", "2020-01-31", "30"],
      ["2039-12-02", "2040-01-01", "30"],
    ]);
    assert.deepEqual(out, { changed: 3, unrepaired: 1 });
  });
});
