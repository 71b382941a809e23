/**
 * What `Synthesizer.fit` chooses from the table's size when the caller does not: the model's size
 * and epochs ({@link fitConfig}), the rare-value threshold and bin cap of small tables, the
 * minimum rows, and the `source` the metadata records.
 */
import { basename } from "node:path";
import type { MetadataSource, ModelConfigInput, ModelSize } from "../../contract";
import type { TableSource } from "../io/csv";
import { DEFAULTS } from "../metadata/metadata";

/**
 * Fewest data rows {@link Synthesizer.fit} models (`FitOptions.minRows` lowers it). Below 20 rows a
 * table's marginals describe its rows one by one: every numerical column has fewer distinct values
 * than its 32 bins, so each value is a point bin sent as itself; every pair of columns fits the
 * 2-way budget, so all joint counts are sent; and a value seen twice keeps a code. A generator that
 * matches such marginals writes the real rows back (a 1-row table came back verbatim), which is a
 * copy, not synthetic data. 20 is also where the SDK starts to tell identifiers from categories
 * (`DEFAULTS.idMinRows`): below it a column of distinct names cannot be recognised as one.
 */
export const MIN_ROWS = 20;

/**
 * The model size and epochs {@link Synthesizer.fit} sends when the caller's `config` leaves them
 * out (the server's own defaults, medium and 100 epochs, are fixed by the contract and took 45 s for
 * 406 rows and 141 s for 3,376 on the development machine), by the table's data rows n:
 *
 * | rows n        | model_size | max_epochs |
 * |---------------|------------|------------|
 * | n < 500       | small      | 15         |
 * | n < 1,000     | small      | 30         |
 * | n < 10,000    | small      | 60         |
 * | n >= 10,000   | medium     | 100        |
 *
 * Why: a table of n rows pins its marginals down to about 1/sqrt(n); a smaller network trained for
 * fewer steps reaches that level on a small table (measured in docs/api.md, "Default model
 * configuration"), while the larger tables keep the contract's defaults. Under 500 rows 15 epochs
 * rather than 30 (`docs/decisions.md` "Small tables' defaults"): at 30 the synthetic rows of cars
 * (406 rows) sat closer to real rows than real rows sit to each other (DCR share 0.57-0.60 against a
 * split's 0.51), at 15 they do not (0.40-0.55 against 0.36-0.51), for a 2-way TVD of 0.455-0.459
 * against 0.445-0.449; on github (955 rows, no such problem) 15 epochs cost 0.01-0.04 of 2-way TVD,
 * so it keeps 30 (docs/api.md).
 * @param rows the table's data rows (>= 1).
 * @returns `{ model_size, max_epochs }` to send.
 */
export function defaultModelConfig(rows: number): { model_size: ModelSize; max_epochs: number } {
  if (rows < 500) return { model_size: "small", max_epochs: 15 };
  if (rows < SMALL_TABLE_ROWS) return { model_size: "small", max_epochs: 30 };
  if (rows < 10_000) return { model_size: "small", max_epochs: 60 };
  return { model_size: "medium", max_epochs: 100 };
}

/** Tables with fewer data rows than this are small: fewer epochs and a higher rare threshold k by default. */
export const SMALL_TABLE_ROWS = 1_000;

/** k of rare category protection on small tables ({@link defaultRareThreshold}). */
export const SMALL_TABLE_RARE_THRESHOLD = 5;

/**
 * The rare threshold k (`rareThreshold`) {@link Synthesizer.fit} uses when the caller gives none:
 * {@link SMALL_TABLE_RARE_THRESHOLD} (5) under {@link TINY_TABLE_ROWS} (160) rows, else
 * `DEFAULTS.rareThreshold` (2).
 *
 * Why (measured in docs/api.md "Small tables: near-copies of real rows"): at k = 2 a
 * value seen twice keeps a code, and on cars (406 rows) 1.7-2.7% of the synthetic rows equalled a
 * real row on all columns but one (0.8% of a real half's rows against the other half); at k = 5,
 * 0.2-0.7%. k = 3 and 4 still had 1.5-2.7%. On tables under 160 rows the bins must shrink too
 * ({@link defaultBinCap}). The cost is fidelity: values seen 2 to 4 times are pooled.
 * @param rows the table's data rows.
 */
export function defaultRareThreshold(rows: number): number {
  return rows < TINY_TABLE_ROWS ? SMALL_TABLE_RARE_THRESHOLD : DEFAULTS.rareThreshold;
}

/**
 * Tables with fewer data rows than this get k = {@link SMALL_TABLE_RARE_THRESHOLD} by default (and
 * fewer bins, {@link defaultBinCap}). Not up to {@link SMALL_TABLE_ROWS}: on cars (406 rows) k = 5
 * leaves 4 of its 305 car names with a code of their own, the pooled draw writes those 4 in 95% of
 * the rows, and `npm run bench -- tables` fell from 0.72-0.77 of the gap closed to 0.05-0.07
 * (seeds 0-2), far below its 0.5 target; cars' near-copies at k = 2 (1.7-2.7% against a split's
 * 0.8%) remain open: k = 5 removes them, at the cost above.
 */
export const TINY_TABLE_ROWS = 160;

/**
 * The bins per numerical or datetime column (`binCap`) {@link Synthesizer.fit} uses when the caller
 * gives none: floor(rows / {@link SMALL_TABLE_RARE_THRESHOLD}) bins (at least 2), so that a bin
 * holds on average as many rows as a released category needs, at most `DEFAULTS.binCap` (32,
 * reached at 160 rows).
 *
 * Why: the rare threshold protects categories only. On the 45-row presidents table (compared on the
 * columns besides the name) 32 quantile bins put one or two people in each bin of its four date
 * columns, and 33-42% of the synthetic rows equalled a real row on all columns but one at k = 5
 * (56-60% at k = 2), none of a real half's rows against the other half. At 9 bins (floor(45 / 5)) and
 * at 8: none, for a 2-way TVD of 0.69-0.71 against 0.45-0.52 (docs/api.md).
 * @param rows the table's data rows.
 */
export function defaultBinCap(rows: number): number {
  return Math.min(DEFAULTS.binCap, Math.max(2, Math.floor(rows / SMALL_TABLE_RARE_THRESHOLD)));
}

/**
 * `metadata.source` of a fitted table (shown by `synthd models ls`): the file's base name (none for
 * an in-memory table) and its data rows, left out when the metadata is private (an exact count
 * would spend privacy budget that the marginals' noise does not cover).
 */
export function sourceOf(source: TableSource, rows: number, isPrivate: boolean): MetadataSource {
  const out: MetadataSource = {};
  const name = typeof source === "string" ? basename(source).slice(0, 255) : "";
  if (name !== "") out.name = name;
  if (!isPrivate) out.rows = rows;
  return out;
}

/**
 * `config` with `model_size` and `max_epochs` filled in from {@link defaultModelConfig} where the
 * caller left them out (each independently).
 * @returns the config to send and the names of the fields chosen here.
 */
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
