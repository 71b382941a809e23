/**
 * The local engine: a piscina pool on this machine; each model is an actor pinned to one worker
 * (`placement.ts`, `worker/`), so its weights live in one thread and heavy compute never runs on
 * the HTTP thread. Here: the pool, the admission pump, shutdown and generation's round trip;
 * training tasks are `training-tasks.ts`. Policies: docs/architecture.md "The local engine".
 */
import { availableParallelism } from "node:os";
import * as path from "node:path";
import { Piscina } from "piscina";
import type { Logger } from "pino";
import type { ModelRecord, Store } from "../store";
import type { GenerateRequest, Generation, Metadata, ModelConfig } from "../contract";
import { defaultCompute, deviceOf, type BackendName, type ComputeKind } from "../model";
import type { MemoryEstimate } from "./admission/estimate";
import { DEFAULT_BUDGET_SHARE, machineMemory } from "./admission/budget";
import { estimateKey, MemoryAdmission } from "./admission/memory";
import { DEFAULT_MAX_QUEUED_PER_ORG, DEFAULT_MAX_TRAINING_PER_ORG, type AdmissionQueue } from "./admission/queue";
import { generateTask, generationOf, readAndCheck } from "./generate-task";
import { TrainingTasks, type TrainingHost } from "./training-tasks";
import { place, tagTask, type QueueTagged } from "./placement";
import {
  DEFAULT_IDLE_MODELS_PER_WORKER,
  DEFAULT_MAX_QUEUE,
  RETRY_BLOCKED_MS,
  type AdmissionState,
  type EngineOptions,
  type PoolEngine,
} from "./pool-engine";
import type { CheckedGeneration, GenerateReply, InfoReply, Task, TrainReply, WorkerConfig, WorkerLog } from "./protocol";
import { EngineUnavailableError, toGeneration, type RawGeneration } from "./engine";

class LocalEngine implements PoolEngine, TrainingHost {
  readonly device: string;
  /** See {@link Engine.gpu}: set by {@link start} from a worker's answer. */
  readonly gpu?: string;
  private readonly pool: Piscina;
  readonly log: Logger | undefined;
  /** model id -> threadId of the worker holding its actor / cached weights. */
  readonly pins = new Map<string, number>();
  private readonly training: TrainingTasks;
  private closed = false;
  private closing: Promise<void> | undefined;
  backend: BackendName = "wasm";
  compute: ComputeKind;
  private readonly memory: MemoryAdmission;
  /** The admission queue (`memory.queue`). */
  readonly queue: AdmissionQueue;
  /** Compute threads of the native core (pool and callers), for the estimate. */
  private computeThreads = availableParallelism();
  private retryTimer: NodeJS.Timeout | undefined;
  /** Set once idle caches were dropped for the current blocked episode. */
  private cachesDropped = false;

  constructor(
    readonly store: Store,
    where: Pick<WorkerConfig, "dataDir" | "databaseUrl">,
    readonly workers: number,
    private readonly maxQueue: number,
    idleModels: number,
    logger: Logger | undefined,
    compute: ComputeKind,
    private readonly budgetBytes: number,
    maxTrainingPerOrg: number,
    maxQueuedPerOrg: number,
  ) {
    this.log = logger;
    this.compute = compute;
    this.memory = new MemoryAdmission(budgetBytes, { maxTrainingPerOrg, maxQueuedPerOrg }, () => ({
      compute: this.compute,
      threads: this.computeThreads + this.workers,
    }));
    this.queue = this.memory.queue;
    this.training = new TrainingTasks(this);
    const workerData: WorkerConfig = { ...where, idleModels, compute };
    this.pool = new Piscina({
      filename: path.join(__dirname, "worker", "dispatch.js"),
      minThreads: workers,
      maxThreads: workers,
      idleTimeout: Infinity,
      concurrentTasksPerWorker: 4096,
      maxQueue,
      atomics: "disabled",
      closeTimeout: 10_000,
      workerData,
      loadBalancer: (task, ws) => place(this.pins, (id) => this.training.has(id), task as unknown as QueueTagged, ws),
    });
    this.pool.on("message", (m: WorkerLog) => {
      const l = m?.synthdLog;
      if (l && this.log) this.log[l.level](l.fields ?? {}, l.msg);
    });
    this.pool.on("error", (err: unknown) => this.log?.error({ err }, "engine worker error"));
    this.device = "cpu";
  }

  /** The model's record as last committed by any thread (renews this thread's read snapshot). */
  current(id: string): Promise<ModelRecord | undefined> {
    this.store.refreshReads?.();
    return this.store.getModel(id);
  }

  isClosed(): boolean {
    return this.closed;
  }

  queueFull(): boolean {
    return this.pool.queueSize >= this.maxQueue;
  }

  private ensureOpen(): void {
    if (this.closed) throw new EngineUnavailableError("the engine is shutting down");
  }

  /** Runs a task on its model's worker. Pool failures (queue full, closed, worker lost) reject. */
  run<R>(task: Task, modelId: string | undefined, transferList: ArrayBuffer[] = []): Promise<R> {
    if (this.pool.queueSize >= this.maxQueue) return Promise.reject(new EngineUnavailableError("the engine's queue is full"));
    return this.pool.run(tagTask(task, modelId), { transferList }) as Promise<R>;
  }

  /** The memory estimate of a model on this engine's compute path (admission/estimate.ts). */
  estimate(config: ModelConfig, metadata: Metadata): MemoryEstimate {
    return this.memory.estimate(config, metadata);
  }

  admissionCheck(config: ModelConfig, metadata: Metadata, org: string): void {
    this.ensureOpen();
    this.memory.check(config, metadata, org);
  }

  /** See {@link Engine.train}. `fence`: the token every write of the training carries. */
  async train(id: string, fence?: number): Promise<void> {
    this.ensureOpen();
    if (fence !== undefined) this.training.setFence(id, fence);
    if (this.queue.isRunning(id) || this.queue.isWaiting(id)) return;
    // Refuse here, not through the task's rejection (which would read as a lost worker).
    if (this.pool.queueSize >= this.maxQueue) throw new EngineUnavailableError("the engine's queue is full");
    const rec = await this.current(id);
    if (rec !== undefined) await this.enqueue(rec);
    this.pump();
  }

  /**
   * Queues a stored `training` model not yet queued or running, with its create's held estimate
   * when unambiguous (reading large metadata back costs the HTTP thread tens of ms), else one
   * computed from the store. A model that can never fit is marked failed.
   */
  private async enqueue(rec: ModelRecord): Promise<void> {
    const { id, org } = rec;
    if (rec.status !== "training" || this.queue.isRunning(id) || this.queue.isWaiting(id)) return;
    const bytes = this.queue.claimHold(org, estimateKey(rec.config)) ?? (await this.estimateStored(rec));
    if (bytes === undefined || this.queue.isRunning(id) || this.queue.isWaiting(id)) return;
    const createdMs = Date.parse(rec.created_at);
    this.queue.enqueue({ id, org, bytes, createdMs: Number.isFinite(createdMs) ? createdMs : Date.now() });
    this.log?.debug({ model_id: id, org, estimate_bytes: bytes }, "model queued for training");
  }

  /** A stored model's estimate (0 without metadata: the worker fails it), undefined if failed. */
  private async estimateStored(rec: ModelRecord): Promise<number | undefined> {
    const metadata = await this.store.getMetadata(rec.id);
    if (metadata === undefined) return 0;
    let est: MemoryEstimate;
    try {
      est = this.estimate(rec.config, metadata);
    } catch (err) {
      this.training.markFailed(rec.id, `the model's memory could not be estimated: ${err instanceof Error ? err.message : String(err)}`);
      return undefined;
    }
    const tooLarge = this.memory.tooLarge(rec.config, metadata, est);
    if (tooLarge) {
      this.training.markFailed(rec.id, tooLarge.message);
      return undefined;
    }
    return est.bytes;
  }

  /** Starts every model the policy admits; re-checks later while unaccounted memory blocks one. */
  pump(): void {
    if (this.closed) return;
    this.memory.measure();
    for (const t of this.queue.admit()) {
      this.log?.info({ model_id: t.id, org: t.org, reserved_bytes: t.bytes, reserved_total: this.queue.reservedBytes }, "training admitted");
      this.training.start(t.id);
    }
    const { becauseUnaccounted } = this.queue.headBlocked();
    if (!becauseUnaccounted) {
      this.cachesDropped = false;
      return;
    }
    if (this.training.size === 0 && !this.cachesDropped) {
      // Nothing trains: what holds the memory is finished models' caches and garbage.
      this.cachesDropped = true;
      const idle = [...this.pins.keys()].filter((id) => !this.training.has(id) && !this.queue.isWaiting(id) && !id.startsWith("__info_"));
      this.log?.info(
        { models: idle.length, unaccounted_bytes: this.queue.unaccountedBytes },
        "memory held outside training blocks the queue; dropping idle generator caches",
      );
      for (const id of idle) void this.dropCached(id);
    }
    this.retryTimer ??= setTimeout(() => {
      this.retryTimer = undefined;
      this.pump();
    }, RETRY_BLOCKED_MS);
    this.retryTimer.unref();
  }

  /** Frees a model's cached weights on its worker (a `ready` model reloads them on demand). */
  private async dropCached(id: string): Promise<void> {
    try {
      await this.run({ op: "stop", id }, id);
    } catch {
      // The worker is gone: so is the cache.
    }
    if (!this.training.has(id)) this.pins.delete(id);
  }

  async generateRaw(id: string, req: GenerateRequest, checked?: CheckedGeneration): Promise<RawGeneration> {
    this.ensureOpen();
    const { task, transfer } = generateTask(id, checked ?? (await readAndCheck(this.store, id, req)));
    let reply: GenerateReply;
    try {
      reply = await this.run(task, id, transfer);
    } catch (err) {
      if (err instanceof EngineUnavailableError) throw err;
      throw new EngineUnavailableError(`the model's worker is unavailable: ${err instanceof Error ? err.message : String(err)}`);
    }
    return generationOf(reply);
  }

  async generate(id: string, req: GenerateRequest, checked?: CheckedGeneration): Promise<Generation> {
    return toGeneration(await this.generateRaw(id, req, checked));
  }

  async stop(id: string): Promise<void> {
    // Paused after losing its worker to a store outage: nothing runs; release it now.
    this.training.stopPaused(id);
    if (this.queue.remove(id)) {
      this.training.settle(id, "stopped");
      this.log?.debug({ model_id: id }, "waiting model left the training queue");
      this.pump();
    }
    const running = this.training.task(id);
    if (this.closed || (!running && !this.pins.has(id))) return;
    try {
      await this.run({ op: "stop", id }, id);
      if (running) await running.catch(() => undefined);
    } catch {
      // The worker is gone: nothing of this model is left in memory.
    }
    this.pins.delete(id);
    this.training.forget(id);
  }

  async resumeAll(): Promise<number> {
    this.ensureOpen();
    const recs = await this.store.modelsWithStatus("training");
    recs.sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at) || (a.id < b.id ? -1 : 1));
    for (const rec of recs) await this.enqueue(rec);
    if (recs.length > 0) this.log?.info({ models: recs.length }, "resuming training (through the admission queue, oldest first)");
    this.pump();
    return recs.length;
  }

  trainingIds(): string[] {
    return this.training.ids();
  }

  waitingIds(): string[] {
    return this.queue.waitingTickets().map((t) => t.id);
  }

  admission(): AdmissionState {
    const limits = this.queue.currentLimits;
    return {
      budgetBytes: this.budgetBytes,
      baseBytes: this.memory.baseBytes,
      trainingBudgetBytes: limits.budgetBytes,
      reservedBytes: this.queue.reservedBytes,
      unaccountedBytes: this.queue.unaccountedBytes,
      maxTrainingPerOrg: limits.maxTrainingPerOrg,
      maxQueuedPerOrg: limits.maxQueuedPerOrg,
      running: this.queue.runningTickets(),
      waiting: this.queue.waitingTickets(),
    };
  }

  async info(): Promise<InfoReply[]> {
    const out: InfoReply[] = [];
    for (const w of this.pool.threads) {
      const tid = w.threadId;
      const key = `__info_${tid}`;
      this.pins.set(key, tid);
      try {
        out.push(await this.run<InfoReply>({ op: "info" }, key));
      } finally {
        this.pins.delete(key);
      }
    }
    return out;
  }

  threads(): readonly import("node:worker_threads").Worker[] {
    return this.pool.threads;
  }

  /**
   * Trains model `id` and resolves with its last task's outcome (`ready`, `failed`, `stopped`,
   * `deleted`, `superseded`, `halted`), or `skipped` when not queued: for a job-holding consumer.
   * @throws EngineUnavailableError as {@link train}.
   */
  async trainToEnd(id: string, fence?: number): Promise<TrainReply["outcome"]> {
    const ended = this.training.waitForEnd(id);
    try {
      await this.train(id, fence);
    } catch (err) {
      this.training.settle(id, "skipped");
      throw err;
    }
    if (!this.queue.isRunning(id) && !this.queue.isWaiting(id)) this.training.settle(id, "skipped");
    return ended;
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      this.closed = true;
      clearTimeout(this.retryTimer);
      // Resuming or queued models stay `training` in the store and are queued at the next start.
      const pending = this.training.closing();
      for (const t of this.queue.waitingTickets()) this.queue.remove(t.id);
      await Promise.allSettled(pending.map(([id]) => this.run({ op: "halt", id }, id)));
      await Promise.allSettled(pending.map(([, p]) => p));
      await this.pool.close();
      this.training.closed();
      this.log?.info("engine stopped");
    })();
    return this.closing;
  }

  /**
   * Asks one worker for its backend and compute path, brings up the others and measures the
   * process's footprint (the admission base). @throws Error when the budget leaves nothing.
   */
  async start(): Promise<void> {
    const reply = await this.run<InfoReply>({ op: "info" }, undefined);
    this.backend = reply.backend as BackendName;
    (this as { device: string }).device = deviceOf(this.backend);
    if (reply.gpu !== undefined) (this as { gpu?: string }).gpu = reply.gpu;
    if (reply.compute !== this.compute) {
      this.log?.warn({ asked: this.compute, used: reply.compute }, "native compute core unavailable in the workers; using tfjs");
      this.compute = reply.compute;
    }
    if (reply.computeInfo) this.computeThreads = reply.computeInfo.threads;
    await this.info(); // every worker up (its backend initialised): part of the base
    const training = this.memory.setBase(process.memoryUsage.rss(), this.workers);
    this.log?.info(
      {
        workers: this.workers,
        backend: this.backend,
        device: this.device,
        gpu: this.gpu ?? null,
        compute: this.compute,
        ...(reply.computeInfo ?? {}),
        memory_budget: this.budgetBytes,
        base_bytes: this.memory.baseBytes,
        training_budget: training,
        max_training_per_org: this.queue.currentLimits.maxTrainingPerOrg,
        max_queued_per_org: this.queue.currentLimits.maxQueuedPerOrg,
      },
      "engine ready",
    );
  }
}

/**
 * Starts a pool of `workers` threads, each with its own store (`dataDir` or `databaseUrl`) and tfjs
 * backend (`tensorflow`, else `wasm`, else `cpu`), computing on `opts.compute` (default: native
 * when it loads; its one shared thread pool keeps models from oversubscribing the cores). Resolves
 * once every worker is up and the admission base measured.
 * @throws Error when workers cannot start or `memoryBudget` is not above the footprint; RangeError
 *   for limits out of range.
 */
export async function createEngine(opts: EngineOptions): Promise<PoolEngine> {
  const workers = Math.max(1, Math.floor(opts.workers ?? availableParallelism()));
  const engine = new LocalEngine(
    opts.store,
    { dataDir: opts.dataDir, ...(opts.databaseUrl === undefined ? {} : { databaseUrl: opts.databaseUrl }) },
    workers,
    opts.maxQueue ?? DEFAULT_MAX_QUEUE,
    opts.idleModelsPerWorker ?? DEFAULT_IDLE_MODELS_PER_WORKER,
    opts.logger,
    opts.compute ?? defaultCompute(),
    opts.memoryBudget ?? Math.floor(DEFAULT_BUDGET_SHARE * machineMemory()),
    opts.maxTrainingPerOrg ?? DEFAULT_MAX_TRAINING_PER_ORG,
    opts.maxQueuedPerOrg ?? DEFAULT_MAX_QUEUED_PER_ORG,
  );
  try {
    await engine.start();
  } catch (err) {
    await engine.close().catch(() => undefined);
    throw err;
  }
  return engine;
}
