/**
 * What both topologies of `synthd serve` (`serve.ts`, `src/cluster/front-end.ts`) share: options,
 * handle, the default rate limit from the environment, and the process's signal and crash guards.
 */
import type { Logger } from "pino";
import type { Engine } from "../engine/engine";
import type { LmdbStore } from "../store";
import { guardLmdbRejections } from "../store/lmdb/rejections";
import type { ForwardedHeader } from "./clientAddress";

/** What an engine factory receives (the signature of `createEngine` in `src/engine`). */
export interface EngineFactoryOptions {
  store: LmdbStore;
  dataDir: string;
  workers?: number;
  /** Compute path of training and generation; default: the engine's (native when the addon loads). */
  compute?: "tfjs" | "native";
  logger: Logger;
  /** Memory budget of the whole process, bytes; default: the engine's (half the machine's memory). */
  memoryBudget?: number;
  /** Models one org trains at once; default: the engine's. */
  maxTrainingPerOrg?: number;
  /** Models one org may have waiting to train; default: the engine's. */
  maxQueuedPerOrg?: number;
}

/** Builds the engine; default `createEngine` from `src/engine`. */
export type EngineFactory = (opts: EngineFactoryOptions) => Promise<Engine>;

/** Options of {@link serve}. */
export interface ServeOptions {
  host: string;
  /** TCP port; 0 picks a free one. */
  port: number;
  /** LMDB directory; created (with parents) if missing; owner-locked while serving (`synthd.lock`). */
  dataDir: string;
  /** Engine worker threads; default: the engine's choice. */
  workers?: number;
  /** `--compute`: `native` (C++ core) or `tfjs`; default: the engine's (native when the addon loads). */
  compute?: "tfjs" | "native";
  /** `--memory-budget`: bytes the process may use (default half the machine's or cgroup's). */
  memoryBudget?: number;
  /** `--max-training-per-org`: models one org trains at once (default 2). */
  maxTrainingPerOrg?: number;
  /** `--max-queued-per-org`: models one org may have waiting; more get 429 (default 1,000). */
  maxQueuedPerOrg?: number;
  /** `--max-models-per-org`: models one org may keep; more get 402 (default 1,000). */
  maxModelsPerOrg?: number;
  /** Detailed `internal_error` messages and debug-level logs. */
  debug?: boolean;
  /** Base of `error.doc_url` (SYNTHD_DOCS_URL); default `process.env.SYNTHD_DOCS_URL`, else the server's URL. */
  docsUrl?: string;
  /** Default: pino to stderr (`info`, or `debug` with `debug`). */
  logger?: Logger;
  /** Install the signal and crash guards ({@link installProcessHandlers}); default true. */
  handleSignals?: boolean;
  /** Default: `createEngine` from `src/engine` (loaded on first use). Tests pass a stand-in. */
  engineFactory?: EngineFactory;
  /** Requests per minute of orgs without their own limit; default `SYNTHD_RATE_LIMIT`, else 60. */
  rateLimit?: number;
  /** `--database`: PostgreSQL URL; with `redisUrl`, a front end of the shared topology. */
  databaseUrl?: string;
  /** `--redis`: Redis URL of the shared topology (rate limits, training queue, worker registry). */
  redisUrl?: string;
  /** `--prefix`: Redis key prefix of the deployment (default `synthd`). */
  prefix?: string;
  /** `SYNTHD_INTERNAL_TOKEN`: shared secret sent to workers. */
  internalToken?: string;
  /** `--trusted-proxy`: proxies whose forwarding header names the client (`clientAddress.ts`). */
  trustedProxies?: readonly string[];
  /** `--forwarded-header`: the header those proxies write; default `x-forwarded-for`. */
  forwardedHeader?: ForwardedHeader;
  /** `--http10-port`: also serve HTTP/1.0 clients on this port (`http10.ts`); default none. */
  http10Port?: number;
}

/** `SYNTHD_RATE_LIMIT` (per minute) or undefined. @throws Error unless an integer >= 1. */
export function rateLimitFromEnv(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const v = env.SYNTHD_RATE_LIMIT;
  if (v === undefined || v === "") return undefined;
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v)) || Number(v) < 1) {
    throw new Error(`SYNTHD_RATE_LIMIT must be an integer >= 1 (requests per minute); got ${JSON.stringify(v)}.`);
  }
  return Number(v);
}

/** A running `synthd serve`. */
export interface ServeHandle {
  /** `http://HOST:PORT`. */
  url: string;
  port: number;
  /** `http://HOST:PORT` of the HTTP/1.0 listener, when `http10Port` was given. */
  http10Url?: string;
  /** Set only on the first start with an empty store: the new `svc_test_` key of org `default`. */
  sandboxKey?: string;
  /** Stops listening (draining), closes engine, then store, then the owner lock. Idempotent. */
  close(): Promise<void>;
}

/**
 * SIGINT/SIGTERM: graceful shutdown, then exit 0 (1 if it failed; a second signal exits 1 at
 * once). Uncaught errors are logged and the server keeps running (LMDB transactions are atomic,
 * so no request can take the process down). Returns a function that removes the handlers.
 */
export function installProcessHandlers(logger: Logger, shutdown: () => Promise<void>): () => void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) {
      logger.warn({ signal }, "second signal: exiting now");
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, "shutting down");
    shutdown().then(
      () => exitAfterFlush(logger, 0),
      (err: unknown) => {
        logger.error({ err }, "shutdown failed");
        exitAfterFlush(logger, 1);
      },
    );
  };
  const onUncaught = (err: Error): void => logger.error({ err }, "uncaught exception (server keeps running)");
  // lmdb-js's orphaned rejection after a failed commit was already answered where it was awaited.
  const unguard = guardLmdbRejections(
    () => logger.debug("store commit failed (lmdb-js's internal batch promise)"),
    (reason) => logger.error({ err: reason }, "unhandled rejection (server keeps running)"),
  );
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  process.on("uncaughtException", onUncaught);
  return () => {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    process.off("uncaughtException", onUncaught);
    unguard();
  };
}

/** Exits with `code` once the logger has flushed (at most 1 s later). */
function exitAfterFlush(logger: Logger, code: number): void {
  const timer = setTimeout(() => process.exit(code), 1000);
  timer.unref();
  logger.flush(() => process.exit(code));
}
