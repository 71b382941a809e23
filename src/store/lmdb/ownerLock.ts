/**
 * One owner per store: `synthd serve` holds an exclusive lock on `DATA_DIR/synthd.lock` while it
 * runs, taken before the store opens; a second `serve` fails at once with {@link StoreLockedError}
 * naming the owner. Short-lived commands (`keys create`, `usage`, `orgs set`) never take it: LMDB
 * serialises their writes with the server's. Mechanism: `flock(LOCK_EX | LOCK_NB)` via
 * util-linux's `flock(1)` on a copy of our descriptor as fd 3; the kernel ties the lock to the
 * open file description, so it goes with the process however it ends (`kill -9` included).
 * Without `flock(1)` on PATH, `serve` refuses to start. Alternatives rejected: docs/architecture.md
 * "The data dir's owner lock".
 */
import { spawnSync } from "node:child_process";
import { closeSync, constants, ftruncateSync, openSync, readFileSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";

/** Name of the lock file inside the data dir (next to `data.mdb` and `lock.mdb`). */
export const OWNER_LOCK_FILE = "synthd.lock";

/** Who holds a data dir: the JSON content of its lock file. */
export interface LockOwner {
  pid: number;
  host: string;
  /** ISO 8601 UTC time the owner took the lock. */
  started_at: string;
  /** `http://HOST:PORT`, once the owner listens. */
  url?: string;
}

/**
 * {@link acquireOwnerLock}: another process holds the data dir. The message is the CLI's line,
 * e.g. `the data dir D is in use by synthd serve pid 1234 (started ..., http://...); ...`
 */
export class StoreLockedError extends Error {
  constructor(
    readonly dataDir: string,
    /** What the lock file says; undefined when it could not be read as a {@link LockOwner}. */
    readonly owner: LockOwner | undefined,
  ) {
    super(`the data dir ${dataDir} is in use by ${describeOwner(owner)}; stop it first or use another --data-dir.`);
    this.name = "StoreLockedError";
  }
}

/** The lock held by this process; see {@link acquireOwnerLock}. */
export interface OwnerLock {
  /** Absolute or relative path of the lock file (as `dataDir` was given). */
  readonly path: string;
  /** Records the owner's URL in the lock file, for a second server's message. Best effort. */
  setUrl(url: string): void;
  /** Closes the descriptor, which releases the lock. Idempotent. */
  release(): void;
}

/**
 * Takes `dataDir`'s (existing) exclusive owner lock without waiting and writes this process's
 * {@link LockOwner} into it; held until `release()` or process end.
 * @throws StoreLockedError when another process (or another `serve` here) holds it.
 * @throws Error when the file cannot be opened or `flock(1)` is missing or fails.
 */
export async function acquireOwnerLock(dataDir: string, now: Date = new Date()): Promise<OwnerLock> {
  const path = join(dataDir, OWNER_LOCK_FILE);
  // No O_TRUNC: until we hold the lock, the content is the owner's record.
  const fd = openSync(path, constants.O_RDWR | constants.O_CREAT, 0o644);
  let held = false;
  try {
    // stdio[3] = fd: the child's fd 3 shares our open file description, so its lock is ours.
    const r = spawnSync("flock", ["-x", "-n", "3"], { stdio: ["ignore", "ignore", "pipe", fd], timeout: 10_000 });
    const stderr = r.stderr?.toString().trim() ?? "";
    if (r.error) {
      const e = r.error as NodeJS.ErrnoException;
      throw new Error(
        e.code === "ENOENT"
          ? `cannot lock the data dir ${dataDir}: the flock command (util-linux or busybox) is not on PATH.`
          : `cannot lock the data dir ${dataDir}: flock failed (${e.message}).`,
      );
    }
    // flock -n exits 1 without a word when the lock is held elsewhere; errors come with a message.
    if (r.status === 1 && stderr === "") throw new StoreLockedError(dataDir, await readOwner(path));
    if (r.status !== 0) {
      throw new Error(`cannot lock the data dir ${dataDir}: flock exited with ${r.status ?? r.signal}${stderr ? ` (${stderr})` : ""}.`);
    }
    held = true;
  } finally {
    if (!held) closeSync(fd);
  }

  const owner: LockOwner = { pid: process.pid, host: hostname(), started_at: now.toISOString().replace(/\.\d{3}Z$/, "Z") };
  // The record only feeds another server's message: a failed write (a full disk) must not stop us.
  const record = (): void => {
    try {
      ftruncateSync(fd, 0);
      writeSync(fd, `${JSON.stringify(owner)}\n`, 0);
    } catch {
      // keep the lock; the message then says the owner is unknown
    }
  };
  record();
  let open = true;
  return {
    path,
    setUrl(url: string): void {
      if (!open) return;
      owner.url = url;
      record();
    },
    release(): void {
      if (!open) return;
      open = false;
      closeSync(fd);
    },
  };
}

/** The file's owner record or undefined; retries ~100 ms (the owner may be mid-write). */
async function readOwner(path: string): Promise<LockOwner | undefined> {
  for (let attempt = 0; ; attempt++) {
    try {
      const v = JSON.parse(readFileSync(path, "utf8")) as Partial<LockOwner>;
      if (Number.isSafeInteger(v.pid) && typeof v.host === "string" && typeof v.started_at === "string") {
        return { pid: v.pid!, host: v.host, started_at: v.started_at, ...(typeof v.url === "string" ? { url: v.url } : {}) };
      }
    } catch {
      // empty or half-written: try again
    }
    if (attempt === 4) return undefined;
    await new Promise((r) => setTimeout(r, 25));
  }
}

function describeOwner(owner: LockOwner | undefined): string {
  if (!owner) return "another synthd serve (its lock file names no owner yet)";
  const where = owner.host === hostname() ? "" : ` on ${owner.host}`;
  return `synthd serve pid ${owner.pid}${where} (started ${owner.started_at}${owner.url ? `, ${owner.url}` : ""})`;
}
