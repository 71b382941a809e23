/**
 * Metadata extraction, on the client (raw rows never leave it): a table -> per-column code books,
 * 1-way marginals, column statistics and selected 2-way marginals, i.e. the `metadata` of Create Model.
 *
 * One streaming pass over the CSV (`./table-scan`; csv-parse, see `../io/csv`): per column, a
 * dictionary of distinct values with counts and the row's dictionary id (Int32 per row and
 * column). Type inference, numeric parsing and binning then work on distinct values; codes per row
 * come from id -> code.
 * Memory: O(n · F · 4 bytes + distinct values); the file is never held as a string.
 *
 * Each kind's code book is built in its own module (`./columns/<kind>.ts`, dispatched by
 * `../columns`' `codecFor`); this module scans, chooses the kind (`chooseKind`), encodes, and builds
 * the marginals.
 *
 * Rules (values and header names are trimmed first; docs/api.md "Column kinds" for the user's view):
 * - Missing: exactly the empty string. `?`, `NA`, `null` ... are ordinary categorical values.
 *   When a column has missing values, they get the LAST code and `value_mappings[f][""]`
 *   ({@link MISSING_KEY}) points to it. A column whose every value is missing keeps one code, the
 *   missing code, and decodes blank in every row.
 * - Kind (`opts.columns` overrides it, checked against the values): `numerical` when every
 *   non-missing value is a finite decimal number (`-1.5`, `3e4`, `.5`; not `0x10`, `Infinity`,
 *   `1,000`, nor `00501`: a leading zero marks a code); but integers with at least
 *   {@link DEFAULTS}.idMinRows values, {@link DEFAULTS}.idDistinctShare of them distinct, under a
 *   name that reads as an identifier's ({@link looksLikeIdName}) are `id`. Otherwise `datetime`
 *   when one format of `./datetime` parses every distinct value (parsing 90% or more but not all
 *   is a DataError naming line and value); `id` for text as distinct as above; else `categorical`.
 * - Categorical: one code per value seen at least `rareThreshold` (k, default 2) times, most
 *   frequent first (ties: by value, code-unit order), at most `categoryCap` codes; every other
 *   value shares the pooled code keyed {@link OTHER} (`__other__`) in `value_mappings` (a
 *   literal `__other__` value in the data joins that code too). No value reaching k: an `id`
 *   when inferred, a DataError when the user declared the column categorical.
 * - Id: one code (plus the missing code), `column_stats[f].id_shape` from `./identifier`, no
 *   values sent and no 2-way marginals.
 * - Datetime: values parsed to seconds since the Unix epoch and binned as numbers below;
 *   `column_stats` adds `format`, `granularity` and, for formats with an offset, `offset`.
 * - Numerical with at most `binCap` distinct values: one point bin per distinct value (by its
 *   text), ascending by value; `value_mappings` maps each value's text to its code; no
 *   `bin_edges`. Decoding gives back the exact text.
 * - Numerical with more distinct values: at most B = binCap bins. A value holding at least 1/B
 *   of the rows (e.g. the 0 of capital-gain, the 40 of hours-per-week) gets a point bin, written
 *   as a repeated edge [v, v]; the other values get quantile bins: q_j = quantile(rest, j/m),
 *   j = 0..m (simple-statistics `quantileSorted`), m = B minus the point bins, where a value
 *   spanning two or more q_j becomes a point bin too and other repeated q_j are dropped. When
 *   points falling between quantile edges push the count over B, m (then the number of heavy
 *   points) is lowered until it fits. So `bin_edges` is non-decreasing, each value at most
 *   twice, and has K_numeric + 1 entries:
 *     bin i = {e_i}                when e_i = e_{i+1} (point bin),
 *     bin i = [e_i, e_{i+1})        otherwise, without e_i when e_i is a point bin, and with
 *                                   e_{i+1} when i is the last bin.
 *   `value_mappings[f]` then holds only the missing key (if any): raw values are not sent.
 * - `column_stats[f]`: `{type, count (non-missing rows), missing}`; numerical adds `min, max,
 *   mean, std` (population; simple-statistics), `integer` (every value an integer),
 *   `decimals` (the most decimals any value is written with), `fixed_decimals` (every value
 *   written with exactly `decimals` > 0 decimals), `min_decimals` (the fewest, when some values
 *   have more) and, with quantile bins, `step` (every value a whole multiple of it, coarser than
 *   10^-decimals: exact gcd, {@link stepOf}) and `grain` (rounding mixtures, fractional grains and
 *   decimal counts with their shares per bin: `../columns/numerical-grain`). Datetime adds
 *   the `granularity`, `month` or `year` when every value is a month start or 1 January.
 * - `empirical_probs[f]` = counts / n (the 1-way marginal).
 * - `marginals`: 2-way marginals of the pairs chosen by `selectPairs` (all pairs when they fit in
 *   `pairBudget` cells, else MI maximum spanning tree + strongest pairs), each `[f, g]` in table
 *   order, probs row-major `probs[i*K_g + j]`.
 * - With `domain` (already-discretized tables), the code books come from the domain instead of
 *   the rules above (`./domain`); with `privacy`, the marginals are measured with noise and the
 *   pairs chosen privately (`./dp`).
 */
import type { ColumnKind, Metadata, PairMarginal } from "../../contract";
import { DatetimeFormat, inferDatetimeFormat } from "./datetime";
import type { SemanticKind } from "../semantic";
import { fileOfDescription, type TableSource } from "../io/csv";
import { scanTable } from "./table-scan";
import { DataError } from "../errors";
import { checkDomainColumns, domainCodec, loadDomain, type DomainSource } from "./domain";
import { privateMetadata, type PrivacyOptions, type PrivacyReport } from "./dp";
import { jointCounts, mutualInformation, selectPairs, type CodeArray, type PairSelection } from "./marginals";
import { detectRules, type RuleOptions } from "../rules/detect";
import { blankCodec, codecFor, decimalsOf, isNumeric, looksLikeIdName, MISSING_KEY, OTHER, type ColumnCodec, type ColumnScan } from "../columns";

// The kinds' shared names stay importable from here (evaluation, the rules and the reports import them from this module).
export { decimalsOf, isNumeric, MISSING_KEY, OTHER, type ColumnCodec, type ColumnScan };
export { DEFAULTS, type EncodedTable, type ScannedTable } from "./encoded";
import { DEFAULTS, type EncodedTable, type ScannedTable } from "./encoded";


/** A user's choice of a column's kind (and, for datetime, its format in luxon tokens). */
export interface ColumnOverride {
  type: ColumnKind;
  /** Datetime only: the format (luxon tokens, e.g. `yyyyMMdd` or `dd/MM/yyyy HH:mm`). Default: inferred. */
  format?: string;
  /**
   * Id only, text values: what they are (`email`, `first_name`, `title` ...; docs/api.md "Column
   * kinds"), instead of the recognised kind. Default: recognised from the name and values.
   */
  semantic?: SemanticKind;
}

/** Options of {@link extractMetadata} / {@link analyzeTable}. */
export interface ExtractOptions {
  /** Max codes per categorical column, >= 2. Default 1,000. */
  categoryCap?: number;
  /** Rows a categorical value needs for a code of its own, >= 1. Default 2 (see {@link DEFAULTS}). */
  rareThreshold?: number;
  /**
   * Per column name, the kind to use instead of the inferred one. A name the table lacks, or a
   * datetime format that does not parse every value, is a DataError.
   */
  columns?: Record<string, ColumnOverride>;
  /** Max bins per numerical column, >= 1. Default 32. */
  binCap?: number;
  /** Max total cells of the 2-way marginals, >= 0 (0 sends none). Default 200,000. */
  pairBudget?: number;
  /**
   * The table is already discretized: every column is an integer code in [0, K) with K from this
   * domain (Private-PGM's `{"column": K}` format, inline or as a JSON file path). Rules in
   * `./domain`; the caps above do not apply. Default: none (raw-table extraction).
   */
  domain?: DomainSource;
  /**
   * Differential privacy (`./dp`): every marginal sent is measured with Gaussian noise under
   * rho-zCDP, MST's measure/compress/select steps. Needs `domain` (a raw table's code book is
   * itself computed from the rows). Default: none (exact marginals).
   */
  privacy?: PrivacyOptions;
  /** CSV field delimiter (`,`, `\t`, `;`, `|`). Default: detected from the file's first lines (`../io/csv`). */
  delimiter?: string;
  /** CSV text encoding (`utf-8`, `latin1`, `windows-1252`, ...). Default UTF-8, checked strictly (`../io/csv`). */
  encoding?: string;
  /**
   * Row rules (`../rules/detect`, docs/api.md "Row rules"): detect the rules the rows keep (default),
   * drop some by id, declare others. Raw tables only: with `domain` or `privacy` nothing is detected
   * (rules read from raw rows are not private) and declaring a rule is a RangeError.
   */
  rules?: RuleOptions;
}

/** A column's kind, from an override or inferred (rules in the file header). */
interface KindChoice {
  kind: ColumnKind;
  datetime?: DatetimeFormat;
}

function chooseKind(scan: ColumnScan, n: number, source: string, override: ColumnOverride | undefined): KindChoice {
  const file = fileOfDescription(source);
  const nonBlank = n - scan.missing;
  const distinct = scan.values.length - (scan.missing > 0 ? 1 : 0);
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
  const idLike = nonBlank >= DEFAULTS.idMinRows && distinct >= DEFAULTS.idDistinctShare * nonBlank;
  if (scan.numeric) {
    // Distinct integers are as often measurements (weights, prices in cents) as keys: the name decides.
    const integer = texts.every((v) => /^[+-]?\d+$/.test(v) && Number.isSafeInteger(Number(v)));
    return { kind: integer && idLike && looksLikeIdName(scan.name) ? "id" : "numerical" };
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
 * Builds the code book of one scanned column: its kind (override or inference) and codes.
 * A column blank in every row gets one code (blank) and is written blank (`blankCodec`).
 * @throws DataError when an override does not fit the values (a blank column declared anything
 *         but categorical included), or when a datetime column holds a value that does not parse
 *         (line, value).
 */
export function buildCodec(
  scan: ColumnScan,
  n: number,
  opts: ExtractOptions = {},
  source = "the table",
): ColumnCodec {
  const categoryCap = opts.categoryCap ?? DEFAULTS.categoryCap;
  const binCap = opts.binCap ?? DEFAULTS.binCap;
  const k = opts.rareThreshold ?? DEFAULTS.rareThreshold;
  if (!(Number.isInteger(categoryCap) && categoryCap >= 2)) throw new RangeError("categoryCap must be an integer >= 2");
  if (!(Number.isInteger(binCap) && binCap >= 1)) throw new RangeError("binCap must be an integer >= 1");
  if (!(Number.isInteger(k) && k >= 1)) throw new RangeError("rareThreshold must be an integer >= 1");
  const override = opts.columns?.[scan.name];
  if (scan.missing === n) return blankCodec(scan, n, k, override?.type, source);
  const choice = chooseKind(scan, n, source, override);
  const codec = codecFor(choice.kind, scan, n, { categoryCap, binCap, rareThreshold: k, datetime: choice.datetime, source, semantic: override?.semantic });
  if (codec) return codec;
  // A categorical column with no value reaching k, so nothing could be released: an inferred
  // column (a short table of unique names) is written fresh, as an identifier's; a declared one
  // is the user's call.
  if (!override) return codecFor("id", scan, n, { categoryCap, binCap, rareThreshold: k, source })!;
  throw new DataError(
    `${source}: column "${scan.name}" has no value that occurs at least ${k} times, so no value of it could appear in ` +
      `synthetic data; treat it as an identifier (columns: {"${scan.name}": {"type": "id"}}) or lower rareThreshold.`,
    { column: scan.name, file: fileOfDescription(source) },
  );
}

/**
 * Checks `opts.columns` against a table's header.
 * @throws DataError naming an override whose column the table lacks, or whose type is unknown.
 */
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
 * Encodes a scanned table with code books (possibly built from another table).
 * @param unseen per codec, the code written for values it does not know (`encode` = -1); the
 *               caller sizes the code space accordingly (evaluation uses K_f, one extra code).
 *               Without it, an unknown value is an internal error.
 * @returns one code array per codec, in codec order; columns are matched by name.
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
}

/**
 * Scans and encodes a table (see the file header for the rules; with `opts.domain`, `./domain`).
 * @throws DataError (bad file, header, rows, UTF-8, all-blank column, fewer than 2 columns; with
 *         a domain: bad domain, columns not matching it, a value that is not a code in [0, K)).
 */
export async function encodeTable(source: TableSource, opts: ExtractOptions = {}): Promise<EncodedTable> {
  return (await encodeTableWithScan(source, opts)).encoded;
}

/**
 * {@link encodeTable} that also returns the scan (distinct values and per-row value ids), for
 * callers that need the raw values too (evaluation's exact-copy count).
 * @throws as {@link encodeTable}; RangeError, before anything is read, when both `columns` and
 *   `domain` are given.
 */
export async function encodeTableWithScan(
  source: TableSource,
  opts: ExtractOptions = {},
): Promise<{ encoded: EncodedTable; scanned: ScannedTable }> {
  if (opts.domain !== undefined && opts.columns !== undefined) {
    throw new RangeError("columns (kind overrides) and domain cannot be combined: with a domain every column is a categorical code.");
  }
  const domain = opts.domain === undefined ? undefined : await loadDomain(opts.domain);
  const scanned = await scanTable(source, 2, opts);
  if (domain) checkDomainColumns(scanned.columns, domain, scanned.source);
  else checkOverrides(scanned.columns, opts, scanned.source);
  const codecs = scanned.scans.map((s) =>
    domain ? domainCodec(s, scanned.n, domain[s.name], scanned.source) : buildCodec(s, scanned.n, opts, scanned.source),
  );
  const codes = encodeScanned(scanned, codecs);
  return { encoded: { columns: scanned.columns, n: scanned.n, codecs, codes }, scanned };
}

/**
 * 1-way and selected 2-way marginals of an encoded table, as Create Model `metadata`.
 * @param pairBudget max total cells of the 2-way marginals (default 200,000).
 */
export function buildMetadata(enc: EncodedTable, pairBudget: number = DEFAULTS.pairBudget): { metadata: Metadata; selection: PairSelection } {
  if (!(pairBudget >= 0)) throw new RangeError("pairBudget must be >= 0");
  const { codecs, codes, n } = enc;
  const cards = codecs.map((c) => c.K);
  const metadata: Metadata = {
    features: [...enc.columns],
    cardinalities: {},
    empirical_probs: {},
    column_stats: {},
    value_mappings: {},
  };
  codecs.forEach((codec, f) => {
    const counts = new Float64Array(codec.K);
    const a = codes[f];
    for (let r = 0; r < n; r++) counts[a[r]]++;
    metadata.cardinalities[codec.name] = codec.K;
    metadata.empirical_probs[codec.name] = Array.from(counts, (v) => v / n);
    metadata.column_stats![codec.name] = codec.stats;
    metadata.value_mappings![codec.name] = codec.mapping;
  });
  // Identifiers have no 2-way marginals: pairs are chosen among the other features only.
  const modelled = codecs.map((c, f) => (c.kind === "id" ? -1 : f)).filter((f) => f >= 0);
  let scratch: Float64Array | undefined;
  const sub = selectPairs(
    modelled.map((f) => cards[f]),
    (a, b) => {
      const [i, j] = [modelled[a], modelled[b]];
      scratch = jointCounts(codes[i], cards[i], codes[j], cards[j], scratch && scratch.length >= cards[i] * cards[j] ? scratch : undefined);
      return mutualInformation(scratch, cards[i], cards[j]);
    },
    pairBudget,
  );
  const remap = ([a, b]: [number, number]): [number, number] => [modelled[a], modelled[b]];
  const selection: PairSelection = { pairs: sub.pairs.map(remap), tree: sub.tree.map(remap), cells: sub.cells };
  metadata.marginals = selection.pairs.map(([i, j]): PairMarginal => {
    const c = jointCounts(codes[i], cards[i], codes[j], cards[j]);
    return { features: [enc.columns[i], enc.columns[j]], probs: Array.from(c, (v) => v / n) };
  });
  return { metadata, selection };
}

/**
 * Full extraction with everything it was computed from (codes, code books, pair selection).
 * With `opts.privacy` the marginals are measured privately (`./dp`: MST's steps under zCDP).
 * On a raw table (no `domain`, no `privacy`) it also sets `metadata.rules` (when any): the row
 * rules `../rules/detect` finds and those `opts.rules` declares.
 * @throws DataError for bad input (see {@link encodeTable}) and for a declared rule the rows break
 *         or that names a missing column or one of the wrong kind; RangeError for `privacy` without
 *         `domain` or with an invalid epsilon/delta, and for declared rules with `domain` or `privacy`.
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
  const { encoded: enc, scanned } = await encodeTableWithScan(source, opts);
  // Rules come from the raw rows, before any request; a declared rule the rows break throws here.
  const rules = raw ? detectRules(scanned, enc, { ...opts.rules, rareThreshold: opts.rareThreshold }) : [];
  if (opts.privacy !== undefined) return { ...enc, ...privateMetadata(enc, opts.privacy, opts.pairBudget) };
  const built = buildMetadata(enc, opts.pairBudget);
  if (rules.length > 0) built.metadata.rules = rules;
  withoutUnfitFresh(built.metadata);
  return { ...enc, ...built };
}

/**
 * Fresh values only where the rules allow them: a categorical column with `column_stats.semantic`
 * writes its pooled cells as fresh values, which the rules read as the pooled code; a
 * fixed-combinations rule without a determinant none of whose combinations holds the column's
 * pooled code would break in every such row, so the column loses `semantic` and its pooled cells
 * are written as released values that the rule can keep. A determinant keeps it: its rare values
 * are outside its rule, and its fresh values start with a word that fits the row
 * (`../columns/categorical`). Mutates `metadata.column_stats`.
 */
function withoutUnfitFresh(metadata: Metadata): void {
  for (const rule of metadata.rules ?? []) {
    if (rule.type !== "fixed_combinations") continue;
    rule.columns.forEach((c, j) => {
      const st = metadata.column_stats?.[c];
      if (st?.type !== "categorical" || !st.semantic) return;
      const pooled = metadata.value_mappings?.[c]?.[OTHER];
      // A determinant's rare values are outside its rule; its fresh values take a released value's
      // first word that fits the row (`../columns/categorical`).
      if (rule.determinant === c) return;
      if (pooled === undefined || !rule.combinations.some((t) => t[j] === pooled)) delete st.semantic;
    });
  }
}

/**
 * Extracts the Create Model `metadata` from a CSV file (streamed) or an in-memory table.
 * @param source path of a UTF-8 CSV whose first row is the header, or a {@link Table}.
 * @returns `{features, cardinalities, empirical_probs, column_stats, value_mappings, marginals}`.
 * @throws DataError with one sentence for: missing/unreadable/empty file, header only, one column,
 *         ragged row (names the line), all-blank column (names it), non-UTF-8 bytes (byte offset
 *         and line), duplicate or empty header names, malformed quoting.
 */
export async function extractMetadata(source: TableSource, opts: ExtractOptions = {}): Promise<Metadata> {
  return (await analyzeTable(source, opts)).metadata;
}
