/**
 * Files as R writes them: a column that numbers the rows (R's `write.csv` row names, a pandas
 * index) is written as the sample's own row numbers: 1, 2, 3 ... in order, each once, whatever the
 * sample's size; a column of paragraphs longer than the contract's 1,024 positions still fits.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { analyzed, decodeIndependent, table } from "./rules-fixtures";
import { IdGenerator } from "../src/sdk/generate/id-generator";
import { rowCounterStart } from "../src/sdk/metadata/identifier";
import { validateCreateModel } from "../src/server/handlers/bodyValidators";

const MAKES = ["audi", "chevrolet", "dodge", "ford", "honda", "toyota"];

/** An R data frame written with its row names: sorted by make, so the row number follows the make. */
function rTable(n: number, first = 1, header = "rownames") {
  return table([header, "make", "cyl", "hwy"], n, (i, rng) => {
    const make = MAKES[Math.floor((i * MAKES.length) / n)];
    const cyl = [4, 6, 8][rng.int(3)];
    return [i + first, make, cyl, 40 - 2 * cyl + rng.int(5)];
  });
}

test("R's row names are written 1, 2, 3 ... in sample order, each once, past the real row count", async () => {
  const meta = await analyzed(rTable(120));
  assert.equal(meta.column_stats?.rownames?.type, "id");
  const out = decodeIndependent(meta, 500);
  const col = out.rows.map((r) => r[0]);
  assert.deepEqual(col, Array.from({ length: 500 }, (_, i) => String(i + 1)));
  // Nothing is learnt from the row number: the makes keep their shares.
  const audi = out.rows.filter((r) => r[1] === "audi").length / 500;
  assert.ok(Math.abs(audi - 1 / 6) < 0.06, `audi in ${audi} of rows`);
});

test("a pandas index from 0 under an unnamed header is written 0, 1, 2 ...", async () => {
  const meta = await analyzed(rTable(60, 0, "Unnamed: 0"));
  const out = decodeIndependent(meta, 100);
  assert.deepEqual(
    out.rows.map((r) => r[0]),
    Array.from({ length: 100 }, (_, i) => String(i)),
  );
});

test("integers that do not number the rows stay what they were", async () => {
  // Shuffled row numbers, numbers from 2 and a year series are no row counter.
  const n = 80;
  const shuffled = table(["rownames", "x"], n, (i, rng) => [i < n - 1 ? ((i * 37) % (n - 1)) + 1 : n, rng.int(9)]);
  const fromTwo = table(["rownames", "x"], n, (i, rng) => [i + 2, rng.int(9)]);
  const years = table(["year", "x"], n, (i, rng) => [1941 + i, rng.int(9)]);
  // A measure that happens to read 0, 1, 2 ... in a made table, under no row-name header.
  const starts = table(["start", "x"], n, (i, rng) => [i, rng.int(9)]);
  for (const t of [shuffled, fromTwo, years, starts]) {
    const meta = await analyzed(t);
    const st = meta.column_stats?.[t.columns[0]];
    assert.ok(st?.type !== "id" || st.id_shape?.kind !== "integer" || st.id_shape.counter === undefined, JSON.stringify(st));
  }
  assert.equal(rowCounterStart(["1", "2", "3"], 3), 1);
  assert.equal(rowCounterStart(["0", "1"], 2), 0);
  assert.equal(rowCounterStart(["1", "2", "3"], 4), undefined); // a blank row
  assert.equal(rowCounterStart(["1", "3", "2"], 3), undefined);
  assert.equal(rowCounterStart(["01", "02"], 2), undefined);
});

test("the generator writes a counter's row i as min + i; a counter's min must be 0 or 1", () => {
  const g = new IdGenerator({ kind: "integer", min: 1, max: 234, distinct: 234, counter: true }, 7);
  assert.deepEqual([0, 1, 233, 999].map((i) => g.value(i)), ["1", "2", "234", "1000"]);
  assert.throws(() => new IdGenerator({ kind: "integer", min: 5, max: 9, distinct: 5, counter: true }, 7), RangeError);
});

test("a column of texts longer than 1,024 characters gives metadata the server accepts", async () => {
  const words = ["binder", "stolen", "vehicle", "laptop", "unencrypted", "health", "records", "patients", "notified", "server"];
  const t = table(["entity", "summary"], 40, (i, rng) => {
    const n = 150 + rng.int(200); // about 1,000 to 2,400 characters
    return [`Clinic ${i}`, Array.from({ length: n }, () => words[rng.int(words.length)]).join(" ") + "."];
  });
  const meta = await analyzed(t);
  const v = validateCreateModel({ metadata: meta });
  assert.equal(v.success, true, JSON.stringify(v.success ? "" : v.errors.slice(0, 2)));
  const out = decodeIndependent(meta, 20);
  assert.ok(out.rows.every((r) => r[1].length > 0));
});
