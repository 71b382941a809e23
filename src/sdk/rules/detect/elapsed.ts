/**
 * Detection of elapsed times (`ElapsedRule`, `../elapsed`): a numerical column that counts the
 * time between two datetime columns of its row (a tenure's `length` in days from `start` to
 * `end`; an age in years of 365.25 days from `birthday` to `termstart`, one decimal).
 */
import type { ElapsedRule } from "../../../contract";
import { ELAPSED_UNITS, elapsedTolerance, elapsedValue } from "../elapsed-units";
import type { Col } from "./view";

/** Rows with the number and both datetimes, at least. */
const MIN_ROWS = 30;
/** Share of those rows, and of those whose number is off its most frequent value, that must agree. */
const MIN_SHARE = 0.95;
/** Rows off the number's most frequent value, at least (a near-constant number agrees by chance). */
const MIN_OFF_MODE = 10;
/** Datetime columns tried (table order): pairs grow with their square. */
const MAX_DATETIMES = 16;
/** Decimals a rule counts to, at most (the contract's). */
const MAX_DECIMALS = 12;

/**
 * Elapsed times (file header): per numerical column with `decimals` in its stats (not an
 * identifier, not from a public domain) and per ordered pair of datetime columns (the first
 * {@link MAX_DATETIMES}), the unit of {@link ELAPSED_UNITS} and rounding (nearest, then down)
 * under which the number equals `(later - earlier) / unit` at its decimals in the most rows; a
 * rule when that is >= {@link MIN_SHARE} of the >= {@link MIN_ROWS} rows holding all three and of
 * the >= {@link MIN_OFF_MODE} of them off the number's mode. One rule per number (its best pair).
 * Found from values, never names. Cost: O(N · D² · U · n) for N numbers, D datetimes, U units.
 */
export function detectElapsed(cols: readonly Col[], n: number): ElapsedRule[] {
  const dates = cols.filter((c) => c.codec.kind === "datetime" && c.num).slice(0, MAX_DATETIMES);
  if (dates.length < 2) return [];
  const numbers = cols.filter((c) => c.codec.kind === "numerical" && c.num && !c.codec.fromDomain && c.codec.stats.type === "numerical" && c.codec.stats.decimals !== undefined);
  const out: ElapsedRule[] = [];
  for (const N of numbers) {
    const stats = N.codec.stats;
    const decimals = stats.type === "numerical" ? (stats.decimals ?? 0) : 0;
    if (decimals > MAX_DECIMALS) continue;
    const x = new Float64Array(n);
    for (let r = 0; r < n; r++) x[r] = N.num![N.scan.ids[r]];
    const mode = modeOf(x);
    let best: ElapsedRule | undefined;
    for (const A of dates) {
      for (const B of dates) {
        if (A === B) continue;
        const rule = elapsedOf(N.name, x, mode, A, B, n, decimals);
        if (rule && (!best || rule.share > best.share)) best = rule;
      }
    }
    if (best) out.push(best);
  }
  return out;
}

/** The most frequent non-NaN value of `x` (NaN when none). */
function modeOf(x: Float64Array): number {
  const counts = new Map<number, number>();
  let mode = NaN;
  let most = 0;
  for (const v of x) {
    if (Number.isNaN(v)) continue;
    const c = (counts.get(v) ?? 0) + 1;
    counts.set(v, c);
    if (c > most) [mode, most] = [v, c];
  }
  return mode;
}

function elapsedOf(name: string, x: Float64Array, mode: number, A: Col, B: Col, n: number, decimals: number): ElapsedRule | undefined {
  const rows: number[] = [];
  for (let r = 0; r < n; r++) {
    if (!Number.isNaN(x[r]) && !Number.isNaN(A.num![A.scan.ids[r]]) && !Number.isNaN(B.num![B.scan.ids[r]])) rows.push(r);
  }
  const off = rows.filter((r) => x[r] !== mode).length;
  if (rows.length < MIN_ROWS || off < MIN_OFF_MODE) return undefined;
  let best: ElapsedRule | undefined;
  for (const { seconds } of ELAPSED_UNITS) {
    for (const rounding of ["nearest", "floor"] as const) {
      const rule = { unit: seconds, decimals, ...(rounding === "floor" ? { rounding } : {}) };
      let kept = 0;
      let keptOff = 0;
      for (const r of rows) {
        const want = elapsedValue(rule, A.num![A.scan.ids[r]], B.num![B.scan.ids[r]]);
        if (Math.abs(x[r] - want) > elapsedTolerance(decimals, want)) continue;
        kept++;
        if (x[r] !== mode) keptOff++;
      }
      const share = kept / rows.length;
      if (share < MIN_SHARE || keptOff < MIN_SHARE * off || (best && share <= best.share)) continue;
      best = { type: "elapsed", columns: [name, A.name, B.name], ...rule, share };
    }
  }
  return best;
}
