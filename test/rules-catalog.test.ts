/**
 * Issue 40, a catalog inside a flat table: a key column that decides several columns (a ratings
 * table joined with its movies: movieId -> title, year, genres) is found on the raw rows, printed
 * as a rule, and kept by every decoded row: a row names a released entry (one seen in >= k rows)
 * with all its attributes, a rare key is written as a released entry, never as an invented key
 * beside real attributes. The synthetic rows come from a generator that learned nothing (each
 * column's code drawn from its 1-way marginal), so the catalog holds only because the decoder
 * keeps it. Public tables: income.json (a state decides its FIPS id and total); a key of single
 * rows (gapminder-health-income: each country once) has no catalog.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { analyzeTable, Decoder, DataError, Rng, describeRule, type CatalogRule, type Metadata, type Table } from "../src/sdk";
import { ruleShares } from "../src/sdk/rules/check";
import { RuleEnforcer } from "../src/sdk/rules/enforce";
import { rowCells } from "../src/sdk/generate/batch";
import { catalogCombinations } from "../src/model/sampling/rule-repair";
import { recordsTable, vegaDataDir } from "../bench/public-tables";
import { catalogs as catalogRealism } from "../bench/realism";
import { scanTable } from "../src/sdk/metadata/table-scan";
import { readFileSync } from "node:fs";
import { independentCodes, catalogOf, cells, table, analyzed, decodeIndependent } from "./rules-fixtures";

/** The movies of the ratings table: movieId, title, year, genres. */
const MOVIES: [string, string, string, string][] = [
  ["1", "Toy Story", "1995", "Adventure|Animation|Children"],
  ["2", "Jumanji", "1995", "Adventure|Children|Fantasy"],
  ["3", "Heat", "1995", "Action|Crime|Thriller"],
  ["4", "Casino", "1995", "Crime|Drama"],
  ["5", "Fargo", "1996", "Comedy|Crime|Drama|Thriller"],
  ["6", "Twister", "1996", "Action|Adventure|Romance|Thriller"],
  ["7", "Scream", "1996", "Comedy|Horror|Mystery|Thriller"],
  ["8", "Titanic", "1997", "Drama|Romance"],
  ["9", "Gattaca", "1997", "Drama|Sci-Fi|Thriller"],
  ["10", "Contact", "1997", "Drama|Sci-Fi"],
  // Rated once each: rarer than k = 5, so no entry.
  ["11", "Kazaam", "1996", "Children|Comedy|Fantasy"],
  ["12", "Spawn", "1997", "Action|Adventure|Sci-Fi|Thriller"],
  ["13", "Bio-Dome", "1996", "Comedy"],
];
const K = 5;

/** Ratings joined with their movies: movies 1..10 rated 12 to 30 times, 11..13 once. */
function ratings(): Table {
  const rng = new Rng(7);
  const rows: string[][] = [];
  MOVIES.forEach((m, i) => {
    const times = i < 10 ? 12 + 2 * i : 1;
    for (let t = 0; t < times; t++) rows.push([String(1 + Math.floor(rng.next() * 40)), ...m, String(1 + Math.floor(rng.next() * 10) / 2)]);
  });
  return { columns: ["userId", "movieId", "title", "year", "genres", "rating"], rows };
}

describe("a catalog inside a flat table (ratings joined with their movies)", () => {
  test("movieId decides title, year and genres: one entry per movie seen in >= k rows, printed by synthd fit", async () => {
    const { metadata } = await analyzeTable(ratings(), { rareThreshold: K });
    const rule = catalogOf(metadata);
    assert.deepEqual(rule.columns, ["movieId", "title", "year", "genres"]);
    assert.equal(rule.key, "movieId");
    assert.deepEqual([...rule.entries].sort((a, b) => Number(a[0]) - Number(b[0])), MOVIES.slice(0, 10));
    assert.equal(rule.counts.reduce((a, b) => a + b, 0), 12 * 10 + 90, "each entry counts its movie's rows");
    assert.equal(rule.share, 210 / 213, "the three movies rated once are off the released entries");
    assert.equal(describeRule(rule), "catalog: movieId -> title, year, genres (10 entries, 98.5% of rows)");
    assert.ok(!metadata.rules!.some((r) => r.type === "fixed_combinations" && r.columns.every((c) => rule.columns.includes(c))), "no pair rule inside the catalog");
    assert.deepEqual(ruleShares([rule], metadata, ratings()).map((s) => s.share), [rule.share], "the real rows keep it in its share");
  });

  test("decoded rows name a released movie with all its attributes in 100% of rows, rare movies written as released ones", async () => {
    const { metadata } = await analyzeTable(ratings(), { rareThreshold: K });
    const rule = catalogOf(metadata);
    const synth = new Decoder(metadata).decode(independentCodes(metadata, 3000, 1), 2);
    const released = new Set(MOVIES.slice(0, 10).map((m) => m.join("\u0000")));
    const rows = cells(synth, rule.columns);
    const off = rows.filter((r) => !released.has(r.join("\u0000")));
    assert.deepEqual(off.slice(0, 5), [], `${off.length} of ${rows.length} rows are no released movie`);
    assert.deepEqual(ruleShares([rule], metadata, synth).map((s) => s.share), [1]);
    const seen = new Set(rows.map((r) => r[0]));
    assert.equal(seen.size, 10, "every released movie is written, not a few of them");
    const realism = catalogRealism(await scanTable(ratings(), 2), await scanTable(synth, 2)).find((c) => c.key === "movieId");
    assert.equal(realism?.synthetic, 1, "the bench's own check agrees");
  });

  test("rows whose key is blank stay blank (no entry of theirs), at the real rows' share", async () => {
    const t = ratings();
    t.rows.forEach((r, i) => {
      if (i % 10 === 3) r[1] = "";
    });
    const { metadata } = await analyzeTable(t, { rareThreshold: K });
    const rule = catalogOf(metadata);
    const synth = new Decoder(metadata).decode(independentCodes(metadata, 3000, 1), 2);
    const blank = cells(synth, ["movieId"]).filter(([id]) => id === "").length / synth.rows.length;
    assert.ok(blank > 0.06 && blank < 0.14, `blank keys ${blank} (real 0.10)`);
    assert.deepEqual(ruleShares([rule], metadata, synth).map((s) => s.share), [1]);
  });

  test("the enforcer keeps a fixed cell: the entry is chosen to agree with it, and a row it cannot fit is reported", () => {
    const meta: Metadata = {
      features: ["movieId", "title", "year"],
      cardinalities: { movieId: 3, title: 3, year: 2 },
      empirical_probs: { movieId: [0.5, 0.4, 0.1], title: [0.5, 0.4, 0.1], year: [0.5, 0.5] },
      column_stats: {
        movieId: { type: "categorical", count: 10, missing: 0 },
        title: { type: "categorical", count: 10, missing: 0 },
        year: { type: "categorical", count: 10, missing: 0 },
      },
      value_mappings: { movieId: { "1": 0, "2": 1, __other__: 2 }, title: { Heat: 0, Fargo: 1, __other__: 2 }, year: { "1995": 0, "1996": 1 } },
      rules: [{ type: "catalog", columns: ["movieId", "title", "year"], key: "movieId", entries: [["1", "Heat", "1995"], ["2", "Fargo", "1996"]], counts: [5, 4], share: 0.9 }],
    };
    const rows = [
      ["1", "Fargo", "1996"], // a released key: its attributes follow it
      ["77", "Heat", "1996"], // an invented key: a released entry, the one agreeing with most cells
      ["77", "Nope", "1996"], // fixed title "Nope": no entry keeps it
      ["9", "Fargo", "1995"], // fixed title: the entry with that title
    ];
    const fixed = (r: number, f: number): boolean => f === 1 && r >= 2;
    const out = new RuleEnforcer(meta).apply(rowCells(rows), 3, () => "", fixed);
    assert.deepEqual(rows, [
      ["1", "Heat", "1995"],
      ["1", "Heat", "1995"],
      ["77", "Nope", "1996"],
      ["2", "Fargo", "1996"],
    ]);
    assert.equal(out.unrepaired, 1);
    assert.deepEqual(catalogCombinations(meta, meta.rules![0] as CatalogRule)?.combinations, [[0, 0, 0], [1, 1, 1]], "the server's pool keeps the code-book part");
  });

  test("rules.drop removes the catalog; a declared catalog the rows break is a DataError naming the row", async () => {
    const dropped = await analyzeTable(ratings(), { rareThreshold: K, rules: { drop: ["catalog:movieId,title,year,genres"] } });
    assert.ok(!(dropped.metadata.rules ?? []).some((r) => r.type === "catalog"));
    const t = ratings();
    t.rows[20] = [...t.rows[20]];
    t.rows[20][3] = "1999";
    await assert.rejects(
      analyzeTable(t, { rareThreshold: K, rules: { detect: false, declare: [{ type: "catalog", columns: ["movieId", "title", "year"] }] } }),
      (e: unknown) => e instanceof DataError && /line 22, column "year".*"catalog:movieId,title,year".*"1999"/.test(e.message),
    );
    const declared = await analyzeTable(ratings(), { rareThreshold: K, rules: { detect: false, declare: [{ type: "catalog", columns: ["title", "genres"] }] } });
    const rule = catalogOf(declared.metadata);
    assert.equal(rule.declared, true);
    assert.equal(rule.entries.length, 10);
  });
});

describe("catalogs of public tables", () => {
  const json = (file: string): Table => recordsTable(JSON.parse(readFileSync(join(vegaDataDir(), file), "utf8")), file);

  test("income.json: a state decides its region, FIPS id and total, kept in every decoded row", async () => {
    const real = json("income.json");
    const { metadata } = await analyzeTable(real);
    const rule = catalogOf(metadata);
    assert.deepEqual(rule.columns, ["name", "region", "id", "total"]);
    const nd = rule.entries.find((e) => e[0] === "North Dakota");
    assert.deepEqual(nd?.slice(1, 3), ["midwest", "38"]);
    const synth = new Decoder(metadata).decode(independentCodes(metadata, 2000, 3), 2);
    assert.deepEqual(ruleShares([rule], metadata, synth).map((s) => s.share), [1]);
    const checks = catalogRealism(await scanTable(real, 2), await scanTable(synth, 2));
    assert.ok(checks.length > 0);
    for (const c of checks) assert.equal(c.synthetic, 1, `${c.key} -> ${c.attributes.join(", ")}: ${c.examples.join("; ")}`);
  });

  test("gapminder-health-income: each country once, so no catalog (an entry of one row would be that row)", async () => {
    const { metadata } = await analyzeTable(join(vegaDataDir(), "gapminder-health-income.csv"));
    assert.deepEqual((metadata.rules ?? []).filter((r) => r.type === "catalog"), []);
  });
});

describe("a catalog's entries at about their real shares (biopics: a film's title, its link, its subjects)", () => {
  // Films of one subject (one row each), films of 2-3 subjects (one row per subject) and four
  // remakes (two films of one title and one subject each): the link decides the title.
  const FIRST = ["Young", "Silent", "Last", "Great", "Dark", "Golden", "Wild", "Lost", "Secret", "Broken", "Iron", "Quiet"];
  const SECOND = ["River", "Summer", "Kingdom", "Letter", "Voyage", "Promise", "Garden", "Empire", "Season", "Portrait", "Journey", "Harbor"];
  const rows: string[][] = [];
  let film = 0;
  const add = (title: string, subjects: number): void => {
    film++;
    for (let s = 0; s < subjects; s++) rows.push([title, `http://www.imdb.com/title/tt${String(1000000 + film * 7919)}/`, String(subjects)]);
  };
  for (const a of FIRST) for (const b of SECOND) add(`The ${a} ${b}`, 1);
  for (let i = 0; i < 30; i++) add(`${SECOND[i % 12]} of ${FIRST[(i * 5) % 12]} Men ${i}`, 2 + (Math.floor(i / 12) % 2));
  for (const t of ["Cleopatra", "Dillinger", "Henry V", "Marie Antoinette"]) (add(t, 1), add(t, 1));
  const films: Table = { columns: ["title", "site", "number_of_subjects"], rows };

  test("the title keeps its writer of fresh titles beside a link that decides it, so no released title fills the rows", async () => {
    const { metadata } = await analyzeTable(films);
    assert.ok(metadata.rules?.some((r) => r.type === "fixed_combinations" && r.determinant === "site" && r.columns.includes("title")), JSON.stringify(metadata.rules?.map((r) => describeRule(r, metadata))));
    const out = new Decoder(metadata).decode(independentCodes(metadata, 2000, 3), 5);
    const counts = new Map<string, number>();
    for (const [t] of cells(out, ["title"])) counts.set(t, (counts.get(t) ?? 0) + 1);
    const top = Math.max(...counts.values()) / out.rows.length;
    // The commonest real title holds 3 of 246 rows (1.2%); the remakes filled 20% each before.
    assert.ok(top < 0.05, `commonest synthetic title ${(100 * top).toFixed(1)}% of rows`);
    assert.equal(ruleShares(metadata.rules ?? [], metadata, out).every((s) => s.share === 1), true, JSON.stringify(ruleShares(metadata.rules ?? [], metadata, out).filter((s) => s.share < 1).map((s) => describeRule(s.rule, metadata))));
  });
});

describe("a catalog keyed by long free-text notes (avengers: Notes -> Death1, Return1)", () => {
  // A team's members: most rows hold one of three repeated notes (NA, two shared deaths), a third
  // hold a long note of their own (each once, built from shared words so the column's own text
  // model writes new ones). A second death is stated only beside a note of its own.
  const WHO = ["Kang", "Ultron", "Thanos", "Loki", "the Hood", "Zemo", "Korvac", "the Grim Reaper"];
  const BOOK = ["Avengers", "Thunderbolts", "New Avengers", "Secret Invasion", "Dark Reign", "Civil War"];
  const table0 = table(["note", "death1", "return1", "death2", "return2"], 300, (i, rng) => {
    if (i < 150) return ["NA", "NO", "", "", ""];
    if (i < 180) return ["Died in the Kree war", "YES", "NO", "", ""];
    if (i < 200) return ["Died in Murderworld during Avengers Arena", "YES", "YES", "", ""];
    const j = i - 200;
    const death2 = j % 2 === 0 ? "YES" : "";
    const note = `Killed by ${WHO[j % 8]} in ${BOOK[Math.floor(j / 8) % 6]} Vol ${1 + (j % 5)} issue ${10 + j} and later returned`;
    return [note, "YES", "YES", death2, death2 === "YES" ? (rng.int(2) ? "YES" : "NO") : ""];
  });

  test("a pooled note is written as a new note, not a released one, and keeps its second deaths and every structural zero", async () => {
    const meta = await analyzed(table0);
    const catalog = catalogOf(meta);
    assert.equal(catalog.key, "note");
    const out = decodeIndependent(meta, 2000);
    const released = new Set(catalog.entries.map((e) => e[0]));
    const rows = cells(out, ["note", "death1", "return1", "death2"]);
    const own = rows.filter(([n]) => n !== "" && !released.has(n)).length / rows.length;
    // Real: 100 of 300 rows hold a note of their own; the base wrote every row as a released note.
    assert.ok(own > 0.2 && own < 0.5, `rows with a note of their own ${(100 * own).toFixed(1)}%`);
    const second = rows.filter(([, , , d2]) => d2 === "YES").length;
    // Independent codes: a sixth of the rows draw a second death, a third of those beside a new note.
    assert.ok(second > 0.025 * rows.length, `${second} rows with a second death`);
    // Rows on a released note keep its entry; no row sits inside a structural zero.
    const entry = new Map(catalog.entries.map((e) => [e[0], e]));
    const off = rows.filter(([n, d1, r1]) => entry.has(n) && (entry.get(n)![1] !== d1 || entry.get(n)![2] !== r1));
    assert.deepEqual(off.slice(0, 3), []);
    const zeros = meta.rules!.filter((r) => r.type === "structural_zeros");
    const shares = ruleShares(zeros, meta, out).filter((s) => s.share < 1).map((s) => `${describeRule(s.rule, meta)} ${s.share}`);
    assert.deepEqual(shares, []);
  });
});
