/**
 * Template rules (`metadata.rules` of type `template`, docs/api.md "Row rules"): a column whose
 * every cell is the row's other cells written into a fixed text. Decoding writes it last, after
 * the other rules, places and points, so it reads the row's final cells.
 */
import type { Metadata, TemplateCell, TemplatePart, TemplateRule } from "../../contract";
import type { Cells } from "../generate/batch";
import { DatetimeFormat } from "../metadata/datetime";
import type { Fixed } from "./compiled-rule";
import { inLetterCase } from "../semantic/letter-case";

/** Compiled datetime formats by luxon format string (a template's `from` and `date`). */
const formats = new Map<string, DatetimeFormat | null>();

/**
 * The compiled luxon `format` (cached per format string, so a rule's cells and detection's
 * proposals compile each format once), or null when luxon cannot read and write it.
 */
export function formatOf(format: string): DatetimeFormat | null {
  let f = formats.get(format);
  if (f === undefined) {
    try {
      f = new DatetimeFormat(format);
    } catch {
      f = null;
    }
    formats.set(format, f);
  }
  return f;
}

/**
 * One cell written as `part` says (`decimals`, then `before`, `date`, `letter_case`): the cell as
 * it is when it is blank, when a number part's cell is no number, or when a date part's cell does
 * not read in `from` (or its year cannot be written in `date`).
 */
export function renderCell(part: TemplateCell, text: string): string {
  if (text === "") return text;
  if (part.decimals !== undefined) {
    const x = Number(text);
    if (Number.isFinite(x)) text = x.toFixed(part.decimals);
  }
  if (part.before !== undefined) {
    const at = text.indexOf(part.before);
    if (at >= 0) text = text.slice(0, at);
  }
  if (part.date !== undefined && part.from !== undefined) {
    const from = formatOf(part.from);
    const to = formatOf(part.date);
    const t = from?.parse(text);
    if (to && t) {
      try {
        text = to.write(t.seconds, t.offset);
      } catch {
        // A year the written format cannot hold: the cell as read.
      }
    }
  }
  return inLetterCase(text, part.letter_case);
}

/** True when `part` writes its cell otherwise than as it is or as a number (a date, a part, a case). */
export function transformed(part: TemplatePart): boolean {
  return typeof part !== "string" && (part.before !== undefined || part.date !== undefined || part.letter_case !== undefined);
}

/**
 * The text of one row: `parts` with each cell part replaced by `cell(column)` (1-based among the
 * rule's sources) written as {@link renderCell} says.
 */
export function renderTemplate(parts: readonly TemplatePart[], cell: (column: number) => string): string {
  let out = "";
  for (const p of parts) out += typeof p === "string" ? p : renderCell(p, cell(p.column));
  return out;
}

/** A number as a text writes it: sign, digits, and a decimal part. */
const WRITTEN_NUMBER = /-?\d+(?:\.\d+)?/y;

/**
 * True when `text` is the template's text for one row (cells from `cell`, 1-based among the
 * rule's sources, as {@link renderTemplate}): each literal and cell written exactly, except that a
 * cell part with no decimals or filter whose cell is a number with a decimal part also matches that
 * number written with more decimals that rounds to it (`POINT (-73.88182509318824 40.656513337)`
 * for the cells -73.88182509 and 40.65651334: the table rounded its coordinate columns, not its
 * point). Cells are matched left to right, the longer number first (`-73.9742811484852` is the
 * start of `-73.97428114848522`).
 */
export function templateMatches(parts: readonly TemplatePart[], text: string, cell: (column: number) => string): boolean {
  let at = 0;
  for (const p of parts) {
    const want = typeof p === "string" ? p : renderCell(p, cell(p.column));
    const more = typeof p === "string" || p.decimals !== undefined || transformed(p) ? 0 : moreDecimals(text, at, want);
    if (more > 0) at += more;
    else if (text.startsWith(want, at)) at += want.length;
    else return text === renderTemplate(parts, cell);
  }
  // The longer number taken first may have eaten the next part (`{a}5` of 1.5 is `1.55`).
  return at === text.length || text === renderTemplate(parts, cell);
}

/**
 * Length of the number written in `text` at `at` when it holds more decimals than `cell` (a number
 * with a decimal part) and rounds to it (within half a unit of `cell`'s last decimal); else 0.
 */
export function moreDecimals(text: string, at: number, cell: string): number {
  const d = cell.indexOf(".");
  if (d < 0 || !/^-?\d+\.\d+$/.test(cell)) return 0;
  WRITTEN_NUMBER.lastIndex = at;
  const m = WRITTEN_NUMBER.exec(text);
  if (m === null) return 0;
  const dot = m[0].indexOf(".");
  const places = cell.length - d - 1;
  if (dot < 0 || m[0].length - dot - 1 <= places || (m[0][0] === "-") !== (cell[0] === "-")) return 0;
  return Math.abs(Number(m[0]) - Number(cell)) <= 0.5 * 10 ** -places * (1 + 1e-9) ? m[0].length : 0;
}

/**
 * The template as one line, the form {@link parseTemplate} reads: literals as written (a brace
 * doubled), cells as `{column}` or `{column:.Nf}` (`{x}-{y}`, `M {mag:.1f} - {place}`), then the
 * cell's transformations as filters: `|before:SEP`, `|date:FORMAT` (luxon tokens), `|title`,
 * `|upper`, `|lower` (`EOW: {date|date:EEEE, MMMM d, yyyy}`, `{Metro|before:, |title}`).
 */
export function templateText(rule: Pick<TemplateRule, "columns" | "parts">): string {
  return rule.parts
    .map((p) => {
      if (typeof p === "string") return p.replace(/[{}]/g, "$&$&");
      let cell = rule.columns[p.column] + (p.decimals === undefined ? "" : `:.${p.decimals}f`);
      if (p.before !== undefined) cell += `|before:${p.before}`;
      if (p.date !== undefined) cell += `|date:${p.date}`;
      if (p.letter_case !== undefined) cell += `|${p.letter_case}`;
      return `{${cell}}`;
    })
    .join("");
}

/**
 * Row check of a template rule over rows in `idx` order (`idx[k]` is the index of
 * `rule.columns[k]`): true when the written cell is the template's text ({@link templateMatches}:
 * a number may carry more decimals that round to its cell), undefined when that cell is blank.
 */
export function templateCheck(rule: TemplateRule, idx: readonly number[]): (row: readonly string[]) => boolean | undefined {
  return (row) => (row[idx[0]] === "" ? undefined : templateMatches(rule.parts, row[idx[0]], (c) => row[idx[c]]));
}

/**
 * Writes every template rule of `metadata.rules` into decoded rows, a rule whose sources another
 * rule writes after that one; rules in a cycle, or naming an unknown column, are left out. A row
 * whose source cells are all blank gets a blank cell.
 * @returns undefined when the metadata has no template rule to keep.
 */
export function templateWriter(metadata: Metadata): { apply(cells: Cells, fixed?: Fixed): number } | undefined {
  const rules = (metadata.rules ?? []).filter((r): r is TemplateRule => r.type === "template");
  const compiled = rules
    .map((r) => ({ rule: r, idx: r.columns.map((c) => (metadata.features as readonly string[]).indexOf(c)) }))
    .filter((c) => c.idx.every((f) => f >= 0));
  const ordered: typeof compiled = [];
  const pending = [...compiled];
  while (pending.length > 0) {
    const ready = pending.findIndex((c) => !pending.some((o) => o !== c && c.idx.slice(1).includes(o.idx[0])));
    if (ready < 0) break;
    ordered.push(...pending.splice(ready, 1));
  }
  if (ordered.length === 0) return undefined;
  return {
    apply(cells, fixed) {
      let changed = 0;
      for (const { rule, idx } of ordered) {
        const sources = idx.slice(1).map((_, k) => k + 1);
        let r = 0;
        const cellOf = (c: number): string => cells.get(r, idx[c]);
        for (; r < cells.length; r++) {
          if (fixed?.(r, idx[0])) continue;
          // No source cell to write: the row has no such text (a point without its coordinates).
          const text = sources.every((c) => cellOf(c) === "") ? "" : renderTemplate(rule.parts, cellOf);
          if (cells.get(r, idx[0]) !== text) {
            cells.set(r, idx[0], text);
            changed++;
          }
        }
      }
      return changed;
    },
  };
}

/**
 * A template as `synthd fit` prints it and `--rules` declares it (`{x}-{y}`, `M {mag:.1f} - {place}`)
 * as a rule's columns and parts; `{{` and `}}` write a brace; a cell's filters as
 * {@link templateText} writes them (a date part's `from` is left to the caller, who knows the
 * source column's format).
 * @throws Error (message for the user) on an unclosed `{`, an empty or malformed cell, no cell,
 *   a cell naming `column` itself, or a date filter luxon cannot write.
 */
export function parseTemplate(column: string, template: string): { columns: string[]; parts: TemplatePart[] } {
  const columns = [column];
  const parts: TemplatePart[] = [];
  let literal = "";
  for (let i = 0; i < template.length; i++) {
    const ch = template[i];
    if ((ch === "{" || ch === "}") && template[i + 1] === ch) {
      literal += ch;
      i++;
      continue;
    }
    if (ch === "}") throw new Error(`a "}" at character ${i + 1} closes no cell (write "}}" for a brace)`);
    if (ch !== "{") {
      literal += ch;
      continue;
    }
    const end = template.indexOf("}", i);
    if (end < 0) throw new Error(`the "{" at character ${i + 1} is not closed`);
    const { head, filters } = cellFilters(template.slice(i + 1, end));
    const m = /^(.+?)(?::\.(\d{1,2})f)?$/.exec(head);
    if (!m) throw new Error(`the cell at character ${i + 1} names no column`);
    if (m[1] === column) throw new Error(`the template of "${column}" reads "${column}" itself`);
    if (literal !== "") parts.push(literal);
    literal = "";
    let k = columns.indexOf(m[1]);
    if (k < 0) k = columns.push(m[1]) - 1;
    parts.push({ column: k, ...(m[2] === undefined ? {} : { decimals: Number(m[2]) }), ...filters });
    i = end;
  }
  if (literal !== "") parts.push(literal);
  if (columns.length < 2) throw new Error("the template has no {column} cell");
  return { columns, parts };
}

/**
 * A cell's text split into its column (with `:.Nf`) and its filters (`|before:SEP`, `|date:FORMAT`,
 * `|title`, `|upper`, `|lower`); a text whose tail after a `|` is not all filters is a column name.
 * @throws Error for a date format luxon cannot write.
 */
function cellFilters(text: string): { head: string; filters: Omit<TemplateCell, "column" | "decimals"> } {
  for (let at = text.indexOf("|"); at > 0; at = text.indexOf("|", at + 1)) {
    const filters: Omit<TemplateCell, "column" | "decimals"> = {};
    const ok = text
      .slice(at + 1)
      .split("|")
      .every((f) => {
        if (f === "title" || f === "upper" || f === "lower") filters.letter_case = f;
        else if (f.startsWith("before:") && f.length > 7) filters.before = f.slice(7);
        else if (f.startsWith("date:") && f.length > 5) filters.date = f.slice(5);
        else return false;
        return true;
      });
    if (!ok) continue;
    if (filters.date !== undefined && formatOf(filters.date) === null) throw new Error(`the date format "${filters.date}" is not one luxon can write`);
    return { head: text.slice(0, at), filters };
  }
  return { head: text, filters: {} };
}
