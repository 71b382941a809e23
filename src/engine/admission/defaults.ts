/**
 * The admission queue's default bounds (`./queue`), in a module of their own so that the command
 * line shows them in `synthd serve --help` without loading the queue (`src/cli/main.ts`).
 */

/**
 * Default models one org trains at once. Two: every training model already uses all cores (the
 * native core's pool is shared), so more at once only slows each; two let a short model run
 * beside a long one, and one org cannot take the whole budget of a shared server.
 */
export const DEFAULT_MAX_TRAINING_PER_ORG = 2;
/**
 * Default models one org may have waiting to train. 1,000: a waiting model costs its record and
 * metadata on disk and a {@link Ticket} in memory (its metadata is read back only when it
 * starts), so a burst of creates is queued rather than refused (the contract's Create Model
 * answers 201 `training`); the bound only stops a runaway client from filling the queue (and,
 * after a restart, the resume backlog) without end. Beyond it a create gets 429
 * `rate_limit_exceeded` with Retry-After.
 */
export const DEFAULT_MAX_QUEUED_PER_ORG = 1000;
