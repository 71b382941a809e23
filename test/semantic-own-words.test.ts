/**
 * Words of a text identifier that are not people's names are never written as surnames (issue 40,
 * "names that read as names"): a car model's rare make and model take public words of their kind,
 * and a formal country name respelled takes the column's own words (`la República de Guinea`, not
 * `la República de Stroman`).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { analyzeTable } from "../src/sdk";
import { SemanticGenerator } from "../src/sdk/semantic/semantic-generator";
import type { SemanticShape } from "../src/sdk/semantic/types";
import { publicWords } from "../src/sdk/semantic/pools";

/**
 * n values of the text identifier `col` (first column) of `rows` (analysed with rare threshold k),
 * and the words among them that are faker surnames no real value holds.
 */
async function written(rows: string[][], columns: string[], k: number, key: number, n: number): Promise<{ out: string[]; bad: string[] }> {
  const { metadata } = await analyzeTable({ columns, rows }, { rareThreshold: k });
  const st = metadata.column_stats![columns[0]] as { id_shape?: { semantic?: SemanticShape } };
  assert.ok(st.id_shape?.semantic, `${columns[0]} is a text identifier with a semantic shape`);
  const gen = new SemanticGenerator(st.id_shape!.semantic!, key);
  const out = Array.from({ length: n }, (_, i) => gen.value(i));
  return { out, bad: surnames(out, rows.map((r) => r[0])) };
}

/** Words of `values` that are faker surnames no real value holds. */
function surnames(values: readonly string[], real: readonly string[]): string[] {
  const last = new Set(publicWords().capitalized);
  const own = new Set(real.flatMap((v) => v.match(/\p{L}+/gu) ?? []));
  return values.flatMap((v) => (v.match(/\p{L}+/gu) ?? []).filter((w) => last.has(w) && !own.has(w)));
}

test("a tiny table's car models (rare makes and models) are written as makes and models, not two surnames", async () => {
  // mtcars-like: 36 cars, each make in <= 2 rows, models of one row (k = 5: all rare).
  const makes = ["Mazda", "Toyota", "Fiat", "Honda", "Porsche", "Ferrari", "Maserati", "Volvo", "Datsun", "Hornet", "Valiant", "Duster", "Pontiac", "Lotus", "Dodge", "Chrysler", "Lincoln", "Cadillac"];
  const models = ["Corolla", "Civic", "Europa", "Bora", "Dino", "Sportabout", "Fleetwood", "Continental", "Imperial", "Challenger", "Javelin", "Firebird", "Corona", "Pantera", "Camaro", "Fiesta", "Mustang", "Taurus", "Accord", "Prius", "Beetle", "Sentra", "Altima", "Charger", "Roadster", "Element", "Jetta", "Golf", "Malibu", "Impala", "Escalade", "Durango", "Explorer", "Ranger", "Volt", "Cruze"];
  const rows = models.map((m, i) => [`${makes[i % makes.length]} ${m}`, String(10 + i)]);
  const { out, bad } = await written(rows, ["model", "mpg"], 5, 11, 200);
  // faker's surnames hold a few car words too (`Ford`, `Dodge`): far fewer than one a value.
  assert.ok(bad.length <= 20, `${bad.length} surnames in 200 car names (${out.slice(0, 8).join(" | ")})`);
});

test("a formal country name respelled keeps the column's own words, not a surname", async () => {
  const forms = ["la República de", "la República Democrática de", "el Reino de", "el Estado de", "la República Federal de", "la República Popular de", "el Principado de", "la República Islámica de"];
  const countries = ["Corea", "Guinea", "Angola", "Bolivia", "Chile", "Colombia", "Cuba", "Ecuador", "Egipto", "Francia", "Ghana", "Haití", "Irak", "Kenya", "Malí", "Nepal", "Panamá", "Perú", "Senegal", "Túnez", "Uganda", "Yemen", "Zambia", "Argelia", "Camerún", "Chad", "Gabón", "Liberia", "Níger", "Togo"];
  const rows: string[][] = [];
  countries.forEach((c, i) => {
    rows.push([`${forms[i % forms.length]} ${c}`, String(i)]);
    rows.push([`${forms[(i + 3) % forms.length]} ${c}`, String(i + 100)]);
  });
  // Past what the model writes new: respelled values.
  const { out, bad } = await written(rows, ["name", "code"], 2, 5, 400);
  assert.ok(bad.length <= 4, `${bad.length} surnames in 400 formal names (${bad.slice(0, 6).join(", ")})`);
  assert.equal(new Set(out).size, out.length, "values stay distinct");
});
