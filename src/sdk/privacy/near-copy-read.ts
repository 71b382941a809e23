/**
 * How the near-copy comparison reads the real table: one definition for the near-copy filter
 * (`./filter`, built by `Synthesizer.useNearCopyFilter`, the CLI's `fit` and `sample --real`) and
 * `evaluate`'s `near_copies` (`../evaluate/evaluate`), so a check judges what the filter drops.
 * Code books at the extraction defaults (rare threshold 2, at most 32 bins per numerical or
 * datetime column), whatever binning a fidelity comparison asks for; the caller's column kinds,
 * domain, delimiter and encoding; and, with a model's metadata, its identifier columns left out
 * (written fresh, so comparing them would hide a row that copies a person on every other column).
 */
import type { Metadata } from "../../contract";
import type { ColumnOverride, ExtractOptions } from "../metadata/metadata";

/** The read options of the near-copy comparison (file header). */
export type NearCopyRead = Pick<ExtractOptions, "columns" | "delimiter" | "encoding" | "domain">;

/**
 * The near-copy comparison's read options (file header) from a caller's options, which may hold
 * binning options (`binCap`, `categoryCap`, `rareThreshold`: dropped), and a model's metadata,
 * whose identifier columns (`column_stats[c].type === "id"`) are declared identifiers unless a
 * domain is given (a domain's columns are all codes).
 */
export function nearCopyRead(opts: NearCopyRead, metadata?: Pick<Metadata, "column_stats">): NearCopyRead {
  const read: NearCopyRead = {};
  if (opts.domain !== undefined) read.domain = opts.domain;
  if (opts.delimiter !== undefined) read.delimiter = opts.delimiter;
  if (opts.encoding !== undefined) read.encoding = opts.encoding;
  const ids = Object.entries(metadata?.column_stats ?? {})
    .filter(([, st]) => st.type === "id")
    .map(([c]): [string, ColumnOverride] => [c, { type: "id" }]);
  if (opts.domain === undefined && ids.length > 0) read.columns = { ...opts.columns, ...Object.fromEntries(ids) };
  else if (opts.columns !== undefined) read.columns = opts.columns;
  return read;
}
