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
 *    (and state) held by at least the rare threshold's rows, so no rare row's point is sent;
 * 3. a row with only a US state: near one of the state's ZIP code points, inside the state's box.
 * The model's point is kept where it already lies in a released area or (with only a state) in
 * the state, and where it is the point a catalog's released entry gives the row's key (a
 * hospital's id and its point): a row rule is kept exactly, and the entry's point is released.
 */
import type { CatalogRule, CoordinatePair, CoordinatePlace, Metadata, PlaceArea } from "../../contract";
import type { ColumnCodec } from "../columns/common";
import { numberWriter } from "../columns/numerical-grain";
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
    const pair: CoordinatePair = { latitude: scanned.columns[la], longitude: scanned.columns[lo] };
    if (state >= 0) pair.state = scanned.columns[state];
    if (placeCols.length) pair.places = placeCols.slice(0, 8).map((p) => ({ column: scanned.columns[p.f], kind: p.kind }));
    // Areas of the places (not ZIP codes: a point each) and of the states (those past the gazetteer: territories).
    const areaCols = placeCols.slice(0, 8).filter((p) => p.kind !== "zip").map((p) => p.f);
    const areas = k === undefined ? [] : placeAreas(scanned, codecs, la, lo, state, state >= 0 ? [...areaCols, state] : areaCols, k);
    if (areas.length) pair.areas = areas;
    out.push(pair);
  });
  return out;
}

/** Most areas one pair sends (the largest places first). */
const MAX_AREAS = 100000;

/**
 * Per place column, the box of the real points of each (value, state) held by >= k rows whose
 * value has a code of its own (never the pooled or blank code); the state column's by value.
 */
function placeAreas(scanned: ScannedTable, codecs: readonly ColumnCodec[], la: number, lo: number, state: number, placeCols: number[], k: number): PlaceArea[] {
  const [lat, lon] = [scanned.scans[la], scanned.scans[lo]];
  const st = state >= 0 ? scanned.scans[state] : undefined;
  const found: { area: PlaceArea; rows: number }[] = [];
  for (const f of placeCols) {
    const scan = scanned.scans[f];
    const codec = codecs[f];
    const boxes = new Map<string, { place: string; state?: string; rows: number; box: [number, number, number, number] }>();
    for (let r = 0; r < scanned.n; r++) {
      const place = scan.values[scan.ids[r]];
      const y = Number(lat.values[lat.ids[r]]);
      const x = Number(lon.values[lon.ids[r]]);
      if (place === "" || lat.values[lat.ids[r]] === "" || lon.values[lon.ids[r]] === "" || !Number.isFinite(y) || !Number.isFinite(x)) continue;
      const s = st && f !== state ? st.values[st.ids[r]] : undefined;
      const key = s === undefined ? place : `${place}\u0000${s}`;
      const b = boxes.get(key);
      if (!b) boxes.set(key, { place, ...(s !== undefined ? { state: s } : {}), rows: 1, box: [y, y, x, x] });
      else {
        b.rows++;
        b.box = [Math.min(b.box[0], y), Math.max(b.box[1], y), Math.min(b.box[2], x), Math.max(b.box[3], x)];
      }
    }
    for (const b of boxes.values()) {
      const code = codec.encode(b.place);
      if (b.rows < k || code < 0 || code === codec.otherCode || code === codec.missingCode) continue;
      found.push({ area: { column: scanned.columns[f], place: b.place, ...(b.state !== undefined ? { state: b.state } : {}), box: b.box }, rows: b.rows });
    }
  }
  found.sort((a, b) => b.rows - a.rows);
  return found.slice(0, MAX_AREAS).map((x) => x.area);
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
      const writer = (st: typeof sl) => numberWriter(st.decimals ?? 0, st.fixed_decimals === true && (st.decimals ?? 0) > 0, st.min_decimals ?? 0, st.digits);
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
