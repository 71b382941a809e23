/**
 * Writes fresh values of a semantic kind: names, emails, phones, addresses ... from faker's locale
 * lists (`./pools`), phones checked by libphonenumber-js, titles and text from `./text`.
 *
 * Row i's value depends only on (shape, key, i), so batches decoded apart agree. List kinds are
 * distinct BY CONSTRUCTION: a kind is a sequence of lanes, a lane a tuple of slots (first names,
 * domains ...) rendered into text; row i takes element perm(i) (mixed radix) of the first lane
 * whose capacity it falls in, perm the keyed Feistel permutation (Black and Rogaway 2002). (faker's
 * own independent draws would repeat values: birthday collisions.) A one-slot lane drops the
 * Bloom filter's real values up front. A lane of size S gives local row j < B = floor(S / T) the
 * candidates perm(j + t B), t < T (4; phones 16), taking the first the filter does not flag and
 * that is valid, else the first; j + t B = j' + t' B with j, j' < B forces j = j', so candidates
 * of different rows never coincide. URLs on the column's own sites: `./url`. Phones: digits
 * after the country's example mobile number's leading digits, written like the column. UUIDs: v4 over a 122-bit permutation. Codes: `./code`.
 * Titles and text: {@link TextWriter} seeded by (key, i, attempt), redrawn (at most 50) while
 * flagged or already written; a model with nothing new left writes a value it already wrote while
 * that one is in few rows (`repeats`), else a respelled one, or, through {@link SemanticGenerator.freshValue} while it has
 * written nothing, none (the caller writes a released value). So never a real value
 * (up to the filter), and distinct within one batch while the model has new values.
 */
import { deriveSeed, Rng } from "../generate/sfc32";
import { makePerm, permBig, type Perm } from "../generate/permutation";
import { Bloom } from "./bloom";
import { fakerPools, asciiSlug, publicWords, type Pools } from "./pools";
import { inLetterCase } from "./letter-case";
import { LOCALE_COUNTRY, phoneLibrary } from "./recognize";
import { CodeSpace, CodeWriter } from "./code";
import { UrlWriter } from "./url";
import { sexOfName } from "../rules/name-gender";
import { publicWordLike, TextWriter } from "./text";
import type { SemanticLocale, SemanticShape } from "./types";

/** One lane: slots of choices and how a tuple of choices is written. */
interface Lane {
  slots: readonly (readonly string[])[];
  render: (parts: string[]) => string;
  /** Extra acceptance test (phone validity). */
  valid?: (v: string) => boolean;
  size: number;
  /** Candidates per row (see {@link SemanticGenerator}); rows per lane = floor(size / tries). */
  tries: number;
  cap: number;
  /** The lane's place among the kind's lanes (keys its permutation). */
  li: number;
}

/**
 * What a semantic shape writes from that depends on no key and no sample: the Bloom filter, the
 * text model, the codes' spaces, the lanes' filtered pools. Built once per shape object (a model's
 * metadata) and variant ({@link PLANS}); the generators of every batch and sample read it.
 */
interface ShapePlan {
  bloom?: Bloom;
  text?: TextWriter;
  /** k - 1: rows a rare value of the real column is in at most (titles and text). */
  rareUses: number;
  codes?: CodeSpace;
  /** URLs on the column's own sites. */
  url?: UrlWriter;
  uuid: boolean;
  lanes: Lane[];
}

/**
 * Plans per shape object, by variant (`invented` or not): a decoder builds a generator per batch
 * and column, and the plan is the costly part (a filter decoded from base64, a text model, pools
 * read against the filter, a phone country's valid area codes). Metadata is never changed once
 * built, so the shape object stands for its content.
 */
const PLANS = new WeakMap<SemanticShape, { plain?: ShapePlan; invented?: ShapePlan }>();

/** Draws of a respelled value that take the column's own words before public ones. */
const OWN_DRAWS = 24;

/** Values already written drawn to find one that may be repeated. */
const REPEAT_DRAWS = 8;

const range = (from: number, to: number): string[] => Array.from({ length: to - from + 1 }, (_, j) => String(from + j));
const DIGITS = range(0, 9);
const CONJ: Record<SemanticLocale, string> = { en: "and", de: "und", fr: "et", es: "y" };

/**
 * Whether a text's brackets pair up and its straight quotes open after a space and close before
 * one or a punctuation mark (`William "Bill" Johnson`, `Bomb Lager (2013)`; not `"Eugene "Pete"`,
 * `Jimmy"Alex"`).
 */
export function balanced(v: string): boolean {
  const count = (c: string): number => v.split(c).length - 1;
  if (count("(") !== count(")") || count("[") !== count("]") || count("“") !== count("”")) return false;
  let open = false;
  for (let i = 0; i < v.length; i++) {
    if (v[i] !== '"') continue;
    const before = i > 0 ? v[i - 1] : " ";
    const after = i + 1 < v.length ? v[i + 1] : " ";
    if (!open && (!/[\s([]/.test(before) || /\s/.test(after))) return false;
    if (open && (/\s/.test(before) || !/[\s,.;:!?)\]]/.test(after))) return false;
    open = !open;
  }
  return !open;
}

/** Writes fresh values of one semantic column. */
export class SemanticGenerator {
  private readonly bloom?: Bloom;
  private readonly lanes: readonly Lane[];
  /** Per lane, its keyed permutation. */
  private readonly perms: Perm[];
  private readonly text?: TextWriter;
  private readonly code?: CodeWriter;
  private readonly url?: UrlWriter;
  private readonly issued = new Set<string>();
  private readonly repeats: boolean;
  /** With `repeats`: the model's issued titles in the order written, and the rows each value is written in. */
  private readonly issuedList: string[] = [];
  private readonly uses = new Map<string, number>();
  /** Rows written through {@link written} (a sample's pooled cells). */
  private writtenRows = 0;
  /** k - 1: rows a rare value of the real column is in at most. */
  private readonly rareUses: number;
  private readonly repeatShare: number;
  private readonly uuidPerm?: Perm;
  private readonly letterCase?: "upper" | "lower";
  private readonly locale: SemanticLocale;

  /**
   * @param shape `id_shape.semantic` (kind, locale, Bloom filter, word model).
   * @param key any finite number (per sample and column): the same key, the same values.
   * @param opts `invented`: cities only as invented names (`Hallborough`), not faker's real ones,
   *   which beside a state column would put Albuquerque in Ohio (`../columns/categorical`);
   *   `repeats`: a title model with nothing new left writes a value it already wrote (a
   *   categorical column's pooled cells) rather than a respelled one at once (an id's, which
   *   stays distinct), each in at most k - 1 rows (a rare value's) or `repeatShare` of the rows
   *   written (the real column's commonest released value's share), then respelled ones.
   * What depends only on the shape (filter, text model, pools, code spaces) is built on the first
   * generator of a shape object and shared by the later ones; what one generator writes
   * (permutations of its key, values issued and their uses) is its own.
   * @throws RangeError on a malformed shape (not an object, unknown kind, bad filter, title
   *   without a model).
   */
  constructor(
    shape: SemanticShape,
    private readonly key: number,
    opts: { invented?: boolean; repeats?: boolean; repeatShare?: number } = {},
  ) {
    if (typeof shape !== "object" || shape === null) throw new RangeError("semantic shape: not an object");
    this.repeats = opts.repeats === true;
    this.repeatShare = Number.isFinite(opts.repeatShare) && opts.repeatShare! > 0 ? Math.min(1, opts.repeatShare!) : 0;
    this.letterCase = shape.letter_case;
    this.locale = shape.locale && shape.locale in CONJ ? shape.locale : "en";
    const invented = opts.invented === true && shape.kind === "city";
    const plans = PLANS.get(shape) ?? {};
    const plan = (invented ? plans.invented : plans.plain) ?? SemanticGenerator.plan(shape, invented);
    if (invented) plans.invented = plan;
    else plans.plain = plan;
    PLANS.set(shape, plans);
    this.bloom = plan.bloom;
    this.text = plan.text;
    this.rareUses = plan.rareUses;
    if (plan.codes) this.code = new CodeWriter(plan.codes, deriveSeed(key, 0xc0de));
    if (plan.uuid) this.uuidPerm = makePerm(1n << 122n, deriveSeed(key, 0x0d1d));
    this.url = plan.url;
    this.lanes = plan.lanes;
    this.perms = plan.lanes.map((l) => makePerm(BigInt(l.size), deriveSeed(key, 0x1a4e, l.li)));
  }

  /** The shape's {@link ShapePlan}. @throws RangeError as the constructor. */
  private static plan(shape: SemanticShape, invented: boolean): ShapePlan {
    const bloom = shape.bloom ? Bloom.fromStats(shape.bloom) : undefined;
    const plan: ShapePlan = { bloom, rareUses: 1, uuid: false, lanes: [] };
    const locale: SemanticLocale = shape.locale && shape.locale in CONJ ? shape.locale : "en";
    if (shape.kind === "title" || shape.kind === "text") {
      if (!shape.text) throw new RangeError(`semantic shape: a ${shape.kind} column needs its token model (text)`);
      plan.text = new TextWriter(shape.text);
      plan.rareUses = Math.max(1, shape.text.k - 1);
      return plan;
    }
    if (shape.kind === "code") {
      if (!shape.codes) throw new RangeError("semantic shape: a code column needs its patterns (codes)");
      plan.codes = new CodeSpace(shape.codes, bloom);
      return plan;
    }
    if (shape.kind === "uuid") {
      plan.uuid = true;
      return plan;
    }
    if (shape.kind === "url" && Array.isArray(shape.sites) && shape.sites.length > 0) plan.url = new UrlWriter(shape.sites, (v) => bloom?.has(v) ?? false);
    let pools = fakerPools(locale);
    if (shape.sex && (shape.kind === "first_name" || shape.kind === "full_name")) {
      // A column of one sex's people: first names from that sex's list, none the lists give the other.
      const sex = shape.sex;
      const own = pools[sex].filter((v) => sexOfName(v) !== (sex === "female" ? "male" : "female"));
      if (own.length > 0) pools = { ...pools, first: own };
    }
    if (shape.plain) {
      const ok = (v: string): boolean => !/[\p{Ll}'’]\p{Lu}/u.test(v);
      pools = { ...pools, first: pools.first.filter(ok), last: pools.last.filter(ok), city: pools.city.filter(ok) };
    }
    let specs = SemanticGenerator.laneSpecs(shape, locale, pools);
    if (invented && specs.length > 1) specs = specs.slice(1);
    specs.forEach((spec, li) => {
      let slots = spec.slots;
      if (slots.length === 1 && bloom) {
        const kept = slots[0].filter((v) => !bloom.has(spec.render([v])));
        slots = [kept];
      }
      let size = 1;
      for (const s of slots) size *= s.length;
      const tries = spec.valid ? 16 : slots.length === 1 ? 1 : 4;
      const cap = Math.floor(size / tries);
      if (cap < 1) return;
      plan.lanes.push({ ...spec, slots, size, tries, cap, li });
    });
    if (plan.lanes.length === 0) throw new RangeError(`semantic shape: nothing left to write for kind ${shape.kind}`);
    return plan;
  }

  private static laneSpecs(shape: SemanticShape, locale: SemanticLocale, p: Pools): Omit<Lane, "size" | "tries" | "cap" | "li">[] {
    switch (shape.kind) {
      case "first_name":
        return [{ slots: [p.first], render: ([a]) => a }, { slots: [p.first, p.first], render: ([a, b]) => `${a}-${b}` }];
      case "last_name":
        return [{ slots: [p.last], render: ([a]) => a }, { slots: [p.last, p.last], render: ([a, b]) => `${a}-${b}` }];
      case "full_name":
        return [
          { slots: [p.first, p.last], render: ([a, b]) => `${a} ${b}` },
          { slots: [p.first, p.first, p.last], render: ([a, b, c]) => `${a} ${b} ${c}` },
        ];
      case "email":
        return [
          { slots: [p.first, p.last, p.emailDomain], render: ([a, b, d]) => `${asciiSlug(a)}.${asciiSlug(b)}@${d}` },
          { slots: [p.first, p.last, range(1, 99), p.emailDomain], render: ([a, b, n, d]) => `${asciiSlug(a)}.${asciiSlug(b)}${n}@${d}` },
        ];
      case "street_address": {
        // House numbers: 1-999 then 1000-9999 in the US style; 1-199 then 200-999 elsewhere.
        const numberFirst = locale === "en" || locale === "fr";
        const write = ([n, s]: string[]): string => (numberFirst ? `${n} ${s}` : locale === "es" ? `${s}, ${n}` : `${s} ${n}`);
        const small = locale === "en" ? 999 : 199;
        return [
          { slots: [range(1, small), p.street], render: write },
          { slots: [range(small + 1, locale === "en" ? 9999 : 999), p.street], render: write },
        ];
      }
      case "city":
        return [
          { slots: [p.city], render: ([c]) => c },
          p.citySuffix.length
            ? { slots: [p.last.filter((l) => /^\p{L}+$/u.test(l)), p.citySuffix], render: ([l, s]) => l + s }
            : { slots: [p.city, p.city], render: ([a, b]) => `${a}-${b}` },
        ];
      case "postal_code": {
        const n = locale === "fr" ? 5 : 5;
        return [{ slots: Array.from({ length: n }, (_, j) => (j === 0 ? range(1, 9) : DIGITS)), render: (d) => d.join("") }];
      }
      case "company": {
        const and = CONJ[locale];
        return [
          { slots: [p.last, p.companySuffix], render: ([l, s]) => `${l} ${s}` },
          { slots: [p.last, p.last], render: ([a, b]) => `${a}-${b}` },
          { slots: [p.last, p.last, p.last], render: ([a, b, c]) => `${a}, ${b} ${and} ${c}` },
        ];
      }
      case "url":
        return [
          { slots: [p.last, p.domainSuffix], render: ([l, t]) => `https://www.${asciiSlug(l)}.${t}` },
          { slots: [p.last, p.last, p.domainSuffix], render: ([a, b, t]) => `https://www.${asciiSlug(a)}-${asciiSlug(b)}.${t}` },
        ];
      case "ip":
        return [{ slots: [range(1, 223).filter((o) => o !== "10" && o !== "127"), range(0, 255), range(0, 255), range(1, 254)], render: (o) => o.join(".") }];
      case "phone": {
        const lib = phoneLibrary();
        const country = (shape.country ?? LOCALE_COUNTRY[locale]) as Parameters<typeof lib.getExampleNumber>[0];
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const examples = require("libphonenumber-js/mobile/examples");
        const example = lib.getExampleNumber(country, examples);
        const nsn = example ? String(example.nationalNumber) : "2015550123";
        const lead = nsn.slice(0, country === "US" ? 0 : 2);
        const free = nsn.length - lead.length;
        // The core API with the metadata passed in (faster than the default wrapper). One parse per
        // candidate; an invalid number renders as "" and is rejected by `valid`.
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const core = require("libphonenumber-js/core") as typeof import("libphonenumber-js/core");
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const metadata = require("libphonenumber-js/min/metadata");
        const write = (digits: string[]): string => {
          const num = core.parsePhoneNumberFromString(lead + digits.join(""), country, metadata);
          if (!num || !num.isValid()) return "";
          return shape.international ? num.formatInternational() : num.formatNational();
        };
        // The first 3 free digits (an area code in the US) from the 3-digit groups that make the
        // example number valid: fewer invalid candidates per row.
        const rest = nsn.slice(lead.length + 3);
        const heads = range(0, 999)
          .map((x) => x.padStart(3, "0"))
          .filter((h) => core.parsePhoneNumberFromString(lead + h + rest, country, metadata)?.isValid());
        const slots: string[][] = free > 3 && heads.length > 0 ? [heads, ...Array.from({ length: free - 3 }, () => DIGITS)] : Array.from({ length: free }, () => DIGITS);
        return [{ slots, render: write, valid: (v) => v !== "" }];
      }
      default:
        throw new RangeError(`semantic shape: unknown kind ${JSON.stringify(shape.kind)}`);
    }
  }

  /**
   * As {@link value}, but undefined where a title or text model has nothing new left and has
   * written nothing yet to repeat (the model writes only the column's real values): a categorical
   * column's pooled cell then takes a released value rather than a copy of a real one.
   * @throws RangeError unless i is a safe integer >= 0.
   */
  freshValue(i: number, issue = true): string | undefined {
    if (!this.text) return this.value(i, issue);
    if (!Number.isSafeInteger(i) || i < 0) throw new RangeError(`SemanticGenerator.freshValue: index ${i} is not a non-negative safe integer`);
    const v = this.title(i, issue).value;
    // A model that wrote new values but has none left to write or repeat: a respelled one.
    return v !== undefined || this.issued.size === 0 ? v : this.respelled(i, issue);
  }

  /**
   * The value of row `i` of the sample; `issue` false (titles and text): the value is not marked
   * written, so a candidate the caller rejects does not use up the model's new values.
   * @throws RangeError unless i is a safe integer >= 0.
   */
  value(i: number, issue = true): string {
    if (!Number.isSafeInteger(i) || i < 0) throw new RangeError(`SemanticGenerator.value: index ${i} is not a non-negative safe integer`);
    if (this.text) return this.title(i, issue).value ?? this.respelled(i, issue);
    if (this.code) return this.code.value(i);
    if (this.uuidPerm) return this.uuid(i);
    if (this.url) return this.url.value(this.key, i);
    let total = 0;
    for (const l of this.lanes) total += l.cap;
    let j = i % total;
    let k = 0;
    while (k < this.lanes.length - 1 && j >= this.lanes[k].cap) j -= this.lanes[k++].cap;
    return inLetterCase(this.laneValue(this.lanes[k], this.perms[k], j), this.letterCase);
  }

  /** Element j of a lane: the first of its tries that is valid and not a real value. */
  private laneValue(lane: Lane, perm: Perm, j: number): string {
    let first = "";
    for (let t = 0; t < lane.tries; t++) {
      const at = j + t * lane.cap;
      const x = perm.small ? perm.small.apply(at) : Number(permBig(perm, at));
      const v = lane.render(this.spell(lane, x));
      if (t === 0) first = v;
      if ((!lane.valid || lane.valid(v)) && !(lane.slots.length > 1 && this.bloom?.has(v))) return v;
    }
    return first;
  }

  /** The slot choices of element x of a lane (mixed radix, last slot least significant). */
  private spell(lane: Lane, x: number): string[] {
    const parts = new Array<string>(lane.slots.length);
    for (let s = lane.slots.length - 1; s >= 0; s--) {
      const r = lane.slots[s].length;
      const q = Math.floor(x / r);
      parts[s] = lane.slots[s][x - q * r];
      x = q;
    }
    return parts;
  }

  private uuid(i: number): string {
    const x = permBig(this.uuidPerm!, i);
    // 122 permuted bits around the version (4) and variant (10xx) fields: 2 in the variant digit, 120 in hex.
    const variant = "89ab"[Number(x & 3n)];
    const h = (x >> 2n).toString(16).padStart(30, "0");
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(12, 15)}-${variant}${h.slice(15, 18)}-${h.slice(18, 30)}`;
  }

  /**
   * A new value where the model has none left (an identifier column too small for its model): a
   * draw with one word replaced by another of the column's released words of its class between the
   * same words (`./text` `TextWriter.ownWordLike`: `la República de Corea` -> `... de Guinea`;
   * the first {@link OWN_DRAWS} draws), else by a public word of its kind (`publicWordLike`: a place for a place, a given name for a
   * given name, else a surname: `Pleasant Hill` -> `Pleasant Boyle`),
   * distinct from those written and not a real value (up to the filter) while 50 draws find one.
   */
  private respelled(i: number, issue: boolean): string {
    const { capitalized, lower } = publicWords();
    let v = "";
    for (let attempt = 0; attempt < OWN_DRAWS + 100; attempt++) {
      const rng = new Rng(deriveSeed(this.key, 0x5e11, i, attempt));
      // The column's own words for the first draws (one word, then two), public words after.
      const own = attempt < OWN_DRAWS;
      const more = own ? Math.floor((2 * attempt) / OWN_DRAWS) : (attempt - OWN_DRAWS) / 25;
      // Words this draw put in (a place or a given name for one of that kind), not replaced again.
      const written = new Set<string>();
      v = this.text!.write(rng, true);
      // Capitalised words after the first (a name's place), else any after the first (a car's
      // model after its make), else the one word; a lower-case one takes a
      // noun. One word, then more as the draws keep meeting written values; past the value's
      // words, surnames after it.
      for (let r = 0; r <= more; r++) {
        const parts = [...v.matchAll(/\p{L}{2,}/gu)].filter((m) => !capitalized.includes(m[0]) && !lower.includes(m[0]) && !written.has(m[0]));
        const named = parts.filter((m) => /^\p{Lu}/u.test(m[0]));
        const from = named.length > 1 ? named.slice(1) : named.length ? named : parts.length > 1 ? parts.slice(1) : parts;
        const at = from.length ? from[rng.int(from.length)] : undefined;
        if (!at) {
          if (own) break;
          v = `${v} ${capitalized[rng.int(capitalized.length)]}`.trim();
          continue;
        }
        const word = at[0];
        const upper = word.length > 1 && word === word.toUpperCase();
        // The column's own word of its class between the same words first (`de Corea` -> `de
        // Guinea`), so a word of a public name never becomes a surname; else a public word.
        const runs = /[\p{L}\p{M}\p{N}]+/gu;
        const prev = [...v.slice(0, at.index!).matchAll(runs)].pop()?.[0];
        const next = v.slice(at.index! + word.length).match(runs)?.[0];
        const put = (own ? this.text!.ownWordLike(word, prev, next, rng) : undefined) ?? (/^\p{Lu}/u.test(word) ? publicWordLike(word, rng, this.locale) : lower[rng.int(lower.length)]);
        written.add(put);
        v = v.slice(0, at.index!) + inLetterCase(put, upper ? "upper" : undefined) + v.slice(at.index! + word.length);
      }
      if (!this.issued.has(v) && !this.bloom?.has(v)) break;
    }
    if (issue) this.written(v, false);
    return v;
  }

  /**
   * Marks `v` written once more (issued the first time); `model` false: a respelled value, never
   * drawn as a repeat (a repeat is a value of the column's own model).
   */
  private written(v: string, model = true): void {
    const n = (this.uses.get(v) ?? 0) + 1;
    this.uses.set(v, n);
    this.writtenRows++;
    if (n === 1) {
      this.issued.add(v);
      if (model) this.issuedList.push(v);
    }
  }

  /**
   * Whether `v`, already written, may be written again: while it is in fewer than k - 1 rows or
   * fewer than `repeatShare` of the rows written, or the model has written at least 1 /
   * `repeatShare` values to spread repeats over (one stand-in never fills many rows).
   */
  private repeatable(v: string): boolean {
    if (!this.repeats) return false;
    if (this.repeatShare > 0 && this.issuedList.length * this.repeatShare >= 1) return true;
    return (this.uses.get(v) ?? 0) < Math.max(this.rareUses, Math.floor(this.repeatShare * this.writtenRows));
  }

  /**
   * Row i's title: a fresh one; else, with `repeats`, one already written (the model's own draw
   * first); else undefined.
   */
  private title(i: number, issue: boolean): { value?: string } {
    const fresh = (v: string): boolean => !this.issued.has(v) && !this.bloom?.has(v);
    let v = "";
    let again: string | undefined;
    let unbalanced: string | undefined;
    for (let attempt = 0; attempt < 50; attempt++) {
      // The model's own triples first; later attempts back off to pairs for values not yet written.
      v = this.text!.write(new Rng(deriveSeed(this.key, 0x7e47, i, attempt)), attempt >= 10);
      if (fresh(v) && balanced(v)) break;
      if (fresh(v)) unbalanced ??= v;
      if (again === undefined && this.issued.has(v) && this.repeatable(v)) again = v;
    }
    // A value whose quotes or brackets do not pair only when the model writes no other.
    if (!(fresh(v) && balanced(v)) && unbalanced !== undefined) v = unbalanced;
    if (fresh(v)) {
      if (issue) this.written(v);
      return { value: v };
    }
    // Nothing new: a value already written again (rare values repeat in real columns), the
    // model's own draw first (pooled cells), else one drawn among those written, while
    // {@link repeatable}.
    if (again === undefined && this.repeats && this.issuedList.length > 0) {
      const rng = new Rng(deriveSeed(this.key, 0x2e9e, i));
      for (let t = 0; t < REPEAT_DRAWS && again === undefined; t++) {
        const v = this.issuedList[rng.int(this.issuedList.length)];
        if (this.repeatable(v)) again = v;
      }
    }
    if (again === undefined) return {};
    if (issue) this.written(again);
    return { value: again };
  }
}
