/**
 * The catalog rule kept in decoded rows (`./enforce`, before fixed combinations). A row whose key
 * is a released entry's gets that entry's attributes. A row whose key is none (a rare key pooled
 * and written as a fresh value or a stand-in, a number drawn inside a bin) becomes a released
 * entry, key and attributes: among the entries that keep the row's fixed cells, those agreeing
 * with the most of the row's cells (same value; for a quantile-binned number or instant the same
 * bin) are drawn from by their shortfall against their quota (`../../rule-scores`: an entry's real
 * share of the batch's rows with a key, less the rows already on it), so the keys keep their
 * real shares. So no row writes an invented key beside real attributes, or a
 * real key beside attributes of another entry. A row with a blank key is left as it is, and so is
 * one whose key is a text the key column wrote in its own words (`column_stats.semantic` kind
 * `text`, long notes: `../metadata`): a new note is no entry's, as the real table's own rare
 * notes are none, and its attributes stay the model's.
 */
import type { ColumnStats, Metadata } from "../../contract";
import { binOf, pointValues } from "../columns/bins";
import { cellNumber } from "./check";
import type { Cells } from "../generate/batch";
import { quotaScore } from "../../rule-scores";
import type { CompiledRule, Fixed } from "./compiled-rule";

/** Text -> a class of equal cells: the text, or for a binned number or instant its bin. */
function cellClass(stats: ColumnStats | undefined): (text: string) => string {
  const edges = stats?.type === "numerical" || stats?.type === "datetime" ? stats.bin_edges : undefined;
  if (edges === undefined || edges.length < 2) return (t) => t;
  const points = pointValues(edges);
  const read = cellNumber(stats);
  // Datetime edges are in seconds, `cellNumber` reads milliseconds.
  const unit = stats?.type === "datetime" ? 1000 : 1;
  return (t) => {
    const x = read(t);
    return x === undefined ? t : `#${binOf(edges, points, x / unit)}`;
  };
}

/**
 * The catalog rule over features `cols` (key first) with its released `entries` (texts per column)
 * and `counts`; undefined without entries. With `keyColumns` 2 the key is the first two columns:
 * {@link compositeCatalog}.
 */
export function catalog(meta: Metadata, cols: number[], entries: readonly (readonly string[])[], counts: readonly number[], keyColumns = 1): CompiledRule | undefined {
  if (keyColumns === 2) return compositeCatalog(meta, cols, entries);
  const m = cols.length;
  const valid = entries.filter((e) => e.length === m);
  if (valid.length === 0) return undefined;
  const weight = entries.map((e, i) => (e.length === m ? Math.max(1, counts[i] ?? 1) : 0)).filter((w) => w > 0);
  const stats = cols.map((f) => meta.column_stats?.[meta.features[f]]);
  const keyStats = stats[0];
  const numericKey = keyStats?.type === "numerical" || keyStats?.type === "datetime";
  const keyNumber = cellNumber(keyStats);
  // A key written in the column's own words: its texts that are no released value are new notes.
  const keyMapping = meta.value_mappings?.[meta.features[cols[0]]];
  const ownWords = keyStats?.type === "categorical" && keyStats.semantic?.kind === "text" && keyMapping !== undefined;
  const isNewText = (text: string): boolean => ownWords && !Object.hasOwn(keyMapping!, text);
  const byText = new Map<string, number>();
  const byNumber = new Map<number, number>();
  valid.forEach((e, i) => {
    if (!byText.has(e[0])) byText.set(e[0], i);
    const x = numericKey ? keyNumber(e[0]) : undefined;
    if (x !== undefined && !byNumber.has(x)) byNumber.set(x, i);
  });
  const classOf = stats.map(cellClass);
  // Per column: class -> the entries holding it.
  const byClass = classOf.map((f, j) => {
    const map = new Map<string, number[]>();
    valid.forEach((e, i) => {
      const c = f(e[j]);
      const list = map.get(c);
      if (list) list.push(i);
      else map.set(c, [i]);
    });
    return map;
  });
  const stamp = new Int32Array(valid.length);
  const agree = new Int32Array(valid.length);
  const touched: number[] = [];
  // Stamps of `agree`: one tick per row scored, over every batch.
  let tick = 0;
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
  const rowText: string[] = new Array(m);
  const fixedAt = new Uint8Array(m);
  const best: number[] = [];
  const totalWeight = weight.reduce((a, b) => a + b, 0);
  let anyFixed = false;
  const readRow = (rows: Cells, r: number, fixed: Fixed | undefined): void => {
    anyFixed = false;
    for (let j = 0; j < m; j++) {
      rowText[j] = rows.get(r, cols[j]);
      fixedAt[j] = fixed !== undefined && fixed(r, cols[j]) ? 1 : 0;
      if (fixedAt[j] === 1) anyFixed = true;
    }
  };
  const keeps = (i: number): boolean => {
    for (let j = 0; j < m; j++) if (fixedAt[j] === 1 && !sameCell[j](rowText[j], valid[i][j])) return false;
    return true;
  };
  return {
    apply(rows, rng, fixed, _draw, out) {
      const n = rows.length;
      // Per row: its entry, -1 still to choose, -2 left as given (a blank key or a new note: the
      // real rows without a key or with a rare one are no entry's, and keep their share).
      const picks = new Int32Array(n);
      const held = new Float64Array(valid.length);
      let keyed = 0;
      for (let r = 0; r < n; r++) {
        readRow(rows, r, fixed);
        if (rowText[0] === "" || isNewText(rowText[0])) {
          picks[r] = -2;
          continue;
        }
        keyed++;
        const i = entryOf(rowText[0]);
        picks[r] = i !== undefined && (!anyFixed || keeps(i)) ? i : -1;
        if (picks[r] >= 0) held[picks[r]]++;
      }
      const score = (i: number): number => quotaScore((weight[i] / totalWeight) * keyed, held[i]);
      // Rows without a released key, in row order: among the entries keeping the fixed cells that
      // agree with the most of the row's cells, one drawn by its shortfall against its quota (its
      // real share of the batch's keyed rows), as fixed combinations repair.
      for (let r = 0; r < n; r++) {
        if (picks[r] !== -1) continue;
        readRow(rows, r, fixed);
        // Agreement counts from each column's class lists: cost O(entries sharing a class).
        touched.length = 0;
        const t = ++tick;
        for (let j = 0; j < m; j++) {
          const list = byClass[j].get(classOf[j](rowText[j]));
          if (list === undefined) continue;
          for (const i of list) {
            if (stamp[i] !== t) (stamp[i] = t, agree[i] = 0, touched.push(i));
            agree[i]++;
          }
        }
        let top = 0;
        best.length = 0;
        for (const i of touched) {
          if (agree[i] < top || (anyFixed && !keeps(i))) continue;
          if (agree[i] > top) (top = agree[i], (best.length = 0));
          best.push(i);
        }
        if (best.length === 0) for (let i = 0; i < valid.length; i++) if (!anyFixed || keeps(i)) best.push(i);
        if (best.length === 0) {
          picks[r] = -2;
          out.unrepaired++;
          continue;
        }
        let total = 0;
        for (const i of best) total += score(i);
        let u = rng.next() * total;
        let pick = best[best.length - 1];
        for (const i of best) {
          u -= score(i);
          if (u < 0) {
            pick = i;
            break;
          }
        }
        picks[r] = pick;
        held[pick]++;
      }
      for (let r = 0; r < n; r++) {
        if (picks[r] < 0) continue;
        readRow(rows, r, fixed);
        const e = valid[picks[r]];
        for (let j = 0; j < m; j++) {
          if (fixedAt[j] === 1 || rowText[j] === e[j]) continue;
          rows.set(r, cols[j], e[j]);
          out.changed++;
        }
      }
    },
  };
}

/**
 * A catalog with a composite key (features `cols`, the two key columns first): a row whose pair
 * is a released entry's (each cell the same text, or for a numerical or datetime key column the
 * same value) gets that entry's attributes; a row with a blank key cell or a pair no entry holds
 * is left as generated (it is no real pair's, so no real attribute belongs to it), as is one whose
 * fixed cells (conditional sampling) hold another attribute (counted unrepaired).
 */
function compositeCatalog(meta: Metadata, cols: number[], entries: readonly (readonly string[])[]): CompiledRule | undefined {
  const m = cols.length;
  const valid = entries.filter((e) => e.length === m && m > 2);
  if (valid.length === 0) return undefined;
  const stats = cols.map((f) => meta.column_stats?.[meta.features[f]]);
  // A key cell's class: its number for a numerical or datetime column (`1.50` is `1.5`), else its text.
  const keyText = stats.slice(0, 2).map((st) => {
    if (st?.type !== "numerical" && st?.type !== "datetime") return (t: string) => t;
    const read = cellNumber(st);
    return (t: string) => {
      const x = read(t);
      return x === undefined ? t : `#${x}`;
    };
  });
  const pairOf = (a: string, b: string): string => `${keyText[0](a)}\u0000${keyText[1](b)}`;
  const byPair = new Map<string, readonly string[]>();
  for (const e of valid) if (!byPair.has(pairOf(e[0], e[1]))) byPair.set(pairOf(e[0], e[1]), e);
  const sameCell = stats.map((s) => {
    if (s?.type !== "numerical" && s?.type !== "datetime") return (a: string, b: string) => a === b;
    const num = cellNumber(s);
    return (a: string, b: string) => a === b || (num(a) !== undefined && num(a) === num(b));
  });
  return {
    apply(rows, _rng, fixed, _draw, out) {
      for (let r = 0; r < rows.length; r++) {
        const a = rows.get(r, cols[0]);
        const b = rows.get(r, cols[1]);
        if (a === "" || b === "") continue;
        const e = byPair.get(pairOf(a, b));
        if (e === undefined) continue;
        let held = true;
        for (let j = 2; j < m && held; j++) if (fixed !== undefined && fixed(r, cols[j]) && !sameCell[j](rows.get(r, cols[j]), e[j])) held = false;
        if (!held) {
          out.unrepaired++;
          continue;
        }
        for (let j = 2; j < m; j++) {
          if (rows.get(r, cols[j]) === e[j] || (fixed !== undefined && fixed(r, cols[j]))) continue;
          rows.set(r, cols[j], e[j]);
          out.changed++;
        }
      }
    },
  };
}
