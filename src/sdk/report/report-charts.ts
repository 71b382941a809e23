/**
 * The HTML quality report's charts (`./report`): Vega-Lite specifications (Satyanarayan et al.,
 * IEEE TVCG 2017) compiled by `vega-lite` and rendered headless by `vega` to SVG text, so the
 * HTML carries finished pictures and no script.
 * - Data travel inline; the view's loader refuses every load, so rendering touches no network or
 *   disk. Text uses the generic `sans-serif` family: no font is fetched.
 * - Real and synthetic keep the same {@link COLORS} in every chart (TRAIN and HOLDOUT their own);
 *   every chart has a title, axis titles and a legend or colour scale.
 * - Vega escapes user text; element ids are prefixed per chart so inline SVGs never share an id.
 * - `vega` and `vega-lite` are ES modules with top-level await: loaded once with `import()`
 *   through `new Function` (which TypeScript leaves alone in this CommonJS build).
 */
import { pathToFileURL } from "node:url";
import type { DcrHistogram, Distribution, PairMatrix } from "./report-data";

/** The colours of the report's charts (Tableau 10, the Vega default palette's first entries). */
export const COLORS = { real: "#4c78a8", synthetic: "#f58518", train: "#b279a2", holdout: "#54a24b" } as const;

/** A Vega-Lite specification (JSON), as `vega-lite`'s `compile` takes it. */
export type VegaLiteSpec = Record<string, unknown>;

/** The few entries of the `vega` module used here. */
interface VegaApi {
  parse(spec: unknown, config?: unknown): unknown;
  View: new (runtime: unknown, opts: Record<string, unknown>) => { toSVG(): Promise<string>; finalize(): void };
  loader(): Record<string, unknown>;
  Error: number;
}

/** The entry of the `vega-lite` module used here. */
interface VegaLiteApi {
  compile(spec: unknown, opts?: { logger?: unknown }): { spec: unknown };
}

const dynamicImport = new Function("url", "return import(url)") as (url: string) => Promise<unknown>;
let modules: Promise<{ vega: VegaApi; vl: VegaLiteApi }> | undefined;

/** Loads `vega` and `vega-lite` once (ES modules, see the file header). */
function loadVega(): Promise<{ vega: VegaApi; vl: VegaLiteApi }> {
  modules ??= (async () => {
    const load = (name: string): Promise<unknown> => dynamicImport(pathToFileURL(require.resolve(name)).href);
    const [vega, vl] = await Promise.all([load("vega"), load("vega-lite")]);
    return { vega: vega as VegaApi, vl: vl as VegaLiteApi };
  })();
  return modules;
}

/** A vega-util logger that keeps Vega-Lite's warnings (a spec mistake) instead of printing them. */
function collectingLogger(warnings: string[]): Record<string, unknown> {
  let level = 2;
  const logger: Record<string, unknown> = {
    level(l?: number) {
      if (l === undefined) return level;
      level = l;
      return logger;
    },
    error(...args: unknown[]) {
      warnings.push(args.map(String).join(" "));
      return logger;
    },
    warn(...args: unknown[]) {
      warnings.push(args.map(String).join(" "));
      return logger;
    },
    info: () => logger,
    debug: () => logger,
  };
  return logger;
}

/** Common look: fonts, sizes, no view border. */
const CONFIG = {
  font: "sans-serif",
  view: { stroke: null },
  axis: { labelFontSize: 11, titleFontSize: 12, labelColor: "#333", titleColor: "#222", gridColor: "#e6e6e6" },
  legend: { labelFontSize: 11, titleFontSize: 11, orient: "top" },
  title: { fontSize: 14, anchor: "start", color: "#222", subtitleColor: "#555", subtitleFontSize: 11 },
};

/**
 * Renders a Vega-Lite spec to SVG text.
 * @param idPrefix prefixes every element id (and its references) so inline SVGs never collide.
 * @param warnings receives Vega-Lite's compile warnings.
 * @throws Error when a spec does not compile or render.
 */
export async function renderSvg(spec: VegaLiteSpec, idPrefix: string, warnings: string[] = []): Promise<string> {
  const { vega, vl } = await loadVega();
  const compiled = vl.compile({ config: CONFIG, background: "white", ...spec }, { logger: collectingLogger(warnings) }).spec;
  const loader = vega.loader();
  const refuse = (): Promise<never> => Promise.reject(new Error("the report renders without network or file access"));
  Object.assign(loader, { load: refuse, sanitize: refuse, http: refuse, file: refuse });
  const view = new vega.View(vega.parse(compiled), { renderer: "none", loader, logLevel: vega.Error });
  try {
    const svg = await view.toSVG();
    return prefixIds(svg, idPrefix);
  } finally {
    view.finalize();
  }
}

/** Rewrites `id="x"`, `url(#x)` and `href="#x"` to carry `prefix`. */
function prefixIds(svg: string, prefix: string): string {
  return svg
    .replace(/\bid="([^"]+)"/g, (_, id: string) => `id="${prefix}-${id}"`)
    .replace(/url\(#([^)]+)\)/g, (_, id: string) => `url(#${prefix}-${id})`)
    .replace(/href="#([^"]+)"/g, (_, id: string) => `href="#${prefix}-${id}"`);
}

const sourceColor = (domain: string[], range: string[], title: string | null = null): Record<string, unknown> => ({
  field: "source",
  type: "nominal",
  sort: domain,
  scale: { domain, range },
  legend: { title, orient: "top", direction: "horizontal" },
});

/**
 * One column's real and synthetic distribution as grouped bars (vertical for a histogram,
 * horizontal for categories); heights are shares of all rows of each table.
 */
export function distributionSpec(column: string, d: Distribution): VegaLiteSpec {
  const values: { label: string; source: string; share: number; rows: number }[] = [];
  d.labels.forEach((label, k) => {
    values.push({ label, source: "real", share: d.rows.real ? d.real[k] / d.rows.real : 0, rows: d.real[k] });
    values.push({ label, source: "synthetic", share: d.rows.synthetic ? d.synthetic[k] / d.rows.synthetic : 0, rows: d.synthetic[k] });
  });
  const color = sourceColor(["real", "synthetic"], [COLORS.real, COLORS.synthetic]);
  const share = { field: "share", type: "quantitative", title: "share of rows", axis: { format: ".0%", tickCount: 5 } };
  const title = { text: column, subtitle: d.type === "histogram" ? "histogram over the same bins" : "most frequent values of the real column" };
  if (d.type === "histogram") {
    return {
      title,
      data: { values },
      width: { step: Math.max(7, Math.min(14, Math.floor(500 / Math.max(1, d.labels.length) / 2))) },
      height: 180,
      mark: { type: "bar" },
      encoding: {
        x: { field: "label", type: "ordinal", sort: d.labels, title: column, axis: { labelAngle: -45, labelLimit: 120, labelOverlap: "greedy" } },
        xOffset: { field: "source", sort: ["real", "synthetic"] },
        y: share,
        color,
      },
    };
  }
  return {
    title,
    data: { values },
    width: 360,
    height: { step: 9 },
    mark: { type: "bar" },
    encoding: {
      y: { field: "label", type: "nominal", sort: d.labels, title: null, axis: { labelLimit: 260 } },
      yOffset: { field: "source", sort: ["real", "synthetic"] },
      x: share,
      color,
    },
  };
}

/** Size of a heatmap cell for F columns. */
function cell(F: number): number {
  return Math.max(10, Math.min(28, Math.floor(480 / Math.max(1, F))));
}

/** Lower-triangle heatmap layer over the modelled columns (x: a pair's first column, y: second). */
function heatmap(m: PairMatrix, field: string, scale: Record<string, unknown>, legendTitle: string, showText: boolean): Record<string, unknown> {
  const axis = { labelLimit: 110, title: null };
  const x = { field: "a", type: "nominal", scale: { domain: m.columns.slice(0, -1) }, axis: { ...axis, labelAngle: -45 } };
  const y = { field: "b", type: "nominal", scale: { domain: m.columns.slice(1) }, axis };
  const layers: Record<string, unknown>[] = [
    {
      mark: { type: "rect" },
      encoding: {
        x,
        y,
        color: { field, type: "quantitative", scale, legend: { title: legendTitle, orient: "right", gradientLength: 120 } },
      },
    },
  ];
  if (showText) {
    layers.push({
      mark: { type: "text", fontSize: 8 },
      encoding: {
        x,
        y,
        text: { field, type: "quantitative", format: ".2f" },
        color: { condition: { test: `datum['${field}'] > ${field === "tvd" ? "datum.mid" : 0.6}`, value: "white" }, value: "#222" },
      },
    });
  }
  const F = Math.max(1, m.columns.length - 1);
  return { width: F * cell(m.columns.length), height: F * cell(m.columns.length), layer: layers };
}

/** One row per pair, for the heatmaps. */
function pairRows(m: PairMatrix, mid: number): Record<string, unknown>[] {
  return m.pairs.map(([a, b], k) => ({ a: m.columns[a], b: m.columns[b], tvd: m.tvd[k], vReal: m.vReal[k], vSynthetic: m.vSynthetic[k], mid }));
}

/** Heatmap of the 2-way TVD of every pair of modelled columns (0: joint distribution matched). */
export function tvdHeatmapSpec(m: PairMatrix): VegaLiteSpec {
  const max = Math.max(0.05, ...m.tvd);
  const showText = m.columns.length <= 16;
  return {
    title: { text: "2-way TVD per column pair", subtitle: "0 = the pair's joint distribution is reproduced exactly" },
    data: { values: pairRows(m, max / 2) },
    ...heatmap(m, "tvd", { scheme: "orangered", domain: [0, max], clamp: true }, "2-way TVD", showText),
  };
}

/** Cramér's V of every pair, real and synthetic side by side on one colour scale [0, 1]. */
export function associationSpec(m: PairMatrix): VegaLiteSpec {
  const showText = m.columns.length <= 16;
  const side = (field: string, title: string): Record<string, unknown> => ({
    title: { text: title, fontSize: 12 },
    ...heatmap(m, field, { scheme: "blues", domain: [0, 1] }, "Cramér's V", showText),
  });
  return {
    title: { text: "Association per column pair (Cramér's V on the binned columns)", subtitle: "0 = independent, 1 = one column determines the other" },
    data: { values: pairRows(m, 0.5) },
    hconcat: [side("vReal", "real"), side("vSynthetic", "synthetic")],
    resolve: { scale: { color: "shared" } },
  };
}

/**
 * DCR histograms: share of sampled synthetic rows per distance to the closest TRAIN and HOLDOUT
 * row, 0 up to one past the largest observed. @param columns F, the largest possible distance.
 */
export function dcrSpec(h: DcrHistogram, columns: number): VegaLiteSpec {
  const values: Record<string, unknown>[] = [];
  // distances 0 .. one past the largest observed (the empty tail up to F columns says nothing)
  let top = 0;
  for (let d = 0; d <= columns; d++) if (h.train[d] > 0 || h.holdout[d] > 0) top = d;
  for (let d = 0; d <= Math.min(columns, top + 1); d++) {
    values.push({ distance: d, source: "to TRAIN", share: h.sampled ? h.train[d] / h.sampled : 0 });
    values.push({ distance: d, source: "to HOLDOUT", share: h.sampled ? h.holdout[d] / h.sampled : 0 });
  }
  return {
    title: { text: "Distance to closest record", subtitle: `${h.sampled} sampled synthetic rows; distance = columns whose (binned) values differ` },
    data: { values },
    width: { step: 14 },
    height: 200,
    mark: { type: "bar" },
    encoding: {
      x: { field: "distance", type: "ordinal", title: "distance to the closest row (columns that differ)", axis: { labelAngle: 0 } },
      xOffset: { field: "source", sort: ["to TRAIN", "to HOLDOUT"] },
      y: { field: "share", type: "quantitative", title: "share of sampled synthetic rows", axis: { format: ".0%" } },
      color: sourceColor(["to TRAIN", "to HOLDOUT"], [COLORS.train, COLORS.holdout], "synthetic rows"),
    },
  };
}
