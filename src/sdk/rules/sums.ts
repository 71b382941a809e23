/**
 * Sums and linear identities `total = ±w_1·a ± w_2·b ... + k` (1 to 12 parts, weights 1 unless
 * given) kept in decoded rows (`./enforce`, step
 * 4 of its header; the rule shape is the contract's `SumRule`). Sums sharing columns form a system
 * (employment series: nonfarm = private + government = goods + services) that is written per row,
 * inner first, so every identity of the system holds at once.
 *
 * Per row and sum: `total` is written from the parts in exact decimal arithmetic (rounded to its
 * decimals when it has fewer than a part, within {@link identityTolerance}); when that falls
 * outside the total's real [min, max] or `total` is fixed (by the user or an earlier sum of the
 * row), the first unfixed part whose derived value is in range at its decimals is derived instead. When no cell can be written within its real range, the row's leaf parts
 * (columns of the system that are no sum's total) are redrawn from their marginals, one at a
 * time and then all together, up to {@link MAX_REDRAWS} times, and the system is written again:
 * a row never holds a value its real column could not, unless every draw failed (then the
 * identity still holds and the derived cell is left out of range).
 */
import type { ColumnStats, Metadata, RatioRule, SumRule } from "../../contract";
import { binQuantiles, ratioKept, ratioSteps, ratioValue, type RatioStep } from "./ratio";
import type { Cells } from "../generate/batch";
import type { Rng } from "../generate/sfc32";
import { MAX_REDRAWS, drawFromQuantiles, innerFirst, noneFixed, type CompiledRule, type DrawValue, type EnforceResult, type Fixed } from "./compiled-rule";

/** Decimals of a numerical column's values (its `decimals`, 0 for integers). */
function decimalsOfStats(stats: ColumnStats | undefined): number {
  return stats?.decimals ?? 0;
}

/**
 * How far `total - sum_j signs[j]·parts[j] - constant` may be from 0 for a sum over columns with
 * these decimals (one per column, total included), in the columns' units: half a unit of the
 * finest decimals (the difference is then exact on that grid), plus half a unit of its own
 * decimals for each column written with fewer, since such a column was rounded from a finer value
 * (BLS employment: parts in tenths of thousands, their total in thousands, 26162 = 5840.4 +
 * 15351.5 + 4420 + 549.8 within 0.55). A hair more for binary floating point. The bound of
 * independent roundings, |sum_j e_j| <= sum_j 0.5·10^-d_j (Higham, Accuracy and Stability of
 * Numerical Algorithms, 2nd ed., sec. 2.1), over the columns that can carry a rounding error.
 */
export function identityTolerance(decimals: readonly number[]): number {
  const finest = Math.max(0, ...decimals);
  let tol = 0.5 * 10 ** -finest;
  for (const d of decimals) if (d < finest) tol += 0.5 * 10 ** -d;
  return tol * (1 + 1e-9);
}

/**
 * The tolerance of a sum rule over columns with these decimals (total first) and part `weights`:
 * {@link identityTolerance} for a plain sum; a weighted one (a weight other than 1) is exact,
 * half a unit of its finest term (a part's decimals plus its weight's: 0.01 · Pick is in
 * hundredths), since such identities are written, not rounded (`Round + Pick / 100`).
 */
export function sumRuleTolerance(decimals: readonly number[], weights?: readonly number[]): number {
  if (!weights || weights.every((w) => w === 1)) return identityTolerance(decimals);
  const finest = Math.max(decimals[0], ...weights.map((w, j) => decimals[j + 1] + (weightDecimals(w) ?? 6)));
  return 0.5 * 10 ** -finest * (1 + 1e-9);
}

/** Writes scaled integer `k` (value k / 10^d) as the column writes numbers. */
function writeScaled(k: number, d: number, fixedDecimals: boolean): string {
  if (d === 0) return String(k + 0);
  const neg = k < 0;
  const digits = String(Math.abs(k)).padStart(d + 1, "0");
  let s = `${digits.slice(0, -d)}.${digits.slice(-d)}`;
  if (!fixedDecimals) s = s.replace(/\.?0+$/, "");
  return neg && /[1-9]/.test(s) ? `-${s}` : s;
}

/** One sum of a system: feature indices and its arithmetic at the finest decimals of its columns. */
interface SumStep {
  total: number;
  /** The parts (1 to 12) and their coefficients (signs times weights). */
  parts: number[];
  signs: number[];
  /** The constant in units of 10^-d. */
  kk: number;
  /** Text -> value in units of 10^-d (undefined: blank or not a number). */
  scaled(text: string): number | undefined;
  /** Scaled value k written as column f writes numbers. */
  write(f: number, k: number): string;
  /** Whether column f can hold scaled value k as the real column does: in range once written at its decimals. */
  fits(f: number, k: number): boolean;
  /** Whether scaled value x is a whole number of column f's own unit (no rounding needed). */
  onGrid(f: number, x: number): boolean;
}

/** Decimals of a weight (0.01 -> 2, 60 -> 0); undefined when it has more than 6. */
export function weightDecimals(w: number): number | undefined {
  for (let e = 0; e <= 6; e++) if (Math.abs(w * 10 ** e - Math.round(w * 10 ** e)) < 1e-9 * Math.max(1, w * 10 ** e)) return e;
  return undefined;
}

/**
 * A sum rule's coefficient per part (`rule.parts` order): its sign (1 unless given) times its
 * weight (1 unless given), so the rule reads `total = sum_j coefficients[j]·parts[j] + constant`.
 */
export function sumCoefficients(rule: Pick<SumRule, "parts" | "signs" | "weights">): number[] {
  return rule.parts.map((_, j) => (rule.signs?.[j] ?? 1) * (rule.weights?.[j] ?? 1));
}

function sumStep(meta: Metadata, total: number, parts: number[], coefficients: number[], constant: number, weights?: readonly number[]): SumStep {
  const st = (f: number) => meta.column_stats?.[meta.features[f]];
  // A weighted part needs its weight's decimals beside its own (0.01 · Pick: Pick's hundredths).
  const d = Math.max(decimalsOfStats(st(total)), ...parts.map((f, j) => decimalsOfStats(st(f)) + (weightDecimals(weights?.[j] ?? 1) ?? 6)));
  const scale = 10 ** d;
  return {
    total,
    parts,
    signs: coefficients,
    kk: Math.round(constant * scale),
    scaled(text) {
      if (text === "") return undefined;
      const x = Number(text);
      return Number.isFinite(x) ? Math.round(x * scale) : undefined;
    },
    write(f, k) {
      const df = decimalsOfStats(st(f));
      // k is at d decimals; the column writes df <= d decimals (the rule holds within df).
      const kf = df === d ? k : Math.round(k / 10 ** (d - df));
      return writeScaled(kf, df, st(f)?.fixed_decimals === true);
    },
    onGrid(f, x) {
      const unit = 10 ** Math.max(0, d - decimalsOfStats(st(f)));
      const u = x / unit;
      return Math.abs(u - Math.round(u)) < 1e-6;
    },
    fits(f, k) {
      const s = st(f);
      // A column with fewer decimals is written rounded: within the rule's tolerance
      // (identityTolerance counts that column's rounding), so only its range is checked.
      const unit = 10 ** (d - decimalsOfStats(s));
      const x = (Math.round(k / unit) * unit) / scale;
      return !((s?.min !== undefined && x < s.min) || (s?.max !== undefined && x > s.max));
    },
  };
}

/** Sums sharing a column, transitively, in inner-first order: one list per system. */
function systems(sums: readonly SumRule[]): SumRule[][] {
  const groups: SumRule[][] = [];
  for (const s of innerFirst(sums)) {
    const cols = [s.total, ...s.parts];
    const touching = groups.filter((g) => g.some((o) => [o.total, ...o.parts].some((c) => cols.includes(c))));
    const merged = [...touching.flat(), s];
    for (const g of touching) groups.splice(groups.indexOf(g), 1);
    groups.push(innerFirst(merged));
  }
  return groups;
}

/** The compiled sums, and the same step for one row (what an inequality calls after moving a sum's cell). */
export interface SumSystems extends CompiledRule {
  /** Keeps every sum system in row r; `fixed` cells are never rewritten. */
  keepRow(rows: Cells, r: number, rng: Rng, fixed: Fixed, draw: DrawValue, out: EnforceResult): void;
}

/**
 * The metadata's sum rules (features resolved by `cols`; a rule over an unknown or identifier
 * column is left out) as one compiled rule that keeps every system in every row (file header).
 */
export function sumSystems(meta: Metadata, rules: readonly SumRule[], cols: (names: readonly string[]) => number[] | undefined, ratioRules: readonly RatioRule[] = []): SumSystems | undefined {
  const ratios = ratioSteps(meta, ratioRules, cols);
  const compiled = systems(rules.filter((r) => cols([r.total, ...r.parts]) !== undefined)).map((group) => {
    const steps = group.map((r) => {
      const [t, ...parts] = cols([r.total, ...r.parts])!;
      return sumStep(meta, t, parts, sumCoefficients(r), r.constant ?? 0, r.weights);
    });
    const totals = new Set(steps.map((s) => s.total));
    const features = [...new Set(steps.flatMap((s) => [s.total, ...s.parts]))];
    return { steps, features, leaves: features.filter((f) => !totals.has(f)) };
  });
  if (compiled.length === 0 && ratios.length === 0) return undefined;
  // A ratio's part may be redrawn (its total out of range) when no sum or ratio writes or reads it otherwise.
  const sumFeatures = new Set(compiled.flatMap((sys) => sys.features));
  const held = new Set([...sumFeatures, ...ratios.map((s) => s.total)]);
  // A ratio whose total is a sum's part is written first and held there (cost = price · quantity, total = cost + tax).
  const before = ratios.filter((s) => sumFeatures.has(s.total));
  const after = ratios.filter((s) => !sumFeatures.has(s.total));
  const firstTotals = new Set(before.map((s) => s.total));
  const keepRow = (rows: Cells, r: number, rng: Rng, given: Fixed, draw: DrawValue, out: EnforceResult): void => {
    // A second pass writes again a total whose parts a later ratio's redraws moved.
    for (const pass of [true, false]) for (const step of before) keepRatio(rows, r, rng, given, draw, out, step, held, pass);
    const user: Fixed = firstTotals.size === 0 ? given : (rr, f) => given(rr, f) || firstTotals.has(f);
    for (const sys of compiled) {
      const before = sys.features.map((f) => rows.get(r, f));
      let result = writeSystem(rows, r, sys.steps, user);
      const leaves = sys.leaves.filter((f) => !user(r, f));
      for (let t = 0; !result.inRange && leaves.length > 0 && t < MAX_REDRAWS; t++) {
        sys.features.forEach((f, i) => rows.set(r, f, before[i]));
        // One leaf at a time first (the row keeps the most of its drawn values), then all.
        for (const f of t < leaves.length ? [leaves[t]] : leaves) rows.set(r, f, draw(f, rng));
        result = writeSystem(rows, r, sys.steps, user);
      }
      if (!result.inRange && leaves.length > 0) {
        sys.features.forEach((f, i) => rows.set(r, f, before[i]));
        result = writeSystem(rows, r, sys.steps, user);
      }
      out.unrepaired += result.unrepaired;
      sys.features.forEach((f, i) => {
        if (rows.get(r, f) !== before[i]) out.changed++;
      });
    }
    for (const step of after) {
      // Parts a sum writes are redrawn through their system: its leaves drawn, the system written again.
      const touching = compiled.filter((sys) => step.parts.some((f) => sys.features.includes(f)));
      const leaves = [...new Set(touching.flatMap((sys) => sys.leaves))].filter((f) => !user(r, f));
      const rewrite = (): boolean => touching.every((sys) => writeSystem(rows, r, sys.steps, user).inRange && sys.steps.every((st) => st.parts.every((f) => rows.get(r, f) !== "")));
      keepRatio(rows, r, rng, given, draw, out, step, held, true, leaves, [...new Set(touching.flatMap((sys) => sys.features))], rewrite);
    }
    for (const step of after) keepRatio(rows, r, rng, given, draw, out, step, held, false);
  };
  return {
    keepRow,
    apply(rows, rng, given, draw, out) {
      const user = given ?? noneFixed;
      for (let r = 0; r < rows.length; r++) keepRow(rows, r, rng, user, draw, out);
    },
  };
}

/**
 * Writes one row's sums of a system in order (a sum's cells are fixed for the later ones once it
 * holds); `inRange` is false when a written cell falls outside its column's real range or
 * decimals, `unrepaired` counts the sums whose fixed cells break them.
 */
function writeSystem(rows: Cells, r: number, steps: readonly SumStep[], user: Fixed): Pick<EnforceResult, "unrepaired"> & { inRange: boolean } {
  const settled = new Set<number>();
  const fixed = (f: number): boolean => user(r, f) || settled.has(f);
  let unrepaired = 0;
  let inRange = true;
  for (const s of steps) {
    const kt = s.scaled(rows.get(r, s.total));
    const kp = s.parts.map((f) => s.scaled(rows.get(r, f)));
    if (kp.some((k) => k === undefined) || (kt === undefined && fixed(s.total))) continue;
    const ks = kp as number[];
    const want = Math.round(ks.reduce((acc, k, j) => acc + s.signs[j] * k, s.kk));
    if (kt !== want) {
      // Candidates in order: the total, then a part derived from the others (the last part first).
      const cands: [number, number][] = [];
      if (!fixed(s.total)) cands.push([s.total, want]);
      if (kt !== undefined) {
        for (let j = s.parts.length - 1; j >= 0; j--) {
          // A weighted part is derived only where the division is exact (on the part's grid).
          const x = (kt - (want - s.signs[j] * ks[j])) / s.signs[j];
          if (!fixed(s.parts[j]) && (Math.abs(s.signs[j]) === 1 || s.onGrid(s.parts[j], x))) cands.push([s.parts[j], Math.round(x)]);
        }
      }
      if (cands.length === 0) {
        unrepaired++;
        continue;
      }
      const fit = cands.find(([g, x]) => s.fits(g, x));
      if (!fit) inRange = false;
      const [f, k] = fit ?? cands[0];
      rows.set(r, f, s.write(f, k));
    }
    settled.add(s.total);
    for (const f of s.parts) settled.add(f);
  }
  return { unrepaired, inRange };
}

/** A cell's number (NaN: blank or not a number). */
function cellValue(text: string): number {
  return text === "" ? NaN : Number(text);
}

/**
 * Keeps one ratio in row r: a total off `factor · a^±1 · b^±1` is written from its parts, rounded
 * to its decimals (a band's total outside it: from its parts times a factor drawn from its quantiles, of a binned band its row's bin's). When that falls outside the total's real [min, max], the parts that no sum or
 * other ratio holds (and the user did not fix), and the leaves of the sum systems that write its
 * other parts (`sumLeaves`, their systems then written again by `rewriteSums`, which says whether
 * they stay in range), are redrawn from their marginals, one at a time and then together, up to
 * {@link MAX_REDRAWS} times (unless `redraw` is false); when every draw fails the row is restored
 * and the first value written (the identity holds, out of range). A fixed total that breaks it
 * counts as unrepaired.
 */
function keepRatio(
  rows: Cells,
  r: number,
  rng: Rng,
  user: Fixed,
  draw: DrawValue,
  out: EnforceResult,
  s: RatioStep,
  held: ReadonlySet<number>,
  redraw: boolean,
  sumLeaves: readonly number[] = [],
  sumCells: readonly number[] = [],
  rewriteSums: () => boolean = () => true,
): void {
  const read = (): number[] => s.parts.map((f) => cellValue(rows.get(r, f)));
  const xs = read();
  const verdict = ratioKept(cellValue(rows.get(r, s.total)), xs, s, s.totalDecimals, s.partDecimals);
  if (verdict === true || xs.some(Number.isNaN)) return;
  // A band's factor is drawn per row from its quantiles; an identity's is fixed.
  const k = s.quantiles ? drawFromQuantiles(s.binned !== undefined ? binQuantiles(s.binned, xs) : s.quantiles, rng) : s.factor;
  const raw = ratioValue(k, xs, s.powers);
  if (raw === undefined) return;
  // A band's total at the column's grain, where a point of it stays in the band.
  const onGrain = (x: number, ps: readonly number[]): number => s.snap?.(x, rng, (y) => ratioKept(y, ps, s, s.totalDecimals, s.partDecimals) === true && s.fits(y)) ?? x;
  const v = onGrain(raw, xs);
  if (user(r, s.total)) {
    out.unrepaired++;
    return;
  }
  const free = redraw ? [...s.parts.filter((f) => !held.has(f) && !user(r, f)), ...sumLeaves] : [];
  if (!s.fits(v) && free.length > 0) {
    const cells = [...new Set([...free, ...sumCells])];
    const before = cells.map((f) => rows.get(r, f));
    for (let t = 0; t < MAX_REDRAWS; t++) {
      for (const f of t < free.length ? [free[t]] : free) rows.set(r, f, draw(f, rng));
      const ps = read();
      const w0 = rewriteSums() ? ratioValue(s.binned !== undefined ? drawFromQuantiles(binQuantiles(s.binned, ps), rng) : k, ps, s.powers) : undefined;
      const w = w0 !== undefined && !Number.isNaN(w0) ? onGrain(w0, ps) : w0;
      if (w !== undefined && !Number.isNaN(w) && s.fits(w)) {
        cells.forEach((f, i) => {
          if (rows.get(r, f) !== before[i]) out.changed++;
        });
        rows.set(r, s.total, s.write(w));
        out.changed++;
        return;
      }
      cells.forEach((f, i) => rows.set(r, f, before[i]));
    }
  }
  rows.set(r, s.total, s.write(v));
  out.changed++;
}
