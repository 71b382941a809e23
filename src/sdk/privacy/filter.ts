/**
 * The near-copy filter: drops synthetic rows that nearly copy a real row, before they reach the
 * user (a similarity filter as in Gretel's privacy filters). A near-copy (`./near-copies`) equals
 * some real row on all compared columns but at most one, cells compared as `evaluate` compares
 * them (categorical by trimmed text, numerical and datetime by code, identifiers left out), the
 * real table read as `./near-copy-read` defines (default binning).
 *
 * How much it drops follows the near-copy share of a 50/50 split of the real table:
 * - up to {@link FILTER_MAX_SPLIT_SHARE}: a near-copy is a copied person; every one is dropped.
 * - above it: near-copies are kept up to the split's share of the sample, the excess dropped.
 * - from {@link FILTER_NONE_SPLIT_SHARE} on: near-copies are what the data is; no filter.
 * Thinning ({@link NearCopyFilter.keep}): the split's share counts near-copies of a half, but the
 * filter tests against the whole table. So it also holds a seeded half H and estimates rho, the
 * share of drawn whole-table near-copies that nearly copy a row of H (unbiased for any random
 * half). In stream order a near-copy is kept while rho times the near-copies kept is at most the
 * split's share of the rows kept, so every prefix of the sample (any `n`) keeps the bound; the
 * drops fall by stream position, at random, so the kept near-copies still share rho.
 * With a {@link MarginalBalance} (what a `Synthesizer` sample uses), which rows a batch keeps is
 * chosen instead: its non-copies, then near-copies while the bound holds, then non-copies for any
 * room left, each time the row whose cells the kept rows lack most against the model's marginals
 * (`./marginal-balance`): random drops leave a sample short in the common cells, where near-copies
 * crowd. The choice reads no flag of H, and rho is then the kept near-copies' own share of rows of
 * H (they are no random subset of those drawn), so every batch's end keeps the bound for any half.
 * A caller may say which rows cannot be kept together (`KeepOptions.claim`: a table's key; the
 * non-copies then claim first) and hear each row's distance to the real rows as far as the keys
 * tell (`KeepOptions.onDistance`: 2, 1 or 0), for the rows it drops (`../generate/spare-rows`).
 *
 * What it holds (`./masked-keys`): keyed hashes of the real rows' leave-one-column-out keys in a
 * Bloom filter (no false negatives, about 0.1% false positives), and per numerical and datetime
 * column its code book (the kind of aggregate the model's metadata holds); of a table above
 * {@link FILTER_MAX_ROWS} rows, only a bottom-k sample of that many rows (header `rows` of
 * `table_rows`, said in one CLI line). No categorical value or row is held in the clear; testing
 * a row needs the secret key, which {@link toBuffer} omits.
 *
 * Runs in the client only (the real rows never leave it): a {@link Synthesizer} from `fit` applies
 * it to every sample (dropped rows are replaced from the same seeded stream); `synthd fit` stores
 * it and `synthd sample` loads it (`src/cli/commands/near-copy-store.ts`). Not with differential
 * privacy, where the output may depend on the rows only through the noisy marginals.
 */
import { createHash } from "node:crypto";
import { fileOfDescription, readTable, type ReadOptions, type Table, type TableSource } from "../io/csv";
import type { CodeArray } from "../metadata/marginals";
import { buildCodec, checkOverrides, encodeScanned, keepDeclaredText, type ExtractOptions } from "../metadata/metadata";
import { checkDomainColumns, domainCodec, loadDomain } from "../metadata/domain";
import { SAMPLE_ROWS, tallyTable } from "../metadata/table-tally";
import { RankedSample, sampleRank } from "../metadata/csv-chunks";
import { DatetimeFormat } from "../metadata/datetime";
import { scanTable } from "../metadata/table-scan";
import { binOf, isNumeric, MISSING_KEY, pointValues, type ColumnCodec } from "../columns";
import { DataError } from "../errors";
import { shuffled, splitNearCopyShare } from "./near-copies";
import { deriveSeed } from "../generate/sfc32";
import { CellHasher, MaskedKeySet, rowSums } from "./masked-keys";
import type { MarginalBalance } from "./marginal-balance";

/** Split share up to which every near-copy is dropped (file header). */
export const FILTER_MAX_SPLIT_SHARE = 0.05;

/**
 * Split share from which no filter is built: when most fresh real rows nearly copy a real row
 * (a two-column table), the definition does not single out a person, and thinning to the split's
 * share would leave nearly no row to keep.
 */
export const FILTER_NONE_SPLIT_SHARE = 0.5;

/** Rows hashed at once while the filter is built (bounds the build's working memory). */
const BUILD_CHUNK_ROWS = 65_536;

/** Rows outside the half H tested against it for a measured split share (as `evaluate`'s 3 splits of 20,000). */
const SPLIT_QUERY_ROWS = 60_000;

/**
 * Real rows a filter protects at most by default: a larger table's filter protects a bottom-k
 * sample of this many of its rows. At 15 compared columns the whole table's Bloom filter then
 * just fits `MAX_FILTER_BITS` of `./masked-keys` (128 MiB) at the stated false-positive rate;
 * with the half H, at most 256 MiB whatever the columns (docs/extract.md "The near-copy filter
 * within the bound").
 */
export const FILTER_MAX_ROWS = 3_000_000;

/** Options of {@link NearCopyFilter.build}. */
export interface FilterBuildOptions {
  /** Most real rows the filter protects (>= 2); a larger table: a bottom-k sample of them. Default {@link FILTER_MAX_ROWS}. */
  maxRows?: number;
  /** Worker threads of pass 1 (`../metadata/table-tally`). Default: as extraction's. */
  threads?: number;
}

/** How one compared column's cells are keyed: by text, or by code in a stored code book. */
export type KeySpec =
  | { name: string; key: "text" }
  | { name: string; key: "domain"; K: number }
  | {
      name: string;
      key: "numerical" | "datetime";
      /** Datetime: the column's luxon format. */
      format?: string;
      /** Point bins: value text -> code (the blank's code under ""). */
      mapping?: Record<string, number>;
      /** Quantile bins: the edges (`column_stats.bin_edges`). */
      edges?: number[];
      /** The blank's code, -1 when the real column had none. */
      missing: number;
    };

/** The stored form of a filter ({@link NearCopyFilter.toBuffer}), the key left out. */
export interface FilterHeader {
  version: 1;
  /** Compared columns, in order. */
  columns: KeySpec[];
  /** Real rows the filter protects (holds the keys of). */
  rows: number;
  /** Rows of the real table; absent (files written before it): `rows`. More than `rows`: a bottom-k sample is protected. */
  table_rows?: number;
  /** Share of B rows nearly copying an A row over 50/50 splits of the real table. */
  split_share: number;
  /** Largest share of near-copies kept in a sample (0: every one dropped). */
  target_share: number;
  /** The Bloom filter's bits and hashes; `half_*`: the half H's (0 bits when not thinning). */
  bits: number;
  hashes: number;
  half_bits: number;
  half_hashes: number;
  /** First 16 hex digits of SHA-256 over the key's domain tag and the key. */
  key_id: string;
}

/** What {@link NearCopyFilter.build} gave: the filter, or why none. */
export interface FilterBuild {
  /** The filter; undefined when none was built (`reason` says why). */
  filter?: NearCopyFilter;
  /** Share of B rows nearly copying an A row over 50/50 splits of the real table. */
  splitShare: number;
  reason?: string;
}

/** The state of {@link NearCopyFilter.keep} over one sample's batches. */
export interface FilterTally {
  /** Rows kept, near-copies among them; near-copies drawn, those of a row of H among them. */
  kept: number;
  near: number;
  drawnNear?: number;
  drawnNearHalf?: number;
  /** With a {@link MarginalBalance}: near-copies kept that nearly copy a row of H. */
  nearHalf?: number;
}

/** Options of {@link NearCopyFilter.keep}. */
export interface KeepOptions {
  /**
   * Called for a row about to be kept, once the filter would keep it: true takes the row (and
   * whatever it holds, e.g. its key), false skips it for the next. With a balance the batch's
   * non-copies are offered first, so a row that conflicts with others is kept as a non-copy when
   * one of them is. Default: every row may be kept.
   */
  claim?: (r: number) => boolean;
  /**
   * Given, once the batch is flagged, per row its Hamming distance to the nearest real row over
   * the compared columns as far as the filter's keys tell: 2 when it nearly copies no real row (2
   * or more), 1 when it nearly copies one, 0 when it holds every one of its leave-one-column-out
   * keys (it equals a real row, or is one column away from real rows in each column). Costs
   * a probe per compared column of each near-copy.
   */
  onDistance?: (distance: Uint8Array) => void;
}

const MAGIC = Buffer.from("SYNTHDNC", "latin1");

/** The key of filters built without one: public, so never stored ({@link NearCopyFilter.build}). */
const IN_MEMORY_KEY = new Uint8Array(32);

/** The identifier of a key (file header). */
export function keyId(key: Uint8Array): string {
  return createHash("sha256").update("synthd near-copy filter key\u0000").update(key).digest("hex").slice(0, 16);
}

/** Drops synthetic rows that nearly copy a real row (file header). */
export class NearCopyFilter {
  private readonly encoders: ((v: string) => number)[];
  private readonly hasher: CellHasher;

  private constructor(
    private readonly header: FilterHeader,
    private readonly set: MaskedKeySet,
    /** The half H's keys (thinning only). */
    private readonly half: MaskedKeySet | undefined,
    key: Uint8Array,
  ) {
    this.encoders = header.columns.map(encoderOf);
    this.hasher = new CellHasher(key, header.columns.length);
  }

  /** Largest share of near-copies kept in a sample: 0 (all dropped) or the split's share. */
  get targetShare(): number {
    return this.header.target_share;
  }

  /** Share of B rows nearly copying an A row over 50/50 splits of the real table. */
  get splitShare(): number {
    return this.header.split_share;
  }

  /** Real rows the filter protects. */
  get rows(): number {
    return this.header.rows;
  }

  /** Rows of the real table (more than {@link rows} when the filter protects a sample of them). */
  get tableRows(): number {
    return this.header.table_rows ?? this.header.rows;
  }

  get columns(): string[] {
    return this.header.columns.map((c) => c.name);
  }

  get bytes(): number {
    return this.set.words.byteLength + (this.half?.words.byteLength ?? 0);
  }

  /** Chance that one absent masked key tests present (a row probes one per compared column). */
  falsePositiveRate(): number {
    return this.set.falsePositiveRate();
  }

  /**
   * Reads the real table and builds the filter (file header); none for fewer than 2 compared
   * columns or real rows, or from a split share of {@link FILTER_NONE_SPLIT_SHARE}. Streams
   * (docs/extract.md "The near-copy filter within the bound"): pass 1 is extraction's tally
   * (`../metadata/table-tally`: code books; a table within its sample, 200,000 rows, is the
   * sample, and its split share is `evaluate`'s); a table above `opts.maxRows` is read once more
   * for its bottom-k sample of that many rows (`RankedSample`, ranked by line as extraction's
   * sample is), which the filter then protects; the last pass hashes the protected rows chunk by
   * chunk. A table larger than the tally's sample gets its split share from the filter itself: the
   * share of {@link SPLIT_QUERY_ROWS} protected rows outside the half H that H flags (one 50/50
   * split of the protected rows, Bloom false positives included). Memory: the tally's, and the
   * Bloom filters of at most `maxRows` rows.
   * @param read kind overrides (declared identifiers are left out, as in `evaluate`), `domain`,
   *   delimiter and encoding of the real table.
   * @param key the secret the cells are hashed with (at least 16 bytes). Without one, a fixed
   *   public key: the filter stays in memory ({@link toBuffer} refuses it) and is deterministic.
   * @throws DataError as `analyzeTable` for a table that cannot be read, or one that changed
   *   between the passes; RangeError for a bad `maxRows` or both `columns` and `domain`.
   */
  static async build(
    source: TableSource,
    read: Pick<ExtractOptions, "columns" | "delimiter" | "encoding" | "domain"> = {},
    key?: Uint8Array,
    opts: FilterBuildOptions = {},
  ): Promise<FilterBuild> {
    const maxRows = opts.maxRows ?? FILTER_MAX_ROWS;
    if (!(Number.isInteger(maxRows) && maxRows >= 2)) throw new RangeError(`maxRows must be an integer >= 2 (got ${maxRows})`);
    if (read.domain !== undefined && read.columns !== undefined) {
      throw new RangeError("columns (kind overrides) and domain cannot be combined: with a domain every column is a categorical code.");
    }
    const domain = read.domain === undefined ? undefined : await loadDomain(read.domain);
    const tally = await tallyTable(source, { delimiter: read.delimiter, encoding: read.encoding, threads: opts.threads, sampleRows: Math.min(SAMPLE_ROWS, maxRows) });
    try {
      if (domain) checkDomainColumns(tally.columns, domain, tally.source);
      else checkOverrides(tally.columns, read, tally.source);
      keepDeclaredText(read, tally, tally.sample);
      const codecs = tally.scans.map((s, c) =>
        domain ? domainCodec(s, tally.n, domain[s.name], tally.source) : buildCodec(s, tally.n, read, tally.source, tally.types?.[c]),
      );
      const compared = codecs.map((c, f) => (c.kind === "id" ? -1 : f)).filter((f) => f >= 0);
      if (compared.length < 2 || tally.n < 2) return { splitShare: 1, reason: "fewer than 2 compared columns or real rows" };
      const specs = compared.map((f) => specOf(codecs[f]));
      // A table within the tally's sample: the split share of `evaluate` over the whole table
      // (value ids for text columns, codes for the others); a larger one: measured during the hash pass.
      let splitShare: number | undefined;
      if (!tally.sampled) {
        const sampleCodes = encodeScanned(tally.sample, compared.map((f) => codecs[f]));
        splitShare = splitNearCopyShare(compared.map((f, k): CodeArray => (specs[k].key === "text" ? tally.sample.scans[f].ids : sampleCodes[k])), { splits: 3 });
        if (splitShare >= FILTER_NONE_SPLIT_SHARE) return { splitShare, reason: noneReason(splitShare) };
      }
      const readOpts = { minColumns: 2, delimiter: read.delimiter, encoding: read.encoding };
      const inSample = tally.n > maxRows ? await sampleOfLines(source, maxRows, readOpts) : undefined;
      const n = Math.min(tally.n, maxRows);
      const F = compared.length;
      const set = MaskedKeySet.sized(n * F, F);
      let half = splitShare === undefined || splitShare > FILTER_MAX_SPLIT_SHARE ? MaskedKeySet.sized((n >> 1) * F, F) : undefined;
      const inHalf = new Uint8Array(n);
      const perm = half ? shuffled(n, deriveSeed(0, 7)) : new Int32Array(0);
      for (const r of perm.subarray(0, n >> 1)) inHalf[r] = 1;
      // Measured split: rows outside H (at most SPLIT_QUERY_ROWS, at random) tested against H.
      const inQuery = new Uint8Array(splitShare === undefined ? n : 0);
      for (const r of perm.subarray(n >> 1, (n >> 1) + (splitShare === undefined ? SPLIT_QUERY_ROWS : 0))) inQuery[r] = 1;
      const query = new Uint32Array(splitShare === undefined ? 2 * F * Math.min(SPLIT_QUERY_ROWS, n - (n >> 1)) : 0);
      let queried = 0;
      const hasher = new CellHasher(key ?? IN_MEMORY_KEY, F);
      // Per compared column, its distinct values' ids and each id's hash (text: the value's; else its code's).
      const lookups = compared.map((f, k) => {
        const { values, numberFormat } = tally.scans[f];
        const ids = new Map<string, number>();
        const h = new Uint32Array(2 * values.length);
        values.forEach((v, id) => {
          ids.set(v, id);
          hasher.hash(k, specs[k].key === "text" ? `t${v}` : `c${codecs[f].encode(v)}`, h, 2 * id);
        });
        return { ids, h, timestamp: tally.types?.[f] === "timestamp", numberFormat };
      });
      const cells = new Uint32Array(2 * F * Math.min(n, BUILD_CHUNK_ROWS));
      let rows = 0;
      let done = 0;
      let seen = 0;
      const flush = (): void => {
        const sums = rowSums(cells, rows, F);
        set.addRows(cells, sums, rows, F);
        half?.addRows(cells, sums, rows, F, inHalf.subarray(done - rows, done));
        for (let r = 0; r < rows && inQuery.length > 0; r++) {
          if (inQuery[done - rows + r] === 1) query.set(cells.subarray(2 * F * r, 2 * F * (r + 1)), 2 * F * queried++);
        }
        rows = 0;
      };
      await readTable(
        source,
        (header) => {
          if (header.join("\u0000") !== tally.columns.join("\u0000")) throw changed(tally.source);
        },
        (record, line) => {
          seen++;
          if (inSample && !inSample(line)) return;
          if (done === n) throw changed(tally.source);
          for (let k = 0; k < F; k++) {
            const { ids, h, timestamp, numberFormat } = lookups[k];
            const v = record[compared[k]];
            // A typed timestamp's ".000" is dropped in pass 1 when no value has a fraction; a
            // number format's values were read as plain numbers.
            const id =
              ids.get(v) ??
              (timestamp && v.endsWith(".000") ? ids.get(v.slice(0, -4)) : numberFormat !== undefined ? ids.get(numberFormat.plain(v) ?? "\u0000") : undefined);
            if (id === undefined) throw changed(tally.source);
            const o = 2 * (rows * F + k);
            cells[o] = h[2 * id];
            cells[o + 1] = h[2 * id + 1];
          }
          rows++;
          done++;
          if (rows === BUILD_CHUNK_ROWS) flush();
        },
        readOpts,
      );
      if (rows > 0) flush();
      if (seen !== tally.n || done !== n) throw changed(tally.source);
      if (splitShare === undefined) {
        const near = half!.flagRows(query, rowSums(query, queried, F), queried, F);
        splitShare = near.reduce((sum, x) => sum + x, 0) / Math.max(1, queried);
        if (splitShare >= FILTER_NONE_SPLIT_SHARE) return { splitShare, reason: noneReason(splitShare) };
        if (splitShare <= FILTER_MAX_SPLIT_SHARE) half = undefined;
      }
      const thin = half !== undefined;
      const header: FilterHeader = {
        version: 1,
        columns: specs,
        rows: n,
        table_rows: tally.n,
        split_share: splitShare,
        target_share: thin ? splitShare : 0,
        bits: set.bits,
        hashes: set.hashes,
        half_bits: half?.bits ?? 0,
        half_hashes: half?.hashes ?? 0,
        key_id: key === undefined ? "" : keyId(key),
      };
      return { filter: new NearCopyFilter(header, set, half, key ?? IN_MEMORY_KEY), splitShare };
    } finally {
      await tally.close();
    }
  }

  /**
   * Per row of `batch` (decoded rows with the real table's columns), 1 when it may nearly copy a
   * real row: always when it does, about 0.1% of the others (`./masked-keys`).
   * @throws DataError when the batch lacks a compared column.
   */
  async flags(batch: Table): Promise<Uint8Array> {
    return (await this.flagsBoth(batch)).whole;
  }

  /**
   * {@link flags} against the whole table, and (thinning only) against the half H; with
   * `distances`, also each row's {@link KeepOptions.onDistance} distance.
   */
  private async flagsBoth(batch: Table, distances = false): Promise<{ whole: Uint8Array; half?: Uint8Array; distance?: Uint8Array }> {
    // No rows (every row of a batch repeated a key): nothing to flag, and nothing to scan.
    if (batch.rows.length === 0) {
      return { whole: new Uint8Array(0), ...(this.half ? { half: new Uint8Array(0) } : {}), ...(distances ? { distance: new Uint8Array(0) } : {}) };
    }
    const scan = await scanTable(batch, 1);
    const F = this.header.columns.length;
    const n = scan.n;
    const cells = new Uint32Array(2 * F * n);
    this.header.columns.forEach((spec, k) => {
      const c = scan.columns.indexOf(spec.name);
      if (c < 0) throw new DataError(`${scan.source} has no column "${spec.name}".`, { column: spec.name });
      const s = scan.scans[c];
      const h = new Uint32Array(2 * s.values.length);
      s.values.forEach((v, id) => {
        let token: string;
        if (spec.key === "text") token = `t${v}`;
        else {
          const code = this.encoders[k](v);
          token = code < 0 ? "u" : `c${code}`;
        }
        this.hasher.hash(k, token, h, 2 * id);
      });
      const ids = s.ids;
      for (let r = 0; r < n; r++) {
        cells[2 * (r * F + k)] = h[2 * ids[r]];
        cells[2 * (r * F + k) + 1] = h[2 * ids[r] + 1];
      }
    });
    const sums = rowSums(cells, n, F);
    const half = this.half?.flagRows(cells, sums, n, F);
    if (!distances) return { whole: this.set.flagRows(cells, sums, n, F), half };
    const held = this.set.countRows(cells, sums, n, F);
    const whole = new Uint8Array(n);
    const distance = new Uint8Array(n);
    for (let r = 0; r < n; r++) {
      whole[r] = held[r] > 0 ? 1 : 0;
      distance[r] = held[r] === 0 ? 2 : held[r] < F ? 1 : 0;
    }
    return { whole, half, distance };
  }

  /**
   * The rows of `batch` to keep, in order, at most `limit`: every non-copy, and a near-copy while
   * rho times the near-copies kept stays at most {@link targetShare} of the rows kept (file header;
   * rho is 1 when every near-copy is dropped). `tally` carries the counts over a sample's batches.
   * With `balance` (file header), the rows kept are chosen by their cells (non-copies first when
   * more than `limit`), the bound read with the kept near-copies' rho and held at the batch's end;
   * use one balance, like one tally, for all the batches of a sample. `opts`: rows that may not be
   * kept together (a table's key) and the distances of the rows ({@link KeepOptions}).
   * @throws as {@link flags}.
   */
  async keep(batch: Table, tally: FilterTally, limit = Infinity, balance?: MarginalBalance, opts: KeepOptions = {}): Promise<number[]> {
    const { whole, half, distance } = await this.flagsBoth(batch, opts.onDistance !== undefined);
    if (distance !== undefined) opts.onDistance!(distance);
    const claim = opts.claim ?? (() => true);
    if (half) {
      for (let r = 0; r < whole.length; r++) {
        tally.drawnNear = (tally.drawnNear ?? 0) + whole[r];
        tally.drawnNearHalf = (tally.drawnNearHalf ?? 0) + (whole[r] & half[r]);
      }
    }
    const rho = half && tally.drawnNear ? (tally.drawnNearHalf ?? 0) / tally.drawnNear : 1;
    const t = this.header.target_share;
    if (balance !== undefined) {
      // Non-copies, leaving room for the near-copies the share allows; those near-copies; then any
      // room left to non-copies: each step by the shortfall of the rows' cells.
      const cells = balance.cells(batch);
      const plain: number[] = [];
      const near: number[] = [];
      for (let r = 0; r < whole.length; r++) (whole[r] === 1 ? near : plain).push(r);
      const room = Math.min(limit, whole.length);
      const size = tally.kept + room;
      const rhoKept = half && tally.near > 0 ? (tally.nearHalf ?? 0) / tally.near : rho;
      const allowed = rhoKept > 0 ? Math.max(0, Math.floor((t / rhoKept) * size) - tally.near) : near.length;
      const first = balance.choose(cells, plain, room - Math.min(near.length, allowed), size, opts.claim);
      tally.kept += first.length;
      // Near-copies are chosen by their cells, which tell how many real rows they resemble: rho is
      // then that of the near-copies kept, and rho times their count is the kept rows of H. A row is
      // taken when the bound holds even if it is one (its flag read only after, so the choice does
      // not see the half).
      const copies = balance.choose(cells, near, room - first.length, size, (r) => {
        if ((half ? (tally.nearHalf ?? 0) : tally.near) + 1 > t * (tally.kept + 1)) return "stop";
        if (!claim(r)) return false;
        tally.near++;
        tally.kept++;
        if (half) tally.nearHalf = (tally.nearHalf ?? 0) + half[r];
        return true;
      });
      const taken = new Set(first);
      const last = balance.choose(cells, plain.filter((r) => !taken.has(r)), room - first.length - copies.length, size, opts.claim);
      tally.kept += last.length;
      return [...first, ...copies, ...last].sort((a, b) => a - b);
    }
    const out: number[] = [];
    for (let r = 0; r < whole.length && out.length < limit; r++) {
      if (whole[r] === 1 && rho * (tally.near + 1) > t * (tally.kept + 1)) continue;
      if (!claim(r)) continue;
      tally.near += whole[r];
      tally.kept++;
      out.push(r);
    }
    return out;
  }

  /** One line on what the filter does, for the CLI. */
  describe(): string {
    const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;
    return this.header.target_share === 0
      ? `rows equal to a real row on all columns but one are dropped and replaced (a 50/50 split of the real table shows ${pct(this.header.split_share)})`
      : `rows equal to a real row on all columns but one are kept in at most ${pct(this.header.target_share)} of the sample, the share a 50/50 split of the real table shows; the rest are dropped and replaced`;
  }

  /** One line for the CLI when the filter protects a sample of the table's rows; else undefined. */
  sampleNote(): string | undefined {
    if (this.tableRows <= this.rows) return undefined;
    const num = (x: number): string => x.toLocaleString("en-US");
    return `it protects a sample of ${num(this.rows)} of the table's ${num(this.tableRows)} real rows (its budget, to stay within its memory bound): a row nearly copying only a real row outside the sample is not dropped`;
  }

  /**
   * The filter as bytes, without its key: `SYNTHDNC`, the header's JSON length (uint32 LE), the
   * header ({@link FilterHeader}), zero padding to a multiple of 4, the Bloom filters' words (LE).
   * @throws RangeError for a filter built without a secret key.
   */
  toBuffer(): Buffer {
    if (this.header.key_id === "") throw new RangeError("this near-copy filter was built without a secret key: build it with one to store it");
    const json = Buffer.from(JSON.stringify(this.header), "utf8");
    const at = MAGIC.length + 4 + json.length;
    const pad = (4 - (at % 4)) % 4;
    const out = Buffer.alloc(at + pad + this.bytes);
    MAGIC.copy(out, 0);
    out.writeUInt32LE(json.length, MAGIC.length);
    json.copy(out, MAGIC.length + 4);
    Buffer.from(this.set.words.buffer, this.set.words.byteOffset, this.set.words.byteLength).copy(out, at + pad);
    if (this.half) Buffer.from(this.half.words.buffer, this.half.words.byteOffset, this.half.words.byteLength).copy(out, at + pad + this.set.words.byteLength);
    return out;
  }

  /**
   * A filter from {@link toBuffer}'s bytes and the key it was built with.
   * @throws DataError for bytes that are not a filter, or a key it was not built with.
   */
  static fromBuffer(buf: Uint8Array, key: Uint8Array): NearCopyFilter {
    const b = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
    if (b.length < MAGIC.length + 4 || !b.subarray(0, MAGIC.length).equals(MAGIC)) throw new DataError("not a near-copy filter (no SYNTHDNC header)");
    const len = b.readUInt32LE(MAGIC.length);
    const at = MAGIC.length + 4 + len;
    let header: FilterHeader;
    try {
      header = JSON.parse(b.subarray(MAGIC.length + 4, at).toString("utf8")) as FilterHeader;
    } catch (e) {
      throw new DataError(`the near-copy filter's header is not JSON (${(e as Error).message})`);
    }
    const start = at + ((4 - (at % 4)) % 4);
    const rowsFit = header?.table_rows === undefined || header.table_rows >= header.rows;
    if (header?.version !== 1 || !Array.isArray(header.columns) || !rowsFit || b.length - start !== (header.bits + header.half_bits) / 8) {
      throw new DataError("the near-copy filter is of another version or truncated");
    }
    if (header.key_id !== keyId(key)) throw new DataError("the near-copy filter was built with another key");
    const words = (from: number, bits: number): Uint32Array => {
      const w = new Uint32Array(bits / 32);
      Buffer.from(w.buffer).set(b.subarray(from, from + bits / 8));
      return w;
    };
    const half = header.half_bits > 0 ? new MaskedKeySet(words(start + header.bits / 8, header.half_bits), header.half_hashes) : undefined;
    return new NearCopyFilter(header, new MaskedKeySet(words(start, header.bits), header.hashes), half, key);
  }
}

/**
 * Whether a row (by `../io/csv`'s line) is in the bottom-`size` sample of the table's rows by
 * (`sampleRank(line)`, line), extraction's ranking: one pass over the table with a line-only
 * {@link RankedSample}. Memory: about 40 bytes per sampled row, freed on return.
 */
async function sampleOfLines(source: TableSource, size: number, read: ReadOptions): Promise<(line: number) => boolean> {
  const ranked = new RankedSample(size, 0);
  const none = new Int32Array(0);
  await readTable(
    source,
    () => undefined,
    (_, line) => {
      const rank = sampleRank(line);
      if (ranked.wants(rank, line)) ranked.add(rank, line, line, none);
    },
    read,
  );
  const { keys, ranks } = ranked.rows();
  let last = 0;
  for (let i = 1; i < keys.length; i++) if (ranks[i] > ranks[last] || (ranks[i] === ranks[last] && keys[i] > keys[last])) last = i;
  const topRank = ranks[last];
  const topLine = keys[last];
  return (line) => {
    const rank = sampleRank(line);
    return rank < topRank || (rank === topRank && line <= topLine);
  };
}

function noneReason(splitShare: number): string {
  return `${(100 * splitShare).toFixed(1)}% of real rows nearly copy another half's rows: near-copies are what this table is`;
}

function changed(source: string): DataError {
  return new DataError(`${source} changed while the near-copy filter read it (a later pass differs from the first).`, { file: fileOfDescription(source) });
}

/** The key spec of a compared column's code book. */
function specOf(c: ColumnCodec): KeySpec {
  if (c.kind === "categorical") return c.fromDomain ? { name: c.name, key: "domain", K: c.K } : { name: c.name, key: "text" };
  const kind = c.kind === "datetime" ? "datetime" : "numerical";
  const edges = c.stats.bin_edges;
  return {
    name: c.name,
    key: kind,
    ...(kind === "datetime" ? { format: c.datetime?.format ?? c.stats.format } : {}),
    ...(edges ? { edges: [...edges] } : { mapping: { ...c.mapping } }),
    missing: c.missingCode,
  };
}

/** Text -> code under a stored code book (-1: a value the real column never had), as the codec. */
export function encoderOf(spec: KeySpec): (v: string) => number {
  if (spec.key === "text") return () => -1;
  if (spec.key === "domain") {
    const K = spec.K;
    return (v) => (/^\d+$/.test(v) && Number(v) < K ? Number(v) : -1);
  }
  let parse: (v: string) => number | undefined;
  if (spec.key === "datetime") {
    if (spec.format === undefined) throw new DataError(`the near-copy filter's column "${spec.name}" has no datetime format`);
    const fmt = new DatetimeFormat(spec.format);
    parse = (v) => fmt.parse(v)?.seconds;
  } else parse = (v) => (isNumeric(v) ? Number(v) : undefined);
  const missing = spec.missing;
  if (spec.edges) {
    const edges = spec.edges;
    const points = pointValues(edges);
    return (v) => {
      if (v === MISSING_KEY) return missing;
      const x = parse(v);
      return x === undefined ? -1 : binOf(edges, points, x);
    };
  }
  const byText = new Map<string, number>();
  const byNumber = new Map<number, number>();
  for (const [text, code] of Object.entries(spec.mapping ?? {}).sort((a, b) => a[1] - b[1])) {
    if (text === MISSING_KEY) continue;
    byText.set(text, code);
    const x = parse(text);
    if (x !== undefined && !byNumber.has(x)) byNumber.set(x, code);
  }
  return (v) => {
    if (v === MISSING_KEY) return missing;
    const c = byText.get(v);
    if (c !== undefined) return c;
    const x = parse(v);
    return x === undefined ? -1 : (byNumber.get(x) ?? -1);
  };
}
