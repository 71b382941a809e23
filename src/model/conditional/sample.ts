/**
 * The driver: {@link sampleConditional} (one condition per row) and {@link sampleSeeded} (one
 * condition, many rows). It groups the rows by condition, runs the groups' rounds in waves whose
 * budgets fit `maxCandidateBytes` (draw latents and uniforms, {@link evaluate}, add the block to
 * the group's mixture, plan the next round), then picks each group's rows from its candidates.
 *
 * Rows: every candidate's row is drawn when it is evaluated (fixed features restricted to A_f,
 * free ones by the kernel), from the forward pass that gives its weight. The group's rows are
 * picked by systematic resampling (`resample.ts`) by weight: a candidate picked c > 1 times gives
 * its row and c - 1 fresh rows from its latent, so no row is an exact copy made by resampling.
 * The rows are shuffled (Fisher–Yates) before they go to the group's row indices.
 *
 * Distinct conditions (imputation) are each a group with a target of `minEss` for one row; their
 * candidates are evaluated together. With few effective candidates the mean and covariance cannot
 * be resolved in E dimensions, so such a group is in effect sampling-importance-resampling from
 * the prior (Rubin 1987) with K adaptive to its ESS; the report's ESS says which rows are rough.
 *
 * Calibration (`calibrate: true`): the model's conditionals inherit its marginal error, so the
 * targets and structural zeros of `condition-calibration.ts` enter the importance weights (so the
 * ESS and the proposal see them) and the final raking. A calibrated group's rows are drawn
 * without repeats (Madow 1949) from an ESS of `CALIBRATED_ESS_PER_ROW` per row, with no fresh rows
 * from latents, whose weights would hold neither. Measurements: docs/compute.md.
 */
import { MAX_ROWS_PER_REQUEST } from "../../contract";
import { NATIVE_GENERATE_CHUNK } from "../compute/native-generator";
import { systematicSample } from "../sampling/calibrate";
import { drawRequest } from "../sampling/draws";
import { GENERATE_CHUNK } from "../sampling/sample-rows";
import { Rng } from "../sampling/xoshiro";
import type { GeneratorModel } from "../generator/model";
import { ConditionError, keyOf, parseCondition, type RowCondition } from "./condition";
import { evaluate, type Segment } from "./evaluate";
import {
  CALIBRATED_ESS_PER_ROW,
  checkOptions,
  DEFAULT_BUDGET_FACTOR,
  DEFAULT_MIN_ESS,
  MAX_CANDIDATE_BYTES,
  MAX_COMPONENTS,
  MAX_RANK,
  ZERO_SEARCH,
  type ConditionalOptions,
  type ConditionalResult,
  type ConditionGroupReport,
  type ConditionalCall,
} from "./options";
import { MIN_PILOT, pilotSize, plan } from "./plan";
import type { Block, Group } from "./population";
import { Proposal } from "./proposal";
import { countsOf, systematicCounts } from "./resample";
import { addBlock, groupWeights, rakeGroup } from "./weights";

/**
 * Draws one row per condition from the model's conditional (method: index.ts and its files).
 * @param conditions one {@link RowCondition} per output row; rows with equal conditions share one
 *   candidate population (repeat the same object to say so cheaply).
 * @returns n codes per feature (layout order), the seed, one report per condition group and each
 *   row's group.
 * @throws ConditionError (an InputError) for a malformed condition, 0 or too many rows, or a
 *   condition of probability 0: `row` is its first row, `features` those at fault. RangeError for
 *   bad options; Error when `shouldAbort` fires.
 */
export async function sampleConditional(model: GeneratorModel, conditions: readonly RowCondition[], opts: ConditionalOptions = {}): Promise<ConditionalResult> {
  checkOptions(opts);
  const { spec, layout } = model;
  const E = spec.embeddingDim;
  const F = layout.features.length;
  const cards = Array.from(layout.cardinalities);
  const names = layout.features;
  const bytesPer = 4 * E + 4 * F + 16;
  const cap = Math.max(MIN_PILOT, Math.floor((opts.maxCandidateBytes ?? MAX_CANDIDATE_BYTES) / bytesPer));
  const scale = Math.sqrt(1 + (opts.privacyNoise ?? 0) ** 2);
  const chunk = model.native ? NATIVE_GENERATE_CHUNK : GENERATE_CHUNK;
  const ctx: ConditionalCall = {
    model,
    E,
    F,
    D: layout.width,
    cards,
    offsets: Array.from(layout.offsets),
    names,
    T: opts.temperature ?? 1,
    topP: opts.topP ?? null,
    scale,
    chunk,
    opts,
    maxRank: Math.min(opts.maxRank ?? MAX_RANK, E),
    maxComponents: opts.maxComponents ?? MAX_COMPONENTS,
    zeroSearch: Math.min(Math.ceil(opts.zeroSearch ?? ZERO_SEARCH), cap),
    paramFor: opts.paramFor ?? (() => "body.embedding"),
    conditionLabel: opts.conditionLabel ?? ((row) => `the condition of row ${row}`),
    e: new Float64Array(Math.max(...cards)),
    scaled: scale !== 1 ? new Float32Array(chunk * E) : null,
    calibration: opts.calibration ?? null,
  };
  const n = conditions.length;
  if (!(n >= 1 && n <= MAX_ROWS_PER_REQUEST)) {
    throw new ConditionError(`between 1 and ${MAX_ROWS_PER_REQUEST} rows per request, got ${n}`, ctx.paramFor(0, []), 0, []);
  }
  const seed = opts.seed ?? Rng.randomSeed();
  const master = Rng.fromSeed(seed);
  const minEss = opts.minEss ?? DEFAULT_MIN_ESS;

  const budgetFactor = opts.budgetFactor ?? DEFAULT_BUDGET_FACTOR;

  const groups: Group[] = [];
  const byKey = new Map<string, Group>();
  const groupOfRow = new Int32Array(n);
  let prevCond: RowCondition | undefined;
  let prevGroup: Group | undefined;
  for (let r = 0; r < n; r++) {
    const cond = conditions[r];
    let g: Group | undefined;
    if (prevGroup !== undefined && cond === prevCond) g = prevGroup;
    else {
      const fixed = parseCondition(cond, r, ctx);
      const key = keyOf(fixed);
      g = byKey.get(key);
      if (g === undefined) {
        g = {
          index: groups.length,
          fixed,
          rows: [],
          rng: Rng.fromSeed((BigInt(master.nextUint32()) << 32n) | BigInt(master.nextUint32())),
          target: 0,
          pilot: 0,
          budget: 0,
          blocks: [],
          proposals: [],
          sizes: [],
          total: 0,
          ess: 0,
          logProb: -Infinity,
          effPrev: 0,
          converged: false,
          zeroCounts: new Int32Array(fixed.length),
          next: null,
          redraws: 0,
          calibration: ctx.calibration?.(fixed) ?? null,
        };
        byKey.set(key, g);
        groups.push(g);
      }
    }
    g.rows.push(r);
    groupOfRow[r] = g.index;
    prevCond = cond;
    prevGroup = g;
  }
  for (const g of groups) {
    const m = g.rows.length;
    const random = g.fixed.length < F || g.fixed.some((c) => c.codes.length > 1);
    const raking = g.calibration !== null;
    const essPerRow = opts.essPerRow ?? (raking ? CALIBRATED_ESS_PER_ROW : 1);
    g.target = random ? Math.max(minEss, Math.ceil(essPerRow * m)) : 1;
    if (g.fixed.length === 0) {
      // Nothing to condition on: the pilot is the sample (the plain draw), or, calibrated, the
      // pool raked to every marginal (the calibrated draw).
      g.target = Math.min(cap, Math.ceil((raking ? essPerRow : 1) * m));
      g.pilot = g.target;
      g.budget = g.target;
    } else {
      g.pilot = Math.min(cap, pilotSize(g.target));
      g.budget = Math.min(cap, g.pilot + Math.ceil(budgetFactor * g.target));
    }
  }

  const columns = cards.map(() => new Int32Array(n));

  // Waves of groups whose worst-case candidates fit in `cap`.
  for (let g0 = 0; g0 < groups.length; ) {
    let g1 = g0;
    let reserved = 0;
    while (g1 < groups.length && (g1 === g0 || reserved + groups[g1].budget <= cap)) {
      reserved += groups[g1].budget;
      g1++;
    }
    const wave = groups.slice(g0, g1);
    for (const g of wave) g.next = { q: Proposal.prior(E), n: g.pilot };
    for (;;) {
      const active = wave.filter((g) => g.next !== null);
      if (active.length === 0) break;
      // Latents and uniforms of every active group's next round, group by group from its stream.
      let total = 0;
      for (const g of active) total += (g.next as { n: number }).n;
      const x = new Float32Array(total * E);
      const u = new Float64Array(total * F);
      const segments: Segment[] = [];
      const drawn: { g: Group; q: Proposal; block: Block }[] = [];
      let at = 0;
      for (const g of active) {
        const { q, n: m } = g.next as { q: Proposal; n: number };
        // The block's latents are a view of the batch and live as long as the block. Prior normals
        // and uniforms from the round's own seed (draws.ts), then the proposal's subspace part.
        const roundSeed = (g.rng.nextUint32() >>> 11) * 2 ** 32 + g.rng.nextUint32();
        const xs = x.subarray(at * E, (at + m) * E);
        drawRequest({ seed: roundSeed, rows: m, latents: xs, drawLatents: true, sigma: 0, uniforms: u.subarray(at * F, (at + m) * F) });
        q.draw(g.rng, m, xs);
        const block: Block = { n: m, x: xs, codes: new Int32Array(m * F), loglik: new Float64Array(m), mix: new Float64Array(m), logMix: new Float64Array(m) };
        segments.push({ group: g, start: at, n: m, codes: block.codes, loglik: block.loglik });
        drawn.push({ g, q, block });
        at += m;
      }
      await evaluate(ctx, x, u, total, segments);
      for (const { g, q, block } of drawn) {
        addBlock(g, block, q);
        plan(g, ctx);
      }
    }
    // Rows: systematic resampling per group; extra copies get fresh rows from their latents.
    // Calibrated: rows drawn without repeats by inclusion probabilities instead.
    const picks: { g: Group; counts: Int32Array; w: Float64Array; raked: boolean }[] = [];
    let extra = 0;
    for (const g of wave) {
      const { w, ess, logProb } = groupWeights(g);
      g.ess = ess;
      g.logProb = logProb;
      const m = g.rows.length;
      let counts: Int32Array;
      const raked = g.calibration !== null && ess > 0;
      if (raked) {
        const wr = g.calibration!.targets.length > 0 ? await rakeGroup(ctx, g, w) : w;
        counts = countsOf(systematicSample(wr, m, g.rng.uniform()), w.length);
      } else {
        counts = systematicCounts(w, m, g.rng.uniform());
        for (let i = 0; i < counts.length; i++) if (counts[i] > 1) extra += counts[i] - 1;
      }
      picks.push({ g, counts, w, raked });
    }
    const xr = new Float32Array(extra * E);
    const ur = new Float64Array(extra * F);
    const redrawSegs: Segment[] = [];
    let at = 0;
    for (const { g, counts, raked } of picks) {
      const start = at;
      let idx = 0;
      for (const b of g.blocks) {
        for (let i = 0; i < b.n; i++, idx++) {
          if (raked) continue;
          for (let c = 1; c < counts[idx]; c++) xr.set(b.x.subarray(i * E, (i + 1) * E), (at++) * E);
        }
      }
      const m = at - start;
      g.redraws = m;
      g.rng.fillUniform(ur.subarray(start * F, at * F));
      if (m > 0) redrawSegs.push({ group: g, start, n: m, codes: new Int32Array(m * F), loglik: null });
    }
    if (extra > 0) await evaluate(ctx, xr, ur, extra, redrawSegs);
    let s = 0;
    for (const { g, counts, raked } of picks) {
      const m = g.rows.length;
      const rows = new Int32Array(m * F);
      let k = 0;
      let idx = 0;
      for (const b of g.blocks) {
        for (let i = 0; i < b.n; i++, idx++) {
          const o = i * F;
          // Calibrated: a candidate picked c times (fewer positive weights than rows): c copies.
          for (let c = 0; c < (raked ? counts[idx] : Math.min(counts[idx], 1)); c++) {
            const d = (k++) * F;
            for (let f = 0; f < F; f++) rows[d + f] = b.codes[o + f];
          }
        }
      }
      if (g.redraws > 0) rows.set(redrawSegs[s++].codes, k * F);
      // Fisher–Yates over the group's rows, then out to its row indices in order.
      const order = new Int32Array(m);
      for (let i = 0; i < m; i++) order[i] = i;
      g.rng.shuffle(order);
      for (let i = 0; i < m; i++) {
        const src = order[i] * F;
        const r = g.rows[i];
        for (let f = 0; f < F; f++) columns[f][r] = rows[src + f];
      }
      g.blocks = [];
    }
    g0 = g1;
  }

  const reports: ConditionGroupReport[] = groups.map((g) => ({
    firstRow: g.rows[0],
    numRows: g.rows.length,
    features: g.fixed.map((c) => names[c.f]),
    essTarget: g.target,
    ess: g.ess,
    targetMet: g.ess >= g.target,
    candidates: g.total,
    rounds: g.sizes.length,
    rank: g.proposals.length > 0 ? g.proposals[g.proposals.length - 1].r : 0,
    logProb: g.logProb,
    redraws: g.redraws,
  }));
  return { columns, seed, groups: reports, groupOfRow };
}

/**
 * `numRows` rows that all satisfy one condition (a seeded request's `where`): one group, one
 * candidate population. @throws ConditionError as {@link sampleConditional}.
 */
export function sampleSeeded(model: GeneratorModel, condition: RowCondition, numRows: number, opts: ConditionalOptions = {}): Promise<ConditionalResult> {
  if (!(Number.isInteger(numRows) && numRows >= 1 && numRows <= MAX_ROWS_PER_REQUEST)) {
    const p = opts.paramFor?.(0, []) ?? "body.embedding.num_rows";
    return Promise.reject(new ConditionError(`num_rows must be an integer from 1 to ${MAX_ROWS_PER_REQUEST}`, p, 0, []));
  }
  return sampleConditional(model, new Array<RowCondition>(numRows).fill(condition), opts);
}
