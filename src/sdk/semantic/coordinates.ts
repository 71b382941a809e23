/**
 * Coordinates coherent with their row's place (issue 40: "coordinates inside the real rows' area
 * for that place"). A latitude/longitude column pair (numerical columns named so, in [-90, 90] and
 * [-180, 180] degrees) is recorded at fit with the columns naming each row's place
 * (`metadata.coordinates`, docs/api.md "Coordinates"); decoding then writes each point inside the
 * area of its row's most specific known place:
 * 1. a gazetteer place (a US ZIP code; a city or county of the row's state; with no state column,
 *    a city of any state): near one of its ZIP code points in the GeoNames postal table
 *    (`./vocabulary`), at the column's precision;
 * 2. a released place value: inside the box of its real rows' points, released only for a value
 *    (and state) held by at least the rare threshold's rows, so no rare row's point is sent; a
 *    place column is named by its header or found from the points ({@link placeDecidingColumns}:
 *    a country, a region), whose boxes are trimmed to the k-th point and rounded outward;
 * 3. a row with only a US state: near one of the state's ZIP code points, inside the state's box.
 * The model's point is kept where it already lies in a released area or (with only a state) in
 * the state, and where it is the point a catalog's released entry gives the row's key (a
 * hospital's id and its point): a row rule is kept exactly, and the entry's point is released.
 */
import type { CatalogRule, CoordinatePair, CoordinatePlace, Metadata, PlaceArea } from "../../contract";
import type { ColumnCodec } from "../columns/common";
import { digitsWriter, numberWriter } from "../columns/numerical-grain";
import type { Cells } from "../generate/batch";
import { Rng, deriveSeed } from "../generate/sfc32";
import type { ScannedTable } from "../metadata/encoded";
import { placeNames, places, placesByState, stateCodeOf, vocabularyKey, type Place } from "./vocabulary";

/** Words of a header, lower case: `Origin Lat` -> origin, lat; `zipCode` -> zip, code. */
function headerWords(name: string): string[] {
  return name
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== "");
}

const LATITUDE_WORDS = ["lat", "latitude"];
const LONGITUDE_WORDS = ["lon", "lng", "long", "longitude"];
/** Header words of place columns per kind, most specific kind first. */
const PLACE_WORDS: [CoordinatePlace["kind"], RegExp][] = [
  ["zip", /^(zip|zipcode|postcode|postal)$/],
  ["city", /^(city|town|municipality)$/],
  ["county", /^(county|parish|borough)$/],
  ["place", /^(place|neighbou?rhood|district|locality|suburb|village|ward|community)$/],
];

/**
 * The latitude/longitude pairs of a scanned table, each with its state and place columns and, when
 * `k` is given (a raw table), the areas of its place values held by >= k real rows.
 * @param codecs the columns' code books (`scanned.columns` order).
 * @param k the rare threshold; undefined: no areas (privacy or a domain).
 * @returns the pairs (none: an empty array); a latitude pairs with the longitude whose other header
 *   words are the same (`origin_lat` with `origin_lon`).
 */
export function coordinatePairs(scanned: ScannedTable, codecs: readonly ColumnCodec[], k?: number): CoordinatePair[] {
  const words = scanned.columns.map(headerWords);
  const rest = (f: number, drop: string[]): string => words[f].filter((w) => !drop.includes(w)).join(" ");
  const inRange = (f: number, limit: number): boolean => {
    const st = codecs[f].stats;
    return codecs[f].kind === "numerical" && st.count > 0 && st.min !== undefined && st.max !== undefined && st.min >= -limit && st.max <= limit;
  };
  const out: CoordinatePair[] = [];
  scanned.columns.forEach((_, la) => {
    if (!words[la].some((w) => LATITUDE_WORDS.includes(w)) || !inRange(la, 90)) return;
    const key = rest(la, LATITUDE_WORDS);
    const lo = scanned.columns.findIndex((_, f) => words[f].some((w) => LONGITUDE_WORDS.includes(w)) && rest(f, LONGITUDE_WORDS) === key && inRange(f, 180));
    if (lo < 0 || out.length >= 16) return;
    // Place columns of the pair: categorical, and named with the pair's other words (`origin`).
    const mine = (f: number): boolean => codecs[f].kind === "categorical" && key.split(" ").every((w) => w === "" || words[f].includes(w));
    const state = codecs.findIndex((c, f) => mine(f) && (c.stats.vocabulary === "us_state" || c.stats.vocabulary === "us_state_code"));
    const placeCols: { f: number; kind: CoordinatePlace["kind"] }[] = [];
    for (const [kind, re] of PLACE_WORDS) {
      scanned.columns.forEach((_, f) => {
        if (f !== state && mine(f) && words[f].some((w) => re.test(w)) && !placeCols.some((p) => p.f === f)) placeCols.push({ f, kind });
      });
    }
    // A column of US place names under another header (`name`: `./vocabulary`'s bare places) is the pair's city.
    scanned.columns.forEach((_, f) => {
      if (f !== state && mine(f) && codecs[f].stats.vocabulary === "us_city" && !placeCols.some((p) => p.f === f)) placeCols.push({ f, kind: "city" });
    });
    // Columns under any header whose values each hold a small part of the points (a country, a region).
    const named = placeCols.length;
    if (k !== undefined) {
      const taken = new Set([state, la, lo, ...placeCols.map((p) => p.f)]);
      for (const f of placeDecidingColumns(scanned, codecs, la, lo, taken, k)) placeCols.push({ f, kind: "place" });
    }
    const pair: CoordinatePair = { latitude: scanned.columns[la], longitude: scanned.columns[lo] };
    if (state >= 0) pair.state = scanned.columns[state];
    if (placeCols.length) pair.places = placeCols.slice(0, 8).map((p) => ({ column: scanned.columns[p.f], kind: p.kind }));
    // Areas of the places (not ZIP codes: a point each) and of the states (those past the gazetteer: territories).
    const areaCols = placeCols.slice(0, Math.min(named, 8)).filter((p) => p.kind !== "zip").map((p) => p.f);
    const areas = k === undefined ? [] : placeAreas(scanned, codecs, la, lo, state, state >= 0 ? [...areaCols, state] : areaCols, k);
    if (k !== undefined && placeCols.length > named) {
      areas.push(...placeAreas(scanned, codecs, la, lo, state, placeCols.slice(named, 8).map((p) => p.f), k, true));
      areas.splice(MAX_AREAS);
    }
    if (areas.length) pair.areas = areas;
    out.push(pair);
  });
  return out;
}

/** Most areas one pair sends (the largest places first). */
const MAX_AREAS = 100000;

/** A column decides the area when its values' boxes are at most this share of shuffled groups' boxes. */
const DECIDING_RATIO = 0.4;
/** Share of the rows with a point that values held by >= k rows must cover for a column to be judged. */
const DECIDING_COVER = 0.3;

/**
 * Categorical columns (besides `taken`) whose values each occupy a small part of the points'
 * range: over the rows of values held by >= k rows (with a code of their own), the row-weighted
 * mean of a value's box side, as a share of all points' range (latitude and longitude averaged),
 * is at most {@link DECIDING_RATIO} of the same mean for the same group sizes with the values
 * shuffled across those rows (seeded: detection is deterministic). A column whose values spread
 * over the map as random groups would (a type, a status) is left out.
 * @returns the columns' indices, the tightest (most specific place) first.
 */
function placeDecidingColumns(scanned: ScannedTable, codecs: readonly ColumnCodec[], la: number, lo: number, taken: ReadonlySet<number>, k: number): number[] {
  const [lat, lon] = [scanned.scans[la], scanned.scans[lo]];
  const ys = new Float64Array(scanned.n);
  const xs = new Float64Array(scanned.n);
  const rows: number[] = [];
  for (let r = 0; r < scanned.n; r++) {
    const [ty, tx] = [lat.values[lat.ids[r]], lon.values[lon.ids[r]]];
    const [y, x] = [Number(ty), Number(tx)];
    if (ty === "" || tx === "" || !Number.isFinite(y) || !Number.isFinite(x)) continue;
    ys[r] = y;
    xs[r] = x;
    rows.push(r);
  }
  if (rows.length < 2 * k) return [];
  let [s, nn, w, e] = [Infinity, -Infinity, Infinity, -Infinity];
  for (const r of rows) [s, nn, w, e] = [Math.min(s, ys[r]), Math.max(nn, ys[r]), Math.min(w, xs[r]), Math.max(e, xs[r])];
  const [spanY, spanX] = [nn - s || 1, e - w || 1];
  // Row-weighted mean side share of the groups given by `label` (row -> group, -1 none).
  const spread = (members: number[], label: Int32Array, groups: number): number => {
    const box = new Float64Array(groups * 4);
    for (let g = 0; g < groups; g++) box.set([Infinity, -Infinity, Infinity, -Infinity], g * 4);
    const size = new Int32Array(groups);
    for (const r of members) {
      const g = label[r];
      size[g]++;
      box[g * 4] = Math.min(box[g * 4], ys[r]);
      box[g * 4 + 1] = Math.max(box[g * 4 + 1], ys[r]);
      box[g * 4 + 2] = Math.min(box[g * 4 + 2], xs[r]);
      box[g * 4 + 3] = Math.max(box[g * 4 + 3], xs[r]);
    }
    let sum = 0;
    for (let g = 0; g < groups; g++) sum += (size[g] * ((box[g * 4 + 1] - box[g * 4]) / spanY + (box[g * 4 + 3] - box[g * 4 + 2]) / spanX)) / 2;
    return sum / members.length;
  };
  const found: { f: number; score: number }[] = [];
  codecs.forEach((codec, f) => {
    if (taken.has(f) || codec.kind !== "categorical") return;
    const scan = scanned.scans[f];
    // Group per released value: the value's code, when it has one of its own.
    const codeOf = new Map<number, number>();
    const counts = new Map<number, number>();
    for (const r of rows) {
      const id = scan.ids[r];
      let code = codeOf.get(id);
      if (code === undefined) {
        const v = scan.values[id];
        const c = v === "" ? -1 : codec.encode(v);
        codeOf.set(id, (code = c < 0 || c === codec.otherCode || c === codec.missingCode ? -1 : c));
      }
      if (code >= 0) counts.set(code, (counts.get(code) ?? 0) + 1);
    }
    const group = new Map<number, number>();
    for (const [code, n] of counts) if (n >= k) group.set(code, group.size);
    if (group.size < 2) return;
    const label = new Int32Array(scanned.n).fill(-1);
    const members: number[] = [];
    for (const r of rows) {
      const g = group.get(codeOf.get(scan.ids[r])!);
      if (g === undefined) continue;
      label[r] = g;
      members.push(r);
    }
    if (members.length < DECIDING_COVER * rows.length) return;
    const score = spread(members, label, group.size);
    // The same group sizes over the same rows, the values shuffled.
    const rng = new Rng(deriveSeed(0x706c6163, f));
    const shuffled = new Int32Array(scanned.n).fill(-1);
    const labels = members.map((r) => label[r]);
    rng.shuffle(labels);
    members.forEach((r, i) => (shuffled[r] = labels[i]));
    const base = spread(members, shuffled, group.size);
    if (base > 0 && score <= DECIDING_RATIO * base) found.push({ f, score });
  });
  return found.sort((a, b) => a.score - b.score).map((x) => x.f);
}

/**
 * Per place column, the box of the real points of each (value, state) held by >= k rows whose
 * value has a code of its own (never the pooled or blank code); the state column's by value.
 * `binned` (columns found by {@link placeDecidingColumns}): each side is the k-th point from that
 * end (the middle point for a value of < 2k rows), rounded outward to a grid of a power of ten
 * near 1/100 of the column's range ({@link binnedBox}), so no row's coordinate is sent and an
 * outlying row widens nothing.
 */
function placeAreas(scanned: ScannedTable, codecs: readonly ColumnCodec[], la: number, lo: number, state: number, placeCols: number[], k: number, binned = false): PlaceArea[] {
  const [lat, lon] = [scanned.scans[la], scanned.scans[lo]];
  const st = state >= 0 ? scanned.scans[state] : undefined;
  const found: { area: PlaceArea; rows: number }[] = [];
  for (const f of placeCols) {
    const scan = scanned.scans[f];
    const codec = codecs[f];
    const boxes = new Map<string, { place: string; state?: string; rows: number; box: [number, number, number, number]; ys: number[]; xs: number[] }>();
    for (let r = 0; r < scanned.n; r++) {
      const place = scan.values[scan.ids[r]];
      const y = Number(lat.values[lat.ids[r]]);
      const x = Number(lon.values[lon.ids[r]]);
      if (place === "" || lat.values[lat.ids[r]] === "" || lon.values[lon.ids[r]] === "" || !Number.isFinite(y) || !Number.isFinite(x)) continue;
      const s = st && f !== state ? st.values[st.ids[r]] : undefined;
      const key = s === undefined ? place : `${place}\u0000${s}`;
      const b = boxes.get(key);
      if (!b) boxes.set(key, { place, ...(s !== undefined ? { state: s } : {}), rows: 1, box: [y, y, x, x], ys: binned ? [y] : [], xs: binned ? [x] : [] });
      else {
        b.rows++;
        if (binned) b.ys.push(y), b.xs.push(x);
        b.box = [Math.min(b.box[0], y), Math.max(b.box[1], y), Math.min(b.box[2], x), Math.max(b.box[3], x)];
      }
    }
    for (const b of boxes.values()) {
      const code = codec.encode(b.place);
      if (b.rows < k || code < 0 || code === codec.otherCode || code === codec.missingCode) continue;
      const box = binned ? binnedBox(b.ys, b.xs, k, gridStep(codecs[la]), gridStep(codecs[lo])) : b.box;
      found.push({ area: { column: scanned.columns[f], place: b.place, ...(b.state !== undefined ? { state: b.state } : {}), box }, rows: b.rows });
    }
  }
  found.sort((a, b) => b.rows - a.rows);
  return found.slice(0, MAX_AREAS).map((x) => x.area);
}

/** The grid of {@link binnedBox} for a coordinate column: the power of ten nearest below 1/100 of its range. */
function gridStep(codec: ColumnCodec): number {
  const range = (codec.stats.max ?? 0) - (codec.stats.min ?? 0);
  return range > 0 ? 10 ** Math.floor(Math.log10(range / 100)) : 1e-6;
}

/**
 * The box of one value's points (`placeAreas`' `binned`): per axis the k-th smallest and k-th
 * largest coordinate (the middle one's rank when there are fewer than 2k), rounded outward to
 * multiples of the axis' grid step.
 */
function binnedBox(ys: number[], xs: number[], k: number, stepY: number, stepX: number): [number, number, number, number] {
  const side = (vs: number[], step: number, limit: number): [number, number] => {
    const sorted = [...vs].sort((a, b) => a - b);
    const r = Math.max(1, Math.min(k, Math.ceil(sorted.length / 2)));
    const [a, b] = [sorted[r - 1], sorted[sorted.length - r]];
    // Outward, and strictly past a value on the grid, so the side is never a row's coordinate.
    const down = Math.floor(a / step) * step;
    const up = Math.ceil(b / step) * step;
    const lo = Number((down === a ? a - step : down).toPrecision(12));
    const hi = Number((up === b ? b + step : up).toPrecision(12));
    return [Math.max(-limit, lo), Math.min(limit, hi)];
  };
  const [s, n] = side(ys, stepY, 90);
  const [w, e] = side(xs, stepX, 180);
  return [s, n, w, e];
}

/** Degrees a gazetteer point is jittered by (half its last decimal: GeoNames writes 4). */
const GAZETTEER_HALF_UNIT = 0.00005;
/** Degrees a point drawn for a state strays from the ZIP code or batch point it is drawn near (about 2 km). */
const STATE_JITTER = 0.02;
/** Cell size, in degrees, of the grid that finds the ZIP code point nearest a point. */
const GRID = 0.2;

/** Points as [lat0, lon0, lat1, lon1, ...] with their box [south, north, west, east]. */
interface Points {
  xy: number[];
  box: [number, number, number, number];
}

function pointsOf(list: readonly Place[]): Points {
  return pointsFrom(list.flatMap((p) => [p.latitude, p.longitude]));
}

/** The gazetteer's points by ZIP, by `kind|name|state` (cities, counties), by state; and the grid. */
interface GazetteerPoints {
  zip: Map<string, Points>;
  named: Map<string, Points>;
  state: Map<string, Points>;
  /** Grid cell -> the gazetteer rows whose point lies in it. */
  grid: Map<number, Place[]>;
}

let gazetteerPoints: GazetteerPoints | undefined;
function gazetteer(): GazetteerPoints {
  if (gazetteerPoints) return gazetteerPoints;
  const group = (key: (p: Place) => string[]): Map<string, Points> => {
    const lists = new Map<string, Place[]>();
    for (const p of places()) for (const k of key(p)) (lists.get(k) ?? lists.set(k, []).get(k)!).push(p);
    return new Map([...lists].map(([k, list]) => [k, pointsOf(list)]));
  };
  const grid = new Map<number, Place[]>();
  for (const p of places()) {
    const cell = gridCell(p.latitude, p.longitude);
    (grid.get(cell) ?? grid.set(cell, []).get(cell)!).push(p);
  }
  return (gazetteerPoints = {
    zip: group((p) => [p.zip]),
    named: group((p) => [
      ...placeNames("us_city", p).flatMap((n) => [`city|${vocabularyKey(n)}|${p.stateCode}`, `city|${vocabularyKey(n)}|`]),
      ...placeNames("us_county", p).map((n) => `county|${vocabularyKey(n)}|${p.stateCode}`),
    ]),
    state: new Map([...placesByState()].map(([s, list]) => [s, pointsOf(list)])),
    grid,
  });
}

function gridCell(lat: number, lon: number): number {
  return Math.floor((lat + 90) / GRID) * 4096 + Math.floor((lon + 180) / GRID);
}

/**
 * The state of the ZIP code point nearest (lat, lon) among those within one grid cell, or
 * undefined: a point in a state lies nearer its own towns than a neighbour's (Voronoi cells of
 * the ZIP code points stand for the states' outlines).
 */
function stateAt(g: GazetteerPoints, lat: number, lon: number): string | undefined {
  const k = Math.cos((lat * Math.PI) / 180) ** 2;
  let best: Place | undefined;
  let bestD = Infinity;
  for (const dy of [-GRID, 0, GRID]) {
    for (const dx of [-GRID, 0, GRID]) {
      for (const p of g.grid.get(gridCell(lat + dy, lon + dx)) ?? []) {
        const d = (p.latitude - lat) ** 2 + k * (p.longitude - lon) ** 2;
        if (d < bestD) [best, bestD] = [p, d];
      }
    }
  }
  return best?.stateCode;
}

/** Most points a {@link StateAtMemo} holds before it starts afresh. */
const STATE_MEMO_POINTS = 1 << 18;

/**
 * {@link stateAt} remembered per point: a model's decoded points repeat (its cells lie on the real
 * values' lattice), and the nearest-point search is the placement's main cost.
 */
class StateAtMemo {
  private readonly byLat = new Map<number, Map<number, string | undefined>>();
  private size = 0;

  /** `stateAt(gazetteer, lat, lon)`. */
  get(g: GazetteerPoints, lat: number, lon: number): string | undefined {
    let byLon = this.byLat.get(lat);
    if (byLon === undefined) {
      if (this.size >= STATE_MEMO_POINTS) {
        this.byLat.clear();
        this.size = 0;
      }
      this.byLat.set(lat, (byLon = new Map()));
    }
    if (byLon.has(lon)) return byLon.get(lon);
    const s = stateAt(g, lat, lon);
    byLon.set(lon, s);
    this.size++;
    return s;
  }
}

/** One pair, resolved against the metadata's features. */
interface ResolvedPair {
  lat: number;
  lon: number;
  state: number;
  places: { f: number; kind: CoordinatePlace["kind"] }[];
  /** `f|place|state` -> box. */
  areas: Map<string, readonly number[]>;
  /** A ZIP code column: its points come from the gazetteer even without a state. */
  needsGazetteer: boolean;
  writeLat: (x: number) => string;
  writeLon: (x: number) => string;
  /** Catalogs deciding both coordinates: key features, and their entries' `key|lat|lon` texts. */
  catalogs: { keys: number[]; points: Set<string> }[];
}

/**
 * The catalogs of `metadata.rules` that decide both `lat` and `lon` (features), with the
 * `key|lat|lon` text of each entry (cells joined by U+0000).
 */
function catalogPoints(metadata: Metadata, lat: number, lon: number): { keys: number[]; points: Set<string> }[] {
  const out: { keys: number[]; points: Set<string> }[] = [];
  for (const rule of metadata.rules ?? []) {
    if (rule.type !== "catalog") continue;
    const c = rule as CatalogRule;
    const n = c.key_columns ?? 1;
    const columns: readonly string[] = c.columns;
    const features: readonly string[] = metadata.features;
    const [i, j] = [columns.indexOf(features[lat]), columns.indexOf(features[lon])];
    const keys = columns.slice(0, n).map((k) => features.indexOf(k));
    if (i < n || j < n || keys.some((k) => k < 0)) continue;
    out.push({ keys, points: new Set(c.entries.map((e) => [...e.slice(0, n), e[i], e[j]].join("\u0000"))) });
  }
  return out;
}

/**
 * Writes each decoded point inside its row's place (file header), from `metadata.coordinates`
 * alone; a pair naming a column the metadata lacks, or one that is not numerical, is ignored.
 */
export class CoordinateWriter {
  private readonly pairs: ResolvedPair[] = [];
  /** Each point's state, across batches. */
  private readonly pointStates = new StateAtMemo();

  constructor(metadata: Metadata) {
    const at = (c: string | undefined): number => (c === undefined ? -1 : metadata.features.indexOf(c));
    for (const p of metadata.coordinates ?? []) {
      const [lat, lon] = [at(p.latitude), at(p.longitude)];
      const [sl, so] = [metadata.column_stats?.[p.latitude], metadata.column_stats?.[p.longitude]];
      if (lat < 0 || lon < 0 || sl?.type !== "numerical" || so?.type !== "numerical") continue;
      // With `digit_shares`, a moved point takes the significant digits of the real rows' shares
      // (as the column's own drawn values), not the longest writing's.
      const writer = (st: typeof sl) => {
        const [d, fixedD, minD] = [st.decimals ?? 0, st.fixed_decimals === true && (st.decimals ?? 0) > 0, st.min_decimals ?? 0];
        return st.digit_shares && st.digits ? digitsWriter(d, fixedD, minD, st.digit_shares) : numberWriter(d, fixedD, minD, st.digits);
      };
      const places = (p.places ?? []).map((q) => ({ f: at(q.column), kind: q.kind })).filter((q) => q.f >= 0);
      const areas = new Map<string, readonly number[]>();
      for (const a of p.areas ?? []) if (at(a.column) >= 0) areas.set(`${at(a.column)}\u0000${a.place}\u0000${a.state ?? ""}`, a.box);
      const catalogs = catalogPoints(metadata, lat, lon);
      this.pairs.push({ lat, lon, state: at(p.state), places, areas, needsGazetteer: places.some((q) => q.kind === "zip" || (q.kind === "city" && at(p.state) < 0)), writeLat: writer(sl), writeLon: writer(so), catalogs });
    }
  }

  /** Whether the metadata has a pair to write. */
  get active(): boolean {
    return this.pairs.length > 0;
  }

  /**
   * Moves each row's point (both cells filled, neither fixed) that lies outside its place's area
   * into it (file header). @returns the number of points moved.
   * @param seed seeds the draws (the batch's decode seed).
   * @param fixed cells never rewritten (seed cells, `where` columns).
   * @param unread features nobody reads: a pair of two is skipped (its draws too).
   */
  apply(cells: Cells, seed: number, fixed?: (row: number, feature: number) => boolean, unread?: (feature: number) => boolean): number {
    let moved = 0;
    const states = new Map<string, string | undefined>();
    this.pairs.forEach((p, i) => {
      if (unread?.(p.lat) && unread(p.lon)) return;
      const rng = new Rng(deriveSeed(seed, 0x47454f, i));
      const write = (r: number, to: readonly number[]): void => {
        // Not clamped to the real columns' ranges: a public place may lie past a small table's
        // extremes, and clamping would write the extreme row's own point.
        cells.set(r, p.lat, p.writeLat(to[0]));
        cells.set(r, p.lon, p.writeLon(to[1]));
        moved++;
      };
      // Rows with only a state whose point lies in another state: where another such row's point
      // lies in this row's state, the two points are exchanged (the batch keeps the model's
      // points, only their rows change); the rest take a point of the state near the model's.
      const outside: [number, string, number, number][] = [];
      const targets = new Map<string, Target>();
      for (let r = 0; r < cells.length; r++) {
        if (fixed?.(r, p.lat) || fixed?.(r, p.lon)) continue;
        const [ty, tx] = [cells.get(r, p.lat), cells.get(r, p.lon)];
        if (ty === "" || tx === "") continue;
        if (p.catalogs.some((c) => c.points.has([...c.keys.map((f) => cells.get(r, f)), ty, tx].join("\u0000")))) continue;
        const [y, x] = [Number(ty), Number(tx)];
        if (!Number.isFinite(y) || !Number.isFinite(x)) continue;
        const sv = p.state >= 0 ? cells.get(r, p.state) : "";
        let code = states.get(sv);
        if (code === undefined && !states.has(sv)) states.set(sv, (code = sv === "" ? undefined : stateCodeOf(sv)));
        const to = this.place(p, cells, r, sv, code, y, x, rng, targets);
        if (to === OUT_OF_STATE) outside.push([r, code!, y, x]);
        else if (to !== undefined) write(r, to);
      }
      if (outside.length === 0) return;
      const g = gazetteer();
      const lying = new Map<string, number[]>();
      outside.forEach(([, , y, x], j) => {
        const at = this.pointStates.get(g, y, x);
        if (at !== undefined && inBox(g.state.get(at)!.box, y, x)) (lying.get(at) ?? lying.set(at, []).get(at)!).push(j);
      });
      for (const [r, code, y, x] of outside) {
        const pool = lying.get(code);
        if (pool?.length) {
          const k = rng.int(pool.length);
          const j = pool[k];
          pool[k] = pool[pool.length - 1];
          pool.pop();
          write(r, [outside[j][2], outside[j][3]]);
        } else write(r, inState(g.state.get(code)!, y, x, rng));
      }
    });
    return moved;
  }

  /**
   * The point to write in row r; undefined to keep (y, x); {@link OUT_OF_STATE} for a row with only
   * a state whose point lies outside it.
   */
  private place(
    p: ResolvedPair,
    cells: Cells,
    r: number,
    stateValue: string,
    state: string | undefined,
    y: number,
    x: number,
    rng: Rng,
    memo: Map<string, Target>,
  ): [number, number] | typeof OUT_OF_STATE | undefined {
    let key = stateValue;
    for (const q of p.places) key += "\u0000" + cells.get(r, q.f);
    let t = memo.get(key);
    if (t === undefined) memo.set(key, (t = this.target(p, cells, r, stateValue, state)));
    if (t.pts) return jittered(t.pts, rng.int(t.pts.xy.length / 2), GAZETTEER_HALF_UNIT, t.stateBox, rng);
    const b = t.box;
    if (b) return inBox(b, y, x) ? undefined : [b[0] + rng.next() * (b[1] - b[0]), b[2] + rng.next() * (b[3] - b[2])];
    if (t.state === undefined) return undefined;
    return inBox(t.stateBox!, y, x) && this.pointStates.get(gazetteer(), y, x) === state ? undefined : OUT_OF_STATE;
  }

  /**
   * Where row r's point belongs, from its place cells and state alone (so rows sharing them share
   * it): the most specific known place that lies in all coarser ones, as gazetteer points or a box;
   * else its state.
   */
  private target(p: ResolvedPair, cells: Cells, r: number, stateValue: string, state: string | undefined): Target {
    const g = state !== undefined || p.needsGazetteer ? gazetteer() : undefined;
    // The row's known places, most specific first: gazetteer points or a released area's box.
    const known: { pts?: Points; box: readonly number[] }[] = [];
    for (const q of p.places) {
      const v = cells.get(r, q.f);
      if (v === "") continue;
      const pts =
        g === undefined
          ? undefined
          : q.kind === "zip"
          ? g.zip.get(v.trim())
          : (q.kind === "city" || q.kind === "county") && state !== undefined
          ? g.named.get(`${q.kind}|${vocabularyKey(v)}|${state}`)
          : q.kind === "city" && p.state < 0
          ? g.named.get(`city|${vocabularyKey(v)}|`)
          : undefined;
      const box = pts?.box ?? p.areas.get(`${q.f}\u0000${v}\u0000${p.state >= 0 ? stateValue : ""}`);
      if (box) known.push({ pts, box });
    }
    const statePts = state !== undefined ? g!.state.get(state) : undefined;
    const stateBox = statePts?.box ?? (p.state >= 0 && stateValue !== "" ? p.areas.get(`${p.state}\u0000${stateValue}\u0000`) : undefined);
    if (stateBox) known.push({ box: stateBox });
    // A drawn ZIP code may not be in the row's city: keep what lies inside every coarser place.
    for (let i = 0; i < known.length; i++) {
      const outer = known.slice(i + 1).map((k) => k.box);
      const within = (a: number, b: number): boolean => outer.every((o) => inBox(o, a, b, NESTED_MARGIN));
      const { pts, box } = known[i];
      if (statePts && i === known.length - 1) break;
      if (pts) {
        const xy: number[] = [];
        for (let j = 0; j < pts.xy.length; j += 2) if (within(pts.xy[j], pts.xy[j + 1])) xy.push(pts.xy[j], pts.xy[j + 1]);
        if (xy.length === 0) continue;
        // Always a gazetteer point: the model's may be a real row's exact point (a small table's bins).
        return { pts: xy.length === pts.xy.length ? pts : pointsFrom(xy), stateBox: statePts?.box };
      }
      const b = outer.reduce<number[]>((a, o) => [Math.max(a[0], o[0]), Math.min(a[1], o[1]), Math.max(a[2], o[2]), Math.min(a[3], o[3])], [...box]);
      if (b[0] > b[1] || b[2] > b[3]) continue;
      return { box: b };
    }
    return statePts ? { state, stateBox: statePts.box } : {};
  }
}

/** Where a row's point belongs ({@link CoordinateWriter}): gazetteer points, a box, its state, or nothing to check. */
interface Target {
  pts?: Points;
  box?: readonly number[];
  state?: string;
  stateBox?: readonly number[];
}

const OUT_OF_STATE = 1;

/** Degrees a place may stray outside a coarser place's box and still count as inside it. */
const NESTED_MARGIN = 0.01;

function inBox(b: readonly number[], lat: number, lon: number, margin = 0): boolean {
  return lat >= b[0] - margin && lat <= b[1] + margin && lon >= b[2] - margin && lon <= b[3] + margin;
}

function pointsFrom(xy: number[]): Points {
  const box: [number, number, number, number] = [Infinity, -Infinity, Infinity, -Infinity];
  for (let j = 0; j < xy.length; j += 2) {
    box[0] = Math.min(box[0], xy[j]);
    box[1] = Math.max(box[1], xy[j]);
    box[2] = Math.min(box[2], xy[j + 1]);
    box[3] = Math.max(box[3], xy[j + 1]);
  }
  return { xy, box };
}

/** Point i of `pts`, moved by up to `jitter` degrees on each axis, kept inside `box`. */
function jittered(pts: Points, i: number, jitter: number, box: readonly number[] | undefined, rng: Rng): [number, number] {
  let y = pts.xy[2 * i] + (2 * rng.next() - 1) * jitter;
  let x = pts.xy[2 * i + 1] + (2 * rng.next() - 1) * jitter;
  if (box) {
    y = Math.min(box[1], Math.max(box[0], y));
    x = Math.min(box[3], Math.max(box[2], x));
  }
  return [y, x];
}

/** Degrees of latitude (or longitude) around the model's value within which a state's ZIP code point is drawn. */
const BAND = 0.25;

/**
 * A point near `pts` (a state's ZIP code points) for a model point (y, x) outside the state: the model's latitude kept where `pts` has points within {@link BAND}
 * of it, the longitude of one of them drawn (else the same with the roles swapped, else any of
 * them), so the model's latitude by state survives.
 */
function inState(pts: Points, y: number, x: number, rng: Rng): [number, number] {
  for (const axis of [0, 1]) {
    const order = sortedBy(pts, axis);
    const v = axis === 0 ? y : x;
    if (v < pts.box[2 * axis] || v > pts.box[2 * axis + 1]) continue;
    const lo = lowerBound(pts.xy, order, axis, v - BAND);
    const hi = lowerBound(pts.xy, order, axis, v + BAND);
    if (hi <= lo) continue;
    const i = order[lo + rng.int(hi - lo)];
    const [py, px] = jittered(pts, i, STATE_JITTER, pts.box, rng);
    return axis === 0 ? [y, px] : [py, x];
  }
  return jittered(pts, rng.int(pts.xy.length / 2), STATE_JITTER, pts.box, rng);
}

const sorted = new WeakMap<Points, Int32Array[]>();
/** Indices of `pts` ordered by latitude (axis 0) or longitude (1), built once per set. */
function sortedBy(pts: Points, axis: number): Int32Array {
  let s = sorted.get(pts);
  if (!s) {
    const idx = (a: number) => Int32Array.from({ length: pts.xy.length / 2 }, (_, i) => i).sort((i, j) => pts.xy[2 * i + a] - pts.xy[2 * j + a]);
    sorted.set(pts, (s = [idx(0), idx(1)]));
  }
  return s[axis];
}

/** The first position in `order` whose point's coordinate `axis` is >= v. */
function lowerBound(xy: readonly number[], order: Int32Array, axis: number, v: number): number {
  let [a, b] = [0, order.length];
  while (a < b) {
    const m = (a + b) >>> 1;
    if (xy[2 * order[m] + axis] < v) a = m + 1;
    else b = m;
  }
  return a;
}
