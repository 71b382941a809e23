/**
 * A database's flat training tables and its generation, parents first (src/sdk/relational/plan.ts,
 * generate.ts, evaluate.ts), with the resample baseline as every table's model (no server): keys
 * fresh and unique, no orphans, children per parent and parent x child pairs as in the real
 * database, and the measures able to tell a broken database apart.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { DataError, Rng, type Table } from "../src/sdk";
import type { DatabaseSchema } from "../src/sdk/relational/schema";
import { planDatabase } from "../src/sdk/relational/plan";
import { generateDatabase, matchedChildRows, MATCH_POOL, stableOrder, type TableModel } from "../src/sdk/relational/generate";
import { evaluateDatabase, resampleModels } from "../src/sdk/relational/evaluate";

/**
 * customers (integer id, segment, region) -> orders (text id, amount by segment, channel by
 * region) <- stores (text id, region): segment B customers order 3-9 times, A 0-2, C none; an
 * order's store is in its customer's region.
 */
function shop(seed = 1): { tables: Record<string, Table>; schema: DatabaseSchema } {
  const rng = new Rng(seed);
  const regions = ["north", "south", "east"];
  const stores: Table = { columns: ["store_id", "region"], rows: [] };
  for (let s = 0; s < 30; s++) stores.rows.push([`S${100 + s}`, regions[s % 3]]);
  const customers: Table = { columns: ["id", "segment", "region"], rows: [] };
  const orders: Table = { columns: ["order_id", "customer_id", "store_id", "amount", "channel"], rows: [] };
  for (let c = 1; c <= 300; c++) {
    const segment = ["A", "B", "C"][rng.int(3)];
    const region = regions[rng.int(3)];
    customers.rows.push([String(1000 + c), segment, region]);
    const n = segment === "B" ? 3 + rng.int(7) : segment === "A" ? rng.int(3) : 0;
    for (let k = 0; k < n; k++) {
      const store = stores.rows.filter((s) => s[1] === region)[rng.int(10)][0];
      const amount = segment === "B" ? 100 + rng.int(900) : 5 + rng.int(50);
      orders.rows.push([`ORD-${String(orders.rows.length).padStart(5, "0")}`, String(1000 + c), store, String(amount), region === "north" ? "web" : rng.int(2) ? "shop" : "phone"]);
    }
  }
  const schema: DatabaseSchema = {
    tables: { customers: { primaryKey: "id" }, orders: { primaryKey: "order_id" }, stores: { primaryKey: "store_id" } },
    relationships: [
      { parent: "customers", parentKey: "id", child: "orders", childKey: "customer_id" },
      { parent: "stores", parentKey: "store_id", child: "orders", childKey: "store_id" },
    ],
  };
  return { tables: { customers, orders, stores }, schema };
}

test("the flat tables: keys left out, a children-count column on the parent, parent columns as the child's context", () => {
  const { tables, schema } = shop();
  const { plan, training } = planDatabase(schema, tables);
  assert.deepEqual(plan.order, ["customers", "stores", "orders"]);
  assert.deepEqual(training.customers.columns, ["segment", "region", "orders.customer_id.rows"]);
  assert.deepEqual(training.orders.columns, ["amount", "channel", "customer_id.segment", "customer_id.region", "store_id.region"]);
  const perCustomer = new Map<string, number>();
  for (const r of tables.orders.rows) perCustomer.set(r[1], (perCustomer.get(r[1]) ?? 0) + 1);
  tables.customers.rows.forEach((r, i) => assert.equal(training.customers.rows[i][2], String(perCustomer.get(r[0]) ?? 0)));
  const o = tables.orders.rows[0];
  const customer = tables.customers.rows.find((c) => c[0] === o[1])!;
  assert.deepEqual(training.orders.rows[0], [o[3], o[4], customer[1], customer[2], tables.stores.rows.find((s) => s[0] === o[2])![1]]);
  assert.deepEqual(plan.tables.customers.overrides, { "orders.customer_id.rows": { type: "numerical" } });
});

test("generation: fresh unique keys in the real shape, no orphans, children as many as each parent's count, figures near a resample's", async () => {
  const { tables, schema } = shop();
  const { plan, training } = planDatabase(schema, tables);
  const synth = await generateDatabase(plan, resampleModels(plan, training), { seed: 5 });
  const report = evaluateDatabase(schema, tables, synth);
  for (const t of ["customers", "orders", "stores"]) {
    assert.equal(report.tables[t].duplicateKeys, 0, t);
    assert.equal(report.tables[t].blankKeys, 0, t);
  }
  assert.equal(report.tables.customers.syntheticRows, 300);
  assert.match(synth.orders.rows[0][0], /^ORD-\d{5}$/, "order keys in the real shape");
  assert.ok(synth.customers.rows.every((r) => /^\d+$/.test(r[0])));
  for (const r of report.relationships) assert.equal(r.orphans, 0, r.relationship);
  // Each order's customer has the segment and region its order was drawn for.
  const customer = new Map(synth.customers.rows.map((r) => [r[0], r]));
  const store = new Map(synth.stores.rows.map((r) => [r[0], r]));
  let regionAgrees = 0;
  for (const o of synth.orders.rows) {
    const c = customer.get(o[1])!;
    assert.notEqual(c[1], "C", "segment C customers have no orders");
    if (store.get(o[2])![1] === c[2]) regionAgrees++;
  }
  assert.equal(regionAgrees, synth.orders.rows.length, "the second parent is matched on its context columns");
  const byCustomer = report.relationships.find((r) => r.relationship === "orders.customer_id -> customers.id")!;
  assert.ok(byCustomer.cardinalityTvd < 0.1, `cardinality TVD ${byCustomer.cardinalityTvd}`);
  assert.ok(byCustomer.pairTvd < 0.1, `pair TVD ${byCustomer.pairTvd}`);
  assert.equal(byCustomer.pairs, 2 * 2);
});

test("rows keep the real order (orders by key), children total the real ratio, the second key keeps its parents' counts", async () => {
  const { tables, schema } = shop();
  const { plan, training } = planDatabase(schema, tables);
  assert.deepEqual(plan.tables.orders.sortedBy, { column: "order_id", numeric: false });
  const synth = await generateDatabase(plan, resampleModels(plan, training), { seed: 8 });
  const keys = synth.orders.rows.map((r) => r[0]);
  assert.deepEqual(keys, [...keys].sort());
  assert.ok(Math.abs(synth.orders.rows.length - tables.orders.rows.length) < 0.05 * tables.orders.rows.length, `${synth.orders.rows.length} orders for ${tables.orders.rows.length}`);
  const byStore = evaluateDatabase(schema, tables, synth).relationships.find((r) => r.relationship === "orders.store_id -> stores.store_id")!;
  assert.equal(byStore.orphans, 0);
  assert.ok(byStore.cardinalityTvd < 0.35, `orders per store TVD ${byStore.cardinalityTvd}`);
});

test("the measures fail a broken database: orders moved to random customers, duplicate keys", async () => {
  const { tables, schema } = shop();
  const { plan, training } = planDatabase(schema, tables);
  const good = evaluateDatabase(schema, tables, await generateDatabase(plan, resampleModels(plan, training), { seed: 6 }));
  const synth = await generateDatabase(plan, resampleModels(plan, training), { seed: 6 });
  const rng = new Rng(9);
  const ids = synth.customers.rows.map((r) => r[0]);
  for (const o of synth.orders.rows) o[1] = ids[rng.int(ids.length)];
  synth.orders.rows[1][1] = "no-such-customer";
  synth.stores.rows[1][0] = synth.stores.rows[0][0];
  const bad = evaluateDatabase(schema, tables, synth);
  const rel = (r: typeof bad) => r.relationships.find((x) => x.relationship === "orders.customer_id -> customers.id")!;
  assert.equal(rel(bad).orphans, 1);
  assert.equal(bad.tables.stores.duplicateKeys, 1);
  assert.ok(rel(bad).cardinalityTvd > 1.5 * rel(good).cardinalityTvd + 0.1, `${rel(bad).cardinalityTvd} vs ${rel(good).cardinalityTvd}`);
  assert.ok(rel(bad).pairTvd > 1.5 * rel(good).pairTvd + 0.05, `${rel(bad).pairTvd} vs ${rel(good).pairTvd}`);
});

test("scale and sizes set the root tables' rows, children follow; the same seed gives the same database", async () => {
  const { tables, schema } = shop();
  const { plan, training } = planDatabase(schema, tables);
  const models = resampleModels(plan, training);
  const half = await generateDatabase(plan, models, { seed: 2, scale: 0.5, sizes: { stores: 12 } });
  assert.equal(half.customers.rows.length, 150);
  assert.equal(half.stores.rows.length, 12);
  const counts = (t: Table) => t.rows.length;
  assert.ok(counts(half.orders) > 0.3 * counts(tables.orders) && counts(half.orders) < 0.7 * counts(tables.orders));
  assert.deepEqual(await generateDatabase(plan, models, { seed: 2, scale: 0.5 }), await generateDatabase(plan, models, { seed: 2, scale: 0.5 }));
  // A child's size is exact, spread over its parents as their counts say; keys stay consistent.
  const sized = await generateDatabase(plan, models, { seed: 2, sizes: { orders: 77 } });
  assert.equal(sized.orders.rows.length, 77);
  const report = evaluateDatabase(schema, tables, sized);
  for (const r of report.relationships) assert.equal(r.orphans, 0, r.relationship);
  const ids = new Map(sized.customers.rows.map((r) => [r[0], r[1]]));
  assert.ok(sized.orders.rows.every((o) => ids.get(o[1]) !== "C"), "customers that order none still order none");
});

test("a where on a root table is passed to its model, and its children follow the rows it gives", async () => {
  const { tables, schema } = shop();
  const { plan, training } = planDatabase(schema, tables);
  const models: Record<string, TableModel> = resampleModels(plan, training);
  const inner = models.customers;
  const seen: unknown[] = [];
  models.customers = {
    sample: async (n, seed, where) => {
      seen.push(where);
      const t = await inner.sample(n * 4, seed);
      return { columns: t.columns, rows: t.rows.filter((r) => r[0] === "B").slice(0, n) };
    },
    sampleSeeded: inner.sampleSeeded.bind(inner),
  };
  const db = await generateDatabase(plan, models, { seed: 3, where: { customers: { segment: "B" } } });
  assert.deepEqual(seen, [{ segment: "B" }]);
  assert.ok(db.customers.rows.every((r) => r[1] === "B"));
  assert.ok(db.orders.rows.length >= 3 * db.customers.rows.length, "every segment B customer has 3 to 9 orders");
});

test("bad options are clear errors before any generation", async () => {
  const { tables, schema } = shop();
  const { plan, training } = planDatabase(schema, tables);
  const models = resampleModels(plan, training);
  await assert.rejects(generateDatabase(plan, models, { scale: 0 }), /scale must be a positive number/);
  await assert.rejects(generateDatabase(plan, models, { where: { orders: {} } }), (e: unknown) => e instanceof DataError && /only root tables/.test(e.message));
  await assert.rejects(generateDatabase(plan, models, { sizes: { orders: 0 } }), /size of "orders" must be a positive integer/);
  await assert.rejects(generateDatabase(plan, models, { where: { shops: {} } }), /table "shops", which the database lacks/);
  await assert.rejects(generateDatabase(plan, models, { sizes: { customers: 2.5 } }), /positive integer/);
});

/** regions (id, climate) -> readings, a complete panel: each region's level moves a step a year. */
function panel(): { tables: Record<string, Table>; schema: DatabaseSchema } {
  const rng = new Rng(4);
  const regions: Table = { columns: ["region", "climate"], rows: [] };
  const readings: Table = { columns: ["region", "year", "level"], rows: [] };
  for (let e = 0; e < 60; e++) {
    const climate = ["dry", "wet"][e % 2];
    regions.rows.push([`R${e}`, climate]);
    let level = climate === "dry" ? 10 + rng.int(10) : 40 + rng.int(10);
    for (let y = 2000; y < 2006; y++) {
      readings.rows.push([`R${e}`, String(y), String(level)]);
      level += rng.int(3);
    }
  }
  const schema: DatabaseSchema = {
    tables: { regions: { primaryKey: "region" }, readings: { sequenceKey: "region", sequenceIndex: "year" } },
    relationships: [{ parent: "regions", parentKey: "region", child: "readings", childKey: "region" }],
  };
  return { tables: { regions, readings }, schema };
}

test("a sequence table is fitted beside its previous row; a complete panel stays complete, values move as they did", async () => {
  const { tables, schema } = panel();
  const { plan, training } = planDatabase(schema, tables);
  const seq = plan.tables.readings.sequence!;
  assert.deepEqual(seq.periods, ["2000", "2001", "2002", "2003", "2004", "2005"]);
  assert.deepEqual(training.readings.columns, ["year", "level", "region.climate", "region.first", "prev.year", "prev.level", "level.step"]);
  const [l0, l1] = [tables.readings.rows[0][2], tables.readings.rows[1][2]];
  assert.deepEqual(training.readings.rows[1], ["2001", l1, "dry", "0", "2000", l0, String(Number(l1) - Number(l0))]);
  assert.deepEqual(training.readings.rows[0].slice(3), ["1", "", "", ""]);
  assert.deepEqual(seq.steps, [{ column: "level", step: "level.step", decimals: 0, min: 10, max: Math.max(...tables.readings.rows.map((r) => Number(r[2]))) }]);
  const models = resampleModels(plan, training);
  await assert.rejects(generateDatabase(plan, models, { sizes: { readings: 10 } }), (e: unknown) => e instanceof DataError && /a sequence table's rows follow its entities/.test(e.message));
  const good = evaluateDatabase(schema, tables, await generateDatabase(plan, models, { seed: 1 })).sequences[0];
  assert.equal(good.panelComplete, 1);
  const step = good.meanStep.find((m) => m.column === "level")!;
  assert.ok(Math.abs(step.synthetic - step.real) < 0.5, `mean step ${step.synthetic} vs ${step.real}`);
  // A model that forgets the previous row (no lag-1 context, no change drawn): the lag-1 measure sees it.
  const inner = models.readings;
  models.readings = {
    sample: inner.sample.bind(inner),
    sampleSeeded: async (seed, s) => {
      const t = await inner.sampleSeeded({ columns: seed.columns, rows: seed.rows.map((r) => r.map((v, j) => (seed.columns[j].startsWith("prev.") ? "" : v))) }, s);
      const sj = t.columns.indexOf("level.step");
      return { columns: t.columns, rows: t.rows.map((r) => r.map((v, j) => (j === sj ? "" : v))) };
    },
  };
  const bad = evaluateDatabase(schema, tables, await generateDatabase(plan, models, { seed: 1 })).sequences[0];
  assert.ok(bad.lagTvd > 1.5 * good.lagTvd, `lag-1 TVD ${bad.lagTvd} vs ${good.lagTvd}`);
  assert.ok(bad.meanStep.find((m) => m.column === "level")!.synthetic > 2 * step.real);
});

test("a sequence key that is no foreign key, or a sequence without an index, is a clear error", () => {
  const { tables, schema } = panel();
  assert.throws(() => planDatabase({ ...schema, relationships: [] }, tables), /sequence_key "region" must be a foreign key to a table of its entities/);
  assert.throws(() => planDatabase({ ...schema, tables: { ...schema.tables, readings: { sequenceKey: "region" } } }, tables), /needs a sequence_index/);
});

test("two keys to one table that never agree in the real rows (a trip's origin and destination) never agree in the output", async () => {
  const rng = new Rng(12);
  const places: Table = { columns: ["code", "state"], rows: [] };
  for (let p = 0; p < 25; p++) places.rows.push([`P${p}`, ["CA", "NY"][p % 2]]);
  const trips: Table = { columns: ["origin", "destination", "km"], rows: [] };
  for (let t = 0; t < 600; t++) {
    const o = rng.int(5); // five hubs of origin
    let d = rng.int(25);
    if (d === o) d = (d + 1) % 25;
    trips.rows.push([`P${o}`, `P${d}`, String(100 + rng.int(900))]);
  }
  const schema: DatabaseSchema = {
    tables: { places: { primaryKey: "code" }, trips: {} },
    relationships: [
      { parent: "places", parentKey: "code", child: "trips", childKey: "origin" },
      { parent: "places", parentKey: "code", child: "trips", childKey: "destination" },
    ],
  };
  const tables = { places, trips };
  const { plan, training } = planDatabase(schema, tables);
  assert.equal(plan.tables.trips.foreignKeys[1].differsFromFirst, true);
  const synth = await generateDatabase(plan, resampleModels(plan, training), { seed: 4 });
  assert.ok(synth.trips.rows.length > 500);
  assert.equal(synth.trips.rows.filter((r) => r[0] === r[1]).length, 0);
  const report = evaluateDatabase(schema, tables, synth);
  for (const r of report.relationships) assert.equal(r.orphans, 0);
});

test("a second key keeps every row in its context: each context's parents take exactly its rows, drawn counts scaled at its hubs; never the first key's parent", async () => {
  // Real: 10 places (CA, NY alternating), 100 trips; the stand-in models draw what the test sets.
  const places: Table = { columns: ["code", "state"], rows: Array.from({ length: 10 }, (_, p) => [`P${p}`, p % 2 === 0 ? "CA" : "NY"]) };
  const trips: Table = { columns: ["origin", "destination", "km"], rows: Array.from({ length: 100 }, (_, t) => [`P${t % 10}`, `P${(t + 1) % 10}`, "5"]) };
  const schema: DatabaseSchema = {
    tables: { places: { primaryKey: "code" }, trips: {} },
    relationships: [
      { parent: "places", parentKey: "code", child: "trips", childKey: "origin" },
      { parent: "places", parentKey: "code", child: "trips", childKey: "destination" },
    ],
  };
  const { plan } = planDatabase(schema, { places, trips });
  const pc = plan.tables.places.modelColumns;
  assert.deepEqual(pc, ["state", "trips.origin.rows", "trips.destination.rows"]);
  // Destination counts with hubs (CA: 30, 20, 10, 6, 4; NY: 10, 8, 6, 4, 2); both keys sum to 100.
  const destination = [30, 4, 20, 6, 10, 8, 6, 2, 4, 10];
  const placeModel: TableModel = {
    sample: async () => ({ columns: pc, rows: places.rows.map((r, i) => [r[1], "10", String(destination[i])]) }),
    sampleSeeded: async () => assert.fail("no seeded request"),
  };
  const tc = plan.tables.trips.modelColumns;
  assert.deepEqual(tc, ["km", "origin.state", "destination.state"]);
  const tripModel: TableModel = {
    // About 60% of the rows drawn toward CA, whose places have 70 slots; km is the pool row.
    sample: async (n) => ({ columns: tc, rows: Array.from({ length: n }, (_, i) => [String(i), i % 2 === 0 ? "CA" : "NY", i % 5 < 3 ? "CA" : "NY"]) }),
    sampleSeeded: async () => assert.fail("no seeded request"),
    codeKeys: (t) => t.rows.map((r) => r.join("\u0000")),
  };
  const synth = await generateDatabase(plan, { places: placeModel, trips: tripModel }, { seed: 3 });
  assert.equal(synth.trips.rows.length, 100);
  assert.equal(synth.trips.rows.filter((r) => r[0] === r[1]).length, 0, "never the origin");
  const per = new Map<string, number>();
  for (const r of synth.trips.rows) per.set(r[1], (per.get(r[1]) ?? 0) + 1);
  // Every row keeps the state drawn for its destination.
  const state = new Map(synth.places.rows.map((r) => [r[0], r[1]]));
  const drawnState = (r: string[]): string => (Number(r[2]) % 5 < 3 ? "CA" : "NY");
  const ca = synth.trips.rows.filter((r) => drawnState(r) === "CA").length;
  assert.ok(ca > 50 && ca < 70, `${ca} rows drawn toward CA`);
  assert.equal(synth.trips.rows.filter((r) => drawnState(r) === state.get(r[1])).length, 100);
  // A state's places take its rows; the places under the hubs (holding half its drawn count) keep theirs.
  for (const [st, hubs] of [["CA", 2], ["NY", 2]] as const) {
    const got = synth.places.rows.filter((r) => r[1] === st).map((r) => per.get(r[0]) ?? 0).sort((a, b) => b - a);
    const want = destination.filter((_, i) => places.rows[i][1] === st).sort((a, b) => b - a);
    assert.equal(got.reduce((a, b) => a + b, 0), st === "CA" ? ca : 100 - ca, `${st}: its rows`);
    assert.deepEqual(got.slice(hubs), want.slice(hubs), `${st}: small places keep their drawn count`);
  }
});

test("children counts drawn over the real total are scaled at the hubs: small counts stay as drawn", async () => {
  // Real: 10 customers, 50 orders; the model draws 80 children, 60 of them on one hub.
  const customers: Table = { columns: ["id", "segment"], rows: Array.from({ length: 10 }, (_, i) => [`C${i}`, i % 2 === 0 ? "A" : "B"]) };
  const orders: Table = { columns: ["order_id", "customer_id", "amount"], rows: Array.from({ length: 50 }, (_, i) => [`O${i}`, `C${i % 10}`, "5"]) };
  const schema: DatabaseSchema = { tables: { customers: { primaryKey: "id" }, orders: { primaryKey: "order_id" } }, relationships: [{ parent: "customers", parentKey: "id", child: "orders", childKey: "customer_id" }] };
  const { plan } = planDatabase(schema, { customers, orders });
  const drawn = [1, 1, 1, 1, 2, 2, 3, 3, 60, 6];
  const models: Record<string, TableModel> = {
    customers: { sample: async () => ({ columns: plan.tables.customers.modelColumns, rows: drawn.map((c, i) => [i % 2 === 0 ? "A" : "B", String(c)]) }), sampleSeeded: async () => assert.fail("no seeded request") },
    orders: {
      sample: async (n) => ({ columns: plan.tables.orders.modelColumns, rows: Array.from({ length: n }, (_, i) => ["5", i % 2 === 0 ? "A" : "B"]) }),
      sampleSeeded: async () => assert.fail("no seeded request"),
      codeKeys: (t) => t.rows.map((r) => r.join("\u0000")),
    },
  };
  const synth = await generateDatabase(plan, models, { seed: 2 });
  const per = new Map<string, number>();
  for (const r of synth.orders.rows) per.set(r[1], (per.get(r[1]) ?? 0) + 1);
  const got = synth.customers.rows.map((r) => per.get(r[0]) ?? 0).sort((a, b) => a - b);
  // The hub takes 50 - 20 = 30; scaling every count by 50/80 would have rounded some 1s to 0.
  assert.deepEqual(got, [1, 1, 1, 1, 2, 2, 3, 3, 6, 30]);
});

test("rows sorted by a column: ascending, numbers as numbers, equal values (also 1 and 1.0) in row order", () => {
  assert.deepEqual(stableOrder(["b", "a", "c", "a"], false), [1, 3, 0, 2]);
  assert.deepEqual(stableOrder(["10", "9", "1.0", "1", "-2"], true), [4, 2, 3, 1, 0]);
  assert.deepEqual(stableOrder([], true), []);
});

/**
 * patients (born) -> visits (visited, at or after birth, another format) and orders (placed) ->
 * lines (shipped: its order's date on every row).
 */
function clinic(seed = 3): { tables: Record<string, Table>; schema: DatabaseSchema } {
  const rng = new Rng(seed);
  const day = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
  const minute = (ms: number): string => new Date(ms).toISOString().slice(0, 16).replace("T", " ");
  const patients: Table = { columns: ["patient_id", "born", "sex"], rows: [] };
  const visits: Table = { columns: ["visit_id", "patient_id", "visited", "kind"], rows: [] };
  const orders: Table = { columns: ["order_id", "placed", "channel"], rows: [] };
  const lines: Table = { columns: ["line_id", "order_id", "shipped", "qty"], rows: [] };
  for (let p = 0; p < 80; p++) {
    const born = Date.UTC(1940, 0, 1) + rng.int(25_000) * 86_400_000;
    patients.rows.push([`P${p}`, day(born), "FM"[rng.int(2)]]);
    for (let k = rng.int(4); k > 0; k--) visits.rows.push([`V${visits.rows.length}`, `P${p}`, minute(born + (rng.int(30_000) * 86_400 + rng.int(86_400)) * 1000), ["check", "test"][rng.int(2)]]);
    const placed = day(Date.UTC(2020, 0, 1) + rng.int(700) * 86_400_000);
    orders.rows.push([`O${p}`, placed, ["web", "shop"][rng.int(2)]]);
    for (let k = 1 + rng.int(3); k > 0; k--) lines.rows.push([`L${lines.rows.length}`, `O${p}`, placed, String(1 + rng.int(5))]);
  }
  const schema: DatabaseSchema = {
    tables: { patients: { primaryKey: "patient_id" }, visits: { primaryKey: "visit_id" }, orders: { primaryKey: "order_id" }, lines: { primaryKey: "line_id" } },
    relationships: [
      { parent: "patients", parentKey: "patient_id", child: "visits", childKey: "patient_id" },
      { parent: "orders", parentKey: "order_id", child: "lines", childKey: "order_id" },
    ],
  };
  return { tables: { patients, visits, orders, lines }, schema };
}

/** Rows of `child` whose datetime breaks the relation to its parent's (joined on `fk`). */
function broken(child: Table, parent: Table, fk: string, pk: string, column: string, parentColumn: string, relation: "equal" | "after"): number {
  const [fj, cj] = [child.columns.indexOf(fk), child.columns.indexOf(column)];
  const [kj, pj] = [parent.columns.indexOf(pk), parent.columns.indexOf(parentColumn)];
  const at = new Map(parent.rows.map((r) => [r[kj], Date.parse(r[pj] + "Z")]));
  const ms = (v: string): number => Date.parse((v.length === 10 ? `${v} 00:00` : v).replace(" ", "T") + "Z");
  return child.rows.filter((r) => (relation === "equal" ? ms(r[cj]) !== at.get(r[fj]) : !(ms(r[cj]) >= at.get(r[fj])!))).length;
}

test("cross-table orders the real rows always hold are found on the join and kept in every generated row", async () => {
  const { tables, schema } = clinic();
  const { plan, training } = planDatabase(schema, tables);
  const visitOrders = plan.tables.visits.foreignKeys[0].orders!;
  assert.equal(visitOrders.length, 1);
  assert.deepEqual({ ...visitOrders[0], gaps: undefined }, { column: "visited", parentColumn: "born", relation: "after", format: "yyyy-MM-dd HH:mm", parentFormat: "yyyy-MM-dd", gaps: undefined });
  assert.deepEqual(plan.tables.lines.foreignKeys[0].orders, [{ column: "shipped", parentColumn: "placed", relation: "equal", format: "yyyy-MM-dd", parentFormat: "yyyy-MM-dd" }]);
  const check = (synth: Record<string, Table>): [number, number] => [
    broken(synth.visits, synth.patients, "patient_id", "patient_id", "visited", "born", "after"),
    broken(synth.lines, synth.orders, "order_id", "order_id", "shipped", "placed", "equal"),
  ];
  assert.deepEqual(check(tables), [0, 0], "the made-up database holds both");
  // The resample draws a child's dates among rows of the same context, not the same parent: without the orders it breaks both.
  const bare = structuredClone(plan);
  for (const t of ["visits", "lines"]) delete bare.tables[t].foreignKeys[0].orders;
  const [visitsBroken, linesBroken] = check(await generateDatabase(bare, resampleModels(bare, training), { seed: 4 }));
  assert.ok(visitsBroken > 10 && linesBroken > 10, `without the orders: ${visitsBroken} visits before birth, ${linesBroken} lines off their order's date`);
  const synth = await generateDatabase(plan, resampleModels(plan, training), { seed: 4 });
  assert.deepEqual(check(synth), [0, 0], "kept in 100% of rows");
  assert.ok(synth.visits.rows.every((r) => /^\d{4}-\d\d-\d\d \d\d:\d\d$/.test(r[2])), "repaired values in the column's format");
  // One real row the other way round, and the order is not claimed.
  tables.visits.rows[0][2] = "1900-01-01 00:00";
  assert.equal(planDatabase(schema, tables).plan.tables.visits.foreignKeys[0].orders, undefined);
});

test("a child drawn plainly and matched: every parent gets its count, rows of its own context first, then its first context column's", async () => {
  // Parents: 40 of context (north, 1), 40 of (south, 2); the pool has too few (south, 2) rows, enough (south, 9).
  const parent: Table = { columns: ["region", "tier"], rows: Array.from({ length: 80 }, (_, i) => (i < 40 ? ["north", "1"] : ["south", "2"])) };
  const counts = parent.rows.map((_, i) => 1 + (i % 3));
  const drawn: number[] = [];
  const model: TableModel = {
    sample: async (n) => {
      drawn.push(n);
      return { columns: ["amount", "o.region", "o.tier"], rows: Array.from({ length: n }, (_, i) => (i % 2 === 1 ? [`${i}`, "south", i % 4 === 3 ? "2" : "9"] : [`${i}`, "north", "1"])) };
    },
    sampleSeeded: async () => assert.fail("no seeded request"),
    codeKeys: (t) => t.rows.map((r) => r.join("\u0000")),
  };
  const fk = { parent: "p", parentKey: "id", childKey: "o", context: [{ parentColumn: "region", column: "o.region" }, { parentColumn: "tier", column: "o.tier" }] };
  const { rows, parentRow } = await matchedChildRows(model, fk, parent, counts, 9);
  const n = counts.reduce((a, b) => a + b, 0);
  assert.deepEqual(drawn, [Math.ceil(n * MATCH_POOL)], "one plain draw of the pool");
  assert.equal(rows.rows.length, n);
  assert.deepEqual(counts.map((_, i) => parentRow.filter((p) => p === i).length), counts, "each parent its count");
  assert.equal(new Set(rows.rows.map((r) => r[0])).size, n, "a drawn row is used once");
  const north = rows.rows.filter((_, k) => parentRow[k] < 40);
  assert.ok(north.every((r) => r[1] === "north" && r[2] === "1"), "a context the pool has plenty of is matched exactly");
  const south = rows.rows.filter((_, k) => parentRow[k] >= 40);
  const exact = south.filter((r) => r[2] === "2").length;
  assert.ok(exact > 0 && south.every((r) => r[1] === "south"), "then rows agreeing on the first context column");
  const exactInPool = Array.from({ length: Math.ceil(n * MATCH_POOL) }, (_, i) => i).filter((i) => i % 4 === 3).length;
  assert.equal(exact, Math.min(exactInPool, south.length), "the exact rows are all used first");
});

test("a child drawn with its codes is matched on the drawn codes, not on its decoded cells, and its codes follow the rows chosen", async () => {
  // Parents of context codes 0 and 1; the decoded context cells say nothing ("?"), the codes do.
  const parent: Table = { columns: ["region"], rows: Array.from({ length: 60 }, (_, i) => [i < 30 ? "north" : "south"]) };
  const counts = parent.rows.map((_, i) => 1 + (i % 2));
  const model: TableModel = {
    sample: async () => assert.fail("a model with sampleCoded draws with its codes"),
    sampleSeeded: async () => assert.fail("no seeded request"),
    codeKeys: (t) => t.rows.map((r) => r.map((v) => (v === "north" ? "0" : v === "south" ? "1" : "?")).join("\u0000")),
    sampleCoded: async (n, _seed, columns) => {
      assert.deepEqual(columns, ["o.region"]);
      const codes = Int32Array.from({ length: n }, (_, i) => i % 2);
      return { rows: { columns: ["row", "o.region"], rows: Array.from({ length: n }, (_, i) => [String(i), "?"]) }, coded: [{ column: "o.region", codes, keys: ["0", "1"] }] };
    },
  };
  const fk = { parent: "p", parentKey: "id", childKey: "o", context: [{ parentColumn: "region", column: "o.region" }] };
  const { rows, parentRow, coded } = await matchedChildRows(model, fk, parent, counts, 3, ["o.region"]);
  assert.equal(rows.rows.length, counts.reduce((a, b) => a + b, 0));
  const code = (k: number): number => Number(rows.rows[k][0]) % 2;
  const north = rows.rows.map((_, k) => k).filter((k) => parentRow[k] < 30);
  const south = rows.rows.map((_, k) => k).filter((k) => parentRow[k] >= 30);
  assert.ok(north.every((k) => code(k) === 0) && south.every((k) => code(k) === 1), "each child drawn with its parent's code");
  assert.deepEqual(Array.from(coded![0].codes), rows.rows.map((_, k) => code(k)), "codes aligned with the rows chosen");
});

test("a child with two keys draws its first key's context as codes; the second key is matched on the cells; no orphans", async () => {
  const { tables, schema } = shop();
  const { plan, training } = planDatabase(schema, tables);
  const models = resampleModels(plan, training);
  const plain = models.orders;
  const asked: string[][] = [];
  models.orders = {
    sample: (n, s) => plain.sample(n, s),
    sampleSeeded: (t, s) => plain.sampleSeeded(t, s),
    codeKeys: (t) => t.rows.map((r) => r.join("\u0000")),
    sampleCoded: async (n, s, columns) => {
      asked.push([...columns]);
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
      return { rows, coded };
    },
  };
  const synth = await generateDatabase(plan, models, { seed: 4 });
  assert.equal(plan.tables.orders.foreignKeys.length, 2);
  assert.deepEqual(asked, [plan.tables.orders.foreignKeys[0].context.map((c) => c.column)]);
  for (const r of evaluateDatabase(schema, tables, synth).relationships) assert.equal(r.orphans, 0, r.relationship);
});

test("a sequence whose index never repeats within an entity never repeats it in the output, even when the model draws a repeat", async () => {
  // people -> jobs (a sequence by start year, 1-4 jobs each, years increasing by 1-6).
  const rng = new Rng(5);
  const people: Table = { columns: ["person", "field"], rows: [] };
  const jobs: Table = { columns: ["person", "start", "pay"], rows: [] };
  for (let p = 0; p < 40; p++) {
    people.rows.push([`U${p}`, ["art", "law"][p % 2]]);
    let year = 1990 + rng.int(20);
    for (let k = 1 + rng.int(4); k > 0; k--, year += 1 + rng.int(6)) jobs.rows.push([`U${p}`, String(year), String(30 + rng.int(50))]);
  }
  const schema: DatabaseSchema = {
    tables: { people: { primaryKey: "person" }, jobs: { sequenceKey: "person", sequenceIndex: "start" } },
    relationships: [{ parent: "people", parentKey: "person", child: "jobs", childKey: "person" }],
  };
  const { plan, training } = planDatabase(schema, { people, jobs });
  const seq = plan.tables.jobs.sequence!;
  assert.equal(seq.periods, undefined);
  assert.deepEqual([seq.increases!.deciles[0], seq.increases!.deciles[10], seq.increases!.decimals], [1, 6, 0]);
  const models = resampleModels(plan, training);
  // A model that writes every step in its entity's previous year (an entity-year twice).
  models.jobs = {
    sample: () => assert.fail("a sequence is drawn seeded"),
    sampleSeeded: async (seed) => {
      const cols = plan.tables.jobs.modelColumns;
      return {
        columns: cols,
        rows: seed.rows.map((r) => cols.map((c) => {
          const j = seed.columns.indexOf(c);
          if (j >= 0) return r[j];
          if (c === "start") return r[seed.columns.indexOf(seq.lag[0].prev)] || "2000";
          return "40";
        })),
      };
    },
  };
  const synth = await generateDatabase(plan, models, { seed: 3 });
  const seen = new Map<string, number>();
  let steps = 0;
  for (const r of synth.jobs.rows) {
    const last = seen.get(r[0]);
    if (last !== undefined) {
      assert.ok(Number(r[1]) > last, `${r[0]}: ${r[1]} after ${last}`);
      assert.ok(Number(r[1]) - last >= 1 && Number(r[1]) - last <= 6, "an increase the real rows have");
      steps++;
    }
    seen.set(r[0], Number(r[1]));
  }
  assert.ok(steps > 10, `${steps} repeated years moved forward`);
});

test("a primary key of public names (countries) keeps real names, distinct, each on a row of its own cluster; more rows than names get fresh keys", async () => {
  const names = ["Afghanistan", "Argentina", "Australia", "Brazil", "Canada", "Chile", "China", "Egypt", "France", "Germany", "India", "Japan", "Kenya", "Mexico", "Norway", "Peru", "Spain", "Sweden", "Turkey", "Vietnam", "Zambia", "Ghana"];
  const countries: Table = { columns: ["country", "cluster"], rows: names.map((c, i) => [c, String(i % 3)]) };
  const years: Table = { columns: ["country", "year", "pop"], rows: names.flatMap((c, i) => [2000, 2005].map((y) => [c, String(y), String(1000 + i * 10 + y)])) };
  const schema: DatabaseSchema = {
    tables: { countries: { primaryKey: "country" }, years: {} },
    relationships: [{ parent: "countries", parentKey: "country", child: "years", childKey: "country" }],
  };
  const { plan, training } = planDatabase(schema, { countries, years });
  assert.equal(plan.tables.countries.publicKey?.vocabulary, "country");
  const synth = await generateDatabase(plan, resampleModels(plan, training), { seed: 6 });
  const keys = synth.countries.rows.map((r) => r[0]);
  assert.deepEqual([...keys].sort(), [...names].sort(), "every real name once");
  const cluster = new Map(countries.rows.map((r) => [r[0], r[1]]));
  const agree = synth.countries.rows.filter((r) => cluster.get(r[0]) === r[1]).length;
  assert.ok(agree >= synth.countries.rows.length - 2, `${agree} of ${synth.countries.rows.length} names sit on a row of their own cluster`);
  assert.ok(synth.years.rows.every((r) => names.includes(r[0])), "children point at them");
  const more = (await generateDatabase(plan, resampleModels(plan, training), { seed: 6, sizes: { countries: 30 } })).countries.rows.map((r) => r[0]);
  assert.equal(new Set(more).size, 30);
  assert.equal(more.filter((k) => names.includes(k)).length, names.length);
  // Shop keys (numbers, order codes) are no vocabulary: fresh as before.
  assert.equal(planDatabase(shop().schema, shop().tables).plan.tables.customers.publicKey, undefined);
});
