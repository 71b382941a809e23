/**
 * The engine of a stateless front end (docs/deploy.md): the {@link Engine} the HTTP
 * server talks to when models train and generate on `synthd worker` processes.
 *
 * - `train`: adds a BullMQ job (job id = model id, so a second add of the same model is a no-op)
 *   that some worker takes; progress reaches GET through the shared store.
 * - `generate`: asks the live workers (Redis set `workers`, see ./wire.ts) in rendezvous order for
 *   the model, so its requests tend to reach the worker that holds its weights; a worker that
 *   cannot be reached, or answers 503, is skipped and the next one asked. Only when none is left
 *   does the request fail with {@link EngineUnavailableError} (503 with Retry-After). What the
 *   front end's handler checked (`CheckedGeneration`) does not travel: the wire carries the
 *   request as the client sent it, and the worker process reads the model's record and checks
 *   the request itself (another process, which trusts only what it reads from the shared store).
 * - `stop`: publishes the model id on the `stop` channel: whichever worker trains it stops at its
 *   next step boundary; a job still waiting is removed from the queue.
 * - `admissionCheck`: refuses a model whose estimate exceeds `workerBudgetBytes` (it could train on
 *   no worker); queueing limits are the workers' own.
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
  /**
   * Shared secret sent to workers as `X-Synthd-Internal-Token` (`SYNTHD_INTERNAL_TOKEN`; workers on
   * addresses other machines reach require one, ./internal-auth.ts). Never logged.
   */
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

  /**
   * Connects to Redis and the training queue.
   * @throws Error when Redis cannot be reached within a few seconds.
   */
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
        // A deployment whose front ends and workers disagree on the token: the client gets 503 (and
        // its charge back), the operator this line.
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

  /** Jobs live in Redis and models in the shared store: the workers resume them (`synthd worker`). */
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
 * Adds the training job of model `id` unless one is already queued or running (BullMQ keeps one
 * job per id; a finished one is removed on completion, so a model trained again gets a new job).
 * Attempts are many: a worker shutting down gives the job back (it fails with `halted` and is
 * retried elsewhere after a second); the model's own failure ends the job normally.
 */
export async function addTrainingJob(queue: Queue, id: string): Promise<void> {
  await queue.add("train", { id }, { jobId: id, attempts: 1000, backoff: { type: "fixed", delay: 1000 }, removeOnComplete: true, removeOnFail: true });
}
