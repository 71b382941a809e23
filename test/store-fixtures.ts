/**
 * Records the store tests write (test/store.test.ts, test/postgres-store.test.ts, the cluster
 * tests): a model of (org, env) created at a given time, and a one-feature metadata.
 */
import { newModelId, type ModelRecord } from "../src/store";
import { CONFIG_DEFAULTS, type ModelConfig } from "../src/contract";

/** A new `training` model record of (org, env), created (and updated) at Unix ms `ms`, default config. */
export function modelRecord(org: string, env: "test" | "live", ms: number, config: ModelConfig = { ...CONFIG_DEFAULTS, device: "cpu" }): ModelRecord {
  const t = new Date(ms).toISOString();
  return { id: newModelId(), org, env, status: "training", config, current_epoch: 0, train_loss: null, val_loss: null, created_at: t, updated_at: t, error: null };
}

/** Metadata of one binary feature `a`. */
export const META = { features: ["a"], cardinalities: { a: 2 }, empirical_probs: { a: [0.5, 0.5] } };
