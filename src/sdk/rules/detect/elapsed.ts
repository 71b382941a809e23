/**
 * Detection of elapsed times (`ElapsedRule`, `../elapsed`): a numerical column that counts the
 * time between two datetime columns of its row (a tenure's `length` in days from `start` to
 * `end`; an age in years of 365.25 days from `birthday` to `termstart`, one decimal).
 */
import type { ElapsedRule } from "../../../contract";
import { decimalsOf } from "../../columns";
import { ELAPSED_UNITS, elapsedKeeps } from "../elapsed-units";
import { modeOf } from "./sum";
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
const MAX_DECIMALS = 20;
/** A count of decimals is the rule's when at least this share of the agreeing rows write it (the largest such). */
const DECIMALS_SHARE = 0.1;

/**
 * Elapsed times (file header): per numerical column (not from a public domain) and per ordered
 * pair of datetime columns (the first {@link MAX_DATETIMES}), the unit of {@link ELAPSED_UNITS}
 * and rounding (nearest, then down) under which the number equals `(later - earlier) / unit`
 * rounded to the decimals each cell is written with in the most rows; a rule when that is >=
 * {@link MIN_SHARE} of the >= {@link MIN_ROWS} rows holding all three and of the >=
 * {@link MIN_OFF_MODE} of them off the number's mode. Its decimals: the most that >= 10% of the
 * agreeing rows write (a stray cell of a double's 17 digits is not the column's count). One
 * rule per number (its best pair). Found from values, never names.
 * Cost: O(N · D² · U · n) for N numbers, D datetimes, U units.
 */
export function detectElapsed(cols: readonly Col[], n: number): ElapsedRule[] {
  const dates = cols.filter((c) => c.codec.kind === "datetime" && c.num).slice(0, MAX_DATETIMES);
  if (dates.length < 2) return [];
  const numbers = cols.filter((c) => c.codec.kind === "numerical" && c.num && !c.codec.fromDomain);
  const out: ElapsedRule[] = [];
  for (const N of numbers) {
    const x = new Float64Array(n);
    const written = new Int32Array(n);
    const places = N.scan.values.map((v) => Math.min(MAX_DECIMALS, decimalsOf(v)));
    for (let r = 0; r < n; r++) {
      x[r] = N.num![N.scan.ids[r]];
      written[r] = places[N.scan.ids[r]];
    }
    const mode = modeOf(N);
    let best: ElapsedRule | undefined;
    for (const A of dates) {
      for (const B of dates) {
        if (A === B) continue;
        const rule = elapsedOf(N.name, x, written, mode, A, B, n);
        if (rule && (!best || rule.share > best.share)) best = rule;
      }
    }
    if (best) out.push(best);
  }
  return out;
}

function elapsedOf(name: string, x: Float64Array, written: Int32Array, mode: number, A: Col, B: Col, n: number): ElapsedRule | undefined {
  const rows: number[] = [];
  for (let r = 0; r < n; r++) {
    if (!Number.isNaN(x[r]) && !Number.isNaN(A.num![A.scan.ids[r]]) && !Number.isNaN(B.num![B.scan.ids[r]])) rows.push(r);
  }
  const off = rows.filter((r) => x[r] !== mode).length;
  if (rows.length < MIN_ROWS || off < MIN_OFF_MODE) return undefined;
  let best: ElapsedRule | undefined;
  for (const { seconds } of ELAPSED_UNITS) {
    for (const rounding of ["nearest", "floor"] as const) {
      const rule = { unit: seconds, decimals: MAX_DECIMALS, ...(rounding === "floor" ? { rounding } : {}) };
      const counts = new Map<number, number>();
      let kept = 0;
      let keptOff = 0;
      for (const r of rows) {
        if (!elapsedKeeps(rule, x[r], written[r], A.num![A.scan.ids[r]], B.num![B.scan.ids[r]])) continue;
        kept++;
        if (x[r] !== mode) keptOff++;
        counts.set(written[r], (counts.get(written[r]) ?? 0) + 1);
      }
      const share = kept / rows.length;
      if (share < MIN_SHARE || keptOff < MIN_SHARE * off || (best && share <= best.share)) continue;
      const decimals = Math.max(...[...counts].filter(([, c]) => c >= DECIMALS_SHARE * kept).map(([d]) => d));
      best = { type: "elapsed", columns: [name, A.name, B.name], ...rule, decimals, share };
    }
  }
  return best;
}
