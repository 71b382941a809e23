/**
 * Structural zeros (criteria in `./index`, {@link detectRules}): value pairs of two code-book
 * columns that the real rows never hold, or hold far less often than independence predicts.
 * The term and the use are Private-PGM's (McKenna, Sheldon & Miklau, "Graphical-model based
 * estimation and inference for differential privacy", ICML 2019: cells known to be empty stay
 * empty in the estimated distribution).
 */
import type { StructuralZerosRule } from "../../../contract";
import { RULE_LIMITS } from "./options";
import type { Col } from "./view";

/** Code pairs of a column pair counted in a dense table, at most. */
const DENSE_PAIRS = 1 << 16;

/** Joint counts of two columns' value ids, as parallel arrays of non-zero cells. */
export interface JointCells {
  a: Int32Array;
  b: Int32Array;
  count: Int32Array;
}

/**
 * Rows per code of a column's own values, the blank one included (a blank genre beside a creative
 * type the real rows never leave without one); the pooled `__other__` code stays 0.
 */
function codeCounts(c: Col): Float64Array {
  const out = new Float64Array(c.codec.K);
  c.scan.counts.forEach((cnt, id) => {
    const code = c.code[id];
    if (code < 0 || code === c.codec.otherCode) return;
    out[code] += cnt;
  });
  return out;
}

/**
 * The structural zeros of columns A and B (in that order) from their joint counts of value ids:
 * code pairs (a, b), both codes of values of their own (not pooled; the blank code is one), found
 * two ways:
 * - by cell: independence predicts E = n_a · n_b / n >= {@link RULE_LIMITS}.zeroMinExpected rows
 *   and the real rows hold fewer than {@link RULE_LIMITS}.zeroObservedShare · E. Under
 *   independence such a cell is empty with probability about e^-E (e^-30 ~ 1e-13): structure, not
 *   chance.
 * - by value (a conditional functional dependency, Fan et al., "Conditional functional
 *   dependencies for capturing data inconsistencies", TODS 2008: workclass `?` -> occupation `?`):
 *   a value a whose rows hold one value b* of the other column in >= {@link RULE_LIMITS}.fdShare
 *   of them, where all would by chance with probability p_b*^n_a < {@link RULE_LIMITS}.fdChance,
 *   forbids every other b it holds in fewer than zeroObservedShare · E rows (any it never holds,
 *   however rare), since the evidence is the value's, not the cell's. Both directions.
 * At most {@link RULE_LIMITS}.maxZeroPairs pairs (those with the largest E); `share` = rows
 * outside the pairs, over all rows. Undefined when there is none.
 * Cost: O(cells of `joint` + code pairs of the values that decide their partner + pairs with
 * E >= the minimum), the last at most n / zeroMinExpected.
 */
export function structuralZeros(A: Col, B: Col, joint: JointCells, n: number): StructuralZerosRule | undefined {
  const minE = RULE_LIMITS.zeroMinExpected;
  const na = codeCounts(A);
  const nb = codeCounts(B);
  const KB = B.codec.K;
  // Rows per code pair, every code (pooled and blank included: they count toward a value's rows):
  // a dense table where the code pairs are few, else a Map of the pairs seen.
  const dense = A.codec.K * KB <= DENSE_PAIRS ? new Float64Array(A.codec.K * KB) : undefined;
  const sparse = dense ? undefined : new Map<number, number>();
  for (let i = 0; i < joint.count.length; i++) {
    const ca = A.code[joint.a[i]];
    const cb = B.code[joint.b[i]];
    if (ca < 0 || cb < 0) continue;
    const key = ca * KB + cb;
    if (dense) dense[key] += joint.count[i];
    else sparse!.set(key, (sparse!.get(key) ?? 0) + joint.count[i]);
  }
  const observedAt = (key: number): number => (dense ? dense[key] : (sparse!.get(key) ?? 0));
  const found = new Map<number, { a: number; b: number; e: number; o: number }>();
  const consider = (a: number, b: number): void => {
    const key = a * KB + b;
    if (found.has(key) || na[a] === 0 || nb[b] === 0) return;
    const e = (na[a] * nb[b]) / n;
    const o = observedAt(key);
    if (o < RULE_LIMITS.zeroObservedShare * e) found.set(key, { a, b, e, o });
  };
  // By cell.
  const floor = minE * n;
  const bOrder = Array.from(nb.keys()).filter((cb) => nb[cb] > 0).sort((x, y) => nb[y] - nb[x] || x - y);
  for (let ca = 0; ca < na.length; ca++) {
    if (na[ca] === 0) continue;
    for (const cb of bOrder) {
      if (na[ca] * nb[cb] < floor) break;
      consider(ca, cb);
    }
  }
  // By value, both directions.
  for (const [y, nx, ny, Kx, Ky, fromA] of [
    [B, na, nb, A.codec.K, KB, true],
    [A, nb, na, KB, A.codec.K, false],
  ] as const) {
    const rowsOf = codeTotals(y);
    const best = new Float64Array(Kx);
    const bestCode = new Int32Array(Kx).fill(-1);
    const visit = (key: number, c: number): void => {
      const [ca, cb] = [Math.floor(key / KB), key % KB];
      const [cx, cy] = fromA ? [ca, cb] : [cb, ca];
      if (c > best[cx]) [best[cx], bestCode[cx]] = [c, cy];
    };
    if (dense) {
      for (let key = 0; key < dense.length; key++) if (dense[key] > 0) visit(key, dense[key]);
    } else for (const [key, c] of sparse!) visit(key, c);
    for (let cx = 0; cx < Kx; cx++) {
      const m = nx[cx];
      if (m === 0 || best[cx] < RULE_LIMITS.fdShare * m) continue;
      if (m * Math.log(rowsOf[bestCode[cx]] / n) >= Math.log(RULE_LIMITS.fdChance)) continue;
      for (let cy = 0; cy < Ky; cy++) {
        if (cy === bestCode[cx] || ny[cy] === 0) continue;
        if (fromA) consider(cx, cy);
        else consider(cy, cx);
      }
    }
  }
  if (found.size === 0) return undefined;
  let pairs = [...found.values()];
  if (pairs.length > RULE_LIMITS.maxZeroPairs) {
    pairs.sort((p, q) => q.e - p.e || p.a - q.a || p.b - q.b);
    pairs = pairs.slice(0, RULE_LIMITS.maxZeroPairs);
  }
  pairs.sort((p, q) => p.a - q.a || p.b - q.b);
  const off = pairs.reduce((s, z) => s + z.o, 0);
  return { type: "structural_zeros", columns: [A.name, B.name], pairs: pairs.map((z) => [z.a, z.b]), share: (n - off) / n };
}

/** Rows per code of a column, every code (pooled and blank included). */
function codeTotals(c: Col): Float64Array {
  const out = new Float64Array(c.codec.K);
  c.scan.counts.forEach((cnt, id) => {
    if (c.code[id] >= 0) out[c.code[id]] += cnt;
  });
  return out;
}
