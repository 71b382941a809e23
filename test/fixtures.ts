/**
 * Fixtures shared by the unit tests of the model, engine and sampling kernels.
 */
import { LmdbStore as Store, newModelId, type ModelRecord } from "../src/store";
import { CONFIG_DEFAULTS, type Metadata, type ModelConfig } from "../src/contract";

/**
 * Three features; a and b strongly dependent, a and c mildly. The (a, c) pair is given c-major, as
 * [c, a], so building targets also transposes it.
 */
export const TINY_META: Metadata = {
  features: ["a", "b", "c"],
  cardinalities: { a: 2, b: 3, c: 2 },
  empirical_probs: { a: [0.5, 0.5], b: [0.2, 0.3, 0.5], c: [0.7, 0.3] },
  marginals: [
    { features: ["a", "b"], probs: [0.2, 0.0, 0.3, 0.0, 0.3, 0.2] },
    { features: ["c", "a"], probs: [0.45, 0.25, 0.05, 0.25] },
  ],
};

/**
 * A fast training config for tests: the `small` network with embedding_dim 8, batch 64, early
 * stopping off, `max_epochs` as given; `over` replaces any field.
 */
export function fastConfig(maxEpochs: number, over: Partial<ModelConfig> = {}): ModelConfig {
  return { ...CONFIG_DEFAULTS, model_size: "small", embedding_dim: 8, batch_size: 64, max_epochs: maxEpochs, early_stop_patience: 0, device: "cpu", ...over };
}

/** Stores a new model in status `training` (org `o`, sandbox) with `meta`, as Create Model does; returns its id. */
export async function addTrainingModel(store: Store, cfg: ModelConfig, meta: Metadata): Promise<string> {
  const t = new Date().toISOString();
  const rec: ModelRecord = {
    id: newModelId(),
    org: "o",
    env: "test",
    status: "training",
    config: cfg,
    current_epoch: 0,
    train_loss: null,
    val_loss: null,
    created_at: t,
    updated_at: t,
    error: null,
  };
  await store.createModel(rec, meta);
  return rec.id;
}

/**
 * A deterministic test PRNG (mulberry32, Tommy Ettinger) returning 53-bit uniforms in [0, 1):
 * independent of the PRNGs under test, so test inputs do not move when those change.
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  const u32 = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
  return () => ((u32() >>> 5) * 67108864 + (u32() >>> 6)) / 9007199254740992;
}
