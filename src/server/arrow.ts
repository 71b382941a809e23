/**
 * The binary form of a Generate response (docs/api.md "Arrow responses"): an Apache Arrow IPC
 * stream (arrow.apache.org/docs/format/Columnar.html#ipc-streaming-format, IANA media type
 * `application/vnd.apache.arrow.stream`) chosen by `Accept`. JSON stays the default; errors are
 * always the JSON envelope.
 *
 * Layout: one record batch; one integer column of codes per feature, in the model's feature order;
 * the envelope's other fields as schema metadata (`synthd.object`, `synthd.model_id`,
 * `synthd.num_rows`, `synthd.timestamp`). Columns are Int32 (written from the engine's views
 * without a copy per value), or with `codes=narrow` on the media range (what the SDK sends) the
 * narrowest of Uint8, Uint16 and Int32 that holds each column's largest code.
 */
import { makeVector, Schema, Table, tableToIPC } from "apache-arrow";
import type { RawGeneration } from "../engine/engine";

/** The media type of an Arrow IPC stream (IANA). */
export const ARROW_STREAM = "application/vnd.apache.arrow.stream";

/** One media range of an Accept header: type/subtype (lower case), its quality and other parameters. */
interface MediaRange {
  type: string;
  q: number;
  /** Parameters other than q, names lower case, values as written (quotes removed). */
  params: Record<string, string>;
}

function parseAccept(accept: string): MediaRange[] {
  const out: MediaRange[] = [];
  for (const part of accept.split(",")) {
    const [range, ...params] = part.split(";").map((s) => s.trim());
    if (!range) continue;
    let q = 1;
    const other: Record<string, string> = {};
    for (const p of params) {
      const m = /^q\s*=\s*([0-9.]+)$/i.exec(p);
      if (m) q = Math.min(1, Math.max(0, Number(m[1]) || 0));
      else {
        const kv = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*=\s*"?([^"]*)"?$/.exec(p);
        if (kv) other[kv[1].toLowerCase()] = kv[2];
      }
    }
    out.push({ type: range.toLowerCase(), q, params: other });
  }
  return out;
}

/** The quality an Accept header gives `type` (RFC 9110 §12.5.1: the most specific range that matches). */
function qualityOf(ranges: readonly MediaRange[], type: string): number {
  const [major] = type.split("/");
  const exact = ranges.find((r) => r.type === type);
  if (exact) return exact.q;
  const sub = ranges.find((r) => r.type === `${major}/*`);
  if (sub) return sub.q;
  const any = ranges.find((r) => r.type === "*/*");
  return any ? any.q : 0;
}

/**
 * Whether a Generate response should be Arrow: the Accept header names
 * `application/vnd.apache.arrow.stream` (exactly: a wildcard never selects it) with a quality
 * above 0 and at least that of `application/json`. No Accept header, or one without the Arrow
 * type: JSON.
 */
export function prefersArrow(accept: string | undefined): boolean {
  if (!accept) return false;
  const ranges = parseAccept(accept);
  const arrow = ranges.find((r) => r.type === ARROW_STREAM);
  if (!arrow || arrow.q <= 0) return false;
  return arrow.q >= qualityOf(ranges, "application/json");
}

/**
 * Whether the Arrow media range of an Accept header asks for narrow code columns (`codes=narrow`,
 * see the module comment). Only meaningful where {@link prefersArrow} holds.
 */
export function wantsNarrowCodes(accept: string | undefined): boolean {
  if (!accept) return false;
  const arrow = parseAccept(accept).find((r) => r.type === ARROW_STREAM);
  return arrow?.params.codes?.toLowerCase() === "narrow";
}

/**
 * `codes` in the narrowest of Uint8Array, Uint16Array and Int32Array that holds every value
 * (codes are >= 0; a negative value keeps Int32).
 */
export function narrowCodes(codes: Int32Array): Uint8Array | Uint16Array | Int32Array {
  let max = 0;
  let min = 0;
  for (let r = 0; r < codes.length; r++) {
    const c = codes[r];
    if (c > max) max = c;
    else if (c < min) min = c;
  }
  if (min < 0) return codes;
  if (max <= 0xff) return Uint8Array.from(codes);
  if (max <= 0xffff) return Uint16Array.from(codes);
  return codes;
}

export type { RawGeneration } from "../engine/engine";

/**
 * The Arrow IPC stream of a generation (layout in the module comment).
 * @param timestamp ISO 8601 UTC, the envelope's `metadata.timestamp`.
 * @param narrow    each column in the narrowest integer type that holds its codes ({@link narrowCodes}); else Int32.
 * @returns the stream's bytes (schema message, one record batch, end-of-stream marker).
 */
export function generationToArrow(gen: RawGeneration, timestamp: string, narrow = false): Uint8Array {
  const vectors = Object.fromEntries(gen.features.map((f) => [f, makeVector(narrow ? narrowCodes(gen.columns[f]) : gen.columns[f])]));
  const table = new Table(vectors);
  const metadata = new Map([
    ["synthd.object", "generation"],
    ["synthd.model_id", gen.model_id],
    ["synthd.num_rows", String(gen.num_rows)],
    ["synthd.timestamp", timestamp],
  ]);
  return tableToIPC(new Table(new Schema(table.schema.fields, metadata), table.batches), "stream");
}
