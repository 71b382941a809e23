/** Generate's body (latents, conditions, seed rows), its result and the per-request row limits. */
import type { tags } from "typia";
import type { Float32 } from "./numbers";

/** `embedding` as `{num_rows, seed}`: the server draws the latents, the same ones for the same seed. */
export interface LatentSpec {
  num_rows: number & tags.Type<"uint32"> & tags.Minimum<1>;
  seed?: number & tags.Type<"int64">;
  /**
   * Extension (docs/api.md): draw a pool of rows, weight it by raking to the model's marginals and
   * return num_rows of its rows (`src/model/sampling/calibrate.ts`). Default false: the plain draw
   * (one latent per row, each feature drawn from its softmax).
   */
  calibrate?: boolean;
  /**
   * Extension (docs/api.md "Seeded generation"): every row satisfies this condition.
   * Keys are feature names; a value is a code (the feature is fixed to it), a list of allowed
   * codes (a range condition) or a {@link WeightedConditionCell}; features not named are drawn from
   * the model's conditional (`src/model/conditional/`). Codes must be below the feature's
   * cardinality, lists non-empty. With `calibrate: true`, from the calibrated draw's conditional.
   */
  condition?: Record<string, ConditionCell>;
}

/**
 * A range condition with per-code weights (seeded generation, docs/api.md): `weights[i]` in (0, 1]
 * is the share of code `codes[i]`'s values that satisfy the condition, as when a numerical range
 * covers part of a bin; the row's code is drawn with probability proportional to the model's
 * probability of the code times its weight. The lists have equal, non-zero length and distinct
 * codes (checked by the handler, which names the cell).
 */
export interface WeightedConditionCell {
  codes: (number & tags.Type<"uint32">)[];
  weights: number[];
}

/**
 * One fixed cell of seeded generation: a code, a list of allowed codes (a range condition), or a
 * {@link WeightedConditionCell}. Lists must be non-empty (checked by the handler, which names the cell).
 */
export type ConditionCell = (number & tags.Type<"uint32">) | (number & tags.Type<"uint32">)[] | WeightedConditionCell;

/**
 * `embedding.seed_data` (extension, docs/api.md "Seeded generation"): one output row per seed row;
 * `rows[r][j]` is feature `features[j]`'s cell in row r (a code, a list of allowed codes, or null:
 * generated), `features.length` cells each; at most {@link MAX_SEED_ROWS_PER_REQUEST} rows.
 */
export interface SeedData {
  /** Feature names (distinct, each a feature of the model); features not listed are generated. */
  features: string[];
  rows: (ConditionCell | null)[][];
}

/** `embedding` as `{seed?, seed_data}`: one row per seed row, drawn from the model's conditional. */
export interface SeedDataSpec {
  seed?: number & tags.Type<"int64">;
  /** Draw from the calibrated draw's conditional (as `LatentSpec.calibrate`, docs/api.md). Default false. */
  calibrate?: boolean;
  seed_data: SeedData;
}

/** Body of `POST /v1/models/{id}/generate`. */
export interface GenerateRequest {
  /**
   * Latent vectors (n x embedding_dim, each value finite in float32), `{num_rows, seed?,
   * calibrate?, condition?}`, or `{seed?, seed_data}` (seeded generation, docs/api.md).
   */
  embedding: (number & Float32)[][] | LatentSpec | SeedDataSpec;
  temperature?: number & tags.ExclusiveMinimum<0> & tags.Maximum<100>;
  /**
   * Nucleus threshold in [0, 1] (contract: "0 to 1"); null or absent: no truncation. 0 keeps only
   * the most probable code of each feature (ties: the lowest code).
   */
  top_p?: (number & tags.Minimum<0> & tags.Maximum<1>) | null;
}

/** `data` of a generate response (envelope object `generation`). */
export interface Generation {
  model_id: string;
  num_rows: number;
  features: string[];
  /** `columns[f][r]` = code of feature f in row r, `0 <= code < K_f`. */
  columns: Record<string, number[]>;
}

/**
 * Rows per generate request; more gives `parameter_invalid` on `body.embedding`. The SDK splits larger
 * samples into requests of at most this many rows (`docs/decisions.md` "Rows per Generate request").
 */
export const MAX_ROWS_PER_REQUEST = 100_000;

/**
 * Seed rows per generate request (`embedding.seed_data.rows`, docs/api.md "Seeded generation");
 * more gives `parameter_invalid` on `body.embedding.seed_data.rows` (the SDK splits larger seed
 * tables). Lower than {@link MAX_ROWS_PER_REQUEST}: rows with distinct conditions each need a
 * candidate population of their own, so a full request takes 7 to 15 s on 2 cores, inside the
 * SDK's 60 s timeout (measurements: docs/architecture.md "Seed rows per request").
 */
export const MAX_SEED_ROWS_PER_REQUEST = 2_000;
