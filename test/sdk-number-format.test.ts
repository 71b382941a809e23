/**
 * Numbers written with a format (`src/sdk/columns/number-format.ts`): which columns read as
 * numbers with a format and which stay categorical (codes, times, pairs), the scan's plain values,
 * the rules found on them, decoded values written back in the format, typed output as numbers.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { analyzeTable, BatchConverter, Decoder, type Table } from "../src/sdk";
import { inferNumberFormat, NumberFormat } from "../src/sdk/columns/number-format";

test("number format: grouping, currency, percent and accounting negatives are found; codes and pairs are not", () => {
  const f = (values: string[]) => inferNumberFormat(values)?.stats();
  assert.deepEqual(f(["196,000", "-99,000", "0", "2,076,894", ""]), { grouping: "," });
  assert.deepEqual(f(["$1,234.50", "$12.00", "-$5.25"]), { prefix: "$", grouping: "," });
  assert.deepEqual(f(["US$12", "US$1,200"]), { prefix: "US$", grouping: "," });
  assert.deepEqual(f(["12.5%", "7%", "100%"]), { suffix: "%" });
  assert.deepEqual(f(["12 €", "1,500 €"]), { suffix: " €", grouping: "," });
  assert.deepEqual(f(["1,234", "(1,234)", "56"]), { grouping: ",", negative: "parentheses" });
  assert.deepEqual(f(["$5", "$-5"]), { prefix: "$", negative: "minus_after_prefix" });
  // Plain numbers need no format; codes, times, pairs and mixed signs are no numbers.
  for (const values of [
    ["1", "2.5"],
    ["1,23", "4,56"],
    ["12,34", "1,234"],
    ["12,5", "13,25"],
    ["00501", "02134"],
    ["01", "001,000"],
    ["555-1234", "555-9876"],
    ["1.234,5", "2.000,0"],
    ["$5", "6"],
    ["$5", "€5"],
    ["(1)", "(2)"],
    ["(1,000)", "-5", "7"],
    ["5%", "abc"],
    ["1,2", "3,4"],
  ]) {
    assert.equal(inferNumberFormat(values), undefined, JSON.stringify(values));
  }
});

test("number format: plain text of a value and values written back in the format", () => {
  const money = new NumberFormat({ prefix: "$", grouping: "," });
  assert.equal(money.plain("$1,234.50"), "1234.50");
  assert.equal(money.plain("-$1,234"), "-1234");
  assert.equal(money.plain("1234.5"), "1234.5");
  assert.equal(money.plain("$1,23"), undefined);
  assert.equal(money.plain("€5"), undefined);
  assert.equal(money.write("1234567.5"), "$1,234,567.5");
  assert.equal(money.write("-1234"), "-$1,234");
  assert.equal(money.write("999.25"), "$999.25");
  assert.equal(money.write(""), "");
  const accounts = new NumberFormat({ grouping: ",", negative: "parentheses" });
  assert.equal(accounts.plain("(1,234)"), "-1234");
  assert.equal(accounts.write("-1234"), "(1,234)");
  assert.equal(new NumberFormat({ suffix: "%" }).write("12.5"), "12.5%");
  assert.equal(new NumberFormat({ prefix: "$", negative: "minus_after_prefix" }).write("-5"), "$-5");
});

/** Counties with formatted counts (labour force = employed + unemployed) and a percent rate. */
function counties(n: number): Table {
  const group = (x: number): string => x.toLocaleString("en-US");
  const rows: string[][] = [];
  for (let i = 0; i < n; i++) {
    const force = 800 + ((i * 7919) % 250_000);
    const unemployed = 20 + ((i * 104729) % Math.floor(force / 8));
    const employed = force - unemployed;
    rows.push([String(1001 + 2 * i).padStart(5, "0"), group(force), group(employed), group(unemployed), `${((100 * unemployed) / force).toFixed(1)}%`]);
  }
  return { columns: ["fips", "labor_force", "employed", "unemployed", "rate"], rows };
}

test("number format: formatted columns are numerical, their sum is found, decoded values are written in the format", async () => {
  const table = counties(400);
  const a = await analyzeTable(table);
  const st = a.metadata.column_stats!;
  assert.equal(st.fips.type === "numerical", false, "a FIPS code with leading zeros stays a code");
  for (const c of ["labor_force", "employed", "unemployed"]) {
    assert.equal(st[c].type, "numerical", c);
    assert.deepEqual(st[c].number_format, { grouping: "," }, c);
    assert.equal(st[c].integer, true, c);
  }
  assert.equal(st.rate.type, "numerical");
  assert.deepEqual(st.rate.number_format, { suffix: "%" });
  assert.ok(st.rate.max! <= 100 && st.rate.max! > 1, "12.5% is 12.5, as written");
  const sum = (a.metadata.rules ?? []).find((r) => r.type === "sum");
  assert.ok(sum && sum.type === "sum", `a sum rule: ${JSON.stringify(a.metadata.rules?.map((r) => r.type))}`);
  assert.deepEqual([sum.total, ...[...sum.parts].sort()], ["labor_force", "employed", "unemployed"]);

  const decoder = new Decoder(a.metadata);
  const codes: Record<string, Int32Array> = {};
  a.codecs.forEach((c, f) => (codes[c.name] = Int32Array.from(a.codes[f])));
  const out = decoder.decode(codes, 7);
  const col = (name: string) => out.rows.map((r) => r[out.columns.indexOf(name)]);
  const grouped = /^-?\d{1,3}(,\d{3})*$/;
  for (const c of ["labor_force", "employed", "unemployed"]) {
    for (const v of col(c)) assert.match(v, grouped, c);
    assert.ok(col(c).some((v) => v.includes(",")), `${c}: values >= 1000 grouped`);
  }
  for (const v of col("rate")) assert.match(v, /^\d+(\.\d)?%$/);
  const n = (v: string) => Number(v.replace(/,/g, ""));
  const kept = out.rows.filter((r) => n(r[1]) === n(r[2]) + n(r[3])).length;
  assert.equal(kept, out.rows.length, "every decoded row keeps labor_force = employed + unemployed");
  assert.deepEqual(decoder.decode(codes, 7), out, "the same seed gives the same rows");

  // Typed output holds the numbers, not the text.
  const typed = new BatchConverter(a.metadata);
  const f = a.metadata.features.indexOf("labor_force");
  assert.equal(typed.value(f, "25,649"), 25649n);
  assert.equal(typed.value(a.metadata.features.indexOf("rate"), "5.3%"), 5.3);
});

test("number format: a column declared numerical keeps its format; a column of pairs stays categorical", async () => {
  const table: Table = {
    columns: ["amount", "pair", "x"],
    rows: Array.from({ length: 60 }, (_, i) => [`$${(1000 + i * 37).toLocaleString("en-US")}.00`, `${i % 3},${i % 4}`, String(i)]),
  };
  const a = await analyzeTable(table, { columns: { amount: { type: "numerical" } } });
  const st = a.metadata.column_stats!;
  assert.equal(st.amount.type, "numerical");
  assert.deepEqual(st.amount.number_format, { prefix: "$", grouping: "," });
  assert.equal(st.amount.fixed_decimals, true);
  assert.equal(st.pair.type, "categorical");
  assert.ok(Object.keys(a.metadata.value_mappings!.pair).includes("1,1"));
});

test("number format: a table larger than its sample counts the formatted values as read (pass 2), past the distinct budget too", async () => {
  const table = counties(400);
  const whole = await analyzeTable(table);
  for (const opts of [{ sampleRows: 100 }, { sampleRows: 100, distinctBudget: 50 }]) {
    const a = await analyzeTable(table, opts);
    assert.equal(a.sampledRows, 100);
    for (const c of ["labor_force", "unemployed", "rate"]) {
      const st = a.metadata.column_stats![c];
      assert.equal(st.type, "numerical", c);
      assert.ok(st.number_format, c);
      assert.equal(st.count, 400, c);
      assert.equal(st.max, whole.metadata.column_stats![c].max, `${c}: the table's range, from pass 2 or pass 1`);
      const total = a.metadata.empirical_probs[c].reduce((s, p) => s + p, 0);
      assert.ok(Math.abs(total - 1) < 1e-9, `${c}: every row counted (${total})`);
    }
  }
  // One value written two ways (`1,500` and `1500`) is one value: pass 2 counts both under its code.
  const fees: Table = {
    columns: ["fee", "band"],
    rows: Array.from({ length: 400 }, (_, i) => [["1,500", "1500", "2,750", "980", "3,000"][i % 5], ["a", "b", "c"][i % 3]]),
  };
  const exact = await analyzeTable(fees);
  const sampled = await analyzeTable(fees, { sampleRows: 100 });
  assert.deepEqual(sampled.metadata.value_mappings!.fee, exact.metadata.value_mappings!.fee);
  assert.deepEqual(sampled.metadata.marginals, exact.metadata.marginals, "2-way counts of the whole table, as read");
});

test("number format: a formatted column declared categorical keeps its values as written", async () => {
  const table: Table = { columns: ["amount", "x"], rows: Array.from({ length: 60 }, (_, i) => [["$1,200.00", "$35.50", "-$7.25"][i % 3], String(i % 4)]) };
  const a = await analyzeTable(table, { columns: { amount: { type: "categorical" } } });
  assert.equal(a.metadata.column_stats!.amount.type, "categorical");
  assert.deepEqual(Object.keys(a.metadata.value_mappings!.amount).sort(), ["$1,200.00", "$35.50", "-$7.25"]);
  const decoded = new Decoder(a.metadata).decode({ amount: Int32Array.from(a.codes[0]), x: Int32Array.from(a.codes[1]) }, 3);
  assert.ok(decoded.rows.every((r) => ["$1,200.00", "$35.50", "-$7.25"].includes(r[0])));
});

test("number format: a missing value written NA (R's write.csv) leaves the column numerical and is written back as NA", async () => {
  assert.deepEqual(inferNumberFormat(["0.05", "NA", "0.066"])?.stats(), { missing: "NA" });
  assert.equal(inferNumberFormat(["0.05", "", "NA"]), undefined, "NA beside blanks: the two could not be told apart");
  assert.equal(inferNumberFormat(["0.05", "NA", "n/a"]), undefined, "one missing text per column");
  assert.equal(inferNumberFormat(["NA", "N/A"]), undefined, "no number at all");
  const rows = Array.from({ length: 300 }, (_, i) => [i % 4 === 0 ? "NA" : String(10 + (i % 50)), i % 5 === 0 ? "?" : `s${i % 3}`]);
  const a = await analyzeTable({ columns: ["ibu", "style"], rows });
  const st = a.metadata.column_stats!;
  assert.equal(st.ibu.type, "numerical");
  assert.equal(st.ibu.missing, 75);
  assert.deepEqual(st.ibu.number_format, { missing: "NA" });
  assert.equal(st.style.type, "categorical", "a text column's ? stays a value");
  const codes: Record<string, Int32Array> = {};
  a.codecs.forEach((c, f) => (codes[c.name] = Int32Array.from(a.codes[f])));
  const out = new Decoder(a.metadata).decode(codes, 3);
  const ibu = out.rows.map((r) => r[0]);
  assert.equal(ibu.filter((v) => v === "NA").length, 75);
  assert.ok(ibu.every((v) => v === "NA" || /^\d+$/.test(v)), ibu.slice(0, 5).join(" "));
});

test("missing text: a date column writing NA for a missing date (R's write.csv) is a datetime column, NA written back, null in Arrow", async () => {
  const rows = Array.from({ length: 300 }, (_, i) => [i % 10 === 0 ? "NA" : `2020-${String(1 + (i % 12)).padStart(2, "0")}-${String(1 + ((i * 7) % 28)).padStart(2, "0")}`, String((i * 13) % 7)]);
  const a = await analyzeTable({ columns: ["opened", "x"], rows });
  const st = a.metadata.column_stats!.opened;
  assert.deepEqual([st.type, st.missing, st.missing_text], ["datetime", 30, "NA"]);
  const codes: Record<string, Int32Array> = {};
  a.codecs.forEach((c, f) => (codes[c.name] = Int32Array.from(a.codes[f])));
  const out = new Decoder(a.metadata).decode(codes, 3);
  assert.equal(out.rows.filter((r) => r[0] === "NA").length, 30);
  assert.ok(out.rows.every((r) => r[0] === "NA" || /^2020-\d\d-\d\d$/.test(r[0])));
  assert.equal(new BatchConverter(a.metadata).value(0, "NA"), null);
  const mixed = rows.map((r, i) => [i === 5 ? "" : r[0], r[1]]);
  const b = await analyzeTable({ columns: ["opened", "x"], rows: mixed }).catch((e: Error) => e);
  assert.ok(b instanceof Error && /"NA" is not a datetime/.test(b.message), "NA beside a blank stays a value (and so is refused as no date)");
});

test("clock durations: a column of H:MM:SS, M:SS or MM:SS.s values is one clock form; clock-like texts that are not are not", () => {
  const f = (values: string[]) => inferNumberFormat(values)?.stats();
  assert.deepEqual(f(["02:55:10", "02:42:00", "", "01:29:53"]), { clock: "hh:mm:ss" });
  assert.deepEqual(f(["2:05:37", "12:01:00", "0:59:59"]), { clock: "h:mm:ss" });
  assert.deepEqual(f(["38:31:00", "41:05:00", "131:23:00"]), { clock: "hh:mm:ss" }, "hours are unbounded");
  assert.deepEqual(f(["45:12", "1:02.345", "0:59.9"]), { clock: "m:ss" });
  assert.deepEqual(f(["45:12", "09:02", "75:00"]), { clock: "mm:ss" }, "minutes are unbounded");
  assert.deepEqual(f(["1:02:03", "NA"]), { clock: "h:mm:ss", missing: "NA" });
  for (const values of [
    ["05:81:57", "02:09:37"], // minutes >= 60
    ["1:02:61"], // seconds >= 60
    ["3:1", "4:2"], // a score
    ["12:30", "1:02:03"], // two forms
    ["02:05", "2:07"], // padded and not
    ["1:2:3"],
    ["002:05:00"],
    ["2:05:37", "abc"],
    ["-1:05"],
  ]) {
    assert.equal(inferNumberFormat(values), undefined, JSON.stringify(values));
  }
});

test("clock durations: read as seconds, written back in the column's own form", () => {
  const hh = new NumberFormat({ clock: "hh:mm:ss" });
  assert.equal(hh.plain("02:55:10"), "10510");
  assert.equal(hh.plain("38:31:00"), "138660");
  assert.equal(hh.plain("2:55:10"), undefined, "not padded as the column pads");
  assert.equal(hh.plain("02:75:10"), undefined);
  assert.equal(hh.write("10510"), "02:55:10");
  assert.equal(hh.write("138660"), "38:31:00");
  assert.equal(hh.write("59"), "00:00:59");
  assert.equal(hh.write(""), "");
  const h = new NumberFormat({ clock: "h:mm:ss" });
  assert.equal(h.write("7537"), "2:05:37");
  assert.equal(h.write("360000.25"), "100:00:00.25");
  const m = new NumberFormat({ clock: "m:ss" });
  assert.equal(m.plain("1:02.345"), "62.345");
  assert.equal(m.plain("1:02.30"), "62.30", "decimals as written");
  assert.equal(m.write("62.345"), "1:02.345");
  assert.equal(m.write("59.5"), "0:59.5");
  assert.equal(m.write("4500"), "75:00");
  assert.equal(new NumberFormat({ clock: "mm:ss" }).write("62"), "01:02");
  for (const v of ["02:55:10", "00:00:00", "123:04:05"]) assert.equal(hh.write(hh.plain(v)!), v);
});

/** Race results: a finish time as clock text, the same time in minutes, and a runner's group. */
function races(n: number): Table {
  const rows: string[][] = [];
  for (let i = 0; i < n; i++) {
    const seconds = 7400 + ((i * 7919) % 9000);
    const clock = `${String(Math.floor(seconds / 3600)).padStart(2, "0")}:${String(Math.floor((seconds % 3600) / 60)).padStart(2, "0")}:${String(seconds % 60).padStart(2, "0")}`;
    rows.push([clock, (seconds / 60).toFixed(3), ["open", "masters", "wheelchair"][i % 3]]);
  }
  return { columns: ["Time", "TimeMin", "Division"], rows };
}

test("clock durations: a column of finish times is numerical seconds; decoded times are clocks of its form within its range", async () => {
  const table = races(400);
  const a = await analyzeTable(table);
  const st = a.metadata.column_stats!.Time;
  assert.equal(st.type, "numerical");
  assert.deepEqual(st.number_format, { clock: "hh:mm:ss" });
  assert.equal(st.integer, true);
  assert.ok(st.min! >= 7400 && st.max! < 7400 + 9000, `${st.min}..${st.max}: seconds`);
  const decoder = new Decoder(a.metadata);
  const codes: Record<string, Int32Array> = {};
  a.codecs.forEach((c, f) => (codes[c.name] = Int32Array.from(a.codes[f])));
  const out = decoder.decode(codes, 3);
  const times = out.rows.map((r) => r[0]);
  const clock = /^(\d\d):([0-5]\d):([0-5]\d)$/;
  for (const v of times) assert.match(v, clock);
  const secs = times.map((v) => v.split(":").reduce((s, p) => s * 60 + Number(p), 0));
  assert.ok(Math.min(...secs) >= st.min! && Math.max(...secs) <= st.max!, "inside the real range");
  const typed = new BatchConverter(a.metadata);
  assert.equal(typed.value(0, "02:05:37"), 7537n);
});
