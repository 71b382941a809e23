/** The options of {@link Synthesizer}'s calls: fit, sample (plain and seeded), output format. */
import type { Model, ModelConfigInput } from "../../contract";
import type { RequestOptions } from "../client/client";
import type { OutputFormat } from "../io/formats";
import type { SeedTable, Where } from "./seeded-request";
import type { Analysis, ExtractOptions } from "../metadata/metadata";
import type { WaitOptions } from "../client/models";
import type { FilterBuild } from "../privacy/filter";

/** Options of {@link Synthesizer.fit}. */
export interface FitOptions extends ExtractOptions {
  /** Training configuration sent with Create Model. */
  config?: ModelConfigInput;
  /** Wait until the model is `ready` (default true); otherwise return right after creation. */
  wait?: boolean;
  /** Called with every polled model state while waiting. */
  onProgress?: (model: Model) => void;
  /** Waiting options (timeout, poll interval). */
  waitOptions?: Omit<WaitOptions, "onProgress">;
  /** Idempotency-Key of the Create Model call. */
  idempotencyKey?: string;
  /** Called with the extraction's result (kinds, code books) before the model is created. */
  onAnalysis?: (analysis: Analysis) => void;
  /** Called with the config sent and the fields chosen by the table's size ({@link fitConfig}). */
  onConfig?: (config: ModelConfigInput, chosen: ("model_size" | "max_epochs")[], rows: number) => void;
  /** Fewest data rows to model, >= 1. Default {@link MIN_ROWS} (20; why there). */
  minRows?: number;
  /** Build the near-copy filter from `source`. Default: true unless `privacy` (then RangeError). */
  nearCopyFilter?: boolean;
  /** The filter's hashing secret (>= 16 bytes; default 32 random), to store and reload it. */
  nearCopyKey?: Uint8Array;
  /** Called with the filter built (or why none was) and the new model, before training ends. */
  onNearCopyFilter?: (built: FilterBuild, model: Model) => void;
}

/** Progress of a sampling call. */
export interface SampleProgress {
  rowsDone: number;
  rowsTotal: number;
  batch: number;
  batches: number;
  /**
   * Rows written so far that the near-copy filter did not check: it stops after drawing
   * `filterDrawCap` rows (3 times the rows asked for, at least 1,024) (a table whose rows are too alike to cap).
   */
  unfiltered?: number;
  /**
   * Rows written so far without the table's keys checked (`./unique-keys`): it stops after drawing
   * `keyDrawCap` rows (3 times the rows asked for, at least 1,024) or 24 top-up batches (a sample longer than the
   * key space, or a model that keeps drawing the same keys); these rows may repeat an earlier row's key.
   */
  unkeyed?: number;
}

/** Options of {@link Synthesizer.sample} and friends. */
export interface SampleOptions {
  /** Seed for reproducible output (any safe integer). Default: random per call. */
  seed?: number;
  /** Sampling temperature (> 0, server default 1). */
  temperature?: number;
  /** Nucleus threshold in (0, 1] (server default: none). */
  topP?: number;
  /**
   * Calibrated generation (docs/api.md): the server draws twice the rows and rakes them to the
   * model's marginals, closer at about a fifth of the speed. Default: true, except for private
   * metadata (calibrating to noisy marginals fits the noise).
   */
  calibrate?: boolean;
  /** Generate response body: `"arrow"` (default; docs/api.md "Arrow responses") or `"json"`. */
  wire?: "arrow" | "json";
  /** Rows per generate request, 1..100,000. Default 100,000. */
  batchSize?: number;
  /** Called after each decoded batch. */
  onProgress?: (p: SampleProgress) => void;
  /** Per-request options (signal, timeout, retries). */
  request?: Omit<RequestOptions, "idempotencyKey">;
  /**
   * Only rows satisfying this condition (`./seeded-request`), drawn from the model's conditional,
   * never by rejecting rows.
   * @throws DataError (before any request) for an unknown or identifier column, a value not in the
   *   code book, an empty range or list.
   */
  where?: Where;
  /** Drop rows that nearly copy a real row (default true when the synthesizer has a filter). */
  nearCopyFilter?: boolean;
}

/** Options of seeded sampling from a seed table (`sample({ seedData })`, `impute`). */
export interface SeedSampleOptions extends Omit<SampleOptions, "where" | "batchSize"> {
  /** The seed table: records, a {@link Table}, or CSV text with a header (one output row each). */
  seedData?: SeedTable;
  /** Or: the path of a seed CSV file (UTF-8, header line). */
  seedFile?: string;
  /** Seed rows per generate request, 1..MAX_SEED_ROWS_PER_REQUEST (2,000). Default 2,000. */
  batchSize?: number;
}

/** The output format option of {@link Synthesizer.writeFile}. */
export interface FormatOptions {
  /** `"csv"`, `"parquet"` or `"arrow"` (IPC file); default: the path's extension, else CSV. */
  format?: OutputFormat;
}
