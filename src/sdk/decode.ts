/**
 * Decoding (DESIGN §2, SDK side): generated codes (`Generation.columns`) -> table values, using
 * only the model's `metadata` (so `GET /v1/models/{id}/metadata` is enough; no local state).
 *
 * Per feature f with code c, by `column_stats[f].type` (docs/api.md, "Column kinds"):
 * - the missing code (`value_mappings[f][""]`, else K-1 when `column_stats[f].missing > 0`)
 *   -> "" (a blank cell);
 * - categorical -> the value whose `value_mappings[f]` entry is c. The pooled code (key
 *   `__other__`) stands for values too rare to release (rare category protection); it decodes to
 *   one of the column's own values drawn uniformly (not by frequency: the pool is a flat tail of
 *   many rare values, so a flat draw leaves the most frequent values at their real share), among
 *   those that occur with the row's code of the column's partner: the feature whose 2-way
 *   marginal with it has the most mutual information (so a pooled city is drawn among the cities
 *   of the row's state, not anywhere). It is never written as a placeholder and never as a rare
 *   value (the metadata does not hold them).
 * - numerical or datetime without `bin_edges` (point bins) -> the exact original text;
 * - numerical with `bin_edges` (quantile bins, convention in `./metadata`) -> for a point bin its
 *   value; for an interval bin a value drawn uniformly among the values the column can be written
 *   with that lie inside the bin and inside [min, max]: multiples of `step` (else of
 *   10^-decimals; integers when `decimals` is 0) for numbers, printed with at most `decimals`
 *   decimals (trailing zeros dropped), exactly `decimals` when `fixed_decimals`; metadata
 *   without `decimals` (older models) draws a real number printed with the fewest significant
 *   digits (>= 6) that keep it inside the bin;
 * - datetime with `bin_edges` -> the same over the points of the column's `granularity` in its
 *   own UTC `offset` (whole multiples of a fixed unit; month starts or year starts for `month` /
 *   `year`), written in its `format` (`./datetime`);
 * - id -> a fresh identifier of `id_shape` (`./identifier`): row i of a sample gets value(i) of
 *   a generator keyed per sample, so values are distinct within the sample across its batches;
 * - metadata without `value_mappings[f]` for a non-binned feature -> the code as a string.
 * Deterministic: the same codes, seed and options give the same strings (one PRNG stream per
 * feature, seeded with `deriveSeed(seed, f)`).
 */
import type { ColumnStats, Generation, Metadata } from "../types";
import { DatetimeFormat, unitIndex, unitStart } from "./datetime";
import { APIError } from "./errors";
import type { Table } from "./csv";
import { IdGenerator } from "./identifier";
import { mappingDecoder } from "./columns/categorical";
import { badCode, inRange, missingCodeOf, MISSING_KEY, type FeatureDecoder, type ValueRange } from "./columns/common";
import { idDecoder } from "./columns/id";
import { Rng, deriveSeed } from "./prng";
import { RuleEnforcer, type EnforceResult } from "./rules/enforce";

/** Where the rows being decoded sit in their sample (identifiers are distinct across batches). */
export interface DecodeOptions {
  /** Index in the sample of the first row decoded. Default 0. */
  rowOffset?: number;
  /** Keys the identifier generators; one key per sample. Default: the decode seed. */
  idKey?: number;
  /**
   * Per feature name, a decoder to use instead of the feature's own (a restricted one from
   * {@link Decoder.restrict}: values drawn inside a `where` range). Default: none.
   */
  decoders?: Readonly<Record<string, FeatureDecoder>>;
  /**
   * Keep `metadata.rules` in the decoded rows (`./rules/enforce`). Default true; the seeded path
   * turns it off to write the seed cells back first and then calls {@link Decoder.enforce}.
   */
  rules?: boolean;
  /** Cells the user fixed (the columns of a `where` condition): rules never rewrite them. Default: none. */
  fixed?: (row: number, feature: number) => boolean;
}

/**
 * The decoder of feature `f`, by its kind (`./columns`): an id with a shape writes fresh
 * identifiers, a quantile-binned column draws inside its bins, anything else reads its code book.
 */
function featureDecoder(meta: Metadata, f: string): FeatureDecoder {
  const K = meta.cardinalities[f];
  const stats = meta.column_stats?.[f];
  const missingCode = missingCodeOf(meta, f);
  if (stats?.type === "id" && stats.id_shape) return idDecoder(f, K, stats, missingCode);
  const edges = stats?.type === "numerical" || stats?.type === "datetime" ? stats.bin_edges : undefined;
  if (edges && edges.length >= 2) return binDecoder(f, K, edges, missingCode, stats!);
  return mappingDecoder(meta, f);
}

/**
 * The values a binned column can be written with, its lattice: point k (an integer) is the number
 * `value(k)` (numbers: k * step, step = `step` or 10^-decimals; datetimes, in seconds since the
 * epoch: the start of the k-th unit of the column's `granularity` in its own UTC `offset`, a month
 * start or year start for `month` / `year`).
 */
interface Lattice {
  /** The column number of lattice point k (exact: the double nearest the point's true value). */
  value(k: number): number;
  /**
   * Position of number x on the lattice: increasing, equal to k at `value(k)` (up to rounding,
   * which {@link firstAbove} / {@link lastBelow} correct), between k and k + 1 strictly between.
   */
  index(x: number): number;
  /** Writes lattice point k (numbers: `decimals` decimals, trailing zeros dropped unless `fixed_decimals`). */
  write(k: number): string;
  /** Writes an exact number (a point bin's value). */
  writeExact(x: number): string;
  /** Largest |x| for which `value` and the integer k stay exact (doubles' 2^52 on the finest unit). */
  exactUpTo: number;
}

/**
 * The lattice of a binned column's stats, or undefined when it has none (numbers without
 * `decimals` nor `integer`, datetimes without `format` or `granularity`). Numbers: the unit is
 * `step` when it is a whole multiple of 10^-decimals (so 25, 100000, 0.5), else 10^-decimals;
 * values are written with toFixed(decimals), trailing zeros then dropped unless `fixed_decimals`.
 */
function latticeOf(stats: ColumnStats): Lattice | undefined {
  if (stats.type === "datetime" && stats.format && stats.granularity) {
    const fmt = new DatetimeFormat(stats.format);
    const g = stats.granularity;
    const offset = stats.offset ?? 0;
    const shiftMs = offset * 60000;
    const value = (k: number): number => (unitStart(g, k) - shiftMs) / 1000;
    return {
      value,
      index: (x) => unitIndex(g, x * 1000 + shiftMs),
      write: (k) => fmt.write(value(k), offset),
      writeExact: (x) => fmt.write(x, offset),
      exactUpTo: 2 ** 52 / 1000,
    };
  }
  const d = stats.decimals ?? (stats.integer ? 0 : undefined);
  if (d === undefined) return undefined;
  const scale = 10 ** d;
  // The step in units of 10^-decimals, when it is a whole number of them (> 1).
  const scaledStep = stats.step !== undefined ? Math.round(stats.step * scale) : 1;
  const unit = scaledStep > 1 && Math.abs(stats.step! * scale - scaledStep) < 1e-9 * scaledStep ? scaledStep : 1;
  const fixed = stats.fixed_decimals === true && d > 0;
  const writeNumber = (x: number): string => {
    if (d === 0) return String(Math.round(x) + 0);
    const s = (x + 0).toFixed(d);
    const t = fixed ? s : s.replace(/\.?0+$/, "");
    return t === "-0" ? "0" : /^-0\.0*$/.test(t) ? t.slice(1) : t;
  };
  const value = (k: number): number => (k * unit) / scale;
  return {
    value,
    index: (x) => (x * scale) / unit,
    write: (k) => writeNumber(value(k)),
    writeExact: (x) => (fixed ? writeNumber(x) : String(x)),
    exactUpTo: 2 ** 52 / scale,
  };
}

/** Smallest integer k with lattice.value(k) >= x (> x when `open`). */
function firstAbove(x: number, lattice: Lattice, open: boolean): number {
  let k = Math.ceil(lattice.index(x));
  const ok = (j: number): boolean => (open ? lattice.value(j) > x : lattice.value(j) >= x);
  while (!ok(k)) k++;
  while (ok(k - 1)) k--;
  return k;
}

/** Largest integer k with lattice.value(k) <= x (< x when `open`). */
function lastBelow(x: number, lattice: Lattice, open: boolean): number {
  let k = Math.floor(lattice.index(x));
  const ok = (j: number): boolean => (open ? lattice.value(j) < x : lattice.value(j) <= x);
  while (!ok(k)) k--;
  while (ok(k + 1)) k++;
  return k;
}

/**
 * Decoder of a binned column; with `range`, every interval bin draws only among its values inside
 * the range too, `codes` lists the bins holding at least one value the decoder can write inside
 * the range (a point bin: its value is inside; an interval bin: a lattice point inside bin, [min,
 * max] and range, or, without an exact lattice, a non-empty overlap), and `weights[i]` is the share
 * of bin `codes[i]`'s values (as the unrestricted decoder draws them: uniform over its lattice
 * points, or over the bin clipped to [min, max]) that lie inside the range.
 */
function binDecoder(
  f: string,
  K: number,
  e: readonly number[],
  missingCode: number | undefined,
  stats: ColumnStats,
  range?: ValueRange,
): FeatureDecoder & { codes: number[]; weights: number[] } {
  const nb = e.length - 1;
  const min = stats.min ?? e[0];
  const max = stats.max ?? e[nb];
  const lattice = latticeOf(stats);
  const exact = lattice && Math.max(Math.abs(min), Math.abs(max)) < lattice.exactUpTo ? lattice : undefined;
  const codes: number[] = [];
  const weights: number[] = [];
  const keep = (c: number, w: number): void => {
    codes.push(c);
    weights.push(w);
  };
  // Per interval bin, once: the lattice points [first, last] it holds inside [min, max] (and the
  // range), so the per-row work is one draw; or, when it holds none, the one nearest its middle
  // (last NaN). With a range, `codes` collects the bins in ascending order on the way.
  let points: { first: Float64Array; last: Float64Array } | undefined;
  let kMin = 0;
  let kMax = 0;
  // The lattice span of [min, max] without the range (for the weights).
  let kMin0 = 0;
  let kMax0 = 0;
  if (exact) {
    kMin = kMin0 = firstAbove(min, exact, false);
    kMax = kMax0 = lastBelow(max, exact, false);
    if (range?.lo !== undefined && Number.isFinite(range.lo)) kMin = Math.max(kMin, firstAbove(range.lo, exact, range.loOpen === true));
    if (range?.hi !== undefined && Number.isFinite(range.hi)) kMax = Math.min(kMax, lastBelow(range.hi, exact, range.hiOpen === true));
    points = { first: new Float64Array(nb), last: new Float64Array(nb) };
  }
  for (let c = 0; c < nb; c++) {
    const lo = e[c];
    const hi = e[c + 1];
    if (lo === hi) {
      if (range && inRange(lo, range)) keep(c, 1);
    } else if (exact && points) {
      const first = firstAbove(lo, exact, c > 0 && e[c - 1] === lo);
      const lastK = lastBelow(hi, exact, c !== nb - 1);
      const a = Math.max(first, kMin);
      const b = Math.min(lastK, kMax);
      if (a <= b) {
        [points.first[c], points.last[c]] = [a, b];
        if (range) {
          // Without the range the bin draws over [max(first, kMin0), min(last, kMax0)] (at least its points inside the range).
          const all = Math.max(Math.min(lastK, kMax0) - Math.max(first, kMin0) + 1, b - a + 1);
          keep(c, (b - a + 1) / all);
        }
      } else [points.first[c], points.last[c]] = [Math.min(Math.max(Math.round(exact.index((lo + hi) / 2)), kMin), kMax), NaN];
    } else if (range) {
      const a = Math.max(lo, range.lo ?? -Infinity, min);
      const b = Math.min(hi, range.hi ?? Infinity, max);
      if (a < b || (a === b && inRange(a, range))) {
        const width = Math.min(hi, max) - Math.max(lo, min);
        keep(c, width > 0 ? Math.min(1, Math.max((b - a) / width, Number.MIN_VALUE)) : 1);
      }
    }
  }
  return {
    name: f,
    K,
    codes,
    weights,
    decode(c, rng) {
      if (c === missingCode) return "";
      if (!(c >= 0 && c < nb)) return badCode(f, c, K);
      const lo = e[c];
      const hi = e[c + 1];
      if (lo === hi) return lattice ? lattice.writeExact(lo) : String(lo);
      const loPoint = c > 0 && e[c - 1] === lo;
      const last = c === nb - 1;
      if (exact && points) {
        const a = points.first[c];
        const b = points.last[c];
        return exact.write(Number.isNaN(b) ? a : a + rng.int(b - a + 1));
      }
      // Without an exact lattice: a uniform draw over the bin (clipped to the range), written with
      // the lattice's rounding or the fewest digits that keep it inside.
      const from = range ? Math.max(lo, range.lo ?? -Infinity) : lo;
      const to = range ? Math.min(hi, range.hi ?? Infinity) : hi;
      let x = from + rng.next() * (to - from);
      if (loPoint && x === lo) x = (from + to) / 2;
      const inside = (y: number) => (loPoint ? y > lo : y >= lo) && (last ? y <= hi : y < hi) && (!range || inRange(y, range));
      if (lattice) {
        // Too many lattice points for exact integer arithmetic: round the draw to the lattice.
        const s = lattice.write(Math.round(lattice.index(x)));
        if (inside(Number(s))) return s;
      }
      for (let p = 6; p <= 17; p++) {
        const s = x.toPrecision(p);
        const y = Number(s);
        if (inside(y)) return String(y);
      }
      return String(inside(x) ? x : (from + to) / 2);
    },
  };
}

/** A feature's decoder and codes under a value range (see {@link Decoder.restrict}). */
export interface RestrictedFeature {
  /** The codes holding a value inside the range (ascending; never the missing code). */
  codes: number[];
  /**
   * Per code, the share in (0, 1] of its values (as the unrestricted decoder writes them) inside
   * the range: below 1 for a bin the range covers in part. The wire's weighted condition.
   */
  weights: number[];
  /** Decodes those codes to values inside the range. */
  decoder: FeatureDecoder;
}

/**
 * Decodes generated codes with a model's metadata.
 * ```ts
 * const dec = new Decoder(metadata);
 * const table = dec.decode(generation.columns, 42);
 * ```
 */
export class Decoder {
  /** Feature decoders, in `metadata.features` order. */
  readonly features: FeatureDecoder[];
  /** Keeps `metadata.rules` in decoded rows. */
  readonly rules: RuleEnforcer;
  /** Per feature, cumulative 1-way probabilities of its non-blank codes (built on first use). */
  private readonly cumulative: (Float64Array | undefined)[] = [];
  constructor(readonly metadata: Metadata) {
    this.features = metadata.features.map((f) => featureDecoder(metadata, f));
    this.rules = new RuleEnforcer(metadata);
  }

  /**
   * Makes every row of `table` keep `metadata.rules` (in place), as {@link decode} does by default.
   * @param seed  seeds the rules' draws (use the batch's decode seed).
   * @param fixed cells never rewritten (seed cells, `where` columns).
   */
  enforce(table: Table, seed: number, fixed?: (row: number, feature: number) => boolean): EnforceResult {
    if (!this.rules.active) return { changed: 0, unrepaired: 0 };
    return this.rules.apply(table.rows, seed, (f, rng) => this.drawValue(f, rng), fixed);
  }

  /** A non-blank value of feature f drawn from its 1-way marginal (`empirical_probs`), written by its decoder. */
  private drawValue(f: number, rng: Rng): string {
    const name = this.metadata.features[f];
    let cum = this.cumulative[f];
    if (!cum) {
      const probs = this.metadata.empirical_probs[name] ?? [];
      const missing = missingCodeOf(this.metadata, name);
      cum = new Float64Array(probs.length);
      let acc = 0;
      probs.forEach((p, c) => {
        acc += c === missing ? 0 : p;
        cum![c] = acc;
      });
      this.cumulative[f] = cum;
    }
    const total = cum.length ? cum[cum.length - 1] : 0;
    const u = rng.next() * total;
    let lo = 0;
    let hi = cum.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cum[mid] > u) hi = mid;
      else lo = mid + 1;
    }
    return this.features[f].decode(lo, rng, 0);
  }

  /** Column names, in table order. */
  get columns(): string[] {
    return [...this.metadata.features];
  }

  /**
   * A numerical or datetime feature under a value range (seeded generation's `where`, `./seeded`):
   * the codes whose values meet the range and a decoder that writes only values inside it.
   * Quantile-binned columns: the bins the range touches, each drawn among its lattice values inside
   * the range (so `age >= 60` on a bin [55, 65) gives 60..64, never 57), with the share of the
   * bin's values inside as its weight (0.5 there). Point-bin columns (exact
   * values in `value_mappings`): the codes whose value is inside, decoded as usual.
   * @param feature a feature of the metadata.
   * @param range bounds in the column's numbers (datetimes: seconds since the epoch).
   * @param parse text -> number of the column's point values (numbers: `Number`; datetimes: the
   *   column's format), used for point-bin columns.
   * @returns undefined when the feature is neither numerical nor datetime.
   */
  restrict(feature: string, range: ValueRange, parse: (text: string) => number | undefined): RestrictedFeature | undefined {
    const f = this.metadata.features.indexOf(feature);
    const stats = this.metadata.column_stats?.[feature];
    if (f < 0 || !stats || (stats.type !== "numerical" && stats.type !== "datetime")) return undefined;
    const missingCode = missingCodeOf(this.metadata, feature);
    const edges = stats.bin_edges;
    if (edges && edges.length >= 2) {
      const d = binDecoder(feature, this.metadata.cardinalities[feature], edges, missingCode, stats, range);
      return { codes: d.codes, weights: d.weights, decoder: d };
    }
    const codes = new Set<number>();
    for (const [text, c] of Object.entries(this.metadata.value_mappings?.[feature] ?? {})) {
      if (text === MISSING_KEY || c === missingCode) continue;
      const x = parse(text);
      if (x !== undefined && inRange(x, range)) codes.add(c);
    }
    const sorted = [...codes].sort((a, b) => a - b);
    return { codes: sorted, weights: sorted.map(() => 1), decoder: this.features[f] };
  }

  /**
   * @param columns `columns[f][r]` = code of feature f in row r (every feature present, same length).
   * @param seed    seeds the draws inside interval bins and for the pooled code (any finite number).
   * @param opts    the rows' place in their sample and the identifier key ({@link DecodeOptions}).
   * @returns the decoded {@link Table}: `rows[r][c]` in `metadata.features` order.
   * @throws APIError (`invalid_response`) when a feature is absent or a code is out of range.
   */
  decode(columns: Record<string, ArrayLike<number>>, seed: number, opts: DecodeOptions = {}): Table {
    const cols = this.features.map((d) => {
      const c = columns[d.name];
      if (!c) throw new APIError({ code: "invalid_response", message: `The generated data has no column for feature "${d.name}".` });
      return c;
    });
    const n = cols[0]?.length ?? 0;
    const rows: string[][] = new Array(n);
    for (let r = 0; r < n; r++) rows[r] = new Array(this.features.length);
    this.features.forEach((own, f) => {
      const d = opts.decoders !== undefined && Object.hasOwn(opts.decoders, own.name) ? opts.decoders[own.name] : own;
      const codes = cols[f];
      if (codes.length !== n) throw new APIError({ code: "invalid_response", message: `Generated column "${d.name}" has ${codes.length} rows, expected ${n}.` });
      const rng = new Rng(deriveSeed(seed, f));
      const ids = d.idShape ? new IdGenerator(d.idShape, deriveSeed(opts.idKey ?? seed, f)) : undefined;
      const offset = opts.rowOffset ?? 0;
      const partner = d.partner === undefined ? undefined : cols[this.metadata.features.indexOf(d.partner)];
      for (let r = 0; r < n; r++) rows[r][f] = d.decode(codes[r], rng, offset + r, ids, partner?.[r]);
    });
    const table = { columns: this.columns, rows };
    if (opts.rules !== false) this.enforce(table, seed, opts.fixed);
    return table;
  }

  /** Decodes a generate response's `data` (options as in {@link Decoder.decode}). */
  decodeGeneration(gen: Generation, seed: number, opts: DecodeOptions = {}): Table {
    return this.decode(gen.columns, seed, opts);
  }
}

/** One-shot form of {@link Decoder.decode}. */
export function decodeCodes(metadata: Metadata, columns: Record<string, ArrayLike<number>>, seed: number): Table {
  return new Decoder(metadata).decode(columns, seed);
}
