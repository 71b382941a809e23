/**
 * Bounds of what Create Model stores (docs/api.md "Create Model", "Limits"): the size of a model's
 * metadata, the length of the names in it, and how long one model may hold a training slot. Where a
 * typia tag on the request types carries the same bound, the tag spells the same number (typia
 * tags take literals) and `test/contract/stored-bounds.test.ts` checks that both agree.
 * Part of the contract types re-exported by `src/contract/index.ts` (see there).
 */

/**
 * Largest accepted `config.max_training_time`, seconds: 7 days (the tag on `ModelConfigInput`).
 * The contract gives the field in seconds with a default of 14,400 (4 hours); without a bound,
 * `1e308` kept a model's training slot (and its organization's share of them) for good.
 */
export const MAX_TRAINING_TIME_S = 604_800;

/**
 * Longest feature name, in UTF-16 code units (JavaScript string length): the tag on
 * `Metadata.features`. Real tables' column names are tens of characters.
 */
export const MAX_FEATURE_NAME_LENGTH = 1024;

/**
 * Longest value of a `value_mappings[f]` (a category's text, a point bin's number as written), in
 * UTF-16 code units. Checked by `src/server/handlers/checkMetadata.ts` (typia cannot tag record keys).
 */
export const MAX_VALUE_LENGTH = 4096;

/**
 * Largest `metadata` of Create Model, in bytes of its compact JSON text (UTF-8, as
 * `JSON.stringify` writes it): 8 MiB. The SDK's metadata of real tables is far below (adult.csv,
 * 15 columns with all 105 pair marginals: about 0.55 MB); the bound keeps what one model stores
 * small against the 16 MiB request body, so the per-organization model cap bounds an
 * organization's share of the disk.
 */
export const MAX_METADATA_BYTES = 8 * 1024 * 1024;
