/**
 * Decoding under `column_stats[f].cell_ranges` (`../metadata/cell-ranges`): an interval bin's value
 * is drawn by the decoder of the bin under the range its row's partner value has there (the
 * lattice, grain and a seeded range as without it); a row whose cell has no range, whose range
 * holds no writable value, or which has no partner code is drawn as without cell ranges. A bin
 * the real rows never hold beside the row's partner value (a structural zero of the pair's 2-way
 * marginal: a congress's date in another congress's years) is replaced first by a bin the real
 * rows hold beside it, drawn by their share.
 */
import type { ColumnStats } from "../../contract";
import type { Rng } from "../generate/sfc32";
import type { FeatureDecoder, ValueRange } from "./common";

/** A binned decoder with its `codes` and `weights` and, on an integer lattice, `drawNumber` (`./bins`' `binDecoder`). */
type BinnedDecoder = FeatureDecoder & { codes: number[]; weights: number[]; drawNumber?: (c: number, rng: Rng) => number };

/** The part of `range` inside [lo, hi]; undefined when empty. */
function within(range: ValueRange | undefined, lo: number, hi: number): ValueRange | undefined {
  const out: ValueRange = { lo, hi };
  if (range?.lo !== undefined && range.lo >= lo) [out.lo, out.loOpen] = [range.lo, range.loOpen];
  if (range?.hi !== undefined && range.hi <= hi) [out.hi, out.hiOpen] = [range.hi, range.hiOpen];
  if (out.lo! > out.hi! || (out.lo === out.hi && (out.loOpen || out.hiOpen))) return undefined;
  return out;
}

/** The bins a partner code's real rows hold ({@link heldBins}): ascending, with their shares of the pair's rows. */
export interface HeldBins {
  bins: number[];
  weights: number[];
}

/**
 * Per partner code, the bins (codes below `bins`) the pair's 2-way marginal holds beside it,
 * ascending, each with its probability: `probs` is the marginal of (`partner`, the binned column)
 * when `partnerFirst`, else of (the binned column, `partner`), row-major over their cardinalities
 * `Kp` and `Kb`. Undefined for a marginal of another size.
 */
export function heldBins(probs: readonly number[], Kp: number, Kb: number, partnerFirst: boolean, bins: number): HeldBins[] | undefined {
  if (probs.length !== Kp * Kb) return undefined;
  const held: HeldBins[] = Array.from({ length: Kp }, () => ({ bins: [], weights: [] }));
  for (let a = 0; a < Kp; a++) {
    for (let c = 0; c < Math.min(bins, Kb); c++) {
      const p = partnerFirst ? probs[a * Kb + c] : probs[c * Kp + a];
      if (p > 0) (held[a].bins.push(c), held[a].weights.push(p));
    }
  }
  return held;
}

/** A bin of `held` (non-empty) drawn by its weight: the real rows' bins beside the partner code. */
function drawHeld(held: HeldBins, rng: Rng): number {
  let total = 0;
  for (const w of held.weights) total += w;
  let u = rng.next() * total;
  for (let i = 0; i < held.bins.length; i++) {
    u -= held.weights[i];
    if (u < 0) return held.bins[i];
  }
  return held.bins[held.bins.length - 1];
}

/**
 * `base` with `stats.cell_ranges`: `partner` is the partner column, and a row's interval bin c
 * with partner code a decodes by `build(range of (a, c) within `range`)`, built on first use per
 * cell. Entries naming a bin that is not an interval bin, or with min > max, are ignored.
 * @param build the decoder of the column under a value range (no cell ranges of its own).
 * @param held per partner code, the bins the real rows hold beside it ({@link heldBins}); a row's
 *   bin outside its partner code's (non-empty) list decodes as one of them drawn by its share, so
 *   the moved rows follow the real rows' bins beside that code. Pooled (`__other__`) partner codes
 *   should hold an empty list: their rows are of many values.
 * @returns `base` itself when the stats hold no usable cell range.
 */
export function withCellRanges(
  base: BinnedDecoder,
  stats: ColumnStats,
  edges: readonly number[],
  missingCode: number | undefined,
  build: (range: ValueRange) => BinnedDecoder,
  range?: ValueRange,
  held?: readonly (HeldBins | undefined)[],
): BinnedDecoder {
  const spec = stats.cell_ranges;
  const nb = edges.length - 1;
  if (!spec || !(nb >= 1)) return base;
  // Per cell a * nb + c: its range, then its decoder once built (null: none). Partner codes are
  // under 2^16 (a column has at most 1,000 categories or 32 point bins plus two codes).
  const bounds: ([number, number] | undefined)[] = [];
  for (const [a, c, lo, hi] of spec.cells) {
    if (!(Number.isInteger(a) && a >= 0 && a < 1 << 16 && Number.isInteger(c) && c >= 0 && c < nb) || edges[c] === edges[c + 1] || !(lo <= hi)) continue;
    bounds[a * nb + c] = [lo, hi];
  }
  if (!bounds.some((b) => b !== undefined)) return base;
  const decoders: (BinnedDecoder | null | undefined)[] = new Array(bounds.length);
  const cellDecoder = (a: number | undefined, c: number): BinnedDecoder | null => {
    if (a === undefined || !(c >= 0 && c < nb)) return null;
    const key = a * nb + c;
    if (!(key < bounds.length)) return null;
    let d = decoders[key];
    if (d !== undefined) return d;
    const b = bounds[key];
    const r = b && within(range, b[0], b[1]);
    const built = r ? build(r) : undefined;
    d = built && built.codes.includes(c) ? built : null;
    decoders[key] = d;
    return d;
  };
  // The bin a row decodes: its own, or one its partner code's real rows hold.
  const binOf = (a: number | undefined, c: number, rng: Rng): number => {
    if (!held || a === undefined || !(c >= 0 && c < nb)) return c;
    const h = held[a];
    return h && h.bins.length > 0 && !h.bins.includes(c) ? drawHeld(h, rng) : c;
  };
  const decode: FeatureDecoder["decode"] = (c, rng, row, ids, partnerCode, fresh) => {
    const b = binOf(partnerCode, c, rng);
    return (cellDecoder(partnerCode, b) ?? base).decode(b, rng, row, ids, partnerCode, fresh);
  };
  const out: BinnedDecoder = { ...base, partner: spec.column, decode, drawNumber: undefined };
  if (base.decodeColumn) {
    // The base's column form is integers: the same, from the cell decoders' text.
    const column = base.decodeColumn;
    out.decodeColumn = (col, rng, rowOffset, ids, partner, fresh, arrays) => {
      if (partner === undefined) return column(col, rng, rowOffset, ids, partner, fresh, arrays);
      const n = col.length;
      const values = arrays !== undefined ? arrays.float64(n) : new Float64Array(n);
      const blank = arrays !== undefined ? arrays.uint8(n) : new Uint8Array(n);
      let blanks = 0;
      for (let r = 0; r < n; r++) {
        if (col[r] === missingCode) {
          blank[r] = 1;
          blanks++;
          continue;
        }
        const b = binOf(partner[r], col[r], rng);
        const d = cellDecoder(partner[r], b) ?? base;
        values[r] = d.drawNumber ? d.drawNumber(b, rng) : Number(d.decode(b, rng, rowOffset + r, ids, partner[r], fresh));
      }
      if (blanks > 0) return { kind: "int", values, blank };
      arrays?.give([blank]);
      return { kind: "int", values };
    };
  }
  return out;
}
