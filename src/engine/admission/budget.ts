/**
 * Admission control, part 0: `synthd serve --memory-budget SIZE` bounds the whole process
 * (default {@link DEFAULT_BUDGET_SHARE} of {@link machineMemory}). The server's own footprint is
 * reserved first (RSS once every worker is up, plus {@link BASE_HEADROOM_BYTES} and
 * {@link WORKER_HEADROOM_BYTES} per worker: 16 MiB bodies being parsed, generation buffers, a
 * worker's heap and store); the rest is the training budget.
 */
import { readFileSync } from "node:fs";
import { totalmem } from "node:os";

/**
 * Default share of the machine's memory: half. Estimates are upper bounds (1.1-1.4x peaks), so
 * the other half stays for the LMDB page cache (checkpoints are read through it) and the OS.
 */
export const DEFAULT_BUDGET_SHARE = 0.5;
/** Reserved beyond the measured start-up RSS, for the process (bytes). */
export const BASE_HEADROOM_BYTES = 256 * 2 ** 20;
/** Reserved beyond the measured start-up RSS, per engine worker (bytes). */
export const WORKER_HEADROOM_BYTES = 64 * 2 ** 20;

/** `n` bytes in the largest binary unit that keeps it >= 1, e.g. `5.3 GiB`. */
export function formatBytes(n: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  let x = n;
  while (x >= 1024 && i < units.length - 1) {
    x /= 1024;
    i++;
  }
  return `${i === 0 ? x.toFixed(0) : x.toFixed(1)} ${units[i]}`;
}

const UNITS: Record<string, number> = {
  "": 1,
  b: 1,
  k: 2 ** 10,
  ki: 2 ** 10,
  kib: 2 ** 10,
  kb: 1e3,
  m: 2 ** 20,
  mi: 2 ** 20,
  mib: 2 ** 20,
  mb: 1e6,
  g: 2 ** 30,
  gi: 2 ** 30,
  gib: 2 ** 30,
  gb: 1e9,
  t: 2 ** 40,
  ti: 2 ** 40,
  tib: 2 ** 40,
  tb: 1e12,
};

/**
 * Parses a memory size: bytes, binary units (`512MiB`, `6Gi`, bare `K`/`M`/`G`/`T`), decimal units
 * (`500MB`), or a share of {@link machineMemory} (`50%`); case-insensitive, space allowed.
 * @returns bytes, a whole number >= 1. @throws RangeError otherwise.
 */
export function parseByteSize(text: string, machineBytes: number = machineMemory()): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*|%)\s*$/i.exec(text);
  const unit = m ? m[2].toLowerCase() : "";
  const factor = unit === "%" ? machineBytes / 100 : UNITS[unit];
  const bytes = m && factor !== undefined ? Math.floor(Number(m[1]) * factor) : NaN;
  if (!(bytes >= 1) || !Number.isSafeInteger(bytes)) {
    throw new RangeError(`a memory size is bytes or a number with a unit (512MiB, 6GiB, 8GB) or a share (50%); got ${JSON.stringify(text)}`);
  }
  return bytes;
}

/**
 * `os.totalmem()`, or the cgroup limit when lower (v2 `memory.max` of the own cgroup or the root,
 * else v1 `memory.limit_in_bytes`).
 */
export function machineMemory(): number {
  let limit = totalmem();
  const candidates: string[] = [];
  try {
    const own = /^0::(\/.*)$/m.exec(readFileSync("/proc/self/cgroup", "utf8"))?.[1];
    if (own !== undefined) candidates.push(`/sys/fs/cgroup${own === "/" ? "" : own}/memory.max`);
  } catch {
    // not Linux, or no cgroup v2
  }
  candidates.push("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes");
  for (const file of candidates) {
    try {
      const v = Number(readFileSync(file, "utf8").trim()); // "max" -> NaN
      if (Number.isFinite(v) && v > 0 && v < limit) limit = v;
    } catch {
      // absent
    }
  }
  return limit;
}
