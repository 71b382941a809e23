/**
 * The cell keys the near-copy check (`../privacy/near-copies`) compares rows by.
 */
import type { ColumnCodec, ScannedTable } from "../metadata/metadata";
import type { CodeArray } from "../metadata/marginals";

/** A table keyed against the real one ({@link tableKeys}): its scan and its codes in the real code books. */
export interface KeyedTable {
  scan: ScannedTable;
  codes: readonly CodeArray[];
  /**
   * A categorical value the real column never has gets a key of its own (after the real ids), which
   * later tables share (a holdout: a synthetic row can copy a holdout row on values only it holds);
   * otherwise it gets -1, equal to nothing.
   */
  ownValues?: boolean;
}

/**
 * The cell keys of the near-copy check for columns `compared`, of the real table and of `others`
 * in order: a categorical column (not from a domain) by its trimmed text, the real scan's value id;
 * other columns by their code in the real code book (the unseen code K: -1).
 * @returns The real table's keys and, per table of `others`, its keys (one array per compared column).
 */
export function tableKeys(
  codecs: readonly ColumnCodec[],
  compared: readonly number[],
  real: { scan: ScannedTable; codes: readonly CodeArray[] },
  others: readonly KeyedTable[],
): { real: CodeArray[]; others: CodeArray[][] } {
  const out = { real: [] as CodeArray[], others: others.map(() => [] as CodeArray[]) };
  for (const f of compared) {
    const codec = codecs[f];
    if (codec.kind === "categorical" && !codec.fromDomain) {
      const at = (t: ScannedTable) => t.scans[t.columns.indexOf(codec.name)];
      const rs = at(real.scan);
      const dict = new Map(rs.values.map((v, id) => [v, id])); // distinct values: one id each
      out.real.push(rs.ids);
      others.forEach((t, i) => {
        const ts = at(t.scan);
        const map = Int32Array.from(ts.values, (v) => {
          let id = dict.get(v);
          if (id === undefined && t.ownValues) dict.set(v, (id = dict.size));
          return id ?? -1;
        });
        out.others[i].push(Int32Array.from(ts.ids, (id) => map[id]));
      });
    } else {
      out.real.push(real.codes[f]);
      others.forEach((t, i) => out.others[i].push(Int32Array.from(t.codes[f], (c) => (c === codec.K ? -1 : c))));
    }
  }
  return out;
}

/** {@link tableKeys} of the real table and one synthetic table. */
export function nearCopyKeys(
  codecs: readonly ColumnCodec[],
  compared: readonly number[],
  real: ScannedTable,
  synth: ScannedTable,
  realCodes: readonly CodeArray[],
  synthCodes: readonly CodeArray[],
): { real: CodeArray[]; synth: CodeArray[] } {
  const k = tableKeys(codecs, compared, { scan: real, codes: realCodes }, [{ scan: synth, codes: synthCodes }]);
  return { real: k.real, synth: k.others[0] };
}
