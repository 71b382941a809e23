/**
 * The grain of a column (issue 23, "Rows that read true"): synthetic values stay on the grain of
 * their real column. Datetimes at month or year granularity decode to month starts / 1 January;
 * numbers that are all multiples of a step (25, 100000, 0.5) decode to multiples of it; numbers
 * written with a fixed number of decimals (`3.0`) keep them. Checked through extraction
 * (`analyzeTable`), the decoder (every code decoded many times) and `Decoder.restrict` (a `where`
 * range keeps the grain too).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { BatchConverter, Decoder, analyzeTable, type Analysis, type Table } from "../src/sdk";
import { DatetimeFormat } from "../src/sdk/metadata/datetime";
import { inferGranularity, unitIndex, unitStart, type ParsedDatetime } from "../src/sdk/metadata/granularity";
import { describeColumns } from "../src/sdk/columns";
import { stepOf } from "../src/sdk/columns/numerical";
import type { ValueRange } from "../src/sdk/columns/common";

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);
const pad = (n: number, w = 2): string => String(n).padStart(w, "0");

/** The 1st of the i-th month after January 2001, `yyyy-MM-dd`. */
const monthStart = (i: number): string => `${2001 + Math.floor(i / 12)}-${pad((i % 12) + 1)}-01`;

const N = 180;
const COLUMNS = ["month", "month_tz", "year", "mass", "budget", "rating", "price", "odd"];

/**
 * 180 rows: 60 monthly dates (twice: plain and at local midnight +02:00), 45 years on 1 January,
 * 60 body masses in 25 g, 50 budgets in round 100,000s, 60 ratings written `0.0`..`29.5` (some
 * blank), 60 prices written with 2 decimals and no coarser step, masses with one value off the
 * 25 g grain.
 */
function grainTable(): Table {
  const rows = range(N).map((r) => {
    const i = (r * 7) % 60;
    return [
      monthStart(i),
      `${monthStart((i * 11) % 60)}T00:00+02:00`,
      `${1960 + (r % 45)}-01-01`,
      String(2700 + 25 * i),
      String(100000 * (1 + ((r * 3) % 50))),
      r % 17 === 5 ? "" : (((r * 13) % 60) / 2).toFixed(1),
      ((100 + i * i) / 100).toFixed(2),
      r === 77 ? "3711" : String(2700 + 25 * ((r * 11) % 60)),
    ];
  });
  return { columns: [...COLUMNS], rows };
}

/** Every code of every feature, `reps` times over (the missing code included). */
function everyCode(a: Analysis, reps: number): Record<string, Int32Array> {
  const K = a.metadata.cardinalities;
  const n = Math.max(...Object.values(K)) * reps;
  const out: Record<string, Int32Array> = {};
  for (const f of a.metadata.features) out[f] = Int32Array.from(range(n), (i) => i % K[f]);
  return out;
}

const GRAIN: Record<string, (v: string) => boolean> = {
  month: (v) => /^\d{4}-\d{2}-01$/.test(v),
  month_tz: (v) => /^\d{4}-\d{2}-01T00:00\+02:00$/.test(v),
  year: (v) => /^\d{4}-01-01$/.test(v),
  mass: (v) => /^\d+$/.test(v) && Number(v) % 25 === 0,
  budget: (v) => /^\d+$/.test(v) && Number(v) % 100000 === 0,
  rating: (v) => /^\d+\.[05]$/.test(v),
  price: (v) => /^\d+\.\d\d$/.test(v),
  odd: (v) => /^\d+$/.test(v),
};

/** The non-blank values of `rows`' column `f` that are off the column's grain. */
function offGrain(rows: string[][], f: number): string[] {
  return rows.map((r) => r[f]).filter((v) => v !== "" && !GRAIN[COLUMNS[f]](v));
}

test("inferGranularity: month when every value is the 1st at local midnight, year when every value is 1 January", () => {
  const at = (texts: string[], fmt = "yyyy-MM-dd"): ParsedDatetime[] => {
    const f = new DatetimeFormat(fmt);
    return texts.map((t) => f.parse(t)!);
  };
  assert.equal(inferGranularity(at(["2001-03-01", "1850-12-01", "1969-12-01", "2150-02-01"]), "day"), "month");
  assert.equal(inferGranularity(at(["2001-01-01", "1850-01-01", "1969-01-01"]), "day"), "year");
  assert.equal(inferGranularity(at(["2001-01-01", "1850-02-01"]), "day"), "month", "one month start that is no year start");
  assert.equal(inferGranularity(at(["2001-01-01", "2001-03-02"]), "day"), "day", "one day off the 1st");
  const iso = "yyyy-MM-dd'T'HH:mmZZ";
  assert.equal(inferGranularity(at(["2001-03-01T00:00+02:00", "2001-01-01T00:00-05:30"], iso), "minute"), "month", "local midnight in the written offset");
  assert.equal(inferGranularity(at(["2001-03-01T00:00+02:00", "2001-04-01T01:00+02:00"], iso), "minute"), "hour", "the 1st but not at midnight");
  assert.equal(inferGranularity(at(["2001-03-01T00:00+02:00"], iso).map((p) => ({ ...p, offset: 0 })), "minute"), "hour", "22:00 UTC of Feb 28 is no month start");
  assert.equal(inferGranularity([], "second"), "day", "no values prove no calendar grain");
});

test("unitStart / unitIndex: calendar lattices of months and years, exact at their points", () => {
  assert.equal(unitStart("month", 0), Date.UTC(1970, 0, 1));
  assert.equal(unitStart("month", -1), Date.UTC(1969, 11, 1));
  assert.equal(unitStart("month", 12 * 31 + 2), Date.UTC(2001, 2, 1));
  assert.equal(new Date(unitStart("year", -1969)).toISOString(), "0001-01-01T00:00:00.000Z", "year 0001, not 1901 (Date.UTC's two-digit years)");
  assert.equal(unitStart("day", 3), 3 * 86400000);
  for (const g of ["year", "month", "day"] as const) {
    for (const k of [-30000, -13, -1, 0, 1, 7, 374, 30000]) {
      if (g === "year" && Math.abs(k) > 8000) continue;
      assert.equal(unitIndex(g, unitStart(g, k)), k, `${g} ${k}`);
      const mid = unitIndex(g, unitStart(g, k) + 3600000);
      assert.ok(mid > k && mid < k + 1, `${g} ${k}: inside the unit, ${mid}`);
    }
  }
});

test("stepOf: the exact gcd of the values scaled by 10^decimals, coarser than 10^-decimals, from 3 distinct values", () => {
  assert.equal(stepOf([2700, 2725, 6300, 2700], 0), 25);
  assert.equal(stepOf([100000, 300000, 2500000], 0), 100000);
  assert.equal(stepOf([0.5, 1, 1.5, 29.5], 1), 0.5);
  assert.equal(stepOf([0.25, 0.5, 1.75], 2), 0.25);
  assert.equal(stepOf([-50, 0, 75], 0), 25, "signs and zero");
  assert.equal(stepOf([2700, 2725, 3711], 0), undefined, "one odd value: no step (no tolerance)");
  assert.equal(stepOf([25, 50], 0), undefined, "two distinct values prove nothing");
  assert.equal(stepOf([1.1, 1.2, 1.3], 1), undefined, "the writing's own unit is not a step");
});

test("extraction: granularity month/year, step and fixed_decimals in column_stats (quantile-binned columns)", async () => {
  const a = await analyzeTable(grainTable());
  const st = a.metadata.column_stats!;
  for (const f of COLUMNS) assert.ok(st[f].bin_edges && st[f].bin_edges.length > 2, `${f} has quantile bins`);
  assert.equal(st.month.granularity, "month");
  assert.equal(st.month_tz.granularity, "month");
  assert.equal(st.month_tz.offset, 120);
  assert.equal(st.year.granularity, "year");
  assert.equal(st.mass.step, 25);
  assert.equal(st.budget.step, 100000);
  assert.equal(st.rating.step, 0.5);
  assert.equal(st.rating.fixed_decimals, true, "every non-blank value written with its one decimal");
  assert.equal(st.rating.decimals, 1);
  assert.equal(st.price.fixed_decimals, true);
  assert.equal(st.price.step, undefined, "gcd 1 of the cents");
  assert.equal(st.odd.step, undefined, "one odd value means no step");
  assert.equal(st.mass.fixed_decimals, undefined, "integers have no decimals to keep");
  // A column with mixed writings (1.5 and 2) keeps no fixed decimals.
  const mixed = await analyzeTable({ columns: ["x", "y"], rows: range(40).map((i) => [i % 2 ? `${i}.5` : String(i), "a"]) });
  assert.equal(mixed.metadata.column_stats!.x.fixed_decimals, undefined);
  assert.equal(mixed.metadata.column_stats!.x.step, 0.5);

  const lines = describeColumns(a.codecs);
  const line = (f: string) => lines.find((l) => l.startsWith(`${f} `))!;
  assert.match(line("month"), /granularity month, 2001-01-01 \.\. 2005-12-01/);
  assert.match(line("year"), /granularity year, 1960-01-01 \.\. 2004-01-01/);
  assert.match(line("mass"), /2700 \.\. 4175, integers, step 25$/);
  assert.match(line("budget"), /integers, step 100000$/);
  assert.match(line("rating"), /1 decimals, step 0\.5, written with 1 decimal \(0\.0\); \d+ blank$/);
  // A fifth of the prices (i a multiple of 5) are whole quarters: a grain of their own (issue 40).
  assert.match(line("price"), /2 decimals, grain 0\.25 \(20%\), 0\.01 \(80%\), written with 2 decimals \(0\.00\)$/);
});

test("decoding stays in the grain: month starts, 1 January, multiples of the step, fixed decimals, inside [min, max]", async () => {
  const a = await analyzeTable(grainTable());
  const st = a.metadata.column_stats!;
  const dec = new Decoder(a.metadata);
  const rows = dec.decode(everyCode(a, 300), 7).rows;
  COLUMNS.forEach((f, c) => {
    assert.deepEqual(offGrain(rows, c).slice(0, 5), [], `${f}: every decoded value on the grain`);
  });
  // The draws spread over the grain's points (not a handful of the real values' texts).
  const distinct = (c: number) => new Set(rows.map((r) => r[c]).filter((v) => v !== "")).size;
  assert.ok(distinct(0) >= 55, `month: ${distinct(0)} distinct month starts`);
  assert.ok(distinct(2) >= 40, `year: ${distinct(2)} distinct years`);
  assert.ok(distinct(3) >= 55, `mass: ${distinct(3)} distinct multiples of 25`);
  assert.ok(distinct(5) >= 55, `rating: ${distinct(5)} distinct halves`);
  assert.ok(rows.some((r) => r[5] === "0.0") && rows.some((r) => /\.0$/.test(r[5]) && r[5] !== "0.0"), "trailing zeros written: 0.0, 3.0");
  assert.ok(rows.some((r) => /0$/.test(r[6])), "prices keep a trailing zero (1.10, 1.00)");
  const fmt = new DatetimeFormat("yyyy-MM-dd");
  for (const r of rows) {
    const t = fmt.parse(r[0])!.seconds;
    assert.ok(t >= st.month.min! && t <= st.month.max!, `month ${r[0]} inside [min, max]`);
    assert.ok(Number(r[3]) >= st.mass.min! && Number(r[3]) <= st.mass.max!, `mass ${r[3]} inside [min, max]`);
  }
  // The typed / Arrow path reads the fixed-decimal text and the month starts.
  const typed = new BatchConverter(a.metadata);
  assert.equal(typed.value(COLUMNS.indexOf("rating"), "3.0"), 3);
  assert.equal(typed.value(COLUMNS.indexOf("price"), "1.10"), 1.1);
  assert.equal(typed.value(COLUMNS.indexOf("month"), "2001-03-01"), Date.UTC(2001, 2, 1) / 86400000);
  for (const r of rows.slice(0, 500)) COLUMNS.forEach((_, c) => typed.value(c, r[c]));
});

test("a where range (Decoder.restrict) keeps the grain and the range", async () => {
  const a = await analyzeTable(grainTable());
  const dec = new Decoder(a.metadata);
  const fmt = new DatetimeFormat("yyyy-MM-dd");
  const tz = new DatetimeFormat("yyyy-MM-dd'T'HH:mmZZ");
  const day = (s: string) => fmt.parse(s)!.seconds;
  const cases: { f: string; range: ValueRange; parse: (t: string) => number | undefined }[] = [
    { f: "month", range: { lo: day("2002-03-15"), hi: day("2004-07-20") }, parse: (t) => fmt.parse(t)?.seconds },
    { f: "month_tz", range: { lo: tz.parse("2002-03-01T00:00+02:00")!.seconds, loOpen: true, hi: day("2003-01-01") }, parse: (t) => tz.parse(t)?.seconds },
    { f: "year", range: { lo: day("1970-06-01"), hi: day("1990-01-01"), hiOpen: true }, parse: (t) => fmt.parse(t)?.seconds },
    { f: "mass", range: { lo: 3010, hi: 3600, hiOpen: true }, parse: Number },
    { f: "budget", range: { lo: 250000, hi: 1750000 }, parse: Number },
    { f: "rating", range: { lo: 3.2, loOpen: true, hi: 10 }, parse: Number },
  ];
  for (const { f, range: r, parse } of cases) {
    const res = dec.restrict(f, r, parse)!;
    assert.ok(res.codes.length > 0, `${f}: some bins meet the range`);
    const n = res.codes.length * 200;
    const columns: Record<string, Int32Array> = {};
    for (const g of a.metadata.features) columns[g] = new Int32Array(n);
    columns[f] = Int32Array.from(range(n), (i) => res.codes[i % res.codes.length]);
    // As Synthesizer passes a where column: fixed, so row rules (month -> mass, a catalog) keep it.
    const fi = a.metadata.features.indexOf(f);
    const out = dec.decode(columns, 11, { decoders: { [f]: res.decoder }, fixed: (_r, g) => g === fi }).rows;
    const c = COLUMNS.indexOf(f);
    const values = out.map((row) => row[c]);
    assert.deepEqual(offGrain(out, c).slice(0, 5), [], `${f}: on the grain under the range`);
    const outside = values.filter((v) => {
      const x = parse(v)!;
      return (r.lo !== undefined && (r.loOpen ? !(x > r.lo) : !(x >= r.lo))) || (r.hi !== undefined && (r.hiOpen ? !(x < r.hi) : !(x <= r.hi)));
    });
    assert.deepEqual(outside.slice(0, 5), [], `${f}: inside the range`);
    assert.ok(new Set(values).size >= 3, `${f}: several values drawn (${new Set(values).size})`);
  }
  // The month range's first month start is April 2002 (March 1 is before the bound), its last July 2004.
  const res = dec.restrict("month", cases[0].range, cases[0].parse)!;
  const n = res.codes.length * 400;
  const cols: Record<string, Int32Array> = {};
  for (const g of a.metadata.features) cols[g] = new Int32Array(n);
  cols.month = Int32Array.from(range(n), (i) => res.codes[i % res.codes.length]);
  const monthIndex = a.metadata.features.indexOf("month");
  const months = new Set(dec.decode(cols, 3, { decoders: { month: res.decoder }, fixed: (_r, g) => g === monthIndex }).rows.map((r) => r[0]));
  assert.ok(months.has("2002-04-01") && months.has("2004-07-01"), "the range's end month starts are drawn");
  assert.ok(!months.has("2002-03-01") && !months.has("2004-08-01"));
});

/**
 * 4,000 departure times written `yyyy-MM-dd'T'HH:mm+05:30` over 90 days: 5% on the hour, 7% on the
 * half hour, 23% on another multiple of 5 minutes, the rest any minute (local time: in UTC the
 * hours fall on :30).
 */
function departures(): string[] {
  let s = 21;
  const next = (): number => ((s = (s * 1103515245 + 12345) % 2147483648) / 2147483648);
  return Array.from({ length: 4000 }, () => {
    const u = next();
    const g = u < 0.05 ? 60 : u < 0.12 ? 30 : u < 0.35 ? 5 : 1;
    const minute = Math.floor((90 * 1440 * next()) / g) * g;
    const d = new Date(Date.UTC(2024, 0, 1) + minute * 60000);
    return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}+05:30`;
  });
}

/** Share of times (`...HH:mm+05:30`) whose local minute of the day is a multiple of `g` minutes. */
function clockShare(values: string[], g: number): number {
  const v = values.filter((t) => t !== "");
  return v.filter((t) => (60 * Number(t.slice(11, 13)) + Number(t.slice(14, 16))) % g === 0).length / v.length;
}

test("a clock's grain: times rounded to 5 and 30 minutes and to the hour (local, +05:30) come back in the real shares, also under a where range", async () => {
  const real = departures();
  const a = await analyzeTable({ columns: ["dep", "k"], rows: real.map((v) => [v, "a"]) });
  const st = a.metadata.column_stats!.dep;
  assert.equal(st.granularity, "minute");
  assert.equal(st.offset, 330);
  assert.ok(st.grain, "a grain of the clock");
  assert.ok(st.grain.steps.includes(300) && st.grain.steps.includes(1800), `5 and 30 minutes found: ${st.grain.steps}`);
  const decode = (meta: typeof a.metadata): string[] => {
    const dec = new Decoder(meta);
    const cols: Record<string, Int32Array> = {};
    a.columns.forEach((f, i) => (cols[f] = Int32Array.from(a.codes[i])));
    return [5, 6, 7].flatMap((seed) => dec.decode(cols, seed, { rules: false }).rows.map((r) => r[0]));
  };
  const out = decode(a.metadata);
  assert.deepEqual(out.filter((t) => !/^\d{4}-\d\d-\d\dT\d\d:\d\d\+05:30$/.test(t)).slice(0, 3), [], "written in the format and offset");
  for (const g of [60, 30, 15, 10, 5]) {
    const [r, s] = [clockShare(real, g), clockShare(out, g)];
    assert.ok(Math.abs(r - s) <= 0.02, `multiples of ${g} minutes: real ${r.toFixed(3)}, decoded ${s.toFixed(3)}`);
  }
  const plain = structuredClone(a.metadata);
  delete plain.column_stats!.dep.grain;
  assert.ok(clockShare(decode(plain), 5) < 0.25, "drawn uniformly on minutes, the rounding is lost");
  const line = describeColumns(a.codecs).find((l) => l.startsWith("dep "))!;
  assert.match(line, /granularity minute, .*, grain 1 h \(\d+%\), 30 min \(\d+%\), .*5 min \(\d+%\), 1 min \(\d+%\)$/);

  // A where range: inside it, on the minute, the 5 minutes in the real share.
  const fmt = new DatetimeFormat("yyyy-MM-dd'T'HH:mmZZ");
  const sec = (t: string) => fmt.parse(t)!.seconds;
  const r: ValueRange = { lo: sec("2024-01-20T10:00+05:30"), hi: sec("2024-02-20T10:00+05:30"), hiOpen: true };
  const dec = new Decoder(a.metadata);
  const res = dec.restrict("dep", r, (t) => fmt.parse(t)?.seconds)!;
  assert.ok(res.codes.length > 0);
  const n = res.codes.length * 500;
  const cols: Record<string, Int32Array> = { dep: Int32Array.from(range(n), (i) => res.codes[i % res.codes.length]), k: new Int32Array(n) };
  const got = dec.decode(cols, 3, { decoders: { dep: res.decoder }, rules: false }).rows.map((row) => row[0]);
  assert.deepEqual(got.filter((t) => !(sec(t) >= r.lo! && sec(t) < r.hi!)).slice(0, 3), [], "inside the range");
  const inside = real.filter((t) => sec(t) >= r.lo! && sec(t) < r.hi!);
  assert.ok(Math.abs(clockShare(got, 5) - clockShare(inside, 5)) <= 0.03, `in range, 5 minutes: ${clockShare(got, 5)} against ${clockShare(inside, 5)}`);
});
