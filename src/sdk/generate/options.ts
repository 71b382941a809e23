/**
 * The options of {@link Synthesizer}'s calls: fit, sample (plain and seeded) and the output format.
 */
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
  /**
   * Called with the config sent to Create Model and the fields the SDK chose by the table's size
   * ({@link fitConfig}: `model_size` and `max_epochs` when `config` leaves them out).
   */
  onConfig?: (config: ModelConfigInput, chosen: ("model_size" | "max_epochs")[], rows: number) => void;
  /** Fewest data rows to model, >= 1. Default {@link MIN_ROWS} (20; why there). */
  minRows?: number;
  /**
   * Build the near-copy filter from `source` ({@link Synthesizer.nearCopyFilter}), whatever the
   * table's size. Default: true without `privacy`. `true` with `privacy` is a RangeError.
   */
  nearCopyFilter?: boolean;
  /**
   * The secret the filter hashes cells with (at least 16 bytes; default 32 random bytes), for a
   * filter stored with `NearCopyFilter.toBuffer` and loaded later (`synthd fit` does so).
   */
  nearCopyKey?: Uint8Array;
  /**
   * Called with the filter built (or why none was) and the model just created, before training
   * is awaited, when {@link nearCopyFilter} applies.
   */
  onNearCopyFilter?: (built: FilterBuild, model: Model) => void;
}

/** Progress of a sampling call. */
export interface SampleProgress {
  rowsDone: number;
  rowsTotal: number;
  batch: number;
  batches: number;
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
   * Calibrated generation (server extension, docs/api.md): the server draws a pool of twice the
   * rows, weights it by raking to the model's marginals and returns the rows asked for. Closer to
   * the given marginals (on discretized Adult 2-way TVD 0.025 -> 0.014, TSTR ROC AUC 0.91 -> 0.918)
   * at about a fifth of the rows per second. With `where` or a seed table: the conditioned rows are
   * raked to what the given marginals say about the condition (docs/api.md "Seeded generation").
   * Default: true, except for metadata measured under differential privacy (noisy marginals;
   * calibrating to them fits the noise).
   */
  calibrate?: boolean;
  /**
   * Body of the generate responses: `"arrow"` (default; docs/api.md "Arrow responses", read as JSON
   * from a server without the extension) or `"json"` (the contract's form).
   */
  wire?: "arrow" | "json";
  /** Rows per generate request, 1..100,000. Default 100,000. */
  batchSize?: number;
  /** Called after each decoded batch. */
  onProgress?: (p: SampleProgress) => void;
  /** Per-request options (signal, timeout, retries). */
  request?: Omit<RequestOptions, "idempotencyKey">;
  /**
   * Only rows satisfying this condition (seeded generation, `./seeded`): column -> a value, a list
   * of values, or a range `{gte?, gt?, lte?, lt?}` (numerical and datetime columns), e.g.
   * `{ sex: "Female", age: { gte: 60 } }`. Drawn from the model's conditional (never by
   * rejecting rows; calibrated unless `calibrate: false`, as the unconditioned sample), ranged
   * values inside the range.
   * @throws DataError (before any request) for an unknown column, an identifier column, a value
   *   not in the code book, an empty range or list.
   */
  where?: Where;
  /**
   * Drop rows that nearly copy a real row (the synthesizer's {@link Synthesizer.nearCopyFilter}).
   * Default true when the synthesizer has a filter; `false` keeps every generated row.
   */
  nearCopyFilter?: boolean;
}

/** Options of seeded sampling from a seed table (`sample({ seedData })`, `impute`). */
export interface SeedSampleOptions extends Omit<SampleOptions, "where" | "batchSize"> {
  /**
   * The seed table: records, a {@link Table}, or CSV text with a header. One output row per seed
   * row: its non-blank cells are kept byte for byte, its blank cells generated.
   */
  seedData?: SeedTable;
  /** Or: the path of a seed CSV file (UTF-8, header line). */
  seedFile?: string;
  /** Seed rows per generate request, 1..MAX_SEED_ROWS_PER_REQUEST (2,000). Default 2,000. */
  batchSize?: number;
}

/** The output format option of {@link Synthesizer.writeFile}. */
export interface FormatOptions {
  /**
   * `"csv"`, `"parquet"` or `"arrow"` (Arrow IPC file format). Default: by the path's extension
   * (`.csv`; `.parquet`, `.pq`; `.arrow`, `.feather`, `.ipc`), else CSV (other extensions, streams).
   */
  format?: OutputFormat;
}
