/**
 * Learning-rate schedule: linear warm-up, then cosine decay (Loshchilov & Hutter, "SGDR:
 * Stochastic Gradient Descent with Warm Restarts", ICLR 2017; one cycle, no restart) over the
 * planned number of steps `max_epochs x STEPS_PER_EPOCH`.
 *
 *   lr(s) = peak * (s + 1) / W                                        for s < W
 *   lr(s) = floor + (peak - floor) * (1 + cos(pi * (s - W) / (T - W))) / 2   for W <= s < T
 *   lr(s) = floor                                                     for s >= T
 *
 * s = 0-based index of the step about to be taken, T = total planned steps, W = warm-up steps,
 * floor = peak * {@link LR_FLOOR_FRACTION}.
 */

/** Fraction of the planned steps spent warming up (at least 1 step, at most 100). */
export const WARMUP_FRACTION = 0.05;
export const WARMUP_MAX_STEPS = 100;
/** The cosine decays to this fraction of the peak rate. */
export const LR_FLOOR_FRACTION = 0.02;

/** A schedule's constants (stored in checkpoints so a resumed run keeps its schedule). */
export interface Schedule {
  peak: number;
  totalSteps: number;
  warmupSteps: number;
}

/** The schedule for `totalSteps` planned steps at peak rate `peak`. */
export function makeSchedule(peak: number, totalSteps: number): Schedule {
  const warmupSteps = Math.max(1, Math.min(WARMUP_MAX_STEPS, Math.round(WARMUP_FRACTION * totalSteps)));
  return { peak, totalSteps, warmupSteps };
}

/** lr for the step with 0-based index `step` (see the module comment). */
export function learningRate(s: Schedule, step: number): number {
  const floor = s.peak * LR_FLOOR_FRACTION;
  if (step < s.warmupSteps) return (s.peak * (step + 1)) / s.warmupSteps;
  if (step >= s.totalSteps || s.totalSteps <= s.warmupSteps) return floor;
  const x = (step - s.warmupSteps) / (s.totalSteps - s.warmupSteps);
  return floor + ((s.peak - floor) * (1 + Math.cos(Math.PI * x))) / 2;
}
