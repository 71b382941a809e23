/**
 * Words of a column written in its own words that belong to one value of another column
 * (`Starlink` missions are all SpaceX's): found at fit, kept at decoding, so a fresh text agrees
 * with its row (issue 40: "text tied to its row").
 *
 * Fit ({@link findWordPartners}): for an identifier column with a token model (`title`, `text`),
 * a word (a run of two or more letters inside a released token: `SSF` in `SSF-D-#`) is tied to a
 * value of a categorical column when every
 * one of the >= k real rows holding the token has that value, the value has a code of its own, and
 * so many rows would agree by chance with probability below {@link TIE_CHANCE} (p^rows, p the
 * value's share of the rows: a word seen 3 times beside a value of half the rows is chance). Of the
 * categorical columns, the one tying the most rows is kept (`semantic.word_partner`). Only what
 * >= k rows hold is released, as the model's tokens are.
 *
 * Decoding ({@link fitsPartner}): the identifier's decoder reads the row's code of that column and
 * takes, among 16 candidates of the row, the first none of whose tied words belongs to another
 * value (`../columns/id`).
 */
import type { Metadata } from "../../contract";
import { MISSING_KEY, OTHER, type ColumnScan } from "../columns/common";
import type { SemanticShape } from "./types";

/** Largest chance that the rows of a word all hold one value by accident (p^rows). */
const TIE_CHANCE = 0.01;

/**
 * Sets `id_shape.semantic.word_partner` on each identifier column of `metadata` with a token model
 * whose words tie to values of a categorical column (rules above), in place.
 * @param sample the scanned rows the metadata was built from (the fit's sample).
 * @param k the rare threshold: a tied word is held by >= k rows.
 */
export function findWordPartners(metadata: Metadata, sample: { columns: readonly string[]; n: number; scans: readonly ColumnScan[] }, k: number): void {
  const stats = metadata.column_stats ?? {};
  for (const [f, st] of Object.entries(stats)) {
    const sem = st.type === "id" && st.id_shape?.kind === "text" ? (st.id_shape.semantic as SemanticShape | undefined) : undefined;
    const model = sem?.text;
    const at = sample.columns.indexOf(f);
    if (!sem || !model?.trigrams || at < 0) continue;
    // Candidate words: runs of two or more letters inside the model's tokens (`SSF` in `SSF-D-#`).
    const index = new Map<string, number>();
    for (const t of model.words) for (const w of lettersOf(t)) if (!index.has(w)) index.set(w, index.size);
    if (index.size === 0) continue;
    const words = [...index.keys()];
    // Per distinct value, the candidate words it holds (each once).
    const scan = sample.scans[at];
    const wordsOfValue = scan.values.map((v) => [...new Set(lettersOf(v).map((w) => index.get(w)).filter((i): i is number => i !== undefined))]);
    let best: { column: string; words: [string, number][]; rows: number } | undefined;
    for (const [g, gst] of Object.entries(stats)) {
      const mapping = metadata.value_mappings?.[g];
      const gat = sample.columns.indexOf(g);
      if (g === f || gst.type !== "categorical" || !mapping || gat < 0) continue;
      const gscan = sample.scans[gat];
      // Per value of g, its code (undefined: pooled or blank) and rows.
      const codeOf = gscan.values.map((v) => {
        const c = v === "" ? undefined : mapping[v];
        return c === undefined || c === mapping[OTHER] || c === mapping[MISSING_KEY] ? undefined : c;
      });
      const tie = new Map<number, { code: number | undefined; rows: number; one: boolean }>();
      for (let r = 0; r < sample.n; r++) {
        const code = codeOf[gscan.ids[r]];
        for (const w of wordsOfValue[scan.ids[r]]) {
          const t = tie.get(w);
          if (!t) tie.set(w, { code, rows: 1, one: code !== undefined });
          else {
            t.rows++;
            if (t.code !== code) t.one = false;
          }
        }
      }
      const ties: [string, number][] = [];
      let rows = 0;
      for (const [w, t] of tie) {
        if (!t.one || t.rows < k || t.code === undefined) continue;
        const share = gscan.counts[codeOf.indexOf(t.code)] / sample.n;
        if (share >= 1 || t.rows * Math.log(share) > Math.log(TIE_CHANCE)) continue;
        ties.push([words[w], t.code]);
        rows += t.rows;
      }
      if (ties.length && (!best || rows > best.rows)) best = { column: g, words: ties.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)), rows };
    }
    if (best) sem.word_partner = { column: best.column, words: best.words };
  }
}

/** Runs of two or more letters of a text: the words ties are read on. */
export function lettersOf(v: string): string[] {
  return v.match(/\p{L}{2,}/gu) ?? [];
}

/** Per tied word, the partner code it belongs to, from `semantic.word_partner`; undefined without one. */
export function tiedWords(sem: SemanticShape | undefined): Map<string, number> | undefined {
  const wp = sem?.word_partner;
  return wp ? new Map(wp.words) : undefined;
}

/** Whether no word of `v` is tied to a partner code other than `code`. */
export function fitsPartner(tied: ReadonlyMap<string, number>, v: string, code: number): boolean {
  for (const w of lettersOf(v)) {
    const c = tied.get(w);
    if (c !== undefined && c !== code) return false;
  }
  return true;
}

/** One identifier column with tied words, with its partner's feature and value codes. */
interface TiedColumn {
  f: number;
  g: number;
  tied: Map<string, number>;
  codeOf: Map<string, number>;
}

/**
 * Keeps identifiers' tied words beside their value after the row rules (which may change the
 * partner: a company repaired to fit its launch site): a row whose text holds words of another
 * value exchanges its text with a row of that value whose text holds no tied word or words of
 * this row's value, so the batch keeps its texts and only their rows change.
 */
export class WordPartnerWriter {
  private readonly columns: TiedColumn[] = [];

  constructor(metadata: Metadata) {
    metadata.features.forEach((name, f) => {
      const st = metadata.column_stats?.[name];
      const sem = st?.type === "id" && st.id_shape?.kind === "text" ? (st.id_shape.semantic as SemanticShape | undefined) : undefined;
      const tied = tiedWords(sem);
      const g = sem?.word_partner ? metadata.features.indexOf(sem.word_partner.column) : -1;
      const mapping = sem?.word_partner ? metadata.value_mappings?.[sem.word_partner.column] : undefined;
      if (!tied || g < 0 || !mapping) return;
      this.columns.push({ f, g, tied, codeOf: new Map(Object.entries(mapping)) });
    });
  }

  /** Whether any column has tied words. */
  get active(): boolean {
    return this.columns.length > 0;
  }

  /**
   * Exchanges misplaced texts in place (rows `fixed` for either column are left as they are).
   * @returns the cells changed.
   */
  apply(cells: { length: number; get(r: number, f: number): string; set(r: number, f: number, text: string): void }, fixed?: (row: number, feature: number) => boolean): number {
    let changed = 0;
    for (const { f, g, tied, codeOf } of this.columns) {
      const n = cells.length;
      // Per row, the one partner code its text's tied words name (-1: none; -2: several).
      const owner = new Int32Array(n);
      const partnerOf = (r: number): number => codeOf.get(cells.get(r, g)) ?? -1;
      // Rows open to an exchange, by (partner code, owner code): their text fits a row of another value.
      const open = new Map<string, number[]>();
      const key = (partner: number, own: number): string => `${partner}|${own}`;
      for (let r = 0; r < n; r++) {
        let own = -1;
        for (const w of lettersOf(cells.get(r, f))) {
          const c = tied.get(w);
          if (c !== undefined) own = own === -1 || own === c ? c : -2;
        }
        owner[r] = own;
        if (own !== -2 && !fixed?.(r, f)) (open.get(key(partnerOf(r), own)) ?? open.set(key(partnerOf(r), own), []).get(key(partnerOf(r), own))!).push(r);
      }
      const take = (partner: number, own: number): number | undefined => {
        const list = open.get(key(partner, own));
        while (list?.length) {
          const s = list.pop()!;
          if (owner[s] === own) return s;
        }
        return undefined;
      };
      for (let r = 0; r < n; r++) {
        const own = owner[r];
        const b = partnerOf(r);
        if (own < 0 || own === b || fixed?.(r, f)) continue;
        // A row of the text's own value whose text ties to none, or to this row's value, takes this
        // text; this row its text.
        const s = take(own, -1) ?? take(own, b);
        if (s === undefined) continue;
        const [x, y] = [cells.get(r, f), cells.get(s, f)];
        cells.set(r, f, y);
        cells.set(s, f, x);
        owner[r] = owner[s];
        owner[s] = own;
        changed += 2;
      }
    }
    return changed;
  }
}
