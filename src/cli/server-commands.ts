/**
 * `synthd serve` and `synthd keys create` (DESIGN §1): the commands that work on the store
 * directly rather than through the HTTP API.
 */
import { mkdirSync } from "node:fs";
import { serve } from "../server/serve";
import { Store, type Environment } from "../store";

/** Options of `synthd serve` after parsing. */
export interface ServeOptions {
  host: string;
  port: number;
  dataDir: string;
  workers?: number;
  debug: boolean;
  /** `--compute`: training/generation path; default: native when the addon loads, else tfjs. */
  compute?: "tfjs" | "native";
  /** `--memory-budget`, parsed to bytes; default: half the machine's memory. */
  memoryBudget?: number;
  /** `--max-training-per-org`; default 2. */
  maxTrainingPerOrg?: number;
  /** `--max-queued-per-org`; default 16. */
  maxQueuedPerOrg?: number;
}

/**
 * Starts the server and prints `sandbox key: svc_test_...` (first start with an empty store
 * only) and then `synthd listening on http://HOST:PORT` on stdout. Runs until SIGINT/SIGTERM.
 * The only command that takes the data dir's owner lock (`src/store/ownerLock.ts`).
 * @throws StoreLockedError when another `synthd serve` owns the data dir (the CLI prints its
 *   one-line message and exits 1), or whatever `serve` throws.
 */
export async function serveCommand(opts: ServeOptions): Promise<void> {
  const server = await serve({
    host: opts.host,
    port: opts.port,
    dataDir: opts.dataDir,
    workers: opts.workers,
    debug: opts.debug,
    compute: opts.compute,
    memoryBudget: opts.memoryBudget,
    maxTrainingPerOrg: opts.maxTrainingPerOrg,
    maxQueuedPerOrg: opts.maxQueuedPerOrg,
    docsUrl: process.env.SYNTHD_DOCS_URL,
  });
  if (server.sandboxKey) process.stdout.write(`sandbox key: ${server.sandboxKey}\n`);
  process.stdout.write(`synthd listening on ${server.url}\n`);
}

/** Options of `synthd keys create`. */
export interface KeysCreateOptions {
  dataDir: string;
  org: string;
  env: Environment;
}

/**
 * Creates a key for `org` (created if missing) and prints it alone on stdout. Works while a
 * server runs on the same dir: it opens the store briefly and never takes the owner lock.
 */
export async function keysCreateCommand(opts: KeysCreateOptions): Promise<void> {
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(opts.org)) {
    throw new Error("--org must be 1 to 64 characters from letters, digits, '_', '.' and '-'.");
  }
  mkdirSync(opts.dataDir, { recursive: true });
  const store = new Store(opts.dataDir);
  try {
    const key = await store.createKey(opts.org, opts.env);
    process.stdout.write(`${key}\n`);
  } finally {
    await store.close();
  }
}
