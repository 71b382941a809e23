/**
 * Name-country detection (docs/api.md "Row rules"): a column of person names whose names follow a
 * country column, found from values and the public name lists, never from column names.
 */
import type { NameCountryRule } from "../../../contract";
import { COUNTRY_FORMS, countryCodeOf, namePoolsOf, plausibleFor, type CountryForm } from "../../semantic/countries";
import type { Col } from "./view";

/** Share of a country column's non-blank rows one form must read, at least. */
const READ_SHARE = 0.9;
/** Distinct countries a country column must hold. */
const MIN_COUNTRIES = 3;
/** Rows with a name and a country that has name lists, at least. */
const MIN_ROWS = 20;
/** A name of its own row's country this much more often than of another row's, at least (ratio and difference). */
const LIFT = 1.25;
const GAIN = 0.05;

/** The semantic kind of a name column, if it is one. */
function nameKind(c: Col): string | undefined {
  const st = c.codec.stats;
  const shape = st.type === "id" && st.id_shape?.kind === "text" ? st.id_shape.semantic : st.type === "categorical" ? st.semantic : undefined;
  return shape && ["first_name", "last_name", "full_name"].includes(shape.kind) ? shape.kind : undefined;
}

/** The form that reads >= 90% of a column's non-blank rows in >= 3 countries, and each value's country. */
function countryColumn(c: Col, n: number): { form: CountryForm; codes: (string | undefined)[] } | undefined {
  if (c.codec.kind !== "categorical" || c.nonBlank < MIN_COUNTRIES) return undefined;
  const rows = new Array<number>(c.nv).fill(0);
  for (let r = 0; r < n; r++) rows[c.scan.ids[r]]++;
  const total = rows.reduce((s, x, id) => s + (id === c.blank ? 0 : x), 0);
  let best: { form: CountryForm; codes: (string | undefined)[]; read: number } | undefined;
  for (const form of COUNTRY_FORMS) {
    const codes = c.scan.values.map((v) => countryCodeOf(form, v));
    let read = 0;
    const distinct = new Set<string>();
    codes.forEach((cc, id) => {
      if (cc === undefined) return;
      read += rows[id];
      distinct.add(cc);
    });
    if (read >= READ_SHARE * total && distinct.size >= MIN_COUNTRIES && (!best || read > best.read)) best = { form, codes, read };
  }
  return best && { form: best.form, codes: best.codes };
}

/**
 * Name-country rules of `cols` over the first `n` rows: a column of person names (a semantic
 * first, last or full name) beside a categorical column one form of which ({@link COUNTRY_FORMS})
 * reads >= 90% of non-blank rows in >= 3 countries, where over >= 20 rows whose country has name
 * lists a name has a word of its own row's country's lists at least 1.25 times and 5 points more
 * often than of another row's (row r + n/2's: the lists overlap, `Maria` is in many). One rule
 * per name column, with the first such country column.
 */
export function detectNameCountry(cols: readonly Col[], n: number): NameCountryRule[] {
  const out: NameCountryRule[] = [];
  const names = cols.filter((c) => nameKind(c) !== undefined);
  if (names.length === 0 || n < 2 * MIN_ROWS) return out;
  const countries = cols.flatMap((c) => {
    if (names.includes(c)) return [];
    const read = countryColumn(c, n);
    return read ? [{ col: c, ...read }] : [];
  });
  for (const name of names) {
    for (const { col, form, codes } of countries) {
      let rows = 0;
      let own = 0;
      let other = 0;
      for (let r = 0; r < n; r++) {
        const v = name.scan.values[name.scan.ids[r]];
        const a = codes[col.scan.ids[r]];
        const b = codes[col.scan.ids[(r + (n >> 1)) % n]];
        if (v === "" || a === undefined || b === undefined || namePoolsOf(a).length === 0 || namePoolsOf(b).length === 0) continue;
        rows++;
        if (plausibleFor(v, a)) own++;
        if (plausibleFor(v, b)) other++;
      }
      if (rows < MIN_ROWS || own < LIFT * other || own - other < GAIN * rows) continue;
      out.push({ type: "name_country", columns: [name.name, col.name], form, share: own / rows, shuffled: other / rows });
      break;
    }
  }
  return out;
}
