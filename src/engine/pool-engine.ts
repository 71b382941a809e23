/**
 * The local engine as its owners see it ({@link PoolEngine}: the {@link Engine} contract plus
 * introspection), the options of `createEngine` and their defaults. The implementation is
 * `local-engine.ts`.
 */
import type { Logger } from "pino";
import type { Store } from "../store";
import type { GenerateRequest, Metadata, ModelConfig } from "../contract";
import type { BackendName, ComputeKind } from "../model";
import type { MemoryEstimate } from "./admission/estimate";
import type { Ticket } from "./admission/queue";
import type { CheckedGeneration, InfoReply, TrainReply } from "./protocol";
import type { Engine, RawGeneration } from "./engine";

/** Times a model's training is resumed after its worker died, before it is marked failed. */
export const MAX_TRAIN_RESTARTS = 2;
/** Default number of idle `ready` generators each worker keeps in memory (LRU). */
export const DEFAULT_IDLE_MODELS_PER_WORKER = 4;
/** Default bound of the pool's task queue; beyond it work is refused with EngineUnavailableError. */
export const DEFAULT_MAX_QUEUE = 1024;
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
  /** PostgreSQL connection URL of `store` when it is the shared store. */
  databaseUrl?: string;
  /** Worker threads; default `os.availableParallelism()`. */
  workers?: number;
  logger?: Logger;
  /** Idle ready models per worker kept in memory; default {@link DEFAULT_IDLE_MODELS_PER_WORKER}. */
  idleModelsPerWorker?: number;
  /** Task queue bound; default {@link DEFAULT_MAX_QUEUE}. */
  maxQueue?: number;
  /**
   * Compute path of training and generation: `native` (the C++ core, src/model/compute/native-core.ts) or
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
  generateRaw(id: string, req: GenerateRequest, checked?: CheckedGeneration): Promise<RawGeneration>;
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

