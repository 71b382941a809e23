/**
 * Seeded generation on the wire (docs/api.md "Seeded generation (extension)"): checks the two
 * seeded forms of a Generate request's `embedding` against a model's features and turns them into
 * per-feature conditions in model order for `sampleSeeded` / `sampleConditional`:
 * - `{num_rows, seed?, condition: {<feature>: code | code[]}}`: rows that all satisfy it;
 * - `{seed?, seed_data: {features, rows}}`: one row per seed row; a cell is a code, a list of
 *   allowed codes, `{codes, weights}` (each code's share inside the condition), or null (free).
 * The HTTP handler (before charging) and the engine both run {@link seededSource}; this module
 * imports nothing heavy, since the HTTP thread loads it.
 */
import { prop } from "../../contract/params";
import { MAX_ROWS_PER_REQUEST, MAX_SEED_ROWS_PER_REQUEST, type GenerateRequest } from "../../contract";

/** A condition on one feature: a code, allowed codes, or codes with weights; null: free. */
export type SeededCell = number | number[] | { codes: number[]; weights: number[] } | null;

/** A seeded request, checked and in the model's feature order. */
export type SeededSource =
  | {
      kind: "where";
      /** Rows to generate, 1..MAX_ROWS_PER_REQUEST. */
      numRows: number;
      seed?: number;
      /** `calibrate: true`: the calibrated draw conditioned (`conditional.ts`, `calibration`). */
      calibrate: boolean;
      /** One entry per model feature (model order); null: free. */
      condition: SeededCell[];
    }
  | {
      kind: "rows";
      /** Rows to generate: one per seed row, 1..MAX_SEED_ROWS_PER_REQUEST. */
      numRows: number;
      seed?: number;
      calibrate: boolean;
      /** Per seed row, one entry per model feature (model order); null: free. */
      rows: SeededCell[][];
      /** Model feature index of each `seed_data.features[j]` (to name the cell in errors). */
      columns: number[];
    };

/** A seeded request the model cannot take: `param` is the contract path of the bad value. */
export class SeededInputError extends Error {
  constructor(
    message: string,
    readonly param: string,
  ) {
    super(message);
    this.name = "SeededInputError";
  }
}

/** The model's side of the checks: feature names (model order) and their cardinalities. */
export interface SeededModel {
  features: readonly string[];
  cardinalities: Readonly<Record<string, number>>;
}

/** True for the two seeded forms of `embedding` (a `condition` or a `seed_data`). */
export function isSeeded(embedding: GenerateRequest["embedding"]): boolean {
  if (Array.isArray(embedding) || embedding === null || typeof embedding !== "object") return false;
  return "seed_data" in embedding || ("condition" in embedding && embedding.condition !== undefined);
}

/**
 * Checks one cell of feature `f` (cardinality `K`); returns it with lists copied.
 * @throws SeededInputError naming `param` (`param[i]`, `param.codes[i]`, `param.weights[i]`).
 */
function checkCell(v: unknown, name: string, K: number, param: string): Exclude<SeededCell, null> {
  const code = (x: unknown, p: string): number => {
    if (!(typeof x === "number" && Number.isInteger(x) && x >= 0 && x < K)) {
      throw new SeededInputError(
        `${JSON.stringify(x)} is not a code of feature "${name}", which has codes 0 to ${K - 1} (cardinality ${K}).`,
        p,
      );
    }
    return x;
  };
  const list = (l: unknown[], p: string): number[] => {
    if (l.length === 0) {
      throw new SeededInputError(`The allowed codes of feature "${name}" are an empty list; give at least one code, or null to leave it free.`, p);
    }
    return l.map((x, i) => code(x, `${p}[${i}]`));
  };
  if (Array.isArray(v)) return list(v, param);
  if (v !== null && typeof v === "object") {
    const { codes, weights } = v as { codes?: unknown; weights?: unknown };
    if (!Array.isArray(codes) || !Array.isArray(weights)) {
      throw new SeededInputError(`A weighted condition on feature "${name}" must be {codes: code[], weights: number[]}.`, param);
    }
    const out = list(codes, `${param}.codes`);
    if (weights.length !== out.length) {
      throw new SeededInputError(`A weighted condition on feature "${name}" gives ${out.length} codes and ${weights.length} weights; give one weight per code.`, `${param}.weights`);
    }
    const seen = new Set<number>();
    out.forEach((k, i) => {
      if (seen.has(k)) throw new SeededInputError(`Code ${k} of feature "${name}" is listed twice in a weighted condition.`, `${param}.codes[${i}]`);
      seen.add(k);
    });
    const w = weights.map((a: unknown, i: number) => {
      if (!(typeof a === "number" && a > 0 && a <= 1)) {
        throw new SeededInputError(`${JSON.stringify(a)} is not a weight in (0, 1] (the share of code ${out[i]}'s values inside the condition).`, `${param}.weights[${i}]`);
      }
      return a;
    });
    return { codes: out, weights: w };
  }
  return code(v, param);
}

function featureIndex(model: SeededModel): Map<string, number> {
  const m = new Map<string, number>();
  model.features.forEach((f, i) => m.set(f, i));
  return m;
}

function unknownFeature(name: string, model: SeededModel, param: string): SeededInputError {
  const list = model.features.slice(0, 20).map((f) => JSON.stringify(f)).join(", ");
  return new SeededInputError(
    `The model has no feature ${JSON.stringify(name)}; its features are ${list}${model.features.length > 20 ? ", ..." : ""}.`,
    param,
  );
}

/**
 * Checks a seeded `embedding` (typia's shape check has run) against the model's features and
 * converts it to model order; undefined when `embedding` is not seeded.
 * @throws SeededInputError with the exact `param`: `body.embedding.num_rows` (out of range),
 *   `.seed` (not a safe integer), `.condition.<f>` (unknown feature, bad code, empty list; list
 *   element `[i]`; weighted `.codes[i]`, `.weights`, `.weights[i]` not in (0, 1]),
 *   `.seed_data.features[j]` (unknown or repeated), `.seed_data.rows` (none or too many),
 *   `.seed_data.rows[r]` (wrong length), `.seed_data.rows[r][j]` (a bad cell, as `condition`).
 */
export function seededSource(embedding: GenerateRequest["embedding"], model: SeededModel): SeededSource | undefined {
  if (!isSeeded(embedding)) return undefined;
  const e = embedding as unknown as Record<string, unknown>;
  const seed = e.seed;
  if (seed !== undefined && !Number.isSafeInteger(seed)) throw new SeededInputError("seed must be a safe integer.", "body.embedding.seed");
  const byName = featureIndex(model);
  const F = model.features.length;
  const K = (f: number): number => model.cardinalities[model.features[f]];
  if (!("seed_data" in e)) {
    const n = e.num_rows;
    if (!(typeof n === "number" && Number.isInteger(n) && n >= 1 && n <= MAX_ROWS_PER_REQUEST)) {
      throw new SeededInputError(`num_rows must be an integer from 1 to ${MAX_ROWS_PER_REQUEST}.`, "body.embedding.num_rows");
    }
    const cond = e.condition;
    if (cond === null || typeof cond !== "object" || Array.isArray(cond)) {
      throw new SeededInputError("condition must be an object mapping feature names to a code or a list of codes.", "body.embedding.condition");
    }
    const condition: SeededCell[] = new Array<SeededCell>(F).fill(null);
    for (const [name, v] of Object.entries(cond)) {
      const param = prop("body.embedding.condition", name);
      const f = byName.get(name);
      if (f === undefined) throw unknownFeature(name, model, param);
      condition[f] = checkCell(v, name, K(f), param);
    }
    return { kind: "where", numRows: n, ...(seed !== undefined ? { seed: seed as number } : {}), calibrate: e.calibrate === true, condition };
  }
  const sd = e.seed_data as { features?: unknown; rows?: unknown } | null;
  const base = "body.embedding.seed_data";
  if (sd === null || typeof sd !== "object" || !Array.isArray(sd.features) || !Array.isArray(sd.rows)) {
    throw new SeededInputError("seed_data must be an object {features: string[], rows: (code | code[] | null)[][]}.", base);
  }
  const columns: number[] = [];
  const seen = new Set<number>();
  sd.features.forEach((name: unknown, j: number) => {
    const param = `${base}.features[${j}]`;
    const f = typeof name === "string" ? byName.get(name) : undefined;
    if (f === undefined) throw unknownFeature(String(name), model, param);
    if (seen.has(f)) throw new SeededInputError(`Feature ${JSON.stringify(name)} is listed twice in seed_data.features.`, param);
    seen.add(f);
    columns.push(f);
  });
  const n = sd.rows.length;
  if (n < 1 || n > MAX_SEED_ROWS_PER_REQUEST) {
    throw new SeededInputError(
      `seed_data.rows must hold 1 to ${MAX_SEED_ROWS_PER_REQUEST} rows per request; this one has ${n}. Split larger seed tables (the SDK does).`,
      `${base}.rows`,
    );
  }
  const J = columns.length;
  const rows: SeededCell[][] = new Array<SeededCell[]>(n);
  for (let r = 0; r < n; r++) {
    const row = sd.rows[r] as unknown;
    const rowParam = `${base}.rows[${r}]`;
    if (!Array.isArray(row) || row.length !== J) {
      throw new SeededInputError(
        `Seed row ${r} has ${Array.isArray(row) ? row.length : 0} cells; seed_data.features lists ${J} features.`,
        rowParam,
      );
    }
    const out: SeededCell[] = new Array<SeededCell>(F).fill(null);
    for (let j = 0; j < J; j++) {
      const v = row[j] as unknown;
      if (v === null) continue;
      const f = columns[j];
      out[f] = checkCell(v, model.features[f], K(f), `${rowParam}[${j}]`);
    }
    rows[r] = out;
  }
  return { kind: "rows", numRows: n, ...(seed !== undefined ? { seed: seed as number } : {}), calibrate: e.calibrate === true, rows, columns };
}

/** The contract path of a condition of probability 0: the faulty feature's cell, else the row's. */
export function conditionParam(source: SeededSource, modelFeatures: readonly string[], row: number, features: readonly string[]): string {
  if (source.kind === "where") {
    return features.length === 1 ? prop("body.embedding.condition", features[0]) : "body.embedding.condition";
  }
  const rowParam = `body.embedding.seed_data.rows[${row}]`;
  if (features.length !== 1) return rowParam;
  const j = source.columns.indexOf(modelFeatures.indexOf(features[0]));
  return j >= 0 ? `${rowParam}[${j}]` : rowParam;
}
