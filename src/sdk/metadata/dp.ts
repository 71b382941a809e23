/**
 * Differential privacy for the marginals the SDK sends (docs/decisions.md "Privacy noise on the
 * client"): the measurement and selection half of MST (McKenna, Miklau & Sheldon, "Winning the
 * NIST Contest", J. Privacy and Confidentiality 11(3), 2021; github.com/ryan112358/private-pgm
 * `mechanisms/mst.py`); the server's generator replaces its Private-PGM estimation step.
 *
 * Privacy model: neighbours differ by adding or removing one row. The domain (names, K per column)
 * is public, so privacy needs domain mode (`./domain`): a raw table's code book comes from the
 * rows. n is NOT released: `column_stats[f].count` is estimated from the noisy 1-way marginals.
 *
 * Accounting in zCDP (Bun & Steinke, TCC 2016), `./dp-accounting`: (epsilon, delta) -> rho by
 * Canonne, Kamath & Steinke (NeurIPS 2020, Corollary 13); Gaussian noise N(0, sigma^2) on counts
 * (L2 sensitivity 1) is 1/(2 sigma^2)-zCDP; the exponential mechanism with eps_em and score
 * sensitivity 1 is eps_em^2/8-zCDP (Cesar & Rogers, ALT 2021); zCDP composes by addition.
 * Budget ({@link planPrivacy}), F >= 3 columns: rho/3 selects F-1 pairs (eps_em = sqrt(8 (rho/3) /
 * (F-1)) per Kruskal round), 2rho/3 measures m = F + (F-1) marginals with one sigma = sqrt(m /
 * (2 * 2rho/3)). F = 2: no selection, all of rho on m = 3 measurements.
 *
 * Steps ({@link privateMetadata}), as in MST:
 * 1. measure every 1-way count vector with N(0, sigma^2) noise;
 * 2. merge codes with a noisy count below 3 sigma into one group (MST `compress_domain`); the
 *    1-way estimates are the clamped, normalised noisy counts over the compressed domains;
 * 3. select a spanning tree by the exponential mechanism in Kruskal order, score of a pair
 *    || x_ij - n_hat p_i (x) p_j ||_1 (true compressed joint counts against the noisy independent
 *    product); a pair over the cell budget is no candidate (then a forest, spending less);
 * 4. measure each selected pair with N(0, sigma^2) noise.
 * Post-processing (free under DP): clamp, normalise, rake each pair to the 1-way estimates (after
 * mixing in 1e-9 of the independent product so no row or column is empty); send the unmeasured
 * pairs as the tree model implies them ({@link impliedPairs}), strongest first within the budget,
 * so the generator does not invent relationships; expand groups back evenly over their codes.
 *
 * Randomness: `crypto.randomFillSync` unless `seed` is given (tests only: the seed removes the
 * noise). Box–Muller in doubles; like MST, no defence against floating-point attacks (Mironov,
 * CCS 2012).
 */
import type { Metadata, PairMarginal } from "../../contract";
import { counts1, jointCounts, type CodeArray, type Pair, type PairSelection } from "./marginals";
import type { EncodedTable } from "./encoded";
import { DEFAULT_DELTA, planPrivacy, type PrivacyPlan } from "./dp-accounting";
import { uniformSource, gaussianMechanism, exponentialMechanism } from "./dp-mechanisms";
import { impliedPairs, normalise, rake } from "./dp-postprocess";

/** `privacy` option of metadata extraction and `Synthesizer.fit`. */
export interface PrivacyOptions {
  /** Privacy-loss parameter epsilon, > 0. */
  epsilon: number;
  /** delta in (0, 1). Default {@link DEFAULT_DELTA} (1e-9, the default of MST's and AIM's scripts). */
  delta?: number;
  /** Seeds the noise for reproducible runs (tests, benchmarks); never for a real release. */
  seed?: number;
}


/** Codes with a noisy 1-way count below this many sigma are merged (MST `compress_domain`). */
export const COMPRESS_SIGMAS = 3;


/** What {@link privateMetadata} did: the plan plus the data-dependent (noisy) choices. */
export interface PrivacyReport extends PrivacyPlan {
  /** Row count estimated from the noisy 1-way marginals (n itself is not released). */
  nEstimate: number;
  /** Codes per column after compression (codes below 3 sigma merged), by column name. */
  compressed: Record<string, number>;
  /** Pairs measured (feature indices, Kruskal order). */
  pairs: Pair[];
  /** Cells K_i*K_j of the measured pairs. */
  measuredCells: number;
  /** Pairs sent as the tree model implies them (not measured, no budget spent). */
  impliedPairs: number;
}


/** One column's compressed domain: full code -> compressed code, and the size of each group. */
interface Compression {
  map: Int32Array;
  groupSize: number[];
  K: number;
}

function compress(noisy: Float64Array, threshold: number): Compression {
  const map = new Int32Array(noisy.length);
  const groupSize: number[] = [];
  let unsupported = 0;
  for (let v = 0; v < noisy.length; v++) {
    if (noisy[v] >= threshold) {
      map[v] = groupSize.length;
      groupSize.push(1);
    } else unsupported++;
  }
  if (unsupported > 0) {
    const g = groupSize.length;
    for (let v = 0; v < noisy.length; v++) if (!(noisy[v] >= threshold)) map[v] = g;
    groupSize.push(unsupported);
  }
  return { map, groupSize, K: groupSize.length };
}

/**
 * Private counterpart of `buildMetadata` (file header) for a table encoded in domain mode;
 * `pairBudget`: max total cells K_i*K_j of the pairs sent.
 * @returns `metadata` (`column_stats[f].privacy = {epsilon, delta, rho, sigma}`), the selection
 *   (`tree` = the measured pairs) and a {@link PrivacyReport}.
 * @throws RangeError for a table not in domain mode or invalid epsilon/delta.
 */
export function privateMetadata(
  enc: EncodedTable,
  privacy: PrivacyOptions,
  pairBudget = 200_000,
): { metadata: Metadata; selection: PairSelection; privacy: PrivacyReport } {
  if (!enc.codecs.every((c) => c.fromDomain)) {
    throw new RangeError("privacy needs a domain: the code book of a raw table is computed from the rows.");
  }
  if (!(pairBudget >= 0)) throw new RangeError("pairBudget must be >= 0");
  const { codecs, codes, columns } = enc;
  const F = codecs.length;
  const cards = codecs.map((c) => c.K);
  const plan = planPrivacy(F, privacy.epsilon, privacy.delta ?? DEFAULT_DELTA);
  const { sigma } = plan;
  const src = uniformSource(privacy.seed);

  // 1. noisy 1-way counts; n estimated by inverse-variance weighting of their sums (Var = K sigma^2)
  const noisy1 = codes.map((a, f) => gaussianMechanism(counts1(a, cards[f]), sigma, src));
  let num = 0;
  let den = 0;
  noisy1.forEach((y, f) => {
    num += y.reduce((s, v) => s + v, 0) / cards[f];
    den += 1 / cards[f];
  });
  const nEstimate = Math.max(1, num / den);

  // 2. compression and the 1-way estimates over compressed domains
  const comp = noisy1.map((y) => compress(y, COMPRESS_SIGMAS * sigma));
  const p1c = noisy1.map((y, f) => {
    const v = new Float64Array(comp[f].K);
    for (let k = 0; k < y.length; k++) v[comp[f].map[k]] += y[k];
    return normalise(v);
  });
  const cc: CodeArray[] = codes.map((a, f) => {
    const out = new Int32Array(a.length);
    const m = comp[f].map;
    for (let r = 0; r < a.length; r++) out[r] = m[a[r]];
    return out;
  });

  // 3. spanning tree by the exponential mechanism in Kruskal order
  const pairs: Pair[] = [];
  const parent = Array.from({ length: F }, (_, k) => k);
  const find = (k: number): number => {
    while (parent[k] !== k) k = parent[k] = parent[parent[k]];
    return k;
  };
  let cells = 0;
  const fits = ([i, j]: Pair): boolean => cells + cards[i] * cards[j] <= pairBudget;
  if (plan.selectionRounds === 0) {
    if (fits([0, 1])) pairs.push([0, 1]);
  } else {
    const score = new Map<string, number>();
    for (let i = 0; i < F; i++) {
      for (let j = i + 1; j < F; j++) {
        const x = jointCounts(cc[i], comp[i].K, cc[j], comp[j].K);
        const Kb = comp[j].K;
        let l1 = 0;
        for (let a = 0; a < comp[i].K; a++) for (let b = 0; b < Kb; b++) l1 += Math.abs(x[a * Kb + b] - nEstimate * p1c[i][a] * p1c[j][b]);
        score.set(`${i},${j}`, l1);
      }
    }
    for (let round = 0; round < plan.selectionRounds; round++) {
      const cand: Pair[] = [];
      for (let i = 0; i < F; i++) for (let j = i + 1; j < F; j++) if (find(i) !== find(j) && fits([i, j])) cand.push([i, j]);
      if (cand.length === 0) break;
      const k = exponentialMechanism(
        cand.map(([i, j]) => score.get(`${i},${j}`)!),
        plan.epsilonSelect,
        1,
        src,
      );
      const [i, j] = cand[k];
      parent[find(i)] = find(j);
      pairs.push([i, j]);
      cells += cards[i] * cards[j];
    }
  }
  cells = pairs.reduce((s, [i, j]) => s + cards[i] * cards[j], 0);
  const measuredCells = cells;

  // 4. noisy pair counts; post-processing: clamp, normalise, rake to the 1-way estimates
  const measured = new Map<string, Float64Array>();
  for (const [i, j] of pairs) {
    const Ka = comp[i].K;
    const Kb = comp[j].K;
    const P = normalise(gaussianMechanism(jointCounts(cc[i], Ka, cc[j], Kb), sigma, src));
    for (let a = 0; a < Ka; a++) for (let b = 0; b < Kb; b++) P[a * Kb + b] = (1 - 1e-9) * P[a * Kb + b] + 1e-9 * p1c[i][a] * p1c[j][b];
    rake(P, Ka, Kb, p1c[i], p1c[j]);
    measured.set(`${i},${j}`, normalise(P));
  }

  // 5. the other pairs as the tree model implies them (no budget), strongest first
  const implied = impliedPairs(F, comp.map((c) => c.K), p1c, measured);
  implied.sort((x, y) => y.mi - x.mi || x.i - y.i || x.j - y.j);
  const sent = new Map(measured);
  for (const e of implied) {
    const c = cards[e.i] * cards[e.j];
    if (cells + c > pairBudget) continue;
    cells += c;
    sent.set(`${e.i},${e.j}`, e.P);
  }

  // expand compressed codes to the full domain, a group's mass spread evenly
  const sorted = [...sent.keys()].map((k): Pair => k.split(",").map(Number) as Pair).sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  const marginals = sorted.map(([i, j]): PairMarginal => {
    const Kb = comp[j].K;
    const P = sent.get(`${i},${j}`)!;
    const Kf = cards[i];
    const Kg = cards[j];
    const mi = comp[i].map;
    const mj = comp[j].map;
    const probs = new Array<number>(Kf * Kg);
    for (let a = 0; a < Kf; a++) {
      const ca = mi[a];
      const ga = comp[i].groupSize[ca];
      for (let b = 0; b < Kg; b++) {
        const cb = mj[b];
        probs[a * Kg + b] = P[ca * Kb + cb] / (ga * comp[j].groupSize[cb]);
      }
    }
    return { features: [columns[i], columns[j]], probs };
  });

  const stats = { epsilon: plan.epsilon, delta: plan.delta, rho: plan.rho, sigma };
  const metadata: Metadata = {
    features: [...columns],
    cardinalities: {},
    empirical_probs: {},
    column_stats: {},
    value_mappings: {},
    marginals,
  };
  const compressed: Record<string, number> = {};
  codecs.forEach((codec, f) => {
    const p = new Array<number>(codec.K);
    for (let v = 0; v < codec.K; v++) {
      const c = comp[f].map[v];
      p[v] = p1c[f][c] / comp[f].groupSize[c];
    }
    metadata.cardinalities[codec.name] = codec.K;
    metadata.empirical_probs[codec.name] = p;
    metadata.column_stats![codec.name] = { type: "categorical", count: Math.round(nEstimate), missing: 0, privacy: { ...stats } };
    metadata.value_mappings![codec.name] = codec.mapping;
    compressed[codec.name] = comp[f].K;
  });
  return {
    metadata,
    selection: { pairs: sorted, tree: pairs.map((p): Pair => [p[0], p[1]]), cells },
    privacy: { ...plan, nEstimate, compressed, pairs, impliedPairs: sorted.length - pairs.length, measuredCells },
  };
}
