/**
 * The structural-zeros rules kept in decoded rows (`./enforce`, last step), all together, since a
 * column may take part in several. A row holding a forbidden pair has one cell of it rewritten
 * (with the other cells of the column's single fixed-combinations rule, if any, so education and
 * education-num move together). Cell (never a fixed one) and value are drawn together among the
 * values of their own (not pooled) and the blank (with the columns blank together with the cell)
 * that make no forbidden pair and break no rule the row kept; a column of interval bins (whose
 * codes have no text) offers the blank and one number drawn from its 1-way marginal per step.
 * Where no single cell fits, both cells of the pair move together, among all value pairs while
 * there are at most {@link JOINT_CANDIDATES}, else among that many drawn by the values' real
 * shares ({@link jointPairs}). Probability proportional to the value's shortfall against its quota
 * (`quotaScore`, as fixed combinations) times the likelihood ratio Π_g P(g | v) / Π_g P(g |
 * current) over the metadata's 2-way marginals (`../../rule-scores`), raised to
 * {@link ZERO_LIKELIHOOD_POWER}: a Gibbs step (Geman & Geman 1984) restricted to the allowed cells,
 * the quota in place of the prior. Rows are repaired in a seeded random order, each until it holds
 * no forbidden pair (at most {@link MAX_STEPS} rewrites; a pair no rewrite fits is passed over for
 * the row's next one until a rewrite lands). A row the moves leave with one goes to `settle`, a
 * bounded search over the columns of its broken rules and their neighbours; a row that leaves
 * with one too is unrepaired. A blank cell filled fills its blank-together partners with draws.
 */
import type { Metadata, Rule, StructuralZerosRule } from "../../contract";
import { MISSING_KEY, OTHER } from "../columns";
import type { Rng } from "../generate/sfc32";
import type { Cells } from "../generate/batch";
import { pairConditionals, quotaScore, type PairConditional } from "../../rule-scores";
import { cellCoder, ruleChecker, ruleColumns, type RowCheck } from "./check";
import { noneFixed, type CompiledRule, type EnforceResult } from "./compiled-rule";

/**
 * Power of the likelihood ratio in a rewrite's score. Naive Bayes multiplies the 2-way conditionals
 * as if the other columns were independent given the value, so the product is overconfident; a
 * small power keeps the row coherent while the quota keeps the marginals (docs/api.md "Row rules").
 */
export const ZERO_LIKELIHOOD_POWER = 0.25;

/** Most cells of one row rewritten before the row is left unrepaired. */
export const MAX_STEPS = 8;

/** Most rewrites {@link structuralZeros}' last resort tries for one row before leaving it unrepaired. */
export const SETTLE_BUDGET = 4096;

/** Largest code space of one rule held as a flat table. */
const FLAT_MAX = 1 << 22;

interface ZeroTable {
  /** Feature indices of the two columns. */
  fa: number;
  fb: number;
  KB: number;
  /** Forbidden code pairs, flat (a * KB + b) or as a Set beyond {@link FLAT_MAX}. */
  flat?: Uint8Array;
  set?: Set<number>;
}

function forbids(z: ZeroTable, a: number, b: number): boolean {
  if (a < 0 || b < 0) return false;
  const key = a * z.KB + b;
  return z.flat ? z.flat[key] === 1 : z.set!.has(key);
}

/** Per column a rewrite may touch: how its texts read as codes, and what it can be rewritten to. */
interface ZeroColumn {
  f: number;
  /** Exact text -> code (`value_mappings`), the batch's fast path. */
  toCode: ReadonlyMap<string, number>;
  /** Any text -> code, as `./check` reads it (undefined: none). */
  coder: (text: string) => number | undefined;
  /** Code -> the text a rewrite writes (codes of their own only: not pooled, not blank). */
  texts: (string | undefined)[];
  /** Structural-zeros rules with this column, and the side it is on. */
  rules: { z: ZeroTable; first: boolean }[];
  /** Conditionals P(g | this column) from the metadata's 2-way marginals, and their logs. */
  conditionals: PairConditional[];
  logTables: Float64Array[];
  /** The metadata's other rules over this column (checked on the whole row). */
  guards: RowCheck[];
  /** The column's only fixed-combinations rule, if any: a rewrite moves to a combination of it. */
  combos?: Combos;
  /** The real 1-way share of each code (`empirical_probs`): a batch's quota of the code. */
  probs: readonly number[];
  /** Interval bins (`bin_edges`): no text per code; a rewrite writes a drawn number (or the blank). */
  binned: boolean;
  /** {@link jointValues}' cells and their cumulative weights (real share, at least a floor), built once. */
  joint?: { cells: Cell[]; cum: Float64Array };
}

/** One cell a rewrite writes: feature, code, text. */
type Cell = { f: number; code: number; text: string };

/** A fixed-combinations rule as rewrites use it: columns and released combinations (own codes). */
interface Combos {
  features: number[];
  tuples: number[][];
}

/** A rewrite of one row: cells (feature, code, text). */
type Move = Cell[];

/**
 * Candidate pairs of a joint move, at most: a pair of columns with more value pairs than this
 * draws this many (by their real shares) instead of trying each, so two columns of 5,000 values
 * cost a row 1,024 checks, not 25 million.
 */
export const JOINT_CANDIDATES = 1024;

/** Fixed-combinations rules with more released combinations than this are moved cell by cell. */
const MAX_COMBO_MOVES = 2000;

/**
 * All `structural_zeros` rules of `rules` as one compiled rule (undefined when none is over known,
 * non-identifier columns).
 * @param others the metadata's other rules: a rewrite never breaks one the row kept.
 */
export function structuralZeros(meta: Metadata, rules: readonly StructuralZerosRule[], others: readonly Rule[]): CompiledRule | undefined {
  const at = (name: string) => meta.features.indexOf(name);
  const isId = (f: number) => meta.column_stats?.[meta.features[f]]?.type === "id";
  const tables: ZeroTable[] = [];
  for (const rule of rules) {
    const [fa, fb] = rule.columns.map(at);
    if (fa < 0 || fb < 0 || isId(fa) || isId(fb)) continue;
    const KA = meta.cardinalities[meta.features[fa]] ?? 0;
    const KB = meta.cardinalities[meta.features[fb]] ?? 0;
    const z: ZeroTable = { fa, fb, KB };
    if (KA * KB <= FLAT_MAX) z.flat = new Uint8Array(KA * KB);
    else z.set = new Set();
    for (const [a, b] of rule.pairs) {
      if (a >= KA || b >= KB) continue;
      if (z.flat) z.flat[a * KB + b] = 1;
      else z.set!.add(a * KB + b);
    }
    tables.push(z);
  }
  if (tables.length === 0) return undefined;
  const columns = new Map<number, ZeroColumn>();
  const column = (f: number): ZeroColumn => {
    const known = columns.get(f);
    if (known) return known;
    const name = meta.features[f];
    const mapping = meta.value_mappings?.[name] ?? {};
    const probs = meta.empirical_probs[name] ?? [];
    const texts: (string | undefined)[] = [];
    for (const [text, code] of Object.entries(mapping)) if (texts[code] === undefined) texts[code] = text;
    for (const special of [OTHER, MISSING_KEY]) if (Object.hasOwn(mapping, special)) texts[mapping[special]] = undefined;
    const guards: RowCheck[] = [];
    const fixedRules: Rule[] = [];
    for (const r of others) {
      if (r.type === "structural_zeros" || !ruleColumns(r).includes(name)) continue;
      if (r.type === "fixed_combinations") fixedRules.push(r);
      try {
        guards.push(ruleChecker(r, meta));
      } catch {
        // A rule the checker cannot read (a column the metadata lacks) `./enforce` ignores too.
      }
    }
    const conditionals = pairConditionals(meta, meta.features, [f], isId)[0];
    const c: ZeroColumn = {
      f,
      toCode: new Map(Object.entries(mapping)),
      coder: cellCoder(name, meta),
      texts,
      rules: [],
      conditionals,
      logTables: conditionals.map((x) => x.table.map(Math.log)),
      guards,
      probs,
      binned: meta.column_stats?.[name]?.bin_edges !== undefined,
    };
    columns.set(f, c);
    const only = fixedRules.length === 1 ? fixedRules[0] : undefined;
    if (only?.type === "fixed_combinations" && only.combinations.length <= MAX_COMBO_MOVES) {
      const features = only.columns.map(at);
      if (features.every((g) => g >= 0 && !isId(g))) {
        const models = features.map((g) => (g === f ? c : column(g)));
        const tuples = only.combinations.filter((t) => t.length === features.length && t.every((code, j) => models[j].texts[code] !== undefined));
        c.combos = { features, tuples: tuples.map((t) => [...t]) };
      }
    }
    return c;
  };
  for (const z of tables) {
    column(z.fa).rules.push({ z, first: true });
    column(z.fb).rules.push({ z, first: false });
  }
  const zeroCols = [...columns.values()].filter((c) => c.rules.length > 0);
  // Per column, the other columns of the blank-together rules it is in.
  const blankPartners = new Map<number, number[]>();
  for (const r of others) {
    if (r.type !== "blank_together") continue;
    const fs = r.columns.map(at);
    if (fs.some((g) => g < 0)) continue;
    for (const f of fs) blankPartners.set(f, [...new Set([...(blankPartners.get(f) ?? []), ...fs.filter((g) => g !== f)])]);
  }
  // The rows' codes per column of some structural-zeros rule, for the batch being repaired.
  const codesAt = new Map<number, Int32Array>();
  // The first rule row r breaks, past those in `stuck` (no rewrite fits them now).
  const broken = (r: number, stuck?: ReadonlySet<ZeroTable>): ZeroTable | undefined =>
    tables.find((z) => !stuck?.has(z) && forbids(z, codesAt.get(z.fa)![r], codesAt.get(z.fb)![r]));
  // The code of feature g in row r: the batch's reading for a zero column, else its text read now.
  const codeIn = (g: number, r: number, row: readonly string[]): number => codesAt.get(g)?.[r] ?? column(g).coder(row[g]) ?? -1;
  // log Π_h P(h | code) over the conditionals whose other column has a code in row r.
  const logLik = (c: ZeroColumn, r: number, code: number, gen: readonly ArrayLike<number>[] | undefined): number => {
    if (code < 0) return 0;
    let l = 0;
    for (let k = 0; k < c.conditionals.length; k++) {
      const { g, Kg } = c.conditionals[k];
      const y = codesAt.has(g) ? codesAt.get(g)![r] : gen?.[g]?.[r];
      if (y === undefined || y < 0 || y >= Kg) continue;
      l += c.logTables[k][code * Kg + y];
    }
    return l;
  };
  // The moves rewriting column f of row r: to each combination of its fixed-combinations rule
  // (keeping the fixed cells), or to each value of its own.
  const movesOf = (
    f: number,
    r: number,
    row: readonly string[],
    fixed: (r: number, f: number) => boolean,
    drawn: Cell | undefined,
    fills: (f: number, r: number, row: readonly string[]) => Cell[] | undefined,
  ): Move[] => {
    const c = column(f);
    const cur = codeIn(f, r, row);
    const moves: Move[] = [];
    if (c.combos) {
      const { features, tuples } = c.combos;
      const now = features.map((g) => codeIn(g, r, row));
      const j = features.indexOf(f);
      for (const t of tuples) {
        if (t[j] === cur || features.some((g, x) => fixed(r, g) && t[x] !== now[x])) continue;
        const move: Move = [];
        features.forEach((g, x) => {
          if (t[x] !== now[x]) move.push({ f: g, code: t[x], text: column(g).texts[t[x]]! });
        });
        moves.push(move);
      }
      return moves;
    }
    // A blank cell filled fills the columns blank together with it (a sale count and its volume).
    const with_ = fills(f, r, row);
    if (with_) {
      c.texts.forEach((text, code) => {
        if (text !== undefined && code !== cur) moves.push([{ f, code, text }, ...with_]);
      });
      if (drawn && drawn.code !== cur) moves.push([drawn, ...with_]);
    }
    const blank = blankMove(f, r, fixed);
    if (blank && blank[0].code !== cur) moves.push(blank);
    return moves;
  };
  // Column f written blank, with the columns blank together with it (undefined: no blank, or one of them fixed).
  const blankMove = (f: number, r: number, fixed: (r: number, f: number) => boolean): Move | undefined => {
    const blank = column(f).toCode.get(MISSING_KEY);
    const partners = blankPartners.get(f) ?? [];
    if (blank === undefined || partners.some((g) => fixed(r, g))) return undefined;
    return [{ f, code: blank, text: "" }, ...partners.map((g) => ({ f: g, code: column(g).toCode.get(MISSING_KEY) ?? -1, text: "" }))];
  };
  return {
    apply(rows: Cells, rng: Rng, given, draw, out, gen) {
      const fixed = given ?? noneFixed;
      const n = rows.length;
      readCodes(rows);
      // Rows off the rules, in a seeded random order so the quotas favour no part of the batch.
      const order: number[] = [];
      for (let r = 0; r < n; r++) if (broken(r)) order.push(r);
      if (order.length === 0) return void codesAt.clear();
      rng.shuffle(order);
      // Per zero column, the batch's rows per code (the quotas' "held").
      const held = new Map<number, Float64Array>();
      for (const c of zeroCols) {
        const h = new Float64Array(Math.max(c.texts.length, c.probs.length));
        for (const x of codesAt.get(c.f)!) if (x >= 0 && x < h.length) h[x]++;
        held.set(c.f, h);
      }
      const scores: number[] = [];
      const picks: Move[] = [];
      // A binned column's number: one drawn from its 1-way marginal per rewrite step.
      const drawnOf = (f: number): Cell | undefined => (column(f).binned ? drawnCell(f) : undefined);
      const drawnCell = (f: number): Cell | undefined => {
        const text = draw(f, rng);
        const code = column(f).coder(text);
        return code === undefined || code < 0 ? undefined : { f, code, text };
      };
      // The cells that fill the blank partners of blank cell f (none when f is filled; undefined when a partner is fixed).
      const fills = (f: number, r: number, row: readonly string[]): Cell[] | undefined => {
        const partners = blankPartners.get(f);
        if (!partners || row[f] !== "") return [];
        const cells: Cell[] = [];
        for (const g of partners) {
          if (row[g] !== "") continue;
          const cell = fixed(r, g) ? undefined : drawnCell(g);
          if (!cell) return undefined;
          cells.push(cell);
        }
        return cells;
      };
      for (const r of order) {
        let z = broken(r);
        const row = meta.features.map((_, g) => rows.get(r, g));
        // A rule no rewrite fits is passed over for the row's next one (a rewrite there may free it).
        const stuck = new Set<ZeroTable>();
        for (let step = 0; z && step < MAX_STEPS; ) {
          scores.length = 0;
          picks.length = 0;
          const before = new Map<number, { was: (boolean | undefined)[]; lik: number }>();
          const stateOf = (f: number) => {
            let x = before.get(f);
            if (!x) before.set(f, (x = { was: column(f).guards.map((g) => g(row)), lik: logLik(column(f), r, codeIn(f, r, row), gen) }));
            return x;
          };
          const drawn = [z.fa, z.fb].map((f) => (fixed(r, f) ? undefined : drawnOf(f)));
          for (const [side, f] of [z.fa, z.fb].entries()) {
            if (fixed(r, f)) continue;
            const c = column(f);
            const h = held.get(f)!;
            for (const move of movesOf(f, r, row, fixed, drawn[side], fills)) {
              if (move.some((m) => fixed(r, m.f))) continue;
              const lik = tryMove(move, r, row, gen, stateOf);
              if (lik === undefined) continue;
              // The new code's quota score times the likelihood.
              const code = move.find((m) => m.f === f)!.code;
              scores.push(Math.log(quotaScore(n * (c.probs[code] ?? 0), h[code])) + ZERO_LIKELIHOOD_POWER * lik);
              picks.push(move);
            }
          }
          // No single cell fits: both cells of the pair together (a blank among their values, so a
          // pair blank together moves as one), each side among its values of its own.
          if (picks.length === 0 && !fixed(r, z.fa) && !fixed(r, z.fb) && !column(z.fa).combos && !column(z.fb).combos) {
            const [ca, cb] = [column(z.fa), column(z.fb)];
            const [ha, hb] = [held.get(z.fa)!, held.get(z.fb)!];
            const [ja, jb] = [jointValues(ca), jointValues(cb)];
            // A binned side's number: the step's drawn one.
            const cellOf = (j: { cells: Cell[] }, x: number, d: Cell | undefined): Cell | undefined => (x < j.cells.length ? j.cells[x] : d);
            const [na, nb] = [ja.cells.length + (drawn[0] ? 1 : 0), jb.cells.length + (drawn[1] ? 1 : 0)];
            for (const [x, y] of jointPairs(na, nb, (i) => weightAt(ja, i, drawn[0]), (i) => weightAt(jb, i, drawn[1]), rng)) {
              const a = cellOf(ja, x, drawn[0])!;
              const b = cellOf(jb, y, drawn[1])!;
              const move: Move = [a, b];
              const lik = tryMove(move, r, row, gen, stateOf);
              if (lik === undefined) continue;
              scores.push(Math.log(quotaScore(n * (ca.probs[a.code] ?? 0), ha[a.code])) + Math.log(quotaScore(n * (cb.probs[b.code] ?? 0), hb[b.code])) + ZERO_LIKELIHOOD_POWER * lik);
              picks.push(move);
            }
          }
          if (picks.length === 0) {
            stuck.add(z);
            z = broken(r, stuck);
            continue;
          }
          const top = Math.max(...scores);
          let total = 0;
          for (let i = 0; i < scores.length; i++) total += scores[i] = Math.exp(scores[i] - top);
          let u = rng.next() * total;
          let pick = picks[picks.length - 1];
          for (let i = 0; i < scores.length; i++) {
            u -= scores[i];
            if (u < 0) {
              pick = picks[i];
              break;
            }
          }
          for (const m of pick) {
            rows.set(r, m.f, m.text);
            row[m.f] = m.text;
            const codes = codesAt.get(m.f);
            if (codes) {
              const h = held.get(m.f)!;
              if (codes[r] >= 0) h[codes[r]]--;
              h[m.code]++;
              codes[r] = m.code;
            }
            out.changed++;
          }
          step++;
          stuck.clear();
          z = broken(r);
        }
        if (broken(r) && !settle(r, row, rows, fixed, rng, held, n, out, drawnOf, fills, gen)) out.unrepaired++;
      }
      codesAt.clear();
    },
  };

  /**
   * The last resort for a row the moves leave broken (several columns disagree, so every single or
   * paired move still meets a forbidden pair with a cell not yet moved): a depth-first search with
   * backtracking over the columns of the row's broken rules and the columns that share a rule with
   * them (a pair that holds now may have to change too), fixed cells aside, at most
   * {@link SETTLE_BUDGET} rewrites tried, with forward checking (a branch ends as soon as a column
   * left has no value that fits; Haralick & Elliott 1980). Columns are assigned in turn, those in the fewest broken
   * pairs first, so the last to change are the cells that agree with most of the row: each keeps its
   * value when that makes no forbidden pair with the columns already assigned, else takes one of its
   * values (a binned column's: and a number drawn from its marginal; a blank cell filled fills its
   * blank-together partners) that makes none and breaks no rule the row kept, tried in a random order
   * weighted as the moves' scores (quota score times the likelihood ratio). A row no assignment
   * settles is left as it was and false returned.
   */
  function settle(
    r: number,
    row: string[],
    rows: Cells,
    fixed: (r: number, f: number) => boolean,
    rng: Rng,
    held: Map<number, Float64Array>,
    n: number,
    out: EnforceResult,
    drawnOf: (f: number) => Cell | undefined,
    fills: (f: number, r: number, row: readonly string[]) => Cell[] | undefined,
    gen: readonly ArrayLike<number>[] | undefined,
  ): boolean {
    const codeOf = (f: number): number => codeIn(f, r, row);
    const count = new Map<number, number>();
    for (const z of tables) {
      if (!forbids(z, codeOf(z.fa), codeOf(z.fb))) continue;
      for (const f of [z.fa, z.fb]) count.set(f, (count.get(f) ?? 0) + 1);
    }
    const scope = new Set(count.keys());
    for (const f of count.keys()) for (const { z } of column(f).rules) scope.add(z.fa).add(z.fb);
    const order = [...scope].filter((f) => !fixed(r, f)).sort((a, b) => (count.get(a) ?? 0) - (count.get(b) ?? 0) || a - b);
    const open = new Set(order);
    const fits = (f: number, code: number): boolean =>
      column(f).rules.every(({ z }) => {
        if (open.has(z.fa === f ? z.fb : z.fa)) return true;
        return !forbids(z, z.fa === f ? code : codeOf(z.fa), z.fb === f ? code : codeOf(z.fb));
      });
    // The row's guards before the search, per column a rewrite may touch.
    const was = new Map<number, (boolean | undefined)[]>();
    for (const f of order) for (const g of [f, ...(blankPartners.get(f) ?? [])]) if (!was.has(g)) was.set(g, column(g).guards.map((x) => x(row)));
    const keeps = (m: Cell): boolean => column(m.f).guards.every((g, i) => was.get(m.f)![i] === false || g(row) !== false);
    const put = (m: Cell): void => {
      row[m.f] = m.text;
      const codes = codesAt.get(m.f);
      if (codes) codes[r] = m.code;
    };
    // Per column, its rewrites that break no rule the row kept when written alone into the row as
    // it was, in a random order weighted by their score: the search's domains.
    const domain = new Map<number, { move: Move; code: number }[]>();
    for (const f of order) {
      const c = column(f);
      const h = held.get(f)!;
      const cur = codeOf(f);
      const drawn = drawnOf(f);
      const filled = fills(f, r, row);
      const now = logLik(c, r, cur, gen);
      const keyed: { move: Move; code: number; key: number }[] = [];
      for (const cell of drawn ? [...jointValues(c).cells, drawn] : jointValues(c).cells) {
        if (cell.code === cur) continue;
        const move = cell.text === "" ? blankMove(f, r, fixed) : filled && [cell, ...filled];
        if (!move) continue;
        const before = move.map((m) => ({ f: m.f, code: codeOf(m.f), text: row[m.f] }));
        move.forEach(put);
        const kept = move.every(keeps);
        const lik = kept ? Math.exp(ZERO_LIKELIHOOD_POWER * (logLik(c, r, cell.code, gen) - now)) : 0;
        before.forEach(put);
        if (!kept) continue;
        // Exponential keys (Efraimidis & Spirakis 2006): ascending order is a weighted draw without replacement.
        const weight = Math.max(quotaScore(n * (c.probs[cell.code] ?? 0), h[cell.code] ?? 0) * lik, 1e-12);
        keyed.push({ move, code: cell.code, key: -Math.log(1 - rng.next()) / weight });
      }
      domain.set(f, keyed.sort((x, y) => x.key - y.key));
    }
    // Forward checking: every open column still has a value that fits the columns assigned.
    const alive = (): boolean => order.every((g) => !open.has(g) || fits(g, codeOf(g)) || domain.get(g)!.some((o) => fits(g, o.code)));
    let budget = SETTLE_BUDGET;
    const search = (k: number): boolean => {
      if (k === order.length) return !broken(r) && [...was.keys()].every((f) => keeps({ f, code: codeOf(f), text: row[f] }));
      const f = order[k];
      open.delete(f);
      if (fits(f, codeOf(f)) && alive() && search(k + 1)) return true;
      for (const { move, code } of domain.get(f)!) {
        if (code === codeOf(f) || !fits(f, code)) continue;
        if (budget-- <= 0) break;
        const before = move.map((m) => ({ f: m.f, code: codeOf(m.f), text: row[m.f] }));
        move.forEach(put);
        if (move.every(keeps) && alive() && search(k + 1)) return true;
        before.forEach(put);
      }
      open.add(f);
      return false;
    };
    const start = [...was.keys()].map((f) => ({ f, code: codeOf(f), text: row[f] }));
    if (!search(0)) return false;
    for (const s of start) {
      if (row[s.f] === s.text) continue;
      const h = held.get(s.f);
      const code = codeOf(s.f);
      if (h && s.code >= 0) h[s.code]--;
      if (h && code >= 0) h[code]++;
      rows.set(r, s.f, row[s.f]);
      out.changed++;
    }
    return true;
  }

  /**
   * A column's cells a joint move may write: its values of their own, and its blank when it has
   * one (a binned column's drawn number comes after them), with cumulative weights: each cell's
   * real share, at least 1/(cells) of it so no value is out of reach.
   */
  function jointValues(c: ZeroColumn): { cells: Cell[]; cum: Float64Array } {
    if (c.joint) return c.joint;
    const cells: Cell[] = [];
    c.texts.forEach((text, code) => {
      if (text !== undefined) cells.push({ f: c.f, code, text });
    });
    const blank = c.toCode.get(MISSING_KEY);
    if (blank !== undefined) cells.push({ f: c.f, code: blank, text: "" });
    const cum = new Float64Array(cells.length);
    let total = 0;
    cells.forEach((cell, i) => (cum[i] = total += Math.max(c.probs[cell.code] ?? 0, 1 / (cells.length + 1) ** 2)));
    return (c.joint = { cells, cum });
  }

  /** The weight of cell i of a joint list (past its end: the drawn number, weighted as the list's mean). */
  function weightAt(j: { cells: Cell[]; cum: Float64Array }, i: number, drawn: Cell | undefined): number {
    const n = j.cells.length;
    if (i < n) return j.cum[i] - (i > 0 ? j.cum[i - 1] : 0);
    return drawn && n > 0 ? j.cum[n - 1] / n : 1;
  }

  /** Reads every zero column's codes into `codesAt` (a blank cell as the blank code, as `./check`; none: no pair). */
  function readCodes(rows: Cells): void {
    const n = rows.length;
    for (const c of zeroCols) {
      const fast = rows.codesOf ? Int32Array.from(rows.codesOf(c.f, c.toCode)) : undefined;
      const codes = new Int32Array(n);
      for (let r = 0; r < n; r++) {
        const known = fast !== undefined && fast[r] >= 0;
        const text = known ? "" : rows.get(r, c.f);
        codes[r] = known ? fast[r] : text === "" ? (c.toCode.get(MISSING_KEY) ?? -1) : (c.coder(text) ?? -1);
      }
      codesAt.set(c.f, codes);
    }
  }

  /**
   * The log-likelihood `move` adds to row r (new codes' log Π_h P(h | code) less the current's), or
   * undefined when it makes a forbidden pair or breaks a rule the row kept (`stateOf(f)`: the row's
   * state before any move). Leaves the row and codes as they were.
   */
  function tryMove(
    move: Move,
    r: number,
    row: string[],
    gen: readonly ArrayLike<number>[] | undefined,
    stateOf: (f: number) => { was: (boolean | undefined)[]; lik: number },
  ): number | undefined {
    const keep = move.map((m) => ({ text: row[m.f], code: codesAt.get(m.f)?.[r] }));
    const states = move.map((m) => stateOf(m.f));
    move.forEach((m) => {
      row[m.f] = m.text;
      const codes = codesAt.get(m.f);
      if (codes) codes[r] = m.code;
    });
    let lik: number | undefined = 0;
    for (let x = 0; lik !== undefined && x < move.length; x++) {
      const c = column(move[x].f);
      if (c.rules.some(({ z }) => forbids(z, codesAt.get(z.fa)![r], codesAt.get(z.fb)![r]))) lik = undefined;
      else if (c.guards.some((g, i) => states[x].was[i] !== false && g(row) === false)) lik = undefined;
      else lik += logLik(c, r, move[x].code, gen) - states[x].lik;
    }
    move.forEach((m, x) => {
      row[m.f] = keep[x].text;
      const codes = codesAt.get(m.f);
      if (codes) codes[r] = keep[x].code!;
    });
    return lik;
  }
}

/**
 * The (i, j) index pairs a joint move tries, of na x nb: all of them while there are at most
 * {@link JOINT_CANDIDATES}, else that many drawn from `rng` with probability proportional to
 * weightA(i) · weightB(j) (repeats dropped). Cost O(na + nb + JOINT_CANDIDATES · log(na + nb)).
 */
export function jointPairs(na: number, nb: number, weightA: (i: number) => number, weightB: (j: number) => number, rng: Rng): [number, number][] {
  const out: [number, number][] = [];
  if (na * nb <= JOINT_CANDIDATES) {
    for (let i = 0; i < na; i++) for (let j = 0; j < nb; j++) out.push([i, j]);
    return out;
  }
  const cumulative = (k: number, w: (i: number) => number): Float64Array => {
    const c = new Float64Array(k);
    let t = 0;
    for (let i = 0; i < k; i++) c[i] = t += Math.max(0, w(i));
    return c;
  };
  const [ca, cb] = [cumulative(na, weightA), cumulative(nb, weightB)];
  const seen = new Set<number>();
  for (let t = 0; t < JOINT_CANDIDATES; t++) {
    const [i, j] = [rng.pickCumulative(ca), rng.pickCumulative(cb)];
    if (seen.has(i * nb + j)) continue;
    seen.add(i * nb + j);
    out.push([i, j]);
  }
  return out;
}
