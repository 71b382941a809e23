/**
 * The difference-range rule (`DifferenceRule`, docs/api.md "Row rules"): the second column minus
 * the first within the real rows' range. Checker and enforcer; detection is `./detect/difference`.
 */
import type { ColumnStats, DifferenceRule, Metadata } from "../../contract";
import { DatetimeFormat } from "../metadata/datetime";
import { datetimeParser } from "../columns";
import { numberLattice } from "../columns/numerical";
import type { Rng } from "../generate/sfc32";
import { MAX_REDRAWS, noneFixed, type CompiledRule } from "./compiled-rule";

/** Slack of a comparison: half a unit of the finest decimals the two columns write, or 0. */
function slackOf(stats: readonly (ColumnStats | undefined)[]): number {
  const d = Math.max(...stats.map((s) => (s?.type === "numerical" ? (s.decimals ?? 0) : 0)));
  return stats.some((s) => s?.type === "numerical") ? 0.5 * Math.pow(10, -d) : 0;
}

/** How the rule reads a cell: a number, or a datetime's epoch seconds (as `./check`'s `cellNumber`, in seconds). */
function readerOf(stats: ColumnStats | undefined): (text: string) => number | undefined {
  if (stats?.type === "datetime" && stats.format !== undefined) {
    const parse = datetimeParser(new DatetimeFormat(stats.format));
    return (t) => {
      const ms = t === "" ? undefined : parse(t);
      return ms === undefined ? undefined : ms / 1000;
    };
  }
  return (t) => {
    const x = t === "" ? NaN : Number(t);
    return Number.isFinite(x) ? x : undefined;
  };
}

/** The rule's verdict on a row: undefined when a cell is blank or unreadable, else whether the difference is in range. */
export function differenceCheck(rule: DifferenceRule, idx: readonly number[], meta: Metadata): (row: readonly string[]) => boolean | undefined {
  const stats = rule.columns.map((c) => meta.column_stats?.[c]);
  const [ra, rb] = stats.map(readerOf);
  const slack = slackOf(stats) + 1e-9 * Math.max(1, Math.abs(rule.min), Math.abs(rule.max));
  return (row) => {
    const a = ra(row[idx[0]]);
    const b = rb(row[idx[1]]);
    if (a === undefined || b === undefined) return undefined;
    const d = b - a;
    return d >= rule.min - slack && d <= rule.max + slack;
  };
}

/** A difference drawn from the rule's quantiles: one of the 16 intervals, uniform inside it. */
export function drawDifference(q: readonly number[], rng: Rng): number {
  const i = Math.min(q.length - 2, Math.floor(rng.next() * (q.length - 1)));
  return q[i] + rng.next() * (q[i + 1] - q[i]);
}

/**
 * Keeps the rule: a row out of range gets its second cell written as the first plus a difference
 * drawn from the rule's quantiles (the first cell, when the second is fixed), on the column's
 * decimals (numbers) or granularity unit (datetimes, at the first cell's offset), inside the
 * column's real [min, max]; up to {@link MAX_REDRAWS} draws, else the row is counted unrepaired.
 */
export function differenceRule(rule: DifferenceRule, idx: readonly number[], meta: Metadata): CompiledRule {
  const stats = rule.columns.map((c) => meta.column_stats?.[c]);
  const check = differenceCheck(rule, idx, meta);
  const writers = stats.map((s) => writerOf(s));
  const readers = stats.map(readerOf);
  return {
    apply(rows, rng, given, _draw, out) {
      const fixed = given ?? noneFixed;
      const cells: string[] = [];
      for (let r = 0; r < rows.length; r++) {
        cells[idx[0]] = rows.get(r, idx[0]);
        cells[idx[1]] = rows.get(r, idx[1]);
        if (check(cells) !== false) continue;
        const side = !fixed(r, idx[1]) ? 1 : !fixed(r, idx[0]) ? 0 : -1;
        if (side < 0) {
          out.unrepaired++;
          continue;
        }
        const other = readers[1 - side](cells[idx[1 - side]])!;
        const offset = stats[1 - side]?.type === "datetime" ? offsetOf(stats[1 - side]!, cells[idx[1 - side]]) : 0;
        let done = false;
        for (let t = 0; t < MAX_REDRAWS && !done; t++) {
          const d = drawDifference(rule.quantiles, rng);
          const text = writers[side](side === 1 ? other + d : other - d, offset);
          if (text === undefined) continue;
          cells[idx[side]] = text;
          if (check(cells) === true) {
            rows.set(r, idx[side], text);
            out.changed++;
            done = true;
          }
        }
        if (!done) out.unrepaired++;
      }
    },
  };
}

/** A datetime cell's UTC offset in minutes (0 for formats without one). */
function offsetOf(stats: ColumnStats, text: string): number {
  return new DatetimeFormat(stats.format!).parse(text)?.offset ?? 0;
}

/** Seconds per granularity unit a datetime is rounded to. */
const UNIT_SECONDS: Record<string, number> = { second: 1, minute: 60, hour: 3600, day: 86_400 };

/**
 * Writes a number as the column does (the nearest point of its lattice: step, listed values,
 * decimals; inside its [min, max]), or a
 * datetime's seconds in its format (rounded to its granularity unit up to a day; coarser
 * granularities to the day); undefined outside the column's range.
 */
function writerOf(stats: ColumnStats | undefined): (x: number, offsetMinutes: number) => string | undefined {
  const inRange = (x: number): boolean => (stats?.min === undefined || x >= stats.min) && (stats?.max === undefined || x <= stats.max);
  if (stats?.type === "datetime" && stats.format !== undefined) {
    const fmt = new DatetimeFormat(stats.format);
    const unit = UNIT_SECONDS[stats.granularity ?? "day"] ?? 86_400;
    return (x, offset) => {
      const local = Math.round((x + offset * 60) / unit) * unit - offset * 60;
      return inRange(local) ? fmt.write(local, offset) : undefined;
    };
  }
  const lattice = stats?.type === "numerical" ? numberLattice(stats) : undefined;
  return (x) => {
    if (!lattice) return inRange(x) ? String(x) : undefined;
    const k = Math.round(lattice.index(x));
    return inRange(lattice.value(k)) ? lattice.write(k) : undefined;
  };
}
