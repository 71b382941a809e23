/**
 * synthd SDK entry point: `import { Synthd, Synthesizer } from "synthd"`.
 *
 * - {@link Synthd}: the typed HTTP client (`client.models.create/retrieve/list/delete/generate/
 *   metadata/waitUntilReady`), with retries, backoff and idempotency keys in one request sender.
 * - {@link Synthesizer}: fit a CSV (metadata extraction + create + wait), sample/decode/write CSV;
 *   seeded generation: `sample(n, { where })`, `sample({ seedData })`, `impute(table)` (`./seeded`);
 *   `writeFile` to CSV, Parquet or Arrow with typed columns ({@link writeTables}, `./formats`).
 * - {@link extractMetadata}, {@link Decoder}, {@link evaluate}, {@link independentSample}: the
 *   building blocks; `domain` for discretized tables, `privacy` for differentially private
 *   marginals ({@link planPrivacy}), TSTR ({@link rocAuc}, {@link fitLogistic}) and the DCR
 *   {@link privacyCheck} behind `evaluate`'s `target`/`holdout` options; {@link buildReport} /
 *   {@link writeReport}: the same figures as one self-contained HTML quality report (`./report`).
 * - Errors: one hierarchy rooted at {@link SynthdError}.
 * - The shared request/response types of the contract (`../types`).
 */
export { Synthd, DEFAULT_BASE_URL, SDK_VERSION, isRetryable } from "./client";
export type { SynthdOptions, RequestOptions, RetryInfo, APIResponse, RateLimitState } from "./client";
export { Models, ModelList } from "./models";
export type { ModelPage, WaitOptions } from "./models";
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
export { Synthesizer, MIN_ROWS, SMALL_TABLE_ROWS, defaultModelConfig, defaultBinCap, defaultRareThreshold, fitConfig } from "./synthesizer";
export { nearCopyCheck, nearCopyShare, nearCopyVerdict } from "./privacy/near-copies";
export type { NearCopyCheck, NearCopyOptions } from "./privacy/near-copies";
export type { FitOptions, SampleOptions, SampleProgress, SeedSampleOptions, FormatOptions } from "./synthesizer";
export { OUTPUT_FORMATS, chooseFormat, formatOfPath, writeTables } from "./formats";
export type { OutputFormat, WriteTablesOptions } from "./formats";
export { BatchConverter, columnTypes, arrowSchema } from "./typed";
export type { ColumnType, TypedColumn, TypedValue } from "./typed";
export { compileWhere, encodeSeed, readSeedTable } from "./seeded";
export type { Where, WhereValue, WhereRange, SeedTable, SeedRows, EncodedSeed, CompiledWhere } from "./seeded";
export { extractMetadata, analyzeTable, encodeTable, buildMetadata, MISSING_KEY, OTHER, DEFAULTS } from "./metadata";
export { loadDomain } from "./domain";
export type { Domain, DomainSource } from "./domain";
export { cdpRho, cdpDelta, cdpRhoBound, planPrivacy, privateMetadata, DEFAULT_DELTA } from "./dp";
export type { PrivacyOptions, PrivacyPlan, PrivacyReport } from "./dp";
export { rocAuc, rocAucOvr, fitLogistic } from "./tstr";
export type { LogisticOptions, LogisticModel } from "./tstr";
export { privacyCheck } from "./dcr";
export type { PrivacyCheck, PrivacyCheckOptions } from "./dcr";
export type { CopyKeys, ScannedRows } from "./copies";
export type { ExtractOptions, Analysis, EncodedTable, ColumnCodec } from "./metadata";
export { SEMANTIC_KINDS, recognizeSemantic } from "./semantic";
export type { SemanticKind, SemanticLocale, SemanticShape } from "./semantic";
export { detectRules, RULE_LIMITS } from "./rules/detect";
export type { RuleOptions, DeclaredRule, DetectOptions } from "./rules/detect";
export { describeRule, ruleId } from "./rules/describe";
export { selectPairs, mutualInformation } from "./marginals";
export type { PairSelection, Pair, CodeArray } from "./marginals";
export { Decoder, decodeCodes } from "./decode";
export type { RestrictedFeature, DecodeOptions } from "./decode";
export type { ValueRange, FeatureDecoder } from "./columns/common";
export { evaluate, evaluateWithDetails, independentSample } from "./evaluate";
export type { EvaluationReport, EvaluationDetails, ColumnReport, ColumnCheck, EvaluateOptions, RuleReport, PairTvd } from "./evaluate";
export { buildReport, writeReport } from "./report";
export type { ReportOptions, QualityReport } from "./report";
export { readTable, readCsvText, writeCsv, writeTableCsv } from "./csv";
export type { Table, TableSource } from "./csv";
export { Rng, deriveSeed } from "./prng";
export * from "../types";
