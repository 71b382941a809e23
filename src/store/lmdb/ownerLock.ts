/**
 * One owner per store: `synthd serve` holds an exclusive lock on `DATA_DIR/synthd.lock`
 * for as long as it runs, taken before anything else opens the store. A second `serve` on the same
 * directory fails at once with {@link StoreLockedError}, which names the owner recorded in the file.
 * The short-lived commands (`keys create`, `usage`, `orgs set`) never take it: LMDB already
 * serialises their writes with the server's, and they are documented to work while it runs.
 *
 * Mechanism: `flock(LOCK_EX | LOCK_NB)` on an open descriptor of the lock file. The kernel ties
 * the lock to that open file description and drops it when the last descriptor closes, so it
 * goes away with the process however it ends (`kill -9` included): there is no stale state to
 * detect and no timing bound to tune. Node has no `flock` binding, so the syscall is issued by
 * util-linux's `flock(1)` (busybox has the same applet) on a copy of our descriptor passed as fd 3
 * (`flock -x -n 3`): the child locks the description it shares with us and exits, and the lock
 * stays with our descriptor. Alternatives weighed:
 * - `proper-lockfile` (mkdir + an mtime refreshed on a timer): after SIGKILL the lock directory
 *   stays until its mtime is older than `stale` (2 s at the least, 10 s by default), so a restart
 *   in that window is refused; an event loop stalled longer than `stale` (a slow disk, a long GC)
 *   lets a second server take over a live owner's lock ("compromised"); two starters removing the
 *   same stale lock can race. A kernel lock has none of these.
 * - `fs-ext` (flock binding): a native build with an install script, which `allowScripts` and
 *   the no-new-native-build rule argue against.
 * - LMDB's own `lock.mdb`: LMDB is multi-process by design (its lock file coordinates readers and
 *   the writer, it never excludes a second process), and `keys create` relies on exactly that.
 * - A PID file: goes stale after `kill -9`, and PIDs are reused.
 * Where `flock(1)` is not on PATH, `serve` refuses to start rather than run unlocked.
 */
import { spawnSync } from "node:child_process";
import { closeSync, constants, ftruncateSync, openSync, readFileSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";

/** Name of the lock file inside the data dir (next to LMDB's `data.mdb` and `lock.mdb`). */
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
 * Thrown by {@link acquireOwnerLock} when another process holds the data dir. The message is the
 * one line the CLI prints (after `synthd: `), e.g. `the data dir D is in use by synthd serve pid
 * 1234 (started 2026-11-24T03:00:00Z, http://127.0.0.1:8080); stop it first or use another --data-dir.`
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
  /** Records the owner's URL in the lock file, for the message a second server prints. Best effort. */
  setUrl(url: string): void;
  /** Closes the descriptor, which releases the lock. Idempotent. */
  release(): void;
}

/**
 * Takes the exclusive owner lock of `dataDir` (which must exist), without waiting, and writes
 * this process's {@link LockOwner} into the lock file. The lock lasts until `release()` or the
 * end of the process. Source: flock(2) via flock(1), see the module comment.
 * @throws StoreLockedError when another process (or another `serve` in this process) holds it.
 * @throws Error when the lock file cannot be opened, `flock(1)` is missing from PATH, or it fails
 *   otherwise (its message included).
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

/**
 * The lock file's owner record, or undefined when it is not one. Tries a few times over ~100 ms:
 * the owner may be between truncating the file and writing its record.
 */
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
