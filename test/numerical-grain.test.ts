/**
 * Grain beyond one step (issue 40): a numerical column's mixture of grains comes back in its
 * shares. Salaries rounded to 1000, 100, 50 or 10 in the real column's proportions; ages in
 * twelfths of a year written rounded to 5 decimals, with heaping on whole years; halves beside
 * whole numbers; values written with as many decimals as each was measured with; `3.0` beside
 * `3.25`. Each column is built here, extracted (`analyzeTable`), and its real rows' codes decoded
 * several times over: the share of decoded values on each grain must be within 0.02 of the real
 * column's (point bins decode exactly, interval bins by the grain's shares).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import typia from "typia";
import { Decoder, analyzeTable, type Analysis, type Table } from "../src/sdk";
import { describeColumns } from "../src/sdk/columns";
import { decimalsOf } from "../src/sdk/columns/common";
import { noiseFreeDigits, numberLattice } from "../src/sdk/columns/numerical";
import { binDecoder } from "../src/sdk/columns/bins";
import { Rng } from "../src/sdk/generate/sfc32";
import type { ColumnStats, CreateModelRequest, Metadata } from "../src/contract";

const validateCreate = typia.createValidateEquals<CreateModelRequest>();

/** A value written as JavaScript writes a number rounded to `d` decimals (no trailing zeros). */
const written = (x: number, d: number): string => String(Number(x.toFixed(d)) + 0);

/** Whether the written value `v` is within half a unit of `d` decimals of a multiple of `g`. */
function onGrain(v: string, g: number, d: number): boolean {
  const x = Number(v);
  const y = x / g;
  return Math.abs(y - Math.round(y)) * g <= 0.5 * 10 ** -d * (1 + 1e-6);
}

/** Share of the non-blank values on grain g. */
function shareOn(values: string[], g: number, d: number): number {
  const v = values.filter((s) => s !== "");
  return v.filter((s) => onGrain(s, g, d)).length / v.length;
}

/** Share of the non-blank values written with each number of decimals. */
function decimalShares(values: string[]): Map<number, number> {
  const v = values.filter((s) => s !== "");
  const m = new Map<number, number>();
  for (const s of v) m.set(decimalsOf(s), (m.get(decimalsOf(s)) ?? 0) + 1 / v.length);
  return m;
}

/** A one-column table (plus a constant column: tables have at least two). */
function table(name: string, values: string[]): Table {
  return { columns: [name, "k"], rows: values.map((v) => [v, "a"]) };
}

/** The real rows' codes decoded `reps` times over (rules off), column `name`. */
function decodeReal(a: Analysis, name: string, reps: number, seed = 5, metadata: Metadata = a.metadata): string[] {
  const dec = new Decoder(metadata);
  const out: string[] = [];
  for (let r = 0; r < reps; r++) {
    const cols: Record<string, Int32Array> = {};
    a.columns.forEach((f, i) => (cols[f] = Int32Array.from(a.codes[i])));
    const rows = dec.decode(cols, seed + r, { rules: false }).rows;
    const c = metadata.features.indexOf(name);
    for (const row of rows) out.push(row[c]);
  }
  return out;
}

/** Metadata without the grain of `name` (what decoding gave before grains). */
function withoutGrain(m: Metadata, name: string): Metadata {
  const copy = structuredClone(m);
  delete copy.column_stats![name].grain;
  return copy;
}

/**
 * 4,000 salaries between 20,000 and 90,000: 5% rounded to 1000, 33% to 100, 9% to 50, 8% to 10,
 * the rest to 1 (so 38% multiples of 100 and 47% of 50, as in the issue), 2% blank.
 */
function salaries(): string[] {
  const rng = new Rng(40);
  return Array.from({ length: 4000 }, () => {
    if (rng.next() < 0.02) return "";
    const x = 20000 + 70000 * rng.next() ** 1.6;
    const u = rng.next();
    const g = u < 0.05 ? 1000 : u < 0.38 ? 100 : u < 0.47 ? 50 : u < 0.55 ? 10 : 1;
    return String(Math.round(x / g) * g);
  });
}

test("salaries: a mixture of rounding (38% multiples of 100, 47% of 50) comes back in the real shares", async () => {
  const real = salaries();
  const a = await analyzeTable(table("salary", real));
  const st = a.metadata.column_stats!.salary;
  assert.ok(st.bin_edges && st.grain, "quantile bins and a grain");
  assert.equal(st.step, undefined, "no single step: most values are off every coarse grain");
  for (const g of [50, 100]) assert.ok(st.grain.steps.includes(g), `grain ${g} found: ${st.grain.steps}`);
  assert.ok(Math.abs(st.grain.shares.reduce((s, x) => s + x, 0) - 1) < 1e-5, "shares sum to 1");
  assert.equal(st.grain.bin_shares.length, (st.bin_edges.length - 1) * st.grain.steps.length);

  const decoded = decodeReal(a, "salary", 4);
  for (const g of [1000, 500, 100, 50, 10, 5, 2]) {
    const [r, s] = [shareOn(real, g, 0), shareOn(decoded, g, 0)];
    assert.ok(Math.abs(r - s) <= 0.02, `multiples of ${g}: real ${r.toFixed(3)}, decoded ${s.toFixed(3)}`);
  }
  // Without the grain (one step, uniform over integers) the rounding is lost: the test can fail.
  const before = decodeReal(a, "salary", 1, 5, withoutGrain(a.metadata, "salary"));
  assert.ok(shareOn(before, 100, 0) < 0.2, `without the grain ${shareOn(before, 100, 0).toFixed(3)} multiples of 100`);

  const line = describeColumns(a.codecs).find((l) => l.startsWith("salary "))!;
  assert.match(line, /integers, grain .*100 \(3\d%\).*50 \(\d+%\)/);
});

test("salaries through the column form (Int64): the same values as the text decode, on the same grains", async () => {
  const a = await analyzeTable(table("salary", salaries()));
  const dec = new Decoder(a.metadata);
  const cols: Record<string, Int32Array> = {};
  a.columns.forEach((f, i) => (cols[f] = Int32Array.from(a.codes[i])));
  const batch = dec.decodeBatch(cols, 9, { rules: false });
  const rows = dec.decode(cols, 9, { rules: false }).rows;
  const f = a.metadata.features.indexOf("salary");
  assert.equal(batch.cells[f].kind, "int", "integers decode as a typed column");
  for (let r = 0; r < rows.length; r++) assert.equal(batch.get(r, f), rows[r][f], `row ${r}`);
  assert.ok(rows.some((r) => r[f] === ""), "blanks kept");
});

/**
 * 3,000 ages between 18 and 78: 30% heaped on whole years, the rest in twelfths of a year
 * (months), written rounded to 5 decimals (37.66667, 37.5, 37.08333).
 */
function ages(): string[] {
  const rng = new Rng(12);
  return Array.from({ length: 3000 }, () => {
    const months = 18 * 12 + rng.int(60 * 12);
    return written(rng.next() < 0.3 ? Math.round(months / 12) : months / 12, 5);
  });
}

test("ages in twelfths of a year written with 5 decimals, heaped on whole years: twelfths and years in the real shares", async () => {
  const real = ages();
  const a = await analyzeTable(table("age", real));
  const st = a.metadata.column_stats!.age;
  assert.equal(st.decimals, 5);
  assert.ok(st.grain, "a grain");
  assert.ok(Math.abs(st.grain.steps[0] - 1 / 12) < 1e-12, `the finest grain is 1/12: ${st.grain.steps}`);
  assert.ok(st.grain.steps.includes(1), "whole years are a grain of their own (heaping)");

  const decoded = decodeReal(a, "age", 4);
  for (const g of [1 / 12, 1 / 6, 1 / 4, 1 / 2, 1, 5]) {
    const [r, s] = [shareOn(real, g, 5), shareOn(decoded, g, 5)];
    assert.ok(Math.abs(r - s) <= 0.02, `multiples of ${g.toFixed(4)}: real ${r.toFixed(3)}, decoded ${s.toFixed(3)}`);
  }
  assert.equal(shareOn(decoded, 1 / 12, 5), 1, "every decoded age is a twelfth of a year, written at 5 decimals");
  const [rd, sd] = [decimalShares(real), decimalShares(decoded)];
  for (const d of [0, 1, 2, 5]) assert.ok(Math.abs((rd.get(d) ?? 0) - (sd.get(d) ?? 0)) <= 0.02, `written with ${d} decimals`);
  assert.ok(shareOn(decodeReal(a, "age", 1, 5, withoutGrain(a.metadata, "age")), 1 / 12, 5) < 0.1, "without the grain: off the twelfths");

  const line = describeColumns(a.codecs).find((l) => l.startsWith("age "))!;
  assert.match(line, /5 decimals, grain .*1\/12 \(\d+%\)$/);
});

test("halves beside whole numbers (65% whole, 35% x.5): both grains in the real shares", async () => {
  const rng = new Rng(2);
  const real = Array.from({ length: 2000 }, () => {
    const x = 40 * rng.next() + 20 * rng.next();
    return written(rng.next() < 0.65 ? Math.round(x) : Math.floor(x) + 0.5, 1);
  });
  const a = await analyzeTable(table("hours", real));
  const st = a.metadata.column_stats!.hours;
  assert.equal(st.step, 0.5);
  assert.deepEqual(st.grain?.steps, [0.5, 1]);
  const decoded = decodeReal(a, "hours", 4);
  for (const g of [0.5, 1, 2, 5]) {
    const [r, s] = [shareOn(real, g, 1), shareOn(decoded, g, 1)];
    assert.ok(Math.abs(r - s) <= 0.02, `multiples of ${g}: real ${r.toFixed(3)}, decoded ${s.toFixed(3)}`);
  }
});

test("each value's decimals as the real column writes them: 1, 2 or 3 decimals (a grain), and 10 significant digits (`digits`)", async () => {
  const rng = new Rng(3);
  const real = Array.from({ length: 3000 }, () => {
    const u = rng.next();
    return written(50 * rng.next(), u < 0.5 ? 1 : u < 0.7 ? 2 : 3);
  });
  const lon = Array.from({ length: 3000 }, () => String(Number((-125 + 60 * rng.next()).toPrecision(10))));
  for (const [name, values] of [["x", real], ["lon", lon]] as const) {
    const a = await analyzeTable(table(name, values));
    const st = a.metadata.column_stats![name];
    if (name === "lon") assert.equal(st.digits, 10, "10 significant digits: 7 decimals west of -100, 8 east");
    else assert.ok(st.grain && st.digits === undefined, `${name}: a grain, no digit cap`);
    const decoded = decodeReal(a, name, 3);
    if (name === "lon") assert.deepEqual(decoded.filter((v) => v.replace(/[^0-9]/g, "").replace(/^0+/, "").length > 10).slice(0, 3), []);
    const [rd, sd] = [decimalShares(values), decimalShares(decoded)];
    for (const d of new Set([...rd.keys(), ...sd.keys()])) {
      const [r, s] = [rd.get(d) ?? 0, sd.get(d) ?? 0];
      assert.ok(Math.abs(r - s) <= 0.02, `${name}: written with ${d} decimals: real ${r.toFixed(3)}, decoded ${s.toFixed(3)}`);
    }
  }
});

test("coordinates converted from degrees, minutes and seconds (to 0.1\"): the sexagesimal grains in the real shares", async () => {
  const rng = new Rng(7);
  // 60% to the tenth of a second of arc, 30% to the second, 10% to the minute; 8 decimals.
  const real = Array.from({ length: 3000 }, () => {
    const u = rng.next();
    const q = u < 0.6 ? 36000 : u < 0.9 ? 3600 : 60;
    return written(30 + Math.round(15 * rng.next() * q) / q, 8);
  });
  const a = await analyzeTable(table("lat", real));
  const steps = a.metadata.column_stats!.lat.grain?.steps ?? [];
  for (const q of [36000, 3600, 60]) assert.ok(steps.some((g) => Math.abs(g * q - 1) < 1e-9), `1/${q} is a grain: ${steps}`);
  const decoded = decodeReal(a, "lat", 3);
  for (const q of [36000, 3600, 60, 1]) {
    const [r, s] = [shareOn(real, 1 / q, 8), shareOn(decoded, 1 / q, 8)];
    assert.ok(Math.abs(r - s) <= 0.02, `multiples of 1/${q}: real ${r.toFixed(3)}, decoded ${s.toFixed(3)}`);
  }
});

test("no grain is invented: uniform integers and uniform 2-decimal values keep today's stats", async () => {
  const rng = new Rng(4);
  const ints = Array.from({ length: 3000 }, () => String(rng.int(100000)));
  const cents = Array.from({ length: 3000 }, () => (100 * rng.next()).toFixed(2));
  const a = await analyzeTable({ columns: ["n", "p"], rows: ints.map((v, i) => [v, cents[i]]) });
  assert.equal(a.metadata.column_stats!.n.grain, undefined);
  assert.equal(a.metadata.column_stats!.p.grain, undefined);
  assert.equal(a.metadata.column_stats!.p.fixed_decimals, true);
});

test("`3.0` beside `3.25`: min_decimals keeps at least one decimal in decoded values", async () => {
  const rng = new Rng(6);
  const real = Array.from({ length: 1000 }, () => {
    const x = Math.round(400 * rng.next()) / 4;
    return Number.isInteger(x) ? x.toFixed(1) : String(x);
  });
  const a = await analyzeTable(table("w", real));
  const st = a.metadata.column_stats!.w;
  assert.equal(st.min_decimals, 1);
  assert.equal(st.decimals, 2);
  assert.equal(st.fixed_decimals, undefined);
  const decoded = decodeReal(a, "w", 2);
  assert.deepEqual(decoded.filter((v) => !/^\d+\.\d{1,2}$/.test(v)).slice(0, 5), [], "every value with 1 or 2 decimals");
  assert.ok(decoded.some((v) => /\.0$/.test(v)) && decoded.some((v) => /\.\d\d$/.test(v)), "`3.0` and `3.25` both written");
  const line = describeColumns(a.codecs).find((l) => l.startsWith("w "))!;
  assert.match(line, /written with at least 1 decimal \(0\.0\)$/);
});

test("a where range (Decoder.restrict) keeps the grain's shares and the range", async () => {
  const real = salaries();
  const a = await analyzeTable(table("salary", real));
  const dec = new Decoder(a.metadata);
  const range = { lo: 40000, hi: 60000, hiOpen: true };
  const res = dec.restrict("salary", range, Number)!;
  assert.ok(res.codes.length > 0);
  for (const w of res.weights) assert.ok(w > 0 && w <= 1, `weight ${w}`);
  const n = 20000;
  const cols: Record<string, Int32Array> = {};
  for (const g of a.metadata.features) cols[g] = new Int32Array(n);
  // Codes drawn by their real frequency times their share inside the range.
  const probs = res.codes.map((c, i) => a.metadata.empirical_probs.salary[c] * res.weights[i]);
  const cum = Float64Array.from(probs, ((s) => (p: number) => (s += p))(0));
  const rng = new Rng(8);
  cols.salary = Int32Array.from({ length: n }, () => res.codes[rng.pickCumulative(cum)]);
  const out = dec.decode(cols, 3, { decoders: { salary: res.decoder }, rules: false }).rows.map((r) => r[0]);
  assert.deepEqual(out.filter((v) => !(Number(v) >= 40000 && Number(v) < 60000)).slice(0, 5), [], "inside the range");
  const inRange = real.filter((v) => v !== "" && Number(v) >= 40000 && Number(v) < 60000);
  for (const g of [1000, 100, 50, 10]) {
    const [r, s] = [shareOn(inRange, g, 0), shareOn(out, g, 0)];
    assert.ok(Math.abs(r - s) <= 0.03, `in range, multiples of ${g}: real ${r.toFixed(3)}, decoded ${s.toFixed(3)}`);
  }
});

test("the contract: a grain validates on Create Model, a 9-grain chain does not; a grain that disagrees with the bins is ignored", async () => {
  const a = await analyzeTable(table("salary", salaries()));
  assert.equal(validateCreate({ metadata: a.metadata }).success, true);
  const tooMany = structuredClone(a.metadata);
  const g = tooMany.column_stats!.salary.grain!;
  g.steps = [1, 2, 5, 10, 20, 50, 100, 500, 1000];
  assert.equal(validateCreate({ metadata: tooMany }).success, false);
  // Older metadata (no grain) stays valid and decodes on one lattice.
  assert.equal(validateCreate({ metadata: withoutGrain(a.metadata, "salary") }).success, true);
  // Lengths that disagree with the bins: decoded as without a grain, never a throw.
  const bad = structuredClone(a.metadata);
  bad.column_stats!.salary.grain!.bin_shares.pop();
  assert.deepEqual(decodeReal(a, "salary", 1, 5, bad), decodeReal(a, "salary", 1, 5, withoutGrain(a.metadata, "salary")));
});

test("a lattice of values (whole degrees Fahrenheit written in Celsius): decoded values are real values; dense ages get none", async () => {
  // 1,461 days, temperatures 30..96 F written in Celsius to one decimal (12.8, 13.3, 13.9 ...).
  const rng = new Rng(9);
  const celsius = (f: number) => ((f - 32) * 5 / 9).toFixed(1);
  const temps = Array.from({ length: 1461 }, () => celsius(30 + Math.round(33 * (rng.next() + rng.next()))));
  const a = await analyzeTable(table("temp_max", temps));
  const st = a.metadata.column_stats!.temp_max;
  assert.ok(st.bin_edges && st.lattice, "quantile bins and a lattice");
  const real = new Set(temps);
  assert.ok(st.lattice!.every((x) => real.has(x.toFixed(1))), "the lattice holds real values only");
  assert.equal(validateCreate({ metadata: a.metadata }).success, true);
  const out = decodeReal(a, "temp_max", 3);
  assert.deepEqual(out.filter((v) => !real.has(v)).slice(0, 5), [], "every decoded value is a real one");
  assert.equal(st.grain, undefined, "no grain: the values are on no round number more often than the listed ones are");
  // Without the lattice (what decoding gave before), most decoded tenths are no real value.
  const plain = structuredClone(a.metadata);
  delete plain.column_stats!.temp_max.lattice;
  const before = decodeReal(a, "temp_max", 3, 5, plain);
  assert.ok(before.filter((v) => real.has(v)).length < 0.5 * before.length);
  // Ages 17..90 take (nearly) every integer: no lattice.
  const ages = Array.from({ length: 3000 }, () => String(17 + rng.int(74)));
  const b = await analyzeTable(table("age", ages));
  assert.equal(b.metadata.column_stats!.age.lattice, undefined);
});

test("zeros are a separate mass: costs that are 0 in 99% of rows and rounded to 100 in 40% of the others keep both shares, not a lattice of their few repeated values", async () => {
  // 20,000 rows; 1% non-zero costs between 50 and 100,000, 40% of them multiples of 100, five
  // values repeated three times (as birdstrikes' `Cost Other`: 0 in 99.3% of rows).
  const rng = new Rng(14);
  const costs = Array.from({ length: 20000 }, (_, i) => {
    if (i < 15) return String([137, 260, 6860, 13364, 26727][i % 5]);
    if (rng.next() >= 0.01) return "0";
    const x = 50 + rng.int(99950);
    return String(rng.next() < 0.4 ? Math.max(100, Math.round(x / 100) * 100) : x);
  });
  const a = await analyzeTable(table("cost", costs));
  assert.equal(a.metadata.column_stats!.cost.lattice, undefined, "no lattice of the repeated values");
  const out = decodeReal(a, "cost", 10);
  const share = (vs: string[], f: (v: string) => boolean) => vs.filter(f).length / vs.length;
  const zero = (v: string) => Number(v) === 0;
  assert.ok(Math.abs(share(out, zero) - share(costs, zero)) <= 0.02, `zero share ${share(out, zero)} against ${share(costs, zero)}`);
  const [realNz, outNz] = [costs.filter((v) => !zero(v)), out.filter((v) => !zero(v))];
  const hundreds = (v: string) => Number(v) % 100 === 0;
  assert.ok(Math.abs(share(outNz, hundreds) - share(realNz, hundreds)) <= 0.04, `multiples of 100 among non-zero: ${share(outNz, hundreds)} against ${share(realNz, hundreds)}`);
  assert.ok(new Set(outNz).size > 0.5 * outNz.length, `${new Set(outNz).size} distinct of ${outNz.length} non-zero decoded values`);
});

test("shares written as doubles print (0.0001309607003215936): decoded values keep the real column's significant digits, not 20 decimals", async () => {
  const rng = new Rng(12);
  const shares = Array.from({ length: 2000 }, () => String((10 + rng.int(5000)) / (700000 + rng.int(9000000))));
  const a = await analyzeTable(table("perc", shares));
  const most = Math.max(...shares.map((v) => v.replace(/^0\.0*/, "").replace(/e.*$/, "").replace(".", "").length));
  const st = a.metadata.column_stats!.perc;
  assert.ok(st.digits !== undefined && st.digits <= most, `digits ${st.digits}, real at most ${most}`);
  const out = decodeReal(a, "perc", 1);
  const sig = (v: string) => v.replace(/^-?0\.0*/, "").replace(/^-/, "").replace(".", "").replace(/0+$/, "").length;
  assert.deepEqual(out.filter((v) => v !== "" && sig(v) > most).slice(0, 5), []);
});

test("shares with a few values in exponent notation (jobs' 9.152328872317398e-7): the significant digits are still kept, the decimals written as the real column writes them", async () => {
  const rng = new Rng(13);
  // As jobs.json: counts over totals written as JavaScript prints a double, zeros, and a few
  // values under 1e-6, which JavaScript prints in exponent notation.
  const shares = Array.from({ length: 3000 }, (_, i) =>
    i % 4 === 0 ? "0" : i % 250 === 1 ? String((1 + rng.int(5)) / (6_000_000 + rng.int(9_000_000))) : String((10 + rng.int(5000)) / (700_000 + rng.int(9_000_000))),
  );
  assert.ok(shares.filter((v) => v.includes("e")).length >= 10);
  const a = await analyzeTable(table("perc", shares));
  const sig = (v: string) => v.replace(/e.*$/, "").replace(/^-?0\.0*/, "").replace(/^-/, "").replace(".", "").replace(/0+$/, "").length;
  const most = Math.max(...shares.map(sig));
  const st = a.metadata.column_stats!.perc;
  assert.ok(st.digits !== undefined && st.digits <= most, `digits ${st.digits}, real at most ${most}`);
  const out = decodeReal(a, "perc", 2);
  assert.deepEqual(out.filter((v) => sig(v) > most).slice(0, 5), [], "no binary noise past the real digits");
  const [r, s] = [decimalShares(shares), decimalShares(out)];
  let tvd = 0;
  for (const d of new Set([...r.keys(), ...s.keys()])) tvd += Math.abs((r.get(d) ?? 0) - (s.get(d) ?? 0)) / 2;
  assert.ok(tvd < 0.1, `decimals written TVD ${tvd.toFixed(3)}`);
});

/**
 * 7,000 speeds in knots, integers 60..340: 8% rounded to 100, 13% to 50, 59% to 10, 14% to 5, and
 * 6% not rounded, those between 120 and 150 (as birdstrikes' `Speed IAS`: 94% multiples of 5,
 * the integers between them seen only near the common speeds). Few values, sparse on the
 * integers: a lattice of the values seen.
 */
function speeds(): string[] {
  const rng = new Rng(41);
  return Array.from({ length: 7000 }, () => {
    const u = rng.next();
    if (u >= 0.94) return String(120 + rng.int(31));
    const g = u < 0.08 ? 100 : u < 0.21 ? 50 : u < 0.8 ? 10 : 5;
    return String(Math.max(g, Math.round((60 + 280 * rng.next() ** 1.5) / g) * g));
  });
}

test("a lattice keeps its grain: speeds on the integers seen, 94% multiples of 5, come back with the real shares of multiples of 100, 50, 10 and 5", async () => {
  const real = speeds();
  const a = await analyzeTable(table("speed", real));
  const st = a.metadata.column_stats!.speed;
  assert.ok(st.bin_edges && st.lattice, "quantile bins and a lattice of values");
  assert.ok(st.grain, "a grain beside the lattice");
  assert.ok(st.grain.steps.includes(10), `grain 10 found: ${st.grain.steps}`);
  assert.equal(validateCreate({ metadata: a.metadata }).success, true);
  const decoded = decodeReal(a, "speed", 4);
  const seen = new Set(real);
  assert.deepEqual(decoded.filter((v) => !seen.has(v)).slice(0, 5), [], "every decoded speed is a real value");
  for (const g of [100, 50, 10, 5, 2]) {
    const [r, s] = [shareOn(real, g, 0), shareOn(decoded, g, 0)];
    assert.ok(Math.abs(r - s) <= 0.02, `multiples of ${g}: real ${r.toFixed(3)}, decoded ${s.toFixed(3)}`);
  }
  // Drawn uniformly among the listed values (without the grain), the multiples of 5 are lost.
  const before = decodeReal(a, "speed", 1, 5, withoutGrain(a.metadata, "speed"));
  assert.ok(shareOn(before, 5, 0) < shareOn(real, 5, 0) - 0.05, `without the grain ${shareOn(before, 5, 0).toFixed(3)} multiples of 5`);
  // The column form (Int64) gives the values the text decode gives.
  const dec = new Decoder(a.metadata);
  const cols: Record<string, Int32Array> = {};
  a.columns.forEach((f, i) => (cols[f] = Int32Array.from(a.codes[i])));
  const batch = dec.decodeBatch(cols, 9, { rules: false });
  const rows = dec.decode(cols, 9, { rules: false }).rows;
  const f = a.metadata.features.indexOf("speed");
  for (let r = 0; r < rows.length; r++) assert.equal(batch.get(r, f), rows[r][f], `row ${r}`);
});

test("a lattice keeps its grain inside a where range: values inside it, real values, the multiples of 5 in the real share", async () => {
  const real = speeds();
  const a = await analyzeTable(table("speed", real));
  const dec = new Decoder(a.metadata);
  const range = { lo: 100, hi: 200, hiOpen: true };
  const res = dec.restrict("speed", range, Number)!;
  assert.ok(res.codes.length > 0);
  for (const w of res.weights) assert.ok(w > 0 && w <= 1, `weight ${w}`);
  const n = 20000;
  const cols: Record<string, Int32Array> = {};
  for (const g of a.metadata.features) cols[g] = new Int32Array(n);
  const probs = res.codes.map((c, i) => a.metadata.empirical_probs.speed[c] * res.weights[i]);
  const cum = Float64Array.from(probs, ((s) => (p: number) => (s += p))(0));
  const rng = new Rng(8);
  cols.speed = Int32Array.from({ length: n }, () => res.codes[rng.pickCumulative(cum)]);
  const out = dec.decode(cols, 3, { decoders: { speed: res.decoder }, rules: false }).rows.map((r) => r[0]);
  const seen = new Set(real);
  assert.deepEqual(out.filter((v) => !(Number(v) >= 100 && Number(v) < 200) || !seen.has(v)).slice(0, 5), [], "real values inside the range");
  const inRange = real.filter((v) => Number(v) >= 100 && Number(v) < 200);
  for (const g of [10, 5]) {
    const [r, s] = [shareOn(inRange, g, 0), shareOn(out, g, 0)];
    assert.ok(Math.abs(r - s) <= 0.03, `in range, multiples of ${g}: real ${r.toFixed(3)}, decoded ${s.toFixed(3)}`);
  }
});

/** Significant digits of a written value (`0.0481` 3, `1200` 2, `9.15e-7` 3). */
const sigDigits = (v: string): number =>
  Math.max(1, (/^-?\d+$/.test(v) ? v.replace(/0+$/, "") : v).replace(/[eE].*$/, "").replace(/[^0-9]/g, "").replace(/^0+/, "").length);

/** Share of the non-zero values written with each number of significant digits. */
function digitShares(values: string[]): Map<number, number> {
  const v = values.filter((s) => s !== "" && Number(s) !== 0);
  const m = new Map<number, number>();
  for (const s of v) m.set(sigDigits(s), (m.get(sigDigits(s)) ?? 0) + 1 / v.length);
  return m;
}

test("values measured to 3 to 6 significant digits over nine orders of magnitude come back with each count of digits in the real share", async () => {
  const rng = new Rng(21);
  const real = Array.from({ length: 4000 }, () => {
    const p = 3 + rng.int(4);
    return String(Number((10 ** (-3 + 9 * rng.next())).toPrecision(p)));
  });
  const a = await analyzeTable(table("x", real));
  const st = a.metadata.column_stats!.x;
  assert.equal(st.digits, 6);
  assert.equal(st.digit_shares?.length, 6);
  const decoded = decodeReal(a, "x", 3);
  const [r, s] = [digitShares(real), digitShares(decoded)];
  for (const p of new Set([...r.keys(), ...s.keys()])) {
    const [rp, sp] = [r.get(p) ?? 0, s.get(p) ?? 0];
    assert.ok(Math.abs(rp - sp) <= 0.02, `written with ${p} significant digits: real ${rp.toFixed(3)}, decoded ${sp.toFixed(3)}`);
  }
  assert.ok(decoded.every((v) => v === "" || sigDigits(v) <= 6), "never more digits than the real column writes");
});

test("a value written with fewer significant digits never leaves its bin", () => {
  // Half the real values written with one significant digit, half with six, in bins near 12.3.
  const stats = { type: "numerical", decimals: 4, digits: 6, digit_shares: [0.5, 0, 0, 0, 0, 0.5], min: 12.3, max: 12.4 } as ColumnStats;
  const edges = [12.3, 12.35, 12.4];
  const dec = binDecoder("x", 3, edges, 2, stats, numberLattice(stats));
  const rng = new Rng(24);
  const drawn = Array.from({ length: 1000 }, () => Number(dec.decode(rng.int(2), rng, 0)));
  const off = drawn.filter((x) => !(x >= 12.3 && x <= 12.4));
  assert.deepEqual(off.slice(0, 5), [], `${off.length} of 1000 values outside their bins`);
  assert.ok(drawn.some((x) => String(x).replace(".", "").length < 6), "values that fit their bin with fewer digits are still written with fewer");
});

test("amounts written with 2 decimals over five orders of magnitude stay written with 2 decimals", async () => {
  const rng = new Rng(22);
  const real = Array.from({ length: 3000 }, () => (10 ** (5 * rng.next())).toFixed(2));
  const a = await analyzeTable(table("amount", real));
  const st = a.metadata.column_stats!.amount;
  assert.ok(st.fixed_decimals && st.digit_shares === undefined, JSON.stringify({ fixed: st.fixed_decimals, shares: st.digit_shares }));
  const decoded = decodeReal(a, "amount", 2);
  assert.deepEqual(decoded.filter((v) => !/^\d+\.\d\d$/.test(v)).slice(0, 5), []);
});

test("figures of 12 significant digits, a third printed with a double's noise (14.201000213599999), are written with 12 digits and no noise", async () => {
  assert.equal(noiseFreeDigits("14.201000213599999"), 12);
  assert.equal(noiseFreeDigits("0.30000000000000004"), 1);
  assert.equal(noiseFreeDigits("0.000014285714285714286"), undefined, "10 / 700000: a quotient, no noise");
  assert.equal(noiseFreeDigits("81.6"), undefined);
  const rng = new Rng(23);
  const real = Array.from({ length: 3000 }, (_, i) => {
    const x = Number((10 ** (-1 + 4 * rng.next())).toPrecision(12));
    return i % 3 === 0 ? String(x * (1 + Number.EPSILON)) : String(x);
  });
  assert.ok(real.filter((v) => sigDigits(v) >= 16).length > 500);
  const a = await analyzeTable(table("value", real));
  assert.equal(a.metadata.column_stats!.value.digits, 12);
  const decoded = decodeReal(a, "value", 2).filter((v) => v !== "");
  assert.deepEqual(decoded.filter((v) => sigDigits(v) > 12).slice(0, 5), [], "no value past 12 digits");
  const twelve = decoded.filter((v) => sigDigits(v) >= 11).length / decoded.length;
  assert.ok(twelve > 0.95, `${twelve.toFixed(3)} of decoded values with 11 or 12 digits`);
});

test("latitudes written with 4 to 7 decimals, a few printed as a full double (54.013333333333335), keep those decimals: not 15 in every row", async () => {
  const rng = new Rng(29);
  const real = Array.from({ length: 1500 }, (_, i) => {
    const x = 25 + 40 * rng.next();
    // One row in 100 a double printed in full (minutes / 60), the rest measured to 4 .. 7 decimals.
    return i % 100 === 0 ? String(Math.floor(x) + (1 + rng.int(58)) / 60 + 1e-13) : x.toFixed(4 + rng.int(4));
  });
  const decimals = (v: string) => v.split(".")[1]?.length ?? 0;
  assert.ok(real.some((v) => decimals(v) >= 14));
  const a = await analyzeTable(table("lat", real));
  const decoded = decodeReal(a, "lat", 2).filter((v) => v !== "");
  const long = decoded.filter((v) => decimals(v) > 8).length / decoded.length;
  assert.ok(long < 0.05, `${long.toFixed(3)} of decoded values with more than 8 decimals (real 0.01)`);
  const upToFive = decoded.filter((v) => decimals(v) <= 5).length / decoded.length;
  assert.ok(upToFive > 0.35 && upToFive < 0.65, `${upToFive.toFixed(3)} of decoded values with 4 or 5 decimals (real 0.5)`);
});
