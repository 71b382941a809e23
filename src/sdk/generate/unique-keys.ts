/**
 * Keeps a table's keys (`unique` rules, `../rules/detect/unique`) in a sample: a row whose key (a
 * value, or a tuple of values) an earlier row of the same sample holds is dropped, and the sample
 * draws another from its seeded stream (`./synthesizer`, as rows the near-copy filter drops). A
 * sample longer than the key space, or one the model keeps drawing into the same keys, stops
 * checking after the draws the filter is allowed (`filterDrawCap`) and says how many rows it wrote
 * unchecked (`SampleProgress.unkeyed`).
 *
 * Memory: one 53-bit hash (a JS number) per key per kept row, in a Set; no row is copied. Two
 * different keys share a hash with probability about m^2 / 2^54 over m rows (6e-5 at a million),
 * which drops a row that did not repeat its key, never keeps one that did.
 */
import type { Metadata, UniqueRule } from "../../contract";
import type { Cells } from "./batch";

/** The keys of one sample: which rows of a batch hold a key not seen before. */
export class SampleKeys {
  private readonly seen: Set<number>[];

  /** @param keys per key, its columns' feature indices. */
  private constructor(private readonly keys: readonly number[][]) {
    this.seen = keys.map(() => new Set<number>());
  }

  /**
   * The keys of `metadata.rules` (`unique` rules whose columns are all features and no
   * identifier, which are written unique already), or undefined when there are none.
   */
  static of(metadata: Pick<Metadata, "rules" | "features" | "column_stats">): SampleKeys | undefined {
    const keys = (metadata.rules ?? [])
      .filter((r): r is UniqueRule => r.type === "unique")
      .map((r) => r.columns.map((c) => (metadata.features as readonly string[]).indexOf(c)))
      .filter((idx) => idx.length > 0 && idx.every((f) => f >= 0 && metadata.column_stats?.[metadata.features[f]]?.type !== "id"));
    return keys.length > 0 ? new SampleKeys(keys) : undefined;
  }

  /**
   * The rows of `batch` (of `rows`, default all, in order) whose every key is new: held by no row
   * added before and by no earlier row of this list. Adds nothing ({@link add} does).
   */
  fresh(batch: Cells, rows?: readonly number[]): number[] {
    const claim = this.claimer(batch);
    return rows === undefined ? Array.from({ length: batch.length }, (_, r) => r).filter(claim) : rows.filter(claim);
  }

  /** The rows of `batch` holding no key a row added before holds (two of them may share one). */
  unheld(batch: Cells): number[] {
    const out: number[] = [];
    for (let r = 0; r < batch.length; r++) if (!this.holds(batch, r)) out.push(r);
    return out;
  }

  /** Whether a row added before holds one of row r's keys. */
  holds(batch: Cells, r: number): boolean {
    for (let k = 0; k < this.keys.length; k++) if (this.seen[k].has(keyHash(batch, r, this.keys[k]))) return true;
    return false;
  }

  /**
   * Claims on rows of `batch`: given a row, true when no row added before and no row claimed
   * before holds one of its keys (its keys are then claimed), else false. Adds nothing to the
   * sample ({@link add} does).
   */
  claimer(batch: Cells): (r: number) => boolean {
    const local = this.keys.map(() => new Set<number>());
    // One row's key hashes, reused: no array per row on the sampling path.
    const hs = new Float64Array(this.keys.length);
    return (r) => {
      for (let k = 0; k < hs.length; k++) {
        hs[k] = keyHash(batch, r, this.keys[k]);
        if (this.seen[k].has(hs[k]) || local[k].has(hs[k])) return false;
      }
      for (let k = 0; k < hs.length; k++) local[k].add(hs[k]);
      return true;
    };
  }

  /** Records the keys of `rows` of `batch` (default all) as held by the sample. */
  add(batch: Cells, rows?: readonly number[]): void {
    const n = rows?.length ?? batch.length;
    for (let i = 0; i < n; i++) {
      const r = rows === undefined ? i : rows[i];
      this.keys.forEach((cols, k) => this.seen[k].add(keyHash(batch, r, cols)));
    }
  }
}

/** A 53-bit hash of row r's cells of `cols` (cyrb53 over the texts, a separator between them). */
function keyHash(batch: Cells, r: number, cols: readonly number[]): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let j = 0; j < cols.length; j++) {
    const text = batch.get(r, cols[j]);
    for (let i = 0; i <= text.length; i++) {
      const ch = i < text.length ? text.charCodeAt(i) : 0x1f;
      h1 = Math.imul(h1 ^ ch, 2654435761);
      h2 = Math.imul(h2 ^ ch, 1597334677);
    }
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}
