/**
 * How the report writes what it shows: a number's text by its {@link MetricFormat}, HTML escaping,
 * JSON Pointers into `evaluate`'s JSON, and the `<span class="metric">` that carries a number with
 * the pointer to where it comes from (`data-json`, `data-value`, `data-format`).
 */

/** How a number of the report is written. */
export type MetricFormat = "accuracy" | "percent" | "fixed" | "count";

/**
 * The text of a report number: `accuracy` 1 − x as a percentage with one decimal (x a TVD),
 * `percent` x as a percentage with two decimals, `fixed` four decimals, `count` an integer with
 * thousands separators.
 */
export function formatMetric(x: number, format: MetricFormat): string {
  switch (format) {
    case "accuracy":
      return `${(100 * (1 - x)).toFixed(1)}%`;
    case "percent":
      return `${(100 * x).toFixed(2)}%`;
    case "fixed":
      return x.toFixed(4);
    case "count":
      return x.toLocaleString("en-US");
  }
}

/** HTML-escapes text for element content and double- or single-quoted attribute values. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

const esc = escapeHtml;

/** JSON Pointer (RFC 6901) of a path: `["checks", 3, "in_range"]` -> `/checks/3/in_range`. */
export function jsonPointer(path: readonly (string | number)[]): string {
  return path.map((p) => "/" + String(p).replace(/~/g, "~0").replace(/\//g, "~1")).join("");
}

/**
 * A number carrying where it comes from: `<span class="metric" data-json="/tvd/2"
 * data-value="0.0123..." data-format="accuracy">98.8%</span>`; `data-json` is a JSON Pointer into
 * `evaluate`'s JSON (`data-json-holdout`: into `evaluate(REAL, HOLDOUT)`'s).
 */
export function metric(value: number, format: MetricFormat, path: string, attr: "data-json" | "data-json-holdout" = "data-json"): string {
  const pointer = jsonPointer(path.split("."));
  return `<span class="metric" ${attr}="${esc(pointer)}" data-value="${String(value)}" data-format="${format}">${esc(formatMetric(value, format))}</span>`;
}

/** {@link metric} at a path given as its parts (for parts that may contain dots: column names). */
export function metricAt(value: number, format: MetricFormat, path: (string | number)[]): string {
  return `<span class="metric" data-json="${esc(jsonPointer(path))}" data-value="${String(value)}" data-format="${format}">${esc(formatMetric(value, format))}</span>`;
}
