/** The queue's default bounds, apart so `synthd serve --help` shows them without loading it. */

/**
 * Default models one org trains at once: 2. Each already uses all cores (the native pool is
 * shared); two let a short model run beside a long one without one org taking the budget.
 */
export const DEFAULT_MAX_TRAINING_PER_ORG = 2;
/**
 * Default models one org may have waiting: 1,000. A waiting model costs its stored record and a
 * {@link Ticket}, so bursts queue (201 `training`) rather than fail; the bound stops a runaway
 * client. Beyond it: 429 `rate_limit_exceeded` with Retry-After.
 */
export const DEFAULT_MAX_QUEUED_PER_ORG = 1000;
