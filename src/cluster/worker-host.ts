/**
 * A training and generation worker of the shared topology (`synthd worker`; docs/deploy.md): the
 * engine on the shared PostgreSQL store, which
 * - takes BullMQ training jobs: claims the model's fencing token, trains from the last checkpoint
 *   and holds the job until training ends; if it dies, the stalled-job check requeues the job
 *   after `lockDurationMs`, the next worker claims a newer token, and stale writes are fenced;
 * - stops a training when a front end publishes its id on the `stop` channel;
 * - answers generate requests on an internal port (./wire.ts; token-guarded, ./internal-auth.ts);
 * - registers in Redis every second and every {@link ORPHAN_SWEEP_MS} requeues `training` models
 *   with no job (a Redis restart may lose the queue, never a model).
 * Shutdown is bounded by `shutdownTimeoutMs` whatever Redis or PostgreSQL do; what it could not
 * hand back is recovered by the stalled-job check or the orphan sweep, from the last checkpoint.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import { Queue, Worker, type Job } from "bullmq";
import Redis from "ioredis";
import type { Logger } from "pino";
import { ParamError } from "../contract/errors";
import { createEngine, EngineModelError, EngineUnavailableError, type PoolEngine } from "../engine";
import type { ComputeKind } from "../model";
import { PgStore } from "../store/postgres/pgStore";
import type { GenerateRequest } from "../contract";
import { addTrainingJob } from "./remote-engine";
import { assertWorkerExposureAllowed, INTERNAL_TOKEN_HEADER, InternalTokenCheck, validateInternalToken } from "./internal-auth";
import { bullPrefix, DEFAULT_PREFIX, encodeGeneration, REGISTER_LUA, stopChannel, TRAINING_QUEUE, WORKER_HEARTBEAT_MS, WORKER_TTL_MS, workersKey, type WorkerErrorBody } from "./wire";

/** How often a worker re-queues models in `training` that have no job (ms). */
export const ORPHAN_SWEEP_MS = 30_000;
/** Largest generate body a worker reads (bytes): the contract's largest latents and more. */
const MAX_INTERNAL_BODY = 256 * 2 ** 20;
/** Default bound of a worker's shutdown (ms): `--shutdown-timeout`. */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 30_000;
/** Longest a Redis step before the engine's shutdown may take (ms): leaves time for trainings. */
const REDIS_STEP_MS = 2_000;

/**
 * `close` passed its deadline: `abandoned` steps did not finish, `trainings` may not have been
 * handed back (another worker's stalled-job check or orphan sweep takes them up).
 */
export class ShutdownTimeoutError extends Error {
  override readonly name = "ShutdownTimeoutError";
  constructor(
    readonly timeoutMs: number,
    readonly abandoned: string[],
    readonly trainings: string[],
  ) {
    super(
      `shutdown did not finish within ${timeoutMs} ms; abandoned: ${abandoned.join("; ")}` +
        (trainings.length > 0 ? `; training jobs not handed back (another worker recovers them): ${trainings.join(", ")}` : ""),
    );
  }
}

/** Options of {@link WorkerHost.start}. */
export interface WorkerHostOptions {
  databaseUrl: string;
  redisUrl: string;
  /** Key prefix of the deployment (default `synthd`). */
  prefix?: string;
  /** Address the internal port binds (default `127.0.0.1`). */
  host?: string;
  /** Internal port (default 0: any free port). */
  port?: number;
  /** URL front ends use to reach this worker (default `http://HOST:PORT`). */
  advertiseUrl?: string;
  /**
   * `SYNTHD_INTERNAL_TOKEN` (>= 32 characters): internal requests without it as
   * `X-Synthd-Internal-Token` get 401. Required when `host` or `advertiseUrl` is not loopback.
   */
  internalToken?: string;
  /** Bound of {@link WorkerHost.close} (ms); default {@link DEFAULT_SHUTDOWN_TIMEOUT_MS}. */
  shutdownTimeoutMs?: number;
  /** Engine worker threads (default: the machine's cores). */
  threads?: number;
  compute?: ComputeKind;
  /** Memory budget of this process (bytes). */
  memoryBudget?: number;
  /** Training jobs held at once (they wait in the engine's admission queue); default 16. */
  concurrency?: number;
  /** BullMQ lock duration (ms; default 10 s): a dead worker's job is taken over after it. */
  lockDurationMs?: number;
  /** BullMQ stalled-job check interval (ms); default 2 s. */
  stalledIntervalMs?: number;
  logger?: Logger;
}

export class WorkerHost {
  private closing: Promise<void> | undefined;
  private readonly timers: NodeJS.Timeout[] = [];

  private constructor(
    readonly id: string,
    readonly url: string,
    private readonly prefix: string,
    private readonly store: PgStore,
    readonly engine: PoolEngine,
    private readonly redis: Redis,
    private readonly subscriber: Redis,
    private readonly queue: Queue,
    private readonly worker: Worker,
    private readonly server: Server,
    private readonly log: Logger | undefined,
    private readonly shutdownTimeoutMs: number,
    /** Model ids of training jobs taken and not yet handed back to Redis. */
    private readonly held: Set<string>,
  ) {}

  /**
   * Opens and migrates the store, starts the engine, internal port, registration, stop
   * subscription and job consumer.
   * @throws InternalTokenError before anything opens (token too short, or missing off loopback).
   * @throws Error when PostgreSQL or Redis cannot be reached, or the port cannot be bound.
   */
  static async start(opts: WorkerHostOptions): Promise<WorkerHost> {
    const log = opts.logger;
    const prefix = opts.prefix ?? DEFAULT_PREFIX;
    const token = validateInternalToken(opts.internalToken);
    assertWorkerExposureAllowed(opts.host ?? "127.0.0.1", opts.advertiseUrl, token);
    const tokenCheck = token === undefined ? undefined : new InternalTokenCheck(token);
    const id = `wrk_${randomBytes(6).toString("hex")}`;
    const store = await PgStore.open(opts.databaseUrl, { logger: log });
    const engine = await createEngine({
      store,
      dataDir: "",
      databaseUrl: opts.databaseUrl,
      workers: opts.threads,
      compute: opts.compute,
      logger: log,
      memoryBudget: opts.memoryBudget,
    });
    const server = createServer((req, res) => void serveInternal(engine, tokenCheck, req, res, log));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(opts.port ?? 0, opts.host ?? "127.0.0.1", () => resolve());
    });
    const addr = server.address() as AddressInfo;
    const host = addr.family === "IPv6" ? `[${addr.address}]` : addr.address;
    const url = opts.advertiseUrl ?? `http://${host}:${addr.port}`;

    const redis = new Redis(opts.redisUrl, { maxRetriesPerRequest: 2 });
    const subscriber = new Redis(opts.redisUrl, { maxRetriesPerRequest: null });
    const queue = new Queue(TRAINING_QUEUE, { connection: { url: opts.redisUrl, maxRetriesPerRequest: 2 }, prefix: bullPrefix(prefix) });
    // ioredis retries; logged at debug (the heartbeat's failure is the warning), not on stderr.
    for (const c of [redis, subscriber]) c.on("error", (err: unknown) => log?.debug({ err }, "Redis connection error"));
    queue.on("error", (err: unknown) => log?.debug({ err }, "training queue connection error"));
    const held = new Set<string>();
    const processor = async (job: Job<{ id: string }>): Promise<string> => {
      const modelId = job.data.id;
      const rec = await store.getModel(modelId);
      if (rec?.status !== "training") return "skipped";
      const fence = await store.claimTraining(modelId);
      if (fence === undefined) return "deleted";
      log?.info({ model_id: modelId, fence, worker: id, attempt: job.attemptsMade }, "training job taken");
      held.add(modelId);
      const outcome = await engine.trainToEnd(modelId, fence);
      log?.info({ model_id: modelId, fence, worker: id, outcome }, "training job ended");
      if (outcome === "halted") throw new Error("the worker is shutting down; the training goes to another worker");
      return outcome;
    };
    const worker = new Worker(TRAINING_QUEUE, processor, {
      connection: { url: opts.redisUrl, maxRetriesPerRequest: null },
      prefix: bullPrefix(prefix),
      concurrency: opts.concurrency ?? 16,
      lockDuration: opts.lockDurationMs ?? 10_000,
      stalledInterval: opts.stalledIntervalMs ?? 2_000,
      maxStalledCount: 1000,
      autorun: false,
    });
    worker.on("error", (err) => log?.warn({ err }, "training queue consumer error"));
    // A job is handed back once BullMQ has recorded its end in Redis.
    const handedBack = (job: Job<{ id: string }> | undefined): void => void (job !== undefined && held.delete(job.data.id));
    worker.on("completed", handedBack);
    worker.on("failed", handedBack);
    const host$ = new WorkerHost(id, url, prefix, store, engine, redis, subscriber, queue, worker, server, log, opts.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS, held);
    await host$.register();
    await subscriber.subscribe(stopChannel(prefix));
    subscriber.on("message", (_channel: string, modelId: string) => {
      engine.stop(modelId).catch((err: unknown) => log?.warn({ err, model_id: modelId }, "stop failed"));
    });
    host$.every(WORKER_HEARTBEAT_MS, () => host$.register());
    host$.every(ORPHAN_SWEEP_MS, () => host$.requeueOrphans());
    await host$.requeueOrphans();
    void worker.run();
    log?.info({ worker: id, url, prefix }, "synthd worker ready");
    return host$;
  }

  private every(ms: number, fn: () => Promise<unknown>): void {
    const t = setInterval(() => {
      fn().catch((err: unknown) => this.log?.warn({ err }, "worker housekeeping failed"));
    }, ms);
    t.unref();
    this.timers.push(t);
  }

  /** Renews this worker's registration (and drops expired ones), on Redis's clock. */
  private async register(): Promise<void> {
    await this.redis.eval(REGISTER_LUA, 1, workersKey(this.prefix), WORKER_TTL_MS, `${this.id} ${this.url}`);
  }

  /** Queues every model in `training` that has no job (a no-op for those that have one). */
  private async requeueOrphans(): Promise<number> {
    const recs = await this.store.modelsWithStatus("training");
    let n = 0;
    for (const r of recs) {
      const job = await this.queue.getJob(r.id);
      if (job !== undefined) continue;
      await addTrainingJob(this.queue, r.id);
      n++;
    }
    if (n > 0) this.log?.warn({ models: n }, "re-queued models in training that had no job");
    return n;
  }

  /**
   * Graceful shutdown bounded by `shutdownTimeoutMs`: stop taking jobs, halt trainings at a step
   * boundary (they stay `training`; another worker retries their jobs), finish generations,
   * deregister. Idempotent (one promise); a failing step is logged and skipped.
   * @throws ShutdownTimeoutError when the deadline passed first (process exits 1).
   */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    const timeoutMs = this.shutdownTimeoutMs;
    const deadline = Date.now() + timeoutMs;
    for (const t of this.timers) clearInterval(t);
    const steps: [name: string, run: () => Promise<unknown>, capMs?: number][] = [
      ["stop taking training jobs", () => this.worker.pause(true), REDIS_STEP_MS],
      ["deregister from Redis", () => this.redis.zrem(workersKey(this.prefix), `${this.id} ${this.url}`), REDIS_STEP_MS],
      ["halt trainings at a step boundary and finish generations in flight", () => this.engine.close()],
      ["hand the training jobs back to the queue (Redis)", () => this.worker.close()],
      ["close the internal port", () => this.closeServer()],
      ["close the training queue (Redis)", () => this.queue.close()],
      ["close the store (PostgreSQL)", () => this.store.close()],
    ];
    const abandoned: string[] = [];
    for (const [name, run, capMs] of steps) {
      const left = deadline - Date.now();
      if (left <= 0) {
        abandoned.push(`${name} (not started)`);
        continue;
      }
      const budget = Math.min(left, capMs ?? left);
      const outcome = await settleWithin(run(), budget);
      if (outcome === "timeout") {
        abandoned.push(`${name} (unfinished after ${budget} ms)`);
        this.log?.warn({ step: name, waited_ms: budget }, "shutdown step did not finish in time; going on");
      } else if (outcome !== "ok") {
        this.log?.warn({ step: name, err: outcome.error }, "shutdown step failed; going on");
      }
    }
    // Never waits: a Redis that is gone must not hold the process.
    this.subscriber.disconnect();
    this.redis.disconnect();
    if (abandoned.length === 0) return;
    this.server.closeAllConnections();
    void this.worker.close(true).catch(() => undefined);
    void this.worker.disconnect().catch(() => undefined);
    const err = new ShutdownTimeoutError(timeoutMs, abandoned, [...this.held]);
    this.log?.error(
      { abandoned, training_jobs_not_handed_back: [...this.held], shutdown_timeout_ms: timeoutMs },
      "shutdown deadline passed: exiting with steps unfinished; trainings continue on another worker from their last checkpoint",
    );
    throw err;
  }

  /** Stops accepting internal requests and waits for those in flight. */
  private async closeServer(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeIdleConnections();
    await closed;
  }
}

/** Waits for `p` at most `ms`: "ok", `{ error }` or "timeout" (`p` left to settle, swallowed). */
async function settleWithin(p: Promise<unknown>, ms: number): Promise<"ok" | "timeout" | { error: unknown }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), ms);
  });
  try {
    return await Promise.race([p.then(() => "ok" as const, (error: unknown) => ({ error })), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Handles one internal request: `POST /internal/generate/{id}` or `GET /internal/health`. */
async function serveInternal(engine: PoolEngine, token: InternalTokenCheck | undefined, req: IncomingMessage, res: ServerResponse, log: Logger | undefined): Promise<void> {
  const fail = (status: number, error: WorkerErrorBody["error"]): void => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify({ error }));
  };
  try {
    // Before anything else, the body included: an unauthenticated request costs nothing but this.
    if (token !== undefined && !token.matches(req.headers[INTERNAL_TOKEN_HEADER])) {
      res.setHeader("connection", "close");
      return fail(401, { kind: "unauthorized", message: `missing or wrong ${INTERNAL_TOKEN_HEADER} header: this port answers the deployment's front ends only` });
    }
    if (req.method === "GET" && req.url === "/internal/health") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"ok":true}');
      return;
    }
    const m = /^\/internal\/generate\/([A-Za-z0-9_]+)$/.exec(req.url ?? "");
    if (req.method !== "POST" || m === null) return fail(404, { kind: "internal", message: "no such internal route" });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of req) {
      size += (c as Buffer).length;
      if (size > MAX_INTERNAL_BODY) return fail(400, { kind: "input", message: "request too large", param: "body" });
      chunks.push(c as Buffer);
    }
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as GenerateRequest;
    const g = await engine.generateRaw(m[1], body);
    const out = encodeGeneration(g);
    res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(out.length) });
    res.end(out);
  } catch (err) {
    if (err instanceof ParamError) return fail(400, { kind: "input", message: err.message, param: err.param });
    if (err instanceof EngineModelError) return fail(err.code === "model_not_found" ? 404 : 409, { kind: err.code, message: err.message, status: err.status });
    if (err instanceof EngineUnavailableError) return fail(503, { kind: "unavailable", message: err.message, retry_after: err.retryAfterSeconds });
    log?.error({ err }, "internal generate failed");
    fail(500, { kind: "internal", message: err instanceof Error ? err.message : String(err) });
  }
}
