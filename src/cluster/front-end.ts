/**
 * A stateless front end (`synthd serve --database URL --redis URL`; docs/deploy.md): the embedded
 * server's pipeline on the PostgreSQL store, Redis rate limits (one budget across front ends) and
 * {@link RemoteEngine}. It keeps nothing of its own: one that dies loses only its requests in
 * flight, whose pending charges another front end refunds once its lease lapses.
 */
import { createLogger } from "../server/log";
import { startServer } from "../server/app";
import { RedisRateLimiter } from "../server/limits/redisRateLimiter";
import { installProcessHandlers, rateLimitFromEnv, type ServeHandle, type ServeOptions } from "../server/process";
import { DEFAULT_BUDGET_SHARE, machineMemory } from "../engine/admission/budget";
import { PgStore } from "../store/postgres/pgStore";
import { RemoteEngine } from "./remote-engine";
import { DEFAULT_PREFIX } from "./wire";
import { INTERNAL_TOKEN_ENV, validateInternalToken } from "./internal-auth";

/**
 * Starts a front end. `opts.memoryBudget` is one worker's training budget (default half this
 * machine's memory); `opts.internalToken` (default `SYNTHD_INTERNAL_TOKEN`) goes to workers.
 * @throws InternalTokenError for a token under 32 characters or not printable ASCII.
 * @throws Error when only one of `databaseUrl` / `redisUrl` is given, a service is unreachable, or
 *   the address cannot be bound.
 */
export async function serveShared(opts: ServeOptions): Promise<ServeHandle> {
  if (opts.databaseUrl === undefined || opts.redisUrl === undefined) {
    throw new Error("The shared topology needs both --database (PostgreSQL URL) and --redis (Redis URL).");
  }
  const internalToken = validateInternalToken(opts.internalToken ?? process.env[INTERNAL_TOKEN_ENV]);
  const logger = opts.logger ?? createLogger(opts.debug ? "debug" : "info");
  const rateLimit = opts.rateLimit ?? rateLimitFromEnv();
  const prefix = opts.prefix ?? DEFAULT_PREFIX;
  const store = await PgStore.open(opts.databaseUrl, { logger });
  let engine: RemoteEngine | undefined;
  let limiter: RedisRateLimiter | undefined;
  try {
    const redisUrl = new URL(opts.redisUrl);
    limiter = new RedisRateLimiter({
      prefix: `${prefix}:`,
      redis: {
        host: redisUrl.hostname || "127.0.0.1",
        port: Number(redisUrl.port || 6379),
        ...(redisUrl.password ? { password: decodeURIComponent(redisUrl.password) } : {}),
        ...(redisUrl.username ? { username: decodeURIComponent(redisUrl.username) } : {}),
        ...(redisUrl.pathname.length > 1 ? { db: Number(redisUrl.pathname.slice(1)) } : {}),
      },
      onError: (err) => logger.debug({ err }, "rate limiter: Redis connection error"),
    });
    await limiter.ready();
    engine = await RemoteEngine.connect({
      redisUrl: opts.redisUrl,
      prefix,
      workerBudgetBytes: opts.memoryBudget ?? Math.floor(DEFAULT_BUDGET_SHARE * machineMemory()),
      internalToken,
      logger,
    });
  } catch (err) {
    await limiter?.close().catch(() => undefined);
    await store.close().catch(() => undefined);
    throw err;
  }
  const eng = engine;
  const lim = limiter;
  let srv;
  try {
    srv = await startServer({
      host: opts.host,
      port: opts.port,
      store,
      engine: eng,
      sharedLimiter: lim,
      debug: opts.debug,
      docsUrl: opts.docsUrl ?? (process.env.SYNTHD_DOCS_URL || undefined),
      logger,
      rateLimit,
      maxModelsPerOrg: opts.maxModelsPerOrg,
      trustedProxies: opts.trustedProxies,
      forwardedHeader: opts.forwardedHeader,
      http10Port: opts.http10Port,
    });
  } catch (err) {
    await eng.close().catch(() => undefined);
    await lim.close().catch(() => undefined);
    await store.close().catch(() => undefined);
    throw err;
  }
  const server = srv;
  logger.info({ url: server.url, http10_url: server.http10Url, prefix, instance: store.instanceId }, "synthd front end listening (shared store)");
  const removeGuards = opts.handleSignals === false ? () => undefined : installProcessHandlers(logger, () => close());
  let closing: Promise<void> | undefined;
  function close(): Promise<void> {
    closing ??= (async () => {
      removeGuards();
      await server.close();
      await eng.close();
      await lim.close();
      await store.close();
      logger.info("synthd front end stopped");
    })();
    return closing;
  }
  return { url: server.url, port: server.port, ...(server.http10Url === undefined ? {} : { http10Url: server.http10Url }), close };
}
