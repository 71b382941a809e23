/**
 * Name and country rules (`metadata.rules` of type `name_country`, docs/api.md "Row rules"): a
 * fresh person name is one of its row's country, drawn from that country's public name lists
 * (`../semantic/countries`: faker's locales of the country or of its languages), never from the
 * table. With a `name_gender` rule on the same name column, first names (and the last names of
 * locales that list them by sex: `Abramova`) are of the row's sex.
 */
import type { Metadata, NameCountryRule, NameGenderRule } from "../../contract";
import type { Cells } from "../generate/batch";
import { deriveSeed, Rng } from "../generate/sfc32";
import { Bloom } from "../semantic/bloom";
import { countryCodeOf, foldName, namePoolsOf, plausibleFor, type NamePool } from "../semantic/countries";
import { INNER_CAPITAL, inLetterCase } from "../semantic/letter-case";
import type { SemanticShape } from "../semantic/types";
import type { Fixed } from "./compiled-rule";
import { sexes, sexOfName, type Sex } from "./name-gender";

/**
 * Row check over rows in `idx` order (name, country): true when a word of the name is a first or
 * last name of the country's lists; undefined when a cell is blank, the country unread, or it has
 * no lists.
 */
export function nameCountryCheck(rule: NameCountryRule, idx: readonly number[]): (row: readonly string[]) => boolean | undefined {
  return (row) => {
    const name = row[idx[0]];
    const cc = name === "" ? undefined : countryCodeOf(rule.form, row[idx[1]]);
    return cc === undefined ? undefined : plausibleFor(name, cc);
  };
}

/** Draws to find a name that is not a real value (the column's Bloom filter) nor one already written. */
const TRIES = 8;

/** The locale key the column's own fresh names come from (`en`, `de`, `fr`, `es`). */
function ownLocale(shape: SemanticShape): string {
  return shape.locale ?? "en";
}

/**
 * A name written from `pool`: `parts` words of the kind (a full name: first names then a last
 * name); with `head`, that is its first word and the rest is drawn, of its sex where the pool's
 * lists give it one.
 */
function drawName(kind: SemanticShape["kind"], parts: number, pool: NamePool, sex: Sex | undefined, rng: Rng, head?: string): string {
  const s: Sex | undefined = sex ?? (head !== undefined ? pool.sexOf.get(foldName(head)) : undefined) ?? (pool.first.female.length > 0 && pool.first.male.length > 0 ? (rng.int(2) === 0 ? "female" : "male") : undefined);
  const pick = (lists: NamePool["first"]): string => {
    const list = s === undefined ? lists.any : lists[s].length > 0 ? lists[s] : lists === pool.first ? notOf(pool, s) : lists.any;
    return list[rng.int(list.length)];
  };
  const sep = kind === "full_name" ? " " : "-";
  let out = head ?? "";
  for (let w = head === undefined ? 0 : 1; w < parts; w++) {
    const last = kind === "last_name" || (kind === "full_name" && w === parts - 1);
    out += (w > 0 ? sep : "") + pick(last ? pool.last : pool.first);
  }
  return out;
}

const unsexed = new WeakMap<NamePool, Partial<Record<Sex, string[]>>>();
/**
 * A pool that lists first names without sexes (`ka_GE`): those the public sex lists
 * (`./name-gender`) do not give the other sex; all where that leaves none.
 */
function notOf(pool: NamePool, sex: Sex): string[] {
  const at = unsexed.get(pool) ?? unsexed.set(pool, {}).get(pool)!;
  if (!at[sex]) {
    const kept = pool.first.any.filter((v) => {
      const got = sexOfName(v);
      return got === undefined || got === sex;
    });
    at[sex] = kept.length > 0 ? kept : pool.first.any;
  }
  return at[sex]!;
}

const plainPools = new WeakMap<NamePool, NamePool>();
/** A pool without names that have an inner capital (`McDonald`), for a column whose real values have none; lists left empty keep theirs. */
function plainPool(pool: NamePool): NamePool {
  let p = plainPools.get(pool);
  if (!p) {
    const ok = (list: string[]): string[] => {
      const kept = list.filter((v) => !INNER_CAPITAL.test(v));
      return kept.length > 0 ? kept : list;
    };
    const part = (x: NamePool["first"]): NamePool["first"] => ({ female: ok(x.female), male: ok(x.male), any: ok(x.any) });
    plainPools.set(pool, (p = { ...pool, first: part(pool.first), last: part(pool.last) }));
  }
  return p;
}

/** How many words a fresh value of the kind holds (the generator's lanes: `A B` or `A B C`; `A` or `A-B`). */
function partsOf(kind: SemanticShape["kind"], v: string): number {
  return kind === "full_name" ? Math.min(3, Math.max(2, v.trim().split(/\s+/).length)) : Math.min(2, v.split("-").length);
}

/**
 * Writes the name-country rules of `metadata.rules`: a fresh name (every cell of an identifier
 * column; a categorical column's cells that are no released value) in a row whose country has
 * name lists other than the column's own locale is rewritten as a name of that country, of the
 * row's sex where a `name_gender` rule ties the column to a sex column (of the column's one sex
 * where its shape has one, `SemanticShapeStats.sex`), avoiding real values (the
 * column's Bloom filter) and names already written. Without such a rule, a first word that
 * starts a released value stays (a determinant's fresh name starts with a released one of its
 * row's country: `Zou` beside China). Fixed cells are kept.
 * @returns undefined when there is no such rule; else `apply` and `handled`, which tells the
 *   name-gender writer which cells it need not rewrite (their sex is already the row's).
 */
export function nameCountryWriter(metadata: Metadata): { apply(cells: Cells, seed: number, fixed?: Fixed): number; handled(r: number, f: number): boolean } | undefined {
  const features = metadata.features as readonly string[];
  const genders = (metadata.rules ?? []).filter((r): r is NameGenderRule => r.type === "name_gender");
  const rules = (metadata.rules ?? [])
    .filter((r): r is NameCountryRule => r.type === "name_country")
    .map((rule) => {
      const name = rule.columns[0];
      const st = metadata.column_stats?.[name];
      const shape = st?.type === "id" && st.id_shape?.kind === "text" ? st.id_shape.semantic : st?.type === "categorical" ? st.semantic : undefined;
      const released = st?.type === "categorical" ? new Set(Object.keys(metadata.value_mappings?.[name] ?? {})) : undefined;
      // The first words of the released values: a categorical decoder writes a determinant's
      // fresh value with one of its row's partner value (`../columns/categorical`), kept here.
      const heads = released && new Set([...released].map((v) => v.split(shape?.kind === "full_name" ? " " : "-")[0]).filter((w) => w !== ""));
      const g = genders.find((r) => r.columns[0] === name);
      const sexOf = g ? sexes(g) : new Map<string, Sex>();
      return {
        rule,
        shape,
        released,
        heads,
        sexOf,
        idx: rule.columns.map((c) => features.indexOf(c)),
        sexIdx: g ? features.indexOf(g.columns[1]) : -1,
        bloom: shape?.bloom ? Bloom.fromStats(shape.bloom) : undefined,
      };
    })
    .filter((r) => r.idx.every((f) => f >= 0) && r.shape !== undefined && ["first_name", "last_name", "full_name"].includes(r.shape.kind));
  if (rules.length === 0) return undefined;
  // Per name feature, the rows of the last batch whose name this writer wrote (1).
  const handled = new Map<number, Uint8Array>();
  return {
    handled: (r, f) => handled.get(f)?.[r] === 1,
    apply(cells, seed, fixed) {
      handled.clear();
      let changed = 0;
      rules.forEach(({ rule, shape, released, heads, sexOf, idx: [nf, cf], sexIdx, bloom }, i) => {
        const own = ownLocale(shape!);
        const written = new Set<string>();
        const mine = new Uint8Array(cells.length);
        handled.set(nf, mine);
        for (let r = 0; r < cells.length; r++) {
          const v = cells.get(r, nf);
          if (v === "" || released?.has(v) || fixed?.(r, nf)) continue;
          const cc = countryCodeOf(rule.form, cells.get(r, cf));
          const pools = cc === undefined ? [] : namePoolsOf(cc);
          // A country whose names are the column's own locale's keeps the generator's distinct value.
          if (pools.length === 0 || pools.some((p) => p.source === own)) continue;
          const rng = new Rng(deriveSeed(seed, 0x636e7479 + i, r));
          const drawn = pools[rng.int(pools.length)];
          const pool = shape!.plain ? plainPool(drawn) : drawn;
          const sex = sexIdx >= 0 ? sexOf.get(cells.get(r, sexIdx)) : shape!.sex;
          const parts = partsOf(shape!.kind, v);
          // Without a sex to agree with, a released first word (of the row's partner value) stays.
          const word = v.split(shape!.kind === "full_name" ? " " : "-")[0];
          const head = sexIdx < 0 && heads?.has(word) ? word : undefined;
          let out = "";
          for (let t = 0; t < TRIES; t++) {
            out = inLetterCase(drawName(shape!.kind, parts, pool, sex, rng, head), shape!.letter_case);
            if (!written.has(out) && !bloom?.has(out)) break;
          }
          written.add(out);
          mine[r] = 1;
          if (out !== v) {
            cells.set(r, nf, out);
            changed++;
          }
        }
      });
      return changed;
    },
  };
}
