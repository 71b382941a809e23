/**
 * The tokens of a datetime format (luxon): the split into pieces, the tokens usable and refused,
 * and the check that a format's units form one unbroken run ({@link checkUnitChain}).
 */

/** One piece of a format, split the way luxon's `Formatter.parseFormat` splits it. */
export interface Piece {
  literal: boolean;
  val: string;
}

/**
 * Splits a format like luxon 3.7's `Formatter.parseFormat`: runs of one repeated character are tokens,
 * text between single quotes is literal (`''` is a quote), white space is literal.
 */
export function splitFormat(fmt: string): Piece[] {
  const out: Piece[] = [];
  let current: string | null = null;
  let full = "";
  let quoted = false;
  for (let i = 0; i < fmt.length; i++) {
    const c = fmt.charAt(i);
    if (c === "'") {
      if (full.length > 0 || quoted) out.push({ literal: quoted || /^\s+$/.test(full), val: full === "" ? "'" : full });
      current = null;
      full = "";
      quoted = !quoted;
    } else if (quoted || c === current) {
      full += c;
    } else {
      if (full.length > 0) out.push({ literal: /^\s+$/.test(full), val: full });
      full = c;
      current = c;
    }
  }
  if (full.length > 0) out.push({ literal: quoted || /^\s+$/.test(full), val: full });
  return out;
}

/** Tokens luxon 3.7 both parses and formats (everything else made of letters is refused). */
export const USABLE_TOKENS = new Set(
  (
    "G GG y yy yyyy yyyyyy M MM MMM MMMM L LL LLL LLLL d dd o ooo H HH h hh m mm s ss S SSS u uu uuu a " +
    "kk kkkk W WW E c EEE EEEE ccc cccc q qq Z ZZ ZZZ"
  ).split(" "),
);
/** Tokens that name a time zone, which a fixed offset cannot write back. */
export const ZONE_NAME_TOKENS = new Set(["z", "ZZZZ", "ZZZZZ"]);
/** luxon's locale-dependent macro tokens (D, t, T, f, F, ...). */
export const MACRO = /^(D{1,4}|t{1,4}|T{1,4}|f{1,4}|F{1,4})$/;

/** The calendar and clock units a datetime format can write, coarsest first. */
const UNITS = ["year", "month", "day", "hour", "minute", "second", "millisecond"] as const;
type Unit = (typeof UNITS)[number];

/**
 * The units a token writes (by first letter): `o` month and day; `q`, `W` the month; with a week,
 * the weekday (`E`, `c`) the day. Letters absent here write no unit of the chain.
 */
const TOKEN_UNITS: Readonly<Record<string, readonly Unit[]>> = {
  y: ["year"],
  k: ["year"],
  M: ["month"],
  L: ["month"],
  q: ["month"],
  d: ["day"],
  o: ["month", "day"],
  W: ["month"],
  H: ["hour"],
  h: ["hour"],
  m: ["minute"],
  s: ["second"],
  S: ["millisecond"],
  u: ["millisecond"],
};

/** What a user most likely meant when a format skips a unit (luxon's case-sensitive letters). */
const CASE_HINTS: Readonly<Partial<Record<Unit, string>>> = {
  month: "months are MM (mm is minutes)",
  minute: "minutes are mm (MM is months)",
  hour: "hours are HH",
  day: "days of the month are dd (DD is a macro)",
};

/**
 * Refuses a format whose units (year ... millisecond) skip one between its coarsest and finest,
 * or write one with two tokens: `yyyy-mm-dd` (minutes, no month) would read `2013-05-24` as
 * January and write it back as `2013-33-24`. Weekday names and `a` are outside the chain.
 * @throws RangeError naming the unit skipped or repeated, with the likely intended token.
 */
export function checkUnitChain(format: string, tokens: readonly string[]): void {
  const byUnit = new Map<Unit, string>();
  const weekDate = tokens.some((t) => t[0] === "W");
  for (const t of tokens) {
    let units = TOKEN_UNITS[t[0]];
    if (weekDate && (t[0] === "E" || t[0] === "c")) units = ["day"];
    for (const u of units ?? []) {
      const prev = byUnit.get(u);
      if (prev !== undefined) {
        const bothM = /^M+$/.test(prev) && /^M+$/.test(t);
        const hint = u === "month" && bothM ? CASE_HINTS.minute : u === "minute" ? CASE_HINTS.month : "check the tokens";
        throw new RangeError(`datetime format "${format}" writes the ${u} twice (${prev} and ${t}); ${hint}`);
      }
      byUnit.set(u, t);
    }
  }
  const present = UNITS.map((u) => byUnit.has(u));
  const lo = present.indexOf(true);
  const hi = present.lastIndexOf(true);
  for (let i = lo + 1; i < hi; i++) {
    if (!present[i]) {
      const finer = UNITS.slice(i + 1, hi + 1).find((u) => byUnit.has(u))!;
      throw new RangeError(
        `datetime format "${format}" writes the ${finer} (${byUnit.get(finer)}) but no ${UNITS[i]}, so no value can mean a ` +
          `date in it; ${CASE_HINTS[UNITS[i]] ?? CASE_HINTS[finer] ?? "check the tokens' case"}`,
      );
    }
  }
}
