/**
 * The column kinds, one module each, and the dispatch by kind that the stages call:
 *
 * | kind        | scan -> codec                    | decode                 | typed (Arrow)       |
 * |-------------|----------------------------------|------------------------|---------------------|
 * | categorical | `categoricalCodec`, `blankCodec` | `mappingDecoder`       | Utf8                |
 * | numerical   | `numericalCodec`                 | `binDecoder` / mapping | Int64 or Float64    |
 * | datetime    | `datetimeCodec`                  | `binDecoder` / mapping | Date32 or Timestamp |
 * | id          | `idCodec`                        | `idDecoder`            | Utf8                |
 *
 * `./bins`: what numerical and datetime share; `./common`: the contract of every kind. Callers:
 * `../metadata/metadata` ({@link codecFor}), `../generate/decode` ({@link decoderFor},
 * {@link binnedDecoder}), `../io/typed` ({@link arrowTypeOf}), `../generate/seeded`
 * ({@link valueReaderOf}), `synthd fit` ({@link describeColumns}).
 */
import type { ColumnKind, ColumnStats, Metadata, PublicVocabulary } from "../../contract";
import type { DatetimeFormat } from "../metadata/datetime";
import { binDecoder, type Lattice } from "./bins";
import { categoricalCodec, describeCategorical, mappingDecoder } from "./categorical";
import { missingCodeOf, OTHER, type ColumnCodec, type ColumnScan, type ColumnType, type FeatureDecoder, type ValueRange } from "./common";
import { clockGrainDecoder, datetimeCodec, datetimeColumnType, datetimeLattice, datetimeReader, describeDatetime } from "./datetime";
import { describeId, idCodec, idDecoder } from "./id";
import type { SemanticKind } from "../semantic";
import { describeNumerical, numberLattice, numericalCodec, numericalColumnType, parseNumber } from "./numerical";
import { grainDecoder } from "./numerical-grain";
import { NumberFormat } from "./number-format";
import { heldBins, withCellRanges, type HeldBins } from "./cell-ranges";

export * from "./common";
export { binOf, pointValues, quantileEdges, seedBin } from "./bins";
export { blankCodec, FRESH_POOLED_SHARE, pooledWritesFresh } from "./categorical";
export { datetimeBound, datetimeParser } from "./datetime";
export { isRowCounter, looksLikeCodeName, looksLikeIdName } from "./id";
export { NumberFormat, inferNumberFormat } from "./number-format";
export { numberBound, stepOf, int64Of, float64Of } from "./numerical";

/** What {@link codecFor} needs besides the scan (`../metadata/metadata`'s options, already checked). */
export interface CodecParams {
  /** Categorical: at most this many codes. */
  categoryCap: number;
  /** Numerical and datetime: at most this many bins. */
  binCap: number;
  /** Categorical: rows a value needs for a code of its own (k). */
  rareThreshold: number;
  /** Datetime: the column's format (`../metadata/metadata`'s kind choice). */
  datetime?: DatetimeFormat;
  /** How messages name the table. */
  source: string;
  /** Id: the semantic kind the user declared (`ColumnOverride.semantic`). Default: recognised. */
  semantic?: SemanticKind;
  /** Categorical: the public vocabulary of its values (`../semantic/vocabulary`), if any. */
  vocabulary?: PublicVocabulary;
}

/**
 * The code book of a scanned column of kind `kind` (not all blank: that is `blankCodec`).
 * @returns undefined only for a categorical column with no value seen `rareThreshold` times.
 * @throws DataError when a datetime value does not parse in the format (line, value).
 */
export function codecFor(kind: ColumnKind, scan: ColumnScan, n: number, p: CodecParams): ColumnCodec | undefined {
  switch (kind) {
    case "numerical":
      return numericalCodec(scan, n, p.binCap, p.rareThreshold);
    case "datetime":
      return datetimeCodec(scan, n, p.binCap, p.datetime!, p.source);
    case "id":
      return idCodec(scan, n, p.rareThreshold, p.semantic);
    case "categorical":
      return categoricalCodec(scan, n, p.categoryCap, p.rareThreshold, p.vocabulary);
  }
}

/** The lattice of a binned column: a datetime's, else a number's, else undefined. */
export function latticeOf(stats: ColumnStats): Lattice | undefined {
  return datetimeLattice(stats) ?? numberLattice(stats);
}

/**
 * Decoder of a quantile-binned feature over its lattice (`./bins`' `binDecoder`; with a `grain`,
 * `./numerical-grain`'s `grainDecoder`, for datetimes `./datetime`'s `clockGrainDecoder`), drawing
 * inside its row's cell range with `cell_ranges` (`./cell-ranges`); `range`, `codes` and
 * `weights` as `binDecoder`'s; `held` as `withCellRanges`' (per partner code, the bins real rows
 * hold beside it: {@link cellPartnerBins}).
 */
export function binnedDecoder(
  f: string,
  K: number,
  edges: readonly number[],
  missingCode: number | undefined,
  stats: ColumnStats,
  range?: ValueRange,
  held?: readonly (HeldBins | undefined)[],
): FeatureDecoder & { codes: number[]; weights: number[] } {
  const base = rangeDecoder(f, K, edges, missingCode, stats, range);
  return withCellRanges(base, stats, edges, missingCode, (r) => rangeDecoder(f, K, edges, missingCode, stats, r), range, held);
}

/**
 * Real rows per held bin a partner code needs, on average, before its bins count as its range: a
 * code of about two rows per bin (a country's population over 11 years) holds its bins by chance,
 * and moving values into them would copy its few rows.
 */
export const MIN_ROWS_PER_HELD_BIN = 3;

/**
 * Per code of the `cell_ranges` partner of binned column `f`, the bins of f the metadata's 2-way
 * marginal of the pair holds beside it (ascending, with their shares); a code whose real rows
 * average fewer than {@link MIN_ROWS_PER_HELD_BIN} per held bin, and the partner's pooled code
 * (rows of many values), hold none. Undefined without cell ranges or without the pair's marginal.
 */
export function cellPartnerBins(meta: Metadata, f: string): HeldBins[] | undefined {
  const stats = meta.column_stats?.[f];
  const g = stats?.type === "numerical" || stats?.type === "datetime" ? stats.cell_ranges?.column : undefined;
  const edges = stats?.type === "numerical" || stats?.type === "datetime" ? stats.bin_edges : undefined;
  if (g === undefined || !edges) return undefined;
  const m = (meta.marginals ?? []).find((x) => x.features.includes(f) && x.features.includes(g) && f !== g);
  const [Kg, Kf] = [meta.cardinalities[g], meta.cardinalities[f]];
  if (!m || !(Kg >= 1) || !(Kf >= 1)) return undefined;
  const held = heldBins(m.probs, Kg, Kf, m.features[0] === g, edges.length - 1);
  if (!held) return undefined;
  const rows = stats!.count + stats!.missing;
  const pooled = meta.value_mappings?.[g]?.[OTHER];
  held.forEach((h, a) => {
    let share = 0;
    for (const w of h.weights) share += w;
    if (a === pooled || !(share * rows >= MIN_ROWS_PER_HELD_BIN * h.bins.length)) held[a] = { bins: [], weights: [] };
  });
  return held;
}

/** {@link binnedDecoder} without cell ranges. */
function rangeDecoder(
  f: string,
  K: number,
  edges: readonly number[],
  missingCode: number | undefined,
  stats: ColumnStats,
  range?: ValueRange,
): FeatureDecoder & { codes: number[]; weights: number[] } {
  const plain = binDecoder(f, K, edges, missingCode, stats, latticeOf(stats), range);
  if (!stats.grain) return plain;
  if (stats.type === "datetime") return clockGrainDecoder(f, K, edges, missingCode, stats, plain, range) ?? plain;
  return (stats.type === "numerical" ? grainDecoder(f, K, edges, missingCode, stats, plain, range) : undefined) ?? plain;
}

/**
 * The decoder of feature `f` by its `column_stats[f]`: an id with a shape -> `./id`; `bin_edges`
 * -> {@link binnedDecoder}; anything else (categorical, point bins, no stats) -> its code book.
 */
export function decoderFor(meta: Metadata, f: string): FeatureDecoder {
  const K = meta.cardinalities[f];
  const stats = meta.column_stats?.[f];
  const missingCode = missingCodeOf(meta, f);
  if (stats?.type === "id" && stats.id_shape) return idDecoder(f, K, stats, missingCode, meta.features);
  const edges = stats?.type === "numerical" || stats?.type === "datetime" ? stats.bin_edges : undefined;
  if (edges && edges.length >= 2) return binnedDecoder(f, K, edges, missingCode, stats!, undefined, cellPartnerBins(meta, f));
  return mappingDecoder(meta, f);
}

/**
 * A column's output type: numerical Int64/Float64, datetime with a format Date32/Timestamp (format
 * compiled), else Utf8. @throws RangeError when a datetime `format` cannot be compiled.
 */
export function arrowTypeOf(stats: ColumnStats | undefined): { type: ColumnType; datetime?: DatetimeFormat; number?: NumberFormat; missingText?: string } {
  if (stats?.type === "numerical") return { type: numericalColumnType(stats), ...(stats.number_format ? { number: new NumberFormat(stats.number_format) } : {}) };
  if (stats?.type === "datetime" && stats.format) {
    return { ...datetimeColumnType(stats.format), ...(stats.missing_text !== undefined ? { missingText: stats.missing_text } : {}) };
  }
  return { type: "string" };
}

/**
 * Seeded generation's reader of a numerical or datetime column (`parse` text -> number, `show`
 * for messages); undefined for other kinds and a datetime without a format.
 */
export function valueReaderOf(
  stats: ColumnStats | undefined,
): { parse: (text: string) => number | undefined; show: (x: number) => string } | undefined {
  if (stats?.type === "numerical" && stats.number_format) {
    const format = new NumberFormat(stats.number_format);
    return { parse: (t) => format.parse(t), show: (x) => format.write(String(x)) };
  }
  if (stats?.type === "numerical") return { parse: parseNumber, show: String };
  if (stats?.type === "datetime" && stats.format) return datetimeReader(stats.format, stats.offset ?? 0);
  return undefined;
}

/** `synthd fit`'s table: a header, then per column name, kind, codes and the kind's details. */
export function describeColumns(codecs: readonly ColumnCodec[]): string[] {
  const rows = codecs.map((c) => {
    const st = c.stats;
    let detail = "";
    if (c.kind === "datetime" && c.datetime) detail = describeDatetime(st, c.datetime);
    else if (c.kind === "numerical") detail = describeNumerical(st);
    else if (c.kind === "categorical") detail = describeCategorical(c);
    else if (c.kind === "id" && st.id_shape) detail = describeId(st);
    if (st.cell_ranges) detail += `, ranges of ${st.cell_ranges.cells.length} (${st.cell_ranges.column}, bin) cells`;
    if (st.missing > 0 && st.count > 0) detail += `${detail ? "; " : ""}${st.missing} blank`;
    return [c.name, c.kind, String(c.K), detail];
  });
  const header = ["column", "kind", "codes", "details"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  return [header, ...rows].map((r) => r.map((v, i) => (i < 3 ? v.padEnd(widths[i]) : v)).join("  ").trimEnd());
}
