/**
 * The engine as the HTTP thread sees it (DESIGN §4). The server never trains or generates
 * itself: it stores the model record, then hands work to the engine, which runs it on piscina
 * worker threads (one actor per model, pinned to one worker).
 */
import type { GenerateRequest, Generation } from "../types";

/**
 * Thrown when the engine cannot take work (all workers down, queue full, shutting down).
 * The server maps it to 503 `training_service_unavailable` with `Retry-After`.
 */
export class EngineUnavailableError extends Error {
  constructor(message: string, readonly retryAfterSeconds = 5) {
    super(message);
    this.name = "EngineUnavailableError";
  }
}

/**
 * Thrown by {@link Engine.generate} when the request is valid JSON but cannot be served as given
 * (e.g. a latent row whose length differs from the model's `embedding_dim`). `param` is the
 * contract's parameter path, e.g. `body.embedding[3]`. The server maps it to 400 `parameter_invalid`.
 */
export class GenerateInputError extends Error {
  constructor(message: string, readonly param: string) {
    super(message);
    this.name = "GenerateInputError";
  }
}

/** What the HTTP server calls (implemented by `createEngine` in `./index`). */
export interface Engine {
  /** The compute device models train on (`config.device`), e.g. `cpu`. */
  readonly device: string;
  /**
   * Starts (or resumes from its last checkpoint) training of model `id`, whose record (status
   * `training`) and metadata are already in the store. Returns once the work is queued; progress,
   * `ready` and `failed` are written to the store by the worker.
   * @throws EngineUnavailableError when no worker can take it.
   */
  train(id: string): Promise<void>;
  /**
   * Generates rows from model `id` (status `training`: latest weights; `ready`: final weights).
   * @throws GenerateInputError for input the model cannot take; EngineUnavailableError.
   */
  generate(id: string, req: GenerateRequest): Promise<Generation>;
  /** Stops training of `id` (if any) and frees its weights. Idempotent. */
  stop(id: string): Promise<void>;
  /** Resumes every model left in `training` (after a restart or crash). Called once at start-up. */
  resumeAll(): Promise<number>;
  /** Stops the workers; in-flight training stays `training` in the store and resumes next start. */
  close(): Promise<void>;
}

/**
 * Thrown by {@link Engine.generate} when the model vanished (`model_not_found`) or left the states
 * that can generate (`model_not_ready`, with its `status`) between the server's check and the
 * worker's: a race with delete or a training failure. The server maps `code` to the contract's
 * 404 / 400.
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
