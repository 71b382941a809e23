/**
 * The engine as the HTTP thread sees it: the server stores the model record and hands the work to
 * the engine, which runs it on piscina worker threads (one actor per model, pinned to one worker).
 */
import type { GenerateRequest, Generation, Metadata, ModelConfig } from "../contract";
import { ParamError } from "../contract/errors";
import type { CheckedGeneration } from "./protocol";

/**
 * The engine cannot take work (workers down, queue full, shutting down): 503
 * `training_service_unavailable` with `Retry-After`. `publicReason`: the client's message;
 * otherwise the message is generic and `message` only logged.
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
 * {@link Engine.admissionCheck}: the model would wait and its org already has `limit` models
 * waiting (`--max-queued-per-org`): 429 `rate_limit_exceeded` with `Retry-After`, `message` for
 * the client (the org's own pace, not the server's condition).
 */
export class OrgQueueFullError extends Error {
  constructor(
    message: string,
    readonly limit: number,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
    this.name = "OrgQueueFullError";
  }
}

/**
 * {@link Engine.admissionCheck}: a model this server can never train (estimate over the whole
 * budget, or over 2^30 parameters): 400 `parameter_invalid`, `param` the dominating field.
 */
export class ModelTooLargeError extends ParamError {
  constructor(
    message: string,
    param: string,
  /** Estimate and budget, bytes. */
    readonly estimateBytes: number,
    readonly budgetBytes: number,
  ) {
    super(message, param);
    this.name = "ModelTooLargeError";
  }
}

/** What the HTTP server calls (implemented by `createEngine` in `./index`). */
export interface Engine {
  /** The default compute device (`config.device`), e.g. `cpu`. */
  readonly device: string;
  /**
   * GPU 0's name (e.g. `NVIDIA H200`) when the workers found the CUDA core and a GPU
   * (docs/compute.md "The GPU path"); else undefined: `auto` trains on CPU, `gpu` is refused.
   */
  readonly gpu?: string;
  /**
   * Admission at Create Model, before anything is stored (`admission/`); returns when the model
   * may be accepted. The answer is held until its {@link train} (or a minute), so concurrent
   * creates count each other.
   * @throws ModelTooLargeError (can never fit), OrgQueueFullError, EngineUnavailableError.
   */
  admissionCheck(config: ModelConfig, metadata: Metadata, org: string): void;
  /**
   * Queues training (or resumption) of model `id`, record and metadata already stored; it starts
   * when budget and org limit allow (`admission/queue.ts`) and stays `training` meanwhile. The
   * worker writes progress, `ready` and `failed`; a model that can never fit is marked `failed`.
   * @throws EngineUnavailableError when shutting down or the task queue is full.
   */
  train(id: string): Promise<void>;
  /**
   * Generates rows from model `id` (`training`: latest weights; `ready`: final). `checked`: the
   * request as already checked (`checkGenerate`), run as is; otherwise the engine checks it.
   * @throws EngineModelError, ParamError (input the model cannot take), EngineUnavailableError.
   */
  generate(id: string, req: GenerateRequest, checked?: CheckedGeneration): Promise<Generation>;
  /** `generate` with Int32Array views, for Arrow and the shared topology's wire. Same errors. */
  generateRaw(id: string, req: GenerateRequest, checked?: CheckedGeneration): Promise<RawGeneration>;
  /**
   * Stops training of `id` and frees its weights; idempotent. A waiting model leaves the queue
   * synchronously, before the first await; a training one at its step boundary, resolving once
   * its memory is freed. Delete Model does not wait: the next write finds no model.
   */
  stop(id: string): Promise<void>;
  /** At start-up: queues every model left `training`, oldest first, through the budget. */
  resumeAll(): Promise<number>;
  /** Stops the workers; in-flight training stays `training` in the store and resumes next start. */
  close(): Promise<void>;
}

/**
 * {@link Engine.generate}: the model does not exist (`model_not_found`) or cannot generate
 * (`model_not_ready`, with `status`), read by the engine or the worker; mapped to 404 / 400.
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

/** A generation with codes as typed arrays (`columns[f]`: `num_rows` codes, often shared views). */
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
