/** The local engine as its owners see it ({@link PoolEngine}); `createEngine`'s options. */
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
/** Default bound of the pool's task queue; beyond it EngineUnavailableError. */
export const DEFAULT_MAX_QUEUE = 1024;
/** While memory outside the reservations holds back a waiting model, re-measure this often (ms). */
export const RETRY_BLOCKED_MS = 2000;

/** Options of {@link createEngine}. */
export interface EngineOptions {
  store: Store;
  /** Where each worker opens its own store: `store`'s LMDB directory, or `databaseUrl`. */
  dataDir: string;
  /** PostgreSQL connection URL of `store` when it is the shared store. */
  databaseUrl?: string;
  /** Worker threads; default `os.availableParallelism()`. */
  workers?: number;
  logger?: Logger;
  /** Idle ready models kept per worker; default {@link DEFAULT_IDLE_MODELS_PER_WORKER}. */
  idleModelsPerWorker?: number;
  /** Task queue bound; default {@link DEFAULT_MAX_QUEUE}. */
  maxQueue?: number;
  /**
   * `native` (the C++ core, default when it loads) or `tfjs`; a worker that cannot load the core
   * falls back to `tfjs` and logs why (checkpoints are the same).
   */
  compute?: ComputeKind;
  /** Process memory budget, bytes (`--memory-budget`); default {@link DEFAULT_BUDGET_SHARE}. */
  memoryBudget?: number;
  /** Models one org trains at once; default {@link DEFAULT_MAX_TRAINING_PER_ORG}. */
  maxTrainingPerOrg?: number;
  /** Models one org may have waiting; default {@link DEFAULT_MAX_QUEUED_PER_ORG}. */
  maxQueuedPerOrg?: number;
}

/** Admission state of the engine (bytes), for logs, tests and diagnostics. */
export interface AdmissionState {
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
  /** {@link Engine.generate} with Int32Array codes, for callers that serialise them. */
  generateRaw(id: string, req: GenerateRequest, checked?: CheckedGeneration): Promise<RawGeneration>;
  /** Trains `id` (optional fence) and resolves to the outcome (worker-host holds a job on it). */
  trainToEnd(id: string, fence?: number): Promise<TrainReply["outcome"]>;
  /** Models currently training in this engine (their task runs). */
  trainingIds(): string[];
  /** Models accepted but waiting for memory or their org's limit, in queue order. */
  waitingIds(): string[];
  /** Budget, reservations and queue (see {@link AdmissionState}). */
  admission(): AdmissionState;
  /**
   * This engine's estimate for a model (compute path and threads), bytes by part.
   * @throws MetadataError when a feature has no positive integer cardinality.
   */
  estimate(config: ModelConfig, metadata: Metadata): MemoryEstimate;
  /** Per-worker state (tests, diagnostics). */
  info(): Promise<InfoReply[]>;
  /** The worker threads (tests: simulate a crash by terminating one). */
  threads(): readonly import("node:worker_threads").Worker[];
}

