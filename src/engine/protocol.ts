/**
 * Messages between the engine (main thread, `index.ts`) and its worker threads (`worker.ts`).
 * Every task names the model it concerns; the pool's load balancer routes it to the one worker
 * that model is pinned to (its actor lives there). Tasks are structured-cloned; latents and
 * generated codes travel as transferred typed arrays.
 */
import type { SeededSource } from "../model";
import type { ModelSize } from "../contract";

/** Start or resume training of a model whose record says `training` (reply: {@link TrainReply}). */
export interface TrainTask {
  op: "train";
  id: string;
  /**
   * Fencing token of this training (`Store.claimTraining`), shared store only: every progress
   * and checkpoint write carries it, so a worker that lost the job cannot overwrite newer state.
   */
  fence?: number;
}

/**
 * A generate request checked against its model on the calling thread (`generate-task.ts`
 * `checkGenerate`): how the worker draws the rows. Exactly one of `latents` / `numRows` /
 * `seeded` is set.
 */
export interface GenerateInput {
  /** Given latents, n x E row-major (transferred). */
  latents?: Float32Array;
  /** Server-drawn latents: rows and optional seed. */
  numRows?: number;
  /**
   * Seeded generation: conditions checked and in the model's feature order
   * (`src/model/conditional/seeded-input.ts`), run by `src/engine/worker/seeded-draw.ts` with `seed`.
   */
  seeded?: SeededSource;
  seed?: number;
  /** With numRows: calibrated generation (`src/model/sampling/calibrate.ts`). */
  calibrate?: boolean;
  temperature: number;
  topP: number | null;
}

/**
 * What a worker needs of the model's record, as the caller read it: the status (which weights:
 * the live or last ones while `training`, the final ones when `ready`), the generator's shape
 * (for loading a checkpoint) and the privacy noise of its draws. The worker does not read the
 * record again.
 */
export interface GenerateModel {
  status: "training" | "ready";
  modelSize: ModelSize;
  embeddingDim: number;
  /** `config.privacy_noise` when `config.privacy_enabled`, else 0. */
  privacyNoise: number;
}

/**
 * A generate request checked against its model, by whoever read the model's record (the Generate
 * handler, or `generate-task.ts` `readAndCheck`): what the engine runs without reading it again.
 */
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
 * `stop`: abort training, free the model's memory on this worker (delete, or an explicit stop).
 * `halt`: abort training and free, leaving the stored status `training` (engine shutdown).
 * Both resolve after the training loop has exited.
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
 * How a training task ended: `ready`/`failed` (stored), `stopped`/`halted` (aborted by a task),
 * `deleted` (the record vanished), `skipped` (the record was not in `training`, or this worker
 * already trains it), `superseded` (fenced writes refused: another worker claimed the training).
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

/** A worker's state: tfjs backend, compute path, thread, models with a running actor or cached weights, tensor memory. */
export interface InfoReply {
  backend: string;
  /** The compute path this worker trains and generates with (`native` falls back to `tfjs` when the core is missing). */
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
