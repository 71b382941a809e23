/** The training's fixed settings (measurements behind them: docs/compute.md); see `trainer.ts`. */

/** Most optimizer steps per epoch (a run with max_epochs <= 50 uses this many). */
export const STEPS_PER_EPOCH = 50;
/** Early stopping acts once this fraction of the cosine decay has passed (`earlyStopArmed`). */
export const EARLY_STOP_ARMED_FRACTION = 0.9;
/** Fewest optimizer steps per epoch. */
export const MIN_STEPS_PER_EPOCH = 10;
/**
 * Steps a run plans for when max_epochs allows: a default run's learning-rate cycle spans this
 * many, which keeps a default fit under a minute (docs/decisions.md "A default fit takes under a
 * minute").
 */
export const PLANNED_STEPS = 4500;

/**
 * Optimizer steps per epoch for a fresh run: ceil(PLANNED_STEPS / max_epochs), clamped to
 * [MIN_STEPS_PER_EPOCH, STEPS_PER_EPOCH]. Fixed for the model's life (kept in checkpoints).
 */
export function stepsPerEpochFor(maxEpochs: number): number {
  return Math.min(STEPS_PER_EPOCH, Math.max(MIN_STEPS_PER_EPOCH, Math.ceil(PLANNED_STEPS / maxEpochs)));
}
/**
 * Weight of the entropy penalty (loss.ts `entropyPenalty`) in what training differentiates; the
 * reported `train_loss` and `val_loss` are the KL alone.
 */
export const ENTROPY_PENALTY = 0.05;

/** Per-step decay of the weight average once warmed up (half-life ~140 steps). */
export const EMA_DECAY = 0.995;

/**
 * Decay applied to the weight average at the end of an epoch of `steps` optimizer steps that ends
 * at step `step`: min(EMA_DECAY, (1 + step) / (10 + step)) ^ steps. The warm-up term keeps the
 * average close to the latest weights early on, when they move fast.
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
