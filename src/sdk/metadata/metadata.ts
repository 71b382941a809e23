/**
 * Metadata extraction on the client (raw rows never leave it): a table -> the `metadata` of Create
 * Model (per-column code books, 1-way marginals, column statistics, selected 2-way marginals).
 *
 * {@link analyzeTable} on a raw table reads it in passes (`./table-tally`, docs/extract.md): distinct
 * values with counts and a bottom-k sample of rows, then, when the table is larger than the sample,
 * the 2-way counts; a CSV file by worker threads. Memory: O(distinct values + sample), not O(n).
 * Kind inference, parsing and binning work on distinct values. {@link encodeTable} (evaluation, a
 * domain, privacy) keeps each row's value id: one pass (`./table-scan`), O(n · F · 4 bytes).
 *
 * Rules (values and header names trimmed first; docs/api.md "Column kinds" for the user's view):
 * - Missing: the empty string (`NA`, `?` are ordinary values, but for a numerical column's one
 *   missing text, `number_format.missing`); it gets the LAST code,
 *   `value_mappings[f][""]` ({@link MISSING_KEY}). An all-blank column has one code, the blank.
 * - Kind (`opts.columns` overrides it, checked against the values): `numerical` when every value
 *   is a finite decimal number (`isNumeric`), but integers as distinct as an id
 *   ({@link DEFAULTS}.idMinRows, .idDistinctShare) under an identifier's name
 *   ({@link looksLikeIdName}) are `id`, and so are integers numbering the rows from 0 or 1 in
 *   file order under a row-name header (`isRowCounter`: R's row names, a pandas index); else `datetime` when one format of `./datetime` parses
 *   every distinct value (90% or more but not all: a DataError naming line and value); else `id`
 *   for text as distinct as above; else `categorical`.
 * - Code books, one module per kind (`../columns`): categorical values seen `rareThreshold` times
 *   keep a code, the rest pool as {@link OTHER} (no value reaching it: `id` when inferred, a
 *   DataError when declared); numerical and datetime: point or quantile bins (`../columns/bins`);
 *   id: one code and an `id_shape`, no values sent, no 2-way marginals.
 * - `empirical_probs[f]` = counts / n; `marginals`: the pairs `selectPairs` chooses, each
 *   `[f, g]` in table order, probs row-major `probs[i*K_g + j]`.
 * - With `domain`, the code books come from the domain (`./domain`); with `privacy`, the marginals
 *   are measured with noise and the pairs chosen privately (`./dp`).
 */
import type { ColumnKind, Metadata, PairMarginal, PublicVocabulary } from "../../contract";
import { DatetimeFormat, inferDatetimeFormat } from "./datetime";
import type { SemanticKind } from "../semantic";
import { isGazetteerVocabulary, publicVocabularyOf, ZIP_HEADER } from "../semantic/vocabulary";
import { coordinatePairs } from "../semantic/coordinates";
import { findWordPartners } from "../semantic/word-partners";
import { setCellRanges } from "./cell-ranges";
import { statePlaces, zipPrefixes } from "../semantic/gazetteer-rows";
import { worldCityColumns } from "../semantic/world-cities";
import { fileOfDescription, type TableSource } from "../io/csv";
import type { ReadProgress, SourceType } from "../io/inputs";
import { scanTable } from "./table-scan";
import { tallyTable, type TableTally } from "./table-tally";
import { meanAndStd, type Moments, type ValueEncoder } from "./distinct-values";
import { DataError } from "../errors";
import { checkDomainColumns, domainCodec, loadDomain, type DomainSource } from "./domain";
import { privateMetadata, type PrivacyOptions, type PrivacyReport } from "./dp";
import { counts1, jointCounts, mutualInformation, selectPairs, type CodeArray, type PairSelection } from "./marginals";
import { detectRules, type RuleOptions } from "../rules/detect";
import { asWritten } from "../columns/number-format";
import { blankCodec, codecFor, decimalsOf, isNumeric, isRowCounter, looksLikeCodeName, looksLikeIdName, MISSING_KEY, OTHER, FRESH_POOLED_SHARE, pooledWritesFresh, type ColumnCodec, type ColumnScan } from "../columns";

// Re-exported: evaluation, the rules and the reports import the kinds' shared names from here.
export { decimalsOf, isNumeric, MISSING_KEY, OTHER, type ColumnCodec, type ColumnScan };
export { DEFAULTS, type EncodedTable, type ScannedTable } from "./encoded";
import { DEFAULTS, type EncodedTable, type ScannedTable } from "./encoded";


/** A user's choice of a column's kind (and, for datetime, its format in luxon tokens). */
export interface ColumnOverride {
  type: ColumnKind;
  /** Datetime only: the format in luxon tokens (`dd/MM/yyyy HH:mm`). Default: inferred. */
  format?: string;
  /** Id only, text values: their semantic kind (`email`, `title` ...). Default: recognised. */
  semantic?: SemanticKind;
}

/** Options of {@link extractMetadata} / {@link analyzeTable}. */
export interface ExtractOptions {
  /** Max codes per categorical column, >= 2. Default 1,000. */
  categoryCap?: number;
  /** Rows a categorical value needs for a code of its own, >= 1. Default 2 (see {@link DEFAULTS}). */
  rareThreshold?: number;
  /** Per column name, the kind instead of the inferred one; a name the table lacks: DataError. */
  columns?: Record<string, ColumnOverride>;
  /** Max bins per numerical column, >= 1. Default 32. */
  binCap?: number;
  /** Max total cells of the 2-way marginals, >= 0 (0 sends none). Default 200,000. */
  pairBudget?: number;
  /** The table is already codes in [0, K), K from this domain (`./domain`). Default: none. */
  domain?: DomainSource;
  /** Differential privacy (`./dp`): noisy marginals. Needs `domain`. Default: none. */
  privacy?: PrivacyOptions;
  /** CSV field delimiter (`,`, `\t`, `;`, `|`). Default: detected (`../io/csv`). */
  delimiter?: string;
  /** CSV text encoding (`utf-8`, `latin1`, `windows-1252` ...). Default UTF-8, checked strictly. */
  encoding?: string;
  /** Called after each batch of rows read from a file or database (`../io/inputs`), per pass. */
  onReadProgress?: (p: ReadProgress) => void;
  /**
   * Worker threads reading a UTF-8 CSV file in byte ranges (`./table-tally`); 0: none. Default:
   * the available cores (at most 8) for a file of 16 MiB or more, else none. Results do not depend on it.
   */
  threads?: number;
  /**
   * Rows (a bottom-k sample, in table order) that rule detection and coordinate areas read, and
   * `codes` holds; a smaller table is read whole. Default 200,000 (docs/extract.md).
   */
  sampleRows?: number;
  /**
   * Distinct values a column keeps with their counts in the first pass (per reader) before it
   * overflows (docs/extract.md): then its kind and code book come from the sample's values with an
   * estimated distinct count, its marginals and range from the second pass. Default 250,000.
   */
  distinctBudget?: number;
  /**
   * Row rules (`../rules/detect`, docs/api.md "Row rules"): detected by default, dropped by id or
   * declared. Raw tables only (rules from raw rows are not private); else declaring: RangeError.
   */
  rules?: RuleOptions;
}

/** A column's kind, from an override or inferred (rules in the file header). */
interface KindChoice {
  kind: ColumnKind;
  datetime?: DatetimeFormat;
}

/** The format of a typed source's datetime text (`../io/inputs` datetimeText, `./table-scan`). */
function typedDatetimeFormat(texts: readonly string[], type: "timestamp" | "date"): string {
  if (type === "date") return "yyyy-MM-dd";
  return texts.every((v) => v.length === 19) ? "yyyy-MM-dd HH:mm:ss" : "yyyy-MM-dd HH:mm:ss.SSS";
}

function chooseKind(
  scan: ColumnScan,
  n: number,
  source: string,
  override: ColumnOverride | undefined,
  vocabulary?: PublicVocabulary,
  type?: SourceType,
): KindChoice {
  const file = fileOfDescription(source);
  const nonBlank = n - (scan.estimated?.missing ?? scan.missing);
  const distinct = scan.estimated?.distinct ?? scan.values.length - (scan.missing > 0 ? 1 : 0);
  const texts = scan.values.filter((v) => v !== "");
  if (override) {
    if (override.format !== undefined && override.type !== "datetime") {
      throw new DataError(`${source}: the override of column "${scan.name}" gives a format, which only a datetime column has.`, {
        column: scan.name,
        file,
      });
    }
    if (override.semantic !== undefined && override.type !== "id") {
      throw new DataError(`${source}: the override of column "${scan.name}" gives a semantic kind, which only an id column has ({"type": "id", "semantic": ...}).`, {
        column: scan.name,
        file,
      });
    }
    if (override.type === "numerical") {
      const bad = scan.values.findIndex((v) => v !== "" && !isNumeric(v));
      if (bad >= 0) {
        throw new DataError(
          `${source}, line ${scan.firstLines[bad]}, column "${scan.name}": ${JSON.stringify(scan.values[bad])} is not a number, ` +
            `but the column is declared numerical.`,
          { column: scan.name, line: scan.firstLines[bad], file },
        );
      }
    }
    if (override.type === "datetime") {
      let fmt: DatetimeFormat;
      if (override.format !== undefined) {
        try {
          fmt = new DatetimeFormat(override.format);
        } catch (e) {
          throw new DataError(`${source}: ${JSON.stringify(override.format)} is not a datetime format for column "${scan.name}" (${(e as Error).message}).`, {
            column: scan.name,
            file,
            cause: e,
          });
        }
      } else {
        const inferred = inferDatetimeFormat(texts);
        if (!inferred) {
          throw new DataError(
            `${source}: column "${scan.name}" is declared datetime but no known format parses its values (first: ` +
              `${JSON.stringify(texts[0])}); give the format, e.g. {"type": "datetime", "format": "dd/MM/yyyy"}.`,
            { column: scan.name, file },
          );
        }
        fmt = new DatetimeFormat(inferred.format);
      }
      return { kind: "datetime", datetime: fmt };
    }
    return { kind: override.type };
  }
  // What a typed source's type says comes before what the text suggests.
  if (type === "timestamp" || type === "date") return { kind: "datetime", datetime: new DatetimeFormat(typedDatetimeFormat(texts, type)) };
  if (type === "dictionary") return { kind: "categorical" };
  // Names and codes of a public list are categories however rare (ZIP codes too, though digits).
  if (vocabulary !== undefined) return { kind: "categorical" };
  const idLike = nonBlank >= DEFAULTS.idMinRows && distinct >= DEFAULTS.idDistinctShare * nonBlank;
  if (scan.numeric) {
    // Distinct integers are as often measurements (weights, prices in cents) as keys: the name decides.
    const integer = scan.estimated?.integer ?? texts.every((v) => /^[+-]?\d+$/.test(v) && Number.isSafeInteger(Number(v)));
    if (integer && idLike && looksLikeIdName(scan.name)) return { kind: "id" };
    // A column numbering the rows (R's row names, a pandas index) says where a row sits, nothing to learn.
    if (integer && isRowCounter(scan, n)) return { kind: "id" };
    // Integers named a code or key that repeat (an agency's code, a state's FIPS id) label rows:
    // categories, so a name that decides its code keeps it exactly.
    return { kind: integer && looksLikeCodeName(scan.name) && distinct <= DEFAULTS.codeMaxDistinct ? "categorical" : "numerical" };
  }
  const inferred = inferDatetimeFormat(texts);
  if (inferred && inferred.parsed === texts.length) return { kind: "datetime", datetime: new DatetimeFormat(inferred.format) };
  if (inferred && inferred.parsed >= DEFAULTS.datetimeShare * texts.length) {
    const fmt = new DatetimeFormat(inferred.format);
    const bad = scan.values.findIndex((v) => v !== "" && fmt.parse(v) === undefined);
    throw new DataError(
      `${source}, line ${scan.firstLines[bad]}, column "${scan.name}": ${JSON.stringify(scan.values[bad])} is not a datetime in ` +
        `the format ${inferred.format} of the column's other values (${inferred.parsed} of ${texts.length} distinct values parse); ` +
        `fix the value, or declare the column categorical (columns: {"${scan.name}": {"type": "categorical"}}).`,
      { column: scan.name, line: scan.firstLines[bad], file },
    );
  }
  return { kind: idLike ? "id" : "categorical" };
}

/**
 * Builds the code book of one scanned column: its kind (override, else the source's `type`, else
 * inference) and codes. A typed timestamp or date is a datetime, a dictionary a categorical (an
 * id when no value reaches the rare threshold, as inferred). A scan with `estimated` (a sample's)
 * gets the sample's code book, the kind judged with the estimated distinct values of the table's
 * `n` rows, and the table's count and blanks; `sampled` is that call's own.
 * @throws DataError when an override does not fit the values, or a datetime value does not parse.
 */
export function buildCodec(
  scan: ColumnScan,
  n: number,
  opts: ExtractOptions = {},
  source = "the table",
  type?: SourceType,
  sampled?: { table: number; est: NonNullable<ColumnScan["estimated"]> },
): ColumnCodec {
  const categoryCap = opts.categoryCap ?? DEFAULTS.categoryCap;
  const binCap = opts.binCap ?? DEFAULTS.binCap;
  const k = opts.rareThreshold ?? DEFAULTS.rareThreshold;
  if (!(Number.isInteger(categoryCap) && categoryCap >= 2)) throw new RangeError("categoryCap must be an integer >= 2");
  if (!(Number.isInteger(binCap) && binCap >= 1)) throw new RangeError("binCap must be an integer >= 1");
  if (!(Number.isInteger(k) && k >= 1)) throw new RangeError("rareThreshold must be an integer >= 1");
  const override = opts.columns?.[scan.name];
  const est = scan.estimated;
  if (est) {
    // A sample's scan (an overflowed column): its code book is the sample's, its counts the table's.
    const codec = buildCodec({ ...scan, estimated: undefined }, est.rows, opts, source, type, { table: n, est });
    codec.stats.count = n - est.missing;
    codec.stats.missing = est.missing;
    return codec;
  }
  if (scan.missing === n) return blankCodec(scan, n, k, override?.type, source);
  const typedDatetime = type === "timestamp" || type === "date";
  const vocabulary = (override === undefined || override.type === "categorical") && !typedDatetime && (!scan.numeric || ZIP_HEADER.test(scan.name.toLowerCase()))
    ? publicVocabularyOf(scan.name, scan.values, scan.counts)
    : undefined;
  const choice = chooseKind(sampled ? { ...scan, estimated: sampled.est } : scan, sampled?.table ?? n, source, override, vocabulary, type);
  const codec = codecFor(choice.kind, scan, n, { categoryCap, binCap, rareThreshold: k, datetime: choice.datetime, source, semantic: override?.semantic, vocabulary });
  if (codec) return codec;
  // No value reaches k, so nothing could be released: an inferred column becomes an id (written
  // fresh); a declared one is the user's call.
  if (!override) return codecFor("id", scan, n, { categoryCap, binCap, rareThreshold: k, source })!;
  throw new DataError(
    `${source}: column "${scan.name}" has no value that occurs at least ${k} times, so no value of it could appear in ` +
      `synthetic data; treat it as an identifier (columns: {"${scan.name}": {"type": "id"}}) or lower rareThreshold.`,
    { column: scan.name, file: fileOfDescription(source) },
  );
}

/**
 * Puts back the written values (`$1,234.50`, not `1234.50`) of the columns `opts.columns` declares
 * a kind other than numerical, in each scanned table given (in place): a number format is a
 * numerical column's (`../columns/number-format`).
 */
export function keepDeclaredText(opts: ExtractOptions, ...tables: { columns: readonly string[]; scans: ColumnScan[] }[]): void {
  for (const [name, o] of Object.entries(opts.columns ?? {})) {
    if (o?.type === "numerical") continue;
    for (const t of tables) {
      const c = t.columns.indexOf(name);
      if (c >= 0) t.scans[c] = asWritten(t.scans[c]);
    }
  }
}

/** Checks `opts.columns` against a header. @throws DataError: unknown column or type. */
export function checkOverrides(columns: readonly string[], opts: ExtractOptions, source: string): void {
  for (const [name, o] of Object.entries(opts.columns ?? {})) {
    if (!columns.includes(name)) {
      throw new DataError(`${source} has no column "${name}", which the column overrides name (columns: ${columns.join(", ")}).`, {
        column: name,
        file: fileOfDescription(source),
      });
    }
    if (!["categorical", "numerical", "datetime", "id"].includes(o?.type)) {
      throw new DataError(
        `The override of column "${name}" has type ${JSON.stringify(o?.type)}; use categorical, numerical, datetime or id.`,
        { column: name },
      );
    }
  }
}

/** Smallest typed array that holds codes < K. */
export function codeArray(K: number, n: number): CodeArray {
  return K <= 256 ? new Uint8Array(n) : K <= 65536 ? new Uint16Array(n) : new Int32Array(n);
}

/**
 * Encodes a scanned table with code books (possibly another table's); columns matched by name.
 * @param unseen per codec, the code for values it does not know (evaluation: K_f); without it an
 *   unknown value is an internal error.
 * @throws DataError when the scanned table lacks a codec's column.
 */
export function encodeScanned(scanned: ScannedTable, codecs: readonly ColumnCodec[], unseen?: readonly number[]): CodeArray[] {
  return codecs.map((codec, f) => {
    const c = scanned.columns.indexOf(codec.name);
    if (c < 0) throw new DataError(`${scanned.source} has no column "${codec.name}".`, { column: codec.name });
    const scan = scanned.scans[c];
    const table = scan.values.map((v) => {
      const code = codec.encode(v);
      if (code >= 0) return code;
      if (unseen) return unseen[f];
      throw new Error(`internal: value ${JSON.stringify(v)} of column "${codec.name}" has no code`);
    });
    const out = codeArray(Math.max(codec.K, unseen ? unseen[f] + 1 : 0), scanned.n);
    const ids = scan.ids;
    for (let r = 0; r < ids.length; r++) out[r] = table[ids[r]];
    return out;
  });
}


/** Result of {@link analyzeTable}: the metadata plus what it was computed from. */
export interface Analysis extends EncodedTable {
  metadata: Metadata;
  /** Which pairs were sent and the spanning tree among them (feature indices). */
  selection: PairSelection;
  /** With `opts.privacy`: the budget, its split and the noise scale (also in `column_stats`). */
  privacy?: PrivacyReport;
  /**
   * Present when the table has more rows than the sample (`opts.sampleRows`): `codes` are then
   * the codes of this many sampled rows in table order (docs/extract.md), not of all `n` rows.
   */
  sampledRows?: number;
}

/** Scans and encodes a table. @throws DataError for bad input or a domain it does not fit. */
export async function encodeTable(source: TableSource, opts: ExtractOptions = {}): Promise<EncodedTable> {
  return (await encodeTableWithScan(source, opts)).encoded;
}

/**
 * {@link encodeTable} that also returns the scan (raw values, e.g. for evaluation's exact copies).
 * @throws as {@link encodeTable}; RangeError when both `columns` and `domain` are given.
 */
export async function encodeTableWithScan(
  source: TableSource,
  opts: ExtractOptions = {},
): Promise<{ encoded: EncodedTable; scanned: ScannedTable }> {
  if (opts.domain !== undefined && opts.columns !== undefined) {
    throw new RangeError("columns (kind overrides) and domain cannot be combined: with a domain every column is a categorical code.");
  }
  const domain = opts.domain === undefined ? undefined : await loadDomain(opts.domain);
  const scanned = await scanTable(source, 2, { delimiter: opts.delimiter, encoding: opts.encoding, onProgress: opts.onReadProgress });
  if (domain) checkDomainColumns(scanned.columns, domain, scanned.source);
  else checkOverrides(scanned.columns, opts, scanned.source);
  keepDeclaredText(opts, scanned);
  const codecs = scanned.scans.map((s, c) =>
    domain ? domainCodec(s, scanned.n, domain[s.name], scanned.source) : buildCodec(s, scanned.n, opts, scanned.source, scanned.types?.[c]),
  );
  const codes = encodeScanned(scanned, codecs);
  return { encoded: { columns: scanned.columns, n: scanned.n, codecs, codes }, scanned };
}

/** 1-way and selected 2-way marginals (at most `pairBudget` cells) as Create Model `metadata`. */
export function buildMetadata(enc: EncodedTable, pairBudget: number = DEFAULTS.pairBudget): { metadata: Metadata; selection: PairSelection } {
  if (!(pairBudget >= 0)) throw new RangeError("pairBudget must be >= 0");
  const { codecs, codes } = enc;
  const cards = codecs.map((c) => c.K);
  let scratch: Float64Array | undefined;
  const selection = choosePairs(codecs, (i, j) => {
    scratch = jointCounts(codes[i], cards[i], codes[j], cards[j], scratch && scratch.length >= cards[i] * cards[j] ? scratch : undefined);
    return mutualInformation(scratch, cards[i], cards[j]);
  }, pairBudget);
  const joint = selection.pairs.map(([i, j]) => jointCounts(codes[i], cards[i], codes[j], cards[j]));
  return { metadata: metadataOf(enc.columns, codecs, enc.n, codes.map((a, f) => counts1(a, cards[f])), joint, selection), selection };
}

/**
 * The pairs {@link selectPairs} chooses among the columns that are not identifiers (those have
 * no 2-way marginals); `mi(i, j)` (feature indices, i < j) is called only when not all fit.
 */
export function choosePairs(codecs: readonly ColumnCodec[], mi: (i: number, j: number) => number, pairBudget: number): PairSelection {
  const modelled = codecs.map((c, f) => (c.kind === "id" ? -1 : f)).filter((f) => f >= 0);
  const sub = selectPairs(modelled.map((f) => codecs[f].K), (a, b) => mi(modelled[a], modelled[b]), pairBudget);
  const remap = ([a, b]: [number, number]): [number, number] => [modelled[a], modelled[b]];
  return { pairs: sub.pairs.map(remap), tree: sub.tree.map(remap), cells: sub.cells };
}

/**
 * Create Model `metadata` from counts: `counts[f][code]` (1-way) and `joint[k]`, the row-major
 * joint counts of `selection.pairs[k]`, each divided by `n`.
 */
export function metadataOf(
  columns: readonly string[],
  codecs: readonly ColumnCodec[],
  n: number,
  counts: readonly Float64Array[],
  joint: readonly Float64Array[],
  selection: PairSelection,
): Metadata {
  const metadata: Metadata = {
    features: [...columns],
    cardinalities: {},
    empirical_probs: {},
    column_stats: {},
    value_mappings: {},
  };
  codecs.forEach((codec, f) => {
    metadata.cardinalities[codec.name] = codec.K;
    metadata.empirical_probs[codec.name] = Array.from(counts[f], (v) => v / n);
    metadata.column_stats![codec.name] = codec.stats;
    metadata.value_mappings![codec.name] = codec.mapping;
  });
  metadata.marginals = selection.pairs.map(([i, j], k): PairMarginal => ({ features: [columns[i], columns[j]], probs: Array.from(joint[k], (v) => v / n) }));
  return metadata;
}

/**
 * Full extraction with what it was computed from (codes, code books, pair selection); on a raw
 * table also `metadata.rules` (detected and declared, `../rules/detect`).
 * @throws DataError for bad input ({@link encodeTable}) or a declared rule that does not fit;
 *   RangeError for `privacy` without `domain` or with a bad budget, or rules with either.
 */
export async function analyzeTable(source: TableSource, opts: ExtractOptions = {}): Promise<Analysis> {
  if (opts.privacy !== undefined && opts.domain === undefined) {
    throw new RangeError(
      "privacy needs a domain: without one, the code book (categories, quantile bin edges, min/max) is computed from the rows and sent without noise.",
    );
  }
  const raw = opts.domain === undefined && opts.privacy === undefined;
  if (!raw && (opts.rules?.declare?.length ?? 0) > 0) {
    throw new RangeError("rules.declare needs a raw table: with a domain or privacy, no rules are computed from the rows (they would not be private).");
  }
  if (!raw) {
    const { encoded: enc, scanned } = await encodeTableWithScan(source, opts);
    if (opts.privacy !== undefined) return { ...enc, ...privateMetadata(enc, opts.privacy, opts.pairBudget) };
    const built = buildMetadata(enc, opts.pairBudget);
    const coordinates = coordinatePairs(scanned, enc.codecs);
    if (coordinates.length > 0) built.metadata.coordinates = coordinates;
    return { ...enc, ...built };
  }
  const tally = await tallyTable(source, {
    delimiter: opts.delimiter,
    encoding: opts.encoding,
    onReadProgress: opts.onReadProgress,
    threads: opts.threads,
    sampleRows: opts.sampleRows,
    distinctBudget: opts.distinctBudget,
  });
  try {
    checkOverrides(tally.columns, opts, tally.source);
    keepDeclaredText(opts, tally, tally.sample);
    const codecs = tally.scans.map((s, c) => buildCodec(s, tally.n, opts, tally.source, tally.types?.[c]));
    const sample: EncodedTable = { columns: tally.columns, n: tally.sample.n, codecs, codes: encodeScanned(tally.sample, codecs) };
    // Rules come from the raw rows (the sample's), before any request; a declared rule the rows break throws here.
    const rules = detectRules(tally.sample, sample, { ...opts.rules, rareThreshold: opts.rareThreshold });
    const built = tally.sampled ? await countedMetadata(tally, codecs, sample, opts.pairBudget ?? DEFAULTS.pairBudget) : buildMetadata(sample, opts.pairBudget);
    if (rules.length > 0) built.metadata.rules = rules;
    // Areas of real points and ranges of cells come from the raw rows, like the rules.
    const k = opts.rareThreshold ?? DEFAULTS.rareThreshold;
    setCellRanges(tally.sample, sample, built.selection, built.metadata, k);
    const coordinates = coordinatePairs(tally.sample, codecs, k);
    if (coordinates.length > 0) built.metadata.coordinates = coordinates;
    // A point is kept inside its place's area by the coordinates' own step, not a range per column.
    const axes = new Set(coordinates.flatMap((c) => [c.latitude, c.longitude]));
    if (built.metadata.rules && axes.size > 0) built.metadata.rules = built.metadata.rules.filter((r) => r.type !== "entity_range" || !axes.has(r.columns[1]));
    if (built.metadata.rules?.length === 0) delete built.metadata.rules;
    const zips = zipPrefixes(tally.sample, codecs, k);
    const zipStats = zips && built.metadata.column_stats?.[zips.column];
    if (zipStats) zipStats.zip_prefixes = zips.prefixes;
    for (const { column, places } of statePlaces(tally.sample, codecs, k)) {
      const st = built.metadata.column_stats?.[column];
      if (st?.type === "categorical") st.state_places = places;
    }
    freshForDeterminants(built.metadata, tally.columns, tally.scans, k);
    freshForNoteKeys(built.metadata, tally.columns, tally.scans, k);
    findWordPartners(built.metadata, tally.sample, k);
    // A world city column's cities are written from the gazetteer: its words are tied to nothing.
    for (const { column, country } of worldCityColumns(tally.sample, codecs)) {
      const st = built.metadata.column_stats?.[column];
      if (!st) continue;
      st.world_city = { country };
      const shape = st.type === "categorical" ? st.semantic : st.id_shape?.kind === "text" ? st.id_shape.semantic : undefined;
      if (shape) delete shape.word_partner;
    }
    withoutUnfitFresh(built.metadata);
    return { ...sample, n: tally.n, ...built, ...(tally.sampled ? { sampledRows: tally.sample.n } : {}) };
  } finally {
    await tally.close();
  }
}

/** Most cells of all 2-way count tables that pass 2 counts at once to choose pairs by exact mutual information. */
const ALL_PAIR_CELLS = 1 << 22;

/**
 * The metadata of a table larger than its sample: 1-way marginals from pass 1's counts; pairs
 * chosen by the mutual information of every pair's counts from pass 2 (or the sample's, when all
 * pairs together exceed {@link ALL_PAIR_CELLS} cells), the chosen ones counted by pass 2.
 */
async function countedMetadata(tally: TableTally, codecs: ColumnCodec[], sample: EncodedTable, pairBudget: number): Promise<{ metadata: Metadata; selection: PairSelection }> {
  if (!(pairBudget >= 0)) throw new RangeError("pairBudget must be >= 0");
  const cards = codecs.map((c) => c.K);
  const encoders = codecs.map((codec, f) => (tally.overflow[f] ? valueEncoder(codec, tally.types?.[f]) : null));
  const codeOfValue = tally.scans.map((s, f) => (encoders[f] ? new Int32Array(0) : Int32Array.from(s.values, (v) => codecs[f].encode(v))));
  // Pass 2 reads ids as read; a formatted column's merged its values (`../columns/number-format`).
  const codeOfId = tally.scans.map((s, f) => (s.readIds && !encoders[f] ? Int32Array.from(s.readIds, (id) => codeOfValue[f][id]) : codeOfValue[f]));
  const counts = codecs.map((codec, f) => {
    const c = new Float64Array(codec.K);
    if (!encoders[f]) tally.scans[f].counts.forEach((m, id) => (c[codeOfValue[f][id]] += m));
    return c;
  });
  const count = async (pairs: [number, number][]): Promise<Float64Array[]> => {
    const two = await tally.countPairs(pairs, cards, codeOfId, encoders);
    two.counts.forEach((c, f) => c && counts[f].set(c));
    two.moments.forEach((m, f) => m && withMoments(codecs[f], m, tally.scans[f].estimated?.distinct));
    return two.joint;
  };
  const modelled = codecs.map((c, f) => (c.kind === "id" ? -1 : f)).filter((f) => f >= 0);
  const all: [number, number][] = [];
  let cells = 0;
  for (let a = 0; a < modelled.length; a++) for (let b = a + 1; b < modelled.length; b++) {
    all.push([modelled[a], modelled[b]]);
    cells += cards[modelled[a]] * cards[modelled[b]];
  }
  let selection: PairSelection;
  let joint: Float64Array[];
  if (cells <= ALL_PAIR_CELLS) {
    const every = await count(all);
    const at = new Map(all.map(([i, j], k) => [i * codecs.length + j, k]));
    const of = (i: number, j: number): Float64Array => every[at.get(i * codecs.length + j)!];
    selection = choosePairs(codecs, (i, j) => mutualInformation(of(i, j), cards[i], cards[j]), pairBudget);
    joint = selection.pairs.map(([i, j]) => of(i, j));
  } else {
    const { codes } = sample;
    selection = choosePairs(codecs, (i, j) => mutualInformation(jointCounts(codes[i], cards[i], codes[j], cards[j]), cards[i], cards[j]), pairBudget);
    joint = await count(selection.pairs);
  }
  return { metadata: metadataOf(tally.columns, codecs, tally.n, counts, joint, selection), selection };
}

/** Pass 2's encoding of a column that overflowed pass 1's budget: its code book as data (a typed timestamp in whole seconds read without ".000"). */
function valueEncoder(codec: ColumnCodec, type: SourceType | undefined): ValueEncoder {
  const st = codec.stats;
  if (codec.kind === "id") return { kind: "id", missingCode: codec.missingCode, integer: st.id_shape?.kind === "integer" };
  if ((st.type === "numerical" || st.type === "datetime") && st.bin_edges) {
    const whole = type === "timestamp" && st.format !== undefined && !st.format.includes("S");
    return {
      kind: "bins",
      edges: st.bin_edges,
      ...(st.type === "datetime" ? { format: st.format } : {}),
      missingCode: codec.missingCode,
      shift: st.mean ?? 0,
      ...(whole ? { dropSuffix: ".000" } : {}),
      ...(st.number_format ? { number: st.number_format } : {}),
    };
  }
  return { kind: "mapping", mapping: codec.mapping, otherCode: codec.otherCode, missingCode: codec.missingCode, ...(st.number_format ? { number: st.number_format } : {}) };
}

/**
 * The exact range and moments of a binned column whose bins came from the sample: min, max,
 * mean and (population) deviation from pass 2; an end interval bin reaches out to the range. An
 * integer id's shape gets the range and the estimated distinct values (at most its rows).
 */
function withMoments(codec: ColumnCodec, m: Moments, distinct: number | undefined): void {
  const st = codec.stats;
  if (m.count === 0) return;
  if (st.id_shape?.kind === "integer") {
    st.id_shape = { ...st.id_shape, min: m.min, max: m.max, distinct: Math.min(m.count, Math.round(distinct ?? st.id_shape.distinct)) };
    return;
  }
  st.min = m.min;
  st.max = m.max;
  Object.assign(st, meanAndStd(m));
  const e = st.bin_edges;
  if (!e) return;
  const last = e.length - 1;
  if (e[0] !== e[1]) e[0] = Math.min(e[0], m.min);
  if (e[last] !== e[last - 1]) e[last] = Math.max(e[last], m.max);
}

/**
 * Gives a determinant of a fixed-combinations rule that pools rare values and has no writer of
 * fresh values one in its own words (`../semantic`'s `vocabularyShape`), so that a pooled cell
 * beside a partner value no released value goes with is written in the column's form rather than
 * as the pooled text `__other__` (the decoder takes a released value first where one fits).
 */
function freshForDeterminants(metadata: Metadata, columns: readonly string[], scans: readonly ColumnScan[], k: number): void {
  for (const rule of metadata.rules ?? []) {
    if (rule.type !== "fixed_combinations" || rule.determinant === undefined) continue;
    const st = metadata.column_stats?.[rule.determinant];
    const at = columns.indexOf(rule.determinant);
    if (st?.type !== "categorical" || st.semantic || st.vocabulary || at < 0) continue;
    if (metadata.value_mappings?.[rule.determinant]?.[OTHER] === undefined) continue;
    const mapping = metadata.value_mappings[rule.determinant];
    const scan = scans[at];
    const values: string[] = [];
    const counts: number[] = [];
    scan.values.forEach((v, i) => {
      if (v !== "") (values.push(v), counts.push(scan.counts[i]));
    });
    const shape = (require("../semantic") as typeof import("../semantic")).pooledShape(values, counts, (v) => !Object.hasOwn(mapping, v), k);
    if (shape) st.semantic = { ...shape, stand_ins_first: true };
  }
}

/**
 * Mean words of a pooled value from which a catalog key reads as notes (sentences), not names
 * (`Team vs. Team (date)` is a name holding its own date; docs/generality.md, notes58).
 */
const NOTE_WORDS = 8;

/**
 * Gives a catalog key of long free text its own words (`../semantic`'s `vocabularyShape`, kind
 * `text`) as the writer of its pooled cells: a categorical key that pools values in at least
 * {@link FRESH_POOLED_SHARE} of its non-blank rows, the pooled values {@link NOTE_WORDS} words long
 * on average (a note per character, each written once). Its pooled cells are then new notes,
 * which no catalog entry holds (`../rules/catalog` leaves their rows as generated), rather than
 * stand-ins among the few released notes whose attributes and zeros they would copy.
 */
function freshForNoteKeys(metadata: Metadata, columns: readonly string[], scans: readonly ColumnScan[], k: number): void {
  for (const rule of metadata.rules ?? []) {
    if (rule.type !== "catalog" || (rule.key_columns ?? 1) !== 1) continue;
    const st = metadata.column_stats?.[rule.key];
    const mapping = metadata.value_mappings?.[rule.key];
    const at = columns.indexOf(rule.key);
    if (st?.type !== "categorical" || st.semantic || st.vocabulary || at < 0 || mapping?.[OTHER] === undefined) continue;
    const scan = scans[at];
    const values: string[] = [];
    const counts: number[] = [];
    let rows = 0;
    let pooledRows = 0;
    let pooledWords = 0;
    scan.values.forEach((v, i) => {
      if (v === "") return;
      values.push(v);
      counts.push(scan.counts[i]);
      rows += scan.counts[i];
      if (Object.hasOwn(mapping, v)) return;
      pooledRows += scan.counts[i];
      pooledWords += scan.counts[i] * v.trim().split(/\s+/).length;
    });
    if (pooledRows < FRESH_POOLED_SHARE * rows || pooledWords < NOTE_WORDS * pooledRows) continue;
    const shape = (require("../semantic") as typeof import("../semantic")).vocabularyShape(values, counts, k);
    if (shape?.kind === "text") st.semantic = shape;
  }
}

/**
 * Drops `column_stats.semantic` and a place `vocabulary` (fresh pooled cells, which rules read as
 * the pooled code) from a column in a fixed-combinations rule none of whose combinations holds its
 * pooled code: every such row would break the rule. A determinant keeps them (its rare values are
 * outside its rule), and so does a column whose determinant has a pooled code no combination holds:
 * a row of pooled determinant is outside the rule too (a film's pooled title beside its pooled
 * IMDb link), and the rows of a released determinant take the combination's value in the repair.
 */
function withoutUnfitFresh(metadata: Metadata): void {
  for (const rule of metadata.rules ?? []) {
    if (rule.type !== "fixed_combinations") continue;
    const d = rule.determinant === undefined ? -1 : rule.columns.indexOf(rule.determinant);
    const detPooled = d < 0 ? undefined : metadata.value_mappings?.[rule.columns[d]]?.[OTHER];
    const detOutside = detPooled !== undefined && !rule.combinations.some((t) => t[d] === detPooled);
    rule.columns.forEach((c, j) => {
      const st = metadata.column_stats?.[c];
      if (!pooledWritesFresh(st) || rule.determinant === c || detOutside) return;
      const pooled = metadata.value_mappings?.[c]?.[OTHER];
      if (pooled !== undefined && rule.combinations.some((t) => t[j] === pooled)) return;
      delete st!.semantic;
      if (isGazetteerVocabulary(st!.vocabulary)) delete st!.vocabulary;
    });
  }
}

/**
 * Extracts the Create Model `metadata` from a CSV file (streamed, header first) or a {@link Table}.
 * @throws DataError, one sentence naming line or column: unreadable, empty, ragged or malformed
 *   file, one column, an all-blank column, bad encoding, duplicate or empty header names.
 */
export async function extractMetadata(source: TableSource, opts: ExtractOptions = {}): Promise<Metadata> {
  return (await analyzeTable(source, opts)).metadata;
}
