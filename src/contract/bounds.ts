/**
 * Bounds of what Create Model stores (docs/api.md "Create Model", "Limits"). A typia tag carrying
 * the same bound spells the same literal; `test/contract/stored-bounds.test.ts` checks they agree.
 */

/**
 * Largest accepted `config.max_training_time`, seconds: 7 days (the tag on `ModelConfigInput`;
 * default 14,400). Unbounded, a huge value would hold a training slot for good.
 */
export const MAX_TRAINING_TIME_S = 604_800;

/** Longest feature name, in UTF-16 code units: the tag on `Metadata.features`. */
export const MAX_FEATURE_NAME_LENGTH = 1024;

/**
 * Longest value of a `value_mappings[f]` (a category's text, a point bin's number as written), in
 * UTF-16 code units. Checked by `src/server/handlers/checkMetadata.ts` (typia cannot tag record keys).
 */
export const MAX_VALUE_LENGTH = 4096;

/**
 * Largest `metadata` of Create Model, bytes of its compact JSON (UTF-8): 8 MiB, far above real
 * tables' (adult.csv with all 105 pair marginals: about 0.55 MB) and small against the 16 MiB body,
 * so the per-org model cap bounds an org's share of the disk.
 */
export const MAX_METADATA_BYTES = 8 * 1024 * 1024;
