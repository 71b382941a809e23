/**
 * Generate's body (latents, conditions, seed rows), its result and the per-request row limits.
 * Part of the contract types re-exported by `src/contract/index.ts` (see there).
 */
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
 * `embedding.seed_data` (extension, docs/api.md "Seeded generation"): a table of conditions, one
 * output row per seed row.
 * `rows[r][j]` is the cell of feature `features[j]` in row r: a code, a list of allowed codes, or
 * null (generated). Every row has `features.length` cells; at most {@link MAX_SEED_ROWS_PER_REQUEST} rows.
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
 * Seed rows per generate request (`embedding.seed_data.rows`, extension, docs/api.md "Seeded
 * generation"); more gives `parameter_invalid` on `body.embedding.seed_data.rows` (the SDK splits
 * larger seed tables). Lower than {@link MAX_ROWS_PER_REQUEST} because rows with distinct
 * conditions each need a candidate population of their own (`src/model/conditional/`). Measured
 * on a 2-core machine, medium generator: in-process on discretised Adult (10 epochs), 1,000 rows
 * with distinct conditions take 2.8 s with 3 of 14 cells fixed, 5.8 s with 7 and 7.2 s with 13
 * (about 140 rows/s, the slowest case); over HTTP on raw Adult (20 epochs), 2,000 HOLDOUT rows
 * with 20% of their cells blank (about 12 of 15 fixed) take 6.8 s, with 80% blank 3.3 s. So a full
 * request takes 7 to 15 s there, well inside the SDK's 60 s request timeout.
 */
export const MAX_SEED_ROWS_PER_REQUEST = 2_000;
