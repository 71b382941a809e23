/**
 * Metadata already encoded as msgpack (on the body worker, `src/server/bodyWorker.ts`, handed
 * over as a transferable), so storing it is a byte copy instead of a walk of a large object graph.
 */
import { Packr } from "msgpackr";
import type { Metadata } from "../contract";

/**
 * Plain msgpack (no records or extensions) that both stores' decoders read as plain objects;
 * lmdb-js's default records would cost seconds on objects with a million keys.
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
