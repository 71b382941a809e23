/**
 * Writes to an open file that finish before they return, so the caller may reuse the memory it
 * wrote from (a write stream would keep the chunks queued past the call).
 */
import type { FileHandle } from "node:fs/promises";

/**
 * Writes `chunks`, in order, at the file's position: one `writev` (at most 1,024 chunks per call,
 * Linux's IOV_MAX), then, if the system wrote less, the rest chunk by chunk.
 * @throws the file system's errors (ENOSPC, EIO, ...).
 */
export async function writeChunks(file: FileHandle, chunks: readonly Uint8Array[]): Promise<void> {
  for (let i = 0; i < chunks.length; i += 1024) {
    const part = chunks.slice(i, i + 1024);
    const want = part.reduce((n, c) => n + c.byteLength, 0);
    let done = (await file.writev(part)).bytesWritten;
    if (done === want) continue;
    for (const c of part) {
      if (done >= c.byteLength) {
        done -= c.byteLength;
        continue;
      }
      await writeAll(file, done > 0 ? c.subarray(done) : c);
      done = 0;
    }
  }
}

/** Writes all of `bytes` at the file's position (a write may take fewer). @throws fs errors. */
export async function writeAll(file: FileHandle, bytes: Uint8Array): Promise<void> {
  for (let at = 0; at < bytes.length; ) at += (await file.write(bytes, at, bytes.length - at)).bytesWritten;
}
