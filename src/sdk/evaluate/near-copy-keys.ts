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

/**
 * {@link nearCopyKeys} for the real table and the holdout, with the synthetic table: a holdout
 * value the real column never has gets a key of its own (after the real ids), so a synthetic row
 * can copy a holdout row on values only the holdout holds; other columns by the real code book.
 */
export function holdoutNearCopyKeys(
  codecs: readonly ColumnCodec[],
  compared: readonly number[],
  scans: { real: ScannedTable; holdout: ScannedTable; synth: ScannedTable },
  codes: { real: readonly CodeArray[]; holdout: readonly CodeArray[]; synth: readonly CodeArray[] },
): { real: CodeArray[]; holdout: CodeArray[]; synth: CodeArray[] } {
  const out = { real: [] as CodeArray[], holdout: [] as CodeArray[], synth: [] as CodeArray[] };
  for (const f of compared) {
    const codec = codecs[f];
    if (codec.kind === "categorical" && !codec.fromDomain) {
      const at = (t: ScannedTable) => t.scans[t.columns.indexOf(codec.name)];
      const rs = at(scans.real);
      const dict = new Map(rs.values.map((v, id) => [v, id]));
      const hs = at(scans.holdout);
      const hMap = Int32Array.from(hs.values, (v) => {
        let id = dict.get(v);
        if (id === undefined) dict.set(v, (id = dict.size));
        return id;
      });
      const ss = at(scans.synth);
      const sMap = Int32Array.from(ss.values, (v) => dict.get(v) ?? -1);
      out.real.push(rs.ids);
      out.holdout.push(Int32Array.from(hs.ids, (id) => hMap[id]));
      out.synth.push(Int32Array.from(ss.ids, (id) => sMap[id]));
    } else {
      const unseen = (c: number): number => (c === codec.K ? -1 : c);
      out.real.push(codes.real[f]);
      out.holdout.push(Int32Array.from(codes.holdout[f], unseen));
      out.synth.push(Int32Array.from(codes.synth[f], unseen));
    }
  }
  return out;
}
