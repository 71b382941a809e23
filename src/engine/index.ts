/**
 * The engine: the {@link Engine} interface the server uses and its errors (`engine.ts`), and the
 * local engine (`createEngine`, `local-engine.ts`): worker threads on this machine, with memory
 * admission (`admission/`) and one actor per model in its worker (`worker/`). The shared
 * topology's engine is `src/cluster/remote-engine.ts`.
 */
export { EngineModelError, EngineUnavailableError, ModelTooLargeError, OrgQueueFullError, toGeneration, type Engine, type RawGeneration } from "./engine";
export { DEFAULT_MAX_QUEUED_PER_ORG, DEFAULT_MAX_TRAINING_PER_ORG } from "./admission/queue";
export { QUEUE_FULL_RETRY_AFTER_S } from "./admission/memory";
export * from "./pool-engine";
export { createEngine } from "./local-engine";
