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
 * loop running while the server runs. Generate tasks lost with the worker fail with
 * EngineUnavailableError (503, retry); idle `ready` models are simply reloaded from their
 * checkpoints on demand.
 *
 * Generation runs in the model's worker (live actor: latest weights while training; else the idle
 * LRU or the stored checkpoint: best weights once `ready`). Given latents are flattened and checked
 * here and transferred; the codes come back as one transferred Int32Array. `generate` returns the
 * contract's plain `number[]` columns; `generateRaw` returns Int32Array views for callers that
 * serialise them themselves.
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
import type { Store } from "../store";
import type { GenerateRequest, Generation } from "../types";
import { deviceOf, type BackendName } from "../model/backend";
import { defaultCompute, type ComputeKind } from "../model/trainer";
import { InputError, latentSource } from "../model/generate";
import { trainingFailed } from "./actor";
import type { GenerateReply, InfoReply, Task, TrainReply, WorkerConfig, WorkerLog } from "./protocol";
import { EngineModelError, EngineUnavailableError, GenerateInputError, type Engine } from "./types";

export { EngineModelError, EngineUnavailableError, GenerateInputError, type Engine } from "./types";

/** Times a model's training is resumed after its worker died, before it is marked failed. */
export const MAX_TRAIN_RESTARTS = 2;
/** Default number of idle `ready` generators each worker keeps in memory (LRU). */
export const DEFAULT_IDLE_MODELS_PER_WORKER = 4;
/** Default bound of the pool's task queue; beyond it work is refused with EngineUnavailableError. */
export const DEFAULT_MAX_QUEUE = 1024;

/** Options of {@link createEngine}. */
export interface EngineOptions {
  store: Store;
  /** The LMDB directory of `store` (each worker opens its own Store on it). */
  dataDir: string;
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
}

/** A generation with codes as typed arrays (`columns[f]` is a view into one shared buffer). */
export interface RawGeneration {
  model_id: string;
  num_rows: number;
  features: string[];
  columns: Record<string, Int32Array>;
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
  /** Models currently training in this engine. */
  trainingIds(): string[];
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
  private readonly pool: Piscina;
  private readonly log: Logger | undefined;
  /** model id -> threadId of the worker holding its actor / cached weights. */
  private readonly pins = new Map<string, number>();
  /** Models whose training task is pending. */
  private readonly training = new Map<string, Promise<TrainReply>>();
  private readonly restarts = new Map<string, number>();
  private closed = false;
  private closing: Promise<void> | undefined;
  backend: BackendName = "wasm";
  compute: ComputeKind;

  constructor(
    private readonly store: Store,
    dataDir: string,
    readonly workers: number,
    private readonly maxQueue: number,
    idleModels: number,
    logger: Logger | undefined,
    compute: ComputeKind,
  ) {
    this.log = logger;
    this.compute = compute;
    const workerData: WorkerConfig = { dataDir, idleModels, compute };
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
  private current(id: string): ReturnType<Store["getModel"]> {
    this.store.root.resetReadTxn();
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

  async train(id: string): Promise<void> {
    this.ensureOpen();
    if (this.training.has(id)) return;
    // Refuse here, not through the task's rejection (which would read as a lost worker).
    if (this.pool.queueSize >= this.maxQueue) throw new EngineUnavailableError("the engine's queue is full");
    const p = this.run<TrainReply>({ op: "train", id }, id);
    this.training.set(id, p);
    p.then(
      (reply) => this.trainEnded(id, p, reply),
      (err: unknown) => this.trainLost(id, p, err),
    );
  }

  private trainEnded(id: string, p: Promise<TrainReply>, reply: TrainReply): void {
    if (this.training.get(id) === p) this.training.delete(id);
    this.log?.debug({ model_id: id, outcome: reply.outcome, epoch: reply.epoch, message: reply.message }, "training task ended");
    if (reply.outcome === "deleted" && !this.closed && this.current(id)?.status === "training") {
      // The worker did not see a record that exists (should not happen: it renews its snapshot per task).
      this.trainLost(id, p, new Error("the worker could not read the model's record"));
      return;
    }
    if (reply.outcome !== "ready" && reply.outcome !== "skipped") this.pins.delete(id);
    if (reply.outcome === "ready" || reply.outcome === "failed") this.restarts.delete(id);
  }

  /** The training task was lost with its worker (or the pool): resume or fail, see the module comment. */
  private trainLost(id: string, p: Promise<TrainReply>, err: unknown): void {
    if (this.training.get(id) === p) this.training.delete(id);
    this.pins.delete(id);
    if (this.closed) return;
    const message = err instanceof Error ? err.message : String(err);
    const rec = this.current(id);
    if (rec === undefined || rec.status !== "training") return;
    const n = (this.restarts.get(id) ?? 0) + 1;
    this.restarts.set(id, n);
    if (n <= MAX_TRAIN_RESTARTS) {
      this.log?.warn({ model_id: id, err: message, attempt: n }, "training worker lost; resuming from the last checkpoint");
      this.train(id).catch((e: unknown) => this.markFailed(id, `training could not be resumed: ${String(e)}`));
    } else {
      this.markFailed(id, `the training worker thread exited unexpectedly ${n} times (last: ${message})`);
    }
  }

  private markFailed(id: string, message: string): void {
    this.log?.error({ model_id: id, err: message }, "training failed");
    const rec = this.current(id);
    if (rec?.status !== "training") return;
    this.store.updateModel(id, { status: "failed", error: trainingFailed(message) }).catch((e: unknown) =>
      this.log?.error({ model_id: id, err: e }, "could not store a training failure"),
    );
  }

  async generateRaw(id: string, req: GenerateRequest): Promise<RawGeneration> {
    this.ensureOpen();
    const rec = this.store.getModel(id);
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
      const source = latentSource(req.embedding, rec.config.embedding_dim);
      if ("latents" in source) {
        task = { op: "generate", id, latents: source.latents, temperature, topP };
        transfer = [source.latents.buffer as ArrayBuffer];
      } else {
        task = { op: "generate", id, numRows: source.numRows, seed: source.seed, calibrate: source.calibrate === true, temperature, topP };
      }
    } catch (err) {
      if (err instanceof InputError) throw new GenerateInputError(err.message, err.param);
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

  /** Plain-array columns (the Engine contract; `Generation.columns` are `number[]`). */
  async generate(id: string, req: GenerateRequest): Promise<Generation> {
    const raw = await this.generateRaw(id, req);
    const columns: Record<string, number[]> = {};
    for (const f of raw.features) columns[f] = Array.from(raw.columns[f]);
    return { model_id: raw.model_id, num_rows: raw.num_rows, features: raw.features, columns };
  }

  async stop(id: string): Promise<void> {
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
    const ids = this.store.modelsWithStatus("training").map((m) => m.id);
    for (const id of ids) await this.train(id);
    if (ids.length > 0) this.log?.info({ models: ids.length }, "resuming training");
    return ids.length;
  }

  trainingIds(): string[] {
    return [...this.training.keys()];
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

  close(): Promise<void> {
    this.closing ??= (async () => {
      this.closed = true;
      const pending = [...this.training.entries()];
      await Promise.allSettled(pending.map(([id]) => this.run({ op: "halt", id }, id)));
      await Promise.allSettled(pending.map(([, p]) => p));
      await this.pool.close();
      this.log?.info("engine stopped");
    })();
    return this.closing;
  }

  /** Asks one worker for its backend (initialising tfjs there) and compute path. */
  async start(): Promise<void> {
    const reply = await this.run<InfoReply>({ op: "info" }, undefined);
    this.backend = reply.backend as BackendName;
    (this as { device: string }).device = deviceOf(this.backend);
    if (reply.compute !== this.compute) {
      this.log?.warn({ asked: this.compute, used: reply.compute }, "native compute core unavailable in the workers; using tfjs");
      this.compute = reply.compute;
    }
    this.log?.info(
      { workers: this.workers, backend: this.backend, device: this.device, compute: this.compute, ...(reply.computeInfo ?? {}) },
      "engine ready",
    );
  }
}

/**
 * Starts the engine: a pool of `workers` worker threads, each with its own Store on `dataDir` and
 * its own tfjs backend (`tensorflow` when tfjs-node is installed, else `wasm`, else `cpu`; the
 * choice is logged), training and generating on `opts.compute` (default: the native core when it
 * loads; all workers share the core's one thread pool, so concurrent models never oversubscribe
 * the cores). Resolves once a worker has initialised its backend.
 * @throws Error when the workers cannot start.
 */
export async function createEngine(opts: EngineOptions): Promise<PoolEngine> {
  const workers = Math.max(1, Math.floor(opts.workers ?? availableParallelism()));
  const engine = new PiscinaEngine(
    opts.store,
    opts.dataDir,
    workers,
    opts.maxQueue ?? DEFAULT_MAX_QUEUE,
    opts.idleModelsPerWorker ?? DEFAULT_IDLE_MODELS_PER_WORKER,
    opts.logger,
    opts.compute ?? defaultCompute(),
  );
  try {
    await engine.start();
  } catch (err) {
    await engine.close().catch(() => undefined);
    throw err;
  }
  return engine;
}
