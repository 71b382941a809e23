/** `synthd serve` and `synthd keys create`: commands on the store, not through the HTTP API. */
import type { ForwardedHeader } from "../server/clientAddress";
import type { Environment } from "../store";
import { openAdminStore } from "./admin-store";

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
  /** `--max-queued-per-org`; default 1,000. */
  maxQueuedPerOrg?: number;
  /** `--max-models-per-org`; default 1,000. */
  maxModelsPerOrg?: number;
  /** `--database`: shared topology (with `redis`). */
  database?: string;
  /** `--redis`: shared topology (with `database`). */
  redis?: string;
  /** `--prefix`: Redis key prefix of the deployment. */
  prefix?: string;
  /** `--trusted-proxy` (repeatable: address, CIDR or comma list) or `SYNTHD_TRUSTED_PROXIES`. */
  trustedProxy?: string[];
  /** `--forwarded-header`: what the trusted proxies write; default `x-forwarded-for`. */
  forwardedHeader?: ForwardedHeader;
  /** `--http10-port`: the HTTP/1.0 listener's port (src/server/http10.ts); default none. */
  http10Port?: number;
}

/**
 * Starts the server and prints `sandbox key: svc_test_...` (first start, empty store only), the
 * HTTP/1.0 listener line (with `--http10-port`) and `synthd listening on http://HOST:PORT` on
 * stdout; runs until SIGINT/SIGTERM. The only command taking the data dir's owner lock.
 * @throws StoreLockedError when another `synthd serve` owns the data dir, or what `serve` throws.
 */
export async function serveCommand(opts: ServeOptions): Promise<void> {
  // The embedded topology (`src/server/serve.ts`), or a shared one's front end (PostgreSQL, Redis).
  const shared = opts.database !== undefined || opts.redis !== undefined;
  const start = shared ? (await import("../cluster/front-end")).serveShared : (await import("../server/serve")).serve;
  const server = await start({
    host: opts.host,
    port: opts.port,
    dataDir: opts.dataDir,
    workers: opts.workers,
    debug: opts.debug,
    compute: opts.compute,
    memoryBudget: opts.memoryBudget,
    maxTrainingPerOrg: opts.maxTrainingPerOrg,
    maxQueuedPerOrg: opts.maxQueuedPerOrg,
    maxModelsPerOrg: opts.maxModelsPerOrg,
    docsUrl: process.env.SYNTHD_DOCS_URL,
    ...(opts.database === undefined ? {} : { databaseUrl: opts.database }),
    ...(opts.redis === undefined ? {} : { redisUrl: opts.redis }),
    ...(opts.prefix === undefined ? {} : { prefix: opts.prefix }),
    ...(opts.trustedProxy === undefined ? {} : { trustedProxies: opts.trustedProxy }),
    ...(opts.forwardedHeader === undefined ? {} : { forwardedHeader: opts.forwardedHeader }),
    ...(opts.http10Port === undefined ? {} : { http10Port: opts.http10Port }),
  });
  if (server.sandboxKey) process.stdout.write(`sandbox key: ${server.sandboxKey}\n`);
  if (server.http10Url !== undefined) process.stdout.write(`synthd HTTP/1.0 listener on ${server.http10Url}\n`);
  process.stdout.write(`synthd listening on ${server.url}\n`);
}

/** Options of `synthd keys create`. */
export interface KeysCreateOptions {
  dataDir: string;
  /** `--database`: the shared PostgreSQL store instead. */
  database?: string;
  org: string;
  env: Environment;
}

/** Creates a key for `org` (created if missing), printed alone; never takes the owner lock. */
export async function keysCreateCommand(opts: KeysCreateOptions): Promise<void> {
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(opts.org)) {
    throw new Error("--org must be 1 to 64 characters from letters, digits, '_', '.' and '-'.");
  }
  const store = await openAdminStore(opts);
  try {
    const key = await store.createKey(opts.org, opts.env);
    process.stdout.write(`${key}\n`);
  } finally {
    await store.close();
  }
}

/** Options of `synthd worker` after parsing. */
export interface WorkerOptions {
  database: string;
  redis: string;
  prefix: string;
  host: string;
  port: number;
  advertiseUrl?: string;
  workers?: number;
  compute?: "tfjs" | "native";
  memoryBudget?: number;
  concurrency: number;
  lockDuration: number;
  /** `--shutdown-timeout` (ms): bound of the shutdown after SIGTERM/SIGINT. */
  shutdownTimeout: number;
  debug: boolean;
}

/**
 * `synthd worker`: a worker of the shared topology (src/cluster/worker-host.ts) until
 * SIGINT/SIGTERM, which hand its trainings back; exits 0 when the shutdown finished, 1 when
 * `--shutdown-timeout` passed first. The internal token comes from `SYNTHD_INTERNAL_TOKEN` only
 * (a flag would show in `ps`).
 * @throws InternalTokenError when a non-loopback `--host` / `--advertise-url` has no token, or the
 *   token is too short; Error when PostgreSQL or Redis cannot be reached.
 */
export async function workerCommand(opts: WorkerOptions): Promise<void> {
  const { WorkerHost } = await import("../cluster/worker-host");
  const { createLogger } = await import("../server/log");
  const { installProcessHandlers } = await import("../server/process");
  const logger = createLogger(opts.debug ? "debug" : "info");
  const host = await WorkerHost.start({
    databaseUrl: opts.database,
    redisUrl: opts.redis,
    prefix: opts.prefix,
    host: opts.host,
    port: opts.port,
    advertiseUrl: opts.advertiseUrl,
    threads: opts.workers,
    compute: opts.compute,
    memoryBudget: opts.memoryBudget,
    concurrency: opts.concurrency,
    lockDurationMs: opts.lockDuration,
    shutdownTimeoutMs: opts.shutdownTimeout,
    internalToken: process.env.SYNTHD_INTERNAL_TOKEN || undefined,
    logger,
  });
  installProcessHandlers(logger, () => host.close());
  process.stdout.write(`synthd worker ${host.id} serving ${host.url}\n`);
}

/** `synthd migrate --database URL`: applies the shared store's migrations, printing them. */
export async function migrateCommand(opts: { database: string }): Promise<void> {
  const { migrateDatabase } = await import("../store/postgres/migrations");
  const applied = await migrateDatabase(opts.database);
  process.stdout.write(applied.length === 0 ? "schema up to date\n" : `applied migrations ${applied.join(", ")}\n`);
}
