/**
 * Text in a column's own words (issue 40, "never letter soup"): a text identifier column that no
 * semantic kind fits is written from its own tokens, pairs and triples, each held by >= k rows;
 * titles end where real titles end; codes keep their per-position characters. Tables built here:
 * incident addresses (numbered, intersections, "block of", unit numbers), book titles
 * (test/data), codes like `U8K`/`N12345` (the 51 US state names, a public vocabulary, are
 * test/sdk-public-vocabulary.test.ts's).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import typia from "typia";
import type { CreateModelRequest } from "../src/contract";
import { Decoder, analyzeTable, type Analysis, type Table } from "../src/sdk";
import type { TextIdShape } from "../src/sdk/metadata/identifier";
import { buildTextModel, TextWriter } from "../src/sdk/semantic/text";
import { publicWordKinds, publicWords } from "../src/sdk/semantic/pools";
import { CodeSpace, CodeWriter, positionCharacters } from "../src/sdk/semantic/code";
import { Bloom } from "../src/sdk/semantic/bloom";
import { SemanticGenerator } from "../src/sdk/semantic/semantic-generator";
import { Rng } from "../src/sdk/generate/sfc32";
import type { SemanticShape, TextModel } from "../src/sdk/semantic/types";

const DATA = join(__dirname, "..", "..", "test", "data");

/** A deterministic integer in [0, n) from a label. */
function h(label: string, n: number): number {
  return createHash("sha256").update(label).digest().readUInt32BE(0) % n;
}

/** Tokens as the issue defines them, written apart from the SDK: letter/digit runs and single other characters. */
function toks(v: string): string[] {
  return v.match(/[\p{L}\p{M}\p{N}]+|\S/gu) ?? [];
}

/** Whether token `t` is released form `w` (a shape: each `#` one digit). */
function fits(t: string, w: string, shaped: boolean): boolean {
  if (!shaped) return t === w;
  const re = new RegExp("^" + w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/#/g, "[0-9]") + "$");
  return re.test(t);
}

function table(name: string, values: string[]): Table {
  return { columns: [name, "group"], rows: values.map((v, i) => [v, String(i % 3)]) };
}

function semanticOf(a: Analysis, col: string): SemanticShape | undefined {
  const st = a.metadata.column_stats![col];
  assert.equal(st.type, "id", `${col} is an id column`);
  return (st.id_shape as TextIdShape).semantic as SemanticShape | undefined;
}

function sample(a: Analysis, col: string, n: number, seed: number): string[] {
  const codes: Record<string, number[]> = {};
  for (const f of a.metadata.features) codes[f] = new Array(n).fill(0);
  const t = new Decoder(a.metadata).decode(codes, seed, { rules: false });
  const j = t.columns.indexOf(col);
  return t.rows.map((r) => r[j]);
}

/**
 * Every released token, pair and triple of `m` is held by >= k of the real `values` (counted
 * here from the values, not from the model's own counts); the start and end of a value count as
 * boundary tokens.
 */
function assertKAnonymous(m: TextModel, values: string[]): void {
  const n = m.words.length;
  const shaped = new Set(m.shaped ?? []);
  const seqs = values.map(toks);
  // Index n: the start or end of a value; n + 1: any number (a token of digits).
  const at = (s: string[], j: number, w: number): boolean =>
    w === n ? j === -1 || j === s.length : j >= 0 && j < s.length && (w === n + 1 ? /^[0-9]+$/.test(s[j]) : fits(s[j], m.words[w], shaped.has(w)));
  const rows = (test: (s: string[]) => boolean): number => seqs.filter(test).length;
  m.words.forEach((_, w) => {
    const r = rows((s) => s.some((_, j) => at(s, j, w)));
    assert.ok(r >= m.k, `token ${JSON.stringify(m.words[w])}: ${r} rows`);
  });
  for (const [a, b] of m.bigrams) {
    const r = rows((s) => s.some((_, j) => at(s, j, a) && at(s, j + 1, b)));
    assert.ok(r >= m.k, `pair ${m.words[a]} ${m.words[b]}: ${r} rows`);
  }
  for (const [a, b, c] of m.trigrams ?? []) {
    const r = rows((s) => {
      for (let j = 0; j < s.length; j++) if (at(s, j - 1, a) && at(s, j, b) && at(s, j + 1, c)) return true;
      return false;
    });
    assert.ok(r >= m.k, `triple ${[a, b, c].map((x) => (x === n ? "|" : x === n + 1 ? "<number>" : m.words[x])).join(" ")}: ${r} rows`);
  }
  for (const [len, r] of Object.entries(m.lengths)) assert.ok(r >= m.k && rows((s) => s.length === Number(len)) >= m.k);
}

/** The tokens of `v` that are neither a released token nor a number of a released digit shape ("letter soup"). */
function unreleased(m: TextModel, v: string): string[] {
  const shaped = new Set(m.shaped ?? []);
  const ordinal = (t: string): string => t.replace(/^([0-9]+)(st|nd|rd|th)$/i, (_, d: string, s: string) => d + (s === s.toUpperCase() ? "TH" : "th"));
  return toks(v).filter((t) => !m.words.some((w, i) => fits(t, w, shaped.has(i)) || (shaped.has(i) && fits(ordinal(t), ordinal(w), true))));
}

// Incident addresses: numbered with a direction, intersections, "block of", unit numbers.
const STREETS = ["Main", "Oak", "College", "Pine", "Maple", "Cedar", "Elm", "Lake", "Hill", "Park", "Washington", "Lincoln", "6th", "5th", "3rd", "12th", "1st", "22nd"];
const SUFFIX = ["St", "Ave", "Blvd", "Rd"];
const DIRS = ["N", "S", "E", "W"];
const ADDRESSES = [
  ...new Set(
    Array.from({ length: 420 }, (_, i) => {
      const s = STREETS[h(`s${i}`, STREETS.length)];
      const t = STREETS[h(`t${i}`, STREETS.length)];
      const suf = SUFFIX[h(`x${i}`, SUFFIX.length)];
      const num = String(10 ** (1 + h(`d${i}`, 3)) + h(`n${i}`, 9 * 10 ** (1 + h(`d${i}`, 3))));
      switch (i % 5) {
        case 0:
          return `${num} ${DIRS[h(`r${i}`, 4)]}. ${s} ${suf}.`;
        case 1:
          return s === t ? `${s} & Park streets` : `${s} & ${t} streets`;
        case 2:
          return `${1 + h(`b${i}`, 49)}00 block of ${s} ${suf}`;
        case 3:
          return `${num} ${s} ${suf}. Apt ${1 + h(`u${i}`, 40)}`;
        default:
          return `${num} ${s} ${suf}. #${1 + h(`u${i}`, 400)}`;
      }
    }),
  ),
].slice(0, 360);

const TITLES = readFileSync(join(DATA, "book-titles.txt"), "utf8").split("\n").map((s) => s.trim()).filter(Boolean);

test("incident addresses (numbered, intersections, block of, units): written in released tokens, every token/pair/triple held by >= k rows, forms kept, numbers keep their digit counts", async () => {
  for (const k of [2, 5]) {
    const a = await analyzeTable(table("incident_location", ADDRESSES), { rareThreshold: k });
    const sem = semanticOf(a, "incident_location")!;
    assert.equal(sem?.kind, "text", "no recognised kind: the column's own words");
    const m = sem.text!;
    assert.ok(m.trigrams && m.trigrams.length > 0);
    assertKAnonymous(m, ADDRESSES);
    assert.ok(typia.createValidateEquals<CreateModelRequest>()({ metadata: a.metadata }).success, "the server accepts the model");
    const out = sample(a, "incident_location", 300, 7);
    const soup = out.filter((v) => unreleased(m, v).length > 0);
    assert.deepEqual(soup.slice(0, 5), [], `k=${k}: tokens never released`);
    const real = new Set(ADDRESSES.map((v) => v.toLowerCase()));
    assert.ok(out.filter((v) => real.has(v.toLowerCase())).length <= 3, "<= 1% equal a real address");
    assert.equal(new Set(out).size, out.length, "distinct within the sample");
    const share = (re: RegExp): number => out.filter((v) => re.test(v)).length / out.length;
    const shares: string[] = [];
    for (const [re, what] of [[/[\p{L}\p{N}]+ & [\p{L}\p{N}]+ streets$/u, "intersections"], [/^[0-9]+ block of \S+ (St|Ave|Blvd|Rd)\.?$/, "blocks"], [/\. (Apt [0-9]+|#[0-9]+)$/, "units"], [/^[0-9]+ [NSEW]\. \S+ (St|Ave|Blvd|Rd)\.$/, "numbered with a direction"]] as const) {
      const s = share(re);
      shares.push(`${what} ${(100 * s).toFixed(1)}%`);
      // At k = 5 this small table releases few triples, and the long forms (units) fade.
      if (k === 2) assert.ok(s > 0.03, `${what}: ${(100 * s).toFixed(1)}% of fresh values (real 20%)`);
    }
    console.log(`addresses k=${k}, forms (real 20% each): ${shares.join(", ")}`);
    // A value ending on a mark ends on a (word, mark) that ends >= k real values (`St.`, never `2107 W.`).
    const realEnds = new Map<string, number>();
    for (const s of ADDRESSES.map(toks)) realEnds.set(s.slice(-2).join(" "), (realEnds.get(s.slice(-2).join(" ")) ?? 0) + 1);
    assert.deepEqual(out.filter((v) => /[^\p{L}\p{N}]$/u.test(v) && (realEnds.get(toks(v).slice(-2).join(" ")) ?? 0) < k).slice(0, 5), []);
    // House numbers: 2 to 4 digits as in the real column, the first never 0; ordinals read right.
    const houses = out.map((v) => /^([0-9]+) /.exec(v)?.[1]).filter((x): x is string => x !== undefined && !/ block /.test(x));
    assert.ok(houses.every((x) => x.length >= 2 && x.length <= 4 && x[0] !== "0"), houses.filter((x) => x.length < 2 || x.length > 4).join(" "));
    const ords = out.flatMap((v) => v.match(/\b[0-9]+(st|nd|rd|th)\b/g) ?? []);
    const right = (o: string): boolean => {
      const d = Number(o.slice(0, -2));
      const s = d % 100 >= 11 && d % 100 <= 13 ? "th" : (["th", "st", "nd", "rd"][d % 10] ?? "th");
      return o.endsWith(s);
    };
    assert.deepEqual(ords.filter((o) => !right(o)), []);
    console.log(`addresses k=${k}: ${m.words.length} tokens, ${m.bigrams.length} pairs, ${m.trigrams!.length} triples; e.g. ${out.slice(0, 6).join(" | ")}`);
  }
});

test("titles: no lone article, first and last tokens where >= k real titles start and end, lengths like the real ones, nothing rarer than k", async () => {
  const k = 2;
  const a = await analyzeTable(table("title", TITLES), { rareThreshold: k });
  const sem = semanticOf(a, "title")!;
  assert.equal(sem.kind, "title");
  const m = sem.text!;
  assertKAnonymous(m, TITLES);
  // 299 titles share few words: the model holds a few dozen new titles, and an identifier column's
  // values are distinct, so later rows take a public surname for one word (`The Return of the
  // Boyle`), checked apart; never a number (`The Return of the Moon 2`).
  const written = sample(a, "title", 1000, 5);
  const surnames = new Set([...publicWords().capitalized, ...publicWords().lower, ...Object.values(publicWordKinds().fill).flat()]);
  // A public word the model holds too (`White`) is respelled where a pair beside it is not released.
  const pairs = new Set(m.bigrams.map(([x, y]) => `${m.words[x]} ${m.words[y]}`));
  const respelled = written.filter((v) => {
    const ts = toks(v);
    return ts.some((t, j) => surnames.has(t) && (!m.words.includes(t) || (j > 0 && !pairs.has(`${ts[j - 1]} ${t}`)) || (j + 1 < ts.length && !pairs.has(`${t} ${ts[j + 1]}`))));
  });
  const out = written.filter((v) => !respelled.includes(v));
  assert.equal(new Set(written).size, written.length, "distinct within the sample");
  assert.deepEqual(written.filter((v) => / [0-9]+$/.test(v) && !TITLES.some((t) => / [0-9]+$/.test(t))), [], "never numbered");
  console.log(`titles: ${respelled.length} of ${written.length} respelled; ${out.length} from the model alone`);
  assert.ok(out.length > 20);
  assert.deepEqual(out.filter((v) => unreleased(m, v).length > 0).slice(0, 5), []);
  const count = (pick: (s: string[]) => string): Map<string, number> => {
    const c = new Map<string, number>();
    for (const s of TITLES.map(toks)) c.set(pick(s), (c.get(pick(s)) ?? 0) + 1);
    return c;
  };
  const starts = count((s) => s[0]);
  const ends = count((s) => s[s.length - 1]);
  for (const v of out) {
    const s = toks(v);
    assert.ok(!/^(the|a|an|and|of|in|to)$/i.test(v), `lone article: ${v}`);
    assert.ok((starts.get(s[0]) ?? 0) >= k, `${v}: starts where fewer than k titles start`);
    assert.ok((ends.get(s[s.length - 1]) ?? 0) >= k, `${v}: ends where fewer than k titles end`);
    assert.ok(!/ (and|the|The|of|a|A)$/.test(v), `${v} ends on a function word`);
  }
  // Short titles are mostly single rare words (`Emma`), never released: fresh ones run longer.
  const longest = Math.max(...Object.keys(m.lengths).map(Number));
  assert.ok(out.every((v) => toks(v).length <= longest), "no title longer than the longest released length");
  const mean = (xs: string[]): number => xs.reduce((t, v) => t + toks(v).length, 0) / xs.length;
  console.log(`titles: mean tokens ${mean(out).toFixed(2)}, real ${mean(TITLES).toFixed(2)}`);
  assert.ok(written.filter((v) => /^\p{Lu}/u.test(v)).length >= 990, "titles start with a capital");
  console.log(`titles: e.g. ${out.slice(0, 8).join(" | ")}`);
});

test("codes without spaces of two forms (U8K, N12345): each form keeps its own per-position characters; one form keeps the plain shape", async () => {
  const L = "ABCDEFGHJKLMNPRSTUVWXYZ";
  const faa = Array.from({ length: 150 }, (_, i) => `${L[h(`a${i}`, L.length)]}${h(`b${i}`, 10)}${L[h(`c${i}`, L.length)]}`);
  const tails = Array.from({ length: 150 }, (_, i) => `N${10000 + h(`t${i}`, 90000)}`);
  const values = [...new Set([...faa, ...tails])];
  const a = await analyzeTable(table("tail_or_code", values));
  const sem = semanticOf(a, "tail_or_code")!;
  assert.equal(sem?.kind, "code");
  // The letters the column writes (FAA codes skip I, O and Q), a tail number's first digit 1-9.
  assert.deepEqual(sem.codes!.map((p) => p.positions.join(" ")), ["N 123456789 0-9 0-9 0-9 0-9", `${L} 0-9 ${L}`]);
  assert.ok(sem.codes!.every((p) => p.rows >= 2));
  assert.ok(typia.createValidateEquals<CreateModelRequest>()({ metadata: a.metadata }).success, "the server accepts the patterns");
  const cls = (v: string): string => v.replace(/[A-Z]/g, "A").replace(/[0-9]/g, "9");
  const real = new Set(values.map(cls));
  const out = sample(a, "tail_or_code", 500, 3);
  assert.deepEqual(out.filter((v) => !real.has(cls(v))).slice(0, 5), [], `real classes ${[...real].join(", ")}`);
  assert.deepEqual(out.filter((v) => /[IOQ]|^N0[0-9]{4}$/.test(v)).slice(0, 5), [], "no letter or first digit the column never writes");
  assert.equal(new Set(out).size, out.length, "distinct within the sample");
  const realSet = new Set(values);
  assert.ok(out.filter((v) => realSet.has(v)).length <= 5, "<= 1% equal a real code");
  assert.ok(out.filter((v) => v.startsWith("N")).length > 150, "both forms written, about half each");
  console.log(`codes: e.g. ${out.slice(0, 8).join(" | ")}`);
  // One form only (ORD-00001 ...): the plain per-position shape, no semantic kind.
  const one = await analyzeTable(table("order_ref", Array.from({ length: 300 }, (_, i) => `ORD-${String(i).padStart(5, "0")}`)));
  assert.equal(semanticOf(one, "order_ref"), undefined);
});

test("short codes are drawn without replacement: a sample three times the table, in batches, repeats no code and writes no real one", async () => {
  // Airport-like codes: 3-letter, letter-digit-digit (space 2,600) and digit-letter (space 260, about 180 real).
  const C = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  const forms = [
    ...Array.from({ length: 900 }, (_, i) => `${C[h(`p${i}`, 26)]}${C[h(`q${i}`, 26)]}${C[h(`r${i}`, 26)]}`),
    ...Array.from({ length: 900 }, (_, i) => `${C[h(`s${i}`, 26)]}${h(`t${i}`, 100)}`.padEnd(3, "0")),
    ...Array.from({ length: 300 }, (_, i) => `${h(`u${i}`, 10)}${C[h(`v${i}`, 26)]}`),
  ];
  const values = [...new Set(forms)];
  const a = await analyzeTable(table("iata", values));
  const sem = semanticOf(a, "iata")!;
  assert.equal(sem?.kind, "code");
  const n = values.length;
  const out: string[] = [];
  for (let b = 0; b < 3; b++) {
    const codes: Record<string, number[]> = {};
    for (const f of a.metadata.features) codes[f] = new Array(n).fill(0);
    const t = new Decoder(a.metadata).decode(codes, 11 + b, { rules: false, rowOffset: b * n, idKey: 5 });
    out.push(...t.rows.map((r) => r[t.columns.indexOf("iata")]));
  }
  const cls = (v: string): string => v.replace(/[A-Z]/g, "A").replace(/[0-9]/g, "9");
  const real = new Set(values);
  assert.equal(new Set(out).size, out.length, "no code repeats across the batches");
  assert.deepEqual(out.filter((v) => real.has(v)).slice(0, 5), [], "no real code");
  assert.deepEqual(out.filter((v) => !["AAA", "A99", "9A"].includes(cls(v))).slice(0, 5), [], "the column's forms only");
  // The digit-letter form has fewer free codes than rows asked of it: the rest go to another form.
  const short = out.filter((v) => cls(v) === "9A").length;
  assert.ok(short > 0 && short <= 260 - values.filter((v) => cls(v) === "9A").length, `${short} digit-letter codes`);
  const share = (form: string, vs: string[]): number => vs.filter((v) => cls(v) === form).length / vs.length;
  assert.ok(Math.abs(share("A99", out.slice(0, n)) - share("A99", values)) < 0.01, "the first table's worth of rows keeps the forms' shares");
});

test("a code writer skips the codes of its own filter: the same patterns with another table's values", () => {
  const patterns = [{ positions: ["A-Z", "0-9"], rows: 5 }, { positions: ["0-9", "0-9"], rows: 5 }];
  const C = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  const write = (bloom: Bloom): string[] => Array.from({ length: 100 }, (_, i) => new CodeWriter(new CodeSpace(patterns, bloom), 9).value(i));
  const first = Bloom.of(Array.from({ length: 130 }, (_, i) => `${C[i % 26]}${Math.floor(i / 26)}`));
  const second = Bloom.of(Array.from({ length: 130 }, (_, i) => `${C[i % 26]}${9 - Math.floor(i / 26)}`));
  assert.deepEqual(write(first).filter((v) => first.has(v)), []);
  assert.deepEqual(write(second).filter((v) => second.has(v)), [], "not the first filter's free codes");
  // Two models' shapes holding the same pattern list: each generator reads its own filter.
  const shape = (bloom: Bloom): SemanticShape => ({ kind: "code", codes: patterns, bloom: bloom.toStats() });
  const viaShape = (bloom: Bloom): string[] => {
    const g = new SemanticGenerator(shape(bloom), 9);
    return Array.from({ length: 100 }, (_, i) => g.value(i));
  };
  assert.deepEqual(viaShape(first).filter((v) => first.has(v)), []);
  assert.deepEqual(viaShape(second).filter((v) => second.has(v)), [], "not the first shape's free codes");
  const out = write(second);
  assert.equal(new Set(out).size, out.length);
});

test("codes keep the characters the column writes at each position: hex colours only 0-9 and a-f, a shift only AM or PM", async () => {
  // Light hex colours of many forms (digits and letters in any place): no letter past f, and no
  // first digit below 8, which no colour of any form has (each form alone has too few rows).
  const hex = Array.from({ length: 600 }, (_, i) => (0x800000 + h(`hex${i}`, 0x800000)).toString(16));
  const a = await analyzeTable(table("hex", [...new Set(hex)]));
  assert.equal(semanticOf(a, "hex")?.kind, "code");
  const colours = sample(a, "hex", 500, 3);
  assert.deepEqual(colours.filter((v) => !/^[0-9a-f]{6}$/.test(v)).slice(0, 5), [], "every fresh colour is hex");
  assert.deepEqual(colours.filter((v) => /^[0-7]/.test(v)).slice(0, 5), [], "every fresh colour is light");
  assert.ok(colours.some((v) => /[a-f]/.test(v)) && colours.some((v) => /[0-9]/.test(v)), "letters and digits both written");
  // Squirrel-census ids: hectare (1-42, row A-I), shift, month and day, number in the hectare.
  const ids = Array.from({ length: 800 }, (_, i) => {
    const shift = h(`s${i}`, 2) ? "PM" : "AM";
    const day = String(6 + h(`d${i}`, 15)).padStart(2, "0");
    return `${1 + h(`x${i}`, 42)}${"ABCDEFGHI"[h(`y${i}`, 9)]}-${shift}-10${day}-${String(1 + h(`n${i}`, 20)).padStart(2, "0")}`;
  });
  const b = await analyzeTable(table("squirrel_id", [...new Set(ids)]));
  assert.equal(semanticOf(b, "squirrel_id")?.kind, "code", "two forms apart: one hectare digit or two");
  const out = sample(b, "squirrel_id", 500, 5);
  const form = /^[1-9]?[0-9][A-I]-(AM|PM)-10[0-2][0-9]-[0-2][0-9]$/;
  assert.deepEqual(out.filter((v) => !form.test(v)).slice(0, 5), [], "each part in its place, of its own characters");
  assert.ok(out.some((v) => /^[0-9][A-I]/.test(v)) && out.some((v) => /^[0-9]{2}[A-I]/.test(v)), "both forms written");
  assert.ok(out.filter((v) => ids.includes(v)).length <= 5, "<= 1% equal a real id");
  console.log(`codes: e.g. ${colours.slice(0, 4).join(" | ")} | ${out.slice(0, 4).join(" | ")}`);
});

test("a code position's characters: its own when each is seen often enough, else those of the same place in codes of its length, else the column's, else the class; rare ones left out", () => {
  const rows = (spec: string, each: number): Map<string, number> => new Map(Array.from(spec).map((c) => [c, each]));
  assert.equal(positionCharacters("A", [rows("AP", 50), rows("AMP", 500)], 2), "AP");
  assert.equal(positionCharacters("a", [rows("abcdef", 5), rows("abcdef", 40)], 2), "a-f", "too few rows for the position: the next level's");
  assert.equal(positionCharacters("9", [rows("3456789", 2), rows("3456789", 20), rows("0123456789", 90)], 2), "3456789", "the same place in codes of its length before the column");
  assert.equal(positionCharacters("9", [rows("0123456789", 3), rows("0123456789", 3)], 2), "0-9", "too few rows anywhere: the class");
  assert.equal(positionCharacters("A", [rows("ABC", 2), rows("ABC", 2)], 2), "A-Z");
  const withRare = new Map([...rows("012", 40), ["7", 1]]);
  assert.equal(positionCharacters("9", [withRare, withRare], 2), "012", "a digit of fewer than k rows is not released");
  assert.equal(positionCharacters("9", [rows("0123456789", 20), new Map()], 2), "0-9", "a full class is written as its range");
  assert.equal(positionCharacters("A", [rows("0123456789", 20), rows("XY", 40)], 2), "XY", "characters of other classes do not count");
});

test("token model: digit shapes generalise from the right until k rows share them; a token of fewer than k rows is never released", () => {
  const m = buildTextModel(["Toy Story (1995)", "Heat (1995)", "Casino (1995)", "Fargo (1996)", "Big (1988)", "Jaws (1975)", "Alien (1979)"], [1, 1, 1, 1, 1, 1, 1], 2)!;
  const shaped = (m.shaped ?? []).map((i) => m.words[i]).sort();
  assert.ok(m.words.includes("1995"), "a year held by 3 rows is released as it is");
  assert.deepEqual(shaped, ["197#", "19##"].sort(), `shapes ${shaped.join(", ")}`);
  for (const w of ["Toy", "Story", "Heat", "1996", "1988"]) assert.ok(!m.words.includes(w), `${w} is rare`);
  // Index n + 1: any number (`<number> ) |`: 7 rows end on a number and `)`).
  const n = m.words.length;
  assert.deepEqual(m.trigrams!.map(([a, b, c]) => [a, b, c].map((x) => (x === n ? "|" : x === n + 1 ? "<number>" : m.words[x])).join(" ")).sort(), ["( 1995 )", "( 197# )", "( 19## )", "1995 ) |", "197# ) |", "19## ) |", "<number> ) |", "( <number> )"].sort());
  // No released path from a start to an end and no word: nothing this model could write.
  assert.equal(new TextWriter(m).writes(), false);
  assert.equal(buildTextModel(["alpha beta", "gamma delta"], [1, 1], 2), undefined);
});

test("token model: a word written without spaces (mercedes-benz, rx-4) is one token when k rows hold it or its digit form; rarer ones stay split", () => {
  const values = ["mercedes-benz 280s", "mercedes-benz 240d", "mercedes benz 300d", "mazda rx-4", "mazda rx-7 gs", "mazda glc", "mazda glc deluxe", "citroen ds-21 pallas", "ford pinto", "ford pinto wagon"];
  const m = buildTextModel(values, values.map(() => 1), 2)!;
  const shaped = new Set((m.shaped ?? []).map((i) => m.words[i]));
  assert.ok(m.words.includes("mercedes-benz"), `tokens ${m.words.join(" ")}`);
  assert.ok(shaped.has("rx-#"), "rx-4 and rx-7 share the form rx-#");
  for (const w of ["rx", "ds-21", "ds-2#", "ds-##", "ds"]) assert.ok(!m.words.includes(w) && !shaped.has(w), `${w} is no token`);
  assert.ok(!m.words.includes("benz"), "benz apart from mercedes-benz is held by 1 row");
  const w = new TextWriter(m);
  for (let s = 0; s < 300; s++) {
    const v = w.write(new Rng(s), s % 2 === 1);
    for (const word of v.split(" ")) if (word.includes("-")) assert.match(word, /^(mercedes-benz|rx-[0-9])$/, `${v}: a word made of two words' parts`);
  }
});

test("walks: the second word is one the first word's released triples continue with", () => {
  // `Love` starts 4 titles (5 rows, 2 `Love Actually`) and is followed by `Again` inside 2: Katz
  // back-off from the start wrote `Love Again`, a start no real title has.
  const values = ["Love Actually", "Love Story", "Love Me Tender", "In Love Again", "Crazy Love Again", "Crazy Heart", "In Time"];
  const m = buildTextModel(values, [2, 1, 1, 1, 1, 2, 2], 2)!;
  const starts = new Set(values.map((v) => v.split(" ").slice(0, 2).join(" ")));
  const w = new TextWriter(m);
  for (let s = 0; s < 400; s++) {
    const v = w.write(new Rng(s), s % 2 === 1);
    if (v.includes(" ")) assert.ok(starts.has(v.split(" ").slice(0, 2).join(" ")), `${v}: a start no real title has`);
  }
});

test("models without trigrams (metadata written before the token model) are written as before: words joined by spaces", () => {
  const old: TextModel = { k: 2, words: ["The", "Red", "House"], first: [3, 0, 0], inner: [0, 2, 3], last: [0, 0, 3], bigrams: [[0, 1, 2], [1, 2, 2]], lengths: { "3": 3 } };
  const w = new TextWriter(old);
  // A value ends rather than write a word twice (`The House House`).
  for (let s = 0; s < 20; s++) assert.match(w.write(new Rng(s)), /^The (Red )?House$/);
});

test("a thin title model (29 site names, few released words) writes no word twice in a row and starts no value with `of`", () => {
  // The model of plotly's nuclear waste sites (`"Albany, Oregon, FUSRAP Site"`, `Acid/Pueblo Canyon`) at k = 2.
  const thin: TextModel = {
    k: 2,
    words: ["Site", '"', ",", "FUSRAP", ".", "Co", "New", "and", "Baker", "Canyon", "Mexico", "North", "Steel", "University", "of"],
    first: [0, 7, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0],
    inner: [11, 7, 7, 7, 4, 3, 3, 3, 0, 2, 2, 2, 2, 0, 2],
    last: [5, 7, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    bigrams: [[3, 0, 7], [0, 1, 6, 1], [2, 3, 4], [5, 4, 3, 1], [2, 6, 2], [6, 10, 2], [10, 2, 2, 1], [13, 14, 2]],
    trigrams: [[0, 1, 15, 6], [2, 3, 0, 4], [3, 0, 1, 4], [3, 0, 15, 3], [2, 6, 10, 2], [5, 4, 15, 2], [6, 10, 2, 2], [10, 2, 3, 2]],
    lengths: { "2": 4, "3": 7, "4": 8, "5": 2, "9": 3, "10": 3 },
  };
  const w = new TextWriter(thin);
  const values = Array.from({ length: 300 }, (_, s) => w.write(new Rng(s)));
  const twice = values.filter((v) => v.split(/[\s"]+/).some((x, i, a) => i > 0 && x !== "" && x === a[i - 1]));
  assert.deepEqual(twice.slice(0, 3), [], `${twice.length} of 300 write a word twice in a row`);
  const lower = values.filter((v) => /^["\s]*\p{Ll}/u.test(v));
  assert.deepEqual(lower.slice(0, 3), [], `${lower.length} of 300 start with a lower-case word`);
});

test("a walk writes a word of four letters or more once per value where the model offers another way on (`SOCIAL AND SOCIAL POLICY`)", () => {
  // Majors as college-majors/recent-grads names them: `HEALTH AND COMPUTER SCIENCE`, `ART STUDIES`.
  const F = ["HEALTH", "ART", "COMPUTER", "SOCIAL", "INDUSTRIAL", "PUBLIC"];
  const S = ["SCIENCE", "ADMINISTRATION", "STUDIES", "POLICY"];
  const values: string[] = [];
  for (let i = 0; i < F.length; i++) for (let j = 0; j < F.length; j++) if (i !== j && (i + j) % 2 === 0) values.push(`${F[i]} AND ${F[j]} ${S[(i + 2 * j) % S.length]}`);
  for (let i = 0; i < F.length; i++) for (let s = 0; s < S.length; s++) if ((i + s) % 2 === 1) values.push(`${F[i]} ${S[s]}`);
  const w = new TextWriter(buildTextModel(values, values.map(() => 1), 2)!);
  const written = Array.from({ length: 300 }, (_, s) => w.write(new Rng(s), s % 2 === 1));
  const twice = written.filter((v) => {
    const words = v.split(/\s+/).filter((x) => x.length >= 4);
    return new Set(words).size !== words.length;
  });
  assert.deepEqual(twice.slice(0, 3), [], `${twice.length} of 300 write a word twice`);
  assert.ok(new Set(written).size >= 10, `${new Set(written).size} distinct values`);
});

/** faker's English surnames and nouns, read apart from the SDK: the public words a word class is filled with. */
function publicWordSet(): Set<string> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const en = require("@faker-js/faker").en as { person: { last_name: Record<string, string[]>; first_name: Record<string, string[]> }; word: { noun: string[] }; location: { city_name: string[]; state: string[] } };
  // Surnames, nouns, and the given names and US places a word of that kind is written as.
  const kinds = [...Object.values(en.person.first_name).flat(), ...en.location.city_name, ...en.location.state];
  return new Set([...Object.values(en.person.last_name).flat(), ...en.word.noun, ...kinds].map((w) => w.toLowerCase()));
}

test("a column too thin for its own words (63 neighborhoods, k = 5): rare words become word classes written as public words, never letter soup", async () => {
  const common = ["Koreatown", "Compton", "Vermont Square", "Hollywood"];
  const rare = ["Westlake", "Chinatown", "Pico-Union", "Harvard Park", "Exposition Park", "Hyde Park", "Leimert Park", "Watts", "Florence", "Lynwood", "Carson", "Pomona", "Long Beach", "Athens", "Van Nuys", "Mid-City", "Echo Park", "Silver Lake", "Boyle Heights", "Glassell Park", "Sun Valley", "Arleta", "Gardena", "Hawthorne", "Inglewood", "Lakewood", "Paramount", "Downey", "Bell", "Cudahy", "Norwalk", "Whittier", "Lennox", "Del Rey", "Venice", "Palms", "Sawtelle", "Rancho Park", "Encino", "Reseda", "Tujunga", "Sunland", "Pacoima", "Wilmington", "Harbor City", "San Pedro", "Eagle Rock"];
  // 4 rows each at most: no name reaches k, so the column is written fresh (an identifier).
  const values = [...common.flatMap((v) => [v, v, v, v]), ...rare];
  assert.equal(values.length, 63);
  const a = await analyzeTable(table("neighborhood", values), { rareThreshold: 5 });
  const sem = semanticOf(a, "neighborhood")!;
  assert.equal(sem?.kind, "text");
  const released = new Set(sem.text!.words.map((w) => w.toLowerCase()));
  const words = publicWordSet();
  const out = sample(a, "neighborhood", 300, 2);
  // Every run of letters is a released word of >= 5 rows or a public word: nothing invented.
  const invented = out.flatMap((v) => (v.match(/\p{L}+/gu) ?? []).filter((w) => !released.has(w.toLowerCase()) && !words.has(w.toLowerCase())));
  assert.deepEqual(invented.slice(0, 5), [], out.slice(0, 10).join(" | "));
  assert.ok(out.every((v) => /^\p{Lu}/u.test(v)), "capitalised as the real names are");
  assert.ok(new Set(out).size > 50, "many values, not a handful");
  // The real rare names never appear as word classes do not hold them.
  assert.deepEqual(out.filter((v) => rare.includes(v) && !words.has(v.toLowerCase())), []);
});

test("names in the FEC's form (SMITH, JESSE TREMAIN), each once: written as upper-case words in the same form", async () => {
  const first = ["JESSE", "MARIA", "JOHN", "LINDA", "ROBERT", "ANA", "DAVID", "SUSAN", "JAMES", "KAREN", "PAUL", "NANCY", "MARK", "LISA", "GARY", "RUTH"];
  const last = ["SMITH", "GARCIA", "JOHNSON", "BROWN", "DAVIS", "MILLER", "WILSON", "MOORE", "TAYLOR", "ANDERSON", "THOMAS", "JACKSON", "WHITE", "HARRIS", "MARTIN", "THOMPSON", "YOUNG", "KING", "WRIGHT", "LOPEZ"];
  const names = Array.from({ length: 58 }, (_, i) => `${last[i % last.length]}${i >= 20 ? String.fromCharCode(65 + (i % 26)) : ""}, ${first[(i * 7) % first.length]}${i % 3 === 0 ? ` ${first[(i * 5 + 3) % first.length]}` : ""}`);
  const a = await analyzeTable(table("candidate_name", names), { rareThreshold: 5 });
  const out = sample(a, "candidate_name", 200, 3);
  const form = /^[A-Z]+(?: [A-Z]+)*, [A-Z]+(?: [A-Z]+)*$/;
  assert.deepEqual(out.filter((v) => !form.test(v)).slice(0, 5), []);
  assert.ok(new Set(out).size > 100);
});
