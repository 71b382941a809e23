/**
 * How the near-copy comparison reads the real table: one definition for the near-copy filter
 * (`./filter`, built by `Synthesizer.useNearCopyFilter`, the CLI's `fit` and `sample --real`) and
 * `evaluate`'s `near_copies` (`../evaluate/evaluate`), so a check judges what the filter drops.
 * Code books at the extraction defaults (rare threshold 2, at most 32 bins per numerical or
 * datetime column), whatever binning a fidelity comparison asks for; the caller's column kinds,
 * domain, delimiter and encoding; and, with a model's metadata, its identifier columns left out
 * (written fresh, so comparing them would hide a row that copies a person on every other column),
 * and the columns written from public reference data ({@link publicColumns}).
 */
import type { Metadata } from "../../contract";
import type { ColumnOverride, ExtractOptions } from "../metadata/metadata";

/**
 * Columns the decoder writes from public reference data given the row's other cells, left out
 * like identifiers (a synthetic row agreeing with a real one there shows nothing of a person, and
 * leaving them out only makes the comparison of the other columns stricter): the attribute column
 * of a `public_attribute` rule; and in a table with a US state column and two or more places of
 * the postal gazetteer (`../semantic/gazetteer-rows`: each row's places are one gazetteer row),
 * those place columns and the latitude/longitude pairs placed by them.
 */
export function publicColumns(metadata?: Pick<Metadata, "column_stats"> & Partial<Metadata>): string[] {
  const out = new Set<string>();
  for (const r of metadata?.rules ?? []) if (r.type === "public_attribute") out.add(r.columns[r.columns.length - 1]);
  const stats = Object.values(metadata?.column_stats ?? {});
  const vocab = (st: (typeof stats)[number]) => (st.type === "categorical" ? st.vocabulary : undefined);
  const hasState = stats.some((st) => vocab(st) === "us_state" || vocab(st) === "us_state_code");
  const places = hasState && stats.some((st) => vocab(st) === "us_zip" || vocab(st) === "us_city" || vocab(st) === "us_county") && metadata?.features ? gazetteerRows().placeColumns(metadata as Metadata) : [];
  if (places.length >= 2) {
    for (const c of places) out.add(c);
    for (const p of metadata?.coordinates ?? []) if ((p.places ?? []).some((q) => places.includes(q.column))) out.add(p.latitude).add(p.longitude);
  }
  return [...out];
}

/** `../semantic/gazetteer-rows`, loaded for a table with a US state and a gazetteer place column. */
function gazetteerRows(): typeof import("../semantic/gazetteer-rows") {
  return require("../semantic/gazetteer-rows");
}

/** The read options of the near-copy comparison (file header). */
export type NearCopyRead = Pick<ExtractOptions, "columns" | "delimiter" | "encoding" | "domain">;

/**
 * The near-copy comparison's read options (file header) from a caller's options, which may hold
 * binning options (`binCap`, `categoryCap`, `rareThreshold`: dropped), and a model's metadata,
 * whose identifier columns (`column_stats[c].type === "id"`) are declared identifiers unless a
 * domain is given (a domain's columns are all codes).
 */
export function nearCopyRead(opts: NearCopyRead, metadata?: Pick<Metadata, "column_stats"> & Partial<Metadata>): NearCopyRead {
  const read: NearCopyRead = {};
  if (opts.domain !== undefined) read.domain = opts.domain;
  if (opts.delimiter !== undefined) read.delimiter = opts.delimiter;
  if (opts.encoding !== undefined) read.encoding = opts.encoding;
  const ids = [...Object.entries(metadata?.column_stats ?? {}).filter(([, st]) => st.type === "id").map(([c]) => c), ...publicColumns(metadata)].map(
    (c): [string, ColumnOverride] => [c, { type: "id" }],
  );
  if (opts.domain === undefined && ids.length > 0) read.columns = { ...opts.columns, ...Object.fromEntries(ids) };
  else if (opts.columns !== undefined) read.columns = opts.columns;
  return read;
}
