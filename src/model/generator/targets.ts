/**
 * The training targets: the 1-way and 2-way marginals of the statistical description (the
 * metadata a client sends; the server never sees rows), laid out for the loss in `loss.ts`.
 * Feature f owns columns `[offset_f, offset_f + K_f)` of a D-wide row, D = sum_f K_f.
 *
 * 2-way targets are grouped into *pair blocks* so the model's 2-way marginals come from a few
 * matrix products: for the lower feature f of given pairs (f, g), g > f, a block covers one column
 * span `[c0, c1)` holding the partners g, and the model side computes `P_f^T P[:, c0:c1] / B`
 * (K_f x (c1 - c0)). The target is zero on columns of partners not given, so they add nothing to
 * the loss; a run is split where skipped columns would cost more than used ones.
 *
 * Weights: the loss is a weighted mean of one KL per given marginal; a pair with c cells weighs
 * {@link marginalWeight}(c) = 1 / ln(max(c, 2)), the inverse of its largest entropy, and a 1-way
 * marginal over K codes marginalWeight(K^2) (it is the row and column sums of its pair tables).
 * Unweighted, a 100 x 100 pair (also the noisiest) dominated the gradient (docs/compute.md). The
 * weights are folded into the loss-side targets ({@link lossTargets}).
 */
import type { Metadata } from "../../contract";

/** Thrown when metadata cannot be turned into targets (mismatched lengths, unknown features). */
export class MetadataError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MetadataError";
  }
}

/** The code layout of a model: feature names, K_f, column offsets, total width D. */
export interface Layout {
  features: string[];
  /** K_f per feature, in feature order. */
  cardinalities: number[];
  /** offset_f: first column of feature f; offsets[F] = D. */
  offsets: number[];
  /** D = sum_f K_f. */
  width: number;
}

/** A group of 2-way targets sharing the row feature f (see the module comment). */
export interface PairBlock {
  f: number;
  /** Column span [c0, c1) of the concatenated code layout (inside features > f). */
  c0: number;
  c1: number;
  /** Target, K_f x (c1 - c0) row-major: P(f = i, code c0 + j) for given pairs, 0 elsewhere. */
  target: Float32Array;
  pairs: [number, number][];
  /** Loss weight of each column (c1 - c0): pair (f, g)'s weight on g's columns, 0 elsewhere. */
  weight: Float32Array;
}

/** Everything the loss needs, as plain arrays (tensors are made by `loss.ts`). */
export interface MarginalTargets {
  layout: Layout;
  /** Concatenated 1-way targets, length D; each feature's slice sums to 1. */
  oneWay: Float32Array;
  /** Loss weight of each 1-way column (D): {@link marginalWeight}(K_f^2) on feature f's columns. */
  oneWayWeight: Float32Array;
  blocks: PairBlock[];
  /** The distinct given pairs [f, g] with f < g. */
  pairs: [number, number][];
  /** Sum of the weights of all marginals (1-way and 2-way): the loss is a weighted mean. */
  count: number;
  /** sum over all marginals of weight * sum_i q_i ln q_i (nats; 0 ln 0 = 0): the entropy part. */
  negEntropy: number;
}

/** Loss weight of a marginal with `cells` cells: 1 / ln(max(cells, 2)) (see the module comment). */
export function marginalWeight(cells: number): number {
  return 1 / Math.log(Math.max(cells, 2));
}

/** The targets as the loss consumes them: every entry times its weight. */
export function lossTargets(t: MarginalTargets): { oneWay: Float32Array; blocks: { f: number; c0: number; c1: number; target: Float32Array }[] } {
  const oneWay = new Float32Array(t.oneWay.length);
  for (let i = 0; i < oneWay.length; i++) oneWay[i] = t.oneWay[i] * t.oneWayWeight[i];
  const blocks = t.blocks.map((b) => {
    const w = b.c1 - b.c0;
    const target = new Float32Array(b.target.length);
    for (let i = 0; i < target.length; i++) target[i] = b.target[i] * b.weight[i % w];
    return { f: b.f, c0: b.c0, c1: b.c1, target };
  });
  return { oneWay, blocks };
}

/** Builds the {@link Layout} of `meta`. @throws MetadataError for a missing or bad K_f. */
export function layoutOf(meta: Pick<Metadata, "features" | "cardinalities">): Layout {
  const cardinalities = meta.features.map((f) => {
    const k = meta.cardinalities[f];
    if (!Number.isInteger(k) || k < 1) throw new MetadataError(`cardinality of feature "${f}" must be a positive integer`);
    return k;
  });
  const offsets = [0];
  for (const k of cardinalities) offsets.push(offsets[offsets.length - 1] + k);
  return { features: [...meta.features], cardinalities, offsets, width: offsets[offsets.length - 1] };
}

/** A probability vector from noisy input: bad or negative entries 0, renormalised (or uniform). */
export function sanitizeProbs(p: readonly number[]): Float64Array {
  const out = new Float64Array(p.length);
  let s = 0;
  for (let i = 0; i < p.length; i++) {
    const v = p[i];
    out[i] = Number.isFinite(v) && v > 0 ? v : 0;
    s += out[i];
  }
  if (s > 0) for (let i = 0; i < out.length; i++) out[i] /= s;
  else out.fill(1 / p.length);
  return out;
}

function negEntropyOf(q: ArrayLike<number>): number {
  let h = 0;
  for (let i = 0; i < q.length; i++) if (q[i] > 0) h += q[i] * Math.log(q[i]);
  return h;
}

/**
 * The training targets of `empirical_probs` (1-way) and `marginals` (2-way, optional): a pair
 * [g, f] with g after f is transposed, a pair given twice averaged, a self-pair rejected; values
 * pass {@link sanitizeProbs}. @throws MetadataError for unknown features or bad lengths.
 */
export function buildTargets(meta: Metadata): MarginalTargets {
  const layout = layoutOf(meta);
  const { features, cardinalities: K, offsets } = layout;
  const F = features.length;
  const index = new Map(features.map((f, i) => [f, i]));
  if (index.size !== F) throw new MetadataError("feature names must be distinct");

  const oneWay = new Float32Array(layout.width);
  const oneWayWeight = new Float32Array(layout.width);
  let negEntropy = 0;
  let count = 0;
  for (let f = 0; f < F; f++) {
    const p = meta.empirical_probs[features[f]];
    if (!Array.isArray(p) || p.length !== K[f]) {
      throw new MetadataError(`empirical_probs of "${features[f]}" must have ${K[f]} entries`);
    }
    const q = sanitizeProbs(p);
    oneWay.set(q, offsets[f]);
    const w = marginalWeight(K[f] * K[f]);
    oneWayWeight.fill(w, offsets[f], offsets[f + 1]);
    negEntropy += w * negEntropyOf(q);
    count += w;
  }

  // Distinct pairs, oriented f < g, duplicates averaged.
  const sums = new Map<number, { f: number; g: number; q: Float64Array; n: number }>();
  for (const [i, m] of (meta.marginals ?? []).entries()) {
    const [a, b] = m.features;
    const fa = index.get(a);
    const fb = index.get(b);
    if (fa === undefined || fb === undefined) throw new MetadataError(`marginals[${i}] names an unknown feature`);
    if (fa === fb) throw new MetadataError(`marginals[${i}] pairs feature "${a}" with itself`);
    if (m.probs.length !== K[fa] * K[fb]) {
      throw new MetadataError(`marginals[${i}].probs must have ${K[fa]} x ${K[fb]} = ${K[fa] * K[fb]} entries`);
    }
    let q = sanitizeProbs(m.probs);
    let f = fa;
    let g = fb;
    if (fa > fb) {
      f = fb;
      g = fa;
      const t = new Float64Array(q.length); // transpose K_a x K_b -> K_b x K_a
      for (let r = 0; r < K[fa]; r++) for (let c = 0; c < K[fb]; c++) t[c * K[fa] + r] = q[r * K[fb] + c];
      q = t;
    }
    const key = f * F + g;
    const cur = sums.get(key);
    if (cur === undefined) sums.set(key, { f, g, q, n: 1 });
    else {
      for (let j = 0; j < q.length; j++) cur.q[j] += q[j];
      cur.n += 1;
    }
  }
  const pairList = [...sums.values()].sort((x, y) => x.f - y.f || x.g - y.g);
  for (const p of pairList) {
    if (p.n > 1) for (let j = 0; j < p.q.length; j++) p.q[j] /= p.n;
    const w = marginalWeight(p.q.length);
    negEntropy += w * negEntropyOf(p.q);
    count += w;
  }

  // Group the partners of each row feature into contiguous column spans.
  const blocks: PairBlock[] = [];
  for (let f = 0; f < F; f++) {
    const mine = pairList.filter((p) => p.f === f);
    let run: typeof mine = [];
    const flush = (): void => {
      if (run.length === 0) return;
      const c0 = offsets[run[0].g];
      const c1 = offsets[run[run.length - 1].g + 1];
      const w = c1 - c0;
      const target = new Float32Array(K[f] * w);
      const weight = new Float32Array(w);
      for (const p of run) {
        const kg = K[p.g];
        const col = offsets[p.g] - c0;
        for (let r = 0; r < K[f]; r++) for (let c = 0; c < kg; c++) target[r * w + col + c] = p.q[r * kg + c];
        weight.fill(marginalWeight(K[f] * kg), col, col + kg);
      }
      blocks.push({ f, c0, c1, target, pairs: run.map((p) => [p.f, p.g]), weight });
      run = [];
    };
    for (const p of mine) {
      if (run.length > 0) {
        const end = offsets[run[run.length - 1].g + 1];
        const gap = offsets[p.g] - end; // columns that would be computed for nothing
        if (gap > K[p.g]) flush();
      }
      run.push(p);
    }
    flush();
  }

  return {
    layout,
    oneWay,
    oneWayWeight,
    blocks,
    pairs: pairList.map((p) => [p.f, p.g]),
    count,
    negEntropy,
  };
}
