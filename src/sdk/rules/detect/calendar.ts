/**
 * Detection of calendar rules (`CalendarRule`, `../calendar`): a date kept as year, month and day
 * columns (births by day: `year, month, date_of_month, day_of_week`), found from what the rows
 * hold, never from column names.
 */
import type { CalendarRule } from "../../../contract";
import { calendarCheck, daysInMonth, isoWeekday, monthNames, type RuleDate } from "../calendar";
import { RULE_LIMITS } from "./options";
import type { Col } from "./view";

/** Rows with every date part present, at least (as the inequality's `minRows`, raised: a date needs more). */
const MIN_ROWS = 30;
/** Day-past-month-end rows that independence of month and day predicts, at least, for a rule without weekday. */
const MIN_EXPECTED_INVALID = 5;

/** A column's per-value-id integer (NaN: blank or not an integer in range). */
function integers(c: Col, lo: number, hi: number): Float64Array | undefined {
  if (c.codec.kind !== "numerical" || !c.num) return undefined;
  const out = new Float64Array(c.nv);
  for (let id = 0; id < c.nv; id++) {
    const x = c.num[id];
    if (id === c.blank) out[id] = NaN;
    else if (!Number.isInteger(x) || x < lo || x > hi) return undefined;
    else out[id] = x;
  }
  return out;
}

/** A month column: numbers 1-12, or English month names (long or short, any case). */
function monthsOf(c: Col): { month: Float64Array; months?: string[] } | undefined {
  const asNumbers = integers(c, 1, 12);
  if (asNumbers) return { month: asNumbers };
  if (c.codec.kind !== "categorical") return undefined;
  for (const style of ["long", "short"] as const) {
    const names = monthNames(style);
    const lower = names.map((t) => t.toLowerCase());
    const month = new Float64Array(c.nv);
    let cased: ((t: string) => string) | undefined;
    let ok = true;
    for (let id = 0; id < c.nv && ok; id++) {
      const v = c.scan.values[id];
      if (id === c.blank) {
        month[id] = NaN;
        continue;
      }
      const i = lower.indexOf(v.toLowerCase());
      if (i < 0) ok = false;
      else {
        month[id] = i + 1;
        cased ??= v === v.toUpperCase() ? (t) => t.toUpperCase() : v === v.toLowerCase() ? (t) => t.toLowerCase() : (t) => t;
      }
    }
    if (ok && cased) return { month, months: names.map(cased) };
  }
  return undefined;
}

/**
 * Calendar rules (`../calendar`): per (year, month, day) columns, distinct, where
 * - year is an integer column within 1-9999, month 1-12 (or month names), day 1-31 reaching 29;
 * - >= {@link MIN_ROWS} rows hold all three, and >= {@link RULE_LIMITS}.share of them are valid dates;
 * - either a weekday column agrees with the date's weekday in >= that share of the rows with it
 *   (its text per weekday the majority's, one text per weekday), or independence of month and
 *   day predicts >= {@link MIN_EXPECTED_INVALID} rows past their month's end, where the rows hold
 *   at most 1% of that many (a column of numbers 1-31 beside one of 1-12 is not a date by itself).
 * Each day column joins one rule: the first year and month in table order that pass (with a
 * weekday when one agrees), years whose header names a year first, then those within 1000-2999. Cost: O(n) per (year, month, day) candidate triple; candidates are few.
 */
export function detectCalendars(cols: readonly Col[], n: number): CalendarRule[] {
  // Year candidates: a header naming a year first, then values all within 1000-2999, then the rest
  // (a store number 1-5498 beside month and day columns is not the year).
  const yearRank = (c: Col, v: Float64Array): number =>
    /year|jahr|ann[ée]e|a[ñn]o\b|\byr/i.test(c.name) ? 0 : v.every((x) => Number.isNaN(x) || (x >= 1000 && x <= 2999)) ? 1 : 2;
  const years = cols
    .map((c) => ({ c, v: integers(c, 1, 9999) }))
    .filter((x) => x.v !== undefined)
    .map((x) => ({ ...x, rank: yearRank(x.c, x.v!) }))
    .sort((a, b) => a.rank - b.rank);
  const months = cols.map((c) => ({ c, m: monthsOf(c) })).filter((x) => x.m !== undefined);
  const days = cols.map((c) => ({ c, v: integers(c, 1, 31) })).filter((x) => x.v !== undefined && x.c.num!.some((v) => v >= 29));
  const out: CalendarRule[] = [];
  const used = new Set<string>();
  for (const day of days) {
    let best: { rule: CalendarRule; weekday: boolean } | undefined;
    for (const month of months) {
      if (month.c === day.c) continue;
      for (const year of years) {
        if (year.c === day.c || year.c === month.c || used.has(year.c.name)) continue;
        const found = calendarOf(year.c, year.v!, month.c, month.m!, day.c, day.v!, cols, n);
        if (found && (!best || (found.weekday && !best.weekday))) best = found;
        if (best?.weekday) break;
      }
      if (best?.weekday) break;
    }
    if (best) {
      out.push(best.rule);
      best.rule.columns.forEach((c) => used.add(c));
    }
  }
  return out;
}

/** The rule of one (year, month, day) triple, with the best weekday column, or undefined. */
function calendarOf(
  Y: Col,
  yv: Float64Array,
  M: Col,
  mm: { month: Float64Array; months?: string[] },
  D: Col,
  dv: Float64Array,
  cols: readonly Col[],
  n: number,
): { rule: CalendarRule; weekday: boolean } | undefined {
  const dates: (RuleDate | undefined)[] = new Array(n);
  let rows = 0;
  let valid = 0;
  const monthRows = new Float64Array(13);
  const dayRows = new Float64Array(32);
  let leapRows = 0;
  for (let r = 0; r < n; r++) {
    const [y, m, d] = [yv[Y.scan.ids[r]], mm.month[M.scan.ids[r]], dv[D.scan.ids[r]]];
    if (Number.isNaN(y) || Number.isNaN(m) || Number.isNaN(d)) continue;
    rows++;
    monthRows[m]++;
    dayRows[d]++;
    if (daysInMonth(y, 2) === 29) leapRows++;
    if (d <= daysInMonth(y, m)) {
      valid++;
      dates[r] = { y, m, d };
    }
  }
  if (rows < MIN_ROWS || valid < RULE_LIMITS.share * rows) return undefined;
  const weekday = weekdayColumn(dates, valid, cols, [Y, M, D], n);
  if (!weekday) {
    let expected = 0;
    for (let m = 1; m <= 12; m++) {
      for (let d = 29; d <= 31; d++) {
        const pastEnd = m === 2 ? (d === 29 ? 1 - leapRows / rows : 1) : d > daysInMonth(2001, m) ? 1 : 0;
        expected += (monthRows[m] * dayRows[d] * pastEnd) / rows;
      }
    }
    if (expected < MIN_EXPECTED_INVALID || rows - valid > 0.01 * expected) return undefined;
  }
  const rule: CalendarRule = {
    type: "calendar",
    columns: [Y.name, M.name, D.name, ...(weekday ? [weekday.col.name] : [])],
    share: weekday ? Math.min(valid / rows, weekday.share) : valid / rows,
  };
  if (mm.months) rule.months = mm.months;
  if (weekday) rule.weekdays = weekday.texts;
  return { rule, weekday: weekday !== undefined };
}

/** The column that writes the dates' weekday: its texts Monday..Sunday and share of agreeing rows. */
function weekdayColumn(
  dates: readonly (RuleDate | undefined)[],
  valid: number,
  cols: readonly Col[],
  parts: readonly Col[],
  n: number,
): { col: Col; texts: string[]; share: number } | undefined {
  const wd = new Uint8Array(n);
  for (let r = 0; r < n; r++) {
    const t = dates[r];
    if (t) wd[r] = isoWeekday(t.y, t.m, t.d);
  }
  for (const c of cols) {
    if (parts.includes(c) || c.codec.kind === "id" || c.nonBlank < 2 || c.nonBlank > 7) continue;
    const tally = Array.from({ length: 8 }, () => new Float64Array(c.nv));
    let rows = 0;
    for (let r = 0; r < n; r++) {
      const id = c.scan.ids[r];
      if (wd[r] === 0 || id === c.blank) continue;
      tally[wd[r]][id]++;
      rows++;
    }
    if (rows < MIN_ROWS || rows < 0.5 * valid) continue;
    const texts: string[] = [];
    let agree = 0;
    const taken = new Set<number>();
    for (let w = 1; w <= 7; w++) {
      let best = -1;
      for (let id = 0; id < c.nv; id++) if (tally[w][id] > 0 && (best < 0 || tally[w][id] > tally[w][best])) best = id;
      if (best >= 0 && taken.has(best)) break;
      if (best >= 0) {
        taken.add(best);
        agree += tally[w][best];
      }
      texts.push(best >= 0 ? c.scan.values[best] : "");
    }
    if (texts.length === 7 && agree >= RULE_LIMITS.share * rows) return { col: c, texts, share: agree / rows };
  }
  return undefined;
}

/**
 * A declared calendar rule's columns read as date parts: year and day integer columns (1-9999,
 * 1-31), month numbers 1-12 or English names; the weekday's texts are the majority's per weekday.
 * @returns the rule (share 1, declared) and the first row that breaks it (-1: none), or a sentence
 *   saying which column is not a date part.
 */
export function declaredCalendar(parts: readonly Col[], n: number): { rule: CalendarRule; firstBreak: number } | string {
  const [Y, M, D, W] = parts;
  const yv = integers(Y, 1, 9999);
  if (!yv) return `column "${Y.name}" is not a year (integers 1-9999)`;
  const mm = monthsOf(M);
  if (!mm) return `column "${M.name}" is not a month (1-12 or English month names)`;
  const dv = integers(D, 1, 31);
  if (!dv) return `column "${D.name}" is not a day of month (integers 1-31)`;
  const dates: (RuleDate | undefined)[] = new Array(n);
  for (let r = 0; r < n; r++) {
    const [y, m, d] = [yv[Y.scan.ids[r]], mm.month[M.scan.ids[r]], dv[D.scan.ids[r]]];
    if (!Number.isNaN(y) && !Number.isNaN(m) && !Number.isNaN(d)) dates[r] = { y, m, d };
  }
  const rule: CalendarRule = { type: "calendar", columns: parts.map((c) => c.name), share: 1, declared: true };
  if (mm.months) rule.months = mm.months;
  if (W) {
    const texts: string[] = [];
    for (let w = 1; w <= 7; w++) {
      const tally = new Map<number, number>();
      for (let r = 0; r < n; r++) {
        const t = dates[r];
        const id = W.scan.ids[r];
        if (t && id !== W.blank && t.d <= daysInMonth(t.y, t.m) && isoWeekday(t.y, t.m, t.d) === w) tally.set(id, (tally.get(id) ?? 0) + 1);
      }
      let best = -1;
      for (const [id, k] of tally) if (best < 0 || k > tally.get(best)!) best = id;
      texts.push(best < 0 ? "" : W.scan.values[best]);
    }
    rule.weekdays = texts;
  }
  const check = calendarCheck(rule, parts.map((_, j) => j));
  for (let r = 0; r < n; r++) {
    if (check(parts.map((c) => c.scan.values[c.scan.ids[r]])) === false) return { rule, firstBreak: r };
  }
  return { rule, firstBreak: -1 };
}
