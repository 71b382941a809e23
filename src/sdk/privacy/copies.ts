/**
 * Exact copies for the privacy check (`./dcr`): how many synthetic rows, and how many HOLDOUT rows
 * (the baseline), equal some TRAIN row, value for value (trimmed text). Rows come as one string key
 * per row ({@link rowKeys}: a string per row, about 2 GB at 1M rows x 15 columns) or as the scanned
 * tables ({@link ScannedRows}, what `evaluate` passes; method at `copiesOfScans`).
 */
import type { ColumnScan, ScannedTable } from "../metadata/metadata";
import { mix32 } from "../generate/sfc32";

/**
 * The value keys of a scanned table's rows over `columns`: the trimmed values joined by U+0000,
 * one string per row. Rows whose values contain U+0000 can share a key without being equal;
 * {@link ScannedRows} compare value for value instead.
 * @throws Error when the table lacks one of `columns`.
 */
export function rowKeys(scanned: ScannedTable, columns: readonly string[]): string[] {
  const cols = scansOf(scanned, columns);
  const keys: string[] = new Array(scanned.n);
  for (let r = 0; r < scanned.n; r++) {
    let k = "";
    for (let f = 0; f < cols.length; f++) k += (f ? "\u0000" : "") + cols[f].values[cols[f].ids[r]];
    keys[r] = k;
  }
  return keys;
}

/** The scans of `columns`, in that order. @throws Error when the table lacks one. */
function scansOf(scanned: ScannedTable, columns: readonly string[]): ColumnScan[] {
  return columns.map((c) => {
    const i = scanned.columns.indexOf(c);
    if (i < 0) throw new Error(`internal: ${scanned.source} has no column "${c}"`);
    return scanned.scans[i];
  });
}

/** TRAIN, HOLDOUT and synthetic rows as scanned; rows are equal when their trimmed values are. */
export interface ScannedRows {
  train: ScannedTable;
  holdout: ScannedTable;
  synth: ScannedTable;
  /** The columns compared, each present in all three tables. */
  columns: readonly string[];
}

/** Exact-copy keys of the three tables: one string per row ({@link rowKeys}), or the scans. */
export type CopyKeys = { train: readonly string[]; holdout: readonly string[]; synth: readonly string[] } | ScannedRows;

/** Exact-copy counts (the `exact_copies_*` counts of `PrivacyCheck`). */
export interface CopyCounts {
  /** Synthetic rows equal to some TRAIN row. */
  copies: number;
  /** Of those, the ones among the first `nH` synthetic rows. */
  copiesAtHoldoutSize: number;
  /** HOLDOUT rows equal to some TRAIN row. */
  baseline: number;
}

/** Exact-copy counts from string keys: a set of TRAIN's keys. */
function copiesOfKeys(keys: { train: readonly string[]; holdout: readonly string[]; synth: readonly string[] }, nH: number): CopyCounts {
  const trainSet = new Set(keys.train);
  let copies = 0;
  let copiesAtHoldoutSize = 0;
  keys.synth.forEach((k, r) => {
    if (!trainSet.has(k)) return;
    copies++;
    if (r < nH) copiesAtHoldoutSize++;
  });
  let baseline = 0;
  for (const k of keys.holdout) if (trainSet.has(k)) baseline++;
  return { copies, copiesAtHoldoutSize, baseline };
}

/** A table's rows as TRAIN value ids per column (-1: a value TRAIN never has), via `map` if any. */
interface MatchColumns {
  ids: Int32Array[];
  /** Per column, the TRAIN value id of each of this table's value ids; absent for TRAIN itself. */
  maps?: Int32Array[];
}

/**
 * Two independent 32-bit murmur3-style hashes of each row's TRAIN value ids (a 64-bit key); a row
 * with a value TRAIN never has gets `lo` = `hi` = 0 and `absent[r]` = 1.
 */
function rowHashes(t: MatchColumns, n: number): { lo: Uint32Array; hi: Uint32Array; absent: Uint8Array } {
  const lo = new Uint32Array(n);
  const hi = new Uint32Array(n).fill(0x9747b28c);
  const absent = new Uint8Array(n);
  t.ids.forEach((ids, f) => {
    const map = t.maps?.[f];
    for (let r = 0; r < n; r++) {
      const v = map ? map[ids[r]] : ids[r];
      if (v < 0) {
        absent[r] = 1;
        continue;
      }
      let a = lo[r] ^ Math.imul(v + f + 1, 0xcc9e2d51);
      a = Math.imul((a << 15) | (a >>> 17), 0x1b873593);
      lo[r] = Math.imul((a << 13) | (a >>> 19), 5) + 0xe6546b64;
      let b = hi[r] ^ Math.imul(v + 0x3c6ef372, 0x85ebca77);
      b = Math.imul((b << 17) | (b >>> 15), 0xc2b2ae3d);
      hi[r] = Math.imul((b << 11) | (b >>> 21), 9) + 0x27d4eb2f;
    }
  });
  for (let r = 0; r < n; r++) {
    if (absent[r]) {
      lo[r] = 0;
      hi[r] = 0;
    } else {
      lo[r] = mix32(lo[r]);
      hi[r] = mix32(hi[r] ^ lo[r]);
    }
  }
  return { lo, hi, absent };
}

/**
 * Exact-copy counts from the scans: each row read through a per-column map to TRAIN's value ids,
 * hashed to 64 bits and looked up in an open-addressing table of TRAIN's distinct rows (load at
 * most 1/2, linear probing); every hash match is confirmed id by id, so the counts are exact, also
 * when values contain U+0000. Memory: 8 bytes per row hashed, 8 per slot (at most 4 per TRAIN
 * row), no string per row.
 */
function copiesOfScans(rows: ScannedRows, nH: number): CopyCounts {
  const train = scansOf(rows.train, rows.columns);
  const trainIds = train.map((s) => s.ids);
  const nT = rows.train.n;
  const dicts = train.map((s) => {
    const m = new Map<string, number>();
    s.values.forEach((v, id) => {
      if (!m.has(v)) m.set(v, id);
    });
    return m;
  });
  const matchOf = (t: ScannedTable): MatchColumns => {
    const scans = scansOf(t, rows.columns);
    return {
      ids: scans.map((s) => s.ids),
      maps: scans.map((s, f) => Int32Array.from(s.values, (v) => dicts[f].get(v) ?? -1)),
    };
  };
  let cap = 8;
  while (cap < 2 * nT) cap *= 2;
  const mask = cap - 1;
  const slotRow = new Int32Array(cap).fill(-1);
  const slotHi = new Uint32Array(cap);
  const F = trainIds.length;
  {
    const { lo, hi } = rowHashes({ ids: trainIds }, nT);
    for (let r = 0; r < nT; r++) {
      let i = lo[r] & mask;
      for (;;) {
        const s = slotRow[i];
        if (s < 0) {
          slotRow[i] = r;
          slotHi[i] = hi[r];
          break;
        }
        if (slotHi[i] === hi[r]) {
          let same = true;
          for (let f = 0; f < F; f++) {
            if (trainIds[f][s] !== trainIds[f][r]) {
              same = false;
              break;
            }
          }
          if (same) break; // a duplicate TRAIN row: already in the table
        }
        i = (i + 1) & mask;
      }
    }
  }
  /** Marks which rows of `t` equal some TRAIN row. */
  const isCopy = (t: ScannedTable): Uint8Array => {
    const q = matchOf(t);
    const n = t.n;
    const { lo, hi, absent } = rowHashes(q, n);
    const out = new Uint8Array(n);
    for (let r = 0; r < n; r++) {
      if (absent[r]) continue;
      for (let i = lo[r] & mask; ; i = (i + 1) & mask) {
        const s = slotRow[i];
        if (s < 0) break;
        if (slotHi[i] !== hi[r]) continue;
        let same = true;
        for (let f = 0; f < F; f++) {
          if (q.maps![f][q.ids[f][r]] !== trainIds[f][s]) {
            same = false;
            break;
          }
        }
        if (same) {
          out[r] = 1;
          break;
        }
      }
    }
    return out;
  };
  const fromSynth = isCopy(rows.synth);
  let copies = 0;
  let copiesAtHoldoutSize = 0;
  for (let r = 0; r < fromSynth.length; r++) {
    if (!fromSynth[r]) continue;
    copies++;
    if (r < nH) copiesAtHoldoutSize++;
  }
  let baseline = 0;
  for (const c of isCopy(rows.holdout)) baseline += c;
  return { copies, copiesAtHoldoutSize, baseline };
}

/**
 * The exact-copy counts of {@link CopyKeys}; `copiesAtHoldoutSize`: among the first `nH` rows.
 * @throws Error when a scanned table lacks one of the compared columns.
 */
export function exactCopyCounts(keys: CopyKeys, nH: number): CopyCounts {
  return "columns" in keys ? copiesOfScans(keys, nH) : copiesOfKeys(keys, nH);
}
