/** What `Synthesizer.fit` chooses by the table's size when the caller does not. */
import type { MetadataSource, ModelConfigInput, ModelSize } from "../../contract";
import { sourceName, type TableSource } from "../io/csv";
import { DEFAULTS } from "../metadata/metadata";

/**
 * Fewest data rows {@link Synthesizer.fit} models (`FitOptions.minRows` lowers it). Below 20 rows
 * the marginals describe the rows one by one (every numerical value a point bin, every pair's joint
 * counts sent, a value seen twice keeps a code), so the samples would be copies. 20 is also where
 * identifiers are told from categories (`DEFAULTS.idMinRows`).
 */
export const MIN_ROWS = 20;

/**
 * The model size and epochs {@link Synthesizer.fit} sends when `config` leaves them out (the server
 * defaults: medium, 100), by data rows n: under 500 small, 15; under 1,000 small, 30; under 10,000
 * small, 60; else medium, 100. n rows pin the marginals to about 1/sqrt(n), which a smaller network
 * trained less reaches; under 500 rows, 30 epochs put synthetic rows closer to real ones than real
 * rows sit to each other (docs/api.md "Default model configuration"; `docs/decisions.md` "Small
 * tables' defaults").
 */
export function defaultModelConfig(rows: number): { model_size: ModelSize; max_epochs: number } {
  if (rows < 500) return { model_size: "small", max_epochs: 15 };
  if (rows < SMALL_TABLE_ROWS) return { model_size: "small", max_epochs: 30 };
  if (rows < 10_000) return { model_size: "small", max_epochs: 60 };
  return { model_size: "medium", max_epochs: 100 };
}

/** Tables with fewer data rows than this are small: fewer epochs by default. */
export const SMALL_TABLE_ROWS = 1_000;

/** k of rare category protection on small tables ({@link defaultRareThreshold}). */
export const SMALL_TABLE_RARE_THRESHOLD = 5;

/**
 * The rare threshold k {@link Synthesizer.fit} uses when the caller gives none: 5 under
 * {@link TINY_TABLE_ROWS} rows, else `DEFAULTS.rareThreshold` (2). At k = 2 small tables gave
 * near-copies of real rows; the cost is fidelity, values seen 2 to 4 times are pooled (docs/api.md
 * "Small tables: near-copies of real rows").
 */
export function defaultRareThreshold(rows: number): number {
  return rows < TINY_TABLE_ROWS ? SMALL_TABLE_RARE_THRESHOLD : DEFAULTS.rareThreshold;
}

/**
 * Tables with fewer data rows than this get k = {@link SMALL_TABLE_RARE_THRESHOLD} and fewer bins
 * by default. Not up to {@link SMALL_TABLE_ROWS}: on cars (406 rows) k = 5 pooled nearly all car
 * names and the bench's gap closed fell far below target (docs/api.md "Small tables").
 */
export const TINY_TABLE_ROWS = 160;

/**
 * The bins per numerical or datetime column {@link Synthesizer.fit} uses when the caller gives
 * none: floor(rows / 5), at least 2 and at most `DEFAULTS.binCap` (32), so a bin holds as many rows
 * as a released category needs: on a 45-row table 32 bins held one or two people each and a third
 * of the synthetic rows nearly copied a real one (docs/api.md).
 */
export function defaultBinCap(rows: number): number {
  return Math.min(DEFAULTS.binCap, Math.max(2, Math.floor(rows / SMALL_TABLE_RARE_THRESHOLD)));
}

/**
 * `metadata.source` of a fitted table: the file's base name (none in memory) and its data rows,
 * left out when private (an exact count would spend budget the marginals' noise does not cover).
 */
export function sourceOf(source: TableSource, rows: number, isPrivate: boolean): MetadataSource {
  const out: MetadataSource = {};
  const name = sourceName(source).slice(0, 255);
  if (name !== "") out.name = name;
  if (!isPrivate) out.rows = rows;
  return out;
}

/** `config` with `model_size` and `max_epochs` filled in where left out, and the fields filled. */
export function fitConfig(rows: number, config: ModelConfigInput = {}): { config: ModelConfigInput; chosen: ("model_size" | "max_epochs")[] } {
  const d = defaultModelConfig(rows);
  const chosen: ("model_size" | "max_epochs")[] = [];
  const out: ModelConfigInput = { ...config };
  if (out.model_size === undefined) {
    out.model_size = d.model_size;
    chosen.push("model_size");
  }
  if (out.max_epochs === undefined) {
    out.max_epochs = d.max_epochs;
    chosen.push("max_epochs");
  }
  return { config: out, chosen };
}
