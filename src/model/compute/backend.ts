/**
 * The tfjs backend of the tfjs path (the reference, and the fallback without the native core),
 * chosen once per thread: `tensorflow` (when `@tensorflow/tfjs-node` resolves), else `wasm`, else
 * `cpu`; `SYNTHD_TF_BACKEND` forces one. Tensor entry points await {@link initBackend}. The wasm
 * runtime adds process-wide `unhandledRejection` / `uncaughtException` listeners that rethrow,
 * undoing the server's own (src/store/lmdbRejections.ts), so every listener a backend adds is
 * removed again.
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
 * Runs a backend's `start`, then removes the `unhandledRejection` and `uncaughtException`
 * listeners it added (earlier ones stay, also when `start` throws).
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
 * Initialises this thread's tfjs backend once (`forced` tried first, default `SYNTHD_TF_BACKEND`)
 * and returns its name. @throws Error when none initialises (`cpu` always does).
 */
export function initBackend(forced: string | undefined = process.env.SYNTHD_TF_BACKEND): Promise<BackendName> {
  chosen ??= withoutAddedProcessListeners(() => pick(forced));
  return chosen;
}

/** Switches this thread to `name` (benchmarks and tests; old tensors stay on their backend). */
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
