/**
 * `synthd serve`: the store, the engine and the HTTP server wired together, with
 * graceful shutdown and process-level guards. The CLI prints what this returns.
 */
import { mkdirSync } from "node:fs";
import type { Engine } from "../engine/engine";
import { LmdbStore } from "../store";
import { acquireOwnerLock } from "../store/lmdb/ownerLock";
import { startServer, type RunningServer } from "./app";
import { createLogger } from "./log";
import { installProcessHandlers, rateLimitFromEnv, type EngineFactory, type ServeHandle, type ServeOptions } from "./process";

/** Org that owns the sandbox key made on first start. */
export const DEFAULT_ORG = "default";

/**
 * Takes the data dir's owner lock first (`DATA_DIR/synthd.lock`, `src/store/lmdb/ownerLock.ts`), so a
 * second server on the same dir fails before it touches the store: it neither releases the first's
 * in-flight idempotency keys nor resumes its models. The lock is held until `close()` (or the end
 * of the process, `kill -9` included). Then opens the store at `dataDir`, starts the engine
 * (which measures its own footprint against the memory budget) and queues every model left in
 * `training` for resumption (oldest first, through the admission queue), starts the HTTP server
 * (which loads the persisted rate counters and releases idempotency keys left in flight by a
 * crashed process, see `startServer`), records the URL in the lock file, and then, if the store holds no key at all, creates org
 * `default` with a sandbox key (returned once as `sandboxKey`; only its SHA-256 is stored).
 * @throws StoreLockedError (`src/store/lmdb/ownerLock.ts`) when another `serve` holds the data dir; its
 *   message names the owner (pid, start time, URL).
 * @throws Error when `databaseUrl` or `redisUrl` is given (that is `serveShared`), when the lock cannot be taken otherwise, the store cannot be opened, the engine
 *   cannot start (also: a memory budget below the server's own footprint), or the address cannot
 *   be bound (whatever was opened is closed again).
 */
export async function serve(opts: ServeOptions): Promise<ServeHandle> {
  if (opts.databaseUrl !== undefined || opts.redisUrl !== undefined) {
    // The shared topology's front end sits a floor above the server (`serveShared` in
    // src/cluster/front-end.ts); the CLI chooses between the two.
    throw new Error("serve() starts the embedded topology; a front end on PostgreSQL and Redis is serveShared() (src/cluster/front-end.ts)");
  }
  const logger = opts.logger ?? createLogger(opts.debug ? "debug" : "info");
  const rateLimit = opts.rateLimit ?? rateLimitFromEnv();
  mkdirSync(opts.dataDir, { recursive: true });
  const lock = await acquireOwnerLock(opts.dataDir);
  let store: LmdbStore;
  try {
    store = new LmdbStore(opts.dataDir);
  } catch (err) {
    lock.release();
    throw err;
  }
  let engine: Engine | undefined;
  let server: RunningServer | undefined;
  let sandboxKey: string | undefined;
  try {
    const factory = opts.engineFactory ?? (await defaultEngineFactory());
    const started: Engine = await factory({
      store,
      dataDir: opts.dataDir,
      workers: opts.workers,
      compute: opts.compute,
      logger,
      memoryBudget: opts.memoryBudget,
      maxTrainingPerOrg: opts.maxTrainingPerOrg,
      maxQueuedPerOrg: opts.maxQueuedPerOrg,
    });
    engine = started;
    const resumed = await started.resumeAll();
    if (resumed > 0) logger.info({ resumed }, "resumed training of models left in 'training'");
    server = await startServer({
      host: opts.host,
      port: opts.port,
      store,
      engine: started,
      debug: opts.debug,
      docsUrl: opts.docsUrl ?? (process.env.SYNTHD_DOCS_URL || undefined),
      logger,
      rateLimit,
      maxModelsPerOrg: opts.maxModelsPerOrg,
      trustedProxies: opts.trustedProxies,
      forwardedHeader: opts.forwardedHeader,
      http10Port: opts.http10Port,
    });
    // Only once listening: a start that fails must not consume the one-time sandbox key.
    if (await store.isEmpty()) sandboxKey = await store.createKey(DEFAULT_ORG, "test");
  } catch (err) {
    await server?.close().catch(() => undefined);
    await engine?.close().catch(() => undefined);
    await store.close().catch(() => undefined);
    lock.release();
    throw err;
  }
  const eng: Engine = engine;
  const srv: RunningServer = server;
  lock.setUrl(srv.url);
  logger.info({ url: srv.url, http10_url: srv.http10Url, device: eng.device }, "synthd listening");

  const removeGuards = opts.handleSignals === false ? () => undefined : installProcessHandlers(logger, () => close());

  let closing: Promise<void> | undefined;
  function close(): Promise<void> {
    closing ??= (async () => {
      removeGuards();
      await srv.close();
      await eng.close();
      await store.close();
      lock.release();
      logger.info("synthd stopped");
    })();
    return closing;
  }

  return { url: srv.url, port: srv.port, ...(srv.http10Url === undefined ? {} : { http10Url: srv.http10Url }), sandboxKey, close };
}

async function defaultEngineFactory(): Promise<EngineFactory> {
  const { createEngine } = await import("../engine");
  return createEngine;
}
