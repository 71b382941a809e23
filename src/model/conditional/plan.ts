/**
 * Planning a group's rounds ({@link plan}): after each round the weights decide whether the group
 * is done and, if not, the next round's proposal (`subspace.ts`) and size.
 *
 * Round sizes: a pilot of {@link pilotSize} prior candidates; while a round's efficiency still
 * grows by {@link CONVERGED_RATIO} or more, the next is sized for {@link ADAPTING_SHARE} of the
 * missing ESS and at most {@link GROWTH} times the last; then for all of it: (target - ESS) *
 * {@link SIZE_MARGIN} / efficiency. A group stops at its ESS target or when its budget is spent
 * (its rows then come from what it has, and the report says the target was missed).
 *
 * ESS target: max(minEss, ceil(essPerRow * rows)). ESS >= rows makes the output as good as
 * independent draws: a free column's frequency error is about p(1 - p) / ESS plus a resampling
 * term below the multinomial's. Nothing random left (every feature fixed to one code) needs ESS 1.
 */
import { ConditionError } from "./condition";
import type { ConditionalCall } from "./options";
import type { Block, Group } from "./population";
import { Proposal } from "./proposal";
import { systematicCounts } from "./resample";
import { fitProposal } from "./subspace";
import { blockEfficiency, groupWeights } from "./weights";

/** Largest pilot (round 0, from the prior). */
const MAX_PILOT = 4096;
/** Smallest pilot. */
export const MIN_PILOT = 64;
/** While adapting, a round is at most this many times the previous one. */
const GROWTH = 4;
/** Adaptation has converged once a round's efficiency grows by less than this factor. */
const CONVERGED_RATIO = 1.1;
/** While adapting, a round is sized for at most this share of the missing ESS. */
const ADAPTING_SHARE = 0.6;
/** Rounds sized to reach the target ask for this much more ESS than missing. */
const SIZE_MARGIN = 1.05;
/** Weighted points the proposal fit uses (a systematic resample when there are more). */
const FIT_POINTS = 4096;

/** The pilot size for an ESS target: clamp(2 * target, MIN_PILOT, MAX_PILOT). */
export function pilotSize(target: number): number {
  return Math.min(MAX_PILOT, Math.max(MIN_PILOT, 2 * target));
}

/** The fit's sample: all positive-weight candidates, or a systematic resample of FIT_POINTS. */
function fitSample(g: Group, w: Float64Array, ess: number, E: number): { X: Float32Array; v: Float64Array; n: number; nEff: number } {
  let positive = 0;
  for (let i = 0; i < w.length; i++) if (w[i] > 0) positive++;
  const at = (i: number): [Block, number] => {
    let b = 0;
    while (i >= g.blocks[b].n) i -= g.blocks[b++].n;
    return [g.blocks[b], i];
  };
  if (positive <= FIT_POINTS) {
    const X = new Float32Array(positive * E);
    const v = new Float64Array(positive);
    let k = 0;
    let idx = 0;
    for (const b of g.blocks) {
      for (let i = 0; i < b.n; i++, idx++) {
        if (!(w[idx] > 0)) continue;
        X.set(b.x.subarray(i * E, (i + 1) * E), k * E);
        v[k++] = w[idx];
      }
    }
    return { X, v, n: positive, nEff: ess };
  }
  const counts = systematicCounts(w, FIT_POINTS, g.rng.uniform());
  let distinct = 0;
  for (let i = 0; i < counts.length; i++) if (counts[i] > 0) distinct++;
  const X = new Float32Array(distinct * E);
  const v = new Float64Array(distinct);
  let k = 0;
  let s2 = 0;
  for (let i = 0; i < counts.length; i++) {
    if (counts[i] === 0) continue;
    const [b, j] = at(i);
    X.set(b.x.subarray(j * E, (j + 1) * E), k * E);
    v[k++] = counts[i] / FIT_POINTS;
    s2 += (counts[i] / FIT_POINTS) ** 2;
  }
  return { X, v, n: distinct, nEff: Math.min(ess, 1 / s2) };
}

/**
 * Decides a group's next round after its latest one (or marks it done).
 * @throws ConditionError when no weight is positive after `ctx.zeroSearch` candidates.
 */
export function plan(g: Group, ctx: ConditionalCall): void {
  const { w, ess, logProb } = groupWeights(g);
  g.ess = ess;
  g.logProb = logProb;
  const last = g.sizes.length - 1;
  // Once a weight is positive the group keeps its blocks, so ESS stays > 0 from then on.
  if (!(ess > 0)) {
    if (g.total >= ctx.zeroSearch) {
      const zeroAlways = g.fixed.filter((_, q) => g.zeroCounts[q] === g.total).map((c) => ctx.names[c.f]);
      const features = zeroAlways.length > 0 ? zeroAlways : g.fixed.map((c) => ctx.names[c.f]);
      const row = g.rows[0];
      throw new ConditionError(
        `${ctx.conditionLabel(row)} on ${features.join(", ")} has probability 0 under the model: ` +
          `its allowed codes underflowed at all ${g.total} latents tried`,
        ctx.paramFor(row, features),
        row,
        features,
      );
    }
    // Every weight so far is 0: only the prior rounds' counts stay in the mixture's denominator.
    g.blocks = [];
    g.next = { q: Proposal.prior(ctx.E), n: Math.min(GROWTH * g.sizes[last], ctx.zeroSearch - g.total) };
    return;
  }
  if (ess >= g.target || g.total >= g.budget) {
    g.next = null;
    return;
  }
  const eff = Math.max(blockEfficiency(g.blocks[g.blocks.length - 1]), 1e-4);
  if (last > 0 && eff < CONVERGED_RATIO * g.effPrev) g.converged = true;
  g.effPrev = eff;
  const { X, v, n, nEff } = fitSample(g, w, ess, ctx.E);
  const q = fitProposal(X, v, n, nEff, ctx.E, ctx.maxRank, ctx.maxComponents, g.rng);
  let size = Math.ceil(((g.target - ess) * SIZE_MARGIN) / eff);
  // Still adapting: ask for part of the missing ESS only, and size the rest once measured.
  if (!g.converged) size = Math.min(Math.ceil(size * ADAPTING_SHARE), GROWTH * g.sizes[last]);
  size = Math.max(size, Math.min(g.pilot, 256));
  size = Math.min(size, g.budget - g.total);
  g.next = size > 0 ? { q, n: size } : null;
}
