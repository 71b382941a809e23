/**
 * The cell keys the near-copy check (`../privacy/near-copies`) compares rows by.
 */
import type { ColumnCodec, ScannedTable } from "../metadata/metadata";
import type { CodeArray } from "../metadata/marginals";

/**
 * The cell keys of the near-copy check (`./privacy/near-copies`) for columns `compared`: a
 * categorical column (not from a domain) by its trimmed text, the real scan's value id (a
 * synthetic value the real column never has: -1, equal to nothing); other columns by their code
 * in the real code book (the unseen code K: -1).
 */
export function nearCopyKeys(
  codecs: readonly ColumnCodec[],
  compared: readonly number[],
  real: ScannedTable,
  synth: ScannedTable,
  realCodes: readonly CodeArray[],
  synthCodes: readonly CodeArray[],
): { real: CodeArray[]; synth: CodeArray[] } {
  const r: CodeArray[] = [];
  const s: CodeArray[] = [];
  for (const f of compared) {
    const codec = codecs[f];
    if (codec.kind === "categorical" && !codec.fromDomain) {
      const rs = real.scans[real.columns.indexOf(codec.name)];
      const ss = synth.scans[synth.columns.indexOf(codec.name)];
      const dict = new Map(rs.values.map((v, id) => [v, id])); // distinct values: one id each
      const map = Int32Array.from(ss.values, (v) => dict.get(v) ?? -1);
      r.push(rs.ids);
      s.push(Int32Array.from(ss.ids, (id) => map[id]));
    } else {
      r.push(realCodes[f]);
      s.push(Int32Array.from(synthCodes[f], (c) => (c === codec.K ? -1 : c)));
    }
  }
  return { real: r, synth: s };
}
