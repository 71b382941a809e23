/**
 * Realism checks of a synthetic table against its real one, for `npm run bench -- tables`
 * (issue 40): what a user sees when reading the rows, measured independently of what the SDK
 * detects. Each check takes the two tables as scans (`scanTable`: trimmed distinct values, a value
 * id per row) and reports shares of synthetic rows; a blank cell is the empty string.
 *
 * - {@link textRealism}: per text column (not numeric, not datetime), the share of synthetic values
 *   that are real values of the column, and the share holding an invented token: a run of letters
 *   (Unicode letters and marks) that no real value of the column holds, compared case-folded.
 *   Numbers are never invented tokens, so `4291 Main St` from `2009 Main St` is not flagged, and
 *   `QithIqRxrbaaj` is. A column written with fresh names by design (people's names) also shows
 *   invented tokens; the examples tell the two apart.
 * - {@link geography}: where the column names say city, state, zip or latitude/longitude, the
 *   share of synthetic rows whose (city, state) and (zip prefix, state) pairs are real, and whose
 *   point lies inside its state's box; "real" means held by the real table or by a gazetteer
 *   ({@link Gazetteer}, built from a public table of US zip codes).
 * - {@link structuralZeros}: for each pair of columns of at most {@link MAX_CARDINALITY} values,
 *   the value pairs the real rows hold in under {@link ZERO_SHARE} of the rows independence
 *   predicts there (count(a) * count(b) / n), where that is at least {@link MIN_PREDICTED} rows
 *   (Adult's one `Husband` who is `Female` against 4,364 predicted): the structural zeros of
 *   Private-PGM (McKenna et al., "Graphical-model based estimation and inference for differential
 *   privacy", ICML 2019); the share of synthetic rows inside them.
 * - {@link linearIdentities}: every C = +-A +- B + k (k constant) among three numeric columns that
 *   holds in all real rows where the three are filled (at least {@link MIN_IDENTITY_ROWS} rows, none of
 *   the three constant), exactly for integers and within 1.5 units of the last decimal for decimals
 *   (three values each rounded by half a unit); and the share of synthetic rows that keep it. Sums
 *   whose parts are mostly zero are among them (judged on every row, and counted on the rows
 *   where a part is not zero).
 * - {@link ratioIdentities}: every C = k·A^±1 (·B^±1) among non-negative numeric columns that
 *   holds in all real rows (rates, shares, price times quantity), and the share of synthetic rows
 *   that keep it.
 * - {@link grain}: per numeric column, the share of non-zero values at multiples of each step of
 *   {@link GRAIN_STEPS} (rounding mixtures and fractional steps; zero, a multiple of every step,
 *   left out) real against synthetic, and the TVD of the number of decimals the values are written
 *   with; for a column of repeated values (distinct values at most {@link LATTICE_SHARE} of its
 *   filled rows: a lattice such as whole degrees Fahrenheit written in Celsius), the share of
 *   synthetic values that are values of the real column.
 * - {@link catalogs}: per key column of the real table (values repeated) and the columns it
 *   decides in every real row, the share of synthetic rows whose key is a real key with its real
 *   attributes (rows whose key is blank or the SDK's pooled text `__other__` name no entry).
 */
import { decimalsOf, isNumeric, type ScannedTable } from "../src/sdk/metadata/metadata";
import { DatetimeFormat, inferDatetimeFormat } from "../src/sdk/metadata/datetime";
import { weekdayOf, weekdaysOf } from "../src/sdk/columns/datetime";
import { RULE_LIMITS } from "../src/sdk/rules/detect/options";
import { OTHER } from "../src/sdk/columns";

/** Most distinct values (blank included) of a column in {@link structuralZeros}. */
export const MAX_CARDINALITY = 200;
/** Rows independence must predict in a value pair before its absence counts as a structural zero. */
export const MIN_PREDICTED = 30;
/** A value pair with fewer real rows than this share of the predicted ones is a structural zero. */
export const ZERO_SHARE = 0.01;
/** Fewest real rows an identity must hold in. */
export const MIN_IDENTITY_ROWS = 30;
/** Steps of {@link grain}: round thousands down to twelfths. */
export const GRAIN_STEPS = [1000, 100, 50, 10, 5, 1, 0.5, 0.25, 1 / 12];
/** Most distinct values, as a share of the filled rows, of a numeric column {@link grain} treats as a lattice. */
export const LATTICE_SHARE = 0.2;
/** Examples kept per finding. */
const EXAMPLES = 3;

/** The value of every row of column `name` (undefined when the scan lacks it). */
function column(t: ScannedTable, name: string): string[] | undefined {
  const c = t.columns.indexOf(name);
  if (c < 0) return undefined;
  const s = t.scans[c];
  return Array.from(s.ids, (id) => s.values[id]);
}

/** Runs of letters of a text, case-folded. */
export function letterTokens(v: string): string[] {
  return (v.toLowerCase().match(/[\p{L}\p{M}]+/gu) ?? []) as string[];
}

/** {@link textRealism} of one column. */
export interface TextRealism {
  column: string;
  /** Share of the synthetic non-blank values that are values of the real column. */
  real_values: number;
  /** Share of the synthetic non-blank values holding a letter token no real value of the column holds. */
  invented_tokens: number;
  /** Up to three synthetic values with an invented token. */
  examples: string[];
}

/**
 * {@link TextRealism} of each text column of `real` (a column some real value of which is not a
 * number, and whose kind in `kinds` is not `datetime`) that `synth` also has.
 */
export function textRealism(real: ScannedTable, synth: ScannedTable, kinds: Record<string, string>): TextRealism[] {
  const out: TextRealism[] = [];
  real.scans.forEach((s, c) => {
    const name = real.columns[c];
    if (kinds[name] === "datetime" || s.values.every((v) => v === "" || isNumeric(v))) return;
    const values = column(synth, name);
    if (!values) return;
    const realValues = new Set(s.values);
    const tokens = new Set(s.values.flatMap(letterTokens));
    let filled = 0;
    let known = 0;
    let invented = 0;
    const examples: string[] = [];
    for (const v of values) {
      if (v === "") continue;
      filled++;
      if (realValues.has(v)) known++;
      else if (letterTokens(v).some((t) => !tokens.has(t))) {
        invented++;
        if (examples.length < EXAMPLES && !examples.includes(v)) examples.push(v);
      }
    }
    out.push({ column: name, real_values: filled ? known / filled : 1, invented_tokens: filled ? invented / filled : 0, examples });
  });
  return out;
}

/** Words of a column name, lower case: `Origin State` -> origin, state; `zipCode` -> zip, code. */
export function nameWords(name: string): string[] {
  return name
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== "");
}

/** Public places the {@link geography} check accepts besides the real table's own. */
export interface Gazetteer {
  /** `city|STATE` pairs, city case-folded, state as its code. */
  cityState: Set<string>;
  /** States (codes) of each 3-digit zip prefix. */
  zipStates: Map<string, Set<string>>;
  /** Latitude and longitude box [minLat, maxLat, minLon, maxLon] of each state (code). */
  boxes: Map<string, [number, number, number, number]>;
  /** State name, case-folded, to its code. */
  stateCodes: Map<string, string>;
}

/** An empty gazetteer with state names mapped to codes (`names[i]` is `codes[i]`). */
export function emptyGazetteer(names: readonly string[] = [], codes: readonly string[] = []): Gazetteer {
  return { cityState: new Set(), zipStates: new Map(), boxes: new Map(), stateCodes: new Map(names.map((n, i) => [n.toLowerCase(), codes[i]])) };
}

/** A state cell as its code where the gazetteer knows the name, else itself (upper case). */
function stateKey(g: Gazetteer, v: string): string {
  return g.stateCodes.get(v.toLowerCase()) ?? v.toUpperCase();
}

/** The 3-digit prefix of a 5-digit US zip code written with or without its leading zeros (`501` -> `005`); undefined for other text. */
export function zipPrefix(v: string): string | undefined {
  const m = /^(\d{3,5})(?:-\d{4})?$/.exec(v);
  return m ? m[1].padStart(5, "0").slice(0, 3) : undefined;
}

/** Adds places: rows of (city, state, zip, latitude, longitude) cells, blanks skipped. */
export function addPlaces(g: Gazetteer, rows: Iterable<{ city?: string; state?: string; zip?: string; lat?: string; lon?: string }>): void {
  for (const r of rows) {
    if (!r.state) continue;
    const st = stateKey(g, r.state);
    if (r.city) g.cityState.add(`${r.city.toLowerCase()}|${st}`);
    const z = r.zip ? zipPrefix(r.zip) : undefined;
    if (z) {
      const set = g.zipStates.get(z) ?? new Set<string>();
      set.add(st);
      g.zipStates.set(z, set);
    }
    const la = Number(r.lat);
    const lo = Number(r.lon);
    if (r.lat && r.lon && Number.isFinite(la) && Number.isFinite(lo)) {
      const b = g.boxes.get(st);
      if (!b) g.boxes.set(st, [la, la, lo, lo]);
      else {
        b[0] = Math.min(b[0], la);
        b[1] = Math.max(b[1], la);
        b[2] = Math.min(b[2], lo);
        b[3] = Math.max(b[3], lo);
      }
    }
  }
}

/** One {@link geography} check. */
export interface GeoCheck {
  /** `(city, state)`, `(zip prefix, state)` or `(latitude, longitude) in state`. */
  check: string;
  columns: string[];
  /** Synthetic rows with every cell of the check filled. */
  rows: number;
  /** Share of those rows that are real places (points: inside the state's box). */
  real: number;
  /** Up to three rows that are not, their cells joined by ", ". */
  examples: string[];
}

/** The geography columns of a table by their names' words: city, state, zip, latitude, longitude. */
export function geoColumns(columns: readonly string[]): { city: string[]; state: string[]; zip: string[]; lat?: string; lon?: string } {
  const has = (c: string, words: string[]): boolean => nameWords(c).some((w) => words.includes(w));
  return {
    city: columns.filter((c) => has(c, ["city"])),
    state: columns.filter((c) => has(c, ["state"])),
    zip: columns.filter((c) => has(c, ["zip", "zipcode", "postcode", "postal"])),
    lat: columns.find((c) => has(c, ["lat", "latitude"])),
    lon: columns.find((c) => has(c, ["lon", "lng", "long", "longitude"])),
  };
}

/**
 * The {@link GeoCheck}s of the synthetic table: for each city column and each state column, for
 * each zip column and each state column, and for the latitude and longitude with each state
 * column, the places of the real table added to a copy of `gazetteer` as the reference.
 */
export function geography(real: ScannedTable, synth: ScannedTable, gazetteer: Gazetteer): GeoCheck[] {
  const cols = geoColumns(real.columns);
  const out: GeoCheck[] = [];
  for (const st of cols.state) {
    const g: Gazetteer = {
      cityState: new Set(gazetteer.cityState),
      zipStates: new Map([...gazetteer.zipStates].map(([k, v]) => [k, new Set(v)])),
      boxes: new Map([...gazetteer.boxes].map(([k, v]) => [k, [...v] as [number, number, number, number]])),
      stateCodes: gazetteer.stateCodes,
    };
    const realRows = (t: ScannedTable, city?: string, zip?: string): { city?: string; state?: string; zip?: string; lat?: string; lon?: string }[] => {
      const get = (c: string | undefined): string[] | undefined => (c === undefined ? undefined : column(t, c));
      const [s, ci, z, la, lo] = [get(st), get(city), get(zip), get(cols.lat), get(cols.lon)];
      return Array.from({ length: t.n }, (_, r) => ({ state: s?.[r], city: ci?.[r], zip: z?.[r], lat: la?.[r], lon: lo?.[r] }));
    };
    for (const city of cols.city) addPlaces(g, realRows(real, city));
    for (const zip of cols.zip) addPlaces(g, realRows(real, undefined, zip));
    if (!cols.city.length && !cols.zip.length) addPlaces(g, realRows(real));
    const check = (name: string, columns: string[], keep: (cells: string[]) => boolean): void => {
      const vals = columns.map((c) => column(synth, c));
      if (vals.some((v) => v === undefined)) return;
      let rows = 0;
      let ok = 0;
      const examples: string[] = [];
      for (let r = 0; r < synth.n; r++) {
        const cells = vals.map((v) => v![r]);
        if (cells.some((x) => x === "")) continue;
        rows++;
        if (keep(cells)) ok++;
        else if (examples.length < EXAMPLES) examples.push(cells.join(", "));
      }
      out.push({ check: name, columns, rows, real: rows ? ok / rows : 1, examples });
    };
    for (const city of cols.city) check("(city, state)", [city, st], ([c, s]) => g.cityState.has(`${c.toLowerCase()}|${stateKey(g, s)}`));
    for (const zip of cols.zip)
      check("(zip prefix, state)", [zip, st], ([z, s]) => {
        const p = zipPrefix(z);
        return p !== undefined && (g.zipStates.get(p)?.has(stateKey(g, s)) ?? false);
      });
    if (cols.lat && cols.lon)
      check("(latitude, longitude) in state", [cols.lat, cols.lon, st], ([la, lo, s]) => {
        const b = g.boxes.get(stateKey(g, s));
        const [y, x] = [Number(la), Number(lo)];
        return b !== undefined && y >= b[0] && y <= b[1] && x >= b[2] && x <= b[3];
      });
  }
  return out;
}

/** Structural zeros of one pair of columns ({@link structuralZeros}). */
export interface StructuralZeroPair {
  columns: [string, string];
  /** Value pairs the real rows (nearly) never hold where independence predicts at least {@link MIN_PREDICTED} rows. */
  cells: number;
  /** Real rows independence puts in those cells, summed. */
  predicted_rows: number;
  /** Synthetic rows in those cells, and their share of the synthetic rows. */
  synthetic_rows: number;
  synthetic_share: number;
  /** Up to three value pairs synthetic rows hold, `a | b`, most frequent first. */
  examples: string[];
}

/** Result of {@link structuralZeros}. */
export interface StructuralZeros {
  pairs: StructuralZeroPair[];
  /** Share of synthetic rows inside a structural zero of at least one pair. */
  rows_share: number;
}

/** Structural zeros of every pair of columns of at most {@link MAX_CARDINALITY} real values (file header). */
export function structuralZeros(real: ScannedTable, synth: ScannedTable): StructuralZeros {
  const eligible = real.scans.map((s, c) => c).filter((c) => real.scans[c].values.length <= MAX_CARDINALITY && real.scans[c].values.length >= 2);
  // Synthetic value ids in the real column's ids (-1: a value the real column never has).
  const sIds = new Map<number, Int32Array>();
  for (const c of eligible) {
    const sc = synth.columns.indexOf(real.columns[c]);
    if (sc < 0) continue;
    const index = new Map(real.scans[c].values.map((v, i) => [v, i]));
    const s = synth.scans[sc];
    const map = s.values.map((v) => index.get(v) ?? -1);
    sIds.set(c, Int32Array.from(s.ids, (id) => map[id]));
  }
  const pairs: StructuralZeroPair[] = [];
  const inZero = new Uint8Array(synth.n);
  for (let i = 0; i < eligible.length; i++) {
    for (let j = i + 1; j < eligible.length; j++) {
      const [a, b] = [eligible[i], eligible[j]];
      const sa = sIds.get(a);
      const sb = sIds.get(b);
      if (!sa || !sb) continue;
      const A = real.scans[a];
      const B = real.scans[b];
      const KB = B.values.length;
      const joint = new Int32Array(A.values.length * KB);
      for (let r = 0; r < real.n; r++) joint[A.ids[r] * KB + B.ids[r]]++;
      const zero = new Uint8Array(joint.length);
      let cells = 0;
      let predicted = 0;
      for (let x = 0; x < A.values.length; x++) {
        for (let y = 0; y < KB; y++) {
          const e = (A.counts[x] * B.counts[y]) / real.n;
          if (e >= MIN_PREDICTED && joint[x * KB + y] < ZERO_SHARE * e) {
            zero[x * KB + y] = 1;
            cells++;
            predicted += e;
          }
        }
      }
      if (!cells) continue;
      let rows = 0;
      const seen = new Map<number, number>();
      for (let r = 0; r < synth.n; r++) {
        const x = sa[r];
        const y = sb[r];
        if (x < 0 || y < 0 || !zero[x * KB + y]) continue;
        rows++;
        inZero[r] = 1;
        seen.set(x * KB + y, (seen.get(x * KB + y) ?? 0) + 1);
      }
      const examples = [...seen]
        .sort((p, q) => q[1] - p[1])
        .slice(0, EXAMPLES)
        .map(([k]) => `${A.values[Math.floor(k / KB)]} | ${B.values[k % KB]}`);
      pairs.push({
        columns: [real.columns[a], real.columns[b]],
        cells,
        predicted_rows: Math.round(predicted),
        synthetic_rows: rows,
        synthetic_share: synth.n ? rows / synth.n : 0,
        examples,
      });
    }
  }
  pairs.sort((p, q) => q.synthetic_share - p.synthetic_share || q.predicted_rows - p.predicted_rows);
  return { pairs, rows_share: synth.n ? inZero.reduce((s, x) => s + x, 0) / synth.n : 0 };
}

/** What the bench reports of an identity of the real rows, linear or ratio. */
interface IdentityCheck {
  /** `total = a + b`, `rate = 100 * unemployed / labor force`. */
  label: string;
  /** Real rows it applies to (all keep it). */
  real_rows: number;
  /** Of those, rows where a part is not zero (a sparse part's rows). */
  real_rows_nonzero_part: number;
  /** Synthetic rows it applies to, and the share of them that keep it. */
  synthetic_rows: number;
  synthetic: number;
  /** Up to three synthetic rows that break it: `total, part, part`. */
  examples: string[];
}

/** One identity of {@link linearIdentities}: `total = signs[0] * parts[0] + signs[1] * parts[1] + constant`. */
export interface LinearIdentity extends IdentityCheck {
  total: string;
  parts: [string, string];
  signs: [1 | -1, 1 | -1];
  constant: number;
}

/** A numeric column's values (NaN for a blank or non-number) and its most decimals. */
function numbers(t: ScannedTable, name: string): { x: Float64Array; decimals: number } | undefined {
  const c = t.columns.indexOf(name);
  if (c < 0) return undefined;
  const s = t.scans[c];
  const parsed = s.values.map((v) => (isNumeric(v) ? Number(v) : NaN));
  const decimals = s.values.reduce((m, v) => (isNumeric(v) ? Math.max(m, decimalsOf(v)) : m), 0);
  return { x: Float64Array.from(s.ids, (id) => parsed[id]), decimals };
}

/** Three columns' rows filled in all three. */
function filledRows(cols: Float64Array[], n: number): number[] {
  const rows: number[] = [];
  for (let r = 0; r < n; r++) if (cols.every((x) => !Number.isNaN(x[r]))) rows.push(r);
  return rows;
}

/** |a - b| within `dev` (and float rounding of their size). */
function near(a: number, b: number, dev: number): boolean {
  return Math.abs(a - b) <= dev + 1e-12 * Math.max(Math.abs(a), Math.abs(b));
}

/**
 * How far an identity of columns written with at most `decimals` decimals may miss: nothing for
 * integers; 1.5 units of the last decimal otherwise (three values each rounded by half a unit).
 */
export function identityTolerance(decimals: number): number {
  return decimals > 0 ? 1.5 * 10 ** -decimals : 1e-9;
}

/** Every linear identity of the real table's numeric columns, kept or not by the synthetic rows (file header). */
export function linearIdentities(real: ScannedTable, synth: ScannedTable): LinearIdentity[] {
  const names = real.columns.filter((_, c) => real.scans[c].numeric && real.scans[c].values.length > 1);
  const cols = names.map((n) => numbers(real, n)!);
  const out: LinearIdentity[] = [];
  // p . (A, B, C) = k, up to a common sign.
  const patterns: [number, number, number][] = [[1, 1, -1], [1, -1, 1], [-1, 1, 1], [1, 1, 1]];
  for (let i = 0; i < names.length; i++) {
    for (let j = i + 1; j < names.length; j++) {
      for (let l = j + 1; l < names.length; l++) {
        const tri = [cols[i], cols[j], cols[l]];
        const rows = filledRows(tri.map((c) => c.x), real.n);
        if (rows.length < MIN_IDENTITY_ROWS) continue;
        if (tri.some((c) => rows.every((r) => c.x[r] === c.x[rows[0]]))) continue;
        const dev = identityTolerance(Math.max(...tri.map((c) => c.decimals)));
        for (const p of patterns) {
          const v = rows.map((r) => p[0] * tri[0].x[r] + p[1] * tri[1].x[r] + p[2] * tri[2].x[r]);
          const k = [...v].sort((a, b) => a - b)[v.length >> 1];
          if (!v.every((x) => near(x, k, dev))) continue;
          out.push(identity([names[i], names[j], names[l]], p, k, tri, rows, synth, dev));
          break;
        }
      }
    }
  }
  return out;
}

function identity(
  names: string[],
  p: [number, number, number],
  k: number,
  tri: { x: Float64Array; decimals: number }[],
  rows: number[],
  synth: ScannedTable,
  dev: number,
): LinearIdentity {
  // The total is the column whose coefficient has its own sign (the last one when all agree).
  const t = p.filter((x) => x < 0).length === 1 ? p.findIndex((x) => x < 0) : 2;
  const others = [0, 1, 2].filter((x) => x !== t);
  // From p . (A, B, C) = k: total = -(p_a / p_t) a - (p_b / p_t) b + k / p_t.
  const signs = others.map((o) => (-p[o] / p[t] > 0 ? 1 : -1)) as [1 | -1, 1 | -1];
  const decimals = Math.max(...tri.map((c) => c.decimals));
  const constant = Number((k / p[t]).toFixed(decimals));
  const label =
    `${names[t]} = ${signs[0] < 0 ? "-" : ""}${names[others[0]]} ${signs[1] < 0 ? "-" : "+"} ${names[others[1]]}` +
    (constant ? ` ${constant < 0 ? "-" : "+"} ${Math.abs(constant)}` : "");
  const nonzero = rows.filter((r) => others.some((o) => tri[o].x[r] !== 0)).length;
  const s = names.map((n) => numbers(synth, n));
  let sRows = 0;
  let kept = 0;
  const examples: string[] = [];
  if (s.every((c) => c !== undefined)) {
    const sx = s.map((c) => c!.x);
    for (const r of filledRows(sx, synth.n)) {
      sRows++;
      if (near(sx[t][r], signs[0] * sx[others[0]][r] + signs[1] * sx[others[1]][r] + constant, dev)) kept++;
      else if (examples.length < EXAMPLES) examples.push(`${names[t]} ${sx[t][r]}, ${names[others[0]]} ${sx[others[0]][r]}, ${names[others[1]]} ${sx[others[1]][r]}`);
    }
  }
  return {
    total: names[t],
    parts: [names[others[0]], names[others[1]]],
    signs,
    constant,
    label,
    real_rows: rows.length,
    real_rows_nonzero_part: nonzero,
    synthetic_rows: sRows,
    synthetic: sRows ? kept / sRows : 1,
    examples,
  };
}

/** {@link grain} of one numeric column. */
export interface GrainCheck {
  column: string;
  /** The step whose share of multiples among the non-zero values differs most, real against synthetic. */
  step: number;
  real: number;
  synthetic: number;
  /** Two binomial standard deviations of that difference (the noise of the two samples' sizes). */
  noise: number;
  /** Share of the filled values that are zero, real and synthetic (a separate mass), and its noise. */
  zero_real: number;
  zero_synthetic: number;
  zero_noise: number;
  /** TVD between the real and the synthetic distributions of decimals written (`12.80`: 2). */
  decimals_tvd: number;
  /** A lattice column only: share of the synthetic numbers that are values of the real column. */
  real_values?: number;
}

/**
 * The largest gap of a {@link GrainCheck} beyond its noise: in a step's share of the non-zero
 * values, or in the zero share (0 when both are within noise).
 */
export function grainGap(g: GrainCheck): number {
  const beyond = (gap: number, noise: number): number => (gap > noise ? gap : 0);
  return Math.max(beyond(Math.abs(g.real - g.synthetic), g.noise), beyond(Math.abs(g.zero_real - g.zero_synthetic), g.zero_noise));
}

/** Two binomial standard deviations of the difference of two shares of p (Laplace's p: never 0 or 1). */
function twoSd(p: number, nReal: number, nSynth: number): number {
  const q = (p * nReal + 1) / (nReal + 2);
  return 2 * Math.sqrt(q * (1 - q) * (1 / Math.max(1, nReal) + 1 / Math.max(1, nSynth)));
}

/**
 * True when `v` (a numeric text) is a multiple of `step`: exactly, or within less than half a unit
 * of its own last decimal when that unit is finer than the step. A writing as coarse as the step
 * cannot tell (every value to one decimal is within 0.05 of a twelfth), nor can a tie (27.2 is
 * as near 27.25 as 27.15 is).
 */
export function multipleOf(v: string, step: number): boolean {
  const x = Number(v);
  const q = x / step;
  const off = Math.abs(q - Math.round(q)) * step;
  if (off <= 1e-9 * Math.max(1, Math.abs(x))) return true;
  const unit = 10 ** -decimalsOf(v);
  return unit < step && off < 0.5 * unit * (1 - 1e-6);
}

/** Per numeric column of `real` that `synth` has, {@link GrainCheck} (file header). */
export function grain(real: ScannedTable, synth: ScannedTable): GrainCheck[] {
  const out: GrainCheck[] = [];
  real.scans.forEach((s, c) => {
    if (!s.numeric || s.values.length < 2) return;
    const sc = synth.columns.indexOf(real.columns[c]);
    if (sc < 0) return;
    const realValues = new Set(s.values);
    const stats = (scan: ScannedTable["scans"][number]) => {
      const share = GRAIN_STEPS.map(() => 0);
      const decimals = new Map<number, number>();
      let filled = 0;
      let nonzero = 0;
      let distinctNonzero = 0;
      let known = 0;
      scan.values.forEach((v, id) => {
        if (!isNumeric(v)) return;
        const k = scan.counts[id];
        filled += k;
        if (realValues.has(v)) known += k;
        const d = decimalsOf(v);
        decimals.set(d, (decimals.get(d) ?? 0) + k);
        if (Number(v) === 0) return;
        nonzero += k;
        distinctNonzero++;
        GRAIN_STEPS.forEach((step, i) => {
          if (multipleOf(v, step)) share[i] += k;
        });
      });
      for (const [d, k] of decimals) decimals.set(d, k / Math.max(1, filled));
      return { share: share.map((x) => x / Math.max(1, nonzero)), decimals, filled, nonzero, distinctNonzero, zero: (filled - nonzero) / Math.max(1, filled), known: known / Math.max(1, filled) };
    };
    const r = stats(s);
    const y = stats(synth.scans[sc]);
    let best = 0;
    GRAIN_STEPS.forEach((_, i) => {
      if (Math.abs(r.share[i] - y.share[i]) > Math.abs(r.share[best] - y.share[best])) best = i;
    });
    let tvd = 0;
    for (const d of new Set([...r.decimals.keys(), ...y.decimals.keys()])) tvd += Math.abs((r.decimals.get(d) ?? 0) - (y.decimals.get(d) ?? 0));
    // Repeated values among the non-zero ones, as the SDK decides a lattice (zeros a separate mass).
    const lattice = r.distinctNonzero <= LATTICE_SHARE * r.nonzero;
    out.push({
      column: real.columns[c],
      step: GRAIN_STEPS[best],
      real: r.share[best],
      synthetic: y.share[best],
      noise: twoSd(r.share[best], r.nonzero, y.nonzero),
      zero_real: r.zero,
      zero_synthetic: y.zero,
      zero_noise: twoSd(r.zero, r.filled, y.filled),
      decimals_tvd: tvd / 2,
      ...(lattice ? { real_values: y.known } : {}),
    });
  });
  return out;
}

/** Least repeated values a key of {@link catalogs} needs (values seen in two rows or more). */
export const CATALOG_MIN_KEYS = 3;

/** One catalog of {@link catalogs}: a key column and the columns it decides in every real row. */
export interface CatalogCheck {
  key: string;
  attributes: string[];
  /** Key values seen in two real rows or more. */
  real_keys: number;
  /** Synthetic rows with the key filled, and the share of them whose key is a real key with its real attributes. */
  synthetic_rows: number;
  synthetic: number;
  /** Up to three synthetic rows that do not: `key, attributes`. */
  examples: string[];
}

/**
 * log P(every key value seen twice or more holds one value of column `b` by chance), drawing b's
 * values independently from its marginal: the sum over such key values, m rows each, of
 * log(sum_v p_v^m). The SDK's test of a dependency (`dependency` in
 * src/sdk/rules/detect/combinations.ts) with the same bound, `RULE_LIMITS.fdChance`.
 */
function byChance(key: ScannedTable["scans"][number], b: ScannedTable["scans"][number], n: number): number {
  const logs = b.counts.map((c) => Math.log(c / n));
  let total = 0;
  key.values.forEach((v, id) => {
    const m = key.counts[id];
    if (v === "" || m < 2) return;
    const top = Math.max(...logs.map((l) => m * l));
    total += top + Math.log(logs.reduce((s, l) => s + Math.exp(m * l - top), 0));
  });
  return total;
}

/**
 * Catalogs of the real table (a key column deciding other columns: a state its FIPS id and
 * total) and how the synthetic rows keep them. A key is a column whose rows on values seen twice
 * or more are at least half its filled rows, with at least {@link CATALOG_MIN_KEYS} such values;
 * it decides column B when every real key value goes with one B value (blank included), B has
 * two values or more, and the key's repeated values could not hold one B value each by chance
 * (mostly zeros that agree: {@link byChance}, the SDK's bound). A synthetic row keeps the catalog
 * when its key is a real key (any count) and every attribute is that key's real value (numbers
 * compared as numbers). A key whose columns
 * another key's catalog holds as well is reported too (state name and FIPS id both are keys).
 * Then the catalogs with a composite key ({@link compositeCatalogs}).
 */
export function catalogs(real: ScannedTable, synth: ScannedTable): CatalogCheck[] {
  const out: CatalogCheck[] = [];
  const same = (a: string, b: string): boolean => a === b || (isNumeric(a) && isNumeric(b) && Number(a) === Number(b));
  for (let k = 0; k < real.columns.length; k++) {
    const ks = real.scans[k];
    let filled = 0;
    let repeatedRows = 0;
    let repeated = 0;
    ks.values.forEach((v, id) => {
      if (v === "") return;
      filled += ks.counts[id];
      if (ks.counts[id] >= 2) (repeatedRows += ks.counts[id], repeated++);
    });
    if (repeated < CATALOG_MIN_KEYS || repeatedRows < 0.5 * filled) continue;
    const attributes: number[] = [];
    for (let b = 0; b < real.columns.length; b++) {
      const bs = real.scans[b];
      if (b === k || bs.values.length < 2) continue;
      const of = new Int32Array(ks.values.length).fill(-1);
      let holds = true;
      for (let r = 0; r < real.n && holds; r++) {
        const a = ks.ids[r];
        if (ks.values[a] === "") continue;
        if (of[a] < 0) of[a] = bs.ids[r];
        else if (of[a] !== bs.ids[r]) holds = false;
      }
      if (holds && byChance(ks, bs, real.n) >= Math.log(RULE_LIMITS.fdChance)) holds = false;
      if (holds) attributes.push(b);
    }
    if (attributes.length === 0) continue;
    const entry = new Map<string, string[]>();
    for (let r = 0; r < real.n; r++) {
      const key = ks.values[ks.ids[r]];
      if (key !== "" && !entry.has(key)) entry.set(key, attributes.map((b) => real.scans[b].values[real.scans[b].ids[r]]));
    }
    const sk = column(synth, real.columns[k]);
    const sa = attributes.map((b) => column(synth, real.columns[b]));
    if (!sk || sa.some((x) => !x)) continue;
    let rows = 0;
    let kept = 0;
    const examples: string[] = [];
    for (let r = 0; r < synth.n; r++) {
      // A blank or the SDK's pooled text names no entry.
      if (sk[r] === "" || sk[r] === OTHER) continue;
      rows++;
      const e = entry.get(sk[r]);
      if (e && e.every((v, j) => same(v, sa[j]![r]))) kept++;
      else if (examples.length < EXAMPLES) examples.push([sk[r], ...sa.map((x) => x![r])].join(", "));
    }
    out.push({ key: real.columns[k], attributes: attributes.map((b) => real.columns[b]), real_keys: repeated, synthetic_rows: rows, synthetic: rows ? kept / rows : 1, examples });
  }
  return [...out, ...compositeCatalogs(real, synth, same)];
}

/** Key columns {@link compositeCatalogs} pairs (the first ones in table order): at most 66 pairs. */
const PAIR_KEY_COLUMNS = 12;

/**
 * Catalogs of the real table with a composite key (origin and destination decide distance): a
 * pair of key columns (as {@link catalogs}' keys, the first {@link PAIR_KEY_COLUMNS}, neither
 * deciding the other) whose pairs pass the same key test, deciding a column (in every real row,
 * beyond chance) that neither column decides alone (in 99% of its rows, the SDK's
 * `RULE_LIMITS.fdShare`). A synthetic row counts when its pair is a
 * real pair seen twice or more (other pairs are no real entry's and are left as generated), and
 * keeps the catalog when every attribute is that pair's real value. `key` reads `(a, b)`.
 */
function compositeCatalogs(real: ScannedTable, synth: ScannedTable, same: (a: string, b: string) => boolean): CatalogCheck[] {
  const scans = real.scans;
  const decides = (key: { ids: ArrayLike<number>; values: string[] }, b: number): boolean => {
    const of = new Int32Array(key.values.length).fill(-1);
    for (let r = 0; r < real.n; r++) {
      const a = key.ids[r];
      if (key.values[a] === "") continue;
      if (of[a] < 0) of[a] = scans[b].ids[r];
      else if (of[a] !== scans[b].ids[r]) return false;
    }
    return true;
  };
  // Share of the rows with a present key on their key value's majority value of b.
  const mostly = (key: { ids: ArrayLike<number>; values: string[] }, b: number): boolean => {
    const cells = new Map<number, number>();
    const best = new Map<number, number>();
    let present = 0;
    for (let r = 0; r < real.n; r++) {
      const a = key.ids[r];
      if (key.values[a] === "") continue;
      present++;
      const cell = a * scans[b].values.length + scans[b].ids[r];
      const c = (cells.get(cell) ?? 0) + 1;
      cells.set(cell, c);
      if (c > (best.get(a) ?? 0)) best.set(a, c);
    }
    let hits = 0;
    for (const c of best.values()) hits += c;
    return present > 0 && hits >= RULE_LIMITS.fdShare * present;
  };
  const keyTest = (counts: number[], values: string[]): number => {
    let filled = 0;
    let rows = 0;
    let repeated = 0;
    values.forEach((v, id) => {
      if (v === "") return;
      filled += counts[id];
      if (counts[id] >= 2) (rows += counts[id], repeated++);
    });
    return repeated >= CATALOG_MIN_KEYS && rows >= 0.5 * filled ? repeated : 0;
  };
  const keys = real.columns.map((_, c) => c).filter((c) => scans[c].values.length >= 2 && keyTest(scans[c].counts, scans[c].values) > 0).slice(0, PAIR_KEY_COLUMNS);
  const out: CatalogCheck[] = [];
  for (let x = 0; x < keys.length; x++) {
    for (let y = x + 1; y < keys.length; y++) {
      const [i, j] = [keys[x], keys[y]];
      if (decides(scans[i], j) || decides(scans[j], i)) continue;
      const index = new Map<string, number>();
      const values: string[] = [];
      const counts: number[] = [];
      const ids = new Int32Array(real.n);
      for (let r = 0; r < real.n; r++) {
        const a = scans[i].values[scans[i].ids[r]];
        const b = scans[j].values[scans[j].ids[r]];
        const v = a === "" || b === "" ? "" : `${a}\u0000${b}`;
        let id = index.get(v);
        if (id === undefined) (index.set(v, (id = values.length)), values.push(v), counts.push(0));
        counts[id]++;
        ids[r] = id;
      }
      const repeated = keyTest(counts, values);
      if (repeated === 0) continue;
      const pair = { ids, values, counts } as unknown as ScannedTable["scans"][number];
      const attributes = real.columns
        .map((_, b) => b)
        .filter((b) => b !== i && b !== j && scans[b].values.length >= 2 && decides(pair, b) && !mostly(scans[i], b) && !mostly(scans[j], b))
        .filter((b) => byChance(pair, scans[b], real.n) < Math.log(RULE_LIMITS.fdChance));
      if (attributes.length === 0) continue;
      const entry = new Map<string, string[]>();
      for (let r = 0; r < real.n; r++) {
        const v = values[ids[r]];
        if (v !== "" && counts[ids[r]] >= 2 && !entry.has(v)) entry.set(v, attributes.map((b) => scans[b].values[scans[b].ids[r]]));
      }
      const [sa, sb] = [column(synth, real.columns[i]), column(synth, real.columns[j])];
      const sc = attributes.map((b) => column(synth, real.columns[b]));
      if (!sa || !sb || sc.some((z) => !z)) continue;
      let rows = 0;
      let kept = 0;
      const examples: string[] = [];
      for (let r = 0; r < synth.n; r++) {
        const e = entry.get(`${sa[r]}\u0000${sb[r]}`);
        if (e === undefined) continue;
        rows++;
        if (e.every((v, z) => same(v, sc[z]![r]))) kept++;
        else if (examples.length < EXAMPLES) examples.push([sa[r], sb[r], ...sc.map((z) => z![r])].join(", "));
      }
      const key = `(${real.columns[i]}, ${real.columns[j]})`;
      out.push({ key, attributes: attributes.map((b) => real.columns[b]), real_keys: repeated, synthetic_rows: rows, synthetic: rows ? kept / rows : 1, examples });
    }
  }
  return out;
}

/** One datetime column whose real days miss a day of the week: {@link weekdays}. */
export interface WeekdayCheck {
  column: string;
  /** Days of the week (0 = Sunday) the real values fall on. */
  days: number[];
  /** Share of the synthetic values on another day of the week. */
  synthetic_off: number;
  rows: number;
}

/**
 * Datetime columns (format inferred as the SDK infers it) whose real days miss a day of the week
 * by the SDK's test (`weekdaysOf`: >= 35 distinct days), as trading days do, and the share of
 * synthetic values on a missed day. Days in each value's own offset.
 */
export function weekdays(real: ScannedTable, synth: ScannedTable): WeekdayCheck[] {
  const out: WeekdayCheck[] = [];
  for (const [c, name] of real.columns.entries()) {
    const values = real.scans[c].values.filter((v) => v !== "");
    const inferred = inferDatetimeFormat(values);
    if (!inferred || inferred.parsed < values.length) continue;
    const fmt = new DatetimeFormat(inferred.format);
    const days = weekdaysOf(values.map((v) => fmt.parse(v)));
    if (!days) continue;
    const s = column(synth, name)?.filter((v) => v !== "") ?? [];
    const off = s.filter((v) => {
      const p = fmt.parse(v);
      return p !== undefined && !days.includes(weekdayOf(p));
    }).length;
    out.push({ column: name, days, synthetic_off: s.length ? off / s.length : 0, rows: s.length });
  }
  return out;
}

/** One identity of {@link ratioIdentities}: `total = factor · parts[0]^powers[0] (· parts[1]^powers[1])`. */
export interface RatioIdentity extends IdentityCheck {
  total: string;
  parts: string[];
  powers: (1 | -1)[];
  factor: number;
}

/** Power patterns of a ratio of two parts (C = k·A·B, C = k·A/B, C = k·B/A) and of one (C = k·A, C = k/A). */
const RATIO_POWERS: (1 | -1)[][] = [[1, 1], [1, -1], [-1, 1], [1], [-1]];

/**
 * Every ratio or product identity `C = k · A^±1 (· B^±1)` among the real table's numeric columns
 * with no negative value that holds in all real rows where its columns are filled and no divided
 * part is 0 (at least {@link MIN_IDENTITY_ROWS} rows with all > 0, no column constant there; not
 * `C = A`, a linear identity): k is the median of C / (A^±1 B^±1), a row keeps it when C is within
 * half a unit of its last decimal plus C's relative share of each decimal part's half unit (a
 * whole-number part is exact), and C is the column with the most decimals (ties: the last). The
 * share of synthetic rows that keep it, where it applies.
 */
export function ratioIdentities(real: ScannedTable, synth: ScannedTable): RatioIdentity[] {
  const names = real.columns.filter((_, c) => real.scans[c].numeric && real.scans[c].values.length > 1);
  const cols = names.map((n) => numbers(real, n)!).map((c, i) => ({ ...c, name: names[i] }));
  const usable = cols.filter((c) => c.x.every((v) => Number.isNaN(v) || v >= 0));
  const out: RatioIdentity[] = [];
  const holds = (t: typeof usable[0], ps: typeof usable, pw: number[], k: number, x: (c: typeof usable[0], r: number) => number, r: number): boolean | undefined => {
    const c = x(t, r);
    const vs = ps.map((p) => x(p, r));
    if (Number.isNaN(c) || vs.some(Number.isNaN) || vs.some((v, j) => pw[j] < 0 && v === 0)) return undefined;
    const v = vs.reduce((acc, y, j) => (pw[j] > 0 ? acc * y : acc / y), k);
    const rel = vs.reduce((acc, y, j) => acc + (ps[j].decimals > 0 && y !== 0 ? (0.5 * 10 ** -ps[j].decimals) / y : 0), 0);
    return Math.abs(c - v) <= (0.5 * 10 ** -t.decimals + Math.abs(v) * rel) * (1 + 1e-9) + 1e-12 * Math.abs(v);
  };
  const seen = new Set<string>();
  const groups: number[][] = [];
  for (let i = 0; i < usable.length; i++) for (let j = i + 1; j < usable.length; j++) {
    groups.push([i, j]);
    for (let l = j + 1; l < usable.length; l++) groups.push([i, j, l]);
  }
  for (const g of groups) {
    // The total: most decimals, then the last column.
    const t = [...g].sort((a, b) => usable[b].decimals - usable[a].decimals || b - a)[0];
    const ps = g.filter((i) => i !== t).map((i) => usable[i]);
    const T = usable[t];
    const rows: number[] = [];
    for (let r = 0; r < real.n; r++) if (T.x[r] > 0 && ps.every((p) => p.x[r] > 0)) rows.push(r);
    if (rows.length < MIN_IDENTITY_ROWS || [T, ...ps].some((c) => rows.every((r) => c.x[r] === c.x[rows[0]]))) continue;
    for (const pw of RATIO_POWERS.filter((p) => p.length === ps.length)) {
      const ks = rows.map((r) => T.x[r] / ps.reduce((acc, p, j) => (pw[j] > 0 ? acc * p.x[r] : acc / p.x[r]), 1)).sort((a, b) => a - b);
      const k = Number(ks[ks.length >> 1].toPrecision(6));
      if (ps.length === 1 && k === 1) continue;
      const at = (c: typeof usable[0], r: number) => c.x[r];
      let [n, nonzero, ok] = [0, 0, true];
      for (let r = 0; r < real.n && ok; r++) {
        const v = holds(T, ps, pw, k, at, r);
        if (v === undefined) continue;
        n++;
        if (ps.some((p) => p.x[r] !== 0)) nonzero++;
        ok = v;
      }
      if (!ok) continue;
      const key = [T.name, ...ps.map((p) => p.name)].join("\u0000");
      if (seen.has(key)) break;
      seen.add(key);
      const sc = [T, ...ps].map((c) => numbers(synth, c.name));
      let [sRows, kept] = [0, 0];
      const examples: string[] = [];
      if (sc.every((c) => c !== undefined)) {
        const sx = new Map([T, ...ps].map((c, j) => [c, sc[j]!.x]));
        const sat = (c: typeof usable[0], r: number) => sx.get(c)![r];
        for (let r = 0; r < synth.n; r++) {
          const v = holds(T, ps, pw, k, sat, r);
          if (v === undefined) continue;
          sRows++;
          if (v) kept++;
          else if (examples.length < EXAMPLES) examples.push([T, ...ps].map((c) => `${c.name} ${sat(c, r)}`).join(", "));
        }
      }
      const up = ps.filter((_, j) => pw[j] > 0).map((p) => p.name);
      const down = ps.filter((_, j) => pw[j] < 0).map((p) => ` / ${p.name}`);
      const label = `${T.name} = ${[...(k !== 1 || up.length === 0 ? [String(k)] : []), ...up].join(" * ")}${down.join("")}`;
      out.push({ total: T.name, parts: ps.map((p) => p.name), powers: pw as (1 | -1)[], factor: k, label, real_rows: n, real_rows_nonzero_part: nonzero, synthetic_rows: sRows, synthetic: sRows ? kept / sRows : 1, examples });
      break;
    }
  }
  return out;
}
