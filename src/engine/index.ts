/**
 * The engine: the {@link Engine} interface and errors, and the local engine (`createEngine`:
 * worker threads, memory admission, one actor per model). The shared topology's is `src/cluster`.
 */
export { EngineModelError, EngineUnavailableError, ModelTooLargeError, OrgQueueFullError, toGeneration, type Engine, type RawGeneration } from "./engine";
export { DEFAULT_MAX_QUEUED_PER_ORG, DEFAULT_MAX_TRAINING_PER_ORG } from "./admission/queue";
export { QUEUE_FULL_RETRY_AFTER_S } from "./admission/memory";
export * from "./pool-engine";
export { createEngine } from "./local-engine";
