/**
 * Checkpoint format, version 2: everything needed to resume training where an epoch ended and to
 * generate from the latest or best weights (version 1 is refused). Plain data, so it round-trips
 * through msgpack (LMDB) and a C++ core can read it.
 * ```
 * {
 *   format: "synthd-generator", version: 2,
 *   spec: { embedding_dim, hidden, blocks, output_dim },     // generator shape (generator.ts)
 *   cardinalities: number[],                                 // K_f in feature order
 *   epoch, step,                                             // completed epochs / optimizer steps
 *   elapsed_s,                                               // training seconds, over restarts
 *   train_loss, val_loss,                                    // of the last completed epoch
 *   best_val_loss, best_epoch, epochs_since_improvement,     // early stopping
 *   weights:      { [name]: { shape: number[], data: Buffer } },   // latest; float32 little-endian
 *   ema_weights:  { ... },                                   // the weights' moving average
 *   best_weights: { ... } | null,                            // null: identical to `ema_weights`
 *   adam: { t, beta1, beta2, epsilon, m: { ... }, v: { ... } },
 *   schedule: { peak_lr, total_steps, warmup_steps, steps_per_epoch, floor_fraction },
 *   rng: [u32, u32, u32, u32],                               // training latent stream (xoshiro.ts)
 * }
 * ```
 * Tensors are `{shape, data}`, `data` raw float32 little-endian row-major, copied into aligned
 * Float32Arrays on load (stored Buffers may be unaligned views).
 */
import { endianness } from "node:os";
import type { AdamState } from "./adam";
import { ADAM } from "./adam";
import type { GeneratorSpec, NamedArrays } from "../generator/generator";
import { paramShapes } from "../generator/generator";
import type { RngState } from "../sampling/xoshiro";
import type { Schedule } from "./schedule";
import { LR_FLOOR_FRACTION } from "./schedule";

/** Current checkpoint version. */
export const CHECKPOINT_VERSION = 2;

/** A stored tensor: shape and float32 little-endian bytes. */
export interface StoredTensor {
  shape: number[];
  data: Uint8Array;
}

/** Named stored tensors. */
export type StoredTensors = Record<string, StoredTensor>;

/** The stored form (see the module comment). */
export interface Checkpoint {
  format: "synthd-generator";
  version: number;
  spec: { embedding_dim: number; hidden: number; blocks: number; output_dim: number };
  cardinalities: number[];
  epoch: number;
  step: number;
  elapsed_s: number;
  train_loss: number | null;
  val_loss: number | null;
  best_val_loss: number | null;
  best_epoch: number;
  epochs_since_improvement: number;
  weights: StoredTensors;
  ema_weights: StoredTensors;
  best_weights: StoredTensors | null;
  adam: { t: number; beta1: number; beta2: number; epsilon: number; m: StoredTensors; v: StoredTensors };
  schedule: { peak_lr: number; total_steps: number; warmup_steps: number; steps_per_epoch: number; floor_fraction: number };
  rng: RngState;
}

/** The in-memory form: arrays instead of bytes, camelCase. */
export interface TrainingState {
  spec: GeneratorSpec;
  cardinalities: number[];
  epoch: number;
  step: number;
  elapsedS: number;
  trainLoss: number | null;
  valLoss: number | null;
  bestValLoss: number | null;
  bestEpoch: number;
  epochsSinceImprovement: number;
  weights: NamedArrays;
  /** The weights' moving average (validated and kept). */
  emaWeights: NamedArrays;
  /** null: the best weights are `emaWeights`. */
  bestWeights: NamedArrays | null;
  adam: AdamState;
  schedule: Schedule;
  stepsPerEpoch: number;
  rng: RngState;
}

/** Thrown when a stored checkpoint cannot be read (wrong version, shape, corrupt data). */
export class CheckpointError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CheckpointError";
  }
}

function assertLittleEndian(): void {
  if (endianness() !== "LE") throw new CheckpointError("checkpoints are little-endian; this host is big-endian");
}

function encodeArrays(spec: GeneratorSpec, arrays: NamedArrays): StoredTensors {
  const out: StoredTensors = {};
  for (const [name, shape] of paramShapes(spec)) {
    const a = arrays[name];
    out[name] = { shape, data: Buffer.from(a.buffer, a.byteOffset, a.byteLength) };
  }
  return out;
}

function decodeArrays(spec: GeneratorSpec, stored: StoredTensors, what: string): NamedArrays {
  const out: NamedArrays = {};
  for (const [name, shape] of paramShapes(spec)) {
    const t = stored?.[name];
    const size = shape.reduce((x, y) => x * y, 1);
    if (t === undefined || !(t.data instanceof Uint8Array) || t.data.byteLength !== size * 4) {
      throw new CheckpointError(`${what}.${name} is missing or not ${size} float32 values`);
    }
    const a = new Float32Array(size);
    new Uint8Array(a.buffer).set(t.data);
    out[name] = a;
  }
  return out;
}

/** Training state -> stored checkpoint (the arrays are viewed, not copied). */
export function encodeCheckpoint(s: TrainingState): Checkpoint {
  assertLittleEndian();
  return {
    format: "synthd-generator",
    version: CHECKPOINT_VERSION,
    spec: { embedding_dim: s.spec.embeddingDim, hidden: s.spec.hidden, blocks: s.spec.blocks, output_dim: s.spec.outputDim },
    cardinalities: s.cardinalities,
    epoch: s.epoch,
    step: s.step,
    elapsed_s: s.elapsedS,
    train_loss: s.trainLoss,
    val_loss: s.valLoss,
    best_val_loss: s.bestValLoss,
    best_epoch: s.bestEpoch,
    epochs_since_improvement: s.epochsSinceImprovement,
    weights: encodeArrays(s.spec, s.weights),
    ema_weights: encodeArrays(s.spec, s.emaWeights),
    best_weights: s.bestWeights === null ? null : encodeArrays(s.spec, s.bestWeights),
    adam: { t: s.adam.t, ...ADAM, m: encodeArrays(s.spec, s.adam.m), v: encodeArrays(s.spec, s.adam.v) },
    schedule: {
      peak_lr: s.schedule.peak,
      total_steps: s.schedule.totalSteps,
      warmup_steps: s.schedule.warmupSteps,
      steps_per_epoch: s.stepsPerEpoch,
      floor_fraction: LR_FLOOR_FRACTION,
    },
    rng: s.rng,
  };
}

/** Stored checkpoint -> training state. @throws CheckpointError for a bad format, shape or data. */
export function decodeCheckpoint(c: Checkpoint, expected: GeneratorSpec): TrainingState {
  assertLittleEndian();
  if (c === null || typeof c !== "object" || c.format !== "synthd-generator") throw new CheckpointError("not a synthd generator checkpoint");
  if (c.version !== CHECKPOINT_VERSION) throw new CheckpointError(`unsupported checkpoint version ${c.version}`);
  const spec: GeneratorSpec = {
    embeddingDim: c.spec.embedding_dim,
    hidden: c.spec.hidden,
    blocks: c.spec.blocks,
    outputDim: c.spec.output_dim,
  };
  for (const k of ["embeddingDim", "hidden", "blocks", "outputDim"] as const) {
    if (spec[k] !== expected[k]) throw new CheckpointError(`checkpoint ${k} ${spec[k]} differs from the model's ${expected[k]}`);
  }
  return {
    spec,
    cardinalities: c.cardinalities,
    epoch: c.epoch,
    step: c.step,
    elapsedS: c.elapsed_s,
    trainLoss: c.train_loss,
    valLoss: c.val_loss,
    bestValLoss: c.best_val_loss,
    bestEpoch: c.best_epoch,
    epochsSinceImprovement: c.epochs_since_improvement,
    weights: decodeArrays(spec, c.weights, "weights"),
    emaWeights: decodeArrays(spec, c.ema_weights, "ema_weights"),
    bestWeights: c.best_weights === null ? null : decodeArrays(spec, c.best_weights, "best_weights"),
    adam: { t: c.adam.t, m: decodeArrays(spec, c.adam.m, "adam.m"), v: decodeArrays(spec, c.adam.v, "adam.v") },
    schedule: { peak: c.schedule.peak_lr, totalSteps: c.schedule.total_steps, warmupSteps: c.schedule.warmup_steps },
    stepsPerEpoch: c.schedule.steps_per_epoch,
    rng: c.rng,
  };
}

/**
 * Only the weights a generator needs: the best (`best_weights`, or `ema_weights` when those are
 * the best) or the latest, skipping Adam's moments. @throws CheckpointError as decoding does.
 */
export function checkpointWeights(c: Checkpoint, expected: GeneratorSpec, best: boolean): NamedArrays {
  if (c === null || typeof c !== "object" || c.format !== "synthd-generator") throw new CheckpointError("not a synthd generator checkpoint");
  if (c.version !== CHECKPOINT_VERSION) throw new CheckpointError(`unsupported checkpoint version ${c.version}`);
  if (c.spec.embedding_dim !== expected.embeddingDim || c.spec.hidden !== expected.hidden || c.spec.blocks !== expected.blocks || c.spec.output_dim !== expected.outputDim) {
    throw new CheckpointError("checkpoint shape differs from the model's");
  }
  if (!best) return decodeArrays(expected, c.weights, "weights");
  if (c.best_weights !== null) return decodeArrays(expected, c.best_weights, "best_weights");
  return decodeArrays(expected, c.ema_weights, "ema_weights");
}
