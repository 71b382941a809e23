/**
 * Decoding (DESIGN §2, SDK side): generated codes (`Generation.columns`) -> table values, using
 * only the model's `metadata` (so `GET /v1/models/{id}/metadata` is enough; no local state).
 *
 * Per feature f with code c:
 * - the missing code (`value_mappings[f][""]`, else K-1 when `column_stats[f].missing > 0`)
 *   -> "" (a blank cell);
 * - categorical -> the value whose `value_mappings[f]` entry is c; the pooled code decodes to the
 *   literal `__other__` (the rare values it stands for are not known to the model);
 * - numerical without `bin_edges` (point bins) -> the exact original text of the value;
 * - numerical with `bin_edges` (quantile bins, convention in `./metadata`) -> for a point bin its
 *   value; for an interval bin a value drawn uniformly inside it with a seeded PRNG: integer
 *   columns draw a uniform integer among those inside the bin and inside [min, max]; other
 *   columns draw a real number and print it with the fewest significant digits (>= 6) that keep
 *   it inside the bin.
 * - metadata without `value_mappings[f]` for a non-binned feature -> the code as a string.
 * Deterministic: the same codes and seed give the same strings (one PRNG stream per feature,
 * seeded with `deriveSeed(seed, f)`).
 */
import type { Generation, Metadata } from "../types";
import { APIError } from "./errors";
import type { Table } from "./csv";
import { MISSING_KEY } from "./metadata";
import { Rng, deriveSeed } from "./prng";

/** Decodes one feature's codes. */
export interface FeatureDecoder {
  name: string;
  /** Number of codes. */
  K: number;
  /** The value of code `c` (0 <= c < K); `rng` supplies draws for interval bins. */
  decode(c: number, rng: Rng): string;
}

function featureDecoder(meta: Metadata, f: string): FeatureDecoder {
  const K = meta.cardinalities[f];
  const stats = meta.column_stats?.[f];
  const mapping = meta.value_mappings?.[f];
  let missingCode = mapping?.[MISSING_KEY];
  if (missingCode === undefined && stats && stats.missing > 0) missingCode = K - 1;
  const edges = stats?.type === "numerical" ? stats.bin_edges : undefined;
  if (edges && edges.length >= 2) return binDecoder(f, K, edges, missingCode, stats!.integer === true, stats!.min, stats!.max);
  const byCode: (string | undefined)[] = new Array(K);
  if (mapping) for (const [v, c] of Object.entries(mapping)) if (byCode[c] === undefined) byCode[c] = v;
  if (missingCode !== undefined) byCode[missingCode] = "";
  return {
    name: f,
    K,
    decode: (c) => byCode[c] ?? (mapping ? badCode(f, c, K) : String(c)),
  };
}

function badCode(f: string, c: number, K: number): never {
  throw new APIError({
    code: "invalid_response",
    message: `The server returned code ${c} for feature "${f}", which has no value (K = ${K}).`,
  });
}

function binDecoder(
  f: string,
  K: number,
  e: readonly number[],
  missingCode: number | undefined,
  integer: boolean,
  min = e[0],
  max = e[e.length - 1],
): FeatureDecoder {
  const nb = e.length - 1;
  return {
    name: f,
    K,
    decode(c, rng) {
      if (c === missingCode) return "";
      if (!(c >= 0 && c < nb)) return badCode(f, c, K);
      const lo = e[c];
      const hi = e[c + 1];
      if (lo === hi) return String(lo);
      const loPoint = c > 0 && e[c - 1] === lo;
      const last = c === nb - 1;
      if (integer) {
        let a = loPoint ? Math.floor(lo) + 1 : Math.ceil(lo);
        let b = last ? Math.floor(hi) : Math.ceil(hi) - 1;
        a = Math.max(a, Math.ceil(min));
        b = Math.min(b, Math.floor(max));
        if (a > b) return String(Math.min(Math.max(Math.round((lo + hi) / 2), Math.ceil(min)), Math.floor(max)));
        return String(a + rng.int(b - a + 1));
      }
      let x = lo + rng.next() * (hi - lo);
      if (loPoint && x === lo) x = (lo + hi) / 2;
      const inside = (y: number) => (loPoint ? y > lo : y >= lo) && (last ? y <= hi : y < hi);
      for (let p = 6; p <= 17; p++) {
        const s = x.toPrecision(p);
        const y = Number(s);
        if (inside(y)) return String(y);
      }
      return String(inside(x) ? x : (lo + hi) / 2);
    },
  };
}

/**
 * Decodes generated codes with a model's metadata.
 * ```ts
 * const dec = new Decoder(metadata);
 * const table = dec.decode(generation.columns, 42);
 * ```
 */
export class Decoder {
  /** Feature decoders, in `metadata.features` order. */
  readonly features: FeatureDecoder[];
  constructor(readonly metadata: Metadata) {
    this.features = metadata.features.map((f) => featureDecoder(metadata, f));
  }

  /** Column names, in table order. */
  get columns(): string[] {
    return [...this.metadata.features];
  }

  /**
   * @param columns `columns[f][r]` = code of feature f in row r (every feature present, same length).
   * @param seed    seeds the draws inside interval bins (any finite number).
   * @returns the decoded {@link Table}: `rows[r][c]` in `metadata.features` order.
   * @throws APIError (`invalid_response`) when a feature is absent or a code is out of range.
   */
  decode(columns: Record<string, ArrayLike<number>>, seed: number): Table {
    const cols = this.features.map((d) => {
      const c = columns[d.name];
      if (!c) throw new APIError({ code: "invalid_response", message: `The generated data has no column for feature "${d.name}".` });
      return c;
    });
    const n = cols[0]?.length ?? 0;
    const rows: string[][] = new Array(n);
    for (let r = 0; r < n; r++) rows[r] = new Array(this.features.length);
    this.features.forEach((d, f) => {
      const codes = cols[f];
      if (codes.length !== n) throw new APIError({ code: "invalid_response", message: `Generated column "${d.name}" has ${codes.length} rows, expected ${n}.` });
      const rng = new Rng(deriveSeed(seed, f));
      for (let r = 0; r < n; r++) rows[r][f] = d.decode(codes[r], rng);
    });
    return { columns: this.columns, rows };
  }

  /** Decodes a generate response's `data`. */
  decodeGeneration(gen: Generation, seed: number): Table {
    return this.decode(gen.columns, seed);
  }
}

/** One-shot form of {@link Decoder.decode}. */
export function decodeCodes(metadata: Metadata, columns: Record<string, ArrayLike<number>>, seed: number): Table {
  return new Decoder(metadata).decode(columns, seed);
}
