/**
 * Datetime columns on some days of the week only (`column_stats.weekdays`): trading days, weekly
 * readings. Found at extraction when at least 35 distinct days miss a day of the week, printed by
 * `describeColumns`, and kept by decoding (every code decoded many times), by a `where` range and
 * by the lattice of an hourly column written with an offset.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Decoder, analyzeTable, type Table } from "../src/sdk";
import { describeColumns } from "../src/sdk/columns";
import { datetimeLattice } from "../src/sdk/columns/datetime";
import { firstAbove, lastBelow } from "../src/sdk/columns/bins";
import { DatetimeFormat } from "../src/sdk/metadata/datetime";

const DAY = 86400;
const iso = (s: number): string => new Date(s * 1000).toISOString().slice(0, 10);
/** Day of the week (0 = Sunday) of a `yyyy-MM-dd` text. */
const weekday = (t: string): number => new Date(`${t.slice(0, 10)}T00:00:00Z`).getUTCDay();

/** `n` rows: a date on the days of the week `days` from 2024-01-01 on, a price, a volume. */
function table(n: number, days: number[]): Table {
  const rows: string[][] = [];
  for (let s = Date.UTC(2024, 0, 1) / 1000; rows.length < n; s += DAY) {
    if (!days.includes(new Date(s * 1000).getUTCDay())) continue;
    rows.push([iso(s), (20 + ((rows.length * 7) % 13) / 4).toFixed(2), String(1000 + ((rows.length * 37) % 500))]);
  }
  return { columns: ["date", "price", "volume"], rows };
}

/** Every code of every feature, `reps` times over. */
function everyCode(meta: { features: string[]; cardinalities: Record<string, number> }, reps: number): Record<string, Int32Array> {
  const n = Math.max(...Object.values(meta.cardinalities)) * reps;
  return Object.fromEntries(meta.features.map((f) => [f, Int32Array.from({ length: n }, (_, i) => i % meta.cardinalities[f])]));
}

test("extraction: weekdays of trading days and of weekly readings; none for every day, for too few days, for month starts", async () => {
  const trading = await analyzeTable(table(60, [1, 2, 3, 4, 5]));
  assert.deepEqual(trading.metadata.column_stats!.date.weekdays, [1, 2, 3, 4, 5]);
  assert.match(describeColumns(trading.codecs).join("\n"), /granularity day, on Mon Tue Wed Thu Fri only/);
  assert.deepEqual((await analyzeTable(table(40, [1]))).metadata.column_stats!.date.weekdays, [1], "weekly on Mondays");
  assert.equal((await analyzeTable(table(60, [0, 1, 2, 3, 4, 5, 6]))).metadata.column_stats!.date.weekdays, undefined, "every day");
  assert.equal((await analyzeTable(table(30, [1, 2, 3, 4, 5]))).metadata.column_stats!.date.weekdays, undefined, "30 days prove nothing");
  const months = { columns: ["m", "x"], rows: Array.from({ length: 60 }, (_, i) => [`${2000 + Math.floor(i / 12)}-${String((i % 12) + 1).padStart(2, "0")}-01`, String(i % 3)]) };
  assert.equal((await analyzeTable(months)).metadata.column_stats!.m.weekdays, undefined, "month starts fall on any day");
});

test("decoding writes trading days only, spread over them, inside [min, max]; a where range too", async () => {
  const a = await analyzeTable(table(250, [1, 2, 3, 4, 5]));
  const st = a.metadata.column_stats!.date;
  const dec = new Decoder(a.metadata);
  const rows = dec.decode(everyCode(a.metadata, 200), 3).rows;
  const dates = rows.map((r) => r[0]);
  assert.deepEqual(dates.filter((d) => weekday(d) === 0 || weekday(d) === 6).slice(0, 5), [], "no Saturday or Sunday");
  assert.ok(new Set(dates).size >= 200, `${new Set(dates).size} distinct days`);
  for (const wd of [1, 2, 3, 4, 5]) assert.ok(dates.some((d) => weekday(d) === wd), `some day ${wd}`);
  const fmt = new DatetimeFormat("yyyy-MM-dd");
  for (const d of dates) {
    const s = fmt.parse(d)!.seconds;
    assert.ok(s >= st.min! && s <= st.max!, d);
  }
  // A where range from a Saturday to a Sunday nine days later holds the five trading days between.
  const lo = fmt.parse("2024-03-09")!.seconds;
  const hi = fmt.parse("2024-03-17")!.seconds;
  const res = dec.restrict("date", { lo, hi }, (t) => fmt.parse(t)?.seconds)!;
  const n = res.codes.length * 300;
  const columns: Record<string, Int32Array> = {};
  for (const f of a.metadata.features) columns[f] = new Int32Array(n);
  columns.date = Int32Array.from({ length: n }, (_, i) => res.codes[i % res.codes.length]);
  const written = new Set(dec.decode(columns, 5, { decoders: { date: res.decoder }, fixed: (_r, g) => g === 0 }).rows.map((r) => r[0]));
  assert.deepEqual([...written].sort(), ["2024-03-11", "2024-03-12", "2024-03-13", "2024-03-14", "2024-03-15"]);
});

test("the lattice of an hourly column on weekdays in +02:00: points on those days, in order, found from any instant", () => {
  const lattice = datetimeLattice({ type: "datetime", count: 1, missing: 0, format: "yyyy-MM-dd'T'HH:mmZZ", granularity: "hour", offset: 120, weekdays: [2, 4] })!;
  const fmt = new DatetimeFormat("yyyy-MM-dd'T'HH:mmZZ");
  let prev = -Infinity;
  for (let k = -100; k < 400; k++) {
    const text = lattice.write(k);
    assert.match(text, /\+02:00$/);
    assert.ok([2, 4].includes(weekday(text)), `${k}: ${text}`);
    const v = lattice.value(k);
    assert.ok(v > prev, `increasing at ${k}`);
    prev = v;
    assert.equal(fmt.parse(text)!.seconds, v);
    assert.equal(firstAbove(v, lattice, false), k);
    assert.equal(lastBelow(v, lattice, false), k);
  }
  // From an instant on a Friday (2024-03-08 10:30 local) the next point is Tuesday 00:00, the last Thursday 23:00.
  const friday = fmt.parse("2024-03-08T10:30+02:00")!.seconds;
  assert.equal(lattice.write(firstAbove(friday, lattice, false)), "2024-03-12T00:00+02:00");
  assert.equal(lattice.write(lastBelow(friday, lattice, false)), "2024-03-07T23:00+02:00");
});
