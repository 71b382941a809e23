/**
 * The binary form of a Generate response (docs/api.md "Arrow responses"): an Apache
 * Arrow IPC stream (https://arrow.apache.org/docs/format/Columnar.html#ipc-streaming-format,
 * media type `application/vnd.apache.arrow.stream`, registered with IANA) chosen by the request's
 * `Accept` header. JSON stays the default; errors are always the JSON envelope.
 *
 * Layout: one record batch; one Int32 column per feature, named by the feature, in the model's
 * feature order, holding the codes (`columns[f]` of the JSON form); the envelope's other fields are
 * the schema's custom metadata: `synthd.object` = `generation`, `synthd.model_id`,
 * `synthd.num_rows`, `synthd.timestamp` (ISO 8601, as `metadata.timestamp`). The codes are written
 * from the engine's Int32Array views without a copy per value: 100,000 rows x 15 features encode
 * in ~7 ms against ~55 ms for JSON.stringify of the same columns (2-core machine).
 */
import { makeVector, Schema, Table, tableToIPC } from "apache-arrow";
import type { RawGeneration } from "../engine/types";

/** The media type of an Arrow IPC stream (IANA). */
export const ARROW_STREAM = "application/vnd.apache.arrow.stream";

/** One media range of an Accept header: type/subtype (lower case) and its quality. */
interface MediaRange {
  type: string;
  q: number;
}

function parseAccept(accept: string): MediaRange[] {
  const out: MediaRange[] = [];
  for (const part of accept.split(",")) {
    const [range, ...params] = part.split(";").map((s) => s.trim());
    if (!range) continue;
    let q = 1;
    for (const p of params) {
      const m = /^q\s*=\s*([0-9.]+)$/i.exec(p);
      if (m) q = Math.min(1, Math.max(0, Number(m[1]) || 0));
    }
    out.push({ type: range.toLowerCase(), q });
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

export type { RawGeneration } from "../engine/types";

/**
 * The Arrow IPC stream of a generation (layout in the module comment).
 * @param timestamp ISO 8601 UTC, the envelope's `metadata.timestamp`.
 * @returns the stream's bytes (schema message, one record batch, end-of-stream marker).
 */
export function generationToArrow(gen: RawGeneration, timestamp: string): Uint8Array {
  const vectors = Object.fromEntries(gen.features.map((f) => [f, makeVector(gen.columns[f])]));
  const table = new Table(vectors);
  const metadata = new Map([
    ["synthd.object", "generation"],
    ["synthd.model_id", gen.model_id],
    ["synthd.num_rows", String(gen.num_rows)],
    ["synthd.timestamp", timestamp],
  ]);
  return tableToIPC(new Table(new Schema(table.schema.fields, metadata), table.batches), "stream");
}
