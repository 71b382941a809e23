/**
 * Weights of a group's candidates. Deterministic-mixture weights (Owen & Zhou, "Safe and effective
 * importance sampling", JASA 95, 2000; Veach & Guibas 1995): every candidate has
 * w = pi~(z) / sum_t (N_t / N) q_t(z) over all rounds ({@link addBlock}); the prior round stays in
 * the mixture as a defensive component that bounds the weights. ESS is Kish's, (sum w)^2 / sum w^2;
 * a round's efficiency is its block's ESS / N. Calibrated groups are raked ({@link rakeGroup}).
 */
import { rake } from "../sampling/calibrated-draw";
import type { ConditionalCall } from "./options";
import type { Block, Group } from "./population";
import type { Proposal } from "./proposal";

/** Weights relative to the largest, exp(loglik - logMix - mx), their sum s (0: all zero) and s2. */
function weightSums(blocks: readonly Block[], w?: Float64Array): { mx: number; s: number; s2: number } {
  let mx = -Infinity;
  for (const b of blocks) for (let i = 0; i < b.n; i++) mx = Math.max(mx, b.loglik[i] - b.logMix[i]);
  let s = 0;
  let s2 = 0;
  if (mx === -Infinity) return { mx, s, s2 };
  let at = 0;
  for (const b of blocks) {
    for (let i = 0; i < b.n; i++) {
      const v = Math.exp(b.loglik[i] - b.logMix[i] - mx);
      if (w) w[at++] = v;
      s += v;
      s2 += v * v;
    }
  }
  return { mx, s, s2 };
}

/** Normalised weights of a group's candidates (block order), their Kish ESS and log mean weight. */
export function groupWeights(g: Group): { w: Float64Array; ess: number; logProb: number } {
  const w = new Float64Array(g.blocks.reduce((n, b) => n + b.n, 0));
  const { mx, s, s2 } = weightSums(g.blocks, w);
  if (!(s > 0)) return { w, ess: 0, logProb: -Infinity };
  for (let i = 0; i < w.length; i++) w[i] /= s;
  // logMix holds log(N q_mix / N(u)), so exp(loglik - logMix) averages to the condition's prob.
  return { w, ess: (s * s) / s2, logProb: mx + Math.log(s) };
}

/** Kish ESS of one block's current weights, divided by its size (the round's efficiency). */
export function blockEfficiency(b: Block): number {
  const { s, s2 } = weightSums([b]);
  return s > 0 ? (s * s) / s2 / b.n : 0;
}

/** Adds the just-evaluated block (drawn from `q`) to the group's deterministic mixture. */
export function addBlock(g: Group, block: Block, q: Proposal): void {
  for (const b of g.blocks) q.accumulate(b.x, b.n, block.n, b.mix);
  g.blocks.push(block);
  g.proposals.push(q);
  g.sizes.push(block.n);
  g.total += block.n;
  block.mix.fill(0);
  for (let t = 0; t < g.proposals.length; t++) g.proposals[t].accumulate(block.x, block.n, g.sizes[t], block.mix);
  for (const b of g.blocks) for (let i = 0; i < b.n; i++) b.logMix[i] = Math.log(b.mix[i]);
}

/**
 * Bounded raking of a group's candidates from their importance weights `w` to its targets (the
 * calibrated draw's `rake`), bound at an inclusion probability of 1; yields between sweeps.
 */
export async function rakeGroup(ctx: ConditionalCall, g: Group, w: Float64Array): Promise<Float64Array> {
  const { F } = ctx;
  const M = w.length;
  const columns = ctx.cards.map(() => new Int32Array(M));
  let idx = 0;
  for (const b of g.blocks) {
    for (let i = 0; i < b.n; i++, idx++) for (let f = 0; f < F; f++) columns[f][idx] = b.codes[i * F + f];
  }
  const { yieldFn, shouldAbort } = ctx.opts;
  return rake(ctx.model, columns, g.calibration!.targets, { yieldFn, shouldAbort, initial: w, bound: Math.max(M / g.rows.length, 1 + 1e-9) });
}
