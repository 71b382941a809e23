/**
 * A database child fitted from its file joined with its parents record by record
 * (src/sdk/io/record-join.ts, the workers' join in src/sdk/metadata/csv-chunks.ts, `trainingJoin` in
 * src/sdk/relational/plan.ts): the same metadata as the training table built in memory.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DataError, type Table } from "../src/sdk";
import type { Synthd } from "../src/sdk/client/client";
import type { CreateModelRequest, Metadata, Model } from "../src/contract";
import { readTable } from "../src/sdk/io/csv";
import { analyzeTable } from "../src/sdk/metadata/metadata";
import { readCsvFile } from "../src/sdk/metadata/table-tally";
import { fitDatabase, readDatabaseDir, readTableFile } from "../src/sdk/relational/database";
import { planDatabase, sortedColumn, trainingJoin } from "../src/sdk/relational/plan";
import { cardinality, detectSchema } from "../src/sdk/relational/detect";
import { checkSchema } from "../src/sdk/relational/schema";
import { ColumnTable } from "../src/sdk/io/column-table";

/**
 * places (a parent; a region with a comma, quoted) and trips with two keys to it (origin, dest)
 * whose day is never before its origin's opening (an order on the first key), and a quoted class
 * with an escaped quote.
 */
function writeDatabase(dir: string, trips = 400): void {
  const regions = ['"North, East"', "South", "West", "Centre"];
  const places = ["place_id,region,opened,size"];
  for (let i = 0; i < 30; i++) places.push(`P${String(i).padStart(3, "0")},${regions[i % 4]},2019-0${1 + (i % 9)}-1${i % 10},${(i * 37) % 500}`);
  writeFileSync(join(dir, "places.csv"), places.join("\n") + "\n");
  const classes = ["econ", '"econ ""plus"""', "business"];
  const rows = ["trip_id,origin,dest,day,fare,class"];
  for (let i = 0; i < trips; i++) {
    const o = (i * 7) % 30;
    const d = (o + 1 + (i % 11)) % 30;
    rows.push(`T${i},P${String(o).padStart(3, "0")},P${String(d).padStart(3, "0")},2021-${String(1 + (i % 12)).padStart(2, "0")}-${String(1 + (i % 28)).padStart(2, "0")},${50 + ((i * 13) % 300)}.5,${classes[i % 3]}`);
  }
  writeFileSync(join(dir, "trips.csv"), rows.join("\n") + "\n");
}

/** A client that records each Create Model request and answers a ready model. */
function recordingClient(sent: CreateModelRequest[]): Synthd {
  const model = (id: string): Model => ({ id, object: "model", status: "ready" }) as unknown as Model;
  return {
    models: {
      create: async (body: CreateModelRequest) => (sent.push(body), model(`m_${sent.length}`)),
      waitUntilReady: async (id: string) => model(id),
    },
  } as unknown as Synthd;
}

function withoutSource(m: Metadata): Metadata {
  const { source: _source, ...rest } = m as Metadata & { source?: unknown };
  return rest as Metadata;
}

test("fitDatabase fits a child from its file joined with its parents: the metadata of the training table in memory but its source name", async () => {
  const dir = mkdtempSync(join(tmpdir(), "synthd-dbfit-"));
  try {
    writeDatabase(dir);
    const db = await readDatabaseDir(dir);
    assert.deepEqual(db.schema.relationships.map((r) => `${r.child}.${r.childKey}`).sort(), ["trips.dest", "trips.origin"]);
    const streamed: CreateModelRequest[] = [];
    const fitted = await fitDatabase(recordingClient(streamed), db);
    const trips = fitted.plan.tables.trips;
    assert.equal(trips.foreignKeys.length, 2);
    assert.equal(trips.foreignKeys[0].orders?.[0]?.parentColumn, "opened");
    const inMemory: CreateModelRequest[] = [];
    await fitDatabase(recordingClient(inMemory), { ...db, files: undefined });
    const byTable = (sent: CreateModelRequest[]): Record<string, Metadata> => Object.fromEntries(fitted.plan.order.map((t, i) => [t, sent[i].metadata]));
    const [s, m] = [byTable(streamed), byTable(inMemory)];
    // The child came from its file (its name), the parent (children counts) from memory.
    assert.equal(s.trips.source?.name, "trips.csv");
    assert.equal(m.trips.source?.name, undefined);
    assert.equal(s.places.source?.name, undefined);
    assert.deepEqual(s.trips.features, trips.modelColumns);
    assert.deepEqual(withoutSource(s.trips), withoutSource(m.trips));
    assert.deepEqual(s.places, m.places);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the workers' join gives the in-memory training table's metadata, pass 2 included (a sample smaller than the table)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "synthd-dbjoin-"));
  try {
    writeDatabase(dir, 600);
    const db = await readDatabaseDir(dir);
    const { plan, training } = planDatabase(db.schema, db.tables);
    const j = trainingJoin(plan, "trips", db.tables)!;
    assert.equal(trainingJoin(plan, "places", db.tables), undefined, "a parent needs its children counts");
    // distinctBudget 12: a joined column (30 places' sizes) overflows its dictionary mid-range.
    for (const budget of [{}, { distinctBudget: 12 }]) {
      const opts = { columns: plan.tables.trips.overrides, sampleRows: 100, rareThreshold: 5, ...budget };
      const memory = await analyzeTable(training.trips, opts);
      for (const threads of [0, 2, 3]) {
        const file = await analyzeTable({ path: join(dir, "trips.csv"), join: j }, { ...opts, threads });
        assert.equal(file.sampledRows, 100);
        assert.deepEqual(file.metadata, memory.metadata, `threads ${threads}, ${JSON.stringify(budget)}`);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a joined file: a key no parent has gets blank cells; a column the join needs that the file lacks is a DataError", async () => {
  const dir = mkdtempSync(join(tmpdir(), "synthd-join-"));
  try {
    const path = join(dir, "c.csv");
    writeFileSync(path, "id, k ,x\n1,a,u\n2,zz,v\n3, b ,w\n");
    const lookups = [{ column: "k", keys: ["a", "b"], names: ["k.p", "k.q"], cells: [["pa", "qa"], ["pb", "qb"]] }];
    const read: Table = { columns: [], rows: [] };
    await readTable({ path, join: { keep: ["x"], lookups } }, (h) => void read.columns.push(...h), (r) => void read.rows.push(r));
    assert.deepEqual(read, { columns: ["x", "k.p", "k.q"], rows: [["u", "pa", "qa"], ["v", "", ""], ["w", "pb", "qb"]] });
    await assert.rejects(
      readTable({ path, join: { keep: ["y"], lookups } }, () => undefined, () => undefined),
      (e: unknown) => e instanceof DataError && /has no column "y", which its join needs/.test(e.message),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a database's CSV file is read by extraction's byte parser as csv-parse reads it; what that parser leaves is read by csv-parse", async () => {
  const dir = mkdtempSync(join(tmpdir(), "synthd-csvread-"));
  const viaCsvParse = async (path: string): Promise<Table> => {
    const t: Table = { columns: [], rows: [] };
    await readTable(path, (h) => void t.columns.push(...h), (r) => void t.rows.push(r));
    return t;
  };
  try {
    const path = join(dir, "t.csv");
    writeFileSync(path, 'id ; name;note\r\n1; Ann ;"a; b"\r\n\r\n2;"Bo ""B""";\r\n3;Ann;"two\r\nlines"\r\n');
    const read = readCsvFile(path);
    const plain = (t: Table | undefined): Table | undefined => (t === undefined ? undefined : { columns: t.columns, rows: t.rows });
    assert.deepEqual(plain(read), await viaCsvParse(path));
    assert.deepEqual(read?.rows[0], ["1", "Ann", "a; b"]);
    assert.deepEqual(plain((await readTableFile(path)).table), plain(read));
    for (const text of ['"id",x\n1,2\n', "id,x\n1,2,3\n", "id,x\n", "\ufeffid,x\n1,2\n"]) {
      writeFileSync(path, text);
      assert.equal(readCsvFile(path), undefined, JSON.stringify(text));
    }
    writeFileSync(path, "id,x\n1,2,3\n");
    await assert.rejects(readTableFile(path), (e: unknown) => e instanceof DataError && /line 2 has 3 fields but the header has 2/.test(e.message));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A table held by column whose rows must not be read (they throw). */
class NoRows extends ColumnTable {
  override get rows(): string[][] {
    throw new Error("the rows were read");
  }
}

test("key detection, the schema check and the plan read a child held by column without its rows: the same results as from rows", async () => {
  const dir = mkdtempSync(join(tmpdir(), "synthd-dbcols-"));
  try {
    writeDatabase(dir);
    const db = await readDatabaseDir(dir);
    const trips = db.tables.trips;
    assert.ok(trips instanceof ColumnTable, "a CSV file is read by column");
    const held: Record<string, Table> = { ...db.tables, trips: new NoRows(trips.columns, trips.values, trips.ids, trips.length) };
    const rows: Record<string, Table> = Object.fromEntries(Object.entries(db.tables).map(([t, x]) => [t, { columns: x.columns, rows: x.rows }]));
    assert.deepEqual(detectSchema(held), detectSchema(rows));
    checkSchema(db.schema, held);
    for (const r of db.schema.relationships) assert.deepEqual(cardinality(r, held), cardinality(r, rows));
    const [a, b] = [planDatabase(db.schema, held), planDatabase(db.schema, rows)];
    assert.deepEqual(a.plan, b.plan);
    assert.equal(a.plan.tables.trips.foreignKeys[0].orders?.[0]?.relation, "after");
    assert.equal(a.plan.tables.trips.foreignKeys[1].differsFromFirst, true);
    // The parent's children counts come from the child's key column.
    assert.deepEqual(a.training.places, b.training.places);
    assert.deepEqual(trainingJoin(a.plan, "trips", held), trainingJoin(b.plan, "trips", rows));
    // A sorted column is read by value: numbers as numbers ("10" after "9"), a blank or a decrease is no order.
    const column = (cells: string[]): ColumnTable => {
      const values = [...new Set(cells)];
      return new NoRows(["x"], [values], [Int32Array.from(cells, (c) => values.indexOf(c))], cells.length);
    };
    assert.deepEqual(sortedColumn(column(["1", "2", "2", "9", "10"]), new Set()), { column: "x", numeric: true });
    assert.deepEqual(sortedColumn(column(["a", "b", "b", "c"]), new Set()), { column: "x", numeric: false });
    for (const cells of [["1", "10", "9"], ["1", "", "2"], ["3", "3", "3"]]) assert.equal(sortedColumn(column(cells), new Set()), undefined, cells.join());
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
