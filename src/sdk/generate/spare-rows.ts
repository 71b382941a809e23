/**
 * Spare rows of a sample with a key (`./unique-keys`) under the near-copy filter
 * (`../privacy/filter`): rows the filter dropped whose keys the sample does not hold yet are kept
 * aside, and once the filter stops (its bound of drawn rows) they fill the sample's free keys
 * before any new draw (`./synthesizer`). A complete grid (each key once, every other column
 * decided by it) has every coherent row a near-copy: without them the rows written past the filter
 * repeat keys.
 *
 * The rows written are the farthest from the real rows first: those the filter dropped though
 * they nearly copy no real row, then near-copies, then rows that hold every leave-one-column-out
 * key of the real table (equal to a real row), each by the distance the filter gives
 * (`KeepOptions.onDistance`). Within a distance they are chosen by the model's marginals
 * (`../privacy/marginal-balance`), as the filter chooses the rows it keeps, and written in the
 * order they were drawn.
 *
 * Memory: at most `cap` rows, and per key at most one row at each distance (a row is kept aside
 * only when no row kept aside at its distance or farther holds its key).
 */
import type { Metadata } from "../../contract";
import type { MarginalBalance } from "../privacy/marginal-balance";
import { DecodedBatch } from "./batch";
import { SampleKeys } from "./unique-keys";

/** Distances the filter tells apart: 0 (a copy), 1 (a near-copy), 2 (none within one column). */
const DISTANCES = 3;

/** The rows kept aside for one sample's free keys (file header). */
export class SpareRows {
  private readonly batches: DecodedBatch[] = [];
  private readonly distances: Uint8Array[] = [];
  /** Per distance d, the keys of the rows kept aside at distance d or farther. */
  private readonly held: SampleKeys[];
  /** Rows kept aside. */
  rows = 0;

  private constructor(
    metadata: Pick<Metadata, "rules" | "features" | "column_stats">,
    private readonly cap: number,
  ) {
    this.held = Array.from({ length: DISTANCES }, () => SampleKeys.of(metadata)!);
  }

  /**
   * The spare rows of a sample of `metadata`, at most `cap` of them; undefined when the table has
   * no key.
   */
  static of(metadata: Pick<Metadata, "rules" | "features" | "column_stats">, cap: number): SpareRows | undefined {
    return SampleKeys.of(metadata) === undefined ? undefined : new SpareRows(metadata, cap);
  }

  /**
   * Keeps aside rows `rows` of `batch` (rows the filter dropped) that hold no key of `sample` and
   * none of a row kept aside at their distance or farther, the farther rows of the list first,
   * while under the cap. `distance`: per row of `batch`, 0..2 (`KeepOptions.onDistance`);
   * undefined: every row a near-copy (1). `batch` stays the caller's.
   */
  offer(batch: DecodedBatch, rows: readonly number[], distance: Uint8Array | undefined, sample: SampleKeys): void {
    const dist = (r: number): number => Math.min(DISTANCES - 1, distance?.[r] ?? 1);
    const taken: number[] = [];
    for (const r of [...rows].sort((a, b) => dist(b) - dist(a) || a - b)) {
      if (this.rows + taken.length >= this.cap) break;
      const d = dist(r);
      if (sample.holds(batch, r) || this.held[d].holds(batch, r)) continue;
      for (let e = 0; e <= d; e++) this.held[e].add(batch, [r]);
      taken.push(r);
    }
    if (taken.length === 0) return;
    taken.sort((a, b) => a - b);
    this.batches.push(batch.select(taken));
    this.distances.push(Uint8Array.from(taken, dist));
    this.rows += taken.length;
  }

  /**
   * Up to `want` rows kept aside whose keys `sample` does not hold, one per key: the farthest first
   * (file header), within a distance by `balance` (its counts then include them; `size`: the rows
   * the sample will hold), else in order; written in the order drawn. Empties the pool. The caller
   * adds the rows' keys to `sample`. Undefined when none is taken.
   */
  take(sample: SampleKeys, want: number, balance: MarginalBalance | undefined, size: number): DecodedBatch | undefined {
    if (this.batches.length === 0) return undefined;
    const all = DecodedBatch.concat(this.batches.splice(0));
    const distance = new Uint8Array(all.length);
    let at = 0;
    for (const d of this.distances.splice(0)) (distance.set(d, at), (at += d.length));
    this.rows = 0;
    const claim = sample.claimer(all);
    const cells = balance?.cells(all.toTable());
    const out: number[] = [];
    for (let d = DISTANCES - 1; d >= 0 && out.length < want; d--) {
      const candidates: number[] = [];
      for (let r = 0; r < all.length; r++) if (distance[r] === d) candidates.push(r);
      if (balance !== undefined) out.push(...balance.choose(cells!, candidates, want - out.length, size, claim));
      else for (const r of candidates) if (out.length < want && claim(r)) out.push(r);
    }
    const spare = out.length > 0 ? all.select(out.sort((a, b) => a - b)) : undefined;
    all.release();
    return spare;
  }

  /** Empties the pool (the sample is full). */
  release(): void {
    for (const b of this.batches.splice(0)) b.release();
    this.distances.length = 0;
    this.rows = 0;
  }
}
