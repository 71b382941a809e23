/** The training's fixed settings (measurements behind them: docs/compute.md); see `trainer.ts`. */

/** Most optimizer steps per epoch (a run with max_epochs <= 50 uses this many). */
export const STEPS_PER_EPOCH = 50;
/** Early stopping acts once this fraction of the cosine decay has passed (`earlyStopArmed`). */
export const EARLY_STOP_ARMED_FRACTION = 0.9;
/** Fewest optimizer steps per epoch. */
export const MIN_STEPS_PER_EPOCH = 10;
/** Steps a default run's learning-rate cycle spans; keeps a default fit under a minute. */
export const PLANNED_STEPS = 4500;

/** Steps per epoch of a fresh run: ceil(PLANNED_STEPS / max_epochs), clamped; then fixed. */
export function stepsPerEpochFor(maxEpochs: number): number {
  return Math.min(STEPS_PER_EPOCH, Math.max(MIN_STEPS_PER_EPOCH, Math.ceil(PLANNED_STEPS / maxEpochs)));
}
/** Weight of the entropy penalty in what training differentiates (reported losses: KL alone). */
export const ENTROPY_PENALTY = 0.05;

/** Per-step decay of the weight average once warmed up (half-life ~140 steps). */
export const EMA_DECAY = 0.995;

/**
 * The weight average's decay after an epoch of `steps` steps ending at `step`:
 * min(EMA_DECAY, (1 + step) / (10 + step)) ^ steps; the warm-up term tracks early, fast weights.
 */
export function emaDecay(step: number, steps: number): number {
  return Math.min(EMA_DECAY, (1 + step) / (10 + step)) ** steps;
}

/** Latents in the fixed validation set. */
export const VAL_SIZE = 4096;
/** Rows per forward pass when evaluating the validation set. */
export const EVAL_CHUNK = 1024;
/** Relative decrease of `val_loss` that counts as an improvement for early stopping. */
export const MIN_REL_IMPROVEMENT = 1e-4;
