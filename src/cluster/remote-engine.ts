/**
 * A stateless front end's {@link Engine} (docs/deploy.md), on `synthd worker` processes:
 * `train` adds a BullMQ job (id = model id: a second add is a no-op); `generate` asks live workers
 * in rendezvous order (their caches), skipping unreachable or 503 ones, and fails with
 * {@link EngineUnavailableError} when none is left; the request travels as the client sent it and
 * the worker checks it against the store itself (it trusts only the store); `stop` publishes on
 * `stop` and removes a waiting job; `admissionCheck` refuses what no worker's budget fits.
 */
import { Queue } from "bullmq";
import Redis from "ioredis";
import type { Logger } from "pino";
import type { GenerateRequest, Generation, Metadata, ModelConfig } from "../contract";
import { estimateTrainingMemory, explainTooLarge, MAX_PARAMS } from "../engine/admission/estimate";
import { formatBytes } from "../engine/admission/budget";
import { ParamError } from "../contract/errors";
import { EngineModelError, EngineUnavailableError, ModelTooLargeError, toGeneration, type Engine, type RawGeneration } from "../engine/engine";
import { INTERNAL_TOKEN_ENV, INTERNAL_TOKEN_HEADER } from "./internal-auth";
import { bullPrefix, DEFAULT_PREFIX, decodeGeneration, LIVE_WORKERS_LUA, rendezvousOrder, stopChannel, TRAINING_QUEUE, workersKey, type WorkerErrorBody } from "./wire";

/** Options of {@link RemoteEngine.connect}. */
export interface RemoteEngineOptions {
  /** Redis URL, e.g. `redis://127.0.0.1:6379`. */
  redisUrl: string;
  /** Key prefix of the deployment (default `synthd`). */
  prefix?: string;
  /** The training budget of one worker (bytes): larger models are refused at create. */
  workerBudgetBytes: number;
  /** Sent as `X-Synthd-Internal-Token` (`SYNTHD_INTERNAL_TOKEN`, ./internal-auth.ts); unlogged. */
  internalToken?: string;
  /** Per-request timeout of a generate on one worker (ms); default 120 s. */
  generateTimeoutMs?: number;
  logger?: Logger;
}

/** A live worker as registered in Redis. */
export interface WorkerEntry {
  id: string;
  url: string;
}

/** Seconds a client is asked to wait when no worker can take a request. */
export const NO_WORKER_RETRY_AFTER_S = 5;

/** The front end's engine (see the module comment). */
export class RemoteEngine implements Engine {
  readonly device = "cpu";
  private closed = false;

  private constructor(
    private readonly redis: Redis,
    private readonly queue: Queue,
    private readonly opts: Required<Pick<RemoteEngineOptions, "prefix" | "generateTimeoutMs">> & RemoteEngineOptions,
  ) {}

  /** Connects to Redis and the queue. @throws Error when Redis is unreachable within seconds. */
  static async connect(opts: RemoteEngineOptions): Promise<RemoteEngine> {
    const prefix = opts.prefix ?? DEFAULT_PREFIX;
    const redis = new Redis(opts.redisUrl, { maxRetriesPerRequest: 2, lazyConnect: true });
    await redis.connect();
    const queue = new Queue(TRAINING_QUEUE, { connection: { url: opts.redisUrl, maxRetriesPerRequest: 2 }, prefix: bullPrefix(prefix) });
    await queue.waitUntilReady();
    return new RemoteEngine(redis, queue, { generateTimeoutMs: 120_000, ...opts, prefix });
  }

  admissionCheck(config: ModelConfig, metadata: Metadata, _org: string): void {
    this.ensureOpen();
    const est = estimateTrainingMemory(config, metadata);
    const budget = this.opts.workerBudgetBytes;
    if (est.params <= MAX_PARAMS && est.bytes <= budget) return;
    const { param, message } = explainTooLarge(config, metadata, budget, `a worker's training budget of ${formatBytes(budget)}`);
    throw new ModelTooLargeError(message, param, est.bytes, budget);
  }

  async train(id: string): Promise<void> {
    this.ensureOpen();
    try {
      await addTrainingJob(this.queue, id);
    } catch (err) {
      throw new EngineUnavailableError(`the training queue is unavailable: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** The live workers (registration not expired on Redis's clock). */
  async workers(): Promise<WorkerEntry[]> {
    const members = (await this.redis.eval(LIVE_WORKERS_LUA, 1, workersKey(this.opts.prefix))) as string[];
    return members.map((m) => {
      const i = m.indexOf(" ");
      return { id: m.slice(0, i), url: m.slice(i + 1) };
    });
  }

  async generateRaw(id: string, req: GenerateRequest): Promise<RawGeneration> {
    this.ensureOpen();
    let workers: WorkerEntry[];
    try {
      workers = rendezvousOrder(id, await this.workers());
    } catch (err) {
      throw new EngineUnavailableError(`the worker registry is unavailable: ${err instanceof Error ? err.message : String(err)}`, NO_WORKER_RETRY_AFTER_S);
    }
    const body = JSON.stringify(req);
    let last = "no worker is registered";
    for (const w of workers) {
      let res: Response;
      try {
        res = await fetch(`${w.url}/internal/generate/${encodeURIComponent(id)}`, {
          method: "POST",
          headers: { "content-type": "application/json", ...(this.opts.internalToken ? { [INTERNAL_TOKEN_HEADER]: this.opts.internalToken } : {}) },
          body,
          signal: AbortSignal.timeout(this.opts.generateTimeoutMs),
        });
      } catch (err) {
        last = `worker ${w.id} unreachable: ${err instanceof Error ? err.message : String(err)}`;
        this.opts.logger?.warn({ worker: w.id, model_id: id, err: last }, "generate: worker unreachable; trying the next one");
        continue;
      }
      const bytes = new Uint8Array(await res.arrayBuffer());
      if (res.status === 200) return decodeGeneration(bytes);
      let e: WorkerErrorBody["error"];
      try {
        e = (JSON.parse(Buffer.from(bytes).toString("utf8")) as WorkerErrorBody).error;
      } catch {
        e = { kind: "internal", message: `worker ${w.id} answered ${res.status}` };
      }
      if (e.kind === "unavailable") {
        last = `worker ${w.id}: ${e.message}`;
        continue;
      }
      if (e.kind === "unauthorized") {
        // Front ends and workers disagree on the token: the client gets 503 (charge back), we log.
        last = `worker ${w.id} refused this front end's internal token`;
        this.opts.logger?.error(
          { worker: w.id, model_id: id, token_set: this.opts.internalToken !== undefined },
          `generate: worker refused this front end's internal token; set ${INTERNAL_TOKEN_ENV} alike on every front end and worker`,
        );
        continue;
      }
      if (e.kind === "input") throw new ParamError(e.message, e.param ?? "body.embedding");
      if (e.kind === "model_not_found" || e.kind === "model_not_ready") throw new EngineModelError(e.message, e.kind, e.status);
      throw new Error(`worker ${w.id}: ${e.message}`);
    }
    throw new EngineUnavailableError(`no worker could generate (${last})`, NO_WORKER_RETRY_AFTER_S);
  }

  async generate(id: string, req: GenerateRequest): Promise<Generation> {
    return toGeneration(await this.generateRaw(id, req));
  }

  async stop(id: string): Promise<void> {
    this.ensureOpen();
    try {
      await this.redis.publish(stopChannel(this.opts.prefix), id);
      const job = await this.queue.getJob(id);
      if (job !== undefined && (await job.isWaiting())) await job.remove().catch(() => undefined);
    } catch (err) {
      throw new EngineUnavailableError(`the stop could not be sent: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** Jobs live in Redis and models in the shared store: the workers resume them. */
  async resumeAll(): Promise<number> {
    return 0;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.queue.close().catch(() => undefined);
    this.redis.disconnect();
  }

  private ensureOpen(): void {
    if (this.closed) throw new EngineUnavailableError("the engine is shutting down");
  }
}

/**
 * Adds model `id`'s training job unless one is queued or running (a finished one is removed, so a
 * retrain gets a new job). Many attempts: a shutting-down worker fails the job `halted`, retried
 * elsewhere; the model's own failure ends the job normally.
 */
export async function addTrainingJob(queue: Queue, id: string): Promise<void> {
  await queue.add("train", { id }, { jobId: id, attempts: 1000, backoff: { type: "fixed", delay: 1000 }, removeOnComplete: true, removeOnFail: true });
}
