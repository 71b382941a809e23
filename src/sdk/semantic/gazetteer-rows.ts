/**
 * Rows of a gazetteer table written from one gazetteer row (issue 40: "a city in its state and
 * county, a zip code whose prefix belongs to its state"). A table with a US state column and two or
 * more place columns of the postal gazetteer (`us_zip`, `us_city`, `us_county`) has each decoded
 * row's ZIP code, city and county rewritten from ONE row of the GeoNames postal table
 * (`./vocabulary`) of the row's state, chosen to keep the row's own values where they are real:
 * 1. anchor: the row's released values first (a code of their own: the table's frequent places),
 *    then its drawn ones, most specific first (ZIP, city, county); the gazetteer rows holding it;
 * 2. narrowed by the row's other place cells where some of those rows hold them;
 * 3. one of them drawn (places weigh by their ZIP codes), its values written where the cell's differ.
 * A state the gazetteer lacks (Puerto Rico, Guam) takes the table's own pairs instead: a city and
 * county seen with the state in a released combination or 2-way marginal, else in >= k rows
 * (`column_stats[f].state_places`), and a ZIP code on a 3-digit prefix seen with the state in >= k
 * rows (`column_stats[zip].zip_prefixes`).
 */
import type { Metadata, PlaceForm, StatePlace, ZipPrefix } from "../../contract";
import { MISSING_KEY, OTHER } from "../columns/common";
import type { ColumnCodec } from "../columns/common";
import type { Cells } from "../generate/batch";
import { Rng, deriveSeed } from "../generate/sfc32";
import { inLetterCase } from "./letter-case";
import type { ScannedTable } from "../metadata/encoded";
import { censusCountyName, MIN_PUBLIC_SHARE, MIN_PUBLIC_VALUES, placeKey, placeNames, placesByState, stateCodeOf, vocabularyKey, vocabularySet, ZIP_HEADER, type Place } from "./vocabulary";

export { placeKey };

/** The place columns, most specific first. */
const KINDS = ["us_zip", "us_city", "us_county"] as const;
type Kind = (typeof KINDS)[number];

/** Most 3-digit prefixes one column sends (the most frequent first). */
const MAX_PREFIXES = 1000;

/**
 * The (3-digit ZIP prefix, state) pairs of the raw table held by >= k rows, most rows first: the
 * table's ZIP column (vocabulary `us_zip`) with its state column (`us_state` or `us_state_code`).
 * @returns undefined when the table has no such pair of columns or no prefix reaches k.
 */
export function zipPrefixes(scanned: ScannedTable, codecs: readonly ColumnCodec[], k: number): { column: string; prefixes: ZipPrefix[] } | undefined {
  const zip = codecs.findIndex((c) => c.stats.type === "categorical" && c.stats.vocabulary === "us_zip");
  const state = codecs.findIndex((c) => c.stats.type === "categorical" && (c.stats.vocabulary === "us_state" || c.stats.vocabulary === "us_state_code"));
  if (zip < 0 || state < 0) return undefined;
  const [zs, ss] = [scanned.scans[zip], scanned.scans[state]];
  const counts = new Map<string, number>();
  for (let r = 0; r < scanned.n; r++) {
    const z = zs.values[zs.ids[r]].trim();
    const s = ss.values[ss.ids[r]];
    if (!/^\d{5}(-\d{4})?$/.test(z) || s === "") continue;
    const key = `${z.slice(0, 3)}\u0000${s}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const prefixes = [...counts]
    .filter(([, rows]) => rows >= k)
    .sort((a, b) => b[1] - a[1])
    .slice(0, MAX_PREFIXES)
    .map(([key, rows]) => {
      const [prefix, s] = key.split("\u0000");
      return { prefix, state: s, rows };
    });
  return prefixes.length ? { column: scanned.columns[zip], prefixes } : undefined;
}

/**
 * The (place, state) pairs of the raw table held by >= k rows for states the gazetteer lacks, per
 * city or county column (vocabulary `us_city`, `us_county`) beside a state column, most rows first.
 */
export function statePlaces(scanned: ScannedTable, codecs: readonly ColumnCodec[], k: number): { column: string; places: StatePlace[] }[] {
  const vocab = (c: ColumnCodec) => (c.stats.type === "categorical" ? c.stats.vocabulary : undefined);
  const state = codecs.findIndex((c) => vocab(c) === "us_state" || vocab(c) === "us_state_code");
  if (state < 0) return [];
  const ss = scanned.scans[state];
  const lacking = ss.values.map((s) => s !== "" && !placesByState().has(stateCodeOf(s) ?? ""));
  if (!lacking.some((x) => x)) return [];
  const out: { column: string; places: StatePlace[] }[] = [];
  codecs.forEach((c, f) => {
    if (vocab(c) !== "us_city" && vocab(c) !== "us_county") return;
    const ps = scanned.scans[f];
    const counts = new Map<number, number>();
    for (let r = 0; r < scanned.n; r++) {
      const [sid, pid] = [ss.ids[r], ps.ids[r]];
      if (!lacking[sid] || ps.values[pid] === "") continue;
      const key = sid * ps.values.length + pid;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    const places = [...counts]
      .filter(([, rows]) => rows >= k)
      .sort((a, b) => b[1] - a[1])
      .slice(0, MAX_PREFIXES)
      .map(([key, rows]) => ({ place: ps.values[key % ps.values.length], state: ss.values[Math.floor(key / ps.values.length)], rows }));
    if (places.length) out.push({ column: scanned.columns[f], places });
  });
  return out;
}

/** Weighted values: a value list and its cumulative weights. */
interface Weighted {
  values: string[];
  cum: number[];
  keys: Set<string>;
}

function weighted(pairs: [string, number][]): Weighted {
  const cum: number[] = [];
  let acc = 0;
  for (const [, w] of pairs) cum.push((acc += w));
  return { values: pairs.map(([v]) => v), cum, keys: new Set(pairs.map(([v]) => vocabularyKey(v))) };
}

function pick(w: Weighted, rng: Rng): string {
  const x = rng.next() * w.cum[w.cum.length - 1];
  let i = 0;
  while (i < w.cum.length - 1 && w.cum[i] <= x) i++;
  return w.values[i];
}

/** Code -> value of a column's `value_mappings` (undefined for the pooled and blank codes). */
function valuesByCode(meta: Metadata, f: string): (string | undefined)[] {
  const out: (string | undefined)[] = [];
  for (const [v, c] of Object.entries(meta.value_mappings?.[f] ?? {})) if (v !== OTHER && v !== MISSING_KEY && out[c] === undefined) out[c] = v;
  return out;
}

/**
 * The values of column a seen with each value of column b in the metadata: a fixed-combinations
 * rule holding both (its released combinations, by count), else their 2-way marginal (by share);
 * the pooled and blank codes left out. Undefined when neither is sent.
 */
export function valuesSeenWith(meta: Metadata, a: string, b: string): Map<string, Weighted> | undefined {
  const [va, vb] = [valuesByCode(meta, a), valuesByCode(meta, b)];
  const lists = new Map<string, Map<string, number>>();
  const add = (ca: number, cb: number, w: number): void => {
    const [x, y] = [va[ca], vb[cb]];
    if (x === undefined || y === undefined || w <= 0) return;
    const m = lists.get(y) ?? lists.set(y, new Map()).get(y)!;
    m.set(x, (m.get(x) ?? 0) + w);
  };
  const rule = meta.rules?.find((r) => r.type === "fixed_combinations" && r.columns.includes(a) && r.columns.includes(b));
  if (rule?.type === "fixed_combinations") {
    const [ia, ib] = [rule.columns.indexOf(a), rule.columns.indexOf(b)];
    rule.combinations.forEach((t, i) => add(t[ia], t[ib], rule.counts[i] ?? 1));
  } else {
    const m = meta.marginals?.find((x) => x.features.includes(a) && x.features.includes(b));
    if (!m) return undefined;
    const [Ka, Kb] = [meta.cardinalities[m.features[0]], meta.cardinalities[m.features[1]]];
    if (m.probs.length !== Ka * Kb) return undefined;
    const aFirst = m.features[0] === a;
    for (let i = 0; i < Ka; i++) for (let j = 0; j < Kb; j++) add(aFirst ? i : j, aFirst ? j : i, m.probs[i * Kb + j]);
  }
  return new Map([...lists].map(([y, m]) => [y, weighted([...m])]));
}

/** Header words of each place kind (as `./vocabulary` gates them). */
const HEADERS: Record<Kind, RegExp> = { us_zip: ZIP_HEADER, us_city: /city|town/, us_county: /county|parish|borough/ };

/**
 * Whether a categorical column without a vocabulary is one of `kind`'s: its header names the kind
 * and >= {@link MIN_PUBLIC_SHARE} of its released values are the gazetteer's.
 */
function placeColumn(meta: Metadata, name: string, kind: Kind): boolean {
  const st = meta.column_stats?.[name];
  if (st?.type !== "categorical" || st.vocabulary !== undefined || !HEADERS[kind].test(name.toLowerCase())) return false;
  const own = valuesByCode(meta, name).filter((v): v is string => v !== undefined);
  const set = vocabularySet(kind);
  return own.length >= MIN_PUBLIC_VALUES && own.filter((v) => set.has(vocabularyKey(v))).length >= MIN_PUBLIC_SHARE * own.length;
}

/** A state's gazetteer rows by `kind|key` of each place name ({@link placeKey}). */
type StateIndex = Map<string, Place[]>;


function indexOf(list: readonly Place[]): StateIndex {
  const m: StateIndex = new Map();
  for (const p of list) {
    for (const kind of KINDS) {
      for (const name of placeNames(kind, p)) {
        if (name === "") continue;
        const key = `${kind}|${placeKey(name)}`;
        const at = m.get(key);
        if (!at) m.set(key, [p]);
        else if (at[at.length - 1] !== p) at.push(p);
      }
    }
  }
  return m;
}

/** The places of `list` that are also in `match`, in `list`'s order. */
function intersect(list: readonly Place[], match: readonly Place[]): Place[] {
  const m = new Set(match);
  return list.filter((p) => m.has(p));
}

/** The place columns {@link GazetteerRows} writes for this metadata (none when it writes none). */
export function placeColumns(metadata: Metadata): string[] {
  return new GazetteerRows(metadata).columns;
}

/** One place column of the table. */
interface PlaceColumn {
  f: number;
  kind: Kind;
  /** Released values ({@link vocabularyKey} form). */
  released: Set<string>;
  /** Values seen with each state value (a state the gazetteer lacks). */
  byState?: Map<string, Weighted>;
  /** County columns: the table writes `Suffolk County` rather than `Suffolk`. */
  withSuffix: boolean;
  /** The column's letter case (`column_stats[f].place_form`), for the gazetteer's names. */
  letterCase?: PlaceForm["letter_case"];
}

/**
 * Writes each decoded row's places from one gazetteer row of its state (file header), from the
 * metadata alone: its state column, place columns and their released values, rules, marginals and
 * `zip_prefixes`.
 */
export class GazetteerRows {
  private readonly state: number = -1;
  private readonly cols: PlaceColumn[] = [];
  /** A state the gazetteer lacks: the city's counties by city value. */
  private readonly countiesByCity?: Map<string, Weighted>;
  /** A state the gazetteer lacks: its ZIP prefixes by state value. */
  private readonly prefixes = new Map<string, Weighted>();
  private readonly byState = new Map<string, StateIndex | undefined>();

  constructor(metadata: Metadata) {
    this.names = metadata.features;
    const stats = metadata.column_stats ?? {};
    const at = (test: (v: string | undefined) => boolean): number =>
      metadata.features.findIndex((f) => stats[f]?.type === "categorical" && test(stats[f].vocabulary));
    this.state = at((v) => v === "us_state" || v === "us_state_code");
    if (this.state < 0) return;
    const stateName = metadata.features[this.state];
    for (const kind of KINDS) {
      let f = at((v) => v === kind);
      // A column whose vocabulary fit dropped (all its values released, kept by a rule) is found by its header and values.
      if (f < 0) f = metadata.features.findIndex((name, g) => g !== this.state && !this.cols.some((c) => c.f === g) && placeColumn(metadata, name, kind));
      if (f < 0) continue;
      const name = metadata.features[f];
      const own = valuesByCode(metadata, name).filter((v): v is string => v !== undefined);
      const byState = valuesSeenWith(metadata, name, stateName) ?? new Map<string, Weighted>();
      const st = stats[name];
      const extra = new Map<string, [string, number][]>();
      for (const p of (st?.type === "categorical" && st.state_places) || []) (extra.get(p.state) ?? extra.set(p.state, []).get(p.state)!).push([p.place, p.rows]);
      for (const [s, l] of extra) if (!byState.has(s)) byState.set(s, weighted(l));
      const suffixed = own.filter((v) => / (County|Parish|Borough)$/.test(v)).length;
      this.cols.push({
        f,
        kind,
        released: new Set(own.map(vocabularyKey)),
        byState,
        withSuffix: kind === "us_county" && suffixed * 2 > own.length,
        letterCase: st?.type === "categorical" ? st.place_form?.letter_case : undefined,
      });
    }
    if (this.cols.length < 2) {
      this.cols.length = 0;
      return;
    }
    const [city, county] = [this.col("us_city"), this.col("us_county")];
    if (city && county) this.countiesByCity = valuesSeenWith(metadata, metadata.features[county.f], metadata.features[city.f]);
    const zip = this.col("us_zip");
    const lists = new Map<string, [string, number][]>();
    for (const p of (zip && stats[metadata.features[zip.f]]?.zip_prefixes) || []) (lists.get(p.state) ?? lists.set(p.state, []).get(p.state)!).push([p.prefix, p.rows]);
    for (const [s, l] of lists) this.prefixes.set(s, weighted(l));
  }

  private readonly names: readonly string[];

  /** The place columns written, by name (none when inactive). */
  get columns(): string[] {
    return this.cols.map((c) => this.names[c.f]);
  }

  /** Whether the metadata has a state column and two place columns to write. */
  get active(): boolean {
    return this.cols.length >= 2;
  }

  private col(kind: Kind): PlaceColumn | undefined {
    return this.cols.find((c) => c.kind === kind);
  }

  private stateIndex(value: string): StateIndex | undefined {
    if (this.byState.has(value)) return this.byState.get(value);
    const code = stateCodeOf(value);
    const list = code === undefined ? undefined : placesByState().get(code);
    const idx = list ? indexOf(list) : undefined;
    this.byState.set(value, idx);
    return idx;
  }

  /**
   * Rewrites the place cells of each row with a state (rows with a fixed place cell are left as
   * they are). @returns the cells changed.
   * @param seed seeds the draws (the batch's decode seed).
   * @param fixed cells never rewritten (seed cells, `where` columns).
   */
  apply(cells: Cells, seed: number, fixed?: (row: number, feature: number) => boolean): number {
    if (!this.active) return 0;
    const rng = new Rng(deriveSeed(seed, 0x504c4143));
    let changed = 0;
    const write = (r: number, c: PlaceColumn, v: string): void => {
      const old = cells.get(r, c.f);
      if (old !== v && vocabularyKey(old) !== vocabularyKey(v)) {
        cells.set(r, c.f, v);
        changed++;
      }
    };
    for (let r = 0; r < cells.length; r++) {
      if (this.cols.some((c) => fixed?.(r, c.f))) continue;
      const sv = cells.get(r, this.state);
      if (sv === "") continue;
      const idx = this.stateIndex(sv);
      if (idx) this.fromGazetteer(cells, r, sv, idx, rng, write);
      else this.fromTable(cells, r, sv, rng, write);
    }
    return changed;
  }

  private fromGazetteer(cells: Cells, r: number, sv: string, idx: StateIndex, rng: Rng, write: (r: number, c: PlaceColumn, v: string) => void): void {
    const rows = (c: PlaceColumn): Place[] | undefined => {
      const v = cells.get(r, c.f);
      return v === "" ? undefined : idx.get(`${c.kind}|${placeKey(v)}`);
    };
    // A released value the table holds with this state, which the gazetteer spells otherwise, is kept.
    const kept = this.cols.map((c) => {
      const v = cells.get(r, c.f);
      return c.released.has(vocabularyKey(v)) && (c.byState?.get(sv)?.keys.has(vocabularyKey(v)) ?? false) && !rows(c);
    });
    let anchor = -1;
    let from: Place[] | undefined;
    for (const released of [true, false]) {
      for (let j = 0; j < this.cols.length && !from; j++) {
        if (this.cols[j].released.has(vocabularyKey(cells.get(r, this.cols[j].f))) !== released) continue;
        from = rows(this.cols[j]);
        if (from) anchor = j;
      }
      if (from) break;
    }
    const all = this.allOf(idx);
    let list: Place[] = from ?? all.list;
    // Narrowed by each other place cell through the index, never to nothing.
    this.cols.forEach((c, j) => {
      if (j === anchor) return;
      const match = rows(c);
      if (!match) return;
      const narrowed = list === all.list ? match.filter((p) => all.set.has(p)) : intersect(list, match);
      if (narrowed.length) list = narrowed;
    });
    // ZIP codes on the table's own prefixes for the state (those seen in >= k rows), where it has some.
    const prefixes = this.prefixes.get(sv);
    const zip = this.cols.findIndex((c) => c.kind === "us_zip");
    if (prefixes && zip >= 0 && zip !== anchor && !kept[zip]) {
      const narrowed = list === all.list ? this.onPrefixes(sv, all.list, prefixes) : list.filter((p) => prefixes.keys.has(p.zip.slice(0, 3)));
      if (narrowed.length) list = narrowed;
    }
    const p = list[rng.int(list.length)];
    this.cols.forEach((c, j) => {
      if (j === anchor || kept[j]) return;
      const v = cells.get(r, c.f);
      const names = placeNames(c.kind, p);
      if (names.length === 0 || names.some((n) => placeKey(n) === placeKey(v))) return;
      // A county written with its kind word is the Census' name (`Caddo Parish`), else GeoNames' without it.
      const name = c.kind !== "us_county" ? names[0] : c.withSuffix ? (censusCountyName(p) ?? names[0]) : names[1];
      write(r, c, inLetterCase(name, c.letterCase));
    });
  }

  private readonly all = new WeakMap<StateIndex, { list: Place[]; set: Set<Place> }>();
  /** Every gazetteer row of an indexed state (each once: its ZIP codes), as a list and a set. */
  private allOf(idx: StateIndex): { list: Place[]; set: Set<Place> } {
    let all = this.all.get(idx);
    if (!all) {
      const list: Place[] = [];
      for (const [key, ps] of idx) if (key.startsWith("us_zip|")) list.push(...ps);
      all = { list, set: new Set(list) };
      this.all.set(idx, all);
    }
    return all;
  }

  private readonly prefixed = new Map<string, Place[]>();
  /** A state's gazetteer rows on the table's ZIP prefixes for it (once per state value). */
  private onPrefixes(sv: string, list: Place[], prefixes: Weighted): Place[] {
    let out = this.prefixed.get(sv);
    if (!out) this.prefixed.set(sv, (out = list.filter((p) => prefixes.keys.has(p.zip.slice(0, 3)))));
    return out;
  }

  private fromTable(cells: Cells, r: number, sv: string, rng: Rng, write: (r: number, c: PlaceColumn, v: string) => void): void {
    let cityValue: string | undefined;
    for (const c of this.cols) {
      const v = cells.get(r, c.f);
      if (c.kind === "us_zip") {
        const w = this.prefixes.get(sv);
        if (w && !w.keys.has(v.trim().slice(0, 3))) write(r, c, `${pick(w, rng)}${String(rng.int(100)).padStart(2, "0")}`);
        continue;
      }
      let w = c.byState?.get(sv);
      if (c.kind === "us_county" && cityValue !== undefined) {
        const near = this.countiesByCity?.get(cityValue);
        const both = near && w ? near.values.filter((x) => w!.keys.has(vocabularyKey(x))) : [];
        if (both.length) w = weighted(both.map((x) => [x, 1]));
      }
      if (!w) continue;
      if (w.keys.has(vocabularyKey(v))) {
        if (c.kind === "us_city") cityValue = v;
        continue;
      }
      const to = pick(w, rng);
      write(r, c, to);
      if (c.kind === "us_city") cityValue = to;
    }
  }
}
