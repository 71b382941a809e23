/**
 * Name-gender detection (docs/api.md "Row rules"): a column of person names whose first names
 * follow a sex column, found from values and the public name lists, never from column names.
 */
import type { NameGenderRule } from "../../../contract";
import { sexOfName, type Sex } from "../name-gender";
import type { Col } from "./view";

/** Share of a text column's non-blank rows whose first name the lists know, at least. */
const KNOWN_SHARE = 0.25;
/** Rows with a known first name per sex value, at least. */
const MIN_ROWS = 5;
/** Share of a sex value's known first names of one sex, at least. */
const AGREE = 0.9;

/**
 * Name-gender rules of `cols` over the first `n` rows: a text column (identifier or categorical,
 * no domain) in which >= 25% of non-blank rows start with a first name the public lists give one
 * sex, beside a categorical column of 2-3 non-blank values of which one is written with >= 90%
 * women's first names and another with >= 90% men's (each over >= 5 rows); values of neither
 * kind stay out of the rule. One rule per name column, with the first such sex column.
 */
export function detectNameGender(cols: readonly Col[], n: number): NameGenderRule[] {
  const out: NameGenderRule[] = [];
  const sexCols = cols.filter((c) => c.codec.kind === "categorical" && !c.codec.fromDomain && c.nonBlank >= 2 && c.nonBlank <= 3);
  if (sexCols.length === 0) return out;
  for (const name of cols) {
    if ((name.codec.kind !== "id" && name.codec.kind !== "categorical") || name.codec.fromDomain || sexCols.includes(name)) continue;
    const sexOfValue = name.scan.values.map((v) => (v === "" ? undefined : sexOfName(v)));
    let known = 0;
    for (let r = 0; r < n; r++) if (sexOfValue[name.scan.ids[r]] !== undefined) known++;
    if (known < KNOWN_SHARE * (n - name.scan.missing) || known < 2 * MIN_ROWS) continue;
    for (const sex of sexCols) {
      // Per value of the sex column: rows with a woman's and a man's first name.
      const counts = sex.scan.values.map(() => ({ female: 0, male: 0 }));
      for (let r = 0; r < n; r++) {
        const s = sexOfValue[name.scan.ids[r]];
        if (s !== undefined) counts[sex.scan.ids[r]][s]++;
      }
      const of = (want: Sex): string[] =>
        sex.scan.values.filter((v, id) => v !== "" && counts[id].female + counts[id].male >= MIN_ROWS && counts[id][want] >= AGREE * (counts[id].female + counts[id].male));
      const female = of("female");
      const male = of("male");
      if (female.length === 0 || male.length === 0) continue;
      let rows = 0;
      let kept = 0;
      sex.scan.values.forEach((v, id) => {
        const s: Sex | undefined = female.includes(v) ? "female" : male.includes(v) ? "male" : undefined;
        if (s === undefined) return;
        rows += counts[id].female + counts[id].male;
        kept += counts[id][s];
      });
      out.push({ type: "name_gender", columns: [name.name, sex.name], female, male, share: kept / rows });
      break;
    }
  }
  return out;
}
