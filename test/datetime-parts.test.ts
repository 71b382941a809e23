/**
 * Cyclic parts of a datetime column (issue 40, generality): where quantile bins span days, the
 * hour of the day is a model feature of its own, so a value that follows the daily cycle keeps
 * its relation to the hour, and hours the real table never has stay absent. Checked through
 * extraction (`analyzeTable`, in memory and a streamed CSV on worker threads), the decoder fed
 * codes drawn from the metadata's own marginals (what a model that learnt them draws), seeded
 * generation's encoding and `Decoder.restrict`, and the writers.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Decoder, analyzeTable, writeTableCsv, type Table } from "../src/sdk";
import type { ColumnStats, Metadata } from "../src/contract";
import { columnTypes } from "../src/sdk/io/typed";
import { calendarGranularity, describeParts, hiddenCycles } from "../src/sdk/columns/datetime-parts";
import { encodeSeed, readSeedTable } from "../src/sdk/generate/seeded-request";
import { Rng } from "../src/sdk/generate/sfc32";

const pad = (n: number): string => String(n).padStart(2, "0");
const DAYS = 70;
/** Hours of the day the table has readings at: never 00:00 .. 05:59. */
const HOURS = Array.from({ length: 18 }, (_, i) => i + 6);

/** The daily cycle: coldest at 06:00, warmest at 15:00, in whole degrees. */
const temperature = (h: number, day: number): number => Math.round(4 + 12 * Math.sin(((h - 9) / 24) * 2 * Math.PI) + (day % 3));

/** 70 days x 18 hours: `time` (yyyy-MM-dd HH:mm), a temperature following the hour, a station. */
function dailyCycleTable(): Table {
  const rows: string[][] = [];
  for (let d = 0; d < DAYS; d++) {
    const date = new Date(Date.UTC(2021, 2, 1 + d));
    const day = `${date.getUTCFullYear()}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}`;
    for (const h of HOURS) rows.push([`${day} ${pad(h)}:${pad((d * 7 + h) % 4 === 0 ? 0 : 30)}`, String(temperature(h, d)), d % 2 ? "north" : "south"]);
  }
  return { columns: ["time", "temperature", "station"], rows };
}

/** Draws n rows of codes as a model that learnt the metadata's pair (hour, temperature) would. */
function drawCodes(meta: Metadata, n: number, seed: number): Record<string, Int32Array> {
  const rng = new Rng(seed);
  const pick = (probs: readonly number[]): number => {
    let u = rng.next();
    for (let c = 0; c < probs.length; c++) if ((u -= probs[c]) < 0) return c;
    return probs.length - 1;
  };
  const out: Record<string, Int32Array> = {};
  for (const f of meta.features) out[f] = Int32Array.from({ length: n }, () => pick(meta.empirical_probs[f]));
  const pair = meta.marginals!.find((m) => m.features.includes("time#hour") && m.features.includes("temperature"));
  assert.ok(pair, "the pair (hour of day, temperature) is among the 2-way marginals");
  const Kb = meta.cardinalities[pair.features[1]];
  for (let r = 0; r < n; r++) {
    const cell = pick(pair.probs);
    out[pair.features[0]][r] = Math.floor(cell / Kb);
    out[pair.features[1]][r] = cell % Kb;
  }
  return out;
}

const hourOf = (text: string): number => Number(text.slice(11, 13));

function meanByHour(t: Table): Map<number, number> {
  const sums = new Map<number, [number, number]>();
  for (const r of t.rows) {
    const s = sums.get(hourOf(r[0])) ?? [0, 0];
    sums.set(hourOf(r[0]), [s[0] + Number(r[1]), s[1] + 1]);
  }
  return new Map([...sums].map(([h, [s, c]]) => [h, s / c]));
}

test("parts: the hour of the day of a datetime binned in days is a categorical feature of its own, marked part_of", async () => {
  const a = await analyzeTable(dailyCycleTable());
  const m = a.metadata;
  assert.ok(m.features.includes("time#hour"), `features: ${m.features.join(", ")}`);
  assert.deepEqual(m.features.slice(0, 3), ["time", "temperature", "station"]);
  assert.deepEqual(m.column_stats!["time#hour"].part_of, { column: "time", cycle: "hour_of_day" });
  assert.equal(m.cardinalities["time#hour"], 24);
  const probs = m.empirical_probs["time#hour"];
  for (let h = 0; h < 6; h++) assert.equal(probs[h], 0, `no real row at ${h}:00`);
  for (const h of HOURS) assert.ok(Math.abs(probs[h] - 1 / 18) < 1e-9);
  assert.ok(!m.features.includes("time#weekday"), "bins of about 2 days keep the day of the week");
  // The same hours every day: the hour does not change from bin to bin, so no pair with its datetime.
  assert.ok(!m.marginals!.some((p) => p.features.includes("time") && p.features.includes("time#hour")));
  assert.equal(describeParts(m), "parts as model features: time (hour of day)");
  // The table the SDK hands on (codes, rules, evaluation) is the table's own columns.
  assert.deepEqual(a.columns, ["time", "temperature", "station"]);
});

test("parts: a part's name never takes a table column's", async () => {
  const t = dailyCycleTable();
  const table: Table = { columns: [...t.columns, "time#hour"], rows: t.rows.map((r, i) => [...r, String(i % 5)]) };
  const m = (await analyzeTable(table)).metadata;
  assert.equal(m.column_stats!["time#hour"].part_of, undefined);
  assert.deepEqual(m.column_stats!["time#hour#"].part_of, { column: "time", cycle: "hour_of_day" });
});

test("parts: decoded rows keep the hour x temperature relation and no row falls at an hour the real table never has", async () => {
  const real = dailyCycleTable();
  const { metadata } = await analyzeTable(real);
  const dec = new Decoder(metadata);
  const codes = drawCodes(metadata, 4000, 7);
  const syn = dec.decode(codes, 11);
  assert.deepEqual(syn.columns, ["time", "temperature", "station"], "parts are never written");
  assert.equal(syn.rows[0].length, 3);
  const night = syn.rows.filter((r) => hourOf(r[0]) < 6).length;
  assert.equal(night, 0, "no synthetic row at 00:00-05:59");
  // Each row's hour is the drawn hour code.
  syn.rows.forEach((r, i) => assert.equal(hourOf(r[0]), codes["time#hour"][i]));
  const realMeans = meanByHour(real);
  const synMeans = meanByHour(syn);
  for (const h of HOURS) assert.ok(Math.abs(synMeans.get(h)! - realMeans.get(h)!) < 2.5, `hour ${h}: real ${realMeans.get(h)}, synthetic ${synMeans.get(h)}`);
  // The writers name the table's columns only.
  assert.deepEqual(columnTypes(metadata).map((c) => c.name), ["time", "temperature", "station"]);
  const dir = mkdtempSync(join(tmpdir(), "parts-"));
  try {
    const out = join(dir, "out.csv");
    await writeTableCsv(syn, out);
    const { readFileSync } = await import("node:fs");
    assert.equal(readFileSync(out, "utf8").split("\n")[0], "time,temperature,station");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("parts: a where range on the datetime keeps the range and the drawn hour; a seed cell sends its hour", async () => {
  const { metadata } = await analyzeTable(dailyCycleTable());
  const dec = new Decoder(metadata);
  const lo = Date.UTC(2021, 3, 1) / 1000;
  const hi = Date.UTC(2021, 3, 8) / 1000;
  const restricted = dec.restrict("time", { lo, hi, hiOpen: true }, (t) => Date.parse(t.replace(" ", "T") + "Z") / 1000)!;
  const rng = new Rng(3);
  const edges = metadata.column_stats!.time.bin_edges!;
  for (let i = 0; i < 360; i++) {
    const code = restricted.codes[i % restricted.codes.length];
    const hour = HOURS[Math.floor(i / restricted.codes.length) % HOURS.length];
    const v = restricted.decoder.decode(code, rng, i, undefined, undefined, undefined, [hour]);
    const x = Date.parse(v.replace(" ", "T") + "Z") / 1000;
    assert.ok(x >= lo && x < hi, `${v} inside the range`);
    // The bin inside the range holds an instant at that hour (whole days, or the hour in a partial one): the value is at it.
    const [a, b] = [Math.max(lo, edges[code]), Math.min(hi, edges[code + 1])];
    const holds = b - a >= 86400 || [0, 1].some((d) => {
      const t = (Math.floor(a / 86400) + d) * 86400 + hour * 3600;
      return t + 3600 > a && t < b;
    });
    if (holds) assert.equal(hourOf(v), hour, `${v} at ${hour}:00`);
  }
  const seed = await readSeedTable({ columns: ["time"], rows: [["2021-03-05 17:30"], [""]] });
  const enc = encodeSeed(metadata, seed);
  assert.deepEqual(enc.features, ["time", "time#hour"]);
  assert.equal(enc.rows[0][1], 17);
  assert.equal(enc.rows[1][1], null);
  await assert.rejects(async () => encodeSeed(metadata, await readSeedTable({ columns: ["time#hour"], rows: [["17"]] })), /does not have/);
});

test("parts: a streamed CSV read by worker threads gives the in-memory table's metadata", async () => {
  const table = dailyCycleTable();
  const dir = mkdtempSync(join(tmpdir(), "parts-"));
  try {
    const path = join(dir, "t.csv");
    writeFileSync(path, [table.columns.join(","), ...table.rows.map((r) => r.join(","))].join("\n") + "\n");
    const fromFile = (await analyzeTable(path, { threads: 2 })).metadata;
    const inMemory = (await analyzeTable(table)).metadata;
    assert.ok(fromFile.features.includes("time#hour"));
    assert.deepEqual(fromFile.empirical_probs, inMemory.empirical_probs);
    assert.deepEqual(fromFile.marginals, inMemory.marginals);
    assert.deepEqual(fromFile.column_stats, inMemory.column_stats);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("parts: a table larger than the sample counts its parts in pass 2, as read whole (in memory and a CSV on worker threads)", async () => {
  const table = dailyCycleTable();
  const dir = mkdtempSync(join(tmpdir(), "parts-"));
  try {
    const path = join(dir, "t.csv");
    writeFileSync(path, [table.columns.join(","), ...table.rows.map((r) => r.join(","))].join("\n") + "\n");
    const whole = (await analyzeTable(table)).metadata;
    for (const m of [(await analyzeTable(table, { sampleRows: 300 })).metadata, (await analyzeTable(path, { sampleRows: 300, threads: 2 })).metadata]) {
      assert.deepEqual(m.features, whole.features);
      assert.deepEqual(m.empirical_probs["time#hour"], whole.empirical_probs["time#hour"]);
      assert.deepEqual(m.marginals, whole.marginals);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("parts: the day of the week is added only where it says something the bins do not", async () => {
  // 400 days of 10 rows, bins of about 12 days: a count that is high at weekends, and one that is not.
  const rows: string[][] = [];
  for (let d = 0; d < 400; d++) {
    const date = new Date(Date.UTC(2020, 0, 1 + d));
    const weekend = date.getUTCDay() === 0 || date.getUTCDay() === 6;
    const day = `${date.getUTCFullYear()}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}`;
    for (let i = 0; i < 10; i++) rows.push([day, String((weekend ? 20 : 5) + (i % 3)), String((d * 7 + i * 3) % 11)]);
  }
  const m = (await analyzeTable({ columns: ["day", "visitors", "noise"], rows })).metadata;
  assert.deepEqual(m.column_stats!["day#weekday"]?.part_of, { column: "day", cycle: "day_of_week" });
  const flat = (await analyzeTable({ columns: ["day", "noise"], rows: rows.map((r) => [r[0], r[2]]) })).metadata;
  assert.deepEqual(flat.features, ["day", "noise"], "no part where the weekday tells nothing");
});

test("parts: the cycles follow the bins' widths and the span", () => {
  const day = 86400;
  const stats = (granularity: ColumnStats["granularity"], widest: number, span: number): ColumnStats => ({
    type: "datetime",
    count: 10,
    missing: 0,
    format: "yyyy-MM-dd HH:mm",
    granularity,
    min: 0,
    max: span,
    bin_edges: [0, widest, span],
  });
  assert.deepEqual(hiddenCycles(stats("minute", day / 2, day)), []);
  assert.deepEqual(hiddenCycles(stats("hour", 2 * day, 4 * day)), ["hour_of_day"]);
  assert.deepEqual(hiddenCycles(stats("day", 2 * day, 4 * day)), []);
  assert.deepEqual(hiddenCycles(stats("day", 10 * day, 400 * day)), ["day_of_week"]);
  assert.deepEqual(hiddenCycles(stats("second", 40 * day, 800 * day)), ["hour_of_day", "day_of_week", "month_of_year"]);
  assert.deepEqual(hiddenCycles(stats("month", 400 * day, 4000 * day)), ["month_of_year"]);
  assert.deepEqual(hiddenCycles(stats("month", 400 * day, 600 * day)), [], "under two years");
  assert.deepEqual(hiddenCycles(stats("year", 4000 * day, 40000 * day)), []);
  assert.deepEqual(hiddenCycles({ ...stats("hour", 2 * day, 4 * day), bin_edges: [0, 0] }), []);
});

test("parts: monthly readings of 6 stations over 30 years keep their season: the month of the year, on month starts", async () => {
  // CO2-like series: a trend plus a seasonal swing of +-3 (high in May, low in October). One
  // series alone (a row per month) is too few rows per bin to tell the season from chance.
  const season = (m: number): number => 3 * Math.cos(((m - 4) / 12) * 2 * Math.PI);
  const rows: string[][] = [];
  for (let s = 0; s < 6; s++) for (let y = 1980; y < 2010; y++) for (let m = 0; m < 12; m++) rows.push([`${y}-${pad(m + 1)}-01`, (340 + (y - 1980) * 1.5 + season(m) + 0.3 * s).toFixed(2)]);
  const { metadata } = await analyzeTable({ columns: ["date", "co2"], rows });
  assert.equal(metadata.column_stats?.["date#month"]?.part_of?.cycle, "month_of_year");
  const pair = metadata.marginals!.find((p) => p.features.includes("date#month") && p.features.includes("co2"));
  assert.ok(pair, "the pair (month of the year, co2) is among the 2-way marginals");
  const codes = drawPairCodes(metadata, pair.features, 3000, 5);
  const syn = new Decoder(metadata).decode(codes, 3);
  assert.deepEqual(syn.columns, ["date", "co2"]);
  assert.deepEqual(syn.rows.filter((r) => !/^\d{4}-\d{2}-01$/.test(r[0])).slice(0, 3), [], "month starts only");
  const off = syn.rows.filter((r, i) => Number(r[0].slice(5, 7)) - 1 !== codes["date#month"][i]);
  // Bin and month are drawn apart here (a model draws them together): a bin of 11 months lacks the
  // drawn month in about 1 row of 12, and that row keeps its bin's plain draw.
  assert.ok(off.length < 0.1 * syn.rows.length, `${off.length} rows off their drawn month`);
  const byMonth = (t: Table, m: number): number => {
    const xs = t.rows.filter((r) => Number(r[0].slice(5, 7)) === m + 1).map((r) => Number(r[1]));
    return xs.reduce((a, b) => a + b, 0) / xs.length;
  };
  const [realGap, synGap] = [byMonth({ columns: ["date", "co2"], rows }, 4) - byMonth({ columns: ["date", "co2"], rows }, 9), byMonth(syn, 4) - byMonth(syn, 9)];
  assert.ok(Math.abs(synGap - realGap) < 1.5, `May - October: real ${realGap.toFixed(2)}, synthetic ${synGap.toFixed(2)}`);
});

/** Codes drawn from the 1-way marginals, then the pair `features` from its 2-way marginal. */
function drawPairCodes(meta: Metadata, features: readonly string[], n: number, seed: number): Record<string, Int32Array> {
  const rng = new Rng(seed);
  const pick = (probs: readonly number[]): number => {
    let u = rng.next();
    for (let c = 0; c < probs.length; c++) if ((u -= probs[c]) < 0) return c;
    return probs.length - 1;
  };
  const out: Record<string, Int32Array> = {};
  for (const f of meta.features) out[f] = Int32Array.from({ length: n }, () => pick(meta.empirical_probs[f]));
  const pair = meta.marginals!.find((m) => m.features[0] === features[0] && m.features[1] === features[1])!;
  const Kb = meta.cardinalities[pair.features[1]];
  for (let r = 0; r < n; r++) {
    const cell = pick(pair.probs);
    out[pair.features[0]][r] = Math.floor(cell / Kb);
    out[pair.features[1]][r] = cell % Kb;
  }
  return out;
}

test("parts: a cycle the column holds constant gets no part: monthly dates written at 07:00 or 08:00 UTC get no hour and no weekday part", async () => {
  // Ten years of monthly counts of 4 series, each date the 1st at local midnight in UTC-8 / UTC-7
  // (daylight saving from April to October), written in UTC: a season and a trend.
  const rows: string[][] = [];
  for (let y = 2000; y < 2010; y++) for (let m = 0; m < 12; m++) for (const s of ["a", "b", "c", "d"]) {
    const hour = m >= 3 && m <= 9 ? 7 : 8;
    rows.push([`${y}-${pad(m + 1)}-01T${pad(hour)}:00:00.000Z`, s, String(100 + (y - 2000) * 10 + Math.round(20 * Math.cos((m / 12) * 2 * Math.PI)))]);
  }
  const { metadata } = await analyzeTable({ columns: ["date", "series", "count"], rows });
  assert.equal(metadata.column_stats!.date.granularity, "hour", "the lattice the values are written on");
  assert.deepEqual(metadata.features, ["date", "series", "count"], "no part: the hour and the day (the 1st) are constant");
});

test("parts: the values' own granularity: a constant time of day is a day, month starts at one or two times of day a month", () => {
  const stats = (granularity: ColumnStats["granularity"], offset?: number): ColumnStats => ({ type: "datetime", count: 10, missing: 0, format: "yyyy-MM-dd'T'HH:mm:ssXXX", granularity, offset });
  const parse = (t: string): number => Date.parse(t);
  const g = (values: string[], st = stats("hour")) => calendarGranularity(st, parse, values, values.map(() => 1));
  // Daily at 05:00 or 04:00 UTC (local midnight in UTC-5 / UTC-4).
  assert.equal(g(Array.from({ length: 60 }, (_, d) => new Date(Date.UTC(2020, 0, 1 + d, d < 30 ? 5 : 4)).toISOString())), "day");
  // Month starts at local midnight in UTC+1, written in UTC: 23:00 on the month's last day.
  assert.equal(g(Array.from({ length: 24 }, (_, m) => new Date(Date.UTC(2020, m, 1) - 3600000).toISOString())), "month");
  // Month starts in the column's own offset (+01:00): midnight there.
  assert.equal(g(Array.from({ length: 24 }, (_, m) => new Date(Date.UTC(2020, m, 1) - 3600000).toISOString()), stats("hour", 60)), "month");
  // Three times of day in equal shares, or a time of day that varies: the written granularity.
  assert.equal(g(Array.from({ length: 60 }, (_, d) => new Date(Date.UTC(2020, 0, 1 + d, 4 + (d % 3))).toISOString())), "hour");
  assert.equal(g(Array.from({ length: 60 }, (_, d) => new Date(Date.UTC(2020, 0, 1 + Math.floor(d / 6), d % 24)).toISOString())), "hour");
  // A day-granular column keeps its granularity.
  assert.equal(g(["2020-01-01T00:00:00Z"], stats("day")), "day");
  const day = 86400;
  const wide: ColumnStats = { ...stats("hour"), min: 0, max: 800 * day, bin_edges: [0, 40 * day, 800 * day] };
  assert.deepEqual(hiddenCycles(wide), ["hour_of_day", "day_of_week", "month_of_year"]);
  assert.deepEqual(hiddenCycles(wide, "day"), ["day_of_week", "month_of_year"], "a constant time of day: no hour part");
  assert.deepEqual(hiddenCycles(wide, "month"), [], "month starts written at a time of day: no part");
});

test("parts: a part's pairs are its datetime and the columns it informs given the datetime's bin", async () => {
  // 70 days of 18 readings: the first 35 days between 06:00 and 14:30, the last 35 between 14:00
  // and 22:30. The temperature follows the hour inside each day; the phase (first or second half)
  // depends on the hour across the table but is constant inside a bin; the station on neither.
  const rows: string[][] = [];
  for (let d = 0; d < DAYS; d++) {
    const date = new Date(Date.UTC(2021, 2, 1 + d));
    const day = `${date.getUTCFullYear()}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}`;
    const first = d < DAYS / 2 ? 6 : 14;
    for (let i = 0; i < 18; i++) {
      const h = first + Math.floor(i / 2);
      rows.push([`${day} ${pad(h)}:${i % 2 ? "30" : "00"}`, String(temperature(h, d)), d < DAYS / 2 ? "spring" : "summer", d % 2 ? "north" : "south"]);
    }
  }
  const { metadata } = await analyzeTable({ columns: ["time", "temperature", "phase", "station"], rows });
  assert.ok(metadata.features.includes("time#hour"), `features: ${metadata.features.join(", ")}`);
  const partners = metadata.marginals!.filter((m) => m.features.includes("time#hour")).map((m) => m.features.find((f) => f !== "time#hour")).sort();
  assert.deepEqual(partners, ["temperature", "time"]);
  // The table's own columns keep every pair.
  assert.equal(metadata.marginals!.filter((m) => !m.features.includes("time#hour")).length, 6);
});
