/**
 * Where `synthd fit` keeps each model's near-copy filter for `synthd sample` on the same machine
 * (docs/api.md "Near-copy filter in the CLI"); nothing here goes to the server. The directory:
 * `$SYNTHD_FILTER_DIR`, else `$XDG_DATA_HOME/synthd/near-copy-filters`, else
 * `~/.local/share/synthd/near-copy-filters` (XDG Base Directory), mode 0700, holding:
 * - `key`: 32 random bytes, the secret the filters hash cells with, mode 0600, made by the first
 *   `fit`. Without it a filter file tests no row: copied elsewhere, it reveals no value.
 * - `<model id>.ncf`: the filter (`NearCopyFilter.toBuffer`), mode 0600.
 * - `<model id>.none`: why `fit` built no filter (one line), so `sample` can say so.
 * Files are written under a temporary name and renamed, so a reader never sees half a file.
 */
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { NearCopyFilter } from "../../sdk/privacy/filter";

/** Bytes of the machine key. */
const KEY_BYTES = 32;

/** The filters' directory (file header). */
export function filterDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SYNTHD_FILTER_DIR) return env.SYNTHD_FILTER_DIR;
  const data = env.XDG_DATA_HOME || join(homedir(), ".local", "share");
  return join(data, "synthd", "near-copy-filters");
}

/** The model id as a file name. @throws Error for an id other than letters, digits, `_`, `-`. */
function base(dir: string, id: string): string {
  if (!/^[A-Za-z0-9_-]{1,100}$/.test(id)) throw new Error(`"${id}" is not a model id.`);
  return join(dir, id);
}

/** Writes `data` to `path` with mode 0600, through a temporary file renamed into place. */
function writePrivate(path: string, data: string | Uint8Array): void {
  const tmp = `${path}.${randomBytes(4).toString("hex")}.partial`;
  try {
    writeFileSync(tmp, data, { mode: 0o600, flag: "wx" });
    chmodSync(tmp, 0o600); // the umask may have narrowed it, never widened; set it exactly
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

/**
 * The machine key of `dir`, made (with the directory) when `create` and missing; else undefined.
 * @throws Error when the key file is not {@link KEY_BYTES} bytes.
 */
export function machineKey(dir: string, create: boolean): Buffer | undefined {
  const path = join(dir, "key");
  if (!existsSync(path)) {
    if (!create) return undefined;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    try {
      writeFileSync(path, randomBytes(KEY_BYTES), { mode: 0o600, flag: "wx" });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e; // another fit made it first
    }
  }
  const key = readFileSync(path);
  if (key.length !== KEY_BYTES) throw new Error(`${path} is not a near-copy filter key (${key.length} bytes, not ${KEY_BYTES}); remove it and fit again.`);
  return key;
}

/** Stores model `id`'s filter, or why none was built; returns the filter file's path, if any. */
export function saveFilter(dir: string, id: string, filter: NearCopyFilter | undefined, reason?: string): string | undefined {
  const at = base(dir, id);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (filter === undefined) {
    writePrivate(`${at}.none`, `${reason ?? "no filter"}\n`);
    rmSync(`${at}.ncf`, { force: true });
    return undefined;
  }
  writePrivate(`${at}.ncf`, filter.toBuffer());
  rmSync(`${at}.none`, { force: true });
  return `${at}.ncf`;
}

/** What {@link loadFilter} found for a model. */
export type StoredFilter = { filter: NearCopyFilter; path: string } | { none: string } | undefined;

/**
 * Model `id`'s stored filter (with the machine key), the reason `fit` built none, or undefined.
 * @throws DataError (from `NearCopyFilter.fromBuffer`) for a damaged file or another key.
 */
export function loadFilter(dir: string, id: string): StoredFilter {
  const at = base(dir, id);
  if (existsSync(`${at}.ncf`)) {
    const key = machineKey(dir, false);
    if (key === undefined) throw new Error(`${at}.ncf has no key beside it (${join(dir, "key")}); fit again, or sample with --real FILE or --no-filter.`);
    const { NearCopyFilter } = require("../../sdk/privacy/filter") as typeof import("../../sdk/privacy/filter");
    return { filter: NearCopyFilter.fromBuffer(readFileSync(`${at}.ncf`), key), path: `${at}.ncf` };
  }
  if (existsSync(`${at}.none`)) return { none: readFileSync(`${at}.none`, "utf8").trim() };
  return undefined;
}

/** Removes model `id`'s stored filter (or the reason none was built), if this machine holds one. */
export function removeFilter(dir: string, id: string): void {
  const at = base(dir, id);
  rmSync(`${at}.ncf`, { force: true });
  rmSync(`${at}.none`, { force: true });
}
