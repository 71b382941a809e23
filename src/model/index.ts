/**
 * The model: a marginal-matching generator and its training (docs/decisions.md "A
 * marginal-matching model"). No HTTP, no storage: the engine drives these functions and persists
 * their checkpoints. Code outside `src/model` imports from here. Folders: `generator/` (targets,
 * G, a runnable model), `training/` (loss, Adam, schedule, trainer, checkpoint), `sampling/` (the
 * streams, a request's draws, the plain and calibrated draws, raking, rule repair), `compute/`
 * (tfjs backends, the native addon and core), `conditional/` (seeded generation).
 */
export { initBackend, useBackend, deviceOf, type BackendName } from "./compute/backend";
export { Rng, type RngState, fnv1a64 } from "./sampling/xoshiro";
export { buildTargets, layoutOf, lossTargets, marginalWeight, sanitizeProbs, MetadataError, type Layout, type MarginalTargets, type PairBlock } from "./generator/targets";
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
} from "./generator/generator";
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
} from "./training/loss";
export { Adam, ADAM, type AdamState } from "./training/adam";
export { makeSchedule, learningRate, WARMUP_FRACTION, LR_FLOOR_FRACTION, type Schedule } from "./training/schedule";
export {
  CHECKPOINT_VERSION,
  CheckpointError,
  encodeCheckpoint,
  decodeCheckpoint,
  checkpointWeights,
  type Checkpoint,
  type TrainingState,
} from "./training/checkpoint";
export { Trainer } from "./training/trainer";
export {
  TrainingError,
  type StopReason,
  type EpochReport,
  type TrainerOptions,
} from "./training/options";
export {
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
} from "./training/settings";
export { type GeneratorModel, disposeGenerator, cloneTfjsGenerator } from "./generator/model";
export { type ComputeKind, defaultCompute } from "./compute/kind";
export { NativeGenerator, NATIVE_GENERATE_CHUNK } from "./compute/native-generator";
export { nativeCore, nativeCoreStatus, flattenParams, unflattenParams, gpuStatus, type NativeGeneratorCore, type NativeCoreAddon, type NativeCoreStatus, type ComputeInfo, type PairMode } from "./compute/native-core";
export { CALIBRATION_POOL_FACTOR, calibrationMarginals, rakingWeights, rakingSweeps, systematicSample, type CalibrationMarginal, type RakingOptions } from "./sampling/calibrate";
export { conditionalTargets, conditionCalibration, EXCLUDED_LOG_FACTOR, STRUCTURAL_ZERO_MIN_EXPECTED, type ConditionCalibration, type Exclusion, type FixedCell } from "./sampling/condition-calibration";
export { prepareInputs, drawInputs, releaseInputs, latentSource, flattenLatents, InputError, type LatentSource, type DrawnSource, type GenerationInputs } from "./sampling/inputs";
export { sampleRows, GENERATE_CHUNK, type SamplingOptions } from "./sampling/sample-rows";
export { sampleCalibrated, packedColumns, REPAIR_SEED_TAG } from "./sampling/calibrated-draw";
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
export { isSeeded, seededSource, conditionParam, SeededInputError, type SeededSource } from "./conditional";
export { sampleCodes, LOGITS_NOT_FINITE } from "./sampling/sampling";
export { poolRules, repairPool, type PoolRule } from "./sampling/rule-repair";
