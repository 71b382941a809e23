/** What a {@link Trainer} is given and what its epochs report. */
import type { Metadata, ModelConfig } from "../../contract";
import type { ComputeKind } from "../compute/kind";
import type { DevicePreference } from "../compute/native-core";
import type { Checkpoint } from "./checkpoint";

/** Why training ended. */
export type StopReason = "max_epochs" | "early_stop" | "time_limit";

/** Thrown when training cannot continue (non-finite loss). */
export class TrainingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TrainingError";
  }
}

/** What one epoch produced. */
export interface EpochReport {
  /** Completed epochs (1 after the first). */
  epoch: number;
  /** Optimizer steps so far. */
  step: number;
  trainLoss: number;
  valLoss: number;
  improved: boolean;
  /** Training seconds so far (summed over restarts). */
  elapsedS: number;
  /** Milliseconds per optimizer step in this epoch (excluding validation). */
  msPerStep: number;
  /** Set when this was the last epoch. */
  done: StopReason | null;
}

/** Options of {@link Trainer.create}. */
export interface TrainerOptions {
  /** Model id: seeds every stream. */
  id: string;
  metadata: Metadata;
  config: ModelConfig;
  /** Resume from this checkpoint (else start fresh). */
  checkpoint?: Checkpoint;
  /** Override of {@link STEPS_PER_EPOCH} for a fresh run (tests, benchmarks). */
  stepsPerEpoch?: number;
  /** Compute path (default `tfjs`); an unavailable native core falls back to tfjs with a note. */
  compute?: ComputeKind;
  /** Where the native core computes (`config.device`): `cpu` (default), `gpu` or `auto`. */
  device?: DevicePreference;
  /** TF32 tensor cores for the GPU's GEMMs (default: FP32). */
  tf32?: boolean;
}

/** Options of {@link Trainer.runEpoch}. */
export interface EpochOptions {
  /** Awaited between steps so other work on the thread can run (e.g. `setImmediate`). */
  yieldFn?: () => Promise<void>;
  /** Polled between steps; when true the epoch is abandoned and `runEpoch` returns null. */
  shouldAbort?: () => boolean;
}
