/**
 * The training's fixed settings, with the measurements that chose them: steps per epoch and the
 * planned length of a run ({@link stepsPerEpochFor}), the entropy penalty's weight, the weight
 * average's decay ({@link emaDecay}), the validation set's size and the early-stopping thresholds.
 * `trainer.ts` (its module comment) says how training uses them.
 */

/** Most optimizer steps per epoch (a run with max_epochs <= 50 uses this many). */
export const STEPS_PER_EPOCH = 50;
/**
 * Early stopping acts once this fraction of the cosine decay has passed (see `earlyStopArmed`).
 * At 0.75, runs on discretized Adult stopped at 82-89% of the decay on epoch-to-epoch noise of
 * `val_loss` (+-0.3% even for the averaged weights) and lost the last part of the schedule
 * (4,000 steps: 2-way 0.0309 / 3-way 0.0736 stopped, 0.0279 / 0.0712 completed).
 */
export const EARLY_STOP_ARMED_FRACTION = 0.9;
/** Fewest optimizer steps per epoch. */
export const MIN_STEPS_PER_EPOCH = 10;
/**
 * Steps a run plans for when max_epochs allows: the learning-rate cycle of a default run
 * (max_epochs 100) spans this many steps. Measured on discretized Adult with the medium model
 * (`npm run bench -- fidelity`, 2-way / 3-way TVD, fit seconds on 2 cores; before the entropy
 * penalty): 2,500 steps 0.0282 / 0.0724 (26 s), 4,000 steps 0.0279 / 0.0712 (40 s), 5,000 steps
 * 0.0270 / 0.0694 (49 s, weight averaging on), 8,000 steps 0.0261 / 0.0677 (114 s). With the
 * penalty, 5,000 steps gave 0.0254 / 0.0662 in 52.9 s and 4,500 gave 0.0253 / 0.0661 in 48.2 s
 * at load average 1.8 (other work on the host): 4,500 keeps a default fit under one minute with
 * room for a busy machine (docs/decisions.md "A default fit takes under a minute").
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
 * reported `train_loss` and `val_loss` are the KL alone. Measured on discretized Adult (default
 * config, 5,000 steps, in-process fit, before the marginal weights of targets.ts; 2-way / 3-way
 * TVD, TSTR AUC): none 0.0270 / 0.0694 / 0.902;
 * 0.02 0.0252 / 0.0667 / 0.908; 0.05 0.0251 / 0.0652 / 0.907 (over HTTP: 0.0259 / 0.0664 / 0.906,
 * privacy share 0.49, exact copies 1.96% vs HOLDOUT's 2.28%). Unnormalised by ln K_f, 0.1 was
 * already too sharp (0.0331 / 0.0765), and the opposite sign (maximising entropy) hurt.
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
