/**
 * synthd SDK entry point: `import { Synthd, Synthesizer } from "synthd"`: {@link Synthd}, the typed
 * HTTP client (retries, backoff, idempotency keys); {@link Synthesizer}, fit a CSV and sample,
 * seeded generation and typed file output; {@link extractMetadata} and {@link Decoder}, the
 * building blocks; errors rooted at {@link SynthdError}; the contract's shared types. Evaluation
 * has its own entry, `synthd/evaluate`; the HTML quality report `synthd/report`.
 */
export { Synthd, DEFAULT_BASE_URL, SDK_VERSION, isRetryable } from "./client/client";
export type { SynthdOptions, RequestOptions, RetryInfo, APIResponse, RateLimitState } from "./client/client";
export { Models, ModelList } from "./client/models";
export type { ModelPage, WaitOptions } from "./client/models";
export {
  SynthdError,
  AuthenticationError,
  InvalidRequestError,
  NotFoundError,
  ModelNotReadyError,
  ConflictError,
  QuotaExceededError,
  RateLimitError,
  APIError,
  APIConnectionError,
  APITimeoutError,
  TrainingTimeoutError,
  TrainingFailedError,
  DataError,
  errorFromResponse,
} from "./errors";
export type { SynthdErrorFields } from "./errors";
export { Synthesizer } from "./generate/synthesizer";
export { MIN_ROWS, SMALL_TABLE_ROWS, defaultModelConfig, defaultBinCap, defaultRareThreshold, fitConfig } from "./generate/fit-defaults";
export type { FitOptions, SampleOptions, SampleProgress, SeedSampleOptions, FormatOptions } from "./generate/options";
export { OUTPUT_FORMATS, chooseFormat, formatOfPath, writeTables } from "./io/formats";
export type { OutputFormat, WriteTablesOptions } from "./io/formats";
export { BatchConverter, columnTypes, arrowSchema } from "./io/typed";
export type { ColumnType, TypedColumn, TypedValue } from "./io/typed";
export { compileWhere, encodeSeed, readSeedTable } from "./generate/seeded-request";
export type { Where, WhereValue, WhereRange, SeedTable, SeedRows, EncodedSeed, CompiledWhere } from "./generate/seeded-request";
export { extractMetadata, analyzeTable, encodeTable, buildMetadata, MISSING_KEY, OTHER, DEFAULTS } from "./metadata/metadata";
export { loadDomain } from "./metadata/domain";
export type { Domain, DomainSource } from "./metadata/domain";
export { privateMetadata } from "./metadata/dp";
export { cdpRho, cdpDelta, cdpRhoBound, planPrivacy, DEFAULT_DELTA } from "./metadata/dp-accounting";
export type { PrivacyOptions, PrivacyReport } from "./metadata/dp";
export type { PrivacyPlan } from "./metadata/dp-accounting";
export type { ExtractOptions, Analysis, EncodedTable, ColumnCodec } from "./metadata/metadata";
export { SEMANTIC_KINDS, recognizeSemantic } from "./semantic";
export type { SemanticKind, SemanticLocale, SemanticShape } from "./semantic";
export { detectRules, RULE_LIMITS } from "./rules/detect";
export type { RuleOptions, DeclaredRule, DetectOptions } from "./rules/detect";
export { describeRule, ruleId } from "./rules/describe";
export { selectPairs, mutualInformation } from "./metadata/marginals";
export type { PairSelection, Pair, CodeArray } from "./metadata/marginals";
export { Decoder, decodeCodes } from "./generate/decode";
export type { RestrictedFeature, DecodeOptions } from "./generate/decode";
export type { ValueRange, FeatureDecoder } from "./columns/common";
export { readTable, readCsvText, tableRows, writeCsv, writeTableCsv } from "./io/csv";
export type { Table, TableSource } from "./io/csv";
export { INPUT_FORMATS, inputFormatOfPath } from "./io/inputs";
export type { FileInput, InputFormat, PostgresInput, ReadProgress, RowBatch, SourceType, TableRows } from "./io/inputs";
export { Rng, deriveSeed } from "./generate/sfc32";
export * from "../contract";
