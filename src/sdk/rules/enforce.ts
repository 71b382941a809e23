/**
 * Row rules kept exactly (docs/api.md "Row rules"): after the decoder writes a batch, every rule
 * of `metadata.rules` is made to hold in every row by changing as few cells as it can, never by
 * dropping a row. The model is unchanged; this is a last, seeded step on the decoded text.
 *
 * Per rule, in this order (later steps never break what earlier ones fixed, for the rule kinds
 * the SDK detects together; see the tests):
 * 1. blank together: a mixed row follows its first fixed column, else the rule's first column:
 *    all blank, or the blanks filled with draws from their 1-way marginals.
 * 2. catalogs (`./catalog`), then fixed combinations (`./fixed-combinations`; a rule after those
 *    that decide its determinant, holding the columns earlier ones kept: {@link determinantOrder}),
 *    then catalogs with a composite key (they read the pair fixed combinations may have rewritten).
 * 3. not equal: equal cells redraw the second column (the first when the second is fixed) from
 *    its marginal, up to {@link MAX_REDRAWS} times, keeping the code-book rules the row kept.
 * 3b. public attributes: the column is written as its key's attribute (`../semantic/attributes`),
 *    a rule that writes another's key first ({@link attributeOrder});
 *    embedded codes: the identifier's characters at the rule's offset are the row's code;
 *    code prefixes: a code gets a prefix its row's category holds (`./code-prefix`).
 * 3c. calendars: the day moves to its month's end or to the row's weekday (`./calendar`).
 * 3d. entity ranges: a number outside its entity's real range is drawn inside it
 *    (`./entity-range`); its column is no sum's or ratio's total and in no code-book rule.
 * 4. sums and linear identities, sums sharing columns written together per row: `./sums`; then
 *    ratios and products, each total written from its parts (`./ratio`, in `./sums`' step).
 * 5. inequality: `high < low` (`<=` when strict) swaps the two when both columns write values
 *    alike; else the unfixed one is redrawn until it holds, up to {@link MAX_REDRAWS} times. A
 *    column of a sum is held fixed (`durable_goods > construction` beside `manufacturing =
 *    durable_goods + nondurable_goods` and `goods = mining + construction + manufacturing`):
 *    the two are swapped only when the row's sums can then be kept again around them (`high >=
 *    close` beside `adjclose = close`: adjclose follows the swapped close), and a sum's side is
 *    redrawn only with the row's sums kept again around it. Several
 *    inequalities (high >= open >= low, high >= close >= low) are passed over again until a pass
 *    changes nothing, up to {@link MAX_INEQUALITY_PASSES} passes: a swap of two alike cells in the
 *    wrong order lowers the row's inversions, so swaps alone end with every rule kept.
 * 5b. difference ranges: the second cell is the first plus a difference drawn from the rule's
 *    quantiles (`./difference`); its columns are in no sum or other inequality (detection).
 * 6. structural zeros, all together: `./structural-zeros`. Also before step 3d when the metadata has
 *    rules of steps 3d-5b, kept then without them (a blank count filled, with its blank-together
 *    partners, is then written in its entity's range and its identity by those steps), and again
 *    here for the rows those steps broke.
 * 7. datetime parts (`./datetime-part`): before every other rule, the datetime moves to the
 *    row's parts and the parts are written from it (a part a catalog of the datetime holds is
 *    left to that catalog, and written right after the code-book rules); every other rule then holds a part like a
 *    fixed cell (a rule between weekday and workingday moves workingday; a rule naming the
 *    datetime too, a catalog of dates and their months, moves both); last, the parts are
 *    written again from the datetime, which a rule may have moved.
 * 8. elapsed times (`./elapsed`): last of all, each number is written from its row's two
 *    datetimes (a number the user fixed moves the later datetime instead).
 * Templates and first names of the row's sex are not kept here: the decoder writes them last
 * (`./name-gender`, then `./template`).
 * A row whose fixed cells themselves break a rule is left as given: the user's cells are never
 * rewritten. Identifier columns take part in no rule.
 */
import type { CatalogRule, ColumnStats, DatetimePartRule, ElapsedRule, FixedCombinationsRule, Metadata, PublicAttribute, PublicAttributeRule, PublicVocabulary, Rule, StructuralZerosRule } from "../../contract";
import { Rng, deriveSeed } from "../generate/sfc32";
import { cellNumber, ruleChecker, ruleColumns as ruleCols, type RowCheck } from "./check";
import type { Cells } from "../generate/batch";
import { fixedCombinations } from "./fixed-combinations";
import { catalog } from "./catalog";
import { calendarRule } from "./calendar";
import { datetimePartRules } from "./datetime-part";
import { differenceRule } from "./difference";
import { elapsedRules } from "./elapsed";
import { entityRangeRule } from "./entity-range";
import { codePrefixRule } from "./code-prefix";
import { structuralZeros } from "./structural-zeros";
import { sumSystems, type SumSystems } from "./sums";
import { MAX_REDRAWS, noneFixed, type CompiledRule, type DrawValue, type EnforceResult, type Fixed } from "./compiled-rule";

export type { DrawValue, EnforceResult };

export { MAX_REDRAWS };

/**
 * The order rules are kept in (file header). A composite-key catalog reads its pair after fixed
 * combinations may have rewritten it; not-equal redraws after the code-book rules, keeping them
 * (a fixed-combinations repair may write an away team equal to the home team).
 */
const STAGES: readonly (Rule["type"] | "composite_catalog")[] = [
  "blank_together",
  "catalog",
  "fixed_combinations",
  "composite_catalog",
  "not_equal",
  "public_attribute",
  "embedded_code",
  "code_prefix",
  "calendar",
  "entity_range",
  "sum",
  "ratio",
  "inequality",
  "difference",
];

/** The stages that write numbers from other cells or ranges: structural zeros are kept before them too (file header, step 6). */
const NUMERIC_STAGES: ReadonlySet<Rule["type"]> = new Set(["entity_range", "sum", "ratio", "inequality", "difference"]);

/** A rule's place in {@link STAGES} (-1, first, for the kinds kept apart from them). */
function stage(r: Rule): number {
  return STAGES.indexOf(r.type === "catalog" && (r.key_columns ?? 1) === 2 ? "composite_catalog" : r.type);
}

/** Most passes over a batch's inequalities (file header, step 5). */
export const MAX_INEQUALITY_PASSES = 16;

/** Keeps `metadata.rules` in decoded rows (file header). */
export class RuleEnforcer {
  private readonly compiled: CompiledRule[];
  /** The datetime-part rules (step 7, and step 0: the datetime moved to its parts). */
  private readonly parts?: { first: CompiledRule; last: CompiledRule };
  /** Per entry of `compiled`, the part features it holds like fixed cells. */
  private readonly held: Set<number>[];
  /** Positions in `compiled` of the inequalities, consecutive (step 5). */
  private readonly inequalities: [number, number] = [0, 0];
  /** The elapsed-time rules (step 8: each number written from its datetimes). */
  private readonly elapsed?: CompiledRule;
  /** The public-attribute rules, written again after the decoder moves places ({@link applyAttributes}). */
  private readonly attributes: CompiledRule[];

  /** @param metadata the model's; rules naming unknown columns are ignored (checked at Create). */
  constructor(readonly metadata: Metadata) {
    const rules = [...(metadata.rules ?? [])];
    // A key is kept by sampling (`../generate/unique-keys`), not by rewriting a row.
    const rest = rules.filter((r) => r.type !== "structural_zeros" && r.type !== "unique");
    rest.sort((a, b) => stage(a) - stage(b));
    const chained = determinantOrder(rest.filter((r): r is FixedCombinationsRule => r.type === "fixed_combinations"));
    for (let i = 0, x = 0; i < rest.length; i++) if (rest[i].type === "fixed_combinations") rest[i] = chained[x++];
    const attributeChain = attributeOrder(rest.filter((r): r is PublicAttributeRule => r.type === "public_attribute"));
    for (let i = 0, x = 0; i < rest.length; i++) if (rest[i].type === "public_attribute") rest[i] = attributeChain[x++];
    const identities = rest.filter((r) => r.type === "sum" || r.type === "ratio");
    const sums = sumSystems(
      metadata,
      rest.filter((r) => r.type === "sum"),
      (names) => ruleColumns(metadata, names),
      rest.filter((r) => r.type === "ratio"),
    );
    // The sums and ratios take the place of the first one, as one rule.
    const firstSum = rest.findIndex((r) => r.type === "sum" || r.type === "ratio");
    const sumFeatures = new Set(identities.flatMap((r) => ruleColumns(metadata, [r.total, ...r.parts]) ?? []));
    const ratioTotals = new Set(identities.flatMap((r) => (r.type === "ratio" ? (ruleColumns(metadata, [r.total]) ?? []) : [])));
    // A part is held for every rule but one that writes its datetime too (a catalog of dates and their months).
    const partRules = rules.filter((r) => r.type === "datetime_part" && ruleColumns(metadata, r.columns) !== undefined);
    const heldFor = (names: readonly string[]): Set<number> =>
      new Set(partRules.filter((p) => !names.includes(ruleCols(p)[0])).map((p) => metadata.features.indexOf(ruleCols(p)[1])));
    // Columns of the fixed-combinations rules already kept: held by the later ones.
    const kept = new Set<number>();
    const entries = rest.flatMap((r, i): { type: Rule["type"]; rule: CompiledRule; held: Set<number> }[] => {
      if (r.type === "sum" || r.type === "ratio") return i === firstSum && sums ? [{ type: "sum", rule: sums, held: heldFor([]) }] : [];
      const rule = compile(metadata, r, sumFeatures, sums, ratioTotals, rules);
      if (!rule) return [];
      const held = heldFor(ruleCols(r));
      if (r.type === "fixed_combinations") {
        const own = ruleColumns(metadata, r.columns) ?? [];
        for (const f of own) if (kept.has(f)) held.add(f);
        for (const f of own) kept.add(f);
      }
      return [{ type: r.type, rule, held }];
    });
    const partList = partRules.filter((r): r is DatetimePartRule => r.type === "datetime_part");
    const codeBooks = rules.filter((r) => r.type === "catalog" || r.type === "fixed_combinations").map(ruleCols);
    const covered = new Set(partList.filter((p) => codeBooks.some((c) => c.includes(p.columns[0]) && c.includes(p.columns[1]))));
    this.parts = datetimePartRules(partList, metadata, covered);
    this.elapsed = elapsedRules(rules.filter((r): r is ElapsedRule => r.type === "elapsed" && ruleColumns(metadata, r.columns) !== undefined), metadata);
    // Parts a catalog left to itself are written once the code-book rules are done (a tolerant catalog leaves rare dates).
    if (this.parts && covered.size) {
      const at = 1 + entries.map((e) => e.type === "catalog" || e.type === "fixed_combinations").lastIndexOf(true);
      entries.splice(at, 0, { type: "datetime_part", rule: this.parts.last, held: new Set() });
    }
    const zeroRules = rules.filter((r): r is StructuralZerosRule => r.type === "structural_zeros");
    // Before the numeric rules, structural zeros guarded by the rules kept so far (a filled number
    // the numeric rules then write in range); after them, once more, guarded by every rule.
    const numeric = entries.findIndex((e) => NUMERIC_STAGES.has(e.type));
    const early = numeric >= 0 ? structuralZeros(metadata, zeroRules, rest.filter((r) => !NUMERIC_STAGES.has(r.type))) : undefined;
    if (early) entries.splice(numeric, 0, { type: "structural_zeros", rule: early, held: heldFor([]) });
    this.compiled = entries.map((e) => e.rule);
    this.attributes = entries.filter((e) => e.type === "public_attribute").map((e) => e.rule);
    this.held = entries.map((e) => e.held);
    const first = entries.findIndex((e) => e.type === "inequality");
    if (first >= 0) this.inequalities = [first, first + entries.filter((e) => e.type === "inequality").length];
    const zeros = structuralZeros(metadata, zeroRules, rest);
    if (zeros) {
      this.compiled.push(zeros);
      this.held.push(heldFor([]));
    }
  }

  /** Starts a sample: rules that keep cells distinct across its batches forget the codes of the last one. */
  newSample(): void {
    for (const c of this.compiled) c.newSample?.();
  }

  /**
   * The rows of the last batch the sample writes (a filter dropped the others): rules that keep
   * cells distinct across batches count only these and draw again a cell that repeats one written
   * before ({@link CompiledRule.written}); `fixed` cells are kept. Same rows and seed, same cells.
   */
  written(rows: Cells, seed: number, fixed?: Fixed): void {
    this.compiled.forEach((c, i) => c.written?.(rows, new Rng(deriveSeed(seed, 0x57524954, i)), fixed));
  }

  /** True when there is a rule to keep. */
  get active(): boolean {
    return this.compiled.length > 0 || this.parts !== undefined || this.elapsed !== undefined;
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
    const [from, to] = this.inequalities;
    const partRng = new Rng(deriveSeed(seed, 0x50415254, 0));
    // Datetimes moved to their parts first; parts then held like fixed cells by every other rule, and written again last.
    this.parts?.first.apply(rows, partRng, fixed, draw, out, codes);
    const user = fixed ?? noneFixed;
    const held = this.held.map((h): Fixed | undefined => (h.size ? (r, f) => user(r, f) || h.has(f) : fixed));
    const step = (i: number, pass: number, o: EnforceResult): void =>
      this.compiled[i].apply(rows, new Rng(deriveSeed(seed, 0x52554c45 + pass, i)), held[i], draw, o, codes);
    for (let i = 0; i < this.compiled.length; i++) {
      if (i !== from || to - from < 2) {
        step(i, 0, out);
        continue;
      }
      let unrepaired = 0;
      for (let pass = 0; pass < MAX_INEQUALITY_PASSES; pass++) {
        const o: EnforceResult = { changed: 0, unrepaired: 0 };
        for (let j = from; j < to; j++) step(j, pass, o);
        out.changed += o.changed;
        unrepaired = o.unrepaired;
        if (o.changed === 0) break;
      }
      out.unrepaired += unrepaired;
      i = to - 1;
    }
    // An elapsed time may move its earlier date: with datetime parts, before the parts are written
    // from the dates and again after them (its rows left broken counted once).
    if (this.parts) {
      const early: EnforceResult = { changed: 0, unrepaired: 0 };
      this.elapsed?.apply(rows, partRng, fixed, draw, early, codes);
      out.changed += early.changed;
      this.parts.last.apply(rows, partRng, fixed, draw, out, codes);
    }
    this.elapsed?.apply(rows, partRng, fixed, draw, out, codes);
    return out;
  }

  /**
   * Writes the public attributes again (a ZIP code's county FIPS after the decoder moved the ZIP
   * code to one gazetteer row with its city); cells `fixed` are kept.
   * @returns the cells rewritten.
   */
  applyAttributes(rows: Cells, seed: number, draw: DrawValue, fixed?: Fixed): number {
    const out: EnforceResult = { changed: 0, unrepaired: 0 };
    for (const rule of this.attributes) rule.apply(rows, new Rng(seed), fixed, draw, out, undefined);
    return out.changed;
  }
}

/**
 * Fixed-combinations rules in the order they are kept, each holding the columns earlier ones kept:
 * a rule after the rules that decide its determinant (ASIN -> title before title -> category), so
 * a chain is kept from its start (Kahn's algorithm); among rules free to go, one whose decided
 * column no other rule decides first, then one whose determinant is already kept (title -> customer
 * before state -> customer: the first writes the customer, the second then moves the state), and
 * rules without a determinant (sparse combinations) last; ties and cycles in the given order.
 */
export function determinantOrder(rules: readonly FixedCombinationsRule[]): FixedCombinationsRule[] {
  const decides = (r: FixedCombinationsRule): string | undefined => (r.determinant === undefined ? undefined : r.columns.find((c) => c !== r.determinant));
  const left = [...rules];
  const kept = new Set<string>();
  const out: FixedCombinationsRule[] = [];
  while (left.length) {
    let at = 0;
    let best = Infinity;
    left.forEach((r, i) => {
      if (r.determinant !== undefined && left.some((s) => s !== r && decides(s) === r.determinant)) return;
      const d = decides(r);
      const shared = d !== undefined && left.some((s) => s !== r && decides(s) === d);
      const score = r.determinant === undefined ? 4 : (shared ? 2 : 0) + (kept.has(r.determinant) ? 0 : 1);
      if (score < best) [at, best] = [i, score];
    });
    const next = left.splice(at, 1)[0];
    for (const c of next.columns) kept.add(c);
    out.push(next);
  }
  return out;
}

/**
 * Public-attribute rules in the order they are written: a rule that writes a column another rule
 * reads as its key comes first (`name -> alpha-3` before `alpha-3 -> alpha-2`), so the later rule
 * reads the key as written, not as drawn; otherwise their given order. A cycle (two columns each
 * the other's attribute) keeps the given order for the rules in it (Kahn's topological sort,
 * CACM 5(11), 1962).
 */
export function attributeOrder<R extends { readonly columns: readonly string[] }>(rules: readonly R[]): R[] {
  const target = (r: R): string => r.columns[r.columns.length - 1];
  const left = [...rules];
  const out: R[] = [];
  while (left.length) {
    // The first rule whose keys no rule left writes (a rule writing its own key is no wait).
    let at = left.findIndex((r) => !left.some((s) => s !== r && r.columns.slice(0, -1).includes(target(s))));
    if (at < 0) at = 0;
    out.push(left.splice(at, 1)[0]);
  }
  return out;
}

/** Feature indices of `names`, or undefined when one is unknown or an identifier column. */
function ruleColumns(meta: Metadata, names: readonly string[]): number[] | undefined {
  const idx = names.map((name) => meta.features.indexOf(name));
  return idx.every((i) => i >= 0 && meta.column_stats?.[meta.features[i]]?.type !== "id") ? idx : undefined;
}

function compile(meta: Metadata, rule: Rule, sumFeatures: ReadonlySet<number>, sums: SumSystems | undefined, ratioTotals: ReadonlySet<number>, all: readonly Rule[]): CompiledRule | undefined {
  const cols = (names: readonly string[]): number[] | undefined => ruleColumns(meta, names);
  const at = (name: string): number => meta.features.indexOf(name);
  switch (rule.type) {
    case "blank_together": {
      const c = cols(rule.columns);
      return c && blankTogether(c);
    }
    case "not_equal": {
      const c = cols(rule.columns);
      return c && notEqual(c[0], c[1], meta.features.length, (fs) => codeBookChecks(meta, all, fs.map((f) => meta.features[f])), (f) => catalogEntriesOf(meta, all, f));
    }
    case "fixed_combinations": {
      const c = cols(rule.columns);
      return c && fixedCombinations(meta, rule.columns, c, rule.combinations, rule.counts, rule.share, rule.determinant);
    }
    case "catalog": {
      const c = cols(rule.columns);
      return c && catalog(meta, c, rule.entries, rule.counts, rule.key_columns ?? 1);
    }
    case "sum":
    case "ratio":
    case "structural_zeros":
      return undefined;
    case "public_attribute": {
      // The attribute column may be an identifier (a FIPS id): written from the key all the same.
      const idx = rule.columns.map(at);
      const st = meta.column_stats?.[rule.columns[idx.length - 2]];
      if (idx.some((i) => i < 0) || st?.type !== "categorical" || st.vocabulary === undefined) return undefined;
      return publicAttribute(idx.slice(0, -1), idx[idx.length - 1], st.vocabulary, rule.attribute, rule.width);
    }
    case "embedded_code": {
      const [k, c] = rule.columns.map(at);
      return k < 0 || c < 0 ? undefined : embeddedCode(k, c, rule.offset);
    }
    case "code_prefix": {
      const [k, c] = rule.columns.map(at);
      return k < 0 || c < 0 ? undefined : codePrefixRule(rule, k, c, meta);
    }
    case "calendar": {
      const c = cols(rule.columns);
      return c && calendarRule(rule, c);
    }
    case "datetime_part":
    case "elapsed":
      // Written last (the constructor), after every rule that may move the datetimes.
      return undefined;
    case "template":
    case "name_gender":
    case "name_country":
      // Written after places and points by the decoder (`./template`, `./name-gender`, `./name-country`).
      return undefined;
    case "difference": {
      const c = cols(rule.columns);
      return c && differenceRule(rule, c, meta);
    }
    case "entity_range": {
      const c = cols(rule.columns);
      return c && entityRangeRule(rule, c, meta);
    }
    case "inequality": {
      const c = cols([rule.high, rule.low]);
      return c && inequality(meta, c[0], c[1], rule.strict, sumFeatures, sums, ratioTotals);
    }
  }
}

/** `../semantic/attributes`, loaded by the first public-attribute rule. */
function attributes(): typeof import("../semantic/attributes") {
  return require("../semantic/attributes");
}

/**
 * Column c written as attribute `a` of the key in columns `k` (one column of `vocabulary`, or a
 * state column and a `us_county` column), where the key is in the reference data.
 */
function publicAttribute(k: readonly number[], c: number, vocabulary: PublicVocabulary, a: PublicAttribute, width: number | undefined): CompiledRule {
  const at = attributes();
  const byKey = new Map<string, string | undefined>();
  const pair = k.length === 2;
  return {
    apply(rows, _rng, given, _draw, out) {
      const fixed = given ?? noneFixed;
      for (let r = 0; r < rows.length; r++) {
        const kv = rows.get(r, k[k.length - 1]);
        if (kv === "") continue;
        const sv = pair ? rows.get(r, k[0]) : "";
        const cacheKey = pair ? `${sv}\u0000${kv}` : kv;
        let want = byKey.get(cacheKey);
        if (want === undefined && !byKey.has(cacheKey)) {
          const key = pair ? at.countyKeyOf(sv, kv) : at.keyOf(vocabulary, kv);
          const v = key === undefined ? undefined : at.attributeOf(a, key);
          byKey.set(cacheKey, (want = v === undefined ? undefined : at.writeAttribute(a, v, width)));
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

/**
 * Equal cells of columns a and b: the second (the first when the second is fixed) redrawn from its
 * marginal, up to {@link MAX_REDRAWS} times, to a value that keeps the code-book rules over the
 * cells it writes (`checks`, on rows of `width` cells) the row kept. A column of a catalog
 * (`entries(f)`) takes another released entry of it, all its columns at once (an airport with its
 * coordinates): a redrawn cell alone would break the catalog.
 */
function notEqual(a: number, b: number, width: number, checks: (fs: readonly number[]) => RowCheck[], entries: (f: number) => CatalogEntries | undefined): CompiledRule {
  const guards = new Map<number, RowCheck[]>();
  const catalogs = new Map<number, CatalogEntries | undefined>();
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
        if (!catalogs.has(f)) catalogs.set(f, entries(f));
        const cat = catalogs.get(f);
        const whole = cat !== undefined && !cat.columns.some((x) => fixed(r, x));
        const written = whole ? cat.columns : [f];
        let g = guards.get(2 * f + (whole ? 1 : 0));
        if (!g) guards.set(2 * f + (whole ? 1 : 0), (g = checks(written)));
        const cells = Array.from({ length: width }, (_, x) => rows.get(r, x));
        const kept = g.map((check) => check(cells) !== false);
        for (let t = 0; t < MAX_REDRAWS; t++) {
          const entry = whole ? cat.entries[rng.pickCumulative(cat.cumulative)] : undefined;
          const v = entry ? entry[written.indexOf(f)] : draw(f, rng);
          if (v === other) continue;
          if (entry) written.forEach((x, i) => (cells[x] = entry[i]));
          else cells[f] = v;
          if (g.some((check, i) => kept[i] && check(cells) === false)) continue;
          for (const x of written) rows.set(r, x, cells[x]);
          out.changed++;
          continue row;
        }
        out.unrepaired++;
      }
    },
  };
}

/** A catalog's released entries over its feature indices, with their cumulative counts for drawing. */
interface CatalogEntries {
  columns: number[];
  entries: readonly (readonly string[])[];
  cumulative: Float64Array;
}

/** The entries of the first catalog of `rules` naming feature f (as its key or an attribute). */
function catalogEntriesOf(meta: Metadata, rules: readonly Rule[], f: number): CatalogEntries | undefined {
  const name = meta.features[f];
  const rule = rules.find((r): r is CatalogRule => r.type === "catalog" && r.columns.includes(name));
  const columns = rule && ruleColumns(meta, rule.columns);
  if (!rule || !columns || rule.entries.length === 0) return undefined;
  const cumulative = new Float64Array(rule.entries.length);
  let total = 0;
  rule.entries.forEach((_, i) => (cumulative[i] = total += rule.counts[i] ?? 1));
  return { columns, entries: rule.entries, cumulative };
}

/** Checks of the catalog and fixed-combinations rules naming any of the columns `names` (`./check`). */
function codeBookChecks(meta: Metadata, rules: readonly Rule[], names: readonly string[]): RowCheck[] {
  return rules.filter((r) => (r.type === "catalog" || r.type === "fixed_combinations") && r.columns.some((c) => names.includes(c))).map((r) => ruleChecker(r, meta));
}

/** True when the two columns write values alike (a value of one is a valid value of the other). */
function writeAlike(x: ColumnStats | undefined, y: ColumnStats | undefined): boolean {
  if (!x || !y || x.type !== y.type) return false;
  if (x.type === "datetime") {
    return x.format === y.format && x.granularity === y.granularity && (x.offset ?? 0) === (y.offset ?? 0) && String(x.weekdays ?? "") === String(y.weekdays ?? "");
  }
  const binned = (s: ColumnStats) => s.bin_edges !== undefined && s.bin_edges.length >= 2;
  return binned(x) && binned(y) && (x.decimals ?? 0) === (y.decimals ?? 0) && x.fixed_decimals === y.fixed_decimals && x.step === y.step;
}

/**
 * @param derived the ratios' totals: never redrawn as a sum's side (their ratio writes them).
 * @param kept features of the sums and ratios (kept before the inequality): a side that is such a column is
 *   held like a fixed cell (neither swapped nor redrawn alone), so keeping the inequality never
 *   breaks a sum; only when redrawing the other side fails (or both sides are sums') is a sum's
 *   side redrawn, the low one first, and the row's sums kept again around it (`sums.keepRow`).
 */
function inequality(meta: Metadata, high: number, low: number, strict: boolean, kept: ReadonlySet<number>, sums: SumSystems | undefined, derived: ReadonlySet<number> = new Set()): CompiledRule {
  // A side in a sum is held like a fixed cell; both sides may be (durable_goods > construction).
  const [holdHigh, holdLow] = [kept.has(high), kept.has(low)];
  const [sh, sl] = [meta.column_stats?.[meta.features[high]], meta.column_stats?.[meta.features[low]]];
  const [ph, pl] = [cellNumber(sh), cellNumber(sl)];
  const alike = writeAlike(sh, sl);
  // Point-value columns: a value may move to the other column only when that column has it.
  const [mh, ml] = [meta.value_mappings?.[meta.features[high]], meta.value_mappings?.[meta.features[low]]];
  const has = (mapping: Record<string, number> | undefined, text: string) => mapping !== undefined && Object.hasOwn(mapping, text);
  const holds = (h: number, l: number) => (strict ? h > l : h >= l);
  return {
    apply(rows, rng, given, draw, out) {
      const user = given ?? noneFixed;
      const fixed: Fixed = holdHigh || holdLow ? (r, f) => user(r, f) || (f === high ? holdHigh : holdLow) : user;
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
        // A sum's cell swapped all the same, the row's sums kept again around the two cells
        // (adjclose = close follows close): the row keeps its values, none drawn apart from it.
        if ((holdHigh || holdLow) && sums && swappable && holds(l, h) && !user(r, high) && !user(r, low)) {
          const saved = [...kept].map((f) => rows.get(r, f));
          rows.set(r, high, tl);
          rows.set(r, low, th);
          const tried: EnforceResult = { changed: 0, unrepaired: 0 };
          sums.keepRow(rows, r, rng, (rr, f) => user(rr, f) || f === high || f === low, draw, tried);
          if (tried.unrepaired === 0) {
            out.changed += 2 + tried.changed;
            continue;
          }
          [...kept].forEach((f, i) => rows.set(r, f, saved[i]));
          rows.set(r, high, th);
          rows.set(r, low, tl);
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
        // Then a sum's side (the low one first), the row's sums kept again with that cell fixed.
        for (const held of [holdLow ? low : -1, holdHigh ? high : -1]) {
          // A ratio's total is written from its parts: redrawn, it would break its ratio.
          if (held < 0 || !sums || user(r, held) || derived.has(held)) continue;
          const keep: Fixed = (rr, f) => user(rr, f) || f === held;
          const saved = [...kept].map((f) => rows.get(r, f));
          for (let t = 0; t < MAX_REDRAWS; t++) {
            rows.set(r, held, draw(held, rng));
            // Counted only for the attempt kept.
            const tried: EnforceResult = { changed: 0, unrepaired: 0 };
            sums.keepRow(rows, r, rng, keep, draw, tried);
            const [x, y] = [ph(rows.get(r, high)), pl(rows.get(r, low))];
            if (x !== undefined && y !== undefined && holds(x, y)) {
              out.changed += 1 + tried.changed;
              out.unrepaired += tried.unrepaired;
              continue row;
            }
            [...kept].forEach((f, i) => rows.set(r, f, saved[i]));
          }
        }
        out.unrepaired++;
      }
    },
  };
}
