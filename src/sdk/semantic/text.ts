/**
 * Text in a column's own words (semantic kinds `title` and `text`: film titles, addresses): a
 * k-anonymous token model of the column and a writer of new values in its style.
 *
 * Tokens ({@link tokenize}): runs of letters and digits, and single other characters, each with
 * whether a space precedes it. A rare token with digits is masked from the right (`1987` -> `198#`
 * -> ... -> `####`) until >= k rows hold its form (a generalisation hierarchy: Sweeney, "Achieving
 * k-anonymity privacy protection using generalization and suppression", IJUFKS 10(5), 2002); the
 * writer fills the `#`s from a released token that writes digits in them (a real date's day and
 * year), else with random digits. A column too thin for that to write anything is
 * modelled again with rare words generalised to their class too (`Vermont` -> `Aa`, `SMITH` ->
 * `AA`), which the writer fills with public words (faker's surnames and nouns): words, never
 * letter soup. A word written without spaces of two or more runs (`mercedes-benz`, `rx-4`,
 * `x1.9`) is first one token, masked the same way while rarer, and split into its tokens only when
 * no form of it reaches k rows ({@link compoundTokens}).
 *
 * The model ({@link TextModel}) releases only what >= k rows hold (as a categorical value's code):
 * tokens (at most {@link MAX_WORDS}) with the rows each starts, ends, holds later; adjacent pairs
 * (flagged when written without a space) and triples, with a boundary index for start and end;
 * rows per token count; triples with "any number" as a class in first or second place
 * (`<number> Main St`), so the walk goes on at a number as at numbers.
 *
 * Generation: an n-gram model with start and end states (Jurafsky and Martin, "Speech and Language
 * Processing", 3rd ed., ch. 3): the next token from the triples continuing the last two, with the
 * share of the pair's rows they hold, else from the pairs (Katz back-off, IEEE Trans. ASSP 35(3),
 * 1987); a writer needing more new values backs off further by t / (c + t) (c the triples' rows, t
 * their number: Witten-Bell, IEEE Trans. Inf. Theory 37(4), 1991). As in PPM (Cleary and Witten,
 * IEEE Trans. Commun. 32(4), 1984), the longer context wins where it is released: the second token
 * comes only from the first token's start triples when it has any (a make's own model). A value
 * ends only where >= k
 * real values end on that token (no title stops on `and`); only tokens from which a released path
 * reaches the end are drawn. With no such path, words are drawn by pairs and counts.
 * Models without `trigrams` (older) split at whitespace and write drawn words joined by spaces.
 */
import type { Rng } from "../generate/sfc32";
import { titleCase } from "./letter-case";
import { countriesIn, inCountryName, publicWordKinds, publicWords, WORD_KINDS, type WordKind } from "./pools";
import type { SemanticLocale, TextModel } from "./types";

/** Most tokens kept (by rows, then code-unit order). */
export const MAX_WORDS = 5000;
/** Most pairs kept (by rows). */
export const MAX_BIGRAMS = 10000;
/** Most triples kept (by rows). */
export const MAX_TRIGRAMS = 10000;
/** Longest token released, in UTF-16 code units (the contract's bound). */
const MAX_TOKEN_LENGTH = 256;
/** Longest value written, in tokens. */
const MAX_TOKENS = 1000;

/** Splits a value into words (runs of non-whitespace): the tokens of models without `trigrams`. */
export function words(v: string): string[] {
  return v.split(/\s+/).filter((w) => w !== "");
}

/** A token of a value: its text and whether whitespace precedes it in the value. */
export interface Token {
  text: string;
  spaced: boolean;
}

const TOKEN_RE = /[\p{L}\p{M}\p{N}]+|\S/gu;
const DIGIT_RE = /[0-9]/;
const NUMBER_RE = /^[0-9]+$/;
/** The digit slot of a shaped token. */
const SLOT = "#";

/** Splits a value into runs of letters, marks and digits, and single other non-space characters. */
export function tokenize(v: string): Token[] {
  const out: Token[] = [];
  let end = 0;
  for (const m of v.matchAll(TOKEN_RE)) {
    out.push({ text: m[0], spaced: out.length > 0 && m.index! > end });
    end = m.index! + m[0].length;
  }
  return out;
}

/** Forms of a token with digits, literal to all masked (`19a5`, `19a#`, `1#a#`, `##a#`). */
function digitForms(t: string): string[] {
  const chars = Array.from(t);
  const at: number[] = [];
  chars.forEach((c, j) => {
    if (DIGIT_RE.test(c)) at.push(j);
  });
  const forms = [t];
  for (let j = at.length - 1; j >= 0; j--) {
    chars[at[j]] = SLOT;
    forms.push(chars.join(""));
  }
  return forms;
}

const LETTERS_RE = /^\p{L}+$/u;

/**
 * The word class of a token of letters: `A` one capital, `a` lower case, `AA` upper case, `Aa`
 * any other word with a capital first (`Vermont`, `McArthur`).
 */
function letterShape(t: string): string {
  const upper = t === t.toUpperCase() && t !== t.toLowerCase();
  if (Array.from(t).length === 1) return upper ? "A" : "a";
  if (upper) return "AA";
  return t[0] !== t[0].toLowerCase() ? "Aa" : "a";
}

/** Whether a shaped token is a word class ({@link letterShape}, perhaps with a kind) rather than a digit shape. */
const isWordClass = (t: string): boolean => /^(A|a|AA|Aa)(:(female|male|place|country|vehicle|animal|noun))?$/.test(t);

/**
 * The public kinds of a word ({@link WordKind}), and `last` where it is one of faker's surnames
 * (the lists of `./pools`), compared in title case; none for a word of one letter or lower case.
 */
function kindsOf(w: string): (WordKind | "last")[] {
  if (Array.from(w).length < 2 || w[0] === w[0].toLowerCase()) return [];
  const t = titleCase(w);
  const out: (WordKind | "last")[] = WORD_KINDS.filter((k) => publicWordKinds().member[k].has(t));
  if (publicWords().capitalized.includes(t)) out.push("last");
  return out;
}

/**
 * The kind each rare word (< k rows) of a column is written as: of the public lists it belongs
 * to, the one whose words of no other list hold the most rows of the column's rare words after the
 * same token (its first occurrence's), then in the whole column (ties: {@link WORD_KINDS} order,
 * surnames last); none where that is the surnames or no list holds it.
 * So an airport column's `Denver` and `Dallas` (also a given name) are places, a passenger list's
 * `Owen` after `Mr` a man's given name, and a rare word is never written as a surname where the column's rare
 * words are of another kind. A capitalised word of no list takes the kind whose words alone hold
 * at least half of the rare rows after the word its first occurrence follows (a given name
 * faker lacks after `Mr`, a place its cities miss at the start of an airport's name), else the
 * kind of at least half of the column's rare rows of one list where surnames hold less than half
 * (a car's model after a rare make: `Mazda RX4` -> a make and a model, not two surnames).
 */
function rareWordKinds(toks: readonly Token[][], counts: readonly number[], k: number): Map<string, WordKind> {
  const rows = new Map<string, number>();
  // The run of letters or digits before a word's first occurrence, marks skipped ("" at the
  // start): its context (`Mr` for `Owen` in `Braund, Mr. Owen Harris`).
  const before = new Map<string, string>();
  toks.forEach((ts, i) => {
    let prev = "";
    for (const t of ts) {
      if (LETTERS_RE.test(t.text) && !before.has(t.text)) before.set(t.text, prev);
      if (isRun(t.text)) prev = t.text;
    }
    for (const w of new Set(ts.map((t) => t.text))) if (LETTERS_RE.test(w)) rows.set(w, (rows.get(w) ?? 0) + counts[i]);
  });
  const rare = [...rows].filter(([, r]) => r < k).map(([w, r]) => [w, r, kindsOf(w), before.get(w)!] as const);
  const weight = new Map<WordKind | "last", number>();
  // Per context, the rows of rare words and of rare words of one list by kind.
  const inContext = new Map<string, { total: number; by: Map<WordKind | "last", number> }>();
  for (const [, r, ks, ctx] of rare) {
    const c = inContext.get(ctx) ?? { total: 0, by: new Map() };
    c.total += r;
    if (ks.length === 1) {
      weight.set(ks[0], (weight.get(ks[0]) ?? 0) + r);
      c.by.set(ks[0], (c.by.get(ks[0]) ?? 0) + r);
    }
    inContext.set(ctx, c);
  }
  // Else the kind of most of the column's rare words of one list, where that is at least half
  // of them and surnames are not (a car's model after a rare make: `Mazda RX4`).
  let listed = 0;
  for (const r of weight.values()) listed += r;
  const top = WORD_KINDS.reduce<WordKind | undefined>((b, kd) => ((weight.get(kd) ?? 0) > (b === undefined ? 0 : weight.get(b) ?? 0) ? kd : b), undefined);
  const columnKind = top !== undefined && 2 * weight.get(top)! >= listed && 2 * (weight.get("last") ?? 0) < listed ? top : undefined;
  const out = new Map<string, WordKind>();
  for (const [w, , ks, ctx] of rare) {
    // Of its lists, the one holding most rows after the same token, then in the column.
    const c = inContext.get(ctx)!;
    const score = (kd: WordKind | "last"): number => (c.by.get(kd) ?? 0) * 1e9 + (weight.get(kd) ?? 0);
    let best: WordKind | "last" | undefined;
    for (const kd of ks) if (best === undefined || score(kd) > score(best)) best = kd;
    // A word of no list: the kind whose words alone hold at least half the rare rows after the same token.
    if (best === undefined && w[0] !== w[0].toLowerCase()) best = WORD_KINDS.find((kd) => 2 * (c.by.get(kd) ?? 0) >= c.total) ?? columnKind;
    if (best !== undefined && best !== "last") out.set(w, best);
  }
  return out;
}

/** Builder's map key: shapes apart from literal tokens (shape `#` is not the character `#`). */
const shapeKey = (form: string): string => "\u0001" + form;

/** Whether a token is a run of letters, marks or digits (not a single other character). */
const isRun = (t: string): boolean => /^[\p{L}\p{M}\p{N}]/u.test(t);

/**
 * The compounds of tokenized values: a word written without spaces (`mercedes-benz`, `rx-4`,
 * `x1.9`, `don't`), less the marks it opens or closes with (`(sw)`, `St.`), that holds two runs
 * of letters or digits joined by other characters. A compound is one token when >= k rows hold
 * it, else its digits are masked from the right (`rx-4` -> `rx-#`) while its form has < k rows
 * (Sweeney's hierarchy, as for a token: file header), and with no form of >= k rows it stays
 * split into its tokens. So a walk never joins one word's head to another word's tail
 * (`rx` `-` `benz`).
 * @returns the values' tokens with kept compounds merged (text: the compound as written), and
 *   per kept compound its model key (itself, or {@link shapeKey} of its masked form).
 */
function compoundTokens(values: readonly Token[][], counts: readonly number[], k: number): { toks: Token[][]; compounds: Map<string, string> } {
  // Per value, the [start, end) token ranges of its compounds.
  const spans = values.map((ts) => {
    const out: [number, number][] = [];
    for (let i = 0; i < ts.length; ) {
      let j = i + 1;
      while (j < ts.length && !ts[j].spaced) j++;
      let [a, b] = [i, j];
      while (a < b && !isRun(ts[a].text)) a++;
      while (b > a && !isRun(ts[b - 1].text)) b--;
      if (b - a >= 3) out.push([a, b]);
      i = j;
    }
    return out;
  });
  const text = (ts: Token[], [a, b]: [number, number]): string => ts.slice(a, b).map((t) => t.text).join("");
  const formsOf = new Map<string, string[]>();
  values.forEach((ts, i) => {
    for (const sp of spans[i]) {
      const c = text(ts, sp);
      if (!formsOf.has(c) && c.length <= MAX_TOKEN_LENGTH) formsOf.set(c, DIGIT_RE.test(c) ? digitForms(c) : [c]);
    }
  });
  // Levels: an index into the forms; forms.length: split.
  const level = new Map([...formsOf.keys()].map((c) => [c, 0]));
  const keyOf = (c: string): string | undefined => {
    const l = level.get(c);
    return l === undefined || l >= formsOf.get(c)!.length ? undefined : l === 0 ? c : shapeKey(formsOf.get(c)![l]);
  };
  for (let moved = formsOf.size > 0; moved; ) {
    moved = false;
    const rows = new Map<string, number>();
    values.forEach((ts, i) => {
      const keys = new Set(spans[i].map((sp) => keyOf(text(ts, sp))));
      for (const key of keys) if (key !== undefined) rows.set(key, (rows.get(key) ?? 0) + counts[i]);
    });
    for (const c of formsOf.keys()) {
      const key = keyOf(c);
      if (key !== undefined && (rows.get(key) ?? 0) < k) {
        level.set(c, level.get(c)! + 1);
        moved = true;
      }
    }
  }
  const compounds = new Map<string, string>();
  for (const c of formsOf.keys()) {
    const key = keyOf(c);
    if (key !== undefined) compounds.set(c, key);
  }
  if (compounds.size === 0) return { toks: [...values], compounds };
  const toks = values.map((ts, i) => {
    const out: Token[] = [];
    let at = 0;
    for (const sp of spans[i]) {
      const c = text(ts, sp);
      if (!compounds.has(c)) continue;
      out.push(...ts.slice(at, sp[0]), { text: c, spaced: ts[sp[0]].spaced });
      at = sp[1];
    }
    out.push(...ts.slice(at));
    return out;
  });
  return { toks, compounds };
}

/**
 * Builds the token model of a column (method in the file header) from distinct non-blank values
 * and their row counts; `k` (>= 1): rows a token, pair, triple or length needs to be released.
 * @returns the model, or undefined when no token or no length reaches k.
 */
export function buildTextModel(values: readonly string[], counts: readonly number[], k: number, shapeLetters = false): TextModel | undefined {
  const { toks, compounds } = compoundTokens(values.map(tokenize), counts, k);
  // Digit tokens start literal and are masked one digit further while their form has < k rows;
  // with `shapeLetters`, a word of fewer than k rows becomes its word class.
  // A capitalised word's class carries its public kind (`Aa:place`) while >= k rows hold that.
  const level = new Map<string, number>();
  const formsOf = new Map<string, string[]>();
  const kindOf = shapeLetters ? rareWordKinds(toks, counts, k) : new Map<string, WordKind>();
  for (const ts of toks) {
    for (const t of ts) {
      if (formsOf.has(t.text) || compounds.has(t.text)) continue;
      if (DIGIT_RE.test(t.text)) formsOf.set(t.text, digitForms(t.text));
      else if (shapeLetters && LETTERS_RE.test(t.text)) {
        const shape = letterShape(t.text);
        const kind = kindOf.get(t.text);
        formsOf.set(t.text, kind && shape.length === 2 ? [t.text, `${shape}:${kind}`, shape] : [t.text, shape]);
      }
      else continue;
      level.set(t.text, 0);
    }
  }
  const keyOf = (raw: string): string => {
    const compound = compounds.get(raw);
    if (compound !== undefined) return compound;
    const forms = formsOf.get(raw);
    if (!forms) return raw;
    const l = level.get(raw)!;
    return l === 0 ? raw : shapeKey(forms[l]);
  };
  const rowsOf = (): Map<string, number> => {
    const rows = new Map<string, number>();
    toks.forEach((ts, i) => {
      for (const key of new Set(ts.map((t) => keyOf(t.text)))) rows.set(key, (rows.get(key) ?? 0) + counts[i]);
    });
    return rows;
  };
  let rows = rowsOf();
  for (let moved = formsOf.size > 0; moved; ) {
    moved = false;
    for (const [raw, forms] of formsOf) {
      const l = level.get(raw)!;
      if (l < forms.length - 1 && (rows.get(keyOf(raw)) ?? 0) < k) {
        level.set(raw, l + 1);
        moved = true;
      }
    }
    if (moved) rows = rowsOf();
  }
  const kept = [...rows].filter(([key, r]) => r >= k && key.replace(/^\u0001/, "").length <= MAX_TOKEN_LENGTH).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).slice(0, MAX_WORDS).map(([key]) => key);
  const index = new Map(kept.map((key, i) => [key, i]));
  const n = kept.length;
  const B = n; // the boundary: start before the first token, end after the last
  const NUM = n + 1; // in first place of a triple: any number (a token of digits, released or not)
  const first = new Map<number, number>();
  const last = new Map<number, number>();
  const inner = new Map<number, number>();
  const pairs = new Map<number, [number, number]>(); // a * (n + 1) + b -> [rows, rows written without a space]
  const triples = new Map<string, number>();
  const lens = new Map<number, number>();
  const add = <K>(m: Map<K, number>, key: K, c: number): void => void m.set(key, (m.get(key) ?? 0) + c);
  toks.forEach((ts, i) => {
    const c = counts[i];
    if (ts.length === 0) return;
    add(lens, ts.length, c);
    const ids = ts.map((t) => index.get(keyOf(t.text)) ?? -1);
    if (ids[0] >= 0) add(first, ids[0], c);
    if (ids[ids.length - 1] >= 0) add(last, ids[ids.length - 1], c);
    for (const w of new Set(ids.slice(1))) if (w >= 0) add(inner, w, c);
    const seenPair = new Set<number>();
    const seenTriple = new Set<string>();
    const ext = [B, ...ids, B];
    for (let j = 1; j < ext.length - 1; j++) {
      const [a, b, d] = [ext[j - 1], ext[j], ext[j + 1]];
      if (b < 0) continue;
      if (j >= 2 && a >= 0) {
        const key = a * (n + 1) + b;
        const e = pairs.get(key) ?? [0, 0];
        if (!seenPair.has(key)) e[0] += c;
        if (!ts[j - 1].spaced) e[1] += c;
        pairs.set(key, e);
        seenPair.add(key);
      }
      const keys: string[] = [];
      if (a >= 0 && d >= 0) keys.push(`${a},${b},${d}`);
      if (j >= 2 && d >= 0 && NUMBER_RE.test(ts[j - 2].text)) keys.push(`${NUM},${b},${d}`);
      for (const key of keys) {
        if (!seenTriple.has(key)) add(triples, key, c);
        seenTriple.add(key);
      }
    }
    // A number in the middle: `| <number> block`, `| <number> Main` over every number.
    for (let j = 1; j < ext.length - 1; j++) {
      const [a, d] = [ext[j - 1], ext[j + 1]];
      if (a < 0 || d < 0 || !NUMBER_RE.test(ts[j - 1].text)) continue;
      const key = `${a},${NUM},${d}`;
      if (!seenTriple.has(key)) add(triples, key, c);
      seenTriple.add(key);
    }
  });
  const lengths: Record<string, number> = {};
  for (const [len, r] of [...lens].sort((a, b) => a[0] - b[0])) if (len > 0 && len <= MAX_TOKENS && r >= k) lengths[String(len)] = r;
  if (n === 0 || Object.keys(lengths).length === 0) return undefined;
  const atLeastK = (r: number | undefined): number => (r !== undefined && r >= k ? r : 0);
  const bigrams: TextModel["bigrams"] = [];
  for (const [key, [r, joined]] of pairs) {
    if (r < k) continue;
    const [a, b] = [Math.floor(key / (n + 1)), key % (n + 1)];
    bigrams.push(2 * joined > r ? [a, b, r, 1] : [a, b, r]);
  }
  bigrams.sort((x, y) => y[2] - x[2] || x[0] - y[0] || x[1] - y[1]);
  bigrams.length = Math.min(bigrams.length, MAX_BIGRAMS);
  const pairKept = new Set(bigrams.map(([a, b]) => a * (n + 1) + b));
  const firstK = (w: number): boolean => atLeastK(first.get(w)) > 0;
  const lastK = (w: number): boolean => atLeastK(last.get(w)) > 0;
  const linked = (a: number, b: number): boolean => (a === B ? firstK(b) : b === B ? lastK(a) : pairKept.has(a * (n + 1) + b));
  const trigrams: [number, number, number, number][] = [];
  for (const [key, r] of triples) {
    if (r < k) continue;
    const [a, b, d] = key.split(",").map(Number);
    if (b === NUM || ((a === NUM || linked(a, b)) && linked(b, d))) trigrams.push([a, b, d, r]);
  }
  trigrams.sort((x, y) => y[3] - x[3] || x[0] - y[0] || x[1] - y[1] || x[2] - y[2]);
  trigrams.length = Math.min(trigrams.length, MAX_TRIGRAMS);
  const shaped: number[] = [];
  const words = kept.map((key, i) => {
    if (key.startsWith("\u0001")) {
      shaped.push(i);
      return key.slice(1);
    }
    return key;
  });
  return {
    k,
    words,
    first: words.map((_, i) => atLeastK(first.get(i))),
    inner: words.map((_, i) => atLeastK(inner.get(i))),
    last: words.map((_, i) => atLeastK(last.get(i))),
    bigrams,
    trigrams,
    ...(shaped.length ? { shaped } : {}),
    lengths,
  };
}

/** A cumulative table for weighted draws. */
class Weighted {
  private readonly cum: number[] = [];
  constructor(
    readonly items: readonly number[],
    weights: readonly number[],
  ) {
    let acc = 0;
    for (const w of weights) this.cum.push((acc += Math.max(0, w)));
  }
  get total(): number {
    return this.cum.length ? this.cum[this.cum.length - 1] : 0;
  }
  /** The weight of item j. */
  weight(j: number): number {
    return this.cum[j] - (j > 0 ? this.cum[j - 1] : 0);
  }
  /** The same items with weights `f(item, weight)`. */
  filter(f: (item: number, w: number) => number): Weighted {
    return new Weighted(this.items, this.items.map((it, j) => f(it, this.weight(j))));
  }
  draw(rng: Rng): number {
    const u = rng.next() * this.total;
    let lo = 0;
    let hi = this.cum.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.cum[mid] > u) hi = mid;
      else lo = mid + 1;
    }
    return this.items[lo];
  }
}

/** Walks of the token model tried before a value is written by word counts instead. */
const WALKS = 8;
const CLOSING = /^[,.;:!?)\]}%]$/u;
const OPENING = /^[(\[{$#]$/u;
const JOINER = /^[-/'’]$/u;
const ORDINAL = /^([0-9]*)(st|nd|rd|th)$/i;

/** The English ordinal suffix of n (`1st`, `12th`, `22nd`). */
function ordinal(n: number): string {
  const t = n % 100;
  if (t >= 11 && t <= 13) return "th";
  return ["th", "st", "nd", "rd"][n % 10] ?? "th";
}

/** Writes text from a {@link TextModel}. @throws RangeError on a malformed model. */
export class TextWriter {
  private readonly n: number;
  private readonly lengths: Weighted;
  private readonly maxLen: number;
  private readonly first: Weighted;
  private readonly capital?: Weighted;
  private readonly inner: Weighted;
  private readonly last?: Weighted;
  private readonly lastRows: number[];
  private readonly next = new Map<number, Weighted>();
  private readonly rows: number[];
  /** Token model only: triples by first two tokens (key a * (n + 2) + b), glued pairs, shapes. */
  private readonly tokens: boolean;
  private readonly next2 = new Map<number, Weighted>();
  private readonly joined = new Set<number>();
  private readonly pairRows = new Map<number, number>();
  private readonly alnum: boolean[];
  /** Per token: a word of four letters or more (`HEALTH`, not `AND` or a shape), written once per value by a walk. */
  private readonly once: boolean[];
  /** Tokens of digits (literal or shaped), and per token b the rows of released pairs (number, b). */
  private readonly number: boolean[];
  private readonly numberPairRows = new Map<number, number>();
  /** Per token a (the start: n), the rows of released pairs (a, number). */
  private readonly numberAfter = new Map<number, number>();
  private readonly shaped = new Set<number>();
  /** Released tokens by the digit tail they write ({@link tailTokens}). */
  private readonly tails = new Map<string, Weighted>();
  private readonly alive: boolean[] = [];
  private readonly start?: Weighted;
  private readonly bag?: Weighted;
  /** For {@link ownWordLike} (built on first use): token ids by text, each token's word class, tokens of a class by rows. */
  private indexOf?: Map<string, number>;
  private classOf?: (string | undefined)[];
  private readonly byClass = new Map<string, Weighted>();

  constructor(private readonly model: TextModel) {
    const n = model?.words?.length ?? 0;
    if (n === 0) throw new RangeError("text model: no words");
    this.n = n;
    const shapes = new Set(model.shaped ?? []);
    this.alnum = model.words.map((w, i) => /[\p{L}\p{N}]/u.test(w) || shapes.has(i));
    this.once = model.words.map((w, i) => !shapes.has(i) && !isWordClass(w) && /\p{L}{4}/u.test(w));
    this.number = model.words.map((w, i) => (shapes.has(i) ? /^[0-9#]+$/ : NUMBER_RE).test(w));
    const lens = Object.entries(model.lengths ?? {}).map(([l, r]) => [Number(l), r] as const).filter(([l]) => Number.isInteger(l) && l >= 1 && l <= MAX_TOKENS);
    if (lens.length === 0) throw new RangeError("text model: no lengths");
    this.lengths = new Weighted(lens.map(([l]) => l), lens.map(([, r]) => r));
    this.maxLen = Math.max(...lens.map(([l]) => l));
    const idx = [...Array(n).keys()];
    const f = model.first ?? [];
    const inner = model.inner ?? [];
    this.rows = idx.map((i) => (f[i] ?? 0) + (inner[i] ?? 0) || 1);
    const fw = idx.map((i) => f[i] ?? 0);
    this.first = new Weighted(idx, fw.some((x) => x > 0) ? fw : this.rows);
    // Without a released first word, a capitalized word starts a value where the column has one (not `of`).
    const capital = idx.map((i) => (/^\p{Lu}/u.test(model.words[i]) ? this.rows[i] : 0));
    this.capital = capital.some((x) => x > 0) ? new Weighted(idx, capital) : undefined;
    const iw = idx.map((i) => inner[i] ?? 0);
    this.inner = new Weighted(idx, iw.some((x) => x > 0) ? iw : this.rows);
    this.lastRows = idx.map((i) => model.last?.[i] ?? 0);
    if (this.lastRows.some((x) => x > 0)) this.last = new Weighted(idx, this.lastRows);
    const inRange = (i: number, hi: number): boolean => Number.isInteger(i) && i >= 0 && i <= hi;
    const by = new Map<number, [number[], number[]]>();
    for (const [a, b, r, j] of model.bigrams ?? []) {
      if (!(inRange(a, n - 1) && inRange(b, n - 1))) throw new RangeError(`text model: pair (${a}, ${b}) out of range`);
      const e = by.get(a) ?? [[], []];
      e[0].push(b);
      e[1].push(r);
      by.set(a, e);
      if (j === 1) this.joined.add(a * (n + 1) + b);
      this.pairRows.set(a * (n + 1) + b, r);
      if (this.number[a]) this.numberPairRows.set(b, (this.numberPairRows.get(b) ?? 0) + r);
      if (this.number[b]) this.numberAfter.set(a, (this.numberAfter.get(a) ?? 0) + r);
    }
    for (const [a, [bs, rs]] of by) this.next.set(a, new Weighted(bs, rs));
    this.tokens = model.trigrams !== undefined;
    if (!this.tokens) return;
    for (const i of model.shaped ?? []) {
      if (!inRange(i, n - 1)) throw new RangeError(`text model: shaped token ${i} out of range`);
      this.shaped.add(i);
    }
    const by2 = new Map<number, [number[], number[]]>();
    for (const [a, b, c, r] of model.trigrams!) {
      if (!(inRange(a, n + 1) && (inRange(b, n - 1) || b === n + 1) && inRange(c, n))) throw new RangeError(`text model: triple (${a}, ${b}, ${c}) out of range`);
      const e = by2.get(a * (n + 2) + b) ?? [[], []];
      e[0].push(c);
      e[1].push(r);
      by2.set(a * (n + 2) + b, e);
    }
    for (const [key, [cs, rs]] of by2) this.next2.set(key, new Weighted(cs, rs));
    // Tokens from which released pairs reach a released end (backwards from the ends).
    const pred = new Map<number, number[]>();
    for (const [a, b] of model.bigrams) pred.set(b, [...(pred.get(b) ?? []), a]);
    const queue = idx.filter((i) => this.lastRows[i] > 0);
    for (const i of queue) this.alive[i] = true;
    while (queue.length) for (const a of pred.get(queue.pop()!) ?? []) if (!this.alive[a]) (this.alive[a] = true), queue.push(a);
    this.numberAfter.set(n, idx.reduce((t, i) => t + (this.number[i] ? fw[i] : 0), 0));
    const starts = idx.map((i) => (this.alive[i] ? fw[i] : 0));
    if (starts.some((x) => x > 0)) this.start = new Weighted(idx, starts);
    // Words (tokens with a letter), for values written by word counts.
    const bag = idx.map((i) => (/\p{L}/u.test(model.words[i]) ? this.rows[i] : 0));
    if (bag.some((x) => x > 0)) this.bag = new Weighted(idx, bag);
  }

  /** True when the model has a released path from a start to an end (values read as the column's). */
  walks(): boolean {
    return this.tokens && this.start !== undefined;
  }

  /** True when the model has a released path from start to end, or two words to draw by counts. */
  writes(): boolean {
    if (!this.tokens || this.start) return true;
    return this.bag !== undefined && this.bag.items.filter((_, j) => this.bag!.weight(j) > 0).length >= 2;
  }

  /**
   * One value: a walk over released triples and pairs (`explore`: more back-off, for more new
   * values), redrawn up to {@link WALKS} times, else words by pairs and counts. Older models:
   * words by counts, no word twice, the last among words that end >= k rows (no trailing `of`).
   */
  write(rng: Rng, explore = false): string {
    if (!this.tokens) return this.byCounts(rng, false);
    for (let t = 0; t < WALKS && this.start; t++) {
      const ids = this.walk(rng, explore);
      if (ids) return this.render(ids, rng);
    }
    return this.byCounts(rng, true);
  }

  /** Token ids of a walk from start to end, or undefined when stuck or too long. */
  private walk(rng: Rng, explore: boolean): number[] | undefined {
    const n = this.n;
    const END = n;
    const ids = [this.start!.draw(rng)];
    for (;;) {
      const b = ids[ids.length - 1];
      const a = ids.length >= 2 ? ids[ids.length - 2] : n;
      const full = ids.length >= this.maxLen;
      // A long word already in the value is passed over while another continuation is left
      // (`SOCIAL AND SOCIAL POLICY`, `Mesa Police Department and Mesa Police Department`).
      const live = (c: number): boolean => (c === END ? true : !full && this.alive[c] === true);
      const unused = (c: number): boolean => live(c) && (c === END || !this.once[c] || !ids.includes(c));
      let c = -1;
      for (const ok of [unused, live]) {
        c = this.step(rng, ids, a, b, ok, explore);
        if (c >= 0) break;
      }
      if (c < 0) return undefined;
      if (c === END) return this.balanced(ids) ? ids : undefined;
      if (full) return undefined;
      ids.push(c);
    }
  }

  /**
   * The token after `b` (after `a`; `n` at the start) of a walk's `ids`, among those `ok` takes:
   * released triples, else Katz back-off to the pairs of b; -1 when none is left.
   */
  private step(rng: Rng, ids: readonly number[], a: number, b: number, ok: (c: number) => boolean, explore: boolean): number {
    const n = this.n;
    const END = n;
    let c = -1;
    // At or after a number, the triples of any number (`2009 Main` -> `St` as at every number).
    const atNum = this.number[b] && this.next2.has(a * (n + 2) + n + 1);
    const num = !atNum && a < n && this.number[a] && this.next2.has((n + 1) * (n + 2) + b);
    const all = this.next2.get(atNum ? a * (n + 2) + n + 1 : num ? (n + 1) * (n + 2) + b : a * (n + 2) + b);
    const tri = all?.filter((item, w) => (ok(item) ? w : 0));
    // Katz back-off: the triples cover `covered` of the rows of (a, b); the rest continue with a
    // token whose triple was held by fewer than k rows, so they go to the pairs of b.
    const context = atNum ? this.numberAfter.get(a) ?? 0 : num ? this.numberPairRows.get(b) ?? 0 : a === n ? this.model.first[b] : this.pairRows.get(a * (n + 1) + b) ?? 0;
    let covered = all && context > 0 ? Math.min(1, all.total / context) : 1;
    if (explore && tri) covered *= tri.total / (tri.total + tri.items.filter((_, j) => tri.weight(j) > 0).length);
    // The second token is one the first token's released triples continue with (a make's own
    // model, not another make's): no back-off from the start context while it has any.
    if (a === n && all !== undefined && all.total > 0) {
      if (tri!.total > 0) c = tri!.draw(rng);
    } else if (tri && tri.total > 0 && rng.next() < covered) c = tri.draw(rng);
    else {
      // Pairs without the triples' continuations (Katz), unless nothing else is left; a value of
      // one word, or one ending after a mark (`2107 W.`), ends only through a released triple.
      const nx = this.next.get(b);
      const inTri = new Set(all?.items ?? []);
      const endW = a === n || !this.alnum[b] || this.wordsIn(ids) < 2 ? 0 : this.lastRows[b];
      const items = [...(nx?.items ?? []), END];
      const weights = [...(nx ? nx.items.map((item, j) => (ok(item) ? nx.weight(j) : 0)) : []), endW];
      const fresh = weights.map((w, j) => (inTri.has(items[j]) ? 0 : w));
      const bi = new Weighted(items, fresh.some((w) => w > 0) ? fresh : weights);
      if (bi.total > 0) c = bi.draw(rng);
      else if (tri && tri.total > 0) c = tri.draw(rng);
    }
    return c;
  }

  /** True when the tokens' brackets are balanced (no `New)`). */
  private balanced(ids: readonly number[]): boolean {
    const open: string[] = [];
    for (const i of ids) {
      const t = this.model.words[i];
      if (t === "(" || t === "[") open.push(t);
      else if (t === ")" || t === "]") {
        if (open.pop() !== (t === ")" ? "(" : "[")) return false;
      }
    }
    return open.length === 0;
  }

  /** Number of tokens of `ids` with a letter or digit. */
  private wordsIn(ids: readonly number[]): number {
    let w = 0;
    for (const i of ids) if (this.alnum[i]) w++;
    return w;
  }

  /** Words drawn by counts ({@link write}); `tokens`: only tokens with a letter, spaced by kind. */
  private byCounts(rng: Rng, tokens: boolean): string {
    const words = this.model.words;
    const pool = tokens ? this.bag ?? this.inner : this.inner;
    const isWord = (w: number): boolean => !tokens || /\p{L}/u.test(words[w]);
    const len = this.lengths.draw(rng);
    // A one-word value of a token model is a word that ends >= k values (`Carolina`, not `New`).
    const alone = tokens && len === 1 ? this.last?.filter((b, wt) => (isWord(b) ? wt : 0)) : undefined;
    let w = alone && alone.total > 0 ? alone.draw(rng) : this.first.draw(rng);
    for (let t = 0; t < 8 && !isWord(w); t++) w = (this.capital ?? pool).draw(rng);
    const out = [w];
    const used = new Set([words[w].toLowerCase()]);
    while (out.length < len) {
      const prev = w;
      const nx = this.next.get(prev)?.filter((item, wt) => (isWord(item) ? wt : 0));
      const final = out.length === len - 1 && this.last !== undefined;
      const drawOne = (): number => {
        if (final) {
          const ends = nx && nx.items.some((b, j) => this.lastRows[b] > 0 && nx.weight(j) > 0) ? nx.filter((b, wt) => (this.lastRows[b] > 0 ? wt : 0)) : this.last!.filter((b, wt) => (isWord(b) ? wt : 0));
          if (ends.total > 0) return ends.draw(rng);
        }
        return nx && nx.total > 0 && rng.next() * this.rows[prev] < nx.total ? nx.draw(rng) : pool.draw(rng);
      };
      w = drawOne();
      for (let t = 0; t < 4 && (used.has(words[w].toLowerCase()) || !isWord(w)); t++) w = drawOne();
      // A value ends rather than repeat a word (`Site Site`).
      if (!isWord(w) || used.has(words[w].toLowerCase())) break;
      out.push(w);
      used.add(words[w].toLowerCase());
    }
    return tokens ? this.render(out, rng) : out.map((i) => words[i]).join(" ");
  }

  /**
   * A digit shape's slots filled from the model's released tokens (>= k rows each), so a masked
   * `12/1#/####` reads as a date the column holds: the longest tail (from a run of digits or of
   * slots to the shape's end, trailing marks set aside) that released tokens write with digits in every slot
   * and the same characters elsewhere takes one of them (drawn by rows); the part before it is
   * filled the same way. Slots no released token covers, and shapes of one run of slots, are left
   * for {@link fill}.
   */
  private fromReleased(t: string, rng: Rng): string {
    // A shape of one run of slots (`5##`, `rx-#`, `1##ls`: a model number) keeps random digits:
    // its released prefix sets its size, and filled from a released token it would mostly copy
    // a real value. Dates and phone numbers have two runs or more, or end in a number begun
    // with literal digits (`1/1/201#`, whose year's last digit comes from a released year).
    const runs = (t.match(/#+/g) ?? []).length;
    const single = runs === 1 && /[^0-9#]/.test(t) && /[^0-9#][0-9]+#+$/.test(t);
    if (runs < 2 && !single) return t;
    const chars = Array.from(t);
    let end = chars.length;
    for (;;) {
      while (end > 0 && !(chars[end - 1] === SLOT || DIGIT_RE.test(chars[end - 1]))) end--;
      let took = false;
      for (let s = 0; s < end && !took; s++) {
        // From a run of digits (its literal digits kept: `201#` matches `2012`), or of slots.
        const digitAt = (j: number): boolean => j >= 0 && (chars[j] === SLOT || DIGIT_RE.test(chars[j]));
        if (!(digitAt(s) && !digitAt(s - 1)) && !(chars[s] === SLOT && chars[s - 1] !== SLOT)) continue;
        if (!chars.slice(s, end).includes(SLOT)) continue;
        const cands = this.tailTokens(chars.slice(s, end).join(""), s === 0 ? "" : chars[s - 1]);
        if (cands.total === 0) continue;
        const c = Array.from(this.model.words[cands.draw(rng)]);
        for (let j = s; j < end; j++) chars[j] = c[c.length - (end - j)];
        end = s;
        took = true;
      }
      if (!took || !chars.slice(0, end).includes(SLOT)) return chars.join("");
    }
  }

  /** Released tokens whose last characters write `tail` (digits in its slots) after a character of `before`'s class, by rows; cached. */
  private tailTokens(tail: string, before: string): Weighted {
    const isDigit = (c: string | undefined): boolean => c !== undefined && (c === SLOT || DIGIT_RE.test(c));
    const key = `${isDigit(before) ? 1 : 0}${tail}`;
    let w = this.tails.get(key);
    if (w) return w;
    const tc = Array.from(tail);
    const items: number[] = [];
    const weights: number[] = [];
    this.model.words.forEach((word, i) => {
      if (this.shaped.has(i) && isWordClass(word)) return;
      const c = Array.from(word);
      const off = c.length - tc.length;
      if (off < 0 || isDigit(c[off - 1]) !== isDigit(before)) return;
      for (let j = 0; j < tc.length; j++) {
        const x = c[off + j];
        if (x === SLOT || (tc[j] === SLOT ? !DIGIT_RE.test(x) : x !== tc[j])) return;
      }
      items.push(i);
      weights.push(this.rows[i]);
    });
    w = new Weighted(items, weights);
    this.tails.set(key, w);
    return w;
  }

  /**
   * A word class `Aa` or `AA` (a rare word of no public kind) written as one of the column's own
   * released words of that class that follows `prev` in a released pair (at the start: that
   * starts >= k values) and precedes `next` in one (at the end: ends >= k values), by the first
   * pair's rows: `Lake Aa` as a lake the column names, not a surname a place column lacks.
   * Undefined when none does.
   */
  private ownWord(shape: string, prev: number | undefined, next: number | undefined, rng: Rng): string | undefined {
    const words = this.model.words;
    const fits = (i: number): boolean => !this.shaped.has(i) && LETTERS_RE.test(words[i]) && Array.from(words[i]).length >= 2 && letterShape(words[i]) === shape;
    const from = prev === undefined ? this.first : this.next.get(prev);
    if (!from) return undefined;
    const cands = from.filter((i, wt) => (fits(i) ? wt : 0));
    if (cands.total === 0) return undefined;
    const n = this.n;
    const before = cands.filter((i, wt) => ((next === undefined ? this.lastRows[i] : this.pairRows.get(i * (n + 1) + next) ?? 0) > 0 ? wt : 0));
    return before.total > 0 ? words[before.draw(rng)] : undefined;
  }

  /**
   * Another of the column's own released words for `word` in a value (an identifier's respelled
   * value, `./semantic-generator`): a word of its letter class ({@link letterShape}) other than
   * `word` that follows `prev` (the value's previous run of letters or digits; undefined at the
   * start: one that starts >= k values) and precedes `next` (undefined at the end: one that ends
   * >= k values) in released pairs, else (inside a value) that follows `prev`, by the first pair's
   * rows, else (inside a value) any, by rows (`la República de Corea` -> `de Guinea`, not a
   * surname). Undefined when the model releases none.
   */
  ownWordLike(word: string, prev: string | undefined, next: string | undefined, rng: Rng): string | undefined {
    const words = this.model.words;
    const shape = letterShape(word);
    this.indexOf ??= new Map(words.map((w, i) => [w, i]));
    this.classOf ??= words.map((w, i) => (!this.shaped.has(i) && LETTERS_RE.test(w) && Array.from(w).length >= 2 ? letterShape(w) : undefined));
    const at = (w: string | undefined): number | undefined => (w === undefined ? undefined : this.indexOf!.get(w) ?? -1);
    const [p, q] = [at(prev), at(next)];
    if (p === -1 || q === -1) return undefined;
    const n = this.n;
    const classOf = this.classOf;
    const own = (i: number): boolean => classOf[i] === shape && words[i] !== word;
    const before = (i: number): boolean => (q === undefined ? this.lastRows[i] > 0 : this.pairRows.has(i * (n + 1) + q));
    // The class's tokens by rows, and those starting values (cached per class).
    const ofClass = (key: string, from: () => Weighted): Weighted => {
      let w = this.byClass.get(key);
      if (!w) this.byClass.set(key, (w = from().filter((i, wt) => (classOf[i] === shape ? wt : 0))));
      return w;
    };
    const from = p === undefined ? ofClass(`^${shape}`, () => this.first) : this.next.get(p);
    if (!from) return undefined;
    // Inside a value, one that follows `prev` alone where none also precedes `next`, else any.
    for (const ok of q === undefined ? [before] : [before, () => true]) {
      const cands = from.filter((i, wt) => (own(i) && ok(i) ? wt : 0));
      if (cands.total > 0) return words[cands.draw(rng)];
    }
    if (q === undefined) return undefined;
    const any = ofClass(shape, () => new Weighted([...this.rows.keys()], this.rows));
    for (let t = 0; t < 4 && any.total > 0; t++) {
      const w = words[any.draw(rng)];
      if (w !== word) return w;
    }
    return undefined;
  }


  /** The text of token ids: shapes filled, spaced unless the pair is written without one. */
  private render(ids: number[], rng: Rng): string {
    const n = this.n;
    let s = "";
    const spaced: boolean[] = [false];
    ids.forEach((id, j) => {
      let t = this.model.words[id];
      if (this.shaped.has(id)) {
        const own = t === "Aa" || t === "AA" ? this.ownWord(t, j > 0 ? ids[j - 1] : undefined, ids[j + 1], rng) : undefined;
        t = own ?? (isWordClass(t) ? fillWord(t, rng) : fill(this.fromReleased(t, rng), rng));
      }
      if (j > 0) {
        const a = ids[j - 1];
        const pair = this.next.get(a)?.items.includes(id);
        // A joiner (`-`, `/`, `'`) is spaced on its right as on its left; else the pair's spacing,
        // or without a released pair: closing marks lean left, opening marks right.
        const joiner = JOINER.test(this.model.words[a]) && j >= 2;
        const glued = joiner ? !spaced[j - 1] : pair ? this.joined.has(a * (n + 1) + id) : CLOSING.test(t) || OPENING.test(this.model.words[a]);
        spaced[j] = !glued;
        if (!glued) s += " ";
      }
      s += t;
    });
    return s;
  }
}

/**
 * A word class filled with a public word: a capital letter (`A`), a surname in its case (`Aa`,
 * `AA`), a word of its kind in its case (`Aa:place`, `AA:male`: {@link publicWordKinds}), a noun
 * (`a`), from faker's English lists (`./pools`).
 */
function fillWord(t: string, rng: Rng): string {
  const words = publicWords();
  if (t === "A") return String.fromCharCode(65 + rng.int(26));
  if (t === "a") return words.lower[rng.int(words.lower.length)];
  const [shape, kind] = t.split(":") as [string, WordKind | undefined];
  const pool = kind ? publicWordKinds().fill[kind] : words.capitalized;
  const w = pool[rng.int(pool.length)];
  return shape === "AA" ? w.toUpperCase() : w;
}

/**
 * A public word of the kind of `word` (a place, a country, a woman's or a man's given name, a car
 * or an animal, in {@link WORD_KINDS} order; a country in `locale`, also for any word of a
 * country's name), in its case; else a surname (an id column's respelled words: `./semantic-generator`).
 */
export function publicWordLike(word: string, rng: Rng, locale: SemanticLocale = "en"): string {
  const kind = kindsOf(word).find((kd): kd is WordKind => kd !== "last" && kd !== "noun") ?? (inCountryName(titleCase(word)) ? "country" : undefined);
  const pool = kind === "country" ? countriesIn(locale) : kind ? publicWordKinds().fill[kind] : publicWords().capitalized;
  const w = pool[rng.int(pool.length)];
  return Array.from(word).length > 1 && word === word.toUpperCase() ? w.toUpperCase() : w;
}

/** A shaped token filled: a run's first digit 1-9, others 0-9; ordinal suffixes fit (`21st`). */
function fill(t: string, rng: Rng): string {
  const chars = Array.from(t);
  for (let j = 0; j < chars.length; j++) {
    if (chars[j] !== SLOT) continue;
    const runStart = j === 0 || !(chars[j - 1] === SLOT || DIGIT_RE.test(chars[j - 1]));
    const runLong = j + 1 < chars.length && (chars[j + 1] === SLOT || DIGIT_RE.test(chars[j + 1]));
    chars[j] = String(runStart && (runLong || chars.length === 1 || ORDINAL.test(t.replaceAll(SLOT, "1"))) ? 1 + rng.int(9) : rng.int(10));
  }
  const out = chars.join("");
  const m = ORDINAL.exec(out);
  if (m && m[1] !== "") {
    const suf = ordinal(Number(m[1]));
    return m[1] + (m[2] === m[2].toUpperCase() ? suf.toUpperCase() : suf);
  }
  return out;
}
