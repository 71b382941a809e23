/**
 * The fixed-combinations rule kept in decoded rows (`./enforce`, step 3 of its order): a row
 * whose tuple of codes is not one of the released combinations takes one drawn among the released combinations that keep its fixed cells and at least one of its
 * other cells of the rule (all that keep the fixed cells when none does), with probability
 * proportional to the combination's shortfall against its quota times the likelihood of the
 * row's other codes given it. The quota of a combination is its real share (count over the
 * released combinations' total) of the batch's rows the model put on released values (no
 * pooled cell in the rule's columns: kept as decoded, or repaired now); the
 * shortfall is the quota minus the rows already on it (at least 1% of the quota), and broken
 * rows are repaired in a seeded random order, so repairs fill the combinations the model
 * under-drew instead of crowding the frequent ones (measured on flights, one model: 2-way TVD
 * 0.0520 by count, 0.0458 by shortfall; 0.0425 with no repair). The likelihood is the product
 * over the 2-way marginals the metadata holds between a rule column and another column of
 * P(other = its code | rule column = the combination's code) (a naive Bayes
 * score; the marginals are the model's own training targets), raised to
 * `LIKELIHOOD_POWER` (`../../rule-scores`). A row with a pooled cell scores 1 instead of the shortfall (it
 * fills the cell flat, as the decoder's pool draw is, not by count, which would crowd the
 * frequent values), and does not count toward the quotas. So a flight keeps a route that
 * fits its distance, and an airport's state wins over a city drawn from the pool when its
 * latitude says so. A cell whose generated code is the pooled `__other__` ("some rare value",
 * which the decoder wrote as a stand-in) is not kept; when no released combination keeps
 * the row's other cells (every city of the state is rare), the row stays as decoded (the pool
 * draw is already among the values seen with the row's partner column), so the rule then
 * holds in about the real table's share of rows (`share` counts those rows as kept: their
 * real tuple holds the pooled code). A pooled cell written as a fresh value (a column with
 * `column_stats.semantic`: an invented city) has no code of its own and reads as the pooled
 * code, as `./check` reads it: the row keeps the rule when that tuple is one of the rule's
 * combinations (the state has rare cities), like the real rows with a rare city. With a
 * determinant (education -> education-num) the candidates are the
 * combination of the row's education and that of its education-num, scored the same way.
 */
import type { Metadata } from "../../contract";
import { OTHER } from "../columns";
import type { Rng } from "../generate/sfc32";
import type { Cells } from "../generate/batch";
import { combinationsByCode, likelihoodToPower, pairConditionals, quotaScore } from "../../rule-scores";
import type { CompiledRule, EnforceResult, Fixed } from "./compiled-rule";
import { flatConditionals, multiplyConditional } from "./flat-conditionals";

/** No codes (a released batch's column). */
const NO_CODES = new Int32Array(0);

/** Largest product of a fixed-combinations rule's cardinalities held as flat lookup tables (bytes and Int32s). */
const KEY_TABLE_MAX = 1 << 20;

/**
 * The fixed-combinations rule over columns `cols` (their names `names`) with its released
 * `combinations` (codes per column, `counts` of real rows each) and `share` (real rows that keep
 * it); undefined when no combination is free of pooled codes (nothing to repair toward).
 */
export function fixedCombinations(
  meta: Metadata,
  names: readonly string[],
  cols: number[],
  combinations: readonly (readonly number[])[],
  counts: readonly number[],
  share: number,
  determinant?: string,
): CompiledRule | undefined {
  const m = cols.length;
  // A combination holding a pooled code (`__other__`: values too rare to release) stands for rows
  // the decoder never writes (it writes the pooled code as a released value), so it is not a target.
  const pooled = names.map((n) => meta.value_mappings?.[n]?.[OTHER]);
  const target = combinations.map((t, i) => i).filter((i) => combinations[i].length === m && combinations[i].every((c, j) => c !== pooled[j]));
  const valid = target.map((i) => combinations[i]);
  if (valid.length === 0) return undefined;
  // text -> code and code -> text per column.
  const toCode = names.map((n) => new Map(Object.entries(meta.value_mappings?.[n] ?? {})));
  const toText = toCode.map((map) => {
    const t: string[] = [];
    for (const [v, c] of map) if (t[c] === undefined) t[c] = v;
    return t;
  });
  // A tuple's key: its codes in mixed radix over the columns' cardinalities (exact below 2^53,
  // which 4 columns of at most 2^13 codes each stay under; wider code books fall back to text).
  const radix = names.map((n) => meta.cardinalities[n] ?? 1);
  const numeric = radix.reduce((a, k) => a * k, 1) < Number.MAX_SAFE_INTEGER;
  const key = (t: readonly number[]): number | string => {
    if (!numeric) return t.join(",");
    let k = 0;
    for (let j = 0; j < t.length; j++) k = k * radix[j] + t[j];
    return k;
  };
  // Every tuple of the rule keeps it, pooled ones included: a row with a fresh value in a pooled
  // column (its text has no code: the decoder wrote it for a pooled cell) reads as the pooled
  // code, as `./check` reads it.
  const allowed = new Set<number | string>(combinations.filter((t) => t.length === m).map(key));
  const det = determinant === undefined ? -1 : names.indexOf(determinant);
  const detOutside = det >= 0 && pooled[det] !== undefined && !combinations.some((t) => t[det] === pooled[det]);
  const indexOfKey = new Map<number | string, number>(valid.map((t, i) => [key(t), i]));
  const weight = target.map((i) => counts[i] ?? 1);
  const totalWeight = weight.reduce((a, b) => a + b, 0);
  // Per column position, code -> indices of the combinations holding it.
  const byCode = combinationsByCode(valid, m);
  // Per rule column j, the other features g (not identifiers) whose 2-way marginal with j the
  // metadata holds, with P(g = code | j = code) (`../../rule-scores`, shared with the server).
  const conditionals = pairConditionals(meta, meta.features, cols, (g) => meta.column_stats?.[meta.features[g]]?.type === "id");
  // The conditionals flattened (`flatConditionals`): the repair multiplies them in the same order
  // as `combinationLikelihood`, reading typed arrays instead of calling a closure per cell.
  const flat = flatConditionals(conditionals);
  const nc = flat.g.length;
  // Per combination and flattened conditional k, the offset of its row in table k
  // (`valid[i][j(k)] * Kg(k)`, exact integers): tupleBase[i * nc + k].
  const tupleBase = new Int32Array(valid.length * nc);
  for (let i = 0; i < valid.length; i++) for (let k = 0; k < nc; k++) tupleBase[i * nc + k] = valid[i][flat.j[k]] * flat.Kg[k];
  const rowCodes = new Int32Array(m);
  const fixedAt = new Uint8Array(m);
  const pooledAt = new Uint8Array(m);
  // Per combination, the last row (+1) that listed it as a candidate (no Set per row).
  const seenAt = new Int32Array(valid.length);
  // The key of `rowCodes` (all >= 0), as `key` gives it for the same codes.
  const rowKey = (): number | string => {
    if (!numeric) return rowCodes.join(",");
    let k = 0;
    for (let j = 0; j < m; j++) k = k * radix[j] + rowCodes[j];
    return k;
  };
  // `rowKey` when the key is a number (`numeric`).
  const rowKeyNumber = (): number => {
    let k = 0;
    for (let j = 0; j < m; j++) k = k * radix[j] + rowCodes[j];
    return k;
  };
  // Where the key space is small (16 x 16 for education <-> education-num), `allowed` and
  // `indexOfKey` as flat tables indexed by the key: one array read per row instead of a hash lookup.
  const keySpace = radix.reduce((a, k) => a * k, 1);
  const keyTables = numeric && keySpace <= KEY_TABLE_MAX;
  const allowedAt = new Uint8Array(keyTables ? keySpace : 0);
  const validAt = new Int32Array(keyTables ? keySpace : 0).fill(-1);
  if (keyTables) {
    for (const k of allowed) allowedAt[k as number] = 1;
    for (const [k, i] of indexOfKey) validAt[k as number] = i;
  }
  // byCode as arrays indexed by code (codes are dense, below the column's cardinality).
  const byCodeAt = byCode.map((map) => {
    const out: (number[] | undefined)[] = [];
    for (const [c, list] of map) if (Number.isInteger(c) && c >= 0) out[c] = list;
    return out;
  });
  // The repair's buffers, kept between batches (grown by doubling, never shrunk): the broken rows
  // that can be repaired (row, whether it has a pooled cell), and their candidates (index into
  // `valid`, row, likelihood), candFlat[candStart[x] .. candStart[x + 1]) for repairable row x.
  let repRow = new Int32Array(1024);
  let repWild = new Uint8Array(1024);
  let candStart = new Int32Array(1025);
  let candFlat = new Int32Array(4096);
  let candRow = new Int32Array(4096);
  let candLik = new Float64Array(4096);
  let nRep = 0;
  let nCand = 0;
  // Per repaired row of the batch, in repair order: the row, its combination, and one column's code of it.
  let pickRow = new Int32Array(1024);
  let pickOf = new Int32Array(1024);
  let pickCode = new Int32Array(1024);
  // The rows' codes per rule column (`cellCodes`) and generated codes of the pooled rule columns,
  // of the batch being repaired.
  // One array each for the rule's life, its entries set per batch (a new array per batch gave the
  // optimized steps a new map to deoptimize on).
  const textCodes: Int32Array[] = cols.map(() => NO_CODES);
  const pooledCodes: (ArrayLike<number> | undefined)[] = cols.map(() => undefined);
  const pooledOf = pooled.map((c) => c ?? -1);
  // The batch's repair runs as the steps below, each one small function with its own loops, so
  // each is compiled to optimized code after its first batch (one large function was left
  // running baseline code for much of each batch).
  const pushCand = (i: number, r: number): void => {
    if (nCand === candFlat.length) {
      candFlat = grown(candFlat, 2 * nCand);
      candRow = grown(candRow, 2 * nCand);
      candLik = grown(candLik, 2 * nCand);
    }
    candRow[nCand] = r;
    candFlat[nCand++] = i;
  };
  // Whether combination i keeps the row's fixed cells (`rowCodes`, `fixedAt` of the row).
  const keepsFixed = (i: number): boolean => {
    const t = valid[i];
    for (let j = 0; j < m; j++) if (fixedAt[j] === 1 && (rowCodes[j] < 0 || t[j] !== rowCodes[j])) return false;
    return true;
  };
  // Step 1: the broken rows that can be repaired, in row order, with their candidates (`rep*`,
  // `cand*`); returns the rows that break the rule and cannot be repaired.
  const findBroken = (n: number, fixed: Fixed | undefined): number => {
    let stuck = 0;
    seenAt.fill(0);
    nRep = 0;
    nCand = 0;
    for (let r = 0; r < n; r++) {
      // Does the row break the rule? A cell whose text has no code reads as the pooled code.
      let defined = true;
      let k = 0;
      for (let j = 0; j < m; j++) {
        const c = textCodes[j][r];
        const v = c >= 0 ? c : pooledOf[j];
        if (v < 0) defined = false;
        rowCodes[j] = v;
        k = k * radix[j] + v;
      }
      // A rare determinant value (a fresh one reads as the pooled code) is outside the rule, as
      // `./check` reads it, when no combination holds it.
      if (det >= 0 && detOutside && rowCodes[det] === pooledOf[det]) continue;
      if (defined && (keyTables ? allowedAt[k] === 1 : allowed.has(rowKey()))) continue;
      // Candidates of a broken row: the combinations that keep the fixed cells and at least one
      // of the row's other cells of the rule (all that keep the fixed cells when none does);
      // none when it cannot be repaired. A cell the model left to the pool (its generated code
      // is `__other__`: "some rare value") is no value of its own to keep: the decoder's draw
      // for it was a stand-in. With such a cell and no released combination around the row's
      // other cells (a state whose cities are all rare), the row stays as decoded: moving its
      // released cells to fit a stand-in would distort their columns (every such state's rows
      // would leave it).
      let wildcard = false;
      let anyFixed = false;
      for (let j = 0; j < m; j++) {
        rowCodes[j] = textCodes[j][r];
        fixedAt[j] = fixed !== undefined && fixed(r, cols[j]) ? 1 : 0;
        if (fixedAt[j] === 1) anyFixed = true;
        const pc = pooledCodes[j];
        pooledAt[j] = pc !== undefined && pc[r] === pooled[j] ? 1 : 0;
        if (pooledAt[j] === 1) wildcard = true;
      }
      const first = nCand;
      for (let j = 0; j < m; j++) {
        const c = rowCodes[j];
        if (c < 0 || fixedAt[j] === 1 || pooledAt[j] === 1) continue;
        const list = byCodeAt[j][c];
        if (list === undefined) continue;
        for (let x = 0; x < list.length; x++) {
          const i = list[x];
          if (seenAt[i] !== r + 1 && (!anyFixed || keepsFixed(i))) {
            seenAt[i] = r + 1;
            pushCand(i, r);
          }
        }
      }
      if (nCand === first) {
        if (!wildcard) for (let i = 0; i < valid.length; i++) if (!anyFixed || keepsFixed(i)) pushCand(i, r);
        if (nCand === first) {
          stuck++;
          continue;
        }
      }
      if (nRep === repRow.length) {
        repRow = grown(repRow, 2 * nRep);
        repWild = grown(repWild, 2 * nRep);
        candStart = grown(candStart, 2 * nRep + 1);
      }
      repRow[nRep] = r;
      repWild[nRep] = wildcard ? 1 : 0;
      candStart[nRep] = first;
      nRep++;
      candStart[nRep] = nCand;
    }
    return stuck;
  };
  // Step 2: the naive-Bayes likelihood of each candidate's row's other codes given the candidate,
  // multiplied in `combinationLikelihood`'s order (conditional k ascending, from 1): one pass per
  // conditional over every candidate, so each pass reads one column of codes and one table. Rows
  // with a single candidate draw it whatever its score (their likelihood is unused).
  const likelihoods = (codes: readonly ArrayLike<number>[]): void => {
    const tables = flat.tables;
    candLik.fill(1, 0, nCand);
    for (let k = 0; k < nc; k++) multiplyConditional(candLik, nCand, candRow, candFlat, codes[flat.g[k]], tables, flat.offset[k], tupleBase, nc, k);
    for (let x = 0; x < nCand; x++) candLik[x] = likelihoodToPower(candLik[x]);
  };
  // Step 3: per combination, the rows the model put on it among the rows kept as decoded with
  // no pooled cell (`held`); returns those rows plus the broken rows without a pooled cell that
  // `order` repairs (the quotas' total).
  const countHeld = (n: number, order: Int32Array, held: Float64Array): number => {
    const broken = new Uint8Array(n);
    let modelRows = markBroken(order, repRow, repWild, broken);
    for (let r = 0; r < n; r++) {
      if (broken[r] === 1) continue;
      let skip = false;
      for (let j = 0; j < m; j++) {
        const c = textCodes[j][r];
        rowCodes[j] = c;
        const pc = pooledCodes[j];
        if (c < 0 || (pc !== undefined && pc[r] === pooled[j])) skip = true;
      }
      if (skip) continue;
      const i = keyTables ? validAt[rowKeyNumber()] : indexOfKey.get(rowKey());
      if (i !== undefined && i >= 0) (held[i]++, modelRows++);
    }
    return modelRows;
  };
  // Step 4: each row of `order` (in that order) takes a candidate drawn by score.
  const repairRows = (rows: Cells, rng: Rng, order: Int32Array, held: Float64Array, quotaScale: number, scored: boolean, out: EnforceResult): void => {
    // Row r takes combination `pick`: counted now, its cells written after the loop (`writePicks`).
    let picks = 0;
    const repairTo = (r: number, pick: number, wildcard: boolean): void => {
      if (!wildcard) held[pick]++;
      pickRow[picks] = r;
      pickOf[picks++] = pick;
    };
    if (pickRow.length < order.length) {
      pickRow = new Int32Array(order.length);
      pickOf = new Int32Array(order.length);
      pickCode = new Int32Array(order.length);
    }
    let scores = new Float64Array(16);
    for (let o = 0; o < order.length; o++) {
      const x = order[o];
      const r = repRow[x];
      const wildcard = repWild[x] === 1;
      const c0 = candStart[x];
      const nx = candStart[x + 1] - c0;
      if (nx === 1) {
        // The only candidate is drawn whatever the scores (the draw still takes its number).
        rng.next();
        repairTo(r, candFlat[c0], wildcard);
        continue;
      }
      if (nx > scores.length) scores = new Float64Array(2 * nx);
      // Score: the combination's shortfall against its quota (at least 1% of its quota, so a
      // row whose only fitting combinations are full still has one), or 1 for a row with a
      // pooled cell, times the likelihood of the row's other codes given the combination
      // (naive Bayes over the 2-way marginals the metadata holds).
      let total = 0;
      for (let y = 0; y < nx; y++) {
        const i = candFlat[c0 + y];
        const quota = quotaScale * weight[i];
        let sc = wildcard ? 1 : quotaScore(quota, held[i]);
        if (scored) sc *= candLik[c0 + y];
        scores[y] = sc;
        total += sc;
      }
      let u = rng.next() * total;
      let pick = candFlat[c0 + nx - 1];
      for (let y = 0; y < nx; y++) {
        u -= scores[y];
        if (u < 0) {
          pick = candFlat[c0 + y];
          break;
        }
      }
      repairTo(r, pick, wildcard);
    }
    writePicks(rows, picks, out);
  };
  // The picked combinations' cells, column by column (each repaired row is one of its own, so
  // the order of columns does not change the cells): what `rows.set` per row and column gave.
  const writePicks = (rows: Cells, picks: number, out: EnforceResult): void => {
    for (let j = 0; j < m; j++) {
      for (let x = 0; x < picks; x++) pickCode[x] = valid[pickOf[x]][j];
      if (rows.setMany) out.changed += rows.setMany(cols[j], pickRow, pickCode, picks, toText[j]);
      else {
        for (let x = 0; x < picks; x++) {
          const text = toText[j][pickCode[x]];
          if (text === undefined || rows.get(pickRow[x], cols[j]) === text) continue;
          rows.set(pickRow[x], cols[j], text);
          out.changed++;
        }
      }
    }
  };
  // The batch's columns are not kept after its repair.
  const releaseBatch = (): void => {
    textCodes.fill(NO_CODES);
    pooledCodes.fill(undefined);
  };
  return {
    apply(rows, rng, fixed, _draw, out, codes) {
      const n = rows.length;
      // Per rule column, the code of every row's text (-1: none), read once (`cellCodes`).
      for (let j = 0; j < m; j++) {
        textCodes[j] = cellCodes(rows, cols[j], toCode[j]);
        pooledCodes[j] = codes !== undefined && pooled[j] !== undefined ? codes[cols[j]] : undefined;
      }
      const stuck = findBroken(n, fixed);
      out.unrepaired += stuck;
      if (nRep === 0) {
        // Nothing to repair (the calibrated draw's rows arrive repaired): the steps below would
        // draw no number and change no cell.
        releaseBatch();
        return;
      }
      if (codes !== undefined) likelihoods(codes);
      // The repairable rows, as indices into the rep* arrays (in row order until shuffled).
      let order = identityOrder(nRep);
      // A tolerant rule (share < 1: real rows off the released combinations, which hold rare
      // values) may stay broken in as many rows as the real table is off them: the rows that
      // cannot be repaired count first, then rows with a pooled stand-in (the synthetic kin of
      // those real rows), drawn at random, keep what the model wrote. A row of released values
      // only is always repaired: nothing says its combination exists.
      const allowance = Math.max(0, Math.floor((1 - share) * n) - stuck);
      if (allowance > 0) {
        const pooledRows: number[] = [];
        for (let x = 0; x < nRep; x++) if (repWild[x] === 1) pooledRows.push(x);
        for (let i = pooledRows.length - 1; i > 0; i--) {
          const j = rng.int(i + 1);
          [pooledRows[i], pooledRows[j]] = [pooledRows[j], pooledRows[i]];
        }
        const leave = new Uint8Array(nRep);
        const left = Math.min(allowance, pooledRows.length);
        for (let i = 0; i < left; i++) leave[pooledRows[i]] = 1;
        out.unrepaired += left;
        let kept = 0;
        for (let x = 0; x < nRep; x++) if (leave[x] === 0) order[kept++] = x;
        order = order.subarray(0, kept);
      }
      // Quota per combination: its real share (count / total count) of the rows the model put on
      // released values (rows kept as decoded with no pooled cell, plus the broken rows without a
      // pooled cell repaired now). Such a broken row is repaired toward the combinations still
      // short of their quota, so repairs fill the combinations the model under-drew instead of
      // crowding the frequent ones, and the combination's marginal stays the real one. A row with
      // a pooled cell fills it flat over the fitting combinations (as the decoder's pool draw is
      // flat), not by count, which would crowd the frequent values. Rows are repaired in a seeded
      // random order, so the quota favours no part of the batch.
      const held = new Float64Array(valid.length);
      const quotaScale = countHeld(n, order, held) / totalWeight;
      shuffleInPlace(order, rng);
      repairRows(rows, rng, order, held, quotaScale, codes !== undefined, out);
      releaseBatch();
    },
  };
}

// The two loops below are functions of their own so that the loop after them is not left without
// type feedback when V8 compiles the first loop on the stack (it threw that code away at the next
// statement, once per batch).

/** 0, 1, ..., n - 1. */
function identityOrder(n: number): Int32Array {
  const order = new Int32Array(n);
  for (let x = 0; x < n; x++) order[x] = x;
  return order;
}

/** Marks `broken[repRow[x]]` for each x of `order`; returns how many of them have no pooled cell (`repWild[x]` 0). */
function markBroken(order: Int32Array, repRow: Int32Array, repWild: Uint8Array, broken: Uint8Array): number {
  let modelRows = 0;
  for (let i = 0; i < order.length; i++) {
    const x = order[i];
    broken[repRow[x]] = 1;
    if (repWild[x] === 0) modelRows++;
  }
  return modelRows;
}

/** Fisher-Yates shuffle of `a` in place with `rng.int`, from the last element down. */
function shuffleInPlace(a: Int32Array, rng: Rng): void {
  for (let i = a.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    const t = a[i];
    a[i] = a[j];
    a[j] = t;
  }
}

/**
 * The code under `toCode` (text -> code) of every row's cell of feature f, -1 where its text has
 * none: from the batch's own reading when it has one (`DecodedBatch.codesOf`: a code-book column
 * looks each dictionary entry up once), else cell by cell.
 */
function cellCodes(rows: Cells, f: number, toCode: ReadonlyMap<string, number>): Int32Array {
  if (rows.codesOf) return rows.codesOf(f, toCode);
  const out = new Int32Array(rows.length);
  for (let r = 0; r < rows.length; r++) out[r] = toCode.get(rows.get(r, f)) ?? -1;
  return out;
}

/** A copy of `a` in a new array of `length` (>= a.length) elements, the rest zero: a growing buffer's next size. */
function grown<T extends Int32Array | Uint8Array | Float64Array>(a: T, length: number): T {
  const out = new (a.constructor as new (n: number) => T)(length);
  out.set(a);
  return out;
}
