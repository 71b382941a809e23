/**
 * Detection of datetime-part rules (`DatetimePartRule`, `../datetime-part`): a column writing a
 * field of a datetime column (`OPENDATE 7/1/62` beside `MONTH 7`, an order date beside its
 * `day_of_week`), found from what the rows hold, never from column names.
 */
import { Info } from "luxon";
import type { DatetimePart, DatetimePartRule } from "../../../contract";
import { monthNames } from "../calendar";
import type { DatetimeFormat } from "../../metadata/datetime";
import { DATETIME_PARTS, partOf, partSpelling } from "../datetime-part";
import { RULE_LIMITS } from "./options";
import type { Col } from "./view";

/** Rows off the column's most frequent value, at least (a near-constant column agrees by chance). */
const MIN_OFF_MODE = 5;
/** Distinct non-blank values of a part column, at most (a year column of a long series included). */
const MAX_VALUES = 400;
/** Formats' finest units that write the hour. */
const CLOCK_UNITS = new Set(["hour", "minute", "second", "millisecond"]);

/** A way a column writes a part: `names` per value (as the rule's), or numbers (`undefined`). */
type Spelling = readonly string[] | undefined;

const digits = (from: number, order: readonly number[]): string[] => order.map((i) => String(i + from));

/**
 * The spellings tried per part: numbers; month names long and short; weekday names long and
 * short, or numbers 1-7 / 0-6 with Monday or Sunday first; quarters 1-4 or Q1-Q4.
 */
function spellingsOf(part: DatetimePart): Spelling[] {
  switch (part) {
    case "year":
    case "day":
    case "day_of_year":
    case "hour":
      return [undefined];
    case "quarter":
      return [undefined, ["Q1", "Q2", "Q3", "Q4"]];
    case "month":
      return [undefined, monthNames("long"), monthNames("short")];
    case "weekday": {
      const mondayFirst = [0, 1, 2, 3, 4, 5, 6];
      const sundayFirst = [1, 2, 3, 4, 5, 6, 0];
      return [
        Info.weekdays("long", { locale: "en-US" }),
        Info.weekdays("short", { locale: "en-US" }),
        digits(1, mondayFirst),
        digits(0, mondayFirst),
        digits(1, sundayFirst),
        digits(0, sundayFirst),
      ];
    }
  }
}

/** Wall-clock ms per value id of a datetime column (its written offset, else UTC; NaN: blank or unreadable). */
function wallClock(D: Col, format: DatetimeFormat): Float64Array {
  const local = new Float64Array(D.nv);
  for (let id = 0; id < D.nv; id++) {
    const s = D.num![id];
    const offset = format.hasOffset && !Number.isNaN(s) ? (format.parse(D.scan.values[id])?.offset ?? 0) : 0;
    local[id] = Number.isNaN(s) ? NaN : Math.round(s * 1000) + offset * 60_000;
  }
  return local;
}

/** `names` written in the case of the column's text `seen` (all upper, all lower, else as listed). */
function cased(names: readonly string[], seen: string): string[] {
  if (seen === seen.toUpperCase() && seen !== seen.toLowerCase()) return names.map((t) => t.toUpperCase());
  if (seen === seen.toLowerCase() && seen !== seen.toUpperCase()) return names.map((t) => t.toLowerCase());
  return [...names];
}

/** The zero-padded width of a column's numbers (`07`: 2), or undefined when none is padded. */
function paddedWidth(c: Col): number | undefined {
  let width = 0;
  for (let id = 0; id < c.nv; id++) {
    const v = c.scan.values[id];
    if (/^0\d+$/.test(v)) width = Math.max(width, v.length);
  }
  return width >= 2 && width <= 4 ? width : undefined;
}

/**
 * Datetime-part rules: per datetime column (table order) and per column that is numerical or
 * categorical, not in `busy`, with 2..{@link MAX_VALUES} distinct values, the first part and
 * spelling ({@link spellingsOf}) its cells read as in >= {@link RULE_LIMITS}.share of the >=
 * {@link RULE_LIMITS}.minRows rows with both, and in that share of its >= {@link MIN_OFF_MODE}
 * rows off its most frequent value. Hours only of a datetime whose format writes the hour. A
 * column joins one rule (the first datetime's). Cost: O(n) per (datetime, column, part,
 * spelling), a pass stopping once 1% of the rows disagree; parts per distinct datetime value.
 */
export function detectDatetimeParts(cols: readonly Col[], n: number, busy: ReadonlySet<string>): DatetimePartRule[] {
  const out: DatetimePartRule[] = [];
  const taken = new Set<string>();
  const candidates = cols.filter(
    (c) =>
      (c.codec.kind === "numerical" || c.codec.kind === "categorical") &&
      !busy.has(c.name) &&
      c.nonBlank >= 2 &&
      c.nonBlank <= MAX_VALUES &&
      c.scan.ids.length === n,
  );
  if (candidates.length === 0) return out;
  for (const D of cols) {
    const format = D.codec.kind === "datetime" ? D.codec.datetime : undefined;
    if (!format || !D.num || D.scan.ids.length !== n) continue;
    const local = wallClock(D, format);
    const parts = new Map<DatetimePart, Float64Array>();
    const partValues = (p: DatetimePart): Float64Array => {
      let v = parts.get(p);
      if (!v) {
        v = new Float64Array(D.nv);
        for (let id = 0; id < D.nv; id++) v[id] = Number.isNaN(local[id]) ? NaN : partOf(local[id], p);
        parts.set(p, v);
      }
      return v;
    };
    const allowed = DATETIME_PARTS.filter((p) => p !== "hour" || CLOCK_UNITS.has(format.finest));
    for (const c of candidates) {
      if (c === D || taken.has(c.name)) continue;
      const rule = partRule(D, c, n, allowed, partValues);
      if (rule) {
        out.push(rule);
        taken.add(c.name);
      }
    }
  }
  return out;
}

/** The first part and spelling of `D` that column `c` writes, as a rule, or undefined. */
function partRule(D: Col, c: Col, n: number, allowed: readonly DatetimePart[], partValues: (p: DatetimePart) => Float64Array): DatetimePartRule | undefined {
  let mode = -1;
  for (let id = 0; id < c.nv; id++) if (id !== c.blank && (mode < 0 || c.scan.counts[id] > c.scan.counts[mode])) mode = id;
  const width = paddedWidth(c);
  for (const part of allowed) {
    for (const spelling of spellingsOf(part)) {
      if (spelling && c.codec.kind !== "categorical" && !/^\d+$/.test(spelling[0])) continue;
      const { read } = partSpelling({ part, names: spelling ? [...spelling] : undefined });
      const reading = new Float64Array(c.nv);
      let readable = 0;
      let seen = "";
      for (let id = 0; id < c.nv; id++) {
        const x = id === c.blank ? undefined : read(c.scan.values[id]);
        reading[id] = x ?? NaN;
        if (x !== undefined) {
          readable++;
          seen ||= c.scan.values[id];
        }
      }
      if (readable < 2) continue;
      const t = tally(D, c, n, partValues(part), reading, mode);
      if (t === undefined || !agrees(t)) continue;
      const rule: DatetimePartRule = { type: "datetime_part", columns: [D.name, c.name], part, share: t.rows ? 1 - t.bad / t.rows : 1 };
      if (spelling) rule.names = cased(spelling, seen);
      else if (width) rule.width = width;
      return rule;
    }
  }
  return undefined;
}

/**
 * Rows with both cells, those where `c` does not read as the part, and the same off `c`'s mode;
 * undefined as soon as more than 1 - {@link RULE_LIMITS}.share of all rows disagree.
 */
function tally(D: Col, c: Col, n: number, part: Float64Array, reading: Float64Array, mode: number): { rows: number; bad: number; off: number; offBad: number } | undefined {
  const limit = (1 - RULE_LIMITS.share) * n;
  let rows = 0;
  let bad = 0;
  let off = 0;
  let offBad = 0;
  for (let r = 0; r < n; r++) {
    const want = part[D.scan.ids[r]];
    const id = c.scan.ids[r];
    if (Number.isNaN(want) || id === c.blank) continue;
    rows++;
    const ok = reading[id] === want;
    if (!ok && ++bad > limit) return undefined;
    if (id !== mode) {
      off++;
      if (!ok) offBad++;
    }
  }
  return { rows, bad, off, offBad };
}

/** The criteria of {@link detectDatetimeParts} on one reading's {@link tally}. */
function agrees({ rows, bad, off, offBad }: NonNullable<ReturnType<typeof tally>>): boolean {
  const share = RULE_LIMITS.share;
  return rows >= RULE_LIMITS.minRows && bad <= (1 - share) * rows && off >= MIN_OFF_MODE && offBad <= (1 - share) * off;
}

/**
 * A declared datetime-part rule: of `part` (else of every part the format allows), the part and
 * spelling that most rows with both cells keep, with share 1.
 * @returns the rule and the first row that breaks it (-1: none), or a sentence saying why the
 *   columns cannot form one.
 */
export function declaredDatetimePart(D: Col, c: Col, n: number, part: DatetimePart | undefined): { rule: DatetimePartRule; firstBreak: number } | string {
  const format = D.codec.kind === "datetime" ? D.codec.datetime : undefined;
  if (!format || !D.num) return `column "${D.name}" is not a datetime`;
  if (part !== undefined && !DATETIME_PARTS.includes(part)) return `"${String(part)}" is not a part; use ${DATETIME_PARTS.join(", ")}`;
  if (part === "hour" && !CLOCK_UNITS.has(format.finest)) return `column "${D.name}" writes no hour`;
  const local = wallClock(D, format);
  const parts = part !== undefined ? [part] : DATETIME_PARTS.filter((p) => p !== "hour" || CLOCK_UNITS.has(format.finest));
  let best: { rule: DatetimePartRule; kept: number; firstBreak: number } | undefined;
  for (const p of parts) {
    const values = new Float64Array(D.nv);
    for (let id = 0; id < D.nv; id++) values[id] = Number.isNaN(local[id]) ? NaN : partOf(local[id], p);
    for (const spelling of spellingsOf(p)) {
      const { read } = partSpelling({ part: p, names: spelling ? [...spelling] : undefined });
      let kept = 0;
      let firstBreak = -1;
      let seen = "";
      for (let r = 0; r < n; r++) {
        const want = values[D.scan.ids[r]];
        const id = c.scan.ids[r];
        if (Number.isNaN(want) || id === c.blank) continue;
        if (read(c.scan.values[id]) === want) {
          kept++;
          seen ||= c.scan.values[id];
        } else if (firstBreak < 0) firstBreak = r;
      }
      if (best && kept <= best.kept) continue;
      const rule: DatetimePartRule = { type: "datetime_part", columns: [D.name, c.name], part: p, share: 1, declared: true };
      const width = spelling ? undefined : paddedWidth(c);
      if (spelling) rule.names = cased(spelling, seen);
      else if (width) rule.width = width;
      best = { rule, kept, firstBreak };
    }
  }
  return best ? { rule: best.rule, firstBreak: best.firstBreak } : `column "${c.name}" writes no part of "${D.name}"`;
}
