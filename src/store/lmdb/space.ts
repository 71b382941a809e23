/**
 * Disk space for the embedded store, owned before LMDB needs it: LMDB extends `data.mdb` by
 * writing past its end, and after such a write fails on a full disk lmdb-js 3.x can corrupt its
 * heap (docs/operations.md "A full disk"). So the data file stays allocated (zeros) ahead of LMDB;
 * every write transaction declares, under LMDB's writer lock, an upper bound of the bytes it can
 * add ({@link StoreSpace.admit}) and runs only when the file has that room beyond LMDB's last page
 * and earlier admissions, growing it first; if it cannot grow the transaction is refused with
 * {@link StoreWriteError} before writing (503, training pauses). A new `lock.mdb` (memory-mapped;
 * SIGBUS on a full tmpfs) is written out in full first. Not guaranteed on copy-on-write file
 * systems (btrfs, ZFS).
 */
import { closeSync, existsSync, fstatSync, linkSync, openSync, rmSync, statfsSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { threadId } from "node:worker_threads";
import type { RootDatabase } from "lmdb";
import { StoreWriteError } from "../errors";

/** Bytes any write transaction may add undeclared: copied-on-write B-tree and free-list pages. */
export const TRANSACTION_OVERHEAD_BYTES = 256 * 1024;
/** Declared bytes count this much more: page headers, keys, half-empty leaf pages. */
const DECLARED_FACTOR = 1.25;

/** Growth step: at least this... */
const MIN_GROWTH_BYTES = 8 * 1024 * 1024;
/** ... and at most this much beyond what is needed. */
const MAX_GROWTH_BYTES = 256 * 1024 * 1024;
/**
 * Upper bound of msgpack's bytes for `value` (lmdb-js's encoding): a string 3 bytes per UTF-16
 * unit plus header, a number 9, binary its length, containers the sum of their parts.
 */
export function encodedSizeBound(value: unknown): number {
  if (value === null || value === undefined || typeof value === "boolean") return 1;
  if (typeof value === "number" || typeof value === "bigint") return 9;
  if (typeof value === "string") return 5 + 3 * value.length;
  if (ArrayBuffer.isView(value)) return 5 + value.byteLength;
  if (value instanceof ArrayBuffer) return 5 + value.byteLength;
  if (value instanceof Date) return 15;
  let n = 5;
  if (Array.isArray(value)) {
    for (const v of value) n += encodedSizeBound(v);
    return n;
  }
  for (const k in value as Record<string, unknown>) n += 5 + 3 * k.length + encodedSizeBound((value as Record<string, unknown>)[k]);
  return n;
}

/** An upper bound of one small record's bytes (a ledger entry, a usage counter). */
export const RECORD_BYTES = 1024;

/** Bytes rewriting or removing entries of `dbs` can copy: all their branch and leaf pages. */
export function treeBytes(dbs: readonly unknown[]): number {
  let n = 0;
  for (const db of dbs) {
    const s = (db as { db: { stat(): { pageSize: number; treeBranchPageCount: number; treeLeafPageCount: number } } }).db.stat();
    n += (s.treeBranchPageCount + s.treeLeafPageCount) * s.pageSize;
  }
  return n;
}

function noSpace(want: number, free: number): NodeJS.ErrnoException {
  return Object.assign(new Error(`ENOSPC: no space left on device (the store's data file needs ${want} more bytes, ${free} are free)`), { code: "ENOSPC" });
}

const ZEROS = Buffer.alloc(1024 * 1024);
/** Bytes of a fresh lock file: LMDB's reader table for the default 126 readers is about 8 KiB. */
const LOCK_FILE_BYTES = 64 * 1024;

/**
 * Creates `dir/lock.mdb` full of zeros when missing, written under another name and linked into
 * place (never seen half-written); an existing one is left alone (another process may hold it).
 */
export function preallocateLockFile(dir: string): void {
  const file = join(dir, "lock.mdb");
  if (existsSync(file)) return;
  const tmp = join(dir, `lock.mdb.${process.pid}.${threadId}.tmp`);
  try {
    writeFileSync(tmp, Buffer.alloc(LOCK_FILE_BYTES));
    linkSync(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  } finally {
    rmSync(tmp, { force: true });
  }
}

/**
 * One thread's view of the data file's allocation, one per {@link LmdbStore}; threads coordinate
 * through LMDB's writer lock, which {@link admit} runs under.
 */
export class StoreSpace {
  private fd: number | undefined;
  private pageSize: number | undefined;
  /** Bytes admitted by this thread's transactions not yet settled. */
  private pending = 0;

  /** `root`'s `getStats()` gives last page and page size; the file never grows past `mapSize`. */
  constructor(
    private readonly root: RootDatabase,
    private readonly file: string,
    private readonly mapSize: number,
  ) {}

  /**
   * Admits a transaction adding at most `bytes` (+ {@link TRANSACTION_OVERHEAD_BYTES}), growing the
   * file first. Call before its first write; call the returned function once it has settled.
   * @throws StoreWriteError (ENOSPC, EDQUOT, or map full) with nothing written.
   */
  admit(bytes: number): () => void {
    const bound = Math.ceil(bytes * DECLARED_FACTOR) + TRANSACTION_OVERHEAD_BYTES;
    const fd = this.open();
    this.pageSize ??= (this.root.getStats() as { pageSize: number }).pageSize;
    const used = (this.env().info().lastPageNumber + 1) * this.pageSize;
    const need = used + this.pending + bound;
    const size = fstatSync(fd).size;
    if (need > size) this.grow(fd, size, need);
    this.pending += bound;
    let settled = false;
    return () => {
      if (settled) return;
      settled = true;
      this.pending -= bound;
    };
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  /** lmdb-js's native env: `info()` is mdb_env_info, without `getStats()`'s free-list walk. */
  private env(): { info(): { lastPageNumber: number } } {
    return (this.root as unknown as { env: { info(): { lastPageNumber: number } } }).env;
  }

  private open(): number {
    this.fd ??= openSync(this.file, "r+");
    return this.fd;
  }

  /**
   * Appends zeros up to `need` plus a step of at most half the space free beyond it (never the
   * last of a shared disk). @throws StoreWriteError (ENOSPC) when `need` cannot be reached.
   */
  private grow(fd: number, size: number, need: number): void {
    if (need > this.mapSize) {
      throw new StoreWriteError(new Error(`the store's map is full (${this.mapSize} bytes, MDB_MAP_FULL)`));
    }
    const { bavail, bsize } = statfsSync(this.file);
    const free = bavail * bsize;
    if (need - size > free) throw new StoreWriteError(noSpace(need - size, free));
    const step = Math.min(MAX_GROWTH_BYTES, Math.max(MIN_GROWTH_BYTES, Math.floor(size / 8)), Math.floor((free - (need - size)) / 2));
    const target = Math.min(this.mapSize, need + step);
    let at = size;
    try {
      while (at < target) {
        at += writeSync(fd, ZEROS, 0, Math.min(ZEROS.length, target - at), at);
      }
    } catch (err) {
      // What was written is kept: it is owned space. Short of `need`, refuse.
      if (fstatSync(fd).size < need) throw new StoreWriteError(err);
    }
  }
}
