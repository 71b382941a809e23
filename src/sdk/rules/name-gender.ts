/**
 * Name and sex rules (`metadata.rules` of type `name_gender`, docs/api.md "Row rules"): a
 * person's first name agrees with the row's sex column. Which first names are women's and which
 * men's comes from faker's locale lists (en, de, fr, es), public data, never from the table.
 */
import type { Metadata, NameGenderRule } from "../../contract";
import type { Cells } from "../generate/batch";
import { deriveSeed, Rng } from "../generate/sfc32";
import { Bloom } from "../semantic/bloom";
import type { Fixed } from "./compiled-rule";

/** A sex: the lists a first name is looked up in. */
export type Sex = "female" | "male";

interface Lists {
  /** Case-folded first name -> sex, for names on one list only. */
  of: Map<string, Sex>;
  female: string[];
  male: string[];
}

let lists: Lists | undefined;

/** faker's female and male first names of its en, de, fr and es locales; a name on both is left out. */
function nameLists(): Lists {
  if (lists) return lists;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { allLocales } = require("@faker-js/faker") as typeof import("@faker-js/faker");
  const names = { female: new Set<string>(), male: new Set<string>() };
  for (const loc of ["en", "de", "fr", "es"] as const) {
    const first = allLocales[loc].person?.first_name as { female?: string[]; male?: string[] } | undefined;
    for (const sex of ["female", "male"] as const) for (const v of first?.[sex] ?? []) if (/^\p{L}+$/u.test(v)) names[sex].add(v);
  }
  const both = new Set([...names.female].filter((v) => names.male.has(v)));
  const female = [...names.female].filter((v) => !both.has(v)).sort();
  const male = [...names.male].filter((v) => !both.has(v)).sort();
  const of = new Map<string, Sex>();
  for (const v of female) of.set(v.toLowerCase(), "female");
  for (const v of male) of.set(v.toLowerCase(), "male");
  lists = { of, female, male };
  return lists;
}

/** The first name of a name cell: its text up to the first space, comma or hyphen. */
export function firstNameOf(name: string): string {
  const m = /^[^\s,-]+/.exec(name.trim());
  return m ? m[0] : "";
}

/** The sex the public lists give a name cell's first name, or undefined (on both lists, or neither). */
export function sexOfName(name: string): Sex | undefined {
  return nameLists().of.get(firstNameOf(name).toLowerCase());
}

/** Rows whose first name the lists give a sex, at least, before a column is read as of one sex. */
const ONE_SEX_ROWS = 30;
/** Share of those rows of one sex, at least. */
const ONE_SEX_SHARE = 0.95;

/**
 * The sex of a column of person names whose people are of one sex: >= 95% of the rows whose
 * first name the public lists give a sex (over >= 30 such rows) are of it (an NHL draft, a
 * women's league, with no sex column). `values[i]` is held by `counts[i]` rows.
 * @returns undefined when fewer rows are known or both sexes are common.
 */
export function oneSexOf(values: readonly string[], counts: readonly number[]): Sex | undefined {
  const rows = { female: 0, male: 0 };
  values.forEach((v, i) => {
    const s = sexOfName(v);
    if (s) rows[s] += counts[i] ?? 1;
  });
  const known = rows.female + rows.male;
  if (known < ONE_SEX_ROWS) return undefined;
  return rows.female >= ONE_SEX_SHARE * known ? "female" : rows.male >= ONE_SEX_SHARE * known ? "male" : undefined;
}

/** The sex each value of the rule's sex column stands for (`female` and `male` lists). */
export function sexes(rule: Pick<NameGenderRule, "female" | "male">): Map<string, Sex> {
  return new Map<string, Sex>([...rule.female.map((v): [string, Sex] => [v, "female"]), ...rule.male.map((v): [string, Sex] => [v, "male"])]);
}

/**
 * Row check over rows in `idx` order (name, sex): true when the first name is of the row's sex,
 * undefined when the name is blank or of no known sex, or the sex value is neither list's.
 */
export function nameGenderCheck(rule: NameGenderRule, idx: readonly number[]): (row: readonly string[]) => boolean | undefined {
  const want = sexes(rule);
  return (row) => {
    const s = want.get(row[idx[1]]);
    const got = s === undefined || row[idx[0]] === "" ? undefined : sexOfName(row[idx[0]]);
    return got === undefined ? undefined : got === s;
  };
}

/** Draws to find a first name whose full value the name column's Bloom filter does not flag as real. */
const TRIES = 8;

/**
 * Writes the name-gender rules of `metadata.rules`: a row whose first name is not of its sex (of
 * the other sex, or of none the lists know: a fresh name drawn without regard to the row) gets a
 * first name of its sex from the lists, the rest of the name kept, avoiding values the column's
 * Bloom filter holds (its real values). A fixed name cell is kept.
 * @returns undefined when there is no such rule.
 */
export function nameGenderWriter(metadata: Metadata): { apply(cells: Cells, seed: number, fixed?: Fixed): number } | undefined {
  const features = metadata.features as readonly string[];
  const rules = (metadata.rules ?? [])
    .filter((r): r is NameGenderRule => r.type === "name_gender")
    .map((rule) => {
      const st = metadata.column_stats?.[rule.columns[0]];
      const shape = st?.type === "id" && st.id_shape?.kind === "text" ? st.id_shape.semantic : st?.semantic;
      return { idx: rule.columns.map((c) => features.indexOf(c)), want: sexes(rule), bloom: shape?.bloom ? Bloom.fromStats(shape.bloom) : undefined };
    })
    .filter((r) => r.idx.every((f) => f >= 0));
  if (rules.length === 0) return undefined;
  return {
    apply(cells, seed, fixed) {
      let changed = 0;
      const names = nameLists();
      rules.forEach(({ idx: [nf, sf], want, bloom }, i) => {
        for (let r = 0; r < cells.length; r++) {
          const s = want.get(cells.get(r, sf));
          const v = s === undefined ? "" : cells.get(r, nf);
          if (v === "" || sexOfName(v) === s || fixed?.(r, nf)) continue;
          const first = firstNameOf(v);
          const at = v.indexOf(first);
          const pool = names[s!];
          const upper = first.length > 1 && first === first.toUpperCase();
          const rng = new Rng(deriveSeed(seed, 0x6e616d65 + i, r));
          let out = "";
          for (let t = 0; t < TRIES; t++) {
            const pick = pool[rng.int(pool.length)];
            out = v.slice(0, at) + (upper ? pick.toUpperCase() : pick) + v.slice(at + first.length);
            if (!bloom?.has(out)) break;
          }
          cells.set(r, nf, out);
          changed++;
        }
      });
      return changed;
    },
  };
}
