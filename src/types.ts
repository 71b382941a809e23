/**
 * Types shared by the server, the engine and the SDK: the HTTP contract
 * (`shared/spec/service-interface.md`) plus the decisions of DESIGN §2–§3.
 *
 * The request types carry typia tags: the server's validators are generated from exactly these
 * types at compile time (`typia.createValidateEquals`), so the validator and the SDK's types can
 * never drift apart.
 */
import type { tags } from "typia";

/**
 * typia tag: a finite number. JSON can spell numbers beyond float64 (`1e400`), which `JSON.parse`
 * turns into `Infinity`; every number of a request type that has no tighter bound carries this tag,
 * so the generated validators refuse them (400 `parameter_invalid` naming the field).
 * (typia's own `Type<"double">` checks nothing at run time.)
 */
export type Finite = tags.TagBase<{
  target: "number";
  kind: "finite";
  value: undefined;
  validate: "Number.isFinite($input)";
  exclusive: true;
  schema: undefined;
}>;

/**
 * Largest accepted `config.privacy_noise` (the tag on {@link ModelConfigInput} spells the same
 * number): 1e6 standard deviations of the unit-variance latents. The noise is added to latents
 * held in float32 (`src/model/training/trainer.ts` drawLatents, `src/model/sampling/generate.ts`); a value near
 * {@link FLOAT32_MAX} / 10 makes a noisy latent Infinity and the model fails (`1e308` failed its
 * first step). Far below that, from about 1e7 on, float32's rounding of `z + noise * e` (one unit in
 * the last place is about noise * 1.2e-7) no longer keeps anything of `z`, so no larger value
 * could mean anything different; 1e6 trains (tested up to 1e36) and leaves 30 orders of magnitude to
 * the float32 limit.
 */
export const MAX_PRIVACY_NOISE = 1_000_000;

/** Largest finite float32, (2 - 2^-23) * 2^127. */
export const FLOAT32_MAX = 3.4028234663852886e38;

/**
 * typia tag: a number that is finite in float32, i.e. in [-{@link FLOAT32_MAX}, FLOAT32_MAX]
 * (latents are computed in float32: `1e308` is finite in float64 but Infinity there). NaN fails
 * too. typia's `Type<"float">` is not used: its lower bound is -1.175494351e38, not -FLOAT32_MAX.
 */
export type Float32 = tags.TagBase<{
  target: "number";
  kind: "float32";
  value: undefined;
  validate: "-3.4028234663852886e+38 <= $input && $input <= 3.4028234663852886e+38";
  exclusive: true;
  schema: { minimum: -3.4028234663852886e38; maximum: 3.4028234663852886e38 };
}>;

/** Model states (contract: "States and transitions"). */
export type ModelStatus = "created" | "building" | "training" | "ready" | "failed";

/** `config.model_size` as accepted on input (contract: Create Model); `S`/`M`/`L` are aliases. */
export type ModelSizeInput = "small" | "medium" | "large" | "S" | "M" | "L";
/** `config.model_size` as returned: aliases normalised. */
export type ModelSize = "small" | "medium" | "large";

/**
 * A column's kind (docs/api.md, "Column kinds"): `categorical` (one code per value seen at least
 * `rare_threshold` times, rarer values pooled), `numerical` (point or quantile bins of numbers),
 * `datetime` (point or quantile bins over time, in seconds since the Unix epoch), `id` (an
 * identifier: one code for "present", its shape recorded instead of its values).
 */
export type ColumnKind = "categorical" | "numerical" | "datetime" | "id";

/**
 * Unit a datetime column's values are written at (docs/api.md, "Column kinds"): `year` (every value
 * 1 January at midnight), `month` (the 1st of a month at midnight), or a fixed unit.
 */
export type DatetimeGranularity = "year" | "month" | "day" | "hour" | "minute" | "second" | "millisecond";

/** `column_stats[f].id_shape` of an integer identifier: its range, never its values. */
export interface IntegerIdShapeStats {
  kind: "integer";
  min: number & tags.Type<"int64">;
  max: number & tags.Type<"int64">;
  /** Number of distinct non-blank values. */
  distinct: number & tags.Type<"uint32">;
}

/** `column_stats[f].id_shape` of a text identifier: prefix, lengths and characters per position. */
export interface TextIdShapeStats {
  kind: "text";
  /** Longest prefix every value shares (a constant of the column, e.g. `ORD-`). */
  prefix: string & tags.MaxLength<256>;
  /** Rows per length of the part after the prefix; keys are lengths written as decimal strings. */
  lengths: Record<string, number & tags.Type<"uint32">>;
  /** Characters allowed at each position after the prefix: ranges (`0-9`, `a-z`, `A-F`) then literals. */
  positions: (string & tags.MaxLength<512>)[] & tags.MaxItems<1024>;
  /**
   * What the values are (issue 24; docs/api.md "Column kinds"): decoding writes fresh values of
   * this kind (names, emails, titles ...) instead of characters of `positions`.
   */
  semantic?: SemanticShapeStats;
}

/** `id_shape.semantic`: a semantic kind, its locale, a Bloom filter of the real values, a title's words. */
export interface SemanticShapeStats {
  kind:
    | "first_name"
    | "last_name"
    | "full_name"
    | "email"
    | "phone"
    | "street_address"
    | "city"
    | "postal_code"
    | "url"
    | "company"
    | "uuid"
    | "ip"
    | "title";
  locale?: "en" | "de" | "fr" | "es";
  /** Phone only: ISO 3166 country of most values, and whether they are written with `+cc`. */
  country?: string & tags.Pattern<"^[A-Z]{2}$">;
  international?: boolean;
  /** Names, cities, companies: no real value has a capital inside a word (`McDonald`), nor will a fresh one. */
  plain?: boolean;
  /** Bloom filter of the case-folded real values (1% false positives): at most 64 KiB, base64. */
  bloom?: {
    bits: string & tags.MinLength<4> & tags.MaxLength<87384>;
    hashes: number & tags.Type<"uint32"> & tags.Minimum<1> & tags.Maximum<32>;
  };
  /** Title only: words, pairs and word counts each seen in >= k rows (counts below k are 0 or absent). */
  text?: {
    k: number & tags.Type<"uint32"> & tags.Minimum<1>;
    words: (string & tags.MinLength<1> & tags.MaxLength<256>)[] & tags.MinItems<1> & tags.MaxItems<5000>;
    first: (number & tags.Type<"uint32">)[] & tags.MaxItems<5000>;
    inner: (number & tags.Type<"uint32">)[] & tags.MaxItems<5000>;
    last?: (number & tags.Type<"uint32">)[] & tags.MaxItems<5000>;
    bigrams: [number & tags.Type<"uint32">, number & tags.Type<"uint32">, number & tags.Type<"uint32">][] & tags.MaxItems<10000>;
    lengths: Record<string, number & tags.Type<"uint32">>;
  };
}

/** `column_stats[f]` (DESIGN §2, extended by the column kinds of docs/api.md). */
export interface ColumnStats {
  type: ColumnKind;
  /** Rows with a non-missing value. */
  count: number & tags.Type<"uint32">;
  /** Rows with a missing (blank) value. */
  missing: number & tags.Type<"uint32">;
  min?: number & Finite;
  max?: number & Finite;
  mean?: number & Finite;
  std?: number & Finite;
  /**
   * Numerical only: non-decreasing bin edges, K_numeric + 1 of them; bin i is [edges[i], edges[i+1])
   * (the last bin closed). A repeated edge `edges[i] == edges[i+1]` is a point bin holding exactly
   * that value (the SDK gives a value covering at least 1/binCap of the rows its own bin).
   */
  bin_edges?: (number & Finite)[];
  /** Numerical only: every observed value was an integer (decode keeps integers). */
  integer?: boolean;
  /** Numerical only: the most decimals any value is written with; decoded values are rounded to it. */
  decimals?: number & tags.Type<"uint32"> & tags.Maximum<20>;
  /**
   * Numerical only: every value is written with exactly `decimals` decimals (`0.0`, `1.5`), so
   * decoded values keep trailing zeros (`0.0` stays `0.0`). Absent: trailing zeros are dropped.
   */
  fixed_decimals?: boolean;
  /**
   * Numerical only: every value is a whole multiple of this step (25 for body masses in 25 g,
   * 100000 for budgets in round hundred-thousands); decoded values stay on it. Absent: the step is
   * 10^-decimals.
   */
  step?: number & tags.ExclusiveMinimum<0> & Finite;
  /** Datetime only: the column's format in luxon tokens, e.g. `yyyy/MM/dd HH:mm`. */
  format?: string & tags.MinLength<1> & tags.MaxLength<256>;
  /** Datetime only: the unit every value is a whole multiple of (in its own UTC offset). */
  granularity?: DatetimeGranularity;
  /** Datetime only, for formats that write a UTC offset: the most frequent offset, minutes east of UTC. */
  offset?: number & tags.Type<"int32"> & tags.Minimum<-1440> & tags.Maximum<1440>;
  /** Id only: the shape fresh identifiers are written in. */
  id_shape?: IntegerIdShapeStats | TextIdShapeStats;
  /** Categorical only: rows a value needs for a code of its own; rarer values share the pooled code. */
  rare_threshold?: number & tags.Type<"uint32">;
  /**
   * Categorical only, with a pooled code: the column holds values of a semantic kind (city, person
   * name ...) and many of its rows hold rare values, so a pooled cell is written as a fresh value
   * of that kind (never a real value, up to the Bloom filter) instead of a stand-in among the
   * released values. Same shape as an identifier's `id_shape.semantic`.
   */
  semantic?: SemanticShapeStats;
  /** Set when the marginals were noised client-side (DESIGN §2, privacy). */
  privacy?: { epsilon: number & Finite; delta: number & Finite; rho: number & Finite; sigma: number & Finite };
}

/**
 * A 2-way marginal (DESIGN §2 extension `metadata.marginals`): `probs[i * K_g + j] = P(f = i, g = j)`,
 * row-major over the pair `[f, g]`, length `K_f * K_g`, summing to 1.
 */
export interface PairMarginal {
  features: [string, string];
  probs: (number & Finite)[];
}

/** `metadata` of Create Model: the statistical description the SDK builds from a table. */
export interface Metadata {
  /** Column names, in table order; at least one. */
  features: (string & tags.MinLength<1>)[] & tags.MinItems<1>;
  /** K per feature: the number of codes (contract: "Vocabulary size per feature"). */
  cardinalities: Record<string, number & tags.Type<"uint32"> & tags.Minimum<1>>;
  /** The 1-way marginal per feature: length K, non-negative, sums to 1. */
  empirical_probs: Record<string, (number & Finite)[]>;
  column_stats?: Record<string, ColumnStats>;
  /** Value -> code per feature (the blank value maps to the missing code). */
  value_mappings?: Record<string, Record<string, number & tags.Type<"uint32">>>;
  /** Selected 2-way marginals. */
  marginals?: PairMarginal[];
  /** Where the table came from, for people telling models apart (`synthd models ls`); not used in training. */
  source?: MetadataSource;
  /**
   * Row rules the real rows keep (found by the SDK, or declared by the user); the SDK's decoder
   * makes every synthetic row keep them. Not used in training (docs/api.md, "Row rules").
   */
  rules?: Rule[] & tags.MaxItems<1000>;
}

/**
 * One row rule of `metadata.rules` (docs/api.md, "Row rules"). Every kind carries `share`: the
 * share of the real table's rows that keep the rule (1 when every row does; detection tolerates
 * a little dirty data, `share` then says how much), and `declared` when the user gave the rule.
 */
export type Rule = FixedCombinationsRule | InequalityRule | SumRule | NotEqualRule | BlankTogetherRule;

/** Fields every {@link Rule} has. */
export interface RuleBase {
  /** Share of the real rows the rule applies to that keep it, in [0, 1]. */
  share: number & tags.Minimum<0> & tags.Maximum<1>;
  /** The user declared the rule (the SDK's `rules` option) rather than the SDK finding it. */
  declared?: boolean;
}

/**
 * Fixed combinations (SDV's `FixedCombinations`): the values of `columns` appear together only in
 * the listed combinations (city, state); with `determinant`, that column decides the others (a
 * functional dependency: education -> education-num). Columns are categorical, or numerical or
 * datetime with point bins (values in `value_mappings`).
 */
export interface FixedCombinationsRule extends RuleBase {
  type: "fixed_combinations";
  columns: (string & tags.MinLength<1>)[] & tags.MinItems<2> & tags.MaxItems<4>;
  /** One of `columns`: the column whose value decides the others'. */
  determinant?: string & tags.MinLength<1>;
  /**
   * The combinations released: code tuples in `columns` order, each seen in at least k real rows
   * (k = the rare threshold), so no rare combination is ever released. With `determinant`, one
   * tuple per determinant value with a code of its own (never `__other__` or blank); without,
   * tuples holding the pooled or blank code are released like any other.
   */
  combinations: ((number & tags.Type<"uint32">)[])[] & tags.MaxItems<100000>;
  /** Real rows per combination, same order (each >= k). */
  counts: (number & tags.Type<"uint32">)[] & tags.MaxItems<100000>;
}

/** Inequality (SDV's `Inequality`): `high >= low` (`high > low` when `strict`), numbers or datetimes. */
export interface InequalityRule extends RuleBase {
  type: "inequality";
  high: string & tags.MinLength<1>;
  low: string & tags.MinLength<1>;
  strict: boolean;
}

/** Sum: `total = parts[0] + parts[1]` within the columns' decimals (numerical columns). */
export interface SumRule extends RuleBase {
  type: "sum";
  total: string & tags.MinLength<1>;
  parts: (string & tags.MinLength<1>)[] & tags.MinItems<2> & tags.MaxItems<2>;
}

/** Not equal: two columns over the same values never hold the same value in a row (home team, away team). */
export interface NotEqualRule extends RuleBase {
  type: "not_equal";
  columns: (string & tags.MinLength<1>)[] & tags.MinItems<2> & tags.MaxItems<2>;
}

/** Blank together: in every row, the columns are all blank or none is. */
export interface BlankTogetherRule extends RuleBase {
  type: "blank_together";
  columns: (string & tags.MinLength<1>)[] & tags.MinItems<2> & tags.MaxItems<16>;
}

/**
 * `metadata.source`: what the SDK says of the table it described. Both fields are optional: an
 * in-memory table has no file name, and private metadata (differentially private marginals) sends
 * no exact row count.
 */
export interface MetadataSource {
  /** The file's name without its directory, e.g. `adult.csv`. */
  name?: string & tags.MinLength<1> & tags.MaxLength<255>;
  /** Data rows read (header excluded). */
  rows?: number & tags.Type<"uint32">;
}

/** `config` of Create Model as accepted on input. Unknown fields are rejected (DESIGN §3). */
export interface ModelConfigInput {
  model_size?: ModelSizeInput;
  embedding_dim?: number & tags.Type<"uint32"> & tags.Minimum<1> & tags.Maximum<4096>;
  batch_size?: number & tags.Type<"uint32"> & tags.Minimum<1> & tags.Maximum<65536>;
  learning_rate?: number & tags.ExclusiveMinimum<0> & tags.Maximum<10>;
  max_epochs?: number & tags.Type<"uint32"> & tags.Minimum<1> & tags.Maximum<1000000>;
  /** Seconds. */
  max_training_time?: number & tags.ExclusiveMinimum<0> & Finite;
  early_stop_patience?: number & tags.Type<"uint32">;
  privacy_enabled?: boolean;
  /**
   * Standard deviation of the Gaussian noise added to the unit-variance latents (contract: "Create
   * Model"), 0 to {@link MAX_PRIVACY_NOISE}.
   */
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
  /** The compute device actually used, e.g. `cpu` (DESIGN §2). */
  device: string;
}

/** Body of `POST /v1/models`. */
export interface CreateModelRequest {
  metadata: Metadata;
  config?: ModelConfigInput;
}

/** `error` of a failed model (DESIGN §3). */
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

/** `embedding` as `{num_rows, seed}`: the server draws the latents (DESIGN §2). */
export interface LatentSpec {
  num_rows: number & tags.Type<"uint32"> & tags.Minimum<1>;
  seed?: number & tags.Type<"int64">;
  /**
   * Extension (docs/api.md): draw a pool of rows, weight it by raking to the model's marginals and
   * return num_rows of its rows (`src/model/sampling/calibrate.ts`). Default false: the plain draw of DESIGN §2.
   */
  calibrate?: boolean;
  /**
   * Extension (issue 12, docs/api.md "Seeded generation"): every row satisfies this condition.
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
 * `embedding.seed_data` (extension, issue 12): a table of conditions, one output row per seed row.
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

/** `data` of a generate response (envelope object `generation`, DESIGN §2). */
export interface Generation {
  model_id: string;
  num_rows: number;
  features: string[];
  /** `columns[f][r]` = code of feature f in row r, `0 <= code < K_f`. */
  columns: Record<string, number[]>;
}

/** Query of `GET /v1/models`. */
export interface ListModelsQuery {
  limit?: number & tags.Type<"uint32"> & tags.Minimum<1> & tags.Maximum<100>;
  starting_after?: string;
}

/** Success envelope (contract: "Response envelope"). */
export interface Envelope<T> {
  object: "model" | "list" | "generation" | "model_metadata";
  data: T;
  metadata: { timestamp: string; has_more?: boolean };
}

/** `metadata` of a success envelope. */
export interface ResponseMetadata {
  /** ISO 8601 UTC time of the response. */
  timestamp: string & tags.Format<"date-time">;
}

/** `metadata` of a list envelope. */
export interface ListResponseMetadata extends ResponseMetadata {
  /** True when a further page exists (pass the last item's id as `starting_after`). */
  has_more: boolean;
}

/** Response of Create Model (201) and Get Model (200): envelope object `model`. */
export interface ModelResponse {
  object: "model";
  data: Model;
  metadata: ResponseMetadata;
}

/** Response of List Models (200): envelope object `list`, newest first. */
export interface ModelListResponse {
  object: "list";
  data: Model[];
  metadata: ListResponseMetadata;
}

/** Response of Generate (200): envelope object `generation` (DESIGN §2). */
export interface GenerationResponse {
  object: "generation";
  data: Generation;
  metadata: ResponseMetadata;
}

/** Response of Get Model Metadata (200, extension): envelope object `model_metadata`. */
export interface ModelMetadataResponse {
  object: "model_metadata";
  data: Metadata;
  metadata: ResponseMetadata;
}

/** `error.type` values (contract: "Error types"). */
export type ErrorType =
  | "authentication_error"
  | "invalid_request_error"
  | "not_found_error"
  | "rate_limit_error"
  | "quota_exceeded_error"
  | "api_error";

/** `error.code` values: the contract's table plus the DESIGN §3 extensions. */
export type ErrorCode =
  | "api_key_missing"
  | "api_key_invalid"
  | "parameter_invalid"
  | "model_not_found"
  | "model_not_ready"
  | "training_service_unavailable"
  | "idempotency_key_in_use"
  | "quota_exceeded"
  | "rate_limit_exceeded"
  | "internal_error"
  | "request_too_large"
  | "route_not_found"
  | "method_not_allowed";

/** HTTP status and type of every error code (contract: "Error codes"; DESIGN §3 extensions). */
export const ERROR_CODES: Record<ErrorCode, { status: number; type: ErrorType }> = {
  api_key_missing: { status: 401, type: "authentication_error" },
  api_key_invalid: { status: 401, type: "authentication_error" },
  parameter_invalid: { status: 400, type: "invalid_request_error" },
  model_not_found: { status: 404, type: "not_found_error" },
  model_not_ready: { status: 400, type: "invalid_request_error" },
  training_service_unavailable: { status: 503, type: "api_error" },
  idempotency_key_in_use: { status: 409, type: "invalid_request_error" },
  quota_exceeded: { status: 402, type: "quota_exceeded_error" },
  rate_limit_exceeded: { status: 429, type: "rate_limit_error" },
  internal_error: { status: 500, type: "api_error" },
  request_too_large: { status: 413, type: "invalid_request_error" },
  route_not_found: { status: 404, type: "invalid_request_error" },
  method_not_allowed: { status: 405, type: "invalid_request_error" },
};

/** Error envelope (contract: "Error envelope"). */
export interface ErrorBody {
  error: {
    type: ErrorType;
    code: ErrorCode;
    /** Human-readable description. */
    message: string;
    /** `{docs_url}/docs/errors#<code>`. */
    doc_url: string & tags.Format<"uri">;
    /** Offending parameter path, e.g. `body.config.batch_size`; present when applicable. */
    param?: string;
  };
  /** `req_` + 24 characters from `[A-Za-z0-9]`; equals the `X-Request-Id` header. */
  request_id: string & tags.Pattern<"^req_[A-Za-z0-9]{24}$">;
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

/** Rows per generate request (DESIGN §2); more gives `parameter_invalid` on `body.embedding`. */
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
