/**
 * Template rules (`metadata.rules` of type `template`, docs/api.md "Row rules"): a column whose
 * every cell is the row's other cells written into a fixed text. Decoding writes it last, after
 * the other rules, places and points, so it reads the row's final cells.
 */
import type { Metadata, TemplatePart, TemplateRule } from "../../contract";
import type { Cells } from "../generate/batch";
import type { Fixed } from "./compiled-rule";

/**
 * The text of one row: `parts` with each cell part replaced by `cell(column)` (1-based among the
 * rule's sources), a number part by `toFixed(decimals)` of the cell's number (the cell as it is
 * when it is no number).
 */
export function renderTemplate(parts: readonly TemplatePart[], cell: (column: number) => string): string {
  let out = "";
  for (const p of parts) {
    if (typeof p === "string") {
      out += p;
      continue;
    }
    const text = cell(p.column);
    if (p.decimals === undefined || text === "") out += text;
    else {
      const x = Number(text);
      out += Number.isFinite(x) ? x.toFixed(p.decimals) : text;
    }
  }
  return out;
}

/**
 * The template as one line, the form {@link parseTemplate} reads: literals as written (a brace
 * doubled), cells as `{column}` or `{column:.Nf}` (`{x}-{y}`, `M {mag:.1f} - {place}`).
 */
export function templateText(rule: Pick<TemplateRule, "columns" | "parts">): string {
  return rule.parts
    .map((p) => (typeof p === "string" ? p.replace(/[{}]/g, "$&$&") : `{${rule.columns[p.column]}${p.decimals === undefined ? "" : `:.${p.decimals}f`}}`))
    .join("");
}

/**
 * Row check of a template rule over rows in `idx` order (`idx[k]` is the index of
 * `rule.columns[k]`): true when the written cell is the template's text, undefined when that
 * cell is blank.
 */
export function templateCheck(rule: TemplateRule, idx: readonly number[]): (row: readonly string[]) => boolean | undefined {
  return (row) => (row[idx[0]] === "" ? undefined : row[idx[0]] === renderTemplate(rule.parts, (c) => row[idx[c]]));
}

/**
 * Writes every template rule of `metadata.rules` into decoded rows, a rule whose sources another
 * rule writes after that one; rules in a cycle, or naming an unknown column, are left out.
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
        let r = 0;
        const cellOf = (c: number): string => cells.get(r, idx[c]);
        for (; r < cells.length; r++) {
          if (fixed?.(r, idx[0])) continue;
          const text = renderTemplate(rule.parts, cellOf);
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
 * as a rule's columns and parts; `{{` and `}}` write a brace.
 * @throws Error (message for the user) on an unclosed `{`, an empty or malformed cell, no cell,
 *   or a cell naming `column` itself.
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
    const m = /^(.+?)(?::\.(\d{1,2})f)?$/.exec(template.slice(i + 1, end));
    if (!m) throw new Error(`the cell at character ${i + 1} names no column`);
    if (m[1] === column) throw new Error(`the template of "${column}" reads "${column}" itself`);
    if (literal !== "") parts.push(literal);
    literal = "";
    let k = columns.indexOf(m[1]);
    if (k < 0) k = columns.push(m[1]) - 1;
    parts.push(m[2] === undefined ? { column: k } : { column: k, decimals: Number(m[2]) });
    i = end;
  }
  if (literal !== "") parts.push(literal);
  if (columns.length < 2) throw new Error("the template has no {column} cell");
  return { columns, parts };
}
