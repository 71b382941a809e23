/**
 * The datetime-part rule (`DatetimePartRule`, docs/api.md "Row rules"): a column writing one field
 * of a datetime column (year, quarter, month, day, weekday, hour). Shared by the checker
 * (`./check`), the enforcer (`./enforce`) and detection (`./detect/datetime-part`). Fields are
 * the datetime's wall-clock ones (its written offset, else UTC), Gregorian calendar as
 * JavaScript's `Date` counts it; weekdays ISO 8601 (1 Monday .. 7 Sunday).
 */
import type { DatetimePart, DatetimePartRule, Metadata } from "../../contract";
import { DatetimeFormat } from "../metadata/datetime";
import { noneFixed, type CompiledRule } from "./compiled-rule";
import { daysInMonth } from "./calendar";

/** Every part, coarsest first. */
export const DATETIME_PARTS: readonly DatetimePart[] = ["year", "quarter", "month", "day", "day_of_year", "weekday", "hour"];

/** The part's value of a wall-clock instant (`local` ms since the epoch, read as UTC fields). */
export function partOf(local: number, part: DatetimePart): number {
  const d = new Date(local);
  switch (part) {
    case "year":
      return d.getUTCFullYear();
    case "quarter":
      return Math.floor(d.getUTCMonth() / 3) + 1;
    case "month":
      return d.getUTCMonth() + 1;
    case "day":
      return d.getUTCDate();
    case "day_of_year":
      return Math.floor((local - Date.UTC(d.getUTCFullYear(), 0, 1)) / 86_400_000) + 1;
    case "weekday":
      return ((d.getUTCDay() + 6) % 7) + 1;
    case "hour":
      return d.getUTCHours();
  }
}

/** The first value of a part that `names` lists (quarter, month and weekday count from 1). */
function firstValue(part: DatetimePart): number {
  return part === "hour" ? 0 : 1;
}

/**
 * How a rule's column reads and writes the part: `read` gives the part's value of a cell
 * (undefined for blank or unreadable; names case-insensitive, numbers by value), `write` the
 * cell of a value (undefined when `names` has no text for it).
 */
export function partSpelling(rule: Pick<DatetimePartRule, "part" | "names" | "width">): {
  read: (text: string) => number | undefined;
  write: (value: number) => string | undefined;
} {
  const base = firstValue(rule.part);
  if (rule.names) {
    const names = rule.names;
    const byText = new Map(names.map((t, i) => [t.toLowerCase(), i + base]));
    // Numbers named by digits (`7` for Sunday) also read by value (`7.0`).
    const byNumber = new Map<number, number>();
    names.forEach((t, i) => {
      const x = t.trim() === "" ? NaN : Number(t);
      if (Number.isFinite(x)) byNumber.set(x, i + base);
    });
    return {
      read: (t) => (t === "" ? undefined : (byText.get(t.toLowerCase()) ?? (byNumber.size ? byNumber.get(Number(t)) : undefined))),
      write: (v) => names[v - base],
    };
  }
  const width = rule.width ?? 0;
  return {
    read: (t) => {
      if (t.trim() === "") return undefined;
      const x = Number(t);
      return Number.isInteger(x) ? x : undefined;
    },
    write: (v) => String(v).padStart(width, "0"),
  };
}

/** Reads a datetime cell of `format` as its wall-clock ms (undefined: blank or unreadable), memoized. */
function wallClockReader(format: DatetimeFormat): (text: string) => { local: number; offset: number } | undefined {
  const memo = new Map<string, { local: number; offset: number } | undefined>();
  return (t) => {
    if (t === "") return undefined;
    if (memo.has(t)) return memo.get(t);
    const p = format.parse(t);
    const v = p === undefined ? undefined : { local: Math.round(p.seconds * 1000) + p.offset * 60_000, offset: p.offset };
    if (memo.size >= 100_000) memo.clear();
    memo.set(t, v);
    return v;
  };
}

/** The rule's datetime column's format, from `column_stats`; undefined when it has none. */
function formatOf(rule: DatetimePartRule, meta: Metadata): DatetimeFormat | undefined {
  const st = meta.column_stats?.[rule.columns[0]];
  return st?.type === "datetime" && st.format !== undefined ? new DatetimeFormat(st.format) : undefined;
}

/**
 * The rule's verdict on one row (`idx`: the datetime's and the part column's positions):
 * undefined when a cell is blank or the datetime unreadable; true when the column's cell reads
 * as the datetime's part.
 */
export function datetimePartCheck(rule: DatetimePartRule, idx: readonly number[], meta: Metadata): (row: readonly string[]) => boolean | undefined {
  const format = formatOf(rule, meta);
  if (!format) return () => undefined;
  const when = wallClockReader(format);
  const { read } = partSpelling(rule);
  return (row) => {
    const t = when(row[idx[0]]);
    const cell = row[idx[1]];
    if (t === undefined || cell === "") return undefined;
    return read(cell) === partOf(t.local, rule.part);
  };
}

/**
 * The wall-clock ms of `local` with its `part` set to `value`: the other fields kept (the day
 * clamped to the month's end), a weekday the nearest day on it (at most 3 days away), a quarter
 * the same month of that quarter, a day of year that day of the same year; undefined for a day
 * past the month's end or the year's, or a value out of range.
 */
export function withPart(local: number, part: DatetimePart, value: number): number | undefined {
  const d = new Date(local);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  const setMonth = (year: number, month: number): number => {
    const out = new Date(local);
    out.setUTCFullYear(year, month, Math.min(d.getUTCDate(), daysInMonth(year, month + 1)));
    return out.getTime();
  };
  switch (part) {
    case "year":
      return Number.isInteger(value) && value >= 1 && value <= 9999 ? setMonth(value, m) : undefined;
    case "quarter":
      return Number.isInteger(value) && value >= 1 && value <= 4 ? setMonth(y, (value - 1) * 3 + (m % 3)) : undefined;
    case "month":
      return Number.isInteger(value) && value >= 1 && value <= 12 ? setMonth(y, value - 1) : undefined;
    case "day": {
      if (!Number.isInteger(value) || value < 1 || value > daysInMonth(y, m + 1)) return undefined;
      const out = new Date(local);
      out.setUTCDate(value);
      return out.getTime();
    }
    case "day_of_year": {
      if (!Number.isInteger(value) || value < 1 || value > (daysInMonth(y, 2) === 29 ? 366 : 365)) return undefined;
      return local + (value - partOf(local, "day_of_year")) * 86_400_000;
    }
    case "weekday": {
      if (!Number.isInteger(value) || value < 1 || value > 7) return undefined;
      let shift = (value - partOf(local, "weekday") + 7) % 7;
      if (shift > 3) shift -= 7;
      return local + shift * 86_400_000;
    }
    case "hour": {
      if (!Number.isInteger(value) || value < 0 || value > 23) return undefined;
      const out = new Date(local);
      out.setUTCHours(value);
      return out.getTime();
    }
  }
}

/** Order in which a datetime is moved to its parts: coarse fields first, the weekday last (it moves the day). */
const MOVE_ORDER: readonly DatetimePart[] = ["year", "quarter", "month", "day", "day_of_year", "hour", "weekday"];

/**
 * Keeps the datetime-part rules of `rules` in decoded rows, per datetime column; `first` and
 * `last` are run before and after every other rule.
 * - `first`: the datetime moves to the parts the row holds ({@link withPart}, coarse parts
 *   first, the weekday last), since a part's code says more than a position drawn inside the
 *   datetime's bin (the model's weekday goes with its orders); then every part is written from
 *   the datetime. A fixed datetime stays, and its parts are written from it.
 * - `last`: the parts are written again from the datetime, which a rule may have moved; a part
 *   the user fixed moves an unfixed datetime to it instead; fixed cells that disagree are kept
 *   and counted unrepaired.
 * A blank or unreadable datetime leaves its row's parts as drawn. Parts are written in the
 * column's spelling (names, zero padding). Rules of `covered` (a part a catalog or fixed
 * combinations of its datetime hold) are left out of `first`: that rule draws the datetime and
 * the part together, as released.
 */
export function datetimePartRules(
  rules: readonly DatetimePartRule[],
  meta: Metadata,
  covered: ReadonlySet<DatetimePartRule> = new Set(),
): { first: CompiledRule; last: CompiledRule } | undefined {
  const groups = new Map<string, { dc: number; format: DatetimeFormat; parts: { rule: DatetimePartRule; pc: number; read: (t: string) => number | undefined; write: (v: number) => string | undefined }[] }>();
  for (const rule of rules) {
    const [dc, pc] = rule.columns.map((c: string) => (meta.features as readonly string[]).indexOf(c));
    const format = formatOf(rule, meta);
    if (dc < 0 || pc < 0 || !format) continue;
    const g = groups.get(rule.columns[0]) ?? { dc, format, parts: [] };
    g.parts.push({ rule, pc, ...partSpelling(rule) });
    groups.set(rule.columns[0], g);
  }
  if (groups.size === 0) return undefined;
  for (const g of groups.values()) g.parts.sort((a, b) => MOVE_ORDER.indexOf(a.rule.part) - MOVE_ORDER.indexOf(b.rule.part));
  const readers = new Map([...groups].map(([name, g]) => [name, wallClockReader(g.format)]));
  const pass = (trustParts: boolean): CompiledRule => ({
    apply(rows, _rng, given, _draw, out) {
      const fixed = given ?? noneFixed;
      for (const [name, g] of groups) {
        const when = readers.get(name)!;
        for (let r = 0; r < rows.length; r++) {
          const t = when(rows.get(r, g.dc));
          if (t === undefined) continue;
          let local = t.local;
          if (!fixed(r, g.dc)) {
            for (const p of g.parts) {
              if (trustParts ? covered.has(p.rule) : !fixed(r, p.pc)) continue;
              const v = p.read(rows.get(r, p.pc));
              if (v !== undefined && v !== partOf(local, p.rule.part)) local = withPart(local, p.rule.part, v) ?? local;
            }
            if (local !== t.local) {
              try {
                rows.set(r, g.dc, g.format.write((local - t.offset * 60_000) / 1000, t.offset));
                out.changed++;
              } catch {
                local = t.local;
              }
            }
          }
          for (const p of g.parts) {
            if (trustParts && covered.has(p.rule)) continue;
            const want = partOf(local, p.rule.part);
            const cell = rows.get(r, p.pc);
            if (cell !== "" && p.read(cell) === want) continue;
            const text = fixed(r, p.pc) ? undefined : p.write(want);
            if (text === undefined) {
              if (!trustParts) out.unrepaired++;
              continue;
            }
            rows.set(r, p.pc, text);
            out.changed++;
          }
        }
      }
    },
  });
  return { first: pass(true), last: pass(false) };
}
