/**
 * Decoding on the client: generated codes -> table values, from the model's `metadata` alone (so
 * `GET /v1/models/{id}/metadata` is enough). Each kind's rule is docs/api.md "Column kinds"; its
 * decoder lives under `../columns` (`decoderFor`); this module orchestrates. Identifier row i of a
 * sample is value(i) of a generator keyed per sample, so ids are distinct across batches.
 * Deterministic: the same codes, seed and options give the same strings (one PRNG stream per
 * feature, seeded with `deriveSeed(seed, f)`).
 */
import type { Generation, Metadata } from "../../contract";
import { APIError } from "../errors";
import type { ArrayPool } from "../client/array-pool";
import type { Table } from "../io/csv";
import { IdGenerator, type IdValues } from "./id-generator";
import type { IdShape } from "../metadata/identifier";
import { binnedDecoder, decoderFor, inRange, missingCodeOf, MISSING_KEY, NumberFormat, OTHER, type FeatureDecoder, type ValueRange } from "../columns";
import { Rng, deriveSeed } from "./sfc32";
import { RuleEnforcer, type EnforceResult } from "../rules/enforce";
import { templateWriter } from "../rules/template";
import { nameGenderWriter } from "../rules/name-gender";
import { nameCountryWriter } from "../rules/name-country";
import { DecodedBatch, rowCells, type Cells, type DecodedColumn } from "./batch";

/** Loaded for the first column written fresh (names, cities), not for every decode. */
function semanticGenerator(): typeof import("../semantic/semantic-generator") {
  return require("../semantic/semantic-generator");
}

/** Loaded for a metadata with `coordinates` only. */
function coordinateWriter(metadata: Metadata): import("../semantic/coordinates").CoordinateWriter | undefined {
  if (!metadata.coordinates?.length) return undefined;
  const w = new (require("../semantic/coordinates") as typeof import("../semantic/coordinates")).CoordinateWriter(metadata);
  return w.active ? w : undefined;
}

/** Loaded for a metadata with a US state column and a place column of the postal gazetteer. */
function gazetteerRows(metadata: Metadata): import("../semantic/gazetteer-rows").GazetteerRows | undefined {
  const stats = Object.values(metadata.column_stats ?? {});
  const has = (test: (v: string | undefined) => boolean): boolean => stats.some((s) => s.type === "categorical" && test(s.vocabulary));
  if (!has((v) => v === "us_state" || v === "us_state_code") || !has((v) => v === "us_zip" || v === "us_city" || v === "us_county")) return undefined;
  const w = new (require("../semantic/gazetteer-rows") as typeof import("../semantic/gazetteer-rows")).GazetteerRows(metadata);
  return w.active ? w : undefined;
}

/** Loaded for a metadata with a world city column (`column_stats[f].world_city`). */
function worldCityRows(metadata: Metadata): import("../semantic/world-cities").WorldCityRows | undefined {
  if (!Object.values(metadata.column_stats ?? {}).some((st) => st.world_city !== undefined)) return undefined;
  const w = new (require("../semantic/world-cities") as typeof import("../semantic/world-cities")).WorldCityRows(metadata);
  return w.active ? w : undefined;
}

/** The writer of identifiers' tied words (`../semantic/word-partners`), loaded only for a metadata with some. */
function wordPartnerWriter(metadata: Metadata): import("../semantic/word-partners").WordPartnerWriter | undefined {
  const any = Object.values(metadata.column_stats ?? {}).some((st) => st.type === "id" && st.id_shape?.kind === "text" && st.id_shape.semantic?.word_partner !== undefined);
  if (!any) return undefined;
  const w = new (require("../semantic/word-partners") as typeof import("../semantic/word-partners")).WordPartnerWriter(metadata);
  return w.active ? w : undefined;
}

/** Fresh identifiers of `shape`: its semantic kind's generator, else an {@link IdGenerator}. */
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
  /** Per feature name, a decoder instead of its own (from {@link Decoder.restrict}). */
  decoders?: Readonly<Record<string, FeatureDecoder>>;
  /**
   * Keep `metadata.rules` in the decoded rows (`../rules/enforce`) and points in their places
   * (`metadata.coordinates`). Default true; the seeded path
   * turns it off to write the seed cells back first, then calls {@link Decoder.enforce}.
   */
  rules?: boolean;
  /** Cells the user fixed (a `where` condition's columns): rules never rewrite them. */
  fixed?: (row: number, feature: number) => boolean;
  /** Pool for the decoded columns' arrays, given back by {@link DecodedBatch.release}. */
  arrays?: ArrayPool;
  /**
   * Features whose decoded cells the caller never reads (it reads their codes): a coordinate
   * pair of two of them is not placed. Default none.
   */
  unread?: ReadonlySet<string>;
}

/** A feature's decoder and codes under a value range (see {@link Decoder.restrict}). */
export interface RestrictedFeature {
  /** The codes holding a value inside the range (ascending; never the missing code). */
  codes: number[];
  /** Per code, the share in (0, 1] of its values inside the range (the wire's weights). */
  weights: number[];
  /** Decodes those codes to values inside the range. */
  decoder: FeatureDecoder;
}

/** Decodes generated codes with a model's metadata. */
export class Decoder {
  /** Feature decoders, in `metadata.features` order. */
  readonly features: FeatureDecoder[];
  /** Keeps `metadata.rules` in decoded rows. */
  readonly rules: RuleEnforcer;
  /** Writes points inside their row's place (`metadata.coordinates`), after the rules. */
  private readonly points: ReturnType<typeof coordinateWriter>;
  /** Writes each row's places from one gazetteer row of its state, after the rules. */
  private readonly places: ReturnType<typeof gazetteerRows>;
  /** Writes each row's world city as a city of its country, after the rules. */
  private readonly cities: ReturnType<typeof worldCityRows>;
  /** Writes first names of the row's sex, after points. */
  private readonly names: ReturnType<typeof nameGenderWriter>;
  /** Writes names of the row's country (and sex), before the names of the row's sex. */
  private readonly countryNames: ReturnType<typeof nameCountryWriter>;
  /** Keeps identifiers' words beside the partner value they belong to, after the rules. */
  private readonly tiedWords: import("../semantic/word-partners").WordPartnerWriter | undefined;
  /** Writes template columns from the row's final cells, last. */
  private readonly templates: ReturnType<typeof templateWriter>;
  /** Per feature, cumulative 1-way probabilities of its non-blank codes (built on first use). */
  private readonly cumulative: (Float64Array | undefined)[] = [];
  /** Per feature, its number format (numerical columns with `number_format`). */
  private readonly numberFormats: (NumberFormat | undefined)[];
  /** Per feature, the text a datetime column writes for a missing value (`missing_text`). */
  private readonly missingTexts: (string | undefined)[];
  /** Per feature, {@link commonShare}: the most rows a fresh value of its pooled cells stands in for. */
  private readonly repeatShares: (number | undefined)[];
  /**
   * The row counters (`IntegerIdShape.counter`: R's row names, a pandas index): per counter, its
   * feature index and first number (0 or 1). A sampler numbers its kept rows with them.
   */
  readonly counters: readonly { feature: number; start: number }[];
  constructor(readonly metadata: Metadata) {
    this.features = metadata.features.map((f) => decoderFor(metadata, f));
    this.repeatShares = this.features.map((d, f) => (d.semantic ? commonShare(metadata, metadata.features[f]) : undefined));
    this.numberFormats = metadata.features.map((f) => {
      const st = metadata.column_stats?.[f];
      return st?.type === "numerical" && st.number_format ? new NumberFormat(st.number_format) : undefined;
    });
    this.missingTexts = metadata.features.map((f) => {
      const st = metadata.column_stats?.[f];
      return st?.type === "datetime" ? st.missing_text : undefined;
    });
    this.counters = metadata.features.flatMap((f, feature) => {
      const shape = metadata.column_stats?.[f]?.id_shape;
      return shape?.kind === "integer" && shape.counter === true ? [{ feature, start: shape.min }] : [];
    });
    this.rules = new RuleEnforcer(metadata);
    this.points = coordinateWriter(metadata);
    this.places = gazetteerRows(metadata);
    this.cities = worldCityRows(metadata);
    this.names = nameGenderWriter(metadata);
    this.countryNames = nameCountryWriter(metadata);
    this.templates = templateWriter(metadata);
    this.tiedWords = wordPartnerWriter(metadata);
  }

  /**
   * Makes every row of `table` keep `metadata.rules`, writes its places from one gazetteer row
   * (`../semantic/gazetteer-rows`) and their public attributes again, then writes its points inside their row's
   * place (`metadata.coordinates`, `../semantic/coordinates`), its names of the row's country
   * (`../rules/name-country`) and first names of the row's sex (`../rules/name-gender`) and last its template columns (`../rules/template`), in place, as
   * {@link decode} does by default.
   * @param seed seeds the rules' draws (use the batch's decode seed).
   * @param fixed cells never rewritten (seed cells, `where` columns).
   * @param codes the rows' generated codes per feature: a broken combination is then replaced by
   *   one likely given the row's other columns.
   */
  enforce(
    table: Table,
    seed: number,
    fixed?: (row: number, feature: number) => boolean,
    codes?: readonly ArrayLike<number>[],
  ): EnforceResult {
    return this.enforceCells(rowCells(table.rows), seed, fixed, codes);
  }

  /**
   * {@link enforce} over any {@link Cells} (a `DecodedBatch`, rows); a coordinate pair of two
   * `unread` features ({@link DecodeOptions.unread}) is left as decoded.
   */
  enforceCells(
    cells: Cells,
    seed: number,
    fixed?: (row: number, feature: number) => boolean,
    codes?: readonly ArrayLike<number>[],
    unread?: ReadonlySet<string>,
  ): EnforceResult {
    const out = this.rules.active ? this.rules.apply(cells, seed, (f, rng) => this.drawValue(f, rng), fixed, codes) : { changed: 0, unrepaired: 0 };
    this.places?.apply(cells, seed, fixed);
    this.cities?.apply(cells, seed, fixed);
    // Attributes of a place (a ZIP code's county FIPS) follow the place the gazetteer row wrote.
    if (this.places && this.rules.active) out.changed += this.rules.applyAttributes(cells, seed, (f, rng) => this.drawValue(f, rng), fixed);
    this.points?.apply(cells, seed, fixed, unread !== undefined ? (f) => unread.has(this.metadata.features[f]) : undefined);
    if (this.countryNames) out.changed += this.countryNames.apply(cells, seed, fixed);
    const named = this.countryNames;
    if (this.names) out.changed += this.names.apply(cells, seed, named ? (r, f) => named.handled(r, f) || (fixed?.(r, f) ?? false) : fixed);
    if (this.tiedWords) out.changed += this.tiedWords.apply(cells, fixed);
    if (this.templates) out.changed += this.templates.apply(cells, fixed);
    return out;
  }

  /** A non-blank value of feature f drawn from its 1-way marginal, written by its decoder. */
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
   * A numerical or datetime feature under a value range (`where`): the codes whose values meet the
   * range, weighted by the share of a bin inside it, and a decoder that writes only values inside
   * (`age >= 60` on a bin [55, 65) gives 60..64).
   * @param range bounds in the column's numbers (datetimes: seconds since the epoch).
   * @param parse text -> number of the column's point values (used for point-bin columns).
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
   * @param columns `columns[f][r]` = code of feature f in row r (every feature, same length).
   * @param seed seeds the draws inside interval bins and for the pooled code (any finite number).
   * @param opts the rows' place in their sample and the identifier key ({@link DecodeOptions}).
   * @returns the decoded {@link Table}: `rows[r][c]` in `metadata.features` order.
   * @throws APIError (`invalid_response`) when a feature is absent or a code is out of range.
   */
  decode(columns: Record<string, ArrayLike<number>>, seed: number, opts: DecodeOptions = {}): Table {
    return this.decodeBatch(columns, seed, opts).toTable();
  }

  /**
   * {@link decode} by column: the same cells and draws, held as `./batch`'s columns so writers make
   * no string per cell (`docs/decisions.md` "Decoded batches by column").
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
      const fresh = d.semantic
        ? new (semanticGenerator().SemanticGenerator)(d.semantic, deriveSeed(opts.idKey ?? seed, f, 3), { invented: true, repeats: true, repeatShare: this.repeatShares[f] })
        : undefined;
      const decided = d.alsoDecides?.map((g) => cols[this.metadata.features.indexOf(g)]);
      if (d.decodeColumn) return d.decodeColumn(codes, rng, offset, ids, partner, fresh, opts.arrays, decided);
      const text: string[] = new Array(n);
      for (let r = 0; r < n; r++) text[r] = d.decode(codes[r], rng, offset + r, ids, partner?.[r], fresh, decided?.map((c) => c[r]));
      return { kind: "text", cells: text };
    });
    const batch = new DecodedBatch(this.columns, cells, n, opts.arrays);
    // A sample's first batch: rules that keep cells distinct across batches start afresh.
    if (offset === 0) this.rules.newSample();
    if (opts.rules !== false) {
      this.enforceCells(batch, seed, opts.fixed, cols, opts.unread);
      this.writeNumberFormats(batch);
    }
    return batch;
  }

  /**
   * The rows of the last decoded batch that the sample writes (a near-copy filter or a key check
   * dropped the others), as written: rules that keep an identifier's codes distinct across the
   * sample's batches count only these, so a dropped row's code is free again, and an identifier
   * that repeats one written before is drawn again in place (cells `fixed` kept). A caller that
   * writes every row it decodes need not call it.
   */
  written(rows: Cells, seed: number, fixed?: (row: number, feature: number) => boolean): void {
    if (this.rules.active) this.rules.written(rows, seed, fixed);
  }

  /**
   * Writes the numerical columns that have a `number_format` in it (`1234.5` -> `$1,234.5`), and
   * the blanks of datetime columns with a `missing_text` as it, in place: last, after the rules,
   * which read plain numbers and blanks. {@link decodeBatch} does it unless `rules: false`; a
   * caller that enforces the rules itself calls it after them.
   */
  writeNumberFormats(batch: DecodedBatch): void {
    this.numberFormats.forEach((format, f) => format && batch.rewriteColumn(f, (t) => format.write(t)));
    this.missingTexts.forEach((text, f) => text !== undefined && batch.rewriteColumn(f, (t) => (t === "" ? text : t)));
  }

  /** Text of feature f as the rules read it: a number format's value as its plain number. */
  plainText(f: number, text: string): string {
    if (text !== "" && text === this.missingTexts[f]) return "";
    const format = this.numberFormats[f];
    return format === undefined || text === "" ? text : (format.plain(text.trim()) ?? text);
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

/**
 * The share of rows of a categorical column's commonest released value (`empirical_probs`, the
 * pooled and blank codes left out): a fresh value stands in for no more rows than it.
 * @returns undefined when the column has no such value.
 */
function commonShare(metadata: Metadata, name: string): number | undefined {
  const probs = metadata.empirical_probs?.[name];
  const mapping = metadata.value_mappings?.[name];
  if (!probs || !mapping) return undefined;
  let top: number | undefined;
  for (const [v, c] of Object.entries(mapping)) if (v !== OTHER && v !== MISSING_KEY && Number.isFinite(probs[c])) top = Math.max(top ?? 0, probs[c]);
  return top;
}
