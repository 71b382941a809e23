/**
 * Row rules kept exactly (docs/api.md "Row rules"): after the decoder writes a batch, every rule
 * of `metadata.rules` is made to hold in every row by changing as few cells as it can, never by
 * dropping a row. The model is unchanged; this is a last, seeded step on the decoded text.
 *
 * Per rule, in this order (later steps never break what earlier ones fixed, for the rule kinds
 * the SDK detects together; see the tests):
 * 1. blank together: a mixed row follows its first fixed column, else the rule's first column:
 *    all blank, or the blanks filled with draws from their 1-way marginals.
 * 2. not equal: equal cells redraw the second column (the first when the second is fixed) from
 *    its marginal, up to {@link MAX_REDRAWS} times.
 * 3. catalogs (`./catalog`), then fixed combinations (`./fixed-combinations`).
 * 3b. public attributes: the column is written as its key's attribute (`../semantic/attributes`);
 *    embedded codes: the identifier's characters at the rule's offset are the row's code.
 * 4. sum: `total` is written from the parts in exact decimal arithmetic; when that falls outside
 *    the total's real [min, max] or `total` is fixed, the first unfixed part whose derived value is
 *    in range and exact at its decimals is derived instead (else the total, even out of range).
 *    Sums sharing columns go inner first, and the cells of a sum kept in a row are fixed for the
 *    later ones.
 * 5. inequality: `high < low` (`<=` when strict) swaps the two when both columns write values
 *    alike; else the unfixed one is redrawn until it holds, up to {@link MAX_REDRAWS} times.
 * 6. structural zeros, all together: `./structural-zeros`.
 * A row whose fixed cells themselves break a rule is left as given: the user's cells are never
 * rewritten. Identifier columns take part in no rule.
 */
import type { ColumnStats, Metadata, PublicAttribute, PublicVocabulary, Rule } from "../../contract";
import { Rng, deriveSeed } from "../generate/sfc32";
import { cellNumber } from "./check";
import type { Cells } from "../generate/batch";
import { fixedCombinations } from "./fixed-combinations";
import { catalog } from "./catalog";
import { structuralZeros } from "./structural-zeros";
import { noneFixed, type CompiledRule, type DrawValue, type EnforceResult, type Fixed } from "./compiled-rule";

export type { DrawValue, EnforceResult };

/** Most redraws of one cell before a rule is left broken in that row. */
export const MAX_REDRAWS = 64;

/** Keeps `metadata.rules` in decoded rows (file header). */
export class RuleEnforcer {
  private readonly compiled: CompiledRule[];
  /** With sums sharing columns: the cells (r * features + f) of the sums already kept in the batch. */
  private readonly written?: SumLedger;

  /** @param metadata the model's; rules naming unknown columns are ignored (checked at Create). */
  constructor(readonly metadata: Metadata) {
    const rules = [...(metadata.rules ?? [])];
    const sumColumns = rules.flatMap((r) => (r.type === "sum" ? [r.total, ...r.parts] : []));
    if (new Set(sumColumns).size < sumColumns.length) this.written = { cells: new Set(), width: metadata.features.length };
    const order: Rule["type"][] = ["blank_together", "not_equal", "catalog", "fixed_combinations", "public_attribute", "embedded_code", "sum", "inequality"];
    const rest = sumsInnerFirst(rules.filter((r) => r.type !== "structural_zeros"));
    rest.sort((a, b) => order.indexOf(a.type) - order.indexOf(b.type));
    this.compiled = rest.map((r) => compile(metadata, r, this.written)).filter((c): c is CompiledRule => c !== undefined);
    const zeros = structuralZeros(metadata, rules.filter((r) => r.type === "structural_zeros"), rest);
    if (zeros) this.compiled.push(zeros);
  }

  /** True when there is a rule to keep. */
  get active(): boolean {
    return this.compiled.length > 0;
  }

  /**
   * Rewrites cells of `rows` in place (`rows.get(r, f)` in `metadata.features` order) so every
   * rule holds; the same rows, seed and fixed cells give the same output.
   * @param fixed true for a cell the user fixed (`where` column, seed cell): never rewritten.
   * @param draw  draws a non-blank value of a column (the decoder's, so values keep their grain).
   * @param codes the rows' generated codes (`codes[f][r]`): a broken combination is then replaced
   *   by one likely given the row's other columns; without them, by counts alone.
   */
  apply(rows: Cells, seed: number, draw: DrawValue, fixed?: Fixed, codes?: readonly ArrayLike<number>[]): EnforceResult {
    const out: EnforceResult = { changed: 0, unrepaired: 0 };
    this.written?.cells.clear();
    this.compiled.forEach((rule, i) => rule.apply(rows, new Rng(deriveSeed(seed, 0x52554c45, i)), fixed, draw, out, codes));
    return out;
  }
}

/** The cells of the sums kept so far in one batch, shared by the batch's sum rules. */
interface SumLedger {
  cells: Set<number>;
  /** Features per row: cell (r, f) is r * width + f. */
  width: number;
}

/**
 * The rules with the sums in an order where a sum whose total is a part of another comes first
 * (`private = goods + private services` before `nonfarm = private + government`), so a system of
 * identities sharing columns is written inner to outer and each holds; other rules keep their
 * places. A cycle keeps the given order.
 */
function sumsInnerFirst(rules: Rule[]): Rule[] {
  const sums = rules.filter((r): r is Extract<Rule, { type: "sum" }> => r.type === "sum");
  if (sums.length < 2) return rules;
  const ordered: Rule[] = [];
  const left = new Set(sums);
  while (left.size > 0) {
    // The first sum none of whose parts is the total of a sum still left (none: a cycle, the first).
    const next = [...left].find((r) => ![...left].some((o) => o !== r && r.parts.includes(o.total))) ?? [...left][0];
    ordered.push(next);
    left.delete(next);
  }
  let j = 0;
  return rules.map((r) => (r.type === "sum" ? ordered[j++] : r));
}

function compile(meta: Metadata, rule: Rule, written: SumLedger | undefined): CompiledRule | undefined {
  const at = (name: string): number => meta.features.indexOf(name);
  const cols = (names: readonly string[]): number[] | undefined => {
    const idx = names.map(at);
    return idx.every((i) => i >= 0 && meta.column_stats?.[meta.features[i]]?.type !== "id") ? idx : undefined;
  };
  switch (rule.type) {
    case "blank_together": {
      const c = cols(rule.columns);
      return c && blankTogether(c);
    }
    case "not_equal": {
      const c = cols(rule.columns);
      return c && notEqual(c[0], c[1]);
    }
    case "fixed_combinations": {
      const c = cols(rule.columns);
      return c && fixedCombinations(meta, rule.columns, c, rule.combinations, rule.counts, rule.share, rule.determinant);
    }
    case "catalog": {
      const c = cols(rule.columns);
      return c && catalog(meta, c, rule.entries, rule.counts);
    }
    case "sum": {
      const c = cols([rule.total, ...rule.parts]);
      return c && sum(meta, c[0], c[1], c[2], rule.signs ?? [1, 1], rule.constant ?? 0, written);
    }
    case "structural_zeros":
      return undefined;
    case "public_attribute": {
      // The attribute column may be an identifier (a FIPS id): written from the key all the same.
      const [k, c] = rule.columns.map(at);
      const st = meta.column_stats?.[rule.columns[0]];
      if (k < 0 || c < 0 || st?.type !== "categorical" || st.vocabulary === undefined) return undefined;
      return publicAttribute(k, c, st.vocabulary, rule.attribute, rule.width);
    }
    case "embedded_code": {
      const [k, c] = rule.columns.map(at);
      return k < 0 || c < 0 ? undefined : embeddedCode(k, c, rule.offset);
    }
    case "inequality": {
      const c = cols([rule.high, rule.low]);
      return c && inequality(meta, c[0], c[1], rule.strict);
    }
  }
}

/** `../semantic/attributes`, loaded by the first public-attribute rule. */
function attributes(): typeof import("../semantic/attributes") {
  return require("../semantic/attributes");
}

/** Column c written as attribute `a` of the key in column k, where the key is in the reference data. */
function publicAttribute(k: number, c: number, vocabulary: PublicVocabulary, a: PublicAttribute, width: number | undefined): CompiledRule {
  const at = attributes();
  const byKey = new Map<string, string | undefined>();
  return {
    apply(rows, _rng, given, _draw, out) {
      const fixed = given ?? noneFixed;
      for (let r = 0; r < rows.length; r++) {
        const kv = rows.get(r, k);
        if (kv === "") continue;
        let want = byKey.get(kv);
        if (want === undefined && !byKey.has(kv)) {
          const key = at.keyOf(vocabulary, kv);
          const v = key === undefined ? undefined : at.attributeOf(a, key);
          byKey.set(kv, (want = v === undefined ? undefined : at.writeAttribute(a, v, width)));
        }
        if (want === undefined || rows.get(r, c) === want) continue;
        if (fixed(r, c)) {
          out.unrepaired++;
          continue;
        }
        rows.set(r, c, want);
        out.changed++;
      }
    },
  };
}

/** The identifier in column c holds column k's code at `offset` (written over its characters there). */
function embeddedCode(k: number, c: number, offset: number): CompiledRule {
  return {
    apply(rows, _rng, given, _draw, out) {
      const fixed = given ?? noneFixed;
      for (let r = 0; r < rows.length; r++) {
        const [code, id] = [rows.get(r, k), rows.get(r, c)];
        if (code === "" || id.length < offset + code.length || id.startsWith(code, offset)) continue;
        if (fixed(r, c)) {
          out.unrepaired++;
          continue;
        }
        rows.set(r, c, id.slice(0, offset) + code + id.slice(offset + code.length));
        out.changed++;
      }
    },
  };
}

function blankTogether(cols: number[]): CompiledRule {
  return {
    apply(rows, rng, given, draw, out) {
      const fixed = given ?? noneFixed;
      row: for (let r = 0; r < rows.length; r++) {
        let blanks = 0;
        for (const f of cols) if (rows.get(r, f) === "") blanks++;
        if (blanks === 0 || blanks === cols.length) continue;
        const lead = cols.find((f) => fixed(r, f)) ?? cols[0];
        const blank = rows.get(r, lead) === "";
        for (const f of cols) {
          if ((rows.get(r, f) === "") === blank) continue;
          if (fixed(r, f)) {
            out.unrepaired++;
            continue row;
          }
        }
        for (const f of cols) {
          if ((rows.get(r, f) === "") === blank) continue;
          rows.set(r, f, blank ? "" : draw(f, rng));
          out.changed++;
        }
      }
    },
  };
}

function notEqual(a: number, b: number): CompiledRule {
  return {
    apply(rows, rng, given, draw, out) {
      const fixed = given ?? noneFixed;
      row: for (let r = 0; r < rows.length; r++) {
        const [ta, tb] = [rows.get(r, a), rows.get(r, b)];
        if (ta === "" || ta !== tb) continue;
        const f = !fixed(r, b) ? b : !fixed(r, a) ? a : -1;
        if (f < 0) {
          out.unrepaired++;
          continue;
        }
        const other = f === b ? ta : tb;
        for (let t = 0; t < MAX_REDRAWS; t++) {
          const v = draw(f, rng);
          if (v !== other) {
            rows.set(r, f, v);
            out.changed++;
            continue row;
          }
        }
        out.unrepaired++;
      }
    },
  };
}

/** Decimals of a numerical column's values (its `decimals`, 0 for integers). */
function decimalsOfStats(stats: ColumnStats | undefined): number {
  return stats?.decimals ?? 0;
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

function sum(meta: Metadata, total: number, a: number, b: number, signs: readonly number[], constant: number, written: SumLedger | undefined): CompiledRule {
  const st = (f: number) => meta.column_stats?.[meta.features[f]];
  const d = Math.max(decimalsOfStats(st(total)), decimalsOfStats(st(a)), decimalsOfStats(st(b)));
  const scale = 10 ** d;
  const [sa, sb] = signs;
  const kk = Math.round(constant * scale);
  const scaled = (text: string): number | undefined => {
    if (text === "") return undefined;
    const x = Number(text);
    return Number.isFinite(x) ? Math.round(x * scale) : undefined;
  };
  const write = (f: number, k: number): string => {
    const df = decimalsOfStats(st(f));
    // k is at d decimals; the column writes df <= d decimals (the rule holds within df).
    const kf = df === d ? k : Math.round(k / 10 ** (d - df));
    return writeScaled(kf, df, st(f)?.fixed_decimals === true);
  };
  // Whether column f can hold scaled value k as the real column does: in range, exact at decimals.
  const fits = (f: number, k: number): boolean => {
    const s = st(f);
    const x = k / scale;
    if ((s?.min !== undefined && x < s.min) || (s?.max !== undefined && x > s.max)) return false;
    const step = 10 ** (d - decimalsOfStats(s));
    return k % step === 0;
  };
  return {
    apply(rows, _rng, given, _draw, out) {
      const user = given ?? noneFixed;
      // With sums sharing columns, a cell of an earlier sum of the row is kept like a fixed one,
      // and once this sum holds in a row its cells are kept by the later sums.
      const ledger = written;
      const fixed: Fixed = ledger ? (r, f) => user(r, f) || ledger.cells.has(r * ledger.width + f) : user;
      const settle = (r: number): void => {
        if (!ledger) return;
        const at = r * ledger.width;
        ledger.cells.add(at + total).add(at + a).add(at + b);
      };
      for (let r = 0; r < rows.length; r++) {
        const [kt, ka, kb] = [scaled(rows.get(r, total)), scaled(rows.get(r, a)), scaled(rows.get(r, b))];
        if (ka === undefined || kb === undefined || (kt === undefined && fixed(r, total))) continue;
        const want = sa * ka + sb * kb + kk;
        if (kt === want) {
          settle(r);
          continue;
        }
        // Candidates in order: the total, then a part derived from the others.
        const cands: [number, number][] = [];
        if (!fixed(r, total)) cands.push([total, want]);
        if (kt !== undefined) {
          if (!fixed(r, b)) cands.push([b, sb * (kt - sa * ka - kk)]);
          if (!fixed(r, a)) cands.push([a, sa * (kt - sb * kb - kk)]);
        }
        if (cands.length === 0) {
          out.unrepaired++;
          continue;
        }
        const [f, k] = cands.find(([g, x]) => fits(g, x)) ?? cands[0];
        const v = write(f, k);
        settle(r);
        if (rows.get(r, f) !== v) {
          rows.set(r, f, v);
          out.changed++;
        }
      }
    },
  };
}

/** True when the two columns write values alike (a value of one is a valid value of the other). */
function writeAlike(x: ColumnStats | undefined, y: ColumnStats | undefined): boolean {
  if (!x || !y || x.type !== y.type) return false;
  if (x.type === "datetime") return x.format === y.format && x.granularity === y.granularity && (x.offset ?? 0) === (y.offset ?? 0);
  const binned = (s: ColumnStats) => s.bin_edges !== undefined && s.bin_edges.length >= 2;
  return binned(x) && binned(y) && (x.decimals ?? 0) === (y.decimals ?? 0) && x.fixed_decimals === y.fixed_decimals && x.step === y.step;
}

function inequality(meta: Metadata, high: number, low: number, strict: boolean): CompiledRule {
  const [sh, sl] = [meta.column_stats?.[meta.features[high]], meta.column_stats?.[meta.features[low]]];
  const [ph, pl] = [cellNumber(sh), cellNumber(sl)];
  const alike = writeAlike(sh, sl);
  // Point-value columns: a value may move to the other column only when that column has it.
  const [mh, ml] = [meta.value_mappings?.[meta.features[high]], meta.value_mappings?.[meta.features[low]]];
  const has = (mapping: Record<string, number> | undefined, text: string) => mapping !== undefined && Object.hasOwn(mapping, text);
  const holds = (h: number, l: number) => (strict ? h > l : h >= l);
  return {
    apply(rows, rng, given, draw, out) {
      const fixed = given ?? noneFixed;
      row: for (let r = 0; r < rows.length; r++) {
        const [th, tl] = [rows.get(r, high), rows.get(r, low)];
        const h = ph(th);
        const l = pl(tl);
        if (h === undefined || l === undefined || holds(h, l)) continue;
        const [fh, fl] = [fixed(r, high), fixed(r, low)];
        const swappable = alike || (has(mh, tl) && has(ml, th));
        if (!fh && !fl && swappable && holds(l, h)) {
          rows.set(r, high, tl);
          rows.set(r, low, th);
          out.changed += 2;
          continue;
        }
        // Redraw the unfixed one (the low side first) until the rule holds.
        for (const [f, isHigh] of [[low, false], [high, true]] as const) {
          if (fixed(r, f)) continue;
          const parse = isHigh ? ph : pl;
          for (let t = 0; t < MAX_REDRAWS; t++) {
            const v = draw(f, rng);
            const x = parse(v);
            if (x !== undefined && (isHigh ? holds(x, l) : holds(h, x))) {
              rows.set(r, f, v);
              out.changed++;
              continue row;
            }
          }
        }
        out.unrepaired++;
      }
    },
  };
}
