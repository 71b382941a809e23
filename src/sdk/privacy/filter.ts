/**
 * The near-copy filter: drops synthetic rows that nearly copy a real row, before they reach the
 * user. A similarity filter in the sense of Gretel's privacy filters ("remove synthetic records
 * that are too similar to training records"), with the near-copy definition of
 * `./near-copies`: equal to some real row on all compared columns but at most one, cells compared
 * as `evaluate` compares them (categorical cells by their exact trimmed text, numerical and
 * datetime cells by their code in the real table's code book at `evaluate`'s default binning,
 * identifiers left out).
 *
 * How much it drops, by what a 50/50 split of the real table shows (`./near-copies`):
 * - split share <= {@link FILTER_MAX_SPLIT_SHARE}: near-copies are rare among real rows, so one is a
 *   copied person: every near-copy is dropped (target share 0).
 * - above it, near-copies are common in the data itself: near-copies are kept up to the split's
 *   share of the sample and the excess dropped, so the sample holds no more near-copies of half of
 *   the real table than the other half does.
 * - from {@link FILTER_NONE_SPLIT_SHARE} (half) on, a near-copy is what the data is (every row of a
 *   two-column table): no filter.
 * Thinning ({@link NearCopyFilter.keep}): the split's share is a share of near-copies of a half,
 * while the filter tests rows against the whole table, where a row is a near-copy more often. So
 * the filter also holds a seeded half H of the real rows and counts, among the rows drawn, the
 * share rho of whole-table near-copies that nearly copy a row of H (an unbiased estimate of that
 * chance for any random half, as `evaluate` draws, since the model saw both halves alike). In
 * stream order a near-copy is kept while, with it, rho times the near-copies kept is at most the
 * split's share of the rows kept, so every prefix of the sample (and so any `n`) keeps the bound;
 * near-copies are dropped by stream position, at random, so the kept ones share rho.
 *
 * What it holds (`./masked-keys`): keyed hashes of the real rows' leave-one-column-out keys in a
 * Bloom filter (about 3 bytes per row and compared column at 15 columns, half again with the half
 * H; never a false negative, about 0.1% of other rows flagged), and per numerical and datetime
 * column the code book (`evaluate`'s bin edges, or its point values when at most 32), the kind of
 * aggregate the model's metadata holds too. No categorical value and no row is held in the clear: a row can only be
 * tested with the secret key, which {@link NearCopyFilter.toBuffer} does not write.
 *
 * Where it runs: in the client only (the real rows never leave it). A {@link Synthesizer} built by
 * `fit` holds the filter and applies it to every sample it draws (the rows dropped are replaced by
 * further rows of the same seeded stream); `synthd fit` stores it on the machine that fitted and
 * `synthd sample` loads it (`src/cli/commands/near-copy-store.ts`); `synthd sample --real FILE`
 * builds it from the real table. Not with differential privacy, where the output may depend on
 * the rows only through the noisy marginals.
 */
import { createHash } from "node:crypto";
import type { Table, TableSource } from "../io/csv";
import type { CodeArray } from "../metadata/marginals";
import { encodeTableWithScan, type ExtractOptions } from "../metadata/metadata";
import { DatetimeFormat } from "../metadata/datetime";
import { scanTable } from "../metadata/table-scan";
import { binOf, isNumeric, MISSING_KEY, pointValues, type ColumnCodec } from "../columns";
import { DataError } from "../errors";
import { shuffled, splitNearCopyShare } from "./near-copies";
import { deriveSeed } from "../generate/sfc32";
import { CellHasher, MaskedKeySet, rowSums } from "./masked-keys";

/**
 * Split share up to which every near-copy is dropped; above it near-copies are kept up to the
 * split's share (file header).
 */
export const FILTER_MAX_SPLIT_SHARE = 0.05;

/**
 * Split share from which no filter is built: when most fresh real rows nearly copy a real row
 * (a two-column table; four species over a thousand counties), the definition does not single out
 * a person, and a generator true to the table writes near-copies in nearly every row, so thinning
 * them to the split's share would leave nearly no row to keep.
 */
export const FILTER_NONE_SPLIT_SHARE = 0.5;

/** Rows hashed at once while the filter is built (bounds the build's working memory). */
const BUILD_CHUNK_ROWS = 65_536;

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
  /** Real rows the filter was built from. */
  rows: number;
  /** Share of B rows nearly copying an A row over 50/50 splits of the real table. */
  split_share: number;
  /** Largest share of near-copies kept in a sample (0: every one dropped). */
  target_share: number;
  /** The Bloom filter's bits and hashes. */
  bits: number;
  hashes: number;
  /** The half H's Bloom filter (file header), bits and hashes; 0 bits when every near-copy is dropped. */
  half_bits: number;
  half_hashes: number;
  /** First 16 hex digits of SHA-256 over the key's domain tag and the key: which key it needs. */
  key_id: string;
}

/** What {@link NearCopyFilter.build} gave: the filter, or why none. */
export interface FilterBuild {
  /** The filter; undefined when none was built (`reason` says why). */
  filter?: NearCopyFilter;
  /** Share of B rows nearly copying an A row over 50/50 splits of the real table (`./near-copies`). */
  splitShare: number;
  /** Why no filter was built. */
  reason?: string;
}

/** The state of {@link NearCopyFilter.keep} over one sample's batches. */
export interface FilterTally {
  /** Rows kept, near-copies among them. */
  kept: number;
  near: number;
  /** Near-copies drawn (kept or not), those of a row of the half H among them. */
  drawnNear?: number;
  drawnNearHalf?: number;
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

  /** Real rows the filter was built from. */
  get rows(): number {
    return this.header.rows;
  }

  /** Compared columns. */
  get columns(): string[] {
    return this.header.columns.map((c) => c.name);
  }

  /** Bytes of the Bloom filters. */
  get bytes(): number {
    return this.set.words.byteLength + (this.half?.words.byteLength ?? 0);
  }

  /** Chance that one absent masked key tests present (a row probes one per compared column). */
  falsePositiveRate(): number {
    return this.set.falsePositiveRate();
  }

  /**
   * Reads the real table and builds the filter, with the split's share deciding how much it drops
   * (file header); none for fewer than 2 compared columns or real rows, or from a split share of
   * {@link FILTER_NONE_SPLIT_SHARE}.
   * @param read kind overrides (`columns`: declared identifiers are left out, as in `evaluate`)
   *   or the `domain` of a discretized table, delimiter and encoding of the real table.
   * @param key the secret the cells are hashed with (at least 16 bytes). Without one, a fixed
   *   public key: the filter then stays in memory ({@link toBuffer} refuses it), and the same real
   *   table gives the same filter, false positives included, so the same seed the same rows.
   * @throws DataError as `encodeTable` for a table that cannot be read.
   */
  static async build(
    source: TableSource,
    read: Pick<ExtractOptions, "columns" | "delimiter" | "encoding" | "domain"> = {},
    key?: Uint8Array,
  ): Promise<FilterBuild> {
    const { encoded, scanned } = await encodeTableWithScan(source, read);
    const compared = encoded.codecs.map((c, f) => (c.kind === "id" ? -1 : f)).filter((f) => f >= 0);
    if (compared.length < 2 || encoded.n < 2) return { splitShare: 1, reason: "fewer than 2 compared columns or real rows" };
    const specs = compared.map((f) => specOf(encoded.codecs[f]));
    const scans = compared.map((f) => scanned.scans[f]);
    // The split's keys: value ids for text columns, codes for the others (as `evaluate`).
    const keys = compared.map((f, k): CodeArray => (specs[k].key === "text" ? scans[k].ids : encoded.codes[f]));
    const splitShare = splitNearCopyShare(keys, { splits: 3 });
    if (splitShare >= FILTER_NONE_SPLIT_SHARE) {
      return { splitShare, reason: `${(100 * splitShare).toFixed(1)}% of real rows nearly copy another half's rows: near-copies are what this table is` };
    }
    const n = encoded.n;
    const F = compared.length;
    const set = MaskedKeySet.sized(n * F, F);
    const thin = splitShare > FILTER_MAX_SPLIT_SHARE;
    const half = thin ? MaskedKeySet.sized((n >> 1) * F, F) : undefined;
    const inHalf = new Uint8Array(n);
    if (half) for (const r of shuffled(n, deriveSeed(0, 7)).subarray(0, n >> 1)) inHalf[r] = 1;
    const header: FilterHeader = {
      version: 1,
      columns: specs,
      rows: n,
      split_share: splitShare,
      target_share: thin ? splitShare : 0,
      bits: set.bits,
      hashes: set.hashes,
      half_bits: half?.bits ?? 0,
      half_hashes: half?.hashes ?? 0,
      key_id: key === undefined ? "" : keyId(key),
    };
    const filter = new NearCopyFilter(header, set, half, key ?? IN_MEMORY_KEY);
    // Per column, the hashes of its distinct keys; then rows in chunks.
    const distinct = keys.map((ids, k) => {
      const count = specs[k].key === "text" ? scans[k].values.length : encoded.codecs[compared[k]].K;
      const h = new Uint32Array(2 * count);
      for (let v = 0; v < count; v++) filter.hasher.hash(k, specs[k].key === "text" ? `t${scans[k].values[v]}` : `c${v}`, h, 2 * v);
      return h;
    });
    const cells = new Uint32Array(2 * F * Math.min(n, BUILD_CHUNK_ROWS));
    for (let start = 0; start < n; start += BUILD_CHUNK_ROWS) {
      const rows = Math.min(BUILD_CHUNK_ROWS, n - start);
      for (let k = 0; k < F; k++) {
        const ids = keys[k];
        const h = distinct[k];
        for (let r = 0; r < rows; r++) {
          const v = ids[start + r];
          cells[2 * (r * F + k)] = h[2 * v];
          cells[2 * (r * F + k) + 1] = h[2 * v + 1];
        }
      }
      const sums = rowSums(cells, rows, F);
      set.addRows(cells, sums, rows, F);
      half?.addRows(cells, sums, rows, F, inHalf.subarray(start, start + rows));
    }
    return { filter, splitShare };
  }

  /**
   * Per row of `batch` (decoded synthetic rows with the real table's columns), 1 when it may
   * nearly copy a real row: always when it does, and for about 0.1% of the others (`./masked-keys`).
   * Work: one scan of the batch, one keyed hash per distinct value, F Bloom probes per row.
   * @throws DataError when the batch lacks a compared column.
   */
  async flags(batch: Table): Promise<Uint8Array> {
    return (await this.flagsBoth(batch)).whole;
  }

  /** {@link flags} against the whole table, and (thinning only) against the half H. */
  private async flagsBoth(batch: Table): Promise<{ whole: Uint8Array; half?: Uint8Array }> {
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
    return { whole: this.set.flagRows(cells, sums, n, F), half: this.half?.flagRows(cells, sums, n, F) };
  }

  /**
   * The rows of `batch` to keep, in order, at most `limit`: every row that copies no real row, and
   * a near-copy only while rho times the near-copies kept stays at most {@link targetShare} of the
   * rows kept (rho: the share of the near-copies drawn so far that nearly copy a row of the half
   * H, file header; 1 when every near-copy is dropped). `tally`, updated, carries the counts over a
   * sample's batches.
   * @throws as {@link flags}.
   */
  async keep(batch: Table, tally: FilterTally, limit = Infinity): Promise<number[]> {
    const { whole, half } = await this.flagsBoth(batch);
    if (half) {
      for (let r = 0; r < whole.length; r++) {
        tally.drawnNear = (tally.drawnNear ?? 0) + whole[r];
        tally.drawnNearHalf = (tally.drawnNearHalf ?? 0) + (whole[r] & half[r]);
      }
    }
    const rho = half && tally.drawnNear ? (tally.drawnNearHalf ?? 0) / tally.drawnNear : 1;
    const t = this.header.target_share;
    const out: number[] = [];
    for (let r = 0; r < whole.length && out.length < limit; r++) {
      if (whole[r] === 1) {
        if (rho * (tally.near + 1) > t * (tally.kept + 1)) continue;
        tally.near++;
      }
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
   * @throws DataError for bytes that are not a filter, or a key other than the one it was built with.
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
    if (header?.version !== 1 || !Array.isArray(header.columns) || b.length - start !== (header.bits + header.half_bits) / 8) {
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

/**
 * Text -> code under a stored code book, -1 for a value the real column never had: the `encode`
 * of the codec the spec was made from (`../columns/bins`' `binnedCodec`, `../metadata/domain`).
 */
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
