/**
 * Admission control, part 1: how much memory training a model takes (budget `budget.ts`, queue
 * `queue.ts`, wiring `index.ts`). {@link estimateTrainingMemory} bounds from above the resident
 * memory one training model adds, from config and metadata alone (cheap enough for the HTTP
 * thread): float32 parts (weights, Adam, gradients, averages, activations, GEMM scratch, latents,
 * targets, checkpoint) x {@link ESTIMATE_MARGIN} + {@link MODEL_OVERHEAD_BYTES}. The formula per
 * part and its calibration (12-51% over measured peaks, asserted in test/admission.test.ts):
 * docs/architecture.md "Training memory estimate".
 */
import type { Metadata, ModelConfig } from "../../contract";
import { generatorSpec, layoutOf, MODEL_SIZES, paramCount } from "../../model";
import { formatBytes } from "./budget";

const F32 = 4;
/** Validation latents (trainer.ts `VAL_SIZE`). */
const VAL_ROWS = 4096;
/** Rows of one validation chunk in the native core (`kEvalChunk`). */
const EVAL_CHUNK_ROWS = 512;
/** Widest GEMM micro-panel of the native core (AVX-512: 8 x 32). */
const PANEL = 32;
/** Dense 2-way mode of the native core: D <= this and the blocks cover >= 25% of D^2 / 2. */
const DENSE_MAX_WIDTH = 4096;

/** Floats per parameter held at an epoch's end (checkpoint) or on resume, beyond the rest. */
export const CHECKPOINT_FLOATS_PER_PARAM = 22;
/** Safety factor applied to the summed parts. */
export const ESTIMATE_MARGIN = 1.1;
/** Added to every estimate: JS objects, heap growth, allocator slack (bytes). */
export const MODEL_OVERHEAD_BYTES = 32 * 2 ** 20;
/** Activations on the tfjs path are this many times the native core's. */
export const TFJS_ACTIVATION_FACTOR = 5;
/** Added on the tfjs path: the wasm heap and tfjs's kernels a worker sets up (bytes). */
export const TFJS_OVERHEAD_BYTES = 128 * 2 ** 20;
/** The native core refuses generators above 2^30 parameters (native/src/train/core_binding.cc). */
export const MAX_PARAMS = 2 ** 30;

/** The config fields the estimate reads. */
export type EstimateConfig = Pick<ModelConfig, "model_size" | "embedding_dim" | "batch_size" | "privacy_enabled" | "privacy_noise">;

/** Options of {@link estimateTrainingMemory}. */
export interface EstimateOptions {
  /** `native` (default) or `tfjs`. */
  compute?: "native" | "tfjs";
  /** Threads that run compute tasks (pool threads plus callers); default 16. */
  threads?: number;
}

/** An estimate in bytes, by part, with the sizes it was computed from. */
export interface MemoryEstimate {
  /** Upper bound of the resident memory training adds, bytes (margin and overhead included). */
  bytes: number;
  /** Bytes per part, before the margin. */
  parts: {
    weights: number;
    optimizer: number;
    gradients: number;
    averages: number;
    activations: number;
    gemmScratch: number;
    latents: number;
    targets: number;
    checkpoint: number;
  };
  /** Scalar parameters of the generator. */
  params: number;
  /** D = sum_f K_f. */
  width: number;
  /** Given 2-way cells (sum of `marginals[i].probs` lengths). */
  pairCells: number;
}

/** One pair block of targets.ts: rows K_f, columns w. */
export interface BlockShape {
  kf: number;
  w: number;
}

/**
 * The pair blocks `buildTargets` (targets.ts) would make, from the metadata's shape only: pairs
 * oriented f < g, grouped per row feature into column runs (cut when the gap to the next partner
 * exceeds its K). Returns the blocks (unordered) and the 2-way cells given (duplicates included).
 */
export function pairBlockShapes(meta: Metadata, K: number[], offsets: number[]): { blocks: BlockShape[]; cells: number } {
  const index = new Map(meta.features.map((f, i) => [f, i]));
  const partners = new Map<number, Set<number>>();
  let cells = 0;
  for (const m of meta.marginals ?? []) {
    cells += m.probs.length;
    const a = index.get(m.features[0]);
    const b = index.get(m.features[1]);
    if (a === undefined || b === undefined || a === b) continue;
    const [f, g] = a < b ? [a, b] : [b, a];
    let s = partners.get(f);
    if (s === undefined) partners.set(f, (s = new Set()));
    s.add(g);
  }
  const blocks: BlockShape[] = [];
  for (const [f, set] of partners) {
    const gs = [...set].sort((x, y) => x - y);
    let start = gs[0];
    let last = gs[0];
    for (let i = 1; i <= gs.length; i++) {
      const g = gs[i];
      if (g === undefined || offsets[g] - offsets[last + 1] > K[g]) {
        blocks.push({ kf: K[f], w: offsets[last + 1] - offsets[start] });
        start = g;
      }
      last = g;
    }
  }
  return { blocks, cells };
}

const roundUp = (x: number, m: number): number => Math.ceil(x / m) * m;

/**
 * Upper bound of the memory training `config` on `metadata` adds (pure arithmetic on shapes;
 * `metadata` must have passed the server's checks). `params` may exceed {@link MAX_PARAMS}.
 * @throws MetadataError (targets.ts) when a feature has no positive integer cardinality.
 */
export function estimateTrainingMemory(config: EstimateConfig, metadata: Metadata, opts: EstimateOptions = {}): MemoryEstimate {
  const layout = layoutOf(metadata);
  const spec = generatorSpec(config.model_size, config.embedding_dim, layout);
  const { hidden: H, blocks: L, embeddingDim: E, outputDim: D } = spec;
  const L1 = Math.max(L, 1);
  const B = config.batch_size;
  const R = Math.max(B, EVAL_CHUNK_ROWS);
  const T = Math.max(1, opts.threads ?? 16);
  const P = paramCount(spec);
  const { blocks, cells: C } = pairBlockShapes(metadata, layout.cardinalities, layout.offsets);
  const M = blocks.reduce((s, b) => s + b.kf * b.w, 0);
  const dense = blocks.length > 0 && D <= DENSE_MAX_WIDTH && M >= (0.25 * D * D) / 2;
  const r = (x: number): number => roundUp(x, PANEL);

  const activations = R * H * (L + 1 + 3 * L1 + 5) + R * L1 + 2 * R * D;
  const maxBlockPack = blocks.reduce((s, b) => Math.max(s, r(b.w)), 0);
  const gemmScratch =
    Math.max(E * r(H), H * r(H), H * r(D), D * r(H), B * r(D), B * r(H), dense ? D * r(D) : 0) + T * R * maxBlockPack;
  const noisy = config.privacy_enabled && config.privacy_noise > 0;
  // z (+ its noise) in JS, and the copy the core's asynchronous step / evaluation takes.
  const latents = (noisy ? 3 : 2) * (B * E + VAL_ROWS * E);
  const packedG = dense ? 0 : blocks.reduce((s, b) => s + b.w * r(b.kf) + b.kf * r(b.w), 0);
  const targets = 3 * M + packedG + 3 * D + (dense ? D * D : 0) + 2 * (D + C) + 4 * C + 2 * M + 3 * D;

  const tfjs = opts.compute === "tfjs";
  const parts = {
    weights: P * F32,
    optimizer: 2 * P * F32,
    gradients: P * F32,
    averages: 3 * P * F32,
    activations: activations * F32 * (tfjs ? TFJS_ACTIVATION_FACTOR : 1),
    gemmScratch: tfjs ? 0 : gemmScratch * F32,
    latents: latents * F32,
    targets: targets * F32,
    checkpoint: CHECKPOINT_FLOATS_PER_PARAM * P * F32,
  };
  const sum = Object.values(parts).reduce((s, x) => s + x, 0);
  const overhead = MODEL_OVERHEAD_BYTES + (tfjs ? TFJS_OVERHEAD_BYTES : 0);
  return { bytes: Math.ceil(sum * ESTIMATE_MARGIN + overhead), parts, params: P, width: D, pairCells: C };
}

/** Why a model can never train here: the config field to lower and a sentence saying so. */
export interface TooLargeExplanation {
  /** Contract parameter path, e.g. `body.config.batch_size`. */
  param: string;
  /** Estimate, budget and what to lower. */
  message: string;
}

/**
 * For a model over `budgetBytes` or {@link MAX_PARAMS}: the field whose lowest setting saves the
 * most, and a message with estimate, budget (`budgetNote` says how it came about) and the largest
 * value of that field that fits, if any (binary search).
 * @throws MetadataError as {@link estimateTrainingMemory}.
 */
export function explainTooLarge(
  config: EstimateConfig,
  metadata: Metadata,
  budgetBytes: number,
  budgetNote: string,
  opts: EstimateOptions = {},
): TooLargeExplanation {
  const est = estimateTrainingMemory(config, metadata, opts);
  const fits = (c: EstimateConfig, m: Metadata = metadata): boolean => {
    const e = estimateTrainingMemory(c, m, opts);
    return e.bytes <= budgetBytes && e.params <= MAX_PARAMS;
  };
  const flat: Metadata = {
    features: metadata.features,
    cardinalities: Object.fromEntries(metadata.features.map((f) => [f, 1])),
    empirical_probs: {},
  };
  const noPairs: Metadata = { ...metadata, marginals: [] };
  const candidates: { param: string; bytes: number }[] = [
    { param: "body.config.batch_size", bytes: estimateTrainingMemory({ ...config, batch_size: 1 }, metadata, opts).bytes },
    { param: "body.config.embedding_dim", bytes: estimateTrainingMemory({ ...config, embedding_dim: 1 }, metadata, opts).bytes },
    { param: "body.config.model_size", bytes: estimateTrainingMemory({ ...config, model_size: "small" }, metadata, opts).bytes },
    { param: "body.metadata.cardinalities", bytes: estimateTrainingMemory(config, flat, opts).bytes },
    { param: "body.metadata.marginals", bytes: estimateTrainingMemory(config, noPairs, opts).bytes },
  ];
  const best = candidates.reduce((a, b) => (b.bytes < a.bytes ? b : a));
  const largest = (field: "batch_size" | "embedding_dim"): number | null => {
    let lo = 0;
    let hi = config[field];
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (mid >= 1 && fits({ ...config, [field]: mid })) lo = mid;
      else hi = mid - 1;
    }
    return lo >= 1 ? lo : null;
  };
  let advice: string;
  if (best.param === "body.config.batch_size" || best.param === "body.config.embedding_dim") {
    const field = best.param === "body.config.batch_size" ? "batch_size" : "embedding_dim";
    const n = largest(field);
    advice = n === null ? `Lower config.${field} (no value fits alone) and the model's other sizes` : `Lower config.${field} to at most ${n}`;
  } else if (best.param === "body.config.model_size") {
    const size = (["medium", "small"] as const).find((s) => s !== config.model_size && MODEL_SIZES[s].hidden < MODEL_SIZES[config.model_size].hidden && fits({ ...config, model_size: s }));
    advice = size ? `Use config.model_size "${size}"` : "Use a smaller config.model_size and lower config.batch_size";
  } else if (best.param === "body.metadata.marginals") {
    advice = "Send fewer or smaller 2-way marginals (metadata.marginals)";
  } else {
    advice = `Use fewer codes per feature (metadata.cardinalities: ${est.width} codes in all)`;
  }
  const params = est.params > MAX_PARAMS ? ` and ${est.params.toExponential(2)} parameters (the compute core's limit is 2^30)` : "";
  return {
    param: best.param,
    message:
      `This model needs an estimated ${formatBytes(est.bytes)} of memory to train${params}, ` +
      `more than this server's training budget of ${formatBytes(budgetBytes)} (${budgetNote}). ${advice}, ` +
      `or ask the operator for a larger --memory-budget.`,
  };
}
