/**
 * The memory allocator settings of the CLI's generating commands (`sample`, `impute`).
 *
 * Those commands allocate about 300 MB per 1,000,000 rows of Adult in blocks of 100 KB to 11 MB
 * (a batch's codes widened to Int32, its decoded columns, its CSV bytes or Arrow buffers), each
 * dead one batch later. glibc's malloc serves blocks above its mmap threshold (128 KB at start,
 * raised only by frees it sees) with fresh `mmap`s and returns them with `munmap`: every page is
 * faulted in, zeroed by the kernel and unmapped again, batch after batch. On the paravirtualized
 * machines the benchmarks run on, that cost about 1.4 ns per byte: 150 x 400 KB Int32Array
 * copies took 60-90 ms fresh against 5-19 ms from reused heap memory, and a 1M-row `sample` spent
 * 0.3 core-s less with the thresholds below set through the environment (docs/formats.md, "Fifth
 * round"). So these commands raise the mmap threshold to 64 MB and keep up to 256 MB of freed heap
 * for reuse: the process's peak memory stays what its batches need (one batch and the next in
 * flight), and it exits when the command ends.
 *
 * It is done through the native addon (`tuneAllocator`, native/src/addon.cc: glibc's `mallopt`).
 * Nothing happens where the addon is not built or disabled (`SYNTHD_DISABLE_NATIVE`), on other C
 * libraries, or when `MALLOC_MMAP_THRESHOLD_` / `MALLOC_TRIM_THRESHOLD_` are set in the
 * environment (the user's own settings win). The SDK, as a library, never changes its host
 * process's allocator.
 */
import { loadAddon } from "../model/compute/native";

/** glibc's M_MMAP_THRESHOLD for the generating commands: blocks below it come from the heap. */
export const MMAP_THRESHOLD = 64 * 1024 * 1024;
/** glibc's M_TRIM_THRESHOLD: freed heap memory kept for reuse up to this much at the top. */
export const TRIM_THRESHOLD = 256 * 1024 * 1024;

let tuned: boolean | undefined;

/**
 * Applies {@link MMAP_THRESHOLD} and {@link TRIM_THRESHOLD} once per process (see the module
 * comment for when it does nothing).
 * @returns true when the allocator now has them.
 */
export function tuneAllocator(): boolean {
  if (tuned !== undefined) return tuned;
  tuned = false;
  if (process.env.MALLOC_MMAP_THRESHOLD_ !== undefined || process.env.MALLOC_TRIM_THRESHOLD_ !== undefined) return tuned;
  const fn = loadAddon()?.tuneAllocator;
  if (typeof fn !== "function") return tuned;
  try {
    tuned = (fn as (mmap: number, trim: number) => boolean)(MMAP_THRESHOLD, TRIM_THRESHOLD) === true;
  } catch {
    tuned = false;
  }
  return tuned;
}
