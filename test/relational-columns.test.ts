/**
 * A child drawn with its codes and held by column (`BatchTable`, the SDK model's form) generates
 * and writes the database a row-held draw of the same cells gives: same rows, same keys, same CSV
 * bytes, without its rows made as strings before they are read.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Rng, type Table } from "../src/sdk";
import type { DatabaseSchema } from "../src/sdk/relational/schema";
import { planDatabase } from "../src/sdk/relational/plan";
import { BatchTable, generateDatabase, stableOrder, type TableModel } from "../src/sdk/relational/generate";
import { evaluateDatabase, resampleModels } from "../src/sdk/relational/evaluate";
import { writeDatabaseDir } from "../src/sdk/relational/database";
import { DecodedBatch, type DecodedColumn } from "../src/sdk/generate/batch";

/**
 * places (code, state) <- trips (date, origin, destination, km, note): trips in date order, five
 * hub origins, a destination never the origin; a note holding a comma or a quote to be quoted.
 */
function trips(): { tables: Record<string, Table>; schema: DatabaseSchema } {
  const rng = new Rng(21);
  const places: Table = { columns: ["code", "state"], rows: [] };
  for (let p = 0; p < 25; p++) places.rows.push([`P${p}`, ["CA", "NY", "TX"][p % 3]]);
  const trips: Table = { columns: ["date", "origin", "destination", "km", "note"], rows: [] };
  for (let t = 0; t < 600; t++) {
    const o = rng.int(5);
    let d = rng.int(25);
    if (d === o) d = (d + 1) % 25;
    const date = `2001/01/${String(1 + Math.floor(t / 40)).padStart(2, "0")} ${String(Math.floor((t % 40) / 2)).padStart(2, "0")}:${t % 2 ? "30" : "00"}`;
    trips.rows.push([date, `P${o}`, `P${d}`, rng.int(10) === 0 ? "" : String(100 + rng.int(900)), ["ok", 'said "late"', "a, b", ""][rng.int(4)]]);
  }
  const schema: DatabaseSchema = {
    tables: { places: { primaryKey: "code" }, trips: {} },
    relationships: [
      { parent: "places", parentKey: "code", child: "trips", childKey: "origin" },
      { parent: "places", parentKey: "code", child: "trips", childKey: "destination" },
    ],
  };
  return { tables: { places, trips }, schema };
}

/** `t` by column: integer texts (and blanks) as an integer column, the rest as code books. */
function byColumn(t: Table): DecodedBatch {
  const cells = t.columns.map((_, j): DecodedColumn => {
    const v = t.rows.map((r) => r[j]);
    if (v.every((x) => x === "" || String(Number(x)) === x)) {
      const blank = Uint8Array.from(v, (x) => (x === "" ? 1 : 0));
      return { kind: "int", values: Float64Array.from(v, (x) => (x === "" ? 0 : Number(x))), blank };
    }
    // Entries repeat, as a code book's may; rows point at the last copy.
    const dict = [...new Set(v), ...new Set(v)];
    const at = new Map(dict.map((x, i) => [x, i]));
    return { kind: "dict", dict, index: Int32Array.from(v, (x) => at.get(x)!) };
  });
  return new DecodedBatch([...t.columns], cells, t.rows.length);
}

/** The trips model: a resample drawn with its codes, its rows as a `Table` or held by column. */
function codedModel(plain: TableModel, held: "rows" | "columns"): TableModel {
  return {
    sample: (n, s) => plain.sample(n, s),
    sampleSeeded: (t, s) => plain.sampleSeeded(t, s),
    codeKeys: (t) => t.rows.map((r) => r.join("\u0000")),
    sampleCoded: async (n, s, columns) => {
      const rows = await plain.sample(n, s);
      const coded = columns.map((column) => {
        const j = rows.columns.indexOf(column);
        const keys: string[] = [];
        const id = new Map<string, number>();
        const codes = Int32Array.from(rows.rows, (r) => {
          let k = id.get(r[j]);
          if (k === undefined) id.set(r[j], (k = keys.push(r[j]) - 1));
          return k;
        });
        return { column, codes, keys };
      });
      return { rows: held === "rows" ? rows : new BatchTable([...rows.columns], byColumn(rows)), coded };
    },
  };
}

test("a child held by column gives the rows, keys and CSV bytes of the same draw held by rows, and stays by column until read", async () => {
  const { tables, schema } = trips();
  const { plan, training } = planDatabase(schema, tables);
  assert.deepEqual(plan.tables.trips.sortedBy, { column: "date", numeric: false });
  const run = async (held: "rows" | "columns"): Promise<Record<string, Table>> => {
    const models = resampleModels(plan, training);
    models.trips = codedModel(models.trips, held);
    return generateDatabase(plan, models, { seed: 9 });
  };
  const [byRows, byColumns] = [await run("rows"), await run("columns")];
  assert.ok(byColumns.trips instanceof BatchTable && byColumns.trips.byColumn, "the child comes out held by column");
  const dirs = [mkdtempSync(join(tmpdir(), "synthd-relcols-")), mkdtempSync(join(tmpdir(), "synthd-relcols-"))];
  try {
    assert.deepEqual(await writeDatabaseDir(dirs[0], byRows), await writeDatabaseDir(dirs[1], byColumns));
    for (const t of ["places", "trips"]) assert.equal(readFileSync(join(dirs[1], `${t}.csv`), "utf8"), readFileSync(join(dirs[0], `${t}.csv`), "utf8"), t);
  } finally {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
  assert.deepEqual(byColumns.trips.columns, byRows.trips.columns);
  assert.deepEqual(byColumns.trips.rows, byRows.trips.rows);
  const dates = byColumns.trips.rows.map((r) => r[0]);
  assert.deepEqual(dates, [...dates].sort(), "in date order");
  assert.equal(byColumns.trips.rows.filter((r) => r[1] === r[2]).length, 0, "a destination is never the origin");
  for (const r of evaluateDatabase(schema, tables, byColumns).relationships) assert.equal(r.orphans, 0, r.relationship);
});

test("a table held by column selects rows through one row map, reads its rows once as strings; rows written then are its rows", () => {
  const t = new BatchTable(["a", "b"], byColumn({ columns: ["a", "b"], rows: [["1", "x"], ["", "y"], ["30", "x"]] }));
  const picked = t.select([2, 0, 2]).select([1, 2]);
  assert.equal(picked.length, 2);
  assert.deepEqual(picked.batch!.toTable().rows, [["1", "x"], ["30", "x"]]);
  assert.deepEqual(picked.rows, [["1", "x"], ["30", "x"]]);
  assert.equal(t.length, 3);
  assert.deepEqual(t.rows, [["1", "x"], ["", "y"], ["30", "x"]]);
  assert.equal(t.byColumn, false, "the columns are dropped once the rows are read");
  assert.equal(t.batch, undefined);
  t.rows[0][1] = "z";
  assert.deepEqual(t.rows[0], ["1", "z"]);
  t.rows = [["2", "w"]];
  assert.equal(t.length, 1);
});

test("rows sorted by fixed-width texts (dates, zero-padded codes) come in the text order of a comparison sort, equal texts in row order; other shapes too", () => {
  const rng = new Rng(4);
  const p2 = (n: number): string => String(n).padStart(2, "0");
  const reference = (v: readonly string[]): number[] => v.map((_, i) => i).sort((a, b) => (v[a] < v[b] ? -1 : v[a] > v[b] ? 1 : a - b));
  const dates = Array.from({ length: 5000 }, () => `2001/${p2(1 + rng.int(3))}/${p2(1 + rng.int(28))} ${p2(rng.int(24))}:${p2(rng.int(4) * 15)}`);
  const codes = Array.from({ length: 3000 }, () => `A-${String(rng.int(200)).padStart(4, "0")}`);
  for (const v of [
    dates,
    codes,
    ["2001/01/02 10:00", "2001/01/02 09:59", "2001/1/02 10:00", "2001/01/02 10:00"], // a value of another width
    ["10:00", "09:59", "10-00", "10:00"], // another separator in one value
    ["9999999999999999", "1000000000000000", "9999999999999998"], // more digits than a double holds exactly
  ]) assert.deepEqual(stableOrder(v, false), reference(v), v.slice(0, 4).join(" "));
});
