/**
 * Which rows a filtered sample keeps when it may keep fewer than it drew: those that keep its
 * marginals closest to the model's. The near-copy filter (`./filter`) drops near-copies over its
 * share; near-copies crowd the common cells (a frequent key, a frequent bin), so dropping them at
 * random leaves the sample short there and the replacements, drawn from the whole stream, put the
 * shortfall elsewhere. Here each candidate row is scored by the shortfall of its cells against the
 * metadata's marginals (`empirical_probs` and the 2-way `marginals`, the targets the server's
 * calibrated generation rakes to), counted over the rows already kept, and the rows of highest
 * score are kept first: a greedy step of raking by selection (Deville & Sarndal's calibration,
 * with 0/1 weights). Cells are read from the decoded rows (`../rules/check`'s `cellCoder`), so
 * they are the cells a rule wrote, read as the rule checks read them: a number past either end
 * of a binned column's range is in the end bin (a decoded cell the model drew there).
 */
import type { Metadata } from "../../contract";
import type { Table } from "../io/csv";
import { cellCoder } from "../rules/check";

/** One marginal: its features (indexes into the table's columns) and target probabilities. */
interface Target {
  cols: number[];
  /** Cards of the second feature (2-way), 1 for a 1-way marginal. */
  stride: number;
  probs: Float64Array;
}

/** What a balance reads from its metadata: the same for every sample of a model. */
interface Plan {
  features: readonly string[];
  coders: ((text: string) => number | undefined)[];
  cards: number[];
  targets: Target[];
}

/** Per metadata object, its {@link Plan} (null: nothing to balance against); metadata is never changed once built. */
const PLANS = new WeakMap<Metadata, Plan | null>();

/** The plan of a model's metadata: its coders, its 1-way marginals and its 2-way `marginals`. */
function planOf(meta: Metadata): Plan | null {
  const features = meta.features;
  // A column whose cells cannot be read (no usable format) is left out, never an error mid-sample.
  const coders = features.map((f) => {
    try {
      return cellCoder(f, meta);
    } catch {
      return () => undefined;
    }
  });
  const cards = features.map((f) => meta.cardinalities[f] ?? 0);
  const targets: Target[] = [];
  features.forEach((f, i) => {
    const p = meta.empirical_probs?.[f];
    if (p === undefined || p.length !== cards[i] || cards[i] < 2) return;
    targets.push({ cols: [i], stride: 1, probs: Float64Array.from(p) });
  });
  if (targets.length === 0) return null;
  for (const m of meta.marginals ?? []) {
    const a = features.indexOf(m.features[0]);
    const b = features.indexOf(m.features[1]);
    if (a < 0 || b < 0 || m.probs.length !== cards[a] * cards[b]) continue;
    targets.push({ cols: [a, b], stride: cards[b], probs: Float64Array.from(m.probs) });
  }
  return { features, coders, cards, targets };
}

/** Scores the rows of a batch by the shortfall of their cells; see the file header. */
export class MarginalBalance {
  private readonly features: readonly string[];
  private readonly coders: ((text: string) => number | undefined)[];
  private readonly cards: number[];
  private readonly targets: readonly Target[];
  /** Per target, the rows kept in each of its cells: this balance's own (one per sample). */
  private readonly counts: Float64Array[];

  private constructor(plan: Plan) {
    this.features = plan.features;
    this.coders = plan.coders;
    this.cards = plan.cards;
    this.targets = plan.targets;
    this.counts = plan.targets.map((t) => new Float64Array(t.probs.length));
  }

  /**
   * A balance of a model's metadata with no rows kept yet: its 1-way marginals and its 2-way
   * `marginals`; undefined when the metadata has no 1-way marginals (nothing to balance against).
   * What it reads from the metadata is built once per metadata object.
   */
  static of(meta: Metadata): MarginalBalance | undefined {
    let plan = PLANS.get(meta);
    if (plan === undefined) PLANS.set(meta, (plan = planOf(meta)));
    return plan === null ? undefined : new MarginalBalance(plan);
  }

  /**
   * Per row of `batch`, its cell in each marginal (row-major: `cells[r * T + t]`, -1 for a cell
   * the code book lacks or a column the batch lacks).
   */
  cells(batch: Table): Int32Array {
    const n = batch.rows.length;
    const at = this.features.map((f) => batch.columns.indexOf(f));
    const codes = this.features.map((_, i) => {
      const out = new Int32Array(n).fill(-1);
      if (at[i] < 0) return out;
      for (let r = 0; r < n; r++) {
        const c = this.coders[i](batch.rows[r][at[i]] ?? "");
        if (c !== undefined && c >= 0 && c < this.cards[i]) out[r] = c;
      }
      return out;
    });
    const T = this.targets.length;
    const cells = new Int32Array(n * T);
    this.targets.forEach((t, k) => {
      const x = codes[t.cols[0]];
      const y = t.cols.length === 2 ? codes[t.cols[1]] : undefined;
      for (let r = 0; r < n; r++) cells[r * T + k] = x[r] < 0 || (y !== undefined && y[r] < 0) ? -1 : y === undefined ? x[r] : x[r] * t.stride + y[r];
    });
    return cells;
  }

  /** Counts row `r` of `cells` (from {@link cells}) as kept. */
  add(cells: Int32Array, r: number): void {
    const T = this.targets.length;
    for (let k = 0; k < T; k++) {
      const c = cells[r * T + k];
      if (c >= 0) this.counts[k][c]++;
    }
  }

  /**
   * The gain of keeping row `r` once `size` rows are kept: the sum over the marginals of its cell's
   * shortfall (target share times `size`, less the rows there), i.e. half the drop in the squared
   * distance of the counts from their targets, up to a constant.
   */
  score(cells: Int32Array, r: number, size: number): number {
    const T = this.targets.length;
    let s = 0;
    for (let k = 0; k < T; k++) {
      const c = cells[r * T + k];
      if (c < 0) continue;
      s += this.targets[k].probs[c] * size - this.counts[k][c];
    }
    return s;
  }

  /**
   * Chooses up to `want` rows among `candidates` (row indexes of `cells`), each time the row of
   * highest {@link score}, counting each chosen row. A row's score only falls as rows are added
   * (`size` fixed), so a lazy greedy (a max-heap of stale scores, a popped row rescored and kept when
   * still the highest) gives the exact greedy order. `accept(r)` may refuse a row (passed over
   * for good) or stop the choice (`"stop"`). `size`: the rows the sample will have once these are
   * added (the scale of the targets).
   * @returns the chosen rows, in the order chosen.
   */
  choose(cells: Int32Array, candidates: readonly number[], want: number, size: number, accept?: (r: number) => boolean | "stop"): number[] {
    const out: number[] = [];
    if (want <= 0 || candidates.length === 0) return out;
    if (accept === undefined && candidates.length <= want) {
      // Every candidate is taken: no order to choose.
      for (const r of candidates) (this.add(cells, r), out.push(r));
      return out;
    }
    const heap = new MaxHeap(candidates.length);
    for (const r of candidates) heap.push(r, this.score(cells, r, size));
    while (out.length < want && heap.size > 0) {
      const r = heap.topRow();
      const s = this.score(cells, r, size);
      heap.pop();
      if (heap.size > 0 && s < heap.topScore()) {
        heap.push(r, s);
        continue;
      }
      const ok = accept === undefined ? true : accept(r);
      if (ok === "stop") break;
      if (!ok) continue;
      this.add(cells, r);
      out.push(r);
    }
    return out;
  }
}

/** A binary max-heap of rows by score (ties: the lower row first). */
class MaxHeap {
  private readonly rows: Int32Array;
  private readonly scores: Float64Array;
  size = 0;
  constructor(capacity: number) {
    this.rows = new Int32Array(capacity);
    this.scores = new Float64Array(capacity);
  }
  private above(i: number, j: number): boolean {
    return this.scores[i] > this.scores[j] || (this.scores[i] === this.scores[j] && this.rows[i] < this.rows[j]);
  }
  private swap(i: number, j: number): void {
    const r = this.rows[i];
    this.rows[i] = this.rows[j];
    this.rows[j] = r;
    const s = this.scores[i];
    this.scores[i] = this.scores[j];
    this.scores[j] = s;
  }
  topRow(): number {
    return this.rows[0];
  }
  topScore(): number {
    return this.scores[0];
  }
  push(row: number, score: number): void {
    let i = this.size++;
    this.rows[i] = row;
    this.scores[i] = score;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.above(i, p)) break;
      this.swap(i, p);
      i = p;
    }
  }
  pop(): void {
    this.size--;
    if (this.size === 0) return;
    this.rows[0] = this.rows[this.size];
    this.scores[0] = this.scores[this.size];
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < this.size && this.above(l, m)) m = l;
      if (r < this.size && this.above(r, m)) m = r;
      if (m === i) break;
      this.swap(i, m);
      i = m;
    }
  }
}
