/**
 * The loops over the rows of a column chunk (`./columns`), each a small function of its own: in a
 * large function V8 compiled a hot loop on the spot and discarded the code on every call.
 */

/** A dictColumn index of a blank entry. */
export const NULL_ID = -1;
/** A dictColumn index of an entry its column's type cannot hold. */
export const ERROR_ID = -2;

/** Sets `seen[index[r]]` for r in [from, to). */
export function markSeen(index: Int32Array, from: number, to: number, seen: Uint8Array): void {
  for (let r = from; r < to; r++) seen[index[r]] = 1;
}

/**
 * Writes `remap[index[r]]` to `idx[k ..]` (and sets `seen` of it) for rows r from `from` on,
 * until one maps below 0 (a null or an error); returns that row, or `to`.
 */
export function remapRows(index: Int32Array, from: number, to: number, remap: Int32Array, idx: Int32Array, k: number, seen: Uint8Array): number {
  let r = from;
  for (; r < to; r++) {
    const id = remap[index[r]];
    if (id < 0) break;
    idx[k++] = id;
    seen[id] = 1;
  }
  return r;
}

/**
 * {@link remapRows} for rows [from, to) that may be null: `defs[q ..]` gets 1 or 0 per row, `idx`
 * from k on the indices of the present ones. Returns the k after them, or `~r` (negative) for the
 * first row r whose entry is an error.
 */
export function remapRowsWithNulls(index: Int32Array, from: number, to: number, remap: Int32Array, idx: Int32Array, k: number, seen: Uint8Array, defs: Int32Array, q: number): number {
  for (let r = from; r < to; r++, q++) {
    const id = remap[index[r]];
    if (id >= 0) {
      idx[k++] = id;
      seen[id] = 1;
      defs[q] = 1;
    } else if (id === NULL_ID) defs[q] = 0;
    else return ~r;
  }
  return k;
}

/** Widens `range` (min, max, blanks) by `values[from .. to)`; false for a non-safe integer. */
export function intRange(values: Float64Array, blank: Uint8Array | undefined, from: number, to: number, range: Float64Array): boolean {
  let min = range[0];
  let max = range[1];
  let nulls = range[2];
  for (let r = from; r < to; r++) {
    if (blank !== undefined && blank[r] === 1) {
      nulls++;
      continue;
    }
    const x = values[r];
    if (!Number.isSafeInteger(x)) return false;
    if (x < min) min = x;
    if (x > max) max = x;
  }
  range[0] = min;
  range[1] = max;
  range[2] = nulls;
  return true;
}

/** `defs[q ..]`: per row in [from, to), 0 where `blank` is 1, else 1. */
export function blankLevels(blank: Uint8Array | undefined, from: number, to: number, defs: Int32Array, q: number): void {
  for (let r = from; r < to; r++) defs[q++] = blank !== undefined && blank[r] === 1 ? 0 : 1;
}

/**
 * Dictionary indices of the present `values[from .. to)` through `table` (value - min -> index, -1
 * for none yet; a new value is appended to `dict`), written to `idx[k ..]`. Returns the k after
 * them, or -1 once `dict` holds more than `limit` values.
 */
export function tableIds(values: Float64Array, blank: Uint8Array | undefined, from: number, to: number, min: number, table: Int32Array, dict: number[], idx: Int32Array, k: number, limit: number): number {
  for (let r = from; r < to; r++) {
    if (blank !== undefined && blank[r] === 1) continue;
    const t = (values[r] - min) | 0; // in [0, DIRECT_RANGE): an int32 index
    let id = table[t];
    if (id < 0) {
      id = table[t] = dict.length;
      dict.push(values[r]);
      if (dict.length > limit) return -1;
    }
    idx[k++] = id;
  }
  return k;
}

/**
 * The present `values[from .. to)` as INT64 into `words[w ..]`: two 32-bit halves each, low first
 * (little endian machines only). Returns the w after them.
 */
export function int64Words(values: Float64Array, blank: Uint8Array | undefined, from: number, to: number, words: Int32Array, w: number): number {
  for (let r = from; r < to; r++) {
    if (blank !== undefined && blank[r] === 1) continue;
    const x = values[r];
    const hi = Math.floor(x / 4294967296);
    words[w++] = x - hi * 4294967296;
    words[w++] = hi;
  }
  return w;
}
