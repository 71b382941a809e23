/**
 * Column kinds (issue 10): inference (categorical, numerical, datetime, id), overrides, precision,
 * rare category protection and the DataErrors of bad input, through extraction and decoding.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { DataError, Decoder, OTHER, analyzeTable, type Analysis, type Table } from "../src/sdk";
import { describeColumns } from "../src/sdk/columns";
import { looksLikeIdName } from "../src/sdk/columns/id";

function table(columns: string[], rows: (string | number)[][]): Table {
  return { columns, rows: rows.map((r) => r.map(String)) };
}

function codesOf(a: Analysis): Record<string, ArrayLike<number>> {
  const out: Record<string, ArrayLike<number>> = {};
  a.columns.forEach((c, f) => (out[c] = a.codes[f]));
  return out;
}

/** Decodes the table's own codes: what a generator that learnt it perfectly would give. */
function roundTrip(a: Analysis, seed = 1): string[][] {
  return new Decoder(a.metadata).decode(codesOf(a), seed).rows;
}

function kindOf(a: Analysis, column: string): string {
  return a.codecs.find((c) => c.name === column)!.kind;
}

function expectDataError(p: Promise<unknown>, ...parts: RegExp[]): Promise<void> {
  return assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof DataError, `a DataError, got ${String(e)}`);
    for (const re of parts) assert.match(e.message, re);
    return true;
  });
}

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

test("kinds: leading zeros and comma pairs stay text; thousands separators, integers and decimals are numerical", async () => {
  const rows = range(60).map((i) => [["00501", "00544", "01001"][i % 3], ["1,234", "2,000"][i % 2], i % 5, (i % 7) + 0.25, ["a", "b"][i % 2], ["1,23", "4,5"][i % 2]]);
  const a = await analyzeTable(table(["zip", "amount", "small", "real", "cat", "pair"], rows));
  assert.equal(kindOf(a, "zip"), "categorical");
  assert.deepEqual(Object.keys(a.codecs[0].mapping).sort(), ["00501", "00544", "01001"], "the text is kept, zeros included");
  assert.equal(kindOf(a, "amount"), "numerical", "1,234 is a number written with grouping (src/sdk/columns/number-format.ts)");
  assert.deepEqual(a.metadata.column_stats!.amount.number_format, { grouping: "," });
  assert.ok(roundTrip(a).every((r) => r[1] === "1,234" || r[1] === "2,000"), "decoded as written");
  assert.equal(kindOf(a, "pair"), "categorical", "1,23 is no number");
  assert.equal(kindOf(a, "small"), "numerical");
  assert.equal(a.metadata.column_stats!.real.decimals, 2);
  assert.ok(roundTrip(a).every((r) => r[0].length === 5 && r[0].startsWith("0")));
});

test("kinds: distinct integers are an id only under an identifier's name; distinct text is an id", async () => {
  const rows = range(50).map((i) => [1000 + i, 7 * i + 3, `K${(i * 37) % 50}x${i}`, ["a", "b"][i % 2]]);
  const a = await analyzeTable(table(["order_id", "weight", "code", "cat"], rows));
  assert.equal(kindOf(a, "order_id"), "id");
  assert.equal(kindOf(a, "weight"), "numerical", "a distinct integer measurement is not an identifier");
  assert.equal(kindOf(a, "code"), "id");
  assert.equal(a.metadata.cardinalities.order_id, 1, "an id has one code and no values in the metadata");
  assert.ok(!a.metadata.marginals!.some((m) => m.features.includes("order_id") || m.features.includes("code")), "no 2-way marginals for ids");
  assert.ok(!JSON.stringify(a.metadata).includes("K37x1"), "no identifier value is sent");
  for (const name of ["id", "CustomerID", "invoice no", "order_id", "key"]) assert.ok(looksLikeIdName(name), name);
  for (const name of ["weight", "idle", "video", "width"]) assert.ok(!looksLikeIdName(name), name);
});

test("datetime: format and granularity inferred, decoded inside the bins in the column's own format", async () => {
  const rows = range(400).map((i) => {
    const d = new Date(Date.UTC(2001, 0, 1) + i * 5 * 3600_000 + (i % 60) * 60_000);
    const p = (n: number) => String(n).padStart(2, "0");
    return [`${d.getUTCFullYear()}/${p(d.getUTCMonth() + 1)}/${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}`, i % 3];
  });
  const a = await analyzeTable(table(["when", "n"], rows));
  const st = a.metadata.column_stats!.when;
  assert.equal(st.type, "datetime");
  assert.equal(st.format, "yyyy/MM/dd HH:mm");
  assert.equal(st.granularity, "minute");
  assert.ok(st.bin_edges && st.bin_edges.length > 2, "quantile bins over time");
  const values = rows.map((r) => String(r[0])).sort();
  const out = roundTrip(a).map((r) => r[0]);
  assert.ok(out.every((v) => /^\d{4}\/\d{2}\/\d{2} \d{2}:\d{2}$/.test(v)), "written in the column's format");
  assert.ok(out.every((v) => v >= values[0] && v <= values.at(-1)!), "inside [min, max]");
  assert.ok(new Set(out).size > 200, "values are drawn inside the bins, not one per bin");
});

test("datetime: hourly stamps keep whole hours; dates before 1900 and after 2100 decode in range", async () => {
  const hourly = range(100).map((i) => [`2015-01-${String(1 + (i % 28)).padStart(2, "0")}T${String(i % 24).padStart(2, "0")}:00:00`, i % 2]);
  const a = await analyzeTable(table(["t", "x"], hourly));
  assert.equal(a.metadata.column_stats!.t.granularity, "hour");
  assert.ok(roundTrip(a).every((r) => r[0].endsWith(":00:00")));
  const old = range(100).map((i) => [`${1850 + 3 * i}-06-${String(1 + (i % 28)).padStart(2, "0")}`, i % 2]);
  const b = await analyzeTable(table(["born", "x"], old));
  assert.equal(b.metadata.column_stats!.born.format, "yyyy-MM-dd");
  const out = roundTrip(b).map((r) => r[0]);
  assert.ok(out.every((v) => v >= "1850-06-01" && v <= "2147-06-28"), out.find((v) => !(v >= "1850-06-01" && v <= "2147-06-28")));
});

test("datetime: offsets keep the instant and are written in the column's most frequent offset", async () => {
  const rows = range(60).map((i) => [`2021-03-${String(1 + (i % 28)).padStart(2, "0")}T10:${String(i % 60).padStart(2, "0")}:00${i % 10 === 0 ? "+01:00" : "+02:00"}`, i % 2]);
  const a = await analyzeTable(table(["ts", "x"], rows));
  const st = a.metadata.column_stats!.ts;
  assert.equal(st.type, "datetime");
  assert.equal(st.offset, 120);
  assert.ok(roundTrip(a).every((r) => r[0].endsWith("+02:00")));
});

test("datetime: YYYYMMDD integers stay numbers unless declared, then decode as their dates (not 1970)", async () => {
  const rows = range(60).map((i) => [String(20010101 + (i % 28)), i % 2]);
  const a = await analyzeTable(table(["day", "x"], rows));
  assert.equal(kindOf(a, "day"), "numerical");
  const b = await analyzeTable(table(["day", "x"], rows), { columns: { day: { type: "datetime", format: "yyyyMMdd" } } });
  assert.equal(kindOf(b, "day"), "datetime");
  assert.ok(roundTrip(b).every((r) => /^200101(0[1-9]|1\d|2[0-8])$/.test(r[0])));
});

test("bad input: mixed datetime formats, unknown override column, a format that does not parse: DataErrors naming column, line, value", async () => {
  const mixed = range(40).map((i) => [i === 17 ? "03/04/2001" : `2001-01-${String(1 + (i % 28)).padStart(2, "0")}`, i % 2]);
  await expectDataError(analyzeTable(table(["d", "x"], mixed)), /line 19/, /"d"/, /03\/04\/2001/, /categorical/);
  const c = await analyzeTable(table(["d", "x"], mixed), { columns: { d: { type: "categorical" } } });
  assert.equal(kindOf(c, "d"), "categorical", "the override accepts the column as categories");
  await expectDataError(analyzeTable(table(["d", "x"], mixed), { columns: { nope: { type: "id" } } }), /no column "nope"/);
  await expectDataError(analyzeTable(table(["d", "x"], mixed), { columns: { d: { type: "datetime", format: "dd.MM.yyyy" } } }), /line 2\b/, /"d"/, /dd\.MM\.yyyy/);
  const clean = mixed.filter((_, i) => i !== 17);
  await expectDataError(analyzeTable(table(["d", "x"], clean), { columns: { x: { type: "numerical", format: "yyyy" } } }), /only a datetime/);
  await expectDataError(analyzeTable(table(["d", "x"], mixed), { columns: { d: { type: "numerical" } } }), /is not a number/, /line 2\b/);
});

test("rare categories: a value seen fewer than k times never appears; the pooled code decodes to the column's own values", async () => {
  const rows = range(300).map((i) => [i % 50 === 7 ? `once-${i}` : ["red", "green", "blue"][i % 3], i % 4]);
  const a = await analyzeTable(table(["color", "x"], rows));
  const codec = a.codecs[0];
  assert.ok(codec.otherCode >= 0);
  assert.equal(a.metadata.column_stats!.color.rare_threshold, 2);
  assert.ok(!JSON.stringify(a.metadata).includes("once-"), "rare values are not sent");
  const out = range(5).flatMap((s) => roundTrip(a, s).map((r) => r[0]));
  assert.ok(out.every((v) => ["red", "green", "blue"].includes(v)), "no rare value, no placeholder");
  assert.ok(!out.includes(OTHER));
  const k3 = await analyzeTable(table(["color", "x"], rows.map((r, i) => [i < 4 ? "twice" : r[0], r[1]])), { rareThreshold: 5 });
  assert.equal(k3.codecs[0].encode("twice"), k3.codecs[0].otherCode, "k = 5: a value seen 4 times is pooled");
  const unique = range(30).map((i) => [`v${i % 15}`, i % 2]);
  await expectDataError(analyzeTable(table(["c", "x"], unique), { columns: { c: { type: "categorical" } }, rareThreshold: 3 }), /no value that occurs at least 3 times/, /id/);
});

test("identifiers decode distinct across batches of one sample and never to a stored value", async () => {
  const rows = range(200).map((i) => [`ORD-${String(100000 + i * 7)}`, i % 3]);
  const a = await analyzeTable(table(["order", "x"], rows));
  assert.equal(kindOf(a, "order"), "id");
  const d = new Decoder(a.metadata);
  const codes = codesOf(a);
  const first = d.decode(codes, 1, { rowOffset: 0, idKey: 9 }).rows.map((r) => r[0]);
  const second = d.decode(codes, 2, { rowOffset: 200, idKey: 9 }).rows.map((r) => r[0]);
  const all = [...first, ...second];
  assert.equal(new Set(all).size, 400, "distinct within the sample");
  assert.ok(all.every((v) => /^ORD-\d{6}$/.test(v)), "the shape: prefix, length, digits");
  const real = new Set(rows.map((r) => r[0]));
  assert.ok(all.filter((v) => real.has(v)).length <= 40, "at most about the real share of the shape's space");
});

test("describeColumns: one line per column with name, kind, codes and what the kind keeps", async () => {
  const rows = range(60).map((i) => [`2001-01-${String(1 + (i % 28)).padStart(2, "0")}`, (i % 9) + 0.5, ["a", "b"][i % 2], `id-${i}`]);
  const a = await analyzeTable(table(["day", "val", "cat", "ref"], rows));
  const lines = describeColumns(a.codecs);
  assert.equal(lines.length, 5);
  assert.match(lines[0], /^column\s+kind\s+codes\s+details$/);
  assert.match(lines[1], /^day\s+datetime\s+\d+\s+format yyyy-MM-dd, granularity day, 2001-01-01 \.\. 2001-01-28$/);
  // Every value is written with its one decimal (0.5 .. 8.5), so the line says decoding keeps it.
  assert.match(lines[2], /^val\s+numerical\s+9\s+0\.5 \.\. 8\.5, 1 decimals, written with 1 decimal \(0\.0\)$/);
  assert.match(lines[3], /^cat\s+categorical\s+2\s+2 values with a code$/);
  assert.match(lines[4], /^ref\s+id\s+1\s+text identifiers with prefix "id-"/);
});

test("a short table's column of unique names is written fresh, not refused; overrides and a domain do not mix", async () => {
  const rows = range(8).map((i) => [`name ${i}`, i % 2]);
  const a = await analyzeTable(table(["who", "x"], rows));
  assert.equal(kindOf(a, "who"), "id", "no value reaches k = 2 and the column is not overridden");
  await assert.rejects(
    analyzeTable(table(["who", "x"], rows), { domain: { who: 8, x: 2 }, columns: { x: { type: "numerical" } } }),
    (e: unknown) => e instanceof RangeError && /cannot be combined/.test(e.message),
  );
});

test("a pooled value is drawn among the values that occur with the row's partner (a city among its state's cities)", async () => {
  const rows = range(400).map((i) => {
    const state = i % 2 === 0 ? "GA" : "IA";
    const city = i % 10 < 2 ? `rare-${i}` : state === "GA" ? ["Atlanta", "Macon"][i % 4 === 0 ? 0 : 1] : ["Ames", "Waterloo"][i % 4 === 1 ? 0 : 1];
    return [city, state];
  });
  const a = await analyzeTable(table(["city", "state"], rows));
  const out = roundTrip(a);
  const pooled = a.codes[0];
  let checked = 0;
  out.forEach((r, i) => {
    if (pooled[i] !== a.codecs[0].otherCode) return;
    checked++;
    assert.ok(r[1] === "GA" ? ["Atlanta", "Macon"].includes(r[0]) : ["Ames", "Waterloo"].includes(r[0]), `${r[0]}, ${r[1]}`);
  });
  assert.equal(checked, 80);
});

test("a column of mostly one-off texts under a header no kind knows is written in its own words, not as a few released values or __other__", async () => {
  const towns = ["Aguanga", "Ridgecrest", "Pinnacles", "Cantwell", "Anza", "Bridgeport", "Tallaboa", "Beatty"];
  const dirs = ["N", "NE", "SSW", "W"];
  // Earthquake places: 300 rows, most (distance, direction, town) once; tz follows the town.
  const rows = range(300).map((i) => {
    const t = (i * 5) % towns.length;
    const where = i % 10 === 0 ? "9km NE of Aguanga, CA" : `${1 + (i % 97)}km ${dirs[(i >> 2) % 4]} of ${towns[t]}, ${t < 4 ? "CA" : "Alaska"}`;
    return [where, i % 5];
  });
  const a = await analyzeTable(table(["where", "x"], rows));
  assert.equal(a.metadata.column_stats!.where.semantic?.kind, "text");
  const released = new Set(Object.keys(a.metadata.value_mappings!.where));
  const out = roundTrip(a).map((r) => r[0]);
  assert.ok(!out.includes(OTHER));
  const fresh = new Set(out.filter((v) => !released.has(v)));
  assert.ok(fresh.size > 100, `fresh places: ${fresh.size}`);
  // A model this small runs out of new values: then one it wrote again, never a numbered one (`Alaska 2`).
  for (const v of fresh) assert.match(v, /^\d+km (N|NE|SSW|W) of \p{Lu}\p{Ll}+, (CA|Alaska)$/u);
});

test("a fresh value of a column that decides two others holds no word seen only beside another value of either", async () => {
  const towns = ["Aguanga", "Ridgecrest", "Pinnacles", "Coalinga", "Cantwell", "Valdez", "Talkeetna", "Healy"];
  const dirs = ["N", "NE", "SSW", "W"];
  const netOf = (t: number): string => ["ci", "nc", "ak", "uu"][t % 4];
  // Each town in a released place (every 10th row), the rest mostly once; tz follows the state, net the town.
  const rows = range(400).map((i) => {
    const t = i % 10 === 0 ? (i / 10) % towns.length : (i * 5) % towns.length;
    const where = i % 10 === 0 ? `9km NE of ${towns[t]}, ${t < 4 ? "CA" : "Alaska"}` : `${1 + (i % 97)}km ${dirs[(i >> 2) % 4]} of ${towns[t]}, ${t < 4 ? "CA" : "Alaska"}`;
    return [where, t < 4 ? "-480" : "-540", netOf(t)];
  });
  const a = await analyzeTable(table(["where", "tz", "net"], rows));
  const decides = (a.metadata.rules ?? []).filter((r) => r.type === "fixed_combinations" && r.determinant === "where").map((r) => (r.type === "fixed_combinations" ? r.columns.find((c) => c !== "where") : ""));
  assert.deepEqual(decides.sort(), ["net", "tz"]);
  const released = new Set(Object.keys(a.metadata.value_mappings!.where));
  let fresh = 0;
  for (const [where, tz, net] of roundTrip(a)) {
    if (released.has(where)) continue;
    fresh++;
    const t = towns.findIndex((x) => where.includes(` ${x},`));
    assert.ok(t >= 0, where);
    assert.equal(where.endsWith(tz === "-480" ? ", CA" : ", Alaska") || / \d+$/.test(where), true, `${where}, ${tz}`);
    assert.equal(netOf(t), net, `${where}, ${net}`);
  }
  assert.ok(fresh > 50, `fresh places: ${fresh}`);
});

test("a determinant's pooled values beside a partner value no released value goes with are written in their own form, never __other__", async () => {
  // Two parties decide codes 1 and 2; twenty rare parties, each once, all have code 3.
  const rare = ["Libertarian", "Green", "Constitution", "Reform", "Socialist", "Workers", "Prohibition", "Justice", "Unity", "Freedom", "Peace", "Liberty", "Labor", "Farmer", "Progressive", "Independence", "Alliance", "Citizens", "Natural", "American"];
  const rows = range(240).map((i) => (i < 20 ? [`${rare[i]} Party`, "3"] : i % 2 ? ["Democratic Party", "1"] : ["Republican Party", "2"]));
  const a = await analyzeTable(table(["party", "code"], rows));
  assert.ok(a.metadata.rules?.some((r) => r.type === "fixed_combinations" && r.determinant === "party"));
  const m = a.metadata;
  const n = 300;
  const codes = { party: new Int32Array(n).fill(m.value_mappings!.party[OTHER]), code: Int32Array.from({ length: n }, (_, r) => r % 3) };
  const out = new Decoder(m).decode(codes, 3).rows;
  for (const [party, code] of out) {
    if (code === "1") assert.equal(party, "Democratic Party");
    else if (code === "2") assert.equal(party, "Republican Party");
    else assert.match(party, /^\p{Lu}\p{Ll}+ Party$/u, `${party}, ${code}`);
  }
  assert.ok(!out.some(([party]) => /Democratic|Republican|__other__/.test(party) && out.find((r) => r[0] === party)![1] === "3"));
});

test("a determinant of one-form codes (party codes) writes a pooled cell beside a partner value no released code goes with in that form", async () => {
  const rare = ["DFL", "LIB", "AIP", "GRE", "CON", "REF", "SOC", "WKP", "PRO", "NAT", "UNI", "FRE"];
  const rows = range(240).map((i) => (i < rare.length ? [rare[i], "3"] : i % 2 ? ["DEM", "1"] : ["REP", "2"]));
  const a = await analyzeTable(table(["party", "code"], rows));
  assert.ok(a.metadata.rules?.some((r) => r.type === "fixed_combinations" && r.determinant === "party"));
  const m = a.metadata;
  const n = 300;
  const codes = { party: new Int32Array(n).fill(m.value_mappings!.party[OTHER]), code: Int32Array.from({ length: n }, (_, r) => r % 3) };
  for (const [party, code] of new Decoder(m).decode(codes, 3).rows) {
    if (code === "3") assert.match(party, /^[A-Z]{3}$/, `${party}, ${code}`);
    assert.ok(code === "3" ? !["DEM", "REP"].includes(party) : party === (code === "1" ? "DEM" : "REP"), `${party}, ${code}`);
  }
});

test("integers named a code that repeat are categories, so the name that decides them keeps them exactly; a count named num stays a number", async () => {
  const agencies = ["Department of Labor", "Department of Energy", "Judicial Branch", "Legislative Branch", "Department of the Treasury", "Small Business Administration"];
  const codes = [12, 19, 2, 1, 15, 73];
  const rows = range(240).map((i) => [String(codes[i % 6]), agencies[i % 6], String(1 + (i % 16)), String((i * 37) % 1000)]);
  const a = await analyzeTable(table(["Agency code", "Agency name", "education-num", "amount"], rows));
  assert.deepEqual(["Agency code", "education-num", "amount"].map((c) => kindOf(a, c)), ["categorical", "numerical", "numerical"]);
  assert.ok(a.metadata.rules?.some((r) => r.type === "fixed_combinations" && r.columns.includes("Agency code") && r.columns.includes("Agency name")));
  for (const r of roundTrip(a)) assert.equal(codes[agencies.indexOf(r[1])], Number(r[0]), r.join(","));
});

test("datetime overrides: a format that skips a unit or writes one twice (yyyy-mm-dd: mm is minutes) is a DataError, not 2013-33-24", async () => {
  const rows = range(40).map((i) => [`2013-${String(1 + (i % 12)).padStart(2, "0")}-${String(1 + (i % 28)).padStart(2, "0")}`, i % 2]);
  // Every value reads in yyyy-mm-dd (year, minute, day) and writes back the same text, so only the format itself can be refused.
  await expectDataError(
    analyzeTable(table(["date", "x"], rows), { columns: { date: { type: "datetime", format: "yyyy-mm-dd" } } }),
    /"date"/,
    /yyyy-mm-dd/,
    /no month/,
    /months are MM \(mm is minutes\)/,
  );
  const timed = rows.map(([d, x]) => [`${d} 10:0${x}`, x]);
  await expectDataError(
    analyzeTable(table(["date", "x"], timed), { columns: { date: { type: "datetime", format: "yyyy-MM-dd HH:MM" } } }),
    /writes the month twice/,
    /minutes are mm/,
  );
  await expectDataError(
    analyzeTable(table(["date", "x"], timed.map(([d, x]) => [String(d).slice(0, 4) + String(d).slice(10), x])), {
      columns: { date: { type: "datetime", format: "yyyy HH:mm" } },
    }),
    /no month/,
  );
  const ok = await analyzeTable(table(["date", "x"], rows), { columns: { date: { type: "datetime", format: "yyyy-MM-dd" } } });
  const out = roundTrip(ok).map((r) => r[0]);
  assert.ok(out.every((v) => /^2013-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/.test(v)), `dates in the column's format: ${out.slice(0, 5).join(", ")}`);
  // Week dates and weekday names stay usable.
  assert.equal(kindOf(await analyzeTable(table(["w", "x"], range(30).map((i) => [`2020-W${String(10 + (i % 9)).padStart(2, "0")}-${1 + (i % 7)}`, i % 2])), {
    columns: { w: { type: "datetime", format: "kkkk-'W'WW-c" } },
  }), "w"), "datetime");
});
