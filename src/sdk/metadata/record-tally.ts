/**
 * Extraction's passes over records that are already strings (`../io/inputs`' readers: CSV by
 * csv-parse, gzip CSV, JSON Lines, Parquet, Arrow, PostgreSQL, in-memory tables): pass 1
 * ({@link RecordTally}) and pass 2 ({@link RecordPairs}), used on the main thread by
 * `./table-tally` and in worker threads for Parquet row groups (`./tally-worker`).
 */
import { RankedSample, sampleRank, BadValue, type PairCounts, type RangeTally } from "./csv-chunks";
import { addMoment, DistinctValues, emptyMoments, encoderOf, hashText, Overflow, type ValueEncoder } from "./distinct-values";

/** Entries of an overflowed column's sample dictionary, per sample row, beyond which it is rebuilt from the kept rows. */
const SAMPLE_DICT_SLACK = 3;

/** One column's pass 1: its dictionary up to the budget, then figures and the sample's values. */
export class ColumnPass {
  dict = new DistinctValues();
  overflow: Overflow | undefined;

  /** The value's id for the sample (-1 when the column overflowed and the row is not `wanted`). */
  add(v: string, line: number, wanted: boolean): number {
    if (this.overflow === undefined) return this.dict.add(v, line);
    this.overflow.add(v, hashText(v));
    return wanted ? this.dict.add(v, line) : -1;
  }

  /** After a row: overflows past `budget`; keeps an overflowed dictionary to the sample's values. */
  check(sample: RankedSample, c: number, budget: number): void {
    if (this.overflow === undefined) {
      if (!this.dict.over(budget)) return;
      const o = new Overflow();
      this.dict.values.forEach((v, id) => o.add(v, hashText(v), this.dict.counts[id]));
      this.overflow = o;
    } else if (this.dict.values.length <= SAMPLE_DICT_SLACK * sample.size + 1024) return;
    this.compact(sample, c);
  }

  /** Keeps in an overflowed column's dictionary only the values of the sample's rows. */
  compact(sample: RankedSample, c: number): void {
    const old = this.dict;
    const kept = new DistinctValues();
    sample.remap(c, (id) => kept.add(old.values[id], old.firstLines[id], 0));
    this.dict = kept;
  }
}

/** Pass 1 over records: per column a {@link ColumnPass}, and the bottom-k sample keyed by line. */
export class RecordTally {
  readonly columns: ColumnPass[];
  readonly sample: RankedSample;
  rows = 0;
  private ids: Int32Array;

  constructor(columns: number, sampleRows: number, private budget: number) {
    this.columns = Array.from({ length: columns }, () => new ColumnPass());
    this.sample = new RankedSample(sampleRows, columns);
    this.ids = new Int32Array(columns);
  }

  /** Adds a record read at (1-based, source-wide) `line`. */
  add(record: readonly string[], line: number): void {
    const rank = sampleRank(line);
    const wanted = this.sample.wants(rank, line);
    for (let c = 0; c < record.length; c++) this.ids[c] = this.columns[c].add(record[c], line, wanted);
    if (wanted) this.sample.add(rank, line, line, this.ids);
    for (let c = 0; c < record.length; c++) this.columns[c].check(this.sample, c, this.budget);
    this.rows++;
  }

  /** The result in the shape of a CSV range's (`./csv-chunks` RangeTally; `quotes` 0, `lines` the rows). */
  result(): RangeTally {
    this.sample.trim();
    this.columns.forEach((p, c) => p.overflow && p.compact(this.sample, c));
    return {
      rows: this.rows,
      quotes: 0,
      lines: this.rows,
      values: this.columns.map((p) => p.dict.values),
      counts: this.columns.map((p) => (p.overflow ? new Float64Array(0) : Float64Array.from(p.dict.counts))),
      firstLines: this.columns.map((p) => (p.overflow ? new Int32Array(0) : Int32Array.from(p.dict.firstLines))),
      overflow: this.columns.map((p) => p.overflow?.stats()),
      sample: this.sample.rows(),
    };
  }
}

/** What pass 2 over records counts: pairs laid out as in `./csv-chunks` PairJob. */
export interface RecordPairsJob {
  /** Per column, value -> id (of pass 1's dictionary); unused for an encoded column. */
  index: readonly (ReadonlyMap<string, number> | null)[];
  codeOfId: readonly Int32Array[];
  encoders: readonly (ValueEncoder | null)[];
  cards: ArrayLike<number>;
  pairs: ArrayLike<number>;
  cardsOfSecond: ArrayLike<number>;
  offsets: ArrayLike<number>;
  cells: number;
}

/** Pass 2 over records. */
export class RecordPairs {
  rows = 0;
  private out: Float64Array;
  private codes: Int32Array;
  private encode: (((v: string) => { code: number; x: number }) | null)[];
  private counts: (Float64Array | null)[];
  private moments: PairCounts["moments"];

  constructor(private job: RecordPairsJob) {
    this.out = new Float64Array(job.cells);
    this.codes = new Int32Array(job.index.length);
    this.encode = job.encoders.map((e) => (e ? encoderOf(e) : null));
    this.counts = job.encoders.map((e, c) => (e ? new Float64Array(job.cards[c]) : null));
    this.moments = job.encoders.map((e) => (e?.kind === "bins" ? emptyMoments(e.shift) : e?.kind === "id" && e.integer ? emptyMoments() : null));
  }

  /**
   * Adds a record. @returns false for a value pass 1 did not see (the source changed).
   * @throws BadValue for a value of an encoded column its encoder has no code for.
   */
  add(record: readonly string[], line: number): boolean {
    const { index, codeOfId, pairs, offsets, cardsOfSecond } = this.job;
    const codes = this.codes;
    for (let c = 0; c < record.length; c++) {
      const enc = this.encode[c];
      if (enc) {
        const { code, x } = enc(record[c]);
        if (code < 0) throw new BadValue(c, line, record[c]);
        const m = this.moments[c];
        if (m && record[c] !== "") addMoment(m, x);
        this.counts[c]![code]++;
        codes[c] = code;
        continue;
      }
      const id = index[c]!.get(record[c]);
      if (id === undefined) return false;
      codes[c] = codeOfId[c][id];
    }
    for (let k = 0; k < offsets.length; k++) this.out[offsets[k] + codes[pairs[2 * k]] * cardsOfSecond[k] + codes[pairs[2 * k + 1]]]++;
    this.rows++;
    return true;
  }

  result(): PairCounts {
    return { joint: this.out, counts: this.counts, moments: this.moments };
  }
}
