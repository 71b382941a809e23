/**
 * The relational module's structure (src/sdk/relational/schema.ts, detect.ts): SDV multi-table
 * metadata read as SDV's docs write it, its errors, key detection and the cardinality line.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DataError, type Table } from "../src/sdk";
import { analyzeTable } from "../src/sdk/metadata/metadata";
import { writeTables } from "../src/sdk/io/formats";
import { readDatabaseDir } from "../src/sdk/relational/database";
import { checkSchema, readSdvMetadata, strftimeToLuxon, tableOrder } from "../src/sdk/relational/schema";
import { cardinality, describeRelationship, detectSchema } from "../src/sdk/relational/detect";

/** SDV's fake_hotels demo metadata, as its docs print it (`Metadata.save_to_json`). */
const HOTELS = {
  METADATA_SPEC_VERSION: "MULTI_TABLE_V1",
  tables: {
    hotels: {
      primary_key: "hotel_id",
      columns: {
        hotel_id: { sdtype: "id", regex_format: "HID_[0-9]{3}" },
        city: { sdtype: "categorical" },
        state: { sdtype: "categorical" },
        rating: { sdtype: "numerical" },
        classification: { sdtype: "categorical" },
      },
    },
    guests: {
      primary_key: "guest_email",
      columns: {
        guest_email: { sdtype: "email", pii: true },
        hotel_id: { sdtype: "id" },
        has_rewards: { sdtype: "boolean" },
        room_type: { sdtype: "categorical" },
        amenities_fee: { sdtype: "numerical", computer_representation: "Float" },
        checkin_date: { sdtype: "datetime", datetime_format: "%d %b %Y" },
        checkout_date: { sdtype: "datetime", datetime_format: "%d %b %Y" },
        room_rate: { sdtype: "numerical", computer_representation: "Float" },
        billing_address: { sdtype: "address", pii: true },
        credit_card_number: { sdtype: "credit_card_number", pii: true },
      },
    },
  },
  relationships: [{ parent_table_name: "hotels", parent_primary_key: "hotel_id", child_table_name: "guests", child_foreign_key: "hotel_id" }],
};

test("SDV's multi-table metadata is read as its docs write it: keys, relationships, sdtypes as column kinds", () => {
  const s = readSdvMetadata(HOTELS);
  assert.deepEqual(s.relationships, [{ parent: "hotels", parentKey: "hotel_id", child: "guests", childKey: "hotel_id" }]);
  assert.equal(s.tables.hotels.primaryKey, "hotel_id");
  assert.equal(s.tables.guests.primaryKey, "guest_email");
  assert.deepEqual(s.tables.guests.columns!.checkin_date, { type: "datetime", format: "dd MMM yyyy" });
  assert.deepEqual(s.tables.guests.columns!.has_rewards, { type: "categorical" });
  assert.deepEqual(s.tables.guests.columns!.billing_address, { type: "id" }, "PII sdtypes are written fresh");
  assert.deepEqual(s.tables.hotels.columns!.rating, { type: "numerical" });
  assert.deepEqual(tableOrder(s), ["hotels", "guests"]);
  // SDV >= 1.6 writes "V1" and sequences per table.
  const v1 = readSdvMetadata({ ...HOTELS, METADATA_SPEC_VERSION: "V1", tables: { ...HOTELS.tables, guests: { ...HOTELS.tables.guests, sequence_key: "hotel_id", sequence_index: "checkin_date" } } });
  assert.equal(v1.tables.guests.sequenceKey, "hotel_id");
  assert.equal(v1.tables.guests.sequenceIndex, "checkin_date");
});

test("bad SDV metadata is a DataError naming the field", () => {
  const bad = (json: unknown, re: RegExp): void => {
    assert.throws(() => readSdvMetadata(json), (e: unknown) => e instanceof DataError && re.test(e.message));
  };
  bad([], /JSON object/);
  bad({ ...HOTELS, METADATA_SPEC_VERSION: "SINGLE_TABLE_V1" }, /one table's metadata/);
  bad({ ...HOTELS, METADATA_SPEC_VERSION: undefined }, /METADATA_SPEC_VERSION must be one of MULTI_TABLE_V1, V1/);
  bad({ ...HOTELS, tables: {} }, /"tables" must be an object/);
  bad({ ...HOTELS, tables: { ...HOTELS.tables, hotels: { ...HOTELS.tables.hotels, primary_key: ["a", "b"] } } }, /tables\.hotels\.primary_key is a composite key/);
  bad({ ...HOTELS, tables: { ...HOTELS.tables, hotels: { ...HOTELS.tables.hotels, primary_key: "nope" } } }, /"nope" is not among the table's columns/);
  bad({ ...HOTELS, relationships: [{ ...HOTELS.relationships[0], parent_table_name: "inns" }] }, /names table "inns"/);
  bad({ ...HOTELS, relationships: [{ ...HOTELS.relationships[0], parent_primary_key: "city" }] }, /"city" is not the primary key of "hotels" \(hotel_id\)/);
  bad({ ...HOTELS, relationships: [{ ...HOTELS.relationships[0], child_foreign_key: "hotel" }] }, /"hotel" is not a column of "guests"/);
  bad({ ...HOTELS, relationships: [{ ...HOTELS.relationships[0], child_foreign_key: 3 }] }, /child_foreign_key must be a string/);
  bad({ ...HOTELS, tables: { ...HOTELS.tables, hotels: { ...HOTELS.tables.hotels, columns: { city: "categorical" } } } }, /tables\.hotels\.columns\.city must be an object with a string "sdtype"/);
});

test("strftime formats become luxon tokens; a directive without one gives none (the format is inferred)", () => {
  assert.equal(strftimeToLuxon("%Y-%m-%d %H:%M:%S"), "yyyy-MM-dd HH:mm:ss");
  assert.equal(strftimeToLuxon("%Y-%m-%dT%H:%M"), "yyyy-MM-dd'T'HH:mm");
  assert.equal(strftimeToLuxon("%j"), undefined);
});

/** users 1..30 (integer keys), movies m1..m8 (text keys), ratings by user and movie; three movies unrated. */
function moviesDb(): Record<string, Table> {
  const movies: Table = { columns: ["movieId", "genre"], rows: [] };
  for (let m = 1; m <= 8; m++) movies.rows.push([`m${m}`, m % 2 === 0 ? "drama" : "comedy"]);
  const users: Table = { columns: ["userId", "age"], rows: [] };
  for (let u = 1; u <= 30; u++) users.rows.push([String(u), String(20 + u)]);
  const ratings: Table = { columns: ["userId", "movieId", "stars"], rows: [] };
  for (let u = 1; u <= 30; u++) for (let m = 1; m <= 7; m++) if ((u * m) % 3 !== 0 || m === 1) ratings.rows.push([String(u), `m${m}`, String(1 + ((u + m) % 5))]);
  return { movies, users, ratings };
}

test("keys are detected from values and names; each relationship gets its cardinality line", () => {
  const tables = moviesDb();
  const s = detectSchema(tables);
  assert.equal(s.tables.movies.primaryKey, "movieId");
  assert.equal(s.tables.users.primaryKey, "userId");
  assert.equal(s.tables.ratings.primaryKey, undefined);
  const rels = s.relationships.map((r) => `${r.child}.${r.childKey} -> ${r.parent}.${r.parentKey}`).sort();
  // stars (1..5) is among users' integer keys by value, but its name does not point at users.
  assert.deepEqual(rels, ["ratings.movieId -> movies.movieId", "ratings.userId -> users.userId"]);
  checkSchema(s, tables);
  const r = s.relationships.find((x) => x.parent === "movies")!;
  const c = cardinality(r, tables);
  assert.deepEqual(c.counts, [30, 20, 0, 20, 20, 0, 20, 0]);
  assert.equal(describeRelationship(r, c), "ratings.movieId -> movies.movieId: 1 to 0-30 rows, median 20");
});

test("orphans and blank keys are counted and printed; a schema whose key repeats or is missing is refused", () => {
  const tables = moviesDb();
  tables.ratings.rows.push(["1", "m99", "3"], ["2", "", "4"]);
  const rel = { parent: "movies", parentKey: "movieId", child: "ratings", childKey: "movieId" };
  assert.match(describeRelationship(rel, cardinality(rel, tables)), /\(1 blank, 1 orphans\)$/);
  const schema = { tables: { movies: { primaryKey: "genre" }, users: {}, ratings: {} }, relationships: [] };
  assert.throws(() => checkSchema(schema, tables), /the primary key "genre" repeats "comedy"/);
  assert.throws(() => checkSchema({ tables: { films: {} }, relationships: [] }, tables), /names table "films", but there is no films\.csv/);
  const cycle = { tables: { a: { primaryKey: "x" }, b: { primaryKey: "y" } }, relationships: [
    { parent: "a", parentKey: "x", child: "b", childKey: "x" }, { parent: "b", parentKey: "y", child: "a", childKey: "y" }] };
  assert.throws(() => tableOrder(cycle), /cycle among a, b/);
});

test("a database directory reads Parquet tables beside CSV ones: keys detected, typed timestamps as datetimes", async () => {
  const dir = mkdtempSync(join(tmpdir(), "synthd-dbdir-"));
  try {
    const customers = ["id,segment,joined", ...Array.from({ length: 30 }, (_, i) => `${100 + i},${"ABC"[i % 3]},2020-0${1 + (i % 9)}-1${i % 10} 08:30:00`)].join("\n") + "\n";
    writeFileSync(join(dir, "customers.tmp.csv"), customers);
    const scanned = await analyzeTable(join(dir, "customers.tmp.csv"));
    const rows = customers.trimEnd().split("\n").map((l) => l.split(","));
    const table: Table = { columns: rows[0], rows: rows.slice(1) };
    await writeTables(join(dir, "customers.parquet"), (async function* () { yield table; })(), { format: "parquet", metadata: scanned.metadata });
    rmSync(join(dir, "customers.tmp.csv"));
    writeFileSync(join(dir, "orders.csv"), ["order_id,customer_id,amount", ...Array.from({ length: 40 }, (_, i) => `O${i},${100 + (i % 25)},${i * 3}`)].join("\n") + "\n");
    const db = await readDatabaseDir(dir);
    assert.equal(db.keys, "detected");
    assert.deepEqual(Object.keys(db.tables).sort(), ["customers", "orders"]);
    assert.equal(db.tables.customers.rows.length, 30);
    assert.deepEqual(db.schema.relationships, [{ parent: "customers", parentKey: "id", child: "orders", childKey: "customer_id" }]);
    assert.equal(db.schema.tables.customers.columns?.joined?.type, "datetime");
    writeFileSync(join(dir, "customers.csv"), customers);
    await assert.rejects(readDatabaseDir(dir), (e: unknown) => e instanceof DataError && /holds table customers twice \(customers\.csv and customers\.parquet\)/.test(e.message));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
