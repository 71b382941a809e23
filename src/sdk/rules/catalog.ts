/**
 * The catalog rule kept in decoded rows (`./enforce`, before fixed combinations). A row whose key
 * is a released entry's gets that entry's attributes. A row whose key is none (a rare key pooled
 * and written as a fresh value or a stand-in, a number drawn inside a bin) becomes a released
 * entry, key and attributes: among the entries that keep the row's fixed cells, those agreeing
 * with the most of the row's cells (same value; for a quantile-binned number the same bin) are
 * drawn from by their real counts. So no row writes an invented key beside real attributes, or a
 * real key beside attributes of another entry.
 */
import type { ColumnStats, Metadata } from "../../contract";
import { binOf, pointValues } from "../columns/bins";
import { cellNumber } from "./check";
import type { CompiledRule } from "./compiled-rule";

/** Text -> a class of equal cells: the text, or for a binned number its bin. */
function cellClass(stats: ColumnStats | undefined): (text: string) => string {
  const edges = stats?.type === "numerical" ? stats.bin_edges : undefined;
  if (edges === undefined || edges.length < 2) return (t) => t;
  const points = pointValues(edges);
  return (t) => {
    const x = t === "" ? NaN : Number(t);
    return Number.isFinite(x) ? `#${binOf(edges, points, x)}` : t;
  };
}

/**
 * The catalog rule over features `cols` (key first) with its released `entries` (texts per column)
 * and `counts`; undefined without entries.
 */
export function catalog(meta: Metadata, cols: number[], entries: readonly (readonly string[])[], counts: readonly number[]): CompiledRule | undefined {
  const m = cols.length;
  const valid = entries.filter((e) => e.length === m);
  if (valid.length === 0) return undefined;
  const weight = entries.map((e, i) => (e.length === m ? Math.max(1, counts[i] ?? 1) : 0)).filter((w) => w > 0);
  const stats = cols.map((f) => meta.column_stats?.[meta.features[f]]);
  const keyStats = stats[0];
  const numericKey = keyStats?.type === "numerical" || keyStats?.type === "datetime";
  const keyNumber = cellNumber(keyStats);
  const byText = new Map<string, number>();
  const byNumber = new Map<number, number>();
  valid.forEach((e, i) => {
    if (!byText.has(e[0])) byText.set(e[0], i);
    const x = numericKey ? keyNumber(e[0]) : undefined;
    if (x !== undefined && !byNumber.has(x)) byNumber.set(x, i);
  });
  const classOf = stats.map(cellClass);
  const entryClass = valid.map((e) => e.map((t, j) => classOf[j](t)));
  const sameCell = stats.map((s) => {
    if (s?.type !== "numerical" && s?.type !== "datetime") return (a: string, b: string) => a === b;
    const num = cellNumber(s);
    return (a: string, b: string) => a === b || (num(a) !== undefined && num(a) === num(b));
  });
  const entryOf = (text: string): number | undefined => {
    const i = byText.get(text);
    if (i !== undefined || !numericKey) return i;
    const x = keyNumber(text);
    return x === undefined ? undefined : byNumber.get(x);
  };
  const rowClass: string[] = new Array(m);
  const rowText: string[] = new Array(m);
  const fixedAt = new Uint8Array(m);
  const best: number[] = [];
  return {
    apply(rows, rng, fixed, _draw, out) {
      for (let r = 0; r < rows.length; r++) {
        let anyFixed = false;
        for (let j = 0; j < m; j++) {
          rowText[j] = rows.get(r, cols[j]);
          fixedAt[j] = fixed !== undefined && fixed(r, cols[j]) ? 1 : 0;
          if (fixedAt[j] === 1) anyFixed = true;
        }
        if (rowText[0] === "" && fixedAt[0] === 1) continue;
        const keeps = (i: number): boolean => {
          for (let j = 0; j < m; j++) if (fixedAt[j] === 1 && !sameCell[j](rowText[j], valid[i][j])) return false;
          return true;
        };
        let pick = rowText[0] === "" ? undefined : entryOf(rowText[0]);
        if (pick !== undefined && anyFixed && !keeps(pick)) pick = undefined;
        if (pick === undefined) {
          // The entries keeping the fixed cells that agree with the most of the row's cells.
          for (let j = 0; j < m; j++) rowClass[j] = classOf[j](rowText[j]);
          let top = -1;
          best.length = 0;
          for (let i = 0; i < valid.length; i++) {
            if (anyFixed && !keeps(i)) continue;
            let s = 0;
            for (let j = 0; j < m; j++) if (entryClass[i][j] === rowClass[j]) s++;
            if (s > top) {
              top = s;
              best.length = 0;
            }
            if (s === top) best.push(i);
          }
          if (best.length === 0) {
            out.unrepaired++;
            continue;
          }
          let total = 0;
          for (const i of best) total += weight[i];
          let u = rng.next() * total;
          pick = best[best.length - 1];
          for (const i of best) {
            u -= weight[i];
            if (u < 0) {
              pick = i;
              break;
            }
          }
        }
        const e = valid[pick];
        for (let j = 0; j < m; j++) {
          if (fixedAt[j] === 1 || rowText[j] === e[j]) continue;
          rows.set(r, cols[j], e[j]);
          out.changed++;
        }
      }
    },
  };
}
