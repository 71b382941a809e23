/**
 * Row rules (issue 23, `src/sdk/rules/detect/`): the rules detected on the real tables (each
 * table's full list is asserted, so a chance rule fails here too), each rule type detected on a
 * small generated table and not detected when 2% of its rows break it, declared rules (computed,
 * marked, and a DataError naming column and line when the rows break them), `drop`, and no rules
 * with a domain or privacy.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DataError, Rng, analyzeTable, type Rule, type Table } from "../src/sdk";
import { describeRule, ruleId } from "../src/sdk/rules/describe";
import type { RuleOptions } from "../src/sdk/rules/detect";
import { parseRules } from "../src/cli/commands/fit";
import type { CreateModelRequest } from "../src/contract";
import typia from "typia";

/** The server's check of a Create Model body (src/server/handlers/routes.ts). */
const validateCreate = typia.createValidateEquals<CreateModelRequest>();

const REAL = "/work/shared/datasets/real";
const ADULT = join(__dirname, "..", "..", "data", "adult.csv");

async function rulesOf(source: string | Table, rules?: RuleOptions): Promise<Rule[]> {
  return (await analyzeTable(source, rules ? { rules } : {})).metadata.rules ?? [];
}

test("real tables: the rules detected are the structure the tables have, and nothing else", async () => {
  const expected: Record<string, string[]> = {
    [ADULT]: [
      "fixed_combinations:education,education-num",
      "structural_zeros:workclass,occupation",
      "structural_zeros:education,income",
      "structural_zeros:education-num,income",
      "structural_zeros:marital-status,relationship",
      "structural_zeros:occupation,relationship",
      "structural_zeros:relationship,sex",
      "structural_zeros:race,native-country",
    ],
    [`${REAL}/airports.csv`]: ["fixed_combinations:city,state"],
    [`${REAL}/cars.csv`]: ["fixed_combinations:Name,Origin", "inequality:Displacement,Horsepower", "structural_zeros:Cylinders,Origin"],
    // A route decides its distance: a catalog with a composite key (issue 40).
    [`${REAL}/flights-20k.csv`]: ["catalog:(origin,destination),distance", "fixed_combinations:origin,destination", "not_equal:origin,destination"],
    // One row per species and county: the pair is the key (its one-to-one names make no other).
    [`${REAL}/species.csv`]: ["catalog:item_id,common_name,scientific_name,gap_species_code", "unique:item_id,county_id"],
    [`${REAL}/github.csv`]: [],
  };
  for (const [file, ids] of Object.entries(expected)) {
    const { metadata } = await analyzeTable(file);
    const rules = metadata.rules ?? [];
    const valid = validateCreate({ metadata, config: {} });
    assert.ok(valid.success, `${file}: the server accepts the rules (${JSON.stringify(valid.success ? [] : valid.errors.slice(0, 3))})`);
    console.log(`${file}:\n${rules.map((r) => `  ${describeRule(r)}`).join("\n") || "  (none)"}`);
    assert.deepEqual(rules.map(ruleId), ids, file);
  }
  const adultRules = await rulesOf(ADULT);
  const adult = adultRules[0];
  assert.ok(adult.type === "fixed_combinations");
  assert.equal(adult.determinant, "education");
  assert.equal(adult.combinations.length, 16);
  assert.equal(describeRule(adult), "fixed combinations: education -> education-num (16 combinations)");
  // The structural zeros of the issue: Husband/Female, Wife/Male; Wife or Husband beside
  // Never-married; workclass ? with every real occupation (a value that decides its partner).
  const { metadata } = await analyzeTable(ADULT);
  const named = (id: string): Set<string> => {
    const r = adultRules.find((x) => ruleId(x) === id);
    assert.ok(r?.type === "structural_zeros", id);
    const text = r.columns.map((c) => Object.fromEntries(Object.entries(metadata.value_mappings![c]).map(([t, k]) => [k, t])));
    return new Set(r.pairs.map(([a, b]) => `${text[0][a]}/${text[1][b]}`));
  };
  assert.deepEqual(named("structural_zeros:relationship,sex"), new Set(["Husband/Female", "Wife/Male"]));
  const marital = named("structural_zeros:marital-status,relationship");
  for (const p of ["Never-married/Wife", "Never-married/Husband", "Divorced/Wife", "Married-civ-spouse/Unmarried"]) assert.ok(marital.has(p), p);
  const work = named("structural_zeros:workclass,occupation");
  const occupations = Object.keys(metadata.value_mappings!.occupation).filter((o) => o !== "?");
  for (const o of occupations) assert.ok(work.has(`?/${o}`), `?/${o}`);
  const cars = (await rulesOf(`${REAL}/cars.csv`))[0];
  assert.ok(cars.type === "fixed_combinations" && cars.determinant === "Name");
  const flights = await rulesOf(`${REAL}/flights-20k.csv`);
  const routes = flights.find((r) => r.type === "fixed_combinations");
  assert.ok(routes?.type === "fixed_combinations" && routes.determinant === undefined);
  assert.ok(routes.counts.every((c) => c >= 2), "no rare combination is released");
  assert.equal(routes.counts.length, routes.combinations.length);
});

/** A generated table: `rows` rows of the given columns. */
function table(columns: string[], n: number, row: (i: number, rng: Rng) => string[]): Table {
  const rng = new Rng(7);
  return { columns, rows: Array.from({ length: n }, (_, i) => row(i, rng)) };
}

const N = 500;
/** Rows 0, 50, 100, ...: 10 of 500 rows, 2%. */
const broken = (i: number, share: number): boolean => share > 0 && i % 50 === 0;

const TABLES: Record<string, { make: (share: number) => Table; id: string }> = {
  dependency: {
    id: "fixed_combinations:g,h",
    make: (s) =>
      table(["g", "h", "z"], N, (i, rng) => {
        const g = rng.int(40);
        const h = g % 3 === 0 ? "yes" : "no";
        return [`g${g}`, broken(i, s) ? (h === "yes" ? "no" : "yes") : h, `z${rng.int(3)}`];
      }),
  },
  sparse: {
    id: "fixed_combinations:origin,destination",
    make: () => {
      const routes = [[0, 1], [1, 0], [0, 2], [2, 3], [3, 4], [4, 5], [5, 6], [6, 7], [7, 0], [1, 3], [2, 5], [3, 6], [4, 7], [5, 0], [6, 1]];
      return table(["origin", "destination"], 600, (_, rng) => routes[rng.int(routes.length)].map((a) => `A${a}`));
    },
  },
  inequality: {
    id: "inequality:end,start",
    make: (s) =>
      table(["start", "end", "z"], N, (i, rng) => {
        const start = rng.int(1000);
        const d = 1 + rng.int(100);
        return [String(start), String(broken(i, s) ? start - d : start + d), `z${rng.int(3)}`];
      }),
  },
  datetime: {
    id: "inequality:returned,sent",
    make: () =>
      table(["sent", "returned"], N, (_, rng) => {
        const a = Date.UTC(2024, 0, 1) + rng.int(300) * 86400000;
        const b = a + rng.int(30) * 86400000;
        return [new Date(a).toISOString().slice(0, 10), new Date(b).toISOString().slice(0, 10)];
      }),
  },
  sum: {
    id: "sum:total,a,b",
    make: (s) =>
      table(["a", "b", "total"], N, (i, rng) => {
        const a = (rng.int(1001) - 500) / 10;
        const b = (rng.int(1001) - 500) / 10;
        return [a.toFixed(1), b.toFixed(1), (a + b + (broken(i, s) ? 7 : 0)).toFixed(1)];
      }),
  },
  notEqual: {
    id: "not_equal:home,away",
    make: (s) =>
      table(["home", "away"], N, (i, rng) => {
        const h = rng.int(6);
        const a = broken(i, s) ? h : (h + 1 + rng.int(5)) % 6;
        return [`T${h}`, `T${a}`];
      }),
  },
  blank: {
    id: "blank_together:p,q",
    make: (s) =>
      table(["p", "q", "z"], N, (i, rng) => {
        const blank = i % 10 === 3;
        const p = blank ? "" : `p${rng.int(4)}`;
        const q = blank !== broken(i, s) ? "" : `q${rng.int(4)}`;
        return [p, q, `z${rng.int(3)}`];
      }),
  },
};

for (const [name, { make, id }] of Object.entries(TABLES)) {
  test(`${name}: detected when every row keeps it`, async () => {
    const rules = await rulesOf(make(0));
    assert.ok(rules.map(ruleId).includes(id), `${id} in ${rules.map(ruleId).join(" ")}`);
    const rule = rules.find((r) => ruleId(r) === id)!;
    assert.equal(rule.share, 1);
    assert.equal(rule.declared, undefined);
  });
}

for (const name of ["dependency", "inequality", "sum", "notEqual", "blank"]) {
  test(`${name}: nothing detected when 2% of the rows break the rule`, async () => {
    // A dependency broken in 2% of its rows still has values that decide their partner, and
    // blanks broken in 2% still leave (blank, value) cells far below independence: those are
    // structural zeros (next test), not the rule; an end within 100 of its start either way, in
    // every row, is a difference range that holds.
    const found = (await rulesOf(TABLES[name].make(1))).filter(
      (r) => ((name !== "dependency" && name !== "blank") || r.type !== "structural_zeros") && (name !== "inequality" || r.type !== "difference"),
    );
    assert.deepEqual(found.map(ruleId), []);
  });
}

test("dependency broken in 2% of rows: only the values whose rows all agree, with many rows, forbid the other partner", async () => {
  const t = TABLES.dependency.make(1);
  const a = await analyzeTable(t);
  const rule = a.metadata.rules!.find((r) => r.type === "structural_zeros");
  assert.ok(rule?.type === "structural_zeros");
  const g = Object.fromEntries(Object.entries(a.metadata.value_mappings!.g).map(([v, k]) => [k, v]));
  const h = Object.fromEntries(Object.entries(a.metadata.value_mappings!.h).map(([v, k]) => [k, v]));
  for (const [cg, ch] of rule.pairs) {
    const rows = t.rows.filter((r) => r[0] === g[cg]);
    // every row of the value holds the other h, and chance could not give that: p_h^m < 1e-6
    assert.ok(rows.every((r) => r[1] !== h[ch]), `${g[cg]} never with ${h[ch]}`);
    const p = t.rows.filter((r) => r[1] === rows[0][1]).length / t.rows.length;
    assert.ok(rows.length * Math.log(p) < Math.log(1e-6), `${g[cg]}: ${rows.length} rows`);
  }
});

test("dependency: released combinations are (code of g, code of h), counts alongside", async () => {
  const a = await analyzeTable(TABLES.dependency.make(0));
  const rule = a.metadata.rules!.find((r) => r.type === "fixed_combinations")!;
  assert.ok(rule.type === "fixed_combinations");
  assert.equal(rule.determinant, "g");
  const g = a.metadata.value_mappings!.g;
  const h = a.metadata.value_mappings!.h;
  assert.equal(rule.combinations.length, 40);
  for (const [value, code] of Object.entries(g)) {
    const combo = rule.combinations.find((c) => c[0] === code)!;
    assert.equal(combo[1], h[Number(value.slice(1)) % 3 === 0 ? "yes" : "no"]);
  }
  assert.equal(rule.counts.reduce((s, c) => s + c, 0), N);
});

test("sparse: (origin, destination) releases the 15 routes and origin != destination", async () => {
  const rules = await rulesOf(TABLES.sparse.make(0));
  const r = rules.find((x) => x.type === "fixed_combinations")!;
  assert.ok(r.type === "fixed_combinations");
  assert.equal(r.combinations.length, 15);
  assert.ok(rules.some((x) => ruleId(x) === "not_equal:origin,destination"));
});

test("a declared rule the rows break is a DataError naming the column, the line and the values", async () => {
  const t = TABLES.dependency.make(1);
  // row 0 is the first broken row, but the first row of its g value: the breach is the next row with that g
  const g0 = t.rows[0][0];
  const row = t.rows.findIndex((r, i) => i > 0 && r[0] === g0);
  await assert.rejects(
    rulesOf(t, { declare: [{ type: "fixed_combinations", columns: ["g", "h"], determinant: "g" }] }),
    (e: unknown) => e instanceof DataError && e.column === "h" && e.line === row + 2 && e.message.includes(`line ${row + 2}`) && e.message.includes(g0),
  );
  const ineq = TABLES.inequality.make(1);
  await assert.rejects(
    rulesOf(ineq, { declare: [{ type: "inequality", high: "end", low: "start" }] }),
    (e: unknown) => e instanceof DataError && e.column === "end" && e.line === 2 && e.message.includes(`end = "${ineq.rows[0][1]}"`),
  );
  // a file with a blank line (skipped) before the breaking row: the line is the file's, not row + 2
  const dir = mkdtempSync(join(tmpdir(), "rules-"));
  try {
    const file = join(dir, "t.csv");
    const lines = ["start,end,z", ...Array.from({ length: 30 }, (_, i) => `${i},${i + 5 + (i === 20 ? -10 : 0)},z${i % 3}`)];
    lines.splice(5, 0, "");
    writeFileSync(file, lines.join("\n") + "\n");
    await assert.rejects(
      rulesOf(file, { declare: [{ type: "inequality", high: "end", low: "start" }] }),
      (e: unknown) => e instanceof DataError && e.line === 23 && e.message.includes("t.csv, line 23") && e.message.includes('end = "15"'),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  await assert.rejects(rulesOf(ineq, { declare: [{ type: "inequality", high: "end", low: "nope" }] }), (e: unknown) => e instanceof DataError && e.column === "nope");
  await assert.rejects(rulesOf(ineq, { declare: [{ type: "inequality", high: "end", low: "z" }] }), (e: unknown) => e instanceof DataError && e.column === "z");
});

test("a declared rule the rows keep is computed and marked declared; detect: false keeps only declared rules", async () => {
  const rules = await rulesOf(TABLES.notEqual.make(0), { declare: [{ type: "not_equal", columns: ["home", "away"] }] });
  assert.deepEqual(rules, [{ type: "not_equal", columns: ["home", "away"], share: 1, declared: true }]);
  assert.equal(describeRule(rules[0]), "not equal: home != away (declared)");
  const only = await rulesOf(TABLES.sparse.make(0), { detect: false, declare: [{ type: "fixed_combinations", columns: ["origin", "destination"] }] });
  assert.equal(only.length, 1);
  assert.ok(only[0].type === "fixed_combinations" && only[0].declared === true && only[0].combinations.length === 15);
});

test("drop removes a detected rule, by id or by its line", async () => {
  assert.deepEqual(await rulesOf(TABLES.dependency.make(0), { drop: ["fixed_combinations:g,h"] }), []);
  const sparse = await rulesOf(TABLES.sparse.make(0));
  const kept = await rulesOf(TABLES.sparse.make(0), { drop: [describeRule(sparse[0])] });
  assert.deepEqual(kept.map(ruleId), sparse.slice(1).map(ruleId));
});

test("domain and private extraction detect nothing; declaring rules there is a RangeError", async () => {
  const coded = table(["a", "b", "c"], N, (_, rng) => {
    const a = rng.int(5);
    return [String(a), String(a), String(rng.int(3))];
  });
  const domain = { a: 5, b: 5, c: 3 };
  assert.ok((await rulesOf(coded)).length > 0, "the raw table has a rule (a <-> b)");
  assert.equal((await analyzeTable(coded, { domain })).metadata.rules, undefined);
  assert.equal((await analyzeTable(coded, { domain, privacy: { epsilon: 1 } })).metadata.rules, undefined);
  await assert.rejects(analyzeTable(coded, { domain, rules: { declare: [{ type: "not_equal", columns: ["a", "c"] }] } }), RangeError);
});

test("describeRule: one line per rule in the field's names", () => {
  const fc = { type: "fixed_combinations", columns: ["city", "state"], combinations: Array(1204).fill([0, 0]), counts: Array(1204).fill(2), share: 0.971 } as const;
  assert.equal(describeRule({ ...fc, combinations: [...fc.combinations], counts: [...fc.counts], columns: [...fc.columns] }), "fixed combinations: (city, state), 1,204 combinations, 97.1% of rows");
  assert.equal(describeRule({ type: "inequality", high: "max_temp", low: "min_temp", strict: false, share: 0.992 }), "inequality: max_temp >= min_temp (99.2% of rows)");
  assert.equal(describeRule({ type: "sum", total: "total", parts: ["a", "b"], share: 1 }), "sum: total = a + b");
  assert.equal(describeRule({ type: "blank_together", columns: ["a", "b"], share: 1 }), "blank together: a, b");
});

test("sparse pairs that share a column merge into one group while it stays sparse", async () => {
  const rng = new Rng(3);
  const triples = Array.from({ length: 20 }, () => [rng.int(8), rng.int(8), rng.int(8)]);
  const t = table(["x", "y", "w", "z"], 800, (_, r) => {
    const [a, b, c] = triples[r.int(20)];
    return [`x${a}`, `y${b}`, `w${c}`, `z${r.int(3)}`];
  });
  const rules = await rulesOf(t);
  assert.deepEqual(rules.map(ruleId), ["fixed_combinations:x,y,w"]);
  const rule = rules[0];
  assert.ok(rule.type === "fixed_combinations");
  assert.equal(rule.combinations.length, new Set(triples.map((x) => x.join())).size);
  assert.ok(rule.combinations.every((c) => c.length === 3));
});

test("--rules takes inline JSON or a file and refuses other shapes", () => {
  assert.deepEqual(parseRules('{"drop": ["sum:total,a,b"], "detect": false}'), { drop: ["sum:total,a,b"], detect: false });
  const dir = mkdtempSync(join(tmpdir(), "rules-"));
  try {
    const file = join(dir, "rules.json");
    writeFileSync(file, JSON.stringify({ declare: [{ type: "not_equal", columns: ["a", "b"] }] }));
    assert.deepEqual(parseRules(file), { declare: [{ type: "not_equal", columns: ["a", "b"] }] });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  assert.throws(() => parseRules('{"drop": "sum:total,a,b"}'), /--rules must be a JSON object/);
  assert.throws(() => parseRules('{"dorp": []}'), /--rules must be a JSON object/);
  assert.equal(parseRules(undefined), undefined);
});

test("dependencies implied by transitivity are dropped: g -> h and h -> w make one catalog g -> h, w, no rule g -> w", async () => {
  const t = table(["g", "h", "w"], 900, (_, rng) => {
    const g = rng.int(60);
    return [`g${g}`, `h${g % 10}`, `w${g % 2}`];
  });
  assert.deepEqual((await rulesOf(t)).map(ruleId), ["catalog:g,h,w"]);
});
