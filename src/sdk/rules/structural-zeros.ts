/**
 * The structural-zeros rules kept in decoded rows (`./enforce`, last step), all together, since a
 * column may take part in several. A row holding a forbidden pair has one cell of it rewritten
 * (with the other cells of the column's single fixed-combinations rule, if any, so education and
 * education-num move together). Cell (never a fixed one) and value are drawn together among the
 * values of their own (not pooled) and the blank (with the columns blank together with the cell)
 * that make no forbidden pair and break no rule the row kept; where no single cell fits, both cells
 * of the pair move together. Probability proportional to the value's shortfall against its quota
 * (`quotaScore`, as fixed combinations) times the likelihood ratio Π_g P(g | v) / Π_g P(g |
 * current) over the metadata's 2-way marginals (`../../rule-scores`), raised to
 * {@link ZERO_LIKELIHOOD_POWER}: a Gibbs step (Geman & Geman 1984) restricted to the allowed cells,
 * the quota in place of the prior. Rows are repaired in a seeded random order, each until it holds
 * no forbidden pair (at most {@link MAX_STEPS} rewrites); a row left with one is unrepaired.
 */
import type { Metadata, Rule, StructuralZerosRule } from "../../contract";
import { MISSING_KEY, OTHER } from "../columns";
import type { Rng } from "../generate/sfc32";
import type { Cells } from "../generate/batch";
import { pairConditionals, quotaScore, type PairConditional } from "../../rule-scores";
import { cellCoder, ruleChecker, ruleColumns, type RowCheck } from "./check";
import { noneFixed, type CompiledRule } from "./compiled-rule";

/**
 * Power of the likelihood ratio in a rewrite's score. Naive Bayes multiplies the 2-way conditionals
 * as if the other columns were independent given the value, so the product is overconfident; a
 * small power keeps the row coherent while the quota keeps the marginals (docs/api.md "Row rules").
 */
export const ZERO_LIKELIHOOD_POWER = 0.25;

/** Most cells of one row rewritten before the row is left unrepaired. */
export const MAX_STEPS = 8;

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
}

/** A fixed-combinations rule as rewrites use it: columns and released combinations (own codes). */
interface Combos {
  features: number[];
  tuples: number[][];
}

/** A rewrite of one row: cells (feature, code, text). */
type Move = { f: number; code: number; text: string }[];

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
  const broken = (r: number): ZeroTable | undefined => tables.find((z) => forbids(z, codesAt.get(z.fa)![r], codesAt.get(z.fb)![r]));
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
  const movesOf = (f: number, r: number, row: readonly string[], fixed: (r: number, f: number) => boolean): Move[] => {
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
    c.texts.forEach((text, code) => {
      if (text !== undefined && code !== cur) moves.push([{ f, code, text }]);
    });
    // Blank, with the columns blank together with it (a felt count and its intensity).
    const blank = c.toCode.get(MISSING_KEY);
    if (blank !== undefined && blank !== cur) {
      const partners = blankPartners.get(f) ?? [];
      if (!partners.some((g) => fixed(r, g))) moves.push([{ f, code: blank, text: "" }, ...partners.map((g) => ({ f: g, code: column(g).toCode.get(MISSING_KEY) ?? -1, text: "" }))]);
    }
    return moves;
  };
  return {
    apply(rows: Cells, rng: Rng, given, _draw, out, gen) {
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
        const h = new Float64Array(c.texts.length);
        for (const x of codesAt.get(c.f)!) if (x >= 0 && x < h.length) h[x]++;
        held.set(c.f, h);
      }
      const scores: number[] = [];
      const picks: Move[] = [];
      for (const r of order) {
        let z = broken(r);
        const row = meta.features.map((_, g) => rows.get(r, g));
        for (let step = 0; z && step < MAX_STEPS; step++) {
          scores.length = 0;
          picks.length = 0;
          const before = new Map<number, { was: (boolean | undefined)[]; lik: number }>();
          const stateOf = (f: number) => {
            let x = before.get(f);
            if (!x) before.set(f, (x = { was: column(f).guards.map((g) => g(row)), lik: logLik(column(f), r, codeIn(f, r, row), gen) }));
            return x;
          };
          for (const f of [z.fa, z.fb]) {
            if (fixed(r, f)) continue;
            const c = column(f);
            const h = held.get(f)!;
            for (const move of movesOf(f, r, row, fixed)) {
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
            for (const a of jointValues(ca)) {
              for (const b of jointValues(cb)) {
                const move: Move = [a, b];
                const lik = tryMove(move, r, row, gen, stateOf);
                if (lik === undefined) continue;
                scores.push(Math.log(quotaScore(n * (ca.probs[a.code] ?? 0), ha[a.code])) + Math.log(quotaScore(n * (cb.probs[b.code] ?? 0), hb[b.code])) + ZERO_LIKELIHOOD_POWER * lik);
                picks.push(move);
              }
            }
          }
          if (picks.length === 0) break;
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
          z = broken(r);
        }
        if (z) out.unrepaired++;
      }
      codesAt.clear();
    },
  };

  /** A column's cells a joint move may write: its values of their own, and its blank when it has one. */
  function jointValues(c: ZeroColumn): { f: number; code: number; text: string }[] {
    const out: { f: number; code: number; text: string }[] = [];
    c.texts.forEach((text, code) => {
      if (text !== undefined) out.push({ f: c.f, code, text });
    });
    const blank = c.toCode.get(MISSING_KEY);
    if (blank !== undefined) out.push({ f: c.f, code: blank, text: "" });
    return out;
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
