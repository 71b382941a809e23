/**
 * Decoding, on the client: generated codes (`Generation.columns`) -> table values, using
 * only the model's `metadata` (so `GET /v1/models/{id}/metadata` is enough; no local state).
 *
 * Per feature f with code c, by `column_stats[f].type` (docs/api.md, "Column kinds"; each kind's
 * decoder lives in its module under `./columns`, `decoderFor` picks it; this module orchestrates):
 * - the missing code (`value_mappings[f][""]`, else K-1 when `column_stats[f].missing > 0`)
 *   -> "" (a blank cell);
 * - categorical -> the value whose `value_mappings[f]` entry is c. The pooled code (key
 *   `__other__`) stands for values too rare to release (rare category protection); it decodes to
 *   one of the column's own values drawn uniformly (not by frequency: the pool is a flat tail of
 *   many rare values, so a flat draw leaves the most frequent values at their real share), among
 *   those that occur with the row's code of the column's partner: the feature whose 2-way
 *   marginal with it has the most mutual information (so a pooled city is drawn among the cities
 *   of the row's state, not anywhere). It is never written as a placeholder and never as a rare
 *   value (the metadata does not hold them). A column with `column_stats[f].semantic` (a city or
 *   name column where at least `FRESH_POOLED_SHARE` of the rows hold rare values) writes the
 *   pooled code as a fresh value of its kind instead (`./semantic`; cities as invented names:
 *   `Hallborough`), keyed by the identifier key and the row's index in the sample, so rare cities
 *   stay spread over many values as in the real table rather than crowding the released ones.
 * - numerical or datetime without `bin_edges` (point bins) -> the exact original text;
 * - numerical with `bin_edges` (quantile bins, convention in `./columns/bins`) -> for a point bin its
 *   value; for an interval bin a value drawn uniformly among the values the column can be written
 *   with that lie inside the bin and inside [min, max]: multiples of `step` (else of
 *   10^-decimals; integers when `decimals` is 0) for numbers, printed with at most `decimals`
 *   decimals (trailing zeros dropped, down to `min_decimals`), exactly `decimals` when
 *   `fixed_decimals`; with a `grain`, first one of the column's grains by the bin's shares (a
 *   multiple of 100, of 50 but not 100, a twelfth ...: `./columns/numerical-grain`), then a value
 *   uniformly among the bin's points of that grain on no coarser one; metadata without `decimals`
 *   (older models) draws a real number printed with the fewest significant digits (>= 6) that keep
 *   it inside the bin;
 * - datetime with `bin_edges` -> the same over the points of the column's `granularity` in its
 *   own UTC `offset` (whole multiples of a fixed unit; month starts or year starts for `month` /
 *   `year`), written in its `format` (`./datetime`, `./columns/datetime`);
 * - id -> a fresh identifier of `id_shape` (`./identifier`, `./columns/id`): row i of a sample gets value(i) of
 *   a generator keyed per sample, so values are distinct within the sample across its batches;
 * - metadata without `value_mappings[f]` for a non-binned feature -> the code as a string.
 * Deterministic: the same codes, seed and options give the same strings (one PRNG stream per
 * feature, seeded with `deriveSeed(seed, f)`).
 */
import type { Generation, Metadata } from "../../contract";
import { APIError } from "../errors";
import type { ArrayPool } from "../client/array-pool";
import type { Table } from "../io/csv";
import { IdGenerator, type IdValues } from "./id-generator";
import type { IdShape } from "../metadata/identifier";
import { binnedDecoder, decoderFor, inRange, missingCodeOf, MISSING_KEY, type FeatureDecoder, type ValueRange } from "../columns";
import { Rng, deriveSeed } from "./sfc32";
import { RuleEnforcer, type EnforceResult } from "../rules/enforce";
import { DecodedBatch, rowCells, type Cells, type DecodedColumn } from "./batch";

/** `../semantic/semantic-generator`, loaded for the first column written fresh (names, cities), not for every decode. */
function semanticGenerator(): typeof import("../semantic/semantic-generator") {
  return require("../semantic/semantic-generator");
}

/** Fresh identifiers of shape `shape`: its semantic kind's generator when it has one, else an {@link IdGenerator}. */
function idValues(shape: IdShape, key: number): IdValues {
  if (shape.kind === "text" && shape.semantic) return new (semanticGenerator().SemanticGenerator)(shape.semantic, key);
  return new IdGenerator(shape, key);
}

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
  /**
   * A pool the decoded columns' typed arrays come from (`../client/array-pool`); the batch's
   * {@link DecodedBatch.release} gives them back. Default: fresh arrays.
   */
  arrays?: ArrayPool;
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
    this.features = metadata.features.map((f) => decoderFor(metadata, f));
    this.rules = new RuleEnforcer(metadata);
  }

  /**
   * Makes every row of `table` keep `metadata.rules` (in place), as {@link decode} does by default.
   * @param seed  seeds the rules' draws (use the batch's decode seed).
   * @param fixed cells never rewritten (seed cells, `where` columns).
   * @param codes the rows' generated codes per feature in `metadata.features` order: a broken
   *   combination is then replaced by one likely given the row's other columns (`./rules/enforce`).
   */
  enforce(
    table: Table,
    seed: number,
    fixed?: (row: number, feature: number) => boolean,
    codes?: readonly ArrayLike<number>[],
  ): EnforceResult {
    return this.enforceCells(rowCells(table.rows), seed, fixed, codes);
  }

  /** {@link enforce} over any {@link Cells} (a `DecodedBatch`, rows). */
  enforceCells(
    cells: Cells,
    seed: number,
    fixed?: (row: number, feature: number) => boolean,
    codes?: readonly ArrayLike<number>[],
  ): EnforceResult {
    if (!this.rules.active) return { changed: 0, unrepaired: 0 };
    return this.rules.apply(cells, seed, (f, rng) => this.drawValue(f, rng), fixed, codes);
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
    return this.features[f].decode(rng.pickCumulative(cum), rng, 0);
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
      const d = binnedDecoder(feature, this.metadata.cardinalities[feature], edges, missingCode, stats, range);
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
    return this.decodeBatch(columns, seed, opts).toTable();
  }

  /**
   * {@link decode} by column: the same cells (`batch.get(r, f)` is `decode(...).rows[r][f]`, the
   * same draws), held as `../batch`'s columns (code-book indices, integers, text) so that writers
   * make no string per cell they do not write (`docs/decisions.md` "Decoded batches by column").
   * @throws as {@link decode}.
   */
  decodeBatch(columns: Record<string, ArrayLike<number>>, seed: number, opts: DecodeOptions = {}): DecodedBatch {
    const cols = this.features.map((d) => {
      const c = columns[d.name];
      if (!c) throw new APIError({ code: "invalid_response", message: `The generated data has no column for feature "${d.name}".` });
      return c;
    });
    const n = cols[0]?.length ?? 0;
    const offset = opts.rowOffset ?? 0;
    const cells = this.features.map((own, f): DecodedColumn => {
      const d = opts.decoders !== undefined && Object.hasOwn(opts.decoders, own.name) ? opts.decoders[own.name] : own;
      const codes = cols[f];
      if (codes.length !== n) throw new APIError({ code: "invalid_response", message: `Generated column "${d.name}" has ${codes.length} rows, expected ${n}.` });
      const rng = new Rng(deriveSeed(seed, f));
      const ids = d.idShape ? idValues(d.idShape, deriveSeed(opts.idKey ?? seed, f)) : undefined;
      const partner = d.partner === undefined ? undefined : cols[this.metadata.features.indexOf(d.partner)];
      const fresh = d.semantic ? new (semanticGenerator().SemanticGenerator)(d.semantic, deriveSeed(opts.idKey ?? seed, f, 3), { invented: true }) : undefined;
      if (d.decodeColumn) return d.decodeColumn(codes, rng, offset, ids, partner, fresh, opts.arrays);
      const text: string[] = new Array(n);
      for (let r = 0; r < n; r++) text[r] = d.decode(codes[r], rng, offset + r, ids, partner?.[r], fresh);
      return { kind: "text", cells: text };
    });
    const batch = new DecodedBatch(this.columns, cells, n, opts.arrays);
    if (opts.rules !== false && this.rules.active) {
      this.rules.apply(batch, seed, (f, rng) => this.drawValue(f, rng), opts.fixed, cols);
    }
    return batch;
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
