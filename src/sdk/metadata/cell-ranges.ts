/**
 * `column_stats[f].cell_ranges` (docs/api.md "Column kinds"): for a quantile-binned column B and
 * the value-coded column A that the 2-way selection pairs with it most informatively, the real
 * rows' [min, max] of B per (A code, B bin) cell held by at least k rows, so a synthetic value drawn
 * inside its bin also stays inside the range its row's A value has there (a bin spanning two
 * categories' ranges no longer gives one category the other's values).
 */
import type { Metadata } from "../../contract";
import type { ColumnCodec } from "../columns";
import type { EncodedTable, ScannedTable } from "./encoded";
import { mutualInformation, type PairSelection } from "./marginals";

/** Most cells one column releases (the contract's bound); the cells of most rows are kept. */
export const MAX_CELL_RANGES = 1024;
/** Most cells all columns of a table release together, so wide tables stay within the metadata size limit. */
export const MAX_TABLE_CELL_RANGES = 16384;

/**
 * Sets `cell_ranges` on the `metadata.column_stats` of each numerical or datetime column B with
 * `bin_edges` that a selected pair joins to a column A without bins (categorical, or point bins;
 * never an id). Among such partners with a released cell, the one B's bins tell most about:
 * the largest uncertainty coefficient I(A; B) / H(A) (Theil's U, from the pair's 2-way
 * marginal), so categories whose values lie apart along B. Raw I(A; B) would favour a partner of
 * many values (iowa-electricity's 17 years over its 3 sources) whose cells hold too few rows to
 * release anything. A partner must depend on B beyond chance ({@link dependent}).
 * @param rows the raw rows read (the whole table, or the extraction's sample of it), with their
 *   codes `encoded.codes` (same rows, same order) under `encoded.codecs`.
 * @param k the rare threshold: a cell of fewer rows releases nothing.
 * Never throws on data; a value that does not parse as the column's number is left out.
 */
export function setCellRanges(rows: ScannedTable, encoded: EncodedTable, selection: PairSelection, metadata: Metadata, k: number): void {
  const { codecs } = encoded;
  const valueCoded = (f: number): boolean => codecs[f].kind !== "id" && !codecs[f].stats.bin_edges && codecs[f].K >= 2;
  const binned = (f: number): boolean => (codecs[f].kind === "numerical" || codecs[f].kind === "datetime") && (codecs[f].stats.bin_edges?.length ?? 0) >= 2;
  const probs = new Map((metadata.marginals ?? []).map((m) => [`${m.features[0]}\u0000${m.features[1]}`, m.probs]));
  let budget = MAX_TABLE_CELL_RANGES;
  for (let b = 0; b < codecs.length && budget > 0; b++) {
    const col = rows.columns.indexOf(codecs[b].name);
    if (!binned(b) || col < 0) continue;
    let best: { a: number; cells: Cell[]; u: number } | undefined;
    for (const [i, j] of selection.pairs) {
      const a = i === b ? j : j === b ? i : -1;
      const p = probs.get(`${codecs[i].name}\u0000${codecs[j].name}`);
      if (a < 0 || !valueCoded(a) || !p) continue;
      const u = uncertainty(p, codecs[i].K, codecs[j].K, a === i);
      if (!(u > (best?.u ?? 0)) || !dependent(p, codecs[i].K, codecs[j].K, encoded.n)) continue;
      const cells = cellsOf(rows.scans[col].values, rows.scans[col].ids, encoded.codes[a], encoded.codes[b], codecs[b], k);
      if (cells.length > 0) best = { a, cells, u };
    }
    if (!best) continue;
    const cells = best.cells.slice(0, Math.min(MAX_CELL_RANGES, budget)).map((c): [number, number, number, number] => [c.a, c.bin, c.min, c.max]);
    budget -= cells.length;
    cells.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
    const st = metadata.column_stats?.[codecs[b].name];
    if (st) st.cell_ranges = { column: codecs[best.a].name, cells };
  }
}

/**
 * Whether the pair's dependence is beyond chance: the G statistic 2 n I(A; B) (nats) above the
 * mean of its chi-square law under independence plus two deviations, df + 2 sqrt(2 df), df =
 * (rows - 1)(columns - 1) of the non-empty margins. A partner independent of B would otherwise
 * narrow every draw to a few rows' range by chance alone, closer to real values for nothing.
 */
function dependent(p: readonly number[], Ki: number, Kj: number, n: number): boolean {
  const rows = new Float64Array(Ki);
  const cols = new Float64Array(Kj);
  for (let i = 0; i < Ki; i++) for (let j = 0; j < Kj; j++) {
    rows[i] += p[i * Kj + j];
    cols[j] += p[i * Kj + j];
  }
  const df = (rows.filter((x) => x > 0).length - 1) * (cols.filter((x) => x > 0).length - 1);
  return df > 0 && 2 * n * mutualInformation(p, Ki, Kj) > df + 2 * Math.sqrt(2 * df);
}

/** I(A; B) / H(A) of the row-major joint `p` (K_i x K_j); A is the first feature when `first`. */
function uncertainty(p: readonly number[], Ki: number, Kj: number, first: boolean): number {
  const margin = new Float64Array(first ? Ki : Kj);
  let total = 0;
  for (let i = 0; i < Ki; i++) for (let j = 0; j < Kj; j++) {
    margin[first ? i : j] += p[i * Kj + j];
    total += p[i * Kj + j];
  }
  let h = 0;
  for (const m of margin) if (m > 0) h -= (m / total) * Math.log(m / total);
  return h > 0 ? mutualInformation(p, Ki, Kj) / h : 0;
}

/** One (A code, B bin) cell: its rows and their range of B. */
interface Cell {
  a: number;
  bin: number;
  n: number;
  min: number;
  max: number;
}

/** The cells of >= k rows, most rows first. */
function cellsOf(
  values: readonly string[],
  ids: ArrayLike<number>,
  codesA: ArrayLike<number>,
  codesB: ArrayLike<number>,
  codec: ColumnCodec,
  k: number,
): Cell[] {
  const edges = codec.stats.bin_edges!;
  const nb = edges.length - 1;
  const parse = codec.kind === "datetime" ? (v: string) => codec.datetime?.parse(v)?.seconds ?? NaN : Number;
  const num = new Float64Array(values.length).fill(NaN);
  values.forEach((v, id) => {
    if (v !== "") num[id] = parse(v);
  });
  const cells = new Map<number, Cell>();
  for (let r = 0; r < ids.length; r++) {
    const bin = codesB[r];
    const x = num[ids[r]];
    // Point bins write their value already; blanks have no number.
    if (!(bin >= 0 && bin < nb) || edges[bin] === edges[bin + 1] || Number.isNaN(x)) continue;
    const key = codesA[r] * nb + bin;
    const cell = cells.get(key);
    if (cell) {
      cell.n++;
      if (x < cell.min) cell.min = x;
      if (x > cell.max) cell.max = x;
    } else cells.set(key, { a: codesA[r], bin, n: 1, min: x, max: x });
  }
  return [...cells.values()].filter((c) => c.n >= k).sort((x, y) => y.n - x.n || x.a - y.a || x.bin - y.bin);
}
