/**
 * The engine (DESIGN §4): a piscina pool of worker threads; each model is an actor pinned to one
 * worker (`actor.ts`, `worker.ts`), so its weights live in exactly one thread and every task about
 * it (train, generate, stop) runs there. Heavy compute never runs on the HTTP thread.
 *
 * Placement: a custom piscina `loadBalancer` routes each task to the worker its model is pinned
 * to. A model is pinned on its first task to the live worker with the fewest models in training
 * (then the fewest pinned models); the pin is dropped when the model is stopped or its worker dies.
 * Training tasks stay pending until training ends, so `concurrentTasksPerWorker` is large: the
 * training loops yield between optimizer steps and generate/stop tasks interleave with them.
 *
 * Worker death policy: when a worker thread exits unexpectedly, each model that was training on
 * it is resumed from its last checkpoint on a live worker (piscina replaces the thread), at most
 * {@link MAX_TRAIN_RESTARTS} times per model and engine lifetime; after that the model is marked
 * `failed` with `error.code = "training_failed"`. So a model is never left in `training` with no
 * loop running while the server runs. A thread that died of a store outage (a full disk: lmdb-js's
 * "Commit failed", ENOSPC; see `isStoreOutage`) does not count: its models are resumed after a
 * backoff (`storeRetryDelay`: 0.5 s doubling to 10 s, per model, reset when its training ends)
 * however often it happens, keeping their reservations, so a full disk never fails a model. Generate tasks lost with the worker fail with
 * EngineUnavailableError (503, retry); idle `ready` models are simply reloaded from their
 * checkpoints on demand.
 *
 * Generation runs in the model's worker (live actor: latest weights while training; else the idle
 * LRU or the stored checkpoint: best weights once `ready`). Given latents are flattened and checked
 * here and transferred; the codes come back as one transferred Int32Array. `generate` returns the
 * contract's plain `number[]` columns; `generateRaw` returns Int32Array views for callers that
 * serialise them themselves. Seeded requests (`embedding.condition` / `embedding.seed_data`,
 * issue 12) are checked against the model's metadata and put in its feature order here
 * (`model/seeded-input.ts`); the worker draws them from the model's conditional (`./seeded`).
 *
 * Admission control (issue 11; `admission.ts`, `admission-queue.ts`): the process has a memory
 * budget (`memoryBudget`, default half the machine's memory). At start the engine measures its own
 * footprint (RSS once every worker is up, plus headroom); the rest is the training budget. Every
 * training model reserves its memory estimate while its task runs; `train(id)` queues the model
 * and it starts when its reservation fits and its org trains fewer than `maxTrainingPerOrg`
 * models (FIFO by create time; a model held back only by its org's limit does not hold back other
 * orgs; one that does not fit holds back those behind it). Create Model asks first
 * (`admissionCheck`): a model that can never fit is refused (ModelTooLargeError, 400), and one
 * that would wait while its org already has `maxQueuedPerOrg` waiting models (default 1,000) is
 * refused (OrgQueueFullError, 429 with Retry-After). A waiting model is a {@link Ticket} in memory
 * (id, org, estimate, create time); its metadata stays in the store until its task starts. The
 * reservation is released when the model's task ends (ready, failed, stopped, deleted) and the
 * queue advances; a waiting model that is stopped (deleted) leaves the queue at once, a training
 * one at its next step boundary (its reservation is held until then: the memory is in use).
 * Memory the process holds beyond its base and the reservations (measured RSS: caches and
 * buffers of finished models, garbage not yet collected) also counts against the budget; while
 * it holds back a waiting model the engine re-measures every {@link RETRY_BLOCKED_MS} ms and,
 * with nothing training, drops the workers' idle generator caches.
 * A worker death keeps the model's reservation while it is resumed (released once it fails for good).
 *
 * Shutdown (`close`): new work is refused (EngineUnavailableError), every training loop is halted
 * at a step boundary without touching the store (the models stay `training` and resume from their
 * last checkpoint at the next start, `resumeAll`), in-flight generations finish, the pool is
 * destroyed.
 */
import { availableParallelism } from "node:os";
import * as path from "node:path";
import { Piscina, queueOptionsSymbol } from "piscina";
import type { Logger } from "pino";
import { isStoreOutage, type ModelRecord, type Store } from "../store";
import type { GenerateRequest, Generation, Metadata, ModelConfig } from "../types";
import { deviceOf, type BackendName } from "../model/backend";
import { defaultCompute, type ComputeKind } from "../model/trainer";
import { InputError, latentSource } from "../model/generate";
import { isSeeded, seededSource, SeededInputError } from "../model/seeded-input";
import { storeRetryDelay, trainingFailed } from "./actor";
import { estimateTrainingMemory, explainTooLarge, MAX_PARAMS, type EstimateOptions, type MemoryEstimate } from "./admission";
import { BASE_HEADROOM_BYTES, DEFAULT_BUDGET_SHARE, formatBytes, machineMemory, WORKER_HEADROOM_BYTES } from "./budget";
import { AdmissionQueue, DEFAULT_MAX_QUEUED_PER_ORG, DEFAULT_MAX_TRAINING_PER_ORG, type Ticket } from "./admission-queue";
import type { GenerateReply, InfoReply, Task, TrainReply, WorkerConfig, WorkerLog } from "./protocol";
import { EngineModelError, EngineUnavailableError, GenerateInputError, ModelTooLargeError, OrgQueueFullError, toGeneration, type Engine, type RawGeneration } from "./types";

export { EngineModelError, EngineUnavailableError, GenerateInputError, ModelTooLargeError, OrgQueueFullError, toGeneration, type Engine, type RawGeneration } from "./types";
export { DEFAULT_MAX_QUEUED_PER_ORG, DEFAULT_MAX_TRAINING_PER_ORG } from "./admission-queue";

/** Times a model's training is resumed after its worker died, before it is marked failed. */
export const MAX_TRAIN_RESTARTS = 2;
/** Default number of idle `ready` generators each worker keeps in memory (LRU). */
export const DEFAULT_IDLE_MODELS_PER_WORKER = 4;
/** Default bound of the pool's task queue; beyond it work is refused with EngineUnavailableError. */
export const DEFAULT_MAX_QUEUE = 1024;
/** Retry-After (seconds) of a create refused because the org's queue is full (429). */
export const QUEUE_FULL_RETRY_AFTER_S = 30;
/** While memory outside the reservations holds back a waiting model, re-measure this often (ms). */
export const RETRY_BLOCKED_MS = 2000;

/** Options of {@link createEngine}. */
export interface EngineOptions {
  store: Store;
  /**
   * Where each worker thread opens its own store: the LMDB directory of `store`, or (shared store)
   * the PostgreSQL URL as `databaseUrl`.
   */
  dataDir: string;
  /** PostgreSQL connection URL of `store` when it is the shared store (issue 14). */
  databaseUrl?: string;
  /** Worker threads; default `os.availableParallelism()`. */
  workers?: number;
  logger?: Logger;
  /** Idle ready models per worker kept in memory; default {@link DEFAULT_IDLE_MODELS_PER_WORKER}. */
  idleModelsPerWorker?: number;
  /** Task queue bound; default {@link DEFAULT_MAX_QUEUE}. */
  maxQueue?: number;
  /**
   * Compute path of training and generation: `native` (the C++ core, src/model/native-core.ts) or
   * `tfjs`. Default: `native` when the addon's core loads, else `tfjs`. A worker that cannot load
   * the core falls back to `tfjs` and logs why; checkpoints are the same on both paths.
   */
  compute?: ComputeKind;
  /**
   * Memory budget of the whole process, bytes (`synthd serve --memory-budget`); default
   * {@link DEFAULT_BUDGET_SHARE} of `machineMemory()` (budget.ts).
   */
  memoryBudget?: number;
  /** Models one org trains at once; default {@link DEFAULT_MAX_TRAINING_PER_ORG}. */
  maxTrainingPerOrg?: number;
  /** Models one org may have waiting; default {@link DEFAULT_MAX_QUEUED_PER_ORG}. */
  maxQueuedPerOrg?: number;
}

/** Admission state of the engine (bytes), for logs, tests and diagnostics. */
export interface AdmissionState {
  /** The process's memory budget. */
  budgetBytes: number;
  /** Reserved for the process itself: its RSS at start plus headroom. */
  baseBytes: number;
  /** What training models may reserve: budget - base. */
  trainingBudgetBytes: number;
  /** Reserved by the running models. */
  reservedBytes: number;
  /** Measured beyond base and reservations at the last measurement. */
  unaccountedBytes: number;
  /** Models one org trains at once (count). */
  maxTrainingPerOrg: number;
  /** Models one org may have waiting (count). */
  maxQueuedPerOrg: number;
  /** Models whose training task runs, with their reservations. */
  running: Ticket[];
  /** Models waiting, in queue order. */
  waiting: Ticket[];
}


/** The engine of {@link createEngine}: the {@link Engine} contract plus introspection. */
export interface PoolEngine extends Engine {
  /** The tfjs backend the workers use (`tensorflow`, `wasm` or `cpu`). */
  readonly backend: BackendName;
  /** The compute path the workers use (`native` or `tfjs`). */
  readonly compute: ComputeKind;
  /** Number of worker threads. */
  readonly workers: number;
  /**
   * As {@link Engine.generate}, with the codes as Int32Arrays (no conversion to plain arrays), for
   * callers that serialise them themselves.
   */
  generateRaw(id: string, req: GenerateRequest): Promise<RawGeneration>;
  /**
   * Trains model `id` with an optional fencing token and resolves when this engine is done with
   * it, to the outcome (see the implementation; src/cluster/worker-host.ts holds a job on it).
   */
  trainToEnd(id: string, fence?: number): Promise<TrainReply["outcome"]>;
  /** Models currently training in this engine (their task runs). */
  trainingIds(): string[];
  /** Models accepted but waiting for memory or their org's limit, in queue order. */
  waitingIds(): string[];
  /** Budget, reservations and queue (see {@link AdmissionState}). */
  admission(): AdmissionState;
  /**
   * The memory estimate this engine uses for a model (admission.ts `estimateTrainingMemory` on
   * this engine's compute path and threads), bytes by part.
   * @throws MetadataError when a feature has no positive integer cardinality.
   */
  estimate(config: ModelConfig, metadata: Metadata): MemoryEstimate;
  /** Per-worker state (tests, diagnostics). */
  info(): Promise<InfoReply[]>;
  /** The worker threads (tests: simulate a crash by terminating one). */
  threads(): readonly import("node:worker_threads").Worker[];
}

/** A task carrying its model id where the load balancer can read it (piscina's queue options). */
type QueueTagged = { [queueOptionsSymbol]?: { modelId?: string } };
/** piscina's view of a worker as the load balancer sees it (the type is not exported by name). */
type PWorker = Parameters<NonNullable<NonNullable<ConstructorParameters<typeof Piscina>[0]>["loadBalancer"]>>[1][number];

class PiscinaEngine implements PoolEngine {
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
  /** The admission queue; its budget is set once the base is measured (`start`). */
  private readonly queue: AdmissionQueue;
  /** Reserved for the process itself (bytes): its RSS measured in `start` plus headroom. */
  private baseBytes = 0;
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
    this.queue = new AdmissionQueue({ budgetBytes: 0, maxTrainingPerOrg, maxQueuedPerOrg });
    const workerData: WorkerConfig = { ...where, idleModels, compute };
    this.pool = new Piscina({
      filename: path.join(__dirname, "worker.js"),
      minThreads: workers,
      maxThreads: workers,
      idleTimeout: Infinity,
      concurrentTasksPerWorker: 4096,
      maxQueue,
      atomics: "disabled",
      closeTimeout: 10_000,
      workerData,
      loadBalancer: (task, ws) => this.place(task as unknown as QueueTagged, ws),
    });
    this.pool.on("message", (m: WorkerLog) => {
      const l = m?.synthdLog;
      if (l && this.log) this.log[l.level](l.fields ?? {}, l.msg);
    });
    this.pool.on("error", (err: unknown) => this.log?.error({ err }, "engine worker error"));
    this.device = "cpu";
  }

  /** The load balancer: the pinned worker, else pin the least loaded live one. */
  private place(task: QueueTagged, workers: PWorker[]): PWorker | null {
    const live = workers.filter((w) => !w.terminating && !w.destroyed);
    if (live.length === 0) return null;
    const id = task[queueOptionsSymbol]?.modelId;
    if (id === undefined) return live.reduce((a, b) => (b.currentUsage < a.currentUsage ? b : a));
    const pinned = this.pins.get(id);
    const hit = pinned === undefined ? undefined : live.find((w) => w.id === pinned);
    if (hit) return hit;
    const trainingOn = new Map<number, number>();
    const pinnedOn = new Map<number, number>();
    for (const [m, t] of this.pins) {
      pinnedOn.set(t, (pinnedOn.get(t) ?? 0) + 1);
      if (this.training.has(m)) trainingOn.set(t, (trainingOn.get(t) ?? 0) + 1);
    }
    const score = (w: PWorker): number => (trainingOn.get(w.id) ?? 0) * 1e6 + (pinnedOn.get(w.id) ?? 0);
    const chosen = live.reduce((a, b) => (score(b) < score(a) ? b : a));
    this.pins.set(id, chosen.id);
    return chosen;
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
    const tagged: Task & QueueTagged = { ...task, [queueOptionsSymbol]: { modelId } };
    return this.pool.run(tagged, { transferList }) as Promise<R>;
  }

  /** The memory estimate of a model on this engine's compute path (admission.ts). */
  estimate(config: ModelConfig, metadata: Metadata): MemoryEstimate {
    return estimateTrainingMemory(config, metadata, this.estimateOptions());
  }

  private estimateOptions(): EstimateOptions {
    return { compute: this.compute, threads: this.computeThreads + this.workers };
  }

  /** How the training budget came about, for messages. */
  private budgetNote(): string {
    return `a memory budget of ${formatBytes(this.budgetBytes)} less ${formatBytes(this.baseBytes)} for the server itself`;
  }

  /** The error for a model that can never train here, or undefined when it can. */
  private tooLarge(config: ModelConfig, metadata: Metadata, est: MemoryEstimate): ModelTooLargeError | undefined {
    if (est.params <= MAX_PARAMS && this.queue.canEverFit(est.bytes)) return undefined;
    const budget = this.queue.currentLimits.budgetBytes;
    const { param, message } = explainTooLarge(config, metadata, budget, this.budgetNote(), this.estimateOptions());
    return new ModelTooLargeError(message, param, est.bytes, budget);
  }

  admissionCheck(config: ModelConfig, metadata: Metadata, org: string): void {
    this.ensureOpen();
    const est = this.estimate(config, metadata);
    const tooLarge = this.tooLarge(config, metadata, est);
    if (tooLarge) throw tooLarge;
    this.measure();
    if (this.queue.probe(org, est.bytes) === "full") {
      const n = this.queue.currentLimits.maxQueuedPerOrg;
      const reason =
        n === 0
          ? "The model cannot start now (the server's training memory or your organization's training slots are in use) and this server queues no models"
          : `Your organization already has ${n} model${n === 1 ? "" : "s"} waiting to train, the most this server queues per organization`;
      throw new OrgQueueFullError(`${reason}.`, n, QUEUE_FULL_RETRY_AFTER_S);
    }
    this.queue.hold(org, est.bytes, estimateKey(config));
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
    const tooLarge = this.tooLarge(rec.config, metadata, est);
    if (tooLarge) {
      this.markFailed(rec.id, tooLarge.message);
      return undefined;
    }
    return est.bytes;
  }

  /** Measures what the process holds beyond its base and the reservations (see the module comment). */
  private measure(): void {
    const rss = process.memoryUsage.rss();
    this.queue.setUnaccounted(rss - (this.baseBytes - BASE_HEADROOM_BYTES) - this.queue.reservedBytes);
  }

  /** Starts every waiting model the policy admits; re-checks later while unaccounted memory blocks one. */
  private pump(): void {
    if (this.closed) return;
    this.measure();
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

  async generateRaw(id: string, req: GenerateRequest): Promise<RawGeneration> {
    this.ensureOpen();
    const rec = await this.store.getModel(id);
    if (rec === undefined) throw new EngineModelError(`No such model: ${id}`, "model_not_found");
    if (rec.status !== "training" && rec.status !== "ready") {
      throw new EngineModelError(`Model ${id} is in state '${rec.status}'`, "model_not_ready", rec.status);
    }
    const temperature = req.temperature ?? 1;
    if (!(temperature > 0) || !Number.isFinite(1 / temperature)) throw new GenerateInputError("temperature must be > 0", "body.temperature");
    const topP = req.top_p ?? null;
    if (topP !== null && !(topP >= 0 && topP <= 1)) throw new GenerateInputError("top_p must be in [0, 1]", "body.top_p");
    let task: Task;
    let transfer: ArrayBuffer[] = [];
    try {
      const seeded = isSeeded(req.embedding) ? seededSource(req.embedding, await this.metadataOf(id)) : undefined;
      if (seeded) {
        // Seeded generation (issue 12): checked conditions in model order, run by engine/seeded.ts.
        task = { op: "generate", id, seeded, ...(seeded.seed !== undefined ? { seed: seeded.seed } : {}), temperature, topP };
      } else {
        const source = latentSource(req.embedding, rec.config.embedding_dim);
        if ("latents" in source) {
          task = { op: "generate", id, latents: source.latents, temperature, topP };
          transfer = [source.latents.buffer as ArrayBuffer];
        } else {
          task = { op: "generate", id, numRows: source.numRows, seed: source.seed, calibrate: source.calibrate === true, temperature, topP };
        }
      }
    } catch (err) {
      if (err instanceof InputError || err instanceof SeededInputError) throw new GenerateInputError(err.message, err.param);
      throw err;
    }
    let reply: GenerateReply;
    try {
      reply = await this.run(task, id, transfer);
    } catch (err) {
      if (err instanceof EngineUnavailableError) throw err;
      throw new EngineUnavailableError(`the model's worker is unavailable: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (!reply.ok) {
      if (reply.kind === "input") throw new GenerateInputError(reply.message, reply.param ?? "body.embedding");
      if (reply.kind === "not_found") throw new EngineModelError(reply.message, "model_not_found");
      if (reply.kind === "not_ready") throw new EngineModelError(reply.message, "model_not_ready", reply.status);
      throw new Error(reply.message);
    }
    const n = reply.num_rows;
    const columns: Record<string, Int32Array> = {};
    reply.features.forEach((f, i) => (columns[f] = reply.codes.subarray(i * n, (i + 1) * n)));
    return { model_id: reply.model_id, num_rows: n, features: reply.features, columns };
  }

  /** The model's features and cardinalities (its stored metadata), for seeded requests. */
  private async metadataOf(id: string): Promise<Metadata> {
    const meta = await this.store.getMetadata(id);
    if (meta === undefined) throw new Error(`model ${id} has no metadata`);
    return meta;
  }

  /** Plain-array columns (the Engine contract; `Generation.columns` are `number[]`). */
  async generate(id: string, req: GenerateRequest): Promise<Generation> {
    return toGeneration(await this.generateRaw(id, req));
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
      baseBytes: this.baseBytes,
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
    const startRss = process.memoryUsage.rss();
    this.baseBytes = startRss + BASE_HEADROOM_BYTES + this.workers * WORKER_HEADROOM_BYTES;
    const training = this.budgetBytes - this.baseBytes;
    if (training <= 0) {
      throw new Error(
        `the memory budget of ${formatBytes(this.budgetBytes)} leaves nothing for training: the server itself takes ` +
          `${formatBytes(this.baseBytes)} (RSS ${formatBytes(startRss)} at start, plus headroom); raise --memory-budget or lower --workers`,
      );
    }
    this.queue.setBudget(training);
    this.log?.info(
      {
        workers: this.workers,
        backend: this.backend,
        device: this.device,
        gpu: this.gpu ?? null,
        compute: this.compute,
        ...(reply.computeInfo ?? {}),
        memory_budget: this.budgetBytes,
        base_bytes: this.baseBytes,
        training_budget: training,
        max_training_per_org: this.queue.currentLimits.maxTrainingPerOrg,
        max_queued_per_org: this.queue.currentLimits.maxQueuedPerOrg,
      },
      "engine ready",
    );
  }
}

/** What a hold's estimate was computed from besides the metadata: the config fields it reads. */
function estimateKey(c: ModelConfig): string {
  return JSON.stringify([c.model_size, c.embedding_dim, c.batch_size, c.privacy_enabled, c.privacy_noise]);
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
  const engine = new PiscinaEngine(
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
