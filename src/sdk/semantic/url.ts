/**
 * URLs on the column's own sites: the scheme, host and path prefix of the real values held by
 * >= k rows are released (`http://marvel.wikia.com/`, `http://www.imdb.com/title/`), and a fresh
 * tail is written after one (`Ada_Kemmer_(Earth-616)`, `tt4830291/`): the site real, the page new.
 * A tail is written from a released form of the real tails (held by >= k rows): its tokens (runs
 * of letters or of digits) held by >= k rows and a quarter of the site's kept, the others drawn
 * afresh of the same case (and, digits, length).
 */
import { deriveSeed, Rng } from "../generate/sfc32";
import { fakerPools, publicWords } from "./pools";
import type { UrlSite } from "./types";

const CAP = "\uE000";
const LOW = "\uE001";
const UP = "\uE002";
const DIG = "\uE003";
/** A token of a URL's tail: a run of letters or of digits. */
const TOKEN = /\p{L}+|\p{N}+/gu;
/** Scheme (or `www.`) and host. */
const ORIGIN = /^((?:https?:\/\/)?[^/?#\s]+)(.*)$/i;
/** The contract's bounds (`src/contract/metadata.ts` `sites`): sites and forms per site, characters per prefix or form. */
const MAX_ITEMS = 256;
const MAX_TEXT = 2048;
/** Share of a site's rows a tail token is in to be kept as it is. */
const TOKEN_SHARE = 0.25;
/** Draws of a tail while it is a real value (per the caller's test). */
const URL_TRIES = 8;

/** The prefixes of `url` that leave a tail: origin + `/`, then each further whole path segment + `/`. */
function prefixesOf(url: string): string[] {
  const m = ORIGIN.exec(url);
  if (!m || !m[2].startsWith("/")) return [];
  const segs = m[2].slice(1).split("/");
  const out: string[] = [];
  let p = m[1] + "/";
  out.push(p);
  for (let j = 0; j < segs.length - 1; j++) {
    if (segs[j] === "" || /[?#]/.test(segs[j])) break;
    p += segs[j] + "/";
    out.push(p);
  }
  return out.filter((x) => x.length < url.length);
}

/** A tail's form: tokens in `keep` as they are, others as placeholders of their case, one per character for digits. */
function formOf(tail: string, keep: { has(t: string): boolean }): string {
  return tail.replace(TOKEN, (t) => {
    if (keep.has(t)) return t;
    if (/^\p{N}+$/u.test(t)) return DIG.repeat(t.length);
    if (/^\p{Lu}\p{Ll}*$/u.test(t)) return CAP;
    if (/^\p{Lu}+$/u.test(t)) return UP;
    return LOW;
  });
}

/**
 * The sites of a URL column.
 * @param values distinct real values; `counts` rows per value (same length); `k` the release threshold (>= 1).
 * @returns per site held by >= k rows: its prefix (the longest one of each value held by >= k
 *   rows), the rows assigned to it and the forms of their tails held by >= k rows; [] when no
 *   prefix is held by >= k rows (fresh values then get invented hosts).
 */
export function buildUrlSites(values: readonly string[], counts: readonly number[], k: number): UrlSite[] {
  const need = Math.max(1, k);
  const held = new Map<string, number>();
  values.forEach((v, i) => {
    for (const p of prefixesOf(v)) held.set(p, (held.get(p) ?? 0) + counts[i]);
  });
  const site = values.map((v) => prefixesOf(v).filter((p) => held.get(p)! >= need).pop());
  // Per site, its rows and the rows each tail token is in.
  const per = new Map<string, { rows: number; tokens: Map<string, number>; forms: Map<string, number> }>();
  values.forEach((v, i) => {
    const p = site[i];
    if (p === undefined) return;
    const s = per.get(p) ?? { rows: 0, tokens: new Map<string, number>(), forms: new Map<string, number>() };
    s.rows += counts[i];
    for (const t of new Set(v.slice(p.length).match(TOKEN) ?? [])) s.tokens.set(t, (s.tokens.get(t) ?? 0) + counts[i]);
    per.set(p, s);
  });
  // A token is kept when >= k rows and a quarter of its site's rows hold it (`title`, `Earth`,
  // `616`): the site's own path words, not the page's (a name in a tenth of the pages).
  values.forEach((v, i) => {
    const p = site[i];
    if (p === undefined) return;
    const s = per.get(p)!;
    const keep = { has: (t: string) => (s.tokens.get(t) ?? 0) >= Math.max(need, s.rows * TOKEN_SHARE) };
    const f = formOf(v.slice(p.length), keep);
    s.forms.set(f, (s.forms.get(f) ?? 0) + counts[i]);
  });
  const sites = per;
  return [...sites]
    .map(([prefix, s]) => ({
      prefix,
      rows: s.rows,
      tails: [...s.forms]
        .filter(([f, n]) => n >= need && f.length <= MAX_TEXT)
        .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
        .slice(0, MAX_ITEMS),
    }))
    .filter((s) => s.prefix.length <= MAX_TEXT)
    .sort((a, b) => b.rows - a.rows || (a.prefix < b.prefix ? -1 : 1))
    .slice(0, MAX_ITEMS);
}

/** Writes URLs on a column's released sites (see the module header). */
export class UrlWriter {
  private readonly cum: number[] = [];
  /** Per site, its tails' cumulative row counts. */
  private readonly tailCum: Float64Array[];
  /** Forms for a site without one of its own: the column's commonest released form, else a two-word slug. */
  private readonly fallback: string;

  /**
   * @param sites the shape's sites (non-empty, each with rows >= 1).
   * @param isReal whether a written value is a real one (the Bloom filter); such a draw is redrawn.
   * @throws RangeError on no sites.
   */
  constructor(
    private readonly sites: readonly UrlSite[],
    private readonly isReal: (v: string) => boolean = () => false,
  ) {
    if (!Array.isArray(sites) || sites.length === 0) throw new RangeError("url sites: none to write on");
    let total = 0;
    for (const s of sites) this.cum.push((total += Math.max(1, s.rows)));
    this.tailCum = sites.map((s) => {
      const cum = new Float64Array(s.tails.length);
      for (let i = 0, t = 0; i < cum.length; i++) cum[i] = t += s.tails[i][1];
      return cum;
    });
    const forms = sites.flatMap((s) => s.tails).sort((a, b) => b[1] - a[1]);
    this.fallback = forms.length ? forms[0][0] : `${LOW}-${LOW}`;
  }

  /** Row `i`'s URL under `key`: depends only on (sites, key, i). */
  value(key: number, i: number): string {
    const rng = new Rng(deriveSeed(key, 0x0a71, i));
    let v = "";
    for (let t = 0; t < URL_TRIES; t++) {
      const s = rng.pickCumulative(this.cum);
      const site = this.sites[s];
      const form = site.tails.length ? site.tails[rng.pickCumulative(this.tailCum[s])][0] : this.fallback;
      v = site.prefix + fill(form, rng);
      if (!this.isReal(v)) return v;
    }
    return v;
  }
}

let firstNames: string[] | undefined;

/** A form with its placeholders drawn: the first capitalised word of two or more a first name, the others surnames. */
function fill(form: string, rng: Rng): string {
  const words = publicWords();
  const first = (firstNames ??= fakerPools("en").first.filter((w) => /^\p{Lu}\p{Ll}+$/u.test(w)));
  const caps = form.split(CAP).length - 1;
  let seenCap = false;
  let out = "";
  for (const c of form) {
    if (c === CAP) {
      const pool = caps >= 2 && !seenCap ? first : words.capitalized;
      seenCap = true;
      out += pool[rng.int(pool.length)];
    } else if (c === LOW) out += words.lower[rng.int(words.lower.length)];
    else if (c === UP) out += words.lower[rng.int(words.lower.length)].toUpperCase();
    else if (c === DIG) out += String(rng.int(10));
    else out += c;
  }
  return out;
}
