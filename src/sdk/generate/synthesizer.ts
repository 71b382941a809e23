/**
 * The fit/sample helper: the contract's client-side flow behind two calls. Batch b of
 * `sample(n, {seed})` asks for `seed: deriveSeed(seed, b, 0)` and decodes with
 * `deriveSeed(seed, b, 1)`; identifiers come from one generator keyed {@link identifierKey} (the seed
 * and the model's table), so the same weights, `n`, `seed` and `batchSize` give byte-identical CSV. Seeded generation:
 * docs/api.md "Seeded generation"; output formats: docs/formats.md.
 */
import { createHash, randomInt } from "node:crypto";
import type { Writable } from "node:stream";
import { MAX_ROWS_PER_REQUEST, MAX_SEED_ROWS_PER_REQUEST, type GenerateRequest, type Metadata, type Model } from "../../contract";
import type { Synthd } from "../client/client";
import { describeSource, fileOfDescription, type Table, type TableSource } from "../io/csv";
import { Decoder } from "./decode";
import { chooseFormat, writeBatches } from "../io/formats";
import { DecodedBatch } from "./batch";
import type { EncodedSeed, SeedRows, SeedTable } from "./seeded-request";
import type { ExtractOptions } from "../metadata/metadata";
import type { GeneratedCodes, WaitOptions } from "../client/models";
import { ArrayPool } from "../client/array-pool";
import { deriveSeed } from "./sfc32";
import { DataError } from "../errors";
import type { FilterBuild, NearCopyFilter } from "../privacy/filter";
import { nearCopyRead } from "../privacy/near-copy-read";
import { SampleKeys } from "./unique-keys";
import { SpareRows } from "./spare-rows";
import type { FitOptions, SampleOptions, SeedSampleOptions, FormatOptions } from "./options";

// Modules only fitting, the near-copy filter or seeded generation use are loaded on first call, so
// `synthd sample` does not load them (docs/formats.md "Seventh round").
/**
 * The key of a sample's identifier generators (names, emails, URLs ...): `deriveSeed(seed, 0, 2, t)`,
 * t the first 48 bits of the SHA-256 of the metadata's features and cardinalities, so two models
 * sampled with one seed write different people, and one model and seed the same ones on every run.
 * @param seed the sample's seed (any finite number); `metadata` the model's.
 */
export function identifierKey(seed: number, metadata: Pick<Metadata, "features" | "cardinalities">): number {
  const table = createHash("sha256")
    .update(JSON.stringify([metadata.features, metadata.features.map((f) => metadata.cardinalities?.[f] ?? 0)]))
    .digest()
    .readUIntBE(0, 6);
  return deriveSeed(seed, 0, 2, table);
}

function analysis(): typeof import("../metadata/metadata") {
  return require("../metadata/metadata");
}
function fitDefaults(): typeof import("./fit-defaults") {
  return require("./fit-defaults");
}
function privacyFilter(): typeof import("../privacy/filter") {
  return require("../privacy/filter");
}
function marginalBalance(): typeof import("../privacy/marginal-balance") {
  return require("../privacy/marginal-balance");
}
function seededRequest(): typeof import("./seeded-request") {
  return require("./seeded-request");
}

/** Loaded to check seed cells against typed columns, not for CSV. */
function typed(): typeof import("../io/typed") {
  return require("../io/typed");
}

/** Batches the near-copy filter may add after the planned ones (see `sampleBatches`). */
export const FILTER_TOP_UP_ROUNDS = 8;

/** Drawn rows (over n, plus 16) after which a filtered sample keeps the rest: bounds the cost. */
export const FILTER_MAX_DRAWN = 3;

/** Rows a filtered sample may draw whatever its size: a small table's rows are often near-copies. */
export const FILTER_MIN_DRAWN_ROWS = 1024;

/** The rows a filtered sample of `n` may draw before it keeps the rest unchecked. */
export function filterDrawCap(n: number): number {
  return Math.max(FILTER_MAX_DRAWN * n + 16, FILTER_MIN_DRAWN_ROWS);
}

/**
 * Batches a sample of a table with a key (`./unique-keys`) may add after the planned ones: a key
 * filling its space is a coupon collector's draw, its last free keys found by many small batches.
 */
export const KEY_TOP_UP_ROUNDS = 24;

/**
 * Drawn rows (over n, plus 16) after which a sample stops checking the table's keys: the near-copy
 * filter's bound, so a key never makes a sample cost more than the filter may (every drawn row is
 * charged). At the real row count, independent uniform draws hold all but e^-3 (5%) of the keys
 * after 3n draws; the rest are written unchecked and counted.
 */
export const KEY_MAX_DRAWN = FILTER_MAX_DRAWN;

/**
 * Rows the near-copy filter dropped that a sample with a key keeps, at most, to fill its free keys
 * once the filter stops (`sampleDecoded`, `./spare-rows`): those rows are drawn and charged already.
 */
const MAX_SPARE_ROWS = 65_536;

/** The rows a sample of `n` may draw before it keeps the rest without checking its keys. */
export function keyDrawCap(n: number): number {
  return Math.max(KEY_MAX_DRAWN * n + 16, FILTER_MIN_DRAWN_ROWS);
}

/** A trained (or training) model with its metadata: fit once, sample many times. */
export class Synthesizer {
  readonly decoder: Decoder;
  /** Drops sampled rows that nearly copy a real row (`../privacy/filter`); not seeded ones. */
  nearCopyFilter?: NearCopyFilter;
  private constructor(
    readonly client: Synthd,
    /** The model as last seen (creation, wait, or fromModel). */
    public model: Model,
    /** The metadata the model was trained on (decoding needs nothing else). */
    readonly metadata: Metadata,
  ) {
    this.decoder = new Decoder(metadata);
  }

  /** The model id (`mdl_...`). */
  get id(): string {
    return this.model.id;
  }

  /** Column names in the original table order. */
  get columns(): string[] {
    return [...this.metadata.features];
  }

  /**
   * Extracts metadata from `source` (streamed CSV or in-memory table), creates the model and,
   * unless `wait: false`, waits until it is ready; options left out are chosen by the table's rows
   * (`./fit-defaults`).
   * @throws DataError (bad table or domain; fewer than `minRows` rows, default {@link MIN_ROWS}),
   *   RangeError (privacy without domain, bad epsilon or delta, bad minRows), the HTTP errors of
   *   Create Model, TrainingFailedError, TrainingTimeoutError.
   */
  static async fit(client: Synthd, source: TableSource, opts: FitOptions = {}): Promise<Synthesizer> {
    const { MIN_ROWS, defaultRareThreshold, defaultBinCap, sourceOf, fitConfig } = fitDefaults();
    const { DEFAULTS, analyzeTable } = analysis();
    const minRows = opts.minRows ?? MIN_ROWS;
    if (!(Number.isInteger(minRows) && minRows >= 1)) throw new RangeError("minRows must be an integer >= 1");
    let scan = await analyzeTable(source, opts);
    if (opts.domain === undefined) {
      // k and the bins depend on the rows, known only after a pass; a small table is read again.
      const small = {
        ...(opts.rareThreshold === undefined && defaultRareThreshold(scan.n) !== DEFAULTS.rareThreshold ? { rareThreshold: defaultRareThreshold(scan.n) } : {}),
        ...(opts.binCap === undefined && defaultBinCap(scan.n) !== DEFAULTS.binCap ? { binCap: defaultBinCap(scan.n) } : {}),
      };
      if (Object.keys(small).length > 0) scan = await analyzeTable(source, { ...opts, ...small });
    }
    if (scan.n < minRows) {
      const name = describeSource(source);
      throw new DataError(
        `${name} has ${scan.n} data row${scan.n === 1 ? "" : "s"}; at least ${minRows} are needed to model it, because below that ` +
          `the marginals sent describe each row (every value its own code, every pair's joint counts) and the samples would be copies of the rows.`,
        { file: fileOfDescription(name) },
      );
    }
    opts.onAnalysis?.(scan);
    const metadata: Metadata = { ...scan.metadata, source: sourceOf(source, scan.n, opts.privacy !== undefined) };
    const { config, chosen } = fitConfig(scan.n, opts.config);
    opts.onConfig?.(config, chosen, scan.n);
    const model = await client.models.create(
      { metadata, config },
      opts.idempotencyKey ? { idempotencyKey: opts.idempotencyKey } : undefined,
    );
    const s = new Synthesizer(client, model, metadata);
    if (opts.nearCopyFilter ?? opts.privacy === undefined) {
      if (opts.privacy !== undefined) throw new RangeError("nearCopyFilter cannot be combined with privacy: the output would depend on the real rows");
      const built = await s.useNearCopyFilter(source, {
        ...(opts.domain !== undefined ? { domain: opts.domain } : { columns: opts.columns }),
        delimiter: opts.delimiter,
        encoding: opts.encoding,
      }, opts.nearCopyKey);
      opts.onNearCopyFilter?.(built, s.model);
    }
    if (opts.wait !== false) await s.waitUntilReady({ ...opts.waitOptions, onProgress: opts.onProgress });
    return s;
  }

  /** A synthesizer for an existing model. @throws NotFoundError for a model this key lacks. */
  static async fromModel(client: Synthd, id: string): Promise<Synthesizer> {
    const [model, metadata] = await Promise.all([client.models.retrieve(id), client.models.metadata(id)]);
    return new Synthesizer(client, model, metadata);
  }

  /**
   * Builds the near-copy filter from the real table the model was fitted on (`../privacy/filter`),
   * the table read as `../privacy/near-copy-read` defines (the model's identifiers left out).
   * @param key the secret cells are hashed with (default: 32 random bytes), to reload a stored one.
   * @returns the filter's split share, or why none was built (then no filter is kept).
   * @throws DataError for a real table that cannot be read or lacks a column of the model.
   */
  async useNearCopyFilter(
    real: TableSource,
    read: Pick<ExtractOptions, "columns" | "delimiter" | "encoding" | "domain"> = {},
    key?: Uint8Array,
  ): Promise<FilterBuild> {
    const built = await privacyFilter().NearCopyFilter.build(real, nearCopyRead(read, this.metadata), key);
    this.nearCopyFilter = built.filter;
    return built;
  }

  /** Polls until the model is ready (see `Models.waitUntilReady`); updates `this.model`. */
  async waitUntilReady(opts: WaitOptions = {}): Promise<Model> {
    this.model = await this.client.models.waitUntilReady(this.id, opts);
    return this.model;
  }

  /**
   * Generates `n` rows in batches of at most `batchSize` (<= 100,000) and yields each decoded
   * batch; batch b + 1 is requested while b is decoded, so a consumer that stops early has had one
   * batch more generated, and charged, than it took. Rows the near-copy filter drops are charged
   * and replaced by top-up batches of the same seeded stream (the same seed gives the same `n`
   * rows), up to {@link FILTER_TOP_UP_ROUNDS} and {@link filterDrawCap}; so are rows repeating an
   * earlier row's key (`./unique-keys`), up to {@link KEY_TOP_UP_ROUNDS} and {@link keyDrawCap}.
   * @throws ModelNotReadyError, QuotaExceededError, ... (the errors of generate).
   */
  async *sampleBatches(n: number, opts: SampleOptions = {}): AsyncGenerator<Table> {
    for await (const b of this.sampleDecoded(n, opts)) yield b.toTable();
  }

  /**
   * {@link sample} with, per feature of `features`, the generated code of each row (the model's
   * category index or bin, as the server drew it), rows aligned with the table's. `unread`: the
   * caller reads only the codes of these features, not their cells (`./decode` DecodeOptions.unread).
   * @throws RangeError for a feature the model lacks; as {@link sample}.
   */
  async sampleWithCodes(n: number, features: readonly string[], opts: SampleOptions & { unread?: readonly string[] } = {}): Promise<{ table: Table; codes: Int32Array[] }> {
    const { batch, codes } = await this.sampleBatchWithCodes(n, features, opts);
    return { table: batch.toTable(), codes };
  }

  /**
   * {@link sampleWithCodes} with the rows held by column in one batch (`./batch`
   * `DecodedBatch.concat` of the decoded batches): no string per cell of a code-book or integer
   * column, for a caller that selects and writes rows without reading most cells.
   * @throws as {@link sampleWithCodes}.
   */
  async sampleBatchWithCodes(n: number, features: readonly string[], opts: SampleOptions & { unread?: readonly string[] } = {}): Promise<{ batch: DecodedBatch; codes: Int32Array[] }> {
    for (const f of features) if (!this.metadata.features.includes(f)) throw new RangeError(`the model has no feature "${f}"`);
    const codes = features.map(() => new Int32Array(n));
    let at = 0;
    const keepCodes = (gen: Record<string, ArrayLike<number>>, keep: readonly number[] | undefined): void => {
      features.forEach((f, k) => {
        const c = gen[f];
        if (keep === undefined) for (let r = 0; r < c.length && at + r < n; r++) codes[k][at + r] = c[r];
        else keep.forEach((r, i) => void (codes[k][at + i] = c[r]));
      });
    };
    const batches: DecodedBatch[] = [];
    const unread = opts.unread !== undefined ? new Set(opts.unread) : undefined;
    for await (const b of this.sampleDecoded(n, opts, keepCodes, unread)) {
      at += b.length;
      batches.push(b);
    }
    return { batch: DecodedBatch.concat(batches), codes };
  }

  /**
   * {@link sampleBatches} with each batch held by column (`./batch`), as the writers take it;
   * `onCodes` is given each batch's generated codes and the rows kept of it (all when undefined).
   */
  private async *sampleDecoded(
    n: number,
    opts: SampleOptions,
    onCodes?: (codes: Record<string, ArrayLike<number>>, keep: readonly number[] | undefined) => void,
    unread?: ReadonlySet<string>,
  ): AsyncGenerator<DecodedBatch> {
    if (!(Number.isInteger(n) && n >= 1)) throw new RangeError("n must be a positive integer");
    const batchSize = opts.batchSize ?? MAX_ROWS_PER_REQUEST;
    if (!(Number.isInteger(batchSize) && batchSize >= 1 && batchSize <= MAX_ROWS_PER_REQUEST)) {
      throw new RangeError(`batchSize must be an integer in [1, ${MAX_ROWS_PER_REQUEST}]`);
    }
    const where = opts.where !== undefined ? seededRequest().compileWhere(this.decoder, opts.where) : undefined;
    const conditioned = where !== undefined && Object.keys(where.condition).length > 0;
    const seed = opts.seed ?? randomInt(0, 2 ** 47);
    const calibrate = opts.calibrate ?? !this.isPrivate();
    const batches = Math.ceil(n / batchSize);
    // A condition's columns keep the condition: row rules rewrite the other columns around them.
    const fixedFeatures = this.metadata.features.map((f) => conditioned && Object.hasOwn(where.condition, f));
    const writtenFixed = conditioned ? (_r: number, f: number): boolean => fixedFeatures[f] : undefined;
    // A batch's codes are decoded (and given back) before the next response is read; its decoded
    // columns come from the same pool; a writer gives them back (`DecodedBatch.release`).
    const arrays = new ArrayPool();
    const fetchBatch = (b: number, rows?: number): Promise<GeneratedCodes> => {
      const p = this.client.models.generateCodes(
        this.id,
        {
          embedding: {
            num_rows: rows ?? Math.min(batchSize, n - b * batchSize),
            seed: deriveSeed(seed, b, 0),
            ...(calibrate ? { calibrate: true } : {}),
            ...(conditioned ? { condition: where.condition } : {}),
          },
          ...this.samplingFields(opts),
        },
        { ...opts.request, format: opts.wire ?? "arrow", arrays },
      );
      // A prefetched batch whose consumer stopped first must not be an unhandled rejection.
      p.catch(() => undefined);
      return p;
    };
    let next = fetchBatch(0);
    let done = 0;
    let drawn = 0; // rows decoded, kept or dropped: the next row's index for the identifiers
    const idKey = identifierKey(seed, this.metadata);
    const filter = opts.nearCopyFilter === false ? undefined : this.nearCopyFilter;
    const tally = { kept: 0, near: 0 };
    // Which rows the filter keeps: those nearest the model's marginals (`../privacy/marginal-balance`).
    const balance = filter !== undefined ? marginalBalance().MarginalBalance.of(this.metadata) : undefined;
    let unfiltered = 0;
    // The table's keys: a row repeating an earlier row's key is dropped and redrawn (`./unique-keys`).
    const keys = SampleKeys.of(this.metadata);
    let unkeyed = 0;
    // Rows the filter dropped that hold free keys: once the filter stops, they fill the sample's
    // free keys before any new draw (a grid's rows are all near-copies; new rows would repeat keys).
    const spares = filter !== undefined && onCodes === undefined ? SpareRows.of(this.metadata, Math.min(filterDrawCap(n), MAX_SPARE_ROWS)) : undefined;
    const useSpares = spares !== undefined;
    // Row counters count the rows written, not those drawn: the checks above drop rows after decoding.
    const counters = this.decoder.counters.filter((c) => !fixedFeatures[c.feature]);
    const numberRows = (part: DecodedBatch, before: number): void => {
      for (const c of counters) part.numberRows(c.feature, c.start + before);
    };
    for (let b = 0; done < n; b++) {
      const gen = await next;
      const planned = b + 1 < batches;
      if (planned) next = fetchBatch(b + 1);
      let batch = this.decoder.decodeBatch(gen.columns, deriveSeed(seed, b, 1), {
        rowOffset: drawn,
        idKey,
        arrays,
        ...(conditioned ? { decoders: where.decoders, fixed: writtenFixed! } : {}),
        ...(unread !== undefined ? { unread } : {}),
      });
      drawn += batch.length;
      const last = batch.length;
      // Decoded: nothing reads the codes again, unless `onCodes` takes them.
      if (onCodes === undefined) arrays.give(Object.values(gen.columns));
      let keep: number[] | undefined;
      // The rows of free keys the filter dropped, with their distances to the real rows.
      let dropped: { part: DecodedBatch; rows: number[]; distance?: Uint8Array } | undefined;
      // Each check has its own bound: keys go on after a filter that drops nearly every row stops.
      const filtered = filter !== undefined && b - batches < FILTER_TOP_UP_ROUNDS && drawn <= filterDrawCap(n);
      const keyed = keys !== undefined && b - batches < KEY_TOP_UP_ROUNDS && drawn <= keyDrawCap(n);
      if (filtered || keyed) {
        // Keys first, so the filter's tally counts only rows written; the keys of rows kept are added last.
        if (!filtered) keep = keys!.fresh(batch);
        else if (!keyed) keep = await filter.keep(batch.toTable(), tally, n - done, balance);
        else {
          // Every row of a free key, not only a key's first: the filter keeps one per key, a
          // non-copy where the batch has one (a grid's first row of a key is most often a near-copy).
          const open = keys.unheld(batch);
          const part = batch.select(open);
          let distance: Uint8Array | undefined;
          const kept = await filter.keep(part.toTable(), tally, n - done, balance, { claim: keys.claimer(part), onDistance: (d) => void (distance = d) });
          keep = kept.map((i) => open[i]);
          const taken = new Uint8Array(part.length);
          for (const i of kept) taken[i] = 1;
          dropped = { part, rows: Array.from({ length: part.length }, (_, i) => i).filter((i) => taken[i] === 0), distance };
        }
      }
      if ((keep?.length ?? batch.length) > n - done) keep = (keep ?? Array.from({ length: batch.length }, (_, r) => r)).slice(0, n - done);
      if (keyed) keys.add(batch, keep);
      if (dropped !== undefined) {
        // After the kept rows' keys: a dropped row of a key kept is no spare.
        spares?.offer(dropped.part, dropped.rows, dropped.distance, keys!);
        dropped.part.release();
      }
      if (onCodes !== undefined) {
        onCodes(gen.columns, keep);
        arrays.give(Object.values(gen.columns));
      }
      if (keep !== undefined) {
        const all = batch;
        batch = batch.select(keep);
        all.release();
      }
      // Only the rows written hold their identifiers' codes (`../rules/code-prefix`).
      this.decoder.written(batch, deriveSeed(seed, b, 2), writtenFixed);
      numberRows(batch, done);
      done += batch.length;
      if (filter !== undefined && !filtered) unfiltered += batch.length;
      if (keys !== undefined && !keyed) unkeyed += batch.length;
      if (useSpares && !keyed) keys!.add(batch);
      let spare: DecodedBatch | undefined;
      // The next batch is checked only when it fits the filter's bound (a top-up draws 16 rows at least).
      const filterStops = !(b + 1 - batches < FILTER_TOP_UP_ROUNDS && drawn + 16 <= filterDrawCap(n));
      if (spares !== undefined && spares.rows > 0 && (filterStops || done >= n)) {
        spare = done < n ? spares.take(keys!, n - done, balance, n) : undefined;
        spares.release();
        if (spare !== undefined) {
          this.decoder.written(spare, deriveSeed(seed, b, 3), writtenFixed);
          keys!.add(spare);
          numberRows(spare, done);
          done += spare.length;
          unfiltered += spare.length;
        }
      }
      // Top-up after the planned batches: the rows missing over the kept share, times 1.5; with
      // keys, the last batch's share (free keys grow rarer as the sample fills them).
      if (!planned && done < n) {
        const kept = keys === undefined ? Math.max(done, 1) / drawn : Math.max(batch.length, 1) / last;
        const want = Math.max(16, Math.ceil((1.5 * (n - done)) / kept));
        const cap = Math.max(filter !== undefined ? filterDrawCap(n) : 0, keys !== undefined ? keyDrawCap(n) : 0);
        next = fetchBatch(b + 1, Math.min(batchSize, want, Math.max(16, cap - drawn)));
      }
      opts.onProgress?.({
        rowsDone: done,
        rowsTotal: n,
        batch: b + 1,
        batches: Math.max(batches, b + 1 + (done < n ? 1 : 0)),
        ...(unfiltered > 0 ? { unfiltered } : {}),
        ...(unkeyed > 0 ? { unkeyed } : {}),
      });
      if (batch.length > 0) yield batch;
      if (spare !== undefined && spare.length > 0) yield spare;
    }
  }

  /** `temperature` and `top_p` of a generate body, when set. */
  private samplingFields(opts: { temperature?: number; topP?: number }): Pick<GenerateRequest, "temperature" | "top_p"> {
    return {
      ...(opts.temperature !== undefined ? { temperature: opts.temperature } : {}),
      ...(opts.topP !== undefined ? { top_p: opts.topP } : {}),
    };
  }

  /**
   * Seeded generation from a seed table: one output row per seed row, in order; non-blank cells are
   * written back byte for byte and condition the row, the rest is drawn. Batches of at most
   * {@link MAX_SEED_ROWS_PER_REQUEST} rows are seeded as in {@link sampleBatches}.
   * @throws DataError (before any request) for an unreadable seed table, a column the model lacks
   *   (line 1), a cell without a code (column, line, value); RangeError for bad options; the errors
   *   of generate (a condition of probability 0: InvalidRequestError, `param` naming row and cell).
   */
  async *seededBatches(opts: SeedSampleOptions): AsyncGenerator<Table> {
    for await (const b of this.seeded(opts)) yield b.toTable();
  }

  /** {@link seededBatches}, with `check` run on the encoded seed table before the first request. */
  private async *seeded(opts: SeedSampleOptions, check?: (seed: SeedRows, encoded: EncodedSeed) => void): AsyncGenerator<DecodedBatch> {
    if ((opts.seedData === undefined) === (opts.seedFile === undefined)) throw new RangeError("give exactly one of seedData and seedFile");
    const batchSize = opts.batchSize ?? MAX_SEED_ROWS_PER_REQUEST;
    if (!(Number.isInteger(batchSize) && batchSize >= 1 && batchSize <= MAX_SEED_ROWS_PER_REQUEST)) {
      throw new RangeError(`batchSize must be an integer in [1, ${MAX_SEED_ROWS_PER_REQUEST}] for seed tables`);
    }
    const { readSeedTable, encodeSeed } = seededRequest();
    const seedRows = await readSeedTable(opts.seedFile !== undefined ? { file: opts.seedFile } : opts.seedData!);
    const encoded = encodeSeed(this.metadata, seedRows);
    check?.(seedRows, encoded);
    const n = encoded.rows.length;
    const seed = opts.seed ?? randomInt(0, 2 ** 47);
    const calibrate = opts.calibrate ?? !this.isPrivate();
    const batches = Math.ceil(n / batchSize);
    const idKey = identifierKey(seed, this.metadata);
    for (let b = 0, done = 0; b < batches; b++) {
      const rows = encoded.rows.slice(done, done + batchSize);
      const gen = await this.client.models.generateCodes(
        this.id,
        {
          embedding: { seed: deriveSeed(seed, b, 0), ...(calibrate ? { calibrate: true } : {}), seed_data: { features: encoded.features, rows } },
          ...this.samplingFields(opts),
        },
        { ...opts.request, format: opts.wire ?? "arrow" },
      );
      const decodeSeed = deriveSeed(seed, b, 1);
      const batch = this.decoder.decodeBatch(gen.columns, decodeSeed, { rowOffset: done, idKey, rules: false });
      for (let r = 0; r < batch.length; r++) {
        const kept = encoded.keep[done + r];
        for (let f = 0; f < batch.cells.length; f++) if (kept[f] !== undefined) batch.set(r, f, this.decoder.plainText(f, kept[f]!));
      }
      // Row rules after the seed cells are back: they rewrite only the cells the seed left blank.
      const at = done;
      this.decoder.enforceCells(
        batch,
        decodeSeed,
        (r, f) => encoded.keep[at + r][f] !== undefined,
        this.metadata.features.map((f) => gen.columns[f]),
      );
      this.decoder.writeNumberFormats(batch);
      done += batch.length;
      opts.onProgress?.({ rowsDone: done, rowsTotal: n, batch: b + 1, batches });
      yield batch;
    }
  }

  /** Fills the blank cells of a seed table (imputation). @throws as {@link seededBatches}. */
  async impute(seedData: SeedTable, opts: Omit<SeedSampleOptions, "seedData" | "seedFile"> = {}): Promise<Table> {
    return this.sample({ ...opts, seedData });
  }

  /** True when the metadata's marginals were measured with differential privacy noise. */
  isPrivate(): boolean {
    return Object.values(this.metadata.column_stats ?? {}).some((c) => c.privacy !== undefined);
  }

  /**
   * Generates `n` rows (optionally all satisfying `opts.where`) as one {@link Table}, columns in
   * the original order; given a seed table, one row per seed row ({@link seededBatches}).
   * @throws DataError for bad conditions or seed tables (before any request), RangeError, and the
   *   errors of generate.
   */
  async sample(n: number, opts?: SampleOptions): Promise<Table>;
  async sample(opts: SeedSampleOptions): Promise<Table>;
  async sample(n: number | SeedSampleOptions, opts: SampleOptions = {}): Promise<Table> {
    const rows: string[][] = [];
    for await (const t of this.batchesOf(n, opts)) for (const r of t.rows) rows.push(r);
    return { columns: this.columns, rows };
  }

  private batchesOf(n: number | SeedSampleOptions, opts: SampleOptions): AsyncGenerator<Table> {
    return typeof n === "number" ? this.sampleBatches(n, opts) : this.seededBatches(n);
  }

  /** {@link writeFile} with `format: "csv"`. @throws as {@link sample}. */
  async writeCsv(dest: string | Writable, n: number, opts?: SampleOptions): Promise<number>;
  async writeCsv(dest: string | Writable, seeded: SeedSampleOptions): Promise<number>;
  async writeCsv(dest: string | Writable, n: number | SeedSampleOptions, opts: SampleOptions = {}): Promise<number> {
    return typeof n === "number" ? this.writeFile(dest, n, { ...opts, format: "csv" }) : this.writeFile(dest, { ...n, format: "csv" });
  }

  /**
   * Generates `n` rows (or one per seed row) and writes them batch by batch to a path
   * (created/truncated) or a stream (left open) as CSV, Parquet or Arrow IPC: `opts.format`, else
   * the path's extension, else CSV; the same rows in every format (docs/formats.md). Errors before
   * the first batch leave no file; later ones a partial file (the CLI writes to a temporary name).
   * @returns the number of rows written.
   * @throws RangeError for an unknown format, DataError for a seed cell a typed column cannot hold
   *   (both before any request, naming line and column); otherwise as {@link sample}.
   */
  async writeFile(dest: string | Writable, n: number, opts?: SampleOptions & FormatOptions): Promise<number>;
  async writeFile(dest: string | Writable, seeded: SeedSampleOptions & FormatOptions): Promise<number>;
  async writeFile(dest: string | Writable, n: number | (SeedSampleOptions & FormatOptions), opts: SampleOptions & FormatOptions = {}): Promise<number> {
    const format = chooseFormat(dest, typeof n === "number" ? opts.format : n.format);
    let batches: AsyncGenerator<DecodedBatch>;
    let rowGroupRows: number;
    if (typeof n === "number") {
      batches = this.sampleDecoded(n, opts);
      rowGroupRows = opts.batchSize ?? MAX_ROWS_PER_REQUEST;
    } else {
      // Typed columns check the seed cells they will hold before any request.
      const converter = format === "csv" ? undefined : new (typed().BatchConverter)(this.metadata);
      batches = this.seeded(n, converter && ((seed, encoded) => converter.checkSeed(seed, encoded.keep)));
      rowGroupRows = MAX_ROWS_PER_REQUEST;
    }
    return writeBatches(dest, batches, { format, metadata: this.metadata, rowGroupRows });
  }
}
