/**
 * `npm run bench -- decode --table FILE[,FILE] [--rows N] [--batches B,B] [--against DIR]`:
 * client-side decoding throughput (codes -> rows, the row rules included) as the SDK decodes a
 * sample: one {@link Decoder} per model, `decodeBatch` per batch with the sample's `rowOffset` and
 * `idKey` and the batch's decode seed (`Synthesizer.sampleDecoded`). No server and no training:
 * the metadata is `analyzeTable`'s, the codes are drawn from its 1-way marginals (seeded), so the
 * time is the decoder's alone, and per-batch set-up shows as a rate that falls with the batch size.
 *
 * Prints rows per CPU second of this process (user and system, GC threads included; a shared
 * machine's load moves wall time far more than CPU time) per table and batch size, the median of
 * `--repeats`, with the wall rate beside it, and each batch size's rate over the largest batch's. With `--against DIR` (another build's output root, e.g. a copy of `dist`
 * made before a change), both builds decode the same codes in alternation and the line gives the
 * ratio of this build's rate to that build's, and whether their decoded rows are identical.
 */
import { createHash } from "node:crypto";
import { resolve } from "node:path";
import { performance } from "node:perf_hooks";
import * as sdk from "../src/sdk";
import type { Metadata, Table } from "../src/sdk";

/** Options of the decode benchmark. */
export interface DecodeBenchOptions {
  table: string;
  rows: number;
  batches: string;
  repeats: number;
  seed: number;
  against?: string;
  json: boolean;
}

/** The SDK entry points the bench calls, from this build or another. */
type Sdk = Pick<typeof sdk, "Decoder" | "deriveSeed">;

/** A table read whole with the SDK's reader. */
async function readWhole(path: string): Promise<Table> {
  const t: Table = { columns: [], rows: [] };
  await sdk.readTable(
    path,
    (h) => (t.columns = h),
    (r) => void t.rows.push(r),
  );
  return t;
}

/** n rows of codes, each column drawn from its 1-way marginal (seeded). */
function marginalCodes(meta: Metadata, n: number, seed: number): Record<string, Int32Array> {
  const rng = new sdk.Rng(seed);
  const out: Record<string, Int32Array> = {};
  for (const f of meta.features) {
    const p = meta.empirical_probs[f];
    const cum = new Float64Array(p.length);
    let acc = 0;
    p.forEach((x, c) => (cum[c] = acc += x));
    out[f] = Int32Array.from({ length: n }, () => rng.pickCumulative(cum));
  }
  return out;
}

/**
 * Decodes `codes` in batches of `batch` rows as a sample does; returns CPU and wall seconds and a
 * digest of the rows written.
 */
function decodeSample(lib: Sdk, meta: Metadata, codes: Record<string, Int32Array>, n: number, batch: number, seed: number): { cpu: number; s: number; digest: string } {
  const hash = createHash("sha256");
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const decoder = new lib.Decoder(meta);
  for (let b = 0, at = 0; at < n; b++, at += batch) {
    const part: Record<string, Int32Array> = {};
    for (const f of meta.features) part[f] = codes[f].subarray(at, Math.min(n, at + batch));
    const t = decoder.decode(part, lib.deriveSeed(seed, b, 1), { rowOffset: at, idKey: lib.deriveSeed(seed, 0, 2) });
    for (const r of t.rows) hash.update(r.join("\u0001") + "\u0002");
  }
  const c = process.cpuUsage(c0);
  return { cpu: (c.user + c.system) / 1e6, s: (performance.now() - t0) / 1000, digest: hash.digest("hex").slice(0, 16) };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Runs the benchmark and prints its lines. */
export async function decodeBench(opts: DecodeBenchOptions): Promise<void> {
  const other: Sdk | undefined = opts.against ? (require(resolve(opts.against, "src", "sdk")) as Sdk) : undefined;
  const batches = opts.batches.split(",").map(Number);
  if (batches.some((b) => !(Number.isInteger(b) && b >= 1))) throw new RangeError(`--batches: positive integers, got ${opts.batches}`);
  const largest = Math.max(...batches);
  for (const file of opts.table.split(",")) {
    const { metadata } = await sdk.analyzeTable(await readWhole(file), {});
    const codes = marginalCodes(metadata, opts.rows, opts.seed);
    const rate: Record<number, number> = {};
    for (const batch of batches) {
      const own: number[] = [];
      const base: number[] = [];
      const wall: number[] = [];
      let same = true;
      for (let k = 0; k < opts.repeats; k++) {
        const a = decodeSample(sdk, metadata, codes, opts.rows, batch, opts.seed);
        own.push(a.cpu);
        wall.push(a.s);
        if (other) {
          const b = decodeSample(other, metadata, codes, opts.rows, batch, opts.seed);
          base.push(b.cpu);
          same &&= a.digest === b.digest;
        }
      }
      rate[batch] = opts.rows / median(own);
      const line = {
        table: file.split("/").pop(),
        rows: opts.rows,
        batch,
        rows_per_cpu_s: Math.round(rate[batch]),
        rows_per_wall_s: Math.round(opts.rows / median(wall)),
        ...(other ? { against_rows_per_cpu_s: Math.round(opts.rows / median(base)), ratio: +(median(base) / median(own)).toFixed(2), identical: same } : {}),
      };
      if (opts.json) console.log(JSON.stringify(line));
      else console.log(Object.entries(line).map(([k, v]) => `${k}=${v}`).join(" "));
    }
    if (!opts.json) console.log(batches.map((b) => `batch ${b}: ${(rate[b] / rate[largest]).toFixed(2)} of batch ${largest}'s rate`).join("; "));
  }
}
