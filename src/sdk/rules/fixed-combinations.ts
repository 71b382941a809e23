/**
 * The fixed-combinations rule kept in decoded rows (`./enforce`, step 3 of its order). A row whose
 * tuple of codes is not a released combination takes one drawn among those that keep its fixed
 * cells and at least one of its other rule cells (all that keep the fixed cells when none does).
 * Score: the combination's shortfall against its quota (its real share of the batch's rows on
 * released values; at least 1% of the quota), or 1 for a row with a pooled cell (a flat fill, as
 * the decoder's pool draw is), times the naive-Bayes likelihood of the row's other codes given it
 * over the metadata's 2-way marginals, raised to `LIKELIHOOD_POWER` (`../../rule-scores`). Rows
 * are repaired in a seeded random order, so repairs fill the combinations the model under-drew
 * instead of crowding the frequent ones.
 * A cell generated as the pooled `__other__` is a stand-in, not kept; when no released combination
 * keeps the row's other cells, the row stays as decoded. A fresh value written for a pooled cell
 * (a `column_stats.semantic` column) reads as the pooled code, as `./check` reads it. With a
 * determinant (education -> education-num) the candidates are the combinations of the row's
 * education and of its education-num, scored the same way.
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

/** Largest key space of a rule held as flat lookup tables (bytes and Int32s). */
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
  // A combination holding a pooled code is not a target: the decoder never writes the pooled code.
  const pooled = names.map((n) => meta.value_mappings?.[n]?.[OTHER]);
  const target = combinations.map((t, i) => i).filter((i) => combinations[i].length === m && combinations[i].every((c, j) => c !== pooled[j]));
  const valid = target.map((i) => combinations[i]);
  if (valid.length === 0) return undefined;
  const toCode = names.map((n) => new Map(Object.entries(meta.value_mappings?.[n] ?? {})));
  const toText = toCode.map((map) => {
    const t: string[] = [];
    for (const [v, c] of map) if (t[c] === undefined) t[c] = v;
    return t;
  });
  // A tuple's key: its codes in mixed radix over the columns' cardinalities (exact below 2^53;
  // wider code books fall back to text).
  const radix = names.map((n) => meta.cardinalities[n] ?? 1);
  const numeric = radix.reduce((a, k) => a * k, 1) < Number.MAX_SAFE_INTEGER;
  const key = (t: readonly number[]): number | string => {
    if (!numeric) return t.join(",");
    let k = 0;
    for (let j = 0; j < t.length; j++) k = k * radix[j] + t[j];
    return k;
  };
  // Every tuple of the rule keeps it, pooled ones included (a fresh value reads as pooled).
  const allowed = new Set<number | string>(combinations.filter((t) => t.length === m).map(key));
  const det = determinant === undefined ? -1 : names.indexOf(determinant);
  const detOutside = det >= 0 && pooled[det] !== undefined && !combinations.some((t) => t[det] === pooled[det]);
  const detSemantic = det >= 0 ? meta.column_stats?.[names[det]] : undefined;
  const detTakesReleased = det >= 0 && (detSemantic?.type !== "categorical" || detSemantic.semantic === undefined || detSemantic.semantic.stand_ins_first === true);
  const indexOfKey = new Map<number | string, number>(valid.map((t, i) => [key(t), i]));
  const weight = target.map((i) => counts[i] ?? 1);
  const totalWeight = weight.reduce((a, b) => a + b, 0);
  const byCode = combinationsByCode(valid, m);
  // Per rule column, P(g = code | j = code) for the other non-id features g (`../../rule-scores`).
  const conditionals = pairConditionals(meta, meta.features, cols, (g) => meta.column_stats?.[meta.features[g]]?.type === "id");
  // Flattened (`flatConditionals`): multiplied in `combinationLikelihood`'s order.
  const flat = flatConditionals(conditionals);
  const nc = flat.g.length;
  // tupleBase[i * nc + k]: combination i's row offset in conditional table k.
  const tupleBase = new Int32Array(valid.length * nc);
  for (let i = 0; i < valid.length; i++) for (let k = 0; k < nc; k++) tupleBase[i * nc + k] = valid[i][flat.j[k]] * flat.Kg[k];
  const rowCodes = new Int32Array(m);
  const fixedAt = new Uint8Array(m);
  const pooledAt = new Uint8Array(m);
  // Per combination, the last row (+1) that listed it as a candidate (no Set per row).
  const seenAt = new Int32Array(valid.length);
  const rowKey = (): number | string => {
    if (!numeric) return rowCodes.join(",");
    let k = 0;
    for (let j = 0; j < m; j++) k = k * radix[j] + rowCodes[j];
    return k;
  };
  const rowKeyNumber = (): number => {
    let k = 0;
    for (let j = 0; j < m; j++) k = k * radix[j] + rowCodes[j];
    return k;
  };
  // Small key spaces: `allowed` and `indexOfKey` as flat tables indexed by the key.
  const keySpace = radix.reduce((a, k) => a * k, 1);
  const keyTables = numeric && keySpace <= KEY_TABLE_MAX;
  const allowedAt = new Uint8Array(keyTables ? keySpace : 0);
  const validAt = new Int32Array(keyTables ? keySpace : 0).fill(-1);
  if (keyTables) {
    for (const k of allowed) allowedAt[k as number] = 1;
    for (const [k, i] of indexOfKey) validAt[k as number] = i;
  }
  const byCodeAt = byCode.map((map) => {
    const out: (number[] | undefined)[] = [];
    for (const [c, list] of map) if (Number.isInteger(c) && c >= 0) out[c] = list;
    return out;
  });
  // Buffers kept between batches (grown by doubling): repairable rows (row, has a pooled cell) and
  // their candidates candFlat[candStart[x] .. candStart[x + 1]) (combination, row, likelihood).
  let repRow = new Int32Array(1024);
  let repWild = new Uint8Array(1024);
  let candStart = new Int32Array(1025);
  let candFlat = new Int32Array(4096);
  let candRow = new Int32Array(4096);
  let candLik = new Float64Array(4096);
  let nRep = 0;
  let nCand = 0;
  // Per repaired row, in repair order: the row, its combination, one column's code of it.
  let pickRow = new Int32Array(1024);
  let pickOf = new Int32Array(1024);
  let pickCode = new Int32Array(1024);
  // The batch's codes per rule column and generated codes of pooled rule columns. One array for
  // the rule's life (a new array per batch gave V8 a new map to deoptimize on).
  const textCodes: Int32Array[] = cols.map(() => NO_CODES);
  const pooledCodes: (ArrayLike<number> | undefined)[] = cols.map(() => undefined);
  const pooledOf = pooled.map((c) => c ?? -1);
  // The repair runs as small step functions so V8 optimizes each after the first batch.
  const pushCand = (i: number, r: number): void => {
    if (nCand === candFlat.length) {
      candFlat = grown(candFlat, 2 * nCand);
      candRow = grown(candRow, 2 * nCand);
      candLik = grown(candLik, 2 * nCand);
    }
    candRow[nCand] = r;
    candFlat[nCand++] = i;
  };
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
      let defined = true;
      let k = 0;
      for (let j = 0; j < m; j++) {
        const c = textCodes[j][r];
        const v = c >= 0 ? c : pooledOf[j];
        if (v < 0) defined = false;
        rowCodes[j] = v;
        k = k * radix[j] + v;
      }
      // A pooled determinant value no combination holds is outside the rule, as `./check` reads it;
      // beside cells no released combination holds, a determinant that writes fresh values only as
      // a fallback (or none) takes a released entry (a catalog row names a released key).
      // A determinant written as the pooled text itself (no stand-in went with its partner value)
      // takes a released entry too: `__other__` is never left in a row.
      const pooledText = det >= 0 && detTakesReleased && pooledOf[det] >= 0 && textCodes[det][r] === pooledOf[det];
      let detFree = pooledText;
      if (!pooledText && det >= 0 && detOutside && rowCodes[det] === pooledOf[det]) {
        if (!detTakesReleased) continue;
        let near = false;
        for (let j = 0; j < m && !near; j++) if (j !== det && rowCodes[j] >= 0 && (byCodeAt[j][rowCodes[j]]?.length ?? 0) > 0) near = true;
        if (near) continue;
        detFree = true;
      }
      if (!pooledText && defined && (keyTables ? allowedAt[k] === 1 : allowed.has(rowKey()))) continue;
      // Candidates: see the module doc. A pooled cell is a stand-in, no value to keep; with one and
      // no released combination around the row's other cells, the row stays as decoded (moving its
      // released cells to fit a stand-in would distort their columns).
      let wildcard = false;
      let anyFixed = false;
      for (let j = 0; j < m; j++) {
        rowCodes[j] = textCodes[j][r];
        fixedAt[j] = fixed !== undefined && fixed(r, cols[j]) && !(pooledText && j === det) ? 1 : 0;
        if (fixedAt[j] === 1) anyFixed = true;
        const pc = pooledCodes[j];
        // A held stand-in is a value to keep like any other.
        pooledAt[j] = pc !== undefined && pc[r] === pooled[j] && fixedAt[j] === 0 ? 1 : 0;
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
        if (!wildcard || detFree || anyFixed) for (let i = 0; i < valid.length; i++) if (!anyFixed || keepsFixed(i)) pushCand(i, r);
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
      repWild[nRep] = wildcard && !pooledText ? 1 : 0;
      candStart[nRep] = first;
      nRep++;
      candStart[nRep] = nCand;
    }
    return stuck;
  };
  // Step 2: each candidate's naive-Bayes likelihood, in `combinationLikelihood`'s order; one pass
  // per conditional over every candidate (reads one column and one table).
  const likelihoods = (codes: readonly ArrayLike<number>[]): void => {
    const tables = flat.tables;
    candLik.fill(1, 0, nCand);
    for (let k = 0; k < nc; k++) multiplyConditional(candLik, nCand, candRow, candFlat, codes[flat.g[k]], tables, flat.offset[k], tupleBase, nc, k);
    for (let x = 0; x < nCand; x++) candLik[x] = likelihoodToPower(candLik[x]);
  };
  // Step 3: per combination, the rows held on it (kept as decoded, no pooled cell); returns those
  // plus the broken rows without a pooled cell that `order` repairs (the quotas' total).
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
        // A single candidate still takes its number from the stream.
        rng.next();
        repairTo(r, candFlat[c0], wildcard);
        continue;
      }
      if (nx > scores.length) scores = new Float64Array(2 * nx);
      // Score: see the module doc.
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
  // The picks' cells, column by column (each row is picked once, so column order does not matter).
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
  const releaseBatch = (): void => {
    textCodes.fill(NO_CODES);
    pooledCodes.fill(undefined);
  };
  return {
    apply(rows, rng, fixed, _draw, out, codes) {
      const n = rows.length;
      for (let j = 0; j < m; j++) {
        textCodes[j] = cellCodes(rows, cols[j], toCode[j]);
        pooledCodes[j] = codes !== undefined && pooled[j] !== undefined ? codes[cols[j]] : undefined;
      }
      const stuck = findBroken(n, fixed);
      out.unrepaired += stuck;
      if (nRep === 0) {
        // Nothing to repair (the calibrated draw's rows arrive repaired): no number drawn.
        releaseBatch();
        return;
      }
      if (codes !== undefined) likelihoods(codes);
      let order = identityOrder(nRep);
      // A tolerant rule (share < 1) may stay broken in as many rows as the real table is off the
      // released combinations: unrepairable rows count first, then random rows with a pooled
      // stand-in keep what the model wrote. A row of released values only is always repaired.
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
      // Quotas from the rows the model put on released values; see the module doc.
      const held = new Float64Array(valid.length);
      const quotaScale = countHeld(n, order, held) / totalWeight;
      shuffleInPlace(order, rng);
      repairRows(rows, rng, order, held, quotaScale, codes !== undefined, out);
      releaseBatch();
    },
  };
}

// These loops are functions of their own: V8 compiling the first loop on the stack left the next
// loop without type feedback (its code was thrown away once per batch).

/** 0, 1, ..., n - 1. */
function identityOrder(n: number): Int32Array {
  const order = new Int32Array(n);
  for (let x = 0; x < n; x++) order[x] = x;
  return order;
}

/** Marks `broken[repRow[x]]` for x of `order`; returns how many have no pooled cell. */
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

/** Per row, the code under `toCode` of feature f's cell (-1: none); uses `rows.codesOf` if any. */
function cellCodes(rows: Cells, f: number, toCode: ReadonlyMap<string, number>): Int32Array {
  if (rows.codesOf) return rows.codesOf(f, toCode);
  const out = new Int32Array(rows.length);
  for (let r = 0; r < rows.length; r++) out[r] = toCode.get(rows.get(r, f)) ?? -1;
  return out;
}

/** A copy of `a` grown to `length` elements, the rest zero. */
function grown<T extends Int32Array | Uint8Array | Float64Array>(a: T, length: number): T {
  const out = new (a.constructor as new (n: number) => T)(length);
  out.set(a);
  return out;
}
