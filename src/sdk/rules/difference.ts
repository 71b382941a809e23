/**
 * The difference-range rule (`DifferenceRule`, docs/api.md "Row rules"): the second column minus
 * the first within the real rows' range. The enforcer; the checker is `./check`'s, detection
 * `./detect/difference`.
 */
import type { ColumnStats, DifferenceRule, Metadata } from "../../contract";
import { DatetimeFormat } from "../metadata/datetime";
import { cellSeconds, differenceCheck } from "./check";
import { numberLattice } from "../columns/numerical";
import { grainRounder } from "../columns/numerical-grain";
import { MAX_REDRAWS, drawFromQuantiles as drawDifference, noneFixed, type CompiledRule } from "./compiled-rule";
import type { Rng } from "../generate/sfc32";


/**
 * Keeps the rule: a row out of range gets its second cell written as the first plus a difference
 * drawn from the rule's quantiles (the first cell, when the second is fixed), on the column's
 * decimals and grain (numbers: `grainRounder`) or granularity unit (datetimes, at the first cell's offset), inside the
 * column's real [min, max]; up to {@link MAX_REDRAWS} draws, else the row is counted unrepaired.
 */
export function differenceRule(rule: DifferenceRule, idx: readonly number[], meta: Metadata): CompiledRule {
  const stats = rule.columns.map((c) => meta.column_stats?.[c]);
  const check = differenceCheck(rule, idx, meta);
  const writers = stats.map((s) => writerOf(s));
  const readers = stats.map(cellSeconds);
  const formats = stats.map((s) => (s?.type === "datetime" && s.format !== undefined ? new DatetimeFormat(s.format) : undefined));
  const writes = stats.map((s, i) => cellWriter(s, writers[i], check));
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
        const offset = formats[1 - side]?.parse(cells[idx[1 - side]])?.offset ?? 0;
        let done = false;
        for (let t = 0; t < MAX_REDRAWS && !done; t++) {
          const d = drawDifference(rule.quantiles, rng);
          const x = side === 1 ? other + d : other - d;
          const text = writes[side](x, rng, cells, idx[side], offset);
          if (text !== undefined) {
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

/**
 * Writes a number a rule computed into cell `i` of `cells` so the row keeps the rule: at the
 * column's grain where a point of it keeps `check` (`grainRounder`), else as computed, on the
 * column's lattice (`write`, {@link writerOf}). Shared by the rules that draw one cell (difference
 * and entity ranges).
 * @returns the text written into `cells[i]`, or undefined when the row still breaks the rule
 *   (`cells[i]` then holds the last text tried).
 */
export function cellWriter(
  stats: ColumnStats | undefined,
  write: (x: number, offsetMinutes: number) => string | undefined,
  check: (row: readonly string[]) => boolean | undefined,
): (x: number, rng: Rng, cells: string[], i: number, offsetMinutes: number) => string | undefined {
  const snap = stats?.type === "numerical" ? grainRounder(stats) : undefined;
  return (x, rng, cells, i, offset) => {
    const kept = (text: string | undefined): boolean => {
      cells[i] = text ?? "";
      return text !== undefined && check(cells) === true;
    };
    const y = snap?.(x, rng, (v) => kept(write(v, offset))) ?? x;
    const text = write(y, offset);
    return kept(text) ? text : undefined;
  };
}

/** Seconds per granularity unit a datetime is rounded to. */
const UNIT_SECONDS: Record<string, number> = { second: 1, minute: 60, hour: 3600, day: 86_400 };

/**
 * Writes a number as the column does (the nearest point of its lattice: step, listed values,
 * decimals; inside its [min, max]), or a
 * datetime's seconds in its format (rounded to its granularity unit up to a day; coarser
 * granularities to the day); undefined outside the column's range.
 */
export function writerOf(stats: ColumnStats | undefined): (x: number, offsetMinutes: number) => string | undefined {
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
