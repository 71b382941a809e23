/** Row rules in words (`synthd fit`'s lines) and their stable ids (matched by `rules.drop`). */
import type { CountryForm, DatetimePart, EntityRangeRule, Metadata, PublicAttribute, Rule } from "../../contract";
import { shortNumber } from "../columns/numerical";
import { MISSING_KEY } from "../columns/common";
import { templateText } from "./template";
import { ratioText } from "./ratio";
import { elapsedUnitName } from "./elapsed-units";

/** What `synthd fit` calls each public attribute. */
const ATTRIBUTE_LABELS: Record<PublicAttribute, string> = {
  us_state: "US state name",
  us_state_code: "US state postal code",
  us_state_fips: "US state FIPS code",
  us_state_capital: "US state capital",
  country: "country name",
  country_alpha2: "ISO 3166 alpha-2 code",
  country_alpha3: "ISO 3166 alpha-3 code",
  country_numeric: "ISO 3166 numeric code",
  country_capital: "capital",
  country_region: "region (UN geoscheme)",
  country_subregion: "subregion (UN geoscheme)",
  country_calling_code: "international calling code",
  country_currency_code: "ISO 4217 currency code",
  country_tld: "internet country code",
  country_ioc: "IOC code",
  us_county_fips: "US county FIPS code",
  us_county_fips5: "US state and county FIPS code",
};

/** What `synthd fit` calls each datetime part. */
const PART_LABELS: Record<DatetimePart, string> = { year: "year", quarter: "quarter", month: "month", day: "day of month", day_of_year: "day of year", weekday: "weekday", hour: "hour" };

/** A rule's id fields: type and columns (a declared rule has the detected one's id). */
export type RuleKey =
  | { type: "fixed_combinations"; columns: readonly string[]; determinant?: string }
  | { type: "catalog"; columns: readonly string[]; key_columns?: number }
  | { type: "inequality"; high: string; low: string }
  | { type: "sum"; total: string; parts: readonly string[] }
  | { type: "ratio"; total: string; parts: readonly string[] }
  | { type: "not_equal"; columns: readonly string[] }
  | { type: "blank_together"; columns: readonly string[] }
  | { type: "structural_zeros"; columns: readonly string[] }
  | { type: "public_attribute"; columns: readonly string[] }
  | { type: "embedded_code"; columns: readonly string[] }
  | { type: "code_prefix"; columns: readonly string[] }
  | { type: "calendar"; columns: readonly string[] }
  | { type: "datetime_part"; columns: readonly string[] }
  | { type: "difference"; columns: readonly string[] }
  | { type: "elapsed"; columns: readonly string[] }
  | { type: "entity_range"; columns: readonly string[] }
  | { type: "template"; columns: readonly string[] }
  | { type: "name_gender"; columns: readonly string[] }
  | { type: "name_country"; columns: readonly string[] }
  | { type: "unique"; columns: readonly string[] };

/**
 * A rule's stable id: `type:` then its columns joined by commas, in the rule's order
 * (`fixed_combinations:education,education-num`, `inequality:high,low`, `sum:total,a,b`; a
 * composite key in parentheses: `catalog:(origin,destination),distance`). Shares,
 * counts, signs, constants, combinations and pairs are not part of it, so it survives small
 * changes in the data.
 */
export function ruleId(rule: RuleKey): string {
  switch (rule.type) {
    case "fixed_combinations": {
      const d = rule.determinant;
      const cols = d === undefined ? rule.columns : [d, ...rule.columns.filter((c) => c !== d)];
      return `fixed_combinations:${cols.join(",")}`;
    }
    case "catalog":
      return (rule.key_columns ?? 1) === 2 ? `catalog:(${rule.columns[0]},${rule.columns[1]}),${rule.columns.slice(2).join(",")}` : `catalog:${rule.columns.join(",")}`;
    case "inequality":
      return `inequality:${rule.high},${rule.low}`;
    case "sum":
      return `sum:${rule.total},${rule.parts.join(",")}`;
    case "ratio":
      return `ratio:${rule.total},${rule.parts.join(",")}`;
    case "not_equal":
      return `not_equal:${rule.columns.join(",")}`;
    case "blank_together":
      return `blank_together:${rule.columns.join(",")}`;
    case "structural_zeros":
      return `structural_zeros:${rule.columns.join(",")}`;
    case "public_attribute":
      return `public_attribute:${rule.columns.join(",")}`;
    case "embedded_code":
      return `embedded_code:${rule.columns.join(",")}`;
    case "code_prefix":
      return `code_prefix:${rule.columns.join(",")}`;
    case "calendar":
      return `calendar:${rule.columns.join(",")}`;
    case "datetime_part":
      return `datetime_part:${rule.columns.join(",")}`;
    case "difference":
      return `difference:${rule.columns.join(",")}`;
    case "elapsed":
      return `elapsed:${rule.columns.join(",")}`;
    case "entity_range":
      return `entity_range:${rule.columns.join(",")}`;
    case "template":
      return `template:${rule.columns.join(",")}`;
    case "name_gender":
      return `name_gender:${rule.columns.join(",")}`;
    case "name_country":
      return `name_country:${rule.columns.join(",")}`;
    case "unique":
      return `unique:${rule.columns.join(",")}`;
  }
}

/** The value pairs a structural-zeros line lists; the rest are counted. */
const LISTED_PAIRS = 4;

/** The right side of a sum or identity: `a + b`, `age - education - 6`, `100 - a - b`, `close`, `level - 1`, `2024 - age`. */
export function identityText(parts: readonly string[], signs: readonly number[] | undefined, constant: number | undefined, weights?: readonly number[]): string {
  const s = signs ?? parts.map(() => 1);
  const k = constant ?? 0;
  const terms = parts.map((p, j) => ({ p: (weights?.[j] ?? 1) !== 1 ? `${weights![j]} * ${p}` : p, neg: s[j] < 0 }));
  let text: string;
  if (terms.every((t) => t.neg)) text = `${k}${terms.map((t) => ` - ${t.p}`).join("")}`;
  else {
    const first = terms.findIndex((t) => !t.neg);
    const order = [terms[first], ...terms.filter((_, j) => j !== first)];
    text = order.map((t, j) => (j === 0 ? t.p : `${t.neg ? "-" : "+"} ${t.p}`)).join(" ");
    if (k !== 0) text += ` ${k < 0 ? "-" : "+"} ${Math.abs(k)}`;
  }
  return text;
}

/** What {@link describeRule} reads of the metadata: value names, and interval bins' edges. */
type Names = Pick<Metadata, "value_mappings"> & Partial<Pick<Metadata, "column_stats">>;

/**
 * Code -> value text of a column's `value_mappings` (a code's first text, the blank as `""`); an interval bin of
 * `bin_edges` as `[lo, hi)` (a point bin as its number); else the code.
 */
function valueNamer(metadata: Names | undefined, column: string): (code: number) => string {
  const names: string[] = [];
  for (const [text, code] of Object.entries(metadata?.value_mappings?.[column] ?? {})) if (names[code] === undefined) names[code] = text;
  const e = metadata?.column_stats?.[column]?.bin_edges;
  return (code) => {
    if (names[code] === MISSING_KEY) return '""';
    if (names[code] !== undefined) return names[code];
    if (e && code + 1 < e.length) return e[code] === e[code + 1] ? `${e[code]}` : `[${e[code]}, ${e[code + 1]}${code + 2 === e.length ? "]" : ")"}`;
    return `code ${code}`;
  };
}

/**
 * A structural-zeros rule's pairs as text, `(a, b)`, a partner value forbidden beside every bin
 * of an interval-binned column once, as `(any number, b)`.
 */
function zeroPairs(rule: Extract<Rule, { type: "structural_zeros" }>, metadata: Names | undefined): string[] {
  const [na, nb] = rule.columns.map((c) => valueNamer(metadata, c));
  const bins = rule.columns.map((c) => Math.max(0, (metadata?.column_stats?.[c]?.bin_edges?.length ?? 0) - 1));
  const out: string[] = [];
  const whole = new Set<string>();
  for (const [side, k] of bins.entries()) {
    if (k === 0) continue;
    const per = new Map<number, number>();
    for (const p of rule.pairs) if (p[side] < k) per.set(p[1 - side], (per.get(p[1 - side]) ?? 0) + 1);
    for (const [v, count] of per) if (count === k) whole.add(`${side},${v}`);
  }
  const said = new Set<string>();
  for (const [a, b] of rule.pairs) {
    const wa = a < bins[0] && whole.has(`0,${b}`);
    const wb = b < bins[1] && whole.has(`1,${a}`);
    const text = `(${wa ? "any number" : na(a)}, ${wb ? "any number" : nb(b)})`;
    if (!said.has(text)) out.push(text);
    said.add(text);
  }
  return out;
}

/** 1204 -> "1,204". */
function thousands(x: number): string {
  return String(x).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** How `synthd fit` names each way of writing countries. */
const COUNTRY_FORM_LABELS: Record<CountryForm, string> = { name: "names", alpha2: "ISO 3166 alpha-2 codes", alpha3: "ISO 3166 alpha-3 codes", ioc: "IOC codes" };

/** A share as a percentage, one decimal, rounded down (0.9996 reads 99.9%, not 100.0%). */
export function percent(share: number): string {
  return `${(Math.floor(share * 1000 + 1e-9) / 10).toFixed(1)}%`;
}

/**
 * One line describing a rule for `synthd fit`: `fixed combinations: education -> education-num
 * (16 combinations)`, `catalog: name -> region, id, total (51 entries)`, `inequality: max_temp >= min_temp (99.2% of rows)`, `structural zeros:
 * (relationship, sex) never (Husband, Female)` (4 pairs listed, then `and N more`), `public attribute:
 * state -> id (US state FIPS code)`. The share is
 * added below 1 (floored to 0.1%); a declared rule ends with `(declared)`.
 * @param metadata its `value_mappings` name structural zeros' values, `column_stats` their interval
 *   bins (else `code 3`).
 */
export function describeRule(rule: Rule, metadata?: Names): string {
  const share = rule.share < 1 ? percent(rule.share) : undefined;
  const tail = rule.declared ? " (declared)" : "";
  switch (rule.type) {
    case "fixed_combinations": {
      const n = `${thousands(rule.combinations.length)} combination${rule.combinations.length === 1 ? "" : "s"}`;
      if (rule.determinant !== undefined) {
        const others = rule.columns.filter((c) => c !== rule.determinant);
        return `fixed combinations: ${rule.determinant} -> ${others.join(", ")} (${n}${share ? `, ${share} of rows` : ""})${tail}`;
      }
      return `fixed combinations: (${rule.columns.join(", ")}), ${n}${share ? `, ${share} of rows` : ""}${tail}`;
    }
    case "catalog": {
      const n = `${thousands(rule.entries.length)} entr${rule.entries.length === 1 ? "y" : "ies"}`;
      const width = rule.key_columns ?? 1;
      const key = width === 2 ? `(${rule.columns[0]}, ${rule.columns[1]})` : rule.key;
      return `catalog: ${key} -> ${rule.columns.slice(width).join(", ")} (${n}${share ? `, ${share} of rows` : ""})${tail}`;
    }
    case "inequality":
      return `inequality: ${rule.high} ${rule.strict ? ">" : ">="} ${rule.low}${share ? ` (${share} of rows)` : ""}${tail}`;
    case "sum":
      return `sum: ${rule.total} = ${identityText(rule.parts, rule.signs, rule.constant, rule.weights)}${share ? ` (${share} of rows)` : ""}${tail}`;
    case "ratio":
      return `ratio: ${rule.total} = ${ratioText(rule)}${rule.bins ? `, the factor by ${rule.bins.quantiles.length} bins of ${rule.bins.part}` : ""}${share ? ` (${share} of rows)` : ""}${tail}`;
    case "not_equal":
      return `not equal: ${rule.columns.join(" != ")}${share ? ` (${share} of rows)` : ""}${tail}`;
    case "blank_together":
      return `blank together: ${rule.columns.join(", ")}${share ? ` (${share} of rows)` : ""}${tail}`;
    case "structural_zeros": {
      const pairs = zeroPairs(rule, metadata);
      const listed = pairs.slice(0, LISTED_PAIRS);
      const more = pairs.length > LISTED_PAIRS ? ` and ${thousands(pairs.length - LISTED_PAIRS)} more` : "";
      return `structural zeros: (${rule.columns.join(", ")}) never ${listed.join(", ")}${more}${share ? ` (${share} of rows)` : ""}${tail}`;
    }
    case "public_attribute":
      return `public attribute: ${rule.columns.slice(0, -1).join(", ")} -> ${rule.columns[rule.columns.length - 1]} (${ATTRIBUTE_LABELS[rule.attribute]}${share ? `, ${share} of rows` : ""})${tail}`;
    case "embedded_code":
      return `embedded code: ${rule.columns[1]} holds ${rule.columns[0]} at character ${rule.offset + 1}${share ? ` (${share} of rows)` : ""}${tail}`;
    case "code_prefix": {
      const prefixes = new Set(rule.prefixes).size;
      const categories = new Set(rule.categories).size;
      return `code prefix: ${rule.columns[1]}'s first ${rule.length} character${rule.length === 1 ? "" : "s"} -> ${rule.columns[0]} (${thousands(prefixes)} prefix${prefixes === 1 ? "" : "es"} of ${thousands(categories)} categor${categories === 1 ? "y" : "ies"})${share ? ` (${share} of rows)` : ""}${tail}`;
    }
    case "difference":
      return `difference: ${rule.columns[1]} - ${rule.columns[0]} from ${shortNumber(rule.min)} to ${shortNumber(rule.max)}${share ? ` (${share} of rows)` : ""}${tail}`;
    case "elapsed": {
      const rounded = rule.rounding === "floor" ? ", rounded down" : "";
      const places = rule.decimals === 0 ? `whole ${elapsedUnitName(rule.unit)}` : `${elapsedUnitName(rule.unit)}, ${rule.decimals} decimal${rule.decimals === 1 ? "" : "s"}`;
      return `elapsed: ${rule.columns[0]} = ${rule.columns[1]} - ${rule.columns[2]} in ${places}${rounded}${share ? ` (${share} of rows)` : ""}${tail}`;
    }
    case "entity_range":
      return `entity range: ${entityRangeText(rule)}${share ? ` (${share} of rows)` : ""}${tail}`;
    case "calendar": {
      const [y, m, d, w] = rule.columns;
      return `calendar: (${y}, ${m}, ${d}) a date${w ? `, ${w} its weekday` : ""}${share ? ` (${share} of rows)` : ""}${tail}`;
    }
    case "datetime_part": {
      const n = rule.names;
      const digits = n !== undefined && rule.part === "weekday" && /^\d+$/.test(n[0]);
      const spelled = n ? `, written ${n[0]} .. ${n[n.length - 1]}${digits ? " (Monday .. Sunday)" : ""}` : rule.width ? `, written with ${rule.width} digits` : "";
      return `datetime part: ${rule.columns[1]} = ${PART_LABELS[rule.part]} of ${rule.columns[0]}${spelled}${share ? ` (${share} of rows)` : ""}${tail}`;
    }
    case "template":
      return `template: ${rule.columns[0]} = "${templateText(rule)}"${share ? ` (${share} of rows)` : ""}${tail}`;
    case "unique":
      return `unique: ${rule.columns.length === 1 ? rule.columns[0] : `(${rule.columns.join(", ")})`} is the table's key, each value once${tail}`;
    case "name_country":
      return `name and country: ${rule.columns[0]} is a name of the country in ${rule.columns[1]} (${COUNTRY_FORM_LABELS[rule.form]}), from that country's public name lists (a word of them in ${percent(rule.share)} of rows, ${percent(rule.shuffled ?? 0)} with another row's country)${tail}`;
    case "name_gender":
      return `name and sex: ${rule.columns[0]}'s first name is a woman's where ${rule.columns[1]} is ${rule.female.join(" or ")}, a man's where ${rule.male.join(" or ")}${share ? ` (${share} of rows)` : ""}${tail}`;
  }
}

/** The rule in words: `pop within its country's range (142 countries)`. */
export function entityRangeText(rule: Pick<EntityRangeRule, "columns" | "keys" | "trends">): string {
  const n = rule.keys.length;
  const time = rule.trends !== undefined && rule.columns[2] !== undefined ? `, on its ${rule.columns[0]}'s line along ${rule.columns[2]}` : "";
  return `${rule.columns[1]} within its ${rule.columns[0]}'s real range${time} (${n} value${n === 1 ? "" : "s"} of ${rule.columns[0]})`;
}
