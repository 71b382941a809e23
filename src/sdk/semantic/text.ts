/**
 * Titles and free text (semantic kind `title`: film titles, product names, airport names): a word
 * model of the column built from words that occur in at least k distinct rows, and a generator
 * that writes new text in the column's style from it.
 *
 * What the metadata carries ({@link TextModel}): the kept words (whitespace-separated tokens, case
 * kept, so capitalisation per position comes with them), per word the number of rows where it is
 * the first word, where it occurs later and where it is the last word, adjacent word pairs seen in >= k rows with their row
 * counts, and the rows per number of words, each count kept only when >= k (k = the rare
 * threshold, `rareThreshold`, default 2). Why that is safe at k: every released word, pair and
 * word count is shared by at least k rows, the same rule that lets a categorical value have a
 * code of its own; a word seen in fewer rows (a surname in a title, a place name) could point at
 * one row and is never released. Counts are aggregates over >= k rows. At most
 * {@link MAX_WORDS} words (the most frequent) and {@link MAX_BIGRAMS} pairs are kept.
 *
 * Generation (a bigram model with unigram back-off, Jurafsky and Martin, "Speech and Language
 * Processing", ch. 3): the number of words from `lengths`; the first word from `first` (or all
 * words' counts when no word starts >= k rows); each next word, with probability (pair rows from
 * the previous word) / (its rows), from the pairs starting at the previous word, else from `inner`;
 * the last word among the words that end >= k rows (`last`).
 */
import type { Rng } from "../generate/sfc32";
import type { TextModel } from "./types";

/** Most words kept (by rows, then code-unit order). */
export const MAX_WORDS = 5000;
/** Most pairs kept (by rows). */
export const MAX_BIGRAMS = 10000;

/** Splits a value into words (runs of non-whitespace). */
export function words(v: string): string[] {
  return v.split(/\s+/).filter((w) => w !== "");
}

/**
 * Builds the word model of a column.
 * @param values distinct non-blank values; @param counts rows per value (a value in c rows counts
 *   c rows for each of its words).
 * @param k rows a word, pair or length needs to be kept (integer >= 1).
 * @returns the model, or undefined when no length or no word reaches k (nothing safe to release).
 */
export function buildTextModel(values: readonly string[], counts: readonly number[], k: number): TextModel | undefined {
  const rows = new Map<string, number>();
  const first = new Map<string, number>();
  const inner = new Map<string, number>();
  const last = new Map<string, number>();
  const pairs = new Map<string, number>();
  const lens = new Map<number, number>();
  values.forEach((v, i) => {
    const c = counts[i];
    const ws = words(v);
    lens.set(ws.length, (lens.get(ws.length) ?? 0) + c);
    for (const w of new Set(ws)) rows.set(w, (rows.get(w) ?? 0) + c);
    if (ws.length) first.set(ws[0], (first.get(ws[0]) ?? 0) + c);
    if (ws.length > 1) last.set(ws[ws.length - 1], (last.get(ws[ws.length - 1]) ?? 0) + c);
    for (const w of new Set(ws.slice(1))) inner.set(w, (inner.get(w) ?? 0) + c);
    const seen = new Set<string>();
    for (let j = 1; j < ws.length; j++) {
      const key = ws[j - 1] + "\u0000" + ws[j];
      if (!seen.has(key)) pairs.set(key, (pairs.get(key) ?? 0) + c);
      seen.add(key);
    }
  });
  const kept = [...rows].filter(([, r]) => r >= k).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, MAX_WORDS).map(([w]) => w);
  const index = new Map(kept.map((w, i) => [w, i]));
  const atLeastK = (n: number | undefined): number => (n !== undefined && n >= k ? n : 0);
  const lengths: Record<string, number> = {};
  for (const [len, r] of [...lens].sort((a, b) => a[0] - b[0])) if (len > 0 && r >= k) lengths[String(len)] = r;
  if (kept.length === 0 || Object.keys(lengths).length === 0) return undefined;
  const bigrams: [number, number, number][] = [];
  for (const [key, r] of pairs) {
    if (r < k) continue;
    const [a, b] = key.split("\u0000");
    const ia = index.get(a);
    const ib = index.get(b);
    if (ia !== undefined && ib !== undefined) bigrams.push([ia, ib, r]);
  }
  bigrams.sort((x, y) => y[2] - x[2] || x[0] - y[0] || x[1] - y[1]);
  return {
    k,
    words: kept,
    first: kept.map((w) => atLeastK(first.get(w))),
    inner: kept.map((w) => atLeastK(inner.get(w))),
    last: kept.map((w) => atLeastK(last.get(w))),
    bigrams: bigrams.slice(0, MAX_BIGRAMS),
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

/**
 * Writes text from a {@link TextModel}.
 * @throws RangeError on a malformed model (no words, no lengths, an index out of range).
 */
export class TextWriter {
  private readonly lengths: Weighted;
  private readonly first: Weighted;
  private readonly inner: Weighted;
  private readonly last?: Weighted;
  private readonly lastRows: number[];
  private readonly next = new Map<number, Weighted>();
  private readonly rows: number[];

  constructor(private readonly model: TextModel) {
    const n = model?.words?.length ?? 0;
    if (n === 0) throw new RangeError("text model: no words");
    const lens = Object.entries(model.lengths ?? {}).map(([l, r]) => [Number(l), r] as const).filter(([l]) => Number.isInteger(l) && l >= 1 && l <= 1000);
    if (lens.length === 0) throw new RangeError("text model: no lengths");
    this.lengths = new Weighted(lens.map(([l]) => l), lens.map(([, r]) => r));
    const idx = [...Array(n).keys()];
    const f = model.first ?? [];
    const inner = model.inner ?? [];
    this.rows = idx.map((i) => (f[i] ?? 0) + (inner[i] ?? 0) || 1);
    const fw = idx.map((i) => f[i] ?? 0);
    this.first = new Weighted(idx, fw.some((x) => x > 0) ? fw : this.rows);
    const iw = idx.map((i) => inner[i] ?? 0);
    this.inner = new Weighted(idx, iw.some((x) => x > 0) ? iw : this.rows);
    this.lastRows = idx.map((i) => model.last?.[i] ?? 0);
    if (this.lastRows.some((x) => x > 0)) this.last = new Weighted(idx, this.lastRows);
    const by = new Map<number, [number[], number[]]>();
    for (const [a, b, r] of model.bigrams ?? []) {
      if (!(a >= 0 && a < n && b >= 0 && b < n)) throw new RangeError(`text model: pair (${a}, ${b}) out of range`);
      const e = by.get(a) ?? [[], []];
      e[0].push(b);
      e[1].push(r);
      by.set(a, e);
    }
    for (const [a, [bs, rs]] of by) this.next.set(a, new Weighted(bs, rs));
  }

  /**
   * One text: a drawn number of words, joined by single spaces. A word already in the text (case
   * folded) is redrawn (at most 4 times); the last word of a text of 2 or more words is drawn
   * among the words that end >= k rows (following the previous word's pairs when some of its
   * successors do), so texts do not stop on `of` or `the`.
   */
  write(rng: Rng): string {
    const len = this.lengths.draw(rng);
    let w = this.first.draw(rng);
    const out = [this.model.words[w]];
    const used = new Set([out[0].toLowerCase()]);
    while (out.length < len) {
      const prev = w;
      const nx = this.next.get(prev);
      const final = out.length === len - 1 && this.last !== undefined;
      const drawOne = (): number => {
        if (final) {
          const ends = nx && nx.items.some((b) => this.lastRows[b] > 0) ? new Weighted(nx.items, nx.items.map((b, j) => (this.lastRows[b] > 0 ? nx.weight(j) : 0))) : this.last!;
          return ends.draw(rng);
        }
        return nx && rng.next() * this.rows[prev] < nx.total ? nx.draw(rng) : this.inner.draw(rng);
      };
      w = drawOne();
      for (let t = 0; t < 4 && used.has(this.model.words[w].toLowerCase()); t++) w = drawOne();
      out.push(this.model.words[w]);
      used.add(this.model.words[w].toLowerCase());
    }
    return out.join(" ");
  }
}
