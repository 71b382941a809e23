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
 * Takes the data dir's owner lock first (`src/store/lmdb/ownerLock.ts`), so a second server fails
 * before it touches the store (it would release the first's in-flight keys and resume its
 * models); held until `close()` or the process's end. Then opens the store, starts the engine,
 * queues models left `training` for resumption, starts the HTTP server, records the URL in the
 * lock file, and on a store with no key creates org `default` with a sandbox key (returned once).
 * @throws StoreLockedError when another `serve` holds the data dir (the message names it).
 * @throws Error for `databaseUrl`/`redisUrl` (that is `serveShared`), or when the store, engine or
 *   address fails (whatever was opened is closed again).
 */
export async function serve(opts: ServeOptions): Promise<ServeHandle> {
  if (opts.databaseUrl !== undefined || opts.redisUrl !== undefined) {
    // The shared topology's front end is `serveShared` (src/cluster/front-end.ts); the CLI chooses.
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
