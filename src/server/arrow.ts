/**
 * The Generate response as an Apache Arrow IPC stream (docs/api.md "Arrow responses"), chosen by
 * `Accept`: one record batch, one code column per feature in model order, the envelope's other
 * fields as `synthd.*` schema metadata. Int32 columns, or with `codes=narrow` the narrowest of
 * Uint8, Uint16 and Int32 per column. JSON stays the default and errors are JSON.
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
 * Whether `Accept` names the Arrow type exactly (never by wildcard) with a quality above 0 and at
 * least that of `application/json`.
 */
export function prefersArrow(accept: string | undefined): boolean {
  if (!accept) return false;
  const ranges = parseAccept(accept);
  const arrow = ranges.find((r) => r.type === ARROW_STREAM);
  if (!arrow || arrow.q <= 0) return false;
  return arrow.q >= qualityOf(ranges, "application/json");
}

/** Whether the Arrow media range of `Accept` carries `codes=narrow`. */
export function wantsNarrowCodes(accept: string | undefined): boolean {
  if (!accept) return false;
  const arrow = parseAccept(accept).find((r) => r.type === ARROW_STREAM);
  return arrow?.params.codes?.toLowerCase() === "narrow";
}

/** `codes` in the narrowest of Uint8, Uint16 and Int32 arrays that holds them (negative: Int32). */
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
 * The Arrow IPC stream's bytes of a generation; `timestamp` ISO 8601 UTC; `narrow`: see
 * {@link narrowCodes}.
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
