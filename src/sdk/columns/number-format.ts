/**
 * Numbers written with a format (`$1,234.50`, `12.5%`, `196,000`, `(1,234)`): a numerical column's
 * `column_stats.number_format` (docs/api.md "Column kinds"), found from its values as a datetime
 * column's `format` is. The scan rewrites such a column's values as plain decimals
 * ({@link withNumberFormat}), so bins, grain and rules read them as any number; the decoder writes
 * each synthetic value back in the format ({@link NumberFormat.write}).
 *
 * What a format is (the common spreadsheet patterns, Unicode TR35 "Number Patterns" `¤#,##0.00`
 * and `#,##0.0%`, restricted to what can be read back exactly):
 * - a prefix: a currency sign (Unicode category Sc) with up to three capital letters before it
 *   (`$`, `€`, `US$`, `R$`); a minus may stand before or after it (`-$5`, `$-5`);
 * - a suffix: `%`, `‰` or a currency sign, with or without one space before it (`12 €`);
 * - grouping: `,` between every three integer digits (`2,076,894`); a value below 1000 has none,
 *   and a group of another length (`1,23`, `12,34`) is no number, so the column stays categorical;
 * - accounting negatives: `(1,234)` is -1234 (a column of only bracketed values is no number);
 * - a missing value's text ({@link MISSING_TEXTS}: R's `NA`, `N/A`, `null`...) in a column with no
 *   blank: read as a blank, and blanks are written as it.
 * - a duration written as clock text (`clock`): `h:mm:ss` (hours unbounded) or `m:ss` (minutes
 *   unbounded), the first field padded to two digits (`hh`, `mm`) when the column pads it, seconds
 *   with or without decimals (`2:05:37`, `02:55:10`, `45:12`, `1:02.345`); the number is its
 *   seconds (a time of day `14:35` is read as a length too, and written back inside its range).
 * Every non-blank value of the column must read under the same prefix and suffix, and at least one
 * must need the format (else the column is plain numbers or no numbers). A `.`-grouped column with
 * a decimal comma (`1.234,5`) is not read: `1.234` is ambiguous, left categorical. Surrounding
 * whitespace is trimmed by the readers and not written back. Values keep their written units
 * (`12.5%` is 12.5).
 */
import type { NumberFormatStats } from "../../contract";
import type { ColumnScan } from "./common";

/**
 * Texts that stand for a missing number (pandas' default `na_values`, and `-`, `?`, `.`), one per
 * column: a numerical column of R's `write.csv` writes `NA` where a value is missing.
 */
export const MISSING_TEXTS: ReadonlySet<string> = new Set([
  "NA", "N/A", "n/a", "#N/A", "NaN", "nan", "null", "NULL", "None", "<NA>", "-", "?", ".",
]);

/** One value: sign, prefix, digits (grouping removed), suffix, bracketed. */
interface Parts {
  negative: boolean;
  prefix: string;
  suffix: string;
  /** Plain decimal text of the magnitude (`1234.50`). */
  digits: string;
  grouped: boolean;
  bracketed: boolean;
  /** The minus was written after the prefix (`$-5`). */
  minusInside: boolean;
}

// Sign and prefix, the number (grouped in threes, or plain), suffix; brackets around the whole.
const VALUE_RE =
  /^(\()?([-+])?([A-Z]{0,3}\p{Sc})?([-+])?(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)( ?[%‰\p{Sc}])?(\))?$/u;

/** A value's parts, or undefined when it is no number in any format. */
function partsOf(text: string): Parts | undefined {
  const m = VALUE_RE.exec(text);
  if (m === null) return undefined;
  const [, open, sign1, prefix = "", sign2, num, suffix = "", close] = m;
  if ((open === undefined) !== (close === undefined)) return undefined;
  if (sign1 !== undefined && sign2 !== undefined) return undefined;
  const sign = sign1 ?? sign2;
  if (open !== undefined && sign !== undefined) return undefined;
  if (prefix === "" && sign2 !== undefined) return undefined;
  const grouped = num.includes(",");
  const digits = grouped ? num.replace(/,/g, "") : num;
  // A leading zero marks a code (ZIP, FIPS): `012`, `0,123`; `0.5` is a number.
  if (/^0\d/.test(digits)) return undefined;
  return { negative: sign === "-" || open !== undefined, prefix, suffix, digits, grouped, bracketed: open !== undefined, minusInside: sign2 === "-" };
}

/**
 * The non-blank values of a column that are no missing text, and its one missing text; undefined
 * when it has two missing texts, or one beside blanks (the two could not be told apart).
 */
function presentValues(values: readonly string[]): { present: string[]; missing?: string } | undefined {
  const present: string[] = [];
  let missing: string | undefined;
  let blank = false;
  for (const v of values) {
    if (v === "") blank = true;
    else if (!MISSING_TEXTS.has(v)) present.push(v);
    else if (missing !== undefined && missing !== v) return undefined;
    else missing = v;
  }
  return missing !== undefined && blank ? undefined : { present, ...(missing !== undefined ? { missing } : {}) };
}

/** A duration's clock form: hours, minutes, seconds or minutes, seconds; the first field padded or not. */
export type ClockForm = NonNullable<NumberFormatStats["clock"]>;

// A clock's fields: the first unbounded, the others two digits below 60, seconds' decimals.
const CLOCK_RE = /^(\d+):([0-5]\d)(?::([0-5]\d))?(\.\d+)?$/;

/** A clock text's fields, or undefined: [first, second, third or undefined, fraction or ""]. */
function clockFields(text: string): [string, string, string | undefined, string] | undefined {
  const m = CLOCK_RE.exec(text);
  return m === null ? undefined : [m[1], m[2], m[3], m[4] ?? ""];
}

/** The first field's padding: "padded" (`02`), "bare" (`2`, `0`) or "either" (two digits or more, no leading zero). */
function paddingOf(first: string): "padded" | "bare" | "either" | undefined {
  if (first.length === 1) return "bare";
  if (first.startsWith("0")) return first.length === 2 ? "padded" : undefined;
  return "either";
}

/** Seconds of a clock text in `form`, as plain decimal text with its decimals as written; undefined when it is not in the form. */
function clockSeconds(text: string, form: ClockForm): string | undefined {
  const f = clockFields(text);
  if (f === undefined) return undefined;
  const [first, second, third, fraction] = f;
  if ((third !== undefined) !== form.endsWith(":mm:ss")) return undefined;
  const pad = paddingOf(first);
  if (pad === undefined || pad === (form.startsWith("hh") || form.startsWith("mm") ? "bare" : "padded")) return undefined;
  const seconds = third === undefined ? Number(first) * 60 + Number(second) : Number(first) * 3600 + Number(second) * 60 + Number(third);
  return Number.isSafeInteger(seconds) ? `${seconds}${fraction}` : undefined;
}

/** Plain decimal seconds (`7537`, `62.345`) as clock text in `form`; other text (exponents) as it is. */
function clockText(plain: string, form: ClockForm): string {
  const m = /^(-?)(\d+)(\.\d*)?$/.exec(plain);
  if (m === null) return plain;
  const total = Number(m[2]);
  const two = (x: number) => String(x).padStart(2, "0");
  const first = form.endsWith(":mm:ss") ? Math.floor(total / 3600) : Math.floor(total / 60);
  const head = form.length === 8 || form === "mm:ss" ? two(first) : String(first);
  const rest = form.endsWith(":mm:ss") ? `${two(Math.floor((total % 3600) / 60))}:${two(total % 60)}` : two(total % 60);
  return `${m[1]}${head}:${rest}${m[3] ?? ""}`;
}

/**
 * The clock form every non-blank value of `values` is written in (one missing text allowed, as for
 * numbers), or undefined: all in two fields or all in three, the first field padded in all or in
 * none. Never throws.
 */
function inferClock(values: readonly string[]): NumberFormat | undefined {
  const read = presentValues(values);
  if (read === undefined) return undefined;
  const { present, missing } = read;
  let fields: number | undefined;
  let padded = false;
  let bare = false;
  for (const v of present) {
    const f = clockFields(v);
    if (f === undefined) return undefined;
    const n = f[2] === undefined ? 2 : 3;
    if (fields !== undefined && fields !== n) return undefined;
    fields = n;
    const pad = paddingOf(f[0]);
    if (pad === undefined) return undefined;
    padded ||= pad === "padded";
    bare ||= pad === "bare";
  }
  if (fields === undefined || (padded && bare)) return undefined;
  const clock: ClockForm = fields === 3 ? (bare ? "h:mm:ss" : "hh:mm:ss") : bare ? "m:ss" : "mm:ss";
  return new NumberFormat({ clock, ...(missing !== undefined ? { missing } : {}) });
}

/** A numerical column's number format (see the module's header). */
export class NumberFormat {
  readonly prefix: string;
  readonly suffix: string;
  readonly grouping: boolean;
  readonly parentheses: boolean;
  readonly minusInside: boolean;
  /** The text of a missing value (`NA`), or undefined (a blank). */
  readonly missing?: string;
  /** A duration's clock form (`h:mm:ss`...), or undefined. */
  readonly clock?: ClockForm;

  constructor(stats: NumberFormatStats) {
    this.missing = stats.missing;
    this.clock = stats.clock;
    this.prefix = stats.prefix ?? "";
    this.suffix = stats.suffix ?? "";
    this.grouping = stats.grouping === ",";
    this.parentheses = stats.negative === "parentheses";
    this.minusInside = stats.negative === "minus_after_prefix";
  }

  /** The contract's form (`column_stats[f].number_format`). */
  stats(): NumberFormatStats {
    return {
      ...(this.prefix !== "" ? { prefix: this.prefix } : {}),
      ...(this.suffix !== "" ? { suffix: this.suffix } : {}),
      ...(this.grouping ? { grouping: "," as const } : {}),
      ...(this.parentheses ? { negative: "parentheses" as const } : this.minusInside ? { negative: "minus_after_prefix" as const } : {}),
      ...(this.missing !== undefined ? { missing: this.missing } : {}),
      ...(this.clock !== undefined ? { clock: this.clock } : {}),
    };
  }

  /**
   * Trimmed text in this format (or plain, `1234.5`) -> the same number as a plain decimal text
   * with the decimals as written (`$1,234.50` -> `1234.50`, `(12)` -> `-12`); undefined when it is
   * no number in this format.
   */
  plain(text: string): string | undefined {
    if (this.missing !== undefined && text === this.missing) return "";
    if (this.clock !== undefined) return clockSeconds(text, this.clock);
    const p = partsOf(text);
    if (p === undefined) return undefined;
    const formatted = p.prefix !== "" || p.suffix !== "" || p.grouped || p.bracketed;
    if (formatted && (p.prefix !== this.prefix || p.suffix !== this.suffix)) return undefined;
    if (p.grouped && !this.grouping) return undefined;
    return p.negative ? `-${p.digits}` : p.digits;
  }

  /** Trimmed text -> its number, or undefined ({@link plain}). */
  parse(text: string): number | undefined {
    const t = this.plain(text);
    if (t === undefined || t === "") return undefined;
    const x = Number(t);
    return Number.isFinite(x) ? x : undefined;
  }

  /**
   * A plain decimal text (a decoder's, `-1234.5`) written in this format (`-$1,234.5`); blank stays
   * blank (or the missing value's text), and text that is no plain decimal (exponent notation) gets
   * prefix and suffix only.
   */
  write(plain: string): string {
    if (plain === "") return this.missing ?? plain;
    if (this.clock !== undefined) return clockText(plain, this.clock);
    const negative = plain.startsWith("-");
    let body = negative || plain.startsWith("+") ? plain.slice(1) : plain;
    if (this.grouping && /^\d{4,}(\.\d*)?$/.test(body)) {
      const dot = body.indexOf(".");
      const int = dot < 0 ? body : body.slice(0, dot);
      body = int.replace(/\B(?=(\d{3})+$)/g, ",") + (dot < 0 ? "" : body.slice(dot));
    }
    if (negative && /^[0.]*$/.test(body)) return this.prefix + body + this.suffix;
    if (!negative) return this.prefix + body + this.suffix;
    if (this.parentheses) return `(${this.prefix}${body}${this.suffix})`;
    return this.minusInside ? `${this.prefix}-${body}${this.suffix}` : `-${this.prefix}${body}${this.suffix}`;
  }

  /** How people read it (`synthd fit`): `$1,234.50`, `12.5%`, `1,234, negatives (1,234)`. */
  example(decimals: number): string {
    if (this.clock !== undefined) {
      const x = this.clock.endsWith(":mm:ss") ? "7537" : "62";
      return this.write(`${x}${decimals > 0 ? "." + "5".padEnd(decimals, "0") : ""}`) + (this.missing !== undefined ? `, missing as ${this.missing}` : "");
    }
    const int = this.grouping ? "1234" : "12";
    return (
      this.write(`${int}${decimals > 0 ? "." + "5".padEnd(decimals, "0") : ""}`) +
      (this.parentheses ? `, negatives ${this.write(`-${int}`)}` : "") +
      (this.missing !== undefined ? `, missing as ${this.missing}` : "")
    );
  }
}

/**
 * The one format every non-blank value of `values` (trimmed, distinct) is written in, when some
 * value needs it (a sign, grouping or brackets) and every value reads under it; else undefined.
 * Never throws.
 */
export function inferNumberFormat(values: readonly string[]): NumberFormat | undefined {
  const clock = inferClock(values);
  if (clock !== undefined) return clock;
  let prefix: string | undefined;
  let suffix: string | undefined;
  let grouped = false;
  let bracketed = false;
  let plainNegatives = false;
  let minusInside = false;
  let positives = false;
  let any = false;
  const read = presentValues(values);
  if (read === undefined) return undefined;
  const { present, missing } = read;
  for (const v of present) {
    const p = partsOf(v);
    if (p === undefined) return undefined;
    if (prefix === undefined) prefix = p.prefix;
    if (suffix === undefined) suffix = p.suffix;
    // One prefix and suffix for all (a bare `0` beside `$5` is no format of one column).
    if (p.prefix !== prefix || p.suffix !== suffix) return undefined;
    grouped ||= p.grouped;
    bracketed ||= p.bracketed;
    if (p.negative && !p.bracketed) plainNegatives = true;
    minusInside ||= p.minusInside;
    if (!p.negative) positives = true;
    any = true;
  }
  if (!any || prefix === undefined || suffix === undefined) return undefined;
  if (prefix === "" && suffix === "" && !grouped && !bracketed && missing === undefined) return undefined;
  // Brackets are negatives only beside unbracketed values, and not beside minus signs.
  if (bracketed && (!positives || plainNegatives)) return undefined;
  return new NumberFormat({
    ...(prefix !== "" ? { prefix } : {}),
    ...(suffix !== "" ? { suffix } : {}),
    ...(grouped ? { grouping: "," as const } : {}),
    ...(bracketed ? { negative: "parentheses" as const } : minusInside ? { negative: "minus_after_prefix" as const } : {}),
    ...(missing !== undefined ? { missing } : {}),
  });
}

/**
 * `scan` with its values rewritten as plain decimals under `format` (values that become equal,
 * `1,000` and `1000`, merge; row ids and counts follow, `readIds` maps the ids as read) and marked
 * numeric with the format.
 * @throws Error when a value does not read under `format` (callers infer it from these values).
 */
export function withNumberFormat(scan: ColumnScan, format: NumberFormat): ColumnScan {
  const index = new Map<string, number>();
  const values: string[] = [];
  const counts: number[] = [];
  const firstLines: number[] = [];
  const written: string[] = [];
  const remap = new Int32Array(scan.values.length);
  scan.values.forEach((v, id) => {
    const t = v === "" ? "" : format.plain(v);
    if (t === undefined) throw new Error(`internal: ${JSON.stringify(v)} is not written as ${format.example(0)}`);
    let to = index.get(t);
    if (to === undefined) {
      to = values.length;
      index.set(t, to);
      values.push(t);
      written.push(v);
      counts.push(0);
      firstLines.push(scan.firstLines[id]);
    } else firstLines[to] = Math.min(firstLines[to], scan.firstLines[id]);
    counts[to] += scan.counts[id];
    remap[id] = to;
  });
  const ids = values.length === scan.values.length && remap.every((to, id) => to === id) ? scan.ids : scan.ids.map((id) => remap[id]);
  const blank = index.get("");
  const missing = blank === undefined ? 0 : counts[blank];
  return { ...scan, values, counts, firstLines, ids, missing, numeric: true, numberFormat: format, readIds: remap, written };
}

/**
 * `scan` with its missing text (`NA`, one of {@link MISSING_TEXTS}; the column has no blank) read
 * as a blank and kept as `missingText`: a datetime column of R's `write.csv`. `scan` itself when no
 * value is `text`.
 */
export function withMissingText(scan: ColumnScan, text: string): ColumnScan {
  const at = scan.values.indexOf(text);
  if (at < 0 || scan.values.includes("")) return scan;
  const values = scan.values.slice();
  values[at] = "";
  return { ...scan, values, missing: scan.missing + scan.counts[at], missingText: text };
}

/**
 * The missing text of a column whose values would be datetimes but for it: exactly one value of
 * {@link MISSING_TEXTS}, no blank (the two could not be told apart), and `parsesAll` true for the
 * other values. Never throws.
 */
export function missingTextOf(values: readonly string[], parsesAll: (rest: string[]) => boolean): string | undefined {
  const markers = values.filter((v) => MISSING_TEXTS.has(v));
  if (markers.length !== 1 || values.includes("")) return undefined;
  const rest = values.filter((v) => v !== "" && v !== markers[0]);
  return rest.length > 0 && parsesAll(rest) ? markers[0] : undefined;
}

/**
 * `scan` with its values as written again (the first text of each merged value), for a column the
 * user declared another kind than numerical; `scan` itself when it has no number format.
 */
export function asWritten(scan: ColumnScan): ColumnScan {
  if (scan.numberFormat === undefined || scan.written === undefined) return scan;
  return { ...scan, values: scan.written, numeric: false, numberFormat: undefined, written: undefined };
}

/**
 * The scan of a column as numbers with a format when it is none as written (not numeric, some
 * non-blank value) and one format reads all its values; else `scan` itself.
 */
export function formattedNumbers(scan: ColumnScan): ColumnScan {
  if (scan.numeric || scan.numberFormat !== undefined) return scan;
  const format = inferNumberFormat(scan.values);
  return format === undefined ? scan : withNumberFormat(scan, format);
}
