/**
 * The tfjs backend for the generator's tfjs path (the reference, and the fallback without the
 * native core): the best backend present, chosen once per thread.
 *
 * Order of preference: `tensorflow` (native TensorFlow, only when `@tensorflow/tfjs-node` happens
 * to be resolvable at run time), then `wasm` (XNNPACK, SIMD, single thread in Node), then `cpu`
 * (plain JavaScript kernels). Measured on the 2-core target machine (one training step, batch 256,
 * discretised Adult, D = 588, all 91 pairs): wasm 66-73 ms (small) / 132-137 ms (medium), cpu
 * 1,645 ms / 4,109 ms, so wasm is the default when tfjs-node is absent.
 * `SYNTHD_TF_BACKEND=wasm|cpu|tensorflow` forces a choice.
 *
 * Every entry point of `src/model` that touches tensors awaits {@link initBackend} first; it is
 * idempotent per thread (each worker thread has its own tfjs engine).
 *
 * Process listeners: the wasm backend's Emscripten runtime, when it starts, adds process-wide
 * `unhandledRejection` and `uncaughtException` listeners that rethrow whatever they get. Those
 * undo the listeners this server installs on purpose (src/store/lmdbRejections.ts: lmdb-js's
 * orphaned rejection after a failed commit, e.g. on a full disk), so an engine worker thread died
 * at the first commit that failed. {@link initBackend} and {@link useBackend} remove every such
 * listener a backend added; without them Node does what they did (an unhandled rejection or
 * uncaught exception ends the thread) except where a listener of ours handles it.
 */
import * as tf from "@tensorflow/tfjs-core";
// Side effect: registers the gradient functions (tfjs-core alone has none) and chained ops.
import "@tensorflow/tfjs-layers";
import "@tensorflow/tfjs-backend-cpu";
import "@tensorflow/tfjs-backend-wasm";

/** The tfjs backends this module knows, in order of preference. */
export type BackendName = "tensorflow" | "wasm" | "cpu";

let chosen: Promise<BackendName> | undefined;

/** True when `@tensorflow/tfjs-node` can be loaded (it registers the `tensorflow` backend). */
function loadTfjsNode(): boolean {
  try {
    // Optional dependency: not in package.json, used when an operator installed it.
    require("@tensorflow/tfjs-node");
    return true;
  } catch {
    return false;
  }
}

/** The process events whose listeners a backend's start may add (see the module comment). */
const PROCESS_EVENTS = ["unhandledRejection", "uncaughtException"] as const;

/**
 * Runs `start` (a backend's initialisation) and then removes the `unhandledRejection` and
 * `uncaughtException` listeners it added to `process` (listeners present before stay, also when
 * `start` throws). Resolves or rejects as `start` does.
 */
export async function withoutAddedProcessListeners<T>(start: () => Promise<T>): Promise<T> {
  type Listener = (...args: unknown[]) => void;
  const listeners = (e: string): Listener[] => (process as NodeJS.EventEmitter).listeners(e) as Listener[];
  const before = new Map(PROCESS_EVENTS.map((e) => [e, new Set(listeners(e))]));
  try {
    return await start();
  } finally {
    for (const e of PROCESS_EVENTS) {
      const old = before.get(e) as Set<Listener>;
      for (const l of listeners(e)) if (!old.has(l)) (process as NodeJS.EventEmitter).off(e, l);
    }
  }
}

async function pick(forced: string | undefined): Promise<BackendName> {
  const order: BackendName[] = [];
  if (forced === "tensorflow" || forced === "wasm" || forced === "cpu") order.push(forced);
  if (loadTfjsNode()) order.push("tensorflow");
  order.push("wasm", "cpu");
  for (const name of order) {
    if (name === "tensorflow" && tf.findBackendFactory("tensorflow") === null) continue;
    try {
      if (await tf.setBackend(name)) {
        await tf.ready();
        return name;
      }
    } catch {
      // try the next one
    }
  }
  throw new Error("no tfjs backend could be initialised");
}

/**
 * Initialises the tfjs backend of this thread once and returns its name.
 * @param forced backend to try first (default: env `SYNTHD_TF_BACKEND`).
 * @throws Error when no backend initialises (should not happen: `cpu` always does).
 */
export function initBackend(forced: string | undefined = process.env.SYNTHD_TF_BACKEND): Promise<BackendName> {
  chosen ??= withoutAddedProcessListeners(() => pick(forced));
  return chosen;
}

/**
 * Switches this thread to `name` (benchmarks and tests only; live tensors of the previous
 * backend stay on it).
 */
export async function useBackend(name: BackendName): Promise<BackendName> {
  await withoutAddedProcessListeners(async () => {
    if (!(await tf.setBackend(name))) throw new Error(`backend ${name} failed to initialise`);
    await tf.ready();
  });
  chosen = Promise.resolve(name);
  return name;
}

/** The `config.device` name for a backend: all three run on the CPU. */
export function deviceOf(_backend: BackendName): string {
  return "cpu";
}
