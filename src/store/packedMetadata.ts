/**
 * A model's metadata already encoded as msgpack, so that storing it costs the writing thread a
 * copy of bytes instead of walking a large object graph. Create Model encodes large metadata on
 * the body worker thread (`src/server/bodyWorker.ts`) and hands the bytes over as a transferable
 * ArrayBuffer; both stores write them as they are and decode them with their usual decoder.
 */
import { Packr } from "msgpackr";
import type { Metadata } from "../contract";

/**
 * Plain msgpack (no records, no extensions; 32-bit map sizes where needed): PostgreSQL's decoder
 * and the LMDB store's metadata database (opened with `mapsAsObjects`) read its maps back as
 * plain objects. Records (lmdb-js's default) would cost seconds on objects with a million keys.
 */
const packr = new Packr({ useRecords: false, variableMapSize: true });

/** Metadata encoded by {@link packMetadata}; a store writes `bytes` unchanged. */
export class PackedMetadata {
  /** @param bytes msgpack of a {@link Metadata}, as {@link packMetadata} returns it. */
  constructor(readonly bytes: Uint8Array) {}
}

/** The msgpack of `metadata` in a buffer of its own (transferable to another thread). */
export function packMetadata(metadata: Metadata): Uint8Array {
  const view = packr.pack(metadata);
  const out = new Uint8Array(view.byteLength);
  out.set(view);
  return out;
}
