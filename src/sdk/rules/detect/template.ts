/**
 * Template detection (docs/api.md "Row rules"): a text column whose cells are the row's other
 * cells written into one fixed text, found from values only.
 */
import type { TemplateCell, TemplatePart, TemplateRule } from "../../../contract";
import { inLetterCase } from "../../semantic/letter-case";
import { formatOf, moreDecimals, renderCell, templateMatches, transformed } from "../template";
import type { Col } from "./view";

/** Rows a template is proposed from (spread over the table). */
const PROPOSAL_ROWS = 48;
/** Templates proposed by the most rows that are verified on every row. */
const CANDIDATES = 3;
/** Share of the written column's non-blank rows the template must give exactly. */
const SHARE = 0.95;
/**
 * The share for a template with a cell re-cased or a date re-formatted: a display column written
 * by hand departs from the form more often (`Washington, D.C.` for the metro
 * `washington-arlington-alexandria, dc-va-m`), and no coincidence writes another cell's letters
 * or date this often. A part before a separator as it is keeps {@link SHARE} (a provider's state
 * beside its referral region's: a dependency with exceptions, no display form).
 */
const SHARE_TRANSFORMED = 0.9;
/** Separators a cell's leading part is read before (`baton rouge` of `baton rouge, la`). */
const SEPARATORS = [", ", ",", " - ", " (", " / ", "; "];
const LETTER_CASES = ["title", "upper", "lower"] as const;
const WEEKDAYS_LONG = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const MONTHS_LONG = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
/** Non-blank rows of the written column, at least. */
const MIN_ROWS = 30;
/** Longest cell a template is proposed from (UTF-16 code units). */
const MAX_LENGTH = 512;
/** Most decimals a number is tried with (`M 2.0` from a magnitude of 2, `(40.79408, -73.95613)`). */
const MAX_DECIMALS = 8;
/** Source columns of one template, at most (the contract's limit). */
const MAX_SOURCES = 16;

/** A source whose one value fills this share of the rows is never a cell (a flag that is 0 in `v1.0`). */
const NEAR_CONSTANT = 0.95;

const NUMBER = /^-?\d+(\.\d+)?$/;

/**
 * One cell piece of a proposal: source column (index in `cols`), decimals (-1: as written) and
 * the cell's transformation ({@link TemplateCell}'s `before`, `date`, `from`, `letter_case`).
 */
interface Slot extends Omit<TemplateCell, "column" | "decimals"> {
  col: number;
  decimals: number;
}

/**
 * The template rules of `cols` over the first `n` rows. A column of text (categorical or
 * identifier, no domain) outside `taken` is a template's when, proposed on 48 spread rows (each
 * row's cell split into the best cover by other cells not near-constant, each cell as written,
 * a number with 0-8 decimals or with more decimals that round to it, its part before a separator, re-cased, or a datetime written in
 * another format: {@link datetimeIn}), the one of the three most proposed templates that gives
 * the cell exactly in the most rows gives it in >= 95% of its >= 30 non-blank rows (>= 90% with
 * a cell re-cased or a date re-formatted). A template of one cell as it is and no literal (a
 * copy) is left to the other rules; templates never form a cycle.
 *
 * Cost: O(48 · L · S) for a column of cells up to L long and S sources, then O(n) per candidate.
 * @param taken columns other rules hold (never written by a template).
 */
export function detectTemplates(cols: readonly Col[], n: number, taken: ReadonlySet<string>): TemplateRule[] {
  const out: TemplateRule[] = [];
  if (n < MIN_ROWS) return out;
  const cell = (c: Col, r: number): string => c.scan.values[c.scan.ids[r]];
  let sources: boolean[] | undefined;
  for (let t = 0; t < cols.length; t++) {
    const target = cols[t];
    if ((target.codec.kind !== "id" && target.codec.kind !== "categorical") || target.codec.fromDomain || taken.has(target.name)) continue;
    if (target.nonBlank < 2 || n - target.scan.missing < MIN_ROWS) continue;
    sources ??= cols.map((c) => !nearConstant(c, n));
    const votes = new Map<string, { slots: Slot[]; literals: string[]; count: number }>();
    for (let i = 0; i < PROPOSAL_ROWS; i++) {
      const r = Math.floor((i * n) / PROPOSAL_ROWS);
      const text = cell(target, r);
      if (text === "" || text.length > MAX_LENGTH) continue;
      const p = propose(text, cols, t, r, cell, sources);
      if (p === undefined) continue;
      // A number written as it is, or with the decimals it has here (`1.6` and `2.0` of `{mag:.1f}`);
      // one written with more decimals than its cell is the cell as it is.
      const fixed = { literals: p.literals, slots: p.slots.map((s, j) => ({ ...s, decimals: s.decimals >= 0 || p.longer[j] || !NUMBER.test(p.texts[j]) ? s.decimals : (p.texts[j].split(".")[1]?.length ?? 0) })) };
      for (const q of [{ literals: p.literals, slots: p.slots }, fixed]) {
        const key = JSON.stringify(q);
        const v = votes.get(key);
        if (v) v.count++;
        else votes.set(key, { ...q, count: 1 });
        if (JSON.stringify(fixed) === key) break;
      }
    }
    // A cell part that writes one text on every proposal row is that text (`POINT` before ` (` of another point).
    const proposed = Array.from({ length: PROPOSAL_ROWS }, (_, i) => Math.floor((i * n) / PROPOSAL_ROWS));
    const merged = new Map<string, { slots: Slot[]; literals: string[]; count: number }>();
    for (const v of votes.values()) {
      const slots: Slot[] = [];
      const literals = [v.literals[0]];
      v.slots.forEach((slot, j) => {
        const { col, decimals, ...how } = slot;
        const part: TemplateCell = { column: 1, ...(decimals < 0 ? {} : { decimals }), ...how };
        const texts = new Set(proposed.map((r) => renderCell(part, cell(cols[col], r))));
        if (texts.size === 1) literals[literals.length - 1] += [...texts][0] + v.literals[j + 1];
        else {
          slots.push(slot);
          literals.push(v.literals[j + 1]);
        }
      });
      const key = JSON.stringify({ literals, slots });
      const m = merged.get(key);
      if (m) m.count += v.count;
      else merged.set(key, { slots, literals, count: v.count });
    }
    const copy = (v: { slots: Slot[]; literals: string[] }): boolean => v.slots.length === 1 && v.literals.every((l) => l === "") && !transformed({ column: 1, ...v.slots[0] });
    const ranked = [...merged.values()].filter((v) => v.slots.length > 0 && !copy(v)).sort((a, b) => b.count - a.count);
    // The passing candidate that gives the most rows (ties: the most proposed).
    let best: TemplateRule | undefined;
    for (const cand of ranked.slice(0, CANDIDATES)) {
      const rule = asRule(target.name, cand, cols);
      if (rule === undefined || cyclic(rule, out)) continue;
      const idx = rule.columns.map((name) => cols.findIndex((c) => c.name === name));
      let rows = 0;
      let kept = 0;
      // A cell part that writes one text in every row is a literal (`POINT` before ` (` of another point).
      const cellParts = rule.parts.filter((p): p is TemplateCell => typeof p !== "string");
      const first = new Map<TemplateCell, string>();
      const varies = new Set<TemplateCell>();
      for (let r = 0; r < n; r++) {
        const text = cell(target, r);
        if (text === "") continue;
        rows++;
        if (templateMatches(rule.parts, text, (c) => cell(cols[idx[c]], r))) kept++;
        for (const p of cellParts) {
          if (varies.has(p)) continue;
          const written = renderCell(p, cell(cols[idx[p.column]], r));
          if (!first.has(p)) first.set(p, written);
          else if (first.get(p) !== written) varies.add(p);
        }
      }
      if (varies.size < cellParts.length) continue;
      if (rows >= MIN_ROWS && kept >= (rule.parts.some(displayed) ? SHARE_TRANSFORMED : SHARE) * rows && kept / rows > (best?.share ?? 0)) {
        best = { ...rule, share: kept / rows };
        if (kept === rows) break;
      }
    }
    if (best !== undefined) out.push(best);
  }
  return out;
}

/**
 * The best cover of `text` by the row's other cells (dynamic programming over positions: most
 * characters covered past the first of each cell, so a lone digit is a literal, then fewest
 * cells), as alternating literals and slots: `literals.length === slots.length + 1`, `texts` the
 * slots' matched texts, `longer` true where a number is written with more decimals than its cell
 * and rounds to it. Undefined when no cell occurs in the text.
 */
function propose(
  text: string,
  cols: readonly Col[],
  target: number,
  r: number,
  cell: (c: Col, r: number) => string,
  sources: readonly boolean[],
): { slots: Slot[]; literals: string[]; texts: string[]; longer: boolean[] } | undefined {
  const L = text.length;
  // Every occurrence of every source's forms: starts[i] lists (slot, length, written with more decimals).
  const starts: { slot: Slot; len: number; longer?: boolean }[][] = Array.from({ length: L }, () => []);
  const numbers = [...text.matchAll(/-?\d+\.\d+/g)].map((m) => m.index);
  let any = false;
  for (let c = 0; c < cols.length; c++) {
    if (c === target || !sources[c]) continue;
    const v = cell(cols[c], r);
    if (v === "") continue;
    const forms: [string, Slot][] = [[v, { col: c, decimals: -1 }]];
    if (NUMBER.test(v)) {
      const x = Number(v);
      for (let d = 0; d <= MAX_DECIMALS; d++) {
        const s = x.toFixed(d);
        if (s !== v && !forms.some((f) => f[0] === s)) forms.push([s, { col: c, decimals: d }]);
      }
      for (const at of numbers) {
        const len = moreDecimals(text, at, v);
        if (len > 0) {
          starts[at].push({ slot: { col: c, decimals: -1 }, len, longer: true });
          any = true;
        }
      }
    } else forms.push(...recased(v, c));
    for (const [s, slot] of forms) {
      for (let at = text.indexOf(s); at >= 0; at = text.indexOf(s, at + 1)) {
        starts[at].push({ slot, len: s.length });
        any = true;
      }
    }
    const col = cols[c];
    const from = col.codec.kind === "datetime" ? col.codec.datetime : undefined;
    const seconds = col.num?.[col.scan.ids[r]];
    if (from !== undefined && !from.hasOffset && seconds !== undefined && Number.isFinite(seconds)) {
      const found = datetimeIn(text, seconds);
      if (found !== undefined && found.format !== from.format) {
        starts[found.at].push({ slot: { col: c, decimals: -1, date: found.format, from: from.format }, len: found.len });
        any = true;
      }
    }
  }
  if (!any) return undefined;
  const cover = new Int32Array(L + 1).fill(-1);
  const cells = new Int32Array(L + 1);
  const from: ({ at: number; slot?: Slot; longer?: boolean } | undefined)[] = new Array(L + 1);
  cover[0] = 0;
  const better = (j: number, cv: number, cl: number): boolean => cv > cover[j] || (cv === cover[j] && cl < cells[j]);
  for (let i = 0; i < L; i++) {
    if (cover[i] < 0) continue;
    if (better(i + 1, cover[i], cells[i])) {
      cover[i + 1] = cover[i];
      cells[i + 1] = cells[i];
      from[i + 1] = { at: i };
    }
    for (const m of starts[i]) {
      const j = i + m.len;
      if (better(j, cover[i] + m.len - 1, cells[i] + 1)) {
        cover[j] = cover[i] + m.len - 1;
        cells[j] = cells[i] + 1;
        from[j] = { at: i, slot: m.slot, longer: m.longer };
      }
    }
  }
  const slots: Slot[] = [];
  const texts: string[] = [];
  const literals: string[] = [""];
  const longer: boolean[] = [];
  const steps: { at: number; to: number; slot?: Slot; longer?: boolean }[] = [];
  for (let j = L; j > 0; j = from[j]!.at) steps.push({ ...from[j]!, to: j });
  for (const s of steps.reverse()) {
    if (s.slot) {
      slots.push(s.slot);
      texts.push(text.slice(s.at, s.to));
      longer.push(s.longer === true);
      literals.push("");
    } else literals[literals.length - 1] += text.slice(s.at, s.to);
  }
  return { slots, literals, texts, longer };
}

/** True when one value (blank included) fills >= 95% of the rows: a cell that is there by coincidence. */
function nearConstant(c: Col, n: number): boolean {
  const counts = new Int32Array(c.nv);
  for (let r = 0; r < n; r++) counts[c.scan.ids[r]]++;
  let top = 0;
  for (let i = 0; i < counts.length; i++) top = Math.max(top, counts[i]);
  return top >= NEAR_CONSTANT * n;
}

/** A proposal as a rule's columns and parts; undefined past the contract's source limit. */
function asRule(target: string, p: { slots: Slot[]; literals: string[] }, cols: readonly Col[]): TemplateRule | undefined {
  const columns = [target];
  const parts: TemplatePart[] = [];
  p.slots.forEach((s, i) => {
    if (p.literals[i] !== "") parts.push(p.literals[i]);
    const name = cols[s.col].name;
    let k = columns.indexOf(name);
    if (k < 0) k = columns.push(name) - 1;
    const { col: _col, decimals, ...how } = s;
    parts.push({ column: k, ...(decimals < 0 ? {} : { decimals }), ...how });
  });
  const last = p.literals[p.literals.length - 1];
  if (last !== "") parts.push(last);
  return columns.length - 1 > MAX_SOURCES ? undefined : { type: "template", columns, parts, share: 1 };
}

/** True when `rule` reads a column whose template (in `rules`) reads `rule`'s column, at any depth. */
function cyclic(rule: TemplateRule, rules: readonly TemplateRule[]): boolean {
  const writes = new Map(rules.map((r) => [r.columns[0], r.columns.slice(1)]));
  const seen = new Set<string>();
  const stack = rule.columns.slice(1);
  while (stack.length > 0) {
    const c = stack.pop()!;
    if (c === rule.columns[0]) return true;
    if (seen.has(c)) continue;
    seen.add(c);
    stack.push(...(writes.get(c) ?? []));
  }
  return false;
}

/** True when `part` writes its cell in another letter case or a date in another format. */
function displayed(part: TemplatePart): boolean {
  return typeof part !== "string" && (part.letter_case !== undefined || part.date !== undefined);
}

/**
 * A text cell's other forms: its part before each separator it holds, and that part or the whole
 * re-cased (title, upper, lower) where that changes it, each with its slot in column `c`.
 */
function recased(v: string, c: number): [string, Slot][] {
  const out: [string, Slot][] = [];
  const seen = new Set([v]);
  const add = (s: string, slot: Slot): void => {
    if (seen.has(s) || !/\p{L}.*\p{L}/u.test(s)) return;
    seen.add(s);
    out.push([s, slot]);
  };
  const pieces: [string, string | undefined][] = [[v, undefined]];
  for (const sep of SEPARATORS) {
    const at = v.indexOf(sep);
    if (at > 0) pieces.push([v.slice(0, at), sep]);
  }
  for (const [p, before] of pieces) {
    const base: Slot = before === undefined ? { col: c, decimals: -1 } : { col: c, decimals: -1, before };
    if (before !== undefined) add(p, base);
    for (const letter_case of LETTER_CASES) {
      const s = inLetterCase(p, letter_case);
      if (s !== p) add(s, { ...base, letter_case });
    }
  }
  return out;
}

/**
 * Where `text` writes the instant `seconds` (UTC wall clock) as a date, and in which luxon format:
 * the span from the first to the last run of letters or digits that is one of the instant's
 * fields (`yyyy`, `yy`, `M`/`MM`, `d`/`dd`, `MMMM`, `MMM`, `EEEE`, `EEE`, `H`/`HH`, `mm`, `ss`;
 * an ambiguous number the first unused of year, month, day, hour, minute, second), the text
 * between them quoted. Undefined without a year and a month, or when luxon cannot write
 * the format.
 */
export function datetimeIn(text: string, seconds: number): { at: number; len: number; format: string } | undefined {
  const d = new Date(Math.round(seconds * 1000));
  const year = d.getUTCFullYear();
  const fields = { month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: d.getUTCHours(), minute: d.getUTCMinutes(), second: d.getUTCSeconds() };
  const weekday = WEEKDAYS_LONG[d.getUTCDay()];
  const month = MONTHS_LONG[fields.month - 1];
  // Units written so far: year, month, day, hour, minute, second, weekday.
  const used = new Set<string>();
  const pieces: { at: number; end: number; token: string }[] = [];
  const units: readonly [string, number, string, string][] = [
    ["month", fields.month, "M", "MM"],
    ["day", fields.day, "d", "dd"],
    ["hour", fields.hour, "H", "HH"],
    ["minute", fields.minute, "", "mm"],
    ["second", fields.second, "", "ss"],
  ];
  for (const m of text.matchAll(/\p{L}+|\d+/gu)) {
    const run = m[0];
    let token: [string, string] | undefined;
    if (/^\d/.test(run)) {
      const x = Number(run);
      if (run.length === 4 && x === year && !used.has("year")) token = ["year", "yyyy"];
      else if (run.length <= 2) {
        // A zero-padded run is the two-letter token; 13 is written the same by d and dd, so d.
        const written = ([, , one, two]: readonly [string, number, string, string]): string => (run.length === 2 && (run[0] === "0" || one === "") ? two : one);
        const u = units.find((unit) => !used.has(unit[0]) && unit[1] === x && written(unit) !== "");
        if (u !== undefined) token = [u[0], written(u)];
        else if (run.length === 2 && x === year % 100 && !used.has("year")) token = ["year", "yy"];
      }
    } else if (run === month && !used.has("month")) token = ["month", "MMMM"];
    else if (run === month.slice(0, 3) && !used.has("month")) token = ["month", "MMM"];
    else if (run === weekday && !used.has("weekday")) token = ["weekday", "EEEE"];
    else if (run === weekday.slice(0, 3) && !used.has("weekday")) token = ["weekday", "EEE"];
    if (token === undefined) continue;
    used.add(token[0]);
    pieces.push({ at: m.index, end: m.index + run.length, token: token[1] });
  }
  if (!used.has("year") || !used.has("month")) return undefined;
  let format = "";
  for (let i = 0; i < pieces.length; i++) {
    if (i > 0) {
      const between = text.slice(pieces[i - 1].end, pieces[i].at);
      format += /[A-Za-z']/.test(between) ? `'${between.replace(/'/g, "''")}'` : between;
    }
    format += pieces[i].token;
  }
  if (formatOf(format) === null) return undefined;
  const at = pieces[0].at;
  return { at, len: pieces[pieces.length - 1].end - at, format };
}
