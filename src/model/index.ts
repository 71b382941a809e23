/**
 * The model: a marginal-matching generator and its training (DESIGN §2). No HTTP, no storage:
 * the engine (`src/engine`) drives these functions and persists their checkpoints.
 *
 * Read in this order: `marginals.ts` (targets), `generator.ts` (G), `loss.ts` (KL objective),
 * `adam.ts` + `schedule.ts` (optimisation), `trainer.ts` (epochs, validation, early stopping),
 * `checkpoint.ts` (stored form), `generate.ts` + `sampling.ts` (generation), `rng.ts`;
 * `native-core.ts`: the same generator, loss and Adam in the C++ compute core (native/src/train);
 * `conditional.ts`: seeded / conditional generation (rows given conditions on some features).
 */
export { initBackend, useBackend, deviceOf, type BackendName } from "./backend";
export { Rng, type RngState, fnv1a64 } from "./rng";
export { buildTargets, layoutOf, lossTargets, marginalWeight, sanitizeProbs, MetadataError, type Layout, type MarginalTargets, type PairBlock } from "./marginals";
export {
  MODEL_SIZES,
  generatorSpec,
  paramShapes,
  paramCount,
  initParams,
  forward,
  featureSoftmax,
  makeSegments,
  disposeSegments,
  toTensors,
  trainableVariables,
  type TrainableVariables,
  disposeAll,
  type GeneratorSpec,
  type NamedArrays,
  type NamedTensors,
  type Segments,
} from "./generator";
export {
  marginalLoss,
  entropyPenalty,
  ENTROPY_EPS,
  marginalSums,
  addSums,
  lossFromSums,
  klLoss,
  targetTensors,
  disposeTargetTensors,
  LOSS_EPS,
  preferredForm,
  type TargetTensors,
  type MarginalSums,
} from "./loss";
export { Adam, ADAM, type AdamState } from "./adam";
export { makeSchedule, learningRate, WARMUP_FRACTION, LR_FLOOR_FRACTION, type Schedule } from "./schedule";
export {
  CHECKPOINT_VERSION,
  CheckpointError,
  encodeCheckpoint,
  decodeCheckpoint,
  checkpointWeights,
  type Checkpoint,
  type TrainingState,
} from "./checkpoint";
export {
  Trainer,
  TrainingError,
  STEPS_PER_EPOCH,
  MIN_STEPS_PER_EPOCH,
  PLANNED_STEPS,
  ENTROPY_PENALTY,
  EMA_DECAY,
  emaDecay,
  EARLY_STOP_ARMED_FRACTION,
  stepsPerEpochFor,
  VAL_SIZE,
  MIN_REL_IMPROVEMENT,
  type StopReason,
  type EpochReport,
  type GeneratorModel,
  type TrainerOptions,
  type ComputeKind,
  disposeGenerator,
  defaultCompute,
} from "./trainer";
export {
  NativeGenerator,
  nativeCore,
  nativeCoreStatus,
  flattenParams,
  unflattenParams,
  NATIVE_GENERATE_CHUNK,
  type NativeGeneratorCore,
  type NativeCoreAddon,
  type NativeCoreStatus,
  type ComputeInfo,
  type PairMode,
} from "./native-core";
export {
  CALIBRATION_POOL_FACTOR,
  calibrationMarginals,
  rakingWeights,
  rakingSweeps,
  systematicSample,
  type CalibrationMarginal,
  type RakingOptions,
  conditionalTargets,
  conditionCalibration,
  EXCLUDED_LOG_FACTOR,
  STRUCTURAL_ZERO_MIN_EXPECTED,
  type ConditionCalibration,
  type Exclusion,
  type FixedCell,
} from "./calibrate";
export {
  prepareInputs,
  drawInputs,
  releaseInputs,
  latentSource,
  flattenLatents,
  sampleRows,
  sampleCalibrated,
  InputError,
  GENERATE_CHUNK,
  type LatentSource,
  type DrawnSource,
  type GenerationInputs,
  type SamplingOptions,
} from "./generate";
export {
  sampleConditional,
  sampleSeeded,
  ConditionError,
  DEFAULT_MIN_ESS,
  DEFAULT_BUDGET_FACTOR,
  ZERO_SEARCH,
  MAX_RANK,
  MAX_COMPONENTS,
  MAX_CANDIDATE_BYTES,
  type CellCondition,
  type RowCondition,
  type ConditionalOptions,
  type ConditionalResult,
  type ConditionGroupReport,
} from "./conditional";
