/** The Model resource, its config (accepted, returned, defaults) and Create Model's body. */
import type { tags } from "typia";
import type { Finite } from "./numbers";
import type { Metadata } from "./metadata";

/** Model states (contract: "States and transitions"). */
export type ModelStatus = "created" | "building" | "training" | "ready" | "failed";

/** `config.model_size` as accepted on input (contract: Create Model); `S`/`M`/`L` are aliases. */
export type ModelSizeInput = "small" | "medium" | "large" | "S" | "M" | "L";
/** `config.model_size` as returned: aliases normalised. */
export type ModelSize = "small" | "medium" | "large";

/** `config` of Create Model as accepted; an unknown field is `parameter_invalid` naming it. */
export interface ModelConfigInput {
  model_size?: ModelSizeInput;
  embedding_dim?: number & tags.Type<"uint32"> & tags.Minimum<1> & tags.Maximum<4096>;
  batch_size?: number & tags.Type<"uint32"> & tags.Minimum<1> & tags.Maximum<65536>;
  learning_rate?: number & tags.ExclusiveMinimum<0> & tags.Maximum<10>;
  max_epochs?: number & tags.Type<"uint32"> & tags.Minimum<1> & tags.Maximum<1000000>;
  /** Seconds, at most {@link MAX_TRAINING_TIME_S} (7 days). */
  max_training_time?: number & tags.ExclusiveMinimum<0> & tags.Maximum<604800>;
  early_stop_patience?: number & tags.Type<"uint32">;
  privacy_enabled?: boolean;
  /** Std. dev. of Gaussian noise on the unit-variance latents, 0 to {@link MAX_PRIVACY_NOISE}. */
  privacy_noise?: number & tags.Minimum<0> & tags.Maximum<1000000> & Finite;
  device?: "auto" | "cpu" | "gpu";
}

/** The effective config as returned in a Model (contract: "Model config (as returned)"). */
export interface ModelConfig {
  embedding_dim: number;
  model_size: ModelSize;
  batch_size: number;
  learning_rate: number;
  max_epochs: number;
  max_training_time: number;
  early_stop_patience: number;
  privacy_enabled: boolean;
  privacy_noise: number;
  /** The compute device actually used, e.g. `cpu` (input accepts `auto`, `cpu`, `gpu`). */
  device: string;
}

/** Body of `POST /v1/models`. */
export interface CreateModelRequest {
  metadata: Metadata;
  config?: ModelConfigInput;
}

/** `error` of a failed model (`docs/decisions.md` "A failed model"). */
export interface ModelError {
  code: string;
  message: string;
}

/** The Model resource (contract: "Resources and their fields"). */
export interface Model {
  /** `mdl_` + 12 lowercase hex. */
  id: string & tags.Pattern<"^mdl_[0-9a-f]{12}$">;
  status: ModelStatus;
  config: ModelConfig;
  /** 0 at creation. */
  current_epoch: number & tags.Type<"uint32">;
  /** null at creation. */
  train_loss: number | null;
  /** null at creation. */
  val_loss: number | null;
  /** ISO 8601 UTC. */
  created_at: string & tags.Format<"date-time">;
  /** ISO 8601 UTC. */
  updated_at: string & tags.Format<"date-time">;
  /** null unless `status` is `failed`; then `{ code, message }`. */
  error: ModelError | null;
}

/** Defaults of the returned config (contract: "Model config (as returned)"). */
export const CONFIG_DEFAULTS: Omit<ModelConfig, "device"> = {
  embedding_dim: 64,
  model_size: "medium",
  batch_size: 256,
  learning_rate: 0.001,
  max_epochs: 100,
  max_training_time: 14400,
  early_stop_patience: 4,
  privacy_enabled: false,
  privacy_noise: 0.1,
};
