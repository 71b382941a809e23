/**
 * The local engine: a piscina pool of worker threads on this machine; each model is an actor
 * pinned to one worker (`placement.ts`, `worker/`), so its weights live in one thread and every
 * task about it (train, generate, stop) runs there; heavy compute never runs on the HTTP thread.
 * This file holds the pool, the training lifecycle (admission pump, restarts after a worker's
 * death, shutdown) and generation's round trip. Its policies (placement, worker death, admission,
 * shutdown) are described in docs/architecture.md, "The local engine".
 */
import { availableParallelism } from "node:os";
import * as path from "node:path";
import { Piscina } from "piscina";
import type { Logger } from "pino";
import { isStoreOutage, type ModelRecord, type Store } from "../store";
import type { GenerateRequest, Generation, Metadata, ModelConfig } from "../types";
import { deviceOf, type BackendName } from "../model/backend";
import { defaultCompute, type ComputeKind } from "../model/trainer";
import { storeRetryDelay, trainingFailed } from "./worker/actor";
import type { MemoryEstimate } from "./admission/estimate";
import { DEFAULT_BUDGET_SHARE, machineMemory } from "./admission/budget";
import { estimateKey, MemoryAdmission } from "./admission/memory";
import { DEFAULT_MAX_QUEUED_PER_ORG, DEFAULT_MAX_TRAINING_PER_ORG, type AdmissionQueue } from "./admission/queue";
import { generateTask, generationOf, readAndCheck } from "./generate-task";
import { place, tagTask, type QueueTagged } from "./placement";
import {
  DEFAULT_IDLE_MODELS_PER_WORKER,
  DEFAULT_MAX_QUEUE,
  MAX_TRAIN_RESTARTS,
  RETRY_BLOCKED_MS,
  type AdmissionState,
  type EngineOptions,
  type PoolEngine,
} from "./pool-engine";
import type { CheckedGeneration, GenerateReply, InfoReply, Task, TrainReply, WorkerConfig, WorkerLog } from "./protocol";
import { EngineUnavailableError, toGeneration, type RawGeneration } from "./types";

class LocalEngine implements PoolEngine {
  readonly device: string;
  /** See {@link Engine.gpu}: set by {@link start} from a worker's answer. */
  readonly gpu?: string;
  private readonly pool: Piscina;
  private readonly log: Logger | undefined;
  /** model id -> threadId of the worker holding its actor / cached weights. */
  private readonly pins = new Map<string, number>();
  /**
   * Models whose training task is pending, with its promise. Every one holds a reservation in
   * {@link queue} (a task starts only on one, and the reservation is released only once the task
   * is over), so "running in the queue" is the test for "training or about to be resumed".
   */
  private readonly training = new Map<string, Promise<TrainReply>>();
  private readonly restarts = new Map<string, number>();
  /** Training tasks in a row lost with a worker that died of a store outage, per model (backoff). */
  private readonly outageLosses = new Map<string, number>();
  /** Models waiting to be resumed after such a loss (their reservations are held meanwhile). */
  private readonly resumeTimers = new Map<string, NodeJS.Timeout>();
  /** Fencing tokens of trainings started through {@link train} with one (shared store). */
  private readonly fences = new Map<string, number>();
  /** Callers of {@link trainToEnd} waiting for a model's training to end. */
  private readonly waiters = new Map<string, ((outcome: TrainReply["outcome"]) => void)[]>();
  /** The last training task's outcome per model, until its waiters are settled. */
  private readonly outcomes = new Map<string, TrainReply["outcome"]>();
  private closed = false;
  private closing: Promise<void> | undefined;
  backend: BackendName = "wasm";
  compute: ComputeKind;
  /** The memory budget, the base and the admission queue. */
  private readonly memory: MemoryAdmission;
  /** The admission queue (`memory.queue`): which waiting model starts next. */
  private readonly queue: AdmissionQueue;
  /** Compute threads of the native core (pool and callers), for the estimate. */
  private computeThreads = availableParallelism();
  private retryTimer: NodeJS.Timeout | undefined;
  /** Set once idle caches were dropped for the current blocked episode. */
  private cachesDropped = false;

  constructor(
    private readonly store: Store,
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
  private current(id: string): Promise<ModelRecord | undefined> {
    this.store.refreshReads?.();
    return this.store.getModel(id);
  }

  private ensureOpen(): void {
    if (this.closed) throw new EngineUnavailableError("the engine is shutting down");
  }

  /** Runs a task on its model's worker. Pool failures (queue full, closed, worker lost) reject. */
  private run<R>(task: Task, modelId: string | undefined, transferList: ArrayBuffer[] = []): Promise<R> {
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

  /**
   * See {@link Engine.train}. `fence`: the training's fencing token (shared store; every write of
   * the training carries it, `Store.claimTraining`).
   */
  async train(id: string, fence?: number): Promise<void> {
    this.ensureOpen();
    if (fence !== undefined) this.fences.set(id, fence);
    // A running model (its reservation is held for as long as its task runs) or a waiting one.
    if (this.queue.isRunning(id) || this.queue.isWaiting(id)) return;
    // Refuse here, not through the task's rejection (which would read as a lost worker).
    if (this.pool.queueSize >= this.maxQueue) throw new EngineUnavailableError("the engine's queue is full");
    const rec = await this.current(id);
    if (rec !== undefined) await this.enqueue(rec);
    this.pump();
  }

  /**
   * Adds a stored model to the admission queue unless it is not `training` or is already queued
   * or running. Its estimate is the one its create's admission check held, when that is
   * unambiguous; else it is computed from the stored config and metadata (reading a large
   * metadata back costs the HTTP thread tens of milliseconds). A model that can never fit is
   * marked failed.
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

  /**
   * The estimate of a stored model (bytes; 0 without metadata: the worker then fails the model at
   * once), or undefined when it was marked failed (its estimate failed, or it can never fit).
   */
  private async estimateStored(rec: ModelRecord): Promise<number | undefined> {
    const metadata = await this.store.getMetadata(rec.id);
    if (metadata === undefined) return 0;
    let est: MemoryEstimate;
    try {
      est = this.estimate(rec.config, metadata);
    } catch (err) {
      this.markFailed(rec.id, `the model's memory could not be estimated: ${err instanceof Error ? err.message : String(err)}`);
      return undefined;
    }
    const tooLarge = this.memory.tooLarge(rec.config, metadata, est);
    if (tooLarge) {
      this.markFailed(rec.id, tooLarge.message);
      return undefined;
    }
    return est.bytes;
  }

  /** Starts every waiting model the policy admits; re-checks later while unaccounted memory blocks one. */
  private pump(): void {
    if (this.closed) return;
    this.memory.measure();
    for (const t of this.queue.admit()) {
      this.log?.info({ model_id: t.id, org: t.org, reserved_bytes: t.bytes, reserved_total: this.queue.reservedBytes }, "training admitted");
      this.startTask(t.id);
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

  /** Runs the training task of an admitted model (its reservation is held until {@link finish}). */
  private startTask(id: string): void {
    const fence = this.fences.get(id);
    const p = this.run<TrainReply>({ op: "train", id, ...(fence === undefined ? {} : { fence }) }, id);
    this.training.set(id, p);
    p.then(
      (reply) => this.trainEnded(id, p, reply),
      (err: unknown) => this.trainLost(id, p, err),
    ).catch((err: unknown) => this.log?.error({ model_id: id, err }, "training bookkeeping failed"));
  }

  /** The model's training is over for this engine: its reservation is released and the queue advances. */
  private finish(id: string): void {
    this.settleWaiters(id);
    if (this.queue.release(id)) {
      this.log?.info(
        { model_id: id, reserved_total: this.queue.reservedBytes, running: this.training.size, waiting: this.queue.waitingCount },
        "training reservation released",
      );
      this.pump();
    }
  }

  private async trainEnded(id: string, p: Promise<TrainReply>, reply: TrainReply): Promise<void> {
    if (this.training.get(id) === p) this.training.delete(id);
    this.outcomes.set(id, reply.outcome);
    this.log?.debug({ model_id: id, outcome: reply.outcome, epoch: reply.epoch, message: reply.message }, "training task ended");
    if (reply.outcome === "deleted" && !this.closed && (await this.current(id))?.status === "training") {
      // The worker did not see a record that exists (should not happen: it renews its snapshot per task).
      await this.trainLost(id, p, new Error("the worker could not read the model's record"));
      return;
    }
    if (reply.outcome !== "ready" && reply.outcome !== "skipped") this.pins.delete(id);
    if (reply.outcome === "ready" || reply.outcome === "failed") this.restarts.delete(id);
    this.outageLosses.delete(id);
    this.finish(id);
  }

  /**
   * The training task was lost with its worker (or the pool): resume or fail, see the module
   * comment. A resumed model keeps its reservation (its memory died with the worker and is
   * allocated again by the new task); one that fails or is gone releases it.
   */
  private async trainLost(id: string, p: Promise<TrainReply>, err: unknown): Promise<void> {
    if (this.training.get(id) === p) this.training.delete(id);
    this.pins.delete(id);
    if (this.closed) return;
    const message = err instanceof Error ? err.message : String(err);
    const rec = await this.current(id);
    if (this.closed) return;
    if (rec === undefined || rec.status !== "training") {
      this.finish(id);
      return;
    }
    if (isStoreOutage(err)) {
      // The store, not the model: resume later, and do not count it toward the restart limit.
      const k = (this.outageLosses.get(id) ?? 0) + 1;
      this.outageLosses.set(id, k);
      const delay = storeRetryDelay(k);
      this.log?.warn({ model_id: id, err: message, delay_ms: delay }, "training worker lost to a store outage (full disk?); resuming from the last checkpoint after a pause");
      this.resumeLater(id, delay);
      return;
    }
    const n = (this.restarts.get(id) ?? 0) + 1;
    this.restarts.set(id, n);
    if (n > MAX_TRAIN_RESTARTS) {
      this.outcomes.set(id, "failed");
      this.markFailed(id, `the training worker thread exited unexpectedly ${n} times (last: ${message})`);
      this.finish(id);
    } else if (this.pool.queueSize >= this.maxQueue) {
      this.outcomes.set(id, "failed");
      this.markFailed(id, "training could not be resumed: the engine's queue is full");
      this.finish(id);
    } else {
      this.log?.warn({ model_id: id, err: message, attempt: n }, "training worker lost; resuming from the last checkpoint");
      this.startTask(id);
    }
  }

  /**
   * Starts model `id`'s training task again after `delayMs` (its reservation stays held), unless
   * the engine closed, the model was stopped, or it is no longer `training` by then.
   */
  private resumeLater(id: string, delayMs: number): void {
    clearTimeout(this.resumeTimers.get(id));
    const timer = setTimeout(() => {
      if (this.resumeTimers.get(id) !== timer) return;
      this.resumeTimers.delete(id);
      if (this.closed) return;
      void (async () => {
        let rec: ModelRecord | undefined;
        try {
          rec = await this.current(id);
        } catch (err) {
          // A shared store that cannot be read now: wait again. Else let the task find out.
          if (isStoreOutage(err)) {
            this.resumeLater(id, storeRetryDelay((this.outageLosses.get(id) ?? 0) + 1));
            return;
          }
          if (!this.closed && !this.training.has(id)) this.startTask(id);
          return;
        }
        if (this.closed || this.training.has(id)) return;
        if (rec?.status !== "training") {
          this.outageLosses.delete(id);
          this.finish(id);
        } else this.startTask(id);
      })().catch((err: unknown) => this.log?.error({ model_id: id, err }, "training bookkeeping failed"));
    }, delayMs);
    this.resumeTimers.set(id, timer);
  }

  private markFailed(id: string, message: string): void {
    this.log?.error({ model_id: id, err: message }, "training failed");
    void (async () => {
      const rec = await this.current(id);
      if (rec?.status !== "training") return;
      await this.store.updateModel(id, { status: "failed", error: trainingFailed(message) });
    })().catch((e: unknown) => this.log?.error({ model_id: id, err: e }, "could not store a training failure"));
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

  /** Plain-array columns (the Engine contract; `Generation.columns` are `number[]`). */
  async generate(id: string, req: GenerateRequest, checked?: CheckedGeneration): Promise<Generation> {
    return toGeneration(await this.generateRaw(id, req, checked));
  }

  async stop(id: string): Promise<void> {
    const resume = this.resumeTimers.get(id);
    if (resume !== undefined) {
      // Paused after losing its worker to a store outage: nothing runs; release it now.
      clearTimeout(resume);
      this.resumeTimers.delete(id);
      this.outageLosses.delete(id);
      this.outcomes.set(id, "stopped");
      this.pins.delete(id);
      this.finish(id);
    }
    if (this.queue.remove(id)) {
      this.settleWaiters(id, "stopped");
      this.log?.debug({ model_id: id }, "waiting model left the training queue");
      this.pump();
    }
    const running = this.training.get(id);
    if (this.closed || (!running && !this.pins.has(id))) return;
    try {
      await this.run({ op: "stop", id }, id);
      if (running) await running.catch(() => undefined);
    } catch {
      // The worker is gone: nothing of this model is left in memory.
    }
    this.pins.delete(id);
    this.restarts.delete(id);
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
    return [...this.training.keys()];
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
   * Trains model `id` (as {@link train}) and resolves when this engine is done with it: the
   * outcome of its last training task (`ready`, `failed`, `stopped`, `deleted`, `superseded`,
   * `halted` at shutdown), or `skipped` when it was not queued (not `training`, or marked failed
   * by admission). For a queue consumer that holds a job while the model trains (src/cluster).
   * @throws EngineUnavailableError as {@link train}.
   */
  async trainToEnd(id: string, fence?: number): Promise<TrainReply["outcome"]> {
    const ended = new Promise<TrainReply["outcome"]>((resolve) => {
      const list = this.waiters.get(id) ?? [];
      list.push(resolve);
      this.waiters.set(id, list);
    });
    try {
      await this.train(id, fence);
    } catch (err) {
      this.settleWaiters(id, "skipped");
      throw err;
    }
    if (!this.queue.isRunning(id) && !this.queue.isWaiting(id)) this.settleWaiters(id, "skipped");
    return ended;
  }

  private settleWaiters(id: string, outcome?: TrainReply["outcome"]): void {
    const list = this.waiters.get(id);
    const last = outcome ?? this.outcomes.get(id) ?? "stopped";
    this.outcomes.delete(id);
    this.fences.delete(id);
    if (list === undefined) return;
    this.waiters.delete(id);
    for (const resolve of list) resolve(last);
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      this.closed = true;
      clearTimeout(this.retryTimer);
      // Models waiting to be resumed stay `training` in the store (resumed at the next start).
      for (const t of this.resumeTimers.values()) clearTimeout(t);
      this.resumeTimers.clear();
      // Waiting models stay `training` in the store and are queued again at the next start.
      for (const t of this.queue.waitingTickets()) this.queue.remove(t.id);
      const pending = [...this.training.entries()];
      await Promise.allSettled(pending.map(([id]) => this.run({ op: "halt", id }, id)));
      await Promise.allSettled(pending.map(([, p]) => p));
      await this.pool.close();
      for (const id of [...this.waiters.keys()]) this.settleWaiters(id, "halted");
      this.log?.info("engine stopped");
    })();
    return this.closing;
  }

  /**
   * Asks one worker for its backend (initialising tfjs there) and compute path, brings up the
   * others, and measures the process's own footprint: the admission base.
   * @throws Error when the memory budget leaves nothing for training.
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
 * Starts the engine: a pool of `workers` worker threads, each with its own store (on `dataDir`, or
 * `databaseUrl`) and
 * its own tfjs backend (`tensorflow` when tfjs-node is installed, else `wasm`, else `cpu`; the
 * choice is logged), training and generating on `opts.compute` (default: the native core when it
 * loads; all workers share the core's one thread pool, so concurrent models never oversubscribe
 * the cores). Resolves once every worker has initialised its backend and the admission base
 * is measured (see the module comment).
 * @throws Error when the workers cannot start, or `memoryBudget` is not above the server's own
 *   footprint; RangeError for limits out of range (`maxTrainingPerOrg` >= 1, `maxQueuedPerOrg` >= 0).
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
