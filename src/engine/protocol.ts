/**
 * Messages between the engine (main thread) and its workers. Every task names its model; the load
 * balancer routes it to the worker that model is pinned to. Tasks are structured-cloned; latents
 * and codes travel as transferred typed arrays.
 */
import type { SeededSource } from "../model";
import type { ModelSize } from "../contract";

/** Start or resume training of a model whose record says `training` (reply: {@link TrainReply}). */
export interface TrainTask {
  op: "train";
  id: string;
  /** Fencing token (shared store): writes of a worker that lost the job cannot land. */
  fence?: number;
}

/**
 * A generate request checked on the calling thread (`checkGenerate`): how the worker draws.
 * Exactly one of `latents` / `numRows` / `seeded` is set.
 */
export interface GenerateInput {
  /** Given latents, n x E row-major (transferred). */
  latents?: Float32Array;
  /** Server-drawn latents: rows and optional seed. */
  numRows?: number;
  /** Seeded: checked conditions in feature order, run by `worker/seeded-draw.ts` with `seed`. */
  seeded?: SeededSource;
  seed?: number;
  /** With numRows: calibrated generation (`src/model/sampling/calibrate.ts`). */
  calibrate?: boolean;
  temperature: number;
  topP: number | null;
}

/**
 * What a worker needs of the record as the caller read it: status (live or last weights while
 * `training`, final when `ready`), generator shape, privacy noise; it does not read it again.
 */
export interface GenerateModel {
  status: "training" | "ready";
  modelSize: ModelSize;
  embeddingDim: number;
  /** `config.privacy_noise` when `config.privacy_enabled`, else 0. */
  privacyNoise: number;
}

/** A generate request checked against its model by whoever read the record. */
export interface CheckedGeneration {
  model: GenerateModel;
  input: GenerateInput;
}

/** Generate rows (reply: {@link GenerateReply}). */
export interface GenerateTask extends GenerateInput {
  op: "generate";
  id: string;
  model: GenerateModel;
}

/**
 * `stop`: abort training and free the model here (delete or stop). `halt`: the same, leaving the
 * stored status `training` (shutdown). Both resolve after the loop has exited.
 */
export interface StopTask {
  op: "stop" | "halt";
  id: string;
}

/** Backend and memory of a worker (reply: {@link InfoReply}). */
export interface InfoTask {
  op: "info";
}

/** Every task a worker handles. */
export type Task = TrainTask | GenerateTask | StopTask | InfoTask;

/**
 * How a training task ended: `ready`/`failed` (stored), `stopped`/`halted` (aborted), `deleted`,
 * `skipped` (not `training`, or already trained here), `superseded` (another worker claimed it).
 */
export interface TrainReply {
  outcome: "ready" | "failed" | "stopped" | "halted" | "deleted" | "skipped" | "superseded";
  epoch?: number;
  message?: string;
}

/** Result of a generate task: codes F x n, column-major (feature f at `[f * n, (f + 1) * n)`). */
export type GenerateReply =
  | { ok: true; model_id: string; num_rows: number; features: string[]; codes: Int32Array }
  | { ok: false; kind: "not_found" | "internal"; message: string }
  /** A bad parameter: the fields of the `ParamError` (`src/contract/errors.ts`), as they are. */
  | { ok: false; kind: "param"; param: string; message: string };

/** A worker's state: backend, compute path, thread, models held, tensor memory. */
export interface InfoReply {
  backend: string;
  /** Compute path (`native` falls back to `tfjs` when the core is missing). */
  compute: "tfjs" | "native";
  /** The native core's kernels and pool size, when `compute` is `native`. */
  computeInfo?: { isa: string; kernel: string; threads: number };
  /** GPU 0's name when the native core's CUDA library loaded and found a GPU; else absent. */
  gpu?: string;
  threadId: number;
  actors: string[];
  cached: string[];
  numTensors: number;
  numBytes: number;
}

/** Data every worker gets at start-up (`workerData`). */
export interface WorkerConfig {
  /** The embedded store's LMDB directory (unused with `databaseUrl`). */
  dataDir: string;
  /** The shared store's PostgreSQL URL: each worker thread opens its own PgStore. */
  databaseUrl?: string;
  /** Compute path of training and generation (`synthd serve --compute`). */
  compute: "tfjs" | "native";
  /** Idle ready models kept in memory per worker (LRU). */
  idleModels: number;
}

/** A log line a worker posts to the main thread, which writes it with the engine's logger. */
export interface WorkerLog {
  synthdLog: { level: "debug" | "info" | "warn" | "error"; msg: string; fields?: Record<string, unknown> };
}
