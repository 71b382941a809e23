/**
 * Ratio and product identities (`RatioRule`): a rate = 100 · unemployed / labor force written with
 * one decimal, a cost = price · quantity, found on small tables built here and kept in every decoded
 * row whatever the model drew (codes drawn independently from the 1-way marginals), written with the
 * real column's decimals; independent columns and a noisy rate give no rule.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { DataError, type Metadata, type RatioRule, type Rule, type Table } from "../src/sdk";
import { describeRule, ruleId } from "../src/sdk/rules/describe";
import { ruleChecker, ruleShares } from "../src/sdk/rules/check";
import { analyzed, decodeIndependent, table } from "./rules-fixtures";

function kept(meta: Metadata, rule: Rule, t: Table): { share: number; applicable: number } {
  const [s] = ruleShares([rule], meta, t);
  return { share: s.share, applicable: s.applicable };
}

const ratios = (meta: Metadata): RatioRule[] => (meta.rules ?? []).filter((r): r is RatioRule => r.type === "ratio");

/** County labor force, unemployed (some 0) and the rate in percent with one decimal (BLS LAUS style). */
const counties = (): Table =>
  table(["county", "labor_force", "unemployed", "rate"], 1500, (i, rng) => {
    const lf = 200 + rng.int(200000);
    const u = i % 50 === 0 ? 0 : Math.round(lf * (0.02 + 0.12 * rng.next()));
    return [`c${i}`, lf, u, ((100 * u) / lf).toFixed(1)];
  });

/** Line items: a price in cents, a quantity of 1-10 and their cost. */
const items = (): Table =>
  table(["price", "quantity", "cost", "branch"], 1000, (_, rng) => {
    const cents = 100 + rng.int(9900);
    const q = 1 + rng.int(10);
    return [(cents / 100).toFixed(2), q, ((cents * q) / 100).toFixed(2), ["A", "B", "C"][rng.int(3)]];
  });

describe("ratio and product identities", () => {
  test("a rate in percent is found with its factor 100 and printed as one", async () => {
    const meta = await analyzed(counties());
    const [r] = ratios(meta);
    assert.ok(r, `rules: ${JSON.stringify(meta.rules)}`);
    assert.deepEqual({ total: r.total, parts: r.parts, powers: r.powers, factor: r.factor }, { total: "rate", parts: ["unemployed", "labor_force"], powers: [1, -1], factor: 100 });
    assert.equal(r.share, 1);
    assert.equal(describeRule(r), "ratio: rate = 100 * unemployed / labor_force");
    assert.equal(ruleId(r), "ratio:rate,unemployed,labor_force");
  });

  test("a product is found: cost = price * quantity", async () => {
    const meta = await analyzed(items());
    const rs = ratios(meta);
    assert.equal(rs.length, 1, JSON.stringify(rs));
    assert.deepEqual({ total: rs[0].total, parts: [...rs[0].parts].sort(), powers: rs[0].powers, factor: rs[0].factor }, { total: "cost", parts: ["price", "quantity"], powers: [1, 1], factor: 1 });
  });

  test("independent columns and a rate written with noise make no ratio", async () => {
    const t = table(["a", "b", "c", "d", "rate"], 1500, (_, rng) => {
      const lf = 1000 + rng.int(50000);
      const u = Math.round(lf * 0.05 * rng.next());
      const noisy = ((100 * u) / lf) * (1 + 0.2 * (rng.next() - 0.5));
      return [(rng.next() * 100).toFixed(2), 1 + rng.int(500), (rng.next() * 10).toFixed(3), lf + u, noisy.toFixed(1)];
    });
    assert.deepEqual(ratios(await analyzed(t)), []);
  });

  test("decoded rows keep the identity, with the real column's decimals, whatever the model drew", async () => {
    const meta = await analyzed(counties());
    const [r] = ratios(meta);
    const synth = decodeIndependent(meta, 2000);
    const s = kept(meta, r, synth);
    assert.equal(s.share, 1);
    assert.ok(s.applicable > 1900, `${s.applicable} rows apply`);
    const without = kept(meta, r, decodeIndependent(meta, 2000, false));
    assert.ok(without.share < 0.2, `without the rule ${without.share}`);
    const [c, u, lf] = ["rate", "unemployed", "labor_force"].map((n) => synth.columns.indexOf(n));
    for (const row of synth.rows) {
      if (row[u] === "" || row[lf] === "" || row[c] === "") continue;
      // One decimal, as the real column writes it ("5.0", never "5"), and exactly the rounded rate.
      assert.match(row[c], /^\d+\.\d$/);
      assert.equal(row[c], ((100 * Number(row[u])) / Number(row[lf])).toFixed(1));
    }
    const st = meta.column_stats!.rate!;
    assert.ok(synth.rows.every((row) => row[c] === "" || (Number(row[c]) >= st.min! && Number(row[c]) <= st.max!)), "rates stay in the real range");
  });

  test("a product that is a sum's part is written before the sum: total = cost + tax keeps both", async () => {
    const t = table(["price", "quantity", "cost", "tax", "total"], 1000, (_, rng) => {
      const cents = 100 + rng.int(9900);
      const q = 1 + rng.int(10);
      const cost = cents * q;
      const tax = 5 * q + rng.int(300);
      return [(cents / 100).toFixed(2), q, (cost / 100).toFixed(2), (tax / 100).toFixed(2), ((cost + tax) / 100).toFixed(2)];
    });
    const meta = await analyzed(t);
    assert.ok(ratios(meta).some((r) => r.total === "cost"), JSON.stringify(meta.rules));
    assert.ok(meta.rules!.some((r) => r.type === "sum" && r.total === "total"), JSON.stringify(meta.rules));
    const synth = decodeIndependent(meta, 1000);
    for (const rule of meta.rules!.filter((r) => r.type === "sum" || r.type === "ratio")) assert.equal(kept(meta, rule, synth).share, 1, ruleId(rule));
  });

  test("two rates over one summed total both hold, though one's redraws move the total the other read", async () => {
    // Census style: speakers of English and of French, the population as a sum, each share in percent.
    const t = table(["english", "french", "either", "neither", "total", "engperc", "frenperc"], 1500, (_, rng) => {
      const either = 50 + rng.int(20000);
      const neither = rng.int(3) === 0 ? rng.int(500) : 0;
      const total = either + neither;
      const english = Math.round(either * rng.next());
      const french = Math.round(either * rng.next() * 0.3);
      return [english, french, either, neither, total, String((100 * english) / total), String((100 * french) / total)];
    });
    const meta = await analyzed(t);
    assert.deepEqual(ratios(meta).map(ruleId).sort(), ["ratio:engperc,english,total", "ratio:frenperc,french,total"]);
    const synth = decodeIndependent(meta, 2000);
    for (const rule of meta.rules!.filter((r) => r.type === "sum" || r.type === "ratio")) assert.equal(kept(meta, rule, synth).share, 1, ruleId(rule));
  });

  test("the checker: a divided part of 0 is outside the rule; a numerator of 0 needs a total of 0", async () => {
    const meta = await analyzed(counties());
    const [r] = ratios(meta);
    const check = ruleChecker(r, meta);
    const row = (lf: string, u: string, rate: string) => meta.features.map((f) => ({ labor_force: lf, unemployed: u, rate })[f as "rate"] ?? "x");
    assert.equal(check(row("0", "5", "1.0")), undefined);
    assert.equal(check(row("1000", "0", "0.0")), true);
    assert.equal(check(row("1000", "0", "0.1")), false);
    assert.equal(check(row("1000", "53", "5.3")), true);
    assert.equal(check(row("1000", "53", "5.4")), false);
  });

  test("a unit conversion by division is found with its factor as the fraction it is: minutes = seconds / 60, hours = seconds / 3600", async () => {
    // A pace written as clock text (read as seconds) beside the same pace in minutes (3 decimals), and in hours (all digits).
    const t = table(["pace", "pace_min", "pace_hrs"], 400, (i) => {
      const s = 300 + ((i * 7919) % 3000);
      return [`${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`, (s / 60).toFixed(3), String(s / 3600)];
    });
    const meta = await analyzed(t);
    const got = ratios(meta).map((r) => ({ total: r.total, parts: r.parts, factor: r.factor, band: r.min !== undefined }));
    assert.deepEqual(got.sort((a, b) => a.total.localeCompare(b.total)), [
      { total: "pace_hrs", parts: ["pace"], factor: 1 / 3600, band: false },
      { total: "pace_min", parts: ["pace"], factor: 1 / 60, band: false },
    ], JSON.stringify(meta.rules));
    const decoded = decodeIndependent(meta, 300);
    for (const r of decoded.rows) {
      const s = r[0].split(":").reduce((a, p) => a * 60 + Number(p), 0);
      assert.equal(r[1], (s / 60).toFixed(3), r.join(" "));
      assert.ok(Math.abs(Number(r[2]) - s / 3600) <= 1e-15, r.join(" "));
    }
  });

  test("a declared ratio takes its factor from the rows; one the rows break is a DataError", async () => {
    const meta = await analyzed(counties(), { detect: false, declare: [{ type: "ratio", total: "rate", parts: ["unemployed", "labor_force"], powers: [1, -1] }] });
    assert.deepEqual(meta.rules!.map((r) => (r.type === "ratio" ? [r.factor, r.declared] : r.type)), [[100, true]]);
    await assert.rejects(analyzed(counties(), { detect: false, declare: [{ type: "ratio", total: "rate", parts: ["unemployed", "labor_force"], powers: [1, -1], factor: 10 }] }), DataError);
  });
});

describe("the RatioRule contract", () => {
  const features = ["rate", "unemployed", "labor_force"];
  const md = (rule: Record<string, unknown>): Metadata =>
    ({ features, cardinalities: Object.fromEntries(features.map((f) => [f, 1])), empirical_probs: Object.fromEntries(features.map((f) => [f, [1]])), rules: [{ type: "ratio", share: 1, ...rule }] }) as unknown as Metadata;
  const good = { total: "rate", parts: ["unemployed", "labor_force"], powers: [1, -1], factor: 100 };

  test("the server's validator takes a ratio of one or two parts with a factor > 0; the semantic check names a bad part or power", async () => {
    const { validateCreateModel } = await import("../src/server/handlers/bodyValidators");
    const { checkMetadata } = await import("../src/server/handlers/checkMetadata");
    assert.equal(validateCreateModel({ metadata: md(good) }).success, true);
    assert.doesNotThrow(() => checkMetadata(md(good)));
    assert.equal(validateCreateModel({ metadata: md({ ...good, factor: 0 }) }).success, false);
    assert.equal(validateCreateModel({ metadata: md({ ...good, powers: [1, 2] }) }).success, false);
    assert.equal(validateCreateModel({ metadata: md({ ...good, parts: ["unemployed", "labor_force", "rate"], powers: [1, -1, 1] }) }).success, false);
    const param = (e: unknown) => (e as { param?: string }).param ?? "";
    assert.throws(() => checkMetadata(md({ ...good, parts: ["unemployed", "nope"] })), (e) => param(e).endsWith("rules[0].parts[1]"));
    assert.throws(() => checkMetadata(md({ ...good, powers: [1] })), (e) => param(e).endsWith("rules[0].powers"));
  });
});

/** Accounts: months of tenure, a monthly charge and a total near their product (charges changed over time). */
const accounts = (): Table =>
  table(["tenure", "monthly", "total", "plan"], 1500, (_, rng) => {
    const months = 1 + rng.int(72);
    const monthly = 18 + rng.next() * 100;
    const f = 0.85 + 0.3 * rng.next();
    return [months, monthly.toFixed(2), (months * monthly * f).toFixed(2), ["A", "B"][rng.int(2)]];
  });

describe("ratio bands", () => {
  test("a total near the product of its parts is a band, kept in decoded rows whatever the model drew", async () => {
    const meta = await analyzed(accounts());
    const rs = ratios(meta);
    assert.equal(rs.length, 1, JSON.stringify(meta.rules));
    const r = rs[0];
    assert.deepEqual({ total: r.total, parts: [...r.parts].sort(), powers: r.powers }, { total: "total", parts: ["monthly", "tenure"], powers: [1, 1] });
    assert.ok(r.min! >= 0.84 && r.min! < 0.87 && r.max! > 1.13 && r.max! <= 1.16, `band [${r.min}, ${r.max}]`);
    assert.equal(r.quantiles!.length, 17);
    assert.match(describeRule(r), /^ratio: total = \[0\.8\d, 1\.1\d\] \* (tenure \* monthly|monthly \* tenure)/);
    const synth = decodeIndependent(meta, 2000);
    assert.equal(kept(meta, r, synth).share, 1);
    assert.ok(kept(meta, r, decodeIndependent(meta, 2000, false)).share < 0.2);
    // The factors drawn spread over the band, as the real ones do (not all at its median).
    const [t, m, n] = ["total", "monthly", "tenure"].map((c) => synth.columns.indexOf(c));
    const fs = synth.rows.filter((row) => row[t] !== "" && row[m] !== "" && row[n] !== "").map((row) => Number(row[t]) / (Number(row[m]) * Number(row[n])));
    assert.ok(fs.filter((f) => f < 0.95).length > 0.15 * fs.length && fs.filter((f) => f > 1.05).length > 0.15 * fs.length);
  });

  test("a factor that narrows with one part is kept per bin of it: the first month's total is its charge", async () => {
    // Billing accounts: month 1 bills exactly the monthly charge; later totals drift within a band that narrows with tenure.
    const billed = table(["tenure", "monthly", "total"], 3000, (_, rng) => {
      const months = rng.next() < 0.1 ? 1 : 2 + rng.int(71);
      const monthly = 18 + rng.next() * 100;
      const f = months === 1 ? 1 : 1 + (rng.next() - 0.5) * (0.6 / Math.sqrt(months));
      return [months, monthly.toFixed(2), (months * monthly * f).toFixed(2)];
    });
    const meta = await analyzed(billed);
    const [r] = ratios(meta);
    assert.equal(r?.bins?.part, "tenure", JSON.stringify(meta.rules));
    assert.match(describeRule(r), /the factor by \d+ bins of tenure/);
    const synth = decodeIndependent(meta, 3000);
    assert.equal(kept(meta, r, synth).share, 1);
    const [t, m, n] = ["total", "monthly", "tenure"].map((c) => synth.columns.indexOf(c));
    const first = synth.rows.filter((row) => row[n] === "1" && row[m] !== "" && row[t] !== "");
    assert.ok(first.length > 100);
    assert.equal(first.filter((row) => Number(row[t]) === Number(row[m])).length, first.length);
    // A long account's factor stays in its own narrow bin, not the band's width.
    const late = synth.rows.filter((row) => Number(row[n]) >= 60 && row[m] !== "" && row[t] !== "").map((row) => Number(row[t]) / (Number(row[m]) * Number(row[n])));
    assert.ok(late.length > 100 && late.every((f) => f > 0.95 && f < 1.05), `${Math.min(...late)} - ${Math.max(...late)}`);
  });

  test("a band's total is written at the real column's mixture of roundings", async () => {
    // Home sales: volume = sales x median price x a factor; 40% of volumes are reported rounded to 5,000.
    const homes = table(["sales", "median", "volume"], 3000, (_, rng) => {
      const sales = 20 + rng.int(500);
      const median = 100 * (600 + rng.int(1500));
      const v = sales * median * (0.9 + 0.3 * rng.next());
      return [sales, median, rng.next() < 0.4 ? Math.round(v / 5000) * 5000 : Math.round(v)];
    });
    const meta = await analyzed(homes);
    const [r] = ratios(meta);
    assert.ok(r?.min !== undefined, JSON.stringify(meta.rules));
    const roundShare = (t: Table): number => {
      const v = t.rows.map((row) => row[t.columns.indexOf("volume")]).filter((x) => x !== "").map(Number);
      return v.filter((x) => x % 5000 === 0).length / v.length;
    };
    const synth = decodeIndependent(meta, 3000);
    assert.equal(kept(meta, r, synth).share, 1);
    assert.ok(Math.abs(roundShare(synth) - roundShare(homes)) < 0.04, `multiples of 5,000: ${roundShare(synth)} against ${roundShare(homes)}`);
  });

  test("no band where the total is not near the product, or where one part alone decides it", async () => {
    const loose = table(["tenure", "monthly", "total"], 1500, (_, rng) => {
      const months = 1 + rng.int(72);
      const monthly = 18 + rng.next() * 100;
      return [months, monthly.toFixed(2), (months * monthly * (0.3 + 3 * rng.next())).toFixed(2)];
    });
    assert.deepEqual(ratios(await analyzed(loose)), []);
    const onePart = table(["tenure", "monthly", "total"], 1500, (_, rng) => {
      const monthly = 18 + rng.next() * 100;
      // tenure 10 or 11: total / (monthly · tenure) is as narrow as total / monthly, so tenure adds nothing.
      return [10 + rng.int(2), monthly.toFixed(2), (10 * monthly * (0.95 + 0.1 * rng.next())).toFixed(2)];
    });
    // No band of three; total / monthly alone is one of a pair (10 to 11.5), which is what it is.
    assert.deepEqual(ratios(await analyzed(onePart)).filter((r) => r.min !== undefined && r.parts.length === 2), []);
  });

  test("a rate of two columns is a band of the pair (students per teacher from 14 to 26), kept in decoded rows", async () => {
    // School districts: teachers from 5 to 1,500 (one decimal, part-time posts), students 14 to 26 per teacher.
    const schools = table(["district", "students", "teachers", "computers"], 420, (i, rng) => {
      const teachers = Math.round(10 * Math.exp(Math.log(5) + rng.next() * Math.log(300))) / 10;
      const students = Math.round(teachers * (14 + 12 * rng.next()));
      return [`d${i}`, students, teachers.toFixed(1), Math.round(students * (0.02 + 0.3 * rng.next()))];
    });
    const meta = await analyzed(schools);
    const bands = ratios(meta).filter((r) => r.min !== undefined && r.parts.length === 1);
    assert.equal(bands.length, 1, JSON.stringify(meta.rules));
    const r = bands[0];
    assert.deepEqual([r.total, ...r.parts].sort(), ["students", "teachers"]);
    const rate = (t: Table): number[] => {
      const [s, k] = ["students", "teachers"].map((c) => t.columns.indexOf(c));
      return t.rows.filter((row) => row[s] !== "" && Number(row[k]) > 0).map((row) => Number(row[s]) / Number(row[k]));
    };
    const inBand = (t: Table): number => rate(t).filter((x) => x >= 13.5 && x <= 26.5).length / rate(t).length;
    assert.ok(inBand(decodeIndependent(meta, 1000)) >= 0.99, `with the rule ${inBand(decodeIndependent(meta, 1000))}`);
    assert.ok(inBand(decodeIndependent(meta, 1000, false)) < 0.5);
    // Computers per student (0.02 to 0.32: a window of log 16) is no band.
    assert.ok(!ratios(meta).some((x) => [x.total, ...x.parts].includes("computers")));
  });

  test("no band among monthly series that move together (a factor of no unit, 0.0003)", async () => {
    const series = table(["month", "mining", "retail", "trade"], 120, (t) => {
      const [s, c] = [Math.sin(t / 9), Math.cos(t / 7)];
      return [t, (1000 * (1 + 0.002 * t + 0.03 * s)).toFixed(1), (2000 * (1 - 0.001 * t + 0.02 * c)).toFixed(1), (600 * (1 + 0.001 * t + 0.03 * s + 0.02 * c)).toFixed(1)];
    });
    assert.deepEqual(ratios(await analyzed(series)).filter((r) => r.min !== undefined), []);
  });

  test("the checker keeps a row inside the band and breaks one outside; the server names a half-given band", async () => {
    const features = ["total", "monthly", "tenure"];
    const rule: RatioRule = { type: "ratio", total: "total", parts: ["monthly", "tenure"], powers: [1, 1], factor: 1, min: 0.9, max: 1.1, quantiles: [0.9, 1, 1.1], share: 1 };
    const meta = { features, column_stats: Object.fromEntries(features.map((f) => [f, { type: "numerical", decimals: 2 }])) } as unknown as Metadata;
    const check = ruleChecker(rule, meta);
    assert.equal(check(["105.00", "10.00", "10"]), true);
    assert.equal(check(["89.00", "10.00", "10"]), false);
    assert.equal(check(["111.00", "10.00", "10"]), false);
    assert.equal(check(["", "10.00", "10"]), undefined);
    const { checkMetadata } = await import("../src/server/handlers/checkMetadata");
    const md = (r: Record<string, unknown>): Metadata =>
      ({ features, cardinalities: Object.fromEntries(features.map((f) => [f, 1])), empirical_probs: Object.fromEntries(features.map((f) => [f, [1]])), rules: [r] }) as unknown as Metadata;
    assert.doesNotThrow(() => checkMetadata(md(rule as unknown as Record<string, unknown>)));
    const param = (e: unknown) => (e as { param?: string }).param ?? "";
    assert.throws(() => checkMetadata(md({ ...rule, quantiles: undefined })), (e) => param(e).endsWith("rules[0].quantiles"));
    assert.throws(() => checkMetadata(md({ ...rule, quantiles: [0.9, 1.2] })), (e) => param(e).endsWith("rules[0].quantiles"));
    // Bins of one part: the row's bin decides the band.
    const binned: RatioRule = { ...rule, bins: { part: "tenure", edges: [1], quantiles: [[1, 1], [0.9, 1.1]] } };
    const checkBinned = ruleChecker(binned, meta);
    assert.equal(checkBinned(["10.00", "10.00", "1"]), true);
    assert.equal(checkBinned(["10.50", "10.00", "1"]), false);
    assert.equal(checkBinned(["105.00", "10.00", "10"]), true);
    assert.doesNotThrow(() => checkMetadata(md(binned as unknown as Record<string, unknown>)));
    assert.throws(() => checkMetadata(md({ ...binned, bins: { ...binned.bins, part: "total" } })), (e) => param(e).endsWith("rules[0].bins.part"));
    assert.throws(() => checkMetadata(md({ ...binned, bins: { ...binned.bins, quantiles: [[1, 1]] } })), (e) => param(e).endsWith("rules[0].bins.quantiles"));
  });
});
