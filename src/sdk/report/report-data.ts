/**
 * The numbers behind the HTML quality report's plots (`./report`), computed from what
 * {@link evaluateWithDetails} holds (scans and codes under the real code books); nothing re-reads
 * a file. What each plot shows and why: docs/report.md "Sections, top to bottom". Every plot but
 * the DCR histogram counts ALL rows; that one uses `evaluate`'s sampled distances
 * ({@link PLOT_SAMPLE_NOTE}). Histograms use equal-width bins over the REAL column's [min, max]
 * for both tables, out-of-range synthetic values in `< min` / `> max` bars; categorical columns
 * show the real column's {@link TOP_CATEGORIES} values, other values pooled, and blanks.
 */
import type { CodeArray } from "../metadata/marginals";
import { jointCounts } from "../metadata/marginals";
import { compareCodes } from "../evaluate/fidelity";
import type { EvaluationDetails, EvaluationReport } from "../evaluate/types";
import { isNumeric, type ColumnCodec, type ColumnScan } from "../metadata/metadata";

/** Bars a categorical column shows at most (the real column's most frequent values). */
export const TOP_CATEGORIES = 20;
/** Target number of bins of a numerical or datetime histogram (actual: within about 1.5x). */
export const HISTOGRAM_BINS = 20;
/** What the report says about sampling (the DCR histogram is the only plot drawn from a sample). */
export const PLOT_SAMPLE_NOTE =
  "Every figure and plot is computed over all rows of each file, except the DCR histograms: " +
  "they show the privacy check's sample of at most {sample} synthetic rows (evaluate's dcrSample) " +
  "against equal-size samples of TRAIN and HOLDOUT.";

/** One column's distribution in both tables, over the same bars (`none`: identifiers). */
export interface Distribution {
  type: "histogram" | "categories" | "none";
  /** Bar labels in display order (bin ranges or values), unique. */
  labels: string[];
  /** Rows per bar, real and synthetic (same length as `labels`). */
  real: number[];
  synthetic: number[];
  /** Rows of each table (the denominators of the shares drawn). */
  rows: { real: number; synthetic: number };
  /** Rows not drawn: blanks and, for synthetic histograms, values that do not parse. */
  omitted: { real: number; synthetic: number };
  /** Made-up bars present: below / above the real range, other values pooled, blanks. */
  extra: { below?: boolean; above?: boolean; pooled?: boolean; blank?: boolean };
}

/** A symmetric per-pair figure over the modelled columns, as the pairs list it. */
export interface PairMatrix {
  /** Modelled column names, in the real table's order. */
  columns: string[];
  /** One entry per pair (a, b), a < b (indices into `columns`), in the order (0,1), (0,2), .... */
  pairs: [number, number][];
  /** 2-way TVD of each pair, real against synthetic (the values `tvd["2"]` averages). */
  tvd: number[];
  /** Cramér's V of each pair in the real and in the synthetic table. */
  vReal: number[];
  vSynthetic: number[];
}

/** DCR histogram: sampled synthetic rows per distance to the closest TRAIN / HOLDOUT row. */
export interface DcrHistogram {
  /** `train[d]`, `holdout[d]`: rows at Hamming distance d, d = 0..F. */
  train: number[];
  holdout: number[];
  /** Sampled synthetic rows (the sum of each array). */
  sampled: number;
}

/**
 * Cramér's V of a contingency table (Cramér, Mathematical Methods of Statistics, 1946, §21.9):
 * V = sqrt(χ² / (n · (min(r, c) − 1))), r and c the non-empty rows and columns; in [0, 1], 0 for
 * an empty table or a single non-empty row or column.
 * @param counts row-major Ka x Kb counts (`counts[i * Kb + j]`), as `jointCounts` returns.
 */
export function cramersV(counts: ArrayLike<number>, Ka: number, Kb: number): number {
  const ra = new Float64Array(Ka);
  const cb = new Float64Array(Kb);
  let n = 0;
  for (let i = 0; i < Ka; i++) {
    for (let j = 0; j < Kb; j++) {
      const v = counts[i * Kb + j];
      ra[i] += v;
      cb[j] += v;
      n += v;
    }
  }
  let r = 0;
  let c = 0;
  for (let i = 0; i < Ka; i++) if (ra[i] > 0) r++;
  for (let j = 0; j < Kb; j++) if (cb[j] > 0) c++;
  const k = Math.min(r, c) - 1;
  if (n === 0 || k <= 0) return 0;
  let chi2 = 0;
  for (let i = 0; i < Ka; i++) {
    if (ra[i] === 0) continue;
    for (let j = 0; j < Kb; j++) {
      if (cb[j] === 0) continue;
      const e = (ra[i] * cb[j]) / n;
      const d = counts[i * Kb + j] - e;
      chi2 += (d * d) / e;
    }
  }
  return Math.min(1, Math.sqrt(chi2 / (n * k)));
}

/** 1, 2, 2.5 or 5 times a power of ten, the smallest such >= x (integers only when `integer`). */
export function niceStep(x: number, integer = false): number {
  if (!(x > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(x)));
  const steps = integer && p < 10 ? [1, 2, 5, 10] : [1, 2, 2.5, 5, 10];
  for (const m of steps) if (m * p >= x * (1 - 1e-12)) return Math.max(integer ? 1 : 0, m * p);
  return 10 * p;
}

const MIN = 60;
const HOUR = 3600;
const DAY = 86400;
/** Datetime bin widths in seconds: seconds .. years. */
const TIME_STEPS = [1, 5, 15, 30, MIN, 5 * MIN, 15 * MIN, 30 * MIN, HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, DAY, 2 * DAY, 7 * DAY, 14 * DAY, 30 * DAY, 91 * DAY, 182 * DAY, 365 * DAY];

function timeStep(x: number): number {
  for (const s of TIME_STEPS) if (s >= x) return s;
  return niceStep(x / (365 * DAY)) * 365 * DAY;
}

/** Compact number text: 4 significant digits, `12.5K`, `1.2M` from 10,000 up. */
export function shortNumber(x: number): string {
  if (Math.abs(x) >= 10_000) return new Intl.NumberFormat("en-US", { notation: "compact", maximumSignificantDigits: 3 }).format(x);
  return String(Number(x.toPrecision(4)));
}

/** ISO text of an epoch second, cut to `len` characters (4 year ... 19 second). */
function isoCut(seconds: number, len: number): string {
  const d = new Date(Math.round(seconds * 1000));
  return Number.isFinite(d.getTime()) ? d.toISOString().slice(0, len).replace("T", " ") : String(seconds);
}

/** Labels of bins starting at `starts` (datetimes): the coarsest ISO cut that tells them apart. */
function timeLabels(starts: number[], step: number): string[] {
  const cuts = [4, 7, 10, 16, 19];
  const first = step >= 365 * DAY ? 0 : step >= 28 * DAY ? 1 : step >= DAY ? 2 : step >= MIN ? 3 : 4;
  for (let k = first; k < cuts.length; k++) {
    const labels = starts.map((s) => isoCut(s, cuts[k]));
    if (new Set(labels).size === labels.length) return labels;
  }
  return starts.map((s) => isoCut(s, 19));
}

/** Equal-width bins over [lo, hi]: `start`, `step`, `count`; the last bin is closed. */
function binsOf(lo: number, hi: number, integer: boolean, datetime: boolean): { start: number; step: number; count: number } {
  if (hi === lo) return { start: lo, step: 1, count: 1 };
  if (integer && hi - lo + 1 <= HISTOGRAM_BINS * 1.5) return { start: lo, step: 1, count: hi - lo + 1 };
  const step = datetime ? timeStep((hi - lo) / HISTOGRAM_BINS) : niceStep((hi - lo) / HISTOGRAM_BINS, integer);
  const start = Math.floor(lo / step) * step;
  return { start, step, count: Math.max(1, Math.ceil((hi - start) / step - 1e-9)) };
}

/** Makes `label` unique among `taken` by appending " ·" (a value equal to a made-up label). */
function uniqueLabel(label: string, taken: Set<string>): string {
  let l = label;
  while (taken.has(l)) l += " ·";
  taken.add(l);
  return l;
}

/**
 * The histogram of a numerical or datetime column (file header).
 * @param value text -> number (epoch seconds for datetimes), undefined when it does not parse.
 */
export function histogram(
  real: ColumnScan,
  synth: ColumnScan,
  rows: { real: number; synthetic: number },
  value: (v: string) => number | undefined,
  opts: { integer: boolean; datetime: boolean },
): Distribution {
  const parse = (scan: ColumnScan): { x: number[]; c: number[]; omitted: number } => {
    const x: number[] = [];
    const c: number[] = [];
    let omitted = 0;
    scan.values.forEach((v, id) => {
      const num = v === "" ? undefined : value(v);
      if (num === undefined || !Number.isFinite(num)) omitted += scan.counts[id];
      else {
        x.push(num);
        c.push(scan.counts[id]);
      }
    });
    return { x, c, omitted };
  };
  const r = parse(real);
  const s = parse(synth);
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of r.x) {
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  if (!(lo <= hi)) return { type: "histogram", labels: [], real: [], synthetic: [], rows, omitted: { real: r.omitted, synthetic: s.omitted }, extra: {} };
  const integer = opts.integer && Number.isInteger(lo) && Number.isInteger(hi);
  const { start, step, count } = binsOf(lo, hi, integer, opts.datetime);
  const realBins = new Array<number>(count + 2).fill(0); // [below, bins..., above]
  const synthBins = new Array<number>(count + 2).fill(0);
  const add = (bins: number[], x: number, c: number): void => {
    if (x < lo) bins[0] += c;
    else if (x > hi) bins[count + 1] += c;
    else bins[1 + Math.min(count - 1, Math.max(0, Math.floor((x - start) / step + 1e-9)))] += c;
  };
  r.x.forEach((x, k) => add(realBins, x, r.c[k]));
  s.x.forEach((x, k) => add(synthBins, x, s.c[k]));
  const starts = Array.from({ length: count }, (_, k) => start + k * step);
  let labels: string[];
  if (opts.datetime) labels = timeLabels(starts, step);
  else if (integer && step === 1) labels = starts.map((v) => String(v));
  else labels = starts.map((v) => `${shortNumber(v)}–${shortNumber(v + step)}`);
  const fmt = (x: number): string => (opts.datetime ? isoCut(x, 19) : shortNumber(x));
  const out: Distribution = { type: "histogram", labels: [], real: [], synthetic: [], rows, omitted: { real: r.omitted, synthetic: s.omitted }, extra: {} };
  const taken = new Set<string>();
  const push = (label: string, k: number): void => {
    out.labels.push(uniqueLabel(label, taken));
    out.real.push(realBins[k]);
    out.synthetic.push(synthBins[k]);
  };
  if (synthBins[0] > 0) {
    push(`< ${fmt(lo)}`, 0);
    out.extra.below = true;
  }
  labels.forEach((l, k) => push(l, k + 1));
  if (synthBins[count + 1] > 0) {
    push(`> ${fmt(hi)}`, count + 1);
    out.extra.above = true;
  }
  return out;
}

/** The bars of a categorical column (decisions in the file header). */
export function categories(real: ColumnScan, synth: ColumnScan, rows: { real: number; synthetic: number }, top = TOP_CATEGORIES): Distribution {
  const synthCount = new Map<string, number>();
  synth.values.forEach((v, id) => synthCount.set(v, synth.counts[id]));
  const ids: number[] = [];
  real.values.forEach((v, id) => {
    if (v !== "") ids.push(id);
  });
  ids.sort((a, b) => real.counts[b] - real.counts[a] || (real.values[a] < real.values[b] ? -1 : real.values[a] > real.values[b] ? 1 : 0));
  // When pooling would leave a single value in the "other" bar, show that value instead.
  const shown = ids.length <= top + 1 ? ids : ids.slice(0, top);
  const out: Distribution = { type: "categories", labels: [], real: [], synthetic: [], rows, omitted: { real: 0, synthetic: 0 }, extra: {} };
  const taken = new Set(shown.map((id) => real.values[id]));
  let realShown = 0;
  let synthShown = 0;
  for (const id of shown) {
    const v = real.values[id];
    out.labels.push(v);
    out.real.push(real.counts[id]);
    out.synthetic.push(synthCount.get(v) ?? 0);
    realShown += real.counts[id];
    synthShown += synthCount.get(v) ?? 0;
  }
  const blankReal = real.missing;
  const blankSynth = synth.missing;
  const otherReal = rows.real - realShown - blankReal;
  const otherSynth = rows.synthetic - synthShown - blankSynth;
  if (otherReal > 0 || otherSynth > 0) {
    const distinct = new Set<string>();
    real.values.forEach((v) => v !== "" && distinct.add(v));
    synth.values.forEach((v) => v !== "" && distinct.add(v));
    const others = distinct.size - shown.length;
    out.labels.push(uniqueLabel(`(${others} other value${others === 1 ? "" : "s"})`, taken));
    out.real.push(otherReal);
    out.synthetic.push(otherSynth);
    out.extra.pooled = true;
  }
  if (blankReal > 0 || blankSynth > 0) {
    out.labels.push(uniqueLabel("(blank)", taken));
    out.real.push(blankReal);
    out.synthetic.push(blankSynth);
    out.extra.blank = true;
  }
  return out;
}

/** The distribution of column `f` in both tables (`type: "none"` for identifiers). */
export function distributionOf(codec: ColumnCodec, details: EvaluationDetails): Distribution {
  const { real, synthetic } = details.scans;
  const rs = real.scans[real.columns.indexOf(codec.name)];
  const ss = synthetic.scans[synthetic.columns.indexOf(codec.name)];
  const rows = { real: real.n, synthetic: synthetic.n };
  if (codec.kind === "numerical") {
    return histogram(rs, ss, rows, (v) => (isNumeric(v) ? Number(v) : undefined), { integer: codec.stats.integer === true, datetime: false });
  }
  if (codec.kind === "datetime" && codec.datetime) {
    const fmt = codec.datetime;
    return histogram(rs, ss, rows, (v) => fmt.parse(v)?.seconds, { integer: false, datetime: true });
  }
  if (codec.kind === "categorical" && codec.fromDomain) {
    // discretized codes (`../metadata/domain`), often binned numbers: bars in code order
    return histogram(rs, ss, rows, (v) => (/^\d+$/.test(v) ? Number(v) : undefined), { integer: true, datetime: false });
  }
  if (codec.kind === "categorical") return categories(rs, ss, rows);
  return { type: "none", labels: [], real: [], synthetic: [], rows, omitted: { real: 0, synthetic: 0 }, extra: {} };
}

/** The pair matrices over the modelled columns: 2-way TVD and each table's Cramér's V. */
export function pairMatrix(details: EvaluationDetails): PairMatrix {
  const { modelled, cards, codecs } = details;
  const columns = modelled.map((f) => codecs[f].name);
  const pairs: [number, number][] = [];
  for (let a = 0; a < modelled.length; a++) for (let b = a + 1; b < modelled.length; b++) pairs.push([a, b]);
  let scratch: Float64Array | undefined;
  const v = (codes: CodeArray[], a: number, b: number): number => {
    const [i, j] = [modelled[a], modelled[b]];
    scratch = jointCounts(codes[i], cards[i], codes[j], cards[j], scratch);
    return cramersV(scratch, cards[i], cards[j]);
  };
  return {
    columns,
    pairs,
    tvd: Array.from(details.pairTvd),
    vReal: pairs.map(([a, b]) => v(details.codes.real, a, b)),
    vSynthetic: pairs.map(([a, b]) => v(details.codes.synthetic, a, b)),
  };
}

/**
 * HOLDOUT against REAL, the reference a perfect generator reaches: equal, figure for figure, to
 * `evaluate(REAL, HOLDOUT)`'s TVD report under the same code books; undefined without a holdout.
 */
export function holdoutReference(details: EvaluationDetails): EvaluationReport | undefined {
  const holdout = details.codes.holdout;
  if (!holdout) return undefined;
  const { modelled, codecs, cards } = details;
  return compareCodes(
    modelled.map((f) => codecs[f].name),
    modelled.map((f) => cards[f]),
    modelled.map((f) => details.codes.real[f]),
    modelled.map((f) => holdout[f]),
    modelled.map((f) => codecs[f].K),
  );
}

/** Rows per Hamming distance 0..F of the DCR sample, to TRAIN and HOLDOUT; undefined without. */
export function dcrHistogram(details: EvaluationDetails): DcrHistogram | undefined {
  if (!details.dcr) return undefined;
  const F = details.codecs.length;
  const count = (d: Int32Array): number[] => {
    const out = new Array<number>(F + 1).fill(0);
    for (const x of d) out[Math.min(F, x)]++;
    return out;
  };
  return { train: count(details.dcr.train), holdout: count(details.dcr.holdout), sampled: details.dcr.train.length };
}
