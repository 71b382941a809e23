/**
 * Metadata extraction (DESIGN §2, SDK side): a table -> per-column code books, 1-way marginals,
 * column statistics and selected 2-way marginals, i.e. the `metadata` of Create Model.
 *
 * One streaming pass over the CSV (csv-parse, see `./csv`): per column, a dictionary of distinct
 * values with counts and the row's dictionary id (Int32 per row and column). Type inference,
 * numeric parsing and binning then work on distinct values; codes per row come from id -> code.
 * Memory: O(n · F · 4 bytes + distinct values); the file is never held as a string.
 *
 * Rules (values and header names are trimmed first):
 * - Missing: exactly the empty string. `?`, `NA`, `null` ... are ordinary categorical values.
 *   When a column has missing values, they get the LAST code and `value_mappings[f][""]`
 *   ({@link MISSING_KEY}) points to it. A column whose every value is missing is a DataError.
 * - Type: numerical when every non-missing value is a finite decimal number (`-1.5`, `3e4`,
 *   `.5`; not `0x10`, `Infinity`, `1,000`), else categorical.
 * - Categorical: one code per value, most frequent first (ties: by value, code-unit order). With
 *   more than `categoryCap` distinct values, the `categoryCap - 1` most frequent keep their code
 *   and all others share the last non-missing code, keyed {@link OTHER} (`__other__`) in
 *   `value_mappings` (a literal `__other__` value in the data joins that code too).
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
 *   mean, std` (population; simple-statistics) and `integer` (every value an integer).
 * - `empirical_probs[f]` = counts / n (the 1-way marginal).
 * - `marginals`: 2-way marginals of the pairs chosen by `selectPairs` (all pairs when they fit in
 *   `pairBudget` cells, else MI maximum spanning tree + strongest pairs), each `[f, g]` in table
 *   order, probs row-major `probs[i*K_g + j]`.
 * - With `domain` (already-discretized tables), the code books come from the domain instead of
 *   the rules above (`./domain`); with `privacy`, the marginals are measured with noise and the
 *   pairs chosen privately (`./dp`).
 */
import { mean, quantileSorted, standardDeviation } from "simple-statistics";
import type { ColumnStats, Metadata, PairMarginal } from "../types";
import { readTable, describeSource, type TableSource } from "./csv";
import { DataError } from "./errors";
import { checkDomainColumns, domainCodec, loadDomain, type DomainSource } from "./domain";
import { privateMetadata, type PrivacyOptions, type PrivacyReport } from "./dp";
import { jointCounts, mutualInformation, selectPairs, type CodeArray, type PairSelection } from "./marginals";

/** `value_mappings` key of the missing (blank) value. */
export const MISSING_KEY = "";
/** `value_mappings` key, and decoded value, of the code that pools rare categorical values. */
export const OTHER = "__other__";

/** Default caps and budget. */
export const DEFAULTS = {
  /** Codes per categorical column (including `__other__`, excluding the missing code). */
  categoryCap: 100,
  /** Codes per numerical column (excluding the missing code). */
  binCap: 32,
  /** Total cells of all 2-way marginals sent (sum of K_f * K_g over the selected pairs). */
  pairBudget: 200_000,
} as const;

/** Options of {@link extractMetadata} / {@link analyzeTable}. */
export interface ExtractOptions {
  /** Max codes per categorical column, >= 2. Default 100. */
  categoryCap?: number;
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
}

const NUMBER_RE = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** True when `s` (already trimmed) is a finite decimal number in the sense of the type rule. */
export function isNumeric(s: string): boolean {
  return NUMBER_RE.test(s) && Number.isFinite(Number(s));
}

class GrowInt32 {
  buf = new Int32Array(1024);
  length = 0;
  push(v: number): void {
    if (this.length === this.buf.length) {
      const next = new Int32Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.length++] = v;
  }
  view(): Int32Array {
    return this.buf.subarray(0, this.length);
  }
}

/** One column after the scan: its distinct values, their counts and each row's value id. */
export interface ColumnScan {
  name: string;
  /** Distinct values (trimmed) in order of first appearance; id = index. */
  values: string[];
  /** Rows per distinct value id. */
  counts: number[];
  /** 1-based file line (in-memory tables: row index + 2) where each distinct value first occurs. */
  firstLines: number[];
  /** Value id of each row (length n). */
  ids: Int32Array;
  /** Rows whose value is blank. */
  missing: number;
  /** Every non-blank value is numeric (and there is at least one). */
  numeric: boolean;
}

/** A scanned table. */
export interface ScannedTable {
  source: string;
  columns: string[];
  n: number;
  scans: ColumnScan[];
}

/**
 * Reads a table once and collects, per column, distinct values, counts and per-row value ids.
 * @throws DataError for the structural problems of `readTable` (file, header, ragged rows, UTF-8).
 */
export async function scanTable(source: TableSource, minColumns = 2): Promise<ScannedTable> {
  let dicts: Map<string, number>[] = [];
  let scans: {
    name: string;
    values: string[];
    counts: number[];
    firstLines: number[];
    ids: GrowInt32;
    missing: number;
    numeric: boolean;
  }[] = [];
  const n = await readTable(
    source,
    (header) => {
      dicts = header.map(() => new Map());
      scans = header.map((name) => ({ name, values: [], counts: [], firstLines: [], ids: new GrowInt32(), missing: 0, numeric: true }));
    },
    (values, line) => {
      for (let c = 0; c < values.length; c++) {
        const v = values[c];
        const s = scans[c];
        let id = dicts[c].get(v);
        if (id === undefined) {
          id = s.values.length;
          dicts[c].set(v, id);
          s.values.push(v);
          s.counts.push(0);
          s.firstLines.push(line);
          if (s.numeric && v !== "" && !isNumeric(v)) s.numeric = false;
        }
        s.counts[id]++;
        if (v === "") s.missing++;
        s.ids.push(id);
      }
    },
    { minColumns },
  );
  return {
    source: describeSource(source),
    columns: scans.map((s) => s.name),
    n,
    scans: scans.map((s) => ({
      name: s.name,
      values: s.values,
      counts: s.counts,
      firstLines: s.firstLines,
      ids: s.ids.view(),
      missing: s.missing,
      numeric: s.numeric && s.missing < n,
    })),
  };
}

/** The code book of one column, built from the real table. */
export interface ColumnCodec {
  name: string;
  kind: "categorical" | "numerical";
  /** Number of codes, including the missing code. */
  K: number;
  /** The missing code (K - 1), or -1 when the column had no missing values. */
  missingCode: number;
  /** The `__other__` code, or -1. */
  otherCode: number;
  /** `column_stats[f]`. */
  stats: ColumnStats;
  /** `value_mappings[f]`. */
  mapping: Record<string, number>;
  /** True when K and the codes come from a public domain (`./domain`), not from the rows. */
  fromDomain?: boolean;
  /**
   * Code of a (trimmed) value, or -1 when the value never occurred in the real column: a
   * category not seen (except `__other__` when that code exists), a blank when the column had
   * none, a non-number or a number outside [min, max] (quantile bins) or not among the point
   * values (point bins, compared by text and then by numeric value).
   */
  encode(value: string): number;
}

function rankCategories(scan: ColumnScan): number[] {
  const ids: number[] = [];
  scan.values.forEach((v, id) => {
    if (v !== "") ids.push(id);
  });
  ids.sort((a, b) => scan.counts[b] - scan.counts[a] || (scan.values[a] < scan.values[b] ? -1 : scan.values[a] > scan.values[b] ? 1 : 0));
  return ids;
}

function categoricalCodec(scan: ColumnScan, n: number, cap: number): ColumnCodec {
  let ranked = rankCategories(scan);
  const byValue = new Map<string, number>();
  const mapping: Record<string, number> = {};
  let otherCode = -1;
  if (ranked.length > cap) {
    ranked = ranked.filter((id) => scan.values[id] !== OTHER);
    otherCode = cap - 1;
    ranked.forEach((id, r) => byValue.set(scan.values[id], r < otherCode ? r : otherCode));
    ranked.slice(0, otherCode).forEach((id, r) => (mapping[scan.values[id]] = r));
    mapping[OTHER] = otherCode;
    byValue.set(OTHER, otherCode);
  } else {
    ranked.forEach((id, r) => {
      byValue.set(scan.values[id], r);
      mapping[scan.values[id]] = r;
    });
  }
  const Knm = otherCode >= 0 ? cap : ranked.length;
  const missingCode = scan.missing > 0 ? Knm : -1;
  if (missingCode >= 0) {
    mapping[MISSING_KEY] = missingCode;
    byValue.set(MISSING_KEY, missingCode);
  }
  return {
    name: scan.name,
    kind: "categorical",
    K: Knm + (missingCode >= 0 ? 1 : 0),
    missingCode,
    otherCode,
    stats: { type: "categorical", count: n - scan.missing, missing: scan.missing },
    mapping,
    encode: (v) => byValue.get(v) ?? -1,
  };
}

/**
 * Quantile edges with repeated-edge point bins: q_j = quantile(x, j/m), j = 0..m
 * (simple-statistics `quantileSorted`); a value that occupies two or more consecutive q_j
 * becomes a point bin [v, v]; other repeats are dropped.
 */
function repeatedQuantileEdges(sorted: ArrayLike<number>, m: number): number[] {
  const x = sorted as unknown as number[];
  const q: number[] = [];
  for (let j = 0; j <= m; j++) q.push(quantileSorted(x, j / m));
  const edges: number[] = [];
  for (let j = 0; j < q.length; ) {
    let k = j;
    while (k + 1 < q.length && q[k + 1] === q[j]) k++;
    edges.push(q[j]);
    if (k > j) edges.push(q[j]);
    j = k + 1;
  }
  if (edges.length === 1) edges.push(edges[0]);
  return edges;
}

/**
 * Bin edges of a numerical column with many distinct values (rule in the file header): heavy
 * values (mass >= 1/B) become point bins, the rest of the values get quantile bins, and the
 * largest combination with at most B bins is kept (fewer heavy points, then fewer quantile bins,
 * are tried until the bins fit).
 * @param sorted ascending values (length >= 1).
 * @param B      maximum number of bins (>= 1).
 * @returns non-decreasing edges, each value at most twice (twice = point bin), >= 2 entries.
 */
export function quantileEdges(sorted: ArrayLike<number>, B: number): number[] {
  const n = sorted.length;
  const runs: { v: number; c: number }[] = [];
  for (let i = 0; i < n; ) {
    let k = i;
    while (k + 1 < n && sorted[k + 1] === sorted[i]) k++;
    runs.push({ v: sorted[i], c: k - i + 1 });
    i = k + 1;
  }
  const heavy = runs
    .filter((r) => r.c * B >= n)
    .sort((a, b) => b.c - a.c || a.v - b.v)
    .slice(0, B - 1);
  for (let p = heavy.length; p >= 0; p--) {
    const points = new Set(heavy.slice(0, p).map((r) => r.v));
    const restLen = runs.reduce((s, r) => s + (points.has(r.v) ? 0 : r.c), 0);
    if (restLen === 0) continue;
    const rest = new Float64Array(restLen);
    let o = 0;
    for (const r of runs) if (!points.has(r.v)) rest.fill(r.v, o, (o += r.c));
    for (let m = B - p; m >= 1; m--) {
      const merged = [...repeatedQuantileEdges(rest, m), ...[...points].flatMap((v) => [v, v])].sort((a, b) => a - b);
      const edges = merged.filter((v, i) => i < 2 || !(merged[i - 1] === v && merged[i - 2] === v));
      if (edges.length - 1 <= B) return edges;
    }
  }
  return repeatedQuantileEdges(sorted, 1);
}

/** Bin of a value under {@link quantileEdges}' convention; -1 outside [e_0, e_last]. */
export function binOf(edges: readonly number[], points: ReadonlySet<number>, v: number): number {
  const last = edges.length - 1;
  if (!(v >= edges[0] && v <= edges[last])) return -1;
  if (points.has(v)) {
    // the point bin of v: the i with e_i = e_{i+1} = v
    let lo = 0;
    let hi = last;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (edges[mid] < v) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
  // number of edges <= v, minus one
  let lo = 0;
  let hi = edges.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (edges[mid] <= v) lo = mid + 1;
    else hi = mid;
  }
  return Math.min(lo - 1, last - 1);
}

/** The values that are point bins under the repeated-edge convention. */
export function pointValues(edges: readonly number[]): Set<number> {
  const s = new Set<number>();
  for (let i = 0; i + 1 < edges.length; i++) if (edges[i] === edges[i + 1]) s.add(edges[i]);
  return s;
}

function numericalCodec(scan: ColumnScan, n: number, binCap: number): ColumnCodec {
  const ids: number[] = [];
  const num: number[] = new Array(scan.values.length).fill(NaN);
  scan.values.forEach((v, id) => {
    if (v !== "") {
      ids.push(id);
      num[id] = Number(v);
    }
  });
  ids.sort((a, b) => num[a] - num[b] || (scan.values[a] < scan.values[b] ? -1 : scan.values[a] > scan.values[b] ? 1 : 0));
  const count = n - scan.missing;
  const sorted = new Float64Array(count);
  let p = 0;
  for (const id of ids) sorted.fill(num[id], p, (p += scan.counts[id]));
  const arr = sorted as unknown as number[];
  const stats: ColumnStats = {
    type: "numerical",
    count,
    missing: scan.missing,
    min: sorted[0],
    max: sorted[count - 1],
    mean: mean(arr),
    std: standardDeviation(arr),
    integer: ids.every((id) => Number.isInteger(num[id])),
  };
  const mapping: Record<string, number> = {};
  let Knm: number;
  let encodeValue: (v: string) => number;
  if (ids.length <= binCap) {
    const byText = new Map<string, number>();
    const byNumber = new Map<number, number>();
    ids.forEach((id, code) => {
      mapping[scan.values[id]] = code;
      byText.set(scan.values[id], code);
      if (!byNumber.has(num[id])) byNumber.set(num[id], code);
    });
    Knm = ids.length;
    encodeValue = (v) => {
      const c = byText.get(v);
      if (c !== undefined) return c;
      return isNumeric(v) ? (byNumber.get(Number(v)) ?? -1) : -1;
    };
  } else {
    const edges = quantileEdges(sorted, binCap);
    const points = pointValues(edges);
    stats.bin_edges = edges;
    Knm = edges.length - 1;
    encodeValue = (v) => (isNumeric(v) ? binOf(edges, points, Number(v)) : -1);
  }
  const missingCode = scan.missing > 0 ? Knm : -1;
  if (missingCode >= 0) mapping[MISSING_KEY] = missingCode;
  return {
    name: scan.name,
    kind: "numerical",
    K: Knm + (missingCode >= 0 ? 1 : 0),
    missingCode,
    otherCode: -1,
    stats,
    mapping,
    encode: (v) => (v === MISSING_KEY ? missingCode : encodeValue(v)),
  };
}

/**
 * Builds the code book of one scanned column.
 * @throws DataError when every value of the column is blank.
 */
export function buildCodec(scan: ColumnScan, n: number, opts: ExtractOptions = {}, source = "the table"): ColumnCodec {
  const categoryCap = opts.categoryCap ?? DEFAULTS.categoryCap;
  const binCap = opts.binCap ?? DEFAULTS.binCap;
  if (!(Number.isInteger(categoryCap) && categoryCap >= 2)) throw new RangeError("categoryCap must be an integer >= 2");
  if (!(Number.isInteger(binCap) && binCap >= 1)) throw new RangeError("binCap must be an integer >= 1");
  if (scan.missing === n) {
    throw new DataError(`${source}: column "${scan.name}" is blank in every row, so it carries no information; drop it.`, {
      column: scan.name,
      file: source === "the in-memory table" ? undefined : source,
    });
  }
  return scan.numeric ? numericalCodec(scan, n, binCap) : categoricalCodec(scan, n, categoryCap);
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

/** An encoded table with its code books. */
export interface EncodedTable {
  columns: string[];
  n: number;
  codecs: ColumnCodec[];
  /** `codes[f][r]` in [0, codecs[f].K). */
  codes: CodeArray[];
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
 */
export async function encodeTableWithScan(
  source: TableSource,
  opts: ExtractOptions = {},
): Promise<{ encoded: EncodedTable; scanned: ScannedTable }> {
  const domain = opts.domain === undefined ? undefined : await loadDomain(opts.domain);
  const scanned = await scanTable(source, 2);
  if (domain) checkDomainColumns(scanned.columns, domain, scanned.source);
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
  let scratch: Float64Array | undefined;
  const selection = selectPairs(
    cards,
    (i, j) => {
      scratch = jointCounts(codes[i], cards[i], codes[j], cards[j], scratch && scratch.length >= cards[i] * cards[j] ? scratch : undefined);
      return mutualInformation(scratch, cards[i], cards[j]);
    },
    pairBudget,
  );
  metadata.marginals = selection.pairs.map(([i, j]): PairMarginal => {
    const c = jointCounts(codes[i], cards[i], codes[j], cards[j]);
    return { features: [enc.columns[i], enc.columns[j]], probs: Array.from(c, (v) => v / n) };
  });
  return { metadata, selection };
}

/**
 * Full extraction with everything it was computed from (codes, code books, pair selection).
 * With `opts.privacy` the marginals are measured privately (`./dp`: MST's steps under zCDP).
 * @throws DataError for bad input (see {@link encodeTable}); RangeError for `privacy` without
 *         `domain` or with an invalid epsilon/delta.
 */
export async function analyzeTable(source: TableSource, opts: ExtractOptions = {}): Promise<Analysis> {
  if (opts.privacy !== undefined && opts.domain === undefined) {
    throw new RangeError(
      "privacy needs a domain: without one, the code book (categories, quantile bin edges, min/max) is computed from the rows and sent without noise.",
    );
  }
  const enc = await encodeTable(source, opts);
  if (opts.privacy !== undefined) return { ...enc, ...privateMetadata(enc, opts.privacy, opts.pairBudget) };
  return { ...enc, ...buildMetadata(enc, opts.pairBudget) };
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
