/**
 * The engine as the HTTP thread sees it. The server never trains or generates
 * itself: it stores the model record, then hands work to the engine, which runs it on piscina
 * worker threads (one actor per model, pinned to one worker).
 */
import type { GenerateRequest, Generation, Metadata, ModelConfig } from "../contract";
import { ParamError } from "../contract/errors";
import type { CheckedGeneration } from "./protocol";

/**
 * Thrown when the engine cannot take work (all workers down, queue full, shutting down). The
 * server maps it to 503 `training_service_unavailable` with `Retry-After` (`retryAfterSeconds`).
 * `publicReason`, when set, is a sentence for the client (it becomes the error message, followed
 * by the wait); otherwise the message is generic and `message` is only logged.
 */
export class EngineUnavailableError extends Error {
  constructor(
    message: string,
    readonly retryAfterSeconds = 5,
    readonly publicReason?: string,
  ) {
    super(message);
    this.name = "EngineUnavailableError";
  }
}

/**
 * Thrown by {@link Engine.admissionCheck} when the model would have to wait and its organization
 * already has `limit` models waiting to train (`--max-queued-per-org`). The organization's own
 * pace, not the server's condition: the server maps it to 429 `rate_limit_exceeded` with
 * `Retry-After` (`retryAfterSeconds`); `message` is the sentence for the client (the wait is
 * appended).
 */
export class OrgQueueFullError extends Error {
  constructor(
    message: string,
    /** The per-organization bound of waiting models. */
    readonly limit: number,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
    this.name = "OrgQueueFullError";
  }
}

/**
 * Thrown by {@link Engine.admissionCheck} for a model this server can never train: its memory
 * estimate exceeds the whole training budget (or its generator exceeds the compute core's 2^30
 * parameters). A {@link ParamError}: `param` is the config or metadata field that dominates the
 * estimate, e.g. `body.config.batch_size`; the message gives the estimate, the budget and what to
 * lower. The server maps it to 400 `parameter_invalid`.
 */
export class ModelTooLargeError extends ParamError {
  constructor(
    message: string,
    param: string,
    /** The model's estimate, bytes. */
    readonly estimateBytes: number,
    /** The server's training budget, bytes. */
    readonly budgetBytes: number,
  ) {
    super(message, param);
    this.name = "ModelTooLargeError";
  }
}

/** What the HTTP server calls (implemented by `createEngine` in `./index`). */
export interface Engine {
  /** The compute device models train on by default (`config.device`), e.g. `cpu`. */
  readonly device: string;
  /**
   * GPU 0's name (e.g. `NVIDIA H200`) when this engine's workers found the CUDA compute core and a
   * GPU (docs/compute.md "The GPU path"), else undefined: `config.device` `auto` (the default)
   * then trains on the CPU and `gpu` is refused at create.
   */
  readonly gpu?: string;
  /**
   * Admission control at Create Model, before anything is stored (src/engine/admission/estimate.ts): may a
   * model of `org` with this effective `config` and `metadata` be accepted? Returns when it may
   * (it then starts at once or waits in the training queue); the answer is remembered until the
   * model's {@link train} call (or a minute), so concurrent creates count each other.
   * @throws ModelTooLargeError when its memory estimate exceeds this server's whole training
   *   budget (it could never train here).
   * @throws OrgQueueFullError (429 with `Retry-After`) when it would have to wait and `org`
   *   already has the most waiting models the server allows.
   * @throws EngineUnavailableError when the engine is shutting down.
   */
  admissionCheck(config: ModelConfig, metadata: Metadata, org: string): void;
  /**
   * Queues training of model `id` (or its resumption from its last checkpoint), whose record
   * (status `training`) and metadata are already in the store. It starts when the memory budget
   * and its org's limit of concurrently training models allow (FIFO by create time, see
   * src/engine/admission/queue.ts); until then it stays `training` with no progress. Returns once
   * queued; progress, `ready` and `failed` are written to the store by the worker. A model that
   * can never fit the budget is marked `failed`.
   * @throws EngineUnavailableError when the engine is shutting down or its task queue is full.
   */
  train(id: string): Promise<void>;
  /**
   * Generates rows from model `id` (status `training`: latest weights; `ready`: final weights).
   * `checked`: the request as the caller already checked it against the model's record
   * (`generate-task.ts` `checkGenerate`); the engine then runs it as it is, without reading the
   * record again. Without it the engine reads the record and checks the request itself.
   * @throws EngineModelError when the model does not exist or cannot generate (read here, or by
   *   the worker); ParamError (`src/contract/errors.ts`) for input the model cannot take;
   *   EngineUnavailableError.
   */
  generate(id: string, req: GenerateRequest, checked?: CheckedGeneration): Promise<Generation>;
  /**
   * `generate` with the codes as Int32Array views (no conversion to plain arrays), for responses
   * that serialise them themselves (Arrow, the shared topology's wire). Same arguments and errors.
   */
  generateRaw(id: string, req: GenerateRequest, checked?: CheckedGeneration): Promise<RawGeneration>;
  /**
   * Stops training of `id` (if any; a waiting model leaves the queue) and frees its weights.
   * Idempotent. A waiting model leaves the queue synchronously, before the first await; a
   * training one stops at its step boundary, and the promise resolves once its memory is freed
   * (up to one training step later). Delete Model removes the model from the store first and does
   * not wait for this: the training's next write finds no model and writes nothing.
   */
  stop(id: string): Promise<void>;
  /**
   * Queues every model left in `training` (after a restart or crash), oldest first, through the
   * same budget and limits as new models (never all at once). Called once at start-up. Returns
   * the number queued.
   */
  resumeAll(): Promise<number>;
  /** Stops the workers; in-flight training stays `training` in the store and resumes next start. */
  close(): Promise<void>;
}

/**
 * Thrown by {@link Engine.generate} when the model does not exist (`model_not_found`) or is not in
 * a state that can generate (`model_not_ready`, with its `status`), as the engine read its record
 * (a caller that passed none), or when the worker found it deleted while loading its weights. The
 * server maps `code` to the contract's 404 / 400.
 */
export class EngineModelError extends Error {
  constructor(
    message: string,
    readonly code: "model_not_found" | "model_not_ready",
    readonly status?: string,
  ) {
    super(message);
    this.name = "EngineModelError";
  }
}

/**
 * A generation with its codes as typed arrays: `columns[f]` holds the `num_rows` codes of feature
 * f (often views into one shared buffer). What `Engine.generateRaw` returns and the Arrow
 * response and the shared topology's wire serialise.
 */
export interface RawGeneration {
  model_id: string;
  num_rows: number;
  features: string[];
  columns: Record<string, Int32Array>;
}

/** The contract's `Generation` of `raw`: each column copied into a plain `number[]`. */
export function toGeneration(raw: RawGeneration): Generation {
  const columns: Record<string, number[]> = {};
  for (const f of raw.features) columns[f] = Array.from(raw.columns[f]);
  return { model_id: raw.model_id, num_rows: raw.num_rows, features: raw.features, columns };
}
