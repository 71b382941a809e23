/**
 * Disk space for the embedded store, owned before LMDB needs it. LMDB extends `data.mdb` by
 * writing past its end; on a full file system that write fails inside LMDB (a page spill or the
 * commit's page flush), and lmdb-js 3.x can corrupt its heap after such a failure
 * (docs/operations.md "A full disk"). So LMDB is never allowed to meet a full disk:
 *
 * - the data file is kept allocated (zeros written past LMDB's last page) ahead of what LMDB uses;
 * - every write transaction, at its start and while it holds LMDB's writer lock, declares an upper
 *   bound of the bytes it can add ({@link StoreSpace.admit}); it runs only when the allocated file
 *   has that much room beyond LMDB's last page and the transactions admitted before it, growing
 *   the file first when needed;
 * - when the file cannot grow (ENOSPC, EDQUOT), the transaction is refused with a
 *   {@link StoreWriteError} before it writes anything: requests get 503, training pauses.
 *
 * So LMDB only ever writes into blocks the file already owns. A new store's lock file (`lock.mdb`,
 * mapped and written through memory, where a page first touched on a full tmpfs raises SIGBUS) is
 * written out in full before LMDB creates it. On copy-on-write file systems (btrfs, ZFS) a rewrite
 * of an allocated block needs new space, so this guarantee does not hold there; docs/operations.md
 * says so.
 */
import { closeSync, existsSync, fstatSync, linkSync, openSync, rmSync, statfsSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { threadId } from "node:worker_threads";
import type { RootDatabase } from "lmdb";
import { StoreWriteError } from "../errors";

/**
 * Bytes every write transaction may add besides what it declares: the B-tree pages its puts and
 * removes copy on write (a few levels of a named database and the main one) and free-list pages.
 */
export const TRANSACTION_OVERHEAD_BYTES = 256 * 1024;
/** Declared bytes count this much more: page headers, keys, half-empty leaf pages. */
const DECLARED_FACTOR = 1.25;

/** The file grows by at least this much at a time. */
const MIN_GROWTH_BYTES = 8 * 1024 * 1024;
/** ... and at most this much beyond what is needed. */
const MAX_GROWTH_BYTES = 256 * 1024 * 1024;
/**
 * An upper bound of the bytes msgpack takes for `value` (lmdb-js's encoding of stored values): a
 * string at most 3 bytes per UTF-16 unit plus a header, a number 9 bytes, binary data its length,
 * arrays and objects the sum of their parts. Walks the value once.
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

/**
 * Bytes a transaction that rewrites or removes any number of entries of `dbs` can copy on write:
 * every branch and leaf page they have (overflow pages are freed, not copied).
 */
export function treeBytes(dbs: readonly unknown[]): number {
  let n = 0;
  for (const db of dbs) {
    const s = (db as { db: { stat(): { pageSize: number; treeBranchPageCount: number; treeLeafPageCount: number } } }).db.stat();
    n += (s.treeBranchPageCount + s.treeLeafPageCount) * s.pageSize;
  }
  return n;
}

/** The ENOSPC error of a growth the file system's free space cannot take. */
function noSpace(want: number, free: number): NodeJS.ErrnoException {
  return Object.assign(new Error(`ENOSPC: no space left on device (the store's data file needs ${want} more bytes, ${free} are free)`), { code: "ENOSPC" });
}

/** Size of the zero block written to grow the file. */
const ZEROS = Buffer.alloc(1024 * 1024);
/** Bytes written into a fresh lock file: LMDB's reader table for the default 126 readers is about 8 KiB. */
const LOCK_FILE_BYTES = 64 * 1024;

/**
 * Creates `dir/lock.mdb` written out in full (zeros) when it is missing, so that LMDB never
 * touches an unallocated page of it. The file is written under another name and linked into
 * place, so a process that opens the store meanwhile never sees a half-written lock file. A lock
 * file that exists is left as it is: another process may have it open.
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
 * The allocation of one thread's view of the store's data file (see the module comment). One per
 * {@link LmdbStore} instance; instances in other threads of the process coordinate through LMDB's
 * writer lock, which {@link admit} runs under.
 */
export class StoreSpace {
  private fd: number | undefined;
  private pageSize: number | undefined;
  /** Bytes admitted by this thread's transactions that have not settled (committed or failed) yet. */
  private pending = 0;

  /**
   * @param root the open environment (its `getStats()` gives the last page and page size)
   * @param file path of `data.mdb`
   * @param mapSize LMDB's map size: the file never grows past it
   */
  constructor(
    private readonly root: RootDatabase,
    private readonly file: string,
    private readonly mapSize: number,
  ) {}

  /**
   * Admits a transaction that adds at most `bytes` (plus {@link TRANSACTION_OVERHEAD_BYTES}) to
   * the store, growing the data file first when needed. Call it at the start of a transaction's
   * callback, before its first write, and call the returned function once the transaction has
   * settled.
   * @throws StoreWriteError (cause ENOSPC or EDQUOT, or "the store's map is full") when the room
   *   cannot be had; nothing has been written then.
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

  /** Closes the file descriptor (the environment itself is closed by its owner). */
  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  /** lmdb-js's native environment: `info()` is mdb_env_info (the last committed page), without `getStats()`'s free-list walk. */
  private env(): { info(): { lastPageNumber: number } } {
    return (this.root as unknown as { env: { info(): { lastPageNumber: number } } }).env;
  }

  private open(): number {
    this.fd ??= openSync(this.file, "r+");
    return this.fd;
  }

  /**
   * Appends zeros from `size` until the file reaches `need` plus a growth step, the step at most
   * half of the space left free beyond `need`, so the store never takes the last of a disk others
   * share. Throws StoreWriteError (cause ENOSPC) when `need` cannot be reached.
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
