/**
 * Issue 40, "rows that read true": two models sampled with one seed write different fresh names
 * (every table drew the same people in the same order), while one model and one seed write the
 * same names on every run.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Decoder } from "../src/sdk/generate/decode";
import { identifierKey } from "../src/sdk/generate/synthesizer";
import { analyzed, independentCodes, table } from "./rules-fixtures";

const FIRST = ["James", "Mary", "Robert", "Patricia", "John", "Jennifer", "Michael", "Linda", "David", "Susan"];
const LAST = ["Smith", "Jones", "Brown", "Davis", "Miller", "Wilson", "Moore", "Taylor", "Clark", "Lewis"];

async function names(columns: string[], seed: number): Promise<string[]> {
  const t = table(columns, 120, (i, rng) => [`${FIRST[i % 10]} ${LAST[Math.floor(i / 10) % 10]}${"abcdefghijkl"[Math.floor(i / 10)]}`, 20 + rng.int(60)]);
  const meta = await analyzed(t);
  const out = new Decoder(meta).decode(independentCodes(meta, 50, 3), 5, { idKey: identifierKey(seed, meta) });
  return out.rows.map((r) => r[0]);
}

test("two tables sampled with one seed write different fresh names", async () => {
  const a = await names(["name", "age"], 0);
  const b = await names(["name", "score"], 0);
  const shared = a.filter((v, i) => v === b[i]).length;
  assert.ok(shared < 5, `${shared} of ${a.length} rows have the same name in both tables: ${a.slice(0, 3).join(", ")}`);
});

test("one table and one seed write the same names on every run", async () => {
  assert.deepEqual(await names(["name", "age"], 0), await names(["name", "age"], 0));
  assert.equal(identifierKey(7, { features: ["a"], cardinalities: { a: 3 } }), identifierKey(7, { features: ["a"], cardinalities: { a: 3 } }));
});
