/**
 * The near-copy filter: drops synthetic rows that nearly copy a real row, before they reach the
 * user. A similarity filter in the sense of Gretel's privacy filters ("remove synthetic records
 * that are too similar to training records"), with the near-copy definition of
 * `./near-copies`: equal to some real row on all compared columns but at most one, cells compared
 * as `evaluate` compares them (categorical cells by their exact trimmed text, numerical and
 * datetime cells by their code in the real table's code book at `evaluate`'s default binning,
 * identifiers left out). So a sample the filter passed holds no near-copy by `evaluate`'s count.
 *
 * Why: on a small table a near-copy is one real person, and a generator that matches the
 * marginals well enough to be useful writes some (cars, 406 rows: 0.1-1.6% of the rows against
 * half of the real table, seed by seed, around the 0.8-0.9% a 50/50 split of the real table gives
 * by coincidence). Coarser marginals remove them only at a large fidelity cost (docs/api.md "Small
 * tables"); dropping the few rows costs next to nothing, and the SDK has the real table at fit time.
 *
 * Where it runs: in the client only (the real rows never leave it). A {@link Synthesizer} built by
 * `fit` holds the filter and applies it to every sample it draws (the rows dropped are replaced by
 * further rows of the same seeded stream); `synthd sample --real FILE` builds it from the real
 * table. It is not built for tables the filter would gut: where real rows are near-copies of each
 * other more often than {@link FILTER_MAX_SPLIT_SHARE} (a 50/50 split's share, `./near-copies`), a
 * near-copy is what the data is (github's two columns: every row), not a copied person; nor with
 * differential privacy, where the output may depend on the rows only through the noisy marginals.
 */
import type { Table, TableSource } from "../io/csv";
import type { CodeArray } from "../metadata/marginals";
import { encodeScanned, encodeTableWithScan, type ExtractOptions, type ScannedTable } from "../metadata/metadata";
import { scanTable } from "../metadata/table-scan";
import type { ColumnCodec } from "../columns";
import { nearCopyCheck, nearCopyFlags, pack } from "./near-copies";

/** Real rows up to which `Synthesizer.fit` builds the filter by default (docs/api.md "Small tables"). */
export const FILTER_MAX_ROWS = 1_000;

/**
 * The filter is not built when a 50/50 split of the real table gives more near-copies than this
 * share: a near-copy is then what the data is, and dropping them would change the sample.
 */
export const FILTER_MAX_SPLIT_SHARE = 0.05;

/** What {@link NearCopyFilter.build} gave: the filter, or why none. */
export interface FilterBuild {
  /** The filter; undefined when none was built (`reason` says why). */
  filter?: NearCopyFilter;
  /** Share of B rows nearly copying an A row over 50/50 splits of the real table (`./near-copies`). */
  splitShare: number;
  /** Why no filter was built. */
  reason?: string;
}

/** Drops synthetic rows that nearly copy a real row (file header). */
export class NearCopyFilter {
  private constructor(
    /** The real table's code books (evaluate's defaults and the caller's kind overrides). */
    private readonly codecs: readonly ColumnCodec[],
    /** Compared columns (indices into `codecs`): all but identifiers. */
    private readonly compared: readonly number[],
    /** Per compared categorical column, the real values' ids by text (else undefined). */
    private readonly dicts: readonly (Map<string, number> | undefined)[],
    /** The real rows' keys, row-major (`./near-copies` `pack`). */
    private readonly real: Int32Array,
    private readonly realRows: number,
  ) {}

  /**
   * Reads the real table and builds the filter, unless a split of it shows near-copies are common
   * (more than {@link FILTER_MAX_SPLIT_SHARE}) or fewer than 2 columns are compared.
   * @param read kind overrides (`columns`: declared identifiers are left out, as in `evaluate`)
   *   or the `domain` of a discretized table, delimiter and encoding of the real table.
   * @throws DataError as `encodeTable` for a table that cannot be read.
   */
  static async build(source: TableSource, read: Pick<ExtractOptions, "columns" | "delimiter" | "encoding" | "domain"> = {}): Promise<FilterBuild> {
    const { encoded, scanned } = await encodeTableWithScan(source, read);
    const compared = encoded.codecs.map((c, f) => (c.kind === "id" ? -1 : f)).filter((f) => f >= 0);
    const dicts = compared.map((f) => {
      const c = encoded.codecs[f];
      return c.kind === "categorical" && !c.fromDomain ? new Map(scanned.scans[f].values.map((v, id) => [v, id])) : undefined;
    });
    const keys = compared.map((f, k): CodeArray => (dicts[k] ? scanned.scans[f].ids : encoded.codes[f]));
    if (compared.length < 2 || encoded.n < 2) return { splitShare: 1, reason: "fewer than 2 compared columns or real rows" };
    const { split_share: splitShare } = nearCopyCheck(keys, keys, compared.map((f) => encoded.columns[f]), { splits: 3, dcrSample: 1 });
    if (splitShare > FILTER_MAX_SPLIT_SHARE) {
      return { splitShare, reason: `${(100 * splitShare).toFixed(1)}% of real rows nearly copy another half's rows: near-copies are what this table is` };
    }
    return { filter: new NearCopyFilter(encoded.codecs, compared, dicts, pack(keys), encoded.n), splitShare };
  }

  /**
   * Per row of `batch` (decoded synthetic rows, the real table's columns), 1 when it nearly copies
   * a real row. Work: one scan of the batch and O(columns x (real + batch rows)) hash probes.
   * @throws DataError when the batch lacks a real column.
   */
  async flags(batch: Table): Promise<Uint8Array> {
    const scan: ScannedTable = await scanTable(batch, 1);
    const codes = encodeScanned(scan, this.compared.map((f) => this.codecs[f]), this.compared.map((f) => this.codecs[f].K));
    const keys = this.compared.map((f, k): Int32Array => {
      const dict = this.dicts[k];
      if (dict) {
        const s = scan.scans[scan.columns.indexOf(this.codecs[f].name)];
        const map = Int32Array.from(s.values, (v) => dict.get(v) ?? -1);
        return Int32Array.from(s.ids, (id) => map[id]);
      }
      const K = this.codecs[f].K;
      return Int32Array.from(codes[k], (c) => (c === K ? -1 : c));
    });
    return nearCopyFlags(pack(keys), scan.n, this.real, this.realRows, keys.length);
  }
}
