/**
 * A synthetic database against the real one (docs/relational.md "Evaluation"): referential
 * integrity (orphan foreign keys), unique primary keys, the children-per-parent distribution and
 * the 2-way marginals of parent x child column pairs over each join, as total variation distance;
 * and the resample baseline those distances are read against (a bootstrap of the hierarchy).
 */
import type { Table } from "../io/csv";
import { Rng } from "../generate/sfc32";
import { cardinality, type Cardinality } from "./detect";
import type { DatabaseSchema, Relationship } from "./schema";
import { MAX_LAG_COLUMNS, contextColumns, sequences, type DatabasePlan } from "./plan";
import type { TableModel } from "./generate";

/** The figures of one relationship. */
export interface RelationshipReport {
  /** `child.key -> parent.key`. */
  relationship: string;
  /** Synthetic child rows whose key no synthetic parent has, and blank keys. */
  orphans: number;
  blank: number;
  /** TVD of the children-per-parent distribution (buckets 0, 1, 2, 3, 4-7, 8-15, ...). */
  cardinalityTvd: number;
  /** Mean 2-way TVD over the parent column x child column pairs of the join, and their number. */
  pairTvd: number;
  pairs: number;
  /** Real and synthetic children per parent: min, median, max. */
  real: Pick<Cardinality, "min" | "median" | "max">;
  synthetic: Pick<Cardinality, "min" | "median" | "max">;
}

/** The figures of one sequence table (consecutive rows of an entity, in index order). */
export interface SequenceReport {
  table: string;
  /** Mean 2-way TVD of (previous row's value, row's value) over the lagged columns, and their number. */
  lagTvd: number;
  lagColumns: number;
  /** Per numerical column, the mean absolute change from one row to the next: real, synthetic. */
  meanStep: { column: string; real: number; synthetic: number }[];
  /** When the real table is a complete panel: the share of synthetic entities with every period once. */
  panelComplete?: number;
}

/** The figures of a synthetic database. */
export interface DatabaseReport {
  tables: Record<string, { realRows: number; syntheticRows: number; primaryKey?: string; duplicateKeys: number; blankKeys: number }>;
  relationships: RelationshipReport[];
  sequences: SequenceReport[];
}

/** Most columns per side of a join that the pair TVD compares. */
const MAX_JOIN_COLUMNS = 8;
/** Quantile bins of a numerical column, and text values kept (the rest pooled), in the pair TVD. */
const BINS = 10;
const TOP_VALUES = 50;

function bucket(c: number): number {
  return c < 4 ? c : 2 + Math.floor(Math.log2(c));
}

/** TVD of two distributions given as counts by key. */
function tvd(a: Map<string | number, number>, na: number, b: Map<string | number, number>, nb: number): number {
  if (na === 0 || nb === 0) return na === nb ? 0 : 1;
  let s = 0;
  for (const [k, x] of a) s += Math.abs(x / na - (b.get(k) ?? 0) / nb);
  for (const [k, y] of b) if (!a.has(k)) s += y / nb;
  return s / 2;
}

function counts<T extends string | number>(xs: Iterable<T>): Map<T, number> {
  const m = new Map<T, number>();
  for (const x of xs) m.set(x, (m.get(x) ?? 0) + 1);
  return m;
}

/** A column's discretization from its real values: quantile bins when all are numbers, else top values. */
function discretizer(real: string[]): (v: string) => string {
  const nonBlank = real.filter((v) => v.trim() !== "");
  const nums = nonBlank.map(Number);
  if (nonBlank.length > 0 && nums.every(Number.isFinite)) {
    const sorted = nums.sort((a, b) => a - b);
    const edges = Array.from({ length: BINS - 1 }, (_, k) => sorted[Math.floor(((k + 1) * sorted.length) / BINS)]);
    return (v) => {
      if (v.trim() === "") return "";
      const x = Number(v);
      if (!Number.isFinite(x)) return "?";
      let b = 0;
      while (b < edges.length && x >= edges[b]) b++;
      return `#${b}`;
    };
  }
  const top = new Set([...counts(real)].sort((a, b) => b[1] - a[1]).slice(0, TOP_VALUES).map(([v]) => v));
  return (v) => (top.has(v) ? v : "\u0000other");
}

/** Child rows joined to their parent rows: per pair, the discretized (parent, child) cell keys. */
function joinPairs(rel: Relationship, db: Record<string, Table>, parentCols: string[], childCols: string[], disc: Map<string, (v: string) => string>): Map<string, string[]> {
  const parent = db[rel.parent];
  const child = db[rel.child];
  const kj = parent.columns.indexOf(rel.parentKey);
  const index = new Map<string, string[]>();
  for (const r of parent.rows) index.set(r[kj], r);
  const fj = child.columns.indexOf(rel.childKey);
  const pj = parentCols.map((c) => parent.columns.indexOf(c));
  const cj = childCols.map((c) => child.columns.indexOf(c));
  const out = new Map<string, string[]>();
  for (const r of child.rows) {
    const pr = index.get(r[fj]);
    if (pr === undefined) continue;
    parentCols.forEach((pc, a) => {
      const dp = disc.get(`p.${pc}`)!(pr[pj[a]]);
      childCols.forEach((cc, b) => {
        const key = `${pc}\u0001${cc}`;
        (out.get(key) ?? out.set(key, []).get(key)!).push(`${dp}\u0001${disc.get(`c.${cc}`)!(r[cj[b]])}`);
      });
    });
  }
  return out;
}

function keysOf(schema: DatabaseSchema, t: string): Set<string> {
  const k = new Set<string>();
  if (schema.tables[t].primaryKey !== undefined) k.add(schema.tables[t].primaryKey!);
  for (const r of schema.relationships) if (r.child === t) k.add(r.childKey);
  return k;
}

/**
 * Compares a synthetic database with the real one.
 * @param schema the keys and relationships both share.
 */
export function evaluateDatabase(schema: DatabaseSchema, real: Record<string, Table>, synth: Record<string, Table>): DatabaseReport {
  const report: DatabaseReport = { tables: {}, relationships: [], sequences: [] };
  for (const [t, s] of Object.entries(schema.tables)) {
    const st = synth[t] ?? { columns: real[t].columns, rows: [] };
    let duplicateKeys = 0;
    let blankKeys = 0;
    if (s.primaryKey !== undefined) {
      const j = st.columns.indexOf(s.primaryKey);
      const seen = new Set<string>();
      for (const r of st.rows) {
        if (r[j] === "") blankKeys++;
        else if (seen.has(r[j])) duplicateKeys++;
        else seen.add(r[j]);
      }
    }
    report.tables[t] = { realRows: real[t].rows.length, syntheticRows: st.rows.length, ...(s.primaryKey !== undefined ? { primaryKey: s.primaryKey } : {}), duplicateKeys, blankKeys };
  }
  for (const rel of schema.relationships) {
    const cr = cardinality(rel, real);
    const cs = cardinality(rel, synth);
    const parentCols = contextColumns(real[rel.parent], keysOf(schema, rel.parent), schema.tables[rel.parent].columns, MAX_JOIN_COLUMNS);
    const childCols = contextColumns(real[rel.child], keysOf(schema, rel.child), schema.tables[rel.child].columns, MAX_JOIN_COLUMNS);
    const disc = new Map<string, (v: string) => string>();
    for (const c of parentCols) disc.set(`p.${c}`, discretizer(real[rel.parent].rows.map((r) => r[real[rel.parent].columns.indexOf(c)])));
    for (const c of childCols) disc.set(`c.${c}`, discretizer(real[rel.child].rows.map((r) => r[real[rel.child].columns.indexOf(c)])));
    const pr = joinPairs(rel, real, parentCols, childCols, disc);
    const ps = joinPairs(rel, synth, parentCols, childCols, disc);
    let sum = 0;
    for (const [k, xs] of pr) {
      const ys = ps.get(k) ?? [];
      sum += tvd(counts(xs), xs.length, counts(ys), ys.length);
    }
    report.relationships.push({
      relationship: `${rel.child}.${rel.childKey} -> ${rel.parent}.${rel.parentKey}`,
      orphans: cs.orphans,
      blank: cs.blank,
      cardinalityTvd: tvd(counts(cr.counts.map(bucket)), cr.counts.length, counts(cs.counts.map(bucket)), cs.counts.length),
      pairTvd: pr.size > 0 ? sum / pr.size : 0,
      pairs: pr.size,
      real: { min: cr.min, median: cr.median, max: cr.max },
      synthetic: { min: cs.min, median: cs.median, max: cs.max },
    });
  }
  for (const [t, s] of Object.entries(schema.tables)) {
    if (s.sequenceKey === undefined || s.sequenceIndex === undefined || synth[t] === undefined) continue;
    report.sequences.push(sequenceReport(t, s.sequenceKey, s.sequenceIndex, keysOf(schema, t), real[t], synth[t]));
  }
  return report;
}

/** Consecutive (previous, current) value pairs of column j over every entity's rows. */
function steps(table: Table, key: string, index: string, numeric: boolean, j: number): [string, string][] {
  const out: [string, string][] = [];
  for (const rows of sequences(table, key, index, numeric).values()) for (let k = 1; k < rows.length; k++) out.push([table.rows[rows[k - 1]][j], table.rows[rows[k]][j]]);
  return out;
}

function sequenceReport(t: string, key: string, index: string, keys: Set<string>, real: Table, synth: Table): SequenceReport {
  const ij = real.columns.indexOf(index);
  const numeric = real.rows.every((r) => r[ij].trim() !== "" && Number.isFinite(Number(r[ij])));
  const cols = [index, ...real.columns.filter((c) => c !== index && !keys.has(c))].slice(0, MAX_LAG_COLUMNS);
  let sum = 0;
  const meanStep: SequenceReport["meanStep"] = [];
  for (const c of cols) {
    const j = real.columns.indexOf(c);
    const d = discretizer(real.rows.map((r) => r[j]));
    const pr = steps(real, key, index, numeric, j);
    const ps = steps(synth, key, index, numeric, synth.columns.indexOf(c));
    sum += tvd(counts(pr.map(([a, b]) => `${d(a)}\u0001${d(b)}`)), pr.length, counts(ps.map(([a, b]) => `${d(a)}\u0001${d(b)}`)), ps.length);
    const step = (xs: [string, string][]): number => {
      const ds = xs.map(([a, b]) => Math.abs(Number(b) - Number(a))).filter(Number.isFinite);
      return ds.length > 0 ? ds.reduce((a, b) => a + b, 0) / ds.length : NaN;
    };
    if (real.rows.every((r) => r[j].trim() === "" || Number.isFinite(Number(r[j])))) meanStep.push({ column: c, real: step(pr), synthetic: step(ps) });
  }
  const report: SequenceReport = { table: t, lagTvd: cols.length > 0 ? sum / cols.length : 0, lagColumns: cols.length, meanStep };
  const realSeq = [...sequences(real, key, index, numeric).values()];
  const periods = realSeq[0]?.map((i) => real.rows[i][ij]) ?? [];
  const isPanel = realSeq.every((rows) => rows.length === periods.length && rows.every((i, k) => real.rows[i][ij] === periods[k]));
  if (isPanel && periods.length > 0) {
    const sj = synth.columns.indexOf(index);
    const synthSeq = [...sequences(synth, key, index, numeric).values()];
    const complete = synthSeq.filter((rows) => rows.length === periods.length && rows.every((i, k) => synth.rows[i][sj] === periods[k])).length;
    report.panelComplete = synthSeq.length > 0 ? complete / synthSeq.length : 0;
  }
  return report;
}

/**
 * The resample baseline as a {@link TableModel} over a table's flat training rows: plain
 * generation draws rows with replacement; seeded generation draws, per seed row, a training row
 * with the same non-blank seed cells (any row when none has them) and keeps the seed cells. Run
 * through `generateDatabase` it is a bootstrap of the database: real parents with their real
 * children counts, children drawn among the real children of parents alike.
 */
export class ResampleModel implements TableModel {
  constructor(private readonly training: Table) {}

  async sample(n: number, seed: number): Promise<Table> {
    const rng = new Rng(seed);
    const rows = this.training.rows;
    return { columns: [...this.training.columns], rows: Array.from({ length: n }, () => [...rows[rng.int(rows.length)]]) };
  }

  async sampleSeeded(seed: Table, seedValue: number): Promise<Table> {
    const rng = new Rng(seedValue);
    const cols = seed.columns.map((c) => this.training.columns.indexOf(c));
    const byKey = new Map<string, number[]>();
    this.training.rows.forEach((r, i) => {
      const k = JSON.stringify(cols.map((j) => r[j]));
      (byKey.get(k) ?? byKey.set(k, []).get(k)!).push(i);
    });
    const rows = seed.rows.map((s) => {
      const match = byKey.get(JSON.stringify(s));
      const r = [...this.training.rows[match !== undefined ? match[rng.int(match.length)] : rng.int(this.training.rows.length)]];
      s.forEach((v, k) => {
        if (v.trim() !== "") r[cols[k]] = v;
      });
      return r;
    });
    return { columns: [...this.training.columns], rows };
  }
}

/** {@link ResampleModel}s of every table of a plan's training tables. */
export function resampleModels(plan: DatabasePlan, training: Record<string, Table>): Record<string, TableModel> {
  return Object.fromEntries(plan.order.map((t) => [t, new ResampleModel(training[t])]));
}
